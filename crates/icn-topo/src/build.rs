//! Constructors of the regular topologies, with the paper's node names and port labels.
//!
//! | topology        | nodes      | ports                              | name of node   |
//! |-----------------|------------|------------------------------------|----------------|
//! | `ring(n)`, n≥3  | n          | F (i+1), B (i−1)                   | `i`            |
//! | `path(n)`, n≥1  | n          | F (i+1), B (i−1), ends lack one    | `i`            |
//! | `mesh(w,h)`     | w·h        | E, W, N, S (boundary lacks some)   | `(x,y)`        |
//! | `torus(w,h)`,≥3 | w·h        | E, W, N, S (wrapping)              | `(x,y)`        |
//! | `hypercube(d)`  | 2^d        | D0..D(d−1): flip bit i             | `d` bits, MSB first |
//! | `ccc(h,k)`      | h·2^k      | F, B, L (L only for p < k)         | `(c,p)`        |

use crate::TopoError;
use crate::graph::{Graph, Kind, Link, Port};

/// Largest node count a constructor accepts (keeps memory bounded on absurd input).
pub const MAX_NODES: usize = 1 << 22;

fn add(adj: &mut [Vec<Link>], u: usize, pu: Port, v: usize, pv: Port) {
    adj[u].push(Link {
        to: v,
        port: pu,
        arrives_on: pv,
    });
    adj[v].push(Link {
        to: u,
        port: pv,
        arrives_on: pu,
    });
}

fn sort_ports(adj: &mut [Vec<Link>]) {
    for links in adj {
        links.sort_by_key(|l| l.port);
    }
}

fn check_size(topology: &str, n: Option<usize>) -> Result<usize, TopoError> {
    match n {
        Some(n) if n <= MAX_NODES => Ok(n),
        _ => Err(TopoError::parameter(
            topology,
            format!("more than {MAX_NODES} nodes"),
        )),
    }
}

/// Cycle of `n ≥ 3` nodes.
pub fn ring(n: usize) -> Result<Graph, TopoError> {
    if n < 3 {
        return Err(TopoError::parameter(
            "ring",
            format!("n must be ≥ 3, got {n}"),
        ));
    }
    check_size("ring", Some(n))?;
    let mut adj = vec![Vec::new(); n];
    for i in 0..n {
        add(&mut adj, i, Port::F, (i + 1) % n, Port::B);
    }
    sort_ports(&mut adj);
    Graph::new(Kind::Ring { n }, Vec::new(), adj)
}

/// Path of `n ≥ 1` nodes.
pub fn path(n: usize) -> Result<Graph, TopoError> {
    if n < 1 {
        return Err(TopoError::parameter("path", "n must be ≥ 1, got 0"));
    }
    check_size("path", Some(n))?;
    let mut adj = vec![Vec::new(); n];
    for i in 0..n.saturating_sub(1) {
        add(&mut adj, i, Port::F, i + 1, Port::B);
    }
    Graph::new(Kind::Path { n }, Vec::new(), adj)
}

fn grid(w: usize, h: usize, wrap: bool) -> Result<Graph, TopoError> {
    let what = if wrap { "torus" } else { "mesh" };
    let min = if wrap { 3 } else { 1 };
    if w < min || h < min {
        return Err(TopoError::parameter(
            what,
            format!("both sides must be ≥ {min}, got {w}x{h}"),
        ));
    }
    let n = check_size(what, w.checked_mul(h))?;
    let mut adj = vec![Vec::new(); n];
    let id = |x: usize, y: usize| y * w + x;
    for y in 0..h {
        for x in 0..w {
            if x + 1 < w || wrap {
                add(
                    &mut adj,
                    id(x, y),
                    Port::East,
                    id((x + 1) % w, y),
                    Port::West,
                );
            }
            if y + 1 < h || wrap {
                add(
                    &mut adj,
                    id(x, y),
                    Port::North,
                    id(x, (y + 1) % h),
                    Port::South,
                );
            }
        }
    }
    sort_ports(&mut adj);
    let kind = if wrap {
        Kind::Torus { w, h }
    } else {
        Kind::Mesh { w, h }
    };
    Graph::new(kind, Vec::new(), adj)
}

/// `w × h` mesh (sides ≥ 1).
pub fn mesh(w: usize, h: usize) -> Result<Graph, TopoError> {
    grid(w, h, false)
}

/// `w × h` torus (sides ≥ 3, so that the four neighbours are distinct).
pub fn torus(w: usize, h: usize) -> Result<Graph, TopoError> {
    grid(w, h, true)
}

/// Hypercube `Q_d`, `1 ≤ d ≤ 22`.
pub fn hypercube(d: u32) -> Result<Graph, TopoError> {
    if !(1..=22).contains(&d) {
        return Err(TopoError::parameter(
            "hypercube",
            format!("d must be in 1..=22, got {d}"),
        ));
    }
    let n = 1usize << d;
    let mut adj = vec![Vec::new(); n];
    for v in 0..n {
        for i in 0..d {
            let u = v ^ (1 << i);
            if v < u {
                add(&mut adj, v, Port::Dim(i as u8), u, Port::Dim(i as u8));
            }
        }
    }
    sort_ports(&mut adj);
    Graph::new(Kind::Hypercube { d }, Vec::new(), adj)
}

/// Cube-connected cycles CCC(h,k): `2^k` cycles of `h` nodes, `h ≥ k ≥ 1`, `h ≥ 2`.
///
/// F: `(c,p) — (c,p+1 mod h)`, B the reverse; L: `(c,p) — (c XOR 2^p, p)` for `p < k`.
/// For `h = 2` the F and B links of a node lead to the same neighbour (two parallel links).
pub fn ccc(h: usize, k: u32) -> Result<Graph, TopoError> {
    if k == 0 {
        return Err(TopoError::parameter("ccc", "k must be ≥ 1, got 0"));
    }
    if h < k as usize {
        return Err(TopoError::parameter(
            "ccc",
            format!("h must be ≥ k, got h = {h} < k = {k}"),
        ));
    }
    if h < 2 {
        return Err(TopoError::parameter(
            "ccc",
            format!("h must be ≥ 2, got {h}"),
        ));
    }
    if k > 20 {
        return Err(TopoError::parameter(
            "ccc",
            format!("k must be ≤ 20, got {k}"),
        ));
    }
    let n = check_size("ccc", h.checked_mul(1 << k))?;
    // Flat arrays written in port order (F, B, L) node by node: CCC(16,16) has a million
    // nodes, and a vector per node cost more than the rest of a broadcast.
    let mut offsets = Vec::with_capacity(n + 1);
    let mut links = Vec::with_capacity(2 * n + k as usize * (1 << k));
    offsets.push(0);
    for c in 0..1usize << k {
        for p in 0..h {
            let next = if p + 1 == h { 0 } else { p + 1 };
            let prev = if p == 0 { h - 1 } else { p - 1 };
            links.push(Link {
                to: c * h + next,
                port: Port::F,
                arrives_on: Port::B,
            });
            links.push(Link {
                to: c * h + prev,
                port: Port::B,
                arrives_on: Port::F,
            });
            if p < k as usize {
                links.push(Link {
                    to: (c ^ (1 << p)) * h + p,
                    port: Port::L,
                    arrives_on: Port::L,
                });
            }
            offsets.push(links.len());
        }
    }
    Ok(Graph::from_csr(Kind::Ccc { h, k }, offsets, links))
}

/// Builds a graph of kind [`Kind::File`] from named edges; used by [`crate::edgelist`].
pub(crate) fn from_edges(names: Vec<String>, edges: &[(usize, usize)]) -> Result<Graph, TopoError> {
    let mut adj: Vec<Vec<Link>> = vec![Vec::new(); names.len()];
    for &(u, v) in edges {
        let pu = Port::Edge(adj[u].len() as u32);
        let pv = Port::Edge(adj[v].len() as u32);
        add(&mut adj, u, pu, v, pv);
    }
    Graph::new(Kind::File, names, adj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::diameter;

    /// A ring of 5 from node 0: 1 and 4 hang off 0, 2 off 1 and 3 off 4 (each at distance 2,
    /// reached first by the lower-numbered side's links in port order).
    #[test]
    fn bfs_parents_is_a_shortest_path_tree() {
        let g = ring(5).unwrap();
        let p = g.bfs_parents(0);
        assert_eq!(p[0], 0);
        assert_eq!((p[1], p[4]), (0, 0));
        assert_eq!((p[2], p[3]), (1, 4));
        let two = path(2).unwrap();
        assert_eq!(two.bfs_parents(1), vec![1, 1]);
    }

    #[test]
    fn ccc_4_3_matches_the_paper_example() {
        let g = ccc(4, 3).unwrap();
        assert_eq!(g.len(), 32);
        // (5,1): F → (5,2), B → (5,0), L → (5 XOR 2, 1) = (7,1).
        let v = g.node("(5,1)").unwrap();
        assert_eq!(g.name(g.link(v, Port::F).unwrap().to), "(5,2)");
        assert_eq!(g.name(g.link(v, Port::B).unwrap().to), "(5,0)");
        assert_eq!(g.name(g.link(v, Port::L).unwrap().to), "(7,1)");
        // p = 3 ≥ k has no lateral link.
        assert!(g.link(g.node("(5,3)").unwrap(), Port::L).is_none());
        assert_eq!(g.link(v, Port::F).unwrap().arrives_on, Port::B);
        // 3·2^3 lateral-capable nodes have degree 3, the rest degree 2.
        let deg3 = (0..g.len()).filter(|&v| g.degree(v) == 3).count();
        assert_eq!(deg3, 24);
        assert_eq!(g.edge_count(), 32 + 12);
    }

    /// CCC(h,k) built link by link with `add` and checked for connectivity, as the other
    /// families are: the flat constructor must give the same links in the same order.
    #[test]
    fn flat_ccc_equals_the_link_by_link_construction() {
        for (h, k) in [(2, 1), (2, 2), (3, 2), (4, 3), (7, 3), (5, 5)] {
            let n = h << k;
            let mut adj = vec![Vec::new(); n];
            for c in 0..1usize << k {
                for p in 0..h {
                    add(&mut adj, c * h + p, Port::F, c * h + (p + 1) % h, Port::B);
                    if p < k as usize && c < c ^ (1 << p) {
                        add(
                            &mut adj,
                            c * h + p,
                            Port::L,
                            (c ^ (1 << p)) * h + p,
                            Port::L,
                        );
                    }
                }
            }
            sort_ports(&mut adj);
            let reference = Graph::new(Kind::Ccc { h, k }, Vec::new(), adj).unwrap();
            let g = ccc(h, k).unwrap();
            assert_eq!(g.len(), n);
            for v in 0..n {
                assert_eq!(g.links(v), reference.links(v), "CCC({h},{k}) node {v}");
            }
            assert!(g.distances(0).iter().all(Option::is_some));
        }
    }

    #[test]
    fn ccc_rejects_bad_parameters() {
        assert!(matches!(ccc(2, 3), Err(TopoError::Parameter { .. })));
        assert!(matches!(ccc(3, 0), Err(TopoError::Parameter { .. })));
        assert!(ccc(1, 1).is_err());
        let msg = ccc(2, 3).unwrap_err().to_string();
        assert!(msg.contains("h must be ≥ k"), "{msg}");
    }

    #[test]
    fn ccc_2_2_has_parallel_links() {
        let g = ccc(2, 2).unwrap();
        let v = g.node("(0,0)").unwrap();
        assert_eq!(
            g.link(v, Port::F).unwrap().to,
            g.link(v, Port::B).unwrap().to
        );
        assert_eq!(g.degree(v), 2);
    }

    #[test]
    fn known_diameters() {
        assert_eq!(diameter(&ring(8).unwrap()), 4);
        assert_eq!(diameter(&ring(7).unwrap()), 3);
        assert_eq!(diameter(&path(5).unwrap()), 4);
        assert_eq!(diameter(&mesh(8, 8).unwrap()), 14);
        assert_eq!(diameter(&torus(4, 4).unwrap()), 4);
        assert_eq!(diameter(&torus(5, 3).unwrap()), 3);
        assert_eq!(diameter(&hypercube(6).unwrap()), 6);
        // CCC(3,3) is the classic CCC of dimension 3, whose diameter is 6.
        assert_eq!(diameter(&ccc(3, 3).unwrap()), 6);
    }

    #[test]
    fn hypercube_names_are_bit_strings() {
        let g = hypercube(3).unwrap();
        assert_eq!(g.name(5), "101");
        assert_eq!(g.name(g.link(5, Port::Dim(1)).unwrap().to), "111");
    }

    #[test]
    fn names_are_computed_and_parsed_back_for_every_node() {
        for g in [
            ring(5).unwrap(),
            path(4).unwrap(),
            mesh(4, 3).unwrap(),
            torus(3, 5).unwrap(),
            hypercube(4).unwrap(),
            ccc(5, 3).unwrap(),
            ccc(2, 2).unwrap(),
        ] {
            let names = g.names();
            assert_eq!(names.len(), g.len());
            let distinct: std::collections::HashSet<&String> = names.iter().collect();
            assert_eq!(
                distinct.len(),
                g.len(),
                "{:?}: names must be distinct",
                g.kind()
            );
            for (v, name) in names.iter().enumerate() {
                assert_eq!(g.node(name).unwrap(), v);
            }
        }
        let g = ccc(5, 3).unwrap();
        assert_eq!(g.name(g.ccc_node(6, 4).unwrap()), "(6,4)");
        assert_eq!(g.node(" ( 6 , 4 ) ").unwrap(), 6 * 5 + 4);
        // Only exact names: out of range, non-canonical or malformed ones are unknown.
        for bad in [
            "(8,0)", "(0,5)", "(06,4)", "6,4", "(6,4", "(a,b)", "(6,4,1)",
        ] {
            let e = g.node(bad).unwrap_err().to_string();
            assert!(
                e.contains("unknown node") && e.contains("`(0,0)`"),
                "{bad}: {e}"
            );
        }
        let q = hypercube(3).unwrap();
        assert_eq!(q.node("101").unwrap(), 5);
        assert!(q.node("0101").is_err() && q.node("21").is_err());
        let m = mesh(4, 3).unwrap();
        assert_eq!(m.node("(3,2)").unwrap(), 11);
        assert!(m.node("(4,0)").is_err());
        assert!(ring(5).unwrap().node("5").is_err());
    }

    #[test]
    fn small_rings_and_tori_are_rejected() {
        assert!(ring(2).is_err());
        assert!(torus(2, 4).is_err());
        assert!(mesh(0, 4).is_err());
        assert!(hypercube(0).is_err());
    }
}
