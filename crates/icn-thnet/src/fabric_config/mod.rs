//! The `[fabric]` table of `kind = "xswitch"` (a cluster model's fabric): its keys and
//! defaults, its checks, and what a replication's fabric is built from. It lives here, beside
//! the fabric, so that a key is added in this crate only; the cluster reads `kind` and then
//! this struct (or another kind's, e.g. `icn_router::fabric_config::VcFabricConfig`), whose
//! `deny_unknown_fields` refuses a key of another kind.
//!
//! It takes the X-Switch's own topologies (`star`, `tree:D`, `ccc:H,K`, `file:PATH`, ...);
//! the X-Switch's 5 ports refuse networks of larger routers by name. Before anything runs,
//! the X-Switch's source routes are checked for the pairs a workload uses
//! ([`crate::topology::Topology::dependency_cycle`]): a network that can deadlock is refused
//! at once instead of after a watchdog's million cycles.

use crate::fabric::XSwitchFabric;
use crate::topology::Topology;
use crate::xswitch_net::XSwitchNetConfig;
use icn_engine::Invalid;
use icn_engine::lockstep::Exchange;
use icn_fabric::kind::{NetworkKind, check_queue, cycle_ps, in_fabric, thread_count};
use icn_fabric::{Fabric, Ps};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `[fabric]` keys of `kind = "xswitch"`: X-NIAs over X-Switches, source-routed. The network
/// is the `xswitch` kind's one description ([`XSwitchNetConfig`]: every network key of
/// `model = "xswitch"`, with its defaults, ranges and checks); the clock turns its cycles
/// into time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, default)]
pub struct XSwitchFabricConfig {
    /// The network: topology, switches, links, NIAs.
    #[serde(skip)]
    pub net: XSwitchNetConfig,
    /// Clock, MHz (a link moves 1 byte per cycle).
    pub clock_mhz: f64,
    /// Run even when the routes the workload uses have a cycle of channel dependencies (the
    /// watchdog still reports a deadlock that happens).
    pub allow_deadlock: bool,
    /// Messages an X-NIA's send queue holds before it refuses more (rule 4 of the fabric
    /// interface: the NIC holds its DMA), 0 = unbounded; 1 ..= 2^20.
    pub nia_queue: usize,
}

/// `nia_queue` by default: 16 messages (64 KiB of the NICs' 4 KiB packets), an assumption
/// (no THNPC-II paper gives the X-NIA's queue depth) deep enough that a lone stream never
/// waits for it.
pub const DEFAULT_NIA_QUEUE: usize = 16;

icn_engine::config_sections!(XSwitchFabricConfig, sections first: net: XSwitchNetConfig);

impl Default for XSwitchFabricConfig {
    fn default() -> Self {
        XSwitchFabricConfig {
            net: XSwitchNetConfig::default(),
            clock_mhz: 160.0,
            allow_deadlock: false,
            nia_queue: DEFAULT_NIA_QUEUE,
        }
    }
}

/// The keys [`XSwitchFabricConfig`] adds to the network's ([`crate::xswitch_net::KEYS`]).
pub const XSWITCH_FABRIC_KEYS: &[icn_engine::doc::Key] = &[
    icn_engine::doc::key("clock_mhz", "MHz", "clock (a link moves 1 byte per cycle)"),
    icn_engine::doc::key(
        "allow_deadlock",
        "",
        "run even when the routes the workload uses have a cycle of channel dependencies (the watchdog still reports a deadlock)",
    ),
    icn_engine::doc::key(
        "nia_queue",
        "messages",
        "messages an X-NIA's send queue holds before the fabric refuses more and the NIC holds its DMA (0: unbounded)",
    ),
];

impl XSwitchFabricConfig {
    pub fn cycle_ps(&self) -> Result<Ps, Invalid> {
        cycle_ps(self.clock_mhz)
    }

    /// Checks the keys and builds the topology (`file:` paths already resolved by the
    /// caller), once for every replication: the network as `model = "xswitch"` prepares it
    /// ([`XSwitchNetConfig::prepare`]), errors named `fabric.KEY`.
    pub fn prepare(&self) -> Result<Topology, Invalid> {
        self.cycle_ps()?;
        check_queue("fabric.nia_queue", "messages", self.nia_queue)?;
        let threads = self.thread_count();
        let (t, _) = self
            .net
            .prepare(|t| {
                Invalid::check(
                    threads <= t.switches,
                    "threads",
                    "0 (every core) ..= 1024, at most one thread per switch",
                    self.net.threads,
                )
                .map(|()| threads)
            })
            .map_err(in_fabric)?;
        Ok(t)
    }

    /// Refuses `topo` (from [`XSwitchFabricConfig::prepare`]) if the source routes of the
    /// endpoint pairs `pairs` can deadlock, unless `allow_deadlock` is set.
    pub fn check_deadlock(
        &self,
        topo: &Topology,
        pairs: &mut dyn Iterator<Item = (usize, usize)>,
    ) -> Result<(), Invalid> {
        if self.allow_deadlock {
            return Ok(());
        }
        match topo.dependency_cycle(pairs) {
            Ok(None) => Ok(()),
            Ok(Some(cycle)) => Err(Invalid::new(
                "fabric.topology",
                format!(
                    "the X-Switches' source routes on `{}` can deadlock: the routes this \
                     workload uses make a cycle of {} channel dependencies, each output \
                     port requested by frames holding the one before: {}; then the first \
                     again. Place the ranks differently, pick a network whose routes have no \
                     cycle (a mesh), or set fabric.allow_deadlock = true to run it anyway",
                    self.net.topology,
                    cycle.len(),
                    cycle.join(" → ")
                ),
            )),
            // Too many routes to follow before the run: the watchdog stays the guard.
            Err(_) => Ok(()),
        }
    }

    /// A replication's fabric on the prepared topology.
    pub fn build(
        &self,
        topo: &Topology,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<XSwitchFabric, Invalid> {
        let mut f = XSwitchFabric::spread(
            topo.clone(),
            self.net.switch.clone(),
            threads,
            ranks,
            self.cycle_ps()?,
        )?;
        f.set_nia_queue(self.nia_queue);
        Ok(f)
    }

    /// The threads key with 0 resolved to the machine's cores.
    pub fn thread_count(&self) -> usize {
        thread_count(self.net.threads)
    }
}

#[cfg(test)]
mod tests;

impl NetworkKind for XSwitchFabricConfig {
    const NAME: &'static str = "xswitch";
    type Prepared = Topology;

    fn topology(&self) -> &str {
        &self.net.topology
    }

    fn topology_mut(&mut self) -> &mut String {
        &mut self.net.topology
    }

    fn prepare(&self) -> Result<Topology, Invalid> {
        XSwitchFabricConfig::prepare(self)
    }

    fn endpoints(t: &Topology) -> usize {
        t.nias()
    }

    fn routers(t: &Topology) -> usize {
        t.switches
    }

    fn threads(&self) -> Option<usize> {
        Some(self.net.threads)
    }

    fn max_packet_bytes(&self) -> u64 {
        u64::from(crate::xswitch_model::MAX_SIZE)
    }

    fn check_pairs(
        &self,
        t: &Topology,
        pairs: &mut dyn Iterator<Item = (usize, usize)>,
    ) -> Result<(), Invalid> {
        self.check_deadlock(t, pairs)
    }

    fn build(
        &self,
        t: &Topology,
        _seed: u64,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<Box<dyn Fabric>, Invalid> {
        Ok(Box::new(XSwitchFabricConfig::build(
            self, t, threads, ranks,
        )?))
    }
}
