//! Single-core copy bandwidth, for judging the shm paths against the machine:
//! `memcpy` (`copy_from_slice`) and `process_vm_readv` (the single-copy path, reading this
//! process's own memory), per size, best of a few passes, MB/s (10^6 B/s).
//!
//! `cargo run --release -p icn-via --example copybw -- [sizes in bytes, comma separated]`

use std::time::Instant;

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .nth(1)
        .map(|s| s.split(',').map(|x| x.parse().expect("size")).collect())
        .unwrap_or_else(|| vec![64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]);
    println!("# size      memcpy (MB/s)  process_vm_readv (MB/s)");
    for size in sizes {
        let src = vec![0xa5u8; size];
        let mut dst = vec![0x5au8; size];
        // about 1 GiB per measurement, at least 4 copies
        let reps = ((1usize << 30) / size.max(1)).max(4);
        let mut best = |f: &mut dyn FnMut(&mut [u8])| -> f64 {
            let mut best = 0f64;
            for _ in 0..3 {
                let t = Instant::now();
                for _ in 0..reps {
                    f(&mut dst);
                    std::hint::black_box(&dst);
                }
                best = best.max((reps * size) as f64 / t.elapsed().as_secs_f64() / 1e6);
            }
            best
        };
        let m = best(&mut |d| d.copy_from_slice(&src));
        let pid = std::process::id() as i32;
        let addr = src.as_ptr() as u64;
        let c = best(&mut |d| icn_via::link::cma::read(pid, addr, d).expect("process_vm_readv"));
        println!("{size:<10}{m:>15.0}{c:>25.0}");
    }
}
