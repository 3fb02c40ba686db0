//! One sweep (or run) spread over the ranks of an MPI job: `mpirun -np N icnlab sweep FILE`.
//!
//! Each rank runs its share of the replications ([`split`]) on its own threads and sends the
//! metrics to rank 0 ([`wire`]), which aggregates them in the one-process order and writes the
//! same `data.csv`, `report.json` and plots as `icnlab sweep FILE` would (only `wall_time_s`
//! differs). The protocol ([`driver`]) takes every rank through the same steps whatever fails,
//! so that errors end the job with one code on every rank instead of a hang. Only
//! `--features mpi` builds talk MPI ([`world`]); the rest is plain code, tested with ranks as
//! threads ([`local`]).

pub mod driver;
pub mod split;
pub mod sweep;
pub mod wire;
#[cfg(feature = "mpi")]
pub mod world;

#[cfg(test)]
pub mod local;
