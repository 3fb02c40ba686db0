//! One entry point that runs any model on any graph for a set of sources, validating every
//! schedule it produces.

use crate::bounds::lower_bound;
use crate::clbm::{greedy_scheme, tree_from_schedule};
use crate::design::design_lists;
use crate::ilbm::Ilbm;
use crate::ilbm::ccc::CccBrd;
use crate::ilbm::grid::GridBrd;
use crate::ilbm::hypercube::CubeBrd;
use crate::ilbm::ring::RingBrd;
use crate::optimum::optimum;
use crate::sim::{Outcome, Protocol, Tiebreak, simulate};
use crate::validate::check_schedule;
use crate::verify::{ccc_fast, to_outcome};
use icn_topo::paths::eccentricity;
use icn_topo::{Graph, Kind, NodeId};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The broadcast models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// Per-source trees (classical lists).
    Clbm,
    /// Non-adaptive universal lists.
    Naulbm,
    /// Adaptive universal lists.
    Aulbm,
    /// Intelligent lists: the graph family's node algorithm.
    Ilbm,
    /// The exact optimum per source (SAT), where decided.
    Optimal,
}

impl Scheme {
    pub const ALL: [Scheme; 5] = [
        Scheme::Clbm,
        Scheme::Naulbm,
        Scheme::Aulbm,
        Scheme::Ilbm,
        Scheme::Optimal,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scheme::Clbm => "clbm",
            Scheme::Naulbm => "naulbm",
            Scheme::Aulbm => "aulbm",
            Scheme::Ilbm => "ilbm",
            Scheme::Optimal => "optimal",
        }
    }

    pub fn parse(s: &str) -> Option<Scheme> {
        Scheme::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// Knobs of a run; the defaults are what the CLI and the experiment use.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub tiebreak: Tiebreak,
    /// Seed of the CLBM greedy search and the list designer.
    pub seed: u64,
    /// Randomised greedy tries per source (CLBM).
    pub greedy_tries: u32,
    /// Moves of the universal-list designer (scaled down for graphs above 256 nodes).
    pub design_moves: u32,
    /// Largest graph for which the exact optimum is searched.
    pub optimum_max_nodes: usize,
    /// Conflict budget per SAT call.
    pub optimum_conflicts: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            tiebreak: Tiebreak::Random { seed: 1 },
            seed: 1,
            greedy_tries: 8,
            design_moves: 200,
            optimum_max_nodes: 100,
            optimum_conflicts: crate::optimum::DEFAULT_CONFLICTS,
        }
    }
}

/// Result for one source.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SourceResult {
    pub source: NodeId,
    /// Broadcast time; `None` if the scheme left nodes uninformed or (optimal) it is unknown.
    pub time: Option<u32>,
    pub eccentricity: u32,
    /// Best proved lower bound (search bound for the optimal scheme).
    pub lower_bound: u32,
    pub messages: u64,
    pub redundant: u64,
}

/// Result of one scheme on one graph.
#[derive(Clone, Debug)]
pub struct SchemeRun {
    pub scheme: Scheme,
    pub per_source: Vec<SourceResult>,
    /// List entries per node the scheme stores (over all sources for CLBM).
    pub storage: Vec<usize>,
    /// The outcome of the first requested source (for drawings).
    pub sample: Option<Outcome>,
    pub notes: Vec<String>,
}

impl SchemeRun {
    /// Worst time over sources (`None` if any is unknown).
    pub fn worst(&self) -> Option<u32> {
        self.per_source
            .iter()
            .try_fold(0, |w, r| r.time.map(|t| w.max(t)))
    }

    pub fn mean(&self) -> Option<f64> {
        let n = self.per_source.len().max(1) as f64;
        self.per_source
            .iter()
            .try_fold(0.0, |s, r| r.time.map(|t| s + f64::from(t)))
            .map(|s| s / n)
    }
}

/// Why a scheme cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SchemeError {
    #[error(
        "ILBM has node algorithms for ccc, hypercube, ring, path, mesh and torus, not for graphs from files"
    )]
    NoNodeAlgorithm,
    #[error("schedule of {scheme} from node {node} is illegal: {violation}")]
    Illegal {
        scheme: &'static str,
        node: NodeId,
        violation: crate::validate::Violation,
    },
}

/// Nodes that automorphisms map onto each other share a key (CCC: position in the cycle;
/// vertex-transitive families: one class). Used to compute each optimum once per class.
pub fn symmetry_class(g: &Graph, v: NodeId) -> usize {
    match g.kind() {
        Kind::Ccc { .. } => g.ccc_coords(v).map_or(v, |(_, p)| p),
        Kind::Hypercube { .. } | Kind::Ring { .. } | Kind::Torus { .. } => 0,
        _ => v,
    }
}

/// Diameter: closed forms for paths, rings, meshes, tori and hypercubes; otherwise one
/// eccentricity per symmetry class (h BFS runs for CCC(h,k) instead of n). Why closed forms:
/// a path's nodes are each their own class, and n BFS runs made `bcast --graph path:N`
/// quadratic even from one source (issue 14).
pub fn diameter_by_symmetry(g: &Graph) -> u32 {
    let closed = match g.kind() {
        Kind::Path { n } => Some(n - 1),
        Kind::Ring { n } => Some(n / 2),
        Kind::Mesh { w, h } => Some(w - 1 + h - 1),
        Kind::Torus { w, h } => Some(w / 2 + h / 2),
        Kind::Hypercube { d } => Some(d as usize),
        Kind::Ccc { .. } | Kind::File => None,
    };
    if let Some(d) = closed {
        return u32::try_from(d).unwrap_or(u32::MAX);
    }
    diameter_by_bfs(g)
}

/// The maximum eccentricity over one node per symmetry class.
fn diameter_by_bfs(g: &Graph) -> u32 {
    let mut seen: HashMap<usize, ()> = HashMap::new();
    (0..g.len())
        .filter(|&v| seen.insert(symmetry_class(g, v), ()).is_none())
        .map(|v| eccentricity(g, v))
        .max()
        .unwrap_or(0)
}

fn checked<P: Protocol>(
    g: &Graph,
    s: NodeId,
    p: &mut P,
    scheme: Scheme,
    tb: Tiebreak,
) -> Result<Outcome, SchemeError> {
    validated(g, s, simulate(g, s, p, tb), scheme)
}

/// `o` after the independent validator accepted its schedule and first-receipt steps.
fn validated(g: &Graph, s: NodeId, o: Outcome, scheme: Scheme) -> Result<Outcome, SchemeError> {
    check_schedule(g, s, &o.schedule, Some(&o.first_receipt)).map_err(|violation| {
        SchemeError::Illegal {
            scheme: scheme.name(),
            node: s,
            violation,
        }
    })?;
    Ok(o)
}

/// Eccentricity and lower bound of a source, computed once per symmetry class (several BFS
/// runs each: the cost that dominates all-source runs on large graphs).
struct SourceBounds<'g> {
    g: &'g Graph,
    cache: std::cell::RefCell<HashMap<usize, (u32, u32)>>,
}

impl<'g> SourceBounds<'g> {
    fn new(g: &'g Graph) -> Self {
        SourceBounds {
            g,
            cache: Default::default(),
        }
    }

    fn get(&self, s: NodeId) -> (u32, u32) {
        *self
            .cache
            .borrow_mut()
            .entry(symmetry_class(self.g, s))
            .or_insert_with(|| (eccentricity(self.g, s), lower_bound(self.g, s)))
    }

    fn result(&self, o: &Outcome) -> SourceResult {
        let (eccentricity, lower_bound) = self.get(o.source);
        SourceResult {
            source: o.source,
            time: o.time(),
            eccentricity,
            lower_bound,
            messages: o.messages(),
            redundant: o.redundant_total(),
        }
    }
}

/// Runs `scheme` from each of `sources`.
pub fn run_scheme(
    g: &Graph,
    scheme: Scheme,
    sources: &[NodeId],
    opts: &RunOptions,
) -> Result<SchemeRun, SchemeError> {
    let mut run = SchemeRun {
        scheme,
        per_source: Vec::new(),
        storage: vec![0; g.len()],
        sample: None,
        notes: Vec::new(),
    };
    let tb = opts.tiebreak;
    let bounds = SourceBounds::new(g);
    let record = |run: &mut SchemeRun, o: Outcome| {
        run.per_source.push(bounds.result(&o));
        if run.sample.is_none() {
            run.sample = Some(o);
        }
    };
    match scheme {
        Scheme::Clbm => {
            // Storage counts every source's tree, whatever sources are run.
            for s in 0..g.len() {
                let mut tree = greedy_scheme(g, s, opts.greedy_tries, opts.seed);
                // Small graphs: an optimal schedule's tree, when it beats the search.
                if g.len() <= opts.optimum_max_nodes && tree.time() > 0 {
                    let opt = optimum(
                        g,
                        s,
                        tree.time() - 1,
                        opts.optimum_conflicts,
                        opts.optimum_max_nodes,
                    );
                    if opt.exact.is_some() {
                        tree = tree_from_schedule(g.len(), s, &opt.schedule);
                    }
                }
                for (v, e) in tree.entries().into_iter().enumerate() {
                    run.storage[v] += e;
                }
                if sources.contains(&s) {
                    let o = checked(g, s, &mut tree, scheme, tb)?;
                    record(&mut run, o);
                }
            }
            run.per_source
                .sort_by_key(|r| sources.iter().position(|&s| s == r.source));
        }
        Scheme::Naulbm | Scheme::Aulbm => {
            let n = g.len() as u64;
            let moves = if n <= 256 {
                opts.design_moves
            } else {
                (u64::from(opts.design_moves) * 65_536 / (n * n)) as u32
            };
            let d = design_lists(g, scheme == Scheme::Aulbm, moves, opts.seed, tb);
            run.notes.push(format!(
                "{}: list design by local search, {} moves ({} kept): worst/total time {:?} → {:?}",
                scheme.name(),
                d.moves_tried,
                d.moves_kept,
                d.initial,
                d.cost
            ));
            run.storage = d.lists.entries();
            for &s in sources {
                let o = checked(g, s, &mut d.lists.clone(), scheme, tb)?;
                record(&mut run, o);
            }
        }
        Scheme::Ilbm => {
            // The CCCBrd plan table depends only on (h,k): build it once, and only the part
            // the requested sources' cycle positions need (a third of it for one source).
            let brd = g.ccc_params().map(|(h, k)| {
                let mut positions: Vec<usize> = sources.iter().map(|&s| s % h).collect();
                positions.sort_unstable();
                positions.dedup();
                CccBrd::for_positions(h, k as usize, positions)
            });
            for &s in sources {
                let o = match g.kind() {
                    Kind::Ccc { h, k } => match &brd {
                        // The CCC simulator (same rules, a fraction of the time on large
                        // graphs); the generic one if a tie-break could matter.
                        Some(b) => {
                            let f = ccc_fast(b, h, k as usize, (s / h, s % h), true);
                            match to_outcome(&f, s) {
                                Some(o) => validated(g, s, o, scheme)?,
                                None => checked(g, s, &mut Ilbm(b), scheme, tb)?,
                            }
                        }
                        None => return Err(SchemeError::NoNodeAlgorithm),
                    },
                    Kind::Hypercube { d } => checked(g, s, &mut Ilbm(CubeBrd { d }), scheme, tb)?,
                    Kind::Ring { n } => {
                        checked(g, s, &mut Ilbm(RingBrd { n, closed: true }), scheme, tb)?
                    }
                    Kind::Path { n } => {
                        checked(g, s, &mut Ilbm(RingBrd { n, closed: false }), scheme, tb)?
                    }
                    Kind::Mesh { w, h } => {
                        checked(g, s, &mut Ilbm(GridBrd { w, h, wrap: false }), scheme, tb)?
                    }
                    Kind::Torus { w, h } => {
                        checked(g, s, &mut Ilbm(GridBrd { w, h, wrap: true }), scheme, tb)?
                    }
                    Kind::File => return Err(SchemeError::NoNodeAlgorithm),
                };
                record(&mut run, o);
            }
            run.storage = (0..g.len()).map(|v| g.links(v).len()).collect();
        }
        Scheme::Optimal => {
            // Storage is not meaningful for the optimum (it is a CLBM with optimal trees).
            run.storage.clear();
            let mut cache: HashMap<usize, (Option<u32>, u32)> = HashMap::new();
            for &s in sources {
                let class = symmetry_class(g, s);
                let (exact, lower) = match cache.get(&class) {
                    Some(&v) => v,
                    None => {
                        // A schedule known to be achievable caps the search (not needed when
                        // the graph is too large to search at all).
                        let upper = if g.len() > opts.optimum_max_nodes {
                            0
                        } else {
                            greedy_scheme(g, s, opts.greedy_tries, opts.seed).time()
                        };
                        let opt =
                            optimum(g, s, upper, opts.optimum_conflicts, opts.optimum_max_nodes);
                        if let Some(t) = opt.exact {
                            let rep =
                                check_schedule(g, s, &opt.schedule, None).map_err(|violation| {
                                    SchemeError::Illegal {
                                        scheme: scheme.name(),
                                        node: s,
                                        violation,
                                    }
                                })?;
                            if rep.iter().any(|r| r.is_none_or(|r| r > t)) {
                                return Err(SchemeError::Illegal {
                                    scheme: scheme.name(),
                                    node: s,
                                    violation: crate::validate::Violation::BadStep {
                                        index: 0,
                                        step: t,
                                    },
                                });
                            }
                        }
                        cache.insert(class, (opt.exact, opt.lower));
                        (opt.exact, opt.lower)
                    }
                };
                // An optimal schedule never needs more than one message per informed node.
                run.per_source.push(SourceResult {
                    source: s,
                    time: exact,
                    eccentricity: bounds.get(s).0,
                    lower_bound: lower,
                    messages: exact.map_or(0, |_| g.len() as u64 - 1),
                    redundant: 0,
                });
            }
            if g.len() > opts.optimum_max_nodes {
                run.notes.push(format!(
                    "optimal: not searched above {} nodes; lower bounds only",
                    opts.optimum_max_nodes
                ));
            }
        }
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_topo::parse_graph_spec;

    /// The closed forms equal the BFS diameter on every small size of each family.
    #[test]
    fn closed_form_diameters_equal_bfs() {
        let mut specs = Vec::new();
        for n in 1..=9 {
            specs.push(format!("path:{n}"));
            specs.push(format!("hypercube:{}", n - 1));
        }
        for n in 3..=9 {
            specs.push(format!("ring:{n}"));
        }
        for w in 1..=5 {
            for h in 1..=5 {
                specs.push(format!("mesh:{w}x{h}"));
                if w >= 3 && h >= 3 {
                    specs.push(format!("torus:{w}x{h}"));
                }
            }
        }
        for spec in specs {
            let Ok(g) = parse_graph_spec(&spec) else {
                continue;
            };
            assert_eq!(diameter_by_symmetry(&g), diameter_by_bfs(&g), "{spec}");
        }
    }

    /// Issue 14: a path's diameter took one BFS per node (quadratic); the closed form is
    /// read from the kind. (CCC still takes one BFS per cycle position.)
    #[test]
    fn a_million_node_path_has_its_diameter_without_a_bfs_per_node() {
        let g = parse_graph_spec("path:1000000").unwrap();
        assert_eq!(diameter_by_symmetry(&g), 999_999);
        let g = parse_graph_spec("ccc:5,3").unwrap();
        assert_eq!(diameter_by_symmetry(&g), diameter_by_bfs(&g));
    }
}
