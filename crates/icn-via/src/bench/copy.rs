//! Single-core copy bandwidth of the shm data paths' copy mechanisms, against `memcpy`: what
//! the single-copy path's one copy can reach on this machine. Per size, best of 3 passes of
//! about 256 MiB each, MB/s (10^6 B/s):
//!
//! * `memcpy`: `copy_from_slice` between two heap buffers;
//! * `shared region`: the receiver's copy of the single-copy path ([`crate::shared_mem`]):
//!   out of a sealed memfd region, mapped a second time the way a peer maps it (through
//!   `/proc/<pid>/fd`, here this process's own), into a heap buffer;
//! * `process_vm_readv`: the cross-memory-attach path ([`crate::link::cma`]), reading this
//!   process's own memory.
//!
//! One thread, so it measures the copy, not the cache transfer between two cores that a real
//! exchange adds (the window benchmark measures that).

use std::time::Instant;

use crate::shared_mem::{PeerMaps, SharedMem};

/// One size's figures.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct CopyRow {
    pub size: usize,
    pub memcpy_mbs: f64,
    pub shared_region_mbs: f64,
    pub process_vm_readv_mbs: f64,
}

/// Bytes per pass (at least 4 copies per pass).
const PASS_BYTES: usize = 256 << 20;

/// Measures one size (`size` in 1..=[`crate::attrs::MAX_REGISTER_SIZE`]).
pub fn copy_bandwidth(size: usize) -> std::io::Result<CopyRow> {
    if size == 0 || size > crate::attrs::MAX_REGISTER_SIZE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "copy size must be in 1..={}, got {size}",
                crate::attrs::MAX_REGISTER_SIZE
            ),
        ));
    }
    let src = vec![0xa5u8; size];
    let mut dst = vec![0x5au8; size];
    let reps = (PASS_BYTES / size).max(4);
    let mut best = |f: &mut dyn FnMut(&mut [u8]) -> std::io::Result<()>| {
        let mut best = 0f64;
        for _ in 0..3 {
            let t = Instant::now();
            for _ in 0..reps {
                f(&mut dst)?;
                std::hint::black_box(&dst);
            }
            best = best.max((reps * size) as f64 / t.elapsed().as_secs_f64() / 1e6);
        }
        Ok::<f64, std::io::Error>(best)
    };
    let memcpy_mbs = best(&mut |d| {
        d.copy_from_slice(&src);
        Ok(())
    })?;
    let mut region = SharedMem::new(size, "icnlab-via-copybw")?;
    region.fill(0xa5);
    let (fd, serial) = region.source();
    let pid = std::process::id() as i32;
    let mut maps = PeerMaps::default();
    let shared_region_mbs = best(&mut |d| maps.read(pid, fd, serial, 0, d))?;
    let addr = src.as_ptr() as u64;
    let process_vm_readv_mbs = best(&mut |d| crate::link::cma::read(pid, addr, d))?;
    Ok(CopyRow {
        size,
        memcpy_mbs,
        shared_region_mbs,
        process_vm_readv_mbs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore)]
    fn sizes_out_of_range_are_refused_and_a_small_one_is_measured() {
        assert!(copy_bandwidth(0).is_err());
        assert!(copy_bandwidth(crate::attrs::MAX_REGISTER_SIZE + 1).is_err());
        // positive figures only: speed is the benchmark's business, not a test's
        let r = copy_bandwidth(1 << 20).unwrap();
        assert_eq!(r.size, 1 << 20);
        assert!(r.memcpy_mbs > 0.0 && r.shared_region_mbs > 0.0 && r.process_vm_readv_mbs > 0.0);
    }
}
