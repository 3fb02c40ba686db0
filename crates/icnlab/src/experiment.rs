//! Running one experiment file end to end: points → results → report.json, CSVs, plot.svg.

use crate::exec::{ExecError, ExecOptions, Runner};
use crate::outdir::Staging;
use crate::report::{PointResult, RunReport};
use icn_engine::config::SweepPoint;
use icn_engine::{ConfigError, ExperimentFile, Invalid};
use std::path::Path;
use std::time::Instant;

/// Which part of the sweep to run: all points, or every n-th starting at i.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let max = crate::merge::MAX_SHARDS;
        let err = || format!("`{s}`: a shard is i/n with 0 ≤ i < n ≤ {max}, e.g. 0/4");
        let (i, n) = s.split_once('/').ok_or_else(err)?;
        let (index, count): (usize, usize) = (
            i.trim().parse().map_err(|_| err())?,
            n.trim().parse().map_err(|_| err())?,
        );
        if count == 0 || count > max || index >= count {
            return Err(err());
        }
        Ok(Shard { index, count })
    }
}

/// What to run of a file.
pub struct Plan {
    pub sweep: bool,
    pub shard: Option<Shard>,
    pub opts: ExecOptions,
}

/// Finds the file's model and types, validates and prepares every point of its sweep without
/// running anything (`icnlab check`, and the first step of every run). Every point is checked
/// even by `run` (which runs the base configuration only): an unknown or out-of-range [sweep]
/// key is an error, not silently ignored.
pub fn check_file(file: &ExperimentFile) -> Result<&'static dyn Runner, ExecError> {
    let runner = crate::models::find(&file.model).ok_or_else(|| {
        ConfigError::invalid(
            &file.path,
            Invalid::new(
                "model",
                format!(
                    "unknown model \"{}\"; available: {}",
                    file.model,
                    crate::models::names()
                ),
            ),
        )
    })?;
    runner.check(file, &file.points())?;
    Ok(runner)
}

/// Runs `file` per `plan`, writes everything into `out`, and returns the report. A plot that
/// cannot be drawn is reported as an error after the data are safely written. Points whose
/// replications did not all end ok are written (flagged) like the others; [`verdict`] turns
/// them into the run's error once the caller has shown the report.
pub fn run_file(file: &ExperimentFile, out: &Path, plan: &Plan) -> Result<RunReport, ExecError> {
    let (runner, points) = select(file, plan)?;
    let staging = Staging::begin(out)?;
    let started = Instant::now();
    let cpu_started = crate::provenance::cpu_time_s();
    let results = runner.execute(
        file,
        &points,
        plan.opts,
        &first_run_probe(file, plan, &points),
    )?;
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = crate::provenance::cpu_time_s() - cpu_started;
    let report = report(file, plan, results, (elapsed, cpu), threads(plan));
    write_outputs(&report, staging)?;
    Ok(report)
}

/// The file's runner and the points `plan` runs (all, the shard's, or the base configuration),
/// every point of the file checked first.
pub fn select(
    file: &ExperimentFile,
    plan: &Plan,
) -> Result<(&'static dyn Runner, Vec<SweepPoint>), ExecError> {
    // Each model's memory estimate covers one replication: it is held against the share of
    // the memory of each replication that runs at once (threads, at most one per job).
    let points = if plan.sweep { file.points().len() } else { 1 };
    let jobs = points as u64 * u64::from(file.replications);
    let at_once = (threads(plan) as u64).min(jobs.max(1));
    icn_engine::memory::set_concurrent_runs(at_once as usize);
    let runner = check_file(file)?;
    let mut points = file.points();
    if !plan.sweep {
        let mut base = file.clone();
        base.sweep.clear();
        points = base.points();
        runner.check(file, &points)?;
    }
    if let Some(s) = plan.shard {
        points.retain(|p| p.index % s.count == s.index);
    }
    Ok((runner, points))
}

/// The probe of [`Runner::execute`], run on the first replication's metrics before the others
/// start: a sweep's plots must find their columns in the metrics, and the results of every
/// run must fit in memory.
pub fn first_run_probe<'a>(
    file: &'a ExperimentFile,
    plan: &'a Plan,
    points: &[SweepPoint],
) -> impl Fn(&icn_engine::Metrics) -> Result<(), ConfigError> + Sync + 'a {
    let sweep_keys: Vec<String> = points
        .first()
        .map(|p| p.params.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let runs = points.len() as u128 * u128::from(file.replications);
    let points = points.len() as u128;
    move |sample: &icn_engine::Metrics| {
        results_fit(sample, runs, points, icn_engine::memory::machine_memory())
            .map_err(|inner| ConfigError::invalid(&file.path, inner))?;
        if !plan.sweep {
            return Ok(());
        }
        crate::plot::check_columns(&file.plots, &sweep_keys, sample)
            .map_err(|inner| ConfigError::invalid(&file.path, inner))?;
        check_columns(&file.checks, sample).map_err(|inner| ConfigError::invalid(&file.path, inner))
    }
}

/// Every `[[check]]` column must be a scalar the model writes, or a column of the table the
/// check names (checked on the first run, as the plot columns are), so a misspelt claim is an
/// input error rather than "not judged".
fn check_columns(
    checks: &[icn_engine::config::Check],
    sample: &icn_engine::Metrics,
) -> Result<(), icn_engine::Invalid> {
    for (i, c) in checks.iter().enumerate() {
        let table = match &c.table {
            None => None,
            Some(name) => Some(sample.table(name).ok_or_else(|| {
                let have: Vec<&str> = sample.tables.iter().map(|t| t.name.as_str()).collect();
                icn_engine::Invalid::new(
                    format!("check[{i}].table"),
                    format!(
                        "the model writes no table `{name}` (have: {})",
                        have.join(", ")
                    ),
                )
            })?),
        };
        for (key, column) in [
            ("column", Some(&c.column)),
            ("than_column", c.than_column.as_ref()),
        ] {
            let Some(column) = column else { continue };
            let missing = match table {
                Some(t) => (!t.columns.contains(column)).then(|| {
                    format!(
                        "table `{}` has no column `{column}` (have: {})",
                        t.name,
                        t.columns.join(", ")
                    )
                }),
                None => (sample.get(column).is_none()
                    && !crate::report::STATUS_COLUMNS[1..].contains(&column.as_str()))
                .then(|| {
                    let have: Vec<&str> = sample.scalars.iter().map(|m| m.name.as_str()).collect();
                    format!(
                        "the model writes no scalar `{column}` (have: {})",
                        have.join(", ")
                    )
                }),
            };
            if let Some(message) = missing {
                return Err(icn_engine::Invalid::new(
                    format!("check[{i}].{key}"),
                    message,
                ));
            }
        }
    }
    Ok(())
}

/// Refuses a run whose results will not fit in `available` bytes, judged from the first
/// run's metrics (`sample`): every run's metrics are held until the end (a table row costs
/// its cells plus ~96 bytes of vector and allocation), and each point's aggregate and
/// report.json text are built in memory (~64 bytes per cell with its interval). Tables grow
/// with the network: one replication on a 65 536-terminal fat tree carries 458 752 table rows,
/// so a 40-load sweep of 2 replications took 7.9 GB (this estimate: 8.1 GB) and a few hundred
/// loads would not fit.
fn results_fit(
    sample: &icn_engine::Metrics,
    runs: u128,
    points: u128,
    available: u64,
) -> Result<(), icn_engine::Invalid> {
    let (rows, cells): (u128, u128) = sample.tables.iter().fold((0, 0), |(r, c), t| {
        let n = t.rows.len() as u128;
        (r + n, c + n * t.columns.len() as u128)
    });
    let per_run = 8 * cells + 96 * rows + 128 * sample.scalars.len() as u128;
    let per_point = 64 * cells + 256 * sample.scalars.len() as u128;
    let needed = runs * per_run + points * per_point;
    if needed <= u128::from(available) / 2 {
        return Ok(());
    }
    Err(icn_engine::Invalid::new(
        "sweep",
        format!(
            "the results of {runs} runs (each with {rows} table rows) need about {} MB, more than half of the {} MB available on this machine; run fewer points or replications, or shards (`--shard i/n`)",
            needed >> 20,
            available >> 20
        ),
    ))
}

/// The worker threads this process runs jobs on.
pub fn threads(plan: &Plan) -> usize {
    if plan.opts.threads == 0 {
        rayon::current_num_threads()
    } else {
        plan.opts.threads
    }
}

/// The report of `results`, run per `plan` on `threads` worker threads (of all processes).
/// The results do not depend on the threads; `wall_time_s` and `threads` say how it ran.
pub fn report(
    file: &ExperimentFile,
    plan: &Plan,
    results: Vec<PointResult>,
    (wall_time_s, cpu_time_s): (f64, f64),
    threads: usize,
) -> RunReport {
    RunReport {
        tool: "icnlab".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        model: file.model.clone(),
        title: file.title.clone(),
        description: file.description.clone(),
        config_file: file.path.display().to_string(),
        seed: file.seed,
        replications: file.replications,
        threads,
        wall_time_s,
        shard: plan.shard.map(|s| (s.index, s.count)),
        experiment: file.identity(),
        sweep_points: if plan.sweep { file.point_count() } else { 1 },
        plots: if plan.sweep {
            file.plots.clone()
        } else {
            Vec::new()
        },
        verdict: file.verdict.clone(),
        references: if plan.sweep {
            file.references.clone()
        } else {
            Vec::new()
        },
        check_specs: file.checks.clone(),
        checks: crate::checks::judge(&file.checks, &results),
        provenance: Some(crate::provenance::Provenance::now(wall_time_s, cpu_time_s)),
        points: results,
    }
}

/// The run's status in one short line, and whether it is a failure: `None` when every
/// replication of every point ended ok. Points are counted by their status (a point's worst
/// replication); saturated points are results (exit 0), deadlocked, drain-limited and failed
/// ones are not, and the line names the first of those with its diagnosis cut short. Every
/// point's status is in `data.csv`, its diagnoses in report.json.
pub fn status_line(report: &RunReport, out: &Path) -> Option<(String, bool)> {
    let flagged: Vec<&PointResult> = report.points.iter().filter(|p| p.is_flagged()).collect();
    if flagged.is_empty() {
        return None;
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for p in &flagged {
        let kind = p.metrics.status.kind();
        match counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((kind, 1)),
        }
    }
    counts.sort();
    let counted = counts
        .iter()
        .map(|(k, n)| format!("{n} {}", k.replace('_', " ")))
        .collect::<Vec<_>>()
        .join(", ");
    let file = &report.config_file;
    let total = report.points.len();
    let csv = out.join("data.csv");
    let claimed = |p: &PointResult| {
        matches!(p.metrics.status, icn_engine::Status::Deadlocked(_))
            && crate::checks::deadlock_claimed(&report.check_specs, &report.checks, p)
    };
    let first_bad = flagged
        .iter()
        .find(|p| !p.metrics.status.is_result() && !claimed(p));
    let saturated_only = flagged.iter().all(|p| p.metrics.status.is_result());
    Some(match first_bad {
        None if saturated_only => (
            format!(
                "{file}: {} of {total} points saturated (accepted throughput measured, latency unbounded); statuses in {}",
                flagged.len(),
                csv.display()
            ),
            false,
        ),
        None => (
            format!(
                "{file}: {} of {total} points flagged ({counted}), every deadlock one a confirmed check claims; statuses in {}",
                flagged.len(),
                csv.display()
            ),
            false,
        ),
        Some(p) => {
            const WHY: usize = 160;
            let why = p.metrics.status.why();
            let cut: String = why.chars().take(WHY).collect();
            let more = if cut.len() < why.len() { "…" } else { "" };
            (
                format!(
                    "{file}: {} of {total} points not ok ({counted}); first: {}: {}: {cut}{more}; statuses in {}",
                    flagged.len(),
                    p.label(),
                    p.metrics.status.kind(),
                    csv.display()
                ),
                true,
            )
        }
    })
}

/// `Err` with the [`status_line`] when some point has a replication that deadlocked, hit the
/// drain limit or failed, after the data of all points were written to `out`: such a run
/// exits 1. A run whose flagged points are only saturated is a result: its line is a note on
/// stderr and the run exits 0.
pub fn verdict(report: &RunReport, out: &Path) -> Result<(), ExecError> {
    match status_line(report, out) {
        Some((line, true)) => return Err(ExecError::Failed(line)),
        Some((line, false)) => eprintln!("note: {line}"),
        None => {}
    }
    let score = crate::checks::Score::of(&report.checks);
    if score.fail > 0 {
        return Err(ExecError::CheckFailed(format!(
            "{}: claims {} (see the checks in stdout and report.json)",
            report.config_file,
            score.label()
        )));
    }
    Ok(())
}

/// report.json, the CSVs and (for sweeps with plot specs) plot.svg and plot.png, written into `staging`
/// and then put in place of its target folder as a whole (see [`crate::outdir`]). A plot that
/// fails is an error after the data are in place.
pub fn write_outputs(report: &RunReport, staging: Staging) -> Result<(), ExecError> {
    let out = staging.path().to_path_buf();
    let fail = |e: anyhow::Error| ExecError::Failed(staging.rename_in(&format!("{e:#}")));
    report.write_json(&out.join("report.json")).map_err(fail)?;
    report.write_csvs(&out).map_err(fail)?;
    // An empty shard (`--shard 7/8` of a 6-point sweep) has no data to draw.
    let plot = if report.plots.is_empty() || report.points.is_empty() {
        Ok(())
    } else {
        crate::plot::draw(
            &out,
            &report.plots,
            &report.references,
            &out.join("plot.svg"),
        )
        .and_then(|()| crate::raster::write_png(&out.join("plot.svg"), &out.join("plot.png")))
        .map_err(|e| {
            let _ = std::fs::remove_file(out.join("plot.svg"));
            let _ = std::fs::remove_file(out.join("plot.png"));
            ExecError::Failed(staging.rename_in(&format!(
                "{}: data written to {}, but the plot failed: {e:#}",
                report.config_file,
                staging.target().display()
            )))
        })
    };
    staging.commit()?;
    plot
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first replication of a 65 536-terminal fat tree: 458 752 table rows.
    fn fat_tree_sample() -> icn_engine::Metrics {
        let table = |name: &str, rows: usize, cols: usize| icn_engine::Table {
            name: name.into(),
            columns: (0..cols).map(|c| format!("c{c}")).collect(),
            rows: vec![vec![0.0; cols]; rows],
            ci95: vec![],
        };
        icn_engine::Metrics {
            tables: vec![table("links", 393_216, 3), table("per_source", 65_536, 4)],
            ..Default::default()
        }
    }

    /// Issue 14, item 4: a sweep whose results exhaust memory is refused after its first
    /// replication, naming `sweep`; the measured 7.9 GB case is estimated near what it took.
    #[test]
    fn results_beyond_the_machine_are_refused_after_the_first_run() {
        let sample = fat_tree_sample();
        let gb = 1u64 << 30;
        assert!(results_fit(&sample, 80, 40, 24 * gb).is_ok());
        let e = results_fit(&sample, 800, 400, 24 * gb).unwrap_err();
        assert_eq!(e.key, "sweep");
        assert!(
            e.message.contains("800 runs (each with 458752 table rows)"),
            "{}",
            e.message
        );
        let needed_gb = |runs, points| {
            let e = results_fit(&sample, runs, points, 0).unwrap_err();
            let mb: u64 = e
                .message
                .split("about ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            mb as f64 / 1024.0
        };
        let est = needed_gb(80, 40);
        assert!((7.0..9.5).contains(&est), "{est} GB");
        assert!(results_fit(&icn_engine::Metrics::default(), 1_000_000, 100_000, gb).is_ok());
    }
}
