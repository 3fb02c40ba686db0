//! Descriptors (`VIP_DESCRIPTOR`) and their completions.
//!
//! A VIA descriptor is a control segment (operation, immediate data, status, length), an
//! address segment for RDMA (remote handle and address) and data segments (local handle,
//! address, length). Here it is a plain value the consumer builds, posts, and gets back inside
//! a [`Completion`] carrying VIA's status word.

use crate::attrs::{MAX_SEGMENTS, ViAttributes};
use crate::error::{CompletionStatus, Result, ViaError};
use crate::memory::MemHandle;
use smallvec::SmallVec;

/// The data segments of a descriptor. Almost every descriptor has one or two, kept inline so
/// building and posting one allocates nothing (a `Vec` cost a `malloc` and a `free` per
/// message, about a fifth of the library's work for a small message).
pub type Segments = SmallVec<[Segment; 2]>;

/// One data segment: `len` bytes at `offset` in the registered region `handle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub handle: MemHandle,
    pub offset: u64,
    pub len: u32,
}

impl Segment {
    pub fn new(handle: MemHandle, offset: u64, len: u32) -> Self {
        Segment {
            handle,
            offset,
            len,
        }
    }
}

/// Pushes one by one: `collect` into a SmallVec goes through `reserve` logic that costs
/// more than the rest of building a descriptor.
fn collect_segments(segments: impl IntoIterator<Item = Segment>) -> Segments {
    let mut v = Segments::new();
    for s in segments {
        v.push(s);
    }
    v
}

/// The address segment of an RDMA descriptor: a region of the *peer*.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteAddr {
    pub handle: MemHandle,
    pub offset: u64,
}

/// The operation of a descriptor (control-segment bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Send queue: message send, consumes a receive descriptor at the peer.
    Send,
    /// Receive queue: a buffer for an incoming send (or RDMA write with immediate data).
    Recv,
    /// Send queue: write the local segments into the peer's region.
    RdmaWrite(RemoteAddr),
    /// Send queue: read the peer's region into the local segments (reliable VIs only).
    RdmaRead(RemoteAddr),
}

/// A work request. Build with [`Descriptor::send`], [`Descriptor::recv`],
/// [`Descriptor::rdma_write`], [`Descriptor::rdma_read`], from any iterable of segments: an
/// array (`[seg]`, no allocation) or a `Vec`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    pub op: Op,
    pub segments: Segments,
    /// Immediate data (sends and RDMA writes); delivered in the peer's receive completion.
    pub immediate: Option<u32>,
    /// A consumer cookie returned untouched in the completion.
    pub id: u64,
}

impl Descriptor {
    pub fn send(segments: impl IntoIterator<Item = Segment>) -> Self {
        Descriptor {
            op: Op::Send,
            segments: collect_segments(segments),
            immediate: None,
            id: 0,
        }
    }
    pub fn recv(segments: impl IntoIterator<Item = Segment>) -> Self {
        Descriptor {
            op: Op::Recv,
            segments: collect_segments(segments),
            immediate: None,
            id: 0,
        }
    }
    pub fn rdma_write(remote: RemoteAddr, segments: impl IntoIterator<Item = Segment>) -> Self {
        Descriptor {
            op: Op::RdmaWrite(remote),
            segments: collect_segments(segments),
            immediate: None,
            id: 0,
        }
    }
    pub fn rdma_read(remote: RemoteAddr, segments: impl IntoIterator<Item = Segment>) -> Self {
        Descriptor {
            op: Op::RdmaRead(remote),
            segments: collect_segments(segments),
            immediate: None,
            id: 0,
        }
    }
    /// Adds immediate data.
    pub fn with_immediate(mut self, imm: u32) -> Self {
        self.immediate = Some(imm);
        self
    }
    /// Sets the consumer cookie.
    pub fn with_id(mut self, id: u64) -> Self {
        self.id = id;
        self
    }
    /// Sum of the segment lengths.
    pub fn total_len(&self) -> u64 {
        self.segments.iter().map(|s| u64::from(s.len)).sum()
    }

    /// The format checks a provider makes when the descriptor is posted (`VIP_DESCRIPTOR_ERROR`).
    ///
    /// | rule | |
    /// |---|---|
    /// | at most [`MAX_SEGMENTS`] segments | |
    /// | total length ≤ the VI's max transfer size | |
    /// | `Recv` only on the receive queue, everything else only on the send queue | |
    /// | no immediate data on `Recv` or `RdmaRead` | |
    /// | `RdmaRead` only on reliable VIs | VIA 1.0 §2.5 |
    pub fn check(&self, attrs: &ViAttributes, on_recv_queue: bool) -> Result<()> {
        let segments_ok = self.segments.len() <= MAX_SEGMENTS;
        let length_ok = self.total_len() <= u64::from(attrs.max_transfer_size);
        let (queue_ok, imm_ok, read_ok) = match self.op {
            Op::Send | Op::RdmaWrite(_) => (!on_recv_queue, true, true),
            Op::Recv => (on_recv_queue, self.immediate.is_none(), true),
            Op::RdmaRead(_) => (
                !on_recv_queue,
                self.immediate.is_none(),
                attrs.reliability.is_reliable(),
            ),
        };
        if segments_ok && length_ok && queue_ok && imm_ok && read_ok {
            Ok(())
        } else {
            Err(self.check_failure(attrs, on_recv_queue))
        }
    }

    /// The error for the first rule of [`Descriptor::check`]'s table that fails (out of
    /// line: posting checks every descriptor, and formatting is for the rare failure).
    #[cold]
    fn check_failure(&self, attrs: &ViAttributes, on_recv_queue: bool) -> ViaError {
        let msg = if self.segments.len() > MAX_SEGMENTS {
            format!(
                "{} segments, at most {MAX_SEGMENTS} allowed",
                self.segments.len()
            )
        } else if self.total_len() > u64::from(attrs.max_transfer_size) {
            format!(
                "length {} exceeds max_transfer_size {}",
                self.total_len(),
                attrs.max_transfer_size
            )
        } else if (self.op == Op::Recv) != on_recv_queue {
            format!("{:?} posted on the wrong queue", self.op)
        } else if self.immediate.is_some() && matches!(self.op, Op::Recv | Op::RdmaRead(_)) {
            "immediate data only on send and RDMA write".into()
        } else {
            "RDMA read needs a reliable VI".into()
        };
        ViaError::Descriptor(msg)
    }
}

/// The operation a completion reports (VIA status "completed operation" bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletedOp {
    Send,
    Recv,
    RdmaWrite,
    RdmaRead,
}

impl From<Op> for CompletedOp {
    fn from(op: Op) -> Self {
        match op {
            Op::Send => CompletedOp::Send,
            Op::Recv => CompletedOp::Recv,
            Op::RdmaWrite(_) => CompletedOp::RdmaWrite,
            Op::RdmaRead(_) => CompletedOp::RdmaRead,
        }
    }
}

/// A completed descriptor (`*Done` / `*Wait` hand these back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub status: CompletionStatus,
    pub op: CompletedOp,
    /// Bytes moved (for a receive: bytes received).
    pub length: u32,
    /// Immediate data received (receive completions only).
    pub immediate: Option<u32>,
    /// The descriptor as posted.
    pub desc: Descriptor,
    /// A receive consumed by the peer's RDMA write with immediate data (VIA's
    /// `VIP_STATUS_OP_REMOTE_RDMA_WRITE`) rather than by a send.
    pub by_rdma_write: bool,
}

impl Completion {
    pub(crate) fn new(
        desc: Descriptor,
        status: CompletionStatus,
        length: u32,
        immediate: Option<u32>,
    ) -> Self {
        Completion {
            status,
            op: desc.op.into(),
            length,
            immediate,
            desc,
            by_rdma_write: false,
        }
    }
    /// `Ok(self)` on success, else a [`ViaError`] describing the status.
    #[inline]
    pub fn ok(self) -> Result<Self> {
        if self.status.is_ok() {
            Ok(self)
        } else {
            Err(ViaError::Descriptor(format!(
                "descriptor completed with {:?}",
                self.status
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attrs::{Ptag, Reliability};

    fn seg(len: u32) -> Segment {
        Segment::new(MemHandle(1), 0, len)
    }

    #[test]
    fn check_enforces_each_rule_of_the_table() {
        let rd = ViAttributes {
            max_transfer_size: 100,
            ..ViAttributes::new(Ptag(1), Reliability::ReliableDelivery)
        };
        let ur = ViAttributes {
            reliability: Reliability::Unreliable,
            ..rd
        };
        let remote = RemoteAddr {
            handle: MemHandle(2),
            offset: 0,
        };
        assert!(
            Descriptor::send(vec![seg(50), seg(50)])
                .check(&rd, false)
                .is_ok()
        );
        // segments
        assert!(
            Descriptor::send(vec![seg(1); MAX_SEGMENTS])
                .check(&rd, false)
                .is_ok()
        );
        assert!(
            Descriptor::send(vec![seg(1); MAX_SEGMENTS + 1])
                .check(&rd, false)
                .is_err()
        );
        // length
        assert!(
            Descriptor::send(vec![seg(50), seg(51)])
                .check(&rd, false)
                .is_err()
        );
        // queue
        assert!(Descriptor::recv(vec![seg(1)]).check(&rd, false).is_err());
        assert!(Descriptor::send(vec![seg(1)]).check(&rd, true).is_err());
        assert!(Descriptor::recv(vec![seg(1)]).check(&rd, true).is_ok());
        // immediate
        assert!(
            Descriptor::recv(vec![])
                .with_immediate(1)
                .check(&rd, true)
                .is_err()
        );
        assert!(
            Descriptor::rdma_read(remote, vec![])
                .with_immediate(1)
                .check(&rd, false)
                .is_err()
        );
        assert!(
            Descriptor::rdma_write(remote, vec![])
                .with_immediate(1)
                .check(&rd, false)
                .is_ok()
        );
        // RDMA read needs reliability
        assert!(
            Descriptor::rdma_read(remote, vec![seg(4)])
                .check(&rd, false)
                .is_ok()
        );
        assert!(
            Descriptor::rdma_read(remote, vec![seg(4)])
                .check(&ur, false)
                .is_err()
        );
    }

    #[test]
    fn completion_reports_the_posted_operation() {
        let c = Completion::new(
            Descriptor::send(vec![seg(3)]).with_id(7),
            CompletionStatus::Flushed,
            0,
            None,
        );
        assert_eq!(c.op, CompletedOp::Send);
        assert_eq!(c.desc.id, 7);
        assert!(c.clone().ok().is_err());
        let c = Completion {
            status: CompletionStatus::Success,
            ..c
        };
        assert!(c.ok().is_ok());
    }
}
