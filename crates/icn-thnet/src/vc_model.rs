//! `model = "vc-router"`: the comparison network of input-queued VC routers
//! ([`crate::vcnet`]), with BookSim2's conventions so that the same configuration can be run
//! in both: Bernoulli injection into unbounded source queues, uniform traffic including the
//! source itself, packet latency = tail arrival − creation, statistics over packets created
//! in a measurement window after warm-up, then drained.
//!
//! Units: `load` is offered flits per node per cycle (BookSim `injection_rate` with
//! `injection_rate_uses_flits = 1`); sizes are in flits (BookSim `packet_size`).

use crate::alloc::AllocKind;
use crate::fabric::VcFabric;
use crate::harness::{self, OpenLoop};
use crate::topology::Topology;
use crate::traffic::{self, Sizes, TrafficConfig};
use crate::vcnet::VcParams;
pub use crate::xswitch_model::OnDeadlock;
use icn_engine::{Context, Invalid, Metrics, Model, ModelError, Progress};
use serde::{Deserialize, Serialize};

pub struct VcRouter;

/// A prepared `vc-router` point: the config with its paths resolved, the topology and trace
/// parsed once for all replications.
pub struct VcRouterPoint {
    pub cfg: VcRouterConfig,
    topo: Topology,
    trace: Vec<traffic::TraceRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VcRouterConfig {
    /// `mesh:XxY`, `torus:XxY` or `ring:N` (dimension-order routing).
    pub topology: String,
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
}

impl Default for VcRouterConfig {
    fn default() -> Self {
        VcRouterConfig {
            topology: "mesh:8x8".into(),
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

    fn topology(&self) -> Result<Topology, Invalid> {
        let t = Topology::from_spec(&self.topology)?;
        if t.grid.is_none() {
            return Err(Invalid::new(
                "topology",
                format!(
                    "the VC router needs mesh:XxY, torus:XxY or ring:N, got `{}`",
                    self.topology
                ),
            ));
        }
        Ok(t)
    }
}

/// Largest packet (flits).
pub const MAX_SIZE: u32 = 65_536;

impl Model for VcRouter {
    const NAME: &'static str = "vc-router";
    const ABOUT: &'static str = "input-queued virtual-channel router network with BookSim2 iq conventions (comparison for TH-Net)";
    type Config = VcRouterConfig;
    type Prepared = VcRouterPoint;

    fn validate(cfg: &VcRouterConfig) -> Result<(), Invalid> {
        Self::prepare(cfg, &Context::default()).map(drop)
    }

    fn prepare(cfg: &VcRouterConfig, ctx: &Context) -> Result<VcRouterPoint, Invalid> {
        let mut cfg = cfg.clone();
        traffic::resolve_paths(&mut cfg.topology, &mut cfg.traffic, ctx);
        let topo = cfg.topology()?;
        cfg.params().validate()?;
        Invalid::check(
            cfg.load > 0.0 && cfg.load <= 1.0,
            "load",
            "(0, 1] flits/node/cycle",
            cfg.load,
        )?;
        cfg.sizes().validate(MAX_SIZE)?;
        let trace = traffic::validate(&cfg.traffic, topo.nias(), topo.grid, MAX_SIZE)?;
        traffic::check_windows(cfg.warmup, cfg.measure, cfg.drain)?;
        Ok(VcRouterPoint { cfg, topo, trace })
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
        let grid = point.topo.grid.expect("checked in prepare");
        // Sizes are flits here: one "byte" of the fabric interface is one flit.
        let mut fabric = VcFabric::new(grid, cfg.params(), 1, 1, MAX_SIZE)?;
        let w = OpenLoop {
            load: cfg.load,
            sizes: cfg.sizes(),
            traffic: &cfg.traffic,
            trace: &point.trace,
            grid: Some(grid),
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
        let lat = m.value("latency_mean");
        assert!((23.5..30.0).contains(&lat), "{lat}");
        let (off, acc) = (m.value("offered"), m.value("accepted"));
        assert!((acc - off).abs() < 0.1 * off, "{off} {acc}");
        assert_eq!(m.value("unfinished"), 0.0);
        // 4×4 mesh: 2·4·3 = 24 links, 48 router-to-router channels; their mean is the scalar.
        let links = m.table("links").unwrap();
        assert_eq!(links.rows.len(), 48);
        let mean = links.rows.iter().map(|r| r[2]).sum::<f64>() / 48.0;
        assert!((mean - m.value("link_util_mean")).abs() < 1e-12);
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
            ..small()
        };
        let m = VcRouter::run(&cfg, 1, &NoProgress).unwrap();
        let d = m.value("deadlocked");
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
        assert_eq!(bad(|c| c.vcs = 9), "vcs");
        assert_eq!(bad(|c| c.size = 0), "size");
    }
}
