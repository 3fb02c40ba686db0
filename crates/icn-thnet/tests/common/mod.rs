//! Set-ups the parallel-simulation tests share (`vc_threads.rs`, `spread_ranks.rs`).

use icn_router::vc_net::VcNetConfig;
use icn_thnet::vc_model::{OnDeadlock, VcRouterConfig};

/// A short `vc-router` run (200 warm-up, 800 measured, 1 500 drain cycles) whose deadlock is
/// reported in the metrics rather than as an error.
pub fn short_vc_run(topology: &str, routing: &str, vcs: usize, load: f64) -> VcRouterConfig {
    let mut net = VcNetConfig::on(topology);
    net.routing = routing.into();
    net.router.vcs = vcs;
    VcRouterConfig {
        net,
        load,
        warmup: 200,
        measure: 800,
        drain: 1_500,
        on_deadlock: OnDeadlock::Report,
        ..VcRouterConfig::default()
    }
}
