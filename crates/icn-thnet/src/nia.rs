//! The X-NIA endpoint: a send queue, frame splitting, a DMA delay, and a receiver that
//! checks every frame it accepts.
//!
//! Sending: a message becomes eligible `dma_delay` cycles after it was created (the NIA
//! fetches it from host memory by DMA). It is cut into frames of at most `frame_size`
//! payload bytes; each frame is `Head | header | payload | CRC | EOF`, where the 6-byte header
//! `[source u16 | pair sequence u32]` (big-endian) lets the receiver check order and
//! exactly-once delivery. One symbol leaves per cycle unless the switch has said `ID-STOP`.
//!
//! Receiving: the NIA sinks one symbol per cycle (it DMAs to host memory), so it never has to
//! stop its switch. At `ID-EOF` it parses the frame with [`Frame::parse`] (CRC), checks that
//! the head is empty (it was not misrouted), that the sequence number is the next one of
//! that source (in order, no loss, no duplicate) and that the payload bytes are the ones the
//! source generated.

use crate::frame::{Check, Frame};
use crate::symbol::Symbol;
use crate::topology::Topology;
use std::collections::VecDeque;

/// Bytes of the per-frame header.
pub const HEADER: usize = 6;

/// Payload byte `i` of frame `seq` from `src` (any fixed function works: a cheap hash).
pub fn payload_byte(src: usize, seq: u32, i: usize) -> u8 {
    let x = (src as u64) << 40 ^ u64::from(seq) << 16 ^ i as u64;
    (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
}

#[derive(Clone, Copy, Debug)]
struct Msg {
    dst: usize,
    size: u32,
    created: u64,
}

/// A frame the NIA has just started to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Started {
    pub dst: usize,
    pub seq: u32,
    /// Payload bytes in this frame.
    pub bytes: u32,
    /// `Some(creation cycle)` when this is the last frame of its message.
    pub last_of: Option<u64>,
}

/// A frame the NIA has accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Delivered {
    pub src: usize,
    pub seq: u32,
    pub bytes: u32,
}

#[derive(Clone, Debug)]
pub struct Nia {
    pub id: usize,
    frame_size: u32,
    check: Check,
    dma_delay: u64,
    queue: VecDeque<Msg>,
    /// Payload bytes of the front message already framed.
    framed: u32,
    tx: Vec<Symbol>,
    tx_pos: usize,
    /// The switch's last flow-control character was `ID-STOP`.
    pub stopped: bool,
    next_seq: Vec<u32>,
    rx: Vec<Symbol>,
    expect_seq: Vec<u32>,
    scratch: Vec<u8>,
}

impl Nia {
    pub fn new(id: usize, nias: usize, frame_size: u32, check: Check, dma_delay: u64) -> Nia {
        Nia {
            id,
            frame_size,
            check,
            dma_delay,
            queue: VecDeque::new(),
            framed: 0,
            tx: Vec::new(),
            tx_pos: 0,
            stopped: false,
            next_seq: vec![0; nias],
            rx: Vec::new(),
            expect_seq: vec![0; nias],
            scratch: Vec::new(),
        }
    }

    /// Queues a message created now.
    pub fn submit(&mut self, dst: usize, size: u32, created: u64) {
        self.queue.push_back(Msg { dst, size, created });
    }

    /// Messages waiting or being sent.
    pub fn backlog(&self) -> usize {
        self.queue.len()
    }

    /// A frame is partly sent.
    #[inline]
    pub fn mid_frame(&self) -> bool {
        self.tx_pos < self.tx.len()
    }

    /// If idle and a message is eligible, composes its next frame. (Called for every NIA every
    /// cycle: the common "nothing to start" answer is decided here, inlined in the caller.)
    #[inline]
    pub fn start_frame(&mut self, now: u64, topo: &Topology) -> Option<Started> {
        if self.mid_frame()
            || self
                .queue
                .front()
                .is_none_or(|m| now < m.created + self.dma_delay)
        {
            return None;
        }
        self.compose_frame(now, topo)
    }

    #[inline(never)]
    fn compose_frame(&mut self, now: u64, topo: &Topology) -> Option<Started> {
        if self.mid_frame() {
            return None;
        }
        let m = *self.queue.front()?;
        if now < m.created + self.dma_delay {
            return None;
        }
        let bytes = self.frame_size.min(m.size - self.framed);
        let seq = self.next_seq[m.dst];
        self.next_seq[m.dst] = seq.wrapping_add(1);
        self.scratch.clear();
        self.scratch
            .extend_from_slice(&(self.id as u16).to_be_bytes());
        self.scratch.extend_from_slice(&seq.to_be_bytes());
        self.scratch
            .extend((0..bytes as usize).map(|i| payload_byte(self.id, seq, i)));
        self.tx.clear();
        self.tx
            .extend(topo.route(self.id, m.dst).iter().map(|&p| Symbol::route(p)));
        self.tx
            .extend(self.scratch.iter().map(|&b| Symbol::data(b)));
        let mut crc = [0u8; 4];
        let k = self.check.compute(&self.scratch, &mut crc);
        self.tx.extend(crc[..k].iter().map(|&b| Symbol::data(b)));
        self.tx.push(Symbol::EOF);
        self.tx_pos = 0;
        self.framed += bytes;
        let last_of = (self.framed == m.size).then_some(m.created);
        if last_of.is_some() {
            self.queue.pop_front();
            self.framed = 0;
        }
        Some(Started {
            dst: m.dst,
            seq,
            bytes,
            last_of,
        })
    }

    /// This cycle's outgoing symbol (`ID-IDLE` when stopped or idle).
    #[inline]
    pub fn transmit(&mut self) -> Symbol {
        if self.stopped || !self.mid_frame() {
            return Symbol::IDLE;
        }
        let s = self.tx[self.tx_pos];
        self.tx_pos += 1;
        s
    }

    /// Accepts one incoming symbol; at `ID-EOF`, the checked frame.
    pub fn receive(&mut self, s: Symbol) -> Result<Option<Delivered>, String> {
        if s == Symbol::STOP {
            self.stopped = true;
            return Ok(None);
        }
        if s == Symbol::GO {
            self.stopped = false;
            return Ok(None);
        }
        if s == Symbol::IDLE {
            return Ok(None);
        }
        self.rx.push(s);
        if s != Symbol::EOF {
            return Ok(None);
        }
        let parsed = Frame::parse(&self.rx, self.check);
        self.rx.clear();
        let f = parsed.map_err(|e| format!("n{}: corrupt frame: {e}", self.id))?;
        if !f.route.is_empty() {
            return Err(format!(
                "n{}: frame arrived with {} routing characters left",
                self.id,
                f.route.len()
            ));
        }
        if f.data.len() < HEADER {
            return Err(format!(
                "n{}: frame of {} bytes has no header",
                self.id,
                f.data.len()
            ));
        }
        let src = usize::from(u16::from_be_bytes([f.data[0], f.data[1]]));
        let seq = u32::from_be_bytes([f.data[2], f.data[3], f.data[4], f.data[5]]);
        let want = self
            .expect_seq
            .get_mut(src)
            .ok_or_else(|| format!("n{}: frame from unknown source {src}", self.id))?;
        if seq != *want {
            return Err(format!(
                "n{}: from n{src} got frame {seq}, expected {want} (order/loss/duplicate)",
                self.id
            ));
        }
        *want = want.wrapping_add(1);
        if let Some(i) = f.data[HEADER..]
            .iter()
            .enumerate()
            .position(|(i, &b)| b != payload_byte(src, seq, i))
        {
            return Err(format!(
                "n{}: frame {seq} from n{src}: payload byte {i} differs",
                self.id
            ));
        }
        Ok(Some(Delivered {
            src,
            seq,
            bytes: (f.data.len() - HEADER) as u32,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(a: &mut Nia, b: &mut Nia, topo: &Topology, now: u64) -> Vec<Delivered> {
        let mut got = Vec::new();
        for _ in 0..1000 {
            a.start_frame(now, topo);
            let s = a.transmit();
            // Strip the single routing character, as the one switch would.
            if s.route_port().is_none()
                && let Some(d) = b.receive(s).unwrap()
            {
                got.push(d);
            }
        }
        got
    }

    #[test]
    fn splits_into_frames_and_checks_them() {
        let topo = Topology::from_spec("star").unwrap();
        let mut a = Nia::new(0, 5, 4, Check::Crc16, 10);
        let mut b = Nia::new(3, 5, 4, Check::Crc16, 0);
        a.submit(3, 10, 0);
        assert_eq!(a.start_frame(9, &topo), None, "DMA not done");
        let got = drain(&mut a, &mut b, &topo, 10);
        let bytes: Vec<u32> = got.iter().map(|d| d.bytes).collect();
        assert_eq!(bytes, vec![4, 4, 2]);
        assert!(
            got.iter()
                .enumerate()
                .all(|(i, d)| d.seq == i as u32 && d.src == 0)
        );
    }

    #[test]
    fn out_of_order_or_corrupt_frames_are_errors() {
        let topo = Topology::from_spec("star").unwrap();
        let mut a = Nia::new(0, 5, 8, Check::Crc16, 0);
        a.submit(3, 8, 0);
        a.start_frame(0, &topo);
        let frame: Vec<Symbol> = std::iter::from_fn(|| a.mid_frame().then(|| a.transmit()))
            .skip(1)
            .collect();
        let mut b = Nia::new(3, 5, 8, Check::Crc16, 0);
        let feed = |b: &mut Nia, f: &[Symbol]| f.iter().map(|&s| b.receive(s)).last().unwrap();
        assert!(feed(&mut b, &frame).unwrap().is_some());
        assert!(
            feed(&mut b, &frame).unwrap_err().contains("expected 1"),
            "duplicate"
        );
        let mut bad = frame.clone();
        bad[8] = Symbol::data(bad[8].0 as u8 ^ 1);
        let mut c = Nia::new(3, 5, 8, Check::Crc16, 0);
        assert!(feed(&mut c, &bad).unwrap_err().contains("corrupt"));
    }
}
