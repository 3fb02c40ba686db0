//! stub
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
pub struct ShmListener(std::os::unix::net::UnixListener);
impl ShmListener {
    pub fn bind(_n: &str) -> io::Result<Self> { Err(io::Error::other("todo")) }
    pub fn accept(&mut self) -> io::Result<Option<super::tcp::TcpLink>> { Err(io::Error::other("todo")) }
}
impl AsFd for ShmListener { fn as_fd(&self) -> BorrowedFd<'_> { self.0.as_fd() } }
pub fn dial(_n: &str) -> io::Result<super::tcp::TcpLink> { Err(io::Error::other("todo")) }
