//! Built-in workloads, each a [`Program`] generator.
//!
//! | workload | program |
//! |---|---|
//! | `pingpong` | rank 0 sends `bytes` to 1, which answers with `bytes`; `iterations` round trips |
//! | `window` | rank 0 streams `iterations` messages of `bytes` to rank 1, which answers one 8-byte ack at the end |
//! | `alltoall` | every rank sends `bytes` to every other (rank `r` to `r+1, r+2, …` in turn), then receives from all |
//! | `bcast` | the root's `bytes` reach every rank, by one of the algorithms below |
//!
//! Broadcast algorithms:
//! * `binomial`: MPICH's binomial tree over ranks (rank distance halves each round) — the
//!   collectives registry's bcast `binomial_tree`, as the TI replay runs it;
//! * `chain`: a pipelined chain `root → root+1 → …`, the message cut into `segments`;
//! * `scatter_allgather`: the root scatters `bytes / n` to each rank (binomial), then a ring
//!   allgather of `n − 1` steps (van de Geijn);
//! * `ilbm` (CCCBrd), `clbm`, `naulbm`, `aulbm`: the schedule of the `icn-bcast` model on the
//!   fabric's graph, each transfer a real message. A node receives from the sender it keeps
//!   first, then sends in its schedule's order; redundant receptions are received last, so
//!   they cost bandwidth and NIC time but gate nothing.

use crate::collectives;
use crate::program::Program;
use crate::ti::action::CollKind;
use icn_bcast::schemes::{RunOptions, Scheme, run_scheme};
use icn_topo::Graph;

pub fn pingpong(bytes: u64, iterations: u32) -> Program {
    let mut p = Program::new(2);
    for i in 0..iterations {
        p.send(0, 1, bytes, i);
        p.recv(1, 0, bytes, i);
        p.send(1, 0, bytes, i);
        p.recv(0, 1, bytes, i);
    }
    p
}

pub fn window(bytes: u64, messages: u32) -> Program {
    let mut p = Program::new(2);
    for i in 0..messages {
        p.send(0, 1, bytes, i);
        p.recv(1, 0, bytes, i);
    }
    p.send(1, 0, 8, u32::MAX);
    p.recv(0, 1, 8, u32::MAX);
    p
}

pub fn alltoall(ranks: usize, bytes: u64) -> Program {
    let mut p = Program::new(ranks);
    for r in 0..ranks {
        for k in 1..ranks {
            p.send(r, (r + k) % ranks, bytes, 0);
        }
        for k in 1..ranks {
            p.recv(r, (r + ranks - k) % ranks, bytes, 0);
        }
    }
    p
}

/// Rank `r` relative to the root, and back.
fn rel(r: usize, root: usize, n: usize) -> usize {
    (r + n - root) % n
}

/// MPICH's binomial tree: the registry's `binomial_tree` ([`crate::collectives`]).
pub fn binomial(ranks: usize, root: usize, bytes: u64) -> Program {
    let alg = collectives::find(CollKind::Bcast, "binomial_tree").expect("registered");
    collectives::program(alg, ranks, root, bytes, 0).expect("binomial_tree runs on any rank count")
}

pub fn chain(ranks: usize, root: usize, bytes: u64, segments: u32) -> Program {
    let mut p = Program::new(ranks);
    let segs = u64::from(segments.max(1)).min(bytes.max(1));
    let seg = |k: u64| bytes / segs + u64::from(k < bytes % segs);
    for i in 0..ranks {
        let r = (root + i) % ranks;
        for k in 0..segs {
            if i > 0 {
                p.recv(r, (r + ranks - 1) % ranks, seg(k), k as u32);
            }
            if i + 1 < ranks {
                p.send(r, (r + 1) % ranks, seg(k), k as u32);
            }
        }
    }
    p
}

pub fn scatter_allgather(ranks: usize, root: usize, bytes: u64) -> Program {
    let mut p = Program::new(ranks);
    let n = ranks as u64;
    let block = bytes.div_ceil(n).max(1);
    // Scatter along a binomial tree: a subtree of size s rooted at relative rank `me`
    // receives the blocks of relative ranks me .. me + s.
    for r in 0..ranks {
        let me = rel(r, root, ranks);
        let mut mask = 1;
        while mask < ranks {
            if me & mask != 0 {
                let size = mask.min(ranks - me) as u64;
                p.recv(r, (me - mask + root) % ranks, size * block, 1);
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if me + mask < ranks {
                let size = mask.min(ranks - me - mask) as u64;
                p.send(r, (me + mask + root) % ranks, size * block, 1);
            }
            mask >>= 1;
        }
    }
    // Ring allgather: n − 1 steps, each rank passes one block to its right neighbour.
    for step in 0..ranks.saturating_sub(1) {
        for r in 0..ranks {
            p.send(r, (r + 1) % ranks, block, 2 + step as u32);
            p.recv(r, (r + ranks - 1) % ranks, block, 2 + step as u32);
        }
    }
    p
}

/// The schedule of an `icn-bcast` scheme on `graph` from `root`, as messages.
pub fn scheme(
    graph: &Graph,
    scheme: Scheme,
    root: usize,
    bytes: u64,
    seed: u64,
) -> Result<Program, String> {
    let opts = RunOptions {
        seed,
        ..RunOptions::default()
    };
    let run = run_scheme(graph, scheme, &[root], &opts).map_err(|e| e.to_string())?;
    let outcome = run.sample.ok_or("the scheme produced no schedule")?;
    let n = graph.len();
    // Per node: the kept reception (earliest step, lowest sender), its sends, other receptions.
    let mut kept: Vec<Option<(u32, usize)>> = vec![None; n];
    for t in &outcome.schedule {
        if outcome.first_receipt[t.to] == Some(t.step)
            && kept[t.to].is_none_or(|k| (t.step, t.from) < k)
        {
            kept[t.to] = Some((t.step, t.from));
        }
    }
    let mut p = Program::new(n);
    for (v, k) in kept.iter().enumerate() {
        if let Some((_, from)) = *k {
            p.recv(v, from, bytes, 0);
        }
    }
    for t in &outcome.schedule {
        p.send(t.from, t.to, bytes, 0);
    }
    for t in &outcome.schedule {
        if kept[t.to] != Some((t.step, t.from)) {
            p.recv(t.to, t.from, bytes, 0);
        }
    }
    // Sends above were appended in global step order, so each node's sends are in its own
    // order; the kept receive precedes them. Redundant receives from the same sender as the
    // kept one match later messages of that pair (messages of a pair match in order).
    Ok(p)
}

/// Broadcast steps of `scheme` on `graph` from `root` (the paper's step count).
pub fn scheme_steps(graph: &Graph, scheme: Scheme, root: usize, seed: u64) -> Result<u32, String> {
    let opts = RunOptions {
        seed,
        ..RunOptions::default()
    };
    let run = run_scheme(graph, scheme, &[root], &opts).map_err(|e| e.to_string())?;
    run.worst()
        .ok_or_else(|| "some node is never reached".to_owned())
}
