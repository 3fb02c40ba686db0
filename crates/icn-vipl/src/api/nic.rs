//! `VipOpenNic`, `VipCloseNic`, `VipQueryNic`, `VipErrorCallback`,
//! `VipQuerySystemManagementInfo`.

use std::ffi::{c_char, c_ulong, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use super::{cstr, obj, put};
use crate::device::{self, Provider};
use crate::objects::*;
use crate::types::*;

/// shm NICs of this process get distinct endpoint names.
static NEXT_NIC: AtomicU32 = AtomicU32::new(0);

/// Opens the device `DeviceName` (see [`crate::device`] for names and providers).
/// `VIP_INVALID_PARAMETER` for an unknown device, `VIP_ERROR_RESOURCE` if the provider
/// cannot listen.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipOpenNic(name: *const c_char, out: *mut VIP_PVOID) -> VIP_RETURN {
    // SAFETY: `name` is null or a C string (VIPL contract).
    let Some(name) = (unsafe { cstr(name) }) else {
        return ret::VIP_INVALID_PARAMETER;
    };
    if out.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    let forced = std::env::var("ICN_VIPL_PROVIDER").ok();
    let dev = match device::resolve(name, forced.as_deref(), device::interface_address) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("vipl: VipOpenNic: {e}");
            return ret::VIP_INVALID_PARAMETER;
        }
    };
    let url = match dev.provider {
        Provider::Shm => format!(
            "shm://icn-vipl/{}/{}",
            std::process::id(),
            NEXT_NIC.fetch_add(1, Ordering::Relaxed)
        ),
        Provider::Tcp => {
            let choice = std::env::var("ICN_VIPL_TCP_LISTEN").ok();
            match device::listen_address(&dev, choice.as_deref()) {
                Ok(a) => format!("tcp://{a}:0"),
                Err(e) => {
                    eprintln!("vipl: VipOpenNic({name}): {e}");
                    return ret::VIP_INVALID_PARAMETER;
                }
            }
        }
    };
    let via = match icn_via::Nic::open(&url) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("vipl: VipOpenNic({name}): {e}");
            return ret::VIP_ERROR_RESOURCE;
        }
    };
    let mut cname = [0 as c_char; 64];
    for (d, s) in cname.iter_mut().zip(name.bytes().take(63)) {
        *d = s as c_char;
    }
    let core = Arc::new(NicCore {
        via,
        provider: dev.provider,
        host: Box::new(dev.host.octets()),
        name: cname,
        handle: AtomicUsize::new(0),
        errors: ErrorSink::default(),
        ns_open: false.into(),
        regions: Default::default(),
        vis: Default::default(),
    });
    let h = crate::handle::new(NicObj(core.clone()));
    core.handle.store(h as usize, Ordering::Relaxed);
    // SAFETY: `out` is non-null and valid for a write (VIPL contract).
    unsafe { put(out, h) };
    ret::VIP_SUCCESS
}

/// Closes the NIC handle. VIs, CQs and regions still open keep the provider alive until
/// they are destroyed (their handles stay valid); the NIC handle itself is gone.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipCloseNic(nic: VIP_PVOID) -> VIP_RETURN {
    // SAFETY: nothing of the object is referenced past this call.
    if unsafe { super::destroy::<NicObj>(nic) } {
        ret::VIP_SUCCESS
    } else {
        ret::VIP_INVALID_PARAMETER
    }
}

/// Fills `attrs` (limits from icn-via; `LocalNicAddress` points into the NIC object and is
/// valid while the NIC is open).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipQueryNic(nic: VIP_PVOID, attrs: *mut VIP_NIC_ATTRIBUTES) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    let a = n.0.via.attributes();
    let all =
        VIP_SERVICE_UNRELIABLE | VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_RELIABLE_RECEPTION;
    let v = VIP_NIC_ATTRIBUTES {
        Name: n.0.name,
        HardwareVersion: 1,
        ProviderVersion: 1,
        NicAddressLen: 4,
        LocalNicAddress: n.0.host.as_ptr(),
        ThreadSafe: VIP_TRUE,
        MaxDiscriminatorLen: a.max_discriminator_len as u16,
        MaxRegisterBytes: a.max_register_bytes as c_ulong,
        MaxRegisterRegions: u32::MAX as c_ulong,
        MaxRegisterBlockBytes: a.max_register_bytes as c_ulong,
        MaxVI: u32::MAX as c_ulong,
        MaxDescriptorsPerQueue: a.max_queue_depth as c_ulong,
        MaxSegmentsPerDesc: a.max_segments_per_desc as c_ulong,
        MaxCQ: u32::MAX as c_ulong,
        MaxCQEntries: 1 << 20,
        MaxTransferSize: a.max_transfer_size as c_ulong,
        NativeMTU: match n.0.provider {
            Provider::Shm => 256 << 10,
            Provider::Tcp => 64 << 10,
        },
        MaxPtags: u32::MAX as c_ulong,
        ReliabilityLevelSupport: all,
        RDMAReadSupport: VIP_SERVICE_RELIABLE_DELIVERY | VIP_SERVICE_RELIABLE_RECEPTION,
    };
    // SAFETY: `attrs` is null or valid for a write (VIPL contract).
    if unsafe { put(attrs, v) } {
        ret::VIP_SUCCESS
    } else {
        ret::VIP_INVALID_PARAMETER
    }
}

/// Registers `handler` (null: the default handler, which prints to standard error) for the
/// NIC's asynchronous errors: connection lost, descriptors that completed with a
/// protection, RDMA protection, remote descriptor or transport error, descriptors refused
/// at post, CQ overflow (`codes::async_error`, docs/vipl.md). Handlers run inside the
/// consumer's own VIPL calls (or a notify thread), never concurrently with each other for
/// one VI.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipErrorCallback(
    nic: VIP_PVOID,
    context: VIP_PVOID,
    handler: Option<ErrorHandler>,
) -> VIP_RETURN {
    let n = obj!(NicObj, nic);
    n.0.errors.set(handler.map(|h| (context as usize, h)));
    ret::VIP_SUCCESS
}

/// `VIP_SMI_AUTODISCOVERY`: no fabric to discover (NumberOfHops and NumAdAddrs 0); any
/// other `InfoType` is `VIP_INVALID_PARAMETER`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn VipQuerySystemManagementInfo(
    nic: VIP_PVOID,
    info_type: c_ulong,
    info: *mut c_void,
) -> VIP_RETURN {
    let _ = obj!(NicObj, nic);
    if info_type != VIP_SMI_AUTODISCOVERY || info.is_null() {
        return ret::VIP_INVALID_PARAMETER;
    }
    let l = info as *mut VIP_AUTODISCOVERY_LIST;
    // SAFETY: for VIP_SMI_AUTODISCOVERY the caller passes a VIP_AUTODISCOVERY_LIST
    // (VIPL contract); its address array is left alone as no entries are returned.
    unsafe {
        (&raw mut (*l).NumberOfHops).write_unaligned(0);
        (&raw mut (*l).NumAdAddrs).write_unaligned(0);
    }
    ret::VIP_SUCCESS
}
