//! `VipCreateCQ`, `VipDestroyCQ`, `VipResizeCQ`, `VipCQDone`, `VipCQWait`, `VipCQNotify`.
//!
//! As in VIA, a CQ entry names a work queue (VI handle, receive queue or not); the
//! descriptor itself is then taken with `VipSendDone` / `VipRecvDone` on that VI.

use std::ffi::c_ulong;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use icn_via::{ViaError, WorkQueue};

use super::{boolean, obj, put};
use crate::codes;
use crate::objects::*;
use crate::types::*;

/// `EntryCount` in 1..=`MaxCQEntries` (2^20), else `VIP_INVALID_PARAMETER`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipCreateCQ(
    nic: VIP_PVOID,
    entries: c_ulong,
    out: *mut VIP_PVOID,
) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    if out.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    let cq = match n.0.via.create_cq(entries as usize) {
        Ok(c) => c,
        Err(e) => return codes::from_error(&e),
    };
    let h = crate::handle::new(CqObj {
        nic: n.0.clone(),
        cq,
        members: 0.into(),
        notify: Default::default(),
    });
    // SAFETY: non-null out-pointer.
    unsafe { put(out, h) };
    ret::VIP_SUCCESS
}

/// `VIP_INVALID_STATE` while a work queue is still attached.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipDestroyCQ(cq: VIP_PVOID) -> VIP_RETURN {
    let c = obj!(CqObj, cq);
    if c.members.load(Ordering::Acquire) > 0 {
        return ret::VIP_INVALID_STATE;
    }
    lock(&c.notify).clear();
    // SAFETY: `c` is not used past this point.
    unsafe { super::destroy::<CqObj>(cq) };
    ret::VIP_SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipResizeCQ(cq: VIP_PVOID, entries: c_ulong) -> VIP_RETURN {
    let c = obj!(CqObj, cq);
    match c.cq.resize(entries as usize) {
        Ok(()) => ret::VIP_SUCCESS,
        Err(e) => codes::from_error(&e),
    }
}

/// The VI handle and queue of a CQ entry.
fn entry(nic: &NicCore, id: icn_via::ViId, q: WorkQueue) -> (usize, VIP_BOOLEAN) {
    let vi = lock(&nic.vis).get(&id.0).copied().unwrap_or(0);
    (vi, boolean(q == WorkQueue::Recv))
}

fn overflow(c: &CqObj, cq: VIP_PVOID, e: &ViaError) {
    if matches!(e, ViaError::ResourceExhausted(_)) {
        c.nic.errors.report(
            c.nic.handle.load(Ordering::Relaxed),
            AsyncError {
                vi: 0,
                cq: cq as usize,
                desc: std::ptr::null_mut(),
                resource: err::VIP_RESOURCE_CQ,
                code: err::VIP_ERROR_CATASTROPHIC,
            },
        );
    }
}

fn cq_done(
    cq: VIP_PVOID,
    wait: Option<Option<std::time::Duration>>,
    vi_out: *mut VIP_PVOID,
    recv_out: *mut VIP_BOOLEAN,
) -> VIP_RETURN {
    let c = obj!(CqObj, cq);
    if vi_out.is_null() || recv_out.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    let r = match wait {
        None => c.cq.done(),
        Some(t) => c.cq.wait(t).map(Some),
    };
    let (id, q) = match r {
        Ok(Some(e)) => e,
        Ok(None) => return ret::VIP_NOT_DONE,
        Err(e) => {
            overflow(c, cq, &e);
            return codes::from_error(&e);
        }
    };
    let (vi, recv) = entry(&c.nic, id, q);
    // SAFETY: both out-pointers are non-null (checked) and valid (VIPL contract).
    unsafe {
        put(vi_out, vi as VIP_PVOID);
        put(recv_out, recv);
    }
    ret::VIP_SUCCESS
}

/// The next entry, or `VIP_NOT_DONE`; `VIP_ERROR_RESOURCE` (and `VIP_ERROR_CATASTROPHIC`
/// to the error callback) once the CQ has overflowed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipCQDone(
    cq: VIP_PVOID,
    vi_out: *mut VIP_PVOID,
    recv_out: *mut VIP_BOOLEAN,
) -> VIP_RETURN {
    cq_done(cq, None, vi_out, recv_out)
}

/// Blocks up to `Timeout` ms (`VIP_INFINITE`: for ever) for an entry (`VIP_TIMEOUT`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipCQWait(
    cq: VIP_PVOID,
    timeout: c_ulong,
    vi_out: *mut VIP_PVOID,
    recv_out: *mut VIP_BOOLEAN,
) -> VIP_RETURN {
    cq_done(cq, Some(codes::timeout(timeout)), vi_out, recv_out)
}

/// Calls `Handler` once, from a library thread, with the next entry (taken off the CQ).
/// Destroying the CQ cancels a notification not yet delivered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipCQNotify(
    cq: VIP_PVOID,
    ctx: VIP_PVOID,
    handler: Option<CqHandler>,
) -> VIP_RETURN {
    let c = obj!(CqObj, cq);
    let Some(h) = handler else {
        return ret::VIP_INVALID_PARAMETER;
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (q, nic) = (c.cq.clone(), c.nic.clone());
    let ctx = ctx as usize;
    let thread = super::data::poll_thread(
        stop.clone(),
        move || q.done().ok().flatten(),
        move |(id, wq)| {
            let (vi, recv) = entry(&nic, id, wq);
            let nic_h = nic.handle.load(Ordering::Relaxed);
            // SAFETY: the consumer registered `h` for this call.
            unsafe { h(ctx as VIP_PVOID, nic_h as VIP_PVOID, vi as VIP_PVOID, recv) };
        },
    );
    lock(&c.notify).push(Notifier {
        stop,
        thread: Some(thread),
    });
    ret::VIP_SUCCESS
}
