//! The `[fabric]` table of `kind = "vc-router"` (a cluster model's fabric): its keys and
//! defaults, its checks, and what a replication's fabric is built from. It lives here, beside
//! the fabric, so that a key is added in this crate only; the cluster reads `kind` and then
//! this struct, whose `deny_unknown_fields` refuses a key of another kind.
//!
//! It takes every topology spelling the any-radix VC router knows (`fattree:K,N`,
//! `dragonfly:P`, `hypercube:D`, `torus:4x4x4`, `mesh:8x8,2`, `graph:ccc:4,3`, `crossbar:N`,
//! ... of `icn_topo::parse_network_spec`). Before anything runs, the routing is checked for
//! channel-dependency cycles ([`crate::vc_net::check_deadlock_free`]): a network that can
//! deadlock is refused at once instead of after a watchdog's million cycles.

use crate::fabric::VcFabric;
use crate::vc_net::{VcNetConfig, VcPrepared};
use icn_engine::Invalid;
use icn_engine::lockstep::Exchange;
use icn_fabric::kind::{NetworkKind, check_queue, cycle_ps, in_fabric, thread_count};
use icn_fabric::{Fabric, Ps};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `window` of `vc-router` by default: 64 packets in flight per endpoint.
pub const DEFAULT_VC_WINDOW: usize = 64;

/// `[fabric]` keys of `kind = "vc-router"`: the `vc-router` kind's one description
/// ([`VcNetConfig`]: every network key of `model = "vc-router"`, with its defaults, ranges
/// and checks) and the clock and flit size that turn its cycles and flits into time and
/// bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, default)]
pub struct VcFabricConfig {
    /// The network: topology, routing, routers.
    #[serde(skip)]
    pub net: VcNetConfig,
    /// Clock, MHz.
    pub clock_mhz: f64,
    /// Bytes per flit, largest packet in flits.
    pub flit_bytes: u32,
    pub max_packet_flits: u32,
    /// Packets an endpoint may have in flight before it refuses more (rule 4 of the fabric
    /// interface: the NIC holds its DMA), 0 = unbounded; 1 ..= 2^20.
    pub window: usize,
}

icn_engine::config_sections!(VcFabricConfig, sections first: net: VcNetConfig);

impl Default for VcFabricConfig {
    fn default() -> Self {
        VcFabricConfig {
            net: VcNetConfig::default(),
            clock_mhz: 160.0,
            flit_bytes: 16,
            max_packet_flits: 64,
            window: DEFAULT_VC_WINDOW,
        }
    }
}

/// The keys [`VcFabricConfig`] adds to the network's ([`crate::vc_net::KEYS`]).
pub const VC_FABRIC_KEYS: &[icn_engine::doc::Key] = &[
    icn_engine::doc::key("clock_mhz", "MHz", "router clock"),
    icn_engine::doc::key("flit_bytes", "bytes", "bytes per flit"),
    icn_engine::doc::key("max_packet_flits", "flits", "largest packet"),
];

impl VcFabricConfig {
    pub fn cycle_ps(&self) -> Result<Ps, Invalid> {
        cycle_ps(self.clock_mhz)
    }

    /// The threads key with 0 resolved to the machine's cores.
    pub fn thread_count(&self) -> usize {
        thread_count(self.net.threads)
    }

    /// Largest packet payload, bytes.
    pub fn max_packet_bytes(&self) -> u64 {
        u64::from(self.flit_bytes) * u64::from(self.max_packet_flits)
    }

    /// Checks the keys and builds the network once for every replication: the network as
    /// `model = "vc-router"` prepares it ([`VcNetConfig::prepare`]), errors named
    /// `fabric.KEY`.
    pub fn prepare(&self) -> Result<VcPrepared, Invalid> {
        self.cycle_ps()?;
        check_queue("fabric.window", "packets", self.window)?;
        Invalid::check(
            (1..=4096).contains(&self.flit_bytes),
            "fabric.flit_bytes",
            "1 ..= 4096",
            self.flit_bytes,
        )?;
        Invalid::check(
            (1..=65_536).contains(&self.max_packet_flits),
            "fabric.max_packet_flits",
            "1 ..= 65536",
            self.max_packet_flits,
        )?;
        let net = self.net.prepare().map_err(in_fabric)?;
        Invalid::check(
            self.thread_count() <= net.routers(),
            "fabric.threads",
            "at most one thread per router",
            self.thread_count(),
        )?;
        Ok(net)
    }

    /// A replication's fabric on the prepared network; `seed` (the replication's) seeds the
    /// routers' random routing choices.
    pub fn build(
        &self,
        prepared: &VcPrepared,
        seed: u64,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<VcFabric, Invalid> {
        let mut f = VcFabric::build(&self.net.spec(
            prepared,
            seed,
            threads,
            ranks,
            self.cycle_ps()?,
            self.flit_bytes,
            self.max_packet_flits,
        ))?;
        f.set_window(self.window);
        Ok(f)
    }
}

#[cfg(test)]
mod tests;

impl NetworkKind for VcFabricConfig {
    const NAME: &'static str = "vc-router";
    type Prepared = VcPrepared;

    fn topology(&self) -> &str {
        &self.net.topology
    }

    fn topology_mut(&mut self) -> &mut String {
        &mut self.net.topology
    }

    fn prepare(&self) -> Result<VcPrepared, Invalid> {
        VcFabricConfig::prepare(self)
    }

    fn endpoints(p: &VcPrepared) -> usize {
        p.endpoints()
    }

    fn routers(p: &VcPrepared) -> usize {
        p.routers()
    }

    fn threads(&self) -> Option<usize> {
        Some(self.net.threads)
    }

    fn max_packet_bytes(&self) -> u64 {
        VcFabricConfig::max_packet_bytes(self)
    }

    fn build(
        &self,
        p: &VcPrepared,
        seed: u64,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<Box<dyn Fabric>, Invalid> {
        Ok(Box::new(VcFabricConfig::build(
            self, p, seed, threads, ranks,
        )?))
    }
}
