//! Two single-producer/single-consumer record rings and two doorbells in one shared memory
//! area: the `shm` provider's "NIC". With [`crate::link::shm`] the only module with `unsafe`.
//!
//! # Why records with stamps (OpenMPI vader "fastbox" style)
//! A byte ring with a shared tail counter costs the receiver two cache misses per message
//! (the tail's line, then the data's) and the sender a third (the head the receiver rewrites
//! after every read). Here every record starts on a 64-byte cache line with a *stamp* (its
//! absolute position + 1) that the producer stores last, with `Release`; the consumer polls
//! the stamp where the next record must start, with `Acquire`. A small message is one line:
//! the poll that finds it also brings in its bytes. The consumer publishes how far it has
//! read only every `cap / 4` bytes, so the producer's view of free space costs one shared
//! line per quarter ring, not per message; no system call and no allocation per message.
//!
//! # Layout (offsets in bytes)
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `ICNVIA02` (u64) |
//! | 8 | ring capacity `cap` (u64, a power of two ≥ 128) |
//! | 128 + 128·r | ring r: published head (bytes the consumer has finished with, u64) |
//! | 1024 + 128·s | side s: doorbell counter (u32, the futex word) |
//! | 1088 + 128·s | side s: "sleeping" flag (u64) |
//! | 1536 + 128·s | side s: CPU it last waited on + 1, 0 = unknown (u64; a hint for the peer's waits, [`crate::link::backoff`]) |
//! | 1544 + 128·s | side s: the address of the area in its own process (u64; the peer's cross-memory-attach probe reads the magic there) |
//! | 1552 + 128·s | side s: 1 if it can read the peer's memory by cross-memory attach (u64; [`crate::link::cma`]) |
//! | 1560 + 128·s | side s: 1 if it maps the peer's shared regions (u64; `shared_mem`) |
//! | 4096 + cap·r | ring r data, `cap` bytes of records |
//!
//! A record at absolute position `p` (a multiple of 64) occupies `round_up(16 + len, 64)`
//! bytes at data offset `p mod cap`: `stamp = p + 1` (u64), `len` (u64), `len` payload
//! bytes. Records never wrap: a write that reaches the end of the data continues in a new
//! record at offset 0 (the link is a byte stream, so splitting is invisible). A stale stamp
//! from an earlier lap is `p − k·cap + 1 ≠ p + 1`, so slots need no clearing.
//!
//! Ring r carries bytes from side r to side 1−r. Writing the stamp *is* the doorbell; the
//! futex only matters once the peer sleeps.
//!
//! # The peer is untrusted
//! Every value read from the area is checked before use: a record's `len` must fit before
//! the end of the data (else [`RingError::Corrupt`]), the published head may not claim more
//! than `cap` bytes free, and every index is reduced modulo `cap`, so no access can leave the
//! area whatever the peer writes.
//!
//! # Memory backends
//! The protocol is generic over [`Words`], the handful of memory operations it needs. The
//! shipped backend [`RawArea`] is a mapping (or a heap buffer); `tests/loom_ring.rs` plugs in
//! a backend made of loom atomics and model-checks this very code under every interleaving
//! and weak-memory outcome loom explores.

#![allow(unsafe_code)]

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

pub const CTRL_SIZE: usize = 4096;
pub const MAGIC: u64 = u64::from_le_bytes(*b"ICNVIA02");
/// Records start on cache lines.
pub const LINE: usize = 64;
/// Stamp + length.
pub const RECORD_HEADER: usize = 16;
const MAGIC_OFF: usize = 0;
const CAP_OFF: usize = 8;

fn head_off(r: usize) -> usize {
    128 + 128 * r
}
fn bell_off(s: usize) -> usize {
    1024 + 128 * s
}
fn sleeping_off(s: usize) -> usize {
    1088 + 128 * s
}
fn cpu_off(s: usize) -> usize {
    1536 + 128 * s
}
fn addr_off(s: usize) -> usize {
    cpu_off(s) + 8
}
fn cma_off(s: usize) -> usize {
    cpu_off(s) + 16
}
fn maps_off(s: usize) -> usize {
    cpu_off(s) + 24
}
fn round_up(n: usize) -> usize {
    n.div_ceil(LINE) * LINE
}

/// The peer broke the ring protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RingError {
    #[error("shared ring corrupted by the peer")]
    Corrupt,
}

/// Total bytes of an area with rings of `cap` bytes.
pub fn area_len(cap: usize) -> usize {
    CTRL_SIZE + 2 * cap
}

/// The memory operations the ring protocol needs. Offsets are from the start of the area;
/// word offsets are 8-aligned. Implementations must check bounds (the protocol keeps every
/// access in bounds, but a safe trait cannot rely on that).
pub trait Words {
    /// Area length in bytes.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn load(&self, off: usize, order: Ordering) -> u64;
    fn store(&self, off: usize, v: u64, order: Ordering);
    /// A sequentially consistent fence.
    fn fence(&self);
    /// Copies `src` into the area at `off` (plain, unsynchronised bytes).
    fn copy_in(&self, off: usize, src: &[u8]);
    /// Copies bytes at `off` out of the area.
    fn copy_out(&self, off: usize, dst: &mut [u8]);
}

/// One side's view of a shared area: it writes ring `side` and reads ring `1 − side`.
/// Not `Sync`: one view is one producer and one consumer. Its positions are local (`Cell`s):
/// only the stamps and the published head are shared.
pub struct Ring<M: Words> {
    mem: M,
    cap: usize,
    side: usize,
    /// Producer: absolute position of the next record.
    tail: Cell<u64>,
    /// Producer: last head the consumer published, as seen here.
    head_seen: Cell<u64>,
    /// Consumer: absolute position of the current record.
    head: Cell<u64>,
    /// Consumer: the head last published.
    published: Cell<u64>,
    /// Consumer: length of the current record once its stamp was seen (`u64::MAX`: none).
    rec_len: Cell<u64>,
    /// Consumer: bytes of the current record already read.
    rec_off: Cell<u64>,
}

const NO_RECORD: u64 = u64::MAX;

/// What [`Ring::read_record`] found at the head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordRead {
    /// No record has arrived.
    Empty,
    /// A record of `len` bytes was copied out; `published` if the head was published (a
    /// producer waiting for room may need waking).
    Taken { len: usize, published: bool },
    /// A record is there but too long for the buffer, or partly read: use [`Ring::read`].
    Unsuitable,
}

impl<M: Words> Ring<M> {
    /// Side `side`'s view of an area whose header is already written (see [`init_words`]).
    /// Validates the peer-written header.
    pub fn new(mem: M, side: usize) -> Result<Self, RingError> {
        let len = mem.len();
        if len < CTRL_SIZE || side > 1 {
            return Err(RingError::Corrupt);
        }
        let cap = mem.load(CAP_OFF, Ordering::Acquire);
        if mem.load(MAGIC_OFF, Ordering::Acquire) != MAGIC
            || cap < 2 * LINE as u64
            || !cap.is_power_of_two()
            || (cap as usize)
                .checked_mul(2)
                .and_then(|c| c.checked_add(CTRL_SIZE))
                != Some(len)
        {
            return Err(RingError::Corrupt);
        }
        Ok(Ring {
            mem,
            cap: cap as usize,
            side,
            tail: Cell::new(0),
            head_seen: Cell::new(0),
            head: Cell::new(0),
            published: Cell::new(0),
            rec_len: Cell::new(NO_RECORD),
            rec_off: Cell::new(0),
        })
    }

    /// The memory backend.
    pub fn mem(&self) -> &M {
        &self.mem
    }

    /// Ring capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// This view's side.
    pub fn side(&self) -> usize {
        self.side
    }

    /// `pos mod cap`. The capacity is a power of two ([`Ring::new`] refuses others): a
    /// division here, on both sides' critical path, cost more than the rest of the ring.
    fn wrap(&self, pos: u64) -> usize {
        (pos & (self.cap as u64 - 1)) as usize
    }

    fn data_off(&self, r: usize, pos: u64) -> usize {
        CTRL_SIZE + (r & 1) * self.cap + self.wrap(pos)
    }

    /// Producer: free bytes, refreshing the consumer's published head only when the cached
    /// view shows less than a line (so the shared line is read once per quarter ring).
    fn free(&self) -> Result<usize, RingError> {
        let tail = self.tail.get();
        let mut used = tail.wrapping_sub(self.head_seen.get());
        if used + LINE as u64 > self.cap as u64 {
            let h = self.mem.load(head_off(self.side), Ordering::Acquire);
            used = tail.wrapping_sub(h);
            if used > self.cap as u64 {
                return Err(RingError::Corrupt);
            }
            self.head_seen.set(h);
        }
        Ok(self.cap - used as usize)
    }

    /// Consumer: the length of the record at the head, if its stamp says it is there.
    fn current(&self) -> Result<Option<u64>, RingError> {
        let len = self.rec_len.get();
        if len != NO_RECORD {
            return Ok(Some(len));
        }
        let r = 1 - self.side;
        let head = self.head.get();
        let at = self.data_off(r, head);
        if self.mem.load(at, Ordering::Acquire) != head.wrapping_add(1) {
            return Ok(None);
        }
        let len = self.mem.load(at + 8, Ordering::Relaxed);
        let room = (self.cap - self.wrap(head) - RECORD_HEADER) as u64;
        if len > room {
            return Err(RingError::Corrupt);
        }
        self.rec_len.set(len);
        self.rec_off.set(0);
        Ok(Some(len))
    }

    /// True if the incoming ring has a record to read. One load of one cache line: the line
    /// that will hold the next record (a corrupt ring counts as readable so the reader runs
    /// into the error).
    pub fn readable(&self) -> bool {
        !matches!(self.current(), Ok(None))
    }

    /// True if the outgoing ring has room for a record (a corrupt ring counts as writable,
    /// likewise).
    pub fn writable(&self) -> bool {
        !matches!(self.free(), Ok(f) if f < LINE)
    }

    /// Producer: copies as much of `bufs` as fits into the outgoing ring, as one record or
    /// (at the end of the data, or when the first record fills the free space) a few;
    /// returns the bytes written.
    pub fn write(&self, bufs: &[&[u8]]) -> Result<usize, RingError> {
        let r = self.side;
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if total > 0 && self.write_one_record(bufs, total)? {
            return Ok(total);
        }
        let (mut idx, mut off) = (0usize, 0usize);
        let mut written = 0;
        while written < total {
            let room = self.record_room()?;
            if room < LINE {
                break;
            }
            let n = (total - written).min(room - RECORD_HEADER);
            let tail = self.tail.get();
            let at = self.data_off(r, tail);
            // gather the next `n` bytes of `bufs` into the record
            let mut put = 0;
            while put < n {
                let b = &bufs[idx][off..];
                let k = b.len().min(n - put);
                self.mem.copy_in(at + RECORD_HEADER + put, &b[..k]);
                put += k;
                off += k;
                if off == bufs[idx].len() {
                    idx += 1;
                    off = 0;
                }
            }
            self.publish(tail, n);
            written += n;
            while idx < bufs.len() && bufs[idx].is_empty() {
                idx += 1;
            }
        }
        Ok(written)
    }

    /// Producer: the common case of [`Ring::write`], all of `bufs` (`total` bytes) as one
    /// record, if it fits before both the consumer's head and the end of the data. Returns
    /// false, having written nothing, otherwise.
    fn write_one_record(&self, bufs: &[&[u8]], total: usize) -> Result<bool, RingError> {
        if RECORD_HEADER + total > self.record_room()? {
            return Ok(false);
        }
        let tail = self.tail.get();
        let mut put = self.data_off(self.side, tail) + RECORD_HEADER;
        for b in bufs {
            self.mem.copy_in(put, b);
            put += b.len();
        }
        self.publish(tail, total);
        Ok(true)
    }

    /// Producer: bytes a record at the tail may take, header included: the free space, but
    /// not past the end of the data (records never wrap).
    fn record_room(&self) -> Result<usize, RingError> {
        Ok(self.free()?.min(self.cap - self.wrap(self.tail.get())))
    }

    /// Producer: publishes the record of `n` payload bytes already copied in at `tail` and
    /// moves the tail past it.
    fn publish(&self, tail: u64, n: usize) {
        let at = self.data_off(self.side, tail);
        self.mem.store(at + 8, n as u64, Ordering::Relaxed);
        // The stamp is stored last: the consumer acquires it before reading a byte.
        self.mem.store(at, tail.wrapping_add(1), Ordering::Release);
        self.tail
            .set(tail.wrapping_add(round_up(RECORD_HEADER + n) as u64));
    }

    /// Consumer: copies up to `buf.len()` bytes out of the incoming ring. Returns whether the
    /// published head moved (then a producer waiting for room may need waking).
    pub fn read(&self, buf: &mut [u8]) -> Result<(usize, bool), RingError> {
        let r = 1 - self.side;
        let mut got = 0;
        let mut published = false;
        // A hostile peer could chain empty records forever: one lap per call at most.
        for _ in 0..=self.cap / LINE {
            if got == buf.len() {
                break;
            }
            if got > 0 && self.rec_len.get() == NO_RECORD {
                // Stop at a record boundary once something was read: looking for the next
                // record would touch (miss on) one more line while the caller waits for
                // these bytes. A stream's next record is found by the next call.
                break;
            }
            let Some(len) = self.current()? else { break };
            let head = self.head.get();
            let off = self.rec_off.get();
            let k = ((len - off) as usize).min(buf.len() - got);
            let at = self.data_off(r, head) + RECORD_HEADER + off as usize;
            self.mem.copy_out(at, &mut buf[got..got + k]);
            got += k;
            if off + k as u64 == len {
                published |= self.finish_record(head, len as usize);
            } else {
                self.rec_off.set(off + k as u64);
            }
        }
        Ok((got, published))
    }

    /// Consumer: copies the whole record at the head into `buf` if one has arrived, none of
    /// it has been read yet and it fits; otherwise reads nothing and says why. The VI
    /// engine's small-message path uses this to take a frame (header and payload, written
    /// as one record) in one copy, and to learn that nothing arrived in one stamp load.
    pub fn read_record(&self, buf: &mut [u8]) -> Result<RecordRead, RingError> {
        if self.rec_len.get() != NO_RECORD && self.rec_off.get() != 0 {
            return Ok(RecordRead::Unsuitable);
        }
        let Some(len) = self.current()? else {
            return Ok(RecordRead::Empty);
        };
        let len = len as usize;
        if len > buf.len() {
            return Ok(RecordRead::Unsuitable);
        }
        let head = self.head.get();
        let at = self.data_off(1 - self.side, head) + RECORD_HEADER;
        self.mem.copy_out(at, &mut buf[..len]);
        let published = self.finish_record(head, len);
        Ok(RecordRead::Taken { len, published })
    }

    /// Consumer: moves past the record at `head` of `len` payload bytes, all read; publishes
    /// the head once per quarter ring and returns whether it did.
    fn finish_record(&self, head: u64, len: usize) -> bool {
        let r = 1 - self.side;
        let next = head.wrapping_add(round_up(RECORD_HEADER + len) as u64);
        self.head.set(next);
        self.rec_len.set(NO_RECORD);
        if next.wrapping_sub(self.published.get()) >= (self.cap / 4) as u64 {
            // Release: our reads of the consumed records happen before the producer reuses
            // their space.
            self.mem.store(head_off(r), next, Ordering::Release);
            self.published.set(next);
            return true;
        }
        false
    }

    /// True if the peer announced it sleeps. The fence orders our earlier stamp / head store
    /// before the flag load; the sleeper's [`Ring::set_sleeping`] fence orders its flag store
    /// before its re-check of the ring; so either it sees our data or we see its flag.
    pub fn peer_sleeping(&self) -> bool {
        self.mem.fence();
        self.mem
            .load(sleeping_off(1 - self.side), Ordering::Relaxed)
            != 0
    }

    /// Publishes the CPU this side is waiting on (a hint for the peer's waits). Stores only
    /// on a change, so the line stays shared in both caches while nothing migrates.
    pub fn set_cpu(&self, cpu: usize) {
        let v = cpu as u64 + 1;
        if self.mem.load(cpu_off(self.side), Ordering::Relaxed) != v {
            self.mem.store(cpu_off(self.side), v, Ordering::Relaxed);
        }
    }

    /// The CPU the peer last published, if any. Peer-written and only a hint: any value is
    /// harmless (it changes how we wait, never what we read).
    pub fn peer_cpu(&self) -> Option<usize> {
        match self.mem.load(cpu_off(1 - self.side), Ordering::Relaxed) {
            0 => None,
            v => usize::try_from(v - 1).ok(),
        }
    }

    /// Publishes where this side's process maps the area (for the peer's probe).
    pub fn set_area_addr(&self, addr: u64) {
        self.mem.store(addr_off(self.side), addr, Ordering::Relaxed);
    }

    /// Where the peer says it maps the area (0: not yet said). Peer-written: only ever
    /// used as the remote address of a cross-memory read of the peer's own memory.
    pub fn peer_area_addr(&self) -> u64 {
        self.mem.load(addr_off(1 - self.side), Ordering::Relaxed)
    }

    /// Announces that this side reads the peer's payloads by cross-memory attach.
    pub fn set_cma_ok(&self) {
        self.mem.store(cma_off(self.side), 1, Ordering::Relaxed);
    }

    /// True if the peer announced it reads our payloads by cross-memory attach.
    pub fn peer_cma_ok(&self) -> bool {
        self.mem.load(cma_off(1 - self.side), Ordering::Relaxed) == 1
    }

    /// Announces that this side maps the peer's shared regions (single-copy descriptors).
    pub fn set_maps_ok(&self) {
        self.mem.store(maps_off(self.side), 1, Ordering::Relaxed);
    }

    /// True if the peer announced it maps our shared regions.
    pub fn peer_maps_ok(&self) -> bool {
        self.mem.load(maps_off(1 - self.side), Ordering::Relaxed) == 1
    }

    /// This side announces it is about to sleep (`true`) or awake (`false`); see
    /// [`Ring::peer_sleeping`].
    pub fn set_sleeping(&self, asleep: bool) {
        self.mem.store(
            sleeping_off(self.side),
            u64::from(asleep),
            Ordering::Relaxed,
        );
        self.mem.fence();
    }
}

/// Writes the header of a fresh, zeroed area of `len` bytes (the creating side does this
/// before sharing it); the capacity is rounded down to a power of two (an area of another
/// size than [`area_len`] of it is then refused by [`Ring::new`]).
pub fn init_words<M: Words>(mem: &M) {
    let half = (mem.len().saturating_sub(CTRL_SIZE) / 2).max(1);
    let cap = 1u64 << half.ilog2();
    mem.store(CAP_OFF, cap, Ordering::Relaxed);
    mem.store(MAGIC_OFF, MAGIC, Ordering::Release);
}

/// The shipped backend: `len` bytes at `base` (a shared mapping, or a heap buffer in tests),
/// holding the memory's owner so it lives as long as the view.
pub struct RawArea {
    base: *mut u8,
    len: usize,
    _owner: Box<dyn Send>,
}

// SAFETY: the raw pointer refers to memory owned by `_owner` (Send) or by a mapping that
// outlives it; moving the view to another thread moves the sole producer/consumer role
// with it, so the SPSC discipline still holds.
unsafe impl Send for RawArea {}

impl RawArea {
    /// # Safety
    /// `base` must be valid for reads and writes of `len` bytes, 64-byte aligned, and stay
    /// valid while `owner` lives; and at most one view per side may exist at a time (in any
    /// process), so each ring has one producer and one consumer.
    pub unsafe fn new(base: *mut u8, len: usize, owner: Box<dyn Send>) -> Result<Self, RingError> {
        if !(base as usize).is_multiple_of(LINE) {
            return Err(RingError::Corrupt);
        }
        Ok(RawArea {
            base,
            len,
            _owner: owner,
        })
    }

    fn word(&self, off: usize) -> &AtomicU64 {
        assert!(
            off.is_multiple_of(8) && off + 8 <= self.len,
            "word outside the area"
        );
        // SAFETY: in bounds and 8-aligned (checked above; base is 64-aligned), and the memory
        // lives as long as `self`. Both processes access control words and stamps only
        // atomically.
        unsafe { &*(self.base.add(off) as *const AtomicU64) }
    }

    /// The u32 futex word at `off`.
    fn word32(&self, off: usize) -> &AtomicU32 {
        assert!(off.is_multiple_of(4) && off + 4 <= CTRL_SIZE.min(self.len));
        // SAFETY: as in `word`.
        unsafe { &*(self.base.add(off) as *const AtomicU32) }
    }
}

impl Words for RawArea {
    fn len(&self) -> usize {
        self.len
    }
    #[inline]
    fn load(&self, off: usize, order: Ordering) -> u64 {
        self.word(off).load(order)
    }
    #[inline]
    fn store(&self, off: usize, v: u64, order: Ordering) {
        self.word(off).store(v, order)
    }
    #[inline]
    fn fence(&self) {
        fence(Ordering::SeqCst)
    }
    #[inline]
    fn copy_in(&self, off: usize, src: &[u8]) {
        assert!(off.checked_add(src.len()).is_some_and(|e| e <= self.len));
        // SAFETY: in bounds (checked). The ring writes only free space, which the consumer
        // does not read until the record's stamp is published; `src` is ordinary memory, so
        // the regions do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.base.add(off), src.len()) }
    }
    #[inline]
    fn copy_out(&self, off: usize, dst: &mut [u8]) {
        assert!(off.checked_add(dst.len()).is_some_and(|e| e <= self.len));
        // SAFETY: in bounds (checked); the bytes were published by the stamp we acquired and
        // the producer does not reuse them before we publish a head past them.
        unsafe { std::ptr::copy_nonoverlapping(self.base.add(off), dst.as_mut_ptr(), dst.len()) }
    }
}

/// The shm provider's view.
pub type RingPair = Ring<RawArea>;

impl Ring<RawArea> {
    /// Builds side `side`'s view over `len` bytes at `base`.
    ///
    /// # Safety
    /// As for [`RawArea::new`].
    pub unsafe fn from_raw(
        base: *mut u8,
        len: usize,
        side: usize,
        owner: Box<dyn Send>,
    ) -> Result<RingPair, RingError> {
        // SAFETY: forwarded to the caller.
        Ring::new(unsafe { RawArea::new(base, len, owner)? }, side)
    }

    /// Writes the header of a fresh area.
    ///
    /// # Safety
    /// As for [`RawArea::new`]; the memory must be zeroed and not yet shared.
    pub unsafe fn init(base: *mut u8, len: usize) {
        // SAFETY: forwarded to the caller; the dummy owner does not free anything.
        if let Ok(a) = unsafe { RawArea::new(base, len, Box::new(())) } {
            init_words(&a);
        }
    }

    /// The address of the area in this process.
    pub fn area_addr(&self) -> u64 {
        self.mem.base as u64
    }

    /// This side's doorbell word (the futex it sleeps on).
    pub fn my_bell(&self) -> &AtomicU32 {
        self.mem.word32(bell_off(self.side))
    }

    /// The peer's doorbell word (the futex to wake).
    pub fn peer_bell(&self) -> &AtomicU32 {
        self.mem.word32(bell_off(1 - self.side))
    }

    /// If the peer sleeps, bumps its doorbell and returns true (the caller then wakes the
    /// futex). The common case (peer polling) costs one fence and one load.
    pub fn ring_peer(&self) -> bool {
        if !self.peer_sleeping() {
            return false;
        }
        self.peer_bell().fetch_add(1, Ordering::SeqCst);
        true
    }
}

/// A zeroed heap buffer of `blocks` cache lines, freed on drop (as the `Box<[Block]>` it was
/// allocated as: Miri caught an earlier version freeing it with the wrong alignment).
struct HeapArea(*mut Block, usize);
// SAFETY: the pointer is a uniquely owned heap allocation (from a leaked Box).
unsafe impl Send for HeapArea {}
// SAFETY: the area is only accessed through Ring views, which obey SPSC.
unsafe impl Sync for HeapArea {}
impl Drop for HeapArea {
    fn drop(&mut self) {
        // SAFETY: (ptr, len) came from Box::into_raw of a boxed slice of that length, and this
        // is the last owner (the Arc around it is dropping).
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.0, self.1)) });
    }
}

/// One cache line of zeroes (the bytes are only reached through raw pointers).
#[repr(align(64))]
#[allow(dead_code)]
#[derive(Clone, Copy)]
struct Block([u8; 64]);

/// The two views of a zeroed heap area, for tests (and Miri, which cannot mmap).
pub fn heap_area(cap: usize) -> (RingPair, RingPair) {
    let len = area_len(cap);
    let blocks = len.div_ceil(64);
    let mem = Box::into_raw(vec![Block([0; 64]); blocks].into_boxed_slice()) as *mut Block;
    let owner = std::sync::Arc::new(HeapArea(mem, blocks));
    let base = mem as *mut u8;
    // SAFETY: a fresh zeroed allocation of ≥ len bytes, 64-aligned (Block's alignment; the
    // cast keeps the address), freed only when both views (which each hold the Arc) are
    // gone; one view per side.
    unsafe {
        RingPair::init(base, len);
        let a =
            RingPair::from_raw(base, len, 0, Box::new(owner.clone())).expect("fresh area is valid");
        let b = RingPair::from_raw(base, len, 1, Box::new(owner)).expect("fresh area is valid");
        (a, b)
    }
}

#[cfg(test)]
mod tests {
    //! These tests use heap areas only, so they can run under Miri
    //! (`cargo +nightly miri test -p icn-via --lib ring`) and AddressSanitizer
    //! (`crates/icn-via/sanitize.sh`).
    use super::*;
    use proptest::prelude::*;

    fn read_all(r: &RingPair) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = [0u8; 5];
        loop {
            let (m, _) = r.read(&mut buf).unwrap();
            if m == 0 {
                return out;
            }
            out.extend_from_slice(&buf[..m]);
        }
    }

    #[test]
    fn bytes_come_out_in_order_across_the_wrap() {
        let (w, r) = heap_area(256);
        let mut out = Vec::new();
        let mut next = 0u8;
        for round in 0..200 {
            let n = 1 + round % 90;
            let chunk: Vec<u8> = (0..n).map(|i| next.wrapping_add(i as u8)).collect();
            let k = w.write(&[&chunk[..n / 2], &[], &chunk[n / 2..]]).unwrap();
            next = next.wrapping_add(k as u8);
            out.extend(read_all(&r));
        }
        let want: Vec<u8> = (0..out.len()).map(|i| i as u8).collect();
        assert_eq!(out, want);
        assert!(out.len() > 4 * 256, "wrapped several times: {}", out.len());
    }

    #[test]
    fn records_take_whole_lines_and_the_head_is_published_per_quarter() {
        let (a, b) = heap_area(1024);
        // 8 bytes: one 64-byte record (16 header + 8, rounded up)
        assert_eq!(a.write(&[&[7; 8]]).unwrap(), 8);
        assert_eq!(a.tail.get(), 64);
        assert!(b.readable() && !a.readable());
        let mut buf = [0u8; 8];
        assert_eq!(
            b.read(&mut buf).unwrap(),
            (8, false),
            "64 < 1024/4: not published"
        );
        assert_eq!(buf, [7; 8]);
        assert_eq!(b.mem.load(head_off(0), Ordering::SeqCst), 0);
        assert!(!b.readable());
        // 200 bytes: 216 rounded up to 256
        assert_eq!(a.write(&[&[1; 200]]).unwrap(), 200);
        assert_eq!(a.tail.get(), 320);
        assert_eq!(
            b.read(&mut [0u8; 256]).unwrap(),
            (200, true),
            "head 320 >= 256"
        );
        assert_eq!(b.mem.load(head_off(0), Ordering::SeqCst), 320);
    }

    #[test]
    fn read_record_takes_whole_unread_records_that_fit_and_nothing_else() {
        let (a, b) = heap_area(1024);
        let mut buf = [0u8; 64];
        assert_eq!(
            b.read_record(&mut buf).unwrap(),
            RecordRead::Empty,
            "nothing written"
        );
        // header and payload gathered into one record
        assert_eq!(a.write(&[&[1; 3], &[2; 5]]).unwrap(), 8);
        assert_eq!(
            b.read_record(&mut buf).unwrap(),
            RecordRead::Taken {
                len: 8,
                published: false
            }
        );
        assert_eq!(buf[..8], [1, 1, 1, 2, 2, 2, 2, 2]);
        // too big for the buffer: untouched, and the byte-stream read still gets it all
        assert_eq!(a.write(&[&[3; 100]]).unwrap(), 100);
        assert_eq!(b.read_record(&mut buf).unwrap(), RecordRead::Unsuitable);
        let mut small = [0u8; 10];
        assert_eq!(b.read(&mut small).unwrap(), (10, false));
        // partly read: refused, so a record is never taken from its middle
        assert_eq!(
            b.read_record(&mut [0u8; 200]).unwrap(),
            RecordRead::Unsuitable
        );
        let mut rest = [0u8; 90];
        assert_eq!(b.read(&mut rest).unwrap().0, 90);
        assert!(rest.iter().all(|&x| x == 3));
        // and whole records go through again
        assert_eq!(a.write(&[&[4; 16]]).unwrap(), 16);
        assert_eq!(
            b.read_record(&mut buf).unwrap(),
            RecordRead::Taken {
                len: 16,
                published: true
            },
            "head 64 + 128 + 64 >= 1024/4: published"
        );
        assert_eq!(buf[..16], [4; 16]);
        assert!(!b.readable());
        assert_eq!(b.read_record(&mut buf).unwrap(), RecordRead::Empty);
    }

    #[test]
    fn full_ring_refuses_more_until_the_head_is_published() {
        let (a, b) = heap_area(256);
        // 256 bytes = 4 lines; one write fills them with records of up to 240 bytes
        assert_eq!(a.write(&[&[1; 1000]]).unwrap(), 240);
        assert!(!a.writable());
        assert_eq!(a.write(&[&[1]]).unwrap(), 0);
        assert!(b.writable() && !a.readable(), "directions are independent");
        let mut buf = [0u8; 100];
        assert_eq!(
            b.read(&mut buf).unwrap(),
            (100, false),
            "mid-record: no publish"
        );
        assert!(!a.writable());
        assert_eq!(b.read(&mut [0u8; 200]).unwrap(), (140, true));
        assert!(a.writable());
        assert_eq!(a.write(&[&[2; 5]]).unwrap(), 5);
        assert_eq!(b.read(&mut buf).unwrap().0, 5);
    }

    #[test]
    fn a_write_at_the_end_of_the_data_continues_at_the_start() {
        let (a, b) = heap_area(256);
        // advance to offset 192 (three 64-byte records), consuming as we go
        for _ in 0..3 {
            a.write(&[&[0; 40]]).unwrap();
            read_all(&b);
        }
        assert_eq!(a.tail.get(), 192);
        let msg: Vec<u8> = (0..100).collect();
        // 48 bytes fit before the end, the rest goes into a record at offset 0
        assert_eq!(a.write(&[&msg]).unwrap(), 100);
        assert_eq!(a.tail.get(), 256 + 128);
        assert_eq!(read_all(&b), msg);
    }

    #[test]
    fn doorbell_reports_a_sleeping_peer() {
        let (a, b) = heap_area(256);
        assert!(!a.ring_peer());
        assert_eq!(b.my_bell().load(Ordering::SeqCst), 0, "no bump while awake");
        b.set_sleeping(true);
        assert!(a.ring_peer());
        assert_eq!(b.my_bell().load(Ordering::SeqCst), 1);
        b.set_sleeping(false);
        assert!(!a.ring_peer());
    }

    #[test]
    fn each_side_sees_the_cpu_the_other_published_and_not_its_own() {
        let (a, b) = heap_area(256);
        assert_eq!(
            (a.peer_cpu(), b.peer_cpu()),
            (None, None),
            "unknown at first"
        );
        a.set_cpu(0);
        assert_eq!((a.peer_cpu(), b.peer_cpu()), (None, Some(0)));
        b.set_cpu(7);
        a.set_cpu(3);
        assert_eq!((a.peer_cpu(), b.peer_cpu()), (Some(7), Some(3)));
        // not in the sleeping flag's or the doorbell's line
        assert!(!a.ring_peer() && !b.ring_peer());
        // nor in each other's: the probe address and the CMA flag
        a.set_area_addr(0x7000_0000);
        assert_eq!((b.peer_area_addr(), a.peer_area_addr()), (0x7000_0000, 0));
        assert!(!a.peer_cma_ok() && !b.peer_cma_ok());
        b.set_cma_ok();
        assert!(a.peer_cma_ok() && !b.peer_cma_ok());
        assert!(!a.peer_maps_ok() && !b.peer_maps_ok());
        a.set_maps_ok();
        assert!(b.peer_maps_ok() && !a.peer_maps_ok() && !b.peer_cma_ok());
        assert_eq!((a.peer_cpu(), b.peer_cpu()), (Some(7), Some(3)));
        assert_eq!(a.my_bell().load(Ordering::SeqCst), 0);
    }

    #[test]
    fn threads_stream_through_the_ring() {
        let (w, r) = heap_area(512);
        let n: u32 = if cfg!(miri) { 2000 } else { 300_000 };
        let t = std::thread::spawn(move || {
            let data: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let mut off = 0;
            let mut step = 1;
            while off < data.len() {
                let end = (off + step).min(data.len());
                off += w.write(&[&data[off..end]]).unwrap();
                step = step % 300 + 7;
                std::thread::yield_now();
            }
        });
        let mut got = Vec::new();
        let mut buf = [0u8; 37];
        while got.len() < n as usize {
            let (m, _) = r.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..m]);
            if m == 0 {
                std::thread::yield_now();
            }
        }
        t.join().unwrap();
        assert!(got.iter().enumerate().all(|(i, &b)| b == i as u8));
    }

    #[test]
    fn foreign_areas_with_a_bad_header_are_refused() {
        let len = area_len(256);
        let mut mem = vec![Block([0; 64]); len / 64].into_boxed_slice();
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: valid zeroed heap memory of `len` bytes, 64-aligned, kept alive by `mem`
        // until after the views (owners are dummies) are dropped; one view at a time.
        unsafe {
            assert!(
                RingPair::from_raw(base, len, 0, Box::new(())).is_err(),
                "no magic"
            );
            RingPair::init(base, len);
            for bad in [255u64, 320, 64] {
                (base.add(CAP_OFF) as *mut u64).write(bad);
                assert!(
                    RingPair::from_raw(base, len, 0, Box::new(())).is_err(),
                    "cap {bad}"
                );
            }
            (base.add(CAP_OFF) as *mut u64).write(256);
            assert!(
                RingPair::from_raw(base, len, 2, Box::new(())).is_err(),
                "no side 2"
            );
            assert!(
                RingPair::from_raw(base.add(8), len - 64, 0, Box::new(())).is_err(),
                "misaligned"
            );
            assert!(RingPair::from_raw(base, len, 0, Box::new(())).is_ok());
        }
        drop(mem);
    }

    proptest! {
        /// Fuzz of everything the peer controls: an arbitrary published head, and records
        /// with arbitrary stamps and lengths, never make a read, a whole-record read or a
        /// write panic or touch memory outside the area; they either work within the
        /// capacity or report corruption.
        #[test]
        fn peer_controlled_values_are_checked(
            head: u64, tail_lines in 0u64..64, stamp_hit: bool, len: u64, want in 0usize..600,
        ) {
            let cap = 256u64;
            let (a, b) = heap_area(cap as usize);
            // a's producer state (the ring looked empty when last checked), and the head its
            // consumer peer "published"
            let tail = tail_lines * 64;
            a.tail.set(tail);
            a.head_seen.set(tail);
            b.mem.store(head_off(0), head, Ordering::SeqCst);
            match a.write(&[&vec![9u8; want]]) {
                Ok(n) => prop_assert!(n <= want),
                Err(RingError::Corrupt) => prop_assert!(a.tail.get().wrapping_sub(head) > cap),
            }
            // a hostile record at b's head
            let at = CTRL_SIZE;
            a.mem.store(at + 8, len, Ordering::SeqCst);
            a.mem.store(at, if stamp_hit { 1 } else { len | 2 }, Ordering::SeqCst);
            b.rec_len.set(NO_RECORD);
            let mut buf = vec![0u8; want];
            // the whole-record read of the small-frame path: takes it only if it fits
            b.rec_len.set(NO_RECORD);
            match b.read_record(&mut buf) {
                Ok(RecordRead::Empty) => prop_assert!(!stamp_hit),
                Ok(RecordRead::Taken { len: n, .. }) => {
                    prop_assert!(stamp_hit && n as u64 == len && n <= want);
                    return Ok(());
                }
                Ok(RecordRead::Unsuitable) => prop_assert!(stamp_hit && len as usize > want),
                Err(RingError::Corrupt) => prop_assert!(stamp_hit && len > cap - 16),
            }
            b.rec_len.set(NO_RECORD);
            match b.read(&mut buf) {
                Ok((n, _)) => prop_assert!(n <= want && (!stamp_hit || len <= cap - 16 || want == 0)),
                Err(RingError::Corrupt) => prop_assert!(stamp_hit && len > cap - 16),
            }
        }
    }
}
