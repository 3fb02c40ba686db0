//! The `tcp` provider's link: a `TcpStream` with `TCP_NODELAY`, kept in blocking mode with a
//! receive timeout so a wait can *be* the read (one system call per received batch, like a
//! plain blocking socket program), while polls and writes pass `MSG_DONTWAIT`.

use std::io::{self, IoSlice, IoSliceMut, Read};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, poll};
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendAncillaryBuffer, SendFlags, recv, sendmsg};

use super::{Link, SharedFd, closed, timespec};

/// The socket's receive timeout: the longest a blocking read sleeps before the engine
/// re-checks its deadline and the peer.
const READ_SLICE: Duration = Duration::from_millis(20);
/// Socket send and receive buffer size asked for.
const SOCKET_BUFFER: usize = 4 << 20;

pub struct TcpLink {
    /// Shared with completion-queue waits that block on it ([`Link::readiness_fd`]).
    stream: Arc<TcpStream>,
    /// Receive timeout currently set on the socket.
    rcv_timeout: Duration,
}

impl TcpLink {
    pub fn new(stream: TcpStream) -> io::Result<Self> {
        stream.set_nodelay(true)?;
        // Room for a whole large message in flight from the first one on (autotuning starts
        // small and grows over many round trips). Only where the kernel grants it: a fixed
        // buffer is capped at wmem_max / rmem_max (208 KiB by default on many systems), far
        // below what autotuning reaches, and it turns autotuning off.
        if kernel_limit("/proc/sys/net/core/wmem_max").is_some_and(|m| m >= SOCKET_BUFFER) {
            let _ = rustix::net::sockopt::set_socket_send_buffer_size(&stream, SOCKET_BUFFER);
        }
        if kernel_limit("/proc/sys/net/core/rmem_max").is_some_and(|m| m >= SOCKET_BUFFER) {
            let _ = rustix::net::sockopt::set_socket_recv_buffer_size(&stream, SOCKET_BUFFER);
        }
        stream.set_nonblocking(false)?;
        stream.set_read_timeout(Some(READ_SLICE))?;
        Ok(TcpLink {
            stream: Arc::new(stream),
            rcv_timeout: READ_SLICE,
        })
    }
}

/// A numeric kernel setting, if readable.
fn kernel_limit(path: &str) -> Option<usize> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn retry(e: Errno) -> bool {
    e == Errno::AGAIN || e == Errno::INTR
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
        let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
        match sendmsg(
            &self.stream,
            &slices,
            &mut SendAncillaryBuffer::default(),
            flags,
        ) {
            Ok(0) => Err(closed()),
            Ok(n) => Ok(n),
            Err(e) if retry(e) => Ok(0),
            Err(e) => Err(e.into()),
        }
    }

    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        match recv(&self.stream, &mut *buf, RecvFlags::DONTWAIT) {
            Ok((0, _)) => Err(closed()),
            Ok((n, _)) => Ok(n),
            Err(e) if retry(e) => Ok(0),
            Err(e) => Err(e.into()),
        }
    }

    fn wait_read(
        &mut self,
        head: &mut [u8],
        body: &mut [u8],
        timeout: Duration,
    ) -> io::Result<usize> {
        let t = timeout.clamp(Duration::from_micros(1), READ_SLICE);
        if t != self.rcv_timeout {
            self.stream.set_read_timeout(Some(t))?;
            self.rcv_timeout = t;
        }
        let want = head.len() + body.len();
        let res = if body.is_empty() {
            (&*self.stream).read(head)
        } else {
            (&*self.stream).read_vectored(&mut [IoSliceMut::new(head), IoSliceMut::new(body)])
        };
        match res {
            Ok(0) if want > 0 => Err(closed()),
            Ok(n) => Ok(n),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                Ok(0)
            }
            Err(e) => Err(e),
        }
    }

    fn wait(&mut self, want_write: bool, timeout: Duration) -> io::Result<()> {
        let mut flags = PollFlags::IN;
        if want_write {
            flags |= PollFlags::OUT;
        }
        let mut fds = [PollFd::new(&*self.stream, flags)];
        match poll(&mut fds, Some(&timespec(timeout))) {
            Ok(_) => Ok(()),
            Err(Errno::INTR) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    fn frame_alignment(&self) -> u64 {
        64
    }

    fn readiness_fd(&self) -> Option<SharedFd> {
        Some(self.stream.clone())
    }

    fn provider(&self) -> &'static str {
        "tcp"
    }
}
