//! The per-VI protocol engine shared by both providers: it turns posted descriptors into
//! frames on a [`Wire`], turns incoming frames into completions, and applies the reliability
//! rules ([`crate::rx_rules`], [`crate::tracker`]).
//!
//! Progress is made by the caller (in `*Done`, `*Wait` and `Post*`), like a user-level NIC
//! library: the only threads that move data through a VI are the consumer's. Acknowledgements
//! ride on outgoing data frames when there are any and are otherwise sent before the engine
//! blocks, or after [`ACK_EVERY`] unacknowledged frames, so a streaming sender is never
//! starved of acks. One exception, so a reliable send completes without its receiver's help:
//! the NIC's ack keeper thread sends an ack owed for more than one of its periods by a VI no
//! one holds ([`ViCore::keeper_visit`], [`crate::ACK_KEEPER_PERIOD`]).

use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::attrs::{Reliability, ViAttributes};
use crate::cq::{CqShared, WaitSource, WorkQueue};
use crate::descriptor::{Completion, Descriptor, Op, Segment};
use crate::error::{CompletionStatus, Result, ViaError};
use crate::frame::{FLAG_ACK, FLAG_IMM, HEADER_LEN, Header, Kind, PREFIX_MAX, payload_pad};
use crate::memory::{Access, RegionInner, RegionTable, TranslationCache};
use crate::rx_rules::{RxAction, decide};
use crate::tracker::SendTracker;
use crate::vi_state::{ViEvent, ViState};
use crate::wire::{SLICE, Wire};
use smallvec::{SmallVec, smallvec};

mod rx;
mod tx;

use tx::frame_prefix;

/// Send a standalone ack after this many unacknowledged data frames.
const ACK_EVERY: u32 = 16;
/// How long a wait that owes an ack waits for traffic before sending a standalone ack.
const ACK_DELAY: Duration = Duration::from_micros(50);
/// A blocked write fails after this long without progress (the peer stopped reading).
pub const STALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest a disconnect waits for the peer to copy payloads it reads from our memory
/// ([`crate::link::cma`]).
const CMA_LINGER: Duration = Duration::from_secs(2);
/// Clock-free polls of a polling link at the start of a wait (~10–20 µs: a ping-pong reply
/// comes within a few dozen; 4096 made a streaming soak 2–4× slower on a loaded machine by
/// spinning where the peer needed the CPU).
const FAST_POLLS: u32 = 512;

/// A translated, checked piece of registered memory.
#[derive(Clone)]
struct Slot {
    region: Arc<RegionInner>,
    offset: usize,
    len: usize,
}

/// The translated segments of one descriptor. Almost every descriptor has one segment: that
/// case is kept inline, so posting allocates nothing for it.
type Slots = SmallVec<[Slot; 1]>;

struct PostedRecv {
    desc: Descriptor,
    slots: Slots,
    cap: u64,
}

/// What to do when the payload of the current frame has been read.
enum OnDone {
    /// A send or RDMA write was placed; `recv` is the receive it consumed (a send, or an
    /// RDMA write with immediate data), completed with the header's length and immediate.
    Place {
        recv: Option<Descriptor>,
    },
    ReadResp,
    Discard {
        recv: Option<(Descriptor, CompletionStatus)>,
        nak: Option<CompletionStatus>,
    },
}

enum Rx {
    /// Reading a frame's header and the alignment padding after it ([`payload_pad`]).
    Header { buf: [u8; PREFIX_MAX], have: usize },
    Payload {
        hdr: Header,
        slots: Slots,
        done: usize,
        on_done: OnDone,
    },
    /// Reading the source address of a cross-memory-attach frame ([`crate::link::cma`]);
    /// then its payload is copied from the sender in one go.
    Cma {
        hdr: Header,
        slots: Slots,
        addr: [u8; crate::link::source::DESC_LEN],
        have: usize,
        on_done: OnDone,
    },
}

impl Rx {
    fn idle() -> Self {
        Rx::Header {
            buf: [0; PREFIX_MAX],
            have: 0,
        }
    }
}

pub(crate) struct ViCore {
    pub id: u32,
    pub attrs: ViAttributes,
    pub state: ViState,
    table: Arc<RegionTable>,
    tcache: TranslationCache,
    wire: Option<Wire>,
    tx_seq: u32,
    rx_expect: u32,
    /// Payload alignment of the link's byte stream ([`crate::link::Link::frame_alignment`]).
    align: u64,
    /// Stream offsets of the next frame this side sends and receives (handshake included),
    /// from which both sides derive the padding before each payload.
    tx_off: u64,
    rx_off: u64,
    ack_due: Option<u32>,
    /// `ack_due` as the ack keeper saw it on its last visit ([`ViCore::keeper_visit`]).
    keeper_seen: Option<u32>,
    unacked: u32,
    /// The newest cumulative ack that arrived on a data frame and is not yet applied to the
    /// send queue ([`ViCore::note_ack`]).
    ack_in: Option<u32>,
    tracker: SendTracker,
    reads: HashMap<u32, Slots>,
    recvs: VecDeque<PostedRecv>,
    send_done: VecDeque<Completion>,
    recv_done: VecDeque<Completion>,
    rx: Rx,
    scratch: Vec<u8>,
    /// Where a small frame is taken whole off the link ([`ViCore::step`]).
    small_rec: Box<[u8]>,
    /// The translation of the last receive the small-frame path consumed, kept for the next
    /// [`ViCore::post_recv`] to reuse: dropping it there would decrement its region's
    /// reference count (a locked instruction, ~8 ns here) between a message's arrival and
    /// its completion, and cloning it again for the next receive would increment it. A
    /// pingpong re-posts the same buffer, so neither happens.
    spare_slot: Option<Slot>,
    tx_buf: Vec<u8>,
    pub send_cq: Option<Arc<CqShared>>,
    pub recv_cq: Option<Arc<CqShared>>,
    pub break_reason: Option<String>,
    /// The peer as errors name it: its URL (client side) or `(client of <our URL>)`.
    pub peer: String,
    /// Frames whose payload the peer copied straight out of our memory: from a shared
    /// region ([`crate::shared_mem`]) or by cross-memory attach ([`crate::link::cma`]).
    pub single_copy_sends: u64,
    /// The regions of those not yet acknowledged (sends and RDMA writes), by sequence
    /// number, oldest first: kept alive (a deregistered region's bytes are not freed) until
    /// the peer has copied them.
    cma_pinned: VecDeque<(u32, Arc<RegionInner>)>,
    /// Shared regions an RDMA read was answered from by descriptor, by serial: kept alive
    /// until the VI ends (`engine::rx`, `answer_read_single_copy`).
    read_pinned: HashMap<u64, Arc<RegionInner>>,
}

/// How a fault reason starts when the link says the peer is gone; [`ViCore::fault`] names
/// the peer in it.
const PEER_GONE: &str = "peer gone";

fn io_err(e: io::Error) -> String {
    use io::ErrorKind::*;
    match e.kind() {
        UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe | NotConnected => {
            format!("{PEER_GONE} ({e})")
        }
        _ => e.to_string(),
    }
}

impl ViCore {
    pub fn new(id: u32, attrs: ViAttributes, table: Arc<RegionTable>) -> Self {
        ViCore {
            id,
            attrs,
            state: ViState::Idle,
            table,
            tcache: TranslationCache::default(),
            wire: None,
            tx_seq: 1,
            rx_expect: 1,
            align: 1,
            tx_off: 0,
            rx_off: 0,
            ack_due: None,
            keeper_seen: None,
            unacked: 0,
            ack_in: None,
            tracker: SendTracker::default(),
            reads: HashMap::new(),
            recvs: VecDeque::new(),
            send_done: VecDeque::new(),
            recv_done: VecDeque::new(),
            rx: Rx::idle(),
            scratch: vec![0; 64 * 1024],
            small_rec: vec![0; rx::SMALL_RECORD].into_boxed_slice(),
            spare_slot: None,
            tx_buf: Vec::new(),
            send_cq: None,
            recv_cq: None,
            break_reason: None,
            peer: "(unknown)".into(),
            single_copy_sends: 0,
            cma_pinned: VecDeque::new(),
            read_pinned: HashMap::new(),
        }
    }

    // ---- connection -------------------------------------------------------------------

    /// Client side: sends the request on a fresh link and waits for the answer.
    pub fn connect(
        &mut self,
        link: Box<dyn crate::link::Link>,
        disc: &[u8],
        timeout: Option<Duration>,
    ) -> Result<()> {
        self.state = self.state.on(ViEvent::RequestSent)?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut wire = Wire::new(link);
        let hdr = Header {
            imm: self.attrs.reliability.code(),
            handle: self.attrs.max_transfer_size,
            len: disc.len() as u32,
            ..Header::new(Kind::Connect)
        };
        let answer = wire
            .write_all(&[&hdr.encode(), disc], STALL_TIMEOUT)
            .and_then(|()| {
                let mut b = [0u8; HEADER_LEN];
                wire.read_exact_until(&mut b, deadline)?;
                Header::decode(&b).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
            });
        match answer {
            Ok(h) if h.kind == Kind::Accept && h.imm == self.attrs.reliability.code() => {
                self.attrs.max_transfer_size = self.attrs.max_transfer_size.min(h.handle);
                self.state = self.state.on(ViEvent::Accepted)?;
                // Sent: the request and its discriminator; received: the answer.
                self.align = wire.link.frame_alignment();
                wire.link.set_spin(self.attrs.spin);
                wire.link.on_connected();
                self.tx_off = (HEADER_LEN + disc.len()) as u64;
                self.rx_off = HEADER_LEN as u64;
                self.wire = Some(wire);
                Ok(())
            }
            Ok(h) if h.kind == Kind::Reject => {
                self.state = self.state.on(ViEvent::Rejected)?;
                Err(ViaError::Rejected)
            }
            Ok(_) => {
                self.state = self.state.on(ViEvent::Fault)?;
                Err(ViaError::ConnectionLost(
                    "unexpected answer to a connection request".into(),
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                self.state = self.state.on(ViEvent::Fault)?;
                Err(ViaError::Timeout)
            }
            Err(e) => {
                self.state = self.state.on(ViEvent::Fault)?;
                Err(ViaError::ConnectionLost(e.to_string()))
            }
        }
    }

    /// Server side: the request (carrying a `disc_len`-byte discriminator) was accepted on
    /// `wire`; answer and become connected.
    pub fn accept(&mut self, mut wire: Wire, peer_mts: u32, disc_len: usize) -> Result<()> {
        if self.state != ViState::Idle {
            return Err(ViaError::InvalidState(format!(
                "accept on a VI in state {:?}",
                self.state
            )));
        }
        self.attrs.max_transfer_size = self.attrs.max_transfer_size.min(peer_mts);
        let hdr = Header {
            imm: self.attrs.reliability.code(),
            handle: self.attrs.max_transfer_size,
            ..Header::new(Kind::Accept)
        };
        wire.write_all(&[&hdr.encode()], STALL_TIMEOUT)?;
        self.state = self.state.on(ViEvent::Accepted)?;
        // Received: the request and its discriminator; sent: the answer.
        self.align = wire.link.frame_alignment();
        wire.link.set_spin(self.attrs.spin);
        wire.link.on_connected();
        self.rx_off = (HEADER_LEN + disc_len) as u64;
        self.tx_off = HEADER_LEN as u64;
        self.wire = Some(wire);
        Ok(())
    }

    /// `VipDisconnect`: tells the peer, flushes everything pending, returns to `Idle`.
    pub fn disconnect(&mut self) -> Result<()> {
        // Settle what the peer is owed first: its reliable sends complete on our acks.
        self.progress();
        self.flush_ack();
        self.linger_for_single_copy_reads();
        if let Some(w) = &mut self.wire {
            let (prefix, n) = frame_prefix(
                &mut self.tx_off,
                self.align,
                &Header::new(Kind::Disconnect),
                0,
            );
            let _ = w.write_all(&[&prefix[..n]], Duration::from_millis(100));
        }
        self.state = self.state.on(ViEvent::Disconnect)?;
        self.wire = None;
        self.flush_all(None);
        Ok(())
    }

    /// A payload sent by cross-memory attach stays in our memory until the peer has copied
    /// it (its ack says so): a process that disconnects and exits right after posting such a
    /// send would otherwise take the bytes with it. Waits, at most [`CMA_LINGER`], for those
    /// acks, without taking any completion off the send queue.
    fn linger_for_single_copy_reads(&mut self) {
        let deadline = Instant::now() + CMA_LINGER;
        self.apply_acks();
        while !self.cma_pinned.is_empty() && Instant::now() < deadline {
            let Some(w) = &mut self.wire else { return };
            if let Err(e) = w.wait_briefly(Duration::from_millis(1)) {
                self.fault(io_err(e));
                return;
            }
            self.progress();
            self.apply_acks();
        }
    }

    fn flush_all(&mut self, transport_error: Option<String>) {
        // what the peer acknowledged completed, whatever happens to the rest
        self.apply_acks();
        // nobody will read those payloads any more
        self.cma_pinned.clear();
        if transport_error.is_some() {
            self.tracker.on_break();
        } else {
            self.tracker.on_flush();
        }
        self.reads.clear();
        while let Some(r) = self.recvs.pop_front() {
            self.push_recv_done(Completion::new(r.desc, CompletionStatus::Flushed, 0, None));
        }
        self.drain_tracker();
        self.rx = Rx::idle();
    }

    /// The VI breaks: reliability violated, peer gone, or a protocol error.
    fn fault(&mut self, reason: String) {
        let reason = match reason.strip_prefix(PEER_GONE) {
            Some(detail) => format!("peer {} gone{detail}", self.peer),
            None => reason,
        };
        if self.state == ViState::Connected {
            self.state = ViState::Error;
        }
        self.break_reason.get_or_insert(reason.clone());
        self.wire = None;
        self.flush_all(Some(reason));
    }

    // ---- completions ------------------------------------------------------------------

    fn drain_tracker(&mut self) {
        while let Some(c) = self.tracker.pop_done() {
            self.send_done.push_back(c);
            if let Some(cq) = &self.send_cq {
                cq.push(self.id, WorkQueue::Send);
            }
        }
    }

    /// The peer acknowledged every frame up to `upto`. The send completions this releases
    /// go to the send queue now only if a CQ must hear of them; otherwise when the consumer
    /// next looks at the send queue ([`ViCore::pop_done`], [`ViCore::send_done`]), so that
    /// building them is not on the path of the receive that carried the ack.
    fn on_ack(&mut self, upto: u32) {
        // an older ack noted earlier is covered by this one (acks are cumulative)
        self.ack_in = None;
        self.tracker.on_ack(upto);
        // cumulative: releases every pinned payload up to `upto` (sequence numbers wrap)
        while self
            .cma_pinned
            .front()
            .is_some_and(|(seq, _)| upto.wrapping_sub(*seq) as i32 >= 0)
        {
            self.cma_pinned.pop_front();
        }
        if self.send_cq.is_some() {
            self.drain_tracker();
        }
    }

    fn push_recv_done(&mut self, c: Completion) {
        self.recv_done.push_back(c);
        if let Some(cq) = &self.recv_cq {
            cq.push(self.id, WorkQueue::Recv);
        }
    }

    /// An ack carried by a data frame: applied to the send queue when the consumer next
    /// looks at it ([`ViCore::apply_acks`]: reaping, waiting, a flush) rather than between the
    /// frame's arrival and its receive's completion, unless a completion queue must hear of
    /// the sends it completes now. Acks are cumulative and arrive in order, so keeping the
    /// newest is enough.
    #[inline]
    fn note_ack(&mut self, upto: u32) {
        if self.send_cq.is_some() {
            self.on_ack(upto);
        } else {
            self.ack_in = Some(upto);
        }
    }

    /// Applies the ack [`ViCore::note_ack`] kept, if any.
    #[inline]
    fn apply_acks(&mut self) {
        if let Some(a) = self.ack_in.take() {
            self.on_ack(a);
        }
    }

    /// `VipSendDone`.
    pub fn send_done(&mut self) -> Option<Completion> {
        if let Some(c) = self.pop_done(WorkQueue::Send) {
            return Some(c);
        }
        self.progress();
        self.pop_done(WorkQueue::Send)
    }

    /// `VipRecvDone`.
    pub fn recv_done(&mut self) -> Option<Completion> {
        if self.recv_done.is_empty() {
            self.progress();
        }
        self.recv_done.pop_front()
    }

    /// True if queue `q` has a completion (no progress made; acked sends are released).
    fn has_done(&mut self, q: WorkQueue) -> bool {
        match q {
            WorkQueue::Send => {
                if self.send_done.is_empty() {
                    self.apply_acks();
                    self.drain_tracker();
                }
                !self.send_done.is_empty()
            }
            WorkQueue::Recv => !self.recv_done.is_empty(),
        }
    }

    /// The oldest completion of queue `q`, if any (no progress made).
    fn pop_done(&mut self, q: WorkQueue) -> Option<Completion> {
        if !self.has_done(q) {
            return None;
        }
        match q {
            WorkQueue::Send => self.send_done.pop_front(),
            WorkQueue::Recv => self.recv_done.pop_front(),
        }
    }

    /// `VipSendWait` / `VipRecvWait`: progress until the queue has a completion, the VI can
    /// no longer produce one, or the timeout passes.
    pub fn wait(&mut self, q: WorkQueue, timeout: Option<Duration>) -> Result<Completion> {
        // Fast path for polling links (shm): a ping-pong reply arrives within a microsecond
        // or so, so poll the engine a few thousand times first, without reading the clock
        // (two clock reads would cost about as much as the rest of the receive).
        if let Some(c) = self.pop_done(q) {
            return Ok(c);
        }
        // One poll before anything else: a message that is already there (an echoer that
        // fell behind, a stream) is taken without asking the link how to wait (a CPU-number
        // lookup) or reading the clock.
        if self.ack_due.is_none() && self.wire.is_some() {
            self.progress_until(q);
            if let Some(c) = self.pop_done(q) {
                return Ok(c);
            }
        }
        let fast = self.wire.as_ref().map_or(0, |w| w.link.fast_polls());
        if fast > 0 {
            for _ in 0..fast.min(FAST_POLLS) {
                if self.ack_due.is_some() || self.wire.is_none() {
                    break;
                }
                self.progress_until(q);
                if let Some(c) = self.pop_done(q) {
                    // Not after the pause below: a `pause` costs tens of cycles, on the
                    // critical path of the message that just arrived.
                    return Ok(c);
                }
                std::hint::spin_loop();
            }
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut delayed = false;
        // Wait first, then read: on tcp a read that finds nothing costs a system call, so
        // the loop is poll → read rather than read → poll → read.
        loop {
            if let Some(c) = self.pop_done(q) {
                return Ok(c);
            }
            let pending = match q {
                WorkQueue::Send => !self.tracker.is_empty(),
                // a receive being filled has left `recvs` but is still pending
                WorkQueue::Recv => {
                    !self.recvs.is_empty() || matches!(self.rx, Rx::Payload { .. } | Rx::Cma { .. })
                }
            };
            if self.wire.is_none() || !pending {
                // Nothing can complete: still handle what arrived (it may break the VI) and
                // return a completion that this produced, else say why.
                self.progress();
                if let Some(c) = self.pop_done(q) {
                    return Ok(c);
                }
                return Err(match self.state {
                    ViState::Error => ViaError::ConnectionLost(
                        self.break_reason
                            .clone()
                            .unwrap_or_else(|| "VI broken".into()),
                    ),
                    _ if !pending => ViaError::InvalidState("nothing posted on this queue".into()),
                    s => ViaError::InvalidState(format!("VI is {s:?}")),
                });
            }
            // Owe an ack? Give the peer ACK_DELAY to send something it can ride on (or that
            // we are waiting for) before paying for a standalone ack frame: in a stream the
            // next frame is usually already there.
            //
            // Never in the middle of a frame, though: its sender has already written (or is
            // writing) the rest and waits on nothing from us, so an ack now only costs a
            // frame and a wake-up on both sides; the frame's end comes first, and then its
            // receiver's next send (or the wait after it) carries the ack.
            let mid_frame = matches!(self.rx, Rx::Payload { .. } | Rx::Cma { .. });
            if self.ack_due.is_some() && !delayed && !mid_frame {
                delayed = true;
                if let Some(w) = &mut self.wire
                    && let Err(e) = w.wait_briefly(ACK_DELAY)
                {
                    self.fault(io_err(e));
                }
                self.progress_until(q);
                continue;
            }
            delayed = false;
            if !mid_frame {
                self.flush_ack();
            }
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => SLICE,
            };
            if left.is_zero() {
                self.progress();
                return self.pop_done(q).ok_or(ViaError::Timeout);
            }
            match self.wait_into_payload(left.min(SLICE)) {
                Some(Err(reason)) => self.fault(reason),
                // More of a large payload to come: block again rather than first try a read
                // that would find the socket empty (one wasted system call per segment).
                Some(Ok(())) if self.direct_read_pending() => continue,
                Some(Ok(())) => {}
                None => match self.wait_into_recv(left.min(SLICE)) {
                    Some(Err(reason)) => self.fault(reason),
                    Some(Ok(())) => {}
                    None => {
                        if let Some(w) = &mut self.wire
                            && let Err(e) = w.wait_readable(left.min(SLICE))
                        {
                            self.fault(io_err(e));
                        }
                    }
                },
            }
            self.progress_until(q);
        }
    }

    /// Like [`ViCore::progress`] but stops as soon as queue `q` has a completion: the read
    /// that would find the pipe empty is a wasted system call on tcp.
    fn progress_until(&mut self, q: WorkQueue) {
        while self.wire.is_some() {
            if self.has_done(q) {
                break;
            }
            match self.step() {
                Ok(true) => {}
                Ok(false) => break,
                Err(reason) => {
                    self.fault(reason);
                    break;
                }
            }
        }
        if self.unacked >= ACK_EVERY {
            self.flush_ack();
        }
    }

    /// What a completion queue's wait can block on until this VI has something
    /// ([`crate::cq::CompletionQueue::wait`]).
    pub(crate) fn wait_source(&self) -> WaitSource {
        match &self.wire {
            None => WaitSource::Unconnected,
            Some(w) if w.has_stashed() => WaitSource::Ready,
            Some(w) => w
                .link
                .readiness_fd()
                .map_or(WaitSource::Polling, WaitSource::Fd),
        }
    }

    /// Attribute snapshot for `VipQueryVi`.
    /// The ids of every descriptor posted and not yet handed back: sends in flight or
    /// completed, receives posted or completed.
    pub fn outstanding_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.tracker
            .ids()
            .chain(self.send_done.iter().map(|c| c.desc.id))
            .chain(self.recvs.iter().map(|r| r.desc.id))
            .chain(self.recv_done.iter().map(|c| c.desc.id))
    }

    pub fn query(&self) -> (ViState, ViAttributes, usize, usize) {
        (
            self.state,
            self.attrs,
            self.tracker.len() + self.send_done.len(),
            self.recvs.len(),
        )
    }
}
