//! The keys and outputs of `model = "bcast"`: unit and meaning of every key of
//! [`super::BcastConfig`] and every metric a run reports. Defaults and allowed ranges are not
//! repeated here: `icnlab keys` reads them from the config and its validation. Adding a key to the
//! config means adding its row here, in the same crate.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, key};

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

/// The model's documentation, as [`icn_engine::Model::DOC`].
pub const DOC: ModelDoc = ModelDoc {
    keys: &[KeyGroup {
        prefix: "",
        keys: KEYS,
    }],
    optional: &[],
    outputs: &[],
    suffixes: &[],
    tables: &[],
};
