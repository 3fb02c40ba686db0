//! Issue 22, the extreme-value prober: every model, every numeric key (as `icnlab keys`
//! lists it) at the ends of its documented range, at 0, at its type's largest value and, for
//! real keys, at 1e-300; each run once with `icnlab run --set KEY=VALUE` under a memory
//! limit (`prlimit --as`) and a timeout. A run may exit 0, 1 or 2 — anything else (an abort,
//! a panic's 101, a signal) fails the prober; runs that hit the timeout and outputs with NaN
//! or inf are listed (they are findings, not failures: a maximal `measure` is meant to take
//! long). It runs minutes per model, so it is ignored by default:
//!
//! ```sh
//! cargo build --release -p icnlab
//! ICNLAB_PROBE_MODELS=mm1,bcast ICNLAB_PROBE_TIMEOUT=10 \
//!   cargo test --release -p icnlab --test extreme_values -- --ignored --nocapture
//! ```
//!
//! `ICNLAB_PROBE_MODELS` (default: every model), `ICNLAB_PROBE_TIMEOUT` (seconds per run,
//! default 10) and `ICNLAB_PROBE_MEMORY` (bytes of address space, default 4 GiB).

use std::path::Path;
use std::process::Command;

fn icnlab() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("icnlab")
}

/// `(key, default, allowed)` of every key `icnlab keys MODEL` lists with a default.
fn keys(model: &str) -> Vec<(String, String, String)> {
    let out = Command::new(icnlab())
        .args(["keys", model])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (key, rest) = l.split_once(" = ")?;
            let (default, doc) = rest.split_once(" # ")?;
            let allowed = doc.split(" [").next()?.split(": ").next()?;
            Some((
                key.trim().into(),
                default.trim().into(),
                allowed.trim().into(),
            ))
        })
        .collect()
}

/// A number of an `allowed` text: `123`, `0.5`, `10^6`, `2^30`.
fn number(s: &str) -> Option<f64> {
    match s.trim().split_once('^') {
        Some((b, e)) => Some(b.parse::<f64>().ok()?.powf(e.parse().ok()?)),
        None => s.trim().parse().ok(),
    }
}

/// The probe values of a numeric key.
fn values(default: &str, allowed: &str) -> Vec<String> {
    let int = default.parse::<i64>().is_ok();
    if !int && default.parse::<f64>().is_err() {
        return Vec::new();
    }
    let mut v: Vec<String> = vec!["0".into()];
    if let Some((lo, hi)) = allowed.split_once(" ..= ") {
        let hi = hi.split_whitespace().next().unwrap_or("");
        for end in [number(lo), number(hi)].into_iter().flatten() {
            v.push(if int {
                format!("{}", end as i64)
            } else {
                format!("{end:?}")
            });
        }
    }
    if int {
        v.push(i64::MAX.to_string());
    } else {
        v.extend(["1e-300".into(), "5e-324".into(), "1e300".into()]);
    }
    v.sort();
    v.dedup();
    v
}

/// Exit code of one probe run (`None`: killed by a signal), whether it timed out, and
/// whether its report has NaN or inf.
fn probe(
    dir: &Path,
    model: &str,
    key: &str,
    value: &str,
    secs: u64,
    mem: u64,
) -> (Option<i32>, bool, bool) {
    let file = dir.join(format!("{model}.toml"));
    std::fs::write(&file, format!("model = \"{model}\"\nreplications = 1\n")).unwrap();
    let out = dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new("prlimit")
        .arg(format!("--as={mem}"))
        .args(["--", "timeout", "-k", "5", &secs.to_string()])
        .arg(icnlab())
        .args(["run", "--quiet", "--threads", "1"])
        .arg(&file)
        .arg("--set")
        .arg(format!("{key}={value}"))
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("prlimit and timeout (util-linux, coreutils) run");
    // timeout(1) exits 124 when the run timed out (TERM, then KILL 5 s later): not a crash.
    let timed_out = status.code() == Some(124);
    let report = std::fs::read_to_string(out.join("report.json")).unwrap_or_default();
    let nan = ["NaN", "Infinity", "\"inf\"", "\"-inf\""]
        .iter()
        .any(|w| report.contains(w));
    (status.code(), timed_out, nan)
}

#[test]
#[ignore = "minutes per model; see the module documentation"]
fn extreme_values_never_crash() {
    let secs: u64 = std::env::var("ICNLAB_PROBE_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let mem: u64 = std::env::var("ICNLAB_PROBE_MEMORY")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4 << 30);
    let models: Vec<String> = match std::env::var("ICNLAB_PROBE_MODELS") {
        Ok(m) => m.split(',').map(String::from).collect(),
        Err(_) => {
            let out = Command::new(icnlab()).arg("models").output().unwrap();
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| l.split_whitespace().next().map(String::from))
                .filter(|m| m != "via-bench") // measures this machine for real
                .collect()
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let mut crashes = Vec::new();
    println!("| model | key | value | exit | note |\n|---|---|---|---|---|");
    for model in &models {
        for (key, default, allowed) in keys(model) {
            for value in values(&default, &allowed) {
                let (code, timed_out, nan) = probe(dir.path(), model, &key, &value, secs, mem);
                let ok = matches!(code, Some(0..=2));
                let note = match (timed_out, nan, ok) {
                    (true, _, _) => "timeout",
                    (_, true, _) => "NaN/inf in report",
                    (_, _, false) => "CRASH",
                    _ => "",
                };
                if !note.is_empty() {
                    println!("| {model} | `{key}` | {value} | {code:?} | {note} |");
                }
                if !ok && !timed_out {
                    crashes.push(format!("{model} {key}={value}: {code:?}"));
                }
            }
        }
    }
    assert!(crashes.is_empty(), "runs that crashed: {crashes:#?}");
}
