//! `VipPostSend`, `VipPostRecv`, `VipSendDone`, `VipRecvDone`, `VipSendWait`,
//! `VipRecvWait`, `VipSendNotify`, `VipRecvNotify`: the data path.
//!
//! A posted descriptor is read once, at post: its control segment and `SegCount` segments
//! become an icn-via descriptor whose id is the descriptor's address. On completion the
//! provider writes `Status`, `Length` and (if any arrived) `ImmediateData` back into it and
//! hands the address back. The descriptor must stay valid and unmodified until then (the
//! specification's rule).

use std::ffi::c_ulong;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use icn_via::{Completion, CompletionStatus, MemHandle, Op, Segment, ViaError};

use super::obj;
use crate::codes::{self, Format};
use crate::objects::*;
use crate::types::*;

const CS_LEN: usize = std::mem::size_of::<VIP_CONTROL_SEGMENT>();
const SEG_LEN: usize = std::mem::size_of::<VIP_DATA_SEGMENT>();
/// Data segments, plus the address segment of an RDMA descriptor.
const MAX_SEGS: usize = codes::MAX_DATA_SEGMENTS + 1;

/// Reads the descriptor at `d` for posting on `v`, after checking it is aligned and lies,
/// with all its segments, in the region `mh` of the VI's protection tag.
///
/// # Safety
/// `d` is null or points into memory the consumer registered (checked here against the
/// region table before any byte is read).
#[inline(always)]
unsafe fn post(
    v: &ViObj,
    vi: VIP_PVOID,
    d: *mut VIP_DESCRIPTOR,
    mh: VIP_MEM_HANDLE,
    recv: bool,
) -> VIP_RETURN {
    let addr = d as usize;
    if d.is_null() || !addr.is_multiple_of(VIP_DESCRIPTOR_ALIGNMENT) {
        return ret::VIP_INVALID_PARAMETER;
    }
    let ptag = v.ptag.load(Ordering::Relaxed);
    let region = v.nic.regions.get_cached(&v.region_cache, mh);
    let Some(r) = region.filter(|r| r.ptag == ptag) else {
        return ret::VIP_INVALID_PARAMETER;
    };
    let end = r.start + r.len;
    if addr < r.start || addr + CS_LEN > end {
        return ret::VIP_INVALID_PARAMETER;
    }
    // SAFETY: the control segment lies in a registered region (checked just above), which
    // the consumer keeps valid while registered; aligned to 64.
    let cs = unsafe { (*d).CS };
    let n = cs.SegCount as usize;
    let status = d as usize + std::mem::offset_of!(VIP_CONTROL_SEGMENT, Status);
    // SAFETY (for the calls below): the control segment is registered memory, as above.
    let format_error = |_why: Format| unsafe { refuse(v, vi, d) };
    if n > MAX_SEGS {
        return format_error(Format::TooManySegments);
    }
    if addr + CS_LEN + n * SEG_LEN > end {
        return ret::VIP_INVALID_PARAMETER;
    }
    // SAFETY: the `n` segments after the control segment lie in the same registered region
    // (checked above), 16-byte records at 16-byte aligned offsets (the descriptor is 64-byte
    // aligned); read in place, before the library runs (it never writes them).
    let segs = unsafe {
        std::slice::from_raw_parts((d as *const u8).add(CS_LEN) as *const VIP_DATA_SEGMENT, n)
    };
    // SAFETY: registered memory, as above; the status is the provider's to write.
    unsafe { (status as *mut u32).write(0) };
    let res = match (&v.trace, codes::plain_segment(cs.Control, segs)) {
        // The common descriptor, built where icn-via takes it: moving a built descriptor
        // (~90 bytes) into the call cost ~35 instructions a post.
        (None, Some(s)) => {
            let seg = Segment::new(MemHandle::from_raw(s.Handle), s.Data, s.Length);
            let imm = codes::immediate_of(cs.Control, cs.ImmediateData, recv);
            if recv {
                v.via
                    .post_recv(codes::plain(Op::Recv, seg, imm, addr as u64))
            } else {
                v.via
                    .post_send(codes::plain(Op::Send, seg, imm, addr as u64))
            }
        }
        (trace, _) => match post_general(v, trace.as_deref(), &cs, segs, recv, addr as u64) {
            Ok(r) => r,
            Err(why) => return format_error(why),
        },
    };
    match res {
        Ok(()) => ret::VIP_SUCCESS,
        Err(ViaError::Descriptor(_)) => format_error(Format::Operation),
        Err(e) => codes::from_error(&e),
    }
}

/// Posts any descriptor (decoded in full), recording it if the run is traced.
#[inline(never)]
fn post_general(
    v: &ViObj,
    trace: Option<&crate::trace::Recorder>,
    cs: &VIP_CONTROL_SEGMENT,
    segs: &[VIP_DATA_SEGMENT],
    recv: bool,
    id: u64,
) -> Result<icn_via::Result<()>, Format> {
    let desc = codes::decode(cs.Control, cs.ImmediateData, segs, recv, id)?;
    if let Some(t) = trace {
        t.posted(&desc);
    }
    Ok(if recv {
        v.via.post_recv(desc)
    } else {
        v.via.post_send(desc)
    })
}

/// Refuses a malformed descriptor: its status becomes `DONE | FORMAT_ERROR` and the error
/// callback gets `VIP_ERROR_POST_DESC`. Out of line: the posting path stays short.
///
/// # Safety
/// `d`'s control segment lies in registered memory (checked by [`post`]).
#[cold]
#[inline(never)]
unsafe fn refuse(v: &ViObj, vi: VIP_PVOID, d: *mut VIP_DESCRIPTOR) -> VIP_RETURN {
    // SAFETY: the caller's contract.
    unsafe { (&raw mut (*d).CS.Status).write(VIP_STATUS_DONE | VIP_STATUS_FORMAT_ERROR) };
    v.nic.errors.report(
        v.nic.handle.load(Ordering::Relaxed),
        AsyncError {
            vi: vi as usize,
            cq: 0,
            desc: d,
            resource: err::VIP_RESOURCE_DESCRIPTOR,
            code: err::VIP_ERROR_POST_DESC,
        },
    );
    ret::VIP_DESCRIPTOR_ERROR
}

/// Posts a send, RDMA write or RDMA read descriptor (by its control bits) on a connected
/// VI. `VIP_INVALID_PARAMETER` if the descriptor is misaligned or not (with all its
/// segments) in the region `MemoryHandle` of the VI's tag; `VIP_DESCRIPTOR_ERROR` (status
/// `VIP_STATUS_FORMAT_ERROR`, error callback `VIP_ERROR_POST_DESC`) for a malformed one;
/// `VIP_INVALID_STATE` if the VI is not connected; `VIP_ERROR_RESOURCE` if the queue is
/// full.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipPostSend(
    vi: VIP_PVOID,
    d: *mut VIP_DESCRIPTOR,
    mh: VIP_MEM_HANDLE,
) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    // SAFETY: `post` checks `d` against the region table before reading it.
    unsafe { post(v, vi, d, mh, false) }
}

/// Posts a receive descriptor (allowed before the VI connects). Checks as `VipPostSend`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipPostRecv(
    vi: VIP_PVOID,
    d: *mut VIP_DESCRIPTOR,
    mh: VIP_MEM_HANDLE,
) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    // SAFETY: `post` checks `d` against the region table before reading it.
    unsafe { post(v, vi, d, mh, true) }
}

/// Writes `c`'s status into its descriptor, reports an error completion to the error
/// callback, and returns the descriptor's address.
#[inline(always)]
pub(crate) fn complete(
    nic: &NicCore,
    trace: Option<&crate::trace::Recorder>,
    vi: usize,
    c: &Completion,
) -> *mut VIP_DESCRIPTOR {
    let d = c.desc.id as *mut VIP_DESCRIPTOR;
    // SAFETY: the id is the address of a descriptor checked at post to lie in registered
    // memory, which the consumer keeps valid until the descriptor completes (VIPL rule).
    unsafe {
        (&raw mut (*d).CS.Status).write(codes::status_word(c));
        (&raw mut (*d).CS.Length).write(c.length);
        if let Some(i) = c.immediate {
            (&raw mut (*d).CS.ImmediateData).write(i);
        }
    }
    if c.status != CompletionStatus::Success || trace.is_some() {
        report(nic, trace, vi, c, d);
    }
    d
}

/// The rare part of [`complete`]: an error completion to the error callback, and the trace.
#[inline(never)]
fn report(
    nic: &NicCore,
    trace: Option<&crate::trace::Recorder>,
    vi: usize,
    c: &Completion,
    d: *mut VIP_DESCRIPTOR,
) {
    if let Some(code) = codes::async_error(c) {
        nic.errors.report(
            nic.handle.load(Ordering::Relaxed),
            AsyncError {
                vi,
                cq: 0,
                desc: d,
                resource: err::VIP_RESOURCE_DESCRIPTOR,
                code,
            },
        );
    }
    if let Some(t) = trace {
        t.completed(c);
    }
}

fn report_lost(v: &ViObj, vi: VIP_PVOID, e: &ViaError) {
    if matches!(e, ViaError::ConnectionLost(_)) {
        v.nic.errors.report(
            v.nic.handle.load(Ordering::Relaxed),
            AsyncError {
                vi: vi as usize,
                cq: 0,
                desc: std::ptr::null_mut(),
                resource: err::VIP_RESOURCE_VI,
                code: err::VIP_ERROR_CONN_LOST,
            },
        );
    }
}

/// The four `*Done` / `*Wait` calls; inlined into each, so each is specialised to its
/// queue and kind.
#[inline(always)]
fn done(
    vi: VIP_PVOID,
    out: *mut *mut VIP_DESCRIPTOR,
    recv: bool,
    wait: Option<Option<std::time::Duration>>,
) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    if out.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    let poll = || {
        if recv {
            v.via.recv_done()
        } else {
            v.via.send_done()
        }
    };
    // Each completion is handed over where it lies (moving one, ~110 bytes, cost ~15
    // instructions a call).
    let finish = |c: &Completion| {
        let d = complete(&v.nic, v.trace.as_deref(), vi as usize, c);
        // SAFETY: non-null out-pointer (VIPL contract).
        unsafe { super::put(out, d) };
        ret::VIP_SUCCESS
    };
    match wait {
        None => {
            if let Some(c) = &poll() {
                return finish(c);
            }
            // Nothing yet: make progress as a NIC would while the consumer polls, including
            // the acknowledgements this side owes (icn-via sends them on outgoing frames or
            // before it blocks, and a polling consumer does neither: two programs polling
            // `*Done` for their sends would wait on each other's acks).
            v.via.progress();
            match &poll() {
                Some(c) => finish(c),
                None => ret::VIP_NOT_DONE,
            }
        }
        Some(t) => {
            let r = if recv {
                v.via.recv_wait(t)
            } else {
                v.via.send_wait(t)
            };
            match &r {
                Ok(c) => finish(c),
                Err(e) => {
                    report_lost(v, vi, e);
                    codes::from_error(e)
                }
            }
        }
    }
}

/// The oldest completed send-queue descriptor, or `VIP_NOT_DONE` (never blocks).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipSendDone(vi: VIP_PVOID, out: *mut *mut VIP_DESCRIPTOR) -> VIP_RETURN {
    done(vi, out, false, None)
}

/// The oldest completed receive descriptor, or `VIP_NOT_DONE` (never blocks).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipRecvDone(vi: VIP_PVOID, out: *mut *mut VIP_DESCRIPTOR) -> VIP_RETURN {
    done(vi, out, true, None)
}

/// Blocks up to `Timeout` ms (`VIP_INFINITE`: for ever) for a send-queue completion:
/// `VIP_TIMEOUT` when it passes; `VIP_INVALID_STATE` (and `VIP_ERROR_CONN_LOST` to the
/// error callback) if the connection is lost with nothing left to complete. Polls for the
/// VI's spin budget, then yields, then sleeps (icn-via's waiting policy).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipSendWait(
    vi: VIP_PVOID,
    timeout: c_ulong,
    out: *mut *mut VIP_DESCRIPTOR,
) -> VIP_RETURN {
    done(vi, out, false, Some(codes::timeout(timeout)))
}

/// As `VipSendWait`, for the receive queue.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipRecvWait(
    vi: VIP_PVOID,
    timeout: c_ulong,
    out: *mut *mut VIP_DESCRIPTOR,
) -> VIP_RETURN {
    done(vi, out, true, Some(codes::timeout(timeout)))
}

/// Polls `poll` from a helper thread until it yields something or `stop` is set: a few
/// hundred yields, then sleeps of 200 µs (never holds a VI's lock while idle, so the
/// consumer's own calls go on).
pub(crate) fn poll_thread<T: Send + 'static>(
    stop: Arc<AtomicBool>,
    mut poll: impl FnMut() -> Option<T> + Send + 'static,
    then: impl FnOnce(T) + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut round = 0u32;
        while !stop.load(Ordering::Relaxed) {
            if let Some(x) = poll() {
                then(x);
                return;
            }
            if round < 200 {
                std::thread::yield_now();
                round += 1;
            } else {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        }
    })
}

fn notify(vi: VIP_PVOID, ctx: VIP_PVOID, handler: Option<DescHandler>, recv: bool) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    let Some(h) = handler else {
        return ret::VIP_INVALID_PARAMETER;
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (via, nic, trace) = (v.via.clone(), v.nic.clone(), v.trace.clone());
    let (vi_h, ctx) = (vi as usize, ctx as usize);
    let thread = poll_thread(
        stop.clone(),
        move || {
            if recv {
                via.recv_done()
            } else {
                via.send_done()
            }
        },
        move |c| {
            let d = complete(&nic, trace.as_deref(), vi_h, &c);
            let nic_h = nic.handle.load(Ordering::Relaxed);
            // SAFETY: the consumer registered `h` for this call: its context, the NIC and
            // VI handles, and the completed descriptor.
            unsafe { h(ctx as VIP_PVOID, nic_h as VIP_PVOID, vi_h as VIP_PVOID, d) };
        },
    );
    lock(&v.notify).push(Notifier {
        stop,
        thread: Some(thread),
    });
    ret::VIP_SUCCESS
}

/// Calls `Handler` once, from a library thread, when the next send-queue descriptor
/// completes (the descriptor is taken off the queue and passed to it). Destroying the VI
/// cancels a notification not yet delivered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipSendNotify(
    vi: VIP_PVOID,
    ctx: VIP_PVOID,
    handler: Option<DescHandler>,
) -> VIP_RETURN {
    notify(vi, ctx, handler, false)
}

/// As `VipSendNotify`, for the receive queue.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipRecvNotify(
    vi: VIP_PVOID,
    ctx: VIP_PVOID,
    handler: Option<DescHandler>,
) -> VIP_RETURN {
    notify(vi, ctx, handler, true)
}
