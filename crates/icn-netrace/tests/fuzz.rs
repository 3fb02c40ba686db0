//! Property tests: the reader never panics on any bytes (random, or a valid trace mutated),
//! every error names a byte inside the stream; and random valid traces replay with every
//! packet delivered once, none before its trace cycle or its listers' delivery.

mod common;

use icn_fabric::ideal::IdealConfig;
use icn_netrace::format::{PacketType, Reader, Record};
use icn_netrace::replay::{Plan, replay};
use icn_netrace::scan::scan;
use proptest::prelude::*;

/// Reads everything; returns the error's byte offset, if any.
fn read_all(bytes: &[u8]) -> Option<u64> {
    match Reader::new(bytes) {
        Err(e) => Some(e.offset),
        Ok(r) => scan(r).err().map(|e| e.offset),
    }
}

/// A valid trace of `n` packets on `nodes` nodes: cycles non-decreasing, ids increasing with
/// gaps, each packet listing some later ones.
fn trace() -> impl Strategy<Value = (u8, Vec<Record>)> {
    (2u8..=16, 1usize..40).prop_flat_map(|(nodes, n)| {
        let packets = prop::collection::vec(
            (
                0u64..30,
                1u32..3,
                0..nodes,
                0..nodes,
                prop::sample::select(vec![1u8, 2, 6, 13, 14, 27]),
                prop::collection::vec(1usize..6, 0..4),
            ),
            n,
        );
        (Just(nodes), packets).prop_map(|(nodes, ps)| {
            let mut cycle = 0;
            let mut id = 0;
            let mut recs: Vec<Record> = ps
                .iter()
                .map(|&(dc, di, src, dst, kind, _)| {
                    cycle += dc;
                    id += di;
                    Record {
                        cycle,
                        id,
                        addr: id * 64,
                        kind: PacketType(kind),
                        src,
                        dst,
                        node_types: 0,
                        dependents: Vec::new(),
                    }
                })
                .collect();
            // Dependents: packets a few places later in the file.
            for (i, (.., ahead)) in ps.iter().enumerate() {
                let mut deps: Vec<u32> = ahead
                    .iter()
                    .filter_map(|&k| recs.get(i + k).map(|r| r.id))
                    .collect();
                deps.dedup();
                recs[i].dependents = deps;
            }
            (nodes, recs)
        })
    })
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        if let Some(at) = read_all(&bytes) {
            prop_assert!(at <= bytes.len() as u64);
        }
    }

    #[test]
    fn a_random_body_after_a_valid_header_never_panics(
        body in prop::collection::vec(any::<u8>(), 0..400),
    ) {
        let mut b = common::write(64, &[]);
        // Claim a region of many packets so the body is read as records.
        let n = b.len();
        b[n - 8..].copy_from_slice(&3u64.to_le_bytes());
        b[48..56].copy_from_slice(&3u64.to_le_bytes());
        b.extend(&body);
        if let Some(at) = read_all(&b) {
            prop_assert!(at <= b.len() as u64);
        }
    }

    #[test]
    fn mutated_valid_traces_never_panic(
        (nodes, recs) in trace(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut b = common::write(nodes, &recs);
        prop_assert_eq!(read_all(&b), None);
        for (at, v) in flips {
            let i = at.index(b.len());
            b[i] = v;
        }
        if truncate {
            b.truncate(cut.index(b.len()));
        }
        if let Some(at) = read_all(&b) {
            prop_assert!(at <= b.len() as u64);
        }
    }

    #[test]
    fn random_traces_replay_closed_loop((nodes, recs) in trace()) {
        let bytes = common::write(nodes, &recs);
        let mut r = Reader::new(&bytes[..]).unwrap();
        let mut fabric = IdealConfig {
            topology: "mesh:4x4".into(),
            hop_ns: 0.002,
            link_mbs: 1e6,
            contention: true,
            max_packet: 4096,
            window: 0,
        }
        .build()
        .unwrap();
        let plan = Plan { first: 0, last: 0, map: (0..usize::from(nodes)).collect() };
        let mut events = Vec::new();
        replay(&mut r, &mut fabric, &plan, &mut |e| events.push(e)).unwrap();
        let recs: Vec<(usize, Record)> = recs.into_iter().map(|r| (0, r)).collect();
        prop_assert_eq!(common::check(&recs, 0, &events), recs.len());
    }
}

/// Corrupt bzip2 streams: an error, never a panic.
#[test]
fn corrupt_bzip2_is_an_error() {
    let good = std::fs::read(common::data("example.tra.bz2")).unwrap();
    for at in [0, 4, 10, 40, good.len() / 2, good.len() - 5] {
        let mut b = good.clone();
        b[at] ^= 0x5A;
        let path = std::env::temp_dir().join(format!("icn-netrace-bz-{}-{at}", std::process::id()));
        std::fs::write(&path, &b).unwrap();
        let res = Reader::open(&path).and_then(scan);
        std::fs::remove_file(&path).ok();
        assert!(res.is_err(), "corruption at {at} went unnoticed");
    }
    // Cut short.
    let path = std::env::temp_dir().join(format!("icn-netrace-bz-cut-{}", std::process::id()));
    std::fs::write(&path, &good[..good.len() / 2]).unwrap();
    let res = Reader::open(&path).and_then(scan);
    std::fs::remove_file(&path).ok();
    assert!(res.is_err());
}
