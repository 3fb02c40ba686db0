//! The C types of `vipl.h`, `#[repr(C)]`, field for field (VIA 1.0, chapter "VIPL data
//! types"). `tests/layout.rs` compiles the header and checks every size and offset here
//! against the C compiler's.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_ulong, c_void};

pub type VIP_RETURN = c_int;
pub type VIP_BOOLEAN = c_int;
pub type VIP_PVOID = *mut c_void;
pub type VIP_MEM_HANDLE = u32;
pub type VIP_RELIABILITY_LEVEL = u16;

pub const VIP_TRUE: VIP_BOOLEAN = 1;
pub const VIP_FALSE: VIP_BOOLEAN = 0;
pub const VIP_INFINITE: c_ulong = 0xFFFF_FFFF;

/// Return codes (`VIP_RETURN`), in the specification's order.
pub mod ret {
    use super::VIP_RETURN;
    pub const VIP_SUCCESS: VIP_RETURN = 0;
    pub const VIP_NOT_DONE: VIP_RETURN = 1;
    pub const VIP_INVALID_PARAMETER: VIP_RETURN = 2;
    pub const VIP_ERROR_RESOURCE: VIP_RETURN = 3;
    pub const VIP_TIMEOUT: VIP_RETURN = 4;
    pub const VIP_REJECT: VIP_RETURN = 5;
    pub const VIP_INVALID_RELIABILITY_LEVEL: VIP_RETURN = 6;
    pub const VIP_INVALID_MTU: VIP_RETURN = 7;
    pub const VIP_INVALID_QOS: VIP_RETURN = 8;
    pub const VIP_INVALID_PTAG: VIP_RETURN = 9;
    pub const VIP_INVALID_RDMAREAD: VIP_RETURN = 10;
    pub const VIP_DESCRIPTOR_ERROR: VIP_RETURN = 11;
    pub const VIP_INVALID_STATE: VIP_RETURN = 12;
    pub const VIP_ERROR_NAMESERVICE: VIP_RETURN = 13;
    pub const VIP_NO_MATCH: VIP_RETURN = 14;
}

pub const VIP_SERVICE_UNRELIABLE: u16 = 0x01;
pub const VIP_SERVICE_RELIABLE_DELIVERY: u16 = 0x02;
pub const VIP_SERVICE_RELIABLE_RECEPTION: u16 = 0x04;

pub const VIP_DESCRIPTOR_ALIGNMENT: usize = 64;

pub const VIP_CONTROL_OP_SENDRECV: u16 = 0x0000;
pub const VIP_CONTROL_OP_RDMAWRITE: u16 = 0x0001;
pub const VIP_CONTROL_OP_RDMAREAD: u16 = 0x0002;
pub const VIP_CONTROL_OP_MASK: u16 = 0x0003;
pub const VIP_CONTROL_IMMEDIATE: u16 = 0x0004;
pub const VIP_CONTROL_QFENCE: u16 = 0x0008;
pub const VIP_CONTROL_RESERVED: u16 = 0xFFF0;

pub const VIP_STATUS_DONE: u32 = 0x0000_0001;
pub const VIP_STATUS_FORMAT_ERROR: u32 = 0x0000_0002;
pub const VIP_STATUS_PROTECTION_ERROR: u32 = 0x0000_0004;
pub const VIP_STATUS_LENGTH_ERROR: u32 = 0x0000_0008;
pub const VIP_STATUS_PARTIAL_ERROR: u32 = 0x0000_0010;
pub const VIP_STATUS_DESC_FLUSHED_ERROR: u32 = 0x0000_0020;
pub const VIP_STATUS_TRANSPORT_ERROR: u32 = 0x0000_0040;
pub const VIP_STATUS_RDMA_PROT_ERROR: u32 = 0x0000_0080;
pub const VIP_STATUS_REMOTE_DESC_ERROR: u32 = 0x0000_0100;
pub const VIP_STATUS_OP_SEND: u32 = 0x0000_0000;
pub const VIP_STATUS_OP_RECEIVE: u32 = 0x0001_0000;
pub const VIP_STATUS_OP_RDMA_WRITE: u32 = 0x0002_0000;
pub const VIP_STATUS_OP_REMOTE_RDMA_WRITE: u32 = 0x0003_0000;
pub const VIP_STATUS_OP_RDMA_READ: u32 = 0x0004_0000;
pub const VIP_STATUS_IMMEDIATE: u32 = 0x0008_0000;

pub const VIP_SMI_AUTODISCOVERY: c_ulong = 1;

/// `VIP_VI_STATE`.
pub const VIP_STATE_IDLE: c_int = 0;
pub const VIP_STATE_CONNECTED: c_int = 1;
pub const VIP_STATE_CONNECT_PENDING: c_int = 2;
pub const VIP_STATE_ERROR: c_int = 3;

/// `VIP_ERROR_CODE`.
pub mod err {
    use std::ffi::c_int;
    pub const VIP_ERROR_POST_DESC: c_int = 0;
    pub const VIP_ERROR_CONN_LOST: c_int = 1;
    pub const VIP_ERROR_RECVQ_EMPTY: c_int = 2;
    pub const VIP_ERROR_VI_OVERRUN: c_int = 3;
    pub const VIP_ERROR_RDMAW_PROT: c_int = 4;
    pub const VIP_ERROR_RDMAW_DATA: c_int = 5;
    pub const VIP_ERROR_RDMAW_ABORT: c_int = 6;
    pub const VIP_ERROR_RDMAR_PROT: c_int = 7;
    pub const VIP_ERROR_COMP_PROT: c_int = 8;
    pub const VIP_ERROR_RDMA_TRANSPORT: c_int = 9;
    pub const VIP_ERROR_CATASTROPHIC: c_int = 10;
    /// `VIP_RESOURCE_CODE`.
    pub const VIP_RESOURCE_NIC: c_int = 0;
    pub const VIP_RESOURCE_VI: c_int = 1;
    pub const VIP_RESOURCE_CQ: c_int = 2;
    pub const VIP_RESOURCE_DESCRIPTOR: c_int = 3;
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VIP_NET_ADDRESS {
    pub HostAddressLen: u16,
    pub DiscriminatorLen: u16,
    pub HostAddress: [u8; 1],
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VIP_NIC_ATTRIBUTES {
    pub Name: [c_char; 64],
    pub HardwareVersion: c_ulong,
    pub ProviderVersion: c_ulong,
    pub NicAddressLen: u16,
    pub LocalNicAddress: *const u8,
    pub ThreadSafe: VIP_BOOLEAN,
    pub MaxDiscriminatorLen: u16,
    pub MaxRegisterBytes: c_ulong,
    pub MaxRegisterRegions: c_ulong,
    pub MaxRegisterBlockBytes: c_ulong,
    pub MaxVI: c_ulong,
    pub MaxDescriptorsPerQueue: c_ulong,
    pub MaxSegmentsPerDesc: c_ulong,
    pub MaxCQ: c_ulong,
    pub MaxCQEntries: c_ulong,
    pub MaxTransferSize: c_ulong,
    pub NativeMTU: c_ulong,
    pub MaxPtags: c_ulong,
    pub ReliabilityLevelSupport: VIP_RELIABILITY_LEVEL,
    pub RDMAReadSupport: VIP_RELIABILITY_LEVEL,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VIP_CONTROL_SEGMENT {
    pub Next: u64,
    pub NextHandle: VIP_MEM_HANDLE,
    pub SegCount: u16,
    pub Control: u16,
    pub Reserved: u32,
    pub ImmediateData: u32,
    pub Length: u32,
    pub Status: u32,
}

/// A data segment; an address segment has the same layout with `Length` reserved.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VIP_DATA_SEGMENT {
    pub Data: u64,
    pub Handle: VIP_MEM_HANDLE,
    pub Length: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VIP_DESCRIPTOR {
    pub CS: VIP_CONTROL_SEGMENT,
    pub DS: [VIP_DATA_SEGMENT; 2],
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VIP_VI_ATTRIBUTES {
    pub ReliabilityLevel: VIP_RELIABILITY_LEVEL,
    pub MaxTransferSize: c_ulong,
    pub QoS: VIP_PVOID,
    pub Ptag: VIP_PVOID,
    pub EnableRdmaWrite: VIP_BOOLEAN,
    pub EnableRdmaRead: VIP_BOOLEAN,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VIP_MEM_ATTRIBUTES {
    pub Ptag: VIP_PVOID,
    pub EnableRdmaWrite: VIP_BOOLEAN,
    pub EnableRdmaRead: VIP_BOOLEAN,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VIP_ERROR_DESCRIPTOR {
    pub NicHandle: VIP_PVOID,
    pub ViHandle: VIP_PVOID,
    pub CQHandle: VIP_PVOID,
    pub DescriptorPtr: *mut VIP_DESCRIPTOR,
    pub OpCode: c_ulong,
    pub ResourceCode: c_int,
    pub ErrorCode: c_int,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VIP_AUTODISCOVERY_LIST {
    pub NumberOfHops: c_ulong,
    pub ADAddrArray: *mut *mut VIP_NET_ADDRESS,
    pub NumAdAddrs: c_ulong,
}

pub type ErrorHandler = unsafe extern "C" fn(VIP_PVOID, *mut VIP_ERROR_DESCRIPTOR);
pub type DescHandler = unsafe extern "C" fn(VIP_PVOID, VIP_PVOID, VIP_PVOID, *mut VIP_DESCRIPTOR);
pub type CqHandler = unsafe extern "C" fn(VIP_PVOID, VIP_PVOID, VIP_PVOID, VIP_BOOLEAN);
