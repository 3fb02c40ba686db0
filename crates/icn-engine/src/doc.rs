//! What a model says about its inputs and outputs: the unit and meaning of every key of its
//! config, and the name, unit and meaning of every metric and table it reports.
//!
//! Each model crate writes one [`ModelDoc`] next to its config and exposes it as
//! [`Model::DOC`](crate::Model::DOC); `icnlab keys`, `icnlab metrics` and the tables in the
//! docs are generated from it. Why here and not in the CLI: when the key tables lived in the
//! binary, adding a key to a model meant editing two crates, and the output metrics were
//! documented nowhere but in the strings each run carried. Defaults and allowed ranges are
//! not written here: the CLI reads them from the config's `Default` and the model's
//! validation, so they cannot disagree with the code.
//!
//! A metric is declared once, as an [`Output`] constant, and reported with
//! [`Metrics::put`](crate::Metrics::put): its unit and meaning in a report are the ones the
//! table shows.

/// Unit and meaning of one key of a model's config (a dotted path for nested tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub key: &'static str,
    /// Empty for counts without a unit, ratios, choices and switches.
    pub unit: &'static str,
    pub meaning: &'static str,
}

/// Shorthand for a [`Key`] row.
pub const fn key(key: &'static str, unit: &'static str, meaning: &'static str) -> Key {
    Key { key, unit, meaning }
}

/// Keys documented once and read by several models (the traffic keys of the X-Switch and
/// the VC router) or under a table (`ring.*` of `sci-switched` are the `sci` keys): `prefix`
/// (empty or ending in `.`) followed by each key of `keys`.
#[derive(Clone, Copy, Debug)]
pub struct KeyGroup {
    pub prefix: &'static str,
    pub keys: &'static [Key],
    /// Empty: the keys are read whatever else is set. Else the selector under which they are
    /// read, as `table.kind="name"` (the cluster's `fabric.kind="vc-router"`): a kind's
    /// keys, documented once beside the kind, and listed under it by `icnlab keys`.
    pub when: &'static str,
}

/// A key without a default (an `Option` in the config, absent from an empty file's config).
#[derive(Clone, Copy, Debug)]
pub struct OptionalKey {
    pub key: &'static str,
    /// The type of its values, for probing what the validation accepts.
    pub sample: Sample,
    pub unit: &'static str,
    pub meaning: &'static str,
}

/// The type of an optional key's values.
#[derive(Clone, Copy, Debug)]
pub enum Sample {
    Text,
    Number,
    Bool,
}

impl Sample {
    /// A value of this type.
    pub fn value(self) -> toml::Value {
        match self {
            Sample::Text => toml::Value::String(String::new()),
            Sample::Number => toml::Value::Float(0.5),
            Sample::Bool => toml::Value::Boolean(false),
        }
    }
}

/// One scalar a run reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Output {
    /// The column name in CSVs (lower_snake_case).
    pub name: &'static str,
    /// "cycles", "GB/s"; empty for counts without a unit and ratios.
    pub unit: &'static str,
    pub meaning: &'static str,
}

/// Shorthand for an [`Output`].
pub const fn output(name: &'static str, unit: &'static str, meaning: &'static str) -> Output {
    Output {
        name,
        unit,
        meaning,
    }
}

/// A family of scalars reported under the names of other outputs with a suffix
/// (`eta_std` and `eta_iab` when `sci` compares two transmitters).
#[derive(Clone, Copy, Debug)]
pub struct Suffix {
    pub suffix: &'static str,
    /// When the suffixed names appear and what they measure.
    pub meaning: &'static str,
}

/// One table a run reports (a row per source, node, message size, ...).
#[derive(Clone, Copy, Debug)]
pub struct OutputTable {
    pub name: &'static str,
    /// Its columns, in order; a run's columns must be these.
    pub columns: &'static [&'static str],
    pub meaning: &'static str,
}

/// Everything a model documents about itself (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct ModelDoc {
    /// Unit and meaning of every key of the config that has a default.
    pub keys: &'static [KeyGroup],
    /// Keys without a default.
    pub optional: &'static [OptionalKey],
    /// Every scalar a run may report (some only under some configurations: the meaning says),
    /// in lists so that a list another crate declares (a Netrace replay's) is named once.
    pub outputs: &'static [&'static [Output]],
    /// Suffixed copies of the outputs some configurations report.
    pub suffixes: &'static [Suffix],
    /// Every table a run may report.
    pub tables: &'static [OutputTable],
}

impl ModelDoc {
    /// Unit and meaning of `key`: the first group read whatever else is set whose prefix and
    /// key make it, else the first group of a kind that reads it.
    pub fn key(&self, key: &str) -> Option<&'static Key> {
        self.key_in(key, "")
    }

    /// Unit and meaning of `key` under the selector `when` (`fabric.kind="vc-router"`, see
    /// [`KeyGroup::when`]): that kind's row if it has one, else [`ModelDoc::key`]'s.
    pub fn key_in(&self, key: &str, when: &str) -> Option<&'static Key> {
        let find = |pick: &dyn Fn(&KeyGroup) -> bool| {
            self.keys.iter().filter(|g| pick(g)).find_map(|g| {
                let rest = key.strip_prefix(g.prefix)?;
                g.keys.iter().find(|k| k.key == rest)
            })
        };
        (!when.is_empty())
            .then(|| find(&|g| g.when == when))
            .flatten()
            .or_else(|| find(&|g| g.when.is_empty()))
            .or_else(|| find(&|_| true))
    }

    /// Whether `key` has a row of its own under the selector `when`.
    pub fn has_kind_row(&self, key: &str, when: &str) -> bool {
        !when.is_empty()
            && self.keys.iter().filter(|g| g.when == when).any(|g| {
                key.strip_prefix(g.prefix)
                    .is_some_and(|rest| g.keys.iter().any(|k| k.key == rest))
            })
    }

    /// Every documented key with a default, prefixed, in the order of the groups.
    pub fn key_names(&self) -> impl Iterator<Item = String> + '_ {
        self.keys
            .iter()
            .flat_map(|g| g.keys.iter().map(move |k| format!("{}{}", g.prefix, k.key)))
    }

    /// The rows a scalar named `name` may report under: its own rows (a name may have two,
    /// when two modes of the model measure it differently), else the rows whose name and one
    /// of [`ModelDoc::suffixes`] make it, and a family row whose `*` stands for a part of the
    /// name (`time_*_us`: one scalar per traced action).
    /// Every output row, in order.
    pub fn all_outputs(&self) -> impl Iterator<Item = &'static Output> + '_ {
        self.outputs.iter().flat_map(|list| list.iter())
    }

    pub fn outputs_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'static Output> + 'a {
        let own = self.all_outputs().filter(move |o| o.name == name);
        let base = self
            .suffixes
            .iter()
            .find_map(|s| name.strip_suffix(s.suffix))
            .filter(|_| !self.all_outputs().any(|o| o.name == name));
        let family = self.all_outputs().filter(move |o| {
            o.name.split_once('*').is_some_and(|(head, tail)| {
                name.len() > head.len() + tail.len()
                    && name.starts_with(head)
                    && name.ends_with(tail)
            })
        });
        own.chain(
            self.all_outputs()
                .filter(move |o| base.is_some_and(|b| o.name == b)),
        )
        .chain(family)
    }

    /// The first row of [`ModelDoc::outputs_named`].
    pub fn output(&self, name: &str) -> Option<&'static Output> {
        self.outputs_named(name).next()
    }

    /// What of `m` this doc does not declare: scalars without a row (or whose unit or
    /// meaning differ from it) and tables without a row or with other columns. Empty when
    /// the run reported only what the model documents.
    pub fn undeclared(&self, m: &crate::Metrics) -> Vec<String> {
        let mut out = Vec::new();
        for s in &m.scalars {
            let mut rows = self.outputs_named(&s.name).peekable();
            if rows.peek().is_none() {
                out.push(format!("scalar `{}` has no row", s.name));
            } else if !rows.any(|o| o.unit == s.unit && s.about.starts_with(o.meaning)) {
                out.push(format!(
                    "scalar `{}`: reported as [{}] {}",
                    s.name, s.unit, s.about
                ));
            }
        }
        for t in &m.tables {
            let mut rows = self.tables.iter().filter(|d| d.name == t.name).peekable();
            if rows.peek().is_none() {
                out.push(format!("table `{}` has no row", t.name));
            } else if !rows.any(|d| d.columns == t.columns.as_slice()) {
                out.push(format!(
                    "table `{}`: columns {:?} are not documented",
                    t.name, t.columns
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Metrics;

    const A: Output = output("eta", "", "accepted share");
    const B: Output = output("delay", "ns", "mean delay");
    const DOC: ModelDoc = ModelDoc {
        keys: &[
            KeyGroup {
                prefix: "",
                keys: &[key("load", "", "offered load"), key("nodes", "nodes", "N")],
                when: "",
            },
            KeyGroup {
                prefix: "ring.",
                keys: &[key("load", "", "a ring's load")],
                when: "",
            },
        ],
        optional: &[],
        outputs: &[&[A, B], &[output("time_*_us", "µs", "time in one action")]],
        suffixes: &[Suffix {
            suffix: "_std",
            meaning: "standard",
        }],
        tables: &[OutputTable {
            name: "per_source",
            columns: &["source", "throughput"],
            meaning: "per source",
        }],
    };

    #[test]
    fn keys_are_found_under_their_group_prefix() {
        assert_eq!(DOC.key("load").unwrap().meaning, "offered load");
        assert_eq!(DOC.key("ring.load").unwrap().meaning, "a ring's load");
        assert!(DOC.key("ring.nodes").is_none());
        assert_eq!(
            DOC.key_names().collect::<Vec<_>>(),
            ["load", "nodes", "ring.load"]
        );
    }

    #[test]
    fn a_run_is_checked_against_the_declared_outputs() {
        let mut m = Metrics::default();
        m.put(&A, 0.5).put_suffixed(&B, "_std", 3.0);
        m.push("time_recv_us", 1.0, "µs", "time in one action: recv");
        assert_eq!(DOC.undeclared(&m), Vec::<String>::new());
        m.push("delay", 1.0, "cycles", "mean delay");
        m.push("eta_iab", 1.0, "", "accepted share");
        m.push("time__us", 1.0, "µs", "time in one action");
        m.tables.push(crate::Table {
            name: "per_source".into(),
            columns: vec!["source".into()],
            rows: vec![],
            ci95: vec![],
        });
        let errors = DOC.undeclared(&m);
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors[0].contains("[cycles]"), "{errors:?}");
        assert!(errors[1].contains("`eta_iab` has no row"), "{errors:?}");
        assert!(errors[2].contains("`time__us` has no row"), "{errors:?}");
        assert!(errors[3].contains("columns"), "{errors:?}");
    }
}
