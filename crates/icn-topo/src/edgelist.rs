//! Graphs from edge-list text: one edge `a b` per line, `#` starts a comment, names are any
//! whitespace-free tokens. Nodes are numbered in order of first appearance. Repeated edges are
//! merged; self-loops, lines with other than two tokens and disconnected graphs are errors.

use crate::TopoError;
use crate::build::{MAX_NODES, from_edges};
use crate::graph::Graph;
use std::collections::{HashMap, HashSet};

/// Parses edge-list text into a graph.
pub fn parse_edge_list(text: &str) -> Result<Graph, TopoError> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut edges: Vec<(usize, usize)> = Vec::new();
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("");
        let tokens: Vec<&str> = content.split_whitespace().collect();
        match tokens.as_slice() {
            [] => continue,
            [a, b] => {
                if a == b {
                    return Err(TopoError::SelfLoop {
                        line,
                        node: (*a).to_owned(),
                    });
                }
                let mut id = |name: &str| -> Result<usize, TopoError> {
                    if let Some(&v) = index.get(name) {
                        return Ok(v);
                    }
                    if names.len() >= MAX_NODES {
                        return Err(TopoError::Syntax {
                            line,
                            message: format!("more than {MAX_NODES} nodes"),
                        });
                    }
                    index.insert(name.to_owned(), names.len());
                    names.push(name.to_owned());
                    Ok(names.len() - 1)
                };
                let (u, v) = (id(a)?, id(b)?);
                if seen.insert((u.min(v), u.max(v))) {
                    edges.push((u, v));
                }
            }
            other => {
                return Err(TopoError::Syntax {
                    line,
                    message: format!("expected two node names `a b`, got {} tokens", other.len()),
                });
            }
        }
    }
    from_edges(names, &edges)
}

/// Reads and parses an edge-list file, through [`icn_engine::input`]: a read bounded at 256
/// MiB, so that `/dev/zero` is an error rather than a read until memory runs out, and a FIFO
/// without a writer is empty rather than a wait for ever; errors in the file name it.
pub fn read_edge_list(path: &str) -> Result<Graph, TopoError> {
    let text = icn_engine::input::read_to_string(path).map_err(|e| TopoError::Io {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    parse_edge_list(&text).map_err(|e| match e {
        TopoError::Syntax { .. } | TopoError::SelfLoop { .. } => TopoError::InFile {
            path: path.to_owned(),
            message: e.to_string(),
        },
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::diameter;
    use proptest::prelude::*;

    #[test]
    fn parses_names_comments_and_duplicates() {
        let g =
            parse_edge_list("# a square\nn1 n2\nn2 n3 # comment\n\nn3 n4\nn4 n1\nn2 n1\n").unwrap();
        assert_eq!(g.len(), 4);
        assert_eq!(g.edge_count(), 4);
        assert_eq!(diameter(&g), 2);
        assert_eq!(g.node("n3").unwrap(), 2);
    }

    #[test]
    fn rejects_self_loops_bad_lines_disconnection_and_emptiness() {
        assert_eq!(
            parse_edge_list("a b\nb b\n").unwrap_err(),
            TopoError::SelfLoop {
                line: 2,
                node: "b".into()
            }
        );
        assert!(matches!(
            parse_edge_list("a b c\n"),
            Err(TopoError::Syntax { line: 1, .. })
        ));
        assert!(matches!(
            parse_edge_list("a\n"),
            Err(TopoError::Syntax { line: 1, .. })
        ));
        assert!(matches!(
            parse_edge_list("a b\nc d\n"),
            Err(TopoError::Disconnected { .. })
        ));
        assert_eq!(
            parse_edge_list("# nothing\n").unwrap_err(),
            TopoError::Empty
        );
    }

    #[test]
    fn unknown_node_is_an_error_naming_an_example() {
        let g = parse_edge_list("x y\n").unwrap();
        let e = g.node("z").unwrap_err().to_string();
        assert!(e.contains("unknown node `z`") && e.contains("`x`"), "{e}");
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_text(s in "\\PC{0,200}") {
            let _ = parse_edge_list(&s);
        }

        #[test]
        fn random_edge_lists_are_either_valid_or_a_clean_error(
            edges in proptest::collection::vec((0u8..12, 0u8..12), 0..40)
        ) {
            let text: String = edges.iter().map(|(a, b)| format!("v{a} v{b}\n")).collect();
            match parse_edge_list(&text) {
                Ok(g) => {
                    // Connected, loop-free, symmetric adjacency.
                    for v in 0..g.len() {
                        for l in g.links(v) {
                            prop_assert_ne!(l.to, v);
                            prop_assert!(g.adjacent(l.to, v));
                        }
                    }
                    prop_assert!(g.distances(0).iter().all(Option::is_some));
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }
}
