//! The keys and outputs of `model = "nic"`: unit and meaning of every key of [`super::Config`] and
//! every metric a run reports. Defaults and allowed ranges are not repeated here: `icnlab keys`
//! reads them from the config and its validation. Adding a key to the config means adding its row
//! here, in the same crate.

use icn_engine::doc::{
    Key, KeyGroup, ModelDoc, OptionalKey, Output, OutputTable, Sample, key, output,
};

pub const KEYS: &[Key] = &[
    key(
        "profile",
        "",
        "host and NIC timing: `setup-a`, `setup-b`, `fast-ethernet`, `gigabit-ethernet` or a profile TOML",
    ),
    key(
        "design",
        "",
        "VIA implementation: `myvia`, `bvia`, `gm`, `mvia` or a design TOML",
    ),
    key(
        "benchmark",
        "",
        "what to run: `both`, `pingpong`, `window`, `pdring`, `validation`, `ablation` or `sensitivity`",
    ),
    key("size", "bytes", "message size of the scalar results"),
    key(
        "sizes",
        "bytes",
        "message sizes of table `curve`; empty: no curve",
    ),
    key(
        "tlb_hit_rate",
        "",
        "probability that a NIC-side TLB lookup hits (designs without `user_tlb`)",
    ),
    key(
        "round_trips",
        "round trips",
        "pingpong round trips per size",
    ),
    key("messages", "messages", "window messages per size"),
    key(
        "queue_depth",
        "descriptors",
        "send descriptors posted ahead in the window benchmark",
    ),
    key(
        "ring.small_ring",
        "PDs",
        "the NIC's small ring per VI send queue",
    ),
    key("ring.big_ring", "PDs", "the host's big ring"),
    key(
        "ring.low_water",
        "PDs",
        "interrupt when the small ring falls to this many and the flag is set",
    ),
    key(
        "ring.messages",
        "messages",
        "messages posted in the `pdring` benchmark",
    ),
    key(
        "ring.burst_mean",
        "messages",
        "mean messages per burst (geometric)",
    ),
    key("ring.post_us", "µs", "host time per post within a burst"),
    key(
        "ring.mean_gap_us",
        "µs",
        "mean time between posts over the run (sets the think time between bursts)",
    ),
];

// What a run reports (see `DOC.outputs`).
pub const CHECKS_PASSED: Output = output("checks_passed", "", "validation targets met");
pub const CHECKS_GRADED: Output = output("checks_graded", "", "validation targets with a band");
pub const INTERRUPTS_PER_1000: Output = output(
    "interrupts_per_1000",
    "",
    "PD-ring low-water interrupts per 1000 messages",
);
pub const OVERFLOW_FRACTION: Output = output(
    "overflow_fraction",
    "",
    "fraction of PDs that went to the big host ring",
);
pub const NIC_SERVICE_US: Output = output(
    "nic_service_us",
    "µs",
    "mean NIC time per message (from the timing model)",
);
pub const LATENCY_US: Output = output("latency_us", "µs", "one-way latency (pingpong RTT / 2)");
pub const BANDWIDTH_MBS: Output = output("bandwidth_mbs", "MB/s", "window bandwidth, 10^6 B/s");
pub const MAX_BANDWIDTH_MBS: Output = output("max_bandwidth_mbs", "MB/s", "maximum over `sizes`");
pub const MIN_LATENCY_US: Output = output("min_latency_us", "µs", "minimum over `sizes`");

pub const CURVE: OutputTable = OutputTable {
    name: "curve",
    columns: &["size_bytes", "latency_us", "bandwidth_mbs"],
    meaning: "`sizes`: one-way latency and window bandwidth per message size",
};

pub const PAPER: OutputTable = OutputTable {
    name: "paper",
    columns: &["size_bytes", "bandwidth_mbs", "latency_us"],
    meaning: "the paper's published figures for this profile and design (NaN: not published)",
};

pub const VALIDATION: OutputTable = OutputTable {
    name: "validation",
    columns: &["check", "paper", "model", "rel_error", "lo", "hi", "pass"],
    meaning: "`validation`: each target (named in the notes), paper vs model, the accepted band and whether it is met",
};

pub const ABLATION: OutputTable = OutputTable {
    name: "ablation",
    columns: &[
        "profile",
        "variant",
        "latency_us",
        "bw_1k_mbs",
        "bw_4k_mbs",
        "bw_64k_mbs",
    ],
    meaning: "`ablation`: MyVIA with each optimisation switched off (profile 0 = setup-a, 1 = setup-b; variants named in the notes)",
};

pub const TLB: OutputTable = OutputTable {
    name: "tlb",
    columns: &["profile", "tlb_hit_rate", "bw_4k_mbs", "bw_64k_mbs"],
    meaning: "`ablation`: Berkeley VIA's bandwidth against the NIC TLB hit rate",
};

pub const SENSITIVITY: OutputTable = OutputTable {
    name: "sensitivity",
    columns: &[
        "headline",
        "base",
        "minus20",
        "plus20",
        "change_minus_pct",
        "change_plus_pct",
    ],
    meaning: "`sensitivity`: each headline figure with one hardware parameter at −20 % and +20 % (rows named in the notes)",
};

/// This model's own outputs, in the order a run reports them.
pub const OUTPUTS: &[Output] = &[
    CHECKS_PASSED,
    CHECKS_GRADED,
    INTERRUPTS_PER_1000,
    OVERFLOW_FRACTION,
    NIC_SERVICE_US,
    LATENCY_US,
    BANDWIDTH_MBS,
    MAX_BANDWIDTH_MBS,
    MIN_LATENCY_US,
];

/// The model's documentation, as [`icn_engine::Model::DOC`].
pub const DOC: ModelDoc = ModelDoc {
    keys: &[KeyGroup {
        prefix: "",
        keys: KEYS,
        when: "",
    }],
    optional: &[
        OptionalKey {
            key: "user_tlb",
            sample: Sample::Bool,
            unit: "",
            meaning: "override the design: address translation in user space (UTLB); unset: the design's choice",
        },
        OptionalKey {
            key: "pd_ring",
            sample: Sample::Bool,
            unit: "",
            meaning: "override the design: PD ring between host and NIC; unset: the design's choice",
        },
        OptionalKey {
            key: "pipeline",
            sample: Sample::Bool,
            unit: "",
            meaning: "override the design: pipelined DMA stages; unset: the design's choice",
        },
        OptionalKey {
            key: "big_dma",
            sample: Sample::Bool,
            unit: "",
            meaning: "override the design: one DMA per contiguous chunk; unset: the design's choice",
        },
    ],
    outputs: &[OUTPUTS],
    suffixes: &[],
    tables: &[CURVE, PAPER, VALIDATION, ABLATION, TLB, SENSITIVITY],
};
