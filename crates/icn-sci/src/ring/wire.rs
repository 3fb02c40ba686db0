//! What moves on the simulated links, and the bypass FIFOs.
//!
//! The simulator moves one [`Wire`] symbol per link per cycle. A `Wire` is the *meaning* of a
//! 16-bit symbol (packet kind, position in the packet, the header fields a node acts on)
//! rather than its bits: encoding/decoding and CRCs are exercised by
//! [`crate::protocol::packet`], and would only cost time here without changing any timing.

/// Kind of a symbol on a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Kind {
    #[default]
    Idle = 0,
    Send = 1,
    Echo = 2,
    Notify = 3,
}

/// One symbol slot on a link, packed in one `u64` so that the hot loop moves and compares
/// a machine word: bits 0–1 kind (2–7 zero), 8–15 position in the packet (0 = header), 16–23 packet
/// length in symbols, 24–31 status (send: phase code; echo: [`crate::protocol::Echo`] code;
/// NOTIFY: status code), 32–39 target node, 40–47 source node, 48–63 the source's
/// active-buffer slot (send and echo: the transaction id).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Wire(u64);

impl Wire {
    pub const IDLE: Wire = Wire(0);

    /// Header symbol (position 0) of a packet.
    #[inline]
    pub const fn header(kind: Kind, len: u8, status: u8, dst: u8, src: u8, buf: u16) -> Wire {
        Wire(
            kind as u64
                | (len as u64) << 16
                | (status as u64) << 24
                | (dst as u64) << 32
                | (src as u64) << 40
                | (buf as u64) << 48,
        )
    }

    #[inline]
    pub fn kind(self) -> Kind {
        match self.0 & 3 {
            0 => Kind::Idle,
            1 => Kind::Send,
            2 => Kind::Echo,
            _ => Kind::Notify,
        }
    }

    #[inline]
    pub fn pos(self) -> u8 {
        (self.0 >> 8) as u8
    }

    #[inline]
    pub fn packet_len(self) -> u8 {
        (self.0 >> 16) as u8
    }

    #[inline]
    pub fn status(self) -> u8 {
        (self.0 >> 24) as u8
    }

    #[inline]
    pub fn dst(self) -> u8 {
        (self.0 >> 32) as u8
    }

    #[inline]
    pub fn src(self) -> u8 {
        (self.0 >> 40) as u8
    }

    #[inline]
    pub fn buf(self) -> u16 {
        (self.0 >> 48) as u16
    }

    #[inline]
    pub fn is_idle(self) -> bool {
        self.0 & 3 == Kind::Idle as u64
    }

    #[inline]
    pub fn is_last(self) -> bool {
        self.pos().wrapping_add(1) == self.packet_len()
    }

    /// Symbol `pos` of the packet this header describes.
    #[inline]
    pub fn at(self, pos: u8) -> Wire {
        Wire(self.0 & !0xff00 | u64::from(pos) << 8)
    }
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire")
            .field("kind", &self.kind())
            .field("pos", &self.pos())
            .field("len", &self.packet_len())
            .field("status", &self.status())
            .field("dst", &self.dst())
            .field("src", &self.src())
            .field("buf", &self.buf())
            .finish()
    }
}

/// Where one node's bypass FIFO starts and how full it is; kept in the node's hot state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FifoCursor {
    head: u32,
    len: u32,
}

impl FifoCursor {
    #[inline]
    pub fn len(self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn is_empty(self) -> bool {
        self.len == 0
    }
}

/// All nodes' bypass FIFOs in one flat, fixed-capacity array (no allocation after start);
/// each node's [`FifoCursor`] says where its FIFO is. Idles are never stored: the output
/// re-creates the one idle required after every packet, so extra idles on the input are what
/// drains a FIFO.
pub struct BypassFifos {
    slots: Vec<Wire>,
    mask: u32,
    /// log2 of the capacity: FIFO `node` starts at `node << shift`.
    shift: u32,
}

impl BypassFifos {
    /// `nodes` FIFOs of at least `min_capacity` symbols each.
    pub fn new(nodes: usize, min_capacity: usize) -> Self {
        let cap = min_capacity.next_power_of_two();
        BypassFifos {
            slots: vec![Wire::IDLE; nodes * cap],
            mask: cap as u32 - 1,
            shift: cap.trailing_zeros(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.mask as usize + 1
    }

    /// Appends to `node`'s FIFO; returns false (and drops nothing) when full.
    #[inline]
    pub fn push(&mut self, node: usize, cur: &mut FifoCursor, w: Wire) -> bool {
        if cur.len > self.mask {
            return false;
        }
        let i = (cur.head + cur.len) & self.mask;
        self.slots[(node << self.shift) + i as usize] = w;
        cur.len += 1;
        true
    }

    #[inline]
    pub fn pop(&self, node: usize, cur: &mut FifoCursor) -> Option<Wire> {
        if cur.len == 0 {
            return None;
        }
        let w = self.slots[(node << self.shift) + cur.head as usize];
        cur.head = (cur.head + 1) & self.mask;
        cur.len -= 1;
        Some(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_are_independent_bounded_and_ordered() {
        let mut f = BypassFifos::new(2, 3);
        let (mut c0, mut c1) = (FifoCursor::default(), FifoCursor::default());
        assert_eq!(f.capacity(), 4);
        let w = Wire::header(Kind::Send, 40, 3, 1, 2, 7);
        for p in 0..4 {
            assert!(f.push(1, &mut c1, w.at(p)));
        }
        assert!(!f.push(1, &mut c1, Wire::IDLE));
        assert!(c0.is_empty() && c1.len() == 4);
        // Node 0's FIFO is separate storage.
        assert!(f.push(0, &mut c0, w.at(99)));
        for p in 0..4 {
            assert_eq!(f.pop(1, &mut c1).map(|w| w.pos()), Some(p));
        }
        assert_eq!(f.pop(1, &mut c1), None);
        assert_eq!(f.pop(0, &mut c0).map(|w| w.pos()), Some(99));
        // Wrap-around keeps order.
        for round in 0..10u8 {
            f.push(0, &mut c0, w.at(round));
            assert_eq!(f.pop(0, &mut c0).map(|w| w.pos()), Some(round));
        }
    }

    #[test]
    fn wire_fields_roundtrip() {
        let w = Wire::header(Kind::Echo, 4, 2, 63, 17, 1023).at(3);
        assert_eq!(
            (w.kind(), w.pos(), w.packet_len(), w.status()),
            (Kind::Echo, 3, 4, 2)
        );
        assert_eq!((w.dst(), w.src(), w.buf()), (63, 17, 1023));
        assert!(w.is_last() && !w.is_idle());
        assert!(Wire::IDLE.is_idle() && Wire::IDLE.kind() == Kind::Idle);
        assert_eq!(std::mem::size_of::<Wire>(), 8);
    }
}
