//! Allocators of the VC router: match requesters (input VCs, input ports) to resources
//! (output VCs, output ports), at most one each, in one clock.
//!
//! Requests are bitmasks (≤ 64 resources). Two kinds, as in BookSim:
//!
//! | kind          | step 1                                     | step 2                                      | pointers move              |
//! |---------------|--------------------------------------------|---------------------------------------------|----------------------------|
//! | `round_robin` | each input picks one requested output (RR) | each output grants one input that picked it (RR) | past the winner, on a grant |
//! | `islip`       | each output grants one requesting input (RR) | each input accepts one granting output (RR) | past the winner, only on accept (iSLIP's rule) |
//!
//! Both are single-iteration separable allocators; iSLIP's "update only on accept" is what
//! de-synchronises the output pointers under load.

// Indices address several parallel arrays (struct of arrays), so index loops are clearer.
#![allow(clippy::needless_range_loop)]

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllocKind {
    #[default]
    RoundRobin,
    Islip,
}

/// The first set bit of `mask` at or after `ptr`, wrapping (round-robin arbitration).
#[inline]
pub fn rr_pick(mask: u64, ptr: u32) -> Option<u32> {
    if mask == 0 {
        return None;
    }
    let hi = if ptr >= 64 { 0 } else { mask & (!0u64 << ptr) };
    Some(if hi != 0 {
        hi.trailing_zeros()
    } else {
        mask.trailing_zeros()
    })
}

/// [`rr_pick`] for a non-empty `mask` and a pointer below 64 (all the routers' pointers):
/// a select instead of branches.
#[inline]
pub fn rr_first(mask: u64, ptr: u8) -> u32 {
    debug_assert!(mask != 0 && ptr < 64);
    let hi = mask & (u64::MAX << (ptr & 63));
    (if hi != 0 { hi } else { mask }).trailing_zeros()
}

/// Round-robin picks among five positions by table: `RR5[ptr << 5 | mask]` is the first set
/// bit of `mask` at or after `ptr`, wrapping (as [`rr_pick`]), or 5 for an empty mask. 256
/// entries, so that an index computed in a `u8` needs no bounds check (pointers are below 8).
const RR5: [u8; 256] = {
    let mut t = [5u8; 256];
    let mut ptr = 0;
    while ptr < 5 {
        let mut mask = 1;
        while mask < 32 {
            let mut k = 0;
            while k < 5 {
                let b = (ptr + k) % 5;
                if mask >> b & 1 != 0 {
                    t[ptr << 5 | mask] = b as u8;
                    break;
                }
                k += 1;
            }
            mask += 1;
        }
        ptr += 1;
    }
    t
};

/// `NEXT5[w]`: the pointer past winner `w` among five positions (index 5..8: padding).
const NEXT5: [u8; 8] = [1, 2, 3, 4, 0, 0, 0, 0];

/// An output's pointer after its round-robin pick: `PAST5[ptr << 5 | mask]` is the pointer
/// past the winner, or `ptr` itself when `mask` is empty (no grant, no move).
const PAST5: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = if i & 31 == 0 || RR5[i] >= 5 {
            (i >> 5) as u8
        } else {
            NEXT5[RR5[i] as usize]
        };
        i += 1;
    }
    t
};

/// The table index of a pointer (below 8) and a mask of five bits.
#[inline(always)]
fn at5(ptr: u8, mask: u8) -> usize {
    usize::from(ptr << 5 | mask)
}

/// The round-robin arm of [`allocate`] for 5 inputs × 5 outputs (the switch of a 2-D mesh
/// router), with the same picks and pointer updates, but by table look-ups instead of
/// branches: under load the requests change every cycle, so the branches of the general
/// version mispredict often. `req[i]`: input i's outputs (bits 0..5); pointers in `0..5`
/// (entries 5..8 are scratch); returns the mask of granted inputs, `grant[i]` holding the
/// output of each.
#[inline(always)]
pub fn rr_allocate5(req: &[u8; 8], in_ptr: &mut [u8; 8], out_ptr: &mut [u8; 8]) -> (u64, u64) {
    // Step 1: inputs choose; byte o of `chose`: the inputs that chose output o (byte 5:
    // none). One register rather than a byte array: reading the bytes back after five byte
    // stores stalled store forwarding.
    let mut chose = 0u64;
    for i in 0..5 {
        let o = RR5[at5(in_ptr[i], req[i])];
        chose |= 1 << (8 * u32::from(o & 7) + i as u32);
    }
    // Step 2: outputs grant; an output nobody chose picks "input 5", whose writes land in
    // the scratch slots, and keeps its pointer (`PAST5`), so no branch is needed.
    // The grants go to a register as well (byte i: input i's output), not to memory at
    // computed addresses that later loads would have to wait for.
    let mut granted = 0u64;
    let mut grant = 0u64;
    for o in 0..5 {
        let k = at5(out_ptr[o], (chose >> (8 * o)) as u8);
        let i = usize::from(RR5[k] & 7);
        grant |= (o as u64) << (8 * i);
        in_ptr[i] = NEXT5[o];
        out_ptr[o] = PAST5[k];
        granted |= 1 << i;
    }
    (granted & 31, grant)
}

/// `SPREAD5[m]`: the five bits of `m` moved to bit 0 of bytes 0..5 (bit `o` to bit `8·o`),
/// so that shifting by an input's index and or-ing transposes a 5×5 request matrix.
const SPREAD5: [u64; 32] = {
    let mut t = [0u64; 32];
    let mut m = 0;
    while m < 32 {
        let mut o = 0;
        while o < 5 {
            t[m] |= ((m as u64 >> o) & 1) << (8 * o);
            o += 1;
        }
        m += 1;
    }
    t
};

/// The iSLIP arm of [`allocate`] for 5 inputs × 5 outputs, as [`rr_allocate5`] is its
/// round-robin arm: the same grants and pointer updates by table look-ups and selects,
/// with the request matrix transposed in a register. `req[i]`: input i's outputs (bits
/// 0..5); pointers in `0..5` (entries 5..8 are scratch: an output that grants nobody and
/// an input that accepts nothing write there); returns the mask of granted (accepting)
/// inputs and, in byte i, the output each accepted.
#[inline(always)]
pub fn islip_allocate5(req: &[u8; 8], in_ptr: &mut [u8; 8], out_ptr: &mut [u8; 8]) -> (u64, u64) {
    // Byte o of `asking`: the inputs requesting output o.
    let mut asking = 0u64;
    for i in 0..5 {
        asking |= SPREAD5[usize::from(req[i] & 31)] << i;
    }
    // Step 1: each output grants one requesting input from its pointer (an output nobody
    // asks grants "input 5": byte 5 of `granted`, never read). Pointers do not move yet.
    let mut granted = 0u64; // byte i: the outputs that granted input i
    for o in 0..5 {
        let i = RR5[at5(out_ptr[o], (asking >> (8 * o)) as u8)];
        granted |= 1 << (8 * u32::from(i & 7) + o as u32);
    }
    // Step 2: each input accepts one grant from its pointer; both pointers move past the
    // match, only on acceptance (an input without grants picks "output 5", keeps its
    // pointer by `PAST5`, and writes the scratch entry of `out_ptr`).
    let mut accepted = 0u64;
    let mut grant = 0u64;
    for i in 0..5 {
        let g = (granted >> (8 * i)) as u8 & 31;
        let k = at5(in_ptr[i], g);
        let o = RR5[k] & 7;
        grant |= u64::from(o) << (8 * i);
        accepted |= u64::from(g != 0) << i;
        in_ptr[i] = PAST5[k];
        out_ptr[usize::from(o)] = NEXT5[i];
    }
    (accepted, grant)
}

/// Pointer past `winner` among `n` positions.
#[inline]
fn past(winner: u32, n: usize) -> u8 {
    ((winner as usize + 1) % n) as u8
}

/// Matches inputs to outputs. `requests[i]` is input i's mask of outputs; `in_ptr`/`out_ptr`
/// are the arbiters' pointers (one per input / output, updated in place); `grant[i]` receives
/// the matched output of input i (or `u8::MAX`). `n_out ≤ N` outputs and `≤ N` inputs exist
/// (`N` sizes the scratch arrays on the stack).
#[inline(always)]
pub fn allocate<const N: usize>(
    kind: AllocKind,
    requests: &[u64],
    n_out: usize,
    in_ptr: &mut [u8],
    out_ptr: &mut [u8],
    grant: &mut [u8],
) {
    let n_in = requests.len();
    grant[..n_in].fill(u8::MAX);
    match kind {
        AllocKind::RoundRobin => {
            // Step 1: inputs choose; record per output the mask of inputs that chose it.
            // (Plain loops: measured faster than bit iteration for ≤ 40 requesters.)
            let mut chose = [0u64; N];
            for (i, &m) in requests.iter().enumerate() {
                if let Some(o) = rr_pick(m, u32::from(in_ptr[i])) {
                    chose[o as usize] |= 1 << i;
                }
            }
            for o in 0..n_out {
                if let Some(i) = rr_pick(chose[o], u32::from(out_ptr[o])) {
                    grant[i as usize] = o as u8;
                    out_ptr[o] = past(i, n_in);
                    in_ptr[i as usize] = past(o as u32, n_out);
                }
            }
        }
        AllocKind::Islip => islip::<N>(requests, n_out, in_ptr, out_ptr, grant),
    }
}

/// The iSLIP arm, kept out of line so that the round-robin path's code stays as small as it was.
#[inline(never)]
fn islip<const N: usize>(
    requests: &[u64],
    n_out: usize,
    in_ptr: &mut [u8],
    out_ptr: &mut [u8],
    grant: &mut [u8],
) {
    let n_in = requests.len();
    // Step 1: each output grants one of the inputs that request it. The request
    // matrix is transposed by walking set bits, so the cost follows the number of
    // requests rather than inputs × outputs.
    let mut inputs = 0u64;
    for (i, &m) in requests.iter().enumerate() {
        if m != 0 {
            inputs |= 1 << i;
        }
    }
    let mut asking = [0u64; N]; // per output: requesting inputs
    let mut outputs = 0u64;
    for i in bits(inputs) {
        for o in bits(requests[i]) {
            asking[o] |= 1 << i;
            outputs |= 1 << o;
        }
    }
    let mut granted = [0u64; N]; // per input: outputs that granted it
    let mut accepting = 0u64;
    for o in bits(outputs) {
        let i = rr_first(asking[o], out_ptr[o]) as usize;
        granted[i] |= 1 << o;
        accepting |= 1 << i;
    }
    // Step 2: each input accepts one grant; pointers move only on acceptance.
    for i in bits(accepting) {
        let o = rr_first(granted[i], in_ptr[i]);
        grant[i] = o as u8;
        in_ptr[i] = past(o, n_out);
        out_ptr[o as usize] = past(i as u32, n_in);
    }
}

/// The indices of the set bits of `mask`, lowest first.
#[inline]
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let b = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            b
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rr_pick_wraps() {
        assert_eq!(rr_pick(0b1010, 0), Some(1));
        assert_eq!(rr_pick(0b1010, 2), Some(3));
        assert_eq!(rr_pick(0b1010, 4), Some(1));
        assert_eq!(rr_pick(0, 3), None);
    }

    #[test]
    fn rr_pick_matches_a_plain_scan() {
        let naive = |mask: u64, ptr: u32| -> Option<u32> {
            let start = if ptr >= 64 { 0 } else { ptr };
            (0..64)
                .map(|d| (start + d) % 64)
                .find(|&b| mask >> b & 1 == 1)
        };
        let masks = (0..1u64 << 10).chain([1 << 63, u64::MAX, 0x8000_0000_0000_0001, 0xf0f0 << 40]);
        for mask in masks {
            for ptr in [0, 1, 2, 5, 9, 10, 39, 40, 62, 63, 64, 65, 200] {
                assert_eq!(
                    rr_pick(mask, ptr),
                    naive(mask, ptr),
                    "mask {mask:#x} ptr {ptr}"
                );
                if mask != 0 && ptr < 64 {
                    assert_eq!(Some(rr_first(mask, ptr as u8)), naive(mask, ptr));
                }
            }
        }
    }

    #[test]
    fn rr_allocate5_matches_the_general_round_robin() {
        // Every pointer state reached from random requests over many rounds: same grants,
        // same pointers as `allocate`.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let (mut ip, mut op) = ([0u8; 5], [0u8; 5]);
        let (mut ip8, mut op8) = ([0u8; 8], [0u8; 8]);
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let req: [u64; 5] = std::array::from_fn(|i| x >> (5 * i) & 31);
            let mut g = [u8::MAX; 5];
            allocate::<5>(AllocKind::RoundRobin, &req, 5, &mut ip, &mut op, &mut g);
            let req8: [u8; 8] = std::array::from_fn(|i| if i < 5 { req[i] as u8 } else { 0 });
            let (granted, g8) = rr_allocate5(&req8, &mut ip8, &mut op8);
            let g8 = g8.to_le_bytes();
            for i in 0..5 {
                assert_eq!(granted >> i & 1 == 1, g[i] != u8::MAX, "{req:?}");
                if g[i] != u8::MAX {
                    assert_eq!(g8[i], g[i], "{req:?}");
                }
            }
            assert_eq!((&ip8[..5], &op8[..5]), (&ip[..], &op[..]));
        }
    }

    #[test]
    fn islip_allocate5_matches_the_general_islip() {
        // Every pointer state reached from random requests over many rounds (sparse and
        // dense request matrices): same grants, same pointers as `allocate`.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let (mut ip, mut op) = ([0u8; 5], [0u8; 5]);
        let (mut ip8, mut op8) = ([0u8; 8], [0u8; 8]);
        for round in 0..40_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let sparse = if round % 2 == 0 { x >> 25 } else { u64::MAX };
            let req: [u64; 5] = std::array::from_fn(|i| x >> (5 * i) & sparse >> (5 * i) & 31);
            let mut g = [u8::MAX; 5];
            allocate::<5>(AllocKind::Islip, &req, 5, &mut ip, &mut op, &mut g);
            let req8: [u8; 8] = std::array::from_fn(|i| if i < 5 { req[i] as u8 } else { 0 });
            let (granted, g8) = islip_allocate5(&req8, &mut ip8, &mut op8);
            let g8 = g8.to_le_bytes();
            for i in 0..5 {
                assert_eq!(granted >> i & 1 == 1, g[i] != u8::MAX, "{req:?}");
                if g[i] != u8::MAX {
                    assert_eq!(g8[i], g[i], "{req:?}");
                }
            }
            assert_eq!(granted >> 5, 0);
            assert_eq!((&ip8[..5], &op8[..5]), (&ip[..], &op[..]));
        }
    }

    fn run(kind: AllocKind, reqs: &[u64], n_out: usize, rounds: usize) -> Vec<Vec<u8>> {
        let mut ip = vec![0u8; reqs.len()];
        let mut op = vec![0u8; n_out];
        let mut g = vec![0u8; reqs.len()];
        (0..rounds)
            .map(|_| {
                allocate::<8>(kind, reqs, n_out, &mut ip, &mut op, &mut g);
                g.clone()
            })
            .collect()
    }

    #[test]
    fn matches_are_exclusive_and_fair() {
        for kind in [AllocKind::RoundRobin, AllocKind::Islip] {
            // Three inputs all want output 0: they take turns.
            let rounds = run(kind, &[1, 1, 1], 2, 6);
            let winners: Vec<usize> = rounds
                .iter()
                .map(|g| g.iter().position(|&o| o == 0).unwrap())
                .collect();
            assert_eq!(winners, vec![0, 1, 2, 0, 1, 2], "{kind:?}");
            for g in &rounds {
                assert_eq!(g.iter().filter(|&&o| o == 0).count(), 1);
            }
        }
    }

    #[test]
    fn islip_desynchronises_to_a_full_match() {
        // Two inputs, each requesting both outputs: iSLIP reaches a perfect match after the
        // first round and keeps it; both allocators never grant an output twice.
        let rounds = run(AllocKind::Islip, &[0b11, 0b11], 2, 4);
        for g in &rounds[1..] {
            assert!(g[0] != u8::MAX && g[1] != u8::MAX && g[0] != g[1], "{g:?}");
        }
        for g in run(AllocKind::RoundRobin, &[0b11, 0b11], 2, 4) {
            assert!(g[0] == u8::MAX || g[0] != g[1]);
        }
    }
}
