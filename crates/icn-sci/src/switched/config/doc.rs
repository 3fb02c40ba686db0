//! The keys and outputs of `model = "sci-switched"`: unit and meaning of every key of
//! [`super::SwitchedConfig`] and every metric a run reports. Defaults and allowed ranges are not
//! repeated here: `icnlab keys` reads them from the config and its validation. Adding a key to the
//! config means adding its row here, in the same crate.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, OptionalKey, Sample, key};

pub const KEYS: &[Key] = &[
    key(
        "topology",
        "",
        "`single`, `ring-of-rings`, `grid` or `crossbar`",
    ),
    key(
        "rings",
        "rings",
        "host rings for `ring-of-rings` and `crossbar`",
    ),
    key("grid_rows", "rings", "row rings for `grid`"),
    key("grid_cols", "rings", "column rings for `grid`"),
    key(
        "remote_status",
        "",
        "intelligent transmitters: switches relay the serve status of the targets behind them",
    ),
    key(
        "hot_ring_sends",
        "",
        "with a hot spot: whether the hosts on the hot host's own ring generate traffic",
    ),
    key(
        "switch.queue_depth",
        "packets",
        "input-queue depth of every switch agent (and its send-queue capacity)",
    ),
    key(
        "switch.service_time",
        "cycles",
        "time to route one packet through the switch",
    ),
    key(
        "switch.receiver",
        "",
        "queue allocation of the agents' input queues: `ab`, `counted-ab` or `no-aging`",
    ),
    key(
        "switch.arbitration",
        "",
        "who moves first when several inputs want one output: `round-robin` or `fixed`",
    ),
    key(
        "switch.sat_quota",
        "sends",
        "own sends an agent on a ring with hosts may start per SAT visit",
    ),
    key(
        "sat_quota",
        "sends",
        "own sends a host or transit-ring agent may start per SAT visit in a multi-ring system",
    ),
    key(
        "retry_order",
        "",
        "which busied send a node re-sends first in a multi-ring system: `busied-first`, `oldest` or `least-recent`",
    ),
];

/// The model's documentation, as [`icn_engine::Model::DOC`].
pub const DOC: ModelDoc = ModelDoc {
    keys: &[
        KeyGroup {
            prefix: "",
            keys: KEYS,
        },
        KeyGroup {
            prefix: "ring.",
            keys: crate::config::doc::KEYS,
        },
    ],
    optional: &[
        OptionalKey {
            key: "local_fraction",
            sample: Sample::Number,
            unit: "",
            meaning: "share of each non-hot send that stays on the source's ring; unset: destinations uniform over all other hosts",
        },
        OptionalKey {
            key: "ring.traffic.trace_file",
            sample: Sample::Text,
            unit: "",
            meaning: "as `traffic.trace_file` of `sci`",
        },
    ],
    outputs: &[],
    suffixes: &[],
    tables: &[],
};
