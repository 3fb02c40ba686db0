//! The `shm` provider's link: a [`RingPair`] in a memfd mapped by both processes, plus the
//! Unix socket the connection was set up on, kept open only to notice the peer's death.
//!
//! Connection set-up (the connection manager playing VIA's kernel agent): the client creates
//! a memfd of [`area_len`]`(RING_CAP)` bytes, maps it, writes the header, and passes the fd
//! over the server's Unix socket (a file in the user's private directory, [`crate::private_dir`];
//! each side checks the other's uid with `SO_PEERCRED`) with `SCM_RIGHTS`; the server maps the same memory.
//! From then on the data path is user-level: a send is a copy into the ring plus, only if the
//! peer sleeps, one `futex` wake.
//!
//! Waiting follows [`super::backoff`]: poll for the VI's spin budget (catching the reply of a
//! ping-pong without a system call) unless the peer last ran on our CPU, then poll while
//! yielding the CPU (a loaded machine's peer gets to run), then sleep on the futex in slices
//! of at most 10 ms, checking the socket for the peer's death between slices.

#![allow(unsafe_code)]

use std::fs::File;
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use memmap2::MmapOptions;
use rustix::event::{PollFd, PollFlags, poll};
use rustix::fs::{MemfdFlags, memfd_create};
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, recvmsg, sendmsg,
};
use rustix::thread::futex;

use super::backoff::{Backoff, Step};
use super::{Link, Record, closed, timespec};
use crate::ring::{RecordRead, RingPair, area_len};

/// Bytes per ring direction. Small enough that both rings stay in a core's L2 (here 1 MiB),
/// so a small message's line is found there rather than in L3: measured against 2 MiB rings,
/// 8-byte OSU means of 1000 round trips 0.16-0.17 against 0.17-0.23 µs, at the price of
/// large-message streaming (window at 1 MiB ~17 against ~27 GB/s; OpenMPI's is 8-10).
pub const RING_CAP: usize = 256 << 10;
/// Longest futex sleep between liveness checks.
const SLEEP_SLICE: Duration = Duration::from_millis(10);
/// A server NIC's listening socket: a filesystem Unix socket in the user's private directory
/// ([`crate::private_dir`]), removed when the listener is dropped. Only peers whose
/// `SO_PEERCRED` uid is ours (or on `ICN_VIA_ALLOW_UIDS`) are accepted.
pub struct ShmListener {
    listener: UnixListener,
    path: PathBuf,
    /// Connections refused so far (another user's): the first is reported on stderr.
    refused: u64,
}

impl ShmListener {
    pub fn bind(name: &str) -> io::Result<Self> {
        let dir = crate::private_dir::dir()?;
        let path = crate::private_dir::endpoint_file(&dir, name);
        let listener = match UnixListener::bind(&path) {
            Ok(l) => l,
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
                // A socket left by a killed NIC of ours is replaced; a live one is not.
                let m = std::fs::symlink_metadata(&path)?;
                let stale = m.file_type().is_socket()
                    && m.uid() == crate::private_dir::uid()
                    && UnixStream::connect(&path)
                        .is_err_and(|e| e.kind() == io::ErrorKind::ConnectionRefused);
                if !stale {
                    return Err(io::Error::new(
                        io::ErrorKind::AddrInUse,
                        format!("{}: {e} (a live NIC answers there)", path.display()),
                    ));
                }
                std::fs::remove_file(&path)?;
                UnixListener::bind(&path)?
            }
            Err(e) => {
                return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display())));
            }
        };
        listener.set_nonblocking(true)?;
        Ok(ShmListener {
            listener,
            path,
            refused: 0,
        })
    }

    /// Accepts a connection if one waits, refusing (closing at once) a peer of another user;
    /// `Ok(None)` if none was waiting or it was refused. The area is not received yet:
    /// [`establish`] does that, with a deadline.
    pub fn accept(&mut self) -> io::Result<Option<UnixStream>> {
        let sock = match self.listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(e),
        };
        let uid = rustix::net::sockopt::socket_peercred(&sock)?.uid.as_raw();
        if !crate::private_dir::peer_allowed(uid)? {
            if self.refused == 0 {
                eprintln!(
                    "icn-via: {}: refused a connection from uid {uid} (not ours, not in \
                     ICN_VIA_ALLOW_UIDS)",
                    self.path.display()
                );
            }
            self.refused += 1;
            return Ok(None);
        }
        Ok(Some(sock))
    }
}

impl Drop for ShmListener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Server side of a connection [`ShmListener::accept`] took: receives and maps the area its
/// client passes, waiting at most until `deadline`.
pub fn establish(sock: UnixStream, deadline: Instant) -> io::Result<ShmLink> {
    sock.set_nonblocking(false)?;
    let left = deadline.saturating_duration_since(Instant::now());
    sock.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
    let fd = receive_fd(&sock)?;
    let ring = map_area(fd, None, 1)?;
    ShmLink::new(ring, sock)
}

impl AsFd for ShmListener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.listener.as_fd()
    }
}

/// Client side: connects to the NIC listening as `name` and shares a fresh area with it,
/// after checking that the NIC's process is ours (or an allowed user's).
pub fn dial(name: &str) -> io::Result<ShmLink> {
    let dir = crate::private_dir::dir_to_dial()?;
    let path = crate::private_dir::endpoint_file(&dir, name);
    let sock = UnixStream::connect(&path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("no shm NIC listening at {} ({e})", path.display()),
        )
    })?;
    let uid = rustix::net::sockopt::socket_peercred(&sock)?.uid.as_raw();
    if !crate::private_dir::peer_allowed(uid)? {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{}: the listening process is uid {uid}, not us nor in ICN_VIA_ALLOW_UIDS; refused",
                path.display()
            ),
        ));
    }
    // Named after the server so a leak is attributable (visible in /proc/<pid>/maps).
    let fd = memfd_create(format!("icnlab-via:{name}"), MemfdFlags::CLOEXEC)?;
    let len = area_len(RING_CAP);
    File::from(fd.try_clone()?).set_len(len as u64)?;
    let ring = map_area(fd.try_clone()?, Some(len), 0)?;
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [fd.as_fd()];
    control.push(SendAncillaryMessage::ScmRights(&fds));
    sendmsg(
        &sock,
        &[IoSlice::new(b"V")],
        &mut control,
        SendFlags::empty(),
    )?;
    // `fd` closes here; the mapping keeps the memory, and once both sides unmap it is gone.
    ShmLink::new(ring, sock)
}

fn receive_fd(sock: &UnixStream) -> io::Result<OwnedFd> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8; 1];
    let msg = recvmsg(
        sock,
        &mut [IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    if msg.bytes != 1 {
        return Err(closed());
    }
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(mut fds) = m
            && let Some(fd) = fds.next()
        {
            return Ok(fd);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "connection request carried no memory",
    ))
}

/// Maps the memfd and builds side `side`'s view. `init_len` is set by the creator, which
/// writes the header; the other side validates what it finds.
fn map_area(fd: OwnedFd, init_len: Option<usize>, side: usize) -> io::Result<RingPair> {
    let file = File::from(fd);
    let len = file.metadata()?.len();
    if len < crate::ring::CTRL_SIZE as u64 || len > (area_len(RING_CAP) * 4) as u64 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "shared area of a bad size",
        ));
    }
    // SAFETY: the file is a memfd shared only with the peer process; mapping it shared is
    // the point. The peer may write any byte at any time, which `RingPair` is written to
    // tolerate (all control words are atomics and validated, data copies are bounded).
    //
    // Populated (MAP_POPULATE): every page is allocated and mapped now, at connection time,
    // rather than by a page fault on the data path every 64 records during the first lap
    // (~1 µs each, in both processes, which showed as a slow first few thousand messages).
    let mut map = unsafe { MmapOptions::new().populate().map_mut(&file)? };
    let base = map.as_mut_ptr();
    let len = map.len();
    if let Some(l) = init_len {
        debug_assert_eq!(l, len);
        // SAFETY: the area is freshly created, zero-filled by ftruncate, page-aligned, `len`
        // bytes long, and not yet shared (the fd has not been sent).
        unsafe { RingPair::init(base, len) };
    }
    // SAFETY: `base` is the page-aligned start of a `len`-byte mapping owned by `map`, which
    // moves into the view (moving an MmapMut does not move the mapping). Each process builds
    // exactly one view, the client side 0 and the server side 1.
    unsafe { RingPair::from_raw(base, len, side, Box::new(map)) }
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

pub struct ShmLink {
    ring: RingPair,
    sock: UnixStream,
    backoff: Backoff,
    /// The peer process, from the kernel (`SO_PEERCRED`): whose memory a cross-memory read
    /// reads ([`super::cma`]), whose shared regions we map ([`crate::shared_mem`]).
    peer_pid: Option<i32>,
    /// The peer's shared regions mapped so far.
    peer_maps: crate::shared_mem::PeerMaps,
}

impl ShmLink {
    fn new(ring: RingPair, sock: UnixStream) -> io::Result<Self> {
        sock.set_nonblocking(true)?;
        let peer_pid = rustix::net::sockopt::socket_peercred(&sock)
            .ok()
            .map(|c| c.pid.as_raw_nonzero().get());
        ring.set_area_addr(ring.area_addr());
        Ok(ShmLink {
            ring,
            sock,
            backoff: Backoff::default(),
            peer_pid,
            peer_maps: Default::default(),
        })
    }

    fn wake_peer(&self) {
        if self.ring.ring_peer() {
            let _ = futex::wake(self.ring.peer_bell(), futex::Flags::empty(), 1);
        }
    }

    /// True once the peer has closed its end of the set-up socket (it exited or dropped the
    /// link). The peer never writes to the socket after set-up, so readable means closed.
    fn peer_gone(&self) -> bool {
        let mut fds = [PollFd::new(&self.sock, PollFlags::IN)];
        match poll(&mut fds, Some(&timespec(Duration::ZERO))) {
            Ok(0) => false,
            Ok(_) => true,
            Err(_) => false,
        }
    }
}

/// The CPU this thread runs on, from the C library: glibc reads it from the thread's rseq
/// area (one load) where the kernel supports rseq. Not rustix's `sched_getcpu`: its vDSO
/// lookup faults under valgrind (rustix issue 1559), which made the callgrind measurements
/// of the small-message path (`examples/swcost.rs`) impossible.
fn current_cpu() -> Option<usize> {
    // SAFETY: `sched_getcpu` takes no arguments and touches no memory of ours; it returns
    // the CPU number or -1 with errno set.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

fn corrupt(e: crate::ring::RingError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl Link for ShmLink {
    /// Publishes the CPU we wait on and says whether the peer last waited on the same one:
    /// then spinning would only keep it from running ([`super::backoff`]). One load of
    /// glibc's rseq area (or a vDSO call) and one load of a line the peer writes only when
    /// it migrates.
    fn peer_shares_cpu(&self) -> bool {
        let Some(cpu) = current_cpu() else {
            return false;
        };
        self.ring.set_cpu(cpu);
        self.ring.peer_cpu() == Some(cpu)
    }

    fn write_some(&mut self, bufs: &[&[u8]]) -> io::Result<usize> {
        let n = self.ring.write(bufs).map_err(corrupt)?;
        if n > 0 {
            self.wake_peer();
        } else if bufs.iter().any(|b| !b.is_empty()) && self.peer_gone() {
            return Err(closed());
        }
        Ok(n)
    }

    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (n, published) = self.ring.read(buf).map_err(corrupt)?;
        if published {
            // Room was freed (published once per quarter ring): a writer blocked on a full
            // ring may be asleep. Not per message: the fence would sit on the critical path.
            self.wake_peer();
        }
        Ok(n)
    }

    fn read_record(&mut self, buf: &mut [u8]) -> io::Result<Record> {
        Ok(match self.ring.read_record(buf).map_err(corrupt)? {
            RecordRead::Empty => Record::Empty,
            RecordRead::Unsuitable => Record::Unsuitable,
            RecordRead::Taken { len, published } => {
                if published {
                    self.wake_peer();
                }
                Record::Taken(len)
            }
        })
    }

    fn wait(&mut self, want_write: bool, timeout: Duration) -> io::Result<()> {
        let ready = |r: &RingPair| r.readable() || (want_write && r.writable());
        let shares = self.peer_shares_cpu();
        // The common case (a ping-pong reply from another core) arrives within a few
        // thousand polls: don't read the clock for those.
        if self.backoff.spins_first(shares) {
            for _ in 0..self.backoff.clock_free_polls() {
                if ready(&self.ring) {
                    return Ok(());
                }
                std::hint::spin_loop();
            }
        }
        let start = Instant::now();
        loop {
            let waited = start.elapsed();
            if waited >= timeout {
                return Ok(());
            }
            match self.backoff.step(waited, shares) {
                Step::Spin => {
                    for _ in 0..256 {
                        if ready(&self.ring) {
                            return Ok(());
                        }
                        std::hint::spin_loop();
                    }
                }
                Step::Yield => {
                    if ready(&self.ring) {
                        return Ok(());
                    }
                    std::thread::yield_now();
                }
                Step::Block => break,
            }
        }
        loop {
            let seq = self
                .ring
                .my_bell()
                .load(std::sync::atomic::Ordering::SeqCst);
            self.ring.set_sleeping(true);
            if ready(&self.ring) {
                self.ring.set_sleeping(false);
                return Ok(());
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                self.ring.set_sleeping(false);
                return Ok(());
            }
            let r = futex::wait(
                self.ring.my_bell(),
                futex::Flags::empty(),
                seq,
                Some(&timespec(left.min(SLEEP_SLICE))),
            );
            self.ring.set_sleeping(false);
            match r {
                Ok(())
                | Err(
                    rustix::io::Errno::AGAIN
                    | rustix::io::Errno::TIMEDOUT
                    | rustix::io::Errno::INTR,
                ) => {}
                Err(e) => return Err(e.into()),
            }
            if ready(&self.ring) {
                return Ok(());
            }
            if self.peer_gone() {
                return Err(closed());
            }
        }
    }

    fn fast_polls(&self) -> u32 {
        if self.backoff.spins_first(self.peer_shares_cpu()) {
            // The engine's poll does more than the link's (~8×).
            self.backoff.clock_free_polls() / 8
        } else {
            0
        }
    }

    fn set_spin(&mut self, spin: Duration) {
        self.backoff.spin = spin;
    }

    /// Probes the two single-copy paths: whether the kernel lets us list the peer's fds
    /// (what opening one of its shared regions through `/proc` needs), and whether it lets
    /// us read the magic where the peer says it maps the area (cross-memory attach). Each
    /// is announced only if it works, and a sender uses only what its peer announced.
    fn on_connected(&mut self) {
        let (Some(pid), addr) = (self.peer_pid, self.ring.peer_area_addr()) else {
            return;
        };
        if std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok() {
            self.ring.set_maps_ok();
        }
        let mut magic = [0u8; 8];
        if addr != 0
            && super::cma::read(pid, addr, &mut magic).is_ok()
            && magic == crate::ring::MAGIC.to_le_bytes()
        {
            self.ring.set_cma_ok();
        }
    }

    fn cma_send_ok(&self) -> bool {
        self.ring.peer_cma_ok()
    }

    fn shared_send_ok(&self) -> bool {
        self.ring.peer_maps_ok()
    }

    fn single_copy_read(&mut self, src: super::SourceRef, dst: &mut [u8]) -> io::Result<()> {
        let pid = self.peer_pid.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, "single-copy path not set up")
        })?;
        let r = match src {
            super::SourceRef::Cma { addr } => super::cma::read(pid, addr, dst),
            super::SourceRef::Shared { fd, serial, offset } => {
                self.peer_maps.read(pid, fd, serial, offset, dst)
            }
        };
        r.map_err(|e| match e.raw_os_error() {
            // the process is gone
            Some(libc::ESRCH) => closed(),
            _ if self.peer_gone() => closed(),
            _ => e,
        })
    }

    fn provider(&self) -> &'static str {
        "shm"
    }
}
