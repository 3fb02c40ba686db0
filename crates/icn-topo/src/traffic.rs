//! Traffic patterns: the destination of a packet as a pure function of its source terminal and
//! the caller's RNG (only the random patterns draw from it), on any [`Network`].
//!
//! | pattern | destination of source `s` (`n` terminals) | needs |
//! |---|---|---|
//! | `uniform` | uniform over all `n`, `s` included (BookSim's convention) | — |
//! | `random_permutation` | `π(s)` for a permutation `π` fixed by the seed; `π` may have fixed points, as BookSim's `randperm` | — |
//! | `transpose` | `(y, x)` on a square 2-D mesh or torus with one terminal per router; otherwise the two halves of the address bits swapped | a square grid, or `n = 4^m` |
//! | `bit_complement` | `s XOR (n − 1)` | `n` a power of two |
//! | `group_shift` | a uniform terminal of the next group: group `(G + 1) mod g` (Kim et al.'s adversarial pattern, which loads one global link per group pair) | a dragonfly |
//!
//! The random permutation costs no memory: `π` is a 4-round Feistel network over the smallest
//! even-bit domain holding `n` values, restricted to `0..n` by cycle walking (re-applying it
//! until the value falls in range, which keeps it a bijection). Its round keys come from the seed.

use crate::TopoError;
use crate::network::{Network, Shape, TerminalId};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// A destination pattern.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    #[default]
    Uniform,
    RandomPermutation,
    Transpose,
    BitComplement,
    GroupShift,
}

#[derive(Clone, Debug)]
enum Rule {
    Uniform,
    Permutation(Feistel),
    GridTranspose { side: u32 },
    BitTranspose { half: u32 },
    Complement,
    GroupShift { size: u32, groups: u32 },
}

/// A pattern bound to a network: validated once, then [`Traffic::destination`] per packet.
#[derive(Clone, Debug)]
pub struct Traffic {
    n: u32,
    rule: Rule,
}

impl Traffic {
    /// `pattern` on `net`; `seed` fixes the random permutation (other patterns ignore it).
    pub fn new(pattern: Pattern, net: &Network, seed: u64) -> Result<Traffic, TopoError> {
        let n = net.terminals();
        let err = |m: String| TopoError::parameter("traffic", m);
        let rule = match pattern {
            Pattern::Uniform => Rule::Uniform,
            Pattern::RandomPermutation => Rule::Permutation(Feistel::new(n, seed)),
            Pattern::Transpose => match net.shape() {
                Shape::Cube { dims, .. }
                    if dims.len() == 2 && dims[0] == dims[1] && net.terminals_per_router() == 1 =>
                {
                    Rule::GridTranspose { side: dims[0] }
                }
                _ if n.is_power_of_two() && n.trailing_zeros().is_multiple_of(2) => {
                    Rule::BitTranspose {
                        half: n.trailing_zeros() / 2,
                    }
                }
                _ => {
                    return Err(err(format!(
                        "transpose needs a square 2-D mesh or torus with one terminal per router, or 4^m terminals; got {n}"
                    )));
                }
            },
            Pattern::BitComplement if n.is_power_of_two() => Rule::Complement,
            Pattern::BitComplement => {
                return Err(err(format!(
                    "bit_complement needs a power-of-two number of terminals, got {n}"
                )));
            }
            Pattern::GroupShift => match *net.shape() {
                Shape::Dragonfly { p, a, h, .. } => Rule::GroupShift {
                    size: p * a,
                    groups: a * h + 1,
                },
                _ => return Err(err("group_shift needs a dragonfly".into())),
            },
        };
        Ok(Traffic { n, rule })
    }

    /// Destination of a packet from `src` (`src < n`).
    pub fn destination<R: Rng + ?Sized>(&self, src: TerminalId, rng: &mut R) -> TerminalId {
        match &self.rule {
            Rule::Uniform => rng.random_range(0..self.n),
            Rule::Permutation(f) => f.apply(src),
            Rule::GridTranspose { side } => (src % side) * side + src / side,
            Rule::BitTranspose { half } => {
                let low = src & ((1 << half) - 1);
                (low << half) | (src >> half)
            }
            Rule::Complement => src ^ (self.n - 1),
            Rule::GroupShift { size, groups } => {
                let next = (src / size + 1) % groups;
                next * size + rng.random_range(0..*size)
            }
        }
    }
}

/// A keyed bijection of `0..n` (see the module doc).
#[derive(Clone, Debug)]
struct Feistel {
    n: u64,
    half: u32,
    keys: [u64; 4],
}

/// SplitMix64's finaliser: a well-mixed 64-bit hash.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Feistel {
    fn new(n: u32, seed: u64) -> Feistel {
        let bits = 64 - u64::from(n.max(2) - 1).leading_zeros();
        let half = bits.div_ceil(2);
        let mut s = seed;
        let keys = [0; 4].map(|_: u64| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix(s)
        });
        Feistel {
            n: u64::from(n),
            half,
            keys,
        }
    }

    fn round_trip(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for k in self.keys {
            let f = mix(r ^ k) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half) | r
    }

    fn apply(&self, x: TerminalId) -> TerminalId {
        let mut y = self.round_trip(u64::from(x));
        while y >= self.n {
            y = self.round_trip(y);
        }
        y as TerminalId
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    fn rng() -> Pcg64 {
        Pcg64::seed_from_u64(7)
    }

    #[test]
    fn transpose_by_hand() {
        let mesh = Network::mesh(6, 6).unwrap();
        let t = Traffic::new(Pattern::Transpose, &mesh, 0).unwrap();
        // (1,2) = 13 → (2,1) = 8.
        assert_eq!(t.destination(13, &mut rng()), 8);
        let q = Network::hypercube(4, 1).unwrap();
        let t = Traffic::new(Pattern::Transpose, &q, 0).unwrap();
        assert_eq!(t.destination(0b0111, &mut rng()), 0b1101);
        let e = Traffic::new(Pattern::Transpose, &Network::mesh(4, 3).unwrap(), 0).unwrap_err();
        assert!(e.to_string().contains("square"), "{e}");
    }

    #[test]
    fn bit_complement_by_hand() {
        let q = Network::hypercube(4, 1).unwrap();
        let t = Traffic::new(Pattern::BitComplement, &q, 0).unwrap();
        assert_eq!(t.destination(5, &mut rng()), 10);
        let e = Traffic::new(Pattern::BitComplement, &Network::mesh(4, 3).unwrap(), 0).unwrap_err();
        assert!(
            e.to_string()
                .contains("power-of-two number of terminals, got 12"),
            "{e}"
        );
    }

    #[test]
    fn group_shift_sends_every_group_to_the_next() {
        // dragonfly(1, 2, 2): 5 groups of 2 terminals.
        let net = Network::dragonfly(1, 2, 2).unwrap();
        let t = Traffic::new(Pattern::GroupShift, &net, 0).unwrap();
        let mut r = rng();
        let mut hit = [false; 10];
        for _ in 0..100 {
            for s in 0..10 {
                let d = t.destination(s, &mut r);
                assert_eq!(d / 2, (s / 2 + 1) % 5, "{s} → {d}");
                hit[d as usize] = true;
            }
        }
        assert!(hit.iter().all(|&h| h));
        let e = Traffic::new(Pattern::GroupShift, &Network::mesh(4, 4).unwrap(), 0).unwrap_err();
        assert!(e.to_string().contains("needs a dragonfly"));
    }

    #[test]
    fn uniform_reaches_every_terminal() {
        let net = Network::fat_tree(2, 3).unwrap();
        let t = Traffic::new(Pattern::Uniform, &net, 0).unwrap();
        let mut r = rng();
        let mut count = [0u32; 8];
        for _ in 0..8000 {
            count[t.destination(3, &mut r) as usize] += 1;
        }
        assert!(count.iter().all(|&c| (800..1200).contains(&c)), "{count:?}");
    }

    #[test]
    fn permutation_depends_on_the_seed_only() {
        let net = Network::mesh(8, 8).unwrap();
        let perm = |seed| {
            let t = Traffic::new(Pattern::RandomPermutation, &net, seed).unwrap();
            (0..64)
                .map(|s| t.destination(s, &mut rng()))
                .collect::<Vec<_>>()
        };
        assert_eq!(perm(1), perm(1));
        assert_ne!(perm(1), perm(2));
        // Not the identity nor a shift: at most a few fixed points.
        assert!(
            perm(1)
                .iter()
                .enumerate()
                .filter(|&(i, &d)| i as u32 == d)
                .count()
                < 8
        );
    }

    proptest! {
        #[test]
        fn random_permutation_is_a_bijection(n in 1u32..3000, seed in any::<u64>()) {
            let net = Network::cube(&[n.max(2)], false, 1).unwrap();
            let n = net.terminals();
            let t = Traffic::new(Pattern::RandomPermutation, &net, seed).unwrap();
            let mut seen = vec![false; n as usize];
            for s in 0..n {
                let d = t.destination(s, &mut rng());
                prop_assert!(d < n);
                prop_assert!(!std::mem::replace(&mut seen[d as usize], true), "{} hit twice", d);
            }
        }

        #[test]
        fn deterministic_patterns_are_permutations(m in 1u32..5, side in 2u32..9) {
            let q = Network::hypercube(2 * m, 1).unwrap();
            let g = Network::torus(side.max(3), side.max(3)).unwrap();
            for (net, pattern) in [(&q, Pattern::Transpose), (&q, Pattern::BitComplement), (&g, Pattern::Transpose)] {
                let t = Traffic::new(pattern, net, 0).unwrap();
                let n = net.terminals();
                let mut seen = vec![false; n as usize];
                for s in 0..n {
                    let d = t.destination(s, &mut rng());
                    prop_assert!(!std::mem::replace(&mut seen[d as usize], true));
                    // All three are involutions.
                    prop_assert_eq!(t.destination(d, &mut rng()), s);
                }
            }
        }
    }
}
