//! A partitioned grid network gives the sequential network's results bit for bit.

use super::*;
use crate::conformance::{self, Outcome};
use crate::fabric::VcEngine;
use crate::grid::par::ParVcNet;
use proptest::prelude::*;

/// The suite's run ([`crate::conformance::drive`]): random traffic for `cycles`,
/// then a drain of at most `cycles` more.
fn drive(net: &mut VcEngine, rate: f64, max_len: u32, cycles: u64) -> Outcome {
    conformance::drive(net, rate, max_len, (cycles, cycles), 11)
}

fn sequential(grid: Grid, p: &VcParams, rate: f64, max_len: u32, cycles: u64) -> Outcome {
    let mut net = VcEngine::Grid(VcNet::new(grid, p.clone()).unwrap());
    drive(&mut net, rate, max_len, cycles)
}

fn parallel(
    grid: Grid,
    p: &VcParams,
    threads: usize,
    rate: f64,
    max_len: u32,
    cycles: u64,
) -> Outcome {
    let mut net =
        VcEngine::GridParallel(Box::new(ParVcNet::new(grid, p.clone(), threads).unwrap()));
    drive(&mut net, rate, max_len, cycles)
}

fn grid(x: usize, y: usize, wrap: bool) -> Grid {
    Grid { x, y, wrap }
}

fn same_at_1_2_3_4_threads(g: Grid, p: VcParams, rate: f64, max_len: u32, cycles: u64) {
    let want = sequential(g, &p, rate, max_len, cycles);
    assert!(!want.got.is_empty(), "the run delivers packets");
    for threads in [1, 2, 3, 4] {
        let got = parallel(g, &p, threads, rate, max_len, cycles);
        assert_eq!(got.end, want.end, "{threads} threads: how the run ended");
        assert_eq!(got.loads, want.loads, "{threads} threads: channel counts");
        assert!(got.got == want.got, "{threads} threads: deliveries differ");
    }
}

#[test]
fn a_mesh_in_partitions_is_the_sequential_mesh() {
    let mut p = VcParams::unit_delays(2, 4, 10_000);
    same_at_1_2_3_4_threads(grid(6, 5, false), p.clone(), 0.05, 6, 1_500);
    p.vc_alloc = AllocKind::Islip;
    p.sw_alloc = AllocKind::Islip;
    same_at_1_2_3_4_threads(grid(8, 8, false), p, 0.04, 4, 1_000);
}

/// On a torus the dateline class crosses partitions with the packet (input port and VC).
#[test]
fn a_dateline_torus_in_partitions_is_the_sequential_torus() {
    let p = VcParams::unit_delays(4, 3, 10_000);
    same_at_1_2_3_4_threads(grid(5, 4, true), p, 0.06, 8, 1_500);
}

/// A deadlock is found in the same cycle with the same message at any thread count.
#[test]
fn a_single_vc_torus_deadlocks_in_the_same_cycle() {
    let p = VcParams::unit_delays(1, 2, 1_000);
    let want = sequential(grid(4, 4, true), &p, 0.3, 16, 3_000);
    assert!(
        want.end.as_ref().is_err_and(|e| e.contains("deadlock")),
        "{:?}",
        want.end
    );
    for threads in [2, 4] {
        assert_eq!(
            parallel(grid(4, 4, true), &p, threads, 0.3, 16, 3_000),
            want
        );
    }
}

#[test]
fn more_threads_than_routers_is_an_error_naming_the_key() {
    let p = VcParams::unit_delays(2, 4, 10_000);
    let e = ParVcNet::new(grid(2, 1, false), p, 3).err().unwrap();
    assert_eq!(e.key, "threads");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Random grids (rings, meshes, tori), delays, VC counts, buffers and loads.
    #[test]
    fn any_partitioning_gives_the_sequential_run(
        x in 1usize..7, y in 1usize..6, wrap: bool, vcs in 1usize..5, buf in 1usize..5,
        channel in 1u64..4, credit in 1u64..4, rc in 0u64..3, threads in 2usize..5,
        rate in 0.01f64..0.15, max_len in 1u32..6,
    ) {
        let routers = x * y;
        prop_assume!(routers >= threads && routers >= 2);
        // One VC on a torus may deadlock: that outcome must match too.
        let mut p = VcParams::unit_delays(vcs, buf, 2_000);
        p.channel_delay = channel;
        p.credit_delay = credit;
        p.routing_delay = rc;
        let g = grid(x, y, wrap);
        let want = sequential(g, &p, rate, max_len, 600);
        let got = parallel(g, &p, threads, rate, max_len, 600);
        prop_assert_eq!(&got.end, &want.end);
        prop_assert_eq!(&got.loads, &want.loads);
        prop_assert!(got.got == want.got, "deliveries differ");
    }
}
