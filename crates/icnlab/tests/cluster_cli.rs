//! `model = "cluster"` through the CLI, and `via run`: the same workload simulated and run
//! for real as one process per rank.

use assert_cmd::Command;
use std::path::PathBuf;

fn icnlab() -> Command {
    Command::cargo_bin("icnlab").expect("binary built")
}

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/examples")
        .join(name)
}

/// The example trace replays on both providers: every rank finishes, the measured and the
/// simulated completion are printed side by side.
#[test]
fn via_run_replays_the_example_trace_for_real_on_both_providers() {
    for provider in ["shm", "tcp"] {
        let out = icnlab()
            .args(["via", "run"])
            .arg(example("cluster-trace.toml"))
            .args(["--provider", provider])
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{provider}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("4 ranks, 9 messages, 32832 B"), "{stdout}");
        assert!(stdout.contains("completion_us (measured)"), "{stdout}");
        assert!(stdout.contains("completion_us (simulated)"), "{stdout}");
        let finished = stdout
            .lines()
            .filter(|l| {
                l.split_whitespace().count() == 2 && l.trim_start().starts_with(char::is_numeric)
            })
            .count();
        assert_eq!(finished, 4, "{stdout}");
    }
}

/// A trace file directly (no experiment file), and a workload real runs cannot do.
#[test]
fn via_run_takes_a_trace_and_refuses_ssend_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("pp.trace");
    std::fs::write(
        &ok,
        "0 send 1 1000 0\n1 recv 0 1000 0\n1 send 0 1000 0\n0 recv 1 1000 0\n",
    )
    .unwrap();
    icnlab()
        .args(["via", "run"])
        .arg(&ok)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    let bad = dir.path().join("ss.trace");
    std::fs::write(&bad, "0 ssend 1 8 0\n1 recv 0 8 0\n").unwrap();
    let out = icnlab().args(["via", "run"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "the workload is at fault");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ssend is not supported"));
    let missing = icnlab()
        .args(["via", "run"])
        .arg(dir.path().join("nope.trace"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}

/// `run` of the example cluster experiment, and a bad trace line named with file and line.
#[test]
fn cluster_experiments_run_and_bad_traces_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    icnlab()
        .arg("run")
        .arg(example("cluster-trace.toml"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .assert()
        .success();
    let trace = dir.path().join("bad.trace");
    std::fs::write(&trace, "0 send 1 8 0\n1 recv 0 8\n").unwrap();
    let cfg = dir.path().join("bad.toml");
    std::fs::write(
        &cfg,
        "model = \"cluster\"\n[workload]\nkind = \"trace\"\nfile = \"bad.trace\"\n",
    )
    .unwrap();
    let out = icnlab()
        .arg("run")
        .arg(&cfg)
        .arg("--out")
        .arg(dir.path().join("o2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.trace:2: field 5 (tag) is missing"),
        "{err}"
    );
}

/// Issue 33 item 6: two ranks that exchange a message, sleep 10^6 s and exchange another
/// finish at once on every fabric and thread count: idle time is jumped, not stepped (on the
/// VC routers and the partitioned X-Switch the 2·10^18 cycles took ~39 days). The timeout is
/// generous: a stepped second alone would exceed it.
#[test]
fn ranks_sleeping_a_million_seconds_finish_on_every_fabric_and_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sleep.txt"),
        "0 send 1 0 100\n1 recv 0 0 100\n0 sleep 1e6\n1 sleep 1e6\n\
         0 send 1 0 100\n1 recv 0 0 100\n",
    )
    .unwrap();
    for fabric in [
        "kind = \"ideal\"\ntopology = \"path:2\"",
        "kind = \"flow\"\ntopology = \"crossbar:2\"",
        "kind = \"xswitch\"\ntopology = \"mesh:2x2\"",
        "kind = \"xswitch\"\ntopology = \"mesh:2x2\"\nthreads = 2",
        "kind = \"xswitch\"\ntopology = \"mesh:4x1\"\nthreads = 3",
        "kind = \"vc-router\"\ntopology = \"mesh:2x2\"",
        "kind = \"vc-router\"\ntopology = \"mesh:2x2\"\nthreads = 2",
        "kind = \"vc-router\"\ntopology = \"fattree:2,2\"\nthreads = 2",
        "kind = \"sci-ring\"\ntopology = \"ring:2\"",
    ] {
        let exp = dir.path().join("sleep.toml");
        std::fs::write(
            &exp,
            format!(
                "model = \"cluster\"\n[workload]\nkind = \"ti\"\nfile = \"sleep.txt\"\n\
                 [fabric]\n{fabric}\n"
            ),
        )
        .unwrap();
        let out = icnlab()
            .args(["run", "--quiet", "--out"])
            .arg(dir.path().join("out"))
            .arg(&exp)
            .timeout(std::time::Duration::from_secs(300))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{fabric}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Issue 33 item 10: a TI index of more ranks than the soft limit on open files allows
/// (each rank holds its trace open) replays: icnlab raises the soft limit to the hard one.
/// Here the soft limit is set to 64 for 100 ranks.
#[test]
fn an_index_of_more_ranks_than_the_soft_file_limit_replays() {
    let dir = tempfile::tempdir().unwrap();
    let ranks = 100;
    let mut index = String::new();
    for r in 0..ranks {
        let name = format!("rank{r}.txt");
        std::fs::write(
            dir.path().join(&name),
            format!("{r} init\n{r} compute 1e3\n"),
        )
        .unwrap();
        index.push_str(&name);
        index.push('\n');
    }
    std::fs::write(dir.path().join("index.txt"), index).unwrap();
    let exp = dir.path().join("many.toml");
    std::fs::write(
        &exp,
        "model = \"cluster\"\n[workload]\nkind = \"ti\"\nfile = \"index.txt\"\n\
         [fabric]\nkind = \"flow\"\ntopology = \"crossbar:100\"\n",
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("icnlab");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -S -n 64 && exec \"$0\" run --quiet --out \"$1\" \"$2\"")
        .arg(&bin)
        .arg(dir.path().join("out"))
        .arg(&exp)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 33 item 10: where the hard limit on open files is below what a TI trace's ranks
/// hold, the run is refused before it starts (exit 2 naming the limit), not part-way.
#[test]
fn an_index_beyond_the_hard_file_limit_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let ranks = 100;
    let mut index = String::new();
    for r in 0..ranks {
        let name = format!("rank{r}.txt");
        std::fs::write(dir.path().join(&name), format!("{r} init\n")).unwrap();
        index.push_str(&name);
        index.push('\n');
    }
    std::fs::write(dir.path().join("index.txt"), index).unwrap();
    let exp = dir.path().join("many.toml");
    std::fs::write(
        &exp,
        "model = \"cluster\"\n[workload]\nkind = \"ti\"\nfile = \"index.txt\"\n\
         [fabric]\nkind = \"flow\"\ntopology = \"crossbar:100\"\n",
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("icnlab");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 80 && exec \"$0\" run --quiet --out \"$1\" \"$2\"")
        .arg(&bin)
        .arg(dir.path().join("out"))
        .arg(&exp)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("100 ranks hold 100 open files") && err.contains("may open 80"),
        "{err}"
    );
}
