//! Judging an experiment's `[[check]]` claims ([`icn_engine::config::Check`]) against the
//! points of a run: pass, fail, or not judged (no point selected, as in a quick run, or no
//! value: a point without an ok replication). The outcomes go into report.json, stdout and
//! the results page; a failed check makes the run exit [`CHECK_FAILED`].

use crate::report::{PointResult, fmt_num};
use icn_engine::config::{Check, Reduce, reduce_word, selection_label};
use serde::{Deserialize, Serialize};

/// Exit code of a run whose outputs were all written but a claim check failed.
pub const CHECK_FAILED: u8 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    Pass,
    Fail,
    NotJudged,
}

impl Judgement {
    pub fn word(self) -> &'static str {
        match self {
            Judgement::Pass => "pass",
            Judgement::Fail => "FAIL",
            Judgement::NotJudged => "not judged",
        }
    }
}

/// One check as this run judged it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub claim: String,
    /// "max accepted (routing=ugal)".
    pub measured_what: String,
    /// The measured value (null when not judged for want of points).
    #[serde(default)]
    pub measured: Option<f64>,
    /// "in [0.1, 0.15]", "> 2 × max accepted (routing=minimal) = 0.061".
    pub expected: String,
    pub judgement: Judgement,
    /// Why a check was not judged.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
    #[serde(default)]
    pub source: Option<String>,
}

impl Outcome {
    /// "pass  max accepted (routing=ugal) = 0.12, expected > 2 × … — claim".
    pub fn line(&self) -> String {
        let measured = self
            .measured
            .map_or("—".to_owned(), |v| fmt_num(v).to_string());
        let why = if self.why.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.why)
        };
        format!(
            "{:10} {} = {measured}, expected {}{why}: {}",
            self.judgement.word(),
            self.measured_what,
            self.expected,
            self.claim
        )
    }
}

/// Counts of pass, fail and not judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Score {
    pub pass: usize,
    pub fail: usize,
    pub not_judged: usize,
}

impl Score {
    pub fn of(outcomes: &[Outcome]) -> Score {
        let mut s = Score::default();
        for o in outcomes {
            s.add(o.judgement);
        }
        s
    }

    pub fn add(&mut self, j: Judgement) {
        match j {
            Judgement::Pass => self.pass += 1,
            Judgement::Fail => self.fail += 1,
            Judgement::NotJudged => self.not_judged += 1,
        }
    }

    pub fn merge(&mut self, other: Score) {
        self.pass += other.pass;
        self.fail += other.fail;
        self.not_judged += other.not_judged;
    }

    /// "12 confirmed, 1 refuted, 3 not judged".
    pub fn label(&self) -> String {
        format!(
            "{} confirmed, {} refuted, {} not judged",
            self.pass, self.fail, self.not_judged
        )
    }
}

/// Whether a point's sweep value equals a `where` value (numbers by value: 1 = 1.0).
fn same(point: &serde_json::Value, want: &toml::Value) -> bool {
    match (
        point.as_f64(),
        want.as_float().or(want.as_integer().map(|i| i as f64)),
    ) {
        (Some(a), Some(b)) => a == b,
        _ => *point == crate::report::toml_to_json(want),
    }
}

/// The points whose sweep values, or else typed configuration (a dotted key such as
/// `topology` or `traffic.pattern`), equal every value of `select`: a claim about the full
/// configuration (`topology = "dragonfly:3"`) selects nothing in a quick run of a smaller one.
fn selected<'a>(points: &'a [PointResult], select: &toml::Table) -> Vec<&'a PointResult> {
    points
        .iter()
        .filter(|p| {
            select.iter().all(|(k, want)| {
                let swept = p.params.iter().find(|(name, _)| name == k).map(|(_, v)| v);
                let configured = || {
                    k.split('.')
                        .try_fold(&p.config, |node, part| node.get(part))
                };
                swept.or_else(configured).is_some_and(|v| same(v, want))
            })
        })
        .collect()
}

/// The values of `column` at the points `select` picks, or, with `table`, in the rows of
/// that table whose columns match the `select` keys naming them (the other keys pick the
/// points). Why there are none when there are none.
fn values_of(
    points: &[PointResult],
    select: &toml::Table,
    table: Option<&str>,
    column: &str,
) -> Result<Vec<f64>, String> {
    let Some(name) = table else {
        let chosen = selected(points, select);
        if chosen.is_empty() {
            return Err(format!(
                "no point of this run has {}",
                selection_label(select)
            ));
        }
        return Ok(chosen
            .iter()
            .filter_map(|p| column_value(p, column))
            .collect());
    };
    let mut values = Vec::new();
    let mut rows = 0;
    for p in points {
        let Some(t) = p.metrics.table(name) else {
            continue;
        };
        let (by_row, by_point): (toml::Table, toml::Table) = select
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .partition(|(k, _)| t.columns.contains(k));
        if selected(std::slice::from_ref(p), &by_point).is_empty() {
            continue;
        }
        let Some(at) = t.columns.iter().position(|c| c == column) else {
            continue;
        };
        for row in &t.rows {
            let matches = by_row.iter().all(|(k, want)| {
                let i = t.columns.iter().position(|c| c == k);
                i.and_then(|i| row.get(i))
                    .is_some_and(|v| same(&serde_json::json!(v), want))
            });
            if matches {
                rows += 1;
                values.extend(row.get(at).copied());
            }
        }
    }
    if rows == 0 {
        return Err(format!(
            "no row of table `{name}` in this run has {}",
            selection_label(select)
        ));
    }
    Ok(values)
}

/// The reduced value of `column` over the points (or table rows) `select` picks, or why there
/// is none.
fn value_of(
    points: &[PointResult],
    select: &toml::Table,
    table: Option<&str>,
    column: &str,
    of: Reduce,
) -> Result<f64, String> {
    let values = values_of(points, select, table, column)?;
    if of == Reduce::One && values.len() > 1 {
        return Err(format!(
            "{} {} have {}; the check needs `of` = max, min or mean",
            values.len(),
            if table.is_some() { "rows" } else { "points" },
            selection_label(select)
        ));
    }
    let values: Vec<f64> = values.into_iter().filter(|v| !v.is_nan()).collect();
    if values.is_empty() {
        return Err(format!(
            "no value of `{column}` at {}",
            selection_label(select)
        ));
    }
    Ok(match of {
        Reduce::One | Reduce::Max => values.iter().copied().fold(f64::MIN, f64::max),
        Reduce::Min => values.iter().copied().fold(f64::MAX, f64::min),
        Reduce::Mean => values.iter().sum::<f64>() / values.len() as f64,
    })
}

/// Whether a confirmed check claims that point `p` deadlocks (a check on the
/// `runs_deadlocked` column whose selection holds `p`, judged `pass`): an experiment that
/// studies deadlock (one VC on a torus) reports it as its result, not as a failed run.
pub fn deadlock_claimed(specs: &[Check], outcomes: &[Outcome], p: &PointResult) -> bool {
    specs.iter().zip(outcomes).any(|(c, o)| {
        c.column == "runs_deadlocked"
            && c.table.is_none()
            && o.judgement == Judgement::Pass
            && !selected(std::slice::from_ref(p), &c.select).is_empty()
    })
}

/// A point's value of `column`: a scalar metric, or one of data.csv's status counts
/// (`runs_deadlocked`, `runs_saturated`, …), which say how its replications ended.
fn column_value(p: &PointResult, column: &str) -> Option<f64> {
    if let Some(m) = p.metrics.get(column) {
        return Some(m.value);
    }
    let runs = p.metrics.runs.as_ref()?;
    let n = match column {
        "runs_ok" => runs.ok,
        "runs_saturated" => runs.saturated,
        "runs_deadlocked" => runs.deadlocked,
        "runs_drain_limit" => runs.drain_limit,
        "runs_failed" => runs.failed,
        _ => return None,
    };
    Some(f64::from(n))
}

/// Judges every check against `points`.
pub fn judge(checks: &[Check], points: &[PointResult]) -> Vec<Outcome> {
    checks.iter().map(|c| judge_one(c, points)).collect()
}

fn judge_one(c: &Check, points: &[PointResult]) -> Outcome {
    let mut out = Outcome {
        claim: c.claim.clone(),
        measured_what: format!(
            "{}{}{} ({})",
            reduce_word(c.of),
            c.column,
            c.table
                .as_ref()
                .map_or(String::new(), |t| format!(" in {t}")),
            selection_label(&c.select)
        ),
        measured: None,
        expected: c.expected(),
        judgement: Judgement::NotJudged,
        why: String::new(),
        source: c.source.clone(),
    };
    let table = c.table.as_deref();
    let measured = match value_of(points, &c.select, table, &c.column, c.of) {
        Ok(v) => v,
        Err(why) => {
            out.why = why;
            return out;
        }
    };
    out.measured = Some(measured);
    let pass = if let Some(v) = c.value {
        (measured - v).abs() <= c.tolerance.unwrap_or(0.0) * (1.0 + 1e-12) + f64::EPSILON * v.abs()
    } else if let Some([lo, hi]) = c.range {
        (lo..=hi).contains(&measured)
    } else if let (Some(rel), Some(than)) = (c.relation, &c.than) {
        let column = c.than_column.as_deref().unwrap_or(&c.column);
        let other = match value_of(points, than, table, column, c.than_of.unwrap_or(c.of)) {
            Ok(v) => v,
            Err(why) => {
                out.why = why;
                return out;
            }
        };
        let bound = c.factor.unwrap_or(1.0) * other;
        out.expected = format!("{} = {}", out.expected, fmt_num(bound));
        rel.holds(measured, bound)
    } else {
        out.why = "the check states no expectation".into();
        return out;
    };
    out.judgement = if pass {
        Judgement::Pass
    } else {
        Judgement::Fail
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_engine::Metrics;

    fn point(i: usize, routing: &str, load: f64, accepted: f64) -> PointResult {
        let mut m = Metrics::default();
        m.push("accepted", accepted, "", "");
        PointResult {
            index: i,
            params: vec![
                ("routing".into(), serde_json::json!(routing)),
                ("load".into(), serde_json::json!(load)),
            ],
            config: serde_json::json!({"topology": "dragonfly:3", "traffic": {"pattern": "uniform"}}),
            metrics: m,
        }
    }

    /// Keys that are not swept select by the point's typed configuration, dotted keys too.
    #[test]
    fn unswept_keys_select_by_configuration() {
        let points = vec![point(0, "minimal", 0.1, 0.1)];
        let cs = checks(
            "[[check]]\nclaim = 'a'\ncolumn = 'accepted'\nwhere = { topology = 'dragonfly:3', 'traffic.pattern' = 'uniform' }\nvalue = 0.1\n\
             [[check]]\nclaim = 'b'\ncolumn = 'accepted'\nwhere = { topology = 'dragonfly:2' }\nvalue = 0.1\n",
        );
        let j: Vec<Judgement> = judge(&cs, &points).iter().map(|o| o.judgement).collect();
        assert_eq!(j, [Judgement::Pass, Judgement::NotJudged]);
    }

    fn checks(text: &str) -> Vec<Check> {
        let t: toml::Table = toml::from_str(text).unwrap();
        icn_engine::config::deserialize_at(t["check"].clone()).unwrap()
    }

    /// Hand-made points: minimal saturates at 0.12, UGAL at 0.3. Each check shape passes or
    /// fails as worked out by hand, and a selection without points is not judged.
    #[test]
    fn checks_pass_fail_or_are_not_judged_as_worked_out_by_hand() {
        let points = vec![
            point(0, "minimal", 0.1, 0.1),
            point(1, "minimal", 0.5, 0.12),
            point(2, "ugal", 0.1, 0.1),
            point(3, "ugal", 0.5, 0.3),
        ];
        let cs = checks(
            "[[check]]\nclaim = 'a'\ncolumn = 'accepted'\nwhere = { routing = 'minimal' }\nof = 'max'\nrange = [0.1, 0.15]\n\
             [[check]]\nclaim = 'b'\ncolumn = 'accepted'\nwhere = { routing = 'ugal' }\nof = 'max'\nrelation = '>'\nthan = { routing = 'minimal' }\nfactor = 2.0\n\
             [[check]]\nclaim = 'c'\ncolumn = 'accepted'\nwhere = { routing = 'ugal', load = 0.5 }\nvalue = 0.25\ntolerance = 0.01\n\
             [[check]]\nclaim = 'd'\ncolumn = 'accepted'\nwhere = { routing = 'valiant' }\nof = 'max'\nrange = [0, 1]\n\
             [[check]]\nclaim = 'e'\ncolumn = 'accepted'\nwhere = { routing = 'ugal' }\nvalue = 0.3\n\
             [[check]]\nclaim = 'f'\ncolumn = 'accepted'\nwhere = { load = 0.1 }\nof = 'mean'\nvalue = 0.1\n\
             [[check]]\nclaim = 'g'\ncolumn = 'accepted'\nwhere = { load = 1 }\nof = 'min'\nvalue = 0.1\n",
        );
        let o = judge(&cs, &points);
        let j: Vec<Judgement> = o.iter().map(|o| o.judgement).collect();
        use Judgement::*;
        assert_eq!(j, [Pass, Pass, Fail, NotJudged, NotJudged, Pass, NotJudged]);
        assert_eq!(o[0].measured, Some(0.12));
        assert_eq!(o[1].expected, "> 2 × max accepted (routing=minimal) = 0.24");
        assert_eq!(o[2].measured, Some(0.3));
        assert!(
            o[3].why
                .contains("no point of this run has routing=valiant"),
            "{:?}",
            o[3]
        );
        assert!(o[4].why.contains("2 points"), "{:?}", o[4]);
        assert_eq!(
            Score::of(&o).label(),
            "3 confirmed, 1 refuted, 3 not judged"
        );
        assert!(
            o[2].line().starts_with(
                "FAIL       accepted (routing=ugal, load=0.5) = 0.3, expected = 0.25 ± 0.01: c"
            ),
            "{}",
            o[2].line()
        );
    }

    /// A table check reads the rows the table-column keys of `where` pick, within the points
    /// its other keys pick: hand-made ablation rows (variant 0 at 75 MB/s, variant 4 at 52).
    #[test]
    fn table_checks_select_rows_by_the_tables_columns() {
        let mut p = point(0, "minimal", 0.1, 0.1);
        p.metrics.tables.push(icn_engine::Table {
            name: "ablation".into(),
            columns: vec!["profile".into(), "variant".into(), "bw".into()],
            rows: vec![
                vec![0.0, 0.0, 75.0],
                vec![0.0, 4.0, 52.0],
                vec![1.0, 0.0, 249.0],
            ],
            ci95: vec![],
        });
        let cs = checks(
            "[[check]]\nclaim = 'a'\ntable = 'ablation'\ncolumn = 'bw'\nwhere = { profile = 0, variant = 4 }\nrelation = '<'\nthan = { profile = 0, variant = 0 }\nfactor = 0.8\n\
             [[check]]\nclaim = 'b'\ntable = 'ablation'\ncolumn = 'bw'\nwhere = { routing = 'minimal', variant = 0 }\nof = 'max'\nvalue = 249\n\
             [[check]]\nclaim = 'c'\ntable = 'ablation'\ncolumn = 'bw'\nwhere = { routing = 'ugal', variant = 0 }\nof = 'max'\nvalue = 249\n\
             [[check]]\nclaim = 'd'\ntable = 'ablation'\ncolumn = 'bw'\nwhere = { variant = 7 }\nvalue = 1\n\
             [[check]]\nclaim = 'e'\ntable = 'ablation'\ncolumn = 'bw'\nwhere = { variant = 0 }\nvalue = 75\n\
             [[check]]\nclaim = 'f'\ntable = 'ablation'\ncolumn = 'bw'\nwhere = { profile = 0, variant = 4 }\nvalue = 60\ntolerance = 5\n",
        );
        let o = judge(&cs, &[p]);
        let j: Vec<Judgement> = o.iter().map(|o| o.judgement).collect();
        use Judgement::*;
        assert_eq!(
            j,
            [Pass, Pass, NotJudged, NotJudged, NotJudged, Fail],
            "{o:?}"
        );
        assert_eq!(o[0].measured, Some(52.0));
        assert_eq!(o[0].expected, "< 0.8 × bw (profile=0, variant=0) = 60");
        assert_eq!(
            o[1].measured_what,
            "max bw in ablation (routing=minimal, variant=0)"
        );
        assert!(
            o[2].why.contains("no row of table `ablation`"),
            "{:?}",
            o[2]
        );
        assert!(o[4].why.contains("2 rows"), "{:?}", o[4]);
    }

    /// data.csv's status counts are columns: a confirmed claim that a point deadlocks makes
    /// its deadlock the experiment's result.
    #[test]
    fn a_confirmed_deadlock_claim_covers_its_points() {
        let mut dead = point(0, "minimal", 0.4, f64::NAN);
        dead.metrics = Metrics::aggregate(&[Metrics::failed(icn_engine::Status::Deadlocked(
            "cycle".into(),
        ))]);
        let ok = point(1, "ugal", 0.4, 0.3);
        let points = vec![dead.clone(), ok.clone()];
        let cs = checks(
            "[[check]]\nclaim = 'a'\ncolumn = 'runs_deadlocked'\nwhere = { routing = 'minimal' }\nrange = [1, 9]\n",
        );
        let o = judge(&cs, &points);
        assert_eq!(o[0].judgement, Judgement::Pass, "{o:?}");
        assert!(deadlock_claimed(&cs, &o, &dead));
        assert!(!deadlock_claimed(&cs, &o, &ok));
        let refuted = judge(
            &checks(
                "[[check]]\nclaim = 'a'\ncolumn = 'runs_deadlocked'\nwhere = { routing = 'minimal' }\nvalue = 0\n",
            ),
            &points,
        );
        assert!(!deadlock_claimed(&cs, &refuted, &dead));
    }
}
