//! `icnlab via run WORKLOAD`: a cluster workload run for real on this machine, one process
//! per rank over `icn-via`, beside its simulated prediction.
//!
//! WORKLOAD is a cluster experiment file (`model = "cluster"`, its first point) or a trace
//! file. The parent starts one child per rank (`icnlab via run WORKLOAD --rank R`), and
//! speaks a line protocol with each over its stdin/stdout:
//!
//! ```text
//! child  → ADDR <url>        its NIC is open
//! parent → <url of rank 0> … <url of rank N−1>   one per line
//! child  → READY             connected to its peers, receive buffers posted
//! parent → GO <t>            (to all, once all are ready): start at monotonic-clock time t
//! child  → DONE <ns>         its program finished, ns after t
//! child  → SETTLED           its own sends are acknowledged
//! parent → EXIT              (to all, once all have settled: until then a child keeps its
//!                            VIs moving, since a peer may still wait for its acknowledgement)
//! ```
//!
//! All ranks start at one instant of the machine's monotonic clock, 20 ms after the last
//! one is ready (the start signal crosses a pipe to each child in turn, which takes far less).

use crate::machine_load::{Load, median_min_max};
use crate::via_cmd::{Provider, ViaArgs};
use anyhow::{Context, Result, bail};
use icn_cluster::model::{Cluster, run_point};
use icn_cluster::program::{Program, parse_trace};
use icn_cluster::real::{self, Rank};
use icn_engine::model::NoProgress;
use icn_engine::{ExperimentFile, Model};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// A workload that cannot be run (unreadable, malformed, or beyond what a real run does):
/// the user's input is at fault, so `main` exits 2 for it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadWorkload(pub String);

/// The program of WORKLOAD and, for an experiment file, its simulated completion time (µs).
fn load(path: &Path) -> Result<(Program, Option<f64>)> {
    if path.extension().is_some_and(|e| e == "toml") {
        let file = ExperimentFile::load(path, false)?;
        if file.model != "cluster" {
            bail!(
                "{}: `via run` needs model = \"cluster\", not \"{}\"",
                path.display(),
                file.model
            );
        }
        let point = file
            .points()
            .into_iter()
            .next()
            .context("the experiment has no point")?;
        let cfg = file.typed(&point.body)?;
        let prepared = Cluster::prepare(&cfg, &icn_engine::Context::for_file(path))
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let (_, m) =
            run_point(&prepared, &NoProgress).map_err(|e| anyhow::anyhow!("simulation: {e}"))?;
        let predicted = m.get("completion_us").map(|c| c.value);
        Ok((prepared.program, predicted))
    } else {
        let text = icn_engine::input::read_to_string(path)
            .with_context(|| format!("reading {}", path.display()))?;
        let program = parse_trace(&text, &path.display().to_string())?;
        program.check().map_err(anyhow::Error::msg)?;
        Ok((program, None))
    }
}

/// Entry point of `via run`: the parent, or one rank when `--rank` is given.
pub fn run(args: &ViaArgs) -> Result<()> {
    let path = args
        .workload
        .as_deref()
        .ok_or_else(|| BadWorkload("via run needs a WORKLOAD file".into()))?;
    let (program, predicted) = load(path).map_err(|e| BadWorkload(format!("{e:#}")))?;
    real::check(&program).map_err(BadWorkload)?;
    match args.rank {
        Some(r) => rank_main(args, &program, r),
        None => parent(args, path, &program, predicted),
    }
}

/// The machine's monotonic clock (the one `Instant` reads), ns: one time base for every
/// rank process.
fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn listen_url(args: &ViaArgs, rank: usize) -> String {
    match args.provider {
        Provider::Tcp => "tcp://127.0.0.1:0".into(),
        Provider::Shm => format!(
            "shm:///icnlab-run-{}-{rank}",
            std::os::unix::process::parent_id()
        ),
    }
}

fn rank_main(args: &ViaArgs, program: &Program, me: usize) -> Result<()> {
    if me >= program.len() {
        bail!("--rank {me}: the workload has {} ranks", program.len());
    }
    let nic = Rank::open(&listen_url(args, me))
        .with_context(|| format!("rank {me}: opening {}", listen_url(args, me)))?;
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    println!("ADDR {}", nic.address());
    let mut urls = Vec::with_capacity(program.len());
    for _ in 0..program.len() {
        urls.push(lines.next().context("parent closed the address list")??);
    }
    let mut rank = Rank::connect(nic, program, me, &urls).map_err(anyhow::Error::msg)?;
    println!("READY");
    let go = lines.next().context("parent went away before GO")??;
    let start_ns: u64 = go
        .strip_prefix("GO ")
        .and_then(|t| t.parse().ok())
        .with_context(|| format!("rank {me}: expected GO <ns>, got {go:?}"))?;
    let start =
        Instant::now() + std::time::Duration::from_nanos(start_ns.saturating_sub(monotonic_ns()));
    while Instant::now() < start {
        std::hint::spin_loop();
    }
    let elapsed = rank.run(program, start).map_err(anyhow::Error::msg)?;
    println!("DONE {}", elapsed.as_nanos());
    // Wait for EXIT on a thread while this one keeps the VIs moving (the lock on stdin
    // goes first: the thread takes it).
    drop(lines);
    let exit = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = exit.clone();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        flag.store(true, std::sync::atomic::Ordering::Release);
    });
    rank.settle(
        || println!("SETTLED"),
        || exit.load(std::sync::atomic::Ordering::Acquire),
    )
    .map_err(anyhow::Error::msg)
}

struct Child1 {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Child1 {
    fn expect(&mut self, r: usize, prefix: &str) -> Result<String> {
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        line.trim()
            .strip_prefix(prefix)
            .map(|s| s.trim().to_owned())
            .with_context(|| {
                format!(
                    "rank {r} failed (expected `{prefix}`, got {:?}; its error is above)",
                    line.trim()
                )
            })
    }
}

fn parent(args: &ViaArgs, path: &Path, program: &Program, predicted: Option<f64>) -> Result<()> {
    let provider = match args.provider {
        Provider::Shm => "shm",
        Provider::Tcp => "tcp",
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let before = Load::now();
    let mut runs = Vec::new();
    for _ in 0..args.repeat {
        runs.push(run_once(args, path, program)?);
    }
    let after = Load::now();
    let (messages, bytes) = program.messages();
    println!(
        "# {} over icn-via {provider}: {} ranks, {messages} messages, {bytes} B",
        path.display(),
        program.len()
    );
    let finish = runs.last().cloned().unwrap_or_default();
    println!("{:>6} {:>14}", "rank", "finish_us");
    for (r, t) in finish.iter().enumerate() {
        println!("{r:>6} {t:>14.2}");
    }
    let completion: Vec<f64> = runs
        .iter()
        .map(|f| f.iter().copied().fold(0.0, f64::max))
        .collect();
    let (real, lo, hi) = median_min_max(&completion);
    if runs.len() == 1 {
        println!("completion_us (measured)  {real:.2}");
    } else {
        let list: Vec<String> = completion.iter().map(|c| format!("{c:.2}")).collect();
        println!("runs: completion_us {}", list.join(" "));
        println!(
            "completion_us (measured)  {real:.2}   median of {} runs; min {lo:.2}, max {hi:.2}, spread (max - min) / median = {:.0} %",
            runs.len(),
            100.0 * (hi - lo) / real
        );
    }
    if let Some(p) = predicted {
        println!(
            "completion_us (simulated) {p:.2}   measured / simulated = {:.2}",
            real / p
        );
    }
    if program.len() > cores {
        println!(
            "(more ranks than CPUs: ranks take turns on the cores, which the simulation does not model)"
        );
    }
    for (when, l) in [("start", before), ("end", after)] {
        if let Some(l) = l {
            println!("machine at {when}: {l}, {cores} cores");
        }
    }
    if [before, after]
        .iter()
        .flatten()
        .any(|l| l.busier_than(cores))
    {
        println!(
            "warning: the machine was busier than its {cores} cores (load above): the measured times include waiting for a CPU, which the simulation does not model"
        );
    }
    Ok(())
}

/// One run of the workload: every rank started, run and settled; each rank's finish (µs).
fn run_once(args: &ViaArgs, path: &Path, program: &Program) -> Result<Vec<f64>> {
    let exe = std::env::current_exe().context("locating the icnlab executable")?;
    let provider = match args.provider {
        Provider::Shm => "shm",
        Provider::Tcp => "tcp",
    };
    let mut children: Vec<Child1> = Vec::new();
    let result = (|| -> Result<Vec<f64>> {
        for r in 0..program.len() {
            let mut child = Command::new(&exe)
                .args(["via", "run"])
                .arg(path)
                .args(["--provider", provider, "--rank", &r.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .with_context(|| format!("starting rank {r}"))?;
            let stdin = child.stdin.take().context("child stdin")?;
            let stdout = BufReader::new(child.stdout.take().context("child stdout")?);
            children.push(Child1 {
                child,
                stdin,
                stdout,
            });
        }
        let mut urls = Vec::new();
        for (r, c) in children.iter_mut().enumerate() {
            urls.push(c.expect(r, "ADDR")?);
        }
        for c in &mut children {
            for u in &urls {
                writeln!(c.stdin, "{u}")?;
            }
        }
        for (r, c) in children.iter_mut().enumerate() {
            c.expect(r, "READY")?;
        }
        let start = monotonic_ns() + 20_000_000;
        for c in &mut children {
            writeln!(c.stdin, "GO {start}")?;
        }
        let mut finish = Vec::new();
        for (r, c) in children.iter_mut().enumerate() {
            let ns: f64 = c.expect(r, "DONE")?.parse().context("DONE value")?;
            finish.push(ns / 1e3);
        }
        for (r, c) in children.iter_mut().enumerate() {
            c.expect(r, "SETTLED")?;
        }
        for c in &mut children {
            writeln!(c.stdin, "EXIT")?;
        }
        Ok(finish)
    })();
    if result.is_err() {
        for c in &mut children {
            let _ = c.child.kill();
        }
    }
    let mut failed = Vec::new();
    for (r, c) in children.iter_mut().enumerate() {
        if !c.child.wait().is_ok_and(|s| s.success()) {
            failed.push(r);
        }
    }
    let finish = result?;
    if !failed.is_empty() {
        bail!("ranks {failed:?} failed while finishing (their errors are above)");
    }
    Ok(finish)
}
