//! 16-bit SCI symbols with their flag bit, and the protocol enumerations carried in them.
//!
//! A link moves one [`Symbol`] per cycle (2 ns): 16 data bits plus the flag line. icnlab's
//! framing convention (the paper does not fix one): the flag is **high on every symbol of a
//! packet except its last**, and low on the last symbol and on idles. A receiver therefore
//! finds the end of a packet without parsing its length, and a lone flag-low symbol between
//! packets is an idle.

/// One symbol on a link: 16 bits of data and the flag bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Symbol {
    pub bits: u16,
    pub flag: bool,
}

impl Symbol {
    /// The idle symbol (all zero, flag low).
    pub const IDLE: Symbol = Symbol {
        bits: 0,
        flag: false,
    };
}

/// `command.phase` of a send packet (IEEE 1596 queue-allocation phases).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Phase {
    /// First try.
    NoTry = 0,
    /// A retry without a reservation; receivers treat it like NOTRY. icnlab's senders never
    /// produce it (first tries are NOTRY), but receivers and the decoder accept it.
    DoTry = 1,
    /// Retry after BUSY_A: holds an A reservation.
    RetryA = 2,
    /// Retry after BUSY_B: holds a B reservation.
    RetryB = 3,
}

impl Phase {
    pub const ALL: [Phase; 4] = [Phase::NoTry, Phase::DoTry, Phase::RetryA, Phase::RetryB];

    /// The 2-bit code used on the wire.
    pub fn code(self) -> u16 {
        self as u16
    }

    pub fn from_code(code: u16) -> Phase {
        Phase::ALL[usize::from(code & 3)]
    }
}

/// Status of an echo, as the stripper writes it in place of a stripped send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Echo {
    /// Accepted into the input queue: the sender frees its copy.
    Done = 0,
    /// Rejected, retry with RETRY_A.
    BusyA = 1,
    /// Rejected, retry with RETRY_B.
    BusyB = 2,
}

impl Echo {
    pub const ALL: [Echo; 3] = [Echo::Done, Echo::BusyA, Echo::BusyB];
}

/// Receiver serve states; they cycle NA → A → NB → B → NA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum ServeState {
    /// Serving anyone with space (no A generation open).
    #[default]
    Na = 0,
    /// Serving only the A generation (RETRY_A).
    A = 1,
    /// Serving anyone with space (no B generation open).
    Nb = 2,
    /// Serving only the B generation (RETRY_B).
    B = 3,
}

impl ServeState {
    pub const ALL: [ServeState; 4] = [ServeState::Na, ServeState::A, ServeState::Nb, ServeState::B];

    pub fn from_bits(bits: u8) -> ServeState {
        ServeState::ALL[usize::from(bits & 3)]
    }

    /// The state this one changes to (the cycle NA → A → NB → B → NA).
    pub fn next(self) -> ServeState {
        ServeState::from_bits(self as u8 + 1)
    }
}

/// A serve-state change as a NOTIFY reports it: the 2-bit status codes of the paper
/// (00 NA→A, 01 A→NB, 10 NB→B, 11 B→NA). The code equals the *previous* state, and the new
/// state is `from.next()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StateChange {
    pub from: ServeState,
}

impl StateChange {
    /// The change out of `from`.
    pub fn from(from: ServeState) -> Self {
        StateChange { from }
    }

    /// The 2-bit NOTIFY status code.
    pub fn code(self) -> u16 {
        self.from as u16
    }

    pub fn from_code(code: u16) -> Self {
        StateChange {
            from: ServeState::from_bits(code as u8),
        }
    }

    /// The state the receiver is in after the change.
    pub fn to(self) -> ServeState {
        self.from.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec: status codes 00 NA→A, 01 A→NB, 10 NB→B, 11 B→NA.
    #[test]
    fn notify_status_codes_match_the_spec() {
        let rows = [
            (0b00, ServeState::Na, ServeState::A),
            (0b01, ServeState::A, ServeState::Nb),
            (0b10, ServeState::Nb, ServeState::B),
            (0b11, ServeState::B, ServeState::Na),
        ];
        for (code, from, to) in rows {
            let c = StateChange::from_code(code);
            assert_eq!(c.from, from);
            assert_eq!(c.to(), to);
            assert_eq!(StateChange::from(from).code(), code);
        }
    }

    #[test]
    fn phase_codes_roundtrip() {
        for p in Phase::ALL {
            assert_eq!(Phase::from_code(p.code()), p);
        }
    }
}
