//! What the machine can hold: models compare their estimated state with this before a run
//! starts, so that a size the machine cannot hold is an input error naming the key, not an
//! abort half-way through.

use crate::config::Invalid;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Replications this process runs at once (set by the executor from its worker threads).
static CONCURRENT_RUNS: AtomicUsize = AtomicUsize::new(1);

/// Sets how many replications will run at once, so that every model's estimate of *one*
/// replication is held against its share of the memory (the estimates covered one
/// replication while `--threads N` ran N).
pub fn set_concurrent_runs(runs: usize) {
    CONCURRENT_RUNS.store(runs.max(1), Ordering::Relaxed);
}

/// Replications run at once ([`set_concurrent_runs`]; 1 unless set).
pub fn concurrent_runs() -> usize {
    CONCURRENT_RUNS.load(Ordering::Relaxed)
}

/// The share of `total` bytes each of `runs` concurrent replications may use.
pub fn share(total: u64, runs: usize) -> u64 {
    total / runs.max(1) as u64
}

/// Memory assumed available when `/proc/meminfo` cannot be read.
pub const FALLBACK_MEMORY: u64 = 4 << 30;

/// Bytes of memory available to one replication: the machine's ([`machine_memory`])
/// divided among the [`concurrent_runs`].
pub fn available_memory() -> u64 {
    share(machine_memory(), concurrent_runs())
}

/// Bytes of memory available to the whole process: `MemAvailable` of `/proc/meminfo` (else
/// [`FALLBACK_MEMORY`]), or less where the process is held to less: the room left under
/// its address-space limit (`RLIMIT_AS`, as `ulimit -v` or a prober sets it) and under its
/// control group's `memory.max` (as a container sets it). A run sized to the machine but
/// not to its limits would abort on an allocation instead of being refused.
pub fn machine_memory() -> u64 {
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| mem_available(&t))
        .unwrap_or(FALLBACK_MEMORY);
    machine
        .min(address_space_left().unwrap_or(u64::MAX))
        .min(cgroup_left().unwrap_or(u64::MAX))
}

/// Room under `RLIMIT_AS`: the soft limit less the address space already mapped (`VmSize`).
fn address_space_left() -> Option<u64> {
    let limit = rustix::process::getrlimit(rustix::process::Resource::As).current?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    Some(limit.saturating_sub(status_kib(&status, "VmSize:")? * 1024))
}

/// Room under the control group's `memory.max` (cgroup v2): the limit less `memory.current`.
fn cgroup_left() -> Option<u64> {
    let line = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = line.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?; // "max" (no limit) fails here
    let current: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// A `Key:   N kB` field of `/proc/self/status` or `/proc/meminfo`, in KiB.
fn status_kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `MemAvailable` in bytes from the text of `/proc/meminfo`.
pub fn mem_available(meminfo: &str) -> Option<u64> {
    status_kib(meminfo, "MemAvailable:")?.checked_mul(1024)
}

/// Set (to anything) in the environment, every estimate is also written to stderr as
/// `estimate: KEY: BYTES B (WHAT)`: the extreme-value prober reads them to hold each run's
/// peak memory against its estimate.
pub const SHOW_ESTIMATES: &str = "ICNLAB_SHOW_ESTIMATES";

/// Refuses `needed` bytes of `what` when more than `available` are free, naming `key`.
pub fn check_fits(key: &str, what: &str, needed: u128, available: u64) -> Result<(), Invalid> {
    if std::env::var_os(SHOW_ESTIMATES).is_some() {
        eprintln!("estimate: {key}: {needed} B ({what})");
    }
    if needed > u128::from(available) {
        return Err(Invalid::new(
            key,
            too_large(what, needed, available, concurrent_runs()),
        ));
    }
    Ok(())
}

fn too_large(what: &str, needed: u128, available: u64, runs: usize) -> String {
    let mb = needed >> 20;
    if runs > 1 {
        format!(
            "{what} needs about {mb} MB per replication; {} MB are available to each of the \
             {runs} replications run at once (fewer --threads leave each more)",
            available >> 20
        )
    } else {
        format!(
            "{what} needs about {mb} MB; {} MB are available on this machine",
            available >> 20
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_from_meminfo() {
        let text = "MemTotal:       8000000 kB\nMemFree:  100 kB\nMemAvailable:    2048 kB\n";
        assert_eq!(mem_available(text), Some(2 << 20));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert!(available_memory() > 0);
    }

    /// Issue 22: under `ulimit -v` the estimates compared against the machine's memory, so
    /// a run the limit could not hold passed and aborted on an allocation. A child held to
    /// 1 GiB of address space sees at most that.
    #[test]
    fn an_address_space_limit_bounds_the_memory_available() {
        let exe = std::env::current_exe().unwrap();
        if std::env::var_os("ICN_MEMORY_CHILD").is_some() {
            let m = machine_memory();
            assert!(m < 1 << 30, "{m} bytes seen under a 1 GiB limit");
            assert!(m > 0);
            return;
        }
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" --exact memory::tests::an_address_space_limit_bounds_the_memory_available --test-threads 1")
            .arg(&exe)
            .env("ICN_MEMORY_CHILD", "1")
            .status()
            .unwrap();
        assert!(status.success());
    }

    #[test]
    fn concurrent_replications_share_the_memory() {
        assert_eq!(share(8 << 30, 4), 2 << 30);
        assert_eq!(share(8 << 30, 0), 8 << 30);
        let m = too_large("the network", 3 << 30, 2 << 30, 4);
        assert!(
            m.contains("3072 MB per replication; 2048 MB are available to each of the 4"),
            "{m}"
        );
    }

    #[test]
    fn sizes_beyond_the_machine_name_the_key() {
        assert!(check_fits("topology", "the network", 1 << 20, 2 << 20).is_ok());
        let e = check_fits("topology", "the network", 3 << 20, 2 << 20).unwrap_err();
        assert_eq!(e.key, "topology");
        assert!(
            e.message.contains("needs about 3 MB; 2 MB are available"),
            "{}",
            e.message
        );
    }
}
