use super::*;
use crate::network::Arrangement;
use proptest::prelude::*;

fn routers_of(net: &Network, r: RouterId) -> Vec<RouterId> {
    net.ports(r)
        .iter()
        .filter_map(|e| match *e {
            FarEnd::Router { router, .. } => Some(router),
            _ => None,
        })
        .collect()
}

#[test]
fn end_is_eight_bytes() {
    // The memory claim (8 × radix bytes per router) rests on this.
    assert_eq!(std::mem::size_of::<FarEnd>(), 8);
}

#[test]
fn mesh_4x3_by_hand() {
    let net = Network::mesh(4, 3).unwrap();
    assert_eq!((net.routers(), net.terminals(), net.radix()), (12, 12, 5));
    // Router (1,1) = 5: +x → 6, −x → 4, +y → 9, −y → 1, arriving on the opposite ports.
    assert_eq!(net.end(5, 1), FarEnd::Router { router: 6, port: 2 });
    assert_eq!(net.end(5, 2), FarEnd::Router { router: 4, port: 1 });
    assert_eq!(net.end(5, 3), FarEnd::Router { router: 9, port: 4 });
    assert_eq!(net.end(5, 4), FarEnd::Router { router: 1, port: 3 });
    assert_eq!(net.end(5, 0), FarEnd::Terminal(5));
    // Corner (3,2) = 11 has no +x and no +y.
    assert_eq!(net.end(11, 1), FarEnd::Unused);
    assert_eq!(net.end(11, 3), FarEnd::Unused);
    assert_eq!(net.min_route_bound(), 5);
    assert_eq!(net.terminal_diameter(), 5);
    assert_eq!(net.channel_name(5, 1), "(1,1) +x → (2,1)");
}

#[test]
fn torus_wraps_and_ring_is_a_one_dimensional_torus() {
    let net = Network::torus(4, 3).unwrap();
    assert_eq!(net.end(3, 1), FarEnd::Router { router: 0, port: 2 });
    assert_eq!(net.end(8, 3), FarEnd::Router { router: 0, port: 4 });
    assert_eq!(net.min_route_bound(), 3);
    assert_eq!(net.terminal_diameter(), 3);
    let ring = Network::ring(5).unwrap();
    assert_eq!(ring.radix(), 3);
    assert_eq!(ring.end(4, 1), FarEnd::Router { router: 0, port: 2 });
    assert_eq!(ring.terminal_diameter(), 2);
    assert!(
        Network::ring(2)
            .unwrap_err()
            .to_string()
            .starts_with("ring:")
    );
}

#[test]
fn fat_tree_2_ary_3_tree_by_hand() {
    // 8 terminals, 3 levels of 4 switches; switch w on level l reaches, through up port j,
    // switch w with bit l set to j on level l + 1.
    let net = Network::fat_tree(2, 3).unwrap();
    assert_eq!((net.routers(), net.terminals(), net.radix()), (12, 8, 4));
    assert_eq!(net.terminal_routers(), 4);
    // Leaf 1 (w = 01): up0 → level-1 switch 00 (router 4), up1 → 01 (router 5), both on down1.
    assert_eq!(net.end(1, 2), FarEnd::Router { router: 4, port: 1 });
    assert_eq!(net.end(1, 3), FarEnd::Router { router: 5, port: 1 });
    // Level-1 switch 01 (router 5): up0 → level-2 switch 01 (router 9), up1 → 11 (router 11), on down0.
    assert_eq!(net.end(5, 2), FarEnd::Router { router: 9, port: 0 });
    assert_eq!(
        net.end(5, 3),
        FarEnd::Router {
            router: 11,
            port: 0
        }
    );
    // The top level has no up links.
    assert_eq!(net.end(9, 2), FarEnd::Unused);
    assert_eq!(net.end(3, 1), FarEnd::Terminal(7));
    assert_eq!(net.min_route_bound(), 4);
    assert_eq!(net.terminal_diameter(), 4);
    assert_eq!(net.router_name(5), "l1:01");
    assert_eq!(net.port_name(5, 3), "l1:01 up1");
    assert_eq!(net.port_name(5, 1), "l1:01 down1");
    assert_eq!(net.port_name(1, 1), "l0:01 t1");
}

#[test]
fn dragonfly_palm_tree_by_hand() {
    // p = 1, a = 2, h = 2: g = 5 groups, link m of group G goes to group G + m + 1 and arrives
    // on link 3 − m there. Router i holds links 2i, 2i + 1 on ports 2, 3.
    let net = Network::dragonfly(1, 2, 2).unwrap();
    assert_eq!((net.routers(), net.terminals(), net.radix()), (10, 10, 4));
    // Group 0, link 0 (router 0, port 2) → group 1, link 3 (router 3, port 3).
    assert_eq!(net.end(0, 2), FarEnd::Router { router: 3, port: 3 });
    // Group 0, link 2 (router 1, port 2) → group 3, link 1 (router 6, port 3).
    assert_eq!(net.end(1, 2), FarEnd::Router { router: 6, port: 3 });
    // Group 4, link 1 (router 8, port 3) → group (4 + 2) mod 5 = 1, link 2 (router 3, port 2).
    assert_eq!(net.end(8, 3), FarEnd::Router { router: 3, port: 2 });
    // Local: router 0 ↔ router 1 on port 1 both.
    assert_eq!(net.end(0, 1), FarEnd::Router { router: 1, port: 1 });
    assert_eq!(net.channel_name(1, 2), "g0.r1 global0 → g3.r0");
    assert!(net.is_global(1, 2) && net.is_global(1, 3));
    assert!(!net.is_global(1, 1) && !net.is_global(1, 0));
    assert!(!Network::mesh(3, 3).unwrap().is_global(4, 1));
    assert_eq!(net.port_name(1, 1), "g0.r1 local→r0");
}

#[test]
fn dragonfly_absolute_arrangement_matches_booksim_dragonflynew() {
    // BookSim2's dragonfly_port: from group G towards group D the global port index is
    // `D` if G > D else `D − 1`, on router `index / p` of the group (there h = p), port
    // p + (a − 1) + index mod p. p = 2, a = 4, h = 2, g = 9.
    let net = Network::dragonfly_with(2, 4, 2, Arrangement::Absolute).unwrap();
    let booksim_exit = |from: u32, to: u32| {
        let index = if from > to { to } else { to - 1 };
        (from * 4 + index / 2, (2 + 3 + index % 2) as PortId)
    };
    for from in 0..9 {
        for to in (0..9).filter(|&t| t != from) {
            let (r, port) = booksim_exit(from, to);
            let FarEnd::Router { router, port: back } = net.end(r, port) else {
                panic!("unwired")
            };
            assert_eq!((router, back), booksim_exit(to, from), "{from} → {to}");
        }
    }
    // Group 3 → group 1: index 1, router 12, port 6; back: index 2, router 5, port 5.
    assert_eq!(net.end(12, 6), FarEnd::Router { router: 5, port: 5 });
}

#[test]
fn dragonfly_joins_every_pair_of_groups_exactly_once() {
    let shapes = [(1, 2, 2), (2, 4, 2), (1, 3, 1), (2, 3, 3), (1, 1, 4)];
    for ((p, a, h), arrangement) in shapes
        .into_iter()
        .flat_map(|s| [(s, Arrangement::PalmTree), (s, Arrangement::Absolute)])
    {
        let net = Network::dragonfly_with(p, a, h, arrangement).unwrap();
        let g = a * h + 1;
        let mut count = vec![0u32; (g * g) as usize];
        for r in 0..net.routers() {
            for e in &net.ports(r)[(p + a - 1) as usize..] {
                let FarEnd::Router { router, .. } = *e else {
                    panic!("unwired global port")
                };
                count[(r / a * g + router / a) as usize] += 1;
            }
        }
        for x in 0..g {
            for y in 0..g {
                assert_eq!(
                    count[(x * g + y) as usize],
                    u32::from(x != y),
                    "groups {x}, {y}"
                );
            }
        }
        assert!(net.terminal_diameter() <= net.min_route_bound());
    }
}

#[test]
fn flat_fly_and_hypercube_by_hand() {
    let net = Network::flat_fly(&[3, 4], 2).unwrap();
    assert_eq!(
        (net.routers(), net.terminals(), net.radix()),
        (12, 24, 2 + 2 + 3)
    );
    // Router (1,2) = 7: x→0 on port 2, x→2 on port 3; y→0,1,3 on ports 4,5,6.
    let r = 7;
    assert_eq!(routers_of(&net, r), vec![6, 8, 1, 4, 10]);
    assert_eq!(net.end(r, 3), FarEnd::Router { router: 8, port: 3 });
    assert_eq!(net.port_name(r, 6), "(1,2) y→3");
    assert_eq!(net.terminal_diameter(), 2);
    let q = Network::hypercube(4, 1).unwrap();
    assert_eq!(
        q.end(0b0101, 3),
        FarEnd::Router {
            router: 0b0001,
            port: 3
        }
    );
    assert_eq!(q.router_name(5), "0101");
    assert_eq!(q.terminal_diameter(), 4);
}

#[test]
fn ccc_converts_with_its_port_labels() {
    let g = crate::build::ccc(4, 3).unwrap();
    let net = Network::from_graph(g).unwrap();
    assert_eq!((net.routers(), net.terminals(), net.radix()), (32, 32, 4));
    net.check_wiring().unwrap();
    // (5,1) = 21: F → (5,2) = 22, arriving on its B port (port 2).
    assert_eq!(
        net.end(21, 1),
        FarEnd::Router {
            router: 22,
            port: 2
        }
    );
    assert_eq!(net.channel_name(21, 3), "(5,1) L → (7,1)");
    // The graph's BFS diameter equals the one found over the converted wiring.
    assert_eq!(net.min_route_bound(), net.terminal_diameter());
    // CCC(2,2): F and B of a node lead to the same neighbour on distinct ports.
    let net = Network::from_graph(crate::build::ccc(2, 2).unwrap()).unwrap();
    net.check_wiring().unwrap();
    assert_eq!(net.end(0, 1), FarEnd::Router { router: 1, port: 2 });
    assert_eq!(net.end(0, 2), FarEnd::Router { router: 1, port: 1 });
}

#[test]
fn bad_parameters_are_clear_errors() {
    let cases: Vec<(Result<Network, crate::TopoError>, &str)> = vec![
        (Network::mesh(1, 4), "≥ 2"),
        (Network::torus(2, 4), "≥ 3"),
        (Network::cube(&[], false, 1), "1 to 16 dimensions"),
        (Network::cube(&[4, 4], false, 0), "terminals per router"),
        (Network::fat_tree(1, 3), "k must be ≥ 2"),
        (Network::fat_tree(4, 0), "n must be in"),
        (Network::fat_tree(64, 9), "router ports"),
        (Network::dragonfly(0, 2, 2), "must be ≥ 1"),
        (Network::dragonfly(1, 4000, 4000), "radix"),
        (Network::dragonfly_balanced(100), "router ports"),
        (Network::dragonfly_balanced(u32::MAX), "too large"),
        (Network::flat_fly(&[4, 1], 1), "≥ 2"),
        (Network::hypercube(27, 1), "1..=26"),
        (
            Network::cube(&[65536, 65536, 65536], true, 1),
            "router ports",
        ),
    ];
    for (r, want) in cases {
        let e = r.unwrap_err().to_string();
        assert!(e.contains(want), "{e} should say {want}");
    }
}

#[test]
fn bytes_per_router_are_stated() {
    let net = Network::dragonfly_balanced(4).unwrap();
    // radix 4 + 7 + 4 = 15 ports of 8 bytes.
    assert_eq!(net.bytes_per_router(), 120);
    assert_eq!(net.table_bytes(), 120 * net.routers() as usize);
}

/// The ≥ 1 M-endpoint networks of issue 15: run with
/// `cargo test -p icn-topo --release -- --ignored million --nocapture`.
#[test]
#[ignore = "builds two 1 M-endpoint networks (~100 MB); run by hand"]
fn million_endpoint_networks_build() {
    for (name, build) in [
        (
            "dragonfly p=23 (a=46, h=23)",
            Box::new(|| Network::dragonfly_balanced(23)) as Box<dyn Fn() -> _>,
        ),
        ("fat tree k=32, n=4", Box::new(|| Network::fat_tree(32, 4))),
    ] {
        let t = std::time::Instant::now();
        let net = build().unwrap();
        let built = t.elapsed();
        net.check_wiring().unwrap();
        println!(
            "{name}: {} endpoints, {} routers, radix {}, {} B/router, table {:.1} MB, built in {:.3} s",
            net.terminals(),
            net.routers(),
            net.radix(),
            net.bytes_per_router(),
            net.table_bytes() as f64 / 1e6,
            built.as_secs_f64()
        );
        assert!(net.terminals() >= 1 << 20);
    }
}

fn small_network() -> impl Strategy<Value = Network> {
    prop_oneof![
        (prop::collection::vec(2u32..6, 1..4), 1u32..3)
            .prop_map(|(d, c)| Network::cube(&d, false, c).unwrap()),
        (prop::collection::vec(3u32..6, 1..4), 1u32..3)
            .prop_map(|(d, c)| Network::cube(&d, true, c).unwrap()),
        (2u32..5, 1u32..4).prop_map(|(k, n)| Network::fat_tree(k, n).unwrap()),
        (1u32..3, 1u32..5, 1u32..4, any::<bool>()).prop_map(|(p, a, h, abs)| {
            let arrangement = if abs {
                Arrangement::Absolute
            } else {
                Arrangement::PalmTree
            };
            Network::dragonfly_with(p, a, h, arrangement).unwrap()
        }),
        (prop::collection::vec(2u32..5, 1..4), 1u32..3)
            .prop_map(|(d, c)| Network::flat_fly(&d, c).unwrap()),
        (1u32..7, 1u32..3).prop_map(|(d, c)| Network::hypercube(d, c).unwrap()),
        (2usize..6, 1u32..4).prop_filter_map("h ≥ k", |(h, k)| {
            crate::build::ccc(h, k)
                .ok()
                .map(|g| Network::from_graph(g).unwrap())
        }),
    ]
}

proptest! {
    #[test]
    fn wiring_is_symmetric_and_connected(net in small_network()) {
        prop_assert_eq!(net.check_wiring(), Ok(()));
        let d = net.router_distances(0);
        prop_assert!(d.iter().all(|&x| x != u32::MAX), "disconnected");
        prop_assert!(net.terminal_diameter() <= net.min_route_bound());
        // Every port has a readable, distinct name on its router.
        let r = net.routers() - 1;
        let names: std::collections::HashSet<String> =
            (0..net.radix()).map(|p| net.port_name(r, p)).collect();
        prop_assert_eq!(names.len(), usize::from(net.radix()));
    }
}

/// The endpoint graph of a crossbar is a star (every terminal one link to the router); of
/// a 4×4 mesh with two terminals per router, 32 terminal links and the mesh's 24 links, and
/// two terminals of one router are two hops apart, of neighbouring routers three.
#[test]
fn endpoint_graphs_put_terminals_first_and_link_them_to_their_router() {
    let star = Network::crossbar(3).unwrap().endpoint_graph().unwrap();
    assert_eq!(star.len(), 4);
    assert_eq!(
        (0..3).map(|t| star.degree(t)).collect::<Vec<_>>(),
        [1, 1, 1]
    );
    assert_eq!(star.degree(3), 3);
    let mesh = crate::parse_network_spec("mesh:4x4,2").unwrap();
    let g = mesh.endpoint_graph().unwrap();
    assert_eq!(g.len(), 32 + 16);
    assert_eq!(g.edge_count(), 32 + 24);
    let hops = |a: usize, b: usize| {
        let p = g.bfs_parents(a);
        let (mut v, mut n) = (b, 0);
        while v != a {
            v = p[v] as usize;
            n += 1;
        }
        n
    };
    assert_eq!(hops(0, 1), 2);
    assert_eq!(hops(0, 2), 3);
}
