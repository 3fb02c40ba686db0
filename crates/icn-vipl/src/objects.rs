//! The objects behind the handles, and the NIC's asynchronous error reporting.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_ulong, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;

use crate::device::Provider;
use crate::handle::Kind;
pub use crate::regions::{Region, RegionCache, Regions};
use crate::types::*;

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What an open NIC shares with its VIs, CQs and helper threads.
pub struct NicCore {
    pub via: icn_via::Nic,
    pub provider: Provider,
    /// `LocalNicAddress` (IPv4, 4 bytes); `VipQueryNic` hands out a pointer to it.
    pub host: Box<[u8; 4]>,
    pub name: [c_char; 64],
    /// The NIC's handle (for callbacks); set right after the handle is made.
    pub handle: AtomicUsize,
    pub errors: ErrorSink,
    pub ns_open: AtomicBool,
    pub regions: Regions,
    /// VI handles by icn-via VI id (CQ entries name VIs by id).
    pub vis: Mutex<HashMap<u32, usize>>,
}

pub struct NicObj(pub Arc<NicCore>);
impl Kind for NicObj {
    const TAG: u64 = 0x5649_504C_4E49_4301; // "VIPLNIC"
}

pub struct PtagObj {
    pub nic: Arc<NicCore>,
    pub ptag: icn_via::Ptag,
    /// Regions and VIs using it (it cannot be destroyed while used).
    pub users: AtomicUsize,
}
impl Kind for PtagObj {
    const TAG: u64 = 0x5649_504C_5054_4102;
}

pub struct CqObj {
    pub nic: Arc<NicCore>,
    pub cq: icn_via::CompletionQueue,
    /// Work queues attached (it cannot be destroyed while any is).
    pub members: AtomicUsize,
    pub notify: Mutex<Vec<Notifier>>,
}
impl Kind for CqObj {
    const TAG: u64 = 0x5649_504C_4351_0003;
}

/// A VI's attributes as the C side set them.
#[derive(Debug, Clone, Copy)]
pub struct ViAttrs {
    pub reliability: u16,
    pub max_transfer_size: c_ulong,
    pub ptag: usize,
    pub rdma_write: bool,
    pub rdma_read: bool,
}

impl ViAttrs {
    pub fn to_c(self) -> VIP_VI_ATTRIBUTES {
        VIP_VI_ATTRIBUTES {
            ReliabilityLevel: self.reliability,
            MaxTransferSize: self.max_transfer_size,
            QoS: std::ptr::null_mut(),
            Ptag: self.ptag as *mut c_void,
            EnableRdmaWrite: self.rdma_write.into(),
            EnableRdmaRead: self.rdma_read.into(),
        }
    }
}

/// What a peer-to-peer connection attempt is doing.
pub enum Peer {
    None,
    /// The attempt's thread, and the connection's key (for traces).
    Pending(JoinHandle<(VIP_RETURN, Option<ViAttrs>)>, String),
}

/// A helper thread of a notify call; stopped when its VI or CQ is destroyed.
pub struct Notifier {
    pub stop: Arc<AtomicBool>,
    pub thread: Option<JoinHandle<()>>,
}

impl Drop for Notifier {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub struct ViObj {
    pub nic: Arc<NicCore>,
    pub via: Arc<icn_via::Vi>,
    pub attrs: Mutex<ViAttrs>,
    /// `attrs.ptag`, readable without the lock (checked on every post).
    pub ptag: AtomicUsize,
    /// The region the last descriptor posted on this VI lay in.
    pub region_cache: RegionCache,
    pub send_cq: usize,
    pub recv_cq: usize,
    pub peer: Mutex<Peer>,
    pub notify: Mutex<Vec<Notifier>>,
    pub trace: Option<Arc<crate::trace::Recorder>>,
}
impl Kind for ViObj {
    const TAG: u64 = 0x5649_504C_5649_0004;
}

pub struct ConnObj {
    pub nic: Arc<NicCore>,
    /// The rendezvous key the request came through (names the connection in traces).
    pub key: String,
    pub req: Mutex<Option<icn_via::ConnRequest>>,
}
impl Kind for ConnObj {
    const TAG: u64 = 0x5649_504C_434F_0005;
}

/// A NIC's asynchronous error handler (`VipErrorCallback`).
#[derive(Default)]
pub struct ErrorSink {
    handler: Mutex<Option<(usize, ErrorHandler)>>,
}

/// One asynchronous error.
pub struct AsyncError {
    pub vi: usize,
    pub cq: usize,
    pub desc: *mut VIP_DESCRIPTOR,
    pub resource: c_int,
    pub code: c_int,
}

impl ErrorSink {
    pub fn set(&self, h: Option<(usize, ErrorHandler)>) {
        *lock(&self.handler) = h;
    }

    /// Calls the consumer's handler with `e`, or, with none registered, the default one,
    /// which prints the error on standard error (as the specification's default handler
    /// logs it).
    pub fn report(&self, nic: usize, e: AsyncError) {
        let mut d = VIP_ERROR_DESCRIPTOR {
            NicHandle: nic as *mut c_void,
            ViHandle: e.vi as *mut c_void,
            CQHandle: e.cq as *mut c_void,
            DescriptorPtr: e.desc,
            OpCode: 0,
            ResourceCode: e.resource,
            ErrorCode: e.code,
        };
        let h = *lock(&self.handler);
        match h {
            // SAFETY: the consumer registered `f` with `VipErrorCallback` for exactly this
            // call: its context and a pointer to an error descriptor valid for the call.
            Some((ctx, f)) => unsafe { f(ctx as *mut c_void, &mut d) },
            None => eprintln!(
                "vipl: asynchronous error {} (resource {}) on NIC {nic:#x}, VI {:#x}, descriptor {:p}",
                e.code, e.resource, e.vi, e.desc
            ),
        }
    }
}

pub fn read_lock<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

pub fn write_lock<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}
