//! The trait through which the CLI runs any model.
//!
//! A model crate implements [`Model`] for a unit struct: it names its typed config (parsed from
//! the experiment file with unknown keys rejected), validates it with errors that name the
//! key and the allowed range, prepares it once per sweep point (parsing topologies and traces,
//! resolving file paths against the experiment file) and runs one replication of the prepared
//! point from a seed. Everything else — reading files, replications, sweeps over any key,
//! threads, progress bars, CSV/JSON/SVG output — is done once, by the CLI, for all models.
//!
//! Why a separate `prepare`: a sweep of 3 loads × 5 replications used to parse the same
//! topology file 15 times, and a trace that could not be read surfaced only once replications
//! were already running. `prepare` runs for every point before any replication starts, so
//! every input error is reported up front and the expensive parsing happens once.

use crate::config::Invalid;
use crate::lockstep::Exchange;
use crate::metrics::Metrics;
use serde::{Serialize, de::DeserializeOwned};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Receives progress ticks from a running model; must be cheap and thread-safe.
pub trait Progress: Sync {
    /// `units` more units of [`Model::work`] are done.
    fn advance(&self, units: u64);
}

/// Progress sink that ignores ticks (tests, benches).
pub struct NoProgress;

impl Progress for NoProgress {
    fn advance(&self, _units: u64) {}
}

/// One replication's progress in a fixed number of units ([`Model::work`]), whatever the
/// count of events it will run: `add` events as they complete and the bar moves by the same
/// fraction of the units, so a single long replication shows its own progress and ETA (the
/// cluster's bar sat at 0 % until the end of a run).
pub struct Ticker<'a> {
    progress: &'a dyn Progress,
    total: u64,
    units: u64,
    done: u64,
    sent: u64,
}

impl<'a> Ticker<'a> {
    /// `total` events make up `units` units of progress.
    pub fn new(progress: &'a dyn Progress, total: u64, units: u64) -> Ticker<'a> {
        Ticker {
            progress,
            total: total.max(1),
            units,
            done: 0,
            sent: 0,
        }
    }

    /// `events` more events are done (past `total` the bar stays at its end).
    pub fn add(&mut self, events: u64) {
        self.done = self.done.saturating_add(events);
        let due = (u128::from(self.done.min(self.total)) * u128::from(self.units)
            / u128::from(self.total)) as u64;
        if due > self.sent {
            self.progress.advance(due - self.sent);
            self.sent = due;
        }
    }

    /// The replication ended: the rest of its units.
    pub fn finish(&mut self) {
        if self.units > self.sent {
            self.progress.advance(self.units - self.sent);
            self.sent = self.units;
        }
    }
}

/// A failure while running a valid configuration (e.g. a deadlock the model detected, or a
/// trace file that cannot be read). Invalid configurations are [`Invalid`] instead.
/// Serializable: a partition of a network spread over MPI ranks reports its error to every
/// rank ([`crate::lockstep`]).
#[derive(Debug, thiserror::Error, Serialize, serde::Deserialize)]
pub enum ModelError {
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error("{0}")]
    Failed(String),
}

/// Where a configuration came from: relative file names in it (topology files, traces,
/// profiles) are resolved against the experiment file's folder, not the working directory;
/// and, when one network is spread over the ranks of an MPI job, how the ranks reach each
/// other.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// Folder of the experiment file; `None` (tests, library use): the working directory.
    pub base_dir: Option<PathBuf>,
    /// `Some`: every replication's network is partitioned over these ranks (`icnlab
    /// --spread network`), every rank running the same replication together; a model that
    /// supports it keeps this in its prepared point. `None`: one process simulates it.
    pub network: Option<Arc<dyn Exchange>>,
}

impl Context {
    /// The context of an experiment file at `path`.
    pub fn for_file(path: &Path) -> Context {
        Context {
            base_dir: path.parent().map(Path::to_path_buf),
            network: None,
        }
    }

    /// This context with the network spread over `ranks`.
    pub fn spread_over(mut self, ranks: Arc<dyn Exchange>) -> Context {
        self.network = Some(ranks);
        self
    }

    /// The partitions this process simulates of a network of `items` routers (or switches:
    /// `unit`), from a `threads` key: 0 is the machine's cores in one process and one per rank
    /// when the network is spread over ranks (every rank must count the same partitions, and
    /// ranks may run on machines of other sizes). Refused, naming `key`, when the partitions
    /// over all ranks outnumber the items.
    pub fn partitions(
        &self,
        key: &str,
        threads: usize,
        items: usize,
        unit: &str,
    ) -> Result<usize, Invalid> {
        let threads = match (threads, &self.network) {
            (0, Some(_)) => 1,
            (0, None) => std::thread::available_parallelism().map_or(1, |n| n.get()),
            (n, _) => n,
        };
        let ranks = self.network.as_ref().map_or(1, |x| x.size());
        Invalid::check(
            threads.saturating_mul(ranks) <= items,
            key,
            &if ranks > 1 {
                format!("at most one partition per {unit} ({items}): {ranks} ranks × threads")
            } else {
                format!("at most one thread per {unit} ({items})")
            },
            threads,
        )?;
        Ok(threads)
    }

    /// A network spec with its graph file (`file:PATH`, `graph:file:PATH`) resolved against
    /// [`Context::base_dir`]; other specs are kept as they are.
    pub fn resolve_spec(&self, spec: &str) -> String {
        for prefix in ["graph:file:", "file:"] {
            if let Some(path) = spec.strip_prefix(prefix) {
                return format!("{prefix}{}", self.resolve(path).display());
            }
        }
        spec.to_owned()
    }

    /// `name` resolved against [`Context::base_dir`] (absolute names are kept).
    pub fn resolve(&self, name: &str) -> PathBuf {
        let p = Path::new(name);
        match &self.base_dir {
            Some(base) if p.is_relative() => base.join(p),
            _ => p.to_path_buf(),
        }
    }
}

pub trait Model: Sync {
    /// The value of `model = "..."` in an experiment file.
    const NAME: &'static str;
    /// One line for `icnlab models` and reports.
    const ABOUT: &'static str;
    /// Whether [`Model::prepare`] spreads each replication's network over the ranks of
    /// [`Context::network`] (`icnlab --spread network`); a model that does not ignores it.
    const SPREADS_NETWORK: bool = false;
    /// Unit and meaning of every key of [`Model::Config`] and every output of a run, written
    /// next to the config in the model's crate ([`crate::doc`]).
    const DOC: &'static crate::doc::ModelDoc;

    /// The typed configuration: `#[serde(deny_unknown_fields)]`, defaults that reproduce the
    /// paper's set-up.
    type Config: Serialize + DeserializeOwned + Clone + Send + Sync;

    /// What [`Model::prepare`] builds once per point and every replication shares: the
    /// validated config plus parsed topologies, traces and resolved paths.
    type Prepared: Send + Sync;

    /// Checks ranges and cross-field constraints that serde cannot express.
    fn validate(cfg: &Self::Config) -> Result<(), Invalid>;

    /// Validates `cfg` and builds everything a replication needs that does not depend on the
    /// seed. Called once per sweep point, for all points, before any replication runs.
    fn prepare(cfg: &Self::Config, ctx: &Context) -> Result<Self::Prepared, Invalid>;

    /// Units of work one replication performs (cycles, steps, events): the progress bar's
    /// length. Only an estimate; a model may advance by slightly more or less.
    fn work(cfg: &Self::Config) -> u64;

    /// Runs one replication of a prepared point. Must be a pure function of `(prep, seed)`.
    fn run_prepared(
        prep: &Self::Prepared,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<Metrics, ModelError>;

    /// Prepares `cfg` (paths relative to the working directory) and runs one replication:
    /// the entry point for tests and library users with a single configuration.
    fn run(cfg: &Self::Config, seed: u64, progress: &dyn Progress) -> Result<Metrics, ModelError> {
        let prep = Self::prepare(cfg, &Context::default())?;
        Self::run_prepared(&prep, seed, progress)
    }
}

/// One replication of `cfg` with its network spread over `ranks` ranks that are threads of
/// this process ([`ThreadRanks`](crate::lockstep::ThreadRanks)), as `icnlab --spread network`
/// runs it over MPI ranks: every rank's outcome, in rank order (an error of
/// [`Model::prepare`] included). For tests of models that spread ([`Model::SPREADS_NETWORK`]).
pub fn run_on_thread_ranks<M: Model>(
    cfg: &M::Config,
    ranks: usize,
    seed: u64,
) -> Vec<Result<Metrics, ModelError>>
where
    M::Config: 'static,
{
    let handles: Vec<_> = crate::lockstep::ThreadRanks::new(ranks)
        .into_iter()
        .map(|rank| {
            let cfg = cfg.clone();
            std::thread::spawn(move || {
                let ctx = Context::default().spread_over(Arc::new(rank));
                let point = M::prepare(&cfg, &ctx)?;
                M::run_prepared(&point, seed, &NoProgress)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
        .collect()
}

#[cfg(test)]
mod ticker_tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    struct Count(AtomicU64);
    impl Progress for Count {
        fn advance(&self, units: u64) {
            self.0.fetch_add(units, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_ticker_moves_by_the_fraction_of_events_done() {
        let c = Count(AtomicU64::new(0));
        let mut t = Ticker::new(&c, 3_000_000, 1000);
        t.add(1_500_000);
        assert_eq!(c.0.load(Ordering::Relaxed), 500);
        t.add(2);
        assert_eq!(c.0.load(Ordering::Relaxed), 500);
        t.add(10_000_000);
        assert_eq!(c.0.load(Ordering::Relaxed), 1000);
        t.finish();
        assert_eq!(c.0.load(Ordering::Relaxed), 1000);
        let mut empty = Ticker::new(&c, 0, 7);
        empty.finish();
        assert_eq!(c.0.load(Ordering::Relaxed), 1007);
    }
}
