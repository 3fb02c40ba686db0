//! icnlab's shared engine.
//!
//! Every model crate (SCI ring, TH-Net, broadcast, NIC timing) depends on this crate and
//! nothing else of icnlab's. It holds what all of them need and none of them should re-invent:
//!
//! * [`rng`]: seeded, reproducible random-number streams (one per replication / traffic source);
//! * [`stats`]: online summaries, percentiles, Student-t confidence intervals, Jain fairness;
//! * [`metrics`]: the uniform result format a model run returns ([`Metrics`]);
//! * [`model`]: the [`Model`] trait through which the CLI runs any model from a TOML file;
//! * [`bench`]: the speed workloads each model crate exports for `icnlab bench`;
//! * [`doc`]: the unit and meaning of a model's keys and outputs, which each model declares;
//! * [`config`]: parsing and validating experiment files with errors that name the file and key;
//! * [`input`]: bounded reads of the side files an experiment names (traces, graphs, profiles);
//! * [`memory`]: the memory available to a run, which models check their state against.
//!
//! The engine has no notion of time: each model owns its clock (cycle loop, step loop or event
//! queue), as DESIGN.md prescribes.

pub mod bench;
pub mod config;
pub mod doc;
pub mod input;
pub mod lockstep;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod rng;
pub mod stats;
pub mod watchdog;

pub use config::{ConfigError, ExperimentFile, Invalid};
pub use doc::ModelDoc;
pub use metrics::{Metric, Metrics, Status, StatusCounts, Table, UnknownMetric};
pub use model::{Context, Model, ModelError, Progress};
