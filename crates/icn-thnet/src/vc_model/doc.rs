//! The keys and outputs of `model = "vc-router"`: unit and meaning of every key of
//! [`super::VcRouterConfig`] and every metric a run reports. Defaults and allowed ranges are not
//! repeated here: `icnlab keys` reads them from the config and its validation. Adding a key to the
//! config means adding its row here, in the same crate.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, key};

pub const KEYS: &[Key] = &[
    key(
        "topology",
        "",
        "`mesh:XxY`, `torus:XxY`, `ring:N` or any icn-topo network (`dragonfly:P`, `fattree:K,N`, `flatfly:4x4`, `hypercube:D`, `graph:...`)",
    ),
    key(
        "routing",
        "",
        "`dim_order`, `dor`, `updown`, `updown_random`, `minimal`, `valiant`, `ugal` (see docs/booksim.md); empty: the family's usual one (`dim_order` on tori)",
    ),
    key(
        "allow_deadlock",
        "",
        "run even when the channel-dependency graph has a cycle",
    ),
    key(
        "global_delay",
        "cycles",
        "latency of dragonfly global links; 0: `channel_delay`",
    ),
    key(
        "terminal_delay",
        "cycles",
        "latency of the injection and ejection channels (BookSim2: 1); 0: `channel_delay`",
    ),
    key(
        "speculative",
        "",
        "switch allocation in the cycle of VC allocation (BookSim2's `speculative = 1`; router of any radix)",
    ),
    key("load", "flits/node/cycle", "offered load per node"),
    key(
        "size",
        "flits",
        "packet size (the small mode of the bimodal mix)",
    ),
    key("size_large", "flits", "the large mode of the bimodal mix"),
    key("vcs", "VCs", "virtual channels per port"),
    key("buf", "flits", "buffer per virtual channel"),
    key("routing_delay", "cycles", "route computation stage"),
    key("vc_alloc_delay", "cycles", "VC allocation stage"),
    key("sw_alloc_delay", "cycles", "switch allocation stage"),
    key("st_delay", "cycles", "switch traversal stage"),
    key(
        "channel_delay",
        "cycles",
        "latency of a channel between routers",
    ),
    key(
        "credit_delay",
        "cycles",
        "latency of a credit back upstream",
    ),
    key("vc_alloc", "", "VC allocator (BookSim2 names)"),
    key("sw_alloc", "", "switch allocator (BookSim2 names)"),
    key("on_deadlock", "", "`error` or `report`, as for `xswitch`"),
];

/// The model's documentation, as [`icn_engine::Model::DOC`].
pub const DOC: ModelDoc = ModelDoc {
    keys: &[
        KeyGroup {
            prefix: "",
            keys: KEYS,
        },
        KeyGroup {
            prefix: "",
            keys: crate::xswitch_model::doc::COMMON_KEYS,
        },
    ],
    optional: &[],
    outputs: &[],
    suffixes: &[],
    tables: &[],
};
