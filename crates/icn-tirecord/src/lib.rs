//! Recording SimGrid time-independent (TI) traces of real MPI programs.
//!
//! The recorder is a PMPI interposition library written in C (`c/tirecord.c`, its header
//! comment states the format written, the flop rate and what is refused): loaded with
//! `LD_PRELOAD` into any MPI program, it wraps the MPI calls, writes one `<rank> <action>
//! <args>` line per call (SimGrid 3.32's syntax) and the wall time between calls as `compute`
//! at a stated flop rate. This crate builds it with the MPI compiler wrapper (`mpicc`, from
//! OpenMPI's `libopenmpi-dev` on Debian), runs a program under it ([`record`]), and reads
//! what a trace says about its messages ([`counts`], through the replay's own TI reader) so a test can compare it with what the
//! program sent. Nothing here needs MPI to compile; the functions that build or run say so when
//! `mpicc` or `mpirun` is missing.

pub mod build;
pub mod counts;
pub mod record;

pub use build::{Built, build};
pub use counts::{Counts, read_trace};
pub use record::record;
