//! `VipConnectWait`, `VipConnectAccept`, `VipConnectReject`, `VipConnectRequest`,
//! `VipDisconnect` (client/server) and `VipConnectPeerRequest`, `VipConnectPeerDone`,
//! `VipConnectPeerWait` (peer to peer), over the rendezvous table of
//! [`crate::rendezvous`].

use std::ffi::c_ulong;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use icn_via::ViaError;

use super::{NetAddr, net_addr, obj, put, put_net_addr};
use crate::codes;
use crate::device::Provider;
use crate::objects::*;
use crate::rendezvous;
use crate::types::*;

/// The host address a rendezvous key uses for `a` on NIC `nic`: its own if 4 bytes, else
/// the NIC's.
fn host_of(nic: &NicCore, a: &NetAddr) -> Ipv4Addr {
    a.ipv4().unwrap_or(Ipv4Addr::from(*nic.host))
}

/// The remote VI's attributes as far as the connection tells them: its reliability level
/// (equal to ours once connected) and transfer size; `Ptag` null and RDMA rights false
/// (not carried by icn-via's connection request).
fn remote_attrs(level: u16, mts: c_ulong) -> ViAttrs {
    ViAttrs {
        reliability: level,
        max_transfer_size: mts,
        ptag: 0,
        rdma_write: false,
        rdma_read: false,
    }
}

/// Waits up to `Timeout` ms for a connection request carrying `LocalAddr`'s
/// discriminator (published in the rendezvous table meanwhile). Fills `RemoteAddr`
/// (this host's address for shm, 0.0.0.0 for tcp — the client's address is not carried —
/// and the discriminator; the caller allocates `NicAddressLen + MaxDiscriminatorLen`
/// bytes after the header, or at least its own discriminator's length) and
/// `RemoteViAttribs` (the client's reliability level), both optional, and returns a
/// connection handle for `VipConnectAccept` / `VipConnectReject`. `VIP_TIMEOUT` when the
/// time passes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipConnectWait(
    nic: VIP_PVOID,
    local: *const VIP_NET_ADDRESS,
    timeout: c_ulong,
    remote: *mut VIP_NET_ADDRESS,
    remote_attrs_out: *mut VIP_VI_ATTRIBUTES,
    conn_out: *mut VIP_PVOID,
) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    // SAFETY: null or a VIP_NET_ADDRESS with its bytes (VIPL contract).
    let Some(local) = (unsafe { net_addr(local) }) else {
        return ret::VIP_INVALID_PARAMETER;
    };
    if conn_out.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    let key = rendezvous::key(n.0.provider, host_of(&n.0, &local), &local.disc);
    let entry = match rendezvous::publish(&key, n.0.via.address()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("vipl: VipConnectWait: rendezvous: {e}");
            return ret::VIP_ERROR_RESOURCE;
        }
    };
    let req = n.0.via.connect_wait(&local.disc, codes::timeout(timeout));
    drop(entry);
    let req = match req {
        Ok(r) => r,
        Err(e) => return codes::from_error(&e),
    };
    let host = match n.0.provider {
        Provider::Shm => *n.0.host,
        Provider::Tcp => [0; 4],
    };
    // SAFETY: out-parameters, null or with room (documented above).
    unsafe {
        put_net_addr(remote, &host, Some(req.discriminator()));
        let ra = remote_attrs(
            codes::service_bit(req.reliability()),
            icn_via::attrs::MAX_TRANSFER_SIZE as c_ulong,
        );
        put(remote_attrs_out, ra.to_c());
    }
    let h = crate::handle::new(ConnObj {
        nic: n.0.clone(),
        key: key.clone(),
        req: Mutex::new(Some(req)),
    });
    // SAFETY: non-null out-pointer.
    unsafe { put(conn_out, h) };
    ret::VIP_SUCCESS
}

/// Connects `ViHandle` (idle, of the same NIC) to the waiting request. Reliability levels
/// must match: otherwise the request is rejected (the client gets `VIP_REJECT`) and this
/// returns `VIP_INVALID_RELIABILITY_LEVEL`. The connection handle is consumed either way.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipConnectAccept(conn: VIP_PVOID, vi: VIP_PVOID) -> VIP_RETURN {
    let c = obj!(ConnObj, conn);
    let v = obj!(ViObj, vi);
    if !Arc::ptr_eq(&c.nic, &v.nic) {
        return ret::VIP_INVALID_PARAMETER;
    }
    if v.via.query().state != icn_via::ViState::Idle {
        return ret::VIP_INVALID_STATE;
    }
    let Some(req) = lock(&c.req).take() else {
        return ret::VIP_INVALID_PARAMETER;
    };
    let mismatch = codes::service_bit(req.reliability()) != lock(&v.attrs).reliability;
    let key = c.key.clone();
    let r = req.accept(&v.via);
    // SAFETY: `c` is not used past this point.
    unsafe { super::destroy::<ConnObj>(conn) };
    match r {
        Ok(()) => {
            if let Some(t) = &v.trace {
                t.connected(&key);
            }
            ret::VIP_SUCCESS
        }
        Err(_) if mismatch => ret::VIP_INVALID_RELIABILITY_LEVEL,
        Err(e) => codes::from_error(&e),
    }
}

/// Rejects the waiting request (the client gets `VIP_REJECT`); consumes the handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipConnectReject(conn: VIP_PVOID) -> VIP_RETURN {
    let c = obj!(ConnObj, conn);
    let req = lock(&c.req).take();
    // SAFETY: `c` is not used past this point.
    unsafe { super::destroy::<ConnObj>(conn) };
    match req.map(|r| r.reject()) {
        Some(Ok(())) | Some(Err(ViaError::Io(_))) => ret::VIP_SUCCESS,
        Some(Err(e)) => codes::from_error(&e),
        None => ret::VIP_INVALID_PARAMETER,
    }
}

/// Dials the server published under `key` until it answers or `deadline` passes: a client
/// may start before its server (VIA's timeout semantics). `Rejected` is final.
fn dial_until(
    nic: &NicCore,
    vi: &icn_via::Vi,
    key: &str,
    disc: &[u8],
    deadline: Option<Instant>,
) -> Result<(), ViaError> {
    if let Err(e) = rendezvous::dir() {
        eprintln!("vipl: VipConnectRequest: rendezvous: {e}");
        return Err(ViaError::ResourceExhausted("rendezvous directory".into()));
    }
    let mut pause = Duration::from_micros(200);
    let mut last = None;
    loop {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if let Some(url) = rendezvous::lookup(key) {
            let t = left.map_or(Duration::from_secs(5), |l| l.min(Duration::from_secs(5)));
            match nic.via.connect_request(vi, &url, disc, Some(t)) {
                Ok(()) => return Ok(()),
                Err(ViaError::Rejected) => return Err(ViaError::Rejected),
                Err(ViaError::InvalidState(s)) => return Err(ViaError::InvalidState(s)),
                Err(e) => last = Some(e),
            }
        }
        if left.is_some_and(|l| l.is_zero()) {
            // Say why the published server could not be reached (a job key that differs, a
            // server of another user): a bare timeout would hide it.
            if let Some(e) = last {
                eprintln!("vipl: VipConnectRequest: {key}: {e}");
            }
            return Err(ViaError::Timeout);
        }
        std::thread::sleep(left.map_or(pause, |l| l.min(pause)));
        pause = (pause * 2).min(Duration::from_millis(10));
    }
}

/// Connects the idle VI to the server waiting with `RemoteAddr`'s discriminator on
/// `RemoteAddr`'s host, waiting up to `Timeout` ms for such a server to appear
/// (`VIP_TIMEOUT`); `VIP_REJECT` if it rejects. `LocalAddr` is not used (the server sees
/// the client's discriminator as its own). `RemoteViAttribs` (optional) gets the
/// reliability level and transfer size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipConnectRequest(
    vi: VIP_PVOID,
    _local: *const VIP_NET_ADDRESS,
    remote: *const VIP_NET_ADDRESS,
    timeout: c_ulong,
    remote_attrs_out: *mut VIP_VI_ATTRIBUTES,
) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    // SAFETY: null or a VIP_NET_ADDRESS with its bytes.
    let Some(remote) = (unsafe { net_addr(remote) }) else {
        return ret::VIP_INVALID_PARAMETER;
    };
    let key = rendezvous::key(v.nic.provider, host_of(&v.nic, &remote), &remote.disc);
    let deadline = codes::timeout(timeout).map(|t| Instant::now() + t);
    match dial_until(&v.nic, &v.via, &key, &remote.disc, deadline) {
        Ok(()) => {
            let a = *lock(&v.attrs);
            // SAFETY: optional out-pointer.
            unsafe {
                put(
                    remote_attrs_out,
                    remote_attrs(a.reliability, a.max_transfer_size).to_c(),
                )
            };
            if let Some(t) = &v.trace {
                t.connected(&key);
            }
            ret::VIP_SUCCESS
        }
        Err(e) => codes::from_error(&e),
    }
}

/// Disconnects: pending descriptors complete flushed, here and at the peer; the VI
/// returns to idle. `VIP_INVALID_STATE` on an idle VI.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipDisconnect(vi: VIP_PVOID) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    match v.via.disconnect() {
        Ok(()) => ret::VIP_SUCCESS,
        Err(e) => codes::from_error(&e),
    }
}

/// Starts a peer-to-peer connection and returns at once: both sides call it, each with
/// its own address as `LocalAddr` and the other's as `RemoteAddr`. The side whose
/// discriminator (then host address) orders first waits for the other, which dials
/// (docs/vipl.md); equal addresses are `VIP_INVALID_PARAMETER`. Completion is polled with
/// `VipConnectPeerDone` or awaited with `VipConnectPeerWait`; `Timeout` bounds the whole
/// attempt.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipConnectPeerRequest(
    vi: VIP_PVOID,
    local: *const VIP_NET_ADDRESS,
    remote: *const VIP_NET_ADDRESS,
    timeout: c_ulong,
) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    // SAFETY: null or VIP_NET_ADDRESSes with their bytes.
    let (Some(local), Some(remote)) = (unsafe { net_addr(local) }, unsafe { net_addr(remote) })
    else {
        return ret::VIP_INVALID_PARAMETER;
    };
    let mut peer = lock(&v.peer);
    if matches!(*peer, Peer::Pending(..)) || v.via.query().state != icn_via::ViState::Idle {
        return ret::VIP_INVALID_STATE;
    }
    let mine = (local.disc.clone(), host_of(&v.nic, &local));
    let theirs = (remote.disc.clone(), host_of(&v.nic, &remote));
    if mine == theirs {
        return ret::VIP_INVALID_PARAMETER;
    }
    let waits = mine < theirs;
    // both sides name the connection by the waiting side's key
    let (w, wh) = if waits {
        (&mine.0, mine.1)
    } else {
        (&theirs.0, theirs.1)
    };
    let trace_key = rendezvous::key(v.nic.provider, wh, w);
    let (nic, via) = (v.nic.clone(), v.via.clone());
    let attrs = *lock(&v.attrs);
    let deadline = codes::timeout(timeout).map(|t| Instant::now() + t);
    let thread = std::thread::spawn(move || {
        let r = if waits {
            let key = rendezvous::key(nic.provider, mine.1, &mine.0);
            match rendezvous::publish(&key, nic.via.address()) {
                Err(e) => {
                    eprintln!("vipl: VipConnectPeerRequest: rendezvous: {e}");
                    Err(ViaError::ResourceExhausted("rendezvous".into()))
                }
                Ok(_entry) => {
                    let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
                    nic.via
                        .connect_wait(&mine.0, left)
                        .and_then(|req| req.accept(&via))
                }
            }
        } else {
            let key = rendezvous::key(nic.provider, theirs.1, &theirs.0);
            dial_until(&nic, &via, &key, &theirs.0, deadline)
        };
        match r {
            Ok(()) => (
                ret::VIP_SUCCESS,
                Some(remote_attrs(attrs.reliability, attrs.max_transfer_size)),
            ),
            Err(e) => (codes::from_error(&e), None),
        }
    });
    *peer = Peer::Pending(thread, trace_key);
    ret::VIP_SUCCESS
}

fn peer_result(v: &ViObj, block: bool, out: *mut VIP_VI_ATTRIBUTES) -> VIP_RETURN {
    let mut peer = lock(&v.peer);
    let (r, a, key) = match std::mem::replace(&mut *peer, Peer::None) {
        Peer::None => return ret::VIP_INVALID_STATE,
        Peer::Pending(t, key) if !block && !t.is_finished() => {
            *peer = Peer::Pending(t, key);
            return ret::VIP_NOT_DONE;
        }
        Peer::Pending(t, key) => {
            let (r, a) = t.join().unwrap_or((ret::VIP_ERROR_RESOURCE, None));
            (r, a, key)
        }
    };
    if r == ret::VIP_SUCCESS
        && let Some(t) = &v.trace
    {
        t.connected(&key);
    }
    if let Some(a) = a {
        // SAFETY: optional out-pointer (VIPL contract).
        unsafe { put(out, a.to_c()) };
    }
    r
}

/// The outcome of `VipConnectPeerRequest`: `VIP_NOT_DONE` while it runs, then its result
/// (`VIP_SUCCESS`, `VIP_TIMEOUT`, `VIP_REJECT`, ...) once; `VIP_INVALID_STATE` with no
/// request pending.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipConnectPeerDone(
    vi: VIP_PVOID,
    out: *mut VIP_VI_ATTRIBUTES,
) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    peer_result(v, false, out)
}

/// As `VipConnectPeerDone`, blocking until the attempt ends.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipConnectPeerWait(
    vi: VIP_PVOID,
    out: *mut VIP_VI_ATTRIBUTES,
) -> VIP_RETURN {
    let v = obj!(ViObj, vi);
    peer_result(v, true, out)
}
