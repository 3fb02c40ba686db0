//! [`VcNetwork`]: everything but the clock of a simulated VC network, one object-safe trait
//! for every microarchitecture, sequential or partitioned. The clock (`step`, generic over
//! the observer so that delivery inlines into the receive phase) is the one place that
//! matches on the concrete network (`crate::fabric::VcEngine`); the rest goes through here.

use super::shell::par::{ParNet, VcPartition};

pub trait VcNetwork {
    /// The current cycle.
    fn now(&self) -> u64;
    /// Terminals (endpoints).
    fn nodes(&self) -> usize;
    /// Creates a packet of `len` flits at terminal `src` for `dst` now, with `tag` returned
    /// in its [`super::PacketDone`].
    fn enqueue_tagged(&mut self, src: usize, dst: usize, len: u32, tag: u64);
    fn enqueue(&mut self, src: usize, dst: usize, len: u32) {
        self.enqueue_tagged(src, dst, len, 0);
    }
    /// Packets created and not yet delivered (source queues included).
    fn in_network(&self) -> u64;
    fn measuring(&self) -> bool;
    fn set_measuring(&mut self, on: bool);
    /// Whether the last step failed because of the watchdog.
    fn deadlocked(&self) -> bool;
    /// Ports per router (channel `router · radix + port`).
    fn ports_per_router(&self) -> usize;
    /// Output channels that join two routers (`router · radix + port`, ascending) with the
    /// flits sent on each while measuring. Collective when spread over MPI ranks.
    fn channel_loads(&self) -> Vec<(usize, u64)>;
    /// Every credit counter is back at its buffer size (after a drain: credits conserved).
    /// Collective when spread over MPI ranks.
    fn credits_full(&self) -> bool;
    /// Jumps `cycles` cycles at once, exactly as that many steps would, if the network is
    /// empty and quiet (no packet, no flit or credit on its way, no router busy), and says
    /// so; false (nothing done) otherwise: its caller steps. Collective when spread over
    /// MPI ranks.
    fn skip_quiet(&mut self, cycles: u64) -> bool;
}

/// A microarchitecture's whole network is its partition 0 of 1.
impl<N: VcPartition> VcNetwork for N {
    fn now(&self) -> u64 {
        self.shell().now
    }
    fn nodes(&self) -> usize {
        self.shell().sources()
    }
    fn enqueue_tagged(&mut self, src: usize, dst: usize, len: u32, tag: u64) {
        VcPartition::enqueue_tagged(self, src, dst, len, tag);
    }
    fn in_network(&self) -> u64 {
        self.shell().in_network.max(0) as u64
    }
    fn measuring(&self) -> bool {
        self.shell().measuring
    }
    fn set_measuring(&mut self, on: bool) {
        VcPartition::set_measuring(self, on);
    }
    fn deadlocked(&self) -> bool {
        self.shell().deadlocked
    }
    fn ports_per_router(&self) -> usize {
        VcPartition::ports_per_router(self)
    }
    fn channel_loads(&self) -> Vec<(usize, u64)> {
        let lo = self.router_range().start * VcPartition::ports_per_router(self);
        self.router_channels()
            .into_iter()
            .map(|c| (lo + c, self.channel_busy(c)))
            .collect()
    }
    fn credits_full(&self) -> bool {
        self.shell().credits_full()
    }
    fn skip_quiet(&mut self, cycles: u64) -> bool {
        let quiet = self.shell().in_network == 0 && self.quiet();
        if quiet {
            self.shell_mut().now += cycles;
        }
        quiet
    }
}

impl<N: VcPartition> VcNetwork for ParNet<N> {
    fn now(&self) -> u64 {
        self.now
    }
    fn nodes(&self) -> usize {
        ParNet::nodes(self)
    }
    fn enqueue_tagged(&mut self, src: usize, dst: usize, len: u32, tag: u64) {
        ParNet::enqueue_tagged(self, src, dst, len, tag);
    }
    fn in_network(&self) -> u64 {
        ParNet::in_network(self)
    }
    fn measuring(&self) -> bool {
        ParNet::measuring(self)
    }
    fn set_measuring(&mut self, on: bool) {
        ParNet::set_measuring(self, on);
    }
    fn deadlocked(&self) -> bool {
        self.deadlocked
    }
    fn ports_per_router(&self) -> usize {
        ParNet::ports_per_router(self)
    }
    fn channel_loads(&self) -> Vec<(usize, u64)> {
        self.router_channel_loads()
    }
    fn credits_full(&self) -> bool {
        ParNet::credits_full(self)
    }
    fn skip_quiet(&mut self, cycles: u64) -> bool {
        ParNet::skip_quiet(self, cycles)
    }
}
