//! Issue 15: `vc-router` gives bit-identical metrics (every scalar, every table) at 1, 2 and 4
//! threads on a mesh, a torus, a fat tree and a dragonfly (minimal, Valiant and UGAL routing),
//! including a point past saturation and a deadlocking torus.

use icn_engine::model::NoProgress;
use icn_engine::{Metrics, Model};
use icn_fabric::traffic::TrafficPattern;
use icn_thnet::vc_model::{VcRouter, VcRouterConfig};

mod common;
use common::short_vc_run;

fn same_at_1_2_4_threads(c: VcRouterConfig) -> Metrics {
    let one = VcRouter::run(&c, 7, &NoProgress).unwrap();
    for threads in [2, 4] {
        let mut at = c.clone();
        at.net.threads = threads;
        let got = VcRouter::run(&at, 7, &NoProgress).unwrap();
        assert_eq!(
            got.fingerprint(),
            one.fingerprint(),
            "{} ({}) at {threads} threads",
            c.net.topology,
            c.net.routing
        );
    }
    one
}

#[test]
fn a_mesh_and_a_torus_are_bit_identical_at_any_thread_count() {
    let m = same_at_1_2_4_threads(short_vc_run("mesh:6x6", "", 2, 0.2));
    assert!(m.require("accepted").unwrap() > 0.1);
    // Past saturation (unfinished packets, a drain-limited status).
    let m = same_at_1_2_4_threads(short_vc_run("mesh:6x6", "", 2, 0.9));
    assert!(m.require("unfinished").unwrap() > 0.0);
    same_at_1_2_4_threads(short_vc_run("torus:5x4", "", 4, 0.3));
    // A 3-D torus on the router of any radix.
    same_at_1_2_4_threads(short_vc_run("torus:4x3x3", "dor", 2, 0.2));
}

#[test]
fn a_deadlocking_torus_deadlocks_identically() {
    // The golden file's deadlocking configuration.
    let mut c = VcRouterConfig {
        warmup: 500,
        measure: 3_000,
        drain: 20_000,
        ..short_vc_run("torus:4x4", "", 1, 0.6)
    };
    c.net.allow_deadlock = true;
    c.net.router.watchdog = 1_000;
    let m = same_at_1_2_4_threads(c);
    assert_eq!(m.require("deadlocked").unwrap(), 1.0);
}

#[test]
fn a_fat_tree_is_bit_identical_at_any_thread_count() {
    same_at_1_2_4_threads(short_vc_run("fattree:4,3", "", 2, 0.3));
    // Random up ports: each router's own stream, whatever thread simulates it.
    same_at_1_2_4_threads(short_vc_run("fattree:4,3", "updown_random", 2, 0.3));
}

#[test]
fn a_dragonfly_is_bit_identical_at_any_thread_count() {
    for routing in ["minimal", "valiant", "ugal"] {
        let vcs = if routing == "minimal" { 2 } else { 3 };
        let mut c = short_vc_run("dragonfly:2", routing, vcs, 0.3);
        c.net.global_delay = 5;
        same_at_1_2_4_threads(c.clone());
        c.traffic.pattern = TrafficPattern::GroupShift;
        same_at_1_2_4_threads(c);
    }
}

#[test]
fn threads_beyond_the_routers_are_refused_before_the_run() {
    let mut c = short_vc_run("mesh:4x4", "", 2, 0.1);
    c.net.threads = 17;
    let e = VcRouter::validate(&c).unwrap_err();
    assert_eq!(e.key, "threads", "{}", e.message);
    c.net.threads = 5000;
    assert_eq!(VcRouter::validate(&c).unwrap_err().key, "threads");
}
