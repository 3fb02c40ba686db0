//! Traffic patterns: [`TrafficPattern`], the one `traffic.pattern` type of every model and
//! fabric, and the destination of a packet as a pure function of its source terminal and the
//! caller's RNG (only the random patterns draw from it), on any [`Network`].
//!
//! Names are BookSim2's where BookSim2 has the pattern (its spellings `randperm` and `bitcomp`
//! are accepted for `random_permutation` and `bit_complement`). Bound to a network by
//! [`Traffic::new`]:
//!
//! | pattern | destination of source `s` (`n` terminals) | needs |
//! |---|---|---|
//! | `uniform` | uniform over all `n`, `s` included (BookSim's convention) | — |
//! | `random_permutation` | `π(s)` for a permutation `π` fixed by the seed; `π` may have fixed points, as BookSim's `randperm` | — |
//! | `transpose` | `(y, x)` on a square 2-D mesh or torus with one terminal per router; otherwise the two halves of the address bits swapped | a square grid, or `n = 4^m` |
//! | `bit_complement` | `s XOR (n − 1)` (BookSim2's `bitcomp`) | `n` a power of two |
//! | `group_shift` | a uniform terminal of the next group: group `(G + 1) mod g` (Kim et al.'s adversarial pattern, which loads one global link per group pair) | a dragonfly |
//! | `bitrev` | the `log₂ n` address bits of `s` reversed (BookSim2's `bitrev`) | `n` a power of two |
//! | `shuffle` | the address bits rotated left by one (BookSim2's `shuffle`) | `n` a power of two |
//! | `tornado` | every coordinate `x` of a k-ary n-cube to `(x + ⌈k/2⌉ − 1) mod k` (BookSim2's `tornado`: half-way round each ring, the worst case of minimal routing on a torus) | a mesh or torus, one terminal per router |
//! | `neighbor` | every coordinate to `x + 1 mod k` (BookSim2's `neighbor`; `neighbor_x` moves `x` only) | a mesh or torus, one terminal per router |
//! | `asymmetric` | `s mod n/2`, plus `n/2` with probability ½ (BookSim2's `asymmetric`: the upper half receives from everybody, the lower half only from itself) | — |
//!
//! Drawn by the generator that reads their keys (icn-fabric's open-loop harness, the SCI ring),
//! not bound here: `hotspot` (`hotspot_node` with probability `hotspot_fraction`), `trace` (the
//! rows of a trace file) and `neighbor_x` (`(x + 1 mod X, y)` on a 2-D grid, `s + 1 mod n`
//! without one).
//!
//! The BookSim2 permutations are also plain functions ([`bit_reverse`], [`shuffle`],
//! [`tornado`], [`neighbor`], [`asymmetric`]) for models that number their endpoints the same
//! way without an icn-topo network (the X-Switch).
//!
//! The random permutation costs no memory: `π` is a 4-round Feistel network over the smallest
//! even-bit domain holding `n` values, restricted to `0..n` by cycle walking (re-applying it
//! until the value falls in range, which keeps it a bijection). Its round keys come from the seed.

use crate::TopoError;
use crate::network::{Network, Shape, TerminalId};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// `traffic.pattern`: where generated traffic goes, one type for every model and fabric (the
/// module's tables). A model refuses by name the patterns its generator does not draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrafficPattern {
    #[default]
    Uniform,
    Hotspot,
    Transpose,
    #[serde(alias = "bitcomp")]
    BitComplement,
    /// The next endpoint along `x`: `(x + 1 mod X, y)` on a 2-D grid, `s + 1 mod n` without one
    /// (a ring's downstream node). Its earlier name `neighbour` (the X-Switch's and the SCI
    /// ring's) is still read. Not BookSim2's `neighbor`, which moves every coordinate: the
    /// two agree on a ring only.
    #[serde(alias = "neighbour")]
    NeighborX,
    Trace,
    #[serde(alias = "randperm")]
    RandomPermutation,
    GroupShift,
    #[serde(rename = "bitrev")]
    BitReverse,
    Shuffle,
    Tornado,
    Neighbor,
    Asymmetric,
}

impl TrafficPattern {
    /// The name a configuration writes.
    pub fn name(self) -> &'static str {
        match self {
            TrafficPattern::Uniform => "uniform",
            TrafficPattern::Hotspot => "hotspot",
            TrafficPattern::Transpose => "transpose",
            TrafficPattern::BitComplement => "bit_complement",
            TrafficPattern::NeighborX => "neighbor_x",
            TrafficPattern::Trace => "trace",
            TrafficPattern::RandomPermutation => "random_permutation",
            TrafficPattern::GroupShift => "group_shift",
            TrafficPattern::BitReverse => "bitrev",
            TrafficPattern::Shuffle => "shuffle",
            TrafficPattern::Tornado => "tornado",
            TrafficPattern::Neighbor => "neighbor",
            TrafficPattern::Asymmetric => "asymmetric",
        }
    }
}

/// BookSim2's `bitrev`: the `log₂ n` low bits of `s` in reverse order (`n` a power of two).
pub fn bit_reverse(s: u32, n: u32) -> u32 {
    let bits = n.trailing_zeros();
    if bits == 0 {
        return 0;
    }
    s.reverse_bits() >> (32 - bits)
}

/// BookSim2's `shuffle`: the `log₂ n` low bits of `s` rotated left by one (`n` a power of two).
pub fn shuffle(s: u32, n: u32) -> u32 {
    let shifted = s << 1;
    (shifted & (n - 1)) | u32::from(shifted & n != 0)
}

/// BookSim2's `tornado` on a k-ary n-cube with sides `dims` (dimension 0 least significant):
/// every coordinate `x` to `(x + ⌈k/2⌉ − 1) mod k`.
pub fn tornado(s: u32, dims: &[u32]) -> u32 {
    digits(s, dims, |x, k| (x + k.div_ceil(2) - 1) % k)
}

/// BookSim2's `neighbor` on a k-ary n-cube: every coordinate to `x + 1 mod k`.
pub fn neighbor(s: u32, dims: &[u32]) -> u32 {
    digits(s, dims, |x, k| (x + 1) % k)
}

/// BookSim2's `asymmetric`: `s mod n/2`, in the upper half when `upper` (a fair coin).
pub fn asymmetric(s: u32, n: u32, upper: bool) -> u32 {
    let half = (n / 2).max(1);
    (s % half + if upper { half } else { 0 }).min(n - 1)
}

fn digits(s: u32, dims: &[u32], f: impl Fn(u32, u32) -> u32) -> u32 {
    let (mut rest, mut stride, mut out) = (s, 1u32, 0u32);
    for &k in dims {
        out += f(rest % k, k) * stride;
        rest /= k;
        stride *= k;
    }
    out
}

#[derive(Clone, Debug)]
enum Rule {
    Uniform,
    Permutation(Feistel),
    GridTranspose { side: u32 },
    BitTranspose { half: u32 },
    Complement,
    GroupShift { size: u32, groups: u32 },
    BitReverse,
    Shuffle,
    Tornado { dims: Vec<u32> },
    Neighbor { dims: Vec<u32> },
    Asymmetric,
}

/// A pattern bound to a network: validated once, then [`Traffic::destination`] per packet.
#[derive(Clone, Debug)]
pub struct Traffic {
    n: u32,
    rule: Rule,
}

impl Traffic {
    /// `pattern` on `net`; `seed` fixes the random permutation (other patterns ignore it).
    /// `hotspot`, `trace` and `neighbor_x` are not bound (their generator draws them).
    pub fn new(pattern: TrafficPattern, net: &Network, seed: u64) -> Result<Traffic, TopoError> {
        let n = net.terminals();
        let err = |m: String| TopoError::parameter("traffic", m);
        let rule = match pattern {
            TrafficPattern::Hotspot | TrafficPattern::Trace | TrafficPattern::NeighborX => {
                return Err(err(format!(
                    "{} is drawn by the traffic generator from its own keys, not bound to a network",
                    pattern.name()
                )));
            }
            TrafficPattern::Uniform => Rule::Uniform,
            TrafficPattern::RandomPermutation => Rule::Permutation(Feistel::new(n, seed)),
            TrafficPattern::Transpose => match net.shape() {
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
            TrafficPattern::BitComplement if n.is_power_of_two() => Rule::Complement,
            TrafficPattern::BitComplement => {
                return Err(err(format!(
                    "bit_complement needs a power-of-two number of terminals, got {n}"
                )));
            }
            TrafficPattern::GroupShift => match *net.shape() {
                Shape::Dragonfly { p, a, h, .. } => Rule::GroupShift {
                    size: p * a,
                    groups: a * h + 1,
                },
                _ => return Err(err("group_shift needs a dragonfly".into())),
            },
            TrafficPattern::BitReverse | TrafficPattern::Shuffle if !n.is_power_of_two() => {
                return Err(err(format!(
                    "bitrev and shuffle need a power-of-two number of terminals, got {n}"
                )));
            }
            TrafficPattern::BitReverse => Rule::BitReverse,
            TrafficPattern::Shuffle => Rule::Shuffle,
            TrafficPattern::Tornado | TrafficPattern::Neighbor => match net.shape() {
                Shape::Cube { dims, .. } if net.terminals_per_router() == 1 => {
                    let dims = dims.clone();
                    if pattern == TrafficPattern::Tornado {
                        Rule::Tornado { dims }
                    } else {
                        Rule::Neighbor { dims }
                    }
                }
                _ => {
                    return Err(err(
                        "tornado and neighbor need a mesh or torus with one terminal per router"
                            .into(),
                    ));
                }
            },
            TrafficPattern::Asymmetric => Rule::Asymmetric,
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
            Rule::BitReverse => bit_reverse(src, self.n),
            Rule::Shuffle => shuffle(src, self.n),
            Rule::Tornado { dims } => tornado(src, dims),
            Rule::Neighbor { dims } => neighbor(src, dims),
            Rule::Asymmetric => asymmetric(src, self.n, rng.random::<bool>()),
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
        let t = Traffic::new(TrafficPattern::Transpose, &mesh, 0).unwrap();
        // (1,2) = 13 → (2,1) = 8.
        assert_eq!(t.destination(13, &mut rng()), 8);
        let q = Network::hypercube(4, 1).unwrap();
        let t = Traffic::new(TrafficPattern::Transpose, &q, 0).unwrap();
        assert_eq!(t.destination(0b0111, &mut rng()), 0b1101);
        let e =
            Traffic::new(TrafficPattern::Transpose, &Network::mesh(4, 3).unwrap(), 0).unwrap_err();
        assert!(e.to_string().contains("square"), "{e}");
    }

    #[test]
    fn bit_complement_by_hand() {
        let q = Network::hypercube(4, 1).unwrap();
        let t = Traffic::new(TrafficPattern::BitComplement, &q, 0).unwrap();
        assert_eq!(t.destination(5, &mut rng()), 10);
        let e = Traffic::new(
            TrafficPattern::BitComplement,
            &Network::mesh(4, 3).unwrap(),
            0,
        )
        .unwrap_err();
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
        let t = Traffic::new(TrafficPattern::GroupShift, &net, 0).unwrap();
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
        let e =
            Traffic::new(TrafficPattern::GroupShift, &Network::mesh(4, 4).unwrap(), 0).unwrap_err();
        assert!(e.to_string().contains("needs a dragonfly"));
    }

    #[test]
    fn uniform_reaches_every_terminal() {
        let net = Network::fat_tree(2, 3).unwrap();
        let t = Traffic::new(TrafficPattern::Uniform, &net, 0).unwrap();
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
            let t = Traffic::new(TrafficPattern::RandomPermutation, &net, seed).unwrap();
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
            let t = Traffic::new(TrafficPattern::RandomPermutation, &net, seed).unwrap();
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
            for (net, pattern) in [(&q, TrafficPattern::Transpose), (&q, TrafficPattern::BitComplement), (&g, TrafficPattern::Transpose)] {
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

    #[test]
    fn booksim_permutations_by_hand() {
        // 16 nodes: 0b0001 ↔ 0b1000, 0b0110 stays; shuffle rotates left.
        assert_eq!(bit_reverse(0b0001, 16), 0b1000);
        assert_eq!(bit_reverse(0b0110, 16), 0b0110);
        assert_eq!(bit_reverse(0b1011, 16), 0b1101);
        assert_eq!(shuffle(0b1001, 16), 0b0011);
        assert_eq!(shuffle(0b0100, 16), 0b1000);
        // 8-ary 2-cube: tornado adds ⌈8/2⌉ − 1 = 3 to each coordinate; (6, 1) → (1, 4).
        assert_eq!(tornado(8 + 6, &[8, 8]), 4 * 8 + 1);
        // 5-ary: adds 2. Neighbor adds 1 to each: (7, 7) → (0, 0).
        assert_eq!(tornado(4, &[5]), 1);
        assert_eq!(neighbor(63, &[8, 8]), 0);
        assert_eq!(neighbor(8 + 2, &[8, 8]), 2 * 8 + 3);
        // Asymmetric: 64 nodes, 37 → 5 or 37.
        assert_eq!(asymmetric(37, 64, false), 5);
        assert_eq!(asymmetric(37, 64, true), 37);
    }

    #[test]
    fn booksim_patterns_bind_where_they_apply() {
        let torus = Network::torus(8, 8).unwrap();
        let t = Traffic::new(TrafficPattern::Tornado, &torus, 0).unwrap();
        let mut r = rng();
        assert_eq!(t.destination(0, &mut r), 3 * 8 + 3);
        let a = Traffic::new(TrafficPattern::Asymmetric, &torus, 0).unwrap();
        let upper = (0..1000).filter(|_| a.destination(3, &mut r) == 35).count();
        assert!((400..=600).contains(&upper), "{upper}");
        let ft = Network::fat_tree(3, 2).unwrap();
        assert!(Traffic::new(TrafficPattern::Tornado, &ft, 0).is_err());
        assert!(Traffic::new(TrafficPattern::BitReverse, &ft, 0).is_err());
        assert!(Traffic::new(TrafficPattern::Shuffle, &torus, 0).is_ok());
    }

    proptest! {
        #[test]
        fn booksim_bit_and_digit_patterns_are_permutations(m in 1u32..7, k in 2u32..7, d in 1usize..4) {
            let n = 1u32 << m;
            for f in [bit_reverse, shuffle] {
                let mut seen: Vec<u32> = (0..n).map(|s| f(s, n)).collect();
                seen.sort_unstable();
                prop_assert_eq!(seen, (0..n).collect::<Vec<_>>());
            }
            let dims = vec![k; d];
            let total = k.pow(d as u32);
            for f in [tornado, neighbor] {
                let mut seen: Vec<u32> = (0..total).map(|s| f(s, &dims)).collect();
                seen.sort_unstable();
                prop_assert_eq!(seen, (0..total).collect::<Vec<_>>());
            }
        }
    }
}
