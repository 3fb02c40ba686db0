//! `model = "cluster"`: a workload on host/NIC endpoints over a fabric.
//!
//! ```toml
//! model = "cluster"
//! [workload]          # kind = pingpong | window | alltoall | bcast | trace | ti
//! kind = "bcast"
//! algorithm = "ilbm"  # bcast: binomial | chain | scatter_allgather | ilbm | clbm | naulbm | aulbm
//! bytes = 65536
//! [nic]               # kind = zero | simple | pipeline (see icn_cluster::nic)
//! kind = "pipeline"
//! design = "myvia"
//! [fabric]            # kind = ideal | flow | xswitch | vc-router | sci-ring, with that fabric's keys
//! kind = "xswitch"
//! topology = "ccc:3,3"
//! ```

use crate::collectives;
use crate::nic::{Endpoint, NicConfig};
use crate::patterns;
use crate::program::{self, Program};
use crate::sim::{Cluster as Sim, Outcome, RunError};
use crate::ti::action::CollKind;
use crate::ti::reader::{self, Summary, TraceSet};
use crate::ti::replay::{self, ReplayConfig, TiOutcome};
use icn_bcast::schemes::Scheme;
use icn_engine::lockstep::Exchange;
use icn_engine::model::Ticker;
use icn_engine::stats::Histogram;
use icn_engine::{Context, Invalid, Metrics, Model, ModelError, Progress, Table};
use icn_fabric::flow::FlowConfig;
use icn_fabric::ideal::IdealConfig;
use icn_fabric::{Fabric, Ps};
use icn_sci::SciConfig;
use icn_sci::fabric::SciRingFabric;
use icn_thnet::fabric::{VcFabric, VcSpec, VcTopology, XSwitchFabric};
use icn_thnet::frame::Check;
use icn_thnet::router::VcParams;
use icn_thnet::topology::Topology;
use icn_thnet::vc_model;
use icn_thnet::xswitch::NetParams;
use icn_topo::Network;
use icn_topo::routing::Routing;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub struct Cluster;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterConfig {
    pub workload: WorkloadConfig,
    pub nic: NicConfig,
    pub fabric: FabricConfig,
    /// Hosts (the TI replay's `compute`).
    pub host: HostConfig,
    /// The algorithm of each collective (the TI replay).
    pub algorithms: AlgorithmsConfig,
}

/// `[host]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Host speed, flops per second: a TI `compute F` takes `F / flops` seconds.
    pub flops: f64,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig { flops: 1e9 }
    }
}

/// `[algorithms]`: per collective an algorithm name of [`crate::collectives`] (SimGrid's
/// names); unset: that collective's default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AlgorithmsConfig {
    pub barrier: Option<String>,
    pub bcast: Option<String>,
    pub reduce: Option<String>,
    pub allreduce: Option<String>,
    pub alltoall: Option<String>,
    pub alltoallv: Option<String>,
    pub gather: Option<String>,
    pub gatherv: Option<String>,
    pub scatter: Option<String>,
    pub scatterv: Option<String>,
    pub allgather: Option<String>,
    pub allgatherv: Option<String>,
    pub reduce_scatter: Option<String>,
    pub scan: Option<String>,
    pub exscan: Option<String>,
}

impl AlgorithmsConfig {
    fn named(&self, kind: CollKind) -> Option<&str> {
        match kind {
            CollKind::Barrier => self.barrier.as_deref(),
            CollKind::Bcast => self.bcast.as_deref(),
            CollKind::Reduce => self.reduce.as_deref(),
            CollKind::Allreduce => self.allreduce.as_deref(),
            CollKind::Alltoall => self.alltoall.as_deref(),
            CollKind::Alltoallv => self.alltoallv.as_deref(),
            CollKind::Gather => self.gather.as_deref(),
            CollKind::Gatherv => self.gatherv.as_deref(),
            CollKind::Scatter => self.scatter.as_deref(),
            CollKind::Scatterv => self.scatterv.as_deref(),
            CollKind::Allgather => self.allgather.as_deref(),
            CollKind::Allgatherv => self.allgatherv.as_deref(),
            CollKind::ReduceScatter => self.reduce_scatter.as_deref(),
            CollKind::Scan => self.scan.as_deref(),
            CollKind::Exscan => self.exscan.as_deref(),
        }
    }

    /// Every collective's algorithm, checked to exist and to run on `ranks` ranks (for the
    /// collectives the trace calls).
    pub fn resolve(
        &self,
        ranks: usize,
        used: &[CollKind],
    ) -> Result<Vec<&'static collectives::Algorithm>, Invalid> {
        CollKind::ALL
            .iter()
            .map(|&k| {
                let key = format!("algorithms.{}", k.name());
                let a = match self.named(k) {
                    Some(name) => collectives::find(k, name).map_err(|e| Invalid::new(&key, e))?,
                    None => collectives::default_for(k),
                };
                if used.contains(&k) {
                    a.check(ranks).map_err(|e| Invalid::new(&key, e))?;
                }
                Ok(a)
            })
            .collect()
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    #[default]
    Pingpong,
    Window,
    Alltoall,
    Bcast,
    Trace,
    /// A SimGrid time-independent trace (`file`: an index, a folder or a shared trace).
    Ti,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BcastAlgorithm {
    #[default]
    Binomial,
    Chain,
    ScatterAllgather,
    Ilbm,
    Clbm,
    Naulbm,
    Aulbm,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadConfig {
    pub kind: WorkloadKind,
    /// Message bytes (pingpong, window, all-to-all: each message; bcast: the whole message).
    pub bytes: u64,
    /// Pingpong round trips, window messages.
    pub iterations: u32,
    /// Ranks of all-to-all and bcast; 0 = one per fabric endpoint.
    pub ranks: usize,
    pub algorithm: BcastAlgorithm,
    /// Segments of the pipelined chain.
    pub segments: u32,
    pub root: usize,
    /// Trace file (kind = "trace"; kind = "ti": an index, a folder with `index.txt`, or a
    /// shared trace), relative to the experiment file.
    pub file: String,
    /// ti: sends below this many bytes complete locally (eager); larger ones wait for their
    /// transfer (rendezvous). SMPI's `smpi/send-is-detached-thresh`.
    pub eager_bytes: u64,
    /// ti: host time one `test` costs, µs (SMPI's `smpi/test`).
    pub test_us: f64,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            kind: WorkloadKind::Pingpong,
            bytes: 8,
            iterations: 10,
            ranks: 0,
            algorithm: BcastAlgorithm::Binomial,
            segments: 8,
            root: 0,
            file: String::new(),
            eager_bytes: 65_536,
            test_us: 100.0,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FabricKind {
    #[default]
    Ideal,
    /// Messages as flows sharing links max-min fairly (SimGrid's CM02).
    Flow,
    Xswitch,
    VcRouter,
    SciRing,
}

/// `[fabric]`: the kind and the keys of every kind (each kind reads its own).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FabricConfig {
    pub kind: FabricKind,
    /// ideal: an icn-topo graph spec; xswitch: ring:N, mesh:XxY, torus:XxY, star, tree:D,
    /// ccc:H,K, file:PATH; vc-router: mesh:XxY, torus:XxY, ring:N; sci-ring: ring:N.
    pub topology: String,
    /// ideal: per-hop latency, ns.
    pub hop_ns: f64,
    /// ideal, flow: link bandwidth, MB/s (ideal: 0 = infinite).
    pub link_mbs: f64,
    /// flow: latency of every link, ns (a crossbar route has two: up and down).
    pub link_lat_ns: f64,
    /// flow: TCP window bound, bytes (0 = none).
    pub tcp_gamma: f64,
    /// flow: the reverse route carries 5 % of each flow's rate.
    pub crosstraffic: bool,
    /// ideal: packets share links.
    pub contention: bool,
    /// ideal: largest packet, bytes.
    pub max_packet: u32,
    /// xswitch, vc-router: clock, MHz (an X-Switch link moves 1 byte per cycle).
    pub clock_mhz: f64,
    /// xswitch: payload bytes per frame.
    pub frame_size: u32,
    /// xswitch: input FIFO symbols, STOP and GO thresholds, NIA DMA delay (cycles).
    pub fifo_size: usize,
    pub stop_threshold: usize,
    pub go_threshold: usize,
    pub dma_delay: u64,
    /// vc-router: bytes per flit, largest packet in flits, VCs, buffer flits per VC.
    pub flit_bytes: u32,
    pub max_packet_flits: u32,
    pub vcs: usize,
    pub buf: usize,
    /// xswitch, vc-router: cycles without progress that count as a deadlock.
    pub watchdog: u64,
    /// sci-ring: data bytes per SCI send (16, 64 or 256); messages are cut into such sends.
    pub sci_data_bytes: u16,
    /// sci-ring: intelligent A/B aging instead of standard A/B aging.
    pub intelligent: bool,
    /// xswitch, vc-router: threads simulating the fabric (0: every core); results are the
    /// same at any count.
    pub threads: usize,
}

impl Default for FabricConfig {
    fn default() -> Self {
        FabricConfig {
            kind: FabricKind::Ideal,
            topology: "path:2".into(),
            hop_ns: 550.0,
            link_mbs: 160.0,
            link_lat_ns: 50_000.0,
            tcp_gamma: 4_194_304.0,
            crosstraffic: true,
            contention: true,
            max_packet: 1 << 20,
            clock_mhz: 160.0,
            frame_size: 256,
            fifo_size: 64,
            stop_threshold: 48,
            go_threshold: 16,
            dma_delay: 0,
            flit_bytes: 16,
            max_packet_flits: 64,
            vcs: 2,
            buf: 8,
            watchdog: 1_000_000,
            sci_data_bytes: 64,
            intelligent: false,
            threads: 1,
        }
    }
}

/// What checking a `[fabric]` table built: its endpoint count, and the parsed X-Switch or
/// grid topology or the any-radix VC router's network with its checked routing.
struct Checked {
    endpoints: usize,
    topo: Option<Topology>,
    vc_any: Option<(Arc<Network>, Arc<dyn Routing>)>,
}

impl Checked {
    fn endpoints(endpoints: usize) -> Checked {
        Checked {
            endpoints,
            topo: None,
            vc_any: None,
        }
    }
}

/// A prepared cluster point: the program and everything to build a fabric per replication.
pub struct ClusterPoint {
    pub cfg: ClusterConfig,
    pub program: Program,
    /// A TI replay (workload.kind = "ti"): its files, what the pre-scan found, how it runs.
    pub ti: Option<TiPoint>,
    pub endpoint: Endpoint,
    topo: Option<Topology>,
    /// vc-router on a network other than a mesh, torus or ring: the icn-topo network and
    /// its routing (checked free of deadlock in `prepare`).
    vc_any: Option<(Arc<Network>, Arc<dyn Routing>)>,
    /// Step count of the broadcast scheme (bcast with an icn-bcast algorithm).
    pub scheme_steps: Option<u32>,
    /// Threads (partitions) simulating an xswitch or vc-router fabric in this process.
    threads: usize,
    /// `Some`: an xswitch or vc-router fabric is spread over these ranks
    /// ([`Context::network`]); the other fabrics run whole on every rank.
    ranks: Option<Arc<dyn Exchange>>,
}

impl ClusterConfig {
    /// The config with the fabric's graph file (`file:PATH` of the ideal fabric and the
    /// X-Switch, `graph:file:PATH` of the VC routers) resolved against the experiment file's
    /// folder, as the workload's trace and the NIC's profile files are.
    fn with_paths_resolved(&self, ctx: &Context) -> ClusterConfig {
        let mut cfg = self.clone();
        cfg.fabric.topology = ctx.resolve_spec(&cfg.fabric.topology);
        cfg
    }
}

impl FabricConfig {
    fn cycle_ps(&self) -> Result<Ps, Invalid> {
        Invalid::check(
            self.clock_mhz.is_finite() && (1.0..=1e6).contains(&self.clock_mhz),
            "fabric.clock_mhz",
            "1 ..= 10^6 MHz",
            self.clock_mhz,
        )?;
        Ok((1e6 / self.clock_mhz).round() as Ps)
    }

    /// The SCI ring of `topology = "ring:N"` (every other ring key at the `sci` defaults).
    fn sci(&self) -> Result<SciConfig, Invalid> {
        let nodes = self
            .topology
            .strip_prefix("ring:")
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| {
                Invalid::new(
                    "fabric.topology",
                    format!("the SCI ring needs ring:N, got `{}`", self.topology),
                )
            })?;
        let cfg = SciConfig {
            nodes,
            data_bytes: vec![self.sci_data_bytes],
            ..SciConfig::default()
        };
        cfg.validate().map_err(|mut e| {
            e.key = match e.key.as_str() {
                "nodes" => "fabric.topology".into(),
                k if k.starts_with("data_bytes") => "fabric.sci_data_bytes".into(),
                k => format!("fabric.{k}"),
            };
            e
        })?;
        Ok(cfg)
    }

    /// Largest packet payload the fabric takes (what `Fabric::max_packet_bytes` will say).
    fn max_packet_bytes(&self) -> u64 {
        match self.kind {
            FabricKind::Ideal => u64::from(self.max_packet),
            FabricKind::Flow => u64::from(u32::MAX),
            FabricKind::Xswitch => u64::from(icn_thnet::xswitch_model::MAX_SIZE),
            FabricKind::VcRouter => u64::from(self.flit_bytes) * u64::from(self.max_packet_flits),
            FabricKind::SciRing => u64::from(self.sci_data_bytes).max(1),
        }
    }

    fn ideal(&self) -> IdealConfig {
        IdealConfig {
            topology: self.topology.clone(),
            hop_ns: self.hop_ns,
            link_mbs: self.link_mbs,
            contention: self.contention,
            max_packet: self.max_packet,
        }
    }

    fn flow(&self) -> FlowConfig {
        FlowConfig {
            topology: self.topology.clone(),
            link_mbs: self.link_mbs,
            link_lat_ns: self.link_lat_ns,
            tcp_gamma: self.tcp_gamma,
            crosstraffic: self.crosstraffic,
        }
    }

    fn xswitch_params(&self) -> NetParams {
        NetParams {
            link_delay: 1,
            fifo_size: self.fifo_size,
            stop_threshold: self.stop_threshold,
            go_threshold: self.go_threshold,
            frame_size: self.frame_size,
            check: Check::Crc16,
            dma_delay: self.dma_delay,
            watchdog: self.watchdog,
        }
    }

    fn vc_params(&self) -> VcParams {
        VcParams::unit_delays(self.vcs, self.buf, self.watchdog)
    }

    /// The `threads` key with 0 resolved to the machine's cores.
    fn thread_count(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    /// The graph the broadcast schemes run on (the fabric's switch graph).
    fn graph(&self) -> Result<icn_topo::Graph, Invalid> {
        let spec = match (self.kind, self.topology.split_once(':')) {
            (FabricKind::Ideal, _) => self.topology.clone(),
            (_, Some(("ccc", a))) => format!("ccc:{a}"),
            (_, Some(("mesh", a))) => format!("mesh:{a}"),
            (_, Some(("torus", a))) => format!("torus:{a}"),
            (_, Some(("ring", a))) => format!("ring:{a}"),
            _ => {
                return Err(Invalid::new(
                    "workload.algorithm",
                    format!(
                        "the icn-bcast schemes need a ccc, mesh, torus or ring fabric, not `{}`",
                        self.topology
                    ),
                ));
            }
        };
        icn_topo::parse_graph_spec(&spec)
            .map_err(|e| Invalid::new("fabric.topology", e.to_string()))
    }

    /// A key set to something other than its default that the chosen kind does not read is
    /// an error, not silently ignored (the table holds the keys of every kind).
    fn check_keys_apply(&self) -> Result<(), Invalid> {
        use FabricKind::*;
        let d = FabricConfig::default();
        let keys: [(&str, bool, &[FabricKind]); 20] = [
            ("hop_ns", self.hop_ns != d.hop_ns, &[Ideal]),
            ("link_mbs", self.link_mbs != d.link_mbs, &[Ideal, Flow]),
            ("link_lat_ns", self.link_lat_ns != d.link_lat_ns, &[Flow]),
            ("tcp_gamma", self.tcp_gamma != d.tcp_gamma, &[Flow]),
            ("crosstraffic", self.crosstraffic != d.crosstraffic, &[Flow]),
            ("contention", self.contention != d.contention, &[Ideal]),
            ("max_packet", self.max_packet != d.max_packet, &[Ideal]),
            (
                "clock_mhz",
                self.clock_mhz != d.clock_mhz,
                &[Xswitch, VcRouter],
            ),
            ("frame_size", self.frame_size != d.frame_size, &[Xswitch]),
            ("fifo_size", self.fifo_size != d.fifo_size, &[Xswitch]),
            (
                "stop_threshold",
                self.stop_threshold != d.stop_threshold,
                &[Xswitch],
            ),
            (
                "go_threshold",
                self.go_threshold != d.go_threshold,
                &[Xswitch],
            ),
            ("dma_delay", self.dma_delay != d.dma_delay, &[Xswitch]),
            ("flit_bytes", self.flit_bytes != d.flit_bytes, &[VcRouter]),
            (
                "max_packet_flits",
                self.max_packet_flits != d.max_packet_flits,
                &[VcRouter],
            ),
            ("vcs", self.vcs != d.vcs, &[VcRouter]),
            ("threads", self.threads != d.threads, &[Xswitch, VcRouter]),
            ("buf", self.buf != d.buf, &[VcRouter]),
            (
                "watchdog",
                self.watchdog != d.watchdog,
                &[Xswitch, VcRouter],
            ),
            (
                "sci_data_bytes",
                self.sci_data_bytes != d.sci_data_bytes,
                &[SciRing],
            ),
        ];
        for (key, set, kinds) in keys {
            if set && !kinds.contains(&self.kind) {
                return Err(Invalid::new(
                    format!("fabric.{key}"),
                    format!("does not apply to kind = \"{}\"", self.kind_name()),
                ));
            }
        }
        if self.intelligent && self.kind != SciRing {
            return Err(Invalid::new(
                "fabric.intelligent",
                format!("does not apply to kind = \"{}\"", self.kind_name()),
            ));
        }
        Ok(())
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            FabricKind::Ideal => "ideal",
            FabricKind::Flow => "flow",
            FabricKind::Xswitch => "xswitch",
            FabricKind::VcRouter => "vc-router",
            FabricKind::SciRing => "sci-ring",
        }
    }

    /// A vc-router network that is not a mesh, torus or ring: `ccc:H,K` (as for the
    /// X-Switch) or any icn-topo network spec, with its default routing (up*/down* on graphs
    /// and fat trees, minimal on dragonflies, dimension order on cubes), checked for
    /// channel-dependency cycles before anything runs.
    fn vc_network(&self) -> Result<(Arc<Network>, Arc<dyn Routing>), Invalid> {
        let spec = match self.topology.split_once(':') {
            Some(("ccc", a)) => format!("graph:ccc:{a}"),
            _ => self.topology.clone(),
        };
        let bad = |e: icn_topo::TopoError| Invalid::new("fabric.topology", e.to_string());
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
        Ok((Arc::new(net), Arc::from(routing)))
    }

    /// Checks the keys and builds what every replication's fabric needs, once.
    fn check(&self, ctx: &Context) -> Result<Checked, Invalid> {
        self.check_keys_apply()?;
        let named = |mut e: Invalid| {
            if !e.key.starts_with("fabric.") {
                e.key = format!("fabric.{}", e.key);
            }
            e
        };
        match self.kind {
            FabricKind::Ideal => {
                let f = self.ideal().build()?;
                Ok(Checked::endpoints(f.endpoints()))
            }
            FabricKind::Flow => {
                let f = self.flow().build()?;
                Ok(Checked::endpoints(f.endpoints()))
            }
            FabricKind::Xswitch => {
                self.cycle_ps()?;
                self.xswitch_params().validate().map_err(named)?;
                let spec = match self.topology.strip_prefix("file:") {
                    Some(p) => format!("file:{}", ctx.resolve(p).display()),
                    None => self.topology.clone(),
                };
                let t = Topology::from_spec(&spec).map_err(named)?;
                Invalid::check(
                    self.threads <= 1024 && self.thread_count() <= t.switches,
                    "fabric.threads",
                    "0 (every core) ..= 1024, at most one thread per switch",
                    self.threads,
                )?;
                icn_thnet::xswitch_model::check_state_fits(
                    "fabric.topology",
                    &t,
                    &self.xswitch_params(),
                    self.thread_count(),
                )?;
                Ok(Checked {
                    endpoints: t.nias(),
                    topo: Some(t),
                    vc_any: None,
                })
            }
            FabricKind::SciRing => Ok(Checked::endpoints(self.sci()?.nodes)),
            FabricKind::VcRouter => {
                self.cycle_ps()?;
                self.vc_params().validate().map_err(named)?;
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
                    .any(|p| self.topology.starts_with(p));
                if !grid {
                    let (net, routing) = self.vc_network()?;
                    Invalid::check(
                        self.thread_count() <= net.routers() as usize,
                        "fabric.threads",
                        "at most one thread per router",
                        self.thread_count(),
                    )?;
                    return Ok(Checked {
                        endpoints: net.terminals() as usize,
                        topo: None,
                        vc_any: Some((net, routing)),
                    });
                }
                let t = Topology::from_spec(&self.topology).map_err(named)?;
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
                Ok(Checked {
                    endpoints: t.nias(),
                    topo: Some(t),
                    vc_any: None,
                })
            }
        }
    }
}

impl ClusterPoint {
    /// A fresh fabric for one replication, behind the common interface (the cluster loop
    /// takes any fabric; one indirect call per step costs nothing next to a network cycle).
    /// `seed` (the replication's) seeds the VC routers' random routing choices.
    pub fn fabric_for(&self, seed: u64) -> Result<Box<dyn Fabric>, Invalid> {
        let f = &self.cfg.fabric;
        Ok(match f.kind {
            FabricKind::Ideal => Box::new(f.ideal().build()?),
            FabricKind::Flow => Box::new(f.flow().build()?),
            FabricKind::Xswitch => Box::new(XSwitchFabric::spread(
                self.topo.clone().expect("prepared"),
                f.xswitch_params(),
                self.threads,
                self.ranks.clone(),
                f.cycle_ps()?,
            )?),
            FabricKind::SciRing => Box::new(SciRingFabric::new(&f.sci()?, f.intelligent)?),
            FabricKind::VcRouter => Box::new(VcFabric::build(&VcSpec {
                topology: match &self.vc_any {
                    Some((net, routing)) => VcTopology::Any {
                        net: net.clone(),
                        routing: routing.clone(),
                    },
                    None => {
                        VcTopology::Grid(self.topo.as_ref().and_then(|t| t.grid).expect("prepared"))
                    }
                },
                params: f.vc_params(),
                global_delay: 0,
                router_seed: VcSpec::router_seed(seed),
                threads: self.threads,
                ranks: self.ranks.clone(),
                cycle_ps: f.cycle_ps()?,
                flit_bytes: f.flit_bytes,
                max_packet_flits: f.max_packet_flits,
            })?),
        })
    }

    /// [`ClusterPoint::fabric_for`] replication seed 0.
    pub fn fabric(&self) -> Result<Box<dyn Fabric>, Invalid> {
        self.fabric_for(0)
    }
}

/// A prepared TI replay.
#[derive(Clone, Debug)]
pub struct TiPoint {
    pub set: TraceSet,
    pub summary: Summary,
    pub replay: ReplayConfig,
}

/// Finds and pre-scans the trace (every line checked before anything runs) and resolves
/// the hosts' speed and the collectives' algorithms.
fn prepare_ti(cfg: &ClusterConfig, endpoints: usize, ctx: &Context) -> Result<TiPoint, Invalid> {
    let w = &cfg.workload;
    Invalid::check(
        !w.file.is_empty(),
        "workload.file",
        "a TI index, folder or trace",
        "nothing",
    )?;
    let path = ctx.resolve(&w.file);
    let bad = |e: reader::TraceError| Invalid::new("workload.file", e.to_string());
    let set = TraceSet::locate(&path).map_err(bad)?;
    if !(1..=endpoints).contains(&set.ranks()) {
        return Err(Invalid::new(
            "workload.file",
            format!(
                "{}: {} ranks; the fabric has {endpoints} endpoints (1 ..= {endpoints} ranks)",
                path.display(),
                set.ranks()
            ),
        ));
    }
    let summary = reader::prescan(&set).map_err(bad)?;
    let algorithms = cfg.algorithms.resolve(set.ranks(), &summary.collectives)?;
    Ok(TiPoint {
        set,
        summary,
        replay: ReplayConfig {
            host_flops: cfg.host.flops,
            eager_bytes: w.eager_bytes,
            test_s: w.test_us * 1e-6,
            algorithms,
        },
    })
}

/// Replays a prepared TI trace on `fabric`. Progress is the cluster's fixed
/// [`crate::sim::PROGRESS_UNITS`] (what [`Cluster`]'s `work` promised), moved by the share of
/// the pre-scanned actions replayed.
pub fn run_ti<F: Fabric + ?Sized>(
    fabric: &mut F,
    ti: &TiPoint,
    endpoint: &Endpoint,
    progress: &dyn Progress,
) -> Result<TiOutcome, replay::ReplayError> {
    let actions = ti.summary.actions.iter().sum();
    let mut ticker = Ticker::new(progress, actions, crate::sim::PROGRESS_UNITS);
    let out = replay::Replay::new(fabric, &ti.set, &ti.replay, endpoint)?.run(&mut ticker)?;
    ticker.finish();
    Ok(out)
}

fn report_ti(o: &TiOutcome) -> Metrics {
    let mut m = Metrics::default();
    let ranks = o.finish.len().max(1) as f64;
    let total = o.finish.iter().copied().max().unwrap_or(0);
    let compute = o.compute.iter().copied().max().unwrap_or(0);
    m.push(
        "completion_us",
        total as f64 / US,
        "µs",
        "simulated time until the last rank ended (SimGrid's \"Simulation time\")",
    );
    m.push(
        "compute_us",
        compute as f64 / US,
        "µs",
        "the busiest rank's compute and sleep time: what a compute-only run takes",
    );
    m.push(
        "comm_us",
        total.saturating_sub(compute) as f64 / US,
        "µs",
        "communication time: completion − compute",
    );
    m.push(
        "wait_us",
        o.wait.iter().map(|&t| t as f64).sum::<f64>() / ranks / US,
        "µs",
        "mean per rank of time blocked on messages",
    );
    m.push(
        "messages",
        o.messages as f64,
        "",
        "point-to-point messages (collectives included)",
    );
    m.push("bytes", o.bytes as f64, "B", "bytes they carried");
    m.push("actions", o.actions as f64, "", "trace actions replayed");
    m.push(
        "packets",
        o.packets as f64,
        "",
        "packets the fabric carried",
    );
    let per_msg = |ps: u128| ps as f64 / o.messages.max(1) as f64 / US;
    m.push(
        "host_us",
        per_msg(o.host_ps),
        "µs",
        "mean per message: host stages on both sides (0 with the zero NIC)",
    );
    m.push(
        "nic_us",
        per_msg(o.nic_ps),
        "µs",
        "mean per message: NIC stages and waiting for them (0 with the zero NIC)",
    );
    m.push(
        "fabric_us",
        per_msg(o.fabric_ps),
        "µs",
        "mean per message: first packet injected → last delivered (zero NIC: match → delivered)",
    );
    for (i, name) in replay::slot_names().iter().enumerate() {
        if o.slot_calls[i] > 0 {
            m.push(
                &format!("time_{name}_us"),
                o.slot_ps[i] as f64 / ranks / US,
                "µs",
                &format!(
                    "mean per rank of time in {name} ({} calls in all)",
                    o.slot_calls[i]
                ),
            );
        }
    }
    m.tables.push(Table {
        name: "ranks".into(),
        columns: ["rank", "finish_us", "compute_us", "wait_us"]
            .map(String::from)
            .to_vec(),
        rows: (0..o.finish.len())
            .map(|r| {
                vec![
                    r as f64,
                    o.finish[r] as f64 / US,
                    o.compute[r] as f64 / US,
                    o.wait[r] as f64 / US,
                ]
            })
            .collect(),
        ci95: vec![],
    });
    m
}

fn build_program(
    cfg: &ClusterConfig,
    endpoints: usize,
    ctx: &Context,
) -> Result<(Program, Option<u32>), Invalid> {
    let w = &cfg.workload;
    Invalid::check(
        w.bytes <= program::MAX_BYTES,
        "workload.bytes",
        "0 ..= 2^30",
        w.bytes,
    )?;
    // A pingpong round trip is 4 operations: the most that fit `MAX_OPS` (the range said
    // 10^6, and pingpongs above 524 288 were then refused as too many operations).
    let max_iterations = program::MAX_OPS / 4;
    Invalid::check(
        (1..=max_iterations).contains(&(w.iterations as usize)),
        "workload.iterations",
        &format!("1 ..= {max_iterations}"),
        w.iterations,
    )?;
    let ranks = if w.ranks == 0 { endpoints } else { w.ranks };
    Invalid::check(
        (2..=endpoints).contains(&ranks),
        "workload.ranks",
        &format!("2 ..= {endpoints} (the fabric's endpoints), or 0 for all"),
        ranks,
    )?;
    Invalid::check(
        w.root < ranks,
        "workload.root",
        &format!("0 ..= {}", ranks - 1),
        w.root,
    )?;
    if let Some(ops) = planned_ops(w, ranks) {
        Invalid::check(
            ops <= program::MAX_OPS as u128,
            "workload",
            &format!("at most {} operations", program::MAX_OPS),
            ops,
        )?;
    }
    let mut steps = None;
    let program = match w.kind {
        WorkloadKind::Pingpong => patterns::pingpong(w.bytes, w.iterations),
        WorkloadKind::Window => patterns::window(w.bytes, w.iterations),
        WorkloadKind::Alltoall => patterns::alltoall(ranks, w.bytes),
        WorkloadKind::Bcast => {
            Invalid::check(
                (1..=1 << 16).contains(&w.segments),
                "workload.segments",
                "1 ..= 65536",
                w.segments,
            )?;
            let scheme = match w.algorithm {
                BcastAlgorithm::Binomial => {
                    return Ok((patterns::binomial(ranks, w.root, w.bytes), None));
                }
                BcastAlgorithm::Chain => {
                    return Ok((patterns::chain(ranks, w.root, w.bytes, w.segments), None));
                }
                BcastAlgorithm::ScatterAllgather => {
                    return Ok((patterns::scatter_allgather(ranks, w.root, w.bytes), None));
                }
                BcastAlgorithm::Ilbm => Scheme::Ilbm,
                BcastAlgorithm::Clbm => Scheme::Clbm,
                BcastAlgorithm::Naulbm => Scheme::Naulbm,
                BcastAlgorithm::Aulbm => Scheme::Aulbm,
            };
            let g = cfg.fabric.graph()?;
            if ranks != g.len() || endpoints != g.len() {
                return Err(Invalid::new(
                    "workload.ranks",
                    "the icn-bcast schemes run on every node of the fabric: leave ranks = 0",
                ));
            }
            // The scheme's own estimate (CLBM on a large CCC: minutes of tree building).
            let opts = icn_bcast::schemes::RunOptions {
                seed: 1,
                ..Default::default()
            };
            icn_bcast::limits::check(
                &g,
                &[scheme],
                &[w.root],
                &opts,
                icn_engine::memory::available_memory(),
            )
            .map_err(|e| {
                let key = match e.key {
                    icn_bcast::limits::Key::Scheme => "workload.algorithm",
                    icn_bcast::limits::Key::Source => "workload.root",
                    _ => "fabric.topology",
                };
                Invalid::new(key, e.why)
            })?;
            let bad = |e: String| Invalid::new("workload.algorithm", e);
            steps = Some(patterns::scheme_steps(&g, scheme, w.root, 1).map_err(bad)?);
            patterns::scheme(&g, scheme, w.root, w.bytes, 1).map_err(bad)?
        }
        WorkloadKind::Trace => {
            let path = ctx.resolve(&w.file);
            let text = icn_engine::input::read_to_string(&path).map_err(|e| {
                Invalid::new(
                    "workload.file",
                    format!("cannot read `{}`: {e}", path.display()),
                )
            })?;
            let p = program::parse_trace(&text, &path.display().to_string())
                .map_err(|e| Invalid::new("workload.file", e.to_string()))?;
            Invalid::check(
                p.len() <= endpoints,
                "workload.file",
                &format!("≤ {endpoints} ranks (the fabric's endpoints)"),
                p.len(),
            )?;
            p
        }
        WorkloadKind::Ti => {
            return Err(Invalid::new(
                "workload.kind",
                "a TI trace is prepared by the TI replay, not as a program",
            ));
        }
    };
    program.check().map_err(|e| Invalid::new("workload", e))?;
    Ok((program, steps))
}

/// Operations the program of `w` on `ranks` ranks will have, known before it is built, so
/// that a program the machine cannot hold is refused instead of allocated (a pipelined chain
/// over 10 000 ranks in 65 536 segments is 1.3·10⁹ operations; all-to-all over 10 000 ranks
/// took 14 s to build before [`Program::check`] refused it). For the icn-bcast schemes a
/// lower bound (every other rank receives at least once); `None` for traces (bounded by
/// their file).
fn planned_ops(w: &WorkloadConfig, ranks: usize) -> Option<u128> {
    let (r, it) = (ranks as u128, u128::from(w.iterations));
    let edges = r.saturating_sub(1);
    Some(match w.kind {
        WorkloadKind::Pingpong => 4 * it,
        WorkloadKind::Window => 2 * it + 2,
        WorkloadKind::Alltoall => 2 * r * edges,
        WorkloadKind::Bcast => match w.algorithm {
            BcastAlgorithm::Chain => {
                let segs = u128::from(w.segments.max(1)).min(u128::from(w.bytes.max(1)));
                2 * edges * segs
            }
            BcastAlgorithm::ScatterAllgather => 2 * edges + 2 * r * edges,
            _ => 2 * edges,
        },
        WorkloadKind::Trace | WorkloadKind::Ti => return None,
    })
}

/// Runs the point on a fabric it builds (replication seed 0).
pub fn run_point(
    point: &ClusterPoint,
    progress: &dyn Progress,
) -> Result<(Outcome, Metrics), ModelError> {
    run_replication(point, 0, progress)
}

/// Runs the point on a fabric it builds for the replication of `seed`.
pub fn run_replication(
    point: &ClusterPoint,
    seed: u64,
    progress: &dyn Progress,
) -> Result<(Outcome, Metrics), ModelError> {
    let mut fabric = point.fabric_for(seed)?;
    let result = run_on(fabric.as_mut(), point, progress);
    result.map_err(|e| ModelError::Failed(e.to_string()))
}

fn run_on<F: Fabric + ?Sized>(
    f: &mut F,
    point: &ClusterPoint,
    progress: &dyn Progress,
) -> Result<(Outcome, Metrics), RunError> {
    let outcome = Sim::new(f, &point.endpoint, &point.program).run(progress)?;
    let m = report(&outcome, f, point);
    Ok((outcome, m))
}

const US: f64 = 1e6;

/// Packets one cluster run may move (≈ 100 bytes of state and one event each).
pub const MAX_PACKETS: u64 = 1 << 26;

fn report<F: Fabric + ?Sized>(o: &Outcome, f: &F, point: &ClusterPoint) -> Metrics {
    let mut m = Metrics::default();
    let mut finish = Histogram::default();
    for &t in &o.finish {
        finish.add(t / 1000);
    }
    let makespan = o.finish.iter().copied().max().unwrap_or(0);
    let ranks = o.finish.len() as f64;
    m.push(
        "completion_us",
        makespan as f64 / US,
        "µs",
        "time until the last rank finished",
    );
    m.push(
        "completion_mean_us",
        o.finish.iter().map(|&t| t as f64).sum::<f64>() / ranks / US,
        "µs",
        "mean over ranks of the time each finished",
    );
    m.push(
        "completion_p99_us",
        finish.quantile(0.99) / 1e3,
        "µs",
        "99th percentile over ranks of the finish time",
    );
    let per_msg = |ps: u128| {
        if o.messages == 0 {
            0.0
        } else {
            ps as f64 / o.messages as f64 / US
        }
    };
    m.push(
        "message_us",
        per_msg(o.message_ps),
        "µs",
        "mean message time, post → complete in the receiver's memory",
    );
    m.push(
        "host_us",
        per_msg(o.host_ps),
        "µs",
        "of which host stages (post, poll)",
    );
    m.push(
        "nic_us",
        per_msg(o.nic_ps),
        "µs",
        "of which NIC stages and queueing at them",
    );
    m.push(
        "fabric_us",
        per_msg(o.fabric_ps),
        "µs",
        "of which in the fabric (first packet in → last packet out)",
    );
    m.push(
        "wait_us",
        o.wait_ps as f64 / ranks / US,
        "µs",
        "mean per rank of time blocked waiting for a message or a synchronous send",
    );
    m.push("messages", o.messages as f64, "", "messages sent");
    m.push(
        "packets",
        o.packets as f64,
        "",
        "packets injected into the fabric",
    );
    m.push("bytes", o.bytes as f64, "B", "payload bytes moved");
    let bw = if makespan == 0 {
        0.0
    } else {
        o.bytes as f64 / (makespan as f64 / US)
    };
    m.push(
        "bandwidth_mbs",
        bw,
        "MB/s",
        "payload bytes / completion time",
    );
    let loads = f.channel_loads();
    let cyc = f.cycle_ps() as f64;
    let util: Vec<f64> = loads
        .iter()
        .map(|l| {
            if makespan == 0 {
                0.0
            } else {
                l.busy as f64 * cyc / makespan as f64
            }
        })
        .collect();
    m.push(
        "link_util_mean",
        if util.is_empty() {
            f64::NAN
        } else {
            util.iter().sum::<f64>() / util.len() as f64
        },
        "",
        "switch-to-switch channel busy fraction over the run, mean",
    );
    m.push(
        "link_util_max",
        util.iter().copied().fold(f64::NAN, f64::max),
        "",
        "busiest switch-to-switch channel",
    );
    if let Some(steps) = point.scheme_steps {
        m.push(
            "scheme_steps",
            f64::from(steps),
            "steps",
            "the broadcast scheme's step count (paper's model)",
        );
    }
    m.tables.push(Table {
        name: "ranks".into(),
        columns: ["rank", "finish_us"].map(String::from).to_vec(),
        rows: o
            .finish
            .iter()
            .enumerate()
            .map(|(r, &t)| vec![r as f64, t as f64 / US])
            .collect(),
        ci95: vec![],
    });
    m
}

impl Model for Cluster {
    const NAME: &'static str = "cluster";
    const ABOUT: &'static str = "a program's messages through host/NIC endpoints into any fabric (ideal, xswitch, vc-router, sci-ring)";
    /// Its xswitch and vc-router fabrics; the ideal and sci-ring fabrics run whole on every rank.
    const SPREADS_NETWORK: bool = true;
    type Config = ClusterConfig;
    type Prepared = ClusterPoint;

    fn validate(cfg: &ClusterConfig) -> Result<(), Invalid> {
        Self::prepare(cfg, &Context::default()).map(drop)
    }

    fn prepare(cfg: &ClusterConfig, ctx: &Context) -> Result<ClusterPoint, Invalid> {
        let cfg = &cfg.with_paths_resolved(ctx);
        let Checked {
            endpoints,
            topo,
            vc_any,
        } = cfg.fabric.check(ctx)?;
        let endpoint = Endpoint::build(&cfg.nic, |p| {
            if p.contains('/') || p.ends_with(".toml") {
                ctx.resolve(p).display().to_string()
            } else {
                p.to_owned()
            }
        })?;
        // Checked whatever the workload, so that a wrong value is never silently kept.
        Invalid::check(
            cfg.host.flops.is_finite() && (1.0..=1e18).contains(&cfg.host.flops),
            "host.flops",
            "1 ..= 10^18 flop/s",
            cfg.host.flops,
        )?;
        Invalid::check(
            cfg.workload.test_us.is_finite() && (0.0..=1e9).contains(&cfg.workload.test_us),
            "workload.test_us",
            "0 ..= 10^9 µs",
            cfg.workload.test_us,
        )?;
        let ti = match cfg.workload.kind {
            WorkloadKind::Ti => Some(prepare_ti(cfg, endpoints, ctx)?),
            _ => None,
        };
        let (program, scheme_steps) = match ti {
            Some(_) => (Program::new(0), None),
            None => build_program(cfg, endpoints, ctx)?,
        };
        // Every packet is an event and a slot in memory: bound them before the run.
        let max = cfg.fabric.max_packet_bytes();
        let packets: u64 = program
            .ranks
            .iter()
            .flatten()
            .map(|op| match *op {
                program::Op::Send { bytes, .. } | program::Op::Ssend { bytes, .. } => {
                    endpoint.packet_count(bytes, max)
                }
                _ => 0,
            })
            .sum();
        Invalid::check(
            packets <= MAX_PACKETS,
            "workload",
            &format!(
                "at most {MAX_PACKETS} packets in all (the fabric carries ≤ {max} B per packet)"
            ),
            packets,
        )?;
        let ranks = match cfg.fabric.kind {
            FabricKind::Xswitch | FabricKind::VcRouter => ctx.network.clone(),
            FabricKind::Ideal | FabricKind::Flow | FabricKind::SciRing => None,
        };
        // Partitions of an xswitch or vc-router fabric (the other fabrics run whole).
        let threads = match cfg.fabric.kind {
            FabricKind::Xswitch | FabricKind::VcRouter => {
                let routers = vc_any
                    .as_ref()
                    .map(|(net, _)| net.routers() as usize)
                    .or(topo.as_ref().map(|t| t.switches))
                    .unwrap_or(0);
                ctx.partitions("fabric.threads", cfg.fabric.threads, routers, "router")?
            }
            FabricKind::Ideal | FabricKind::Flow | FabricKind::SciRing => 1,
        };
        Ok(ClusterPoint {
            cfg: cfg.clone(),
            program,
            ti,
            endpoint,
            topo,
            vc_any,
            scheme_steps,
            threads,
            ranks,
        })
    }

    /// Fixed units, moved by the fraction of operations and packets done (the iterations
    /// said nothing of a broadcast or a trace: the bar sat at 0 % for a whole long run).
    fn work(_cfg: &ClusterConfig) -> u64 {
        crate::sim::PROGRESS_UNITS
    }

    fn run_prepared(
        point: &ClusterPoint,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<Metrics, ModelError> {
        // Only the VC routers' random routing choices (if their routing makes any) depend on
        // the seed; otherwise replications are identical by construction.
        if let Some(ti) = &point.ti {
            let mut fabric = point.fabric_for(seed)?;
            return run_ti(fabric.as_mut(), ti, &point.endpoint, progress)
                .map(|o| report_ti(&o))
                .map_err(|e| ModelError::Failed(e.to_string()));
        }
        run_replication(point, seed, progress).map(|(_, m)| m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The operation count checked before a program is built is the count of the program
    /// built, for every built-in pattern (a lower bound for the icn-bcast schemes).
    #[test]
    fn planned_ops_match_the_built_programs() {
        for kind in [
            WorkloadKind::Pingpong,
            WorkloadKind::Window,
            WorkloadKind::Alltoall,
            WorkloadKind::Bcast,
        ] {
            for algorithm in [
                BcastAlgorithm::Binomial,
                BcastAlgorithm::Chain,
                BcastAlgorithm::ScatterAllgather,
                BcastAlgorithm::Ilbm,
            ] {
                for (bytes, segments) in [(0, 8), (5, 8), (4096, 3)] {
                    let mut cfg = ClusterConfig::default();
                    cfg.fabric.topology = "ccc:3,3".into();
                    cfg.workload = WorkloadConfig {
                        kind,
                        algorithm,
                        bytes,
                        segments,
                        iterations: 7,
                        ..WorkloadConfig::default()
                    };
                    let (p, _) = build_program(&cfg, 24, &Context::default()).unwrap();
                    let planned = planned_ops(&cfg.workload, 24).unwrap();
                    if algorithm == BcastAlgorithm::Ilbm && kind == WorkloadKind::Bcast {
                        assert!(planned <= p.ops() as u128, "{kind:?} {algorithm:?}");
                    } else {
                        assert_eq!(planned, p.ops() as u128, "{kind:?} {algorithm:?} {bytes}");
                    }
                }
            }
        }
    }

    /// A chain of 10 000 ranks in 65 536 segments (1.3·10⁹ operations) was built until
    /// memory ran out; now it is refused before, naming `workload`.
    #[test]
    fn programs_beyond_the_operation_limit_are_refused_before_they_are_built() {
        let mut cfg = ClusterConfig::default();
        cfg.fabric.topology = "mesh:100x100".into();
        cfg.workload.kind = WorkloadKind::Bcast;
        cfg.workload.algorithm = BcastAlgorithm::Chain;
        cfg.workload.segments = 65_536;
        cfg.workload.bytes = 1 << 30;
        let e = Cluster::prepare(&cfg, &Context::default()).err().unwrap();
        assert_eq!(e.key, "workload");
        assert!(
            e.message.contains("at most 2097152 operations"),
            "{}",
            e.message
        );
    }
}
