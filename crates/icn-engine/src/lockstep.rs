//! Conservative parallel simulation of one cycle-driven model, partitioned over threads.
//!
//! A network model is split into [`Partition`]s (contiguous ranges of routers, say). What one
//! partition does to another in cycle `t` — a flit landing, a credit returning — takes effect
//! at `t + d` with `d ≥ 1` (the link's latency, SST's *lookahead*), so within one cycle the
//! partitions are independent: each runs its cycle on its own thread, and between cycles the
//! messages they addressed to each other are exchanged. That is a barrier per cycle, which
//! pays when a cycle of one partition costs far more than the barrier (tens of microseconds
//! against a few hundred nanoseconds; `icnlab bench vc-par` measures both).
//!
//! **Determinism.** The exchange hands partition `q` the messages of partitions `0, 1, …` in
//! that order, and [`Lockstep::cycle`] returns the completions of partition 0, then 1, …: a
//! model whose partitions are contiguous ranges of its sequential index order, and whose
//! messages within a cycle commute (or are ordered by index), gives the sequential run's
//! results bit for bit at any partition count, whatever the threads' timing.
//!
//! **Threads.** Partition 0 runs on the caller's thread, every other one on a worker of its
//! own, created once. A worker spins for a short while waiting for the next cycle (the caller
//! spends a few microseconds between cycles injecting traffic and collecting completions),
//! then parks; a partition that panics is reported as an error, never a hang.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// `items` (routers, switches) split into `parts` contiguous ranges of nearly equal size, in
/// index order: the partitioning every model of this workspace uses, so that partition order is
/// the sequential index order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub items: usize,
    pub parts: usize,
}

impl Split {
    /// The first item of part `k` (`items` for `k = parts`).
    pub fn start(&self, k: usize) -> usize {
        k * self.items / self.parts
    }

    /// The items of part `k`.
    pub fn range(&self, k: usize) -> std::ops::Range<usize> {
        self.start(k)..self.start(k + 1)
    }

    /// The part holding item `i` (`i < items`).
    pub fn part_of(&self, i: usize) -> usize {
        // The last part starting at or before `i` (starts grow with the part).
        let (mut lo, mut hi) = (0, self.parts);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if self.start(mid) <= i {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// One part of a partitioned model: it simulates one cycle at a time.
pub trait Partition: Send + 'static {
    /// What one partition sends another (delivered before the receiver's next cycle).
    type Message: Send + 'static;
    /// What a cycle completes (a delivered packet, say), collected in partition order.
    type Done: Send + 'static;
    /// The model's error.
    type Error: Send + 'static;

    /// Runs one cycle: first takes in `inbox` (messages the caller posted, then those sent to
    /// this partition during the previous cycle, in sender order, its own included), then puts messages for partition `q` in `outbox[q]`
    /// and completions in `done`.
    fn cycle(
        &mut self,
        inbox: &mut Vec<Self::Message>,
        outbox: &mut [Vec<Self::Message>],
        done: &mut Vec<Self::Done>,
    ) -> Result<(), Self::Error>;

    /// The error to report when this partition's cycle panicked (a bug, but never a hang).
    fn panicked(why: String) -> Self::Error;
}

/// A partition with its mailboxes and the outcome of its last cycle.
struct Cell<P: Partition> {
    part: P,
    inbox: Vec<P::Message>,
    outbox: Vec<Vec<P::Message>>,
    done: Vec<P::Done>,
    result: Result<(), P::Error>,
}

impl<P: Partition> Cell<P> {
    fn run(&mut self) {
        let Cell {
            part,
            inbox,
            outbox,
            done,
            result,
        } = self;
        *result = match catch_unwind(AssertUnwindSafe(|| part.cycle(inbox, outbox, done))) {
            Ok(r) => r,
            Err(payload) => Err(P::panicked(panic_text(&payload))),
        };
        inbox.clear();
    }
}

fn panic_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a partition panicked".into())
}

/// What the caller and the workers share to agree on cycles.
struct Clock {
    /// Incremented by the caller to start a cycle; `u64::MAX` tells the workers to stop.
    started: AtomicU64,
    /// Per worker: the last cycle it finished.
    finished: Vec<AtomicU64>,
    stop: AtomicBool,
}

/// Spins (`spin_loop`) this many rounds before yielding, and yields this many before parking:
/// a cycle of a useful partition takes tens of microseconds, so a waiting worker is woken
/// within one or two hundred nanoseconds while the caller is between cycles, and sleeps when
/// the caller is away for longer (between runs).
const SPINS: u32 = 1 << 10;
const YIELDS: u32 = 64;

/// A model partitioned over threads, advanced one cycle at a time (see the module doc).
pub struct Lockstep<P: Partition> {
    cells: Arc<Vec<Mutex<Cell<P>>>>,
    clock: Arc<Clock>,
    workers: Vec<JoinHandle<()>>,
    cycles: u64,
    /// Per partition: messages from the caller for its next cycle ([`Lockstep::post`]).
    posted: Vec<Vec<P::Message>>,
}

impl<P: Partition> Lockstep<P> {
    /// Runs `parts` in lock step, partition 0 on the caller's thread and one thread per other.
    pub fn new(parts: Vec<P>) -> Lockstep<P> {
        let n = parts.len();
        assert!(n > 0, "a partitioned model has at least one partition");
        let cells: Arc<Vec<Mutex<Cell<P>>>> = Arc::new(
            parts
                .into_iter()
                .map(|part| {
                    Mutex::new(Cell {
                        part,
                        inbox: Vec::new(),
                        outbox: (0..n).map(|_| Vec::new()).collect(),
                        done: Vec::new(),
                        result: Ok(()),
                    })
                })
                .collect(),
        );
        let clock = Arc::new(Clock {
            started: AtomicU64::new(0),
            finished: (1..n).map(|_| AtomicU64::new(0)).collect(),
            stop: AtomicBool::new(false),
        });
        let workers = (1..n)
            .map(|i| {
                let (cells, clock) = (cells.clone(), clock.clone());
                std::thread::Builder::new()
                    .name(format!("partition-{i}"))
                    .spawn(move || worker(i, &cells, &clock))
                    .expect("spawn a partition thread")
            })
            .collect();
        Lockstep {
            cells,
            clock,
            workers,
            cycles: 0,
            posted: (0..n).map(|_| Vec::new()).collect(),
        }
    }

    /// The number of partitions.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Never true (there is at least one partition); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Partition `i`, for the caller to read or change between cycles.
    pub fn part(&self, i: usize) -> PartGuard<'_, P> {
        PartGuard(lock(&self.cells[i]))
    }

    /// Leaves `m` for partition `i`, which takes it in at the start of its next cycle before
    /// the messages of the partitions: cheaper than locking the partition to change it, and
    /// the work of taking it in is done in parallel.
    pub fn post(&mut self, i: usize, m: P::Message) {
        self.posted[i].push(m);
    }

    /// Runs one cycle of every partition, in parallel, exchanges their messages and appends
    /// their completions to `done` in partition order. The first error, in partition order,
    /// is returned (after every partition finished its cycle).
    pub fn cycle(&mut self, done: &mut Vec<P::Done>) -> Result<(), P::Error> {
        let n = self.cells.len();
        self.cycles += 1;
        for (cell, posted) in self.cells.iter().zip(&mut self.posted) {
            if !posted.is_empty() {
                let mut cell = lock(cell);
                // Posted first, then what the partitions sent (already in the inbox).
                posted.append(&mut cell.inbox);
                std::mem::swap(posted, &mut cell.inbox);
            }
        }
        if n > 1 {
            self.clock.started.store(self.cycles, Ordering::Release);
            for w in &self.workers {
                w.thread().unpark();
            }
        }
        lock(&self.cells[0]).run();
        for (k, f) in self.clock.finished.iter().enumerate() {
            wait_until(
                || f.load(Ordering::Acquire) == self.cycles,
                || {
                    if self.workers[k].is_finished() {
                        // Only a bug in this module could end a worker early; do not hang on it.
                        panic!("partition worker {} ended", k + 1);
                    }
                },
            );
        }
        // Every worker is idle until the next `started`: exchange and collect.
        let mut guards: Vec<_> = self.cells.iter().map(lock).collect();
        let mut first_err = None;
        for cell in guards.iter_mut() {
            done.append(&mut cell.done);
            if let Err(e) = std::mem::replace(&mut cell.result, Ok(()))
                && first_err.is_none()
            {
                first_err = Some(e);
            }
        }
        for p in 0..n {
            for q in 0..n {
                if !guards[p].outbox[q].is_empty() {
                    let mut msgs = std::mem::take(&mut guards[p].outbox[q]);
                    guards[q].inbox.append(&mut msgs);
                    // Give the (now empty) buffer back to keep its capacity.
                    guards[p].outbox[q] = msgs;
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl<P: Partition> Drop for Lockstep<P> {
    fn drop(&mut self) {
        self.clock.stop.store(true, Ordering::Release);
        for w in &self.workers {
            w.thread().unpark();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// Exclusive access to one partition between cycles.
pub struct PartGuard<'a, P: Partition>(MutexGuard<'a, Cell<P>>);

impl<P: Partition> std::ops::Deref for PartGuard<'_, P> {
    type Target = P;
    fn deref(&self) -> &P {
        &self.0.part
    }
}

impl<P: Partition> std::ops::DerefMut for PartGuard<'_, P> {
    fn deref_mut(&mut self) -> &mut P {
        &mut self.0.part
    }
}

/// A poisoned lock only means a partition panicked inside `run`, which caught it already.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn wait_until(ready: impl Fn() -> bool, check: impl Fn()) {
    let mut round = 0u32;
    while !ready() {
        round += 1;
        if round < SPINS {
            std::hint::spin_loop();
        } else if round < SPINS + YIELDS {
            std::thread::yield_now();
        } else {
            check();
            std::thread::park_timeout(Duration::from_micros(200));
        }
    }
}

fn worker<P: Partition>(i: usize, cells: &[Mutex<Cell<P>>], clock: &Clock) {
    let mut seen = 0u64;
    loop {
        wait_until(
            || clock.stop.load(Ordering::Acquire) || clock.started.load(Ordering::Acquire) > seen,
            || {},
        );
        if clock.stop.load(Ordering::Acquire) {
            return;
        }
        seen = clock.started.load(Ordering::Acquire);
        lock(&cells[i]).run();
        clock.finished[i - 1].store(seen, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring of counters: each partition holds `k` cells; every cycle each cell adds its left
    /// neighbour's previous value (a message when the neighbour is in another partition).
    struct Ring {
        first: usize,
        vals: Vec<u64>,
        total: usize,
        parts: usize,
        /// The value of the cell left of `first`, received last cycle.
        left: u64,
        cycle: u64,
        fail_at: Option<u64>,
    }

    impl Partition for Ring {
        type Message = u64;
        type Done = (usize, u64);
        type Error = String;

        fn cycle(
            &mut self,
            inbox: &mut Vec<u64>,
            outbox: &mut [Vec<u64>],
            done: &mut Vec<(usize, u64)>,
        ) -> Result<(), String> {
            self.cycle += 1;
            if self.fail_at == Some(self.cycle) {
                panic!("boom in cycle {}", self.cycle);
            }
            if let Some(&v) = inbox.last() {
                self.left = v;
            }
            let mut prev = self.left;
            for v in &mut self.vals {
                let old = *v;
                *v = v.wrapping_mul(31).wrapping_add(prev);
                prev = old;
            }
            // The left neighbour of the next partition's first cell, as it starts next cycle.
            let last = *self.vals.last().unwrap();
            let k = self.vals.len();
            let right = (self.first + k) % self.total / k % self.parts;
            outbox[right].push(last);
            done.push((self.first, self.vals[0]));
            Ok(())
        }

        fn panicked(why: String) -> String {
            why
        }
    }

    fn run(parts: usize, cycles: u64, fail_at: Option<u64>) -> Result<Vec<(usize, u64)>, String> {
        let total = 12;
        let k = total / parts;
        let ring: Vec<Ring> = (0..parts)
            .map(|p| Ring {
                first: p * k,
                vals: (p * k..(p + 1) * k).map(|i| i as u64 + 1).collect(),
                total,
                parts,
                left: ((p * k + total - 1) % total) as u64 + 1,
                cycle: 0,
                fail_at: if p == parts - 1 { fail_at } else { None },
            })
            .collect();
        let mut ls = Lockstep::new(ring);
        let mut done = Vec::new();
        for _ in 0..cycles {
            ls.cycle(&mut done)?;
        }
        Ok(done)
    }

    /// The one-partition run is the sequential model; 2, 3, 4 and 6 partitions must give
    /// the same values in the same order (completions in partition order per cycle).
    #[test]
    fn any_partition_count_gives_the_sequential_values() {
        let one: Vec<u64> = run(1, 50, None).unwrap().iter().map(|d| d.1).collect();
        for parts in [2, 3, 4, 6] {
            let got = run(parts, 50, None).unwrap();
            assert_eq!(got.len(), 50 * parts);
            // Partition 0's first cell is cell 0 in both runs.
            let firsts: Vec<u64> = got.iter().filter(|d| d.0 == 0).map(|d| d.1).collect();
            assert_eq!(firsts, one, "{parts} partitions");
            for w in got.chunks(parts) {
                let order: Vec<usize> = w.iter().map(|d| d.0).collect();
                assert!(order.windows(2).all(|p| p[0] < p[1]), "partition order");
            }
        }
    }

    #[test]
    fn a_split_covers_every_item_once_in_order() {
        for items in 1..40 {
            for parts in 1..=items {
                let split = Split { items, parts };
                let mut next = 0;
                for k in 0..parts {
                    let r = split.range(k);
                    assert_eq!(r.start, next);
                    assert!(!r.is_empty(), "{items} items in {parts} parts");
                    for i in r.clone() {
                        assert_eq!(split.part_of(i), k);
                    }
                    next = r.end;
                }
                assert_eq!(next, items);
            }
        }
    }

    #[test]
    fn a_panicking_partition_is_an_error_not_a_hang() {
        let e = run(3, 50, Some(7)).unwrap_err();
        assert!(e.contains("boom in cycle 7"), "{e}");
        let e = run(1, 50, Some(3)).unwrap_err();
        assert!(e.contains("boom in cycle 3"), "{e}");
    }
}
