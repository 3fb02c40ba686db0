//! Input-queued VC routers with **speculative switch allocation** (BookSim2's `iq` router
//! with `speculative = 1`): a head flit bids for the switch in the same cycle as for its
//! output VC, so a hop costs one stage less at low load.
//!
//! Everything but the allocation is the router of any radix ([`VcAnyNet`]: routing,
//! buffers, VC allocation, traversal, credits, the shell), so this folder holds only what
//! differs — the order of the two allocations in a router's cycle:
//! 1. VC allocation, as in [`crate::anyradix`];
//! 2. switch allocation of the ready input VCs (non-speculative requests), as there;
//! 3. switch allocation, over the input and output ports still free, of the heads that won
//!    an output VC in step 1 (speculative requests): BookSim2's rule that a speculative
//!    grant yields to a non-speculative one (`spec_mask_by_reqs = 0`), and its
//!    `spec_check_elig`/`spec_check_cred` (a speculative bid needs a free VC with a credit).
//!    A head that lost VC allocation makes no bid at all, where BookSim2's can still win the
//!    switch and waste the grant: at high load this router loses slightly fewer crossbar cycles.
//!
//! Timing: a head that wins both traverses `vc_alloc_delay` cycles earlier than in
//! [`VcAnyNet`]; BookSim2's allocation delay becomes `max(vc_alloc_delay, sw_alloc_delay)`,
//! so it is required that `vc_alloc_delay ≤ sw_alloc_delay` (the saving is then the same).
//! With unit delays a packet of `L` flits over `H` router-to-router hops (`H + 1` routers)
//! takes `6 + 4·H + (L − 1)` cycles alone, one less per router than `7 + 5·H + (L − 1)`.

use super::anyradix::VcAnyNet;
use super::shell::VcObserver;
use icn_engine::{Invalid, ModelError};

/// A network of speculative VC routers on an [`icn_topo::Network`].
pub struct SpecNet {
    n: VcAnyNet,
}

impl SpecNet {
    /// The router of any radix `n` (a network or a partition, [`VcAnyNet::partition`]) with
    /// speculative switch allocation.
    pub fn over(n: VcAnyNet) -> Result<SpecNet, Invalid> {
        let p = &n.p;
        if p.vc_alloc_delay > p.sw_alloc_delay {
            return Err(Invalid::new(
                "vc_alloc_delay",
                format!(
                    "speculative switch allocation needs vc_alloc_delay ≤ sw_alloc_delay \
                     (= {}), got {}",
                    p.sw_alloc_delay, p.vc_alloc_delay
                ),
            ));
        }
        Ok(SpecNet { n })
    }

    /// The router of any radix it extends (channel loads, the wiring).
    pub fn any(&self) -> &VcAnyNet {
        &self.n
    }

    /// One clock of the whole network.
    pub fn step<O: VcObserver>(&mut self, obs: &mut O) -> Result<(), ModelError> {
        self.n.step_with(obs, |n, r| {
            if n.routing_ports[r] != 0 {
                n.vc_allocate(r);
            }
            if n.sa_ports[r] != 0 {
                let (ins, outs) = n.switch_allocate::<false>(r, 0, 0);
                n.switch_allocate::<true>(r, ins, outs);
            }
        })
    }
}

mod par;

#[cfg(test)]
mod tests;
