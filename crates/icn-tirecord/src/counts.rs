//! What a TI trace says about messages: per ordered pair of ranks, the point-to-point messages
//! and bytes sent (send, isend, sendrecv) and received (recv, irecv, sendrecv), the alltoallv
//! blocks, and the compute per rank. The trace is read by the cluster's TI reader
//! ([`icn_cluster::ti::reader`]), the one that replays it, so a trace this counts is one the
//! replay accepts, with the same sizes (datatypes applied) and the same errors.

use icn_cluster::ti::action::Action;
use icn_cluster::ti::action::CollKind;
use icn_cluster::ti::reader::{RankReader, TraceSet};
use std::collections::BTreeMap;
use std::path::Path;

pub use icn_cluster::ti::reader::TraceError;

/// Per (source, destination): messages and bytes.
pub type Pairs = BTreeMap<(usize, usize), (u64, u64)>;

/// What [`read_trace`] counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    pub ranks: usize,
    /// Point-to-point as the senders wrote it.
    pub sent: Pairs,
    /// Point-to-point as the receivers wrote it.
    pub received: Pairs,
    /// Alltoallv: bytes per (source, destination) block.
    pub alltoallv: BTreeMap<(usize, usize), u64>,
    /// Flops of `compute` per rank.
    pub compute: Vec<f64>,
    /// Actions per name, all ranks (`comm_size`, `comm_split` and `comm_dup` as `comm`).
    pub actions: BTreeMap<String, u64>,
}

/// Reads a trace (a folder with `index.txt`, an index file or a shared trace), rank by rank.
pub fn read_trace(path: &Path) -> Result<Counts, TraceError> {
    let set = TraceSet::locate(path)?;
    let n = set.ranks();
    let mut c = Counts {
        ranks: n,
        compute: vec![0.0; n],
        ..Counts::default()
    };
    for rank in 0..n {
        let mut r = RankReader::open(&set, rank)?;
        while let Some((_, a)) = r.next_action()? {
            count(&mut c, rank, a);
        }
    }
    Ok(c)
}

fn count(c: &mut Counts, rank: usize, a: Action) {
    let add = |p: &mut Pairs, key, bytes| {
        let e = p.entry(key).or_default();
        e.0 += 1;
        e.1 += bytes;
    };
    let name = match a {
        Action::Init { .. } => "init",
        Action::Finalize => "finalize",
        Action::Comm => "comm",
        Action::Send {
            peer,
            bytes,
            blocking,
            ..
        } => {
            add(&mut c.sent, (rank, peer), bytes);
            if blocking { "send" } else { "isend" }
        }
        Action::Recv {
            peer,
            bytes,
            blocking,
            ..
        } => {
            add(&mut c.received, (peer, rank), bytes);
            if blocking { "recv" } else { "irecv" }
        }
        Action::Test { .. } => "test",
        Action::Wait { .. } => "wait",
        Action::WaitAll => "waitall",
        Action::SendRecv {
            send,
            dst,
            recv,
            src,
        } => {
            add(&mut c.sent, (rank, dst), send);
            add(&mut c.received, (src, rank), recv);
            "sendrecv"
        }
        Action::Coll(coll) => {
            if coll.kind == CollKind::Alltoallv {
                for (j, &bytes) in coll.counts.iter().enumerate() {
                    c.alltoallv.insert((rank, j), bytes);
                }
            }
            coll.kind.name()
        }
        Action::Compute { flops } => {
            c.compute[rank] += flops;
            "compute"
        }
        Action::Sleep { .. } => "sleep",
        Action::Location => "location",
    };
    *c.actions.entry(name.to_string()).or_default() += 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::path::PathBuf;

    fn trace(name: &str, files: &[&str]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("icn-tirecord-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut index = String::new();
        for (r, text) in files.iter().enumerate() {
            std::fs::write(dir.join(format!("t{r}.txt")), text).unwrap();
            index.push_str(&format!("t{r}.txt\n"));
        }
        std::fs::write(dir.join("index.txt"), index).unwrap();
        dir
    }

    #[test]
    fn counts_pairs_on_both_sides() {
        let dir = trace(
            "ok",
            &[
                "0 init\n0 send 1 0 100\n0 isend 1 3 20\n0 sendrecv 5 1 7 1\n0 compute 1e3\n",
                "1 init\n1 recv 0 0 100\n1 irecv 0 3 20\n1 sendrecv 7 0 5 0\n1 alltoallv 3 1 2 3 1 2\n",
            ],
        );
        let c = read_trace(&dir).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(c.sent[&(0, 1)], (3, 125));
        assert_eq!(c.sent[&(1, 0)], (1, 7));
        assert_eq!(c.received[&(0, 1)], (3, 125));
        assert_eq!(c.received[&(1, 0)], (1, 7));
        assert_eq!(c.alltoallv[&(1, 0)], 1);
        assert_eq!(c.alltoallv[&(1, 1)], 2);
        assert_eq!(c.compute, [1e3, 0.0]);
    }

    #[test]
    fn errors_name_file_and_line() {
        let dir = trace("bad", &["0 init\n0 send 7 0 100\n"]);
        let e = read_trace(&dir).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).ok();
        // The replay's own reader and message: line 2, field 3 (the peer) of rank 0's file.
        assert!(
            e.ends_with("t0.txt:2: field 3 (peer): `7` is not an integer in 0 ..= 0"),
            "{e}"
        );
        let dir = trace("bad2", &["1 init\n"]);
        let e = read_trace(&dir).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            e.ends_with("t0.txt:1: field 1 (rank): `1` is not an integer in 0 ..= 0"),
            "{e}"
        );
    }
}
