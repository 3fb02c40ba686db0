//! Issue 15, item 2(a): `mpirun -np 2 icnlab sweep|run` against one process, and failing ranks;
//! item 2(b): the same with `--spread network` (each replication's network partitioned over
//! the two ranks).
//!
//! Only in `--features mpi` builds, which need an MPI library to build at all; they start
//! `mpirun` (OpenMPI; `.ci/run` installs it). Run them with
//! `cargo test -p icnlab --release --locked --features mpi --test mpi_cli`.
//! Each `mpirun` runs under `timeout` so that a hang fails the test instead of the CI job
//! (a guard, not a timed assertion: the runs take about a second).
#![cfg(feature = "mpi")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ICNLAB: &str = env!("CARGO_BIN_EXE_icnlab");

/// Four loads × 2 replications of a 4×4 VC-router mesh: 8 jobs, 4 per rank.
const VC: &str = r#"
model = "vc-router"
title = "VC router 4x4 mesh"
seed = 3
replications = 2
topology = "mesh:4x4"
warmup = 500
measure = 2000
drain = 5000
size = 5
[sweep]
load = [0.1, 0.2, 0.3, 0.4]
[[plot]]
x = "load"
y = ["latency_mean"]
"#;

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        let d = Dir(tempfile::tempdir().unwrap());
        fs::write(d.path("vc.toml"), VC).unwrap();
        d
    }

    fn path(&self, name: &str) -> String {
        self.0.path().join(name).display().to_string()
    }
}

/// `mpirun` with `apps` as its colon-separated app contexts (MPMD: one argument list per
/// group of ranks), as root if need be, under a 120 s guard.
fn mpirun(apps: &[(u32, Vec<String>)]) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.args(["120", "mpirun", "--allow-run-as-root", "--oversubscribe"]);
    for (i, (np, args)) in apps.iter().enumerate() {
        if i > 0 {
            cmd.arg(":");
        }
        cmd.args(["-np", &np.to_string(), ICNLAB]).args(args);
    }
    let out = cmd.output().expect("mpirun and timeout are installed");
    assert_ne!(
        out.status.code(),
        Some(124),
        "mpirun hung: {}",
        stderr(&out)
    );
    out
}

fn icnlab(args: &[String]) -> Output {
    Command::new(ICNLAB).args(args).output().unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every file of two output folders, byte for byte; in report.json only `provenance` and
/// `wall_time_s` may differ.
fn assert_same_outputs(one: &Path, other: &Path) {
    let names = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(d)
            .unwrap()
            .map(|e| PathBuf::from(e.unwrap().file_name()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(one), names(other));
    for name in names(one) {
        let (a, b) = (
            fs::read(one.join(&name)).unwrap(),
            fs::read(other.join(&name)).unwrap(),
        );
        if name.as_os_str() == "report.json" {
            // Who ran it, when and how long (`provenance`: command line, date, load, CPU time)
            // and `wall_time_s` are the parts allowed to differ; the results are not.
            fn drop_run_facts(v: &mut serde_json::Value) {
                match v {
                    serde_json::Value::Object(map) => {
                        map.remove("provenance");
                        map.remove("wall_time_s");
                        map.values_mut().for_each(drop_run_facts);
                    }
                    serde_json::Value::Array(items) => items.iter_mut().for_each(drop_run_facts),
                    _ => {}
                }
            }
            let strip = |bytes: &[u8]| -> serde_json::Value {
                let mut v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
                drop_run_facts(&mut v);
                v
            };
            assert_eq!(
                strip(&a),
                strip(&b),
                "report.json beyond provenance and wall_time_s"
            );
        } else {
            assert!(a == b, "{} differs", name.display());
        }
    }
}

/// Two ranks of one thread each against one process of two threads (report.json counts the
/// threads of all ranks, so the two reports agree on that too).
#[test]
fn sweep_on_two_ranks_writes_the_one_process_files() {
    let d = Dir::new();
    let one = icnlab(&args(&[
        "sweep",
        &d.path("vc.toml"),
        "--out",
        &d.path("one"),
        "--quiet",
        "--threads",
        "2",
    ]));
    assert!(one.status.success(), "{}", stderr(&one));
    let two = mpirun(&[(
        2,
        args(&[
            "sweep",
            &d.path("vc.toml"),
            "--out",
            &d.path("two"),
            "--quiet",
            "--threads",
            "1",
        ]),
    )]);
    assert!(two.status.success(), "{}", stderr(&two));
    assert!(
        String::from_utf8_lossy(&two.stdout).contains("load=0.4"),
        "rank 0 prints the summary"
    );
    assert_same_outputs(Path::new(&d.path("one")), Path::new(&d.path("two")));
}

/// Issue 15's topologies for the sweep path: `vc-router` on a mesh, a torus, a fat tree and a
/// dragonfly, and `xswitch` (switch degree ≤ 4) on a mesh, a torus, a tree, a 2-ary fat tree and
/// the a = 2, h = 1 dragonfly; 2 ranks against
/// one process, every output file.
const VC_TOPOLOGIES: &str = r#"
model = "vc-router"
seed = 2
replications = 2
vcs = 3
size = 5
warmup = 300
measure = 1500
drain = 10000
[sweep]
topology = ["mesh:4x4", "torus:4x4", "fattree:4,2", "dragonfly:2"]
load = [0.05, 0.2]
"#;

const XSWITCH_TOPOLOGIES: &str = r#"
model = "xswitch"
seed = 2
replications = 2
on_deadlock = "report"
size = 32
warmup = 300
measure = 1500
drain = 10000
[sweep]
topology = ["mesh:4x4", "torus:4x4", "tree:3", "fattree:2,3", "dragonfly:1,2,1"]
load = [0.05, 0.2]
"#;

#[test]
fn vc_router_and_xswitch_topologies_match_at_two_ranks() {
    let d = Dir::new();
    for (name, text, points) in [("vc", VC_TOPOLOGIES, 8), ("xs", XSWITCH_TOPOLOGIES, 10)] {
        let file = d.path(&format!("{name}-topologies.toml"));
        fs::write(&file, text).unwrap();
        let sweep = |out: &str, threads: &str| {
            args(&[
                "sweep",
                &file,
                "--out",
                &d.path(out),
                "--quiet",
                "--threads",
                threads,
            ])
        };
        let one = icnlab(&sweep(&format!("{name}1"), "2"));
        assert!(one.status.success(), "{}", stderr(&one));
        let two = mpirun(&[(2, sweep(&format!("{name}2"), "1"))]);
        assert!(two.status.success(), "{}", stderr(&two));
        let rows = fs::read_to_string(d.path(&format!("{name}1/data.csv"))).unwrap();
        assert_eq!(rows.lines().count(), 1 + points, "{name}: every point");
        assert_same_outputs(
            Path::new(&d.path(&format!("{name}1"))),
            Path::new(&d.path(&format!("{name}2"))),
        );
    }
}

/// `run` (the base configuration): one point, its 5 replications split 3 + 2.
#[test]
fn run_on_two_ranks_writes_the_one_process_files() {
    let d = Dir::new();
    let common = |out: &str, threads: &str| {
        args(&[
            "run",
            &d.path("vc.toml"),
            "--set",
            "replications=5",
            "--out",
            &d.path(out),
            "--quiet",
            "--threads",
            threads,
        ])
    };
    let one = icnlab(&common("one", "2"));
    assert!(one.status.success(), "{}", stderr(&one));
    let two = mpirun(&[(2, common("two", "1"))]);
    assert!(two.status.success(), "{}", stderr(&two));
    assert_same_outputs(Path::new(&d.path("one")), Path::new(&d.path("two")));
}

/// A one-rank world is the one-process path.
#[test]
fn one_rank_is_one_process() {
    let d = Dir::new();
    let sweep = |out: &str| {
        args(&[
            "sweep",
            &d.path("vc.toml"),
            "--out",
            &d.path(out),
            "--quiet",
            "--threads",
            "1",
        ])
    };
    assert!(icnlab(&sweep("one")).status.success());
    assert!(mpirun(&[(1, sweep("mpi1"))]).status.success());
    assert_same_outputs(Path::new(&d.path("one")), Path::new(&d.path("mpi1")));
}

/// Rank 1 cannot read its file: rank 0 names it, every rank exits 2, nothing is written.
#[test]
fn a_rank_that_fails_stops_the_job_with_one_code() {
    let d = Dir::new();
    let out = d.path("out");
    let res = mpirun(&[
        (
            1,
            args(&["sweep", &d.path("vc.toml"), "--out", &out, "--quiet"]),
        ),
        (
            1,
            args(&["sweep", &d.path("missing.toml"), "--out", &out, "--quiet"]),
        ),
    ]);
    assert_eq!(res.status.code(), Some(2), "{}", stderr(&res));
    assert!(
        stderr(&res).contains("error: rank 1 of 2: "),
        "{}",
        stderr(&res)
    );
    assert!(stderr(&res).contains("missing.toml"), "{}", stderr(&res));
    assert!(!Path::new(&out).exists());
}

/// Ranks that would compute different experiments (here: seeds) are refused before running.
#[test]
fn ranks_on_different_experiments_are_refused() {
    let d = Dir::new();
    let out = d.path("out");
    let sweep = |seed: &str| {
        args(&[
            "sweep",
            &d.path("vc.toml"),
            "--seed",
            seed,
            "--out",
            &out,
            "--quiet",
        ])
    };
    let res = mpirun(&[(1, sweep("1")), (1, sweep("2"))]);
    assert_eq!(res.status.code(), Some(2), "{}", stderr(&res));
    assert!(
        stderr(&res).contains("rank 1 of 2 would run"),
        "{}",
        stderr(&res)
    );
    assert!(!Path::new(&out).exists());
}

/// A rank that dies outside icnlab's control (here: not icnlab at all, exiting 3 at once):
/// the launcher ends the job; rank 0 is not left waiting.
#[test]
fn a_rank_that_dies_does_not_leave_rank_0_waiting() {
    let d = Dir::new();
    let out = Command::new("timeout")
        .args([
            "120",
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            "1",
            ICNLAB,
        ])
        .args([
            "sweep",
            &d.path("vc.toml"),
            "--out",
            &d.path("out"),
            "--quiet",
        ])
        .args([":", "-np", "1", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(124), "hung: {}", stderr(&out));
    assert!(!out.status.success());
}

/// Every rank would write the same files: other commands are refused (exit 2).
#[test]
fn other_commands_are_refused_under_mpirun() {
    let d = Dir::new();
    let res = mpirun(&[(2, args(&["merge", &d.path("a"), "--out", &d.path("m")]))]);
    assert_eq!(res.status.code(), Some(2));
    assert!(stderr(&res).contains("only `run` and `sweep` spread over MPI ranks"));
}

/// Item 2(b): `--spread network`, each replication's network partitioned over the 2 ranks
/// (`threads` partitions per rank), on issue 15's topologies: every output file as one process
/// writes it. The one process runs 2 replications at a time, the ranks 1 each: report.json
/// counts 2 threads both ways.
#[test]
fn a_network_spread_over_two_ranks_writes_the_one_process_files() {
    let d = Dir::new();
    for (name, text, threads) in [("vc", VC_TOPOLOGIES, "2"), ("xs", XSWITCH_TOPOLOGIES, "1")] {
        let file = d.path(&format!("{name}-net.toml"));
        // Shorter runs: every cycle of a spread network is an exchange between the ranks.
        fs::write(&file, text.replace("measure = 1500", "measure = 600")).unwrap();
        let sweep = |out: &str| {
            args(&[
                "sweep",
                &file,
                "--out",
                &d.path(out),
                "--quiet",
                "--set",
                &format!("threads={threads}"),
            ])
        };
        let mut one_args = sweep(&format!("{name}-one"));
        one_args.extend(args(&["--threads", "2"]));
        let one = icnlab(&one_args);
        assert!(one.status.success(), "{}", stderr(&one));
        let mut spread = sweep(&format!("{name}-net"));
        spread.extend(args(&["--spread", "network"]));
        let two = mpirun(&[(2, spread)]);
        assert!(two.status.success(), "{name}: {}", stderr(&two));
        assert_same_outputs(
            Path::new(&d.path(&format!("{name}-one"))),
            Path::new(&d.path(&format!("{name}-net"))),
        );
    }
    // `run`: the base configuration's replications, one after another over both ranks.
    let run = |out: &str| {
        args(&[
            "run",
            &d.path("vc.toml"),
            "--set",
            "replications=3",
            "--set",
            "measure=800",
            "--out",
            &d.path(out),
            "--quiet",
        ])
    };
    let mut one_args = run("run-one");
    one_args.extend(args(&["--threads", "2"]));
    assert!(icnlab(&one_args).status.success());
    let mut spread = run("run-net");
    spread.extend(args(&["--spread", "network"]));
    let two = mpirun(&[(2, spread)]);
    assert!(two.status.success(), "{}", stderr(&two));
    assert_same_outputs(Path::new(&d.path("run-one")), Path::new(&d.path("run-net")));
    // The cluster model's fabric: an all-to-all over VC routers on a CCC (router of any radix).
    let cluster = d.path("cluster.toml");
    fs::write(&cluster, CLUSTER).unwrap();
    let run = |out: &str| args(&["run", &cluster, "--out", &d.path(out), "--quiet"]);
    let mut one_args = run("cluster-one");
    one_args.extend(args(&["--threads", "2"]));
    assert!(icnlab(&one_args).status.success());
    let mut spread = run("cluster-net");
    spread.extend(args(&["--spread", "network"]));
    let two = mpirun(&[(2, spread)]);
    assert!(two.status.success(), "{}", stderr(&two));
    assert_same_outputs(
        Path::new(&d.path("cluster-one")),
        Path::new(&d.path("cluster-net")),
    );
}

/// A cluster whose fabric is a network of VC routers of radix 4 on a CCC.
const CLUSTER: &str = r#"
model = "cluster"
seed = 3
replications = 2
[fabric]
kind = "vc-router"
topology = "ccc:3,3"
[workload]
kind = "alltoall"
bytes = 700
"#;

/// `--spread network` that cannot be: a model without a network to spread, and more
/// partitions (2 ranks × 9 threads) than the mesh has routers. Every rank exits 2, rank 0
/// names the problem, nothing is written.
#[test]
fn a_network_that_cannot_be_spread_stops_every_rank_with_code_2() {
    let d = Dir::new();
    fs::write(d.path("mm1.toml"), "model = \"mm1\"\ncustomers = 1000\n").unwrap();
    for (command, file, extra, out, why) in [
        (
            "run",
            "mm1.toml",
            None,
            "mm1",
            "model `mm1` cannot spread one network",
        ),
        (
            "sweep",
            "vc.toml",
            Some("threads=9"),
            "wide",
            "at most one partition per router (16): 2 ranks",
        ),
    ] {
        let mut a = args(&[command, &d.path(file), "--out", &d.path(out), "--quiet"]);
        if let Some(set) = extra {
            a.extend(args(&["--set", set]));
        }
        a.extend(args(&["--spread", "network"]));
        let res = mpirun(&[(2, a)]);
        assert_eq!(res.status.code(), Some(2), "{}", stderr(&res));
        assert!(stderr(&res).contains(why), "{}", stderr(&res));
        assert!(!Path::new(&d.path(out)).exists(), "{out}: nothing written");
    }
}

/// A replication that fails at run time (a torus without dateline classes deadlocks, found by
/// the watchdog in the same cycle on both ranks): flagged and written as one process writes it,
/// exit 1 from every rank.
#[test]
fn a_network_spread_over_two_ranks_deadlocks_as_one_process() {
    let d = Dir::new();
    let file = d.path("deadlock.toml");
    fs::write(
        &file,
        r#"
model = "vc-router"
seed = 4
replications = 2
topology = "torus:4x4"
# icnlab's dimension order (the torus default is BookSim2's dim_order): with one VC class and
# no dateline it deadlocks at this load.
routing = "dor"
vcs = 1
allow_deadlock = true
watchdog = 1000
load = 0.4
warmup = 500
measure = 3000
drain = 20000
"#,
    )
    .unwrap();
    let run = |out: &str| args(&["run", &file, "--out", &d.path(out), "--quiet"]);
    let mut one_args = run("one");
    one_args.extend(args(&["--threads", "2"]));
    let one = icnlab(&one_args);
    assert_eq!(one.status.code(), Some(1), "{}", stderr(&one));
    let mut spread = run("net");
    spread.extend(args(&["--spread", "network"]));
    let two = mpirun(&[(2, spread)]);
    assert_eq!(two.status.code(), Some(1), "{}", stderr(&two));
    assert!(stderr(&two).contains("deadlock"), "{}", stderr(&two));
    assert_same_outputs(Path::new(&d.path("one")), Path::new(&d.path("net")));
}
