//! One-way pingpong latency of large messages on set-up B, per design, and what the wire
//! packet size (`packet_bytes`, an assumption of the set-up B profile) does to MyVIA's.
//!
//! `cargo run --release -p icn-nicmodel --example large_latency`
use icn_nicmodel::{Design, Profile, Switches, bench, build_from};

const SIZES: [u64; 7] = [4096, 8192, 16384, 32768, 65536, 131072, 262144];

fn latency(profile: &Profile, design: &str, size: u64) -> Result<f64, Box<dyn std::error::Error>> {
    let d = Design::load(design)?;
    let pipe = build_from(profile, &d, Switches::default(), 1.0)?;
    Ok(bench::pingpong(&pipe, size, 3, 1)?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let b = Profile::load("setup-b")?;
    let mut whole = b.clone();
    whole.packet_bytes = None;
    println!("set-up B, one-way latency µs (pingpong, 3 round trips)");
    println!(
        "{:>8} {:>10} {:>10} {:>10} {:>12} {:>11}",
        "size B", "myvia", "bvia", "gm", "myvia/bvia", "myvia S&F"
    );
    for s in SIZES {
        let my = latency(&b, "myvia", s)?;
        let bv = latency(&b, "bvia", s)?;
        let gm = latency(&b, "gm", s)?;
        let sf = latency(&whole, "myvia", s)?;
        println!(
            "{s:>8} {my:>10.2} {bv:>10.2} {gm:>10.2} {:>12.3} {sf:>11.2}",
            my / bv
        );
    }
    println!("(myvia S&F: packet_bytes unset, each DMA stored and forwarded whole)");
    println!("\nMyVIA on set-up B vs packet_bytes, one-way latency µs");
    let packets = [1024u64, 2048, 4096, 8192, 16384];
    print!("{:>8}", "size B");
    for p in packets {
        print!(" {:>9}", format!("{p} B"));
    }
    println!();
    for s in [32768u64, 131072, 262144] {
        print!("{s:>8}");
        for p in packets {
            let mut prof = b.clone();
            prof.packet_bytes = Some(p);
            print!(" {:>9.2}", latency(&prof, "myvia", s)?);
        }
        println!();
    }
    Ok(())
}
