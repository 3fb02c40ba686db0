//! `VipNSInit`, `VipNSGetHostByName`, `VipNSGetHostByAddr`, `VipNSShutdown`: host names to
//! host addresses (IPv4, 4 bytes) through the system resolver (`/etc/hosts`, DNS).

use std::ffi::{c_char, c_ulong, c_void};
use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs};
use std::sync::atomic::Ordering;

use super::{cstr, net_addr, obj, put, put_net_addr};
use crate::objects::*;
use crate::types::*;

/// Opens the name service (`NSInitInfo` is not used). The other `VipNS*` calls return
/// `VIP_ERROR_NAMESERVICE` before this or after `VipNSShutdown`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipNSInit(nic: VIP_PVOID, _info: *mut c_void) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    n.0.ns_open.store(true, Ordering::Release);
    ret::VIP_SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipNSShutdown(nic: VIP_PVOID) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    if !n.0.ns_open.swap(false, Ordering::AcqRel) {
        return ret::VIP_ERROR_NAMESERVICE;
    }
    ret::VIP_SUCCESS
}

/// The IPv4 addresses of `name`, in the resolver's order, without repeats.
pub fn addresses(name: &str) -> Vec<Ipv4Addr> {
    let mut v = Vec::new();
    if let Ok(it) = (name, 0u16).to_socket_addrs() {
        for a in it {
            if let IpAddr::V4(ip) = a.ip()
                && !v.contains(&ip)
            {
                v.push(ip);
            }
        }
    }
    v
}

/// Writes the `NameIndex`-th address of host `Name` into `Address` (`HostAddressLen` = 4
/// and the 4 bytes; the discriminator is left alone). `VIP_ERROR_NAMESERVICE` for an
/// unknown name or an index past its addresses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipNSGetHostByName(
    nic: VIP_PVOID,
    name: *const c_char,
    out: *mut VIP_NET_ADDRESS,
    index: c_ulong,
) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    // SAFETY: null or a C string.
    let Some(name) = (unsafe { cstr(name) }) else {
        return ret::VIP_INVALID_PARAMETER;
    };
    if out.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    if !n.0.ns_open.load(Ordering::Acquire) {
        return ret::VIP_ERROR_NAMESERVICE;
    }
    let Some(ip) = addresses(name).get(index as usize).copied() else {
        return ret::VIP_ERROR_NAMESERVICE;
    };
    // SAFETY: non-null, room for a 4-byte host address (the caller sized it for
    // NicAddressLen).
    unsafe { put_net_addr(out, &ip.octets(), None) };
    ret::VIP_SUCCESS
}

/// The host name of `Address`'s host address (4 bytes) into `Name`, NUL-terminated, of
/// `*NameLen` bytes at most; `*NameLen` is set to the length needed including the NUL.
/// `VIP_ERROR_RESOURCE` if `Name` is too short, `VIP_ERROR_NAMESERVICE` if the address
/// has no name.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipNSGetHostByAddr(
    nic: VIP_PVOID,
    addr: *const VIP_NET_ADDRESS,
    name: *mut c_char,
    len: *mut c_ulong,
) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    // SAFETY: null or a VIP_NET_ADDRESS with its bytes.
    let Some(a) = (unsafe { net_addr(addr) }) else {
        return ret::VIP_INVALID_PARAMETER;
    };
    let Some(ip) = a.ipv4() else {
        return ret::VIP_INVALID_PARAMETER;
    };
    if name.is_null() || len.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    if !n.0.ns_open.load(Ordering::Acquire) {
        return ret::VIP_ERROR_NAMESERVICE;
    }
    let Some(host) = reverse(ip) else {
        return ret::VIP_ERROR_NAMESERVICE;
    };
    let need = host.len() + 1;
    // SAFETY: `len` non-null and valid (VIPL contract).
    let have = unsafe { len.read_unaligned() } as usize;
    // SAFETY: as above.
    unsafe { put(len, need as c_ulong) };
    if have < need {
        return ret::VIP_ERROR_RESOURCE;
    }
    // SAFETY: `name` has `have >= need` bytes (VIPL contract: *NameLen is its size).
    unsafe {
        std::ptr::copy_nonoverlapping(host.as_ptr(), name.cast::<u8>(), host.len());
        *name.add(host.len()) = 0;
    }
    ret::VIP_SUCCESS
}

/// The name of `ip` (`getnameinfo`, names only).
pub fn reverse(ip: Ipv4Addr) -> Option<String> {
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(ip).to_be(),
        },
        sin_zero: [0; 8],
    };
    let mut host = [0 as c_char; 1025];
    // SAFETY: `sin` is a valid sockaddr_in of the length passed; `host` is a writable
    // buffer of the length passed; no service buffer. `NI_NAMEREQD` makes a missing name
    // an error instead of the numeric form.
    let rc = unsafe {
        libc::getnameinfo(
            (&raw const sin).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            host.as_mut_ptr(),
            host.len() as libc::socklen_t,
            std::ptr::null_mut(),
            0,
            libc::NI_NAMEREQD,
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: on success `host` holds a NUL-terminated name.
    let s = unsafe { std::ffi::CStr::from_ptr(host.as_ptr()) };
    s.to_str().ok().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_resolves_both_ways() {
        assert_eq!(addresses("localhost").first(), Some(&Ipv4Addr::LOCALHOST));
        assert!(addresses("no-such-host.invalid").is_empty());
        assert!(reverse(Ipv4Addr::LOCALHOST).is_some());
    }
}
