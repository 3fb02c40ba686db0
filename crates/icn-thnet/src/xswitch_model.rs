//! `model = "xswitch"`: a TH-Net network of X-Switches under a workload, with the
//! statistics conventions of BookSim (warm-up, measurement window, drain).
//!
//! Units: one cycle moves one 9-bit symbol per channel, so a link carries 1 byte/cycle;
//! `load` is offered payload bytes per node per cycle (a fraction of link bandwidth), sizes
//! are payload bytes. Latency of a message: from its creation at the source to the
//! acceptance of its last frame's `ID-EOF` at the destination (DMA delay, queueing, framing
//! overhead and all). Messages created in the measurement window are measured; the run then
//! keeps the traffic going until they are all delivered (or `drain` cycles pass, in which
//! case the point is past saturation and `unfinished` says how many were not delivered).

pub mod doc;

use crate::fabric::{XEngine, XSwitchFabric};
use crate::topology::Topology;
use crate::xswitch::NetParams;
use crate::xswitch_net::XSwitchNetConfig;
use icn_engine::lockstep::Exchange;
use icn_engine::{Context, Invalid, Metrics, Model, ModelError, Progress, Table};
use icn_fabric::harness::{self, OpenLoop};
use icn_fabric::traffic::{self, Sizes, TrafficConfig};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub struct XSwitch;

/// A prepared `xswitch` point: the config with its paths resolved, the topology and trace
/// parsed once for all replications.
pub struct XSwitchPoint {
    pub cfg: XSwitchConfig,
    topo: Topology,
    trace: Vec<traffic::TraceRow>,
    traced: Option<usize>,
    /// Partitions simulated by this process (its threads).
    threads: usize,
    /// `Some`: each replication's network is spread over these ranks ([`Context::network`]).
    ranks: Option<Arc<dyn Exchange>>,
    /// `Some`: the workload is this Netrace trace (read and checked once).
    netrace: Option<icn_netrace::Prepared>,
}

/// The keys of `model = "xswitch"`: the network's ([`XSwitchNetConfig`], the `xswitch`
/// kind's one description, which the cluster's `[fabric]` reads too) and the open-loop
/// workload's, at one level of the experiment file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, default)]
pub struct XSwitchConfig {
    /// The network: topology, switches, links, NIAs.
    #[serde(skip)]
    pub net: XSwitchNetConfig,
    /// Offered payload bytes per node per cycle (1.0 = a full link).
    pub load: f64,
    /// Message size in bytes (or the small mode of the bimodal mix).
    pub size: u32,
    pub size_large: u32,
    pub large_fraction: f64,
    pub traffic: TrafficConfig,
    pub warmup: u64,
    pub measure: u64,
    pub drain: u64,
    /// What a detected deadlock does: `error` stops the run with the diagnosis; `report`
    /// ends the replication early and returns `deadlocked = 1` with the diagnosis as a note
    /// (so a sweep over loads can show where a topology stops working).
    pub on_deadlock: OnDeadlock,
    /// An output port (`s0.D`) whose grants are returned as table `grants`; empty: none.
    pub trace_port: String,
    /// `[netrace]`: replay a Netrace trace closed-loop instead of the synthetic traffic
    /// (`load`, sizes, `traffic` and the windows are then unused; see `icn_netrace`).
    pub netrace: Option<icn_netrace::NetraceConfig>,
}

icn_engine::config_sections!(XSwitchConfig, sections first: net: XSwitchNetConfig);

pub use icn_fabric::harness::OnDeadlock;

impl Default for XSwitchConfig {
    fn default() -> Self {
        XSwitchConfig {
            net: XSwitchNetConfig::default(),
            load: 0.1,
            size: 256,
            size_large: 4096,
            large_fraction: 0.0,
            traffic: TrafficConfig::default(),
            warmup: 5_000,
            measure: 20_000,
            drain: 100_000,
            on_deadlock: OnDeadlock::Error,
            trace_port: String::new(),
            netrace: None,
        }
    }
}

impl XSwitchConfig {
    fn sizes(&self) -> Sizes {
        Sizes {
            size: self.size,
            size_large: self.size_large,
            large_fraction: self.large_fraction,
        }
    }
}

/// Refuses, naming `key`, an X-Switch network whose state the machine cannot hold, before it
/// is built (for the xswitch model and the cluster's xswitch fabric alike). Per port a FIFO of
/// symbols, a delay line of the link's delay and the output machine; every partition keeps
/// whole-network port vectors (`xswitch/par.rs`), so the state grows with `threads`. Frames in
/// flight and source queues come on top and grow with the load.
pub fn check_state_fits(
    key: &str,
    topo: &Topology,
    params: &NetParams,
    threads: usize,
) -> Result<(), Invalid> {
    let ports = (topo.switches * crate::symbol::PORTS + topo.nias()) as u128;
    let per_port = 8 * (params.fifo_size + params.link_delay) as u128 + 128;
    icn_engine::memory::check_fits(
        key,
        &format!(
            "the network's state ({} switches, {threads} threads)",
            topo.switches
        ),
        ports * per_port * threads as u128 + topo.nias() as u128 * 512,
        icn_engine::memory::available_memory(),
    )
}

/// Largest message (bytes).
pub const MAX_SIZE: u32 = 1 << 20;

/// Length of one X-Switch cycle on the fabric time base. The symbol-level model has no
/// clock of its own; the cluster simulator sets a real one. Here cycles are reported as
/// cycles, so any value gives the same results.
const CYCLE_PS: u64 = 1;

impl Model for XSwitch {
    const NAME: &'static str = "xswitch";
    const DOC: &'static icn_engine::ModelDoc = &doc::DOC;
    const ABOUT: &'static str = "TH-Net X-Switch network at symbol level: STOP/GO FIFOs, circulating-priority outputs, frame splitting";
    type Config = XSwitchConfig;
    const SPREADS_NETWORK: bool = true;
    type Prepared = XSwitchPoint;

    fn validate(cfg: &XSwitchConfig) -> Result<(), Invalid> {
        Self::prepare(cfg, &Context::default()).map(drop)
    }

    fn prepare(cfg: &XSwitchConfig, ctx: &Context) -> Result<XSwitchPoint, Invalid> {
        let mut cfg = cfg.clone();
        traffic::resolve_paths(&mut cfg.net.topology, &mut cfg.traffic, ctx);
        let (topo, threads) = cfg
            .net
            .prepare(|t| ctx.partitions("threads", cfg.net.threads, t.switches, "switch"))?;
        Invalid::check(
            cfg.load > 0.0 && cfg.load <= 1.0,
            "load",
            "(0, 1] bytes/node/cycle",
            cfg.load,
        )?;
        cfg.sizes().validate(MAX_SIZE)?;
        traffic::check_injection(&cfg.traffic, cfg.load / cfg.sizes().mean())?;
        let trace = traffic::validate(&cfg.traffic, topo.nias(), topo.grid, MAX_SIZE)?;
        traffic::check_windows(cfg.warmup, cfg.measure, cfg.drain)?;
        let traced = trace_port(&cfg, &topo)?;
        let netrace = cfg
            .netrace
            .as_ref()
            .map(|n| n.prepare(ctx, topo.nias()))
            .transpose()?;
        Ok(XSwitchPoint {
            cfg,
            topo,
            trace,
            traced,
            threads,
            ranks: ctx.network.clone(),
            netrace,
        })
    }

    fn work(cfg: &XSwitchConfig) -> u64 {
        cfg.warmup + cfg.measure
    }

    fn run_prepared(
        point: &XSwitchPoint,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<Metrics, ModelError> {
        let mut fabric = point.fabric()?;
        if let Some(n) = &point.netrace {
            return n.run(&mut fabric);
        }
        harness::run(
            &mut fabric,
            &point.open_loop(),
            seed,
            progress,
            |f, m, out| switch_metrics(&f.net, m, out),
        )
    }
}

impl XSwitchPoint {
    /// The network a replication runs (cycles of [`CYCLE_PS`]), with its grant log on if
    /// `trace_port` asks for one.
    pub fn fabric(&self) -> Result<XSwitchFabric, Invalid> {
        let mut fabric = XSwitchFabric::spread(
            self.topo.clone(),
            self.cfg.net.switch.clone(),
            self.threads,
            self.ranks.clone(),
            CYCLE_PS,
        )?;
        if let Some(o) = self.traced {
            fabric.net.log_grants(o);
        }
        Ok(fabric)
    }

    /// The open-loop workload a replication drives [`XSwitchPoint::fabric`] with.
    pub fn open_loop(&self) -> OpenLoop<'_> {
        let cfg = &self.cfg;
        OpenLoop {
            load: cfg.load,
            sizes: cfg.sizes(),
            traffic: &cfg.traffic,
            trace: &self.trace,
            grid: self.topo.grid,
            warmup: cfg.warmup,
            measure: cfg.measure,
            drain: cfg.drain,
            on_deadlock: cfg.on_deadlock,
        }
    }
}

/// The output port index named by `trace_port` ("s0.D"), checked against the topology.
fn trace_port(cfg: &XSwitchConfig, topo: &Topology) -> Result<Option<usize>, Invalid> {
    if cfg.trace_port.is_empty() {
        return Ok(None);
    }
    let bad = || {
        Invalid::new(
            "trace_port",
            format!(
                "`{}`: expected sK.P of a wired port, K < {}, P in A..E",
                cfg.trace_port, topo.switches
            ),
        )
    };
    let (sw, port) = cfg
        .trace_port
        .strip_prefix('s')
        .and_then(|r| r.split_once('.'))
        .ok_or_else(bad)?;
    let sw: usize = sw.parse().map_err(|_| bad())?;
    let port = match port.as_bytes() {
        [c @ b'A'..=b'E'] => usize::from(c - b'A'),
        _ => return Err(bad()),
    };
    let o = sw * crate::symbol::PORTS + port;
    if sw >= topo.switches || topo.links[o].is_none() {
        return Err(bad());
    }
    Ok(Some(o))
}

/// The X-Switch's own metrics beside the harness's: flow control and output-port waits.
fn switch_metrics(net: &XEngine, m: f64, out: &mut Metrics) {
    let c = net.counters();
    out.put(&doc::STOPS, c.stops as f64);
    out.put(&doc::GOS, c.gos as f64);
    let outputs = net.topo().links.iter().filter(|l| l.is_some()).count() as f64;
    out.put(&doc::WAIT_FRACTION, c.wait_cycles as f64 / (outputs * m));
    if let Some((_, log)) = &net.grant_log() {
        out.tables.push(Table::new(
            &doc::GRANTS,
            log.iter()
                .enumerate()
                .map(|(i, &(t, p))| vec![i as f64, t as f64, f64::from(p)])
                .collect(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_engine::model::NoProgress;

    fn small() -> XSwitchConfig {
        XSwitchConfig {
            net: XSwitchNetConfig::on("mesh:4x4"),
            load: 0.1,
            size: 128,
            warmup: 1_000,
            measure: 4_000,
            ..XSwitchConfig::default()
        }
    }

    #[test]
    fn below_saturation_accepted_equals_offered() {
        let m = XSwitch::run(&small(), 1, &NoProgress).unwrap();
        let (off, acc) = (
            m.require("offered").unwrap(),
            m.require("accepted").unwrap(),
        );
        assert!(
            (acc - off).abs() < 0.1 * off,
            "offered {off} accepted {acc}"
        );
        assert_eq!(m.require("unfinished").unwrap(), 0.0);
        assert!(m.require("latency_p50").unwrap() <= m.require("latency_p99").unwrap());
        assert!(m.require("latency_p99").unwrap() <= m.require("latency_max").unwrap());
        // A 128-byte message is two 64-byte frames of ≥ 73 symbols each, plus a 10-cycle DMA.
        assert!(
            m.require("latency_mean").unwrap() > 146.0 + 10.0,
            "{}",
            m.require("latency_mean").unwrap()
        );
        // Few messages per source in a short window: the index is noisy but well-defined.
        let j = m.require("jain_fairness").unwrap();
        assert!(j > 1.0 / 16.0 && j <= 1.0, "{j}");
        assert_eq!(m.table("per_source").unwrap().rows.len(), 16);
        assert_eq!(
            m.table("links").unwrap().rows.len(),
            48,
            "4×4 mesh: 24 links, 2 channels each"
        );
    }

    #[test]
    fn same_seed_same_result() {
        let a = XSwitch::run(&small(), 7, &NoProgress).unwrap();
        let b = XSwitch::run(&small(), 7, &NoProgress).unwrap();
        assert_eq!(a, b);
        let c = XSwitch::run(&small(), 8, &NoProgress).unwrap();
        assert_ne!(
            a.require("latency_mean").unwrap(),
            c.require("latency_mean").unwrap()
        );
    }

    #[test]
    fn hotspot_backs_up_with_stop_go() {
        let mut cfg = small();
        cfg.load = 0.3;
        cfg.traffic.pattern = traffic::TrafficPattern::Hotspot;
        cfg.traffic.hotspot_fraction = 0.5;
        let hot = XSwitch::run(&cfg, 1, &NoProgress).unwrap();
        assert!(
            hot.require("stops").unwrap() > 0.0,
            "the hot spot must back up"
        );
        assert!(hot.require("wait_fraction").unwrap() > 0.0);
    }

    #[test]
    fn bad_configs_name_their_key() {
        let bad = |f: fn(&mut XSwitchConfig)| {
            let mut c = small();
            f(&mut c);
            XSwitch::validate(&c).unwrap_err().key
        };
        assert_eq!(bad(|c| c.net.switch.frame_size = 0), "frame_size");
        assert_eq!(bad(|c| c.net.topology = "mesh:4".into()), "topology");
        assert_eq!(bad(|c| c.net.switch.stop_threshold = 64), "stop_threshold");
        assert_eq!(bad(|c| c.load = 0.0), "load");
        assert_eq!(bad(|c| c.size = 0), "size");
        assert_eq!(
            bad(|c| c.net.topology = "file:/nonexistent/graph.txt".into()),
            "topology"
        );
        assert_eq!(
            bad(|c| {
                c.traffic.pattern = traffic::TrafficPattern::Hotspot;
                c.traffic.hotspot_node = 99;
            }),
            "traffic.hotspot_node"
        );
    }

    /// A ring where every node sends long messages two hops clockwise deadlocks; with
    /// `on_deadlock = "report"` the replication returns `deadlocked = 1` and the diagnosis.
    #[test]
    fn deadlock_is_an_error_or_a_reported_result() {
        let path =
            std::env::temp_dir().join(format!("thnet-ring-trace-{}.txt", std::process::id()));
        std::fs::write(&path, "0 0 2 4096\n0 1 3 4096\n0 2 0 4096\n0 3 1 4096\n").unwrap();
        let mut cfg = XSwitchConfig {
            net: XSwitchNetConfig::on("ring:4"),
            warmup: 0,
            measure: 10_000,
            ..XSwitchConfig::default()
        };
        let sw = &mut cfg.net.switch;
        (
            sw.frame_size,
            sw.fifo_size,
            sw.stop_threshold,
            sw.go_threshold,
        ) = (4096, 16, 12, 4);
        sw.watchdog = 1_000;
        cfg.traffic.pattern = traffic::TrafficPattern::Trace;
        cfg.traffic.trace_file = path.display().to_string();
        let err = XSwitch::run(&cfg, 1, &NoProgress).unwrap_err().to_string();
        assert!(err.contains("Wait-for cycle"), "{err}");
        cfg.on_deadlock = OnDeadlock::Report;
        let m = XSwitch::run(&cfg, 1, &NoProgress).unwrap();
        assert_eq!(m.require("deadlocked").unwrap(), 1.0);
        assert!(m.notes.iter().any(|n| n.contains("Wait-for cycle")));
        std::fs::remove_file(path).ok();
    }

    #[test]
    fn trace_port_logs_grants_and_is_checked() {
        let path = std::env::temp_dir().join(format!("thnet-3to1-{}.txt", std::process::id()));
        std::fs::write(&path, "0 0 3 64\n0 1 3 64\n0 2 3 64\n").unwrap();
        let mut cfg = XSwitchConfig {
            net: XSwitchNetConfig::on("star"),
            warmup: 0,
            measure: 2_000,
            trace_port: "s0.D".into(),
            ..XSwitchConfig::default()
        };
        (cfg.net.switch.frame_size, cfg.net.switch.dma_delay) = (16, 4);
        cfg.traffic.pattern = traffic::TrafficPattern::Trace;
        cfg.traffic.trace_file = path.display().to_string();
        let m = XSwitch::run(&cfg, 1, &NoProgress).unwrap();
        let inputs: Vec<f64> = m
            .table("grants")
            .unwrap()
            .rows
            .iter()
            .map(|r| r[2])
            .collect();
        assert_eq!(inputs, [0.0, 1.0, 2.0].repeat(4), "A0 B0 C0 A1 …");
        cfg.trace_port = "s1.A".into();
        assert_eq!(XSwitch::validate(&cfg).unwrap_err().key, "trace_port");
        std::fs::remove_file(path).ok();
    }

    #[test]
    fn config_rejects_unknown_keys_and_fills_defaults() {
        let c: XSwitchConfig =
            toml::from_str("topology = \"torus:4x4\"\n[traffic]\npattern = \"transpose\"\n")
                .unwrap();
        assert_eq!(c.net.switch.frame_size, 64);
        assert_eq!(c.traffic.pattern, traffic::TrafficPattern::Transpose);
        assert!(toml::from_str::<XSwitchConfig>("frame = 3\n").is_err());
    }
}
