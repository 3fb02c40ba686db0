//! Simulation speed: `cargo run --release -p icn-thnet --example bench`.
//!
//! X-Switch: 8×8 mesh, uniform traffic, 0.3 bytes/node/cycle → switch-cycles per second.

use icn_engine::Model;
use icn_engine::model::NoProgress;
use icn_thnet::xswitch_model::{XSwitch, XSwitchConfig};
use std::time::Instant;

fn main() {
    let cfg = XSwitchConfig {
        topology: "mesh:8x8".into(),
        load: 0.3,
        warmup: 0,
        measure: 200_000,
        drain: 0,
        ..XSwitchConfig::default()
    };
    let t = Instant::now();
    let m = XSwitch::run(&cfg, 1, &NoProgress).expect("runs");
    let s = t.elapsed().as_secs_f64();
    let switch_cycles = 64.0 * cfg.measure as f64;
    println!(
        "xswitch mesh:8x8 load 0.3: {:.1} M switch-cycles/s ({:.2} s, accepted {:.3}, latency {:.0})",
        switch_cycles / s / 1e6,
        s,
        m.value("accepted"),
        m.value("latency_mean")
    );
}
