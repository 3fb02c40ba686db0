//! What a broadcast run will cost, estimated from the graph and the options before anything
//! runs, and the ranges of the size options: a run the machine cannot finish in minutes, or
//! whose memory exceeds what is available, is refused with the key to change.
//!
//! The unit of work is a *visit*: one node or one directed link touched by a simulation or a
//! BFS (about 10 ns each on the reference machine: `bcast --graph path:20000` from all
//! sources, 3.6·10⁹ visits, took 28 s). The cost of each part of a run:
//!
//! | part | visits | why |
//! |------|--------|-----|
//! | ILBM | `sources × c` | one simulation per source, `c = n + 2·links` |
//! | CLBM | `n × (greedy_tries + 1) × c + sources × c` | a tree per source of the graph, whatever sources are run (storage counts every source's tree) |
//! | NAULBM, AULBM | `(moves + 1) × n × c + sources × c` | each designer move is scored on every source (moves scaled by 65536/n² above 256 nodes) |
//! | optimal | `classes × (greedy_tries + 1) × c` | a greedy upper bound per symmetry class; the SAT search only up to `optimum_max_nodes` |
//! | lower bounds | `classes × c × (1 + Δ + Δ!·Δ)` | BFS from the source and each neighbour, every neighbour order for degree Δ ≤ 5 |
//! | diameter | CCC `h × c`, file graphs `n × c`, other families 0 | one BFS per symmetry class; closed forms for paths, rings, meshes, tori, hypercubes |
//!
//! `classes` is the number of symmetry classes among the sources (1 for vertex-transitive
//! graphs, the cycle positions for CCC, every source otherwise). Broadcasting from all `n`
//! sources is Θ(n²) by nature (n broadcasts that each inform n nodes), so large graphs are
//! run from one source or refused with that reason.
//!
//! Memory: the graph (`16 B` per directed link and `8 B` per node, the node index of file
//! graphs excluded) plus two broadcasts' state (`48 B` per node and `24 B` per transfer, at
//! most one transfer per directed link) plus `48 B` per source result.

use crate::schemes::{RunOptions, Scheme, symmetry_class};
use icn_topo::{Graph, Kind, NodeId};
use std::collections::HashSet;

/// Most visits a run may need: about two minutes at 10 ns each.
pub const MAX_VISITS: u128 = 10_000_000_000;
/// Largest `greedy_tries` (randomised CLBM trees per source).
pub const MAX_GREEDY_TRIES: u32 = 10_000;
/// Largest `design_moves` of the universal-list designer.
pub const MAX_DESIGN_MOVES: u32 = 1_000_000;
/// Largest graph whose exact optimum may be searched: the SAT encoding has a variable per
/// (node, step, port), millions above this size.
pub const MAX_OPTIMUM_NODES: usize = 5_000;
/// Largest SAT conflict budget per call (learned clauses grow with it).
pub const MAX_CONFLICTS: u64 = 100_000_000;
pub use icn_engine::memory::{FALLBACK_MEMORY, available_memory};

/// An option of a run, spelt as the CLI flag or the experiment-file key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Graph,
    Scheme,
    Source,
    GreedyTries,
    DesignMoves,
}

impl Key {
    /// `--graph`, `--model`, ... for `icnlab bcast`.
    pub fn flag(self) -> &'static str {
        match self {
            Key::Graph => "--graph",
            Key::Scheme => "--model",
            Key::Source => "--source",
            Key::GreedyTries => "--greedy-tries",
            Key::DesignMoves => "--design-moves",
        }
    }

    /// `graph`, `scheme`, ... in experiment files.
    pub fn toml(self) -> &'static str {
        match self {
            Key::Graph => "graph",
            Key::Scheme => "scheme",
            Key::Source => "source",
            Key::GreedyTries => "greedy_tries",
            Key::DesignMoves => "design_moves",
        }
    }
}

/// A run refused before it starts: the option to change and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{why}")]
pub struct Refused {
    pub key: Key,
    pub why: String,
}

/// Estimated cost of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub visits: u128,
    pub bytes: u64,
}

/// Universal-list designer moves actually made on `n` nodes (as [`crate::schemes::run_scheme`]).
fn effective_moves(n: u64, moves: u32) -> u64 {
    if n <= 256 {
        u64::from(moves)
    } else {
        u64::from(moves) * 65_536 / (n * n)
    }
}

fn factorial(d: u128) -> u128 {
    (1..=d).product()
}

/// The parts of a run of `schemes` from `sources` of `g` (see the module table): (key to
/// blame, what, visits).
fn parts(
    g: &Graph,
    schemes: &[Scheme],
    sources: &[NodeId],
    opts: &RunOptions,
) -> Vec<(Key, String, u128)> {
    let n = g.len() as u128;
    let c = n + 2 * g.edge_count() as u128;
    let s = sources.len() as u128;
    let classes = sources
        .iter()
        .map(|&v| symmetry_class(g, v))
        .collect::<HashSet<_>>()
        .len() as u128;
    let max_degree = (0..g.len()).map(|v| g.degree(v)).max().unwrap_or(0) as u128;
    let perm = if max_degree <= 5 {
        factorial(max_degree) * max_degree
    } else {
        0
    };
    let tries = u128::from(opts.greedy_tries) + 1;
    let from = |what: &str| format!("{what} from {s} source(s) of {n} nodes");
    let mut parts = vec![(
        Key::Source,
        from("lower bounds"),
        classes * c * (1 + max_degree + perm),
    )];
    let diameter = match g.kind() {
        Kind::Ccc { h, .. } => h as u128 * c,
        Kind::File => n * c,
        _ => 0,
    };
    parts.push((Key::Graph, format!("the diameter of {n} nodes"), diameter));
    for &scheme in schemes {
        let (key, what, visits) = match scheme {
            Scheme::Ilbm => (Key::Source, from("ILBM"), s * c),
            Scheme::Clbm => (
                Key::Scheme,
                format!("CLBM builds a tree for every one of the {n} nodes"),
                n * tries * c + s * c,
            ),
            Scheme::Naulbm | Scheme::Aulbm => (
                Key::Scheme,
                format!(
                    "{} scores every list design on all {n} sources",
                    scheme.name()
                ),
                (u128::from(effective_moves(n as u64, opts.design_moves)) + 1) * n * c + s * c,
            ),
            Scheme::Optimal => (Key::Source, from("optimal"), classes * tries * c),
        };
        parts.push((key, what, visits));
    }
    parts
}

/// Estimates the run of `schemes` from `sources` of `g` and refuses it when it needs more
/// than [`MAX_VISITS`] visits or more than `memory` bytes; the error names the option whose
/// part costs most.
pub fn check(
    g: &Graph,
    schemes: &[Scheme],
    sources: &[NodeId],
    opts: &RunOptions,
    memory: u64,
) -> Result<Estimate, Refused> {
    let parts = parts(g, schemes, sources, opts);
    let visits: u128 = parts.iter().map(|p| p.2).sum();
    let (n, links) = (g.len() as u64, 2 * g.edge_count() as u64);
    let graph = 16 * links + 8 * n;
    let run = 2 * (48 * n + 24 * links) + 48 * sources.len() as u64;
    let bytes = graph + run;
    if visits > MAX_VISITS {
        let (key, what, v) =
            parts
                .iter()
                .max_by_key(|p| p.2)
                .cloned()
                .unwrap_or((Key::Graph, String::new(), 0));
        let hint = match key {
            Key::Source => "give one source (all sources is quadratic in the graph size)",
            Key::Scheme => "use ilbm or a smaller graph",
            _ => "use a smaller graph",
        };
        return Err(Refused {
            key,
            why: format!(
                "{what}: about {v:.1e} node visits, more than the limit of {MAX_VISITS:.0e} (minutes of CPU); {hint}",
                v = v as f64,
                MAX_VISITS = MAX_VISITS as f64,
            ),
        });
    }
    if bytes > memory {
        return Err(Refused {
            key: Key::Graph,
            why: format!(
                "needs about {} MB of memory for {n} nodes and {links} directed links, {} MB are available",
                bytes >> 20,
                memory >> 20
            ),
        });
    }
    Ok(Estimate {
        visits: visits.max(1),
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_topo::parse_graph_spec;

    const PLENTY: u64 = 1 << 40;

    fn all(g: &Graph) -> Vec<NodeId> {
        (0..g.len()).collect()
    }

    /// Issue 14: `bcast --graph path:1000000` (all sources by default) would run 10⁶
    /// broadcasts of 10⁶ nodes; it is refused before running, naming `--source`.
    #[test]
    fn all_sources_of_a_long_path_are_refused_naming_the_source() {
        let g = parse_graph_spec("path:1000000").unwrap();
        let e = check(
            &g,
            &[Scheme::Ilbm],
            &all(&g),
            &RunOptions::default(),
            PLENTY,
        )
        .unwrap_err();
        assert_eq!(e.key, Key::Source);
        assert!(e.why.contains("give one source"), "{}", e.why);
        // One source: c = n + 2(n−1) visits for the run, 7c for the bounds (Δ = 2: three
        // BFS, 2!·2 order evaluations), none for the diameter (closed form).
        let one = check(&g, &[Scheme::Ilbm], &[0], &RunOptions::default(), PLENTY).unwrap();
        let c = 1_000_000 + 2 * 999_999;
        assert_eq!(one.visits, c + 7 * c);
    }

    #[test]
    fn list_models_on_large_graphs_are_refused_naming_the_model() {
        let g = parse_graph_spec("hypercube:16").unwrap();
        for scheme in [Scheme::Clbm, Scheme::Aulbm] {
            let e = check(&g, &[scheme], &[0], &RunOptions::default(), PLENTY).unwrap_err();
            assert_eq!(e.key, Key::Scheme, "{}", e.why);
        }
        assert!(check(&g, &[Scheme::Ilbm], &[0], &RunOptions::default(), PLENTY).is_ok());
    }

    /// The bundled sizes stay well inside the limits: CCC(8,8) from every source, all models.
    #[test]
    fn the_reproduced_sizes_are_accepted() {
        let g = parse_graph_spec("ccc:8,8").unwrap();
        let e = check(&g, &Scheme::ALL, &all(&g), &RunOptions::default(), PLENTY).unwrap();
        assert!(e.visits < MAX_VISITS / 10, "{e:?}");
    }

    #[test]
    fn memory_beyond_what_is_available_is_refused_naming_the_graph() {
        let g = parse_graph_spec("ring:1000").unwrap();
        let need = check(&g, &[Scheme::Ilbm], &[0], &RunOptions::default(), PLENTY)
            .unwrap()
            .bytes;
        // 1000 nodes, 2000 directed links: 16·2000 + 8·1000 + 2·(48·1000 + 24·2000) + 48.
        assert_eq!(need, 32_000 + 8_000 + 2 * (48_000 + 48_000) + 48);
        let e = check(&g, &[Scheme::Ilbm], &[0], &RunOptions::default(), need - 1).unwrap_err();
        assert_eq!(e.key, Key::Graph);
        assert!(e.why.contains("MB are available"), "{}", e.why);
    }
}
