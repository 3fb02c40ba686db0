//! Netrace on the cycle-level fabrics: an 8×8 mesh of VC routers and of X-Switches, through
//! the fabrics directly (every injection and delivery checked against the trace) and through
//! the `vc-router` and `xswitch` models' `[netrace]` workload.
//!
//! The blackscholes trace (81 749 packets, 2.3 M cycles) takes minutes in a debug build:
//! its tests are ignored by default and CI runs them in release
//! (`cargo test --release -p icn-netrace --test mesh -- --ignored`).

mod common;

use common::{check, records};
use icn_engine::Model;
use icn_engine::model::NoProgress;
use icn_fabric::Fabric;
use icn_fabric::traffic::Grid;
use icn_netrace::NetraceConfig;
use icn_netrace::format::Reader;
use icn_netrace::replay::{Plan, replay};
use icn_router::VcParams;
use icn_router::fabric::{VcFabric, VcSpec, VcTopology};
use icn_thnet::fabric::XSwitchFabric;
use icn_thnet::frame::Check;
use icn_thnet::topology::Topology;
use icn_thnet::vc_model::{VcRouter, VcRouterConfig};
use icn_thnet::xswitch::NetParams;
use icn_thnet::xswitch_model::{XSwitch, XSwitchConfig};
use std::path::Path;

/// The `vc-router` model's defaults: 2 VCs × 8 flits, every delay 1 cycle; 16-byte flits.
fn vc_mesh() -> VcFabric {
    let p = VcParams::unit_delays(2, 8, 20_000);
    let g = Grid {
        x: 8,
        y: 8,
        wrap: false,
    };
    VcFabric::build(&VcSpec {
        topology: VcTopology::Grid(g),
        params: p,
        global_delay: 0,
        router_seed: 0,
        threads: 1,
        ranks: None,
        cycle_ps: 1,
        flit_bytes: 16,
        max_packet_flits: 1 << 16,
    })
    .unwrap()
}

/// The `xswitch` model's defaults: 64-byte frames, 64-symbol FIFOs, DMA delay 10.
fn xswitch_mesh() -> XSwitchFabric {
    let p = NetParams {
        link_delay: 1,
        fifo_size: 64,
        stop_threshold: 48,
        go_threshold: 16,
        frame_size: 64,
        check: Check::Crc16,
        dma_delay: 10,
        watchdog: 20_000,
        watchdog_wall_s: icn_engine::watchdog::DEFAULT_WALL_S,
    };
    XSwitchFabric::new(Topology::from_spec("mesh:8x8").unwrap(), p, 1).unwrap()
}

/// Replays the whole trace at `path` on `fabric` and checks every packet against the trace.
fn replay_checked(path: &Path, fabric: &mut dyn Fabric) -> usize {
    let (_, recs) = records(path);
    let mut r = Reader::open(path).unwrap();
    let plan = Plan {
        first: 0,
        last: r.header().regions.len() - 1,
        map: (0..64).collect(),
    };
    let mut events = Vec::new();
    let o = replay(&mut r, fabric, &plan, &mut |e| events.push(e)).unwrap();
    assert_eq!(o.packets as usize, recs.len());
    assert_eq!(fabric.in_flight(), 0);
    check(&recs, 0, &events)
}

#[test]
fn example_on_a_vc_router_mesh() {
    assert_eq!(
        replay_checked(&common::data("example.tra.bz2"), &mut vc_mesh()),
        175
    );
}

#[test]
fn example_on_an_x_switch_mesh() {
    assert_eq!(
        replay_checked(&common::data("example.tra.bz2"), &mut xswitch_mesh()),
        175
    );
}

#[test]
#[ignore = "blackscholes: minutes in debug; CI runs it in release"]
fn blackscholes_on_a_vc_router_mesh() {
    let path = common::shared("lngrex.tra.bz2");
    assert_eq!(replay_checked(&path, &mut vc_mesh()), 81_749);
}

#[test]
#[ignore = "blackscholes: minutes in debug; CI runs it in release"]
fn blackscholes_on_an_x_switch_mesh() {
    let path = common::shared("lngrex.tra.bz2");
    assert_eq!(replay_checked(&path, &mut xswitch_mesh()), 81_749);
}

fn netrace(file: &Path) -> Option<NetraceConfig> {
    Some(NetraceConfig {
        file: file.display().to_string(),
        ..NetraceConfig::default()
    })
}

#[test]
fn the_models_take_a_netrace_workload() {
    let file = common::data("example.tra.bz2");
    let vc = VcRouterConfig {
        netrace: netrace(&file),
        ..VcRouterConfig::default()
    };
    let m = VcRouter::run(&vc, 1, &NoProgress).unwrap();
    assert_eq!(m.require("packets").unwrap(), 175.0);
    let runtime = m.require("runtime").unwrap();
    // Never faster than the traced run: the last packet goes at its cycle at the earliest.
    assert!(runtime >= 6_820.0 - 100.0, "{runtime}");
    // Deterministic.
    assert_eq!(m, VcRouter::run(&vc, 1, &NoProgress).unwrap());
    let xs = XSwitchConfig {
        netrace: netrace(&file),
        ..XSwitchConfig::default()
    };
    let m = XSwitch::run(&xs, 1, &NoProgress).unwrap();
    assert_eq!(m.require("packets").unwrap(), 175.0);
}

/// The same results with the network partitioned over two threads (a barrier per cycle: the
/// 221-cycle trace keeps it short in debug builds).
#[test]
fn two_threads_replay_the_same() {
    let file = common::data("shrtex.tra.bz2");
    let vc = VcRouterConfig {
        netrace: netrace(&file),
        ..VcRouterConfig::default()
    };
    let m = VcRouter::run(&vc, 1, &NoProgress).unwrap();
    assert_eq!(m.require("packets").unwrap(), 12.0);
    let mut two = vc.clone();
    two.net.threads = 2;
    assert_eq!(m, VcRouter::run(&two, 1, &NoProgress).unwrap());
    let xs = XSwitchConfig {
        netrace: netrace(&file),
        ..XSwitchConfig::default()
    };
    let m = XSwitch::run(&xs, 1, &NoProgress).unwrap();
    let mut two = xs.clone();
    two.net.threads = 2;
    assert_eq!(m, XSwitch::run(&two, 1, &NoProgress).unwrap());
}

#[test]
fn the_models_refuse_what_does_not_fit() {
    let file = common::data("example.tra.bz2");
    let bad = |f: fn(&mut NetraceConfig)| {
        let mut n = netrace(&file).unwrap();
        f(&mut n);
        let cfg = VcRouterConfig {
            netrace: Some(n),
            ..VcRouterConfig::default()
        };
        VcRouter::validate(&cfg).unwrap_err()
    };
    assert_eq!(bad(|n| n.regions = vec![1]).key, "netrace.regions");
    assert_eq!(bad(|n| n.map = vec![0; 64]).key, "netrace.map");
    assert_eq!(bad(|n| n.flit_bytes = 0).key, "netrace.flit_bytes");
    let e = bad(|n| n.file = "no-such.tra.bz2".into());
    assert_eq!(e.key, "netrace.file");
    // 64 trace nodes on a 4×4 mesh.
    let cfg = VcRouterConfig {
        net: icn_router::vc_net::VcNetConfig::on("mesh:4x4"),
        netrace: netrace(&file),
        ..VcRouterConfig::default()
    };
    assert_eq!(VcRouter::validate(&cfg).unwrap_err().key, "topology");
}
