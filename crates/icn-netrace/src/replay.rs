//! The closed-loop replay: trace packets go into any [`Fabric`] when the trace and their
//! dependencies let them.
//!
//! **Injection rule.** A packet is injected in cycle `max(c, d + 1)`, where `c` is its trace
//! cycle (relative to the start of the first replayed region) and `d` the cycle in which the
//! last packet listing it was delivered (`d + 1 = 0` when nothing lists it). That is the rule of
//! netrace's reference simulator (`main.c` with the cleared-packets list): a packet ejected in
//! cycle `d` clears its dependents, which join the injection queue in the next cycle, never
//! before their own trace cycle. Here a fabric delivers in cycle `d` what it delivers during
//! `advance` to `d + 1`, and the dependents are injected at `now = d + 1`. The fabric's
//! endpoint queues are unbounded, so "injected" means handed to the source endpoint; the
//! network's own back-pressure shows up as later deliveries.
//!
//! **Time.** One trace cycle is one fabric cycle ([`Fabric::cycle_ps`]). While packets are in
//! flight the replay advances the fabric one cycle at a time (a delivery in any cycle may free
//! a packet for the next); with nothing in flight it skips to the next packet's trace cycle.
//!
//! **Memory** is bounded by the outstanding packets (read because their trace cycle has come,
//! not yet delivered: waiting for a dependency, queued at a source, in the network) plus the
//! dependency window ([`crate::deps`]); the reader reads a packet only when the replay reaches
//! its trace cycle, so a trace of any length streams through. A replay that keeps up with the
//! trace holds as many whatever the trace's length; one whose network is slower than the traced
//! chip accumulates outstanding packets, as the chip's sources would. The peaks are reported
//! (`peak_live`, `peak_window`).
//!
//! **Never a hang.** Dependency cycles and dangling dependencies are found by the reader and
//! the window as soon as they are reached (and before a run by [`crate::scan`]); a deadlocked
//! fabric reports itself; and if nothing is in flight, nothing is left to read and a packet
//! still waits, the replay stops naming it and what it waits for.

use crate::deps::Window;
use crate::format::{Header, PacketRef, Reader, Record, TraceError};
use icn_engine::stats::Histogram;
use icn_fabric::{Delivery, Fabric, FabricError, Packet};
use std::collections::HashMap;
use std::io::Read;

/// What the replay reports to an observer, in the order it happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Handed to its source endpoint in `cycle` (fabric cycles from the replay's start).
    Injected { id: u32, cycle: u64 },
    /// Accepted at its destination in `cycle`.
    Delivered { id: u32, cycle: u64 },
}

/// How a trace maps onto a fabric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// First and last region replayed (inclusive).
    pub first: usize,
    pub last: usize,
    /// Trace node → fabric endpoint.
    pub map: Vec<usize>,
}

/// Why a replay stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("{0}")]
    Trace(#[from] TraceError),
    #[error("{0}")]
    Fabric(#[from] FabricError),
    /// Nothing moves and a packet still waits; or the fabric broke a rule.
    #[error("{0}")]
    Stuck(String),
}

/// What a replay measured.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub packets: u64,
    /// Cycles from the start of the first region to the last delivery.
    pub runtime: u64,
    /// Cycles the replayed regions last in the trace (the full-system run's time).
    pub trace_cycles: u64,
    /// Network latency (delivery − injection), cycles.
    pub latency: Histogram,
    /// Injection cycle − trace cycle: how much later than in the traced run a packet went.
    pub delay: Histogram,
    /// Most packets read and not yet delivered at once, and the largest dependency window:
    /// the replay's memory (see the module documentation).
    pub peak_live: usize,
    pub peak_window: usize,
}

/// A read packet not yet delivered.
struct Live {
    rec: Record,
    /// Listers not yet delivered.
    waits_for: Vec<u32>,
    ready_at: u64,
    injected: Option<u64>,
}

/// Replays regions `plan.first ..= plan.last` of the trace read by `reader` (positioned just
/// after its header) on `fabric`, telling `observe` every injection and delivery.
pub fn replay<R: Read>(
    reader: &mut Reader<R>,
    fabric: &mut dyn Fabric,
    plan: &Plan,
    observe: &mut dyn FnMut(Event),
) -> Result<Outcome, ReplayError> {
    let header: Header = reader.header().clone();
    check_plan(&header, plan, fabric)?;
    reader.seek_region(plan.first)?;
    let base = header.region_start(plan.first);
    let trace_cycles = header.regions[plan.first..=plan.last]
        .iter()
        .fold(0u64, |a, g| a.saturating_add(g.cycles));
    let cps = fabric.cycle_ps().max(1);
    let t0 = fabric.now() / cps;
    let mut out = Outcome {
        packets: 0,
        runtime: 0,
        trace_cycles,
        latency: Histogram::default(),
        delay: Histogram::default(),
        peak_live: 0,
        peak_window: 0,
    };
    let mut st = State {
        window: Window::default(),
        live: HashMap::new(),
        released: Vec::new(),
        plan,
        base,
        end: None,
    };
    let mut next = st.read(reader)?;
    let mut deliveries: Vec<Delivery> = Vec::new();
    loop {
        let now = fabric.now() / cps - t0;
        while let Some(rec) = next.take_if(|r| r.cycle - base <= now) {
            let packet = reader.last_packet().expect("a record was read");
            st.admit(rec, packet, reader.offset(), now, fabric, observe)?;
            next = st.read(reader)?;
        }
        out.peak_live = out.peak_live.max(st.live.len());
        out.peak_window = out.peak_window.max(st.window.len());
        if fabric.in_flight() == 0 {
            match &next {
                Some(rec) => {
                    fabric.skip_idle((t0 + rec.cycle - base) * cps)?;
                    continue;
                }
                None => break,
            }
        }
        // One step: to the next cycle a delivery can happen in, or the next packet's cycle.
        let event = fabric.next_event().unwrap_or(fabric.now()) / cps;
        let mut until = event + 1;
        if let Some(rec) = &next {
            until = until.min(t0 + rec.cycle - base);
        }
        deliveries.clear();
        fabric.advance(until.max(now + t0 + 1) * cps, &mut deliveries)?;
        let now = fabric.now() / cps - t0;
        for d in &deliveries {
            st.delivered(d, cps, t0, &mut out, observe)?;
        }
        for id in std::mem::take(&mut st.released) {
            st.inject(id, now, fabric, observe)?;
        }
    }
    if let Some(at) = st.end {
        st.window.finish(at)?;
    }
    if let Some((id, p)) = st.live.iter().min_by_key(|(id, _)| **id) {
        return Err(ReplayError::Stuck(format!(
            "packet {id} (cycle {}) still waits for packet(s) {:?}, which nothing will deliver: nothing is in flight and the trace is read to its end",
            p.rec.cycle, p.waits_for
        )));
    }
    Ok(out)
}

/// The replay's bookkeeping between the reader and the fabric.
struct State<'p> {
    window: Window,
    live: HashMap<u32, Live>,
    /// Packets freed by this step's deliveries, injected at the start of the next cycle.
    released: Vec<u32>,
    plan: &'p Plan,
    base: u64,
    /// Where the file ended, once read to its end.
    end: Option<u64>,
}

impl State<'_> {
    /// The next record of the replayed regions (`None` past the last).
    fn read<R: Read>(&mut self, reader: &mut Reader<R>) -> Result<Option<Record>, TraceError> {
        let Some(rec) = reader.next_record()? else {
            self.end = Some(reader.offset());
            return Ok(None);
        };
        if reader.region() > self.plan.last {
            return Ok(None);
        }
        Ok(Some(rec))
    }

    /// A packet whose trace cycle has come: injected now if nothing it waits for is in flight.
    fn admit(
        &mut self,
        rec: Record,
        packet: PacketRef,
        at: u64,
        now: u64,
        fabric: &mut dyn Fabric,
        observe: &mut dyn FnMut(Event),
    ) -> Result<(), ReplayError> {
        let w = self.window.arrive(&rec, at)?;
        self.window.list(&rec, packet);
        let id = rec.id;
        let go = w.listers.is_empty();
        self.live.insert(
            id,
            Live {
                rec,
                waits_for: w.listers,
                ready_at: w.ready_at,
                injected: None,
            },
        );
        if go {
            self.inject(id, now, fabric, observe)?;
        }
        Ok(())
    }

    fn inject(
        &mut self,
        id: u32,
        now: u64,
        fabric: &mut dyn Fabric,
        observe: &mut dyn FnMut(Event),
    ) -> Result<(), ReplayError> {
        let p = self.live.get_mut(&id).expect("a released packet is live");
        debug_assert!(p.ready_at <= now && p.rec.cycle - self.base <= now);
        p.injected = Some(now);
        fabric.inject(Packet {
            src: self.plan.map[usize::from(p.rec.src)],
            dst: self.plan.map[usize::from(p.rec.dst)],
            bytes: p.rec.kind.bytes(),
            tag: u64::from(id),
        });
        observe(Event::Injected { id, cycle: now });
        Ok(())
    }

    fn delivered(
        &mut self,
        d: &Delivery,
        cps: u64,
        t0: u64,
        out: &mut Outcome,
        observe: &mut dyn FnMut(Event),
    ) -> Result<(), ReplayError> {
        let id = u32::try_from(d.packet.tag).ok();
        let Some(p) = id.and_then(|id| self.live.remove(&id)) else {
            return Err(ReplayError::Stuck(format!(
                "the fabric delivered {} which is not in flight (a fabric fault: rule 1 of icn-fabric)",
                d.packet
            )));
        };
        let Some(injected) = p.injected else {
            return Err(ReplayError::Stuck(format!(
                "the fabric delivered packet {} before it was injected",
                p.rec.id
            )));
        };
        let cycle = d.delivered / cps - t0;
        observe(Event::Delivered {
            id: p.rec.id,
            cycle,
        });
        out.packets += 1;
        out.runtime = out.runtime.max(cycle + 1);
        out.latency.add(cycle - injected);
        out.delay.add(injected - (p.rec.cycle - self.base));
        for &dep in &p.rec.dependents {
            if self.window.delivered(dep, p.rec.id, cycle).is_some() {
                continue;
            }
            // Read already, waiting for its listers.
            let Some(w) = self.live.get_mut(&dep) else {
                continue; // outside the replayed regions
            };
            if let Some(i) = w.waits_for.iter().position(|&l| l == p.rec.id) {
                w.waits_for.swap_remove(i);
            }
            w.ready_at = w.ready_at.max(cycle + 1);
            if w.waits_for.is_empty() && w.injected.is_none() {
                self.released.push(dep);
            }
        }
        Ok(())
    }
}

/// The plan fits the trace and the fabric.
fn check_plan(header: &Header, plan: &Plan, fabric: &dyn Fabric) -> Result<(), ReplayError> {
    let bad = |m: String| Err(ReplayError::Stuck(m));
    if plan.first > plan.last || plan.last >= header.regions.len() {
        return bad(format!(
            "regions {}..={}: the trace has regions 0..={}",
            plan.first,
            plan.last,
            header.regions.len() - 1
        ));
    }
    if plan.map.len() != usize::from(header.nodes) {
        return bad(format!(
            "the node map has {} entries, the trace {} nodes",
            plan.map.len(),
            header.nodes
        ));
    }
    if let Some(e) = plan.map.iter().find(|&&e| e >= fabric.endpoints()) {
        return bad(format!(
            "node map entry {e}: the fabric has endpoints 0..={}",
            fabric.endpoints() - 1
        ));
    }
    if fabric.max_packet_bytes() < 72 {
        return bad(format!(
            "the fabric carries at most {} bytes per packet, netrace's data packets 72",
            fabric.max_packet_bytes()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use icn_engine::stats::Histogram;

    /// The replay's distributions (icn-engine's histogram): exact mean and maximum, and
    /// percentiles within the stated error, whatever the values.
    #[test]
    fn dist_is_exact_in_mean_and_max_and_close_in_percentiles() {
        let mut d = Histogram::default();
        assert!(d.mean().is_nan() && d.max().is_nan() && d.quantile(0.5).is_nan());
        for v in [1u64, 2, 3, 1_000_000, 564_253] {
            d.add(v);
        }
        assert_eq!(d.count(), 5);
        assert_eq!(d.mean(), (1 + 2 + 3 + 1_000_000 + 564_253) as f64 / 5.0);
        assert_eq!(d.max(), 1_000_000.0);
        assert_eq!(d.quantile(0.6), 3.0);
        let p80 = d.quantile(0.8);
        assert!((p80 - 564_253.0).abs() <= 564.0, "{p80}");
    }
}
