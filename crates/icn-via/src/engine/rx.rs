//! The receive half of the engine: the non-blocking state machine that reads frames off the
//! wire, validates them, places payloads in registered memory and turns them into
//! completions, acks and NAKs (rules in [`crate::rx_rules`]).

use super::*;
use crate::frame::{PREFIX_MAX, payload_pad};
use crate::link::{Record, SourceRef};
use crate::memory::MemHandle;

/// Outstanding payload bytes from which a wait reads straight into the destination.
const DIRECT_READ_MIN: usize = 32 * 1024;
/// Largest link record (header and payload) the small-frame path takes in one copy.
pub(super) const SMALL_RECORD: usize = 256;

impl ViCore {
    /// Reads and handles every frame available without blocking.
    pub fn progress(&mut self) {
        while self.wire.is_some() {
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

    /// One non-blocking step of the receive state machine; `Ok(false)` when no bytes were
    /// available.
    pub(super) fn step(&mut self) -> std::result::Result<bool, String> {
        if let Some(r) = self.step_small() {
            return r;
        }
        let want = self.rx_prefix_len();
        let Some(wire) = self.wire.as_mut() else {
            return Ok(false);
        };
        match &mut self.rx {
            Rx::Header { buf, have } => {
                let n = wire.read_some(&mut buf[*have..want]).map_err(io_err)?;
                *have += n;
                if *have < want {
                    return Ok(n > 0);
                }
                let head = *buf.first_chunk::<HEADER_LEN>().ok_or("short header")?;
                self.rx = Rx::idle();
                let hdr = self.begin_frame(&head, want)?;
                self.on_header(hdr)?;
                Ok(true)
            }
            Rx::Payload {
                hdr, slots, done, ..
            } => {
                let total = hdr.len as usize;
                if *done < total {
                    let n = if slots.is_empty() {
                        let want = (total - *done).min(self.scratch.len());
                        wire.read_some(&mut self.scratch[..want]).map_err(io_err)?
                    } else {
                        // Find the slot holding byte `done` and read straight into it.
                        let mut skip = *done;
                        let slot = slots
                            .iter()
                            .find(|s| {
                                if skip < s.len {
                                    true
                                } else {
                                    skip -= s.len;
                                    false
                                }
                            })
                            .ok_or("payload longer than its destination")?;
                        let mut mem = slot.region.lock();
                        let start = slot.offset + skip;
                        // Never past this frame: a receive may be longer than its message,
                        // and the bytes after it belong to the next frame.
                        let end = (slot.offset + slot.len).min(start + (total - *done));
                        wire.read_some(&mut mem[start..end]).map_err(io_err)?
                    };
                    *done += n;
                    if *done < total {
                        return Ok(n > 0);
                    }
                }
                let Rx::Payload { hdr, on_done, .. } = std::mem::replace(&mut self.rx, Rx::idle())
                else {
                    unreachable!()
                };
                self.on_payload(hdr, on_done)?;
                Ok(true)
            }
            Rx::Cma { addr, have, .. } => {
                let n = wire.read_some(&mut addr[*have..]).map_err(io_err)?;
                *have += n;
                if *have < addr.len() {
                    return Ok(n > 0);
                }
                let Rx::Cma {
                    hdr,
                    slots,
                    addr,
                    on_done,
                    ..
                } = std::mem::replace(&mut self.rx, Rx::idle())
                else {
                    unreachable!()
                };
                self.copy_single(&hdr, &slots, SourceRef::decode(&addr)?)?;
                // (a read response is not a sequenced frame of the peer's: nothing to ack)
                if self.attrs.reliability == Reliability::ReliableDelivery
                    && hdr.kind != Kind::ReadResp
                {
                    self.note_delivered(hdr.seq);
                }
                self.on_payload(hdr, on_done)?;
                Ok(true)
            }
        }
    }

    /// The payload of a single-copy frame: `hdr.len` bytes from `src` in the sender (its
    /// address, or its shared region) into the destination slots (checked against the
    /// registration table like any other destination), in one copy per slot. No slots: the
    /// frame is being discarded, nothing to copy.
    fn copy_single(
        &mut self,
        hdr: &Header,
        slots: &[Slot],
        src: SourceRef,
    ) -> std::result::Result<(), String> {
        let wire = self.wire.as_mut().ok_or("link closed")?;
        let mut left = hdr.len as usize;
        let mut from = src;
        for s in slots {
            if left == 0 {
                break;
            }
            let k = s.len.min(left);
            let mut mem = s.region.lock();
            wire.link
                .single_copy_read(from, &mut mem[s.offset..s.offset + k])
                .map_err(io_err)?;
            left -= k;
            from = from.advance(k as u64);
        }
        if left > 0 && !slots.is_empty() {
            return Err("payload longer than its destination".into());
        }
        Ok(())
    }

    /// The small-frame path of [`ViCore::step`]: between frames, takes the next link record
    /// whole if it is small. `None` when it does not apply (a byte-stream link, a record too
    /// long, a frame half read): then the byte-stream path runs.
    fn step_small(&mut self) -> Option<std::result::Result<bool, String>> {
        if !matches!(self.rx, Rx::Header { have: 0, .. }) {
            return None;
        }
        let wire = self.wire.as_mut()?;
        // A buffer kept in the VI, not a fresh zeroed array: this runs on every poll.
        // Taken out for the call (`on_record` needs `&mut self`) and put back: a boxed slice
        // moves as a pointer.
        let mut rec = std::mem::take(&mut self.small_rec);
        let done = match wire.read_record(&mut rec) {
            Err(e) => Some(Err(io_err(e))),
            Ok(Record::Empty) => Some(Ok(false)),
            Ok(Record::Taken(n)) => Some(self.on_record(&rec[..n]).map(|()| true)),
            Ok(Record::Unsuitable) => None,
        };
        self.small_rec = rec;
        done
    }

    /// Handles one record taken whole off the link between frames. A send that is exactly
    /// this record and fits the first posted receive is delivered at once (the common small
    /// message: one copy out of the ring, one into the receive, no state-machine round
    /// trips). Anything else goes back to the byte-stream path, in order.
    fn on_record(&mut self, rec: &[u8]) -> std::result::Result<(), String> {
        let want = self.rx_prefix_len();
        if let (Some(head), Some(payload)) = (rec.first_chunk::<HEADER_LEN>(), rec.get(want..)) {
            let hdr = Header::decode(head).map_err(|e| format!("bad frame from peer: {e}"))?;
            if hdr.kind == Kind::Send
                && !hdr.by_cma()
                && hdr.len as usize == payload.len()
                && self.take_small_send(&hdr, payload)?
            {
                self.rx_off = self.rx_off.wrapping_add(rec.len() as u64);
                return Ok(());
            }
        }
        let wire = self.wire.as_mut().ok_or("link closed")?;
        wire.stash(rec).map_err(io_err)
    }

    /// The send branch of [`ViCore::on_header`] and [`ViCore::on_payload`] for a whole
    /// payload in hand, when the rules ([`decide`]) say "place": a receive is posted and
    /// long enough. Returns false, having changed nothing, otherwise (the general path then
    /// applies the rule that refuses the frame).
    fn take_small_send(
        &mut self,
        hdr: &Header,
        payload: &[u8],
    ) -> std::result::Result<bool, String> {
        if self
            .recvs
            .front()
            .is_none_or(|r| payload.len() as u64 > r.cap)
        {
            return Ok(false);
        }
        self.accept_data(hdr)?;
        let PostedRecv {
            desc, mut slots, ..
        } = self.recvs.pop_front().ok_or("receive vanished")?;
        let mut rest = payload;
        for s in &slots {
            let k = s.len.min(rest.len());
            s.region.lock()[s.offset..s.offset + k].copy_from_slice(&rest[..k]);
            rest = &rest[k..];
        }
        self.placed(hdr, Some(desc));
        // Kept for the next post_recv rather than dropped here (see `spare_slot`); an older
        // spare is dropped only if the consumer has not re-posted since (rare).
        if slots.len() == 1 {
            self.spare_slot = slots.pop();
        }
        Ok(true)
    }

    /// A data frame (send or RDMA write) arrived: take its piggy-backed ack, check that it is
    /// the next in sequence, and ack it now if the VI acks on delivery.
    // Always inlined, like `placed`: both are on the small-message path, where as calls
    // they cost ~60 instructions a message (callgrind of examples/swcost.rs).
    #[inline(always)]
    fn accept_data(&mut self, hdr: &Header) -> std::result::Result<(), String> {
        if let Some(a) = hdr.ack() {
            self.note_ack(a);
        }
        self.expect_seq(hdr.seq)?;
        // A cross-memory-attach frame is delivered when its copy is done: the ack releases
        // the sender's buffer ([`ViCore::copy_single`]).
        if self.attrs.reliability == Reliability::ReliableDelivery && !hdr.by_cma() {
            self.note_delivered(hdr.seq);
        }
        Ok(())
    }

    /// A data frame's payload is in place: ack it if the VI acks on reception, and complete
    /// the receive it consumed, if any, with the frame's length and immediate data.
    #[inline(always)]
    fn placed(&mut self, hdr: &Header, recv: Option<Descriptor>) {
        if self.attrs.reliability == Reliability::ReliableReception {
            self.note_delivered(hdr.seq);
        }
        if let Some(desc) = recv {
            let mut c = Completion::new(desc, CompletionStatus::Success, hdr.len, hdr.immediate());
            c.by_rdma_write = hdr.kind == Kind::RdmaWrite;
            self.push_recv_done(c);
        }
    }

    /// When much of the current payload is still outstanding, blocks up to `timeout` reading
    /// it straight into its destination: one read takes everything the kernel has, without
    /// the read-ahead copy. `None` when this does not apply (then wait normally).
    pub(super) fn wait_into_payload(
        &mut self,
        timeout: Duration,
    ) -> Option<std::result::Result<(), String>> {
        let wire = self.wire.as_mut()?;
        if wire.has_stashed() {
            return None;
        }
        let Rx::Payload {
            hdr, slots, done, ..
        } = &mut self.rx
        else {
            return None;
        };
        if slots.is_empty() || (hdr.len as usize) - *done < DIRECT_READ_MIN {
            return None;
        }
        let mut skip = *done;
        let slot = slots.iter().find(|s| {
            if skip < s.len {
                true
            } else {
                skip -= s.len;
                false
            }
        })?;
        let mut mem = slot.region.lock();
        let start = slot.offset + skip;
        let end = (slot.offset + slot.len).min(start + (hdr.len as usize - *done));
        match wire.link.wait_read(&mut mem[start..end], &mut [], timeout) {
            Ok(n) => {
                *done += n;
                Some(Ok(()))
            }
            Err(e) => Some(Err(io_err(e))),
        }
    }

    /// True if the current payload still has enough outstanding for
    /// [`ViCore::wait_into_payload`] to apply.
    pub(super) fn direct_read_pending(&self) -> bool {
        match &self.rx {
            Rx::Payload {
                hdr, slots, done, ..
            } => !slots.is_empty() && (hdr.len as usize) - *done >= DIRECT_READ_MIN,
            Rx::Header { .. } | Rx::Cma { .. } => false,
        }
    }

    /// Between frames, with a large receive posted, blocks up to `timeout` reading the next
    /// frame's header and, in the same system call, the start of its payload straight into
    /// that receive's buffer (where a send's payload goes), saving the copy out of the
    /// read-ahead buffer. Bytes that turn out not to belong there (another kind of frame,
    /// or frames after this one) move to the wire's stash, in order. Until a receive
    /// completes its buffer's contents are undefined (VIA), so the scratch use is allowed.
    /// `None` when this does not apply (then wait normally).
    pub(super) fn wait_into_recv(
        &mut self,
        timeout: Duration,
    ) -> Option<std::result::Result<(), String>> {
        if !matches!(self.rx, Rx::Header { have: 0, .. }) {
            return None;
        }
        let want = self.rx_prefix_len();
        let wire = self.wire.as_mut()?;
        if wire.has_stashed() {
            return None;
        }
        let slot = match &*self.recvs.front()?.slots {
            [s] if s.len >= DIRECT_READ_MIN => s.clone(),
            _ => return None,
        };
        let mut head = [0u8; PREFIX_MAX];
        let n = {
            let mut mem = slot.region.lock();
            match wire.link.wait_read(
                &mut head[..want],
                &mut mem[slot.offset..slot.offset + slot.len],
                timeout,
            ) {
                Ok(n) => n,
                Err(e) => return Some(Err(io_err(e))),
            }
        };
        if n < want {
            self.rx = Rx::Header { buf: head, have: n };
            return Some(Ok(()));
        }
        let early = n - want;
        Some(self.take_early(&head, want, &slot, early))
    }

    /// Handles a header read by [`ViCore::wait_into_recv`] whose frame's first `early` bytes
    /// (and maybe more frames) sit at the start of `slot`.
    fn take_early(
        &mut self,
        head: &[u8; PREFIX_MAX],
        prefix_len: usize,
        slot: &Slot,
        early: usize,
    ) -> std::result::Result<(), String> {
        let head = head.first_chunk::<HEADER_LEN>().ok_or("short header")?;
        let hdr = self.begin_frame(head, prefix_len)?;
        self.on_header(hdr)?;
        // Bytes already where the current payload wants them.
        let kept = match &mut self.rx {
            Rx::Payload {
                hdr, slots, done, ..
            } if *done == 0
                && slots.first().is_some_and(|s| {
                    Arc::ptr_eq(&s.region, &slot.region) && s.offset == slot.offset
                }) =>
            {
                let k = early.min(hdr.len as usize).min(slots[0].len);
                *done = k;
                k
            }
            _ => 0,
        };
        if kept < early
            && let Some(w) = self.wire.as_mut()
        {
            let mem = slot.region.lock();
            w.stash(&mem[slot.offset + kept..slot.offset + early])
                .map_err(io_err)?;
        }
        Ok(())
    }

    /// Bytes before the payload of the next frame received: its header and the alignment
    /// padding ([`payload_pad`]) at the receive stream offset.
    fn rx_prefix_len(&self) -> usize {
        HEADER_LEN + payload_pad(self.rx_off, self.align)
    }

    /// Decodes the header of a frame whose prefix (header and padding) was `prefix_len`
    /// bytes, and moves the receive stream offset past the whole frame.
    fn begin_frame(
        &mut self,
        head: &[u8; HEADER_LEN],
        prefix_len: usize,
    ) -> std::result::Result<Header, String> {
        let hdr = Header::decode(head).map_err(|e| format!("bad frame from peer: {e}"))?;
        self.rx_off = self
            .rx_off
            .wrapping_add((prefix_len + hdr.wire_len()) as u64);
        Ok(hdr)
    }

    fn note_delivered(&mut self, seq: u32) {
        self.ack_due = Some(seq);
        self.unacked += 1;
    }

    fn on_header(&mut self, hdr: Header) -> std::result::Result<(), String> {
        let rel = self.attrs.reliability;
        let (slots, on_done) = match hdr.kind {
            Kind::Send | Kind::RdmaWrite => {
                self.accept_data(&hdr)?;
                let is_send = hdr.kind == Kind::Send;
                let target = if is_send {
                    Ok(None)
                } else if !self.attrs.enable_rdma_write {
                    Err(CompletionStatus::RdmaProtectionError)
                } else {
                    let span = Segment::new(MemHandle(hdr.handle), hdr.offset, hdr.len);
                    self.slot(span, Access::RemoteWrite).map(Some)
                };
                let needs_recv = is_send || hdr.immediate().is_some();
                let cap = self.recvs.front().map(|r| r.cap);
                match decide(
                    rel,
                    needs_recv,
                    cap,
                    is_send,
                    u64::from(hdr.len),
                    target.as_ref().map(|_| ()).map_err(|e| *e),
                ) {
                    RxAction::Place { consume_recv } => {
                        let recv = if consume_recv {
                            self.recvs.pop_front()
                        } else {
                            None
                        };
                        if is_send {
                            let r = recv.ok_or("receive vanished")?;
                            (r.slots, OnDone::Place { recv: Some(r.desc) })
                        } else {
                            let slot = target.ok().flatten().ok_or("target vanished")?;
                            let recv = recv.map(|r| r.desc);
                            (smallvec![slot], OnDone::Place { recv })
                        }
                    }
                    RxAction::Discard { recv_status, nak } => {
                        let recv =
                            recv_status.and_then(|st| self.recvs.pop_front().map(|r| (r.desc, st)));
                        (Slots::new(), OnDone::Discard { recv, nak })
                    }
                }
            }
            Kind::ReadReq => {
                if let Some(a) = hdr.ack() {
                    self.on_ack(a);
                }
                self.expect_seq(hdr.seq)?;
                return self.answer_read(hdr);
            }
            Kind::ReadResp => {
                let slots = self
                    .reads
                    .remove(&hdr.seq)
                    .ok_or("read response for no pending read")?;
                if hdr.aux != 0 {
                    let st = CompletionStatus::from_code(hdr.aux)
                        .unwrap_or(CompletionStatus::RdmaProtectionError);
                    self.tracker.on_read_done(hdr.seq, st);
                    self.drain_tracker();
                    return Err(format!("peer refused RDMA read with {st:?}"));
                }
                let want: usize = slots.iter().map(|s| s.len).sum();
                if want != hdr.len as usize {
                    return Err("read response length differs from the request".into());
                }
                (slots, OnDone::ReadResp)
            }
            Kind::Ack => {
                self.on_ack(hdr.aux);
                return Ok(());
            }
            Kind::Nak => {
                let st = CompletionStatus::from_code(hdr.aux)
                    .unwrap_or(CompletionStatus::TransportError);
                self.tracker.on_nak(hdr.seq, st);
                self.drain_tracker();
                return Err(format!("peer refused frame {} with {st:?}", hdr.seq));
            }
            Kind::Disconnect => {
                self.state = self
                    .state
                    .on(ViEvent::PeerDisconnected)
                    .unwrap_or(ViState::Idle);
                self.wire = None;
                self.break_reason = Some("peer disconnected".into());
                self.flush_all(None);
                return Ok(());
            }
            Kind::Connect | Kind::Accept | Kind::Reject => {
                return Err(format!("unexpected {:?} on a connected VI", hdr.kind));
            }
        };
        if hdr.by_cma() {
            // a send or RDMA write whose payload the sender left in its own memory
            self.rx = Rx::Cma {
                hdr,
                slots,
                addr: [0; crate::link::source::DESC_LEN],
                have: 0,
                on_done,
            };
            return Ok(());
        }
        self.rx = Rx::Payload {
            hdr,
            slots,
            done: 0,
            on_done,
        };
        if hdr.len == 0 {
            // Complete zero-length frames now rather than on the next read.
            let Rx::Payload { hdr, on_done, .. } = std::mem::replace(&mut self.rx, Rx::idle())
            else {
                unreachable!()
            };
            self.on_payload(hdr, on_done)?;
        }
        Ok(())
    }

    fn expect_seq(&mut self, seq: u32) -> std::result::Result<(), String> {
        if seq != self.rx_expect {
            return Err(format!(
                "frame {seq} out of order, expected {}",
                self.rx_expect
            ));
        }
        self.rx_expect = self.rx_expect.wrapping_add(1);
        Ok(())
    }

    fn answer_read(&mut self, req: Header) -> std::result::Result<(), String> {
        let target = if self.attrs.enable_rdma_read {
            let span = Segment::new(MemHandle(req.handle), req.offset, req.aux);
            self.slot(span, Access::RemoteRead)
        } else {
            Err(CompletionStatus::RdmaProtectionError)
        };
        match target {
            Ok(slot) => {
                let resp = Header {
                    seq: req.seq,
                    len: req.aux,
                    ..Header::new(Kind::ReadResp)
                };
                if let Some(sent) = self.answer_read_single_copy(resp, &slot) {
                    return sent.map_err(io_err);
                }
                self.send_frame(&resp, &[slot]).map_err(io_err)
            }
            Err(st) => {
                let resp = Header {
                    seq: req.seq,
                    aux: st.code(),
                    ..Header::new(Kind::ReadResp)
                };
                let _ = self.send_frame(&resp, &[]);
                Err(format!("refused RDMA read with {st:?}"))
            }
        }
    }

    /// Answers an RDMA read with a descriptor of the source instead of its bytes when the
    /// source is in a shared region the peer maps and the read is large enough: the
    /// requester copies straight from our region into its own ([`crate::shared_mem`]).
    /// `None`: answer through the ring.
    ///
    /// A read response is not acknowledged, so the region is pinned (kept alive, with its
    /// fd open, even if deregistered meanwhile) until the VI ends: an fd number is never
    /// reused for another region while the peer may still open it.
    fn answer_read_single_copy(&mut self, resp: Header, slot: &Slot) -> Option<io::Result<()>> {
        let min = self.attrs.single_copy_min as usize;
        if min == 0 || slot.len < min {
            return None;
        }
        let (fd, serial) = RegionInner::shared_source(&slot.region.lock())?;
        let wire = self.wire.as_mut()?;
        if !wire.link.shared_send_ok() {
            return None;
        }
        let desc = SourceRef::Shared {
            fd,
            serial,
            offset: slot.offset as u64,
        }
        .encode();
        let hdr = Header {
            flags: crate::frame::FLAG_CMA,
            ..resp
        };
        let (prefix, n) = frame_prefix(&mut self.tx_off, self.align, &hdr, desc.len());
        let sent = wire.write_all(&[&prefix[..n], &desc], STALL_TIMEOUT);
        self.single_copy_sends += 1;
        self.read_pinned
            .entry(serial)
            .or_insert_with(|| slot.region.clone());
        Some(sent)
    }

    fn on_payload(&mut self, hdr: Header, on_done: OnDone) -> std::result::Result<(), String> {
        match on_done {
            OnDone::Place { recv } => self.placed(&hdr, recv),
            OnDone::ReadResp => {
                self.tracker
                    .on_read_done(hdr.seq, CompletionStatus::Success);
                self.drain_tracker();
            }
            OnDone::Discard { recv, nak } => {
                if let Some((desc, st)) = recv {
                    self.push_recv_done(Completion::new(desc, st, 0, None));
                }
                if let Some(st) = nak {
                    self.ack_due = None;
                    let h = Header {
                        seq: hdr.seq,
                        aux: st.code(),
                        ..Header::new(Kind::Nak)
                    };
                    let _ = self.send_frame(&h, &[]);
                    return Err(format!("refused frame {} from peer with {st:?}", hdr.seq));
                }
            }
        }
        Ok(())
    }
}
