//! Lower bounds on broadcast time and the paper's claimed upper bounds for CCC(h,k).
//!
//! | bound | why |
//! |-------|-----|
//! | `ecc(s)` | the farthest node is that many hops away |
//! | `⌈log2 n⌉` | the informed set at most doubles per step |
//! | neighbour-order bound | every node's informing chain starts with a direct send of the source, and the source's direct sends take distinct steps 1, 2, …; so for the best order `u_1, u_2, …` of the source's neighbours the time is at least `max_v min_i (i + dist(u_i, v))` (all orders tried for degree ≤ 5; skipped above) |
//!
//! Claims of the paper for CCC(h,k):
//!
//! | claim | value |
//! |-------|-------|
//! | Theorem 1, any source | `2k − 1 + 2⌈(h−1)/2⌉` |
//! | sharper claim, source `(c,k−1)` | `2k − 1 + ⌈(h−1)/2⌉` |
//! | Lemma 1, from `(c,k−1)` node `(c XOR 2^i, i)` | `2(k−i) − 1` |

use icn_topo::paths::bfs;
use icn_topo::{Graph, NodeId};

/// `⌈log2 n⌉`.
pub fn log2_bound(n: usize) -> u32 {
    usize::BITS - n.saturating_sub(1).leading_zeros()
}

/// Neighbour-order bound (see the module table); 0 for degree > 5.
pub fn neighbour_bound(g: &Graph, source: NodeId) -> u32 {
    let nb = g.neighbours(source);
    if nb.is_empty() || nb.len() > 5 {
        return 0;
    }
    let dists: Vec<Vec<u32>> = nb.iter().map(|&u| bfs(g, u)).collect();
    let mut order: Vec<usize> = (0..nb.len()).collect();
    let mut best = u32::MAX;
    permute(&mut order, 0, &mut |ord| {
        let worst = (0..g.len())
            .filter(|&v| v != source)
            .map(|v| {
                ord.iter()
                    .enumerate()
                    .map(|(i, &j)| i as u32 + 1 + dists[j][v])
                    .min()
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        best = best.min(worst);
    });
    best
}

fn permute(a: &mut Vec<usize>, i: usize, f: &mut impl FnMut(&[usize])) {
    if i == a.len() {
        f(a);
        return;
    }
    for j in i..a.len() {
        a.swap(i, j);
        permute(a, i + 1, f);
        a.swap(i, j);
    }
}

/// The best of the lower bounds above for one source.
pub fn lower_bound(g: &Graph, source: NodeId) -> u32 {
    let ecc = bfs(g, source).into_iter().max().unwrap_or(0);
    ecc.max(log2_bound(g.len())).max(neighbour_bound(g, source))
}

/// Theorem 1: `2k − 1 + 2⌈(h−1)/2⌉`.
pub fn theorem1(h: usize, k: u32) -> u32 {
    2 * k - 1 + 2 * (h as u32 - 1).div_ceil(2)
}

/// The sharper claim from `(c, k−1)`: `2k − 1 + ⌈(h−1)/2⌉`.
pub fn sharp_claim(h: usize, k: u32) -> u32 {
    2 * k - 1 + (h as u32 - 1).div_ceil(2)
}

/// Lemma 1: steps from `(c,k−1)` to `(c XOR 2^i, i)`.
pub fn lemma1(k: u32, i: u32) -> u32 {
    2 * (k - i) - 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_topo::build::{hypercube, path, ring};

    #[test]
    fn log2_bound_values() {
        assert_eq!(log2_bound(1), 0);
        assert_eq!(log2_bound(2), 1);
        assert_eq!(log2_bound(5), 3);
        assert_eq!(log2_bound(64), 6);
        assert_eq!(log2_bound(65), 7);
    }

    #[test]
    fn claims_by_hand() {
        // CCC(4,3): 2·3 − 1 + 2·⌈3/2⌉ = 9; sharp 5 + 2 = 7; Lemma 1 for i = 0: 5.
        assert_eq!(theorem1(4, 3), 9);
        assert_eq!(sharp_claim(4, 3), 7);
        assert_eq!(lemma1(3, 0), 5);
        assert_eq!(lemma1(3, 2), 1);
    }

    #[test]
    fn neighbour_bound_is_sound_and_sometimes_sharper() {
        // Ring of 6 from 0: neighbours 1 and 5; best order gives max(3, 1+... ) = 3 = ⌈6/2⌉.
        assert_eq!(neighbour_bound(&ring(6).unwrap(), 0), 3);
        // Path from the middle of 7 nodes: 1 + 3 = 4 > ecc = 3.
        assert_eq!(lower_bound(&path(7).unwrap(), 3), 4);
        assert_eq!(lower_bound(&hypercube(4).unwrap(), 0), 4);
    }
}
