//! The bytes behind a registered region: library-owned, or the caller's own memory lent for a
//! scope ([`crate::Nic::register_user_mem`], like `ibv_reg_mr` / `fi_mr_reg` on the user's
//! buffer). With `ring` and `link::shm`, the only module with `unsafe`.
//!
//! # Why a scope and not a returned handle
//! A handle that borrows the slice (`UserRegion<'a>`, deregistering on drop) is not enough:
//! `mem::forget(handle)` ends the borrow without running the drop, and the NIC (shared with
//! the engine of every VI, which lives as long as the NIC) would still point into memory the
//! caller may free. The same hole closed `std::thread::scoped`; the same cure applies: the
//! registration lives inside [`crate::Nic::register_user_mem`], whose own guard (which the
//! caller cannot forget) revokes it before the borrow ends, panics included.
//!
//! # What revocation does
//! All accesses to a region's bytes go through its mutex ([`crate::memory`]). Revoking takes
//! the mutex and swaps the borrowed bytes for an owned zero buffer of the same length (lazily
//! mapped by the allocator, so it costs nothing unless written). Once it returns, nothing can
//! reach the caller's memory; a descriptor still pending on the region (an application
//! error in VIA: memory deregistered while in use) moves its bytes to or from that buffer
//! instead — never a dangling pointer, never a panic. New descriptors are refused: the
//! handle is removed from the registration table first.

#![allow(unsafe_code)]

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A region's bytes.
pub(crate) enum Bytes {
    Owned(Vec<u8>),
    Lent(Lent),
    /// Library-owned, in a memfd a peer may map ([`crate::shared_mem`]).
    Shared(crate::shared_mem::SharedMem),
}

/// The caller's slice, lent for the duration of a registration scope.
pub(crate) struct Lent {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a `Lent` stands for the `&mut [u8]` it was made from, which is `Send` ([u8] is
// `Send`); it is only dereferenced under the region's mutex, so no two threads use it at once.
unsafe impl Send for Lent {}

impl Bytes {
    /// Lends `buf` until [`Bytes::revoke`].
    ///
    /// The caller ([`crate::Nic::register_user_mem`]) guarantees that `revoke` runs on the
    /// `Bytes` (under its mutex) before the borrow of `buf` ends; until then `buf` is
    /// mutably borrowed by the scope, so nothing else touches it.
    pub(crate) fn lend(buf: &mut [u8]) -> Bytes {
        Bytes::Lent(Lent {
            ptr: NonNull::from(&mut *buf).cast(),
            len: buf.len(),
        })
    }

    /// Lends `len` bytes at `ptr` until [`Bytes::revoke`] (VIPL's `VipRegisterMem`).
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes, and nothing else may create a
    /// Rust reference to them, until `revoke` has run on the returned `Bytes` (under its
    /// mutex). `ptr` must not be null.
    pub(crate) unsafe fn lend_raw(ptr: *mut u8, len: usize) -> Bytes {
        Bytes::Lent(Lent {
            ptr: NonNull::new(ptr).unwrap_or(NonNull::dangling()),
            len,
        })
    }

    /// Replaces lent bytes with an owned zero buffer of the same length (see the module doc).
    pub(crate) fn revoke(&mut self) {
        if let Bytes::Lent(l) = self {
            *self = Bytes::Owned(vec![0; l.len]);
        }
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Shared(m) => m,
            // SAFETY: `ptr`/`len` come from a live `&mut [u8]` (see `lend`): valid, aligned,
            // initialised, and not used elsewhere until `revoke`, which replaces this variant
            // before the borrow ends. Reached only through the region's mutex guard, so the
            // returned borrow is the only one.
            Bytes::Lent(l) => unsafe { std::slice::from_raw_parts(l.ptr.as_ptr(), l.len) },
        }
    }
}

impl DerefMut for Bytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Shared(m) => m,
            // SAFETY: as in `deref`; `&mut self` (under the mutex) makes this borrow unique.
            Bytes::Lent(l) => unsafe { std::slice::from_raw_parts_mut(l.ptr.as_ptr(), l.len) },
        }
    }
}

#[cfg(test)]
mod tests {
    //! Heap memory only: runs under Miri (`cargo +nightly miri test -p icn-via --lib
    //! user_mem`), which checks the borrows the `unsafe` blocks claim.
    use super::*;

    #[test]
    fn lent_bytes_are_the_callers_until_revoked_and_a_sink_after() {
        let mut buf = vec![1u8, 2, 3, 4];
        {
            let mut b = Bytes::lend(&mut buf);
            assert_eq!(&*b, &[1, 2, 3, 4]);
            b[1] = 20;
            b.copy_from_slice(&[9, 8, 7, 6]);
            b.revoke();
            // after revocation: same length, zeroes, and writes land elsewhere
            assert_eq!(&*b, &[0; 4]);
            b[0] = 99;
            b.revoke(); // idempotent on owned bytes
            assert_eq!(b[0], 99);
        }
        assert_eq!(buf, [9, 8, 7, 6]);
    }

    #[test]
    fn empty_and_owned_bytes() {
        let mut empty: [u8; 0] = [];
        let mut b = Bytes::lend(&mut empty);
        assert!(b.is_empty());
        b.revoke();
        assert!(b.is_empty());
        let o = Bytes::Owned(vec![5; 3]);
        assert_eq!(&*o, &[5, 5, 5]);
    }
}
