//! `VipCreatePtag`, `VipDestroyPtag`, `VipRegisterMem`, `VipDeregisterMem`, `VipQueryMem`,
//! `VipSetMemAttributes`.

use std::ffi::{c_ulong, c_void};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{boolean, obj, put};
use crate::objects::*;
use crate::types::*;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipCreatePtag(nic: VIP_PVOID, out: *mut VIP_PVOID) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    if out.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    let h = crate::handle::new(PtagObj {
        nic: n.0.clone(),
        ptag: n.0.via.create_ptag(),
        users: 0.into(),
    });
    // SAFETY: non-null out-pointer (VIPL contract).
    unsafe { put(out, h) };
    ret::VIP_SUCCESS
}

/// `VIP_INVALID_PTAG` for a tag of another NIC; `VIP_INVALID_STATE` while a region or VI
/// still uses it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipDestroyPtag(nic: VIP_PVOID, ptag: VIP_PVOID) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    let p = obj!(PtagObj, ptag);
    if !Arc::ptr_eq(&p.nic, &n.0) {
        return ret::VIP_INVALID_PTAG;
    }
    if p.users.load(Ordering::Acquire) > 0 {
        return ret::VIP_INVALID_STATE;
    }
    // SAFETY: `p` is not used past this point.
    unsafe { super::destroy::<PtagObj>(ptag) };
    ret::VIP_SUCCESS
}

/// The protection tag object `h` of NIC `nic`, or the return code for a bad one.
pub(crate) fn ptag_of<'a>(nic: &Arc<NicCore>, h: VIP_PVOID) -> Result<&'a PtagObj, VIP_RETURN> {
    // SAFETY: `h` is null or a handle this library returned (VIPL contract).
    match unsafe { crate::handle::get::<PtagObj>(h) } {
        Some(p) if Arc::ptr_eq(&p.nic, nic) => Ok(p),
        _ => Err(ret::VIP_INVALID_PTAG),
    }
}

fn mem_attrs(p: &PtagObj, a: &VIP_MEM_ATTRIBUTES) -> icn_via::MemAttributes {
    icn_via::MemAttributes {
        ptag: p.ptag,
        enable_rdma_write: a.EnableRdmaWrite != 0,
        enable_rdma_read: a.EnableRdmaRead != 0,
    }
}

/// Registers `len` bytes at `addr` (the caller's memory, used in place: no copy) until
/// `VipDeregisterMem`. Descriptors name these bytes by address, and peers RDMA into them
/// by the address the consumer sends them. `VIP_INVALID_PTAG` for a bad tag,
/// `VIP_INVALID_PARAMETER` for a null or empty region or one not wholly mapped readable and
/// writable in this process (`/proc/self/maps`: the library writes receives and descriptor
/// status there; registering it would only move the crash into the library),
/// `VIP_ERROR_RESOURCE` beyond `MaxRegisterBytes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipRegisterMem(
    nic: VIP_PVOID,
    addr: *mut c_void,
    len: c_ulong,
    attrs: *const VIP_MEM_ATTRIBUTES,
    out: *mut VIP_MEM_HANDLE,
) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    if addr.is_null() || attrs.is_null() || out.is_null() || len == 0 {
        return ret::VIP_INVALID_PARAMETER;
    }
    if len as usize > icn_via::attrs::MAX_REGISTER_SIZE {
        return ret::VIP_ERROR_RESOURCE;
    }
    if let Err(why) = crate::mapped::check_rw(addr as usize, len as usize) {
        eprintln!("vipl: VipRegisterMem: {why}");
        return ret::VIP_INVALID_PARAMETER;
    }
    // SAFETY: non-null, and points to a VIP_MEM_ATTRIBUTES (VIPL contract).
    let a = unsafe { attrs.read_unaligned() };
    let p = match ptag_of(&n.0, a.Ptag) {
        Ok(p) => p,
        Err(r) => return r,
    };
    // SAFETY: VipRegisterMem's contract is `register_addr`'s: the consumer keeps the
    // memory valid until VipDeregisterMem (or closes the NIC), and C code holds no Rust
    // references to it.
    let h = match unsafe {
        n.0.via
            .register_addr(addr.cast(), len as usize, mem_attrs(p, &a))
    } {
        Ok(h) => h,
        Err(e) => return crate::codes::from_error(&e),
    };
    p.users.fetch_add(1, Ordering::AcqRel);
    n.0.regions.insert(
        h.raw(),
        Region {
            start: addr as usize,
            len: len as usize,
            ptag: a.Ptag as usize,
            rdma_write: a.EnableRdmaWrite != 0,
            rdma_read: a.EnableRdmaRead != 0,
        },
    );
    // SAFETY: non-null out-pointer.
    unsafe { put(out, h.raw()) };
    ret::VIP_SUCCESS
}

/// The region `handle` if `addr` is its start (`exact`) or inside it.
fn region_at(n: &NicCore, addr: usize, handle: VIP_MEM_HANDLE, exact: bool) -> Option<Region> {
    let r = n.regions.get(handle)?;
    let inside = if exact {
        addr == r.start
    } else {
        addr >= r.start && addr < r.start + r.len
    };
    inside.then_some(r)
}

/// Ends a registration: `addr` must be the address it was registered at. Once this
/// returns the library never touches the memory again. `VIP_INVALID_PARAMETER`, and the
/// region stays registered and every descriptor intact, while a descriptor posted on a VI of
/// this NIC and not yet handed back by `*Done` / `*Wait` lies in the region: the library
/// writes its status there when it completes (VIA 1.0 leaves this case to the provider;
/// freeing the memory under it would be a use after free).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipDeregisterMem(
    nic: VIP_PVOID,
    addr: *mut c_void,
    handle: VIP_MEM_HANDLE,
) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    let Some(r) = region_at(&n.0, addr as usize, handle, true) else {
        return ret::VIP_INVALID_PARAMETER;
    };
    if descriptor_pending_in(&n.0, r.start as u64..(r.start + r.len) as u64) {
        eprintln!(
            "vipl: VipDeregisterMem: a posted descriptor still lies in the region at {:#x}; \
             reap it (VipSendDone/VipRecvDone or a wait) first",
            r.start
        );
        return ret::VIP_INVALID_PARAMETER;
    }
    if let Err(e) =
        n.0.via
            .deregister_addr(icn_via::MemHandle::from_raw(handle))
    {
        return crate::codes::from_error(&e);
    }
    n.0.regions.remove(handle);
    // SAFETY: the tag handle was live when registered and cannot have been destroyed
    // while this region used it.
    if let Some(p) = unsafe { crate::handle::get::<PtagObj>(r.ptag as *mut c_void) } {
        p.users.fetch_sub(1, Ordering::AcqRel);
    }
    ret::VIP_SUCCESS
}

/// True if a VI of `nic` has a descriptor (id = its address) in `range` not yet handed back.
fn descriptor_pending_in(nic: &NicCore, range: std::ops::Range<u64>) -> bool {
    // Under the VI table's lock: `VipDestroyVi` takes a VI out of it before dropping it.
    let vis = lock(&nic.vis);
    vis.values().any(|&h| {
        // SAFETY: handles in the table are live VI handles (removed before destruction,
        // under this lock).
        unsafe { crate::handle::get::<ViObj>(h as *mut c_void) }
            .is_some_and(|v| v.via.has_descriptor_in(range.clone()))
    })
}

/// The attributes of the region `handle` containing `addr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipQueryMem(
    nic: VIP_PVOID,
    addr: *mut c_void,
    handle: VIP_MEM_HANDLE,
    out: *mut VIP_MEM_ATTRIBUTES,
) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    let Some(r) = region_at(&n.0, addr as usize, handle, false) else {
        return ret::VIP_INVALID_PARAMETER;
    };
    let v = VIP_MEM_ATTRIBUTES {
        Ptag: r.ptag as *mut c_void,
        EnableRdmaWrite: boolean(r.rdma_write),
        EnableRdmaRead: boolean(r.rdma_read),
    };
    // SAFETY: out-pointer, null or valid (VIPL contract).
    if unsafe { put(out, v) } {
        ret::VIP_SUCCESS
    } else {
        ret::VIP_INVALID_PARAMETER
    }
}

/// New protection tag and RDMA rights for the region `handle` containing `addr` (same
/// handle and memory). Change attributes of idle regions only: a descriptor still pending
/// on the region moves its bytes to or from a sink (icn-via's `set_addr_attributes`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipSetMemAttributes(
    nic: VIP_PVOID,
    addr: *mut c_void,
    handle: VIP_MEM_HANDLE,
    attrs: *const VIP_MEM_ATTRIBUTES,
) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    if attrs.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    let Some(r) = region_at(&n.0, addr as usize, handle, false) else {
        return ret::VIP_INVALID_PARAMETER;
    };
    // SAFETY: non-null, a VIP_MEM_ATTRIBUTES (VIPL contract).
    let a = unsafe { attrs.read_unaligned() };
    let p = match ptag_of(&n.0, a.Ptag) {
        Ok(p) => p,
        Err(e) => return e,
    };
    // SAFETY: the region is registered (looked up above) with this start and length, so
    // the consumer's VipRegisterMem contract still covers it.
    let res = unsafe {
        n.0.via.set_addr_attributes(
            icn_via::MemHandle::from_raw(handle),
            r.start as *mut u8,
            r.len,
            mem_attrs(p, &a),
        )
    };
    if let Err(e) = res {
        return crate::codes::from_error(&e);
    }
    p.users.fetch_add(1, Ordering::AcqRel);
    // SAFETY: as in VipDeregisterMem.
    if let Some(old) = unsafe { crate::handle::get::<PtagObj>(r.ptag as *mut c_void) } {
        old.users.fetch_sub(1, Ordering::AcqRel);
    }
    n.0.regions.insert(
        handle,
        Region {
            ptag: a.Ptag as usize,
            rdma_write: a.EnableRdmaWrite != 0,
            rdma_read: a.EnableRdmaRead != 0,
            ..r
        },
    );
    ret::VIP_SUCCESS
}
