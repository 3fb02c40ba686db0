//! Switched SCI: the degenerate single ring is the `sci` model bit for bit; every topology
//! runs, is deterministic and rejects bad keys by name.

mod common;

use icn_engine::Model;
use icn_engine::model::NoProgress;
use icn_sci::config::{Pattern, SciConfig, Transmitter};
use icn_sci::switched::{Prepared, SciSwitched, SwitchedConfig, System, Topology, TopologyKind};
use icn_sci::{Sci, ring::Sim};

fn single(ring: SciConfig) -> SwitchedConfig {
    SwitchedConfig {
        topology: TopologyKind::Single,
        ring,
        ..SwitchedConfig::default()
    }
}

#[test]
fn a_single_ring_is_the_sci_model_bit_for_bit() {
    let mut cases = Vec::new();
    for transmitter in [
        Transmitter::Standard,
        Transmitter::Intelligent,
        Transmitter::Compare,
    ] {
        for pattern in [Pattern::Hotspot, Pattern::Uniform, Pattern::Neighbour] {
            let mut c = common::short(6, 0.7, pattern);
            c.transmitter = transmitter;
            c.traffic.hotspot_node = 2;
            cases.push(c);
        }
    }
    // Saturated, a slow receiver and small send queues (drops), and a size mix.
    let mut c = common::saturated_hotspot(icn_sci::protocol::Policy::Ab);
    c.send_queue_depth = 3;
    c.measure_cycles = 30_000;
    c.data_bytes = vec![16, 256];
    c.data_weights = vec![1.0, 1.0];
    cases.push(c);
    for (k, c) in cases.iter().enumerate() {
        let want = Sci::run(c, 7 + k as u64, &NoProgress).unwrap();
        let got = SciSwitched::run(&single(c.clone()), 7 + k as u64, &NoProgress).unwrap();
        assert_eq!(want.scalars.len(), got.scalars.len(), "case {k}");
        for (a, b) in want.scalars.iter().zip(&got.scalars) {
            assert_eq!(a.name, b.name, "case {k}");
            assert_eq!(
                a.value.to_bits(),
                b.value.to_bits(),
                "case {k}: {} = {} (sci) vs {} (single switched ring)",
                a.name,
                a.value,
                b.value
            );
        }
        assert_eq!(want.tables, got.tables, "case {k}");
    }
}

#[test]
fn a_single_ring_has_the_sci_event_log() {
    for intelligent in [false, true] {
        let c = common::short(5, 0.9, Pattern::Hotspot);
        let mut sim = Sim::new(&c, 3, intelligent).unwrap();
        sim.enable_log();
        sim.run(&NoProgress).unwrap();
        let cfg = single(c);
        let topo = Topology::build(&cfg).unwrap();
        let mut sys = System::new(&cfg, &topo, 3, intelligent).unwrap();
        sys.enable_log();
        sys.run(&NoProgress).unwrap();
        assert!(sim.events().len() > 1000);
        assert_eq!(sim.events(), sys.ring_events(0));
        assert_eq!(sim.now(), sys.now());
    }
}

fn small(topology: TopologyKind) -> SwitchedConfig {
    let mut c = SwitchedConfig {
        topology,
        rings: 3,
        grid_rows: 2,
        grid_cols: 2,
        ring: common::short(4, 0.4, Pattern::Uniform),
        ..SwitchedConfig::default()
    };
    c.ring.measure_cycles = 20_000;
    c
}

#[test]
fn every_topology_runs_and_is_deterministic() {
    for topology in [
        TopologyKind::RingOfRings,
        TopologyKind::Grid,
        TopologyKind::Crossbar,
    ] {
        let mut c = small(topology);
        c.ring.transmitter = Transmitter::Compare;
        let a = SciSwitched::run(&c, 5, &NoProgress).unwrap();
        let b = SciSwitched::run(&c, 5, &NoProgress).unwrap();
        assert_eq!(a, b, "{topology:?}");
        assert!(a.value("forwarded_std") > 100.0, "{topology:?}");
        assert!(a.value("eta_remote_iab") > 0.0);
        eprintln!("{topology:?}: r {} r_local {} r_remote {} eta {}", a.value("r"), a.value("r_local"), a.value("r_remote"), a.value("eta_std"));
    }
}

#[test]
fn bad_keys_are_named() {
    let key = |c: &SwitchedConfig| SciSwitched::validate(c).unwrap_err().key;
    let base = small(TopologyKind::Crossbar);
    assert!(SciSwitched::validate(&base).is_ok());
    let mut c = base.clone();
    c.rings = 1;
    assert_eq!(key(&c), "rings");
    let mut c = base.clone();
    c.switch.queue_depth = 0;
    assert_eq!(key(&c), "switch.queue_depth");
    let mut c = base.clone();
    c.local_fraction = Some(1.5);
    assert_eq!(key(&c), "local_fraction");
    let mut c = base.clone();
    c.ring.traffic.hotspot_node = 12;
    assert_eq!(key(&c), "ring.traffic.hotspot_node");
    let mut c = base.clone();
    c.ring.load = 0.0;
    assert_eq!(key(&c), "ring.load");
    let mut c = small(TopologyKind::Grid);
    c.grid_cols = 9;
    assert_eq!(key(&c), "grid_cols");
    let _ = Prepared {
        cfg: base.clone(),
        topo: Topology::build(&base).unwrap(),
    };
}
