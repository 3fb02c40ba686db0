//! The `[netrace]` table a network model accepts as its workload, checked before the run, and
//! the run itself as the model's metrics.

pub mod doc;

use crate::format::{ErrorKind, Reader, TraceError};
use crate::replay::{self, Event, Plan, ReplayError};
use crate::scan::{self, Summary};
use icn_engine::{Context, Invalid, Metrics, ModelError};
use icn_fabric::Fabric;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[netrace]`: replay a Netrace v1 trace instead of synthetic traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetraceConfig {
    /// The `.tra.bz2` file, relative to the experiment file.
    pub file: String,
    /// Consecutive region numbers to replay, e.g. `[1, 2]`; empty: every region.
    pub regions: Vec<usize>,
    /// Fabric endpoint of each trace node, in node order; empty: node `i` on endpoint `i`.
    pub map: Vec<usize>,
    /// VC routers only: bytes per flit (a packet is ⌈bytes / flit_bytes⌉ flits: netrace's
    /// 8-byte control packets one flit, 72-byte data packets five at 16 bytes). The X-Switch
    /// carries bytes.
    pub flit_bytes: u32,
}

impl Default for NetraceConfig {
    fn default() -> Self {
        NetraceConfig {
            file: String::new(),
            regions: Vec::new(),
            map: Vec::new(),
            flit_bytes: 16,
        }
    }
}

/// A checked trace: the file read once through, the plan of what to replay where.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub path: PathBuf,
    pub summary: Summary,
    pub plan: Plan,
    pub flit_bytes: u32,
    /// A dependency the scan found no replay can honour: the run fails with it (exit 1)
    /// without simulating.
    pub problem: Option<TraceError>,
}

fn key(k: &str) -> String {
    format!("netrace.{k}")
}

impl NetraceConfig {
    /// Resolves the file against the experiment file, reads it through ([`scan::scan`]) and
    /// checks the regions and node map against it and against a fabric of `endpoints`. A
    /// malformed or unreadable trace is invalid (naming the byte and the packet); a
    /// dependency cycle or dangling dependency is kept for the run to report. A network
    /// spread over MPI ranks (`Context::network`) is refused.
    pub fn prepare(&self, ctx: &Context, endpoints: usize) -> Result<Prepared, Invalid> {
        // The replay drives the fabric from one process: a network partitioned over MPI ranks
        // would have every rank inject every packet.
        Invalid::check(
            ctx.network.is_none(),
            "netrace",
            "a replay in one process (run it without --spread network)",
            "--spread network",
        )?;
        Invalid::check(
            !self.file.trim().is_empty(),
            &key("file"),
            "a Netrace v1 .tra.bz2 file",
            "nothing",
        )?;
        Invalid::check(
            (1..=4096).contains(&self.flit_bytes),
            &key("flit_bytes"),
            "1 ..= 4096 bytes",
            self.flit_bytes,
        )?;
        let path = ctx.resolve(self.file.trim());
        let file = |e: TraceError| Invalid::new(key("file"), format!("{}: {e}", path.display()));
        let (summary, problem) = match scan::scan(Reader::open(&path).map_err(file)?) {
            Ok(s) => (s, None),
            Err(e) if e.kind == ErrorKind::Dependency => {
                // Read the header again for the checks below.
                let h = Reader::open(&path).map_err(file)?.header().clone();
                let s = Summary {
                    region_packets: vec![0; h.regions.len()],
                    header: h,
                    packets: 0,
                    peak_window: 0,
                };
                (s, Some(e))
            }
            Err(e) => return Err(file(e)),
        };
        let h = &summary.header;
        let nregions = h.regions.len();
        let (first, last) = match self.regions.as_slice() {
            [] => (0, nregions - 1),
            [a, rest @ ..] => {
                let consecutive = rest.iter().enumerate().all(|(i, &r)| r == a + i + 1);
                let last = *rest.last().unwrap_or(a);
                Invalid::check(
                    consecutive && last < nregions,
                    &key("regions"),
                    &format!("consecutive region numbers in 0 ..= {}", nregions - 1),
                    format!("{:?}", self.regions),
                )?;
                (*a, last)
            }
        };
        let nodes = usize::from(h.nodes);
        let map = if self.map.is_empty() {
            Invalid::check(
                nodes <= endpoints,
                "topology",
                &format!("a network of ≥ {nodes} endpoints (the trace's nodes)"),
                format!("{endpoints} endpoints"),
            )?;
            (0..nodes).collect()
        } else {
            let mut seen = vec![false; endpoints];
            let ok = self.map.len() == nodes
                && self
                    .map
                    .iter()
                    .all(|&e| e < endpoints && !std::mem::replace(&mut seen[e], true));
            Invalid::check(
                ok,
                &key("map"),
                &format!("{nodes} distinct endpoints in 0 ..= {}", endpoints - 1),
                format!("{:?}", self.map),
            )?;
            self.map.clone()
        };
        Ok(Prepared {
            path,
            summary,
            plan: Plan { first, last, map },
            flit_bytes: self.flit_bytes,
            problem,
        })
    }
}

impl Prepared {
    /// Replays the trace on `fabric` and reports the model's metrics.
    pub fn run(&self, fabric: &mut dyn Fabric) -> Result<Metrics, ModelError> {
        self.run_observed(fabric, &mut |_| {})
    }

    /// As [`Prepared::run`], telling `observe` every injection and delivery.
    pub fn run_observed(
        &self,
        fabric: &mut dyn Fabric,
        observe: &mut dyn FnMut(Event),
    ) -> Result<Metrics, ModelError> {
        let failed = |e: String| ModelError::Failed(format!("{}: {e}", self.path.display()));
        if let Some(e) = &self.problem {
            return Err(failed(e.to_string()));
        }
        let mut reader = Reader::open(&self.path).map_err(|e| failed(e.to_string()))?;
        let o = replay::replay(&mut reader, fabric, &self.plan, observe).map_err(|e| match e {
            ReplayError::Fabric(f) => ModelError::Failed(f.to_string()),
            e => failed(e.to_string()),
        })?;
        let mut m = Metrics::default();
        m.put(&doc::PACKETS, o.packets as f64);
        m.put(&doc::RUNTIME, o.runtime as f64);
        m.put(&doc::TRACE_CYCLES, o.trace_cycles as f64);
        m.put(
            &doc::SLOWDOWN,
            o.runtime as f64 / o.trace_cycles.max(1) as f64,
        );
        m.put(&doc::LATENCY_MEAN, o.latency.mean());
        m.put(&doc::LATENCY_P99, o.latency.quantile(0.99));
        m.put(&doc::LATENCY_MAX, o.latency.max());
        m.put(&doc::DELAY_MEAN, o.delay.mean());
        m.put(&doc::DELAY_MAX, o.delay.max());
        m.put(&doc::PEAK_LIVE, o.peak_live as f64);
        m.put(&doc::PEAK_WINDOW, o.peak_window as f64);
        m.put(&doc::CYCLES_SIMULATED, o.runtime as f64);
        Ok(m)
    }
}
