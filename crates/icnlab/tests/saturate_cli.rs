//! Issue 25, item 2: `icnlab saturate` finds the load where a configuration saturates by
//! bisection, and agrees with a fine sweep (the first load whose status is `saturated`) within
//! one bisection step, on an 8×8 mesh of VC routers, of X-Switches, and a p = 2 dragonfly. The
//! two wall times are printed (`--nocapture`), not asserted: speed lives in `icnlab bench`.

use assert_cmd::Command;
use std::fs;
use std::path::Path;
use std::time::Instant;

const STEP: f64 = 0.02;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

/// The first load of a `STEP` sweep whose point is saturated.
fn fine_sweep(dir: &Path, body: &str) -> f64 {
    let loads: Vec<String> = (1..=50)
        .map(|i| format!("{}", (i as f64 * STEP * 100.0).round() / 100.0))
        .collect();
    let cfg = dir.join("sweep.toml");
    fs::write(
        &cfg,
        format!("{body}\n[sweep]\nload = [{}]\n", loads.join(", ")),
    )
    .unwrap();
    let out = dir.join("sweep");
    let run = icnlab()
        .args(["sweep", "--quiet"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let csv = fs::read_to_string(out.join("data.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let (load, status) = (
        header.iter().position(|c| *c == "load").unwrap(),
        header.iter().position(|c| *c == "status").unwrap(),
    );
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|r| r[status] == "saturated")
        .map(|r| r[load].parse().unwrap())
        .expect("the sweep saturates")
}

/// The bisection's (below, above).
fn bisection(dir: &Path, body: &str) -> (f64, f64, String) {
    let cfg = dir.join("one.toml");
    fs::write(&cfg, body).unwrap();
    let run = icnlab()
        .args(["saturate", "--quiet", "--step", &STEP.to_string()])
        .arg(&cfg)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let between = stdout
        .split("saturates between load ")
        .nth(1)
        .unwrap_or_else(|| panic!("{stdout}"));
    let mut words = between.split_whitespace();
    let below: f64 = words.next().unwrap().parse().unwrap();
    assert_eq!(words.next(), Some("and"));
    let above: f64 = words.next().unwrap().parse().unwrap();
    (below, above, stdout)
}

#[test]
fn bisection_agrees_with_a_fine_sweep_within_one_step() {
    let common = "seed = 7\nreplications = 2\nwarmup = 500\nmeasure = 2000\ndrain = 4000\n";
    for (name, body) in [
        (
            "8x8 mesh, VC router",
            format!("model = \"vc-router\"\ntopology = \"mesh:8x8\"\n{common}"),
        ),
        (
            "8x8 mesh, X-Switch",
            format!(
                "model = \"xswitch\"\ntopology = \"mesh:8x8\"\nsize = 128\nframe_size = 128\n{common}"
            ),
        ),
        (
            "dragonfly p = 2, minimal routing",
            format!("model = \"vc-router\"\ntopology = \"dragonfly:2\"\n{common}"),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let t = Instant::now();
        let (below, above, line) = bisection(dir.path(), &body);
        let bisect_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let first = fine_sweep(dir.path(), &body);
        let sweep_s = t.elapsed().as_secs_f64();
        eprintln!(
            "{name}: bisection ({below}, {above}] in {bisect_s:.1} s; sweep's first saturated load {first} in {sweep_s:.1} s\n  {}",
            line.trim()
        );
        assert!(above - below <= STEP + 1e-9, "{line}");
        assert!(
            (above - first).abs() <= STEP + 1e-9,
            "{name}: bisection says ({below}, {above}], the sweep {first}"
        );
    }
}

/// A model without an open-loop `load`, or a file that sweeps `load` itself, is an input
/// error (exit 2) naming the key.
#[test]
fn saturate_needs_a_load_it_may_choose() {
    let dir = tempfile::tempdir().unwrap();
    for (text, key) in [
        ("model = \"mm1\"\n", "model"),
        (
            "model = \"vc-router\"\ntopology = \"mesh:4x4\"\n[sweep]\nload = [0.1]\n",
            "sweep.load",
        ),
    ] {
        let cfg = dir.path().join("e.toml");
        fs::write(&cfg, text).unwrap();
        let run = icnlab()
            .args(["saturate", "--quiet"])
            .arg(&cfg)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(key) && stderr.lines().count() == 1,
            "{stderr}"
        );
    }
}

/// Issue 33 item 10: a `--step` whose loads the model refuses (1e-10 rounds to a load of 0)
/// is the flag's fault: exit 2 naming `--step`, not the file's `load`.
#[test]
fn a_step_too_fine_for_the_model_blames_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("e.toml");
    fs::write(&cfg, "model = \"vc-router\"\ntopology = \"mesh:4x4\"\n").unwrap();
    let run = icnlab()
        .args(["saturate", "--quiet", "--step", "1e-10"])
        .arg(&cfg)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--step 0.0000000001: makes a load of 0"),
        "{stderr}"
    );
    assert!(!stderr.contains("e.toml"), "{stderr}");
}
