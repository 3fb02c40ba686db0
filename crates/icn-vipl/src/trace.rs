//! Recording a VIA program's communication as a SimGrid time-independent (TI) trace, so a
//! real run replays on the simulated machines of `icn-cluster`.
//!
//! Switched on by `ICN_VIA_TRACE=DIR`. Each process is one rank: `ICN_VIA_TRACE_RANK`, or
//! else the first free number (claimed with an exclusive create of `DIR/rank-N.claim`, so
//! the processes of one run number themselves 0, 1, ... in the order they open a VI). Each
//! rank writes `DIR/rank-N.ti` when it exits, and `DIR/index` lists the rank files in rank
//! order (SimGrid's replay takes one trace file per rank through such an index):
//!
//! ```text
//! 0 init
//! 0 compute 1250
//! 0 send 1 0 8
//! 0 recv 1 0 8
//! 0 finalize
//! ```
//!
//! The argument lists are SimGrid 3.32's (`smpi_replay.cpp`): `send` and `recv` take
//! `peer tag count`; `init` without an argument keeps the default datatype, one byte, so the
//! count is the message's bytes. Every message has tag 0: a VI delivers in order, which is
//! what MPI's non-overtaking rule gives messages of one tag.
//!
//! | VIPL event | line |
//! |---|---|
//! | a send, or an RDMA write with immediate data, posted | `R isend PEER 0 BYTES` |
//! | its completion, reaped by the consumer | `R wait R PEER 0` |
//! | a receive posted (before the connection too) | `R irecv PEER 0 BYTES` (its buffer) |
//! | its completion, reaped (consumed by a send or an RDMA write with immediate data) | `R wait PEER R 0` |
//! | the time between two VIPL calls of the process, when at least 1 µs | `R compute FLOPS`, at `ICN_VIA_TRACE_FLOPS` flop/s (default 10^9: 1 flop per ns) |
//!
//! Why non-blocking requests: VIA posts receives ahead and never blocks in a post, so two
//! processes may each send 64 KiB to the other at once, each into its pre-posted receive.
//! Recorded as blocking `send`/`recv` where they happen, an MPI-semantics replay (a large
//! send waits for its receive) deadlocks on that; `irecv` where the receive is posted and
//! `wait` where it completes is what the program did. An RDMA write with immediate data
//! consumes the peer's next receive whatever its size: it is the `isend` that receive
//! matches (a replay moves the sender's bytes; the receive's own size is only its buffer).
//! Receives that never matched a message (flushed at disconnect or by a lost connection,
//! or still posted at exit after the last completion the program reaped) are left out, and
//! so are sends flushed before they moved: a replay would wait for their partner for ever.
//!
//! Not recorded: RDMA writes without immediate data and RDMA reads (the target sees no event
//! a replay could match: a one-sided transfer has no receive). Peers are named by rank:
//! both sides of a connection know its rendezvous key (provider, host address,
//! discriminator), each writes `DIR/conn-KEY.RANK`, and at exit each rank resolves its
//! connections to the other rank that wrote the same key. Events are streamed to
//! `DIR/.rank-N.raw` as they happen (memory does not grow with the run), and resolved into
//! `rank-N.ti` at exit.

use std::collections::HashMap;
use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use icn_via::{Completion, CompletionStatus, Descriptor, Op};

use crate::objects::lock;

/// Per VI: the key of its connection, once connected.
pub struct Recorder {
    key: Mutex<Option<String>>,
    /// Receives posted before the connection (their buffers' bytes): recorded when it is
    /// made. As many as the receive queue holds.
    early: Mutex<Vec<u64>>,
}

struct Process {
    dir: PathBuf,
    rank: usize,
    flops_per_ns: f64,
    raw: BufWriter<std::fs::File>,
    /// End of the last VIPL call that recorded something.
    last: Instant,
    /// Connection keys in the order first seen (the raw file names them by index).
    keys: Vec<String>,
}

static PROCESS: OnceLock<Option<Mutex<Process>>> = OnceLock::new();

fn process() -> Option<&'static Mutex<Process>> {
    PROCESS
        .get_or_init(|| {
            let dir = PathBuf::from(std::env::var_os("ICN_VIA_TRACE").filter(|d| !d.is_empty())?);
            std::fs::create_dir_all(&dir).ok()?;
            let rank = match std::env::var("ICN_VIA_TRACE_RANK")
                .ok()
                .and_then(|r| r.parse().ok())
            {
                Some(r) => r,
                None => (0..100_000).find(|n| {
                    std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(dir.join(format!("rank-{n}.claim")))
                        .is_ok()
                })?,
            };
            let flops_per_ns = std::env::var("ICN_VIA_TRACE_FLOPS")
                .ok()
                .and_then(|f| f.parse::<f64>().ok())
                .filter(|f| *f > 0.0 && f.is_finite())
                .unwrap_or(1e9)
                / 1e9;
            let raw = std::fs::File::create(dir.join(format!(".rank-{rank}.raw"))).ok()?;
            // SAFETY: `finish_at_exit` is an `extern "C" fn()` with no preconditions; atexit
            // runs it once, at normal process exit.
            unsafe { libc::atexit(finish_at_exit) };
            Some(Mutex::new(Process {
                dir,
                rank,
                flops_per_ns,
                raw: BufWriter::new(raw),
                last: Instant::now(),
                keys: Vec::new(),
            }))
        })
        .as_ref()
}

impl Recorder {
    /// A recorder when `ICN_VIA_TRACE` is set.
    pub fn from_env() -> Option<std::sync::Arc<Recorder>> {
        process()?;
        Some(std::sync::Arc::new(Recorder {
            key: Mutex::new(None),
            early: Mutex::new(Vec::new()),
        }))
    }

    /// The VI is connected; `key` names the connection on both sides.
    pub fn connected(&self, key: &str) {
        *lock(&self.key) = Some(key.to_string());
        if let Some(p) = process() {
            let mut p = lock(p);
            let _ = std::fs::File::create(p.dir.join(format!("conn-{key}.{}", p.rank)));
            // setting up the connection is not compute
            p.last = Instant::now();
        }
        // posted before the connection: at its start, with no compute between them
        for bytes in std::mem::take(&mut *lock(&self.early)) {
            self.record("irecv", bytes, false);
        }
    }

    fn event(&self, what: &str, bytes: u64) {
        self.record(what, bytes, true);
    }

    /// Streams one event; `timed`: preceded by the compute since the last one.
    fn record(&self, what: &str, bytes: u64, timed: bool) {
        let Some(key) = lock(&self.key).clone() else {
            if what == "irecv" {
                lock(&self.early).push(bytes);
            }
            return;
        };
        let Some(p) = process() else { return };
        let mut p = lock(p);
        let now = Instant::now();
        let gap = now.duration_since(p.last).as_nanos() as f64;
        p.last = now;
        let k = match p.keys.iter().position(|x| *x == key) {
            Some(k) => k,
            None => {
                p.keys.push(key);
                p.keys.len() - 1
            }
        };
        let flops = (gap * p.flops_per_ns).round();
        if timed && gap >= 1000.0 {
            let _ = writeln!(p.raw, "compute {flops}");
        }
        let _ = writeln!(p.raw, "{what} @{k} {bytes}");
    }

    /// A descriptor posted on either queue.
    pub fn posted(&self, d: &Descriptor) {
        if d.op == Op::Recv {
            self.event("irecv", d.total_len());
        } else if is_message(d) {
            self.event("isend", d.total_len());
        }
    }

    /// A descriptor completed and reaped by the consumer: 1 if its message moved (even
    /// into an error, such as a receive too short), 0 if it was flushed or the connection
    /// was lost first (its request is then left out at exit).
    pub fn completed(&self, c: &Completion) {
        let what = match c.op {
            icn_via::CompletedOp::Recv => "rdone",
            _ if is_message(&c.desc) => "sdone",
            _ => return,
        };
        let moved = !matches!(
            c.status,
            CompletionStatus::Flushed | CompletionStatus::TransportError
        );
        self.event(what, u64::from(moved));
    }

    /// The VI is destroyed (the trace is written at process exit).
    pub fn finish(&self) {}
}

/// A send-queue descriptor the peer sees as a message: a send, or an RDMA write with
/// immediate data (it consumes a receive).
fn is_message(d: &Descriptor) -> bool {
    match d.op {
        Op::Send => true,
        Op::RdmaWrite(_) => d.immediate.is_some(),
        _ => false,
    }
}

/// What the first pass over a rank's raw events learns per connection, so the second can
/// leave out requests that never matched. Sized by connections and failures, not by the run.
#[derive(Default)]
struct Fate {
    /// Receives reaped (ok or not): posted receives past these never completed.
    recvs_reaped: u64,
    /// Sequence numbers (per connection and queue) of requests completed in error.
    failed_recvs: std::collections::HashSet<u64>,
    failed_sends: std::collections::HashSet<u64>,
}

/// The per-connection counters of a pass: posted receives, posted sends, reaped receives,
/// reaped sends.
#[derive(Default, Clone, Copy)]
struct Seq {
    irecv: u64,
    isend: u64,
    rdone: u64,
    sdone: u64,
}

/// Parses a raw line `what @k n`.
fn raw_event(line: &str) -> Option<(&str, usize, u64)> {
    let mut f = line.split_whitespace();
    let what = f.next()?;
    let k = f.next()?.strip_prefix('@')?.parse().ok()?;
    let n = f.next()?.parse().ok()?;
    Some((what, k, n))
}

extern "C" fn finish_at_exit() {
    let _ = finish();
}

/// Resolves the raw events into `rank-N.ti` and rewrites the index.
fn finish() -> std::io::Result<()> {
    let Some(p) = process() else { return Ok(()) };
    let mut p = lock(p);
    p.raw.flush()?;
    let (dir, rank) = (p.dir.clone(), p.rank);
    // Each connection's peer: the other rank that wrote the same key.
    let mut peer_of: HashMap<usize, usize> = HashMap::new();
    for (k, key) in p.keys.iter().enumerate() {
        let prefix = format!("conn-{key}.");
        for e in std::fs::read_dir(&dir)?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(r) = name
                .strip_prefix(&prefix)
                .and_then(|r| r.parse::<usize>().ok())
                && r != rank
            {
                peer_of.insert(k, r);
            }
        }
    }
    let raw_path = dir.join(format!(".rank-{rank}.raw"));
    let raw_lines = || -> std::io::Result<_> {
        Ok(std::io::BufReader::new(std::fs::File::open(&raw_path)?).lines())
    };
    // Pass 1: which requests completed, and how.
    let mut fate: Vec<Fate> = (0..p.keys.len()).map(|_| Fate::default()).collect();
    let mut seq = vec![Seq::default(); p.keys.len()];
    for line in raw_lines()? {
        let line = line?;
        let Some((what, k, n)) = raw_event(&line) else {
            continue;
        };
        let (Some(f), Some(s)) = (fate.get_mut(k), seq.get_mut(k)) else {
            continue;
        };
        match what {
            "rdone" => {
                if n == 0 {
                    f.failed_recvs.insert(s.rdone);
                }
                s.rdone += 1;
                f.recvs_reaped = s.rdone;
            }
            "sdone" => {
                if n == 0 {
                    f.failed_sends.insert(s.sdone);
                }
                s.sdone += 1;
            }
            _ => {}
        }
    }
    // Pass 2: the trace, without the requests that never matched.
    let tmp = dir.join(format!(".rank-{rank}.ti.tmp"));
    {
        let mut out = BufWriter::new(std::fs::File::create(&tmp)?);
        writeln!(out, "{rank} init")?;
        let mut seq = vec![Seq::default(); p.keys.len()];
        for line in raw_lines()? {
            let line = line?;
            if let Some(flops) = line.strip_prefix("compute ") {
                writeln!(out, "{rank} compute {flops}")?;
                continue;
            }
            let Some((what, k, n)) = raw_event(&line) else {
                continue;
            };
            let (Some(f), Some(s)) = (fate.get(k), seq.get_mut(k)) else {
                continue;
            };
            let Some(&peer) = peer_of.get(&k) else {
                writeln!(out, "# {rank} {what} (peer not traced) {n}")?;
                continue;
            };
            match what {
                "irecv" => {
                    let i = s.irecv;
                    s.irecv += 1;
                    if i < f.recvs_reaped && !f.failed_recvs.contains(&i) {
                        writeln!(out, "{rank} irecv {peer} 0 {n}")?;
                    }
                }
                "isend" => {
                    let i = s.isend;
                    s.isend += 1;
                    if !f.failed_sends.contains(&i) {
                        writeln!(out, "{rank} isend {peer} 0 {n}")?;
                    }
                }
                "rdone" => {
                    s.rdone += 1;
                    if n == 1 {
                        writeln!(out, "{rank} wait {peer} {rank} 0")?;
                    }
                }
                "sdone" => {
                    s.sdone += 1;
                    if n == 1 {
                        writeln!(out, "{rank} wait {rank} {peer} 0")?;
                    }
                }
                _ => {}
            }
        }
        writeln!(out, "{rank} finalize")?;
        out.flush()?;
    }
    std::fs::rename(&tmp, dir.join(format!("rank-{rank}.ti")))?;
    let _ = std::fs::remove_file(&raw_path);
    // The index: every rank file present, in rank order. Listed and replaced under an
    // exclusive lock on `DIR/.index.lock`: ranks that end together otherwise race (one lists
    // before the other's rank file appears, and renames its index over the complete one
    // after). Each rank's file is in place before it locks, so whoever locks last lists all.
    let lock_file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".index.lock"))?;
    lock_file.lock()?;
    let mut ranks: Vec<usize> = std::fs::read_dir(&dir)?
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_prefix("rank-")?.strip_suffix(".ti")?.parse().ok()
        })
        .collect();
    ranks.sort_unstable();
    let idx_tmp = dir.join(format!(".index.{rank}.tmp"));
    let body: String = ranks.iter().map(|r| format!("rank-{r}.ti\n")).collect();
    std::fs::write(&idx_tmp, body)?;
    std::fs::rename(&idx_tmp, dir.join("index"))
    // The lock is released when `lock_file` is dropped.
}
