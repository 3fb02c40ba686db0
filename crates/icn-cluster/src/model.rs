//! `model = "cluster"`: a workload on host/NIC endpoints over a fabric.
//!
//! ```toml
//! model = "cluster"
//! [workload]          # kind = pingpong | window | alltoall | bcast | trace | ti | dumpi
//! kind = "bcast"
//! algorithm = "ilbm"  # bcast: binomial | chain | scatter_allgather | ilbm | clbm | naulbm | aulbm
//! bytes = 65536
//! [nic]               # kind = zero | simple | pipeline (see icn_cluster::nic)
//! kind = "pipeline"
//! design = "myvia"
//! [fabric]            # kind = ideal | flow | xswitch | vc-router | sci-ring | sci-switched, with that fabric's keys
//! kind = "xswitch"
//! topology = "ccc:3,3"
//! ```

pub mod doc;

use crate::collectives;
use crate::fabric::Prepared;
pub use crate::fabric::{FabricConfig, FabricKind};
use crate::nic::{Endpoint, NicConfig};
use crate::patterns;
use crate::placement::{Placed, Placement, PlacementConfig};
use crate::program::{self, Program};
use crate::sim::{ClusterSim, Outcome, RunError};
use crate::ti::action::CollKind;
use crate::ti::reader::{self, Summary, TraceSet};
use crate::ti::replay::{self, ReplayConfig, TiOutcome};
use crate::timeline::Timeline;
use icn_bcast::schemes::Scheme;
use icn_engine::lockstep::Exchange;
use icn_engine::model::Ticker;
use icn_engine::stats::Histogram;
use icn_engine::{Context, Invalid, Metrics, Model, ModelError, Progress, Table};
use icn_fabric::Fabric;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The `cluster` model: reads the config, prepares each point and runs replications through
/// [`ClusterSim`], the simulator.
pub struct Cluster;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterConfig {
    pub workload: WorkloadConfig,
    pub nic: NicConfig,
    pub fabric: FabricConfig,
    /// Which endpoint each rank runs on.
    pub placement: PlacementConfig,
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
    /// A DUMPI trace (`file`: its `.meta` file), replayed as a TI trace.
    Dumpi,
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

/// A prepared cluster point: the program and everything to build a fabric per replication.
pub struct ClusterPoint {
    pub cfg: ClusterConfig,
    pub program: Program,
    /// A TI replay (workload.kind = "ti"): its files, what the pre-scan found, how it runs.
    pub ti: Option<TiPoint>,
    pub endpoint: Endpoint,
    /// The fabric's topology or network, built and checked once.
    fabric: Prepared,
    /// Where the ranks run, unless rank `r` runs on endpoint `r`.
    placement: Option<Arc<Placement>>,
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
        let spec = ctx.resolve_spec(cfg.fabric.topology());
        *cfg.fabric.topology_mut() = spec;
        cfg
    }
}

impl ClusterPoint {
    /// A fresh fabric for one replication, behind the common interface (the cluster loop
    /// takes any fabric; one indirect call per step costs nothing next to a network cycle),
    /// addressed by rank. `seed` (the replication's) seeds the VC routers' random routing
    /// choices.
    pub fn fabric_for(&self, seed: u64) -> Result<Box<dyn Fabric>, Invalid> {
        let f = self
            .fabric
            .build(&self.cfg.fabric, seed, self.threads, self.ranks.clone())?;
        Ok(match &self.placement {
            Some(p) => Box::new(Placed::new(f, p.clone())),
            None => f,
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
/// Open files a TI replay leaves to everything but its ranks' traces (standard streams, the
/// experiment and output files, the pre-scan's reader).
const SPARE_FILES: u64 = 16;

fn prepare_ti(cfg: &ClusterConfig, endpoints: usize, ctx: &Context) -> Result<TiPoint, Invalid> {
    let w = &cfg.workload;
    Invalid::check(
        !w.file.is_empty(),
        "workload.file",
        "a TI index, folder or trace, or a DUMPI .meta file",
        "nothing",
    )?;
    let path = ctx.resolve(&w.file);
    let bad = |e: reader::TraceError| Invalid::new("workload.file", e.to_string());
    let set = match w.kind {
        WorkloadKind::Dumpi => TraceSet::locate_dumpi(&path, cfg.host.flops),
        _ => TraceSet::locate(&path),
    }
    .map_err(bad)?;
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
    // Each rank holds one open file while it replays (its file, or its part of a shared
    // trace): past the process's limit the run would fail part-way with exit 1.
    let open_files = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    if let Some(limit) = open_files
        && set.ranks() as u64 + SPARE_FILES > limit
    {
        return Err(Invalid::new(
            "workload.file",
            format!(
                "{}: {} ranks hold {} open files while they replay, and this process may open \
                 {limit} (`ulimit -n`; icnlab raises its soft limit to the hard one): at most \
                 {} ranks here",
                path.display(),
                set.ranks(),
                set.ranks(),
                limit.saturating_sub(SPARE_FILES)
            ),
        ));
    }
    let summary = reader::prescan(&set, cfg.host.flops).map_err(bad)?;
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

/// The timeline of the point's replication of seed 0, at most `cap` spans
/// ([`crate::timeline`]): the calls, waits and channel loads of a trace replay (`ti`, `dumpi`).
/// `Err` names why there is none: another workload, or the run failed.
pub fn timeline(point: &ClusterPoint, cap: usize) -> Result<Timeline, ModelError> {
    let Some(ti) = &point.ti else {
        return Err(ModelError::Failed(
            "a timeline is recorded for trace replays (workload.kind = \"ti\" or \"dumpi\")".into(),
        ));
    };
    let mut fabric = point.fabric_for(0)?;
    let mut t = Timeline::new(cap, ti.set.ranks());
    let progress = icn_engine::model::NoProgress;
    let actions = ti.summary.actions.iter().sum();
    let mut ticker = Ticker::new(&progress, actions, crate::sim::PROGRESS_UNITS);
    replay::Replay::new(fabric.as_mut(), &ti.set, &ti.replay, &point.endpoint)
        .and_then(|r| r.recording(&mut t).run(&mut ticker))
        .map_err(|e| ModelError::Failed(e.to_string()))?;
    Ok(t)
}

fn report_ti(o: &TiOutcome, summary: &Summary) -> Metrics {
    let mut m = Metrics::default();
    if !summary.skipped.is_empty() {
        let calls: Vec<String> = summary
            .skipped
            .iter()
            .map(|(name, n)| format!("{name} × {n}"))
            .collect();
        m.notes.push(format!(
            "MPI calls in the trace that the replay does not model (their time counts as \
             compute): {}",
            calls.join(", ")
        ));
    }
    let ranks = o.finish.len().max(1) as f64;
    let total = o.finish.iter().copied().max().unwrap_or(0);
    let compute = o.compute.iter().copied().max().unwrap_or(0);
    m.put(&doc::TI_COMPLETION_US, total as f64 / US);
    m.put(&doc::TI_COMPUTE_US, compute as f64 / US);
    m.put(&doc::TI_COMM_US, total.saturating_sub(compute) as f64 / US);
    m.put(
        &doc::TI_WAIT_US,
        o.wait.iter().map(|&t| t as f64).sum::<f64>() / ranks / US,
    );
    m.put(&doc::TI_MESSAGES, o.messages as f64);
    m.put(&doc::TI_BYTES, o.bytes as f64);
    m.put(&doc::TI_ACTIONS, o.actions as f64);
    m.put(&doc::TI_PACKETS, o.packets as f64);
    let per_msg = |ps: u128| ps as f64 / o.messages.max(1) as f64 / US;
    m.put(&doc::TI_HOST_US, per_msg(o.host_ps));
    m.put(&doc::TI_NIC_US, per_msg(o.nic_ps));
    m.put(&doc::TI_FABRIC_US, per_msg(o.fabric_ps));
    m.put(&doc::TI_WIRE_US, per_msg(o.wire_ps));
    m.put(&doc::TI_FABRIC_WAIT_US, per_msg(o.fabric_wait_ps));
    for (i, name) in replay::slot_names().iter().enumerate() {
        if o.slot_calls[i] > 0 {
            m.push(
                &format!("time_{name}_us"),
                o.slot_ps[i] as f64 / ranks / US,
                doc::TI_TIME.unit,
                &format!(
                    "{} {name} ({} calls in all)",
                    doc::TI_TIME.meaning,
                    o.slot_calls[i]
                ),
            );
        }
    }
    m.tables.push(Table::new(
        &doc::TI_RANKS,
        (0..o.finish.len())
            .map(|r| {
                vec![
                    r as f64,
                    o.finish[r] as f64 / US,
                    o.compute[r] as f64 / US,
                    o.wait[r] as f64 / US,
                ]
            })
            .collect(),
    ));
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
        WorkloadKind::Ti | WorkloadKind::Dumpi => {
            return Err(Invalid::new(
                "workload.kind",
                "a TI or DUMPI trace is prepared by the TI replay, not as a program",
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
        WorkloadKind::Trace | WorkloadKind::Ti | WorkloadKind::Dumpi => return None,
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
    let outcome = ClusterSim::new(f, &point.endpoint, &point.program).run(progress)?;
    let m = report(&outcome, f, point);
    Ok((outcome, m))
}

const US: f64 = 1e6;

/// Packets one cluster run may move: each is an event (its memory is bounded by the fabric's
/// input queues, not by the packets of a message: `crate::transmit`), so this bounds the run's time.
pub const MAX_PACKETS: u64 = 1 << 26;

fn report<F: Fabric + ?Sized>(o: &Outcome, f: &F, point: &ClusterPoint) -> Metrics {
    let mut m = Metrics::default();
    let mut finish = Histogram::default();
    for &t in &o.finish {
        finish.add(t / 1000);
    }
    let makespan = o.finish.iter().copied().max().unwrap_or(0);
    let ranks = o.finish.len() as f64;
    m.put(&doc::COMPLETION_US, makespan as f64 / US);
    m.put(
        &doc::COMPLETION_MEAN_US,
        o.finish.iter().map(|&t| t as f64).sum::<f64>() / ranks / US,
    );
    m.put(&doc::COMPLETION_P99_US, finish.quantile(0.99) / 1e3);
    let per_msg = |ps: u128| {
        if o.messages == 0 {
            0.0
        } else {
            ps as f64 / o.messages as f64 / US
        }
    };
    m.put(&doc::MESSAGE_US, per_msg(o.message_ps));
    m.put(&doc::HOST_US, per_msg(o.host_ps));
    m.put(&doc::NIC_US, per_msg(o.nic_ps));
    m.put(&doc::FABRIC_US, per_msg(o.fabric_ps));
    m.put(&doc::WIRE_US, per_msg(o.wire_ps));
    m.put(&doc::FABRIC_WAIT_US, per_msg(o.fabric_wait_ps));
    m.put(&doc::WAIT_US, o.wait_ps as f64 / ranks / US);
    m.put(&doc::MESSAGES, o.messages as f64);
    m.put(&doc::PACKETS, o.packets as f64);
    m.put(&doc::BYTES, o.bytes as f64);
    let bw = if makespan == 0 {
        0.0
    } else {
        o.bytes as f64 / (makespan as f64 / US)
    };
    m.put(&doc::BANDWIDTH_MBS, bw);
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
    m.put(
        &doc::LINK_UTIL_MEAN,
        if util.is_empty() {
            f64::NAN
        } else {
            util.iter().sum::<f64>() / util.len() as f64
        },
    );
    m.put(
        &doc::LINK_UTIL_MAX,
        util.iter().copied().fold(f64::NAN, f64::max),
    );
    if let Some(steps) = point.scheme_steps {
        m.put(&doc::SCHEME_STEPS, f64::from(steps));
    }
    m.tables.push(Table::new(
        &doc::RANKS,
        o.finish
            .iter()
            .enumerate()
            .map(|(r, &t)| vec![r as f64, t as f64 / US])
            .collect(),
    ));
    m
}

impl Model for Cluster {
    const NAME: &'static str = "cluster";
    const DOC: &'static icn_engine::ModelDoc = &doc::DOC;
    const ABOUT: &'static str = "a program's messages through host/NIC endpoints into any fabric (ideal, flow, xswitch, vc-router, sci-ring, sci-switched)";
    /// Its xswitch and vc-router fabrics; the ideal, flow and SCI fabrics run whole on every rank.
    const SPREADS_NETWORK: bool = true;
    type Config = ClusterConfig;
    type Prepared = ClusterPoint;

    fn validate(cfg: &ClusterConfig) -> Result<(), Invalid> {
        Self::prepare(cfg, &Context::default()).map(drop)
    }

    fn prepare(cfg: &ClusterConfig, ctx: &Context) -> Result<ClusterPoint, Invalid> {
        let cfg = &cfg.with_paths_resolved(ctx);
        let fabric = cfg.fabric.prepare()?;
        let endpoints = fabric.endpoints();
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
            WorkloadKind::Ti | WorkloadKind::Dumpi => Some(prepare_ti(cfg, endpoints, ctx)?),
            _ => None,
        };
        let (program, scheme_steps) = match ti {
            Some(_) => (Program::new(0), None),
            None => build_program(cfg, endpoints, ctx)?,
        };
        // Every packet is an event: bound them before the run.
        let max = cfg.fabric.max_packet_bytes();
        let packets: u64 = program
            .ranks
            .iter()
            .flatten()
            .map(|op| match *op {
                program::Op::Send { bytes, .. } | program::Op::Ssend { bytes, .. } => {
                    endpoint.cut(bytes, max).count()
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
        let ranks = program.len().max(ti.as_ref().map_or(0, |t| t.set.ranks()));
        let placement = cfg.placement.place(ranks, endpoints, &|p| ctx.resolve(p))?;
        if scheme_steps.is_some() && !placement.is_linear() {
            return Err(Invalid::new(
                "placement.kind",
                "\"linear\" (the icn-bcast schemes are built on the fabric's own node numbers)",
            ));
        }
        // The static deadlock check over the endpoint pairs the workload uses (a TI trace:
        // every pair of its ranks, which its collectives may join).
        let at = &placement.endpoint;
        let mut pairs: Box<dyn Iterator<Item = (usize, usize)>> = match &ti {
            Some(_) => {
                Box::new((0..ranks).flat_map(move |s| (0..ranks).map(move |d| (at[s], at[d]))))
            }
            None => Box::new(program.ranks.iter().enumerate().flat_map(move |(r, ops)| {
                ops.iter().filter_map(move |op| match *op {
                    program::Op::Send { peer, .. } | program::Op::Ssend { peer, .. } => {
                        Some((at[r], at[peer]))
                    }
                    _ => None,
                })
            })),
        };
        fabric.check_pairs(&cfg.fabric, &mut pairs)?;
        drop(pairs);
        // Partitions of an xswitch or vc-router fabric (the other fabrics run whole), and
        // the ranks they are spread over.
        let (threads, ranks) = match cfg.fabric.threads() {
            Some(t) => (
                ctx.partitions("fabric.threads", t, fabric.routers(), "router")?,
                ctx.network.clone(),
            ),
            None => (1, None),
        };
        Ok(ClusterPoint {
            cfg: cfg.clone(),
            program,
            ti,
            endpoint,
            fabric,
            placement: (!placement.is_linear()).then(|| Arc::new(placement)),
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
                .map(|o| report_ti(&o, &ti.summary))
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
                    *cfg.fabric.topology_mut() = "ccc:3,3".into();
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
        *cfg.fabric.topology_mut() = "mesh:100x100".into();
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
