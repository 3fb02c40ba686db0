//! The [`icn_fabric::conformance`] suite on this crate's fabrics: the X-Switch on meshes at
//! one thread and two (tori and rings deadlock without VCs, see `xswitch::tests`), and the VC
//! routers through their one builder (`VcSpec`): the grid fast path and routers of any
//! radix, sequential and partitioned, on a mesh, a torus, a fat tree and a dragonfly, and
//! those with speculative switch allocation.

use icn_fabric::Fabric;
use icn_fabric::conformance::{
    Traffic, back_pressure, check, lone_train, skip_idle_matches_stepping, zero_load_is_exact,
};
use icn_fabric::traffic::Grid;
use icn_router::VcParams;
use icn_router::fabric::{VcFabric, VcSpec, VcTopology};
use icn_thnet::fabric::XSwitchFabric;
use icn_thnet::frame::Check;
use icn_thnet::topology::Topology;
use icn_thnet::xswitch::NetParams;
use std::sync::Arc;

fn params(link_delay: usize, frame_size: u32) -> NetParams {
    NetParams {
        link_delay,
        fifo_size: 64,
        stop_threshold: 40,
        go_threshold: 20,
        frame_size,
        check: Check::Crc16,
        dma_delay: 4,
        watchdog: 100_000,
        watchdog_wall_s: icn_engine::watchdog::DEFAULT_WALL_S,
    }
}

fn xswitch(spec: &str, threads: usize, link_delay: usize) -> XSwitchFabric {
    let p = params(link_delay, 64);
    XSwitchFabric::with_threads(Topology::from_spec(spec).unwrap(), p, threads, 1_000).unwrap()
}

#[test]
fn the_xswitch_fabric_conforms_at_1_and_2_threads() {
    for (spec, threads) in [("mesh:4x4", 1), ("mesh:4x4", 2), ("mesh:3x5", 2)] {
        let mut f = xswitch(spec, threads, 1);
        check(&mut f, Traffic::default(), 3).unwrap_or_else(|e| panic!("{spec} × {threads}: {e}"));
    }
}

/// The X-Switch jumps over idle time (`XNet::skip_settled`, `ParXNet::skip_settled`) at
/// one thread and more: it gives what stepping gives, with link delays that leave symbols on the lines
/// and hot spots that make switches send STOP/GO.
#[test]
fn the_xswitch_fabric_skips_idle_time_exactly() {
    for (spec, threads, delay) in [
        ("mesh:4x4", 1, 1),
        ("mesh:3x5", 1, 3),
        ("mesh:4x4", 2, 2),
        ("mesh:3x5", 3, 3),
    ] {
        for seed in 0..4 {
            let (mut a, mut b) = (xswitch(spec, threads, delay), xswitch(spec, threads, delay));
            skip_idle_matches_stepping(&mut a, &mut b, 12, 2_000, seed)
                .unwrap_or_else(|e| panic!("{spec} × {threads}, delay {delay}: {e}"));
        }
    }
}

/// An idle spell of a simulated second costs the X-Switch only the cycles its last frame
/// needs to clear the links: the rest is one jump.
#[test]
fn a_second_of_idle_time_is_jumped_not_stepped() {
    let mut f = xswitch("mesh:4x4", 1, 2);
    f.inject(icn_fabric::Packet {
        src: 0,
        dst: 15,
        bytes: 200,
        tag: 0,
    });
    let mut out = Vec::new();
    while f.in_flight() > 0 {
        let t = f.now() + 1_000;
        f.advance(t, &mut out).unwrap();
    }
    let stepped = f.skip_idle_counted(f.now() + 1_000_000_000_000).unwrap();
    assert!(stepped < 100, "{stepped} cycles stepped");
    assert_eq!(f.now() % 1_000, 0);
    assert!(f.now() >= 1_000_000_000_000);
}

fn vc(topology: VcTopology, threads: usize, flit_bytes: u32, speculative: bool) -> VcFabric {
    VcFabric::build(&VcSpec {
        topology,
        params: VcParams {
            speculative,
            ..VcParams::unit_delays(4, 8, 100_000)
        },
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
            for speculative in [false, true] {
                if speculative && matches!(topology, VcTopology::Grid(_)) {
                    continue;
                }
                let mut f = vc(topology.clone(), threads, 16, speculative);
                check(&mut f, Traffic::default(), 3)
                    .unwrap_or_else(|e| panic!("{name} spec={speculative} × {threads}: {e}"));
            }
        }
    }
}

/// Rule 4 on the X-Switch (an X-NIA send queue of 2 messages, sequential and partitioned)
/// and the VC routers (a window of 4 packets, grid and any radix): 16 endpoints offering
/// 30 packets each to one hot spot, as fast as taken; refusals, no queue above its
/// capacity, every packet delivered once.
#[test]
fn the_xswitch_and_vc_fabrics_refuse_at_a_full_queue_and_lose_nothing() {
    for threads in [1, 2] {
        let mut f = xswitch("mesh:4x4", threads, 1);
        f.set_nia_queue(2);
        back_pressure(&mut f, 30, 200).unwrap_or_else(|e| panic!("xswitch × {threads}: {e}"));
    }
    let grid = VcTopology::Grid(Grid {
        x: 4,
        y: 4,
        wrap: false,
    });
    for (name, topology) in [
        ("grid mesh:4x4", grid),
        ("any fattree:4,2 updown", any("fattree:4,2", "updown")),
    ] {
        let mut f = vc(topology, 1, 16, false);
        f.set_window(4);
        back_pressure(&mut f, 30, 200).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// Every VC network the fabric builds, by name: the grid fast path (mesh and torus), routers
/// of any radix (mesh, fat tree, dragonfly) and speculative ones, each sequential and in two
/// partitions.
fn every_vc_network() -> Vec<(String, VcTopology, usize, bool)> {
    let grid = |x, y, wrap| VcTopology::Grid(Grid { x, y, wrap });
    let mut all = Vec::new();
    for threads in [1, 2] {
        for (name, topology, speculative) in [
            ("grid mesh:4x4", grid(4, 4, false), false),
            ("grid torus:4x4", grid(4, 4, true), false),
            ("any mesh:4x4 dor", any("mesh:4x4", "dor"), false),
            (
                "any fattree:4,2 updown",
                any("fattree:4,2", "updown"),
                false,
            ),
            ("any dragonfly:2 ugal", any("dragonfly:2", "ugal"), false),
            ("spec mesh:4x4 dor", any("mesh:4x4", "dor"), true),
            ("spec dragonfly:2 ugal", any("dragonfly:2", "ugal"), true),
        ] {
            all.push((
                format!("{name} × {threads}"),
                topology,
                threads,
                speculative,
            ));
        }
    }
    all
}

/// Jump equals step on every VC network at 1 and 2 threads: the fabric skipping every idle
/// spell delivers the same packets at the same picoseconds as the one stepping through it.
#[test]
fn the_vc_fabric_skips_idle_time_exactly() {
    for (name, topology, threads, speculative) in every_vc_network() {
        for seed in 0..2 {
            let mut a = vc(topology.clone(), threads, 16, speculative);
            let mut b = vc(topology.clone(), threads, 16, speculative);
            skip_idle_matches_stepping(&mut a, &mut b, 8, 500, seed)
                .unwrap_or_else(|e| panic!("{name}, seed {seed}: {e}"));
        }
    }
}

/// A packet, drained, then a simulated second of idle time: the skip (`skip`, returning the
/// cycles it stepped) steps only while the last symbols or credits clear, then jumps (a
/// second is 2·10⁹ cycles at 500 ps, 10⁹ at 1 000 ps).
fn idle_second_costs<F: Fabric>(name: &str, mut f: F, skip: impl Fn(&mut F, u64) -> u64) {
    let last = f.endpoints() - 1;
    f.inject(icn_fabric::Packet {
        src: 0,
        dst: last,
        bytes: 200,
        tag: 0,
    });
    let mut out = Vec::new();
    while f.in_flight() > 0 {
        let t = f.now() + 1_000 * f.cycle_ps();
        f.advance(t, &mut out).unwrap();
    }
    assert_eq!(out.len(), 1, "{name}");
    let to = f.now() + 1_000_000_000_000;
    let stepped = skip(&mut f, to);
    assert!(stepped < 100, "{name}: {stepped} cycles stepped");
    assert_eq!(f.now(), to.next_multiple_of(f.cycle_ps()), "{name}");
    // And the fabric still carries a packet after the jump.
    f.inject(icn_fabric::Packet {
        src: last,
        dst: 0,
        bytes: 100,
        tag: 1,
    });
    while f.in_flight() > 0 {
        let t = f.now() + 1_000 * f.cycle_ps();
        f.advance(t, &mut out).unwrap();
    }
    assert_eq!(out.len(), 2, "{name}");
}

/// Issue 33 item 6: every VC network at 1 and 2 threads, and the X-Switch at 1, 2 and 3,
/// jumps a simulated second of idle time after its traffic (cycles counted, not wall time:
/// stepped, a second would be 10⁹ cycles or more).
#[test]
fn a_second_of_idle_time_is_jumped_on_every_network_and_thread_count() {
    for (name, topology, threads, speculative) in every_vc_network() {
        let f = vc(topology, threads, 16, speculative);
        idle_second_costs(&name, f, |f, to| f.skip_idle_counted(to).unwrap());
    }
    for threads in [1, 2, 3] {
        let f = xswitch("mesh:4x4", threads, 2);
        let name = format!("xswitch mesh:4x4 × {threads}");
        idle_second_costs(&name, f, |f, to| f.skip_idle_counted(to).unwrap());
    }
}

/// A fabric whose idle jump lands one cycle late: the conformance check must reject it.
struct LateJump<F>(F);

impl<F: Fabric> Fabric for LateJump<F> {
    fn endpoints(&self) -> usize {
        self.0.endpoints()
    }
    fn cycle_ps(&self) -> icn_fabric::Ps {
        self.0.cycle_ps()
    }
    fn now(&self) -> icn_fabric::Ps {
        self.0.now()
    }
    fn max_packet_bytes(&self) -> u32 {
        self.0.max_packet_bytes()
    }
    fn inject(&mut self, p: icn_fabric::Packet) {
        self.0.inject(p)
    }
    fn advance(
        &mut self,
        until: icn_fabric::Ps,
        out: &mut Vec<icn_fabric::Delivery>,
    ) -> Result<(), icn_fabric::FabricError> {
        self.0.advance(until, out)
    }
    fn zero_load(
        &mut self,
        src: usize,
        dst: usize,
        bytes: u32,
    ) -> Result<icn_fabric::ZeroLoad, icn_fabric::FabricError> {
        self.0.zero_load(src, dst, bytes)
    }
    fn in_flight(&self) -> u64 {
        self.0.in_flight()
    }
    fn skip_idle(&mut self, to: icn_fabric::Ps) -> Result<(), icn_fabric::FabricError> {
        let cycle = self.0.cycle_ps();
        self.0.skip_idle(to + cycle)
    }
    fn set_measuring(&mut self, on: bool) {
        self.0.set_measuring(on)
    }
    fn accepted(&self) -> &[u64] {
        self.0.accepted()
    }
    fn channel_loads(&self) -> Vec<icn_fabric::ChannelLoad> {
        self.0.channel_loads()
    }
    fn nouns(&self) -> icn_fabric::Nouns {
        self.0.nouns()
    }
}

/// The jump-equals-step check is not blind: a jump one cycle too far fails it, on the VC
/// routers and on the X-Switch, sequential and partitioned.
#[test]
fn a_jump_one_cycle_off_fails_the_check() {
    let grid = VcTopology::Grid(Grid {
        x: 4,
        y: 4,
        wrap: false,
    });
    for threads in [1, 2] {
        let mut a = vc(grid.clone(), threads, 16, false);
        let mut b = LateJump(vc(grid.clone(), threads, 16, false));
        let e = skip_idle_matches_stepping(&mut a, &mut b, 8, 500, 1).unwrap_err();
        assert!(e.contains("idle spell"), "{e}");
        let mut a = xswitch("mesh:4x4", threads, 1);
        let mut b = LateJump(xswitch("mesh:4x4", threads, 1));
        let e = skip_idle_matches_stepping(&mut a, &mut b, 8, 500, 1).unwrap_err();
        assert!(e.contains("idle spell"), "{e}");
    }
}

/// Injection cycles of rule 3's checks: every phase of an X-Switch output's polling turn
/// (5 cycles), and later ones.
const STARTS: &[u64] = &[0, 1, 2, 3, 4, 7, 1_003];

/// Rule 3 on the X-Switch: near and far pairs of a 4×4 mesh, one symbol to several frames
/// (64 B frames), link delays 1 and 3.
#[test]
fn the_xswitch_fabric_answers_zero_load_exactly() {
    for delay in [1, 3] {
        let fresh = || Box::new(xswitch("mesh:4x4", 1, delay)) as Box<dyn Fabric>;
        zero_load_is_exact(
            &fresh,
            &[
                (0, 1, 1),
                (1, 2, 1),
                (0, 15, 10),
                (5, 10, 200),
                (6, 11, 200),
                (12, 3, 1000),
            ],
            STARTS,
        )
        .unwrap_or_else(|e| panic!("link delay {delay}: {e}"));
    }
    // The cluster's THNPC-II-like mesh: 8×4, 256 B frames, 4 KiB packets with a header.
    let fresh = || Box::new(thnpc_mesh()) as Box<dyn Fabric>;
    zero_load_is_exact(&fresh, &[(0, 31, 4104), (9, 22, 4104), (3, 4, 777)], STARTS)
        .unwrap_or_else(|e| panic!("8×4: {e}"));
}

/// Rule 3 on the VC routers: the grid, any radix, speculative; 1 to 16 flits.
#[test]
fn the_vc_fabric_answers_zero_load_exactly() {
    let grid = VcTopology::Grid(Grid {
        x: 4,
        y: 4,
        wrap: false,
    });
    for (name, topology, speculative) in [
        ("grid mesh:4x4", grid, false),
        // The grid's probe shares one answer per hop count: the wrap-around links too.
        (
            "grid torus:4x4",
            VcTopology::Grid(Grid {
                x: 4,
                y: 4,
                wrap: true,
            }),
            false,
        ),
        (
            "any fattree:4,2 updown",
            any("fattree:4,2", "updown"),
            false,
        ),
        ("any mesh:4x4 dor spec", any("mesh:4x4", "dor"), true),
    ] {
        let fresh = || Box::new(vc(topology.clone(), 1, 16, speculative)) as Box<dyn Fabric>;
        zero_load_is_exact(
            &fresh,
            &[(0, 1, 1), (0, 15, 100), (5, 10, 256), (12, 3, 17)],
            STARTS,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// The grid's probe shares one answer per hop count and size (`VcRouteClass::GridHops`): pairs
/// of the same hop count and size but different shapes — along x or y, straight or turning,
/// at a corner or inside, over a wrap-around link or not — must each still get exactly what a
/// lone packet of theirs takes. All cases have one size, so the second pair of a hop count is
/// answered from the first one's probe; a class that merged different hop counts, or counted
/// mesh distance on the torus (0→3 is 1 hop there, 0→6 is 3: both 3 on a mesh), fails here.
#[test]
fn the_grid_probe_shares_answers_across_pairs_of_one_hop_count() {
    let grid = |wrap| VcTopology::Grid(Grid { x: 4, y: 4, wrap });
    let alike: &[(usize, usize, u32)] = &[
        (0, 1, 100),  // 1 hop, x, corner
        (0, 4, 100),  // 1 hop, y
        (5, 6, 100),  // 1 hop, inside
        (0, 2, 100),  // 2 hops straight
        (0, 5, 100),  // 2 hops with a turn
        (10, 5, 100), // 2 hops, − directions
        (0, 15, 100), // 6 on the mesh, 2 on the torus
        (3, 12, 100),
        (0, 3, 100), // 3 on the mesh, 1 (wrap) on the torus
        (0, 6, 100), // 3 on both
    ];
    for (name, topology) in [
        ("grid mesh:4x4", grid(false)),
        ("grid torus:4x4", grid(true)),
    ] {
        let fresh = || Box::new(vc(topology.clone(), 1, 16, false)) as Box<dyn Fabric>;
        zero_load_is_exact(&fresh, alike, STARTS).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// A lone message's packets on the X-Switch (256 B frames, an 8×4 mesh, the cluster's
/// 4 KiB packets and smaller) and the VC routers: exact up to a probe's train (17 packets
/// of up to 963 B, 4 of 4 KiB + a header), within 1 % for longer ones, up to 30.
#[test]
fn a_lone_train_is_its_wire_time() {
    let x = || Box::new(thnpc_mesh()) as Box<dyn Fabric>;
    let grid = VcTopology::Grid(Grid {
        x: 4,
        y: 4,
        wrap: false,
    });
    let v = || Box::new(vc(grid.clone(), 1, 16, false)) as Box<dyn Fabric>;
    for (name, fresh, cases) in [
        (
            "xswitch",
            &x as &dyn Fn() -> Box<dyn Fabric>,
            [(0, 1, 100), (0, 31, 1000), (0, 31, 4104)],
        ),
        ("vc", &v, [(0, 1, 16), (0, 15, 100), (3, 12, 256)]),
    ] {
        for case in cases {
            for n in [2, 5, 17, 30] {
                lone_train(fresh, case, n, 0.01).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
    }
}

/// An 8×4 mesh of X-Switches with 256 B frames at 100 MHz, as the cluster's THNPC-II-like
/// machine has.
fn thnpc_mesh() -> XSwitchFabric {
    XSwitchFabric::new(
        Topology::from_spec("mesh:8x4").unwrap(),
        params(1, 256),
        10_000,
    )
    .unwrap()
}

/// `--spread network`: the fabric's partitions over ranks (threads standing for MPI ranks)
/// jump idle time together (the quiet check is collective) and every rank gives what
/// stepping gives; a second of idle time costs each rank a few cycles.
#[test]
fn networks_spread_over_ranks_skip_idle_time_exactly() {
    use icn_engine::lockstep::{Exchange, ThreadRanks};
    let ranks = 2;
    let (for_a, for_b, for_c) = (
        ThreadRanks::new(ranks),
        ThreadRanks::new(ranks),
        ThreadRanks::new(ranks),
    );
    let spread = |topology: VcTopology, x: ThreadRanks| {
        VcFabric::build(&VcSpec {
            topology,
            params: VcParams::unit_delays(4, 8, 100_000),
            global_delay: 0,
            router_seed: VcSpec::router_seed(5),
            threads: 1,
            ranks: Some(Arc::new(x) as Arc<dyn Exchange>),
            cycle_ps: 500,
            flit_bytes: 16,
            max_packet_flits: 16,
        })
        .unwrap()
    };
    let handles: Vec<_> = for_a
        .into_iter()
        .zip(for_b)
        .zip(for_c)
        .map(|((a, b), c)| {
            std::thread::spawn(move || {
                let grid = VcTopology::Grid(Grid {
                    x: 4,
                    y: 4,
                    wrap: false,
                });
                let (mut fa, mut fb) = (spread(grid.clone(), a), spread(grid.clone(), b));
                skip_idle_matches_stepping(&mut fa, &mut fb, 6, 500, 3).unwrap();
                let f = spread(grid, c);
                idle_second_costs("vc spread", f, |f, to| f.skip_idle_counted(to).unwrap());
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let (for_a, for_b) = (ThreadRanks::new(ranks), ThreadRanks::new(ranks));
    let xspread = |x: ThreadRanks| {
        XSwitchFabric::spread(
            Topology::from_spec("mesh:4x4").unwrap(),
            params(2, 64),
            1,
            Some(Arc::new(x) as Arc<dyn Exchange>),
            1_000,
        )
        .unwrap()
    };
    let handles: Vec<_> = for_a
        .into_iter()
        .zip(for_b)
        .map(|(a, b)| {
            std::thread::spawn(move || {
                let (mut fa, mut fb) = (xspread(a), xspread(b));
                skip_idle_matches_stepping(&mut fa, &mut fb, 6, 500, 3).unwrap();
                idle_second_costs("xswitch spread", fa, |f, to| {
                    f.skip_idle_counted(to).unwrap()
                });
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
