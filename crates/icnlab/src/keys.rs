//! `icnlab keys MODEL`: every key of a model with its default, allowed range, unit and
//! meaning, as aligned text or as the Markdown table that `docs/<model>.md` carries.
//!
//! Where each column comes from, so that the table cannot disagree with the code:
//!
//! | column | source |
//! |--------|--------|
//! | key, default | the typed config of an empty experiment file ([`Runner::defaults`]) |
//! | allowed | the model's own validation: the key is set to probe values (−1, 0, 2⁶³−1, `"?"`, …) and the `must be in …` or `expected …` of the first error is kept |
//! | unit, meaning | [`docs::DOCS`], checked by a test to cover exactly the keys of the config |
//!
//! A test also checks that each `docs/<model>.md` holds the Markdown table verbatim.

mod docs;

use crate::exec::{ExecError, Runner};
use icn_engine::ExperimentFile;
use std::path::Path;

/// One key of a model, every column filled.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyRow {
    pub key: String,
    /// The default in TOML syntax.
    pub default: String,
    /// What the validation accepts ("1 ..= 1048576 symbols", "`none`, `crc16`", "any u64").
    pub allowed: String,
    pub unit: &'static str,
    pub meaning: &'static str,
}

/// The rows of `model`, in the config's order.
pub fn rows(runner: &dyn Runner) -> Result<Vec<KeyRow>, String> {
    let defaults = runner.defaults()?;
    let mut flat = Vec::new();
    flatten("", &defaults, &mut flat);
    let optional = docs::OPTIONAL
        .iter()
        .filter(|o| o.0 == runner.name())
        .map(|o| KeyRow {
            key: o.1.to_owned(),
            default: "unset".into(),
            allowed: allowed(runner, o.1, &o.2.value()),
            unit: o.3,
            meaning: o.4,
        });
    let typed: Result<Vec<KeyRow>, String> = flat
        .into_iter()
        .map(|(key, value)| {
            let (unit, meaning) = docs::lookup(runner.name(), &key).ok_or_else(|| {
                format!(
                    "model {}: key `{key}` has no unit and meaning in keys/docs.rs",
                    runner.name()
                )
            })?;
            Ok(KeyRow {
                allowed: allowed(runner, &key, &value),
                default: value.to_string(),
                key,
                unit,
                meaning,
            })
        })
        .collect();
    Ok(typed?.into_iter().chain(optional).collect())
}

/// Dotted keys and their defaults (tables flattened; an empty table is a value).
fn flatten(prefix: &str, t: &toml::Table, out: &mut Vec<(String, toml::Value)>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(inner) if !inner.is_empty() => flatten(&key, inner, out),
            other => out.push((key, other.clone())),
        }
    }
}

/// The error `check` gives for `key = probe` in an otherwise empty file of this model, or
/// `None` if the value is accepted.
fn probe(runner: &dyn Runner, key: &str, probe: &str) -> Option<String> {
    let text = format!("model = \"{}\"\n", runner.name());
    let mut file = ExperimentFile::parse(Path::new("keys.toml"), &text, false).ok()?;
    if let Err(e) = file.apply_sets(&[format!("{key}={probe}")]) {
        return Some(e.to_string());
    }
    runner
        .check(&file, &file.points())
        .err()
        .map(|e| e.to_string())
}

/// What the validation says it accepts for `key` (see the module table).
fn allowed(runner: &dyn Runner, key: &str, default: &toml::Value) -> String {
    let probes: &[&str] = match default {
        // Negative, zero, then the largest u16, u32 and i64: a range check shows at the first
        // value inside the key's type but outside its range.
        toml::Value::Integer(_) => &["-1", "0", "65535", "4294967295", "9223372036854775807"],
        toml::Value::Float(_) => &["-1.0", "0.0", "1e300"],
        toml::Value::String(_) => &["\"?\""],
        toml::Value::Boolean(_) => return "`true`, `false`".into(),
        toml::Value::Array(_) => &["[-1]", "[\"?\"]"],
        _ => &[],
    };
    let mut type_name = None;
    for p in probes {
        let Some(e) = probe(runner, key, p) else {
            continue;
        };
        if let Some(range) = between(&e, "must be in ", ", got") {
            return range.to_owned();
        }
        if let Some(choices) = after(&e, "expected one of ").or_else(|| after(&e, "expected `")) {
            let choices = choices.split(" in `").next().unwrap_or(choices).trim();
            return if e.contains("expected `") && !e.contains("expected one of") {
                format!("`{choices}")
            } else {
                choices.to_owned()
            };
        }
        if let Some(t) = between(&e, "expected ", " in `") {
            type_name.get_or_insert_with(|| t.to_owned());
        } else if e.contains("(os error") {
            // `?` was taken for a file name: the key takes a bundled name or a path.
            return "a bundled name or a file path".into();
        } else if p.starts_with('"') {
            // A free-form string the model parses itself (topology, node name): its message.
            let why = e.rsplit_once("`: ").map_or(e.as_str(), |(_, w)| w);
            return why.trim().to_owned();
        }
    }
    match (default, type_name) {
        (toml::Value::String(_), _) => "any text".into(),
        (_, Some(t)) => format!("any {t}"),
        (toml::Value::Float(_), None) => "any number".into(),
        _ => "any".into(),
    }
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = after(s, start)?;
    Some(rest.split(end).next().unwrap_or(rest))
}

fn after<'a>(s: &'a str, start: &str) -> Option<&'a str> {
    s.find(start).map(|i| &s[i + start.len()..])
}

/// Aligned text: `key = default  # allowed; unit; meaning` (pasteable into a file).
pub fn text(model: &str, about: &str, rows: &[KeyRow]) -> String {
    let width = rows.iter().map(|r| r.key.len()).max().unwrap_or(0) + 2;
    let dwidth = rows.iter().map(|r| r.default.len()).max().unwrap_or(0) + 2;
    let mut s =
        format!("# model = \"{model}\": {about}\n# key = default  # allowed [unit]: meaning\n");
    for r in rows {
        let unit = if r.unit.is_empty() {
            String::new()
        } else {
            format!(" [{}]", r.unit)
        };
        // A key without a default is listed commented out, so the text stays valid TOML.
        let (hash, key_width) = if r.default == "unset" {
            ("# ", width.saturating_sub(2))
        } else {
            ("", width)
        };
        s.push_str(&format!(
            "{hash}{:key_width$} = {:dwidth$} # {}{unit}: {}\n",
            r.key, r.default, r.allowed, r.meaning
        ));
    }
    s
}

/// The Markdown table of `docs/<model>.md`.
pub fn markdown(rows: &[KeyRow]) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut s =
        String::from("| key | default | allowed | unit | meaning |\n|---|---|---|---|---|\n");
    for r in rows {
        s.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {} |\n",
            r.key,
            cell(&r.default),
            cell(&r.allowed),
            cell(r.unit),
            cell(r.meaning)
        ));
    }
    s
}

/// `icnlab keys MODEL [--markdown]`.
pub fn keys(model: &str, markdown_table: bool) -> Result<(), ExecError> {
    let runner = crate::models::find(model).ok_or_else(|| {
        ExecError::Usage(format!(
            "unknown model \"{model}\"; available: {}",
            crate::models::names()
        ))
    })?;
    let rows = rows(runner).map_err(ExecError::Failed)?;
    if markdown_table {
        print!("{}", markdown(&rows));
    } else {
        print!("{}", text(model, runner.about(), &rows));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 14, item 7: every key of every model has a default, an allowed range, a unit
    /// column and a meaning; the docs table has no key the config lacks.
    #[test]
    fn every_key_of_every_model_is_documented() {
        for runner in crate::models::all() {
            let rows = rows(runner).unwrap_or_else(|e| panic!("{e}"));
            for r in &rows {
                assert!(!r.meaning.is_empty(), "{} {}", runner.name(), r.key);
                assert!(!r.allowed.is_empty(), "{} {}", runner.name(), r.key);
            }
            let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
            for stale in docs::keys_of(runner.name()) {
                assert!(
                    keys.contains(&stale),
                    "{}: `{stale}` is not a key",
                    runner.name()
                );
            }
        }
    }

    /// The optional keys are keys of their model: setting one is not an "unknown field".
    #[test]
    fn optional_keys_exist() {
        for &(model, key, sample, _, _) in docs::OPTIONAL {
            let runner = crate::models::find(model).unwrap();
            let value = sample.value().to_string();
            let e = probe(runner, key, &value).unwrap_or_default();
            assert!(!e.contains("unknown"), "{model} {key}: {e}");
        }
    }

    #[test]
    fn allowed_comes_from_the_validation() {
        let mm1 = crate::models::find("mm1").unwrap();
        let mm1_rows = rows(mm1).unwrap();
        let warmup = mm1_rows.iter().find(|r| r.key == "warmup").unwrap();
        assert_eq!(warmup.default, "1000");
        assert_eq!(warmup.allowed, "0 ..= 10^9");
        let bcast = crate::models::find("bcast").unwrap();
        let bcast_rows = rows(bcast).unwrap();
        let tries = bcast_rows.iter().find(|r| r.key == "greedy_tries").unwrap();
        assert_eq!(tries.allowed, "0..=10000");
    }

    /// Each `docs/<model>.md` holds `icnlab keys MODEL --markdown` verbatim, between
    /// `<!-- keys MODEL -->` and `<!-- /keys -->`, so the docs cannot drift from the code.
    #[test]
    fn docs_tables_equal_the_generated_ones() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        for runner in crate::models::all() {
            let doc = docs::doc_file(runner.name());
            let path = root.join(doc);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let open = format!("<!-- keys {} -->\n", runner.name());
            let start = text
                .find(&open)
                .unwrap_or_else(|| panic!("{doc}: no `{}`", open.trim()))
                + open.len();
            let end = start
                + text[start..]
                    .find("<!-- /keys -->")
                    .unwrap_or_else(|| panic!("{doc}: no `<!-- /keys -->`"));
            let want = markdown(&rows(runner).unwrap());
            assert_eq!(
                &text[start..end],
                want,
                "{doc}: regenerate with `icnlab keys {} --markdown`",
                runner.name()
            );
        }
    }
}
