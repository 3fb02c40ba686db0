//! Byte links between two VI endpoints: the part of a provider that moves bytes.
//!
//! The VI protocol engine (`engine`) is the same for every provider; a provider only
//! supplies a non-blocking, ordered, reliable byte pipe with a way to block until it is
//! readable or writable. TCP gives one directly; `shm` builds one from two rings in shared
//! memory with futex doorbells.

use std::io;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

pub use source::SourceRef;

pub mod backoff;
pub mod cma;
pub mod shm;
pub mod source;
pub mod tcp;

/// What [`Link::read_record`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// Nothing has arrived.
    Empty,
    /// A record of this many bytes was read.
    Taken(usize),
    /// Bytes are there but not as one whole record that fits: read the byte stream.
    Unsuitable,
}

/// A non-blocking ordered byte pipe to the peer.
pub trait Link: Send {
    /// Writes some of `bufs` (in order); `Ok(0)` means the pipe is full right now.
    fn write_some(&mut self, bufs: &[&[u8]]) -> io::Result<usize>;
    /// Reads into `buf`; `Ok(0)` means nothing is available right now. A closed peer is an
    /// error of kind `UnexpectedEof` (or a connection error).
    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize>;
    /// Blocks until the pipe is readable (or writable, if `want_write`), the peer is gone, or
    /// `timeout` passes. Spurious returns are allowed; callers re-check.
    fn wait(&mut self, want_write: bool, timeout: Duration) -> io::Result<()>;
    /// Blocks until bytes arrive (or `timeout` passes) and reads them into `head`, then
    /// `body`; `Ok(0)` on timeout. Scattering lets a frame header and its payload land in
    /// their final places in one system call on tcp. The default waits, then fills `head`
    /// only, which is also correct: callers handle any split. A provider whose wait is itself
    /// a read overrides it to save a system call.
    fn wait_read(
        &mut self,
        head: &mut [u8],
        body: &mut [u8],
        timeout: Duration,
    ) -> io::Result<usize> {
        let _ = body;
        self.wait(false, timeout)?;
        self.read_some(head)
    }
    /// Reads the next unit the peer wrote with one `write_some` call (on `shm`: one ring
    /// record) into `buf` if it has arrived whole, has not been partly read, and fits; else
    /// reads nothing. The engine's small-frame path takes a frame's header and payload in
    /// one copy this way, and a poll that finds nothing costs one load. The default says
    /// [`Record::Unsuitable`]: a byte stream has no records.
    fn read_record(&mut self, buf: &mut [u8]) -> io::Result<Record> {
        let _ = buf;
        Ok(Record::Unsuitable)
    }
    /// The stream alignment of frame payloads on this link (1: none; a power of two ≤ 64):
    /// see [`crate::frame::payload_pad`].
    fn frame_alignment(&self) -> u64 {
        1
    }
    /// How many times a wait should poll the engine before reading the clock: more than 0
    /// only where a poll that finds nothing is cheap (a load from shared memory, not a
    /// system call) and spinning is the waiting policy's first step right now
    /// ([`backoff`]).
    fn fast_polls(&self) -> u32 {
        0
    }
    /// Called once the VI's connection is set up (both sides have their links): the `shm`
    /// link probes cross-memory attach here ([`cma`]).
    fn on_connected(&mut self) {}
    /// True if a large payload may go by cross-memory attach: the peer announced it reads
    /// our memory ([`cma`]).
    fn cma_send_ok(&self) -> bool {
        false
    }
    /// True if a large payload in a shared region may go as a descriptor: the peer announced
    /// it maps our regions (`shared_mem`).
    fn shared_send_ok(&self) -> bool {
        false
    }
    /// Copies `dst.len()` bytes from `src` in the peer into `dst` (the payload of a
    /// single-copy frame). Links without it refuse.
    fn single_copy_read(&mut self, src: SourceRef, dst: &mut [u8]) -> io::Result<()> {
        let _ = (src, dst);
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "single-copy frame on a link without it",
        ))
    }
    /// Publishes the CPU the caller waits on and says whether the peer last waited on the
    /// same one ([`backoff`]): a wait elsewhere than in this link (a completion queue's)
    /// asks before it spins. Links with no such hint say false.
    fn peer_shares_cpu(&self) -> bool {
        false
    }
    /// The kernel object a wait elsewhere than in this link (a completion queue's, over
    /// many links at once) can block on with `poll(2)` until bytes arrive: the socket on
    /// tcp. `None` where a wait cannot block in the kernel on a descriptor (shm's doorbell is
    /// a futex in the shared area): such a wait polls by [`backoff`]'s policy instead.
    /// Shared, so the waiter can block without holding the VI's lock and without the
    /// descriptor being closed (and its number reused) under it.
    fn readiness_fd(&self) -> Option<SharedFd> {
        None
    }
    /// Sets the spin budget of this link's waits ([`crate::ViAttributes::spin`]); links whose
    /// waits block in the kernel ignore it.
    fn set_spin(&mut self, spin: Duration) {
        let _ = spin;
    }
    /// The provider's name.
    fn provider(&self) -> &'static str;
}

/// A descriptor shared between a link and the waits that block on it ([`Link::readiness_fd`]).
pub type SharedFd = Arc<dyn AsFd + Send + Sync>;

/// Converts a duration to a timespec for poll/futex, saturating.
pub(crate) fn timespec(d: Duration) -> rustix::time::Timespec {
    rustix::time::Timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: i64::from(d.subsec_nanos()),
    }
}

pub(crate) fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "peer closed the connection")
}
