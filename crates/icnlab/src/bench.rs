//! `icnlab bench <target>`: simulation speed of each model, in the unit that model's issue
//! states (node-cycles per second for the SCI ring, ...).
//!
//! Each target runs a fixed, documented workload a few times and reports the median rate; the
//! spread is printed too so a noisy machine is visible. Rates are given per wall-clock second
//! and per second of the process's CPU time (all its threads): on a shared machine the second
//! is the one that says how fast the code is, the first what a user waiting for it sees. Every
//! target runs on the calling thread alone except those whose workload says it uses all cores.

use crate::exec::ExecError;
use icn_engine::Model;
use icn_engine::model::NoProgress;
use std::time::Instant;

/// A benchmark workload: runs once and returns the units of work it did.
pub struct Target {
    pub name: &'static str,
    pub workload: &'static str,
    pub unit: &'static str,
    pub run: fn() -> Result<f64, String>,
}

fn mm1() -> Result<f64, String> {
    let cfg = crate::mm1::Mm1Config {
        customers: 2_000_000,
        ..Default::default()
    };
    crate::mm1::Mm1::run(&cfg, 1, &NoProgress).map_err(|e| e.to_string())?;
    Ok((cfg.customers + cfg.warmup) as f64)
}

/// The SCI workload of issue 2: 8-node ring, 64-byte sends, offered load 0.5, hot spot 0.2.
fn sci() -> Result<f64, String> {
    let cfg = icn_sci::bench_config();
    let m = icn_sci::Sci::run(&cfg, 1, &NoProgress).map_err(|e| e.to_string())?;
    Ok(cfg.nodes as f64 * m.require("cycles_simulated").map_err(|e| e.to_string())?)
}

/// A rate with an SI prefix and three significant digits ("10.2 M", "356 k"), so that slow
/// targets (messages of a cluster run) and fast ones (router-cycles) both read well.
fn si(x: f64) -> String {
    let (v, p) = match x.abs() {
        a if a >= 1e9 => (x / 1e9, " G"),
        a if a >= 1e6 => (x / 1e6, " M"),
        a if a >= 1e3 => (x / 1e3, " k"),
        _ => (x, ""),
    };
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{p}")
}

/// Switched SCI (issue 17): 4 rings of 8 hosts around a crossbar, load 0.5, uniform.
fn sci_switched() -> Result<f64, String> {
    let cfg = icn_sci::switched::bench_config();
    let m = icn_sci::switched::SciSwitched::run(&cfg, 1, &NoProgress).map_err(|e| e.to_string())?;
    let nodes: usize = icn_sci::switched::Topology::build(&cfg)
        .map_err(|e| e.to_string())?
        .rings
        .iter()
        .map(|r| r.nodes())
        .sum();
    Ok(nodes as f64 * m.require("cycles_simulated").map_err(|e| e.to_string())?)
}

/// Netrace (issue 21): blackscholes replayed closed-loop on an 8x8 mesh; packets delivered.
fn netrace(vc: bool) -> Result<f64, String> {
    use icn_thnet::{vc_model, xswitch_model};
    let trace = icn_netrace::bench::config(&icn_netrace::bench::blackscholes_file()?);
    let m = if vc {
        let cfg = vc_model::VcRouterConfig {
            topology: "mesh:8x8".into(),
            netrace: Some(trace),
            ..Default::default()
        };
        vc_model::VcRouter::run(&cfg, 1, &NoProgress)
    } else {
        let cfg = xswitch_model::XSwitchConfig {
            topology: "mesh:8x8".into(),
            netrace: Some(trace),
            ..Default::default()
        };
        xswitch_model::XSwitch::run(&cfg, 1, &NoProgress)
    }
    .map_err(|e| e.to_string())?;
    m.require("packets").map_err(|e| e.to_string())
}

/// CPU time consumed by this process (every thread, so parallel targets count all their
/// work), in seconds.
fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

pub fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "sci",
            workload: "SCI ring, 8 nodes, 64-byte sends, load 0.5, hot spot 0.2, A/B aging",
            unit: "node-cycles",
            run: sci,
        },
        Target {
            name: "sci-switched",
            workload: "switched SCI, 4 rings x 8 hosts + crossbar agent, 64-byte sends, load 0.5, uniform, A/B aging",
            unit: "node-cycles",
            run: sci_switched,
        },
        Target {
            name: "mm1",
            workload: "M/M/1 queue, 2·10^6 customers",
            unit: "customers",
            run: mm1,
        },
        // TH-Net (issue 4): both workloads live in `icn_thnet::bench`.
        Target {
            name: "xswitch",
            workload: "X-Switch 8x8 mesh, uniform, load 0.3 B/node/cycle, 256-B messages, 10^4 + 10^5 cycles",
            unit: "switch-cycles",
            run: || icn_thnet::bench::xswitch().map_err(|e| e.to_string()),
        },
        Target {
            name: "vc-router",
            workload: "VC router 8x8 mesh, uniform, 0.3 flits/node/cycle, 5-flit packets, 2 VCs x 8 flits, 10^4 + 10^5 cycles",
            unit: "router-cycles",
            run: || icn_thnet::bench::vc_router().map_err(|e| e.to_string()),
        },
        // Parallel simulation of one network (issue 15): the same 64x64 mesh on one thread and
        // on two (bit-identical results); the speed-up is the ratio of their wall rates.
        Target {
            name: "vc-mesh64",
            workload: "VC router 64x64 mesh, uniform, 0.3 flits/node/cycle, 5-flit packets, 10^3 + 9·10^3 cycles, 1 thread",
            unit: "router-cycles",
            run: || icn_thnet::bench::vc_parallel(1).map_err(|e| e.to_string()),
        },
        Target {
            name: "vc-mesh64-2t",
            workload: "the vc-mesh64 workload on 2 threads (partitions of 32 rows, a barrier per cycle)",
            unit: "router-cycles",
            run: || icn_thnet::bench::vc_parallel(2).map_err(|e| e.to_string()),
        },
        Target {
            name: "xswitch-mesh32",
            workload: "X-Switch 32x32 mesh, uniform, load 0.3 B/node/cycle, 256-B messages, 10^3 + 9·10^3 cycles, 1 thread",
            unit: "switch-cycles",
            run: || icn_thnet::bench::xswitch_parallel(1).map_err(|e| e.to_string()),
        },
        Target {
            name: "xswitch-mesh32-2t",
            workload: "the xswitch-mesh32 workload on 2 threads (partitions of 16 rows, a barrier per cycle)",
            unit: "switch-cycles",
            run: || icn_thnet::bench::xswitch_parallel(2).map_err(|e| e.to_string()),
        },
        Target {
            name: "lockstep-sync",
            workload: "2 partitions of an idle 2-router network, 10^6 cycles: the cost of one cycle's barrier and exchange",
            unit: "cycles",
            run: || icn_thnet::bench::lockstep_sync(1_000_000).map_err(|e| e.to_string()),
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
        // Cluster (issue 13): both workloads live in `icn_cluster::bench`.
        Target {
            name: "cluster-ccc",
            workload: "cluster: CCCBrd broadcast of 64 KB on CCC(5,5) (160 nodes) of X-Switches, X-NIA-like endpoints",
            unit: "messages",
            run: || {
                icn_cluster::bench::run(&icn_cluster::bench::ccc_config())
                    .map_err(|e| e.to_string())
            },
        },
        Target {
            name: "cluster-alltoall",
            workload: "cluster: all-to-all of 4 KB on an 8x8 mesh of VC routers (4,032 messages), X-NIA-like endpoints",
            unit: "messages",
            run: || {
                icn_cluster::bench::run(&icn_cluster::bench::alltoall_config())
                    .map_err(|e| e.to_string())
            },
        },
        // bcast (issue 6): targets "CCC(16,16) one source < 1 s" ⇔ ≥ 1.05 M nodes/s;
        // "CCC(8,8) all 2,048 sources < 10 s on 2 cores" ⇔ ≥ 0.42 M node-broadcasts/s (wall).
        Target {
            name: "bcast-ccc16",
            workload: "CCCBrd on CCC(16,16), 1,048,576 nodes, from (0,15): plan table for the source position + CCC simulator",
            unit: "nodes",
            run: bcast_ccc16,
        },
        Target {
            name: "bcast-ccc8-all",
            workload: "CCCBrd on CCC(8,8) from all 2,048 sources, each schedule validated (rayon, all cores)",
            unit: "node-broadcasts",
            run: bcast_ccc8_all,
        },
    ]
}

pub fn bench(names: &[String], repeats: usize, json: bool) -> Result<(), ExecError> {
    let all = targets();
    let chosen: Vec<&Target> = if names.is_empty() {
        all.iter().collect()
    } else {
        // A name is a target, or a family: `cluster` runs `cluster-ccc` and `cluster-alltoall`.
        let mut chosen = Vec::new();
        for n in names {
            let family = format!("{n}-");
            let found: Vec<&Target> = match all.iter().find(|t| t.name == n) {
                Some(t) => vec![t],
                None => all.iter().filter(|t| t.name.starts_with(&family)).collect(),
            };
            if found.is_empty() {
                let known: Vec<&str> = all.iter().map(|t| t.name).collect();
                return Err(ExecError::Usage(format!(
                    "no benchmark `{n}`; available: {}",
                    known.join(", ")
                )));
            }
            chosen.extend(found);
        }
        chosen
    };
    let mut rows = Vec::new();
    for t in chosen {
        let mut rates = Vec::with_capacity(repeats);
        let mut cpu_rates = Vec::with_capacity(repeats);
        for _ in 0..repeats.max(1) {
            let (started, cpu_started) = (Instant::now(), cpu_seconds());
            let units =
                (t.run)().map_err(|e| ExecError::Failed(format!("bench {}: {e}", t.name)))?;
            rates.push(units / started.elapsed().as_secs_f64());
            cpu_rates.push(units / (cpu_seconds() - cpu_started));
        }
        rates.sort_by(f64::total_cmp);
        cpu_rates.sort_by(f64::total_cmp);
        let median = rates[rates.len() / 2];
        let cpu_median = cpu_rates[cpu_rates.len() / 2];
        if json {
            rows.push(serde_json::json!({
                "target": t.name, "workload": t.workload, "unit": format!("{}/s", t.unit),
                "median": median, "median_per_cpu_second": cpu_median, "min": rates[0], "max": rates[rates.len() - 1], "repeats": rates.len(),
            }));
        } else {
            println!(
                "{:8} {:>9} {}/s wall, {} per CPU-second  (median of {}, wall min {}, max {})  {}",
                t.name,
                si(median),
                t.unit,
                si(cpu_median),
                rates.len(),
                si(rates[0]),
                si(rates[rates.len() - 1]),
                t.workload
            );
        }
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("json values")
        );
    }
    Ok(())
}

// --- bcast (issue 6) ---------------------------------------------------------------------

/// One-source ILBM broadcast on CCC(16,16): builds the part of CCCBrd's plan table a source
/// at position 15 needs and runs the node algorithm in the CCC simulator of
/// `icn_bcast::verify` (no `Graph`); fails unless every node is informed within Theorem 1.
fn bcast_ccc16() -> Result<f64, String> {
    let (h, k) = (16usize, 16usize);
    let brd = icn_bcast::ilbm::ccc::CccBrd::for_positions(h, k, [k - 1]);
    let o = icn_bcast::verify::ccc_fast(&brd, h, k, (0, k - 1), false);
    let t = o.time().ok_or("CCC(16,16): some node never informed")?;
    let bound = icn_bcast::bounds::theorem1(h, k as u32);
    if t > bound {
        return Err(format!("CCC(16,16): {t} steps > Theorem 1 bound {bound}"));
    }
    Ok(o.first_receipt.len() as f64)
}

/// All-sources verification of CCCBrd on CCC(8,8): every source's schedule validated, its
/// time equal to the plan table's prediction and within Theorem 1.
fn bcast_ccc8_all() -> Result<f64, String> {
    let g = icn_topo::build::ccc(8, 8).map_err(|e| e.to_string())?;
    let brd = icn_bcast::ilbm::ccc::CccBrd::new(8, 8);
    let all = icn_bcast::verify::ccc_all_sources(&g, &brd)?;
    let worst = all.iter().map(|r| r.time).max().unwrap_or(0);
    let bound = icn_bcast::bounds::theorem1(8, 8);
    if worst > bound {
        return Err(format!(
            "CCC(8,8): worst {worst} steps > Theorem 1 bound {bound}"
        ));
    }
    Ok((all.len() * g.len()) as f64)
}
