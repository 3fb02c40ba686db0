//! [`VcAnyNet`] in partitions over threads: `ParNet<VcAnyNet>` ([`crate::shell::par`]).
//!
//! As for every microarchitecture (`shell/par.rs`, whose module doc argues why the results are the
//! sequential run's bit for bit): a partition simulates a contiguous range of routers with
//! their terminals; flits and credits for other partitions leave as [`VcMsg`]s that arrive
//! after their link's delay (per port here: dragonfly global links are longer, and all are
//! ≥ 1 cycle, the lookahead); a head carries its packet's record and routing header. The
//! routers' random choices (Valiant, UGAL, random up ports) come from a stream per router, so
//! they do not depend on which thread simulates the router.

use super::*;
use crate::shell::par::{ParNet, VcPartition};
use icn_engine::lockstep::{Exchange, Lockstep};

vc_partition!(VcAnyNet, Header);

impl VcPartition for VcAnyNet {
    type Extra = Header;
    fn shell(&self) -> &Shell<Header> {
        &self.sh
    }
    fn shell_mut(&mut self) -> &mut Shell<Header> {
        &mut self.sh
    }
    fn vcs(&self) -> usize {
        self.v
    }
    fn enqueue_tagged(&mut self, src: usize, dst: usize, len: u32, tag: u64) {
        VcAnyNet::enqueue_tagged(self, src, dst, len, tag);
    }
    fn router_range(&self) -> std::ops::Range<usize> {
        self.lo..self.lo + self.routers
    }
    fn ports_per_router(&self) -> usize {
        self.radix
    }
    fn channel_busy(&self, c: usize) -> u64 {
        self.busy(c)
    }
    fn router_channels(&self) -> Vec<usize> {
        self.inter_router_channels().collect()
    }
    fn waits(&self) -> Vec<(InputVc, InputVc)> {
        VcAnyNet::waits(self)
    }
    fn routers_idle(&self) -> bool {
        self.routers_idle()
    }
    fn input_vc_name(&self, vc: InputVc) -> String {
        VcAnyNet::input_vc_name(self, vc)
    }
}

/// A microarchitecture that is the router of any radix with another cycle (`speculative/`):
/// made from a built [`VcAnyNet`] (or its partition), after checking its parameters.
pub trait OverAny: VcPartition + Sized {
    fn over(n: VcAnyNet) -> Result<Self, Invalid>;
}

impl OverAny for VcAnyNet {
    fn over(n: VcAnyNet) -> Result<VcAnyNet, Invalid> {
        Ok(n)
    }
}

impl<N: OverAny> ParNet<N> {
    /// [`VcAnyNet::new`]'s network in `threads` partitions of (nearly) equal router counts.
    pub fn any(
        net: Arc<Network>,
        routing: Arc<dyn Routing>,
        p: VcParams,
        global_delay: u64,
        seed: u64,
        threads: usize,
    ) -> Result<ParNet<N>, Invalid> {
        Self::any_spread(net, routing, p, global_delay, seed, threads, None)
    }

    /// As [`ParNet::any`], or with `ranks`, `ranks × threads` partitions of which this
    /// process builds and simulates its rank's `threads`.
    pub fn any_spread(
        net: Arc<Network>,
        routing: Arc<dyn Routing>,
        p: VcParams,
        global_delay: u64,
        seed: u64,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<ParNet<N>, Invalid> {
        let watchdog = (p.watchdog, p.watchdog_wall_s);
        let total = threads * ranks.as_ref().map_or(1, |x| x.size());
        let parts = Lockstep::<N>::local_block(total, ranks.as_deref())
            .map(|k| {
                N::over(VcAnyNet::partition(
                    net.clone(),
                    routing.clone(),
                    p.clone(),
                    global_delay,
                    seed,
                    total,
                    k,
                )?)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let split = icn_engine::lockstep::Split {
            items: net.routers() as usize,
            parts: total,
        };
        let terminal_part = (0..net.terminals())
            .map(|t| split.part_of(net.terminal_at(t).0 as usize) as u32)
            .collect();
        Ok(ParNet::from_block(
            parts,
            total,
            net.routers() as usize,
            terminal_part,
            watchdog,
            ranks,
        ))
    }
}
