//! Every model's schedules are legal (independent validator), and the ILBM node algorithms
//! for the other families reach their known times.

use icn_bcast::clbm::{bfs_scheme, greedy_scheme};
use icn_bcast::ilbm::Ilbm;
use icn_bcast::ilbm::grid::GridBrd;
use icn_bcast::ilbm::hypercube::CubeBrd;
use icn_bcast::ilbm::ring::RingBrd;
use icn_bcast::optimum::optimum;
use icn_bcast::schemes::{RunOptions, Scheme, run_scheme};
use icn_bcast::sim::{Outcome, Protocol, Tiebreak, simulate};
use icn_bcast::ulbm::UniversalLists;
use icn_bcast::validate::check_schedule;
use icn_topo::build::{hypercube, mesh, path, ring, torus};
use icn_topo::paths::eccentricity;
use icn_topo::{Graph, parse_graph_spec};
use proptest::prelude::*;

fn legal<P: Protocol>(g: &Graph, s: usize, p: &mut P, tb: Tiebreak) -> Outcome {
    let o = simulate(g, s, p, tb);
    check_schedule(g, s, &o.schedule, Some(&o.first_receipt)).unwrap_or_else(|v| panic!("{v}"));
    o
}

#[test]
fn hypercube_ilbm_takes_d_steps_with_n_minus_1_messages() {
    for d in 1..=7 {
        let g = hypercube(d).unwrap();
        for s in [0, g.len() - 1, g.len() / 3] {
            let o = legal(&g, s, &mut Ilbm(CubeBrd { d }), Tiebreak::LowestSender);
            assert_eq!(o.time(), Some(d));
            assert_eq!(o.messages(), g.len() as u64 - 1);
        }
    }
}

#[test]
fn ring_and_path_ilbm_are_optimal() {
    for n in 3..=12 {
        let g = ring(n).unwrap();
        let o = legal(
            &g,
            0,
            &mut Ilbm(RingBrd { n, closed: true }),
            Tiebreak::LowestSender,
        );
        assert_eq!(o.time(), Some(n.div_ceil(2) as u32));
        assert_eq!(o.redundant_total(), 0);
        let p = path(n).unwrap();
        let o = legal(
            &p,
            0,
            &mut Ilbm(RingBrd { n, closed: false }),
            Tiebreak::LowestSender,
        );
        assert_eq!(o.time(), Some(n as u32 - 1));
    }
}

#[test]
fn grid_ilbm_is_within_two_of_eccentricity() {
    for (w, h) in [(4, 4), (8, 8), (5, 3), (1, 6)] {
        let g = mesh(w, h).unwrap();
        for s in 0..g.len() {
            let o = legal(
                &g,
                s,
                &mut Ilbm(GridBrd { w, h, wrap: false }),
                Tiebreak::LowestSender,
            );
            let t = o.time().unwrap();
            let e = eccentricity(&g, s);
            assert!(
                t >= e && t <= e + 2,
                "mesh {w}x{h} from {s}: {t} vs ecc {e}"
            );
        }
    }
    for (w, h) in [(4, 4), (5, 3), (6, 7)] {
        let g = torus(w, h).unwrap();
        let o = legal(
            &g,
            0,
            &mut Ilbm(GridBrd { w, h, wrap: true }),
            Tiebreak::LowestSender,
        );
        let t = o.time().unwrap();
        let e = eccentricity(&g, 0);
        assert!(t >= e && t <= e + 2, "torus {w}x{h}: {t} vs ecc {e}");
        assert_eq!(o.messages(), g.len() as u64 - 1);
    }
}

#[test]
fn every_scheme_on_every_family_is_legal_and_no_better_than_optimal() {
    for spec in [
        "ccc:3,2",
        "ccc:4,3",
        "hypercube:4",
        "mesh:4x3",
        "torus:3x4",
        "ring:7",
        "path:6",
    ] {
        let g = parse_graph_spec(spec).unwrap();
        let all: Vec<usize> = (0..g.len()).collect();
        let opts = RunOptions {
            design_moves: 20,
            ..RunOptions::default()
        };
        let opt = run_scheme(&g, Scheme::Optimal, &all, &opts).unwrap();
        for scheme in [Scheme::Clbm, Scheme::Naulbm, Scheme::Aulbm, Scheme::Ilbm] {
            // run_scheme validates every schedule itself; here we also compare with the optimum.
            let run = run_scheme(&g, scheme, &all, &opts).unwrap();
            for (r, o) in run.per_source.iter().zip(&opt.per_source) {
                assert_eq!(r.source, o.source);
                let t = r
                    .time
                    .unwrap_or_else(|| panic!("{spec} {scheme:?}: unreached nodes"));
                assert!(
                    t >= o.time.unwrap(),
                    "{spec} {scheme:?} from {} beats the optimum",
                    r.source
                );
                assert!(t >= r.lower_bound && t >= r.eccentricity);
            }
        }
    }
}

fn arb_graph() -> impl Strategy<Value = Graph> {
    proptest::collection::vec((0u8..10, 0u8..10), 1..30).prop_filter_map(
        "connected, loop-free",
        |edges| {
            let text: String = edges.iter().map(|(a, b)| format!("n{a} n{b}\n")).collect();
            icn_topo::edgelist::parse_edge_list(&text).ok()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_graphs_all_models_legal(g in arb_graph(), seed in 0u64..1000, src in 0usize..10) {
        let s = src % g.len();
        let tb = Tiebreak::Random { seed };
        let o = legal(&g, s, &mut bfs_scheme(&g, s), tb);
        prop_assert_eq!(o.unreached(), 0);
        let o = legal(&g, s, &mut greedy_scheme(&g, s, 4, seed), tb);
        prop_assert_eq!(o.unreached(), 0);
        for adaptive in [false, true] {
            let o = legal(&g, s, &mut UniversalLists::port_order(&g, adaptive), tb);
            // Universal lists flood every link: everyone is reached.
            prop_assert_eq!(o.unreached(), 0);
        }
        let opt = optimum(&g, s, 64, 50_000, 16);
        if let Some(t) = opt.exact {
            let rep = check_schedule(&g, s, &opt.schedule, None).unwrap();
            prop_assert!(rep.iter().all(|r| r.is_some_and(|r| r <= t)));
            prop_assert!(t <= bfs_scheme(&g, s).time());
        }
    }
}

#[test]
fn symmetry_shortcuts_agree_with_brute_force() {
    use icn_bcast::bounds::lower_bound;
    use icn_bcast::schemes::{diameter_by_symmetry, symmetry_class};
    use icn_topo::paths::diameter;
    for spec in [
        "ccc:5,3",
        "ccc:4,4",
        "hypercube:5",
        "torus:5x3",
        "ring:9",
        "mesh:4x3",
        "path:5",
    ] {
        let g = parse_graph_spec(spec).unwrap();
        assert_eq!(diameter_by_symmetry(&g), diameter(&g), "{spec}");
        // Nodes of one class have the same eccentricity and lower bound.
        for u in 0..g.len() {
            for v in 0..g.len() {
                if symmetry_class(&g, u) == symmetry_class(&g, v) {
                    assert_eq!(eccentricity(&g, u), eccentricity(&g, v), "{spec}");
                    assert_eq!(lower_bound(&g, u), lower_bound(&g, v), "{spec}");
                }
            }
        }
    }
}
