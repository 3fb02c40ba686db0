//! `icnlab merge`: joins the outputs of `sweep --shard i/n` runs into one directory, and proves
//! the join complete before writing anything.
//!
//! Every shard's report carries the experiment's fingerprint (file text, `--quick`, `--set`
//! values, seed), its `[i, n]` and the full sweep's point count. The merge is refused — exit 2,
//! naming the folders — when a shard is missing, appears twice, belongs to another experiment
//! or split, or holds a point that shard i/n cannot hold. Why: `merge s0 s2` of a 3-shard sweep
//! used to write a report that looked complete, and shards run with different `--set` values
//! merged silently (issue 14). An empty shard (more shards than points) is valid.

use crate::report::RunReport;
use std::path::{Path, PathBuf};

/// Why shards cannot be merged (all the input's fault: exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MergeRefused(pub String);

fn refuse(msg: String) -> MergeRefused {
    MergeRefused(msg)
}

/// Reads the shards' reports and joins them, checking that they are exactly the shards
/// 0..n of one experiment with every point present once.
pub fn join(shards: &[PathBuf]) -> Result<RunReport, MergeRefused> {
    let mut reports: Vec<(&Path, RunReport)> = Vec::with_capacity(shards.len());
    for dir in shards {
        let path = dir.join("report.json");
        let r = RunReport::read_json(&path).map_err(|e| refuse(format!("{e:#}")))?;
        if r.experiment.is_empty() || r.sweep_points == 0 {
            return Err(refuse(format!(
                "{}: made by an older icnlab without an experiment fingerprint; re-run the shard",
                path.display()
            )));
        }
        let Some((_, n)) = r.shard else {
            return Err(refuse(format!(
                "{}: not a shard (run with `sweep --shard i/n`)",
                dir.display()
            )));
        };
        if let Some((first_dir, first)) = reports.first() {
            if r.experiment != first.experiment || r.sweep_points != first.sweep_points {
                return Err(refuse(format!(
                    "{} is from a different experiment than {} (fingerprint {} vs {}: file, \
                     --quick, --set values or seed differ)",
                    dir.display(),
                    first_dir.display(),
                    r.experiment,
                    first.experiment
                )));
            }
            if Some(n) != first.shard.map(|s| s.1) {
                return Err(refuse(format!(
                    "{} is shard {}/{n} but {} is of a split into {}",
                    dir.display(),
                    r.shard.map_or(0, |s| s.0),
                    first_dir.display(),
                    first.shard.map_or(0, |s| s.1)
                )));
            }
        }
        reports.push((dir, r));
    }
    let Some((_, first)) = reports.first() else {
        return Err(refuse("no shards given".into()));
    };
    let n = first.shard.map_or(1, |s| s.1);
    let total = first.sweep_points;
    let mut holder: Vec<Option<&Path>> = vec![None; n];
    for (dir, r) in &reports {
        let i = r.shard.map_or(0, |s| s.0);
        if i >= n {
            return Err(refuse(format!(
                "{}: shard {i}/{n} is impossible",
                dir.display()
            )));
        }
        if let Some(other) = holder[i] {
            return Err(refuse(format!(
                "shard {i}/{n} given twice: {} and {}",
                other.display(),
                dir.display()
            )));
        }
        holder[i] = Some(dir);
        for p in &r.points {
            if p.index >= total || p.index % n != i {
                return Err(refuse(format!(
                    "{}: point {} cannot be in shard {i}/{n} of a {total}-point sweep",
                    dir.display(),
                    p.index
                )));
            }
        }
        let expected = (i..total).step_by(n).count();
        if r.points.len() != expected {
            return Err(refuse(format!(
                "{}: shard {i}/{n} holds {} points, expected {expected}",
                dir.display(),
                r.points.len()
            )));
        }
    }
    let missing: Vec<String> = (0..n)
        .filter(|&i| holder[i].is_none())
        .map(|i| format!("{i}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(refuse(format!(
            "incomplete: shard{} {} missing ({} of {n} given)",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            n - missing.len()
        )));
    }

    let mut reports = reports.into_iter().map(|(_, r)| r);
    let mut merged = reports.next().expect("at least one shard");
    for r in reports {
        merged.wall_time_s += r.wall_time_s;
        merged.points.extend(r.points);
    }
    merged.points.sort_by_key(|p| p.index);
    merged.shard = None;
    merged.checks = crate::checks::judge(&merged.check_specs, &merged.points);
    Ok(merged)
}
