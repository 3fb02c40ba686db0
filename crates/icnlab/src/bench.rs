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

pub use icn_engine::bench::Target;

fn mm1() -> Result<f64, String> {
    let cfg = crate::mm1::Mm1Config {
        customers: 2_000_000,
        ..Default::default()
    };
    crate::mm1::Mm1::run(&cfg, 1, &NoProgress).map_err(|e| e.to_string())?;
    Ok((cfg.customers + cfg.warmup) as f64)
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

/// CPU time consumed by this process (every thread, so parallel targets count all their
/// work), in seconds.
fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Every target: each model crate's own (`<crate>::bench::targets()`), and the M/M/1 queue's.
pub fn targets() -> Vec<Target> {
    let mm1 = Target {
        name: "mm1",
        workload: "M/M/1 queue, 2·10^6 customers",
        unit: "customers",
        run: mm1,
    };
    let mut all = icn_sci::bench::targets();
    all.push(mm1);
    all.extend(icn_thnet::bench::targets());
    all.extend(icn_cluster::bench::targets());
    all.extend(icn_bcast::bench::targets());
    all
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
