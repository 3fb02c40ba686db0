//! Single-core copy bandwidth of the shm paths' copies against `memcpy`
//! ([`icn_via::bench::copy_bandwidth`]; `icnlab via copy` prints the same).
//!
//! `cargo run --release -p icn-via --example copybw -- [sizes in bytes, comma separated]`

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .nth(1)
        .map(|s| s.split(',').map(|x| x.parse().expect("size")).collect())
        .unwrap_or_else(|| vec![64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]);
    println!("# size      memcpy (MB/s)  shared region (MB/s)  process_vm_readv (MB/s)");
    for size in sizes {
        let r = icn_via::bench::copy_bandwidth(size).expect("copy");
        println!(
            "{size:<10}{:>15.0}{:>22.0}{:>25.0}",
            r.memcpy_mbs, r.shared_region_mbs, r.process_vm_readv_mbs
        );
    }
}
