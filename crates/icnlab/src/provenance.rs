//! Who ran what, where and how long: the provenance a report carries so that a figure can be
//! traced to the binary, the command and the machine that made it, and its timings judged
//! against the load the machine was under.
//!
//! The git commit is the source tree's at build time (`build.rs`), with whether it had
//! uncommitted changes; the host facts come from `/proc` (empty where there is none).

use serde::{Deserialize, Serialize};
use std::time::SystemTime;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub icnlab_version: String,
    /// `git rev-parse HEAD` of the source tree this binary was built from ("unknown" outside
    /// a checkout).
    pub git_commit: String,
    /// Whether that tree had uncommitted changes.
    pub git_dirty: bool,
    /// The command line, program name first.
    pub command: Vec<String>,
    /// When the report was written, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub date_utc: String,
    pub host: Host,
    /// 1-, 5- and 15-minute load averages when the process started and when the report was
    /// written: wall times from a loaded machine are not speed figures.
    pub load_start: [f64; 3],
    pub load_end: [f64; 3],
    pub wall_time_s: f64,
    /// CPU time of the process (all threads) while it ran this experiment.
    pub cpu_time_s: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub name: String,
    pub cpu_model: String,
    pub cores: usize,
    pub memory_bytes: u64,
}

impl Provenance {
    /// The provenance of a run that took `wall_time_s` and `cpu_time_s`, written now.
    pub fn now(wall_time_s: f64, cpu_time_s: f64) -> Provenance {
        Provenance {
            icnlab_version: env!("CARGO_PKG_VERSION").to_owned(),
            git_commit: env!("ICNLAB_GIT_COMMIT").to_owned(),
            git_dirty: env!("ICNLAB_GIT_DIRTY") == "true",
            command: std::env::args().collect(),
            date_utc: utc(SystemTime::now()),
            host: Host::this(),
            load_start: *LOAD_AT_START.get_or_init(load_average),
            load_end: load_average(),
            wall_time_s,
            cpu_time_s,
        }
    }

    /// "icnlab 0.1.0 (3f2a…, dirty) on host (model, 2 cores, 24.0 GiB), 2026-…Z, load 1.2 → 1.5".
    pub fn line(&self) -> String {
        format!(
            "icnlab {} (commit {}{}) on {} ({}, {} cores, {:.1} GiB), {}, load {:.2} → {:.2}",
            self.icnlab_version,
            self.git_commit.get(..12).unwrap_or(&self.git_commit),
            if self.git_dirty {
                ", uncommitted changes"
            } else {
                ""
            },
            self.host.name,
            self.host.cpu_model,
            self.host.cores,
            self.host.memory_bytes as f64 / f64::from(1u32 << 30),
            self.date_utc,
            self.load_start[0],
            self.load_end[0]
        )
    }
}

static LOAD_AT_START: std::sync::OnceLock<[f64; 3]> = std::sync::OnceLock::new();

/// Records the load average at the start of the process (call first thing in `main`).
pub fn note_start() {
    LOAD_AT_START.get_or_init(load_average);
}

/// CPU time of this process so far, all threads, in seconds.
pub fn cpu_time_s() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

impl Host {
    fn this() -> Host {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpu_model = read("/proc/cpuinfo")
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, m)| m.trim().to_owned())
            .unwrap_or_default();
        let memory_bytes = read("/proc/meminfo")
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|l| l.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024);
        Host {
            name: read("/proc/sys/kernel/hostname").trim().to_owned(),
            cpu_model,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes,
        }
    }
}

fn load_average() -> [f64; 3] {
    // 0 where unknown: JSON has no NaN.
    crate::machine_load::Load::now().map_or([0.0; 3], |l| [l.avg1, l.avg5, l.avg15])
}

/// `YYYY-MM-DDTHH:MM:SSZ` of `t` (RFC 3339 in UTC, whole seconds).
fn utc(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn dates_are_utc_civil_dates() {
        let at = |s: u64| utc(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        // `date -u -d @951782400` = Tue Feb 29 00:00:00 UTC 2000 (a leap day).
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        // `date -u -d @1795772096` = Fri Nov 27 09:34:56 UTC 2026.
        assert_eq!(at(1_795_772_096), "2026-11-27T09:34:56Z");
    }

    #[test]
    fn this_host_is_described() {
        let p = Provenance::now(1.5, 0.5);
        assert!(p.host.cores >= 1);
        assert!(
            p.git_commit == "unknown" || p.git_commit.len() == 40,
            "{}",
            p.git_commit
        );
        assert!(
            p.date_utc.ends_with('Z') && p.date_utc.len() == 20,
            "{}",
            p.date_utc
        );
        assert!(p.line().contains("icnlab "), "{}", p.line());
        assert!(cpu_time_s() > 0.0);
    }
}
