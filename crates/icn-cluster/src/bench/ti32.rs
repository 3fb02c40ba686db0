//! `icnlab bench cluster-ti32` and `cluster-ti32-vc`: the shared 32-rank application's SimGrid
//! TI trace replayed as an experiment sets it, in actions replayed:
//! * `cluster-ti32`, the whole application as the agreement experiment
//!   `experiments/examples/cluster-ti-32.toml` sets it (flow fabric on SimGrid's crossbar
//!   cluster, SimGrid's collective algorithms);
//! * `cluster-ti32-vc`, its first phase (`experiments/examples/cluster-ti-32-phase1-vc.toml`) on
//!   a cycle-level fabric of the platform's topology and link bandwidth, a 32-port VC router
//!   (the whole application's 2 × 3.4 GB of `alltoallv` are hours of cycles).
//!
//! Beside each, once per process, SimGrid 3.32's own replay of the same trace on SimGrid's
//! platform with the same algorithms (`scripts/simgrid/run.sh`, which runs `smpirun`), timed in
//! the same process: wall time, and CPU time of the child processes (bash's `times`), printed
//! with the ratio to icnlab's first replay. Without `smpirun` (SimGrid is optional) a note says it was
//! skipped. Both times are of one run on whatever machine load there is; SimGrid's run falls
//! inside the first repeat's timing, so `icnlab bench` shows it as that repeat's low wall rate
//! (its median of 3 or more repeats is icnlab's alone; its CPU rates count this process only).

use crate::model::{Cluster, ClusterConfig};
use icn_engine::model::NoProgress;
use icn_engine::{Context, Model};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;
use std::time::Instant;

/// The repository the binary was built from (the experiment, trace and SimGrid driver).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A replay timed beside SimGrid's: the experiment, relative to the repository.
struct Case {
    name: &'static str,
    experiment: &'static str,
}

const WHOLE_ON_FLOW: Case = Case {
    name: "cluster-ti32",
    experiment: "experiments/examples/cluster-ti-32.toml",
};

const PHASE1_ON_VC_ROUTER: Case = Case {
    name: "cluster-ti32-vc",
    experiment: "experiments/examples/cluster-ti-32-phase1-vc.toml",
};

/// The experiment's model tables (its `[algorithms]` too), its context, and its trace's index
/// file (which SimGrid replays too).
fn experiment(case: &Case) -> Result<(ClusterConfig, toml::Table, Context, PathBuf), String> {
    let path = repo().join(case.experiment);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut t: toml::Table =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    for k in ["model", "title", "seed", "replications"] {
        t.remove(k);
    }
    let algorithms = t
        .get("algorithms")
        .and_then(|a| a.as_table())
        .cloned()
        .unwrap_or_default();
    let trace = t
        .get("workload")
        .and_then(|w| w.get("file"))
        .and_then(|f| f.as_str())
        .map(|f| path.parent().unwrap_or(Path::new(".")).join(f))
        .ok_or_else(|| format!("{}: no workload.file", path.display()))?;
    let cfg = toml::Value::Table(t)
        .try_into()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((cfg, algorithms, Context::for_file(&path), trace))
}

/// CPU seconds of this process (all threads), as `icnlab bench` counts them.
fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// SimGrid's replay of the trace: (wall s, CPU s of its processes), or why it was skipped.
fn simgrid(algorithms: &toml::Table, trace: &Path) -> Result<(f64, f64), String> {
    if Command::new("smpirun").arg("-help").output().is_err() {
        return Err(
            "smpirun not found (SimGrid is optional: apt-get install libsimgrid-dev)".into(),
        );
    }
    let script = repo().join("scripts/simgrid/run.sh");
    let out = std::env::temp_dir().join(format!("icnlab-simgrid-{}", std::process::id()));
    let cfgs = algorithms
        .iter()
        .filter_map(|(k, v)| Some(format!("--cfg=smpi/{k}:{}", v.as_str()?)));
    // The driver is compiled before the clock starts (run.sh would build it inside the run).
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let built = Command::new("smpicxx")
        .args(["-std=c++17", "-O2"])
        .arg(repo().join("scripts/simgrid/replay.cpp"))
        .arg("-o")
        .arg(out.join("replay"))
        .output()
        .map_err(|e| format!("smpicxx: {e}"))?;
    if !built.status.success() {
        let _ = std::fs::remove_dir_all(&out);
        return Err(format!(
            "smpicxx scripts/simgrid/replay.cpp failed: {}",
            String::from_utf8_lossy(&built.stderr).trim()
        ));
    }
    let started = Instant::now();
    // `times` prints the shell's then its children's user and system times.
    let o = Command::new("bash")
        .arg("-c")
        .arg("\"$@\" > \"$OUT/simgrid.log\" 2>&1 || { tail -n 3 \"$OUT/simgrid.log\" >&2; exit 1; }; times")
        .arg("bash")
        .arg(&script)
        .arg(trace)
        .arg("32")
        .args(cfgs)
        .env("OUT", &out)
        .output()
        .map_err(|e| format!("bash: {e}"))?;
    let wall = started.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&o.stdout);
    let _ = std::fs::remove_dir_all(&out);
    if !o.status.success() {
        return Err(format!(
            "{} failed: {}",
            script.display(),
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    let children = text.lines().nth(1).unwrap_or("");
    let cpu: f64 = children
        .split_whitespace()
        .filter_map(minutes_seconds)
        .sum();
    Ok((wall, cpu))
}

/// `1m2.500s` → 62.5.
fn minutes_seconds(w: &str) -> Option<f64> {
    let (m, s) = w.strip_suffix('s')?.split_once('m')?;
    Some(m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?)
}

/// One replay of the whole application on the flow fabric; the actions replayed. The first
/// call also times SimGrid's.
pub fn run_whole_on_flow() -> Result<f64, String> {
    static SIMGRID: Once = Once::new();
    run(&WHOLE_ON_FLOW, &SIMGRID)
}

/// One replay of the first phase on the 32-port VC router; the first call also times SimGrid's
/// replay of the same phase.
pub fn run_phase1_on_vc_router() -> Result<f64, String> {
    static SIMGRID: Once = Once::new();
    run(&PHASE1_ON_VC_ROUTER, &SIMGRID)
}

fn run(case: &Case, simgrid_once: &Once) -> Result<f64, String> {
    let (cfg, algorithms, ctx, trace) = experiment(case)?;
    let (started, cpu_started) = (Instant::now(), cpu_seconds());
    let p = Cluster::prepare(&cfg, &ctx).map_err(|e| e.to_string())?;
    let m = Cluster::run_prepared(&p, 1, &NoProgress).map_err(|e| e.to_string())?;
    let (wall, cpu) = (started.elapsed().as_secs_f64(), cpu_seconds() - cpu_started);
    let name = case.name;
    simgrid_once.call_once(|| match simgrid(&algorithms, &trace) {
        Ok((sg_wall, sg_cpu)) => eprintln!(
            "{name}: one replay each: icnlab {wall:.2} s wall / {cpu:.2} s CPU, SimGrid 3.32 \
             (smpirun, start-up included) {sg_wall:.2} s wall / {sg_cpu:.2} s CPU: icnlab {:.1}x \
             SimGrid's speed by wall time, {:.1}x by CPU time",
            sg_wall / wall,
            sg_cpu / cpu.max(0.01)
        ),
        Err(why) => eprintln!("{name}: SimGrid's replay skipped: {why}"),
    });
    m.get("actions")
        .map(|x| x.value)
        .ok_or_else(|| "no `actions` metric".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_experiment_is_the_32_rank_agreement_case() {
        let (cfg, algorithms, ctx, trace) = experiment(&WHOLE_ON_FLOW).unwrap();
        Cluster::prepare(&cfg, &ctx).unwrap();
        assert_eq!(algorithms["alltoallv"].as_str(), Some("pair"));
        assert_eq!(algorithms.len(), 6);
        assert!(
            trace.ends_with("traces/simgrid-ti-32/index.txt"),
            "{trace:?}"
        );
    }

    /// The cycle-level case replays the same phase SimGrid is given, with the same algorithms,
    /// on a fabric of the platform's topology and link bandwidth (16 B × 7.8125 MHz = 125 MB/s).
    #[test]
    fn the_cycle_level_case_is_phase_one_on_the_platforms_crossbar() {
        let (cfg, algorithms, ctx, trace) = experiment(&PHASE1_ON_VC_ROUTER).unwrap();
        Cluster::prepare(&cfg, &ctx).unwrap();
        let (_, whole, ..) = experiment(&WHOLE_ON_FLOW).unwrap();
        assert_eq!(algorithms, whole);
        assert!(
            trace.ends_with("traces/simgrid-ti-32-phase1/index.txt"),
            "{trace:?}"
        );
        assert!(trace.exists());
        let text = std::fs::read_to_string(repo().join(PHASE1_ON_VC_ROUTER.experiment)).unwrap();
        let t: toml::Table = toml::from_str(&text).unwrap();
        let f = t["fabric"].as_table().unwrap();
        assert_eq!(f["kind"].as_str(), Some("vc-router"));
        assert_eq!(f["topology"].as_str(), Some("crossbar:32"));
        let mbs = f["flit_bytes"].as_integer().unwrap() as f64 * f["clock_mhz"].as_float().unwrap();
        assert_eq!(mbs, 125.0);
    }

    #[test]
    fn bash_times_are_read() {
        assert_eq!(minutes_seconds("1m2.500s"), Some(62.5));
        assert_eq!(minutes_seconds("0m0.263s"), Some(0.263));
        assert_eq!(minutes_seconds("2.5s"), None);
    }
}
