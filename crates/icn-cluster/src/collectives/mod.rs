//! Collectives as named algorithms: each turns one rank's part of a collective call into
//! the point-to-point steps the fabric carries. Names are SimGrid's (`--cfg=smpi/<coll>:<name>`),
//! which follow MPICH and Open MPI; an experiment's `[algorithms]` table picks one per
//! collective. Reduction work is not in the steps: the replay charges a call's `flops` to
//! the host after it, as SimGrid's replay does.
//!
//! | collective | algorithms (default first) |
//! |---|---|
//! | barrier | `ompi_recursivedoubling` (`rdb`), `ompi_bruck` (`dissemination`), `ompi_basic_linear` |
//! | bcast | `binomial_tree`, `flattree`, `scatter_LR_allgather` (scatter + ring allgather), `scatter_rdb_allgather`, `pipeline` (chain in 8 KiB segments) |
//! | reduce | `binomial`, `flat_tree` |
//! | allreduce | `rdb`, `lr` (ring: reduce-scatter + allgather), `rab_rdb` (Rabenseifner), `redbcast` |
//! | alltoall | `ring`, `pair`, `basic_linear`, `bruck` |
//! | alltoallv | `ring`, `pair`, `ompi_basic_linear` |
//! | allgather | `ring` (n − 1 direct exchanges), `NTSLR` (logical ring, pass-along), `rdb`, `bruck` |
//! | allgatherv | `ring`, `mpich_ring` (logical ring) |
//! | gather | `ompi_binomial`, `ompi_basic_linear` |
//! | gatherv, scatterv | `ompi_basic_linear` |
//! | scatter | `ompi_binomial`, `ompi_basic_linear` |
//! | reduce_scatter | `mpich_pair`, `default` (binomial reduce + linear scatterv) |
//! | scan, exscan | `linear` |
//!
//! Where SimGrid has the algorithm, the steps are its steps (the same partners, sizes, order
//! and blocking calls: `alltoall pair` is n `sendrecv`s with `rank ^ i`); a `sendrecv` with
//! oneself is a local copy and costs nothing, as in SMPI. `pair` and `rdb` (allgather) need
//! a power-of-two rank count, as in SimGrid, and are refused before the run otherwise.

mod alltoall;
mod bcast;
mod gather;
mod reduce;
mod sync;

use crate::ti::action::CollKind;

/// One step of one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Blocking send (MPI_Send: below the eager threshold it completes locally).
    Send {
        to: usize,
        bytes: u64,
    },
    /// Blocking receive.
    Recv {
        from: usize,
        bytes: u64,
    },
    /// Nonblocking send and receive, completed by the next [`Step::WaitAll`].
    Isend {
        to: usize,
        bytes: u64,
    },
    Irecv {
        from: usize,
        bytes: u64,
    },
    WaitAll,
}

/// One rank's view of a collective call (sizes in bytes).
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    pub rank: usize,
    pub n: usize,
    pub root: usize,
    /// See [`crate::ti::action::Collective::bytes`].
    pub bytes: u64,
    pub counts: &'a [u64],
    pub recv_counts: &'a [u64],
}

impl Call<'_> {
    /// Rank relative to the root, and back.
    fn rel(&self) -> usize {
        (self.rank + self.n - self.root) % self.n
    }
    fn abs(&self, rel: usize) -> usize {
        (rel + self.root) % self.n
    }
}

/// Appends steps to `out`.
pub type Build = fn(&Call, &mut Vec<Step>);

/// One named algorithm.
#[derive(Debug)]
pub struct Algorithm {
    pub kind: CollKind,
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    /// Needs a power-of-two rank count.
    pub pof2: bool,
    pub build: Build,
}

const fn alg(kind: CollKind, name: &'static str, build: Build) -> Algorithm {
    Algorithm {
        kind,
        name,
        aliases: &[],
        pof2: false,
        build,
    }
}

use CollKind as K;

/// Every algorithm; the first of each collective is its default.
pub static REGISTRY: &[Algorithm] = &[
    Algorithm {
        aliases: &["rdb", "recursive_doubling"],
        ..alg(K::Barrier, "ompi_recursivedoubling", sync::barrier_rdb)
    },
    Algorithm {
        aliases: &["dissemination", "bruck"],
        ..alg(K::Barrier, "ompi_bruck", sync::barrier_dissemination)
    },
    alg(K::Barrier, "ompi_basic_linear", sync::barrier_linear),
    alg(K::Bcast, "binomial_tree", bcast::binomial_tree),
    alg(K::Bcast, "flattree", bcast::flattree),
    Algorithm {
        aliases: &["scatter_allgather", "scatter_ring_allgather"],
        ..alg(
            K::Bcast,
            "scatter_LR_allgather",
            bcast::scatter_ring_allgather,
        )
    },
    Algorithm {
        pof2: true,
        ..alg(
            K::Bcast,
            "scatter_rdb_allgather",
            bcast::scatter_rdb_allgather,
        )
    },
    Algorithm {
        aliases: &["chain"],
        ..alg(K::Bcast, "pipeline", bcast::pipeline)
    },
    alg(K::Reduce, "binomial", reduce::reduce_binomial),
    Algorithm {
        aliases: &["flat", "flattree"],
        ..alg(K::Reduce, "flat_tree", reduce::reduce_flat)
    },
    alg(K::Allreduce, "rdb", reduce::allreduce_rdb),
    Algorithm {
        aliases: &["ring"],
        ..alg(K::Allreduce, "lr", reduce::allreduce_ring)
    },
    Algorithm {
        aliases: &["rab", "rabenseifner"],
        ..alg(K::Allreduce, "rab_rdb", reduce::allreduce_rab)
    },
    alg(K::Allreduce, "redbcast", reduce::allreduce_redbcast),
    alg(K::Alltoall, "ring", alltoall::alltoall_ring),
    Algorithm {
        pof2: true,
        ..alg(K::Alltoall, "pair", alltoall::alltoall_pair)
    },
    alg(K::Alltoall, "basic_linear", alltoall::alltoall_linear),
    alg(K::Alltoall, "bruck", alltoall::alltoall_bruck),
    alg(K::Alltoallv, "ring", alltoall::alltoall_ring),
    Algorithm {
        pof2: true,
        ..alg(K::Alltoallv, "pair", alltoall::alltoall_pair)
    },
    Algorithm {
        aliases: &["basic_linear"],
        ..alg(K::Alltoallv, "ompi_basic_linear", alltoall::alltoall_linear)
    },
    alg(K::Allgather, "ring", gather::allgather_direct),
    Algorithm {
        aliases: &["logical_ring"],
        ..alg(K::Allgather, "NTSLR", gather::allgather_ring)
    },
    Algorithm {
        pof2: true,
        ..alg(K::Allgather, "rdb", gather::allgather_rdb)
    },
    alg(K::Allgather, "bruck", gather::allgather_bruck),
    alg(K::Allgatherv, "ring", gather::allgather_direct),
    Algorithm {
        aliases: &["logical_ring"],
        ..alg(K::Allgatherv, "mpich_ring", gather::allgather_ring)
    },
    Algorithm {
        aliases: &["binomial"],
        ..alg(K::Gather, "ompi_binomial", gather::gather_binomial)
    },
    Algorithm {
        aliases: &["linear", "basic_linear"],
        ..alg(K::Gather, "ompi_basic_linear", gather::gather_linear)
    },
    Algorithm {
        aliases: &["linear", "basic_linear"],
        ..alg(K::Gatherv, "ompi_basic_linear", gather::gather_linear)
    },
    Algorithm {
        aliases: &["binomial"],
        ..alg(K::Scatter, "ompi_binomial", gather::scatter_binomial)
    },
    Algorithm {
        aliases: &["linear", "basic_linear"],
        ..alg(K::Scatter, "ompi_basic_linear", gather::scatter_linear)
    },
    Algorithm {
        aliases: &["linear", "basic_linear"],
        ..alg(K::Scatterv, "ompi_basic_linear", gather::scatter_linear)
    },
    Algorithm {
        aliases: &["pair"],
        ..alg(K::ReduceScatter, "mpich_pair", reduce::reduce_scatter_pair)
    },
    alg(K::ReduceScatter, "default", reduce::reduce_scatter_default),
    alg(K::Scan, "linear", reduce::scan_linear),
    alg(K::Exscan, "linear", reduce::exscan_linear),
];

/// The default algorithm of `kind`.
pub fn default_for(kind: CollKind) -> &'static Algorithm {
    REGISTRY
        .iter()
        .find(|a| a.kind == kind)
        .expect("every collective has an algorithm")
}

/// The algorithm `name` (or an alias) of `kind`, or a message listing the choices.
pub fn find(kind: CollKind, name: &str) -> Result<&'static Algorithm, String> {
    REGISTRY
        .iter()
        .find(|a| a.kind == kind && (a.name == name || a.aliases.contains(&name)))
        .ok_or_else(|| {
            let names: Vec<&str> = REGISTRY
                .iter()
                .filter(|a| a.kind == kind)
                .map(|a| a.name)
                .collect();
            format!(
                "`{name}` is not a {} algorithm (one of {})",
                kind.name(),
                names.join(", ")
            )
        })
}

impl Algorithm {
    /// Whether it runs on `n` ranks (`Err` says why not).
    pub fn check(&self, n: usize) -> Result<(), String> {
        if self.pof2 && !n.is_power_of_two() {
            return Err(format!(
                "{} {} needs a power-of-two number of ranks, not {n}",
                self.kind.name(),
                self.name
            ));
        }
        Ok(())
    }

    /// Rank `call.rank`'s steps.
    pub fn steps(&self, call: &Call) -> Vec<Step> {
        let mut out = Vec::new();
        if call.n > 1 {
            (self.build)(call, &mut out);
        }
        out
    }
}

/// The whole call on `n` ranks as a message-level [`crate::program::Program`] (the
/// cluster's built-in workloads): `Send`/`Isend` become eager sends, `Recv` a receive,
/// an `Irecv` a receive where its `WaitAll` is. Every message has `tag`.
pub fn program(
    alg: &Algorithm,
    n: usize,
    root: usize,
    bytes: u64,
    tag: u32,
) -> Result<crate::program::Program, String> {
    alg.check(n)?;
    let mut p = crate::program::Program::new(n);
    for rank in 0..n {
        let call = Call {
            rank,
            n,
            root,
            bytes,
            counts: &[],
            recv_counts: &[],
        };
        let mut posted = Vec::new();
        for s in alg.steps(&call) {
            match s {
                Step::Send { to, bytes } | Step::Isend { to, bytes } => {
                    p.send(rank, to, bytes, tag)
                }
                Step::Recv { from, bytes } => p.recv(rank, from, bytes, tag),
                Step::Irecv { from, bytes } => posted.push((from, bytes)),
                Step::WaitAll => {
                    for (from, bytes) in posted.drain(..) {
                        p.recv(rank, from, bytes, tag);
                    }
                }
            }
        }
    }
    Ok(p)
}

/// A `sendrecv` as SMPI does it: with oneself a local copy (no steps); else isend, irecv,
/// wait for both.
fn sendrecv(c: &Call, out: &mut Vec<Step>, to: usize, send: u64, from: usize, recv: u64) {
    if to == c.rank && from == c.rank {
        return;
    }
    out.push(Step::Isend { to, bytes: send });
    out.push(Step::Irecv { from, bytes: recv });
    out.push(Step::WaitAll);
}

/// Block `i` of `bytes` cut into `n` nearly equal blocks (the first `bytes % n` one byte longer).
fn block(bytes: u64, n: usize, i: usize) -> u64 {
    let n64 = n as u64;
    bytes / n64 + u64::from((i as u64) < bytes % n64)
}

/// Sum of blocks `from .. to` (clamped to `n`).
fn blocks(bytes: u64, n: usize, from: usize, to: usize) -> u64 {
    (from..to.min(n)).map(|i| block(bytes, n, i)).sum()
}

#[cfg(test)]
mod tests;
