//! Runs the benchmarks with both sides in this process (threads), next to the raw baselines:
//! `cargo run --release -p icn-via --example localbench -- [pingpong|window] [tcp|shm] [sizes,...]`
//! (`ITER=n`: round trips per size; `ONLY=1`: icn-via only, no baselines).
use icn_via::bench::*;

fn main() -> icn_via::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let kind = if a.get(1).map(String::as_str) == Some("window") {
        Kind::Window
    } else {
        Kind::Pingpong
    };
    let provider = a.get(2).cloned().unwrap_or_else(|| "shm".into());
    let mut cfg = BenchConfig::default();
    if let Some(n) = std::env::var("ITER").ok().and_then(|v| v.parse().ok()) {
        cfg.iterations = n;
    }
    let only = std::env::var("ONLY").is_ok();
    if let Some(s) = a.get(3) {
        cfg.sizes = s.split(',').filter_map(|x| x.parse().ok()).collect();
    }
    if !only {
        print!(
            "{}",
            osu_table("raw tcp", kind, &run_raw(RawSocket::Tcp, kind, &cfg)?)
        );
    }
    print!(
        "{}",
        osu_table(
            &format!("icn-via {provider} (threads)"),
            kind,
            &run_local(&provider, kind, &cfg)?
        )
    );
    if only {
        return Ok(());
    }
    print!(
        "{}",
        osu_table("raw tcp", kind, &run_raw(RawSocket::Tcp, kind, &cfg)?)
    );
    print!(
        "{}",
        osu_table("raw unix", kind, &run_raw(RawSocket::Unix, kind, &cfg)?)
    );
    Ok(())
}
