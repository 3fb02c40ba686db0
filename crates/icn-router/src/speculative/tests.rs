//! Tests of the speculative router: the stage it saves per router, derived by hand against
//! the router of any radix; lower latency under load with the same deliveries; the delay
//! rule refused by key.

use super::*;
use crate::VcNetwork;
use crate::shell::VcParams;
use icn_engine::rng::{Rng, stream};
use icn_topo::Network;
use icn_topo::routing::Routing;
use icn_topo::{parse_network_spec, routing_for};
use std::sync::Arc;

fn net_routing(spec: &str, routing: &str) -> (Arc<Network>, Arc<dyn Routing>) {
    let net = Arc::new(parse_network_spec(spec).unwrap());
    let r = routing_for(&net, routing, None).unwrap();
    (net, Arc::from(r))
}

/// Cycles from creation to the tail's arrival of one packet alone in `n`.
fn alone<N: VcNetwork>(
    n: &mut N,
    step: impl Fn(&mut N, &mut Vec<(u64, crate::PacketDone)>),
    src: usize,
    dst: usize,
    len: u32,
) -> u64 {
    n.enqueue(src, dst, len);
    let mut got = Vec::new();
    while got.is_empty() {
        step(n, &mut got);
    }
    got[0].0 - got[0].1.created
}

#[test]
fn a_head_saves_its_vc_allocation_delay_at_every_router() {
    // mesh:4x4 under dimension order: terminal 0 → 15 crosses 7 routers (6 hops), 0 → 1
    // two, 0 → 0 one. With vc_alloc_delay = sw_alloc_delay = 2 the speculative router is
    // 2 cycles faster per router crossed, for any packet length.
    let (net, routing) = net_routing("mesh:4x4", "dor");
    let p = VcParams {
        vc_alloc_delay: 2,
        sw_alloc_delay: 2,
        ..VcParams::unit_delays(2, 8, 10_000)
    };
    for (dst, routers) in [(0, 1), (1, 2), (15, 7)] {
        for len in [1, 4] {
            let mut any = VcAnyNet::new(net.clone(), routing.clone(), p.clone(), 1, 1).unwrap();
            let mut spec = SpecNet::over(
                VcAnyNet::new(net.clone(), routing.clone(), p.clone(), 1, 1).unwrap(),
            )
            .unwrap();
            let a = alone(&mut any, |n, g| n.step(g).unwrap(), 0, dst, len);
            let s = alone(&mut spec, |n, g| n.step(g).unwrap(), 0, dst, len);
            assert_eq!(a - s, 2 * routers, "0 → {dst}, {len} flits: {a} vs {s}");
        }
    }
}

/// Mean latency and packets delivered under Bernoulli uniform traffic of `rate` packets
/// of 4 flits per terminal per cycle for 3 000 cycles, then drained.
fn under_load<N: VcNetwork>(
    n: &mut N,
    step: impl Fn(&mut N, &mut Vec<(u64, crate::PacketDone)>),
    rate: f64,
) -> (f64, usize) {
    let mut rng = stream(7, 0);
    let nodes = n.nodes();
    let mut got = Vec::new();
    let mut sent = 0;
    for _ in 0..3_000 {
        for src in 0..nodes {
            if rng.random::<f64>() < rate {
                n.enqueue(src, rng.random_range(0..nodes), 4);
                sent += 1;
            }
        }
        step(n, &mut got);
    }
    while n.in_network() > 0 {
        step(n, &mut got);
    }
    assert_eq!(got.len(), sent);
    assert!(n.credits_full());
    let total: u64 = got.iter().map(|(at, p)| at - p.created).sum();
    (total as f64 / got.len() as f64, got.len())
}

#[test]
fn speculation_lowers_latency_under_load_with_the_same_deliveries() {
    let (net, routing) = net_routing("mesh:4x4", "dor");
    let p = VcParams::unit_delays(2, 8, 10_000);
    for rate in [0.02, 0.06] {
        let mut any = VcAnyNet::new(net.clone(), routing.clone(), p.clone(), 1, 1).unwrap();
        let mut spec =
            SpecNet::over(VcAnyNet::new(net.clone(), routing.clone(), p.clone(), 1, 1).unwrap())
                .unwrap();
        let (a, na) = under_load(&mut any, |n, g| n.step(g).unwrap(), rate);
        let (s, ns) = under_load(&mut spec, |n, g| n.step(g).unwrap(), rate);
        assert_eq!(na, ns);
        // Zero load: 4 of 5 cycles per router, so under load at least a cycle per packet.
        assert!(
            s + 1.0 < a,
            "rate {rate}: speculative {s:.2} vs {a:.2} cycles"
        );
    }
}

#[test]
fn a_vc_allocation_slower_than_the_switch_allocation_is_refused_by_key() {
    let (net, routing) = net_routing("mesh:4x4", "dor");
    let p = VcParams {
        vc_alloc_delay: 2,
        ..VcParams::unit_delays(2, 8, 10_000)
    };
    let e = SpecNet::over(VcAnyNet::new(net, routing, p, 1, 1).unwrap())
        .err()
        .unwrap();
    assert!(e.to_string().contains("vc_alloc_delay"), "{e}");
}
