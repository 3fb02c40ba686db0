//! Validation (paper vs model), ablation and sensitivity tables, and the paper's points.
//!
//! Each table is produced by one function returning plain rows, and converted to an
//! [`icn_engine::Table`] (numbers only; row names go to the doc via the row structs).

use crate::bench::{self, Effort, Point};
use crate::{Design, Profile, Switches, build, build_from};
use icn_engine::{Invalid, Table};

/// The paper's numbers for `(profile, design)` as table `paper` (size_bytes, bandwidth_mbs,
/// latency_us; NaN where the paper gives nothing). Maxima without a stated size are placed
/// at 128 KB. The plotter draws no markers yet; this table is there so it can.
pub fn paper_table(profile: &str, design: &str) -> Table {
    let nan = f64::NAN;
    let rows: Vec<Vec<f64>> = match (profile, design) {
        ("setup-a", "bvia") => vec![vec![131072.0, 47.46, nan]],
        ("setup-a", "myvia") => vec![vec![131072.0, 76.2, nan]],
        ("setup-b", "myvia") => vec![
            vec![4.0, nan, 8.46],
            vec![4096.0, 250.0, nan],
            vec![32768.0, 250.0, nan],
        ],
        ("setup-b", "bvia") | ("setup-b", "gm") => vec![vec![32768.0, 250.0, nan]],
        ("fast-ethernet", "mvia") => vec![vec![4.0, nan, 22.0], vec![131072.0, 11.6, nan]],
        ("gigabit-ethernet", "mvia") => vec![vec![131072.0, 59.7, nan]],
        _ => vec![],
    };
    table(
        "paper",
        &["size_bytes", "bandwidth_mbs", "latency_us"],
        rows,
    )
}

fn table(name: &str, columns: &[&str], rows: Vec<Vec<f64>>) -> Table {
    Table {
        name: name.into(),
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        rows,
        ci95: vec![],
    }
}

/// One validation target: the paper's figure, the model's, and the accepted band.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub name: String,
    pub paper: f64,
    pub model: f64,
    /// Accepted band; NaN = informative only (no pass/fail).
    pub lo: f64,
    pub hi: f64,
}

impl Check {
    fn within(name: &str, paper: f64, model: f64, tol: f64) -> Check {
        Check {
            name: name.into(),
            paper,
            model,
            lo: paper * (1.0 - tol),
            hi: paper * (1.0 + tol),
        }
    }

    pub fn rel_error(&self) -> f64 {
        self.model / self.paper - 1.0
    }

    /// `None` for informative rows.
    pub fn pass(&self) -> Option<bool> {
        (!self.lo.is_nan()).then_some(self.model >= self.lo && self.model <= self.hi)
    }
}

/// Curves of one `(profile, design)` pair with the design's own switches.
pub fn curve(profile: &str, design: &str, effort: Effort) -> Result<Vec<Point>, Invalid> {
    let pipe = build(profile, design, Switches::default(), 1.0)?;
    Ok(bench::curve(&pipe, &bench::paper_sizes(), effort, 1)?)
}

fn at(c: &[Point], size: u64) -> Point {
    *c.iter().find(|p| p.size_bytes == size).unwrap_or(&c[0])
}

fn max_bw(c: &[Point]) -> f64 {
    c.iter().map(|p| p.bandwidth_mbs).fold(f64::MIN, f64::max)
}

fn min_lat(c: &[Point]) -> f64 {
    c.iter().map(|p| p.latency_us).fold(f64::MAX, f64::min)
}

/// Size where `a`'s bandwidth first overtakes `b`'s, interpolated in log size; NaN if never.
pub fn crossover(a: &[Point], b: &[Point]) -> f64 {
    let r: Vec<(f64, f64)> = a
        .iter()
        .zip(b)
        .map(|(p, q)| {
            (
                (p.size_bytes as f64).ln(),
                p.bandwidth_mbs / q.bandwidth_mbs - 1.0,
            )
        })
        .collect();
    for w in r.windows(2) {
        if w[0].1 < 0.0 && w[1].1 >= 0.0 {
            let f = -w[0].1 / (w[1].1 - w[0].1);
            return (w[0].0 + f * (w[1].0 - w[0].0)).exp();
        }
    }
    f64::NAN
}

/// Every validation target of the brief, in order.
pub fn validation(effort: Effort) -> Result<Vec<Check>, Invalid> {
    let a_my = curve("setup-a", "myvia", effort)?;
    let a_bv = curve("setup-a", "bvia", effort)?;
    let b_my = curve("setup-b", "myvia", effort)?;
    let b_bv = curve("setup-b", "bvia", effort)?;
    let b_gm = curve("setup-b", "gm", effort)?;
    let fe = curve("fast-ethernet", "mvia", effort)?;
    let ge = curve("gigabit-ethernet", "mvia", effort)?;
    let ratios: Vec<f64> = b_bv
        .iter()
        .zip(&b_my)
        .filter(|(p, _)| p.size_bytes < 8192)
        .map(|(p, q)| p.bandwidth_mbs / q.bandwidth_mbs)
        .collect();
    let rmin = ratios.iter().copied().fold(f64::MAX, f64::min);
    let rmax = ratios.iter().copied().fold(f64::MIN, f64::max);
    let band = |name: &str, paper: f64, model: f64, lo: f64, hi: f64| Check {
        name: name.into(),
        paper,
        model,
        lo,
        hi,
    };
    Ok(vec![
        Check::within(
            "B MyVIA min one-way latency (µs)",
            8.46,
            min_lat(&b_my),
            0.1,
        ),
        Check::within(
            "B MyVIA bandwidth at 4 KB (MB/s)",
            250.0,
            at(&b_my, 4096).bandwidth_mbs,
            0.1,
        ),
        Check::within("A BVIA max bandwidth (MB/s)", 47.46, max_bw(&a_bv), 0.1),
        Check::within("A MyVIA max bandwidth (MB/s)", 76.2, max_bw(&a_my), 0.1),
        band(
            "A MyVIA overtakes BVIA at (B)",
            2000.0,
            crossover(&a_my, &a_bv),
            1500.0,
            2500.0,
        ),
        band(
            "A MyVIA/BVIA min latency ratio",
            1.0,
            min_lat(&a_my) / min_lat(&a_bv),
            0.9,
            1.1,
        ),
        band(
            "B BVIA/MyVIA bandwidth, min below 8 KB",
            0.5,
            rmin,
            0.4,
            0.6,
        ),
        band(
            "B BVIA/MyVIA bandwidth, max below 8 KB",
            0.5,
            rmax,
            0.4,
            0.6,
        ),
        Check::within(
            "B MyVIA bandwidth at 32 KB (MB/s)",
            250.0,
            at(&b_my, 32768).bandwidth_mbs,
            0.1,
        ),
        Check::within(
            "B BVIA bandwidth at 32 KB (MB/s)",
            250.0,
            at(&b_bv, 32768).bandwidth_mbs,
            0.1,
        ),
        Check::within(
            "B GM bandwidth at 32 KB (MB/s)",
            250.0,
            at(&b_gm, 32768).bandwidth_mbs,
            0.1,
        ),
        band(
            "B GM/MyVIA bandwidth at 4 KB (slightly above)",
            1.0,
            at(&b_gm, 4096).bandwidth_mbs / at(&b_my, 4096).bandwidth_mbs,
            1.0,
            1.1,
        ),
        Check::within("FE M-VIA max bandwidth (MB/s)", 11.6, max_bw(&fe), 0.1),
        Check::within("FE M-VIA min latency (µs)", 22.0, min_lat(&fe), 0.1),
        band(
            "GbE M-VIA max bandwidth (MB/s), cited, other hosts",
            59.7,
            max_bw(&ge),
            f64::NAN,
            f64::NAN,
        ),
    ])
}

/// Columns: check, paper, model, rel_error, lo, hi, pass (1 / 0 / NaN = informative).
pub fn validation_table(checks: &[Check]) -> Table {
    let rows = checks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let pass = c.pass().map_or(f64::NAN, |p| f64::from(u8::from(p)));
            vec![i as f64, c.paper, c.model, c.rel_error(), c.lo, c.hi, pass]
        })
        .collect();
    table(
        "validation",
        &["check", "paper", "model", "rel_error", "lo", "hi", "pass"],
        rows,
    )
}

/// One ablation variant on one profile.
#[derive(Clone, Debug, PartialEq)]
pub struct Ablation {
    pub profile: &'static str,
    pub variant: &'static str,
    pub latency_us: f64,
    pub bw_1k: f64,
    pub bw_4k: f64,
    pub bw_64k: f64,
}

/// MyVIA with each optimisation switched off in turn (then all), and BVIA for reference.
pub fn ablation(effort: Effort) -> Result<Vec<Ablation>, Invalid> {
    let off = Some(false);
    let variants: [(&str, &str, Switches, f64); 8] = [
        ("MyVIA", "myvia", Switches::default(), 1.0),
        (
            "- user TLB (NIC TLB, 100 % hits)",
            "myvia",
            Switches {
                user_tlb: off,
                ..Switches::default()
            },
            1.0,
        ),
        (
            "- user TLB (NIC TLB, 70 % hits)",
            "myvia",
            Switches {
                user_tlb: off,
                ..Switches::default()
            },
            0.7,
        ),
        (
            "- PD ring (doorbell + descriptor DMA)",
            "myvia",
            Switches {
                pd_ring: off,
                ..Switches::default()
            },
            1.0,
        ),
        (
            "- pipeline (one message at a time)",
            "myvia",
            Switches {
                pipeline: off,
                ..Switches::default()
            },
            1.0,
        ),
        (
            "- big DMA (page-sized DMAs)",
            "myvia",
            Switches {
                big_dma: off,
                ..Switches::default()
            },
            1.0,
        ),
        (
            "- all four",
            "myvia",
            Switches {
                user_tlb: off,
                pd_ring: off,
                pipeline: off,
                big_dma: off,
            },
            1.0,
        ),
        ("Berkeley VIA", "bvia", Switches::default(), 1.0),
    ];
    let mut out = Vec::new();
    for profile in ["setup-a", "setup-b"] {
        for (variant, design, sw, hit) in &variants {
            let pipe = build(profile, design, *sw, *hit)?;
            let bw = |s| bench::window(&pipe, s, effort.messages, effort.queue_depth, 1);
            out.push(Ablation {
                profile,
                variant,
                latency_us: bench::pingpong(&pipe, 4, effort.round_trips, 1)?,
                bw_1k: bw(1024)?,
                bw_4k: bw(4096)?,
                bw_64k: bw(65536)?,
            });
        }
    }
    Ok(out)
}

/// Columns: profile (0 = A, 1 = B), variant, latency_us, bw_1k_mbs, bw_4k_mbs, bw_64k_mbs.
pub fn ablation_table(rows: &[Ablation]) -> Table {
    let mut variant = 0usize;
    let data = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if i > 0 && rows[i - 1].profile != r.profile {
                variant = 0;
            }
            variant += 1;
            let p = f64::from(u8::from(r.profile == "setup-b"));
            vec![
                p,
                (variant - 1) as f64,
                r.latency_us,
                r.bw_1k,
                r.bw_4k,
                r.bw_64k,
            ]
        })
        .collect();
    table(
        "ablation",
        &[
            "profile",
            "variant",
            "latency_us",
            "bw_1k_mbs",
            "bw_4k_mbs",
            "bw_64k_mbs",
        ],
        data,
    )
}

/// Berkeley VIA bandwidth vs NIC TLB hit rate: `(profile, hit rate, bw 4 KB, bw 64 KB)`.
pub fn tlb_sweep(effort: Effort, seed: u64) -> Result<Vec<(&'static str, f64, f64, f64)>, Invalid> {
    let mut out = Vec::new();
    for profile in ["setup-a", "setup-b"] {
        for hit in [1.0, 0.9, 0.7, 0.5, 0.0] {
            let pipe = build(profile, "bvia", Switches::default(), hit)?;
            let bw = |s| bench::window(&pipe, s, effort.messages, effort.queue_depth, seed);
            out.push((profile, hit, bw(4096)?, bw(65536)?));
        }
    }
    Ok(out)
}

/// A headline number the sensitivity table follows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Headline {
    pub name: &'static str,
    pub profile: &'static str,
    pub design: &'static str,
    /// `None` = one-way latency at 4 B; `Some(size)` = window bandwidth at that size.
    pub bw_size: Option<u64>,
}

pub const HEADLINES: [Headline; 7] = [
    Headline {
        name: "B MyVIA latency 4 B",
        profile: "setup-b",
        design: "myvia",
        bw_size: None,
    },
    Headline {
        name: "B MyVIA BW 4 KB",
        profile: "setup-b",
        design: "myvia",
        bw_size: Some(4096),
    },
    Headline {
        name: "B BVIA BW 4 KB",
        profile: "setup-b",
        design: "bvia",
        bw_size: Some(4096),
    },
    Headline {
        name: "A BVIA BW 128 KB",
        profile: "setup-a",
        design: "bvia",
        bw_size: Some(131072),
    },
    Headline {
        name: "A MyVIA BW 128 KB",
        profile: "setup-a",
        design: "myvia",
        bw_size: Some(131072),
    },
    Headline {
        name: "FE M-VIA latency 4 B",
        profile: "fast-ethernet",
        design: "mvia",
        bw_size: None,
    },
    Headline {
        name: "FE M-VIA BW 128 KB",
        profile: "fast-ethernet",
        design: "mvia",
        bw_size: Some(131072),
    },
];

/// Evaluates a headline on a given profile.
pub fn headline_value(h: &Headline, profile: &Profile, effort: Effort) -> Result<f64, Invalid> {
    let design = Design::load(h.design)?;
    let pipe = build_from(profile, &design, Switches::default(), 1.0)?;
    Ok(match h.bw_size {
        None => bench::pingpong(&pipe, 4, effort.round_trips, 1)?,
        Some(s) => bench::window(&pipe, s, effort.messages, effort.queue_depth, 1)?,
    })
}

/// One sensitivity row: a headline under one parameter at −20 % and +20 %.
#[derive(Clone, Debug, PartialEq)]
pub struct Sensitivity {
    pub headline: &'static str,
    pub parameter: String,
    pub base: f64,
    pub minus20: f64,
    pub plus20: f64,
}

/// Every parameter of the headline's profile moved ±20 %; rows moving less than 0.05 % are
/// dropped.
pub fn sensitivity(effort: Effort) -> Result<Vec<Sensitivity>, Invalid> {
    let mut out = Vec::new();
    for h in &HEADLINES {
        let p = Profile::load(h.profile)?;
        let base = headline_value(h, &p, effort)?;
        for (param, _) in p.parameters() {
            let minus20 = headline_value(h, &p.scaled(&param, 0.8), effort)?;
            let plus20 = headline_value(h, &p.scaled(&param, 1.2), effort)?;
            if (minus20 / base - 1.0).abs() > 5e-4 || (plus20 / base - 1.0).abs() > 5e-4 {
                out.push(Sensitivity {
                    headline: h.name,
                    parameter: param,
                    base,
                    minus20,
                    plus20,
                });
            }
        }
    }
    Ok(out)
}

/// Columns: headline (index into [`HEADLINES`]), base, minus20, plus20, change_minus_pct,
/// change_plus_pct (parameter names are in the doc).
pub fn sensitivity_table(rows: &[Sensitivity]) -> Table {
    let data = rows
        .iter()
        .map(|r| {
            let h = HEADLINES
                .iter()
                .position(|h| h.name == r.headline)
                .unwrap_or(0);
            vec![
                h as f64,
                r.base,
                r.minus20,
                r.plus20,
                100.0 * (r.minus20 / r.base - 1.0),
                100.0 * (r.plus20 / r.base - 1.0),
            ]
        })
        .collect();
    table(
        "sensitivity",
        &[
            "headline",
            "base",
            "minus20",
            "plus20",
            "change_minus_pct",
            "change_plus_pct",
        ],
        data,
    )
}
