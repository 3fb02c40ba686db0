//! Unit and meaning of every key of every model (the columns a typed config cannot say by
//! itself). Defaults and allowed ranges are not repeated here: `keys.rs` reads them from the
//! config and its validation. A test checks that these tables name exactly the config's keys.

/// (key, unit, meaning) of one model.
type Docs = &'static [(&'static str, &'static str, &'static str)];

/// Models whose keys under `prefix` are another model's keys (`ring.*` of `sci-switched` are
/// the `sci` keys of each ring), or whose shared keys are documented once (`vc-router`
/// shares the traffic keys of `xswitch`).
const SHARED: &[(&str, &str, &str)] = &[
    ("sci-switched", "ring.", "sci"),
    ("vc-router", "", "xswitch"),
];

#[cfg(test)]
/// The file of `docs/` that carries a model's key table.
#[cfg(test)]
pub fn doc_file(model: &str) -> &'static str {
    match model {
        "sci" | "sci-switched" => "sci.md",
        "xswitch" | "vc-router" => "thnet.md",
        "nic" => "nicmodel.md",
        "via-bench" => "via.md",
        "bcast" => "bcast.md",
        "cluster" => "cluster.md",
        _ => "mm1.md",
    }
}

/// Keys without a default (an `Option` in the config, absent from an empty file's config):
/// (model, key, a value of its type, unit, meaning).
pub const OPTIONAL: &[(&str, &str, OptionalSample, &str, &str)] = &[
    (
        "cluster",
        "algorithms.barrier",
        OptionalSample::Text,
        "",
        "ti: barrier algorithm (`ompi_recursivedoubling`, `ompi_bruck`, `ompi_basic_linear`); unset: the first",
    ),
    (
        "cluster",
        "algorithms.bcast",
        OptionalSample::Text,
        "",
        "ti: `binomial_tree`, `flattree`, `scatter_LR_allgather`, `scatter_rdb_allgather`, `pipeline`",
    ),
    (
        "cluster",
        "algorithms.reduce",
        OptionalSample::Text,
        "",
        "ti: `binomial`, `flat_tree`",
    ),
    (
        "cluster",
        "algorithms.allreduce",
        OptionalSample::Text,
        "",
        "ti: `rdb`, `lr`, `rab_rdb`, `redbcast`",
    ),
    (
        "cluster",
        "algorithms.alltoall",
        OptionalSample::Text,
        "",
        "ti: `ring`, `pair`, `basic_linear`, `bruck`",
    ),
    (
        "cluster",
        "algorithms.alltoallv",
        OptionalSample::Text,
        "",
        "ti: `ring`, `pair`, `ompi_basic_linear`",
    ),
    (
        "cluster",
        "algorithms.gather",
        OptionalSample::Text,
        "",
        "ti: `ompi_binomial`, `ompi_basic_linear`",
    ),
    (
        "cluster",
        "algorithms.gatherv",
        OptionalSample::Text,
        "",
        "ti: `ompi_basic_linear`",
    ),
    (
        "cluster",
        "algorithms.scatter",
        OptionalSample::Text,
        "",
        "ti: `ompi_binomial`, `ompi_basic_linear`",
    ),
    (
        "cluster",
        "algorithms.scatterv",
        OptionalSample::Text,
        "",
        "ti: `ompi_basic_linear`",
    ),
    (
        "cluster",
        "algorithms.allgather",
        OptionalSample::Text,
        "",
        "ti: `ring`, `NTSLR`, `rdb`, `bruck`",
    ),
    (
        "cluster",
        "algorithms.allgatherv",
        OptionalSample::Text,
        "",
        "ti: `ring`, `mpich_ring`",
    ),
    (
        "cluster",
        "algorithms.reduce_scatter",
        OptionalSample::Text,
        "",
        "ti: `mpich_pair`, `default`",
    ),
    (
        "cluster",
        "algorithms.scan",
        OptionalSample::Text,
        "",
        "ti: `linear`",
    ),
    (
        "cluster",
        "algorithms.exscan",
        OptionalSample::Text,
        "",
        "ti: `linear`",
    ),
    (
        "sci",
        "traffic.trace_file",
        OptionalSample::Text,
        "",
        "CSV trace for `traffic.pattern = \"trace\"`, relative to the experiment file",
    ),
    (
        "sci-switched",
        "local_fraction",
        OptionalSample::Number,
        "",
        "share of each non-hot send that stays on the source's ring; unset: destinations uniform over all other hosts",
    ),
    (
        "sci-switched",
        "ring.traffic.trace_file",
        OptionalSample::Text,
        "",
        "as `traffic.trace_file` of `sci`",
    ),
    (
        "nic",
        "user_tlb",
        OptionalSample::Bool,
        "",
        "override the design: address translation in user space (UTLB); unset: the design's choice",
    ),
    (
        "nic",
        "pd_ring",
        OptionalSample::Bool,
        "",
        "override the design: PD ring between host and NIC; unset: the design's choice",
    ),
    (
        "nic",
        "pipeline",
        OptionalSample::Bool,
        "",
        "override the design: pipelined DMA stages; unset: the design's choice",
    ),
    (
        "nic",
        "big_dma",
        OptionalSample::Bool,
        "",
        "override the design: one DMA per contiguous chunk; unset: the design's choice",
    ),
];

/// The type of an optional key, for probing what it accepts.
#[derive(Clone, Copy, Debug)]
pub enum OptionalSample {
    Text,
    Number,
    Bool,
}

impl OptionalSample {
    pub fn value(self) -> toml::Value {
        match self {
            OptionalSample::Text => toml::Value::String(String::new()),
            OptionalSample::Number => toml::Value::Float(0.5),
            OptionalSample::Bool => toml::Value::Boolean(false),
        }
    }
}

fn docs_of(model: &str) -> Docs {
    match model {
        "sci" => SCI,
        "sci-switched" => SCI_SWITCHED,
        "xswitch" => XSWITCH,
        "vc-router" => VC_ROUTER,
        "nic" => NIC,
        "via-bench" => VIA_BENCH,
        "bcast" => BCAST,
        "cluster" => CLUSTER,
        "mm1" => MM1,
        _ => &[],
    }
}

/// The keys documented for `model` itself (shared ones excluded).
#[cfg(test)]
pub fn keys_of(model: &str) -> impl Iterator<Item = &'static str> {
    docs_of(model).iter().map(|d| d.0)
}

/// (unit, meaning) of `key` of `model`.
pub fn lookup(model: &str, key: &str) -> Option<(&'static str, &'static str)> {
    if let Some(&(_, unit, meaning)) = docs_of(model).iter().find(|d| d.0 == key) {
        return Some((unit, meaning));
    }
    SHARED.iter().find_map(|&(m, prefix, other)| {
        let rest = key.strip_prefix(prefix).filter(|_| m == model)?;
        docs_of(other)
            .iter()
            .find(|d| d.0 == rest)
            .map(|d| (d.1, d.2))
    })
}

const SCI: Docs = &[
    ("nodes", "nodes", "ring size N"),
    (
        "load",
        "",
        "offered load per node: the fraction of its output link a node would fill with its own sends",
    ),
    (
        "transmitter",
        "",
        "`standard`, `intelligent` (hold-back), or `compare` (both on identical traffic)",
    ),
    (
        "receiver",
        "",
        "input-queue allocation: `no-aging`, `ab` (IEEE 1596 A/B aging) or `counted-ab`",
    ),
    (
        "generation_end",
        "",
        "how an A/B generation ends: `counted` or `quiet-window`",
    ),
    (
        "quiet_window",
        "cycles",
        "cycles without RETRY that end a generation (with `generation_end = \"quiet-window\"`)",
    ),
    (
        "active_buffers",
        "sends",
        "outstanding (un-echoed or to-be-retried) sends per node",
    ),
    (
        "queue_depth",
        "packets",
        "input-queue depth (ignored with `unbounded_queue`)",
    ),
    (
        "unbounded_queue",
        "",
        "an input queue that always has space",
    ),
    (
        "service_time",
        "cycles",
        "time the receiver needs to consume one packet (60 cycles = 120 ns)",
    ),
    (
        "send_queue_depth",
        "sends",
        "send-queue capacity per node; sends that find it full are dropped and counted (`source_drops`)",
    ),
    (
        "data_bytes",
        "bytes",
        "data sizes of sends, each one of 0, 16, 64, 256",
    ),
    (
        "data_weights",
        "",
        "relative weights of `data_bytes` (same length, positive sum)",
    ),
    (
        "crc_outside_header",
        "",
        "adds a header CRC symbol to every send (SCI's optional layout)",
    ),
    (
        "bandwidth_allocation",
        "",
        "`sat` (SAT-token quota) or `none` (pure register insertion)",
    ),
    (
        "sat_quota",
        "sends",
        "own sends per SAT visit with `bandwidth_allocation = \"sat\"`",
    ),
    (
        "traffic.pattern",
        "",
        "destinations: `uniform` or `hotspot`",
    ),
    ("traffic.hotspot_node", "node", "the hot node (0-based)"),
    (
        "traffic.hotspot_fraction",
        "",
        "share of each other node's sends that go to the hot node",
    ),
    (
        "traffic.hot_node_sends",
        "",
        "whether the hot node generates traffic of its own",
    ),
    ("warmup_cycles", "cycles", "simulated before measuring"),
    (
        "measure_cycles",
        "cycles",
        "length of the measurement window",
    ),
    (
        "drain_limit_cycles",
        "cycles",
        "after generation stops, time allowed for in-flight sends before the run ends with a diagnosis",
    ),
];

const SCI_SWITCHED: Docs = &[
    (
        "topology",
        "",
        "`single`, `ring-of-rings`, `grid` or `crossbar`",
    ),
    (
        "rings",
        "rings",
        "host rings for `ring-of-rings` and `crossbar`",
    ),
    ("grid_rows", "rings", "row rings for `grid`"),
    ("grid_cols", "rings", "column rings for `grid`"),
    (
        "remote_status",
        "",
        "intelligent transmitters: switches relay the serve status of the targets behind them",
    ),
    (
        "hot_ring_sends",
        "",
        "with a hot spot: whether the hosts on the hot host's own ring generate traffic",
    ),
    (
        "switch.queue_depth",
        "packets",
        "input-queue depth of every switch agent (and its send-queue capacity)",
    ),
    (
        "switch.service_time",
        "cycles",
        "time to route one packet through the switch",
    ),
    (
        "switch.receiver",
        "",
        "queue allocation of the agents' input queues: `ab`, `counted-ab` or `no-aging`",
    ),
    (
        "switch.arbitration",
        "",
        "who moves first when several inputs want one output: `round-robin` or `fixed`",
    ),
    (
        "switch.sat_quota",
        "sends",
        "own sends an agent on a ring with hosts may start per SAT visit",
    ),
    (
        "sat_quota",
        "sends",
        "own sends a host or transit-ring agent may start per SAT visit in a multi-ring system",
    ),
    (
        "retry_order",
        "",
        "which busied send a node re-sends first in a multi-ring system: `busied-first`, `oldest` or `least-recent`",
    ),
];

const XSWITCH: Docs = &[
    (
        "topology",
        "",
        "the network of X-Switches: `ring:N`, `mesh:XxY`, `torus:XxY`, `star`, `tree:D`, `ccc:H,K`, `fattree:2,N`, `dragonfly:1,2,1`, `hypercube:D` (D ≤ 4), `crossbar:N` (N ≤ 5), `graph:SPEC` or `file:PATH`",
    ),
    (
        "load",
        "bytes/node/cycle",
        "offered payload per node (1.0 = a full link)",
    ),
    (
        "size",
        "bytes",
        "message size (the small mode of the bimodal mix)",
    ),
    ("size_large", "bytes", "the large mode of the bimodal mix"),
    ("large_fraction", "", "share of messages of `size_large`"),
    (
        "traffic.pattern",
        "",
        "destinations of the generated messages",
    ),
    (
        "traffic.hotspot_node",
        "node",
        "the hot node of `hotspot` (0-based)",
    ),
    (
        "traffic.hotspot_fraction",
        "",
        "share of messages sent to the hot node",
    ),
    (
        "traffic.trace_file",
        "",
        "CSV trace for `pattern = \"trace\"`, relative to the experiment file",
    ),
    (
        "traffic.perm_seed",
        "",
        "seed of `random_permutation` (fixed across replications, as BookSim's `perm_seed`)",
    ),
    (
        "traffic.injection",
        "",
        "`bernoulli` or BookSim2's `on_off` (a two-state Markov chain per source)",
    ),
    (
        "traffic.burst_alpha",
        "1/cycle",
        "`on_off`: probability off → on per cycle (BookSim2's `burst_alpha`)",
    ),
    (
        "traffic.burst_beta",
        "1/cycle",
        "`on_off`: probability on → off per cycle (BookSim2's `burst_beta`)",
    ),
    (
        "frame_size",
        "bytes",
        "payload per frame; longer messages are split",
    ),
    ("link_delay", "cycles", "latency of a link"),
    ("fifo_size", "symbols", "input FIFO of a switch port"),
    (
        "stop_threshold",
        "symbols",
        "FIFO fill at which the port sends STOP upstream",
    ),
    (
        "go_threshold",
        "symbols",
        "FIFO fill at which the port sends GO again",
    ),
    ("check", "", "frame check: `none`, `crc16` or `crc32`"),
    ("dma_delay", "cycles", "NIA DMA setup time per message"),
    (
        "watchdog",
        "cycles",
        "cycles without progress that count as a deadlock",
    ),
    ("warmup", "cycles", "simulated before measuring"),
    ("measure", "cycles", "length of the measurement window"),
    (
        "drain",
        "cycles",
        "time allowed after the window for measured messages to arrive",
    ),
    (
        "on_deadlock",
        "",
        "`error` stops the run with the diagnosis; `report` ends the replication with `deadlocked = 1`",
    ),
    (
        "trace_port",
        "",
        "an output port (`s0.D`) whose grants are returned as table `grants`; empty: none",
    ),
    (
        "threads",
        "threads",
        "threads simulating one replication (0: every core); results are the same at any count",
    ),
];

const VC_ROUTER: Docs = &[
    (
        "topology",
        "",
        "`mesh:XxY`, `torus:XxY`, `ring:N` or any icn-topo network (`dragonfly:P`, `fattree:K,N`, `flatfly:4x4`, `hypercube:D`, `graph:...`)",
    ),
    (
        "routing",
        "",
        "`dim_order`, `dor`, `updown`, `updown_random`, `minimal`, `valiant`, `ugal` (see docs/booksim.md); empty: the family's usual one (`dim_order` on tori)",
    ),
    (
        "allow_deadlock",
        "",
        "run even when the channel-dependency graph has a cycle",
    ),
    (
        "global_delay",
        "cycles",
        "latency of dragonfly global links; 0: `channel_delay`",
    ),
    (
        "terminal_delay",
        "cycles",
        "latency of the injection and ejection channels (BookSim2: 1); 0: `channel_delay`",
    ),
    ("load", "flits/node/cycle", "offered load per node"),
    (
        "size",
        "flits",
        "packet size (the small mode of the bimodal mix)",
    ),
    ("size_large", "flits", "the large mode of the bimodal mix"),
    ("vcs", "VCs", "virtual channels per port"),
    ("buf", "flits", "buffer per virtual channel"),
    ("routing_delay", "cycles", "route computation stage"),
    ("vc_alloc_delay", "cycles", "VC allocation stage"),
    ("sw_alloc_delay", "cycles", "switch allocation stage"),
    ("st_delay", "cycles", "switch traversal stage"),
    (
        "channel_delay",
        "cycles",
        "latency of a channel between routers",
    ),
    (
        "credit_delay",
        "cycles",
        "latency of a credit back upstream",
    ),
    ("vc_alloc", "", "VC allocator (BookSim2 names)"),
    ("sw_alloc", "", "switch allocator (BookSim2 names)"),
    ("on_deadlock", "", "`error` or `report`, as for `xswitch`"),
    (
        "threads",
        "threads",
        "threads simulating one replication (0: every core); results are the same at any count",
    ),
];

const NIC: Docs = &[
    (
        "profile",
        "",
        "host and NIC timing: `setup-a`, `setup-b`, `fast-ethernet`, `gigabit-ethernet` or a profile TOML",
    ),
    (
        "design",
        "",
        "VIA implementation: `myvia`, `bvia`, `gm`, `mvia` or a design TOML",
    ),
    (
        "benchmark",
        "",
        "what to run: `both`, `pingpong`, `window`, `pdring`, `validation`, `ablation` or `sensitivity`",
    ),
    ("size", "bytes", "message size of the scalar results"),
    (
        "sizes",
        "bytes",
        "message sizes of table `curve`; empty: no curve",
    ),
    (
        "tlb_hit_rate",
        "",
        "probability that a NIC-side TLB lookup hits (designs without `user_tlb`)",
    ),
    (
        "round_trips",
        "round trips",
        "pingpong round trips per size",
    ),
    ("messages", "messages", "window messages per size"),
    (
        "queue_depth",
        "descriptors",
        "send descriptors posted ahead in the window benchmark",
    ),
    (
        "ring.small_ring",
        "PDs",
        "the NIC's small ring per VI send queue",
    ),
    ("ring.big_ring", "PDs", "the host's big ring"),
    (
        "ring.low_water",
        "PDs",
        "interrupt when the small ring falls to this many and the flag is set",
    ),
    (
        "ring.messages",
        "messages",
        "messages posted in the `pdring` benchmark",
    ),
    (
        "ring.burst_mean",
        "messages",
        "mean messages per burst (geometric)",
    ),
    ("ring.post_us", "µs", "host time per post within a burst"),
    (
        "ring.mean_gap_us",
        "µs",
        "mean time between posts over the run (sets the think time between bursts)",
    ),
];

const VIA_BENCH: Docs = &[
    (
        "program",
        "",
        "`pingpong` (latency) or `window` (bandwidth)",
    ),
    (
        "transport",
        "",
        "icn-via over `shm` or `tcp`, or the raw socket baselines",
    ),
    ("size", "bytes", "message size"),
    ("iterations", "round trips", "timed pingpong round trips"),
    (
        "warmup",
        "round trips",
        "untimed round trips (or messages) before timing",
    ),
    ("messages", "messages", "timed window messages"),
    (
        "window",
        "messages",
        "messages in flight in the window program",
    ),
    ("reliability", "", "VIA reliability level of the VIs"),
    ("pin", "", "pin the two processes to different cores"),
];

const BCAST: Docs = &[
    (
        "graph",
        "",
        "`ccc:H,K`, `hypercube:D`, `mesh:WxH`, `torus:WxH`, `ring:N`, `path:N` or `file:PATH`",
    ),
    (
        "ccc_k",
        "",
        "when > 0 the graph is CCC(ccc_k + ccc_dh, ccc_k) instead of `graph` (to sweep CCC sizes)",
    ),
    ("ccc_dh", "", "h − k for `ccc_k`"),
    (
        "scheme",
        "",
        "`clbm`, `naulbm`, `aulbm`, `ilbm` (CCCBrd on CCC) or `optimal`",
    ),
    (
        "source",
        "",
        "`all` or one node name such as `(0,2)`; all sources of a large graph are refused (quadratic)",
    ),
    (
        "random_tiebreak",
        "",
        "keep a random one of simultaneous receptions (the paper); `false`: the lowest sender",
    ),
    (
        "greedy_tries",
        "tries",
        "randomised greedy trees per source for CLBM",
    ),
    (
        "design_moves",
        "moves",
        "moves of the universal-list designer",
    ),
    (
        "optimum_max_nodes",
        "nodes",
        "largest graph whose exact optimum is searched (SAT)",
    ),
    (
        "optimum_conflicts",
        "conflicts",
        "SAT conflict budget per call (the optimum is unknown when it runs out)",
    ),
];

const CLUSTER: Docs = &[
    (
        "workload.kind",
        "",
        "`pingpong`, `window`, `alltoall`, `bcast`, `trace` or `ti` (a SimGrid time-independent trace)",
    ),
    (
        "workload.bytes",
        "bytes",
        "message size (bcast: the whole message)",
    ),
    (
        "workload.iterations",
        "",
        "pingpong round trips, window messages",
    ),
    (
        "workload.ranks",
        "ranks",
        "ranks of all-to-all and bcast; 0: one per fabric endpoint",
    ),
    (
        "workload.algorithm",
        "",
        "bcast algorithm: `binomial`, `chain`, `scatter_allgather`, `ilbm`, `clbm`, `naulbm`, `aulbm`",
    ),
    (
        "workload.segments",
        "segments",
        "segments of the pipelined chain",
    ),
    ("workload.root", "rank", "root of the broadcast"),
    (
        "workload.file",
        "",
        "trace file (`kind = \"trace\"`; `ti`: an index, a folder with `index.txt` or a shared trace), relative to the experiment file",
    ),
    (
        "workload.eager_bytes",
        "bytes",
        "ti: sends below this size complete locally (eager), larger ones with their transfer (SMPI's `smpi/send-is-detached-thresh`)",
    ),
    (
        "workload.test_us",
        "µs",
        "ti: host time of one `test` (SMPI's `smpi/test`; grows while tests fail, as in SMPI)",
    ),
    (
        "host.flops",
        "flop/s",
        "ti: host speed; `compute F` takes F / flops seconds",
    ),
    (
        "algorithms",
        "",
        "ti: the algorithm of each collective, by SimGrid's names (the `algorithms.*` keys below); empty: every collective's default",
    ),
    ("nic.kind", "", "NIC model: `zero`, `simple` or `pipeline`"),
    ("nic.send_ns", "ns", "`simple`: host time to post a send"),
    (
        "nic.recv_ns",
        "ns",
        "`simple`: host time to notice a completed receive",
    ),
    (
        "nic.dma_mbs",
        "MB/s",
        "`simple`: host↔NIC DMA bandwidth (0: infinite)",
    ),
    (
        "nic.packet_bytes",
        "bytes",
        "`simple`: largest packet the NIC puts on the wire",
    ),
    (
        "nic.profile",
        "",
        "`pipeline`: an icn-nicmodel profile (bundled name or path)",
    ),
    (
        "nic.design",
        "",
        "`pipeline`: an icn-nicmodel design (`myvia`, `bvia`, `gm`, `mvia` or a path)",
    ),
    (
        "fabric.kind",
        "",
        "fabric model: `ideal`, `flow` (flows sharing links max-min, SimGrid's CM02), `xswitch`, `vc-router` or `sci-ring`",
    ),
    (
        "fabric.topology",
        "",
        "the fabric's network: an icn-topo graph (ideal, flow), any VC-router network spelling (`fattree:K,N`, `dragonfly:P`, `hypercube:D`, `torus:4x4x4`, `mesh:8x8,2`, `graph:..`) or `crossbar:N` (ideal, xswitch up to 5 ports, vc-router), `ring:N` (sci-ring)",
    ),
    ("fabric.hop_ns", "ns", "ideal: latency per hop"),
    (
        "fabric.link_mbs",
        "MB/s",
        "ideal, flow: link bandwidth (ideal: 0 infinite)",
    ),
    (
        "fabric.link_lat_ns",
        "ns",
        "flow: latency of every link (a crossbar route has two, up and down)",
    ),
    (
        "fabric.tcp_gamma",
        "bytes",
        "flow: TCP window; a flow's rate ≤ tcp_gamma / (2 × route latency); 0: none",
    ),
    (
        "fabric.crosstraffic",
        "",
        "flow: the reverse route carries 5 % of each flow's rate (acknowledgements)",
    ),
    ("fabric.contention", "", "ideal: packets share links"),
    ("fabric.max_packet", "bytes", "ideal: largest packet"),
    (
        "fabric.clock_mhz",
        "MHz",
        "xswitch, vc-router: clock (an X-Switch link moves 1 byte per cycle)",
    ),
    ("fabric.frame_size", "bytes", "xswitch: payload per frame"),
    (
        "fabric.fifo_size",
        "symbols",
        "xswitch: input FIFO of a switch port",
    ),
    (
        "fabric.stop_threshold",
        "symbols",
        "xswitch: FIFO fill that sends STOP",
    ),
    (
        "fabric.go_threshold",
        "symbols",
        "xswitch: FIFO fill that sends GO",
    ),
    (
        "fabric.dma_delay",
        "cycles",
        "xswitch: NIA DMA setup per message",
    ),
    ("fabric.flit_bytes", "bytes", "vc-router: bytes per flit"),
    (
        "fabric.max_packet_flits",
        "flits",
        "vc-router: largest packet",
    ),
    ("fabric.vcs", "VCs", "vc-router: virtual channels per port"),
    (
        "fabric.buf",
        "flits",
        "vc-router: buffer per virtual channel",
    ),
    (
        "fabric.watchdog",
        "cycles",
        "xswitch, vc-router: cycles without progress that count as a deadlock",
    ),
    (
        "fabric.sci_data_bytes",
        "bytes",
        "sci-ring: data bytes per SCI send (16, 64 or 256)",
    ),
    (
        "fabric.intelligent",
        "",
        "sci-ring: intelligent A/B aging instead of standard A/B aging",
    ),
    (
        "fabric.threads",
        "threads",
        "xswitch, vc-router: threads simulating the fabric (0: every core); same results at any count",
    ),
    (
        "fabric.allow_deadlock",
        "",
        "xswitch: run even when the routes the workload uses have a cycle of channel dependencies (the watchdog still reports a deadlock)",
    ),
    (
        "placement.kind",
        "",
        "where rank r runs: `linear` (endpoint r), `random` (a permutation of every endpoint drawn from `placement.seed`), `file` (line r + 1 of `placement.file`)",
    ),
    ("placement.seed", "", "random: the permutation's seed"),
    (
        "placement.file",
        "",
        "file: one endpoint per line for ranks 0, 1, ... (`#` comments), relative to the experiment file",
    ),
];

const MM1: Docs = &[
    ("arrival_rate", "1/time", "arrival rate λ"),
    (
        "service_rate",
        "1/time",
        "service rate μ; stability needs λ < μ",
    ),
    ("warmup", "customers", "discarded at the start"),
    ("customers", "customers", "measured after the warm-up"),
];
