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

/// Runs `check FILE` with a deadline (a regression must fail, not hang the suite); asserts
/// exit 2 with one stderr line containing every one of `want`.
fn check_refused(file: &str, want: &[&str]) {
    let out = icnlab()
        .args(["check", file])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{file}: {err}");
    for w in want {
        assert!(err.contains(w), "{file}: want `{w}` in {err}");
    }
    assert_eq!(err.trim_end().lines().count(), 1, "{file}: {err}");
}

/// Issue 14, item 4 ("file reads bounded"): traces and graph files were read with no bound —
/// `/dev/zero` as a trace filled memory, a FIFO as the experiment file or a trace waited
/// forever. Now every side file is read through a 256 MiB bound and a FIFO without a writer
/// reads as empty.
#[test]
fn side_files_are_bounded_and_fifos_do_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    for (name, body) in [
        (
            "xt.toml",
            "model = \"xswitch\"\ntraffic.pattern = \"trace\"\ntraffic.trace_file = \"/dev/zero\"\n",
        ),
        (
            "xg.toml",
            "model = \"xswitch\"\ntopology = \"file:/dev/zero\"\n",
        ),
        (
            "vg.toml",
            "model = \"vc-router\"\ntopology = \"graph:file:/dev/zero\"\n",
        ),
        ("bg.toml", "model = \"bcast\"\ngraph = \"file:/dev/zero\"\n"),
        (
            "st.toml",
            "model = \"sci\"\ntraffic.pattern = \"trace\"\ntraffic.trace_file = \"/dev/zero\"\n",
        ),
        ("np.toml", "model = \"nic\"\nprofile = \"/dev/zero\"\n"),
    ] {
        fs::write(p(name), body).unwrap();
        check_refused(&p(name), &[name, "/dev/zero", "larger than 256 MiB"]);
    }
    let fifo = p("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // The experiment file itself: read as empty, so the model is missing.
    check_refused(&fifo, &["fifo: key `model`: missing"]);
    // A trace that is a directory or a FIFO.
    fs::write(
        p("dir.toml"),
        format!(
            "model = \"vc-router\"\ntraffic.pattern = \"trace\"\ntraffic.trace_file = \"{}\"\n",
            dir.path().display()
        ),
    )
    .unwrap();
    check_refused(
        &p("dir.toml"),
        &["dir.toml: key `traffic.trace_file`", "is a directory"],
    );
    fs::write(
        p("ft.toml"),
        "model = \"xswitch\"\ntraffic.pattern = \"trace\"\ntraffic.trace_file = \"fifo\"\n",
    )
    .unwrap();
    icnlab()
        .args(["check", &p("ft.toml")])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
}

/// Issue 14: X-Switch/VC trace and graph errors did not name the file at fault; and item 5:
/// paths are relative to the experiment file (SCI traces, bcast and cluster graph files and
/// NIC profiles were read relative to the working directory). The check runs from another
/// folder, with relative names.
#[test]
fn side_file_errors_name_the_file_resolved_against_the_experiment() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    fs::write(p("g.txt"), "switches 2\nlink s0.F s1.B\n").unwrap();
    fs::write(p("edges.txt"), "a b\nb c d\n").unwrap();
    fs::write(p("x.trace"), "0 0 2 4096\nnot a row\n").unwrap();
    fs::write(p("s.trace"), "cycle,src,dst\n").unwrap();
    fs::write(p("profile.toml"), "[resources\n").unwrap();
    let cases = [
        (
            "model = \"xswitch\"\ntopology = \"file:g.txt\"\n",
            "key `topology`: graph file `{}/g.txt`: graph line 2: port `F`",
        ),
        (
            "model = \"xswitch\"\ntraffic.pattern = \"trace\"\ntraffic.trace_file = \"x.trace\"\n",
            "key `traffic.trace_file`: `{}/x.trace` line 2",
        ),
        (
            "model = \"vc-router\"\ntraffic.pattern = \"trace\"\ntraffic.trace_file = \"x.trace\"\n",
            "key `traffic.trace_file`: `{}/x.trace` line 2",
        ),
        (
            "model = \"vc-router\"\ntopology = \"graph:file:edges.txt\"\n",
            "key `topology`: `{}/edges.txt`: edge list line 2",
        ),
        (
            "model = \"cluster\"\nfabric.topology = \"file:edges.txt\"\n",
            "key `fabric.topology`: `{}/edges.txt`: edge list line 2",
        ),
        (
            "model = \"cluster\"\nfabric.kind = \"xswitch\"\nfabric.topology = \"file:g.txt\"\n",
            "key `fabric.topology`: graph file `{}/g.txt`",
        ),
        (
            "model = \"bcast\"\ngraph = \"file:edges.txt\"\n",
            "key `graph`: `{}/edges.txt`: edge list line 2",
        ),
        (
            "model = \"sci\"\ntraffic.pattern = \"trace\"\ntraffic.trace_file = \"s.trace\"\n",
            "key `traffic.trace_file`: {}/s.trace:1: header",
        ),
        (
            "model = \"nic\"\nprofile = \"profile.toml\"\n",
            "key `profile`: in `{}/profile.toml`",
        ),
    ];
    let folder = dir.path().display().to_string();
    for (i, (body, want)) in cases.iter().enumerate() {
        let name = format!("c{i}.toml");
        fs::write(p(&name), body).unwrap();
        let out = icnlab()
            .current_dir("/")
            .args(["check", &p(&name)])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{body}: {err}");
        assert!(err.contains(&p(&name)), "{body}: {err}");
        let want = want.replace("{}", &folder);
        assert!(err.contains(&want), "{body}: want `{want}` in {err}");
    }
}

/// Issue 14, item 4, for the cluster model: a pipelined chain over 10 000 ranks in 65 536
/// segments aborted out of memory while its program was built; all-to-all over 10 000 ranks
/// took 14 s to be refused; CLBM on CCC(12,12) and the deadlock check of a 32-ary 4-tree of VC
/// routers ran for minutes; an X-Switch fabric of 64×64 switches with 1 M-symbol FIFOs
/// aborted. Each is refused (or, for the fat tree, checked) at once now, naming the key.
#[test]
fn cluster_workloads_and_fabrics_beyond_the_machine_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let cases = [
        (
            "chain",
            "workload.kind = \"bcast\"\nworkload.algorithm = \"chain\"\nworkload.segments = 65536\nworkload.bytes = 1073741824\nfabric.topology = \"mesh:100x100\"\n",
            "key `workload`: must be in at most 2097152 operations, got 1310588928",
        ),
        (
            "a2a",
            "workload.kind = \"alltoall\"\nfabric.topology = \"mesh:100x100\"\n",
            "key `workload`: must be in at most 2097152 operations, got 199980000",
        ),
        (
            "clbm",
            "workload.kind = \"bcast\"\nworkload.algorithm = \"clbm\"\nfabric.topology = \"ccc:12,12\"\n",
            "key `workload.algorithm`: CLBM builds a tree for every one of the 49152 nodes",
        ),
        (
            "xs",
            "fabric.kind = \"xswitch\"\nfabric.topology = \"mesh:64x64\"\nfabric.fifo_size = 1048576\nfabric.stop_threshold = 1000000\nfabric.go_threshold = 10\nfabric.threads = 1024\n",
            "key `fabric.topology`: the network's state (4096 switches, 1024 threads) needs about",
        ),
        (
            "vc",
            "fabric.kind = \"vc-router\"\nfabric.topology = \"fattree:64,4\"\nfabric.vcs = 16\nfabric.buf = 255\n",
            "key `fabric.topology`: the router state of 1048576 routers of radix 128",
        ),
    ];
    for (name, body, want) in cases {
        let file = p(&format!("{name}.toml"));
        fs::write(&file, format!("model = \"cluster\"\n{body}")).unwrap();
        let started = std::time::Instant::now();
        check_refused(&file, &[&file, want]);
        assert!(
            started.elapsed().as_secs() < 20,
            "{name}: {:?}",
            started.elapsed()
        );
    }
    // A 32-ary 4-tree (a million endpoints) fits; its deadlock check is the vc-router
    // model's bounded one (a small twin), not a full check of the million-endpoint network.
    let ft = p("ft.toml");
    fs::write(
        &ft,
        "model = \"cluster\"\nfabric.kind = \"vc-router\"\nfabric.topology = \"fattree:32,4\"\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    icnlab()
        .args(["check", &ft])
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
}

/// Issue 14, item 4: `--threads` is bounded (above), and so are the models' own thread keys:
/// 100 000 threads for one replication are refused naming the key, before any is started.
#[test]
fn model_thread_keys_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    for (name, body, key) in [
        (
            "vc.toml",
            "model = \"vc-router\"\nthreads = 100000\n",
            "key `threads`",
        ),
        (
            "xs.toml",
            "model = \"xswitch\"\nthreads = 100000\n",
            "key `threads`",
        ),
        (
            "cl.toml",
            "model = \"cluster\"\nfabric.kind = \"vc-router\"\nfabric.topology = \"mesh:4x4\"\nfabric.threads = 100000\n",
            "key `fabric.threads`",
        ),
    ] {
        fs::write(p(name), body).unwrap();
        check_refused(&p(name), &[name, key, "0 (every core) ..= 1024"]);
    }
}

/// Issue 22, item 4: a model's memory estimate covers one replication, and `--threads N`
/// runs N at once: the estimate is held against each one's share. A 300×300 VC-router mesh
/// (≈ 115 MB of router state) fits one replication but not 1 024 at once.
#[test]
fn estimates_cover_every_replication_run_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("vc.toml");
    fs::write(
        &file,
        "model = \"vc-router\"\ntopology = \"mesh:300x300\"\nreplications = 1024\nwarmup = 1\nmeasure = 1\ndrain = 1\n",
    )
    .unwrap();
    let file = file.display().to_string();
    let out = dir.path().join("out").display().to_string();
    refused(
        &["run", &file, "--threads", "1024", "--out", &out],
        "MB are available to each of the 1024 replications run at once",
    );
    let ok = icnlab()
        .args(["check", &file])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

/// Runs icnlab under `ulimit -v KIB` (an address-space limit: an allocation beyond it
/// aborts the process), returning its exit code and stderr.
fn under_address_limit(kib: u64, args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(assert_cmd::cargo::cargo_bin("icnlab"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 22: networks and graphs are estimated from their text before they are built.
/// Under a 1.5 GiB address-space limit, building `hypercube:22` (5.6 GB for the graph, more
/// for a VC network) would abort on an allocation; each is refused with exit 2 naming the
/// key and the memory instead. The bcast source name is checked before anything else.
#[test]
fn networks_are_estimated_before_they_are_built() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    let limit = 1536 * 1024;
    fs::write(
        p("vc.toml"),
        "model = \"vc-router\"\ntopology = \"hypercube:22\"\n",
    )
    .unwrap();
    fs::write(
        p("ideal.toml"),
        "model = \"cluster\"\n[fabric]\nkind = \"ideal\"\ntopology = \"hypercube:22\"\n",
    )
    .unwrap();
    fs::write(
        p("cvc.toml"),
        "model = \"cluster\"\n[fabric]\nkind = \"vc-router\"\ntopology = \"hypercube:22\"\n",
    )
    .unwrap();
    let q22 = "0".repeat(22);
    let (vc, ideal, cvc) = (p("vc.toml"), p("ideal.toml"), p("cvc.toml"));
    let cases: [(Vec<&str>, &str); 5] = [
        (
            vec!["check", &vc],
            "key `topology`: the router state of 4194304 routers of radix 23",
        ),
        (
            vec!["check", &ideal],
            "key `fabric.topology`: the ideal fabric's graph of 4194304 nodes needs about",
        ),
        (
            vec!["check", &cvc],
            "key `fabric.topology`: the router state of 4194304 routers of radix 23",
        ),
        (
            vec!["bcast", "--graph", "hypercube:22", "--source", "nosuch"],
            "--source: ",
        ),
        (
            vec!["bcast", "--graph", "hypercube:22", "--source", &q22],
            "--graph: building the graph of 4194304 nodes needs about 5376 MB",
        ),
    ];
    for (args, want) in cases {
        let (code, err) = under_address_limit(limit, &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: want `{want}` in {err}");
        assert!(
            err.contains("MB are available") || want == "--source: ",
            "{err}"
        );
    }
    let (_, err) = under_address_limit(
        limit,
        &["bcast", "--graph", "hypercube:22", "--source", "nosuch"],
    );
    assert!(
        err.contains("nosuch") && err.contains(&q22),
        "names an example: {err}"
    );
}

/// Issue 22: a watchdog at its allowed maximum (2^40 cycles) reported a deadlock after days.
/// A 1-VC torus deadlocks at once under load; with `watchdog = 2^40` the wall-time bound
/// (`watchdog_wall_s = 1`) ends it with exit 1 naming the bound, on the VC router and on
/// the X-Switch (whose plain FIFOs deadlock on an 8×8 torus at 0.4 B/node/cycle).
#[test]
fn a_watchdog_is_bounded_by_wall_time_too() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).display().to_string();
    fs::write(
        p("vc.toml"),
        "model = \"vc-router\"\ntopology = \"torus:4x4\"\nrouting = \"dor\"\nvcs = 1\n\
         allow_deadlock = true\nload = 0.9\nsize = 20\nwatchdog = 1099511627776\n\
         watchdog_wall_s = 1\nwarmup = 100\nmeasure = 1000000000\n",
    )
    .unwrap();
    fs::write(
        p("x.toml"),
        "model = \"xswitch\"\ntopology = \"torus:8x8\"\nload = 0.4\nsize = 128\n\
         frame_size = 128\nwatchdog = 1099511627776\nwatchdog_wall_s = 1\nwarmup = 100\n\
         measure = 1000000000\n",
    )
    .unwrap();
    for file in [p("vc.toml"), p("x.toml")] {
        let out = icnlab()
            .args(["run", &file, "--quiet", "--out", &p("out")])
            .timeout(std::time::Duration::from_secs(300))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {err}");
        assert!(err.contains("deadlock"), "{file}: {err}");
        assert!(
            err.contains("s of wall time") && err.contains("watchdog_wall_s = 1"),
            "{file}: {err}"
        );
    }
    fs::write(
        p("bad.toml"),
        "model = \"vc-router\"\nwatchdog_wall_s = 0\n",
    )
    .unwrap();
    refused(
        &["check", &p("bad.toml")],
        "key `watchdog_wall_s`: must be in 1 ..= 86400 s of wall time, got 0",
    );
}
