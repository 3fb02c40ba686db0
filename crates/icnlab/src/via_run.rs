//! `icnlab via run WORKLOAD`: a cluster workload run for real on this machine, one process
//! per rank over `icn-via`, beside its simulated prediction.
//!
//! WORKLOAD is a cluster experiment file (`model = "cluster"`, its first point) or a trace
//! file. The parent reads it and runs its simulation once, checks what the real run will
//! hold in memory over all ranks ([`real::buffer_bytes`]), then starts one child per rank
//! (`icnlab via run WORKLOAD --rank R`; a child never reads WORKLOAD) and speaks a line
//! protocol with each over its stdin/stdout:
//!
//! ```text
//! parent → <trace> END       the rank's view of the program (`Program::view`) as a trace
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
//!
//! A child's stderr passes through the parent, each line prefixed with its rank, so that a
//! rank that dies is reported by how it ended (its exit status or the signal that killed it),
//! and pointed to its error message only when it wrote one.

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

/// The program of WORKLOAD and, for an experiment file, the prepared simulation of it (run
/// once by the parent, after the real run's memory is checked: [`simulate`]).
fn load(path: &Path) -> Result<(Program, Option<<Cluster as Model>::Prepared>)> {
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
        Ok((prepared.program.clone(), Some(prepared)))
    } else {
        let text = icn_engine::input::read_to_string(path)
            .with_context(|| format!("reading {}", path.display()))?;
        let program = parse_trace(&text, &path.display().to_string())?;
        program.check().map_err(anyhow::Error::msg)?;
        Ok((program, None))
    }
}

/// The simulated completion time (µs) of a prepared experiment.
fn simulate(prepared: &<Cluster as Model>::Prepared) -> Result<Option<f64>> {
    let (_, m) =
        run_point(prepared, &NoProgress).map_err(|e| anyhow::anyhow!("simulation: {e}"))?;
    Ok(m.get("completion_us").map(|c| c.value))
}

/// Entry point of `via run`: the parent, or one rank when `--rank` is given.
pub fn run(args: &ViaArgs) -> Result<()> {
    if let Some(r) = args.rank {
        let program = read_view(r)?;
        return rank_main(args, &program, r);
    }
    let path = args
        .workload
        .as_deref()
        .ok_or_else(|| BadWorkload("via run needs a WORKLOAD file".into()))?;
    let (program, prepared) = load(path).map_err(|e| BadWorkload(format!("{e:#}")))?;
    real::check(&program).map_err(BadWorkload)?;
    check_memory(path, &program, icn_engine::memory::machine_memory())?;
    let predicted = prepared.as_ref().map(simulate).transpose()?.flatten();
    parent(args, path, &program, predicted)
}

/// Refuses a run whose ranks together would register more buffer memory than `available`.
fn check_memory(path: &Path, program: &Program, available: u64) -> Result<()> {
    let key = if path.extension().is_some_and(|e| e == "toml") {
        "workload.bytes"
    } else {
        "WORKLOAD"
    };
    icn_engine::memory::check_fits(
        key,
        &format!(
            "the real run's message buffers over its {} ranks",
            program.len()
        ),
        real::buffer_bytes(program),
        available,
    )
    .map_err(|e| BadWorkload(format!("{}: {e}", path.display())).into())
}

/// A rank's view of the program, as the parent writes it on stdin (a trace, then `END`).
fn read_view(me: usize) -> Result<Program> {
    let mut text = String::new();
    let stdin = std::io::stdin();
    let mut lock = stdin.lock();
    loop {
        let mut line = String::new();
        if lock.read_line(&mut line)? == 0 {
            bail!("rank {me}: the parent closed stdin before the end of the program");
        }
        if line.trim() == "END" {
            break;
        }
        text.push_str(&line);
    }
    Ok(parse_trace(&text, &format!("rank {me}'s program"))?)
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
    /// Forwards the rank's stderr; true once it wrote anything.
    stderr: Option<std::thread::JoinHandle<bool>>,
}

/// A rank that broke the protocol: which, and what it sent instead (empty: nothing, its
/// stdout closed).
#[derive(Debug, thiserror::Error)]
#[error("rank {rank} sent {got:?} where `{expected}` was due")]
struct Broke {
    rank: usize,
    expected: &'static str,
    got: String,
}

impl Child1 {
    fn expect(&mut self, r: usize, prefix: &'static str) -> Result<String> {
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        match line.trim().strip_prefix(prefix) {
            Some(rest) => Ok(rest.trim().to_owned()),
            None => Err(Broke {
                rank: r,
                expected: prefix,
                got: line.trim().to_owned(),
            }
            .into()),
        }
    }
}

/// Copies a rank's stderr to ours line by line, prefixed `rank R: `, escaping control
/// bytes; returns whether the rank wrote anything.
fn forward_stderr(rank: usize, from: std::process::ChildStderr) -> std::thread::JoinHandle<bool> {
    std::thread::spawn(move || {
        let mut wrote = false;
        for line in BufReader::new(from).split(b'\n').map_while(Result::ok) {
            wrote = true;
            let text = String::from_utf8_lossy(&line);
            eprintln!("rank {rank}: {}", crate::echo::escape_controls(&text));
        }
        wrote
    })
}

/// The name of signal `sig` (Linux numbering), e.g. `SIGKILL`.
fn signal_name(sig: i32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    match usize::try_from(sig)
        .ok()
        .and_then(|s| NAMES.get(s.wrapping_sub(1)))
    {
        Some(name) => format!("{name} (signal {sig})"),
        None => format!("signal {sig}"),
    }
}

/// How a rank ended, in words: killed by a named signal, or its exit status; and whether
/// its error is above (only when it wrote one).
fn ending(status: std::process::ExitStatus, wrote: bool) -> String {
    use std::os::unix::process::ExitStatusExt;
    let how = match (status.signal(), status.code()) {
        (Some(sig), _) => format!("was killed by {}", signal_name(sig)),
        (None, Some(code)) => format!("exited with status {code}"),
        (None, None) => format!("ended ({status})"),
    };
    if wrote {
        format!("{how}; its error is above")
    } else {
        format!("{how} without an error message")
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
                .stderr(Stdio::piped())
                .spawn()
                .with_context(|| format!("starting rank {r}"))?;
            let stdin = child.stdin.take().context("child stdin")?;
            let stdout = BufReader::new(child.stdout.take().context("child stdout")?);
            let stderr = child.stderr.take().map(|e| forward_stderr(r, e));
            children.push(Child1 {
                child,
                stdin,
                stdout,
                stderr,
            });
        }
        for (r, c) in children.iter_mut().enumerate() {
            // A rank that died before reading its program shows as a broken protocol below.
            let _ = c
                .stdin
                .write_all(program.view(r).to_trace().as_bytes())
                .and_then(|()| c.stdin.write_all(b"END\n"));
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
    // After a failure, ranks that end on their own within a grace period are reported by
    // how they ended; the others are stopped.
    let mut ended_alone = vec![true; children.len()];
    if result.is_err() {
        let grace = Instant::now() + std::time::Duration::from_secs(2);
        for (r, c) in children.iter_mut().enumerate() {
            while c.child.try_wait().ok().flatten().is_none() && Instant::now() < grace {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            if c.child.try_wait().ok().flatten().is_none() {
                ended_alone[r] = false;
                let _ = c.child.kill();
            }
        }
    }
    let mut failed = Vec::new();
    for (r, c) in children.iter_mut().enumerate() {
        let status = c.child.wait();
        let wrote = c.stderr.take().is_some_and(|h| h.join().unwrap_or(false));
        match status {
            Ok(s) if s.success() => {}
            Ok(s) if ended_alone[r] => failed.push(format!("rank {r} {}", ending(s, wrote))),
            Ok(_) => {}
            Err(e) => failed.push(format!("rank {r}: cannot be waited for: {e}")),
        }
    }
    match result {
        Ok(finish) if failed.is_empty() => Ok(finish),
        Ok(_) => bail!("while finishing, {}", failed.join("; ")),
        Err(e) if failed.is_empty() => Err(e),
        Err(e) => Err(e.context(failed.join("; "))),
    }
}
