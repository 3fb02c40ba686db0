//! Issue 14, item 4: `bcast --graph path:1000000` was quadratic (path:2000 took 8 s; the
//! million-node path would run for days). Now one source runs in linear time and all sources
//! are refused before running with exit 2 and one line naming the option; the same holds for
//! an experiment file. Item 9: `per_source.csv` escapes node names through the csv crate.
//!
//! The deadline below is not a speed assertion: it turns a run that would not finish (the
//! defect) into a failure instead of a hung test.

use assert_cmd::Command;
use std::time::Duration;

fn icnlab() -> Command {
    let mut c = Command::cargo_bin("icnlab").expect("binary built");
    c.timeout(Duration::from_secs(300));
    c
}

/// Runs `args`; asserts exit 2 and one stderr line containing each of `want`.
fn refused(args: &[&str], want: &[&str]) {
    let out = icnlab().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: want `{w}` in {err}");
    }
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
}

#[test]
fn all_sources_of_a_million_node_path_are_refused_naming_the_source() {
    refused(
        &["bcast", "--graph", "path:1000000"],
        &["--source:", "give one source"],
    );
    // List models build a tree (or score a design) on every node: refused naming --model.
    refused(
        &[
            "bcast",
            "--graph",
            "hypercube:16",
            "--model",
            "clbm",
            "--source",
            "0000000000000000",
        ],
        &["--model:", "CLBM"],
    );
    // Size flags have ranges (clap's error: exit 2, a usage hint below the error line).
    let out = icnlab()
        .args(["bcast", "--graph", "ring:5", "--optimum-max-nodes", "6000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("6000 is not in 0..=5000"));
}

#[test]
fn one_source_of_a_million_node_path_runs() {
    let out = icnlab()
        .args(["bcast", "--graph", "path:1000000", "--source", "0"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // From an end of a path every step informs one more node: n − 1 steps and messages.
    assert!(text.contains("diameter 999999"), "{text}");
    let ilbm = text.lines().find(|l| l.starts_with("ilbm")).unwrap();
    let cols: Vec<&str> = ilbm.split_whitespace().collect();
    assert_eq!((cols[1], cols[7]), ("999999", "999999.0"), "{ilbm}");
}

#[test]
fn an_experiment_with_all_sources_of_a_long_path_is_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.toml");
    std::fs::write(&file, "model = \"bcast\"\ngraph = \"path:1000000\"\n").unwrap();
    let f = file.display().to_string();
    refused(
        &["check", &f],
        &["long.toml: key `source`", "give one source"],
    );
}

/// A file graph whose node names hold a quote and a comma: per_source.csv was written with
/// `"{name}"`, unescaped, so a reader saw the wrong number of fields.
#[test]
fn per_source_csv_escapes_node_names() {
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("edges.txt");
    std::fs::write(&edges, "a\"1 b,2\nb,2 c\nc a\"1\n").unwrap();
    let out = dir.path().join("out");
    icnlab()
        .args([
            "bcast",
            "--graph",
            &format!("file:{}", edges.display()),
            "--model",
            "clbm",
            "--out",
            &out.display().to_string(),
        ])
        .assert()
        .success();
    let text = std::fs::read_to_string(out.join("per_source.csv")).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let names: Vec<String> = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            assert_eq!(rec.len(), 8, "{rec:?}");
            rec[2].to_owned()
        })
        .collect();
    assert_eq!(names, ["a\"1", "b,2", "c"], "{text}");
}
