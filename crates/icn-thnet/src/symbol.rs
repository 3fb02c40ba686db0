//! The 9-bit X-Link symbol and its codec.
//!
//! Every X-channel moves one 9-bit symbol per clock. The most significant bit (bit 8) tells
//! data from control (paper §2.2):
//!
//! | bits 8..0        | meaning                                     |
//! |------------------|---------------------------------------------|
//! | `0 dddd dddd`    | data byte `dddd dddd`                       |
//! | `1 0000 0000`    | `ID-IDLE`: fills an empty slot              |
//! | `1 0000 0001`    | `ID-STOP`: receiver asks the sender to stop |
//! | `1 0000 0010`    | `ID-GO`: receiver lets the sender resume    |
//! | `1 0000 0011`    | `ID-EOF`: end of a data frame               |
//! | `1 1111 1010` …  | `ID-FA` … `ID-FE`: leave the next switch by |
//! | `1 1111 1110`    | port A … E                                  |
//!
//! The paper does not give the control code points; these are ours (FA…FE are spelled in
//! hex so that a trace reads like the paper). Any other control code is a decoding error.

/// A port of an X-Switch, A..E as 0..4.
pub type Port = u8;

/// Number of ports of an X-Switch.
pub const PORTS: usize = 5;

/// Port letter for traces and diagnoses ("A".."E").
pub fn port_name(p: Port) -> char {
    (b'A' + p) as char
}

/// A raw 9-bit symbol as it travels on a channel (stored in a `u16`, bits 9..15 zero).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub struct Symbol(pub u16);

/// A decoded symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sym {
    Data(u8),
    Idle,
    Stop,
    Go,
    Eof,
    /// `ID-FA` .. `ID-FE`: route out of port 0..4.
    Route(Port),
}

/// A 9-bit value that is not a valid symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SymbolError {
    #[error("symbol {0:#05x} does not fit in 9 bits")]
    TooWide(u16),
    #[error("control code {0:#05x} is not IDLE, STOP, GO, EOF or FA..FE")]
    UnknownControl(u16),
}

const CONTROL: u16 = 0x100;
const ROUTE_BASE: u16 = 0x1FA;

impl Symbol {
    pub const IDLE: Symbol = Symbol(CONTROL);
    pub const STOP: Symbol = Symbol(CONTROL | 1);
    pub const GO: Symbol = Symbol(CONTROL | 2);
    pub const EOF: Symbol = Symbol(CONTROL | 3);

    pub const fn data(b: u8) -> Symbol {
        Symbol(b as u16)
    }

    /// `ID-FA` for port 0 … `ID-FE` for port 4. Ports ≥ 5 do not exist; callers validate.
    pub const fn route(p: Port) -> Symbol {
        Symbol(ROUTE_BASE + p as u16)
    }

    pub const fn is_data(self) -> bool {
        self.0 & CONTROL == 0
    }

    /// The output port of a routing character, without a full decode (hot loop).
    pub const fn route_port(self) -> Option<Port> {
        if self.0 >= ROUTE_BASE && self.0 < ROUTE_BASE + PORTS as u16 {
            Some((self.0 - ROUTE_BASE) as Port)
        } else {
            None
        }
    }

    /// Flow-control characters are consumed by the link, never stored in a FIFO.
    pub const fn is_flow_control(self) -> bool {
        self.0 == Self::STOP.0 || self.0 == Self::GO.0
    }

    pub fn decode(self) -> Result<Sym, SymbolError> {
        let v = self.0;
        if v > 0x1FF {
            return Err(SymbolError::TooWide(v));
        }
        if v & CONTROL == 0 {
            return Ok(Sym::Data(v as u8));
        }
        match v {
            _ if v == Self::IDLE.0 => Ok(Sym::Idle),
            _ if v == Self::STOP.0 => Ok(Sym::Stop),
            _ if v == Self::GO.0 => Ok(Sym::Go),
            _ if v == Self::EOF.0 => Ok(Sym::Eof),
            _ => self
                .route_port()
                .map(Sym::Route)
                .ok_or(SymbolError::UnknownControl(v)),
        }
    }
}

impl From<Sym> for Symbol {
    fn from(s: Sym) -> Symbol {
        match s {
            Sym::Data(b) => Symbol::data(b),
            Sym::Idle => Symbol::IDLE,
            Sym::Stop => Symbol::STOP,
            Sym::Go => Symbol::GO,
            Sym::Eof => Symbol::EOF,
            Sym::Route(p) => Symbol::route(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn table_rows() {
        assert_eq!(Symbol(0x041).decode(), Ok(Sym::Data(0x41)));
        assert_eq!(Symbol(0x0FF).decode(), Ok(Sym::Data(0xFF)));
        assert_eq!(Symbol(0x100).decode(), Ok(Sym::Idle));
        assert_eq!(Symbol(0x101).decode(), Ok(Sym::Stop));
        assert_eq!(Symbol(0x102).decode(), Ok(Sym::Go));
        assert_eq!(Symbol(0x103).decode(), Ok(Sym::Eof));
        assert_eq!(Symbol(0x1FA).decode(), Ok(Sym::Route(0)));
        assert_eq!(Symbol(0x1FE).decode(), Ok(Sym::Route(4)));
    }

    #[test]
    fn rejects_unknown_and_wide() {
        assert_eq!(
            Symbol(0x104).decode(),
            Err(SymbolError::UnknownControl(0x104))
        );
        assert_eq!(
            Symbol(0x1FF).decode(),
            Err(SymbolError::UnknownControl(0x1FF))
        );
        assert_eq!(
            Symbol(0x1F9).decode(),
            Err(SymbolError::UnknownControl(0x1F9))
        );
        assert_eq!(Symbol(0x200).decode(), Err(SymbolError::TooWide(0x200)));
    }

    #[test]
    fn msb_separates_data_from_control() {
        for v in 0..0x200u16 {
            assert_eq!(Symbol(v).is_data(), v < 0x100);
        }
        assert!(Symbol::STOP.is_flow_control() && Symbol::GO.is_flow_control());
        assert!(!Symbol::IDLE.is_flow_control() && !Symbol::EOF.is_flow_control());
    }

    proptest! {
        #[test]
        fn every_valid_symbol_round_trips(v in 0u16..0x200) {
            if let Ok(s) = Symbol(v).decode() {
                prop_assert_eq!(Symbol::from(s), Symbol(v));
            }
        }
    }
}
