//! Cluster simulation: a program's communication end to end — workload → host/NIC →
//! fabric — in one simulation (`model = "cluster"`; notes and results in `docs/cluster.md`).
//!
//! * [`program`]: message-level programs (send / ssend / recv / compute per rank) and the
//!   trace format that records one;
//! * [`patterns`]: built-in workloads: pingpong, window, all-to-all and broadcasts (binomial,
//!   pipelined chain, scatter + allgather, and every `icn-bcast` scheme run as real messages);
//! * [`nic`]: host and NIC endpoints (zero-cost, simple, or an `icn-nicmodel` design);
//! * [`transmit`]: every node's send side, holding its packets while the fabric refuses them;
//! * [`sim`]: the event loop joining ranks, endpoints and any `icn_fabric::Fabric`;
//! * [`real`]: one rank of the same program run for real over `icn-via`;
//! * [`model`]: the experiment-file model;
//! * [`bench`]: the speed workloads of `icnlab bench`;
//! * [`timeline`]: a run's calls, waits and channel loads over time, when asked.

pub mod bench;
pub mod collectives;
pub mod fabric;
pub mod model;
pub mod nic;
pub mod patterns;
pub mod placement;
pub mod program;
pub mod real;
pub mod sim;
pub mod ti;
pub mod timeline;
pub mod transmit;
