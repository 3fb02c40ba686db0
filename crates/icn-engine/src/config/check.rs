//! An experiment's claims as executable checks: `[[check]]` entries, each a statement about the
//! data of the run (a column, a selection of points, an expected value, range or relation, and
//! where the claim comes from). Every run evaluates them (in `icnlab`) and reports pass, fail or
//! not judged; the results page opens with the count.
//!
//! ```toml
//! [[check]]
//! claim = "Minimal routing under group shift saturates near 1/(a·p) = 0.125"
//! column = "accepted"                 # a scalar column of data.csv
//! where = { routing = "minimal", "traffic.pattern" = "group_shift" }   # sweep keys; none: all
//! of = "max"                          # one | max | min | mean over the selected points
//! range = [0.10, 0.15]                # or: value = 0.125 with tolerance = 0.01
//! source = "Kim et al., ISCA 2008, §4.1"
//!
//! [[check]]                           # a relation to another selection
//! claim = "UGAL accepts more than minimal routing under group shift"
//! column = "accepted"
//! where = { routing = "ugal", "traffic.pattern" = "group_shift" }
//! of = "max"
//! relation = ">"                      # < <= > >=
//! than = { routing = "minimal", "traffic.pattern" = "group_shift" }
//! factor = 2.0                        # compared with factor × the other value (default 1)
//! ```
//!
//! A claim about a model's table (a NIC ablation, a switch's grant order) names it: with
//! `table = "ablation"`, `column` is a column of that table and `where` keys that are columns of
//! the table select its rows (the other keys select points, as above):
//!
//! ```toml
//! [[check]]
//! claim = "Without pipelining MyVIA loses more than 20 % of its 64 KB bandwidth on set-up A"
//! table = "ablation"
//! column = "bw_64k_mbs"
//! where = { profile = 0, variant = 4 }
//! relation = "<"
//! than = { profile = 0, variant = 0 }
//! factor = 0.8
//! ```
//!
//! `check` is also the X-Switch's frame-check key (`check = "crc16"`): only `[[check]]` (an
//! array of tables) is read as claims.
//!
//! A selection that matches no point of a run (a quick run has fewer) leaves the check not
//! judged rather than failed. The shape of a check is validated when the file is read, naming
//! `check[i].key`; its column and `where` keys are checked against the first run, like the
//! plot columns.

use super::{Invalid, table_list};
use serde::{Deserialize, Serialize};

/// Most `[[check]]` entries per file.
pub const MAX_CHECKS: usize = 200;

/// How the values of the selected points become the one value judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reduce {
    /// Exactly one point is selected (more is an error of the check: not judged, said so).
    #[default]
    One,
    Max,
    Min,
    Mean,
}

/// An order between the measured value and another selection's.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Relation {
    #[serde(rename = "<")]
    Less,
    #[serde(rename = "<=")]
    AtMost,
    #[serde(rename = ">")]
    Greater,
    #[serde(rename = ">=")]
    AtLeast,
}

impl Relation {
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Relation::Less => a < b,
            Relation::AtMost => a <= b,
            Relation::Greater => a > b,
            Relation::AtLeast => a >= b,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Relation::Less => "<",
            Relation::AtMost => "≤",
            Relation::Greater => ">",
            Relation::AtLeast => "≥",
        }
    }
}

/// One claim over the run's data.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// The claim in words, as the page states it.
    pub claim: String,
    /// A scalar metric column of `data.csv`, or a column of `table`.
    pub column: String,
    /// A table the model writes (`ablation.csv`): the check reads `column` in its rows, which
    /// `where` keys naming the table's columns select.
    #[serde(default)]
    pub table: Option<String>,
    /// The points: every sweep key named here must have this value; empty selects all points.
    #[serde(default, rename = "where")]
    pub select: toml::Table,
    #[serde(default)]
    pub of: Reduce,
    /// Expected value, with `tolerance` (absolute; default 0).
    #[serde(default)]
    pub value: Option<f64>,
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Expected range, both ends included.
    #[serde(default)]
    pub range: Option<[f64; 2]>,
    /// Expected order against `factor` × the value of the `than` selection (same column and
    /// reduction unless `than_column` / `than_of` say otherwise).
    #[serde(default)]
    pub relation: Option<Relation>,
    #[serde(default)]
    pub than: Option<toml::Table>,
    #[serde(default)]
    pub than_column: Option<String>,
    #[serde(default)]
    pub than_of: Option<Reduce>,
    #[serde(default)]
    pub factor: Option<f64>,
    /// Where the claim comes from ("Kim et al. 2008, Fig. 6").
    #[serde(default)]
    pub source: Option<String>,
}

impl Check {
    /// The expectation in words: "= 0.5 ± 0.02", "in [0.1, 0.15]", "> 2 × (routing=minimal)".
    pub fn expected(&self) -> String {
        if let Some(v) = self.value {
            return match self.tolerance {
                Some(t) if t > 0.0 => format!("= {v} ± {t}"),
                _ => format!("= {v}"),
            };
        }
        if let Some([lo, hi]) = self.range {
            return format!("in [{lo}, {hi}]");
        }
        if let (Some(rel), Some(than)) = (self.relation, &self.than) {
            let factor = self.factor.filter(|f| *f != 1.0);
            let of = self.than_of.unwrap_or(self.of);
            let column = self.than_column.as_deref().unwrap_or(&self.column);
            return format!(
                "{} {}{}{column} ({})",
                rel.symbol(),
                factor.map_or(String::new(), |f| format!("{f} × ")),
                reduce_word(of),
                selection_label(than)
            );
        }
        String::new()
    }
}

/// "max " for a reduction over several points, "" for one point.
pub fn reduce_word(r: Reduce) -> &'static str {
    match r {
        Reduce::One => "",
        Reduce::Max => "max ",
        Reduce::Min => "min ",
        Reduce::Mean => "mean ",
    }
}

/// "routing=minimal, load=0.5", or "all points".
pub fn selection_label(t: &toml::Table) -> String {
    if t.is_empty() {
        return "all points".to_owned();
    }
    t.iter()
        .map(|(k, v)| match v {
            toml::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `[[check]]` entries, each of one shape: `value` (with `tolerance`), `range`, or
/// `relation` with `than`.
pub(super) fn checks(value: Option<toml::Value>) -> Result<Vec<Check>, Invalid> {
    let checks: Vec<Check> = table_list(
        value,
        "check",
        "claim, column, where, of and value, range or relation",
        MAX_CHECKS,
    )?;
    for (i, c) in checks.iter().enumerate() {
        let key = |k: &str| format!("check[{i}].{k}");
        if c.claim.trim().is_empty() {
            return Err(Invalid::new(key("claim"), "must state the claim"));
        }
        if c.table.as_ref().is_some_and(|t| t.trim().is_empty()) {
            return Err(Invalid::new(
                key("table"),
                "must name a table the model writes",
            ));
        }
        let shapes = [
            c.value.is_some(),
            c.range.is_some(),
            c.relation.is_some() || c.than.is_some(),
        ];
        if shapes.iter().filter(|s| **s).count() != 1 {
            return Err(Invalid::new(
                key("value"),
                "give exactly one of `value` (with `tolerance`), `range`, or `relation` with `than`",
            ));
        }
        let finite = |k: &str, x: f64| {
            if x.is_finite() {
                Ok(())
            } else {
                Err(Invalid::range(key(k), "finite numbers", x))
            }
        };
        if let Some(v) = c.value {
            finite("value", v)?;
        }
        if let Some(t) = c.tolerance {
            finite("tolerance", t)?;
            Invalid::check(t >= 0.0, &key("tolerance"), "numbers ≥ 0", t)?;
        }
        if c.tolerance.is_some() && c.value.is_none() {
            return Err(Invalid::new(key("tolerance"), "goes with `value`"));
        }
        if let Some([lo, hi]) = c.range {
            finite("range", lo)?;
            finite("range", hi)?;
            Invalid::check(
                lo <= hi,
                &key("range"),
                "[low, high] with low ≤ high",
                format!("[{lo}, {hi}]"),
            )?;
        }
        if (c.relation.is_some()) != (c.than.is_some()) {
            return Err(Invalid::new(
                key("relation"),
                "`relation` and `than` go together",
            ));
        }
        if let Some(f) = c.factor {
            finite("factor", f)?;
            if c.relation.is_none() {
                return Err(Invalid::new(key("factor"), "goes with `relation`"));
            }
        }
        if (c.than_column.is_some() || c.than_of.is_some()) && c.relation.is_none() {
            return Err(Invalid::new(
                key("than"),
                "`than_column` and `than_of` go with `relation`",
            ));
        }
    }
    Ok(checks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Check>, Invalid> {
        let t: toml::Table = toml::from_str(text).unwrap();
        checks(t.get("check").cloned())
    }

    #[test]
    fn each_shape_parses_and_says_what_it_expects() {
        let c = parse(
            "[[check]]\nclaim = 'c'\ncolumn = 'accepted'\nwhere = { routing = 'ugal' }\nof = 'max'\n\
             relation = '>'\nthan = { routing = 'minimal' }\nfactor = 2.0\n\
             [[check]]\nclaim = 'd'\ncolumn = 'r'\nrange = [1.0, 1.2]\n\
             [[check]]\nclaim = 'e'\ncolumn = 'r'\nvalue = 0.5\ntolerance = 0.01\n",
        )
        .unwrap();
        assert_eq!(c[0].expected(), "> 2 × max accepted (routing=minimal)");
        assert_eq!(c[1].expected(), "in [1, 1.2]");
        assert_eq!(c[2].expected(), "= 0.5 ± 0.01");
        assert_eq!(c[0].of, Reduce::Max);
        assert_eq!(selection_label(&c[0].select), "routing=ugal");
        assert_eq!(selection_label(&c[1].select), "all points");
    }

    #[test]
    fn malformed_checks_name_their_key() {
        for (text, key) in [
            ("claim = 'c'\ncolumn = 'x'", "check[0].value"),
            (
                "claim = 'c'\ncolumn = 'x'\nvalue = 1\nrange = [0, 2]",
                "check[0].value",
            ),
            ("claim = ' '\ncolumn = 'x'\nvalue = 1", "check[0].claim"),
            (
                "claim = 'c'\ncolumn = 'x'\nrange = [2, 1]",
                "check[0].range",
            ),
            (
                "claim = 'c'\ncolumn = 'x'\nrelation = '<'",
                "check[0].relation",
            ),
            (
                "claim = 'c'\ncolumn = 'x'\nvalue = 1\ntolerance = -1",
                "check[0].tolerance",
            ),
            (
                "claim = 'c'\ncolumn = 'x'\nvalue = 1\nfactor = 2",
                "check[0].factor",
            ),
            (
                "claim = 'c'\ncolumn = 'x'\nvalue = 1\nof = 'median'",
                "check[0].of",
            ),
            (
                "claim = 'c'\ncolumn = 'x'\nvalue = 1\ncolour = 1",
                "check[0]",
            ),
            (
                "claim = 'c'\ncolumn = 'x'\ntable = ''\nvalue = 1",
                "check[0].table",
            ),
        ] {
            let e = parse(&format!("[[check]]\n{text}\n")).unwrap_err();
            assert!(e.key.starts_with(key), "{text}: {e:?}");
        }
    }
}
