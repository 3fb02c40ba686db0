//! Issue 24, item 2: `icnlab import booksim FILE --run DIR` runs a BookSim2 configuration and
//! prints BookSim2's statistic names beside icnlab's metrics, with the values of the run's
//! report; a key icnlab does not model is refused by name and line (exit 2), nothing written.

use assert_cmd::Command;
use std::fs;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

/// A short BookSim2 configuration of our own (BookSim2's syntax, a 4×4 mesh).
const CFG: &str = "// a 4x4 mesh, BookSim2 syntax\n\
    topology = mesh;\nk = 4;\nn = 2;\nrouting_function = romm;\nnum_vcs = 2;\n\
    vc_buf_size = 8;\nrouter = iq;\nvc_allocator = islip;\nsw_allocator = islip;\n\
    traffic = transpose;\npacket_size = 5;\ninjection_rate = 0.1;\n\
    injection_rate_uses_flits = 1;\nwarmup_periods = 1;\nsample_period = 500;\n\
    max_samples = 2;\nseed = 3;\n";

#[test]
fn run_prints_booksim2_statistics_beside_icnlab_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("romm.cfg");
    fs::write(&cfg, CFG).unwrap();
    let out = dir.path().join("run");
    let run = icnlab()
        .args(["import", "booksim"])
        .arg(&cfg)
        .arg("injection_rate=0.15")
        .arg("--run")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let metric = |name: &str| {
        report["points"][0]["metrics"]["scalars"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name} in the report"))["value"]
            .as_f64()
            .unwrap()
    };
    for (theirs, ours) in [
        ("Packet latency average", "latency_mean"),
        ("Injected flit rate average", "offered"),
        ("Accepted flit rate average", "accepted"),
    ] {
        let line = format!("{theirs} = {}  (icnlab {ours})", metric(ours));
        assert!(stdout.contains(&line), "`{line}` in:\n{stdout}");
    }
    assert!(stdout.contains("status = ok"), "{stdout}");
    // The override reached the run, and the translated file is kept beside the report.
    assert!((metric("offered") - 0.15).abs() < 0.03, "{stdout}");
    let toml = fs::read_to_string(out.join("imported.toml")).unwrap();
    assert!(toml.contains("routing = \"romm_mesh\""), "{toml}");
}

#[test]
fn run_refuses_an_unmodelled_key_by_name_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("speedup.cfg");
    fs::write(&cfg, format!("{CFG}input_speedup = 2;\n")).unwrap();
    let out = dir.path().join("run");
    let run = icnlab()
        .args(["import", "booksim"])
        .arg(&cfg)
        .arg("--run")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("speedup.cfg:19: key `input_speedup`"),
        "{stderr}"
    );
    assert!(!out.join("report.json").exists());
}
