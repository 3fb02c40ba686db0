//! The keys and outputs of `model = "nic"`: unit and meaning of every key of [`super::Config`] and
//! every metric a run reports. Defaults and allowed ranges are not repeated here: `icnlab keys`
//! reads them from the config and its validation. Adding a key to the config means adding its row
//! here, in the same crate.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, OptionalKey, Sample, key};

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

/// The model's documentation, as [`icn_engine::Model::DOC`].
pub const DOC: ModelDoc = ModelDoc {
    keys: &[KeyGroup {
        prefix: "",
        keys: KEYS,
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
    outputs: &[],
    suffixes: &[],
    tables: &[],
};
