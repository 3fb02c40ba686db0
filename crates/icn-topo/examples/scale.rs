//! Build times, memory and routing speed of large networks, and deadlock-check times.
//!
//! `cargo run -p icn-topo --release --example scale` (wrap in `/usr/bin/time -v` for peak memory).
//! Pass `build`, `route` or `check [P]` to run one part only.

use icn_topo::cdg;
use icn_topo::routing::dor::{DimensionOrder, Vcs};
use icn_topo::routing::dragonfly::{Algorithm, DragonflyRouting};
use icn_topo::routing::updown::{UpDown, UpPort};
use icn_topo::routing::{Routing, trace};
use icn_topo::traffic::{Traffic, TrafficPattern};
use icn_topo::{Network, TopoError};
use rand::SeedableRng;
use rand_pcg::Pcg64;
use std::time::Instant;

fn build(name: &str, f: impl Fn() -> Result<Network, TopoError>) -> Network {
    let t = Instant::now();
    let net = f().expect("valid parameters");
    let built = t.elapsed().as_secs_f64();
    println!(
        "{name}: {} endpoints, {} routers, radix {}, {} B/router, table {:.1} MB, built in {:.3} s",
        net.terminals(),
        net.routers(),
        net.radix(),
        net.bytes_per_router(),
        net.table_bytes() as f64 / 1e6,
        built
    );
    net
}

/// Routes `n` packets of `pattern` and reports nanoseconds per hop.
fn route_speed(net: &Network, name: &str, r: &dyn Routing, pattern: TrafficPattern, n: u32) {
    let traffic = Traffic::new(pattern, net, 1).expect("pattern fits");
    let mut rng = Pcg64::seed_from_u64(1);
    let t = Instant::now();
    let mut hops = 0usize;
    for i in 0..n {
        let src = (u64::from(i) * 2_654_435_761 % u64::from(net.terminals())) as u32;
        let dst = traffic.destination(src, &mut rng);
        hops += trace(net, r, src, dst, &mut rng, &[], 16)
            .expect("delivered")
            .len();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "  {name}, {pattern:?}: {n} routes, {:.2} hops/route, {:.1} ns/hop",
        hops as f64 / f64::from(n),
        secs * 1e9 / hops as f64
    );
}

/// Calls `next_hop` on `n` random (router, destination) pairs: the routing function alone.
fn hop_speed(net: &Network, name: &str, r: &dyn Routing, n: u32) {
    let mut rng = Pcg64::seed_from_u64(2);
    let pairs: Vec<(u32, u32)> = (0..n)
        .map(|_| {
            use rand::Rng;
            (
                rng.random_range(0..net.terminal_routers()),
                rng.random_range(0..net.terminals()),
            )
        })
        .collect();
    let t = Instant::now();
    let mut sum = 0u64;
    for &(router, dst) in &pairs {
        let mut h = r.inject(
            router * u32::from(net.terminals_per_router()),
            dst,
            &mut rng,
            &[],
        );
        sum += u64::from(r.next_hop(router, &mut h, &mut rng).port);
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "  {name}: inject + next_hop {:.1} ns (port sum {sum})",
        secs * 1e9 / f64::from(n)
    );
}

fn check(net: &Network, name: &str, r: &dyn Routing) {
    let t = Instant::now();
    let verdict = match cdg::check(net, r) {
        Ok(rep) => format!(
            "acyclic: {} vertices, {} dependencies, {} states",
            rep.vertices, rep.dependencies, rep.states
        ),
        Err(cdg::CheckError::Cycle { cycle, text }) => {
            format!("cycle of {} channels:\n{text}\n ", cycle.len())
        }
        Err(e) => e.to_string(),
    };
    println!("  {name}: {verdict} ({:.3} s)", t.elapsed().as_secs_f64());
}

fn main() {
    let part = std::env::args().nth(1).unwrap_or_default();
    let all = part.is_empty();
    if all || part == "build" || part == "route" {
        let df = build("dragonfly p=23 a=46 h=23", || {
            Network::dragonfly_balanced(23)
        });
        let ft = build("fat tree k=32 n=4", || Network::fat_tree(32, 4));
        let t = Instant::now();
        df.check_wiring().expect("symmetric");
        ft.check_wiring().expect("symmetric");
        println!(
            "wiring of both checked in {:.3} s",
            t.elapsed().as_secs_f64()
        );
        if all || part == "route" {
            for alg in [
                Algorithm::Minimal,
                Algorithm::Valiant,
                Algorithm::Ugal { threshold: 0 },
            ] {
                let r = DragonflyRouting::new(&df, alg).expect("dragonfly");
                route_speed(
                    &df,
                    &format!("dragonfly {alg:?}"),
                    &r,
                    TrafficPattern::Uniform,
                    1_000_000,
                );
            }
            let r = DragonflyRouting::new(&df, Algorithm::Minimal).expect("dragonfly");
            route_speed(
                &df,
                "dragonfly Minimal",
                &r,
                TrafficPattern::GroupShift,
                1_000_000,
            );
            let r = UpDown::new(&ft, UpPort::Random).expect("fat tree");
            route_speed(
                &ft,
                "fat tree up/down random",
                &r,
                TrafficPattern::RandomPermutation,
                1_000_000,
            );
            for alg in [
                Algorithm::Minimal,
                Algorithm::Valiant,
                Algorithm::Ugal { threshold: 0 },
            ] {
                let r = DragonflyRouting::new(&df, alg).expect("dragonfly");
                hop_speed(&df, &format!("dragonfly {alg:?}"), &r, 4_000_000);
            }
            for up in [UpPort::Destination, UpPort::Random] {
                let r = UpDown::new(&ft, up).expect("fat tree");
                hop_speed(&ft, &format!("fat tree {up:?}"), &r, 4_000_000);
            }
        }
    }
    if all || part == "check" {
        println!("deadlock checks:");
        // `check P` checks the balanced dragonfly of p = P instead of Kim et al.'s p = 4.
        let p: u32 = std::env::args()
            .nth(2)
            .and_then(|a| a.parse().ok())
            .unwrap_or(4);
        let df = Network::dragonfly_balanced(p).expect("valid");
        println!(
            " dragonfly p={p} a={} h={p} ({} endpoints, {} routers)",
            2 * p,
            df.terminals(),
            df.routers()
        );
        for alg in [
            Algorithm::Minimal,
            Algorithm::Valiant,
            Algorithm::Ugal { threshold: 0 },
        ] {
            let r = DragonflyRouting::new(&df, alg).expect("dragonfly");
            check(&df, &format!("{alg:?}, {} classes", r.vc_classes()), &r);
            let fewer = r.vc_classes() - 1;
            check(
                &df,
                &format!("{alg:?}, {fewer} classes"),
                &r.with_vc_classes(fewer).expect("≥ 1"),
            );
        }
        let torus = Network::torus(16, 16).expect("valid");
        println!(" torus 16x16");
        for vcs in [Vcs::Single, Vcs::Dateline] {
            check(
                &torus,
                &format!("DOR {vcs:?}"),
                &DimensionOrder::new(&torus, vcs).expect("torus"),
            );
        }
        let ft = Network::fat_tree(8, 3).expect("valid");
        println!(" fat tree k=8 n=3 ({} endpoints)", ft.terminals());
        for up in [UpPort::Destination, UpPort::Random] {
            check(
                &ft,
                &format!("up/down {up:?}"),
                &UpDown::new(&ft, up).expect("fat tree"),
            );
        }
    }
}
