//! Bandwidth allocation: pure register insertion (`none`) livelocks under A/B aging with a hot
//! spot, and the run ends with a diagnosis instead of hanging; SAT drains the same traffic.

mod common;

use icn_engine::ModelError;
use icn_engine::model::NoProgress;
use icn_sci::config::{BandwidthAllocation, SciConfig, TrafficPattern};

fn hot_ring(bandwidth_allocation: BandwidthAllocation) -> SciConfig {
    SciConfig {
        bandwidth_allocation,
        measure_cycles: 20_000,
        warmup_cycles: 2_000,
        drain_limit_cycles: 50_000,
        ..common::short(8, 0.5, TrafficPattern::Hotspot)
    }
}

#[test]
fn pure_register_insertion_livelocks_and_says_why() {
    let err = icn_sci::simulate(&hot_ring(BandwidthAllocation::None), 1, false, &NoProgress)
        .err()
        .expect("observed: the drain never finishes without bandwidth allocation");
    let ModelError::Failed(msg) = err else {
        panic!("expected a run failure, got {err:?}");
    };
    assert!(
        msg.contains("drain did not finish within drain_limit_cycles = 50000"),
        "{msg}"
    );
    assert!(
        msg.contains("sends still outstanding") && msg.contains("reservations"),
        "{msg}"
    );
    assert!(msg.contains("livelock"), "{msg}");
}

#[test]
fn sat_drains_the_same_traffic() {
    let sim =
        icn_sci::simulate(&hot_ring(BandwidthAllocation::Sat), 1, false, &NoProgress).unwrap();
    assert!(sim.quiescent());
    assert_eq!(sim.injected(), sim.accepted_total());
}

/// Issue 14: through the `Model` interface the same livelock is the replication's status
/// (drain limit, with the diagnosis), not an error that would discard the whole sweep.
#[test]
fn a_drain_at_its_limit_is_a_flagged_replication() {
    use icn_engine::{Model, Status};
    let m = icn_sci::Sci::run(&hot_ring(BandwidthAllocation::None), 1, &NoProgress).unwrap();
    let Status::DrainLimit(why) = &m.status else {
        panic!("expected a drain-limit status, got {:?}", m.status);
    };
    assert!(why.contains("drain did not finish"), "{why}");
    let ok = icn_sci::Sci::run(&hot_ring(BandwidthAllocation::Sat), 1, &NoProgress).unwrap();
    assert!(ok.status.is_ok(), "{:?}", ok.status);
}
