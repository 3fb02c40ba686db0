//! What an experiment file says to its reader: a `verdict` sentence and the paper's `[[reference]]`
//! values, drawn into the figure and listed under it on the results page.
//!
//! ```toml
//! verdict = "R rises above 1 once the hot receiver saturates (1.09–1.12 on 8 nodes)."
//!
//! [[reference]]                # a horizontal line: only `y`
//! column = "r"                 # a y column of some [[plot]] panel
//! y = 1.0
//! label = "R = 1 (no gain)"
//!
//! [[reference]]                # a mark at (x, y)
//! column = "bandwidth_mbs"
//! x = 4096                     # a number, or a category name on a categorical axis
//! y = 250.0
//! label = "MyVIA at 4 KB"
//! source = "paper Fig. 6"
//! plot = 0                     # optional: only in panel plot[0] (default: every panel drawing `column`)
//! ```
//!
//! A reference is checked against the file's `[[plot]]` panels when the file is read: a column
//! that no panel draws would never appear in any figure, so it is an error naming
//! `reference[i].column`, before anything runs.

use super::{Invalid, PlotSpec, table_list};
use serde::{Deserialize, Serialize};

/// Longest verdict accepted: one or two sentences, not an essay.
pub const MAX_VERDICT_CHARS: usize = 1000;

/// Most `[[reference]]` entries per file.
pub const MAX_REFERENCES: usize = 200;

/// Where a reference value sits on the x axis.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum RefX {
    /// A position on a numeric axis (a load, a message size).
    Number(f64),
    /// A category on a categorical axis (a policy, a NIC design).
    Category(String),
}

impl std::fmt::Display for RefX {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefX::Number(x) => write!(f, "{x}"),
            RefX::Category(c) => f.write_str(c),
        }
    }
}

/// One published value to compare a figure against.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// The y column (of a `[[plot]]` panel) the value is comparable with.
    pub column: String,
    /// Where on the x axis; absent for a value that holds at every x (a horizontal line).
    #[serde(default)]
    pub x: Option<RefX>,
    pub y: f64,
    /// What the value is, as the legend and the page list it.
    pub label: String,
    /// Where the value comes from ("paper Fig. 5", "docs/spec/sci.md §3").
    #[serde(default)]
    pub source: Option<String>,
    /// Only in this panel (index into `[[plot]]`, as error messages count them).
    #[serde(default)]
    pub plot: Option<usize>,
}

impl Reference {
    /// Whether this reference belongs in panel `index` with spec `spec`.
    pub fn applies_to(&self, index: usize, spec: &PlotSpec) -> bool {
        self.plot.is_none_or(|p| p == index) && spec.y.contains(&self.column)
    }
}

/// The `verdict` value: a non-empty string of at most [`MAX_VERDICT_CHARS`] characters.
pub(super) fn verdict(value: Option<toml::Value>) -> Result<Option<String>, Invalid> {
    match value {
        None => Ok(None),
        Some(toml::Value::String(s)) => {
            let n = s.trim().chars().count();
            Invalid::check(
                (1..=MAX_VERDICT_CHARS).contains(&n),
                "verdict",
                &format!("strings of 1 ..= {MAX_VERDICT_CHARS} characters"),
                format!("{n} characters"),
            )?;
            Ok(Some(s.trim().to_owned()))
        }
        Some(_) => Err(Invalid::new(
            "verdict",
            "must be a string: one or two sentences on what the figure shows",
        )),
    }
}

/// The `[[reference]]` entries, each checked against `plots`.
pub(super) fn references(
    value: Option<toml::Value>,
    plots: &[PlotSpec],
) -> Result<Vec<Reference>, Invalid> {
    let refs: Vec<Reference> = table_list(
        value,
        "reference",
        "column, y, label and optionally x, source, plot",
        MAX_REFERENCES,
    )?;
    for (i, r) in refs.iter().enumerate() {
        let key = |k: &str| format!("reference[{i}].{k}");
        if !r.y.is_finite() {
            return Err(Invalid::range(key("y"), "finite numbers", r.y));
        }
        if let Some(RefX::Number(x)) = r.x
            && !x.is_finite()
        {
            return Err(Invalid::range(key("x"), "finite numbers", x));
        }
        if r.label.trim().is_empty() {
            return Err(Invalid::new(key("label"), "must say what the value is"));
        }
        if let Some(p) = r.plot {
            let Some(spec) = plots.get(p) else {
                return Err(Invalid::range(
                    key("plot"),
                    &format!(
                        "0 ..= {} (the file's [[plot]] panels)",
                        plots.len().max(1) - 1
                    ),
                    p,
                ));
            };
            if !spec.y.contains(&r.column) {
                return Err(Invalid::new(
                    key("column"),
                    format!(
                        "plot[{p}] does not draw `{}` (its y columns: {})",
                        r.column,
                        spec.y.join(", ")
                    ),
                ));
            }
        } else if !plots.iter().any(|s| s.y.contains(&r.column)) {
            let mut drawn: Vec<&str> = plots
                .iter()
                .flat_map(|s| s.y.iter().map(String::as_str))
                .collect();
            drawn.sort_unstable();
            drawn.dedup();
            return Err(Invalid::new(
                key("column"),
                format!(
                    "no [[plot]] panel draws `{}` (drawn: {})",
                    r.column,
                    if drawn.is_empty() {
                        "nothing: the file has no [[plot]]".to_owned()
                    } else {
                        drawn.join(", ")
                    }
                ),
            ));
        }
    }
    Ok(refs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConfigError, ExperimentFile};
    use std::path::Path;

    const PLOTS: &str =
        "[[plot]]\nx = 'load'\ny = ['r']\n[[plot]]\nx = 'load'\ny = ['eta', 'delay']\n";

    fn parse(extra: &str) -> Result<ExperimentFile, ConfigError> {
        ExperimentFile::parse(
            Path::new("exp.toml"),
            &format!("model = 'm'\nverdict = 'R > 1 under a hot spot.'\n{extra}\n{PLOTS}"),
            false,
        )
    }

    /// The error's key, or a panic naming what came back instead.
    fn key_of(r: Result<ExperimentFile, ConfigError>) -> String {
        match r {
            Err(ConfigError::Invalid { file, inner }) => {
                assert_eq!(file, "exp.toml");
                inner.key
            }
            other => panic!("expected an invalid key, got {other:?}"),
        }
    }

    #[test]
    fn verdict_and_references_are_split_from_the_model_keys() {
        let f = parse(
            "nodes = 8\n[[reference]]\ncolumn = 'r'\ny = 1\nlabel = 'R = 1'\n\
             [[reference]]\ncolumn = 'delay'\nx = 0.5\ny = 20.5\nlabel = 'paper'\n\
             source = 'paper Fig. 5'\nplot = 1\n\
             [[reference]]\ncolumn = 'eta'\nx = 'fifo'\ny = 0.3\nlabel = 'cat'\n",
        )
        .unwrap();
        assert_eq!(f.verdict.as_deref(), Some("R > 1 under a hot spot."));
        assert_eq!(f.references.len(), 3);
        assert_eq!(f.references[0].x, None);
        assert_eq!(f.references[0].y, 1.0, "an integer y is a number");
        assert_eq!(f.references[1].x, Some(RefX::Number(0.5)));
        assert_eq!(f.references[1].source.as_deref(), Some("paper Fig. 5"));
        assert_eq!(f.references[1].plot, Some(1));
        assert_eq!(f.references[2].x, Some(RefX::Category("fifo".into())));
        assert!(!f.body.contains_key("verdict") && !f.body.contains_key("reference"));
        assert_eq!(f.body.get("nodes").and_then(|v| v.as_integer()), Some(8));
    }

    #[test]
    fn references_go_to_the_panels_drawing_their_column() {
        let f = parse("[[reference]]\ncolumn = 'eta'\ny = 1\nlabel = 'l'\n").unwrap();
        let r = &f.references[0];
        assert!(!r.applies_to(0, &f.plots[0]));
        assert!(r.applies_to(1, &f.plots[1]));
        let only0 = Reference {
            plot: Some(0),
            column: "r".into(),
            ..r.clone()
        };
        assert!(only0.applies_to(0, &f.plots[0]) && !only0.applies_to(1, &f.plots[1]));
    }

    #[test]
    fn bad_references_name_file_and_key() {
        let cases = [
            (
                "[[reference]]\ncolumn = 'nosuch'\ny = 1\nlabel = 'l'",
                "reference[0].column",
            ),
            (
                "[[reference]]\ncolumn = 'r'\ny = 1\nlabel = 'l'\n[[reference]]\ncolumn = 'r'\ny = 1\nlabel = 'l'\nplot = 1",
                "reference[1].column",
            ),
            (
                "[[reference]]\ncolumn = 'r'\ny = 1\nlabel = 'l'\nplot = 2",
                "reference[0].plot",
            ),
            (
                "[[reference]]\ncolumn = 'r'\ny = 'one'\nlabel = 'l'",
                "reference[0].y",
            ),
            (
                "[[reference]]\ncolumn = 'r'\ny = nan\nlabel = 'l'",
                "reference[0].y",
            ),
            (
                "[[reference]]\ncolumn = 'r'\nx = inf\ny = 1\nlabel = 'l'",
                "reference[0].x",
            ),
            (
                "[[reference]]\ncolumn = 'r'\nx = true\ny = 1\nlabel = 'l'",
                "reference[0].x",
            ),
            (
                "[[reference]]\ncolumn = 'r'\ny = 1\nlabel = ' '",
                "reference[0].label",
            ),
            // serde names the entry of a missing field; its message names the field.
            ("[[reference]]\ncolumn = 'r'\ny = 1", "reference[0]"),
            (
                "[[reference]]\ncolumn = 'r'\ny = 1\nlabel = 'l'\ncolour = 'red'",
                "reference[0].colour",
            ),
            ("reference = 3", "reference"),
        ];
        for (text, key) in cases {
            assert_eq!(key_of(parse(text)), key, "{text}");
        }
        let many = "[[reference]]\ncolumn = 'r'\ny = 1\nlabel = 'l'\n".repeat(MAX_REFERENCES + 1);
        assert_eq!(key_of(parse(&many)), "reference");
    }

    #[test]
    fn bad_verdicts_name_the_key() {
        for text in [
            "model = 'm'\nverdict = 3\n",
            "model = 'm'\nverdict = '   '\n",
            &format!(
                "model = 'm'\nverdict = '{}'\n",
                "x".repeat(MAX_VERDICT_CHARS + 1)
            ),
        ] {
            let r = ExperimentFile::parse(Path::new("exp.toml"), text, false);
            assert_eq!(key_of(r), "verdict", "{text}");
        }
    }

    #[test]
    fn verdict_and_references_cannot_be_swept_or_set() {
        assert_eq!(
            key_of(parse("[sweep]\nverdict = ['a', 'b']")),
            "sweep.verdict"
        );
        let mut f = parse("").unwrap();
        let err = f.apply_sets(&["verdict=better".into()]).unwrap_err();
        assert!(err.to_string().contains("key `verdict`"), "{err}");
    }

    #[test]
    fn a_file_without_plots_cannot_have_references() {
        let r = ExperimentFile::parse(
            Path::new("exp.toml"),
            "model = 'm'\n[[reference]]\ncolumn = 'r'\ny = 1\nlabel = 'l'\n",
            false,
        );
        let err = r.unwrap_err().to_string();
        assert!(err.contains("the file has no [[plot]]"), "{err}");
    }
}
