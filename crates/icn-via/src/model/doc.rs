//! The keys and outputs of `model = "via-bench"`: unit and meaning of every key of
//! [`super::ViaBenchConfig`] and every metric a run reports. Defaults and allowed ranges are not
//! repeated here: `icnlab keys` reads them from the config and its validation. Adding a key to the
//! config means adding its row here, in the same crate.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, Output, key, output};

pub const KEYS: &[Key] = &[
    key(
        "program",
        "",
        "`pingpong` (latency) or `window` (bandwidth)",
    ),
    key(
        "transport",
        "",
        "icn-via over `shm` or `tcp`, or the raw socket baselines",
    ),
    key("size", "bytes", "message size"),
    key("iterations", "round trips", "timed pingpong round trips"),
    key(
        "warmup",
        "round trips",
        "untimed round trips (or messages) before timing",
    ),
    key("messages", "messages", "timed window messages"),
    key(
        "window",
        "messages",
        "messages in flight in the window program",
    ),
    key("reliability", "", "VIA reliability level of the VIs"),
    key("pin", "", "pin the two processes to different cores"),
];

// What a run reports (see `DOC.outputs`).
pub const LATENCY_US: Output = output("latency_us", "us", "one-way latency = round trip / 2");
pub const BANDWIDTH_MB_S: Output = output(
    "bandwidth_mb_s",
    "MB/s",
    "streamed bytes / time, MB = 10^6 B",
);

/// This model's own outputs, in the order a run reports them.
pub const OUTPUTS: &[Output] = &[LATENCY_US, BANDWIDTH_MB_S];

/// The model's documentation, as [`icn_engine::Model::DOC`].
pub const DOC: ModelDoc = ModelDoc {
    keys: &[KeyGroup {
        prefix: "",
        keys: KEYS,
        when: "",
    }],
    optional: &[],
    outputs: &[OUTPUTS],
    suffixes: &[],
    tables: &[],
};
