//! CCCBrd, the paper's ILBM node algorithm for CCC(h,k), as reconstructed from the scan
//! (see `docs/bcast.md` for the reading of the garbled lines and how this version differs).
//!
//! Every cycle is entered exactly once, over an L link, and then covered by two waves going
//! round it in opposite directions (`B`: down, `F`: up) that stop where they meet (`hops`,
//! the paper's cnt1). The message carries the set `free` of cube dimensions (lateral
//! positions) that the entered cycle is responsible for (the paper's cnt2 generalised from a
//! count to a set): the cycle sends L at every position in `free`, and each child cycle gets
//! the dimensions of `free` whose L is sent *later* in this cycle. Cycles thus form a
//! binomial spanning tree of the cube of cycles: every cycle is reached exactly once, and
//! the cycle reached first gets the largest subtree, as the paper's principle "every cycle
//! hands the message on to another cycle as soon as possible" asks.
//!
//! | node / arrival | sends, in order |
//! |----------------|-----------------|
//! | source `(c,s)`, `free` = all k dimensions | its [`CyclePlan`]: `L` (if `s < k`), a `B` wave of `down` nodes, an `F` wave of `h−1−down` nodes, in the plan's order |
//! | entered over `L` with `free` | its [`CyclePlan`] for `(position, free)`, same form without `L` |
//! | wave node (from F: down wave, from B: up wave) at a position in `free` | `L` (with the child's set) and the wave's next hop, L first if the plan says so for this wave |
//! | wave node, other positions | the wave's next hop while `hops > 0` |
//!
//! A [`CyclePlan`] (send order, wave split, L-first flag per wave) is chosen by the node that
//! enters the cycle from a table that depends only on `(h, k)`; every node holds the same
//! table (it is part of the algorithm, like the paper's `mid` computed from `h` and `k`).
//! Wave nodes find the set of dimensions their child cycle gets in the same table (each entry
//! keeps the child set of every lateral of its plan), or, for a plan the table does not hold,
//! by replaying the cycle from the plan in the header.

use super::{NodeAlgorithm, NodeInfo};
use icn_topo::Port;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hasher for the plan table's small integer keys: the table is probed
/// hundreds of times per state while it is built, and SipHash dominated that cost.
#[derive(Default)]
struct KeyHasher(u64);

impl KeyHasher {
    fn add(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

type Table = HashMap<(usize, u32), Entry, BuildHasherDefault<KeyHasher>>;

/// The table's answer for one `(entry, free)`: the best plan, its subtree time and, so that
/// wave nodes need not replay the cycle, the child set of each of its laterals.
#[derive(Clone, Debug)]
struct Entry {
    time: usize,
    plan: CyclePlan,
    /// `(position, child set)` per lateral of the plan, in sending order.
    children: Vec<(usize, u32)>,
}

/// How a cycle is covered once entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CyclePlan {
    /// Position where the cycle was entered (the source's position in the source cycle).
    pub entry: usize,
    /// Order of the entry node's sends (`L` only if the entry position is in `free`).
    pub order: [Port; 3],
    /// Nodes covered by the down (`B`) wave; the up wave covers the other `h − 1 − down`.
    pub down: usize,
    /// Wave nodes with an L to send send it before forwarding the wave.
    pub down_lateral_first: bool,
    pub up_lateral_first: bool,
}

impl CyclePlan {
    /// The plan whose lateral-first choices are the two bits of `flags` (bit 0: down wave,
    /// bit 1: up wave), as the plan searches enumerate them.
    fn with_flags(entry: usize, order: [Port; 3], down: usize, flags: u8) -> Self {
        CyclePlan {
            entry,
            order,
            down,
            down_lateral_first: flags & 1 != 0,
            up_lateral_first: flags & 2 != 0,
        }
    }
}

/// The counters carried by a CCCBrd message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CccHeader {
    /// Dimensions the receiver's cycle is responsible for (bit `i` = dimension `i`).
    pub free: u32,
    /// Nodes the wave still covers after the receiver (cnt1); unused on L messages.
    pub hops: usize,
    /// The plan of the cycle the wave runs in; `None` on L messages (the entry node picks it).
    pub plan: Option<CyclePlan>,
}

/// One L send of a cycle's schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Lateral {
    position: usize,
    /// Step (after entry) in which the L transfer happens.
    at: usize,
}

/// The timing of a cycle covered by a plan, relative to the entry step.
#[derive(Clone, Debug)]
struct CycleSchedule {
    /// Laterals in the order they are sent (ties by position).
    /// `lat[..n]`: a fixed array, because the plan search replays millions of cycles and a
    /// heap vector per replay dominated its cost (`free` is a `u32`: at most 32 laterals).
    lat: [Lateral; 32],
    n: usize,
    /// Step at which the last node of the cycle is reached.
    covered: usize,
}

impl CycleSchedule {
    /// Laterals in the order they are sent (ties by position).
    fn laterals(&self) -> &[Lateral] {
        &self.lat[..self.n]
    }
}

/// CCCBrd for CCC(h,k).
#[derive(Clone, Debug)]
pub struct CccBrd {
    h: usize,
    k: usize,
    /// Best plan, its subtree time and its laterals' child sets for `(entry, free)`.
    table: Table,
}

const ORDERS: [[Port; 3]; 6] = {
    use Port::{B, F, L};
    [
        [L, B, F],
        [L, F, B],
        [B, L, F],
        [F, L, B],
        [B, F, L],
        [F, B, L],
    ]
};

impl CccBrd {
    /// Builds the algorithm (and its plan table) for CCC(h,k), `h ≥ k ≥ 1`, `k ≤ 20`.
    pub fn new(h: usize, k: usize) -> Self {
        Self::for_positions(h, k, 0..h)
    }

    /// The algorithm with the part of the plan table that broadcasts from sources at the
    /// given cycle positions need (every entry is the same as in [`CccBrd::new`]'s table:
    /// an entry depends only on its `(entry, free)`; states other sources would reach are
    /// left out). A one-source run on a large CCC builds a fraction of the table this way.
    pub fn for_positions(h: usize, k: usize, positions: impl IntoIterator<Item = usize>) -> Self {
        let mut brd = CccBrd {
            h,
            k,
            table: Table::default(),
        };
        let all = brd.all();
        for s in positions {
            if s < h {
                brd.best(s, all);
            }
        }
        brd
    }

    /// Predicted broadcast time from a source at position `s` (exact: the simulator agrees).
    pub fn predicted_time(&self, s: usize) -> Option<usize> {
        self.table.get(&(s, self.all())).map(|e| e.time)
    }

    /// The plan a source at position `s` uses.
    pub fn source_plan(&self, s: usize) -> Option<CyclePlan> {
        self.table.get(&(s, self.all())).map(|e| e.plan)
    }

    fn all(&self) -> u32 {
        if self.k >= 32 {
            u32::MAX
        } else {
            (1u32 << self.k) - 1
        }
    }

    fn step(&self, p: usize, down: bool) -> usize {
        // Branches, not `%`: this runs in the innermost loop of the plan search.
        if down {
            if p == 0 { self.h - 1 } else { p - 1 }
        } else if p + 1 == self.h {
            0
        } else {
            p + 1
        }
    }

    /// Replays one cycle under `plan` (pure arithmetic over its h nodes).
    fn schedule(&self, plan: &CyclePlan, free: u32) -> CycleSchedule {
        let h = self.h;
        let in_free = |p: usize| p < 32 && free & (1 << p) != 0;
        let mut sched = CycleSchedule {
            lat: [Lateral { position: 0, at: 0 }; 32],
            n: 0,
            covered: 0,
        };
        let mut covered = 0usize;
        let mut slot = 0usize;
        for port in plan.order {
            let t = match port {
                Port::L if in_free(plan.entry) => {
                    slot += 1;
                    sched.lat[sched.n] = Lateral {
                        position: plan.entry,
                        at: slot,
                    };
                    sched.n += 1;
                    continue;
                }
                Port::B if plan.down > 0 => {
                    slot += 1;
                    slot
                }
                Port::F if plan.down < h - 1 => {
                    slot += 1;
                    slot
                }
                _ => continue,
            };
            let is_down = port == Port::B;
            let count = if is_down {
                plan.down
            } else {
                h - 1 - plan.down
            };
            let first = if is_down {
                plan.down_lateral_first
            } else {
                plan.up_lateral_first
            };
            let (mut p, mut at) = (plan.entry, t);
            for left in (0..count).rev() {
                p = self.step(p, is_down);
                covered = covered.max(at);
                if in_free(p) {
                    let (l, next) = if first || left == 0 {
                        (at + 1, at + 2)
                    } else {
                        (at + 2, at + 1)
                    };
                    sched.lat[sched.n] = Lateral { position: p, at: l };
                    sched.n += 1;
                    at = next;
                } else {
                    at += 1;
                }
            }
        }
        sched.covered = covered;
        // (at, position) is unique per lateral: an unstable sort gives the same order.
        sched.lat[..sched.n].sort_unstable_by_key(|l| (l.at, l.position));
        sched
    }

    /// The child set of every lateral, in sending order (one backward pass).
    fn child_sets(sched: &CycleSchedule) -> Vec<(usize, u32)> {
        let mut out = vec![(0, 0); sched.n];
        let mut later = 0u32;
        for (j, l) in sched.laterals().iter().enumerate().rev() {
            out[j] = (l.position, later);
            later |= 1 << l.position;
        }
        out
    }

    /// Number of `(entry, free)` states in the plan table.
    pub fn table_len(&self) -> usize {
        self.table.len()
    }

    /// The set of dimensions the child entered by the lateral at `position` gets: those of
    /// the cycle's laterals sent after it.
    fn child_set(sched: &CycleSchedule, position: usize) -> u32 {
        let mut later = false;
        let mut set = 0u32;
        for l in sched.laterals() {
            if later {
                set |= 1 << l.position;
            }
            if l.position == position {
                later = true;
            }
        }
        set
    }

    /// Time of the subtree of a cycle covered by `plan` and the cycle's schedule; `None` as
    /// soon as the time is known to exceed `bound`.
    fn plan_time(
        &mut self,
        plan: &CyclePlan,
        free: u32,
        bound: usize,
    ) -> Option<(usize, CycleSchedule)> {
        // Any cycle needs ⌈(h−1)/2⌉ steps after its entry to cover its other nodes.
        let cycle_floor = (self.h - 1).div_ceil(2);
        let sched = self.schedule(plan, free);
        if sched.covered > bound {
            return None;
        }
        let mut time = sched.covered;
        // Child sets from the last lateral backwards: each gets those sent later.
        let mut later = [0u32; 32];
        for j in (1..sched.n).rev() {
            later[j - 1] = later[j] | 1 << sched.lat[j].position;
        }
        for (l, &child) in sched.laterals().iter().zip(&later) {
            if l.at + cycle_floor > bound {
                return None;
            }
            let (t, _) = self.best(l.position, child);
            time = time.max(l.at + t);
            if time > bound {
                return None;
            }
        }
        Some((time, sched))
    }

    /// Best plan for a cycle entered at `entry` responsible for `free`, and its subtree time.
    ///
    /// Plans are tried in a fixed order and the first with the smallest key wins. Two prunings
    /// leave the answer unchanged: an L-first flag is only tried set where the wave has a
    /// node that it affects (otherwise the plan equals its twin with the flag clear, tried
    /// before), and a plan is abandoned as soon as its time exceeds the best time so far
    /// (its key is larger whatever follows), which also spares the table the states that only
    /// losing plans lead to.
    fn best(&mut self, entry: usize, free: u32) -> (usize, CyclePlan) {
        if let Some(e) = self.table.get(&(entry, free)) {
            return (e.time, e.plan);
        }
        let h = self.h;
        let in_free = |p: usize| p < 32 && free & (1 << p) != 0;
        let mut best: Option<((usize, [u16; 32]), CyclePlan)> = None;
        let entry_lateral = in_free(entry);
        for order in ORDERS {
            if !entry_lateral && order[0] == Port::L {
                continue; // the L slot is skipped: [L,B,F] ≡ [B,L,F] ≡ [B,F,L]
            }
            if !entry_lateral && order[1] == Port::L && order[2] != Port::L {
                continue;
            }
            for down in 0..h {
                // Each wave of `a` nodes, started in send slot `s`, finishes no earlier than
                // s + a − 1: skip the split without replaying it when that exceeds the bound.
                let bound = best.as_ref().map_or(usize::MAX, |((t, _), _)| *t);
                let mut slot = 0;
                let mut floor = 0;
                for port in order {
                    let count = match port {
                        Port::L => usize::from(entry_lateral),
                        Port::B => down,
                        _ => h - 1 - down,
                    };
                    if count > 0 {
                        slot += 1;
                        if port != Port::L {
                            floor = floor.max(slot + count - 1);
                        }
                    }
                }
                if floor > bound {
                    continue;
                }
                // Does the flag of a wave change anything? Only at a node of the wave with
                // a lateral that is not the wave's last node.
                let down_matters = (1..down).any(|i| in_free((entry + h - i) % h));
                let up_matters = (1..h - 1 - down).any(|i| in_free((entry + i) % h));
                for flags in 0..4u8 {
                    if (flags & 1 != 0 && !down_matters) || (flags & 2 != 0 && !up_matters) {
                        continue;
                    }
                    let plan = CyclePlan::with_flags(entry, order, down, flags);
                    let bound = best.as_ref().map_or(usize::MAX, |((t, _), _)| *t);
                    let Some((time, sched)) = self.plan_time(&plan, free, bound) else {
                        continue;
                    };
                    // Among equally fast plans prefer the one handing the message to other
                    // cycles earliest, higher positions first (the paper's principle; it
                    // also gives Lemma 1's timing where that is compatible).
                    // Handover steps indexed by position, highest first (positions not in
                    // `free` stay 0 in every plan of this state, so they do not decide).
                    let mut handover = [0u16; 32];
                    for l in sched.laterals() {
                        handover[31 - l.position] = l.at as u16;
                    }
                    let key = (time, handover);
                    if best.as_ref().is_none_or(|(bk, _)| key < *bk) {
                        best = Some((key, plan));
                    }
                }
            }
        }
        let (time, plan) = best.map(|((t, _), p)| (t, p)).unwrap_or((
            0,
            CyclePlan {
                entry,
                order: ORDERS[0],
                down: 0,
                down_lateral_first: true,
                up_lateral_first: true,
            },
        ));
        let children = Self::child_sets(&self.schedule(&plan, free));
        self.table.insert(
            (entry, free),
            Entry {
                time,
                plan,
                children,
            },
        );
        (time, plan)
    }

    /// Plan for a cycle entered at `entry` with `free` (falls back to a plain two-wave plan
    /// for a state the table lacks, which cannot happen for headers the algorithm produced).
    fn plan_for(&self, entry: usize, free: u32) -> CyclePlan {
        self.table
            .get(&(entry, free))
            .map(|e| e.plan)
            .unwrap_or(CyclePlan {
                entry,
                order: ORDERS[0],
                down: (self.h - 1) / 2,
                down_lateral_first: true,
                up_lateral_first: true,
            })
    }

    /// The child set of the lateral at `position` of a cycle covered by `plan` with `free`:
    /// read from the table when the plan is the table's (always, for headers CCCBrd made),
    /// replayed otherwise.
    fn child_of(&self, plan: &CyclePlan, free: u32, position: usize) -> u32 {
        match self.table.get(&(plan.entry, free)) {
            Some(e) if e.plan == *plan => e
                .children
                .iter()
                .find(|c| c.0 == position)
                .map_or(0, |c| c.1),
            _ => Self::child_set(&self.schedule(plan, free), position),
        }
    }

    /// The entry node's sends under `plan`, appended to `out`.
    fn entry_sends(&self, plan: CyclePlan, free: u32, out: &mut Vec<(Port, CccHeader)>) {
        let up = self.h - 1 - plan.down;
        for port in plan.order {
            match port {
                Port::L if free & (1 << plan.entry) != 0 => {
                    let child = self.child_of(&plan, free, plan.entry);
                    out.push((
                        Port::L,
                        CccHeader {
                            free: child,
                            hops: 0,
                            plan: None,
                        },
                    ));
                }
                Port::B if plan.down > 0 => {
                    out.push((
                        Port::B,
                        CccHeader {
                            free,
                            hops: plan.down - 1,
                            plan: Some(plan),
                        },
                    ));
                }
                Port::F if up > 0 => out.push((
                    Port::F,
                    CccHeader {
                        free,
                        hops: up - 1,
                        plan: Some(plan),
                    },
                )),
                _ => {}
            }
        }
    }

    /// [`NodeAlgorithm::source`] into a caller's buffer (cleared first): no allocation once
    /// the buffer has grown, for the fast simulator of [`crate::verify`].
    pub fn source_into(&self, me: NodeInfo, out: &mut Vec<(Port, CccHeader)>) {
        out.clear();
        let free = self.all();
        self.entry_sends(self.plan_for(me.position, free), free, out);
    }

    /// [`NodeAlgorithm::receive`] into a caller's buffer (cleared first).
    pub fn receive_into(
        &self,
        me: NodeInfo,
        arrival: Port,
        hd: &CccHeader,
        out: &mut Vec<(Port, CccHeader)>,
    ) {
        out.clear();
        let p = me.position;
        let (onward, plan) = match (arrival, hd.plan) {
            (Port::L, _) => return self.entry_sends(self.plan_for(p, hd.free), hd.free, out),
            (Port::F, Some(plan)) => (Port::B, plan),
            (Port::B, Some(plan)) => (Port::F, plan),
            _ => return,
        };
        let first = if onward == Port::B {
            plan.down_lateral_first
        } else {
            plan.up_lateral_first
        };
        if hd.hops > 0 {
            out.push((
                onward,
                CccHeader {
                    free: hd.free,
                    hops: hd.hops - 1,
                    plan: Some(plan),
                },
            ));
        }
        if p < 32 && hd.free & (1 << p) != 0 {
            let l = (
                Port::L,
                CccHeader {
                    free: self.child_of(&plan, hd.free, p),
                    hops: 0,
                    plan: None,
                },
            );
            if first { out.insert(0, l) } else { out.push(l) }
        }
    }
}

impl NodeAlgorithm for CccBrd {
    type Header = CccHeader;

    fn source(&self, me: NodeInfo) -> Vec<(Port, CccHeader)> {
        let mut out = Vec::with_capacity(3);
        self.source_into(me, &mut out);
        out
    }

    fn receive(&self, me: NodeInfo, arrival: Port, hd: &CccHeader) -> Vec<(Port, CccHeader)> {
        let mut out = Vec::with_capacity(3);
        self.receive_into(me, arrival, hd, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plan_sends_l_at_exactly_its_free_positions_with_binomial_child_sets() {
        for (h, k) in [(3, 2), (4, 3), (6, 4), (7, 5), (8, 8)] {
            let brd = CccBrd::new(h, k);
            assert!(!brd.table.is_empty());
            for (&(entry, free), e) in &brd.table {
                let plan = e.plan;
                assert_eq!(plan.entry, entry);
                let sched = brd.schedule(&plan, free);
                let sent: u32 = sched.laterals().iter().map(|l| 1u32 << l.position).sum();
                assert_eq!(
                    sent, free,
                    "CCC({h},{k}) entry {entry}: L sends must be exactly `free`"
                );
                // The j-th lateral's child gets the positions of the later laterals.
                let m = sched.n;
                for (j, l) in sched.laterals().iter().enumerate() {
                    let child = CccBrd::child_set(&sched, l.position);
                    assert_eq!(e.children[j], (l.position, child));
                    assert_eq!(child.count_ones() as usize, m - 1 - j);
                    assert_eq!(child & (1 << l.position), 0);
                    assert_eq!(child & !free, 0);
                }
                // A wave starts by slot 3 and each node costs one step, plus one when it
                // sends its L first.
                assert!(sched.covered <= 2 + (h - 1) + free.count_ones() as usize);
            }
        }
    }

    /// The plan search without pruning (every flag, every plan evaluated in full), as it was
    /// written first: the pruned table must agree with it state by state.
    fn unpruned(
        brd: &CccBrd,
        entry: usize,
        free: u32,
        memo: &mut HashMap<(usize, u32), (usize, CyclePlan)>,
    ) -> (usize, CyclePlan) {
        if let Some(&v) = memo.get(&(entry, free)) {
            return v;
        }
        let mut best: Option<((usize, Vec<usize>), CyclePlan)> = None;
        let entry_lateral = free & (1 << entry) != 0;
        for order in ORDERS {
            if !entry_lateral && order[0] == Port::L {
                continue;
            }
            if !entry_lateral && order[1] == Port::L && order[2] != Port::L {
                continue;
            }
            for down in 0..brd.h {
                for flags in 0..4u8 {
                    let plan = CyclePlan::with_flags(entry, order, down, flags);
                    let sched = brd.schedule(&plan, free);
                    let mut time = sched.covered;
                    for l in sched.laterals() {
                        let child = CccBrd::child_set(&sched, l.position);
                        time = time.max(l.at + unpruned(brd, l.position, child, memo).0);
                    }
                    let mut handover: Vec<(usize, usize)> = sched
                        .laterals()
                        .iter()
                        .map(|l| (usize::MAX - l.position, l.at))
                        .collect();
                    handover.sort_unstable();
                    let key = (
                        time,
                        handover.into_iter().map(|(_, at)| at).collect::<Vec<_>>(),
                    );
                    if best.as_ref().is_none_or(|(bk, _)| key < *bk) {
                        best = Some((key, plan));
                    }
                }
            }
        }
        let v = best.map(|((t, _), p)| (t, p)).unwrap();
        memo.insert((entry, free), v);
        v
    }

    #[test]
    fn pruned_plan_table_equals_the_unpruned_search() {
        for (h, k) in [
            (2, 2),
            (3, 2),
            (5, 2),
            (4, 3),
            (7, 3),
            (5, 4),
            (8, 4),
            (7, 5),
            (9, 6),
        ] {
            let brd = CccBrd::new(h, k);
            let mut memo = HashMap::new();
            for (&(entry, free), e) in &brd.table {
                assert_eq!(
                    unpruned(&brd, entry, free, &mut memo),
                    (e.time, e.plan),
                    "CCC({h},{k}) entry {entry} free {free:b}"
                );
            }
            // The pruned table holds no more states than the full search reaches.
            let mut full = HashMap::new();
            for s in 0..h {
                unpruned(&brd, s, brd.all(), &mut full);
            }
            assert!(brd.table_len() <= full.len());
        }
    }

    #[test]
    fn source_at_k_minus_1_sends_l_first_as_in_lemma_1() {
        for (h, k) in [(4, 3), (6, 4), (9, 5)] {
            let brd = CccBrd::new(h, k);
            let sends = brd.source(NodeInfo { position: k - 1 });
            assert_eq!(sends[0].0, Port::L);
            // The first child cycle gets every dimension but k − 1.
            assert_eq!(sends[0].1.free, (1 << (k - 1)) - 1);
        }
    }

    #[test]
    fn leaf_cycle_entry_covers_the_cycle_with_two_waves() {
        // Entered over L with nothing left to hand on: the two waves cover h − 1 nodes.
        let brd = CccBrd::new(7, 3);
        let sends = brd.receive(
            NodeInfo { position: 1 },
            Port::L,
            &CccHeader {
                free: 0,
                hops: 0,
                plan: None,
            },
        );
        let covered: usize = sends.iter().map(|(_, h)| h.hops + 1).sum();
        assert_eq!(covered, 6);
        assert!(sends.iter().all(|(p, _)| *p != Port::L));
        // A wave node with hops = 0 and no lateral duty sends nothing.
        let plan = sends[0].1.plan;
        let last = brd.receive(
            NodeInfo { position: 5 },
            Port::F,
            &CccHeader {
                free: 0,
                hops: 0,
                plan,
            },
        );
        assert!(last.is_empty());
    }
}
