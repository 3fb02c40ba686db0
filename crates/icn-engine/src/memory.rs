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

/// Bytes of memory available to the whole process: `MemAvailable` of `/proc/meminfo`, else
/// [`FALLBACK_MEMORY`].
pub fn machine_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| mem_available(&t))
        .unwrap_or(FALLBACK_MEMORY)
}

/// `MemAvailable` in bytes from the text of `/proc/meminfo`.
pub fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Refuses `needed` bytes of `what` when more than `available` are free, naming `key`.
pub fn check_fits(key: &str, what: &str, needed: u128, available: u64) -> Result<(), Invalid> {
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
