//! Simulation speed: `cargo run --release -p icn-thnet --example bench`.
//!
//! * X-Switch: 8×8 mesh, uniform traffic, 0.3 bytes/node/cycle → switch-cycles per second;
//! * VC router: 8×8 mesh, 5-flit packets, 0.3 flits/node/cycle → router-cycles per second.
//!
//! One thread; the whole replication (traffic generation and statistics included) is timed.

use icn_engine::Model;
use icn_engine::model::NoProgress;
use icn_thnet::vc_model::{VcRouter, VcRouterConfig};
use icn_thnet::xswitch_model::{XSwitch, XSwitchConfig};
use std::time::Instant;

fn main() {
    // `bench xswitch` or `bench vc` runs one of the two (e.g. under `perf stat`).
    let only = std::env::args().nth(1).unwrap_or_default();
    let cycles = std::env::var("BENCH_CYCLES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(200_000);
    if only != "vc" {
        xswitch(cycles);
    }
    if only != "xswitch" {
        vc(cycles);
    }
}

fn xswitch(cycles: u64) {
    let cfg = XSwitchConfig {
        topology: "mesh:8x8".into(),
        load: 0.3,
        warmup: 0,
        measure: cycles,
        drain: 0,
        ..XSwitchConfig::default()
    };
    let t = Instant::now();
    let m = XSwitch::run(&cfg, 1, &NoProgress).expect("runs");
    let s = t.elapsed().as_secs_f64();
    println!(
        "xswitch   mesh:8x8 load 0.3: {:5.1} M switch-cycles/s ({:.2} s; accepted {:.3} B/node/cycle)",
        64.0 * cycles as f64 / s / 1e6,
        s,
        m.value("accepted"),
    );
}

fn vc(cycles: u64) {
    let load = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0.3);
    let cfg = VcRouterConfig {
        topology: "mesh:8x8".into(),
        load,
        size: 5,
        warmup: 0,
        measure: cycles,
        drain: 0,
        ..VcRouterConfig::default()
    };
    let t = Instant::now();
    let m = VcRouter::run(&cfg, 1, &NoProgress).expect("runs");
    let s = t.elapsed().as_secs_f64();
    println!(
        "vc-router mesh:8x8 load {load}: {:5.1} M router-cycles/s ({:.2} s; accepted {:.3} flits/node/cycle, latency {:.1})",
        64.0 * cycles as f64 / s / 1e6,
        s,
        m.value("accepted"),
        m.value("latency_mean"),
    );
}
