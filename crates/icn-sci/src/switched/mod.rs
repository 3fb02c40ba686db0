//! Switched SCI (`model = "sci-switched"`): rings of hosts joined by switches, A/B aging on
//! every ring hop, and intelligent A/B aging machine-wide with serve status kept in the
//! switches (docs/sci.md, "Switched SCI").
//!
//! * [`config`]: the experiment keys;
//! * [`topology`]: rings, switches, hosts and routes (pure);
//! * [`system`]: the ring simulators stepped together and the switches between them;
//! * [`remote`]: the relay of serve status across switches.
//!
//! The rings are the crate's ring simulator ([`crate::ring::Sim`]) with switch agents
//! ([`crate::ring::sim::AgentParams`]); nothing of the ring or the protocol cores is copied.

pub mod config;
pub mod remote;
pub mod system;
pub mod topology;

pub use config::{Arbitration, RetryOrder, SwitchConfig, SwitchedConfig, TopologyKind};
pub use system::System;
pub use topology::Topology;

use crate::config::Transmitter;
use crate::ring::delays::Delays;
use crate::ring::measure::NS_PER_CYCLE;
use config::doc;
use icn_engine::doc::Output;
use icn_engine::{Invalid, Metrics, Model, ModelError, Progress, Status};

/// The switched SCI model.
pub struct SciSwitched;

/// A validated point: the config and its topology.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub cfg: SwitchedConfig,
    pub topo: Topology,
}

impl Prepared {
    /// Checks every key (each ring's protocol keys with the ring's real size) and builds
    /// the topology: what the model and the cluster's `sci-switched` fabric run on.
    pub fn new(cfg: &SwitchedConfig) -> Result<Prepared, Invalid> {
        cfg.validate_fields()?;
        let topo = Topology::build(cfg)?;
        for layout in &topo.rings {
            let mut rc = crate::config::SciConfig {
                nodes: layout.nodes(),
                ..cfg.ring.clone()
            };
            rc.traffic.pattern = crate::config::TrafficPattern::Uniform;
            rc.traffic.hotspot_node = 0;
            rc.validate().map_err(|e| Invalid {
                key: format!("ring.{}", e.key),
                ..e
            })?;
        }
        Invalid::check(
            cfg.ring.traffic.hotspot_node < topo.hosts.len(),
            "ring.traffic.hotspot_node",
            &format!("0 ..= {} (hosts − 1)", topo.hosts.len() - 1),
            cfg.ring.traffic.hotspot_node,
        )?;
        check_queues_fit(cfg, &topo, icn_engine::memory::available_memory())?;
        Ok(Prepared {
            cfg: cfg.clone(),
            topo,
        })
    }
}

/// Each ring's own check counts its queues; together, every node's send and input queues at
/// their full depths (≈ 32 bytes a send, as for one ring) and every agent's switch queue
/// must fit in `available` bytes, or the system is refused naming `ring.send_queue_depth`.
fn check_queues_fit(cfg: &SwitchedConfig, topo: &Topology, available: u64) -> Result<(), Invalid> {
    let nodes: usize = topo.rings.iter().map(|l| l.nodes()).sum();
    let input = if cfg.ring.unbounded_queue {
        0
    } else {
        cfg.ring.queue_depth as u128
    };
    let depth = cfg.ring.send_queue_depth as u128 + input + cfg.switch.queue_depth as u128;
    icn_engine::memory::check_fits(
        "ring.send_queue_depth",
        &format!(
            "queues of {depth} sends per node ({nodes} nodes on {} rings) when full",
            topo.rings.len()
        ),
        32 * depth * nodes as u128,
        available,
    )
}

/// The configuration `icnlab bench sci-switched` times: 4 host rings of 8 hosts around a
/// crossbar, load 0.5, uniform destinations, standard A/B aging.
pub fn bench_config() -> SwitchedConfig {
    let mut cfg = SwitchedConfig {
        topology: TopologyKind::Crossbar,
        rings: 4,
        ..SwitchedConfig::default()
    };
    cfg.ring.load = 0.5;
    cfg.ring.traffic.pattern = crate::config::TrafficPattern::Uniform;
    cfg
}

/// Runs one transmitter and returns the system after the drain.
pub fn simulate(
    prep: &Prepared,
    seed: u64,
    intelligent: bool,
    progress: &dyn Progress,
) -> Result<System, ModelError> {
    let mut sys = System::new(&prep.cfg, &prep.topo, seed, intelligent)?;
    sys.run(progress)?;
    Ok(sys)
}

/// As [`simulate`], but a drain that reaches `drain_limit_cycles` is the replication's status
/// rather than an error (like `model = "sci"`): the other replications still count.
fn simulate_with_status(
    prep: &Prepared,
    seed: u64,
    intelligent: bool,
    progress: &dyn Progress,
) -> Result<(System, Status), ModelError> {
    let mut sys = System::new(&prep.cfg, &prep.topo, seed, intelligent)?;
    match sys.run(progress) {
        Ok(()) => Ok((sys, Status::Ok)),
        Err(ModelError::Failed(why)) if !sys.quiescent() && sys.fault().is_none() => {
            Ok((sys, Status::DrainLimit(why)))
        }
        Err(e) => Err(e),
    }
}

/// The system's metrics: the same names and meanings as `model = "sci"` over the hosts (η and
/// throughput count sends accepted at their final target, per host link; delays run from
/// creation to the DONE of the final hop), plus the switched-only ones.
pub fn metrics_of(sys: &System, suffix: &str) -> Metrics {
    let measure = sys.measure();
    let mut m = measure.metrics(suffix, sys.now());
    if sys.rings().len() == 1 {
        // The degenerate system: exactly the `sci` metrics.
        return m;
    }
    let x = sys.extra();
    let capacity = measure.nodes as f64 * measure.cycles as f64;
    let mean_ns = |d: &Delays| Delays::summarise([d]).mean * NS_PER_CYCLE;
    let mut put = |o: &Output, value: f64| {
        m.put_suffixed(o, suffix, value);
    };
    put(&doc::ETA_LOCAL, x.symbols_local as f64 / capacity);
    put(&doc::ETA_REMOTE, x.symbols_remote as f64 / capacity);
    put(&doc::DELAY_LOCAL_MEAN_NS, mean_ns(&x.delay_local));
    put(&doc::DELAY_REMOTE_MEAN_NS, mean_ns(&x.delay_remote));
    let acc = Delays::summarise([&x.accept_delay]);
    put(&doc::ACCEPT_DELAY_MEAN_NS, acc.mean * NS_PER_CYCLE);
    put(&doc::ACCEPT_DELAY_P99_NS, acc.p99 * NS_PER_CYCLE);
    let (jain_remote, remote_share) = sys.remote_hotspot_fairness();
    put(&doc::HOTSPOT_JAIN_REMOTE, jain_remote);
    put(&doc::HOTSPOT_REMOTE_SHARE, remote_share);
    put(&doc::FORWARDED, x.forwarded as f64);
    put(&doc::SWITCH_BLOCKED_CYCLES, x.blocked_agent_cycles as f64);
    put(&doc::RELAYED_NOTIFIES, x.relayed as f64);
    put(&doc::RELAYED_SYMBOLS, x.relayed_symbols as f64);
    m
}

impl Model for SciSwitched {
    const NAME: &'static str = "sci-switched";
    const DOC: &'static icn_engine::ModelDoc = &config::doc::DOC;
    const ABOUT: &'static str =
        "SCI rings joined by switches: A/B aging per hop vs intelligent A/B aging machine-wide";
    type Config = SwitchedConfig;
    type Prepared = Prepared;

    fn validate(cfg: &SwitchedConfig) -> Result<(), Invalid> {
        Self::prepare(cfg, &icn_engine::Context::default()).map(|_| ())
    }

    fn work(cfg: &SwitchedConfig) -> u64 {
        let one = cfg.ring.warmup_cycles + cfg.ring.measure_cycles;
        if cfg.ring.transmitter == Transmitter::Compare {
            2 * one
        } else {
            one
        }
    }

    fn prepare(cfg: &SwitchedConfig, _ctx: &icn_engine::Context) -> Result<Prepared, Invalid> {
        Prepared::new(cfg)
    }

    fn run_prepared(
        prep: &Prepared,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<Metrics, ModelError> {
        let single = |intelligent| -> Result<Metrics, ModelError> {
            let (sys, status) = simulate_with_status(prep, seed, intelligent, progress)?;
            Ok(Metrics {
                status,
                ..metrics_of(&sys, "")
            })
        };
        match prep.cfg.ring.transmitter {
            Transmitter::Standard => single(false),
            Transmitter::Intelligent => single(true),
            Transmitter::Compare => {
                let (std, std_status) = simulate_with_status(prep, seed, false, progress)?;
                let (iab, iab_status) = simulate_with_status(prep, seed, true, progress)?;
                let (ms, mi) = (metrics_of(&std, "_std"), metrics_of(&iab, "_iab"));
                let mut m = crate::compare_metrics(
                    ms,
                    mi,
                    std.now() + iab.now(),
                    [std_status, iab_status],
                )?;
                if prep.topo.rings.len() > 1 {
                    let ratio = |a: &str| -> Result<f64, icn_engine::metrics::UnknownMetric> {
                        Ok(m.require(&format!("{a}_iab"))? / m.require(&format!("{a}_std"))?)
                    };
                    let (rl, rr) = (ratio("eta_local")?, ratio("eta_remote")?);
                    let (dl, dr) = (
                        ratio("delay_local_mean_ns")?,
                        ratio("delay_remote_mean_ns")?,
                    );
                    m.put(&doc::R_LOCAL, rl);
                    m.put(&doc::R_REMOTE, rr);
                    m.put(&doc::DELAY_RATIO_LOCAL, dl);
                    m.put(&doc::DELAY_RATIO_REMOTE, dr);
                    let entries = remote::Relay::new(&prep.topo).entries();
                    m.put(
                        &doc::SWITCH_STATUS_BITS,
                        (2 * entries) as f64 / prep.topo.switches.len() as f64,
                    );
                }
                Ok(m)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sixteen rings of 15 hosts and a backbone (240 hosts, 272 nodes on 17 rings) with
    /// queues of 10^6 sends: one ring's queues take 1 GB, the whole system's ≈ 17 GB, refused
    /// in 8 GB naming `ring.send_queue_depth`; at the default depths (76 sends a node: 0.7 MB)
    /// it fits in 1 MB.
    #[test]
    fn the_queues_of_every_ring_together_must_fit() {
        let mut cfg = SwitchedConfig {
            rings: 16,
            ..SwitchedConfig::default()
        };
        cfg.ring.nodes = 15;
        let topo = Topology::build(&cfg).unwrap();
        check_queues_fit(&cfg, &topo, 1 << 20).unwrap();
        cfg.ring.send_queue_depth = 1_000_000;
        cfg.ring.queue_depth = 1_000_000;
        let e = check_queues_fit(&cfg, &topo, 8 << 30).unwrap_err();
        assert_eq!(e.key, "ring.send_queue_depth");
        assert!(e.message.contains("272 nodes on 17 rings"), "{}", e.message);
    }
}
