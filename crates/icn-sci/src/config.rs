//! `SciConfig`: every key of an `model = "sci"` experiment file, with defaults that reproduce
//! the paper's set-up (8 nodes, 64-byte sends, hot-spot traffic, A/B aging, 4 active buffers,
//! 4-packet input queues) and validation that names the key and the allowed range.

pub mod doc;

use crate::protocol::packet::{DATA_SIZES, send_symbols};
use crate::protocol::receiver::{GenerationEnd, Policy};
use crate::ring::trace::Trace;
use icn_engine::Invalid;
use serde::{Deserialize, Serialize};

/// Which transmitter the nodes use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Transmitter {
    /// IEEE 1596 A/B aging: send whenever the transmitter is free.
    #[default]
    Standard,
    /// Intelligent A/B aging: NOTIFYs, Serve Status Tables, hold-back.
    Intelligent,
    /// Both on identical traffic; metrics suffixed `_std` / `_iab`, plus `r` and `delay_ratio`.
    Compare,
}

/// How a receiver decides that an A (B) generation is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GenerationEndKind {
    /// Count reservations; switch when they reach 0.
    #[default]
    Counted,
    /// Switch after `quiet_window` cycles without a RETRY_x.
    QuietWindow,
}

/// Bandwidth allocation (who may insert when), orthogonal to queue allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum BandwidthAllocation {
    /// Pure register insertion: a node transmits whenever its bypass FIFO is empty at a
    /// packet boundary. A node whose input is quiet can then fill its output with
    /// back-to-back packets (one idle apart), and its downstream neighbour, whose FIFO never
    /// drains, starves; with A/B aging this livelocks (see docs/sci.md), so it is not the
    /// default.
    None,
    /// SAT fairness (MetaRing, Cidon & Ofek 1990) in place of SCI's go-bits: a SAT signal
    /// circulates hop by hop; a node may start at most `sat_quota` own sends between two SAT
    /// visits, and keeps the SAT while it wants to send but has not sent since its last
    /// visit. Starvation-free: a holder blocks everyone's quota until the ring drains enough
    /// for it to insert. NOTIFYs are exempt. The default.
    #[default]
    Sat,
}

/// Destination pattern of the SCI models' generated sends (`traffic.pattern`): the one pattern
/// type of every model (icn-topo's), of which the ring draws
/// * `uniform`: a node drawn uniformly from the other N − 1 (a node does not send to itself,
///   where the open-loop harness's `uniform` includes the source, as BookSim2's);
/// * `hotspot`: with probability `hotspot_fraction` to `hotspot_node`, else uniform over the
///   other nodes (the hot node itself sends uniformly);
/// * `neighbor_x` (or its earlier name `neighbour`) and `neighbor`: the downstream node,
///   i + 1 mod N (on a ring the two are the same);
/// * `trace`: sends read from `trace_file` (CSV `cycle,src,dst,bytes`); `load` is ignored.
pub use icn_fabric::traffic::TrafficPattern;

/// The patterns the ring draws, for the error that refuses the others.
const RING_PATTERNS: &str = "uniform, hotspot, neighbor_x (or neighbour), neighbor or trace";

/// `[traffic]`: where sends go.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    pub pattern: TrafficPattern,
    /// The hot node (0-based).
    pub hotspot_node: usize,
    /// Share of each (non-hot) node's sends that go to the hot node, in [0, 1].
    pub hotspot_fraction: f64,
    /// Whether the hot node generates traffic of its own (uniform over the others). With
    /// `false` only the nodes competing for the hot spot send, which makes per-source
    /// fairness plots easier to read.
    pub hot_node_sends: bool,
    /// CSV trace for `pattern = "trace"`, path relative to the working directory.
    pub trace_file: Option<String>,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            pattern: TrafficPattern::Hotspot,
            hotspot_node: 0,
            hotspot_fraction: 0.3,
            hot_node_sends: true,
            trace_file: None,
        }
    }
}

/// The SCI ring model's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SciConfig {
    /// Ring size N, 2..=64.
    pub nodes: usize,
    /// Offered load per node, (0, 1]: the fraction of its output link a node would fill with
    /// its own send packets (symbols incl. header and CRC, not the trailing idle).
    pub load: f64,
    /// `standard`, `intelligent` or `compare`.
    pub transmitter: Transmitter,
    /// Queue-allocation policy: `no-aging`, `ab` (IEEE 1596 A/B aging) or `counted-ab`.
    pub receiver: Policy,
    /// A/B generation end: `counted` or `quiet-window`.
    pub generation_end: GenerationEndKind,
    /// Cycles without RETRY_x that end a generation when `generation_end = "quiet-window"`.
    pub quiet_window: u64,
    /// Active buffers per node (outstanding un-echoed or to-be-retried sends), 1..=1024.
    pub active_buffers: usize,
    /// Input-queue depth in packets, 1..=1_000_000 (ignored with `unbounded_queue`).
    pub queue_depth: usize,
    /// An input queue that always has space.
    pub unbounded_queue: bool,
    /// Cycles the receiver needs to consume one packet from its input queue, 0..=1_000_000.
    /// Default 120 cycles (240 ns, ≈ 267 MB/s of 64-byte data): slower than the link's 41
    /// cycles per 64-byte send, so a hot spot congests at a low load.
    pub service_time: u64,
    /// Send-queue capacity per node, 1..=1_000_000: generated sends that find it full are
    /// dropped at the source and counted (`source_drops`); this bounds memory and drain time
    /// at saturation.
    pub send_queue_depth: usize,
    /// Data sizes of sends in bytes, each one of 0, 16, 64, 256.
    pub data_bytes: Vec<u16>,
    /// Relative weights of `data_bytes` (same length, ≥ 0, positive sum).
    pub data_weights: Vec<f64>,
    /// Adds a header CRC symbol to every send (SCI's optional layout).
    pub crc_outside_header: bool,
    /// Bandwidth allocation: `sat` (default) or `none` (pure register insertion).
    pub bandwidth_allocation: BandwidthAllocation,
    /// Own sends per SAT visit with `bandwidth_allocation = "sat"`, 1..=1024.
    pub sat_quota: u32,
    pub traffic: TrafficConfig,
    /// Cycles simulated before measuring, 0..=10^10.
    pub warmup_cycles: u64,
    /// Cycles of the measurement window, 1..=10^10.
    pub measure_cycles: u64,
    /// After generation stops, cycles allowed for in-flight sends to complete before the run
    /// fails with a diagnosis, 1..=10^10.
    pub drain_limit_cycles: u64,
}

impl Default for SciConfig {
    fn default() -> Self {
        SciConfig {
            nodes: 8,
            load: 0.5,
            transmitter: Transmitter::Standard,
            receiver: Policy::Ab,
            generation_end: GenerationEndKind::Counted,
            quiet_window: 200,
            active_buffers: 4,
            queue_depth: 4,
            unbounded_queue: false,
            service_time: 120,
            send_queue_depth: 64,
            data_bytes: vec![64],
            data_weights: vec![1.0],
            crc_outside_header: false,
            bandwidth_allocation: BandwidthAllocation::Sat,
            sat_quota: 2,
            traffic: TrafficConfig::default(),
            warmup_cycles: 20_000,
            measure_cycles: 200_000,
            drain_limit_cycles: 2_000_000,
        }
    }
}

const MAX_CYCLES: u64 = 10_000_000_000;

impl SciConfig {
    /// The receivers' generation-end rule.
    pub fn generation_end(&self) -> GenerationEnd {
        match self.generation_end {
            GenerationEndKind::Counted => GenerationEnd::Counted,
            GenerationEndKind::QuietWindow => GenerationEnd::QuietWindow(self.quiet_window),
        }
    }

    /// Send length in symbols for each configured data size.
    pub fn send_lengths(&self) -> Vec<usize> {
        self.data_bytes
            .iter()
            .map(|&b| send_symbols(b, self.crc_outside_header))
            .collect()
    }

    /// Checks every range and cross-field constraint; loads and checks the trace file.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.validate_fields()?;
        if self.traffic.pattern == TrafficPattern::Trace {
            self.load_trace()?;
        }
        Ok(())
    }

    /// The parsed trace (only meaningful for `pattern = "trace"`).
    pub fn load_trace(&self) -> Result<Trace, Invalid> {
        let path = self.traffic.trace_file.as_deref().ok_or_else(|| {
            Invalid::new(
                "traffic.trace_file",
                "required when traffic.pattern = \"trace\"",
            )
        })?;
        Trace::load(path, self.nodes, &self.data_bytes)
    }

    fn validate_fields(&self) -> Result<(), Invalid> {
        Invalid::check(
            (2..=64).contains(&self.nodes),
            "nodes",
            "2 ..= 64",
            self.nodes,
        )?;
        Invalid::check(
            self.load > 0.0 && self.load <= 1.0,
            "load",
            "(0, 1]",
            self.load,
        )?;
        Invalid::check(
            self.quiet_window >= 1 && self.quiet_window <= MAX_CYCLES,
            "quiet_window",
            "1 ..= 10^10 cycles",
            self.quiet_window,
        )?;
        Invalid::check(
            (1..=1024).contains(&self.active_buffers),
            "active_buffers",
            "1 ..= 1024",
            self.active_buffers,
        )?;
        Invalid::check(
            (1..=1_000_000).contains(&self.queue_depth),
            "queue_depth",
            "1 ..= 1000000 packets",
            self.queue_depth,
        )?;
        Invalid::check(
            self.service_time <= 1_000_000,
            "service_time",
            "0 ..= 1000000 cycles",
            self.service_time,
        )?;
        Invalid::check(
            (1..=1_000_000).contains(&self.send_queue_depth),
            "send_queue_depth",
            "1 ..= 1000000 packets",
            self.send_queue_depth,
        )?;
        Invalid::check(
            (1..=1024).contains(&self.sat_quota),
            "sat_quota",
            "1 ..= 1024",
            self.sat_quota,
        )?;
        Invalid::check(
            !self.data_bytes.is_empty() && self.data_bytes.len() <= 4,
            "data_bytes",
            "a list of 1 ..= 4 sizes from {0, 16, 64, 256}",
            format!("{:?}", self.data_bytes),
        )?;
        for (i, b) in self.data_bytes.iter().enumerate() {
            Invalid::check(
                DATA_SIZES.contains(b),
                &format!("data_bytes[{i}]"),
                "{0, 16, 64, 256}",
                b,
            )?;
        }
        Invalid::check(
            self.data_weights.len() == self.data_bytes.len(),
            "data_weights",
            &format!("a list as long as data_bytes ({})", self.data_bytes.len()),
            format!("{} weights", self.data_weights.len()),
        )?;
        for (i, w) in self.data_weights.iter().enumerate() {
            Invalid::check(
                w.is_finite() && *w >= 0.0,
                &format!("data_weights[{i}]"),
                "finite values ≥ 0",
                w,
            )?;
        }
        Invalid::check(
            self.data_weights.iter().sum::<f64>() > 0.0,
            "data_weights",
            "weights with a positive sum",
            format!("{:?}", self.data_weights),
        )?;
        Invalid::check(
            matches!(
                self.traffic.pattern,
                TrafficPattern::Uniform
                    | TrafficPattern::Hotspot
                    | TrafficPattern::NeighborX
                    | TrafficPattern::Neighbor
                    | TrafficPattern::Trace
            ),
            "traffic.pattern",
            RING_PATTERNS,
            self.traffic.pattern.name(),
        )?;
        Invalid::check(
            self.traffic.hotspot_node < self.nodes,
            "traffic.hotspot_node",
            &format!("0 ..= {} (nodes − 1)", self.nodes - 1),
            self.traffic.hotspot_node,
        )?;
        Invalid::check(
            (0.0..=1.0).contains(&self.traffic.hotspot_fraction),
            "traffic.hotspot_fraction",
            "[0, 1]",
            self.traffic.hotspot_fraction,
        )?;
        Invalid::check(
            self.warmup_cycles <= MAX_CYCLES,
            "warmup_cycles",
            "0 ..= 10^10",
            self.warmup_cycles,
        )?;
        Invalid::check(
            (1..=MAX_CYCLES).contains(&self.measure_cycles),
            "measure_cycles",
            "1 ..= 10^10",
            self.measure_cycles,
        )?;
        Invalid::check(
            (1..=MAX_CYCLES).contains(&self.drain_limit_cycles),
            "drain_limit_cycles",
            "1 ..= 10^10",
            self.drain_limit_cycles,
        )?;
        self.check_memory(icn_engine::memory::available_memory())
    }

    /// The delay of every send accepted in the window is kept (8 bytes each) for exact
    /// percentiles: at most `nodes × measure_cycles × load / (symbols of the shortest send)`
    /// sends, twice with `transmitter = "compare"`. Refused, naming `measure_cycles`, when that
    /// exceeds the memory available (64 nodes at load 1 for 10^10 cycles: ≈ 130 GB). Before
    /// that, the send and input queues at their full depths, naming `send_queue_depth`.
    pub fn check_memory(&self, available: u64) -> Result<(), Invalid> {
        let shortest = self
            .data_bytes
            .iter()
            .map(|&b| send_symbols(b, self.crc_outside_header))
            .min()
            .unwrap_or(1)
            .max(1);
        let runs = if self.transmitter == Transmitter::Compare {
            2.0
        } else {
            1.0
        };
        let sends = self.nodes as f64 * self.measure_cycles as f64 * self.load.clamp(0.0, 1.0)
            / shortest as f64;
        // Send and input queues fill up to their depths past saturation: ≈ 24 bytes a send
        // (measured: 64 nodes × 10^6 queued sends plateau at 1.5 GB).
        let depth = self.send_queue_depth as u128
            + if self.unbounded_queue {
                0
            } else {
                self.queue_depth as u128
            };
        icn_engine::memory::check_fits(
            "send_queue_depth",
            &format!(
                "queues of {} sends per node ({} nodes) when full",
                depth, self.nodes
            ),
            32 * depth * self.nodes as u128,
            available,
        )?;
        icn_engine::memory::check_fits(
            "measure_cycles",
            &format!(
                "keeping the delay of every send of the window ({} cycles × {} nodes)",
                self.measure_cycles, self.nodes
            ),
            (8.0 * sends * runs) as u128,
            available,
        )
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;

    /// 64 nodes at load 1 with 64-byte sends (40 symbols) for 10^10 cycles keep ≈ 1.6·10^10
    /// delays (≈ 130 GB): refused naming `measure_cycles`; the default window (8 nodes, 2·10^5
    /// cycles, load 0.5: ≈ 20 000 sends, 0.16 MB) fits in 1 MB but not in 100 KB.
    #[test]
    fn a_window_whose_delays_the_machine_cannot_hold_is_refused() {
        let cfg = SciConfig {
            nodes: 64,
            load: 1.0,
            measure_cycles: 10_000_000_000,
            ..SciConfig::default()
        };
        let e = cfg.check_memory(24 << 30).unwrap_err();
        assert_eq!(e.key, "measure_cycles");
        assert!(e.message.contains("MB are available"), "{}", e.message);
        SciConfig::default().check_memory(1 << 20).unwrap();
        // Full queues: 64 nodes × 2·10^6 sends of queue ≈ 4 GB.
        let deep = SciConfig {
            nodes: 64,
            send_queue_depth: 1_000_000,
            queue_depth: 1_000_000,
            ..SciConfig::default()
        };
        assert_eq!(
            deep.check_memory(1 << 30).unwrap_err().key,
            "send_queue_depth"
        );
        deep.check_memory(8 << 30).unwrap();
        assert!(SciConfig::default().check_memory(100 << 10).is_err());
    }
}
