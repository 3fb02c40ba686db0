//! The transmitter's choice of its next own packet, and SAT bandwidth allocation.

use super::{Port, Sim};
use crate::protocol::packet::ECHO_SYMBOLS;
use crate::protocol::{Phase, SlotState, allowed};
use crate::ring::events::Event;
use crate::ring::wire::{Kind, Wire};
use crate::switched::RetryOrder;

/// What the transmitter picked.
enum Pick {
    Retry(usize),
    New(usize),
}

impl Sim {
    /// May node `i` send a packet with `phase` to `dst` now? Always for the standard
    /// transmitter; per the SST for the intelligent one.
    #[inline]
    fn eligible(&self, i: usize, dst: u8, phase: Phase) -> bool {
        !self.intelligent || allowed(self.sst[i].get(usize::from(dst)), phase)
    }

    /// The transmitter's choice at a packet boundary: nothing unless the bypass FIFO is empty
    /// (register insertion); a pending NOTIFY first; else, within the SAT quota, the oldest
    /// eligible send (busied retries and queued new sends compete by creation time; new sends
    /// need a free active buffer; on the rings of a multi-ring system the order asked by
    /// `retry_order`, see `Agents::order`). The intelligent transmitter skips held-back sends
    /// instead of waiting behind them (skip-ahead over the send queue), so a send held for one
    /// target never blocks sends to other targets.
    pub(super) fn pick_own(&mut self, i: usize, p: &mut Port, measuring: bool) -> Option<Wire> {
        if !p.fifo.is_empty() {
            return None;
        }
        if let Some(change) = p.notify.take() {
            if measuring {
                // The NOTIFY will occupy 4 symbols on each of the N links.
                self.measure.notify_symbols += (ECHO_SYMBOLS * self.n) as u64;
            }
            let (cycle, node) = (self.now, i as u8);
            self.log(Event::NotifySent {
                cycle,
                node,
                change,
            });
            let code = change.code() as u8;
            return Some(Wire::header(
                Kind::Notify,
                ECHO_SYMBOLS as u8,
                code,
                node,
                node,
                0,
            ));
        }
        if self.agents.external()
            && let Some(w) = self.take_remote_notify(i, measuring)
        {
            return Some(w);
        }
        if !p.tx_dirty || (self.sat && p.quota == 0) {
            return None;
        }
        // Oldest first: by creation, then by first transmission. Hosts create at most one send
        // per cycle, so the second key only orders an agent's sends forwarded in the same
        // cycle — there the slot index used to decide, and a busied send holding the target's
        // current reservation could lose every time to one holding the next (livelock).
        // Switched rings (`Agents::order`): busied first re-sends the least recently
        // transmitted busied send, but decides retry against new send by the oldest, as
        // above; least recent first ranks a busied send by its last transmission, a new send
        // by its creation, a busied send first on a tie (one transmission per node and cycle
        // makes the busied sends' keys distinct).
        let order = self.agents.order();
        let mut best: Option<((u64, u64), Pick)> = None;
        if self.active[i].ready_count() > 0 {
            let mut oldest = (u64::MAX, u64::MAX);
            let mut retry: Option<((u64, u64), usize)> = None;
            for (slot, s) in self.active[i].slots().iter().enumerate() {
                if s.state != SlotState::Ready || !self.eligible(i, s.target, s.phase) {
                    continue;
                }
                let age = (s.created, s.started);
                oldest = oldest.min(age);
                let rank = match order {
                    RetryOrder::Oldest => age,
                    RetryOrder::LeastRecent | RetryOrder::BusiedFirst => (s.sent_at, 0),
                };
                if retry.is_none_or(|(r, _)| rank < r) {
                    retry = Some((rank, slot));
                }
            }
            // Busied first and oldest first: a busied send competes with new sends by the age
            // of the oldest busied send; least recent first: by its own last transmission.
            best = retry.map(|(rank, slot)| {
                let key = if order == RetryOrder::LeastRecent {
                    rank
                } else {
                    oldest
                };
                (key, Pick::Retry(slot))
            });
        }
        if self.active[i].free_count() > 0 {
            for (k, q) in self.sendq[i].iter().enumerate() {
                if self.eligible(i, q.dst, Phase::NoTry) && self.remote_allows(i, q.fin) {
                    let tie = if order == RetryOrder::LeastRecent {
                        1
                    } else {
                        u64::MAX
                    };
                    let key = (q.created, tie);
                    if best.as_ref().is_none_or(|(t, _)| key < *t) {
                        best = Some((key, Pick::New(k)));
                    }
                    break;
                }
                if !self.intelligent {
                    break;
                }
            }
        }
        let Some((_, pick)) = best else {
            p.tx_dirty = false;
            return None;
        };
        let started = match pick {
            Pick::Retry(slot) => self.active[i]
                .retransmit(slot, self.now)
                .map(|s| (slot, *s)),
            Pick::New(k) => {
                let q = self.sendq[i].remove(k)?;
                self.active[i]
                    .start(q.dst, q.size_class, q.created, q.seq, self.now)
                    .map(|slot| (slot, *self.active[i].get(slot)))
            }
        };
        let (slot, send) = match started {
            Ok(s) => s,
            Err(e) => {
                self.fault = Some(format!("node {i}: {e} at cycle {}", self.now));
                return None;
            }
        };
        if measuring {
            self.measure.transmitted += 1;
        }
        if self.sat {
            p.quota -= 1;
            p.sent_since_sat = true;
        }
        self.log(Event::Transmit {
            cycle: self.now,
            seq: send.seq,
            src: i as u8,
            dst: send.target,
            phase: send.phase,
        });
        Some(Wire::header(
            Kind::Send,
            self.lens[usize::from(send.size_class)],
            send.phase.code() as u8,
            send.target,
            i as u8,
            slot as u16,
        ))
    }

    /// SAT fairness (MetaRing): the SAT stays at a node that still wants to send but has not
    /// sent since the SAT's last visit; otherwise the node gets a fresh quota and the SAT
    /// moves on to the downstream node (arriving next cycle). Holding the SAT starves the
    /// other nodes of quota, which drains the ring until the holder can insert.
    pub(super) fn sat_step(&mut self, ports: &mut [Port]) {
        let i = self.sat_at;
        let p = &mut ports[i];
        let starving = p.tx_dirty && !p.sent_since_sat;
        if !starving {
            p.quota = self.full_quota(i);
            p.sent_since_sat = false;
            self.sat_at = if i + 1 == self.n { 0 } else { i + 1 };
        }
    }
}
