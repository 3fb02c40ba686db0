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
    // `booksim` (or one of its workloads): icnlab side by side with BookSim2, only when named
    // (a BookSim2 run of the 32x32 mesh takes minutes).
    let (peer, names): (Vec<&String>, Vec<&String>) = names
        .iter()
        .partition(|n| *n == "booksim" || n.starts_with("booksim-"));
    if !peer.is_empty() {
        booksim::compare(&peer, repeats, json)?;
        if names.is_empty() {
            return Ok(());
        }
    }
    let names: Vec<String> = names.into_iter().cloned().collect();
    let names = &names[..];
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
                let mut known: Vec<&str> = all.iter().map(|t| t.name).collect();
                known.push("booksim");
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

/// `icnlab bench booksim`: the VC router's CPU time per router-cycle against BookSim2's on the
/// workloads of [`icn_thnet::bench::peer_workloads`], the two processes' runs interleaved
/// (BookSim2, then icnlab for as many cycles as BookSim2 ran), the median ratio printed.
mod booksim {
    use super::{cpu_seconds, si};
    use crate::exec::ExecError;
    use icn_thnet::bench::{PeerWorkload, booksim_cycles, peer_icnlab, peer_workloads};
    use std::io::Write;
    use std::path::PathBuf;
    use std::process::{Command, Stdio};

    /// The BookSim2 binary: `$BOOKSIM2`, else `booksim` on the `PATH`
    /// (`scripts/booksim/equivalence.sh DIR` builds one in `DIR/booksim2/src/booksim`).
    fn binary() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("BOOKSIM2") {
            return Some(PathBuf::from(p));
        }
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join("booksim"))
            .find(|p| p.is_file())
    }

    /// CPU seconds of this process's children that have been waited for (user + system),
    /// from `/proc/self/stat` (`cutime`, `cstime`, in clock ticks).
    fn children_cpu_seconds() -> Result<f64, String> {
        let stat = std::fs::read_to_string("/proc/self/stat").map_err(|e| e.to_string())?;
        // Fields after the command name (which may hold spaces), from field 3 (`state`) on.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let f: Vec<&str> = rest.split_whitespace().collect();
        let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
        // cutime and cstime are fields 16 and 17 of the line (13 and 14 from `state`).
        match (tick(13), tick(14)) {
            (Some(u), Some(s)) => Ok((u + s) / rustix::param::clock_ticks_per_second() as f64),
            _ => Err("cannot read the children's CPU time from /proc/self/stat".into()),
        }
    }

    /// Runs BookSim2 on `w`'s configuration (on its standard input); returns its CPU seconds
    /// and the cycles it ran.
    fn run_booksim(bin: &PathBuf, w: &PeerWorkload) -> Result<(f64, u64), String> {
        let before = children_cpu_seconds()?;
        let mut child = Command::new(bin)
            .arg("/dev/stdin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(w.booksim.as_bytes())
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        let out = child
            .wait_with_output()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        let cpu = children_cpu_seconds()? - before;
        let text = String::from_utf8_lossy(&out.stdout);
        let cycles = booksim_cycles(&text).ok_or_else(|| {
            format!(
                "{} printed no `Time taken is N cycles` (exit {}): {}",
                bin.display(),
                out.status,
                text.lines().last().unwrap_or("no output")
            )
        })?;
        Ok((cpu, cycles))
    }

    pub(super) fn compare(names: &[&String], repeats: usize, json: bool) -> Result<(), ExecError> {
        let all = peer_workloads();
        let chosen: Vec<&PeerWorkload> = all
            .iter()
            .filter(|w| names.iter().any(|n| *n == "booksim" || *n == w.name))
            .collect();
        if let Some(n) = names
            .iter()
            .find(|n| **n != "booksim" && !all.iter().any(|w| w.name == **n))
        {
            let known: Vec<&str> = all.iter().map(|w| w.name).collect();
            return Err(ExecError::Usage(format!(
                "no benchmark `{n}`; BookSim2 comparisons: booksim, {}",
                known.join(", ")
            )));
        }
        let bin = binary();
        if bin.is_none() && !json {
            println!(
                "BookSim2 not found (set BOOKSIM2=/path/to/booksim or put `booksim` on the PATH; \
                 scripts/booksim/equivalence.sh DIR builds it): icnlab's side only"
            );
        }
        let mut rows = Vec::new();
        for w in chosen {
            // Per repeat: (icnlab, BookSim2) CPU seconds per router-cycle, and the cycles.
            let mut runs: Vec<(f64, Option<f64>, u64)> = Vec::new();
            for _ in 0..repeats.max(1) {
                let peer = match &bin {
                    Some(b) => Some(
                        run_booksim(b, w)
                            .map_err(|e| ExecError::Failed(format!("bench {}: {e}", w.name)))?,
                    ),
                    None => None,
                };
                let cycles = peer.map_or(w.cycles, |(_, c)| c);
                let started = cpu_seconds();
                let units = peer_icnlab(w, cycles)
                    .map_err(|e| ExecError::Failed(format!("bench {}: {e}", w.name)))?;
                let ours = (cpu_seconds() - started) / units;
                let theirs = peer.map(|(s, c)| s / (w.routers * c) as f64);
                runs.push((ours, theirs, cycles));
            }
            let mut ratios: Vec<f64> = runs
                .iter()
                .filter_map(|&(o, t, _)| t.map(|t| t / o))
                .collect();
            ratios.sort_by(f64::total_cmp);
            let mut ours: Vec<f64> = runs.iter().map(|r| r.0).collect();
            ours.sort_by(f64::total_cmp);
            let mut theirs: Vec<f64> = runs.iter().filter_map(|r| r.1).collect();
            theirs.sort_by(f64::total_cmp);
            let median = |v: &[f64]| v.get(v.len() / 2).copied();
            let ratio = median(&ratios);
            let cycles = runs[runs.len() / 2].2;
            if json {
                rows.push(serde_json::json!({
                    "target": w.name, "workload": w.workload, "cycles": cycles,
                    "icnlab_router_cycles_per_cpu_second": 1.0 / median(&ours).unwrap_or(f64::NAN),
                    "booksim2_router_cycles_per_cpu_second": median(&theirs).map(|t| 1.0 / t),
                    "ratio": ratio, "ratios": ratios, "repeats": runs.len(),
                }));
            } else {
                let peer = match (median(&theirs), ratio) {
                    (Some(t), Some(r)) => format!(
                        "BookSim2 {} per CPU-second: icnlab {r:.1}x less CPU (ratios {})",
                        si(1.0 / t),
                        ratios
                            .iter()
                            .map(|r| format!("{r:.1}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    _ => "BookSim2 not run".into(),
                };
                println!(
                    "{:15} icnlab {} router-cycles per CPU-second, {peer}  (median of {}, {cycles} cycles, whole runs with set-up)  {}",
                    w.name,
                    si(1.0 / median(&ours).unwrap_or(f64::NAN)),
                    runs.len(),
                    w.workload
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
}
