//! The conformance suite of the [`Fabric`] interface: one body of checks that every fabric
//! runs from its own crate's tests (`tests/conformance.rs` or a test module), so that a new
//! fabric passes them on the day it is written, like `icn-via`'s suite over its providers.
//!
//! [`check`] drives a fabric with random traffic (every endpoint a source, sizes up to the
//! largest packet), in steps of a few cycles with the measurement window open while
//! injecting and draining, and checks:
//! 1. every injected packet is delivered exactly once, unchanged (rule 1);
//! 2. deliveries come in non-decreasing time, each `< until` of the `advance` that returned
//!    it, at or after its injection, on a multiple of the cycle, with the injection time the
//!    fabric's clock when it was injected (rule 2);
//! 3. after the drain nothing is in flight and there is no next event;
//! 4. channel loads are sane: each directed channel listed once, busy at most the measured
//!    window (in cycles) (a clockless fabric without serialisation books none);
//!    `accepted` has one entry per endpoint and counts something, never more than offered.
//!
//! [`back_pressure`] checks rule 4 (bounded input queues, refusals) the same way for every
//! fabric built with a bounded input queue.

use crate::zero_load::carry;
use crate::{Delivery, Fabric, Packet, Ps};
use icn_engine::rng::{Rng, stream};
use std::collections::BTreeSet;

/// How much traffic [`check`] offers.
#[derive(Clone, Copy, Debug)]
pub struct Traffic {
    /// Packets injected in all.
    pub packets: usize,
    /// Largest payload (capped at the fabric's `max_packet_bytes`).
    pub max_bytes: u32,
    /// Cycles between injection rounds (one packet per round from a random endpoint).
    pub gap_cycles: u64,
    /// Steps the drain may take at most: each advances 64 cycles past the next event (a
    /// cycle-driven fabric's is its clock, a clockless one's its next delivery).
    pub drain_steps: u64,
}

impl Default for Traffic {
    fn default() -> Self {
        Traffic {
            packets: 400,
            max_bytes: 256,
            gap_cycles: 2,
            drain_steps: 100_000,
        }
    }
}

/// What a conforming run saw (for a caller's own further checks).
#[derive(Debug)]
pub struct Seen {
    pub deliveries: Vec<Delivery>,
    /// The measured window, ps.
    pub window: Ps,
}

/// Runs the suite on `fabric` with `traffic` drawn from `seed`; `Err` names the broken rule.
pub fn check(fabric: &mut dyn Fabric, traffic: Traffic, seed: u64) -> Result<Seen, String> {
    let n = fabric.endpoints();
    if n < 2 {
        return Err(format!("{n} endpoints: the suite needs two"));
    }
    let cycle = fabric.cycle_ps();
    if cycle == 0 {
        return Err("cycle_ps is 0".into());
    }
    let max = traffic.max_bytes.min(fabric.max_packet_bytes()).max(1);
    let mut rng = stream(seed, 0);
    let mut injected: Vec<(Packet, Ps)> = Vec::with_capacity(traffic.packets);
    let mut out: Vec<Delivery> = Vec::new();
    let start = fabric.now();
    fabric.set_measuring(true);
    let mut t = start;
    let advance = |fabric: &mut dyn Fabric, until: Ps, out: &mut Vec<Delivery>| {
        let before = out.len();
        fabric
            .advance(until, out)
            .map_err(|e| format!("advance to {until} ps failed: {e}"))?;
        for d in &out[before..] {
            if d.delivered >= until {
                return Err(format!("{d:?} delivered at or after until = {until}"));
            }
        }
        Ok::<(), String>(())
    };
    for tag in 0..traffic.packets as u64 {
        let src = rng.random_range(0..n);
        let dst = (src + rng.random_range(1..n)) % n;
        let p = Packet {
            src,
            dst,
            bytes: rng.random_range(1..=max),
            tag,
        };
        injected.push((p, fabric.now()));
        fabric.inject(p);
        t += traffic.gap_cycles * cycle;
        advance(fabric, t, &mut out)?;
    }
    let mut steps = 0;
    while fabric.in_flight() > 0 {
        if steps == traffic.drain_steps {
            return Err(format!(
                "{} packets still in flight after a drain of {steps} steps",
                fabric.in_flight(),
            ));
        }
        steps += 1;
        let next = fabric.next_event().unwrap_or(0).max(fabric.now());
        advance(fabric, next + 64 * cycle, &mut out)?;
    }
    fabric.set_measuring(false);
    let window = fabric.now() - start;

    // 1. Exactly once, unchanged.
    let mut seen = vec![false; injected.len()];
    for d in &out {
        let k = d.packet.tag as usize;
        let Some(&(p, at)) = injected.get(k) else {
            return Err(format!("{d:?}: a packet never injected"));
        };
        if std::mem::replace(&mut seen[k], true) {
            return Err(format!("{d:?}: delivered twice"));
        }
        if d.packet != p || d.injected != at {
            return Err(format!("{d:?}: injected as {p:?} at {at} ps"));
        }
    }
    if let Some(k) = seen.iter().position(|s| !s) {
        return Err(format!("{:?} never delivered", injected[k]));
    }
    // 2. Time order.
    for w in out.windows(2) {
        if w[1].delivered < w[0].delivered {
            return Err(format!("out of time order: {:?} after {:?}", w[1], w[0]));
        }
    }
    for d in &out {
        if d.delivered < d.injected || d.delivered % cycle != 0 {
            return Err(format!(
                "{d:?}: before its injection or off the {cycle} ps cycle"
            ));
        }
    }
    // 3. Empty after the drain.
    if fabric.in_flight() != 0 || fabric.next_event().is_some() {
        return Err(format!(
            "after the drain: {} in flight, next event {:?}",
            fabric.in_flight(),
            fabric.next_event()
        ));
    }
    // 4. Channel loads and accepted bytes.
    let loads = fabric.channel_loads();
    let mut channels = BTreeSet::new();
    for l in &loads {
        if !channels.insert((l.router, l.port)) {
            return Err(format!("channel {l:?} listed twice"));
        }
        if l.busy > window / cycle {
            return Err(format!(
                "channel {l:?} busy more than the {} cycles measured",
                window / cycle
            ));
        }
    }
    let accepted = fabric.accepted();
    let offered: u64 = injected.iter().map(|(p, _)| u64::from(p.bytes)).sum();
    let total: u64 = accepted.iter().sum();
    if accepted.len() != n || total == 0 || total > offered {
        return Err(format!(
            "accepted: {} entries for {n} endpoints, {total} of {offered} offered",
            accepted.len(),
        ));
    }
    Ok(Seen {
        deliveries: out,
        window,
    })
}

/// Checks that [`Fabric::skip_idle`] is exact, i.e. changes nothing but the cost: two
/// fabrics built alike, `stepped` advanced through every idle spell and `skipping` skipping each one,
/// deliver the same packets at the same times. The traffic is `bursts` bursts of up to 8
/// packets a few cycles apart, separated by idle spells of up to `max_gap_cycles` cycles
/// after the fabric has drained (what a program computing between messages offers).
pub fn skip_idle_matches_stepping(
    stepped: &mut dyn Fabric,
    skipping: &mut dyn Fabric,
    bursts: usize,
    max_gap_cycles: u64,
    seed: u64,
) -> Result<(), String> {
    let n = stepped.endpoints();
    let cycle = stepped.cycle_ps();
    if n < 2 || skipping.endpoints() != n || skipping.cycle_ps() != cycle {
        return Err(format!(
            "fabrics of {n} and {} endpoints: not alike, or fewer than two",
            skipping.endpoints()
        ));
    }
    let max = stepped.max_packet_bytes().clamp(1, 256);
    let mut rng = stream(seed, 1);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut tag = 0;
    let fail = |e: crate::FabricError| e.to_string();
    for _ in 0..bursts {
        for _ in 0..rng.random_range(1..=8) {
            let src = rng.random_range(0..n);
            let p = Packet {
                src,
                dst: (src + rng.random_range(1..n)) % n,
                bytes: rng.random_range(1..=max),
                tag,
            };
            tag += 1;
            stepped.inject(p);
            skipping.inject(p);
            let t = stepped.now() + rng.random_range(0..4u64) * cycle;
            stepped.advance(t, &mut a).map_err(fail)?;
            skipping.advance(t, &mut b).map_err(fail)?;
        }
        // Drain both (the same way), then let `stepped` step the gap and `skipping` skip it.
        while stepped.in_flight() > 0 || skipping.in_flight() > 0 {
            let t = stepped.now().max(skipping.now()) + 64 * cycle;
            stepped.advance(t, &mut a).map_err(fail)?;
            skipping.advance(t, &mut b).map_err(fail)?;
            if t > 1 << 50 {
                return Err("the fabrics do not drain".into());
            }
        }
        let t = stepped.now() + rng.random_range(0..=max_gap_cycles) * cycle;
        stepped.advance(t, &mut a).map_err(fail)?;
        skipping.skip_idle(t).map_err(fail)?;
        if stepped.now() != skipping.now() {
            return Err(format!(
                "after an idle spell to {t} ps: stepped to {} ps, skipped to {} ps",
                stepped.now(),
                skipping.now()
            ));
        }
    }
    if a.len() as u64 != tag {
        return Err(format!("{} of {tag} packets delivered", a.len()));
    }
    if let Some(k) = (0..a.len()).find(|&k| a.get(k) != b.get(k)) {
        return Err(format!(
            "delivery {k}: {:?} when stepping, {:?} when skipping",
            a[k],
            b.get(k)
        ));
    }
    Ok(())
}

/// Checks rule 3 ([`Fabric::zero_load`]): one fabric from `fresh` answers every
/// `(src, dst, bytes)` of `cases` at every start of `starts` (in cycles, ascending), idle
/// until then, so that an answer it keeps for a class of pairs or a phase of its clock is
/// checked against every pair and phase that reuses it. Each answer is then checked on
/// fresh fabrics idle until the same start: one such packet is delivered exactly `latency`
/// after its injection, and of two, the later `latency + spacing[0]` after (within one
/// cycle: a flow fabric's shared rate is rounded per flow).
pub fn zero_load_is_exact(
    fresh: &dyn Fn() -> Box<dyn Fabric>,
    cases: &[(usize, usize, u32)],
    starts: &[u64],
) -> Result<(), String> {
    let fail = |e: crate::FabricError| e.to_string();
    let mut asker = fresh();
    let cycle = asker.cycle_ps();
    for &start in starts {
        asker.skip_idle(start * cycle).map_err(fail)?;
        for &(src, dst, bytes) in cases {
            let z = asker.zero_load(src, dst, bytes).map_err(fail)?;
            let run = |copies: u64| -> Result<Ps, String> {
                let mut f = fresh();
                f.skip_idle(start * cycle).map_err(fail)?;
                let at = f.now();
                let out = carry(&mut *f, (src, dst, bytes), copies).map_err(fail)?;
                Ok(out.iter().map(|d| d.delivered).max().unwrap_or(at) - at)
            };
            let case = format!("{bytes} B {src}→{dst} injected in cycle {start}");
            let one = run(1)?;
            if one != z.latency {
                return Err(format!("{case}: took {one} ps alone, zero_load said {z:?}"));
            }
            let two = run(2)?;
            if two.abs_diff(z.latency + z.spacing[0]) > cycle {
                return Err(format!(
                    "{case}: two took {two} ps, zero_load said {z:?} (latency + spacing)"
                ));
            }
        }
    }
    Ok(())
}

/// A lone message of `n` packets like `(src, dst, bytes)`, injected at once into a fabric
/// from `fresh`: its last delivery against the end [`crate::zero_load::Wire`] predicts from
/// the fabric's answers, both from the injection. They must be equal while the train is no
/// longer than a probe's ([`crate::zero_load::probe_train`]: 17 packets of up to 963 B, 4
/// of 4 KiB + a header); beyond, where the steady gap stands for the protocol's pace, within
/// `tolerance` (a fraction of the delivery time).
pub fn lone_train(
    fresh: &dyn Fn() -> Box<dyn Fabric>,
    (src, dst, bytes): (usize, usize, u32),
    n: u64,
    tolerance: f64,
) -> Result<(), String> {
    let fail = |e: crate::FabricError| e.to_string();
    let mut f = fresh();
    let at = f.now();
    let z = f.zero_load(src, dst, bytes).map_err(fail)?;
    let mut wire = crate::zero_load::Wire::default();
    for _ in 0..n {
        wire.add(at, z);
    }
    let out = carry(&mut *f, (src, dst, bytes), n).map_err(fail)?;
    let took = out.iter().map(|d| d.delivered).max().unwrap_or(at) - at;
    let said = wire.split(at, Ps::MAX).0;
    let allowed = if n <= u64::from(crate::zero_load::probe_train(bytes)) {
        0.0
    } else {
        tolerance * took as f64
    };
    if took.abs_diff(said) as f64 > allowed {
        return Err(format!(
            "{n} × {bytes} B {src}→{dst} at once: took {took} ps, the wire fold says {said} ps"
        ));
    }
    Ok(())
}

/// Checks rule 4 on `fabric` (freshly built, its input queues bounded): every endpoint offers
/// `per_source` packets of `bytes` to one hot destination (endpoint 0; endpoint 0 itself to
/// endpoint 1), retrying its refused packet after each step, as a NIC holding its DMA does,
/// and the fabric is stepped event by event (to its next event, one cycle on). Checks:
/// 1. the fabric states a capacity, and it refuses: the offer outpaces the drain;
/// 2. a refusal hands the packet back unchanged and changes nothing (packets in flight, the
///    source's queue), and `can_inject` said so beforehand;
/// 3. no input queue ever holds more than the capacity, and while a source is refused the
///    fabric has a next event (room comes only from `advance`);
/// 4. every offered packet is accepted in the end (nothing refused is lost) and every
///    accepted one delivered exactly once, unchanged, at or after its acceptance; after
///    the drain nothing is in flight and every queue is empty.
///
/// Returns the refusals counted.
pub fn back_pressure(
    fabric: &mut dyn Fabric,
    per_source: usize,
    bytes: u32,
) -> Result<u64, String> {
    let n = fabric.endpoints();
    let cycle = fabric.cycle_ps();
    let Some(capacity) = fabric.input_capacity() else {
        return Err("input_capacity is None: the input queues are unbounded".into());
    };
    if n < 2 || capacity == 0 {
        return Err(format!(
            "{n} endpoints, capacity {capacity}: nothing to check"
        ));
    }
    let bytes = bytes.clamp(1, fabric.max_packet_bytes());
    let dst = |src: usize| usize::from(src == 0);
    // Per source: the next packet to offer.
    let mut next = vec![0usize; n];
    let mut accepted_at: Vec<Option<(Packet, Ps)>> = vec![None; n * per_source];
    let mut delivered = vec![false; n * per_source];
    let (mut refusals, mut out) = (0u64, Vec::new());
    let mut steps = 0u64;
    loop {
        for (src, next) in next.iter_mut().enumerate() {
            while *next < per_source {
                let tag = (src * per_source + *next) as u64;
                let p = Packet {
                    src,
                    dst: dst(src),
                    bytes,
                    tag,
                };
                let (can, queued, flying) = (
                    fabric.can_inject(src),
                    fabric.input_queued(src),
                    fabric.in_flight(),
                );
                match fabric.try_inject(p) {
                    Ok(()) => {
                        if !can {
                            return Err(format!("{p}: accepted although can_inject said no"));
                        }
                        accepted_at[tag as usize] = Some((p, fabric.now()));
                        *next += 1;
                    }
                    Err(crate::Refused(back)) => {
                        refusals += 1;
                        if back != p || can {
                            return Err(format!("{p}: refused as {back} with can_inject = {can}"));
                        }
                        if fabric.input_queued(src) != queued || fabric.in_flight() != flying {
                            return Err(format!("{p}: the refusal changed the fabric"));
                        }
                        if fabric.next_event().is_none() {
                            return Err(format!("{p}: refused with no next event"));
                        }
                        break;
                    }
                }
                if fabric.input_queued(src) > capacity {
                    return Err(format!(
                        "endpoint {src} holds {} packets, more than its capacity {capacity}",
                        fabric.input_queued(src)
                    ));
                }
            }
        }
        let offering = next.iter().any(|&k| k < per_source);
        if !offering && fabric.in_flight() == 0 {
            break;
        }
        steps += 1;
        if steps > 100_000_000 {
            return Err("the fabric does not drain".into());
        }
        let now = fabric.now();
        let until = fabric.next_event().unwrap_or(now).max(now) + cycle;
        let before = out.len();
        fabric
            .advance(until, &mut out)
            .map_err(|e| format!("advance to {until} ps failed: {e}"))?;
        for d in &out[before..] {
            let k = d.packet.tag as usize;
            let Some(Some((p, at))) = accepted_at.get(k) else {
                return Err(format!("{d:?}: a packet never accepted"));
            };
            if std::mem::replace(&mut delivered[k], true) {
                return Err(format!("{d:?}: delivered twice"));
            }
            if d.packet != *p || d.injected != *at || d.delivered < *at {
                return Err(format!("{d:?}: accepted as {p:?} at {at} ps"));
            }
        }
        for src in 0..n {
            if fabric.input_queued(src) > capacity {
                return Err(format!(
                    "endpoint {src} holds {} packets after a step, more than {capacity}",
                    fabric.input_queued(src)
                ));
            }
        }
    }
    if let Some(k) = delivered.iter().position(|d| !d) {
        return Err(format!("packet {k} never delivered"));
    }
    if refusals == 0 {
        return Err(format!(
            "{} packets offered as fast as possible and none refused: the queues are not bounded",
            n * per_source
        ));
    }
    if let Some(src) = (0..n).find(|&s| fabric.input_queued(s) != 0) {
        return Err(format!(
            "after the drain endpoint {src} still counts {} queued",
            fabric.input_queued(src)
        ));
    }
    Ok(refusals)
}
