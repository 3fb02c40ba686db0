//! Opaque handles: every object the C side holds (`VIP_NIC_HANDLE`, `VIP_VI_HANDLE`,
//! `VIP_CQ_HANDLE`, `VIP_PROTECTION_HANDLE`, `VIP_CONN_HANDLE`) is a boxed object behind a
//! 64-bit tag saying what it is.
//!
//! Why a tag: VIPL returns `VIP_INVALID_PARAMETER` for a handle of the wrong kind, and a
//! program can pass any `void *`. The tag turns a null handle, a handle of another kind, or
//! a destroyed one into that return code. Destroying a handle drops its object and leaves
//! its tag (now "destroyed") in place for good: a handle is never reused, so a call on a
//! destroyed handle is recognised, at the cost of a few bytes per object ever destroyed. A
//! pointer this library never returned is undefined behaviour, as in every VIPL.

#![allow(unsafe_code)]

use std::ffi::c_void;
use std::mem::ManuallyDrop;

/// What a handle is.
pub trait Kind: Sized {
    /// This kind's tag.
    const TAG: u64;
}

const DESTROYED: u64 = 0xDEAD_0B1E_C7DE_AD00;

#[repr(C)]
struct Handle<T> {
    tag: u64,
    obj: ManuallyDrop<T>,
}

/// Boxes `obj` and returns its handle.
pub fn new<T: Kind>(obj: T) -> *mut c_void {
    Box::into_raw(Box::new(Handle {
        tag: T::TAG,
        obj: ManuallyDrop::new(obj),
    }))
    .cast()
}

/// The object behind `h`, if `h` is a live handle of kind `T`.
///
/// # Safety
/// `h` is null or a handle returned by [`new`] (of any kind, destroyed or not).
pub unsafe fn get<'a, T: Kind>(h: *mut c_void) -> Option<&'a T> {
    if h.is_null() || !(h as usize).is_multiple_of(std::mem::align_of::<u64>()) {
        return None;
    }
    // SAFETY: by the contract `h` points to a `Handle<_>`, whose first field (`repr(C)`) is
    // the `u64` tag, and its allocation is never freed ([`destroy`] keeps it).
    let tag = unsafe { *(h as *const u64) };
    if tag != T::TAG {
        return None;
    }
    // SAFETY: the tag says the allocation is a live `Handle<T>`; objects are only ever
    // shared (`&T`), and `T: Sync` where threads use it.
    Some(unsafe { &(*(h as *const Handle<T>)).obj })
}

/// Destroys the object behind `h` (dropping it) and marks the handle destroyed. Returns
/// false if `h` is not a live handle of kind `T`.
///
/// # Safety
/// As for [`get`], and no reference obtained from [`get`] on `h` is used after this.
pub unsafe fn destroy<T: Kind>(h: *mut c_void) -> bool {
    // SAFETY: the caller's contract is `get`'s.
    if unsafe { get::<T>(h) }.is_none() {
        return false;
    }
    let p = h as *mut Handle<T>;
    // SAFETY: `p` is a live `Handle<T>` (checked above). The tag is written first so no
    // later `get` sees the object; then the object is dropped exactly once (the tag no
    // longer matches, so a second `destroy` returns false). The allocation stays.
    unsafe {
        (*p).tag = DESTROYED;
        ManuallyDrop::drop(&mut (*p).obj);
    }
    true
}

#[cfg(test)]
mod tests {
    //! Heap only, so Miri can run it (`cargo +nightly miri test -p icn-vipl --lib handle`;
    //! not run in the session that wrote it: Miri was not installed).
    use super::*;
    use std::sync::Arc;

    struct A(#[allow(dead_code)] Arc<()>);
    impl Kind for A {
        const TAG: u64 = 1;
    }
    struct B;
    impl Kind for B {
        const TAG: u64 = 2;
    }

    #[test]
    fn handles_are_checked_by_kind_and_recognised_once_destroyed() {
        let alive = Arc::new(());
        let h = new(A(alive.clone()));
        // SAFETY: `h` came from `new`; null is allowed.
        unsafe {
            assert!(get::<A>(h).is_some());
            assert!(get::<B>(h).is_none());
            assert!(get::<A>(std::ptr::null_mut()).is_none());
            assert!(get::<A>((h as usize + 1) as *mut c_void).is_none());
            assert!(!destroy::<B>(h));
            assert_eq!(Arc::strong_count(&alive), 2);
            assert!(destroy::<A>(h));
            // dropped exactly once
            assert_eq!(Arc::strong_count(&alive), 1);
            assert!(get::<A>(h).is_none());
            assert!(!destroy::<A>(h));
        }
        assert_eq!(Arc::strong_count(&alive), 1);
    }
}
