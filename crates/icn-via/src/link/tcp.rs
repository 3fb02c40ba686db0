//! The `tcp` provider's link: a non-blocking `TcpStream` with `TCP_NODELAY`.

use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, poll};

use super::{Link, closed, timespec};

pub struct TcpLink {
    stream: TcpStream,
}

impl TcpLink {
    pub fn new(stream: TcpStream) -> io::Result<Self> {
        stream.set_nodelay(true)?;
        stream.set_nonblocking(true)?;
        Ok(TcpLink { stream })
    }
}

fn would_block(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}

impl Link for TcpLink {
    fn write_some(&mut self, bufs: &[&[u8]]) -> io::Result<usize> {
        let slices: Vec<IoSlice<'_>> = bufs
            .iter()
            .filter(|b| !b.is_empty())
            .map(|b| IoSlice::new(b))
            .collect();
        if slices.is_empty() {
            return Ok(0);
        }
        match self.stream.write_vectored(&slices) {
            Ok(0) => Err(closed()),
            Ok(n) => Ok(n),
            Err(e) if would_block(&e) => Ok(0),
            Err(e) => Err(e),
        }
    }

    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        match self.stream.read(buf) {
            Ok(0) => Err(closed()),
            Ok(n) => Ok(n),
            Err(e) if would_block(&e) => Ok(0),
            Err(e) => Err(e),
        }
    }

    fn wait(&mut self, want_write: bool, timeout: Duration) -> io::Result<()> {
        let mut flags = PollFlags::IN;
        if want_write {
            flags |= PollFlags::OUT;
        }
        let mut fds = [PollFd::new(&self.stream, flags)];
        match poll(&mut fds, Some(&timespec(timeout))) {
            Ok(_) => Ok(()),
            Err(rustix::io::Errno::INTR) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    fn provider(&self) -> &'static str {
        "tcp"
    }
}
