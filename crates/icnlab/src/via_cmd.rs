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
    /// pingpong (one-way latency) or window (streaming bandwidth).
    #[arg(value_enum)]
    pub program: Program,
    /// Transport: shared memory between two processes on this machine, or TCP.
    #[arg(long, value_enum, default_value = "shm")]
    pub provider: Provider,
    /// Run only the answering side, listening on ADDR (tcp: HOST:PORT, shm: a name).
    #[arg(long, value_name = "ADDR", conflicts_with = "connect")]
    pub server: Option<String>,
    /// Run only the measuring side against the server at URL (as printed by --server).
    #[arg(long, value_name = "URL")]
    pub connect: Option<String>,
    /// Message sizes in bytes, comma separated [default: 0 and 1 B … 4 MiB in powers of two].
    #[arg(long, value_delimiter = ',')]
    pub sizes: Option<Vec<usize>>,
    /// Timed round trips per size (pingpong).
    #[arg(long, default_value_t = 1000)]
    pub iterations: usize,
    /// Messages streamed per size (window).
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
    /// Print JSON instead of OSU-style tables.
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
            Program::Window => Kind::Window,
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

fn url(provider: &str, addr: &str) -> String {
    if addr.contains("://") {
        addr.to_string()
    } else {
        format!("{provider}://{addr}")
    }
}

pub fn run(args: &ViaArgs) -> Result<()> {
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
        let ep = Endpoint::accept(&url(args.provider(), listen), cfg.reliability, |a| {
            println!("READY {a}");
            use std::io::Write;
            let _ = std::io::stdout().flush();
        })?;
        bench::server(&ep, kind, &cfg)?;
        return Ok(());
    }
    let rows = match &args.connect {
        Some(remote) => {
            pin(0);
            let ep = Endpoint::connect(&url(args.provider(), remote), cfg.reliability)?;
            bench::client(&ep, kind, &cfg)?
        }
        // pins itself once the child runs (a child inherits its parent's CPU mask)
        None => run_with_child(args, &cfg, || pin(0))?,
    };
    let mut results = vec![(format!("icn-via {}", args.provider()), rows)];
    if args.baselines {
        // Two processes, like icn-via's own run above (threads of one process share an
        // address space and scheduler state that two processes do not).
        for (name, sock) in [("raw tcp", RawSocket::Tcp), ("raw unix", RawSocket::Unix)] {
            results.push((name.into(), run_raw_with_child(args, &cfg, sock)?));
        }
    }
    print_results(args, &results)
}

/// Starts `icnlab via ... --server` as a second process and measures against it.
fn run_with_child(
    args: &ViaArgs,
    cfg: &BenchConfig,
    pin: impl FnOnce() -> bool,
) -> Result<Vec<Row>> {
    let listen = match args.provider {
        Provider::Tcp => "127.0.0.1:0".to_string(),
        Provider::Shm => format!("/icnlab-via-bench/{}", std::process::id()),
    };
    with_child_server(args.child_args(&listen), "benchmark server", |addr| {
        pin();
        let ep = Endpoint::connect(addr, cfg.reliability)?;
        Ok(bench::client(&ep, args.kind(), cfg)?)
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

fn print_results(args: &ViaArgs, results: &[(String, Vec<Row>)]) -> Result<()> {
    let kind = args.kind();
    if args.json {
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
    } else {
        for (name, rows) in results {
            let title = format!("icnlab via {:?} — {name}", args.program).to_lowercase();
            print!("{}", bench::osu_table(&title, kind, rows));
        }
    }
    Ok(())
}
