//! Issue 14, item 3: `merge` proves completeness. Missing, duplicate and foreign shards are
//! refused with exit 2 naming them; empty shards are valid.

use assert_cmd::Command;
use std::fs;
use std::path::Path;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

/// Six points: more shards than points leaves some shards empty.
const MM1: &str = r#"
model = "mm1"
seed = 5
replications = 2
customers = 2000
[sweep]
arrival_rate = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
[[plot]]
x = "arrival_rate"
y = ["sojourn_mean"]
"#;

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        let d = Dir(tempfile::tempdir().unwrap());
        fs::write(d.path("mm1.toml"), MM1).unwrap();
        d
    }

    fn path(&self, name: &str) -> String {
        self.0.path().join(name).display().to_string()
    }

    fn sweep(&self, out: &str, extra: &[&str]) {
        icnlab()
            .args([
                "sweep",
                &self.path("mm1.toml"),
                "--quiet",
                "--out",
                &self.path(out),
            ])
            .args(extra)
            .assert()
            .success();
    }

    fn shards(&self, n: usize, prefix: &str, extra: &[&str]) -> Vec<String> {
        (0..n)
            .map(|i| {
                let out = format!("{prefix}{i}");
                let shard = format!("{i}/{n}");
                let mut args = vec!["--shard", &shard];
                args.extend_from_slice(extra);
                self.sweep(&out, &args);
                self.path(&out)
            })
            .collect()
    }

    /// Runs merge; returns (exit code, stderr).
    fn merge(&self, shards: &[&String], out: &str) -> (i32, String) {
        let o = icnlab()
            .arg("merge")
            .args(shards.iter().map(|s| s.as_str()))
            .args(["--out", &self.path(out)])
            .output()
            .unwrap();
        (
            o.status.code().unwrap(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

#[test]
fn a_missing_shard_is_refused_and_named() {
    let d = Dir::new();
    let s = d.shards(3, "s", &[]);
    let (code, err) = d.merge(&[&s[0], &s[2]], "m");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("shard 1/3 missing"), "{err}");
    assert!(!Path::new(&d.path("m")).exists(), "nothing written");
}

#[test]
fn a_shard_with_other_set_values_is_refused() {
    let d = Dir::new();
    let s = d.shards(2, "s", &[]);
    let other = d.shards(2, "o", &["--set", "customers=3000"]);
    let (code, err) = d.merge(&[&s[0], &other[1]], "m");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&other[1]) && err.contains("different experiment"),
        "{err}"
    );
    let seed = d.shards(2, "seed", &["--seed", "9"]);
    let (code, err) = d.merge(&[&s[0], &seed[1]], "m");
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_duplicate_shard_is_refused_and_named() {
    let d = Dir::new();
    let s = d.shards(2, "s", &[]);
    let (code, err) = d.merge(&[&s[0], &s[0], &s[1]], "m");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("shard 0/2 given twice"), "{err}");
}

#[test]
fn a_point_index_out_of_range_is_refused() {
    let d = Dir::new();
    let s = d.shards(2, "s", &[]);
    let report = Path::new(&s[1]).join("report.json");
    let text = fs::read_to_string(&report).unwrap();
    let tampered = text.replacen("\"index\": 1,", "\"index\": 1000000000001,", 1);
    assert_ne!(text, tampered);
    fs::write(&report, tampered).unwrap();
    let (code, err) = d.merge(&[&s[0], &s[1]], "m");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("point 1000000000001 cannot be in shard 1/2"),
        "{err}"
    );
}

/// `--shard 7/8` of a 6-point sweep used to fail ("plot failed: cannot read data.csv").
#[test]
fn empty_shards_are_valid_and_merge_into_the_full_sweep() {
    let d = Dir::new();
    d.sweep("full", &[]);
    let s = d.shards(8, "s", &[]);
    let refs: Vec<&String> = s.iter().collect();
    let (code, err) = d.merge(&refs, "m");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        fs::read_to_string(d.path("full/data.csv")).unwrap(),
        fs::read_to_string(d.path("m/data.csv")).unwrap()
    );
}

/// Rewrites `dir/report.json` through `edit`.
fn tamper(dir: &str, edit: impl FnOnce(&mut serde_json::Value)) {
    let report = Path::new(dir).join("report.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&report).unwrap()).expect("a report is JSON");
    edit(&mut v);
    fs::write(&report, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// Issue 33 item 8: a shard count no sweep can have is refused where it is typed
/// (`--shard`) and where it is read (a report's `shard`), before anything is sized by it: a
/// report claiming 10^12 shards made `merge` abort asking for 16 TB.
#[test]
fn an_impossible_shard_count_is_refused_not_allocated() {
    let d = Dir::new();
    let o = icnlab()
        .args([
            "sweep",
            &d.path("mm1.toml"),
            "--quiet",
            "--shard",
            "0/1000000000000",
        ])
        .args(["--out", &d.path("big")])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("0/1000000000000") && err.contains("100000"),
        "{err}"
    );
    let s = d.shards(1, "s", &[]);
    tamper(&s[0], |v| {
        v["shard"] = serde_json::json!([0, 1_000_000_000_000u64])
    });
    let (code, err) = d.merge(&[&s[0]], "m");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("shard 0/1000000000000") && err.contains("impossible"),
        "{err}"
    );
}

/// Issue 33 item 8: a shard holding one point twice (and so missing another) used to merge
/// with exit 0 and a duplicated row; it is refused naming the file and the point.
#[test]
fn a_point_held_twice_is_refused_and_named() {
    let d = Dir::new();
    let s = d.shards(2, "s", &[]);
    tamper(&s[0], |v| {
        let points = v["points"].as_array_mut().unwrap();
        assert_eq!(points[1]["index"], 2);
        points[1]["index"] = serde_json::json!(0);
    });
    let (code, err) = d.merge(&[&s[0], &s[1]], "m");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("point 0 is there twice"), "{err}");
    assert!(err.contains("s0/report.json"), "{err}");
    assert!(!Path::new(&d.path("m/data.csv")).exists());
}
