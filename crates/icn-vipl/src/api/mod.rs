//! The 41 VIPL functions (`extern "C"`, exported unmangled), one module per chapter of the
//! specification's function list, and the pointer helpers they share.
//!
//! Every function checks its handles ([`crate::handle`]) and pointers for null before use,
//! and returns `VIP_INVALID_PARAMETER` for a bad one; what it does with the rest is its
//! doc comment. No function panics across the C boundary: the few that could (a poisoned
//! lock is recovered, not unwrapped) return a code instead.

//!
//! # Safety (every function)
//! The VIPL contract: each handle argument is null or a handle this library returned (of
//! any kind, destroyed or not); each pointer argument is null or valid for the reads and
//! writes the specification gives it (a descriptor stays valid from post to completion, a
//! registered region until deregistered). Nothing else is assumed. Hence no per-function
//! `# Safety` section.
#![allow(unsafe_code, clippy::missing_safety_doc)]

pub mod connect;
pub mod cq;
pub mod data;
pub mod mem;
pub mod nic;
pub mod ns;
pub mod vi;

use std::ffi::{CStr, c_char, c_void};

use crate::handle::{self, Kind};
use crate::types::*;

/// Looks `h` up as a `T`, or returns `VIP_INVALID_PARAMETER` from the calling function.
macro_rules! obj {
    ($t:ty, $h:expr) => {
        // SAFETY: handles passed to VIPL functions are null or ones this library returned
        // (the VIPL contract); `handle::get` checks null, alignment and kind.
        match unsafe { $crate::handle::get::<$t>($h) } {
            Some(o) => o,
            None => return $crate::types::ret::VIP_INVALID_PARAMETER,
        }
    };
}
pub(crate) use obj;

/// Writes `v` through the out-pointer `p`; false if `p` is null.
///
/// # Safety
/// `p` is null or valid for a write of `T` (the VIPL contract for out-parameters).
pub unsafe fn put<T>(p: *mut T, v: T) -> bool {
    if p.is_null() {
        return false;
    }
    // SAFETY: non-null, and valid by the contract.
    unsafe { p.write_unaligned(v) };
    true
}

/// The string at `p`, if non-null and UTF-8.
///
/// # Safety
/// `p` is null or a NUL-terminated string.
pub unsafe fn cstr<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated by the contract.
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

/// A `VIP_NET_ADDRESS`: (host address bytes, discriminator bytes).
pub struct NetAddr {
    pub host: Vec<u8>,
    pub disc: Vec<u8>,
}

impl NetAddr {
    /// The IPv4 host address, if the host address has 4 bytes.
    pub fn ipv4(&self) -> Option<std::net::Ipv4Addr> {
        <[u8; 4]>::try_from(self.host.as_slice())
            .ok()
            .map(Into::into)
    }
}

/// Reads the variable-length address at `p`; `None` if null or its discriminator is longer
/// than `MaxDiscriminatorLen`.
///
/// # Safety
/// `p` is null or points to a `VIP_NET_ADDRESS` followed by `HostAddressLen +
/// DiscriminatorLen` bytes (the VIPL contract).
pub unsafe fn net_addr(p: *const VIP_NET_ADDRESS) -> Option<NetAddr> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null; the header is read unaligned-safe.
    let a = unsafe { p.read_unaligned() };
    let (h, d) = (a.HostAddressLen as usize, a.DiscriminatorLen as usize);
    if d > icn_via::attrs::MAX_DISCRIMINATOR_LEN || h > 64 {
        return None;
    }
    // SAFETY: the bytes follow the two lengths, `h + d` of them by the contract.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (p as *const u8).add(std::mem::offset_of!(VIP_NET_ADDRESS, HostAddress)),
            h + d,
        )
    };
    Some(NetAddr {
        host: bytes[..h].to_vec(),
        disc: bytes[h..].to_vec(),
    })
}

/// Writes a network address (host address, then discriminator) to `p`.
///
/// # Safety
/// `p` is null or has room for a `VIP_NET_ADDRESS` with `host.len() + disc.len()` bytes
/// (the caller of `VipConnectWait` / `VipNSGetHostByName` allocates `NicAddressLen +
/// MaxDiscriminatorLen`, or what it expects).
pub unsafe fn put_net_addr(p: *mut VIP_NET_ADDRESS, host: &[u8], disc: Option<&[u8]>) -> bool {
    if p.is_null() {
        return false;
    }
    let base = std::mem::offset_of!(VIP_NET_ADDRESS, HostAddress);
    // SAFETY: non-null with room for the bytes written (the contract); byte writes need no
    // alignment.
    unsafe {
        let b = p as *mut u8;
        (b as *mut u16).write_unaligned(host.len() as u16);
        std::ptr::copy_nonoverlapping(host.as_ptr(), b.add(base), host.len());
        if let Some(d) = disc {
            (b.add(2) as *mut u16).write_unaligned(d.len() as u16);
            std::ptr::copy_nonoverlapping(d.as_ptr(), b.add(base + host.len()), d.len());
        }
    }
    true
}

/// The handle value of an object's handle pointer (for callbacks and CQ entries).
pub fn raw(h: *mut c_void) -> usize {
    h as usize
}

/// Destroys `h` as a `T` (false if it is not a live one).
///
/// # Safety
/// As for [`handle::destroy`]: the caller holds no reference into the object past this.
pub unsafe fn destroy<T: Kind>(h: *mut c_void) -> bool {
    // SAFETY: the caller's contract.
    unsafe { handle::destroy::<T>(h) }
}

/// `VIP_BOOLEAN` from a bool.
pub fn boolean(b: bool) -> VIP_BOOLEAN {
    if b { VIP_TRUE } else { VIP_FALSE }
}
