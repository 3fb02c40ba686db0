//! The keys and outputs of `model = "sci"`: unit and meaning of every key of [`super::SciConfig`]
//! and every metric a run reports. Defaults and allowed ranges are not repeated here: `icnlab keys`
//! reads them from the config and its validation. Adding a key to the config means adding its row
//! here, in the same crate.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, OptionalKey, Sample, key};

pub const KEYS: &[Key] = &[
    key("nodes", "nodes", "ring size N"),
    key(
        "load",
        "",
        "offered load per node: the fraction of its output link a node would fill with its own sends",
    ),
    key(
        "transmitter",
        "",
        "`standard`, `intelligent` (hold-back), or `compare` (both on identical traffic)",
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
        "time the receiver needs to consume one packet (60 cycles = 120 ns)",
    ),
    key(
        "send_queue_depth",
        "sends",
        "send-queue capacity per node; sends that find it full are dropped and counted (`source_drops`)",
    ),
    key(
        "data_bytes",
        "bytes",
        "data sizes of sends, each one of 0, 16, 64, 256",
    ),
    key(
        "data_weights",
        "",
        "relative weights of `data_bytes` (same length, positive sum)",
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
    key(
        "traffic.pattern",
        "",
        "destinations: `uniform` or `hotspot`",
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

/// The model's documentation, as [`icn_engine::Model::DOC`].
pub const DOC: ModelDoc = ModelDoc {
    keys: &[KeyGroup {
        prefix: "",
        keys: KEYS,
    }],
    optional: &[OptionalKey {
        key: "traffic.trace_file",
        sample: Sample::Text,
        unit: "",
        meaning: "CSV trace for `traffic.pattern = \"trace\"`, relative to the experiment file",
    }],
    outputs: &[],
    suffixes: &[],
    tables: &[],
};
