//! No starvation across switches (issue 17): every remote source gets its share of a
//! saturated hot spot with standard A/B aging, and what the switches and the transmitters
//! must do for that.
//!
//! Set-up: 4 host rings of 8 hosts, every host sends only to host 0 at full load, host 0's own
//! ring is silent (`hot_ring_sends = false`), so every send reaching the hot spot crossed a
//! switch. The measure is `hotspot_jain_remote`: Jain's index of the sends the hot host
//! accepted, by source. Everything else is the default configuration (SAT quota 1, A/B aging
//! at the switches' input queues, round-robin switch arbitration, busied-first transmit
//! order). Figures in the comments are seed 1; `reproduce sci-switched-fairness` gives them
//! with confidence intervals (docs/sci.md, "No starvation").

use icn_engine::Model;
use icn_engine::model::NoProgress;
use icn_sci::config::{SciConfig, TrafficPattern};
use icn_sci::protocol::Policy;
use icn_sci::switched::{
    Arbitration, RetryOrder, SciSwitched, SwitchedConfig, System, Topology, TopologyKind,
};

const HOSTS: usize = 8;

fn remote_hot_spot(topology: TopologyKind) -> SwitchedConfig {
    let mut c = SwitchedConfig {
        topology,
        rings: 4,
        hot_ring_sends: false,
        ring: SciConfig {
            nodes: HOSTS,
            load: 1.0,
            warmup_cycles: 10_000,
            measure_cycles: 100_000,
            ..SciConfig::default()
        },
        ..SwitchedConfig::default()
    };
    c.ring.traffic.pattern = TrafficPattern::Hotspot;
    c.ring.traffic.hotspot_node = 0;
    c.ring.traffic.hotspot_fraction = 1.0;
    c.ring.traffic.hot_node_sends = false;
    c
}

fn jain(c: &SwitchedConfig) -> f64 {
    let m = SciSwitched::run(c, 1, &NoProgress).unwrap();
    // The hot host is saturated: it accepts one send per service time (120 cycles).
    let accepted = m.require("transactions_per_cycle").unwrap();
    assert!((accepted - 1.0 / 120.0).abs() < 1e-4, "{accepted}");
    m.require("hotspot_jain_remote").unwrap()
}

/// Sends the hot host accepted from each host (global host id).
fn accepted_by_source(c: &SwitchedConfig) -> Vec<u64> {
    let topo = Topology::build(c).unwrap();
    let mut sys = System::new(c, &topo, 1, false).unwrap();
    sys.run(&NoProgress).unwrap();
    sys.measure().hot_accepted_by_src
}

/// The default configuration is fair: ring of rings 0.990, crossbar 0.9998.
#[test]
fn a_saturated_remote_hot_spot_is_fair_under_standard_ab_aging() {
    for topology in [TopologyKind::RingOfRings, TopologyKind::Crossbar] {
        let j = jain(&remote_hot_spot(topology));
        assert!(j >= 0.95, "{topology:?}: Jain {j}");
    }
}

/// Why the default SAT quota is 1. With 2 (the `sci` ring's default) a ring of rings gets
/// Jain 0.86. Who loses, and where: the nodes just *upstream* of a congested target, whose
/// bypass FIFO carries everyone else's sends. On the backbone the hot ring's switch is agent
/// 0, so ring 3's switch (agent 3, just upstream) gets half of ring 1's (183 against 366
/// sends); on each host ring the congested target is the ring's switch agent, so host 7 (just
/// upstream of it) gets about half of host 0 (just downstream). An A/B reservation is taken by
/// a *new* send, and a node whose busied send is ready re-sends it first: only a node with two
/// transmit opportunities within an echo round trip — quota 2 and an empty FIFO — starts new
/// sends while its busied one waits. Least-recently-transmitted order for busied and new sends
/// alike (`retry_order = "least-recent"`) also evens it out at quota 2 (0.98), at a cost in
/// throughput (docs/sci.md); the `sci` ring's oldest-first order is as unfair as the default.
#[test]
fn sat_quota_2_starves_the_nodes_upstream_of_a_congested_target() {
    let mut c = remote_hot_spot(TopologyKind::RingOfRings);
    c.sat_quota = 2;
    for order in [RetryOrder::BusiedFirst, RetryOrder::Oldest] {
        c.retry_order = order;
        let j = jain(&c);
        assert!(j < 0.9, "{order:?}, quota 2: Jain {j}");
    }
    c.retry_order = RetryOrder::BusiedFirst;
    let by_src = accepted_by_source(&c);
    let ring_total =
        |by_src: &[u64], r: usize| -> u64 { by_src[r * HOSTS..(r + 1) * HOSTS].iter().sum() };
    let [r1, r2, r3] = [1, 2, 3].map(|r| ring_total(&by_src, r));
    // Backbone order 0 → 1 → 2 → 3 → 0: the further downstream of the hot ring's switch,
    // the larger the share.
    assert!(r1 > r2 && r2 > r3 && r1 > 3 * r3 / 2, "{by_src:?}");
    for r in 1..4 {
        let (first, last) = (by_src[r * HOSTS], by_src[r * HOSTS + HOSTS - 1]);
        assert!(first > 3 * last / 2, "ring {r}: {by_src:?}");
    }
    c.retry_order = RetryOrder::LeastRecent;
    let j = jain(&c);
    assert!(j >= 0.95, "least recent, quota 2: Jain {j}");
}

/// Do switch queues need A/B aging of their own? With the switches' input queues answering
/// plain busy/retry (`switch.receiver = "no-aging"`): at the default quota 1 not to reach 0.9
/// (ring of rings 0.935 without, 0.990 with; crossbar 0.996 / 0.9998), at quota 2 yes, and it
/// is not enough there (ring of rings 0.41 without, 0.86 with).
#[test]
fn switch_input_queues_need_ab_aging_only_when_the_quota_is_coarse() {
    let mut c = remote_hot_spot(TopologyKind::RingOfRings);
    c.switch.receiver = Policy::NoAging;
    let plain = jain(&c);
    assert!(
        (0.9..0.97).contains(&plain),
        "quota 1, no aging: Jain {plain}"
    );
    c.sat_quota = 2;
    let plain = jain(&c);
    assert!(plain < 0.6, "quota 2, no aging: Jain {plain}");
}

/// A crossbar whose inputs compete for the hot ring's agent in fixed ring order: the later
/// rings get a fraction (0.33); round-robin fixes it (first test).
#[test]
fn a_fixed_priority_crossbar_is_unfair() {
    let mut c = remote_hot_spot(TopologyKind::Crossbar);
    c.switch.arbitration = Arbitration::Fixed;
    let j = jain(&c);
    assert!(j < 0.5, "Jain {j}");
}
