//! SCI packets as 16-bit symbols: encoding, decoding and validation.
//!
//! | packet | symbols | layout (one symbol each, CRC last) |
//! |---|---|---|
//! | echo (DONE/BUSY_A/BUSY_B) | 4 | targetId, command, sourceId, CRC |
//! | NOTIFY | 4 | targetId = j, command, sourceId = j, CRC |
//! | send, no data | 8 | targetId, command, sourceId, tid, address×3, CRC |
//! | send + 16 B | 16 | header (7) + 8 data + CRC |
//! | send + 64 B | 40 | header (7) + 32 data + CRC |
//! | send + 256 B | 136 | header (7) + 128 data + CRC |
//!
//! With `crc_outside_header` a send carries one more symbol: a header CRC after the address
//! (so the header is checked before the data arrives), and the final CRC still covers
//! everything.
//!
//! The command symbol (icnlab's own bit assignment; the paper gives none):
//! bits 15..12 = packet type (1 send, 2 echo, 3 NOTIFY); for a send, bits 11..10 = phase,
//! bits 9..8 = data-size code (0, 16, 64, 256 bytes), bit 7 = header CRC present; for an echo
//! bits 1..0 = status (0 DONE, 1 BUSY_A, 2 BUSY_B); for a NOTIFY bits 1..0 = the 2-bit status
//! code. All other bits are reserved and must be zero.
//!
//! CRC: CRC-16/IBM-3740 (a.k.a. CCITT-FALSE: polynomial x¹⁶+x¹²+x⁵+1 = 0x1021, init 0xFFFF, no
//! reflection) over the big-endian bytes of the covered symbols, the CCITT polynomial IEEE 1596
//! uses. A CRC-16 detects every error burst of ≤ 16 bits, so any single corrupted symbol is
//! rejected; a flipped flag bit breaks the framing check instead.

use super::symbol::{Echo, Phase, StateChange, Symbol};

const CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_IBM_3740);

const TYPE_SEND: u16 = 0x1;
const TYPE_ECHO: u16 = 0x2;
const TYPE_NOTIFY: u16 = 0x3;
const HEADER_SYMBOLS: usize = 7;

/// The data sizes a send may carry, in bytes; the index is the wire code.
pub const DATA_SIZES: [u16; 4] = [0, 16, 64, 256];

/// Symbols of an echo or NOTIFY.
pub const ECHO_SYMBOLS: usize = 4;

/// Symbols of a send carrying `data_bytes` (one of [`DATA_SIZES`]).
pub fn send_symbols(data_bytes: u16, crc_outside_header: bool) -> usize {
    HEADER_SYMBOLS + usize::from(data_bytes) / 2 + 1 + usize::from(crc_outside_header)
}

/// A request ("send") packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendPacket {
    pub target: u16,
    pub source: u16,
    pub phase: Phase,
    /// Transaction id chosen by the source.
    pub tid: u16,
    /// 48-bit target address (upper 16 bits ignored when encoding).
    pub address: u64,
    /// Payload: 0, 16, 64 or 256 bytes.
    pub data: Vec<u8>,
    /// Whether the header carries its own CRC (one extra symbol).
    pub crc_outside_header: bool,
}

/// An echo: the stripper's answer to a send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EchoPacket {
    /// The send's source (the echo travels back to it).
    pub target: u16,
    /// The node that stripped the send.
    pub source: u16,
    pub status: Echo,
}

/// A NOTIFY of intelligent A/B aging: node `node` changed serve state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotifyPacket {
    pub node: u16,
    pub change: StateChange,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Packet {
    Send(SendPacket),
    Echo(EchoPacket),
    Notify(NotifyPacket),
}

/// Why a symbol sequence is not a valid packet.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("{0} symbols is shorter than the shortest packet (4)")]
    TooShort(usize),
    #[error(
        "flag bits do not frame exactly one packet (flag must be high on all but the last symbol)"
    )]
    BadFraming,
    #[error("CRC mismatch: computed {computed:#06x}, packet carries {carried:#06x}")]
    BadCrc { computed: u16, carried: u16 },
    #[error("header CRC mismatch: computed {computed:#06x}, header carries {carried:#06x}")]
    BadHeaderCrc { computed: u16, carried: u16 },
    #[error("unknown command type {0:#x}")]
    UnknownCommand(u16),
    #[error("{got} symbols, but the command announces a {expected}-symbol packet")]
    BadLength { got: usize, expected: usize },
    #[error("reserved command bits set: {0:#06x}")]
    ReservedBits(u16),
    #[error("undefined echo status 3")]
    UnknownStatus,
    #[error("NOTIFY with targetId {target} ≠ sourceId {sender}")]
    NotifyIds { target: u16, sender: u16 },
    #[error("data of {0} bytes is not one of 0, 16, 64, 256")]
    BadDataSize(usize),
}

fn crc_of(symbols: &[Symbol]) -> u16 {
    let mut digest = CRC16.digest();
    for s in symbols {
        digest.update(&s.bits.to_be_bytes());
    }
    digest.finalize()
}

/// Sets the flags (high on all but the last symbol) and appends nothing else.
fn frame(mut bits: Vec<u16>) -> Vec<Symbol> {
    let mut symbols: Vec<Symbol> = bits
        .drain(..)
        .map(|b| Symbol {
            bits: b,
            flag: true,
        })
        .collect();
    let crc = crc_of(&symbols);
    symbols.push(Symbol {
        bits: crc,
        flag: false,
    });
    symbols
}

impl Packet {
    /// Encodes the packet as symbols (CRC and flags included).
    pub fn encode(&self) -> Result<Vec<Symbol>, DecodeError> {
        let bits = match self {
            Packet::Send(s) => {
                let code = DATA_SIZES
                    .iter()
                    .position(|&d| usize::from(d) == s.data.len())
                    .ok_or(DecodeError::BadDataSize(s.data.len()))?
                    as u16;
                let command = TYPE_SEND << 12
                    | s.phase.code() << 10
                    | code << 8
                    | u16::from(s.crc_outside_header) << 7;
                let mut bits = vec![
                    s.target,
                    command,
                    s.source,
                    s.tid,
                    (s.address >> 32) as u16,
                    (s.address >> 16) as u16,
                    s.address as u16,
                ];
                if s.crc_outside_header {
                    let header: Vec<Symbol> = bits
                        .iter()
                        .map(|&b| Symbol {
                            bits: b,
                            flag: true,
                        })
                        .collect();
                    bits.push(crc_of(&header));
                }
                bits.extend(s.data.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]])));
                bits
            }
            Packet::Echo(e) => vec![e.target, TYPE_ECHO << 12 | e.status as u16, e.source],
            Packet::Notify(n) => vec![n.node, TYPE_NOTIFY << 12 | n.change.code(), n.node],
        };
        Ok(frame(bits))
    }

    /// Decodes and validates one packet (framing, CRC, command, length, reserved bits).
    pub fn decode(symbols: &[Symbol]) -> Result<Packet, DecodeError> {
        let n = symbols.len();
        if n < ECHO_SYMBOLS {
            return Err(DecodeError::TooShort(n));
        }
        let framed = symbols[..n - 1].iter().all(|s| s.flag) && !symbols[n - 1].flag;
        if !framed {
            return Err(DecodeError::BadFraming);
        }
        let computed = crc_of(&symbols[..n - 1]);
        let carried = symbols[n - 1].bits;
        if computed != carried {
            return Err(DecodeError::BadCrc { computed, carried });
        }
        let target = symbols[0].bits;
        let command = symbols[1].bits;
        let source = symbols[2].bits;
        match command >> 12 {
            TYPE_SEND => {
                let reserved = command & 0x007f;
                if reserved != 0 {
                    return Err(DecodeError::ReservedBits(reserved));
                }
                let data_bytes = DATA_SIZES[usize::from(command >> 8 & 3)];
                let crc_outside_header = command >> 7 & 1 == 1;
                let expected = send_symbols(data_bytes, crc_outside_header);
                if n != expected {
                    return Err(DecodeError::BadLength { got: n, expected });
                }
                let mut data_start = HEADER_SYMBOLS;
                if crc_outside_header {
                    let computed = crc_of(&symbols[..HEADER_SYMBOLS]);
                    let carried = symbols[HEADER_SYMBOLS].bits;
                    if computed != carried {
                        return Err(DecodeError::BadHeaderCrc { computed, carried });
                    }
                    data_start += 1;
                }
                let address = u64::from(symbols[4].bits) << 32
                    | u64::from(symbols[5].bits) << 16
                    | u64::from(symbols[6].bits);
                let data = symbols[data_start..n - 1]
                    .iter()
                    .flat_map(|s| s.bits.to_be_bytes())
                    .collect();
                Ok(Packet::Send(SendPacket {
                    target,
                    source,
                    phase: Phase::from_code(command >> 10),
                    tid: symbols[3].bits,
                    address,
                    data,
                    crc_outside_header,
                }))
            }
            kind @ (TYPE_ECHO | TYPE_NOTIFY) => {
                if n != ECHO_SYMBOLS {
                    return Err(DecodeError::BadLength {
                        got: n,
                        expected: ECHO_SYMBOLS,
                    });
                }
                let reserved = command & 0x0ffc;
                if reserved != 0 {
                    return Err(DecodeError::ReservedBits(reserved));
                }
                if kind == TYPE_ECHO {
                    let status = *Echo::ALL
                        .get(usize::from(command & 3))
                        .ok_or(DecodeError::UnknownStatus)?;
                    Ok(Packet::Echo(EchoPacket {
                        target,
                        source,
                        status,
                    }))
                } else if target != source {
                    Err(DecodeError::NotifyIds {
                        target,
                        sender: source,
                    })
                } else {
                    Ok(Packet::Notify(NotifyPacket {
                        node: target,
                        change: StateChange::from_code(command & 3),
                    }))
                }
            }
            other => Err(DecodeError::UnknownCommand(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::symbol::ServeState;
    use proptest::prelude::*;

    fn send(data_bytes: usize, crc_outside_header: bool) -> Packet {
        Packet::Send(SendPacket {
            target: 3,
            source: 5,
            phase: Phase::RetryA,
            tid: 77,
            address: 0x1234_5678_9abc,
            data: (0..data_bytes).map(|i| i as u8).collect(),
            crc_outside_header,
        })
    }

    /// The spec's length table, row by row, with and without `crc_outside_header`.
    #[test]
    fn lengths_match_the_spec_table() {
        for (data, symbols) in [(0, 8), (16, 16), (64, 40), (256, 136)] {
            assert_eq!(send(data, false).encode().unwrap().len(), symbols);
            assert_eq!(send(data, true).encode().unwrap().len(), symbols + 1);
            assert_eq!(send_symbols(data as u16, false), symbols);
        }
        let echo = Packet::Echo(EchoPacket {
            target: 1,
            source: 2,
            status: Echo::BusyB,
        });
        assert_eq!(echo.encode().unwrap().len(), 4);
        let notify = Packet::Notify(NotifyPacket {
            node: 4,
            change: StateChange::from(ServeState::Nb),
        });
        assert_eq!(notify.encode().unwrap().len(), 4);
    }

    /// Known-answer CRC: CRC-16/IBM-3740 of ASCII "123456789" is 0x29B1.
    #[test]
    fn crc_is_ccitt_false() {
        assert_eq!(CRC16.checksum(b"123456789"), 0x29b1);
    }

    #[test]
    fn malformed_inputs_get_typed_errors() {
        let good = send(16, false).encode().unwrap();
        assert_eq!(Packet::decode(&good[..3]), Err(DecodeError::TooShort(3)));
        // Dropping a data symbol and re-framing: CRC fine, length wrong.
        let mut bits: Vec<u16> = good[..good.len() - 1].iter().map(|s| s.bits).collect();
        bits.pop();
        assert_eq!(
            Packet::decode(&frame(bits)),
            Err(DecodeError::BadLength {
                got: 15,
                expected: 16
            })
        );
        let unknown = frame(vec![1, 0x7000, 1]);
        assert_eq!(
            Packet::decode(&unknown),
            Err(DecodeError::UnknownCommand(7))
        );
        let status3 = frame(vec![1, TYPE_ECHO << 12 | 3, 2]);
        assert_eq!(Packet::decode(&status3), Err(DecodeError::UnknownStatus));
        let notify_ids = frame(vec![1, TYPE_NOTIFY << 12, 2]);
        assert!(matches!(
            Packet::decode(&notify_ids),
            Err(DecodeError::NotifyIds { .. })
        ));
        let reserved = frame(vec![1, TYPE_ECHO << 12 | 0x10, 2]);
        assert_eq!(
            Packet::decode(&reserved),
            Err(DecodeError::ReservedBits(0x10))
        );
        let mut unframed = good.clone();
        unframed[2].flag = false;
        assert_eq!(Packet::decode(&unframed), Err(DecodeError::BadFraming));
        let mut bad_data = send(16, false);
        if let Packet::Send(s) = &mut bad_data {
            s.data.truncate(10);
        }
        assert_eq!(bad_data.encode(), Err(DecodeError::BadDataSize(10)));
    }

    fn any_packet() -> impl Strategy<Value = Packet> {
        let send = (
            any::<u16>(),
            any::<u16>(),
            0u16..4,
            any::<u16>(),
            0u64..1 << 48,
            prop::sample::select(DATA_SIZES.to_vec()),
            any::<bool>(),
            any::<u8>(),
        )
            .prop_map(
                |(target, source, phase, tid, address, size, crc_oh, fill)| {
                    Packet::Send(SendPacket {
                        target,
                        source,
                        phase: Phase::from_code(phase),
                        tid,
                        address,
                        data: (0..size).map(|i| (i as u8).wrapping_mul(fill)).collect(),
                        crc_outside_header: crc_oh,
                    })
                },
            );
        let echo = (any::<u16>(), any::<u16>(), 0usize..3).prop_map(|(target, source, s)| {
            Packet::Echo(EchoPacket {
                target,
                source,
                status: Echo::ALL[s],
            })
        });
        let notify = (any::<u16>(), 0u16..4).prop_map(|(node, code)| {
            Packet::Notify(NotifyPacket {
                node,
                change: StateChange::from_code(code),
            })
        });
        prop_oneof![send, echo, notify]
    }

    proptest! {
        #[test]
        fn decode_inverts_encode(p in any_packet()) {
            let symbols = p.encode().unwrap();
            prop_assert_eq!(Packet::decode(&symbols), Ok(p));
        }

        #[test]
        fn any_single_corrupted_symbol_is_rejected(
            p in any_packet(), which in any::<prop::sample::Index>(),
            xor in 1u16.., flip_flag in any::<bool>(),
        ) {
            let mut symbols = p.encode().unwrap();
            let i = which.index(symbols.len());
            symbols[i].bits ^= xor;
            if flip_flag {
                symbols[i].flag = !symbols[i].flag;
            }
            prop_assert!(Packet::decode(&symbols).is_err());
        }

        #[test]
        fn a_flipped_flag_alone_is_rejected(p in any_packet(), which in any::<prop::sample::Index>()) {
            let mut symbols = p.encode().unwrap();
            let i = which.index(symbols.len());
            symbols[i].flag = !symbols[i].flag;
            prop_assert_eq!(Packet::decode(&symbols), Err(DecodeError::BadFraming));
        }
    }
}
