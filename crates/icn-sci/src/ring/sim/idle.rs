//! Skipping idle time exactly: what an idle ring still does per cycle, done for many cycles
//! at once.
//!
//! A cluster replays programs that compute for seconds between messages; stepping an empty
//! ring symbol by symbol through that time (5·10^8 cycles a second) is what made long
//! replays slow. Once the ring has *settled* — nothing on a link or in a bypass FIFO, no
//! packet half-sent, no idle gap owed, no send queued or outstanding, no NOTIFY to send, no
//! input queue being served, no receiver waiting for a quiet window to end its generation,
//! and (SAT allocation) every node's quota full — a cycle changes only two things: the clock,
//! and the SAT, which then moves one hop per cycle (no node is starving, so each visit
//! refills a full quota and moves on). [`Sim::skip_settled`] applies `k` such cycles at once;
//! the tests check it against stepping.

use super::Sim;

impl Sim {
    /// True when an idle cycle changes only the clock and the SAT's position (see the module
    /// documentation), so that [`Sim::skip_settled`] may jump.
    pub fn settled(&self) -> bool {
        self.quiescent()
            && self.link_in.iter().all(|w| w.is_idle())
            && self.sendq.iter().all(|q| q.is_empty())
            && self.active.iter().all(|a| a.is_idle())
            && self.recv.iter().all(|r| !r.waits_for_time())
            && self.ports.iter().enumerate().all(|(i, p)| {
                p.own_left == 0
                    && !p.bypassing
                    && !p.gap
                    && !p.tx_dirty
                    && p.fifo.is_empty()
                    && p.svc_done == u64::MAX
                    && (!self.sat || (p.quota == self.full_quota(i) && !p.sent_since_sat))
            })
    }

    /// Advances a [settled](Sim::settled) ring by `cycles` cycles, exactly as that many
    /// calls of [`Sim::advance`] without generation would.
    pub fn skip_settled(&mut self, cycles: u64) {
        debug_assert!(self.settled(), "only a settled ring skips");
        if self.sat {
            let hops = (cycles % self.n as u64) as usize;
            self.sat_at = (self.sat_at + hops) % self.n;
        }
        self.now += cycles;
    }

    /// The quota the SAT gives node `i` on each visit.
    pub(super) fn full_quota(&self, i: usize) -> u32 {
        if self.agents.is_agent(i) {
            self.agents.sat_quota()
        } else {
            self.sat_quota
        }
    }
}
