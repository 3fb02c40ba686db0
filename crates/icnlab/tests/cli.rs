//! End-to-end tests of the CLI plumbing (run, sweep, shards, merge, reproduce, errors) on the
//! M/M/1 self-check model, whose exact answer is known.

use assert_cmd::Command;
use std::fs;
use std::path::Path;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

const MM1: &str = r#"
model = "mm1"
title = "mm1 test"
seed = 5
replications = 3
customers = 20000
[sweep]
arrival_rate = [0.2, 0.4, 0.6, 0.8]
[[plot]]
x = "arrival_rate"
y = ["sojourn_mean", "sojourn_exact"]
"#;

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

fn points(report: &Path) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(report).unwrap()).unwrap();
    v["points"].clone()
}

#[test]
fn sweep_writes_csv_json_and_plot_with_honest_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "mm1.toml", MM1);
    let out = dir.path().join("out");
    icnlab()
        .args([
            "sweep",
            cfg.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ])
        .assert()
        .success();
    let csv = fs::read_to_string(out.join("data.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "point,arrival_rate,sojourn_mean,sojourn_mean_ci95,sojourn_exact,sojourn_exact_ci95,utilisation,utilisation_ci95,status,runs_ok,runs_saturated,runs_deadlocked,runs_drain_limit,runs_failed"
    );
    assert_eq!(lines.count(), 4);
    assert!(
        fs::read_to_string(out.join("plot.svg"))
            .unwrap()
            .contains("<svg")
    );
    // The simulated mean is within a few CI half-widths of the exact value at every point.
    for p in points(&out.join("report.json")).as_array().unwrap() {
        let m = &p["metrics"]["scalars"];
        let (sim, ci, exact) = (
            m[0]["value"].as_f64().unwrap(),
            m[0]["ci95"].as_f64().unwrap(),
            m[1]["value"].as_f64().unwrap(),
        );
        assert!(
            (sim - exact).abs() < 3.0 * ci + 0.02 * exact,
            "{sim} ± {ci} vs {exact}"
        );
    }
}

#[test]
fn results_are_identical_at_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "mm1.toml", MM1);
    let run = |threads: &str| {
        let out = dir.path().join(format!("t{threads}"));
        icnlab()
            .args([
                "sweep",
                cfg.to_str().unwrap(),
                "--quiet",
                "--threads",
                threads,
                "--out",
                out.to_str().unwrap(),
            ])
            .assert()
            .success();
        points(&out.join("report.json"))
    };
    assert_eq!(run("1"), run("2"));
}

#[test]
fn shards_merge_into_the_full_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "mm1.toml", MM1);
    let path = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    icnlab()
        .args([
            "sweep",
            cfg.to_str().unwrap(),
            "--quiet",
            "--out",
            &path("full"),
        ])
        .assert()
        .success();
    for i in 0..3 {
        icnlab()
            .args([
                "sweep",
                cfg.to_str().unwrap(),
                "--quiet",
                "--shard",
                &format!("{i}/3"),
                "--out",
                &path(&format!("s{i}")),
            ])
            .assert()
            .success();
    }
    icnlab()
        .args([
            "merge",
            &path("s0"),
            &path("s1"),
            &path("s2"),
            "--out",
            &path("merged"),
        ])
        .assert()
        .success();
    assert_eq!(
        fs::read_to_string(dir.path().join("full/data.csv")).unwrap(),
        fs::read_to_string(dir.path().join("merged/data.csv")).unwrap()
    );
    // Merging the same shard twice is refused.
    icnlab()
        .args(["merge", &path("s0"), &path("s0"), "--out", &path("bad")])
        .assert()
        .failure();
}

/// Each bad input gives exit code 2 and a single line naming the file and the key.
#[test]
fn bad_input_is_one_line_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "malformed.toml",
            "model = \"mm1\"\narrival_rate = = 1\n",
            "malformed TOML",
        ),
        (
            "unknown_key.toml",
            "model = \"mm1\"\narival_rate = 0.5\n",
            "key `arival_rate`",
        ),
        (
            "range.toml",
            "model = \"mm1\"\narrival_rate = 1.5\n",
            "key `arrival_rate`: must be in",
        ),
        ("no_model.toml", "arrival_rate = 0.5\n", "key `model`"),
        ("unknown_model.toml", "model = \"warp\"\n", "unknown model"),
        (
            "sweep_range.toml",
            "model = \"mm1\"\n[sweep]\narrival_rate = [0.5, 2.0]\n",
            "sweep point arrival_rate=2",
        ),
    ];
    for (name, text, expect) in cases {
        let cfg = write(dir.path(), name, text);
        let out = icnlab()
            .args(["sweep", cfg.to_str().unwrap(), "--quiet", "--out"])
            .arg(dir.path().join("o"))
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(name) && err.contains(expect), "{name}: {err}");
    }
    let out = icnlab()
        .args(["run", "/nonexistent/x.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn reproduce_writes_index_and_rejects_unknown_names() {
    let dir = tempfile::tempdir().unwrap();
    let exps = dir.path().join("experiments");
    fs::create_dir(&exps).unwrap();
    write(&exps, "mm1-small.toml", MM1);
    let results = dir.path().join("results");
    icnlab()
        .args([
            "reproduce",
            "mm1",
            "--experiments",
            exps.to_str().unwrap(),
            "--out",
            results.to_str().unwrap(),
        ])
        .assert()
        .success();
    let index = fs::read_to_string(results.join("index.html")).unwrap();
    assert!(index.contains("mm1-small/plot.svg"));
    assert!(results.join("mm1-small/data.csv").exists());
    let out = icnlab()
        .args([
            "reproduce",
            "nothing-like-this",
            "--experiments",
            exps.to_str().unwrap(),
            "--out",
            results.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 2: same config and seed → bit-identical report metrics at 1 and 2 threads, on the
/// SCI ring (a sweep of both transmitters over loads, several replications).
#[test]
fn sci_metrics_are_bit_identical_at_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "sci.toml",
        r#"
model = "sci"
seed = 11
replications = 3
nodes = 6
transmitter = "compare"
warmup_cycles = 2000
measure_cycles = 20000
[traffic]
pattern = "hotspot"
hotspot_fraction = 0.4
[sweep]
load = [0.2, 0.7]
"#,
    );
    let run = |threads: &str| {
        let out = dir.path().join(format!("t{threads}"));
        icnlab()
            .args([
                "sweep",
                cfg.to_str().unwrap(),
                "--quiet",
                "--threads",
                threads,
                "--out",
                out.to_str().unwrap(),
            ])
            .assert()
            .success();
        (
            points(&out.join("report.json")),
            fs::read(out.join("data.csv")).unwrap(),
        )
    };
    let (one, two) = (run("1"), run("2"));
    assert!(
        one.0.as_array().unwrap().len() == 2
            && one.0[0]["metrics"]["scalars"].as_array().unwrap().len() > 20
    );
    assert_eq!(one, two);
}
