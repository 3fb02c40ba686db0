//! Accumulators of the measurement window and their conversion into [`Metrics`].
//!
//! Everything is counted over the window `[warmup, warmup + measure)`: acceptances, echoes and
//! link symbols that happen in it, and the delays of sends *created* in it (which may complete
//! during the drain, so that slow sends are not censored).

use super::delays::Delays;
use crate::config::doc;
use icn_engine::Metrics;
use icn_engine::Table;
use icn_engine::doc::Output;
use icn_engine::stats::{Summary, jain_fairness};

/// 1 cycle = 2 ns.
pub const NS_PER_CYCLE: f64 = 2.0;

/// Counters of one run's measurement window.
#[derive(Clone, Debug, Default)]
pub struct Measure {
    pub cycles: u64,
    pub nodes: usize,
    pub hot_node: Option<usize>,
    /// Symbols of accepted sends.
    pub accepted_symbols: u64,
    pub accepted_bytes: u64,
    pub accepted: u64,
    pub per_src_bytes: Vec<u64>,
    pub per_src_accepted: Vec<u64>,
    /// Sends generated in the window, by source.
    pub per_src_generated: Vec<u64>,
    /// Sends accepted at the hot node, by source.
    pub hot_accepted_by_src: Vec<u64>,
    /// Delays (creation → DONE, cycles) of sends created in the window, by source.
    pub per_src_delay: Vec<Delays>,
    /// Transmissions − 1, summed over completed sends created in the window.
    pub retries: u64,
    pub completed: u64,
    pub transmitted: u64,
    pub ps_disallow: u64,
    pub busy_echoes: u64,
    pub notify_symbols: u64,
    pub generated: u64,
    pub generated_symbols: u64,
    pub source_drops: u64,
    pub epoch_a: Summary,
    pub epoch_b: Summary,
}

impl Measure {
    pub fn new(nodes: usize, cycles: u64, hot_node: Option<usize>) -> Self {
        Measure {
            cycles,
            nodes,
            hot_node,
            per_src_bytes: vec![0; nodes],
            per_src_accepted: vec![0; nodes],
            per_src_generated: vec![0; nodes],
            hot_accepted_by_src: vec![0; nodes],
            per_src_delay: vec![Delays::default(); nodes],
            ..Measure::default()
        }
    }

    /// The scalar metrics (names suffixed with `suffix`) and the `per_source` table.
    pub fn metrics(&self, suffix: &str, cycles_simulated: u64) -> Metrics {
        let mut m = Metrics::default();
        let c = self.cycles as f64;
        let capacity = self.nodes as f64 * c;
        let ns = c * NS_PER_CYCLE;
        let delay = Delays::summarise(&self.per_src_delay);
        let ratio = |a: u64, b: u64| {
            if b == 0 {
                f64::NAN
            } else {
                a as f64 / b as f64
            }
        };
        let mut put = |o: &Output, value: f64| {
            m.put_suffixed(o, suffix, value);
        };
        put(&doc::ETA, self.accepted_symbols as f64 / capacity);
        put(&doc::THROUGHPUT_GBPS, self.accepted_bytes as f64 / ns);
        put(&doc::TRANSACTIONS_PER_CYCLE, self.accepted as f64 / c);
        put(&doc::PS_DISALLOW_SENT, self.ps_disallow as f64);
        put(
            &doc::PS_DISALLOW_SHARE,
            ratio(self.ps_disallow, self.transmitted),
        );
        put(&doc::BUSY_ECHOES, self.busy_echoes as f64);
        put(&doc::NOTIFY_SYMBOLS, self.notify_symbols as f64);
        put(&doc::NOTIFY_OVERHEAD, self.notify_symbols as f64 / capacity);
        put(&doc::DELAY_MEAN_NS, delay.mean * NS_PER_CYCLE);
        put(&doc::DELAY_P50_NS, delay.p50 * NS_PER_CYCLE);
        put(&doc::DELAY_P99_NS, delay.p99 * NS_PER_CYCLE);
        put(&doc::DELAY_MAX_NS, delay.max * NS_PER_CYCLE);
        put(
            &doc::RETRIES_PER_PACKET,
            ratio(self.retries, self.completed),
        );
        let epoch = |s: &Summary| {
            if s.count == 0 {
                f64::NAN
            } else {
                s.mean * NS_PER_CYCLE
            }
        };
        put(&doc::SERVE_A_EPOCH_MEAN_NS, epoch(&self.epoch_a));
        put(&doc::SERVE_B_EPOCH_MEAN_NS, epoch(&self.epoch_b));
        // Sources that offered nothing (a silent hot node) do not count.
        let per_src: Vec<f64> = (0..self.nodes)
            .filter(|&s| self.per_src_generated[s] > 0)
            .map(|s| self.per_src_bytes[s] as f64)
            .collect();
        put(&doc::JAIN_FAIRNESS, jain_fairness(&per_src));
        let hot_jain = self.hot_node.map_or(f64::NAN, |h| {
            let xs: Vec<f64> = (0..self.nodes)
                .filter(|&s| s != h)
                .map(|s| self.hot_accepted_by_src[s] as f64)
                .collect();
            jain_fairness(&xs)
        });
        put(&doc::HOTSPOT_JAIN, hot_jain);
        put(&doc::CYCLES_SIMULATED, cycles_simulated as f64);
        put(
            &doc::OFFERED_LOAD_ACTUAL,
            self.generated_symbols as f64 / capacity,
        );
        put(&doc::SOURCE_DROPS, self.source_drops as f64);
        m.tables.push(self.per_source_table());
        m
    }

    fn per_source_table(&self) -> Table {
        let ns = self.cycles as f64 * NS_PER_CYCLE;
        let rows = (0..self.nodes)
            .map(|s| {
                let h = self.per_src_delay[s].summary();
                vec![
                    s as f64,
                    self.per_src_bytes[s] as f64 / ns,
                    h.mean * NS_PER_CYCLE,
                    h.p99 * NS_PER_CYCLE,
                    h.max * NS_PER_CYCLE,
                    self.per_src_accepted[s] as f64,
                ]
            })
            .collect();
        Table::new(&doc::PER_SOURCE, rows)
    }
}
