//! A packet's time through a fabric alone (rule 3 of the [`crate::Fabric`] interface), and
//! a message's *wire* time built from it.
//!
//! The cluster asks, for every packet it injects, what the packet would take on the empty
//! fabric from the same injection time; what the fabric actually took beyond that is
//! *waiting in the fabric* (other packets on its links, full buffers, arbitration lost,
//! retries). The split needs nothing but the fabric's own model: a clockless fabric computes
//! its answer, a cycle-level one lets a fresh copy of itself carry the packet
//! ([`Probe`]), so that wire time is what that very model does, not a formula beside it.

use crate::{Fabric, FabricError, Packet, Ps};
use std::collections::HashMap;

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
    /// The gap beyond the measured ones: the mean of the second half of `spacing` (a
    /// protocol's pace need not be one gap repeated: an SCI ring node's sends follow their
    /// echoes' round trips).
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

/// Measures [`ZeroLoad`] on fresh copies of a cycle-level fabric, once per distinct
/// question: `(src, dst, bytes)` and the injection cycle modulo the fabric's *period* (the
/// cycles after which a fresh fabric's answer repeats: an X-Switch output polls its five
/// inputs in turn, so its period is 5; a fabric without such a phase has period 1).
pub struct Probe {
    period: u64,
    cache: HashMap<(usize, usize, u32, u64), ZeroLoad>,
}

impl Probe {
    pub fn new(period: u64) -> Probe {
        Probe {
            period: period.max(1),
            cache: HashMap::new(),
        }
    }

    /// The answer for a packet injected in cycle `now_cycle`; on a new question, `fresh`
    /// builds an empty copy of the fabric (sequential: the same results at any thread
    /// count), which is moved to the same phase and carries the packet ([`alone`]).
    pub fn measure(
        &mut self,
        now_cycle: u64,
        src: usize,
        dst: usize,
        bytes: u32,
        fresh: impl FnOnce() -> Result<Box<dyn Fabric>, FabricError>,
    ) -> Result<ZeroLoad, FabricError> {
        let key = (src, dst, bytes, now_cycle % self.period);
        if let Some(&z) = self.cache.get(&key) {
            return Ok(z);
        }
        let mut f = fresh()?;
        let phase = key.3 * f.cycle_ps();
        f.skip_idle(phase)?;
        let z = alone(&mut *f, src, dst, bytes)?;
        if self.cache.len() >= PROBE_CACHE {
            self.cache.clear();
        }
        self.cache.insert(key, z);
        Ok(z)
    }
}

/// Measures [`ZeroLoad`] on `f`, which must be empty: a train of `GAPS + 1` packets like the
/// one asked about, injected now, run until all are delivered; the first one's latency
/// (the others queue behind it at its source and cannot delay it) and the gaps between them
/// in delivery order.
pub fn alone(
    f: &mut dyn Fabric,
    src: usize,
    dst: usize,
    bytes: u32,
) -> Result<ZeroLoad, FabricError> {
    let t0 = f.now();
    let train = GAPS as u64 + 1;
    for tag in 0..train {
        f.inject(Packet {
            src,
            dst,
            bytes,
            tag,
        });
    }
    let mut out = Vec::new();
    while (out.len() as u64) < train {
        let Some(next) = f.next_event() else {
            return Err(FabricError::Failed(format!(
                "a lone packet of {bytes} B from {src} to {dst} was never delivered"
            )));
        };
        f.advance(next.max(f.now()).saturating_add(f.cycle_ps()), &mut out)?;
    }
    let first = out
        .iter()
        .find(|d| d.packet.tag == 0)
        .map_or(t0, |d| d.delivered);
    let mut z = ZeroLoad {
        latency: first - t0,
        spacing: [0; GAPS],
        steady: 0,
    };
    for (gap, w) in z.spacing.iter_mut().zip(out.windows(2)) {
        *gap = w[1].delivered - w[0].delivered;
    }
    let tail = &z.spacing[GAPS / 2..];
    z.steady = tail.iter().sum::<Ps>() / tail.len() as Ps;
    Ok(z)
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
