//! The [`icn_fabric::conformance`] suite on this crate's fabrics: the X-Switch on meshes at
//! one thread and two (tori and rings deadlock without VCs, see `xswitch::tests`), and the VC
//! routers through their one builder (`VcSpec`): the grid fast path and routers of any
//! radix, sequential and partitioned, on a mesh, a torus, a fat tree and a dragonfly.

use icn_fabric::conformance::{Traffic, check};
use icn_thnet::fabric::{VcFabric, VcSpec, VcTopology, XSwitchFabric};
use icn_thnet::frame::Check;
use icn_thnet::router::VcParams;
use icn_thnet::topology::{Grid, Topology};
use icn_thnet::xswitch::NetParams;
use std::sync::Arc;

#[test]
fn the_xswitch_fabric_conforms_at_1_and_2_threads() {
    for (spec, threads) in [("mesh:4x4", 1), ("mesh:4x4", 2), ("mesh:3x5", 2)] {
        let p = NetParams {
            link_delay: 1,
            fifo_size: 64,
            stop_threshold: 40,
            go_threshold: 20,
            frame_size: 64,
            check: Check::Crc16,
            dma_delay: 4,
            watchdog: 100_000,
            watchdog_wall_s: icn_engine::watchdog::DEFAULT_WALL_S,
        };
        let topo = Topology::from_spec(spec).unwrap();
        let mut f = XSwitchFabric::with_threads(topo, p, threads, 1_000).unwrap();
        check(&mut f, Traffic::default(), 3).unwrap_or_else(|e| panic!("{spec} × {threads}: {e}"));
    }
}

fn vc(topology: VcTopology, threads: usize, flit_bytes: u32) -> VcFabric {
    VcFabric::build(&VcSpec {
        topology,
        params: VcParams::unit_delays(4, 8, 100_000),
        global_delay: 0,
        router_seed: VcSpec::router_seed(5),
        threads,
        ranks: None,
        cycle_ps: 500,
        flit_bytes,
        max_packet_flits: 16,
    })
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

#[test]
fn the_vc_fabric_conforms_on_every_network_at_1_and_2_threads() {
    let grid = |x, y, wrap| VcTopology::Grid(Grid { x, y, wrap });
    for threads in [1, 2] {
        for (name, topology) in [
            ("grid mesh:4x4", grid(4, 4, false)),
            ("grid torus:4x4", grid(4, 4, true)),
            ("any mesh:4x4 dor", any("mesh:4x4", "dor")),
            ("any fattree:4,2 updown", any("fattree:4,2", "updown")),
            ("any dragonfly:2 ugal", any("dragonfly:2", "ugal")),
        ] {
            let mut f = vc(topology, threads, 16);
            check(&mut f, Traffic::default(), 3)
                .unwrap_or_else(|e| panic!("{name} × {threads}: {e}"));
        }
    }
}
