//! `icnlab reproduce`: every bundled experiment → results/<name>/ and results/index.html.

use crate::checks::Judgement;
use crate::exec::{ExecError, ExecOptions};
use crate::experiment::{Plan, run_file};
use crate::html::{Entry, index};
use icn_engine::{ConfigError, ExperimentFile};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Outputs an experiment needs beyond its sweep (tables and figures a TOML sweep cannot express),
/// written into the experiment's own results directory after the sweep.
type Extra = fn(&Path, bool) -> anyhow::Result<()>;

const EXTRAS: &[(&str, Extra)] = &[("bcast", crate::bcast_cmd::reproduce)];

pub struct Request {
    pub names: Vec<String>,
    pub out: PathBuf,
    pub quick: bool,
    pub experiments: Option<PathBuf>,
    pub list: bool,
    pub threads: usize,
}

/// `./experiments` when run from a checkout, else the one in the source tree this binary was built from.
fn experiments_dir(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_owned();
    }
    let here = PathBuf::from("experiments");
    if here.is_dir() {
        here
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
    }
}

/// The experiment files of `dir` (not its subdirectories), sorted by name.
fn list(dir: &Path) -> Result<Vec<(String, PathBuf)>, ExecError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        ExecError::Usage(format!(
            "cannot read experiments directory {}: {e}",
            dir.display()
        ))
    })?;
    let mut found: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            (
                p.file_stem()
                    .expect("has extension")
                    .to_string_lossy()
                    .into_owned(),
                p,
            )
        })
        .collect();
    found.sort();
    Ok(found)
}

pub fn reproduce(req: &Request) -> Result<(), ExecError> {
    let dir = experiments_dir(req.experiments.as_deref());
    let all = list(&dir)?;
    if req.list {
        for (name, path) in &all {
            let title = ExperimentFile::load(path, false)
                .map(|f| f.title)
                .unwrap_or_else(|e| format!("(invalid: {e})"));
            println!("{name:24} {title}");
        }
        return Ok(());
    }
    let chosen: Vec<&(String, PathBuf)> = if req.names.is_empty() {
        all.iter().collect()
    } else {
        let mut chosen = Vec::new();
        for want in &req.names {
            let matching: Vec<_> = all
                .iter()
                .filter(|(n, _)| n == want || n.starts_with(&format!("{want}-")))
                .collect();
            if matching.is_empty() {
                let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
                return Err(ExecError::Config(ConfigError::Invalid {
                    file: dir.display().to_string(),
                    inner: icn_engine::Invalid::new(
                        "experiment",
                        format!(
                            "no experiment named `{want}`; available: {}",
                            names.join(", ")
                        ),
                    ),
                }));
            }
            for m in matching {
                if !chosen.contains(&m) {
                    chosen.push(m);
                }
            }
        }
        chosen
    };
    // Parse everything first: a typo in the last file should not surface after an hour.
    let files: Vec<(String, ExperimentFile)> = chosen
        .iter()
        .map(|(name, path)| Ok((name.clone(), ExperimentFile::load(path, req.quick)?)))
        .collect::<Result<_, ConfigError>>()?;

    if req.out.exists() && !req.out.is_dir() {
        return Err(ExecError::Usage(format!(
            "--out {}: exists and is not a folder",
            req.out.display()
        )));
    }
    std::fs::create_dir_all(&req.out).map_err(|e| {
        ExecError::Usage(format!("--out: cannot create {}: {e}", req.out.display()))
    })?;
    let mut entries = Vec::new();
    let mut failures = 0;
    let mut score = crate::checks::Score::default();
    let (wall_started, cpu_started) = (Instant::now(), crate::provenance::cpu_time_s());
    for (i, (name, file)) in files.iter().enumerate() {
        eprintln!("[{}/{}] {name}: {}", i + 1, files.len(), file.title);
        let out = req.out.join(name);
        let started = Instant::now();
        let plan = Plan {
            sweep: true,
            shard: None,
            opts: ExecOptions {
                threads: req.threads,
                progress: true,
            },
        };
        // A figure with flagged points (saturated, a deadlock) is still the figure: it is
        // written, its flagged points are marked in the plot, data.csv and on the page, and
        // counted here in one line. Saturated points are results; an experiment with a point
        // that deadlocked, hit the drain limit or failed counts as failed.
        let mut warning = None;
        let mut error = match run_file(file, &out, &plan) {
            Ok(report) => {
                if let Some((line, bad)) = crate::experiment::status_line(&report, &out) {
                    eprintln!("  {}: {line}", if bad { "flagged" } else { "note" });
                    failures += usize::from(bad);
                    warning = Some((line, bad));
                }
                let s = crate::checks::Score::of(&report.checks);
                score.merge(s);
                if !report.checks.is_empty() {
                    eprintln!("  claims: {}", s.label());
                }
                for c in report
                    .checks
                    .iter()
                    .filter(|c| c.judgement == Judgement::Fail)
                {
                    eprintln!("    {}", c.line());
                }
                None
            }
            Err(e) => Some(e.to_string()),
        };
        if error.is_none()
            && let Some((_, extra)) = EXTRAS.iter().find(|(n, _)| n == name)
        {
            error = extra(&out, req.quick).err().map(|e| format!("{e:#}"));
        }
        if error.is_none() && crate::timeline::has_timeline(file, crate::timeline::Of::FirstPoint) {
            error = write_timeline(file, &out).err().map(|e| format!("{e:#}"));
        }
        if let Some(e) = &error {
            failures += 1;
            eprintln!("  failed: {}", crate::echo::escape_controls(&e.to_string()));
        }
        let mut files: Vec<String> = std::fs::read_dir(&out)
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        entries.push(Entry {
            name: name.clone(),
            title: file.title.clone(),
            description: file.description.clone(),
            has_plot: files.iter().any(|f| f == "plot.svg"),
            files,
            wall_time_s: started.elapsed().as_secs_f64(),
            error,
            replications: file.replications,
            warning,
            verdict: file.verdict.clone(),
            references: file.references.clone(),
        });
    }
    let page = req.out.join("index.html");
    let provenance = crate::provenance::Provenance::now(
        wall_started.elapsed().as_secs_f64(),
        crate::provenance::cpu_time_s() - cpu_started,
    );
    let html = index(&req.out, &entries, req.quick, Some(&provenance));
    crate::outdir::write_atomic(&page, html.as_bytes())?;
    eprintln!("wrote {}", page.display());
    // The scorecard goes to stdout: it is the run's result.
    println!("scorecard: claims {}", score.label());
    if failures > 0 {
        return Err(ExecError::Failed(format!(
            "{failures} of {} experiments failed (see above)",
            files.len()
        )));
    }
    if score.fail > 0 {
        return Err(ExecError::CheckFailed(format!(
            "{} of {} judged claims refuted (see above and the page)",
            score.fail,
            score.pass + score.fail
        )));
    }
    Ok(())
}

/// Spans of the results page's timelines (each ≈ 100 bytes of JSON).
const PAGE_TIMELINE_EVENTS: usize = 200_000;

/// A trace replay's timeline (its first point) beside its results: `timeline.json` (Chrome trace-event format)
/// and `timeline.svg`, the picture the page shows with the experiment's figures.
fn write_timeline(file: &ExperimentFile, out: &Path) -> anyhow::Result<()> {
    let t = crate::timeline::record(file, crate::timeline::Of::FirstPoint, PAGE_TIMELINE_EVENTS)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::timeline::write_chrome(&t, &out.join("timeline.json"))?;
    let title = format!(
        "{}: timeline of the first point (replication seed 0)",
        file.title
    );
    std::fs::write(out.join("timeline.svg"), crate::timeline::svg(&t, &title))?;
    Ok(())
}
