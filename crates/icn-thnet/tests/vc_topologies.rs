//! `vc-router` on icn-topo networks: the deadlock check before the run, dragonfly and fat-tree
//! runs end to end, the new traffic patterns.

use icn_engine::Model;
use icn_engine::model::NoProgress;
use icn_fabric::traffic::TrafficPattern;
use icn_router::vc_net::VcNetConfig;
use icn_thnet::vc_model::{OnDeadlock, VcRouter, VcRouterConfig};

fn cfg(topology: &str, routing: &str, vcs: usize) -> VcRouterConfig {
    let mut net = VcNetConfig::on(topology);
    net.routing = routing.into();
    net.router.vcs = vcs;
    VcRouterConfig {
        net,
        load: 0.1,
        warmup: 300,
        measure: 1_500,
        drain: 10_000,
        ..VcRouterConfig::default()
    }
}

fn rejected(c: &VcRouterConfig) -> String {
    let e = VcRouter::validate(c).unwrap_err();
    assert_eq!(e.key, "routing", "{}", e.message);
    e.message
}

#[test]
fn dor_on_a_torus_with_one_vc_is_rejected_naming_the_cycle() {
    // The fast path's torus and the icn-topo torus alike.
    for topology in ["torus:4x4", "torus:4x4x3"] {
        let m = rejected(&cfg(topology, "", 1));
        assert!(m.contains("can deadlock: a cycle of"), "{m}");
        // The channels of the cycle, all in class 0, on one line (the CLI's error format).
        assert!(m.contains("(VC class 0); "), "{m}");
        assert_eq!(m.lines().count(), 1, "{m}");
        assert!(m.contains("allow_deadlock = true"), "{m}");
    }
    // Dateline classes with 2 VCs: accepted.
    VcRouter::validate(&cfg("torus:4x4", "", 2)).unwrap();
    VcRouter::validate(&cfg("torus:4x4x3", "dor", 2)).unwrap();
    VcRouter::validate(&cfg("ring:8", "", 2)).unwrap();
}

#[test]
fn dor_on_a_mesh_is_accepted_with_one_vc() {
    VcRouter::validate(&cfg("mesh:8x8", "", 1)).unwrap();
    VcRouter::validate(&cfg("mesh:4x4x4,2", "dor", 1)).unwrap();
    VcRouter::validate(&cfg("hypercube:4", "", 1)).unwrap();
    VcRouter::validate(&cfg("fattree:4,3", "updown_random", 1)).unwrap();
}

#[test]
fn dragonfly_needs_its_vc_classes() {
    // UGAL and Valiant need 3 classes, minimal 2 (Kim et al. 2008 §4.3).
    for (routing, needed) in [("ugal", 3), ("valiant", 3), ("minimal", 2)] {
        let m = rejected(&cfg("dragonfly:2", routing, needed - 1));
        assert!(m.contains("a cycle of"), "{routing}: {m}");
        VcRouter::validate(&cfg("dragonfly:2", routing, needed)).unwrap();
        VcRouter::validate(&cfg("dragonfly:2,absolute", routing, needed + 1)).unwrap();
    }
}

#[test]
fn a_large_network_is_checked_on_a_small_one_of_its_family() {
    // 1 056 terminals are checked in full; 2 550 (`dragonfly:5`: Valiant choices exceed the
    // state budget) and 16 K on a small twin: same verdicts.
    for df in ["dragonfly:4,8,4", "dragonfly:5"] {
        let m = rejected(&cfg(df, "ugal", 2));
        assert!(m.contains("a cycle of"), "{m}");
        VcRouter::validate(&cfg(df, "ugal", 3)).unwrap();
    }
    let m = rejected(&cfg("torus:128x128", "dor", 1));
    assert!(m.contains("a cycle of"), "{m}");
}

#[test]
fn allow_deadlock_runs_it_and_the_watchdog_still_reports() {
    let mut c = VcRouterConfig {
        size: 64,
        load: 0.5,
        drain: 5_000,
        on_deadlock: OnDeadlock::Report,
        ..cfg("torus:4x4x3", "dor", 1)
    };
    c.net.router.buf = 2;
    c.net.router.watchdog = 2_000;
    c.net.allow_deadlock = true;
    let m = VcRouter::run(&c, 1, &NoProgress).unwrap();
    let d = m.require("deadlocked").unwrap();
    assert!(d == 0.0 || (d == 1.0 && m.notes.iter().any(|n| n.contains("deadlock"))));
}

/// Issue 14: the VC router's deadlock message had no wait-for cycle (the X-Switch's has). A
/// 1-VC 3-D torus on the router of any radix, run with `allow_deadlock`, deadlocks; the
/// watchdog names the cycle of input VCs, each waiting on the next one's buffer, by the
/// channels that feed them, the same at 1 and 2 threads.
#[test]
fn a_deadlock_names_its_wait_for_cycle_on_any_network() {
    let mut c = VcRouterConfig {
        load: 0.6,
        ..cfg("torus:4x4x4,1", "dor", 1)
    };
    c.net.router.watchdog = 1_000;
    c.net.allow_deadlock = true;
    let err = |threads| {
        let mut c = c.clone();
        c.net.threads = threads;
        VcRouter::run(&c, 1, &NoProgress).unwrap_err().to_string()
    };
    let one = err(1);
    let cycle = one
        .split("Wait-for cycle of 4 input VCs, each waiting on the next one's buffer: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no cycle: {one}"));
    // Five names, the first again at the end; each a channel of the torus into a router
    // (`(1,0,0) +y → (1,1,0) VC 0`), each router the one the name before leads to.
    let names: Vec<&str> = cycle.split(" → ").collect();
    assert_eq!(names.len(), 10, "{one}");
    assert_eq!(names[..2], names[8..], "{one}");
    for k in 0..4 {
        let into = names[2 * k + 1].trim_end_matches(" VC 0");
        assert!(names[2 * k + 2].starts_with(into), "{one}");
    }
    assert_eq!(one, err(2));
}

#[test]
fn bad_routing_and_topology_name_their_key() {
    let e = VcRouter::validate(&cfg("dragonfly:2", "dor", 2)).unwrap_err();
    assert_eq!(e.key, "routing");
    assert!(e.message.contains("not a dragonfly"), "{}", e.message);
    let e = VcRouter::validate(&cfg("butterfly:2", "", 2)).unwrap_err();
    assert_eq!(e.key, "topology");
    let e = VcRouter::validate(&cfg("star", "", 2)).unwrap_err();
    assert_eq!(e.key, "topology");
    // Radix above 64: a 33-ary fat tree has 66 ports.
    let e = VcRouter::validate(&cfg("fattree:33,2", "", 2)).err();
    assert!(e.is_none(), "validation does not build the routers");
    let e = VcRouter::run(&cfg("fattree:33,2", "", 2), 1, &NoProgress).unwrap_err();
    assert!(e.to_string().contains("radix 66"), "{e}");
}

/// Every measured packet is delivered, the accepted throughput equals the offered one
/// below saturation, on every family and routing.
#[test]
fn low_load_runs_deliver_everything_on_every_family() {
    for (topology, routing, vcs) in [
        ("dragonfly:2", "minimal", 2),
        ("dragonfly:2", "valiant", 3),
        ("dragonfly:2", "ugal", 3),
        ("fattree:4,2", "updown", 1),
        ("mesh:4x4x2,2", "dor", 2),
        ("flatfly:4x4", "dor", 2),
        ("graph:ccc:3,2", "updown_random", 1),
    ] {
        let m = VcRouter::run(&cfg(topology, routing, vcs), 2, &NoProgress).unwrap();
        assert_eq!(
            m.require("unfinished").unwrap(),
            0.0,
            "{topology} {routing}"
        );
        let (off, acc) = (
            m.require("offered").unwrap(),
            m.require("accepted").unwrap(),
        );
        assert!(
            (acc - off).abs() < 0.1 * off,
            "{topology} {routing}: {off} {acc}"
        );
        // Same seed, same result.
        assert_eq!(
            m,
            VcRouter::run(&cfg(topology, routing, vcs), 2, &NoProgress).unwrap()
        );
    }
}

/// Zero-load latency on the dragonfly: with all delays 1 a packet of 5 flits over H router
/// hops takes 7 + 5·H + 4 cycles. Minimal routes take H ∈ {0, 1, 2, 3}; Valiant ones up to 5
/// (so their mean is higher); the measured mean at a tiny load lies in those bounds.
#[test]
fn dragonfly_latency_at_low_load_follows_the_hop_counts() {
    let lat = |routing: &str| {
        let mut c = cfg("dragonfly:2", routing, 3);
        c.load = 0.01;
        c.measure = 6_000;
        VcRouter::run(&c, 1, &NoProgress)
            .unwrap()
            .require("latency_mean")
            .unwrap()
    };
    let (min, val) = (lat("minimal"), lat("valiant"));
    assert!((11.0..=11.0 + 5.0 * 3.0 + 1.0).contains(&min), "{min}");
    assert!(val > min + 5.0, "Valiant {val} vs minimal {min}");
    assert!(val <= 11.0 + 5.0 * 5.0 + 1.0, "{val}");
}

#[test]
fn group_shift_and_random_permutation_traffic() {
    // Two VCs per class, so that one packet's VC allocation does not idle a link.
    let mut c = cfg("dragonfly:2", "minimal", 4);
    c.traffic.pattern = TrafficPattern::GroupShift;
    // Minimal routing funnels each group's traffic onto one global link: 8 terminals at
    // load 0.3 offer 2.4 flits/cycle to a link that carries 1, so at most 1/8 = 0.125
    // flits/node/cycle are accepted (Kim et al. §3.2), and that link is nearly always busy.
    c.load = 0.3;
    c.drain = 2_000;
    let m = VcRouter::run(&c, 1, &NoProgress).unwrap();
    assert!(
        m.require("accepted").unwrap() <= 0.125,
        "{}",
        m.require("accepted").unwrap()
    );
    assert!(
        m.require("link_util_max").unwrap() > 0.9,
        "{}",
        m.require("link_util_max").unwrap()
    );
    assert!(m.require("unfinished").unwrap() > 0.0);
    // Valiant spreads it over all global links: everything is delivered.
    c.net.routing = "valiant".into();
    c.net.router.vcs = 6;
    let m = VcRouter::run(&c, 1, &NoProgress).unwrap();
    assert_eq!(m.require("unfinished").unwrap(), 0.0);
    assert!(
        m.require("link_util_max").unwrap() < 0.9,
        "{}",
        m.require("link_util_max").unwrap()
    );
    // group_shift is a dragonfly pattern.
    let mut mesh = cfg("mesh:4x4", "", 2);
    mesh.traffic.pattern = TrafficPattern::GroupShift;
    assert_eq!(
        VcRouter::validate(&mesh).unwrap_err().key,
        "traffic.pattern"
    );
    // A random permutation: every source sends to one destination, so the per-source table's
    // offered loads are all nonzero and the run is the same for the same perm_seed.
    for topology in ["mesh:4x4", "fattree:4,2"] {
        let mut p = cfg(topology, "", 2);
        p.traffic.pattern = TrafficPattern::RandomPermutation;
        let a = VcRouter::run(&p, 1, &NoProgress).unwrap();
        assert_eq!(a, VcRouter::run(&p, 1, &NoProgress).unwrap());
        p.traffic.perm_seed = 2;
        assert_ne!(a, VcRouter::run(&p, 1, &NoProgress).unwrap());
    }
}

/// The router of any radix on the icn-topo 8×8 mesh (`mesh:8x8,1`: terminal on port 0, not
/// 4, so allocation orders differ) and the 5-port fast path on `mesh:8x8` are the same router:
/// same zero-load formula (unit tests), and under load the same latency and throughput within
/// the noise of a different arbitration order.
#[test]
fn the_router_of_any_radix_matches_the_fast_path_on_a_mesh() {
    for load in [0.1, 0.3] {
        let run = |topology: &str| {
            let mut c = cfg(topology, "", 2);
            c.load = load;
            c.warmup = 1_000;
            c.measure = 10_000;
            VcRouter::run(&c, 1, &NoProgress).unwrap()
        };
        let (fast, any) = (run("mesh:8x8"), run("mesh:8x8,1"));
        // Same seed, same sources: the same packets are offered.
        assert_eq!(
            fast.require("offered").unwrap(),
            any.require("offered").unwrap()
        );
        let (a, b) = (
            fast.require("latency_mean").unwrap(),
            any.require("latency_mean").unwrap(),
        );
        assert!((a - b).abs() < 0.02 * a, "load {load}: {a} vs {b}");
        let (a, b) = (
            fast.require("accepted").unwrap(),
            any.require("accepted").unwrap(),
        );
        assert!((a - b).abs() < 0.01 * a, "load {load}: {a} vs {b}");
    }
}

/// The fast path's grids are parsed without the X-Switch topology module, which builds a
/// source route for every pair of nodes (a 64×64 mesh needed > 2 GiB there): validation of the
/// largest fast-path grid and of larger icn-topo meshes builds nothing per pair.
#[test]
fn large_grids_validate_without_routes_for_every_pair() {
    for topology in [
        "mesh:64x64",
        "torus:64x64",
        "ring:4096",
        "mesh:100x100",
        "torus:2x4",
    ] {
        VcRouter::validate(&cfg(topology, "", 2)).unwrap();
    }
    // Out of the fast path's ranges: icn-topo's networks take over, or name the key.
    VcRouter::validate(&cfg("mesh:65x2", "", 2)).unwrap();
    assert_eq!(
        VcRouter::validate(&cfg("ring:2", "", 9)).unwrap_err().key,
        "topology"
    );
    // The X-Switch's `ccc:H,K` is `graph:ccc:H,K` (the cluster's fabric took it first).
    VcRouter::validate(&cfg("ccc:4,3", "", 2)).unwrap();
    VcRouter::validate(&cfg("graph:ccc:4,3", "", 2)).unwrap();
    let e = VcRouter::validate(&cfg("file:/no/such/graph", "", 2)).unwrap_err();
    assert_eq!(e.key, "topology");
    assert!(e.message.contains("graph:file:PATH"), "{}", e.message);
}
