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
//! | a send, or an RDMA write with immediate data, posted | `R send PEER 0 BYTES` |
//! | a receive completed successfully (by a send or by an RDMA write with immediate data) | `R recv PEER 0 BYTES` |
//! | the time between two VIPL calls of the process, when at least 1 µs | `R compute FLOPS`, at `ICN_VIA_TRACE_FLOPS` flop/s (default 10^9: 1 flop per ns) |
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

use icn_via::{Completion, Descriptor, Op};

use crate::objects::lock;

/// Per VI: the key of its connection, once connected.
pub struct Recorder {
    key: Mutex<Option<String>>,
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
    }

    fn event(&self, what: &str, bytes: u64) {
        let Some(key) = lock(&self.key).clone() else {
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
        if gap >= 1000.0 {
            let _ = writeln!(p.raw, "compute {flops}");
        }
        let _ = writeln!(p.raw, "{what} @{k} {bytes}");
    }

    /// A descriptor posted on the send queue.
    pub fn posted(&self, d: &Descriptor) {
        let recorded = match d.op {
            Op::Send => true,
            Op::RdmaWrite(_) => d.immediate.is_some(),
            _ => false,
        };
        if recorded {
            self.event("send", d.total_len());
        }
    }

    /// A descriptor completed.
    pub fn completed(&self, c: &Completion) {
        if c.op == icn_via::CompletedOp::Recv && c.status.is_ok() {
            self.event("recv", u64::from(c.length));
        }
    }

    /// The VI is destroyed (the trace is written at process exit).
    pub fn finish(&self) {}
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
    let tmp = dir.join(format!(".rank-{rank}.ti.tmp"));
    {
        let raw =
            std::io::BufReader::new(std::fs::File::open(dir.join(format!(".rank-{rank}.raw")))?);
        let mut out = BufWriter::new(std::fs::File::create(&tmp)?);
        writeln!(out, "{rank} init")?;
        for line in raw.lines() {
            let line = line?;
            let f: Vec<&str> = line.split_whitespace().collect();
            match f.as_slice() {
                ["compute", flops] => writeln!(out, "{rank} compute {flops}")?,
                [what, k, bytes] => {
                    let peer = k
                        .strip_prefix('@')
                        .and_then(|k| k.parse::<usize>().ok())
                        .and_then(|k| peer_of.get(&k));
                    match peer {
                        Some(peer) => writeln!(out, "{rank} {what} {peer} 0 {bytes}")?,
                        None => writeln!(out, "# {rank} {what} (peer not traced) {bytes}")?,
                    }
                }
                _ => {}
            }
        }
        writeln!(out, "{rank} finalize")?;
        out.flush()?;
    }
    std::fs::rename(&tmp, dir.join(format!("rank-{rank}.ti")))?;
    let _ = std::fs::remove_file(dir.join(format!(".rank-{rank}.raw")));
    // The index: every rank file present, in rank order.
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
}
