use super::dor::{DimensionOrder, Vcs};
use super::dragonfly::{Algorithm, DragonflyRouting};
use super::twophase::{Kind, TwoPhase};
use super::updown::{UpDown, UpPort};
use super::*;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_pcg::Pcg64;

fn route(net: &Network, r: &dyn Routing, src: u32, dst: u32) -> Vec<(RouterId, Hop)> {
    let mut rng = Pcg64::seed_from_u64(1);
    trace(net, r, src, dst, &mut rng, &[], 64).unwrap()
}

fn hops(list: &[(u16, u8)]) -> Vec<Hop> {
    list.iter().map(|&(port, vc)| Hop { port, vc }).collect()
}

fn only_hops(r: &[(RouterId, Hop)]) -> Vec<Hop> {
    r.iter().map(|x| x.1).collect()
}

#[test]
fn mesh_dor_by_hand() {
    let net = Network::mesh(4, 3).unwrap();
    let dor = DimensionOrder::new(&net, Vcs::Single).unwrap();
    // (0,0) → (2,1): +x, +x, +y, then the terminal.
    let r = route(&net, &dor, 0, 6);
    assert_eq!(r.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1, 2, 6]);
    assert_eq!(only_hops(&r), hops(&[(1, 0), (1, 0), (3, 0), (0, 0)]));
    // (3,2) → (0,0): −x three times, −y twice.
    let r = route(&net, &dor, 11, 0);
    assert_eq!(
        only_hops(&r),
        hops(&[(2, 0), (2, 0), (2, 0), (4, 0), (4, 0), (0, 0)])
    );
}

#[test]
fn ring_dateline_classes_by_hand() {
    let net = Network::ring(6).unwrap();
    let dor = DimensionOrder::new(&net, Vcs::Dateline).unwrap();
    // 4 → 1: distance 3 either way, the tie goes +: 4→5 (class 0), 5→0 is the wrap link
    // (class 0), 0→1 after the dateline (class 1).
    let r = route(&net, &dor, 4, 1);
    assert_eq!(r.iter().map(|x| x.0).collect::<Vec<_>>(), vec![4, 5, 0, 1]);
    assert_eq!(only_hops(&r), hops(&[(1, 0), (1, 0), (1, 1), (0, 1)]));
    // 1 → 5: the short way is −: 1→0 (class 0), the wrap 0→5 (class 0), then eject.
    let r = route(&net, &dor, 1, 5);
    assert_eq!(only_hops(&r), hops(&[(2, 0), (2, 0), (0, 0)]));
    // A new dimension starts in class 0 again: torus 4×4, (3,3) → (1,1) wraps in x then in y.
    let net = Network::torus(4, 4).unwrap();
    let dor = DimensionOrder::new(&net, Vcs::Dateline).unwrap();
    let r = route(&net, &dor, 15, 5);
    assert_eq!(
        only_hops(&r),
        hops(&[(1, 0), (1, 1), (3, 0), (3, 1), (0, 1)])
    );
    let single = DimensionOrder::new(&net, Vcs::Single).unwrap();
    assert!(route(&net, &single, 15, 5).iter().all(|x| x.1.vc == 0));
}

#[test]
fn flat_fly_and_hypercube_dor_by_hand() {
    let net = Network::flat_fly(&[3, 4], 2).unwrap();
    let dor = DimensionOrder::new(&net, Vcs::Single).unwrap();
    // Terminal 1 on router (0,0) → terminal 22 on router 11 = (2,3): x→2 (port 3), y→3 (port 6).
    let r = route(&net, &dor, 1, 22);
    assert_eq!(r.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 2, 11]);
    assert_eq!(only_hops(&r), hops(&[(3, 0), (6, 0), (0, 0)]));
    let q = Network::hypercube(4, 1).unwrap();
    let ecube = DimensionOrder::new(&q, Vcs::Single).unwrap();
    // 0110 → 1011: flip bits 0, 2, 3 in that order.
    let r = route(&q, &ecube, 0b0110, 0b1011);
    assert_eq!(
        r.iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![0b0110, 0b0111, 0b0011, 0b1011]
    );
}

#[test]
fn fat_tree_up_down_by_hand() {
    // 2-ary 3-tree, terminal 0 → 7 (leaf 0 → leaf 3): up with D-mod-k (port 2 + bit l of 7),
    // to the top, then down along leaf 3's digits.
    let net = Network::fat_tree(2, 3).unwrap();
    let ud = UpDown::new(&net, UpPort::Destination).unwrap();
    let r = route(&net, &ud, 0, 7);
    assert_eq!(
        r.iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![0, 5, 11, 7, 3]
    );
    assert_eq!(
        only_hops(&r),
        hops(&[(3, 0), (3, 0), (1, 0), (1, 0), (1, 0)])
    );
    // Same leaf: straight to the terminal; siblings under one level-1 switch: two hops.
    assert_eq!(route(&net, &ud, 0, 1).len(), 1);
    assert_eq!(route(&net, &ud, 0, 2).len(), 3);
    // The random policy offers every up port at a switch that must climb, one at an ancestor.
    let random = UpDown::new(&net, UpPort::Random).unwrap();
    let mut n = 0;
    random.choices(0, &Header::to(7), &mut |_, _| n += 1);
    assert_eq!(n, 2);
    let mut n = 0;
    random.choices(11, &Header::to(7), &mut |_, _| n += 1);
    assert_eq!(n, 1);
}

#[test]
fn dragonfly_minimal_by_hand() {
    // p = 1, a = 2, h = 2, g = 5. Terminal 0 (g0.r0) → terminal 7 (g3.r1): link m = 2 of g0 is
    // owned by r1 (port 2) and lands on g3's link 1 at g3.r0 (router 6): local, global, local
    // in classes 0, 0, 1.
    let net = Network::dragonfly(1, 2, 2).unwrap();
    let min = DragonflyRouting::new(&net, Algorithm::Minimal).unwrap();
    let r = route(&net, &min, 0, 7);
    assert_eq!(r.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1, 6, 7]);
    assert_eq!(only_hops(&r), hops(&[(1, 0), (2, 0), (1, 1), (0, 1)]));
    // Within a group: one local hop.
    assert_eq!(route(&net, &min, 0, 1).len(), 2);
}

#[test]
fn dragonfly_valiant_visits_its_intermediate_group() {
    let net = Network::dragonfly(2, 4, 2).unwrap();
    let val = DragonflyRouting::new(&net, Algorithm::Valiant).unwrap();
    let (src, dst) = (0, net.terminals() - 1);
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..200 {
        let mut rng = Pcg64::seed_from_u64(seed);
        let h = val.inject(src, dst, &mut rng, &[]);
        let mut choices = Vec::new();
        val.inject_choices(src, dst, &mut |c| choices.push(c));
        assert!(choices.contains(&h));
        seen.insert(h.via);
        let mut rng = Pcg64::seed_from_u64(seed);
        let r = trace(&net, &val, src, dst, &mut rng, &[], 10).unwrap();
        assert!(
            r.iter().any(|x| x.0 / 4 == h.via),
            "route avoids group {}",
            h.via
        );
        // Each hop's class is the number of global hops (ports 5, 6) taken before it; a
        // Valiant route between different groups takes two.
        let mut globals = 0;
        for &(_, hop) in &r[..r.len() - 1] {
            assert_eq!(hop.vc, globals);
            globals += u8::from(hop.port >= 5);
        }
        assert_eq!(globals, 2);
    }
    // g = 9 groups, the source's (0) and the destination's (8) excluded.
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        (1..8).collect::<Vec<_>>()
    );
}

#[test]
fn ugal_follows_the_queue_estimates() {
    // Terminal 0 (g0.r0) → 7 (g3.r1) in dragonfly(1, 2, 2): the minimal route leaves by local
    // port 1. Via group 1 or 2 leaves g0 by r0's global ports 2 and 3; via group 4 by port 1.
    let net = Network::dragonfly(1, 2, 2).unwrap();
    let ugal = DragonflyRouting::new(&net, Algorithm::Ugal { threshold: 0 }).unwrap();
    let (mut minimal, mut valiant) = (0, 0);
    for seed in 0..100 {
        let mut rng = Pcg64::seed_from_u64(seed);
        // No congestion: always minimal.
        assert_eq!(ugal.inject(0, 7, &mut rng, &[]).via, NO_VIA);
        // Busy global ports, idle minimal port: minimal.
        assert_eq!(ugal.inject(0, 7, &mut rng, &[0, 0, 50, 50]).via, NO_VIA);
        // Busy minimal port (100 × 3 hops): Valiant when its first port is idle (groups 1, 2),
        // minimal when it shares the busy port (group 4: 100 × 3 ≤ 100 × H_val).
        match ugal.inject(0, 7, &mut rng, &[0, 100, 0, 0]).via {
            NO_VIA => minimal += 1,
            1 | 2 => valiant += 1,
            other => panic!("UGAL chose busy group {other}"),
        }
    }
    assert!(
        minimal > 10 && valiant > 40,
        "{minimal} minimal, {valiant} Valiant"
    );
    // UGAL offers the minimal header and every Valiant one to the deadlock checker.
    let mut n = 0;
    ugal.inject_choices(0, 7, &mut |_| n += 1);
    assert_eq!(n, 1 + 3);
}

#[test]
fn routings_refuse_other_families() {
    let mesh = Network::mesh(3, 3).unwrap();
    let e = UpDown::new(&mesh, UpPort::Random).unwrap_err().to_string();
    assert!(e.contains("needs a fat tree, not a mesh"), "{e}");
    let e = DragonflyRouting::new(&mesh, Algorithm::Minimal)
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs a dragonfly"), "{e}");
    let ft = Network::fat_tree(2, 2).unwrap();
    assert!(DimensionOrder::new(&ft, Vcs::Single).is_err());
    let df = Network::dragonfly(1, 2, 1).unwrap();
    let r = DragonflyRouting::new(&df, Algorithm::Valiant).unwrap();
    assert!(r.clone().with_vc_classes(0).is_err() && r.with_vc_classes(9).is_err());
}

/// A small network of some family with one of its routing functions and whether the routing
/// is minimal (else Valiant-like: within twice the minimal bound).
fn network_and_routing() -> impl Strategy<Value = (Network, Box<dyn Routing>, bool)> {
    prop_oneof![
        (prop::collection::vec(2u32..6, 1..4), 1u32..3).prop_map(|(d, c)| {
            let net = Network::cube(&d, false, c).unwrap();
            let r = DimensionOrder::new(&net, Vcs::Single).unwrap();
            (net, Box::new(r) as Box<dyn Routing>, true)
        }),
        (prop::collection::vec(3u32..7, 1..4), any::<bool>()).prop_map(|(d, dl)| {
            let net = Network::cube(&d, true, 1).unwrap();
            let r =
                DimensionOrder::new(&net, if dl { Vcs::Dateline } else { Vcs::Single }).unwrap();
            (net, Box::new(r) as Box<dyn Routing>, true)
        }),
        (prop::collection::vec(2u32..5, 1..4), 1u32..3).prop_map(|(d, c)| {
            let net = Network::flat_fly(&d, c).unwrap();
            let r = DimensionOrder::new(&net, Vcs::Single).unwrap();
            (net, Box::new(r) as Box<dyn Routing>, true)
        }),
        (1u32..7).prop_map(|d| {
            let net = Network::hypercube(d, 1).unwrap();
            let r = DimensionOrder::new(&net, Vcs::Single).unwrap();
            (net, Box::new(r) as Box<dyn Routing>, true)
        }),
        (2u32..5, 1u32..4, any::<bool>()).prop_map(|(k, n, random)| {
            let net = Network::fat_tree(k, n).unwrap();
            let up = if random {
                UpPort::Random
            } else {
                UpPort::Destination
            };
            let r = UpDown::new(&net, up).unwrap();
            (net, Box::new(r) as Box<dyn Routing>, true)
        }),
        (1u32..3, 1u32..5, 1u32..4, 0usize..3, any::<bool>()).prop_map(|(p, a, h, alg, abs)| {
            let arrangement = if abs {
                crate::network::Arrangement::Absolute
            } else {
                crate::network::Arrangement::PalmTree
            };
            let net = Network::dragonfly_with(p, a, h, arrangement).unwrap();
            let alg = [
                Algorithm::Minimal,
                Algorithm::Valiant,
                Algorithm::Ugal { threshold: 2 },
            ][alg];
            let r = DragonflyRouting::new(&net, alg).unwrap();
            (
                net,
                Box::new(r) as Box<dyn Routing>,
                alg == Algorithm::Minimal,
            )
        }),
        (prop::collection::vec(2u32..6, 1..4), 0usize..3).prop_map(|(d, kind)| {
            let net = Network::cube(&d, false, 1).unwrap();
            let kind = [Kind::XyYx, Kind::Romm, Kind::Valiant][kind];
            let r = TwoPhase::new(&net, kind).unwrap();
            (net, Box::new(r) as Box<dyn Routing>, kind != Kind::Valiant)
        }),
        prop::collection::vec(3u32..7, 1..4).prop_map(|d| {
            let net = Network::cube(&d, true, 1).unwrap();
            let r = TwoPhase::new(&net, Kind::Valiant).unwrap();
            (net, Box::new(r) as Box<dyn Routing>, false)
        }),
        (2u32..5, 1u32..4).prop_map(|(k, n)| {
            let net = Network::fat_tree(k, n).unwrap();
            let r = UpDown::new(&net, UpPort::Adaptive).unwrap();
            (net, Box::new(r) as Box<dyn Routing>, true)
        }),
        (2usize..6, 1u32..4, any::<bool>()).prop_filter_map("h ≥ k", |(h, k, adaptive)| {
            let net = Network::from_graph(crate::build::ccc(h, k).ok()?).unwrap();
            let r = super::tree::GraphUpDown::new(&net, 0, adaptive).unwrap();
            Some((net, Box::new(r) as Box<dyn Routing>, false))
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Every route from every source reaches its destination, within the minimal bound for
    /// minimal routing (exactly the BFS distance except on a dragonfly, whose minimal route
    /// may be longer than a path through a third group) and twice it for Valiant, UGAL and
    /// up*/down* on graphs; its
    /// classes are in range and its first header is one the checker is shown.
    #[test]
    fn every_route_arrives_within_the_bound(
        (net, r, minimal) in network_and_routing(),
        seed in any::<u64>(),
        queues in prop::collection::vec(0u32..20, 0..12),
    ) {
        let bound = net.min_route_bound() as usize;
        let limit = if minimal { bound } else { 2 * bound };
        let dragonfly = matches!(net.shape(), crate::Shape::Dragonfly { .. });
        let mut rng = Pcg64::seed_from_u64(seed);
        for src in 0..net.terminals() {
            let rs = net.terminal_at(src).0;
            let dist = net.router_distances(rs);
            for dst in 0..net.terminals() {
                let route = trace(&net, r.as_ref(), src, dst, &mut rng, &queues, limit);
                let route = route.map_err(|e| TestCaseError::fail(e.to_string()))?;
                let hops = route.len() - 1;
                prop_assert!(hops <= limit);
                if minimal && !dragonfly {
                    prop_assert_eq!(hops as u32, dist[net.terminal_at(dst).0 as usize]);
                }
                let h = r.inject(src, dst, &mut Pcg64::seed_from_u64(seed ^ u64::from(dst)), &queues);
                let mut found = false;
                r.inject_choices(src, dst, &mut |c| found |= c == h);
                prop_assert!(found, "inject gave a header not among inject_choices");
            }
        }
    }
}

fn offered(r: &dyn Routing, router: RouterId, h: &Header) -> Vec<(Hop, Header)> {
    let mut v = Vec::new();
    r.choices(router, h, &mut |hop, h| v.push((hop, h)));
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A routing that says it decides by router (so the deadlock checker follows one terminal
    /// per router) offers the same hops for every destination terminal on a router, along
    /// every route, but for the final hop.
    #[test]
    fn by_router_claims_hold((net, r, _) in network_and_routing(), seed in any::<u64>()) {
        prop_assume!(r.by_router());
        let c = u32::from(net.terminals_per_router());
        let mut rng = Pcg64::seed_from_u64(seed);
        for src in 0..net.terminals() {
            for dst in (0..net.terminals()).step_by(c as usize) {
                let dst_router = net.terminal_at(dst).0;
                let mut router = net.terminal_at(src).0;
                let mut h = r.inject(src, dst, &mut rng, &[]);
                for _ in 0..=2 * net.min_route_bound() {
                    // At the destination with no intermediate left to visit: the final hop.
                    if router == dst_router && (h.via == NO_VIA || h.via == router) {
                        break;
                    }
                    let base = offered(r.as_ref(), router, &h);
                    for other in dst + 1..dst + c {
                        let moved: Vec<_> = base.iter().map(|&(hop, x)| (hop, Header { dst: other, ..x })).collect();
                        prop_assert_eq!(&offered(r.as_ref(), router, &Header { dst: other, ..h }), &moved);
                    }
                    let hop = r.next_hop(router, &mut h, &mut rng);
                    let FarEnd::Router { router: next, .. } = net.end(router, hop.port) else {
                        return Err(TestCaseError::fail("left the network early"));
                    };
                    router = next;
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `next_hop` (the default's draw, or an override such as up/down's) takes one of the
    /// hops `choices` offers, with the same header after it: what the deadlock checker sees
    /// is what packets do.
    #[test]
    fn next_hop_is_one_of_the_choices((net, r, _) in network_and_routing(), seed in any::<u64>()) {
        let mut rng = Pcg64::seed_from_u64(seed);
        let c = u32::from(net.terminals_per_router());
        for src in (0..net.terminals()).step_by(c as usize) {
            for dst in 0..net.terminals() {
                let mut router = net.terminal_at(src).0;
                let mut h = r.inject(src, dst, &mut rng, &[]);
                loop {
                    let before = h;
                    let hop = r.next_hop(router, &mut h, &mut rng);
                    prop_assert!(offered(r.as_ref(), router, &before).contains(&(hop, h)));
                    match net.end(router, hop.port) {
                        FarEnd::Router { router: next, .. } => router = next,
                        _ => break,
                    }
                }
            }
        }
    }
}

#[test]
fn booksim_dim_order_on_a_ring_by_hand() {
    // Ring of 6, one terminal per router: port 1 is +, port 2 is −.
    let net = Network::ring(6).unwrap();
    let dim = DimensionOrder::booksim(&net, 2).unwrap();
    // 4 → 1: distance 3 both ways, a tie: both directions offered on entering the ring, in
    // class 1 (4 > 1) for the whole traversal.
    let first = offered(&dim, 4, &Header::to(1));
    assert_eq!(
        first.iter().map(|x| x.0).collect::<Vec<_>>(),
        hops(&[(1, 1), (2, 1)])
    );
    // Having gone + (now at 5), only + is offered (distance 2 that way, 4 the other).
    let next = offered(&dim, 5, &first[0].1);
    assert_eq!(
        next.iter().map(|x| x.0).collect::<Vec<_>>(),
        hops(&[(1, 1)])
    );
    // 5 → 1 goes + over the wrap link, all of it in class 1 (BookSim2: the upper class for
    // the whole traversal of a dimension that will wrap), not only after the wrap as `dor`.
    let r = route(&net, &dim, 5, 1);
    assert_eq!(only_hops(&r), hops(&[(1, 1), (1, 1), (0, 1)]));
    let dor = DimensionOrder::new(&net, Vcs::Dateline).unwrap();
    assert_eq!(
        only_hops(&route(&net, &dor, 5, 1)),
        hops(&[(1, 0), (1, 1), (0, 1)])
    );
    // 1 → 5 goes − over the wrap link in class 0: BookSim2 compares coordinates (1 < 5), so
    // going − the class-1 routes are the ones that do not wrap, e.g. 3 → 1.
    assert_eq!(
        only_hops(&route(&net, &dim, 1, 5)),
        hops(&[(2, 0), (2, 0), (0, 0)])
    );
    assert_eq!(
        only_hops(&route(&net, &dim, 3, 1)),
        hops(&[(2, 1), (2, 1), (0, 1)])
    );
    // 0 → 2 does not wrap going +: class 0.
    assert_eq!(
        only_hops(&route(&net, &dim, 0, 2)),
        hops(&[(1, 0), (1, 0), (0, 0)])
    );
}

#[test]
fn booksim_dim_order_classes_restart_per_dimension_and_mesh_is_dor() {
    // Torus 4×4: (1,3) → (0,1) = router 13 → 4. x: 1 → 0 goes − (class 1: 1 > 0); y: 3 → 1
    // is a tie (either way, class 1: 3 > 1). Ports: 1 +x, 2 −x, 3 +y, 4 −y.
    let net = Network::torus(4, 4).unwrap();
    let dim = DimensionOrder::booksim(&net, 2).unwrap();
    let r = route(&net, &dim, 13, 4);
    assert_eq!(r[0], (13, Hop { port: 2, vc: 1 }));
    assert!(matches!(r[1].1, Hop { port: 3 | 4, vc: 1 }));
    // (0,0) → (1,3): x + in class 0, then y 0 → 3 goes − (distance 1) in class 0.
    assert_eq!(
        only_hops(&route(&net, &dim, 0, 13)),
        hops(&[(1, 0), (4, 0), (0, 0)])
    );
    // On a mesh BookSim2's dim_order_mesh is dor: same routes, one class.
    let mesh = Network::mesh(4, 3).unwrap();
    let a = DimensionOrder::booksim(&mesh, 1).unwrap();
    let b = DimensionOrder::new(&mesh, Vcs::Single).unwrap();
    for (s, d) in [(0, 6), (11, 0), (5, 7)] {
        assert_eq!(route(&mesh, &a, s, d), route(&mesh, &b, s, d));
    }
    assert!(DimensionOrder::booksim(&mesh, 2).is_err());
}

#[test]
fn booksim_dim_order_splits_ties_evenly() {
    // 8-ring, 0 → 4: a tie at k/2; BookSim2 draws RandomInt(1). Over 2 000 seeded draws the
    // + share is within 5 points of ½ (binomial σ ≈ 1.1 points).
    let net = Network::ring(8).unwrap();
    let dim = DimensionOrder::booksim(&net, 2).unwrap();
    let mut rng = Pcg64::seed_from_u64(7);
    let plus = (0..2000)
        .filter(|_| {
            let r = trace(&net, &dim, 0, 4, &mut rng, &[], 64).unwrap();
            assert_eq!(r.len(), 5, "4 hops and the ejection");
            r[0].1.port == 1
        })
        .count();
    assert!((900..=1100).contains(&plus), "{plus} of 2000 went +");
}

#[test]
fn booksim_min_dragonflynew_takes_the_global_hop_in_class_1() {
    // p = 1, a = 2, h = 2, g = 5 (absolute, BookSim2's): terminal t on router t.
    let net = Network::dragonfly_with(1, 2, 2, crate::network::Arrangement::Absolute).unwrap();
    let ours = DragonflyRouting::new(&net, Algorithm::Minimal).unwrap();
    let theirs = DragonflyRouting::new(&net, Algorithm::BookSimMin).unwrap();
    let mut globals = 0;
    for (s, d) in [(0, 9), (1, 4), (3, 8), (0, 1)] {
        let a = route(&net, &ours, s, d);
        let b = route(&net, &theirs, s, d);
        // Same ports; the class differs only on the global hop: 0 in Kim et al.'s, 1 here
        // (the ejection, last, is no network channel).
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b).take(a.len() - 1) {
            assert_eq!(x.1.port, y.1.port);
            let global = x.1.port >= 2 && x.1.port <= 3;
            globals += usize::from(global);
            assert_eq!(
                y.1.vc,
                x.1.vc + u8::from(global),
                "{s}→{d} at router {}",
                x.0
            );
        }
    }
    assert!(globals >= 3);
}

#[test]
fn booksim_ugal_dragonflynew_bias_is_30_flits() {
    let net = Network::dragonfly_with(1, 2, 2, crate::network::Arrangement::Absolute).unwrap();
    let ugal = DragonflyRouting::new(&net, Algorithm::BookSimUgal { threshold: 30 }).unwrap();
    // Terminal 0 (router 0, group 0) → terminal 9 (group 4): the minimal first port.
    let min_port = route(&net, &ugal, 0, 9)[0].1.port;
    let mut rng = Pcg64::seed_from_u64(3);
    let draw = |q_min: u32, rng: &mut Pcg64| {
        let mut queues = [0u32; 4];
        queues[usize::from(min_port)] = q_min;
        ugal.inject(0, 9, rng, &queues)
    };
    // q_min ≤ 2·q_nonmin + 30: with 30 flits queued on the minimal port and none elsewhere,
    // still minimal (ph 1) every time; with 31, non-minimal (ph 0) whenever the random
    // intermediate node is outside the source group and its first port is another one.
    assert!((0..500).all(|_| draw(30, &mut rng).progress == 1));
    let hs: Vec<Header> = (0..500).map(|_| draw(31, &mut rng)).collect();
    let non: Vec<&Header> = hs.iter().filter(|h| h.progress == 0).collect();
    assert!(non.len() > 200, "{} of 500 non-minimal", non.len());
    for h in &non {
        assert!(
            h.via / 2 != 0,
            "intermediate router {} in the source group",
            h.via
        );
    }
    // Intra-group packets: ph 2 (class 2) throughout.
    let r = route(&net, &ugal, 0, 1);
    assert!(r.iter().all(|x| x.1.vc == 2), "{r:?}");
}

#[test]
fn booksim_valiant_dragonflynew_visits_the_intermediate_router() {
    let net = Network::dragonfly_with(1, 2, 2, crate::network::Arrangement::Absolute).unwrap();
    let val = DragonflyRouting::new(&net, Algorithm::BookSimValiant).unwrap();
    let mut rng = Pcg64::seed_from_u64(5);
    let mut seen = 0;
    for _ in 0..200 {
        let h = val.inject(0, 9, &mut rng, &[]);
        if h.progress != 0 {
            // The intermediate node fell in the source group: minimal, ph 1.
            assert_eq!(h.progress, 1);
            continue;
        }
        seen += 1;
        // Follow it: class 0 up to the intermediate router, then 1, then 2 from the global hop.
        let (mut router, mut hdr) = (0u32, h);
        let mut classes = Vec::new();
        let mut visited = false;
        for _ in 0..10 {
            visited |= router == h.via;
            let hop = val.next_hop(router, &mut hdr, &mut rng);
            classes.push(hop.vc);
            match net.end(router, hop.port) {
                crate::network::FarEnd::Router { router: n, .. } => router = n,
                _ => break,
            }
        }
        assert!(visited, "never reached intermediate router {}", h.via);
        assert!(classes.windows(2).all(|w| w[0] <= w[1]), "{classes:?}");
        assert_eq!(classes.first(), Some(&0));
    }
    assert!(seen > 100);
}

/// The hops from router `at` with `header` (already injected), taking the first choice at
/// every router, until the ejection.
fn walk(net: &Network, r: &dyn Routing, mut at: RouterId, mut header: Header) -> Vec<Hop> {
    let mut out = Vec::new();
    loop {
        let mut first = None;
        r.choices(at, &header, &mut |hop, h| {
            first.get_or_insert((hop, h));
        });
        let (hop, h) = first.unwrap();
        out.push(hop);
        header = h;
        match net.end(at, hop.port) {
            crate::network::FarEnd::Router { router, .. } => at = router,
            _ => return out,
        }
        assert!(out.len() < 64, "no ejection");
    }
}

#[test]
fn booksim_xy_yx_mesh_by_hand() {
    // Mesh 4×3, ports 1 +x, 2 −x, 3 +y, 4 −y. 0 → 6 = (2,1): XY in class 0, YX in class 1,
    // one of each offered at injection.
    let net = Network::mesh(4, 3).unwrap();
    let r = TwoPhase::new(&net, Kind::XyYx).unwrap();
    let mut heads = Vec::new();
    r.inject_choices(0, 6, &mut |h| heads.push(h));
    assert_eq!(heads.iter().map(|h| h.vc).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(
        walk(&net, &r, 0, heads[0]),
        hops(&[(1, 0), (1, 0), (3, 0), (0, 0)])
    );
    assert_eq!(
        walk(&net, &r, 0, heads[1]),
        hops(&[(3, 1), (1, 1), (1, 1), (0, 1)])
    );
    // The draw is ½ each.
    let mut rng = Pcg64::seed_from_u64(3);
    let yx = (0..4000)
        .filter(|_| r.inject(0, 6, &mut rng, &[]).vc == 1)
        .count();
    assert!((1800..2200).contains(&yx), "{yx}");
}

#[test]
fn booksim_romm_mesh_by_hand() {
    // Mesh 4×4, 0 → 6 = (2,1): the intermediate lies in the box x 0..=2, y 0..=1 (6 routers).
    let net = Network::mesh(4, 4).unwrap();
    let r = TwoPhase::new(&net, Kind::Romm).unwrap();
    let mut vias = Vec::new();
    r.inject_choices(0, 6, &mut |h| vias.push(h.via));
    vias.sort();
    assert_eq!(vias, [0, 1, 2, 4, 5, 6]);
    let mut rng = Pcg64::seed_from_u64(5);
    for _ in 0..200 {
        assert!(vias.contains(&r.inject(0, 6, &mut rng, &[]).via));
    }
    // Via 5 = (1,1): +x, +y in class 0, then +x in class 1 and the ejection.
    let h = Header {
        via: 5,
        ..Header::to(6)
    };
    assert_eq!(
        walk(&net, &r, 0, h),
        hops(&[(1, 0), (3, 0), (1, 1), (0, 1)])
    );
    // Via the source itself: phase 1 at once.
    let h = Header {
        via: 0,
        ..Header::to(6)
    };
    assert_eq!(
        walk(&net, &r, 0, h),
        hops(&[(1, 1), (1, 1), (3, 1), (0, 1)])
    );
}

#[test]
fn booksim_valiant_mesh_and_torus_by_hand() {
    // Mesh 4×4, 0 → 1 via 15 = (3,3): out in class 0, back in class 1.
    let net = Network::mesh(4, 4).unwrap();
    let r = TwoPhase::new(&net, Kind::Valiant).unwrap();
    let mut n = 0;
    r.inject_choices(0, 1, &mut |_| n += 1);
    assert_eq!(n, 16);
    let h = Header {
        via: 15,
        ..Header::to(1)
    };
    assert_eq!(
        walk(&net, &r, 0, h),
        hops(&[
            (1, 0),
            (1, 0),
            (1, 0),
            (3, 0),
            (3, 0),
            (3, 0),
            (2, 1),
            (2, 1),
            (4, 1),
            (4, 1),
            (4, 1),
            (0, 1)
        ])
    );
    // Ring of 6 (ports 1 +, 2 −), 0 → 2 via 4: phase 0 goes − (distance 2) in class
    // 2·(0 > 4) + 0 = 0; phase 1 from 4 to 2 goes − in class 2·(4 > 2) + 1 = 3.
    let ring = Network::ring(6).unwrap();
    let r = TwoPhase::new(&ring, Kind::Valiant).unwrap();
    assert_eq!(r.vc_classes(), 4);
    let h = Header {
        via: 4,
        ..Header::to(2)
    };
    assert_eq!(
        walk(&ring, &r, 0, h),
        hops(&[(2, 0), (2, 0), (2, 3), (2, 3), (0, 3)])
    );
    // 0 → 4 via 1: phase 0 + in class 0; phase 1 from 1 to 4 is a tie (distance 3): both
    // ways offered, class 2·(1 > 4) + 1 = 1.
    let at_via = offered(
        &r,
        1,
        &Header {
            via: 1,
            progress: 1,
            ..Header::to(4)
        },
    );
    assert_eq!(
        at_via.iter().map(|x| x.0).collect::<Vec<_>>(),
        hops(&[(1, 1), (2, 1)])
    );
    assert!(TwoPhase::new(&ring, Kind::Romm).is_err());
    assert!(TwoPhase::new(&ring, Kind::XyYx).is_err());
}

#[test]
fn booksim_anca_takes_the_less_loaded_of_two_random_up_ports() {
    // 4-ary 2-tree: leaf 0 to terminal 15 climbs. With queue j on up port 4 + j the choice is
    // the smaller of two draws, the draws being the routing's own.
    let net = Network::fat_tree(4, 2).unwrap();
    let r = UpDown::new(&net, UpPort::Adaptive).unwrap();
    assert!(r.adaptive());
    let queues = [0, 0, 0, 0, 0, 1, 2, 3];
    for seed in 0..50 {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut copy = rng.clone();
        let (a, b) = (
            rand::Rng::random_range(&mut copy, 0..4u32),
            rand::Rng::random_range(&mut copy, 0..4u32),
        );
        let hop = r.next_hop_queued(0, &mut Header::to(15), &mut rng, &queues);
        assert_eq!(hop.port, 4 + a.min(b) as u16, "seed {seed}");
    }
    // Equal queues: the first draw (BookSim2 keeps `random1` unless it is more loaded).
    let mut rng = Pcg64::seed_from_u64(9);
    let mut copy = rng.clone();
    let a = rand::Rng::random_range(&mut copy, 0..4u32);
    let hop = r.next_hop_queued(0, &mut Header::to(15), &mut rng, &[0; 8]);
    assert_eq!(hop.port, 4 + a as u16);
    // Going down it is nca's.
    assert_eq!(
        r.next_hop_queued(0, &mut Header::to(2), &mut rng, &queues)
            .port,
        2
    );
}
