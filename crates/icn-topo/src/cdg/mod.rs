//! Deadlock check before a run: the channel-dependency graph (CDG) of a routing function and
//! its VC classes must be acyclic (Dally & Seitz 1987, "Deadlock-free message routing in
//! multiprocessor interconnection networks").
//!
//! The CDG's vertices are the pairs (channel, VC class); an edge `c₁ → c₂` means a packet holding
//! `c₁` may request `c₂` next. A routing function whose CDG has no cycle cannot deadlock (for
//! wormhole or virtual cut-through switching with the classes as separate buffers); one with a
//! cycle can, and the cycle says where.
//!
//! Acyclicity is Dally & Seitz's condition for deterministic and oblivious routing, and a
//! sufficient one for adaptive routing. Adaptive routings that stay deadlock-free through an
//! acyclic escape sub-network while their full CDG has cycles (Duato 1993) would be rejected
//! here; checking them needs Duato's extended CDG of the escape channels, which no routing of
//! this crate needs and which is not implemented.
//!
//! **How it is built.** For every destination terminal, every packet the routing can inject
//! ([`Routing::inject_choices`], from every source) is followed through every hop the routing
//! can offer ([`Routing::choices`]) — every Valiant group, every UGAL decision, every random
//! up port — over the states (channel, class, header), each visited once per destination. So the
//! graph holds every dependency any choice can create, and no dependency a real packet cannot
//! create (headers carry what the routing has decided, so a Valiant packet's first leg is not
//! confused with a minimal packet's). Each hop is also checked against the wiring: a port that
//! is unused, or a terminal other than the destination, is a [`CheckError::BadHop`].
//!
//! **Cost**: the states reachable per destination, summed over destinations — about
//! `terminals × channels × classes` (× intermediate groups for Valiant; destination routers
//! instead of terminals when the routing decides by router, [`Routing::by_router`]): instant for the
//! thousands of channels of a test network, but hours for a million-endpoint one, so a state
//! budget turns that into [`CheckError::TooLarge`] rather than a hang. Deadlock freedom of these
//! routing functions does not depend on the network's size, so a large configuration is checked
//! on a small network of the same family (same routing, same VC classes).

use crate::network::{FarEnd, Network, PortId, RouterId, TerminalId};
use crate::routing::{Header, Hop, Routing};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hash (FxHash's) for the checker's sets of small integer keys, several
/// times faster than the default SipHash; the keys are not attacker-chosen.
#[derive(Default, Clone, Copy)]
struct Fx(u64);

impl Fx {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, x: u8) {
        self.add(u64::from(x));
    }
    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxSet<T> = HashSet<T, BuildHasherDefault<Fx>>;

/// States a check explores before giving up ([`check`]).
pub const DEFAULT_STATE_LIMIT: u64 = 20_000_000;

/// A channel and a VC class on it: one vertex of the CDG.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChannelVc {
    pub router: RouterId,
    pub port: PortId,
    pub vc: u8,
}

/// What an accepted check looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// (channel, class) pairs some packet can hold.
    pub vertices: usize,
    /// Dependencies between them.
    pub dependencies: usize,
    /// (channel, class, header) states explored, summed over destinations.
    pub states: u64,
}

/// Why a routing function was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The CDG has a cycle: these channels, each requested by a packet holding the previous one
    /// (and the first by one holding the last), can deadlock.
    #[error("routing can deadlock: a cycle of {} channel dependencies\n{text}", cycle.len())]
    Cycle { cycle: Vec<ChannelVc>, text: String },
    /// The routing chose a hop the wiring does not allow.
    #[error("routing error at {at}: {message}")]
    BadHop { at: String, message: String },
    /// The check would explore more than `limit` states.
    #[error(
        "deadlock check stopped after {limit} routing states: the network is too large to check \
         exhaustively; check a smaller network of the same family with the same routing and VC classes"
    )]
    TooLarge { limit: u64 },
}

/// Checks `routing` on `net` with [`DEFAULT_STATE_LIMIT`].
pub fn check(net: &Network, routing: &dyn Routing) -> Result<Report, CheckError> {
    check_with_limit(net, routing, DEFAULT_STATE_LIMIT)
}

/// Checks `routing` on `net`, exploring at most `limit` states.
pub fn check_with_limit(
    net: &Network,
    routing: &dyn Routing,
    limit: u64,
) -> Result<Report, CheckError> {
    let edges = dependencies(net, routing, limit)?;
    let classes = u64::from(routing.vc_classes());
    let vertex = |id: u64| {
        let (router, port) = net.channel_ends((id / classes) as usize);
        ChannelVc {
            router,
            port,
            vc: (id % classes) as u8,
        }
    };
    match find_cycle(&edges.pairs) {
        Some(ids) => {
            let cycle: Vec<ChannelVc> = ids.into_iter().map(vertex).collect();
            Err(CheckError::Cycle {
                text: describe(net, &cycle),
                cycle,
            })
        }
        None => Ok(Report {
            vertices: edges.vertices,
            dependencies: edges.pairs.len(),
            states: edges.states,
        }),
    }
}

/// One line per channel of a cycle, `router port → neighbour, VC class c`.
pub fn describe(net: &Network, cycle: &[ChannelVc]) -> String {
    let mut out = String::new();
    for c in cycle {
        out += &format!(
            "  {}, VC class {}\n",
            net.channel_name(c.router, c.port),
            c.vc
        );
    }
    if let Some(first) = cycle.first() {
        out += &format!("  (then {} again)", net.port_name(first.router, first.port));
    }
    out
}

struct Edges {
    pairs: Vec<(u64, u64)>,
    vertices: usize,
    states: u64,
}

/// The CDG's edges as `(channel · classes + class)` pairs, sorted.
fn dependencies(net: &Network, routing: &dyn Routing, limit: u64) -> Result<Edges, CheckError> {
    let classes = routing.vc_classes();
    let mut edges: FxSet<(u64, u64)> = FxSet::default();
    let mut vertices: FxSet<u64> = FxSet::default();
    let mut visited: FxSet<(u64, Header)> = FxSet::default();
    let mut stack: Vec<(RouterId, Option<u64>, Header)> = Vec::new();
    let mut offered: Vec<(Hop, Header)> = Vec::new();
    let mut states = 0u64;
    // One terminal per router stands for all of them when the routing allows it.
    let step = if routing.by_router() {
        u32::from(net.terminals_per_router())
    } else {
        1
    };
    for dst in (0..net.terminals()).step_by(step as usize) {
        visited.clear();
        for src in (0..net.terminals()).step_by(step as usize) {
            let rs = net.terminal_at(src).0;
            routing.inject_choices(src, dst, &mut |h| stack.push((rs, None, h)));
            while let Some((router, held, header)) = stack.pop() {
                routing.choices(router, &header, &mut |hop, h| offered.push((hop, h)));
                if offered.is_empty() {
                    return Err(bad(net, router, 0, "no hop offered".into()));
                }
                for (hop, next) in offered.drain(..) {
                    let Some(to) = follow(net, router, hop, classes, dst)? else {
                        continue;
                    };
                    let id = net.channel(router, hop.port) as u64 * u64::from(classes)
                        + u64::from(hop.vc);
                    vertices.insert(id);
                    if let Some(held) = held {
                        edges.insert((held, id));
                    }
                    if visited.insert((id, next)) {
                        states += 1;
                        if states > limit {
                            return Err(CheckError::TooLarge { limit });
                        }
                        stack.push((to, Some(id), next));
                    }
                }
            }
        }
    }
    let mut pairs: Vec<(u64, u64)> = edges.into_iter().collect();
    pairs.sort_unstable();
    Ok(Edges {
        pairs,
        vertices: vertices.len(),
        states,
    })
}

fn bad(net: &Network, router: RouterId, port: PortId, message: String) -> CheckError {
    CheckError::BadHop {
        at: net.port_name(router, port.min(net.radix() - 1)),
        message,
    }
}

/// The router a hop leads to, `None` for the ejection to `dst`, an error for a hop the wiring
/// does not allow.
fn follow(
    net: &Network,
    router: RouterId,
    hop: Hop,
    classes: u8,
    dst: TerminalId,
) -> Result<Option<RouterId>, CheckError> {
    if hop.port >= net.radix() {
        return Err(bad(
            net,
            router,
            hop.port,
            format!("port {} ≥ radix {}", hop.port, net.radix()),
        ));
    }
    if hop.vc >= classes {
        return Err(bad(
            net,
            router,
            hop.port,
            format!("VC class {} ≥ {classes}", hop.vc),
        ));
    }
    match net.end(router, hop.port) {
        FarEnd::Terminal(t) if t == dst => Ok(None),
        FarEnd::Terminal(t) => Err(bad(
            net,
            router,
            hop.port,
            format!("packet for terminal {dst} ejected to terminal {t}"),
        )),
        FarEnd::Unused => Err(bad(net, router, hop.port, "port is not wired".into())),
        FarEnd::Router { router: to, .. } => Ok(Some(to)),
    }
}

/// A cycle of a directed graph given by sorted edges (iterative depth-first search in vertex
/// order, so the answer is deterministic), as its vertices in dependency order.
fn find_cycle(edges: &[(u64, u64)]) -> Option<Vec<u64>> {
    let mut index: HashMap<u64, usize> = HashMap::new();
    let mut ids: Vec<u64> = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
    ids.sort_unstable();
    ids.dedup();
    for (i, &id) in ids.iter().enumerate() {
        index.insert(id, i);
    }
    let n = ids.len();
    let mut offsets = vec![0usize; n + 1];
    for &(a, _) in edges {
        offsets[index[&a] + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    // Edges are sorted by source, so targets fall into place in order.
    let targets: Vec<usize> = edges.iter().map(|&(_, b)| index[&b]).collect();
    #[derive(Clone, Copy, PartialEq)]
    enum Colour {
        White,
        Grey,
        Black,
    }
    let mut colour = vec![Colour::White; n];
    let mut path: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if colour[root] != Colour::White {
            continue;
        }
        colour[root] = Colour::Grey;
        path.push((root, offsets[root]));
        while let Some(&mut (v, ref mut next)) = path.last_mut() {
            if *next == offsets[v + 1] {
                colour[v] = Colour::Black;
                path.pop();
                continue;
            }
            let w = targets[*next];
            *next += 1;
            match colour[w] {
                Colour::White => {
                    colour[w] = Colour::Grey;
                    path.push((w, offsets[w]));
                }
                Colour::Grey => {
                    let start = path.iter().position(|&(u, _)| u == w).unwrap_or(0);
                    let found: Vec<usize> = path[start..].iter().map(|&(u, _)| u).collect();
                    let short = shortest_cycle(&offsets, &targets, &found);
                    return Some(short.into_iter().map(|u| ids[u]).collect());
                }
                Colour::Black => {}
            }
        }
    }
    None
}

/// The shortest cycle through any vertex of `cycle` (a depth-first search finds some cycle,
/// often a long one; a short one is easier to read), by breadth-first search from each.
fn shortest_cycle(offsets: &[usize], targets: &[usize], cycle: &[usize]) -> Vec<usize> {
    let mut best = cycle.to_vec();
    let mut parent = vec![usize::MAX; offsets.len() - 1];
    for &start in cycle.iter().take(64) {
        parent.iter_mut().for_each(|p| *p = usize::MAX);
        let mut queue = std::collections::VecDeque::from([start]);
        let mut closing = None;
        'search: while let Some(v) = queue.pop_front() {
            for &w in &targets[offsets[v]..offsets[v + 1]] {
                if w == start {
                    closing = Some(v);
                    break 'search;
                }
                if parent[w] == usize::MAX {
                    parent[w] = v;
                    queue.push_back(w);
                }
            }
        }
        let Some(mut v) = closing else { continue };
        let mut back = vec![v];
        while v != start {
            v = parent[v];
            back.push(v);
        }
        back.reverse();
        if back.len() < best.len() {
            best = back;
        }
    }
    best
}

impl fmt::Display for ChannelVc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "router {} port {} VC class {}",
            self.router, self.port, self.vc
        )
    }
}

#[cfg(test)]
mod tests;
