//! `icnlab import booksim FILE [key=value ...]`: a BookSim2 configuration as an icnlab
//! `vc-router` experiment file (the translation is `icn_booksim`'s), validated like any
//! experiment before it is written or printed.

use crate::exec::ExecError;
use crate::experiment;
use icn_engine::config::ExperimentFile;
use std::path::{Path, PathBuf};

/// Translates `config` with `overrides`; writes the TOML to `out` (atomically) or stdout.
/// A key icnlab does not model, a syntax error or a value the model refuses: exit 2.
pub fn booksim(
    config: &Path,
    overrides: &[String],
    out: Option<&PathBuf>,
) -> Result<(), ExecError> {
    let name = config.display().to_string();
    let text = icn_engine::input::read_to_string(&name)
        .map_err(|e| ExecError::Usage(format!("cannot read `{name}`: {e}")))?;
    let entries =
        icn_booksim::parse(&name, &text, overrides).map_err(|e| ExecError::Usage(e.to_string()))?;
    let toml =
        icn_booksim::translate(&name, &entries).map_err(|e| ExecError::Usage(e.to_string()))?;
    // The vc-router model judges the values (ranges, deadlock check) as for any experiment.
    let shown = out
        .cloned()
        .unwrap_or_else(|| PathBuf::from("imported.toml"));
    let file = ExperimentFile::parse(&shown, &toml, false)?;
    experiment::check_file(&file)?;
    match out {
        Some(path) => {
            crate::outdir::write_atomic(path, toml.as_bytes())?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{toml}"),
    }
    Ok(())
}
