//! What the machine can hold: models compare their estimated state with this before a run
//! starts, so that a size the machine cannot hold is an input error naming the key, not an
//! abort half-way through.

use crate::config::Invalid;

/// Memory assumed available when `/proc/meminfo` cannot be read.
pub const FALLBACK_MEMORY: u64 = 4 << 30;

/// Bytes of memory available to a new run: `MemAvailable` of `/proc/meminfo`, else
/// [`FALLBACK_MEMORY`].
pub fn available_memory() -> u64 {
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
            format!(
                "{what} needs about {} MB; {} MB are available on this machine",
                needed >> 20,
                available >> 20
            ),
        ));
    }
    Ok(())
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
