//! `icnlab metrics MODEL`: every scalar and table a model's runs report, with unit and
//! meaning, as aligned text or as the Markdown table that `docs/<model>.md` carries.
//!
//! Every row comes from the model's own [`ModelDoc`] (`Model::DOC`, next to its config in its
//! crate); the model reports its scalars through those same rows ([`Metrics::put`]), and a test
//! runs every model and checks that it reports nothing the table lacks.
//!
//! [`Metrics::put`]: icn_engine::Metrics::put

use crate::exec::ExecError;
use icn_engine::ModelDoc;

/// Aligned text: `name [unit]: meaning`, then the suffixed families and the tables.
pub fn text(model: &str, about: &str, doc: &ModelDoc) -> String {
    let width = doc.outputs.iter().map(|o| o.name.len()).max().unwrap_or(0);
    let mut s = format!("# model = \"{model}\": {about}\n# metric [unit]: meaning\n");
    for o in doc.outputs {
        let unit = if o.unit.is_empty() {
            String::new()
        } else {
            format!(" [{}]", o.unit)
        };
        s.push_str(&format!("{:width$}{unit}: {}\n", o.name, o.meaning));
    }
    for x in doc.suffixes {
        s.push_str(&format!("*{}: {}\n", x.suffix, x.meaning));
    }
    if !doc.tables.is_empty() {
        s.push_str("# table (columns): meaning\n");
    }
    for t in doc.tables {
        s.push_str(&format!(
            "{} ({}): {}\n",
            t.name,
            t.columns.join(", "),
            t.meaning
        ));
    }
    s
}

/// The Markdown tables of `docs/<model>.md`: the scalars (a suffixed family as one row
/// `*_SUFFIX`), then the tables if the model reports any.
pub fn markdown(doc: &ModelDoc) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut s = String::from("| metric | unit | meaning |\n|---|---|---|\n");
    for o in doc.outputs {
        s.push_str(&format!(
            "| `{}` | {} | {} |\n",
            o.name,
            cell(o.unit),
            cell(o.meaning)
        ));
    }
    for x in doc.suffixes {
        s.push_str(&format!("| `*{}` | | {} |\n", x.suffix, cell(x.meaning)));
    }
    if !doc.tables.is_empty() {
        s.push_str("\n| table | columns | meaning |\n|---|---|---|\n");
        for t in doc.tables {
            let columns: Vec<String> = t.columns.iter().map(|c| format!("`{c}`")).collect();
            s.push_str(&format!(
                "| `{}` | {} | {} |\n",
                t.name,
                columns.join(", "),
                cell(t.meaning)
            ));
        }
    }
    s
}

/// `icnlab metrics MODEL [--markdown]`.
pub fn metrics(model: &str, markdown_table: bool) -> Result<(), ExecError> {
    let runner = crate::models::find(model).ok_or_else(|| {
        ExecError::Usage(format!(
            "unknown model \"{model}\"; available: {}",
            crate::models::names()
        ))
    })?;
    if markdown_table {
        print!("{}", markdown(runner.doc()));
    } else {
        print!("{}", text(model, runner.about(), runner.doc()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each `docs/<model>.md` holds `icnlab metrics MODEL --markdown` verbatim, between
    /// `<!-- metrics MODEL -->` and `<!-- /metrics -->`.
    #[test]
    fn docs_tables_equal_the_generated_ones() {
        for runner in crate::models::all() {
            if runner.doc().outputs.is_empty() {
                continue;
            }
            let (doc, block) = crate::keys::docs_block(runner.name(), "metrics");
            assert_eq!(
                block,
                markdown(runner.doc()),
                "{doc}: regenerate with `icnlab metrics {} --markdown`",
                runner.name()
            );
        }
    }

    #[test]
    fn text_lists_every_output_with_its_unit() {
        let mm1 = crate::models::find("mm1").unwrap();
        let t = text("mm1", mm1.about(), mm1.doc());
        assert!(
            t.contains("sojourn_mean  [time]: mean time in system (simulated)\n"),
            "{t}"
        );
        assert!(t.contains("utilisation  : ρ = λ / μ\n"), "{t}");
    }
}
