//! SCI ring model: IEEE 1596 A/B aging and intelligent A/B aging (spec/sci.md, after Wen, Li,
//! Han and Zhang, 1999).
//!
//! * [`protocol`]: sans-IO cores — packets and CRC, sender phases, the receiver's A/B state
//!   machine, the intelligent transmitter's SST and NOTIFY buffer;
//! * [`ring`]: the cycle-level ring simulator driving them, with traffic generators and
//!   measurement;
//! * [`Sci`]: the [`icn_engine::Model`] the CLI runs (`model = "sci"`);
//! * [`switched`]: rings joined by switches (`model = "sci-switched"`), built from the same
//!   ring simulator.

pub mod bench;
pub mod config;
pub mod fabric;
pub mod protocol;
pub mod ring;
pub mod switched;

pub use config::{SciConfig, TrafficPattern, Transmitter};

use config::doc;
use icn_engine::{Invalid, Metrics, Model, ModelError, Progress, Status};
use ring::Sim;

/// The SCI ring model.
pub struct Sci;

/// The configuration the CLI's `bench` times: 8 nodes, 64-byte sends, load 0.5, hot spot with
/// fraction 0.2, standard A/B aging.
pub fn bench_config() -> SciConfig {
    let mut cfg = SciConfig {
        load: 0.5,
        ..SciConfig::default()
    };
    cfg.traffic.hotspot_fraction = 0.2;
    cfg
}

/// Runs one transmitter and returns its simulator after the drain.
pub fn simulate(
    cfg: &SciConfig,
    seed: u64,
    intelligent: bool,
    progress: &dyn Progress,
) -> Result<Sim, ModelError> {
    let mut sim = Sim::new(cfg, seed, intelligent)?;
    sim.run(progress)?;
    Ok(sim)
}

/// As [`simulate`], but a drain that reaches `drain_limit_cycles` is the replication's status
/// rather than an error: the other replications and sweep points still count, and this one is
/// flagged and left out of the means instead of discarding the whole sweep (issue 14).
fn simulate_with_status(
    cfg: &SciConfig,
    seed: u64,
    intelligent: bool,
    progress: &dyn Progress,
) -> Result<(Sim, Status), ModelError> {
    let mut sim = Sim::new(cfg, seed, intelligent)?;
    match sim.run(progress) {
        Ok(()) => Ok((sim, Status::Ok)),
        Err(ModelError::Failed(why)) if !sim.quiescent() && sim.fault().is_none() => {
            Ok((sim, Status::DrainLimit(why)))
        }
        Err(e) => Err(e),
    }
}

fn metrics_of(sim: &Sim, suffix: &str) -> Metrics {
    sim.measure().metrics(suffix, sim.now())
}

/// The `compare` metrics from the two runs' suffixed metrics: `r`, `delay_ratio`, the cycles
/// of both runs, then every metric of both (tables: the intelligent run's). The status is the
/// standard run's if it is not ok, else the intelligent run's.
pub(crate) fn compare_metrics(
    ms: Metrics,
    mi: Metrics,
    cycles: u64,
    [std_status, iab_status]: [Status; 2],
) -> Result<Metrics, ModelError> {
    let mut m = Metrics {
        status: if std_status.is_ok() {
            iab_status
        } else {
            std_status
        },
        ..Metrics::default()
    };
    let r = mi.require("eta_iab")? / ms.require("eta_std")?;
    let dr = mi.require("delay_mean_ns_iab")? / ms.require("delay_mean_ns_std")?;
    m.put(&doc::R, r);
    m.put(&doc::DELAY_RATIO, dr);
    m.put(&doc::CYCLES_SIMULATED, cycles as f64);
    m.scalars.extend(ms.scalars);
    m.scalars.extend(mi.scalars);
    m.tables = mi.tables;
    m.notes
        .push("per_source table: intelligent transmitter".into());
    Ok(m)
}

impl Model for Sci {
    const NAME: &'static str = "sci";
    const DOC: &'static icn_engine::ModelDoc = &config::doc::DOC;
    const ABOUT: &'static str =
        "cycle-level SCI ring: A/B aging vs intelligent A/B aging queue allocation";
    type Config = SciConfig;
    /// Nothing to parse ahead of the runs: the prepared point is the validated config.
    type Prepared = SciConfig;

    fn validate(cfg: &SciConfig) -> Result<(), Invalid> {
        cfg.validate()
    }

    fn work(cfg: &SciConfig) -> u64 {
        let one = cfg.warmup_cycles + cfg.measure_cycles;
        if cfg.transmitter == Transmitter::Compare {
            2 * one
        } else {
            one
        }
    }

    /// The config with `traffic.trace_file` resolved against the experiment file's folder
    /// (it was read relative to the working directory), validated.
    fn prepare(cfg: &SciConfig, ctx: &icn_engine::Context) -> Result<SciConfig, Invalid> {
        let mut cfg = cfg.clone();
        if let Some(path) = &mut cfg.traffic.trace_file {
            *path = ctx.resolve(path).display().to_string();
        }
        Self::validate(&cfg)?;
        Ok(cfg)
    }

    fn run_prepared(
        cfg: &SciConfig,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<Metrics, ModelError> {
        let single = |intelligent| -> Result<Metrics, ModelError> {
            let (sim, status) = simulate_with_status(cfg, seed, intelligent, progress)?;
            Ok(Metrics {
                status,
                ..metrics_of(&sim, "")
            })
        };
        match cfg.transmitter {
            Transmitter::Standard => single(false),
            Transmitter::Intelligent => single(true),
            Transmitter::Compare => {
                let (std, std_status) = simulate_with_status(cfg, seed, false, progress)?;
                let (iab, iab_status) = simulate_with_status(cfg, seed, true, progress)?;
                let (ms, mi) = (metrics_of(&std, "_std"), metrics_of(&iab, "_iab"));
                compare_metrics(ms, mi, std.now() + iab.now(), [std_status, iab_status])
            }
        }
    }
}
