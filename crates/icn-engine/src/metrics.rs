//! The uniform result of one model run, and its aggregation over replications.
//!
//! A run yields scalar [`Metric`]s (in a fixed order the model chooses) and optional
//! [`Table`]s (per-source throughput, per-node first-receipt steps, ...). Replications of the
//! same point are combined by [`Metrics::aggregate`] into means with 95 % confidence
//! half-widths, scalar by scalar and cell by cell.
//!
//! Every replication also carries a [`Status`]: a load the network could not accept
//! (saturated: a result, not an error), a deadlock the model reported, a drain that hit its
//! limit while the network kept up, or a failure. Why: a deadlocked replication's latency is garbage, and averaging it
//! with good ones printed a plausible-looking mean with an error bar down to −3600 cycles.
//! [`Metrics::aggregate`] therefore averages only the `ok` replications and records how all of
//! them ended in [`Metrics::runs`], so every report can state what its means cover.

use crate::stats::mean_ci95;
use serde::{Deserialize, Serialize};

/// JSON has no NaN: serde_json writes it as `null`. Reading `null` back as NaN lets a report
/// with a missing value (a flagged point, an undefined bound) be read again by `merge` and
/// `plot` instead of failing to parse.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn nan_cells_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Vec<f64>>, D::Error> {
    let cells = Vec::<Vec<Option<f64>>>::deserialize(d)?;
    Ok(cells
        .into_iter()
        .map(|row| row.into_iter().map(|c| c.unwrap_or(f64::NAN)).collect())
        .collect())
}

/// One named scalar result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Column name in CSVs: lower_snake_case, no spaces.
    pub name: String,
    /// NaN (no value, e.g. no ok replication) is written as JSON `null` and read back as NaN.
    #[serde(deserialize_with = "nan_if_null")]
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
    #[serde(deserialize_with = "nan_cells_if_null")]
    pub rows: Vec<Vec<f64>>,
    /// Per-cell 95 % half-widths after aggregation (same shape as `rows`); empty for one run.
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        default,
        deserialize_with = "nan_cells_if_null"
    )]
    pub ci95: Vec<Vec<f64>>,
}

impl Table {
    /// A table the model declares in its [`ModelDoc`](crate::doc::ModelDoc), with its name
    /// and columns, and `rows` in the order of those columns.
    pub fn new(doc: &crate::doc::OutputTable, rows: Vec<Vec<f64>>) -> Table {
        Table {
            name: doc.name.to_owned(),
            columns: doc.columns.iter().map(|c| (*c).to_owned()).collect(),
            rows,
            ci95: Vec::new(),
        }
    }
}

/// How one replication ended. Only `Ok` replications enter the means.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "why")]
pub enum Status {
    /// Ran to the end and drained: its numbers mean what they say.
    #[default]
    Ok,
    /// The offered load exceeds what the network accepts: the queues grew without bound, so
    /// the accepted throughput is measured but the latency is unbounded (the measured value is
    /// a lower bound). The answer a load sweep is run for, not an error.
    Saturated(String),
    /// The model detected a deadlock (with its diagnosis).
    Deadlocked(String),
    /// Measured traffic was still in flight when the drain limit was reached although the
    /// network was keeping up with the load (the drain was too short, or `drain = 0`).
    DrainLimit(String),
    /// The run failed (the model's error message).
    Failed(String),
}

impl Status {
    pub fn is_ok(&self) -> bool {
        *self == Status::Ok
    }

    /// True for the statuses that are results (ok, saturated): a run whose replications all
    /// end so exits 0.
    pub fn is_result(&self) -> bool {
        matches!(self, Status::Ok | Status::Saturated(_))
    }

    /// "ok", "saturated", "deadlocked", "drain_limit", "failed": the CSV and summary spelling.
    pub fn kind(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Saturated(_) => "saturated",
            Status::Deadlocked(_) => "deadlocked",
            Status::DrainLimit(_) => "drain_limit",
            Status::Failed(_) => "failed",
        }
    }

    /// The diagnosis or error message (empty for `Ok`).
    pub fn why(&self) -> &str {
        match self {
            Status::Ok => "",
            Status::Saturated(w)
            | Status::Deadlocked(w)
            | Status::DrainLimit(w)
            | Status::Failed(w) => w,
        }
    }

    /// The status a model that reports scalars `deadlocked` (0/1) and `unfinished` (messages
    /// not delivered by the end of the drain) implies, for models that do not set one.
    pub fn from_scalars(m: &Metrics) -> Status {
        let positive = |name: &str| m.get(name).is_some_and(|s| s.value > 0.0);
        if positive("deadlocked") {
            Status::Deadlocked("the model reported deadlocked = 1".into())
        } else if positive("unfinished") {
            Status::DrainLimit(format!(
                "{} measured messages undelivered at the end of the drain",
                m.get("unfinished").map_or(0.0, |s| s.value)
            ))
        } else {
            Status::Ok
        }
    }
}

/// How the replications of one point ended: counts per [`Status`] kind and the distinct
/// diagnoses, so a point's means can say how many runs they cover.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCounts {
    pub ok: u32,
    /// Reports of older versions have no saturated count (such runs were drain limits).
    #[serde(default)]
    pub saturated: u32,
    pub deadlocked: u32,
    pub drain_limit: u32,
    pub failed: u32,
    /// Distinct non-ok diagnoses, prefixed by their kind ("deadlocked: ...").
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub why: Vec<String>,
}

impl StatusCounts {
    pub fn of(statuses: &[&Status]) -> StatusCounts {
        let mut c = StatusCounts::default();
        for s in statuses {
            match s {
                Status::Ok => c.ok += 1,
                Status::Saturated(_) => c.saturated += 1,
                Status::Deadlocked(_) => c.deadlocked += 1,
                Status::DrainLimit(_) => c.drain_limit += 1,
                Status::Failed(_) => c.failed += 1,
            }
            let why = format!("{}: {}", s.kind(), s.why());
            if !s.is_ok() && !c.why.contains(&why) {
                c.why.push(why);
            }
        }
        c
    }

    pub fn total(&self) -> u32 {
        self.ok + self.saturated + self.deadlocked + self.drain_limit + self.failed
    }

    /// True when every replication ended as a result (ok or saturated), none deadlocked,
    /// hit the drain limit or failed.
    pub fn all_results(&self) -> bool {
        self.ok + self.saturated == self.total()
    }

    /// True when every replication ended `Ok`.
    pub fn all_ok(&self) -> bool {
        self.ok == self.total()
    }

    /// "2 of 3 ok, 1 deadlocked" (just "3 ok" when all are).
    pub fn label(&self) -> String {
        if self.all_ok() {
            return format!("{} ok", self.ok);
        }
        let mut s = format!("{} of {} ok", self.ok, self.total());
        for (n, kind) in [
            (self.saturated, "saturated"),
            (self.deadlocked, "deadlocked"),
            (self.drain_limit, "hit the drain limit"),
            (self.failed, "failed"),
        ] {
            if n > 0 {
                s.push_str(&format!(", {n} {kind}"));
            }
        }
        s
    }
}

/// A metric name that a run did not produce (see [`Metrics::require`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("no metric `{name}` (have: {})", have.join(", "))]
pub struct UnknownMetric {
    pub name: String,
    pub have: Vec<String>,
}

impl From<UnknownMetric> for crate::model::ModelError {
    fn from(e: UnknownMetric) -> Self {
        crate::model::ModelError::Failed(e.to_string())
    }
}

/// Everything one run (or the aggregate of several replications) measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// How this replication ended (set by the model; old reports without it parse as ok).
    #[serde(skip_serializing_if = "Status::is_ok", default)]
    pub status: Status,
    /// After [`Metrics::aggregate`]: how the replications ended. `None` for a single run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub runs: Option<StatusCounts>,
    pub scalars: Vec<Metric>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub tables: Vec<Table>,
    /// Free-form notes the model wants a reader to see (calibration, warnings).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notes: Vec<String>,
}

impl Metrics {
    /// Everything a run reports (status, scalars, tables, notes) as exact text, for tests
    /// that two runs are bit-identical (at other thread or rank counts): `{:?}` of an `f64`
    /// round-trips, and unlike `==` a NaN equals itself.
    pub fn fingerprint(&self) -> String {
        format!(
            "{:?}|{:?}|{:?}|{:?}",
            self.status, self.scalars, self.tables, self.notes
        )
    }

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

    /// Appends a scalar the model declares in its [`ModelDoc`](crate::doc::ModelDoc): its
    /// name, unit and meaning are the documented ones.
    pub fn put(&mut self, output: &crate::doc::Output, value: f64) -> &mut Self {
        self.push(output.name, value, output.unit, output.meaning)
    }

    /// As [`Metrics::put`], under the output's name followed by `suffix` (one of the
    /// model's [`Suffix`](crate::doc::Suffix)es, or empty).
    pub fn put_suffixed(
        &mut self,
        output: &crate::doc::Output,
        suffix: &str,
        value: f64,
    ) -> &mut Self {
        self.push(
            &format!("{}{suffix}", output.name),
            value,
            output.unit,
            output.meaning,
        )
    }

    pub fn get(&self, name: &str) -> Option<&Metric> {
        self.scalars.iter().find(|m| m.name == name)
    }

    /// The value of scalar `name`, or an error naming it and the scalars there are.
    ///
    /// The only accessor by name that yields a number. Why: a `value(name) -> f64` that
    /// answered NaN for a name the run does not produce turned a misspelt metric into a NaN
    /// travelling silently through ratios and plots (issue 14). Where absence is expected
    /// (a display of a failed point), [`Metrics::get`] says so with an `Option`.
    ///
    /// ```compile_fail
    /// // Issue 14: there is no by-name accessor that answers NaN for a misspelt name.
    /// let m = icn_engine::Metrics::default();
    /// let latency: f64 = m.value("latency_maen");
    /// ```
    ///
    /// ```
    /// let mut m = icn_engine::Metrics::default();
    /// m.push("latency_mean", 12.5, "cycles", "mean latency");
    /// assert_eq!(m.require("latency_mean"), Ok(12.5));
    /// let typo = m.require("latency_maen").unwrap_err();
    /// assert_eq!(typo.to_string(), "no metric `latency_maen` (have: latency_mean)");
    /// ```
    pub fn require(&self, name: &str) -> Result<f64, UnknownMetric> {
        self.get(name)
            .map(|m| m.value)
            .ok_or_else(|| UnknownMetric {
                name: name.to_owned(),
                have: self.scalars.iter().map(|m| m.name.clone()).collect(),
            })
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// A replication that produced no numbers, only a status (a run that returned an error).
    pub fn failed(status: Status) -> Metrics {
        Metrics {
            status,
            ..Metrics::default()
        }
    }

    /// Combines replications of one configuration into means with 95 % CIs over the `ok`
    /// replications only; [`Metrics::runs`] counts how all of them ended, and
    /// [`Metrics::status`] is the first status that is not a result (deadlock, drain limit,
    /// failure), else the first saturated one (so a flagged point stays flagged).
    ///
    /// Scalars are matched by name in the order of the first replication that has any (an ok
    /// one preferred); tables by name and cell position. An ok replication lacking a metric
    /// contributes NaN, which the CI skips. With no ok replication every value is NaN, except
    /// when every replication saturated or hit the drain limit: a point past saturation, whose
    /// means over those replications are kept (the accepted throughput is measured; latencies
    /// are lower bounds) and drawn marked, so a load–latency curve still shows where it
    /// saturates.
    pub fn aggregate(all: &[Metrics]) -> Metrics {
        let statuses: Vec<&Status> = all.iter().map(|r| &r.status).collect();
        let runs = StatusCounts::of(&statuses);
        // A deadlock or failure outranks saturation: it is what the point must be read for.
        let status = statuses
            .iter()
            .find(|s| !s.is_result())
            .or_else(|| statuses.iter().find(|s| !s.is_ok()))
            .map_or(Status::Ok, |s| (*s).clone());
        let mut ok: Vec<Metrics> = all.iter().filter(|r| r.status.is_ok()).cloned().collect();
        if ok.is_empty()
            && all
                .iter()
                .all(|r| matches!(r.status, Status::Saturated(_) | Status::DrainLimit(_)))
        {
            ok = all.to_vec();
        }
        let shape = all
            .iter()
            .filter(|r| !r.scalars.is_empty() || !r.tables.is_empty())
            .min_by_key(|r| !r.status.is_ok());
        let mut agg = shape.map_or_else(Metrics::default, |first| Self::aggregate_ok(first, &ok));
        for n in all.iter().flat_map(|r| &r.notes) {
            if !agg.notes.contains(n) {
                agg.notes.push(n.clone());
            }
        }
        agg.status = status;
        agg.runs = Some(runs);
        agg
    }

    /// Means and CIs of `reps` (all ok) in the shape of `first`.
    fn aggregate_ok(first: &Metrics, reps: &[Metrics]) -> Metrics {
        let scalars = first
            .scalars
            .iter()
            .map(|m| {
                let samples: Vec<f64> = reps
                    .iter()
                    .map(|r| r.get(&m.name).map_or(f64::NAN, |x| x.value))
                    .collect();
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
        Metrics {
            scalars,
            tables,
            ..Metrics::default()
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
        assert_eq!(agg.require("eta").unwrap(), 2.0);
        // t(0.975, 1) = 12.7062; s = sqrt(2); half = 12.7062 * sqrt(2) / sqrt(2).
        assert!((agg.get("eta").unwrap().ci95.unwrap() - 12.7062).abs() < 1e-3);
        let t = agg.table("per_source").unwrap();
        assert_eq!(t.rows, vec![vec![0.0, 2.0], vec![1.0, 4.0]]);
        assert_eq!(t.ci95[0][0], 0.0);
    }

    fn with_status(x: f64, status: Status) -> Metrics {
        Metrics { status, ..rep(x) }
    }

    /// Issue 14: a deadlocked replication (latency 10 000) was averaged with two good ones.
    #[test]
    fn aggregate_averages_only_ok_replications_and_counts_the_rest() {
        let agg = Metrics::aggregate(&[
            rep(1.0),
            with_status(10_000.0, Status::Deadlocked("cycle s0 -> s1 -> s0".into())),
            rep(3.0),
            Metrics::failed(Status::Failed("boom".into())),
        ]);
        assert_eq!(agg.require("eta").unwrap(), 2.0);
        assert_eq!(agg.table("per_source").unwrap().rows[0][1], 2.0);
        let runs = agg.runs.clone().unwrap();
        assert_eq!(
            (
                runs.ok,
                runs.saturated,
                runs.deadlocked,
                runs.drain_limit,
                runs.failed
            ),
            (2, 0, 1, 0, 1)
        );
        assert!(!runs.all_ok());
        assert_eq!(runs.label(), "2 of 4 ok, 1 deadlocked, 1 failed");
        assert_eq!(
            runs.why,
            vec![
                "deadlocked: cycle s0 -> s1 -> s0".to_owned(),
                "failed: boom".to_owned()
            ]
        );
        assert_eq!(agg.status.kind(), "deadlocked");
    }

    #[test]
    fn no_ok_replication_gives_nan_not_garbage() {
        let agg = Metrics::aggregate(&[with_status(7.0, Status::Deadlocked("cycle".into()))]);
        assert!(agg.require("eta").unwrap().is_nan());
        assert_eq!(agg.status.kind(), "deadlocked");
        let mixed = Metrics::aggregate(&[
            with_status(7.0, Status::DrainLimit("stuck".into())),
            with_status(9.0, Status::Failed("boom".into())),
        ]);
        assert!(mixed.require("eta").unwrap().is_nan());
    }

    /// Past saturation every replication hits the drain limit: the point keeps the mean of
    /// those replications (a bound, flagged), so the curve shows where it saturates.
    #[test]
    fn a_point_where_every_replication_hit_the_drain_limit_keeps_its_flagged_means() {
        let agg = Metrics::aggregate(&[
            with_status(7.0, Status::DrainLimit("stuck".into())),
            with_status(9.0, Status::DrainLimit("stuck".into())),
        ]);
        assert_eq!(agg.require("eta").unwrap(), 8.0);
        assert_eq!(agg.status.kind(), "drain_limit");
        assert_eq!(
            agg.runs.unwrap().label(),
            "0 of 2 ok, 2 hit the drain limit"
        );
    }

    /// Saturation is a result: its means are kept (accepted throughput is measured), and a
    /// point of ok and saturated replications is all results, unlike one with a drain limit.
    #[test]
    fn saturated_replications_are_results_with_kept_means() {
        let sat = |x| with_status(x, Status::Saturated("queues grew".into()));
        let agg = Metrics::aggregate(&[sat(4.0), sat(6.0)]);
        assert_eq!(agg.require("eta").unwrap(), 5.0);
        assert_eq!(agg.status.kind(), "saturated");
        let runs = agg.runs.unwrap();
        assert!(runs.all_results() && !runs.all_ok());
        assert_eq!(runs.label(), "0 of 2 ok, 2 saturated");
        let mixed = Metrics::aggregate(&[rep(1.0), sat(4.0)]).runs.unwrap();
        assert!(mixed.all_results());
        let limit =
            Metrics::aggregate(&[sat(4.0), with_status(2.0, Status::DrainLimit("x".into()))]);
        assert_eq!(limit.status.kind(), "drain_limit");
        assert!(!limit.runs.unwrap().all_results());
        assert!(Status::Saturated(String::new()).is_result() && Status::Ok.is_result());
        assert!(!Status::DrainLimit(String::new()).is_result());
    }

    #[test]
    fn status_is_derived_from_deadlocked_and_unfinished_scalars() {
        let mut m = rep(1.0);
        assert_eq!(Status::from_scalars(&m), Status::Ok);
        m.push("unfinished", 3.0, "", "");
        assert_eq!(Status::from_scalars(&m).kind(), "drain_limit");
        m.push("deadlocked", 1.0, "", "");
        assert_eq!(Status::from_scalars(&m).kind(), "deadlocked");
    }

    #[test]
    fn reports_without_status_parse_as_ok() {
        let m: Metrics = toml::from_str("scalars = []").unwrap();
        assert!(m.status.is_ok() && m.runs.is_none());
        let bad = Metrics::failed(Status::DrainLimit("x".into()));
        let text = toml::to_string(&bad).unwrap();
        assert_eq!(toml::from_str::<Metrics>(&text).unwrap(), bad);
    }

    #[test]
    fn require_names_a_missing_metric() {
        let m = rep(2.0);
        assert_eq!(m.require("eta"), Ok(2.0));
        let e = m.require("etta").unwrap_err().to_string();
        assert_eq!(e, "no metric `etta` (have: eta)");
    }

    #[test]
    fn single_replication_has_no_ci() {
        let agg = Metrics::aggregate(&[rep(1.5)]);
        assert_eq!(agg.get("eta").unwrap().ci95, None);
        assert!(agg.tables[0].ci95.is_empty());
    }
}
