//! Shared by the tests: where the traces are, a writer of small traces, and the replay
//! invariants checked against the trace read independently.
#![allow(dead_code)]

use icn_netrace::format::{Reader, Record, Region, write_header, write_record};
use icn_netrace::replay::Event;
use std::collections::HashMap;
use std::path::PathBuf;

/// The two small traces shipped with the tests.
pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A Netrace sample the repository keeps (`experiments/traces/netrace/`, with its licence).
/// Panics naming where it looked: a missing trace fails the test.
pub fn shared(name: &str) -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in here.ancestors() {
        let p = dir.join("experiments/traces/netrace").join(name);
        if p.exists() {
            return p;
        }
    }
    panic!(
        "{name} not found in experiments/traces/netrace/ above {}",
        here.display()
    );
}

/// Every record of a trace, read independently of the replay.
pub fn records(path: &std::path::Path) -> (icn_netrace::Header, Vec<(usize, Record)>) {
    let mut r = Reader::open(path).unwrap();
    let h = r.header().clone();
    let mut v = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        v.push((r.region(), rec));
    }
    (h, v)
}

/// The uncompressed bytes of a trace with one region holding `recs` (written by the crate's
/// writer; `headers_and_counts_of_the_sample_traces` checks the reader on netrace's own files).
pub fn write(nodes: u8, recs: &[Record]) -> Vec<u8> {
    let cycles = recs.last().map_or(0, |r| r.cycle + 1);
    let region = Region {
        offset: 0,
        cycles,
        packets: recs.len() as u64,
    };
    let mut b = Vec::new();
    write_header(&mut b, "test", nodes, cycles, "", &[region]).unwrap();
    for r in recs {
        write_record(&mut b, r).unwrap();
    }
    b
}

/// `bytes` bzip2-compressed into a temporary file named `name`.
pub fn compressed_file(name: &str, bytes: &[u8]) -> PathBuf {
    use std::io::Write;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let p = dir.join(name);
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(bytes).unwrap();
    std::fs::write(&p, e.finish().unwrap()).unwrap();
    p
}

/// The replay's invariants for the packets of `recs` (with `base` the replay's cycle 0):
/// every packet injected once and delivered once, never before its trace cycle, only after
/// every packet listing it was delivered (in a cycle before), and delivered no earlier than
/// injected. Returns the packets checked.
pub fn check(recs: &[(usize, Record)], base: u64, events: &[Event]) -> usize {
    let mut inj: HashMap<u32, u64> = HashMap::new();
    let mut del: HashMap<u32, u64> = HashMap::new();
    let mut last = 0;
    for e in events {
        match *e {
            Event::Injected { id, cycle } => {
                assert!(inj.insert(id, cycle).is_none(), "{id} injected twice");
                assert!(cycle >= last, "events out of time order");
                last = cycle;
            }
            Event::Delivered { id, cycle } => {
                assert!(del.insert(id, cycle).is_none(), "{id} delivered twice");
                assert!(cycle >= inj[&id], "{id} delivered before injected");
                assert!(cycle >= last, "events out of time order");
                last = cycle;
            }
        }
    }
    let ids: HashMap<u32, &Record> = recs.iter().map(|(_, r)| (r.id, r)).collect();
    assert_eq!(inj.len(), recs.len(), "packets injected");
    assert_eq!(del.len(), recs.len(), "packets delivered");
    for (_, r) in recs {
        let i = inj[&r.id];
        assert!(
            i >= r.cycle - base,
            "{} injected at {i} before its cycle",
            r.id
        );
        for d in &r.dependents {
            if ids.contains_key(d) {
                assert!(
                    inj[d] > del[&r.id],
                    "{d} injected at {} though {} was delivered at {}",
                    inj[d],
                    r.id,
                    del[&r.id]
                );
            }
        }
    }
    recs.len()
}
