//! Switched SCI: the degenerate single ring is the `sci` model bit for bit; every topology
//! runs, is deterministic and rejects bad keys by name.

mod common;

use icn_engine::Model;
use icn_engine::model::NoProgress;
use icn_sci::config::{SciConfig, TrafficPattern, Transmitter};
use icn_sci::protocol::Policy;
use icn_sci::switched::{
    Prepared, RetryOrder, SciSwitched, SwitchedConfig, System, Topology, TopologyKind,
};
use icn_sci::{Sci, ring::Sim};
use proptest::prelude::*;

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
        for pattern in [
            TrafficPattern::Hotspot,
            TrafficPattern::Uniform,
            TrafficPattern::NeighborX,
        ] {
            let mut c = common::short(6, 0.7, pattern);
            c.transmitter = transmitter;
            c.traffic.hotspot_node = 2;
            cases.push(c);
        }
    }
    // Saturated, a slow receiver and small send queues (drops), and a size mix.
    let mut c = common::saturated_hotspot(Policy::Ab);
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
        let c = common::short(5, 0.9, TrafficPattern::Hotspot);
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
        ring: common::short(4, 0.4, TrafficPattern::Uniform),
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
        // NaN metrics (no hot spot here) compare by their printed form.
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{topology:?}");
        assert!(a.require("forwarded_std").unwrap() > 100.0, "{topology:?}");
        assert!(a.require("eta_remote_iab").unwrap() > 0.0);
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
    c.switch.sat_quota = 0;
    assert_eq!(key(&c), "switch.sat_quota");
    let mut c = base.clone();
    c.sat_quota = 0;
    assert_eq!(key(&c), "sat_quota");
    // A multi-ring system takes its hosts' quota from `sat_quota`, and says so.
    let mut c = base.clone();
    c.ring.sat_quota = 1;
    let e = SciSwitched::validate(&c).unwrap_err();
    assert!(
        e.key == "ring.sat_quota" && e.to_string().contains("top-level `sat_quota`"),
        "{e}"
    );
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

/// Random switched systems: topology, ring sizes, switch queues and service, traffic mix.
fn random_system(
    max_rings: usize,
    max_nodes: usize,
    measure: u64,
) -> impl Strategy<Value = (SwitchedConfig, bool, u64)> {
    (
        (
            prop::sample::select(vec![
                TopologyKind::RingOfRings,
                TopologyKind::Grid,
                TopologyKind::Crossbar,
            ]),
            2usize..=max_rings,
            2usize..=3,
            1usize..=3,
            2usize..=max_nodes,
        ),
        (1usize..=6, 0u64..=60, prop::option::of(0.0f64..=1.0)),
        (
            0.05f64..=1.0,
            prop::sample::select(vec![TrafficPattern::Uniform, TrafficPattern::Hotspot]),
            0.0f64..=1.0,
            1usize..=4,
            1usize..=4,
            0u64..=200,
            prop::sample::subsequence(vec![0u16, 64, 256], 1..=3),
        ),
        (any::<bool>(), any::<bool>(), any::<u64>()),
        (
            any::<bool>(),
            prop::sample::select(vec![Policy::Ab, Policy::NoAging, Policy::CountedAb]),
            any::<bool>(),
            prop::sample::select(vec![
                RetryOrder::BusiedFirst,
                RetryOrder::Oldest,
                RetryOrder::LeastRecent,
            ]),
            1u32..=3,
        ),
    )
        .prop_map(
            move |(
                (topology, rings, rows, cols, nodes),
                (sw_depth, sw_service, local),
                (load, pattern, frac, depth, active, service, sizes),
                (intelligent, remote, seed),
                (fixed, sw_policy, hot_ring_sends, retry_order, sat_quota),
            )| {
                let mut c = SwitchedConfig {
                    topology,
                    rings,
                    grid_rows: rows,
                    grid_cols: cols,
                    local_fraction: local,
                    remote_status: remote,
                    ..SwitchedConfig::default()
                };
                c.switch.queue_depth = sw_depth;
                c.switch.receiver = sw_policy;
                c.hot_ring_sends = hot_ring_sends;
                c.retry_order = retry_order;
                c.sat_quota = sat_quota;
                if fixed {
                    c.switch.arbitration = icn_sci::switched::Arbitration::Fixed;
                }
                c.switch.service_time = sw_service;
                c.ring = SciConfig {
                    nodes,
                    load,
                    queue_depth: depth,
                    active_buffers: active,
                    service_time: service,
                    data_weights: vec![1.0; sizes.len()],
                    data_bytes: sizes,
                    send_queue_depth: 4,
                    warmup_cycles: 200,
                    measure_cycles: measure,
                    drain_limit_cycles: 2_000_000,
                    ..SciConfig::default()
                };
                c.ring.traffic.pattern = pattern;
                c.ring.traffic.hotspot_fraction = frac;
                (c, intelligent, seed)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every send accepted exactly once at its final target, each hop an ordinary send on its
    /// ring (echoes matched, phases as the echoes asked, one acceptance per ring), nothing
    /// left anywhere after the drain.
    #[test]
    fn switched_conservation((cfg, intelligent, seed) in random_system(4, 6, 2_000)) {
        check_system(&cfg, intelligent, seed)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// The same over ten times as many, larger systems: up to 6 rings of 10 hosts, 10 000
    /// measured cycles.
    #[test]
    #[ignore = "heavy: cargo test --release -p icn-sci --test switched -- --ignored"]
    fn switched_conservation_heavy((cfg, intelligent, seed) in random_system(6, 10, 10_000)) {
        check_system(&cfg, intelligent, seed)?;
    }
}

fn check_system(cfg: &SwitchedConfig, intelligent: bool, seed: u64) -> Result<(), TestCaseError> {
    // The `sci` ring's oldest-first order can deadlock intelligent transmitters behind
    // 1-packet switch queues (`intelligent_aging_with_one_packet_switch_queues`), and with
    // plain busy/retry at the switch queues it can starve a send for ever (found here at SAT
    // quota 3): that is why switched rings default to busied first, least recent among them.
    prop_assume!(
        !(cfg.retry_order == RetryOrder::Oldest
            && (cfg.switch.receiver == Policy::NoAging
                || (intelligent && cfg.switch.queue_depth == 1)))
    );
    {
        let topo = Topology::build(cfg).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut sys = System::new(cfg, &topo, seed, intelligent)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        sys.enable_log();
        sys.run(&NoProgress)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(sys.quiescent());
        prop_assert_eq!(sys.in_flight(), 0);
        let mut accepted = vec![0u32; sys.injected() as usize];
        for &(seq, src, dst, at) in sys.acceptances() {
            accepted[seq as usize] += 1;
            prop_assert!(
                at == dst && dst != src,
                "send {} for host {} accepted at {}",
                seq,
                dst,
                at
            );
        }
        prop_assert!(
            accepted.iter().all(|&n| n == 1),
            "acceptances per send: {:?}",
            accepted.iter().filter(|&&n| n != 1).count()
        );
        let mut hops = 0u64;
        for (r, ring) in sys.rings().iter().enumerate() {
            if let Err(e) = ring.check_quiescent_state() {
                return Err(TestCaseError::fail(format!("ring {r}: {e}")));
            }
            let (created, removed) = ring.symbol_totals();
            prop_assert_eq!(created, removed, "ring {}: symbols on vs off", r);
            prop_assert_eq!(ring.injected(), ring.accepted_total(), "ring {}", r);
            if let Err(e) = common::check_log(sys.ring_events(r)) {
                return Err(TestCaseError::fail(format!("ring {r}: {e}")));
            }
            hops += ring.injected();
        }
        // Each send makes as many ring hops as its route has rings.
        let want: u64 = sys
            .acceptances()
            .iter()
            .map(|&(_, s, d, _)| topo.hops(s, d) as u64)
            .sum();
        prop_assert_eq!(hops, want);
    }
    Ok(())
}

/// An agent on a host ring sends for every host whose traffic crosses it. With a host's SAT
/// quota it gets one host's share of its ring: 2 rings of 10 hosts around a crossbar at load
/// 0.1 then collapse (measured η 0.027 of the offered 0.098: the agents' send queues fill, their
/// input queues fill, hosts retry). With the switch's own quota (default 8) everything
/// offered is carried.
#[test]
fn agents_need_a_larger_sat_quota_than_hosts() {
    let mut c = SwitchedConfig {
        topology: TopologyKind::Crossbar,
        rings: 2,
        local_fraction: Some(0.5),
        ring: common::short(10, 0.1, TrafficPattern::Uniform),
        ..SwitchedConfig::default()
    };
    c.ring.measure_cycles = 30_000;
    let m = SciSwitched::run(&c, 1, &NoProgress).unwrap();
    let offered = m.require("offered_load_actual").unwrap();
    assert!(
        m.require("eta").unwrap() > 0.97 * offered,
        "{} of {offered}",
        m.require("eta").unwrap()
    );
    c.switch.sat_quota = c.sat_quota;
    let m = SciSwitched::run(&c, 1, &NoProgress).unwrap();
    assert!(
        m.require("eta").unwrap() < 0.5 * offered,
        "{} of {offered}",
        m.require("eta").unwrap()
    );
}

/// Machine-wide hold-back (docs/sci.md): once a node has parsed a relayed NOTIFY saying host j
/// entered SERVE_A (SERVE_B), it starts no new send for j until a relayed NOTIFY says j left
/// it. Checked by replaying every ring's event log: each first try (NOTRY) is compared with the
/// sender's remote table as the relayed NOTIFYs before it set it.
#[test]
fn sources_hold_back_sends_a_remote_target_would_refuse() {
    use icn_sci::protocol::{Phase, ServeState, allowed};
    use icn_sci::ring::Event;
    use std::collections::HashMap;
    for topology in [
        TopologyKind::RingOfRings,
        TopologyKind::Grid,
        TopologyKind::Crossbar,
    ] {
        let mut c = SwitchedConfig {
            topology,
            rings: 3,
            grid_rows: 3,
            grid_cols: 2,
            local_fraction: Some(0.2),
            ring: common::short(5, 0.6, TrafficPattern::Hotspot),
            ..SwitchedConfig::default()
        };
        c.ring.traffic.hotspot_fraction = 0.5;
        c.ring.measure_cycles = 30_000;
        let topo = Topology::build(&c).unwrap();
        let mut sys = System::new(&c, &topo, 9, true).unwrap();
        sys.enable_log();
        sys.run(&NoProgress).unwrap();
        let fin: HashMap<u64, usize> = sys.acceptances().iter().map(|a| (a.0, a.2)).collect();
        let (mut relays, mut checked, mut while_busy_elsewhere) = (0, 0, 0);
        for r in 0..sys.rings().len() {
            let mut remote: HashMap<(u8, u16), ServeState> = HashMap::new();
            for e in sys.ring_events(r) {
                match *e {
                    Event::RemoteNotifySeen {
                        node, host, change, ..
                    } => {
                        relays += 1;
                        remote.insert((node, host), change.to());
                    }
                    Event::Transmit {
                        seq,
                        src,
                        phase: Phase::NoTry,
                        ..
                    } => {
                        let j = fin[&seq] as u16;
                        let known = remote.get(&(src, j)).copied().unwrap_or(ServeState::Na);
                        assert!(
                            allowed(known, Phase::NoTry),
                            "{topology:?} ring {r}: node {src} sent send {seq} for host {j} \
                             known in {known:?}"
                        );
                        checked += 1;
                        while_busy_elsewhere += usize::from(
                            remote
                                .iter()
                                .any(|(&(n, _), s)| n == src && !allowed(*s, Phase::NoTry)),
                        );
                    }
                    _ => {}
                }
            }
        }
        // The relays ran, and sources kept sending to other targets while one was held.
        assert!(
            relays > 100,
            "{topology:?}: {relays} relayed NOTIFYs parsed"
        );
        assert!(checked > 1000 && while_busy_elsewhere > 0, "{topology:?}");
    }
}

/// Found by `switched_conservation_heavy`: with intelligent transmitters and 1-packet switch
/// queues this crossbar (5 rings of 2 hosts) stopped moving during the drain under
/// oldest-first retries (standard A/B aging, or 2-packet queues, drained it). Diagnosis (event
/// logs): on ring 1 host 0 re-sent its oldest send (RETRY_B to the ring's agent, whose input
/// queue is full) every time its BUSY echo returned — before its 40-symbol transmission even
/// ended — so its younger RETRY_A to host 1, the reservation host 1 waited for in SERVE_A, was
/// never sent; the agent's one-packet send queue held a send for host 1 that the intelligent
/// transmitter holds back while host 1 is in SERVE_A, so no switch could forward onto ring 1,
/// and the agents' full input queues closed the cycle. Fixed by least-recently-transmitted
/// order on switched rings (`retry_order`, docs/sci.md); with oldest first (`retry_order =
/// "oldest"`) the same system still deadlocks, which the test checks too.
#[test]
fn intelligent_aging_with_one_packet_switch_queues() {
    let mut c = SwitchedConfig {
        topology: TopologyKind::Crossbar,
        rings: 5,
        local_fraction: Some(0.3986614757652956),
        remote_status: false,
        ..SwitchedConfig::default()
    };
    c.switch.queue_depth = 1;
    c.switch.service_time = 26;
    // Found with the hosts at SAT quota 2 (at the default 1 this case happens to drain).
    c.sat_quota = 2;
    c.ring = SciConfig {
        nodes: 2,
        load: 0.6566089503243355,
        active_buffers: 3,
        queue_depth: 3,
        service_time: 167,
        send_queue_depth: 4,
        warmup_cycles: 200,
        measure_cycles: 10_000,
        drain_limit_cycles: 200_000,
        ..SciConfig::default()
    };
    c.ring.traffic.pattern = TrafficPattern::Uniform;
    let topo = Topology::build(&c).unwrap();
    let seed = 13410920708362354545;
    for intelligent in [false, true] {
        let mut sys = System::new(&c, &topo, seed, intelligent).unwrap();
        sys.run(&NoProgress)
            .unwrap_or_else(|e| panic!("intelligent {intelligent}: {e}"));
    }
    // Both ways: the `sci` ring's oldest-first order deadlocks here.
    c.retry_order = RetryOrder::Oldest;
    let mut sys = System::new(&c, &topo, seed, true).unwrap();
    let e = sys.run(&NoProgress).unwrap_err().to_string();
    assert!(e.contains("drain did not finish"), "{e}");
    assert!(!sys.quiescent() && sys.fault().is_none());
}

/// Counts, over every ring's event log, the retries that re-sent a busied send although the
/// same node had another busied send ready that it had transmitted longer ago (standard
/// transmitters: every ready send is eligible). Also returns the number of retries.
fn retries_out_of_least_recent_order(c: &SwitchedConfig) -> (usize, usize) {
    use icn_sci::protocol::Echo;
    use icn_sci::ring::Event;
    use std::collections::HashMap;
    let topo = Topology::build(c).unwrap();
    let mut sys = System::new(c, &topo, 3, false).unwrap();
    sys.enable_log();
    sys.run(&NoProgress).unwrap();
    let (mut retries, mut out_of_order) = (0, 0);
    for r in 0..sys.rings().len() {
        // Per node: its busied sends ready to be re-sent, with their last transmission.
        let mut ready: HashMap<u8, HashMap<u64, u64>> = HashMap::new();
        let mut last_tx: HashMap<u64, u64> = HashMap::new();
        for e in sys.ring_events(r) {
            match *e {
                Event::Transmit {
                    cycle,
                    seq,
                    src,
                    phase,
                    ..
                } => {
                    let mine = ready.entry(src).or_default();
                    if phase != icn_sci::protocol::Phase::NoTry {
                        retries += 1;
                        let sent = mine.remove(&seq).expect("a retry of a ready busied send");
                        if mine.values().any(|&other| other < sent) {
                            out_of_order += 1;
                        }
                    }
                    last_tx.insert(seq, cycle);
                }
                Event::EchoReceived {
                    seq, node, echo, ..
                } if echo != Echo::Done => {
                    ready.entry(node).or_default().insert(seq, last_tx[&seq]);
                }
                _ => {}
            }
        }
    }
    (retries, out_of_order)
}

/// The transmit order itself, replayed from the event logs of a congested crossbar: with
/// `busied-first` (the default) every retry re-sends the node's least recently transmitted
/// busied send (measured: 0 of 3720 retries out of that order); with the `sci` ring's
/// `oldest` some retries do not (190 of 3680: that is how a younger reservation holder waited
/// for ever in the deadlock above).
#[test]
fn busied_first_retries_the_least_recently_transmitted_send() {
    let mut c = small(TopologyKind::Crossbar);
    c.ring.load = 0.8;
    c.ring.traffic.pattern = TrafficPattern::Hotspot;
    c.ring.traffic.hotspot_fraction = 0.5;
    let (retries, out_of_order) = retries_out_of_least_recent_order(&c);
    assert!(retries > 1000, "{retries} retries: not congested enough");
    assert_eq!(out_of_order, 0, "of {retries} retries");
    c.retry_order = RetryOrder::Oldest;
    let (retries, out_of_order) = retries_out_of_least_recent_order(&c);
    assert!(
        out_of_order > 0,
        "oldest first: {out_of_order} of {retries} retries"
    );
}
