//! Every algorithm's messages: matched exactly once with equal sizes, free of deadlock
//! even if every send waits for its receiver, and the hand-derived counts and bytes.

use super::*;
use std::collections::{HashMap, VecDeque};

/// `(src, dst, bytes)` of every message of one call on `n` ranks, in matching order per
/// pair, after running all ranks with every send synchronous (the strictest semantics).
/// Panics naming the algorithm on a deadlock, an unmatched message or a size mismatch.
fn run(
    a: &Algorithm,
    n: usize,
    root: usize,
    bytes: u64,
    counts: &[u64],
) -> Vec<(usize, usize, u64)> {
    // v variants: counts[i] per rank; alltoallv: rank r sends counts[(r + i) % n] to i
    // (so each rank's sends differ) and receives what the others send it.
    let v = matches!(
        a.kind,
        K::Alltoallv | K::Gatherv | K::Allgatherv | K::Scatterv | K::ReduceScatter
    );
    let sends: Vec<Vec<u64>> = (0..n)
        .map(|r| match a.kind {
            K::Alltoallv => (0..n).map(|i| counts[(r + i) % n]).collect(),
            _ if v => counts.to_vec(),
            _ => Vec::new(),
        })
        .collect();
    let recvs: Vec<Vec<u64>> = (0..n)
        .map(|r| {
            if a.kind == K::Alltoallv {
                (0..n).map(|i| sends[i][r]).collect()
            } else {
                Vec::new()
            }
        })
        .collect();
    let steps: Vec<Vec<Step>> = (0..n)
        .map(|rank| {
            let bytes = match a.kind {
                K::Gatherv | K::Allgatherv | K::Scatterv => counts[rank],
                _ => bytes,
            };
            a.steps(&Call {
                rank,
                n,
                root,
                bytes,
                counts: &sends[rank],
                recv_counts: &recvs[rank],
            })
        })
        .collect();
    // Per pair: posted sends (id, bytes) and receives (id, bytes), unmatched.
    let mut sq: HashMap<(usize, usize), VecDeque<(usize, u64)>> = HashMap::new();
    let mut rq: HashMap<(usize, usize), VecDeque<(usize, u64)>> = HashMap::new();
    let mut matched: Vec<bool> = Vec::new();
    let mut pending: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut blocked: Vec<Option<usize>> = vec![None; n];
    let mut pc = vec![0; n];
    let mut msgs = Vec::new();
    let mut post = |src: usize,
                    dst: usize,
                    bytes: u64,
                    send: bool,
                    matched: &mut Vec<bool>,
                    msgs: &mut Vec<(usize, usize, u64)>| {
        let id = matched.len();
        matched.push(false);
        let (mine, other) = if send {
            (&mut sq, &mut rq)
        } else {
            (&mut rq, &mut sq)
        };
        if let Some((o, ob)) = other.get_mut(&(src, dst)).and_then(VecDeque::pop_front) {
            assert_eq!(
                ob,
                bytes,
                "{} {}: {src}→{dst} sizes differ",
                a.kind.name(),
                a.name
            );
            matched[id] = true;
            matched[o] = true;
            msgs.push((src, dst, bytes));
        } else {
            mine.entry((src, dst)).or_default().push_back((id, bytes));
        }
        id
    };
    loop {
        let mut progress = false;
        for r in 0..n {
            loop {
                if let Some(id) = blocked[r] {
                    if !matched[id] {
                        break;
                    }
                    blocked[r] = None;
                }
                if pending[r].iter().any(|&id| !matched[id])
                    && matches!(steps[r].get(pc[r]), Some(Step::WaitAll))
                {
                    break;
                }
                let Some(&s) = steps[r].get(pc[r]) else { break };
                pc[r] += 1;
                progress = true;
                match s {
                    Step::Send { to, bytes } => {
                        blocked[r] = Some(post(r, to, bytes, true, &mut matched, &mut msgs))
                    }
                    Step::Recv { from, bytes } => {
                        blocked[r] = Some(post(from, r, bytes, false, &mut matched, &mut msgs))
                    }
                    Step::Isend { to, bytes } => {
                        let id = post(r, to, bytes, true, &mut matched, &mut msgs);
                        pending[r].push(id)
                    }
                    Step::Irecv { from, bytes } => {
                        let id = post(from, r, bytes, false, &mut matched, &mut msgs);
                        pending[r].push(id)
                    }
                    Step::WaitAll => pending[r].clear(),
                }
            }
        }
        if !progress {
            break;
        }
    }
    for r in 0..n {
        assert!(
            pc[r] == steps[r].len() && blocked[r].is_none() && pending[r].is_empty(),
            "{} {} on {n} ranks: rank {r} stuck at step {} of {:?}",
            a.kind.name(),
            a.name,
            pc[r],
            steps[r]
        );
    }
    assert!(
        sq.values().chain(rq.values()).all(VecDeque::is_empty),
        "{} {}: unmatched messages",
        a.kind.name(),
        a.name
    );
    assert!(
        msgs.iter().all(|m| m.0 != m.1),
        "{} {}: a message to oneself",
        a.kind.name(),
        a.name
    );
    msgs
}

fn get(kind: K, name: &str) -> &'static Algorithm {
    find(kind, name).unwrap()
}

fn totals(m: &[(usize, usize, u64)]) -> (usize, u64) {
    (m.len(), m.iter().map(|x| x.2).sum())
}

#[test]
fn every_algorithm_matches_every_message_once_on_1_to_17_ranks() {
    for a in REGISTRY {
        for n in (1..=17).chain([32]) {
            if a.check(n).is_err() {
                continue;
            }
            let counts: Vec<u64> = (0..n as u64).map(|i| 8 * (i % 3) + 1).collect();
            for root in [0, n / 2, n - 1] {
                let m = run(a, n, root, 1000, &counts);
                if n == 1 {
                    assert!(m.is_empty());
                }
            }
        }
    }
}

#[test]
fn power_of_two_algorithms_are_refused_otherwise() {
    assert!(
        get(K::Alltoall, "pair")
            .check(6)
            .unwrap_err()
            .contains("power-of-two")
    );
    assert!(get(K::Alltoall, "pair").check(8).is_ok());
    assert!(
        find(K::Bcast, "nope")
            .unwrap_err()
            .contains("binomial_tree")
    );
    assert_eq!(get(K::Barrier, "dissemination").name, "ompi_bruck");
}

#[test]
fn bcast_by_hand() {
    // Binomial tree, 8 ranks from 0: 0→4, 0→2, 0→1, 2→3, 4→6, 4→5, 6→7.
    let m = run(get(K::Bcast, "binomial_tree"), 8, 0, 100, &[]);
    assert_eq!(totals(&m), (7, 700));
    let c = Call {
        rank: 0,
        n: 8,
        root: 0,
        bytes: 100,
        counts: &[],
        recv_counts: &[],
    };
    assert_eq!(
        get(K::Bcast, "binomial_tree").steps(&c),
        [4, 2, 1].map(|to| Step::Send { to, bytes: 100 })
    );
    // From root 3 on 5 ranks rank 4 (relative 1) receives from 3.
    let c = Call {
        rank: 4,
        n: 5,
        root: 3,
        ..c
    };
    assert_eq!(
        get(K::Bcast, "binomial_tree").steps(&c),
        [Step::Recv {
            from: 3,
            bytes: 100
        }]
    );
    assert_eq!(
        totals(&run(get(K::Bcast, "flattree"), 6, 2, 10, &[])),
        (5, 50)
    );
    // Scatter + ring allgather, 4 ranks, 400 B: scatter 0→2 200 B, 0→1 100, 2→3 100;
    // allgather 4 ranks × 3 steps × 100 B.
    assert_eq!(
        totals(&run(get(K::Bcast, "scatter_LR_allgather"), 4, 0, 400, &[])),
        (15, 1600)
    );
    // Scatter + recursive doubling on 4: scatter 400 B as above; rdb 4 × (100 + 200).
    assert_eq!(
        totals(&run(get(K::Bcast, "scatter_rdb_allgather"), 4, 0, 400, &[])),
        (11, 1600)
    );
    // Pipeline of 20 000 B = 3 segments (8192, 8192, 3616) over 3 ranks: 2 hops each.
    assert_eq!(
        totals(&run(get(K::Bcast, "pipeline"), 3, 0, 20_000, &[])),
        (6, 40_000)
    );
}

#[test]
fn reductions_by_hand() {
    assert_eq!(
        totals(&run(get(K::Reduce, "binomial"), 7, 0, 10, &[])),
        (6, 60)
    );
    assert_eq!(
        totals(&run(get(K::Reduce, "flat_tree"), 7, 3, 10, &[])),
        (6, 60)
    );
    // rdb on 4: 2 exchanges per rank; on 5: fold 0→1, 4 × 2, unfold 1→0.
    assert_eq!(
        totals(&run(get(K::Allreduce, "rdb"), 4, 0, 10, &[])),
        (8, 80)
    );
    assert_eq!(
        totals(&run(get(K::Allreduce, "rdb"), 5, 0, 10, &[])),
        (10, 100)
    );
    // Ring on 4, 400 B: 2 × 3 steps × 4 ranks × 100 B = 2 (n − 1) B in all... per rank.
    assert_eq!(
        totals(&run(get(K::Allreduce, "lr"), 4, 0, 400, &[])),
        (24, 2400)
    );
    // Rabenseifner on 4, 400 B: per rank 200 + 100 then 100 + 200.
    assert_eq!(
        totals(&run(get(K::Allreduce, "rab_rdb"), 4, 0, 400, &[])),
        (16, 2400)
    );
    // Reduce (6 messages) + bcast (6 messages) on 7.
    assert_eq!(
        totals(&run(get(K::Allreduce, "redbcast"), 7, 0, 10, &[])),
        (12, 120)
    );
    // Pairwise reduce-scatter on 3 with blocks 1, 9, 17: each block from the 2 others.
    let counts = [1, 9, 17];
    assert_eq!(
        totals(&run(get(K::ReduceScatter, "mpich_pair"), 3, 0, 0, &counts)),
        (6, 54)
    );
    assert_eq!(totals(&run(get(K::Scan, "linear"), 4, 0, 5, &[])), (6, 30));
}

#[test]
fn barriers_by_hand() {
    // rdb on 5: 4 → 0 (4's sendrecv, 0's recv), then 0..4 in 2 rounds (8 messages), then
    // 0 → 4 (0's send, the receive half of 4's sendrecv).
    assert_eq!(totals(&run(get(K::Barrier, "rdb"), 5, 0, 0, &[])), (10, 0));
    // Dissemination on 5: 3 rounds × 5 ranks.
    assert_eq!(
        totals(&run(get(K::Barrier, "dissemination"), 5, 0, 0, &[])),
        (15, 0)
    );
    assert_eq!(
        totals(&run(get(K::Barrier, "ompi_basic_linear"), 5, 0, 0, &[])),
        (8, 0)
    );
}

#[test]
fn exchanges_by_hand() {
    for name in ["pair", "ring", "basic_linear"] {
        assert_eq!(
            totals(&run(get(K::Alltoall, name), 4, 0, 10, &[])),
            (12, 120),
            "{name}"
        );
    }
    // Bruck on 4: 2 steps, 2 blocks each, per rank.
    assert_eq!(
        totals(&run(get(K::Alltoall, "bruck"), 4, 0, 10, &[])),
        (8, 160)
    );
    // Alltoallv pair on 2 with counts [1, 9]: rank 0 sends counts[1] = 9 to 1, rank 1
    // sends counts[(1 + 0) % 2] = 9 to 0.
    assert_eq!(
        totals(&run(get(K::Alltoallv, "pair"), 2, 0, 0, &[1, 9])),
        (2, 18)
    );
    // Allgather on 4 of 10 B: every rank gets 30 B; ring and NTSLR in 3 messages per
    // rank, rdb and bruck in 2.
    for (name, msgs) in [("ring", 12), ("NTSLR", 12), ("rdb", 8), ("bruck", 8)] {
        assert_eq!(
            totals(&run(get(K::Allgather, name), 4, 0, 10, &[])),
            (msgs, 120),
            "{name}"
        );
    }
    // SimGrid's ring is direct: rank 0's steps on 3 ranks send to 1 then 2.
    let c = Call {
        rank: 0,
        n: 3,
        root: 0,
        bytes: 10,
        counts: &[],
        recv_counts: &[],
    };
    let s = get(K::Allgather, "ring").steps(&c);
    assert_eq!(
        (s[0], s[3]),
        (
            Step::Isend { to: 1, bytes: 10 },
            Step::Isend { to: 2, bytes: 10 }
        )
    );
    // Binomial gather on 5 of 10 B: 1→0, 3→2, 2→0 (20 B), 4→0.
    assert_eq!(
        totals(&run(get(K::Gather, "ompi_binomial"), 5, 0, 10, &[])),
        (4, 50)
    );
    assert_eq!(
        totals(&run(get(K::Scatter, "ompi_binomial"), 5, 0, 10, &[])),
        (4, 50)
    );
    assert_eq!(
        totals(&run(get(K::Gatherv, "linear"), 3, 1, 0, &[1, 9, 17])),
        (2, 18)
    );
}

/// The registry as a message-level program: the binomial broadcast of 8 ranks from 3 has
/// rank 3 sending to 7, 5, 4 and rank 4 receiving from 3 then sending to 6 and 5... as
/// MPICH's tree (relative ranks 0 → 4, 2, 1).
#[test]
fn the_registry_as_a_program() {
    use crate::program::Op;
    let p = program(get(K::Bcast, "binomial_tree"), 8, 3, 64, 0).unwrap();
    let sends = |r: usize| -> Vec<usize> {
        p.ranks[r]
            .iter()
            .filter_map(|o| match o {
                Op::Send { peer, .. } => Some(*peer),
                _ => None,
            })
            .collect()
    };
    assert_eq!(sends(3), vec![7, 5, 4]);
    assert_eq!(
        p.ranks[7][0],
        Op::Recv {
            peer: 3,
            bytes: 64,
            tag: 0
        }
    );
    assert_eq!(sends(7), vec![1, 0]);
    assert_eq!(p.messages(), (7, 7 * 64));
    // A sendrecv pattern: eager sends before the receives, so it cannot deadlock.
    let p = program(get(K::Allreduce, "rdb"), 4, 0, 8, 0).unwrap();
    assert!(
        matches!(p.ranks[0][0], Op::Send { peer: 1, .. })
            && matches!(p.ranks[0][1], Op::Recv { peer: 1, .. })
    );
    assert!(program(get(K::Alltoall, "pair"), 6, 0, 8, 0).is_err());
}
