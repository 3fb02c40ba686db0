//! The rows of the `bcast` reports, as serialisable values: one model run on one graph
//! ([`GraphComparison`], its summary rows, per-source rows and JSON report) and the claims
//! table as CSV records.
//!
//! Why a module of rows: the CLI used to compute these in the binary and quote its CSVs by
//! hand (a node name with a `"` in it broke `per_source.csv`). Here every CSV goes through the
//! `csv` crate ([`to_csv`]), and the binary only renders what this module returns.

use crate::bounds::theorem1;
use crate::claims::ClaimRow;
use crate::schemes::{RunOptions, Scheme, SchemeError, SchemeRun, SourceResult};
use crate::schemes::{diameter_by_symmetry, run_scheme};
use icn_topo::{Graph, NodeId};
use serde::{Serialize, Serializer};

/// Why a broadcast report could not be computed or written.
#[derive(Debug, thiserror::Error)]
pub enum BcastError {
    #[error(transparent)]
    Topo(#[from] icn_topo::TopoError),
    #[error(transparent)]
    Scheme(#[from] SchemeError),
    #[error("CSV: {0}")]
    Csv(#[from] csv::Error),
}

/// `records` as CSV text: a header from the field names, then one line per record, quoted
/// where a field needs it (comma, quote, line break).
pub fn to_csv<T: Serialize>(records: impl IntoIterator<Item = T>) -> Result<String, BcastError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in records {
        w.serialize(r)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    // Every field is a number, a bool or a `String`: the bytes are UTF-8.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `None` as `-`, the spelling of "unknown" in the text table and `per_source.csv`.
fn dash_if_none<S: Serializer>(v: &Option<u32>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(t) => s.serialize_u32(*t),
        None => s.serialize_str("-"),
    }
}

/// Several models run on one graph from the same sources, with the graph's bounds.
#[derive(Clone, Debug)]
pub struct GraphComparison {
    pub nodes: usize,
    pub links: usize,
    pub diameter: u32,
    /// Theorem 1's bound (CCC only).
    pub theorem1_bound: Option<u32>,
    /// Worst optimum over the sources: from an `optimal` run if asked for, otherwise
    /// searched when the graph has at most `opts.optimum_max_nodes` nodes.
    pub optimum_worst: Option<u32>,
    pub runs: Vec<SchemeRun>,
}

impl GraphComparison {
    /// Runs each of `schemes` from `sources` of `g`.
    pub fn run(
        g: &Graph,
        schemes: &[Scheme],
        sources: &[NodeId],
        opts: &RunOptions,
    ) -> Result<GraphComparison, SchemeError> {
        let runs = schemes
            .iter()
            .map(|&m| run_scheme(g, m, sources, opts))
            .collect::<Result<Vec<_>, _>>()?;
        let optimum_worst = match runs.iter().find(|r| r.scheme == Scheme::Optimal) {
            Some(r) => r.worst(),
            None if g.len() <= opts.optimum_max_nodes => {
                run_scheme(g, Scheme::Optimal, sources, opts)?.worst()
            }
            None => None,
        };
        Ok(GraphComparison {
            nodes: g.len(),
            links: g.edge_count(),
            diameter: diameter_by_symmetry(g),
            theorem1_bound: g.ccc_params().map(|(h, k)| theorem1(h, k)),
            optimum_worst,
            runs,
        })
    }

    /// One row per model: the text table's content.
    pub fn summary(&self) -> Vec<SummaryRow> {
        self.runs
            .iter()
            .map(|r| {
                let n = r.per_source.len().max(1) as f64;
                SummaryRow {
                    model: r.scheme.name(),
                    worst: r.worst(),
                    mean: r.mean(),
                    bound: self.theorem1_bound,
                    diameter: self.diameter,
                    optimum: self.optimum_worst,
                    lower: r.per_source.iter().map(|x| x.lower_bound).max(),
                    messages: r.per_source.iter().map(|x| x.messages as f64).sum::<f64>() / n,
                    redundant: r.per_source.iter().map(|x| x.redundant as f64).sum::<f64>() / n,
                    storage: r.storage.iter().copied().max(),
                }
            })
            .collect()
    }

    /// One row per (model, source), names from `g`.
    pub fn per_source(&self, g: &Graph) -> Vec<PerSourceRow> {
        self.runs
            .iter()
            .flat_map(|r| {
                r.per_source.iter().map(move |x| PerSourceRow {
                    model: r.scheme.name(),
                    source: x.source,
                    name: g.name(x.source).into_owned(),
                    steps: x.time,
                    eccentricity: x.eccentricity,
                    lower_bound: x.lower_bound,
                    messages: x.messages,
                    redundant: x.redundant,
                })
            })
            .collect()
    }

    /// The JSON report of `spec`.
    pub fn report<'a>(&'a self, spec: &'a str) -> Report<'a> {
        Report {
            graph: spec,
            nodes: self.nodes,
            links: self.links,
            diameter: self.diameter,
            theorem1_bound: self.theorem1_bound,
            optimum_worst: self.optimum_worst,
            models: self
                .runs
                .iter()
                .map(|r| ModelReport {
                    model: r.scheme.name(),
                    worst_steps: r.worst(),
                    mean_steps: r.mean(),
                    storage_max_entries: r.storage.iter().copied().max(),
                    per_source: &r.per_source,
                    notes: &r.notes,
                })
                .collect(),
        }
    }
}

/// One model's line of the text table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryRow {
    pub model: &'static str,
    /// Worst time over the sources (`None`: some source left nodes uninformed or undecided).
    pub worst: Option<u32>,
    pub mean: Option<f64>,
    /// Theorem 1 (CCC only).
    pub bound: Option<u32>,
    pub diameter: u32,
    pub optimum: Option<u32>,
    /// Largest lower bound over the sources.
    pub lower: Option<u32>,
    /// Messages per broadcast, mean over the sources.
    pub messages: f64,
    /// Receptions not kept per broadcast, mean over the sources.
    pub redundant: f64,
    /// List entries of the busiest node.
    pub storage: Option<usize>,
}

/// One line of `per_source.csv`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerSourceRow {
    pub model: &'static str,
    pub source: NodeId,
    pub name: String,
    #[serde(serialize_with = "dash_if_none")]
    pub steps: Option<u32>,
    pub eccentricity: u32,
    pub lower_bound: u32,
    pub messages: u64,
    pub redundant: u64,
}

/// `report.json` of `icnlab bcast`.
#[derive(Serialize)]
pub struct Report<'a> {
    pub graph: &'a str,
    pub nodes: usize,
    pub links: usize,
    pub diameter: u32,
    pub theorem1_bound: Option<u32>,
    pub optimum_worst: Option<u32>,
    pub models: Vec<ModelReport<'a>>,
}

/// One model in [`Report`].
#[derive(Serialize)]
pub struct ModelReport<'a> {
    pub model: &'static str,
    pub worst_steps: Option<u32>,
    pub mean_steps: Option<f64>,
    pub storage_max_entries: Option<usize>,
    pub per_source: &'a [SourceResult],
    pub notes: &'a [String],
}

/// One line of `claims.csv`: a [`ClaimRow`] flattened, each `Known` as its lower value and
/// whether it is exact.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimCsvRow {
    pub h: usize,
    pub k: u32,
    pub nodes: usize,
    pub diameter: u32,
    pub theorem1: u32,
    pub cccbrd_worst: u32,
    pub single_entry_worst_lower: u32,
    pub single_entry_worst_exact: bool,
    pub optimum_worst_lower: u32,
    pub optimum_worst_exact: bool,
    pub sharp: u32,
    pub cccbrd_k1: u32,
    pub single_entry_k1_lower: u32,
    pub single_entry_k1_exact: bool,
    pub optimum_k1_lower: u32,
    pub optimum_k1_exact: bool,
    pub lemma1_cccbrd: bool,
}

impl From<&ClaimRow> for ClaimCsvRow {
    fn from(r: &ClaimRow) -> Self {
        ClaimCsvRow {
            h: r.h,
            k: r.k,
            nodes: r.nodes,
            diameter: r.diameter,
            theorem1: r.theorem1,
            cccbrd_worst: r.cccbrd_worst,
            single_entry_worst_lower: r.single_entry_worst.lower(),
            single_entry_worst_exact: r.single_entry_worst.exact().is_some(),
            optimum_worst_lower: r.optimum_worst.lower(),
            optimum_worst_exact: r.optimum_worst.exact().is_some(),
            sharp: r.sharp,
            cccbrd_k1: r.cccbrd_k1,
            single_entry_k1_lower: r.single_entry_k1.lower(),
            single_entry_k1_exact: r.single_entry_k1.exact().is_some(),
            optimum_k1_lower: r.optimum_k1.lower(),
            optimum_k1_exact: r.optimum_k1.exact().is_some(),
            lemma1_cccbrd: r.lemma1_cccbrd,
        }
    }
}

/// `claims.csv`.
pub fn claims_csv(rows: &[ClaimRow]) -> Result<String, BcastError> {
    to_csv(rows.iter().map(ClaimCsvRow::from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_topo::parse_graph_spec;

    /// Issue 14: names were written as `"{name}"` without escaping, so a node named `a"b`
    /// (possible in a file graph) produced a line with an unbalanced quote.
    #[test]
    fn per_source_csv_escapes_names_with_quotes_and_commas() {
        let row = |name: &str| PerSourceRow {
            model: "clbm",
            source: 0,
            name: name.into(),
            steps: None,
            eccentricity: 2,
            lower_bound: 2,
            messages: 3,
            redundant: 0,
        };
        let text = to_csv([row("a\"b"), row("(0,2)"), row("x")]).unwrap();
        assert_eq!(
            text,
            "model,source,name,steps,eccentricity,lower_bound,messages,redundant\n\
             clbm,0,\"a\"\"b\",-,2,2,3,0\n\
             clbm,0,\"(0,2)\",-,2,2,3,0\n\
             clbm,0,x,-,2,2,3,0\n"
        );
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let names: Vec<String> = r.records().map(|x| x.unwrap()[2].to_owned()).collect();
        assert_eq!(names, ["a\"b", "(0,2)", "x"]);
    }

    /// CCC(3,2) with ILBM from every source: every value derived by hand.
    #[test]
    fn comparison_rows_on_ccc_3_2() {
        let g = parse_graph_spec("ccc:3,2").unwrap();
        let sources: Vec<NodeId> = (0..g.len()).collect();
        let c =
            GraphComparison::run(&g, &[Scheme::Ilbm], &sources, &RunOptions::default()).unwrap();
        // 12 nodes; 4 cycles of 3 links, and 2 L links at each of the positions 0 and 1.
        assert_eq!((c.nodes, c.links, c.diameter), (12, 16, 5));
        assert_eq!((c.theorem1_bound, c.optimum_worst), (Some(5), Some(5)));
        let s = &c.summary()[0];
        // CCCBrd enters every cycle once: 6 steps from (c,2), one more than the optimum.
        assert_eq!((s.model, s.worst, s.storage), ("ilbm", Some(6), Some(3)));
        // Every node but the source receives at least one message.
        assert!(s.messages >= 11.0);
        let rows = c.per_source(&g);
        assert_eq!(rows.len(), 12);
        assert_eq!(rows[0].name, "(0,0)");
        let csv = to_csv(rows).unwrap();
        assert_eq!(csv.lines().count(), 13);
        assert!(csv.lines().nth(1).unwrap().starts_with("ilbm,0,\"(0,0)\","));
    }
}
