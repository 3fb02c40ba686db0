//! Cross-memory attach (`process_vm_readv`): the `shm` provider's single-copy path for large
//! payloads. With `ring`, `link::shm` and `user_mem`, the only module with `unsafe`.
//!
//! Through the ring a payload is copied twice (sender into the ring, ring into the receive);
//! OpenMPI's vader moves large messages with one copy, by cross-memory attach. Here a send
//! or RDMA write of at least [`crate::ViAttributes::cma_min`] bytes (0, the default: never)
//! on a reliable VI puts only its source address in the ring (a [`super::SourceRef`],
//! header flag `FLAG_CMA`); the receiver checks the frame like any other, translates its
//! destination against its own registration table, and has the kernel copy the bytes
//! straight from the sender's registered memory into it. The sender's descriptor completes
//! only on the peer's ack, which the receiver sends after the copy (on reliable delivery
//! too), so the source stays untouched meanwhile
//! (unreliable VIs complete sends at once and keep the ring path).
//!
//! Whose memory is read: the peer *process* is the one on the other end of the set-up Unix
//! socket (`SO_PEERCRED`, from the kernel, not the peer's word), and the kernel lets us read
//! only memory mapped in it, so a hostile peer can at worst make us read its own bytes or
//! fail (`EFAULT`, which breaks the VI). Whether the kernel allows it at all (same user, no
//! Yama restriction) is probed once per connection by reading the magic at the address where
//! the peer says it mapped the ring area; only then does the receiver announce it, and only
//! then does the sender use it.

#![allow(unsafe_code)]

use std::io;

/// Copies `dst.len()` bytes from address `remote` of process `pid` into `dst`.
pub fn read(pid: i32, remote: u64, dst: &mut [u8]) -> io::Result<()> {
    let mut done = 0usize;
    while done < dst.len() {
        let from = remote
            .checked_add(done as u64)
            .and_then(|a| usize::try_from(a).ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "remote range overflows"))?;
        let rest = &mut dst[done..];
        let local = libc::iovec {
            iov_base: rest.as_mut_ptr().cast(),
            iov_len: rest.len(),
        };
        let far = libc::iovec {
            iov_base: from as *mut libc::c_void,
            iov_len: rest.len(),
        };
        // SAFETY: `local` describes `rest`, a live, exclusively borrowed byte slice, so the
        // kernel writes only inside it. `far` is an address in *another* process (or this
        // one, in the tests), which the kernel validates against that process's mappings
        // (EFAULT if unmapped); it is never dereferenced here. One iovec each, flags 0.
        let n = unsafe { libc::process_vm_readv(pid, &local, 1, &far, 1, 0) };
        match n {
            n if n < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "peer memory ended",
                ));
            }
            n => done += n as usize,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> i32 {
        std::process::id() as i32
    }

    // Miri cannot call into the kernel: these run natively (and under ASan, sanitize.sh).
    #[test]
    #[cfg_attr(miri, ignore)]
    fn reads_memory_of_a_process_at_an_address() {
        let src: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        read(me(), src.as_ptr() as u64, &mut dst).unwrap();
        assert_eq!(dst, src);
        // a part, at an offset, and nothing
        let mut part = [0u8; 10];
        read(me(), src.as_ptr() as u64 + 5, &mut part).unwrap();
        assert_eq!(part[..], src[5..15]);
        read(me(), 0, &mut []).unwrap();
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn bad_addresses_and_processes_are_errors_not_crashes() {
        let mut dst = [0u8; 16];
        // the zero page is never mapped
        assert!(read(me(), 8, &mut dst).is_err());
        assert!(read(me(), u64::MAX - 4, &mut dst).is_err(), "overflow");
        // pid 0 names no process for this call
        let x = [1u8; 16];
        assert!(read(0, x.as_ptr() as u64, &mut dst).is_err());
        assert_eq!(dst, [0; 16], "nothing written on failure");
    }
}
