//! Barriers (zero-byte messages), as Open MPI's tuned component and SimGrid write them.

use super::{Call, Step, sendrecv};

/// Recursive doubling: ranks beyond the largest power of two `p` first report to
/// `rank − p`; the first `p` ranks exchange with `rank ^ mask` for mask = 1, 2, 4, …; then
/// the extra ranks are released.
pub fn barrier_rdb(c: &Call, out: &mut Vec<Step>) {
    let (r, n) = (c.rank, c.n);
    let p = 1 << n.ilog2();
    if p != n {
        if r >= p {
            sendrecv(c, out, r - p, 0, r - p, 0);
        } else if r < n - p {
            out.push(Step::Recv {
                from: r + p,
                bytes: 0,
            });
        }
    }
    if r < p {
        let mut mask = 1;
        while mask < p {
            let remote = r ^ mask;
            mask <<= 1;
            if remote < p {
                sendrecv(c, out, remote, 0, remote, 0);
            }
        }
    }
    if p != n && r < n - p {
        out.push(Step::Send {
            to: r + p,
            bytes: 0,
        });
    }
}

/// Dissemination (Bruck): ⌈log2 n⌉ rounds, in round k send to `rank + 2^k`, receive from
/// `rank − 2^k`.
pub fn barrier_dissemination(c: &Call, out: &mut Vec<Step>) {
    let (r, n) = (c.rank, c.n);
    let mut d = 1;
    while d < n {
        sendrecv(c, out, (r + d) % n, 0, (r + n - d) % n, 0);
        d <<= 1;
    }
}

/// Linear: every rank sends to rank 0 and waits for its answer; rank 0 receives from all,
/// then answers all.
pub fn barrier_linear(c: &Call, out: &mut Vec<Step>) {
    if c.rank > 0 {
        out.push(Step::Send { to: 0, bytes: 0 });
        out.push(Step::Recv { from: 0, bytes: 0 });
        return;
    }
    for i in 1..c.n {
        out.push(Step::Irecv { from: i, bytes: 0 });
    }
    out.push(Step::WaitAll);
    for i in 1..c.n {
        out.push(Step::Isend { to: i, bytes: 0 });
    }
    out.push(Step::WaitAll);
}
