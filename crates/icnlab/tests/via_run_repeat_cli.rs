//! `icnlab via run --repeat N`: each run's completion, their median and spread, and the
//! machine's load at start and end, with a warning when it is busier than its cores.

use assert_cmd::Command;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/examples/cluster-this-machine.toml")
}

fn run(repeat: &str) -> (bool, String) {
    let out = icnlab()
        .args(["via", "run"])
        .arg(example())
        .args(["--repeat", repeat])
        .timeout(std::time::Duration::from_secs(180))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The median printed is the median of the runs printed; min and max are theirs; the load
/// is read at start and end.
#[test]
fn repeated_runs_print_their_median_spread_and_the_load() {
    let (ok, out) = run("3");
    assert!(ok, "{out}");
    let runs: Vec<f64> = out
        .lines()
        .find_map(|l| l.strip_prefix("runs: completion_us "))
        .expect("a runs line")
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(runs.len(), 3, "{out}");
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    let line = out
        .lines()
        .find(|l| l.starts_with("completion_us (measured)"))
        .expect("the measured line");
    assert!(
        line.contains(&format!("{:.2}   median of 3 runs", sorted[1])),
        "{line}"
    );
    assert!(
        line.contains(&format!("min {:.2}, max {:.2}", sorted[0], sorted[2])),
        "{line}"
    );
    assert!(out.contains("machine at start: load "), "{out}");
    assert!(out.contains("machine at end: load "), "{out}");
}

/// With a busy loop on every core the run says the machine was busier than its cores.
#[test]
fn a_busy_loop_on_every_core_brings_the_warning() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let stop = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..cores)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            })
        })
        .collect();
    let (ok, out) = run("2");
    stop.store(true, Ordering::Relaxed);
    for s in spinners {
        s.join().unwrap();
    }
    assert!(ok, "{out}");
    assert!(
        out.contains("warning: the machine was busier than its"),
        "{out}"
    );
}

#[test]
fn a_repeat_out_of_range_is_refused_naming_the_range() {
    for bad in ["0", "1001"] {
        let out = icnlab()
            .args(["via", "run"])
            .arg(example())
            .args(["--repeat", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("1..=1000") || err.contains("1..1001"), "{err}");
    }
}
