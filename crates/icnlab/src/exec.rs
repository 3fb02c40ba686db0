//! Runs the points of an experiment file: typed configs for every point, replications with
//! derived seeds, all on a rayon pool with one progress bar, aggregated in point order.
//!
//! Determinism: every (point, replication) job is a pure function of its config and its seed
//! `derive_seed(file seed, replication)`, and results are collected in job order, so the output
//! does not depend on the number of threads. The same seeds are used at every point (common
//! random numbers), which makes a sweep point identical to `icnlab run` with the same values and
//! makes comparisons between points paired.

use crate::report::PointResult;
use icn_engine::config::{ExperimentFile, SweepPoint};
use icn_engine::model::ModelError;
use icn_engine::rng::derive_seed;
use icn_engine::{ConfigError, Context, Metrics, Model, Progress, Status};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::marker::PhantomData;

/// How to execute: threads (0 = all cores), progress bar on or off.
#[derive(Clone, Copy, Debug)]
pub struct ExecOptions {
    pub threads: usize,
    pub progress: bool,
}

/// Errors from executing an experiment: bad configuration or command-line input (exit code 2)
/// or a failed run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Bad command-line input (unknown graph, invalid parameters, unreadable file).
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Failed(String),
}

/// A model behind a type-erased handle, so the CLI can choose it by name at run time.
pub trait Runner: Sync {
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    /// The model's keys with their defaults (the typed config of an empty body), as TOML.
    fn defaults(&self) -> Result<toml::Table, String>;
    /// Parses and validates every point, without running anything.
    fn check(&self, file: &ExperimentFile, points: &[SweepPoint]) -> Result<(), ConfigError>;
    /// Runs every point's replications. `probe` sees the first replication's metrics before
    /// the others start (to check what the outputs will need, e.g. plot columns); its error
    /// stops the run.
    fn execute(
        &self,
        file: &ExperimentFile,
        points: &[SweepPoint],
        opts: ExecOptions,
        probe: &Probe<'_>,
    ) -> Result<Vec<PointResult>, ExecError>;
}

/// See [`Runner::execute`].
pub type Probe<'a> = dyn Fn(&Metrics) -> Result<(), ConfigError> + Sync + 'a;

pub struct ModelRunner<M>(PhantomData<M>);

impl<M> ModelRunner<M> {
    pub const fn new() -> Self {
        ModelRunner(PhantomData)
    }
}

/// A point's typed config (echoed in reports) and what the model prepared from it.
type PreparedPoint<M> = (<M as Model>::Config, <M as Model>::Prepared);

impl<M: Model> ModelRunner<M> {
    /// Types, validates and prepares every point (paths relative to the experiment file),
    /// so that every input error is reported before anything runs.
    fn prepare(
        file: &ExperimentFile,
        points: &[SweepPoint],
    ) -> Result<Vec<PreparedPoint<M>>, ConfigError> {
        let ctx = Context::for_file(&file.path);
        points
            .iter()
            .map(|p| {
                let cfg: M::Config = file.typed(&p.body)?;
                let prepared = M::prepare(&cfg, &ctx).map_err(|mut inner| {
                    if !p.params.is_empty() {
                        inner.message.push_str(&format!(
                            " (sweep point {})",
                            crate::report::params_label(&p.params)
                        ));
                    }
                    ConfigError::invalid(&file.path, inner)
                })?;
                Ok((cfg, prepared))
            })
            .collect()
    }
}

/// One replication's metrics with its [`Status`] settled: a run that failed becomes a failed
/// replication (the other replications and points still count); a model that reports the
/// scalars `deadlocked` / `unfinished` but sets no status gets the status they imply. Only an
/// invalid configuration found at run time stays an error (it is the input's fault: exit 2).
fn with_status(result: Result<Metrics, ModelError>) -> Result<Metrics, icn_engine::Invalid> {
    match result {
        Ok(mut m) => {
            if m.status.is_ok() {
                m.status = Status::from_scalars(&m);
            }
            Ok(m)
        }
        Err(ModelError::Failed(why)) => Ok(Metrics::failed(Status::Failed(why))),
        Err(ModelError::Invalid(inner)) => Err(inner),
    }
}

struct BarProgress<'a>(&'a ProgressBar);

impl Progress for BarProgress<'_> {
    fn advance(&self, units: u64) {
        self.0.inc(units);
    }
}

impl<M: Model> Runner for ModelRunner<M> {
    fn name(&self) -> &'static str {
        M::NAME
    }

    fn about(&self) -> &'static str {
        M::ABOUT
    }

    fn check(&self, file: &ExperimentFile, points: &[SweepPoint]) -> Result<(), ConfigError> {
        Self::prepare(file, points).map(drop)
    }

    fn defaults(&self) -> Result<toml::Table, String> {
        let cfg: M::Config =
            icn_engine::config::deserialize_at(toml::Value::Table(toml::Table::new()))
                .map_err(|e| format!("model {} has keys without defaults: {e}", M::NAME))?;
        toml::Table::try_from(&cfg).map_err(|e| e.to_string())
    }

    fn execute(
        &self,
        file: &ExperimentFile,
        points: &[SweepPoint],
        opts: ExecOptions,
        probe: &Probe<'_>,
    ) -> Result<Vec<PointResult>, ExecError> {
        let configs = Self::prepare(file, points)?;
        let reps = file.replications as usize;
        let jobs: Vec<(usize, u64)> = (0..points.len())
            .flat_map(|p| (0..reps as u64).map(move |r| (p, r)))
            .collect();
        let total: u64 = configs.iter().map(|(c, _)| M::work(c)).sum::<u64>() * reps as u64;
        let bar = if opts.progress {
            ProgressBar::new(total)
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} [{elapsed_precise}] {wide_bar} {percent:>3}% eta {eta}",
            )
            .expect("static template"),
        );
        bar.set_message(format!("{} × {} runs", file.title, jobs.len()));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(opts.threads)
            .build()
            .map_err(|e| ExecError::Failed(format!("cannot start worker threads: {e}")))?;
        let run = |&(p, r): &(usize, u64)| {
            M::run_prepared(&configs[p].1, derive_seed(file.seed, r), &BarProgress(&bar))
        };
        // The first replication runs alone so that the probe can refuse the run before the
        // rest of the sweep is spent; results stay in job order either way.
        let mut results: Vec<Result<Metrics, ModelError>> = Vec::with_capacity(jobs.len());
        if let Some(first) = jobs.first() {
            let metrics = pool.install(|| run(first));
            if let Ok(m) = &metrics
                && !m.scalars.is_empty()
            {
                probe(m).inspect_err(|_| bar.finish_and_clear())?;
            }
            results.push(metrics);
        }
        results.extend(pool.install(|| {
            jobs.get(1..)
                .unwrap_or_default()
                .par_iter()
                .map(run)
                .collect::<Vec<_>>()
        }));
        bar.finish_and_clear();

        let mut per_point: Vec<Vec<Metrics>> = vec![Vec::with_capacity(reps); points.len()];
        for (&(p, _), result) in jobs.iter().zip(results) {
            per_point[p].push(
                with_status(result)
                    .map_err(|inner| ExecError::Config(ConfigError::invalid(&file.path, inner)))?,
            );
        }
        Ok(points
            .iter()
            .zip(configs)
            .zip(per_point)
            .map(|((point, (cfg, _)), reps)| PointResult {
                index: point.index,
                params: point
                    .params
                    .iter()
                    .map(|(k, v)| (k.clone(), crate::report::toml_to_json(v)))
                    .collect(),
                config: serde_json::to_value(&cfg).unwrap_or(serde_json::Value::Null),
                metrics: Metrics::aggregate(&reps),
            })
            .collect())
    }
}
