//! The keys and outputs of `model = "vc-router"`: unit and meaning of every key of
//! [`super::VcRouterConfig`] and every metric a run reports. Defaults and allowed ranges are not
//! repeated here: `icnlab keys` reads them from the config and its validation. Adding a key to the
//! config means adding its row here, in the same crate.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, Output, OutputTable, key, output};

/// The model's own keys; the network's are the `vc-router` kind's ([`icn_router::vc_net::KEYS`]).
pub const KEYS: &[Key] = &[
    key("load", "flits/node/cycle", "offered load per node"),
    key(
        "size",
        "flits",
        "packet size (the small mode of the bimodal mix)",
    ),
    key("size_large", "flits", "the large mode of the bimodal mix"),
    key("on_deadlock", "", "`error` or `report`, as for `xswitch`"),
];

// What an open-loop run reports. The harness (`crate::harness`) words them for every fabric
// from the fabric's nouns; these rows are this model's wording, and a test checks that a run
// reports exactly them.
pub const LATENCY_MEAN: Output = output("latency_mean", "cycles", "packet creation → tail arrival");
pub const LATENCY_P50: Output = output("latency_p50", "cycles", "median packet latency");
pub const LATENCY_P99: Output = output("latency_p99", "cycles", "99th percentile packet latency");
pub const LATENCY_MAX: Output = output("latency_max", "cycles", "largest packet latency");
pub const OFFERED: Output = output(
    "offered",
    "flits/node/cycle",
    "payload created per node per cycle",
);
pub const ACCEPTED: Output = output(
    "accepted",
    "flits/node/cycle",
    "payload accepted per node per cycle",
);
pub const LINK_UTIL_MEAN: Output = output(
    "link_util_mean",
    "",
    "router-to-router channel busy fraction, mean",
);
pub const LINK_UTIL_MAX: Output = output("link_util_max", "", "busiest router-to-router channel");
pub const UNFINISHED: Output = output(
    "unfinished",
    "packets",
    "measured items not delivered by the end of the drain",
);

/// Table `links`: every router-to-router channel's busy fraction.
pub const LINKS: OutputTable = OutputTable {
    name: "links",
    columns: &["router", "port", "utilisation"],
    meaning: "busy fraction of each router-to-router channel over the window",
};

/// Table `per_source`: offered and accepted load and mean latency per source.
pub const PER_SOURCE: OutputTable = OutputTable {
    name: "per_source",
    columns: &["source", "offered", "accepted", "latency_mean"],
    meaning: "per source: payload offered and accepted per cycle, mean packet latency",
};

/// This model's own outputs, in the order a run reports them.
pub const OUTPUTS: &[Output] = &[
    LATENCY_MEAN,
    LATENCY_P50,
    LATENCY_P99,
    LATENCY_MAX,
    OFFERED,
    ACCEPTED,
    LINK_UTIL_MEAN,
    LINK_UTIL_MAX,
    crate::xswitch_model::doc::JAIN_FAIRNESS,
    UNFINISHED,
    crate::xswitch_model::doc::DEADLOCKED,
    crate::xswitch_model::doc::CYCLES_SIMULATED,
];

/// The model's documentation, as [`icn_engine::Model::DOC`].
pub const DOC: ModelDoc = ModelDoc {
    keys: &[
        KeyGroup {
            prefix: "",
            keys: icn_router::vc_net::KEYS,
            when: "",
        },
        KeyGroup {
            prefix: "",
            keys: KEYS,
            when: "",
        },
        KeyGroup {
            prefix: "",
            keys: crate::xswitch_model::doc::COMMON_KEYS,
            when: "",
        },
    ],
    optional: &[],
    outputs: &[OUTPUTS, icn_netrace::config::doc::OUTPUTS],
    suffixes: &[],
    tables: &[LINKS, PER_SOURCE],
};
