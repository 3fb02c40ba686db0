//! The `Model` face of the crate: determinism, config validation, compare mode, traces and
//! the experiment files.

mod common;

use icn_engine::model::NoProgress;
use icn_engine::{ExperimentFile, Model, ModelError};
use icn_sci::config::{SciConfig, TrafficPattern, Transmitter};
use icn_sci::{Sci, bench_config};
use std::path::Path;

fn quick() -> SciConfig {
    common::short(6, 0.6, TrafficPattern::Hotspot)
}

#[test]
fn same_config_and_seed_give_identical_metrics() {
    for transmitter in [
        Transmitter::Standard,
        Transmitter::Intelligent,
        Transmitter::Compare,
    ] {
        let cfg = SciConfig {
            transmitter,
            ..quick()
        };
        let a = Sci::run(&cfg, 42, &NoProgress).unwrap();
        let b = Sci::run(&cfg, 42, &NoProgress).unwrap();
        assert_eq!(a, b);
        let c = Sci::run(&cfg, 43, &NoProgress).unwrap();
        assert_ne!(a, c, "a different seed should give different traffic");
    }
}

fn invalid_key(cfg: &SciConfig) -> String {
    Sci::validate(cfg)
        .expect_err("config should be rejected")
        .key
}

#[test]
fn bad_values_are_rejected_naming_the_key() {
    let base = SciConfig::default();
    assert!(Sci::validate(&base).is_ok());
    assert!(Sci::validate(&bench_config()).is_ok());
    let cases: Vec<(SciConfig, &str)> = vec![
        (
            SciConfig {
                nodes: 1,
                ..base.clone()
            },
            "nodes",
        ),
        (
            SciConfig {
                nodes: 65,
                ..base.clone()
            },
            "nodes",
        ),
        (
            SciConfig {
                load: 0.0,
                ..base.clone()
            },
            "load",
        ),
        (
            SciConfig {
                load: -0.5,
                ..base.clone()
            },
            "load",
        ),
        (
            SciConfig {
                load: 1.01,
                ..base.clone()
            },
            "load",
        ),
        (
            SciConfig {
                load: f64::NAN,
                ..base.clone()
            },
            "load",
        ),
        (
            SciConfig {
                queue_depth: 0,
                ..base.clone()
            },
            "queue_depth",
        ),
        (
            SciConfig {
                active_buffers: 0,
                ..base.clone()
            },
            "active_buffers",
        ),
        (
            SciConfig {
                send_queue_depth: 0,
                ..base.clone()
            },
            "send_queue_depth",
        ),
        (
            SciConfig {
                measure_cycles: 0,
                ..base.clone()
            },
            "measure_cycles",
        ),
        (
            SciConfig {
                quiet_window: 0,
                ..base.clone()
            },
            "quiet_window",
        ),
        (
            SciConfig {
                sat_quota: 0,
                ..base.clone()
            },
            "sat_quota",
        ),
        (
            SciConfig {
                data_bytes: vec![32],
                ..base.clone()
            },
            "data_bytes[0]",
        ),
        (
            SciConfig {
                data_bytes: vec![],
                data_weights: vec![],
                ..base.clone()
            },
            "data_bytes",
        ),
        (
            SciConfig {
                data_weights: vec![1.0, 2.0],
                ..base.clone()
            },
            "data_weights",
        ),
        (
            SciConfig {
                data_weights: vec![-1.0],
                ..base.clone()
            },
            "data_weights[0]",
        ),
        (
            SciConfig {
                data_weights: vec![0.0],
                ..base.clone()
            },
            "data_weights",
        ),
    ];
    for (cfg, key) in cases {
        assert_eq!(invalid_key(&cfg), key);
    }
    let mut hot = base.clone();
    hot.traffic.hotspot_node = 8;
    assert_eq!(invalid_key(&hot), "traffic.hotspot_node");
    hot.traffic.hotspot_node = 0;
    hot.traffic.hotspot_fraction = 1.5;
    assert_eq!(invalid_key(&hot), "traffic.hotspot_fraction");
    let e = invalid_message(SciConfig {
        nodes: 1,
        ..base.clone()
    });
    assert!(e.contains("2 ..= 64") && e.contains("got 1"), "{e}");
    // run() refuses bad configs too, with the same error.
    match Sci::run(&SciConfig { load: 0.0, ..base }, 1, &NoProgress) {
        Err(ModelError::Invalid(i)) => assert_eq!(i.key, "load"),
        other => panic!("{other:?}"),
    }
}

fn invalid_message(cfg: SciConfig) -> String {
    Sci::validate(&cfg).unwrap_err().to_string()
}

fn trace_config(text: &str, name: &str) -> SciConfig {
    let path = std::env::temp_dir().join(format!("icn-sci-{}-{name}.csv", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let mut cfg = SciConfig {
        nodes: 4,
        warmup_cycles: 0,
        measure_cycles: 1_000,
        ..SciConfig::default()
    };
    cfg.traffic.pattern = TrafficPattern::Trace;
    cfg.traffic.trace_file = Some(path.display().to_string());
    cfg
}

#[test]
fn traces_naming_missing_nodes_are_invalid_and_good_traces_run() {
    let bad = trace_config("cycle,src,dst,bytes\n0,1,2,64\n5,0,7,64\n", "bad");
    let e = Sci::validate(&bad).unwrap_err();
    assert_eq!(e.key, "traffic.trace_file");
    assert!(
        e.message.contains(":3: dst node 7 does not exist"),
        "{}",
        e.message
    );
    let mut missing = SciConfig::default();
    missing.traffic.pattern = TrafficPattern::Trace;
    assert_eq!(invalid_key(&missing), "traffic.trace_file");

    let good = trace_config(
        "cycle,src,dst,bytes\n0,1,2,64\n10,3,0,64\n10,0,3,64\n400,2,1,64\n",
        "good",
    );
    let m = Sci::run(&good, 1, &NoProgress).unwrap();
    assert_eq!(m.require("transactions_per_cycle").unwrap(), 4.0 / 1_000.0);
    assert_eq!(m.require("throughput_gbps").unwrap(), 4.0 * 64.0 / 2_000.0);
    // An uncongested send of 40 symbols from node 1 to node 2: one hop there, three back.
    assert!(
        m.require("delay_max_ns").unwrap() < 200.0,
        "{}",
        m.require("delay_max_ns").unwrap()
    );
}

#[test]
fn compare_reports_both_transmitters_and_their_ratios() {
    let cfg = SciConfig {
        transmitter: Transmitter::Compare,
        ..quick()
    };
    let m = Sci::run(&cfg, 7, &NoProgress).unwrap();
    let std = Sci::run(
        &SciConfig {
            transmitter: Transmitter::Standard,
            ..quick()
        },
        7,
        &NoProgress,
    )
    .unwrap();
    let iab = Sci::run(
        &SciConfig {
            transmitter: Transmitter::Intelligent,
            ..quick()
        },
        7,
        &NoProgress,
    )
    .unwrap();
    assert_eq!(m.require("eta_std").unwrap(), std.require("eta").unwrap());
    assert_eq!(m.require("eta_iab").unwrap(), iab.require("eta").unwrap());
    assert_eq!(
        m.require("r").unwrap(),
        iab.require("eta").unwrap() / std.require("eta").unwrap()
    );
    assert_eq!(
        m.require("delay_ratio").unwrap(),
        iab.require("delay_mean_ns").unwrap() / std.require("delay_mean_ns").unwrap()
    );
    assert_eq!(
        m.require("cycles_simulated").unwrap(),
        std.require("cycles_simulated").unwrap() + iab.require("cycles_simulated").unwrap()
    );
    // Identical traffic: the same sends were generated in both runs.
    assert_eq!(
        m.require("offered_load_actual_std").unwrap(),
        m.require("offered_load_actual_iab").unwrap()
    );
    assert_eq!(m.tables, iab.tables);
    assert_eq!(Sci::work(&cfg), 2 * Sci::work(&quick()));
}

#[test]
fn metrics_have_the_documented_names_and_sane_values() {
    let m = Sci::run(&quick(), 3, &NoProgress).unwrap();
    for name in [
        "eta",
        "throughput_gbps",
        "transactions_per_cycle",
        "ps_disallow_sent",
        "ps_disallow_share",
        "busy_echoes",
        "notify_symbols",
        "notify_overhead",
        "delay_mean_ns",
        "delay_p50_ns",
        "delay_p99_ns",
        "delay_max_ns",
        "retries_per_packet",
        "serve_a_epoch_mean_ns",
        "serve_b_epoch_mean_ns",
        "jain_fairness",
        "cycles_simulated",
        "offered_load_actual",
    ] {
        assert!(m.get(name).is_some(), "missing {name}");
    }
    let t = m.table("per_source").unwrap();
    assert_eq!(
        t.columns,
        [
            "source",
            "throughput_gbps",
            "delay_mean_ns",
            "delay_p99_ns",
            "delay_max_ns",
            "accepted"
        ]
    );
    assert_eq!(t.rows.len(), 6);
    let sum: f64 = t.rows.iter().map(|r| r[1]).sum();
    assert!((sum - m.require("throughput_gbps").unwrap()).abs() < 1e-9);
    // 64-byte sends: 40 symbols carry 64 bytes, so GB/s = eta × N × 64/40 symbols... per 2 ns.
    let expect = m.require("eta").unwrap() * 6.0 * 64.0 / 40.0 / 2.0;
    assert!((m.require("throughput_gbps").unwrap() - expect).abs() < 1e-9);
    assert!(
        m.require("delay_p50_ns").unwrap() <= m.require("delay_p99_ns").unwrap()
            && m.require("delay_p99_ns").unwrap() <= m.require("delay_max_ns").unwrap()
    );
    let cfg = quick();
    assert!(
        m.require("cycles_simulated").unwrap() >= (cfg.warmup_cycles + cfg.measure_cycles) as f64
    );
    assert!((m.require("offered_load_actual").unwrap() - 0.6).abs() < 0.05);
    assert_eq!(m.require("notify_symbols").unwrap(), 0.0);
}

#[test]
fn toml_keys_are_checked_and_experiment_files_parse() {
    let err = toml::from_str::<SciConfig>("nodes = 4\nnodez = 5\n").unwrap_err();
    assert!(err.to_string().contains("nodez"));
    let cfg: SciConfig =
        toml::from_str("receiver = \"counted-ab\"\n[traffic]\npattern = \"uniform\"\n").unwrap();
    assert_eq!(cfg.traffic.pattern, TrafficPattern::Uniform);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    for name in [
        "sci-ab-vs-iab.toml",
        "sci-fairness.toml",
        "sci-congestion.toml",
        "sci-hotspot.toml",
        "examples/sci-basic.toml",
    ] {
        for quick in [false, true] {
            let file = ExperimentFile::load(&root.join(name), quick).unwrap();
            assert_eq!(file.model, "sci");
            for point in file.points() {
                let cfg: SciConfig = file.typed(&point.body).unwrap();
                Sci::validate(&cfg).unwrap();
            }
        }
    }
}

/// Loads inside (0, 1] so small that 1 − p rounds to 1: `ln(1 − p)` was 0, every gap 1, and
/// the *smallest* load ran as the largest, silently. Now the gap is exact (ln_1p) and no send
/// is generated in a run far shorter than 1/p cycles.
#[test]
fn a_tiny_load_offers_nothing_rather_than_everything() {
    for load in [1e-15, 1e-300, f64::MIN_POSITIVE, 5e-324] {
        let m = Sci::run(
            &common::short(6, load, TrafficPattern::Uniform),
            1,
            &NoProgress,
        )
        .unwrap();
        assert_eq!(
            m.require("offered_load_actual").unwrap(),
            0.0,
            "load {load}"
        );
    }
    // A small but representable rate still offers about what it says.
    let m = Sci::run(
        &common::short(6, 1e-3, TrafficPattern::Uniform),
        1,
        &NoProgress,
    )
    .unwrap();
    let got = m.require("offered_load_actual").unwrap();
    assert!((0.5e-3..2e-3).contains(&got), "{got}");
}

/// The same for switched SCI (its hosts use the ring's traffic source).
#[test]
fn a_tiny_load_offers_nothing_on_switched_sci() {
    use icn_sci::switched::{SciSwitched, SwitchedConfig, TopologyKind};
    let cfg = SwitchedConfig {
        topology: TopologyKind::RingOfRings,
        rings: 3,
        ring: common::short(4, 1e-15, TrafficPattern::Uniform),
        ..SwitchedConfig::default()
    };
    let m = SciSwitched::run(&cfg, 1, &NoProgress).unwrap();
    assert_eq!(m.require("offered_load_actual").unwrap(), 0.0);
}
