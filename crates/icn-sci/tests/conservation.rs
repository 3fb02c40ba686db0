//! Conservation over thousands of small random configurations: every injected send is
//! accepted exactly once, every echo answers a transmission of the same send, retries carry
//! the phase their echo asked for, nothing is in flight after the drain, and every symbol put
//! on a link is taken off again.

mod common;

use icn_sci::config::{GenerationEndKind, Pattern, SciConfig};
use icn_sci::protocol::{Echo, Phase, Policy};
use icn_sci::ring::Event;
use proptest::prelude::*;
use std::collections::HashMap;

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
            prop::sample::select(vec![Pattern::Uniform, Pattern::Hotspot, Pattern::Neighbour]),
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

/// Replays the event log and checks every send's life.
fn check_log(events: &[Event]) -> Result<(), String> {
    #[derive(Default)]
    struct Life {
        created: bool,
        transmits: Vec<Phase>,
        stripped: Vec<Echo>,
        echoes: Vec<Echo>,
    }
    let mut lives: HashMap<u64, Life> = HashMap::new();
    for e in events {
        match *e {
            Event::Created { seq, .. } => {
                let l = lives.entry(seq).or_default();
                if l.created {
                    return Err(format!("send {seq} created twice"));
                }
                l.created = true;
            }
            Event::Transmit { seq, phase, .. } => {
                let l = lives.entry(seq).or_default();
                if l.transmits.len() != l.echoes.len() {
                    return Err(format!(
                        "send {seq} retransmitted before its echo came back"
                    ));
                }
                let want = match l.echoes.last() {
                    None => Phase::NoTry,
                    Some(Echo::BusyA) => Phase::RetryA,
                    Some(Echo::BusyB) => Phase::RetryB,
                    Some(Echo::Done) => return Err(format!("send {seq} transmitted after DONE")),
                };
                if phase != want {
                    return Err(format!(
                        "send {seq} transmitted with {phase:?}, expected {want:?}"
                    ));
                }
                l.transmits.push(phase);
            }
            Event::Stripped {
                seq, echo, phase, ..
            } => {
                let l = lives.entry(seq).or_default();
                if l.transmits.len() != l.stripped.len() + 1 || l.transmits.last() != Some(&phase) {
                    return Err(format!(
                        "send {seq} stripped without a matching transmission"
                    ));
                }
                l.stripped.push(echo);
            }
            Event::EchoReceived { seq, echo, .. } => {
                let l = lives.entry(seq).or_default();
                if l.stripped.get(l.echoes.len()) != Some(&echo) {
                    return Err(format!(
                        "send {seq}: echo {echo:?} does not match what the target answered"
                    ));
                }
                l.echoes.push(echo);
            }
            _ => {}
        }
    }
    for (seq, l) in &lives {
        let done = |v: &Vec<Echo>| v.iter().filter(|e| **e == Echo::Done).count();
        if !l.created
            || done(&l.stripped) != 1
            || done(&l.echoes) != 1
            || l.echoes.last() != Some(&Echo::Done)
        {
            return Err(format!(
                "send {seq}: created {}, accepted {} times, DONE received {} times",
                l.created,
                done(&l.stripped),
                done(&l.echoes)
            ));
        }
    }
    Ok(())
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
        if let Err(e) = check_log(events) {
            return Err(TestCaseError::fail(e));
        }
    }
    Ok(())
}
