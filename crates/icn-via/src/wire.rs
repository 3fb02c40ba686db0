//! A [`Link`] plus a stash of bytes read early, with blocking helpers bounded by deadlines.
//!
//! A writer that finds the pipe full keeps reading what the peer sends into the stash while
//! it waits. Without that, two peers each writing a large frame to the other would both
//! block forever on full pipes (the classic socket deadlock); with it, the pipe towards us
//! always drains and the peer always progresses.

use std::io;
use std::time::{Duration, Instant};

use crate::link::{Link, Record};

/// The most bytes a blocked writer stashes before giving up on the peer (a peer that floods
/// us while never reading is broken). Room for one message of the largest size plus 64 MiB of
/// smaller ones: two VIs sending each other 1 GiB at the same time must both get through.
const MAX_STASH: usize = crate::attrs::MAX_TRANSFER_SIZE as usize + (64 << 20);
/// Bytes a small read fetches ahead.
const READ_AHEAD: usize = 64 * 1024;
/// Longest single sleep inside a blocking helper, so deadlines and peer death are noticed.
pub const SLICE: Duration = Duration::from_millis(20);

pub struct Wire {
    pub link: Box<dyn Link>,
    /// Bytes read from the link but not yet consumed: `inbuf[start..end]`. Filled by
    /// read-ahead (small reads) and by a blocked writer draining the peer. Allocated and
    /// zeroed once; never shrinks.
    inbuf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Wire {
    pub fn new(link: Box<dyn Link>) -> Self {
        Wire {
            link,
            inbuf: Vec::new(),
            start: 0,
            end: 0,
        }
    }

    /// Non-blocking read: buffered bytes first, then the link. `Ok(0)`: nothing available.
    pub fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.start == self.end && buf.len() >= READ_AHEAD / 2 {
            // Large reads (payloads) go straight to their destination.
            return self.link.read_some(buf);
        }
        if self.start == self.end {
            // Small reads (headers, small payloads): read ahead in one call, so a stream of
            // small frames costs one system call (tcp) or one ring read (shm) per batch.
            if self.inbuf.len() < READ_AHEAD {
                self.inbuf.resize(READ_AHEAD, 0);
            }
            self.start = 0;
            self.end = self.link.read_some(&mut self.inbuf[..READ_AHEAD])?;
        }
        let n = buf.len().min(self.end - self.start);
        buf[..n].copy_from_slice(&self.inbuf[self.start..self.start + n]);
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        Ok(n)
    }

    /// The link's next whole record, if nothing is buffered here (see
    /// [`Link::read_record`]).
    pub fn read_record(&mut self, buf: &mut [u8]) -> io::Result<Record> {
        if self.has_stashed() {
            return Ok(Record::Unsuitable);
        }
        self.link.read_record(buf)
    }

    /// Appends bytes drained from the link while a write was blocked.
    pub(crate) fn stash(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.end - self.start + bytes.len() > MAX_STASH {
            return Err(io::Error::other("peer floods without reading"));
        }
        if self.end + bytes.len() > self.inbuf.len() {
            self.inbuf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.end + bytes.len() > self.inbuf.len() {
                self.inbuf.resize(self.end + bytes.len(), 0);
            }
        }
        self.inbuf[self.end..self.end + bytes.len()].copy_from_slice(bytes);
        self.end += bytes.len();
        Ok(())
    }

    /// True if buffered bytes are waiting (then a wait must not block).
    pub fn has_stashed(&self) -> bool {
        self.start < self.end
    }

    /// Waits up to `timeout` for bytes without reading them (cheaper than
    /// [`Wire::wait_readable`] for short waits: no receive-timeout change on tcp).
    pub fn wait_briefly(&mut self, timeout: Duration) -> io::Result<()> {
        if self.has_stashed() {
            return Ok(());
        }
        self.link.wait(false, timeout)
    }

    /// Blocks until readable or `timeout`; returns at once if bytes are stashed.
    pub fn wait_readable(&mut self, timeout: Duration) -> io::Result<()> {
        if self.has_stashed() {
            return Ok(());
        }
        // The wait is a read into the read-ahead buffer (one system call on tcp).
        if self.inbuf.len() < READ_AHEAD {
            self.inbuf.resize(READ_AHEAD, 0);
        }
        self.start = 0;
        self.end = self
            .link
            .wait_read(&mut self.inbuf[..READ_AHEAD], &mut [], timeout)?;
        Ok(())
    }

    /// Writes all of `bufs` in order, stashing inbound bytes while the pipe is full; fails
    /// with `TimedOut` if no byte could be written for `stall`.
    pub fn write_all(&mut self, bufs: &[&[u8]], stall: Duration) -> io::Result<()> {
        // Fast path: everything fits at once (small messages, room in the pipe).
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        let first = if total == 0 {
            0
        } else {
            self.link.write_some(bufs)?
        };
        if first == total {
            return Ok(());
        }
        let (mut idx, mut off) = (0, first);
        while idx < bufs.len() && off >= bufs[idx].len() {
            off -= bufs[idx].len();
            idx += 1;
        }
        self.write_rest(bufs, idx, off, stall)
    }

    fn write_rest(
        &mut self,
        bufs: &[&[u8]],
        mut idx: usize,
        mut off: usize,
        stall: Duration,
    ) -> io::Result<()> {
        let mut last_progress = Instant::now();
        let mut tmp = [0u8; 16 * 1024];
        while idx < bufs.len() {
            if off == bufs[idx].len() {
                idx += 1;
                off = 0;
                continue;
            }
            let mut cur: Vec<&[u8]> = Vec::with_capacity(bufs.len() - idx);
            cur.push(&bufs[idx][off..]);
            cur.extend_from_slice(&bufs[idx + 1..]);
            let mut n = self.link.write_some(&cur)?;
            if n == 0 {
                // Pipe full: drain what the peer sends us, then sleep until writable.
                let got = self.link.read_some(&mut tmp).or_else(|e| {
                    if e.kind() == io::ErrorKind::UnexpectedEof {
                        Err(e)
                    } else {
                        Ok(0)
                    }
                })?;
                if got > 0 {
                    self.stash(&tmp[..got])?;
                    continue;
                }
                if last_progress.elapsed() > stall {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "peer stopped reading",
                    ));
                }
                self.link.wait(true, SLICE)?;
                continue;
            }
            last_progress = Instant::now();
            while n > 0 {
                let left = bufs[idx].len() - off;
                if n < left {
                    off += n;
                    n = 0;
                } else {
                    n -= left;
                    idx += 1;
                    off = 0;
                }
            }
        }
        Ok(())
    }

    /// Reads exactly `buf.len()` bytes or fails at `deadline` (`TimedOut`).
    pub fn read_exact_until(
        &mut self,
        buf: &mut [u8],
        deadline: Option<Instant>,
    ) -> io::Result<()> {
        let mut have = 0;
        while have < buf.len() {
            let n = self.read_some(&mut buf[have..])?;
            have += n;
            if n == 0 {
                let left = match deadline {
                    Some(d) => d.saturating_duration_since(Instant::now()),
                    None => SLICE,
                };
                if left.is_zero() {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out"));
                }
                self.link.wait(false, left.min(SLICE))?;
            }
        }
        Ok(())
    }
}
