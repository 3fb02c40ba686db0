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
//! Points whose replications did not all end ok (`status` column of `data.csv` not `ok`) are
//! drawn as hollow markers with their own legend entry: their value averages only the ok
//! replications, and a reader must see that rather than a dot like any other.

use anyhow::{Context, Result};
use icn_engine::config::{PlotSpec, value_label};
use plotters::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
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
    /// Positions (indices into `points`) of flagged points.
    flagged: Vec<usize>,
}

/// (x position, y, lower end, upper end, flagged) while a series is collected.
type RawPoint = (f64, f64, f64, f64, bool);

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

/// "latency_mean, latency_p99 (cycles)": the columns and, when they share one, their unit.
fn axis_label(columns: &[String], units: &BTreeMap<String, String>) -> String {
    let names = columns.join(", ");
    let mut found = columns.iter().map(|c| units.get(c));
    match found.next().flatten() {
        Some(u) if found.all(|o| o == Some(u)) => format!("{names} ({u})"),
        _ => names,
    }
}

/// The `point` values of `data.csv` rows whose `status` is not `ok`.
fn flagged_points(dir: &Path) -> Result<BTreeSet<String>> {
    let path = dir.join("data.csv");
    if !path.exists() {
        return Ok(BTreeSet::new());
    }
    let frame = Frame::read(&path)?;
    let (Ok(pi), Ok(si)) = (frame.col("point"), frame.col("status")) else {
        return Ok(BTreeSet::new());
    };
    Ok(frame
        .rows
        .iter()
        .filter(|r| !r[si].is_empty() && r[si] != "ok")
        .map(|r| r[pi].clone())
        .collect())
}

struct Panel {
    title: String,
    x_label: String,
    y_label: String,
    categories: Option<Vec<String>>,
    series: Vec<Series>,
    log_x: bool,
    log_y: bool,
}

fn build_panel(
    spec: &PlotSpec,
    frame: &Frame,
    markers: Option<&Frame>,
    flagged: &BTreeSet<String>,
    units: &BTreeMap<String, String>,
) -> Result<Panel> {
    let mut categories: Vec<String> = Vec::new();
    let mut series = collect_series(spec, frame, &mut categories, false, flagged)?;
    if let Some(m) = markers {
        series.extend(collect_series(
            spec,
            m,
            &mut categories,
            true,
            &BTreeSet::new(),
        )?);
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
            .unwrap_or_else(|| axis_label(std::slice::from_ref(&spec.x), units)),
        y_label: spec
            .y_label
            .clone()
            .unwrap_or_else(|| axis_label(&spec.y, units)),
        categories: (!categories.is_empty()).then_some(categories),
        series,
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
    flagged: &BTreeSet<String>,
) -> Result<Vec<Series>> {
    let xi = frame.col(&spec.x)?;
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
    let numeric_x = rows.iter().all(|r| r[xi].parse::<f64>().is_ok());
    if !numeric_x {
        for r in &rows {
            if !categories.contains(&r[xi]) {
                categories.push(r[xi].clone());
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
        let mut groups: BTreeMap<Vec<String>, Vec<RawPoint>> = BTreeMap::new();
        let mut order: Vec<Vec<String>> = Vec::new();
        for r in &rows {
            let Ok(yv) = r[yi].parse::<f64>() else {
                continue;
            };
            let x = if numeric_x {
                r[xi].parse::<f64>().expect("checked numeric")
            } else {
                categories
                    .iter()
                    .position(|c| *c == r[xi])
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
                .map(|&c| format!("{}={}", frame.columns[c], r[c]))
                .collect();
            if !groups.contains_key(&key) {
                order.push(key.clone());
            }
            let bad = point_col.is_some_and(|c| flagged.contains(&r[c]));
            groups
                .entry(key)
                .or_default()
                .push((x, yv, lo, yv + half, bad));
        }
        for key in order {
            let mut all = groups.remove(&key).expect("ordered key");
            all.sort_by(|a, b| a.0.total_cmp(&b.0));
            let flagged = (0..all.len()).filter(|&i| all[i].4).collect();
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
            });
        }
    }
    Ok(series)
}

const PANEL_W: u32 = 620;
const PANEL_H: u32 = 420;

/// Draws all panels of `specs` into one SVG at `out`, reading `data.csv` / `<table>.csv` in `dir`.
pub fn draw(dir: &Path, specs: &[PlotSpec], out: &Path) -> Result<()> {
    if specs.is_empty() {
        return Ok(());
    }
    let flagged = flagged_points(dir)?;
    let units = units_of(dir);
    let mut panels = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let file = dir.join(format!("{}.csv", spec.table.as_deref().unwrap_or("data")));
        let frame = Frame::read(&file)?;
        let markers = match &spec.markers {
            Some(t) => Some(Frame::read(&dir.join(format!("{t}.csv")))?),
            None => None,
        };
        panels.push(
            build_panel(spec, &frame, markers.as_ref(), &flagged, &units)
                .with_context(|| format!("plot {} (from {})", i + 1, file.display()))?,
        );
    }
    let cols = if panels.len() == 1 { 1 } else { 2 };
    let rows = panels.len().div_ceil(cols);
    let root =
        SVGBackend::new(out, (PANEL_W * cols as u32, PANEL_H * rows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((rows, cols));
    for (panel, area) in panels.iter().zip(areas.iter()) {
        draw_panel(panel, area).with_context(|| format!("drawing panel `{}`", panel.title))?;
    }
    root.present()
        .with_context(|| format!("cannot write {}", out.display()))?;
    Ok(())
}

fn draw_panel(p: &Panel, area: &DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<()> {
    let all = || p.series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = match &p.categories {
        Some(c) => (-0.5, c.len() as f64 - 0.5),
        None => range(all().map(|q| q.0), p.log_x),
    };
    let (y0, y1) = range(all().flat_map(|q| [q.2, q.3]), p.log_y);
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&p.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64);
    macro_rules! finish {
        ($chart:expr) => {{
            let mut chart = $chart;
            let mut mesh = chart.configure_mesh();
            mesh.x_desc(&p.x_label).y_desc(&p.y_label);
            let cats = p.categories.clone();
            let fmt = move |x: &f64| match &cats {
                Some(c) => {
                    let i = x.round();
                    if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < c.len() {
                        c[i as usize].clone()
                    } else {
                        String::new()
                    }
                }
                None => crate::report::fmt_num(*x),
            };
            mesh.x_label_formatter(&fmt)
                .y_label_formatter(&|y: &f64| crate::report::fmt_num(*y))
                .draw()?;
            let mut keys: Vec<&str> = Vec::new();
            for s in &p.series {
                if !keys.contains(&s.color_key.as_str()) {
                    keys.push(&s.color_key);
                }
            }
            for s in &p.series {
                let i = keys
                    .iter()
                    .position(|k| *k == s.color_key)
                    .expect("collected");
                let color = Palette99::pick(i).to_rgba();
                let style = ShapeStyle::from(&color).stroke_width(2);
                if s.markers_only {
                    chart
                        .draw_series(s.points.iter().map(|q| Cross::new((q.0, q.1), 6, style)))?
                        .label(s.label.clone())
                        .legend(move |(x, y)| Cross::new((x + 9, y), 5, style));
                    continue;
                }
                if p.categories.is_some() {
                    // Categories have no order between them: points, not a line.
                    chart
                        .draw_series(
                            s.points
                                .iter()
                                .map(|q| Circle::new((q.0, q.1), 4, color.filled())),
                        )?
                        .label(s.label.clone())
                        .legend(move |(x, y)| Circle::new((x + 9, y), 4, color.filled()));
                } else {
                    chart
                        .draw_series(LineSeries::new(s.points.iter().map(|q| (q.0, q.1)), style))?
                        .label(s.label.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
                }
                chart.draw_series(
                    s.points
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !s.flagged.contains(i))
                        .map(|(_, q)| Circle::new((q.0, q.1), 3, color.filled())),
                )?;
                if !s.flagged.is_empty() {
                    let hollow = ShapeStyle::from(&color).stroke_width(2);
                    chart
                        .draw_series(
                            s.flagged
                                .iter()
                                .map(|&i| Circle::new((s.points[i].0, s.points[i].1), 6, hollow)),
                        )?
                        .label(format!(
                            "{}{}some replications not ok (mean of the ok ones)",
                            s.label,
                            if s.label.is_empty() { "" } else { ": " }
                        ))
                        .legend(move |(x, y)| Circle::new((x + 9, y), 5, hollow));
                }
                chart.draw_series(
                    s.points
                        .iter()
                        .filter(|q| q.3 > q.2)
                        .map(|q| ErrorBar::new_vertical(q.0, q.2, q.1, q.3, color, 6)),
                )?;
            }
            if p.series
                .iter()
                .any(|s| !s.label.is_empty() || !s.flagged.is_empty())
            {
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK.mix(0.3))
                    .position(SeriesLabelPosition::UpperLeft)
                    .label_font(("sans-serif", 12))
                    .draw()?;
            }
        }};
    }
    match (p.log_x && p.categories.is_none(), p.log_y) {
        (false, false) => finish!(builder.build_cartesian_2d(x0..x1, y0..y1)?),
        (true, false) => finish!(builder.build_cartesian_2d((x0..x1).log_scale(), y0..y1)?),
        (false, true) => finish!(builder.build_cartesian_2d(x0..x1, (y0..y1).log_scale())?),
        (true, true) => {
            finish!(builder.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?)
        }
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
        let lat = collect_series(&spec("latency"), &f, &mut cats, false, &BTreeSet::new()).unwrap();
        assert_eq!(
            lat[0].points,
            vec![(0.1, 10.0, 0.0, 60.0), (0.2, 4000.0, 0.0, 11600.0)]
        );
        // A quantity that is negative somewhere keeps its full interval.
        let d = collect_series(&spec("delta"), &f, &mut cats, false, &BTreeSet::new()).unwrap();
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
        ]);
        let flagged: BTreeSet<String> = ["1".to_owned()].into();
        let s = collect_series(&spec("latency"), &f, &mut Vec::new(), false, &flagged).unwrap();
        assert_eq!(s[0].flagged, vec![1]);
    }
}
