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

/// One symbol slot on a link (8 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Wire {
    pub kind: Kind,
    /// Position of this symbol in its packet (0 = header).
    pub pos: u8,
    /// Length of the packet in symbols.
    pub len: u8,
    /// Send: phase code; echo: [`crate::protocol::Echo`] code; NOTIFY: status code; idle:
    /// 1 = stop (go-bit allocation, origin in `src`), 0 = go.
    pub status: u8,
    pub dst: u8,
    pub src: u8,
    /// Send and echo: the source's active-buffer slot (the transaction id).
    pub buf: u16,
}

impl Wire {
    pub const IDLE: Wire = Wire {
        kind: Kind::Idle,
        pos: 0,
        len: 0,
        status: 0,
        dst: 0,
        src: 0,
        buf: 0,
    };

    #[inline]
    pub fn is_idle(&self) -> bool {
        self.kind == Kind::Idle
    }

    #[inline]
    pub fn is_last(&self) -> bool {
        self.pos + 1 == self.len
    }

    /// Symbol `pos` of the packet this header describes.
    #[inline]
    pub fn at(mut self, pos: u8) -> Wire {
        self.pos = pos;
        self
    }
}

/// All nodes' bypass FIFOs in one flat, fixed-capacity array (no allocation after start).
/// Idles are never stored: the output re-creates the one idle required after every packet,
/// so extra idles on the input are what drains a FIFO.
pub struct BypassFifos {
    slots: Vec<Wire>,
    head: Vec<u32>,
    len: Vec<u32>,
    mask: u32,
}

impl BypassFifos {
    /// `nodes` FIFOs of at least `min_capacity` symbols each.
    pub fn new(nodes: usize, min_capacity: usize) -> Self {
        let cap = min_capacity.next_power_of_two();
        BypassFifos {
            slots: vec![Wire::IDLE; nodes * cap],
            head: vec![0; nodes],
            len: vec![0; nodes],
            mask: cap as u32 - 1,
        }
    }

    pub fn capacity(&self) -> usize {
        self.mask as usize + 1
    }

    #[inline]
    pub fn len(&self, node: usize) -> usize {
        self.len[node] as usize
    }

    #[inline]
    pub fn is_empty(&self, node: usize) -> bool {
        self.len[node] == 0
    }

    /// Appends; returns false (and drops nothing) when full.
    #[inline]
    pub fn push(&mut self, node: usize, w: Wire) -> bool {
        let len = self.len[node];
        if len > self.mask {
            return false;
        }
        let i = (self.head[node] + len) & self.mask;
        let base = node * self.capacity();
        self.slots[base + i as usize] = w;
        self.len[node] = len + 1;
        true
    }

    #[inline]
    pub fn pop(&mut self, node: usize) -> Option<Wire> {
        if self.len[node] == 0 {
            return None;
        }
        let h = self.head[node];
        let w = self.slots[node * self.capacity() + h as usize];
        self.head[node] = (h + 1) & self.mask;
        self.len[node] -= 1;
        Some(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_are_independent_bounded_and_ordered() {
        let mut f = BypassFifos::new(2, 3);
        assert_eq!(f.capacity(), 4);
        for p in 0..4 {
            assert!(f.push(1, Wire::IDLE.at(p)));
        }
        assert!(!f.push(1, Wire::IDLE));
        assert!(f.is_empty(0));
        for p in 0..4 {
            assert_eq!(f.pop(1).map(|w| w.pos), Some(p));
        }
        assert_eq!(f.pop(1), None);
        // Wrap-around keeps order.
        for round in 0..10u8 {
            f.push(0, Wire::IDLE.at(round));
            assert_eq!(f.pop(0).map(|w| w.pos), Some(round));
        }
    }

    #[test]
    fn wire_is_eight_bytes() {
        assert_eq!(std::mem::size_of::<Wire>(), 8);
    }
}
