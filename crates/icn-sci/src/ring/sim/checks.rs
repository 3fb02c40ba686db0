//! End-of-run checks and the diagnosis of a drain that does not finish.

use super::Sim;
use crate::ring::wire::Wire;

impl Sim {
    /// Nothing left anywhere: no send outstanding, no symbol on a link or in a FIFO, no NOTIFY
    /// waiting.
    pub fn quiescent(&self) -> bool {
        self.outstanding == 0
            && self.created_symbols == self.removed_symbols
            && self.ports.iter().all(|p| !p.notify.is_pending())
            && self.agents.idle()
    }

    /// Checks the structural invariants that must hold once quiescent; describes the first
    /// violation.
    pub fn check_quiescent_state(&self) -> Result<(), String> {
        for i in 0..self.n {
            let p = &self.ports[i];
            let problems = [
                (!self.link_in[i].is_idle(), "a symbol on its input link"),
                (!p.fifo.is_empty(), "a non-empty bypass FIFO"),
                (p.own_left != 0 || p.bypassing, "a packet half-sent"),
                (!self.active[i].is_idle(), "an occupied active buffer"),
                (!self.sendq[i].is_empty(), "a non-empty send queue"),
            ];
            if let Some((_, what)) = problems.iter().find(|(bad, _)| *bad) {
                return Err(format!("node {i} has {what} at cycle {}", self.now));
            }
        }
        Ok(())
    }

    /// The invariant violation recorded during the run, if any.
    pub fn fault(&self) -> Option<&str> {
        self.fault.as_deref()
    }

    pub(super) fn check_fault(&self) -> Result<(), icn_engine::ModelError> {
        match &self.fault {
            Some(f) => Err(icn_engine::ModelError::Failed(format!(
                "SCI simulator invariant violated: {f}"
            ))),
            None => Ok(()),
        }
    }

    /// What is stuck where, for the error of a drain that exceeded its limit.
    pub fn diagnose(&self) -> String {
        let nodes: Vec<String> = (0..self.n)
            .map(|i| {
                format!(
                    "node {i}: {} queued, {} active, receiver {:?} reservations {:?}, input queue {}, \
                     SAT quota {}{}{}",
                    self.sendq[i].len(),
                    self.active[i].capacity() - self.active[i].free_count(),
                    self.recv[i].state(),
                    self.recv[i].reservations(),
                    self.ports[i].inq,
                    self.ports[i].quota,
                    if self.ports[i].tx_dirty { ", wants to send" } else { "" },
                    if self.sat && self.sat_at == i { ", holds the SAT" } else { "" },
                )
            })
            .collect();
        let links: Vec<String> = (0..self.n)
            .filter(|&i| self.link_in[i] != Wire::IDLE
                || !self.ports[i].fifo.is_empty()
                || self.ports[i].own_left > 0)
            .map(|i| {
                format!(
                    "node {i}: input {:?}, FIFO {} symbols, own packet {} symbols left, bypassing {}",
                    self.link_in[i],
                    self.ports[i].fifo.len(),
                    self.ports[i].own_left,
                    self.ports[i].bypassing
                )
            })
            .collect();
        let hint = if self.sat {
            "a large backlog at a slow receiver can need more: raise drain_limit_cycles"
        } else {
            "with bandwidth_allocation = \"none\" this is usually a livelock: a node starved \
             by its upstream neighbour's back-to-back retries (use \"sat\")"
        };
        format!(
            "drain did not finish within drain_limit_cycles = {} ({hint}): {} sends still \
             outstanding, {} symbols on the ring; {}; ring: {}",
            self.drain_limit,
            self.outstanding,
            self.live_symbols(),
            nodes.join("; "),
            links.join("; ")
        )
    }
}
