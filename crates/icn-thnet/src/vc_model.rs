//! `model = "vc-router"`: the comparison network of input-queued VC routers
//! ([`crate::router::grid`]), with BookSim2's conventions so that the same configuration can be run
//! in both: Bernoulli injection into unbounded source queues, uniform traffic including the
//! source itself, packet latency = tail arrival − creation, statistics over packets created
//! in a measurement window after warm-up, then drained.
//!
//! Units: `load` is offered flits per node per cycle (BookSim `injection_rate` with
//! `injection_rate_uses_flits = 1`); sizes are in flits (BookSim `packet_size`).

pub mod doc;

use crate::fabric::{VcFabric, VcSpec, VcTopology};
use crate::harness::{self, OpenLoop};
use crate::router::VcParams;
use crate::router::alloc::AllocKind;
use crate::topology::Grid;
use crate::traffic::{self, Sizes, TrafficConfig};
pub use crate::xswitch_model::OnDeadlock;
use icn_engine::lockstep::Exchange;
use icn_engine::{Context, Invalid, Metrics, Model, ModelError, Progress};
use icn_topo::routing::Routing;
use icn_topo::{Network, Shape, cdg};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub struct VcRouter;

/// A prepared `vc-router` point: the config with its paths resolved, the network, its
/// routing function (deadlock-checked) and the trace built once for all replications.
pub struct VcRouterPoint {
    pub cfg: VcRouterConfig,
    net: VcTopology,
    trace: Vec<traffic::TraceRow>,
    /// Partitions simulated by this process (its threads).
    threads: usize,
    /// `Some`: each replication's network is spread over these ranks ([`Context::network`]).
    ranks: Option<Arc<dyn Exchange>>,
    /// `Some`: the workload is this Netrace trace (read and checked once).
    netrace: Option<icn_netrace::Prepared>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VcRouterConfig {
    /// `mesh:XxY`, `torus:XxY`, `ring:N`, or any icn-topo network spec (`dragonfly:P`,
    /// `fattree:K,N`, `mesh:4x4x4,2`, `flatfly:4x4`, `hypercube:D`, `graph:ccc:4,3`, ...).
    pub topology: String,
    /// `dor`, `updown`, `updown_random`, `minimal`, `valiant`, `ugal`; empty: the family's
    /// usual one (`dor`, `updown` on fat trees and graphs, `minimal` on dragonflies).
    pub routing: String,
    /// Run even when the deadlock check finds a cycle in the channel-dependency graph (the
    /// watchdog still reports a deadlock that happens).
    pub allow_deadlock: bool,
    /// Channel latency of dragonfly global links (BookSim2's dragonfly: 100); 0: `channel_delay`.
    pub global_delay: u64,
    /// Latency of the injection and ejection channels (BookSim2 keeps them at 1 whatever its
    /// network channels take: 2 on its torus, 10/100 on its dragonfly); 0: `channel_delay`.
    /// Set and different from `channel_delay`, it moves a grid to the router of any radix.
    pub terminal_delay: u64,
    /// Offered flits per node per cycle.
    pub load: f64,
    /// Packet size in flits (or the small mode of the bimodal mix).
    pub size: u32,
    pub size_large: u32,
    pub large_fraction: f64,
    pub traffic: TrafficConfig,
    pub vcs: usize,
    pub buf: usize,
    pub routing_delay: u64,
    pub vc_alloc_delay: u64,
    pub sw_alloc_delay: u64,
    pub st_delay: u64,
    pub channel_delay: u64,
    pub credit_delay: u64,
    pub vc_alloc: AllocKind,
    pub sw_alloc: AllocKind,
    pub watchdog: u64,
    pub warmup: u64,
    pub measure: u64,
    pub drain: u64,
    /// `error` (default) or `report`: as for `xswitch`; only a torus with `vcs = 1` can
    /// deadlock (no dateline classes).
    pub on_deadlock: OnDeadlock,
    /// Threads simulating one replication (0: every core); results are the same at any count.
    pub threads: usize,
    /// `[netrace]`: replay a Netrace trace closed-loop instead of the synthetic traffic
    /// (`load`, sizes, `traffic` and the windows are then unused; see `icn_netrace`).
    pub netrace: Option<icn_netrace::NetraceConfig>,
}

impl Default for VcRouterConfig {
    fn default() -> Self {
        VcRouterConfig {
            topology: "mesh:8x8".into(),
            routing: String::new(),
            allow_deadlock: false,
            global_delay: 0,
            terminal_delay: 0,
            load: 0.1,
            size: 5,
            size_large: 20,
            large_fraction: 0.0,
            traffic: TrafficConfig::default(),
            vcs: 2,
            buf: 8,
            routing_delay: 1,
            vc_alloc_delay: 1,
            sw_alloc_delay: 1,
            st_delay: 1,
            channel_delay: 1,
            credit_delay: 1,
            vc_alloc: AllocKind::RoundRobin,
            sw_alloc: AllocKind::RoundRobin,
            watchdog: 20_000,
            warmup: 5_000,
            measure: 20_000,
            drain: 100_000,
            on_deadlock: OnDeadlock::Error,
            threads: 1,
            netrace: None,
        }
    }
}

impl VcRouterConfig {
    fn params(&self) -> VcParams {
        VcParams {
            vcs: self.vcs,
            buf: self.buf,
            routing_delay: self.routing_delay,
            vc_alloc_delay: self.vc_alloc_delay,
            sw_alloc_delay: self.sw_alloc_delay,
            st_delay: self.st_delay,
            channel_delay: self.channel_delay,
            credit_delay: self.credit_delay,
            terminal_delay: self.terminal_delay,
            vc_alloc: self.vc_alloc,
            sw_alloc: self.sw_alloc,
            watchdog: self.watchdog,
        }
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            size: self.size,
            size_large: self.size_large,
            large_fraction: self.large_fraction,
        }
    }

    /// The network and routing function, and the icn-topo network and routing that the
    /// deadlock check and the bound traffic patterns see (for the fast path: the same grid
    /// as an icn-topo k-ary n-cube, same router and terminal numbering).
    fn network(&self) -> Result<(VcTopology, Option<Checked>), Invalid> {
        let name = self.routing.trim();
        if let Some(g) = fast_grid(&self.topology) {
            let twin = grid_twin(g).ok().map(Arc::new);
            // The fast path routes icnlab's `dor`; a torus's default is BookSim2's
            // `dim_order` (random ties, a class per dimension traversal), run by the general
            // router like every other routing function.
            let fast = name == "dor" || (name.is_empty() && (!g.wrap || twin.is_none()));
            let terminals_as_links =
                matches!(self.terminal_delay, 0) || self.terminal_delay == self.channel_delay;
            if self.vcs <= 8 && fast && terminals_as_links {
                let checked = match twin {
                    Some(net) => {
                        let classes = if g.wrap && self.vcs >= 2 { 2 } else { 1 };
                        let r = icn_topo::routing_for(&net, "dor", Some(classes)).map_err(bad)?;
                        Some((net, Arc::from(r)))
                    }
                    None => None,
                };
                return Ok((VcTopology::Grid(g), checked));
            }
            let net = twin.ok_or_else(|| {
                Invalid::new(
                    "topology",
                    "a torus side of 2 runs only with dimension order and ≤ 8 VCs",
                )
            })?;
            let routing = self.routing_on(&net)?;
            let any = VcTopology::Any {
                net: net.clone(),
                routing: routing.clone(),
            };
            return Ok((any, Some((net, routing))));
        }
        let net = Arc::new(icn_topo::parse_network_spec(&self.topology).map_err(|e| {
            Invalid::new(
                "topology",
                format!(
                    "{e} (the X-Switch's ccc:H,K and file:PATH are graph:ccc:H,K and graph:file:PATH here)"
                ),
            )
        })?);
        let routing = self.routing_on(&net)?;
        let any = VcTopology::Any {
            net: net.clone(),
            routing: routing.clone(),
        };
        Ok((any, Some((net, routing))))
    }

    /// The configured routing on `net` with as many VC classes as it needs, or `vcs` when
    /// there are fewer (which the deadlock check then judges).
    fn routing_on(&self, net: &Network) -> Result<Arc<dyn Routing>, Invalid> {
        let name = match self.routing.trim() {
            "" => icn_topo::default_routing_name(net),
            n => n,
        };
        let full = icn_topo::routing_for(net, name, None).map_err(bad)?;
        let r = if self.vcs < usize::from(full.vc_classes()) {
            icn_topo::routing_for(net, name, Some(self.vcs as u8)).map_err(bad)?
        } else {
            full
        };
        Ok(Arc::from(r))
    }
}

/// The icn-topo network and routing the deadlock check and the traffic patterns see.
type Checked = (Arc<Network>, Arc<dyn Routing>);

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
/// the watchdog reports a deadlock that happens).
fn deadlock_check(
    cfg: &VcRouterConfig,
    net: &Network,
    routing: &dyn Routing,
) -> Result<(), Invalid> {
    let name = match cfg.routing.trim() {
        "" => icn_topo::default_routing_name(net),
        n => n,
    };
    check_deadlock_free(
        net,
        routing,
        name,
        cfg.vcs,
        &cfg.topology,
        cfg.allow_deadlock,
    )
}

/// The deadlock check of [`deadlock_check`] for any user of the VC routers (the vc-router
/// model, the cluster's vc-router fabric): `routing` (named `name`, for the small twin) on
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
/// endpoint; see [`crate::router::anyradix::VcAnyNet::bytes_per_router`]) exceeds the memory available, before it is
/// built. Packets in flight and source queues come on top and grow with the load.
fn check_state_fits(
    cfg: &VcRouterConfig,
    net: &VcTopology,
    endpoints: usize,
) -> Result<(), Invalid> {
    let (routers, radix) = match net {
        VcTopology::Grid(g) => (g.x * g.y, 5),
        VcTopology::Any { net, .. } => (net.routers() as usize, usize::from(net.radix())),
    };
    check_router_state_fits("topology", routers, radix, cfg.vcs, cfg.buf, endpoints)
}

/// The estimate of [`check_state_fits`] for any network of VC routers (the cluster's fabric
/// too): `routers` routers of `radix` ports with `vcs` VCs of `buf` flits and `endpoints`
/// endpoints, against the machine's available memory; refused naming `key`.
pub fn check_router_state_fits(
    key: &str,
    routers: usize,
    radix: usize,
    vcs: usize,
    buf: usize,
    endpoints: usize,
) -> Result<(), Invalid> {
    let per_router = radix as u128 * (vcs as u128 * (4 * buf as u128 + 32) + 64) + 64;
    icn_engine::memory::check_fits(
        key,
        &format!(
            "the router state of {routers} routers of radix {radix} ({vcs} VCs × {buf} flits)"
        ),
        routers as u128 * per_router + endpoints as u128 * 256,
        icn_engine::memory::available_memory(),
    )
}

/// Largest packet (flits).
pub const MAX_SIZE: u32 = 65_536;

impl Model for VcRouter {
    const NAME: &'static str = "vc-router";
    const DOC: &'static icn_engine::ModelDoc = &doc::DOC;
    const ABOUT: &'static str = "input-queued virtual-channel router network with BookSim2 iq conventions (comparison for TH-Net)";
    const SPREADS_NETWORK: bool = true;
    type Config = VcRouterConfig;
    type Prepared = VcRouterPoint;

    fn validate(cfg: &VcRouterConfig) -> Result<(), Invalid> {
        Self::prepare(cfg, &Context::default()).map(drop)
    }

    fn prepare(cfg: &VcRouterConfig, ctx: &Context) -> Result<VcRouterPoint, Invalid> {
        let mut cfg = cfg.clone();
        traffic::resolve_paths(&mut cfg.topology, &mut cfg.traffic, ctx);
        cfg.params().validate()?;
        Invalid::check(
            cfg.global_delay <= 1024,
            "global_delay",
            "0 (= channel_delay) ..= 1024 cycles",
            cfg.global_delay,
        )?;
        let (net, checked) = cfg.network()?;
        let endpoints = match &net {
            VcTopology::Grid(g) => g.x * g.y,
            VcTopology::Any { net, .. } => net.terminals() as usize,
        };
        check_state_fits(&cfg, &net, endpoints)?;
        let netrace = cfg
            .netrace
            .as_ref()
            .map(|n| n.prepare(ctx, endpoints))
            .transpose()?;
        if let Some((tnet, routing)) = &checked {
            deadlock_check(&cfg, tnet, routing.as_ref())?;
            cfg.traffic.bind(tnet)?;
        }
        let grid = match net {
            VcTopology::Grid(g) => Some(g),
            VcTopology::Any { .. } => None,
        };
        Invalid::check(
            cfg.threads <= 1024,
            "threads",
            "0 (every core) ..= 1024",
            cfg.threads,
        )?;
        let routers = match &net {
            VcTopology::Grid(g) => g.x * g.y,
            VcTopology::Any { net, .. } => net.routers() as usize,
        };
        let threads = ctx.partitions("threads", cfg.threads, routers, "router")?;
        Invalid::check(
            cfg.load > 0.0 && cfg.load <= 1.0,
            "load",
            "(0, 1] flits/node/cycle",
            cfg.load,
        )?;
        cfg.sizes().validate(MAX_SIZE)?;
        traffic::check_injection(&cfg.traffic, cfg.load / cfg.sizes().mean())?;
        let trace = traffic::validate(&cfg.traffic, endpoints, grid, MAX_SIZE)?;
        traffic::check_windows(cfg.warmup, cfg.measure, cfg.drain)?;
        Ok(VcRouterPoint {
            cfg,
            net,
            trace,
            threads,
            ranks: ctx.network.clone(),
            netrace,
        })
    }

    fn work(cfg: &VcRouterConfig) -> u64 {
        cfg.warmup + cfg.measure
    }

    fn run_prepared(
        point: &VcRouterPoint,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<Metrics, ModelError> {
        let cfg = &point.cfg;
        // Sizes are flits here: one "byte" of the fabric interface is one flit (a Netrace
        // replay hands bytes, `flit_bytes` to a flit).
        let flit = point.netrace.as_ref().map_or(1, |n| n.flit_bytes);
        let mut fabric = VcFabric::build(&VcSpec {
            topology: point.net.clone(),
            params: cfg.params(),
            global_delay: cfg.global_delay,
            router_seed: VcSpec::router_seed(seed),
            threads: point.threads,
            ranks: point.ranks.clone(),
            cycle_ps: 1,
            flit_bytes: flit,
            max_packet_flits: MAX_SIZE,
        })?;
        let grid = match &point.net {
            VcTopology::Grid(g) => Some(*g),
            VcTopology::Any { .. } => None,
        };
        if let Some(n) = &point.netrace {
            return n.run(&mut fabric);
        }
        let w = OpenLoop {
            load: cfg.load,
            sizes: cfg.sizes(),
            traffic: &cfg.traffic,
            trace: &point.trace,
            grid,
            warmup: cfg.warmup,
            measure: cfg.measure,
            drain: cfg.drain,
            on_deadlock: cfg.on_deadlock,
        };
        harness::run(&mut fabric, &w, seed, progress, |_, _, _| {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_engine::model::NoProgress;

    fn small() -> VcRouterConfig {
        VcRouterConfig {
            topology: "mesh:4x4".into(),
            load: 0.1,
            warmup: 500,
            measure: 2_000,
            ..VcRouterConfig::default()
        }
    }

    #[test]
    fn low_load_latency_is_near_zero_load() {
        let m = VcRouter::run(&small(), 1, &NoProgress).unwrap();
        // Uniform on 4×4 with self: mean |dx| = (k² − 1)/(3k) = 1.25 per dimension, so mean
        // H = 2.5 and the zero-load mean is 7 + 5·2.5 + 4 = 23.5; queueing adds a little.
        let lat = m.require("latency_mean").unwrap();
        assert!((23.5..30.0).contains(&lat), "{lat}");
        let (off, acc) = (
            m.require("offered").unwrap(),
            m.require("accepted").unwrap(),
        );
        assert!((acc - off).abs() < 0.1 * off, "{off} {acc}");
        assert_eq!(m.require("unfinished").unwrap(), 0.0);
        // 4×4 mesh: 2·4·3 = 24 links, 48 router-to-router channels; their mean is the scalar.
        let links = m.table("links").unwrap();
        assert_eq!(links.rows.len(), 48);
        let mean = links.rows.iter().map(|r| r[2]).sum::<f64>() / 48.0;
        assert!((mean - m.require("link_util_mean").unwrap()).abs() < 1e-12);
    }

    /// A 1-VC torus (no dateline classes) under heavy long-packet traffic: with
    /// `on_deadlock = "report"` the run returns `deadlocked = 1`, or it completes — never hangs.
    #[test]
    fn single_vc_torus_runs_or_reports() {
        let cfg = VcRouterConfig {
            topology: "torus:4x4".into(),
            vcs: 1,
            buf: 2,
            size: 64,
            load: 0.5,
            watchdog: 2_000,
            drain: 5_000,
            on_deadlock: OnDeadlock::Report,
            allow_deadlock: true,
            ..small()
        };
        let m = VcRouter::run(&cfg, 1, &NoProgress).unwrap();
        let d = m.require("deadlocked").unwrap();
        assert!(d == 0.0 || (d == 1.0 && m.notes.iter().any(|n| n.contains("deadlock"))));
    }

    #[test]
    fn deterministic_per_seed() {
        assert_eq!(
            VcRouter::run(&small(), 3, &NoProgress).unwrap(),
            VcRouter::run(&small(), 3, &NoProgress).unwrap()
        );
    }

    #[test]
    fn bad_configs_name_their_key() {
        let bad = |f: fn(&mut VcRouterConfig)| {
            let mut c = small();
            f(&mut c);
            VcRouter::validate(&c).unwrap_err().key
        };
        assert_eq!(bad(|c| c.topology = "star".into()), "topology");
        assert_eq!(bad(|c| c.load = 1.5), "load");
        assert_eq!(bad(|c| c.vcs = 0), "vcs");
        assert_eq!(bad(|c| c.vcs = 17), "vcs");
        assert_eq!(bad(|c| c.size = 0), "size");
    }
}
