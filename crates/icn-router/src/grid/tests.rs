//! Tests of the VC router network: the zero-load formula, conservation, dateline torus.

use super::*;
use crate::VcNetwork;

fn params(vcs: usize) -> VcParams {
    VcParams::unit_delays(vcs, 8, 10_000)
}

fn mesh(k: usize) -> Grid {
    Grid {
        x: k,
        y: k,
        wrap: false,
    }
}

/// Latency of one packet alone in the network (the network is idle before and after).
fn alone(net: &mut VcNet, src: usize, dst: usize, len: u32) -> u64 {
    net.enqueue(src, dst, len);
    let mut got = Vec::new();
    while got.is_empty() {
        net.step(&mut got).unwrap();
    }
    let (at, p) = got[0];
    assert_eq!((p.src, p.dst, p.len), (src, dst, len));
    at - p.created
}

fn hops(k: usize, a: usize, b: usize) -> u64 {
    ((a % k).abs_diff(b % k) + (a / k).abs_diff(b / k)) as u64
}

#[test]
fn zero_load_latency_is_7_plus_5h_plus_l_minus_1_on_4x4() {
    for vcs in [1, 2, 4] {
        let mut net = VcNet::new(mesh(4), params(vcs)).unwrap();
        for src in 0..16 {
            for dst in 0..16 {
                for len in [1, 5] {
                    let want = 7 + 5 * hops(4, src, dst) + u64::from(len - 1);
                    assert_eq!(
                        alone(&mut net, src, dst, len),
                        want,
                        "V={vcs} {src}→{dst} L={len}"
                    );
                }
            }
        }
    }
}

#[test]
fn zero_load_latency_is_7_plus_5h_plus_l_minus_1_on_8x8() {
    let mut net = VcNet::new(mesh(8), params(2)).unwrap();
    for src in [0, 27, 63] {
        for dst in 0..64 {
            let want = 7 + 5 * hops(8, src, dst) + 4;
            assert_eq!(alone(&mut net, src, dst, 5), want, "{src}→{dst}");
        }
    }
}

#[test]
fn stage_delays_add_per_hop() {
    let mut p = params(2);
    p.routing_delay = 2;
    p.channel_delay = 3;
    let mut net = VcNet::new(mesh(4), p).unwrap();
    // Per hop 2 + 1 + 1 + 1 + 3 = 8; fixed part: 1 (source) + 3 (injection) + 8 − 3 + 3
    // (last router's stages and ejection channel) = 1 + 3 + 5 + 3 = 12.
    for (src, dst) in [(0, 0), (0, 1), (0, 15), (5, 10)] {
        assert_eq!(
            alone(&mut net, src, dst, 3),
            12 + 8 * hops(4, src, dst) + 2,
            "{src}→{dst}"
        );
    }
}

/// Random traffic with tiny buffers, then drained: every packet arrives exactly once and
/// every credit is back ([`crate::conformance::exactly_once`]).
fn conservation(grid: Grid, p: VcParams, len: u32, rate: f64) {
    let mut e = crate::fabric::VcEngine::Grid(VcNet::new(grid, p).unwrap());
    crate::conformance::exactly_once(&mut e, len, rate).unwrap();
}

#[test]
fn every_packet_delivered_once_on_a_mesh() {
    let mut p = params(2);
    p.buf = 2;
    conservation(mesh(4), p.clone(), 5, 0.08);
    p.vc_alloc = AllocKind::Islip;
    p.sw_alloc = AllocKind::Islip;
    conservation(mesh(4), p, 5, 0.08);
}

/// Long packets and small buffers on a torus: dateline VC classes keep DOR deadlock-free
/// (the watchdog would fail the run otherwise).
#[test]
fn dateline_torus_does_not_deadlock() {
    let mut p = params(2);
    p.buf = 2;
    conservation(
        Grid {
            x: 4,
            y: 4,
            wrap: true,
        },
        p,
        16,
        0.03,
    );
}

#[test]
fn bad_router_parameters_name_the_key() {
    assert_eq!(VcNet::new(mesh(4), params(0)).err().unwrap().key, "vcs");
    assert_eq!(VcNet::new(mesh(4), params(9)).err().unwrap().key, "vcs");
    let mut p = params(2);
    p.buf = 0;
    assert_eq!(VcNet::new(mesh(4), p).err().unwrap().key, "buf");
}

/// One VC on a torus: no dateline classes. Long packets with tiny buffers on a ring-like
/// 4×1 torus, every node sending two hops clockwise: the classic cycle, which the watchdog
/// must report instead of hanging.
#[test]
fn single_vc_torus_deadlock_is_reported() {
    let mut p = params(1);
    p.buf = 2;
    p.watchdog = 1_000;
    let mut net = VcNet::new(
        Grid {
            x: 4,
            y: 1,
            wrap: true,
        },
        p,
    )
    .unwrap();
    for s in 0..4 {
        net.enqueue(s, (s + 2) % 4, 64);
    }
    let mut got = Vec::new();
    let err = (0..100_000)
        .try_for_each(|_| net.step(&mut got))
        .unwrap_err();
    assert!(err.to_string().contains("deadlock"), "{err}");
    // Issue 14: the message names the wait-for cycle, as the X-Switch's does: the four
    // packets each hold the +x input VC of the next router.
    assert!(
        err.to_string().contains(
            "Wait-for cycle of 4 input VCs, each waiting on the next one's buffer: \
             (0,0) in from -x VC 0 → (1,0) in from -x VC 0 → (2,0) in from -x VC 0 → \
             (3,0) in from -x VC 0 → (0,0) in from -x VC 0"
        ),
        "{err}"
    );
    assert!(net.deadlocked());
    // With two VCs the dateline classes break the cycle.
    let mut p = params(2);
    p.buf = 2;
    p.watchdog = 1_000;
    let mut net = VcNet::new(
        Grid {
            x: 4,
            y: 1,
            wrap: true,
        },
        p,
    )
    .unwrap();
    for s in 0..4 {
        net.enqueue(s, (s + 2) % 4, 64);
    }
    let mut got = Vec::new();
    while got.len() < 4 {
        net.step(&mut got).unwrap();
    }
}

/// A packet created after the network has been idle for longer than the watchdog is not a
/// deadlock.
#[test]
fn idle_gaps_are_not_deadlocks() {
    let mut p = params(2);
    p.watchdog = 1_000;
    let mut net = VcNet::new(mesh(4), p).unwrap();
    let mut got = Vec::new();
    for _ in 0..5_000 {
        net.step(&mut got).unwrap();
    }
    assert_eq!(alone(&mut net, 0, 15, 5), 7 + 5 * 6 + 4);
}
