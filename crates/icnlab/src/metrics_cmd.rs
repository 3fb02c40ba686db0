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
    let width = doc.all_outputs().map(|o| o.name.len()).max().unwrap_or(0);
    let mut s = format!("# model = \"{model}\": {about}\n# metric [unit]: meaning\n");
    for o in doc.all_outputs() {
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
    for o in doc.all_outputs() {
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
            let (doc, block) = crate::keys::docs_block(runner.name(), "metrics");
            assert_eq!(
                block,
                markdown(runner.doc()),
                "{doc}: regenerate with `icnlab metrics {} --markdown`",
                runner.name()
            );
        }
    }

    /// Small configurations that together make each model report every output it declares.
    const RUNS: &[(&str, &str)] = &[
        ("mm1", "customers = 1000"),
        (
            "sci",
            "warmup_cycles = 100\nmeasure_cycles = 2000\ntransmitter = \"compare\"",
        ),
        ("sci", "warmup_cycles = 100\nmeasure_cycles = 2000"),
        (
            "sci-switched",
            "[ring]\nnodes = 4\ntransmitter = \"compare\"\nwarmup_cycles = 100\nmeasure_cycles = 2000",
        ),
        (
            "sci-switched",
            "topology = \"ring-of-rings\"\nrings = 2\n[ring]\nnodes = 4\ntransmitter = \"compare\"\nwarmup_cycles = 100\nmeasure_cycles = 2000",
        ),
        (
            "xswitch",
            "topology = \"mesh:2x2\"\nwarmup = 100\nmeasure = 1000\ntrace_port = \"s0.A\"",
        ),
        (
            "vc-router",
            "topology = \"mesh:2x2\"\nwarmup = 100\nmeasure = 1000",
        ),
        ("bcast", "ccc_k = 2\nccc_dh = 1\nscheme = \"optimal\""),
        ("nic", "sizes = [4, 4096]\nround_trips = 2\nmessages = 50"),
        ("nic", "benchmark = \"pdring\""),
        (
            "nic",
            "benchmark = \"validation\"\nround_trips = 2\nmessages = 50",
        ),
        (
            "nic",
            "benchmark = \"ablation\"\nround_trips = 2\nmessages = 50",
        ),
        (
            "nic",
            "benchmark = \"sensitivity\"\nround_trips = 2\nmessages = 50",
        ),
        (
            "via-bench",
            "program = \"pingpong\"\niterations = 10\nwarmup = 1",
        ),
        (
            "via-bench",
            "program = \"window\"\nmessages = 10\nwarmup = 1",
        ),
        (
            "cluster",
            "[workload]\nkind = \"pingpong\"\niterations = 2\n[fabric]\nkind = \"ideal\"\ntopology = \"crossbar:2\"",
        ),
        (
            "cluster",
            "[workload]\nkind = \"bcast\"\nalgorithm = \"ilbm\"\nbytes = 64\n[fabric]\nkind = \"ideal\"\ntopology = \"ccc:3,3\"",
        ),
        ("cluster", TI),
        ("xswitch", NETRACE),
        ("vc-router", NETRACE),
    ];

    /// A SimGrid time-independent trace of 4 ranks (a broadcast) on a flow crossbar.
    const TI: &str = concat!(
        "[workload]\nkind = \"ti\"\nfile = \"",
        env!("CARGO_MANIFEST_DIR"),
        "/../../experiments/traces/simgrid-examples/actions_bcast.txt\"\n",
        "[fabric]\nkind = \"flow\"\ntopology = \"crossbar:4\""
    );

    /// A Netrace replay: one region of the bundled multi-region sample on an 8×8 mesh.
    const NETRACE: &str = concat!(
        "topology = \"mesh:8x8\"\n[netrace]\nregions = [0]\nfile = \"",
        env!("CARGO_MANIFEST_DIR"),
        "/../../experiments/traces/netrace/multiregion.tra.bz2\""
    );

    /// A run reports only what its model declares (same unit and meaning), and every
    /// declared output and table is reported by one of [`RUNS`].
    #[test]
    fn every_model_reports_exactly_its_declared_outputs() {
        use crate::exec::ExecOptions;
        let mut seen: Vec<(&str, String)> = Vec::new();
        for &(model, body) in RUNS {
            let runner = crate::models::find(model).unwrap();
            let text = format!("model = \"{model}\"\nreplications = 1\n{body}\n");
            let file =
                icn_engine::ExperimentFile::parse(std::path::Path::new("t.toml"), &text, false)
                    .unwrap();
            let opts = ExecOptions {
                threads: 1,
                progress: false,
            };
            let points = runner
                .execute(&file, &file.points(), opts, &|_| Ok(()))
                .unwrap_or_else(|e| panic!("{model} {body}: {e}"));
            for p in points {
                let m = &p.metrics;
                assert_eq!(runner.doc().undeclared(m), Vec::<String>::new(), "{model}");
                for s in &m.scalars {
                    let o = runner.doc().output(&s.name).unwrap();
                    seen.push((model, o.name.to_owned()));
                }
                seen.extend(m.tables.iter().map(|t| (model, t.name.clone())));
            }
        }
        for runner in crate::models::all() {
            let name = runner.name();
            let doc = runner.doc();
            assert!(
                doc.all_outputs().next().is_some(),
                "{name} declares no outputs"
            );
            let declared = doc
                .all_outputs()
                .map(|o| o.name)
                .chain(doc.tables.iter().map(|t| t.name));
            for d in declared {
                assert!(
                    seen.contains(&(name, d.to_owned())),
                    "{name}: `{d}` is declared but no test run reports it"
                );
            }
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
