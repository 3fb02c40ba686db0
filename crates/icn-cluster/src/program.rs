//! Message-level programs: per rank, a list of operations run in order.
//!
//! | op | meaning | the rank continues when |
//! |---|---|---|
//! | `send PEER BYTES TAG` | eager send: the NIC takes the message, the receiver buffers it if no receive is posted | the host part of the send is done (descriptor posted) |
//! | `ssend PEER BYTES TAG` | synchronous send | the matching receive has completed at the peer |
//! | `recv PEER BYTES TAG` | blocking receive of the next message from `PEER` with `TAG` (at most `BYTES`) | that message is complete in host memory |
//! | `compute NS` | local work | `NS` nanoseconds later |
//!
//! Messages between one pair with one tag match in the order they were sent (MPI's
//! non-overtaking rule). A receive whose message is longer than its `BYTES` is an error
//! (MPI's truncation error), reported with rank and op.
//!
//! ## Trace files
//!
//! One operation per line, `RANK OP ARGS`, `#` starts a comment, blank lines are skipped:
//!
//! ```text
//! # ranks 2        (optional header: the number of ranks; default: highest rank + 1)
//! 0 send 1 1024 7
//! 1 recv 0 1024 7
//! 1 compute 2500
//! 1 send 0 8 0
//! 0 recv 1 8 0
//! ```
//!
//! Every error names the file, the line and the field (`trace.txt:3: field 4 (bytes): ...`).

use icn_fabric::time::TimeSum;
use std::fmt;

/// Largest message a program may send: 1 GiB.
pub const MAX_BYTES: u64 = 1 << 30;
/// Largest compute step: 1000 s. The compute steps of all ranks together must also stay
/// within [`icn_fabric::time::SUM_LIMIT`] (106 days; 9 223 steps of 1000 s): a rank may wait
/// for every other rank's work, so only the total bounds its clock.
pub const MAX_COMPUTE_NS: u64 = 1_000_000_000_000;
/// Most ranks a program may have.
pub const MAX_RANKS: usize = 1 << 20;
/// Most operations a program may have in all (≈ 48 MB of operations).
pub const MAX_OPS: usize = 1 << 21;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Send { peer: usize, bytes: u64, tag: u32 },
    Ssend { peer: usize, bytes: u64, tag: u32 },
    Recv { peer: usize, bytes: u64, tag: u32 },
    Compute { ns: u64 },
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Op::Send { peer, bytes, tag } => write!(f, "send to {peer} ({bytes} B, tag {tag})"),
            Op::Ssend { peer, bytes, tag } => write!(f, "ssend to {peer} ({bytes} B, tag {tag})"),
            Op::Recv { peer, bytes, tag } => write!(f, "recv from {peer} (≤ {bytes} B, tag {tag})"),
            Op::Compute { ns } => write!(f, "compute {ns} ns"),
        }
    }
}

/// A program: `ranks[r]` is rank `r`'s operations in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    pub ranks: Vec<Vec<Op>>,
}

impl Program {
    pub fn new(ranks: usize) -> Program {
        Program {
            ranks: vec![Vec::new(); ranks],
        }
    }

    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    pub fn send(&mut self, from: usize, to: usize, bytes: u64, tag: u32) {
        self.ranks[from].push(Op::Send {
            peer: to,
            bytes,
            tag,
        });
    }

    pub fn recv(&mut self, at: usize, from: usize, bytes: u64, tag: u32) {
        self.ranks[at].push(Op::Recv {
            peer: from,
            bytes,
            tag,
        });
    }

    /// Total operations.
    pub fn ops(&self) -> usize {
        self.ranks.iter().map(Vec::len).sum()
    }

    /// Messages sent and bytes they carry.
    pub fn messages(&self) -> (u64, u64) {
        let mut count = 0;
        let mut bytes = 0;
        for op in self.ranks.iter().flatten() {
            if let Op::Send { bytes: b, .. } | Op::Ssend { bytes: b, .. } = op {
                count += 1;
                bytes += b;
            }
        }
        (count, bytes)
    }

    /// What rank `me` of a real run needs of the program: its own operations, and of every
    /// other rank only the operations naming `me` (its peers, and the sizes and counts of
    /// the messages it will receive). The rank count is kept, so ranks keep their numbers.
    pub fn view(&self, me: usize) -> Program {
        let ranks = self
            .ranks
            .iter()
            .enumerate()
            .map(|(r, ops)| {
                if r == me {
                    return ops.clone();
                }
                ops.iter()
                    .filter(|op| match **op {
                        Op::Send { peer, .. } | Op::Ssend { peer, .. } | Op::Recv { peer, .. } => {
                            peer == me
                        }
                        Op::Compute { .. } => false,
                    })
                    .copied()
                    .collect()
            })
            .collect();
        Program { ranks }
    }

    /// The program as a trace file ([`parse_trace`] reads it back equal), with its rank
    /// count in the header.
    pub fn to_trace(&self) -> String {
        use std::fmt::Write;
        let mut text = format!("# ranks {}\n", self.ranks.len());
        for (r, ops) in self.ranks.iter().enumerate() {
            for op in ops {
                let _ = match *op {
                    Op::Send { peer, bytes, tag } => {
                        writeln!(text, "{r} send {peer} {bytes} {tag}")
                    }
                    Op::Ssend { peer, bytes, tag } => {
                        writeln!(text, "{r} ssend {peer} {bytes} {tag}")
                    }
                    Op::Recv { peer, bytes, tag } => {
                        writeln!(text, "{r} recv {peer} {bytes} {tag}")
                    }
                    Op::Compute { ns } => writeln!(text, "{r} compute {ns}"),
                };
            }
        }
        text
    }

    /// Checks peers against the rank count and sizes against the limits.
    pub fn check(&self) -> Result<(), String> {
        if self.ranks.is_empty() || self.ranks.len() > MAX_RANKS {
            return Err(format!("1 ..= {MAX_RANKS} ranks, got {}", self.ranks.len()));
        }
        if self.ops() > MAX_OPS {
            return Err(format!("at most {MAX_OPS} operations, got {}", self.ops()));
        }
        let mut compute = TimeSum::default();
        for (r, ops) in self.ranks.iter().enumerate() {
            for (i, op) in ops.iter().enumerate() {
                let bad = |why: String| Err(format!("rank {r} op {i} ({op}): {why}"));
                match *op {
                    Op::Send { peer, bytes, .. }
                    | Op::Ssend { peer, bytes, .. }
                    | Op::Recv { peer, bytes, .. } => {
                        if peer >= self.ranks.len() {
                            return bad(format!("peer must be < {} ranks", self.ranks.len()));
                        }
                        if peer == r {
                            return bad("a rank cannot message itself".into());
                        }
                        if bytes > MAX_BYTES {
                            return bad(format!("at most {MAX_BYTES} bytes"));
                        }
                    }
                    Op::Compute { ns } if ns > MAX_COMPUTE_NS => {
                        return bad(format!("at most {MAX_COMPUTE_NS} ns"));
                    }
                    Op::Compute { ns } => {
                        if let Err(e) = compute.add_ns(ns) {
                            return bad(format!("the compute steps of all ranks add up to {e}"));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// A trace-file error: file, line and field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct TraceError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// Parses a trace (see the module documentation); `file` names it in errors.
pub fn parse_trace(text: &str, file: &str) -> Result<Program, TraceError> {
    let err = |line: usize, message: String| TraceError {
        file: file.to_owned(),
        line,
        message,
    };
    let mut declared: Option<usize> = None;
    let mut compute = TimeSum::default();
    let mut rows: Vec<(usize, usize, Op)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if let Some(rest) = raw.trim().strip_prefix('#') {
            let mut words = rest.split_whitespace();
            if words.next() == Some("ranks") {
                let n = words
                    .next()
                    .and_then(|w| w.parse::<usize>().ok())
                    .filter(|n| (1..=MAX_RANKS).contains(n))
                    .ok_or_else(|| err(line, format!("`# ranks N` needs 1 ..= {MAX_RANKS}")))?;
                declared = Some(n);
            }
            continue;
        }
        let body = raw.split('#').next().unwrap_or("");
        let fields: Vec<&str> = body.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let num = |k: usize, name: &str, max: u64| -> Result<u64, TraceError> {
            let f = fields
                .get(k)
                .ok_or_else(|| err(line, format!("field {} ({name}) is missing", k + 1)))?;
            f.parse::<u64>().ok().filter(|v| *v <= max).ok_or_else(|| {
                err(
                    line,
                    format!(
                        "field {} ({name}): `{f}` is not an integer in 0 ..= {max}",
                        k + 1
                    ),
                )
            })
        };
        let rank = num(0, "rank", MAX_RANKS as u64 - 1)? as usize;
        let op_name = fields
            .get(1)
            .ok_or_else(|| err(line, "field 2 (op) is missing".into()))?;
        let expect = if *op_name == "compute" { 3 } else { 5 };
        let op = match *op_name {
            "send" | "ssend" | "recv" => {
                let peer = num(2, "peer", MAX_RANKS as u64 - 1)? as usize;
                let bytes = num(3, "bytes", MAX_BYTES)?;
                let tag = num(4, "tag", u64::from(u32::MAX))? as u32;
                match *op_name {
                    "send" => Op::Send { peer, bytes, tag },
                    "ssend" => Op::Ssend { peer, bytes, tag },
                    _ => Op::Recv { peer, bytes, tag },
                }
            }
            "compute" => {
                let ns = num(2, "ns", MAX_COMPUTE_NS)?;
                compute.add_ns(ns).map_err(|e| {
                    err(
                        line,
                        format!(
                            "field 3 (ns): the compute steps of all ranks up to here add up to {e}"
                        ),
                    )
                })?;
                Op::Compute { ns }
            }
            other => {
                return Err(err(
                    line,
                    format!("field 2 (op): `{other}` is not send, ssend, recv or compute"),
                ));
            }
        };
        if fields.len() > expect {
            return Err(err(
                line,
                format!(
                    "field {}: unexpected `{}` ({op_name} takes {} fields)",
                    expect + 1,
                    fields[expect],
                    expect
                ),
            ));
        }
        if rows.len() >= MAX_OPS {
            return Err(err(line, format!("more than {MAX_OPS} operations")));
        }
        rows.push((line, rank, op));
    }
    let highest = rows.iter().map(|r| r.1).max();
    let ranks = match (declared, highest) {
        (Some(n), Some(h)) if h >= n => {
            let line = rows.iter().find(|r| r.1 >= n).map_or(0, |r| r.0);
            return Err(err(
                line,
                format!("field 1 (rank): {h} ≥ the declared `# ranks {n}`"),
            ));
        }
        (Some(n), _) => n,
        (None, Some(h)) => h + 1,
        (None, None) => return Err(err(0, "no operations".into())),
    };
    let mut p = Program::new(ranks);
    for &(line, rank, op) in &rows {
        if let Op::Send { peer, .. } | Op::Ssend { peer, .. } | Op::Recv { peer, .. } = op {
            if peer >= ranks {
                return Err(err(line, format!("field 3 (peer): {peer} ≥ {ranks} ranks")));
            }
            if peer == rank {
                return Err(err(
                    line,
                    "field 3 (peer): a rank cannot message itself".into(),
                ));
            }
        }
        p.ranks[rank].push(op);
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let p = parse_trace(
            "# ranks 2\n0 send 1 1024 7\n1 recv 0 1024 7\n1 compute 2500 # think\n\n1 send 0 8 0\n0 recv 1 8 0\n",
            "t",
        )
        .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            p.ranks[1],
            [
                Op::Recv {
                    peer: 0,
                    bytes: 1024,
                    tag: 7
                },
                Op::Compute { ns: 2500 },
                Op::Send {
                    peer: 0,
                    bytes: 8,
                    tag: 0
                }
            ]
        );
        assert_eq!(p.messages(), (2, 1032));
        p.check().unwrap();
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let e = |t: &str| parse_trace(t, "w.trace").unwrap_err().to_string();
        assert_eq!(
            e("0 send 1 x 0\n"),
            "w.trace:1: field 4 (bytes): `x` is not an integer in 0 ..= 1073741824"
        );
        assert!(e("0 send 1 10\n").starts_with("w.trace:1: field 5 (tag) is missing"));
        assert!(e("\n0 jump 1 1 1\n").starts_with("w.trace:2: field 2 (op)"));
        assert!(e("0 send 0 1 1\n").contains("cannot message itself"));
        assert!(e("# ranks 2\n0 send 5 1 1\n").starts_with("w.trace:2: field 3 (peer)"));
        assert!(e("0 compute 5 6\n").contains("unexpected `6`"));
        assert!(e("# nothing\n").contains("no operations"));
        assert!(e("0 send 1 2000000000 0\n").contains("field 4"));
    }

    #[test]
    fn compute_past_the_clock_is_refused_at_its_line() {
        // 18 447 steps of 1000 s wrapped the u64 ps clock (213 days came out as 0.384 ns).
        let step = "0 compute 1000000000000\n";
        let fits = (icn_fabric::time::SUM_LIMIT / 1_000_000_000_000_000) as usize;
        let text = format!("1 recv 0 0 0\n0 send 1 0 0\n{}", step.repeat(fits + 1));
        let e = parse_trace(&text, "long.trace").unwrap_err();
        assert_eq!(e.line, fits + 3);
        assert!(
            e.to_string().starts_with(&format!(
                "long.trace:{}: field 3 (ns): the compute steps",
                fits + 3
            )),
            "{e}"
        );
        let ok = format!("1 recv 0 0 0\n0 send 1 0 0\n{}", step.repeat(fits));
        let p = parse_trace(&ok, "ok.trace").unwrap();
        p.check().unwrap();
        // The same bound for a program built in code, named by rank and op.
        let mut built = p.clone();
        built.ranks[1].push(Op::Compute { ns: MAX_COMPUTE_NS });
        let e = built.check().unwrap_err();
        assert!(e.starts_with("rank 1 op 1 (compute"), "{e}");
    }

    proptest::proptest! {
        /// Any text: a program or an error naming the file, never a panic.
        #[test]
        fn any_text_parses_or_fails_cleanly(text in "([0-9]{1,3} (send|recv|ssend|compute|x) [0-9 ]{0,12}\n|#.*\n|\n){0,12}") {
            match parse_trace(&text, "f") {
                Ok(p) => { let _ = p.check(); }
                Err(e) => proptest::prop_assert!(e.to_string().starts_with("f:")),
            }
        }
    }
}
