//! The keys and outputs of `model = "bcast"`: unit and meaning of every key of
//! [`super::BcastConfig`] and every metric a run reports. Defaults and allowed ranges are not
//! repeated here: `icnlab keys` reads them from the config and its validation. Adding a key to the
//! config means adding its row here, in the same crate.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, Output, OutputTable, key, output};

pub const KEYS: &[Key] = &[
    key(
        "graph",
        "",
        "`ccc:H,K`, `hypercube:D`, `mesh:WxH`, `torus:WxH`, `ring:N`, `path:N` or `file:PATH`",
    ),
    key(
        "ccc_k",
        "",
        "when > 0 the graph is CCC(ccc_k + ccc_dh, ccc_k) instead of `graph` (to sweep CCC sizes)",
    ),
    key("ccc_dh", "", "h − k for `ccc_k`"),
    key(
        "scheme",
        "",
        "`clbm`, `naulbm`, `aulbm`, `ilbm` (CCCBrd on CCC) or `optimal`",
    ),
    key(
        "source",
        "",
        "`all` or one node name such as `(0,2)`; all sources of a large graph are refused (quadratic)",
    ),
    key(
        "random_tiebreak",
        "",
        "keep a random one of simultaneous receptions (the paper); `false`: the lowest sender",
    ),
    key(
        "greedy_tries",
        "tries",
        "randomised greedy trees per source for CLBM",
    ),
    key(
        "design_moves",
        "moves",
        "moves of the universal-list designer",
    ),
    key(
        "optimum_max_nodes",
        "nodes",
        "largest graph whose exact optimum is searched (SAT)",
    ),
    key(
        "optimum_conflicts",
        "conflicts",
        "SAT conflict budget per call (the optimum is unknown when it runs out)",
    ),
];

// What a run reports (see `DOC.outputs`).
pub const WORST_STEPS: Output = output(
    "worst_steps",
    "steps",
    "broadcast time, worst over the sources run",
);
pub const MEAN_STEPS: Output = output(
    "mean_steps",
    "steps",
    "broadcast time, mean over the sources run",
);
pub const BOUND_THEOREM1: Output = output(
    "bound_theorem1",
    "steps",
    "the paper's Theorem 1 bound (CCC only)",
);
pub const DIAMETER: Output = output("diameter", "hops", "graph diameter");
pub const OPTIMUM: Output = output(
    "optimum",
    "steps",
    "exact minimum broadcast time, worst over the sources run (NaN: not decided)",
);
pub const LOWER_BOUND: Output = output(
    "lower_bound",
    "steps",
    "best proved lower bound, worst over the sources run",
);
pub const MESSAGES: Output = output(
    "messages",
    "messages",
    "messages sent per broadcast (mean over sources)",
);
pub const REDUNDANT_RECEPTIONS: Output = output(
    "redundant_receptions",
    "receptions",
    "receptions not kept per broadcast (mean over sources)",
);
pub const STORAGE_ENTRIES: Output = output(
    "storage_entries",
    "entries",
    "list entries stored by the busiest node",
);
pub const SHARP_BOUND: Output = output(
    "sharp_bound",
    "steps",
    "the paper's sharper claim from (c,k-1)",
);
pub const SOURCE_K1_STEPS: Output = output(
    "source_k1_steps",
    "steps",
    "this scheme's time from (0,k-1)",
);
pub const SOURCE_K1_OPTIMUM: Output = output(
    "source_k1_optimum",
    "steps",
    "exact optimum from (0,k-1) (NaN: not decided)",
);
pub const LEMMA1_HOLDS: Output = output(
    "lemma1_holds",
    "",
    "1 if every (2^i,i) is reached from (0,k-1) by step 2(k-i)-1 (optimal: by some optimal schedule)",
);
pub const SOURCE_K1_SINGLE_ENTRY: Output = output(
    "source_k1_single_entry",
    "steps",
    "best time from (0,k-1) entering every cycle once (NaN: not decided)",
);

pub const PER_SOURCE: OutputTable = OutputTable {
    name: "per_source",
    columns: &[
        "source",
        "steps",
        "eccentricity",
        "lower_bound",
        "messages",
        "redundant",
    ],
    meaning: "per source run: broadcast time, the source's eccentricity, the best proved lower bound, messages sent and receptions not kept",
};

/// This model's own outputs, in the order a run reports them.
pub const OUTPUTS: &[Output] = &[
    WORST_STEPS,
    MEAN_STEPS,
    BOUND_THEOREM1,
    DIAMETER,
    OPTIMUM,
    LOWER_BOUND,
    MESSAGES,
    REDUNDANT_RECEPTIONS,
    STORAGE_ENTRIES,
    SHARP_BOUND,
    SOURCE_K1_STEPS,
    SOURCE_K1_OPTIMUM,
    LEMMA1_HOLDS,
    SOURCE_K1_SINGLE_ENTRY,
];

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
    tables: &[PER_SOURCE],
};
