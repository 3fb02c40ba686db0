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

/// A packet alone on a fresh fabric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZeroLoad {
    /// Injection → delivery.
    pub latency: Ps,
    /// How much later a second packet like it, injected at the same time, is delivered: how
    /// long the packet holds the narrowest point of its route (its serialisation there).
    pub spacing: Ps,
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

/// Measures [`ZeroLoad`] on `f`, which must be empty: two packets like the one asked about,
/// injected now, run until both are delivered; the first one's latency (the second queues
/// behind it and cannot delay it) and the gap between them.
pub fn alone(
    f: &mut dyn Fabric,
    src: usize,
    dst: usize,
    bytes: u32,
) -> Result<ZeroLoad, FabricError> {
    let t0 = f.now();
    for tag in 0..2 {
        f.inject(Packet {
            src,
            dst,
            bytes,
            tag,
        });
    }
    let mut out = Vec::new();
    while out.len() < 2 {
        let Some(next) = f.next_event() else {
            return Err(FabricError::Failed(format!(
                "a lone packet of {bytes} B from {src} to {dst} was never delivered"
            )));
        };
        f.advance(next.max(f.now()).saturating_add(f.cycle_ps()), &mut out)?;
    }
    let at = |tag| {
        out.iter()
            .find(|d| d.packet.tag == tag)
            .map(|d| d.delivered)
    };
    let (first, second) = (at(0).unwrap_or(t0), at(1).unwrap_or(t0));
    Ok(ZeroLoad {
        latency: first - t0,
        spacing: second.saturating_sub(first),
    })
}

/// A message's wire time: its packets, injected when they were, each alone on the fabric
/// ([`ZeroLoad::latency`]) but never closer behind its predecessor than its own
/// [`ZeroLoad::spacing`] (the message's packets share their route even when nothing else
/// does). Packets are added in injection order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wire {
    end: Option<Ps>,
}

impl Wire {
    pub fn add(&mut self, injected: Ps, z: ZeroLoad) {
        let alone = injected.saturating_add(z.latency);
        self.end = Some(match self.end {
            Some(end) => alone.max(end.saturating_add(z.spacing)),
            None => alone,
        });
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
        let z = ZeroLoad {
            latency: 10,
            spacing: 4,
        };
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
}
