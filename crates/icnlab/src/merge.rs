//! `icnlab merge`: joins the outputs of `sweep --shard i/n` runs into one directory, and proves
//! the join complete before writing anything.
//!
//! Every shard's report carries the experiment's fingerprint (file text, `--quick`, `--set`
//! values, seed), its `[i, n]` and the full sweep's point count. The merge is refused — exit 2,
//! naming the folders — when a shard is missing, appears twice, belongs to another experiment
//! or split, or holds a point that shard i/n cannot hold, or holds a point twice. Why: `merge s0 s2` of a 3-shard sweep
//! used to write a report that looked complete, and shards run with different `--set` values
//! merged silently (issue 14). An empty shard (more shards than points) is valid.

use crate::report::RunReport;
use icn_engine::config::MAX_POINTS;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// The most shards a sweep can be split into (`--shard i/n`): one point each at most; more
/// would only add empty shards.
pub const MAX_SHARDS: usize = MAX_POINTS;

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
        let Some((i, n)) = r.shard else {
            return Err(refuse(format!(
                "{}: not a shard (run with `sweep --shard i/n`)",
                dir.display()
            )));
        };
        // What a sweep can produce: anything else was written by hand or damaged, and sizes
        // nothing here (a shard count of 10^12 once asked for 16 TB).
        if !(1..=MAX_SHARDS).contains(&n) || i >= n || r.sweep_points > MAX_POINTS {
            return Err(refuse(format!(
                "{}: shard {i}/{n} of a {}-point sweep is impossible (a sweep has at most \
                 {MAX_POINTS} points, split into at most {MAX_SHARDS} shards)",
                path.display(),
                r.sweep_points
            )));
        }
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
    // Sized by what was read (shards given, points held), never by the counts a file states.
    let mut holder: BTreeMap<usize, &Path> = BTreeMap::new();
    let mut seen: HashSet<usize> = HashSet::new();
    for (dir, r) in &reports {
        let i = r.shard.map_or(0, |s| s.0);
        if let Some(other) = holder.insert(i, dir) {
            return Err(refuse(format!(
                "shard {i}/{n} given twice: {} and {}",
                other.display(),
                dir.display()
            )));
        }
        for p in &r.points {
            if p.index >= total || p.index % n != i {
                return Err(refuse(format!(
                    "{}: point {} cannot be in shard {i}/{n} of a {total}-point sweep",
                    dir.join("report.json").display(),
                    p.index
                )));
            }
            if !seen.insert(p.index) {
                return Err(refuse(format!(
                    "{}: point {} is there twice",
                    dir.join("report.json").display(),
                    p.index
                )));
            }
        }
        let expected = if i < total {
            (total - i - 1) / n + 1
        } else {
            0
        };
        if r.points.len() != expected {
            return Err(refuse(format!(
                "{}: shard {i}/{n} holds {} points, expected {expected}",
                dir.display(),
                r.points.len()
            )));
        }
    }
    if holder.len() < n {
        // The first few missing: found within the shards given plus as many more.
        const SHOWN: usize = 8;
        let mut missing: Vec<String> = (0..n)
            .filter(|i| !holder.contains_key(i))
            .take(SHOWN)
            .map(|i| format!("{i}/{n}"))
            .collect();
        let count = n - holder.len();
        if count > SHOWN {
            missing.push(format!("… ({count} in all)"));
        }
        return Err(refuse(format!(
            "incomplete: shard{} {} missing ({} of {n} given)",
            if count == 1 { "" } else { "s" },
            missing.join(", "),
            holder.len()
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
