//! The keys and outputs of `model = "cluster"`: unit and meaning of every key of
//! [`super::ClusterConfig`] and every metric a run reports. Defaults and allowed ranges are not
//! repeated here: `icnlab keys` reads them from the config and its validation. Adding a key to the
//! config means adding its row here, in the same crate.

use icn_engine::doc::{
    Key, KeyGroup, ModelDoc, OptionalKey, Output, OutputTable, Sample, key, output,
};

pub const KEYS: &[Key] = &[
    key(
        "workload.kind",
        "",
        "`pingpong`, `window`, `alltoall`, `bcast`, `trace`, `ti` (a SimGrid time-independent trace) or `dumpi` (a DUMPI trace, replayed as `ti`)",
    ),
    key(
        "workload.bytes",
        "bytes",
        "message size (bcast: the whole message)",
    ),
    key(
        "workload.iterations",
        "",
        "pingpong round trips, window messages",
    ),
    key(
        "workload.ranks",
        "ranks",
        "ranks of all-to-all and bcast; 0: one per fabric endpoint",
    ),
    key(
        "workload.algorithm",
        "",
        "bcast algorithm: `binomial`, `chain`, `scatter_allgather`, `ilbm`, `clbm`, `naulbm`, `aulbm`",
    ),
    key(
        "workload.segments",
        "segments",
        "segments of the pipelined chain",
    ),
    key("workload.root", "rank", "root of the broadcast"),
    key(
        "workload.file",
        "",
        "trace file (`kind = \"trace\"`; `ti`: an index, a folder with `index.txt` or a shared trace; `dumpi`: the trace's `.meta` file), relative to the experiment file",
    ),
    key(
        "workload.eager_bytes",
        "bytes",
        "ti: sends below this size complete locally (eager), larger ones with their transfer (SMPI's `smpi/send-is-detached-thresh`)",
    ),
    key(
        "workload.test_us",
        "µs",
        "ti: host time of one `test` (SMPI's `smpi/test`; grows while tests fail, as in SMPI)",
    ),
    key(
        "host.flops",
        "flop/s",
        "ti: host speed; `compute F` takes F / flops seconds (dumpi: the time between calls is compute at this speed, so it replays as recorded)",
    ),
    key(
        "algorithms",
        "",
        "ti: the algorithm of each collective, by SimGrid's names (the `algorithms.*` keys below); empty: every collective's default",
    ),
    key("nic.kind", "", "NIC model: `zero`, `simple` or `pipeline`"),
    key("nic.send_ns", "ns", "`simple`: host time to post a send"),
    key(
        "nic.recv_ns",
        "ns",
        "`simple`: host time to notice a completed receive",
    ),
    key(
        "nic.dma_mbs",
        "MB/s",
        "`simple`: host↔NIC DMA bandwidth (0: infinite)",
    ),
    key(
        "nic.packet_bytes",
        "bytes",
        "`simple`: largest packet the NIC puts on the wire",
    ),
    key(
        "nic.profile",
        "",
        "`pipeline`: an icn-nicmodel profile (bundled name or path)",
    ),
    key(
        "nic.design",
        "",
        "`pipeline`: an icn-nicmodel design (`myvia`, `bvia`, `gm`, `mvia` or a path)",
    ),
];

/// The keys of `[fabric]` of the kinds that do not document their own (each row says which
/// kinds read it); the kinds that do are listed by [`DOC`] under their `kind`, from the table
/// their model is documented by (`xswitch`: [`icn_thnet::xswitch_net::KEYS`], `vc-router`:
/// [`icn_router::vc_net::KEYS`], `sci-ring`: [`icn_sci::config::doc::RING_KEYS`],
/// `sci-switched`: [`icn_sci::switched::config::doc::NET_KEYS`] and the rings').
pub const FABRIC_KEYS: &[Key] = &[
    key(
        "kind",
        "",
        "fabric model: `ideal`, `flow` (flows sharing links max-min, SimGrid's CM02), `xswitch`, `vc-router`, `sci-ring` or `sci-switched`",
    ),
    key(
        "topology",
        "",
        "the fabric's network: an icn-topo graph (ideal, flow), any VC-router network spelling (`fattree:K,N`, `dragonfly:P`, `hypercube:D`, `torus:4x4x4`, `mesh:8x8,2`, `graph:..`) or `crossbar:N` (ideal, xswitch up to 5 ports, vc-router), `ring:N` (sci-ring), `ring-of-rings`, `grid`, `crossbar` or `single` (sci-switched)",
    ),
    key("hop_ns", "ns", "ideal: latency per hop"),
    key(
        "link_mbs",
        "MB/s",
        "ideal, flow: link bandwidth (ideal: 0 infinite)",
    ),
    key(
        "link_lat_ns",
        "ns",
        "flow: latency of every link (a crossbar route has two, up and down)",
    ),
    key(
        "tcp_gamma",
        "bytes",
        "flow: TCP window; a flow's rate ≤ tcp_gamma / (2 × route latency); 0: none",
    ),
    key(
        "crosstraffic",
        "",
        "flow: the reverse route carries 5 % of each flow's rate (acknowledgements)",
    ),
    key("contention", "", "ideal: packets share links"),
    key("max_packet", "bytes", "ideal: largest packet"),
    key(
        "window",
        "packets",
        "ideal, flow, vc-router: packets an endpoint may have in flight before the fabric refuses more and the NIC holds its DMA (0: unbounded)",
    ),
];

/// The selectors of the kinds whose keys are documented beside the kind, in its crate.
const XSWITCH: &str = "fabric.kind=\"xswitch\"";
const VC_ROUTER: &str = "fabric.kind=\"vc-router\"";
const SCI_RING: &str = "fabric.kind=\"sci-ring\"";
const SCI_SWITCHED: &str = "fabric.kind=\"sci-switched\"";

/// `[placement]`: where each rank runs.
pub const PLACEMENT_KEYS: &[Key] = &[
    key(
        "kind",
        "",
        "where rank r runs: `linear` (endpoint r), `random` (a permutation of every endpoint drawn from `placement.seed`), `file` (line r + 1 of `placement.file`)",
    ),
    key("seed", "", "random: the permutation's seed"),
    key(
        "file",
        "",
        "file: one endpoint per line for ranks 0, 1, ... (`#` comments), relative to the experiment file",
    ),
];

// What a run reports (see `DOC.outputs`).
pub const COMPLETION_US: Output =
    output("completion_us", "µs", "time until the last rank finished");
pub const COMPLETION_MEAN_US: Output = output(
    "completion_mean_us",
    "µs",
    "mean over ranks of the time each finished",
);
pub const COMPLETION_P99_US: Output = output(
    "completion_p99_us",
    "µs",
    "99th percentile over ranks of the finish time",
);
pub const MESSAGE_US: Output = output(
    "message_us",
    "µs",
    "mean message time, post → complete in the receiver's memory",
);
pub const HOST_US: Output = output("host_us", "µs", "of which host stages (post, poll)");
pub const NIC_US: Output = output("nic_us", "µs", "of which NIC stages and queueing at them");
pub const FABRIC_US: Output = output(
    "fabric_us",
    "µs",
    "of which in the fabric (first packet in → last packet out)",
);
pub const WIRE_US: Output = output(
    "wire_us",
    "µs",
    "of the fabric time: the message's packets alone on the empty fabric from the same injection times (route latency + their own serialisation)",
);
pub const FABRIC_WAIT_US: Output = output(
    "fabric_wait_us",
    "µs",
    "of the fabric time: the rest, waiting in the fabric (contention, queueing, blocking)",
);
pub const WAIT_US: Output = output(
    "wait_us",
    "µs",
    "mean per rank of time blocked waiting for a message or a synchronous send",
);
pub const MESSAGES: Output = output("messages", "", "messages sent");
pub const PACKETS: Output = output("packets", "", "packets injected into the fabric");
pub const BYTES: Output = output("bytes", "B", "payload bytes moved");
pub const BANDWIDTH_MBS: Output =
    output("bandwidth_mbs", "MB/s", "payload bytes / completion time");
pub const LINK_UTIL_MEAN: Output = output(
    "link_util_mean",
    "",
    "switch-to-switch channel busy fraction over the run, mean",
);
pub const LINK_UTIL_MAX: Output = output("link_util_max", "", "busiest switch-to-switch channel");
pub const SCHEME_STEPS: Output = output(
    "scheme_steps",
    "steps",
    "the broadcast scheme's step count (paper's model)",
);
pub const TI_COMPLETION_US: Output = output(
    "completion_us",
    "µs",
    "`ti`: simulated time until the last rank ended (SimGrid's \\\"Simulation time\\\")",
);
pub const TI_COMPUTE_US: Output = output(
    "compute_us",
    "µs",
    "`ti`: the busiest rank's compute and sleep time: what a compute-only run takes",
);
pub const TI_COMM_US: Output = output(
    "comm_us",
    "µs",
    "`ti`: communication time: completion − compute",
);
pub const TI_WAIT_US: Output = output(
    "wait_us",
    "µs",
    "`ti`: mean per rank of time blocked on messages",
);
pub const TI_MESSAGES: Output = output(
    "messages",
    "",
    "`ti`: point-to-point messages (collectives included)",
);
pub const TI_BYTES: Output = output("bytes", "B", "`ti`: bytes they carried");
/// One scalar per action kind the trace used (`time_recv_us`, `time_allreduce_us`, ...).
pub const TI_TIME: Output = output(
    "time_*_us",
    "µs",
    "`ti`: mean per rank of time in one action kind:",
);
pub const TI_ACTIONS: Output = output("actions", "", "`ti`: trace actions replayed");
pub const TI_PACKETS: Output = output("packets", "", "`ti`: packets the fabric carried");
pub const TI_HOST_US: Output = output(
    "host_us",
    "µs",
    "`ti`: mean per message: host stages on both sides (0 with the zero NIC)",
);
pub const TI_NIC_US: Output = output(
    "nic_us",
    "µs",
    "`ti`: mean per message: NIC stages and waiting for them (0 with the zero NIC)",
);
pub const TI_FABRIC_US: Output = output(
    "fabric_us",
    "µs",
    "`ti`: mean per message: first packet injected → last delivered (zero NIC: match → delivered)",
);
pub const TI_WIRE_US: Output = output(
    "wire_us",
    "µs",
    "`ti`: of the fabric time: the message's packets alone on the empty fabric from the same injection times",
);
pub const TI_FABRIC_WAIT_US: Output = output(
    "fabric_wait_us",
    "µs",
    "`ti`: of the fabric time: the rest, waiting in the fabric (contention, queueing, blocking)",
);

pub const RANKS: OutputTable = OutputTable {
    name: "ranks",
    columns: &["rank", "finish_us"],
    meaning: "when each rank finished",
};

pub const TI_RANKS: OutputTable = OutputTable {
    name: "ranks",
    columns: &["rank", "finish_us", "compute_us", "wait_us"],
    meaning: "`ti`: when each rank finished, its compute and sleep time and its time blocked on messages",
};

/// This model's own outputs, in the order a run reports them.
pub const OUTPUTS: &[Output] = &[
    COMPLETION_US,
    COMPLETION_MEAN_US,
    COMPLETION_P99_US,
    MESSAGE_US,
    HOST_US,
    NIC_US,
    FABRIC_US,
    WIRE_US,
    FABRIC_WAIT_US,
    WAIT_US,
    MESSAGES,
    PACKETS,
    BYTES,
    BANDWIDTH_MBS,
    LINK_UTIL_MEAN,
    LINK_UTIL_MAX,
    SCHEME_STEPS,
    TI_COMPLETION_US,
    TI_COMPUTE_US,
    TI_COMM_US,
    TI_WAIT_US,
    TI_MESSAGES,
    TI_BYTES,
    TI_ACTIONS,
    TI_PACKETS,
    TI_HOST_US,
    TI_NIC_US,
    TI_FABRIC_US,
    TI_WIRE_US,
    TI_FABRIC_WAIT_US,
    TI_TIME,
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
            prefix: "fabric.",
            keys: FABRIC_KEYS,
            when: "",
        },
        KeyGroup {
            prefix: "fabric.",
            keys: icn_thnet::xswitch_net::KEYS,
            when: XSWITCH,
        },
        KeyGroup {
            prefix: "fabric.",
            keys: icn_thnet::fabric_config::XSWITCH_FABRIC_KEYS,
            when: XSWITCH,
        },
        KeyGroup {
            prefix: "fabric.",
            keys: icn_router::vc_net::KEYS,
            when: VC_ROUTER,
        },
        KeyGroup {
            prefix: "fabric.",
            keys: icn_router::fabric_config::VC_FABRIC_KEYS,
            when: VC_ROUTER,
        },
        KeyGroup {
            prefix: "fabric.",
            keys: icn_sci::config::doc::RING_KEYS,
            when: SCI_RING,
        },
        KeyGroup {
            prefix: "fabric.",
            keys: icn_sci::switched::config::doc::NET_KEYS,
            when: SCI_SWITCHED,
        },
        KeyGroup {
            prefix: "fabric.ring.",
            keys: icn_sci::config::doc::SIZE_KEYS,
            when: SCI_SWITCHED,
        },
        KeyGroup {
            prefix: "fabric.ring.",
            keys: icn_sci::config::doc::RING_KEYS,
            when: SCI_SWITCHED,
        },
        KeyGroup {
            prefix: "placement.",
            keys: PLACEMENT_KEYS,
            when: "",
        },
    ],
    optional: &[
        OptionalKey {
            key: "algorithms.barrier",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: barrier algorithm (`ompi_recursivedoubling`, `ompi_bruck`, `ompi_basic_linear`); unset: the first",
        },
        OptionalKey {
            key: "algorithms.bcast",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `binomial_tree`, `flattree`, `scatter_LR_allgather`, `scatter_rdb_allgather`, `pipeline`",
        },
        OptionalKey {
            key: "algorithms.reduce",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `binomial`, `flat_tree`",
        },
        OptionalKey {
            key: "algorithms.allreduce",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `rdb`, `lr`, `rab_rdb`, `redbcast`",
        },
        OptionalKey {
            key: "algorithms.alltoall",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `ring`, `pair`, `basic_linear`, `bruck`",
        },
        OptionalKey {
            key: "algorithms.alltoallv",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `ring`, `pair`, `ompi_basic_linear`",
        },
        OptionalKey {
            key: "algorithms.gather",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `ompi_binomial`, `ompi_basic_linear`",
        },
        OptionalKey {
            key: "algorithms.gatherv",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `ompi_basic_linear`",
        },
        OptionalKey {
            key: "algorithms.scatter",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `ompi_binomial`, `ompi_basic_linear`",
        },
        OptionalKey {
            key: "algorithms.scatterv",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `ompi_basic_linear`",
        },
        OptionalKey {
            key: "algorithms.allgather",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `ring`, `NTSLR`, `rdb`, `bruck`",
        },
        OptionalKey {
            key: "algorithms.allgatherv",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `ring`, `mpich_ring`",
        },
        OptionalKey {
            key: "algorithms.reduce_scatter",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `mpich_pair`, `default`",
        },
        OptionalKey {
            key: "algorithms.scan",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `linear`",
        },
        OptionalKey {
            key: "algorithms.exscan",
            sample: Sample::Text,
            unit: "",
            meaning: "ti: `linear`",
        },
    ],
    outputs: &[OUTPUTS],
    suffixes: &[],
    tables: &[RANKS, TI_RANKS],
};
