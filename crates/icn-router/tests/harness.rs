//! The open-loop harness (`icn_fabric::harness`) on a VC-router fabric.

use icn_engine::metrics::Status;
use icn_engine::model::NoProgress;
use icn_fabric::Fabric;
use icn_fabric::harness::{OnDeadlock, OpenLoop, run_bounded};
use icn_fabric::traffic::{Grid, Sizes, TrafficConfig};
use icn_router::VcParams;
use icn_router::fabric::VcFabric;

/// A load past saturation over a long window grew the endpoint queues until memory ran
/// out; past the limit the replication stops, saturated, saying why.
#[test]
fn queues_past_the_limit_stop_the_replication_as_saturated() {
    let grid = Grid {
        x: 4,
        y: 4,
        wrap: false,
    };
    let traffic = TrafficConfig::default();
    let w = OpenLoop {
        load: 1.0,
        sizes: Sizes {
            size: 5,
            size_large: 5,
            large_fraction: 0.0,
        },
        traffic: &traffic,
        trace: &[],
        grid: Some(grid),
        warmup: 0,
        measure: 1 << 30,
        drain: 0,
        on_deadlock: OnDeadlock::Error,
    };
    let mut fabric = VcFabric::grid(grid, VcParams::unit_delays(2, 8, 20_000), 1, 1 << 16).unwrap();
    let m = run_bounded(&mut fabric, &w, 1, &NoProgress, |_, _, _| {}, 5_000).unwrap();
    let Status::Saturated(why) = &m.status else {
        panic!("{:?}", m.status);
    };
    assert!(
        why.contains("packets were waiting in the fabric")
            && why.contains("more than the limit of 5000"),
        "{why}"
    );
    assert!(
        fabric.now() < 1 << 20,
        "stopped early: cycle {}",
        fabric.now()
    );
}
