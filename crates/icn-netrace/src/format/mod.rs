//! The Netrace v1 file format (Hestness, Grot & Keckler, NoCArc 2010), as this reader sees it.
//!
//! A trace is a bzip2 stream; every offset below (and in every error) is a byte offset in the
//! **decompressed** stream. All integers are little-endian, records are packed (no padding):
//!
//! | bytes | header field |
//! |---|---|
//! | 0..4 | magic `0x484A5455` |
//! | 4..8 | version, an IEEE-754 `f32` (1.0) |
//! | 8..38 | benchmark name, NUL-padded |
//! | 38 | node count (`u8`) |
//! | 39 | padding |
//! | 40..48 | cycles (`u64`) |
//! | 48..56 | packets (`u64`) |
//! | 56..60 | notes length (`u32`, the notes' terminating NUL included) |
//! | 60..64 | region count (`u32`) |
//! | 64..72 | padding |
//!
//! then the notes, then one 24-byte region header per region (seek offset from the end of the
//! header, cycles, packets: three `u64`), then the packet records in cycle order:
//!
//! | bytes | packet field |
//! |---|---|
//! | 0..8 | cycle (`u64`): the earliest cycle the full-system simulation let it go |
//! | 8..12 | id (`u32`) |
//! | 12..16 | address (`u32`) |
//! | 16 | type (a coherence message, [`PacketType`]) |
//! | 17, 18 | source, destination node |
//! | 19 | node types: source type in the high nibble, destination type in the low |
//! | 20 | dependency count `n` |
//! | 21..21+4n | `n` packet ids (`u32`) |
//!
//! The ids after a packet are its **dependents** (netrace's "downward dependences"): packets
//! that may not be injected before this one has been delivered. A packet is free to go once
//! every packet that lists it has been delivered. Netrace's own reader finds those listers by
//! reading a million cycles ahead; this one relies on two properties every netrace trace has
//! (ids are assigned in file order), checked as it reads: ids increase through the file, and
//! a packet lists only ids greater than its own. Then every lister comes before the packet it
//! lists, a cycle of dependencies cannot be written down, and a listed id that is passed by
//! without appearing is known to be missing at once ([`crate::deps`]).

mod reader;
mod writer;

pub use reader::{ErrorKind, PacketRef, Reader, TraceError};
pub use writer::{record_bytes, write_file, write_header, write_record};

/// `"UTJH"` read as a little-endian `u32`.
pub const MAGIC: u32 = 0x484A_5455;
/// Bytes of the fixed header.
pub const HEADER_BYTES: u64 = 72;
/// Bytes of one region header.
pub const REGION_BYTES: u64 = 24;
/// Bytes of a packet record before its dependency list.
pub const PACKET_BYTES: u64 = 21;
/// Longest notes accepted (real traces carry a sentence).
pub const MAX_NOTES: u32 = 1 << 16;
/// Most regions accepted.
pub const MAX_REGIONS: u32 = 1 << 16;
/// Longest trace accepted, in cycles (the models' own limit on a simulated window): the
/// cycle-level fabrics step through idle cycles, so the cycle count bounds a replay's time.
pub const MAX_CYCLES: u64 = 1 << 36;

/// The trace header.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub version: f32,
    pub benchmark: String,
    pub nodes: u8,
    pub cycles: u64,
    pub packets: u64,
    pub notes: String,
    pub regions: Vec<Region>,
}

impl Header {
    /// The cycle region `r` starts at: the sum of the cycles of the regions before it (packet
    /// cycles are absolute; the reader refuses a record before its region's start). Saturates.
    pub fn region_start(&self, r: usize) -> u64 {
        self.regions[..r.min(self.regions.len())]
            .iter()
            .fold(0u64, |a, g| a.saturating_add(g.cycles))
    }
}

/// One region (phase) of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Offset of its first packet record from the end of the header (notes and regions
    /// included).
    pub offset: u64,
    pub cycles: u64,
    pub packets: u64,
}

/// One packet record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub cycle: u64,
    pub id: u32,
    pub addr: u32,
    pub kind: PacketType,
    pub src: u8,
    pub dst: u8,
    pub node_types: u8,
    /// Packets that wait for this one's delivery.
    pub dependents: Vec<u32>,
}

/// The coherence messages of netrace's M5 traces: the type byte indexes this table; the other
/// values are "InvalidCmd" and refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketType(pub u8);

/// (type byte, name, bytes on the network): control messages carry an 8-byte header, data
/// messages a 64-byte cache line on top.
const TYPES: [(u8, &str, u32); 15] = [
    (1, "ReadReq", 8),
    (2, "ReadResp", 72),
    (3, "ReadRespWithInvalidate", 72),
    (4, "WriteReq", 72),
    (5, "WriteResp", 8),
    (6, "Writeback", 72),
    (13, "UpgradeReq", 8),
    (14, "UpgradeResp", 8),
    (15, "ReadExReq", 8),
    (16, "ReadExResp", 72),
    (25, "BadAddressError", 8),
    (27, "InvalidateReq", 8),
    (28, "InvalidateResp", 8),
    (29, "DowngradeReq", 8),
    (30, "DowngradeResp", 72),
];

impl PacketType {
    fn entry(self) -> Option<&'static (u8, &'static str, u32)> {
        TYPES.iter().find(|t| t.0 == self.0)
    }

    /// Whether the type byte names a message (not "InvalidCmd").
    pub fn is_valid(self) -> bool {
        self.entry().is_some()
    }

    /// The message's name ("ReadReq"), or "InvalidCmd".
    pub fn name(self) -> &'static str {
        self.entry().map_or("InvalidCmd", |t| t.1)
    }

    /// Bytes on the network: 8 for control messages, 72 for data; 0 for an invalid type.
    pub fn bytes(self) -> u32 {
        self.entry().map_or(0, |t| t.2)
    }
}
