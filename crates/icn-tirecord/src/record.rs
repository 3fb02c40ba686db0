//! Running a program under the recorder.

use std::path::Path;
use std::process::{Command, ExitStatus};

/// Runs `command` (e.g. `mpirun -np 4 ./app`) with the recorder preloaded in every rank,
/// writing the trace into `out` at `flops` flop/s. When the command is OpenMPI's `mpirun` (or
/// `mpiexec`), the settings go to the ranks only, as `-x NAME=VALUE` options inserted after it
/// (the launcher itself does not load the recorder); any other command gets them in its
/// environment.
pub fn record(
    library: &Path,
    out: &Path,
    flops: f64,
    command: &[String],
) -> std::io::Result<ExitStatus> {
    let (prog, args) = command
        .split_first()
        .ok_or_else(|| std::io::Error::other("no command to record"))?;
    let mut c = Command::new(prog);
    let launcher = Path::new(prog)
        .file_name()
        .is_some_and(|n| n == "mpirun" || n == "mpiexec");
    let settings = [
        ("LD_PRELOAD", library.as_os_str().to_owned()),
        ("ICN_TI_DIR", out.as_os_str().to_owned()),
        ("ICN_TI_FLOPS", format!("{flops:e}").into()),
    ];
    for (name, value) in settings {
        if launcher {
            let mut kv = std::ffi::OsString::from(format!("{name}="));
            kv.push(value);
            c.arg("-x").arg(kv);
        } else {
            c.env(name, value);
        }
    }
    c.args(args).status()
}
