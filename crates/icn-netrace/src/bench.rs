//! The standard speed workload of Netrace replay (`icnlab bench netrace-vc netrace-xswitch`):
//! PARSEC blackscholes (`lngrex.tra.bz2`: 64 nodes, 81 749 packets, 2 325 306 cycles), every
//! region, node `i` on endpoint `i` of an 8×8 mesh, 16-byte flits on VC routers, each model's
//! default router. The unit of work is one trace packet delivered.

use crate::NetraceConfig;
use std::path::{Path, PathBuf};

/// Packets of the blackscholes trace.
pub const BLACKSCHOLES_PACKETS: u64 = 81_749;

/// Where the shared data keeps the trace, below some folder above the working directory or
/// the running program (the repository keeps the trace, with its licence, in `experiments/traces/netrace/`).
pub const BLACKSCHOLES: &str = "experiments/traces/netrace/lngrex.tra.bz2";

/// The blackscholes trace: `$ICN_NETRACE_BLACKSCHOLES` if set, else [`BLACKSCHOLES`] below the
/// first folder above the working directory or the program that has it.
pub fn blackscholes_file() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("ICN_NETRACE_BLACKSCHOLES") {
        return Ok(PathBuf::from(p));
    }
    let mut starts: Vec<PathBuf> = Vec::new();
    starts.extend(std::env::current_dir().ok());
    starts.extend(std::env::current_exe().ok());
    starts
        .iter()
        .flat_map(|s| s.ancestors())
        .map(|d| d.join(BLACKSCHOLES))
        .find(|p| p.exists())
        .ok_or_else(|| {
            format!(
                "{BLACKSCHOLES} not found above {}; set ICN_NETRACE_BLACKSCHOLES to the file",
                starts
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" or ")
            )
        })
}

/// The workload's `[netrace]` table for a trace at `file`.
pub fn config(file: &Path) -> NetraceConfig {
    NetraceConfig {
        file: file.display().to_string(),
        ..NetraceConfig::default()
    }
}
