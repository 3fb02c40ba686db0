//! `icnlab via pingpong|window`: the MyVIA paper's two benchmarks over icn-via's `shm` or
//! `tcp` provider, printed like the OSU micro-benchmarks.
//!
//! * no `--server`/`--connect`: launches both sides itself — this process measures, and a
//!   second `icnlab` process (started with `--server`) answers;
//! * `--server ADDR`: run only the answering side, listening on ADDR (prints `READY <url>`);
//! * `--connect URL`: run only the measuring side against a server started elsewhere.
//!
//! `--baselines` adds the same programs over a raw TCP socket and a Unix socket, measured in
//! the same run; `--json` prints one JSON document instead of the tables.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use icn_via::Reliability;
use icn_via::bench::{self, BenchConfig, Endpoint, Kind, RawSocket, Row};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Program {
    Pingpong,
    Window,
    /// A cluster workload (experiment file or trace) run for real, one process per rank.
    Run,
    /// Single-core copy bandwidth: memcpy against the shm single-copy paths' copies
    /// (out of a shared region as a peer maps it; process_vm_readv), at --sizes.
    Copy,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    Shm,
    Tcp,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Unreliable,
    Delivery,
    Reception,
}

#[derive(clap::Args, Debug, Clone)]
pub struct ViaArgs {
    /// pingpong (one-way latency), window (streaming bandwidth), run WORKLOAD (a cluster
    /// workload for real, beside its simulated prediction), or copy (memcpy against the shm
    /// single-copy path's copy, one core).
    #[arg(value_enum)]
    pub program: Program,
    /// run: the cluster experiment file (`model = "cluster"`) or trace file.
    #[arg(value_name = "WORKLOAD")]
    pub workload: Option<std::path::PathBuf>,
    /// run: run the workload N times (1..=1000) and print each run's completion, their
    /// median, minimum, maximum and spread, and the load before and after.
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Internal (run): act as this rank of the workload.
    #[arg(long, hide = true)]
    pub rank: Option<usize>,
    /// Transport: shared memory between two processes on this machine, or TCP.
    #[arg(long, value_enum, default_value = "shm")]
    pub provider: Provider,
    /// Run only the answering side, listening on ADDR (tcp: HOST:PORT, shm: a name).
    #[arg(long, value_name = "ADDR", conflicts_with = "connect")]
    pub server: Option<String>,
    /// Run only the measuring side against the server at URL (as printed by --server).
    #[arg(long, value_name = "URL")]
    pub connect: Option<String>,
    /// Message sizes in bytes, comma separated, each in 0..=1073741824 (1 GiB, the VIs'
    /// max_transfer_size, on shm and tcp) [default: 0 and 1 B … 4 MiB in powers of two].
    #[arg(long, value_delimiter = ',')]
    pub sizes: Option<Vec<usize>>,
    /// Timed round trips per size (pingpong). Large sizes do fewer: at most 512 MiB moves
    /// per size, but never fewer than 10 round trips.
    #[arg(long, default_value_t = 1000)]
    pub iterations: usize,
    /// Messages streamed per size (window), any number (rounded up to a whole window). Large
    /// sizes send fewer: at most 512 MiB per size, but never fewer than 10 messages.
    #[arg(long, default_value_t = 2000)]
    pub messages: usize,
    /// Receives granted per credit (window).
    #[arg(long, default_value_t = 64)]
    pub window: usize,
    /// VIA reliability level of the connection (unreliable, reliable delivery, reliable reception).
    #[arg(long, value_enum, default_value = "delivery")]
    pub reliability: Level,
    /// Also measure raw TCP and Unix-socket baselines in the same run.
    #[arg(long)]
    pub baselines: bool,
    /// How long each side's waits poll before yielding the CPU and then blocking, in µs
    /// (0..=1000000; shm only: tcp waits block in the kernel). A side whose peer last ran on
    /// the same CPU never spins.
    #[arg(long, value_name = "US", default_value_t = 50)]
    pub spin_us: u64,
    /// shm: messages of at least BYTES move by cross-memory attach (one copy, by the
    /// receiver, from the sender's memory) instead of through the ring (two copies); 0 never.
    /// Off by default: measured slower than the ring here (docs/via.md).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub cma_min: u32,
    /// shm: messages of at least BYTES sent from a shared region (library-owned regions of
    /// at least 64 KiB are; the benchmarks' are when the largest size is) go as a descriptor, and the receiver copies them straight out of the sender's
    /// region (one copy) instead of through the ring (two); 0 never. The default is where
    /// that overtook the ring when measured (docs/via.md).
    #[arg(long, value_name = "BYTES", default_value_t = icn_via::attrs::SINGLE_COPY_MIN)]
    pub single_copy_min: u32,
    /// Print JSON instead of OSU-style tables (one document at the end; the tables print
    /// each row as soon as it is measured).
    #[arg(long)]
    pub json: bool,
    /// Do not pin the two shm sides to different CPUs (pinning is what MPI launchers do by
    /// default; unpinned polling peers may share a core and take turns). tcp is never pinned.
    #[arg(long)]
    pub no_pin: bool,
    /// Internal: answer one raw-socket baseline (tcp or unix) as a separate process, the way
    /// `--baselines` launches it.
    #[arg(long, value_name = "SOCKET", hide = true)]
    pub raw_server: Option<String>,
}

impl ViaArgs {
    fn kind(&self) -> Kind {
        match self.program {
            Program::Pingpong => Kind::Pingpong,
            // `run` and `copy` never reach the benchmark paths (dispatched first in `run`).
            Program::Window | Program::Run | Program::Copy => Kind::Window,
        }
    }
    fn provider(&self) -> &'static str {
        match self.provider {
            Provider::Shm => "shm",
            Provider::Tcp => "tcp",
        }
    }
    fn config(&self) -> BenchConfig {
        let mut c = BenchConfig {
            iterations: self.iterations,
            messages: self.messages,
            window: self.window,
            spin_us: self.spin_us,
            cma_min: self.cma_min,
            single_copy_min: self.single_copy_min,
            reliability: match self.reliability {
                Level::Unreliable => Reliability::Unreliable,
                Level::Delivery => Reliability::ReliableDelivery,
                Level::Reception => Reliability::ReliableReception,
            },
            ..BenchConfig::default()
        };
        if let Some(s) = &self.sizes {
            c.sizes = s.clone();
        }
        c
    }
    /// The arguments a child server needs to mirror this run.
    fn child_args(&self, listen: &str) -> Vec<String> {
        let mut a = self.child_base(&[
            "--provider",
            self.provider(),
            "--server",
            listen,
            "--reliability",
            &format!("{:?}", self.reliability).to_lowercase(),
        ]);
        if self.no_pin {
            a.push("--no-pin".into());
        }
        a
    }
    /// The arguments of a child answering the raw `sock` baseline.
    fn raw_child_args(&self, sock: &str) -> Vec<String> {
        self.child_base(&["--raw-server", sock])
    }
    /// `via <program>`, then `role` (what the child is), then the workload both sides share:
    /// iterations, messages, window and sizes.
    fn child_base(&self, role: &[&str]) -> Vec<String> {
        let mut a = vec![
            "via".to_string(),
            format!("{:?}", self.program).to_lowercase(),
        ];
        a.extend(role.iter().map(|s| s.to_string()));
        a.extend([
            "--iterations".into(),
            self.iterations.to_string(),
            "--messages".into(),
            self.messages.to_string(),
            "--window".into(),
            self.window.to_string(),
            "--spin-us".into(),
            self.spin_us.to_string(),
            "--cma-min".into(),
            self.cma_min.to_string(),
            "--single-copy-min".into(),
            self.single_copy_min.to_string(),
        ]);
        if let Some(s) = &self.sizes {
            a.push("--sizes".into());
            a.push(
                s.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            );
        }
        a
    }
}

/// `icnlab via copy`: [`bench::copy_bandwidth`] per size, one row as soon as it is measured.
fn copy(args: &ViaArgs) -> Result<()> {
    let sizes = args
        .sizes
        .clone()
        .unwrap_or_else(|| vec![64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20]);
    let mut rows = Vec::new();
    if !args.json {
        println!("# icnlab via copy — single-core copy bandwidth, best of 3 passes");
        println!(
            "# Size      memcpy (MB/s)  shared region (MB/s)  process_vm_readv (MB/s)  shared/memcpy"
        );
    }
    for size in sizes {
        let r = bench::copy_bandwidth(size).with_context(|| format!("copy of {size} B"))?;
        if args.json {
            rows.push(r);
        } else {
            println!(
                "{size:<10}{:>15.0}{:>22.0}{:>25.0}{:>15.2}",
                r.memcpy_mbs,
                r.shared_region_mbs,
                r.process_vm_readv_mbs,
                r.shared_region_mbs / r.memcpy_mbs
            );
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    }
    Ok(())
}

fn url(provider: &str, addr: &str) -> String {
    if addr.contains("://") {
        addr.to_string()
    } else {
        format!("{provider}://{addr}")
    }
}

/// Every flag value checked before anything starts: a bad one is the user's input, so it is
/// a [`BadWorkload`](crate::via_run::BadWorkload) (exit 2), never a failed run (exit 1).
fn check_flags(args: &ViaArgs) -> std::result::Result<(), String> {
    match args.program {
        Program::Run => Ok(()), // via_run checks its workload (exit 2 as well)
        Program::Copy => {
            let max = icn_via::attrs::MAX_REGISTER_SIZE;
            match args.sizes.iter().flatten().find(|&&s| s == 0 || s > max) {
                Some(s) => Err(format!("copy size must be in 1..={max}, got {s}")),
                None => Ok(()),
            }
        }
        Program::Pingpong | Program::Window => {
            args.config().validate().map_err(|e| e.to_string())?;
            match args.raw_server.as_deref() {
                None | Some("tcp" | "unix") => Ok(()),
                Some(other) => Err(format!("--raw-server takes tcp or unix, got {other:?}")),
            }
        }
    }
}

pub fn run(args: &ViaArgs) -> Result<()> {
    check_flags(args).map_err(crate::via_run::BadWorkload)?;
    if args.program == Program::Run {
        return crate::via_run::run(args);
    }
    if args.program == Program::Copy {
        return copy(args);
    }
    let cfg = args.config();
    cfg.validate()?;
    let kind = args.kind();
    // Only shm waits poll; pinning tcp (whose waits block in the kernel) only stops a woken
    // thread from moving to an idle core.
    let pin = |i| !args.no_pin && args.provider == Provider::Shm && bench::pin_to_cpu(i);
    if let Some(sock) = &args.raw_server {
        return raw_serve(sock, kind, &cfg);
    }
    if let Some(listen) = &args.server {
        pin(1);
        let ep = Endpoint::accept(&url(args.provider(), listen), &cfg, |a| {
            println!("READY {a}");
            use std::io::Write;
            let _ = std::io::stdout().flush();
        })?;
        bench::server(&ep, kind, &cfg)?;
        return Ok(());
    }
    let name = format!("icn-via {}", args.provider());
    let mut out = RowPrinter::new(args, &name);
    match &args.connect {
        Some(remote) => {
            pin(0);
            let ep = Endpoint::connect(&url(args.provider(), remote), &cfg)?;
            out.header();
            bench::client_rows(&ep, kind, &cfg, &mut |r| out.row(r))?;
        }
        // pins itself once the child runs (a child inherits its parent's CPU mask)
        None => run_with_child(args, &cfg, || pin(0), &mut out)?,
    }
    let mut results = vec![(name, out.rows)];
    if args.baselines {
        // Two processes, like icn-via's own run above (threads of one process share an
        // address space and scheduler state that two processes do not).
        for (name, sock) in [("raw tcp", RawSocket::Tcp), ("raw unix", RawSocket::Unix)] {
            results.push((name.into(), run_raw_with_child(args, &cfg, sock)?));
        }
    }
    if args.json {
        print_json(args, &results)
    } else {
        // icn-via's own rows were printed as they were measured
        for (name, rows) in &results[1..] {
            let mut out = RowPrinter::new(args, name);
            out.header();
            rows.iter().for_each(|&r| out.row(r));
        }
        Ok(())
    }
}

/// Prints an OSU table a row at a time, as each is measured (a run that fails later has
/// still shown what it finished), and keeps the rows for `--json`, which prints one
/// document at the end.
struct RowPrinter {
    title: String,
    kind: Kind,
    json: bool,
    rows: Vec<Row>,
}

impl RowPrinter {
    fn new(args: &ViaArgs, name: &str) -> Self {
        RowPrinter {
            title: format!("icnlab via {:?} — {name}", args.program).to_lowercase(),
            kind: args.kind(),
            json: args.json,
            rows: Vec::new(),
        }
    }
    fn header(&self) {
        if !self.json {
            print!("{}", bench::osu_header(&self.title, self.kind));
            flush();
        }
    }
    fn row(&mut self, r: Row) {
        if !self.json {
            print!("{}", bench::osu_row(&r));
            flush();
        }
        self.rows.push(r);
    }
}

fn flush() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
}

/// Starts `icnlab via ... --server` as a second process and measures against it.
fn run_with_child(
    args: &ViaArgs,
    cfg: &BenchConfig,
    pin: impl FnOnce() -> bool,
    out: &mut RowPrinter,
) -> Result<()> {
    let listen = match args.provider {
        Provider::Tcp => "127.0.0.1:0".to_string(),
        Provider::Shm => format!("/icnlab-via-bench/{}", std::process::id()),
    };
    with_child_server(args.child_args(&listen), "benchmark server", |addr| {
        pin();
        let ep = Endpoint::connect(addr, cfg)?;
        out.header();
        Ok(bench::client_rows(&ep, args.kind(), cfg, &mut |r| {
            out.row(r)
        })?)
    })
}

/// Starts this executable again with `child_args` as the server side of a two-process run,
/// waits for its `READY <address>` line, runs `client` against the address and reaps the
/// child (killing it if the client failed: it may still be waiting for a connection).
fn with_child_server<T>(
    child_args: Vec<String>,
    what: &str,
    client: impl FnOnce(&str) -> Result<T>,
) -> Result<T> {
    let exe = std::env::current_exe().context("locating the icnlab executable")?;
    let mut child = Command::new(exe)
        .args(child_args)
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting the {what} process"))?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("server stdout")?).read_line(&mut line)?;
    let Some(addr) = line.trim().strip_prefix("READY ") else {
        let _ = child.kill();
        bail!("{what} did not start: {line:?}");
    };
    let out = client(addr);
    if out.is_err() {
        let _ = child.kill();
    }
    let status = child.wait()?;
    let out = out?;
    if !status.success() {
        bail!("{what} exited with {status}");
    }
    Ok(out)
}

fn raw_name(sock: RawSocket) -> &'static str {
    match sock {
        RawSocket::Tcp => "tcp",
        RawSocket::Unix => "unix",
    }
}

/// Child side of a two-process raw baseline: listens (TCP on loopback, or an abstract Unix
/// socket), prints `READY <address>`, answers one connection.
fn raw_serve(sock: &str, kind: Kind, cfg: &BenchConfig) -> Result<()> {
    use std::io::Write;
    use std::os::linux::net::SocketAddrExt;
    let ready = |a: &str| -> Result<()> {
        println!("READY {a}");
        std::io::stdout().flush()?;
        Ok(())
    };
    match sock {
        "tcp" => {
            let l = std::net::TcpListener::bind("127.0.0.1:0")?;
            ready(&l.local_addr()?.to_string())?;
            let (mut s, _) = l.accept()?;
            s.set_nodelay(true)?;
            bench::raw_server(&mut s, kind, cfg)?;
        }
        "unix" => {
            let name = format!("icnlab-raw:{}", std::process::id());
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(&name)?;
            let l = std::os::unix::net::UnixListener::bind_addr(&addr)?;
            ready(&name)?;
            let (mut s, _) = l.accept()?;
            bench::raw_server(&mut s, kind, cfg)?;
        }
        other => bail!("--raw-server takes tcp or unix, got {other:?}"),
    }
    Ok(())
}

/// Runs the raw `sock` baseline against a child `icnlab via ... --raw-server` process.
fn run_raw_with_child(args: &ViaArgs, cfg: &BenchConfig, sock: RawSocket) -> Result<Vec<Row>> {
    use std::os::linux::net::SocketAddrExt;
    let child_args = args.raw_child_args(raw_name(sock));
    with_child_server(child_args, "raw baseline server", |addr| {
        Ok(match sock {
            RawSocket::Tcp => {
                let mut s = std::net::TcpStream::connect(addr)?;
                s.set_nodelay(true)?;
                bench::raw_client(&mut s, args.kind(), cfg)?
            }
            RawSocket::Unix => {
                let a = std::os::unix::net::SocketAddr::from_abstract_name(addr)?;
                let mut s = std::os::unix::net::UnixStream::connect_addr(&a)?;
                bench::raw_client(&mut s, args.kind(), cfg)?
            }
        })
    })
}

fn print_json(args: &ViaArgs, results: &[(String, Vec<Row>)]) -> Result<()> {
    let kind = args.kind();
    let unit = match kind {
        Kind::Pingpong => "latency_us",
        Kind::Window => "bandwidth_mb_s",
    };
    let series: Vec<_> = results
        .iter()
        .map(|(name, rows)| {
            serde_json::json!({
                "transport": name,
                "rows": rows.iter().map(|r| serde_json::json!({"size": r.size, unit: r.value})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "program": format!("{:?}", args.program).to_lowercase(),
        "provider": args.provider(),
        "reliability": format!("{:?}", args.reliability).to_lowercase(),
        "series": series,
    });
    println!("{}", serde_json::to_string_pretty(&doc)?);
    Ok(())
}
