//! A network kind: one description of a network that every driver reads — its typed keys
//! (a struct with `deny_unknown_fields` and the defaults), their checks and memory estimate
//! ([`NetworkKind::prepare`], once per sweep point, before anything runs), and the fabric a
//! replication runs ([`NetworkKind::build`]).
//!
//! The cluster's `[fabric]` table is `kind = NAME` and that kind's keys; its registry
//! (`icn_cluster::fabric`) lists the kinds, one line each, and dispatches over them. An
//! open-loop model of a network (`model = "vc-router"`) reads the same keys, so the network
//! it validates is the one the cluster runs. Adding a kind: implement this trait beside the
//! fabric (see docs/extending.md) and add one line to the registry.

use crate::Fabric;
use icn_engine::Invalid;
use icn_engine::lockstep::Exchange;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Debug;
use std::sync::Arc;

/// See the module documentation. Errors name keys as `fabric.KEY`.
pub trait NetworkKind:
    Clone + Debug + Default + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The name `[fabric] kind` gives it.
    const NAME: &'static str;

    /// What [`NetworkKind::prepare`] builds once for every replication.
    type Prepared: Clone + Send + Sync;

    /// The `topology` key (every kind has one).
    fn topology(&self) -> &str;
    fn topology_mut(&mut self) -> &mut String;

    /// Checks every key and the memory the network needs, and builds what every replication
    /// shares (`file:` paths already resolved by the caller).
    fn prepare(&self) -> Result<Self::Prepared, Invalid>;

    /// Endpoints of the prepared network.
    fn endpoints(prepared: &Self::Prepared) -> usize;

    /// Routers or switches, the unit a network simulated in partitions is split by; 0 for a
    /// network simulated whole.
    fn routers(_prepared: &Self::Prepared) -> usize {
        0
    }

    /// The `threads` key of a network simulated in partitions.
    fn threads(&self) -> Option<usize> {
        None
    }

    /// Largest packet payload the fabric takes (what `Fabric::max_packet_bytes` will say).
    fn max_packet_bytes(&self) -> u64;

    /// Refuses a network that can deadlock on the endpoint pairs a workload uses (checked
    /// when the routes depend on the pairs; other kinds check when prepared, or cannot
    /// deadlock).
    fn check_pairs(
        &self,
        _prepared: &Self::Prepared,
        _pairs: &mut dyn Iterator<Item = (usize, usize)>,
    ) -> Result<(), Invalid> {
        Ok(())
    }

    /// A fresh fabric for one replication: `seed` (the replication's) seeds any random
    /// choice of the network; `threads` partitions in this process and `ranks`, the
    /// processes a partitioned network is spread over.
    fn build(
        &self,
        prepared: &Self::Prepared,
        seed: u64,
        threads: usize,
        ranks: Option<Arc<dyn Exchange>>,
    ) -> Result<Box<dyn Fabric>, Invalid>;
}

/// Prefixes a key with `fabric.` (the validators of the networks name bare keys).
pub fn in_fabric(mut e: Invalid) -> Invalid {
    if !e.key.starts_with("fabric.") {
        e.key = format!("fabric.{}", e.key);
    }
    e
}

/// Picoseconds per cycle of a `clock_mhz` clock (the `fabric.clock_mhz` key).
pub fn cycle_ps(clock_mhz: f64) -> Result<crate::Ps, Invalid> {
    Invalid::check(
        clock_mhz.is_finite() && (1.0..=1e6).contains(&clock_mhz),
        "fabric.clock_mhz",
        "1 ..= 10^6 MHz",
        clock_mhz,
    )?;
    Ok((1e6 / clock_mhz).round() as crate::Ps)
}

/// A `threads` key with 0 resolved to the machine's cores.
pub fn thread_count(threads: usize) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Checks the depth `v` of an endpoint's input queue (rule 4 of the fabric interface), in
/// `unit`, named `key`: 0 (unbounded) ..= 2^20.
pub fn check_queue(key: &str, unit: &str, v: usize) -> Result<(), Invalid> {
    Invalid::check(
        v <= 1 << 20,
        key,
        &format!("0 (unbounded) ..= 2^20 {unit}"),
        v,
    )
}

impl NetworkKind for crate::ideal::IdealConfig {
    const NAME: &'static str = "ideal";
    type Prepared = usize;

    fn topology(&self) -> &str {
        &self.topology
    }

    fn topology_mut(&mut self) -> &mut String {
        &mut self.topology
    }

    fn prepare(&self) -> Result<usize, Invalid> {
        Ok(self.build()?.endpoints())
    }

    fn endpoints(n: &usize) -> usize {
        *n
    }

    fn max_packet_bytes(&self) -> u64 {
        u64::from(self.max_packet)
    }

    fn build(
        &self,
        _: &usize,
        _: u64,
        _: usize,
        _: Option<Arc<dyn Exchange>>,
    ) -> Result<Box<dyn Fabric>, Invalid> {
        Ok(Box::new(self.build()?))
    }
}

impl NetworkKind for crate::flow::FlowConfig {
    const NAME: &'static str = "flow";
    type Prepared = usize;

    fn topology(&self) -> &str {
        &self.topology
    }

    fn topology_mut(&mut self) -> &mut String {
        &mut self.topology
    }

    fn prepare(&self) -> Result<usize, Invalid> {
        Ok(self.build()?.endpoints())
    }

    fn endpoints(n: &usize) -> usize {
        *n
    }

    fn max_packet_bytes(&self) -> u64 {
        u64::from(u32::MAX)
    }

    fn build(
        &self,
        _: &usize,
        _: u64,
        _: usize,
        _: Option<Arc<dyn Exchange>>,
    ) -> Result<Box<dyn Fabric>, Invalid> {
        Ok(Box::new(self.build()?))
    }
}
