//! Gathers, scatters and allgathers. For gather/scatter `bytes` is one rank's block; the v
//! variants take each rank's block from `counts`.

use super::{Call, Step, sendrecv};

/// Rank `i`'s block.
fn blk(c: &Call, i: usize) -> u64 {
    if c.counts.is_empty() {
        c.bytes
    } else {
        c.counts[i]
    }
}

/// Blocks of relative ranks `from .. to` (clamped to n).
fn span(c: &Call, from: usize, to: usize) -> u64 {
    (from..to.min(c.n)).map(|v| blk(c, c.abs(v))).sum()
}

/// Open MPI's in-order binomial gather: relative rank `v` receives its children's subtrees
/// (`v + 1`, `v + 2`, `v + 4`, … while below its lowest set bit), then sends its subtree to
/// `v − lowbit(v)`.
pub fn gather_binomial(c: &Call, out: &mut Vec<Step>) {
    let (v, n) = (c.rel(), c.n);
    let low = if v == 0 {
        n.next_power_of_two()
    } else {
        1 << v.trailing_zeros()
    };
    let mut mask = 1;
    while mask < low && v + mask < n {
        let kid = v + mask;
        out.push(Step::Recv {
            from: c.abs(kid),
            bytes: span(c, kid, kid + mask),
        });
        mask <<= 1;
    }
    if v != 0 {
        out.push(Step::Send {
            to: c.abs(v - low),
            bytes: span(c, v, v + low),
        });
    }
}

/// Every rank sends its block to the root; the root receives them in rank order.
pub fn gather_linear(c: &Call, out: &mut Vec<Step>) {
    if c.rank != c.root {
        out.push(Step::Send {
            to: c.root,
            bytes: blk(c, c.rank),
        });
        return;
    }
    for i in (0..c.n).filter(|&i| i != c.root) {
        out.push(Step::Recv {
            from: i,
            bytes: blk(c, i),
        });
    }
}

/// The binomial gather reversed: receive the subtree from the parent, then send each
/// child its subtree, largest first.
pub fn scatter_binomial(c: &Call, out: &mut Vec<Step>) {
    let (v, n) = (c.rel(), c.n);
    let low = if v == 0 {
        n.next_power_of_two()
    } else {
        1 << v.trailing_zeros()
    };
    if v != 0 {
        out.push(Step::Recv {
            from: c.abs(v - low),
            bytes: span(c, v, v + low),
        });
    }
    let mut mask = low >> 1;
    while mask > 0 {
        let kid = v + mask;
        if kid < n {
            out.push(Step::Send {
                to: c.abs(kid),
                bytes: span(c, kid, kid + mask),
            });
        }
        mask >>= 1;
    }
}

/// The root sends every rank its block in rank order; the others receive.
pub fn scatter_linear(c: &Call, out: &mut Vec<Step>) {
    if c.rank != c.root {
        out.push(Step::Recv {
            from: c.root,
            bytes: blk(c, c.rank),
        });
        return;
    }
    for i in (0..c.n).filter(|&i| i != c.root) {
        out.push(Step::Send {
            to: i,
            bytes: blk(c, i),
        });
    }
}

/// SimGrid's `ring`: n − 1 direct exchanges; in step i send my block to `rank + i` and
/// receive rank `rank − i`'s block from it.
pub fn allgather_direct(c: &Call, out: &mut Vec<Step>) {
    let (r, n) = (c.rank, c.n);
    for i in 1..n {
        let from = (r + n - i) % n;
        sendrecv(c, out, (r + i) % n, blk(c, r), from, blk(c, from));
    }
}

/// Logical ring (SimGrid's allgather `NTSLR`, allgatherv `mpich_ring`): n − 1 steps; in
/// step s pass block `rank − s` right, take block `rank − s − 1` from the left.
pub fn allgather_ring(c: &Call, out: &mut Vec<Step>) {
    let (r, n) = (c.rank, c.n);
    for s in 0..n - 1 {
        let (sb, rb) = ((r + n - s) % n, (r + 2 * n - s - 1) % n);
        sendrecv(c, out, (r + 1) % n, blk(c, sb), (r + n - 1) % n, blk(c, rb));
    }
}

/// Recursive doubling: exchange the `mask` blocks gathered so far with `rank ^ mask`
/// (power-of-two ranks).
pub fn allgather_rdb(c: &Call, out: &mut Vec<Step>) {
    let (r, n) = (c.rank, c.n);
    let mut mask = 1;
    while mask < n {
        let p = r ^ mask;
        let (mine, theirs) = (r & !(mask - 1), p & !(mask - 1));
        let sum = |from: usize| (from..from + mask).map(|i| blk(c, i)).sum::<u64>();
        sendrecv(c, out, p, sum(mine), p, sum(theirs));
        mask <<= 1;
    }
}

/// Bruck: in the step of distance `d` send the `min(d, n − d)` blocks gathered so far to
/// `rank − d`, receive as many from `rank + d`.
pub fn allgather_bruck(c: &Call, out: &mut Vec<Step>) {
    let (r, n) = (c.rank, c.n);
    let mut d = 1;
    while d < n {
        let k = d.min(n - d);
        let sum = |from: usize| (0..k).map(|i| blk(c, (from + i) % n)).sum::<u64>();
        sendrecv(
            c,
            out,
            (r + n - d) % n,
            sum(r),
            (r + d) % n,
            sum((r + d) % n),
        );
        d <<= 1;
    }
}
