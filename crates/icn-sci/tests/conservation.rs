//! Conservation over thousands of small random configurations: every injected send is
//! accepted exactly once, every echo answers a transmission of the same send, retries carry
//! the phase their echo asked for, nothing is in flight after the drain, and every symbol put
//! on a link is taken off again.

mod common;

use icn_sci::config::{GenerationEndKind, SciConfig, TrafficPattern};
use icn_sci::protocol::Policy;
use icn_sci::ring::Event;
use proptest::prelude::*;

/// Random configurations of up to `max_nodes` nodes measured for `measure` cycles.
fn small_config(max_nodes: usize, measure: u64) -> impl Strategy<Value = (SciConfig, bool, u64)> {
    (
        (
            2usize..=max_nodes,
            0.02f64..=1.0,
            prop::sample::subsequence(vec![0u16, 16, 64, 256], 1..=4),
        ),
        (
            prop::sample::select(vec![Policy::NoAging, Policy::Ab, Policy::CountedAb]),
            any::<bool>(),
            1u64..300,
        ),
        (
            prop::sample::select(vec![
                TrafficPattern::Uniform,
                TrafficPattern::Hotspot,
                TrafficPattern::NeighborX,
            ]),
            0.0f64..=1.0,
        ),
        (
            1usize..=4,
            0usize..=4,
            0u64..=200,
            1usize..=4,
            1u32..=3,
            any::<bool>(),
        ),
        (any::<bool>(), any::<u64>()),
    )
        .prop_map(
            move |(
                (nodes, load, sizes),
                (receiver, quiet, window),
                (pattern, frac),
                (depth_or_unbounded, active, service, sendq, quota, crc_oh),
                (intelligent, seed),
            )| {
                let mut cfg = SciConfig {
                    nodes,
                    load,
                    receiver,
                    generation_end: if quiet {
                        GenerationEndKind::QuietWindow
                    } else {
                        GenerationEndKind::Counted
                    },
                    quiet_window: window,
                    data_weights: vec![1.0; sizes.len()],
                    data_bytes: sizes,
                    queue_depth: depth_or_unbounded.max(1),
                    unbounded_queue: depth_or_unbounded == 0,
                    active_buffers: active.max(1),
                    service_time: service,
                    send_queue_depth: sendq,
                    sat_quota: quota,
                    crc_outside_header: crc_oh,
                    warmup_cycles: 300,
                    measure_cycles: measure,
                    drain_limit_cycles: 500_000,
                    ..SciConfig::default()
                };
                cfg.traffic.pattern = pattern;
                cfg.traffic.hotspot_fraction = frac;
                cfg.traffic.hotspot_node = nodes - 1;
                (cfg, intelligent, seed)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_send_is_accepted_exactly_once((cfg, intelligent, seed) in small_config(8, 2_000)) {
        check_run(&cfg, intelligent, seed)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// The same on larger rings and longer windows (release mode: about a minute).
    #[test]
    #[ignore = "heavy: cargo test --release -p icn-sci --test conservation -- --ignored"]
    fn every_send_is_accepted_exactly_once_on_larger_rings((cfg, intelligent, seed) in small_config(16, 10_000)) {
        check_run(&cfg, intelligent, seed)?;
    }
}

fn check_run(cfg: &SciConfig, intelligent: bool, seed: u64) -> Result<(), TestCaseError> {
    {
        let sim = common::run_logged(cfg, seed, intelligent);
        prop_assert!(sim.quiescent());
        if let Err(e) = sim.check_quiescent_state() {
            return Err(TestCaseError::fail(e));
        }
        let (created, removed) = sim.symbol_totals();
        prop_assert_eq!(created, removed, "symbols put on links vs taken off");
        prop_assert_eq!(sim.injected(), sim.accepted_total());
        let events = sim.events();
        let created_sends = events
            .iter()
            .filter(|e| matches!(e, Event::Created { .. }))
            .count() as u64;
        prop_assert_eq!(created_sends, sim.injected());
        if let Err(e) = common::check_log(events) {
            return Err(TestCaseError::fail(e));
        }
    }
    Ok(())
}
