//! `icnlab trace record`: records a SimGrid time-independent trace of a real MPI program with
//! the PMPI recorder of `icn_tirecord` (built here with `mpicc`, loaded with `LD_PRELOAD`).
//!
//! ```text
//! icnlab trace record --out ti-app -- mpirun -np 4 ./app
//! ```

use crate::exec::ExecError;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub command: TraceCommand,
}

#[derive(clap::Subcommand, Debug, Clone)]
pub enum TraceCommand {
    /// Run an MPI program under the PMPI recorder; writes index.txt and one ti_trace<rank>.txt
    /// per rank (SimGrid TI format, sizes in bytes).
    Record {
        /// Output folder of the trace.
        #[arg(long, default_value = "ti-trace")]
        out: PathBuf,
        /// Flop rate at which measured compute time becomes `compute <flops>` (flop/s).
        #[arg(long, default_value_t = 1e9)]
        flops: f64,
        /// The command to run, e.g. `mpirun -np 4 ./app` (after `--`).
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
}

pub fn run(args: &TraceArgs) -> Result<(), ExecError> {
    let TraceCommand::Record {
        out,
        flops,
        command,
    } = &args.command;
    if !(flops.is_finite() && *flops > 0.0 && *flops <= 1e18) {
        return Err(ExecError::Usage(format!(
            "--flops must be in (0, 1e18] flop/s, got {flops}"
        )));
    }
    let build = std::env::temp_dir().join(format!("icnlab-tirecord-{}", std::process::id()));
    let built = icn_tirecord::build(&build).map_err(|e| ExecError::Failed(e.to_string()))?;
    let out = std::path::absolute(out).map_err(|e| ExecError::Usage(format!("--out: {e}")))?;
    let status = icn_tirecord::record(&built.library, &out, *flops, command)
        .map_err(|e| ExecError::Usage(format!("cannot run `{}`: {e}", command.join(" "))));
    let _ = std::fs::remove_dir_all(&build);
    let status = status?;
    if !status.success() {
        return Err(ExecError::Failed(format!(
            "`{}` {status}; no complete trace in {}",
            command.join(" "),
            out.display()
        )));
    }
    let c = icn_tirecord::read_trace(&out).map_err(|e| ExecError::Failed(e.to_string()))?;
    let (msgs, bytes) = c
        .sent
        .values()
        .fold((0, 0), |(m, b), &(m2, b2)| (m + m2, b + b2));
    let actions: u64 = c.actions.values().sum();
    println!(
        "recorded {} ranks into {}: {actions} actions, {msgs} point-to-point messages ({bytes} B), {:.3e} flops of compute at {flops:e} flop/s",
        c.ranks,
        out.display(),
        c.compute.iter().sum::<f64>()
    );
    Ok(())
}
