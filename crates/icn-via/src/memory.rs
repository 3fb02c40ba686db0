//! Memory registration and the user-level translation table (MyVIA's "UTLB").
//!
//! VIA requires every buffer named in a descriptor to be registered first; registration ties
//! it to a protection tag and says whether peers may RDMA into or out of it. MyVIA's speed-up
//! is that the table of registered regions (RMMT) is consulted in user space instead of on
//! the NIC. Here the table lives in the NIC object, and every segment of every descriptor, and
//! every incoming RDMA, is checked against it by `RegionTable::translate` before a single
//! byte is copied: this is what guarantees nothing is ever written outside a registered
//! region.
//!
//! Handles are 32 random bits (the size of VIA's `VIP_MEM_HANDLE`), never 0 nor a live one.
//!
//! | check (in order) | failure status |
//! |---|---|
//! | handle is registered | `ProtectionError` (local) / `RdmaProtectionError` (remote) |
//! | region's ptag == VI's ptag | same |
//! | `offset + len <= region.len()` | same |
//! | RDMA write/read enabled on the region | `RdmaProtectionError` |

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};

use crate::attrs::{MAX_REGISTER_SIZE, MemAttributes, Ptag};
use crate::error::{CompletionStatus, Result, ViaError};
use crate::lock::{FastGuard, FastMutex};
use crate::user_mem::Bytes;

/// The handle of a registered region (`VIP_MEM_HANDLE`, ≈ ibverbs lkey/rkey). Peers name a
/// remote region by its raw value, which the application sends them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemHandle(pub(crate) u32);

impl MemHandle {
    /// The value to send to a peer that wants to RDMA into this region.
    pub fn raw(self) -> u32 {
        self.0
    }
    /// A handle received from a peer.
    pub fn from_raw(raw: u32) -> Self {
        MemHandle(raw)
    }
}

/// What a translation is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A local data segment of a send or receive descriptor.
    Local,
    /// A peer writes into the region.
    RemoteWrite,
    /// A peer reads from the region.
    RemoteRead,
}

pub(crate) struct RegionInner {
    pub(crate) attrs: MemAttributes,
    len: usize,
    /// What segments add to name the region's first byte: 0 for library-owned and scoped
    /// regions (segments carry offsets), the address of the first byte for regions registered
    /// by address ([`crate::Nic::register_addr`], VIPL's model: segments carry virtual
    /// addresses, and a peer's RDMA names the address the application sent it).
    origin: u64,
    /// Every access to the bytes, the engine's and the application's, holds this lock: it is
    /// what lets a lent region be revoked safely ([`crate::user_mem`]).
    data: FastMutex<Bytes>,
}

impl RegionInner {
    /// Where a peer finds this region's bytes (fd, serial), if they are in shared memory.
    pub(crate) fn shared_source(bytes: &Bytes) -> Option<(u32, u64)> {
        match bytes {
            Bytes::Shared(m) => Some(m.source()),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn lock(&self) -> FastGuard<'_, Bytes> {
        self.data.lock()
    }

    fn write(&self, offset: usize, src: &[u8]) -> Result<()> {
        let mut d = self.lock();
        let dst = offset
            .checked_add(src.len())
            .and_then(|end| d.get_mut(offset..end))
            .ok_or_else(|| {
                ViaError::Protection(format!(
                    "write of {} B at {offset} outside region",
                    src.len()
                ))
            })?;
        dst.copy_from_slice(src);
        Ok(())
    }

    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        let d = self.lock();
        let src = offset
            .checked_add(dst.len())
            .and_then(|end| d.get(offset..end))
            .ok_or_else(|| {
                ViaError::Protection(format!(
                    "read of {} B at {offset} outside region",
                    dst.len()
                ))
            })?;
        dst.copy_from_slice(src);
        Ok(())
    }
}

/// Handles are small sequential integers: hashing them with SipHash would cost more than the
/// rest of a translation, so the table hashes a handle to itself. Public for tables keyed the
/// same way above this crate (libvipl's regions by memory handle).
#[derive(Default, Clone, Copy)]
pub struct BuildIdHasher;

pub struct IdHasher(u64);

impl std::hash::BuildHasher for BuildIdHasher {
    type Hasher = IdHasher;
    #[inline]
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

impl std::hash::Hasher for IdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n);
    }
}

/// The NIC's registration table.
#[derive(Default)]
pub(crate) struct RegionTable {
    /// Library-owned regions of at least this many bytes live in shared memory (`shm` NICs,
    /// [`crate::shared_mem`]); `None`: none do.
    shared_min: Option<usize>,
    map: RwLock<HashMap<u32, Arc<RegionInner>, BuildIdHasher>>,
    /// Registrations so far: the fallback handle source where the OS has no randomness.
    next: AtomicU32,
    /// Bumped on every registration and deregistration: a [`TranslationCache`] entry taken
    /// under an older generation may name a region that is gone (handles are random, so one
    /// may be drawn again after its region is gone).
    generation: AtomicU64,
}

/// A VI's cache of recent successful lookups (handle → region), so the common case of
/// translating the same few buffers again and again costs no lock: one `Acquire` load of the
/// table's generation, a compare, and the same ptag / bounds / rights checks as
/// [`RegionTable::translate`].
#[derive(Default)]
pub(crate) struct TranslationCache {
    generation: u64,
    entries: [Option<(u32, Arc<RegionInner>)>; 4],
    next: usize,
}

impl RegionTable {
    /// A table whose regions of at least `min` bytes live in shared memory.
    pub(crate) fn with_shared_regions(min: usize) -> Self {
        RegionTable {
            shared_min: Some(min.max(1)),
            ..Default::default()
        }
    }

    pub(crate) fn register(
        self: &Arc<Self>,
        len: usize,
        attrs: MemAttributes,
    ) -> Result<MemRegion> {
        check_len(len)?;
        // Shared memory is only a faster path: a process out of fds (one per shared region)
        // or memfds gets an ordinary region, which moves through the ring.
        let shared = match self.shared_min {
            Some(min) if len >= min => {
                crate::shared_mem::SharedMem::new(len, "icnlab-via-region").ok()
            }
            _ => None,
        };
        let bytes = shared.map_or_else(|| Bytes::Owned(vec![0; len]), Bytes::Shared);
        let (handle, inner) = self.insert(attrs, bytes, 0);
        Ok(MemRegion {
            handle,
            inner,
            table: Arc::downgrade(self),
        })
    }

    /// Registers the caller's `buf` for the duration of `f` ([`crate::Nic::register_user_mem`]).
    pub(crate) fn register_user<R>(
        &self,
        buf: &mut [u8],
        attrs: MemAttributes,
        f: impl FnOnce(&UserRegion<'_>) -> R,
    ) -> Result<R> {
        check_len(buf.len())?;
        let (handle, inner) = self.insert(attrs, Bytes::lend(buf), 0);
        /// Ends the registration when the scope ends, however it ends: out of the table
        /// first (no new descriptor can name it), then the bytes revoked under the lock (no
        /// pending one can reach them). Owned here, so the caller cannot forget it.
        struct Revoke<'t> {
            table: &'t RegionTable,
            handle: MemHandle,
            inner: Arc<RegionInner>,
        }
        impl Drop for Revoke<'_> {
            fn drop(&mut self) {
                self.table.remove(self.handle);
                self.inner.lock().revoke();
            }
        }
        let guard = Revoke {
            table: self,
            handle,
            inner,
        };
        let region = UserRegion {
            handle,
            inner: guard.inner.clone(),
            _buf: std::marker::PhantomData,
        };
        Ok(f(&region))
    }

    fn insert(
        &self,
        attrs: MemAttributes,
        bytes: Bytes,
        origin: u64,
    ) -> (MemHandle, Arc<RegionInner>) {
        let inner = Arc::new(RegionInner {
            attrs,
            len: bytes.len(),
            origin,
            data: FastMutex::new(bytes),
        });
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        let handle = loop {
            let h = random_handle(&self.next);
            if h != 0 && !map.contains_key(&h) {
                break MemHandle(h);
            }
        };
        map.insert(handle.0, inner.clone());
        drop(map);
        // A handle may come back after its region was deregistered: caches of the old one
        // were dropped by that deregistration's bump, and this one keeps them honest too.
        self.generation.fetch_add(1, Ordering::Release);
        (handle, inner)
    }

    /// Registers `bytes` (lent by address, [`crate::Nic::register_addr`]) with segments naming
    /// them by address: the region's origin is `origin`.
    pub(crate) fn register_by_address(
        &self,
        bytes: Bytes,
        origin: u64,
        attrs: MemAttributes,
    ) -> Result<MemHandle> {
        check_len(bytes.len())?;
        if origin.checked_add(bytes.len() as u64).is_none() {
            return Err(ViaError::InvalidParameter(
                "region wraps around the address space".into(),
            ));
        }
        Ok(self.insert(attrs, bytes, origin).0)
    }

    /// Ends a registration by address: out of the table, then the bytes revoked under the
    /// region's lock (a descriptor still pending on it moves bytes to or from a sink, never
    /// to the caller's memory, which may be freed once this returns).
    pub(crate) fn deregister_by_address(&self, handle: MemHandle) -> Result<()> {
        let inner = {
            let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
            // Regions registered by address have a non-null origin; the others are
            // deregistered by dropping their owner.
            if map.get(&handle.0).is_none_or(|r| r.origin == 0) {
                return Err(ViaError::InvalidParameter(format!(
                    "no region registered by address with handle {}",
                    handle.0
                )));
            }
            map.remove(&handle.0)
        };
        self.generation.fetch_add(1, Ordering::Release);
        if let Some(inner) = inner {
            inner.lock().revoke();
        }
        Ok(())
    }

    /// The attributes of region `handle` (`VipQueryMem`).
    pub(crate) fn attributes_of(&self, handle: MemHandle) -> Option<MemAttributes> {
        let map = self.map.read().unwrap_or_else(|e| e.into_inner());
        map.get(&handle.0).map(|r| r.attrs)
    }

    /// `VipSetMemAttributes` on a region registered by address: the same handle and bytes
    /// with new attributes (a new table entry; the translation caches drop the old one). The
    /// old entry is revoked like a deregistered region, so nothing reaches the caller's bytes
    /// through it once the region is deregistered: a descriptor still pending on the region
    /// from before the change moves its bytes to or from a sink (change attributes only on
    /// idle regions).
    pub(crate) fn set_attributes_by_address(
        &self,
        handle: MemHandle,
        attrs: MemAttributes,
        bytes: impl FnOnce() -> Bytes,
    ) -> Result<()> {
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        let Some(old) = map.get(&handle.0) else {
            return Err(ViaError::InvalidParameter(format!(
                "no region with handle {}",
                handle.0
            )));
        };
        let origin = old.origin;
        let b = bytes();
        let inner = Arc::new(RegionInner {
            attrs,
            len: b.len(),
            origin,
            data: FastMutex::new(b),
        });
        let old = map.insert(handle.0, inner);
        self.generation.fetch_add(1, Ordering::Release);
        drop(map);
        if let Some(old) = old {
            old.lock().revoke();
        }
        Ok(())
    }

    fn remove(&self, handle: MemHandle) {
        self.map
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&handle.0);
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// [`RegionTable::translate`] through `cache`: same checks, same results. The region is
    /// lent from the cache; a caller that keeps it (a posted receive) clones the `Arc`, one
    /// that only copies (a send) does not.
    pub(crate) fn translate_cached<'c>(
        &self,
        cache: &'c mut TranslationCache,
        handle: MemHandle,
        offset: u64,
        len: u64,
        ptag: Ptag,
        access: Access,
    ) -> std::result::Result<(&'c Arc<RegionInner>, usize), CompletionStatus> {
        let generation = self.generation.load(Ordering::Acquire);
        if generation != cache.generation {
            *cache = TranslationCache {
                generation,
                ..Default::default()
            };
        }
        let slot = match cache
            .entries
            .iter()
            .position(|e| e.as_ref().is_some_and(|(h, _)| *h == handle.0))
        {
            Some(i) => i,
            None => {
                let r = self.lookup(handle, access)?;
                let i = cache.next;
                cache.entries[i] = Some((handle.0, r));
                cache.next = (i + 1) % cache.entries.len();
                i
            }
        };
        let Some((_, region)) = &cache.entries[slot] else {
            return Err(fail_status(access));
        };
        let local = check(region, offset, len, ptag, access)?;
        Ok((region, local))
    }

    fn lookup(
        &self,
        handle: MemHandle,
        access: Access,
    ) -> std::result::Result<Arc<RegionInner>, CompletionStatus> {
        let map = self.map.read().unwrap_or_else(|e| e.into_inner());
        map.get(&handle.0).cloned().ok_or(fail_status(access))
    }

    /// Checks `[offset, offset+len)` of region `handle` for use by a VI with tag `ptag`.
    /// See the module table for the checks and the status each failure yields. The engine
    /// goes through [`RegionTable::translate_cached`]; this uncached form is the reference
    /// the cache is tested against.
    #[cfg(test)]
    pub(crate) fn translate(
        &self,
        handle: MemHandle,
        offset: u64,
        len: u64,
        ptag: Ptag,
        access: Access,
    ) -> std::result::Result<(Arc<RegionInner>, usize), CompletionStatus> {
        let region = self.lookup(handle, access)?;
        let local = check(&region, offset, len, ptag, access)?;
        Ok((region, local))
    }
}

/// A fresh handle value: 32 random bits from the OS (`getrandom`), so a peer cannot guess
/// the handle of a region it was not told (VIA's memory handles are 32 bits: `VIP_MEM_HANDLE`).
/// Guessing is not the protection, only a second wall: an RDMA must also come through a VI
/// whose protection tag is the region's, on a region with RDMA enabled. Where the OS has no
/// randomness, a counter.
fn random_handle(next: &AtomicU32) -> u32 {
    let mut b = [0u8; 4];
    match getrandom::fill(&mut b) {
        Ok(()) => u32::from_ne_bytes(b),
        Err(_) => next.fetch_add(1, Ordering::Relaxed).wrapping_add(1),
    }
}

fn check_len(len: usize) -> Result<()> {
    if len > MAX_REGISTER_SIZE {
        return Err(ViaError::InvalidParameter(format!(
            "region length must be in 0..={MAX_REGISTER_SIZE}, got {len}"
        )));
    }
    Ok(())
}

fn fail_status(access: Access) -> CompletionStatus {
    match access {
        Access::Local => CompletionStatus::ProtectionError,
        _ => CompletionStatus::RdmaProtectionError,
    }
}

/// The checks after the lookup (rows 2–4 of the module table); the offset into the region's
/// bytes (`offset` less the region's origin).
fn check(
    region: &RegionInner,
    offset: u64,
    len: u64,
    ptag: Ptag,
    access: Access,
) -> std::result::Result<usize, CompletionStatus> {
    let fail = fail_status(access);
    if region.attrs.ptag != ptag {
        return Err(fail);
    }
    let Some(local) = offset.checked_sub(region.origin) else {
        return Err(fail);
    };
    match local.checked_add(len) {
        Some(end) if end <= region.len as u64 => {}
        _ => return Err(fail),
    }
    let allowed = match access {
        Access::Local => true,
        Access::RemoteWrite => region.attrs.enable_rdma_write,
        Access::RemoteRead => region.attrs.enable_rdma_read,
    };
    if !allowed {
        return Err(CompletionStatus::RdmaProtectionError);
    }
    Ok(local as usize)
}

/// A registered memory region (`VipRegisterMem`; dropping it is `VipDeregisterMem`).
///
/// The library owns the bytes so it can check every access; the application reads and writes
/// them through [`MemRegion::write`], [`MemRegion::read`] and [`MemRegion::with_mut`].
pub struct MemRegion {
    handle: MemHandle,
    inner: Arc<RegionInner>,
    table: Weak<RegionTable>,
}

/// The accessors a library-owned [`MemRegion`] and a caller-owned [`UserRegion`] share:
/// both are a handle and the registered bytes behind the region's lock.
macro_rules! region_accessors {
    () => {
        /// The handle to put in descriptor segments (and to send to RDMA peers).
        pub fn handle(&self) -> MemHandle {
            self.handle
        }
        /// The region's attributes (`VipQueryMem`).
        pub fn attributes(&self) -> MemAttributes {
            self.inner.attrs
        }
        /// Length in bytes.
        pub fn len(&self) -> usize {
            self.inner.len
        }
        /// True for a zero-length region.
        pub fn is_empty(&self) -> bool {
            self.len() == 0
        }
        /// Copies `src` into the region at `offset`.
        pub fn write(&self, offset: usize, src: &[u8]) -> Result<()> {
            self.inner.write(offset, src)
        }
        /// Copies `dst.len()` bytes from the region at `offset` into `dst`.
        pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
            self.inner.read(offset, dst)
        }
        /// Runs `f` on the region's bytes.
        pub fn with<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
            f(&self.inner.lock())
        }
        /// Runs `f` on the region's bytes, mutably.
        pub fn with_mut<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> R {
            f(&mut self.inner.lock())
        }
    };
}

impl MemRegion {
    region_accessors!();
}

/// The caller's own memory, registered for the scope of [`crate::Nic::register_user_mem`]
/// (≈ `ibv_reg_mr` / `fi_mr_reg` on an application buffer): usable in send, receive and RDMA
/// descriptors like a [`MemRegion`], with no bounce copy. While the scope runs, the slice is
/// mutably borrowed by the registration, so the application reaches the bytes only through
/// this handle's accessors (which take the region's lock, as the NIC does); when the scope
/// ends the slice comes back with whatever the NIC put in it.
pub struct UserRegion<'s> {
    handle: MemHandle,
    inner: Arc<RegionInner>,
    _buf: std::marker::PhantomData<&'s mut [u8]>,
}

impl UserRegion<'_> {
    region_accessors!();
}

impl Drop for MemRegion {
    fn drop(&mut self) {
        if let Some(t) = self.table.upgrade() {
            t.remove(self.handle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Arc<RegionTable> {
        Arc::new(RegionTable::default())
    }

    #[test]
    fn translate_applies_every_check_of_the_table() {
        let t = table();
        let p = Ptag(1);
        let local = t.register(100, MemAttributes::local(p)).unwrap();
        let rdma = t.register(100, MemAttributes::rdma(p)).unwrap();
        use Access::*;
        use CompletionStatus::*;
        // row 1: unknown handle
        assert_eq!(
            t.translate(MemHandle(999), 0, 1, p, Local).err(),
            Some(ProtectionError)
        );
        assert_eq!(
            t.translate(MemHandle(999), 0, 1, p, RemoteWrite).err(),
            Some(RdmaProtectionError)
        );
        // row 2: ptag mismatch
        assert_eq!(
            t.translate(local.handle(), 0, 1, Ptag(2), Local).err(),
            Some(ProtectionError)
        );
        // row 3: bounds, including the exact end and u64 overflow
        assert!(t.translate(local.handle(), 0, 100, p, Local).is_ok());
        assert!(t.translate(local.handle(), 100, 0, p, Local).is_ok());
        assert_eq!(
            t.translate(local.handle(), 1, 100, p, Local).err(),
            Some(ProtectionError)
        );
        assert_eq!(
            t.translate(local.handle(), u64::MAX, 2, p, Local).err(),
            Some(ProtectionError)
        );
        // row 4: RDMA rights
        assert_eq!(
            t.translate(local.handle(), 0, 1, p, RemoteWrite).err(),
            Some(RdmaProtectionError)
        );
        assert_eq!(
            t.translate(local.handle(), 0, 1, p, RemoteRead).err(),
            Some(RdmaProtectionError)
        );
        assert!(t.translate(rdma.handle(), 0, 1, p, RemoteWrite).is_ok());
        assert!(t.translate(rdma.handle(), 0, 1, p, RemoteRead).is_ok());
    }

    #[test]
    fn cached_translation_agrees_with_the_table_and_forgets_deregistered_regions() {
        let t = table();
        let p = Ptag(1);
        let local = t.register(100, MemAttributes::local(p)).unwrap();
        let rdma = t.register(100, MemAttributes::rdma(p)).unwrap();
        let mut cache = TranslationCache::default();
        let handles = [local.handle(), rdma.handle(), MemHandle(999)];
        // more handles than cache entries are not needed to exercise misses: the first pass
        // misses, the second hits
        for _pass in 0..2 {
            for h in handles {
                for (off, len) in [(0, 1), (0, 100), (100, 0), (1, 100), (u64::MAX, 2)] {
                    for tag in [p, Ptag(2)] {
                        for acc in [Access::Local, Access::RemoteWrite, Access::RemoteRead] {
                            assert_eq!(
                                t.translate_cached(&mut cache, h, off, len, tag, acc).err(),
                                t.translate(h, off, len, tag, acc).err(),
                                "{h:?} {off} {len} {tag:?} {acc:?}"
                            );
                        }
                    }
                }
            }
        }
        let h = local.handle();
        assert!(cache.entries.iter().flatten().any(|(k, _)| *k == h.0));
        drop(local);
        assert_eq!(
            t.translate_cached(&mut cache, h, 0, 1, p, Access::Local)
                .err(),
            Some(CompletionStatus::ProtectionError),
            "a deregistered region must not be served from the cache"
        );
    }

    #[test]
    fn dropping_a_region_deregisters_it() {
        let t = table();
        let r = t.register(8, MemAttributes::local(Ptag(1))).unwrap();
        let h = r.handle();
        assert!(t.translate(h, 0, 8, Ptag(1), Access::Local).is_ok());
        drop(r);
        assert_eq!(
            t.translate(h, 0, 8, Ptag(1), Access::Local).err(),
            Some(CompletionStatus::ProtectionError)
        );
    }

    #[test]
    fn a_user_region_lends_the_callers_bytes_for_its_scope_only() {
        let t = table();
        let p = Ptag(1);
        let mut buf = vec![7u8; 16];
        let mut handle = None;
        let mut pending = None;
        let n = t
            .register_user(&mut buf, MemAttributes::rdma(p), |r| {
                handle = Some(r.handle());
                assert_eq!((r.len(), r.attributes()), (16, MemAttributes::rdma(p)));
                // what a descriptor does: translate, then copy under the lock
                let region = t
                    .translate(r.handle(), 4, 4, p, Access::RemoteWrite)
                    .unwrap();
                region.0.lock()[4..8].copy_from_slice(&[1, 2, 3, 4]);
                r.write(0, &[9]).unwrap();
                assert!(r.write(15, &[0, 0]).is_err(), "bounds as for owned regions");
                assert_eq!(r.with(|b| b[..8].to_vec()), [9, 7, 7, 7, 1, 2, 3, 4]);
                // a descriptor still pending when the scope ends
                pending = Some(region);
                42
            })
            .unwrap();
        assert_eq!(n, 42);
        assert_eq!(
            &buf[..8],
            &[9, 7, 7, 7, 1, 2, 3, 4],
            "the NIC wrote into buf"
        );
        let h = handle.unwrap();
        assert_eq!(
            t.translate(h, 0, 1, p, Access::Local).err(),
            Some(CompletionStatus::ProtectionError),
            "the handle is gone with the scope"
        );
        // the pending descriptor's bytes go elsewhere: buf is the caller's again
        pending.unwrap().0.lock().fill(55);
        assert_eq!(&buf[..8], &[9, 7, 7, 7, 1, 2, 3, 4]);
    }

    #[test]
    fn a_panicking_scope_still_revokes_the_registration() {
        let t = table();
        let p = Ptag(1);
        let mut buf = vec![0u8; 8];
        let mut pending = None;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            t.register_user(&mut buf, MemAttributes::local(p), |r| {
                pending = Some(t.translate(r.handle(), 0, 8, p, Access::Local).unwrap());
                panic!("application bug");
            })
        }));
        assert!(r.is_err());
        pending.unwrap().0.lock().fill(1);
        assert_eq!(buf, [0; 8]);
    }

    #[test]
    fn region_accessors_refuse_out_of_bounds() {
        let t = table();
        let r = t.register(4, MemAttributes::local(Ptag(1))).unwrap();
        r.write(0, &[1, 2, 3, 4]).unwrap();
        assert!(r.write(1, &[0; 4]).is_err());
        assert!(r.write(usize::MAX, &[0; 2]).is_err());
        let mut b = [0; 2];
        r.read(2, &mut b).unwrap();
        assert_eq!(b, [3, 4]);
        assert!(r.read(3, &mut b).is_err());
        assert!(
            t.register(MAX_REGISTER_SIZE + 1, MemAttributes::local(Ptag(1)))
                .is_err()
        );
    }

    #[test]
    #[allow(unsafe_code)]
    fn regions_registered_by_address_are_named_by_address_and_revoked_on_deregistration() {
        let t = table();
        let p = Ptag(1);
        let mut buf = vec![7u8; 64];
        let base = buf.as_mut_ptr();
        // SAFETY: `buf` outlives the registration, which `deregister_by_address` ends below,
        // and no reference to it is held until then.
        let bytes = unsafe { Bytes::lend_raw(base, buf.len()) };
        let origin = base as u64;
        let h = t
            .register_by_address(bytes, origin, MemAttributes::rdma(p))
            .unwrap();
        use Access::*;
        use CompletionStatus::*;
        // the whole region, by address: local offset 0
        assert_eq!(t.translate(h, origin, 64, p, Local).unwrap().1, 0);
        assert_eq!(
            t.translate(h, origin + 10, 4, p, RemoteWrite).unwrap().1,
            10
        );
        assert_eq!(t.translate(h, origin + 64, 0, p, Local).unwrap().1, 64);
        // one byte before the start, one past the end, an offset-style value
        assert_eq!(
            t.translate(h, origin - 1, 1, p, Local).err(),
            Some(ProtectionError)
        );
        assert_eq!(
            t.translate(h, origin + 1, 64, p, Local).err(),
            Some(ProtectionError)
        );
        assert_eq!(
            t.translate(h, 0, 1, p, RemoteRead).err(),
            Some(RdmaProtectionError)
        );
        // the library writes through the translation into the caller's bytes
        t.translate(h, origin + 2, 2, p, Local).unwrap().0.lock()[2..4].copy_from_slice(&[1, 2]);
        let before = t.translate(h, origin, 8, p, Local).unwrap().0;
        // new attributes keep handle, address and bytes
        t.set_attributes_by_address(h, MemAttributes::local(p), || {
            // SAFETY: as above, same region.
            unsafe { Bytes::lend_raw(base, 64) }
        })
        .unwrap();
        assert_eq!(t.attributes_of(h), Some(MemAttributes::local(p)));
        assert_eq!(
            t.translate(h, origin, 1, p, RemoteWrite).err(),
            Some(RdmaProtectionError)
        );
        let kept = t.translate(h, origin, 8, p, Local).unwrap().0;
        t.deregister_by_address(h).unwrap();
        // gone from the table; a second deregistration is an error
        assert_eq!(
            t.translate(h, origin, 1, p, Local).err(),
            Some(ProtectionError)
        );
        assert!(t.deregister_by_address(h).is_err());
        // a library-owned region cannot be deregistered by address
        let owned = t.register(8, MemAttributes::local(p)).unwrap();
        assert!(t.deregister_by_address(owned.handle()).is_err());
        assert!(t.translate(owned.handle(), 0, 8, p, Local).is_ok());
        assert!(
            t.register_by_address(
                Bytes::Owned(vec![0; 8]),
                u64::MAX - 3,
                MemAttributes::local(p)
            )
            .is_err()
        );
        // the caller's memory got the write; references taken before the new attributes
        // and before the deregistration reach only a sink now
        kept.lock()[0] = 99;
        before.lock()[1] = 98;
        assert_eq!(&buf[..4], &[7, 7, 1, 2]);
    }
}
