//! The grid network in partitions over threads: [`ParVcNet`] (the driver and the argument
//! for bit-identical results are the shell's, [`crate::shell::par`]).

use super::*;
pub use crate::shell::par::ParNet;
use crate::shell::par::{InputVc, VcPartition};
use icn_engine::lockstep::{Exchange, Lockstep, Split};
use std::sync::Arc;

vc_partition!(VcNet, ());

impl VcPartition for VcNet {
    type Extra = ();
    fn shell(&self) -> &Shell<()> {
        &self.sh
    }
    fn shell_mut(&mut self) -> &mut Shell<()> {
        &mut self.sh
    }
    fn vcs(&self) -> usize {
        self.v
    }
    fn enqueue_tagged(&mut self, src: usize, dst: usize, len: u32, tag: u64) {
        VcNet::enqueue_tagged(self, src, dst, len, tag);
    }
    fn router_range(&self) -> std::ops::Range<usize> {
        self.routers()
    }
    fn ports_per_router(&self) -> usize {
        P
    }
    fn channel_busy(&self, c: usize) -> u64 {
        self.busy(c)
    }
    fn router_channels(&self) -> Vec<usize> {
        self.inter_router_channels().collect()
    }
    fn waits(&self) -> Vec<(InputVc, InputVc)> {
        VcNet::waits(self)
    }
    fn routers_idle(&self) -> bool {
        self.routers_idle()
    }
    fn input_vc_name(&self, vc: InputVc) -> String {
        VcNet::input_vc_name(self, vc)
    }
}

/// The grid network on several threads.
pub type ParVcNet = ParNet<VcNet>;

impl ParNet<VcNet> {
    /// `grid` in `threads` partitions of (nearly) equal router counts, each on its own thread.
    pub fn new(grid: Grid, p: VcParams, threads: usize) -> Result<ParVcNet, Invalid> {
        Self::spread(grid, p, threads, None)
    }

    /// As [`ParNet::new`], or with `ranks`, `ranks × threads` partitions of which this
    /// process builds and simulates its rank's `threads`.
    pub fn spread(
        grid: Grid,
        p: VcParams,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<ParVcNet, Invalid> {
        let watchdog = (p.watchdog, p.watchdog_wall_s);
        let total = threads * ranks.as_ref().map_or(1, |x| x.size());
        let parts = Lockstep::<VcNet>::local_block(total, ranks.as_deref())
            .map(|k| VcNet::partition(grid, p.clone(), total, k))
            .collect::<Result<Vec<_>, _>>()?;
        let routers = grid.x * grid.y;
        let split = Split {
            items: routers,
            parts: total,
        };
        // One terminal per router.
        let terminal_part = (0..routers).map(|r| split.part_of(r) as u32).collect();
        Ok(ParNet::from_block(
            parts,
            total,
            routers,
            terminal_part,
            watchdog,
            ranks,
        ))
    }
}
