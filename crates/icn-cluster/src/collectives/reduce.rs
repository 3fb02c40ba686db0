//! Reductions (the data moves; the arithmetic is the call's `flops`, charged after it).

use super::{Call, Step, block, blocks, sendrecv};

/// MPICH's binomial reduce: relative rank `me` receives from `me + mask` while bit `mask`
/// of `me` is clear, then sends its partial result to `me − mask`.
pub fn reduce_binomial(c: &Call, out: &mut Vec<Step>) {
    let (me, n) = (c.rel(), c.n);
    let mut mask = 1;
    while mask < n {
        if me & mask != 0 {
            out.push(Step::Send {
                to: c.abs(me - mask),
                bytes: c.bytes,
            });
            break;
        }
        if me + mask < n {
            out.push(Step::Recv {
                from: c.abs(me + mask),
                bytes: c.bytes,
            });
        }
        mask <<= 1;
    }
}

/// Every rank sends its vector to the root, which receives them in rank order.
pub fn reduce_flat(c: &Call, out: &mut Vec<Step>) {
    if c.rank != c.root {
        out.push(Step::Send {
            to: c.root,
            bytes: c.bytes,
        });
        return;
    }
    for i in (0..c.n).filter(|&i| i != c.root) {
        out.push(Step::Recv {
            from: i,
            bytes: c.bytes,
        });
    }
}

/// The fold of non-power-of-two rank counts shared by `rdb` and `rab_rdb`: the first
/// `2·rem` ranks pair up, even ones hand their vector to the odd neighbour and sit out.
/// Returns the rank's index among the `pof2` that go on, if it goes on.
fn fold_in(c: &Call, out: &mut Vec<Step>, pof2: usize) -> Option<usize> {
    let (r, rem) = (c.rank, c.n - pof2);
    if r < 2 * rem {
        if r % 2 == 0 {
            out.push(Step::Send {
                to: r + 1,
                bytes: c.bytes,
            });
            None
        } else {
            out.push(Step::Recv {
                from: r - 1,
                bytes: c.bytes,
            });
            Some(r / 2)
        }
    } else {
        Some(r - rem)
    }
}

fn fold_out(c: &Call, out: &mut Vec<Step>, pof2: usize) {
    let (r, rem) = (c.rank, c.n - pof2);
    if r < 2 * rem {
        if r % 2 == 1 {
            out.push(Step::Send {
                to: r - 1,
                bytes: c.bytes,
            });
        } else {
            out.push(Step::Recv {
                from: r + 1,
                bytes: c.bytes,
            });
        }
    }
}

/// The real rank of fold index `i`.
fn unfold(i: usize, rem: usize) -> usize {
    if i < rem { 2 * i + 1 } else { i + rem }
}

/// Recursive doubling (SimGrid `rdb`, from MPICH): after the fold, log2 p exchanges of the
/// whole vector with `index ^ mask`.
pub fn allreduce_rdb(c: &Call, out: &mut Vec<Step>) {
    let pof2 = 1 << c.n.ilog2();
    let rem = c.n - pof2;
    if let Some(me) = fold_in(c, out, pof2) {
        let mut mask = 1;
        while mask < pof2 {
            let dst = unfold(me ^ mask, rem);
            sendrecv(c, out, dst, c.bytes, dst, c.bytes);
            mask <<= 1;
        }
    }
    fold_out(c, out, pof2);
}

/// Rabenseifner: after the fold, a reduce-scatter by recursive halving (the exchanged part
/// halves each step) and an allgather by recursive doubling (it doubles back).
pub fn allreduce_rab(c: &Call, out: &mut Vec<Step>) {
    let pof2 = 1 << c.n.ilog2();
    let rem = c.n - pof2;
    if let Some(me) = fold_in(c, out, pof2) {
        // The vector as pof2 blocks; `lo .. lo + len` is the part this rank still holds.
        let (mut lo, mut len) = (0, pof2);
        let mut steps = Vec::new();
        let mut mask = pof2 / 2;
        while mask > 0 {
            let peer = me ^ mask;
            let half = len / 2;
            let (keep, give) = if me & mask == 0 {
                (lo, lo + half)
            } else {
                (lo + half, lo)
            };
            let dst = unfold(peer, rem);
            let give_b = blocks(c.bytes, pof2, give, give + half);
            let keep_b = blocks(c.bytes, pof2, keep, keep + half);
            sendrecv(c, out, dst, give_b, dst, keep_b);
            steps.push((dst, give_b, keep_b));
            lo = keep;
            len = half;
            mask >>= 1;
        }
        for &(dst, give_b, keep_b) in steps.iter().rev() {
            sendrecv(c, out, dst, keep_b, dst, give_b);
        }
    }
    fold_out(c, out, pof2);
}

/// Ring (SimGrid `lr`, logical ring): a reduce-scatter of n − 1 steps (in step s send block
/// `r − s`, receive block `r − s − 1`) then an allgather of n − 1 steps (send block
/// `r + 1 − s`, receive `r − s`).
pub fn allreduce_ring(c: &Call, out: &mut Vec<Step>) {
    let (r, n, b) = (c.rank, c.n, c.bytes);
    let (right, left) = ((r + 1) % n, (r + n - 1) % n);
    for s in 0..n - 1 {
        let send = block(b, n, (r + n - s) % n);
        let recv = block(b, n, (r + 2 * n - s - 1) % n);
        sendrecv(c, out, right, send, left, recv);
    }
    for s in 0..n - 1 {
        let send = block(b, n, (r + 1 + n - s) % n);
        let recv = block(b, n, (r + n - s) % n);
        sendrecv(c, out, right, send, left, recv);
    }
}

/// A binomial reduce to rank 0, then a binomial broadcast.
pub fn allreduce_redbcast(c: &Call, out: &mut Vec<Step>) {
    let at0 = Call { root: 0, ..*c };
    reduce_binomial(&at0, out);
    super::bcast::binomial_tree(&at0, out);
}

/// Pairwise exchange (MPICH): in step i, send my part of rank `r + i`'s block to it and
/// receive rank `r − i`'s contribution to mine.
pub fn reduce_scatter_pair(c: &Call, out: &mut Vec<Step>) {
    let (r, n) = (c.rank, c.n);
    for i in 1..n {
        let (to, from) = ((r + i) % n, (r + n - i) % n);
        sendrecv(c, out, to, c.counts[to], from, c.counts[r]);
    }
}

/// A binomial reduce of the whole vector to rank 0, then a linear scatterv of the blocks.
pub fn reduce_scatter_default(c: &Call, out: &mut Vec<Step>) {
    let total: u64 = c.counts.iter().sum();
    let at0 = Call {
        root: 0,
        bytes: total,
        ..*c
    };
    reduce_binomial(&at0, out);
    super::gather::scatter_linear(
        &Call {
            root: 0,
            bytes: c.counts[c.rank],
            ..*c
        },
        out,
    );
}

/// Linear scan: rank r receives every lower rank's vector and sends its own to every
/// higher rank (nonblocking, then wait for all).
pub fn scan_linear(c: &Call, out: &mut Vec<Step>) {
    for i in 0..c.rank {
        out.push(Step::Irecv {
            from: i,
            bytes: c.bytes,
        });
    }
    for i in c.rank + 1..c.n {
        out.push(Step::Isend {
            to: i,
            bytes: c.bytes,
        });
    }
    out.push(Step::WaitAll);
}

/// Exclusive scan: the same messages as [`scan_linear`] (rank r needs ranks 0 .. r).
pub fn exscan_linear(c: &Call, out: &mut Vec<Step>) {
    scan_linear(c, out);
}
