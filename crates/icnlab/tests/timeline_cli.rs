//! `icnlab run --timeline`: the Chrome JSON of the DUMPI example, the event cap and its note,
//! and the requests refused before the run (exit 2).

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").unwrap()
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/examples")
        .join(name)
}

fn run(dir: &Path, extra: &[&str]) -> std::process::Output {
    icnlab()
        .arg("run")
        .arg(example("cluster-dumpi-exchange.toml"))
        .arg("--out")
        .arg(dir.join("out"))
        .args(extra)
        .output()
        .unwrap()
}

/// Every rank's calls are in the JSON, and the 4 ranks' spans add up to what the replay
/// counted: 200 actions are 200 calls (each MPI call and compute of the trace is one span).
#[test]
fn the_json_timeline_has_every_call_of_every_rank() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("t.json");
    let out = run(dir.path(), &["--timeline", json.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let calls: Vec<&serde_json::Value> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "call")
        .collect();
    assert_eq!(calls.len(), 200);
    for r in 0..4 {
        assert!(calls.iter().any(|e| e["tid"] == r), "rank {r}");
    }
    assert_eq!(v["otherData"]["notes"], serde_json::json!([]));
}

/// With a cap of 10 spans, 10 are written and the note says how many were left out.
#[test]
fn the_event_cap_is_kept_and_noted() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("t.json");
    let out = run(
        dir.path(),
        &[
            "--timeline",
            json.to_str().unwrap(),
            "--timeline-events",
            "10",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let spans = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .count();
    assert_eq!(spans, 10);
    let note = v["otherData"]["notes"][0].as_str().unwrap();
    assert!(note.contains("cap of 10 events was reached"), "{note}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("timeline cut"));
}

/// Refused before anything runs, exit 2: an existing OTF2 folder, a cap of 0, a workload
/// that is not a trace replay.
#[test]
fn timeline_requests_that_cannot_be_met_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().join("there.otf2");
    std::fs::create_dir(&existing).unwrap();
    let out = run(dir.path(), &["--timeline", existing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists"));
    assert!(!dir.path().join("out").exists(), "ran before refusing");
    let json = dir.path().join("t.json");
    let out = run(
        dir.path(),
        &[
            "--timeline",
            json.to_str().unwrap(),
            "--timeline-events",
            "0",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let out = icnlab()
        .arg("run")
        .arg(example("cluster-sci16-alltoall.toml"))
        .arg("--out")
        .arg(dir.path().join("pp"))
        .args(["--timeline", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("workload.kind = \"alltoall\""));
}
