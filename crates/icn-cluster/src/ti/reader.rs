//! Finding a trace's files and streaming them: one open file and one line in memory per
//! rank, whatever the trace's length.
//!
//! `workload.file` names either
//! * an **index** (SimGrid's `smpirun -trace-ti` output): one file per line, in rank order,
//!   relative to the index's folder; or a folder holding `index.txt`;
//! * a **shared trace**: every rank's lines in one file (SimGrid's examples), told apart by
//!   its first line, which is an action (`0 init`).
//!
//! Lines are `<rank> <action> <args…>`; blank lines and lines starting with `#` are skipped.
//! Every error names `file:line: field K`.

use super::action::{self, Action, printable_prefix};
use super::datatype;
use super::dumpi::DumpiRank;
use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most ranks a trace may have (each holds an open file while it replays).
pub const MAX_RANKS: usize = 4096;
/// Longest line: 4 MiB (an `alltoallv` of 4096 ranks is ≈ 100 KiB).
pub const MAX_LINE: u64 = 4 << 20;
/// Largest index file.
pub const MAX_INDEX: u64 = 16 << 20;

/// A trace error: file, line (0: the file as a whole), field (0: the line as a whole).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct TraceError {
    pub file: String,
    pub line: usize,
    pub field: usize,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.field) {
            (0, _) => write!(f, "{}: {}", self.file, self.message),
            (l, 0) => write!(f, "{}:{l}: {}", self.file, self.message),
            (l, k) => write!(f, "{}:{l}: field {k} {}", self.file, self.message),
        }
    }
}

fn whole(file: &Path, message: impl Into<String>) -> TraceError {
    TraceError {
        file: file.display().to_string(),
        line: 0,
        field: 0,
        message: message.into(),
    }
}

/// Where each rank's actions are.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSet {
    /// Per rank, its file (all the same file for a shared trace).
    pub files: Vec<PathBuf>,
    pub shared: bool,
    pub format: Format,
}

/// How the files are written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Format {
    /// SimGrid TI text.
    Ti,
    /// DUMPI binary ([`super::dumpi`]), its compute time turned into flops at `host_flops`.
    Dumpi { host_flops: f64 },
}

impl TraceSet {
    pub fn ranks(&self) -> usize {
        self.files.len()
    }

    /// Finds the files of the trace at `path` (an index, a folder with `index.txt`, or a
    /// shared trace; a shared trace's rank count is its highest rank + 1, read here).
    pub fn locate(path: &Path) -> Result<TraceSet, TraceError> {
        let path = if path.is_dir() {
            path.join("index.txt")
        } else {
            path.to_path_buf()
        };
        let head = {
            let f = icn_engine::input::open(&path)
                .map_err(|e| whole(&path, format!("cannot read: {e}")))?;
            let mut r = Lines::new(BufReader::new(f), &path);
            r.next_words()?.map(|(_, w)| w)
        };
        let Some(first) = head else {
            return Err(whole(&path, "is empty: no actions and no trace files"));
        };
        // An index lists file names, one per line; a first line `<integer> <word> …` is a
        // trace's (its action may still be wrong: the pre-scan says so, naming the field).
        let is_action = first.len() >= 2 && first[0].parse::<u64>().is_ok();
        if is_action {
            let f = icn_engine::input::open(&path)
                .map_err(|e| whole(&path, format!("cannot read: {e}")))?;
            let mut r = Lines::new(BufReader::new(f), &path);
            let mut highest = 0;
            while let Some((line, w)) = r.next_words()? {
                let rank = rank_field(&w[0], MAX_RANKS).map_err(|m| r.error(line, 1, m))?;
                highest = highest.max(rank);
            }
            return Ok(TraceSet {
                files: vec![path; highest + 1],
                shared: true,
                format: Format::Ti,
            });
        }
        let text = icn_engine::input::read_at_most(&path, MAX_INDEX)
            .map_err(|e| whole(&path, format!("cannot read the index: {e}")))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut files = Vec::new();
        for (i, l) in text.lines().enumerate() {
            let l = l.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            if files.len() == MAX_RANKS {
                return Err(TraceError {
                    file: path.display().to_string(),
                    line: i + 1,
                    field: 0,
                    message: format!("more than {MAX_RANKS} trace files"),
                });
            }
            let file = dir.join(l);
            if !file.is_file() {
                // Until one line names a trace file this is not known to be an index: it may
                // be any file named by mistake (a password file, say), whose content an error
                // must not show. Once it is, a short printable prefix of the name helps.
                let message = if files.is_empty() {
                    "is neither a TI trace (its first line is not `<rank> <action> …`) nor an \
                     index of trace files (its first entry names no readable file)"
                        .to_string()
                } else {
                    format!(
                        "the trace of rank {}, `{}`, is not a readable file",
                        files.len(),
                        printable_prefix(l, 80)
                    )
                };
                return Err(TraceError {
                    file: path.display().to_string(),
                    line: if files.is_empty() { 0 } else { i + 1 },
                    field: 0,
                    message,
                });
            }
            files.push(file);
        }
        Ok(TraceSet {
            files,
            shared: false,
            format: Format::Ti,
        })
    }

    /// The DUMPI trace whose `.meta` file is at `meta`, its compute at `host_flops`.
    pub fn locate_dumpi(meta: &Path, host_flops: f64) -> Result<TraceSet, TraceError> {
        Ok(TraceSet {
            files: super::dumpi::locate(meta)?,
            shared: false,
            format: Format::Dumpi { host_flops },
        })
    }
}

fn rank_field(w: &str, n: usize) -> Result<usize, String> {
    w.parse::<usize>().ok().filter(|r| *r < n).ok_or_else(|| {
        format!(
            "(rank): `{}` is not an integer in 0 ..= {}",
            printable_prefix(w, 40),
            n - 1
        )
    })
}

/// A line buffer that grew past this is freed before the next line: the one long line (up
/// to [`MAX_LINE`]) of a rank costs its memory while it is parsed, not for the rest of the run
/// (4 096 ranks each keeping a 4 MiB `alltoallv` line would hold 16 GiB).
const KEEP_LINE_BUFFER: usize = 64 << 10;

/// Bounded line reading with line numbers.
struct Lines {
    input: BufReader<File>,
    path: Arc<str>,
    line: usize,
    buf: Vec<u8>,
    /// Each line starts with its line number in `path` (a rank's part of a shared trace,
    /// [`split_shared`]).
    numbered: bool,
    /// Lines read so far, blank and comment lines included.
    read: u64,
}

impl Lines {
    fn new(input: BufReader<File>, path: &Path) -> Lines {
        Lines {
            input,
            path: path.display().to_string().into(),
            line: 0,
            buf: Vec::new(),
            numbered: false,
            read: 0,
        }
    }

    fn error(&self, line: usize, field: usize, message: String) -> TraceError {
        TraceError {
            file: self.path.to_string(),
            line,
            field,
            message,
        }
    }

    /// The next line with words, as owned words (the line number with it).
    fn next_words(&mut self) -> Result<Option<(usize, Vec<String>)>, TraceError> {
        let numbered = self.numbered;
        let Some((line, text)) = self.next_line()? else {
            return Ok(None);
        };
        let mut words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
        if !numbered {
            return Ok(Some((line, words)));
        }
        match words.first().and_then(|w| w.parse().ok()) {
            Some(number) => {
                words.remove(0);
                Ok(Some((number, words)))
            }
            None => Err(self.error(line, 0, "a split trace line lost its number".into())),
        }
    }

    /// The next line with words, trimmed (the line number with it).
    fn next_line(&mut self) -> Result<Option<(usize, &str)>, TraceError> {
        if self.buf.capacity() > KEEP_LINE_BUFFER {
            self.buf = Vec::new();
        }
        loop {
            self.buf.clear();
            self.line += 1;
            let read = (&mut self.input)
                .take(MAX_LINE + 1)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| self.error(self.line, 0, format!("cannot read: {e}")))?;
            if read == 0 {
                return Ok(None);
            }
            self.read += 1;
            if self.buf.len() as u64 > MAX_LINE {
                return Err(self.error(self.line, 0, format!("longer than {MAX_LINE} bytes")));
            }
            let text = std::str::from_utf8(&self.buf).map_err(|e| {
                self.error(
                    self.line,
                    0,
                    format!("not UTF-8 (byte {})", e.valid_up_to() + 1),
                )
            })?;
            let t = text.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let line = self.line;
            // Re-borrowed here so that the loop's `continue` does not hold the buffer.
            let t = std::str::from_utf8(&self.buf).expect("checked").trim();
            return Ok(Some((line, t)));
        }
    }
}

/// Splits the shared trace at `path` of `n` ranks by rank in one pass: each rank's lines,
/// each after its line number in `path`, go to an anonymous temporary file of that rank
/// (private to this user, removed when closed). Each rank then reads its own lines only:
/// O(lines) for the whole trace where every rank reading the whole file took O(ranks ×
/// lines) (256 ranks × 1 000 lines: 7.4 s against 0.2 s for the same trace as an index),
/// with one bounded line in memory at a time.
fn split_shared(path: &Path, n: usize) -> Result<Vec<Lines>, TraceError> {
    let f = icn_engine::input::open(path).map_err(|e| whole(path, format!("cannot read: {e}")))?;
    let mut lines = Lines::new(BufReader::new(f), path);
    let spill = |e: std::io::Error| {
        whole(
            path,
            format!("cannot split the shared trace by rank into temporary files: {e}"),
        )
    };
    let mut parts = (0..n)
        .map(|_| tempfile::tempfile().map(|f| BufWriter::with_capacity(4 << 10, f)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(spill)?;
    while let Some((line, text)) = lines.next_line()? {
        let first = text.split_whitespace().next().unwrap_or("");
        let rank = match rank_field(first, n) {
            Ok(rank) => rank,
            Err(m) => return Err(lines.error(line, 1, m)),
        };
        writeln!(parts[rank], "{line} {text}").map_err(spill)?;
    }
    parts
        .into_iter()
        .map(|w| {
            let mut f = w.into_inner().map_err(|e| spill(e.into_error()))?;
            f.seek(SeekFrom::Start(0)).map_err(spill)?;
            let mut l = Lines::new(BufReader::with_capacity(16 << 10, f), path);
            l.numbered = true;
            Ok(l)
        })
        .collect()
}

/// One rank's actions, read as they are needed.
pub struct RankReader {
    source: Source,
    rank: usize,
    n: usize,
    shared: bool,
    default_dt: u64,
}

enum Source {
    Text(Lines),
    Dumpi(Box<DumpiRank>),
}

impl RankReader {
    /// Every rank's reader: a shared trace is read once and split by rank
    /// ([`split_shared`]), an index's files are opened.
    pub fn open_all(set: &TraceSet) -> Result<Vec<RankReader>, TraceError> {
        if !set.shared {
            return (0..set.ranks()).map(|r| RankReader::open(set, r)).collect();
        }
        let n = set.ranks();
        Ok(split_shared(&set.files[0], n)?
            .into_iter()
            .enumerate()
            .map(|(rank, lines)| RankReader {
                source: Source::Text(lines),
                rank,
                n,
                shared: true,
                default_dt: datatype::BYTE,
            })
            .collect())
    }

    /// Lines this reader has read (blank and comment lines included): its share of the
    /// trace, or all of it when it reads a shared trace itself ([`RankReader::open`]).
    pub fn lines_read(&self) -> u64 {
        match &self.source {
            Source::Text(l) => l.read,
            Source::Dumpi(_) => 0,
        }
    }

    /// Bytes its line buffer holds now (one line's worth at most, [`KEEP_LINE_BUFFER`]
    /// between lines).
    pub fn buffer_bytes(&self) -> usize {
        match &self.source {
            Source::Text(l) => l.buf.capacity(),
            Source::Dumpi(_) => 0,
        }
    }

    /// The calls of a DUMPI trace this reader has stepped over without replaying, by name.
    pub fn skipped(&self) -> Option<&BTreeMap<&'static str, u64>> {
        match &self.source {
            Source::Text(_) => None,
            Source::Dumpi(d) => Some(&d.skipped),
        }
    }

    fn error(&self, line: usize, field: usize, message: String) -> TraceError {
        match &self.source {
            Source::Text(l) => l.error(line, field, message),
            Source::Dumpi(d) => TraceError {
                file: d.path().to_owned(),
                line: 0,
                field: 0,
                message: format!("record {line}: {message}"),
            },
        }
    }

    /// Rank `rank`'s reader on its own file (an index), or on the whole shared trace,
    /// skipping the other ranks' lines ([`RankReader::open_all`] reads it once for all).
    pub fn open(set: &TraceSet, rank: usize) -> Result<RankReader, TraceError> {
        let path = &set.files[rank];
        if let Format::Dumpi { host_flops } = set.format {
            return Ok(RankReader {
                source: Source::Dumpi(Box::new(DumpiRank::open(
                    path,
                    rank,
                    set.ranks(),
                    host_flops,
                )?)),
                rank,
                n: set.ranks(),
                shared: false,
                default_dt: datatype::BYTE,
            });
        }
        let f = icn_engine::input::open(path)
            .map_err(|e| whole(path, format!("cannot read the trace of rank {rank}: {e}")))?;
        Ok(RankReader {
            source: Source::Text(Lines::new(BufReader::with_capacity(16 << 10, f), path)),
            rank,
            n: set.ranks(),
            shared: set.shared,
            default_dt: datatype::BYTE,
        })
    }

    pub fn path(&self) -> &str {
        match &self.source {
            Source::Text(l) => &l.path,
            Source::Dumpi(d) => d.path(),
        }
    }

    /// The next action of this rank and its line (a DUMPI trace: its record), `None` at
    /// the end.
    pub fn next_action(&mut self) -> Result<Option<(usize, Action)>, TraceError> {
        let lines = match &mut self.source {
            Source::Text(l) => l,
            Source::Dumpi(d) => return d.next_action(),
        };
        while let Some((line, w)) = lines.next_words()? {
            let rank = rank_field(&w[0], self.n).map_err(|m| lines.error(line, 1, m))?;
            if rank != self.rank {
                if self.shared {
                    continue;
                }
                return Err(lines.error(
                    line,
                    1,
                    format!("(rank): `{rank}` in the trace file of rank {}", self.rank),
                ));
            }
            let words: Vec<&str> = w.iter().map(String::as_str).collect();
            let a = action::parse(&words, self.n, self.default_dt)
                .map_err(|e| lines.error(line, e.field, e.message))?;
            if let Action::Init { double_default } = a {
                self.default_dt = if double_default {
                    datatype::DOUBLE
                } else {
                    datatype::BYTE
                };
            }
            return Ok(Some((line, a)));
        }
        Ok(None)
    }
}

/// What the pre-scan found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Actions per rank.
    pub actions: Vec<u64>,
    /// Collectives the trace calls.
    pub collectives: Vec<action::CollKind>,
    /// MPI calls of a DUMPI trace that are not replayed, by name, counted over all ranks.
    pub skipped: BTreeMap<String, u64>,
}

/// The most host time (compute, sleep, reductions) one rank's trace may add up to: half
/// the simulated clock (2^64 ps ≈ 213 days), the other half left to its messages.
pub const MAX_HOST_PS: f64 = (1u64 << 63) as f64;

/// Reads every line of every rank and checks it, before anything runs: the first
/// malformed or unsupported line is the error, and so is the line where a rank's host
/// time at `host_flops` passes [`MAX_HOST_PS`]. A shared trace is read once.
pub fn prescan(set: &TraceSet, host_flops: f64) -> Result<Summary, TraceError> {
    let n = set.ranks();
    let mut s = Summary {
        actions: vec![0; n],
        collectives: Vec::new(),
        skipped: BTreeMap::new(),
    };
    let mut host_ps = vec![0.0f64; n];
    // `Err` with the message for the line when rank `r`'s host time passes the bound.
    let mut note = |s: &mut Summary, r: usize, a: &Action| -> Result<(), String> {
        s.actions[r] += 1;
        let secs = match a {
            Action::Compute { flops } => flops / host_flops,
            Action::Sleep { seconds } => *seconds,
            Action::Coll(c) => c.flops / host_flops,
            _ => 0.0,
        };
        host_ps[r] += secs * 1e12;
        if host_ps[r] > MAX_HOST_PS {
            return Err(format!(
                "rank {r}'s compute and sleep reach {:.4e} s here (at host.flops = {host_flops:e}): \
                 more than the simulated clock leaves them ({:.4e} s, half of 2^64 ps)",
                host_ps[r] / 1e12,
                MAX_HOST_PS / 1e12
            ));
        }
        if let Action::Coll(c) = a
            && !s.collectives.contains(&c.kind)
        {
            s.collectives.push(c.kind);
        }
        Ok(())
    };
    if set.shared {
        let path = &set.files[0];
        let f =
            icn_engine::input::open(path).map_err(|e| whole(path, format!("cannot read: {e}")))?;
        let mut lines = Lines::new(BufReader::new(f), path);
        let mut dt = vec![datatype::BYTE; n];
        while let Some((line, w)) = lines.next_words()? {
            let r = rank_field(&w[0], n).map_err(|m| lines.error(line, 1, m))?;
            let words: Vec<&str> = w.iter().map(String::as_str).collect();
            let a = action::parse(&words, n, dt[r])
                .map_err(|e| lines.error(line, e.field, e.message))?;
            if let Action::Init { double_default } = a {
                dt[r] = if double_default {
                    datatype::DOUBLE
                } else {
                    datatype::BYTE
                };
            }
            note(&mut s, r, &a).map_err(|m| lines.error(line, 0, m))?;
        }
    } else {
        for r in 0..n {
            let mut reader = RankReader::open(set, r)?;
            while let Some((line, a)) = reader.next_action()? {
                note(&mut s, r, &a).map_err(|m| reader.error(line, 0, m))?;
            }
            for (name, count) in reader.skipped().into_iter().flatten() {
                *s.skipped.entry((*name).to_owned()).or_default() += count;
            }
        }
    }
    s.collectives.sort();
    Ok(s)
}
