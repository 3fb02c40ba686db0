//! Completion queues (`VipCreateCQ`, `VipCQDone`, `VipCQWait`, `VipResizeCQ`).
//!
//! As in VIA, a CQ does not take descriptors off their work queues: it records *which* work
//! queue of *which* VI has a completion, and the consumer then calls `send_done`/`recv_done`
//! on that VI. One CQ can gather many VIs so a server polls one place.

use std::collections::VecDeque;
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, poll};
use rustix::io::Errno;

use crate::engine::ViCore;
use crate::error::{Result, ViaError};
use crate::link::{SharedFd, timespec};
use crate::lock::FastMutex;
use crate::wire::SLICE;

/// Which work queue of a VI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkQueue {
    Send,
    Recv,
}

/// Identifies a VI within its NIC (returned by CQ polls).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ViId(pub u32);

pub(crate) struct CqShared {
    entries: Mutex<VecDeque<(u32, WorkQueue)>>,
    capacity: Mutex<usize>,
    overflowed: std::sync::atomic::AtomicBool,
    members: Mutex<Vec<Weak<FastMutex<ViCore>>>>,
    /// When a poll last asked the kernel about the socket members and got no entry
    /// ([`CompletionQueue::done`]).
    sockets_quiet_at: Mutex<Option<Instant>>,
    /// [`KERNEL_POLL_GAP`] (tests lengthen it to see the gate without timing anything).
    kernel_poll_gap: Duration,
}

impl CqShared {
    pub(crate) fn push(&self, vi: u32, q: WorkQueue) {
        let cap = *self.capacity.lock().unwrap_or_else(|e| e.into_inner());
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if e.len() >= cap {
            self.overflowed
                .store(true, std::sync::atomic::Ordering::Relaxed);
        } else {
            e.push_back((vi, q));
        }
    }
    pub(crate) fn attach(&self, core: &Arc<FastMutex<ViCore>>) {
        self.members
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::downgrade(core));
    }
}

/// A completion queue. Attach work queues to it in [`crate::Nic::create_vi`].
#[derive(Clone)]
pub struct CompletionQueue {
    pub(crate) shared: Arc<CqShared>,
}

impl CompletionQueue {
    pub(crate) fn new(capacity: usize) -> Result<Self> {
        check_capacity(capacity)?;
        Ok(CompletionQueue {
            shared: Arc::new(CqShared {
                entries: Mutex::new(VecDeque::new()),
                capacity: Mutex::new(capacity),
                overflowed: false.into(),
                members: Mutex::new(Vec::new()),
                sockets_quiet_at: Mutex::new(None),
                kernel_poll_gap: KERNEL_POLL_GAP,
            }),
        })
    }

    /// The VIs attached, still alive.
    fn members(&self) -> Vec<Arc<FastMutex<ViCore>>> {
        self.shared
            .members
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Handles what arrived on every member and sends the acks they owe; members on
    /// sockets by [`CompletionQueue::progress_sockets`].
    fn progress_members(&self, gated: bool) {
        let mut sockets: Vec<(Arc<FastMutex<ViCore>>, SharedFd)> = Vec::new();
        for m in self.members() {
            let mut core = m.lock();
            if let WaitSource::Fd(fd) = core.wait_source() {
                drop(core);
                sockets.push((m, fd));
                continue;
            }
            core.progress();
            core.flush_ack();
        }
        if !sockets.is_empty() {
            self.progress_sockets(&sockets, gated);
        }
    }

    /// The members on sockets are asked first, all at once, whether anything arrived (one
    /// `poll(2)` with a zero timeout), and only those that say so are read: a poll that
    /// finds nothing then costs one system call, not one read per member (MP_Lite polls a
    /// CQ of three tcp VIs 100 times before it waits; docs/vipl.md). If `gated`, they are
    /// not asked again within [`KERNEL_POLL_GAP`] of an asking that gave no entry (acks owed
    /// are sent all the same).
    fn progress_sockets(&self, sockets: &[(Arc<FastMutex<ViCore>>, SharedFd)], gated: bool) {
        let now = Instant::now();
        let quiet_at = || {
            self.shared
                .sockets_quiet_at
                .lock()
                .unwrap_or_else(|e| e.into_inner())
        };
        let gap = self.shared.kernel_poll_gap;
        let recently = quiet_at().is_some_and(|t| now.duration_since(t) < gap);
        let arrived = if gated && recently {
            vec![false; sockets.len()]
        } else if sockets.len() == 1 {
            vec![true]
        } else {
            readable_now(sockets.iter().map(|(_, fd)| fd))
        };
        let asked = arrived.iter().any(|&a| a);
        for ((m, _), arrived) in sockets.iter().zip(arrived) {
            let mut core = m.lock();
            if arrived {
                core.progress();
            }
            core.flush_ack();
        }
        if !(gated && recently) {
            let none = self
                .shared
                .entries
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty();
            *quiet_at() = (none || !asked).then_some(now);
        }
    }

    /// `VipCQDone`: the next (VI, work queue) with a completion, if any.
    ///
    /// On sockets, asking the kernel costs a system call (~0.75 us here): a poll within
    /// [`KERNEL_POLL_GAP`] of one that found nothing does not ask again. A program that
    /// polls many times before it waits (MP_Lite: 100 times) then reaches its wait, which
    /// blocks in the kernel, in microseconds instead of burning ~75 us of the CPU its peer
    /// may need (docs/vipl.md).
    pub fn done(&self) -> Result<Option<(ViId, WorkQueue)>> {
        self.poll(true)
    }

    fn poll(&self, gated: bool) -> Result<Option<(ViId, WorkQueue)>> {
        if self
            .shared
            .overflowed
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Err(ViaError::ResourceExhausted(
                "completion queue overflowed".into(),
            ));
        }
        let pop = || {
            self.shared
                .entries
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pop_front()
        };
        if let Some((v, q)) = pop() {
            return Ok(Some((ViId(v), q)));
        }
        self.progress_members(gated);
        Ok(pop().map(|(v, q)| (ViId(v), q)))
    }

    /// `VipCQWait`: blocks until an entry arrives or `timeout` passes.
    ///
    /// How it sleeps depends on its members' links ([`Link::readiness_fd`]):
    ///
    /// * every connected member has a descriptor (tcp): it blocks in `poll(2)` on all of
    ///   them at once, as a VI's own wait on tcp blocks in its read: the kernel wakes it
    ///   when a member's bytes arrive, and it burns no CPU meanwhile;
    /// * otherwise (a member on shm, whose doorbell is a futex no `poll` sees) by the VI
    ///   waits' policy ([`crate::link::backoff`]): polls for
    ///   [`crate::link::backoff::DEFAULT_SPIN`] (a message from a peer on another core
    ///   arrives within it, and a sleep would cost the wake-up latency) unless a member's
    ///   peer last waited on this CPU, then yields for [`crate::link::backoff::YIELD_FOR`],
    ///   then naps with a growing back-off (capped at 1.3 ms), each nap a `poll(2)` on the
    ///   members that have a descriptor, so a tcp member's message ends it early.
    ///
    /// Every sleep is at most 20 ms (the wire's slice), so a member connected meanwhile is
    /// seen.
    ///
    /// Why the CPU check: two processes on one core, each spinning its whole budget in turn
    /// before the other could answer, cost 2 x 50 us per round trip (MP_Lite's pong over
    /// libvipl, which waits on CQs: 118-122 us round trips pinned to one core against 1-4 us
    /// on two, docs/vipl.md). Why `poll` on tcp: a tcp link has no such CPU hint, so the
    /// same pong over tcp spun, yielded and napped its way to ~180 us one-way on a loaded
    /// machine, against 30 us for a VI's own blocking wait.
    ///
    /// [`Link::readiness_fd`]: crate::link::Link::readiness_fd
    pub fn wait(&self, timeout: Option<Duration>) -> Result<(ViId, WorkQueue)> {
        use crate::link::backoff::{Backoff, Step};
        let start = Instant::now();
        let deadline = timeout.map(|t| start + t);
        let backoff = Backoff::default();
        let mut sources = self.survey();
        let mut round = 0u32;
        loop {
            if let Some(e) = self.poll(false)? {
                return Ok(e);
            }
            let now = Instant::now();
            let left = deadline.map_or(SLICE, |d| d.saturating_duration_since(now).min(SLICE));
            if left.is_zero() {
                return Err(ViaError::Timeout);
            }
            if sources.kernel_only() {
                block_on(&sources.fds, left)?;
            } else {
                match backoff.step(now - start, sources.shares_cpu) {
                    Step::Spin => {
                        std::hint::spin_loop();
                        continue;
                    }
                    Step::Yield => {
                        std::thread::yield_now();
                        continue;
                    }
                    Step::Block => {
                        let nap = Duration::from_micros(10u64 << round.min(7)).min(left);
                        round = round.saturating_add(1);
                        if sources.fds.is_empty() {
                            std::thread::sleep(nap);
                        } else {
                            block_on(&sources.fds, nap)?;
                        }
                    }
                }
            }
            sources = self.survey();
        }
    }

    /// What the members give a wait to sleep on, right now (and, on shm, the CPU this
    /// thread waits on published to their peers).
    fn survey(&self) -> Survey {
        let mut s = Survey::default();
        for m in self.members() {
            let core = m.lock();
            s.shares_cpu |= core.peer_shares_cpu();
            match core.wait_source() {
                WaitSource::Unconnected => {}
                WaitSource::Ready => s.ready = true,
                WaitSource::Fd(fd) => s.fds.push(fd),
                WaitSource::Polling => s.polling = true,
            }
        }
        s
    }

    /// `VipResizeCQ`.
    pub fn resize(&self, capacity: usize) -> Result<()> {
        check_capacity(capacity)?;
        *self
            .shared
            .capacity
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = capacity;
        Ok(())
    }
}

/// What a member VI gives a CQ wait to sleep on ([`ViCore::wait_source`]).
pub(crate) enum WaitSource {
    /// Not connected: nothing can arrive on it.
    Unconnected,
    /// Bytes already read off its link wait to be handled: no sleeping.
    Ready,
    /// A descriptor that turns readable when bytes arrive (tcp's socket).
    Fd(SharedFd),
    /// A link that can only be polled (shm).
    Polling,
}

/// The members' wait sources, gathered before a CQ wait sleeps.
#[derive(Default)]
struct Survey {
    fds: Vec<SharedFd>,
    /// A connected member can only be polled.
    polling: bool,
    /// A member has bytes to handle already.
    ready: bool,
    /// A member's peer last waited on this CPU ([`crate::link::Link::peer_shares_cpu`]).
    shares_cpu: bool,
}

impl Survey {
    /// True if the kernel can wake the wait for every connected member (and one is).
    fn kernel_only(&self) -> bool {
        !self.fds.is_empty() && !self.polling && !self.ready
    }
}

/// Blocks until one of `fds` is readable (or its peer hung up) or `timeout` passes;
/// spurious returns are fine, the caller looks again.
fn block_on(fds: &[SharedFd], timeout: Duration) -> Result<()> {
    let mut polls: Vec<PollFd<'_>> = fds
        .iter()
        .map(|f| PollFd::from_borrowed_fd(f.as_fd(), PollFlags::IN))
        .collect();
    match poll(&mut polls, Some(&timespec(timeout))) {
        Ok(_) | Err(Errno::INTR) => Ok(()),
        Err(e) => Err(ViaError::Io(e.into())),
    }
}

/// How long after a poll that asked the kernel about the socket members and got nothing a
/// [`CompletionQueue::done`] answers without asking again.
pub const KERNEL_POLL_GAP: Duration = Duration::from_micros(5);

/// Which of `fds` have bytes (or a hung-up peer) right now; all of them if the kernel
/// cannot say (then the caller reads each, as it would without asking).
fn readable_now<'a>(fds: impl Iterator<Item = &'a SharedFd>) -> Vec<bool> {
    let mut polls: Vec<PollFd<'_>> = fds
        .map(|f| PollFd::from_borrowed_fd(f.as_fd(), PollFlags::IN))
        .collect();
    match poll(&mut polls, Some(&timespec(Duration::ZERO))) {
        Ok(_) => polls.iter().map(|p| !p.revents().is_empty()).collect(),
        Err(_) => vec![true; polls.len()],
    }
}

fn check_capacity(capacity: usize) -> Result<()> {
    if capacity == 0 || capacity > 1 << 20 {
        return Err(ViaError::InvalidParameter(format!(
            "CQ capacity must be in 1..=1048576, got {capacity}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::*;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// Pins the calling thread to the CPU it runs on, so the CPU it publishes stays true.
    #[allow(unsafe_code)]
    fn pin_here() {
        // SAFETY: `sched_getcpu` takes no arguments; `set` is a zeroed `cpu_set_t` owned
        // here, filled by `CPU_SET` and read by `sched_setaffinity` for this thread (0).
        unsafe {
            let cpu = libc::sched_getcpu();
            assert!(cpu >= 0);
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu as usize, &mut set);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
                0
            );
        }
    }

    /// CPU time and voluntary context switches (sleeps) of the calling thread so far.
    #[allow(unsafe_code)]
    fn thread_usage() -> (Duration, i64) {
        // SAFETY: `ru` is a zeroed `rusage` owned here, which `getrusage` fills for the
        // calling thread; nothing else refers to it.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            assert_eq!(libc::getrusage(libc::RUSAGE_THREAD, &mut ru), 0);
            ru
        };
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        (tv(ru.ru_utime) + tv(ru.ru_stime), ru.ru_nvcsw)
    }

    /// `n` connections on provider `p`, loopback: the server's VIs report their receives
    /// to `cq`.
    struct Connected {
        server: Nic,
        client: Nic,
        cq: CompletionQueue,
        svs: Vec<Vi>,
        cvs: Vec<Vi>,
        ptags: (Ptag, Ptag),
    }

    fn connected(p: &str, name: &str, n: usize) -> Connected {
        connected_to(p, name, n, None)
    }

    /// As [`connected`], the server's VIs reporting to `cq` if given.
    fn connected_to(p: &str, name: &str, n: usize, cq: Option<&CompletionQueue>) -> Connected {
        let t = Some(Duration::from_secs(30));
        let url = match p {
            "shm" => format!("shm:///icn-via-cq-{name}/{}", std::process::id()),
            _ => "tcp://127.0.0.1:0".to_string(),
        };
        let server = Nic::open(&url).unwrap();
        let addr = server.address().to_string();
        let client = Nic::open(&format!("{p}://")).unwrap();
        let cq = cq
            .cloned()
            .unwrap_or_else(|| server.create_cq(4 * n).unwrap());
        let (ps, pc) = (server.create_ptag(), client.create_ptag());
        let attrs = |pt| ViAttributes::new(pt, Reliability::ReliableDelivery);
        let (mut svs, mut cvs) = (Vec::new(), Vec::new());
        for _ in 0..n {
            let sv = server.create_vi(attrs(ps), None, Some(&cq)).unwrap();
            let cv = client.create_vi(attrs(pc), None, None).unwrap();
            std::thread::scope(|s| {
                let acc = s.spawn(|| server.connect_wait(name.as_bytes(), t).unwrap().accept(&sv));
                client
                    .connect_request(&cv, &addr, name.as_bytes(), t)
                    .unwrap();
                acc.join().unwrap().unwrap();
            });
            svs.push(sv);
            cvs.push(cv);
        }
        Connected {
            server,
            client,
            cq,
            svs,
            cvs,
            ptags: (ps, pc),
        }
    }

    /// An 8-byte region of `nic` holding `text`.
    fn region(nic: &Nic, ptag: Ptag, text: &[u8; 8]) -> MemRegion {
        let m = nic.register_mem(8, MemAttributes::local(ptag)).unwrap();
        m.write(0, text).unwrap();
        m
    }

    /// A completion queue's wait spins only if no member's peer last waited on the
    /// waiter's CPU: both ends of one shm connection polled from one pinned thread see each
    /// other there; over tcp there is no hint.
    #[test]
    fn a_cq_wait_sees_a_peer_on_its_own_cpu() {
        for p in ["shm", "tcp"] {
            let c = connected(p, "cpu", 1);
            pin_here();
            let shares = || c.cq.members().iter().any(|m| m.lock().peer_shares_cpu());
            shares(); // publishes this CPU for the server's side
            let peer = c.cvs[0].core().peer_shares_cpu();
            assert_eq!(peer, p == "shm", "{p}: the peer sees the CQ's side here");
            assert_eq!(
                shares(),
                p == "shm",
                "{p}: the CQ's wait sees its peer here"
            );
        }
    }

    /// A CQ wait on tcp blocks in the kernel on its member's socket until the message
    /// comes: while it waits (~300 ms) its thread burns almost no CPU and goes to sleep
    /// about once per `wire::SLICE` (20 ms), the longest sleep of any wait. The
    /// back-off it replaces (spin, yield, then naps of at most 1.3 ms) went to sleep more
    /// than 200 times in 300 ms.
    #[test]
    fn a_cq_wait_on_tcp_sleeps_in_the_kernel_until_the_message_comes() {
        let c = connected("tcp", "sleep", 1);
        let (sv, cv) = (&c.svs[0], &c.cvs[0]);
        let dst = region(&c.server, c.ptags.0, b"........");
        let src = region(&c.client, c.ptags.1, b"arrived!");
        sv.post_recv(Descriptor::recv([Segment::new(dst.handle(), 0, 8)]))
            .unwrap();
        let (entry, waited, (cpu, sleeps)) = std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let (cpu0, sleeps0) = thread_usage();
                let t0 = Instant::now();
                let entry = c.cq.wait(Some(Duration::from_secs(30)));
                let waited = t0.elapsed();
                let (cpu1, sleeps1) = thread_usage();
                (entry, waited, (cpu1 - cpu0, sleeps1 - sleeps0))
            });
            std::thread::sleep(Duration::from_millis(300));
            cv.post_send(Descriptor::send([Segment::new(src.handle(), 0, 8)]))
                .unwrap();
            waiter.join().unwrap()
        });
        assert_eq!(entry.unwrap(), (sv.id(), WorkQueue::Recv));
        let done = sv.recv_done().expect("the CQ's entry names a completion");
        assert_eq!(done.length, 8);
        assert_eq!(dst.with(|b| b.to_vec()), b"arrived!");
        let slices = (waited.as_micros() / crate::wire::SLICE.as_micros()) as i64;
        assert!(
            sleeps <= 2 * slices + 8,
            "{sleeps} sleeps in {waited:?}: the wait napped instead of blocking on the socket"
        );
        assert!(
            cpu < Duration::from_millis(5),
            "{cpu:?} of CPU in {waited:?} of waiting"
        );
    }

    /// A CQ of several tcp members asks the kernel once which of them have bytes and reads
    /// those (`progress_members`): messages on the second and third of three VIs, sent in
    /// that order, come out of the CQ as the entries of exactly those VIs, in that order,
    /// and nothing more.
    #[test]
    fn a_cq_of_tcp_members_reads_the_ones_the_kernel_names() {
        let c = connected("tcp", "many", 3);
        let dst = region(&c.server, c.ptags.0, b"........");
        let src = region(&c.client, c.ptags.1, b"for vi 1");
        for sv in &c.svs {
            sv.post_recv(Descriptor::recv([Segment::new(dst.handle(), 0, 8)]))
                .unwrap();
        }
        assert_eq!(c.cq.done().unwrap(), None, "nothing sent yet");
        for k in [1, 2] {
            c.cvs[k]
                .post_send(Descriptor::send([Segment::new(src.handle(), 0, 8)]))
                .unwrap();
        }
        let t = Some(Duration::from_secs(30));
        for k in [1, 2] {
            assert_eq!(
                c.cq.wait(t).unwrap(),
                (c.svs[k].id(), WorkQueue::Recv),
                "entry {k}"
            );
            assert_eq!(c.svs[k].recv_done().unwrap().length, 8);
        }
        assert_eq!(c.cq.done().unwrap(), None, "two messages, two entries");
        assert!(c.svs[0].recv_done().is_none());
    }

    /// A CQ with members on both providers (a CQ belongs to no NIC) waits by the shm
    /// policy, its naps being polls on the tcp member: a message on either, sent once the
    /// wait is napping, ends the wait with a receive entry and that VI's completion. (VI
    /// ids are numbered per NIC, so the entries of the two VIs carry the same id here.)
    #[test]
    fn a_cq_over_shm_and_tcp_members_delivers_both() {
        let shm = connected("shm", "mixed", 1);
        let tcp = connected_to("tcp", "mixed", 1, Some(&shm.cq));
        let t = Some(Duration::from_secs(30));
        for c in [&tcp, &shm, &tcp] {
            let dst = region(&c.server, c.ptags.0, b"........");
            let src = region(&c.client, c.ptags.1, b"one of 2");
            c.svs[0]
                .post_recv(Descriptor::recv([Segment::new(dst.handle(), 0, 8)]))
                .unwrap();
            std::thread::scope(|s| {
                // sent once the wait has gone past its spin and yield into its naps
                s.spawn(|| {
                    std::thread::sleep(Duration::from_millis(50));
                    c.cvs[0]
                        .post_send(Descriptor::send([Segment::new(src.handle(), 0, 8)]))
                        .unwrap();
                });
                assert_eq!(shm.cq.wait(t).unwrap(), (c.svs[0].id(), WorkQueue::Recv));
            });
            let other = if std::ptr::eq(c, &tcp) { &shm } else { &tcp };
            assert!(other.svs[0].recv_done().is_none(), "only the sender's peer");
            assert_eq!(c.svs[0].recv_done().unwrap().length, 8);
            assert_eq!(dst.with(|b| b.to_vec()), b"one of 2");
        }
        assert_eq!(shm.cq.done().unwrap(), None);
    }

    /// A poll of a tcp CQ within the gap of one that found nothing does not ask the kernel,
    /// even with the message in the socket; the next poll past the gap, and every wait,
    /// do. (The gap is lengthened to an hour here, so nothing depends on timing.)
    #[test]
    fn a_cq_poll_does_not_ask_the_kernel_again_within_the_gap() {
        let mut cq = CompletionQueue::new(4).unwrap();
        Arc::get_mut(&mut cq.shared).unwrap().kernel_poll_gap = Duration::from_secs(3600);
        let c = connected_to("tcp", "gap", 1, Some(&cq));
        let dst = region(&c.server, c.ptags.0, b"........");
        let src = region(&c.client, c.ptags.1, b"in there");
        for _ in 0..3 {
            c.svs[0]
                .post_recv(Descriptor::recv([Segment::new(dst.handle(), 0, 8)]))
                .unwrap();
        }
        let sent = || {
            c.cvs[0]
                .post_send(Descriptor::send([Segment::new(src.handle(), 0, 8)]))
                .unwrap();
            // until the message is in the server's socket
            let fds: Vec<_> = cq
                .members()
                .iter()
                .filter_map(|m| match m.lock().wait_source() {
                    super::WaitSource::Fd(fd) => Some(fd),
                    _ => None,
                })
                .collect();
            super::block_on(&fds, Duration::from_secs(30)).unwrap();
        };
        assert_eq!(cq.done().unwrap(), None, "nothing sent: the kernel said so");
        sent();
        assert_eq!(cq.done().unwrap(), None, "within the gap: not asked");
        let entry = (c.svs[0].id(), WorkQueue::Recv);
        assert_eq!(cq.wait(Some(Duration::from_secs(30))).unwrap(), entry);
        // a poll that found something leaves the gate open
        sent();
        assert_eq!(
            cq.done().unwrap(),
            Some(entry),
            "asked after a fruitful poll"
        );
        assert_eq!(
            cq.done().unwrap(),
            None,
            "asked, and empty: the gate closes"
        );
        sent();
        assert_eq!(cq.done().unwrap(), None, "within the gap again: not asked");
        *cq.shared.sockets_quiet_at.lock().unwrap() =
            Some(Instant::now() - Duration::from_secs(7200));
        assert_eq!(cq.done().unwrap(), Some(entry), "past the gap: asked");
        for _ in 0..3 {
            assert_eq!(c.svs[0].recv_done().unwrap().length, 8);
        }
    }
}
