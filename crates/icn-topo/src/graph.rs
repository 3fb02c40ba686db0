//! The [`Graph`] type: adjacency lists with port labels and node names.
//!
//! Storage is flat so that a graph of a million nodes (CCC(16,16)) builds in a fraction of a
//! second: the links of all nodes in one array with an offset per node (CSR), and node names
//! computed on demand from the node index for the regular families — only graphs read from a
//! file keep a table of names (and an index from name to node).

use crate::TopoError;
use std::borrow::Cow;
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
impl Kind {
    /// Nodes of a regular family, from its parameters alone (`None` for a file graph, or a
    /// count beyond `usize`).
    pub fn nodes(&self) -> Option<usize> {
        match *self {
            Kind::Ring { n } | Kind::Path { n } => Some(n),
            Kind::Mesh { w, h } | Kind::Torus { w, h } => w.checked_mul(h),
            Kind::Hypercube { d } => 1usize.checked_shl(d),
            Kind::Ccc { h, k } => h.checked_mul(1usize.checked_shl(k)?),
            Kind::File => None,
        }
    }

    /// The paper's name of node `v` of a regular family (see [`Graph::name`]); a file
    /// graph's names are its file's, kept by the graph.
    pub fn node_name(&self, v: NodeId) -> String {
        match *self {
            Kind::File | Kind::Ring { .. } | Kind::Path { .. } => v.to_string(),
            Kind::Mesh { w, .. } | Kind::Torus { w, .. } => format!("({},{})", v % w, v / w),
            Kind::Hypercube { d } => format!("{v:0width$b}", width = d as usize),
            Kind::Ccc { h, .. } => format!("({},{})", v / h, v % h),
        }
    }

    /// Inverse of [`Kind::node_name`] (whitespace already removed): only the exact name of
    /// a node is accepted (`(01,2)` is not `(1,2)`), as when names were looked up in a
    /// table. Needs no graph, so a source name is checked before a graph is built.
    pub fn parse_node(&self, key: &str) -> Option<NodeId> {
        let pair = || -> Option<(usize, usize)> {
            let (a, b) = key.strip_prefix('(')?.strip_suffix(')')?.split_once(',')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        };
        let v = match *self {
            Kind::File => return None,
            Kind::Ring { .. } | Kind::Path { .. } => key.parse().ok()?,
            Kind::Mesh { w, h } | Kind::Torus { w, h } => {
                let (x, y) = pair()?;
                (x < w && y < h).then_some(y * w + x)?
            }
            Kind::Hypercube { d } => {
                if key.len() != d as usize {
                    return None;
                }
                usize::from_str_radix(key, 2).ok()?
            }
            Kind::Ccc { h, k } => {
                let (c, p) = pair()?;
                (c < 1usize.checked_shl(k)? && p < h).then_some(c * h + p)?
            }
        };
        (v < self.nodes()? && self.node_name(v) == key).then_some(v)
    }
}

#[derive(Clone, Debug)]
pub struct Graph {
    kind: Kind,
    /// Names of a [`Kind::File`] graph; empty for the regular families (computed on demand).
    names: Vec<String>,
    /// `links[offsets[v]..offsets[v + 1]]`: the links of `v` in port order.
    offsets: Vec<usize>,
    links: Vec<Link>,
    /// Name → node, for [`Kind::File`] graphs only.
    index: HashMap<String, NodeId>,
}

impl Graph {
    /// Builds a graph from adjacency lists (and, for [`Kind::File`], its names), checking that
    /// it is non-empty and connected (broadcasting needs both).
    pub(crate) fn new(
        kind: Kind,
        names: Vec<String>,
        adj: Vec<Vec<Link>>,
    ) -> Result<Self, TopoError> {
        if adj.is_empty() {
            return Err(TopoError::Empty);
        }
        let mut offsets = Vec::with_capacity(adj.len() + 1);
        let mut links = Vec::with_capacity(adj.iter().map(Vec::len).sum());
        offsets.push(0);
        for l in &adj {
            links.extend_from_slice(l);
            offsets.push(links.len());
        }
        let index = if kind == Kind::File {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i))
                .collect()
        } else {
            HashMap::new()
        };
        let g = Graph {
            kind,
            names: if kind == Kind::File {
                names
            } else {
                Vec::new()
            },
            offsets,
            links,
            index,
        };
        let dist = g.distances(0);
        if let Some(v) = dist.iter().position(Option::is_none) {
            return Err(TopoError::Disconnected {
                from: g.name(0).into_owned(),
                unreached: g.name(v).into_owned(),
            });
        }
        Ok(g)
    }

    /// A regular family's graph straight from flat arrays (no per-node vectors, no
    /// connectivity search: the constructor's family is connected by construction, which its
    /// tests check with BFS).
    pub(crate) fn from_csr(kind: Kind, offsets: Vec<usize>, links: Vec<Link>) -> Self {
        debug_assert!(kind != Kind::File && offsets.len() >= 2);
        Graph {
            kind,
            names: Vec::new(),
            offsets,
            links,
            index: HashMap::new(),
        }
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Always false: graphs are non-empty by construction.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The breadth-first tree from `src`: each node's parent on one shortest path from `src`
    /// (`src` is its own parent, `u32::MAX` marks a node `src` cannot reach). Links are taken
    /// in their stored order, so the tree, and every path read from it, is deterministic. The
    /// ideal and flow fabrics route along it.
    pub fn bfs_parents(&self, src: NodeId) -> Vec<u32> {
        let mut parent = vec![u32::MAX; self.len()];
        parent[src] = src as u32;
        let mut queue = std::collections::VecDeque::from([src]);
        while let Some(v) = queue.pop_front() {
            for l in self.links(v) {
                if parent[l.to] == u32::MAX {
                    parent[l.to] = v as u32;
                    queue.push_back(l.to);
                }
            }
        }
        parent
    }

    /// Links of `v` in port order.
    pub fn links(&self, v: NodeId) -> &[Link] {
        &self.links[self.offsets[v]..self.offsets[v + 1]]
    }

    /// Distinct neighbours of `v` (two ports may lead to the same node, as in CCC(2,k)).
    pub fn neighbours(&self, v: NodeId) -> Vec<NodeId> {
        let mut out: Vec<NodeId> = Vec::with_capacity(self.links(v).len());
        for l in self.links(v) {
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
        self.links(v).iter().copied().find(|l| l.port == port)
    }

    /// Whether `u` and `v` are adjacent.
    pub fn adjacent(&self, u: NodeId, v: NodeId) -> bool {
        self.links(u).iter().any(|l| l.to == v)
    }

    /// Number of undirected links between distinct ports (CCC(2,k)'s double F/B link counts twice).
    pub fn edge_count(&self) -> usize {
        self.links.len() / 2
    }

    /// The paper's name of `v`: `(c,p)` for CCC, `(x,y)` for mesh and torus, the address in
    /// `d` bits (most significant first) for a hypercube, the index for ring and path, the
    /// file's name for an edge-list graph. Computed on demand except for file graphs.
    pub fn name(&self, v: NodeId) -> Cow<'_, str> {
        match self.kind {
            Kind::File => Cow::Borrowed(&self.names[v]),
            kind => Cow::Owned(kind.node_name(v)),
        }
    }

    /// All names in node order (allocates one string per node).
    pub fn names(&self) -> Vec<String> {
        (0..self.len()).map(|v| self.name(v).into_owned()).collect()
    }

    /// The node called `name` (whitespace ignored); an error naming an example of a valid
    /// name otherwise.
    pub fn node(&self, name: &str) -> Result<NodeId, TopoError> {
        let key: String = name.chars().filter(|c| !c.is_whitespace()).collect();
        let found = match self.kind {
            Kind::File => self.index.get(&key).copied(),
            kind => kind.parse_node(&key),
        };
        found.ok_or_else(|| TopoError::UnknownNode {
            name: name.to_owned(),
            example: self.name(0).into_owned(),
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
