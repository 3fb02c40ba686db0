//! Attributes of NICs, VIs and registered memory (`VIP_NIC_ATTRIBUTES`, `VIP_VI_ATTRIBUTES`,
//! `VIP_MEM_ATTRIBUTES`).

use std::time::Duration;

use crate::error::{Result, ViaError};

/// Largest payload one descriptor may move (the NIC's `MaxTransferSize`): 1 GiB, the largest
/// region one registration may cover ([`MAX_REGISTER_SIZE`]), on both providers. A VI's
/// `max_transfer_size` may lower it; connecting VIs agree on the smaller of the two. Nothing
/// is allocated by a frame's length (payloads go straight into registered memory or are
/// read through a fixed scratch buffer), so a peer cannot make us allocate this much.
pub const MAX_TRANSFER_SIZE: u32 = 1 << 30;
/// Most data segments in one descriptor (`MaxSegmentsPerDesc`).
pub const MAX_SEGMENTS: usize = 16;
/// Deepest work queue (`MaxDescriptorsPerQueue`).
pub const MAX_QUEUE_DEPTH: usize = 4096;
/// Longest connection discriminator in bytes (`MaxDiscriminatorLen`).
pub const MAX_DISCRIMINATOR_LEN: usize = 64;
/// Largest single registered region.
pub const MAX_REGISTER_SIZE: usize = 1 << 30;

/// The reliability level of a VI connection (VIA 1.0 §2.5).
///
/// | level | send completes when | on an error |
/// |---|---|---|
/// | `Unreliable` | the data left the local provider | the frame is dropped, the VI stays connected |
/// | `ReliableDelivery` | the peer provider has accepted the frame (in order, exactly once) | the VI breaks, every pending descriptor completes in error |
/// | `ReliableReception` | the data is in the receiver's registered memory | the failing descriptor gets the remote status, then the VI breaks |
///
/// RDMA read is only allowed on the two reliable levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reliability {
    Unreliable,
    ReliableDelivery,
    ReliableReception,
}

impl Reliability {
    /// The wire code of the level (the `imm` of a `Connect` frame).
    pub fn code(self) -> u32 {
        match self {
            Reliability::Unreliable => 0,
            Reliability::ReliableDelivery => 1,
            Reliability::ReliableReception => 2,
        }
    }
    pub(crate) fn from_code(c: u32) -> Option<Self> {
        match c {
            0 => Some(Reliability::Unreliable),
            1 => Some(Reliability::ReliableDelivery),
            2 => Some(Reliability::ReliableReception),
            _ => None,
        }
    }
    /// True for the levels that need an acknowledgement from the peer.
    pub fn is_reliable(self) -> bool {
        self != Reliability::Unreliable
    }
}

/// A protection tag (`VIP_PROTECTION_HANDLE`): a VI may only use memory registered with its
/// own tag. Obtained from [`crate::Nic::create_ptag`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ptag(pub(crate) u32);

/// Attributes of a memory registration (`VIP_MEM_ATTRIBUTES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemAttributes {
    pub ptag: Ptag,
    /// Peers may RDMA-write into this region.
    pub enable_rdma_write: bool,
    /// Peers may RDMA-read from this region.
    pub enable_rdma_read: bool,
}

impl MemAttributes {
    /// Local-only memory: usable in send/receive descriptors, not as an RDMA target.
    pub fn local(ptag: Ptag) -> Self {
        MemAttributes {
            ptag,
            enable_rdma_write: false,
            enable_rdma_read: false,
        }
    }
    /// Memory a peer may both RDMA-write and RDMA-read.
    pub fn rdma(ptag: Ptag) -> Self {
        MemAttributes {
            ptag,
            enable_rdma_write: true,
            enable_rdma_read: true,
        }
    }
}

/// Attributes of a VI (`VIP_VI_ATTRIBUTES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViAttributes {
    pub reliability: Reliability,
    pub ptag: Ptag,
    /// Largest payload of one descriptor on this VI (≤ [`MAX_TRANSFER_SIZE`]).
    pub max_transfer_size: u32,
    /// This VI accepts incoming RDMA writes (the region must allow them too).
    pub enable_rdma_write: bool,
    /// This VI accepts incoming RDMA reads (the region must allow them too).
    pub enable_rdma_read: bool,
    /// Deepest send or receive queue.
    pub queue_depth: usize,
    /// How long a wait on a polling link (`shm`) polls before it yields the CPU and then
    /// blocks; 0 never spins. Ignored on `tcp`, whose waits block in the kernel at once. See
    /// [`crate::link::backoff`] for the whole policy (a peer on the waiter's own CPU is never
    /// spun for). At most [`crate::link::backoff::MAX_SPIN`].
    pub spin: Duration,
    /// Sends and RDMA writes of at least this many bytes move by cross-memory attach on
    /// `shm` (one copy, by the receiver, straight from the sender's registered memory;
    /// [`crate::link::cma`]) when the VI is reliable and the peer can read us; 0 (the
    /// default) never. Off by default because on the machine it was measured on the kernel's
    /// `process_vm_readv` copies at a fifth of `memcpy`'s speed and the two-copy ring path is
    /// faster at every size (docs/via.md); on machines where it is not, turn it on.
    pub cma_min: u32,
    /// Sends and RDMA writes of at least this many bytes from a region in shared memory
    /// (library-owned regions of at least [`SHARED_REGION_MIN`] bytes on `shm`) put only a
    /// descriptor in the ring, and the receiver copies the payload straight from the sender's
    /// region into its own with one `memcpy` (`shared_mem`), when the VI is reliable
    /// and the peer maps our regions; 0 never. The default, [`SINGLE_COPY_MIN`], is where the
    /// single-copy path overtook the ring in the measurement in docs/via.md.
    pub single_copy_min: u32,
}

/// Library-owned regions of at least this many bytes live in shared memory on `shm` NICs.
pub const SHARED_REGION_MIN: usize = crate::shared_mem::SHARED_REGION_MIN;

/// Default [`ViAttributes::single_copy_min`] (measured: docs/via.md, "The single-copy path").
pub const SINGLE_COPY_MIN: u32 = 2 << 10;

impl ViAttributes {
    /// A VI of `reliability` with RDMA enabled and the largest transfer size, and the
    /// defaults that make `icnlab via pingpong` fast: waits poll for [`ViAttributes::spin`]
    /// = 50 µs before sleeping (a reply from another core arrives within it; 0 would pay a
    /// wake-up per message), single copy on shm from [`SINGLE_COPY_MIN`] = 2 KiB out of
    /// library-owned regions of 64 KiB or more, queues 1024 deep. The README's "A complete
    /// program" says what else a fast program does (buffers registered once, receives
    /// posted ahead, send completions reaped in batches).
    pub fn new(ptag: Ptag, reliability: Reliability) -> Self {
        ViAttributes {
            reliability,
            ptag,
            max_transfer_size: MAX_TRANSFER_SIZE,
            enable_rdma_write: true,
            enable_rdma_read: true,
            queue_depth: 1024,
            spin: crate::link::backoff::DEFAULT_SPIN,
            cma_min: 0,
            single_copy_min: SINGLE_COPY_MIN,
        }
    }

    /// Checks ranges; errors name the attribute and the allowed range.
    pub fn validate(&self) -> Result<()> {
        if self.max_transfer_size == 0 || self.max_transfer_size > MAX_TRANSFER_SIZE {
            return Err(ViaError::InvalidParameter(format!(
                "max_transfer_size must be in 1..={MAX_TRANSFER_SIZE}, got {}",
                self.max_transfer_size
            )));
        }
        if self.queue_depth == 0 || self.queue_depth > MAX_QUEUE_DEPTH {
            return Err(ViaError::InvalidParameter(format!(
                "queue_depth must be in 1..={MAX_QUEUE_DEPTH}, got {}",
                self.queue_depth
            )));
        }
        if self.spin > crate::link::backoff::MAX_SPIN {
            return Err(ViaError::InvalidParameter(format!(
                "spin must be at most {:?}, got {:?}",
                crate::link::backoff::MAX_SPIN,
                self.spin
            )));
        }
        Ok(())
    }
}

/// What a NIC reports about itself (`VIP_NIC_ATTRIBUTES`, the subset that means something here).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NicAttributes {
    /// `shm` or `tcp`.
    pub provider: &'static str,
    /// This NIC's address, as a URL peers can connect to.
    pub address: String,
    pub max_transfer_size: u32,
    pub max_segments_per_desc: usize,
    pub max_queue_depth: usize,
    pub max_discriminator_len: usize,
    pub max_register_bytes: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reliability_codes_round_trip() {
        for r in [
            Reliability::Unreliable,
            Reliability::ReliableDelivery,
            Reliability::ReliableReception,
        ] {
            assert_eq!(Reliability::from_code(r.code()), Some(r));
        }
        assert_eq!(Reliability::from_code(3), None);
        assert!(!Reliability::Unreliable.is_reliable());
        assert!(Reliability::ReliableReception.is_reliable());
    }

    #[test]
    fn vi_attributes_reject_out_of_range_values_naming_the_key() {
        let mut a = ViAttributes::new(Ptag(1), Reliability::ReliableDelivery);
        assert!(a.validate().is_ok());
        a.max_transfer_size = 0;
        let e = a.validate().unwrap_err().to_string();
        assert!(e.contains("max_transfer_size"), "{e}");
        a.max_transfer_size = MAX_TRANSFER_SIZE + 1;
        assert!(a.validate().is_err());
        a.max_transfer_size = 1;
        a.queue_depth = MAX_QUEUE_DEPTH + 1;
        assert!(
            a.validate()
                .unwrap_err()
                .to_string()
                .contains("queue_depth")
        );
        a.queue_depth = 1;
        a.spin = crate::link::backoff::MAX_SPIN;
        assert!(a.validate().is_ok());
        a.spin += Duration::from_nanos(1);
        assert!(a.validate().unwrap_err().to_string().contains("spin"));
    }
}
