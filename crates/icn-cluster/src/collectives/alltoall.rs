//! All-to-all exchanges. `alltoall` sends `bytes` to every rank; `alltoallv` sends
//! `counts[i]` to rank `i` and receives `recv_counts[i]` from it (same code, per-peer sizes).

use super::{Call, Step, sendrecv};

fn sent(c: &Call, to: usize) -> u64 {
    if c.counts.is_empty() {
        c.bytes
    } else {
        c.counts[to]
    }
}

fn received(c: &Call, from: usize) -> u64 {
    if c.recv_counts.is_empty() {
        c.bytes
    } else {
        c.recv_counts[from]
    }
}

/// `pair` (SimGrid): n `sendrecv`s, in step i with `rank ^ i` (step 0 is the local copy).
pub fn alltoall_pair(c: &Call, out: &mut Vec<Step>) {
    for i in 0..c.n {
        let p = c.rank ^ i;
        sendrecv(c, out, p, sent(c, p), p, received(c, p));
    }
}

/// `ring` (SimGrid): in step i send to `rank + i`, receive from `rank − i`.
pub fn alltoall_ring(c: &Call, out: &mut Vec<Step>) {
    let (r, n) = (c.rank, c.n);
    for i in 0..n {
        let (to, from) = ((r + i) % n, (r + n - i) % n);
        sendrecv(c, out, to, sent(c, to), from, received(c, from));
    }
}

/// `basic_linear` (SimGrid, Open MPI): post every receive (from `rank + 1` upwards), then
/// every send (from `rank − 1` downwards), wait for all. Open MPI's alltoallv version skips
/// empty messages.
pub fn alltoall_linear(c: &Call, out: &mut Vec<Step>) {
    let (r, n) = (c.rank, c.n);
    let v = !c.counts.is_empty();
    for k in 1..n {
        let from = (r + k) % n;
        if !(v && received(c, from) == 0) {
            out.push(Step::Irecv {
                from,
                bytes: received(c, from),
            });
        }
    }
    for k in 1..n {
        let to = (r + n - k) % n;
        if !(v && sent(c, to) == 0) {
            out.push(Step::Isend {
                to,
                bytes: sent(c, to),
            });
        }
    }
    out.push(Step::WaitAll);
}

/// Bruck: ⌈log2 n⌉ steps; in the step of distance `d` send to `rank + d` (receive from
/// `rank − d`) every block whose rotated index has bit `d` set.
pub fn alltoall_bruck(c: &Call, out: &mut Vec<Step>) {
    let (r, n) = (c.rank, c.n);
    let mut d = 1;
    while d < n {
        let k = (0..n).filter(|i| i & d != 0).count() as u64;
        sendrecv(
            c,
            out,
            (r + d) % n,
            k * c.bytes,
            (r + n - d) % n,
            k * c.bytes,
        );
        d <<= 1;
    }
}
