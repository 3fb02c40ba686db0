//! The streaming reader: one header, then one packet record at a time, every field checked.
//! It holds the header and one record; nothing grows with the trace's length.

use super::{
    HEADER_BYTES, Header, MAGIC, MAX_CYCLES, MAX_NOTES, MAX_REGIONS, PACKET_BYTES, PacketType,
    REGION_BYTES, Record, Region,
};
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

/// What went wrong, for the caller to choose an exit status: a malformed or unreadable file is
/// an input error; a dependency that cannot be honoured (a cycle, a packet that never comes)
/// is a failure of the replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file cannot be read or is not bzip2.
    Io,
    /// A field out of its range or a record cut short.
    Format,
    /// Dependencies that no replay can honour.
    Dependency,
}

/// A packet named in an error: its position in the file (0-based) and its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketRef {
    pub index: u64,
    pub id: u32,
}

/// A trace error, naming the byte offset in the decompressed stream and, past the header,
/// the packet.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct TraceError {
    pub kind: ErrorKind,
    pub offset: u64,
    pub packet: Option<PacketRef>,
    pub what: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A file that cannot be opened or decompressed fails before any byte is known.
        if self.kind != ErrorKind::Io || self.offset > 0 {
            write!(f, "byte {}", self.offset)?;
            if let Some(p) = self.packet {
                write!(f, " (packet #{} of the file, id {})", p.index, p.id)?;
            }
            f.write_str(": ")?;
        }
        f.write_str(&self.what)
    }
}

impl TraceError {
    pub(crate) fn new(
        kind: ErrorKind,
        offset: u64,
        packet: Option<PacketRef>,
        what: String,
    ) -> Self {
        TraceError {
            kind,
            offset,
            packet,
            what,
        }
    }
}

/// Reads a Netrace v1 stream (already decompressed: [`Reader::open`] decompresses a file).
pub struct Reader<R> {
    inner: R,
    header: Header,
    /// Bytes consumed so far.
    offset: u64,
    /// Offset of the first packet record.
    body: u64,
    /// Records read (the next one's index).
    index: u64,
    /// Region the last record belongs to, and records seen per region so far.
    region: usize,
    region_counts: Vec<u64>,
    /// Regions before this one were skipped, not counted.
    first_counted: usize,
    /// First cycle of the current region.
    region_start: u64,
    last: Option<(u64, u32)>,
    done: bool,
}

impl Reader<BufReader<bzip2::read::MultiBzDecoder<BufReader<File>>>> {
    /// Opens a `.tra.bz2` file.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let file = File::open(path)
            .map_err(|e| TraceError::new(ErrorKind::Io, 0, None, format!("cannot open: {e}")))?;
        let bz = bzip2::read::MultiBzDecoder::new(BufReader::new(file));
        Reader::new(BufReader::with_capacity(1 << 16, bz))
    }
}

impl<R: Read> Reader<R> {
    /// Reads and checks the header.
    pub fn new(inner: R) -> Result<Self, TraceError> {
        let mut r = Reader {
            inner,
            header: Header {
                version: 0.0,
                benchmark: String::new(),
                nodes: 0,
                cycles: 0,
                packets: 0,
                notes: String::new(),
                regions: Vec::new(),
            },
            offset: 0,
            body: 0,
            index: 0,
            region: 0,
            region_counts: Vec::new(),
            first_counted: 0,
            region_start: 0,
            last: None,
            done: false,
        };
        r.read_header()?;
        Ok(r)
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Byte offset in the decompressed stream of the next read.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The record returned last, as errors name it (`None` before any).
    pub fn last_packet(&self) -> Option<PacketRef> {
        let (_, id) = self.last?;
        Some(PacketRef {
            index: self.index - 1,
            id,
        })
    }

    /// Region of the record returned last (0 before any).
    pub fn region(&self) -> usize {
        self.region
    }

    fn err(&self, at: u64, what: String) -> TraceError {
        TraceError::new(ErrorKind::Format, at, None, what)
    }

    /// Fills `buf`. `Ok(false)`: the stream ended before its first byte (when `eof_ok`).
    fn fill(&mut self, buf: &mut [u8], what: &str, eof_ok: bool) -> Result<bool, TraceError> {
        let start = self.offset;
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => {
                    if got == 0 && eof_ok {
                        return Ok(false);
                    }
                    return Err(self.err(
                        start,
                        format!(
                            "{what} needs {} bytes, the stream ends {got} bytes into it",
                            buf.len()
                        ),
                    ));
                }
                Ok(n) => {
                    got += n;
                    self.offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(TraceError::new(
                        ErrorKind::Io,
                        self.offset,
                        None,
                        format!("reading {what}: {e} (is it a bzip2-compressed netrace file?)"),
                    ));
                }
            }
        }
        Ok(true)
    }

    fn read_header(&mut self) -> Result<(), TraceError> {
        let mut h = [0u8; HEADER_BYTES as usize];
        self.fill(&mut h, "the 72-byte header", false)?;
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        let magic = u32_at(0);
        if magic != MAGIC {
            return Err(self.err(
                0,
                format!("magic 0x{magic:08X}, a netrace file starts with 0x{MAGIC:08X}"),
            ));
        }
        let version = f32::from_le_bytes(h[4..8].try_into().expect("4 bytes"));
        if version != 1.0 {
            return Err(self.err(4, format!("version {version}: only 1.0 is known")));
        }
        let name = &h[8..38];
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        let nodes = h[38];
        if nodes == 0 {
            return Err(self.err(38, "node count 0: 1 ..= 255".into()));
        }
        if u64_at(40) > MAX_CYCLES {
            return Err(self.err(40, format!("cycles {}: 0 ..= 2^36", u64_at(40))));
        }
        let notes_len = u32_at(56);
        let regions = u32_at(60);
        if notes_len > MAX_NOTES {
            return Err(self.err(
                56,
                format!("notes length {notes_len}: 0 ..= {MAX_NOTES} bytes"),
            ));
        }
        if !(1..=MAX_REGIONS).contains(&regions) {
            return Err(self.err(60, format!("region count {regions}: 1 ..= {MAX_REGIONS}")));
        }
        let mut notes = vec![0u8; notes_len as usize];
        self.fill(&mut notes, "the notes", false)?;
        let end = notes.iter().position(|&b| b == 0).unwrap_or(notes.len());
        self.header = Header {
            version,
            benchmark: String::from_utf8_lossy(name).into_owned(),
            nodes,
            cycles: u64_at(40),
            packets: u64_at(48),
            notes: String::from_utf8_lossy(&notes[..end]).into_owned(),
            regions: Vec::new(),
        };
        let mut packets = 0u64;
        for i in 0..regions {
            let at = self.offset;
            let mut b = [0u8; REGION_BYTES as usize];
            self.fill(&mut b, &format!("region header {i}"), false)?;
            let g = |k: usize| u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().expect("8"));
            let region = Region {
                offset: g(0),
                cycles: g(1),
                packets: g(2),
            };
            if let Some(prev) = self.header.regions.last()
                && region.offset < prev.offset
            {
                return Err(self.err(
                    at,
                    format!(
                        "region {i} starts at offset {} before region {} (at {})",
                        region.offset,
                        i - 1,
                        prev.offset
                    ),
                ));
            }
            if i == 0 && region.offset != 0 {
                return Err(self.err(
                    at,
                    format!("region 0 starts at offset {}: it must be 0", region.offset),
                ));
            }
            packets = packets.saturating_add(region.packets);
            self.header.regions.push(region);
        }
        if packets != self.header.packets {
            return Err(self.err(
                48,
                format!(
                    "the header says {} packets, its regions {packets}",
                    self.header.packets
                ),
            ));
        }
        self.body = self.offset;
        self.region_counts = vec![0; self.header.regions.len()];
        Ok(())
    }

    /// Skips to the first record of region `r` (forward only; a stream cannot seek back).
    pub fn seek_region(&mut self, r: usize) -> Result<(), TraceError> {
        let Some(region) = self.header.regions.get(r) else {
            return Err(self.err(
                self.offset,
                format!("region {r}: the trace has {}", self.header.regions.len()),
            ));
        };
        let target = self.body.saturating_add(region.offset);
        if target < self.offset {
            return Err(self.err(
                self.offset,
                format!("region {r} starts at byte {target}, already passed"),
            ));
        }
        if self.index > 0 {
            return Err(self.err(
                self.offset,
                format!("region {r}: a reader seeks only before its first record"),
            ));
        }
        // Regions before `r` are neither read nor counted; record numbers stay the file's.
        self.first_counted = r;
        self.index = self.header.regions[..r].iter().map(|g| g.packets).sum();
        let skip = target - self.offset;
        let copied = io::copy(&mut (&mut self.inner).take(skip), &mut io::sink()).map_err(|e| {
            TraceError::new(
                ErrorKind::Io,
                self.offset,
                None,
                format!("skipping to region {r}: {e}"),
            )
        })?;
        self.offset += copied;
        if copied < skip {
            return Err(self.err(
                self.offset,
                format!("region {r} starts at byte {target}, the stream ends before"),
            ));
        }
        self.region = r;
        self.region_start = self.header.region_start(r);
        Ok(())
    }

    /// The next packet record, `None` at the end of the stream.
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        if self.done {
            return Ok(None);
        }
        let at = self.offset;
        let mut b = [0u8; PACKET_BYTES as usize];
        if !self.fill(&mut b, "a packet record", true)? {
            self.done = true;
            self.check_counts()?;
            return Ok(None);
        }
        let packet = PacketRef {
            index: self.index,
            id: u32::from_le_bytes(b[8..12].try_into().expect("4")),
        };
        let bad = |what: String| TraceError::new(ErrorKind::Format, at, Some(packet), what);
        let rec = Record {
            cycle: u64::from_le_bytes(b[0..8].try_into().expect("8")),
            id: packet.id,
            addr: u32::from_le_bytes(b[12..16].try_into().expect("4")),
            kind: PacketType(b[16]),
            src: b[17],
            dst: b[18],
            node_types: b[19],
            dependents: Vec::with_capacity(usize::from(b[20])),
        };
        let mut rec = rec;
        for k in 0..b[20] {
            let mut d = [0u8; 4];
            self.fill(
                &mut d,
                &format!("dependency {k} of packet id {}", rec.id),
                false,
            )
            .map_err(|mut e| {
                e.packet = Some(packet);
                e
            })?;
            rec.dependents.push(u32::from_le_bytes(d));
        }
        let nodes = self.header.nodes;
        if !rec.kind.is_valid() {
            return Err(bad(format!(
                "packet type {} is InvalidCmd (known: 1-6, 13-16, 25, 27-30)",
                rec.kind.0
            )));
        }
        if rec.src >= nodes || rec.dst >= nodes {
            return Err(bad(format!(
                "source {} / destination {}: nodes are 0 ..= {}",
                rec.src,
                rec.dst,
                nodes - 1
            )));
        }
        if rec.cycle > self.header.cycles {
            return Err(bad(format!(
                "cycle {} after the trace's last, {} (the header's cycles)",
                rec.cycle, self.header.cycles
            )));
        }
        if let Some((cycle, id)) = self.last {
            if rec.cycle < cycle {
                return Err(bad(format!(
                    "cycle {} before the previous packet's {cycle}: records are in cycle order",
                    rec.cycle
                )));
            }
            if rec.id <= id {
                return Err(bad(format!(
                    "id {} not above the previous packet's {id}: ids increase through the file",
                    rec.id
                )));
            }
        }
        if let Some(&d) = rec.dependents.iter().find(|&&d| d <= rec.id) {
            return Err(TraceError::new(
                ErrorKind::Dependency,
                at,
                Some(packet),
                format!(
                    "lists packet {d} as waiting for it, but {d} is not above its own id {}: {}",
                    rec.id,
                    if d == rec.id {
                        "a packet waiting for itself (a dependency cycle)".to_string()
                    } else {
                        format!(
                            "{d} came earlier in the trace (a backward dependency: with it a cycle of waits can form and no replay can honour it)"
                        )
                    }
                ),
            ));
        }
        // The region this record falls in: the last region starting at or before it.
        let rel = at - self.body;
        while self.region + 1 < self.header.regions.len()
            && self.header.regions[self.region + 1].offset <= rel
        {
            self.region_start = self
                .region_start
                .saturating_add(self.header.regions[self.region].cycles);
            self.region += 1;
        }
        if rec.cycle < self.region_start {
            return Err(bad(format!(
                "cycle {} before the start of its region {} at cycle {} (the cycles of the regions before it)",
                rec.cycle, self.region, self.region_start
            )));
        }
        let end = self.offset - self.body;
        if let Some(next) = self.header.regions.get(self.region + 1)
            && next.offset < end
        {
            return Err(bad(format!(
                "the record runs to offset {end} past the start of region {} at {}",
                self.region + 1,
                next.offset
            )));
        }
        if let Some(c) = self.region_counts.get_mut(self.region) {
            *c += 1;
        }
        self.last = Some((rec.cycle, rec.id));
        self.index += 1;
        Ok(Some(rec))
    }

    /// At the end of a stream read from its first record: each region held as many packets as
    /// its header says.
    fn check_counts(&self) -> Result<(), TraceError> {
        let counted = self.header.regions.iter().zip(&self.region_counts);
        for (i, (g, &n)) in counted.enumerate().skip(self.first_counted) {
            if g.packets != n {
                return Err(self.err(
                    self.offset,
                    format!(
                        "region {i} holds {n} packets, its header says {}",
                        g.packets
                    ),
                ));
            }
        }
        Ok(())
    }
}
