//! Helpers shared by the integration tests.
#![allow(dead_code)]

use icn_engine::model::NoProgress;
use icn_sci::config::{SciConfig, TrafficPattern};
use icn_sci::protocol::{Echo, Phase, Policy};
use icn_sci::ring::Event;
use icn_sci::ring::Sim;
use std::collections::HashMap;

/// A short run of `cfg`'s ring.
pub fn short(nodes: usize, load: f64, pattern: TrafficPattern) -> SciConfig {
    let mut cfg = SciConfig {
        nodes,
        load,
        warmup_cycles: 5_000,
        measure_cycles: 40_000,
        ..SciConfig::default()
    };
    cfg.traffic.pattern = pattern;
    cfg
}

/// Saturated hot spot: every node at full load, half of each node's sends to node 0.
pub fn saturated_hotspot(policy: Policy) -> SciConfig {
    let mut cfg = short(8, 1.0, TrafficPattern::Hotspot);
    cfg.receiver = policy;
    cfg.bandwidth_allocation = if std::env::var("BW").is_ok() {
        icn_sci::config::BandwidthAllocation::None
    } else {
        icn_sci::config::BandwidthAllocation::Sat
    };
    cfg.traffic.hotspot_fraction = 1.0;
    cfg.measure_cycles = 100_000;
    cfg
}

pub fn run(cfg: &SciConfig, seed: u64, intelligent: bool) -> Sim {
    icn_sci::simulate(cfg, seed, intelligent, &NoProgress).expect("run")
}

pub fn run_logged(cfg: &SciConfig, seed: u64, intelligent: bool) -> Sim {
    let mut sim = Sim::new(cfg, seed, intelligent).expect("valid config");
    sim.enable_log();
    sim.run(&NoProgress).expect("run");
    sim
}

/// Replays the event log and checks every send's life.
pub fn check_log(events: &[Event]) -> Result<(), String> {
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
