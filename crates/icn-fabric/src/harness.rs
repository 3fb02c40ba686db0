//! The open-loop load–latency experiment, once for every fabric (BookSim's conventions):
//! Bernoulli sources ([`crate::traffic`]) inject into unbounded endpoint queues; packets
//! created in the measurement window `[warmup, warmup + measure)` are measured; after the
//! window the traffic keeps flowing until every measured packet is delivered or `drain`
//! cycles pass (then `unfinished` says how many were not, and [`ending`] tells saturation,
//! where the queues grew, from a drain too short for the latency).
//!
//! The X-Switch and VC-router models differ only in the fabric they build and in a few
//! metrics of their own ([`run`] takes them as a closure); warm-up, window, drain, deadlock
//! handling, latency statistics, fairness, channel load and the per-source table are here.

use crate::traffic::{Grid, Sizes, Source, TraceRow, TrafficConfig, Workload};
use crate::{Fabric, FabricError, Packet};
use icn_engine::metrics::Status;
use icn_engine::rng::stream;
use icn_engine::stats::{Histogram, Summary, jain_fairness};
use icn_engine::{Metrics, ModelError, Progress, Table};
use serde::{Deserialize, Serialize};

/// What a detected deadlock does: `error` stops the run with the diagnosis; `report` ends the
/// replication early with the diagnosis as a note.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnDeadlock {
    #[default]
    Error,
    Report,
}

/// What to offer the fabric and how long to measure.
pub struct OpenLoop<'a> {
    /// Offered size units per endpoint per cycle.
    pub load: f64,
    pub sizes: Sizes,
    pub traffic: &'a TrafficConfig,
    /// Rows of `traffic.trace_file` when the pattern is `trace`.
    pub trace: &'a [TraceRow],
    pub grid: Option<Grid>,
    pub warmup: u64,
    pub measure: u64,
    pub drain: u64,
    pub on_deadlock: OnDeadlock,
}

/// What the harness counted, for the report.
struct Counts {
    n: usize,
    window: (u64, u64),
    latency: Histogram,
    per_source_latency: Vec<Summary>,
    offered: Vec<u64>,
    outstanding: u64,
    deadlock: Option<String>,
    /// Why the replication stopped with the endpoint queues at their limit, if it did.
    overflow: Option<String>,
    /// Packets created, and delivered, from the window's start to the end of the run: their
    /// difference is how much the queues grew.
    created: u64,
    delivered: u64,
}

/// Bytes a packet waiting in the fabric costs, rounded up: 91 were measured (8.9 GB of
/// resident memory for 97 M waiting packets on a 64×64 VC mesh), and a growing queue may
/// briefly hold twice its length.
const WAITING_PACKET_BYTES: u64 = 128;

/// Most packets that may wait in the fabric before a replication stops: the endpoint queues
/// are unbounded (BookSim's convention), so a load past saturation over a long window grew
/// them until memory ran out (a 64×64 mesh at load 1 for 2^36 cycles: 80 MB/s until the
/// abort). 2^25 packets take about 4.3 GB. The bound is a constant, not a share of this
/// machine's memory: a replication must end the same way on every machine — shards merged
/// from machines of different sizes, and the ranks of one network spread over MPI, which
/// would otherwise disagree on when to stop and leave the others waiting in an exchange.
const MAX_WAITING_PACKETS: u64 = 1 << 25;

/// Runs `w` on `fabric` from `seed` and reports; `extra` adds the fabric's own metrics
/// (inserted after the fairness index) and tables.
pub fn run<F: Fabric + ?Sized>(
    fabric: &mut F,
    w: &OpenLoop,
    seed: u64,
    progress: &dyn Progress,
    extra: impl FnOnce(&F, f64, &mut Metrics),
) -> Result<Metrics, ModelError> {
    run_bounded(fabric, w, seed, progress, extra, MAX_WAITING_PACKETS)
}

/// [`run`], stopping the replication (status drain limit) once more than `max_waiting`
/// packets wait in the fabric.
pub fn run_bounded<F: Fabric + ?Sized>(
    fabric: &mut F,
    w: &OpenLoop,
    seed: u64,
    progress: &dyn Progress,
    extra: impl FnOnce(&F, f64, &mut Metrics),
    max_waiting: u64,
) -> Result<Metrics, ModelError> {
    let n = fabric.endpoints();
    let cycle = fabric.cycle_ps();
    let workload = Workload::new(w.traffic, n, w.grid, w.sizes);
    let rate = w.load / w.sizes.mean();
    let is_trace = w.traffic.pattern == crate::traffic::TrafficPattern::Trace;
    let mut sources: Vec<Source> = (0..n)
        .map(|s| {
            let src = Source::new(s, rate, stream(seed, s as u64), is_trace.then_some(w.trace));
            match w.traffic.injection {
                crate::traffic::Injection::OnOff => {
                    src.on_off(w.traffic.burst_alpha, w.traffic.burst_beta)
                }
                crate::traffic::Injection::Bernoulli => src,
            }
        })
        .collect();
    // `next_at` mirrors the sources' `next` in one small array: reading it from each
    // 100-byte `Source` cost a cache miss per source and cycle.
    let mut next_at: Vec<u64> = sources.iter().map(|src| src.next).collect();
    let end = w.warmup + w.measure;
    let mut c = Counts {
        n,
        window: (w.warmup, end),
        latency: Histogram::default(),
        per_source_latency: vec![Summary::default(); n],
        offered: vec![0; n],
        outstanding: 0,
        deadlock: None,
        overflow: None,
        created: 0,
        delivered: 0,
    };
    let mut out = Vec::new();
    loop {
        let now = fabric.now() / cycle;
        if now >= end + w.drain || (now >= end && c.outstanding == 0) {
            break;
        }
        let measuring = (w.warmup..end).contains(&now);
        fabric.set_measuring(measuring);
        for s in 0..n {
            if next_at[s] > now {
                continue;
            }
            let src = &mut sources[s];
            while src.next <= now {
                let a = src.arrive(&workload);
                fabric.inject(Packet {
                    src: s,
                    dst: a.dst,
                    bytes: a.size,
                    tag: 0,
                });
                if measuring {
                    c.offered[s] += u64::from(a.size);
                    c.outstanding += 1;
                }
                c.created += u64::from(now >= w.warmup);
            }
            next_at[s] = src.next;
        }
        let stepped = fabric.advance((now + 1) * cycle, &mut out);
        for d in out.drain(..) {
            let created = d.injected / cycle;
            c.delivered += u64::from(d.delivered / cycle >= w.warmup);
            if (c.window.0..c.window.1).contains(&created) {
                let latency = (d.delivered - d.injected) / cycle;
                c.latency.add(latency);
                c.per_source_latency[d.packet.src].add(latency as f64);
                c.outstanding -= 1;
            }
        }
        match stepped {
            Ok(()) => {}
            Err(FabricError::Deadlock(why)) if w.on_deadlock == OnDeadlock::Report => {
                c.deadlock = Some(why);
                break;
            }
            Err(e) => return Err(ModelError::Failed(e.to_string())),
        }
        if now % 4096 == 4095 {
            if now < end {
                progress.advance(4096);
            }
            let waiting = fabric.in_flight();
            if waiting > max_waiting {
                c.overflow = Some(format!(
                    "{waiting} packets were waiting in the fabric at cycle {now}, more than the limit of {max_waiting} (about {WAITING_PACKET_BYTES} bytes each): the load is past saturation, so the replication stopped there"
                ));
                break;
            }
        }
    }
    Ok(report(fabric, w, &c, extra))
}

fn report<F: Fabric + ?Sized>(
    fabric: &F,
    w: &OpenLoop,
    c: &Counts,
    extra: impl FnOnce(&F, f64, &mut Metrics),
) -> Metrics {
    let nouns = fabric.nouns();
    let m = w.measure as f64;
    let nf = c.n as f64;
    let mut out = Metrics::default();
    let item = nouns.item;
    out.push(
        "latency_mean",
        c.latency.mean(),
        "cycles",
        nouns.latency_about,
    );
    out.push(
        "latency_p50",
        c.latency.quantile(0.5),
        "cycles",
        &format!("median {item} latency"),
    );
    out.push(
        "latency_p99",
        c.latency.quantile(0.99),
        "cycles",
        &format!("99th percentile {item} latency"),
    );
    out.push(
        "latency_max",
        c.latency.max(),
        "cycles",
        &format!("largest {item} latency"),
    );
    let per_node = format!("{}/node/cycle", nouns.size_unit);
    let accepted = fabric.accepted();
    out.push(
        "offered",
        c.offered.iter().sum::<u64>() as f64 / (nf * m),
        &per_node,
        "payload created per node per cycle",
    );
    out.push(
        "accepted",
        accepted.iter().sum::<u64>() as f64 / (nf * m),
        &per_node,
        "payload accepted per node per cycle",
    );
    let loads = fabric.channel_loads();
    let utilisation: Vec<f64> = loads.iter().map(|l| l.busy as f64 / m).collect();
    let router = nouns.router;
    out.push(
        "link_util_mean",
        if utilisation.is_empty() {
            f64::NAN
        } else {
            utilisation.iter().sum::<f64>() / utilisation.len() as f64
        },
        "",
        &format!("{router}-to-{router} channel busy fraction, mean"),
    );
    out.push(
        "link_util_max",
        utilisation.iter().copied().fold(f64::NAN, f64::max),
        "",
        &format!("busiest {router}-to-{router} channel"),
    );
    let per_source: Vec<f64> = accepted.iter().map(|&b| b as f64 / m).collect();
    out.push(
        "jain_fairness",
        jain_fairness(&per_source),
        "",
        "Jain index of accepted throughput per source",
    );
    let mut own = Metrics::default();
    extra(fabric, m, &mut own);
    out.scalars.append(&mut own.scalars);
    out.push(
        "unfinished",
        c.outstanding as f64,
        &format!("{item}s"),
        "measured items not delivered by the end of the drain",
    );
    out.push(
        "deadlocked",
        f64::from(u8::from(c.deadlock.is_some())),
        "",
        "1 when the watchdog stopped the run (on_deadlock = \"report\")",
    );
    out.push(
        "cycles_simulated",
        (fabric.now() / fabric.cycle_ps()) as f64,
        "cycles",
        "clock cycles simulated (warm-up, window and drain), for speed figures",
    );
    out.tables.push(Table {
        name: "links".into(),
        columns: [router, "port", "utilisation"].map(String::from).to_vec(),
        rows: loads
            .iter()
            .zip(&utilisation)
            .map(|(l, &u)| vec![l.router as f64, l.port as f64, u])
            .collect(),
        ci95: vec![],
    });
    out.tables.push(Table {
        name: "per_source".into(),
        columns: ["source", "offered", "accepted", "latency_mean"]
            .map(String::from)
            .to_vec(),
        rows: (0..c.n)
            .map(|s| {
                let lat = &c.per_source_latency[s];
                vec![
                    s as f64,
                    c.offered[s] as f64 / m,
                    accepted[s] as f64 / m,
                    if lat.count == 0 { f64::NAN } else { lat.mean },
                ]
            })
            .collect(),
        ci95: vec![],
    });
    out.tables.append(&mut own.tables);
    out.status = ending(c, w.drain, item);
    if !out.status.is_ok() {
        out.notes.push(out.status.why().to_owned());
    }
    out
}

/// How a replication ended. Saturation is a property of the load, not of the drain: the
/// queues grew, i.e. from the window's start to the end of the run the fabric took in more
/// packets than it delivered by more than three standard deviations of a stable count
/// (`3 √created`). Then the accepted throughput is measured but the latency grows with the
/// window (unbounded in steady state), whether or not the measured packets drained. Measured
/// packets undelivered while the network kept up mean a drain too short for the latency (or
/// `drain = 0`): a drain limit, which says so.
fn ending(c: &Counts, drain: u64, item: &str) -> Status {
    if let Some(why) = &c.deadlock {
        return Status::Deadlocked(why.clone());
    }
    if let Some(why) = &c.overflow {
        return Status::Saturated(why.clone());
    }
    let (created, delivered) = (c.created, c.delivered);
    let growth = created.saturating_sub(delivered);
    if growth as f64 > 3.0 * (created as f64).sqrt() {
        return Status::Saturated(format!(
            "the queues grew by {growth} {item}s ({created} created, {delivered} delivered since the window opened; {} measured {item}s undelivered after {drain} drain cycles): the offered load exceeds what the network accepts",
            c.outstanding
        ));
    }
    if c.outstanding == 0 {
        Status::Ok
    } else if drain == 0 {
        Status::DrainLimit(format!(
            "drain = 0: {} measured {item}s were in flight when the window closed and nothing waited for them; set drain > 0 to measure them",
            c.outstanding
        ))
    } else {
        Status::DrainLimit(format!(
            "{} measured {item}s were undelivered after {drain} drain cycles although the network kept up ({created} created, {delivered} delivered since the window opened): raise drain",
            c.outstanding
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(outstanding: u64, created: u64, delivered: u64) -> Counts {
        Counts {
            n: 1,
            window: (0, 1),
            latency: Histogram::default(),
            per_source_latency: vec![],
            offered: vec![],
            outstanding,
            deadlock: None,
            overflow: None,
            created,
            delivered,
        }
    }

    /// Saturation is queues grown beyond a stable count's noise (3 √created: 300 of 10 000),
    /// drained or not; undelivered packets otherwise are a drain limit, and `drain = 0` says so.
    #[test]
    fn undelivered_packets_are_saturation_only_when_the_queues_grew() {
        let kind = |c: &Counts, drain| ending(c, drain, "packet").kind();
        assert_eq!(kind(&counts(0, 10_000, 9_700), 100), "ok");
        assert_eq!(kind(&counts(0, 10_000, 9_699), 100), "saturated");
        assert_eq!(kind(&counts(5, 10_000, 9_699), 100), "saturated");
        assert_eq!(kind(&counts(5, 10_000, 9_700), 100), "drain_limit");
        assert_eq!(kind(&counts(5, 10_000, 10_004), 100), "drain_limit");
        assert_eq!(kind(&counts(5, 10_000, 5_000), 0), "saturated");
        let zero = ending(&counts(5, 10_000, 9_990), 0, "packet");
        assert_eq!(zero.kind(), "drain_limit");
        assert!(
            zero.why().starts_with("drain = 0: 5 measured packets"),
            "{zero:?}"
        );
        let mut dead = counts(5, 10_000, 5_000);
        dead.deadlock = Some("cycle".into());
        assert_eq!(kind(&dead, 100), "deadlocked");
    }
}
