//! [`XNetwork`]: everything but the clock of a simulated X-Switch network, one object-safe
//! trait for the sequential [`XNet`] and the partitioned [`ParXNet`]. The clock (`step`,
//! generic over the observer) is the one place that matches on the concrete network
//! (`crate::fabric::XEngine`, which derefs to this trait for the rest).

use super::par::ParXNet;
use super::{Counters, XNet};
use crate::symbol::Port;
use crate::topology::Topology;
use std::borrow::Cow;

pub trait XNetwork {
    /// The current cycle.
    fn now(&self) -> u64;
    /// Network interfaces (endpoints).
    fn nias(&self) -> usize;
    fn topo(&self) -> &Topology;
    /// Whether the last step failed because of the watchdog.
    fn deadlocked(&self) -> bool;
    fn measuring(&self) -> bool;
    fn set_measuring(&mut self, on: bool);
    /// Message `size` bytes from NIA `src` to `dst`, created now.
    fn submit(&mut self, src: usize, dst: usize, size: u32);
    /// Jumps `cycles` idle cycles at once if the network has settled ([`XNet::settled`]; a
    /// partitioned network: every partition, with no symbol between them, collective when
    /// spread over ranks); false (nothing done) otherwise: its caller steps.
    fn skip_settled(&mut self, cycles: u64) -> bool;
    /// The counters of the whole network.
    fn counters(&self) -> Cow<'_, Counters>;
    /// Logs the grants of output port `o`.
    fn log_grants(&mut self, o: usize);
    /// The grants of the port given to [`XNetwork::log_grants`], as (cycle, input port).
    fn grant_log(&self) -> Option<(usize, Vec<(u64, Port)>)>;
}

impl XNetwork for XNet {
    fn now(&self) -> u64 {
        self.now
    }
    fn nias(&self) -> usize {
        self.nias.len()
    }
    fn topo(&self) -> &Topology {
        &self.topo
    }
    fn deadlocked(&self) -> bool {
        self.deadlocked
    }
    fn measuring(&self) -> bool {
        self.measuring
    }
    fn set_measuring(&mut self, on: bool) {
        self.measuring = on;
    }
    fn submit(&mut self, src: usize, dst: usize, size: u32) {
        self.nias[src].submit(dst, size, self.now);
    }
    fn skip_settled(&mut self, cycles: u64) -> bool {
        let settled = self.settled();
        if settled {
            XNet::skip_settled(self, cycles);
        }
        settled
    }
    fn counters(&self) -> Cow<'_, Counters> {
        Cow::Borrowed(&self.counters)
    }
    fn log_grants(&mut self, o: usize) {
        self.grant_log = Some((o, Vec::new()));
    }
    fn grant_log(&self) -> Option<(usize, Vec<(u64, Port)>)> {
        self.grant_log.clone()
    }
}

impl XNetwork for ParXNet {
    fn now(&self) -> u64 {
        self.now
    }
    fn nias(&self) -> usize {
        ParXNet::nias(self)
    }
    fn topo(&self) -> &Topology {
        &self.topo
    }
    fn deadlocked(&self) -> bool {
        self.deadlocked
    }
    fn measuring(&self) -> bool {
        ParXNet::measuring(self)
    }
    fn set_measuring(&mut self, on: bool) {
        ParXNet::set_measuring(self, on);
    }
    fn submit(&mut self, src: usize, dst: usize, size: u32) {
        ParXNet::submit(self, src, dst, size);
    }
    fn skip_settled(&mut self, cycles: u64) -> bool {
        ParXNet::skip_settled(self, cycles)
    }
    fn counters(&self) -> Cow<'_, Counters> {
        Cow::Owned(ParXNet::counters(self))
    }
    fn log_grants(&mut self, o: usize) {
        ParXNet::log_grants(self, o);
    }
    fn grant_log(&self) -> Option<(usize, Vec<(u64, Port)>)> {
        ParXNet::grant_log(self)
    }
}
