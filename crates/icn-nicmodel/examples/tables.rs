//! Writes `docs/nicmodel.md`: model description, validation, ablation, TLB, PD-ring and
//! sensitivity tables, calibration, and every profile and design with its sources.
//!
//! `cargo run --release -p icn-nicmodel --example tables` (from the workspace root; prints the
//! document to stdout as well when given `-`).

use icn_nicmodel::bench::{self, Effort};
use icn_nicmodel::pdring::{self, RingConfig};
use icn_nicmodel::{Design, Profile, Switches, build_from, design, profile, report};
use std::fmt::Write as _;

const INTRO: &str = include_str!("nicmodel-intro.md");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let effort = Effort::default();
    let mut d = String::new();
    d.push_str(INTRO);

    writeln!(d, "\n## Validation (paper vs model)\n")?;
    writeln!(
        d,
        "| # | target | paper | model | rel. error | accepted | result |"
    )?;
    writeln!(d, "|---|---|---|---|---|---|---|")?;
    for (i, c) in report::validation(effort)?.iter().enumerate() {
        let band = if c.lo.is_nan() {
            "—".to_owned()
        } else {
            format!("[{}, {}]", fmt(c.lo), fmt(c.hi))
        };
        let res = match c.pass() {
            Some(true) => "pass",
            Some(false) => "**miss**",
            None => "info",
        };
        writeln!(
            d,
            "| {i} | {} | {} | {} | {:+.1} % | {band} | {res} |",
            c.name,
            fmt(c.paper),
            fmt(c.model),
            100.0 * c.rel_error()
        )?;
    }

    writeln!(d, "\n## Curves (model)\n")?;
    for (p, designs) in [
        ("setup-a", &["bvia", "myvia"][..]),
        ("setup-b", &["bvia", "myvia", "gm"][..]),
        ("fast-ethernet", &["mvia"][..]),
        ("gigabit-ethernet", &["mvia"][..]),
    ] {
        let curves: Vec<_> = designs
            .iter()
            .map(|x| report::curve(p, x, effort))
            .collect::<Result<_, _>>()?;
        writeln!(d, "**{p}** — one-way latency µs / window bandwidth MB/s\n")?;
        let head: Vec<String> = designs
            .iter()
            .map(|x| format!("{x} µs | {x} MB/s"))
            .collect();
        writeln!(d, "| size B | {} |", head.join(" | "))?;
        writeln!(d, "|---|{}", "---|---|".repeat(designs.len()))?;
        for (i, s) in bench::paper_sizes().iter().enumerate() {
            let cells: Vec<String> = curves
                .iter()
                .map(|c| format!("{:.2} | {:.2}", c[i].latency_us, c[i].bandwidth_mbs))
                .collect();
            writeln!(d, "| {s} | {} |", cells.join(" | "))?;
        }
        writeln!(d)?;
    }

    packetisation(&mut d, effort)?;

    writeln!(
        d,
        "## Ablation: MyVIA with each optimisation switched off\n"
    )?;
    writeln!(
        d,
        "| profile | variant | latency 4 B µs | BW 1 KB | BW 4 KB | BW 64 KB (MB/s) |"
    )?;
    writeln!(d, "|---|---|---|---|---|---|")?;
    for r in report::ablation(effort)? {
        writeln!(
            d,
            "| {} | {} | {:.2} | {:.1} | {:.1} | {:.1} |",
            r.profile, r.variant, r.latency_us, r.bw_1k, r.bw_4k, r.bw_64k
        )?;
    }

    writeln!(
        d,
        "\n## Berkeley VIA vs NIC TLB hit rate (paper: 10–40 % loss on poor locality)\n"
    )?;
    writeln!(
        d,
        "| profile | hit rate | BW 4 KB | loss | BW 64 KB | loss |"
    )?;
    writeln!(d, "|---|---|---|---|---|---|")?;
    let sweep = report::tlb_sweep(effort, 1)?;
    for (p, hit, b4, b64) in &sweep {
        let base = sweep
            .iter()
            .find(|r| r.0 == *p && r.1 == 1.0)
            .map_or(*b4, |r| r.2);
        let base64 = sweep
            .iter()
            .find(|r| r.0 == *p && r.1 == 1.0)
            .map_or(*b64, |r| r.3);
        writeln!(
            d,
            "| {p} | {hit} | {b4:.1} | {:.0} % | {b64:.1} | {:.0} % |",
            100.0 * (1.0 - b4 / base),
            100.0 * (1.0 - b64 / base64)
        )?;
    }

    writeln!(d, "\n## PD ring: interrupts per 1000 messages (MyVIA)\n")?;
    let rc = RingConfig::default();
    writeln!(
        d,
        "Workload: the paper's bimodal sizes, bursts of {} posts (geometric), one post per {} µs \
         on average, {} µs per post in a burst, big ring {} PDs, {} messages. Low-water mark {} \
         unless stated.\n",
        rc.burst_mean, rc.mean_gap_us, rc.post_us, rc.big_ring, rc.messages, rc.low_water
    )?;
    writeln!(
        d,
        "| small ring | LANai4 (set-up A) | LANai9 (set-up B) | A, low water 1 | A, low water 8 |"
    )?;
    writeln!(d, "|---|---|---|---|---|")?;
    for small in [8usize, 16, 32, 64, 128, 256] {
        let mut cells = Vec::new();
        for (p, lw) in [
            ("setup-a", 4usize),
            ("setup-b", 4),
            ("setup-a", 1),
            ("setup-a", 8),
        ] {
            let cfg = RingConfig {
                small_ring: small,
                low_water: lw.min(small - 1),
                ..RingConfig::default()
            };
            cells.push(format!(
                "{:.2}",
                pdring::run_on(p, "myvia", &cfg, 1)?.interrupts_per_1000()
            ));
        }
        writeln!(d, "| {small} | {} |", cells.join(" | "))?;
    }

    writeln!(d, "\n## Sensitivity: each hardware parameter ±20 %\n")?;
    writeln!(
        d,
        "Change of each headline number (rows moving less than 0.05 % are omitted; 500 window messages).\n"
    )?;
    writeln!(d, "| headline | parameter | base | −20 % | +20 % |")?;
    writeln!(d, "|---|---|---|---|---|")?;
    let quick = Effort {
        messages: 500,
        ..effort
    };
    for r in report::sensitivity(quick)? {
        writeln!(
            d,
            "| {} | {} | {:.2} | {:+.1} % | {:+.1} % |",
            r.headline,
            r.parameter,
            r.base,
            100.0 * (r.minus20 / r.base - 1.0),
            100.0 * (r.plus20 / r.base - 1.0)
        )?;
    }

    writeln!(d, "\n## Calibration\n")?;
    writeln!(
        d,
        "Only these design parameters were fitted; everything else is from the paper, data sheets or the reasoning in the comments below.\n"
    )?;
    writeln!(d, "| design | parameter | value | fitted to |")?;
    writeln!(d, "|---|---|---|---|")?;
    for (name, text) in design::BUNDLED {
        let des = icn_nicmodel::Design::parse(text)?;
        for (k, why) in &des.calibrated {
            writeln!(d, "| {name} | {k} | {} cycles | {why} |", des.params[k])?;
        }
    }

    writeln!(d, "\n## Hardware profiles (bundled, with sources)\n")?;
    for (name, text) in profile::BUNDLED {
        writeln!(d, "### `{name}`\n\n```toml\n{}```\n", text)?;
    }
    writeln!(d, "## Designs (bundled)\n")?;
    for (name, text) in design::BUNDLED {
        writeln!(d, "### `{name}`\n\n```toml\n{}```\n", text)?;
    }

    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/nicmodel.md");
    std::fs::write(&path, &d)?;
    if std::env::args().any(|a| a == "-") {
        print!("{d}");
    }
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// One-way latency of `design` on `profile` with the wire packet size replaced.
fn latency_with_packets(
    profile: &Profile,
    packet_bytes: Option<u64>,
    design: &str,
    size: u64,
    effort: Effort,
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut p = profile.clone();
    p.packet_bytes = packet_bytes;
    let pipe = build_from(&p, &Design::load(design)?, Switches::default(), 1.0)?;
    Ok(bench::pingpong(&pipe, size, effort.round_trips, 1)?)
}

/// Before/after table of packetisation on set-up B, and MyVIA's sensitivity to the packet size.
fn packetisation(d: &mut String, effort: Effort) -> Result<(), Box<dyn std::error::Error>> {
    let b = Profile::load("setup-b")?;
    let pk = b.packet_bytes;
    writeln!(
        d,
        "## Packetisation on set-up B: one-way latency of large messages (µs)\n"
    )?;
    writeln!(
        d,
        "\"before\" = `packet_bytes` unset (each DMA stored and forwarded whole); \"after\" = the \
         bundled profile ({} B packets). BVIA and GM move one page per DMA, so they are the same \
         either way. Reproduce: `cargo run --release -p icn-nicmodel --example large_latency`.\n",
        pk.map_or("no".to_owned(), |n| n.to_string())
    )?;
    writeln!(
        d,
        "| size B | MyVIA before | MyVIA after | BVIA | GM | MyVIA after / BVIA |"
    )?;
    writeln!(d, "|---|---|---|---|---|---|")?;
    for s in [4096u64, 8192, 16384, 32768, 65536, 131072, 262144] {
        let before = latency_with_packets(&b, None, "myvia", s, effort)?;
        let after = latency_with_packets(&b, pk, "myvia", s, effort)?;
        let bv = latency_with_packets(&b, pk, "bvia", s, effort)?;
        let gm = latency_with_packets(&b, pk, "gm", s, effort)?;
        writeln!(
            d,
            "| {s} | {before:.2} | {after:.2} | {bv:.2} | {gm:.2} | {:.3} |",
            after / bv
        )?;
    }
    let packets = [1024u64, 2048, 4096, 8192, 16384];
    writeln!(
        d,
        "\nMyVIA on set-up B against the assumed packet size (one-way latency µs):\n"
    )?;
    let head: Vec<String> = packets.iter().map(|p| format!("{p} B")).collect();
    writeln!(d, "| size B | {} |", head.join(" | "))?;
    writeln!(d, "|---|{}", "---|".repeat(packets.len()))?;
    for s in [32768u64, 131072, 262144] {
        let cells: Vec<String> = packets
            .iter()
            .map(|&p| {
                latency_with_packets(&b, Some(p), "myvia", s, effort).map(|l| format!("{l:.2}"))
            })
            .collect::<Result<_, _>>()?;
        writeln!(d, "| {s} | {} |", cells.join(" | "))?;
    }
    writeln!(d)?;
    Ok(())
}

fn fmt(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}
