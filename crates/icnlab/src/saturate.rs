//! `icnlab saturate FILE`: the saturation point of a configuration by bisection on `load`, the
//! first thing a BookSim2 user runs. For each point of the file's sweep over other keys (or its
//! base configuration), the zero-load latency is measured at the smallest load `step`, then
//! the load is bisected over the multiples of `step` up to 1 on "the replications saturate"
//! (status `saturated`: the queues grew) down to one `step`, then the knee (latency twice the
//! zero-load latency) likewise below it. About 2 log₂(1/step) runs of the configuration instead of the
//! 1/step of a fine sweep; the same seeds at every load (common random numbers), so a load is
//! judged as a sweep point of the same load would be.

use crate::exec::{ExecError, ExecOptions};
use crate::report::fmt_num;
use icn_engine::config::SweepPoint;
use icn_engine::{ConfigError, ExperimentFile, Invalid, Metrics};

/// What one configuration's bisection found.
#[derive(Clone, Debug, PartialEq)]
pub struct Saturation {
    /// The sweep point's values of the other keys (empty for the base configuration).
    pub params: Vec<(String, toml::Value)>,
    pub zero_load_latency: f64,
    /// The highest load found not saturated, and the lowest found saturated (`None`: not
    /// saturated even at load 1).
    pub below: f64,
    pub above: Option<f64>,
    /// Accepted throughput at `above` (what the network accepts past saturation), else at
    /// `below`.
    pub accepted: f64,
    /// The lowest load found whose mean latency is at least twice the zero-load latency
    /// (or saturated), to one step.
    pub knee: f64,
    /// Configuration runs it took (each with the file's replications).
    pub runs: usize,
}

fn invalid(file: &ExperimentFile, key: &str, message: String) -> ExecError {
    ExecError::Config(ConfigError::invalid(&file.path, Invalid::new(key, message)))
}

/// Bisects every point of `file`'s sweep (which must not sweep `load`) to `step`.
pub fn saturate(
    file: &ExperimentFile,
    step: f64,
    opts: ExecOptions,
) -> Result<Vec<Saturation>, ExecError> {
    if !(step > 0.0 && step <= 0.25) {
        return Err(ExecError::Usage(format!(
            "--step {step}: a load step in (0, 0.25]"
        )));
    }
    if file.sweep.iter().any(|(k, _)| k == "load") {
        return Err(invalid(
            file,
            "sweep.load",
            "`saturate` chooses the loads itself: sweep other keys only".into(),
        ));
    }
    let runner = crate::experiment::check_file(file)?;
    let defaults = runner
        .defaults(toml::Table::new())
        .map_err(|e| ExecError::Failed(e.to_string()))?;
    if !defaults.contains_key("load") {
        return Err(invalid(
            file,
            "model",
            format!(
                "model {} has no `load` key: `saturate` needs an open-loop load (vc-router, xswitch)",
                runner.name()
            ),
        ));
    }
    let points = file.points();
    // The loads `--step` makes, smallest and largest, must be loads the model takes: a
    // refusal of `load` is the flag's fault (a step of 1e-10 rounds to a load of 0), not
    // the file's.
    for point in &points {
        for load in [grid_load(1, step), grid_load(grid_steps(step), step)] {
            let mut body = point.body.clone();
            body.insert("load".into(), toml::Value::Float(load));
            let one = SweepPoint {
                index: 0,
                params: Vec::new(),
                body,
            };
            if let Err(ConfigError::Invalid { inner, .. }) =
                runner.check(file, std::slice::from_ref(&one))
                && inner.key == "load"
            {
                return Err(ExecError::Usage(format!(
                    "--step {step}: makes a load of {load}, which model {} refuses: {}",
                    runner.name(),
                    inner.message
                )));
            }
        }
    }
    points
        .into_iter()
        .map(|point| bisect(file, runner, &point, step, opts))
        .collect()
}

/// Loads are multiples of `step` (k · step, k = 1 ..= [`grid_steps`]), as a sweep's grid
/// would be, so the answer is comparable with a sweep point for point.
fn grid_load(k: u64, step: f64) -> f64 {
    (k as f64 * step * 1e9).round() / 1e9
}

fn grid_steps(step: f64) -> u64 {
    (1.0 / step).floor().max(1.0) as u64
}

fn bisect(
    file: &ExperimentFile,
    runner: &dyn crate::exec::Runner,
    point: &SweepPoint,
    step: f64,
    opts: ExecOptions,
) -> Result<Saturation, ExecError> {
    let mut runs = 0;
    let mut at = |load: f64| -> Result<Metrics, ExecError> {
        runs += 1;
        let mut body = point.body.clone();
        body.insert("load".into(), toml::Value::Float(load));
        let one = SweepPoint {
            index: 0,
            params: Vec::new(),
            body,
        };
        runner.check(file, std::slice::from_ref(&one))?;
        let mut results = runner.execute(file, &[one], opts, &|_| Ok(()))?;
        let m = results.pop().map(|p| p.metrics).unwrap_or_default();
        if let Some(runs) = &m.runs
            && !runs.all_results()
        {
            return Err(ExecError::Failed(format!(
                "{}: at load {load}: {} ({})",
                file.path.display(),
                runs.label(),
                runs.why.join("; ")
            )));
        }
        Ok(m)
    };
    let saturated = |m: &Metrics| m.runs.as_ref().is_some_and(|r| r.saturated > 0);
    let value = |m: &Metrics, name: &str| m.get(name).map_or(f64::NAN, |x| x.value);

    let n = grid_steps(step);
    let load = |k: u64| grid_load(k, step);
    let zero = at(load(1))?;
    if saturated(&zero) {
        return Err(ExecError::Failed(format!(
            "{}: saturated already at the smallest load {step}",
            file.path.display()
        )));
    }
    let l0 = value(&zero, "latency_mean");
    let top = at(load(n))?;
    let (mut lo, mut hi) = (1, n);
    let (mut accepted_lo, mut accepted_hi) = (value(&zero, "accepted"), value(&top, "accepted"));
    let above = if saturated(&top) {
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            let m = at(load(mid))?;
            if saturated(&m) {
                (hi, accepted_hi) = (mid, value(&m, "accepted"));
            } else {
                (lo, accepted_lo) = (mid, value(&m, "accepted"));
            }
        }
        Some(load(hi))
    } else {
        lo = n;
        accepted_lo = accepted_hi;
        None
    };
    // The knee: the latency doubles, between the zero-load point and saturation.
    let (mut klo, mut khi) = (1, hi);
    while khi - klo > 1 {
        let mid = (klo + khi) / 2;
        let m = at(load(mid))?;
        if saturated(&m) || value(&m, "latency_mean") >= 2.0 * l0 {
            khi = mid;
        } else {
            klo = mid;
        }
    }
    Ok(Saturation {
        params: point.params.clone(),
        zero_load_latency: l0,
        below: load(lo),
        above,
        accepted: if above.is_some() {
            accepted_hi
        } else {
            accepted_lo
        },
        knee: load(khi),
        runs,
    })
}

/// One line per configuration.
pub fn line(s: &Saturation) -> String {
    let label = if s.params.is_empty() {
        "base configuration".to_owned()
    } else {
        crate::report::params_label(&s.params)
    };
    match s.above {
        Some(above) => format!(
            "{label}: saturates between load {} and {} (accepting {} there); zero-load latency {} cycles; knee (latency ×2) at {}; {} runs",
            fmt_num(s.below),
            fmt_num(above),
            fmt_num(s.accepted),
            fmt_num(s.zero_load_latency),
            fmt_num(s.knee),
            s.runs
        ),
        None => format!(
            "{label}: not saturated at load 1 (accepting {}); zero-load latency {} cycles; {} runs",
            fmt_num(s.accepted),
            fmt_num(s.zero_load_latency),
            s.runs
        ),
    }
}
