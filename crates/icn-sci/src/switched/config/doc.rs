//! The keys and outputs of `model = "sci-switched"`: unit and meaning of every key of
//! [`super::SwitchedConfig`] and every metric a run reports. Defaults and allowed ranges are not
//! repeated here: `icnlab keys` reads them from the config and its validation. Adding a key to the
//! config means adding its row here, in the same crate.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, OptionalKey, Output, Sample, key, output};

/// The model's own keys (its workload); the network's are [`NET_KEYS`] and the rings'
/// [`crate::config::doc::RING_KEYS`].
pub const KEYS: &[Key] = &[key(
    "hot_ring_sends",
    "",
    "with a hot spot: whether the hosts on the hot host's own ring generate traffic",
)];

/// How the rings are joined and how the switches behave: the `sci-switched` model's keys and,
/// with the same names, defaults, ranges and meaning, the cluster's `[fabric] kind =
/// "sci-switched"`: one table, read by `icnlab keys sci-switched` and `icnlab keys cluster`.
pub const NET_KEYS: &[Key] = &[
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

// What a run reports (see `DOC.outputs`).
pub const ETA_LOCAL: Output = output(
    "eta_local",
    "",
    "several rings: accepted symbols of intra-ring sends / (hosts × cycles)",
);
pub const ETA_REMOTE: Output = output(
    "eta_remote",
    "",
    "several rings: accepted symbols of inter-ring sends / (hosts × cycles)",
);
pub const DELAY_LOCAL_MEAN_NS: Output = output(
    "delay_local_mean_ns",
    "ns",
    "several rings: intra-ring sends: creation → DONE, mean",
);
pub const DELAY_REMOTE_MEAN_NS: Output = output(
    "delay_remote_mean_ns",
    "ns",
    "several rings: inter-ring sends: creation → DONE of the final hop, mean",
);
pub const ACCEPT_DELAY_MEAN_NS: Output = output(
    "accept_delay_mean_ns",
    "ns",
    "several rings: creation at the source → acceptance at the final target, mean (every retry on every hop)",
);
pub const ACCEPT_DELAY_P99_NS: Output = output(
    "accept_delay_p99_ns",
    "ns",
    "several rings: creation → acceptance at the final target, 99th percentile",
);
pub const HOTSPOT_JAIN_REMOTE: Output = output(
    "hotspot_jain_remote",
    "",
    "several rings: Jain index of sends accepted at the hot host, by source, sources on other rings",
);
pub const HOTSPOT_REMOTE_SHARE: Output = output(
    "hotspot_remote_share",
    "",
    "several rings: mean acceptances at the hot host per remote source / per source on the hot ring",
);
pub const FORWARDED: Output = output(
    "forwarded",
    "packets",
    "several rings: sends moved through a switch",
);
pub const SWITCH_BLOCKED_CYCLES: Output = output(
    "switch_blocked_cycles",
    "cycles",
    "several rings: agent-cycles a serviced send waited for room on its next ring",
);
pub const RELAYED_NOTIFIES: Output = output(
    "relayed_notifies",
    "packets",
    "several rings: serve-status NOTIFYs relayed by switches (machine-wide intelligent aging)",
);
pub const RELAYED_SYMBOLS: Output = output(
    "relayed_symbols",
    "symbols",
    "several rings: link symbols of relayed NOTIFYs (4 per link of the ring they circle)",
);
pub const R_LOCAL: Output = output(
    "r_local",
    "",
    "`compare`, several rings: eta_local_iab / eta_local_std (intra-ring)",
);
pub const R_REMOTE: Output = output(
    "r_remote",
    "",
    "`compare`, several rings: eta_remote_iab / eta_remote_std (inter-ring)",
);
pub const DELAY_RATIO_LOCAL: Output = output(
    "delay_ratio_local",
    "",
    "`compare`, several rings: intra-ring mean delay, iab / std",
);
pub const DELAY_RATIO_REMOTE: Output = output(
    "delay_ratio_remote",
    "",
    "`compare`, several rings: inter-ring mean delay, iab / std",
);
pub const SWITCH_STATUS_BITS: Output = output(
    "switch_status_bits",
    "bits",
    "`compare`, several rings: serve-status state per switch for machine-wide intelligent aging",
);

/// This model's own outputs, in the order a run reports them.
pub const OUTPUTS: &[Output] = &[
    ETA_LOCAL,
    ETA_REMOTE,
    DELAY_LOCAL_MEAN_NS,
    DELAY_REMOTE_MEAN_NS,
    ACCEPT_DELAY_MEAN_NS,
    ACCEPT_DELAY_P99_NS,
    HOTSPOT_JAIN_REMOTE,
    HOTSPOT_REMOTE_SHARE,
    FORWARDED,
    SWITCH_BLOCKED_CYCLES,
    RELAYED_NOTIFIES,
    RELAYED_SYMBOLS,
    R_LOCAL,
    R_REMOTE,
    DELAY_RATIO_LOCAL,
    DELAY_RATIO_REMOTE,
    SWITCH_STATUS_BITS,
];

/// The model's documentation, as [`icn_engine::Model::DOC`].
pub const DOC: ModelDoc = ModelDoc {
    keys: &[
        KeyGroup {
            prefix: "",
            keys: KEYS,
            when: "",
        },
        KeyGroup {
            prefix: "",
            keys: NET_KEYS,
            when: "",
        },
        KeyGroup {
            prefix: "ring.",
            keys: crate::config::doc::SIZE_KEYS,
            when: "",
        },
        KeyGroup {
            prefix: "ring.",
            keys: crate::config::doc::KEYS,
            when: "",
        },
        KeyGroup {
            prefix: "ring.",
            keys: crate::config::doc::RING_KEYS,
            when: "",
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
    outputs: &[crate::config::doc::OUTPUTS, OUTPUTS],
    suffixes: crate::config::doc::SUFFIXES,
    tables: &[crate::config::doc::PER_SOURCE],
};
