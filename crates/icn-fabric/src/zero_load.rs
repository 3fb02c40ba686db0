//! A packet's time through a fabric alone (rule 3 of the [`crate::Fabric`] interface), and
//! a message's *wire* time built from it.
//!
//! The cluster asks, for every packet it injects, what the packet would take on the empty
//! fabric from the same injection time; what the fabric actually took beyond that is
//! *waiting in the fabric* (other packets on its links, full buffers, arbitration lost,
//! retries). The split needs nothing but the fabric's own model: a clockless fabric computes
//! its answer, a cycle-level one lets a fresh copy of itself carry the packet
//! ([`Probe`]), so that wire time is what that very model does, not a formula beside it.

use crate::{Delivery, Fabric, FabricError, Packet, Ps};
use std::collections::HashMap;
use std::hash::Hash;

/// Gaps of a train [`ZeroLoad`] describes: a train of `GAPS + 1` packets shows the start of a
/// protocol's pace (an SCI ring node sends four sends back to back, then one per echo).
pub const GAPS: usize = 16;

/// A packet alone on a fresh fabric, and a train of packets like it injected at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZeroLoad {
    /// Injection → delivery of the packet alone.
    pub latency: Ps,
    /// In a train of packets like it injected at the same time, packet `k + 1` is
    /// delivered `spacing[k]` after packet `k`: how long each holds the narrowest point of
    /// the route, or waits for the protocol's window (the packets' own serialisation, with
    /// no one else's traffic).
    pub spacing: [Ps; GAPS],
    /// The gap beyond the measured ones: the mean of the second half of the gaps measured
    /// (a protocol's pace need not be one gap repeated: an SCI ring node's sends follow
    /// their echoes' round trips).
    pub steady: Ps,
}

impl ZeroLoad {
    /// A packet of `latency` whose trains are spaced by `gap` throughout.
    pub fn even(latency: Ps, gap: Ps) -> ZeroLoad {
        ZeroLoad {
            latency,
            spacing: [gap; GAPS],
            steady: gap,
        }
    }
}

/// Answers a [`Probe`] keeps at most; past that it forgets them all and measures again, so
/// that its memory is bounded by a count, never by a run's length.
pub const PROBE_CACHE: usize = 1 << 16;

/// A probe's train of packets of `bytes` is `⌊PROBE_TRAIN_BYTES / bytes⌋ + 1` long, 3 ..=
/// `GAPS + 1` ([`probe_train`]): one of 4 KiB X-Switch packets (and their header) is 4
/// long, one of 64 B SCI sends the full 17. What a probe costs is the cycles its train
/// takes, so long packets get short trains; their pace is their serialisation, which a few
/// gaps already show.
pub const PROBE_TRAIN_BYTES: u32 = 16 << 10;

/// Packets in a [`Probe`]'s train of packets of `bytes`: 3 ..= `GAPS + 1`.
pub fn probe_train(bytes: u32) -> u32 {
    (PROBE_TRAIN_BYTES / bytes.max(1)).clamp(2, GAPS as u32) + 1
}

/// Measures [`ZeroLoad`] on fresh copies of a cycle-level fabric, once per distinct
/// question. A question is the pair's *route class* `K` (the fabric says which pairs a lone
/// packet cannot tell apart: on an X-Switch the ports its route passes, on an SCI ring the
/// distance; `(src, dst)` when it cannot tell), the size, and the injection cycle modulo
/// the fabric's *period* (the cycles after which a fresh fabric's answer repeats: an
/// X-Switch output polls its five inputs in turn, so its period is 5; a fabric without such
/// a phase has period 1). A train is measured once per class and size, injected in phase
/// 0; another phase shifts its latency by what it shifts a one-byte packet's of the same
/// class (the phase decides the first frame's grants, and every later frame follows it),
/// measured once per class and phase: a fraction of a train's cycles.
pub struct Probe<K> {
    period: u64,
    trains: HashMap<(K, u32), ZeroLoad>,
    shifts: HashMap<(K, u64), i128>,
}

impl<K: Hash + Eq + Clone> Probe<K> {
    pub fn new(period: u64) -> Probe<K> {
        Probe {
            period: period.max(1),
            trains: HashMap::new(),
            shifts: HashMap::new(),
        }
    }

    /// The answer for a packet `src → dst` (of route class `class`) injected in cycle
    /// `now_cycle`; on a new question, `fresh` builds empty copies of the fabric
    /// (sequential: the same results at any thread count), moved to the phase asked about,
    /// that carry a train like the packet ([`alone`]) or one byte.
    pub fn measure(
        &mut self,
        now_cycle: u64,
        class: K,
        (src, dst, bytes): (usize, usize, u32),
        fresh: impl Fn() -> Result<Box<dyn Fabric>, FabricError>,
    ) -> Result<ZeroLoad, FabricError> {
        if self.trains.len() >= PROBE_CACHE || self.shifts.len() >= PROBE_CACHE {
            self.trains.clear();
            self.shifts.clear();
        }
        let carry = |phase: u64, bytes: u32, train: u32| -> Result<ZeroLoad, FabricError> {
            let mut f = fresh()?;
            let at = phase * f.cycle_ps();
            f.skip_idle(at)?;
            alone(&mut *f, (src, dst, bytes), train)
        };
        let z = match self.trains.get(&(class.clone(), bytes)) {
            Some(&z) => z,
            None => {
                let z = carry(0, bytes, probe_train(bytes))?;
                self.trains.insert((class.clone(), bytes), z);
                z
            }
        };
        let phase = now_cycle % self.period;
        if phase == 0 {
            return Ok(z);
        }
        let shift = match self.shifts.get(&(class.clone(), phase)) {
            Some(&s) => s,
            None => {
                let s =
                    i128::from(carry(phase, 1, 3)?.latency) - i128::from(carry(0, 1, 3)?.latency);
                self.shifts.insert((class, phase), s);
                s
            }
        };
        Ok(ZeroLoad {
            latency: (i128::from(z.latency) + shift).max(0) as Ps,
            ..z
        })
    }
}

/// Measures [`ZeroLoad`] on `f`, which must be empty: a train of `train` (3 ..= `GAPS + 1`)
/// packets like the one asked about, injected now, run until all are delivered; the first
/// one's latency (the others queue behind it at its source and cannot delay it), the gaps
/// between them in delivery order, and the mean of the second half of the gaps as the
/// steady gap, which also fills the gaps the train did not reach.
pub fn alone(
    f: &mut dyn Fabric,
    (src, dst, bytes): (usize, usize, u32),
    train: u32,
) -> Result<ZeroLoad, FabricError> {
    let t0 = f.now();
    let train = u64::from(train).clamp(3, GAPS as u64 + 1);
    let out = carry(f, (src, dst, bytes), train)?;
    let first = out
        .iter()
        .find(|d| d.packet.tag == 0)
        .map_or(t0, |d| d.delivered);
    let gaps: Vec<Ps> = out
        .windows(2)
        .map(|w| w[1].delivered - w[0].delivered)
        .collect();
    let tail = &gaps[gaps.len() / 2..];
    let steady = tail.iter().sum::<Ps>() / tail.len() as Ps;
    let mut z = ZeroLoad::even(first - t0, steady);
    z.spacing[..gaps.len()].copy_from_slice(&gaps);
    Ok(z)
}

/// Injects `copies` packets `src → dst` of `bytes` (tags 0, 1, ...) into `f` now and runs
/// it until all are delivered; their deliveries in time order.
pub fn carry(
    f: &mut dyn Fabric,
    (src, dst, bytes): (usize, usize, u32),
    copies: u64,
) -> Result<Vec<Delivery>, FabricError> {
    for tag in 0..copies {
        f.inject(Packet {
            src,
            dst,
            bytes,
            tag,
        });
    }
    let mut out = Vec::new();
    while (out.len() as u64) < copies {
        let Some(next) = f.next_event() else {
            return Err(FabricError::Failed(format!(
                "{copies} packets of {bytes} B from {src} to {dst}: {} never delivered",
                copies - out.len() as u64
            )));
        };
        f.advance(next.max(f.now()).saturating_add(f.cycle_ps()), &mut out)?;
    }
    Ok(out)
}

/// A message's wire time: its packets, injected when they were, each alone on the fabric
/// ([`ZeroLoad::latency`]) but never closer behind its predecessor than the train's gap at
/// its place ([`ZeroLoad::spacing`], then [`ZeroLoad::steady`]: the message's packets share
/// their route, and the protocol's window, even when nothing else does). Exact for a lone
/// train of up to `GAPS + 1` packets like one another injected at once; beyond, as close as
/// the steady gap is to the protocol's pace. A packet that lands alone starts a new
/// train. Packets are added in injection order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wire {
    end: Option<Ps>,
    /// Packets of the current train so far.
    train: usize,
}

impl Wire {
    pub fn add(&mut self, injected: Ps, z: ZeroLoad) {
        let alone = injected.saturating_add(z.latency);
        let behind = self.end.map(|end| {
            let gap = z.spacing.get(self.train - 1).copied().unwrap_or(z.steady);
            end.saturating_add(gap)
        });
        match behind {
            Some(behind) if behind > alone => {
                self.end = Some(behind);
                self.train += 1;
            }
            _ => {
                self.end = Some(alone);
                self.train = 1;
            }
        }
    }

    /// The message's time in the fabric, `first` injection → `last` delivery, split into
    /// (wire, waiting). Wire is at most the whole: a fabric whose arbitration happens to
    /// favour the loaded case (an X-Switch output polling in a luckier phase) counts no
    /// negative wait.
    pub fn split(&self, first: Ps, last: Ps) -> (Ps, Ps) {
        let whole = last.saturating_sub(first);
        let wire = self
            .end
            .map_or(whole, |end| end.saturating_sub(first).min(whole));
        (wire, whole - wire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A train of three packets of 10 µs latency, 4 µs spacing: injected together they land
    /// at 10, 14, 18 µs; injected 5 µs apart the second lands alone at 15, the third at 20.
    #[test]
    fn a_train_is_spaced_by_its_own_serialisation() {
        let z = ZeroLoad::even(10, 4);
        let mut w = Wire::default();
        for t in [0, 0, 0] {
            w.add(t, z);
        }
        assert_eq!(w.split(0, 25), (18, 7));
        let mut w = Wire::default();
        for t in [0, 5, 10] {
            w.add(t, z);
        }
        assert_eq!(w.split(0, 20), (20, 0));
        // Never more wire than the whole.
        assert_eq!(w.split(0, 19), (19, 0));
    }

    /// A window of two: gaps 1, then 5. Four packets at once land at 10, 11, 16, 21; a
    /// fourth injected late enough lands alone and starts a new train (its successor is 1
    /// behind it again).
    #[test]
    fn a_train_follows_the_gaps_of_its_place() {
        let mut z = ZeroLoad::even(10, 5);
        z.spacing[0] = 1;
        let mut w = Wire::default();
        for t in [0, 0, 0, 0] {
            w.add(t, z);
        }
        assert_eq!(w.split(0, 100).0, 21);
        let mut w = Wire::default();
        for t in [0, 0, 0, 30, 30] {
            w.add(t, z);
        }
        assert_eq!(w.split(0, 100).0, 41);
    }
}
