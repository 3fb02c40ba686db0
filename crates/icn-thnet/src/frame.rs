//! Data frames: builder and parser.
//!
//! A data frame on an X-Link is (paper Fig. 3, spec "Links and symbols"):
//!
//! | part   | symbols                                   | who consumes it                 |
//! |--------|-------------------------------------------|---------------------------------|
//! | Head   | one `ID-FA..FE` per switch on the path    | each switch strips the first    |
//! | Data   | the frame's bytes (data symbols)          | the destination NIA             |
//! | Check  | 0, 2 or 4 data symbols: CRC of the Data   | the destination NIA             |
//! | End    | `ID-EOF`                                  | output FSMs (frame boundary)    |
//!
//! The paper lists the check bits after the end tag; we put them before `ID-EOF` so that EOF
//! stays the only frame delimiter a switch has to watch (the switch never needs to know the
//! check length). The CRC is configurable ([`Check`]), CRC-16/IBM-3740 by default.

use crate::symbol::{PORTS, Port, Sym, Symbol, SymbolError};
use crc::{CRC_16_IBM_3740, CRC_32_ISO_HDLC, Crc};
use serde::{Deserialize, Serialize};

const CRC16: Crc<u16> = Crc::<u16>::new(&CRC_16_IBM_3740);
const CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);

/// The frame check carried before `ID-EOF`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Check {
    None,
    #[default]
    Crc16,
    Crc32,
}

impl Check {
    /// Check symbols per frame.
    pub const fn symbols(self) -> usize {
        match self {
            Check::None => 0,
            Check::Crc16 => 2,
            Check::Crc32 => 4,
        }
    }

    pub const fn is_none(self) -> bool {
        matches!(self, Check::None)
    }

    /// The check bytes of `data`, big-endian, `len()` of them (written into `out`).
    pub fn compute(self, data: &[u8], out: &mut [u8; 4]) -> usize {
        match self {
            Check::None => 0,
            Check::Crc16 => {
                out[..2].copy_from_slice(&CRC16.checksum(data).to_be_bytes());
                2
            }
            Check::Crc32 => {
                out.copy_from_slice(&CRC32.checksum(data).to_be_bytes());
                4
            }
        }
    }
}

/// A frame as the sender composes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Output ports, first switch first.
    pub route: Vec<Port>,
    pub data: Vec<u8>,
}

/// Why a symbol sequence is not a well-formed frame.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("bad symbol at {at}: {err}")]
    Symbol { at: usize, err: SymbolError },
    #[error("frame has no ID-EOF")]
    MissingEof,
    #[error("symbols after ID-EOF at {at}")]
    TrailingSymbols { at: usize },
    #[error("routing character at {at} after the data began")]
    RouteInData { at: usize },
    #[error("control character {sym:?} inside the frame at {at}")]
    UnexpectedControl { at: usize, sym: Sym },
    #[error("frame has {got} data symbols, fewer than the {need} check symbols")]
    TooShort { got: usize, need: usize },
    #[error("check mismatch: carried {carried:02x?}, computed {computed:02x?}")]
    CheckMismatch { carried: Vec<u8>, computed: Vec<u8> },
}

impl Frame {
    /// The frame's symbols: Head, Data, Check, `ID-EOF`.
    pub fn encode(&self, check: Check) -> Vec<Symbol> {
        debug_assert!(self.route.iter().all(|&p| usize::from(p) < PORTS));
        let mut out = Vec::with_capacity(self.route.len() + self.data.len() + check.symbols() + 1);
        out.extend(self.route.iter().map(|&p| Symbol::route(p)));
        out.extend(self.data.iter().map(|&b| Symbol::data(b)));
        let mut crc = [0u8; 4];
        let n = check.compute(&self.data, &mut crc);
        out.extend(crc[..n].iter().map(|&b| Symbol::data(b)));
        out.push(Symbol::EOF);
        out
    }

    /// Parses one complete frame (ending in `ID-EOF`) and verifies its check.
    ///
    /// `ID-IDLE` anywhere is ignored (it only fills empty slots); `ID-STOP`/`ID-GO` are
    /// rejected because a link consumes them before they can reach a frame.
    pub fn parse(symbols: &[Symbol], check: Check) -> Result<Frame, FrameError> {
        let mut route = Vec::new();
        let mut body = Vec::with_capacity(symbols.len());
        let mut eof_at = None;
        for (at, &s) in symbols.iter().enumerate() {
            let sym = s.decode().map_err(|err| FrameError::Symbol { at, err })?;
            match sym {
                Sym::Idle => {}
                Sym::Route(p) if body.is_empty() => route.push(p),
                Sym::Route(_) => return Err(FrameError::RouteInData { at }),
                Sym::Data(b) => body.push(b),
                Sym::Eof => {
                    eof_at = Some(at);
                    break;
                }
                Sym::Stop | Sym::Go => return Err(FrameError::UnexpectedControl { at, sym }),
            }
        }
        let eof_at = eof_at.ok_or(FrameError::MissingEof)?;
        if eof_at + 1 != symbols.len() {
            return Err(FrameError::TrailingSymbols { at: eof_at + 1 });
        }
        let need = check.symbols();
        if body.len() < need {
            return Err(FrameError::TooShort {
                got: body.len(),
                need,
            });
        }
        let data_len = body.len() - need;
        let mut crc = [0u8; 4];
        check.compute(&body[..data_len], &mut crc);
        if crc[..need] != body[data_len..] {
            return Err(FrameError::CheckMismatch {
                carried: body[data_len..].to_vec(),
                computed: crc[..need].to_vec(),
            });
        }
        body.truncate(data_len);
        Ok(Frame { route, data: body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frame() -> Frame {
        Frame {
            route: vec![1, 4, 2],
            data: b"TH-Net".to_vec(),
        }
    }

    #[test]
    fn layout_is_head_data_check_eof() {
        let s = frame().encode(Check::Crc16);
        assert_eq!(&s[..3], &[Symbol(0x1FB), Symbol(0x1FE), Symbol(0x1FC)]);
        assert_eq!(s[3], Symbol::data(b'T'));
        assert_eq!(s.len(), 3 + 6 + 2 + 1);
        // CRC-16/IBM-3740 ("CCITT-FALSE") of "TH-Net", computed independently of `Check`.
        let crc = Crc::<u16>::new(&CRC_16_IBM_3740).checksum(b"TH-Net");
        assert_eq!(s[9], Symbol::data((crc >> 8) as u8));
        assert_eq!(s[10], Symbol::data(crc as u8));
        assert_eq!(*s.last().unwrap(), Symbol::EOF);
        // The standard check value of the catalogue, to pin the algorithm.
        assert_eq!(CRC16.checksum(b"123456789"), 0x29B1);
    }

    #[test]
    fn switch_stripping_leaves_a_valid_shorter_frame() {
        let s = frame().encode(Check::Crc16);
        let f = Frame::parse(&s[1..], Check::Crc16).unwrap();
        assert_eq!(f.route, vec![4, 2]);
        assert_eq!(f.data, b"TH-Net");
    }

    #[test]
    fn malformed_frames_are_typed_errors() {
        let good = frame().encode(Check::Crc16);
        assert_eq!(
            Frame::parse(&good[..good.len() - 1], Check::Crc16),
            Err(FrameError::MissingEof)
        );
        let mut trailing = good.clone();
        trailing.push(Symbol::data(0));
        assert_eq!(
            Frame::parse(&trailing, Check::Crc16),
            Err(FrameError::TrailingSymbols { at: good.len() })
        );
        let mut late_route = good.clone();
        late_route[5] = Symbol::route(0);
        assert_eq!(
            Frame::parse(&late_route, Check::Crc16),
            Err(FrameError::RouteInData { at: 5 })
        );
        let mut stop = good.clone();
        stop[4] = Symbol::STOP;
        assert!(matches!(
            Frame::parse(&stop, Check::Crc16),
            Err(FrameError::UnexpectedControl {
                at: 4,
                sym: Sym::Stop
            })
        ));
        assert!(matches!(
            Frame::parse(&[Symbol(0x150), Symbol::EOF], Check::None),
            Err(FrameError::Symbol { at: 0, .. })
        ));
        assert_eq!(
            Frame::parse(&[Symbol::data(1), Symbol::EOF], Check::Crc32),
            Err(FrameError::TooShort { got: 1, need: 4 })
        );
    }

    #[test]
    fn idle_fill_is_ignored() {
        let mut s = frame().encode(Check::Crc32);
        s.insert(4, Symbol::IDLE);
        assert_eq!(Frame::parse(&s, Check::Crc32).unwrap(), frame());
    }

    fn arb_frame() -> impl Strategy<Value = Frame> {
        (
            proptest::collection::vec(0u8..5, 0..8),
            proptest::collection::vec(any::<u8>(), 0..64),
        )
            .prop_map(|(route, data)| Frame { route, data })
    }

    fn arb_check() -> impl Strategy<Value = Check> {
        prop_oneof![Just(Check::None), Just(Check::Crc16), Just(Check::Crc32)]
    }

    proptest! {
        #[test]
        fn round_trip(f in arb_frame(), check in arb_check()) {
            prop_assert_eq!(Frame::parse(&f.encode(check), check), Ok(f));
        }

        /// Any single corrupted data byte (payload or check) is detected: a CRC detects all
        /// single-burst errors shorter than its width.
        #[test]
        fn single_byte_corruption_is_detected(
            f in arb_frame(), crc32 in any::<bool>(), pick in any::<prop::sample::Index>(),
            flip in 1u8..=255,
        ) {
            let check = if crc32 { Check::Crc32 } else { Check::Crc16 };
            let mut s = f.encode(check);
            let first = f.route.len();
            let at = first + pick.index(s.len() - 1 - first);
            s[at] = Symbol::data((s[at].0 as u8) ^ flip);
            prop_assert!(
                matches!(Frame::parse(&s, check), Err(FrameError::CheckMismatch { .. })),
                "undetected corruption"
            );
        }
    }
}
