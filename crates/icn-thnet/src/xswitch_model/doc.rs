//! The keys and outputs of `model = "xswitch"`: unit and meaning of every key of
//! [`super::XSwitchConfig`] and every metric a run reports. Defaults and allowed ranges are not
//! repeated here: `icnlab keys` reads them from the config and its validation. Adding a key to the
//! config means adding its row here, in the same crate.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, Output, OutputTable, key, output};

/// The model's own keys; the network's are the `xswitch` kind's ([`crate::xswitch_net::KEYS`]).
pub const KEYS: &[Key] = &[
    key(
        "load",
        "bytes/node/cycle",
        "offered payload per node (1.0 = a full link)",
    ),
    key(
        "size",
        "bytes",
        "message size (the small mode of the bimodal mix)",
    ),
    key("size_large", "bytes", "the large mode of the bimodal mix"),
    key(
        "on_deadlock",
        "",
        "`error` stops the run with the diagnosis; `report` ends the replication with `deadlocked = 1`",
    ),
    key(
        "trace_port",
        "",
        "an output port (`s0.D`) whose grants are returned as table `grants`; empty: none",
    ),
];

/// The traffic and measurement keys of the open-loop models (`xswitch`, `vc-router`),
/// documented once.
pub const COMMON_KEYS: &[Key] = &[
    key("large_fraction", "", "share of messages of `size_large`"),
    key(
        "traffic.pattern",
        "",
        "destinations of the generated messages",
    ),
    key(
        "traffic.hotspot_node",
        "node",
        "the hot node of `hotspot` (0-based)",
    ),
    key(
        "traffic.hotspot_fraction",
        "",
        "share of messages sent to the hot node",
    ),
    key(
        "traffic.trace_file",
        "",
        "CSV trace for `pattern = \"trace\"`, relative to the experiment file",
    ),
    key(
        "traffic.perm_seed",
        "",
        "seed of `random_permutation` (fixed across replications, as BookSim's `perm_seed`)",
    ),
    key(
        "traffic.injection",
        "",
        "`bernoulli` or BookSim2's `on_off` (a two-state Markov chain per source)",
    ),
    key(
        "traffic.burst_alpha",
        "1/cycle",
        "`on_off`: probability off → on per cycle (BookSim2's `burst_alpha`)",
    ),
    key(
        "traffic.burst_beta",
        "1/cycle",
        "`on_off`: probability on → off per cycle (BookSim2's `burst_beta`)",
    ),
    key("warmup", "cycles", "simulated before measuring"),
    key("measure", "cycles", "length of the measurement window"),
    key(
        "drain",
        "cycles",
        "time allowed after the window for measured messages to arrive",
    ),
];

// What an open-loop run reports. The harness (`crate::harness`) words them for every fabric
// from the fabric's nouns; these rows are this model's wording, and a test checks that a run
// reports exactly them.
pub const LATENCY_MEAN: Output = output(
    "latency_mean",
    "cycles",
    "message creation → last EOF accepted",
);
pub const LATENCY_P50: Output = output("latency_p50", "cycles", "median message latency");
pub const LATENCY_P99: Output = output("latency_p99", "cycles", "99th percentile message latency");
pub const LATENCY_MAX: Output = output("latency_max", "cycles", "largest message latency");
pub const OFFERED: Output = output(
    "offered",
    "B/node/cycle",
    "payload created per node per cycle",
);
pub const ACCEPTED: Output = output(
    "accepted",
    "B/node/cycle",
    "payload accepted per node per cycle",
);
pub const LINK_UTIL_MEAN: Output = output(
    "link_util_mean",
    "",
    "switch-to-switch channel busy fraction, mean",
);
pub const LINK_UTIL_MAX: Output = output("link_util_max", "", "busiest switch-to-switch channel");
pub const JAIN_FAIRNESS: Output = output(
    "jain_fairness",
    "",
    "Jain index of accepted throughput per source",
);
pub const UNFINISHED: Output = output(
    "unfinished",
    "messages",
    "measured items not delivered by the end of the drain",
);
pub const DEADLOCKED: Output = output(
    "deadlocked",
    "",
    "1 when the watchdog stopped the run (on_deadlock = \"report\")",
);
pub const CYCLES_SIMULATED: Output = output(
    "cycles_simulated",
    "cycles",
    "clock cycles simulated (warm-up, window and drain), for speed figures",
);

// The X-Switch's own outputs (flow control and output-port waits).
pub const STOPS: Output = output("stops", "", "ID-STOP characters sent in the window");
pub const GOS: Output = output("gos", "", "ID-GO characters sent in the window");
pub const WAIT_FRACTION: Output = output("wait_fraction", "", "output-port time in Wait states");

/// Table `links`: every switch-to-switch channel's busy fraction.
pub const LINKS: OutputTable = OutputTable {
    name: "links",
    columns: &["switch", "port", "utilisation"],
    meaning: "busy fraction of each switch-to-switch channel over the window",
};

/// Table `per_source`: offered and accepted load and mean latency per source.
pub const PER_SOURCE: OutputTable = OutputTable {
    name: "per_source",
    columns: &["source", "offered", "accepted", "latency_mean"],
    meaning: "per source: payload offered and accepted per cycle, mean message latency",
};

/// Table `grants`: the grants of `trace_port`.
pub const GRANTS: OutputTable = OutputTable {
    name: "grants",
    columns: &["order", "cycle", "input"],
    meaning: "with `trace_port`: each grant of that output port in order, its cycle and the input granted",
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
    JAIN_FAIRNESS,
    STOPS,
    GOS,
    WAIT_FRACTION,
    UNFINISHED,
    DEADLOCKED,
    CYCLES_SIMULATED,
];

/// The model's documentation, as [`icn_engine::Model::DOC`].
pub const DOC: ModelDoc = ModelDoc {
    keys: &[
        KeyGroup {
            prefix: "",
            keys: crate::xswitch_net::KEYS,
            when: "",
        },
        KeyGroup {
            prefix: "",
            keys: KEYS,
            when: "",
        },
        KeyGroup {
            prefix: "",
            keys: COMMON_KEYS,
            when: "",
        },
    ],
    optional: &[],
    outputs: &[OUTPUTS, icn_netrace::config::doc::OUTPUTS],
    suffixes: &[],
    tables: &[LINKS, PER_SOURCE, GRANTS],
};
