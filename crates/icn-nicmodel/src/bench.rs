//! The paper's benchmarks on the timing model (Berkeley VIA's `pingpong` and `window`).
//!
//! * `pingpong`: node 0 sends, node 1 replies when the message is received, and so on;
//!   one-way latency = total time / (2 × round trips). The model is deterministic (unless NIC
//!   TLB misses are drawn), so a few round trips give the same mean as the paper's 1000.
//! * `window`: node 0 streams `messages` messages regardless of the receiver, with at most
//!   `queue_depth` sends outstanding (the VI send queue); bandwidth = bytes / time from the
//!   first post to the last message's arrival in host memory, in MB/s = 10⁶ B/s.

use crate::design::Pipeline;
use crate::sim::{self, Message, Stall};
use icn_engine::rng;

/// One point of a latency/bandwidth curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub size_bytes: u64,
    pub latency_us: f64,
    pub bandwidth_mbs: f64,
}

/// How hard to run the benchmarks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Effort {
    pub round_trips: u32,
    pub messages: u32,
    pub queue_depth: u32,
}

impl Default for Effort {
    /// The paper's counts for `window` (2000 messages); pingpong needs only a few round trips
    /// because the model has no noise.
    fn default() -> Self {
        Effort {
            round_trips: 20,
            messages: 2000,
            queue_depth: 64,
        }
    }
}

/// Message sizes of the paper's figures: 4 B … 128 KB in powers of two.
pub fn paper_sizes() -> Vec<u64> {
    (2..=17).map(|k| 1u64 << k).collect()
}

/// Mean one-way latency in µs of `round_trips` pingpongs of `size` bytes.
pub fn pingpong(pipe: &Pipeline, size: u64, round_trips: u32, seed: u64) -> Result<f64, Stall> {
    let n = 2 * round_trips.max(1) as usize;
    let msgs: Vec<Message> = (0..n)
        .map(|m| Message {
            bytes: size,
            from: m % 2,
            after_rx_of: m.checked_sub(1),
            after_tx_of: None,
        })
        .collect();
    let times = sim::run(pipe, &msgs, &mut rng::stream(seed, 2 * size))?;
    Ok(times[n - 1].rx_done_us / n as f64)
}

/// Streaming bandwidth in MB/s of `messages` messages of `size` bytes.
pub fn window(
    pipe: &Pipeline,
    size: u64,
    messages: u32,
    queue_depth: u32,
    seed: u64,
) -> Result<f64, Stall> {
    let n = messages.max(1) as usize;
    let depth = queue_depth.max(1) as usize;
    let msgs: Vec<Message> = (0..n)
        .map(|m| Message {
            bytes: size,
            from: 0,
            after_rx_of: None,
            after_tx_of: m.checked_sub(depth),
        })
        .collect();
    let times = sim::run(pipe, &msgs, &mut rng::stream(seed, 2 * size + 1))?;
    let elapsed = times[n - 1].rx_done_us - times[0].start_us;
    Ok((n as u64 * size) as f64 / elapsed)
}

/// Latency and bandwidth for every size.
pub fn curve(
    pipe: &Pipeline,
    sizes: &[u64],
    effort: Effort,
    seed: u64,
) -> Result<Vec<Point>, Stall> {
    sizes
        .iter()
        .map(|&s| {
            Ok(Point {
                size_bytes: s,
                latency_us: pingpong(pipe, s, effort.round_trips, seed)?,
                bandwidth_mbs: window(pipe, s, effort.messages, effort.queue_depth, seed)?,
            })
        })
        .collect()
}
