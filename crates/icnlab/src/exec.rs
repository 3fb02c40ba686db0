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
use icn_engine::lockstep::Exchange;
use icn_engine::model::ModelError;
use icn_engine::rng::derive_seed;
use icn_engine::{ConfigError, Context, Metrics, Model, Progress, Status};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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
    /// Every output was written, but a claim check failed (exit [`crate::checks::CHECK_FAILED`]).
    #[error("{0}")]
    CheckFailed(String),
}

/// A model behind a type-erased handle, so the CLI can choose it by name at run time.
pub trait Runner: Sync {
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    /// Unit and meaning of the model's keys and outputs ([`icn_engine::Model::DOC`]).
    fn doc(&self) -> &'static icn_engine::ModelDoc;
    /// The model's keys with their defaults (the typed config of the body `preset`, e.g.
    /// empty, or only a `kind` set: a table read per kind shows that kind's keys), as TOML.
    fn defaults(&self, preset: toml::Table) -> Result<toml::Table, String>;
    /// Parses and validates every point, without running anything.
    fn check(&self, file: &ExperimentFile, points: &[SweepPoint]) -> Result<(), ConfigError>;
    /// Runs every point's replications: [`Runner::run_jobs`] of [`all_jobs`], then
    /// [`Runner::assemble`].
    fn execute(
        &self,
        file: &ExperimentFile,
        points: &[SweepPoint],
        opts: ExecOptions,
        probe: &Probe<'_>,
    ) -> Result<Vec<PointResult>, ExecError> {
        let jobs = all_jobs(points.len(), file.replications);
        let metrics = self.run_jobs(file, points, &jobs, opts, probe)?;
        self.assemble(file, points, &jobs, metrics)
    }
    /// Runs `jobs` (a subset of the points' replications, e.g. one MPI rank's share) and returns
    /// each job's metrics, status settled, in the order of `jobs`. The caller has checked the
    /// points ([`Runner::check`]); only the points the jobs name are prepared, each while its
    /// jobs run (a point that fails to prepare then is a failed replication). `probe` sees the first job's metrics before the others start (to check what
    /// the outputs will need, e.g. plot columns); its error stops the run.
    fn run_jobs(
        &self,
        file: &ExperimentFile,
        points: &[SweepPoint],
        jobs: &[Job],
        opts: ExecOptions,
        probe: &Probe<'_>,
    ) -> Result<Vec<Metrics>, ExecError>;
    /// Whether the model can spread one replication's network over ranks
    /// ([`icn_engine::Model::SPREADS_NETWORK`]).
    #[cfg_attr(not(any(feature = "mpi", test)), allow(dead_code))]
    fn spreads_network(&self) -> bool;
    /// As [`Runner::run_jobs`], on one rank of a job whose ranks all run every job together,
    /// each replication's network spread over `ranks`: the jobs run one after another on the
    /// calling thread (the only one that may call MPI), every rank in the same order.
    #[cfg_attr(not(any(feature = "mpi", test)), allow(dead_code))]
    fn run_jobs_over_ranks(
        &self,
        file: &ExperimentFile,
        points: &[SweepPoint],
        jobs: &[Job],
        ranks: Arc<dyn Exchange>,
        progress: bool,
        probe: &Probe<'_>,
    ) -> Result<Vec<Metrics>, ExecError>;
    /// The points' results from the metrics of `jobs` (every replication of every point, in any
    /// order): replications are aggregated in replication order, so the result does not depend
    /// on which process or thread ran which job.
    fn assemble(
        &self,
        file: &ExperimentFile,
        points: &[SweepPoint],
        jobs: &[Job],
        metrics: Vec<Metrics>,
    ) -> Result<Vec<PointResult>, ExecError>;
}

/// One replication of one point: (index into the points slice, replication number).
pub type Job = (usize, u64);

/// Every replication of `points` points, point-major: the order a one-process run uses.
pub fn all_jobs(points: usize, replications: u32) -> Vec<Job> {
    (0..points)
        .flat_map(|p| (0..u64::from(replications)).map(move |r| (p, r)))
        .collect()
}

/// See [`Runner::execute`].
pub type Probe<'a> = dyn Fn(&Metrics) -> Result<(), ConfigError> + Sync + 'a;

pub struct ModelRunner<M>(PhantomData<M>);

impl<M> ModelRunner<M> {
    pub const fn new() -> Self {
        ModelRunner(PhantomData)
    }
}

impl<M: Model> ModelRunner<M> {
    /// Types, validates and prepares one point (paths relative to the experiment file); an
    /// error names the file and, in a sweep, the point.
    fn prepare_point(
        file: &ExperimentFile,
        ctx: &Context,
        p: &SweepPoint,
    ) -> Result<(M::Config, M::Prepared), ConfigError> {
        let cfg: M::Config = file.typed(&p.body)?;
        let prepared = M::prepare(&cfg, ctx).map_err(|mut inner| {
            if !p.params.is_empty() {
                inner.message.push_str(&format!(
                    " (sweep point {})",
                    crate::report::params_label(&p.params)
                ));
            }
            ConfigError::invalid(&file.path, inner)
        })?;
        Ok((cfg, prepared))
    }

    /// Types, validates and prepares every point, so that every input error is reported
    /// before anything runs; each prepared point is dropped at once (a sweep of 1 000 loads on
    /// a 65 536-terminal fat tree held 4.1 GB of prepared networks, 10 000 would not fit).
    fn check_points(
        file: &ExperimentFile,
        ctx: &Context,
        points: &[SweepPoint],
    ) -> Result<(), ConfigError> {
        points
            .iter()
            .try_for_each(|p| Self::prepare_point(file, ctx, p).map(drop))
    }
}

/// The points `jobs` name, each once (a big network's preparation is costly), and per point
/// of `points` its place among them.
fn needed_points(
    points: &[SweepPoint],
    jobs: &[Job],
) -> Result<(Vec<Option<usize>>, Vec<SweepPoint>), ExecError> {
    let mut slot: Vec<Option<usize>> = vec![None; points.len()];
    let mut needed: Vec<SweepPoint> = Vec::new();
    for &(p, _) in jobs {
        let point = points
            .get(p)
            .ok_or_else(|| ExecError::Failed(format!("job names point {p} of {}", points.len())))?;
        if slot[p].is_none() {
            slot[p] = Some(needed.len());
            needed.push(point.clone());
        }
    }
    Ok((slot, needed))
}

/// `local`, this rank's outcome of a step of a run spread over `ranks`, once every rank
/// knows every rank's: a rank that passed while another failed returns an error naming that
/// rank, with its exit code, so that no rank goes on alone into the network's exchanges and
/// waits there for ever. Collective: every rank calls it at the same step.
fn all_ranks_agree<T>(ranks: &dyn Exchange, local: Result<T, ExecError>) -> Result<T, ExecError> {
    let code = local.as_ref().map_or_else(crate::exit_code, |_| 0);
    let codes = ranks.all_gather(&[code]);
    let failed = codes
        .iter()
        .enumerate()
        .find_map(|(rank, c)| c.first().filter(|&&c| c != 0).map(|&c| (rank, c)));
    match (local, failed) {
        (Ok(_), Some((rank, code))) => {
            let why = format!("stopped with rank {rank}, which could not go on (see its error)");
            Err(if code == 2 {
                ExecError::Usage(why)
            } else {
                ExecError::Failed(why)
            })
        }
        (local, _) => local,
    }
}

fn progress_bar(show: bool, total: u64, file: &ExperimentFile, runs: usize) -> ProgressBar {
    let bar = if show {
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
    bar.set_message(format!("{} × {} runs", file.title, runs));
    bar
}

/// The prepared points of a run, each built when its first job starts and dropped when its
/// last job ends: memory holds the points being worked on (about one per thread, as the jobs
/// of a point are adjacent), not the whole sweep.
struct LazyPoints<'a, M: Model> {
    file: &'a ExperimentFile,
    ctx: Context,
    points: Vec<SweepPoint>,
    ready: Vec<Mutex<Option<Arc<M::Prepared>>>>,
    /// Jobs of each point not yet finished.
    remaining: Vec<AtomicUsize>,
}

impl<M: Model> LazyPoints<'_, M> {
    /// Point `i` prepared, built now if no running job holds it.
    fn get(&self, i: usize) -> Result<Arc<M::Prepared>, ConfigError> {
        let mut slot = self.ready[i].lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = slot.as_ref() {
            return Ok(p.clone());
        }
        let (_, prepared) = ModelRunner::<M>::prepare_point(self.file, &self.ctx, &self.points[i])?;
        let prepared = Arc::new(prepared);
        *slot = Some(prepared.clone());
        Ok(prepared)
    }

    /// One job of point `i` ended: the last one drops the prepared point.
    fn done(&self, i: usize) {
        if self.remaining[i].fetch_sub(1, Ordering::AcqRel) == 1 {
            *self.ready[i].lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
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

    fn doc(&self) -> &'static icn_engine::ModelDoc {
        M::DOC
    }

    fn check(&self, file: &ExperimentFile, points: &[SweepPoint]) -> Result<(), ConfigError> {
        Self::check_points(file, &Context::for_file(&file.path), points)
    }

    fn defaults(&self, preset: toml::Table) -> Result<toml::Table, String> {
        let cfg: M::Config = icn_engine::config::deserialize_at(toml::Value::Table(preset))
            .map_err(|e| format!("model {} has keys without defaults: {e}", M::NAME))?;
        toml::Table::try_from(&cfg).map_err(|e| e.to_string())
    }

    fn run_jobs(
        &self,
        file: &ExperimentFile,
        points: &[SweepPoint],
        jobs: &[Job],
        opts: ExecOptions,
        probe: &Probe<'_>,
    ) -> Result<Vec<Metrics>, ExecError> {
        let (slot, needed) = needed_points(points, jobs)?;
        // Every point was checked (prepared and dropped) when the file was selected
        // ([`Runner::check`]), so every input error came before anything runs; each point is
        // prepared again when its jobs run, so the sweep's prepared points are never all held
        // at once.
        let ctx = Context::for_file(&file.path);
        let configs: Vec<M::Config> = needed
            .iter()
            .map(|p| file.typed(&p.body))
            .collect::<Result<_, _>>()?;
        let lazy = LazyPoints::<M> {
            file,
            ctx,
            ready: needed.iter().map(|_| Mutex::new(None)).collect(),
            remaining: needed.iter().map(|_| AtomicUsize::new(0)).collect(),
            points: needed,
        };
        let slot_of = |p: usize| slot[p].expect("every job's point is prepared");
        for &(p, _) in jobs {
            lazy.remaining[slot_of(p)].fetch_add(1, Ordering::Relaxed);
        }
        let total: u64 = jobs
            .iter()
            .map(|&(p, _)| M::work(&configs[slot_of(p)]))
            .sum();
        let bar = progress_bar(opts.progress, total, file, jobs.len());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(opts.threads)
            .build()
            .map_err(|e| ExecError::Failed(format!("cannot start worker threads: {e}")))?;
        let run = |&(p, r): &Job| {
            let i = slot_of(p);
            let prepared = lazy
                .get(i)
                .map_err(|e| ModelError::Failed(format!("{e}")))?;
            let result = M::run_prepared(&prepared, derive_seed(file.seed, r), &BarProgress(&bar));
            drop(prepared);
            lazy.done(i);
            result
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
        results
            .into_iter()
            .map(|r| {
                with_status(r)
                    .map_err(|inner| ExecError::Config(ConfigError::invalid(&file.path, inner)))
            })
            .collect()
    }

    fn spreads_network(&self) -> bool {
        M::SPREADS_NETWORK
    }

    fn run_jobs_over_ranks(
        &self,
        file: &ExperimentFile,
        points: &[SweepPoint],
        jobs: &[Job],
        ranks: Arc<dyn Exchange>,
        progress: bool,
        probe: &Probe<'_>,
    ) -> Result<Vec<Metrics>, ExecError> {
        let (slot, needed) = needed_points(points, jobs)?;
        let ctx = Context::for_file(&file.path).spread_over(ranks.clone());
        // Every input error before anything runs; then one point is held at a time, as the
        // jobs run one by one. Each step that one rank may fail and another pass (the memory
        // checks weigh the estimates against each rank's own machine) is agreed on by all.
        let configs: Vec<M::Config> = all_ranks_agree(&*ranks, {
            Self::check_points(file, &ctx, &needed)
                .map_err(ExecError::from)
                .and_then(|()| {
                    needed
                        .iter()
                        .map(|p| file.typed(&p.body))
                        .collect::<Result<_, _>>()
                        .map_err(ExecError::from)
                })
        })?;
        let slot_of = |p: usize| slot[p].expect("every job's point is prepared");
        let total: u64 = jobs
            .iter()
            .map(|&(p, _)| M::work(&configs[slot_of(p)]))
            .sum();
        let bar = progress_bar(progress, total, file, jobs.len());
        let mut held: Option<(usize, M::Prepared)> = None;
        let mut metrics = Vec::with_capacity(jobs.len());
        for (i, &(p, r)) in jobs.iter().enumerate() {
            let k = slot_of(p);
            if held.as_ref().is_some_and(|(at, _)| *at != k) {
                // The previous point is dropped before the next one is built.
                held = None;
            }
            let prepared = match held.take() {
                Some((_, prepared)) => prepared,
                None => {
                    all_ranks_agree(
                        &*ranks,
                        Self::prepare_point(file, &ctx, &needed[k]).map_err(ExecError::from),
                    )
                    .inspect_err(|_| bar.finish_and_clear())?
                    .1
                }
            };
            let result = M::run_prepared(&prepared, derive_seed(file.seed, r), &BarProgress(&bar));
            held = Some((k, prepared));
            // As `run_jobs`: the first replication's metrics checked before the rest runs.
            if i == 0
                && let Ok(m) = &result
                && !m.scalars.is_empty()
            {
                all_ranks_agree(&*ranks, probe(m).map_err(ExecError::from))
                    .inspect_err(|_| bar.finish_and_clear())?;
            }
            metrics.push(
                with_status(result)
                    .map_err(|inner| ExecError::Config(ConfigError::invalid(&file.path, inner)))?,
            );
        }
        bar.finish_and_clear();
        Ok(metrics)
    }

    fn assemble(
        &self,
        file: &ExperimentFile,
        points: &[SweepPoint],
        jobs: &[Job],
        metrics: Vec<Metrics>,
    ) -> Result<Vec<PointResult>, ExecError> {
        let reps = file.replications as usize;
        let mut per_point: Vec<Vec<Option<Metrics>>> = vec![vec![None; reps]; points.len()];
        if jobs.len() != metrics.len() {
            return Err(ExecError::Failed(format!(
                "{} jobs but {} results",
                jobs.len(),
                metrics.len()
            )));
        }
        for (&(p, r), m) in jobs.iter().zip(metrics) {
            let cell = per_point
                .get_mut(p)
                .and_then(|reps| reps.get_mut(r as usize))
                .ok_or_else(|| ExecError::Failed(format!("no replication {r} of point {p}")))?;
            if cell.replace(m).is_some() {
                return Err(ExecError::Failed(format!(
                    "replication {r} of point {p} ran twice"
                )));
            }
        }
        points
            .iter()
            .zip(per_point)
            .map(|(point, reps)| {
                let reps: Vec<Metrics> =
                    reps.into_iter().collect::<Option<_>>().ok_or_else(|| {
                        ExecError::Failed(format!("point {} misses replications", point.index))
                    })?;
                let cfg: M::Config = file.typed(&point.body)?;
                Ok(PointResult {
                    index: point.index,
                    params: point
                        .params
                        .iter()
                        .map(|(k, v)| (k.clone(), crate::report::toml_to_json(v)))
                        .collect(),
                    config: serde_json::to_value(&cfg).unwrap_or(serde_json::Value::Null),
                    metrics: Metrics::aggregate(&reps),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm1::Mm1;

    fn file() -> (tempfile::TempDir, ExperimentFile) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.toml");
        std::fs::write(
            &path,
            "model = \"mm1\"\nseed = 9\nreplications = 3\ncustomers = 500\n\
             [sweep]\narrival_rate = [0.2, 0.6]\n",
        )
        .unwrap();
        let file = ExperimentFile::load(&path, false).unwrap();
        (dir, file)
    }

    const OPTS: ExecOptions = ExecOptions {
        threads: 1,
        progress: false,
    };

    /// Jobs run in any order and any split give `execute`'s results.
    #[test]
    fn assemble_puts_jobs_back_in_place_whatever_their_order() {
        let (_dir, file) = file();
        let runner = ModelRunner::<Mm1>::new();
        let points = file.points();
        let whole = runner.execute(&file, &points, OPTS, &|_| Ok(())).unwrap();
        let mut jobs = all_jobs(points.len(), file.replications);
        jobs.reverse();
        jobs.swap(0, 3);
        let metrics = runner
            .run_jobs(&file, &points, &jobs, OPTS, &|_| Ok(()))
            .unwrap();
        assert_eq!(
            runner.assemble(&file, &points, &jobs, metrics).unwrap(),
            whole
        );
    }

    #[test]
    fn assemble_refuses_a_missing_or_repeated_replication() {
        let (_dir, file) = file();
        let runner = ModelRunner::<Mm1>::new();
        let points = file.points();
        let mut jobs = all_jobs(points.len(), file.replications);
        let m = runner
            .run_jobs(&file, &points, &jobs, OPTS, &|_| Ok(()))
            .unwrap();
        let missing = runner.assemble(&file, &points, &jobs[1..], m[1..].to_vec());
        assert!(matches!(missing, Err(ExecError::Failed(e)) if e.contains("misses")));
        jobs[1] = jobs[0];
        let twice = runner.assemble(&file, &points, &jobs, m);
        assert!(matches!(twice, Err(ExecError::Failed(e)) if e.contains("ran twice")));
    }

    #[test]
    fn run_jobs_of_nothing_is_nothing() {
        let (_dir, file) = file();
        let runner = ModelRunner::<Mm1>::new();
        let none = runner.run_jobs(&file, &file.points(), &[], OPTS, &|_| Ok(()));
        assert!(none.unwrap().is_empty());
    }

    /// One rank of a spread run fails a step (its machine is smaller, say) that the others
    /// pass: every rank stops there with the failing rank's exit code, none goes on alone.
    #[test]
    fn a_step_one_rank_fails_stops_every_rank_with_its_code() {
        use icn_engine::lockstep::ThreadRanks;
        for (failing, code) in [
            (ExecError::Usage("too big here".into()), 2),
            (ExecError::Failed("broke".into()), 1),
        ] {
            let failing = std::sync::Mutex::new(Some(failing));
            let outcomes: Vec<Result<u32, ExecError>> = std::thread::scope(|s| {
                let handles: Vec<_> = ThreadRanks::new(3)
                    .into_iter()
                    .map(|rank| {
                        let local = match rank.rank() {
                            1 => Err(failing.lock().unwrap().take().unwrap()),
                            r => Ok(r as u32),
                        };
                        s.spawn(move || all_ranks_agree(&rank, local))
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (r, got) in outcomes.iter().enumerate() {
                let e = got.as_ref().expect_err("every rank stops");
                assert_eq!(crate::exit_code(e), code, "rank {r}: {e}");
                if r != 1 {
                    assert!(
                        e.to_string().contains("rank 1, which could not go on"),
                        "{e}"
                    );
                }
            }
        }
        // All pass: every rank keeps its own value.
        let values: Vec<u32> = std::thread::scope(|s| {
            let handles: Vec<_> = ThreadRanks::new(2)
                .into_iter()
                .map(|rank| {
                    s.spawn(move || all_ranks_agree(&rank, Ok(rank.rank() as u32)).unwrap())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(values, [0, 1]);
    }
}
