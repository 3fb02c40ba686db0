//! `model = "vc-router"`: the comparison network of input-queued VC routers
//! ([`crate::vcnet`]), with BookSim2's conventions so that the same configuration can be run
//! in both: Bernoulli injection into unbounded source queues, uniform traffic including the
//! source itself, packet latency = tail arrival − creation, statistics over packets created
//! in a measurement window after warm-up, then drained.
//!
//! Units: `load` is offered flits per node per cycle (BookSim `injection_rate` with
//! `injection_rate_uses_flits = 1`); sizes are in flits (BookSim `packet_size`).

use crate::alloc::AllocKind;
use crate::topology::Topology;
use crate::traffic::{self, Sizes, Source, TrafficConfig, Workload};
use crate::vcnet::{PacketDone, VcNet, VcObserver, VcParams};
pub use crate::xswitch_model::OnDeadlock;
use icn_engine::rng::stream;
use icn_engine::stats::{Histogram, Summary, jain_fairness};
use icn_engine::{Context, Invalid, Metrics, Model, ModelError, Progress, Table};
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

const MAX_SIZE: u32 = 65_536;

struct Stats {
    window: (u64, u64),
    latency: Histogram,
    per_source_latency: Vec<Summary>,
    accepted: Vec<u64>,
    offered: Vec<u64>,
    outstanding: u64,
}

impl VcObserver for Stats {
    fn delivered(&mut self, now: u64, p: &PacketDone) {
        let (a, b) = self.window;
        if (a..b).contains(&now) {
            self.accepted[p.src] += u64::from(p.len);
        }
        if (a..b).contains(&p.created) {
            self.latency.add(now - p.created);
            self.per_source_latency[p.src].add((now - p.created) as f64);
            self.outstanding -= 1;
        }
    }
}

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
        let topo = &point.topo;
        let grid = topo.grid.expect("checked");
        let n = topo.nias();
        let trace = &point.trace;
        let workload = Workload::new(&cfg.traffic, n, topo.grid, cfg.sizes());
        let rate = cfg.load / cfg.sizes().mean();
        let is_trace = cfg.traffic.pattern == traffic::Pattern::Trace;
        let mut sources: Vec<Source> = (0..n)
            .map(|s| {
                Source::new(
                    s,
                    rate,
                    stream(seed, s as u64),
                    is_trace.then_some(&trace[..]),
                )
            })
            .collect();
        let mut next_at: Vec<u64> = sources.iter().map(|src| src.next).collect();
        let mut net = VcNet::new(grid, cfg.params())?;
        let end = cfg.warmup + cfg.measure;
        let mut st = Stats {
            window: (cfg.warmup, end),
            latency: Histogram::default(),
            per_source_latency: vec![Summary::default(); n],
            accepted: vec![0; n],
            offered: vec![0; n],
            outstanding: 0,
        };
        while net.now < end + cfg.drain {
            let now = net.now;
            if now >= end && st.outstanding == 0 {
                break;
            }
            net.measuring = (cfg.warmup..end).contains(&now);
            for s in 0..n {
                // `next_at` mirrors the sources' `next` in one small array: reading it from
                // each 100-byte `Source` cost a cache miss per source and cycle.
                if next_at[s] > now {
                    continue;
                }
                let src = &mut sources[s];
                while src.next <= now {
                    let a = src.arrive(&workload);
                    net.enqueue(s, a.dst, a.size);
                    if net.measuring {
                        st.offered[s] += u64::from(a.size);
                        st.outstanding += 1;
                    }
                }
                next_at[s] = src.next;
            }
            match net.step(&mut st) {
                Err(ModelError::Failed(why))
                    if net.deadlocked && cfg.on_deadlock == OnDeadlock::Report =>
                {
                    let mut m = report(cfg, &net, &st, n);
                    m.notes.push(why);
                    return Ok(m);
                }
                other => other?,
            }
            if now % 4096 == 4095 && now < end {
                progress.advance(4096);
            }
        }
        Ok(report(cfg, &net, &st, n))
    }
}

fn report(cfg: &VcRouterConfig, net: &VcNet, st: &Stats, n: usize) -> Metrics {
    let m = cfg.measure as f64;
    let nf = n as f64;
    let mut out = Metrics::default();
    out.push(
        "latency_mean",
        st.latency.mean(),
        "cycles",
        "packet creation → tail arrival",
    );
    out.push(
        "latency_p50",
        st.latency.quantile(0.5),
        "cycles",
        "median packet latency",
    );
    out.push(
        "latency_p99",
        st.latency.quantile(0.99),
        "cycles",
        "99th percentile packet latency",
    );
    out.push(
        "latency_max",
        st.latency.max(),
        "cycles",
        "largest packet latency",
    );
    let offered: u64 = st.offered.iter().sum();
    let accepted: u64 = st.accepted.iter().sum();
    out.push(
        "offered",
        offered as f64 / (nf * m),
        "flits/node/cycle",
        "flits created per node per cycle",
    );
    out.push(
        "accepted",
        accepted as f64 / (nf * m),
        "flits/node/cycle",
        "flits delivered per node per cycle",
    );
    let links: Vec<f64> = net
        .inter_router_channels()
        .map(|c| net.busy(c) as f64 / m)
        .collect();
    let mean = links.iter().sum::<f64>() / links.len().max(1) as f64;
    out.push(
        "link_util_mean",
        mean,
        "",
        "router-to-router channel busy fraction, mean",
    );
    out.push(
        "link_util_max",
        links.iter().copied().fold(f64::NAN, f64::max),
        "",
        "busiest router-to-router channel",
    );
    let per_source: Vec<f64> = st.accepted.iter().map(|&b| b as f64 / m).collect();
    out.push(
        "jain_fairness",
        jain_fairness(&per_source),
        "",
        "Jain index of accepted throughput per source",
    );
    out.push(
        "unfinished",
        st.outstanding as f64,
        "packets",
        "measured packets not delivered by the end of the drain",
    );
    out.push(
        "deadlocked",
        f64::from(u8::from(net.deadlocked)),
        "",
        "1 when the watchdog stopped the run (on_deadlock = \"report\")",
    );
    out.push(
        "cycles_simulated",
        net.now as f64,
        "cycles",
        "clock cycles simulated (warm-up, window and drain), for speed figures",
    );
    out.tables.push(Table {
        name: "links".into(),
        columns: ["router", "port", "utilisation"].map(String::from).to_vec(),
        rows: net
            .inter_router_channels()
            .map(|ch| vec![(ch / 5) as f64, (ch % 5) as f64, net.busy(ch) as f64 / m])
            .collect(),
        ci95: vec![],
    });
    out.tables.push(Table {
        name: "per_source".into(),
        columns: ["source", "offered", "accepted", "latency_mean"]
            .map(String::from)
            .to_vec(),
        rows: (0..n)
            .map(|s| {
                let lat = &st.per_source_latency[s];
                vec![
                    s as f64,
                    st.offered[s] as f64 / m,
                    st.accepted[s] as f64 / m,
                    if lat.count == 0 { f64::NAN } else { lat.mean },
                ]
            })
            .collect(),
        ci95: vec![],
    });
    if st.outstanding > 0 && !net.deadlocked {
        out.notes.push(format!(
            "{} measured packets were still undelivered after {} drain cycles: the load is past saturation",
            st.outstanding, cfg.drain
        ));
    }
    out
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
