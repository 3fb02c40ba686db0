//! Switch networks: routers with numbered ports, each port wired to a port of another router,
//! to a terminal (an endpoint: a NIC, a node) or to nothing.
//!
//! A [`Network`] is what a network simulator needs and a [`Graph`] lacks: port numbers that a
//! router's crossbar uses, terminals attached to router ports, and a family ([`Shape`]) with
//! the parameters its routing functions compute with. Storage is one flat table of
//! `routers × radix` [`FarEnd`]s of 8 bytes each (the radix is the largest router's; smaller
//! routers leave ports [`FarEnd::Unused`]), so a 1 M-endpoint dragonfly or fat tree takes tens of
//! megabytes and builds in well under a second — nothing is stored per pair of nodes.
//!
//! **Conventions, shared by every family** (so simulators need no family-specific code):
//! routers that carry terminals are numbered first, each has the same number `c` of terminals
//! ([`Network::terminals_per_router`]) on ports `0..c`, and terminal `t` sits on router
//! `t / c`, port `t % c`. The families' port layouts are in [`build`].

pub mod build;
mod names;
pub mod spec;

use crate::graph::Graph;
use std::collections::VecDeque;

/// Index of a router, `0..network.routers()`.
pub type RouterId = u32;
/// Index of a port of a router, `0..network.radix()`.
pub type PortId = u16;
/// Index of a terminal (endpoint), `0..network.terminals()`.
pub type TerminalId = u32;

/// The far end of a router port's channel: what the port is wired to. Eight bytes, so the
/// wiring table costs `8 × radix` bytes per router.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FarEnd {
    /// Nothing (a mesh boundary, a fat tree's top-level up ports, a small graph node's spare ports).
    Unused,
    /// A terminal.
    Terminal(TerminalId),
    /// Port `port` of router `router`: the channel leaving here arrives there.
    Router { router: RouterId, port: PortId },
}

/// The family of a network and its parameters, which routing functions compute with.
#[derive(Clone, Debug)]
pub enum Shape {
    /// k-ary n-cube: `dims[i]` routers along dimension `i` (dimension 0 varies fastest in the
    /// router index); `wrap` makes it a torus (a ring is a 1-dimensional torus).
    Cube { dims: Vec<u32>, wrap: bool },
    /// k-ary n-tree fat tree (Petrini & Vanneschi 1997): `n` levels of `k^(n−1)` switches with
    /// `k` down and `k` up ports; `k^n` terminals.
    FatTree { k: u32, n: u32 },
    /// Dragonfly (Kim, Dally, Scott, Abts 2008): `p` terminals and `h` global links per router,
    /// `a` routers per group all connected to each other, `g = a·h + 1` groups.
    Dragonfly {
        p: u32,
        a: u32,
        h: u32,
        arrangement: Arrangement,
    },
    /// Flattened butterfly (Kim, Dally, Abts 2007): routers on a grid `dims`, each connected to
    /// every router that differs from it in exactly one coordinate.
    FlatFly { dims: Vec<u32> },
    /// Binary hypercube of dimension `d`.
    Hypercube { d: u32 },
    /// Any [`Graph`] (CCC, an edge-list file, ...), one terminal per node.
    Graph(Box<Graph>),
}

impl Shape {
    /// The family with an article, for messages: "a mesh", "a dragonfly", ...
    pub fn describe(&self) -> &'static str {
        match self {
            Shape::Cube { wrap: false, .. } => "a mesh",
            Shape::Cube { wrap: true, .. } => "a torus",
            Shape::FatTree { .. } => "a fat tree",
            Shape::Dragonfly { .. } => "a dragonfly",
            Shape::FlatFly { .. } => "a flattened butterfly",
            Shape::Hypercube { .. } => "a hypercube",
            Shape::Graph(_) => "a graph",
        }
    }
}

/// How a dragonfly's global links are spread over the routers of a group: which group global
/// link `m ∈ 0..a·h` of group `G` reaches (router `m / h` of the group holds link `m`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arrangement {
    /// Link `m` reaches group `(G + m + 1) mod g`, arriving on its link `a·h − 1 − m`: every
    /// group sees the same pattern relative to itself.
    #[default]
    PalmTree,
    /// Link `m` reaches group `m` if `m < G`, else `m + 1` (BookSim2's `dragonflynew`).
    Absolute,
}

impl Arrangement {
    /// The group that link `m` of group `from` reaches, in a dragonfly of `g` groups.
    pub fn target(self, from: u32, m: u32, g: u32) -> u32 {
        match self {
            Arrangement::PalmTree => (from + m + 1) % g,
            Arrangement::Absolute => m + u32::from(m >= from),
        }
    }

    /// The link of group `from` that reaches group `to` (`to ≠ from`).
    pub fn link_to(self, from: u32, to: u32, g: u32) -> u32 {
        match self {
            Arrangement::PalmTree => (to + g - from - 1) % g,
            Arrangement::Absolute => to - u32::from(to > from),
        }
    }
}

/// A switch network: routers, their ports and what each port is wired to.
#[derive(Clone, Debug)]
pub struct Network {
    shape: Shape,
    radix: PortId,
    conc: PortId,
    routers: RouterId,
    terminals: TerminalId,
    /// `ends[router · radix + port]`.
    ends: Vec<FarEnd>,
}

impl Network {
    /// The family and its parameters.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Ports per router (the largest router's; smaller ones have [`FarEnd::Unused`] ports).
    pub fn radix(&self) -> PortId {
        self.radix
    }

    pub fn routers(&self) -> RouterId {
        self.routers
    }

    pub fn terminals(&self) -> TerminalId {
        self.terminals
    }

    /// Terminals on each terminal-carrying router (ports `0..c`).
    pub fn terminals_per_router(&self) -> PortId {
        self.conc
    }

    /// Routers that carry terminals: `0..terminal_routers()`.
    pub fn terminal_routers(&self) -> RouterId {
        self.terminals / u32::from(self.conc)
    }

    /// What port `port` of `router` is wired to.
    pub fn end(&self, router: RouterId, port: PortId) -> FarEnd {
        self.ends[self.channel(router, port)]
    }

    /// The ports of `router`, in port order.
    pub fn ports(&self, router: RouterId) -> &[FarEnd] {
        let r = router as usize * usize::from(self.radix);
        &self.ends[r..r + usize::from(self.radix)]
    }

    /// Dense index of the channel leaving `router` by `port`: `router · radix + port`.
    pub fn channel(&self, router: RouterId, port: PortId) -> usize {
        router as usize * usize::from(self.radix) + usize::from(port)
    }

    /// Number of channel indices (`routers × radix`, unused ports included).
    pub fn channels(&self) -> usize {
        self.ends.len()
    }

    /// Router and port of a channel index.
    pub fn channel_ends(&self, channel: usize) -> (RouterId, PortId) {
        let radix = usize::from(self.radix);
        ((channel / radix) as RouterId, (channel % radix) as PortId)
    }

    /// Where terminal `t` is attached.
    pub fn terminal_at(&self, t: TerminalId) -> (RouterId, PortId) {
        let c = u32::from(self.conc);
        (t / c, (t % c) as PortId)
    }

    /// Whether the channel leaving `router` by `port` is a dragonfly global link (the long
    /// cables, which simulators give their own latency); false for every other family.
    pub fn is_global(&self, router: RouterId, port: PortId) -> bool {
        match self.shape {
            Shape::Dragonfly { p, a, .. } => {
                u32::from(port) >= p + a - 1
                    && matches!(self.end(router, port), FarEnd::Router { .. })
            }
            _ => false,
        }
    }

    /// Heap bytes of the wiring table (the whole state of a network but for a graph-derived
    /// one's names, which its [`Graph`] keeps).
    pub fn table_bytes(&self) -> usize {
        self.ends.capacity() * std::mem::size_of::<FarEnd>()
    }

    /// Wiring bytes per router: `radix × 8`.
    pub fn bytes_per_router(&self) -> usize {
        usize::from(self.radix) * std::mem::size_of::<FarEnd>()
    }

    /// Checks that the wiring is symmetric (a channel `r:p → s:q` has its reverse `s:q → r:p`)
    /// and that every terminal is attached exactly once, at the place the conventions say.
    /// Constructors guarantee this; the check is for tests and for wiring read from files.
    pub fn check_wiring(&self) -> Result<(), String> {
        let mut seen = vec![false; self.terminals as usize];
        for r in 0..self.routers {
            for (p, &e) in self.ports(r).iter().enumerate() {
                let p = p as PortId;
                match e {
                    FarEnd::Unused => {}
                    FarEnd::Terminal(t) => {
                        if t >= self.terminals || self.terminal_at(t) != (r, p) {
                            return Err(format!(
                                "{} holds misplaced terminal {t}",
                                self.port_name(r, p)
                            ));
                        }
                        if std::mem::replace(&mut seen[t as usize], true) {
                            return Err(format!("terminal {t} is attached twice"));
                        }
                    }
                    FarEnd::Router { router, port } => {
                        if router >= self.routers || port >= self.radix {
                            return Err(format!("{} leads out of range", self.port_name(r, p)));
                        }
                        if router == r {
                            return Err(format!("{} is a self-loop", self.port_name(r, p)));
                        }
                        let back = self.end(router, port);
                        if back != (FarEnd::Router { router: r, port: p }) {
                            return Err(format!(
                                "{} arrives on {}, which leads to {back:?}",
                                self.port_name(r, p),
                                self.port_name(router, port)
                            ));
                        }
                    }
                }
            }
        }
        match seen.iter().position(|&s| !s) {
            Some(t) => Err(format!("terminal {t} is not attached")),
            None => Ok(()),
        }
    }

    /// Router hops from `src` to every router, by breadth-first search over the wiring
    /// (`u32::MAX` where unreachable). For tests and diagnostics: O(routers × radix) per call.
    pub fn router_distances(&self, src: RouterId) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.routers as usize];
        dist[src as usize] = 0;
        let mut queue = VecDeque::from([src]);
        while let Some(u) = queue.pop_front() {
            let du = dist[u as usize];
            for e in self.ports(u) {
                if let FarEnd::Router { router, .. } = *e
                    && dist[router as usize] == u32::MAX
                {
                    dist[router as usize] = du + 1;
                    queue.push_back(router);
                }
            }
        }
        dist
    }

    /// The network as an undirected [`Graph`] whose nodes are its terminals first (node
    /// `t` is terminal `t`, named `t<t>`) and then its routers (node `T + r`, named `r<r>`),
    /// a terminal linked to its router and routers to each other port by port. For models
    /// that route on graphs with one endpoint per node (the ideal fabric): a terminal has
    /// one link, so no shortest path passes through one, and every route pays the hop in
    /// and the hop out as a packet through a router port does.
    pub fn endpoint_graph(&self) -> Result<Graph, crate::TopoError> {
        let t = self.terminals as usize;
        let mut names: Vec<String> = (0..t).map(|i| format!("t{i}")).collect();
        names.extend((0..self.routers).map(|r| format!("r{r}")));
        let mut edges = Vec::with_capacity(t + self.ends.len() / 2);
        for r in 0..self.routers {
            for (p, e) in self.ports(r).iter().enumerate() {
                match *e {
                    FarEnd::Terminal(n) => edges.push((n as usize, t + r as usize)),
                    // Each router link once, from its lower end.
                    FarEnd::Router { router, port } if (router, port) > (r, p as PortId) => {
                        edges.push((t + r as usize, t + router as usize));
                    }
                    _ => {}
                }
            }
        }
        crate::build::from_edges(names, &edges)
    }

    /// Largest router-hop distance between two terminal-carrying routers, by BFS from each
    /// (quadratic: for tests on small networks). Compare with [`Network::min_route_bound`].
    pub fn terminal_diameter(&self) -> u32 {
        let tr = self.terminal_routers();
        (0..tr)
            .map(|s| {
                let d = self.router_distances(s);
                d[..tr as usize].iter().copied().max().unwrap_or(0)
            })
            .max()
            .unwrap_or(0)
    }

    /// Router hops of the longest route the family's minimal routing takes between two
    /// terminals (mesh `Σ(k−1)`, torus `Σ⌊k/2⌋`, fat tree `2(n−1)`, dragonfly 3 — local,
    /// global, local —, flattened butterfly and hypercube one hop per dimension). For a graph,
    /// its BFS diameter (computed: quadratic in the node count).
    pub fn min_route_bound(&self) -> u32 {
        match &self.shape {
            Shape::Cube { dims, wrap } => dims
                .iter()
                .map(|&k| if *wrap { k / 2 } else { k - 1 })
                .sum(),
            Shape::FatTree { n, .. } => 2 * (n - 1),
            Shape::Dragonfly { a, .. } => {
                if *a > 1 {
                    3
                } else {
                    1
                }
            }
            Shape::FlatFly { dims } => dims.iter().filter(|&&k| k > 1).count() as u32,
            Shape::Hypercube { d } => *d,
            Shape::Graph(g) => crate::paths::diameter(g),
        }
    }
}

#[cfg(test)]
mod tests;
