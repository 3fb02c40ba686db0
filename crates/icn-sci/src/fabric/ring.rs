//! The `sci-ring` network kind: one SCI ring, described once by `model = "sci"`'s
//! [`SciConfig`]. Its `[fabric]` keys are that model's ring keys, with the same names,
//! defaults, ranges and meaning (documented once: [`crate::config::doc::RING_KEYS`]) —
//! `transmitter`, `receiver`, `generation_end`, `quiet_window`, `active_buffers`,
//! `queue_depth`, `unbounded_queue`, `service_time`, `send_queue_depth`, `data_bytes`,
//! `crc_outside_header`, `bandwidth_allocation`, `sat_quota` — and `topology = "ring:N"`
//! in place of the model's `nodes`; the model's traffic and run lengths ([`MODEL_ONLY`])
//! are refused by name.

use super::keys::{self, ModelOnly, WORKLOAD};
use super::{SciFabric, SciNetwork};
use crate::config::{SciConfig, Transmitter};
use crate::protocol::Policy;
use crate::ring::Sim;
use crate::ring::sim::{AgentParams, Outbox};
use icn_engine::Invalid;
use icn_fabric::Fabric;
use icn_fabric::kind::in_fabric;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The keys of `model = "sci"` that are not the ring's.
pub const MODEL_ONLY: &[ModelOnly] = &[
    (
        "nodes",
        "is the model's ring size; a fabric's is `topology = \"ring:N\"`",
    ),
    ("load", WORKLOAD),
    ("data_weights", WORKLOAD),
    ("traffic", WORKLOAD),
    ("warmup_cycles", WORKLOAD),
    ("measure_cycles", WORKLOAD),
    ("drain_limit_cycles", WORKLOAD),
];

/// `[fabric]` of `kind = "sci-ring"`: the ring `topology = "ring:N"` names, every other key
/// the `sci` model's ([`SciConfig`], its ring keys only).
#[derive(Clone, Debug, PartialEq)]
pub struct SciRingFabricConfig {
    /// `ring:N`, 2 ≤ N ≤ 64.
    pub topology: String,
    /// The ring's keys (its `nodes` is set from `topology` when prepared).
    pub ring: SciConfig,
}

impl Default for SciRingFabricConfig {
    fn default() -> Self {
        SciRingFabricConfig {
            topology: "ring:4".into(),
            ring: SciConfig::default(),
        }
    }
}

impl Serialize for SciRingFabricConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        keys::write(s, &self.topology, &self.ring, MODEL_ONLY)
    }
}

impl<'de> Deserialize<'de> for SciRingFabricConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (topology, ring) = keys::read(d, MODEL_ONLY, |v| {
            icn_engine::config::deserialize_at::<String>(v.clone())
                .map(drop)
                .map_err(|e| Invalid {
                    key: "topology".into(),
                    ..e
                })
        })?;
        Ok(SciRingFabricConfig {
            topology: topology.unwrap_or_else(|| SciRingFabricConfig::default().topology),
            ring,
        })
    }
}

impl SciRingFabricConfig {
    /// The ring `topology = "ring:N"` names with the ring keys, checked, with errors naming
    /// `fabric.*` keys.
    pub fn ring(&self) -> Result<SciConfig, Invalid> {
        let nodes = self
            .topology
            .strip_prefix("ring:")
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| {
                Invalid::new(
                    "fabric.topology",
                    format!("the SCI ring needs ring:N, got `{}`", self.topology),
                )
            })?;
        check_transmitter("fabric.transmitter", self.ring.transmitter)?;
        let cfg = SciConfig {
            nodes,
            // The mix of sizes is the model's workload; a fabric's sends are of the largest.
            data_weights: vec![1.0; self.ring.data_bytes.len()],
            ..self.ring.clone()
        };
        cfg.validate().map_err(|e| match e.key.as_str() {
            "nodes" => Invalid {
                key: "fabric.topology".into(),
                ..e
            },
            _ => in_fabric(e),
        })?;
        Ok(cfg)
    }

    /// A replication's ring.
    pub fn build(&self) -> Result<SciRingFabric, Invalid> {
        let cfg = self.ring()?;
        SciRingFabric::new(&cfg, cfg.transmitter == Transmitter::Intelligent)
    }
}

/// A fabric runs one transmitter: `compare` is the model's two runs.
pub(super) fn check_transmitter(key: &str, t: Transmitter) -> Result<(), Invalid> {
    Invalid::check(
        t != Transmitter::Compare,
        key,
        "`standard` or `intelligent` (`compare` is the open-loop model's two runs)",
        "compare",
    )
}

impl icn_fabric::kind::NetworkKind for SciRingFabricConfig {
    const NAME: &'static str = "sci-ring";
    type Prepared = usize;

    fn topology(&self) -> &str {
        &self.topology
    }

    fn topology_mut(&mut self) -> &mut String {
        &mut self.topology
    }

    fn prepare(&self) -> Result<usize, Invalid> {
        Ok(self.ring()?.nodes)
    }

    fn endpoints(n: &usize) -> usize {
        *n
    }

    fn max_packet_bytes(&self) -> u64 {
        u64::from(self.ring.data_bytes.iter().copied().max().unwrap_or(0)).max(1)
    }

    fn build(
        &self,
        _: &usize,
        _: u64,
        _: usize,
        _: Option<Arc<dyn icn_engine::lockstep::Exchange>>,
    ) -> Result<Box<dyn Fabric>, Invalid> {
        Ok(Box::new(SciRingFabricConfig::build(self)?))
    }
}

/// One SCI ring as a fabric.
pub type SciRingFabric = SciFabric<Sim>;

impl SciFabric<Sim> {
    /// A ring as `cfg` describes it (nodes, sizes, queues, allocation); its traffic keys
    /// and `transmitter` are not used (`intelligent` picks the transmitter).
    pub fn new(cfg: &SciConfig, intelligent: bool) -> Result<SciRingFabric, Invalid> {
        cfg.validate()?;
        let (size_class, &max) = cfg
            .data_bytes
            .iter()
            .enumerate()
            .max_by_key(|(_, b)| **b)
            .expect("validated: at least one size");
        let cfg = cfg.clone();
        let fresh = move || {
            let params = AgentParams {
                depth: 1,
                service_time: 0,
                policy: Policy::default(),
                sat_quota: 1,
                order: crate::switched::RetryOrder::Oldest,
            };
            Sim::new_switched(&cfg, 1, intelligent, &vec![false; cfg.nodes], params)
                .map_err(|e| Invalid::new("fabric", format!("cannot build the SCI ring: {e}")))
        };
        SciFabric::over(Arc::new(fresh), size_class as u8, u32::from(max), "node")
    }
}

/// The ring simulator with no switch agents, driven from outside.
impl SciNetwork for Sim {
    fn hosts(&self) -> usize {
        self.nodes()
    }

    fn cycle(&self) -> u64 {
        self.now()
    }

    fn offer(&mut self, src: usize, dst: usize, size_class: u8, seq: u64) -> bool {
        self.inject_created(src as u8, dst as u8, size_class, seq, u16::MAX)
    }

    fn queued(&self, src: usize) -> usize {
        self.send_queued(src)
    }

    fn queue_depth(&self) -> usize {
        self.send_queue_depth()
    }

    fn step(&mut self, outbox: &mut Vec<Outbox>) -> Result<(), String> {
        self.advance(1, false);
        if let Some(f) = self.fault() {
            return Err(format!("ring: {f}"));
        }
        self.drain_outbox(outbox);
        Ok(())
    }

    fn settled(&self) -> bool {
        Sim::settled(self)
    }

    fn skip_settled(&mut self, cycles: u64) {
        Sim::skip_settled(self, cycles)
    }

    fn diagnose(&self) -> String {
        Sim::diagnose(self)
    }

    /// A fresh ring's nodes are alike: a lone send's timing depends on how far downstream
    /// its target is.
    fn route_class(&self, src: usize, dst: usize) -> (usize, usize) {
        let n = self.nodes();
        ((dst + n - src) % n, 0)
    }
}
