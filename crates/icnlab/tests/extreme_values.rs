//! Issue 22, the extreme-value prober: every model, every numeric key (as `icnlab keys`
//! lists it) at the ends of its documented range, at 0, at its type's largest value and, for
//! real keys, at 1e-300; each run once with `icnlab run --set KEY=VALUE` under a memory
//! limit (`prlimit --as`) and a timeout. A run may exit 0, 1 or 2 — anything else (an abort,
//! a panic's 101, a signal) fails the prober; runs that hit the timeout and outputs with NaN
//! or inf are listed (they are findings, not failures: a maximal `measure` is meant to take
//! long). Each run's peak memory (`/usr/bin/time`'s maximum resident set) is held against
//! its largest estimate (the models print them under `ICNLAB_SHOW_ESTIMATES`): for runs
//! estimated at [`MIN_ESTIMATE`] or more, the peak must stay within 2× of the estimate, and
//! the worst ratios are printed as a table (docs/trust.md keeps the last one). It runs
//! minutes per model, so it is ignored by default:
//!
//! ```sh
//! cargo build --release -p icnlab
//! ICNLAB_PROBE_MODELS=mm1,bcast ICNLAB_PROBE_TIMEOUT=10 \
//!   cargo test --release -p icnlab --test extreme_values -- --ignored --nocapture
//! ```
//!
//! `ICNLAB_PROBE_MODELS` (default: every model), `ICNLAB_PROBE_TIMEOUT` (seconds per run,
//! default 10), `ICNLAB_PROBE_MEMORY` (bytes of address space, default 4 GiB) and
//! `ICNLAB_PROBE_KEYS` (numeric keys per model, spread over its list; default all). CI runs
//! the reduced prober (`.ci/run`: 2 keys per model, 3 s each). Whatever it is given, the
//! prober fails when a model lists no key (`icnlab keys` changed its format) or when it ran
//! nothing: a prober that checks nothing is not a pass.

use std::path::Path;
use std::process::Command;

/// Estimates below this are not held against the peak: the process's own few MB (binary,
/// allocator, thread stacks) would dominate the ratio.
const MIN_ESTIMATE: u64 = 64 << 20;

fn icnlab() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("icnlab")
}

/// `(key, default, allowed)` of every key `icnlab keys MODEL` lists with a default; at least
/// one, or `icnlab keys` no longer speaks the format read here.
fn keys(model: &str) -> Vec<(String, String, String)> {
    let out = Command::new(icnlab())
        .args(["keys", model])
        .output()
        .unwrap();
    assert!(out.status.success(), "icnlab keys {model}: {out:?}");
    let keys = parse_keys(&String::from_utf8_lossy(&out.stdout));
    assert!(
        !keys.is_empty(),
        "icnlab keys {model} listed no `key = default # allowed` line: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    keys
}

/// The `key = default # allowed: doc` lines of `icnlab keys` output.
fn parse_keys(text: &str) -> Vec<(String, String, String)> {
    text.lines()
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

/// `n` of `items` spread evenly over the list (all of them when `n` is `None` or larger).
fn spread<T: Clone>(items: &[T], n: Option<usize>) -> Vec<T> {
    match n {
        Some(n) if n < items.len() => (0..n).map(|i| items[i * items.len() / n].clone()).collect(),
        _ => items.to_vec(),
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

/// What one probe run did.
struct Probe {
    /// Exit code (`None`: killed by a signal).
    code: Option<i32>,
    timed_out: bool,
    /// NaN or inf in its report.
    nan: bool,
    /// Peak resident memory, bytes (0 if unknown).
    peak: u64,
    /// The largest estimate the run printed, bytes (0: none).
    estimate: u64,
}

fn probe(dir: &Path, model: &str, key: &str, value: &str, secs: u64, mem: u64) -> Probe {
    let file = dir.join(format!("{model}.toml"));
    std::fs::write(&file, format!("model = \"{model}\"\nreplications = 1\n")).unwrap();
    let out = dir.join("out");
    let (rss, err) = (dir.join("rss"), dir.join("stderr"));
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_file(&rss);
    let status = Command::new("prlimit")
        .arg(format!("--as={mem}"))
        .args(["--", "timeout", "-k", "5", &secs.to_string()])
        .args(["/usr/bin/time", "-f", "%M", "-o"])
        .arg(&rss)
        .arg(icnlab())
        .args(["run", "--quiet", "--threads", "1"])
        .arg(&file)
        .arg("--set")
        .arg(format!("{key}={value}"))
        .arg("--out")
        .arg(&out)
        .env("ICNLAB_SHOW_ESTIMATES", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .status()
        .expect("prlimit, timeout (util-linux, coreutils) and /usr/bin/time (time) run");
    // timeout(1) exits 124 when the run timed out (TERM, then KILL 5 s later): not a crash.
    // time(1) passes the run's exit code on, and reports a signal as 128 + its number.
    let code = match status.code() {
        Some(c) if c > 128 && c != 124 => None,
        c => c,
    };
    let timed_out = status.code() == Some(124);
    let report = std::fs::read_to_string(out.join("report.json")).unwrap_or_default();
    let nan = ["NaN", "Infinity", "\"inf\"", "\"-inf\""]
        .iter()
        .any(|w| report.contains(w));
    let peak = std::fs::read_to_string(&rss)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse::<u64>().ok())
        .next_back()
        .map_or(0, |kib| kib * 1024);
    let estimate = std::fs::read_to_string(&err)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("estimate: ")?;
            rest.split(": ")
                .nth(1)?
                .split(" B")
                .next()?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    Probe {
        code,
        timed_out,
        nan,
        peak,
        estimate,
    }
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
    let per_model: Option<usize> = std::env::var("ICNLAB_PROBE_KEYS")
        .ok()
        .map(|s| s.parse().expect("ICNLAB_PROBE_KEYS: a count"));
    assert!(!models.is_empty(), "no model to probe");
    let dir = tempfile::tempdir().unwrap();
    let (mut runs, mut probed_models) = (0, 0);
    let mut crashes = Vec::new();
    let mut ratios: Vec<(f64, String)> = Vec::new();
    println!("| model | key | value | exit | note |\n|---|---|---|---|---|");
    for model in &models {
        let numeric: Vec<_> = keys(model)
            .into_iter()
            .filter(|(_, default, allowed)| !values(default, allowed).is_empty())
            .collect();
        probed_models += usize::from(!numeric.is_empty());
        for (key, default, allowed) in spread(&numeric, per_model) {
            for value in values(&default, &allowed) {
                runs += 1;
                let p = probe(dir.path(), model, &key, &value, secs, mem);
                let ok = matches!(p.code, Some(0..=2));
                let note = match (p.timed_out, p.nan, ok) {
                    (true, _, _) => "timeout",
                    (_, true, _) => "NaN/inf in report",
                    (_, _, false) => "CRASH",
                    _ => "",
                };
                if !note.is_empty() {
                    println!("| {model} | `{key}` | {value} | {:?} | {note} |", p.code);
                }
                if !ok && !p.timed_out {
                    crashes.push(format!("{model} {key}={value}: {:?}", p.code));
                }
                if p.estimate >= MIN_ESTIMATE && p.peak > 0 {
                    let ratio = p.peak as f64 / p.estimate as f64;
                    ratios.push((
                        ratio,
                        format!(
                            "| {model} | `{key}` = {value} | {} | {} | {ratio:.2} | {:?} |",
                            p.peak >> 20,
                            p.estimate >> 20,
                            p.code
                        ),
                    ));
                }
            }
        }
    }
    ratios.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!(
        "\n{} runs estimated at {} MB or more; the worst peak / estimate ratios:\n",
        ratios.len(),
        MIN_ESTIMATE >> 20
    );
    println!("| model | key = value | peak MB | estimate MB | peak / estimate | exit |");
    println!("|---|---|---|---|---|---|");
    for (_, row) in ratios.iter().take(10) {
        println!("{row}");
    }
    println!(
        "\n{runs} runs over {probed_models} of {} models",
        models.len()
    );
    assert!(
        runs > 0 && probed_models * 2 > models.len(),
        "the prober ran {runs} runs over {probed_models} of {} models: it checked (almost) nothing",
        models.len()
    );
    let over: Vec<&String> = ratios.iter().filter(|r| r.0 > 2.0).map(|r| &r.1).collect();
    assert!(crashes.is_empty(), "runs that crashed: {crashes:#?}");
    assert!(over.is_empty(), "peak above 2× the estimate: {over:#?}");
}

/// The format `keys` reads, on a line of `icnlab keys` output as it is printed.
#[test]
fn the_key_lines_are_read() {
    let got = parse_keys(
        "# model = \"mm1\": a queue\n# key = default  # allowed [unit]: meaning\ncustomers  = 100000  # 1 ..= 10^9 [count]: customers served\nname       = \"x\"     # any text: a name\n# seed = unset # any integer: the seed\n",
    );
    assert_eq!(
        got,
        [
            ("customers".into(), "100000".into(), "1 ..= 10^9".into()),
            ("name".into(), "\"x\"".into(), "any text".into())
        ]
    );
    assert_eq!(values("100000", "1 ..= 10^9").len(), 4);
    assert_eq!(spread(&[1, 2, 3, 4, 5, 6], Some(2)), [1, 4]);
}
