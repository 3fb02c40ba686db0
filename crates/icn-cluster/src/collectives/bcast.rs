//! Broadcasts of `bytes` from the root.

use super::{Call, Step, block, blocks};

/// MPICH's binomial tree (SimGrid `binomial_tree`): receive from the parent (clear the
/// lowest set bit of the relative rank), then send to children at distance mask/2, mask/4, …
pub fn binomial_tree(c: &Call, out: &mut Vec<Step>) {
    let (me, n) = (c.rel(), c.n);
    let mut mask = 1;
    while mask < n {
        if me & mask != 0 {
            out.push(Step::Recv {
                from: c.abs(me - mask),
                bytes: c.bytes,
            });
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if me + mask < n {
            out.push(Step::Send {
                to: c.abs(me + mask),
                bytes: c.bytes,
            });
        }
        mask >>= 1;
    }
}

/// The root sends to every rank at once (isends, wait for all); the others receive.
pub fn flattree(c: &Call, out: &mut Vec<Step>) {
    if c.rank != c.root {
        out.push(Step::Recv {
            from: c.root,
            bytes: c.bytes,
        });
        return;
    }
    for i in (0..c.n).filter(|&i| i != c.root) {
        out.push(Step::Isend {
            to: i,
            bytes: c.bytes,
        });
    }
    out.push(Step::WaitAll);
}

/// The binomial scatter of van de Geijn's broadcast: relative rank `me` receives blocks
/// `me .. me + lowbit(me)` from its parent and hands the upper halves on.
fn scatter(c: &Call, out: &mut Vec<Step>) {
    let (me, n, b) = (c.rel(), c.n, c.bytes);
    let mut mask = 1;
    while mask < n {
        if me & mask != 0 {
            out.push(Step::Recv {
                from: c.abs(me - mask),
                bytes: blocks(b, n, me, me + mask),
            });
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if me + mask < n {
            let child = me + mask;
            out.push(Step::Send {
                to: c.abs(child),
                bytes: blocks(b, n, child, child + mask),
            });
        }
        mask >>= 1;
    }
}

/// Scatter, then a ring allgather of the blocks (n − 1 steps; in step s relative rank `me`
/// passes block `me − s` to its right neighbour and takes block `me − s − 1` from its left).
pub fn scatter_ring_allgather(c: &Call, out: &mut Vec<Step>) {
    scatter(c, out);
    let (me, n, b) = (c.rel(), c.n, c.bytes);
    for s in 0..n - 1 {
        let send = block(b, n, (me + n - s) % n);
        let recv = block(b, n, (me + 2 * n - s - 1) % n);
        super::sendrecv(
            c,
            out,
            c.abs((me + 1) % n),
            send,
            c.abs((me + n - 1) % n),
            recv,
        );
    }
}

/// Scatter, then a recursive-doubling allgather: in the step of distance `mask`, relative
/// rank `me` exchanges its `mask` gathered blocks with `me ^ mask` (power-of-two ranks).
pub fn scatter_rdb_allgather(c: &Call, out: &mut Vec<Step>) {
    scatter(c, out);
    let (me, n, b) = (c.rel(), c.n, c.bytes);
    let mut mask = 1;
    while mask < n {
        let peer = me ^ mask;
        let mine = me & !(mask - 1);
        let theirs = peer & !(mask - 1);
        super::sendrecv(
            c,
            out,
            c.abs(peer),
            blocks(b, n, mine, mine + mask),
            c.abs(peer),
            blocks(b, n, theirs, theirs + mask),
        );
        mask <<= 1;
    }
}

/// Segment of the pipelined chain.
pub const SEGMENT: u64 = 8192;

/// A chain root → root+1 → … in segments of [`SEGMENT`] bytes: each rank receives
/// segment k from its left neighbour, then sends it right.
pub fn pipeline(c: &Call, out: &mut Vec<Step>) {
    let (me, n) = (c.rel(), c.n);
    let segs = c.bytes.div_ceil(SEGMENT).max(1);
    for k in 0..segs {
        let bytes = SEGMENT.min(c.bytes - (k * SEGMENT).min(c.bytes));
        if me > 0 {
            out.push(Step::Recv {
                from: c.abs(me - 1),
                bytes,
            });
        }
        if me + 1 < n {
            out.push(Step::Send {
                to: c.abs(me + 1),
                bytes,
            });
        }
    }
}
