//! Readable names of routers, ports and channels, for error messages and deadlock reports.
//!
//! | family | router | port (after the terminals `t0..`) |
//! |---|---|---|
//! | cube | `(x,y,…)` | `+x`, `−x`, `+y`, … (`+d3` beyond three dimensions) |
//! | fat tree | `l1:03` (level, digits of the switch most significant first) | `down2`, `up0` (a leaf's down ports are its terminals) |
//! | dragonfly | `g4.r1` (group, router in group) | `local→r3`, `global1` |
//! | flattened butterfly | `(x,y,…)` | `x→2` (to coordinate 2 of dimension x) |
//! | hypercube | address bits, most significant first | `D2` |
//! | graph | the graph's node name | the graph's port label |

use super::{FarEnd, Network, PortId, RouterId, Shape};

fn axis(i: usize) -> String {
    match i {
        0 => "x".into(),
        1 => "y".into(),
        2 => "z".into(),
        _ => format!("d{i}"),
    }
}

fn coords(mut r: u32, dims: &[u32]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|&k| {
            let x = r % k;
            r /= k;
            x.to_string()
        })
        .collect();
    format!("({})", parts.join(","))
}

impl Network {
    /// The name of `router` (table above).
    pub fn router_name(&self, router: RouterId) -> String {
        match &self.shape {
            Shape::Cube { dims, .. } | Shape::FlatFly { dims } => coords(router, dims),
            Shape::FatTree { k, n } => {
                let per_level = self.routers / n;
                let (l, mut w) = (router / per_level, router % per_level);
                let mut digits: Vec<String> = (0..n - 1)
                    .map(|_| {
                        let d = w % k;
                        w /= k;
                        d.to_string()
                    })
                    .collect();
                digits.reverse();
                let sep = if *k > 10 { "." } else { "" };
                format!("l{l}:{}", digits.join(sep))
            }
            Shape::Dragonfly { a, .. } => format!("g{}.r{}", router / a, router % a),
            Shape::Hypercube { d } => format!("{router:0width$b}", width = *d as usize),
            Shape::Graph(g) => g.name(router as usize).into_owned(),
        }
    }

    /// The name of `port` of `router`, without the router (table above).
    pub fn port_name(&self, router: RouterId, port: PortId) -> String {
        let c = self.conc;
        // Terminal ports: `0..c` of the terminal-carrying routers (a fat tree's leaves).
        let label = if port < c && router < self.terminal_routers() {
            format!("t{port}")
        } else {
            let q = u32::from(port - c.min(port));
            match &self.shape {
                Shape::Cube { .. } => {
                    let sign = if q % 2 == 0 { '+' } else { '−' };
                    format!("{sign}{}", axis(q as usize / 2))
                }
                Shape::FatTree { k, .. } => {
                    let p = u32::from(port);
                    if p < *k {
                        format!("down{p}")
                    } else {
                        format!("up{}", p - k)
                    }
                }
                Shape::Dragonfly { a, .. } => {
                    if q < a - 1 {
                        let i = router % a;
                        format!("local→r{}", if q < i { q } else { q + 1 })
                    } else {
                        format!("global{}", q - (a - 1))
                    }
                }
                Shape::FlatFly { dims } => {
                    let (mut q, mut stride) = (q, 1);
                    let mut out = format!("p{port}");
                    for (i, &k) in dims.iter().enumerate() {
                        if q < k - 1 {
                            let x = router / stride % k;
                            out = format!("{}→{}", axis(i), if q < x { q } else { q + 1 });
                            break;
                        }
                        q -= k - 1;
                        stride *= k;
                    }
                    out
                }
                Shape::Hypercube { .. } => format!("D{q}"),
                Shape::Graph(g) => g
                    .links(router as usize)
                    .get(q as usize)
                    .map_or_else(|| format!("p{port}"), |l| l.port.to_string()),
            }
        };
        format!("{} {label}", self.router_name(router))
    }

    /// `router port → neighbour` for a channel, e.g. `g0.r1 global0 → g2.r3`.
    pub fn channel_name(&self, router: RouterId, port: PortId) -> String {
        let to = match self.end(router, port) {
            FarEnd::Unused => "nothing".to_owned(),
            FarEnd::Terminal(t) => format!("terminal {t}"),
            FarEnd::Router { router, .. } => self.router_name(router),
        };
        format!("{} → {to}", self.port_name(router, port))
    }
}
