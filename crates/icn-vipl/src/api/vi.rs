//! `VipCreateVi`, `VipDestroyVi`, `VipQueryVi`, `VipSetViAttributes`.

use std::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use super::mem::ptag_of;
use super::{boolean, obj, put};
use crate::codes;
use crate::objects::*;
use crate::types::*;

/// Checks `a` against NIC `nic` (the return code of the first rule broken):
///
/// | rule | code |
/// |---|---|
/// | exactly one `VIP_SERVICE_*` bit | `VIP_INVALID_RELIABILITY_LEVEL` |
/// | 1 ≤ `MaxTransferSize` ≤ the NIC's | `VIP_INVALID_MTU` |
/// | `Ptag` a tag of this NIC | `VIP_INVALID_PTAG` |
/// | `EnableRdmaRead` only on reliable levels | `VIP_INVALID_RDMAREAD` |
///
/// `QoS` is not defined by the specification and is ignored.
pub(crate) fn check_attrs(
    nic: &Arc<NicCore>,
    a: &VIP_VI_ATTRIBUTES,
) -> Result<(ViAttrs, icn_via::ViAttributes), VIP_RETURN> {
    let rel = codes::reliability(a.ReliabilityLevel).ok_or(ret::VIP_INVALID_RELIABILITY_LEVEL)?;
    if a.MaxTransferSize == 0
        || a.MaxTransferSize > icn_via::attrs::MAX_TRANSFER_SIZE as std::ffi::c_ulong
    {
        return Err(ret::VIP_INVALID_MTU);
    }
    let p = ptag_of(nic, a.Ptag)?;
    if a.EnableRdmaRead != 0 && !rel.is_reliable() {
        return Err(ret::VIP_INVALID_RDMAREAD);
    }
    let mut v = icn_via::ViAttributes::new(p.ptag, rel);
    v.max_transfer_size = a.MaxTransferSize as u32;
    v.enable_rdma_write = a.EnableRdmaWrite != 0;
    v.enable_rdma_read = a.EnableRdmaRead != 0;
    // Every queue holds what VipQueryNic's MaxDescriptorsPerQueue says (VIA has no per-VI
    // queue depth): icn-via's most, not its default.
    v.queue_depth = icn_via::attrs::MAX_QUEUE_DEPTH;
    let mine = ViAttrs {
        reliability: a.ReliabilityLevel,
        max_transfer_size: a.MaxTransferSize,
        ptag: a.Ptag as usize,
        rdma_write: a.EnableRdmaWrite != 0,
        rdma_read: a.EnableRdmaRead != 0,
    };
    Ok((mine, v))
}

/// The CQ `h` of NIC `nic`, `None` for a null handle, or `VIP_INVALID_PARAMETER`.
fn cq_of<'a>(nic: &Arc<NicCore>, h: VIP_PVOID) -> Result<Option<&'a CqObj>, VIP_RETURN> {
    if h.is_null() {
        return Ok(None);
    }
    // SAFETY: a handle this library returned (VIPL contract).
    match unsafe { crate::handle::get::<CqObj>(h) } {
        Some(c) if Arc::ptr_eq(&c.nic, nic) => Ok(Some(c)),
        _ => Err(ret::VIP_INVALID_PARAMETER),
    }
}

/// Creates a VI; its work queues report to `send_cq` / `recv_cq` if non-null (CQs of the
/// same NIC).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipCreateVi(
    nic: VIP_PVOID,
    attrs: *const VIP_VI_ATTRIBUTES,
    send_cq: VIP_PVOID,
    recv_cq: VIP_PVOID,
    out: *mut VIP_PVOID,
) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    if attrs.is_null() || out.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    // SAFETY: non-null, a VIP_VI_ATTRIBUTES (VIPL contract).
    let a = unsafe { attrs.read_unaligned() };
    let (mine, via_attrs) = match check_attrs(&n.0, &a) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let (scq, rcq) = match (cq_of(&n.0, send_cq), cq_of(&n.0, recv_cq)) {
        (Ok(s), Ok(r)) => (s, r),
        _ => return ret::VIP_INVALID_PARAMETER,
    };
    let vi = match n
        .0
        .via
        .create_vi(via_attrs, scq.map(|c| &c.cq), rcq.map(|c| &c.cq))
    {
        Ok(v) => v,
        Err(e) => return codes::from_error(&e),
    };
    for c in [scq, rcq].into_iter().flatten() {
        c.members.fetch_add(1, Ordering::AcqRel);
    }
    if let Ok(p) = ptag_of(&n.0, a.Ptag) {
        p.users.fetch_add(1, Ordering::AcqRel);
    }
    let id = vi.id().0;
    let h = crate::handle::new(ViObj {
        nic: n.0.clone(),
        via: Arc::new(vi),
        attrs: Mutex::new(mine),
        ptag: mine.ptag.into(),
        region_cache: RegionCache::default(),
        send_cq: send_cq as usize,
        recv_cq: recv_cq as usize,
        peer: Mutex::new(Peer::None),
        notify: Mutex::new(Vec::new()),
        trace: crate::trace::Recorder::from_env(),
    });
    lock(&n.0.vis).insert(id, h as usize);
    // SAFETY: non-null out-pointer.
    unsafe { put(out, h) };
    ret::VIP_SUCCESS
}

/// Destroys an idle VI (`VIP_INVALID_STATE` if it is connected, connecting, or in the
/// error state: disconnect first). Receives still posted on an idle VI are dropped with it;
/// notify threads are stopped first.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipDestroyVi(vi: VIP_PVOID) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    let q = v.via.query();
    let peer_pending = matches!(*lock(&v.peer), Peer::Pending(..));
    if q.state != icn_via::ViState::Idle || peer_pending {
        return ret::VIP_INVALID_STATE;
    }
    lock(&v.notify).clear();
    for c in [v.send_cq, v.recv_cq] {
        // SAFETY: CQs cannot be destroyed while a VI is attached, so these are live.
        if let Some(c) = unsafe { crate::handle::get::<CqObj>(c as *mut c_void) } {
            c.members.fetch_sub(1, Ordering::AcqRel);
        }
    }
    let ptag = lock(&v.attrs).ptag;
    // SAFETY: tags cannot be destroyed while a VI uses them.
    if let Some(p) = unsafe { crate::handle::get::<PtagObj>(ptag as *mut c_void) } {
        p.users.fetch_sub(1, Ordering::AcqRel);
    }
    if let Some(t) = &v.trace {
        t.finish();
    }
    lock(&v.nic.vis).remove(&v.via.id().0);
    // SAFETY: `v` is not used past this point.
    unsafe { super::destroy::<ViObj>(vi) };
    ret::VIP_SUCCESS
}

pub(crate) fn state_code(s: icn_via::ViState) -> c_int {
    match s {
        icn_via::ViState::Idle => VIP_STATE_IDLE,
        icn_via::ViState::Connected => VIP_STATE_CONNECTED,
        icn_via::ViState::PendingConnect => VIP_STATE_CONNECT_PENDING,
        icn_via::ViState::Error => VIP_STATE_ERROR,
    }
}

/// State, attributes, and whether each work queue is empty. Every out-pointer must be
/// non-null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipQueryVi(
    vi: VIP_PVOID,
    state: *mut c_int,
    attrs: *mut VIP_VI_ATTRIBUTES,
    send_empty: *mut VIP_BOOLEAN,
    recv_empty: *mut VIP_BOOLEAN,
) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    if state.is_null() || attrs.is_null() || send_empty.is_null() || recv_empty.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    let q = v.via.query();
    let a = lock(&v.attrs).to_c();
    // SAFETY: the four out-pointers are non-null and valid (VIPL contract).
    unsafe {
        put(state, state_code(q.state));
        put(attrs, a);
        put(send_empty, boolean(q.send_posted == 0));
        put(recv_empty, boolean(q.recv_posted == 0));
    }
    ret::VIP_SUCCESS
}

/// New attributes for an idle VI (`VIP_INVALID_STATE` otherwise); checked as in
/// `VipCreateVi`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipSetViAttributes(
    vi: VIP_PVOID,
    attrs: *const VIP_VI_ATTRIBUTES,
) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    if attrs.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    // SAFETY: non-null, a VIP_VI_ATTRIBUTES.
    let a = unsafe { attrs.read_unaligned() };
    let (mine, via_attrs) = match check_attrs(&v.nic, &a) {
        Ok(x) => x,
        Err(r) => return r,
    };
    if let Err(e) = v.via.set_attributes(via_attrs) {
        return codes::from_error(&e);
    }
    let mut cur = lock(&v.attrs);
    if cur.ptag != mine.ptag {
        // SAFETY: live tags (one in use by this VI, one just checked).
        unsafe {
            if let Some(p) = crate::handle::get::<PtagObj>(mine.ptag as *mut c_void) {
                p.users.fetch_add(1, Ordering::AcqRel);
            }
            if let Some(p) = crate::handle::get::<PtagObj>(cur.ptag as *mut c_void) {
                p.users.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
    *cur = mine;
    v.ptag.store(mine.ptag, Ordering::Relaxed);
    ret::VIP_SUCCESS
}
