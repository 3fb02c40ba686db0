//! The C side: libfabric's provider ABI. Every object libfabric hands back to us is a
//! `#[repr(C)]` struct whose first field is the libfabric `fid_*` it points at, so the
//! `fid` pointer of a call is the object's address. An object is recognised by its class
//! *and* its ops table (a `fid` of another provider or class is refused with `-FI_EINVAL`).
//! Objects are `Box`ed at open and freed by their `close`.
//!
//! All `unsafe` of the crate is here and in `info`'s C allocation: dereferencing what a C
//! caller passes. The contract of each entry point is libfabric's (man pages `fi_*(3)`):
//! pointers are valid for the sizes the call names. Each block says which part it relies on.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::net::SocketAddrV4;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use icn_via::{Descriptor, MemAttributes, MemHandle, RemoteAddr, Segment, Segments};

use crate::addr::{self, Link, SOCKADDR_IN_LEN};
use crate::cm::MAX_CM_DATA;
use crate::cq::Cq;
use crate::ep::{CqEntry, Ep, Listener, OpInfo, Pending, QUEUE_DEPTH};
use crate::eq::{Eq, Event};
use crate::error::*;
use crate::fabric::{Fabric, NicCtx};
use crate::info::{self, DomainHints, Hints, Offer};
use crate::sys::{self, fid};

// ---------------------------------------------------------------------------------------
// Objects

#[repr(C)]
struct FabricObj {
    fid: sys::fid_fabric,
    fabric: Arc<Fabric>,
}

#[repr(C)]
struct DomainObj {
    fid: sys::fid_domain,
    fabric: Arc<Fabric>,
}

#[repr(C)]
struct EqObj {
    fid: sys::fid_eq,
    eq: Arc<Eq>,
    /// The last error event's data: `fi_eq_readerr` points at it until the next read.
    err_data: Mutex<Vec<u8>>,
}

#[repr(C)]
struct CqObj {
    fid: sys::fid_cq,
    cq: Arc<Cq>,
    format: sys::fi_cq_format,
    /// The last error's message (`fi_cq_strerror`).
    err_msg: Mutex<CString>,
}

/// A registration: its NIC and handle; dropping it deregisters.
struct Mr {
    nic: Arc<NicCtx>,
    handle: MemHandle,
}

impl Drop for Mr {
    fn drop(&mut self) {
        let _ = self.nic.nic.deregister_addr(self.handle);
    }
}

#[repr(C)]
struct MrObj {
    fid: sys::fid_mr,
    mr: Mr,
}

#[repr(C)]
struct EpObj {
    fid: sys::fid_ep,
    ep: Arc<Ep>,
    eq: Mutex<Option<Arc<Eq>>>,
}

#[repr(C)]
struct PepObj {
    fid: sys::fid_pep,
    fabric: Arc<Fabric>,
    src: Mutex<Option<SocketAddrV4>>,
    eq: Mutex<Option<Arc<Eq>>>,
    nic: Mutex<Option<Arc<NicCtx>>>,
    listener: Mutex<Option<Listener>>,
}

/// The `info->handle` of an `FI_CONNREQ`: the accepted VI until `fi_endpoint` or
/// `fi_reject` takes it. Kept for the process's life (a few dozen bytes per connection
/// request), because copies of the `fi_info` may still point at it.
#[repr(C)]
struct ConnReqObj {
    fid: sys::fid,
    pending: Arc<Mutex<Option<Pending>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The object of class `class` and ops table `ops` at `p`, if `p` is one.
///
/// # Safety
/// `p` is null or points at a readable `struct fid`; if its class and ops are ours, it is
/// the first field of a live `T` made by this module (only this module uses those ops).
unsafe fn obj<'a, T>(p: *const fid, class: u32, ops: &'static sys::fi_ops) -> Option<&'a T> {
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` points at a readable fid (contract above).
    let f = unsafe { &*p };
    if f.fclass != class as usize || !std::ptr::eq(f.ops, ops) {
        return None;
    }
    // SAFETY: class and ops are ours, so `p` is the address of a live `T` (first field).
    Some(unsafe { &*(p as *const T) })
}

fn new_fid(class: u32, context: *mut c_void, ops: &'static sys::fi_ops) -> fid {
    fid {
        fclass: class as usize,
        context,
        ops: ops as *const _ as *mut _,
    }
}

/// Frees the object at `p` made by `Box::into_raw`.
///
/// # Safety
/// `p` came from `Box::<T>::into_raw` in this module and is not used after.
unsafe fn free<T>(p: *mut fid) {
    // SAFETY: the contract above.
    drop(unsafe { Box::from_raw(p as *mut T) });
}

fn ret(r: Result<()>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => {
            warn(&e.msg);
            e.ret()
        }
    }
}

fn sret(r: Result<()>) -> isize {
    ret(r) as isize
}

/// A C string argument (null: `None`).
///
/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn cstr(p: *const c_char) -> Option<String> {
    // SAFETY: the contract above.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

// ---------------------------------------------------------------------------------------
// Provider: getinfo, fabric, cleanup

unsafe extern "C" fn prov_getinfo(
    _version: u32,
    node: *const c_char,
    service: *const c_char,
    flags: u64,
    hints: *const sys::fi_info,
    info: *mut *mut sys::fi_info,
) -> c_int {
    if info.is_null() {
        return -FI_EINVAL;
    }
    // SAFETY: libfabric passes NUL-terminated node/service or null, and hints null or a
    // valid fi_info whose attribute pointers are null or valid (fi_getinfo(3)).
    let (node, service, hints) = unsafe { (cstr(node), cstr(service), read_hints(hints)) };
    let resolved = match addr::resolve(node.as_deref(), service.as_deref()) {
        Ok(a) => a,
        Err(e) => {
            warn(&format!("fi_getinfo: {e}"));
            return -FI_ENODATA;
        }
    };
    let given = node.is_some() || service.is_some();
    let source = flags & sys::FI_SOURCE != 0;
    let mut src = hints
        .as_ref()
        .and_then(|h| h.src.as_deref().and_then(addr::decode));
    let mut dest = hints
        .as_ref()
        .and_then(|h| h.dest.as_deref().and_then(addr::decode));
    if given && source {
        src = Some(resolved);
    } else if given {
        dest = Some(resolved);
    }
    // Always a source address (loopback, any port, when none was named): ofi_rxm reads
    // the source address's family without checking it is there (fabtests' fi_rdm server
    // crashed in fi_getinfo before).
    let src = src.or(Some(std::net::SocketAddrV4::new(
        std::net::Ipv4Addr::LOCALHOST,
        0,
    )));
    let env = std::env::var("FI_ICNVIA_LINK").ok();
    let offers = info::offers(hints.as_ref(), &info::links(env.as_deref()), src, dest);
    if offers.is_empty() {
        return -FI_ENODATA;
    }
    let mut head: *mut sys::fi_info = std::ptr::null_mut();
    for o in offers.iter().rev() {
        let i = alloc_info(o, None, std::ptr::null_mut());
        if i.is_null() {
            // SAFETY: `head` is a list this call built with `alloc_info`.
            unsafe { free_info(head) };
            return -FI_ENOMEM;
        }
        // SAFETY: `i` is a fresh, valid fi_info.
        unsafe { (*i).next = head };
        head = i;
    }
    // SAFETY: `info` is non-null and writable (fi_getinfo(3)).
    unsafe { *info = head };
    0
}

/// Reads the hints the provider looks at.
///
/// # Safety
/// `h` is null or a valid `fi_info` whose attribute and address pointers are null or
/// valid for their stated lengths.
unsafe fn read_hints(h: *const sys::fi_info) -> Option<Hints> {
    // SAFETY: the contract above, for every dereference below.
    unsafe {
        let h = h.as_ref()?;
        let bytes = |p: *mut c_void, n: usize| {
            (!p.is_null() && n > 0).then(|| std::slice::from_raw_parts(p as *const u8, n).to_vec())
        };
        let mut out = Hints {
            caps: h.caps,
            addr_format: h.addr_format,
            src: bytes(h.src_addr, h.src_addrlen),
            dest: bytes(h.dest_addr, h.dest_addrlen),
            ..Hints::default()
        };
        if let Some(e) = h.ep_attr.as_ref() {
            out.ep_type = e.type_;
            out.max_msg_size = e.max_msg_size;
            out.tx_ctx_cnt = e.tx_ctx_cnt;
            out.rx_ctx_cnt = e.rx_ctx_cnt;
        }
        if let Some(f) = h.fabric_attr.as_ref() {
            out.fabric_name = cstr(f.name);
        }
        if let Some(d) = h.domain_attr.as_ref() {
            out.domain = Some(DomainHints {
                name: cstr(d.name),
                mr_mode: d.mr_mode,
                data_progress: d.data_progress,
            });
        }
        if let Some(t) = h.tx_attr.as_ref() {
            out.tx_size = t.size;
            out.tx_iov_limit = t.iov_limit;
            out.tx_inject_size = t.inject_size;
            out.tx_msg_order = t.msg_order;
        }
        if let Some(r) = h.rx_attr.as_ref() {
            out.rx_size = r.size;
            out.rx_iov_limit = r.iov_limit;
            out.rx_msg_order = r.msg_order;
        }
        Some(out)
    }
}

fn calloc<T>() -> *mut T {
    // SAFETY: calloc of one T; all-zero is a valid value of every libfabric attr struct.
    unsafe { libc::calloc(1, std::mem::size_of::<T>()) as *mut T }
}

fn strdup(s: &str) -> *mut c_char {
    let c = CString::new(s).unwrap_or_default();
    // SAFETY: `c` is NUL-terminated; strdup returns malloc'ed memory (or null).
    unsafe { libc::strdup(c.as_ptr()) }
}

fn dup_addr(a: SocketAddrV4) -> *mut c_void {
    let b = addr::encode(a);
    // SAFETY: malloc of SOCKADDR_IN_LEN bytes, filled below before use.
    let p = unsafe { libc::malloc(SOCKADDR_IN_LEN) } as *mut u8;
    if !p.is_null() {
        // SAFETY: `p` has room for SOCKADDR_IN_LEN bytes.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, SOCKADDR_IN_LEN) };
    }
    p as *mut c_void
}

/// A `malloc`ed `fi_info` for `o` (null if out of memory), what `fi_freeinfo` frees.
fn alloc_info(o: &Offer, handle: Option<*mut fid>, _ctx: *mut c_void) -> *mut sys::fi_info {
    let i = calloc::<sys::fi_info>();
    let tx = calloc::<sys::fi_tx_attr>();
    let rx = calloc::<sys::fi_rx_attr>();
    let ep = calloc::<sys::fi_ep_attr>();
    let dom = calloc::<sys::fi_domain_attr>();
    let fab = calloc::<sys::fi_fabric_attr>();
    if [
        i as usize,
        tx as usize,
        rx as usize,
        ep as usize,
        dom as usize,
        fab as usize,
    ]
    .contains(&0)
    {
        // SAFETY: each is null or from calloc.
        unsafe {
            for p in [
                i as *mut c_void,
                tx as _,
                rx as _,
                ep as _,
                dom as _,
                fab as _,
            ] {
                libc::free(p);
            }
        }
        return std::ptr::null_mut();
    }
    let name = o.link.name();
    // SAFETY: all six pointers are fresh zeroed allocations of their types.
    unsafe {
        *tx = sys::fi_tx_attr {
            caps: o.caps,
            mode: 0,
            op_flags: 0,
            msg_order: info::MSG_ORDER,
            comp_order: sys::FI_ORDER_NONE as u64,
            inject_size: 0,
            size: o.tx_size,
            iov_limit: info::IOV_LIMIT,
            rma_iov_limit: 1,
            tclass: 0,
        };
        *rx = sys::fi_rx_attr {
            caps: o.caps,
            mode: 0,
            op_flags: 0,
            msg_order: info::MSG_ORDER,
            comp_order: sys::FI_ORDER_NONE as u64,
            total_buffered_recv: 0,
            size: o.rx_size,
            iov_limit: info::IOV_LIMIT,
        };
        (*ep).type_ = sys::FI_EP_MSG;
        (*ep).protocol = sys::FI_PROTO_UNSPEC;
        (*ep).protocol_version = 1;
        (*ep).max_msg_size = info::MAX_MSG_SIZE;
        (*ep).tx_ctx_cnt = 1;
        (*ep).rx_ctx_cnt = 1;
        (*dom).name = strdup(name);
        (*dom).threading = sys::FI_THREAD_SAFE;
        (*dom).control_progress = sys::FI_PROGRESS_AUTO;
        (*dom).data_progress = sys::FI_PROGRESS_MANUAL;
        (*dom).resource_mgmt = sys::FI_RM_DISABLED;
        (*dom).av_type = sys::FI_AV_UNSPEC;
        (*dom).mr_mode = info::MR_MODE as c_int;
        (*dom).mr_key_size = 4;
        (*dom).cq_data_size = 0;
        (*dom).cq_cnt = 1024;
        (*dom).ep_cnt = 1024;
        (*dom).tx_ctx_cnt = 1024;
        (*dom).rx_ctx_cnt = 1024;
        (*dom).max_ep_tx_ctx = 1;
        (*dom).max_ep_rx_ctx = 1;
        (*dom).mr_iov_limit = 1;
        (*dom).mr_cnt = 1 << 16;
        (*dom).caps = o.caps & (sys::FI_LOCAL_COMM | sys::FI_REMOTE_COMM);
        (*fab).name = strdup(name);
        // prov_name stays null: libfabric writes it (and prepends it for layered ones).
        (*fab).prov_version = info::PROV_VERSION;
        (*fab).api_version = info::FI_API_VERSION;
        (*i).caps = o.caps;
        (*i).mode = 0;
        (*i).addr_format = sys::FI_SOCKADDR_IN;
        if let Some(a) = o.src {
            (*i).src_addr = dup_addr(a);
            (*i).src_addrlen = SOCKADDR_IN_LEN;
        }
        if let Some(a) = o.dest {
            (*i).dest_addr = dup_addr(a);
            (*i).dest_addrlen = SOCKADDR_IN_LEN;
        }
        (*i).handle = handle.unwrap_or(std::ptr::null_mut());
        (*i).tx_attr = tx;
        (*i).rx_attr = rx;
        (*i).ep_attr = ep;
        (*i).domain_attr = dom;
        (*i).fabric_attr = fab;
    }
    i
}

/// Frees a list made by `alloc_info` (as `fi_freeinfo` would).
///
/// # Safety
/// `i` is null or a list of `alloc_info` results not used after.
pub unsafe fn free_info(mut i: *mut sys::fi_info) {
    // SAFETY: the contract above: every pointer is null or malloc'ed by alloc_info.
    unsafe {
        while !i.is_null() {
            let next = (*i).next;
            if let Some(d) = (*i).domain_attr.as_ref() {
                libc::free(d.name as _);
            }
            if let Some(f) = (*i).fabric_attr.as_ref() {
                libc::free(f.name as _);
            }
            for p in [
                (*i).src_addr,
                (*i).dest_addr,
                (*i).tx_attr as _,
                (*i).rx_attr as _,
                (*i).ep_attr as _,
                (*i).domain_attr as _,
                (*i).fabric_attr as _,
                i as _,
            ] {
                libc::free(p);
            }
            i = next;
        }
    }
}

unsafe extern "C" fn prov_fabric(
    attr: *mut sys::fi_fabric_attr,
    fabric: *mut *mut sys::fid_fabric,
    context: *mut c_void,
) -> c_int {
    // SAFETY: libfabric passes a valid attr (fi_fabric(3)) whose name is null or a string.
    let name = unsafe { attr.as_ref().and_then(|a| cstr(a.name)) };
    let Some(link) = name.as_deref().and_then(Link::from_name) else {
        warn(&format!("fi_fabric: no fabric named {name:?} (shm or tcp)"));
        return -FI_ENODATA;
    };
    if fabric.is_null() {
        return -FI_EINVAL;
    }
    let obj = Box::new(FabricObj {
        fid: sys::fid_fabric {
            fid: new_fid(sys::FI_CLASS_FABRIC, context, &FABRIC_FI_OPS),
            ops: &FABRIC_OPS as *const _ as *mut _,
            // SAFETY: attr is valid (checked above).
            api_version: unsafe { (*attr).api_version },
        },
        fabric: Arc::new(Fabric::new(link)),
    });
    // SAFETY: `fabric` is non-null and writable.
    unsafe { *fabric = Box::into_raw(obj) as *mut sys::fid_fabric };
    0
}

unsafe extern "C" fn prov_cleanup() {}

// ---------------------------------------------------------------------------------------
// Stubs: every slot of an ops table is filled (libfabric's inline wrappers call through
// without checking); what the provider does not do answers -FI_ENOSYS.

unsafe extern "C" fn no_bind(_: *mut fid, _: *mut fid, _: u64) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn no_control(_: *mut fid, _: c_int, _: *mut c_void) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn no_ops_open(
    _: *mut fid,
    _: *const c_char,
    _: u64,
    _: *mut *mut c_void,
    _: *mut c_void,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn no_tostr(_: *const fid, _: *mut c_char, _: usize) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn no_ops_set(
    _: *mut fid,
    _: *const c_char,
    _: u64,
    _: *mut c_void,
    _: *mut c_void,
) -> c_int {
    -FI_ENOSYS
}

macro_rules! fi_ops {
    ($name:ident, $close:ident, $bind:expr, $control:expr) => {
        static $name: sys::fi_ops = sys::fi_ops {
            size: std::mem::size_of::<sys::fi_ops>(),
            close: Some($close),
            bind: Some($bind),
            control: Some($control),
            ops_open: Some(no_ops_open),
            tostr: Some(no_tostr),
            ops_set: Some(no_ops_set),
        };
    };
}

fi_ops!(FABRIC_FI_OPS, fabric_close, no_bind, no_control);
fi_ops!(DOMAIN_FI_OPS, domain_close, no_bind, no_control);
fi_ops!(EQ_FI_OPS, eq_close, no_bind, no_control);
fi_ops!(CQ_FI_OPS, cq_close, no_bind, no_control);
fi_ops!(MR_FI_OPS, mr_close, no_bind, no_control);
fi_ops!(EP_FI_OPS, ep_close, ep_bind, ep_control);
fi_ops!(PEP_FI_OPS, pep_close, pep_bind, no_control);
fi_ops!(CONNREQ_FI_OPS, connreq_close, no_bind, no_control);

unsafe extern "C" fn fabric_close(f: *mut fid) -> c_int {
    // SAFETY: libfabric calls close through our ops, so `f` is a FabricObj; freed once.
    unsafe { free::<FabricObj>(f) };
    0
}
unsafe extern "C" fn domain_close(f: *mut fid) -> c_int {
    // SAFETY: as fabric_close, for a DomainObj.
    unsafe { free::<DomainObj>(f) };
    0
}
unsafe extern "C" fn eq_close(f: *mut fid) -> c_int {
    // SAFETY: as fabric_close, for an EqObj.
    unsafe { free::<EqObj>(f) };
    0
}
unsafe extern "C" fn cq_close(f: *mut fid) -> c_int {
    // SAFETY: as fabric_close, for a CqObj.
    unsafe { free::<CqObj>(f) };
    0
}
unsafe extern "C" fn mr_close(f: *mut fid) -> c_int {
    // SAFETY: as fabric_close, for an MrObj (dropping it deregisters).
    unsafe { free::<MrObj>(f) };
    0
}
unsafe extern "C" fn connreq_close(_: *mut fid) -> c_int {
    0
}
unsafe extern "C" fn ep_close(f: *mut fid) -> c_int {
    // SAFETY: `f` is an EpObj (our ops); it is read, then freed once.
    unsafe {
        if let Some(o) = (f as *const EpObj).as_ref() {
            let old = o.ep.fid.swap(0, std::sync::atomic::Ordering::AcqRel);
            let _ = o.ep.shutdown();
            if let Some(eq) = lock(&o.eq).as_ref() {
                eq.forget(old);
            }
        }
        free::<EpObj>(f);
    }
    0
}
unsafe extern "C" fn pep_close(f: *mut fid) -> c_int {
    // SAFETY: `f` is a PepObj (our ops); the listener stops before it is freed.
    unsafe {
        if let Some(o) = (f as *const PepObj).as_ref() {
            drop(lock(&o.listener).take());
            if let Some(eq) = lock(&o.eq).as_ref() {
                eq.forget(f as usize);
            }
        }
        free::<PepObj>(f);
    }
    0
}

// ---------------------------------------------------------------------------------------
// Fabric

static FABRIC_OPS: sys::fi_ops_fabric = sys::fi_ops_fabric {
    size: std::mem::size_of::<sys::fi_ops_fabric>(),
    domain: Some(fabric_domain),
    passive_ep: Some(fabric_passive_ep),
    eq_open: Some(fabric_eq_open),
    wait_open: Some(fabric_wait_open),
    trywait: Some(fabric_trywait),
    domain2: Some(fabric_domain2),
};

unsafe extern "C" fn fabric_wait_open(
    _: *mut sys::fid_fabric,
    _: *mut sys::fi_wait_attr,
    _: *mut *mut sys::fid_wait,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn fabric_trywait(_: *mut sys::fid_fabric, _: *mut *mut fid, _: c_int) -> c_int {
    -FI_ENOSYS
}

unsafe extern "C" fn fabric_domain(
    fabric: *mut sys::fid_fabric,
    info: *mut sys::fi_info,
    dom: *mut *mut sys::fid_domain,
    context: *mut c_void,
) -> c_int {
    // SAFETY: `fabric` came through our ops; `info` is null or valid (fi_domain(3)).
    let (f, name) = unsafe {
        (
            obj::<FabricObj>(fabric as *const fid, sys::FI_CLASS_FABRIC, &FABRIC_FI_OPS),
            info.as_ref()
                .and_then(|i| i.domain_attr.as_ref())
                .and_then(|d| cstr(d.name)),
        )
    };
    let Some(f) = f else { return -FI_EINVAL };
    if name.is_some_and(|n| n != f.fabric.link.name()) || dom.is_null() {
        return -FI_EINVAL;
    }
    let obj = Box::new(DomainObj {
        fid: sys::fid_domain {
            fid: new_fid(sys::FI_CLASS_DOMAIN, context, &DOMAIN_FI_OPS),
            ops: &DOMAIN_OPS as *const _ as *mut _,
            mr: &MR_OPS as *const _ as *mut _,
        },
        fabric: f.fabric.clone(),
    });
    // SAFETY: `dom` is non-null and writable.
    unsafe { *dom = Box::into_raw(obj) as *mut sys::fid_domain };
    0
}

unsafe extern "C" fn fabric_domain2(
    fabric: *mut sys::fid_fabric,
    info: *mut sys::fi_info,
    dom: *mut *mut sys::fid_domain,
    flags: u64,
    context: *mut c_void,
) -> c_int {
    if flags != 0 {
        return -FI_EBADFLAGS;
    }
    // SAFETY: same arguments as fi_domain.
    unsafe { fabric_domain(fabric, info, dom, context) }
}

unsafe extern "C" fn fabric_eq_open(
    fabric: *mut sys::fid_fabric,
    attr: *mut sys::fi_eq_attr,
    eq: *mut *mut sys::fid_eq,
    context: *mut c_void,
) -> c_int {
    // SAFETY: our fabric; attr null or valid (fi_eq(3)).
    let (f, wait) = unsafe {
        (
            obj::<FabricObj>(fabric as *const fid, sys::FI_CLASS_FABRIC, &FABRIC_FI_OPS),
            attr.as_ref().map_or(sys::FI_WAIT_UNSPEC, |a| a.wait_obj),
        )
    };
    if f.is_none() || eq.is_null() {
        return -FI_EINVAL;
    }
    if ![
        sys::FI_WAIT_NONE,
        sys::FI_WAIT_UNSPEC,
        sys::FI_WAIT_MUTEX_COND,
    ]
    .contains(&wait)
    {
        warn("fi_eq_open: only FI_WAIT_NONE, FI_WAIT_UNSPEC and FI_WAIT_MUTEX_COND");
        return -FI_ENOSYS;
    }
    let obj = Box::new(EqObj {
        fid: sys::fid_eq {
            fid: new_fid(sys::FI_CLASS_EQ, context, &EQ_FI_OPS),
            ops: &EQ_OPS as *const _ as *mut _,
        },
        eq: Arc::new(Eq::default()),
        err_data: Mutex::new(Vec::new()),
    });
    // SAFETY: `eq` is non-null and writable.
    unsafe { *eq = Box::into_raw(obj) as *mut sys::fid_eq };
    0
}

unsafe extern "C" fn fabric_passive_ep(
    fabric: *mut sys::fid_fabric,
    info: *mut sys::fi_info,
    pep: *mut *mut sys::fid_pep,
    context: *mut c_void,
) -> c_int {
    // SAFETY: our fabric; info valid with src_addr null or of src_addrlen bytes.
    let (f, src) = unsafe {
        (
            obj::<FabricObj>(fabric as *const fid, sys::FI_CLASS_FABRIC, &FABRIC_FI_OPS),
            info.as_ref().and_then(|i| {
                (!i.src_addr.is_null())
                    .then(|| {
                        addr::decode(std::slice::from_raw_parts(
                            i.src_addr as *const u8,
                            i.src_addrlen,
                        ))
                    })
                    .flatten()
            }),
        )
    };
    let Some(f) = f else { return -FI_EINVAL };
    if pep.is_null() {
        return -FI_EINVAL;
    }
    let obj = Box::new(PepObj {
        fid: sys::fid_pep {
            fid: new_fid(sys::FI_CLASS_PEP, context, &PEP_FI_OPS),
            ops: &PEP_EP_OPS as *const _ as *mut _,
            cm: &PEP_CM_OPS as *const _ as *mut _,
        },
        fabric: f.fabric.clone(),
        src: Mutex::new(src),
        eq: Mutex::new(None),
        nic: Mutex::new(None),
        listener: Mutex::new(None),
    });
    // SAFETY: `pep` is non-null and writable.
    unsafe { *pep = Box::into_raw(obj) as *mut sys::fid_pep };
    0
}

// ---------------------------------------------------------------------------------------
// Domain: CQs, endpoints, memory registration

static DOMAIN_OPS: sys::fi_ops_domain = sys::fi_ops_domain {
    size: std::mem::size_of::<sys::fi_ops_domain>(),
    av_open: Some(dom_av_open),
    cq_open: Some(dom_cq_open),
    endpoint: Some(dom_endpoint),
    scalable_ep: Some(dom_scalable_ep),
    cntr_open: Some(dom_cntr_open),
    poll_open: Some(dom_poll_open),
    stx_ctx: Some(dom_stx_ctx),
    srx_ctx: Some(dom_srx_ctx),
    query_atomic: Some(dom_query_atomic),
    query_collective: Some(dom_query_collective),
    endpoint2: Some(dom_endpoint2),
};

unsafe extern "C" fn dom_av_open(
    _: *mut sys::fid_domain,
    _: *mut sys::fi_av_attr,
    _: *mut *mut sys::fid_av,
    _: *mut c_void,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn dom_scalable_ep(
    _: *mut sys::fid_domain,
    _: *mut sys::fi_info,
    _: *mut *mut sys::fid_ep,
    _: *mut c_void,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn dom_cntr_open(
    _: *mut sys::fid_domain,
    _: *mut sys::fi_cntr_attr,
    _: *mut *mut sys::fid_cntr,
    _: *mut c_void,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn dom_poll_open(
    _: *mut sys::fid_domain,
    _: *mut sys::fi_poll_attr,
    _: *mut *mut sys::fid_poll,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn dom_stx_ctx(
    _: *mut sys::fid_domain,
    _: *mut sys::fi_tx_attr,
    _: *mut *mut sys::fid_stx,
    _: *mut c_void,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn dom_srx_ctx(
    _: *mut sys::fid_domain,
    _: *mut sys::fi_rx_attr,
    _: *mut *mut sys::fid_ep,
    _: *mut c_void,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn dom_query_atomic(
    _: *mut sys::fid_domain,
    _: sys::fi_datatype,
    _: sys::fi_op,
    _: *mut sys::fi_atomic_attr,
    _: u64,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn dom_query_collective(
    _: *mut sys::fid_domain,
    _: sys::fi_collective_op,
    _: *mut sys::fi_collective_attr,
    _: u64,
) -> c_int {
    -FI_ENOSYS
}

unsafe extern "C" fn dom_cq_open(
    domain: *mut sys::fid_domain,
    attr: *mut sys::fi_cq_attr,
    cq: *mut *mut sys::fid_cq,
    context: *mut c_void,
) -> c_int {
    // SAFETY: our domain; attr valid (fi_cq(3)).
    let (d, attr) = unsafe {
        (
            obj::<DomainObj>(domain as *const fid, sys::FI_CLASS_DOMAIN, &DOMAIN_FI_OPS),
            attr.as_ref(),
        )
    };
    let (Some(_), Some(attr)) = (d, attr) else {
        return -FI_EINVAL;
    };
    if cq.is_null() {
        return -FI_EINVAL;
    }
    if ![sys::FI_WAIT_NONE, sys::FI_WAIT_UNSPEC, sys::FI_WAIT_YIELD].contains(&attr.wait_obj) {
        warn("fi_cq_open: only FI_WAIT_NONE, FI_WAIT_UNSPEC and FI_WAIT_YIELD");
        return -FI_ENOSYS;
    }
    let format = match attr.format {
        sys::FI_CQ_FORMAT_UNSPEC => sys::FI_CQ_FORMAT_CONTEXT,
        f @ (sys::FI_CQ_FORMAT_CONTEXT
        | sys::FI_CQ_FORMAT_MSG
        | sys::FI_CQ_FORMAT_DATA
        | sys::FI_CQ_FORMAT_TAGGED) => f,
        _ => return -FI_ENOSYS,
    };
    let obj = Box::new(CqObj {
        fid: sys::fid_cq {
            fid: new_fid(sys::FI_CLASS_CQ, context, &CQ_FI_OPS),
            ops: &CQ_OPS as *const _ as *mut _,
        },
        cq: Arc::new(Cq::default()),
        format,
        err_msg: Mutex::new(CString::default()),
    });
    // SAFETY: `cq` is non-null and writable.
    unsafe { *cq = Box::into_raw(obj) as *mut sys::fid_cq };
    0
}

unsafe extern "C" fn dom_endpoint(
    domain: *mut sys::fid_domain,
    info: *mut sys::fi_info,
    ep: *mut *mut sys::fid_ep,
    context: *mut c_void,
) -> c_int {
    // SAFETY: our domain; info valid (fi_endpoint(3)); its handle null or a fid.
    let (d, info) = unsafe {
        (
            obj::<DomainObj>(domain as *const fid, sys::FI_CLASS_DOMAIN, &DOMAIN_FI_OPS),
            info.as_ref(),
        )
    };
    let (Some(d), Some(info)) = (d, info) else {
        return -FI_EINVAL;
    };
    // SAFETY: `info.ep_attr` is null or valid.
    if unsafe { info.ep_attr.as_ref() }
        .is_some_and(|a| a.type_ != sys::FI_EP_MSG && a.type_ != sys::FI_EP_UNSPEC)
    {
        return -FI_EINVAL;
    }
    if ep.is_null() {
        return -FI_EINVAL;
    }
    // SAFETY: a connection request's handle is our ConnReqObj (checked by class and ops).
    let req = unsafe { obj::<ConnReqObj>(info.handle, sys::FI_CLASS_CONNREQ, &CONNREQ_FI_OPS) };
    let made = match req {
        Some(r) => match lock(&r.pending).take() {
            Some(p) => Ok(Ep::adopt(p)),
            None => Err(Error::new(
                FI_EINVAL,
                "connection request already taken or rejected",
            )),
        },
        None if !info.handle.is_null() => Err(Error::new(
            FI_EINVAL,
            "info->handle is not a connection request of this provider",
        )),
        None => d.fabric.nic(None).and_then(Ep::new),
    };
    let e = match made {
        Ok(e) => Arc::new(e),
        Err(e) => {
            warn(&format!("fi_endpoint: {e}"));
            return e.ret();
        }
    };
    let obj = Box::new(EpObj {
        fid: sys::fid_ep {
            fid: new_fid(sys::FI_CLASS_EP, context, &EP_FI_OPS),
            ops: &EP_OPS as *const _ as *mut _,
            cm: &EP_CM_OPS as *const _ as *mut _,
            msg: &MSG_OPS as *const _ as *mut _,
            rma: &RMA_OPS as *const _ as *mut _,
            tagged: &TAGGED_OPS as *const _ as *mut _,
            atomic: std::ptr::null_mut(),
            collective: std::ptr::null_mut(),
        },
        ep: e,
        eq: Mutex::new(None),
    });
    let raw = Box::into_raw(obj);
    // SAFETY: `raw` is the live object just made; `ep` is writable.
    unsafe {
        let live = &*raw;
        live.ep
            .fid
            .store(raw as usize, std::sync::atomic::Ordering::Release);
        live.ep
            .context
            .store(context as usize, std::sync::atomic::Ordering::Release);
        *ep = raw as *mut sys::fid_ep;
    }
    0
}

unsafe extern "C" fn dom_endpoint2(
    domain: *mut sys::fid_domain,
    info: *mut sys::fi_info,
    ep: *mut *mut sys::fid_ep,
    flags: u64,
    context: *mut c_void,
) -> c_int {
    if flags != 0 {
        return -FI_EBADFLAGS;
    }
    // SAFETY: same arguments as fi_endpoint.
    unsafe { dom_endpoint(domain, info, ep, context) }
}

static MR_OPS: sys::fi_ops_mr = sys::fi_ops_mr {
    size: std::mem::size_of::<sys::fi_ops_mr>(),
    reg: Some(mr_reg),
    regv: Some(mr_regv),
    regattr: Some(mr_regattr),
};

/// Registers `len` bytes at `buf` on the domain's fabric NIC.
fn register(
    d: &DomainObj,
    buf: *const c_void,
    len: usize,
    access: u64,
    context: *mut c_void,
    out: *mut *mut sys::fid_mr,
) -> Result<()> {
    if buf.is_null() || len == 0 || out.is_null() {
        return Err(Error::new(FI_EINVAL, "fi_mr_reg of a null or empty buffer"));
    }
    if len > icn_via::attrs::MAX_REGISTER_SIZE {
        return Err(Error::new(
            FI_EINVAL,
            format!("fi_mr_reg of {len} bytes (at most 1 GiB)"),
        ));
    }
    let nic = d.fabric.nic(None)?;
    let attrs = MemAttributes {
        ptag: nic.ptag,
        enable_rdma_write: access & sys::FI_REMOTE_WRITE as u64 != 0,
        enable_rdma_read: access & sys::FI_REMOTE_READ as u64 != 0,
    };
    // SAFETY: libfabric's contract (fi_mr(3)): the buffer stays valid until the MR is
    // closed, and mr_close deregisters (Mr's drop) before that. The application accesses
    // it from C only, between calls.
    let handle = unsafe { nic.nic.register_addr(buf as *mut u8, len, attrs)? };
    let obj = Box::new(MrObj {
        fid: sys::fid_mr {
            fid: new_fid(sys::FI_CLASS_MR, context, &MR_FI_OPS),
            mem_desc: std::ptr::null_mut(),
            key: u64::from(handle.raw()),
        },
        mr: Mr { nic, handle },
    });
    let raw = Box::into_raw(obj);
    // SAFETY: `raw` is live; its descriptor is its own address (what `desc` arguments
    // carry back); `out` is non-null and writable.
    unsafe {
        (*raw).fid.mem_desc = raw as *mut c_void;
        *out = raw as *mut sys::fid_mr;
    }
    Ok(())
}

unsafe extern "C" fn mr_reg(
    f: *mut fid,
    buf: *const c_void,
    len: usize,
    access: u64,
    _offset: u64,
    _requested_key: u64,
    flags: u64,
    mr: *mut *mut sys::fid_mr,
    context: *mut c_void,
) -> c_int {
    // SAFETY: `f` is the domain the call went through.
    let Some(d) = (unsafe { obj::<DomainObj>(f, sys::FI_CLASS_DOMAIN, &DOMAIN_FI_OPS) }) else {
        return -FI_EINVAL;
    };
    // Flags are hints this provider has no use for (ofi_rxm passes its internal
    // OFI_MR_NOCACHE; FI_RMA_EVENT and FI_HMEM_* are not offered).
    let _ = flags;
    ret(register(d, buf, len, access, context, mr))
}

unsafe extern "C" fn mr_regv(
    f: *mut fid,
    iov: *const sys::iovec,
    count: usize,
    access: u64,
    offset: u64,
    requested_key: u64,
    flags: u64,
    mr: *mut *mut sys::fid_mr,
    context: *mut c_void,
) -> c_int {
    if count != 1 || iov.is_null() {
        warn(&format!("fi_mr_regv of {count} iovs (mr_iov_limit is 1)"));
        return -FI_EINVAL;
    }
    // SAFETY: `iov` has `count` = 1 valid entries.
    let v = unsafe { &*iov };
    // SAFETY: same contract as fi_mr_reg.
    unsafe {
        mr_reg(
            f,
            v.iov_base,
            v.iov_len,
            access,
            offset,
            requested_key,
            flags,
            mr,
            context,
        )
    }
}

unsafe extern "C" fn mr_regattr(
    f: *mut fid,
    attr: *const sys::fi_mr_attr,
    flags: u64,
    mr: *mut *mut sys::fid_mr,
) -> c_int {
    // SAFETY: attr null or valid (fi_mr(3)).
    let Some(a) = (unsafe { attr.as_ref() }) else {
        return -FI_EINVAL;
    };
    if a.iface != sys::FI_HMEM_SYSTEM {
        warn("fi_mr_regattr of device memory (FI_HMEM is not offered)");
        return -FI_ENOSYS;
    }
    // SAFETY: the attr's fields follow fi_mr_regv's contract.
    unsafe {
        mr_regv(
            f,
            a.mr_iov,
            a.iov_count,
            a.access,
            a.offset,
            a.requested_key,
            flags,
            mr,
            a.context,
        )
    }
}

// ---------------------------------------------------------------------------------------
// Event queue

static EQ_OPS: sys::fi_ops_eq = sys::fi_ops_eq {
    size: std::mem::size_of::<sys::fi_ops_eq>(),
    read: Some(eq_read),
    readerr: Some(eq_readerr),
    write: Some(eq_write),
    sread: Some(eq_sread),
    strerror: Some(eq_strerror),
};

const CM_ENTRY_LEN: usize = std::mem::size_of::<sys::fi_eq_cm_entry>();

/// Writes `e` into the caller's buffer as the event it is; returns (event, bytes).
///
/// # Safety
/// `buf` is valid for `len` bytes.
unsafe fn write_event(
    e: &mut Event,
    buf: *mut c_void,
    len: usize,
    peek: bool,
    link: Link,
) -> std::result::Result<(u32, usize), i32> {
    let cm =
        |fid: usize, info: *mut sys::fi_info, data: &[u8]| -> std::result::Result<usize, i32> {
            if len < CM_ENTRY_LEN || buf.is_null() {
                return Err(FI_ETOOSMALL);
            }
            let n = data.len().min(len - CM_ENTRY_LEN);
            // SAFETY: `buf` has `len` >= CM_ENTRY_LEN + n bytes (caller's contract).
            unsafe {
                let entry = buf as *mut sys::fi_eq_cm_entry;
                (*entry).fid = fid as *mut fid;
                (*entry).info = info;
                std::ptr::copy_nonoverlapping(data.as_ptr(), (buf as *mut u8).add(CM_ENTRY_LEN), n);
            }
            Ok(CM_ENTRY_LEN + n)
        };
    match e {
        Event::ConnReq {
            fid,
            peer,
            data,
            pending,
        } => {
            let info = if peek {
                std::ptr::null_mut()
            } else {
                let handle = Box::into_raw(Box::new(ConnReqObj {
                    fid: new_fid(sys::FI_CLASS_CONNREQ, std::ptr::null_mut(), &CONNREQ_FI_OPS),
                    pending: pending.clone(),
                }));
                let offer = Offer {
                    link,
                    caps: link.caps(),
                    tx_size: QUEUE_DEPTH,
                    rx_size: QUEUE_DEPTH,
                    src: None,
                    dest: Some(*peer),
                };
                let i = alloc_info(&offer, Some(handle as *mut fid), std::ptr::null_mut());
                if i.is_null() {
                    return Err(FI_ENOMEM);
                }
                i
            };
            cm(*fid, info, data).map(|n| (sys::FI_CONNREQ, n))
        }
        Event::Connected { fid, data } => {
            cm(*fid, std::ptr::null_mut(), data).map(|n| (sys::FI_CONNECTED, n))
        }
        Event::Shutdown { fid } => {
            cm(*fid, std::ptr::null_mut(), &[]).map(|n| (sys::FI_SHUTDOWN, n))
        }
        Event::User { event, bytes } => {
            if buf.is_null() || len < bytes.len() {
                return Err(FI_ETOOSMALL);
            }
            // SAFETY: `buf` has room for `bytes` (checked).
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf as *mut u8, bytes.len()) };
            Ok((*event, bytes.len()))
        }
        Event::Error { .. } => Err(FI_EAVAIL),
    }
}

/// `fi_eq_read` / `fi_eq_sread`.
///
/// # Safety
/// `eq` is any fid; `event` null or writable; `buf` valid for `len` bytes.
unsafe fn eq_read_common(
    eq: *mut sys::fid_eq,
    event: *mut u32,
    buf: *mut c_void,
    len: usize,
    flags: u64,
    timeout: Option<Duration>,
) -> isize {
    // SAFETY: `eq` came through our ops.
    let Some(o) = (unsafe { obj::<EqObj>(eq as *const fid, sys::FI_CLASS_EQ, &EQ_FI_OPS) }) else {
        return -FI_EINVAL as isize;
    };
    let peek = flags & sys::FI_PEEK as u64 != 0;
    let r = o.eq.with_front(timeout, |e| {
        // A connection request's info names the link of the NIC that took it.
        let link = match e {
            Event::ConnReq { pending, .. } => {
                lock(pending).as_ref().map_or(Link::Shm, |p| p.link())
            }
            _ => Link::Shm,
        };
        // SAFETY: the caller's contract on `buf`/`len`.
        let r = unsafe { write_event(e, buf, len, peek, link) };
        let remove = r.is_ok() && !peek;
        (r, remove)
    });
    match r {
        None => -FI_EAGAIN as isize,
        Some(Err(code)) => -code as isize,
        Some(Ok((ev, n))) => {
            if !event.is_null() {
                // SAFETY: `event` is writable (checked non-null).
                unsafe { *event = ev };
            }
            n as isize
        }
    }
}

unsafe extern "C" fn eq_read(
    eq: *mut sys::fid_eq,
    event: *mut u32,
    buf: *mut c_void,
    len: usize,
    flags: u64,
) -> isize {
    // SAFETY: fi_eq_read's contract.
    unsafe { eq_read_common(eq, event, buf, len, flags, Some(Duration::ZERO)) }
}

unsafe extern "C" fn eq_sread(
    eq: *mut sys::fid_eq,
    event: *mut u32,
    buf: *mut c_void,
    len: usize,
    timeout: c_int,
    flags: u64,
) -> isize {
    let t = (timeout >= 0).then(|| Duration::from_millis(timeout as u64));
    // SAFETY: fi_eq_sread's contract.
    unsafe { eq_read_common(eq, event, buf, len, flags, t) }
}

unsafe extern "C" fn eq_readerr(
    eq: *mut sys::fid_eq,
    buf: *mut sys::fi_eq_err_entry,
    _flags: u64,
) -> isize {
    // SAFETY: our EQ; `buf` null or a writable fi_eq_err_entry (fi_eq(3)).
    let (Some(o), Some(out)) = (
        unsafe { obj::<EqObj>(eq as *const fid, sys::FI_CLASS_EQ, &EQ_FI_OPS) },
        unsafe { buf.as_mut() },
    ) else {
        return -FI_EINVAL as isize;
    };
    let taken = o.eq.with_front(Some(Duration::ZERO), |e| match e {
        Event::Error {
            fid,
            context,
            err,
            data,
        } => (Some((*fid, *context, *err, std::mem::take(data))), true),
        _ => (None, false),
    });
    let Some(Some((fid, context, err, data))) = taken else {
        return -FI_EAGAIN as isize;
    };
    let mut stash = lock(&o.err_data);
    *stash = data;
    out.fid = fid as *mut fid;
    out.context = context as *mut c_void;
    out.data = 0;
    out.err = err;
    out.prov_errno = err;
    if out.err_data_size > 0 && !out.err_data.is_null() {
        // libfabric >= 1.5: the caller gave a buffer; copy into it.
        let n = out.err_data_size.min(stash.len());
        // SAFETY: the caller's buffer has err_data_size bytes.
        unsafe { std::ptr::copy_nonoverlapping(stash.as_ptr(), out.err_data as *mut u8, n) };
        out.err_data_size = n;
    } else {
        out.err_data = if stash.is_empty() {
            std::ptr::null_mut()
        } else {
            stash.as_mut_ptr() as *mut c_void
        };
        out.err_data_size = stash.len();
    }
    std::mem::size_of::<sys::fi_eq_err_entry>() as isize
}

unsafe extern "C" fn eq_write(
    eq: *mut sys::fid_eq,
    event: u32,
    buf: *const c_void,
    len: usize,
    _flags: u64,
) -> isize {
    // SAFETY: our EQ; `buf` valid for `len` bytes.
    let Some(o) = (unsafe { obj::<EqObj>(eq as *const fid, sys::FI_CLASS_EQ, &EQ_FI_OPS) }) else {
        return -FI_EINVAL as isize;
    };
    if buf.is_null() && len > 0 {
        return -FI_EINVAL as isize;
    }
    let bytes = if len == 0 {
        Vec::new()
    } else {
        // SAFETY: `buf` has `len` bytes (fi_eq_write(3)).
        unsafe { std::slice::from_raw_parts(buf as *const u8, len) }.to_vec()
    };
    o.eq.push(Event::User { event, bytes });
    len as isize
}

unsafe extern "C" fn eq_strerror(
    _: *mut sys::fid_eq,
    prov_errno: c_int,
    _: *const c_void,
    buf: *mut c_char,
    len: usize,
) -> *const c_char {
    // SAFETY: `buf` null or valid for `len` bytes.
    unsafe { strerror_into(prov_errno, buf, len) }
}

/// Writes libc's text for `err` into `buf` (if any) and returns it.
///
/// # Safety
/// `buf` is null or valid for `len` bytes.
unsafe fn strerror_into(err: c_int, buf: *mut c_char, len: usize) -> *const c_char {
    static GENERIC: &CStr = c"icnvia: operation failed";
    if buf.is_null() || len == 0 {
        return GENERIC.as_ptr();
    }
    let s = std::io::Error::from_raw_os_error(err).to_string();
    let n = s.len().min(len - 1);
    // SAFETY: `buf` has `len` > n bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf as *mut u8, n);
        *buf.add(n) = 0;
    }
    buf
}

// ---------------------------------------------------------------------------------------
// Completion queue

static CQ_OPS: sys::fi_ops_cq = sys::fi_ops_cq {
    size: std::mem::size_of::<sys::fi_ops_cq>(),
    read: Some(cq_read),
    readfrom: Some(cq_readfrom),
    readerr: Some(cq_readerr),
    sread: Some(cq_sread),
    sreadfrom: Some(cq_sreadfrom),
    signal: Some(cq_signal),
    strerror: Some(cq_strerror),
};

fn entry_size(format: sys::fi_cq_format) -> usize {
    match format {
        sys::FI_CQ_FORMAT_MSG => std::mem::size_of::<sys::fi_cq_msg_entry>(),
        sys::FI_CQ_FORMAT_DATA => std::mem::size_of::<sys::fi_cq_data_entry>(),
        sys::FI_CQ_FORMAT_TAGGED => std::mem::size_of::<sys::fi_cq_tagged_entry>(),
        _ => std::mem::size_of::<sys::fi_cq_entry>(),
    }
}

/// Writes `e` as entry `i` of a `format` array at `buf`.
///
/// # Safety
/// `buf` holds at least `i + 1` entries of `format`.
unsafe fn write_entry(buf: *mut c_void, i: usize, format: sys::fi_cq_format, e: &CqEntry) {
    // SAFETY: the caller's contract; each format's struct starts with the previous one's
    // fields (fi_cq(3)), so writing the larger struct covers the smaller ones.
    unsafe {
        let p = (buf as *mut u8).add(i * entry_size(format));
        let ctx = e.context as *mut c_void;
        match format {
            sys::FI_CQ_FORMAT_MSG => {
                *(p as *mut sys::fi_cq_msg_entry) = sys::fi_cq_msg_entry {
                    op_context: ctx,
                    flags: e.flags,
                    len: e.len,
                }
            }
            sys::FI_CQ_FORMAT_DATA => {
                *(p as *mut sys::fi_cq_data_entry) = sys::fi_cq_data_entry {
                    op_context: ctx,
                    flags: e.flags,
                    len: e.len,
                    buf: e.buf as *mut c_void,
                    data: e.data,
                }
            }
            sys::FI_CQ_FORMAT_TAGGED => {
                *(p as *mut sys::fi_cq_tagged_entry) = sys::fi_cq_tagged_entry {
                    op_context: ctx,
                    flags: e.flags,
                    len: e.len,
                    buf: e.buf as *mut c_void,
                    data: e.data,
                    tag: 0,
                }
            }
            _ => *(p as *mut sys::fi_cq_entry) = sys::fi_cq_entry { op_context: ctx },
        }
    }
}

/// # Safety
/// `cq` any fid; `buf` holds `count` entries of the CQ's format.
unsafe fn cq_read_common(
    cq: *mut sys::fid_cq,
    buf: *mut c_void,
    count: usize,
    timeout: Option<Option<Duration>>,
) -> isize {
    // SAFETY: `cq` came through our ops.
    let Some(o) = (unsafe { obj::<CqObj>(cq as *const fid, sys::FI_CLASS_CQ, &CQ_FI_OPS) }) else {
        return -FI_EINVAL as isize;
    };
    if buf.is_null() || count == 0 {
        return -FI_EINVAL as isize;
    }
    let format = o.format;
    let mut emit = |i: usize, e: &CqEntry| {
        // SAFETY: `buf` holds `count` entries and `read` emits at most `count`.
        unsafe { write_entry(buf, i, format, e) }
    };
    let r = match timeout {
        None => o.cq.read(count, &mut emit),
        Some(t) => o.cq.sread(count, &mut emit, t),
    };
    match r {
        Ok(n) => n as isize,
        Err(code) => -code as isize,
    }
}

unsafe extern "C" fn cq_read(cq: *mut sys::fid_cq, buf: *mut c_void, count: usize) -> isize {
    // SAFETY: fi_cq_read's contract.
    unsafe { cq_read_common(cq, buf, count, None) }
}
unsafe extern "C" fn cq_readfrom(
    cq: *mut sys::fid_cq,
    buf: *mut c_void,
    count: usize,
    src: *mut sys::fi_addr_t,
) -> isize {
    // SAFETY: fi_cq_readfrom's contract; `src` holds `count` entries.
    let n = unsafe { cq_read_common(cq, buf, count, None) };
    if n > 0 && !src.is_null() {
        for i in 0..n as usize {
            // SAFETY: `src` holds `count` >= n addresses. MSG endpoints have no AV.
            unsafe { *src.add(i) = u64::MAX };
        }
    }
    n
}
unsafe extern "C" fn cq_sread(
    cq: *mut sys::fid_cq,
    buf: *mut c_void,
    count: usize,
    _cond: *const c_void,
    timeout: c_int,
) -> isize {
    let t = (timeout >= 0).then(|| Duration::from_millis(timeout as u64));
    // SAFETY: fi_cq_sread's contract.
    unsafe { cq_read_common(cq, buf, count, Some(t)) }
}
unsafe extern "C" fn cq_sreadfrom(
    cq: *mut sys::fid_cq,
    buf: *mut c_void,
    count: usize,
    src: *mut sys::fi_addr_t,
    _cond: *const c_void,
    timeout: c_int,
) -> isize {
    let t = (timeout >= 0).then(|| Duration::from_millis(timeout as u64));
    // SAFETY: fi_cq_sreadfrom's contract.
    let n = unsafe { cq_read_common(cq, buf, count, Some(t)) };
    if n > 0 && !src.is_null() {
        for i in 0..n as usize {
            // SAFETY: `src` holds `count` >= n addresses.
            unsafe { *src.add(i) = u64::MAX };
        }
    }
    n
}
unsafe extern "C" fn cq_signal(_: *mut sys::fid_cq) -> c_int {
    -FI_ENOSYS
}

unsafe extern "C" fn cq_readerr(
    cq: *mut sys::fid_cq,
    buf: *mut sys::fi_cq_err_entry,
    _flags: u64,
) -> isize {
    // SAFETY: our CQ; `buf` null or a writable fi_cq_err_entry.
    let (Some(o), Some(out)) = (
        unsafe { obj::<CqObj>(cq as *const fid, sys::FI_CLASS_CQ, &CQ_FI_OPS) },
        unsafe { buf.as_mut() },
    ) else {
        return -FI_EINVAL as isize;
    };
    let Some(e) = o.cq.read_err() else {
        return -FI_EAGAIN as isize;
    };
    if e.err != FI_ECANCELED {
        // (Flushed receives are what every endpoint of a closed connection reports.)
        warn(&format!("completion error: {}", e.msg));
    }
    *lock(&o.err_msg) = CString::new(e.msg.replace('\0', " ")).unwrap_or_default();
    out.op_context = e.entry.context as *mut c_void;
    out.flags = e.entry.flags;
    out.len = e.entry.len;
    out.buf = e.entry.buf as *mut c_void;
    out.data = 0;
    out.tag = 0;
    out.olen = 0;
    out.err = e.err;
    out.prov_errno = e.prov_errno;
    if out.err_data_size > 0 {
        out.err_data_size = 0; // no provider error data
    } else {
        out.err_data = std::ptr::null_mut();
    }
    1
}

unsafe extern "C" fn cq_strerror(
    cq: *mut sys::fid_cq,
    prov_errno: c_int,
    _: *const c_void,
    buf: *mut c_char,
    len: usize,
) -> *const c_char {
    // SAFETY: our CQ (or not: then libc's text); `buf` null or valid for `len` bytes.
    unsafe {
        match obj::<CqObj>(cq as *const fid, sys::FI_CLASS_CQ, &CQ_FI_OPS) {
            Some(o) if !buf.is_null() && len > 0 => {
                let m = lock(&o.err_msg);
                let b = m.as_bytes();
                let n = b.len().min(len - 1);
                std::ptr::copy_nonoverlapping(b.as_ptr(), buf as *mut u8, n);
                *buf.add(n) = 0;
                buf
            }
            _ => strerror_into(prov_errno, buf, len),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Active endpoint: bind, enable, options, connection management

unsafe extern "C" fn ep_bind(f: *mut fid, bfid: *mut fid, flags: u64) -> c_int {
    // SAFETY: `f` came through our ops; `bfid` is any fid (checked by class and ops).
    let Some(o) = (unsafe { obj::<EpObj>(f, sys::FI_CLASS_EP, &EP_FI_OPS) }) else {
        return -FI_EINVAL;
    };
    // SAFETY: as above.
    if let Some(eq) = unsafe { obj::<EqObj>(bfid, sys::FI_CLASS_EQ, &EQ_FI_OPS) } {
        o.ep.bind_eq(eq.eq.clone());
        *lock(&o.eq) = Some(eq.eq.clone());
        return 0;
    }
    // SAFETY: as above.
    if let Some(cq) = unsafe { obj::<CqObj>(bfid, sys::FI_CLASS_CQ, &CQ_FI_OPS) } {
        let tx = flags & sys::FI_TRANSMIT as u64 != 0;
        let rx = flags & sys::FI_RECV as u64 != 0;
        if !tx && !rx {
            return -FI_EBADFLAGS;
        }
        let selective = flags & sys::FI_SELECTIVE_COMPLETION != 0;
        if tx {
            o.ep.tx_all
                .store(!selective, std::sync::atomic::Ordering::Release);
        }
        if rx {
            o.ep.rx_all
                .store(!selective, std::sync::atomic::Ordering::Release);
        }
        cq.cq.bind(&o.ep, tx, rx);
        return 0;
    }
    -FI_EINVAL
}

unsafe extern "C" fn ep_control(f: *mut fid, command: c_int, _arg: *mut c_void) -> c_int {
    // SAFETY: `f` came through our ops.
    let Some(o) = (unsafe { obj::<EpObj>(f, sys::FI_CLASS_EP, &EP_FI_OPS) }) else {
        return -FI_EINVAL;
    };
    match command as u32 {
        sys::FI_ENABLE => ret(o.ep.enable()),
        _ => -FI_ENOSYS,
    }
}

static EP_OPS: sys::fi_ops_ep = sys::fi_ops_ep {
    size: std::mem::size_of::<sys::fi_ops_ep>(),
    cancel: Some(ep_cancel),
    getopt: Some(ep_getopt),
    setopt: Some(ep_setopt),
    tx_ctx: Some(ep_tx_ctx),
    rx_ctx: Some(ep_rx_ctx),
    rx_size_left: Some(ep_size_left),
    tx_size_left: Some(ep_size_left),
};

static PEP_EP_OPS: sys::fi_ops_ep = EP_OPS;

unsafe extern "C" fn ep_cancel(_: *mut fid, _: *mut c_void) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn ep_tx_ctx(
    _: *mut sys::fid_ep,
    _: c_int,
    _: *mut sys::fi_tx_attr,
    _: *mut *mut sys::fid_ep,
    _: *mut c_void,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn ep_rx_ctx(
    _: *mut sys::fid_ep,
    _: c_int,
    _: *mut sys::fi_rx_attr,
    _: *mut *mut sys::fid_ep,
    _: *mut c_void,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn ep_size_left(_: *mut sys::fid_ep) -> isize {
    -FI_ENOSYS as isize
}

unsafe extern "C" fn ep_getopt(
    _: *mut fid,
    level: c_int,
    name: c_int,
    val: *mut c_void,
    len: *mut usize,
) -> c_int {
    if level as u32 != sys::FI_OPT_ENDPOINT || name as u32 != sys::FI_OPT_CM_DATA_SIZE {
        return -FI_ENOPROTOOPT;
    }
    // SAFETY: `len` null or writable; `val` holds *len bytes (fi_endpoint(3)).
    unsafe {
        if len.is_null() || val.is_null() || *len < std::mem::size_of::<usize>() {
            return -FI_ETOOSMALL;
        }
        *(val as *mut usize) = MAX_CM_DATA;
        *len = std::mem::size_of::<usize>();
    }
    0
}

unsafe extern "C" fn ep_setopt(
    _: *mut fid,
    _: c_int,
    _: c_int,
    _: *const c_void,
    _: usize,
) -> c_int {
    -FI_ENOPROTOOPT
}

static EP_CM_OPS: sys::fi_ops_cm = sys::fi_ops_cm {
    size: std::mem::size_of::<sys::fi_ops_cm>(),
    setname: Some(cm_setname_no),
    getname: Some(ep_getname),
    getpeer: Some(ep_getpeer),
    connect: Some(ep_connect),
    listen: Some(cm_listen_no),
    accept: Some(ep_accept),
    reject: Some(cm_reject_no),
    shutdown: Some(ep_shutdown),
    join: Some(cm_join_no),
};

unsafe extern "C" fn cm_setname_no(_: *mut fid, _: *mut c_void, _: usize) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn cm_listen_no(_: *mut sys::fid_pep) -> c_int {
    -FI_EINVAL
}
unsafe extern "C" fn cm_reject_no(
    _: *mut sys::fid_pep,
    _: *mut fid,
    _: *const c_void,
    _: usize,
) -> c_int {
    -FI_EINVAL
}
unsafe extern "C" fn cm_join_no(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: u64,
    _: *mut *mut sys::fid_mc,
    _: *mut c_void,
) -> c_int {
    -FI_ENOSYS
}
unsafe extern "C" fn cm_connect_no(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: *const c_void,
    _: usize,
) -> c_int {
    -FI_EINVAL
}
unsafe extern "C" fn cm_accept_no(_: *mut sys::fid_ep, _: *const c_void, _: usize) -> c_int {
    -FI_EINVAL
}
unsafe extern "C" fn cm_shutdown_no(_: *mut sys::fid_ep, _: u64) -> c_int {
    -FI_EINVAL
}
unsafe extern "C" fn cm_getpeer_no(_: *mut sys::fid_ep, _: *mut c_void, _: *mut usize) -> c_int {
    -FI_EINVAL
}

/// Writes `a` as a sockaddr_in into the caller's buffer (`-FI_ETOOSMALL` with the needed
/// length if it does not fit).
///
/// # Safety
/// `len` null or writable; `out` holds `*len` bytes.
unsafe fn put_name(a: SocketAddrV4, out: *mut c_void, len: *mut usize) -> c_int {
    // SAFETY: the contract above.
    unsafe {
        if len.is_null() {
            return -FI_EINVAL;
        }
        let room = *len;
        *len = SOCKADDR_IN_LEN;
        if out.is_null() || room < SOCKADDR_IN_LEN {
            return -FI_ETOOSMALL;
        }
        std::ptr::copy_nonoverlapping(addr::encode(a).as_ptr(), out as *mut u8, SOCKADDR_IN_LEN);
    }
    0
}

unsafe extern "C" fn ep_getname(f: *mut fid, out: *mut c_void, len: *mut usize) -> c_int {
    // SAFETY: `f` is an endpoint or passive endpoint of ours (fi_getname(3)).
    unsafe {
        if let Some(o) = obj::<EpObj>(f, sys::FI_CLASS_EP, &EP_FI_OPS) {
            return put_name(o.ep.nic.addr, out, len);
        }
        if let Some(p) = obj::<PepObj>(f, sys::FI_CLASS_PEP, &PEP_FI_OPS) {
            let nic = lock(&p.nic).clone();
            let a = match nic {
                Some(n) => n.addr,
                None => match *lock(&p.src) {
                    Some(a) if a.port() != 0 => a,
                    _ => return -FI_EADDRNOTAVAIL, // not listening yet: no address chosen
                },
            };
            return put_name(a, out, len);
        }
    }
    -FI_EINVAL
}

unsafe extern "C" fn ep_getpeer(ep: *mut sys::fid_ep, out: *mut c_void, len: *mut usize) -> c_int {
    // SAFETY: our endpoint; `out`/`len` per fi_getpeer(3).
    unsafe {
        let Some(o) = obj::<EpObj>(ep as *const fid, sys::FI_CLASS_EP, &EP_FI_OPS) else {
            return -FI_EINVAL;
        };
        match o.ep.peer() {
            Some(a) => put_name(a, out, len),
            None => -FI_ENOTCONN,
        }
    }
}

unsafe extern "C" fn ep_connect(
    ep: *mut sys::fid_ep,
    a: *const c_void,
    param: *const c_void,
    len: usize,
) -> c_int {
    // SAFETY: our endpoint; `a` a sockaddr of the fabric's format; `param` `len` bytes.
    let (o, dest, data) = unsafe {
        (
            obj::<EpObj>(ep as *const fid, sys::FI_CLASS_EP, &EP_FI_OPS),
            (!a.is_null())
                .then(|| addr::decode(std::slice::from_raw_parts(a as *const u8, SOCKADDR_IN_LEN)))
                .flatten(),
            if param.is_null() || len == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(param as *const u8, len)
            },
        )
    };
    let (Some(o), Some(dest)) = (o, dest) else {
        return -FI_EINVAL;
    };
    ret(o.ep.connect(dest, data))
}

unsafe extern "C" fn ep_accept(ep: *mut sys::fid_ep, param: *const c_void, len: usize) -> c_int {
    // SAFETY: our endpoint; `param` `len` bytes.
    let (o, data) = unsafe {
        (
            obj::<EpObj>(ep as *const fid, sys::FI_CLASS_EP, &EP_FI_OPS),
            if param.is_null() || len == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(param as *const u8, len)
            },
        )
    };
    let Some(o) = o else { return -FI_EINVAL };
    if data.len() > MAX_CM_DATA {
        return -FI_EINVAL;
    }
    ret(o.ep.accept(data))
}

unsafe extern "C" fn ep_shutdown(ep: *mut sys::fid_ep, _flags: u64) -> c_int {
    // SAFETY: our endpoint.
    let Some(o) = (unsafe { obj::<EpObj>(ep as *const fid, sys::FI_CLASS_EP, &EP_FI_OPS) }) else {
        return -FI_EINVAL;
    };
    ret(o.ep.shutdown())
}

// ---------------------------------------------------------------------------------------
// Passive endpoint

static PEP_CM_OPS: sys::fi_ops_cm = sys::fi_ops_cm {
    size: std::mem::size_of::<sys::fi_ops_cm>(),
    setname: Some(pep_setname),
    getname: Some(ep_getname),
    getpeer: Some(cm_getpeer_no),
    connect: Some(cm_connect_no),
    listen: Some(pep_listen),
    accept: Some(cm_accept_no),
    reject: Some(pep_reject),
    shutdown: Some(cm_shutdown_no),
    join: Some(cm_join_no),
};

unsafe extern "C" fn pep_bind(f: *mut fid, bfid: *mut fid, _flags: u64) -> c_int {
    // SAFETY: `f` ours; `bfid` any fid (checked).
    let (Some(p), Some(eq)) = (
        unsafe { obj::<PepObj>(f, sys::FI_CLASS_PEP, &PEP_FI_OPS) },
        unsafe { obj::<EqObj>(bfid, sys::FI_CLASS_EQ, &EQ_FI_OPS) },
    ) else {
        return -FI_EINVAL;
    };
    *lock(&p.eq) = Some(eq.eq.clone());
    0
}

unsafe extern "C" fn pep_setname(f: *mut fid, a: *mut c_void, len: usize) -> c_int {
    // SAFETY: `f` ours; `a` holds `len` bytes.
    let (p, a) = unsafe {
        (
            obj::<PepObj>(f, sys::FI_CLASS_PEP, &PEP_FI_OPS),
            (!a.is_null())
                .then(|| addr::decode(std::slice::from_raw_parts(a as *const u8, len)))
                .flatten(),
        )
    };
    let (Some(p), Some(a)) = (p, a) else {
        return -FI_EINVAL;
    };
    if lock(&p.listener).is_some() {
        return -FI_EOPBADSTATE;
    }
    *lock(&p.src) = Some(a);
    0
}

unsafe extern "C" fn pep_listen(pep: *mut sys::fid_pep) -> c_int {
    // SAFETY: our passive endpoint.
    let Some(p) = (unsafe { obj::<PepObj>(pep as *const fid, sys::FI_CLASS_PEP, &PEP_FI_OPS) })
    else {
        return -FI_EINVAL;
    };
    let Some(eq) = lock(&p.eq).clone() else {
        warn("fi_listen on a passive endpoint bound to no EQ");
        return -FI_ENOEQ;
    };
    let mut l = lock(&p.listener);
    if l.is_some() {
        return 0;
    }
    let src = *lock(&p.src);
    let r = p.fabric.nic(src).and_then(|nic| {
        *lock(&p.nic) = Some(nic.clone());
        Listener::start(nic, eq, pep as usize)
    });
    match r {
        Ok(listener) => {
            *l = Some(listener);
            0
        }
        Err(e) => {
            warn(&format!("fi_listen: {e}"));
            e.ret()
        }
    }
}

unsafe extern "C" fn pep_reject(
    _pep: *mut sys::fid_pep,
    handle: *mut fid,
    param: *const c_void,
    len: usize,
) -> c_int {
    // SAFETY: `handle` is a connection request's (checked); `param` `len` bytes.
    let (req, data) = unsafe {
        (
            obj::<ConnReqObj>(handle, sys::FI_CLASS_CONNREQ, &CONNREQ_FI_OPS),
            if param.is_null() || len == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(param as *const u8, len)
            },
        )
    };
    let Some(req) = req else { return -FI_EINVAL };
    if data.len() > MAX_CM_DATA {
        return -FI_EINVAL;
    }
    let Some(p) = lock(&req.pending).take() else {
        return -FI_EINVAL;
    };
    ret(p.reject(data))
}

// ---------------------------------------------------------------------------------------
// Data transfer: messages and RMA

/// The endpoint of a data call.
///
/// # Safety
/// `ep` is a fid_ep that came through our ops.
unsafe fn ep_of<'a>(ep: *mut sys::fid_ep) -> Option<&'a EpObj> {
    // SAFETY: the contract above.
    unsafe { obj::<EpObj>(ep as *const fid, sys::FI_CLASS_EP, &EP_FI_OPS) }
}

/// The segment of `len` bytes at `buf` registered as `desc` (an MR of this fabric).
///
/// # Safety
/// `desc` is null or what `fi_mr_desc` returned for a live MR of ours.
unsafe fn segment(
    nic: &Arc<NicCtx>,
    buf: *const c_void,
    len: usize,
    desc: *mut c_void,
) -> Result<Option<Segment>> {
    if len == 0 {
        return Ok(None);
    }
    if len > info::MAX_MSG_SIZE {
        return Err(Error::new(
            FI_EMSGSIZE,
            format!("{len} bytes (at most {})", info::MAX_MSG_SIZE),
        ));
    }
    // SAFETY: the contract above.
    let Some(mr) = (unsafe { obj::<MrObj>(desc as *const fid, sys::FI_CLASS_MR, &MR_FI_OPS) })
    else {
        return Err(Error::new(
            FI_EINVAL,
            "a buffer without its fi_mr_desc (the domain needs FI_MR_LOCAL)",
        ));
    };
    if !Arc::ptr_eq(&mr.mr.nic, nic) {
        return Err(Error::new(FI_EINVAL, "memory registered in another fabric"));
    }
    Ok(Some(Segment::new(mr.mr.handle, buf as u64, len as u32)))
}

/// The segments of an iovec array with its descriptors.
///
/// # Safety
/// `iov` and `desc` hold `count` entries (desc may be null); each desc as in `segment`.
unsafe fn segments(
    nic: &Arc<NicCtx>,
    iov: *const sys::iovec,
    desc: *mut *mut c_void,
    count: usize,
) -> Result<(Segments, usize, usize)> {
    if count > info::IOV_LIMIT || (count > 0 && iov.is_null()) {
        return Err(Error::new(
            FI_EINVAL,
            format!("{count} iov entries (at most {})", info::IOV_LIMIT),
        ));
    }
    let mut segs = Segments::new();
    let mut total = 0usize;
    let mut first = 0usize;
    for i in 0..count {
        // SAFETY: the contract above.
        let (v, d) = unsafe {
            (
                &*iov.add(i),
                if desc.is_null() {
                    std::ptr::null_mut()
                } else {
                    *desc.add(i)
                },
            )
        };
        if i == 0 {
            first = v.iov_base as usize;
        }
        total += v.iov_len;
        // SAFETY: as above.
        if let Some(s) = unsafe { segment(nic, v.iov_base, v.iov_len, d)? } {
            segs.push(s);
        }
    }
    Ok((segs, total, first))
}

fn op(context: *mut c_void, flags: u64, buf: usize, report: bool) -> OpInfo {
    OpInfo {
        context: context as usize,
        flags,
        buf,
        report,
    }
}

const RECV_FLAGS: u64 = sys::FI_RECV as u64 | sys::FI_MSG as u64;
const SEND_FLAGS: u64 = sys::FI_SEND as u64 | sys::FI_MSG as u64;
const READ_FLAGS: u64 = sys::FI_RMA as u64 | sys::FI_READ as u64;
const WRITE_FLAGS: u64 = sys::FI_RMA as u64 | sys::FI_WRITE as u64;

fn report(all: &std::sync::atomic::AtomicBool, flags: u64) -> bool {
    all.load(std::sync::atomic::Ordering::Relaxed) || flags & sys::FI_COMPLETION as u64 != 0
}

/// # Safety
/// As `segments`, for a data call's arguments.
unsafe fn do_recv(
    ep: *mut sys::fid_ep,
    iov: *const sys::iovec,
    desc: *mut *mut c_void,
    count: usize,
    context: *mut c_void,
    flags: u64,
) -> isize {
    // SAFETY: the contract above.
    let Some(o) = (unsafe { ep_of(ep) }) else {
        return -FI_EINVAL as isize;
    };
    // SAFETY: the contract above.
    let r = unsafe { segments(&o.ep.nic, iov, desc, count) }.and_then(|(segs, _, first)| {
        o.ep.post_recv(
            segs,
            op(context, RECV_FLAGS, first, report(&o.ep.rx_all, flags)),
        )
    });
    sret(r)
}

/// # Safety
/// As `segments`, for a data call's arguments.
unsafe fn do_send(
    ep: *mut sys::fid_ep,
    iov: *const sys::iovec,
    desc: *mut *mut c_void,
    count: usize,
    context: *mut c_void,
    flags: u64,
) -> isize {
    // SAFETY: the contract above.
    let Some(o) = (unsafe { ep_of(ep) }) else {
        return -FI_EINVAL as isize;
    };
    if flags & sys::FI_INJECT as u64 != 0 {
        return -FI_EINVAL as isize; // inject_size is 0
    }
    // SAFETY: the contract above.
    let r = unsafe { segments(&o.ep.nic, iov, desc, count) }.and_then(|(segs, _, _)| {
        o.ep.post_send(
            Descriptor::send(segs),
            op(context, SEND_FLAGS, 0, report(&o.ep.tx_all, flags)),
        )
    });
    sret(r)
}

/// # Safety
/// As `segments`, plus one remote iov.
#[allow(clippy::too_many_arguments)] // the arguments of fi_readmsg / fi_writemsg
unsafe fn do_rma(
    ep: *mut sys::fid_ep,
    iov: *const sys::iovec,
    desc: *mut *mut c_void,
    count: usize,
    addr: u64,
    key: u64,
    context: *mut c_void,
    flags: u64,
    read: bool,
) -> isize {
    // SAFETY: the contract above.
    let Some(o) = (unsafe { ep_of(ep) }) else {
        return -FI_EINVAL as isize;
    };
    if flags & sys::FI_INJECT as u64 != 0 {
        return -FI_EINVAL as isize;
    }
    let Ok(key) = u32::try_from(key) else {
        warn(&format!(
            "RMA key {key:#x} is not one of this provider's (4 bytes)"
        ));
        return -FI_EINVAL as isize;
    };
    let remote = RemoteAddr {
        handle: MemHandle::from_raw(key),
        offset: addr,
    };
    // SAFETY: the contract above.
    let r = unsafe { segments(&o.ep.nic, iov, desc, count) }.and_then(|(segs, _, _)| {
        let (d, f) = if read {
            (Descriptor::rdma_read(remote, segs), READ_FLAGS)
        } else {
            (Descriptor::rdma_write(remote, segs), WRITE_FLAGS)
        };
        o.ep.post_send(d, op(context, f, 0, report(&o.ep.tx_all, flags)))
    });
    sret(r)
}

fn one_iov(buf: *const c_void, len: usize) -> sys::iovec {
    sys::iovec {
        iov_base: buf as *mut c_void,
        iov_len: len,
    }
}

static MSG_OPS: sys::fi_ops_msg = sys::fi_ops_msg {
    size: std::mem::size_of::<sys::fi_ops_msg>(),
    recv: Some(msg_recv),
    recvv: Some(msg_recvv),
    recvmsg: Some(msg_recvmsg),
    send: Some(msg_send),
    sendv: Some(msg_sendv),
    sendmsg: Some(msg_sendmsg),
    inject: Some(msg_inject),
    senddata: Some(msg_senddata),
    injectdata: Some(msg_injectdata),
};

unsafe extern "C" fn msg_recv(
    ep: *mut sys::fid_ep,
    buf: *mut c_void,
    len: usize,
    mut desc: *mut c_void,
    _src: sys::fi_addr_t,
    context: *mut c_void,
) -> isize {
    let v = one_iov(buf, len);
    // SAFETY: one iov and one desc, as fi_recv(3) passes them.
    unsafe { do_recv(ep, &v, &mut desc, 1, context, 0) }
}
unsafe extern "C" fn msg_recvv(
    ep: *mut sys::fid_ep,
    iov: *const sys::iovec,
    desc: *mut *mut c_void,
    count: usize,
    _src: sys::fi_addr_t,
    context: *mut c_void,
) -> isize {
    // SAFETY: fi_recvv(3): `count` iovs and descs.
    unsafe { do_recv(ep, iov, desc, count, context, 0) }
}
unsafe extern "C" fn msg_recvmsg(
    ep: *mut sys::fid_ep,
    msg: *const sys::fi_msg,
    flags: u64,
) -> isize {
    // SAFETY: `msg` valid (fi_recvmsg(3)).
    let Some(m) = (unsafe { msg.as_ref() }) else {
        return -FI_EINVAL as isize;
    };
    // SAFETY: the message's iov/desc arrays hold iov_count entries.
    unsafe { do_recv(ep, m.msg_iov, m.desc, m.iov_count, m.context, flags) }
}
unsafe extern "C" fn msg_send(
    ep: *mut sys::fid_ep,
    buf: *const c_void,
    len: usize,
    mut desc: *mut c_void,
    _dest: sys::fi_addr_t,
    context: *mut c_void,
) -> isize {
    let v = one_iov(buf, len);
    // SAFETY: one iov and one desc.
    unsafe { do_send(ep, &v, &mut desc, 1, context, 0) }
}
unsafe extern "C" fn msg_sendv(
    ep: *mut sys::fid_ep,
    iov: *const sys::iovec,
    desc: *mut *mut c_void,
    count: usize,
    _dest: sys::fi_addr_t,
    context: *mut c_void,
) -> isize {
    // SAFETY: fi_sendv(3): `count` iovs and descs.
    unsafe { do_send(ep, iov, desc, count, context, 0) }
}
unsafe extern "C" fn msg_sendmsg(
    ep: *mut sys::fid_ep,
    msg: *const sys::fi_msg,
    flags: u64,
) -> isize {
    // SAFETY: `msg` valid (fi_sendmsg(3)).
    let Some(m) = (unsafe { msg.as_ref() }) else {
        return -FI_EINVAL as isize;
    };
    if flags & sys::FI_REMOTE_CQ_DATA as u64 != 0 {
        return -FI_EINVAL as isize; // cq_data_size is 0
    }
    // SAFETY: the message's arrays hold iov_count entries.
    unsafe { do_send(ep, m.msg_iov, m.desc, m.iov_count, m.context, flags) }
}
unsafe extern "C" fn msg_inject(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: usize,
    _: sys::fi_addr_t,
) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn msg_senddata(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: usize,
    _: *mut c_void,
    _: u64,
    _: sys::fi_addr_t,
    _: *mut c_void,
) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn msg_injectdata(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: usize,
    _: u64,
    _: sys::fi_addr_t,
) -> isize {
    -FI_ENOSYS as isize
}

static RMA_OPS: sys::fi_ops_rma = sys::fi_ops_rma {
    size: std::mem::size_of::<sys::fi_ops_rma>(),
    read: Some(rma_read),
    readv: Some(rma_readv),
    readmsg: Some(rma_readmsg),
    write: Some(rma_write),
    writev: Some(rma_writev),
    writemsg: Some(rma_writemsg),
    inject: Some(rma_inject),
    writedata: Some(rma_writedata),
    injectdata: Some(rma_injectdata),
};

unsafe extern "C" fn rma_read(
    ep: *mut sys::fid_ep,
    buf: *mut c_void,
    len: usize,
    mut desc: *mut c_void,
    _src: sys::fi_addr_t,
    addr: u64,
    key: u64,
    context: *mut c_void,
) -> isize {
    let v = one_iov(buf, len);
    // SAFETY: one iov and one desc.
    unsafe { do_rma(ep, &v, &mut desc, 1, addr, key, context, 0, true) }
}
unsafe extern "C" fn rma_readv(
    ep: *mut sys::fid_ep,
    iov: *const sys::iovec,
    desc: *mut *mut c_void,
    count: usize,
    _src: sys::fi_addr_t,
    addr: u64,
    key: u64,
    context: *mut c_void,
) -> isize {
    // SAFETY: `count` iovs and descs.
    unsafe { do_rma(ep, iov, desc, count, addr, key, context, 0, true) }
}
/// # Safety
/// `msg` valid with one remote iov.
unsafe fn rma_msg(
    ep: *mut sys::fid_ep,
    msg: *const sys::fi_msg_rma,
    flags: u64,
    read: bool,
) -> isize {
    // SAFETY: the contract above.
    let Some(m) = (unsafe { msg.as_ref() }) else {
        return -FI_EINVAL as isize;
    };
    if m.rma_iov_count != 1 || m.rma_iov.is_null() || flags & sys::FI_REMOTE_CQ_DATA as u64 != 0 {
        return -FI_EINVAL as isize; // rma_iov_limit is 1; no CQ data
    }
    // SAFETY: one remote iov (checked); the local arrays hold iov_count entries.
    unsafe {
        let r = &*m.rma_iov;
        do_rma(
            ep,
            m.msg_iov,
            m.desc,
            m.iov_count,
            r.addr,
            r.key,
            m.context,
            flags,
            read,
        )
    }
}
unsafe extern "C" fn rma_readmsg(
    ep: *mut sys::fid_ep,
    msg: *const sys::fi_msg_rma,
    flags: u64,
) -> isize {
    // SAFETY: fi_readmsg(3).
    unsafe { rma_msg(ep, msg, flags, true) }
}
unsafe extern "C" fn rma_write(
    ep: *mut sys::fid_ep,
    buf: *const c_void,
    len: usize,
    mut desc: *mut c_void,
    _dest: sys::fi_addr_t,
    addr: u64,
    key: u64,
    context: *mut c_void,
) -> isize {
    let v = one_iov(buf, len);
    // SAFETY: one iov and one desc.
    unsafe { do_rma(ep, &v, &mut desc, 1, addr, key, context, 0, false) }
}
unsafe extern "C" fn rma_writev(
    ep: *mut sys::fid_ep,
    iov: *const sys::iovec,
    desc: *mut *mut c_void,
    count: usize,
    _dest: sys::fi_addr_t,
    addr: u64,
    key: u64,
    context: *mut c_void,
) -> isize {
    // SAFETY: `count` iovs and descs.
    unsafe { do_rma(ep, iov, desc, count, addr, key, context, 0, false) }
}
unsafe extern "C" fn rma_writemsg(
    ep: *mut sys::fid_ep,
    msg: *const sys::fi_msg_rma,
    flags: u64,
) -> isize {
    // SAFETY: fi_writemsg(3).
    unsafe { rma_msg(ep, msg, flags, false) }
}
unsafe extern "C" fn rma_inject(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: usize,
    _: sys::fi_addr_t,
    _: u64,
    _: u64,
) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn rma_writedata(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: usize,
    _: *mut c_void,
    _: u64,
    _: sys::fi_addr_t,
    _: u64,
    _: u64,
    _: *mut c_void,
) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn rma_injectdata(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: usize,
    _: u64,
    _: sys::fi_addr_t,
    _: u64,
    _: u64,
) -> isize {
    -FI_ENOSYS as isize
}

// Tagged messages are not offered (`FI_TAGGED` comes from ofi_rxm); every call says so.
static TAGGED_OPS: sys::fi_ops_tagged = sys::fi_ops_tagged {
    size: std::mem::size_of::<sys::fi_ops_tagged>(),
    recv: Some(t_recv),
    recvv: Some(t_recvv),
    recvmsg: Some(t_recvmsg),
    send: Some(t_send),
    sendv: Some(t_sendv),
    sendmsg: Some(t_sendmsg),
    inject: Some(t_inject),
    senddata: Some(t_senddata),
    injectdata: Some(t_injectdata),
};
unsafe extern "C" fn t_recv(
    _: *mut sys::fid_ep,
    _: *mut c_void,
    _: usize,
    _: *mut c_void,
    _: sys::fi_addr_t,
    _: u64,
    _: u64,
    _: *mut c_void,
) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn t_recvv(
    _: *mut sys::fid_ep,
    _: *const sys::iovec,
    _: *mut *mut c_void,
    _: usize,
    _: sys::fi_addr_t,
    _: u64,
    _: u64,
    _: *mut c_void,
) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn t_recvmsg(_: *mut sys::fid_ep, _: *const sys::fi_msg_tagged, _: u64) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn t_send(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: usize,
    _: *mut c_void,
    _: sys::fi_addr_t,
    _: u64,
    _: *mut c_void,
) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn t_sendv(
    _: *mut sys::fid_ep,
    _: *const sys::iovec,
    _: *mut *mut c_void,
    _: usize,
    _: sys::fi_addr_t,
    _: u64,
    _: *mut c_void,
) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn t_sendmsg(_: *mut sys::fid_ep, _: *const sys::fi_msg_tagged, _: u64) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn t_inject(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: usize,
    _: sys::fi_addr_t,
    _: u64,
) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn t_senddata(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: usize,
    _: *mut c_void,
    _: u64,
    _: sys::fi_addr_t,
    _: u64,
    _: *mut c_void,
) -> isize {
    -FI_ENOSYS as isize
}
unsafe extern "C" fn t_injectdata(
    _: *mut sys::fid_ep,
    _: *const c_void,
    _: usize,
    _: u64,
    _: sys::fi_addr_t,
    _: u64,
) -> isize {
    -FI_ENOSYS as isize
}

// ---------------------------------------------------------------------------------------
// Entry point

/// `struct fi_provider` lives in writable memory made once (libfabric keeps a pointer).
struct ProviderPtr(*mut sys::fi_provider);
// SAFETY: the pointer is written once (OnceLock) and only handed to libfabric.
unsafe impl Send for ProviderPtr {}
// SAFETY: as above.
unsafe impl Sync for ProviderPtr {}

static PROVIDER: std::sync::OnceLock<ProviderPtr> = std::sync::OnceLock::new();

/// The provider description `fi_prov_ini` returns.
pub fn provider() -> *mut sys::fi_provider {
    PROVIDER
        .get_or_init(|| {
            ProviderPtr(Box::into_raw(Box::new(sys::fi_provider {
                version: info::PROV_VERSION,
                fi_version: info::FI_API_VERSION,
                context: sys::fi_context {
                    internal: [std::ptr::null_mut(); 4],
                },
                name: c"icnvia".as_ptr(),
                getinfo: Some(prov_getinfo),
                fabric: Some(prov_fabric),
                cleanup: Some(prov_cleanup),
            })))
        })
        .0
}

/// What libfabric calls after `dlopen`ing `libicnvia-fi.so` from `FI_PROVIDER_PATH`.
#[unsafe(no_mangle)]
pub extern "C" fn fi_prov_ini() -> *mut sys::fi_provider {
    provider()
}
