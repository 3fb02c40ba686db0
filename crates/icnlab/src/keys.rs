//! `icnlab keys MODEL`: every key of a model with its default, allowed range, unit and
//! meaning, as aligned text or as the Markdown table that `docs/<model>.md` carries.
//!
//! Where each column comes from, so that the table cannot disagree with the code:
//!
//! | column | source |
//! |--------|--------|
//! | key, default | the typed config of an empty experiment file ([`Runner::defaults`]) |
//! | allowed | the model's own validation: the key is set to probe values (−1, 0, 2⁶³−1, `"?"`, …) and the `must be in …` or `expected …` of the first error is kept; a key that only one choice of a `kind`-like key of its table (or of the top level) reads is probed with each choice set, so `fabric.frame_size` shows the X-Switch's range, not "any u32" |
//! | unit, meaning | the model's own [`ModelDoc`](icn_engine::ModelDoc) (`Model::DOC`, written next to its config in its crate), checked by a test to cover exactly the keys of the config |
//!
//! A test also checks that each `docs/<model>.md` holds the Markdown table verbatim.

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
    /// The selector set (`fabric.kind="xswitch"`) under which `allowed` was found, if the
    /// default config does not read the key.
    pub context: Option<String>,
    /// A key of another kind than the default (only under `context`): the text listing
    /// shows it commented out, so that the listing stays a valid file.
    pub other_kind: bool,
}

/// The rows of `model`, in the config's order.
pub fn rows(runner: &dyn Runner) -> Result<Vec<KeyRow>, String> {
    let defaults = runner.defaults(toml::Table::new())?;
    let mut flat = Vec::new();
    flatten("", &defaults, &mut flat);
    let doc = runner.doc();
    let optional = doc.optional.iter().map(|o| KeyRow {
        key: o.key.to_owned(),
        default: "unset".into(),
        allowed: allowed(runner, o.key, &o.sample.value()),
        unit: o.unit,
        meaning: o.meaning,
        context: None,
        other_kind: false,
    });
    let typed: Result<Vec<KeyRow>, String> = flat
        .into_iter()
        .map(|(key, value)| {
            let doc = doc.key(&key).ok_or_else(|| {
                format!(
                    "model {}: key `{key}` has no unit and meaning in the model's `DOC`",
                    runner.name()
                )
            })?;
            Ok(KeyRow {
                allowed: allowed(runner, &key, &value),
                default: value.to_string(),
                key,
                unit: doc.unit,
                meaning: doc.meaning,
                context: None,
                other_kind: false,
            })
        })
        .collect();
    let mut rows: Vec<KeyRow> = typed?.into_iter().chain(optional).collect();
    with_kinds(runner, &mut rows)?;
    with_selectors(runner, &mut rows, &defaults);
    Ok(rows)
}

/// A table read per kind (the cluster's `[fabric]`: `kind`, then that kind's own struct)
/// shows only the default kind's keys in the default config. For each other choice of each
/// selector, the keys its defaults add are listed after the rows of their table, found
/// valid with the selector set (the row's context); a key that another kind reads with
/// another default says so in its `allowed` column.
fn with_kinds(runner: &dyn Runner, rows: &mut Vec<KeyRow>) -> Result<(), String> {
    for (sel, choices) in selectors(rows) {
        let Some((table, _)) = sel.rsplit_once('.') else {
            continue;
        };
        for c in choices {
            let mut preset = toml::Table::new();
            icn_engine::config::set_path(&mut preset, &sel, toml::Value::String(c.clone()));
            let Ok(defaults) = runner.defaults(preset) else {
                continue;
            };
            let mut flat = Vec::new();
            flatten("", &defaults, &mut flat);
            let context = format!("{sel}=\"{c}\"");
            for (key, value) in flat {
                if key == sel || !key.starts_with(&format!("{table}.")) {
                    continue;
                }
                let shown = value.to_string();
                // A key the kind documents itself is listed under it, with its own default
                // and meaning (a `vc-router` fabric's `topology` is the vc-router model's).
                let own_row = runner.doc().has_kind_row(&key, &context);
                if let Some(r) = rows
                    .iter_mut()
                    .find(|r| r.key == key && (!own_row || r.context.as_ref() == Some(&context)))
                {
                    if r.default != shown && r.context.is_none() {
                        r.allowed = format!("{}; `{c}`: {shown}", r.allowed);
                    }
                    continue;
                }
                let doc = runner.doc().key_in(&key, &context).ok_or_else(|| {
                    format!(
                        "model {}: key `{key}` has no unit and meaning in the model's `DOC`",
                        runner.name()
                    )
                })?;
                let (unit, meaning) = (doc.unit, doc.meaning);
                let at = rows
                    .iter()
                    .rposition(|r| r.key.starts_with(&format!("{table}.")))
                    .map_or(rows.len(), |i| i + 1);
                rows.insert(
                    at,
                    KeyRow {
                        allowed: allowed_in(runner, &key, &value, std::slice::from_ref(&context)),
                        default: shown,
                        key,
                        unit,
                        meaning,
                        context: Some(context.clone()),
                        other_kind: true,
                    },
                );
            }
        }
    }
    Ok(())
}

/// The keys whose values are a list of choices (`kind`, `topology`, ...), with the choices.
fn selectors(rows: &[KeyRow]) -> Vec<(String, Vec<String>)> {
    rows.iter()
        .filter(|r| r.allowed.starts_with('`') && r.default.starts_with('"'))
        .map(|r| {
            let list = r.allowed.split(':').next().unwrap_or("");
            let choices = list
                .split('`')
                .skip(1)
                .step_by(2)
                .map(String::from)
                .collect();
            (r.key.clone(), choices)
        })
        .collect()
}

/// A numeric key the default config never validates (its `kind` or `topology` does not read
/// it, so every probe passes or says "does not apply") is probed again with each choice of
/// each selector of its own table or of the top level set, and the first range found is
/// its allowed range.
fn with_selectors(runner: &dyn Runner, rows: &mut [KeyRow], defaults: &toml::Table) {
    let sels = selectors(rows);
    let table_of = |key: &str| key.rsplit_once('.').map_or("", |(t, _)| t).to_owned();
    for r in rows.iter_mut() {
        if !r.allowed.starts_with("any ") || r.allowed == "any text" {
            continue;
        }
        let Some(default) = lookup(defaults, &r.key) else {
            continue;
        };
        let table = table_of(&r.key);
        'found: for (sel, choices) in &sels {
            let st = table_of(sel);
            if sel == &r.key || !(st == table || st.is_empty()) {
                continue;
            }
            for c in choices {
                let context = [format!("{sel}=\"{c}\"")];
                let range = allowed_in(runner, &r.key, &default, &context);
                if !range.starts_with("any") {
                    r.allowed = range;
                    r.context = Some(context[0].clone());
                    break 'found;
                }
            }
        }
    }
}

/// The default of a dotted key.
fn lookup(t: &toml::Table, key: &str) -> Option<toml::Value> {
    match key.split_once('.') {
        Some((head, rest)) => lookup(t.get(head)?.as_table()?, rest),
        None => t.get(key).cloned(),
    }
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
fn probe(runner: &dyn Runner, key: &str, probe: &str, context: &[String]) -> Option<String> {
    let text = format!("model = \"{}\"\n", runner.name());
    let mut file = ExperimentFile::parse(Path::new("keys.toml"), &text, false).ok()?;
    let mut sets = context.to_vec();
    sets.push(format!("{key}={probe}"));
    if let Err(e) = file.apply_sets(&sets) {
        return Some(e.to_string());
    }
    runner
        .check(&file, &file.points())
        .err()
        .map(|e| e.to_string())
}

/// What the validation says it accepts for `key` (see the module table).
fn allowed(runner: &dyn Runner, key: &str, default: &toml::Value) -> String {
    allowed_in(runner, key, default, &[])
}

/// As [`allowed`], with the `context` sets applied first; in a context only errors that name
/// `key` count (another key the context leaves invalid says nothing about this one).
fn allowed_in(runner: &dyn Runner, key: &str, default: &toml::Value, context: &[String]) -> String {
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
        let Some(e) = probe(runner, key, p, context) else {
            continue;
        };
        if (!context.is_empty() && !e.contains(&format!("`{key}`")))
            || e.contains("does not apply to kind")
        {
            // Not this key's range (another kind reads it: see `with_selectors`).
            continue;
        }
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
        // A key without a default, or of another kind, is listed commented out, so the text
        // stays a valid file.
        let (hash, key_width) = if r.default == "unset" || r.other_kind {
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

/// The file of `docs/` that carries a model's tables.
#[cfg(test)]
fn doc_file(model: &str) -> &'static str {
    match model {
        "sci" | "sci-switched" => "sci.md",
        "xswitch" | "vc-router" => "thnet.md",
        "nic" => "nicmodel.md",
        "via-bench" => "via.md",
        "bcast" => "bcast.md",
        "cluster" => "cluster.md",
        _ => "mm1.md",
    }
}

/// The text between `<!-- TAG MODEL -->` and `<!-- /TAG -->` in the model's docs file, and
/// the file's name.
#[cfg(test)]
pub(crate) fn docs_block(model: &str, tag: &str) -> (&'static str, String) {
    let doc = doc_file(model);
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(doc);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let open = format!("<!-- {tag} {model} -->\n");
    let start = text
        .find(&open)
        .unwrap_or_else(|| panic!("{doc}: no `{}`", open.trim()))
        + open.len();
    let close = format!("<!-- /{tag} -->");
    let end = start
        + text[start..]
            .find(&close)
            .unwrap_or_else(|| panic!("{doc}: no `{close}`"));
    (doc, text[start..end].to_owned())
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
            for stale in runner.doc().key_names() {
                assert!(
                    keys.contains(&stale.as_str()),
                    "{}: `{stale}` is not a key",
                    runner.name()
                );
            }
        }
    }

    /// The optional keys are keys of their model: setting one is not an "unknown field".
    #[test]
    fn optional_keys_exist() {
        for runner in crate::models::all() {
            for o in runner.doc().optional {
                let value = o.sample.value().to_string();
                let e = probe(runner, o.key, &value, &[]).unwrap_or_default();
                assert!(!e.contains("unknown"), "{} {}: {e}", runner.name(), o.key);
            }
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

    /// A number of the `allowed` column: `123`, `-1`, `0.5`, `10^6`, `2^30`.
    fn number(s: &str) -> Option<f64> {
        let s = s.trim();
        match s.split_once('^') {
            Some((b, e)) => Some(b.parse::<f64>().ok()?.powf(e.parse().ok()?)),
            None => s.parse().ok(),
        }
    }

    /// Issue 22: the documented range is the validated one. For every key whose `allowed`
    /// reads `A ..= B` (an optional unit after B), both ends are accepted and, for integer
    /// keys, A − 1 and B + 1 are refused, in the context the range was found in. Ranges
    /// with a formula or a note (`fifo_size − …`, `(the fabric's endpoints)`) are skipped.
    #[test]
    fn documented_ranges_are_the_validated_ones() {
        let mut checked = 0;
        for runner in crate::models::all() {
            for r in rows(runner).unwrap() {
                let Some((lo, hi)) = r.allowed.split_once(" ..= ") else {
                    continue;
                };
                let hi_word = hi.split_whitespace().next().unwrap_or("");
                let rest = hi.trim_start_matches(hi_word).trim();
                let (Some(a), Some(b)) = (number(lo), number(hi_word)) else {
                    continue;
                };
                if rest.contains('(') || lo.contains(' ') {
                    continue;
                }
                let int = !r.default.contains('.');
                if !int && r.default.starts_with('[') {
                    continue;
                }
                let ctx: Vec<String> = r.context.iter().cloned().collect();
                let show = |v: f64| {
                    if int {
                        format!("{}", v as i128)
                    } else {
                        format!("{v:?}")
                    }
                };
                let names = |e: &Option<String>| {
                    e.as_ref()
                        .is_some_and(|e| e.contains(&format!("`{}`", r.key)))
                };
                for inside in [a, b] {
                    // Refused when the error names the key or a table holding it (a pingpong
                    // of the documented 10^6 iterations was refused under `workload` as too
                    // many operations); a limit of another key that depends on this one
                    // (`stop_threshold` below `fifo_size − 2·link_delay`) is that key's.
                    let e = probe(runner, &r.key, &show(inside), &ctx);
                    let refused = names(&e) || {
                        let mut tables = r.key.match_indices('.').map(|(i, _)| &r.key[..i]);
                        tables.any(|t| e.as_ref().is_some_and(|e| e.contains(&format!("`{t}`"))))
                    };
                    assert!(
                        !refused,
                        "{} {} = {}: {e:?}",
                        runner.name(),
                        r.key,
                        show(inside)
                    );
                }
                if int && b < 9.2e18 {
                    for outside in [a - 1.0, b + 1.0] {
                        if outside < 0.0 && r.allowed.starts_with('0') && a == 0.0 {
                            // Below 0 is the TOML type's error, which need not name the key.
                            continue;
                        }
                        let e = probe(runner, &r.key, &show(outside), &ctx);
                        assert!(
                            e.is_some(),
                            "{} {} = {} is outside {} but accepted",
                            runner.name(),
                            r.key,
                            show(outside),
                            r.allowed
                        );
                    }
                }
                checked += 1;
            }
        }
        assert!(checked > 50, "only {checked} ranges checked");
    }

    /// Keys the issue found documented as "any": each now shows its validated range.
    #[test]
    fn keys_read_by_one_kind_show_that_kinds_range() {
        let find = |model: &str, key: &str| {
            let runner = crate::models::find(model).unwrap();
            rows(runner)
                .unwrap()
                .into_iter()
                .find(|r| r.key == key)
                .unwrap()
                .allowed
        };
        assert_eq!(find("cluster", "nic.send_ns"), "0 ..= 10^9 ns");
        assert_eq!(
            find("cluster", "fabric.frame_size"),
            "1 ..= 65536 payload bytes"
        );
        assert_eq!(find("sci-switched", "grid_rows"), "2 ..= 8");
        assert_eq!(find("cluster", "workload.iterations"), "1 ..= 524288");
    }

    /// Each `docs/<model>.md` holds `icnlab keys MODEL --markdown` verbatim, between
    /// `<!-- keys MODEL -->` and `<!-- /keys -->`, so the docs cannot drift from the code.
    #[test]
    fn docs_tables_equal_the_generated_ones() {
        for runner in crate::models::all() {
            let (doc, block) = docs_block(runner.name(), "keys");
            assert_eq!(
                block,
                markdown(&rows(runner).unwrap()),
                "{doc}: regenerate with `icnlab keys {} --markdown`",
                runner.name()
            );
        }
    }
}
