//! The trait through which the CLI runs any model.
//!
//! A model crate implements [`Model`] for a unit struct: it names its typed config (parsed from
//! the experiment file with unknown keys rejected), validates it with errors that name the
//! key and the allowed range, and runs one replication from a seed. Everything else — reading
//! files, replications, sweeps over any key, threads, progress bars, CSV/JSON/SVG output — is
//! done once, by the CLI, for all models.

use crate::config::Invalid;
use crate::metrics::Metrics;
use serde::{Serialize, de::DeserializeOwned};

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

/// A failure while running a valid configuration (e.g. a deadlock the model detected, or a
/// trace file that cannot be read). Invalid configurations are [`Invalid`] instead.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error("{0}")]
    Failed(String),
}

pub trait Model: Sync {
    /// The value of `model = "..."` in an experiment file.
    const NAME: &'static str;
    /// One line for `icnlab models` and reports.
    const ABOUT: &'static str;

    /// The typed configuration: `#[serde(deny_unknown_fields)]`, defaults that reproduce the
    /// paper's set-up.
    type Config: Serialize + DeserializeOwned + Clone + Send + Sync;

    /// Checks ranges and cross-field constraints that serde cannot express.
    fn validate(cfg: &Self::Config) -> Result<(), Invalid>;

    /// Units of work one replication performs (cycles, steps, events): the progress bar's
    /// length. Only an estimate; a model may advance by slightly more or less.
    fn work(cfg: &Self::Config) -> u64;

    /// Runs one replication. Must be a pure function of `(cfg, seed)`.
    fn run(cfg: &Self::Config, seed: u64, progress: &dyn Progress) -> Result<Metrics, ModelError>;
}
