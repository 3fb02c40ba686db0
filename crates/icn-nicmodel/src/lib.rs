//! Event-driven timing model of VIA NIC pipelines: why MyVIA beats Berkeley VIA, and by how much
//! each of its optimisations contributes (paper: MyVIA, J. Software 14(2), 2003; spec
//! `docs/spec/via.md`).
//!
//! * [`profile`] — hardware as data: resources with clocks, rates and per-operation costs;
//! * [`design`] — a VIA implementation as data: pipeline stages over those resources, with the
//!   optimisation switches (`user_tlb`, `pd_ring`, `pipeline`, `big_dma`);
//! * [`sim`] — the binary-heap event queue that moves message chunks through the stages;
//! * [`bench`] — the paper's `pingpong` and `window` benchmarks;
//! * [`pdring`] — the physical-descriptor ring (small NIC ring, big host ring, low-water
//!   interrupt) as a sans-IO state machine, and a producer/consumer run of it;
//! * [`report`] — validation, ablation and sensitivity tables;
//! * [`model`] — the [`icn_engine::Model`] implementation (`model = "nic"`).

pub mod bench;
pub mod design;
pub mod model;
pub mod pdring;
pub mod profile;
pub mod report;
pub mod sim;

pub use design::{Design, Flags, Pipeline};
pub use model::{Benchmark, Config, Nic};
pub use profile::Profile;

use icn_engine::Invalid;

/// Optimisation switches a user may force; `None` keeps the design's own.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Switches {
    pub user_tlb: Option<bool>,
    pub pd_ring: Option<bool>,
    pub pipeline: Option<bool>,
    pub big_dma: Option<bool>,
}

impl Switches {
    pub fn apply(&self, f: Flags) -> Flags {
        Flags {
            user_tlb: self.user_tlb.unwrap_or(f.user_tlb),
            pd_ring: self.pd_ring.unwrap_or(f.pd_ring),
            pipeline: self.pipeline.unwrap_or(f.pipeline),
            big_dma: self.big_dma.unwrap_or(f.big_dma),
        }
    }
}

/// Loads `profile` and `design` (bundled names or paths) and resolves the pipeline.
pub fn build(
    profile: &str,
    design: &str,
    switches: Switches,
    tlb_hit_rate: f64,
) -> Result<Pipeline, Invalid> {
    let p = Profile::load(profile)?;
    let d = Design::load(design)?;
    d.resolve(&p, switches.apply(d.flags), tlb_hit_rate)
}

/// As [`build`], from already loaded (possibly modified) profile and design.
pub fn build_from(
    profile: &Profile,
    design: &Design,
    switches: Switches,
    tlb_hit_rate: f64,
) -> Result<Pipeline, Invalid> {
    design.resolve(profile, switches.apply(design.flags), tlb_hit_rate)
}
