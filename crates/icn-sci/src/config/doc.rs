//! The keys and outputs of `model = "sci"`: unit and meaning of every key of [`super::SciConfig`]
//! and every metric a run reports. Defaults and allowed ranges are not repeated here: `icnlab keys`
//! reads them from the config and its validation. Adding a key to the config means adding its row
//! here, in the same crate.

use icn_engine::doc::{
    Key, KeyGroup, ModelDoc, OptionalKey, Output, OutputTable, Sample, Suffix, key, output,
};

/// The ring's size (a `sci-ring` fabric's is its `topology = "ring:N"`; a `sci-switched`
/// one's `[fabric.ring] nodes`).
pub const SIZE_KEYS: &[Key] = &[key("nodes", "nodes", "ring size N")];

/// The model's own keys: the open-loop workload (traffic, offered load, run lengths); the
/// ring's are [`SIZE_KEYS`] and [`RING_KEYS`].
pub const KEYS: &[Key] = &[
    key(
        "load",
        "",
        "offered load per node: the fraction of its output link a node would fill with its own sends",
    ),
    key(
        "data_weights",
        "",
        "relative weights of `data_bytes` (same length, positive sum)",
    ),
    key(
        "traffic.pattern",
        "",
        "destinations: `uniform` (another node), `hotspot`, `neighbor_x` (or `neighbour`) and `neighbor` (the downstream node), or `trace`",
    ),
    key("traffic.hotspot_node", "node", "the hot node (0-based)"),
    key(
        "traffic.hotspot_fraction",
        "",
        "share of each other node's sends that go to the hot node",
    ),
    key(
        "traffic.hot_node_sends",
        "",
        "whether the hot node generates traffic of its own",
    ),
    key("warmup_cycles", "cycles", "simulated before measuring"),
    key(
        "measure_cycles",
        "cycles",
        "length of the measurement window",
    ),
    key(
        "drain_limit_cycles",
        "cycles",
        "after generation stops, time allowed for in-flight sends before the run ends with a diagnosis",
    ),
];

/// The ring's keys: the `sci` model's and, with the same names, defaults, ranges and meaning,
/// the cluster's `[fabric] kind = "sci-ring"` (and `[fabric.ring]` of `kind = "sci-switched"`):
/// one table, read by `icnlab keys sci` and `icnlab keys cluster`.
pub const RING_KEYS: &[Key] = &[
    key(
        "transmitter",
        "",
        "`standard`, `intelligent` (hold-back), or `compare` (both on identical traffic; the open-loop model only: a fabric runs one)",
    ),
    key(
        "receiver",
        "",
        "input-queue allocation: `no-aging`, `ab` (IEEE 1596 A/B aging) or `counted-ab`",
    ),
    key(
        "generation_end",
        "",
        "how an A/B generation ends: `counted` or `quiet-window`",
    ),
    key(
        "quiet_window",
        "cycles",
        "cycles without RETRY that end a generation (with `generation_end = \"quiet-window\"`)",
    ),
    key(
        "active_buffers",
        "sends",
        "outstanding (un-echoed or to-be-retried) sends per node",
    ),
    key(
        "queue_depth",
        "packets",
        "input-queue depth (ignored with `unbounded_queue`)",
    ),
    key(
        "unbounded_queue",
        "",
        "an input queue that always has space",
    ),
    key(
        "service_time",
        "cycles",
        "time the receiver needs to consume one packet from its input queue (a cycle is 2 ns: 120 cycles take 240 ns, 267 MB/s of 64-byte data into one node)",
    ),
    key(
        "send_queue_depth",
        "sends",
        "send-queue capacity per node: the model drops a generated send that finds it full and counts it (`source_drops`); a fabric refuses it and the NIC holds its DMA",
    ),
    key(
        "data_bytes",
        "bytes",
        "data sizes of sends, each one of 0, 16, 64, 256 (a fabric cuts messages into sends of the largest)",
    ),
    key(
        "crc_outside_header",
        "",
        "adds a header CRC symbol to every send (SCI's optional layout)",
    ),
    key(
        "bandwidth_allocation",
        "",
        "`sat` (SAT-token quota) or `none` (pure register insertion)",
    ),
    key(
        "sat_quota",
        "sends",
        "own sends per SAT visit with `bandwidth_allocation = \"sat\"`",
    ),
];

// What a run reports (see `DOC.outputs`).
pub const ETA: Output = output("eta", "", "accepted send symbols / (N × cycles)");
pub const THROUGHPUT_GBPS: Output = output(
    "throughput_gbps",
    "GB/s",
    "accepted data bytes per ns, ring total",
);
pub const TRANSACTIONS_PER_CYCLE: Output = output(
    "transactions_per_cycle",
    "1/cycle",
    "accepted sends per cycle, ring total",
);
pub const PS_DISALLOW_SENT: Output = output(
    "ps_disallow_sent",
    "packets",
    "sends refused only for their phase (Ps-disallow)",
);
pub const PS_DISALLOW_SHARE: Output =
    output("ps_disallow_share", "", "Ps-disallow / sends transmitted");
pub const BUSY_ECHOES: Output = output("busy_echoes", "packets", "BUSY_A + BUSY_B echoes");
pub const NOTIFY_SYMBOLS: Output = output(
    "notify_symbols",
    "symbols",
    "link symbols of NOTIFYs sent in the window (4 per link, N links each)",
);
pub const NOTIFY_OVERHEAD: Output = output("notify_overhead", "", "NOTIFY symbols / link capacity");
pub const DELAY_MEAN_NS: Output = output("delay_mean_ns", "ns", "send creation → DONE, mean");
pub const DELAY_P50_NS: Output = output("delay_p50_ns", "ns", "send delay, median");
pub const DELAY_P99_NS: Output = output("delay_p99_ns", "ns", "send delay, 99th percentile");
pub const DELAY_MAX_NS: Output = output("delay_max_ns", "ns", "send delay, maximum");
pub const RETRIES_PER_PACKET: Output = output(
    "retries_per_packet",
    "",
    "retransmissions per completed send",
);
pub const SERVE_A_EPOCH_MEAN_NS: Output = output(
    "serve_a_epoch_mean_ns",
    "ns",
    "mean length of SERVE_A epochs (t2 − t1)",
);
pub const SERVE_B_EPOCH_MEAN_NS: Output = output(
    "serve_b_epoch_mean_ns",
    "ns",
    "mean length of SERVE_B epochs",
);
pub const JAIN_FAIRNESS: Output = output(
    "jain_fairness",
    "",
    "Jain index of per-source accepted throughput (sources that offered traffic)",
);
pub const HOTSPOT_JAIN: Output = output(
    "hotspot_jain",
    "",
    "Jain index of sends accepted at the hot node, by source",
);
pub const CYCLES_SIMULATED: Output = output(
    "cycles_simulated",
    "cycles",
    "cycles simulated incl. warm-up and drain (`compare`: both runs together)",
);
pub const OFFERED_LOAD_ACTUAL: Output = output(
    "offered_load_actual",
    "",
    "generated send symbols / (N × cycles)",
);
pub const SOURCE_DROPS: Output = output(
    "source_drops",
    "packets",
    "sends dropped at a full send queue",
);
pub const R: Output = output(
    "r",
    "",
    "`compare`: eta_iab / eta_std (> 1: intelligent A/B aging moves more)",
);
pub const DELAY_RATIO: Output = output(
    "delay_ratio",
    "",
    "`compare`: delay_mean_iab / delay_mean_std (< 1: intelligent is faster)",
);

/// With `transmitter = "compare"` both runs' metrics are reported, suffixed.
pub const SUFFIXES: &[Suffix] = &[
    Suffix {
        suffix: "_std",
        meaning: "`compare`: the metric of the run with standard transmitters (A/B aging)",
    },
    Suffix {
        suffix: "_iab",
        meaning: "`compare`: the metric of the run with intelligent transmitters (intelligent A/B aging)",
    },
];

pub const PER_SOURCE: OutputTable = OutputTable {
    name: "per_source",
    columns: &[
        "source",
        "throughput_gbps",
        "delay_mean_ns",
        "delay_p99_ns",
        "delay_max_ns",
        "accepted",
    ],
    meaning: "per source node: accepted data rate, send delay (mean, p99, max), sends accepted (`compare`: the intelligent run's)",
};

/// This model's own outputs, in the order a run reports them.
pub const OUTPUTS: &[Output] = &[
    ETA,
    THROUGHPUT_GBPS,
    TRANSACTIONS_PER_CYCLE,
    PS_DISALLOW_SENT,
    PS_DISALLOW_SHARE,
    BUSY_ECHOES,
    NOTIFY_SYMBOLS,
    NOTIFY_OVERHEAD,
    DELAY_MEAN_NS,
    DELAY_P50_NS,
    DELAY_P99_NS,
    DELAY_MAX_NS,
    RETRIES_PER_PACKET,
    SERVE_A_EPOCH_MEAN_NS,
    SERVE_B_EPOCH_MEAN_NS,
    JAIN_FAIRNESS,
    HOTSPOT_JAIN,
    CYCLES_SIMULATED,
    OFFERED_LOAD_ACTUAL,
    SOURCE_DROPS,
    R,
    DELAY_RATIO,
];

/// The model's documentation, as [`icn_engine::Model::DOC`].
pub const DOC: ModelDoc = ModelDoc {
    keys: &[
        KeyGroup {
            prefix: "",
            keys: SIZE_KEYS,
            when: "",
        },
        KeyGroup {
            prefix: "",
            keys: KEYS,
            when: "",
        },
        KeyGroup {
            prefix: "",
            keys: RING_KEYS,
            when: "",
        },
    ],
    optional: &[OptionalKey {
        key: "traffic.trace_file",
        sample: Sample::Text,
        unit: "",
        meaning: "CSV trace for `traffic.pattern = \"trace\"`, relative to the experiment file",
    }],
    outputs: &[OUTPUTS],
    suffixes: SUFFIXES,
    tables: &[PER_SOURCE],
};
