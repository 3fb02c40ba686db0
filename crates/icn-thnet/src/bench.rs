//! The two standard speed workloads of issue 4 (and the scale workload of issue 15), shared by `icnlab bench xswitch vc-router`
//! and the crate's `bench` example, so that every figure quoted in `docs/thnet.md` comes from
//! the same configuration.
//!
//! Both: 8×8 mesh, uniform traffic (self included), offered load 0.3, seed 1, 10^4 warm-up
//! cycles then 10^5 measured cycles, no drain (the run stops at the end of the window). The
//! unit of work is a router-cycle (switch-cycle): routers × `cycles_simulated`, warm-up
//! included.

use crate::vc_model::{VcRouter, VcRouterConfig};
use crate::xswitch_model::{XSwitch, XSwitchConfig};
use crate::xswitch_net::XSwitchNetConfig;
use icn_engine::model::NoProgress;
use icn_engine::{Model, ModelError};
use icn_router::vc_net::VcNetConfig;

/// Routers (switches) of the 8×8 mesh of both workloads.
pub const ROUTERS: u64 = 64;

/// Measured cycles of both workloads.
pub const MEASURED: u64 = 100_000;

/// X-Switch: 0.3 payload bytes/node/cycle, 256-byte messages in 64-byte frames (defaults).
pub fn xswitch_config() -> XSwitchConfig {
    XSwitchConfig {
        net: XSwitchNetConfig::on("mesh:8x8"),
        load: 0.3,
        warmup: 10_000,
        measure: MEASURED,
        drain: 0,
        ..XSwitchConfig::default()
    }
}

/// VC router: 0.3 flits/node/cycle, 5-flit packets, 2 VCs × 8-flit buffers, all delays 1.
pub fn vc_router_config() -> VcRouterConfig {
    VcRouterConfig {
        net: VcNetConfig::on("mesh:8x8"),
        load: 0.3,
        size: 5,
        warmup: 10_000,
        measure: MEASURED,
        drain: 0,
        ..VcRouterConfig::default()
    }
}

/// Switches of the scale workload: a 32-ary 4-tree has `4 · 32³` switches of radix 64 and
/// `32⁴ = 1 048 576` endpoints.
pub const SCALE_ROUTERS: u64 = 131_072;

/// Scale (issue 15): a 1 M-endpoint fat tree (`fattree:32,4`, up/down routing, 2 VCs × 8
/// flits, 5-flit packets), uniform 0.1 flits/node/cycle, 100 warm-up + 500 measured cycles, no
/// drain. The run includes building the network (0.1 s) and the deadlock check on a small
/// fat tree of the same depth.
pub fn scale_config() -> VcRouterConfig {
    VcRouterConfig {
        net: VcNetConfig::on("fattree:32,4"),
        load: 0.1,
        size: 5,
        warmup: 100,
        measure: 500,
        drain: 0,
        ..VcRouterConfig::default()
    }
}

/// Routers of the parallel workload: a 64×64 mesh.
pub const PARALLEL_ROUTERS: u64 = 4096;

/// Parallel speed (issue 15): the VC-router workload on a 64×64 mesh (0.3 flits/node/cycle,
/// 5-flit packets, 2 VCs × 8 flits), 10^3 warm-up + 9·10^3 measured cycles, no drain, on
/// `threads` threads (same results at any count).
pub fn parallel_config(threads: usize) -> VcRouterConfig {
    VcRouterConfig {
        net: VcNetConfig {
            threads,
            ..VcNetConfig::on("mesh:64x64")
        },
        warmup: 1_000,
        measure: 9_000,
        ..vc_router_config()
    }
}

/// Runs the parallel workload once on `threads` threads; returns the router-cycles.
pub fn vc_parallel(threads: usize) -> Result<f64, ModelError> {
    let m = VcRouter::run(&parallel_config(threads), 1, &NoProgress)?;
    Ok(PARALLEL_ROUTERS as f64 * m.require("cycles_simulated")?)
}

/// Switches of the parallel X-Switch workload: a 32×32 mesh.
pub const XPARALLEL_SWITCHES: u64 = 1024;

/// Parallel speed of the X-Switch (issue 15): the X-Switch workload on a 32×32 mesh (0.3
/// payload bytes/node/cycle, 256-byte messages in 64-byte frames), 10^3 warm-up + 9·10^3
/// measured cycles, no drain, on `threads` threads (same results at any count).
pub fn xswitch_parallel_config(threads: usize) -> XSwitchConfig {
    XSwitchConfig {
        net: XSwitchNetConfig {
            threads,
            ..XSwitchNetConfig::on("mesh:32x32")
        },
        warmup: 1_000,
        measure: 9_000,
        ..xswitch_config()
    }
}

/// Runs the parallel X-Switch workload once on `threads` threads; returns the switch-cycles.
pub fn xswitch_parallel(threads: usize) -> Result<f64, ModelError> {
    let m = XSwitch::run(&xswitch_parallel_config(threads), 1, &NoProgress)?;
    Ok(XPARALLEL_SWITCHES as f64 * m.require("cycles_simulated")?)
}

/// The cost of one cycle of synchronisation: a 2-router network without traffic stepped
/// `cycles` times in two partitions (each partition's cycle is a few nanoseconds of work, so
/// the time per cycle is the barrier and exchange). Returns the cycles stepped.
pub fn lockstep_sync(cycles: u64) -> Result<f64, ModelError> {
    let grid = crate::topology::Grid {
        x: 2,
        y: 1,
        wrap: false,
    };
    let p = icn_router::grid::VcParams::unit_delays(2, 8, 1 << 30);
    let mut net = icn_router::grid::par::ParVcNet::new(grid, p, 2)?;
    let mut got = Vec::new();
    for _ in 0..cycles {
        net.step(&mut got)?;
    }
    Ok(cycles as f64)
}

/// A workload timed in icnlab and in BookSim2 side by side (`icnlab bench booksim`, issue 32):
/// the same network, router, traffic and load in both, BookSim2's `iq` router as in the
/// equivalence suite (`docs/booksim.md`): dimension order, uniform traffic, 5-flit packets,
/// 4 VCs × 8 flits, iSLIP VC and switch allocators, every delay 1.
pub struct PeerWorkload {
    /// `icnlab bench booksim-NAME` selects it.
    pub name: &'static str,
    pub workload: &'static str,
    pub routers: u64,
    /// BookSim2's whole configuration file (it reads it from standard input, `/dev/stdin`):
    /// a latency run (warm-up periods, sample periods until its latency converges, drain).
    pub booksim: String,
    /// Cycles icnlab runs when BookSim2 is not there to say how many it ran.
    pub cycles: u64,
    /// The mesh side `k` (`mesh:kxk`) and the offered load.
    pub k: u32,
    pub load: f64,
}

impl PeerWorkload {
    /// icnlab's configuration of this workload running `cycles` cycles (half warm-up, half
    /// window, no drain), so that both simulators' CPU time covers the same cycles.
    pub fn icnlab(&self, cycles: u64) -> VcRouterConfig {
        let mut net = VcNetConfig::on(&format!("mesh:{0}x{0}", self.k));
        net.routing = "dor".into();
        net.router.vcs = 4;
        net.router.buf = 8;
        net.router.vc_alloc = icn_router::alloc::AllocKind::Islip;
        net.router.sw_alloc = icn_router::alloc::AllocKind::Islip;
        VcRouterConfig {
            net,
            load: self.load,
            size: 5,
            warmup: cycles / 2,
            measure: cycles - cycles / 2,
            drain: 0,
            ..VcRouterConfig::default()
        }
    }
}

/// BookSim2's configuration of a `k`×`k` mesh at `load` with `warmup_periods` and
/// `sample_period` (the equivalence suite's router and measurement otherwise).
fn booksim_config(k: u32, load: f64, warmup_periods: u32, sample_period: u32) -> String {
    format!(
        "router = iq;\nvc_allocator = islip;\nsw_allocator = islip;\nalloc_iters = 1;\n\
         wait_for_tail_credit = 0;\nrouting_delay = 1;\nvc_alloc_delay = 1;\nsw_alloc_delay = 1;\n\
         st_final_delay = 1;\ncredit_delay = 1;\ninput_speedup = 1;\noutput_speedup = 1;\n\
         internal_speedup = 1.0;\npacket_size = 5;\ninjection_rate_uses_flits = 1;\n\
         warmup_periods = {warmup_periods};\nsample_period = {sample_period};\nmax_samples = 8;\n\
         sim_count = 1;\nsim_type = latency;\ntopology = mesh;\nk = {k};\nn = 2;\n\
         routing_function = dim_order;\ntraffic = uniform;\nnum_vcs = 4;\nvc_buf_size = 8;\n\
         injection_rate = {load};\nseed = 1;\n"
    )
}

/// The two workloads of issue 32: the 8×8 mesh at 0.3 with the equivalence suite's
/// measurement (3 warm-up periods of 2 000 cycles; BookSim2 ran 12 191 cycles in all), and the
/// 32×32 mesh at 0.1 with one warm-up period of 2 000 cycles (BookSim2 ran 10 697 cycles,
/// ≈ 160 s of its CPU on this project's 2-core machine: about 14 µs per router-cycle).
pub fn peer_workloads() -> Vec<PeerWorkload> {
    vec![
        PeerWorkload {
            name: "booksim-mesh8",
            workload: "8x8 mesh, dor, uniform 0.3 flits/node/cycle, 5-flit packets, 4 VCs x 8 flits, iSLIP",
            routers: 64,
            booksim: booksim_config(8, 0.3, 3, 2000),
            cycles: 12_191,
            k: 8,
            load: 0.3,
        },
        PeerWorkload {
            name: "booksim-mesh32",
            workload: "32x32 mesh, dor, uniform 0.1 flits/node/cycle, 5-flit packets, 4 VCs x 8 flits, iSLIP",
            routers: 1024,
            booksim: booksim_config(32, 0.1, 1, 2000),
            cycles: 10_697,
            k: 32,
            load: 0.1,
        },
    ]
}

/// Runs `w` in icnlab for `cycles` cycles; returns the router-cycles simulated (set-up, i.e.
/// building the network and its deadlock check, included in the caller's timing).
pub fn peer_icnlab(w: &PeerWorkload, cycles: u64) -> Result<f64, ModelError> {
    let m = VcRouter::run(&w.icnlab(cycles), 1, &NoProgress)?;
    Ok(w.routers as f64 * m.require("cycles_simulated")?)
}

/// The cycles BookSim2 ran, from its output's `Time taken is N cycles`.
pub fn booksim_cycles(output: &str) -> Option<u64> {
    output
        .lines()
        .find_map(|l| l.strip_prefix("Time taken is "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// Runs the X-Switch workload once; returns the switch-cycles simulated.
pub fn xswitch() -> Result<f64, ModelError> {
    let m = XSwitch::run(&xswitch_config(), 1, &NoProgress)?;
    Ok(ROUTERS as f64 * m.require("cycles_simulated")?)
}

/// Runs the VC-router workload once; returns the router-cycles simulated.
pub fn vc_router() -> Result<f64, ModelError> {
    let m = VcRouter::run(&vc_router_config(), 1, &NoProgress)?;
    Ok(ROUTERS as f64 * m.require("cycles_simulated")?)
}

/// This crate's targets for `icnlab bench`, in the order it lists them.
pub fn targets() -> Vec<icn_engine::bench::Target> {
    use icn_engine::bench::Target;
    vec![
        // TH-Net (issue 4): both workloads live in `icn_thnet::bench`.
        Target {
            name: "xswitch",
            workload: "X-Switch 8x8 mesh, uniform, load 0.3 B/node/cycle, 256-B messages, 10^4 + 10^5 cycles",
            unit: "switch-cycles",
            run: || xswitch().map_err(|e| e.to_string()),
        },
        Target {
            name: "vc-router",
            workload: "VC router 8x8 mesh, uniform, 0.3 flits/node/cycle, 5-flit packets, 2 VCs x 8 flits, 10^4 + 10^5 cycles",
            unit: "router-cycles",
            run: || vc_router().map_err(|e| e.to_string()),
        },
        // Parallel simulation of one network (issue 15): the same 64x64 mesh on one thread and
        // on two (bit-identical results); the speed-up is the ratio of their wall rates.
        Target {
            name: "vc-mesh64",
            workload: "VC router 64x64 mesh, uniform, 0.3 flits/node/cycle, 5-flit packets, 10^3 + 9·10^3 cycles, 1 thread",
            unit: "router-cycles",
            run: || vc_parallel(1).map_err(|e| e.to_string()),
        },
        Target {
            name: "vc-mesh64-2t",
            workload: "the vc-mesh64 workload on 2 threads (partitions of 32 rows, a barrier per cycle)",
            unit: "router-cycles",
            run: || vc_parallel(2).map_err(|e| e.to_string()),
        },
        Target {
            name: "xswitch-mesh32",
            workload: "X-Switch 32x32 mesh, uniform, load 0.3 B/node/cycle, 256-B messages, 10^3 + 9·10^3 cycles, 1 thread",
            unit: "switch-cycles",
            run: || xswitch_parallel(1).map_err(|e| e.to_string()),
        },
        Target {
            name: "xswitch-mesh32-2t",
            workload: "the xswitch-mesh32 workload on 2 threads (partitions of 16 rows, a barrier per cycle)",
            unit: "switch-cycles",
            run: || xswitch_parallel(2).map_err(|e| e.to_string()),
        },
        Target {
            name: "lockstep-sync",
            workload: "2 partitions of an idle 2-router network, 10^6 cycles: the cost of one cycle's barrier and exchange",
            unit: "cycles",
            run: || lockstep_sync(1_000_000).map_err(|e| e.to_string()),
        },
        // Netrace (issue 21): the workload lives in `icn_netrace::bench`.
        Target {
            name: "netrace-vc",
            workload: "Netrace blackscholes (81,749 packets, 2.3 M cycles) closed-loop on an 8x8 mesh of VC routers (2 VCs x 8 flits, 16-B flits)",
            unit: "packets",
            run: || netrace(true),
        },
        Target {
            name: "netrace-xswitch",
            workload: "Netrace blackscholes (81,749 packets, 2.3 M cycles) closed-loop on an 8x8 mesh of X-Switches (64-B frames)",
            unit: "packets",
            run: || netrace(false),
        },
    ]
}

/// Netrace (issue 21): blackscholes replayed closed-loop on an 8x8 mesh; packets delivered.
fn netrace(vc: bool) -> Result<f64, String> {
    use crate::{vc_model, xswitch_model};
    let trace = icn_netrace::bench::config(&icn_netrace::bench::blackscholes_file()?);
    let m = if vc {
        let cfg = vc_model::VcRouterConfig {
            net: VcNetConfig::on("mesh:8x8"),
            netrace: Some(trace),
            ..Default::default()
        };
        vc_model::VcRouter::run(&cfg, 1, &NoProgress)
    } else {
        let cfg = xswitch_model::XSwitchConfig {
            net: XSwitchNetConfig::on("mesh:8x8"),
            netrace: Some(trace),
            ..Default::default()
        };
        xswitch_model::XSwitch::run(&cfg, 1, &NoProgress)
    }
    .map_err(|e| e.to_string())?;
    m.require("packets").map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_workloads_are_valid_and_the_same_in_both_simulators() {
        for w in peer_workloads() {
            let cfg = w.icnlab(w.cycles);
            VcRouter::validate(&cfg).unwrap();
            assert_eq!(cfg.warmup + cfg.measure, w.cycles);
            let net = icn_topo::parse_network_spec(&cfg.net.topology).unwrap();
            assert_eq!(u64::from(net.routers()), w.routers);
            // BookSim2's keys say the same network, router, traffic and load.
            let b = &w.booksim;
            for key in [
                format!("k = {};", w.k),
                format!("injection_rate = {};", w.load),
                "num_vcs = 4;".into(),
                "vc_buf_size = 8;".into(),
                "packet_size = 5;".into(),
                "vc_allocator = islip;".into(),
                "sw_allocator = islip;".into(),
                "routing_function = dim_order;".into(),
                "traffic = uniform;".into(),
            ] {
                assert!(b.contains(&key), "{} lacks {key}", w.name);
            }
            assert_eq!(
                (cfg.net.router.vcs, cfg.net.router.buf, cfg.size),
                (4, 8, 5)
            );
        }
        assert_eq!(
            booksim_cycles("x\nTime taken is 12232 cycles\n"),
            Some(12232)
        );
        assert_eq!(booksim_cycles("Parse error on line 1"), None);
    }

    #[test]
    fn workloads_are_valid_and_match_the_issue() {
        let (x, v) = (xswitch_config(), vc_router_config());
        XSwitch::validate(&x).unwrap();
        VcRouter::validate(&v).unwrap();
        // The scale workload is valid and as large as it says (validation builds the network
        // and checks routing on a small twin; it simulates nothing).
        let s = scale_config();
        VcRouter::validate(&s).unwrap();
        let net = icn_topo::parse_network_spec(&s.net.topology).unwrap();
        assert_eq!(u64::from(net.routers()), SCALE_ROUTERS);
        assert_eq!(net.terminals(), 1 << 20);
        assert_eq!(net.radix(), 64);
        assert_eq!((x.load, v.load, v.size), (0.3, 0.3, 5));
        assert_eq!((x.measure, v.measure), (100_000, 100_000));
        let topo = crate::topology::Topology::from_spec(&x.net.topology).unwrap();
        assert_eq!(topo.nias() as u64, ROUTERS);
    }
}
