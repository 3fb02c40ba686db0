//! Issue 14, item 2: atomic, clean outputs. `icnlab sweep` killed (SIGINT or SIGKILL) at random
//! moments leaves its output folder holding either the complete previous result or the complete
//! new one — never a mix, a truncated file or a stale file of the other configuration.

use assert_cmd::cargo::CommandCargoExt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// An M/M/1 sweep with many points and short runs, so that most of a run's time is spent
/// writing report.json (≈ 2 MB), data.csv and plot.svg: the window a kill must not corrupt.
fn config(points: usize, seed: u64, plot: bool) -> String {
    let values: Vec<String> = (0..points)
        .map(|i| format!("{:.6}", 0.01 + 0.98 * i as f64 / points as f64))
        .collect();
    let mut text = format!(
        "model = \"mm1\"\nseed = {seed}\ncustomers = 200\nwarmup = 10\n[sweep]\narrival_rate = [{}]\n",
        values.join(", ")
    );
    if plot {
        text.push_str("[[plot]]\nx = \"arrival_rate\"\ny = [\"sojourn_mean\"]\n");
    }
    text
}

fn sweep(cfg: &Path, out: &Path) -> Command {
    let mut c = Command::cargo_bin("icnlab").unwrap();
    c.args(["sweep", "--quiet", "--threads", "1"])
        .arg(cfg)
        .arg("--out")
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    c
}

/// The files of a result folder and what must match: data.csv and plot.svg byte for byte,
/// report.json by its points (wall time and file name differ between runs).
#[derive(PartialEq)]
struct Snapshot(Vec<String>, Vec<u8>, Option<Vec<u8>>, serde_json::Value);

fn snapshot(dir: &Path) -> Option<Snapshot> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .ok()?
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let report: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("report.json")).ok()?)
            .expect("report.json is valid JSON");
    Some(Snapshot(
        names,
        fs::read(dir.join("data.csv")).ok()?,
        fs::read(dir.join("plot.svg")).ok(),
        report["points"].clone(),
    ))
}

/// xorshift64*: reproducible kill moments without a dependency.
struct Moments(u64);
impl Moments {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn killed_sweeps_leave_a_complete_old_or_new_result() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let cfgs: Vec<PathBuf> = [config(2000, 1, true), config(1500, 2, false)]
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let p = d.join(format!("c{i}.toml"));
            fs::write(&p, text).unwrap();
            p
        })
        .collect();
    // Reference results, and how long a full run takes.
    let mut refs = Vec::new();
    let mut longest = Duration::ZERO;
    for (i, cfg) in cfgs.iter().enumerate() {
        let out = d.join(format!("ref{i}"));
        let started = Instant::now();
        assert!(sweep(cfg, &out).status().unwrap().success());
        longest = longest.max(started.elapsed());
        refs.push(snapshot(&out).unwrap());
    }
    assert!(refs[0].2.is_some() && refs[1].2.is_none());

    let out = d.join("out").join("result");
    let mut moments = Moments(0x9E37_79B9_7F4A_7C15);
    let (mut killed, mut finished, mut had_result) = (0, 0, false);
    for run in 0..24 {
        let which = run % 2;
        let mut child = sweep(&cfgs[which], &out).spawn().unwrap();
        std::thread::sleep(longest.mul_f64(1.2 * moments.next()));
        if run % 4 < 2 {
            let _ = Command::new("kill")
                .args(["-s", "INT", &child.id().to_string()])
                .status();
        } else {
            let _ = child.kill();
        }
        let status = child.wait().unwrap();
        if status.success() {
            finished += 1;
        } else {
            killed += 1;
        }
        if !out.exists() {
            assert!(
                !had_result,
                "run {run}: a previous complete result vanished"
            );
            continue;
        }
        had_result = true;
        let now = snapshot(&out).unwrap_or_else(|| panic!("run {run}: incomplete folder"));
        assert!(
            now == refs[0] || now == refs[1],
            "run {run}: the folder is neither complete result (files {:?})",
            now.0
        );
        if status.success() {
            assert!(
                now == refs[which],
                "run {run} finished but its result is not in place"
            );
        }
    }
    assert!(
        killed >= 6,
        "too few runs were killed ({killed}) to test anything"
    );
    eprintln!("{killed} killed, {finished} finished");
    // A complete run afterwards clears what killed runs left in the parent folder.
    assert!(sweep(&cfgs[1], &out).status().unwrap().success());
    let left: Vec<String> = fs::read_dir(d.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["result"]);
}

/// Re-running a different configuration into a folder removes the earlier run's plot.svg.
#[test]
fn a_rerun_leaves_no_stale_files() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (a, b) = (d.join("a.toml"), d.join("b.toml"));
    fs::write(&a, config(3, 1, true)).unwrap();
    fs::write(&b, config(3, 1, false)).unwrap();
    let out = d.join("out");
    assert!(sweep(&a, &out).status().unwrap().success());
    assert!(out.join("plot.svg").exists());
    fs::write(out.join("my-notes.txt"), "kept").unwrap();
    assert!(sweep(&b, &out).status().unwrap().success());
    assert!(!out.join("plot.svg").exists(), "stale plot.svg kept");
    assert!(
        out.join("my-notes.txt").exists(),
        "a user's file was removed"
    );
}

/// `--out` naming a file is the user's error: exit 2, the file is named, and nothing is run.
#[test]
fn out_on_a_file_is_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("a.toml");
    fs::write(&cfg, config(3, 1, false)).unwrap();
    let file = tmp.path().join("file");
    fs::write(&file, "x").unwrap();
    let out = sweep(&cfg, &file)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert_eq!(fs::read_to_string(&file).unwrap(), "x");
}

/// Issue 14: a full disk left a 0-byte data.csv beside a complete report.json, with an error
/// naming no file. A file-size limit (`ulimit -f`, its signal ignored so that writes fail with
/// EFBIG as on a full disk) stops the second run's writes: it exits 1 naming the file it could
/// not write, and the folder still holds the first run's complete result.
#[test]
fn a_failed_write_names_the_file_and_keeps_the_previous_result() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (a, b) = (d.join("a.toml"), d.join("b.toml"));
    fs::write(&a, config(3, 1, true)).unwrap();
    fs::write(&b, config(400, 2, true)).unwrap();
    let out = d.join("out");
    assert!(sweep(&a, &out).status().unwrap().success());
    let before = snapshot(&out).expect("a complete first result");
    let bin = assert_cmd::cargo::cargo_bin("icnlab");
    let run = Command::new("sh")
        .arg("-c")
        .arg(
            "trap '' XFSZ; ulimit -f 16; exec \"$0\" sweep --quiet --threads 1 \"$1\" --out \"$2\"",
        )
        .arg(&bin)
        .arg(&b)
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    let named = ["report.json", "data.csv", "plot.svg"]
        .iter()
        .any(|f| err.contains(&out.join(f).display().to_string()));
    assert!(
        named && err.contains("File too large"),
        "the error names the file: {err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(snapshot(&out) == Some(before), "the first result is intact");
}

/// Issue 22: `--out` naming the current directory by another spelling (its absolute path):
/// the folder keeps its inode (the caller's shell is still in it) and holds the outputs. It
/// used to be swapped for the staging folder and the old one deleted under the caller.
#[test]
fn out_naming_the_current_directory_keeps_it() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let here = tmp.path().join("here");
    fs::create_dir(&here).unwrap();
    let cfg = tmp.path().join("mm1.toml");
    fs::write(&cfg, config(3, 1, false)).unwrap();
    fs::write(here.join("mine.txt"), "mine").unwrap();
    let inode = fs::metadata(&here).unwrap().ino();
    for _ in 0..2 {
        let ok = sweep(&cfg, &here.canonicalize().unwrap())
            .current_dir(&here)
            .status()
            .unwrap();
        assert!(ok.success());
        assert_eq!(fs::metadata(&here).unwrap().ino(), inode);
        assert!(here.join("data.csv").is_file());
        assert_eq!(fs::read_to_string(here.join("mine.txt")).unwrap(), "mine");
    }
}
