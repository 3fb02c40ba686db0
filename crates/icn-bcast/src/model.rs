//! The `bcast` model for experiment files: one graph, one broadcast scheme, all sources or one.
//!
//! ```toml
//! model = "bcast"
//! graph = "ccc:4,3"      # any icn-topo spec; or set ccc_k (and ccc_dh = h − k) to sweep CCC sizes
//! scheme = "ilbm"        # clbm | naulbm | aulbm | ilbm | optimal
//! source = "all"         # or a node name such as "(0,2)"
//! ```

pub mod doc;

use crate::bounds::{lemma1, sharp_claim, theorem1};
use crate::claims::{ClaimLimits, single_entry_optimum};
use crate::optimum::{Answer, decide};
use crate::schemes::{RunOptions, Scheme, diameter_by_symmetry, run_scheme, symmetry_class};
use crate::sim::Tiebreak;
use icn_engine::{Invalid, Metrics, Model, ModelError, Progress, Table};

use icn_topo::{Graph, NodeId, parse_graph_spec};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Configuration of one broadcast run. Defaults: the paper's example CCC(4,3) with CCCBrd
/// from every source.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BcastConfig {
    /// Graph spec: `ccc:H,K`, `hypercube:D`, `mesh:WxH`, `torus:WxH`, `ring:N`, `path:N`, `file:PATH`.
    pub graph: String,
    /// When > 0 the graph is CCC(ccc_k + ccc_dh, ccc_k) instead of `graph`: a cartesian sweep
    /// over `ccc_k` and `ccc_dh` then covers exactly the sizes k ≤ h ≤ k + 4.
    pub ccc_k: u32,
    /// `h − k` for `ccc_k`.
    pub ccc_dh: usize,
    /// clbm | naulbm | aulbm | ilbm | optimal.
    pub scheme: String,
    /// "all" or one node name.
    pub source: String,
    /// Keep a uniformly random one of simultaneous receptions (the paper); false: lowest sender.
    pub random_tiebreak: bool,
    /// Randomised greedy tries per source for CLBM.
    pub greedy_tries: u32,
    /// Moves of the universal-list designer.
    pub design_moves: u32,
    /// Largest graph whose exact optimum is searched.
    pub optimum_max_nodes: usize,
    /// SAT conflict budget per call.
    pub optimum_conflicts: u64,
}

impl Default for BcastConfig {
    fn default() -> Self {
        let o = RunOptions::default();
        BcastConfig {
            graph: "ccc:4,3".into(),
            ccc_k: 0,
            ccc_dh: 0,
            scheme: "ilbm".into(),
            source: "all".into(),
            random_tiebreak: true,
            greedy_tries: o.greedy_tries,
            design_moves: o.design_moves,
            optimum_max_nodes: o.optimum_max_nodes,
            optimum_conflicts: o.optimum_conflicts,
        }
    }
}

impl BcastConfig {
    /// The graph spec actually used.
    pub fn spec(&self) -> String {
        if self.ccc_k > 0 {
            format!("ccc:{},{}", self.ccc_k as usize + self.ccc_dh, self.ccc_k)
        } else {
            self.graph.clone()
        }
    }

    fn build(&self) -> Result<(Graph, Scheme, Vec<NodeId>), Invalid> {
        let key = if self.ccc_k > 0 { "ccc_k" } else { "graph" };
        let g = parse_graph_spec(&self.spec()).map_err(|e| Invalid::new(key, e.to_string()))?;
        let scheme = Scheme::parse(&self.scheme).ok_or_else(|| {
            Invalid::range(
                "scheme",
                "clbm | naulbm | aulbm | ilbm | optimal",
                &self.scheme,
            )
        })?;
        let sources = if self.source == "all" {
            (0..g.len()).collect()
        } else {
            vec![
                g.node(&self.source)
                    .map_err(|e| Invalid::new("source", e.to_string()))?,
            ]
        };
        Ok((g, scheme, sources))
    }

    fn options(&self, seed: u64) -> RunOptions {
        RunOptions {
            tiebreak: if self.random_tiebreak {
                Tiebreak::Random { seed }
            } else {
                Tiebreak::LowestSender
            },
            seed,
            greedy_tries: self.greedy_tries,
            design_moves: self.design_moves,
            optimum_max_nodes: self.optimum_max_nodes,
            optimum_conflicts: self.optimum_conflicts,
        }
    }
}

/// The broadcast model.
pub struct Bcast;

fn opt_f64(t: Option<u32>) -> f64 {
    t.map_or(f64::NAN, f64::from)
}

impl Model for Bcast {
    const NAME: &'static str = "bcast";
    const DOC: &'static icn_engine::ModelDoc = &doc::DOC;
    const ABOUT: &'static str = "Broadcast on CCC/hypercube/mesh/torus/ring/any graph: CLBM, ULBM, ILBM (CCCBrd), exact optimum";
    type Config = BcastConfig;
    /// Nothing to parse ahead of the runs: the prepared point is the validated config.
    type Prepared = BcastConfig;

    fn validate(cfg: &BcastConfig) -> Result<(), Invalid> {
        use crate::limits::{MAX_CONFLICTS, MAX_DESIGN_MOVES, MAX_GREEDY_TRIES, MAX_OPTIMUM_NODES};
        Invalid::check(
            cfg.greedy_tries <= MAX_GREEDY_TRIES,
            "greedy_tries",
            &format!("0..={MAX_GREEDY_TRIES}"),
            cfg.greedy_tries,
        )?;
        Invalid::check(
            cfg.design_moves <= MAX_DESIGN_MOVES,
            "design_moves",
            &format!("0..={MAX_DESIGN_MOVES}"),
            cfg.design_moves,
        )?;
        Invalid::check(
            cfg.optimum_max_nodes <= MAX_OPTIMUM_NODES,
            "optimum_max_nodes",
            &format!("0..={MAX_OPTIMUM_NODES}"),
            cfg.optimum_max_nodes,
        )?;
        Invalid::check(
            (1..=MAX_CONFLICTS).contains(&cfg.optimum_conflicts),
            "optimum_conflicts",
            &format!("1..={MAX_CONFLICTS}"),
            cfg.optimum_conflicts,
        )?;
        Invalid::check(
            cfg.ccc_k <= 12,
            "ccc_k",
            "0 (use `graph`) or 1..=12",
            cfg.ccc_k,
        )?;
        Invalid::check(cfg.ccc_dh <= 64, "ccc_dh", "0..=64", cfg.ccc_dh)?;
        let (g, scheme, sources) = cfg.build()?;
        if scheme == Scheme::Ilbm && g.kind() == icn_topo::Kind::File {
            return Err(Invalid::new(
                "scheme",
                "ilbm has node algorithms for ccc, hypercube, ring, path, mesh and torus only",
            ));
        }
        // A run also searches the optimum of each source's symmetry class.
        crate::limits::check(
            &g,
            &[scheme, Scheme::Optimal],
            &sources,
            &cfg.options(0),
            crate::limits::available_memory(),
        )
        .map_err(|e| {
            let key = if cfg.ccc_k > 0 && e.key == crate::limits::Key::Graph {
                "ccc_k"
            } else {
                e.key.toml()
            };
            Invalid::new(key, e.why)
        })?;
        Ok(())
    }

    fn work(cfg: &BcastConfig) -> u64 {
        cfg.build().map_or(1, |(_, _, s)| s.len() as u64)
    }

    /// The config with a `file:PATH` graph resolved against the experiment file's folder (it
    /// was read relative to the working directory), validated.
    fn prepare(cfg: &BcastConfig, ctx: &icn_engine::Context) -> Result<BcastConfig, Invalid> {
        let mut cfg = cfg.clone();
        cfg.graph = ctx.resolve_spec(&cfg.graph);
        Self::validate(&cfg)?;
        Ok(cfg)
    }

    fn run_prepared(
        cfg: &BcastConfig,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<Metrics, ModelError> {
        let (g, scheme, sources) = cfg.build()?;
        let opts = cfg.options(seed);
        let fail = |e: crate::schemes::SchemeError| ModelError::Failed(e.to_string());
        let run = run_scheme(&g, scheme, &sources, &opts).map_err(fail)?;
        progress.advance(sources.len() as u64);
        // Optimum per symmetry class of the requested sources (small graphs only).
        let (optimum, lower) = if scheme == Scheme::Optimal {
            (
                run.worst(),
                run.per_source
                    .iter()
                    .map(|r| r.lower_bound)
                    .max()
                    .unwrap_or(0),
            )
        } else {
            let mut seen: HashMap<usize, NodeId> = HashMap::new();
            for &s in &sources {
                seen.entry(symmetry_class(&g, s)).or_insert(s);
            }
            let mut reps: Vec<NodeId> = seen.into_values().collect();
            reps.sort_unstable();
            let opt = run_scheme(&g, Scheme::Optimal, &reps, &opts).map_err(fail)?;
            (
                opt.worst().filter(|_| g.len() <= cfg.optimum_max_nodes),
                opt.per_source
                    .iter()
                    .map(|r| r.lower_bound)
                    .max()
                    .unwrap_or(0),
            )
        };
        let mean_of = |f: &dyn Fn(&crate::schemes::SourceResult) -> f64| {
            run.per_source.iter().map(f).sum::<f64>() / run.per_source.len().max(1) as f64
        };
        let mut m = Metrics::default();
        m.put(&doc::WORST_STEPS, opt_f64(run.worst()));
        m.put(&doc::MEAN_STEPS, run.mean().unwrap_or(f64::NAN));
        let ccc = g.ccc_params();
        m.put(
            &doc::BOUND_THEOREM1,
            ccc.map_or(f64::NAN, |(h, k)| f64::from(theorem1(h, k))),
        );
        m.put(&doc::DIAMETER, f64::from(diameter_by_symmetry(&g)));
        m.put(&doc::OPTIMUM, opt_f64(optimum));
        m.put(&doc::LOWER_BOUND, f64::from(lower));
        m.put(&doc::MESSAGES, mean_of(&|r| r.messages as f64));
        m.put(&doc::REDUNDANT_RECEPTIONS, mean_of(&|r| r.redundant as f64));
        m.put(
            &doc::STORAGE_ENTRIES,
            run.storage
                .iter()
                .copied()
                .max()
                .map_or(f64::NAN, |v| v as f64),
        );
        if let Some((h, k)) = ccc {
            let s1 = g.ccc_node(0, k as usize - 1).unwrap_or(0);
            let one = run_scheme(&g, scheme, &[s1], &opts).map_err(fail)?;
            let k1_opt = run_scheme(
                &g,
                Scheme::Optimal,
                &[s1],
                &RunOptions {
                    optimum_max_nodes: cfg.optimum_max_nodes.max(300),
                    ..opts.clone()
                },
            )
            .map_err(fail)?;
            let deadlines: Vec<(NodeId, u32)> = (0..k)
                .map(|i| (g.ccc_node(1 << i, i as usize).unwrap_or(0), lemma1(k, i)))
                .collect();
            let lemma = match (scheme, one.sample.as_ref(), k1_opt.worst()) {
                (Scheme::Optimal, _, Some(t)) => {
                    match decide(&g, s1, t, &deadlines, cfg.optimum_conflicts) {
                        Answer::Yes(_) => 1.0,
                        Answer::No => 0.0,
                        Answer::Unknown => f64::NAN,
                    }
                }
                (Scheme::Optimal, _, None) => f64::NAN,
                (_, Some(o), _) => f64::from(u8::from(
                    deadlines
                        .iter()
                        .all(|&(v, d)| o.first_receipt[v].is_some_and(|t| t <= d)),
                )),
                _ => f64::NAN,
            };
            m.put(&doc::SHARP_BOUND, f64::from(sharp_claim(h, k)));
            m.put(&doc::SOURCE_K1_STEPS, opt_f64(one.worst()));
            m.put(&doc::SOURCE_K1_OPTIMUM, opt_f64(k1_opt.worst()));
            m.put(&doc::LEMMA1_HOLDS, lemma);
            // Best broadcast entering every cycle once (CCCBrd's class), capped by CCCBrd.
            let brd = run_scheme(&g, Scheme::Ilbm, &[s1], &opts).map_err(fail)?;
            let single = brd.worst().map(|upper| {
                let lim = ClaimLimits {
                    all_sources_max_nodes: 0,
                    k1_max_nodes: cfg.optimum_max_nodes.max(300),
                    conflicts: cfg.optimum_conflicts,
                };
                single_entry_optimum(&g, s1, upper, &lim, lim.k1_max_nodes)
            });
            m.put(
                &doc::SOURCE_K1_SINGLE_ENTRY,
                opt_f64(single.and_then(|k| k.exact())),
            );
        }
        m.tables.push(Table {
            name: "per_source".into(),
            columns: [
                "source",
                "steps",
                "eccentricity",
                "lower_bound",
                "messages",
                "redundant",
            ]
            .map(String::from)
            .to_vec(),
            rows: run
                .per_source
                .iter()
                .map(|r| {
                    vec![
                        r.source as f64,
                        opt_f64(r.time),
                        f64::from(r.eccentricity),
                        f64::from(r.lower_bound),
                        r.messages as f64,
                        r.redundant as f64,
                    ]
                })
                .collect(),
            ci95: vec![],
        });
        m.notes.extend(run.notes);
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_engine::model::NoProgress;

    #[test]
    fn default_is_ccc_4_3_and_meets_theorem1() {
        let cfg = BcastConfig::default();
        Bcast::validate(&cfg).unwrap();
        let m = Bcast::run(&cfg, 1, &NoProgress).unwrap();
        assert_eq!(m.require("bound_theorem1").unwrap(), 9.0);
        assert!(m.require("worst_steps").unwrap() <= 9.0);
        assert_eq!(m.require("optimum").unwrap(), 8.0);
        assert_eq!(m.require("diameter").unwrap(), 7.0);
        assert_eq!(m.require("source_k1_optimum").unwrap(), 7.0);
        assert_eq!(m.require("source_k1_single_entry").unwrap(), 7.0);
        assert_eq!(m.require("lemma1_holds").unwrap(), 1.0);
        assert_eq!(m.table("per_source").unwrap().rows.len(), 32);
    }

    #[test]
    fn bad_config_names_the_key() {
        let bad = |f: &dyn Fn(&mut BcastConfig)| {
            let mut c = BcastConfig::default();
            f(&mut c);
            Bcast::validate(&c).unwrap_err().key
        };
        assert_eq!(bad(&|c| c.graph = "ccc:2,3".into()), "graph");
        assert_eq!(bad(&|c| c.scheme = "magic".into()), "scheme");
        assert_eq!(bad(&|c| c.source = "(99,0)".into()), "source");
        assert_eq!(bad(&|c| c.ccc_k = 13), "ccc_k");
        assert_eq!(bad(&|c| c.ccc_dh = 65), "ccc_dh");
        assert_eq!(bad(&|c| c.design_moves = u32::MAX), "design_moves");
    }

    #[test]
    fn ccc_sweep_keys_select_the_size() {
        let cfg = BcastConfig {
            ccc_k: 2,
            ccc_dh: 1,
            scheme: "optimal".into(),
            ..Default::default()
        };
        assert_eq!(cfg.spec(), "ccc:3,2");
        let m = Bcast::run(&cfg, 1, &NoProgress).unwrap();
        // CCC(3,2): optimum 5 = Theorem 1; from (0,1) the optimum 5 exceeds the sharp claim 4.
        assert_eq!(m.require("optimum").unwrap(), 5.0);
        assert_eq!(m.require("bound_theorem1").unwrap(), 5.0);
        assert_eq!(m.require("source_k1_optimum").unwrap(), 5.0);
        assert_eq!(m.require("source_k1_single_entry").unwrap(), 5.0);
        assert_eq!(m.require("sharp_bound").unwrap(), 4.0);
        assert_eq!(m.require("lemma1_holds").unwrap(), 1.0);
    }

    #[test]
    fn runs_are_a_pure_function_of_config_and_seed() {
        let cfg = BcastConfig {
            graph: "mesh:4x4".into(),
            scheme: "aulbm".into(),
            design_moves: 30,
            ..Default::default()
        };
        let a = Bcast::run(&cfg, 7, &NoProgress).unwrap();
        let b = Bcast::run(&cfg, 7, &NoProgress).unwrap();
        // Debug text, since NaN (no Theorem 1 bound on a mesh) is not equal to itself.
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        assert!(a.require("bound_theorem1").unwrap().is_nan());
        assert_eq!(a.require("optimum").unwrap(), 6.0);
    }
}
