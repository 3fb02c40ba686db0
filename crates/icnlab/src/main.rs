//! `icnlab`: run, sweep and reproduce interconnect experiments from TOML files.
//!
//! This binary is thin on purpose: models live in their own crates and implement
//! `icn_engine::Model`; this crate reads experiment files, runs points and replications on all
//! cores, and writes reports, CSVs, plots and the results index.

mod bcast_cmd;
mod bench;
mod checks;
mod echo;
mod exec;
mod experiment;
mod html;
mod import;
mod keys;
mod machine_load;
mod merge;
mod metrics_cmd;
mod mm1;
mod models;
/// Compiled where it is used: MPI builds, and every build's tests (ranks as threads).
#[cfg(any(feature = "mpi", test))]
mod mpi;
mod outdir;
mod plot;
mod provenance;
mod raster;
mod report;
mod reproduce;
mod saturate;
mod timeline;
mod trace_cmd;
mod via_cmd;
mod via_run;

use clap::{Args, Parser, Subcommand};
use exec::{ExecError, ExecOptions};
use experiment::{Plan, Shard};
use icn_engine::ExperimentFile;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "icnlab",
    version,
    about = "Workbench for cluster interconnects: simulate, sweep, reproduce"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one configuration (replications included) and print its metrics.
    Run {
        #[command(flatten)]
        common: Common,
        /// Output directory for report.json and CSVs [default: out/<config name>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Under mpirun/srun: spread the replications over the ranks (`runs`), or partition
        /// each replication's network over them (`network`: vc-router, xswitch, cluster). One process: ignored.
        #[arg(long, value_enum, default_value_t = Spread::Runs)]
        spread: Spread,
        /// Also write the timeline of the run (a cluster trace replay, replication seed 0):
        /// Chrome trace-event JSON for a `.json` path (Perfetto, chrome://tracing), else an
        /// OTF2 archive in that new folder (Vampir, otf2-print; needs libotf2-trace-dev).
        #[arg(long, value_name = "PATH")]
        timeline: Option<PathBuf>,
        /// Most spans the timeline keeps; past it the rest are counted and a note says so.
        #[arg(long, value_name = "N", default_value_t = icn_cluster::timeline::DEFAULT_CAP)]
        timeline_events: usize,
    },
    /// Run every point of the file's [sweep] table on all cores; writes data.csv, report.json, plot.svg.
    Sweep {
        #[command(flatten)]
        common: Common,
        /// Output directory [default: out/<config name>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run only points i, i+n, i+2n, ... (for batch schedulers); join with `icnlab merge`.
        #[arg(long, value_name = "i/n")]
        shard: Option<Shard>,
        /// Under mpirun/srun: spread the replications over the ranks (`runs`), or partition
        /// each replication's network over them (`network`: vc-router, xswitch, cluster). One process: ignored.
        #[arg(long, value_enum, default_value_t = Spread::Runs)]
        spread: Spread,
    },
    /// Join the output directories of sharded sweeps into one (data, report, plot).
    Merge {
        /// Shard output directories (each with report.json).
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        /// Output directory for the joined data.csv, report.json and plot.svg.
        #[arg(long)]
        out: PathBuf,
    },
    /// Regenerate the bundled experiments (all, or those named) into results/.
    Reproduce {
        /// Experiment names or prefixes (e.g. `sci-fairness`, `sci`); default: all.
        names: Vec<String>,
        /// Output directory: one folder per experiment and index.html.
        #[arg(long, default_value = "results")]
        out: PathBuf,
        /// Fewer points, replications and cycles: a smoke run in minutes.
        #[arg(long)]
        quick: bool,
        /// Directory holding the experiment files [default: ./experiments, else the source tree's].
        #[arg(long)]
        experiments: Option<PathBuf>,
        /// List the experiments and exit.
        #[arg(long)]
        list: bool,
        /// Worker threads (0 = all cores; at most 1024).
        #[arg(long, default_value_t = 0, value_parser = parse_threads)]
        threads: usize,
    },
    /// Simulation speed of each model (median of repeats; one core unless the workload says all cores).
    Bench {
        /// Targets (default: all; listed below).
        targets: Vec<String>,
        /// Timed runs per target; the median is reported (1 ..= 100).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=100))]
        repeats: u16,
        /// Print one JSON object per target instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// VIA benchmarks (pingpong, window) over the shm or tcp provider, on this machine.
    Via(via_cmd::ViaArgs),
    /// Broadcast schedules on a graph: worst/mean time over sources per model, bounds, optimum.
    Bcast(bcast_cmd::BcastArgs),
    /// Record a SimGrid time-independent trace of an MPI program (needs OpenMPI's mpicc).
    Trace(trace_cmd::TraceArgs),
    /// Validate an experiment file (every sweep point, --set values included) without running it.
    Check {
        #[command(flatten)]
        common: Common,
    },
    /// List a model's keys: default, allowed range (from its validation), unit and meaning.
    Keys {
        /// Model name, as in `model = "..."` (see `icnlab models`).
        model: String,
        /// Print the Markdown table that docs/<model>.md carries.
        #[arg(long)]
        markdown: bool,
    },
    /// List a model's output metrics and tables: name, unit and meaning.
    Metrics {
        /// Model name, as in `model = "..."` (see `icnlab models`).
        model: String,
        /// Print the Markdown table that docs/<model>.md carries.
        #[arg(long)]
        markdown: bool,
    },
    /// List the models an experiment file can name.
    Models,
    /// Saturation load of a configuration by bisection on `load` (with zero-load latency and
    /// knee), for each point of a sweep over other keys.
    Saturate {
        #[command(flatten)]
        common: Common,
        /// Resolution of the bisection, in load units (0, 0.25].
        #[arg(long, default_value_t = 0.01)]
        step: f64,
    },
    /// Translate another simulator's configuration into an icnlab experiment: `import booksim
    /// FILE [key=value ...]` (BookSim2 syntax and keys; keys icnlab does not model are refused
    /// by name). Prints the TOML, or writes it with --out; then `icnlab run` it.
    Import {
        /// The simulator the file is for.
        #[arg(value_parser = ["booksim"])]
        from: String,
        /// The configuration file.
        config: PathBuf,
        /// Command-line overrides in that simulator's syntax (BookSim2: `key=value`).
        overrides: Vec<String>,
        /// Write the experiment file here (atomically) instead of printing it.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run the translated experiment into this folder (as `icnlab run --out DIR`) and print
        /// BookSim2's statistic names beside icnlab's metrics.
        #[arg(long, value_name = "DIR", conflicts_with = "out")]
        run: Option<PathBuf>,
    },
}

/// What the ranks of an MPI job share out (`--spread`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Spread {
    /// Each rank runs its share of the replications, each network in one process.
    Runs,
    /// Every rank runs every replication together with the others, each network partitioned
    /// over the ranks (`threads` partitions per rank): for one network too big or too slow for
    /// one machine. Results are the same bit for bit.
    Network,
}

#[derive(Args)]
struct Common {
    /// Experiment file (TOML).
    config: PathBuf,
    /// Base seed (overrides the file's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Override any key: --set load=0.5 --set traffic.pattern=uniform
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Use the file's [quick] overrides.
    #[arg(long)]
    quick: bool,
    /// Worker threads (0 = all cores; at most 1024).
    #[arg(long, default_value_t = 0, value_parser = parse_threads)]
    threads: usize,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

impl Common {
    fn load(&self) -> Result<ExperimentFile, ExecError> {
        let mut file = ExperimentFile::load(&self.config, self.quick)?;
        file.apply_sets(&self.sets)?;
        if let Some(seed) = self.seed {
            file.seed = seed;
        }
        Ok(file)
    }

    fn opts(&self) -> ExecOptions {
        ExecOptions {
            threads: self.threads,
            progress: !self.quiet,
        }
    }

    fn default_out(&self) -> PathBuf {
        let stem = self
            .config
            .file_stem()
            .map_or("run".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from("out").join(stem)
    }
}

/// Most worker threads: more than any machine this runs on has cores, and few enough that the
/// pool's stacks (2 MiB each) fit in memory; `--threads 100000` used to try to start them all.
const MAX_THREADS: usize = 1024;

fn parse_threads(s: &str) -> Result<usize, String> {
    let n: usize = s
        .parse()
        .map_err(|_| format!("`{s}` is not a thread count (0 = all cores)"))?;
    if n > MAX_THREADS {
        return Err(format!("at most {MAX_THREADS} threads, got {n}"));
    }
    Ok(n)
}

/// `icnlab merge`: refuses incomplete or foreign shards (exit 2) before writing anything.
fn merge(shards: &[PathBuf], out: &std::path::Path) -> Result<(), ExecError> {
    let staging = outdir::Staging::begin(out)?;
    let merged = merge::join(shards).map_err(|e| ExecError::Usage(e.0))?;
    experiment::write_outputs(&merged, staging)?;
    println!(
        "merged {} points from {} shards into {}",
        merged.points.len(),
        shards.len(),
        out.display()
    );
    experiment::verdict(&merged, out)
}

/// Raises this process's soft limit on open files to its hard limit (where the hard limit is
/// "unlimited", to 2^20). A TI trace of up to 4 096 ranks holds one open file per rank while it
/// replays, and the usual soft limit of 1 024 failed an index of ~1 020 ranks that the hard
/// limit allowed. Best effort: a limit that cannot be raised stays, and the run says which
/// file it could not open.
fn raise_open_file_limit() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let now = getrlimit(Resource::Nofile);
    let target = now.maximum.unwrap_or(1 << 20);
    if now.current.is_some_and(|c| c < target) {
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(target),
                maximum: now.maximum,
            },
        );
    }
}

fn main() -> ExitCode {
    provenance::note_start();
    raise_open_file_limit();
    // `bench --help` lists the targets, which only the bench module knows.
    let targets: Vec<&str> = bench::targets().iter().map(|t| t.name).collect();
    let command = <Cli as clap::CommandFactory>::command().mut_subcommand("bench", |c| {
        c.after_help(format!(
            "Targets: {}\n\nOnly when named: booksim (booksim-mesh8, booksim-mesh32): the VC router's \
             CPU time per router-cycle against BookSim2's, runs interleaved ($BOOKSIM2, else \
             `booksim` on the PATH; without it icnlab's side only)",
            targets.join(", ")
        ))
    });
    let cli = match command
        .try_get_matches()
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        // Help and version go to stdout as clap writes them; errors echo what was typed.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            eprint!("{}", echo::escape_controls(&e.render().to_string()));
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    #[cfg(feature = "mpi")]
    if let Some(code) = across_ranks(&cli.command) {
        return code;
    }
    let result = match cli.command {
        Command::Run {
            common,
            out,
            timeline,
            timeline_events,
            ..
        } => common.load().and_then(|file| {
            if let Some(path) = &timeline {
                timeline::check_request(&file, path, timeline_events)?;
            }
            let out = out.unwrap_or_else(|| common.default_out());
            let report = experiment::run_file(&file, &out, &run_plan(&common))?;
            after_run(&file, &report, &out)?;
            match timeline {
                Some(path) => write_timeline(&file, &path, timeline_events),
                None => Ok(()),
            }
        }),
        Command::Sweep {
            common, out, shard, ..
        } => common.load().and_then(|file| {
            let out = out.unwrap_or_else(|| common.default_out());
            let report = experiment::run_file(&file, &out, &sweep_plan(&common, shard))?;
            after_sweep(&file, &report, &out)
        }),
        Command::Merge { shards, out } => merge(&shards, &out),
        Command::Reproduce {
            names,
            out,
            quick,
            experiments,
            list,
            threads,
        } => reproduce::reproduce(&reproduce::Request {
            names,
            out,
            quick,
            experiments,
            list,
            threads,
        }),
        Command::Bench {
            targets,
            repeats,
            json,
        } => bench::bench(&targets, repeats.into(), json),
        Command::Via(args) => via_cmd::run(&args).map_err(|e| {
            if e.downcast_ref::<via_run::BadWorkload>().is_some() {
                ExecError::Usage(format!("{e:#}"))
            } else {
                ExecError::Failed(format!("{e:#}"))
            }
        }),
        Command::Bcast(args) => bcast_cmd::run_cli(&args),
        Command::Trace(args) => trace_cmd::run(&args),
        Command::Check { common } => common.load().and_then(|file| {
            experiment::check_file(&file)?;
            println!(
                "{}: ok ({} points)",
                file.path.display(),
                file.point_count()
            );
            Ok(())
        }),
        Command::Keys { model, markdown } => keys::keys(&model, markdown),
        Command::Metrics { model, markdown } => metrics_cmd::metrics(&model, markdown),
        Command::Saturate { common, step } => common.load().and_then(|file| {
            for s in saturate::saturate(&file, step, common.opts())? {
                println!("{}", saturate::line(&s));
            }
            Ok(())
        }),
        Command::Import {
            config,
            overrides,
            run: Some(dir),
            ..
        } => import::booksim_run(&config, &overrides, &dir).and_then(|report| {
            print!("{}", import::booksim_statistics(&report));
            println!("wrote {}", dir.join("report.json").display());
            experiment::verdict(&report, &dir)
        }),
        Command::Import {
            config,
            overrides,
            out,
            ..
        } => import::booksim(&config, &overrides, out.as_ref()),
        Command::Models => {
            for r in models::all() {
                println!("{:10} {}", r.name(), r.about());
            }
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", echo::escape_controls(&e.to_string()));
            ExitCode::from(exit_code(&e))
        }
    }
}

/// 2: the input's fault (configuration, command line); 1: a run that failed; 3: every output
/// written, but a claim check failed.
fn exit_code(e: &ExecError) -> u8 {
    match e {
        ExecError::Config(_) | ExecError::Usage(_) => 2,
        ExecError::Failed(_) => 1,
        ExecError::CheckFailed(_) => checks::CHECK_FAILED,
    }
}

fn run_plan(common: &Common) -> Plan {
    Plan {
        sweep: false,
        shard: None,
        opts: common.opts(),
    }
}

fn sweep_plan(common: &Common, shard: Option<Shard>) -> Plan {
    Plan {
        sweep: true,
        shard,
        opts: common.opts(),
    }
}

/// What `run` prints once report.json is written (by this process or by MPI rank 0).
fn after_run(
    file: &ExperimentFile,
    report: &report::RunReport,
    out: &std::path::Path,
) -> Result<(), ExecError> {
    if !file.sweep.is_empty() {
        eprintln!(
            "note: {} has a [sweep]; `run` ran the base configuration (use `sweep` for all points)",
            file.path.display()
        );
    }
    print!("{}", report.summary());
    println!("wrote {}", out.join("report.json").display());
    experiment::verdict(report, out)
}

/// `run --timeline PATH`: the base configuration's timeline, as Chrome JSON or OTF2.
fn write_timeline(
    file: &ExperimentFile,
    path: &std::path::Path,
    cap: usize,
) -> Result<(), ExecError> {
    let t = timeline::record(file, timeline::Of::Base, cap)?;
    let written = if timeline::is_json(path) {
        timeline::write_chrome(&t, path)
    } else {
        timeline::write_otf2(&t, path)
    };
    written.map_err(|e| ExecError::Failed(format!("{}: {e:#}", path.display())))?;
    for n in t.notes() {
        eprintln!("note: {n}");
    }
    println!(
        "wrote {} ({} spans, {} channels)",
        path.display(),
        t.spans.len(),
        t.channels.len()
    );
    Ok(())
}

/// What `sweep` prints once its folder is written (by this process or by MPI rank 0).
fn after_sweep(
    _: &ExperimentFile,
    report: &report::RunReport,
    out: &std::path::Path,
) -> Result<(), ExecError> {
    print!("{}", report.summary());
    println!("wrote {}", out.display());
    experiment::verdict(report, out)
}

/// Under an MPI launcher with two ranks or more: `run` and `sweep` spread their replications
/// over the ranks (see [`mpi`]); other commands are refused, since every rank would do the
/// whole of it into the same files. `None`: not launched by MPI, or one rank — run as one
/// process.
#[cfg(feature = "mpi")]
fn across_ranks(command: &Command) -> Option<ExitCode> {
    use mpi::driver::Comm;
    let world = match mpi::world::World::start() {
        Ok(world) => world?,
        Err(e) => {
            eprintln!("error: cannot start MPI: {e}");
            return Some(ExitCode::from(1));
        }
    };
    let (file, out, plan, after, spread): (_, _, _, mpi::sweep::After, _) = match command {
        Command::Run {
            common,
            out,
            spread,
            ..
        } => (
            common.load(),
            out.clone().unwrap_or_else(|| common.default_out()),
            run_plan(common),
            after_run,
            *spread,
        ),
        Command::Sweep {
            common,
            out,
            shard,
            spread,
        } => (
            common.load(),
            out.clone().unwrap_or_else(|| common.default_out()),
            sweep_plan(common, *shard),
            after_sweep,
            *spread,
        ),
        _ => {
            if world.rank() == 0 {
                eprintln!(
                    "error: only `run` and `sweep` spread over MPI ranks; start other commands \
                     without mpirun or srun"
                );
            }
            return Some(ExitCode::from(2));
        }
    };
    let mut work = mpi::sweep::SweepWork::new(file, out, plan, after);
    if spread == Spread::Network {
        work = work.spreading_network(world.network());
    }
    let verdict = mpi::driver::drive(&world, &mut work);
    drop(world);
    Some(ExitCode::from(verdict.code))
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Issue 14: `bench`, `merge` and `reproduce` had flags without help text.
    #[test]
    fn every_flag_and_argument_has_help() {
        let cli = Cli::command();
        let mut missing = Vec::new();
        for sub in cli.get_subcommands() {
            for arg in sub.get_arguments() {
                if arg.is_hide_set() || ["help", "version"].contains(&arg.get_id().as_str()) {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{} {}", sub.get_name(), arg.get_id()));
                }
            }
        }
        assert!(missing.is_empty(), "without help: {missing:?}");
    }
}
