//! Two single-producer/single-consumer byte rings and two doorbells in one shared memory
//! area: the `shm` provider's "NIC". This is the only module with `unsafe` code (besides the
//! mapping in [`crate::link::shm`]).
//!
//! Layout (all offsets in bytes; every counter on its own cache line):
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `ICNVIA01` (u64) |
//! | 8 | ring capacity `cap` (u64) |
//! | 64 + 256·r | ring r: tail (bytes ever written, producer-owned, u64) |
//! | 192 + 256·r | ring r: head (bytes ever read, consumer-owned, u64) |
//! | 1024 + 128·s | side s: doorbell counter (u32, the futex word) |
//! | 1088 + 128·s | side s: "sleeping" flag (u32) |
//! | 4096 + cap·r | ring r data, `cap` bytes |
//!
//! Ring r carries bytes from side r to side 1−r. Writing into the ring *is* the doorbell (the
//! peer polls the tail); the futex counter only matters once the peer has gone to sleep.
//!
//! The peer can write anything into this memory, so every value read from it is checked
//! before use: `tail − head` must never exceed `cap` (else [`RingError::Corrupt`]) and every
//! index is reduced modulo `cap`, so no access can leave the area whatever the peer does.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

pub const CTRL_SIZE: usize = 4096;
pub const MAGIC: u64 = u64::from_le_bytes(*b"ICNVIA01");
const MAGIC_OFF: usize = 0;
const CAP_OFF: usize = 8;

fn tail_off(r: usize) -> usize {
    64 + 256 * r
}
fn head_off(r: usize) -> usize {
    192 + 256 * r
}
fn bell_off(s: usize) -> usize {
    1024 + 128 * s
}
fn sleeping_off(s: usize) -> usize {
    1088 + 128 * s
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

/// One side's view of a shared area: it writes ring `side` and reads ring `1 − side`. Holds
/// the owner of the memory (a mapping, or a heap buffer in tests) so the memory lives as long
/// as the view. Not `Sync`: one view is one producer and one consumer.
pub struct RingPair {
    base: *mut u8,
    cap: usize,
    side: usize,
    _owner: Box<dyn Send>,
}

// SAFETY: the raw pointer refers to memory owned by `_owner` (Send) or by a mapping that
// outlives it; moving the view to another thread moves the sole producer/consumer role
// with it, so the SPSC discipline still holds.
unsafe impl Send for RingPair {}

impl RingPair {
    /// Builds side `side`'s view over `len` bytes at `base`.
    ///
    /// # Safety
    /// `base` must be valid for reads and writes of `len` bytes, 8-byte aligned, and stay
    /// valid while `owner` lives; `len` must be at least [`CTRL_SIZE`]; and at most one view
    /// per side may exist at a time (in any process), so each ring has one producer and one
    /// consumer.
    pub unsafe fn from_raw(
        base: *mut u8,
        len: usize,
        side: usize,
        owner: Box<dyn Send>,
    ) -> Result<RingPair, RingError> {
        if len < CTRL_SIZE || !(base as usize).is_multiple_of(8) || side > 1 {
            return Err(RingError::Corrupt);
        }
        let mut me = RingPair {
            base,
            cap: 0,
            side,
            _owner: owner,
        };
        // The capacity is peer-written: it must describe exactly this area.
        let cap = me.u64_at(CAP_OFF).load(Ordering::Acquire);
        if me.u64_at(MAGIC_OFF).load(Ordering::Acquire) != MAGIC
            || cap == 0
            || (cap as usize)
                .checked_mul(2)
                .and_then(|c| c.checked_add(CTRL_SIZE))
                != Some(len)
        {
            return Err(RingError::Corrupt);
        }
        me.cap = cap as usize;
        Ok(me)
    }

    /// Writes the header of a fresh area (the creating side does this before sharing it).
    ///
    /// # Safety
    /// As for [`RingPair::from_raw`]; the memory must be zeroed and not yet shared.
    pub unsafe fn init(base: *mut u8, len: usize) {
        let cap = ((len - CTRL_SIZE) / 2) as u64;
        // SAFETY: caller guarantees `base` is valid, aligned and exclusively ours; offsets
        // 0 and 8 are inside the control page.
        unsafe {
            (base.add(CAP_OFF) as *mut u64).write(cap);
            (base.add(MAGIC_OFF) as *mut u64).write(MAGIC);
        }
    }

    fn u64_at(&self, off: usize) -> &AtomicU64 {
        debug_assert!(off + 8 <= CTRL_SIZE && off.is_multiple_of(8));
        // SAFETY: `off` is a constant offset inside the control page (checked above), the
        // base is 8-aligned (checked in `from_raw`), and the memory lives as long as `self`.
        // Both processes only access these words atomically.
        unsafe { &*(self.base.add(off) as *const AtomicU64) }
    }

    fn u32_at(&self, off: usize) -> &AtomicU32 {
        debug_assert!(off + 4 <= CTRL_SIZE && off.is_multiple_of(4));
        // SAFETY: as in `u64_at`.
        unsafe { &*(self.base.add(off) as *const AtomicU32) }
    }

    /// Ring capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// This view's side.
    pub fn side(&self) -> usize {
        self.side
    }

    /// Bytes ready to read in ring `r`.
    fn available(&self, r: usize) -> Result<usize, RingError> {
        let tail = self.u64_at(tail_off(r)).load(Ordering::Acquire);
        let head = self.u64_at(head_off(r)).load(Ordering::Relaxed);
        let n = tail.wrapping_sub(head);
        if n > self.cap as u64 {
            Err(RingError::Corrupt)
        } else {
            Ok(n as usize)
        }
    }

    /// True if the incoming ring has bytes to read (a corrupt ring counts as readable so
    /// the reader runs into the error).
    pub fn readable(&self) -> bool {
        !matches!(self.available(1 - self.side), Ok(0))
    }

    /// True if the outgoing ring has room (a corrupt ring counts as writable, likewise).
    pub fn writable(&self) -> bool {
        let r = self.side;
        let tail = self.u64_at(tail_off(r)).load(Ordering::Relaxed);
        let head = self.u64_at(head_off(r)).load(Ordering::Acquire);
        tail.wrapping_sub(head) < self.cap as u64 || tail.wrapping_sub(head) > self.cap as u64
    }

    /// Producer: copies as much of `bufs` as fits into the outgoing ring; returns the bytes
    /// written.
    pub fn write(&self, bufs: &[&[u8]]) -> Result<usize, RingError> {
        let r = self.side;
        let tail = self.u64_at(tail_off(r)).load(Ordering::Relaxed);
        let head = self.u64_at(head_off(r)).load(Ordering::Acquire);
        let used = tail.wrapping_sub(head);
        if used > self.cap as u64 {
            return Err(RingError::Corrupt);
        }
        let mut free = self.cap - used as usize;
        let mut pos = tail;
        for b in bufs {
            let n = b.len().min(free);
            self.copy_in(r, pos, &b[..n]);
            pos = pos.wrapping_add(n as u64);
            free -= n;
            if free == 0 {
                break;
            }
        }
        let written = pos.wrapping_sub(tail) as usize;
        if written > 0 {
            self.u64_at(tail_off(r)).store(pos, Ordering::Release);
        }
        Ok(written)
    }

    /// Consumer: copies up to `buf.len()` bytes out of the incoming ring.
    pub fn read(&self, buf: &mut [u8]) -> Result<usize, RingError> {
        let r = 1 - self.side;
        let n = self.available(r)?.min(buf.len());
        if n == 0 {
            return Ok(0);
        }
        let head = self.u64_at(head_off(r)).load(Ordering::Relaxed);
        self.copy_out(r, head, &mut buf[..n]);
        self.u64_at(head_off(r))
            .store(head.wrapping_add(n as u64), Ordering::Release);
        Ok(n)
    }

    fn data(&self, r: usize) -> *mut u8 {
        // SAFETY: r ∈ {0,1}; CTRL_SIZE + r·cap + cap ≤ len (checked in from_raw).
        unsafe { self.base.add(CTRL_SIZE + (r & 1) * self.cap) }
    }

    fn copy_in(&self, r: usize, pos: u64, src: &[u8]) {
        let at = (pos % self.cap as u64) as usize;
        let first = src.len().min(self.cap - at);
        let data = self.data(r);
        // SAFETY: `at < cap`, `first ≤ cap − at` and `src.len() − first ≤ cap` (callers write
        // at most the free space, ≤ cap), so both copies stay inside ring r's data. The bytes
        // written are free space the consumer does not read until the tail store publishes
        // them; `src` is ordinary memory, so the regions do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), data.add(at), first);
            std::ptr::copy_nonoverlapping(src.as_ptr().add(first), data, src.len() - first);
        }
    }

    fn copy_out(&self, r: usize, pos: u64, dst: &mut [u8]) {
        let at = (pos % self.cap as u64) as usize;
        let first = dst.len().min(self.cap - at);
        let data = self.data(r);
        // SAFETY: as in `copy_in`, with `dst.len() ≤ available ≤ cap`; the bytes read were
        // published by the producer's release store of the tail, which we acquired.
        unsafe {
            std::ptr::copy_nonoverlapping(data.add(at), dst.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(data, dst.as_mut_ptr().add(first), dst.len() - first);
        }
    }

    /// This side's doorbell word (the futex it sleeps on).
    pub fn my_bell(&self) -> &AtomicU32 {
        self.u32_at(bell_off(self.side))
    }

    /// The peer's doorbell word (the futex to wake).
    pub fn peer_bell(&self) -> &AtomicU32 {
        self.u32_at(bell_off(1 - self.side))
    }

    /// Rings the peer's doorbell; returns true if the peer is asleep and must be woken.
    ///
    /// The counter is only bumped when the peer sleeps, so the common case (peer spinning)
    /// costs one fence and one load. Race-free: the fence orders our earlier tail/head store
    /// before the flag load, and the sleeper's fence orders its flag store before its re-check
    /// of the ring, so either it sees our data or we see its flag; if we bump the counter after
    /// it read it, its futex wait returns at once.
    pub fn ring_peer(&self) -> bool {
        fence(Ordering::SeqCst);
        if self
            .u32_at(sleeping_off(1 - self.side))
            .load(Ordering::SeqCst)
            == 0
        {
            return false;
        }
        self.peer_bell().fetch_add(1, Ordering::SeqCst);
        true
    }

    /// This side announces it is about to sleep (`true`) or awake (`false`). The fence pairs
    /// with the one in [`RingPair::ring_peer`]: either the sleeper sees the new data on its
    /// re-check, or the writer sees the flag and wakes it.
    pub fn set_sleeping(&self, asleep: bool) {
        self.u32_at(sleeping_off(self.side))
            .store(u32::from(asleep), Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }
}

struct HeapArea(*mut u64, usize);
// SAFETY: the pointer is a uniquely owned heap allocation (from a leaked Box).
unsafe impl Send for HeapArea {}
// SAFETY: the area is only accessed through RingPair views, which obey SPSC.
unsafe impl Sync for HeapArea {}
impl Drop for HeapArea {
    fn drop(&mut self) {
        // SAFETY: (ptr, len) came from Box::into_raw of a boxed slice of that length, and this
        // is the last owner (the Arc around it is dropping).
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.0, self.1)) });
    }
}

/// The two views of a zeroed, 8-aligned heap area, for tests (and Miri, which cannot mmap).
pub fn heap_area(cap: usize) -> (RingPair, RingPair) {
    let len = area_len(cap);
    let words = len.div_ceil(8);
    let mem = Box::into_raw(vec![0u64; words].into_boxed_slice()) as *mut u64;
    let owner = std::sync::Arc::new(HeapArea(mem, words));
    let base = mem as *mut u8;
    // SAFETY: a fresh zeroed allocation of ≥ len bytes, 8-aligned, freed only when both
    // views (which each hold the Arc) are gone; one view per side.
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
    //! These tests use heap areas only, so they run under Miri
    //! (`cargo +nightly miri test -p icn-via --lib ring`).
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bytes_come_out_in_order_across_the_wrap() {
        let (w, r) = heap_area(16);
        let mut out = Vec::new();
        let mut buf = [0u8; 5];
        let mut next = 0u8;
        for _ in 0..20 {
            let chunk: Vec<u8> = (0..7).map(|i| next.wrapping_add(i)).collect();
            let n = w.write(&[&chunk[..3], &chunk[3..]]).unwrap();
            next = next.wrapping_add(n as u8);
            loop {
                let m = r.read(&mut buf).unwrap();
                if m == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..m]);
            }
        }
        let want: Vec<u8> = (0..out.len()).map(|i| i as u8).collect();
        assert_eq!(out, want);
        assert!(out.len() >= 100);
    }

    #[test]
    fn full_ring_refuses_more_and_directions_are_independent() {
        let (a, b) = heap_area(8);
        assert_eq!(a.write(&[&[1; 20]]).unwrap(), 8);
        assert!(!a.writable() && b.readable());
        assert_eq!(a.write(&[&[1]]).unwrap(), 0);
        assert!(b.writable() && !a.readable());
        let mut buf = [0; 3];
        assert_eq!(b.read(&mut buf).unwrap(), 3);
        assert!(a.writable());
        assert_eq!(a.write(&[&[2; 5]]).unwrap(), 3);
        assert_eq!(a.read(&mut buf).unwrap(), 0, "nothing travels b→a");
    }

    #[test]
    fn doorbell_reports_a_sleeping_peer() {
        let (a, b) = heap_area(8);
        assert!(!a.ring_peer());
        assert_eq!(
            b.my_bell().load(Ordering::SeqCst),
            0,
            "no bump while the peer is awake"
        );
        b.set_sleeping(true);
        assert!(a.ring_peer());
        assert_eq!(b.my_bell().load(Ordering::SeqCst), 1);
        b.set_sleeping(false);
        assert!(!a.ring_peer());
    }

    #[test]
    fn threads_stream_through_the_ring() {
        let (w, r) = heap_area(64);
        let n: u32 = if cfg!(miri) { 300 } else { 100_000 };
        let t = std::thread::spawn(move || {
            let data: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let mut off = 0;
            while off < data.len() {
                off += w.write(&[&data[off..]]).unwrap();
                std::thread::yield_now();
            }
        });
        let mut got = Vec::new();
        let mut buf = [0u8; 37];
        while got.len() < n as usize {
            let m = r.read(&mut buf).unwrap();
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
        let len = area_len(64);
        let mut mem = vec![0u64; len / 8].into_boxed_slice();
        let base = mem.as_mut_ptr() as *mut u8;
        // SAFETY: valid zeroed heap memory of `len` bytes, 8-aligned, kept alive by `mem`
        // until after the views (owners are dummies) are dropped; one view at a time.
        unsafe {
            assert!(
                RingPair::from_raw(base, len, 0, Box::new(())).is_err(),
                "no magic"
            );
            RingPair::init(base, len);
            (base.add(CAP_OFF) as *mut u64).write(65);
            assert!(
                RingPair::from_raw(base, len, 0, Box::new(())).is_err(),
                "cap disagrees with len"
            );
            (base.add(CAP_OFF) as *mut u64).write(64);
            assert!(
                RingPair::from_raw(base, len, 2, Box::new(())).is_err(),
                "no side 2"
            );
            assert!(RingPair::from_raw(base, len, 0, Box::new(())).is_ok());
        }
        drop(mem);
    }

    proptest! {
        /// Fuzz of everything the peer controls: arbitrary head/tail counters never make a
        /// read or write panic or touch memory outside the area; they either work within the
        /// capacity or report corruption.
        #[test]
        fn peer_controlled_counters_are_checked(tail: u64, head: u64, want in 0usize..100) {
            let (a, b) = heap_area(32);
            // ring 0 runs a→b: a's tail and b's head, both written here as a hostile peer would
            a.u64_at(tail_off(0)).store(tail, Ordering::SeqCst);
            a.u64_at(head_off(0)).store(head, Ordering::SeqCst);
            let mut buf = vec![0u8; want];
            let used = tail.wrapping_sub(head);
            match b.read(&mut buf) {
                Ok(n) => prop_assert!(n <= want && used <= 32 && n as u64 <= used),
                Err(RingError::Corrupt) => prop_assert!(used > 32),
            }
            let used = tail.wrapping_sub(a.u64_at(head_off(0)).load(Ordering::SeqCst));
            match a.write(&[&buf]) {
                Ok(n) => prop_assert!(n <= 32 && used <= 32),
                Err(RingError::Corrupt) => prop_assert!(used > 32),
            }
        }
    }
}
