//! Graph specifications as used on the command line and in experiment files.
//!
//! | spec            | graph                          |
//! |-----------------|--------------------------------|
//! | `ccc:H,K`       | CCC(h,k)                       |
//! | `hypercube:D`   | hypercube Q_d                  |
//! | `mesh:WxH`      | w × h mesh                     |
//! | `torus:WxH`     | w × h torus                    |
//! | `ring:N`        | cycle of n nodes               |
//! | `path:N`        | path of n nodes                |
//! | `file:PATH`     | edge list read from PATH       |

use crate::TopoError;
use crate::build;
use crate::edgelist::read_edge_list;
use crate::graph::{Graph, Kind};

/// The accepted forms, for error messages.
pub const SPEC_FORMS: &str =
    "ccc:H,K | hypercube:D | mesh:WxH | torus:WxH | ring:N | path:N | file:PATH";

/// The family and parameters a specification names, read without building anything
/// (`None` for `file:` and for text that does not parse: [`parse_graph_spec`] says why).
/// Node names and sizes follow from it ([`Kind::parse_node`], [`crate::size`]).
pub fn spec_kind(spec: &str) -> Option<Kind> {
    let (family, args) = spec.split_once(':')?;
    let num = |s: &str| s.trim().parse::<usize>().ok();
    let pair = |sep: char| {
        let (a, b) = args.split_once(sep)?;
        Some((num(a)?, num(b)?))
    };
    Some(match family.trim() {
        "ccc" => {
            let (h, k) = pair(',')?;
            Kind::Ccc {
                h,
                k: u32::try_from(k).ok()?,
            }
        }
        "hypercube" => Kind::Hypercube {
            d: u32::try_from(num(args)?).ok()?,
        },
        "mesh" => pair('x').map(|(w, h)| Kind::Mesh { w, h })?,
        "torus" => pair('x').map(|(w, h)| Kind::Torus { w, h })?,
        "ring" => Kind::Ring { n: num(args)? },
        "path" => Kind::Path { n: num(args)? },
        _ => return None,
    })
}

/// Builds the graph a specification names.
pub fn parse_graph_spec(spec: &str) -> Result<Graph, TopoError> {
    let err = |message: String| TopoError::Spec {
        spec: spec.to_owned(),
        message,
    };
    let (family, args) = spec
        .split_once(':')
        .ok_or_else(|| err(format!("expected one of {SPEC_FORMS}")))?;
    let num = |s: &str| -> Result<usize, TopoError> {
        s.trim()
            .parse::<usize>()
            .map_err(|_| err(format!("`{s}` is not a non-negative integer")))
    };
    let pair = |sep: char| -> Result<(usize, usize), TopoError> {
        let (a, b) = args
            .split_once(sep)
            .ok_or_else(|| err(format!("expected two numbers separated by `{sep}`")))?;
        Ok((num(a)?, num(b)?))
    };
    match family.trim() {
        "ccc" => {
            let (h, k) = pair(',')?;
            let k = u32::try_from(k).map_err(|_| err("k too large".into()))?;
            build::ccc(h, k)
        }
        "hypercube" => {
            let d = u32::try_from(num(args)?).map_err(|_| err("d too large".into()))?;
            build::hypercube(d)
        }
        "mesh" => pair('x').and_then(|(w, h)| build::mesh(w, h)),
        "torus" => pair('x').and_then(|(w, h)| build::torus(w, h)),
        "ring" => build::ring(num(args)?),
        "path" => build::path(num(args)?),
        "file" => read_edge_list(args),
        other => Err(err(format!(
            "unknown family `{other}`; expected one of {SPEC_FORMS}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Kind;
    use proptest::prelude::*;

    #[test]
    fn every_family_parses() {
        assert_eq!(
            parse_graph_spec("ccc:4,3").unwrap().kind(),
            Kind::Ccc { h: 4, k: 3 }
        );
        assert_eq!(parse_graph_spec("hypercube:6").unwrap().len(), 64);
        assert_eq!(parse_graph_spec("mesh:8x8").unwrap().len(), 64);
        assert_eq!(
            parse_graph_spec("torus:4x4").unwrap().kind(),
            Kind::Torus { w: 4, h: 4 }
        );
        assert_eq!(parse_graph_spec("ring:8").unwrap().len(), 8);
        assert_eq!(parse_graph_spec("path:5").unwrap().len(), 5);
    }

    #[test]
    fn errors_are_clear() {
        let e = parse_graph_spec("ccc:2,3").unwrap_err().to_string();
        assert!(e.contains("h must be ≥ k"), "{e}");
        let e = parse_graph_spec("cube:3").unwrap_err().to_string();
        assert!(
            e.contains("unknown family") && e.contains("hypercube:D"),
            "{e}"
        );
        let e = parse_graph_spec("ccc:4").unwrap_err().to_string();
        assert!(e.contains("separated by `,`"), "{e}");
        assert!(matches!(
            parse_graph_spec("file:/nonexistent/x"),
            Err(TopoError::Io { .. })
        ));
        assert!(parse_graph_spec("hypercube:99999999999999999999").is_err());
    }

    proptest! {
        #[test]
        fn never_panics(s in "[a-z]{0,9}:[0-9x,]{0,7}") {
            // Keep sizes small: the regex cannot build more than ~10^7-node graphs, which
            // the MAX_NODES cap rejects before allocating.
            let _ = parse_graph_spec(&s);
        }
    }
}
