//! `SwitchedConfig`: every key of a `model = "sci-switched"` experiment file.
//!
//! The protocol of every ring (receiver policy, transmitter, sizes, SAT, load, traffic
//! pattern, run lengths) is the `[ring]` table, an ordinary `sci` config whose `nodes` is the
//! number of *hosts* per ring and whose `traffic.hotspot_node` is a *global* host id (hosts
//! are numbered ring by ring: host `r × nodes + k` is the k-th host of host ring r). The
//! top-level keys say how rings are joined and how switches behave.

pub mod doc;

use crate::config::{SciConfig, TrafficPattern};
use crate::protocol::Policy;
use icn_engine::Invalid;
use serde::{Deserialize, Serialize};

/// How the rings are joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    /// One ring, no switch: the degenerate system, identical to `model = "sci"`.
    Single,
    /// `rings` host rings, each joined by its own two-port switch to a backbone ring that
    /// carries only those switches (a two-level ring of rings).
    #[default]
    RingOfRings,
    /// `grid_rows` row rings with hosts and `grid_cols` column rings of switches only; switch
    /// (a, b) joins row ring a and column ring b (hosts on the columns too would allow
    /// deadlock: see `topology`).
    Grid,
    /// `rings` host rings around one central crossbar switch with an agent on every ring.
    Crossbar,
}

/// How a switch picks among its inputs that want the same output ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Arbitration {
    /// Round-robin per output: the input after the one served last goes first (default).
    #[default]
    RoundRobin,
    /// Fixed priority in ring order (the lowest ring's agent first): starves the last
    /// inputs of a busy output; kept to show why arbitration matters.
    Fixed,
}

/// In which order the nodes of a multi-ring system send their busied sends (retries) and
/// their new sends (docs/sci.md, "Transmit order on switched rings"). A plain ring and
/// `topology = "single"` always use the `sci` ring's order (`oldest`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RetryOrder {
    /// Busied sends first, as on the `sci` ring (a new send starts only while no busied send
    /// is ready), but among them the least recently transmitted rather than the oldest
    /// (default): every busied send is re-sent once per round of its node's busied sends.
    #[default]
    BusiedFirst,
    /// The `sci` ring's order, oldest first: a node re-sends its oldest busied send every time
    /// it is ready, so a younger one — possibly the reservation another target waits for —
    /// can wait for ever; with intelligent hold-back behind 1-packet switch queues the system
    /// deadlocks (test `intelligent_aging_with_one_packet_switch_queues`).
    Oldest,
    /// Least recently transmitted first, busied and new sends alike: a busied send queues
    /// again behind the sends created before its last transmission. Every node then keeps up
    /// to `ring.active_buffers` sends busied at a congested target, each holding an A/B
    /// reservation: fair under a saturated hot spot even at SAT quota 2, but standard A/B
    /// aging then carries about 40 % less under a saturated hot spot (docs/sci.md).
    LeastRecent,
}

/// `[switch]`: the switches' agents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Input-queue depth of every agent (and capacity of its send queue), 1..=4096 packets.
    pub queue_depth: usize,
    /// Cycles to route one packet through the switch, 0..=1_000_000.
    pub service_time: u64,
    /// Queue allocation of the agents' input queues: `ab` (default, like the hosts'),
    /// `counted-ab` or `no-aging` (plain busy/retry: do switch queues need A/B aging?).
    pub receiver: Policy,
    /// `round-robin` (default) or `fixed`: who moves first when several inputs want one output.
    pub arbitration: Arbitration,
    /// Own sends an agent on a ring *with hosts* may start per SAT visit, 1..=1024 (hosts, and
    /// agents on transit rings, where all nodes are agents, use `ring.sat_quota`). Such an
    /// agent sends for every host whose traffic crosses it; with a host's quota it gets a
    /// host's share of its ring and a switched system collapses at low load (docs/sci.md).
    pub sat_quota: u32,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            queue_depth: 8,
            service_time: 20,
            receiver: Policy::Ab,
            arbitration: Arbitration::RoundRobin,
            sat_quota: 8,
        }
    }
}

/// The switched SCI model's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchedConfig {
    /// `single`, `ring-of-rings`, `grid` or `crossbar`.
    pub topology: TopologyKind,
    /// Host rings for `ring-of-rings` and `crossbar`, 2..=16.
    pub rings: usize,
    /// Row rings (2..=8) and column rings (1..=8) for `grid`.
    pub grid_rows: usize,
    pub grid_cols: usize,
    /// Share of each non-hot send that stays on the source's ring, [0, 1]; unset: destinations
    /// uniform over all other hosts (with `ring.traffic.pattern` = uniform or hotspot).
    pub local_fraction: Option<f64>,
    /// Intelligent transmitters only: switches relay the serve status of the targets behind
    /// them to the rings whose traffic they carry, and sources hold back new sends to remote
    /// targets in SERVE_A / SERVE_B (docs/sci.md, "Switched SCI"). `false`: intelligent A/B
    /// aging hop by hop only.
    pub remote_status: bool,
    /// With `ring.traffic.pattern = "hotspot"`: whether the hosts on the hot host's own ring
    /// generate traffic. `false` makes the hot spot purely *remote*: every send reaching it
    /// crossed a switch (the no-starvation experiment of issue 17).
    pub hot_ring_sends: bool,
    /// `busied-first` (default), `oldest` or `least-recent`: the transmit order of every node
    /// on a ring with a switch agent.
    pub retry_order: RetryOrder,
    /// Own sends per SAT visit of every host and of the agents on transit rings, 1..=1024
    /// (agents on host rings: `switch.sat_quota`), in a system of several rings; replaces
    /// `ring.sat_quota`, which only `topology = "single"` (the `sci` model) uses. Default 1:
    /// with 2, nodes with an empty bypass FIFO start two sends per SAT round and the others
    /// one, and under a saturated target standard A/B aging turns that into a 2 : 1 share
    /// (docs/sci.md, "No starvation").
    pub sat_quota: u32,
    pub switch: SwitchConfig,
    pub ring: SciConfig,
}

impl Default for SwitchedConfig {
    fn default() -> Self {
        SwitchedConfig {
            topology: TopologyKind::RingOfRings,
            rings: 4,
            grid_rows: 2,
            grid_cols: 2,
            local_fraction: None,
            remote_status: true,
            hot_ring_sends: true,
            retry_order: RetryOrder::BusiedFirst,
            sat_quota: 1,
            switch: SwitchConfig::default(),
            ring: SciConfig::default(),
        }
    }
}

impl SwitchedConfig {
    /// Checks the keys of this table; the rings' own keys are checked when the rings are
    /// built (per ring, with the ring's real size).
    pub fn validate_fields(&self) -> Result<(), Invalid> {
        if matches!(
            self.topology,
            TopologyKind::RingOfRings | TopologyKind::Crossbar
        ) {
            Invalid::check(
                (2..=16).contains(&self.rings),
                "rings",
                "2 ..= 16",
                self.rings,
            )?;
        }
        if self.topology == TopologyKind::Grid {
            Invalid::check(
                (2..=8).contains(&self.grid_rows),
                "grid_rows",
                "2 ..= 8",
                self.grid_rows,
            )?;
            Invalid::check(
                (1..=8).contains(&self.grid_cols),
                "grid_cols",
                "1 ..= 8",
                self.grid_cols,
            )?;
        }
        if let Some(f) = self.local_fraction {
            Invalid::check((0.0..=1.0).contains(&f), "local_fraction", "[0, 1]", f)?;
        }
        Invalid::check(
            (1..=4096).contains(&self.switch.queue_depth),
            "switch.queue_depth",
            "1 ..= 4096 packets",
            self.switch.queue_depth,
        )?;
        Invalid::check(
            self.switch.service_time <= 1_000_000,
            "switch.service_time",
            "0 ..= 1000000 cycles",
            self.switch.service_time,
        )?;
        Invalid::check(
            (1..=1024).contains(&self.switch.sat_quota),
            "switch.sat_quota",
            "1 ..= 1024",
            self.switch.sat_quota,
        )?;
        Invalid::check(
            (1..=1024).contains(&self.sat_quota),
            "sat_quota",
            "1 ..= 1024",
            self.sat_quota,
        )?;
        // A multi-ring system takes its hosts' quota from `sat_quota`; a changed
        // `ring.sat_quota` would be silently ignored, so it is refused.
        if self.topology != TopologyKind::Single
            && self.ring.sat_quota != SciConfig::default().sat_quota
        {
            return Err(Invalid::new(
                "ring.sat_quota",
                format!(
                    "is not used by a system of several rings (got {}): set the top-level \
                     `sat_quota` (hosts and transit agents) or `switch.sat_quota` instead",
                    self.ring.sat_quota
                ),
            ));
        }
        Invalid::check(
            self.ring.traffic.pattern != TrafficPattern::Trace,
            "ring.traffic.pattern",
            "uniform, hotspot, neighbor_x or neighbor (traces are not supported across switches)",
            "trace",
        )?;
        Ok(())
    }
}
