//! `run` and `sweep` as [`Work`] for the ranks: each rank prepares the whole file and runs its
//! [`split::share`] of the replications; rank 0 claims `--out` first (so a bad folder stops the
//! job before anything runs), aggregates, and writes what the one-process command writes.
//!
//! With `--spread network` ([`SweepWork::spreading_network`]) every rank runs every
//! replication instead, one after another on its main thread, together with the other ranks:
//! each replication's network is partitioned over the ranks ([`icn_engine::lockstep`]), every
//! rank computes the same metrics, and rank 0 checks that they are the same before it writes
//! its own — the outputs of one process.

use super::driver::Work;
use super::split;
use super::wire::{Failure, Share};
use crate::exec::{ExecError, Job, Runner, all_jobs};
use crate::experiment::{self, Plan};
use crate::outdir::Staging;
use crate::report::RunReport;
use icn_engine::config::SweepPoint;
use icn_engine::lockstep::Exchange;
use icn_engine::{ExperimentFile, Metrics};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What rank 0 does with the written report: print it as the one-process command does and
/// turn flagged points into the exit code ([`experiment::verdict`]).
pub type After = fn(&ExperimentFile, &RunReport, &Path) -> Result<(), ExecError>;

pub struct SweepWork {
    /// This rank's reading of the experiment, until [`Work::prepare`] takes it.
    input: Option<Result<ExperimentFile, ExecError>>,
    out: PathBuf,
    plan: Plan,
    after: After,
    state: Option<Prepared>,
    /// `Some`: `--spread network` over these ranks; `None`: the replications are spread.
    network: Option<Arc<dyn Exchange>>,
}

struct Prepared {
    file: ExperimentFile,
    runner: &'static dyn Runner,
    points: Vec<SweepPoint>,
    all: Vec<Job>,
    size: usize,
    mine: Vec<Job>,
    /// Rank 0 only: the claimed output folder and the start of the clock.
    root: Option<(Staging, Instant)>,
}

/// A step called out of the driver's order: a bug, reported like any failure.
fn out_of_turn(what: &str) -> Failure {
    Failure::new(1, format!("{what} (a protocol error)"))
}

impl SweepWork {
    /// `file` is this rank's reading of the experiment (with `--set`, `--seed`, `--quick`).
    pub fn new(
        file: Result<ExperimentFile, ExecError>,
        out: PathBuf,
        plan: Plan,
        after: After,
    ) -> Self {
        SweepWork {
            input: Some(file),
            out,
            plan,
            after,
            state: None,
            network: None,
        }
    }

    /// Every rank runs every replication, its network spread over `ranks` (`--spread network`).
    pub fn spreading_network(mut self, ranks: Arc<dyn Exchange>) -> Self {
        self.network = Some(ranks);
        self
    }
}

/// The jobs of `all` whose metrics rank `rank` of `size` sends to rank 0.
fn reported(spread_network: bool, all: &[Job], rank: usize, size: usize) -> Vec<Job> {
    if spread_network {
        // Every rank runs and sends every job (rank 0 checks they agree).
        all.to_vec()
    } else {
        split::share(all, rank, size)
    }
}

impl Work for SweepWork {
    fn prepare(&mut self, rank: usize, size: usize) -> Result<String, Failure> {
        let file = self
            .input
            .take()
            .ok_or_else(|| out_of_turn("prepared twice"))??;
        // Progress of rank 0's share only: one bar per terminal.
        self.plan.opts.progress &= rank == 0;
        let (runner, points) = experiment::select(&file, &self.plan)?;
        if self.network.is_some() && !runner.spreads_network() {
            return Err(Failure::new(
                2,
                format!(
                    "model `{}` cannot spread one network over MPI ranks (--spread network: \
                     vc-router, xswitch, cluster); use --spread runs",
                    runner.name()
                ),
            ));
        }
        let all = all_jobs(points.len(), file.replications);
        let mine = reported(self.network.is_some(), &all, rank, size);
        let root = if rank == 0 {
            Some((Staging::begin(&self.out)?, Instant::now()))
        } else {
            None
        };
        let fingerprint = format!(
            "icnlab {} experiment {} {} shard {:?} spread {}",
            env!("CARGO_PKG_VERSION"),
            file.identity(),
            if self.plan.sweep { "sweep" } else { "run" },
            self.plan.shard.map(|s| (s.index, s.count)),
            if self.network.is_some() {
                "network"
            } else {
                "runs"
            },
        );
        self.state = Some(Prepared {
            file,
            runner,
            points,
            all,
            size,
            mine,
            root,
        });
        Ok(fingerprint)
    }

    fn run_share(&mut self) -> Result<Share, Failure> {
        let state = self
            .state
            .as_ref()
            .ok_or_else(|| out_of_turn("run before prepare"))?;
        let probe = experiment::first_run_probe(&state.file, &self.plan, &state.points);
        if let Some(ranks) = &self.network {
            let metrics = state.runner.run_jobs_over_ranks(
                &state.file,
                &state.points,
                &state.mine,
                ranks.clone(),
                self.plan.opts.progress,
                &probe,
            )?;
            // One replication at a time on each rank.
            return Ok(Share {
                threads: 1,
                metrics,
            });
        }
        let metrics = state.runner.run_jobs(
            &state.file,
            &state.points,
            &state.mine,
            self.plan.opts,
            &probe,
        )?;
        Ok(Share {
            threads: experiment::threads(&self.plan),
            metrics,
        })
    }

    fn finish(&mut self, shares: Vec<Share>) -> Result<(), Failure> {
        let state = self
            .state
            .as_mut()
            .ok_or_else(|| out_of_turn("finish before prepare"))?;
        let (staging, started) = state
            .root
            .take()
            .ok_or_else(|| out_of_turn("finish on a rank other than 0"))?;
        let expected: Vec<usize> = (0..state.size)
            .map(|r| reported(self.network.is_some(), &state.all, r, state.size).len())
            .collect();
        let got: Vec<usize> = shares.iter().map(|s| s.metrics.len()).collect();
        if got != expected {
            return Err(out_of_turn(&format!(
                "ranks sent {got:?} results, expected {expected:?}"
            )));
        }
        let threads = shares.iter().map(|s| s.threads).sum();
        let (jobs, metrics): (Vec<Job>, Vec<Metrics>) = if self.network.is_some() {
            (state.all.clone(), agreed_metrics(shares)?)
        } else {
            (
                split::shares_in_rank_order(&state.all, state.size),
                shares.into_iter().flat_map(|s| s.metrics).collect(),
            )
        };
        let file = &state.file;
        let results = state.runner.assemble(file, &state.points, &jobs, metrics)?;
        let elapsed = started.elapsed().as_secs_f64();
        // CPU time: this process's (rank 0's) since it started.
        let cpu = crate::provenance::cpu_time_s();
        let report = experiment::report(file, &self.plan, results, (elapsed, cpu), threads);
        experiment::write_outputs(&report, staging)?;
        Ok((self.after)(file, &report, &self.out)?)
    }

    fn report(&mut self, error: &str) {
        eprintln!("error: {}", crate::echo::escape_controls(error));
    }
}

/// `--spread network`: rank 0's metrics, once every rank's are found to be the same (every
/// rank ran the same replications of the same spread networks; a difference is a determinism
/// bug, reported rather than written). Compared as `{:?}` text: exact for every f64, NaN too.
fn agreed_metrics(shares: Vec<Share>) -> Result<Vec<Metrics>, Failure> {
    let mut shares = shares.into_iter();
    let root = shares.next().map(|s| s.metrics).unwrap_or_default();
    let text = |m: &[Metrics]| format!("{m:?}");
    let expected = text(&root);
    for (r, share) in shares.enumerate() {
        if text(&share.metrics) != expected {
            return Err(Failure::new(
                1,
                format!(
                    "rank {} computed other metrics than rank 0 for the same spread networks                      (a determinism bug)",
                    r + 1
                ),
            ));
        }
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::ExecOptions;
    use crate::mpi::driver::{Comm, drive};
    use crate::mpi::local::world;
    use std::fs;

    fn quiet(_: &ExperimentFile, _: &RunReport, _: &Path) -> Result<(), ExecError> {
        Ok(())
    }

    fn plan(sweep: bool) -> Plan {
        plan_on(sweep, 1)
    }

    fn plan_on(sweep: bool, threads: usize) -> Plan {
        Plan {
            sweep,
            shard: None,
            opts: ExecOptions {
                threads,
                progress: false,
            },
        }
    }

    /// A small stochastic sweep: 3 loads × 2 replications of the M/M/1 queue.
    const MM1: &str = r#"
model = "mm1"
title = "mm1 sweep"
seed = 7
replications = 2
customers = 2000
[sweep]
arrival_rate = [0.3, 0.6, 0.9]
[[plot]]
x = "arrival_rate"
y = ["sojourn_mean"]
"#;

    fn experiment(dir: &Path, text: &str) -> ExperimentFile {
        let path = dir.join("e.toml");
        fs::write(&path, text).unwrap();
        ExperimentFile::load(&path, false).unwrap()
    }

    /// Runs over `size` thread-ranks, returning rank 0's verdict code.
    fn over_ranks(size: usize, file: &ExperimentFile, out: &Path, sweep: bool) -> Vec<u8> {
        over_ranks_with(size, file, out, || plan(sweep))
    }

    fn over_ranks_with(
        size: usize,
        file: &ExperimentFile,
        out: &Path,
        plan: impl Fn() -> Plan + Sync,
    ) -> Vec<u8> {
        let comms = world(size);
        std::thread::scope(|s| {
            let handles: Vec<_> = comms
                .into_iter()
                .map(|comm| {
                    let file = file.clone();
                    let plan = &plan;
                    s.spawn(move || {
                        let mut w = SweepWork::new(Ok(file), out.into(), plan(), quiet);
                        drive(&comm, &mut w).code
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    fn without_wall_time(path: &Path) -> serde_json::Value {
        let mut v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("wall_time_s");
        v.as_object_mut().unwrap().remove("provenance");
        v
    }

    /// The one-process files, byte for byte (report.json up to its wall time), at 2 and 3
    /// ranks — 3 does not divide the 6 jobs evenly. The ranks run one thread each, the one
    /// process as many: report.json counts the threads of all ranks.
    #[test]
    fn ranks_write_what_one_process_writes() {
        let dir = tempfile::tempdir().unwrap();
        let file = experiment(dir.path(), MM1);
        for size in [2, 3] {
            let one = dir.path().join(format!("one{size}"));
            experiment::run_file(&file, &one, &plan_on(true, size)).unwrap();
            let out = dir.path().join(format!("np{size}"));
            assert_eq!(over_ranks(size, &file, &out, true), vec![0; size]);
            for name in ["data.csv", "plot.svg"] {
                assert_eq!(
                    fs::read(one.join(name)).unwrap(),
                    fs::read(out.join(name)).unwrap(),
                    "{name} at {size} ranks"
                );
            }
            assert_eq!(
                without_wall_time(&one.join("report.json")),
                without_wall_time(&out.join("report.json"))
            );
        }
    }

    #[test]
    fn run_spreads_replications_and_matches_one_process() {
        let dir = tempfile::tempdir().unwrap();
        let file = experiment(
            dir.path(),
            "model = \"mm1\"\nseed = 3\nreplications = 5\ncustomers = 1000\n",
        );
        let one = dir.path().join("one");
        experiment::run_file(&file, &one, &plan(false)).unwrap();
        let two = dir.path().join("two");
        assert_eq!(over_ranks(2, &file, &two, false), [0, 0]);
        assert_eq!(
            fs::read(one.join("data.csv")).unwrap(),
            fs::read(two.join("data.csv")).unwrap()
        );
    }

    /// More ranks than jobs: the idle ranks send empty shares.
    #[test]
    fn more_ranks_than_jobs() {
        let dir = tempfile::tempdir().unwrap();
        let file = experiment(
            dir.path(),
            "model = \"mm1\"\nseed = 3\nreplications = 2\ncustomers = 1000\n",
        );
        let one = dir.path().join("one");
        experiment::run_file(&file, &one, &plan(false)).unwrap();
        let five = dir.path().join("five");
        assert_eq!(over_ranks(5, &file, &five, false), [0; 5]);
        assert_eq!(
            fs::read(one.join("data.csv")).unwrap(),
            fs::read(five.join("data.csv")).unwrap()
        );
    }

    /// `--shard 1/2` over 2 ranks: the shard's points, split again; `merge` sees a shard.
    #[test]
    fn a_shard_over_ranks_is_the_same_shard() {
        let dir = tempfile::tempdir().unwrap();
        let file = experiment(dir.path(), MM1);
        let sharded = || Plan {
            shard: Some(experiment::Shard { index: 1, count: 2 }),
            ..plan_on(true, 2)
        };
        let one = dir.path().join("one");
        experiment::run_file(&file, &one, &sharded()).unwrap();
        let two = dir.path().join("two");
        let per_rank = || Plan {
            shard: Some(experiment::Shard { index: 1, count: 2 }),
            ..plan_on(true, 1)
        };
        assert_eq!(over_ranks_with(2, &file, &two, per_rank), [0, 0]);
        assert_eq!(
            without_wall_time(&one.join("report.json")),
            without_wall_time(&two.join("report.json"))
        );
        assert_eq!(
            fs::read(one.join("data.csv")).unwrap(),
            fs::read(two.join("data.csv")).unwrap()
        );
    }

    /// `--out` naming a file: rank 0 refuses in step 1, every rank exits 2 and nothing runs.
    #[test]
    fn a_bad_out_folder_on_rank_0_stops_every_rank() {
        let dir = tempfile::tempdir().unwrap();
        let file = experiment(dir.path(), MM1);
        let not_a_dir = dir.path().join("file");
        fs::write(&not_a_dir, "x").unwrap();
        assert_eq!(over_ranks(2, &file, &not_a_dir, true), [2, 2]);
    }

    /// A rank whose reading of the file failed reports through the protocol.
    #[test]
    fn a_rank_without_its_file_stops_every_rank_with_code_2() {
        let dir = tempfile::tempdir().unwrap();
        let file = experiment(dir.path(), MM1);
        let out = dir.path().join("out");
        let comms = world(2);
        let codes: Vec<u8> = std::thread::scope(|s| {
            let handles: Vec<_> = comms
                .into_iter()
                .map(|comm| {
                    let file = if comm.rank() == 1 {
                        Err(ExecError::Usage("cannot read e.toml".into()))
                    } else {
                        Ok(file.clone())
                    };
                    let out = out.clone();
                    s.spawn(move || {
                        let mut w = SweepWork::new(file, out, plan(true), quiet);
                        drive(&comm, &mut w).code
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(codes, [2, 2]);
        assert!(!out.exists(), "rank 0 released the folder it had claimed");
    }

    /// A small vc-router sweep: 2 loads × 2 replications of a 4×4 mesh, 2 threads per rank.
    const VC: &str = r#"
model = "vc-router"
title = "vc spread"
seed = 5
replications = 2
topology = "mesh:4x4"
threads = 2
warmup = 100
measure = 400
drain = 1000
[sweep]
load = [0.1, 0.4]
[[plot]]
x = "load"
y = ["latency_mean"]
"#;

    /// `--spread network` over `size` thread-ranks (each also a rank of the network).
    fn network_over_ranks(size: usize, file: &ExperimentFile, out: &Path) -> Vec<u8> {
        let comms = world(size);
        let nets = icn_engine::lockstep::ThreadRanks::new(size);
        std::thread::scope(|s| {
            let handles: Vec<_> = comms
                .into_iter()
                .zip(nets)
                .map(|(comm, net)| {
                    let file = file.clone();
                    s.spawn(move || {
                        let mut w = SweepWork::new(Ok(file), out.into(), plan(true), quiet)
                            .spreading_network(Arc::new(net));
                        drive(&comm, &mut w).code
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    /// `--spread network` at 2 and 3 ranks writes the one-process files byte for byte
    /// (report.json up to its wall time and thread count).
    #[test]
    fn a_network_spread_over_ranks_writes_what_one_process_writes() {
        let dir = tempfile::tempdir().unwrap();
        let file = experiment(dir.path(), VC);
        let one = dir.path().join("one");
        experiment::run_file(&file, &one, &plan(true)).unwrap();
        for size in [2, 3] {
            let out = dir.path().join(format!("np{size}"));
            assert_eq!(network_over_ranks(size, &file, &out), vec![0; size]);
            for name in ["data.csv", "plot.svg"] {
                assert_eq!(
                    fs::read(one.join(name)).unwrap(),
                    fs::read(out.join(name)).unwrap(),
                    "{name} at {size} ranks"
                );
            }
            let strip = |p: &Path| {
                let mut v = without_wall_time(p);
                v.as_object_mut().unwrap().remove("threads");
                v
            };
            assert_eq!(
                strip(&one.join("report.json")),
                strip(&out.join("report.json"))
            );
        }
    }

    /// A model that cannot spread its network: exit 2 on every rank, nothing written.
    #[test]
    fn a_model_without_a_network_to_spread_stops_every_rank_with_code_2() {
        let dir = tempfile::tempdir().unwrap();
        let file = experiment(dir.path(), MM1);
        let out = dir.path().join("out");
        assert_eq!(network_over_ranks(2, &file, &out), [2, 2]);
        assert!(!out.exists());
    }

    /// More partitions than routers over the ranks (3 ranks × 8 threads > 16 routers): the
    /// points are refused when prepared, exit 2 on every rank.
    #[test]
    fn too_many_partitions_over_the_ranks_stop_every_rank_with_code_2() {
        let dir = tempfile::tempdir().unwrap();
        let file = experiment(dir.path(), &VC.replace("threads = 2", "threads = 8"));
        let out = dir.path().join("out");
        assert_eq!(network_over_ranks(3, &file, &out), [2, 2, 2]);
    }
}
