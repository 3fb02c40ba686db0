//! The protocol between the ranks of one `mpirun -np N icnlab sweep|run`, over any transport
//! ([`Comm`]: MPI in `--features mpi` builds, channels between threads in tests).
//!
//! Every rank goes through the same steps whatever happens to it, so no rank can be left
//! waiting in a send, receive or broadcast that another rank skipped:
//!
//! | step | every rank                                   | rank 0 in addition                             |
//! |------|----------------------------------------------|------------------------------------------------|
//! | 1    | prepare: load, check, take its share          | claim `--out` (staging folder)                 |
//! | 2    | send `Ready(fingerprint)` or `Failed`         | receive ranks 1..n in rank order               |
//! | 3    |                                              | [`decide_ready`]: any failure, or a rank on another experiment, → exit code |
//! | 4    | receive the code; ≠ 0: stop with it           | broadcast the code                             |
//! | 5    | run its share                                 |                                                |
//! | 6    | send `Ran(metrics)` or `Failed`               | receive ranks 1..n in rank order               |
//! | 7    |                                              | [`decide_ran`]: any failure → its code; else write the outputs (their error → its code); print the error |
//! | 8    | receive the code and exit with it             | broadcast the code                             |
//!
//! Rank 0 prints before it broadcasts: once another rank exits with a non-zero code, the
//! launcher may end the job, rank 0 included.
//!
//! A failure is a value, not an early return: an error, or a panic (caught), becomes a
//! `Failed` message and the rank carries on through the steps. A rank that dies (killed, out of
//! memory) is the launcher's business: `mpirun` and `srun` end the whole job when one process
//! exits without finalizing MPI.

use super::wire::{self, Failure, Message, Share};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The few operations the protocol needs. Ranks are 0..size; rank 0 is the root.
pub trait Comm {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Not on rank 0: sends `bytes` to rank 0.
    fn send_to_root(&self, bytes: &[u8]);
    /// On rank 0: the next message rank `from` sent.
    fn receive_from(&self, from: usize) -> Vec<u8>;
    /// Rank 0's `code` to every rank (on rank 0 it is left as it is).
    fn broadcast_code(&self, code: &mut u8);
}

/// What the ranks do: [`drive`] calls `prepare` and `run_share` on every rank and `finish` on
/// rank 0 only, when every rank succeeded.
pub trait Work {
    /// Returns the fingerprint of what this rank will run (must be equal on every rank).
    fn prepare(&mut self, rank: usize, size: usize) -> Result<String, Failure>;
    fn run_share(&mut self) -> Result<Share, Failure>;
    /// Rank 0: every rank's share, in rank order.
    fn finish(&mut self, shares: Vec<Share>) -> Result<(), Failure>;
    /// Rank 0: shows the job's error, before the other ranks learn the exit code.
    fn report(&mut self, error: &str);
}

/// How a rank ends: the exit code every rank shares, and on rank 0 the error it reported.
#[derive(Debug, PartialEq)]
pub struct Verdict {
    pub code: u8,
    pub error: Option<String>,
}

/// Exit code of a panic, as an uncaught one would have had.
const PANIC: u8 = 101;

fn guarded<T>(rank: usize, f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let why = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        Err(Failure::new(PANIC, format!("rank {rank} panicked: {why}")))
    })
}

/// Steps 2 and 6: rank 0 gets every rank's message (its own first), the others `None`.
fn gather(comm: &dyn Comm, mine: Message) -> Option<Vec<Result<Message, String>>> {
    if comm.rank() != 0 {
        comm.send_to_root(&wire::encode(&mine));
        return None;
    }
    let mut all = vec![Ok(mine)];
    all.extend((1..comm.size()).map(|r| wire::decode(&comm.receive_from(r))));
    Some(all)
}

/// Steps 4 and 8.
fn share_verdict(
    comm: &dyn Comm,
    work: &mut dyn Work,
    decided: Option<Result<(), Failure>>,
) -> Verdict {
    if let Some(Err(f)) = &decided {
        work.report(&f.message);
    }
    let mut code = match &decided {
        Some(Err(f)) => f.code.max(1),
        _ => 0,
    };
    comm.broadcast_code(&mut code);
    Verdict {
        code,
        error: match decided {
            Some(Err(f)) => Some(f.message),
            _ => None,
        },
    }
}

/// Runs `work` on this rank; every rank returns the same code.
pub fn drive(comm: &dyn Comm, work: &mut dyn Work) -> Verdict {
    let (rank, size) = (comm.rank(), comm.size());
    let ready = match guarded(rank, || work.prepare(rank, size)) {
        Ok(fingerprint) => Message::Ready { fingerprint },
        Err(f) => Message::Failed(f),
    };
    let decided = gather(comm, ready).map(|all| decide_ready(&all));
    let verdict = share_verdict(comm, work, decided);
    if verdict.code != 0 {
        return verdict;
    }
    let ran = match guarded(rank, || work.run_share()) {
        Ok(share) => Message::Ran(share),
        Err(f) => Message::Failed(f),
    };
    let decided = gather(comm, ran)
        .map(|all| decide_ran(all).and_then(|shares| guarded(rank, || work.finish(shares))));
    share_verdict(comm, work, decided)
}

/// One error from the failures of some ranks. When every rank failed the same way (a bad
/// file, which every rank reads), it is the one-process message unchanged; otherwise each
/// distinct message names its ranks. The code is the lowest failed rank's.
fn combine(failures: &[(usize, Failure)], size: usize) -> Failure {
    let first = &failures[0].1;
    if failures.len() == size && failures.iter().all(|(_, f)| f.message == first.message) {
        return first.clone();
    }
    let mut groups: Vec<(Vec<usize>, &str)> = Vec::new();
    for (rank, f) in failures {
        match groups.iter_mut().find(|(_, m)| *m == f.message) {
            Some((ranks, _)) => ranks.push(*rank),
            None => groups.push((vec![*rank], &f.message)),
        }
    }
    let lines: Vec<String> = groups
        .iter()
        .map(|(ranks, message)| {
            let names: Vec<String> = ranks.iter().map(usize::to_string).collect();
            let s = if ranks.len() == 1 { "" } else { "s" };
            format!("rank{s} {} of {size}: {message}", names.join(", "))
        })
        .collect();
    Failure::new(first.code, lines.join("\n"))
}

/// Splits messages into what was expected (`pick`) and failures per rank.
fn sort_out<T>(
    all: Vec<Result<Message, String>>,
    pick: impl Fn(Message) -> Result<T, Message>,
) -> (Vec<T>, Vec<(usize, Failure)>) {
    let mut good = Vec::new();
    let mut failures = Vec::new();
    for (rank, m) in all.into_iter().enumerate() {
        match m.map(&pick) {
            Ok(Ok(t)) => good.push(t),
            Ok(Err(Message::Failed(f))) => failures.push((rank, f)),
            Ok(Err(other)) => failures.push((
                rank,
                Failure::new(1, format!("sent {other:?} out of turn (a protocol error)")),
            )),
            Err(e) => failures.push((
                rank,
                Failure::new(
                    1,
                    format!("sent a message that does not decode ({e}); is the same icnlab installed on every node?"),
                ),
            )),
        }
    }
    (good, failures)
}

/// Step 3: every rank ready, and on the same experiment as rank 0.
pub fn decide_ready(all: &[Result<Message, String>]) -> Result<(), Failure> {
    let size = all.len();
    let (fingerprints, failures) = sort_out(all.to_vec(), |m| match m {
        Message::Ready { fingerprint } => Ok(fingerprint),
        other => Err(other),
    });
    if !failures.is_empty() {
        return Err(combine(&failures, size));
    }
    match fingerprints.iter().position(|f| *f != fingerprints[0]) {
        None => Ok(()),
        Some(rank) => Err(Failure::new(
            2,
            format!(
                "rank {rank} of {size} would run `{}` but rank 0 `{}`: every rank must run the \
                 same icnlab on the same file with the same --set, --seed, --quick and --shard",
                fingerprints[rank], fingerprints[0]
            ),
        )),
    }
}

/// Step 7, before writing: every rank's metrics, in rank order.
pub fn decide_ran(all: Vec<Result<Message, String>>) -> Result<Vec<Share>, Failure> {
    let size = all.len();
    let (shares, failures) = sort_out(all, |m| match m {
        Message::Ran(share) => Ok(share),
        other => Err(other),
    });
    if failures.is_empty() {
        Ok(shares)
    } else {
        Err(combine(&failures, size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi::local::world;
    use icn_engine::Metrics;
    use std::sync::Mutex;

    /// A scripted rank: fails or panics in a chosen step; records what it was asked to do.
    #[derive(Default)]
    struct Script {
        fingerprint: String,
        fail_prepare: Option<Failure>,
        fail_run: Option<Failure>,
        panic_run: bool,
        fail_finish: Option<Failure>,
        ran: bool,
        finished_with: Option<Vec<Share>>,
        reported: Option<String>,
    }

    fn metric(x: f64) -> Metrics {
        let mut m = Metrics::default();
        m.push("x", x, "", "");
        m
    }

    impl Work for Script {
        fn prepare(&mut self, _: usize, _: usize) -> Result<String, Failure> {
            match self.fail_prepare.clone() {
                Some(f) => Err(f),
                None => Ok(self.fingerprint.clone()),
            }
        }
        fn run_share(&mut self) -> Result<Share, Failure> {
            self.ran = true;
            if self.panic_run {
                panic!("scripted");
            }
            match self.fail_run.clone() {
                Some(f) => Err(f),
                None => Ok(Share {
                    threads: 1,
                    metrics: vec![metric(self.fingerprint.len() as f64)],
                }),
            }
        }
        fn finish(&mut self, shares: Vec<Share>) -> Result<(), Failure> {
            self.finished_with = Some(shares);
            match self.fail_finish.clone() {
                Some(f) => Err(f),
                None => Ok(()),
            }
        }
        fn report(&mut self, error: &str) {
            assert!(self.reported.is_none(), "one report per job");
            self.reported = Some(error.to_owned());
        }
    }

    /// Runs one scripted rank per thread over the in-memory world; returns verdicts and
    /// scripts in rank order. The test finishing at all is the no-hang check.
    fn play(scripts: Vec<Script>) -> Vec<(Verdict, Script)> {
        let comms = world(scripts.len());
        let out = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for (comm, mut script) in comms.into_iter().zip(scripts) {
                let out = &out;
                s.spawn(move || {
                    let v = drive(&comm, &mut script);
                    out.lock().unwrap().push((comm.rank(), v, script));
                });
            }
        });
        let mut all = out.into_inner().unwrap();
        all.sort_by_key(|(r, _, _)| *r);
        for (_, verdict, script) in &all {
            assert_eq!(
                verdict.error, script.reported,
                "what rank 0 reported, and only it"
            );
        }
        all.into_iter().map(|(_, v, s)| (v, s)).collect()
    }

    fn ranks(n: usize) -> Vec<Script> {
        (0..n)
            .map(|_| Script {
                fingerprint: "same".into(),
                ..Script::default()
            })
            .collect()
    }

    fn codes(played: &[(Verdict, Script)]) -> Vec<u8> {
        played.iter().map(|(v, _)| v.code).collect()
    }

    #[test]
    fn all_ready_all_ran_root_finishes_with_every_share_in_rank_order() {
        let played = play(ranks(3));
        assert_eq!(codes(&played), [0, 0, 0]);
        assert_eq!(played[0].1.finished_with.as_ref().map(Vec::len), Some(3));
        assert!(played[1..].iter().all(|(_, s)| s.finished_with.is_none()));
        assert!(played.iter().all(|(v, _)| v.error.is_none()));
    }

    #[test]
    fn a_rank_failing_to_prepare_stops_every_rank_before_running() {
        let mut scripts = ranks(3);
        scripts[2].fail_prepare = Some(Failure::new(2, "no such file"));
        let played = play(scripts);
        assert_eq!(codes(&played), [2, 2, 2]);
        assert!(played.iter().all(|(_, s)| !s.ran));
        assert_eq!(
            played[0].0.error.as_deref(),
            Some("rank 2 of 3: no such file")
        );
        assert!(played[1].0.error.is_none());
    }

    /// A bad file fails on every rank alike: the one-process message, not three copies.
    #[test]
    fn the_same_failure_everywhere_reads_as_one_process_would() {
        let mut scripts = ranks(3);
        for s in &mut scripts {
            s.fail_prepare = Some(Failure::new(2, "x.toml: unknown key"));
        }
        let played = play(scripts);
        assert_eq!(played[0].0.error.as_deref(), Some("x.toml: unknown key"));
    }

    #[test]
    fn a_rank_on_another_experiment_is_refused() {
        let mut scripts = ranks(2);
        scripts[1].fingerprint = "other".into();
        let played = play(scripts);
        assert_eq!(codes(&played), [2, 2]);
        assert!(
            played[0]
                .0
                .error
                .as_ref()
                .unwrap()
                .contains("rank 1 of 2 would run `other`")
        );
        assert!(played.iter().all(|(_, s)| !s.ran));
    }

    #[test]
    fn a_panic_while_running_reaches_every_rank_as_code_101() {
        let mut scripts = ranks(3);
        scripts[1].panic_run = true;
        let played = play(scripts);
        assert_eq!(codes(&played), [101, 101, 101]);
        assert_eq!(
            played[0].0.error.as_deref(),
            Some("rank 1 of 3: rank 1 panicked: scripted")
        );
        assert!(played[0].1.finished_with.is_none(), "nothing is written");
    }

    #[test]
    fn failures_on_several_ranks_are_grouped_and_the_lowest_rank_sets_the_code() {
        let mut scripts = ranks(4);
        scripts[1].fail_run = Some(Failure::new(1, "model failed"));
        scripts[2].fail_run = Some(Failure::new(2, "bad value"));
        scripts[3].fail_run = Some(Failure::new(1, "model failed"));
        let played = play(scripts);
        assert_eq!(codes(&played), [1, 1, 1, 1]);
        assert_eq!(
            played[0].0.error.as_deref(),
            Some("ranks 1, 3 of 4: model failed\nrank 2 of 4: bad value")
        );
    }

    #[test]
    fn rank_0_failing_to_write_reaches_every_rank() {
        let mut scripts = ranks(2);
        scripts[0].fail_finish = Some(Failure::new(1, "disk full"));
        let played = play(scripts);
        assert_eq!(codes(&played), [1, 1]);
        assert_eq!(played[0].0.error.as_deref(), Some("disk full"));
    }

    #[test]
    fn one_rank_is_a_world_too() {
        let played = play(ranks(1));
        assert_eq!(codes(&played), [0]);
        assert!(played[0].1.finished_with.is_some());
    }

    #[test]
    fn an_undecodable_or_out_of_turn_message_is_a_named_failure() {
        let all = vec![
            Ok(Message::Ready {
                fingerprint: "a".into(),
            }),
            Err("unexpected end".into()),
            Ok(Message::Ran(Share::default())),
        ];
        let f = decide_ready(&all).unwrap_err();
        assert_eq!(f.code, 1);
        assert!(
            f.message
                .contains("rank 1 of 3: sent a message that does not decode")
        );
        assert!(
            f.message
                .contains("rank 2 of 3: sent Ran(Share { threads: 0, metrics: [] }) out of turn")
        );
    }
}
