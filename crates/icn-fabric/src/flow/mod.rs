//! The flow fabric: whole messages as flows sharing link bandwidth max-min fairly, with a
//! per-route latency — SimGrid's CM02 network model (Casanova & Marchal 2002), the fast,
//! comparable baseline for large replays and the yardstick for what packet-level detail
//! changes.
//!
//! Every endpoint has a private link pair to its switch, an *up* link and a *down* link
//! (SimGrid's `SPLITDUPLEX` cluster links); `crossbar:N` joins N endpoints by a non-blocking
//! crossbar (SimGrid's `cluster_crossbar.xml`), and any `icn-topo` graph spec joins them by
//! its switches, endpoint `i` on node `i`, a message following a BFS shortest path as on the
//! ideal fabric. Every link has `link_mbs` and `link_lat_ns`. A message `src → dst` of `S`
//! bytes injected at `t`:
//!
//! 1. waits the route's latency `L` (the sum of its links' latencies) using no bandwidth;
//! 2. then moves its bytes at its max-min fair rate ([`maxmin`]): penalty `L`, weight 1 on
//!    each route link and 0.05 on each link of the reverse route (`crosstraffic`, the
//!    acknowledgements), bound `tcp_gamma / 2L` (the TCP window). Rates are recomputed
//!    whenever a flow starts moving or finishes;
//! 3. is delivered when its last byte is across: alone on its links, at `t + L + S / B`.
//!
//! With SimGrid's `--cfg=network/model:CM02 --cfg=smpi/bw-factor:1 --cfg=smpi/lat-factor:1`
//! these are SimGrid's rules (`network_cm02.cpp`, SimGrid 3.32). One packet is one flow:
//! [`Fabric::max_packet_bytes`] is 2^32 − 1, so a caller hands over whole messages.

pub mod maxmin;

use crate::{ChannelLoad, Delivery, Fabric, FabricError, Nouns, Packet, Ps, ZeroLoad};
use icn_engine::Invalid;
use icn_topo::Graph;
use maxmin::{FlowUse, Scratch};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// `[fabric]` keys of `kind = "flow"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlowConfig {
    /// `crossbar:N`, or an `icn-topo` graph spec (`ring:N`, `mesh:WxH`, `torus:WxH`,
    /// `hypercube:D`, `ccc:H,K`, `file:PATH`, ...).
    pub topology: String,
    /// Bandwidth of every link, MB/s (10^6 B/s).
    pub link_mbs: f64,
    /// Latency of every link, ns.
    pub link_lat_ns: f64,
    /// TCP's largest window, bytes: a flow's rate is at most `tcp_gamma / (2 × latency)`
    /// (SimGrid's `network/TCP-gamma`, default 4 194 304); 0 = no bound.
    pub tcp_gamma: f64,
    /// The reverse route carries 5 % of a flow's rate (SimGrid's `network/crosstraffic`).
    pub crosstraffic: bool,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig {
            topology: "crossbar:2".into(),
            link_mbs: 125.0,
            link_lat_ns: 50_000.0,
            tcp_gamma: 4_194_304.0,
            crosstraffic: true,
        }
    }
}

/// Most endpoints of a crossbar.
pub const MAX_CROSSBAR: usize = 1 << 20;

impl FlowConfig {
    pub fn validate(&self) -> Result<(), Invalid> {
        Invalid::check(
            self.link_mbs.is_finite() && (1e-6..=1e9).contains(&self.link_mbs),
            "fabric.link_mbs",
            "10^-6 ..= 10^9 MB/s",
            self.link_mbs,
        )?;
        Invalid::check(
            self.link_lat_ns.is_finite() && (0.0..=1e12).contains(&self.link_lat_ns),
            "fabric.link_lat_ns",
            "0 ..= 10^12 ns",
            self.link_lat_ns,
        )?;
        Invalid::check(
            self.tcp_gamma.is_finite() && (0.0..=1e18).contains(&self.tcp_gamma),
            "fabric.tcp_gamma",
            "0 (no bound) ..= 10^18 bytes",
            self.tcp_gamma,
        )
    }

    /// Builds the fabric (the graph is parsed here, once).
    pub fn build(&self) -> Result<FlowFabric, Invalid> {
        self.validate()?;
        let graph = match self.topology.strip_prefix("crossbar:") {
            Some(n) => {
                let n = n
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=MAX_CROSSBAR).contains(n));
                Topo::Crossbar(n.ok_or_else(|| {
                    Invalid::range(
                        "fabric.topology",
                        &format!("crossbar:N with N in 1 ..= {MAX_CROSSBAR}"),
                        &self.topology,
                    )
                })?)
            }
            None => {
                // The graph's build estimated as the ideal fabric's, before it is built.
                crate::ideal::IdealConfig {
                    topology: self.topology.clone(),
                    ..Default::default()
                }
                .check_fits(icn_engine::memory::available_memory())?;
                Topo::Graph(
                    icn_topo::parse_graph_spec(&self.topology)
                        .map_err(|e| Invalid::new("fabric.topology", e.to_string()))?,
                )
            }
        };
        Ok(FlowFabric::new(graph, self))
    }
}

enum Topo {
    Crossbar(usize),
    Graph(Graph),
}

/// A flow on its way.
#[derive(Clone, Debug)]
struct Flow {
    packet: Packet,
    injected: Ps,
    /// Bytes still to move.
    remaining: f64,
    rate: f64,
    /// When it will be delivered at the current rate.
    done_at: Ps,
    uses: FlowUse,
}

/// See the module documentation.
pub struct FlowFabric {
    topo: Topo,
    /// Endpoint links: up link of `i` is `2i`, down link `2i + 1`; graph links follow.
    capacity: Vec<f64>,
    /// Graph link id of `(node, index in graph.links(node))`.
    graph_link: HashMap<(usize, usize), usize>,
    link_lat_ps: Ps,
    tcp_gamma: f64,
    crosstraffic: bool,
    now: Ps,
    /// Time up to which `remaining` is accounted.
    settled: Ps,
    seq: u64,
    /// Flows in their latency phase, by the end of it.
    waiting: BinaryHeap<Reverse<(Ps, u64)>>,
    flows: HashMap<u64, Flow>,
    /// Flows moving bytes, in the order they started (ids).
    active: Vec<u64>,
    parents: HashMap<usize, Vec<u32>>,
    scratch: Scratch,
    measuring: bool,
    accepted: Vec<u64>,
    /// Per link: picoseconds × utilisation while measuring.
    busy: Vec<f64>,
}

impl FlowFabric {
    fn new(topo: Topo, cfg: &FlowConfig) -> FlowFabric {
        let cap = cfg.link_mbs * 1e6;
        let (endpoints, mut graph_link) = (
            match &topo {
                Topo::Crossbar(n) => *n,
                Topo::Graph(g) => g.len(),
            },
            HashMap::new(),
        );
        let mut links = 2 * endpoints;
        if let Topo::Graph(g) = &topo {
            for v in 0..g.len() {
                for i in 0..g.links(v).len() {
                    graph_link.insert((v, i), links);
                    links += 1;
                }
            }
        }
        FlowFabric {
            topo,
            capacity: vec![cap; links],
            graph_link,
            link_lat_ps: (cfg.link_lat_ns * 1e3).round() as Ps,
            tcp_gamma: cfg.tcp_gamma,
            crosstraffic: cfg.crosstraffic,
            now: 0,
            settled: 0,
            seq: 0,
            waiting: BinaryHeap::new(),
            flows: HashMap::new(),
            active: Vec::new(),
            parents: HashMap::new(),
            scratch: Scratch::default(),
            measuring: false,
            accepted: vec![0; endpoints],
            busy: vec![0.0; links],
        }
    }

    /// Links from `src` to `dst`: up link, graph path, down link.
    fn route(&mut self, src: usize, dst: usize) -> Vec<usize> {
        let mut r = vec![2 * src];
        if let Topo::Graph(g) = &self.topo {
            let parent = self
                .parents
                .entry(src)
                .or_insert_with(|| g.bfs_parents(src));
            let mut hops = Vec::new();
            let mut v = dst;
            while v != src && parent[v] != u32::MAX {
                let u = parent[v] as usize;
                let idx = g
                    .links(u)
                    .iter()
                    .position(|l| l.to == v)
                    .expect("BFS parent");
                hops.push(self.graph_link[&(u, idx)]);
                v = u;
            }
            hops.reverse();
            r.extend(hops);
        }
        r.push(2 * dst + 1);
        r
    }

    /// The route latency of a flow `src → dst` and how it uses the links (step 2).
    fn flow_use(&mut self, src: usize, dst: usize) -> (Ps, FlowUse) {
        let route = self.route(src, dst);
        let latency = self.link_lat_ps * route.len() as Ps;
        let mut links: Vec<(usize, f64)> = route.iter().map(|&c| (c, 1.0)).collect();
        if self.crosstraffic {
            let back = self.route(dst, src);
            links.extend(back.iter().map(|&c| (c, 0.05)));
        }
        let lat_s = latency as f64 * 1e-12;
        let uses = FlowUse {
            links,
            penalty: if lat_s > 0.0 { lat_s } else { 1.0 },
            bound: if self.tcp_gamma > 0.0 && lat_s > 0.0 {
                self.tcp_gamma / (2.0 * lat_s)
            } else {
                f64::INFINITY
            },
        };
        (latency, uses)
    }

    /// Accounts every moving flow's bytes up to `t`.
    fn settle(&mut self, t: Ps) {
        if t <= self.settled {
            return;
        }
        let dt = (t - self.settled) as f64 * 1e-12;
        for id in &self.active {
            let f = self.flows.get_mut(id).expect("active flow");
            f.remaining = (f.remaining - f.rate * dt).max(0.0);
            if self.measuring {
                for &(c, w) in &f.uses.links {
                    self.busy[c] += w * f.rate / self.capacity[c] * dt * 1e12;
                }
            }
        }
        self.settled = t;
    }

    /// New rates for every moving flow, and their delivery times, from `t` on.
    fn share(&mut self, t: Ps) {
        let uses: Vec<FlowUse> = self
            .active
            .iter()
            .map(|id| self.flows[id].uses.clone())
            .collect();
        let rates = maxmin::solve(&uses, &self.capacity, &mut self.scratch);
        for (id, rate) in self.active.iter().zip(rates) {
            let f = self.flows.get_mut(id).expect("active flow");
            f.rate = rate;
            let secs = if f.remaining <= 0.0 {
                0.0
            } else {
                f.remaining / rate
            };
            f.done_at = t.saturating_add((secs * 1e12).ceil().min(u64::MAX as f64) as Ps);
        }
    }

    fn next_time(&self) -> Option<Ps> {
        let w = self.waiting.peek().map(|Reverse((t, _))| *t);
        let a = self.active.iter().map(|id| self.flows[id].done_at).min();
        match (w, a) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }
}

impl Fabric for FlowFabric {
    fn endpoints(&self) -> usize {
        self.accepted.len()
    }

    fn cycle_ps(&self) -> Ps {
        1
    }

    fn now(&self) -> Ps {
        self.now
    }

    fn max_packet_bytes(&self) -> u32 {
        u32::MAX
    }

    fn inject(&mut self, p: Packet) {
        let (latency, uses) = self.flow_use(p.src, p.dst);
        let id = self.seq;
        self.seq += 1;
        self.flows.insert(
            id,
            Flow {
                packet: p,
                injected: self.now,
                remaining: f64::from(p.bytes),
                rate: 0.0,
                done_at: Ps::MAX,
                uses,
            },
        );
        self.waiting
            .push(Reverse((self.now.saturating_add(latency), id)));
    }

    fn advance(&mut self, until: Ps, out: &mut Vec<Delivery>) -> Result<(), FabricError> {
        while let Some(t) = self.next_time().filter(|&t| t < until) {
            self.settle(t);
            let mut done: Vec<u64> = self
                .active
                .iter()
                .copied()
                .filter(|id| self.flows[id].done_at <= t)
                .collect();
            self.active.retain(|id| !done.contains(id));
            let mut started = false;
            while let Some(&Reverse((w, id))) = self.waiting.peek() {
                if w > t {
                    break;
                }
                self.waiting.pop();
                if self.flows[&id].remaining <= 0.0 {
                    done.push(id);
                } else {
                    self.active.push(id);
                    started = true;
                }
            }
            done.sort_unstable();
            for id in &done {
                let f = self.flows.remove(id).expect("flow");
                if self.measuring {
                    self.accepted[f.packet.src] += u64::from(f.packet.bytes);
                }
                out.push(Delivery {
                    packet: f.packet,
                    injected: f.injected,
                    delivered: t,
                });
            }
            if started || !done.is_empty() {
                self.share(t);
            }
            self.now = self.now.max(t);
        }
        self.settle(until.max(self.settled));
        self.now = self.now.max(until);
        Ok(())
    }

    /// Computed: the route latency, then the bytes at the rate the solver gives the flow
    /// alone (the link bandwidth, or the TCP window's bound), rounded up as `share` does.
    /// The spacing is what a second such flow adds: both move at the rate the solver gives
    /// two (half the link's, unless each is held to its window).
    fn zero_load(&mut self, src: usize, dst: usize, bytes: u32) -> Result<ZeroLoad, FabricError> {
        let (latency, uses) = self.flow_use(src, dst);
        let moving = |rate: f64| {
            let secs = if bytes == 0 {
                0.0
            } else {
                f64::from(bytes) / rate
            };
            (secs * 1e12).ceil().min(u64::MAX as f64) as Ps
        };
        // The solver on the route's own links only (renumbered): the same sums and minima
        // as on every link, at the cost of the route instead of the network.
        let mut ids: Vec<usize> = Vec::new();
        let links = (uses.links.iter())
            .map(|&(c, w)| {
                let k = ids.iter().position(|&x| x == c).unwrap_or_else(|| {
                    ids.push(c);
                    ids.len() - 1
                });
                (k, w)
            })
            .collect();
        let uses = FlowUse { links, ..uses };
        let capacity: Vec<f64> = ids.iter().map(|&c| self.capacity[c]).collect();
        let mut scratch = Scratch::default();
        let one = maxmin::solve(std::slice::from_ref(&uses), &capacity, &mut scratch)[0];
        let two = maxmin::solve(&[uses.clone(), uses], &capacity, &mut scratch)[0];
        let alone = moving(one);
        Ok(ZeroLoad::even(
            latency.saturating_add(alone),
            moving(two).saturating_sub(alone),
        ))
    }

    fn in_flight(&self) -> u64 {
        self.flows.len() as u64
    }

    fn next_event(&self) -> Option<Ps> {
        self.next_time()
    }

    fn set_measuring(&mut self, on: bool) {
        self.measuring = on;
    }

    fn accepted(&self) -> &[u64] {
        &self.accepted
    }

    /// Graph links only (the endpoint links are not router-to-router channels).
    fn channel_loads(&self) -> Vec<ChannelLoad> {
        let mut v: Vec<ChannelLoad> = self
            .graph_link
            .iter()
            .map(|(&(router, port), &c)| ChannelLoad {
                router,
                port,
                busy: self.busy[c].round() as u64,
            })
            .collect();
        v.sort_by_key(|l| (l.router, l.port));
        v
    }

    fn nouns(&self) -> Nouns {
        Nouns {
            item: "message",
            size_unit: "B",
            router: "switch",
            latency_about: "injection → last byte delivered (latency + bytes at the max-min fair rate)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Ps = 1_000_000;

    fn crossbar(n: usize, crosstraffic: bool) -> FlowFabric {
        FlowConfig {
            topology: format!("crossbar:{n}"),
            crosstraffic,
            ..FlowConfig::default()
        }
        .build()
        .unwrap()
    }

    fn run(f: &mut FlowFabric) -> Vec<Delivery> {
        let mut out = Vec::new();
        while let Some(t) = f.next_event() {
            f.advance(t + 1, &mut out).unwrap();
        }
        out
    }

    fn pkt(src: usize, dst: usize, bytes: u32, tag: u64) -> Packet {
        Packet {
            src,
            dst,
            bytes,
            tag,
        }
    }

    /// One message alone: 2 × 50 µs + 125 000 B / 125 MB/s = 100 µs + 1 ms.
    #[test]
    fn a_lone_message_takes_latency_plus_size_over_bandwidth() {
        let mut f = crossbar(2, true);
        f.inject(pkt(0, 1, 125_000, 7));
        let d = run(&mut f);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].delivered, 1100 * US);
        assert_eq!(f.in_flight(), 0);
    }

    /// Two messages into one host share its down link: each at 62.5 MB/s, so 125 000 B
    /// each are delivered together at 100 µs + 2 ms.
    #[test]
    fn two_senders_to_one_receiver_share_its_link() {
        let mut f = crossbar(3, false);
        f.inject(pkt(0, 2, 125_000, 0));
        f.inject(pkt(1, 2, 125_000, 1));
        let d = run(&mut f);
        assert_eq!(
            d.iter().map(|d| d.delivered).collect::<Vec<_>>(),
            vec![2100 * US; 2]
        );
    }

    /// A short and a long flow on one link: the short one (62 500 B) finishes at
    /// 100 µs + 1 ms at half the rate; the long one (250 000 B) then has 187 500 B left at
    /// full rate: 1.5 ms more, delivered at 2.6 ms.
    #[test]
    fn a_finished_flow_frees_its_share() {
        let mut f = crossbar(3, false);
        f.inject(pkt(0, 2, 62_500, 0));
        f.inject(pkt(1, 2, 250_000, 1));
        let d = run(&mut f);
        assert_eq!(d[0].delivered, 1100 * US);
        assert_eq!(d[1].delivered, 2600 * US);
    }

    /// Crossing flows A→B and B→A with cross-traffic: each at 125/1.05 MB/s.
    #[test]
    fn crossing_flows_pay_the_crosstraffic() {
        let mut f = crossbar(2, true);
        f.inject(pkt(0, 1, 1_050_000, 0));
        f.inject(pkt(1, 0, 1_050_000, 1));
        let d = run(&mut f);
        // 1 050 000 B at 125/1.05 MB/s = 8.82 ms, plus 100 µs.
        for x in d {
            assert!(x.delivered.abs_diff(8920 * US) <= 1, "{}", x.delivered);
        }
    }

    /// Every injected message is delivered once, in non-decreasing time (rules 1 and 2).
    #[test]
    fn conservation_on_a_graph() {
        let mut f = FlowConfig {
            topology: "ring:6".into(),
            ..FlowConfig::default()
        }
        .build()
        .unwrap();
        let mut out = Vec::new();
        let mut tag = 0;
        for round in 0..4u64 {
            for s in 0..6 {
                f.inject(pkt(
                    s,
                    (s + 1 + round as usize) % 6,
                    10_000 * (s as u32 + 1),
                    tag,
                ));
                tag += 1;
            }
            f.advance(f.now() + 300 * US, &mut out).unwrap();
        }
        out.extend(run(&mut f));
        let mut tags: Vec<u64> = out.iter().map(|d| d.packet.tag).collect();
        tags.sort_unstable();
        assert_eq!(tags, (0..24).collect::<Vec<_>>());
        assert!(out.windows(2).all(|w| w[0].delivered <= w[1].delivered));
        assert!(out.iter().all(|d| d.delivered >= d.injected));
    }
}
