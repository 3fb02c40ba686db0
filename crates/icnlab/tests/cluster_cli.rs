//! `model = "cluster"` through the CLI, and `via run`: the same workload simulated and run
//! for real as one process per rank.

use assert_cmd::Command;
use std::path::PathBuf;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/examples")
        .join(name)
}

/// The example trace replays on both providers: every rank finishes, the measured and the
/// simulated completion are printed side by side.
#[test]
fn via_run_replays_the_example_trace_for_real_on_both_providers() {
    for provider in ["shm", "tcp"] {
        let out = icnlab()
            .args(["via", "run"])
            .arg(example("cluster-trace.toml"))
            .args(["--provider", provider])
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{provider}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("4 ranks, 9 messages, 32832 B"), "{stdout}");
        assert!(stdout.contains("completion_us (measured)"), "{stdout}");
        assert!(stdout.contains("completion_us (simulated)"), "{stdout}");
        let finished = stdout
            .lines()
            .filter(|l| {
                l.split_whitespace().count() == 2 && l.trim_start().starts_with(char::is_numeric)
            })
            .count();
        assert_eq!(finished, 4, "{stdout}");
    }
}

/// A trace file directly (no experiment file), and a workload real runs cannot do.
#[test]
fn via_run_takes_a_trace_and_refuses_ssend_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("pp.trace");
    std::fs::write(
        &ok,
        "0 send 1 1000 0\n1 recv 0 1000 0\n1 send 0 1000 0\n0 recv 1 1000 0\n",
    )
    .unwrap();
    icnlab()
        .args(["via", "run"])
        .arg(&ok)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    let bad = dir.path().join("ss.trace");
    std::fs::write(&bad, "0 ssend 1 8 0\n1 recv 0 8 0\n").unwrap();
    let out = icnlab().args(["via", "run"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "the workload is at fault");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ssend is not supported"));
    let missing = icnlab()
        .args(["via", "run"])
        .arg(dir.path().join("nope.trace"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}

/// `run` of the example cluster experiment, and a bad trace line named with file and line.
#[test]
fn cluster_experiments_run_and_bad_traces_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    icnlab()
        .arg("run")
        .arg(example("cluster-trace.toml"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .assert()
        .success();
    let trace = dir.path().join("bad.trace");
    std::fs::write(&trace, "0 send 1 8 0\n1 recv 0 8\n").unwrap();
    let cfg = dir.path().join("bad.toml");
    std::fs::write(
        &cfg,
        "model = \"cluster\"\n[workload]\nkind = \"trace\"\nfile = \"bad.trace\"\n",
    )
    .unwrap();
    let out = icnlab()
        .arg("run")
        .arg(&cfg)
        .arg("--out")
        .arg(dir.path().join("o2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.trace:2: field 5 (tag) is missing"),
        "{err}"
    );
}
