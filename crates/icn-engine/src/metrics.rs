//! The uniform result of one model run, and its aggregation over replications.
//!
//! A run yields scalar [`Metric`]s (in a fixed order the model chooses) and optional
//! [`Table`]s (per-source throughput, per-node first-receipt steps, ...). Replications of the
//! same point are combined by [`Metrics::aggregate`] into means with 95 % confidence
//! half-widths, scalar by scalar and cell by cell.

use crate::stats::mean_ci95;
use serde::{Deserialize, Serialize};

/// One named scalar result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Column name in CSVs: lower_snake_case, no spaces.
    pub name: String,
    pub value: f64,
    /// Half-width of the 95 % confidence interval over replications, when there were ≥ 2.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ci95: Option<f64>,
    /// Unit for humans ("cycles", "GB/s", "" for ratios).
    #[serde(default)]
    pub unit: String,
    /// One-line meaning, shown in reports.
    #[serde(default)]
    pub about: String,
}

/// A table of numbers, one row per entity (source node, graph node, message size, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub name: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<f64>>,
    /// Per-cell 95 % half-widths after aggregation (same shape as `rows`); empty for one run.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub ci95: Vec<Vec<f64>>,
}

/// Everything one run (or the aggregate of several replications) measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub scalars: Vec<Metric>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub tables: Vec<Table>,
    /// Free-form notes the model wants a reader to see (calibration, warnings).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notes: Vec<String>,
}

impl Metrics {
    /// Appends a scalar.
    pub fn push(&mut self, name: &str, value: f64, unit: &str, about: &str) -> &mut Self {
        self.scalars.push(Metric {
            name: name.to_owned(),
            value,
            ci95: None,
            unit: unit.to_owned(),
            about: about.to_owned(),
        });
        self
    }

    pub fn get(&self, name: &str) -> Option<&Metric> {
        self.scalars.iter().find(|m| m.name == name)
    }

    /// The value of scalar `name`; NaN when absent.
    pub fn value(&self, name: &str) -> f64 {
        self.get(name).map_or(f64::NAN, |m| m.value)
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// Combines replications of one configuration into means with 95 % CIs.
    ///
    /// Scalars are matched by name in the first replication's order; tables by name and
    /// cell position. A replication lacking a metric contributes NaN, which the CI skips.
    pub fn aggregate(reps: &[Metrics]) -> Metrics {
        let Some(first) = reps.first() else {
            return Metrics::default();
        };
        let scalars = first
            .scalars
            .iter()
            .map(|m| {
                let samples: Vec<f64> = reps.iter().map(|r| r.value(&m.name)).collect();
                let (value, ci95) = mean_ci95(&samples);
                Metric {
                    value,
                    ci95,
                    ..m.clone()
                }
            })
            .collect();
        let tables = first
            .tables
            .iter()
            .map(|t| {
                let cell = |r: &Metrics, i: usize, j: usize| {
                    r.table(&t.name)
                        .and_then(|t| t.rows.get(i))
                        .and_then(|row| row.get(j))
                        .copied()
                        .unwrap_or(f64::NAN)
                };
                let mut rows = t.rows.clone();
                let mut ci = t.rows.clone();
                for (i, row) in t.rows.iter().enumerate() {
                    for j in 0..row.len() {
                        let samples: Vec<f64> = reps.iter().map(|r| cell(r, i, j)).collect();
                        let (mean, half) = mean_ci95(&samples);
                        rows[i][j] = mean;
                        ci[i][j] = half.unwrap_or(f64::NAN);
                    }
                }
                let ci95 = if reps.len() > 1 { ci } else { Vec::new() };
                Table {
                    name: t.name.clone(),
                    columns: t.columns.clone(),
                    rows,
                    ci95,
                }
            })
            .collect();
        let mut notes: Vec<String> = Vec::new();
        for n in reps.iter().flat_map(|r| &r.notes) {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
        Metrics {
            scalars,
            tables,
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(x: f64) -> Metrics {
        let mut m = Metrics::default();
        m.push("eta", x, "", "utilisation");
        m.tables.push(Table {
            name: "per_source".into(),
            columns: vec!["source".into(), "throughput".into()],
            rows: vec![vec![0.0, x], vec![1.0, 2.0 * x]],
            ci95: vec![],
        });
        m
    }

    #[test]
    fn aggregate_means_scalars_and_cells() {
        let agg = Metrics::aggregate(&[rep(1.0), rep(3.0)]);
        assert_eq!(agg.value("eta"), 2.0);
        // t(0.975, 1) = 12.7062; s = sqrt(2); half = 12.7062 * sqrt(2) / sqrt(2).
        assert!((agg.get("eta").unwrap().ci95.unwrap() - 12.7062).abs() < 1e-3);
        let t = agg.table("per_source").unwrap();
        assert_eq!(t.rows, vec![vec![0.0, 2.0], vec![1.0, 4.0]]);
        assert_eq!(t.ci95[0][0], 0.0);
    }

    #[test]
    fn single_replication_has_no_ci() {
        let agg = Metrics::aggregate(&[rep(1.5)]);
        assert_eq!(agg.get("eta").unwrap().ci95, None);
        assert!(agg.tables[0].ci95.is_empty());
    }
}
