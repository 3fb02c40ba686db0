//! 2-D positions for drawing a graph, in the unit square `[0,1]²`.
//!
//! | family | layout |
//! |--------|--------|
//! | CCC(h,k) | each cycle is a small ring of `h` nodes (position `p` at angle `2πp/h`) centred on its cube vertex; the `2^k` cube vertices are placed by the projection `Σ bit_i · ℓ_i·(cos(πi/k), sin(πi/k))`, `ℓ_i = 1/(1+0.37i)`, so the drawing shows cycles on a cube |
//! | hypercube | the same projection of the node address |
//! | mesh, torus | the grid |
//! | ring, path, file | a circle (path: a line) |

use crate::graph::{Graph, Kind};
use std::f64::consts::PI;

fn cube_point(c: usize, k: u32) -> (f64, f64) {
    let mut x = 0.0;
    let mut y = 0.0;
    for i in 0..k {
        if c >> i & 1 == 1 {
            // Directions spread over a half turn; lengths shrink a little with i so that no
            // two vertices' sums coincide (equal lengths do: v0 + v2 = v1 for k = 3).
            let a = PI * f64::from(i) / f64::from(k);
            let len = 1.0 / (1.0 + 0.37 * f64::from(i));
            x += len * a.cos();
            y += len * a.sin();
        }
    }
    (x, y)
}

fn normalise(mut pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for &(x, y) in &pts {
        x0 = x0.min(x);
        y0 = y0.min(y);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    let span = (x1 - x0).max(y1 - y0).max(1e-9);
    for p in &mut pts {
        p.0 = (p.0 - x0) / span;
        p.1 = (p.1 - y0) / span;
    }
    pts
}

/// Drawing positions of every node, normalised to the unit square.
pub fn positions(g: &Graph) -> Vec<(f64, f64)> {
    let n = g.len();
    let circle = |i: usize, m: usize| {
        let a = 2.0 * PI * i as f64 / m.max(1) as f64;
        (a.cos(), a.sin())
    };
    let pts = match g.kind() {
        Kind::Ccc { h, k } => {
            // Cycle radius: a fraction of the shortest cube edge (unit vectors) so rings do not overlap.
            let r = 0.12;
            (0..n)
                .map(|v| {
                    let (c, p) = (v / h, v % h);
                    let (cx, cy) = cube_point(c, k);
                    let (dx, dy) = circle(p, h);
                    (cx + r * dx, cy + r * dy)
                })
                .collect()
        }
        Kind::Hypercube { d } => (0..n).map(|v| cube_point(v, d)).collect(),
        Kind::Mesh { w, .. } | Kind::Torus { w, .. } => {
            (0..n).map(|v| ((v % w) as f64, (v / w) as f64)).collect()
        }
        Kind::Path { .. } => (0..n).map(|v| (v as f64, 0.0)).collect(),
        Kind::Ring { .. } | Kind::File => (0..n).map(|v| circle(v, n)).collect(),
    };
    normalise(pts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{ccc, mesh};

    #[test]
    fn positions_are_in_the_unit_square_and_distinct_for_ccc() {
        let g = ccc(4, 3).unwrap();
        let p = positions(&g);
        assert!(
            p.iter()
                .all(|&(x, y)| (0.0..=1.0).contains(&x) && (0.0..=1.0).contains(&y))
        );
        for i in 0..p.len() {
            for j in i + 1..p.len() {
                let d = (p[i].0 - p[j].0).hypot(p[i].1 - p[j].1);
                assert!(d > 1e-3, "{} and {} coincide", g.name(i), g.name(j));
            }
        }
    }

    #[test]
    fn mesh_is_a_grid() {
        let g = mesh(3, 2).unwrap();
        let p = positions(&g);
        assert_eq!(p[0], (0.0, 0.0));
        assert_eq!(p[5], (1.0, 0.5));
    }
}
