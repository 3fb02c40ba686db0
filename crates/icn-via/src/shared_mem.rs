//! Registered regions that live in shared memory: the `shm` provider's single-copy path.
//! With `ring`, `link::shm`, `link::cma` and `user_mem`, the only module with `unsafe`.
//!
//! Through the ring a payload is copied twice (sender into the ring, ring into the receive
//! buffer). On an `shm` NIC a library-owned region of at least [`SHARED_REGION_MIN`] bytes is
//! instead a sealed memfd mapped by its owner ([`SharedMem`]); a large send or RDMA write
//! from it puts only a descriptor in the ring (which region, where: [`crate::link::SourceRef`]),
//! and the receiver copies the bytes straight from that region into its own destination with
//! one `memcpy`: it opens the sender's memfd through `/proc/<pid>/fd/<n>` (the pid from
//! `SO_PEERCRED`, the kernel's word, not the peer's) on first use and keeps the read-only
//! mapping per region ([`PeerMaps`]). The sender's descriptor completes only on the ack the
//! receiver sends after its copy, so the source is untouched meanwhile (as for cross-memory
//! attach, `link::cma`).
//!
//! # Why sealed, and why read-only
//! The peer is untrusted. A mapping of a file the peer could shrink would fault (`SIGBUS`)
//! when we touch a page past the new end: the owner seals its memfd against shrinking and
//! growing before anyone sees it (`F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL`), and the
//! receiver maps only files that carry those seals (a regular file, a pipe or a socket
//! cannot) and checks every range against the size it found. The receiver maps them
//! read-only from an `O_RDONLY` open, so nothing it does can write into the sender's memory.
//! What the sender may still do to its own bytes while we copy (an application error in VIA)
//! only changes which bytes we copy: the copy is by raw pointers, never through a Rust
//! reference to memory another process may write.

#![allow(unsafe_code)]

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{Mmap, MmapMut, MmapOptions};
use rustix::fs::{MemfdFlags, SealFlags, fcntl_add_seals, fcntl_get_seals, memfd_create};

/// Library-owned regions of at least this many bytes live in a memfd on `shm` NICs. Below it
/// a region is never a single-copy source (the threshold, [`crate::ViAttributes::single_copy_min`],
/// is larger), and a file descriptor per small region would only use up the process's fds.
pub const SHARED_REGION_MIN: usize = 64 << 10;
/// How many peer regions a link keeps mapped; the oldest mapping is dropped beyond it.
pub const PEER_MAPS: usize = 16;

const SEALS: SealFlags = SealFlags::SHRINK
    .union(SealFlags::GROW)
    .union(SealFlags::SEAL);

/// Numbers regions across the process: a peer names a region by (fd, serial), and the serial
/// tells apart two regions that had the same fd number one after the other.
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// A region's bytes in a sealed memfd, mapped read-write by its owner.
pub(crate) struct SharedMem {
    map: MmapMut,
    /// Kept open: the peer opens it through `/proc/<our pid>/fd/<fd>`.
    file: File,
    serial: u64,
}

impl SharedMem {
    /// A zeroed, sealed memfd of `len` (> 0) bytes, mapped. `name` shows in `/proc/*/maps`.
    pub(crate) fn new(len: usize, name: &str) -> io::Result<SharedMem> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty region"));
        }
        let fd = memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
        let file = File::from(fd);
        file.set_len(len as u64)?;
        fcntl_add_seals(&file, SEALS)?;
        // SAFETY: the memfd is ours, `len` bytes long and sealed against shrinking, so the
        // mapping stays backed for its whole life; nobody else has it yet. The peer later
        // maps it read-only, so within this process the mapping behaves like owned memory
        // (the only other writer would be a peer with ptrace rights over us, which could
        // write our heap as well).
        let map = unsafe { MmapOptions::new().len(len).map_mut(&file)? };
        Ok(SharedMem {
            map,
            file,
            serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// What a peer needs to find this region: its fd number in this process and its serial.
    pub(crate) fn source(&self) -> (u32, u64) {
        use std::os::fd::AsRawFd;
        (self.file.as_raw_fd() as u32, self.serial)
    }
}

impl Deref for SharedMem {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl DerefMut for SharedMem {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.map
    }
}

/// A peer's region, mapped read-only.
struct PeerMap {
    serial: u64,
    map: Mmap,
}

/// The peer regions a link has mapped, most recent last (at most [`PEER_MAPS`]).
#[derive(Default)]
pub(crate) struct PeerMaps {
    maps: VecDeque<PeerMap>,
    /// Regions mapped so far (a figure for tests: the cache is used).
    pub(crate) opened: u64,
}

fn bad(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

impl PeerMaps {
    /// Copies `dst.len()` bytes at `offset` of the peer's region (`fd`, `serial`) into `dst`,
    /// mapping the region first if this link has not yet (`pid`: the peer process).
    pub(crate) fn read(
        &mut self,
        pid: i32,
        fd: u32,
        serial: u64,
        offset: u64,
        dst: &mut [u8],
    ) -> io::Result<()> {
        let i = match self.maps.iter().position(|m| m.serial == serial) {
            Some(i) => i,
            None => {
                if self.maps.len() == PEER_MAPS {
                    self.maps.pop_front();
                }
                let map = map_peer(pid, fd)?;
                self.opened += 1;
                self.maps.push_back(PeerMap { serial, map });
                self.maps.len() - 1
            }
        };
        let map = &self.maps[i].map;
        let end = offset
            .checked_add(dst.len() as u64)
            .filter(|&e| e <= map.len() as u64)
            .ok_or_else(|| {
                bad(format!(
                    "peer region {serial}: {} B at {offset} outside its {} B",
                    dst.len(),
                    map.len()
                ))
            })?;
        debug_assert!(end <= map.len() as u64);
        // SAFETY: `offset + dst.len() <= map.len()` (checked above), so the source range lies
        // inside the mapping, which stays mapped while `self.maps` holds it and stays backed
        // because the file is sealed against shrinking (checked in `map_peer`). `dst` is an
        // exclusive borrow of our own memory and cannot overlap a read-only mapping of
        // another file. The sender may write the source concurrently only by breaking VIA's
        // rule (a buffer is not touched while its send is pending); then we copy whichever
        // bytes are there, by raw pointers, never through a reference to them.
        unsafe {
            std::ptr::copy_nonoverlapping(
                map.as_ptr().add(offset as usize),
                dst.as_mut_ptr(),
                dst.len(),
            );
        }
        Ok(())
    }
}

/// Opens the peer's fd `fd` read-only through `/proc` and maps it, after checking that it is a
/// memfd sealed against shrinking (see the module doc).
fn map_peer(pid: i32, fd: u32) -> io::Result<Mmap> {
    let path = format!("/proc/{pid}/fd/{fd}");
    let file = File::open(&path).map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))?;
    let seals = fcntl_get_seals(&file)
        .map_err(|_| bad(format!("{path}: not a sealed shared-memory region")))?;
    if !seals.contains(SealFlags::SHRINK | SealFlags::GROW) {
        return Err(bad(format!("{path}: region not sealed against resizing")));
    }
    let len = file.metadata()?.len();
    if len == 0 || len > crate::attrs::MAX_REGISTER_SIZE as u64 {
        return Err(bad(format!("{path}: region of {len} B")));
    }
    // SAFETY: a read-only shared mapping of a memfd sealed against shrinking and growing:
    // every page of the `len` bytes stays backed while mapped (no SIGBUS), and we never
    // create references into it (see `PeerMaps::read`).
    unsafe { MmapOptions::new().len(len as usize).map(&file) }
}

#[cfg(test)]
mod tests {
    //! The peer here is this process: `/proc/self/fd` reaches our own memfds the same way.
    //! Miri cannot call into the kernel: these run natively and under ASan (sanitize.sh).
    use super::*;
    use std::os::fd::AsRawFd;

    fn me() -> i32 {
        std::process::id() as i32
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn a_peer_copies_a_shared_region_through_one_mapping_per_region() {
        let mut a = SharedMem::new(100_000, "t").unwrap();
        for (i, b) in a.iter_mut().enumerate() {
            *b = (i * 7) as u8;
        }
        let (fd, serial) = a.source();
        let mut peer = PeerMaps::default();
        let mut dst = vec![0u8; 1000];
        peer.read(me(), fd, serial, 500, &mut dst).unwrap();
        assert_eq!(dst[..], a[500..1500]);
        // the owner's later writes are seen through the same mapping
        a[99_999] = 1;
        let mut last = [0u8; 1];
        peer.read(me(), fd, serial, 99_999, &mut last).unwrap();
        assert_eq!((last[0], peer.opened), (1, 1), "one mapping, reused");
        // exact end, empty read
        peer.read(me(), fd, serial, 100_000, &mut []).unwrap();
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn out_of_range_reads_are_errors_and_copy_nothing() {
        let a = SharedMem::new(4096, "t").unwrap();
        let (fd, serial) = a.source();
        let mut peer = PeerMaps::default();
        let mut dst = [9u8; 16];
        assert!(peer.read(me(), fd, serial, 4090, &mut dst).is_err());
        assert!(peer.read(me(), fd, serial, u64::MAX - 4, &mut dst).is_err());
        assert_eq!(dst, [9; 16]);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn unsealed_files_and_bad_fds_are_refused() {
        let mut peer = PeerMaps::default();
        let mut dst = [0u8; 4];
        // a memfd without the seals could be shrunk under our mapping
        let raw = memfd_create("unsealed", MemfdFlags::CLOEXEC).unwrap();
        let f = File::from(raw);
        f.set_len(4096).unwrap();
        let e = peer
            .read(me(), f.as_raw_fd() as u32, 1, 0, &mut dst)
            .unwrap_err();
        assert!(e.to_string().contains("sealed"), "{e}");
        // a regular file cannot carry seals
        let tmp = std::env::temp_dir().join(format!("icn-via-shared-{}", me()));
        let file = File::create(&tmp).unwrap();
        file.set_len(4096).unwrap();
        assert!(
            peer.read(me(), file.as_raw_fd() as u32, 2, 0, &mut dst)
                .is_err()
        );
        std::fs::remove_file(&tmp).unwrap();
        // an fd that is not open, and a process that does not exist
        assert!(peer.read(me(), 999_999, 3, 0, &mut dst).is_err());
        assert!(peer.read(i32::MAX, 0, 4, 0, &mut dst).is_err());
        assert_eq!((dst, peer.opened), ([0; 4], 0));
        assert!(SharedMem::new(0, "t").is_err());
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn the_cache_keeps_at_most_peer_maps_regions_and_remaps_an_evicted_one() {
        let regions: Vec<SharedMem> = (0..PEER_MAPS + 1)
            .map(|i| {
                let mut r = SharedMem::new(4096, "t").unwrap();
                r[0] = i as u8;
                r
            })
            .collect();
        let mut peer = PeerMaps::default();
        let mut b = [0u8; 1];
        for round in 0..2 {
            for (i, r) in regions.iter().enumerate() {
                let (fd, serial) = r.source();
                peer.read(me(), fd, serial, 0, &mut b).unwrap();
                assert_eq!(b[0], i as u8, "round {round}");
                assert!(peer.maps.len() <= PEER_MAPS);
            }
        }
        // cycling through one more region than fits evicts each before its reuse
        assert_eq!(peer.opened, 2 * (PEER_MAPS as u64 + 1));
    }
}
