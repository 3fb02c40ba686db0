//! Networks of input-queued virtual-channel routers (BookSim2's `iq` router), validated
//! against BookSim2 (`docs/booksim.md`), one folder per extension point:
//! * [`shell`]: what every microarchitecture shares, written once — the packet slab, the
//!   event rings and the receive phase, the sources and injection, the watchdog and its
//!   wait-for diagnosis, the partition plumbing and the parallel driver ([`ParNet`]);
//! * [`grid`]: the 5-port fast path on 2-D meshes and tori (dimension order, dateline
//!   classes), its hot loops compiled per VC count;
//! * [`anyradix`]: the same router of any radix on any `icn_topo` network and routing;
//! * [`speculative`]: that router with speculative switch allocation (only its allocation order);
//! * [`alloc`]: the round-robin and iSLIP separable allocators;
//! * [`network`]: [`VcNetwork`], the one trait every network is used through;
//! * [`conformance`]: the suite every microarchitecture passes (`tests/vc_conformance.rs`).
//!
//! The `vc-router` network kind around them:
//! * [`vc_net`]: its one description — keys, their docs and checks, the memory estimate, the
//!   deadlock check, the prepared network;
//! * [`fabric`]: the networks behind `icn_fabric::Fabric` ([`fabric::VcFabric`], built from
//!   a [`fabric::VcSpec`]);
//! * [`fabric_config`]: the cluster's `[fabric] kind = "vc-router"` table.
//!
//! The open-loop model `model = "vc-router"` that runs them with BookSim2's conventions is
//! `icn_thnet::vc_model`.
//!
//! A new microarchitecture is a folder next to `grid/` and `anyradix/` that keeps a
//! [`shell::Shell`], implements [`shell::par::VcPartition`] and its own stages
//! (`docs/extending.md`).

pub mod alloc;
pub mod anyradix;
pub mod conformance;
pub mod fabric;
pub mod fabric_config;
pub mod grid;
pub mod network;
pub mod shell;
pub mod speculative;
pub mod vc_net;

pub use network::VcNetwork;
pub use shell::par::{ParNet, VcPartition};
pub use shell::{PacketDone, VcObserver, VcParams};
