//! Diagnostic: 8-byte shm ping-pong with every round trip timed, both sides threads of this
//! process pinned to different CPUs; prints min / median / p90 one-way latency in µs. The
//! median is robust to the preemptions of a loaded machine, which wreck the OSU mean.
//! `cargo run --release -p icn-via --example ppstats -- [round_trips] [size]`
use std::time::{Duration, Instant};

use icn_via::bench::{Endpoint, pin_to_cpu};
use icn_via::*;

const T: Option<Duration> = Some(Duration::from_secs(30));

fn main() -> Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let n: usize = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let size: u32 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(8);
    let url = format!("shm:///icnlab-ppstats/{}", std::process::id());
    let (tx, rx) = std::sync::mpsc::channel();
    let cfg = icn_via::bench::BenchConfig::default();
    let srv = std::thread::spawn(move || -> Result<()> {
        pin_to_cpu(1);
        let ep = Endpoint::accept(&url, &icn_via::bench::BenchConfig::default(), |a| {
            tx.send(a.to_string()).unwrap()
        })?;
        let buf = ep.nic.register_mem(4096, MemAttributes::local(ep.ptag))?;
        let seg = || [Segment::new(buf.handle(), 0, size)];
        // as in bench::pingpong: two receives deep, re-posted after the send
        ep.vi.post_recv(Descriptor::recv(seg()))?;
        ep.vi.post_recv(Descriptor::recv(seg()))?;
        for _ in 0..n {
            ep.vi.recv_wait(T)?.ok()?;
            ep.vi.post_send(Descriptor::send(seg()))?;
            ep.vi.post_recv(Descriptor::recv(seg()))?;
            while let Some(c) = ep.vi.send_done() {
                c.ok()?;
            }
        }
        ep.vi.progress();
        Ok(())
    });
    let addr = rx.recv().unwrap();
    pin_to_cpu(0);
    let ep = Endpoint::connect(&addr, &cfg)?;
    let buf = ep.nic.register_mem(4096, MemAttributes::local(ep.ptag))?;
    let seg = || [Segment::new(buf.handle(), 0, size)];
    let mut t = Vec::with_capacity(n);
    ep.vi.post_recv(Descriptor::recv(seg()))?;
    for _ in 0..n {
        let t0 = Instant::now();
        ep.vi.post_send(Descriptor::send(seg()))?;
        ep.vi.post_recv(Descriptor::recv(seg()))?;
        ep.vi.recv_wait(T)?.ok()?;
        t.push(t0.elapsed().as_secs_f64() * 1e6 / 2.0);
        while let Some(c) = ep.vi.send_done() {
            c.ok()?;
        }
    }
    srv.join().unwrap()?;
    t.sort_by(f64::total_cmp);
    let q = |p: f64| t[((t.len() - 1) as f64 * p) as usize];
    println!(
        "size {size} one-way µs: min {:.3} median {:.3} p90 {:.3} mean {:.3}",
        q(0.0),
        q(0.5),
        q(0.9),
        t.iter().sum::<f64>() / t.len() as f64
    );
    Ok(())
}
