//! Building the recorder and the project's MPI test program with `mpicc`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The recorder's C source.
pub const RECORDER_C: &str = include_str!("../c/tirecord.c");
/// The project's MPI test program (ring, nonblocking, collectives; writes its own counts).
pub const EXCHANGE_C: &str = include_str!("../c/mpi_exchange.c");

/// What [`build`] made.
#[derive(Clone, Debug)]
pub struct Built {
    /// `libtirecord.so`, for `LD_PRELOAD`.
    pub library: PathBuf,
    /// `mpi_exchange`, the test program.
    pub exchange: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("cannot run {0}: {1} (install OpenMPI: apt-get install openmpi-bin libopenmpi-dev)")]
    Missing(String, std::io::Error),
    #[error("{0} failed:\n{1}")]
    Failed(String, String),
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// Compiles the recorder and the test program into `dir` (created if missing).
pub fn build(dir: &Path) -> Result<Built, BuildError> {
    std::fs::create_dir_all(dir).map_err(|e| BuildError::Io(dir.to_path_buf(), e))?;
    let src = |name: &str, text: &str| -> Result<PathBuf, BuildError> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| BuildError::Io(p.clone(), e))?;
        Ok(p)
    };
    let rec = src("tirecord.c", RECORDER_C)?;
    let exc = src("mpi_exchange.c", EXCHANGE_C)?;
    let built = Built {
        library: dir.join("libtirecord.so"),
        exchange: dir.join("mpi_exchange"),
    };
    mpicc(&["-shared", "-fPIC"], &rec, &built.library)?;
    mpicc(&[], &exc, &built.exchange)?;
    Ok(built)
}

fn mpicc(flags: &[&str], src: &Path, out: &Path) -> Result<(), BuildError> {
    let o = Command::new("mpicc")
        .args(flags)
        .args(["-O2", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(out)
        .arg(src)
        .output()
        .map_err(|e| BuildError::Missing("mpicc".into(), e))?;
    if !o.status.success() {
        return Err(BuildError::Failed(
            format!("mpicc {}", src.display()),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ));
    }
    Ok(())
}
