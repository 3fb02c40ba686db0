//! Two processes, one VI: the client sends 8 bytes, the server sends them back, 100 000
//! times; the client prints the mean one-way latency. Start the two in either order:
//!
//! ```sh
//! cargo run --release -p icn-via --example hello -- server shm:///hello   # or tcp://127.0.0.1:7000
//! cargo run --release -p icn-via --example hello -- client shm:///hello
//! ```
use std::time::{Duration, Instant};

use icn_via::*;

const ROUNDS: u32 = 100_000;
const WAIT: Option<Duration> = Some(Duration::from_secs(10));

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (role, url) = match args.as_slice() {
        [_, role, url] if role == "server" || role == "client" => (role.as_str(), url.as_str()),
        _ => {
            eprintln!("usage: hello server|client shm:///NAME|tcp://HOST:PORT");
            std::process::exit(2);
        }
    };
    let rounds = std::env::var("HELLO_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS);
    // The server's NIC listens at `url`; the client's listens nowhere ("shm://" / "tcp://").
    let nic = Nic::open(if role == "server" { url } else { &url[..6] })?;
    let ptag = nic.create_ptag();
    let vi = nic.create_vi(
        ViAttributes::new(ptag, Reliability::ReliableDelivery),
        None,
        None,
    )?;
    // Register once, reuse for every message: registration is the expensive part.
    let out = nic.register_mem(64, MemAttributes::local(ptag))?;
    let inb = nic.register_mem(64, MemAttributes::local(ptag))?;
    let recv = || Descriptor::recv([Segment::new(inb.handle(), 0, 8)]);
    let send = || Descriptor::send([Segment::new(out.handle(), 0, 8)]);
    // A receive must be posted before the peer's message arrives (VIA has no unexpected
    // messages), so post one before connecting.
    vi.post_recv(recv())?;
    if role == "server" {
        nic.connect_wait(b"hello", WAIT)?.accept(&vi)?;
    } else {
        // Waits (up to WAIT) for the server to listen: either may start first.
        nic.connect_request(&vi, url, b"hello", WAIT)?;
    }
    let start = Instant::now();
    for i in 0..rounds {
        if role == "client" {
            out.write(0, &u64::from(i).to_le_bytes())?;
            vi.post_send(send())?;
        }
        // Polls for the VI's spin budget (50 us by default), then sleeps: the fast path.
        vi.recv_wait(WAIT)?.ok()?;
        vi.post_recv(recv())?; // re-post at once, before the peer's next message
        if role == "server" {
            inb.with(|b| out.write(0, &b[..8]))?;
            vi.post_send(send())?;
        } else {
            let mut got = [0; 8];
            inb.read(0, &mut got)?;
            assert_eq!(u64::from_le_bytes(got), u64::from(i), "echo out of order");
        }
        // Sends complete when the peer acknowledges; reap them now and then, not per
        // message (each poll of an empty queue costs).
        if i % 32 == 31 {
            while let Some(c) = vi.send_done() {
                c.ok()?;
            }
        }
    }
    let one_way = start.elapsed().as_secs_f64() * 1e6 / (2.0 * f64::from(rounds));
    if role == "client" {
        println!(
            "{rounds} round trips of 8 B over {}: {one_way:.3} us one-way",
            &url[..3]
        );
    }
    // The client owes the server an acknowledgement for the last echo: progress() sends it.
    // Then either side may disconnect first (pending descriptors are flushed); the other
    // finds its VI idle already.
    vi.progress();
    if role == "server" {
        let _ = vi.send_wait(Some(Duration::from_secs(1)));
    }
    match vi.disconnect() {
        Ok(()) | Err(ViaError::InvalidState(_)) => Ok(()),
        Err(e) => Err(e),
    }
}
