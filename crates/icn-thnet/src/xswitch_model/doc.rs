//! The keys and outputs of `model = "xswitch"`: unit and meaning of every key of
//! [`super::XSwitchConfig`] and every metric a run reports. Defaults and allowed ranges are not
//! repeated here: `icnlab keys` reads them from the config and its validation. Adding a key to the
//! config means adding its row here, in the same crate.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, key};

pub const KEYS: &[Key] = &[
    key(
        "topology",
        "",
        "the network of X-Switches: `ring:N`, `mesh:XxY`, `torus:XxY`, `star`, `tree:D`, `ccc:H,K`, `fattree:2,N`, `dragonfly:1,2,1`, `hypercube:D` (D ≤ 4), `crossbar:N` (N ≤ 5), `graph:SPEC` or `file:PATH`",
    ),
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
        "frame_size",
        "bytes",
        "payload per frame; longer messages are split",
    ),
    key("link_delay", "cycles", "latency of a link"),
    key("fifo_size", "symbols", "input FIFO of a switch port"),
    key(
        "stop_threshold",
        "symbols",
        "FIFO fill at which the port sends STOP upstream",
    ),
    key(
        "go_threshold",
        "symbols",
        "FIFO fill at which the port sends GO again",
    ),
    key("check", "", "frame check: `none`, `crc16` or `crc32`"),
    key("dma_delay", "cycles", "NIA DMA setup time per message"),
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

/// The traffic and measurement keys `vc-router` reads too, documented once.
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
    key(
        "watchdog",
        "cycles",
        "cycles without progress that count as a deadlock",
    ),
    key(
        "watchdog_wall_s",
        "s",
        "seconds of wall time without progress that count as a deadlock (the clock is read every 4096 still cycles)",
    ),
    key("warmup", "cycles", "simulated before measuring"),
    key("measure", "cycles", "length of the measurement window"),
    key(
        "drain",
        "cycles",
        "time allowed after the window for measured messages to arrive",
    ),
    key(
        "threads",
        "threads",
        "threads simulating one replication (0: every core); results are the same at any count",
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
            prefix: "",
            keys: COMMON_KEYS,
        },
    ],
    optional: &[],
    outputs: &[],
    suffixes: &[],
    tables: &[],
};
