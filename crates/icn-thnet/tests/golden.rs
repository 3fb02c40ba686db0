//! Golden outputs: exact results of a few small runs of both models, so that speed work can
//! prove it did not change behaviour. Every scalar metric is compared bit for bit (printed with
//! `{:?}`, Rust's shortest round-trip form) and every table through a hash of its values' bits.
//!
//! The expected values live in `tests/golden.txt`. After a change that is *meant* to alter
//! results, re-record them with
//!
//! ```sh
//! GOLDEN_PRINT=1 cargo test --release -p icn-thnet --test golden
//! ```
//!
//! which rewrites the file (review the diff before committing it).

use icn_engine::model::NoProgress;
use icn_engine::{Metrics, Model};
use icn_fabric::traffic::TrafficPattern;
use icn_router::alloc::AllocKind;
use icn_router::vc_net::VcNetConfig;
use icn_thnet::vc_model::{OnDeadlock, VcRouter, VcRouterConfig};
use icn_thnet::xswitch_model::{XSwitch, XSwitchConfig};
use icn_thnet::xswitch_net::XSwitchNetConfig;
use std::fmt::Write as _;

fn vc(topology: &str, load: f64) -> VcRouterConfig {
    VcRouterConfig {
        net: VcNetConfig::on(topology),
        load,
        warmup: 500,
        measure: 3_000,
        drain: 20_000,
        ..VcRouterConfig::default()
    }
}

/// `c` changed by `f`.
fn with(mut c: VcRouterConfig, f: impl FnOnce(&mut VcRouterConfig)) -> VcRouterConfig {
    f(&mut c);
    c
}

fn xs(topology: &str, load: f64) -> XSwitchConfig {
    XSwitchConfig {
        net: XSwitchNetConfig::on(topology),
        load,
        size: 128,
        warmup: 500,
        measure: 3_000,
        drain: 20_000,
        ..XSwitchConfig::default()
    }
}

/// The golden runs: (name, seed, metrics).
fn runs() -> Vec<(&'static str, Metrics)> {
    let mut out = Vec::new();
    let mut vc_run = |name, cfg: VcRouterConfig, seed| {
        out.push((name, VcRouter::run(&cfg, seed, &NoProgress).expect("runs")));
    };
    vc_run("vc mesh4x4 0.3", vc("mesh:4x4", 0.3), 1);
    vc_run("vc mesh8x8 0.3", vc("mesh:8x8", 0.3), 2);
    vc_run(
        "vc mesh8x8 0.45 saturated",
        VcRouterConfig {
            drain: 2_000,
            ..vc("mesh:8x8", 0.45)
        },
        3,
    );
    vc_run(
        "vc torus4x4 islip 4vc bimodal",
        with(vc("torus:4x4", 0.35), |c| {
            let r = &mut c.net.router;
            (r.vcs, r.buf) = (4, 4);
            (r.vc_alloc, r.sw_alloc) = (AllocKind::Islip, AllocKind::Islip);
            c.large_fraction = 0.3;
        }),
        4,
    );
    let mut transpose = vc("mesh:4x4", 0.25);
    transpose.traffic.pattern = TrafficPattern::Transpose;
    vc_run(
        "vc mesh4x4 transpose delays",
        with(transpose, |c| {
            let r = &mut c.net.router;
            (r.routing_delay, r.vc_alloc_delay, r.sw_alloc_delay) = (0, 2, 2);
            (r.st_delay, r.channel_delay, r.credit_delay) = (0, 3, 2);
            r.vcs = 3;
        }),
        5,
    );
    let mut hot = vc("mesh:4x4", 0.3);
    hot.traffic.pattern = TrafficPattern::Hotspot;
    hot.traffic.hotspot_fraction = 0.3;
    vc_run("vc mesh4x4 hotspot", hot, 6);
    vc_run(
        "vc torus4x4 1vc deadlock report",
        // 0.6: at 0.4 `dim_order`'s random ties, drawn per input port since issue 24,
        // happen not to close the ring's cycle with this seed.
        with(vc("torus:4x4", 0.6), |c| {
            (c.net.router.vcs, c.net.router.watchdog) = (1, 1_000);
            c.on_deadlock = OnDeadlock::Report;
            // Rejected before the run by the deadlock check otherwise (issue 15).
            c.net.allow_deadlock = true;
        }),
        7,
    );
    let mut xs_run = |name, cfg: XSwitchConfig, seed| {
        out.push((name, XSwitch::run(&cfg, seed, &NoProgress).expect("runs")));
    };
    xs_run("xswitch mesh4x4 0.2", xs("mesh:4x4", 0.2), 1);
    xs_run("xswitch mesh8x8 0.3", xs("mesh:8x8", 0.3), 2);
    let mut hot = xs("mesh:4x4", 0.3);
    hot.traffic.pattern = TrafficPattern::Hotspot;
    hot.traffic.hotspot_fraction = 0.5;
    xs_run("xswitch mesh4x4 hotspot stop/go", hot, 3);
    xs_run(
        "xswitch ring8 split 32",
        {
            let mut c = xs("ring:8", 0.15);
            c.net.switch.frame_size = 32;
            c
        },
        4,
    );
    xs_run(
        "xswitch torus4x4 deadlock report",
        {
            let mut c = xs("torus:4x4", 0.5);
            c.net.switch.watchdog = 2_000;
            c.on_deadlock = OnDeadlock::Report;
            c
        },
        // Seed 3: with seed 5 (recorded until 2026-11-28) the torus saturates without closing
        // a cycle in this run, and the case reported no deadlock.
        3,
    );
    out
}

/// FNV-1a over the bits of every value of every table (with the table's name).
fn tables_hash(m: &Metrics) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    };
    for t in &m.tables {
        eat(t.name.as_bytes());
        for row in &t.rows {
            for v in row {
                eat(&v.to_bits().to_le_bytes());
            }
        }
    }
    h
}

fn render() -> String {
    let mut s = String::new();
    for (name, m) in runs() {
        writeln!(s, "[{name}]").unwrap();
        for x in &m.scalars {
            writeln!(s, "{} = {:?}", x.name, x.value).unwrap();
        }
        writeln!(s, "tables = {:016x}", tables_hash(&m)).unwrap();
    }
    s
}

/// A run named for a deadlock records one, the others none: a golden case that says it pins
/// the deadlock report must hold a report of a deadlock.
#[test]
fn the_deadlock_cases_deadlock_and_only_they() {
    for (name, m) in runs() {
        let dead = m.require("deadlocked").unwrap();
        assert_eq!(
            dead,
            f64::from(u8::from(name.contains("deadlock"))),
            "{name}"
        );
    }
}

#[test]
fn outputs_match_the_recorded_golden_file() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden.txt");
    let got = render();
    if std::env::var_os("GOLDEN_PRINT").is_some() {
        print!("{got}");
        std::fs::write(path, &got).expect("write tests/golden.txt");
        return;
    }
    let want =
        std::fs::read_to_string(path).expect("tests/golden.txt (record with GOLDEN_PRINT=1)");
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        assert_eq!(w, g, "line {} of tests/golden.txt differs", i + 1);
    }
    assert_eq!(want.lines().count(), got.lines().count(), "line count");
}
