//! [`SpecNet`] in partitions over threads: `ParNet::<SpecNet>::any_spread`, the partitions
//! of the router of any radix (`anyradix/par.rs`) with this router's cycle.

use super::*;
use crate::anyradix::par::OverAny;
use crate::shell::Shell;
use crate::shell::par::{InputVc, VcPartition, vc_partition};
use icn_topo::routing::Header;

vc_partition!(SpecNet, Header);

impl VcPartition for SpecNet {
    type Extra = Header;
    fn shell(&self) -> &Shell<Header> {
        self.n.shell()
    }
    fn shell_mut(&mut self) -> &mut Shell<Header> {
        self.n.shell_mut()
    }
    fn vcs(&self) -> usize {
        self.n.vcs()
    }
    fn enqueue_tagged(&mut self, src: usize, dst: usize, len: u32, tag: u64) {
        self.n.enqueue_tagged(src, dst, len, tag);
    }
    fn router_range(&self) -> std::ops::Range<usize> {
        self.n.router_range()
    }
    fn ports_per_router(&self) -> usize {
        self.n.radix()
    }
    fn channel_busy(&self, c: usize) -> u64 {
        self.n.busy(c)
    }
    fn router_channels(&self) -> Vec<usize> {
        self.n.inter_router_channels().collect()
    }
    fn waits(&self) -> Vec<(InputVc, InputVc)> {
        self.n.waits()
    }
    fn routers_idle(&self) -> bool {
        self.n.routers_idle()
    }
    fn input_vc_name(&self, vc: InputVc) -> String {
        self.n.input_vc_name(vc)
    }
}

impl OverAny for SpecNet {
    fn over(n: VcAnyNet) -> Result<SpecNet, Invalid> {
        SpecNet::over(n)
    }
}
