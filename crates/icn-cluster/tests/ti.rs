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

/// SimGrid 3.32's replay of each trace (`experiments/traces/simgrid-3.32-figures.toml`,
/// written by `scripts/simgrid/figures.sh`) against icnlab's on the flow fabric configured
/// as `cluster_crossbar.xml`, with the same algorithms: total time within 2 %,
/// communication time (total − the compute-only run) within 10 %, compute-only time equal.
#[test]
fn every_trace_agrees_with_simgrid_on_the_crossbar() {
    let path = repo().join("experiments/traces/simgrid-3.32-figures.toml");
    let figures: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let runs = figures["run"].as_array().unwrap();
    assert_eq!(runs.len(), 12);
    for run_ in runs {
        let name = run_["name"].as_str().unwrap();
        let ranks = run_["ranks"].as_integer().unwrap();
        let mut t: toml::Table = toml::from_str(&format!(
            "[workload]\nkind = \"ti\"\nfile = \"{}\"\n[fabric]\nkind = \"flow\"\ntopology = \"crossbar:{ranks}\"\nlink_mbs = 125.0\nlink_lat_ns = 50000.0\n[host]\nflops = 1e9\n[algorithms]\n",
            repo().join(run_["trace"].as_str().unwrap()).display()
        ))
        .unwrap();
        let algs = t["algorithms"].as_table_mut().unwrap();
        for c in run_["simgrid_cfg"].as_str().unwrap().split_whitespace() {
            let (coll, alg) = c
                .strip_prefix("--cfg=smpi/")
                .unwrap()
                .split_once(':')
                .unwrap();
            algs.insert(coll.into(), alg.into());
        }
        let cfg: ClusterConfig = toml::Value::Table(t).try_into().unwrap();
        let m = run(&cfg, &Context::default()).unwrap();
        let sg_total = run_["total_s"].as_float().unwrap() * 1e6;
        let sg_compute = run_["compute_only_s"].as_float().unwrap() * 1e6;
        let (total, compute) = (get(&m, "completion_us"), get(&m, "compute_us"));
        let (comm, sg_comm) = (total - compute, sg_total - sg_compute);
        eprintln!(
            "{name}: total {total:.1} µs (SimGrid {sg_total:.1}), comm {comm:.1} µs (SimGrid {sg_comm:.1})"
        );
        // SimGrid prints 1 µs: allow that in the figures it is compared with.
        assert!(
            (compute - sg_compute).abs() <= 1.0,
            "{name}: compute {compute} vs {sg_compute}"
        );
        assert!(
            (total - sg_total).abs() <= 0.02 * sg_total + 1.0,
            "{name}: total {total} vs {sg_total}"
        );
        assert!(
            (comm - sg_comm).abs() <= 0.10 * sg_comm + 2.0,
            "{name}: comm {comm} vs {sg_comm}"
        );
    }
}

/// The example experiment is the 32-rank agreement case.
#[test]
fn the_example_experiment_replays_the_32_rank_trace() {
    let (cfg, ctx) = example("cluster-ti-32.toml");
    let m = run(&cfg, &ctx).unwrap();
    assert!((get(&m, "completion_us") / 75.836910e6 - 1.0).abs() < 0.02);
    assert_eq!(get(&m, "actions"), 3232.0);
}
