//! The TI replay end to end: SimGrid's traces on the flow fabric, agreement with SimGrid's
//! own replay, diagnoses of traces that cannot finish, refusals of malformed ones.

use icn_cluster::model::{Cluster, ClusterConfig};
use icn_engine::model::NoProgress;
use icn_engine::{Context, Metrics, Model, ModelError};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An example experiment's model tables, and its context.
fn example(name: &str) -> (ClusterConfig, Context) {
    let path = repo().join("experiments/examples").join(name);
    let mut t: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for k in ["model", "title", "seed", "replications"] {
        t.remove(k);
    }
    (
        toml::Value::Table(t).try_into().unwrap(),
        Context::for_file(&path),
    )
}

fn run(cfg: &ClusterConfig, ctx: &Context) -> Result<Metrics, ModelError> {
    let p = Cluster::prepare(cfg, ctx)?;
    Cluster::run_prepared(&p, 1, &NoProgress)
}

fn get(m: &Metrics, name: &str) -> f64 {
    m.scalars
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name}"))
        .value
}

/// SimGrid 3.32 replays the shared 32-rank trace on the same platform with the same
/// algorithms in 75.836910 s, 73.132290 s of it compute (`scripts/simgrid/run.sh`; the
/// commands and figures in docs/cluster.md).
#[test]
fn ti32_on_the_flow_fabric_agrees_with_simgrid() {
    let (cfg, ctx) = example("cluster-ti-32.toml");
    let m = run(&cfg, &ctx).unwrap();
    let (total, compute) = (75.836910e6, 73.132290e6);
    assert!(
        (get(&m, "completion_us") / total - 1.0).abs() < 0.02,
        "{}",
        get(&m, "completion_us")
    );
    assert!((get(&m, "compute_us") - compute).abs() < 1.0);
    let comm = get(&m, "completion_us") - get(&m, "compute_us");
    assert!((comm / (total - compute) - 1.0).abs() < 0.10, "{comm}");
    assert_eq!(get(&m, "actions"), 3232.0);
}
