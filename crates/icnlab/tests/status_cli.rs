//! Issue 14, item 1: per-replication status. A point whose replications deadlocked or hit the
//! drain limit is flagged in stdout, data.csv, report.json and the plot, never averaged with
//! good replications, and does not discard the other points: they are written, the run exits
//! 1 and names the failed point. Issue 25, item 1: a saturated point is a result (exit 0), and
//! every run's status is one short line.

use assert_cmd::Command;
use std::fs;
use std::path::Path;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Four good SCI points and one whose slow receiver (service_time = 100000) keeps the drain
/// from finishing: on main this exited 1 with an empty output folder.
const SCI_ONE_BAD_POINT: &str = r#"
model = "sci"
seed = 1
replications = 2
nodes = 4
transmitter = "standard"
load = 0.5
warmup_cycles = 1000
measure_cycles = 20000
drain_limit_cycles = 20000
[sweep]
service_time = [10, 20, 40, 80, 100000]
[[plot]]
x = "service_time"
y = ["eta"]
"#;

#[test]
fn a_failing_point_does_not_discard_the_good_ones() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "sci.toml", SCI_ONE_BAD_POINT);
    let out = dir.path().join("out");
    let run = icnlab()
        .args(["sweep", &cfg, "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "1 of 5 points not ok (1 drain limit); first: service_time=100000: drain_limit:"
        ),
        "{stderr}"
    );
    assert!(stdout.contains("FLAGGED"), "{stdout}");

    let csv = fs::read_to_string(out.join("data.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let header = &rows[0];
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let (status, ok, drain, eta) = (
        col("status"),
        col("runs_ok"),
        col("runs_drain_limit"),
        col("eta"),
    );
    assert_eq!(rows.len(), 6, "{csv}");
    for row in &rows[1..5] {
        assert_eq!((row[status], row[ok], row[drain]), ("ok", "2", "0"));
        assert!(row[eta].parse::<f64>().unwrap() > 0.0);
    }
    assert_eq!(
        (rows[5][status], rows[5][ok], rows[5][drain]),
        ("drain_limit", "0", "2")
    );
    // Every replication hit the drain limit: the point keeps those replications' mean,
    // flagged (status column, hollow marker), as a past-saturation point of a load sweep.
    assert!(rows[5][eta].parse::<f64>().is_ok(), "{csv}");

    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let bad = &report["points"][4]["metrics"];
    assert_eq!(bad["status"]["kind"], "drain_limit");
    assert_eq!(bad["runs"]["drain_limit"], 2);
    assert_eq!(report["points"][0]["metrics"]["runs"]["ok"], 2);
    assert!(out.join("plot.svg").exists());
}

/// X-Switch with `on_deadlock = "report"`: the model returns `deadlocked = 1` rather than an
/// error; exec derives the status from that scalar, so the point is flagged (exit 1) and its
/// latency is not printed as a result.
#[test]
fn a_reported_deadlock_is_flagged_not_averaged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = write(
        d,
        "ring.trace",
        "0 0 2 4096\n0 1 3 4096\n0 2 0 4096\n0 3 1 4096\n",
    );
    let cfg = write(
        d,
        "dead.toml",
        &format!(
            "model = \"xswitch\"\ntopology = \"ring:4\"\nframe_size = 4096\nfifo_size = 16\n\
             stop_threshold = 12\ngo_threshold = 4\nwarmup = 0\nmeasure = 5000\nwatchdog = 1000\n\
             on_deadlock = \"report\"\nreplications = 2\n\
             [traffic]\npattern = \"trace\"\ntrace_file = \"{trace}\"\n"
        ),
    );
    let out = d.join("out");
    let run = icnlab()
        .args(["run", &cfg, "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("1 of 1 points not ok (1 deadlocked)"),
        "{stderr}"
    );
    let csv = fs::read_to_string(out.join("data.csv")).unwrap();
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .contains(",deadlocked,0,0,2,0,0"),
        "{csv}"
    );
}

/// Issue 25, item 1: one small network per status. Each case: the file, the `sweep` exit code,
/// the status of the last point in data.csv, and the one stderr line that sums the run up.
/// Saturation is a result (exit 0); a drain limit (`drain = 0`, or a drain shorter than the
/// latency while the network keeps up), a deadlock and a failed run are not (exit 1).
#[test]
fn each_status_has_its_exit_code_and_one_summary_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = write(
        d,
        "ring.trace",
        "0 0 2 4096\n0 1 3 4096\n0 2 0 4096\n0 3 1 4096\n",
    );
    let vc = |tail: &str| {
        format!(
            "model = \"vc-router\"\ntopology = \"mesh:4x4\"\nreplications = 2\nwarmup = 200\n\
             measure = 2000\n{tail}"
        )
    };
    let ring = |on_deadlock: &str| {
        format!(
            "model = \"xswitch\"\ntopology = \"ring:4\"\nframe_size = 4096\nfifo_size = 16\n\
             stop_threshold = 12\ngo_threshold = 4\nwarmup = 0\nmeasure = 5000\nwatchdog = 1000\n\
             on_deadlock = \"{on_deadlock}\"\nreplications = 2\n\
             [traffic]\npattern = \"trace\"\ntrace_file = \"{trace}\"\n[sweep]\nmeasure = [5000]\n"
        )
    };
    let cases = [
        (
            "saturated",
            vc("drain = 2000\n[sweep]\nload = [0.1, 0.9]\n"),
            0,
            "1 of 2 points saturated (accepted throughput measured, latency unbounded)",
        ),
        (
            "drain_limit",
            vc("drain = 0\n[sweep]\nload = [0.1]\n"),
            1,
            "points not ok (1 drain limit); first: load=0.1: drain_limit: drain = 0:",
        ),
        (
            "drain_limit",
            vc("size = 400\ndrain = 30\n[sweep]\nload = [0.05]\n"),
            1,
            "although the network kept up",
        ),
        (
            "deadlocked",
            ring("report"),
            1,
            "1 of 1 points not ok (1 deadlocked); first: measure=5000: deadlocked:",
        ),
        (
            "failed",
            ring("error"),
            1,
            "1 of 1 points not ok (1 failed); first: measure=5000: failed:",
        ),
    ];
    for (i, (status, text, code, line)) in cases.iter().enumerate() {
        let cfg = write(d, &format!("case{i}.toml"), text);
        let out = d.join(format!("out{i}"));
        let run = icnlab()
            .args(["sweep", &cfg, "--quiet", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(*code), "case {i}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "case {i}: {stderr}");
        assert!(stderr.contains(line), "case {i}: {stderr}");
        assert!(
            stderr.len() < 400,
            "case {i}: {} chars: {stderr}",
            stderr.len()
        );
        let csv = fs::read_to_string(out.join("data.csv")).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let last: Vec<&str> = csv.lines().last().unwrap().split(',').collect();
        let col = header.iter().position(|c| *c == "status").unwrap();
        assert_eq!(last[col], *status, "case {i}: {csv}");
    }
}
