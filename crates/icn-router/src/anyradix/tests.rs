//! Tests of the VC router of any radix: the zero-load formula on several families,
//! exactly-once delivery with credits conserved, the VC class split, bad parameters.

use super::*;
use crate::VcNetwork;
use crate::alloc::rr_pick;
use icn_engine::rng::stream;
use icn_topo::routing::trace;
use icn_topo::{parse_network_spec, routing_for};

fn params(vcs: usize) -> VcParams {
    VcParams::unit_delays(vcs, 8, 10_000)
}

fn build(spec: &str, routing: &str, p: VcParams) -> VcAnyNet {
    let net = Arc::new(parse_network_spec(spec).unwrap());
    let classes = routing_for(&net, routing, None).unwrap().vc_classes();
    let r = routing_for(&net, routing, Some(classes.min(p.vcs as u8))).unwrap();
    VcAnyNet::new(net, Arc::from(r), p, 1, 1).unwrap()
}

fn alone(net: &mut VcAnyNet, src: usize, dst: usize, len: u32) -> u64 {
    net.enqueue(src, dst, len);
    let mut got = Vec::new();
    while got.is_empty() {
        net.step(&mut got).unwrap();
    }
    let (at, p) = got[0];
    assert_eq!((p.src, p.dst, p.len), (src, dst, len));
    at - p.created
}

/// Router-to-router hops of the deterministic route from `src` to `dst`.
fn hops(net: &VcAnyNet, src: usize, dst: usize) -> u64 {
    let mut rng = stream(0, 0);
    let route = trace(
        net.network(),
        net.routing.as_ref(),
        src as u32,
        dst as u32,
        &mut rng,
        &[],
        64,
    )
    .unwrap();
    route.len() as u64 - 1
}

/// With all delays 1 a packet of L flits over H router hops takes 7 + 5·H + (L − 1) cycles
/// on any network, as on the fast path's mesh: the stages do not depend on the radix.
#[test]
fn zero_load_latency_is_7_plus_5h_plus_l_minus_1_on_every_family() {
    for (spec, routing) in [
        ("mesh:4x4", "dor"),
        ("mesh:3x3x2,2", "dor"),
        ("torus:4x4", "dor"),
        ("fattree:2,3", "updown"),
        ("dragonfly:1,2,2", "minimal"),
        ("dragonfly:2", "minimal"),
        ("flatfly:3x3", "dor"),
        ("hypercube:4", "dor"),
    ] {
        let mut net = build(spec, routing, params(2));
        let n = net.nodes();
        for src in (0..n).step_by(n / 8 + 1) {
            for dst in 0..n {
                for len in [1, 5] {
                    let want = 7 + 5 * hops(&net, src, dst) + u64::from(len - 1);
                    assert_eq!(
                        alone(&mut net, src, dst, len),
                        want,
                        "{spec} {src}→{dst} L={len}"
                    );
                }
            }
        }
    }
}

/// Global dragonfly links take `global_delay` cycles instead of `channel_delay`: a route
/// local, global, local is 4 cycles longer with `global_delay = 5`.
#[test]
fn global_links_have_their_own_delay() {
    let net = Arc::new(parse_network_spec("dragonfly:1,2,2").unwrap());
    let routing: Arc<dyn Routing> = Arc::from(routing_for(&net, "minimal", None).unwrap());
    let mut fast = VcAnyNet::new(net.clone(), routing.clone(), params(2), 1, 1).unwrap();
    let mut slow = VcAnyNet::new(net.clone(), routing, params(2), 5, 1).unwrap();
    // Terminal 0 (group 0) to terminal 9 (group 4): one global hop.
    let (a, b) = (alone(&mut fast, 0, 9, 3), alone(&mut slow, 0, 9, 3));
    assert_eq!(b, a + 4);
    // Inside a group: no global link, no difference.
    assert_eq!(alone(&mut fast, 0, 1, 3), alone(&mut slow, 0, 1, 3));
}

/// Random traffic with tiny buffers, then drained: every packet arrives exactly once and
/// every credit is back ([`crate::conformance::exactly_once`]).
fn conservation(spec: &str, routing: &str, p: VcParams, len: u32, rate: f64) {
    let mut e = crate::fabric::VcEngine::Any(Box::new(build(spec, routing, p)));
    crate::conformance::exactly_once(&mut e, len, rate)
        .unwrap_or_else(|err| panic!("{spec} {routing}: {err}"));
}

#[test]
fn every_packet_delivered_once_on_every_family() {
    let mut p = params(3);
    p.buf = 2;
    for (spec, routing) in [
        ("torus:4x4", "dor"),
        ("fattree:4,2", "updown_random"),
        ("dragonfly:2", "minimal"),
        ("dragonfly:2", "valiant"),
        ("dragonfly:2", "ugal"),
        ("graph:ccc:3,2", "updown"),
    ] {
        conservation(spec, routing, p.clone(), 6, 0.04);
    }
    p.vc_alloc = AllocKind::Islip;
    p.sw_alloc = AllocKind::Islip;
    p.vcs = 16;
    conservation("dragonfly:2", "ugal", p, 6, 0.04);
}

/// 64-port routers (a 32-ary 2-tree: radix 2k = 64) with 16 VCs each.
#[test]
fn radix_64_routers_with_16_vcs() {
    let mut p = params(16);
    p.buf = 2;
    let net = build("fattree:32,2", "updown", p.clone());
    assert_eq!(net.radix(), 64);
    conservation("fattree:32,2", "updown", p, 3, 0.02);
}

#[test]
fn classes_split_the_vcs() {
    // 3 classes over 7 VCs: 0..2, 2..4, 4..7.
    let c = 3;
    let v = 7;
    let ranges: Vec<(usize, usize)> = (0..c).map(|k| (k * v / c, (k + 1) * v / c)).collect();
    assert_eq!(ranges, vec![(0, 2), (2, 4), (4, 7)]);
    // A dragonfly UGAL routing needs 3 classes: fewer VCs are refused, not run.
    let net = Arc::new(parse_network_spec("dragonfly:1,2,2").unwrap());
    let r: Arc<dyn Routing> = Arc::from(routing_for(&net, "ugal", None).unwrap());
    let e = VcAnyNet::new(net, r, params(2), 1, 1).err().unwrap();
    assert_eq!(e.key, "vcs");
    assert!(e.message.contains("needs vcs ≥ 3"), "{}", e.message);
}

#[test]
fn local_pointer_and_distance_match_round_robin_over_the_whole_router() {
    // For every global pointer and every mask inside port o's VCs, the local pick equals
    // rr_pick over the router's output VCs.
    let (v, ports) = (3usize, 4usize);
    for o in 0..ports {
        for m in 1u64..8 {
            for ptr in 0..(v * ports) as u16 {
                let global = rr_pick(m << (o * v), u32::from(ptr)).unwrap() as usize;
                let local = rr_first(m, local_ptr(ptr, o, v)) as usize;
                assert_eq!(global, o * v + local, "o {o} m {m} ptr {ptr}");
            }
        }
    }
    for m in 1u64..64 {
        for ptr in 0..6u16 {
            let want = rr_pick(m, u32::from(ptr)).unwrap() as usize;
            let got = (0..6)
                .filter(|&i| m >> i & 1 == 1)
                .min_by_key(|&i| distance(i, ptr, 6));
            assert_eq!(got, Some(want));
        }
    }
}

/// The stated per-router bytes are what the router arrays hold: their sizes summed, divided
/// by the router count (a 5-port router with 2 VCs of 8 flits: 729 bytes).
#[test]
fn bytes_per_router_is_what_the_arrays_hold() {
    fn bytes<T>(v: &[T]) -> usize {
        std::mem::size_of_val(v)
    }
    for (spec, routing, vcs) in [
        ("mesh:4x4", "dor", 2),
        ("dragonfly:2", "ugal", 6),
        ("fattree:4,3", "updown", 3),
    ] {
        let net = build(spec, routing, params(vcs));
        let routers = bytes(&net.buf)
            + bytes(&net.ivcs)
            + bytes(&net.ovc_busy)
            + bytes(&net.sh.credits[..net.routers * net.radix * net.v])
            + bytes(&net.down)
            + bytes(&net.cred_to)
            + bytes(&net.fdelay)
            + bytes(&net.cdelay)
            + bytes(&net.busy)
            + bytes(&net.sa_in)
            + bytes(&net.sa_out)
            + bytes(&net.sa_vc)
            + bytes(&net.va_in)
            + bytes(&net.va_out)
            + bytes(&net.routing_ports)
            + bytes(&net.routing_vcs)
            + bytes(&net.sa_ports)
            + bytes(&net.sa_vcs)
            + bytes(&net.rng);
        assert_eq!(routers, net.bytes_per_router() * net.routers, "{spec}");
    }
    // A mesh router with the +x, −x, +y, −y ports icn-topo gives it and a terminal port.
    let mesh = build("mesh:4x4", "dor", params(2));
    assert_eq!(mesh.radix(), 5);
    assert_eq!(mesh.bytes_per_router(), 761);
}
