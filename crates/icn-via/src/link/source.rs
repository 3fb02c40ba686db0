//! Where the payload of a single-copy frame is (`FLAG_CMA`): the descriptor such a frame
//! carries in the ring instead of its bytes. Pure encoding, no I/O.
//!
//! | word (u64, little-endian) | [`SourceRef::Cma`] | [`SourceRef::Shared`] |
//! |---|---|---|
//! | 0 | 1 | 2 |
//! | 1 | the payload's address in the sender | the region's fd number in the sender |
//! | 2 | 0 | the region's serial (`shared_mem`) |
//! | 3 | 0 | the payload's offset in the region |
//!
//! Every value comes from the peer: decoding checks the kind and the fd's range; what the
//! address or region holds is checked where it is read (the kernel for `Cma`, the mapping's
//! size for `Shared`).

/// Bytes a single-copy frame carries in the stream.
pub const DESC_LEN: usize = 32;

/// Where the receiver copies a single-copy payload from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceRef {
    /// An address in the sender process, read by cross-memory attach ([`super::cma`]).
    Cma { addr: u64 },
    /// Bytes of a registered region in a sealed memfd of the sender, mapped by the receiver
    /// (`shared_mem`).
    Shared { fd: u32, serial: u64, offset: u64 },
}

impl SourceRef {
    pub fn encode(&self) -> [u8; DESC_LEN] {
        let w = match *self {
            SourceRef::Cma { addr } => [1, addr, 0, 0],
            SourceRef::Shared { fd, serial, offset } => [2, u64::from(fd), serial, offset],
        };
        let mut out = [0u8; DESC_LEN];
        for (chunk, v) in out.chunks_exact_mut(8).zip(w) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    pub fn decode(b: &[u8; DESC_LEN]) -> Result<SourceRef, String> {
        let w = |i: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[8 * i..8 * i + 8]);
            u64::from_le_bytes(x)
        };
        match w(0) {
            1 => Ok(SourceRef::Cma { addr: w(1) }),
            2 => Ok(SourceRef::Shared {
                fd: u32::try_from(w(1)).map_err(|_| format!("bad region fd {}", w(1)))?,
                serial: w(2),
                offset: w(3),
            }),
            k => Err(format!("unknown single-copy source kind {k}")),
        }
    }

    /// The same source `n` bytes further on (the next destination segment's part).
    pub fn advance(self, n: u64) -> SourceRef {
        match self {
            SourceRef::Cma { addr } => SourceRef::Cma {
                addr: addr.wrapping_add(n),
            },
            SourceRef::Shared { fd, serial, offset } => SourceRef::Shared {
                fd,
                serial,
                offset: offset.wrapping_add(n),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_layout_is_the_table_of_the_module_doc() {
        let s = SourceRef::Shared {
            fd: 7,
            serial: 9,
            offset: 4096,
        };
        let e = s.encode();
        assert_eq!(e[0], 2);
        assert_eq!(e[8], 7);
        assert_eq!(e[16], 9);
        assert_eq!(&e[24..26], &[0, 16]);
        assert_eq!(
            SourceRef::Cma { addr: 5 }.encode()[..9],
            [1, 0, 0, 0, 0, 0, 0, 0, 5]
        );
    }

    #[test]
    fn bad_kinds_and_fds_are_refused() {
        let mut b = [0u8; DESC_LEN];
        assert!(SourceRef::decode(&b).is_err());
        b[0] = 3;
        assert!(SourceRef::decode(&b).is_err());
        b[0] = 2;
        b[12] = 1; // fd 2^32
        assert!(SourceRef::decode(&b).unwrap_err().contains("fd"));
    }

    #[test]
    fn advance_moves_the_address_or_the_offset() {
        assert_eq!(
            SourceRef::Cma { addr: 10 }.advance(5),
            SourceRef::Cma { addr: 15 }
        );
        let s = SourceRef::Shared {
            fd: 1,
            serial: 2,
            offset: 3,
        };
        assert_eq!(
            s.advance(4),
            SourceRef::Shared {
                fd: 1,
                serial: 2,
                offset: 7
            }
        );
    }

    proptest! {
        #[test]
        fn every_source_round_trips(addr: u64, fd: u32, serial: u64, offset: u64, cma: bool) {
            let s = if cma { SourceRef::Cma { addr } } else { SourceRef::Shared { fd, serial, offset } };
            prop_assert_eq!(SourceRef::decode(&s.encode()), Ok(s));
        }

        #[test]
        fn any_bytes_decode_or_fail_without_panicking(b in proptest::array::uniform32(any::<u8>())) {
            let _ = SourceRef::decode(&b);
        }
    }
}
