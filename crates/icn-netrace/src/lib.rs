//! Netrace v1 traces (Hestness, Grot & Keckler, "Netrace: dependency-driven trace-based
//! network-on-chip simulation", NoCArc 2010): packets of a full-system run of a 64-core chip
//! (PARSEC benchmarks) with the dependencies between them, replayed closed-loop on any
//! [`icn_fabric::Fabric`].
//!
//! * [`format`]: the file format and its streaming reader (bzip2 through the `bzip2` crate),
//!   every field checked, errors naming the byte offset and the packet;
//! * [`deps`]: the dependency window, which finds cycles and dangling dependencies as soon as
//!   the reader reaches them;
//! * [`scan`]: the whole trace checked before a run;
//! * [`replay`]: the closed-loop replay (the injection rule is stated there);
//! * [`config`]: the `[netrace]` workload table of the `vc-router` and `xswitch` models.
//!
//! Model notes and results: `docs/netrace.md`.

pub mod bench;
pub mod config;
pub mod deps;
pub mod format;
pub mod replay;
pub mod scan;

pub use config::{NetraceConfig, Prepared};
pub use format::{Header, Reader, Record, TraceError};
pub use replay::{Event, Plan, ReplayError, replay};
