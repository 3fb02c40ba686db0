//! Networks of 5-port switches and their endpoints, and the source routes through them.
//!
//! A topology is given by a short spec string (the `topology` config key):
//!
//! | spec          | switches | endpoints | wiring (ports A..E)                                 | routes              |
//! |---------------|----------|-----------|-----------------------------------------------------|---------------------|
//! | `ring:N`      | N        | N         | A → next, B → previous, E → endpoint                 | shortest direction  |
//! | `mesh:XxY`    | X·Y      | X·Y       | A → +x, B → −x, C → +y, D → −y, E → endpoint          | dimension order x,y |
//! | `torus:XxY`   | X·Y      | X·Y       | as mesh, with wrap-around links                      | dimension order, shortest way round |
//! | `star`        | 1        | 5         | ports A..E → endpoints 0..4                          | direct              |
//! | `tree:D`      | (3^D−1)/2| same      | A → parent, B/C/D → children, E → endpoint           | shortest (via the common ancestor) |
//! | `file:PATH`   | any      | any       | a graph file (see [`parse_graph`])                   | shortest (BFS), or listed routes |
//! | `fattree:K,N`, `dragonfly:P,A,H`, `hypercube:D`, `flatfly:..`, `crossbar:N`, `graph:SPEC`, `mesh:XxYxZ`, `mesh:XxY,C`, ... | icn-topo's | its | port `i` of icn-topo's router → port `A + i` (routers of radix ≤ 5 only) | shortest (BFS) |
//!
//! The last row takes the large-cluster families of `icn_topo::network` (the VC router's
//! topologies) wherever their routers fit a 5-port X-Switch: a 2-ary n-tree fat tree
//! (`fattree:2,N`: two endpoints or two children down, two parents up), the one dragonfly with
//! a = 2, h = 1 and one endpoint per router (`dragonfly:1,2,1`: 3 groups of 2), hypercubes up to
//! dimension 4. Shortest routes on a k-ary n-tree go up to a nearest common ancestor and down,
//! so they are free of deadlock like the VC router's up/down routes; on a dragonfly they are
//! minimal routes with no VC to break their cycles (the watchdog diagnoses a deadlock).
//!
//! Endpoint `n` of a grid sits at switch `n`, with coordinates `(n mod X, n div X)`. This is
//! kept inside the TH-Net crate on purpose (the shared `icn-topo` crate was being written at
//! the same time); it can be unified later.

use crate::symbol::{PORTS, Port, port_name};
use icn_engine::Invalid;
use std::collections::{HashMap, VecDeque};

/// What one side of an X-Switch link is: a switch port or a NIA (an endpoint).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XLinkEnd {
    Switch { sw: usize, port: Port },
    Nia(usize),
}

/// Grid shape, for dimension-order routing and the grid traffic patterns (it lives with the
/// patterns, in `icn_fabric::traffic`).
pub use icn_fabric::traffic::Grid;

#[derive(Clone, Debug)]
pub struct Topology {
    pub switches: usize,
    /// `links[sw * 5 + port]`: the other side of that port, if wired.
    pub links: Vec<Option<XLinkEnd>>,
    /// Endpoint `n` hangs off `(switch, port)`.
    pub nia_at: Vec<(usize, Port)>,
    pub grid: Option<Grid>,
    /// Routes are not stored per pair (a 64×64 mesh would need 0.8 GB): on a grid they are
    /// computed in dimension order when asked for; elsewhere `toward[d · switches + s]` is
    /// the port that takes a frame at switch `s` one hop closer to switch `d` (the first such
    /// port: one byte per switch pair, built by a breadth-first search from every switch
    /// that hosts an endpoint). A graph file's listed routes are kept as listed.
    toward: Vec<Port>,
    listed: HashMap<(usize, usize), Vec<Port>>,
}

/// Largest next-hop table (`switches²` bytes) a topology may build.
pub const ROUTE_TABLE_LIMIT: u128 = 512 << 20;

/// Most switches a topology off a grid may have (graph files, icn-topo networks).
const MAX_SWITCHES: usize = 4096;

/// Most route hops [`Topology::dependency_cycle`] follows (about a second of work).
pub const MAX_CHECKED_HOPS: u64 = 1 << 26;

/// A cycle in the directed graph `next` (node → successors), as its nodes in order, by an
/// iterative depth-first search (no recursion: a chain of thousands of channels).
fn find_cycle(next: &[Vec<u32>]) -> Option<Vec<u32>> {
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; next.len()];
    for root in 0..next.len() {
        if state[root] != NEW {
            continue;
        }
        // (node, index of its next successor to visit)
        let mut stack: Vec<(u32, usize)> = vec![(root as u32, 0)];
        state[root] = OPEN;
        while let Some(top) = stack.len().checked_sub(1) {
            let (v, i) = stack[top];
            match next[v as usize].get(i) {
                Some(&w) => {
                    stack[top].1 += 1;
                    match state[w as usize] {
                        NEW => {
                            state[w as usize] = OPEN;
                            stack.push((w, 0));
                        }
                        OPEN => {
                            let from = stack.iter().position(|&(u, _)| u == w).expect("open");
                            return Some(stack[from..].iter().map(|&(u, _)| u).collect());
                        }
                        _ => {}
                    }
                }
                None => {
                    state[v as usize] = DONE;
                    stack.pop();
                }
            }
        }
    }
    None
}

/// A `toward` entry for a switch that cannot reach the destination.
const NO_PORT: Port = Port::MAX;

fn bad(message: impl Into<String>) -> Invalid {
    Invalid::new("topology", message)
}

impl Topology {
    pub fn nias(&self) -> usize {
        self.nia_at.len()
    }

    /// The source route from endpoint `src` to endpoint `dst`: output ports, first switch
    /// first, the last one to the endpoint.
    pub fn route(&self, src: usize, dst: usize) -> Vec<Port> {
        if let Some(r) = self.listed.get(&(src, dst)) {
            return r.clone();
        }
        if self.grid.is_some() {
            return self.dimension_order(src, dst);
        }
        let (mut sw, _) = self.nia_at[src];
        let (dsw, dport) = self.nia_at[dst];
        let mut route = Vec::new();
        while sw != dsw {
            let p = self.toward[dsw * self.switches + sw];
            route.push(p);
            sw = self.neighbour(sw, p).expect("next hops lead to switches");
        }
        route.push(dport);
        route
    }

    /// Builds a topology from its spec (table above); `file:` reads a graph file.
    pub fn from_spec(spec: &str) -> Result<Topology, Invalid> {
        let (kind, arg) = spec.split_once(':').unwrap_or((spec, ""));
        let dims = |arg: &str| -> Result<(usize, usize), Invalid> {
            let (x, y) = arg
                .split_once('x')
                .ok_or_else(|| bad(format!("`{spec}`: expected XxY, e.g. mesh:8x8")))?;
            let p = |s: &str| {
                s.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|v| (1..=64).contains(v))
            };
            match (p(x), p(y)) {
                (Some(x), Some(y)) if x * y >= 2 => Ok((x, y)),
                _ => Err(Invalid::range(
                    "topology",
                    "XxY with 1 ≤ X, Y ≤ 64 and X·Y ≥ 2",
                    spec,
                )),
            }
        };
        let count = |arg: &str, lo: usize, hi: usize| {
            arg.parse::<usize>()
                .ok()
                .filter(|n| (lo..=hi).contains(n))
                .ok_or_else(|| {
                    Invalid::range("topology", &format!("{kind}:N with {lo} ≤ N ≤ {hi}"), spec)
                })
        };
        let mut t = match kind {
            "ring" => ring(count(arg, 2, 4096)?),
            // Three or more dimensions, or several endpoints per switch: icn-topo's.
            "mesh" | "torus" if arg.contains(',') || arg.matches('x').count() > 1 => {
                return from_network(spec);
            }
            "mesh" => grid(dims(arg)?, false),
            "torus" => grid(dims(arg)?, true),
            "star" if arg.is_empty() => star(),
            "ccc" => return ccc(arg, spec),
            "tree" => tree(count(arg, 1, 6)?),
            "fattree" | "dragonfly" | "hypercube" | "flatfly" | "crossbar" | "graph" => {
                return from_network(spec);
            }
            "file" => {
                let text = icn_engine::input::read_to_string(arg)
                    .map_err(|e| bad(format!("cannot read graph file `{arg}`: {e}")))?;
                // A bad line names the graph file, not only the experiment file's key.
                return parse_graph(&text).map_err(|e| Invalid {
                    message: format!("graph file `{arg}`: {}", e.message),
                    ..e
                });
            }
            _ => {
                return Err(bad(format!(
                    "unknown `{spec}`: use ring:N, mesh:XxY, torus:XxY, star, tree:D, ccc:H,K, \
                     fattree:2,N, dragonfly:1,2,1, hypercube:D, flatfly:.., crossbar:N (N ≤ 5), \
                     graph:SPEC or file:PATH"
                )));
            }
        };
        t.build_routes(HashMap::new())?;
        Ok(t)
    }

    fn empty(switches: usize) -> Topology {
        Topology {
            switches,
            links: vec![None; switches * PORTS],
            nia_at: Vec::new(),
            grid: None,
            toward: Vec::new(),
            listed: HashMap::new(),
        }
    }

    fn connect(&mut self, a: XLinkEnd, b: XLinkEnd) -> Result<(), Invalid> {
        for (end, other) in [(a, b), (b, a)] {
            match end {
                XLinkEnd::Switch { sw, port } => {
                    if sw >= self.switches {
                        return Err(bad(format!(
                            "link to missing switch s{sw} (switches = {})",
                            self.switches
                        )));
                    }
                    if usize::from(port) >= PORTS {
                        return Err(bad(format!("port {port} out of range A..E")));
                    }
                    let slot = &mut self.links[sw * PORTS + usize::from(port)];
                    if slot.is_some() {
                        return Err(bad(format!("port s{sw}.{} linked twice", port_name(port))));
                    }
                    *slot = Some(other);
                }
                XLinkEnd::Nia(n) => {
                    let XLinkEnd::Switch { sw, port } = other else {
                        return Err(bad(format!("endpoint n{n} must link to a switch port")));
                    };
                    if n >= self.nia_at.len() {
                        self.nia_at.resize(n + 1, (usize::MAX, 0));
                    }
                    if self.nia_at[n].0 != usize::MAX {
                        return Err(bad(format!("endpoint n{n} linked twice")));
                    }
                    self.nia_at[n] = (sw, port);
                }
            }
        }
        Ok(())
    }

    /// The switch beyond `port` of `sw`, if that port leads to a switch.
    fn neighbour(&self, sw: usize, port: Port) -> Option<usize> {
        match self.links[sw * PORTS + usize::from(port)] {
            Some(XLinkEnd::Switch { sw, .. }) => Some(sw),
            _ => None,
        }
    }

    /// Follows `route` from endpoint `src`; the endpoint it reaches, or why it fails.
    pub fn walk(&self, src: usize, route: &[Port]) -> Result<usize, String> {
        let (mut sw, _) = self.nia_at[src];
        for (i, &p) in route.iter().enumerate() {
            if usize::from(p) >= PORTS {
                return Err(format!("hop {i}: port {p} out of range A..E"));
            }
            match self.links[sw * PORTS + usize::from(p)] {
                None => return Err(format!("hop {i}: s{sw}.{} is not connected", port_name(p))),
                Some(XLinkEnd::Nia(n)) if i + 1 == route.len() => return Ok(n),
                Some(XLinkEnd::Nia(n)) => {
                    return Err(format!(
                        "hop {i}: reaches endpoint n{n} before the route ends"
                    ));
                }
                Some(XLinkEnd::Switch { sw: next, .. }) => sw = next,
            }
        }
        Err(format!("route ends inside switch s{sw}"))
    }

    /// Makes every ordered pair routable (a node to itself included): keeps the graph file's
    /// `listed` routes, checked by walking them, and off a grid builds the next-hop table,
    /// refusing a network with an endpoint another cannot reach (the first pair, by
    /// destination then source).
    fn build_routes(&mut self, listed: HashMap<(usize, usize), Vec<Port>>) -> Result<(), Invalid> {
        let n = self.nias();
        let mut pairs: Vec<_> = listed.keys().copied().collect();
        pairs.sort_unstable_by_key(|&(s, d)| (d, s));
        for (src, dst) in pairs {
            match self.walk(src, &listed[&(src, dst)]) {
                Ok(d) if d == dst => {}
                Ok(d) => return Err(bad(format!("route n{src}→n{dst} ends at n{d}"))),
                Err(e) => return Err(bad(format!("route n{src}→n{dst}: {e}"))),
            }
        }
        self.listed = listed;
        if self.grid.is_some() {
            return Ok(());
        }
        let s = self.switches;
        let bytes = (s as u128) * (s as u128);
        if bytes > ROUTE_TABLE_LIMIT {
            return Err(bad(format!(
                "{s} switches need a next-hop table of {} MB; at most {} MB",
                bytes >> 20,
                ROUTE_TABLE_LIMIT >> 20
            )));
        }
        let mut toward = vec![NO_PORT; s * s];
        let mut dist = vec![usize::MAX; s];
        let mut done = vec![false; s];
        for dst in 0..n {
            let dsw = self.nia_at[dst].0;
            if done[dsw] {
                continue;
            }
            done[dsw] = true;
            self.bfs_from(dsw, &mut dist);
            if let Some(src) = (0..n).find(|&src| dist[self.nia_at[src].0] == usize::MAX) {
                return Err(bad(format!("n{dst} is unreachable from n{src}")));
            }
            for (sw, next) in toward[dsw * s..(dsw + 1) * s].iter_mut().enumerate() {
                if dist[sw] != usize::MAX && sw != dsw {
                    *next = (0..PORTS as Port)
                        .find(|&p| {
                            self.neighbour(sw, p)
                                .is_some_and(|t| dist[t] + 1 == dist[sw])
                        })
                        .expect("BFS distance decreases along some port");
                }
            }
        }
        self.toward = toward;
        Ok(())
    }

    /// A cycle of channel dependencies among the source routes of `pairs` (endpoint pairs),
    /// as the channels' names (`s3.A`), or `None`. A frame holds the output port it crossed
    /// while it asks for the next one on its route (STOP/GO flow control with no virtual
    /// channels), so every two successive switch-to-switch ports of a route are a
    /// dependency, and a cycle of them can deadlock (Dally & Seitz). Ports into an endpoint
    /// end every route and are left out. Refuses to follow more than [`MAX_CHECKED_HOPS`]
    /// hops in all (`Err` with the count reached).
    pub fn dependency_cycle(
        &self,
        pairs: &mut dyn Iterator<Item = (usize, usize)>,
    ) -> Result<Option<Vec<String>>, u64> {
        let channels = self.switches * PORTS;
        let mut next: Vec<Vec<u32>> = vec![Vec::new(); channels];
        let mut hops = 0u64;
        for (src, dst) in pairs {
            if src == dst || src >= self.nias() || dst >= self.nias() {
                continue;
            }
            let route = self.route(src, dst);
            hops += route.len() as u64;
            if hops > MAX_CHECKED_HOPS {
                return Err(hops);
            }
            let (mut sw, _) = self.nia_at[src];
            let mut held: Option<u32> = None;
            for &p in &route[..route.len() - 1] {
                let ch = (sw * PORTS + usize::from(p)) as u32;
                if let Some(h) = held
                    && !next[h as usize].contains(&ch)
                {
                    next[h as usize].push(ch);
                }
                held = Some(ch);
                sw = self.neighbour(sw, p).expect("routes are walked when built");
            }
        }
        Ok(find_cycle(&next).map(|cycle| {
            cycle
                .into_iter()
                .map(|c| {
                    let (sw, p) = (c as usize / PORTS, (c as usize % PORTS) as Port);
                    format!("s{sw}.{}", port_name(p))
                })
                .collect()
        }))
    }

    fn bfs_from(&self, root: usize, dist: &mut [usize]) {
        dist.fill(usize::MAX);
        dist[root] = 0;
        let mut q = VecDeque::from([root]);
        while let Some(s) = q.pop_front() {
            for p in 0..PORTS as Port {
                if let Some(t) = self.neighbour(s, p)
                    && dist[t] == usize::MAX
                {
                    dist[t] = dist[s] + 1;
                    q.push_back(t);
                }
            }
        }
    }

    /// x first, then y; on a torus the shorter way round (ties go +).
    fn dimension_order(&self, src: usize, dst: usize) -> Vec<Port> {
        let g = self.grid.expect("grid topology");
        let mut route = Vec::new();
        let mut leg = |from: usize, to: usize, k: usize, plus: Port, minus: Port| {
            if from == to {
                return;
            }
            let fwd = (to + k - from) % k;
            let (port, hops) = if !g.wrap {
                if to > from {
                    (plus, to - from)
                } else {
                    (minus, from - to)
                }
            } else if fwd <= k - fwd {
                (plus, fwd)
            } else {
                (minus, k - fwd)
            };
            route.extend(std::iter::repeat_n(port, hops));
        };
        leg(src % g.x, dst % g.x, g.x, 0, 1);
        leg(src / g.x, dst / g.x, g.y, 2, 3);
        route.push(4);
        route
    }
}

fn ring(n: usize) -> Topology {
    let mut t = Topology::empty(n);
    for s in 0..n {
        t.connect(
            XLinkEnd::Switch { sw: s, port: 0 },
            XLinkEnd::Switch {
                sw: (s + 1) % n,
                port: 1,
            },
        )
        .expect("fresh ring ports");
        t.connect(XLinkEnd::Switch { sw: s, port: 4 }, XLinkEnd::Nia(s))
            .expect("fresh");
    }
    // A ring is a 1-D torus: route the shorter way round.
    t.grid = Some(Grid {
        x: n,
        y: 1,
        wrap: true,
    });
    t
}

fn grid((x, y): (usize, usize), wrap: bool) -> Topology {
    let mut t = Topology::empty(x * y);
    for s in 0..x * y {
        let (i, j) = (s % x, s / x);
        if wrap || i + 1 < x {
            let east = j * x + (i + 1) % x;
            if !(wrap && x == 1) {
                t.connect(
                    XLinkEnd::Switch { sw: s, port: 0 },
                    XLinkEnd::Switch { sw: east, port: 1 },
                )
                .expect("fresh mesh ports");
            }
        }
        if wrap || j + 1 < y {
            let north = ((j + 1) % y) * x + i;
            if !(wrap && y == 1) {
                t.connect(
                    XLinkEnd::Switch { sw: s, port: 2 },
                    XLinkEnd::Switch { sw: north, port: 3 },
                )
                .expect("fresh mesh ports");
            }
        }
        t.connect(XLinkEnd::Switch { sw: s, port: 4 }, XLinkEnd::Nia(s))
            .expect("fresh");
    }
    t.grid = Some(Grid { x, y, wrap });
    t
}

fn star() -> Topology {
    let mut t = Topology::empty(1);
    for p in 0..PORTS {
        t.connect(
            XLinkEnd::Switch {
                sw: 0,
                port: p as Port,
            },
            XLinkEnd::Nia(p),
        )
        .expect("fresh");
    }
    t
}

fn tree(depth: usize) -> Topology {
    let switches = (3usize.pow(depth as u32) - 1) / 2;
    let mut t = Topology::empty(switches);
    for s in 0..switches {
        for c in 0..3 {
            let child = 3 * s + 1 + c;
            if child < switches {
                t.connect(
                    XLinkEnd::Switch {
                        sw: s,
                        port: 1 + c as Port,
                    },
                    XLinkEnd::Switch { sw: child, port: 0 },
                )
                .expect("fresh tree ports");
            }
        }
        t.connect(XLinkEnd::Switch { sw: s, port: 4 }, XLinkEnd::Nia(s))
            .expect("fresh");
    }
    t
}

/// CCC(h,k) of X-Switches: one switch per CCC node, its F/B/L links on ports A/B/C and its
/// X-NIA on port E (CCC has degree 3, so the 5-port switch fits it with a port to spare);
/// shortest-path source routes. Built from `icn-topo`'s CCC graph through the graph-file
/// format, so both crates agree on the node numbering (`(c,p)` is node `c·h + p`).
fn ccc(arg: &str, spec: &str) -> Result<Topology, Invalid> {
    let (h, k) = arg
        .split_once(',')
        .and_then(|(h, k)| {
            Some((
                h.trim().parse::<usize>().ok()?,
                k.trim().parse::<u32>().ok()?,
            ))
        })
        .filter(|&(h, k)| (3..=12).contains(&h) && (1..=12).contains(&k) && h >= k as usize)
        .ok_or_else(|| {
            Invalid::range(
                "topology",
                "ccc:H,K with 3 ≤ H ≤ 12, 1 ≤ K ≤ H, K ≤ 12",
                spec,
            )
        })?;
    let g = icn_topo::build::ccc(h, k).map_err(|e| bad(e.to_string()))?;
    let port = |p: icn_topo::Port| match p {
        icn_topo::Port::F => Ok('A'),
        icn_topo::Port::B => Ok('B'),
        icn_topo::Port::L => Ok('C'),
        other => Err(bad(format!("unexpected CCC port {other}"))),
    };
    let mut text = format!("switches {}\n", g.len());
    for v in 0..g.len() {
        for l in g.links(v) {
            if v < l.to || (v == l.to && l.port < l.arrives_on) {
                text.push_str(&format!(
                    "link s{v}.{} s{}.{}\n",
                    port(l.port)?,
                    l.to,
                    port(l.arrives_on)?
                ));
            }
        }
        text.push_str(&format!("link s{v}.E n{v}\n"));
    }
    parse_graph(&text)
}

/// A network of `icn_topo::network` (see the table at the top) as X-Switches: port `i` of a
/// router is port `A + i` of its switch, terminal `t` is endpoint `n{t}`.
fn from_network(spec: &str) -> Result<Topology, Invalid> {
    let net = icn_topo::network::spec::parse_network_spec(spec)
        .map_err(|e| Invalid::new("topology", e.to_string()))?;
    if usize::from(net.radix()) > PORTS {
        return Err(Invalid::new(
            "topology",
            format!(
                "`{spec}` needs routers of {} ports; an X-Switch has {PORTS} (A..E): \
                 use fattree:2,N, dragonfly:1,2,1, hypercube:D with D ≤ 4, crossbar:N with N ≤ 5, \
                 or the vc-router model",
                net.radix()
            ),
        ));
    }
    let switches = net.routers() as usize;
    if switches > MAX_SWITCHES {
        return Err(Invalid::range(
            "topology",
            &format!("at most {MAX_SWITCHES} switches off a grid"),
            spec,
        ));
    }
    let mut t = Topology::empty(switches);
    for r in 0..net.routers() {
        for (p, end) in net.ports(r).iter().enumerate() {
            let here = XLinkEnd::Switch {
                sw: r as usize,
                port: p as Port,
            };
            match *end {
                icn_topo::network::FarEnd::Unused => {}
                icn_topo::network::FarEnd::Terminal(n) => {
                    t.connect(here, XLinkEnd::Nia(n as usize))?
                }
                // Each link once, from its lower end.
                icn_topo::network::FarEnd::Router { router, port }
                    if (router, port) > (r, p as u16) =>
                {
                    let there = XLinkEnd::Switch {
                        sw: router as usize,
                        port: port as Port,
                    };
                    t.connect(here, there)?;
                }
                icn_topo::network::FarEnd::Router { .. } => {}
            }
        }
    }
    t.build_routes(HashMap::new())?;
    Ok(t)
}

/// Parses a graph file:
///
/// ```text
/// # comments start with '#'
/// switches 3              # first: how many switches (s0 .. s2)
/// link s0.A s1.B          # switch port to switch port
/// link s0.E n0            # switch port to endpoint n0 (endpoints must be n0 .. n(k-1))
/// route n0 n1 A E         # optional: a fixed route, checked by walking it
/// ```
pub fn parse_graph(text: &str) -> Result<Topology, Invalid> {
    let mut t: Option<Topology> = None;
    let mut listed = HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |m: String| bad(format!("graph line {}: {m}", i + 1));
        let words: Vec<&str> = line.split_whitespace().collect();
        match (words[0], &mut t) {
            ("switches", None) => {
                let n = words
                    .get(1)
                    .and_then(|w| w.parse::<usize>().ok())
                    .filter(|n| (1..=MAX_SWITCHES).contains(n))
                    .ok_or_else(|| at(format!("`switches N` needs 1 ≤ N ≤ {MAX_SWITCHES}")))?;
                t = Some(Topology::empty(n));
            }
            ("switches", Some(_)) => return Err(at("`switches` given twice".into())),
            (_, None) => return Err(at("the first line must be `switches N`".into())),
            ("link", Some(t)) if words.len() == 3 => {
                let a = parse_end(words[1]).map_err(at)?;
                let b = parse_end(words[2]).map_err(at)?;
                t.connect(a, b).map_err(|e| at(e.message))?;
            }
            ("route", Some(_)) if words.len() >= 4 => {
                let nia = |w: &str| {
                    parse_end(w).ok().and_then(|e| {
                        if let XLinkEnd::Nia(n) = e {
                            Some(n)
                        } else {
                            None
                        }
                    })
                };
                let (Some(s), Some(d)) = (nia(words[1]), nia(words[2])) else {
                    return Err(at("`route nS nD PORTS..` needs two endpoints".into()));
                };
                let ports = words[3..]
                    .iter()
                    .map(|w| parse_port(w))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(at)?;
                listed.insert((s, d), ports);
            }
            _ => {
                return Err(at(format!(
                    "cannot read `{line}`: expected `link A B` or `route nS nD PORTS..`"
                )));
            }
        }
    }
    let mut t = t.ok_or_else(|| bad("graph file is empty: expected `switches N`"))?;
    if t.nia_at.is_empty() {
        return Err(bad("graph has no endpoints (link sX.P nK)"));
    }
    if let Some(n) = t.nia_at.iter().position(|&(s, _)| s == usize::MAX) {
        return Err(bad(format!(
            "endpoint n{n} is missing (endpoints must be n0 .. n{})",
            t.nia_at.len() - 1
        )));
    }
    if let Some(&(s, d)) = listed
        .keys()
        .find(|&&(s, d)| s >= t.nias() || d >= t.nias())
    {
        return Err(bad(format!("route n{s} n{d} names a missing endpoint")));
    }
    t.build_routes(listed)?;
    Ok(t)
}

fn parse_port(w: &str) -> Result<Port, String> {
    match w.as_bytes() {
        [c @ b'A'..=b'E'] => Ok(c - b'A'),
        _ => Err(format!("port `{w}` out of range: ports are A, B, C, D, E")),
    }
}

fn parse_end(w: &str) -> Result<XLinkEnd, String> {
    if let Some(n) = w.strip_prefix('n') {
        return n
            .parse()
            .ok()
            .filter(|&n| n < 65_536)
            .map(XLinkEnd::Nia)
            .ok_or_else(|| format!("bad endpoint `{w}` (n0 .. n65535)"));
    }
    let (sw, port) = w
        .strip_prefix('s')
        .and_then(|r| r.split_once('.'))
        .ok_or_else(|| format!("bad port `{w}`: expected sK.P (e.g. s0.A) or nK"))?;
    let sw = sw
        .parse()
        .map_err(|_| format!("bad switch number in `{w}`"))?;
    Ok(XLinkEnd::Switch {
        sw,
        port: parse_port(port)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesh_routes_are_dimension_ordered() {
        let t = Topology::from_spec("mesh:4x4").unwrap();
        assert_eq!(t.switches, 16);
        // (0,0) → (2,3): +x +x, +y +y +y, eject.
        assert_eq!(t.route(0, 14), &[0, 0, 2, 2, 2, 4]);
        // (3,3) → (0,1): −x ×3, −y ×2.
        assert_eq!(t.route(15, 4), &[1, 1, 1, 3, 3, 4]);
        assert_eq!(t.route(5, 5), &[4]);
        assert!(t.links[3 * PORTS].is_none(), "mesh edge port unconnected");
    }

    fn all_pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
        (0..n).flat_map(move |s| (0..n).map(move |d| (s, d)))
    }

    /// Shortest routes round a ring of 4 (ties clockwise): 0 → 2 holds s0.A and asks for
    /// s1.A, 1 → 3 holds s1.A for s2.A, and so on round the ring — the cycle the watchdog
    /// found after a million cycles. Only neighbours talking (one hop each): no dependency.
    /// A mesh's dimension-order routes never close a cycle.
    #[test]
    fn ring_routes_close_a_cycle_and_mesh_routes_do_not() {
        let ring = Topology::from_spec("ring:4").unwrap();
        let cycle = ring.dependency_cycle(&mut all_pairs(4)).unwrap().unwrap();
        assert_eq!(cycle, ["s0.A", "s1.A", "s2.A", "s3.A"]);
        let mut neighbours = (0..4).map(|s| (s, (s + 1) % 4));
        assert_eq!(ring.dependency_cycle(&mut neighbours), Ok(None));
        let mesh = Topology::from_spec("mesh:4x4").unwrap();
        assert_eq!(mesh.dependency_cycle(&mut all_pairs(16)), Ok(None));
        let tree = Topology::from_spec("fattree:2,3").unwrap();
        assert_eq!(tree.dependency_cycle(&mut all_pairs(8)), Ok(None));
    }

    /// The VC routers' spellings that fit 5-port switches build; larger routers are refused
    /// naming the ports they need.
    #[test]
    fn network_spellings_of_the_vc_routers_build_where_they_fit() {
        for (spec, endpoints) in [
            ("crossbar:5", 5),
            ("graph:ccc:3,3", 24),
            ("mesh:3x3,1", 9),
            ("hypercube:3", 8),
        ] {
            let t = Topology::from_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(t.nias(), endpoints, "{spec}");
            for (s, d) in all_pairs(endpoints) {
                assert_eq!(t.walk(s, &t.route(s, d)), Ok(d), "{spec} {s}→{d}");
            }
        }
        for spec in ["crossbar:6", "mesh:4x4,2", "torus:3x3x3"] {
            let e = Topology::from_spec(spec).unwrap_err();
            assert!(e.message.contains("an X-Switch has 5"), "{spec}: {e}");
        }
    }

    #[test]
    fn torus_routes_take_the_short_way_round() {
        let t = Topology::from_spec("torus:4x4").unwrap();
        assert_eq!(t.route(0, 3), &[1, 4], "x: 0 → 3 is one hop west");
        assert_eq!(t.route(0, 2), &[0, 0, 4], "tie goes east");
        assert_eq!(t.route(0, 12), &[3, 4]);
    }

    #[test]
    fn ring_star_tree_route_shortest() {
        let r = Topology::from_spec("ring:6").unwrap();
        assert_eq!(r.route(0, 5), &[1, 4]);
        assert_eq!(r.route(1, 3), &[0, 0, 4]);
        let s = Topology::from_spec("star").unwrap();
        assert_eq!(s.nias(), 5);
        assert_eq!(s.route(0, 3), &[3]);
        let t = Topology::from_spec("tree:2").unwrap();
        assert_eq!(t.switches, 4);
        // child 1 → child 3 via the root: up (A), down to child 3 (port D), eject.
        assert_eq!(t.route(1, 3), &[0, 3, 4]);
    }

    #[test]
    fn graph_file_with_listed_route() {
        let g = "switches 2\nlink s0.A s1.B\nlink s0.E n0\nlink s1.E n1\nroute n0 n1 A E\n";
        let t = parse_graph(g).unwrap();
        assert_eq!(t.route(0, 1), &[0, 4]);
        assert_eq!(t.route(1, 0), &[1, 4]);
    }

    #[test]
    fn bad_graphs_name_the_problem() {
        let cases = [
            ("switches 2\nlink s0.F s1.B\n", "out of range"),
            (
                "switches 2\nlink s0.A s7.B\nlink s0.E n0\n",
                "missing switch s7",
            ),
            (
                "switches 2\nlink s0.A s1.B\nlink s0.E n0\nlink s1.E n1\nroute n0 n1 C E\n",
                "not connected",
            ),
            (
                "switches 2\nlink s0.A s1.B\nlink s0.E n0\nlink s1.E n2\n",
                "n1 is missing",
            ),
            ("switches 2\nlink s0.E n0\nlink s1.E n1\n", "unreachable"),
            ("link s0.E n0\n", "first line"),
            ("switches 1\nlink s0.E n0\nlink s0.E n1\n", "linked twice"),
        ];
        for (g, want) in cases {
            let e = parse_graph(g).unwrap_err();
            assert_eq!(e.key, "topology");
            assert!(e.message.contains(want), "{g:?}: {e}");
        }
        assert!(Topology::from_spec("mesh:0x4").is_err());
        assert!(
            Topology::from_spec("butterfly:3")
                .unwrap_err()
                .message
                .contains("unknown")
        );
    }

    /// CCC(3,3): 24 switches of degree 3 plus an NIA each; every route reaches its
    /// destination and none is longer than the CCC's diameter (6 for CCC(3,3)).
    #[test]
    fn ccc_of_x_switches_routes_every_pair() {
        let t = Topology::from_spec("ccc:3,3").unwrap();
        assert_eq!((t.switches, t.nias()), (24, 24));
        let g = icn_topo::build::ccc(3, 3).unwrap();
        let diameter = icn_topo::paths::diameter(&g) as usize;
        for a in 0..24 {
            for b in 0..24 {
                assert_eq!(t.walk(a, &t.route(a, b)).unwrap(), b);
                assert!(t.route(a, b).len() <= diameter + 1, "{a}->{b}");
            }
        }
        assert_eq!(Topology::from_spec("ccc:2,3").unwrap_err().key, "topology");
    }

    /// icn-topo's fat tree, dragonfly and hypercube as X-Switches: every switch and endpoint
    /// icn-topo has, every pair routed to its destination along a shortest path (a route is
    /// one output port per switch it crosses: on a 2-ary 3-tree 1 between the two endpoints of
    /// a leaf, 5 through a root; on the dragonfly local, global, local and out: 4).
    #[test]
    fn large_cluster_families_fit_five_ports() {
        for (spec, switches, nias, diameter) in [
            ("fattree:2,3", 12, 8, 5),
            ("dragonfly:1,2,1", 6, 6, 4),
            ("hypercube:4", 16, 16, 5),
        ] {
            let t = Topology::from_spec(spec).unwrap();
            assert_eq!((t.switches, t.nias()), (switches, nias), "{spec}");
            let mut longest = 0;
            for a in 0..nias {
                for b in 0..nias {
                    let r = t.route(a, b);
                    assert_eq!(t.walk(a, &r).unwrap(), b, "{spec}: {a}->{b}");
                    longest = longest.max(r.len());
                }
            }
            assert_eq!(longest, diameter, "{spec}: ports on the longest route");
        }
        // Endpoints 0 and 1 share a leaf of the fat tree: into the switch, out of it.
        assert_eq!(
            Topology::from_spec("fattree:2,3")
                .unwrap()
                .route(0, 1)
                .len(),
            1
        );
    }

    #[test]
    fn families_too_wide_for_an_x_switch_are_refused_naming_the_radix() {
        for (spec, radix) in [("fattree:4,2", 8), ("dragonfly:2", 7), ("hypercube:5", 6)] {
            let e = Topology::from_spec(spec).unwrap_err();
            assert_eq!(e.key, "topology");
            assert!(e.message.contains(&format!("{radix} ports")), "{spec}: {e}");
        }
        let e = Topology::from_spec("fattree:2,13").unwrap_err();
        assert!(e.to_string().contains("4096 switches"), "{e}");
    }

    /// Routes are not stored per pair any more: the grids that needed 3.4–7.7 GB of routes
    /// (ring:4096, mesh:64x64) build with none, their routes computed when asked for; off a
    /// grid the next-hop table is `switches²` bytes (graphs have at most 4 096 switches, so at
    /// most 16 MB; CCC(12,12)'s 49 152 switches are refused before anything is built).
    #[test]
    fn routes_take_no_memory_per_pair() {
        for (spec, a, b) in [
            ("ring:4096", 5, 4000),
            ("mesh:64x64", 4095, 0),
            ("torus:64x64", 0, 2080),
        ] {
            let t = Topology::from_spec(spec).unwrap();
            assert!(t.toward.is_empty(), "{spec}: grids need no table");
            let r = t.route(a, b);
            assert_eq!(t.walk(a, &r).unwrap(), b, "{spec}");
        }
        // ring:4096: the short way round (north of 4000 is 96 hops back, not 3995 forward).
        assert_eq!(
            Topology::from_spec("ring:4096")
                .unwrap()
                .route(5, 4000)
                .len(),
            102
        );
        let e = Topology::from_spec("ccc:12,12").unwrap_err();
        assert_eq!(e.key, "topology");
        let t = Topology::from_spec("ccc:6,5").unwrap();
        assert_eq!(t.toward.len(), t.switches * t.switches);
    }
}
