//! Writing Netrace v1 streams: for tests, fuzzing and generated workloads (a trace of any
//! length streams out as it streams in).

use super::{MAGIC, Record, Region};
use std::io::{self, Write};

/// Writes the header of a trace of `nodes` nodes named `benchmark` with `regions` (the
/// offsets of region headers are the caller's: [`record_bytes`] sums the records before).
pub fn write_header<W: Write>(
    w: &mut W,
    benchmark: &str,
    nodes: u8,
    cycles: u64,
    notes: &str,
    regions: &[Region],
) -> io::Result<()> {
    let mut name = [0u8; 30];
    let n = benchmark.len().min(29);
    name[..n].copy_from_slice(&benchmark.as_bytes()[..n]);
    let packets: u64 = regions.iter().map(|g| g.packets).sum();
    w.write_all(&MAGIC.to_le_bytes())?;
    w.write_all(&1.0f32.to_le_bytes())?;
    w.write_all(&name)?;
    w.write_all(&[nodes, 0])?;
    w.write_all(&cycles.to_le_bytes())?;
    w.write_all(&packets.to_le_bytes())?;
    let notes_len = u32::try_from(notes.len() + 1).map_err(io::Error::other)?;
    w.write_all(&notes_len.to_le_bytes())?;
    let nregions = u32::try_from(regions.len()).map_err(io::Error::other)?;
    w.write_all(&nregions.to_le_bytes())?;
    w.write_all(&[0u8; 8])?;
    w.write_all(notes.as_bytes())?;
    w.write_all(&[0])?;
    for g in regions {
        w.write_all(&g.offset.to_le_bytes())?;
        w.write_all(&g.cycles.to_le_bytes())?;
        w.write_all(&g.packets.to_le_bytes())?;
    }
    Ok(())
}

/// Writes one packet record.
pub fn write_record<W: Write>(w: &mut W, r: &Record) -> io::Result<()> {
    let deps = u8::try_from(r.dependents.len()).map_err(io::Error::other)?;
    w.write_all(&r.cycle.to_le_bytes())?;
    w.write_all(&r.id.to_le_bytes())?;
    w.write_all(&r.addr.to_le_bytes())?;
    w.write_all(&[r.kind.0, r.src, r.dst, r.node_types, deps])?;
    for d in &r.dependents {
        w.write_all(&d.to_le_bytes())?;
    }
    Ok(())
}

/// Bytes a record takes in the stream.
pub fn record_bytes(r: &Record) -> u64 {
    super::PACKET_BYTES + 4 * r.dependents.len() as u64
}

/// Writes `records` as a one-region, bzip2-compressed trace file at `path` (through a
/// temporary file renamed into place).
pub fn write_file(
    path: &std::path::Path,
    benchmark: &str,
    nodes: u8,
    records: &[Record],
) -> io::Result<()> {
    let cycles = records.last().map_or(0, |r| r.cycle + 1);
    let region = Region {
        offset: 0,
        cycles,
        packets: records.len() as u64,
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let file = std::fs::File::create(&tmp)?;
    let mut w = bzip2::write::BzEncoder::new(io::BufWriter::new(file), bzip2::Compression::best());
    write_header(&mut w, benchmark, nodes, cycles, "", &[region])?;
    for r in records {
        write_record(&mut w, r)?;
    }
    w.finish()?.flush()?;
    std::fs::rename(&tmp, path)
}
