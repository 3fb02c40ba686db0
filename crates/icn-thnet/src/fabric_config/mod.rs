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
//! ([`crate::vc_model::check_deadlock_free`]) and the X-Switch's source routes for the pairs a
//! workload uses ([`crate::topology::Topology::dependency_cycle`]): a network that can
//! deadlock is refused at once instead of after a watchdog's million cycles.

use crate::fabric::{VcFabric, VcSpec, VcTopology, XSwitchFabric};
use crate::frame::Check;
use crate::router::VcParams;
use crate::topology::Topology;
use crate::vc_model;
use crate::xswitch::NetParams;
use icn_engine::Invalid;
use icn_engine::lockstep::Exchange;
use icn_fabric::Ps;
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

/// `[fabric]` keys of `kind = "xswitch"`: X-NIAs over X-Switches, source-routed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct XSwitchFabricConfig {
    /// `ring:N`, `mesh:XxY`, `torus:XxY`, `star`, `tree:D`, `ccc:H,K`, `file:PATH`, or a
    /// network spelling of the VC routers whose routers have at most 5 ports.
    pub topology: String,
    /// Clock, MHz (a link moves 1 byte per cycle).
    pub clock_mhz: f64,
    /// Payload bytes per frame.
    pub frame_size: u32,
    /// Input FIFO symbols, STOP and GO thresholds, NIA DMA delay (cycles).
    pub fifo_size: usize,
    pub stop_threshold: usize,
    pub go_threshold: usize,
    pub dma_delay: u64,
    /// Cycles without progress that count as a deadlock.
    pub watchdog: u64,
    /// The same bound in seconds of wall time ([`icn_engine::watchdog`]).
    pub watchdog_wall_s: u64,
    /// Threads simulating the network (0: every core); results are the same at any count.
    pub threads: usize,
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

impl Default for XSwitchFabricConfig {
    fn default() -> Self {
        XSwitchFabricConfig {
            topology: "mesh:4x4".into(),
            clock_mhz: 160.0,
            frame_size: 256,
            fifo_size: 64,
            stop_threshold: 48,
            go_threshold: 16,
            dma_delay: 0,
            watchdog: 1_000_000,
            watchdog_wall_s: icn_engine::watchdog::DEFAULT_WALL_S,
            threads: 1,
            allow_deadlock: false,
            nia_queue: DEFAULT_NIA_QUEUE,
        }
    }
}

impl XSwitchFabricConfig {
    pub fn cycle_ps(&self) -> Result<Ps, Invalid> {
        cycle_ps(self.clock_mhz)
    }

    pub fn params(&self) -> NetParams {
        NetParams {
            link_delay: 1,
            fifo_size: self.fifo_size,
            stop_threshold: self.stop_threshold,
            go_threshold: self.go_threshold,
            frame_size: self.frame_size,
            check: Check::Crc16,
            dma_delay: self.dma_delay,
            watchdog: self.watchdog,
            watchdog_wall_s: self.watchdog_wall_s,
        }
    }

    /// Checks the keys and builds the topology (`file:` paths already resolved by the
    /// caller), once for every replication.
    pub fn prepare(&self) -> Result<Topology, Invalid> {
        self.cycle_ps()?;
        check_queue("fabric.nia_queue", "messages", self.nia_queue)?;
        self.params().validate().map_err(in_fabric)?;
        let t = Topology::from_spec(&self.topology).map_err(in_fabric)?;
        Invalid::check(
            self.threads <= 1024 && thread_count(self.threads) <= t.switches,
            "fabric.threads",
            "0 (every core) ..= 1024, at most one thread per switch",
            self.threads,
        )?;
        crate::xswitch_model::check_state_fits(
            "fabric.topology",
            &t,
            &self.params(),
            thread_count(self.threads),
        )?;
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
                    self.topology,
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
            self.params(),
            threads,
            ranks,
            self.cycle_ps()?,
        )?;
        f.set_nia_queue(self.nia_queue);
        Ok(f)
    }

    /// The threads key with 0 resolved to the machine's cores.
    pub fn thread_count(&self) -> usize {
        thread_count(self.threads)
    }
}

/// `[fabric]` keys of `kind = "vc-router"`: input-queued virtual-channel routers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VcFabricConfig {
    /// `mesh:XxY`, `torus:XxY`, `ring:N` (the 5-port grid routers), `ccc:H,K`, or any
    /// network spelling of `icn_topo::parse_network_spec` (routers of any radix).
    pub topology: String,
    /// Clock, MHz.
    pub clock_mhz: f64,
    /// Bytes per flit, largest packet in flits, VCs per port, buffer flits per VC.
    pub flit_bytes: u32,
    pub max_packet_flits: u32,
    pub vcs: usize,
    pub buf: usize,
    /// Cycles without progress that count as a deadlock.
    pub watchdog: u64,
    /// The same bound in seconds of wall time ([`icn_engine::watchdog`]).
    pub watchdog_wall_s: u64,
    /// Threads simulating the network (0: every core); results are the same at any count.
    pub threads: usize,
    /// Packets an endpoint may have in flight before it refuses more (rule 4 of the fabric
    /// interface: the NIC holds its DMA), 0 = unbounded; 1 ..= 2^20.
    pub window: usize,
}

impl Default for VcFabricConfig {
    fn default() -> Self {
        VcFabricConfig {
            topology: "mesh:4x4".into(),
            clock_mhz: 160.0,
            flit_bytes: 16,
            max_packet_flits: 64,
            vcs: 2,
            buf: 8,
            watchdog: 1_000_000,
            watchdog_wall_s: icn_engine::watchdog::DEFAULT_WALL_S,
            threads: 1,
            window: DEFAULT_VC_WINDOW,
        }
    }
}

impl VcFabricConfig {
    pub fn cycle_ps(&self) -> Result<Ps, Invalid> {
        cycle_ps(self.clock_mhz)
    }

    pub fn params(&self) -> VcParams {
        VcParams {
            watchdog_wall_s: self.watchdog_wall_s,
            ..VcParams::unit_delays(self.vcs, self.buf, self.watchdog)
        }
    }

    /// The threads key with 0 resolved to the machine's cores.
    pub fn thread_count(&self) -> usize {
        thread_count(self.threads)
    }

    /// Largest packet payload, bytes.
    pub fn max_packet_bytes(&self) -> u64 {
        u64::from(self.flit_bytes) * u64::from(self.max_packet_flits)
    }

    /// Checks the keys and builds the network (checked free of deadlock) once for every
    /// replication: a 2-D mesh, torus or ring on the 5-port grid routers, anything else on
    /// the any-radix routers.
    pub fn prepare(&self) -> Result<VcTopology, Invalid> {
        self.cycle_ps()?;
        check_queue("fabric.window", "packets", self.window)?;
        self.params().validate().map_err(in_fabric)?;
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
        Invalid::check(
            self.threads <= 1024,
            "fabric.threads",
            "0 (every core) ..= 1024",
            self.threads,
        )?;
        let grid = ["mesh:", "torus:", "ring:"]
            .iter()
            .any(|p| self.topology.starts_with(p))
            .then(|| Topology::from_spec(&self.topology).ok())
            .flatten()
            .filter(|t| t.grid.is_some());
        let Some(t) = grid else {
            return self.any_radix();
        };
        Invalid::check(
            self.thread_count() <= t.nias(),
            "fabric.threads",
            "at most one thread per router",
            self.thread_count(),
        )?;
        vc_model::check_router_state_fits(
            "fabric.topology",
            t.nias(),
            5,
            self.vcs,
            self.buf,
            t.nias(),
        )?;
        Ok(VcTopology::Grid(t.grid.expect("filtered")))
    }

    /// A network off the 5-port grid: `ccc:H,K` (as for the X-Switch) or any icn-topo
    /// network spec, with its default routing (up*/down* on graphs and fat trees, minimal
    /// on dragonflies, dimension order on cubes), checked for channel-dependency cycles.
    fn any_radix(&self) -> Result<VcTopology, Invalid> {
        let spec = match self.topology.split_once(':') {
            Some(("ccc", a)) => format!("graph:ccc:{a}"),
            _ => self.topology.clone(),
        };
        let bad = |e: icn_topo::TopoError| Invalid::new("fabric.topology", e.to_string());
        vc_model::check_spec_fits("fabric.topology", &spec, self.vcs, self.buf)?;
        let net = icn_topo::parse_network_spec(&spec).map_err(bad)?;
        let routing = icn_topo::default_routing(&net).map_err(bad)?;
        let classes = usize::from(routing.vc_classes());
        Invalid::check(
            self.vcs >= classes,
            "fabric.vcs",
            &format!("≥ {classes} (the VC classes its routing needs)"),
            self.vcs,
        )?;
        vc_model::check_router_state_fits(
            "fabric.topology",
            net.routers() as usize,
            usize::from(net.radix()),
            self.vcs,
            self.buf,
            net.terminals() as usize,
        )?;
        // The vc-router model's check: bounded (a small twin beyond a few thousand
        // terminals), where a full check of a large fat tree ran for minutes.
        vc_model::check_deadlock_free(
            &net,
            routing.as_ref(),
            icn_topo::default_routing_name(&net),
            self.vcs,
            &self.topology,
            false,
        )
        .map_err(|mut e| {
            e.key = "fabric.topology".into();
            e
        })?;
        Invalid::check(
            self.thread_count() <= net.routers() as usize,
            "fabric.threads",
            "at most one thread per router",
            self.thread_count(),
        )?;
        Ok(VcTopology::Any {
            net: Arc::new(net),
            routing: Arc::from(routing),
        })
    }

    /// A replication's fabric on the prepared network; `seed` (the replication's) seeds the
    /// routers' random routing choices.
    pub fn build(
        &self,
        topology: &VcTopology,
        seed: u64,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<VcFabric, Invalid> {
        let mut f = VcFabric::build(&VcSpec {
            topology: topology.clone(),
            params: self.params(),
            global_delay: 0,
            router_seed: VcSpec::router_seed(seed),
            threads,
            ranks,
            cycle_ps: self.cycle_ps()?,
            flit_bytes: self.flit_bytes,
            max_packet_flits: self.max_packet_flits,
        })?;
        f.set_window(self.window);
        Ok(f)
    }
}

/// Endpoints and routers (the partitioning unit) of a prepared VC network.
pub fn vc_sizes(t: &VcTopology) -> (usize, usize) {
    match t {
        VcTopology::Grid(g) => (g.x * g.y, g.x * g.y),
        VcTopology::Any { net, .. } => (net.terminals() as usize, net.routers() as usize),
    }
}

#[cfg(test)]
mod tests;
