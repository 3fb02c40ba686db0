//! Diagnostic: the floor under the shm provider's latency. An 8-byte ping-pong straight over
//! the record ring (no VI engine, no descriptors), both sides threads pinned to different
//! CPUs; prints min / median one-way latency in µs.
//! `cargo run --release -p icn-via --example ringpp -- [round_trips] [ring_bytes]`
use std::time::Instant;

use icn_via::bench::pin_to_cpu;
use icn_via::ring::{RecordRead, heap_area};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: usize = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let cap: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(64 << 10);
    let (ca, sa) = heap_area(cap);
    let srv = std::thread::spawn(move || {
        pin_to_cpu(1);
        let mut buf = [0u8; 64];
        for _ in 0..n {
            while sa.read_record(&mut buf).unwrap() == RecordRead::Empty {
                std::hint::spin_loop();
            }
            while sa.write(&[&buf[..40]]).unwrap() == 0 {}
        }
    });
    pin_to_cpu(0);
    let mut t = Vec::with_capacity(n);
    let mut buf = [0u8; 64];
    for _ in 0..n {
        let t0 = Instant::now();
        while ca.write(&[&buf[..40]]).unwrap() == 0 {}
        while ca.read_record(&mut buf).unwrap() == RecordRead::Empty {
            std::hint::spin_loop();
        }
        t.push(t0.elapsed().as_secs_f64() * 1e6 / 2.0);
    }
    srv.join().unwrap();
    t.sort_by(f64::total_cmp);
    println!(
        "ring {cap} B, 40-byte records, one-way µs: min {:.3} median {:.3} p90 {:.3}",
        t[0],
        t[t.len() / 2],
        t[t.len() * 9 / 10]
    );
}
