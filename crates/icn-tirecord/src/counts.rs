//! What a TI trace says about messages: per ordered pair of ranks, the point-to-point messages
//! and bytes sent (send, isend, sendrecv) and received (recv, irecv, sendrecv), the alltoallv
//! blocks, and the compute per rank. Only what the recorder writes is understood; sizes are
//! bytes (the recorder writes `init` without a datatype, so MPI_BYTE is the default).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

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
    /// Actions per name, all ranks.
    pub actions: BTreeMap<String, u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{file}:{line}: {what}")]
    Bad {
        file: PathBuf,
        line: usize,
        what: String,
    },
}

/// Reads a trace folder (its `index.txt` and the rank files it names, in rank order).
pub fn read_trace(dir: &Path) -> Result<Counts, TraceError> {
    let index = dir.join("index.txt");
    let text = std::fs::read_to_string(&index).map_err(|e| TraceError::Io(index.clone(), e))?;
    let files: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut c = Counts {
        ranks: files.len(),
        compute: vec![0.0; files.len()],
        ..Counts::default()
    };
    for (rank, name) in files.iter().enumerate() {
        let path = dir.join(name.trim());
        let f = std::fs::File::open(&path).map_err(|e| TraceError::Io(path.clone(), e))?;
        for (i, l) in BufReader::new(f).lines().enumerate() {
            let l = l.map_err(|e| TraceError::Io(path.clone(), e))?;
            let bad = |what: String| TraceError::Bad {
                file: path.clone(),
                line: i + 1,
                what,
            };
            action(&mut c, rank, &l).map_err(bad)?;
        }
    }
    Ok(c)
}

fn action(c: &mut Counts, rank: usize, line: &str) -> Result<(), String> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let Some((&who, rest)) = f.split_first() else {
        return Ok(());
    };
    if who.parse::<usize>().ok() != Some(rank) {
        return Err(format!("rank field `{who}` in the file of rank {rank}"));
    }
    let Some((&name, args)) = rest.split_first() else {
        return Err("no action".into());
    };
    *c.actions.entry(name.to_string()).or_default() += 1;
    let n = c.ranks;
    let int = |k: usize| -> Result<u64, String> {
        let s = args
            .get(k)
            .ok_or(format!("`{name}` needs argument {}", k + 1))?;
        s.parse::<u64>()
            .map_err(|_| format!("`{name}` argument {}: `{s}` is not a count", k + 1))
    };
    let peer = |k: usize| -> Result<usize, String> {
        let p = int(k)? as usize;
        if p < n {
            Ok(p)
        } else {
            Err(format!("rank {p}: the trace has {n}"))
        }
    };
    let add = |p: &mut Pairs, key, bytes| {
        let e = p.entry(key).or_default();
        e.0 += 1;
        e.1 += bytes;
    };
    match name {
        "send" | "isend" => add(&mut c.sent, (rank, peer(0)?), int(2)?),
        "recv" | "irecv" => add(&mut c.received, (peer(0)?, rank), int(2)?),
        "sendrecv" => {
            add(&mut c.sent, (rank, peer(1)?), int(0)?);
            add(&mut c.received, (peer(3)?, rank), int(2)?);
        }
        "alltoallv" => {
            if args.len() != 2 * n + 2 {
                return Err(format!(
                    "alltoallv has {} arguments, {} ranks need {}",
                    args.len(),
                    n,
                    2 * n + 2
                ));
            }
            for j in 0..n {
                c.alltoallv.insert((rank, j), int(1 + j)?);
            }
        }
        "compute" => {
            let s = args.first().ok_or("compute needs flops")?;
            c.compute[rank] += s.parse::<f64>().map_err(|_| format!("compute `{s}`"))?;
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(e.ends_with("t0.txt:2: rank 7: the trace has 1"), "{e}");
        let dir = trace("bad2", &["1 init\n"]);
        let e = read_trace(&dir).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).ok();
        assert!(e.contains("t0.txt:1: rank field `1`"), "{e}");
    }
}
