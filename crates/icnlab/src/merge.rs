//! `icnlab merge`: joins the outputs of `sweep --shard i/n` runs into one directory.

use crate::report::RunReport;
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

pub fn merge(shards: &[PathBuf], out: &Path) -> Result<()> {
    let mut reports = shards
        .iter()
        .map(|d| RunReport::read_json(&d.join("report.json")))
        .collect::<Result<Vec<_>>>()?;
    let mut merged = reports.remove(0);
    for r in reports {
        if (r.model.as_str(), r.seed, r.replications, r.title.as_str())
            != (
                merged.model.as_str(),
                merged.seed,
                merged.replications,
                merged.title.as_str(),
            )
        {
            bail!(
                "{} comes from a different experiment (model, title, seed or replications differ)",
                r.config_file
            );
        }
        merged.wall_time_s += r.wall_time_s;
        merged.points.extend(r.points);
    }
    merged.points.sort_by_key(|p| p.index);
    if let Some(w) = merged.points.windows(2).find(|w| w[0].index == w[1].index) {
        bail!("point {} appears in more than one shard", w[0].index);
    }
    merged.shard = None;
    let staging = crate::outdir::Staging::begin(out).map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::experiment::write_outputs(&merged, staging).map_err(|e| anyhow::anyhow!("{e}"))?;
    println!(
        "merged {} points from {} shards into {}",
        merged.points.len(),
        shards.len(),
        out.display()
    );
    Ok(())
}
