//! DUMPI traces (sst-dumpi's binary format, as SST and CODES replay them) read as TI actions,
//! one rank's file streamed record by record.
//!
//! `workload.file` names the trace's `.meta` file (`numprocs=N`, `fileprefix=P`); rank `r`'s
//! records are in `P-rrrr.bin` beside it. A `.bin` file is: 8 bytes of magic, the header
//! (version, host), the body (time offsets, then records), the footer (call counts), the
//! datatype sizes, and an index of 8 big-endian 64-bit words at its end giving where each part
//! is. A record is a 16-bit function label, a mask saying which of thread id, CPU and wall
//! times and performance counters follow, then the function's own fields
//! ([`super::dumpi_layouts`], generated from sst-dumpi's reader: records carry no length).
//!
//! What each record becomes, as icnlab's own recorder writes a TI trace (`icn-tirecord`):
//! * the wall time from the end of the previous MPI call to the start of this one is a
//!   `compute` of that many seconds × `host.flops` flops (rounded; under one flop, none); the
//!   time inside a call is communication; the time inside a call that is not replayed counts
//!   as compute, and the time inside a test that found its request incomplete is dropped;
//! * point-to-point calls, their requests (`wait`, `waitall`, `waitany`, `waitsome`, the
//!   tests that succeeded) and the collectives of [`super::action`] become those actions,
//!   sizes in bytes through the trace's own datatype sizes; reductions carry one flop per
//!   element;
//! * every other MPI call (`MPI_Wtime`, `MPI_Type_commit` …) is not replayed: it is counted
//!   by name and the count is reported with the results, never dropped silently.
//!
//! Only MPI_COMM_WORLD is replayed: a call on another communicator is an error naming it.
//! Every error names the file and the record (its number and byte offset).

use super::action::{Action, CollKind, Collective, MAX_MESSAGE};
use super::dumpi_layouts::{
    ALL_FUNCTIONS, END_OF_STREAM, FINALIZE, FUNCTION_ENTER, FUNCTION_EXIT, LAYOUTS,
};
use super::reader::TraceError;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// How a field is written (all integers big-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    I8,
    I16,
    I32,
    I64,
    /// Statuses (when the record's mask says statuses were written): a count, then per status
    /// bytes, source (32-bit), cancelled, error (8-bit), tag (32-bit).
    Statuses,
    /// A 32-bit count, then that many 32-, 16- or 8-bit values.
    I32s,
    I16s,
    I8s,
    /// A 32-bit length, then that many bytes.
    Chars,
    /// A 32-bit count of [`Field::Chars`].
    Chars2,
    /// A 32-bit count of [`Field::Chars2`].
    Chars3,
    /// A 32-bit count of [`Field::I32s`].
    I32s2,
    /// Present only on the call's root: when the record's `commrank` (or `oldcommrank`)
    /// equals its `root`, both read earlier.
    IfRoot(&'static Field),
}

const MAGIC: u64 = (0xffaa_dd44 << 32) | 0x554d_5049;
const MASK_CPU: u8 = 1 << 2;
const MASK_WALL: u8 = 1 << 3;
const MASK_STATUS: u8 = 3;
const MASK_THREAD: u8 = 1 << 6;
const MASK_PERF: u8 = 1 << 7;
const COMM_WORLD: i64 = 2;
const REQUEST_NULL: i64 = 1;
const ANY: i64 = -1;
/// Most ranks of a DUMPI trace (as TI traces: one open file each).
const MAX_RANKS: usize = super::reader::MAX_RANKS;

/// The trace's rank files, from its `.meta` file.
pub fn locate(meta: &Path) -> Result<Vec<PathBuf>, TraceError> {
    let whole = |m: String| TraceError {
        file: meta.display().to_string(),
        line: 0,
        field: 0,
        message: m,
    };
    let text = icn_engine::input::read_at_most(meta, 1 << 20)
        .map_err(|e| whole(format!("cannot read the DUMPI meta file: {e}")))?;
    let mut ranks = None;
    let mut prefix = None;
    for (i, l) in text.lines().enumerate() {
        let at = |m: String| TraceError {
            file: meta.display().to_string(),
            line: i + 1,
            field: 0,
            message: m,
        };
        match l.split_once('=') {
            Some(("numprocs", v)) => {
                ranks = Some(
                    v.trim()
                        .parse::<usize>()
                        .ok()
                        .filter(|n| (1..=MAX_RANKS).contains(n))
                        .ok_or_else(|| {
                            at(format!(
                                "numprocs: `{}` is not in 1 ..= {MAX_RANKS}",
                                v.trim()
                            ))
                        })?,
                )
            }
            Some(("fileprefix", v)) => prefix = Some(v.trim().to_owned()),
            _ => {}
        }
    }
    let ranks = ranks.ok_or_else(|| {
        whole("is not a DUMPI meta file: no `numprocs=` line (sst-dumpi writes one)".into())
    })?;
    let prefix = prefix.ok_or_else(|| whole("has no `fileprefix=` line".into()))?;
    // The prefix is the path the program ran with; its files are beside the meta file.
    let base = Path::new(&prefix)
        .file_name()
        .ok_or_else(|| whole(format!("fileprefix `{prefix}` names no file")))?;
    let dir = meta.parent().unwrap_or(Path::new("."));
    let files: Vec<PathBuf> = (0..ranks)
        .map(|r| dir.join(format!("{}-{r:04}.bin", base.to_string_lossy())))
        .collect();
    if let Some(missing) = files.iter().find(|f| !f.is_file()) {
        return Err(whole(format!(
            "numprocs={ranks}, but the trace of rank {}, {}, is not a readable file",
            files.iter().position(|f| f == missing).unwrap_or(0),
            missing.display()
        )));
    }
    Ok(files)
}

/// One value of a record.
#[derive(Clone, Debug, Default)]
struct Rec {
    ints: Vec<(&'static str, i64)>,
    arrays: Vec<(&'static str, Vec<i32>)>,
    /// The first status's source and tag, when statuses were written.
    status: Option<(i64, i64)>,
}

impl Rec {
    fn int(&self, name: &str) -> Option<i64> {
        self.ints.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
    fn array(&self, name: &str) -> Option<&[i32]> {
        self.arrays
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// One rank's records as TI actions.
pub struct DumpiRank {
    input: BufReader<File>,
    path: String,
    rank: usize,
    n: usize,
    host_flops: f64,
    /// Byte offset of the next read, and where the body ends (the footer).
    pos: u64,
    end: u64,
    wall_offset: u64,
    cpu_offset: u64,
    /// Datatype sizes, by DUMPI datatype id.
    sizes: Vec<u64>,
    perf_counters: usize,
    /// Records read so far (the number of the one being read).
    record: u64,
    record_at: u64,
    /// End of the previous replayed call, ns; time not yet written as compute, ns.
    last_end: Option<u64>,
    pending_ns: u64,
    requests: HashMap<i64, (usize, usize, u32)>,
    queue: VecDeque<Action>,
    /// Calls not replayed, by name.
    pub skipped: BTreeMap<&'static str, u64>,
    done: bool,
}

fn be(b: &[u8]) -> u64 {
    b.iter().fold(0, |a, &x| (a << 8) | u64::from(x))
}

impl DumpiRank {
    pub fn open(path: &Path, rank: usize, n: usize, host_flops: f64) -> Result<Self, TraceError> {
        let name = path.display().to_string();
        let whole = |m: String| TraceError {
            file: name.clone(),
            line: 0,
            field: 0,
            message: m,
        };
        let mut f = icn_engine::input::open(path)
            .map_err(|e| whole(format!("cannot read the trace of rank {rank}: {e}")))?;
        let len = f
            .metadata()
            .map_err(|e| whole(format!("cannot read: {e}")))?
            .len();
        let word = |f: &mut File, at: u64| -> Result<u64, TraceError> {
            let mut b = [0u8; 8];
            f.seek(SeekFrom::Start(at))
                .and_then(|_| f.read_exact(&mut b))
                .map_err(|e| whole(format!("cannot read 8 bytes at byte {at}: {e}")))?;
            Ok(be(&b))
        };
        if len < 72 || word(&mut f, 0)? != MAGIC {
            return Err(whole(
                "is not a DUMPI trace: it does not start with DUMPI's magic number".into(),
            ));
        }
        let index = len - 64;
        if word(&mut f, index)? != MAGIC {
            return Err(whole(
                "is not a complete DUMPI trace (truncated?): its last 64 bytes are not DUMPI's \
                 index record (sst-dumpi ≥ 0.6.6 writes one)"
                    .into(),
            ));
        }
        let mut at = [0u64; 7];
        for (i, a) in at.iter_mut().enumerate() {
            *a = word(&mut f, index + 8 * (i as u64 + 1))?;
        }
        let [sizelbl, _addrlbl, perflbl, header, body, footer, _keyval] = at;
        let inside = |o: u64| o > 0 && o < index;
        if !(inside(header) && inside(body) && inside(footer) && body < footer) {
            return Err(whole(format!(
                "its index is corrupt: header at {header}, body at {body}, footer at {footer} \
                 in a file of {len} bytes"
            )));
        }
        let mut version = [0u8; 3];
        f.seek(SeekFrom::Start(header))
            .and_then(|_| f.read_exact(&mut version))
            .map_err(|e| whole(format!("cannot read the header: {e}")))?;
        if version < [0, 6, 9] {
            return Err(whole(format!(
                "DUMPI version {}.{}.{}: icnlab reads 0.6.9 and later",
                version[0], version[1], version[2]
            )));
        }
        let mut sizes = Vec::new();
        if inside(sizelbl) {
            let count = word(&mut f, sizelbl)? >> 32;
            if count * 4 > index - sizelbl {
                return Err(whole(format!(
                    "its datatype size record claims {count} sizes"
                )));
            }
            let mut b = vec![0u8; count as usize * 4];
            f.seek(SeekFrom::Start(sizelbl + 4))
                .and_then(|_| f.read_exact(&mut b))
                .map_err(|e| whole(format!("cannot read the datatype sizes: {e}")))?;
            sizes = b.chunks(4).map(be).collect();
        }
        let perf_counters = if inside(perflbl) {
            (word(&mut f, perflbl)? >> 32) as usize
        } else {
            0
        };
        let offsets = word(&mut f, body)?;
        f.seek(SeekFrom::Start(body + 8))
            .map_err(|e| whole(format!("cannot seek: {e}")))?;
        Ok(DumpiRank {
            input: BufReader::with_capacity(64 << 10, f),
            path: name,
            rank,
            n,
            host_flops,
            pos: body + 8,
            end: footer,
            cpu_offset: offsets >> 32,
            wall_offset: offsets & 0xffff_ffff,
            sizes,
            perf_counters,
            record: 0,
            record_at: body + 8,
            last_end: None,
            pending_ns: 0,
            requests: HashMap::new(),
            queue: VecDeque::new(),
            skipped: BTreeMap::new(),
            done: false,
        })
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// An error at the record being read.
    fn error(&self, message: impl std::fmt::Display) -> TraceError {
        TraceError {
            file: self.path.clone(),
            line: 0,
            field: 0,
            message: format!(
                "record {} (byte {}): {message}",
                self.record, self.record_at
            ),
        }
    }

    fn bytes(&mut self, n: u64, buf: &mut [u8]) -> Result<(), TraceError> {
        if self.pos + n > self.end {
            return Err(self.error(format!(
                "runs past the end of the records (byte {}): the file is truncated or corrupt",
                self.end
            )));
        }
        self.input
            .read_exact(&mut buf[..n as usize])
            .map_err(|e| self.error(format!("cannot read: {e}")))?;
        self.pos += n;
        Ok(())
    }

    fn uint(&mut self, n: u64) -> Result<u64, TraceError> {
        let mut b = [0u8; 8];
        self.bytes(n, &mut b)?;
        Ok(be(&b[..n as usize]))
    }

    fn skip(&mut self, n: u64) -> Result<(), TraceError> {
        if self.pos + n > self.end {
            return Err(self.error(format!(
                "a field of {n} bytes runs past the end of the records (byte {}): the file is \
                 truncated or corrupt",
                self.end
            )));
        }
        self.input
            .seek_relative(n as i64)
            .map_err(|e| self.error(format!("cannot read: {e}")))?;
        self.pos += n;
        Ok(())
    }

    /// A 32-bit count of items of `item` bytes each, checked against what is left.
    fn count(&mut self, item: u64) -> Result<u64, TraceError> {
        let c = self.uint(4)?;
        if c.saturating_mul(item.max(1)) > self.end - self.pos {
            return Err(self.error(format!(
                "an array of {c} items does not fit in the {} bytes left: the file is corrupt",
                self.end - self.pos
            )));
        }
        Ok(c)
    }

    fn signed(v: u64, bytes: u32) -> i64 {
        let shift = 64 - 8 * bytes;
        ((v << shift) as i64) >> shift
    }

    fn field(
        &mut self,
        name: &'static str,
        f: Field,
        mask: u8,
        rec: &mut Rec,
    ) -> Result<(), TraceError> {
        match f {
            Field::I8 | Field::I16 | Field::I32 | Field::I64 => {
                let n = match f {
                    Field::I8 => 1,
                    Field::I16 => 2,
                    Field::I32 => 4,
                    _ => 8,
                };
                let v = Self::signed(self.uint(n)?, n as u32);
                rec.ints.push((name, v));
            }
            Field::Statuses => {
                if mask & MASK_STATUS != 0 {
                    let c = self.count(14)?;
                    for i in 0..c {
                        let _bytes = self.uint(4)?;
                        let source = Self::signed(self.uint(4)?, 4);
                        self.skip(2)?;
                        let tag = Self::signed(self.uint(4)?, 4);
                        if i == 0 {
                            rec.status = Some((source, tag));
                        }
                    }
                }
            }
            Field::I32s => {
                let c = self.count(4)?;
                let mut v = Vec::with_capacity(c as usize);
                for _ in 0..c {
                    v.push(self.uint(4)? as u32 as i32);
                }
                rec.arrays.push((name, v));
            }
            Field::I16s => {
                let c = self.count(2)?;
                self.skip(2 * c)?;
            }
            Field::I8s => {
                let c = self.count(1)?;
                self.skip(c)?;
            }
            Field::Chars => {
                let c = self.count(1)?;
                self.skip(c)?;
            }
            Field::Chars2 | Field::Chars3 | Field::I32s2 => {
                let c = self.count(4)?;
                let inner = match f {
                    Field::Chars2 => Field::Chars,
                    Field::Chars3 => Field::Chars2,
                    _ => Field::I32s,
                };
                for _ in 0..c {
                    let mut scratch = Rec::default();
                    self.field(name, inner, mask, &mut scratch)?;
                }
            }
            Field::IfRoot(inner) => {
                let rank = rec.int("commrank").or_else(|| rec.int("oldcommrank"));
                if rank.is_some() && rank == rec.int("root") {
                    self.field(name, *inner, mask, rec)?;
                }
            }
        }
        Ok(())
    }

    /// Time stamp `(sec, nsec)` in ns since the trace's offset.
    fn stamp(&mut self, offset: u64) -> Result<u64, TraceError> {
        let sec = self.uint(2)? + offset;
        let nsec = self.uint(4)?;
        if nsec >= 1_000_000_000 {
            return Err(self.error(format!("a time stamp has {nsec} ns (≥ 1 s)")));
        }
        Ok(sec * 1_000_000_000 + nsec)
    }

    /// The next record: its function label, (start, end) wall time in ns, and its fields.
    /// `None` at the end of the records.
    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        if self.pos >= self.end {
            return Ok(None);
        }
        self.record += 1;
        self.record_at = self.pos;
        let label = self.uint(2)? as u16;
        if label == END_OF_STREAM {
            return Ok(None);
        }
        if label > END_OF_STREAM || label == ALL_FUNCTIONS {
            return Err(self.error(format!(
                "function label {label} is not one of DUMPI's (0 ..= {END_OF_STREAM}): the \
                 file is corrupt"
            )));
        }
        let mask = self.uint(1)? as u8;
        if mask & MASK_THREAD != 0 {
            self.skip(2)?;
        }
        let mut times = None;
        if mask & MASK_CPU != 0 {
            let (a, b) = (self.stamp(self.cpu_offset)?, self.stamp(self.cpu_offset)?);
            times = Some((a, b));
        }
        if mask & MASK_WALL != 0 {
            let (a, b) = (self.stamp(self.wall_offset)?, self.stamp(self.wall_offset)?);
            times = Some((a, b));
        }
        if mask & MASK_PERF != 0 {
            self.skip(1)?;
            self.skip(16 * self.perf_counters as u64)?;
        }
        let mut rec = Rec::default();
        if label == FUNCTION_ENTER || label == FUNCTION_EXIT {
            self.skip(8)?;
            return Ok(Some((label, times.unwrap_or((0, 0)), rec)));
        }
        let (name, layout) = LAYOUTS[label as usize];
        let Some(layout) = layout else {
            return Err(self.error(format!(
                "{name} (label {label}): sst-dumpi writes no such record, so its fields are \
                 unknown: the file is corrupt"
            )));
        };
        for &(field, f) in layout {
            self.field(field, f, mask, &mut rec)?;
        }
        let Some((start, stop)) = times else {
            return Err(self.error(format!(
                "{name} has no time stamps (record with mask {mask:#x}): icnlab needs wall or \
                 CPU times for the compute between calls"
            )));
        };
        if stop < start {
            return Err(self.error(format!(
                "{name} ends ({stop} ns) before it starts ({start} ns)"
            )));
        }
        Ok(Some((label, (start, stop), rec)))
    }

    /// The next action, `None` at the end of the trace.
    pub fn next_action(&mut self) -> Result<Option<(usize, Action)>, TraceError> {
        loop {
            if let Some(a) = self.queue.pop_front() {
                return Ok(Some((self.record as usize, a)));
            }
            if self.done {
                return Ok(None);
            }
            let Some((label, (start, stop), rec)) = self.next_record()? else {
                self.done = true;
                continue;
            };
            if label >= ALL_FUNCTIONS {
                continue;
            }
            let name = LAYOUTS[label as usize].0;
            let gap = self.last_end.map_or(0, |e| start.saturating_sub(e));
            let actions = self.convert(name, &rec)?;
            match actions {
                Converted::Skipped => {
                    // Not replayed: its time counts as compute.
                    *self.skipped.entry(name).or_default() += 1;
                    continue;
                }
                Converted::Nothing => {
                    // A test that found its request incomplete: the time before it joins the
                    // next compute, the time in it is dropped.
                    self.pending_ns += gap;
                    self.last_end = Some(stop);
                    continue;
                }
                Converted::Actions(v) => {
                    let ns = self.pending_ns + gap;
                    self.pending_ns = 0;
                    self.last_end = Some(stop);
                    let flops = (ns as f64 * 1e-9 * self.host_flops).round();
                    if flops >= 1.0 {
                        self.queue.push_back(Action::Compute { flops });
                    }
                    self.queue.extend(v);
                    if label == FINALIZE {
                        self.done = true;
                    }
                }
            }
        }
    }

    fn world(&self, name: &str, rec: &Rec, key: &str) -> Result<(), TraceError> {
        match rec.int(key) {
            Some(COMM_WORLD) | None => Ok(()),
            Some(c) => Err(self.error(format!(
                "{name} on communicator {c}: icnlab replays MPI_COMM_WORLD only (DUMPI id \
                 {COMM_WORLD})"
            ))),
        }
    }

    fn need(&self, name: &str, rec: &Rec, key: &str) -> Result<i64, TraceError> {
        rec.int(key)
            .ok_or_else(|| self.error(format!("{name} lacks its `{key}` field")))
    }

    fn rank_of(&self, name: &str, what: &str, v: i64) -> Result<usize, TraceError> {
        usize::try_from(v)
            .ok()
            .filter(|&r| r < self.n)
            .ok_or_else(|| {
                self.error(format!(
                    "{name}: {what} {v} is not a rank of MPI_COMM_WORLD (0 ..= {})",
                    self.n - 1
                ))
            })
    }

    fn tag(&self, name: &str, v: i64) -> Result<u32, TraceError> {
        u32::try_from(v)
            .ok()
            .filter(|&t| t < 1 << 31)
            .ok_or_else(|| self.error(format!("{name}: tag {v} is not in 0 ..= 2^31 − 1")))
    }

    /// `count` elements of datatype `dt` in bytes.
    fn size(&self, name: &str, count: i64, dt: i64) -> Result<u64, TraceError> {
        let size = usize::try_from(dt)
            .ok()
            .and_then(|d| self.sizes.get(d))
            .copied()
            .ok_or_else(|| {
                self.error(format!(
                    "{name}: datatype {dt} has no size in the trace's size table ({} types)",
                    self.sizes.len()
                ))
            })?;
        u64::try_from(count)
            .ok()
            .and_then(|c| c.checked_mul(size))
            .filter(|b| *b <= MAX_MESSAGE)
            .ok_or_else(|| {
                self.error(format!(
                    "{name}: {count} × {size} B is not a size in 0 ..= {MAX_MESSAGE} bytes"
                ))
            })
    }

    fn sized(&self, name: &str, rec: &Rec, count: &str, dt: &str) -> Result<u64, TraceError> {
        self.size(
            name,
            self.need(name, rec, count)?,
            self.need(name, rec, dt)?,
        )
    }

    fn sizes_of(
        &self,
        name: &str,
        rec: &Rec,
        counts: &str,
        dt: &str,
    ) -> Result<Vec<u64>, TraceError> {
        let c = rec
            .array(counts)
            .ok_or_else(|| self.error(format!("{name} lacks its `{counts}`")))?;
        if c.len() != self.n {
            return Err(self.error(format!("{name}: {} {counts} for {} ranks", c.len(), self.n)));
        }
        let dt = self.need(name, rec, dt)?;
        c.iter()
            .map(|&x| self.size(name, i64::from(x), dt))
            .collect()
    }

    /// The request `req` completed: a `wait` for it (none for a null or unknown request, as
    /// a request completed by an earlier test).
    fn completed(&mut self, req: i64, out: &mut Vec<Action>) {
        if req == REQUEST_NULL {
            return;
        }
        if let Some((src, dst, tag)) = self.requests.remove(&req) {
            out.push(Action::Wait { src, dst, tag });
        }
    }

    fn coll(kind: CollKind, root: usize, bytes: u64) -> Collective {
        Collective {
            kind,
            root,
            bytes,
            counts: Vec::new(),
            recv_counts: Vec::new(),
            flops: 0.0,
        }
    }

    fn convert(&mut self, name: &'static str, rec: &Rec) -> Result<Converted, TraceError> {
        let me = self.rank;
        let mut out = Vec::new();
        let short = name.strip_prefix("MPI_").unwrap_or(name);
        match short {
            "Init" | "Init_thread" => out.push(Action::Init {
                double_default: false,
            }),
            "Finalize" => out.push(Action::Finalize),
            "Comm_rank" | "Comm_size" | "Comm_dup" | "Comm_split" => out.push(Action::Comm),
            "Send" | "Bsend" | "Ssend" | "Rsend" | "Isend" | "Ibsend" | "Issend" | "Irsend" => {
                self.world(name, rec, "comm")?;
                let peer = self.rank_of(name, "dest", self.need(name, rec, "dest")?)?;
                let tag = self.tag(name, self.need(name, rec, "tag")?)?;
                let bytes = self.sized(name, rec, "count", "datatype")?;
                let blocking = !short.starts_with('I');
                if !blocking {
                    let req = self.need(name, rec, "request")?;
                    self.requests.insert(req, (me, peer, tag));
                }
                out.push(Action::Send {
                    peer,
                    tag,
                    bytes,
                    blocking,
                });
            }
            "Recv" | "Irecv" => {
                self.world(name, rec, "comm")?;
                let blocking = short == "Recv";
                let (mut src, mut tag) = (
                    self.need(name, rec, "source")?,
                    self.need(name, rec, "tag")?,
                );
                if src == ANY || tag == ANY {
                    match (blocking, rec.status) {
                        (true, Some((s, t))) => {
                            if src == ANY {
                                src = s;
                            }
                            if tag == ANY {
                                tag = t;
                            }
                        }
                        _ => {
                            return Err(self.error(format!(
                                "{name} from MPI_ANY_SOURCE or with MPI_ANY_TAG{}: the replay \
                                 needs the source and tag that matched",
                                if blocking {
                                    " and no status recorded"
                                } else {
                                    ""
                                }
                            )));
                        }
                    }
                }
                let peer = self.rank_of(name, "source", src)?;
                let tag = self.tag(name, tag)?;
                let bytes = self.sized(name, rec, "count", "datatype")?;
                if !blocking {
                    let req = self.need(name, rec, "request")?;
                    self.requests.insert(req, (peer, me, tag));
                }
                out.push(Action::Recv {
                    peer,
                    tag,
                    bytes,
                    blocking,
                });
            }
            "Wait" => {
                let req = self.need(name, rec, "request")?;
                self.completed(req, &mut out);
            }
            "Test" => {
                if self.need(name, rec, "flag")? == 0 {
                    return Ok(Converted::Nothing);
                }
                let req = self.need(name, rec, "request")?;
                self.completed(req, &mut out);
            }
            "Waitall" | "Testall" => {
                if short == "Testall" && self.need(name, rec, "flag")? == 0 {
                    return Ok(Converted::Nothing);
                }
                let reqs = rec.array("requests").unwrap_or_default().to_vec();
                for r in reqs {
                    self.completed(i64::from(r), &mut out);
                }
            }
            "Waitany" | "Testany" => {
                if short == "Testany" && self.need(name, rec, "flag")? == 0 {
                    return Ok(Converted::Nothing);
                }
                let reqs = rec.array("requests").unwrap_or_default().to_vec();
                let i = self.need(name, rec, "index")?;
                if let Some(&r) = usize::try_from(i).ok().and_then(|i| reqs.get(i)) {
                    self.completed(i64::from(r), &mut out);
                }
            }
            "Waitsome" | "Testsome" => {
                let reqs = rec.array("requests").unwrap_or_default().to_vec();
                let done = rec.array("indices").unwrap_or_default().to_vec();
                if done.is_empty() && short == "Testsome" {
                    return Ok(Converted::Nothing);
                }
                for i in done {
                    if let Some(&r) = usize::try_from(i).ok().and_then(|i| reqs.get(i)) {
                        self.completed(i64::from(r), &mut out);
                    }
                }
            }
            "Sendrecv" => {
                self.world(name, rec, "comm")?;
                let send = self.sized(name, rec, "sendcount", "sendtype")?;
                let recv = self.sized(name, rec, "recvcount", "recvtype")?;
                let dst = self.rank_of(name, "dest", self.need(name, rec, "dest")?)?;
                let src = self.rank_of(name, "source", self.need(name, rec, "source")?)?;
                out.push(Action::SendRecv {
                    send,
                    dst,
                    recv,
                    src,
                });
            }
            "Barrier" => {
                self.world(name, rec, "comm")?;
                out.push(Action::Coll(Self::coll(CollKind::Barrier, 0, 0)));
            }
            "Bcast" | "Reduce" => {
                self.world(name, rec, "comm")?;
                let root = self.rank_of(name, "root", self.need(name, rec, "root")?)?;
                let bytes = self.sized(name, rec, "count", "datatype")?;
                let mut c = Self::coll(
                    if short == "Bcast" {
                        CollKind::Bcast
                    } else {
                        CollKind::Reduce
                    },
                    root,
                    bytes,
                );
                if short == "Reduce" {
                    c.flops = self.need(name, rec, "count")? as f64;
                }
                out.push(Action::Coll(c));
            }
            "Allreduce" | "Scan" | "Exscan" => {
                self.world(name, rec, "comm")?;
                let kind = match short {
                    "Allreduce" => CollKind::Allreduce,
                    "Scan" => CollKind::Scan,
                    _ => CollKind::Exscan,
                };
                let mut c = Self::coll(kind, 0, self.sized(name, rec, "count", "datatype")?);
                c.flops = self.need(name, rec, "count")? as f64;
                out.push(Action::Coll(c));
            }
            "Alltoall" | "Allgather" => {
                self.world(name, rec, "comm")?;
                let kind = if short == "Alltoall" {
                    CollKind::Alltoall
                } else {
                    CollKind::Allgather
                };
                let bytes = self.sized(name, rec, "sendcount", "sendtype")?;
                out.push(Action::Coll(Self::coll(kind, 0, bytes)));
            }
            "Alltoallv" => {
                self.world(name, rec, "comm")?;
                let mut c = Self::coll(CollKind::Alltoallv, 0, 0);
                c.counts = self.sizes_of(name, rec, "sendcounts", "sendtype")?;
                c.recv_counts = self.sizes_of(name, rec, "recvcounts", "recvtype")?;
                out.push(Action::Coll(c));
            }
            "Allgatherv" => {
                self.world(name, rec, "comm")?;
                let bytes = self.sized(name, rec, "sendcount", "sendtype")?;
                let mut c = Self::coll(CollKind::Allgatherv, 0, bytes);
                c.counts = self.sizes_of(name, rec, "recvcounts", "recvtype")?;
                out.push(Action::Coll(c));
            }
            "Gather" | "Scatter" => {
                self.world(name, rec, "comm")?;
                let root = self.rank_of(name, "root", self.need(name, rec, "root")?)?;
                let (kind, bytes) = if short == "Gather" {
                    (
                        CollKind::Gather,
                        self.sized(name, rec, "sendcount", "sendtype")?,
                    )
                } else {
                    (
                        CollKind::Scatter,
                        self.sized(name, rec, "recvcount", "recvtype")?,
                    )
                };
                out.push(Action::Coll(Self::coll(kind, root, bytes)));
            }
            "Gatherv" | "Scatterv" => {
                return Err(self.error(format!(
                    "{name}: the replay needs every rank's counts, which DUMPI records on the \
                     root only"
                )));
            }
            "Reduce_scatter" => {
                self.world(name, rec, "comm")?;
                let mut c = Self::coll(CollKind::ReduceScatter, 0, 0);
                c.counts = self.sizes_of(name, rec, "recvcounts", "datatype")?;
                c.flops = rec
                    .array("recvcounts")
                    .unwrap_or_default()
                    .iter()
                    .map(|&x| f64::from(x))
                    .sum();
                out.push(Action::Coll(c));
            }
            _ => return Ok(Converted::Skipped),
        }
        Ok(Converted::Actions(out))
    }
}

/// A record: its function label, (start, end) wall time in ns, its fields.
type Record = (u16, (u64, u64), Rec);

enum Converted {
    Actions(Vec<Action>),
    /// Replayed as nothing (a test that found its request incomplete).
    Nothing,
    /// Not replayed (counted by name).
    Skipped,
}
