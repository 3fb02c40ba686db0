//! Results as data: the JSON report, the CSV files and the human summary.
//!
//! * `report.json`: [`RunReport`] — tool version, config file, seed, replications, threads,
//!   wall time, the plot specs, and per point its sweep parameters, the full typed config (echo)
//!   and the aggregated metrics (means, 95 % CI half-widths, tables).
//! * `data.csv`: one row per point: `point`, the sweep keys, then each scalar metric followed by
//!   its `_ci95` column.
//! * `<table>.csv`: each metrics table in long form: `point`, the sweep keys, the table's columns
//!   and their `_ci95` columns.

use anyhow::{Context, Result};
use icn_engine::Metrics;
use icn_engine::config::{PlotSpec, Reference};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The aggregated result of one sweep point (or of a plain run).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PointResult {
    pub index: usize,
    pub params: Vec<(String, serde_json::Value)>,
    pub config: serde_json::Value,
    pub metrics: Metrics,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunReport {
    pub tool: String,
    pub version: String,
    pub model: String,
    pub title: String,
    pub description: String,
    pub config_file: String,
    pub seed: u64,
    pub replications: u32,
    pub threads: usize,
    pub wall_time_s: f64,
    /// `Some((i, n))` when only shard i of n was run.
    pub shard: Option<(usize, usize)>,
    /// Fingerprint of file text, `--quick`, `--set` values and seed (`ExperimentFile::identity`):
    /// `merge` joins only shards that agree on it. Empty in reports of older versions.
    #[serde(default)]
    pub experiment: String,
    /// Points of the full sweep (all shards together); 0 in reports of older versions.
    #[serde(default)]
    pub sweep_points: usize,
    pub plots: Vec<PlotSpec>,
    /// The experiment file's `verdict`: what the figure shows against the paper.
    #[serde(default)]
    pub verdict: Option<String>,
    /// The paper's values drawn into the panels (see [`icn_engine::config::Reference`]).
    #[serde(default)]
    pub references: Vec<Reference>,
    /// The experiment's `[[check]]` claims (kept so that `merge` can judge the joined points).
    #[serde(default)]
    pub check_specs: Vec<icn_engine::config::Check>,
    /// How this run judged them ([`crate::checks`]).
    #[serde(default)]
    pub checks: Vec<crate::checks::Outcome>,
    /// Who ran what, where and how long ([`crate::provenance`]); absent in older reports.
    #[serde(default)]
    pub provenance: Option<crate::provenance::Provenance>,
    pub points: Vec<PointResult>,
}

/// Names of coded values, by column: `codes["check"]["3"] = "A MyVIA max bandwidth (MB/s)"`.
pub type CodeNames = BTreeMap<String, BTreeMap<String, String>>;

/// Reads the names that models give numeric codes in their notes (tables hold only numbers):
///
/// * `check 3: A MyVIA max bandwidth (MB/s)` — code 3 of column `check`;
/// * `profile 0 = setup-a, 1 = setup-b` — several codes of one column;
/// * `variant: MyVIA`, `variant: - PD ring`, … — the i-th such note names code i.
///
/// Plots use them to draw a coded x as named categories, the results page to show names
/// instead of numbers. A note of another shape is simply not a name.
pub fn code_names(notes: &[String]) -> CodeNames {
    let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphabetic() || c == '_');
    let mut codes = CodeNames::new();
    for note in notes {
        if let Some((head, name)) = note.split_once(": ") {
            match head.split_once(' ') {
                Some((col, code)) if word(col) && code.parse::<u64>().is_ok() => {
                    codes
                        .entry(col.to_owned())
                        .or_default()
                        .insert(code.to_owned(), name.trim().to_owned());
                }
                None if word(head) => {
                    let entry = codes.entry(head.to_owned()).or_default();
                    entry.insert(entry.len().to_string(), name.trim().to_owned());
                }
                _ => {}
            }
            continue;
        }
        let Some((col, rest)) = note.split_once(' ') else {
            continue;
        };
        let pairs: Option<Vec<(&str, &str)>> = rest
            .split(", ")
            .map(|p| {
                p.split_once(" = ")
                    .filter(|(code, name)| code.parse::<u64>().is_ok() && !name.is_empty())
            })
            .collect();
        if let Some(pairs) = pairs.filter(|_| word(col)) {
            let entry = codes.entry(col.to_owned()).or_default();
            for (code, name) in pairs {
                entry.insert(code.to_owned(), name.trim().to_owned());
            }
        }
    }
    codes
}

pub fn toml_to_json(v: &toml::Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

fn json_label(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// "load=0.5, nodes=8".
pub fn params_label<V: std::fmt::Display>(params: &[(String, V)]) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Tables longer than this are summarised by `run` instead of printed.
const MAX_PRINTED_ROWS: usize = 20;

/// Formats a number for CSV: shortest round-trip representation, empty for NaN.
fn cell(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        format!("{x}")
    }
}

impl PointResult {
    /// "load=0.5, nodes=8", or "point 3" for a point without sweep keys.
    pub fn label(&self) -> String {
        if self.params.is_empty() {
            return format!("point {}", self.index);
        }
        params_label(
            &self
                .params
                .iter()
                .map(|(k, v)| (k.clone(), json_label(v)))
                .collect::<Vec<_>>(),
        )
    }

    /// True when some replication of the point did not end ok.
    pub fn is_flagged(&self) -> bool {
        self.metrics.runs.as_ref().is_some_and(|r| !r.all_ok())
    }
}

/// The status columns closing every row of `data.csv`: the point's status (`ok`, or the first
/// non-ok kind among its replications) and how many replications ended each way.
pub const STATUS_COLUMNS: [&str; 6] = [
    "status",
    "runs_ok",
    "runs_saturated",
    "runs_deadlocked",
    "runs_drain_limit",
    "runs_failed",
];

fn status_cells(m: &Metrics) -> Vec<String> {
    let mut cells = vec![m.status.kind().to_owned()];
    match &m.runs {
        Some(r) => cells.extend(
            [r.ok, r.saturated, r.deadlocked, r.drain_limit, r.failed]
                .iter()
                .map(u32::to_string),
        ),
        None => cells.extend(std::iter::repeat_n(String::new(), 5)),
    }
    cells
}

impl RunReport {
    pub fn write_json(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    pub fn read_json(path: &Path) -> Result<Self> {
        // A report is a file icnlab wrote: a device or FIFO under its name (`/dev/zero`) was
        // read up to the 2 GiB bound before failing.
        let meta = fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        anyhow::ensure!(
            meta.is_file(),
            "{} is not a regular file (not an icnlab report)",
            path.display()
        );
        // 10^5 points (the sweep limit) with tables stay well below 2 GiB.
        let text = icn_engine::config::read_bounded(path, 2 << 30)?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not an icnlab report", path.display()))
    }

    fn sweep_keys(&self) -> Vec<String> {
        self.points
            .first()
            .map(|p| p.params.iter().map(|(k, _)| k.clone()).collect())
            .unwrap_or_default()
    }

    /// Writes `data.csv` and one CSV per metrics table into `dir`; returns the files written.
    pub fn write_csvs(&self, dir: &Path) -> Result<Vec<String>> {
        let keys = self.sweep_keys();
        let mut written = Vec::new();
        let Some(first) = self.points.first() else {
            return Ok(written);
        };

        let mut header: Vec<String> = std::iter::once("point".to_owned())
            .chain(keys.iter().cloned())
            .collect();
        for m in &first.metrics.scalars {
            header.push(m.name.clone());
            header.push(format!("{}_ci95", m.name));
        }
        header.extend(STATUS_COLUMNS.iter().map(|c| (*c).to_owned()));
        let path = dir.join("data.csv");
        let mut w = csv::Writer::from_path(&path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        w.write_record(&header)?;
        for p in &self.points {
            let mut row: Vec<String> = vec![p.index.to_string()];
            row.extend(p.params.iter().map(|(_, v)| json_label(v)));
            for m in &first.metrics.scalars {
                let found = p.metrics.get(&m.name);
                row.push(found.map_or(String::new(), |m| cell(m.value)));
                row.push(found.and_then(|m| m.ci95).map_or(String::new(), cell));
            }
            row.extend(status_cells(&p.metrics));
            w.write_record(&row)?;
        }
        w.flush()?;
        written.push("data.csv".to_owned());

        for t in &first.metrics.tables {
            let name = format!("{}.csv", t.name);
            let path = dir.join(&name);
            let mut w = csv::Writer::from_path(&path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            let mut header: Vec<String> = std::iter::once("point".to_owned())
                .chain(keys.iter().cloned())
                .collect();
            header.extend(t.columns.iter().cloned());
            header.extend(t.columns.iter().map(|c| format!("{c}_ci95")));
            w.write_record(&header)?;
            for p in &self.points {
                let Some(table) = p.metrics.table(&t.name) else {
                    continue;
                };
                for (i, row) in table.rows.iter().enumerate() {
                    let mut rec: Vec<String> = vec![p.index.to_string()];
                    rec.extend(p.params.iter().map(|(_, v)| json_label(v)));
                    rec.extend(row.iter().map(|&x| cell(x)));
                    let ci = table.ci95.get(i);
                    rec.extend((0..row.len()).map(|j| {
                        ci.and_then(|r| r.get(j))
                            .map_or(String::new(), |&x| cell(x))
                    }));
                    w.write_record(&rec)?;
                }
            }
            w.flush()?;
            written.push(name);
        }
        Ok(written)
    }

    /// A human summary: every metric of a single point, or a compact table of a sweep.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "{} ({} model, seed {}, {} replication{}, {:.2} s)\n",
            self.title,
            self.model,
            self.seed,
            self.replications,
            if self.replications == 1 { "" } else { "s" },
            self.wall_time_s
        ));
        if let [point] = self.points.as_slice() {
            if point.is_flagged() {
                out.push_str(&format!(
                    "  FLAGGED: replications {}; the values below average the ok ones only\n",
                    point
                        .metrics
                        .runs
                        .as_ref()
                        .map_or(String::new(), |r| r.label())
                ));
            }
            let width = point
                .metrics
                .scalars
                .iter()
                .map(|m| m.name.len())
                .max()
                .unwrap_or(0);
            for m in &point.metrics.scalars {
                let ci = m
                    .ci95
                    .map_or(String::new(), |h| format!(" ± {}", fmt_num(h)));
                out.push_str(&format!(
                    "  {:width$}  {:>14}{:<12} {:8} {}\n",
                    m.name,
                    fmt_num(m.value),
                    ci,
                    m.unit,
                    m.about
                ));
            }
            for t in &point.metrics.tables {
                // Long tables (per-link, per-node) belong in their CSV, not on the terminal.
                if t.rows.len() > MAX_PRINTED_ROWS {
                    out.push_str(&format!(
                        "  table {}: {} rows × {} columns in {}.csv\n",
                        t.name,
                        t.rows.len(),
                        t.columns.len(),
                        t.name
                    ));
                    continue;
                }
                out.push_str(&format!(
                    "  table {}:\n    {}\n",
                    t.name,
                    t.columns.join("\t")
                ));
                for row in &t.rows {
                    out.push_str(&format!(
                        "    {}\n",
                        row.iter()
                            .map(|&x| fmt_num(x))
                            .collect::<Vec<_>>()
                            .join("\t")
                    ));
                }
            }
            for n in &point.metrics.notes {
                out.push_str(&format!("  note: {n}\n"));
            }
        } else {
            let Some(first) = self.points.first() else {
                return out;
            };
            let shown: Vec<&str> = first
                .metrics
                .scalars
                .iter()
                .take(6)
                .map(|m| m.name.as_str())
                .collect();
            out.push_str(&format!(
                "  {:40} {}\n",
                "point",
                shown.iter().map(|s| format!("{s:>14}")).collect::<String>()
            ));
            for p in &self.points {
                let label = p.label();
                let values: String = shown
                    .iter()
                    .map(|n| {
                        format!(
                            "{:>14}",
                            fmt_num(p.metrics.get(n).map_or(f64::NAN, |m| m.value))
                        )
                    })
                    .collect();
                let flag = match &p.metrics.runs {
                    Some(r) if r.all_results() && !r.all_ok() => format!(
                        "  saturated: {} (latency unbounded, values are lower bounds)",
                        r.label()
                    ),
                    Some(r) if !r.all_ok() => format!("  FLAGGED: {} (mean of ok runs)", r.label()),
                    _ => String::new(),
                };
                out.push_str(&format!("  {label:40} {values}{flag}\n"));
            }
            if first.metrics.scalars.len() > shown.len() {
                out.push_str("  (all metrics with confidence intervals in data.csv)\n");
            }
        }
        if let Some(p) = &self.provenance {
            out.push_str(&format!("  provenance: {}\n", p.line()));
        }
        if !self.checks.is_empty() {
            out.push_str(&format!(
                "  checks: {}\n",
                crate::checks::Score::of(&self.checks).label()
            ));
            for c in &self.checks {
                out.push_str(&format!("    {}\n", c.line()));
            }
        }
        out
    }
}

/// Four significant digits, scientific only for very large or small magnitudes.
pub fn fmt_num(x: f64) -> String {
    if x.is_nan() {
        return "—".to_owned();
    }
    let a = x.abs();
    if a < 1e-12 {
        // Axis ticks at "zero" come out as ±1e-17 from floating-point steps.
        return "0".to_owned();
    }
    if a != 0.0 && !(1e-3..1e7).contains(&a) {
        format!("{x:.3e}")
    } else if x == x.trunc() && a < 1e7 {
        format!("{x:.0}")
    } else {
        let digits = (4 - (a.log10().floor() as i32) - 1).clamp(0, 6) as usize;
        let s = format!("{x:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    }
}

#[cfg(test)]
mod tests {

    /// Issue 22: `merge` read 2 GiB from a report.json pointing at `/dev/zero`.
    #[test]
    fn a_report_that_is_not_a_regular_file_is_refused_unread() {
        let tmp = tempfile::tempdir().unwrap();
        let link = tmp.path().join("report.json");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = format!("{:#}", super::RunReport::read_json(&link).unwrap_err());
        assert!(e.contains("is not a regular file"), "{e}");
    }

    use super::fmt_num;
    use icn_engine::{Metrics, Table};

    #[test]
    fn long_tables_are_summarised_not_printed() {
        let mut m = Metrics::default();
        m.push("eta", 1.0, "", "");
        for (name, n) in [("short", 2), ("links", 500)] {
            m.tables.push(Table {
                name: name.into(),
                columns: vec!["a".into(), "b".into()],
                rows: vec![vec![1.0, 2.0]; n],
                ci95: vec![],
            });
        }
        let report = super::RunReport {
            tool: "icnlab".into(),
            version: "0".into(),
            model: "m".into(),
            title: "t".into(),
            description: String::new(),
            config_file: "x.toml".into(),
            seed: 1,
            replications: 1,
            threads: 1,
            wall_time_s: 0.0,
            shard: None,
            experiment: String::new(),
            sweep_points: 1,
            plots: vec![],
            verdict: None,
            references: vec![],
            check_specs: vec![],
            checks: vec![],
            provenance: None,
            points: vec![super::PointResult {
                index: 0,
                params: vec![],
                config: serde_json::Value::Null,
                metrics: m,
            }],
        };
        let text = report.summary();
        assert!(
            text.contains("table short:\n    a\tb\n    1\t2\n    1\t2\n"),
            "{text}"
        );
        assert!(
            text.contains("table links: 500 rows × 2 columns in links.csv"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 7, "{text}");
    }

    /// serde_json writes NaN as `null`; a report with a flagged point (no ok replication, so
    /// NaN values) could not be read back, so its plot lost the units and merge failed.
    #[test]
    fn nan_values_survive_a_json_round_trip() {
        let mut m = Metrics::default();
        m.push("eta", f64::NAN, "", "");
        m.tables.push(Table {
            name: "t".into(),
            columns: vec!["a".into()],
            rows: vec![vec![f64::NAN], vec![1.0]],
            ci95: vec![vec![f64::NAN], vec![0.5]],
        });
        let text = serde_json::to_string(&m).unwrap();
        assert!(text.contains("null"), "{text}");
        let back: Metrics = serde_json::from_str(&text).unwrap();
        assert!(back.require("eta").unwrap().is_nan());
        assert!(back.tables[0].rows[0][0].is_nan() && back.tables[0].rows[1][0] == 1.0);
        assert!(back.tables[0].ci95[0][0].is_nan() && back.tables[0].ci95[1][0] == 0.5);
    }

    #[test]
    fn coded_values_are_named_from_the_notes() {
        let notes: Vec<String> = [
            "check 0: B MyVIA min one-way latency (µs)",
            "check 12: FE M-VIA max bandwidth (MB/s)",
            "variant: MyVIA",
            "variant: - PD ring (doorbell + descriptor DMA)",
            "profile 0 = setup-a, 1 = setup-b",
            "calibrated: myvia.chain_cycles = 340 cycles",
            "a free note, not a name",
            "deadlock at 3: cycle 1 → 2",
        ]
        .map(str::to_owned)
        .to_vec();
        let codes = super::code_names(&notes);
        let get = |c: &str, k: &str| codes.get(c).and_then(|m| m.get(k)).map(String::as_str);
        assert_eq!(get("check", "0"), Some("B MyVIA min one-way latency (µs)"));
        assert_eq!(get("check", "12"), Some("FE M-VIA max bandwidth (MB/s)"));
        assert_eq!(get("variant", "0"), Some("MyVIA"));
        assert_eq!(
            get("variant", "1"),
            Some("- PD ring (doorbell + descriptor DMA)")
        );
        assert_eq!(get("profile", "0"), Some("setup-a"));
        assert_eq!(get("profile", "1"), Some("setup-b"));
        assert_eq!(codes.len(), 4, "{codes:?}");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(fmt_num(2.0), "2");
        assert_eq!(fmt_num(0.123456), "0.1235");
        assert_eq!(fmt_num(0.1), "0.1");
        assert_eq!(fmt_num(2.50), "2.5");
        assert_eq!(fmt_num(1234.5678), "1235");
        assert_eq!(fmt_num(12.345678), "12.35");
        assert_eq!(fmt_num(1.5e-5), "1.500e-5");
        assert_eq!(fmt_num(f64::NAN), "—");
        assert_eq!(fmt_num(-1.388e-17), "0");
    }
}
