//! Both sides of icn-via's attack tests (`tests/attacks.rs`, issue 33): a victim that holds a
//! secret, and an intruder, run as another user, that tries to get at it. Each prints one
//! line per step so the test can assert on what happened.
//!
//! | command | does |
//! |---|---|
//! | `victim URL WAIT_MS [open]` | opens a NIC at URL, registers a 4 KiB region holding `SECRET` with RDMA read and write enabled and a receive buffer, posts a receive, prints `READY <address> <handle>`, waits WAIT_MS for a connection (`open`: after making its shm socket file mode 0666 first, as a misconfiguration would), serves it for WAIT_MS if one comes, then prints `WAIT <outcome>`, `SECRET intact` or `SECRET changed`, `RECV untouched` or `RECV completed` |
//! | `attack URL HANDLE` | as the intruder: with `VICTIM_KEY=PATH`, tries to read the victim's job key file first (`KEY ...`); on shm, a raw connect to the NIC's socket file, then a VIA connection; on tcp, a raw VIA `Connect` frame and a `Send` with sequence number 1 (no job key), then a VIA connection with its own key; if a connection is ever accepted, an RDMA write over and an RDMA read of region HANDLE. Prints `RAW <outcome>`, `VIA <outcome>`, and `RDMA ...` lines only if connected |
//! | `plant DIR TARGET` | as the intruder: creates DIR (mode 0777) with `job.key` and `vipl` symbolic links to TARGET inside, prints `PLANTED` |
//! | `plant-link LINK TARGET` | as the intruder: makes LINK a symbolic link to TARGET, prints `PLANTED` |
//!
//! Exit status 0 when the steps ran (whatever they found), 2 on bad usage.

use std::io::{Read, Write};
use std::time::Duration;

use icn_via::frame::{Header, Kind};
use icn_via::*;

const SECRET: &[u8] = b"SECRET: the victim's RDMA-enabled bytes";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let a = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
    let r = match a(1) {
        "victim" => victim(a(2), a(3).parse().unwrap_or(500), a(4) == "open"),
        "attack" => {
            attack(a(2), a(3).parse().unwrap_or(1));
            Ok(())
        }
        "plant" => plant(a(2), a(3)),
        "plant-link" => std::os::unix::fs::symlink(a(3), a(2))
            .map(|()| println!("PLANTED"))
            .map_err(ViaError::from),
        _ => {
            eprintln!(
                "usage: icn-via-intruder victim URL WAIT_MS [open] | attack URL HANDLE | \
                 plant DIR TARGET | plant-link LINK TARGET"
            );
            std::process::exit(2);
        }
    };
    if let Err(e) = r {
        println!("FAILED {e}");
    }
}

fn victim(url: &str, wait_ms: u64, open_socket: bool) -> Result<()> {
    let nic = match Nic::open(url) {
        Ok(n) => n,
        Err(e) => {
            println!("OPEN-FAILED {e}");
            return Ok(());
        }
    };
    let ptag = nic.create_ptag();
    let vi = nic.create_vi(
        ViAttributes::new(ptag, Reliability::ReliableDelivery),
        None,
        None,
    )?;
    let secret = nic.register_mem(4096, MemAttributes::rdma(ptag))?;
    secret.write(0, SECRET)?;
    let inbox = nic.register_mem(4096, MemAttributes::local(ptag))?;
    vi.post_recv(Descriptor::recv([Segment::new(inbox.handle(), 0, 4096)]))?;
    if open_socket && let Some(name) = url.strip_prefix("shm://") {
        use std::os::unix::fs::PermissionsExt;
        let path = icn_via::private_dir::endpoint_file(&icn_via::private_dir::dir()?, name);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666))?;
    }
    println!("READY {} {}", nic.address(), secret.handle().raw());
    std::io::stdout().flush()?;
    let t = Some(Duration::from_millis(wait_ms));
    match nic.connect_wait(b"peer", t) {
        Ok(req) => {
            let r = req.accept(&vi);
            println!("WAIT accepted a connection ({r:?})");
            let end = std::time::Instant::now() + Duration::from_millis(wait_ms);
            while std::time::Instant::now() < end {
                vi.progress();
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Err(e) => println!("WAIT {e}"),
    }
    let mut now = vec![0u8; SECRET.len()];
    secret.read(0, &mut now)?;
    println!(
        "SECRET {}",
        if now == SECRET { "intact" } else { "changed" }
    );
    println!(
        "RECV {}",
        if vi.recv_done().is_some() {
            "completed"
        } else {
            "untouched"
        }
    );
    Ok(())
}

fn attack(url: &str, handle: u32) {
    if let Some(k) = std::env::var_os("VICTIM_KEY") {
        match std::fs::read(&k) {
            Ok(_) => println!("KEY READ from {}", k.to_string_lossy()),
            Err(e) => println!("KEY unreadable: {e}"),
        }
    }
    match url.strip_prefix("shm://") {
        Some(name) => {
            let raw = icn_via::private_dir::dir_to_dial()
                .map(|d| icn_via::private_dir::endpoint_file(&d, name))
                .and_then(|p| std::os::unix::net::UnixStream::connect(&p).map(|_| p));
            match raw {
                Ok(p) => println!("RAW connected to {}", p.display()),
                Err(e) => println!("RAW refused: {e}"),
            }
        }
        None => {
            let hp = url.strip_prefix("tcp://").unwrap_or(url);
            println!("RAW {}", inject(hp));
        }
    }
    let local = if url.starts_with("shm://") {
        "shm://"
    } else {
        "tcp://"
    };
    let r = Nic::open(local).and_then(|nic| {
        let ptag = nic.create_ptag();
        let vi = nic.create_vi(
            ViAttributes::new(ptag, Reliability::ReliableDelivery),
            None,
            None,
        )?;
        nic.connect_request(&vi, url, b"peer", Some(Duration::from_secs(2)))?;
        println!("VIA ACCEPTED: connected to the victim");
        let mine = nic.register_mem(4096, MemAttributes::local(ptag))?;
        mine.write(0, b"OVERWRITTEN by the intruder")?;
        let remote = RemoteAddr {
            handle: MemHandle::from_raw(handle),
            offset: 0,
        };
        vi.post_send(Descriptor::rdma_write(
            remote,
            [Segment::new(mine.handle(), 0, 27)],
        ))?;
        println!(
            "RDMA write {:?}",
            vi.send_wait(Some(Duration::from_secs(2)))
        );
        vi.post_send(Descriptor::rdma_read(
            remote,
            [Segment::new(mine.handle(), 0, 40)],
        ))?;
        println!("RDMA read {:?}", vi.send_wait(Some(Duration::from_secs(2))));
        let mut got = vec![0u8; 40];
        mine.read(0, &mut got)?;
        println!("RDMA read bytes {:?}", String::from_utf8_lossy(&got));
        Ok(())
    });
    if let Err(e) = r {
        println!("VIA refused: {e}");
    }
}

/// A raw VIA client without the job key: a `Connect` frame with discriminator `peer`, then a
/// `Send` with sequence number 1. What the victim did with it.
fn inject(hp: &str) -> String {
    let mut s = match std::net::TcpStream::connect(hp) {
        Ok(s) => s,
        Err(e) => return format!("cannot connect: {e}"),
    };
    let connect = Header {
        imm: Reliability::ReliableDelivery.code(),
        handle: 1 << 20,
        len: 4,
        ..Header::new(Kind::Connect)
    };
    let send = Header {
        seq: 1,
        len: 8,
        ..Header::new(Kind::Send)
    };
    let mut bytes = connect.encode().to_vec();
    bytes.extend_from_slice(b"peer");
    bytes.extend_from_slice(&send.encode());
    bytes.extend_from_slice(b"INJECTED");
    let _ = s.write_all(&bytes);
    let _ = s.set_read_timeout(Some(Duration::from_secs(3)));
    let mut b = [0u8; 256];
    match s.read(&mut b) {
        Ok(0) => "closed by the victim, nothing answered".into(),
        Ok(n) => format!("ANSWERED {n} bytes"),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
            "closed by the victim (reset), nothing answered".into()
        }
        Err(e) => format!("no answer ({e})"),
    }
}

fn plant(dir: &str, target: &str) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777))?;
    for name in ["job.key", "vipl"] {
        std::os::unix::fs::symlink(target, std::path::Path::new(dir).join(name))?;
    }
    println!("PLANTED");
    Ok(())
}
