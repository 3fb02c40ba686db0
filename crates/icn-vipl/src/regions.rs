//! The registered regions as the C side named them, and a VI's one-entry cache of them.
//!
//! Why a cache: every `VipPostSend` / `VipPostRecv` checks that its descriptor lies in the
//! region its memory handle names, with the VI's protection tag. Through the table's read
//! lock and hash map that check cost ~40 instructions a post, a tenth of the C layer's whole
//! cost per message. A program posts from the same region again and again, so each VI keeps
//! the last region it checked, tagged with the table's generation (bumped on every change):
//! a hit is a few plain loads, no lock and no read-modify-write.

use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};

use icn_via::memory::BuildIdHasher;

use crate::objects::{read_lock, write_lock};

/// A registered region as the C side named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub start: usize,
    pub len: usize,
    /// The `VIP_PROTECTION_HANDLE` it was registered with.
    pub ptag: usize,
    pub rdma_write: bool,
    pub rdma_read: bool,
}

/// Regions by memory handle (handles are small integers: hashed to themselves).
pub struct Regions {
    map: RwLock<HashMap<u32, Region, BuildIdHasher>>,
    /// Bumped on every change, so a [`RegionCache`] entry of an older generation is never
    /// used. Starts at 1: 0 marks an empty cache.
    generation: AtomicU64,
}

impl Default for Regions {
    fn default() -> Self {
        Regions {
            map: RwLock::default(),
            generation: AtomicU64::new(1),
        }
    }
}

impl Regions {
    pub fn get(&self, handle: u32) -> Option<Region> {
        read_lock(&self.map).get(&handle).copied()
    }

    pub fn insert(&self, handle: u32, r: Region) {
        let mut map = write_lock(&self.map);
        map.insert(handle, r);
        self.generation.fetch_add(1, Ordering::Release);
    }

    pub fn remove(&self, handle: u32) -> Option<Region> {
        let mut map = write_lock(&self.map);
        let r = map.remove(&handle);
        self.generation.fetch_add(1, Ordering::Release);
        r
    }

    /// [`Regions::get`] through `cache`: the same answer (a region changed or removed since
    /// the cache was filled is looked up again).
    #[inline(always)]
    pub fn get_cached(&self, cache: &RegionCache, handle: u32) -> Option<Region> {
        let generation = self.generation.load(Ordering::Acquire);
        match cache.get(generation, handle) {
            Some(r) => Some(r),
            None => self.fill(cache, generation, handle),
        }
    }

    #[inline(never)]
    fn fill(&self, cache: &RegionCache, generation: u64, handle: u32) -> Option<Region> {
        // `generation` was read before the lookup: a change in between leaves the entry
        // tagged with the older generation, which the next lookup does not use.
        let r = self.get(handle)?;
        cache.put(generation, handle, r);
        Some(r)
    }
}

/// One region, tagged with the generation of the table it came from: a sequence lock over
/// atomics (no `unsafe`), so VIs shared by threads stay sound. A reader that races a writer
/// misses and looks the region up in the table; a writer that races another writer skips
/// caching.
#[derive(Default)]
pub struct RegionCache {
    /// Even: stable; odd: a writer is storing the fields.
    seq: AtomicU64,
    generation: AtomicU64,
    handle: AtomicU32,
    start: AtomicUsize,
    len: AtomicUsize,
    ptag: AtomicUsize,
    /// `rdma_write` (bit 0) and `rdma_read` (bit 1).
    rights: AtomicU32,
}

/// What a reader of a [`RegionCache`] saw: the two loads of its sequence word around the
/// loads of its fields.
struct Seen {
    before: u64,
    after: u64,
    generation: u64,
    handle: u32,
    start: usize,
    len: usize,
    ptag: usize,
    rights: u32,
}

impl Seen {
    /// The region, if no writer was storing while the fields were read (the sequence word
    /// even and unchanged) and they are of this generation and handle.
    #[inline(always)]
    fn region(&self, generation: u64, handle: u32) -> Option<Region> {
        (self.before == self.after
            && self.before & 1 == 0
            && self.generation == generation
            && self.handle == handle)
            .then_some(Region {
                start: self.start,
                len: self.len,
                ptag: self.ptag,
                rdma_write: self.rights & 1 != 0,
                rdma_read: self.rights & 2 != 0,
            })
    }
}

impl RegionCache {
    #[inline(always)]
    fn get(&self, generation: u64, handle: u32) -> Option<Region> {
        self.read().region(generation, handle)
    }

    #[inline(always)]
    fn read(&self) -> Seen {
        let before = self.seq.load(Ordering::Acquire);
        let generation = self.generation.load(Ordering::Relaxed);
        let handle = self.handle.load(Ordering::Relaxed);
        let start = self.start.load(Ordering::Relaxed);
        let len = self.len.load(Ordering::Relaxed);
        let ptag = self.ptag.load(Ordering::Relaxed);
        let rights = self.rights.load(Ordering::Relaxed);
        // Orders the field loads before the second load of `seq` (pairs with the writer's
        // release fence): fields written by a writer that began after `before` show up as
        // a changed `seq`.
        fence(Ordering::Acquire);
        let after = self.seq.load(Ordering::Relaxed);
        Seen {
            before,
            after,
            generation,
            handle,
            start,
            len,
            ptag,
            rights,
        }
    }

    fn put(&self, generation: u64, handle: u32, r: Region) {
        if let Some(s) = self.begin() {
            self.store(generation, handle, r);
            self.seq.store(s + 2, Ordering::Release);
        }
    }

    /// Makes the sequence word odd for this writer: its old value, or `None` if another
    /// writer is storing.
    fn begin(&self) -> Option<u64> {
        let s = self.seq.load(Ordering::Relaxed);
        if s & 1 != 0
            || self
                .seq
                .compare_exchange(s, s + 1, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return None;
        }
        // Orders the odd `seq` before the field stores (pairs with the reader's acquire
        // fence).
        fence(Ordering::Release);
        Some(s)
    }

    fn store(&self, generation: u64, handle: u32, r: Region) {
        self.generation.store(generation, Ordering::Relaxed);
        self.handle.store(handle, Ordering::Relaxed);
        self.start.store(r.start, Ordering::Relaxed);
        self.len.store(r.len, Ordering::Relaxed);
        self.ptag.store(r.ptag, Ordering::Relaxed);
        self.rights.store(
            u32::from(r.rdma_write) | (u32::from(r.rdma_read) << 1),
            Ordering::Relaxed,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(k: usize) -> Region {
        Region {
            start: k * 4096,
            len: k * 10,
            ptag: k,
            rdma_write: k % 2 == 1,
            rdma_read: k.is_multiple_of(3),
        }
    }

    #[test]
    fn the_cache_answers_as_the_table_across_changes() {
        let t = Regions::default();
        let c = RegionCache::default();
        assert_eq!(t.get_cached(&c, 1), None);
        t.insert(1, region(1));
        t.insert(2, region(2));
        for _ in 0..2 {
            assert_eq!(t.get_cached(&c, 1), Some(region(1)));
            assert_eq!(t.get_cached(&c, 2), Some(region(2)));
        }
        // a hit: the entry is the last one filled
        assert_eq!(
            c.get(t.generation.load(Ordering::Relaxed), 2),
            Some(region(2))
        );
        // changed attributes (same handle, new entry) and removal are seen at once
        t.insert(2, region(3));
        assert_eq!(t.get_cached(&c, 2), Some(region(3)));
        assert_eq!(t.remove(2), Some(region(3)));
        assert_eq!(t.get_cached(&c, 2), None);
        assert_eq!(t.get_cached(&c, 1), Some(region(1)));
    }

    #[test]
    fn a_read_that_overlaps_a_write_misses() {
        let c = RegionCache::default();
        c.put(7, 1, region(1));
        assert_eq!(c.get(7, 1), Some(region(1)));
        // a writer between the reader's two loads of the sequence word
        let mut seen = c.read();
        c.put(7, 2, region(2));
        seen.after = c.seq.load(Ordering::Relaxed);
        assert_eq!(seen.region(7, 1), None);
        // fields read while a writer is storing them: both loads odd, even if equal
        let s = c.begin().unwrap();
        assert!(c.begin().is_none(), "one writer at a time");
        c.store(7, 1, region(1));
        assert_eq!(c.get(7, 1), None);
        assert_eq!(c.read().before & 1, 1);
        c.seq.store(s + 2, Ordering::Release);
        assert_eq!(c.get(7, 1), Some(region(1)));
        assert_eq!(c.get(8, 1), None, "another generation");
        assert_eq!(c.get(7, 2), None, "another handle");
    }

    #[test]
    fn racing_readers_never_see_a_mixed_entry() {
        // Two writers fill the cache with two regions in turn while a reader looks both up:
        // every answer is the whole region of its handle or a miss, never fields of both.
        // Bounded loops: a failing reader cannot leave the writers spinning.
        let c = RegionCache::default();
        std::thread::scope(|s| {
            for k in [1, 2] {
                let c = &c;
                s.spawn(move || {
                    for _ in 0..100_000 {
                        c.put(7, k, region(k as usize));
                    }
                });
            }
            for i in 0..200_000u32 {
                let k = 1 + i % 2;
                if let Some(r) = c.get(7, k) {
                    assert_eq!(r, region(k as usize));
                }
                assert_eq!(c.get(8, k), None);
            }
        });
    }
}
