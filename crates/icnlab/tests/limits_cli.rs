//! Issue 14, item 5: inputs that exhausted memory or never finished are refused up front with
//! exit 2 and a line naming the file (or flag); `--set` reaches `title` and `sweep.*` and is an
//! error on a swept key; `run` rejects unknown [sweep] keys.

use assert_cmd::Command;
use std::fs;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

/// Runs `args`; asserts exit 2 with one stderr line containing `want`.
fn refused(args: &[&str], want: &str) {
    let out = icnlab().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: want `{want}` in {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
}

#[test]
fn oversized_inputs_are_refused_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let out = p("o");
    // Reading /dev/zero never ended; now 1 MiB is read at most.
    refused(
        &["run", "/dev/zero", "--quiet", "--out", &out],
        "/dev/zero: cannot read: larger than",
    );
    // A 10^7-point sweep aborted at 7.4 GB.
    let axis = format!("[{}]", vec!["0.5"; 100].join(","));
    fs::write(
        p("huge.toml"),
        format!("model = \"mm1\"\n[sweep]\narrival_rate = {axis}\nwarmup = {axis}\n\"customers\" = {axis}\nservice_rate = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]\n"),
    )
    .unwrap();
    refused(
        &["sweep", &p("huge.toml"), "--quiet", "--out", &out],
        "huge.toml: key `sweep`: has more than 100000 points",
    );
    fs::write(
        p("warm.toml"),
        "model = \"mm1\"\nwarmup = 9223372036854775807\n",
    )
    .unwrap();
    refused(
        &["run", &p("warm.toml"), "--quiet", "--out", &out],
        "warm.toml: key `warmup`",
    );
    fs::write(p("ok.toml"), "model = \"mm1\"\ncustomers = 100\n").unwrap();
    // Flag errors come from clap (exit 2, with a usage hint below the error line).
    let run = icnlab()
        .args(["run", &p("ok.toml"), "--threads", "100000", "--out", &out])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("at most 1024 threads"));
}

#[test]
fn set_and_sweep_keys_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let out = p("o");
    fs::write(
        p("s.toml"),
        "model = \"mm1\"\ncustomers = 100\n[sweep]\narrival_rate = [0.1, 0.2]\n",
    )
    .unwrap();
    // Silently ignored on main: each point overwrote the value.
    refused(
        &[
            "sweep",
            &p("s.toml"),
            "--quiet",
            "--set",
            "arrival_rate=0.3",
            "--out",
            &out,
        ],
        "s.toml: key `arrival_rate`: is swept",
    );
    // `run` ignored the [sweep] table entirely, unknown keys included.
    fs::write(
        p("typo.toml"),
        "model = \"mm1\"\ncustomers = 100\n[sweep]\narival_rate = [0.1, 0.2]\n",
    )
    .unwrap();
    refused(
        &["run", &p("typo.toml"), "--quiet", "--out", &out],
        "typo.toml: key `arival_rate`",
    );
    // --set reaches sweep.* and title.
    icnlab()
        .args([
            "sweep",
            &p("s.toml"),
            "--quiet",
            "--set",
            "sweep.arrival_rate=[0.1,0.2,0.3]",
            "--set",
            "title=Three loads",
            "--out",
            &out,
        ])
        .assert()
        .success();
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("o/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["title"], "Three loads");
    assert_eq!(report["points"].as_array().unwrap().len(), 3);
}

/// A `[[plot]]` column typo used to surface only after the whole sweep had run; now the run
/// stops after its first replication, with exit 2 naming file, plot and column.
#[test]
fn bad_plot_columns_are_refused_before_the_sweep_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("p.toml");
    fs::write(
        &cfg,
        "model = \"mm1\"\ncustomers = 100\n[sweep]\narrival_rate = [0.1, 0.2]\n\
         [[plot]]\nx = \"arrival_rate\"\ny = [\"sojourn_maen\"]\n",
    )
    .unwrap();
    let out = dir.path().join("o");
    refused(
        &[
            "sweep",
            cfg.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
        "p.toml: key `plot[0].y`: no column `sojourn_maen` in data.csv",
    );
    assert!(!out.exists(), "nothing is written");
    fs::write(
        &cfg,
        "model = \"mm1\"\ncustomers = 100\n[sweep]\narrival_rate = [0.1, 0.2]\n\
         [[plot]]\nx = \"arrival_rate\"\ny = [\"sojourn_mean\"]\ntable = \"per_source\"\n",
    )
    .unwrap();
    refused(
        &[
            "sweep",
            cfg.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
        "key `plot[0].table`: the model writes no table `per_source`",
    );
}

/// Issue 14, item 4: a network whose state alone exceeds the machine's memory is refused before
/// it is built, naming `topology` (a 2048×2048 mesh of 16-VC routers: ≈ 340 GB; an X-Switch
/// 64×64 mesh with 64 K-symbol FIFOs and 1 024-cycle links on 1 024 threads: ≈ 12 TB).
#[test]
fn networks_the_machine_cannot_hold_are_refused_naming_the_topology() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    fs::write(
        p("vc.toml"),
        "model = \"vc-router\"\ntopology = \"mesh:2048x2048\"\nrouting = \"dor\"\nvcs = 16\nbuf = 255\n",
    )
    .unwrap();
    refused(
        &["check", &p("vc.toml")],
        "vc.toml: key `topology`: the router state of 4194304 routers",
    );
    fs::write(
        p("xs.toml"),
        "model = \"xswitch\"\ntopology = \"mesh:64x64\"\nthreads = 1024\nfifo_size = 65536\nstop_threshold = 60000\ngo_threshold = 100\nlink_delay = 1024\n",
    )
    .unwrap();
    refused(
        &["check", &p("xs.toml")],
        "xs.toml: key `topology`: the network's state (4096 switches, 1024 threads) needs about",
    );
}
