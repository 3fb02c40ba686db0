//! Times the bench set-up (`icn_sci::bench_config`): node-cycles per second on one core.
//!
//! `cargo run --release -p icn-sci --example sci_bench`

use icn_engine::model::NoProgress;
use icn_sci::{bench_config, simulate};
use std::time::Instant;

fn main() {
    let mut cfg = bench_config();
    cfg.warmup_cycles = 10_000;
    // `BENCH_CYCLES` shortens the run (e.g. under callgrind).
    cfg.measure_cycles = std::env::var("BENCH_CYCLES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(2_000_000);
    let start = Instant::now();
    let sim = simulate(&cfg, 1, false, &NoProgress).expect("bench run");
    let secs = start.elapsed().as_secs_f64();
    let node_cycles = sim.now() as f64 * cfg.nodes as f64;
    let m = sim.measure().metrics("", sim.now());
    println!(
        "{} cycles × {} nodes in {secs:.3} s: {:.1} M node-cycles/s (eta {:.3}, throughput {:.3} GB/s, delay mean {:.0} ns)",
        sim.now(),
        cfg.nodes,
        node_cycles / secs / 1e6,
        m.require("eta").unwrap(),
        m.require("throughput_gbps").unwrap(),
        m.require("delay_mean_ns").unwrap(),
    );
}
