//! The `sci-switched` network kind: SCI rings joined by switches, A/B aging on every ring
//! hop and intelligent A/B aging machine-wide (docs/sci.md, "Switched SCI"), described once
//! by `model = "sci-switched"`'s [`SwitchedConfig`]. Its `[fabric]` keys are that model's
//! network keys with the same names, defaults, ranges and meaning (documented once:
//! [`crate::switched::config::doc::NET_KEYS`] and the ring's
//! [`crate::config::doc::RING_KEYS`]): `topology` (`ring-of-rings`, `grid`, `crossbar`,
//! `single`), `rings`, `grid_rows`, `grid_cols`, `remote_status`, `retry_order`,
//! `sat_quota`, `[fabric.switch]`, and `[fabric.ring]` with `nodes` (hosts per ring) and
//! every ring key of the `sci-ring` kind; the model's traffic and run lengths
//! ([`MODEL_ONLY`]) are refused by name. Hosts are numbered ring by ring (host `r × nodes +
//! k` is the k-th host of host ring r): the fabric's endpoints.

use super::keys::{self, ModelOnly, WORKLOAD};
use super::ring::check_transmitter;
use super::{SciFabric, SciNetwork};
use crate::config::Transmitter;
use crate::ring::sim::Outbox;
use crate::switched::{Prepared, SwitchedConfig, System, TopologyKind};
use icn_engine::Invalid;
use icn_engine::config::sections::toml;
use icn_fabric::Fabric;
use icn_fabric::kind::in_fabric;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The keys of `model = "sci-switched"` that are not the network's.
pub const MODEL_ONLY: &[ModelOnly] = &[
    ("local_fraction", WORKLOAD),
    ("hot_ring_sends", WORKLOAD),
    ("ring.load", WORKLOAD),
    ("ring.data_weights", WORKLOAD),
    ("ring.traffic", WORKLOAD),
    ("ring.warmup_cycles", WORKLOAD),
    ("ring.measure_cycles", WORKLOAD),
    ("ring.drain_limit_cycles", WORKLOAD),
];

/// `[fabric]` of `kind = "sci-switched"`: the `sci-switched` model's network keys
/// ([`SwitchedConfig`]); `topology` is kept as written (the cluster resolves and echoes
/// it) and read when prepared.
#[derive(Clone, Debug, PartialEq)]
pub struct SciSwitchedFabricConfig {
    /// `ring-of-rings`, `grid`, `crossbar` or `single`.
    pub topology: String,
    /// Every other key (its `topology` is set from the one above when prepared).
    pub net: SwitchedConfig,
}

impl Default for SciSwitchedFabricConfig {
    fn default() -> Self {
        SciSwitchedFabricConfig {
            topology: "ring-of-rings".into(),
            net: SwitchedConfig::default(),
        }
    }
}

impl Serialize for SciSwitchedFabricConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        keys::write(s, &self.topology, &self.net, MODEL_ONLY)
    }
}

impl<'de> Deserialize<'de> for SciSwitchedFabricConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (topology, net) = keys::read(d, MODEL_ONLY, |v| topology_kind(v.clone()).map(drop))?;
        Ok(SciSwitchedFabricConfig {
            topology: topology.unwrap_or_else(|| SciSwitchedFabricConfig::default().topology),
            net,
        })
    }
}

fn topology_kind(v: toml::Value) -> Result<TopologyKind, Invalid> {
    icn_engine::config::deserialize_at::<TopologyKind>(v).map_err(|e| Invalid {
        key: "topology".into(),
        ..e
    })
}

impl SciSwitchedFabricConfig {
    /// The system's config, checked, and its topology, with errors naming `fabric.*` keys.
    pub fn system(&self) -> Result<Prepared, Invalid> {
        let topology = topology_kind(self.topology.clone().into()).map_err(in_fabric)?;
        check_transmitter("fabric.ring.transmitter", self.net.ring.transmitter)?;
        let mut cfg = SwitchedConfig {
            topology,
            ..self.net.clone()
        };
        // The mix of sizes is the model's workload; a fabric's sends are of the largest.
        cfg.ring.data_weights = vec![1.0; cfg.ring.data_bytes.len()];
        Prepared::new(&cfg).map_err(in_fabric)
    }
}

impl icn_fabric::kind::NetworkKind for SciSwitchedFabricConfig {
    const NAME: &'static str = "sci-switched";
    type Prepared = Arc<Prepared>;

    fn topology(&self) -> &str {
        &self.topology
    }

    fn topology_mut(&mut self) -> &mut String {
        &mut self.topology
    }

    fn prepare(&self) -> Result<Arc<Prepared>, Invalid> {
        self.system().map(Arc::new)
    }

    fn endpoints(prepared: &Arc<Prepared>) -> usize {
        prepared.topo.hosts.len()
    }

    fn max_packet_bytes(&self) -> u64 {
        u64::from(self.net.ring.data_bytes.iter().copied().max().unwrap_or(0)).max(1)
    }

    fn build(
        &self,
        prepared: &Arc<Prepared>,
        seed: u64,
        _: usize,
        _: Option<Arc<dyn icn_engine::lockstep::Exchange>>,
    ) -> Result<Box<dyn Fabric>, Invalid> {
        Ok(Box::new(SciSwitchedFabric::new(prepared.clone(), seed)?))
    }
}

/// Rings joined by switches as a fabric.
pub type SciSwitchedFabric = SciFabric<System>;

impl SciFabric<System> {
    /// The system `prepared` describes, its transmitter `ring.transmitter` (`standard` or
    /// `intelligent`); `seed` seeds what the system draws (nothing the fabric uses: its
    /// traffic generators stay idle).
    pub fn new(prepared: Arc<Prepared>, seed: u64) -> Result<SciSwitchedFabric, Invalid> {
        check_transmitter("fabric.ring.transmitter", prepared.cfg.ring.transmitter)?;
        let ring = &prepared.cfg.ring;
        let (size_class, &max) = ring
            .data_bytes
            .iter()
            .enumerate()
            .max_by_key(|(_, b)| **b)
            .expect("validated: at least one size");
        let p = prepared.clone();
        let fresh = move || {
            let intelligent = p.cfg.ring.transmitter == Transmitter::Intelligent;
            let mut sys = System::new(&p.cfg, &p.topo, seed, intelligent).map_err(|e| {
                Invalid::new(
                    "fabric",
                    format!("cannot build the switched SCI system: {e}"),
                )
            })?;
            sys.drive_externally();
            Ok(sys)
        };
        SciFabric::over(Arc::new(fresh), size_class as u8, u32::from(max), "ring")
    }
}

/// The switched system, driven from outside ([`System::drive_externally`]).
impl SciNetwork for System {
    fn hosts(&self) -> usize {
        self.topology().hosts.len()
    }

    fn cycle(&self) -> u64 {
        self.now()
    }

    fn offer(&mut self, src: usize, dst: usize, size_class: u8, seq: u64) -> bool {
        System::offer(self, src, dst, size_class, seq)
    }

    fn queued(&self, src: usize) -> usize {
        self.host_queued(src)
    }

    fn queue_depth(&self) -> usize {
        self.rings()[0].send_queue_depth()
    }

    fn step(&mut self, outbox: &mut Vec<Outbox>) -> Result<(), String> {
        self.step_external(outbox);
        match self.fault() {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    fn settled(&self) -> bool {
        System::settled(self)
    }

    fn skip_settled(&mut self, cycles: u64) {
        System::skip_settled(self, cycles)
    }

    fn diagnose(&self) -> String {
        self.stuck()
    }

    /// Every pair its own class: a lone send's time depends on the rings and switches it
    /// crosses and on where on each ring it enters and leaves.
    fn route_class(&self, src: usize, dst: usize) -> (usize, usize) {
        (src, dst)
    }
}
