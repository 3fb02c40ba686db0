//! `model = "nic"`: the timing model behind `icnlab run` / `sweep` / `reproduce`.

pub mod doc;

use crate::bench::{self, Effort};
use crate::pdring::{self, RingConfig};
use crate::{Switches, build, report};
use icn_engine::{Invalid, Metrics, Model, ModelError, Progress, Table};
use serde::{Deserialize, Serialize};

/// What one run measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Benchmark {
    /// Pingpong and window: scalars at `size` and table `curve` with both columns.
    #[default]
    Both,
    /// One-way latency only (bandwidth columns NaN).
    Pingpong,
    /// Streaming bandwidth only (latency columns NaN).
    Window,
    /// PD-ring interrupts per 1000 messages.
    Pdring,
    /// Table `validation`: every paper target vs the model (ignores profile/design).
    Validation,
    /// Tables `ablation` (MyVIA minus each optimisation) and `tlb` (BVIA vs TLB hit rate).
    Ablation,
    /// Table `sensitivity`: headline numbers with each hardware parameter ±20 %.
    Sensitivity,
}

/// Configuration of one run; defaults are MyVIA on set-up B at 4 KB.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `setup-a`, `setup-b`, `fast-ethernet`, `gigabit-ethernet` or a path to a profile TOML.
    pub profile: String,
    /// `myvia`, `bvia`, `gm`, `mvia` or a path to a design TOML.
    pub design: String,
    pub benchmark: Benchmark,
    /// Size of the scalar results, bytes.
    pub size: u64,
    /// Sizes of table `curve`; empty = no curve.
    pub sizes: Vec<u64>,
    pub user_tlb: Option<bool>,
    pub pd_ring: Option<bool>,
    pub pipeline: Option<bool>,
    pub big_dma: Option<bool>,
    /// Probability that a NIC-side TLB lookup hits (designs without `user_tlb`).
    pub tlb_hit_rate: f64,
    pub round_trips: u32,
    pub messages: u32,
    pub queue_depth: u32,
    pub ring: RingConfig,
}

impl Default for Config {
    fn default() -> Self {
        let e = Effort::default();
        Config {
            profile: "setup-b".into(),
            design: "myvia".into(),
            benchmark: Benchmark::Both,
            size: 4096,
            sizes: bench::paper_sizes(),
            user_tlb: None,
            pd_ring: None,
            pipeline: None,
            big_dma: None,
            tlb_hit_rate: 1.0,
            round_trips: e.round_trips,
            messages: e.messages,
            queue_depth: e.queue_depth,
            ring: RingConfig::default(),
        }
    }
}

impl Config {
    pub fn switches(&self) -> Switches {
        Switches {
            user_tlb: self.user_tlb,
            pd_ring: self.pd_ring,
            pipeline: self.pipeline,
            big_dma: self.big_dma,
        }
    }

    pub fn effort(&self) -> Effort {
        Effort {
            round_trips: self.round_trips,
            messages: self.messages,
            queue_depth: self.queue_depth,
        }
    }
}

/// Runs one of the report benchmarks; names of rows go to `notes`.
fn report_run(cfg: &Config) -> Result<Metrics, Invalid> {
    let e = cfg.effort();
    let mut m = Metrics::default();
    match cfg.benchmark {
        Benchmark::Validation => {
            let checks = report::validation(e)?;
            let passed = checks.iter().filter(|c| c.pass() == Some(true)).count();
            let graded = checks.iter().filter(|c| c.pass().is_some()).count();
            m.put(&doc::CHECKS_PASSED, passed as f64);
            m.put(&doc::CHECKS_GRADED, graded as f64);
            for (i, c) in checks.iter().enumerate() {
                m.notes.push(format!("check {i}: {}", c.name));
            }
            m.tables.push(report::validation_table(&checks));
            for (name, text) in crate::design::BUNDLED {
                let d = crate::Design::parse(text)?;
                for (k, why) in &d.calibrated {
                    m.notes.push(format!(
                        "calibrated: {name}.{k} = {} cycles, fitted to {why}",
                        d.params.get(k).copied().unwrap_or(f64::NAN)
                    ));
                }
            }
        }
        Benchmark::Ablation => {
            let rows = report::ablation(e)?;
            for r in rows.iter().take(rows.len() / 2) {
                m.notes.push(format!("variant: {}", r.variant));
            }
            m.tables.push(report::ablation_table(&rows));
            let tlb = report::tlb_sweep(e, 1)?;
            m.tables.push(Table {
                name: "tlb".into(),
                columns: vec![
                    "profile".into(),
                    "tlb_hit_rate".into(),
                    "bw_4k_mbs".into(),
                    "bw_64k_mbs".into(),
                ],
                rows: tlb
                    .iter()
                    .map(|(p, h, a, b)| vec![f64::from(u8::from(*p == "setup-b")), *h, *a, *b])
                    .collect(),
                ci95: vec![],
            });
            m.notes.push("profile 0 = setup-a, 1 = setup-b".into());
        }
        _ => {
            let rows = report::sensitivity(e)?;
            for (i, h) in report::HEADLINES.iter().enumerate() {
                m.notes.push(format!("headline {i}: {}", h.name));
            }
            for r in &rows {
                m.notes
                    .push(format!("row: {} / {}", r.headline, r.parameter));
            }
            m.tables.push(report::sensitivity_table(&rows));
        }
    }
    Ok(m)
}

/// Most entries of `sizes` (each is a pingpong and a window run).
pub const MAX_SIZES: usize = 1024;

/// The NIC timing model.
pub struct Nic;

impl Model for Nic {
    const NAME: &'static str = "nic";
    const DOC: &'static icn_engine::ModelDoc = &doc::DOC;
    const ABOUT: &'static str =
        "VIA NIC pipeline timing (Berkeley VIA, MyVIA, GM, M-VIA) on Myrinet LANai4/9 and Ethernet";
    type Config = Config;
    /// Nothing to parse ahead of the runs: the prepared point is the validated config.
    type Prepared = Config;

    fn validate(cfg: &Config) -> Result<(), Invalid> {
        const MAX: u64 = 1 << 24;
        Invalid::check(
            (1..=MAX).contains(&cfg.size),
            "size",
            "[1, 16777216] bytes",
            cfg.size,
        )?;
        // Every size is a pingpong and a window run of its own: bound their number so a
        // long list cannot take hours (the file limit alone allows ~500 000 entries).
        Invalid::check(
            cfg.sizes.len() <= MAX_SIZES,
            "sizes",
            &format!("at most {MAX_SIZES} sizes"),
            cfg.sizes.len(),
        )?;
        for s in &cfg.sizes {
            Invalid::check((1..=MAX).contains(s), "sizes", "[1, 16777216] bytes", s)?;
        }
        Invalid::check(
            (0.0..=1.0).contains(&cfg.tlb_hit_rate),
            "tlb_hit_rate",
            "[0, 1]",
            cfg.tlb_hit_rate,
        )?;
        Invalid::check(
            (1..=100_000).contains(&cfg.round_trips),
            "round_trips",
            "[1, 100000]",
            cfg.round_trips,
        )?;
        Invalid::check(
            (1..=100_000).contains(&cfg.messages),
            "messages",
            "[1, 100000]",
            cfg.messages,
        )?;
        Invalid::check(
            (1..=4096).contains(&cfg.queue_depth),
            "queue_depth",
            "[1, 4096]",
            cfg.queue_depth,
        )?;
        cfg.ring.validate()?;
        let pipe = build(&cfg.profile, &cfg.design, cfg.switches(), cfg.tlb_hit_rate)?;
        // The simulator holds every packet of a run in memory: keep runs bounded.
        const MAX_PACKETS: u64 = 4_000_000;
        let largest = cfg.sizes.iter().copied().max().unwrap_or(0).max(cfg.size);
        let per_msg = crate::sim::packets(&pipe, largest);
        // The window sends `messages`, the pingpong two messages per round trip: each bound
        // names its own key (a long pingpong was blamed on `messages`).
        Invalid::check(
            u64::from(cfg.messages) * per_msg <= MAX_PACKETS,
            "messages",
            &format!(
                "[1, {}] for the largest size {largest} B ({per_msg} packets each)",
                MAX_PACKETS / per_msg
            ),
            cfg.messages,
        )?;
        Invalid::check(
            2 * u64::from(cfg.round_trips) * per_msg <= MAX_PACKETS,
            "round_trips",
            &format!(
                "[1, {}] for the largest size {largest} B (two messages of {per_msg} packets each)",
                MAX_PACKETS / per_msg / 2
            ),
            cfg.round_trips,
        )
    }

    fn work(cfg: &Config) -> u64 {
        cfg.sizes.len() as u64 + 1
    }

    /// The config with `profile` and `design` files (names that are not bundled) resolved
    /// against the experiment file's folder (they were read relative to the working
    /// directory), validated.
    fn prepare(cfg: &Config, ctx: &icn_engine::Context) -> Result<Config, Invalid> {
        let mut cfg = cfg.clone();
        let file = |name: &mut String, bundled: &[(&str, &str)]| {
            if !bundled.iter().any(|(b, _)| b == name) {
                *name = ctx.resolve(name).display().to_string();
            }
        };
        file(&mut cfg.profile, &crate::profile::BUNDLED);
        file(&mut cfg.design, &crate::design::BUNDLED);
        Self::validate(&cfg)?;
        Ok(cfg)
    }

    fn run_prepared(
        cfg: &Config,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<Metrics, ModelError> {
        Self::validate(cfg)?;
        let pipe = build(&cfg.profile, &cfg.design, cfg.switches(), cfg.tlb_hit_rate)?;
        let mut m = Metrics::default();
        if cfg.benchmark == Benchmark::Pdring {
            let r = pdring::run_on(&cfg.profile, &cfg.design, &cfg.ring, seed)?;
            m.put(&doc::INTERRUPTS_PER_1000, r.interrupts_per_1000());
            m.put(&doc::OVERFLOW_FRACTION, r.overflow_fraction());
            m.put(&doc::NIC_SERVICE_US, r.mean_service_us);
            progress.advance(Self::work(cfg));
            return Ok(m);
        }
        match cfg.benchmark {
            Benchmark::Validation | Benchmark::Ablation | Benchmark::Sensitivity => {
                let m = report_run(cfg)?;
                progress.advance(Self::work(cfg));
                return Ok(m);
            }
            _ => {}
        }
        let e = cfg.effort();
        let point = |size: u64| {
            let lat = if cfg.benchmark == Benchmark::Window {
                f64::NAN
            } else {
                bench::pingpong(&pipe, size, e.round_trips, seed)?
            };
            let bw = if cfg.benchmark == Benchmark::Pingpong {
                f64::NAN
            } else {
                bench::window(&pipe, size, e.messages, e.queue_depth, seed)?
            };
            Ok::<_, crate::sim::Stall>((lat, bw))
        };
        let (lat, bw) = point(cfg.size).map_err(|e| ModelError::Failed(e.to_string()))?;
        progress.advance(1);
        m.put(&doc::LATENCY_US, lat);
        m.put(&doc::BANDWIDTH_MBS, bw);
        if !cfg.sizes.is_empty() {
            let mut rows = Vec::new();
            for &s in &cfg.sizes {
                let (l, b) = point(s).map_err(|e| ModelError::Failed(e.to_string()))?;
                rows.push(vec![s as f64, l, b]);
                progress.advance(1);
            }
            let max_bw = rows.iter().map(|r| r[2]).fold(f64::NAN, f64::max);
            let min_lat = rows.iter().map(|r| r[1]).fold(f64::NAN, f64::min);
            m.put(&doc::MAX_BANDWIDTH_MBS, max_bw);
            m.put(&doc::MIN_LATENCY_US, min_lat);
            m.tables.push(Table {
                name: "curve".into(),
                columns: vec![
                    "size_bytes".into(),
                    "latency_us".into(),
                    "bandwidth_mbs".into(),
                ],
                rows,
                ci95: vec![],
            });
        }
        m.tables
            .push(report::paper_table(&cfg.profile, &cfg.design));
        m.notes.push(format!(
            "deterministic model: replications only repeat the run (TLB misses aside); \
             profile {}, design {}",
            cfg.profile, cfg.design
        ));
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_engine::model::NoProgress;

    fn small() -> Config {
        Config {
            sizes: vec![4, 4096],
            round_trips: 2,
            messages: 50,
            ..Config::default()
        }
    }

    #[test]
    fn default_run_has_scalars_curve_and_paper_tables() {
        let m = Nic::run(&small(), 1, &NoProgress).unwrap();
        let lat = m.require("latency_us").unwrap();
        let bw = m.require("bandwidth_mbs").unwrap();
        assert!(lat > 0.0 && bw > 0.0 && bw <= 250.0, "{lat} {bw}");
        let curve = m.table("curve").unwrap();
        assert_eq!(curve.columns, ["size_bytes", "latency_us", "bandwidth_mbs"]);
        assert_eq!(curve.rows.len(), 2);
        assert_eq!(
            curve.rows[1][2], bw,
            "scalar at `size` equals the curve at 4096"
        );
        let paper = m.table("paper").unwrap();
        assert!(paper.rows.iter().any(|r| r[2] == 8.46));
    }

    #[test]
    fn pingpong_and_window_alone_leave_the_other_column_empty() {
        let c = Config {
            benchmark: Benchmark::Pingpong,
            ..small()
        };
        let m = Nic::run(&c, 1, &NoProgress).unwrap();
        assert!(
            m.require("latency_us").unwrap() > 0.0 && m.require("bandwidth_mbs").unwrap().is_nan()
        );
        let c = Config {
            benchmark: Benchmark::Window,
            ..small()
        };
        let m = Nic::run(&c, 1, &NoProgress).unwrap();
        assert!(
            m.require("latency_us").unwrap().is_nan() && m.require("bandwidth_mbs").unwrap() > 0.0
        );
        assert!(
            m.require("max_bandwidth_mbs").unwrap() > 0.0
                && m.require("min_latency_us").unwrap().is_nan()
        );
    }

    #[test]
    fn runs_are_a_pure_function_of_config_and_seed() {
        let mut c = small();
        c.design = "bvia".into();
        c.tlb_hit_rate = 0.6;
        let a = Nic::run(&c, 5, &NoProgress).unwrap();
        let b = Nic::run(&c, 5, &NoProgress).unwrap();
        // Debug text, because the paper table holds NaN (NaN != NaN).
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        let other = Nic::run(&c, 6, &NoProgress).unwrap();
        assert_ne!(
            format!("{a:?}"),
            format!("{other:?}"),
            "TLB misses follow the seed"
        );
    }

    #[test]
    fn bad_values_name_their_key() {
        let bad = |f: &dyn Fn(&mut Config)| {
            let mut c = small();
            f(&mut c);
            Nic::validate(&c).unwrap_err().key
        };
        assert_eq!(bad(&|c| c.tlb_hit_rate = 1.5), "tlb_hit_rate");
        assert_eq!(bad(&|c| c.size = 0), "size");
        assert_eq!(bad(&|c| c.messages = 0), "messages");
        assert_eq!(bad(&|c| c.profile = "setup-z".into()), "profile");
        assert_eq!(bad(&|c| c.design = "ucx".into()), "design");
        assert_eq!(bad(&|c| c.ring.low_water = 100), "ring.low_water");
        assert_eq!(
            bad(&|c| {
                c.design = "bvia".into();
                c.size = 1 << 24;
                c.messages = 2000;
            }),
            "messages"
        );
        // Issue 14: a pingpong too long for the largest size was blamed on `messages`.
        assert_eq!(
            bad(&|c| {
                c.design = "bvia".into();
                c.size = 1 << 24;
                c.messages = 1;
                c.round_trips = 100_000;
            }),
            "round_trips"
        );
        assert_eq!(bad(&|c| c.sizes = vec![64; MAX_SIZES + 1]), "sizes");
    }

    #[test]
    fn unknown_config_key_is_rejected() {
        let v: toml::Value = toml::from_str("design = \"gm\"\nturbo = true\n").unwrap();
        let e = icn_engine::config::deserialize_at::<Config>(v).unwrap_err();
        assert_eq!(e.key, "turbo");
    }

    #[test]
    fn user_profile_file_with_a_zero_rate_is_rejected() {
        let text = crate::profile::BUNDLED[1]
            .1
            .replace("wire = 250", "wire = 0");
        let path = std::env::temp_dir().join(format!("nic-bad-{}.toml", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let c = Config {
            profile: path.display().to_string(),
            ..small()
        };
        let e = Nic::validate(&c).unwrap_err();
        std::fs::remove_file(&path).ok();
        assert_eq!(e.key, "profile.resources.link.rates.wire");
    }

    #[test]
    fn pdring_benchmark_reports_interrupts() {
        let c = Config {
            profile: "setup-a".into(),
            benchmark: Benchmark::Pdring,
            ring: RingConfig {
                messages: 2000,
                ..RingConfig::default()
            },
            ..small()
        };
        let m = Nic::run(&c, 1, &NoProgress).unwrap();
        assert!(m.require("interrupts_per_1000").unwrap() > 1.0);
        assert!(m.require("overflow_fraction").unwrap() > 0.0);
    }
}
