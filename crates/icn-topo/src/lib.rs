//! Interconnect topologies shared by icnlab's simulators.
//!
//! A [`Graph`] is an undirected, connected graph whose links carry *port labels*: the name a
//! node gives to each of its links (`F`/`B`/`L` in a cube-connected cycle, a dimension in a
//! hypercube, a compass direction in a mesh). Protocols that use a uniform neighbour table
//! (the ILBM of the CCC broadcast paper, dimension-order routing) address neighbours by port,
//! and every link also records the port it arrives on at the far end, so a receiver knows
//! "the message came over my B link" even where two ports lead to the same neighbour.
//!
//! Nodes are named as in the papers (`(c,p)` for CCC, bit strings for hypercubes, `(x,y)` for
//! meshes); [`Graph::node`] maps a name back to its index.
//!
//! Modules: [`graph`] (the type), [`build`] (regular topologies), [`edgelist`] (graphs from
//! files), [`spec`] (`"ccc:4,3"`-style specifications), [`size`] (what a spec will hold, before it is built), [`paths`] (BFS, eccentricity,
//! diameter, shortest paths), [`layout`] (2-D drawing positions).
//!
//! **Switch networks** for network simulators, separate from the graphs because a router has
//! numbered ports and terminals hang off some of them: [`network`] (the [`Network`] type and
//! its families — k-ary n-cube, ring, k-ary n-tree, dragonfly, flattened butterfly,
//! hypercube, any [`Graph`] — and `"dragonfly:4"`-style specifications), [`routing`] (per-hop
//! routing functions giving output port and VC class: dimension order with datelines, up/down,
//! dragonfly minimal/Valiant/UGAL, up*/down* on any network), [`cdg`] (the channel-dependency-graph deadlock check of a
//! routing function and its VC classes), [`traffic`] (destination patterns).

pub mod build;
pub mod cdg;
pub mod edgelist;
pub mod graph;
pub mod layout;
pub mod network;
pub mod paths;
pub mod routing;
pub mod size;
pub mod spec;
pub mod traffic;

pub use graph::{Graph, Kind, Link, NodeId, Port};
pub use network::spec::{default_routing, default_routing_name, parse_network_spec, routing_for};
pub use network::{Arrangement, FarEnd, Network, PortId, RouterId, Shape, TerminalId};
pub use size::{GraphSize, NetworkSize, graph_spec_size, network_spec_size};
pub use spec::{parse_graph_spec, spec_kind};

/// Why a topology could not be built. Every variant says what was wrong and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopoError {
    /// A constructor parameter is out of range (`h < k`, `k = 0`, a ring of 2 nodes, ...).
    #[error("{topology}: {message}")]
    Parameter { topology: String, message: String },
    /// A graph specification string that does not parse.
    #[error("graph spec `{spec}`: {message}")]
    Spec { spec: String, message: String },
    /// A malformed line in an edge-list file.
    #[error("edge list line {line}: {message}")]
    Syntax { line: usize, message: String },
    /// An edge from a node to itself.
    #[error("edge list line {line}: self-loop on node `{node}`")]
    SelfLoop { line: usize, node: String },
    /// The graph is not connected: broadcasting cannot reach every node.
    #[error("graph is disconnected: node `{unreached}` cannot be reached from `{from}`")]
    Disconnected { from: String, unreached: String },
    /// A node name that the graph does not have.
    #[error("unknown node `{name}` (nodes are named like `{example}`)")]
    UnknownNode { name: String, example: String },
    /// The graph has no nodes at all.
    #[error("graph has no nodes")]
    Empty,
    /// A file that cannot be read.
    #[error("cannot read `{path}`: {message}")]
    Io { path: String, message: String },
    /// An error at a line of the file `path` (the message names the line).
    #[error("`{path}`: {message}")]
    InFile { path: String, message: String },
}

impl TopoError {
    pub(crate) fn parameter(topology: impl Into<String>, message: impl Into<String>) -> Self {
        TopoError::Parameter {
            topology: topology.into(),
            message: message.into(),
        }
    }
}
