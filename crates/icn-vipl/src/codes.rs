//! What the C interface's words mean for icn-via, and back (sans-IO, table-tested):
//! return codes from errors, the status word from a completion, descriptors from their
//! control and data segments, reliability bits, timeouts.

use std::ffi::{c_int, c_ulong};
use std::time::Duration;

use icn_via::{
    CompletedOp, Completion, CompletionStatus, Descriptor, MemHandle, Op, Reliability, RemoteAddr,
    Segment, Segments, ViaError,
};

use crate::types::*;

/// The `VIP_RETURN` for an icn-via error.
///
/// | icn-via | VIPL |
/// |---|---|
/// | `InvalidParameter`, `Protection` | `VIP_INVALID_PARAMETER` |
/// | `Descriptor` | `VIP_DESCRIPTOR_ERROR` |
/// | `Timeout` | `VIP_TIMEOUT` |
/// | `Rejected` | `VIP_REJECT` |
/// | `InvalidState` | `VIP_INVALID_STATE` |
/// | `ResourceExhausted`, `Io` | `VIP_ERROR_RESOURCE` |
/// | `ConnectionLost` | `VIP_INVALID_STATE` (the VI is in the error state; the error callback got `VIP_ERROR_CONN_LOST`) |
pub fn from_error(e: &ViaError) -> VIP_RETURN {
    match e {
        ViaError::InvalidParameter(_) | ViaError::Protection(_) => ret::VIP_INVALID_PARAMETER,
        ViaError::Descriptor(_) => ret::VIP_DESCRIPTOR_ERROR,
        ViaError::Timeout => ret::VIP_TIMEOUT,
        ViaError::Rejected => ret::VIP_REJECT,
        ViaError::InvalidState(_) | ViaError::ConnectionLost(_) => ret::VIP_INVALID_STATE,
        ViaError::ResourceExhausted(_) | ViaError::Io(_) => ret::VIP_ERROR_RESOURCE,
    }
}

/// The error bit of a completion status.
pub fn status_bit(s: CompletionStatus) -> u32 {
    match s {
        CompletionStatus::Success => 0,
        CompletionStatus::FormatError => VIP_STATUS_FORMAT_ERROR,
        CompletionStatus::ProtectionError => VIP_STATUS_PROTECTION_ERROR,
        CompletionStatus::LengthError => VIP_STATUS_LENGTH_ERROR,
        CompletionStatus::PartialPacket => VIP_STATUS_PARTIAL_ERROR,
        CompletionStatus::Flushed => VIP_STATUS_DESC_FLUSHED_ERROR,
        CompletionStatus::TransportError => VIP_STATUS_TRANSPORT_ERROR,
        CompletionStatus::RdmaProtectionError => VIP_STATUS_RDMA_PROT_ERROR,
        CompletionStatus::RemoteDescriptorError => VIP_STATUS_REMOTE_DESC_ERROR,
    }
}

/// The status word a completed descriptor gets: done, the error bit, the operation, and
/// whether immediate data arrived. A receive consumed by an RDMA write with immediate data
/// reports `VIP_STATUS_OP_REMOTE_RDMA_WRITE`.
pub fn status_word(c: &Completion) -> u32 {
    let op = match c.op {
        CompletedOp::Send => VIP_STATUS_OP_SEND,
        CompletedOp::Recv if c.by_rdma_write => VIP_STATUS_OP_REMOTE_RDMA_WRITE,
        CompletedOp::Recv => VIP_STATUS_OP_RECEIVE,
        CompletedOp::RdmaWrite => VIP_STATUS_OP_RDMA_WRITE,
        CompletedOp::RdmaRead => VIP_STATUS_OP_RDMA_READ,
    };
    let imm = if c.immediate.is_some() {
        VIP_STATUS_IMMEDIATE
    } else {
        0
    };
    VIP_STATUS_DONE | status_bit(c.status) | op | imm
}

/// The asynchronous error (`VIP_ERROR_CODE`) a failed completion is reported as through
/// the NIC's error callback, if any.
///
/// | status | error code |
/// |---|---|
/// | protection error | `VIP_ERROR_COMP_PROT` |
/// | RDMA protection error on a write / read | `VIP_ERROR_RDMAW_PROT` / `VIP_ERROR_RDMAR_PROT` |
/// | remote descriptor error (the peer had no receive, or one too short) | `VIP_ERROR_RECVQ_EMPTY` |
/// | transport error | `VIP_ERROR_RDMA_TRANSPORT` |
/// | format, length, partial, flushed, success | none (the status word says it all) |
pub fn async_error(c: &Completion) -> Option<c_int> {
    match (c.status, c.op) {
        (CompletionStatus::ProtectionError, _) => Some(err::VIP_ERROR_COMP_PROT),
        (CompletionStatus::RdmaProtectionError, CompletedOp::RdmaRead) => {
            Some(err::VIP_ERROR_RDMAR_PROT)
        }
        (CompletionStatus::RdmaProtectionError, _) => Some(err::VIP_ERROR_RDMAW_PROT),
        (CompletionStatus::RemoteDescriptorError, _) => Some(err::VIP_ERROR_RECVQ_EMPTY),
        (CompletionStatus::TransportError, _) => Some(err::VIP_ERROR_RDMA_TRANSPORT),
        _ => None,
    }
}

/// Why a descriptor could not be built (it completes with `VIP_STATUS_FORMAT_ERROR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `VIP_CONTROL_OP_RESERVED`, or an RDMA operation on the receive queue.
    Operation,
    /// An RDMA descriptor without its address segment.
    NoAddressSegment,
    /// More segments than `MaxSegmentsPerDesc` (+1 address segment for RDMA).
    TooManySegments,
    /// Reserved control bits set.
    ReservedBits,
}

/// Most data segments per descriptor (`MaxSegmentsPerDesc`).
pub const MAX_DATA_SEGMENTS: usize = icn_via::attrs::MAX_SEGMENTS;

/// Builds the icn-via descriptor for a VIPL one: `control` and `immediate` from its control
/// segment, `segs` its `SegCount` segments (for RDMA the first is the address segment), on
/// the receive queue or not; `id` identifies it in its completion. Addresses are virtual
/// addresses (regions are registered by address, [`icn_via::Nic::register_addr`]).
///
/// On the receive queue the operation must be send/receive; the immediate bit is ignored
/// there (it is an output of a receive, and programs reuse one descriptor for both queues).
#[inline(always)]
pub fn decode(
    control: u16,
    immediate: u32,
    segs: &[VIP_DATA_SEGMENT],
    recv_queue: bool,
    id: u64,
) -> Result<Descriptor, Format> {
    // Nearly every descriptor is a send or receive of one segment: built in a few
    // instructions (the general decoding cost ~90 a post: two posts a message were a
    // quarter of the C layer's whole cost then). Both give the same descriptor
    // (`the_one_segment_path_decodes_as_the_general_one`).
    if let Some(s) = plain_segment(control, segs) {
        let seg = Segment::new(MemHandle::from_raw(s.Handle), s.Data, s.Length);
        let op = if recv_queue { Op::Recv } else { Op::Send };
        return Ok(plain(
            op,
            seg,
            immediate_of(control, immediate, recv_queue),
            id,
        ));
    }
    decode_general(control, immediate, segs, recv_queue, id)
}

/// The one data segment of a send or receive descriptor (operation send/receive, no
/// reserved bits; immediate data and the queue fence allowed), if that is what it is.
#[inline(always)]
pub fn plain_segment(control: u16, segs: &[VIP_DATA_SEGMENT]) -> Option<&VIP_DATA_SEGMENT> {
    match (
        segs,
        control & !(VIP_CONTROL_IMMEDIATE | VIP_CONTROL_QFENCE),
    ) {
        ([s], VIP_CONTROL_OP_SENDRECV) => Some(s),
        _ => None,
    }
}

/// The immediate data a descriptor carries: only sends and RDMA writes do (on the receive
/// queue the bit is ignored: it is an output of a receive there).
#[inline(always)]
pub fn immediate_of(control: u16, immediate: u32, recv_queue: bool) -> Option<u32> {
    (control & VIP_CONTROL_IMMEDIATE != 0 && !recv_queue).then_some(immediate)
}

/// The descriptor of [`plain_segment`]'s case.
#[inline(always)]
pub fn plain(op: Op, seg: Segment, immediate: Option<u32>, id: u64) -> Descriptor {
    Descriptor {
        op,
        segments: Segments::from_buf_and_len([seg, seg], 1),
        immediate,
        id,
    }
}

/// [`decode`] for every descriptor.
#[inline(never)]
fn decode_general(
    control: u16,
    immediate: u32,
    segs: &[VIP_DATA_SEGMENT],
    recv_queue: bool,
    id: u64,
) -> Result<Descriptor, Format> {
    if control & VIP_CONTROL_RESERVED != 0 {
        return Err(Format::ReservedBits);
    }
    // Straight into the descriptor's inline segment list: no allocation per post.
    let local = |s: &[VIP_DATA_SEGMENT]| -> Result<Segments, Format> {
        if s.len() > MAX_DATA_SEGMENTS {
            return Err(Format::TooManySegments);
        }
        let seg =
            |d: &VIP_DATA_SEGMENT| Segment::new(MemHandle::from_raw(d.Handle), d.Data, d.Length);
        // One or two segments (nearly every descriptor) fill the inline buffer at once:
        // pushing checks the capacity per segment, a tenth of a post's cost.
        Ok(match s {
            [a] => Segments::from_buf_and_len([seg(a), seg(a)], 1),
            [a, b] => Segments::from_buf([seg(a), seg(b)]),
            _ => s.iter().map(seg).collect(),
        })
    };
    let data = |s: &[VIP_DATA_SEGMENT]| local(s);
    let remote = |s: &[VIP_DATA_SEGMENT]| -> Result<(RemoteAddr, Segments), Format> {
        let (a, rest) = s.split_first().ok_or(Format::NoAddressSegment)?;
        let r = RemoteAddr {
            handle: MemHandle::from_raw(a.Handle),
            offset: a.Data,
        };
        Ok((r, local(rest)?))
    };
    let op = control & VIP_CONTROL_OP_MASK;
    // The descriptor is built whole (its fields are public): the constructors would collect
    // the segments a second time.
    let (op, segments) = match (op, recv_queue) {
        (VIP_CONTROL_OP_SENDRECV, true) => (Op::Recv, data(segs)?),
        (VIP_CONTROL_OP_SENDRECV, false) => (Op::Send, data(segs)?),
        (VIP_CONTROL_OP_RDMAWRITE, false) => {
            let (r, d) = remote(segs)?;
            (Op::RdmaWrite(r), d)
        }
        (VIP_CONTROL_OP_RDMAREAD, false) => {
            let (r, d) = remote(segs)?;
            (Op::RdmaRead(r), d)
        }
        _ => return Err(Format::Operation),
    };
    Ok(Descriptor {
        op,
        segments,
        immediate: immediate_of(control, immediate, recv_queue),
        id,
    })
}

/// The reliability level of exactly one `VIP_SERVICE_*` bit.
pub fn reliability(level: u16) -> Option<Reliability> {
    match level {
        VIP_SERVICE_UNRELIABLE => Some(Reliability::Unreliable),
        VIP_SERVICE_RELIABLE_DELIVERY => Some(Reliability::ReliableDelivery),
        VIP_SERVICE_RELIABLE_RECEPTION => Some(Reliability::ReliableReception),
        _ => None,
    }
}

/// The `VIP_SERVICE_*` bit of a reliability level.
pub fn service_bit(r: Reliability) -> u16 {
    match r {
        Reliability::Unreliable => VIP_SERVICE_UNRELIABLE,
        Reliability::ReliableDelivery => VIP_SERVICE_RELIABLE_DELIVERY,
        Reliability::ReliableReception => VIP_SERVICE_RELIABLE_RECEPTION,
    }
}

/// A VIPL timeout (milliseconds; `VIP_INFINITE` or more: none).
pub fn timeout(ms: c_ulong) -> Option<Duration> {
    (ms < VIP_INFINITE).then(|| Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(addr: u64, handle: u32, len: u32) -> VIP_DATA_SEGMENT {
        VIP_DATA_SEGMENT {
            Data: addr,
            Handle: handle,
            Length: len,
        }
    }

    #[test]
    fn every_error_maps_to_the_return_code_of_the_table() {
        let io = std::io::Error::other("x");
        let rows = [
            (
                ViaError::InvalidParameter("".into()),
                ret::VIP_INVALID_PARAMETER,
            ),
            (ViaError::Protection("".into()), ret::VIP_INVALID_PARAMETER),
            (ViaError::Descriptor("".into()), ret::VIP_DESCRIPTOR_ERROR),
            (ViaError::Timeout, ret::VIP_TIMEOUT),
            (ViaError::Rejected, ret::VIP_REJECT),
            (ViaError::InvalidState("".into()), ret::VIP_INVALID_STATE),
            (ViaError::ConnectionLost("".into()), ret::VIP_INVALID_STATE),
            (
                ViaError::ResourceExhausted("".into()),
                ret::VIP_ERROR_RESOURCE,
            ),
            (ViaError::Io(io), ret::VIP_ERROR_RESOURCE),
        ];
        for (e, code) in rows {
            assert_eq!(from_error(&e), code, "{e}");
        }
    }

    #[test]
    fn status_words_carry_done_the_error_bit_the_operation_and_immediate() {
        let d = Descriptor::send([]);
        let mut c = Completion {
            status: CompletionStatus::Success,
            op: CompletedOp::Send,
            length: 0,
            immediate: None,
            desc: d,
            by_rdma_write: false,
        };
        assert_eq!(status_word(&c), VIP_STATUS_DONE);
        c.status = CompletionStatus::Flushed;
        assert_eq!(
            status_word(&c),
            VIP_STATUS_DONE | VIP_STATUS_DESC_FLUSHED_ERROR
        );
        c.status = CompletionStatus::Success;
        c.op = CompletedOp::Recv;
        c.immediate = Some(7);
        assert_eq!(
            status_word(&c),
            VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE | VIP_STATUS_IMMEDIATE
        );
        c.by_rdma_write = true;
        assert_eq!(
            status_word(&c),
            VIP_STATUS_DONE | VIP_STATUS_OP_REMOTE_RDMA_WRITE | VIP_STATUS_IMMEDIATE
        );
        c.op = CompletedOp::RdmaRead;
        c.immediate = None;
        c.status = CompletionStatus::RdmaProtectionError;
        assert_eq!(
            status_word(&c),
            VIP_STATUS_DONE | VIP_STATUS_RDMA_PROT_ERROR | VIP_STATUS_OP_RDMA_READ
        );
        assert_eq!(async_error(&c), Some(err::VIP_ERROR_RDMAR_PROT));
        c.op = CompletedOp::RdmaWrite;
        assert_eq!(
            status_word(&c) & VIP_STATUS_OP_RDMA_WRITE,
            VIP_STATUS_OP_RDMA_WRITE
        );
        assert_eq!(async_error(&c), Some(err::VIP_ERROR_RDMAW_PROT));
        // every status has its own bit, inside VIP_STATUS_ERROR_MASK (0x1FE)
        let all = [
            CompletionStatus::FormatError,
            CompletionStatus::ProtectionError,
            CompletionStatus::LengthError,
            CompletionStatus::PartialPacket,
            CompletionStatus::Flushed,
            CompletionStatus::TransportError,
            CompletionStatus::RdmaProtectionError,
            CompletionStatus::RemoteDescriptorError,
        ];
        let mut seen = 0;
        for s in all {
            let b = status_bit(s);
            assert_eq!(b.count_ones(), 1);
            assert_eq!(b & 0x1FE, b);
            assert_eq!(seen & b, 0);
            seen |= b;
        }
        assert_eq!(seen, 0x1FE);
    }

    #[test]
    fn descriptors_decode_by_operation_queue_and_segments() {
        let s = [seg(0x1000, 3, 8), seg(0x2000, 3, 4)];
        let d = decode(VIP_CONTROL_OP_SENDRECV, 0, &s, false, 9).unwrap();
        assert_eq!(d.op, icn_via::Op::Send);
        assert_eq!(d.segments.len(), 2);
        assert_eq!(d.segments[1].offset, 0x2000);
        assert_eq!(d.total_len(), 12);
        assert_eq!(d.id, 9);
        assert_eq!(d.immediate, None);
        let d = decode(
            VIP_CONTROL_OP_SENDRECV | VIP_CONTROL_IMMEDIATE,
            5,
            &s,
            false,
            0,
        )
        .unwrap();
        assert_eq!(d.immediate, Some(5));
        // immediate is ignored on the receive queue
        let d = decode(
            VIP_CONTROL_OP_SENDRECV | VIP_CONTROL_IMMEDIATE,
            5,
            &s,
            true,
            0,
        )
        .unwrap();
        assert_eq!((d.op, d.immediate), (icn_via::Op::Recv, None));
        // RDMA: the first segment is the address segment
        let d = decode(VIP_CONTROL_OP_RDMAWRITE, 0, &s, false, 0).unwrap();
        assert_eq!(
            d.op,
            icn_via::Op::RdmaWrite(RemoteAddr {
                handle: MemHandle::from_raw(3),
                offset: 0x1000
            })
        );
        assert_eq!(d.segments.len(), 1);
        let d = decode(VIP_CONTROL_OP_RDMAREAD, 0, &s, false, 0).unwrap();
        assert!(matches!(d.op, icn_via::Op::RdmaRead(_)));
        // format errors
        assert_eq!(
            decode(VIP_CONTROL_OP_RDMAWRITE, 0, &[], false, 0),
            Err(Format::NoAddressSegment)
        );
        assert_eq!(decode(3, 0, &s, false, 0), Err(Format::Operation));
        assert_eq!(
            decode(VIP_CONTROL_OP_RDMAWRITE, 0, &s, true, 0),
            Err(Format::Operation)
        );
        assert_eq!(decode(0x10, 0, &s, false, 0), Err(Format::ReservedBits));
        let many = vec![seg(0, 1, 1); MAX_DATA_SEGMENTS + 1];
        assert_eq!(
            decode(VIP_CONTROL_OP_SENDRECV, 0, &many, false, 0),
            Err(Format::TooManySegments)
        );
        // RDMA may carry one more (the address segment)
        assert!(decode(VIP_CONTROL_OP_RDMAWRITE, 0, &many, false, 0).is_ok());
        // the queue fence is accepted (descriptors complete in order anyway)
        assert!(decode(VIP_CONTROL_QFENCE, 0, &s, false, 0).is_ok());
    }

    #[test]
    fn the_one_segment_path_decodes_as_the_general_one() {
        // Every control word (the fast path takes only the plain send/receive ones), both
        // queues, with and without immediate data: the same descriptor or the same error.
        let s = [seg(0x1000, 3, 8)];
        let mut fast = 0;
        for control in 0..=u16::MAX {
            for recv in [false, true] {
                let got = decode(control, 7, &s, recv, 11);
                assert_eq!(
                    got,
                    decode_general(control, 7, &s, recv, 11),
                    "{control:#x}"
                );
                fast += usize::from(got.is_ok_and(|d| matches!(d.op, Op::Send | Op::Recv)));
            }
        }
        // SENDRECV with or without IMMEDIATE and QFENCE, on both queues
        assert_eq!(fast, 8);
    }

    #[test]
    fn reliability_bits_and_timeouts() {
        for r in [
            Reliability::Unreliable,
            Reliability::ReliableDelivery,
            Reliability::ReliableReception,
        ] {
            assert_eq!(reliability(service_bit(r)), Some(r));
        }
        assert_eq!(reliability(0), None);
        assert_eq!(reliability(3), None);
        assert_eq!(reliability(8), None);
        assert_eq!(timeout(0), Some(Duration::ZERO));
        assert_eq!(timeout(1500), Some(Duration::from_millis(1500)));
        assert_eq!(timeout(VIP_INFINITE), None);
        assert_eq!(timeout(c_ulong::MAX), None);
    }
}
