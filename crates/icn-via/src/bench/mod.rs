//! The paper's two benchmarks as library functions, plus raw-socket baselines.
//!
//! * **pingpong**: one-way latency = round-trip time / 2, averaged over `iterations` round
//!   trips per size (after `warmup` untimed ones);
//! * **window**: the sender streams `messages` messages of one size as fast as the receiver's
//!   posted receives allow (credit flow control, `window` receives per credit) and bandwidth
//!   = bytes / time until the receiver confirms the last one.
//!
//! Output columns follow the OSU micro-benchmarks (`# Size  Latency (us)`,
//! `# Size  Bandwidth (MB/s)`, MB = 10^6 bytes). The baselines run the same two programs over
//! a plain TCP socket (`TCP_NODELAY`) and a Unix stream socket, in the same run, so the VIA
//! figures can be read as ratios on a shared machine.

use std::time::{Duration, Instant};

use crate::attrs::{MemAttributes, Ptag, Reliability, ViAttributes};
use crate::descriptor::{Completion, Descriptor, Segment};
use crate::error::{CompletionStatus, Result, ViaError};
use crate::memory::MemRegion;
use crate::nic::{Nic, Vi};

mod copy;
mod raw;
pub use copy::{CopyRow, copy_bandwidth};
pub use raw::{RawSocket, raw_client, raw_server, run_raw};

/// Which program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Pingpong,
    Window,
}

/// Benchmark parameters (defaults: the paper's 1000 round trips and 2000-message windows).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BenchConfig {
    pub sizes: Vec<usize>,
    /// Timed round trips per size (fewer for large sizes, see [`BenchConfig::reps`]).
    pub iterations: usize,
    pub warmup: usize,
    /// Messages streamed per size in `window`.
    pub messages: usize,
    /// Receives granted per credit in `window`.
    pub window: usize,
    pub reliability: Reliability,
    /// Caps the bytes moved per size so large sizes finish quickly.
    pub max_bytes_per_size: usize,
    /// Sends of at least this many bytes go by cross-memory attach on shm, 0 never
    /// ([`crate::ViAttributes::cma_min`]).
    #[serde(default)]
    pub cma_min: u32,
    /// Sends from a shared region of at least this many bytes go by the receiver's copy out
    /// of it on shm, 0 never ([`crate::ViAttributes::single_copy_min`]).
    #[serde(default = "default_single_copy_min")]
    pub single_copy_min: u32,
    /// Spin budget of each side's waits in µs ([`crate::ViAttributes::spin`]).
    #[serde(default = "default_spin_us")]
    pub spin_us: u64,
    /// [`run_local`] over shm: pin the two sides to different CPUs (see [`pin_to_cpu`]). The raw
    /// baselines block in the kernel instead of polling and are never pinned (pinning only
    /// stops a blocked thread from moving to an idle core).
    pub pin: bool,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            sizes: std::iter::once(0)
                .chain((0..=22).map(|k| 1usize << k))
                .collect(),
            iterations: 1000,
            warmup: 100,
            messages: 2000,
            window: 64,
            reliability: Reliability::ReliableDelivery,
            max_bytes_per_size: 512 << 20,
            pin: true,
            spin_us: default_spin_us(),
            cma_min: 0,
            single_copy_min: default_single_copy_min(),
        }
    }
}

fn default_single_copy_min() -> u32 {
    crate::attrs::SINGLE_COPY_MIN
}

fn default_spin_us() -> u64 {
    crate::link::backoff::DEFAULT_SPIN.as_micros() as u64
}

impl BenchConfig {
    /// Repetitions for `size` given a nominal count: at least 10, at most what fits in
    /// `max_bytes_per_size`.
    pub fn reps(&self, nominal: usize, size: usize) -> usize {
        nominal.min(self.max_bytes_per_size / size.max(1)).max(10)
    }
    /// The attributes of a benchmark VI: the configured reliability and spin budget.
    pub fn vi_attributes(&self, ptag: Ptag) -> ViAttributes {
        ViAttributes {
            spin: Duration::from_micros(self.spin_us),
            cma_min: self.cma_min,
            single_copy_min: self.single_copy_min,
            // the window receiver keeps two windows and a sync receive posted
            queue_depth: crate::attrs::MAX_QUEUE_DEPTH,
            ..ViAttributes::new(ptag, self.reliability)
        }
    }
    fn max_size(&self) -> usize {
        self.sizes.iter().copied().max().unwrap_or(0)
    }
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(ViaError::InvalidParameter(m));
        if self
            .sizes
            .iter()
            .any(|&s| s > crate::attrs::MAX_TRANSFER_SIZE as usize)
        {
            return bad(format!(
                "sizes must be in 0..={} (the VI's max_transfer_size)",
                crate::attrs::MAX_TRANSFER_SIZE
            ));
        }
        if self.window == 0 || self.window > 512 {
            return bad(format!("window must be in 1..=512, got {}", self.window));
        }
        let max_spin = crate::link::backoff::MAX_SPIN.as_micros() as u64;
        if self.spin_us > max_spin {
            return bad(format!(
                "spin must be in 0..={max_spin} µs, got {}",
                self.spin_us
            ));
        }
        if self.iterations == 0 || self.messages == 0 {
            return bad("iterations and messages must be at least 1".into());
        }
        Ok(())
    }
}

/// One result row.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Row {
    pub size: usize,
    /// One-way latency in µs (pingpong) or bandwidth in MB/s (window).
    pub value: f64,
}

/// Formats rows as OSU does.
pub fn osu_table(title: &str, kind: Kind, rows: &[Row]) -> String {
    let mut s = osu_header(title, kind);
    for r in rows {
        s += &osu_row(r);
    }
    s
}

/// The two header lines of an OSU table.
pub fn osu_header(title: &str, kind: Kind) -> String {
    let columns = match kind {
        Kind::Pingpong => "# Size          Latency (us)\n",
        Kind::Window => "# Size      Bandwidth (MB/s)\n",
    };
    format!("# {title}\n{columns}")
}

/// One line of an OSU table.
pub fn osu_row(r: &Row) -> String {
    format!("{:<10}{:>18.2}\n", r.size, r.value)
}

const T: Option<Duration> = Some(Duration::from_secs(60));

fn seg(r: &MemRegion, len: usize) -> Segment {
    Segment::new(r.handle(), 0, len as u32)
}

/// Counts the sends in flight so the programs reap completions without querying the VI (a
/// lock) per message; reaps in batches because each poll of an empty queue is a read
/// attempt (a system call on tcp).
#[derive(Default)]
struct Sends {
    posted: usize,
}

impl Sends {
    fn post(&mut self, vi: &Vi, desc: Descriptor) -> Result<()> {
        vi.post_send(desc)?;
        self.posted += 1;
        Ok(())
    }
    fn reap(&mut self, vi: &Vi) -> Result<()> {
        if self.posted < 32 {
            return Ok(());
        }
        while let Some(c) = vi.send_done() {
            check(vi, c)?;
            self.posted -= 1;
        }
        Ok(())
    }
    /// Reaps one completed send if more than one is in flight (the pingpong: one send
    /// completes per round trip, acknowledged by the message that just arrived, so this
    /// keeps up without polling an empty queue). A batch of 32 at once took about a
    /// microsecond, longer than a side's slack before the next message arrives.
    fn reap_one(&mut self, vi: &Vi) -> Result<()> {
        if self.posted > 1
            && let Some(c) = vi.send_done()
        {
            check(vi, c)?;
            self.posted -= 1;
        }
        Ok(())
    }
    fn wait_one(&mut self, vi: &Vi) -> Result<()> {
        check(vi, vi.send_wait(T)?)?;
        self.posted -= 1;
        Ok(())
    }
    /// Waits for every posted send to complete (acks flow while we wait).
    fn settle(&mut self, vi: &Vi) -> Result<()> {
        while self.posted > 0 {
            self.wait_one(vi)?;
        }
        Ok(())
    }
}

/// A connected VI with its NIC, for running one side of a benchmark.
pub struct Endpoint {
    pub nic: Nic,
    pub ptag: Ptag,
    pub vi: Vi,
}

impl Endpoint {
    /// Server side: opens `listen_url`, calls `ready` with the address to give the client,
    /// and accepts one connection.
    pub fn accept(
        listen_url: &str,
        cfg: &BenchConfig,
        ready: impl FnOnce(&str),
    ) -> Result<Endpoint> {
        let nic = Nic::open(listen_url)?;
        let ptag = nic.create_ptag();
        let vi = nic.create_vi(cfg.vi_attributes(ptag), None, None)?;
        ready(nic.address());
        nic.connect_wait(b"icnlab-bench", T)?.accept(&vi)?;
        Ok(Endpoint { nic, ptag, vi })
    }
    /// Client side.
    pub fn connect(remote: &str, cfg: &BenchConfig) -> Result<Endpoint> {
        let provider = remote.split("://").next().unwrap_or("");
        let nic = Nic::open(&format!("{provider}://"))?;
        let ptag = nic.create_ptag();
        let vi = nic.create_vi(cfg.vi_attributes(ptag), None, None)?;
        nic.connect_request(&vi, remote, b"icnlab-bench", T)?;
        Ok(Endpoint { nic, ptag, vi })
    }
    /// A registered buffer, written once so its pages are resident (as in any real use;
    /// untouched pages would make the first copies measure page faults).
    fn region(&self, len: usize) -> Result<MemRegion> {
        let r = self
            .nic
            .register_mem(len.max(1), MemAttributes::local(self.ptag))?;
        r.with_mut(|b| b.fill(0xa5));
        Ok(r)
    }
}

/// Pins the calling thread to the `index`-th CPU it may run on (0 = first), as MPI launchers
/// bind ranks to cores by default: two polling processes that share a core take turns at
/// scheduler-tick granularity. Returns false if there are not enough CPUs or pinning fails.
pub fn pin_to_cpu(index: usize) -> bool {
    pin_to(index).is_some()
}

/// Runs `f` with the calling thread pinned to its `index`-th allowed CPU (if `pin`), then
/// restores the thread's previous CPU mask.
fn pinned<R>(pin: bool, index: usize, f: impl FnOnce() -> R) -> R {
    let saved = if pin { pin_to(index) } else { None };
    let r = f();
    if let Some(mask) = saved {
        let _ = rustix::thread::sched_setaffinity(None, &mask);
    }
    r
}

/// Pins to the `index`-th allowed CPU; returns the previous mask.
fn pin_to(index: usize) -> Option<rustix::thread::CpuSet> {
    use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
    let allowed = sched_getaffinity(None).ok()?;
    let cpu = (0..CpuSet::MAX_CPU)
        .filter(|&c| allowed.is_set(c))
        .nth(index)?;
    let mut one = CpuSet::new();
    one.set(cpu);
    sched_setaffinity(None, &one).ok()?;
    Some(allowed)
}

/// The side that measures: pingpong initiator or window sender.
pub fn client(ep: &Endpoint, kind: Kind, cfg: &BenchConfig) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    client_rows(ep, kind, cfg, &mut |r| rows.push(r))?;
    Ok(rows)
}

/// [`client`], handing each row to `on_row` as soon as it is measured (a run that fails
/// later still reports the sizes it finished). A failure says how far the run got.
pub fn client_rows(
    ep: &Endpoint,
    kind: Kind,
    cfg: &BenchConfig,
    on_row: &mut dyn FnMut(Row),
) -> Result<()> {
    cfg.validate()?;
    let mut p = Progress::default();
    match kind {
        Kind::Pingpong => pingpong(ep, cfg, true, &mut p, on_row),
        Kind::Window => window_send(ep, cfg, &mut p, on_row),
    }
    .map_err(|e| p.annotate(e))
}

/// The other side: pingpong echoer or window receiver. A failure says how far the run got.
pub fn server(ep: &Endpoint, kind: Kind, cfg: &BenchConfig) -> Result<()> {
    cfg.validate()?;
    let mut p = Progress::default();
    match kind {
        Kind::Pingpong => pingpong(ep, cfg, false, &mut p, &mut |_| {}),
        Kind::Window => window_recv(ep, cfg, &mut p),
    }
    .map_err(|e| p.annotate(e))
}

/// How far one side of a benchmark got, for the error that stops it.
#[derive(Debug, Default)]
struct Progress {
    /// Sizes finished (their rows were reported).
    sizes_done: usize,
    /// The size under way, messages (or round trips) of it completed, and of how many.
    current: Option<(usize, usize, usize)>,
}

impl Progress {
    fn start(&mut self, size: usize, total: usize) {
        self.current = Some((size, 0, total));
    }
    fn count(&mut self) {
        if let Some((_, done, _)) = &mut self.current {
            *done += 1;
        }
    }
    fn finish(&mut self) {
        self.sizes_done += 1;
        self.current = None;
    }
    /// Appends what completed to a connection error (other errors are the caller's own).
    fn annotate(&self, e: ViaError) -> ViaError {
        match e {
            ViaError::ConnectionLost(reason) => {
                let mut s = format!("{reason}; completed: {} sizes", self.sizes_done);
                if let Some((size, done, total)) = self.current {
                    s += &format!(", then {done} of {total} messages of {size} B");
                }
                ViaError::ConnectionLost(s)
            }
            e => e,
        }
    }
}

/// `c` if it succeeded; if not and the VI broke, why it broke (a `Flushed` receive says
/// nothing about the peer being gone; the VI's break reason does).
fn check(vi: &Vi, c: Completion) -> Result<Completion> {
    if c.status.is_ok() {
        return Ok(c);
    }
    match vi.break_reason() {
        Some(reason) => Err(ViaError::ConnectionLost(reason)),
        None => c.ok(),
    }
}

// Receive-before-send discipline: VIA drops (or, on reliable VIs, breaks the connection on)
// a message that finds no posted receive, so every program below posts the receive for the
// peer's next message before sending anything that could trigger it, including across the
// boundary between two sizes.

/// Pingpong. Receives are posted for the largest size (a message may be shorter than its
/// receive), so sizes can change without re-posting, and kept one deep (initiator) or two
/// deep (echoer) so that each side re-posts *after* its send, off the critical path: the
/// initiator posts its replacement while its message travels (the reply cannot come before
/// its send); the echoer still has one posted while it re-posts the other.
fn pingpong(
    ep: &Endpoint,
    cfg: &BenchConfig,
    initiator: bool,
    p: &mut Progress,
    on_row: &mut dyn FnMut(Row),
) -> Result<()> {
    let vi = &ep.vi;
    let max = cfg.max_size();
    let out = ep.region(max)?;
    let inb = ep.region(max)?;
    let post = || vi.post_recv(Descriptor::recv([seg(&inb, max)]));
    let recv = |size: usize| -> Result<()> {
        let c = check(vi, vi.recv_wait(T)?)?;
        let len = c.length as usize;
        if len != size {
            return Err(ViaError::Descriptor(format!(
                "pingpong expected {size} B, received {len} B"
            )));
        }
        Ok(())
    };
    let mut sends = Sends::default();
    for _ in 0..if initiator { 1 } else { 2 } {
        post()?;
    }
    for &size in &cfg.sizes {
        let n = cfg.reps(cfg.iterations, size);
        let warm = cfg.warmup.min(n);
        p.start(size, warm + n);
        let mut t0 = Instant::now();
        for i in 0..warm + n {
            if i == warm {
                t0 = Instant::now();
            }
            // Send completions are reaped one per round trip, while the message is in
            // flight (initiator) or after the reply left (echoer): never between a receive
            // and the send it triggers.
            if initiator {
                sends.post(vi, Descriptor::send([seg(&out, size)]))?;
                post()?;
                sends.reap_one(vi)?;
                recv(size)?;
            } else {
                recv(size)?;
                sends.post(vi, Descriptor::send([seg(&out, size)]))?;
                post()?;
                sends.reap_one(vi)?;
            }
            p.count();
        }
        on_row(Row {
            size,
            value: t0.elapsed().as_secs_f64() * 1e6 / (2.0 * n as f64),
        });
        p.finish();
    }
    vi.progress();
    Ok(())
}

/// Credit receives the window sender keeps posted. At most two credit messages can be
/// unread at once (the sender has at most two windows of messages out beyond the credits it
/// has read, and the receiver grants one credit per window received), so three posted and one
/// re-posted per credit read are enough for any number of messages.
const CREDIT_RECVS: usize = 3;

fn window_send(
    ep: &Endpoint,
    cfg: &BenchConfig,
    p: &mut Progress,
    on_row: &mut dyn FnMut(Row),
) -> Result<()> {
    let vi = &ep.vi;
    let out = ep.region(cfg.max_size())?;
    let acks = ep.region(8)?;
    let w = cfg.window;
    let mut sends = Sends::default();
    for &size in &cfg.sizes {
        let rounds = cfg.reps(cfg.messages, size).div_ceil(w);
        // one receive per credit message plus one for the end-of-size sync, posted as
        // they are used
        let mut unposted = rounds + 1;
        let mut post_credits = |n: usize| -> Result<()> {
            for _ in 0..n.min(unposted) {
                vi.post_recv(Descriptor::recv([seg(&acks, 0)]))?;
                unposted -= 1;
            }
            Ok(())
        };
        post_credits(CREDIT_RECVS)?;
        p.start(size, rounds * w);
        // The receiver has posted 2 windows; each credit message grants one more.
        let mut credit = 2 * w;
        let mut got_credits = 0;
        let t0 = Instant::now();
        for _ in 0..rounds * w {
            while credit == 0 {
                check(vi, vi.recv_wait(T)?)?;
                post_credits(1)?;
                credit += w;
                got_credits += 1;
            }
            sends.post(vi, Descriptor::send([seg(&out, size)]))?;
            credit -= 1;
            if sends.posted >= 2 * w {
                sends.wait_one(vi)?;
            }
            sends.reap(vi)?;
            p.count();
        }
        // The last credit message means "everything arrived".
        while got_credits < rounds {
            check(vi, vi.recv_wait(T)?)?;
            post_credits(1)?;
            got_credits += 1;
        }
        let secs = t0.elapsed().as_secs_f64();
        on_row(Row {
            size,
            value: (rounds * w * size) as f64 / secs / 1e6,
        });
        p.finish();
        sends.settle(vi)?;
        // End-of-size sync: the receiver answers once its next size's receives are posted.
        sends.post(vi, Descriptor::send([]))?;
        check(vi, vi.recv_wait(T)?)?;
        sends.settle(vi)?;
    }
    Ok(())
}

fn window_recv(ep: &Endpoint, cfg: &BenchConfig, p: &mut Progress) -> Result<()> {
    let vi = &ep.vi;
    let inb = ep.region(cfg.max_size())?;
    let credit = ep.region(8)?;
    let w = cfg.window;
    let total_of = |size: usize| cfg.reps(cfg.messages, size).div_ceil(w) * w;
    // Posts the first two windows of a size plus the receive for the sender's sync.
    let open = |size: usize| -> Result<usize> {
        let n = (2 * w).min(total_of(size));
        for _ in 0..n {
            vi.post_recv(Descriptor::recv([seg(&inb, size)]))?;
        }
        Ok(n)
    };
    let mut sends = Sends::default();
    let mut posted = match cfg.sizes.first() {
        Some(&s) => open(s)?,
        None => 0,
    };
    for (k, &size) in cfg.sizes.iter().enumerate() {
        let total = total_of(size);
        p.start(size, total);
        for got in 1..=total {
            let c = check(vi, vi.recv_wait(T)?)?;
            if c.status != CompletionStatus::Success {
                return Err(ViaError::Descriptor(format!(
                    "window receive completed with {:?}",
                    c.status
                )));
            }
            p.count();
            if got % w == 0 {
                if got == total {
                    // the sender's end-of-size sync lands here
                    vi.post_recv(Descriptor::recv([]))?;
                }
                for _ in 0..w.min(total - posted) {
                    vi.post_recv(Descriptor::recv([seg(&inb, size)]))?;
                    posted += 1;
                }
                sends.post(vi, Descriptor::send([seg(&credit, 0)]))?;
            }
            sends.reap(vi)?;
        }
        check(vi, vi.recv_wait(T)?)?;
        p.finish();
        posted = match cfg.sizes.get(k + 1) {
            Some(&next) => open(next)?,
            None => 0,
        };
        sends.post(vi, Descriptor::send([]))?;
        sends.reap(vi)?;
    }
    vi.progress();
    Ok(())
}

/// Runs both sides of a VIA benchmark in this process (server in a thread), over `provider`
/// (`tcp` or `shm`).
pub fn run_local(provider: &str, kind: Kind, cfg: &BenchConfig) -> Result<Vec<Row>> {
    let listen = match provider {
        "tcp" => "tcp://127.0.0.1:0".to_string(),
        "shm" => format!("shm:///icnlab-bench/{}/{}", std::process::id(), unique()),
        p => {
            return Err(ViaError::InvalidParameter(format!(
                "provider must be tcp or shm, got {p}"
            )));
        }
    };
    // Only shm waits poll; tcp waits block in poll(2) like the raw baselines, and pinning a
    // blocking thread only stops it from moving to an idle core.
    let polls = provider == "shm";
    let (tx, rx) = std::sync::mpsc::channel();
    let scfg = cfg.clone();
    let srv = std::thread::spawn(move || -> Result<()> {
        pinned(scfg.pin && polls, 1, || {
            let ep = Endpoint::accept(&listen, &scfg, |a| {
                let _ = tx.send(a.to_string());
            })?;
            server(&ep, kind, &scfg)
        })
    });
    let addr = rx
        .recv()
        .map_err(|_| ViaError::ConnectionLost("benchmark server failed to start".into()))?;
    let rows = pinned(cfg.pin && polls, 0, || {
        let ep = Endpoint::connect(&addr, cfg)?;
        client(&ep, kind, cfg)
    });
    srv.join()
        .map_err(|_| ViaError::ConnectionLost("benchmark server panicked".into()))??;
    rows
}

fn unique() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick() -> BenchConfig {
        BenchConfig {
            sizes: vec![0, 8, 4096, 100_000],
            iterations: 20,
            warmup: 2,
            messages: 40,
            window: 8,
            ..Default::default()
        }
    }

    #[test]
    fn reps_are_capped_by_bytes_and_floored_at_ten() {
        let c = BenchConfig {
            max_bytes_per_size: 1000,
            ..Default::default()
        };
        assert_eq!(c.reps(1000, 0), 1000);
        assert_eq!(c.reps(1000, 10), 100);
        assert_eq!(c.reps(1000, 1000), 10);
        assert!(
            BenchConfig {
                window: 0,
                ..Default::default()
            }
            .validate()
            .is_err()
        );
        assert!(
            BenchConfig {
                sizes: vec![(1 << 30) + 1],
                ..Default::default()
            }
            .validate()
            .is_err()
        );
    }

    #[test]
    fn both_programs_run_on_both_providers_at_every_reliability_level() {
        for p in ["tcp", "shm"] {
            for rel in [
                Reliability::Unreliable,
                Reliability::ReliableDelivery,
                Reliability::ReliableReception,
            ] {
                for kind in [Kind::Pingpong, Kind::Window] {
                    let rows = run_local(
                        p,
                        kind,
                        &BenchConfig {
                            reliability: rel,
                            ..quick()
                        },
                    )
                    .unwrap();
                    assert_eq!(
                        rows.iter().map(|r| r.size).collect::<Vec<_>>(),
                        quick().sizes,
                        "{p} {rel:?} {kind:?}"
                    );
                    assert!(rows.iter().all(|r| r.value.is_finite() && r.value >= 0.0));
                }
            }
        }
    }

    #[test]
    fn raw_baselines_run() {
        for s in [RawSocket::Tcp, RawSocket::Unix] {
            for kind in [Kind::Pingpong, Kind::Window] {
                let rows = run_raw(s, kind, &quick()).unwrap();
                assert_eq!(
                    rows.iter().map(|r| r.size).collect::<Vec<_>>(),
                    vec![8, 4096, 100_000],
                    "no size 0"
                );
            }
        }
    }

    #[test]
    fn osu_table_has_the_osu_header() {
        let t = osu_table(
            "x",
            Kind::Window,
            &[Row {
                size: 8,
                value: 1.5,
            }],
        );
        assert!(t.contains("# Size      Bandwidth (MB/s)\n8 "));
        assert!(osu_table("x", Kind::Pingpong, &[]).contains("Latency (us)"));
    }
}
