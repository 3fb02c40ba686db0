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
        let err = || format!("`{s}`: a shard is i/n with 0 ≤ i < n, e.g. 0/4");
        let (i, n) = s.split_once('/').ok_or_else(err)?;
        let (index, count): (usize, usize) = (
            i.trim().parse().map_err(|_| err())?,
            n.trim().parse().map_err(|_| err())?,
        );
        if count == 0 || index >= count {
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
    let results = runner.execute(file, &points, plan.opts, &plot_probe(file, plan, &points))?;
    let elapsed = started.elapsed().as_secs_f64();
    let report = report(file, plan, results, elapsed, threads(plan));
    write_outputs(&report, staging)?;
    Ok(report)
}

/// The file's runner and the points `plan` runs (all, the shard's, or the base configuration),
/// every point of the file checked first.
pub fn select(
    file: &ExperimentFile,
    plan: &Plan,
) -> Result<(&'static dyn Runner, Vec<SweepPoint>), ExecError> {
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

/// The probe of [`Runner::execute`]: a sweep's plots must find their columns in the metrics.
pub fn plot_probe<'a>(
    file: &'a ExperimentFile,
    plan: &'a Plan,
    points: &[SweepPoint],
) -> impl Fn(&icn_engine::Metrics) -> Result<(), ConfigError> + Sync + 'a {
    let sweep_keys: Vec<String> = points
        .first()
        .map(|p| p.params.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    move |sample: &icn_engine::Metrics| {
        if !plan.sweep {
            return Ok(());
        }
        crate::plot::check_columns(&file.plots, &sweep_keys, sample)
            .map_err(|inner| ConfigError::invalid(&file.path, inner))
    }
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
    wall_time_s: f64,
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
        points: results,
    }
}

/// `Err` naming every point with a replication that did not end ok (deadlock, drain limit,
/// failure), after the data of all points were written to `out`: such a run exits 1.
pub fn verdict(report: &RunReport, out: &Path) -> Result<(), ExecError> {
    let mut flagged = report.flagged();
    if flagged.is_empty() {
        return Ok(());
    }
    let count = flagged.len();
    // The error stays readable when thousands of points are flagged: data.csv has them all.
    const SHOWN: usize = 10;
    if count > SHOWN {
        flagged.truncate(SHOWN);
        flagged.push(format!(
            "and {} more (see the status column of data.csv)",
            count - SHOWN
        ));
    }
    Err(ExecError::Failed(format!(
        "{}: {} of {} points have replications that did not end ok (all points written to {}; \
         flagged points average their ok replications, or all of them when every one hit the \
         drain limit): {}",
        report.config_file,
        count,
        report.points.len(),
        out.display(),
        flagged.join("; ")
    )))
}

/// report.json, the CSVs and (for sweeps with plot specs) plot.svg, written into `staging`
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
        .map_err(|e| {
            let _ = std::fs::remove_file(out.join("plot.svg"));
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
