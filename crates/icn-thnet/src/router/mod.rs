//! Networks of input-queued virtual-channel routers (BookSim2's `iq` router), one folder per
//! microarchitecture:
//! * [`grid`]: the 5-port fast path on 2-D meshes and tori (dimension order, dateline
//!   classes), with the lockstep-parallel network in [`grid::par`];
//! * [`anyradix`]: the same router of any radix on any `icn_topo` network and routing;
//! * [`alloc`]: the round-robin and iSLIP separable allocators both use.

pub mod alloc;
pub mod anyradix;
pub mod grid;
