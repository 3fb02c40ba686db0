//! Broadcasting on interconnects under the one-send-per-step model of the CCC/ILBM paper.
//!
//! * [`sim`]: the step simulator (any [`sim::Protocol`], seeded tie-break of simultaneous
//!   receptions) and its record ([`sim::Outcome`]);
//! * [`validate`]: an independent legality check of any schedule;
//! * [`ilbm`]: node algorithms (CCCBrd, hypercube, ring, mesh/torus);
//! * [`clbm`]: per-source broadcast trees (classical lists), optimal ones for small graphs;
//! * [`ulbm`]: universal lists, adaptive and not, and [`design`] to search for good ones;
//! * [`optimum`]: exact minimum broadcast time by SAT, with a budget;
//! * [`bounds`]: lower bounds and the paper's claimed upper bounds;
//! * [`limits`]: the cost of a run estimated before it starts, and the ranges of the options;
//! * [`schemes`]: one entry point running any model on any graph;
//! * [`claims`]: the size-by-size check of the paper's claims;
//! * [`compare`]: the models side by side over CCC sizes (the reproduce table);
//! * [`tables`]: the rows of the `icnlab bcast` reports, serialisable, CSV by the `csv` crate;
//! * [`model`]: the `bcast` model for experiment files;
//! * [`bench`]: its speed workloads for `icnlab bench`;
//! * [`verify`]: CCCBrd on large CCCs: a simulator specialised to the CCC, all sources in parallel.

pub mod bench;
pub mod bounds;
pub mod claims;
pub mod clbm;
pub mod compare;
pub mod design;
pub mod ilbm;
pub mod limits;
pub mod model;
pub mod optimum;
pub mod schemes;
pub mod sim;
pub mod tables;
pub mod ulbm;
pub mod validate;
pub mod verify;

pub use model::{Bcast, BcastConfig};
pub use schemes::{RunOptions, Scheme, run_scheme};
