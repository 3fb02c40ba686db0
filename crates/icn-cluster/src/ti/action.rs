//! One TI action: its words parsed and checked against the communicator size, with every
//! size turned into bytes (count × datatype size). The argument lists are SimGrid 3.32's
//! (`smpi_replay.cpp`), optional datatype arguments included:
//!
//! | action | arguments (`[…]` optional) |
//! |---|---|
//! | `init` | `[any]`: with an argument the default datatype becomes MPI_DOUBLE |
//! | `finalize`, `barrier`, `waitall` | none |
//! | `comm_size`, `comm_split`, `comm_dup` | anything (no effect, as in SimGrid) |
//! | `send`, `isend`, `recv`, `irecv` | `peer tag count [dt]` |
//! | `test`, `wait` | `src dst tag` |
//! | `sendRecv` | `sendcount dst recvcount src [dt1 dt2]` (SimGrid 3.32 requires both datatypes and refuses the spelling `sendrecv`; icnlab reads both) |
//! | `bcast` | `count [root dt]` |
//! | `reduce` | `count flops [root dt]` |
//! | `allreduce` | `count flops [dt]` |
//! | `alltoall`, `allgather` | `sendcount recvcount [dt1 dt2]` |
//! | `gather`, `scatter` | `sendcount recvcount [root dt1 dt2]` |
//! | `alltoallv` | `sendbuf sendcounts×N recvbuf recvcounts×N [dt1 dt2]` |
//! | `gatherv` | `sendcount recvcounts×N [root dt1 dt2]` |
//! | `allgatherv` | `sendcount recvcounts×N [dt1 dt2] [disps×N]` |
//! | `scatterv` | `sendcounts×N recvcount [root dt1 dt2]` |
//! | `reducescatter` | `recvcounts×N flops [dt]` |
//! | `scan`, `exscan` | `count flops [dt]` |
//! | `compute` | `flops` |
//! | `sleep` | `seconds` |
//! | `location` | `file line` |
//!
//! Counts are read as SimGrid reads them (a decimal such as `1e6`, truncated) and must fit
//! an MPI `int`; a message may not exceed [`MAX_MESSAGE`] bytes.

use super::datatype;

/// Largest message (one point-to-point transfer) in bytes: 2^32 − 1.
pub const MAX_MESSAGE: u64 = u32::MAX as u64;
/// Largest `compute` or reduction: 10^18 flops.
pub const MAX_FLOPS: f64 = 1e18;
/// Longest `sleep`: 10^6 s.
pub const MAX_SLEEP_S: f64 = 1e6;

/// The actions, sizes in bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Init {
        double_default: bool,
    },
    Finalize,
    /// `comm_size`, `comm_split`, `comm_dup`: nothing to do.
    Comm,
    Send {
        peer: usize,
        tag: u32,
        bytes: u64,
        blocking: bool,
    },
    Recv {
        peer: usize,
        tag: u32,
        bytes: u64,
        blocking: bool,
    },
    Test {
        src: usize,
        dst: usize,
        tag: u32,
    },
    Wait {
        src: usize,
        dst: usize,
        tag: u32,
    },
    WaitAll,
    SendRecv {
        send: u64,
        dst: usize,
        recv: u64,
        src: usize,
    },
    Coll(Collective),
    Compute {
        flops: f64,
    },
    Sleep {
        seconds: f64,
    },
    Location,
}

/// At most `max` characters of `text` for an error message (a word of a trace line may be
/// megabytes long), control characters (a terminal's escape sequences) shown as `?`, with
/// `…` when cut.
pub(crate) fn printable_prefix(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .take(max)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// A collective call, sizes in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Collective {
    pub kind: CollKind,
    pub root: usize,
    /// bcast: the message; reduce, allreduce, scan: the vector; alltoall, allgather, gather,
    /// scatter: one rank's block (the send count); gatherv, allgatherv: this rank's block;
    /// scatterv: this rank's block (the receive count).
    pub bytes: u64,
    /// The v variants: bytes per rank (alltoallv: sent to each; gatherv, allgatherv,
    /// scatterv, reducescatter: each rank's block). Empty otherwise.
    pub counts: Vec<u64>,
    /// alltoallv: bytes received from each rank.
    pub recv_counts: Vec<u64>,
    /// Reduction work charged to this rank's host after the collective (SimGrid's replay
    /// does the same).
    pub flops: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CollKind {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Alltoall,
    Alltoallv,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    Allgatherv,
    ReduceScatter,
    Scan,
    Exscan,
}

impl CollKind {
    pub const ALL: [CollKind; 15] = [
        CollKind::Barrier,
        CollKind::Bcast,
        CollKind::Reduce,
        CollKind::Allreduce,
        CollKind::Alltoall,
        CollKind::Alltoallv,
        CollKind::Gather,
        CollKind::Gatherv,
        CollKind::Scatter,
        CollKind::Scatterv,
        CollKind::Allgather,
        CollKind::Allgatherv,
        CollKind::ReduceScatter,
        CollKind::Scan,
        CollKind::Exscan,
    ];

    /// The trace's (and SimGrid's `smpi/<name>` option's) name.
    pub fn name(self) -> &'static str {
        match self {
            CollKind::Barrier => "barrier",
            CollKind::Bcast => "bcast",
            CollKind::Reduce => "reduce",
            CollKind::Allreduce => "allreduce",
            CollKind::Alltoall => "alltoall",
            CollKind::Alltoallv => "alltoallv",
            CollKind::Gather => "gather",
            CollKind::Gatherv => "gatherv",
            CollKind::Scatter => "scatter",
            CollKind::Scatterv => "scatterv",
            CollKind::Allgather => "allgather",
            CollKind::Allgatherv => "allgatherv",
            CollKind::ReduceScatter => "reduce_scatter",
            CollKind::Scan => "scan",
            CollKind::Exscan => "exscan",
        }
    }
}

/// Every action name a trace may use.
pub const ACTIONS: [&str; 32] = [
    "init",
    "finalize",
    "comm_size",
    "comm_split",
    "comm_dup",
    "send",
    "isend",
    "recv",
    "irecv",
    "test",
    "wait",
    "waitall",
    "sendRecv",
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "alltoall",
    "alltoallv",
    "gather",
    "scatter",
    "gatherv",
    "scatterv",
    "allgather",
    "allgatherv",
    "reducescatter",
    "scan",
    "exscan",
    "compute",
    "sleep",
    "location",
    "sendrecv",
];

/// What is wrong with one field (1-based, counting the rank as field 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: usize,
    pub message: String,
}

/// Parses `words` (`words[0]` the rank, `words[1]` the action) of a rank whose default
/// datatype has `default_dt` bytes, in a communicator of `n` ranks.
pub fn parse(words: &[&str], n: usize, default_dt: u64) -> Result<Action, FieldError> {
    let p = Words {
        words,
        n,
        default_dt,
    };
    let name = words.get(1).copied().unwrap_or("");
    let a = match name {
        "init" => {
            p.at_most(3)?;
            Action::Init {
                double_default: words.len() > 2,
            }
        }
        "finalize" | "barrier" | "waitall" => {
            p.at_most(2)?;
            match name {
                "finalize" => Action::Finalize,
                "barrier" => Action::Coll(p.coll(CollKind::Barrier, 0, 0)),
                _ => Action::WaitAll,
            }
        }
        "comm_size" | "comm_split" | "comm_dup" => Action::Comm,
        "send" | "isend" | "recv" | "irecv" => {
            p.at_most(6)?;
            let peer = p.rank(2, "peer")?;
            let tag = p.tag(3)?;
            let bytes = p.bytes(4, "count", p.dt(5)?)?;
            let blocking = !name.starts_with('i');
            if name.ends_with("send") {
                Action::Send {
                    peer,
                    tag,
                    bytes,
                    blocking,
                }
            } else {
                Action::Recv {
                    peer,
                    tag,
                    bytes,
                    blocking,
                }
            }
        }
        "test" | "wait" => {
            p.at_most(5)?;
            let (src, dst, tag) = (p.rank(2, "src")?, p.rank(3, "dst")?, p.tag(4)?);
            if name == "test" {
                Action::Test { src, dst, tag }
            } else {
                Action::Wait { src, dst, tag }
            }
        }
        "sendRecv" | "sendrecv" => {
            p.at_most(8)?;
            let send = p.bytes(2, "sendcount", p.dt(6)?)?;
            let dst = p.rank(3, "dst")?;
            let recv = p.bytes(4, "recvcount", p.dt(7)?)?;
            let src = p.rank(5, "src")?;
            Action::SendRecv {
                send,
                dst,
                recv,
                src,
            }
        }
        "bcast" => {
            p.at_most(5)?;
            let root = p.root(3)?;
            let bytes = p.bytes(2, "count", p.dt(4)?)?;
            Action::Coll(p.coll(CollKind::Bcast, root, bytes))
        }
        "reduce" => {
            p.at_most(6)?;
            let root = p.root(4)?;
            let bytes = p.bytes(2, "count", p.dt(5)?)?;
            let mut c = p.coll(CollKind::Reduce, root, bytes);
            c.flops = p.flops(3, "flops")?;
            Action::Coll(c)
        }
        "allreduce" | "scan" | "exscan" => {
            p.at_most(5)?;
            let bytes = p.bytes(2, "count", p.dt(4)?)?;
            let kind = match name {
                "allreduce" => CollKind::Allreduce,
                "scan" => CollKind::Scan,
                _ => CollKind::Exscan,
            };
            let mut c = p.coll(kind, 0, bytes);
            c.flops = p.flops(3, "flops")?;
            Action::Coll(c)
        }
        "alltoall" | "allgather" => {
            p.at_most(6)?;
            let bytes = p.bytes(2, "sendcount", p.dt(4)?)?;
            p.bytes(3, "recvcount", p.dt(5)?)?;
            let kind = if name == "alltoall" {
                CollKind::Alltoall
            } else {
                CollKind::Allgather
            };
            Action::Coll(p.coll(kind, 0, bytes))
        }
        "gather" | "scatter" => {
            p.at_most(7)?;
            let root = p.root(4)?;
            let send = p.bytes(2, "sendcount", p.dt(5)?)?;
            let recv = p.bytes(3, "recvcount", p.dt(6)?)?;
            if name == "gather" {
                Action::Coll(p.coll(CollKind::Gather, root, send))
            } else {
                Action::Coll(p.coll(CollKind::Scatter, root, recv))
            }
        }
        "alltoallv" => {
            p.at_least(2 * n + 4)?;
            p.at_most(2 * n + 6)?;
            let (dt1, dt2) = (p.dt(4 + 2 * n)?, p.dt(5 + 2 * n)?);
            p.bytes(2, "sendbuf", dt1)?;
            p.bytes(3 + n, "recvbuf", dt2)?;
            let mut c = p.coll(CollKind::Alltoallv, 0, 0);
            c.counts = p.counts(3, "sendcounts", dt1)?;
            c.recv_counts = p.counts(4 + n, "recvcounts", dt2)?;
            Action::Coll(c)
        }
        "gatherv" => {
            p.at_least(n + 3)?;
            p.at_most(n + 6)?;
            let root = p.root(3 + n)?;
            let (dt1, dt2) = (p.dt(4 + n)?, p.dt(5 + n)?);
            let mut c = p.coll(CollKind::Gatherv, root, p.bytes(2, "sendcount", dt1)?);
            c.counts = p.counts(3, "recvcounts", dt2)?;
            Action::Coll(c)
        }
        "allgatherv" => {
            // SimGrid: recvcounts, then either [dt1 dt2] [disps×N] or disps×N alone.
            p.at_least(n + 3)?;
            p.at_most(2 * n + 5)?;
            let extra = words.len() - (n + 3);
            let (dt1, dt2) = match extra {
                0 => (default_dt, default_dt),
                1 | 2 => (p.dt(3 + n)?, p.dt(4 + n)?),
                e if e == n => (default_dt, default_dt),
                e if e == n + 2 => (p.dt(3 + n)?, p.dt(4 + n)?),
                _ => {
                    return Err(FieldError {
                        field: n + 4,
                        message: format!(
                            "allgatherv takes the {n} recvcounts, then [dt1 dt2] and/or {n} disps; {extra} words follow them"
                        ),
                    });
                }
            };
            let mut c = p.coll(CollKind::Allgatherv, 0, p.bytes(2, "sendcount", dt1)?);
            c.counts = p.counts(3, "recvcounts", dt2)?;
            Action::Coll(c)
        }
        "scatterv" => {
            p.at_least(n + 3)?;
            p.at_most(n + 6)?;
            let root = p.root(3 + n)?;
            let (dt1, dt2) = (p.dt(4 + n)?, p.dt(5 + n)?);
            let mut c = p.coll(CollKind::Scatterv, root, p.bytes(2 + n, "recvcount", dt2)?);
            c.counts = p.counts(2, "sendcounts", dt1)?;
            Action::Coll(c)
        }
        "reducescatter" => {
            p.at_least(n + 3)?;
            p.at_most(n + 4)?;
            let dt = p.dt(3 + n)?;
            let mut c = p.coll(CollKind::ReduceScatter, 0, 0);
            c.counts = p.counts(2, "recvcounts", dt)?;
            c.flops = p.flops(2 + n, "flops")?;
            Action::Coll(c)
        }
        "compute" => {
            p.at_most(3)?;
            Action::Compute {
                flops: p.flops(2, "flops")?,
            }
        }
        "sleep" => {
            p.at_most(3)?;
            let s = p.real(2, "seconds", MAX_SLEEP_S)?;
            Action::Sleep { seconds: s }
        }
        "location" => {
            p.at_most(4)?;
            p.word(2, "file")?;
            p.real(3, "line", 1e12)?;
            Action::Location
        }
        "" => {
            return Err(FieldError {
                field: 2,
                message: "the action is missing".into(),
            });
        }
        other => {
            return Err(FieldError {
                field: 2,
                message: format!(
                    "`{}` is not a TI action (one of {})",
                    printable_prefix(other, 40),
                    ACTIONS[..31].join(", ")
                ),
            });
        }
    };
    Ok(a)
}

struct Words<'a> {
    words: &'a [&'a str],
    n: usize,
    default_dt: u64,
}

impl Words<'_> {
    fn err(&self, k: usize, message: String) -> FieldError {
        FieldError {
            field: k + 1,
            message,
        }
    }

    fn at_most(&self, len: usize) -> Result<(), FieldError> {
        if self.words.len() > len {
            return Err(self.err(
                len,
                format!(
                    "unexpected `{}`: {} takes at most {} arguments",
                    printable_prefix(self.words[len], 40),
                    printable_prefix(self.words[1], 40),
                    len - 2
                ),
            ));
        }
        Ok(())
    }

    fn at_least(&self, len: usize) -> Result<(), FieldError> {
        if self.words.len() < len {
            return Err(self.err(
                self.words.len(),
                format!(
                    "{} needs at least {} arguments with {} ranks, got {}",
                    self.words[1],
                    len - 2,
                    self.n,
                    self.words.len() - 2
                ),
            ));
        }
        Ok(())
    }

    fn word(&self, k: usize, name: &str) -> Result<&str, FieldError> {
        self.words
            .get(k)
            .copied()
            .ok_or_else(|| self.err(k, format!("({name}) is missing")))
    }

    /// A finite decimal in `0 ..= max` (SimGrid's `parse_double`).
    fn real(&self, k: usize, name: &str, max: f64) -> Result<f64, FieldError> {
        let w = self.word(k, name)?;
        w.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && (0.0..=max).contains(v))
            .ok_or_else(|| {
                self.err(
                    k,
                    format!(
                        "({name}): `{}` is not a number in 0 ..= {max:e}",
                        printable_prefix(w, 40)
                    ),
                )
            })
    }

    fn flops(&self, k: usize, name: &str) -> Result<f64, FieldError> {
        self.real(k, name, MAX_FLOPS)
    }

    /// An integer in `0 .. max` (no decimals: ranks and tags).
    fn int(&self, k: usize, name: &str, max: u64) -> Result<u64, FieldError> {
        let w = self.word(k, name)?;
        w.parse::<u64>().ok().filter(|v| *v < max).ok_or_else(|| {
            self.err(
                k,
                format!(
                    "({name}): `{}` is not an integer in 0 ..= {}",
                    printable_prefix(w, 40),
                    max - 1
                ),
            )
        })
    }

    fn rank(&self, k: usize, name: &str) -> Result<usize, FieldError> {
        self.int(k, name, self.n as u64).map(|v| v as usize)
    }

    fn root(&self, k: usize) -> Result<usize, FieldError> {
        if k < self.words.len() {
            self.rank(k, "root")
        } else {
            Ok(0)
        }
    }

    fn tag(&self, k: usize) -> Result<u32, FieldError> {
        self.int(k, "tag", 1 << 31).map(|v| v as u32)
    }

    /// The datatype size at `k`, or the default when the argument is absent.
    fn dt(&self, k: usize) -> Result<u64, FieldError> {
        match self.words.get(k) {
            None => Ok(self.default_dt),
            Some(w) => datatype::size_of(w).map_err(|m| self.err(k, format!("(datatype): {m}"))),
        }
    }

    /// A count (SimGrid: a decimal, truncated, fitting an `int`) times `dt` bytes.
    fn bytes(&self, k: usize, name: &str, dt: u64) -> Result<u64, FieldError> {
        let count = self.real(k, name, f64::from(i32::MAX))?.trunc() as u64;
        count
            .checked_mul(dt)
            .filter(|b| *b <= MAX_MESSAGE)
            .ok_or_else(|| {
                self.err(
                    k,
                    format!("({name}): {count} × {dt} B is more than {MAX_MESSAGE} bytes"),
                )
            })
    }

    fn counts(&self, k: usize, name: &str, dt: u64) -> Result<Vec<u64>, FieldError> {
        (k..k + self.n).map(|i| self.bytes(i, name, dt)).collect()
    }

    fn coll(&self, kind: CollKind, root: usize, bytes: u64) -> Collective {
        Collective {
            kind,
            root,
            bytes,
            counts: Vec::new(),
            recv_counts: Vec::new(),
            flops: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: &str, n: usize) -> Result<Action, FieldError> {
        let w: Vec<&str> = line.split_whitespace().collect();
        parse(&w, n, 1)
    }

    #[test]
    fn simgrid_examples_parse_with_datatypes() {
        assert_eq!(
            p("0 send 1 0 1e6", 2).unwrap(),
            Action::Send {
                peer: 1,
                tag: 0,
                bytes: 1_000_000,
                blocking: true
            }
        );
        assert_eq!(
            p("1 irecv 0 2 1e6 0", 2).unwrap(),
            Action::Recv {
                peer: 0,
                tag: 2,
                bytes: 8_000_000,
                blocking: false
            }
        );
        // bcast 5e4 with root 1 and MPI_DOUBLE: 400 000 bytes from rank 1.
        let Action::Coll(c) = p("0 bcast 5e4 1 0", 3).unwrap() else {
            panic!()
        };
        assert_eq!((c.kind, c.root, c.bytes), (CollKind::Bcast, 1, 400_000));
        let Action::Coll(c) = p("0 reduce 5e4 5e8 0 4", 3).unwrap() else {
            panic!()
        };
        assert_eq!((c.root, c.bytes, c.flops), (0, 400_000, 5e8));
        let Action::Coll(c) = p("0 alltoallv 100 1 40 30 1000 1 80 100", 3).unwrap() else {
            panic!()
        };
        assert_eq!(
            (c.counts.clone(), c.recv_counts.clone()),
            (vec![1, 40, 30], vec![1, 80, 100])
        );
        let Action::Coll(c) =
            p("3 reducescatter 275427 275427 275427 204020 12403123 0", 4).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            c.counts,
            vec![275427 * 8, 275427 * 8, 275427 * 8, 204020 * 8]
        );
        assert_eq!(c.flops, 12403123.0);
        let Action::Coll(c) = p("0 allgatherv 275427 275427 275427 275427 204020 0 0", 4).unwrap()
        else {
            panic!()
        };
        assert_eq!(c.bytes, 275427 * 8);
        let Action::Coll(c) = p("0 gather 68 68 0 0 0", 4).unwrap() else {
            panic!()
        };
        assert_eq!((c.kind, c.bytes), (CollKind::Gather, 68 * 8));
    }

    #[test]
    fn errors_name_the_field() {
        let e = |l: &str| {
            let e = p(l, 4).unwrap_err();
            (e.field, e.message)
        };
        assert_eq!(e("0 send 9 0 10").0, 3);
        assert!(e("0 send 9 0 10").1.contains("0 ..= 3"));
        assert_eq!(e("0 send 1 0").0, 5);
        assert_eq!(e("0 send 1 0 10 99").0, 6);
        assert_eq!(e("0 send 1 0 10 0 7").0, 7);
        assert_eq!(e("0 jump").0, 2);
        assert_eq!(e("0 compute -1").0, 3);
        assert_eq!(e("0 compute nan").0, 3);
        assert_eq!(e("0 alltoallv 1 2 3").0, 6);
        assert_eq!(e("0 send 1 0 3e9 0").0, 5);
    }
}
