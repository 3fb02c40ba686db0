//! CCCBrd on large CCC(h,k): a simulator specialised to the CCC and the all-sources check.
//!
//! [`ccc_fast`] runs CCCBrd's node algorithm ([`CccBrd::source_into`],
//! [`CccBrd::receive_into`]) under the rules of [`crate::sim::simulate`] with
//! [`Tiebreak::LowestSender`](crate::sim::Tiebreak), but without a [`Graph`]:
//!
//! * neighbours by arithmetic — node `(c,p)` is `c·h + p` (a `u32`), `F` leads to `(c,p+1)`
//!   and arrives on `B`, `B` the reverse, `L` to `(c⊕2^p, p)` for `p < k` (a send over an
//!   absent L port is dropped without using a step, as in the generic simulator);
//! * a node's sends occupy the (at most 3) steps after its reception, so transfers wait in a
//!   ring of 4 step buckets that are cleared and reused: no allocation per step or per node
//!   once the buckets have grown;
//! * first-receipt steps in one `Vec<u32>`; no names, no per-node queues.
//!
//! Every node is touched once per message it receives: O(n) for CCCBrd, which sends n − 1
//! messages. `tests` checks it against the generic simulator for every source of many sizes
//! (same first-receipt steps, messages, redundant receptions, and schedule).
//!
//! [`ccc_all_sources`] runs every source of CCC(h,k) in parallel (rayon), validates each
//! schedule with the independent [`check_schedule`], checks the time against the plan
//! table's prediction, and returns the results in source order whatever the thread count.

use crate::ilbm::NodeInfo;
use crate::ilbm::ccc::{CccBrd, CccHeader};
use crate::sim::Transmission;
use crate::validate::check_schedule;
use icn_topo::{Graph, Port};
use rayon::prelude::*;

/// Not yet informed.
pub const UNREACHED: u32 = u32::MAX;

/// What a fast run did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FastOutcome {
    /// First-receipt step per node (`c·h + p`); [`UNREACHED`] if never informed.
    pub first_receipt: Vec<u32>,
    /// Transfers made.
    pub messages: u64,
    /// Receptions not kept.
    pub redundant: u64,
    /// Uninformed nodes that received several messages in one step (the lowest sender was
    /// kept; under a random tie-break the generic simulator may choose another). Always 0
    /// for CCCBrd, which enters every node once.
    pub ties: u64,
    /// Every transfer in step order, if recording was asked for (within a step, in the order
    /// the simulator visited the senders, which need not be the generic simulator's).
    pub schedule: Option<Vec<Transmission>>,
}

impl FastOutcome {
    /// Broadcast time; `None` if some node was never informed.
    pub fn time(&self) -> Option<u32> {
        self.first_receipt
            .iter()
            .try_fold(0, |acc, &t| (t != UNREACHED).then(|| acc.max(t)))
    }
}

/// One transfer waiting in a step bucket.
#[derive(Clone, Copy, Debug)]
struct Transfer {
    from: u32,
    to: u32,
    port: Port,
    arrival: Port,
    header: CccHeader,
}

/// Runs CCCBrd (`brd`, built for CCC(h,k)) from `(c, p)`; `record` keeps the schedule.
pub fn ccc_fast(
    brd: &CccBrd,
    h: usize,
    k: usize,
    source: (usize, usize),
    record: bool,
) -> FastOutcome {
    let n = h << k;
    let mut first = vec![UNREACHED; n];
    // Index (in the current bucket) of the transfer a node informed in this step keeps.
    let mut kept = vec![0u32; n];
    let mut buckets: [Vec<Transfer>; 4] = Default::default();
    let mut sends: Vec<(Port, CccHeader)> = Vec::with_capacity(4);
    let mut newly: Vec<u32> = Vec::new();
    let mut out = FastOutcome {
        first_receipt: Vec::new(),
        messages: 0,
        redundant: 0,
        ties: 0,
        schedule: record.then(Vec::new),
    };
    // Queue `sends` of node `v` informed at `step` into the next steps' buckets, skipping
    // ports the node lacks (they cost no step).
    let enqueue =
        |buckets: &mut [Vec<Transfer>; 4], sends: &[(Port, CccHeader)], v: u32, step: u32| {
            let (c, p) = (v as usize / h, v as usize % h);
            let mut slot = step;
            for &(port, header) in sends {
                let (to, arrival) = match port {
                    Port::F => (c * h + if p + 1 == h { 0 } else { p + 1 }, Port::B),
                    Port::B => (c * h + if p == 0 { h - 1 } else { p - 1 }, Port::F),
                    Port::L if p < k => ((c ^ (1 << p)) * h + p, Port::L),
                    _ => continue,
                };
                slot += 1;
                buckets[slot as usize % 4].push(Transfer {
                    from: v,
                    to: to as u32,
                    port,
                    arrival,
                    header,
                });
            }
        };
    let (sc, sp) = source;
    let s = (sc * h + sp) as u32;
    first[s as usize] = 0;
    brd.source_into(NodeInfo { position: sp }, &mut sends);
    enqueue(&mut buckets, &sends, s, 0);
    let mut step = 0u32;
    while buckets.iter().any(|b| !b.is_empty()) {
        step += 1;
        let now = std::mem::take(&mut buckets[step as usize % 4]);
        for (i, t) in now.iter().enumerate() {
            out.messages += 1;
            if let Some(sched) = &mut out.schedule {
                sched.push(Transmission {
                    step,
                    from: t.from as usize,
                    to: t.to as usize,
                    port: t.port,
                });
            }
            let v = t.to as usize;
            if first[v] == UNREACHED {
                first[v] = step;
                kept[v] = i as u32;
                newly.push(t.to);
            } else {
                out.redundant += 1;
                // A second arrival in the same step: keep the lowest (sender, arrival port).
                if first[v] == step {
                    out.ties += 1;
                    let prev = &now[kept[v] as usize];
                    if (t.from, t.arrival) < (prev.from, prev.arrival) {
                        kept[v] = i as u32;
                    }
                }
            }
        }
        for &v in &newly {
            let t = &now[kept[v as usize] as usize];
            let info = NodeInfo {
                position: v as usize % h,
            };
            brd.receive_into(info, t.arrival, &t.header, &mut sends);
            enqueue(&mut buckets, &sends, v, step);
        }
        newly.clear();
        let mut now = now;
        now.clear();
        buckets[step as usize % 4] = now;
    }
    out.first_receipt = first;
    out
}

/// The generic simulator's record of a fast run with a recorded schedule: per-node sends and
/// redundant receptions are counted from the schedule. `None` if the run had ties (a random
/// tie-break could have chosen differently: use the generic simulator) or kept no schedule.
pub fn to_outcome(o: &FastOutcome, source: usize) -> Option<crate::sim::Outcome> {
    if o.ties > 0 {
        return None;
    }
    let schedule = o.schedule.clone()?;
    let n = o.first_receipt.len();
    let mut sends = vec![0u32; n];
    let mut received = vec![0u32; n];
    for t in &schedule {
        sends[t.from] += 1;
        received[t.to] += 1;
    }
    let first_receipt: Vec<Option<u32>> = o
        .first_receipt
        .iter()
        .map(|&t| (t != UNREACHED).then_some(t))
        .collect();
    // Every informed node but the source kept exactly one of its receptions.
    let redundant = (0..n)
        .map(|v| received[v] - u32::from(v != source && first_receipt[v].is_some()))
        .collect();
    Some(crate::sim::Outcome {
        source,
        first_receipt,
        sends,
        redundant,
        schedule,
    })
}

/// One source of an all-sources check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceCheck {
    pub source: usize,
    pub time: u32,
    pub messages: u64,
}

/// Runs CCCBrd from every node of `g` (a CCC) in parallel and checks each run: schedule legal
/// ([`check_schedule`], which also replays the first-receipt steps), every node informed,
/// time equal to the plan table's prediction. Results in source order; the error names the
/// first failing source in source order, so the answer does not depend on the threads.
pub fn ccc_all_sources(g: &Graph, brd: &CccBrd) -> Result<Vec<SourceCheck>, String> {
    let Some((h, k)) = g.ccc_params() else {
        return Err("ccc_all_sources: not a CCC".into());
    };
    let k = k as usize;
    let results: Vec<Result<SourceCheck, String>> = (0..g.len())
        .into_par_iter()
        .map(|s| {
            let o = ccc_fast(brd, h, k, (s / h, s % h), true);
            let claimed: Vec<Option<u32>> = o
                .first_receipt
                .iter()
                .map(|&t| (t != UNREACHED).then_some(t))
                .collect();
            let sched = o.schedule.as_deref().unwrap_or(&[]);
            check_schedule(g, s, sched, Some(&claimed))
                .map_err(|v| format!("CCC({h},{k}) from {}: {v}", g.name(s)))?;
            let time = o.time().ok_or_else(|| {
                format!("CCC({h},{k}) from {}: some node never informed", g.name(s))
            })?;
            if brd.predicted_time(s % h) != Some(time as usize) {
                return Err(format!(
                    "CCC({h},{k}) from {}: {time} steps, plan table predicts {:?}",
                    g.name(s),
                    brd.predicted_time(s % h)
                ));
            }
            Ok(SourceCheck {
                source: s,
                time,
                messages: o.messages,
            })
        })
        .collect();
    results.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ilbm::Ilbm;
    use crate::sim::{Tiebreak, simulate};
    use icn_topo::build::ccc;

    #[test]
    fn fast_simulator_equals_the_generic_one_for_every_source() {
        for k in 1..=4usize {
            for h in k.max(2)..=k + 4 {
                let g = ccc(h, k as u32).unwrap();
                let brd = CccBrd::new(h, k);
                for s in 0..g.len() {
                    let o = simulate(&g, s, &mut Ilbm(&brd), Tiebreak::LowestSender);
                    let f = ccc_fast(&brd, h, k, (s / h, s % h), true);
                    let first: Vec<Option<u32>> = f
                        .first_receipt
                        .iter()
                        .map(|&t| (t != UNREACHED).then_some(t))
                        .collect();
                    assert_eq!(first, o.first_receipt, "CCC({h},{k}) from {s}");
                    assert_eq!(f.messages, o.messages());
                    assert_eq!(f.redundant, o.redundant_total());
                    let mut sched = o.schedule.clone();
                    sched.sort_by_key(|t| (t.step, t.from, t.to));
                    let mut fast = f.schedule.clone().unwrap();
                    fast.sort_by_key(|t| (t.step, t.from, t.to));
                    assert_eq!(fast, sched);
                    assert_eq!(f.time(), o.time());
                    assert_eq!(f.ties, 0);
                    // The conversion gives the generic record, schedule order within a step aside.
                    let mut c = to_outcome(&f, s).unwrap();
                    c.schedule.sort_by_key(|t| (t.step, t.from, t.to));
                    let mut o = o;
                    o.schedule = sched;
                    assert_eq!(c, o);
                }
            }
        }
    }

    #[test]
    fn all_sources_in_source_order_and_thread_count_independent() {
        let g = ccc(5, 3).unwrap();
        let brd = CccBrd::new(5, 3);
        let all = ccc_all_sources(&g, &brd).unwrap();
        assert_eq!(all.len(), 40);
        assert!(all.iter().enumerate().all(|(i, r)| r.source == i));
        // CCCBrd: n − 1 messages; CCC(5,3) worst 9 = Theorem 1 (docs/bcast.md §4).
        assert!(all.iter().all(|r| r.messages == 39));
        assert_eq!(all.iter().map(|r| r.time).max(), Some(9));
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert_eq!(one.install(|| ccc_all_sources(&g, &brd)).unwrap(), all);
        // Not a CCC: a clear error.
        let q = icn_topo::build::hypercube(3).unwrap();
        assert!(ccc_all_sources(&q, &brd).unwrap_err().contains("not a CCC"));
    }

    #[test]
    fn a_partial_plan_table_broadcasts_like_the_full_one() {
        let (h, k) = (9, 6);
        let full = CccBrd::new(h, k);
        for p in [0, k - 1, h - 1] {
            let part = CccBrd::for_positions(h, k, [p]);
            assert!(part.table_len() < full.table_len());
            assert_eq!(
                ccc_fast(&part, h, k, (5, p), false),
                ccc_fast(&full, h, k, (5, p), false)
            );
        }
    }
}
