//! The send half of the engine: posting descriptors (checked and translated against the
//! registration table) and writing them as frames on the wire, with any ack that is owed
//! riding along.

use super::*;
use crate::link::SourceRef;

/// The header of a frame with `payload_len` payload bytes and the padding that aligns the
/// payload ([`payload_pad`]), for a frame starting at stream offset `*tx_off`, which moves
/// past the whole frame. Returns the buffer and the prefix length.
#[inline]
pub(super) fn frame_prefix(
    tx_off: &mut u64,
    align: u64,
    hdr: &Header,
    payload_len: usize,
) -> ([u8; PREFIX_MAX], usize) {
    let pad = payload_pad(*tx_off, align);
    let mut prefix = [0u8; PREFIX_MAX];
    prefix[..HEADER_LEN].copy_from_slice(&hdr.encode());
    let n = HEADER_LEN + pad;
    *tx_off = tx_off.wrapping_add((n + payload_len) as u64);
    (prefix, n)
}

/// The header of the frame that carries send-queue descriptor `desc` with sequence `seq`.
#[inline]
fn send_header(desc: &Descriptor, seq: u32) -> Header {
    let total = desc.total_len() as u32;
    // (kind, payload length, aux, remote address)
    let (kind, len, aux, remote) = match desc.op {
        Op::Send => (Kind::Send, total, 0, None),
        Op::RdmaWrite(r) => (Kind::RdmaWrite, total, 0, Some(r)),
        // a read request carries no payload; the length it asks for goes in `aux`
        Op::RdmaRead(r) => (Kind::ReadReq, 0, total, Some(r)),
        Op::Recv => unreachable!("checked by Descriptor::check"),
    };
    let mut hdr = Header {
        seq,
        len,
        aux,
        ..Header::new(kind)
    };
    if let Some(r) = remote {
        hdr.handle = r.handle.0;
        hdr.offset = r.offset;
    }
    if let Some(imm) = desc.immediate {
        hdr.flags |= FLAG_IMM;
        hdr.imm = imm;
    }
    hdr
}

impl ViCore {
    pub(super) fn translate(
        &mut self,
        segs: &[Segment],
    ) -> std::result::Result<Slots, CompletionStatus> {
        // A plain loop: collecting `Result`s into a SmallVec cost ~150 instructions a
        // descriptor, a tenth of a small message's whole library cost.
        let mut slots = Slots::new();
        for s in segs {
            slots.push(self.slot(*s, Access::Local)?);
        }
        Ok(slots)
    }

    /// [`ViCore::translate`] for a receive: a one-segment receive in the region of the
    /// spare slot (the last receive consumed, [`ViCore::spare_slot`]) takes that slot's
    /// region reference instead of a new one.
    fn translate_recv(&mut self, segs: &[Segment]) -> std::result::Result<Slots, CompletionStatus> {
        let [s] = segs else {
            return self.translate(segs);
        };
        let (region, offset) = self.table.translate_cached(
            &mut self.tcache,
            s.handle,
            s.offset,
            u64::from(s.len),
            self.attrs.ptag,
            Access::Local,
        )?;
        let region = match self.spare_slot.take() {
            Some(spare) if Arc::ptr_eq(&spare.region, region) => spare.region,
            _ => region.clone(),
        };
        Ok(smallvec![Slot {
            region,
            offset,
            len: s.len as usize,
        }])
    }

    /// Translates `span` (a local segment, or the peer's address of an RDMA) for use
    /// `access` by this VI, keeping its region alive in the slot.
    pub(super) fn slot(
        &mut self,
        span: Segment,
        access: Access,
    ) -> std::result::Result<Slot, CompletionStatus> {
        let (region, offset) = self.table.translate_cached(
            &mut self.tcache,
            span.handle,
            span.offset,
            u64::from(span.len),
            self.attrs.ptag,
            access,
        )?;
        Ok(Slot {
            region: region.clone(),
            offset,
            len: span.len as usize,
        })
    }

    #[inline]
    pub(super) fn check_posting(&self, send: bool) -> Result<()> {
        if self.state == ViState::Connected {
            return Ok(());
        }
        self.check_posting_slow(send)
    }

    #[cold]
    fn check_posting_slow(&self, send: bool) -> Result<()> {
        let ok = if send {
            self.state.can_post_send()
        } else {
            self.state.can_post_recv()
        };
        match (ok, self.state) {
            (true, _) => Ok(()),
            (false, ViState::Error) => Err(ViaError::ConnectionLost(
                self.break_reason
                    .clone()
                    .unwrap_or_else(|| "VI is in the error state".into()),
            )),
            (false, s) => Err(ViaError::InvalidState(format!(
                "cannot post in VI state {s:?}"
            ))),
        }
    }

    /// `VipPostRecv`.
    pub fn post_recv(&mut self, desc: Descriptor) -> Result<()> {
        self.check_posting(false)?;
        desc.check(&self.attrs, true)?;
        if self.recvs.len() >= self.attrs.queue_depth {
            return Err(ViaError::ResourceExhausted("receive queue full".into()));
        }
        match self.translate_recv(&desc.segments) {
            Ok(slots) => {
                let cap = desc.total_len();
                self.recvs.push_back(PostedRecv { desc, slots, cap });
            }
            Err(st) => {
                self.push_recv_done(Completion::new(desc, st, 0, None));
                if self.attrs.reliability.is_reliable() && self.state == ViState::Connected {
                    self.fault("local protection error on a receive descriptor".into());
                }
            }
        }
        Ok(())
    }

    /// `VipPostSend` (send, RDMA write, RDMA read).
    pub fn post_send(&mut self, desc: Descriptor) -> Result<()> {
        self.check_posting(true)?;
        desc.check(&self.attrs, false)?;
        if self.tracker.len() + self.send_done.len() >= self.attrs.queue_depth {
            return Err(ViaError::ResourceExhausted("send queue full".into()));
        }
        let seq = self.tx_seq;
        let mut hdr = send_header(&desc, seq);
        let sent = match (desc.op, &desc.segments[..]) {
            (Op::Send | Op::RdmaWrite(_), [seg]) => self.send_from_segment(&mut hdr, *seg),
            (op, segs) => match self.translate(segs) {
                Err(st) => Err(st),
                Ok(slots) => {
                    let is_read = matches!(op, Op::RdmaRead(_));
                    self.piggyback_ack(&mut hdr);
                    let r = self.send_frame(&hdr, if is_read { &[] } else { &slots[..] });
                    if r.is_ok() && is_read {
                        self.reads.insert(seq, slots);
                    }
                    Ok(r)
                }
            },
        };
        match sent {
            Err(st) => {
                self.tracker.failed_locally(seq, desc, st);
                self.drain_tracker();
                if self.attrs.reliability.is_reliable() {
                    self.fault("local protection error on a send descriptor".into());
                }
                return Ok(());
            }
            Ok(Err(e)) => {
                self.tracker.transmitted(seq, desc, self.attrs.reliability);
                self.fault(io_err(e));
                return Ok(());
            }
            Ok(Ok(())) => {}
        }
        self.tx_seq = self.tx_seq.wrapping_add(1);
        self.tracker.transmitted(seq, desc, self.attrs.reliability);
        // Completions released so far (an unreliable send's, or those acked meanwhile) are
        // built when the consumer reads the send queue (`has_done`), not here after every
        // send; only a completion queue must hear of them now.
        if self.send_cq.is_some() {
            self.drain_tracker();
        }
        Ok(())
    }

    /// Sends a frame whose payload is one local segment, the common case. The region is
    /// borrowed from the translation cache for the copy rather than cloned out of it: no
    /// reference count changes (two atomic read-modify-writes on the latency path).
    /// `Err` is the segment's translation failure (nothing was sent).
    fn send_from_segment(
        &mut self,
        hdr: &mut Header,
        seg: Segment,
    ) -> std::result::Result<io::Result<()>, CompletionStatus> {
        // The ack first: the region borrow below holds `self`. If the translation then
        // fails, the ack is moot: acks are owed only on reliable VIs, and a local
        // protection error breaks those.
        self.piggyback_ack(hdr);
        let (region, start) = self.table.translate_cached(
            &mut self.tcache,
            seg.handle,
            seg.offset,
            u64::from(seg.len),
            self.attrs.ptag,
            Access::Local,
        )?;
        let Some(wire) = self.wire.as_mut() else {
            return Ok(Err(io::Error::other("not connected")));
        };
        let len = seg.len as usize;
        let mem = region.lock();
        // Large payloads on a reliable VI go with one copy, by the receiver, when the peer
        // announced it can: from a shared region as a descriptor of it (`shared_mem`), else,
        // if enabled, as an address it reads by cross-memory attach (`link::cma`). The ring
        // carries only that, and the send completes on the ack sent after the copy.
        let reliable = self.attrs.reliability.is_reliable();
        let at_least = |min: u32| min > 0 && len >= min as usize;
        let source = match RegionInner::shared_source(&mem) {
            Some((fd, serial))
                if reliable
                    && at_least(self.attrs.single_copy_min)
                    && wire.link.shared_send_ok() =>
            {
                Some(SourceRef::Shared {
                    fd,
                    serial,
                    offset: start as u64,
                })
            }
            _ if reliable && at_least(self.attrs.cma_min) && wire.link.cma_send_ok() => {
                Some(SourceRef::Cma {
                    addr: mem[start..].as_ptr() as u64,
                })
            }
            _ => None,
        };
        if let Some(source) = source {
            hdr.flags |= crate::frame::FLAG_CMA;
            self.single_copy_sends += 1;
            let desc = source.encode();
            let (prefix, n) = frame_prefix(&mut self.tx_off, self.align, hdr, desc.len());
            let sent = wire.write_all(&[&prefix[..n], &desc], STALL_TIMEOUT);
            drop(mem);
            self.cma_pinned.push_back((hdr.seq, region.clone()));
            return Ok(sent);
        }
        let (prefix, n) = frame_prefix(&mut self.tx_off, self.align, hdr, len);
        Ok(wire.write_all(&[&prefix[..n], &mem[start..start + len]], STALL_TIMEOUT))
    }

    fn piggyback_ack(&mut self, hdr: &mut Header) {
        if let Some(a) = self.ack_due.take() {
            hdr.set_ack(a);
            self.unacked = 0;
        }
    }

    /// Writes a header and the bytes of `slots`: straight from the region when there is one
    /// slot, gathered into a staging buffer otherwise.
    pub(super) fn send_frame(&mut self, hdr: &Header, slots: &[Slot]) -> io::Result<()> {
        let wire = self
            .wire
            .as_mut()
            .ok_or_else(|| io::Error::other("not connected"))?;
        let len = slots.iter().map(|s| s.len).sum();
        let (prefix, n) = frame_prefix(&mut self.tx_off, self.align, hdr, len);
        let h = &prefix[..n];
        match slots {
            [] => wire.write_all(&[h], STALL_TIMEOUT),
            [s] => {
                let mem = s.region.lock();
                wire.write_all(&[h, &mem[s.offset..s.offset + s.len]], STALL_TIMEOUT)
            }
            many => {
                self.tx_buf.clear();
                for s in many {
                    self.tx_buf
                        .extend_from_slice(&s.region.lock()[s.offset..s.offset + s.len]);
                }
                wire.write_all(&[h, &self.tx_buf], STALL_TIMEOUT)
            }
        }
    }

    /// Sends a standalone ack if one is owed.
    /// True if the connection's peer last waited on the CPU this thread runs on (and
    /// publishes ours): a completion queue's wait then yields instead of spinning
    /// ([`crate::link::backoff`]). False before the connection.
    pub fn peer_shares_cpu(&self) -> bool {
        self.wire.as_ref().is_some_and(|w| w.link.peer_shares_cpu())
    }

    /// The NIC's ack keeper's visit (see `nic`, [`crate::nic::ACK_KEEPER_PERIOD`]): an ack
    /// owed since the previous visit, with no new delivery in between, means the consumer
    /// has not called since it received; the ack goes out now, so the peer's reliable send
    /// completes without waiting for our consumer. Never mid-frame (the frame's end comes
    /// first, see `wait`).
    pub fn keeper_visit(&mut self) {
        let owed = self.ack_due;
        let mid_frame = matches!(self.rx, Rx::Payload { .. } | Rx::Cma { .. });
        if owed.is_some() && owed == self.keeper_seen && !mid_frame {
            self.flush_ack();
        }
        self.keeper_seen = self.ack_due;
    }

    pub fn flush_ack(&mut self) {
        let Some(a) = self.ack_due.take() else { return };
        self.unacked = 0;
        let hdr = Header {
            flags: FLAG_ACK,
            aux: a,
            ..Header::new(Kind::Ack)
        };
        if let Err(e) = self.send_frame(&hdr, &[]) {
            self.fault(io_err(e));
        }
    }
}
