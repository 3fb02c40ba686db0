//! The ideal fabric: a graph of nodes joined by links with a fixed per-hop latency and a
//! bandwidth, for analytic checks and for "what if the network were perfect" questions.
//!
//! On a graph (`path:N`, `mesh:WxH`, `ccc:H,K`, ... of `icn_topo::parse_graph_spec`) each
//! node is a switch with one endpoint attached. On a switch network of
//! `icn_topo::parse_network_spec` (`fattree:K,N`, `dragonfly:P`, `mesh:WxH,C`, `crossbar:N`,
//! ...; what the any-radix VC router takes) the endpoints are nodes of their own, each joined
//! to its router by a link ([`icn_topo::Network::endpoint_graph`]): a route pays a hop into
//! the network and one out of it, and two packets to one endpoint share its last link (a
//! crossbar's output port). A spelling both parse (`mesh:4x4`, `ring:8`, `hypercube:3`) is
//! the graph. A packet follows a shortest path
//! (BFS, lowest neighbour index first, computed per source when first needed — never a table
//! of all pairs). Timing, with `L` = `hop_ns` and `S` = payload bytes / `link_mbs`:
//!
//! | mode | a packet over `H` hops, injected at `t` |
//! |---|---|
//! | contention-free | delivered at `t + H·L + S` (`t + S` when `H = 0`) |
//! | with contention | hop `i` starts at `max(head arrives, link i free)`, holds the link for `S`; the head reaches the next node `L` later; delivered when the tail has crossed the last link |
//!
//! With contention, links are reserved when the packet is injected, in injection order: a
//! packet never delays one injected before it. That is exact for one flow and a FIFO
//! approximation otherwise (a real switch serves whichever head arrives first). Either way
//! packets of one pair are delivered in injection order (a later one is held back to the
//! earlier one's delivery time if it would overtake it).

use crate::window::Window;
use crate::{ChannelLoad, Delivery, Fabric, FabricError, Nouns, Packet, Ps, ZeroLoad};
use icn_engine::Invalid;
use icn_topo::{Graph, NodeId};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// `[fabric]` keys of `kind = "ideal"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IdealConfig {
    /// A graph spec of `icn-topo` (`path:N`, `ring:N`, `mesh:WxH`, `torus:WxH`,
    /// `hypercube:D`, `ccc:H,K`, `file:PATH`: one endpoint per node), or a network spec
    /// (`fattree:K,N`, `dragonfly:P`, `flatfly:..`, `mesh:WxH,C`, `crossbar:N`,
    /// `graph:SPEC`, ...: endpoints linked to their routers).
    pub topology: String,
    /// Latency of one hop (switch + wire), ns.
    pub hop_ns: f64,
    /// Link bandwidth, MB/s (10^6 B/s); 0 = infinite (no serialisation time).
    pub link_mbs: f64,
    /// Packets share links (FIFO in injection order); false: every packet sees an empty network.
    pub contention: bool,
    /// Largest payload per packet, bytes.
    pub max_packet: u32,
    /// Packets an endpoint may have in flight (accepted, not yet delivered) before it
    /// refuses more (rule 4 of the fabric interface), 0 = unbounded.
    pub window: usize,
}

impl Default for IdealConfig {
    fn default() -> Self {
        IdealConfig {
            topology: "path:2".into(),
            hop_ns: 550.0,
            link_mbs: 160.0,
            contention: true,
            max_packet: 1 << 20,
            window: DEFAULT_WINDOW,
        }
    }
}

/// Packets in flight per endpoint of an ideal or flow fabric by default: with the NICs'
/// 4 KiB packets, 256 KiB, more than a link's bandwidth-delay product at any `hop_ns` and
/// `link_mbs` a bundled experiment uses, so a lone stream is never held back by it.
pub const DEFAULT_WINDOW: usize = 64;

impl IdealConfig {
    pub fn validate(&self) -> Result<(), Invalid> {
        Invalid::check(
            self.hop_ns.is_finite() && (0.0..=1e9).contains(&self.hop_ns),
            "fabric.hop_ns",
            "0 ..= 10^9 ns",
            self.hop_ns,
        )?;
        Invalid::check(
            self.link_mbs == 0.0
                || (self.link_mbs.is_finite() && (1e-3..=1e9).contains(&self.link_mbs)),
            "fabric.link_mbs",
            "0 (infinite) or 0.001 ..= 10^9 MB/s",
            self.link_mbs,
        )?;
        Invalid::check(
            (1..=1 << 30).contains(&self.max_packet),
            "fabric.max_packet",
            "1 ..= 2^30 bytes",
            self.max_packet,
        )?;
        check_window(self.window)
    }

    /// Builds the fabric (the graph is parsed here, once), after checking that the graph's
    /// build fits in memory ([`IdealConfig::check_fits`]).
    pub fn build(&self) -> Result<IdealFabric, Invalid> {
        self.validate()?;
        self.check_fits(icn_engine::memory::available_memory())?;
        let (graph, endpoints) = topology(&self.topology)?;
        let mut f = IdealFabric::new(graph, self);
        f.endpoints = endpoints;
        f.accepted.truncate(endpoints);
        f.window = Window::new(endpoints, self.window);
        Ok(f)
    }
}

/// `fabric.window` of the ideal and flow fabrics: 0 (unbounded) ..= 2^20 packets.
pub fn check_window(window: usize) -> Result<(), Invalid> {
    Invalid::check(
        window <= 1 << 20,
        "fabric.window",
        "0 (unbounded) ..= 2^20 packets",
        window,
    )
}

/// The graph `spec` names and its endpoint count: a graph spec first (one endpoint per
/// node), else a network spec (endpoints first, then routers). Neither: the graph parser's
/// error for a graph family, the network parser's for any other.
pub fn topology(spec: &str) -> Result<(Graph, usize), Invalid> {
    let bad = |e: icn_topo::TopoError| Invalid::new("fabric.topology", e.to_string());
    let graph_error = match icn_topo::parse_graph_spec(spec) {
        Ok(g) => {
            let n = g.len();
            return Ok((g, n));
        }
        Err(e) => e,
    };
    let family = spec.split_once(':').map_or(spec, |(f, _)| f).trim();
    let graph_family = icn_topo::spec::SPEC_FORMS
        .split(" | ")
        .any(|form| form.split(':').next() == Some(family));
    let network_family = icn_topo::network::spec::NETWORK_FORMS
        .split(" | ")
        .any(|form| form.split(':').next() == Some(family));
    match icn_topo::parse_network_spec(spec) {
        Ok(net) => {
            let endpoints = net.terminals() as usize;
            Ok((net.endpoint_graph().map_err(bad)?, endpoints))
        }
        Err(_) if graph_family => Err(bad(graph_error)),
        Err(e) if network_family => Err(bad(e)),
        Err(_) => Err(Invalid::new(
            "fabric.topology",
            format!(
                "a graph ({}) or a network ({}), not `{spec}`",
                icn_topo::spec::SPEC_FORMS,
                icn_topo::network::spec::NETWORK_FORMS
            ),
        )),
    }
}

impl IdealConfig {
    /// Refuses, before anything is built, a graph whose build and first routes exceed
    /// `available` bytes: the builder's peak ([`icn_topo::GraphSize::build_bytes`]), then
    /// per node its accepted-bytes counter and one source's BFS tree (4 B). Each further
    /// source that sends adds a tree of 4 B per node, held for the run. A network spelling
    /// ([`topology`]'s second reading) first builds the network ([`icn_topo::NetworkSize`]),
    /// then its endpoint graph from a name (about 40 B) and an edge (16 B) per node and link.
    /// `file:` graphs are bounded by their file.
    pub fn check_fits(&self, available: u64) -> Result<(), Invalid> {
        let (size, network_bytes) = match icn_topo::graph_spec_size(&self.topology) {
            Some(size) => (size, 0),
            None => {
                let Some(net) = icn_topo::network_spec_size(&self.topology) else {
                    return Ok(());
                };
                let nodes = net.routers.saturating_add(net.terminals);
                let links = net.routers.saturating_mul(net.radix);
                let size = icn_topo::GraphSize {
                    nodes,
                    max_degree: net.radix,
                    directed_links: links,
                };
                let names_and_edges = nodes
                    .saturating_mul(40)
                    .saturating_add(links.saturating_mul(16));
                (size, net.build_bytes.saturating_add(names_and_edges))
            }
        };
        icn_engine::memory::check_fits(
            "fabric.topology",
            &format!("the ideal fabric's graph of {} nodes", size.nodes),
            size.build_bytes()
                .saturating_add(size.nodes.saturating_mul(8 + 4))
                .saturating_add(network_bytes),
            available,
        )
    }
}

/// See the module documentation.
pub struct IdealFabric {
    graph: Graph,
    hop_ps: Ps,
    /// Picoseconds per byte × 2^16 (fixed point, so 160 MB/s = 6 250 ps/B stays exact).
    ps_per_byte_q16: u128,
    contention: bool,
    max_packet: u32,
    now: Ps,
    seq: u64,
    /// BFS predecessor arrays per source, built on first use.
    parents: HashMap<NodeId, Vec<u32>>,
    /// Per directed link `(node, neighbour index)`: when it is next free.
    link_free: HashMap<(NodeId, usize), Ps>,
    /// Endpoints: the first nodes of the graph (all of them on a graph spec).
    endpoints: usize,
    /// Per directed link: busy picoseconds while measuring.
    link_busy: HashMap<(NodeId, usize), u64>,
    /// Per pair: delivery time of its latest packet (keeps pairs in order).
    last_delivery: HashMap<(usize, usize), Ps>,
    pending: BinaryHeap<Reverse<(Ps, u64, PacketKey)>>,
    packets: HashMap<u64, (Packet, Ps)>,
    accepted: Vec<u64>,
    measuring: bool,
    /// The endpoints' input queues (rule 4): packets in flight per source.
    window: Window,
}

type PacketKey = u64;

impl IdealFabric {
    pub fn new(graph: Graph, cfg: &IdealConfig) -> IdealFabric {
        let n = graph.len();
        let ps_per_byte_q16 = if cfg.link_mbs == 0.0 {
            0
        } else {
            // 1 MB/s = 1 B/µs = 10^6 ps per byte.
            (1e6 / cfg.link_mbs * 65_536.0).round() as u128
        };
        IdealFabric {
            graph,
            endpoints: n,
            hop_ps: (cfg.hop_ns * 1e3).round() as Ps,
            ps_per_byte_q16,
            contention: cfg.contention,
            max_packet: cfg.max_packet,
            now: 0,
            seq: 0,
            parents: HashMap::new(),
            link_free: HashMap::new(),
            link_busy: HashMap::new(),
            last_delivery: HashMap::new(),
            pending: BinaryHeap::new(),
            packets: HashMap::new(),
            accepted: vec![0; n],
            measuring: false,
            window: Window::new(n, cfg.window),
        }
    }

    /// Serialisation time of `bytes` on one link.
    pub fn serialise(&self, bytes: u32) -> Ps {
        ((u128::from(bytes) * self.ps_per_byte_q16 + (1 << 15)) >> 16) as Ps
    }

    /// The path from `src` to `dst` as (node, index of the link taken in `graph.links(node)`).
    fn path(&mut self, src: NodeId, dst: NodeId) -> Vec<(NodeId, usize)> {
        let graph = &self.graph;
        let parent = self
            .parents
            .entry(src)
            .or_insert_with(|| graph.bfs_parents(src));
        let mut hops = Vec::new();
        let mut v = dst;
        while v != src {
            let u = parent[v] as usize;
            let idx = graph
                .links(u)
                .iter()
                .position(|l| l.to == v)
                .expect("BFS parent is a neighbour");
            hops.push((u, idx));
            v = u;
        }
        hops.reverse();
        hops
    }
}

impl Fabric for IdealFabric {
    fn endpoints(&self) -> usize {
        self.endpoints
    }

    fn cycle_ps(&self) -> Ps {
        1
    }

    fn now(&self) -> Ps {
        self.now
    }

    fn max_packet_bytes(&self) -> u32 {
        self.max_packet
    }

    fn inject(&mut self, p: Packet) {
        let ser = self.serialise(p.bytes);
        let hops = self.path(p.src, p.dst);
        // Saturating: a time past the clock stays at its end (`time::END`), which the
        // caller reports as an overflow instead of a wrapped, early delivery.
        let mut head = self.now;
        let mut tail = self.now.saturating_add(ser);
        for &link in &hops {
            let start = if self.contention {
                let free = self.link_free.entry(link).or_insert(0);
                let start = head.max(*free);
                *free = start.saturating_add(ser);
                start
            } else {
                head
            };
            if self.measuring {
                let busy = self.link_busy.entry(link).or_insert(0);
                *busy = busy.saturating_add(ser);
            }
            head = start.saturating_add(self.hop_ps);
            tail = head.saturating_add(ser);
        }
        let last = self.last_delivery.entry((p.src, p.dst)).or_insert(0);
        let delivered = tail.max(*last);
        *last = delivered;
        let key = self.seq;
        self.seq += 1;
        self.packets.insert(key, (p, self.now));
        self.pending.push(Reverse((delivered, key, key)));
        self.window.accepted(p.src);
    }

    fn input_capacity(&self) -> Option<usize> {
        self.window.capacity()
    }

    fn input_queued(&self, src: usize) -> usize {
        self.window.queued(src)
    }

    fn advance(&mut self, until: Ps, out: &mut Vec<Delivery>) -> Result<(), FabricError> {
        while let Some(&Reverse((t, _, key))) = self.pending.peek() {
            if t >= until {
                break;
            }
            self.pending.pop();
            let (packet, injected) = self.packets.remove(&key).expect("pending packet");
            self.window.delivered(packet.src);
            if self.measuring {
                self.accepted[packet.src] += u64::from(packet.bytes);
            }
            out.push(Delivery {
                packet,
                injected,
                delivered: t,
            });
        }
        self.now = self.now.max(until);
        Ok(())
    }

    /// The table's contention-free row: `H·L + S`. With contention a second packet of the
    /// pair waits for the first's tail on every link, `S` later; without, it lands with it.
    fn zero_load(&mut self, src: usize, dst: usize, bytes: u32) -> Result<ZeroLoad, FabricError> {
        let ser = self.serialise(bytes);
        let hops = self.path(src, dst).len() as Ps;
        let latency = hops.saturating_mul(self.hop_ps).saturating_add(ser);
        Ok(ZeroLoad::even(
            latency,
            if self.contention { ser } else { 0 },
        ))
    }

    fn in_flight(&self) -> u64 {
        self.pending.len() as u64
    }

    fn next_event(&self) -> Option<Ps> {
        self.pending.peek().map(|Reverse((t, _, _))| *t)
    }

    fn skip_idle(&mut self, to: Ps) -> Result<(), FabricError> {
        self.now = self.now.max(to);
        Ok(())
    }

    fn set_measuring(&mut self, on: bool) {
        self.measuring = on;
    }

    fn accepted(&self) -> &[u64] {
        &self.accepted
    }

    fn channel_loads(&self) -> Vec<ChannelLoad> {
        let mut out = Vec::new();
        for v in 0..self.graph.len() {
            for i in 0..self.graph.links(v).len() {
                out.push(ChannelLoad {
                    router: v,
                    port: i,
                    busy: self.link_busy.get(&(v, i)).copied().unwrap_or(0),
                });
            }
        }
        out
    }

    fn nouns(&self) -> Nouns {
        Nouns {
            item: "packet",
            size_unit: "B",
            router: "node",
            latency_about: "packet injection → last byte delivered",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fabric(topology: &str, contention: bool) -> IdealFabric {
        IdealConfig {
            topology: topology.into(),
            hop_ns: 550.0,
            link_mbs: 160.0,
            contention,
            max_packet: 1 << 20,
            window: 0,
        }
        .build()
        .unwrap()
    }

    /// A network spelling is estimated before it is built, as a graph spelling is: a 4-ary
    /// 6-tree (6 144 routers of radix 8, 4 096 terminals) fits in 64 MB and not in 1 MB, and
    /// a 64-ary 4-tree (1 M routers of radix 128) is refused under 1 GiB naming the key.
    #[test]
    fn network_spellings_are_estimated_before_they_are_built() {
        let cfg = |topology: &str| IdealConfig {
            topology: topology.into(),
            ..IdealConfig::default()
        };
        assert!(cfg("fattree:4,6").check_fits(64 << 20).is_ok());
        let e = cfg("fattree:4,6").check_fits(1 << 20).unwrap_err();
        assert_eq!(e.key, "fabric.topology");
        let e = cfg("fattree:64,4").check_fits(1 << 30).unwrap_err();
        assert_eq!(e.key, "fabric.topology");
        assert!(e.to_string().contains("graph of"), "{e}");
    }

    fn run_all(f: &mut IdealFabric) -> Vec<Delivery> {
        let mut out = Vec::new();
        f.advance(Ps::MAX, &mut out).unwrap();
        out
    }

    /// On `crossbar:3` a packet crosses two links (in, out): 1 000 B at 160 MB/s take
    /// S = 6.25 µs per link, L = 0.55 µs per hop, so alone it lands at 2L + S = 7.35 µs;
    /// a second one to the same endpoint waits for that endpoint's link: 2L + 2S = 13.6 µs.
    #[test]
    fn a_crossbar_is_two_hops_with_the_output_link_shared() {
        let mut f = fabric("crossbar:3", true);
        assert_eq!(f.endpoints(), 3);
        for (src, tag) in [(0, 0), (1, 1)] {
            f.inject(Packet {
                src,
                dst: 2,
                bytes: 1000,
                tag,
            });
        }
        let d = run_all(&mut f);
        let at: Vec<Ps> = d.iter().map(|d| d.delivered).collect();
        assert_eq!(at, [7_350_000, 13_600_000]);
        assert_eq!(f.accepted().len(), 3);
    }

    /// Every network spelling of the VC routers builds, with its terminals as endpoints;
    /// a graph family's own error is kept when neither parser takes the spelling.
    #[test]
    fn network_spellings_build_with_their_terminals_as_endpoints() {
        for (spec, endpoints) in [
            ("fattree:2,3", 8),
            ("dragonfly:1,2,1", 6),
            ("mesh:4x4,2", 32),
            ("torus:3x3x3", 27),
            ("flatfly:4x4", 16),
            ("hypercube:3,2", 16),
            ("graph:ccc:3,3", 24),
            ("mesh:4x4", 16),
        ] {
            assert_eq!(fabric(spec, true).endpoints(), endpoints, "{spec}");
        }
        let e = IdealConfig {
            topology: "mesh:0x3".into(),
            ..IdealConfig::default()
        }
        .build()
        .err()
        .unwrap();
        assert_eq!(e.key, "fabric.topology");
        let e = IdealConfig {
            topology: "butterfly:3".into(),
            ..IdealConfig::default()
        }
        .build()
        .err()
        .unwrap();
        assert!(
            e.message.contains("path:N") && e.message.contains("fattree:K,N"),
            "{}",
            e.message
        );
    }

    /// 4 096 B at 160 MB/s take 25.6 µs; one 0.55 µs hop: 26.15 µs, exactly.
    #[test]
    fn zero_load_time_is_hops_times_latency_plus_serialisation() {
        let mut f = fabric("path:2", true);
        f.inject(Packet {
            src: 0,
            dst: 1,
            bytes: 4096,
            tag: 7,
        });
        let d = run_all(&mut f);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].delivered, 550_000 + 25_600_000);
        assert_eq!(d[0].packet.tag, 7);
        // Three hops on a path of four.
        let mut f = fabric("path:4", true);
        f.inject(Packet {
            src: 0,
            dst: 3,
            bytes: 16,
            tag: 0,
        });
        assert_eq!(run_all(&mut f)[0].delivered, 3 * 550_000 + 100_000);
    }

    /// Two packets on one link: the second waits for the first's tail (contention), or not.
    #[test]
    fn contention_serialises_a_shared_link() {
        for (contention, second) in [
            (true, 550_000 + 2 * 6_400_000),
            (false, 550_000 + 6_400_000),
        ] {
            let mut f = fabric("path:3", contention);
            f.inject(Packet {
                src: 0,
                dst: 1,
                bytes: 1024,
                tag: 0,
            });
            f.inject(Packet {
                src: 0,
                dst: 2,
                bytes: 1024,
                tag: 1,
            });
            let d = run_all(&mut f);
            let t1 = d.iter().find(|d| d.packet.tag == 1).unwrap().delivered;
            assert_eq!(t1 - 550_000, second, "contention {contention}");
        }
    }

    #[test]
    fn a_short_packet_never_overtakes_a_long_one_of_the_same_pair() {
        let mut f = fabric("path:2", false);
        f.inject(Packet {
            src: 0,
            dst: 1,
            bytes: 100_000,
            tag: 0,
        });
        f.inject(Packet {
            src: 0,
            dst: 1,
            bytes: 1,
            tag: 1,
        });
        let d = run_all(&mut f);
        assert_eq!(d.iter().map(|d| d.packet.tag).collect::<Vec<_>>(), [0, 1]);
    }

    #[test]
    fn bad_keys_are_named() {
        let bad = |f: fn(&mut IdealConfig)| {
            let mut c = IdealConfig::default();
            f(&mut c);
            c.build().err().unwrap().key
        };
        assert_eq!(bad(|c| c.hop_ns = -1.0), "fabric.hop_ns");
        assert_eq!(bad(|c| c.link_mbs = f64::NAN), "fabric.link_mbs");
        assert_eq!(bad(|c| c.topology = "nope".into()), "fabric.topology");
        assert_eq!(bad(|c| c.max_packet = 0), "fabric.max_packet");
    }

    proptest::proptest! {
        /// Conservation: every packet delivered exactly once, in order per pair, never
        /// before it was injected, in non-decreasing time.
        #[test]
        fn every_packet_is_delivered_once_in_order(
            sends in proptest::collection::vec((0usize..9, 0usize..9, 1u32..5000, 0u64..3_000_000), 1..60),
            contention in proptest::bool::ANY,
        ) {
            let mut f = fabric("mesh:3x3", contention);
            let mut sends = sends;
            sends.sort_by_key(|s| s.3);
            let mut out = Vec::new();
            for (i, &(src, dst, bytes, at)) in sends.iter().enumerate() {
                f.advance(at, &mut out).unwrap();
                f.inject(Packet { src, dst, bytes, tag: i as u64 });
            }
            f.advance(Ps::MAX, &mut out).unwrap();
            proptest::prop_assert_eq!(f.in_flight(), 0);
            let mut tags: Vec<u64> = out.iter().map(|d| d.packet.tag).collect();
            tags.sort_unstable();
            proptest::prop_assert_eq!(tags, (0..sends.len() as u64).collect::<Vec<_>>());
            proptest::prop_assert!(out.windows(2).all(|w| w[0].delivered <= w[1].delivered));
            proptest::prop_assert!(out.iter().all(|d| d.delivered >= d.injected));
            for a in &out {
                for b in &out {
                    if (a.packet.src, a.packet.dst) == (b.packet.src, b.packet.dst) && a.packet.tag < b.packet.tag {
                        proptest::prop_assert!(a.delivered <= b.delivered);
                    }
                }
            }
        }
    }
}
