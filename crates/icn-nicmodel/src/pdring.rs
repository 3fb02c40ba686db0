//! MyVIA's physical-descriptor ring (paper §3.3, Fig. 4) as a sans-IO state machine, and a
//! producer/consumer run that counts its interrupts.
//!
//! | event | state | action |
//! |---|---|---|
//! | host posts a PD | flag clear, small ring not full | PD → small ring (one PIO) |
//! | host posts a PD | small ring full, or flag set | PD → big ring in host memory, set flag |
//! | host posts a PD | flag set and big ring full | refused (`Full`): the host must wait |
//! | NIC takes a PD | small ring empty | nothing (`Empty`) |
//! | NIC takes a PD | afterwards count ≤ low water, flag set, no interrupt pending | raise an interrupt |
//! | interrupt handler | — | move min(big count, free small slots) PDs big → small; clear flag if big empties |
//!
//! PDs keep their order: while the flag is set, new PDs go to the big ring even if the small
//! ring has room, so the NIC never sees a later PD before an earlier one.

use crate::bench;
use crate::{Switches, build};
use icn_engine::{Invalid, rng};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Where a posted PD went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Post {
    Small,
    Big,
    Full,
}

/// What the NIC got when it looked at the small ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    Empty,
    Took { interrupt: bool },
}

/// The two rings, the flag and the pending-interrupt bit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PdRing {
    small_cap: usize,
    big_cap: usize,
    low_water: usize,
    small: usize,
    big: usize,
    flag: bool,
    irq_pending: bool,
}

impl PdRing {
    /// `low_water` must be below `small_cap` (checked by [`RingConfig::validate`]).
    pub fn new(small_cap: usize, big_cap: usize, low_water: usize) -> Self {
        PdRing {
            small_cap,
            big_cap,
            low_water,
            small: 0,
            big: 0,
            flag: false,
            irq_pending: false,
        }
    }

    /// Host posts one PD.
    pub fn post(&mut self) -> Post {
        if !self.flag && self.small < self.small_cap {
            self.small += 1;
            Post::Small
        } else if self.big < self.big_cap {
            self.big += 1;
            self.flag = true;
            Post::Big
        } else {
            Post::Full
        }
    }

    /// NIC takes the next PD from the small ring.
    pub fn take(&mut self) -> Take {
        if self.small == 0 {
            return Take::Empty;
        }
        self.small -= 1;
        let interrupt = self.flag && self.small <= self.low_water && !self.irq_pending;
        self.irq_pending |= interrupt;
        Take::Took { interrupt }
    }

    /// The host's interrupt handler; returns how many PDs it moved.
    pub fn on_interrupt(&mut self) -> usize {
        let moved = self.big.min(self.small_cap - self.small);
        self.big -= moved;
        self.small += moved;
        if self.big == 0 {
            self.flag = false;
        }
        self.irq_pending = false;
        moved
    }

    pub fn small_len(&self) -> usize {
        self.small
    }
    pub fn big_len(&self) -> usize {
        self.big
    }
    pub fn flag(&self) -> bool {
        self.flag
    }
}

/// Ring sizes and the application that drives them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RingConfig {
    /// PDs in the NIC's small ring (per VI send queue).
    pub small_ring: usize,
    /// PDs in the host's big ring.
    pub big_ring: usize,
    /// Interrupt when the small ring falls to this many PDs and the flag is set.
    pub low_water: usize,
    pub messages: usize,
    /// Mean messages per burst (geometric).
    pub burst_mean: f64,
    /// Host time per post within a burst, µs.
    pub post_us: f64,
    /// Mean time between posts over the whole run, µs (sets the think time between bursts).
    pub mean_gap_us: f64,
}

impl Default for RingConfig {
    /// A communication-heavy phase of the paper's bimodal traffic: bursts of 8 posts, one
    /// message per 30 µs on average. Ring sizes are assumptions (the paper gives none).
    fn default() -> Self {
        RingConfig {
            small_ring: 64,
            big_ring: 1024,
            low_water: 4,
            messages: 20_000,
            burst_mean: 8.0,
            post_us: 1.0,
            mean_gap_us: 30.0,
        }
    }
}

impl RingConfig {
    pub fn validate(&self) -> Result<(), Invalid> {
        Invalid::check(
            (2..=65536).contains(&self.small_ring),
            "ring.small_ring",
            "[2, 65536]",
            self.small_ring,
        )?;
        Invalid::check(
            (1..=1 << 20).contains(&self.big_ring),
            "ring.big_ring",
            "[1, 1048576]",
            self.big_ring,
        )?;
        Invalid::check(
            self.low_water < self.small_ring,
            "ring.low_water",
            &format!("[0, small_ring = {})", self.small_ring),
            self.low_water,
        )?;
        Invalid::check(
            (1..=1_000_000).contains(&self.messages),
            "ring.messages",
            "[1, 1000000]",
            self.messages,
        )?;
        Invalid::check(
            self.burst_mean >= 1.0 && self.burst_mean.is_finite(),
            "ring.burst_mean",
            "[1, ∞)",
            self.burst_mean,
        )?;
        Invalid::check(
            self.post_us > 0.0 && self.post_us.is_finite(),
            "ring.post_us",
            "(0, ∞) µs",
            self.post_us,
        )?;
        Invalid::check(
            self.mean_gap_us >= self.post_us && self.mean_gap_us.is_finite(),
            "ring.mean_gap_us",
            "[post_us, ∞) µs",
            self.mean_gap_us,
        )
    }
}

/// Result of a producer/consumer run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RingStats {
    pub messages: usize,
    pub interrupts: usize,
    pub overflowed: usize,
    pub mean_service_us: f64,
}

impl RingStats {
    pub fn interrupts_per_1000(&self) -> f64 {
        1000.0 * self.interrupts as f64 / self.messages.max(1) as f64
    }
    pub fn overflow_fraction(&self) -> f64 {
        self.overflowed as f64 / self.messages.max(1) as f64
    }
}

/// The paper's traffic model: ~10 % below 128 B, 82 % in 128 B–4 KB, 8 % in 8–64 KB
/// (log-uniform within each band).
pub fn draw_size<R: Rng>(rng: &mut R) -> u64 {
    let u: f64 = rng.random();
    let (lo, hi) = if u < 0.10 {
        (4.0f64, 128.0f64)
    } else if u < 0.92 {
        (128.0, 4096.0)
    } else {
        (8192.0, 65536.0)
    };
    let x: f64 = rng.random();
    (lo * (hi / lo).powf(x)).round() as u64
}

/// NIC time per message of a given size, µs: steady-state window time, interpolated on a
/// power-of-two grid in log size.
pub struct ServiceTable {
    grid: Vec<(f64, f64)>,
}

impl ServiceTable {
    pub fn new(pipe: &crate::Pipeline, seed: u64) -> Result<Self, crate::sim::Stall> {
        let grid = (2..=16)
            .map(|k| {
                let s = 1u64 << k;
                let bw = bench::window(pipe, s, 64, 64, seed)?;
                Ok(((s as f64).ln(), s as f64 / bw))
            })
            .collect::<Result<_, _>>()?;
        Ok(ServiceTable { grid })
    }

    pub fn us(&self, size: u64) -> f64 {
        let x = (size.max(1) as f64).ln();
        let g = &self.grid;
        if x <= g[0].0 {
            return g[0].1;
        }
        for w in g.windows(2) {
            if x <= w[1].0 {
                let f = (x - w[0].0) / (w[1].0 - w[0].0);
                return w[0].1 + f * (w[1].1 - w[0].1);
            }
        }
        g[g.len() - 1].1 * (x - g[g.len() - 1].0).exp()
    }
}

/// Runs the ring with the NIC speed of `design` on `profile`.
pub fn run_on(
    profile: &str,
    design: &str,
    cfg: &RingConfig,
    seed: u64,
) -> Result<RingStats, Invalid> {
    let pipe = build(profile, design, Switches::default(), 1.0)?;
    let interrupt_us = crate::Profile::load(profile)?.op("host_cpu.interrupt", "profile")?;
    let table = ServiceTable::new(&pipe, seed)?;
    Ok(simulate(cfg, &|s| table.us(s), interrupt_us, seed))
}

/// Producer (bursty host) / consumer (NIC) run of the ring.
pub fn simulate(
    cfg: &RingConfig,
    service_us: &dyn Fn(u64) -> f64,
    interrupt_us: f64,
    seed: u64,
) -> RingStats {
    let mut ring = PdRing::new(cfg.small_ring, cfg.big_ring, cfg.low_water);
    let mut sizes_rng = rng::stream(seed, 100);
    let mut arrivals = rng::stream(seed, 101);
    let p_end = 1.0 / cfg.burst_mean;
    let think_mean = (cfg.mean_gap_us - cfg.post_us) * cfg.burst_mean;
    let mut queue: VecDeque<u64> = VecDeque::new();
    let mut stats = RingStats {
        messages: cfg.messages,
        ..RingStats::default()
    };
    let (mut posted, mut served) = (0usize, 0usize);
    let mut next_post = Some(0.0f64);
    let mut blocked = false;
    let mut nic_done: Option<f64> = None;
    let mut irq_at: Option<f64> = None;
    let mut service_total = 0.0;
    let mut now;
    while served < cfg.messages {
        let candidates = [
            next_post.filter(|_| !blocked && posted < cfg.messages),
            nic_done,
            irq_at,
        ];
        let Some((which, t)) = candidates
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (i, t)))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
        else {
            break; // cannot happen: a PD is always somewhere while messages remain
        };
        now = t;
        match which {
            0 => match ring.post() {
                Post::Full => blocked = true,
                p => {
                    if p == Post::Big {
                        stats.overflowed += 1;
                    }
                    posted += 1;
                    queue.push_back(draw_size(&mut sizes_rng));
                    let mut gap = cfg.post_us;
                    if arrivals.random_bool(p_end) {
                        let u: f64 = arrivals.random();
                        gap += -think_mean * (1.0 - u).ln();
                    }
                    next_post = Some(now + gap);
                }
            },
            1 => {
                nic_done = None;
                served += 1;
            }
            _ => {
                ring.on_interrupt();
                irq_at = None;
                if blocked {
                    blocked = false;
                    next_post = Some(now);
                }
            }
        }
        if nic_done.is_none()
            && let Take::Took { interrupt } = ring.take()
        {
            let size = queue.pop_front().unwrap_or(4);
            let s = service_us(size);
            service_total += s;
            nic_done = Some(now + s);
            if interrupt {
                stats.interrupts += 1;
                irq_at = Some(now + interrupt_us);
            }
        }
    }
    stats.mean_service_us = service_total / served.max(1) as f64;
    stats
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_post_to_small_then_big_then_full() {
        let mut r = PdRing::new(2, 1, 0);
        assert_eq!(r.post(), Post::Small);
        assert_eq!(r.post(), Post::Small);
        assert_eq!(r.post(), Post::Big);
        assert!(r.flag());
        assert_eq!(r.post(), Post::Full);
        assert_eq!((r.small_len(), r.big_len()), (2, 1));
    }

    #[test]
    fn flag_keeps_order_even_when_small_ring_has_room() {
        let mut r = PdRing::new(2, 4, 0);
        r.post();
        r.post();
        assert_eq!(r.post(), Post::Big);
        assert_eq!(r.take(), Take::Took { interrupt: false });
        // Small ring has a free slot, but a PD waits in the big ring: the new one queues behind.
        assert_eq!(r.post(), Post::Big);
    }

    #[test]
    fn low_water_with_flag_interrupts_once_until_serviced() {
        let mut r = PdRing::new(4, 8, 2);
        for _ in 0..6 {
            r.post();
        }
        assert_eq!(r.big_len(), 2);
        assert_eq!(r.take(), Take::Took { interrupt: false }); // 3 left
        assert_eq!(r.take(), Take::Took { interrupt: true }); // 2 left = low water
        assert_eq!(r.take(), Take::Took { interrupt: false }); // already pending
        assert_eq!(r.on_interrupt(), 2); // big → small, 1 + 2 = 3
        assert_eq!((r.small_len(), r.big_len(), r.flag()), (3, 0, false));
    }

    #[test]
    fn no_flag_no_interrupt_and_empty_ring_gives_empty() {
        let mut r = PdRing::new(4, 8, 2);
        r.post();
        assert_eq!(r.take(), Take::Took { interrupt: false });
        assert_eq!(r.take(), Take::Empty);
    }

    #[test]
    fn handler_moves_only_what_fits_and_keeps_flag_while_big_is_not_empty() {
        let mut r = PdRing::new(2, 8, 0);
        for _ in 0..6 {
            r.post();
        }
        r.take();
        assert_eq!(r.on_interrupt(), 1);
        assert_eq!((r.small_len(), r.big_len(), r.flag()), (2, 3, true));
    }

    #[test]
    fn bad_ring_config_names_the_key() {
        let c = RingConfig {
            low_water: 64,
            ..RingConfig::default()
        };
        assert_eq!(c.validate().unwrap_err().key, "ring.low_water");
        let c = RingConfig {
            post_us: 0.0,
            ..RingConfig::default()
        };
        assert_eq!(c.validate().unwrap_err().key, "ring.post_us");
    }

    #[test]
    fn sizes_follow_the_bimodal_traffic_model() {
        let mut r = rng::stream(3, 0);
        let n = 20_000;
        let sizes: Vec<u64> = (0..n).map(|_| draw_size(&mut r)).collect();
        let mid = sizes.iter().filter(|s| (128..=4096).contains(*s)).count() as f64 / n as f64;
        let big = sizes.iter().filter(|s| **s > 8000).count() as f64 / n as f64;
        assert!((0.80..0.85).contains(&mid), "{mid}");
        assert!((0.07..0.09).contains(&big), "{big}");
    }

    #[test]
    fn a_nic_faster_than_the_host_never_overflows() {
        let cfg = RingConfig {
            messages: 5000,
            ..RingConfig::default()
        };
        let s = simulate(&cfg, &|_| 0.5, 5.0, 1);
        assert_eq!((s.interrupts, s.overflowed), (0, 0));
    }

    #[test]
    fn a_saturated_nic_interrupts_about_once_per_refill() {
        // NIC 100x slower than the host: the big ring is always full, each interrupt moves
        // (small - low water) PDs, so interrupts ≈ messages / (small - low_water).
        let cfg = RingConfig {
            small_ring: 16,
            low_water: 4,
            messages: 6000,
            burst_mean: 1000.0,
            post_us: 1.0,
            mean_gap_us: 1.0,
            ..RingConfig::default()
        };
        let s = simulate(&cfg, &|_| 100.0, 5.0, 1);
        let expect = 1000.0 / 12.0;
        assert!(
            (s.interrupts_per_1000() - expect).abs() < 0.05 * expect,
            "{}",
            s.interrupts_per_1000()
        );
    }
}
