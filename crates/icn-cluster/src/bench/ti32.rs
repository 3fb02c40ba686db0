//! `icnlab bench cluster-ti32`: the shared 32-rank application's SimGrid TI trace replayed as
//! the agreement experiment `experiments/examples/cluster-ti-32.toml` sets it (flow fabric on
//! SimGrid's crossbar cluster, SimGrid's collective algorithms), in actions replayed.
//!
//! Beside it, once per process, SimGrid 3.32's own replay of the same trace on the same platform
//! with the same algorithms (`scripts/simgrid/run.sh`, which runs `smpirun`), timed in the same
//! process: wall time, and CPU time of the child processes (bash's `times`), printed with the
//! ratio to icnlab's first replay. Without `smpirun` (SimGrid is optional) a note says it was
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

/// The experiment's model tables (its `[algorithms]` too), and its context.
fn experiment() -> Result<(ClusterConfig, toml::Table, Context), String> {
    let path = repo().join("experiments/examples/cluster-ti-32.toml");
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
    let cfg = toml::Value::Table(t)
        .try_into()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((cfg, algorithms, Context::for_file(&path)))
}

/// CPU seconds of this process (all threads), as `icnlab bench` counts them.
fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// SimGrid's replay of the trace: (wall s, CPU s of its processes), or why it was skipped.
fn simgrid(algorithms: &toml::Table) -> Result<(f64, f64), String> {
    if Command::new("smpirun").arg("-help").output().is_err() {
        return Err(
            "smpirun not found (SimGrid is optional: apt-get install libsimgrid-dev)".into(),
        );
    }
    let script = repo().join("scripts/simgrid/run.sh");
    let trace = repo().join("experiments/traces/simgrid-ti-32/index.txt");
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
        .arg(&trace)
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

/// One replay; the actions replayed. The first call also times SimGrid's.
pub fn run() -> Result<f64, String> {
    let (cfg, algorithms, ctx) = experiment()?;
    let (started, cpu_started) = (Instant::now(), cpu_seconds());
    let p = Cluster::prepare(&cfg, &ctx).map_err(|e| e.to_string())?;
    let m = Cluster::run_prepared(&p, 1, &NoProgress).map_err(|e| e.to_string())?;
    let (wall, cpu) = (started.elapsed().as_secs_f64(), cpu_seconds() - cpu_started);
    static SIMGRID: Once = Once::new();
    SIMGRID.call_once(|| match simgrid(&algorithms) {
        Ok((sg_wall, sg_cpu)) => eprintln!(
            "cluster-ti32: one replay each: icnlab {wall:.2} s wall / {cpu:.2} s CPU, SimGrid 3.32 \
             (smpirun, start-up included) {sg_wall:.2} s wall / {sg_cpu:.2} s CPU: icnlab {:.1}x \
             SimGrid's speed by wall time, {:.1}x by CPU time",
            sg_wall / wall,
            sg_cpu / cpu.max(0.01)
        ),
        Err(why) => eprintln!("cluster-ti32: SimGrid's replay skipped: {why}"),
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
        let (cfg, algorithms, ctx) = experiment().unwrap();
        Cluster::prepare(&cfg, &ctx).unwrap();
        assert_eq!(algorithms["alltoallv"].as_str(), Some("pair"));
        assert_eq!(algorithms.len(), 6);
    }

    #[test]
    fn bash_times_are_read() {
        assert_eq!(minutes_seconds("1m2.500s"), Some(62.5));
        assert_eq!(minutes_seconds("0m0.263s"), Some(0.263));
        assert_eq!(minutes_seconds("2.5s"), None);
    }
}
