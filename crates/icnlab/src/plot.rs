//! `plot.svg`: the panels an experiment file's `[[plot]]` tables ask for, drawn from the CSVs the
//! run wrote (so a merged sweep can be re-plotted without re-running it).
//!
//! Each panel draws its `y` columns against `x`, one line per distinct combination of the
//! `series` columns, with error bars from the matching `_ci95` columns. A non-numeric `x`
//! (a policy name, say) becomes a categorical axis.
//!
//! Error bars are clipped to the quantity's domain: a column whose every value is ≥ 0 (a latency,
//! a count, a ratio of rates) is taken as non-negative, so its interval does not reach below 0
//! (an X-Switch latency once showed an error bar down to −3600 cycles). Categorical x values
//! (policies, NIC variants) are drawn as points, not joined by lines: there is nothing between
//! them. Axis labels carry the unit from the metrics' metadata in `report.json`.
//!
//! Axis labels take units from the metrics' metadata, and for table columns without metadata
//! from the naming convention of their suffix (`_us` µs, `_ns` ns, `_mbs` MB/s, `_bytes` B,
//! `_pct` %). Log axes get their own ticks (1-2-5 or 1…9 per decade when the axis spans only one
//! or two decades; plotters gave such an axis a single label). The legend sits below the plot
//! area, never over the data. Columns whose values are codes that the model names in its notes
//! (`variant: MyVIA`, see [`crate::report::code_names`]) are drawn as named categories. The
//! experiment's `[[reference]]` values are drawn in black: a dashed line for a value without x,
//! a triangle at (x, y) otherwise, each with its label in the legend.
//!
//! Points whose replications did not all end ok (`status` column of `data.csv` not `ok`) are
//! drawn as hollow markers with their own legend entry: their value averages only the ok
//! replications, and a reader must see that rather than a dot like any other. Saturated points
//! (`status` `saturated`) are open upward triangles: their accepted throughput is measured, but
//! their latency is unbounded and the value drawn only a lower bound.

use crate::report::CodeNames;
use anyhow::{Context, Result};
use icn_engine::config::{PlotSpec, RefX, Reference, value_label};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// A CSV file as strings.
pub struct Frame {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Frame {
    pub fn read(path: &Path) -> Result<Frame> {
        let mut r = csv::Reader::from_path(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let columns = r.headers()?.iter().map(str::to_owned).collect();
        let rows = r
            .records()
            .map(|rec| rec.map(|r| r.iter().map(str::to_owned).collect()))
            .collect::<Result<_, _>>()
            .with_context(|| format!("malformed CSV {}", path.display()))?;
        Ok(Frame { columns, rows })
    }

    fn col(&self, name: &str) -> Result<usize> {
        self.columns
            .iter()
            .position(|c| c == name)
            .with_context(|| format!("no column `{name}` (have: {})", self.columns.join(", ")))
    }
}

/// Checks that every column `specs` name exists in the CSVs a run with these sweep keys and
/// metrics (one replication's suffices: the CSVs take their columns from the first point) will
/// write. Called after the first replication, before the rest of the sweep runs: a typo in
/// `[[plot]]` used to surface only after the whole sweep.
pub fn check_columns(
    specs: &[PlotSpec],
    sweep_keys: &[String],
    sample: &icn_engine::Metrics,
) -> Result<(), icn_engine::Invalid> {
    use icn_engine::Invalid;
    let base = || {
        std::iter::once("point".to_owned())
            .chain(sweep_keys.iter().cloned())
            .collect::<Vec<String>>()
    };
    let table_columns = |i: usize, key: &str, name: &str| -> Result<Vec<String>, Invalid> {
        let t = sample.table(name).ok_or_else(|| {
            let have: Vec<&str> = sample.tables.iter().map(|t| t.name.as_str()).collect();
            Invalid::new(
                format!("plot[{i}].{key}"),
                format!(
                    "the model writes no table `{name}` (have: {})",
                    have.join(", ")
                ),
            )
        })?;
        let mut cols = base();
        cols.extend(t.columns.iter().cloned());
        cols.extend(t.columns.iter().map(|c| format!("{c}_ci95")));
        Ok(cols)
    };
    for (i, spec) in specs.iter().enumerate() {
        let cols = match &spec.table {
            Some(name) => table_columns(i, "table", name)?,
            None => {
                let mut cols = base();
                for m in &sample.scalars {
                    cols.push(m.name.clone());
                    cols.push(format!("{}_ci95", m.name));
                }
                cols.extend(
                    crate::report::STATUS_COLUMNS
                        .iter()
                        .map(|c| (*c).to_owned()),
                );
                cols
            }
        };
        let mut named: Vec<(&str, &str)> = vec![("x", spec.x.as_str())];
        named.extend(spec.y.iter().map(|y| ("y", y.as_str())));
        named.extend(spec.series.iter().map(|c| ("series", c.as_str())));
        named.extend(spec.filter.keys().map(|c| ("filter", c.as_str())));
        let marker_cols = match &spec.markers {
            Some(name) => Some(table_columns(i, "markers", name)?),
            None => None,
        };
        for (key, col) in named {
            let missing_in = |cols: &[String]| !cols.iter().any(|c| c == col);
            if missing_in(&cols) || marker_cols.as_deref().is_some_and(missing_in) {
                return Err(Invalid::new(
                    format!("plot[{i}].{key}"),
                    format!(
                        "no column `{col}` in {} (have: {})",
                        spec.table
                            .as_deref()
                            .map_or("data.csv".to_owned(), |t| format!("{t}.csv")),
                        cols.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// One line of a panel.
struct Series {
    label: String,
    /// Unconnected markers (published reference points) rather than a line.
    markers_only: bool,
    /// Lines and markers with the same key share a colour.
    color_key: String,
    /// (x position, y, lower end, upper end of the 95 % interval clipped to the domain)
    points: Vec<(f64, f64, f64, f64)>,
    /// Positions (indices into `points`) of flagged points (not ok, not saturated).
    flagged: Vec<usize>,
    /// Positions of saturated points.
    saturated: Vec<usize>,
}

/// How a point is drawn, from its `status` in `data.csv`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mark {
    Ok,
    Flagged,
    Saturated,
}

/// (x position, y, lower end, upper end, mark) while a series is collected.
type RawPoint = (f64, f64, f64, f64, Mark);

/// Units of the scalar metrics, by name, from `report.json` in `dir` (empty if absent).
fn units_of(dir: &Path) -> BTreeMap<String, String> {
    let Ok(report) = crate::report::RunReport::read_json(&dir.join("report.json")) else {
        return BTreeMap::new();
    };
    report
        .points
        .first()
        .map(|p| {
            p.metrics
                .scalars
                .iter()
                .filter(|m| !m.unit.is_empty())
                .map(|m| (m.name.clone(), m.unit.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// The unit a column's name implies by the project's naming convention, for table columns
/// and sweep keys that carry no metadata.
fn unit_by_suffix(column: &str) -> Option<&'static str> {
    const SUFFIXES: [(&str, &str); 8] = [
        ("_us", "µs"),
        ("_ns", "ns"),
        ("_mbs", "MB/s"),
        ("_mb_s", "MB/s"),
        ("_gbps", "GB/s"),
        ("_bytes", "B"),
        (".bytes", "B"),
        ("_pct", "%"),
    ];
    SUFFIXES
        .iter()
        .find(|(s, _)| column.ends_with(s))
        .map(|(_, u)| *u)
}

/// "latency_mean, latency_p99 (cycles)": the columns and, when they share one, their unit (from
/// the metrics' metadata, else from the column's suffix).
fn axis_label(columns: &[String], units: &BTreeMap<String, String>) -> String {
    let names = columns.join(", ");
    let unit = |c: &String| {
        units
            .get(c)
            .map(String::as_str)
            .or_else(|| unit_by_suffix(c))
    };
    let mut found = columns.iter().map(unit);
    match found.next().flatten() {
        Some(u) if found.all(|o| o == Some(u)) => format!("{names} ({u})"),
        _ => names,
    }
}

/// Whether `column` names a quantity bounded by 1 (a Jain index, a share, a utilisation), whose
/// interval must not reach above 1.
fn at_most_one(column: &str) -> bool {
    ["jain", "share", "utilisation"]
        .iter()
        .any(|w| column.contains(w))
}

/// The `point` values of `data.csv` rows whose `status` is not `ok`, with their mark.
fn flagged_points(dir: &Path) -> Result<BTreeMap<String, Mark>> {
    let path = dir.join("data.csv");
    if !path.exists() {
        return Ok(BTreeMap::new());
    }
    let frame = Frame::read(&path)?;
    let (Ok(pi), Ok(si)) = (frame.col("point"), frame.col("status")) else {
        return Ok(BTreeMap::new());
    };
    Ok(frame
        .rows
        .iter()
        .filter(|r| !r[si].is_empty() && r[si] != "ok")
        .map(|r| {
            let mark = if r[si] == "saturated" {
                Mark::Saturated
            } else {
                Mark::Flagged
            };
            (r[pi].clone(), mark)
        })
        .collect())
}

struct Panel {
    title: String,
    x_label: String,
    y_label: String,
    categories: Option<Vec<String>>,
    /// What the axis writes for each category when the names are too long for it: the model's
    /// code when the column is coded (check 0 stays check 0), else 1, 2, 3, …
    category_keys: Vec<String>,
    series: Vec<Series>,
    /// The experiment's reference values for this panel: (x position or none, y, label).
    references: Vec<(Option<f64>, f64, String)>,
    log_x: bool,
    log_y: bool,
}

/// What a panel is drawn from besides its spec and its CSV.
struct Inputs<'a> {
    flagged: &'a BTreeMap<String, Mark>,
    units: &'a BTreeMap<String, String>,
    codes: &'a CodeNames,
}

fn build_panel(
    index: usize,
    spec: &PlotSpec,
    frame: &Frame,
    markers: Option<&Frame>,
    refs: &[Reference],
    cx: &Inputs,
) -> Result<Panel> {
    let mut categories: Vec<String> = Vec::new();
    let mut series = collect_series(spec, frame, &mut categories, false, cx.flagged, cx.codes)?;
    if let Some(m) = markers {
        series.extend(collect_series(
            spec,
            m,
            &mut categories,
            true,
            &BTreeMap::new(),
            cx.codes,
        )?);
    }
    let mut references = Vec::new();
    for (i, r) in refs.iter().enumerate() {
        if !r.applies_to(index, spec) {
            continue;
        }
        let x = match (&r.x, categories.is_empty()) {
            (None, _) => None,
            (Some(RefX::Number(x)), true) => Some(*x),
            (Some(RefX::Category(c)), false) if categories.contains(c) => {
                categories.iter().position(|k| k == c).map(|p| p as f64)
            }
            (Some(x), numeric) => anyhow::bail!(
                "reference[{i}].x = {x}: the x axis `{}` is {}",
                spec.x,
                if numeric {
                    "numeric; give a number".to_owned()
                } else {
                    format!("categorical; give one of {}", categories.join(", "))
                }
            ),
        };
        let mut label = r.label.clone();
        if let Some(src) = &r.source {
            label.push_str(&format!(" ({src})"));
        }
        references.push((x, r.y, label));
    }
    let title = if spec.title.is_empty() {
        format!("{} vs {}", spec.y.join(", "), spec.x)
    } else {
        spec.title.clone()
    };
    Ok(Panel {
        title,
        x_label: spec
            .x_label
            .clone()
            .unwrap_or_else(|| axis_label(std::slice::from_ref(&spec.x), cx.units)),
        y_label: spec
            .y_label
            .clone()
            .unwrap_or_else(|| axis_label(&spec.y, cx.units)),
        category_keys: categories
            .iter()
            .enumerate()
            .map(|(i, name)| {
                cx.codes
                    .get(&spec.x)
                    .and_then(|names| names.iter().find(|(_, n)| *n == name))
                    .map_or_else(|| (i + 1).to_string(), |(code, _)| code.clone())
            })
            .collect(),
        categories: (!categories.is_empty()).then_some(categories),
        series,
        references,
        log_x: spec.log_x,
        log_y: spec.log_y,
    })
}

fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        return (lo / 1.2, hi * 1.2);
    }
    let pad = if hi > lo {
        (hi - lo) * 0.05
    } else {
        lo.abs().max(1.0) * 0.1
    };
    (
        if lo >= 0.0 && lo - pad < 0.0 {
            0.0
        } else {
            lo - pad
        },
        hi + pad,
    )
}

/// The lines (or marker sets) of one frame: one per y column and distinct `series` value.
/// Non-numeric x values are appended to `categories` and plotted at their index.
fn collect_series(
    spec: &PlotSpec,
    frame: &Frame,
    categories: &mut Vec<String>,
    markers_only: bool,
    flagged: &BTreeMap<String, Mark>,
    codes: &CodeNames,
) -> Result<Vec<Series>> {
    let xi = frame.col(&spec.x)?;
    // A cell shown by its name when the model names the column's codes.
    let named = |col: usize, cell: &String| -> String {
        codes
            .get(&frame.columns[col])
            .and_then(|names| names.get(cell))
            .cloned()
            .unwrap_or_else(|| cell.clone())
    };
    let x_codes = codes.contains_key(&spec.x);
    let point_col = frame.col("point").ok();
    let filters: Vec<(usize, String)> = spec
        .filter
        .iter()
        .map(|(k, v)| Ok((frame.col(k)?, value_label(v))))
        .collect::<Result<_>>()?;
    let rows: Vec<&Vec<String>> = frame
        .rows
        .iter()
        .filter(|r| {
            filters.iter().all(|(i, v)| {
                r[*i] == *v
                    || r[*i].parse::<f64>().ok() == v.parse::<f64>().ok()
                        && v.parse::<f64>().is_ok()
            })
        })
        .collect();
    let numeric_x = !x_codes && rows.iter().all(|r| r[xi].parse::<f64>().is_ok());
    if !numeric_x {
        for r in &rows {
            let name = named(xi, &r[xi]);
            if !categories.contains(&name) {
                categories.push(name);
            }
        }
    }
    let series_cols: Vec<usize> = spec
        .series
        .iter()
        .map(|s| frame.col(s))
        .collect::<Result<_>>()?;
    let mut series = Vec::new();
    for y in &spec.y {
        let yi = frame.col(y)?;
        let ci = frame.col(&format!("{y}_ci95")).ok();
        let non_negative = frame
            .rows
            .iter()
            .all(|r| r[yi].parse::<f64>().is_ok_and(|v| v >= 0.0) || r[yi].is_empty());
        let top = if at_most_one(y) && non_negative {
            1.0
        } else {
            f64::INFINITY
        };
        let mut groups: BTreeMap<Vec<String>, Vec<RawPoint>> = BTreeMap::new();
        let mut order: Vec<Vec<String>> = Vec::new();
        for r in &rows {
            let Ok(yv) = r[yi].parse::<f64>() else {
                continue;
            };
            let x = if numeric_x {
                r[xi].parse::<f64>().expect("checked numeric")
            } else {
                let name = named(xi, &r[xi]);
                categories
                    .iter()
                    .position(|c| *c == name)
                    .expect("collected") as f64
            };
            let half = ci.and_then(|c| r[c].parse::<f64>().ok()).unwrap_or(0.0);
            let lo = if non_negative {
                (yv - half).max(0.0)
            } else {
                yv - half
            };
            let key: Vec<String> = series_cols
                .iter()
                .map(|&c| format!("{}={}", frame.columns[c], named(c, &r[c])))
                .collect();
            if !groups.contains_key(&key) {
                order.push(key.clone());
            }
            let mark = point_col
                .and_then(|c| flagged.get(&r[c]).copied())
                .unwrap_or(Mark::Ok);
            groups
                .entry(key)
                .or_default()
                .push((x, yv, lo, (yv + half).min(top.max(yv)), mark));
        }
        for key in order {
            let mut all = groups.remove(&key).expect("ordered key");
            all.sort_by(|a, b| a.0.total_cmp(&b.0));
            let marked = |m: Mark| (0..all.len()).filter(|&i| all[i].4 == m).collect();
            let (flagged, saturated) = (marked(Mark::Flagged), marked(Mark::Saturated));
            let points = all.iter().map(|q| (q.0, q.1, q.2, q.3)).collect();
            let mut label = if spec.y.len() > 1 || key.is_empty() {
                y.clone()
            } else {
                String::new()
            };
            if !key.is_empty() {
                if !label.is_empty() {
                    label.push_str(", ");
                }
                label.push_str(&key.join(", "));
            }
            if markers_only {
                label.push_str(" (published)");
            }
            series.push(Series {
                color_key: format!("{y}|{}", key.join(",")),
                label,
                markers_only,
                points,
                flagged,
                saturated,
            });
        }
    }
    Ok(series)
}

const PANEL_W: u32 = 620;
const PANEL_H: u32 = 420;
/// Height of a legend row below a panel, in pixels.
const LEGEND_ROW: u32 = 16;
/// Height of the x label area when tick labels are horizontal.
const X_LABEL_AREA: u32 = 40;

/// Draws all panels of `specs` into one SVG at `out`, reading `data.csv` / `<table>.csv` in `dir`,
/// with the `references` that apply to each panel.
pub fn draw(dir: &Path, specs: &[PlotSpec], references: &[Reference], out: &Path) -> Result<()> {
    if specs.is_empty() {
        return Ok(());
    }
    let flagged = flagged_points(dir)?;
    let units = units_of(dir);
    let codes = codes_of(dir);
    let cx = Inputs {
        flagged: &flagged,
        units: &units,
        codes: &codes,
    };
    let mut panels = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let file = dir.join(format!("{}.csv", spec.table.as_deref().unwrap_or("data")));
        let frame = Frame::read(&file)?;
        let markers = match &spec.markers {
            Some(t) => Some(Frame::read(&dir.join(format!("{t}.csv")))?),
            None => None,
        };
        panels.push(
            build_panel(i, spec, &frame, markers.as_ref(), references, &cx)
                .with_context(|| format!("plot {} (from {})", i + 1, file.display()))?,
        );
    }
    let cols = if panels.len() == 1 { 1 } else { 2 };
    let rows = panels.len().div_ceil(cols);
    let extra = panels
        .iter()
        .map(|p| legend_layout(&legend(p)).2)
        .max()
        .unwrap_or(0);
    let cell_h = PANEL_H + extra;
    let root =
        SVGBackend::new(out, (PANEL_W * cols as u32, cell_h * rows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((rows, cols));
    for (panel, area) in panels.iter().zip(areas.iter()) {
        draw_panel(panel, area).with_context(|| format!("drawing panel `{}`", panel.title))?;
    }
    root.present()
        .with_context(|| format!("cannot write {}", out.display()))?;
    Ok(())
}

/// Names of coded values from the notes in `report.json` in `dir` (empty if absent).
fn codes_of(dir: &Path) -> CodeNames {
    crate::report::RunReport::read_json(&dir.join("report.json"))
        .ok()
        .and_then(|r| r.points.first().map(|p| p.metrics.notes.clone()))
        .map(|notes| crate::report::code_names(&notes))
        .unwrap_or_default()
}

/// Tick positions of a log axis over `[lo, hi]` (lo > 0): 1…9, else 1-2-5, else powers of ten
/// per decade, the finest that gives at most ten; linear steps when not even two fit.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    const SETS: [&[f64]; 3] = [&[1., 2., 3., 4., 5., 6., 7., 8., 9.], &[1., 2., 5.], &[1.]];
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let within = |set: &[f64]| -> Vec<f64> {
        (k0..=k1)
            .flat_map(|k| set.iter().map(move |m| m * 10f64.powi(k)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    let finest = within(SETS[0]);
    if finest.len() < 2 {
        return linear_ticks(lo, hi);
    }
    for set in SETS {
        let ticks = within(set);
        if ticks.len() <= 10 && ticks.len() >= 2 {
            return ticks;
        }
    }
    let powers = within(SETS[2]);
    let every = powers.len().div_ceil(10);
    powers.into_iter().step_by(every.max(1)).collect()
}

/// About six round tick positions (1, 2 or 5 × 10^k apart) over `[lo, hi]`.
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// An axis with the tick positions this module chose (plotters' own give a log axis that spans
/// one decade a single label), labelled by the mesh's formatter.
struct Ticked<R> {
    inner: R,
    ticks: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticked<R> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Light (minor) grid lines would only repeat the ticks.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }

    fn axis_pixel_range(&self, limit: (i32, i32)) -> std::ops::Range<i32> {
        self.inner.axis_pixel_range(limit)
    }
}

fn ticked<R: Ranged<ValueType = f64>>(inner: R, ticks: Vec<f64>) -> Ticked<R> {
    Ticked { inner, ticks }
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
enum Glyph {
    Line(RGBAColor),
    Dot(RGBAColor),
    Cross(RGBAColor),
    Hollow(RGBAColor),
    Saturated(RGBAColor),
    ReferenceLine,
    ReferenceMark,
    /// Text only: what a numbered category stands for.
    Key,
}

/// The colour of each series: lines and markers with the same key share one.
fn colours(p: &Panel) -> Vec<RGBAColor> {
    let mut keys: Vec<&str> = Vec::new();
    p.series
        .iter()
        .map(|s| {
            let i = keys
                .iter()
                .position(|k| *k == s.color_key)
                .unwrap_or_else(|| {
                    keys.push(&s.color_key);
                    keys.len() - 1
                });
            Palette99::pick(i).to_rgba()
        })
        .collect()
}

/// The legend of a panel, in drawing order; empty when a single unlabelled line needs none.
fn legend(p: &Panel) -> Vec<(String, Glyph)> {
    let mut entries = Vec::new();
    for (s, colour) in p.series.iter().zip(colours(p)) {
        if !s.label.is_empty() {
            let glyph = if s.markers_only {
                Glyph::Cross(colour)
            } else if p.categories.is_some() {
                Glyph::Dot(colour)
            } else {
                Glyph::Line(colour)
            };
            entries.push((s.label.clone(), glyph));
        }
        if !s.flagged.is_empty() {
            entries.push((
                format!(
                    "{}{}some replications not ok (mean of the ok ones)",
                    s.label,
                    if s.label.is_empty() { "" } else { ": " }
                ),
                Glyph::Hollow(colour),
            ));
        }
        if !s.saturated.is_empty() {
            entries.push((
                format!(
                    "{}{}saturated: latency unbounded (a lower bound)",
                    s.label,
                    if s.label.is_empty() { "" } else { ": " }
                ),
                Glyph::Saturated(colour),
            ));
        }
    }
    for (x, _, label) in &p.references {
        let glyph = match x {
            None => Glyph::ReferenceLine,
            Some(_) => Glyph::ReferenceMark,
        };
        entries.push((format!("reference: {label}"), glyph));
    }
    if numbered_categories(p) {
        let names = p.categories.iter().flatten();
        for (i, name) in names.enumerate() {
            entries.push((format!("{}: {name}", p.category_keys[i]), Glyph::Key));
        }
    }
    entries
}

/// (columns, rows, height in pixels) of the legend below a panel.
fn legend_layout(entries: &[(String, Glyph)]) -> (u32, u32, u32) {
    if entries.is_empty() {
        return (1, 0, 0);
    }
    let cols = if entries.iter().all(|(l, _)| l.chars().count() <= 44) {
        2
    } else {
        1
    };
    let rows = (entries.len() as u32).div_ceil(cols);
    (cols, rows, rows * LEGEND_ROW + 8)
}

/// Whether category names are too long to sit side by side under the axis: the axis then
/// numbers them and the legend names the numbers.
fn numbered_categories(p: &Panel) -> bool {
    p.categories.as_ref().is_some_and(|c| {
        let room = (PANEL_W - 90) as usize / c.len().max(1);
        c.iter().any(|n| n.chars().count() * 6 > room)
    })
}

fn draw_legend(
    entries: &[(String, Glyph)],
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
) -> Result<()> {
    let (cols, rows, _) = legend_layout(entries);
    let col_w = (PANEL_W - 60) / cols;
    for (i, (label, glyph)) in entries.iter().enumerate() {
        let (r, c) = (i as u32 % rows, i as u32 / rows);
        let (x, y) = ((50 + c * col_w) as i32, (4 + r * LEGEND_ROW + 8) as i32);
        let black = BLACK.to_rgba();
        match *glyph {
            Glyph::Line(col) => area.draw(&PathElement::new(
                vec![(x, y), (x + 18, y)],
                ShapeStyle::from(&col).stroke_width(2),
            ))?,
            Glyph::Dot(col) => area.draw(&Circle::new((x + 9, y), 4, col.filled()))?,
            Glyph::Cross(col) => area.draw(&Cross::new(
                (x + 9, y),
                5,
                ShapeStyle::from(&col).stroke_width(2),
            ))?,
            Glyph::Hollow(col) => area.draw(&Circle::new(
                (x + 9, y),
                5,
                ShapeStyle::from(&col).stroke_width(2),
            ))?,
            Glyph::Saturated(col) => area.draw(&TriangleMarker::new(
                (x + 9, y),
                6,
                ShapeStyle::from(&col).stroke_width(2),
            ))?,
            Glyph::ReferenceLine => {
                for d in [0, 8, 16] {
                    area.draw(&PathElement::new(
                        vec![(x + d, y), (x + d + 4, y)],
                        ShapeStyle::from(&black).stroke_width(2),
                    ))?;
                }
            }
            Glyph::ReferenceMark => {
                area.draw(&TriangleMarker::new((x + 9, y), 6, black.filled()))?
            }
            Glyph::Key => {}
        }
        area.draw(&Text::new(
            label.clone(),
            (x + 26, y - 6),
            ("sans-serif", 12).into_font(),
        ))?;
    }
    Ok(())
}

/// The caption's font size: 18 px, smaller for a title that would not fit the panel.
fn caption_size(title: &str) -> u32 {
    let chars = title.chars().count().max(1) as f64;
    (((PANEL_W - 24) as f64 / (0.55 * chars)).floor() as u32).clamp(10, 18)
}

fn draw_panel(p: &Panel, area: &DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<()> {
    let entries = legend(p);
    let (_, _, legend_h) = legend_layout(&entries);
    let (chart_area, legend_area) = area.split_vertically(area.dim_in_pixel().1 - legend_h);
    draw_legend(&entries, &legend_area)?;

    let all = || p.series.iter().flat_map(|s| s.points.iter());
    let ref_x = p.references.iter().filter_map(|r| r.0);
    let (x0, x1) = match &p.categories {
        Some(c) => (-0.5, c.len() as f64 - 0.5),
        None => range(all().map(|q| q.0).chain(ref_x), p.log_x),
    };
    let ref_y = p.references.iter().map(|r| r.1);
    let (y0, y1) = range(all().flat_map(|q| [q.2, q.3]).chain(ref_y), p.log_y);
    let x_ticks = match &p.categories {
        Some(c) => (0..c.len()).map(|i| i as f64).collect(),
        None if p.log_x => log_ticks(x0, x1),
        // Whole-number x values (k, node counts) get whole-number ticks.
        None if all().all(|q| q.0.fract() == 0.0) => linear_ticks(x0, x1)
            .into_iter()
            .filter(|t| (t - t.round()).abs() < 1e-9)
            .map(f64::round)
            .collect(),
        None => linear_ticks(x0, x1),
    };
    let y_ticks = if p.log_y {
        log_ticks(y0, y1)
    } else {
        linear_ticks(y0, y1)
    };
    let numbered = numbered_categories(p);
    let mut builder = ChartBuilder::on(&chart_area);
    builder
        .caption(&p.title, ("sans-serif", caption_size(&p.title)))
        .margin(12)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(64);
    macro_rules! finish {
        ($chart:expr) => {{
            let mut chart = $chart;
            let mut mesh = chart.configure_mesh();
            let x_desc = if numbered {
                format!("{} (numbered: see below)", p.x_label)
            } else {
                p.x_label.clone()
            };
            mesh.x_desc(x_desc).y_desc(&p.y_label);
            let cats = p.categories.clone();
            let keys = p.category_keys.clone();
            let fmt = move |x: &f64| match &cats {
                Some(c) => {
                    let i = x.round();
                    if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < c.len() {
                        if numbered {
                            keys[i as usize].clone()
                        } else {
                            c[i as usize].clone()
                        }
                    } else {
                        String::new()
                    }
                }
                None => crate::report::fmt_num(*x),
            };
            mesh.x_label_formatter(&fmt)
                .y_label_formatter(&|y: &f64| crate::report::fmt_num(*y))
                .draw()?;
            for (s, color) in p.series.iter().zip(colours(p)) {
                let style = ShapeStyle::from(&color).stroke_width(2);
                if s.markers_only {
                    chart.draw_series(s.points.iter().map(|q| Cross::new((q.0, q.1), 6, style)))?;
                    continue;
                }
                if p.categories.is_none() {
                    // Categories have no order between them: points, not a line.
                    chart
                        .draw_series(LineSeries::new(s.points.iter().map(|q| (q.0, q.1)), style))?;
                }
                let dot = if p.categories.is_some() { 4 } else { 3 };
                chart.draw_series(
                    s.points
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !s.flagged.contains(i) && !s.saturated.contains(i))
                        .map(|(_, q)| Circle::new((q.0, q.1), dot, color.filled())),
                )?;
                chart.draw_series(
                    s.flagged
                        .iter()
                        .map(|&i| Circle::new((s.points[i].0, s.points[i].1), 6, style)),
                )?;
                chart.draw_series(
                    s.saturated
                        .iter()
                        .map(|&i| TriangleMarker::new((s.points[i].0, s.points[i].1), 7, style)),
                )?;
                chart.draw_series(
                    s.points
                        .iter()
                        .filter(|q| q.3 > q.2)
                        .map(|q| ErrorBar::new_vertical(q.0, q.2, q.1, q.3, color, 6)),
                )?;
            }
            let black = ShapeStyle::from(&BLACK).stroke_width(2);
            for (x, y, _) in &p.references {
                match x {
                    None => {
                        chart.draw_series(DashedLineSeries::new(
                            [(x0, *y), (x1, *y)],
                            6,
                            5,
                            black,
                        ))?;
                    }
                    Some(x) => {
                        chart.draw_series(std::iter::once(TriangleMarker::new(
                            (*x, *y),
                            7,
                            BLACK.filled(),
                        )))?;
                    }
                }
            }
        }};
    }
    let lin = |a: f64, b: f64| RangedCoordf64::from(a..b);
    let log = |a: f64, b: f64| (a..b).log_scale().into();
    match (p.log_x && p.categories.is_none(), p.log_y) {
        (false, false) => finish!(
            builder
                .build_cartesian_2d(ticked(lin(x0, x1), x_ticks), ticked(lin(y0, y1), y_ticks))?
        ),
        (true, false) => finish!(builder.build_cartesian_2d(
            ticked::<LogCoord<f64>>(log(x0, x1), x_ticks),
            ticked(lin(y0, y1), y_ticks)
        )?),
        (false, true) => finish!(builder.build_cartesian_2d(
            ticked(lin(x0, x1), x_ticks),
            ticked::<LogCoord<f64>>(log(y0, y1), y_ticks)
        )?),
        (true, true) => finish!(builder.build_cartesian_2d(
            ticked::<LogCoord<f64>>(log(x0, x1), x_ticks),
            ticked::<LogCoord<f64>>(log(y0, y1), y_ticks)
        )?),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(rows: &[&[&str]]) -> Frame {
        Frame {
            columns: [
                "point",
                "load",
                "latency",
                "latency_ci95",
                "delta",
                "delta_ci95",
            ]
            .map(str::to_owned)
            .to_vec(),
            rows: rows
                .iter()
                .map(|r| r.iter().map(|c| (*c).to_owned()).collect())
                .collect(),
        }
    }

    fn spec(y: &str) -> PlotSpec {
        toml::from_str(&format!("x = \"load\"\ny = [\"{y}\"]")).unwrap()
    }

    /// Issue 14: an error bar went down to −3600 cycles for a latency.
    #[test]
    fn intervals_of_non_negative_quantities_stop_at_zero() {
        let f = frame(&[
            &["0", "0.1", "10", "50", "-1", "5"],
            &["1", "0.2", "4000", "7600", "2", "1"],
        ]);
        let mut cats = Vec::new();
        let lat = collect_series(
            &spec("latency"),
            &f,
            &mut cats,
            false,
            &BTreeMap::new(),
            &CodeNames::new(),
        )
        .unwrap();
        assert_eq!(
            lat[0].points,
            vec![(0.1, 10.0, 0.0, 60.0), (0.2, 4000.0, 0.0, 11600.0)]
        );
        // A quantity that is negative somewhere keeps its full interval.
        let d = collect_series(
            &spec("delta"),
            &f,
            &mut cats,
            false,
            &BTreeMap::new(),
            &CodeNames::new(),
        )
        .unwrap();
        assert_eq!(d[0].points[0], (0.1, -1.0, -6.0, 4.0));
    }

    #[test]
    fn axis_labels_carry_a_shared_unit() {
        let units: BTreeMap<String, String> = [("a", "cycles"), ("b", "cycles"), ("c", "GB/s")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .into();
        let cols = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(axis_label(&cols(&["a", "b"]), &units), "a, b (cycles)");
        assert_eq!(axis_label(&cols(&["a", "c"]), &units), "a, c");
        assert_eq!(axis_label(&cols(&["load"]), &units), "load");
    }

    #[test]
    fn flagged_points_are_marked_in_their_series() {
        let f = frame(&[
            &["0", "0.1", "10", "", "1", ""],
            &["1", "0.2", "20", "", "1", ""],
            &["2", "0.3", "90", "", "1", ""],
        ]);
        let flagged: BTreeMap<String, Mark> = [
            ("1".to_owned(), Mark::Flagged),
            ("2".to_owned(), Mark::Saturated),
        ]
        .into();
        let s = collect_series(
            &spec("latency"),
            &f,
            &mut Vec::new(),
            false,
            &flagged,
            &CodeNames::new(),
        )
        .unwrap();
        assert_eq!(
            (s[0].flagged.clone(), s[0].saturated.clone()),
            (vec![1], vec![2])
        );
    }

    /// Issue 14: a log axis over one decade had a single tick label (plotters' own ticks).
    #[test]
    fn log_axes_get_several_readable_ticks() {
        assert_eq!(
            log_ticks(200.0, 1600.0),
            vec![200., 300., 400., 500., 600., 700., 800., 900., 1000.]
        );
        assert_eq!(log_ticks(3.0, 400.0), vec![5., 10., 20., 50., 100., 200.]);
        assert_eq!(log_ticks(0.5, 2e6), vec![1., 10., 100., 1e3, 1e4, 1e5, 1e6]);
        // No 1…9 × 10^k inside: round linear steps instead.
        assert_eq!(
            log_ticks(1250.0, 1800.0),
            vec![1300., 1400., 1500., 1600., 1700., 1800.]
        );
        assert_eq!(
            linear_ticks(0.0, 0.21),
            vec![0.0, 0.05, 0.1, 0.15000000000000002, 0.2]
        );
    }

    #[test]
    fn units_come_from_metadata_then_from_the_suffix() {
        let units: BTreeMap<String, String> =
            [("latency_mean".to_owned(), "cycles".to_owned())].into();
        let one = |c: &str| axis_label(&[c.to_owned()], &units);
        assert_eq!(one("latency_mean"), "latency_mean (cycles)");
        assert_eq!(one("bw_4k_mbs"), "bw_4k_mbs (MB/s)");
        assert_eq!(one("size_bytes"), "size_bytes (B)");
        assert_eq!(one("workload.bytes"), "workload.bytes (B)");
        assert_eq!(one("latency_us"), "latency_us (µs)");
        assert_eq!(one("load"), "load");
    }

    #[test]
    fn bounded_quantities_keep_their_intervals_below_one() {
        let f = Frame {
            columns: ["point", "load", "hotspot_jain", "hotspot_jain_ci95"]
                .map(str::to_owned)
                .to_vec(),
            rows: vec![["0", "0.1", "0.95", "0.2"].map(str::to_owned).to_vec()],
        };
        let s = collect_series(
            &spec("hotspot_jain"),
            &f,
            &mut Vec::new(),
            false,
            &BTreeMap::new(),
            &CodeNames::new(),
        )
        .unwrap();
        assert_eq!(s[0].points, vec![(0.1, 0.95, 0.75, 1.0)]);
    }

    /// Issue 14: NIC variants were numbers joined by a line.
    #[test]
    fn coded_x_values_are_named_categories() {
        let f = Frame {
            columns: ["point", "variant", "bw"].map(str::to_owned).to_vec(),
            rows: vec![
                ["0", "0", "250"].map(str::to_owned).to_vec(),
                ["0", "1", "180"].map(str::to_owned).to_vec(),
            ],
        };
        let codes: CodeNames = [(
            "variant".to_owned(),
            [("0", "MyVIA"), ("1", "- PD ring")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .into(),
        )]
        .into();
        let spec: PlotSpec = toml::from_str("x = 'variant'\ny = ['bw']").unwrap();
        let mut cats = Vec::new();
        let s = collect_series(&spec, &f, &mut cats, false, &BTreeMap::new(), &codes).unwrap();
        assert_eq!(cats, ["MyVIA", "- PD ring"]);
        assert_eq!(
            s[0].points,
            vec![(0.0, 250.0, 250.0, 250.0), (1.0, 180.0, 180.0, 180.0)]
        );
    }

    /// A figure with references: the dashed line and the triangle are drawn, their labels are
    /// in the legend, and the axis reaches the reference values even beyond the data.
    #[test]
    fn references_are_drawn_into_the_svg() {
        let dir = std::env::temp_dir().join(format!("icnlab-plot-ref-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("data.csv"),
            "point,load,r,r_ci95\n0,0.1,1.05,0.01\n1,0.2,1.1,0.02\n",
        )
        .unwrap();
        let file = icn_engine::ExperimentFile::parse(
            Path::new("x.toml"),
            "model = 'm'\n[[plot]]\nx = 'load'\ny = ['r']\n\
             [[reference]]\ncolumn = 'r'\ny = 1\nlabel = 'R = 1, no gain'\n\
             [[reference]]\ncolumn = 'r'\nx = 0.3\ny = 1.4\nlabel = 'paper at 0.3'\nsource = 'Fig. 9'\n",
            false,
        )
        .unwrap();
        let out = dir.join("plot.svg");
        draw(&dir, &file.plots, &file.references, &out).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(svg.contains("reference: R = 1, no gain"), "{svg}");
        assert!(svg.contains("reference: paper at 0.3 (Fig. 9)"), "{svg}");
        // The y axis reaches 1.4 (a tick label), the x axis 0.3.
        assert!(svg.contains("\n1.4\n") && svg.contains("\n0.3\n"), "{svg}");
        // plotters draws the triangle as a polygon; the data have none.
        assert!(svg.contains("<polygon"), "{svg}");

        let bad = icn_engine::ExperimentFile::parse(
            Path::new("x.toml"),
            "model = 'm'\n[[plot]]\nx = 'load'\ny = ['r']\n\
             [[reference]]\ncolumn = 'r'\nx = 'fifo'\ny = 1\nlabel = 'l'\n",
            false,
        )
        .unwrap();
        let dir = std::env::temp_dir().join(format!("icnlab-plot-ref2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("data.csv"), "point,load,r\n0,0.1,1.05\n").unwrap();
        let err = draw(&dir, &bad.plots, &bad.references, &dir.join("plot.svg")).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            format!("{err:#}").contains("reference[0].x = fifo: the x axis `load` is numeric"),
            "{err:#}"
        );
    }

    /// Issue 14: legends covered the data. Every legend entry is drawn below every data marker
    /// and below the x axis's label; a title too long for the panel gets a smaller font.
    #[test]
    fn legends_sit_below_the_data_and_long_titles_fit() {
        let dir = std::env::temp_dir().join(format!("icnlab-plot-legend-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("data.csv"),
            "point,load,lat_a,lat_b\n0,0.1,1,5\n1,0.5,40,9\n2,0.9,80,90\n",
        )
        .unwrap();
        let file = icn_engine::ExperimentFile::parse(
            Path::new("x.toml"),
            "model = 'm'\n[[plot]]\nx = 'load'\ny = ['lat_a', 'lat_b']\n",
            false,
        )
        .unwrap();
        let out = dir.join("plot.svg");
        draw(&dir, &file.plots, &file.references, &out).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap().replace('\n', " ");
        std::fs::remove_dir_all(&dir).unwrap();
        let attr = |tag: &str, name: &str| -> f64 {
            let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            tag[at..].split('"').next().unwrap().parse().unwrap()
        };
        let texts: Vec<(f64, String)> = svg
            .split("<text")
            .skip(1)
            .map(|t| {
                let (head, rest) = t.split_once('>').unwrap();
                let body = rest.split("</text>").next().unwrap().trim().to_owned();
                (attr(head, "y"), body)
            })
            .collect();
        let data_bottom = svg
            .split("<circle")
            .skip(1)
            .map(|c| attr(c, "cy"))
            .fold(f64::MIN, f64::max);
        let x_label = texts.iter().find(|t| t.1 == "load").unwrap().0;
        for name in ["lat_a", "lat_b"] {
            let y = texts.iter().find(|t| t.1 == name).unwrap().0;
            assert!(y > data_bottom && y > x_label, "{name} at {y}: {svg}");
        }
        assert!(data_bottom > 0.0);
        // The caption's width at its font size (≈ 0.55 em per character) fits the panel.
        for title in [
            "short",
            &"a long title of a panel with many columns ".repeat(3),
        ] {
            let size = f64::from(caption_size(title));
            assert!(
                0.55 * size * title.chars().count() as f64 <= f64::from(PANEL_W - 24)
                    || size == 10.0
            );
        }
        assert!(caption_size(&"x".repeat(90)) < 18);
    }

    /// Long coded category names: the axis writes the model's codes, the legend names them, and
    /// a reference on a category sits at that category.
    #[test]
    fn long_coded_categories_are_keyed_by_their_code() {
        let f = Frame {
            columns: ["point", "check", "rel_error"].map(str::to_owned).to_vec(),
            rows: (0..6)
                .map(|i| vec!["0".into(), i.to_string(), "0.01".into()])
                .collect(),
        };
        let names: BTreeMap<String, String> = (0..6)
            .map(|i| (i.to_string(), format!("a long name of check number {i}")))
            .collect();
        let codes: CodeNames = [("check".to_owned(), names)].into();
        let file = icn_engine::ExperimentFile::parse(
            Path::new("x.toml"),
            "model = 'm'\n[[plot]]\nx = 'check'\ny = ['rel_error']\n[[reference]]\n\
             column = 'rel_error'\nx = 'a long name of check number 4'\ny = 0.2\nlabel = 'l'\n",
            false,
        )
        .unwrap();
        let (flagged, units) = (BTreeMap::new(), BTreeMap::new());
        let cx = Inputs {
            flagged: &flagged,
            units: &units,
            codes: &codes,
        };
        let p = build_panel(0, &file.plots[0], &f, None, &file.references, &cx).unwrap();
        assert!(numbered_categories(&p));
        assert_eq!(p.category_keys, ["0", "1", "2", "3", "4", "5"]);
        assert_eq!(p.references, vec![(Some(4.0), 0.2, "l".to_owned())]);
        let legend: Vec<String> = legend(&p).into_iter().map(|(l, _)| l).collect();
        assert!(
            legend.contains(&"5: a long name of check number 5".to_owned()),
            "{legend:?}"
        );
        assert!(legend.contains(&"reference: l".to_owned()), "{legend:?}");
    }
}
