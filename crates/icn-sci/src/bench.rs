//! The SCI speed workloads `icnlab bench` times (issue 2's ring, issue 17's switched system).

use crate::{Sci, bench_config, switched};
use icn_engine::Model;
use icn_engine::bench::Target;
use icn_engine::model::NoProgress;

/// The SCI workload of issue 2: 8-node ring, 64-byte sends, offered load 0.5, hot spot 0.2.
fn sci() -> Result<f64, String> {
    let cfg = bench_config();
    let m = Sci::run(&cfg, 1, &NoProgress).map_err(|e| e.to_string())?;
    Ok(cfg.nodes as f64 * m.require("cycles_simulated").map_err(|e| e.to_string())?)
}

/// Switched SCI (issue 17): 4 rings of 8 hosts around a crossbar, load 0.5, uniform.
fn sci_switched() -> Result<f64, String> {
    let cfg = switched::bench_config();
    let m = switched::SciSwitched::run(&cfg, 1, &NoProgress).map_err(|e| e.to_string())?;
    let nodes: usize = switched::Topology::build(&cfg)
        .map_err(|e| e.to_string())?
        .rings
        .iter()
        .map(|r| r.nodes())
        .sum();
    Ok(nodes as f64 * m.require("cycles_simulated").map_err(|e| e.to_string())?)
}

/// This crate's targets, in the order `icnlab bench` lists them.
pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "sci",
            workload: "SCI ring, 8 nodes, 64-byte sends, load 0.5, hot spot 0.2, A/B aging",
            unit: "node-cycles",
            run: sci,
        },
        Target {
            name: "sci-switched",
            workload: "switched SCI, 4 rings x 8 hosts + crossbar agent, 64-byte sends, load 0.5, uniform, A/B aging",
            unit: "node-cycles",
            run: sci_switched,
        },
    ]
}
