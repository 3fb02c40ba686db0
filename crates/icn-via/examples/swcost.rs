//! Diagnostic: the software cost of one 8-byte message over shm with no cache-line transfer
//! between cores: both VIs of a connection are driven by this one thread (A sends, B
//! receives and answers, A receives), so the time per message is pure library work.
//! `cargo run --release -p icn-via --example swcost -- [messages]`
use std::time::{Duration, Instant};

use icn_via::bench::Endpoint;
use icn_via::*;

const T: Option<Duration> = Some(Duration::from_secs(30));

fn main() -> Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let url = format!("shm:///icnlab-swcost/{}", std::process::id());
    let cfg = icn_via::bench::BenchConfig::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let srv = std::thread::spawn(move || {
        Endpoint::accept(&url, &icn_via::bench::BenchConfig::default(), |a| {
            tx.send(a.to_string()).unwrap()
        })
    });
    let a = Endpoint::connect(&rx.recv().unwrap(), &cfg)?;
    let b = srv.join().unwrap()?;
    let abuf = a.nic.register_mem(64, MemAttributes::local(a.ptag))?;
    let bbuf = b.nic.register_mem(64, MemAttributes::local(b.ptag))?;
    let aseg = || [Segment::new(abuf.handle(), 0, 8)];
    let bseg = || [Segment::new(bbuf.handle(), 0, 8)];
    a.vi.post_recv(Descriptor::recv(aseg()))?;
    b.vi.post_recv(Descriptor::recv(bseg()))?;
    let t0 = Instant::now();
    for i in 0..n {
        a.vi.post_send(Descriptor::send(aseg()))?;
        b.vi.recv_wait(T)?.ok()?;
        b.vi.post_recv(Descriptor::recv(bseg()))?;
        b.vi.post_send(Descriptor::send(bseg()))?;
        a.vi.recv_wait(T)?.ok()?;
        a.vi.post_recv(Descriptor::recv(aseg()))?;
        if i % 32 == 31 {
            while let Some(c) = a.vi.send_done() {
                c.ok()?;
            }
            while let Some(c) = b.vi.send_done() {
                c.ok()?;
            }
        }
    }
    let per = t0.elapsed().as_secs_f64() * 1e9 / (2 * n) as f64;
    println!("software cost per 8-byte message (post_send + recv_wait + post_recv): {per:.1} ns");
    Ok(())
}
