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
//! **Threads.** Partition 0 (the first of this rank's block, when spread over ranks) runs on
//! the caller's thread, every other one on a worker of its own, created once. A worker spins for a short while waiting for the next cycle (the caller
//! spends a few microseconds between cycles injecting traffic and collecting completions),
//! then parks; a partition that panics is reported as an error, never a hang.
//!
//! **Ranks.** The same partitions can be spread over the processes of an MPI job
//! ([`Lockstep::spread`]): the model has `ranks × threads` partitions, rank `r` holds block `r`
//! of them ([`Split`]) on its threads, and after every cycle each rank's messages for other
//! ranks' partitions, its completions, its first error and each partition's
//! [`Partition::last_active`] go to every rank through one [`Exchange::all_gather`]. Every
//! rank then fills its inboxes in sender-partition order and returns the completions of all
//! partitions in partition order — exactly what one process does — so the caller (the traffic
//! driver, its statistics) runs replicated and identical on every rank, and results stay bit
//! for bit those of one process at any rank count. Queries that need other partitions' state
//! go through [`Lockstep::gather`], which every rank calls at the same point.

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex, MutexGuard};
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
    /// `items` in `parts` parts, checked for part `k` as the `threads` key: every part holds
    /// one item at least. `noun` names an item for the message ("router", "switch").
    pub fn checked(
        items: usize,
        parts: usize,
        k: usize,
        noun: &str,
    ) -> Result<Split, crate::Invalid> {
        crate::Invalid::check(
            (1..=items).contains(&parts) && k < parts,
            "threads",
            &format!("1 ..= {items} (one {noun} per thread at least)"),
            parts,
        )?;
        Ok(Split { items, parts })
    }

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

    /// The last cycle this partition moved anything (the watchdog's figure,
    /// [`Lockstep::last_active`]); shared with every rank after each cycle of a spread model.
    fn last_active(&self) -> u64;
}

/// How the ranks of a spread model ([`Lockstep::spread`]) reach each other: MPI in icnlab's
/// `--features mpi` builds, [`ThreadRanks`] in tests. Every rank must call [`Exchange::all_gather`]
/// the same number of times, in the same order.
///
/// One collective, an all-gather of bytes, serves messages, completions, errors and queries
/// alike: simple, and cheap at the few ranks of a workstation or a small cluster job, where the
/// latency of the collective dominates. Every rank receives every rank's messages, though, so
/// at many ranks an all-to-all with per-destination counts (`MPI_Alltoallv`) is the better
/// choice: each rank would then receive only what its partitions need.
pub trait Exchange: Send + Sync {
    /// This rank, `0..size`.
    fn rank(&self) -> usize;
    /// The number of ranks.
    fn size(&self) -> usize;
    /// Every rank's `mine`, in rank order (this rank's included).
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>>;
}

impl std::fmt::Debug for dyn Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Exchange(rank {} of {})", self.rank(), self.size())
    }
}

/// Ranks that are threads of one process (one [`ThreadRanks`] per thread): the distributed
/// path without MPI, for tests.
pub struct ThreadRanks {
    rank: usize,
    shared: Arc<(Mutex<Vec<Vec<u8>>>, Barrier)>,
}

impl ThreadRanks {
    /// `size` ranks, to be handed to one thread each.
    pub fn new(size: usize) -> Vec<ThreadRanks> {
        let shared = Arc::new((Mutex::new(vec![Vec::new(); size]), Barrier::new(size)));
        (0..size)
            .map(|rank| ThreadRanks {
                rank,
                shared: shared.clone(),
            })
            .collect()
    }
}

impl Exchange for ThreadRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        lock(&self.shared.0).len()
    }

    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let (slots, barrier) = &*self.shared;
        lock(slots)[self.rank] = mine.to_vec();
        barrier.wait();
        let all = lock(slots).clone();
        // Nobody writes the next round's bytes before everyone has read this one's.
        barrier.wait();
        all
    }
}

/// What one partition of a spread model tells every rank after a cycle.
#[derive(Serialize, Deserialize)]
struct Report<R, D, L> {
    result: R,
    done: D,
    last_active: u64,
    /// Messages for partitions of other ranks: (global partition, its messages), ascending.
    out: Vec<(u32, L)>,
}

/// A [`Report`] as sent (borrowing the partition's buffers) and as received.
type ReportOut<'a, P> = Report<
    &'a Result<(), <P as Partition>::Error>,
    &'a [<P as Partition>::Done],
    &'a [<P as Partition>::Message],
>;
type ReportIn<P> = Report<
    Result<(), <P as Partition>::Error>,
    Vec<<P as Partition>::Done>,
    Vec<<P as Partition>::Message>,
>;

/// Reads a rank's reports (or says why they are unreadable).
type Decode<P> = fn(&[u8]) -> Result<Vec<ReportIn<P>>, String>;

/// This rank's place in a spread model, and the byte format of its reports (functions made
/// where the serde bounds hold, so that [`Partition`] itself needs none).
struct Spread<P: Partition> {
    exchange: Arc<dyn Exchange>,
    /// Global partitions over ranks.
    ranks: Split,
    /// Per global partition: [`Partition::last_active`] after the last cycle.
    last_active: Vec<u64>,
    encode: fn(&[ReportOut<'_, P>]) -> Vec<u8>,
    decode: Decode<P>,
}

fn encode_reports<P: Partition>(reports: &[ReportOut<'_, P>]) -> Vec<u8>
where
    P::Message: Serialize,
    P::Done: Serialize,
    P::Error: Serialize,
{
    postcard::to_allocvec(reports).expect("in-memory serialization does not fail")
}

fn decode_reports<P: Partition>(bytes: &[u8]) -> Result<Vec<ReportIn<P>>, String>
where
    P::Message: DeserializeOwned,
    P::Done: DeserializeOwned,
    P::Error: DeserializeOwned,
{
    postcard::from_bytes(bytes).map_err(|e| e.to_string())
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

/// A model partitioned over threads, advanced one cycle at a time (see the module doc);
/// possibly a block of the partitions of a model spread over ranks.
pub struct Lockstep<P: Partition> {
    /// This rank's partitions (all of them in one process).
    cells: Arc<Vec<Mutex<Cell<P>>>>,
    clock: Arc<Clock>,
    workers: Vec<JoinHandle<()>>,
    cycles: u64,
    /// Per local partition: messages from the caller for its next cycle ([`Lockstep::post`]).
    posted: Vec<Vec<P::Message>>,
    /// The global index of `cells[0]`.
    first: usize,
    /// Partitions over all ranks.
    total: usize,
    /// `Some` when the model is spread over ranks.
    spread: Option<Spread<P>>,
}

impl<P: Partition> Lockstep<P> {
    /// Runs `parts` in lock step, partition 0 on the caller's thread and one thread per other.
    pub fn new(parts: Vec<P>) -> Lockstep<P> {
        let n = parts.len();
        Self::start(parts, 0, n, None)
    }

    /// Block `exchange.rank()` of a model of `total` partitions spread over
    /// `exchange.size()` ranks (`Split { items: total, parts: ranks }`): `parts` are this
    /// rank's, in order. Every rank must build its block and then call the same methods in the
    /// same order ([`Lockstep::cycle`], [`Lockstep::gather`] are collective).
    pub fn spread(parts: Vec<P>, total: usize, exchange: Arc<dyn Exchange>) -> Lockstep<P>
    where
        P::Message: Serialize + DeserializeOwned,
        P::Done: Serialize + DeserializeOwned,
        P::Error: Serialize + DeserializeOwned,
    {
        let ranks = Self::rank_split(total, exchange.size());
        let here = ranks.range(exchange.rank());
        assert_eq!(
            parts.len(),
            here.len(),
            "a rank builds its block of partitions"
        );
        let spread = Spread {
            exchange,
            ranks,
            last_active: vec![0; total],
            encode: encode_reports::<P>,
            decode: decode_reports::<P>,
        };
        Self::start(parts, here.start, total, Some(spread))
    }

    /// `total` partitions over `ranks` ranks: the block of each rank.
    pub fn rank_split(total: usize, ranks: usize) -> Split {
        Split {
            items: total,
            parts: ranks,
        }
    }

    /// The partitions of a model of `total` that this process builds: all of them, or the
    /// block of its rank when spread over `ranks` ([`Lockstep::spread`]).
    pub fn local_block(total: usize, ranks: Option<&dyn Exchange>) -> std::ops::Range<usize> {
        match ranks {
            None => 0..total,
            Some(x) => Self::rank_split(total, x.size()).range(x.rank()),
        }
    }

    /// [`Lockstep::new`] (`ranks` `None`) or [`Lockstep::spread`].
    pub fn new_or_spread(
        parts: Vec<P>,
        total: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Lockstep<P>
    where
        P::Message: Serialize + DeserializeOwned,
        P::Done: Serialize + DeserializeOwned,
        P::Error: Serialize + DeserializeOwned,
    {
        match ranks {
            None => Self::new(parts),
            Some(x) => Self::spread(parts, total, x),
        }
    }

    fn start(parts: Vec<P>, first: usize, total: usize, spread: Option<Spread<P>>) -> Lockstep<P> {
        let n = parts.len();
        assert!(n > 0, "a partitioned model has at least one partition");
        let cells: Arc<Vec<Mutex<Cell<P>>>> = Arc::new(
            parts
                .into_iter()
                .map(|part| {
                    Mutex::new(Cell {
                        part,
                        inbox: Vec::new(),
                        outbox: (0..total).map(|_| Vec::new()).collect(),
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
                    .name(format!("partition-{}", first + i))
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
            first,
            total,
            spread,
        }
    }

    /// The number of partitions (over all ranks).
    pub fn len(&self) -> usize {
        self.total
    }

    /// Never true (there is at least one partition); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The (global) partitions simulated by this process.
    pub fn local(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.cells.len()
    }

    /// Partition `i` of this process ([`Lockstep::local`]), for the caller to read or change
    /// between cycles.
    pub fn part(&self, i: usize) -> PartGuard<'_, P> {
        assert!(
            self.local().contains(&i),
            "partition {i} is simulated by another rank"
        );
        PartGuard(lock(&self.cells[i - self.first]))
    }

    /// Calls `f` on each partition of this process, in order (to change them the same way on
    /// every rank).
    pub fn for_each_local(&mut self, mut f: impl FnMut(&mut P)) {
        for cell in self.cells.iter() {
            f(&mut lock(cell).part);
        }
    }

    /// `f` of every partition, in partition order, over all ranks: collective (every rank
    /// calls it at the same point with the same `f`).
    pub fn gather<T: Serialize + DeserializeOwned>(&self, f: impl Fn(&P) -> T) -> Vec<T> {
        let mine: Vec<T> = self.cells.iter().map(|c| f(&lock(c).part)).collect();
        let Some(spread) = &self.spread else {
            return mine;
        };
        let bytes = postcard::to_allocvec(&mine).expect("in-memory serialization does not fail");
        let me = spread.exchange.rank();
        let mut mine = Some(mine);
        let mut all = Vec::with_capacity(self.total);
        for (r, theirs) in spread.exchange.all_gather(&bytes).iter().enumerate() {
            if r == me {
                all.extend(mine.take().into_iter().flatten());
            } else {
                let got: Vec<T> = postcard::from_bytes(theirs)
                    .unwrap_or_else(|e| panic!("rank {r}'s gathered values are unreadable: {e}"));
                all.extend(got);
            }
        }
        all
    }

    /// Whether no message waits for any partition (posted by the caller, or sent by a
    /// partition during the last cycle) and `idle` holds for every partition, over all
    /// ranks: collective. A model whose partitions are all idle with empty mailboxes may
    /// jump its clock on every partition alike instead of running empty cycles.
    pub fn quiet(&self, idle: impl Fn(&P) -> bool) -> bool {
        let mine = self.posted.iter().all(Vec::is_empty)
            && self.cells.iter().all(|c| {
                let c = lock(c);
                c.inbox.is_empty() && idle(&c.part)
            });
        match &self.spread {
            None => mine,
            Some(spread) => spread
                .exchange
                .all_gather(&[u8::from(mine)])
                .iter()
                .all(|b| b.first() == Some(&1)),
        }
    }

    /// The latest [`Partition::last_active`] over all partitions, after the last cycle.
    pub fn last_active(&self) -> u64 {
        match &self.spread {
            Some(spread) => spread.last_active.iter().copied().max().unwrap_or(0),
            None => self
                .cells
                .iter()
                .map(|c| lock(c).part.last_active())
                .max()
                .unwrap_or(0),
        }
    }

    /// Leaves `m` for partition `i`, which takes it in at the start of its next cycle before
    /// the messages of the partitions: cheaper than locking the partition to change it, and
    /// the work of taking it in is done in parallel. Messages for another rank's partition
    /// are dropped: that rank, driven the same way, posts them itself.
    pub fn post(&mut self, i: usize, m: P::Message) {
        if let Some(posted) = i
            .checked_sub(self.first)
            .and_then(|k| self.posted.get_mut(k))
        {
            posted.push(m);
        }
    }

    /// Runs one cycle of every partition, in parallel, exchanges their messages and appends
    /// their completions to `done` in partition order. The first error, in partition order,
    /// is returned (after every partition finished its cycle); on every rank of a spread
    /// model, the same.
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
        if let Some(spread) = &mut self.spread {
            return exchange_between_ranks(spread, self.first, &mut guards, done);
        }
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

/// The end of a cycle of a spread model: this rank's reports to every rank, every rank's
/// completions into `done` and messages into this rank's inboxes, both in partition order.
/// Out of line: the one-process [`Lockstep::cycle`] keeps only the branch to it.
#[inline(never)]
fn exchange_between_ranks<P: Partition>(
    spread: &mut Spread<P>,
    first: usize,
    cells: &mut [MutexGuard<'_, Cell<P>>],
    done: &mut Vec<P::Done>,
) -> Result<(), P::Error> {
    let (n, total) = (cells.len(), spread.last_active.len());
    let here = first..first + n;
    let reports: Vec<ReportOut<'_, P>> = cells
        .iter()
        .map(|c| Report {
            result: &c.result,
            done: &c.done[..],
            last_active: c.part.last_active(),
            out: (0..total)
                .filter(|q| !here.contains(q) && !c.outbox[*q].is_empty())
                .map(|q| (q as u32, &c.outbox[q][..]))
                .collect(),
        })
        .collect();
    let bytes = (spread.encode)(&reports);
    drop(reports);
    let all = spread.exchange.all_gather(&bytes);
    let me = spread.exchange.rank();
    let mut first_err = None;
    // Per local partition: what remote partitions sent it, by ascending sender.
    let mut remote_in: Vec<Vec<(usize, Vec<P::Message>)>> = (0..n).map(|_| Vec::new()).collect();
    for (r, bytes) in all.iter().enumerate() {
        let block = spread.ranks.range(r);
        if r == me {
            for (k, cell) in cells.iter_mut().enumerate() {
                done.append(&mut cell.done);
                spread.last_active[first + k] = cell.part.last_active();
                if let Err(e) = std::mem::replace(&mut cell.result, Ok(()))
                    && first_err.is_none()
                {
                    first_err = Some(e);
                }
            }
            continue;
        }
        let reports = match (spread.decode)(bytes) {
            Ok(reports) if reports.len() == block.len() => reports,
            // Every rank reads the same bytes, so every rank fails here alike.
            Ok(_) | Err(_) => {
                if first_err.is_none() {
                    first_err = Some(P::panicked(format!(
                        "the cycle report of rank {r} is unreadable (ranks running different builds?)"
                    )));
                }
                continue;
            }
        };
        for (g, report) in block.zip(reports) {
            done.extend(report.done);
            spread.last_active[g] = report.last_active;
            if let Err(e) = report.result
                && first_err.is_none()
            {
                first_err = Some(e);
            }
            for (q, msgs) in report.out {
                if let Some(k) = (q as usize).checked_sub(first).filter(|k| *k < n) {
                    remote_in[k].push((g, msgs));
                }
            }
        }
    }
    // Each inbox in sender order: remote senders before this block, the block, those after.
    for (q, remote) in remote_in.into_iter().enumerate() {
        let (before, after): (Vec<_>, Vec<_>) = remote.into_iter().partition(|(g, _)| *g < first);
        for (_, mut msgs) in before {
            cells[q].inbox.append(&mut msgs);
        }
        for p in 0..n {
            let gq = first + q;
            if !cells[p].outbox[gq].is_empty() {
                let mut msgs = std::mem::take(&mut cells[p].outbox[gq]);
                cells[q].inbox.append(&mut msgs);
                cells[p].outbox[gq] = msgs;
            }
        }
        for (_, mut msgs) in after {
            cells[q].inbox.append(&mut msgs);
        }
    }
    // What went to other ranks was sent: empty those outboxes (keeping their capacity).
    for cell in cells.iter_mut() {
        for (q, out) in cell.outbox.iter_mut().enumerate() {
            if !here.contains(&q) {
                out.clear();
            }
        }
    }
    first_err.map_or(Ok(()), Err)
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

        fn last_active(&self) -> u64 {
            self.cycle
        }
    }

    fn ring(parts: usize, fail_at: Option<u64>) -> Vec<Ring> {
        let total = 12;
        let k = total / parts;
        (0..parts)
            .map(|p| Ring {
                first: p * k,
                vals: (p * k..(p + 1) * k).map(|i| i as u64 + 1).collect(),
                total,
                parts,
                left: ((p * k + total - 1) % total) as u64 + 1,
                cycle: 0,
                fail_at: if p == parts - 1 { fail_at } else { None },
            })
            .collect()
    }

    fn run(parts: usize, cycles: u64, fail_at: Option<u64>) -> Result<Vec<(usize, u64)>, String> {
        let mut ls = Lockstep::new(ring(parts, fail_at));
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

    /// Quiet: no message posted or in flight between partitions, and every partition idle.
    #[test]
    fn quiet_sees_posted_and_exchanged_messages() {
        let mut ls = Lockstep::new(ring(3, None));
        assert!(ls.quiet(|_| true), "a fresh model has no mail");
        assert!(!ls.quiet(|r| r.first != 4), "one partition busy");
        ls.post(1, 7);
        assert!(!ls.quiet(|_| true), "a message posted for partition 1");
        let mut done = Vec::new();
        ls.cycle(&mut done).unwrap();
        // Partition 1 took the post in; the ring's cells sent to their right neighbours.
        assert!(!ls.quiet(|_| true), "messages exchanged for the next cycle");
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

    /// A rank's completions of all partitions and its last_active.
    type RankOutcome = (Vec<(usize, u64)>, u64);

    /// The ring spread over `ranks` thread-ranks of `threads` partitions each: every rank's
    /// completions (all partitions', in partition order) and its last_active.
    fn run_spread(
        ranks: usize,
        threads: usize,
        cycles: u64,
        fail_at: Option<u64>,
    ) -> Vec<Result<RankOutcome, String>> {
        let total = ranks * threads;
        let split = Lockstep::<Ring>::rank_split(total, ranks);
        let handles: Vec<_> = ThreadRanks::new(ranks)
            .into_iter()
            .map(|rank| {
                std::thread::spawn(move || {
                    let block = split.range(rank.rank());
                    let parts: Vec<Ring> = ring(total, fail_at)
                        .into_iter()
                        .enumerate()
                        .filter(|(p, _)| block.contains(p))
                        .map(|(_, r)| r)
                        .collect();
                    let mut ls = Lockstep::spread(parts, total, Arc::new(rank));
                    let mut done = Vec::new();
                    for _ in 0..cycles {
                        ls.cycle(&mut done)?;
                    }
                    // The ring's cells always send on: never quiet, on every rank alike.
                    assert!(cycles == 0 || !ls.quiet(|_| true));
                    // A collective query: every partition's first cell, in partition order.
                    let firsts = ls.gather(|r| r.first as u64);
                    assert_eq!(
                        firsts,
                        (0..total)
                            .map(|p| (p * 12 / total) as u64)
                            .collect::<Vec<_>>()
                    );
                    Ok((done, ls.last_active()))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    /// Spread over thread-ranks, every rank returns what one process with the same partitions
    /// returns (completions of all partitions in partition order), and with one partition
    /// per rank-thread the values of the sequential ring.
    #[test]
    fn spread_over_ranks_gives_the_one_process_results_on_every_rank() {
        let sequential: Vec<u64> = run(1, 40, None).unwrap().iter().map(|d| d.1).collect();
        for (ranks, threads) in [(1, 1), (2, 1), (2, 2), (3, 2)] {
            let one = run(ranks * threads, 40, None).unwrap();
            for (r, got) in run_spread(ranks, threads, 40, None).into_iter().enumerate() {
                let (done, last_active) = got.unwrap();
                assert_eq!(done, one, "rank {r} of ({ranks}, {threads})");
                assert_eq!(last_active, 40);
                let firsts: Vec<u64> = done.iter().filter(|d| d.0 == 0).map(|d| d.1).collect();
                assert_eq!(firsts, sequential);
            }
        }
    }

    /// A partition of the last rank panics: every rank gets its error, none hangs.
    #[test]
    fn a_failing_remote_partition_is_the_same_error_on_every_rank() {
        for (ranks, threads) in [(2, 1), (3, 2)] {
            for (r, got) in run_spread(ranks, threads, 40, Some(7))
                .into_iter()
                .enumerate()
            {
                let e = got.unwrap_err();
                assert!(e.contains("boom in cycle 7"), "rank {r}: {e}");
            }
        }
    }
}
