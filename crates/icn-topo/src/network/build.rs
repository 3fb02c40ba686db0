//! Constructors of [`Network`]s, one per family, each range-checked before anything is
//! allocated. Port layouts (`c` = terminals per router, always on ports `0..c`):
//!
//! | family | routers | terminals | ports after the terminals |
//! |---|---|---|---|
//! | `cube(dims, wrap, c)` (mesh, torus, ring) | `Π kᵢ` | `c·Π kᵢ` | dimension `i`: `c+2i` → +1, `c+2i+1` → −1 (a mesh boundary leaves them unused) |
//! | `fat_tree(k, n)` | `n·k^(n−1)`, level by level, leaves first | `k^n` | `0..k` down (terminals at the leaves), `k..2k` up (unused at the top) |
//! | `dragonfly(p, a, h)` | `a·g`, `g = a·h+1`, router `i` of group `G` is `G·a+i` | `p·a·g` | `p+j`, `j < a−1`: local link to router `j` (`j+1` if `j ≥ i`); `p+a−1+x`, `x < h`: global link `m = i·h+x` of the group |
//! | `flat_fly(dims, c)` | `Π kᵢ` | `c·Π kᵢ` | dimension `i` has `kᵢ−1` ports, to coordinate `t` (`t+1` if `t ≥` own) |
//! | `hypercube(d, c)` | `2^d` | `c·2^d` | `c+i` flips address bit `i` |
//! | `from_graph(g)` | nodes | nodes | `1+j`: the node's `j`-th link (its port label is kept for names) |
//!
//! **Fat tree wiring.** Switch `w` of level `l` (`w` has `n−1` base-`k` digits) connects up port
//! `k+j` to switch `w` with digit `l` replaced by `j` on level `l+1`, arriving on that switch's
//! down port `wₗ` (digit `l` of `w`). Leaf `w` holds terminals `w·k .. w·k+k−1`.
//!
//! **Dragonfly global links.** Router `i` of a group holds its group's global links
//! `m = i·h .. i·h+h−1`; every pair of groups is joined by exactly one. [`Arrangement`] says
//! which group link `m` of group `G` reaches: `(G + m + 1) mod g` in the palm-tree arrangement
//! (Camarero et al.; the default), `m` if `m < G` else `m + 1` in the absolute arrangement of
//! BookSim2's `dragonflynew`.

use super::{Arrangement, FarEnd, Network, PortId, RouterId, Shape};
use crate::TopoError;
use crate::graph::Graph;

/// Largest wiring table a constructor builds: 2^28 ports, 2 GiB.
pub const MAX_PORTS_TOTAL: u64 = 1 << 28;
/// Largest router radix.
pub const MAX_RADIX: u64 = 4096;
/// Most terminals a network may have.
pub const MAX_TERMINALS: u64 = 1 << 31;

fn err(topology: &str, message: impl Into<String>) -> TopoError {
    TopoError::parameter(topology, message)
}

/// Checks the sizes and allocates an all-unused table.
fn table(
    topology: &str,
    routers: Option<u64>,
    radix: Option<u64>,
    conc: u64,
    terminal_routers: Option<u64>,
) -> Result<(u32, PortId, u32, Vec<FarEnd>), TopoError> {
    let too_big = || {
        err(
            topology,
            format!("more than {MAX_PORTS_TOTAL} router ports in all"),
        )
    };
    let routers = routers.ok_or_else(too_big)?;
    let radix = radix
        .filter(|&r| r <= MAX_RADIX)
        .ok_or_else(|| err(topology, format!("router radix above {MAX_RADIX}")))?;
    let total = routers
        .checked_mul(radix)
        .filter(|&t| t <= MAX_PORTS_TOTAL)
        .ok_or_else(too_big)?;
    let terminals = terminal_routers
        .and_then(|t| t.checked_mul(conc))
        .filter(|&t| t <= MAX_TERMINALS)
        .ok_or_else(|| err(topology, format!("more than {MAX_TERMINALS} terminals")))?;
    Ok((
        routers as u32,
        radix as PortId,
        terminals as u32,
        vec![FarEnd::Unused; total as usize],
    ))
}

fn conc_ok(topology: &str, c: u32) -> Result<u64, TopoError> {
    if c == 0 || u64::from(c) > MAX_RADIX {
        return Err(err(
            topology,
            format!("terminals per router must be in 1..={MAX_RADIX}, got {c}"),
        ));
    }
    Ok(u64::from(c))
}

fn product(dims: &[u32]) -> Option<u64> {
    dims.iter()
        .try_fold(1u64, |acc, &k| acc.checked_mul(u64::from(k)))
}

/// Writes both directions of a link.
fn wire(ends: &mut [FarEnd], radix: PortId, a: (u32, PortId), b: (u32, PortId)) {
    let r = usize::from(radix);
    ends[a.0 as usize * r + usize::from(a.1)] = FarEnd::Router {
        router: b.0,
        port: b.1,
    };
    ends[b.0 as usize * r + usize::from(b.1)] = FarEnd::Router {
        router: a.0,
        port: a.1,
    };
}

/// Puts `c` terminals on ports `0..c` of routers `0..terminals/c`.
fn attach_terminals(ends: &mut [FarEnd], radix: PortId, c: PortId, terminals: u32) {
    let (r, c) = (usize::from(radix), u32::from(c));
    for t in 0..terminals {
        ends[(t / c) as usize * r + (t % c) as usize] = FarEnd::Terminal(t);
    }
}

impl Network {
    fn assemble(
        shape: Shape,
        radix: PortId,
        conc: PortId,
        routers: u32,
        terminals: u32,
        ends: Vec<FarEnd>,
    ) -> Network {
        Network {
            shape,
            radix,
            conc,
            routers,
            terminals,
            ends,
        }
    }

    /// k-ary n-cube: a mesh (`wrap = false`, every `kᵢ ≥ 2`) or a torus (`wrap = true`, every
    /// `kᵢ ≥ 3` so that the two neighbours along a dimension differ), `c` terminals per router.
    pub fn cube(dims: &[u32], wrap: bool, c: u32) -> Result<Network, TopoError> {
        let what = if wrap { "torus" } else { "mesh" };
        let min = if wrap { 3 } else { 2 };
        if dims.is_empty() || dims.len() > 16 {
            return Err(err(
                what,
                format!("needs 1 to 16 dimensions, got {}", dims.len()),
            ));
        }
        if let Some(k) = dims.iter().find(|&&k| k < min) {
            return Err(err(what, format!("every side must be ≥ {min}, got {k}")));
        }
        let conc = conc_ok(what, c)?;
        let routers = product(dims);
        let radix = conc + 2 * dims.len() as u64;
        let (routers, radix, terminals, mut ends) =
            table(what, routers, Some(radix), conc, routers)?;
        let c = conc as PortId;
        attach_terminals(&mut ends, radix, c, terminals);
        let mut stride = 1u32;
        for (i, &k) in dims.iter().enumerate() {
            let plus = c + 2 * i as PortId;
            for r in 0..routers {
                let x = r / stride % k;
                if x + 1 < k {
                    wire(&mut ends, radix, (r, plus), (r + stride, plus + 1));
                } else if wrap {
                    wire(&mut ends, radix, (r, plus), (r - x * stride, plus + 1));
                }
            }
            stride *= k;
        }
        let shape = Shape::Cube {
            dims: dims.to_vec(),
            wrap,
        };
        Ok(Network::assemble(shape, radix, c, routers, terminals, ends))
    }

    /// `w × h` mesh, one terminal per router.
    pub fn mesh(w: u32, h: u32) -> Result<Network, TopoError> {
        Network::cube(&[w, h], false, 1)
    }

    /// `w × h` torus, one terminal per router.
    pub fn torus(w: u32, h: u32) -> Result<Network, TopoError> {
        Network::cube(&[w, h], true, 1)
    }

    /// Ring of `n ≥ 3` routers, one terminal each (a 1-dimensional torus).
    pub fn ring(n: u32) -> Result<Network, TopoError> {
        Network::cube(&[n], true, 1).map_err(|e| match e {
            TopoError::Parameter { message, .. } => err("ring", message),
            other => other,
        })
    }

    /// k-ary n-tree: `k ≥ 2`, `n ≥ 1` levels, `k^n` terminals.
    pub fn fat_tree(k: u32, n: u32) -> Result<Network, TopoError> {
        let what = "fat tree";
        if k < 2 {
            return Err(err(what, format!("k must be ≥ 2, got {k}")));
        }
        if !(1..=32).contains(&n) {
            return Err(err(what, format!("n must be in 1..=32, got {n}")));
        }
        let per_level = u64::from(k).checked_pow(n - 1);
        let routers = per_level.and_then(|l| l.checked_mul(u64::from(n)));
        let radix = 2 * u64::from(k);
        let (routers, radix, terminals, mut ends) =
            table(what, routers, Some(radix), u64::from(k), per_level)?;
        let kp = k as PortId;
        attach_terminals(&mut ends, radix, kp, terminals);
        let per_level = routers / n;
        for l in 0..n - 1 {
            let digit = k.pow(l);
            for w in 0..per_level {
                let wl = w / digit % k;
                for j in 0..k {
                    let up = (l + 1) * per_level + w - wl * digit + j * digit;
                    wire(
                        &mut ends,
                        radix,
                        (l * per_level + w, kp + j as PortId),
                        (up, wl as PortId),
                    );
                }
            }
        }
        Ok(Network::assemble(
            Shape::FatTree { k, n },
            radix,
            kp,
            routers,
            terminals,
            ends,
        ))
    }

    /// Dragonfly with `p` terminals, `a` routers and `h` global links per router and the
    /// largest group count, `g = a·h + 1` (one global link between every two groups), global
    /// links in the palm-tree arrangement.
    pub fn dragonfly(p: u32, a: u32, h: u32) -> Result<Network, TopoError> {
        Network::dragonfly_with(p, a, h, Arrangement::PalmTree)
    }

    /// [`Network::dragonfly`] with a choice of global-link arrangement.
    pub fn dragonfly_with(
        p: u32,
        a: u32,
        h: u32,
        arrangement: Arrangement,
    ) -> Result<Network, TopoError> {
        let what = "dragonfly";
        if p == 0 || a == 0 || h == 0 {
            return Err(err(
                what,
                format!("p, a and h must be ≥ 1, got p = {p}, a = {a}, h = {h}"),
            ));
        }
        let conc = conc_ok(what, p)?;
        let radix = conc + u64::from(a) - 1 + u64::from(h);
        let groups = u64::from(a) * u64::from(h) + 1;
        let routers = u64::from(a).checked_mul(groups);
        let (routers, radix, terminals, mut ends) =
            table(what, routers, Some(radix), conc, routers)?;
        let pp = p as PortId;
        attach_terminals(&mut ends, radix, pp, terminals);
        let g = groups as u32;
        let global0 = pp + a as PortId - 1;
        for grp in 0..g {
            for i in 0..a {
                let r = grp * a + i;
                for j in i + 1..a {
                    // Router i reaches j (> i) on port p + j − 1; j reaches i on port p + i.
                    wire(
                        &mut ends,
                        radix,
                        (r, pp + (j - 1) as PortId),
                        (grp * a + j, pp + i as PortId),
                    );
                }
                for x in 0..h {
                    // Each link is met from both of its groups; wire it from the lower one.
                    let other = arrangement.target(grp, i * h + x, g);
                    if grp < other {
                        let m2 = arrangement.link_to(other, grp, g);
                        let there = (other * a + m2 / h, global0 + (m2 % h) as PortId);
                        wire(&mut ends, radix, (r, global0 + x as PortId), there);
                    }
                }
            }
        }
        Ok(Network::assemble(
            Shape::Dragonfly {
                p,
                a,
                h,
                arrangement,
            },
            radix,
            pp,
            routers,
            terminals,
            ends,
        ))
    }

    /// Balanced dragonfly of Kim et al.: `a = 2p = 2h`, `g = a·h + 1` groups, `≈ 4p⁴` terminals.
    pub fn dragonfly_balanced(p: u32) -> Result<Network, TopoError> {
        let a = p
            .checked_mul(2)
            .ok_or_else(|| err("dragonfly", format!("p = {p} too large")))?;
        Network::dragonfly(p, a, p)
    }

    /// Flattened butterfly on the grid `dims` (every `kᵢ ≥ 2`), `c` terminals per router.
    pub fn flat_fly(dims: &[u32], c: u32) -> Result<Network, TopoError> {
        let what = "flattened butterfly";
        if dims.is_empty() || dims.len() > 16 {
            return Err(err(
                what,
                format!("needs 1 to 16 dimensions, got {}", dims.len()),
            ));
        }
        if let Some(k) = dims.iter().find(|&&k| k < 2) {
            return Err(err(what, format!("every side must be ≥ 2, got {k}")));
        }
        let conc = conc_ok(what, c)?;
        let routers = product(dims);
        let radix = dims.iter().map(|&k| u64::from(k) - 1).sum::<u64>() + conc;
        let (routers, radix, terminals, mut ends) =
            table(what, routers, Some(radix), conc, routers)?;
        let c = conc as PortId;
        attach_terminals(&mut ends, radix, c, terminals);
        let (mut stride, mut base) = (1u32, c);
        for &k in dims {
            for r in 0..routers {
                let x = r / stride % k;
                for v in x + 1..k {
                    let s = r + (v - x) * stride;
                    wire(
                        &mut ends,
                        radix,
                        (r, base + (v - 1) as PortId),
                        (s, base + x as PortId),
                    );
                }
            }
            stride *= k;
            base += (k - 1) as PortId;
        }
        Ok(Network::assemble(
            Shape::FlatFly {
                dims: dims.to_vec(),
            },
            radix,
            c,
            routers,
            terminals,
            ends,
        ))
    }

    /// Hypercube of dimension `1 ≤ d ≤ 26`, `c` terminals per router.
    pub fn hypercube(d: u32, c: u32) -> Result<Network, TopoError> {
        let what = "hypercube";
        if !(1..=26).contains(&d) {
            return Err(err(what, format!("d must be in 1..=26, got {d}")));
        }
        Self::binary_cube(what, d, c)
    }

    /// One router with `n` terminals and no other link: a single crossbar (`crossbar:N`).
    /// It is the 0-dimensional hypercube, so every routing of a hypercube (dimension
    /// order: nothing to correct, eject) and every user of one takes it unchanged.
    pub fn crossbar(n: u32) -> Result<Network, TopoError> {
        Self::binary_cube("crossbar", 0, n)
    }

    /// The `d`-cube with `c` terminals per router (`d = 0`: one router).
    fn binary_cube(what: &str, d: u32, c: u32) -> Result<Network, TopoError> {
        let conc = conc_ok(what, c)?;
        let routers = 1u64 << d;
        let (routers, radix, terminals, mut ends) = table(
            what,
            Some(routers),
            Some(conc + u64::from(d)),
            conc,
            Some(routers),
        )?;
        let c = conc as PortId;
        attach_terminals(&mut ends, radix, c, terminals);
        for r in 0..routers {
            for i in 0..d {
                let s = r ^ (1 << i);
                if r < s {
                    wire(&mut ends, radix, (r, c + i as PortId), (s, c + i as PortId));
                }
            }
        }
        Ok(Network::assemble(
            Shape::Hypercube { d },
            radix,
            c,
            routers,
            terminals,
            ends,
        ))
    }

    /// A router per graph node with one terminal on port 0 and the node's links on ports
    /// `1..` in the graph's port order (CCC, edge-list files, ...).
    pub fn from_graph(g: Graph) -> Result<Network, TopoError> {
        let what = "graph";
        let max_links = (0..g.len()).map(|v| g.links(v).len()).max().unwrap_or(0);
        let nodes = g.len() as u64;
        let (routers, radix, terminals, mut ends) = table(
            what,
            Some(nodes),
            Some(max_links as u64 + 1),
            1,
            Some(nodes),
        )?;
        attach_terminals(&mut ends, radix, 1, terminals);
        for v in 0..g.len() {
            for (j, l) in g.links(v).iter().enumerate() {
                // The far end's port is the position of the link labelled `arrives_on` there.
                let back = g
                    .links(l.to)
                    .iter()
                    .position(|b| b.port == l.arrives_on && b.to == v);
                let Some(back) = back else {
                    return Err(err(
                        what,
                        format!("link {} of node {} has no way back", l.port, g.name(v)),
                    ));
                };
                let r = radix as usize;
                ends[v * r + j + 1] = FarEnd::Router {
                    router: l.to as RouterId,
                    port: back as PortId + 1,
                };
            }
        }
        Ok(Network::assemble(
            Shape::Graph(Box::new(g)),
            radix,
            1,
            routers,
            terminals,
            ends,
        ))
    }
}
