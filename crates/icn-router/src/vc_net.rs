//! The `vc-router` network kind, described once: its keys ([`VcNetConfig`], with the routers'
//! own keys in [`VcParams`]), their documentation ([`KEYS`]), their validation, the memory
//! estimate, the deadlock check and the prepared network ([`VcNetConfig::prepare`], once per
//! point), and what a replication's fabric is built from ([`VcNetConfig::spec`]).
//!
//! Both drivers read this one description: the open-loop model (`model = "vc-router"`, these
//! keys at the top level beside its workload keys) and the cluster's `[fabric] kind =
//! "vc-router"` (these keys beside the clock and the flit size). So a network validated
//! against BookSim2 by the model is the network the cluster runs: same keys, same defaults,
//! same routing (a torus runs BookSim2's `dim_order` unless told otherwise), same answers.

use crate::VcParams;
use crate::fabric::{VcSpec, VcTopology};
use icn_engine::Invalid;
use icn_engine::doc::{Key, key};
use icn_engine::lockstep::Exchange;
use icn_fabric::Ps;
use icn_fabric::traffic::Grid;
use icn_topo::routing::Routing;
use icn_topo::{Network, Shape, cdg};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The keys of a network of VC routers: where the routers are and how packets are routed,
/// and the routers themselves (`router`, whose keys sit at the same level).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, default)]
pub struct VcNetConfig {
    /// `mesh:XxY`, `torus:XxY`, `ring:N`, or any icn-topo network spec (`dragonfly:P`,
    /// `fattree:K,N`, `mesh:4x4x4,2`, `flatfly:4x4`, `hypercube:D`, `graph:ccc:4,3`, ...);
    /// `ccc:H,K` is `graph:ccc:H,K`.
    pub topology: String,
    /// `dim_order`, `dor`, `updown`, `updown_random`, `minimal`, `valiant`, `ugal`, or
    /// BookSim2's names (`nca_fattree`, `ugal_dragonflynew`, ...); empty: the family's usual one (`dim_order` on tori, `dor` on meshes, `updown` on fat
    /// trees and graphs, `minimal` on dragonflies).
    pub routing: String,
    /// Run even when the deadlock check finds a cycle in the channel-dependency graph (the
    /// watchdog still reports a deadlock that happens).
    pub allow_deadlock: bool,
    /// Channel latency of dragonfly global links (BookSim2's dragonfly: 100); 0: `channel_delay`.
    pub global_delay: u64,
    /// Threads simulating one replication (0: every core); results are the same at any count.
    pub threads: usize,
    /// The routers: VCs, buffers, pipeline and channel delays, allocators, microarchitecture,
    /// watchdog.
    #[serde(skip)]
    pub router: VcParams,
}

icn_engine::config_sections!(VcNetConfig, own first: router: VcParams);

impl Default for VcNetConfig {
    fn default() -> Self {
        VcNetConfig {
            topology: "mesh:8x8".into(),
            routing: String::new(),
            allow_deadlock: false,
            global_delay: 0,
            threads: 1,
            router: VcParams::default(),
        }
    }
}

/// Unit and meaning of every key of [`VcNetConfig`] (defaults and ranges are read from the
/// config and its validation): the rows of `icnlab keys vc-router` and of `icnlab keys
/// cluster` under `fabric.kind = "vc-router"`.
pub const KEYS: &[Key] = &[
    key(
        "topology",
        "",
        "`mesh:XxY`, `torus:XxY`, `ring:N` or any icn-topo network (`dragonfly:P`, `fattree:K,N`, `flatfly:4x4`, `hypercube:D`, `ccc:H,K`, `graph:...`)",
    ),
    key(
        "routing",
        "",
        "`dim_order`, `dor`, `updown`, `updown_random`, `minimal`, `valiant`, `ugal` or BookSim2's names (`nca_fattree`, `anca_fattree`, `xy_yx_mesh`, `romm_mesh`, `ugal_dragonflynew`, ...; see docs/booksim.md); empty: the family's usual one (`dim_order` on tori)",
    ),
    key(
        "allow_deadlock",
        "",
        "run even when the channel-dependency graph has a cycle",
    ),
    key(
        "global_delay",
        "cycles",
        "latency of dragonfly global links; 0: `channel_delay`",
    ),
    key(
        "threads",
        "threads",
        "threads simulating one replication (0: every core); results are the same at any count",
    ),
    key("vcs", "VCs", "virtual channels per port"),
    key("buf", "flits", "buffer per virtual channel"),
    key("routing_delay", "cycles", "route computation stage"),
    key("vc_alloc_delay", "cycles", "VC allocation stage"),
    key("sw_alloc_delay", "cycles", "switch allocation stage"),
    key("st_delay", "cycles", "switch traversal stage"),
    key(
        "channel_delay",
        "cycles",
        "latency of a channel between routers",
    ),
    key(
        "credit_delay",
        "cycles",
        "latency of a credit back upstream",
    ),
    key(
        "terminal_delay",
        "cycles",
        "latency of the injection and ejection channels (BookSim2: 1); 0: `channel_delay`",
    ),
    key("vc_alloc", "", "VC allocator (BookSim2 names)"),
    key("sw_alloc", "", "switch allocator (BookSim2 names)"),
    key(
        "watchdog",
        "cycles",
        "cycles without progress that count as a deadlock",
    ),
    key(
        "speculative",
        "",
        "switch allocation in the cycle of VC allocation (BookSim2's `speculative = 1`; router of any radix)",
    ),
    key(
        "watchdog_wall_s",
        "s",
        "seconds of wall time without progress that count as a deadlock (the clock is read every 4096 still cycles)",
    ),
];

/// A prepared network: what every replication's fabric is built on, and the icn-topo
/// network and routing that the deadlock check and the traffic patterns saw (for the 5-port
/// fast path, the same grid as a k-ary n-cube with the same numbering).
#[derive(Clone)]
pub struct VcPrepared {
    pub topology: VcTopology,
    pub checked: Option<Checked>,
}

impl VcPrepared {
    pub fn endpoints(&self) -> usize {
        match &self.topology {
            VcTopology::Grid(g) => g.x * g.y,
            VcTopology::Any { net, .. } => net.terminals() as usize,
        }
    }

    /// Routers, the unit a network simulated in partitions is split by.
    pub fn routers(&self) -> usize {
        match &self.topology {
            VcTopology::Grid(g) => g.x * g.y,
            VcTopology::Any { net, .. } => net.routers() as usize,
        }
    }

    /// The 2-D grid of the fast path (the traffic patterns of a grid read it).
    pub fn grid(&self) -> Option<Grid> {
        match &self.topology {
            VcTopology::Grid(g) => Some(*g),
            VcTopology::Any { .. } => None,
        }
    }
}

impl VcNetConfig {
    /// The defaults on `topology`.
    pub fn on(topology: &str) -> VcNetConfig {
        VcNetConfig {
            topology: topology.into(),
            ..VcNetConfig::default()
        }
    }

    /// Checks every key and builds the network, once for every replication: the routers'
    /// parameters, the network and its routing, the memory the router state needs, and
    /// Dally & Seitz's deadlock check (unless `allow_deadlock`). Errors name bare keys
    /// (`vcs`); the cluster prefixes `fabric.`.
    pub fn prepare(&self) -> Result<VcPrepared, Invalid> {
        let p = &self.router;
        p.validate()?;
        Invalid::check(
            self.global_delay <= 1024,
            "global_delay",
            "0 (= channel_delay) ..= 1024 cycles",
            self.global_delay,
        )?;
        Invalid::check(
            self.threads <= 1024,
            "threads",
            "0 (every core) ..= 1024",
            self.threads,
        )?;
        check_spec_fits("topology", &self.spec_text(), p.vcs, p.buf)?;
        let prepared = self.network()?;
        let (routers, radix) = match &prepared.topology {
            VcTopology::Grid(g) => (g.x * g.y, 5),
            VcTopology::Any { net, .. } => (net.routers() as usize, usize::from(net.radix())),
        };
        check_router_state_fits(
            "topology",
            routers,
            radix,
            p.vcs,
            p.buf,
            prepared.endpoints(),
        )?;
        if let Some((net, routing)) = &prepared.checked {
            check_deadlock_free(
                net,
                routing.as_ref(),
                self.routing_name(net),
                p.vcs,
                &self.topology,
                self.allow_deadlock,
            )?;
        }
        Ok(prepared)
    }

    /// What a replication's fabric on `prepared` is built from: `seed` (the replication's)
    /// seeds the routers' random routing choices; `threads` partitions in this process (and
    /// `ranks`, the processes the network is spread over); `cycle_ps` ps per cycle,
    /// `flit_bytes` bytes per flit and packets of at most `max_packet_flits` flits.
    #[allow(clippy::too_many_arguments)]
    pub fn spec(
        &self,
        prepared: &VcPrepared,
        seed: u64,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
        cycle_ps: Ps,
        flit_bytes: u32,
        max_packet_flits: u32,
    ) -> VcSpec {
        VcSpec {
            topology: prepared.topology.clone(),
            params: self.router.clone(),
            global_delay: self.global_delay,
            router_seed: VcSpec::router_seed(seed),
            threads,
            ranks,
            cycle_ps,
            flit_bytes,
            max_packet_flits,
        }
    }

    /// The topology in icn-topo's spelling (`ccc:H,K` is a graph there).
    fn spec_text(&self) -> String {
        match self.topology.split_once(':') {
            Some(("ccc", a)) => format!("graph:ccc:{a}"),
            _ => self.topology.clone(),
        }
    }

    /// The configured routing's name on `net` (the family's usual one when empty).
    fn routing_name<'a>(&'a self, net: &Network) -> &'a str {
        match self.routing.trim() {
            "" => icn_topo::default_routing_name(net),
            n => n,
        }
    }

    /// The network and routing function, and the icn-topo network and routing that the
    /// deadlock check and the bound traffic patterns see. A 2-D mesh or ring routed by
    /// dimension order (`dor`, the default there) with at most 8 VCs, terminal channels as
    /// fast as the others and the input-queued microarchitecture runs on the 5-port grid
    /// routers; everything else, a torus's default `dim_order` included, on the routers of
    /// any radix.
    fn network(&self) -> Result<VcPrepared, Invalid> {
        let p = &self.router;
        let name = self.routing.trim();
        if let Some(g) = fast_grid(&self.topology) {
            let twin = grid_twin(g).ok().map(Arc::new);
            // The fast path routes icnlab's `dor`; a torus's default is BookSim2's
            // `dim_order` (random ties, a class per dimension traversal), run by the general
            // router like every other routing function.
            let fast = name == "dor" || (name.is_empty() && (!g.wrap || twin.is_none()));
            let terminals_as_links = p.terminal_delay == 0 || p.terminal_delay == p.channel_delay;
            if p.vcs <= 8 && fast && terminals_as_links && !p.speculative {
                let checked = match twin {
                    Some(net) => {
                        let classes = if g.wrap && p.vcs >= 2 { 2 } else { 1 };
                        let r = icn_topo::routing_for(&net, "dor", Some(classes)).map_err(bad)?;
                        Some((net, Arc::from(r)))
                    }
                    None => None,
                };
                return Ok(VcPrepared {
                    topology: VcTopology::Grid(g),
                    checked,
                });
            }
            let net = twin.ok_or_else(|| {
                Invalid::new(
                    "topology",
                    "a torus side of 2 runs only with dimension order and ≤ 8 VCs",
                )
            })?;
            return self.any_radix(net);
        }
        let net = icn_topo::parse_network_spec(&self.spec_text()).map_err(|e| {
            Invalid::new(
                "topology",
                format!("{e} (the X-Switch's file:PATH is graph:file:PATH here)"),
            )
        })?;
        self.any_radix(Arc::new(net))
    }

    /// `net` on the routers of any radix with the configured routing.
    fn any_radix(&self, net: Arc<Network>) -> Result<VcPrepared, Invalid> {
        let routing = self.routing_on(&net)?;
        Ok(VcPrepared {
            topology: VcTopology::Any {
                net: net.clone(),
                routing: routing.clone(),
            },
            checked: Some((net, routing)),
        })
    }

    /// The configured routing on `net` with as many VC classes as it needs, or `vcs` when
    /// there are fewer (which the deadlock check then judges).
    fn routing_on(&self, net: &Network) -> Result<Arc<dyn Routing>, Invalid> {
        let name = self.routing_name(net);
        let vcs = self.router.vcs;
        let full = icn_topo::routing_for(net, name, None).map_err(bad)?;
        let r = if vcs < usize::from(full.vc_classes()) {
            icn_topo::routing_for(net, name, Some(vcs as u8)).map_err(bad)?
        } else {
            full
        };
        Ok(Arc::from(r))
    }
}

/// The icn-topo network and routing the deadlock check and the traffic patterns see.
pub type Checked = (Arc<Network>, Arc<dyn Routing>);

fn bad(e: icn_topo::TopoError) -> Invalid {
    Invalid::new("routing", e.to_string())
}

/// The fast path's grids: `mesh:XxY`, `torus:XxY` (1 ≤ X, Y ≤ 64, X·Y ≥ 2) and `ring:N`
/// (2 ≤ N ≤ 4096), the forms and ranges of the X-Switch's topology module (whose parser is not
/// used here: it builds a source route for every pair of nodes). Anything else is `None`.
fn fast_grid(spec: &str) -> Option<Grid> {
    let (kind, arg) = spec.trim().split_once(':')?;
    let num = |s: &str, lo: usize, hi: usize| {
        s.trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (lo..=hi).contains(n))
    };
    match kind {
        "ring" => Some(Grid {
            x: num(arg, 2, 4096)?,
            y: 1,
            wrap: true,
        }),
        "mesh" | "torus" => {
            let (x, y) = arg.split_once('x')?;
            let (x, y) = (num(x, 1, 64)?, num(y, 1, 64)?);
            (x * y >= 2).then_some(Grid {
                x,
                y,
                wrap: kind == "torus",
            })
        }
        _ => None,
    }
}

/// A fast-path grid as an icn-topo k-ary n-cube (dimensions of size 1 dropped).
fn grid_twin(g: Grid) -> Result<Network, icn_topo::TopoError> {
    let dims: Vec<u32> = [g.x, g.y]
        .into_iter()
        .filter(|&k| k > 1)
        .map(|k| k as u32)
        .collect();
    Network::cube(&dims, g.wrap, 1)
}

/// Terminals above which the deadlock check runs on a small network of the same family
/// (the routings' deadlock freedom does not depend on the size; see `icn_topo::cdg`).
pub const CHECK_LIMIT_TERMINALS: u32 = 4096;

/// Routing states the check of the configured network may explore (≈ 1 s) before it moves to
/// the small twin.
pub const CHECK_STATES: u64 = 2_000_000;

/// A small network of `net`'s family, for checking a routing too large to check in full.
fn small_twin(net: &Network) -> Option<Network> {
    match net.shape() {
        Shape::Cube { dims, wrap } => {
            let d: Vec<u32> = dims.iter().map(|&k| k.min(4)).collect();
            Network::cube(&d, *wrap, 1).ok()
        }
        Shape::FatTree { n, .. } => Network::fat_tree(2, *n).ok(),
        Shape::Dragonfly { arrangement, .. } => Network::dragonfly_with(1, 4, 2, *arrangement).ok(),
        Shape::FlatFly { dims } => {
            let d: Vec<u32> = dims.iter().map(|&k| k.min(3)).collect();
            Network::flat_fly(&d, 1).ok()
        }
        Shape::Hypercube { d } => Network::hypercube((*d).min(6), 1).ok(),
        Shape::Graph(_) => None,
    }
}

/// Dally & Seitz's check before the run: the channel-dependency graph of `routing` (with its
/// VC classes) on `net` must be acyclic. A cycle is an error on `routing` naming its channels on
/// one line (the CLI prints one line per error), unless `allow` (then the run goes ahead and
/// the watchdog reports a deadlock that happens). For: `routing` (named `name`, for the small twin) on
/// `net` (spelt `topology` in the message) with `vcs` VCs. Networks whose full check is too
/// large are checked on a small network of the same family, so the check ends in about a
/// second whatever the size; graph networks beyond that are refused on `topology`. A cycle is
/// an error on `routing` unless `allow`.
pub fn check_deadlock_free(
    net: &Network,
    routing: &dyn Routing,
    name: &str,
    vcs: usize,
    topology: &str,
    allow: bool,
) -> Result<(), Invalid> {
    let classes = routing.vc_classes();
    let twin;
    let own;
    let mut on: (&Network, &dyn Routing) = (net, routing);
    let mut verdict = None;
    if net.terminals() <= CHECK_LIMIT_TERMINALS {
        match cdg::check_with_limit(net, routing, CHECK_STATES) {
            Err(cdg::CheckError::TooLarge { .. }) => {}
            other => verdict = Some(other),
        }
    }
    let verdict = match verdict {
        Some(v) => v,
        None => {
            // On a small network of the same family (the check of this one is too large).
            twin = small_twin(net).ok_or_else(|| {
                Invalid::new(
                    "topology",
                    format!(
                        "{} terminals are too many to check this graph network for deadlock",
                        net.terminals()
                    ),
                )
            })?;
            own = icn_topo::routing_for(&twin, name, Some(classes)).map_err(bad)?;
            on = (&twin, own.as_ref());
            cdg::check(on.0, on.1)
        }
    };
    match verdict {
        Ok(_) => Ok(()),
        Err(cdg::CheckError::Cycle { .. }) if allow => Ok(()),
        Err(cdg::CheckError::Cycle { cycle, .. }) => {
            let checked = if std::ptr::eq(on.0, net) {
                String::new()
            } else {
                " (found on a small network of the same family)".into()
            };
            let channels: Vec<String> = cycle
                .iter()
                .map(|c| {
                    format!(
                        "{} (VC class {})",
                        on.0.channel_name(c.router, c.port),
                        c.vc
                    )
                })
                .collect();
            Err(Invalid::new(
                "routing",
                format!(
                    "`{name}` with {classes} VC class(es) (vcs = {}) on `{}` can deadlock: a cycle of {} channel dependencies{checked}, each channel requested by packets holding the one before: {}; then the first again. Set allow_deadlock = true to run it anyway",
                    vcs,
                    topology,
                    cycle.len(),
                    channels.join("; ")
                ),
            ))
        }
        Err(e) => Err(Invalid::new("routing", e.to_string().replace('\n', " "))),
    }
}

/// Refuses a network whose router state alone (buffers, VC state, credits, allocator
/// pointers, wiring: `radix × (V × (4·buf + 32) + 64) + 64` bytes per router, 256 per
/// endpoint; see [`crate::anyradix::VcAnyNet::bytes_per_router`]) exceeds the memory
/// available, before it is built. Packets in flight and source queues come on top and grow
/// with the load. The estimate for any network of VC routers: `routers` routers of `radix` ports with `vcs` VCs of `buf` flits and `endpoints`
/// endpoints, against the machine's available memory; refused naming `key`.
pub fn check_router_state_fits(
    key: &str,
    routers: usize,
    radix: usize,
    vcs: usize,
    buf: usize,
    endpoints: usize,
) -> Result<(), Invalid> {
    let size = icn_topo::NetworkSize {
        routers: routers as u128,
        radix: radix as u128,
        terminals: endpoints as u128,
        build_bytes: 0,
    };
    network_fits(key, &size, vcs, buf)
}

/// [`check_router_state_fits`] from the topology's text, before the network is built: its
/// wiring table (and for `graph:` the graph's build) comes on top of the router state.
/// `hypercube:22` is refused here instead of aborting half-way through its build. A spec
/// with no size from its text (`graph:file:`) is checked once built.
pub fn check_spec_fits(key: &str, topology: &str, vcs: usize, buf: usize) -> Result<(), Invalid> {
    match icn_topo::network_spec_size(topology) {
        Some(size) => network_fits(key, &size, vcs, buf),
        None => Ok(()),
    }
}

fn network_fits(
    key: &str,
    s: &icn_topo::NetworkSize,
    vcs: usize,
    buf: usize,
) -> Result<(), Invalid> {
    let per_router = s.radix * (vcs as u128 * (4 * buf as u128 + 32) + 64) + 64;
    icn_engine::memory::check_fits(
        key,
        &format!(
            "the router state of {} routers of radix {} ({vcs} VCs × {buf} flits)",
            s.routers, s.radix
        ),
        s.routers * per_router + s.terminals * 256 + s.build_bytes,
        icn_engine::memory::available_memory(),
    )
}
