//! A run's timeline: per rank, each call it made and the time it waited inside it; per
//! fabric channel, its utilisation over time. Recorded by the replay ([`crate::ti::replay`])
//! when asked, rendered by the binary (Chrome trace-event JSON, OTF2, the results page's
//! picture).
//!
//! Bounded: at most `cap` spans are kept (the first ones in simulated time order of their
//! end; the rest are counted in [`Timeline::dropped`]); utilisation is sampled at most
//! [`MAX_SAMPLES`] times over the run (the period doubles, every other sample dropped, when
//! the run outlasts them) for at most [`MAX_CHANNELS`] channels. Memory is
//! `cap` spans + samples × channels, whatever the run's length.

pub use icn_fabric::ChannelLoad;
use icn_fabric::Ps;

/// Most utilisation samples kept over a run.
pub const MAX_SAMPLES: usize = 256;
/// Most channels whose utilisation is tracked (the first ones in the fabric's order).
pub const MAX_CHANNELS: usize = 1024;
/// Spans kept when the user does not say.
pub const DEFAULT_CAP: usize = 1_000_000;
/// Most spans a user may ask for (each is 32 bytes: 1 GiB).
pub const MAX_CAP: usize = 1 << 25;
/// First sampling period: 1 µs.
const FIRST_PERIOD: Ps = 1_000_000;

/// What a span is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// A call of the trace (an MPI call, `compute`, `sleep`), named by its TI action.
    Call,
    /// Time blocked on messages inside the enclosing call.
    Wait,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub rank: u32,
    pub kind: SpanKind,
    pub name: &'static str,
    pub start: Ps,
    pub end: Ps,
}

/// A channel of the fabric: `router`, `port` as [`ChannelLoad`] names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Channel {
    pub router: usize,
    pub port: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub cap: usize,
    pub ranks: usize,
    pub spans: Vec<Span>,
    /// Spans not kept past the cap.
    pub dropped: u64,
    /// The tracked channels (at most [`MAX_CHANNELS`]) and how many the fabric has.
    pub channels: Vec<Channel>,
    pub channels_in_fabric: usize,
    /// Picoseconds one unit of [`ChannelLoad::busy`] stands for (the fabric's cycle).
    pub busy_unit_ps: f64,
    /// Sample times (every `period` ps from 0) and each channel's cumulative busy count then.
    pub sample_at: Vec<Ps>,
    pub busy: Vec<Vec<u64>>,
    period: Ps,
    /// When the run ended.
    pub end: Ps,
}

impl Timeline {
    /// An empty timeline keeping at most `cap` spans (checked by the caller: 1 ..= [`MAX_CAP`]).
    pub fn new(cap: usize, ranks: usize) -> Timeline {
        Timeline {
            cap,
            ranks,
            spans: Vec::new(),
            dropped: 0,
            channels: Vec::new(),
            channels_in_fabric: 0,
            busy_unit_ps: 1.0,
            sample_at: Vec::new(),
            busy: Vec::new(),
            period: FIRST_PERIOD,
            end: 0,
        }
    }

    /// Records a span (a call, or a wait inside one).
    pub fn span(&mut self, rank: usize, kind: SpanKind, name: &'static str, start: Ps, end: Ps) {
        if self.spans.len() >= self.cap {
            self.dropped += 1;
            return;
        }
        self.spans.push(Span {
            rank: rank as u32,
            kind,
            name,
            start,
            end,
        });
    }

    /// When the next utilisation sample is due.
    pub fn next_sample(&self) -> Ps {
        self.sample_at.len() as Ps * self.period
    }

    /// Takes the samples due at or before `now` from the fabric's channel loads (a sample
    /// is the cumulative busy count at the first look at or after its time).
    pub fn sample(&mut self, now: Ps, loads: impl FnOnce() -> Vec<ChannelLoad>, cycle_ps: Ps) {
        if now < self.next_sample() {
            return;
        }
        let loads = loads();
        if self.sample_at.is_empty() {
            self.channels_in_fabric = loads.len();
            self.channels = loads
                .iter()
                .take(MAX_CHANNELS)
                .map(|l| Channel {
                    router: l.router,
                    port: l.port,
                })
                .collect();
            self.busy_unit_ps = cycle_ps as f64;
        }
        while self.next_sample() <= now {
            if self.sample_at.len() == MAX_SAMPLES {
                self.halve();
                continue;
            }
            self.sample_at.push(self.next_sample());
            self.busy
                .push(loads.iter().take(MAX_CHANNELS).map(|l| l.busy).collect());
        }
    }

    /// Keeps every other sample and doubles the period.
    fn halve(&mut self) {
        fn every_other<T>(v: &mut Vec<T>) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
        every_other(&mut self.sample_at);
        every_other(&mut self.busy);
        self.period *= 2;
    }

    /// Ends the timeline at `end` with a last sample of the loads then.
    pub fn finish(&mut self, end: Ps, loads: Vec<ChannelLoad>, cycle_ps: Ps) {
        self.end = end;
        if self.sample_at.is_empty() {
            self.channels_in_fabric = loads.len();
            self.channels = loads
                .iter()
                .take(MAX_CHANNELS)
                .map(|l| Channel {
                    router: l.router,
                    port: l.port,
                })
                .collect();
            self.busy_unit_ps = cycle_ps as f64;
            self.sample_at.push(0);
            self.busy.push(vec![0; self.channels.len()]);
        }
        if self.sample_at.last().is_some_and(|&t| t < end) {
            self.sample_at.push(end);
            self.busy
                .push(loads.iter().take(MAX_CHANNELS).map(|l| l.busy).collect());
        }
    }

    /// Per interval between samples: (start, end, utilisation of each tracked channel in
    /// 0 ..= 1, its busy time over the interval's length).
    pub fn utilisation(&self) -> Vec<(Ps, Ps, Vec<f64>)> {
        (1..self.sample_at.len())
            .map(|i| {
                let (a, b) = (self.sample_at[i - 1], self.sample_at[i]);
                let len = (b - a).max(1) as f64;
                let u = self.busy[i]
                    .iter()
                    .zip(&self.busy[i - 1])
                    .map(|(&y, &x)| (y.saturating_sub(x) as f64 * self.busy_unit_ps / len).min(1.0))
                    .collect();
                (a, b, u)
            })
            .collect()
    }

    /// What a reader must know: spans dropped past the cap, channels not tracked.
    pub fn notes(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.dropped > 0 {
            v.push(format!(
                "timeline cut: the cap of {} events was reached; {} later spans are not shown \
                 (raise it with --timeline-events)",
                self.cap, self.dropped
            ));
        }
        if self.channels_in_fabric > self.channels.len() {
            v.push(format!(
                "utilisation of the first {} of the fabric's {} channels only",
                self.channels.len(),
                self.channels_in_fabric
            ));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loads(busy: &[u64]) -> Vec<ChannelLoad> {
        busy.iter()
            .enumerate()
            .map(|(i, &b)| ChannelLoad {
                router: i,
                port: 0,
                busy: b,
            })
            .collect()
    }

    /// Spans past the cap are counted, not kept, and the note says so.
    #[test]
    fn the_cap_bounds_the_spans_and_is_noted() {
        let mut t = Timeline::new(3, 1);
        for i in 0..10 {
            t.span(0, SpanKind::Call, "send", i, i + 1);
        }
        assert_eq!((t.spans.len(), t.dropped), (3, 7));
        assert!(t.notes()[0].contains("7 later spans"), "{:?}", t.notes());
    }

    /// A channel busy 1 cycle of 1000 ps per µs-long sample interval is 0.1 % utilised;
    /// samples stay at most MAX_SAMPLES however long the run, and utilisation computed from
    /// the kept (halved) samples is still exact for a constant load.
    #[test]
    fn samples_stay_bounded_and_utilisation_is_exact_for_a_constant_load() {
        let mut t = Timeline::new(10, 1);
        // Busy 1 cycle (1000 ps) per µs: 0.1 %.
        for us in 0..10_000u64 {
            let now = us * 1_000_000;
            t.sample(now, || loads(&[us, 2 * us]), 1000);
        }
        t.finish(10_000 * 1_000_000, loads(&[10_000, 20_000]), 1000);
        assert!(
            t.sample_at.len() <= MAX_SAMPLES + 1,
            "{}",
            t.sample_at.len()
        );
        for (_, _, u) in t.utilisation() {
            assert!((u[0] - 0.001).abs() < 1e-12, "{u:?}");
            assert!((u[1] - 0.002).abs() < 1e-12, "{u:?}");
        }
    }
}
