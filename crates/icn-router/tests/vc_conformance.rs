//! The VC router conformance suite ([`icn_router::conformance`]) over every
//! microarchitecture: exact zero-load latency, credits back to full after a drain, and the
//! same results at 1, 2 and 3 threads. A new router adds its cases to `cases()`.

use icn_fabric::traffic::Grid;
use icn_router::VcParams;
use icn_router::conformance::{Case, credits_return, same_at_any_thread_count, zero_load_latency};
use icn_router::fabric::{VcEngine, VcSpec, VcTopology};
use std::sync::Arc;

fn engine(topology: VcTopology, vcs: usize, speculative: bool, threads: usize) -> VcEngine {
    VcSpec {
        topology,
        params: VcParams {
            speculative,
            ..VcParams::unit_delays(vcs, 8, 100_000)
        },
        global_delay: 0,
        router_seed: VcSpec::router_seed(11),
        threads,
        ranks: None,
        cycle_ps: 1,
        flit_bytes: 1,
        max_packet_flits: 64,
    }
    .engine()
    .unwrap()
}

fn any(spec: &str, routing: &str) -> VcTopology {
    let net = icn_topo::parse_network_spec(spec).unwrap();
    let routing = icn_topo::routing_for(&net, routing, None).unwrap();
    VcTopology::Any {
        net: Arc::new(net),
        routing: Arc::from(routing),
    }
}

/// (name, icn-topo spec, routing, topology for the builder, VCs).
fn cases() -> Vec<(&'static str, &'static str, &'static str, VcTopology, usize)> {
    let grid = |x, y, wrap| VcTopology::Grid(Grid { x, y, wrap });
    vec![
        ("grid mesh:4x4", "mesh:4x4", "dor", grid(4, 4, false), 2),
        ("grid torus:4x4", "torus:4x4", "dor", grid(4, 4, true), 2),
        ("any mesh:4x4", "mesh:4x4", "dor", any("mesh:4x4", "dor"), 2),
        (
            "any fattree:2,3",
            "fattree:2,3",
            "updown",
            any("fattree:2,3", "updown"),
            2,
        ),
        (
            "any dragonfly:2",
            "dragonfly:2",
            "minimal",
            any("dragonfly:2", "minimal"),
            2,
        ),
    ]
}

fn each(check: fn(&Case) -> Result<(), String>) {
    for (name, spec, routing, topology, vcs) in cases() {
        // The input-queued routers, then the any-radix cases with speculative switch
        // allocation (one stage less per router).
        for speculative in [false, true] {
            if speculative && matches!(topology, VcTopology::Grid(_)) {
                continue;
            }
            let topology = topology.clone();
            let build = move |threads| engine(topology.clone(), vcs, speculative, threads);
            let name = format!("{name}{}", if speculative { " spec" } else { "" });
            let case = Case {
                name: &name,
                spec,
                routing,
                zero_load: if speculative { (6, 4) } else { (7, 5) },
                build: &build,
            };
            check(&case).unwrap();
        }
    }
}

#[test]
fn zero_load_latency_is_exact_on_every_router() {
    each(zero_load_latency);
}

#[test]
fn credits_return_to_full_after_a_drain_on_every_router() {
    each(credits_return);
}

#[test]
fn every_router_gives_the_same_results_at_1_2_and_3_threads() {
    each(same_at_any_thread_count);
}
