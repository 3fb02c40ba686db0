//! The `[fabric]` tables of `kind = "xswitch"` and `kind = "vc-router"` (the cluster model's
//! fabrics): their keys and defaults, their checks, and what a replication's fabric is built
//! from. They live here, beside the fabrics, so that a key is added in this crate only; the
//! cluster reads `kind` and then one of these structs, whose `deny_unknown_fields` refuses a
//! key of another kind.
//!
//! Both take every topology spelling the any-radix VC router knows (`fattree:K,N`,
//! `dragonfly:P`, `hypercube:D`, `torus:4x4x4`, `mesh:8x8,2`, `graph:ccc:4,3`, `crossbar:N`,
//! ... of `icn_topo::parse_network_spec`); the X-Switch's 5 ports refuse networks of larger
//! routers by name, and it also reads its own `star`, `tree:D`, `ccc:H,K` and `file:PATH`.
//! Before anything runs, the VC routers' routing is checked for channel-dependency cycles
//! ([`crate::vc_net::check_deadlock_free`]) and the X-Switch's source routes for the pairs a
//! workload uses ([`crate::topology::Topology::dependency_cycle`]): a network that can
//! deadlock is refused at once instead of after a watchdog's million cycles.

use crate::fabric::{VcFabric, XSwitchFabric};
use crate::topology::Topology;
use crate::vc_net::{VcNetConfig, VcPrepared};
use crate::xswitch_net::XSwitchNetConfig;
use icn_engine::Invalid;
use icn_engine::lockstep::Exchange;
use icn_fabric::kind::NetworkKind;
use icn_fabric::{Fabric, Ps};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Prefixes a key with `fabric.` (the validators of the networks name bare keys).
fn in_fabric(mut e: Invalid) -> Invalid {
    if !e.key.starts_with("fabric.") {
        e.key = format!("fabric.{}", e.key);
    }
    e
}

/// Picoseconds per cycle of a `clock_mhz` clock.
fn cycle_ps(clock_mhz: f64) -> Result<Ps, Invalid> {
    Invalid::check(
        clock_mhz.is_finite() && (1.0..=1e6).contains(&clock_mhz),
        "fabric.clock_mhz",
        "1 ..= 10^6 MHz",
        clock_mhz,
    )?;
    Ok((1e6 / clock_mhz).round() as Ps)
}

/// The `threads` key with 0 resolved to the machine's cores.
fn thread_count(threads: usize) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

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

/// `window` of `vc-router` by default: 64 packets in flight per endpoint.
pub const DEFAULT_VC_WINDOW: usize = 64;

fn check_queue(key: &str, unit: &str, v: usize) -> Result<(), Invalid> {
    Invalid::check(
        v <= 1 << 20,
        key,
        &format!("0 (unbounded) ..= 2^20 {unit}"),
        v,
    )
}

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
