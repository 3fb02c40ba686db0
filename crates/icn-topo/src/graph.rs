//! The [`Graph`] type: adjacency lists with port labels and node names.

use crate::TopoError;
use std::collections::HashMap;
use std::fmt;

/// Index of a node, `0..graph.len()`.
pub type NodeId = usize;

/// The label a node gives one of its links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Port {
    /// CCC and ring: forward around the cycle, `(c,p) → (c,p+1 mod h)`.
    F,
    /// CCC and ring: backward around the cycle, `(c,p) → (c,p−1 mod h)`.
    B,
    /// CCC lateral link `(c,p) → (c XOR 2^p, p)`, only for `p < k`.
    L,
    /// Hypercube dimension `i`: flips bit `i`.
    Dim(u8),
    /// Mesh/torus: `x + 1`.
    East,
    /// Mesh/torus: `x − 1`.
    West,
    /// Mesh/torus: `y + 1`.
    North,
    /// Mesh/torus: `y − 1`.
    South,
    /// Generic graphs: the `i`-th link of the node in file order.
    Edge(u32),
}

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Port::F => write!(f, "F"),
            Port::B => write!(f, "B"),
            Port::L => write!(f, "L"),
            Port::Dim(i) => write!(f, "D{i}"),
            Port::East => write!(f, "E"),
            Port::West => write!(f, "W"),
            Port::North => write!(f, "N"),
            Port::South => write!(f, "S"),
            Port::Edge(i) => write!(f, "e{i}"),
        }
    }
}

/// One directed half of an undirected link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// The neighbour.
    pub to: NodeId,
    /// The port of this node the link leaves by.
    pub port: Port,
    /// The port of `to` the link arrives on (`F` arrives on `B`, `L` on `L`, ...).
    pub arrives_on: Port,
}

/// Which family a graph belongs to, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Cycle of `n` nodes, node `i` named `i`.
    Ring { n: usize },
    /// Path of `n` nodes (`F` towards higher indices).
    Path { n: usize },
    /// `w × h` mesh, node `(x,y)` has index `y·w + x`.
    Mesh { w: usize, h: usize },
    /// `w × h` torus, same numbering as the mesh.
    Torus { w: usize, h: usize },
    /// Hypercube of dimension `d`; node index = its address.
    Hypercube { d: u32 },
    /// Cube-connected cycles CCC(h,k); node `(c,p)` has index `c·h + p`.
    Ccc { h: usize, k: u32 },
    /// Graph read from an edge list.
    File,
}

/// An undirected connected graph with port-labelled links and named nodes.
#[derive(Clone, Debug)]
pub struct Graph {
    kind: Kind,
    names: Vec<String>,
    adj: Vec<Vec<Link>>,
    index: HashMap<String, NodeId>,
}

impl Graph {
    /// Builds a graph from names and adjacency lists, checking that it is non-empty and
    /// connected (broadcasting needs both).
    pub(crate) fn new(
        kind: Kind,
        names: Vec<String>,
        adj: Vec<Vec<Link>>,
    ) -> Result<Self, TopoError> {
        if names.is_empty() {
            return Err(TopoError::Empty);
        }
        let index = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        let g = Graph {
            kind,
            names,
            adj,
            index,
        };
        let dist = g.distances(0);
        if let Some(v) = dist.iter().position(Option::is_none) {
            return Err(TopoError::Disconnected {
                from: g.names[0].clone(),
                unreached: g.names[v].clone(),
            });
        }
        Ok(g)
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Always false: graphs are non-empty by construction.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Links of `v` in port order.
    pub fn links(&self, v: NodeId) -> &[Link] {
        &self.adj[v]
    }

    /// Distinct neighbours of `v` (two ports may lead to the same node, as in CCC(2,k)).
    pub fn neighbours(&self, v: NodeId) -> Vec<NodeId> {
        let mut out: Vec<NodeId> = Vec::with_capacity(self.adj[v].len());
        for l in &self.adj[v] {
            if !out.contains(&l.to) {
                out.push(l.to);
            }
        }
        out
    }

    pub fn degree(&self, v: NodeId) -> usize {
        self.neighbours(v).len()
    }

    /// The link of `v` labelled `port`, if `v` has that port.
    pub fn link(&self, v: NodeId, port: Port) -> Option<Link> {
        self.adj[v].iter().copied().find(|l| l.port == port)
    }

    /// Whether `u` and `v` are adjacent.
    pub fn adjacent(&self, u: NodeId, v: NodeId) -> bool {
        self.adj[u].iter().any(|l| l.to == v)
    }

    /// Number of undirected links between distinct ports (CCC(2,k)'s double F/B link counts twice).
    pub fn edge_count(&self) -> usize {
        self.adj.iter().map(Vec::len).sum::<usize>() / 2
    }

    pub fn name(&self, v: NodeId) -> &str {
        &self.names[v]
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The node called `name`; an error naming an example of a valid name otherwise.
    pub fn node(&self, name: &str) -> Result<NodeId, TopoError> {
        let key: String = name.chars().filter(|c| !c.is_whitespace()).collect();
        self.index
            .get(&key)
            .copied()
            .ok_or_else(|| TopoError::UnknownNode {
                name: name.to_owned(),
                example: self.names[0].clone(),
            })
    }

    /// `(h, k)` for a CCC.
    pub fn ccc_params(&self) -> Option<(usize, u32)> {
        match self.kind {
            Kind::Ccc { h, k } => Some((h, k)),
            _ => None,
        }
    }

    /// Coordinates `(c, p)` of a CCC node.
    pub fn ccc_coords(&self, v: NodeId) -> Option<(usize, usize)> {
        self.ccc_params().map(|(h, _)| (v / h, v % h))
    }

    /// Index of CCC node `(c, p)`.
    pub fn ccc_node(&self, c: usize, p: usize) -> Option<NodeId> {
        let (h, k) = self.ccc_params()?;
        (c < 1 << k && p < h).then_some(c * h + p)
    }

    /// Coordinates `(x, y)` of a mesh or torus node.
    pub fn grid_coords(&self, v: NodeId) -> Option<(usize, usize)> {
        match self.kind {
            Kind::Mesh { w, .. } | Kind::Torus { w, .. } => Some((v % w, v / w)),
            _ => None,
        }
    }
}
