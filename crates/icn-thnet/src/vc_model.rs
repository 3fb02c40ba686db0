//! `model = "vc-router"`: the comparison network of input-queued VC routers
//! ([`icn_router::grid`]), with BookSim2's conventions so that the same configuration can be run
//! in both: Bernoulli injection into unbounded source queues, uniform traffic including the
//! source itself, packet latency = tail arrival − creation, statistics over packets created
//! in a measurement window after warm-up, then drained.
//!
//! Units: `load` is offered flits per node per cycle (BookSim `injection_rate` with
//! `injection_rate_uses_flits = 1`); sizes are in flits (BookSim `packet_size`).

pub mod doc;

pub use crate::xswitch_model::OnDeadlock;
use icn_engine::lockstep::Exchange;
use icn_engine::{Context, Invalid, Metrics, Model, ModelError, Progress};
use icn_fabric::harness::{self, OpenLoop};
use icn_fabric::traffic::{self, Sizes, TrafficConfig};
use icn_router::fabric::VcFabric;
use icn_router::vc_net::{VcNetConfig, VcPrepared};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub struct VcRouter;

/// A prepared `vc-router` point: the config with its paths resolved, the network, its
/// routing function (deadlock-checked) and the trace built once for all replications.
pub struct VcRouterPoint {
    pub cfg: VcRouterConfig,
    net: VcPrepared,
    trace: Vec<traffic::TraceRow>,
    /// Partitions simulated by this process (its threads).
    threads: usize,
    /// `Some`: each replication's network is spread over these ranks ([`Context::network`]).
    ranks: Option<Arc<dyn Exchange>>,
    /// `Some`: the workload is this Netrace trace (read and checked once).
    netrace: Option<icn_netrace::Prepared>,
}

/// The keys of `model = "vc-router"`: the network's ([`VcNetConfig`], the `vc-router` kind's
/// one description, which the cluster's `[fabric]` reads too) and the open-loop workload's,
/// at one level of the experiment file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, default)]
pub struct VcRouterConfig {
    /// The network: topology, routing, routers.
    #[serde(skip)]
    pub net: VcNetConfig,
    /// Offered flits per node per cycle.
    pub load: f64,
    /// Packet size in flits (or the small mode of the bimodal mix).
    pub size: u32,
    pub size_large: u32,
    pub large_fraction: f64,
    pub traffic: TrafficConfig,
    pub warmup: u64,
    pub measure: u64,
    pub drain: u64,
    /// `error` (default) or `report`: as for `xswitch`; only a torus with `vcs = 1` can
    /// deadlock (no dateline classes).
    pub on_deadlock: OnDeadlock,
    /// `[netrace]`: replay a Netrace trace closed-loop instead of the synthetic traffic
    /// (`load`, sizes, `traffic` and the windows are then unused; see `icn_netrace`).
    pub netrace: Option<icn_netrace::NetraceConfig>,
}

icn_engine::config_sections!(VcRouterConfig, sections first: net: VcNetConfig);

impl Default for VcRouterConfig {
    fn default() -> Self {
        VcRouterConfig {
            net: VcNetConfig::default(),
            load: 0.1,
            size: 5,
            size_large: 20,
            large_fraction: 0.0,
            traffic: TrafficConfig::default(),
            warmup: 5_000,
            measure: 20_000,
            drain: 100_000,
            on_deadlock: OnDeadlock::Error,
            netrace: None,
        }
    }
}

impl VcRouterConfig {
    fn sizes(&self) -> Sizes {
        Sizes {
            size: self.size,
            size_large: self.size_large,
            large_fraction: self.large_fraction,
        }
    }
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
        traffic::resolve_paths(&mut cfg.net.topology, &mut cfg.traffic, ctx);
        let net = cfg.net.prepare()?;
        let endpoints = net.endpoints();
        let netrace = cfg
            .netrace
            .as_ref()
            .map(|n| n.prepare(ctx, endpoints))
            .transpose()?;
        if let Some((tnet, _)) = &net.checked {
            cfg.traffic.bind(tnet)?;
        }
        let threads = ctx.partitions("threads", cfg.net.threads, net.routers(), "router")?;
        Invalid::check(
            cfg.load > 0.0 && cfg.load <= 1.0,
            "load",
            "(0, 1] flits/node/cycle",
            cfg.load,
        )?;
        cfg.sizes().validate(MAX_SIZE)?;
        traffic::check_injection(&cfg.traffic, cfg.load / cfg.sizes().mean())?;
        let trace = traffic::validate(&cfg.traffic, endpoints, net.grid(), MAX_SIZE)?;
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
        let mut fabric = point.fabric(seed)?;
        if let Some(n) = &point.netrace {
            return n.run(&mut fabric);
        }
        harness::run(
            &mut fabric,
            &point.open_loop(),
            seed,
            progress,
            |_, _, _| {},
        )
    }
}

impl VcRouterPoint {
    /// The network a replication with `seed` runs: cycles of 1 ps and flits of one "byte"
    /// (sizes are flits here; a Netrace replay hands bytes, `flit_bytes` to a flit).
    pub fn fabric(&self, seed: u64) -> Result<VcFabric, Invalid> {
        let flit = self.netrace.as_ref().map_or(1, |n| n.flit_bytes);
        let spec = self.cfg.net.spec(
            &self.net,
            seed,
            self.threads,
            self.ranks.clone(),
            1,
            flit,
            MAX_SIZE,
        );
        VcFabric::build(&spec)
    }

    /// The open-loop workload a replication drives [`VcRouterPoint::fabric`] with.
    pub fn open_loop(&self) -> OpenLoop<'_> {
        let cfg = &self.cfg;
        OpenLoop {
            load: cfg.load,
            sizes: cfg.sizes(),
            traffic: &cfg.traffic,
            trace: &self.trace,
            grid: self.net.grid(),
            warmup: cfg.warmup,
            measure: cfg.measure,
            drain: cfg.drain,
            on_deadlock: cfg.on_deadlock,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_engine::model::NoProgress;

    fn small() -> VcRouterConfig {
        VcRouterConfig {
            net: VcNetConfig::on("mesh:4x4"),
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
        let mut cfg = VcRouterConfig {
            net: VcNetConfig::on("torus:4x4"),
            size: 64,
            load: 0.5,
            drain: 5_000,
            on_deadlock: OnDeadlock::Report,
            ..small()
        };
        cfg.net.router.vcs = 1;
        cfg.net.router.buf = 2;
        cfg.net.router.watchdog = 2_000;
        cfg.net.allow_deadlock = true;
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
        assert_eq!(bad(|c| c.net.topology = "star".into()), "topology");
        assert_eq!(bad(|c| c.load = 1.5), "load");
        assert_eq!(bad(|c| c.net.router.vcs = 0), "vcs");
        assert_eq!(bad(|c| c.net.router.vcs = 17), "vcs");
        assert_eq!(bad(|c| c.size = 0), "size");
    }
}
