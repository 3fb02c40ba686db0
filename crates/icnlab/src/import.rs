//! `icnlab import booksim FILE [key=value ...]`: a BookSim2 configuration as an icnlab
//! `vc-router` experiment file (the translation is `icn_booksim`'s), validated like any
//! experiment before it is written or printed — or, with `--run DIR`, run at once and its
//! results printed under BookSim2's statistic names beside icnlab's.

use crate::exec::{ExecError, ExecOptions};
use crate::experiment::{self, Plan};
use crate::report::RunReport;
use icn_engine::config::ExperimentFile;
use std::path::{Path, PathBuf};

/// The TOML of `config` with `overrides`, and the experiment it is (named `shown`), checked.
fn translated(
    config: &Path,
    overrides: &[String],
    shown: &Path,
) -> Result<(String, ExperimentFile), ExecError> {
    let name = config.display().to_string();
    let text = icn_engine::input::read_to_string(&name)
        .map_err(|e| ExecError::Usage(format!("cannot read `{name}`: {e}")))?;
    let entries =
        icn_booksim::parse(&name, &text, overrides).map_err(|e| ExecError::Usage(e.to_string()))?;
    let toml =
        icn_booksim::translate(&name, &entries).map_err(|e| ExecError::Usage(e.to_string()))?;
    // The vc-router model judges the values (ranges, deadlock check) as for any experiment.
    let file = ExperimentFile::parse(shown, &toml, false)?;
    experiment::check_file(&file)?;
    Ok((toml, file))
}

/// `import booksim FILE --run DIR`: translates and runs the experiment into `dir` (the
/// report, data and the translated file as `imported.toml`), as `icnlab run` would.
pub fn booksim_run(
    config: &Path,
    overrides: &[String],
    dir: &Path,
) -> Result<RunReport, ExecError> {
    let (toml, file) = translated(config, overrides, &dir.join("imported.toml"))?;
    let plan = Plan {
        sweep: false,
        shard: None,
        opts: ExecOptions {
            threads: 0,
            progress: false,
        },
    };
    let report = experiment::run_file(&file, dir, &plan)?;
    crate::outdir::write_atomic(&dir.join("imported.toml"), toml.as_bytes())?;
    Ok(report)
}

/// BookSim2's overall statistics, each as BookSim2 prints it with icnlab's metric beside it
/// (`Packet latency average = 39.28  (icnlab latency_mean)`), and the run's status.
pub fn booksim_statistics(report: &RunReport) -> String {
    let mut text = String::new();
    for p in &report.points {
        for (theirs, ours) in icn_booksim::STATISTICS {
            match p.metrics.get(ours) {
                Some(m) => text.push_str(&format!("{theirs} = {}  (icnlab {ours})\n", m.value)),
                None => text.push_str(&format!("{theirs} = -  (icnlab {ours}: not reported)\n")),
            }
        }
        text.push_str(&format!("status = {}\n", p.metrics.status.kind()));
    }
    text
}

/// Translates `config` with `overrides`; writes the TOML to `out` (atomically) or stdout.
/// A key icnlab does not model, a syntax error or a value the model refuses: exit 2.
pub fn booksim(
    config: &Path,
    overrides: &[String],
    out: Option<&PathBuf>,
) -> Result<(), ExecError> {
    let shown = out
        .cloned()
        .unwrap_or_else(|| PathBuf::from("imported.toml"));
    let (toml, _) = translated(config, overrides, &shown)?;
    match out {
        Some(path) => {
            crate::outdir::write_atomic(path, toml.as_bytes())?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{toml}"),
    }
    Ok(())
}
