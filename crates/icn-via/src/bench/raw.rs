//! Raw-socket baselines: the same pingpong and window programs over a plain blocking TCP
//! socket (`TCP_NODELAY`) and a Unix stream socket, peer in a thread, neither side pinned.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::time::Instant;

use super::{BenchConfig, Kind, Row};
use crate::error::{Result, ViaError};

/// Which raw socket a baseline uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawSocket {
    Tcp,
    Unix,
}

trait Stream: Read + Write + Send + 'static {}
impl<T: Read + Write + Send + 'static> Stream for T {}

fn raw_pair(kind: RawSocket) -> std::io::Result<(Box<dyn Stream>, Box<dyn Stream>)> {
    Ok(match kind {
        RawSocket::Tcp => {
            let l = TcpListener::bind("127.0.0.1:0")?;
            let c = TcpStream::connect(l.local_addr()?)?;
            let (s, _) = l.accept()?;
            c.set_nodelay(true)?;
            s.set_nodelay(true)?;
            (Box::new(c), Box::new(s))
        }
        RawSocket::Unix => {
            let (a, b) = UnixStream::pair()?;
            (Box::new(a), Box::new(b))
        }
    })
}

/// The same pingpong/window programs over a plain blocking socket (the peer in a thread,
/// neither side pinned). [`raw_client`] and [`raw_server`] run the two sides over any
/// connected stream, e.g. in two processes (`icnlab via --baselines` does that, so the
/// baselines run like icn-via's own two-process runs).
pub fn run_raw(sock: RawSocket, kind: Kind, cfg: &BenchConfig) -> Result<Vec<Row>> {
    cfg.validate()?;
    let (mut a, mut b) = raw_pair(sock)?;
    let scfg = cfg.clone();
    let peer = std::thread::spawn(move || raw_server(&mut b, kind, &scfg));
    let rows = raw_client(&mut a, kind, cfg)?;
    peer.join()
        .map_err(|_| ViaError::ConnectionLost("baseline peer panicked".into()))??;
    Ok(rows)
}

/// The answering side of a raw baseline: echoes (pingpong) or sinks and confirms (window).
pub fn raw_server(b: &mut (impl Read + Write), kind: Kind, cfg: &BenchConfig) -> Result<()> {
    // Separate receive and send buffers, as the OSU benchmarks and icn-via's own pingpong use:
    // echoing the buffer just received would send from a cache-hot source and flatter the baseline.
    // Sources are filled like icn-via's regions (`Endpoint::region`): an untouched buffer is
    // the kernel's shared zero page, which no real sender has.
    let mut buf = vec![0u8; cfg.max_size().max(1)];
    let reply = vec![0xa5u8; cfg.max_size().max(1)];
    for &size in cfg.sizes.iter().filter(|&&s| s > 0) {
        match kind {
            Kind::Pingpong => {
                let n =
                    cfg.reps(cfg.iterations, size) + cfg.warmup.min(cfg.reps(cfg.iterations, size));
                for _ in 0..n {
                    b.read_exact(&mut buf[..size])?;
                    b.write_all(&reply[..size])?;
                }
            }
            Kind::Window => {
                let m = cfg.reps(cfg.messages, size).div_ceil(cfg.window) * cfg.window;
                for _ in 0..m {
                    b.read_exact(&mut buf[..size])?;
                }
                b.write_all(&[1])?;
            }
        }
    }
    Ok(())
}

/// The measuring side of a raw baseline.
pub fn raw_client(a: &mut (impl Read + Write), kind: Kind, cfg: &BenchConfig) -> Result<Vec<Row>> {
    cfg.validate()?;
    // Send from one buffer, receive into another (the OSU convention; see `raw_server`).
    let send = vec![0xa5u8; cfg.max_size().max(1)];
    let mut buf = vec![0u8; cfg.max_size().max(1)];
    let mut rows = Vec::new();
    // A stream cannot carry a zero-byte message: size 0 has no raw baseline.
    for &size in cfg.sizes.iter().filter(|&&s| s > 0) {
        match kind {
            Kind::Pingpong => {
                let n = cfg.reps(cfg.iterations, size);
                let warm = cfg.warmup.min(n);
                let mut t0 = Instant::now();
                for i in 0..warm + n {
                    if i == warm {
                        t0 = Instant::now();
                    }
                    a.write_all(&send[..size])?;
                    a.read_exact(&mut buf[..size])?;
                }
                rows.push(Row {
                    size,
                    value: t0.elapsed().as_secs_f64() * 1e6 / (2.0 * n as f64),
                });
            }
            Kind::Window => {
                let m = cfg.reps(cfg.messages, size).div_ceil(cfg.window) * cfg.window;
                let t0 = Instant::now();
                for _ in 0..m {
                    a.write_all(&send[..size])?;
                }
                a.read_exact(&mut buf[..1])?;
                rows.push(Row {
                    size,
                    value: (m * size) as f64 / t0.elapsed().as_secs_f64() / 1e6,
                });
            }
        }
    }
    Ok(rows)
}
