//! Issue 14 item 6 through the CLI: `verdict` and `[[reference]]` in an experiment file reach
//! report.json, plot.svg and the results page; a bad reference is an exit-2 error naming file
//! and key before anything runs (no output folder is made).

use assert_cmd::Command;
use std::fs;
use std::path::Path;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

/// The M/M/1 self-check with the exact sojourn time drawn and two reference values.
const MM1: &str = r#"
model = "mm1"
title = "mm1 with references"
verdict = "The simulated sojourn time matches 1 / (mu − lambda) within its intervals."
seed = 5
replications = 3
customers = 5000
[sweep]
arrival_rate = [0.2, 0.5]
[[plot]]
x = "arrival_rate"
y = ["sojourn_mean"]
[[reference]]
column = "sojourn_mean"
y = 1.25
label = "exact at lambda 0.2"
source = "M/M/1 formula"
[[reference]]
column = "sojourn_mean"
x = 0.5
y = 2.0
label = "exact at lambda 0.5"
"#;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn verdict_and_references_reach_report_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "mm1.toml", MM1);
    let out = dir.path().join("out");
    icnlab()
        .args(["sweep", &cfg, "--quiet", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["verdict"],
        "The simulated sojourn time matches 1 / (mu − lambda) within its intervals."
    );
    assert_eq!(report["references"][0]["y"], 1.25);
    assert_eq!(report["references"][1]["x"], 0.5);
    let svg = fs::read_to_string(out.join("plot.svg")).unwrap();
    assert!(
        svg.contains("reference: exact at lambda 0.2 (M/M/1 formula)"),
        "{svg}"
    );
    assert!(svg.contains("reference: exact at lambda 0.5"), "{svg}");
    // The unit comes from the metric's metadata.
    assert!(svg.contains("sojourn_mean (time)"), "{svg}");
}

#[test]
fn bad_references_exit_2_naming_file_and_key_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            MM1.replace(
                "column = \"sojourn_mean\"\ny = 1.25",
                "column = \"sojurn_mean\"\ny = 1.25",
            ),
            "reference[0].column",
        ),
        (MM1.replace("y = 2.0", "y = \"two\""), "reference[1].y"),
        (
            MM1.replace("x = 0.5", "x = 0.5\nplot = 3"),
            "reference[1].plot",
        ),
        (
            MM1.replace("title = ", "verdict = 1\ntitle = ").replacen(
                "verdict = \"The",
                "# \"The",
                1,
            ),
            "verdict",
        ),
    ];
    for (i, (text, key)) in cases.iter().enumerate() {
        let cfg = write(dir.path(), &format!("bad{i}.toml"), text);
        let out = dir.path().join(format!("out{i}"));
        let run = icnlab()
            .args(["sweep", &cfg, "--quiet", "--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{key}: {err}");
        assert!(
            err.contains(&cfg) && err.contains(&format!("key `{key}`")),
            "{key}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(!out.exists(), "{key}: nothing may run or be written");
    }
}

#[test]
fn the_results_page_shows_verdict_references_and_named_checks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let experiments = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    icnlab()
        .args(["reproduce", "--quick", "--out", out.to_str().unwrap()])
        .arg("--experiments")
        .arg(&experiments)
        .args(["nic-validation", "sci-congestion"])
        .assert()
        .success();
    let page = fs::read_to_string(out.join("index.html")).unwrap();
    // Verdicts (from the experiment files).
    assert_eq!(
        page.matches("<strong>Verdict:</strong>").count(),
        2,
        "{page}"
    );
    assert!(page.contains("reproduces 13 of the paper"), "{page}");
    // The validation table names its checks; the run had one replication and says so.
    assert!(
        page.contains("<td class=\"t\">B MyVIA min one-way latency (µs)</td>"),
        "{page}"
    );
    assert!(page.contains("One replication per point: no intervals"));
    // sci-congestion: intervals, its figure, and its R = 1 reference listed.
    assert!(page.contains("3 replications per point: error bars are 95 % confidence intervals."));
    assert!(page.contains("<img class=\"figure\" src=\"sci-congestion/plot.svg\""));
    assert!(
        page.contains("R = 1: no gain (the paper claims R &gt; 1)"),
        "{page}"
    );
    let svg = fs::read_to_string(out.join("sci-congestion/plot.svg")).unwrap();
    assert!(svg.contains("reference: R = 1: no gain"), "{svg}");
}
