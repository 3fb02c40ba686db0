//! The conformance suite of a VC router microarchitecture: what every network of
//! [`crate::fabric::VcEngine`] must show, one body over every microarchitecture
//! (`tests/vc_conformance.rs` runs it on the grid and any-radix routers; a new router adds
//! its cases there):
//! 1. **exact zero-load latency**: with unit delays a packet of `L` flits alone in the
//!    network over `H` router-to-router hops takes `a + b·H + (L − 1)` cycles from its
//!    creation to its tail's arrival, with the microarchitecture's own `(a, b)`: `(7, 5)` for
//!    the timing table of [`crate::grid`], `(6, 4)` with speculative switch allocation;
//! 2. **exactly once, credits back to full after a drain**: random traffic, then every
//!    packet delivered once and every credit counter at its buffer size ([`exactly_once`]);
//! 3. **sequential = parallel, bit for bit**: the same traffic at 1, 2 and 3 partitions
//!    gives the same deliveries (cycle, packet, in order) and channel loads.

use crate::PacketDone;
use crate::fabric::VcEngine;
use icn_engine::rng::{Rng, stream};
use icn_topo::routing::trace;

/// One network to check.
pub struct Case<'a> {
    pub name: &'a str,
    /// The icn-topo network spec and routing name it simulates (for the hop counts of 1).
    pub spec: &'a str,
    pub routing: &'a str,
    /// `(a, b)` of the zero-load latency `a + b·H + (L − 1)` with unit delays.
    pub zero_load: (u64, u64),
    /// Builds it with unit delays (`VcParams::unit_delays`) in `threads` partitions.
    pub build: &'a dyn Fn(usize) -> VcEngine,
}

/// 1: every `src → dst` for a few sources, packets of 1 and 5 flits.
pub fn zero_load_latency(case: &Case) -> Result<(), String> {
    let net = icn_topo::parse_network_spec(case.spec).map_err(|e| e.to_string())?;
    let routing = icn_topo::routing_for(&net, case.routing, None).map_err(|e| e.to_string())?;
    let mut e = (case.build)(1);
    let n = e.net().nodes();
    for src in (0..n).step_by(n / 6 + 1) {
        for dst in 0..n {
            let mut rng = stream(0, 0);
            let route = trace(
                &net,
                routing.as_ref(),
                src as u32,
                dst as u32,
                &mut rng,
                &[],
                64,
            )
            .map_err(|e| e.to_string())?;
            let h = route.len() as u64 - 1;
            for len in [1, 5] {
                e.net_mut().enqueue(src, dst, len);
                let mut got: Vec<(u64, PacketDone)> = Vec::new();
                while got.is_empty() {
                    e.step(&mut got).map_err(|e| e.to_string())?;
                }
                let (at, p) = got[0];
                let (a, b) = case.zero_load;
                let want = a + b * h + u64::from(len - 1);
                if (p.src, p.dst, p.len) != (src, dst, len) || at - p.created != want {
                    return Err(format!(
                        "{}: {src}→{dst} L={len}: {p:?} took {} cycles, want {a} + {b}·{h} + {} = {want}",
                        case.name,
                        at - p.created,
                        len - 1
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Everything a run shows: deliveries in order, channel loads, how it ended.
#[derive(Debug, PartialEq)]
pub struct Outcome {
    pub got: Vec<(u64, PacketDone)>,
    pub loads: Vec<(usize, u64)>,
    pub end: Result<u64, String>,
    pub credits_full: bool,
}

/// Random traffic (`rate` packets per node per cycle, 1..=`max_len` flits) for `cycles`,
/// measuring from a third of the way, then a drain of at most `drain` cycles.
pub fn drive(
    e: &mut VcEngine,
    rate: f64,
    max_len: u32,
    (cycles, drain): (u64, u64),
    seed: u64,
) -> Outcome {
    let n = e.net().nodes();
    let mut rng = stream(seed, n as u64);
    let mut got = Vec::new();
    let mut end = Err(format!("not drained after {} cycles", cycles + drain));
    for c in 0..cycles + drain {
        e.net_mut().set_measuring(c >= cycles / 3 && c < cycles);
        if c < cycles {
            for s in 0..n {
                if rng.random::<f64>() < rate {
                    let d = rng.random_range(0..n);
                    let len = rng.random_range(1..=max_len);
                    e.net_mut().enqueue_tagged(s, d, len, c);
                }
            }
        } else if e.net().in_network() == 0 {
            end = Ok(c);
            break;
        }
        if let Err(err) = e.step(&mut got) {
            end = Err(err.to_string());
            break;
        }
    }
    Outcome {
        got,
        loads: e.net().channel_loads(),
        end,
        credits_full: e.net().credits_full(),
    }
}

/// 2: after random traffic and a drain, nothing in flight and every credit back.
pub fn credits_return(case: &Case) -> Result<(), String> {
    exactly_once(&mut (case.build)(1), 5, 0.05).map_err(|e| format!("{}: {e}", case.name))
}

/// Random traffic of `len`-flit packets at `rate` per node and cycle for 3 000 cycles, then
/// drained: every packet arrives exactly once, and once the last credits are back (200
/// cycles more) every counter is full again, the ejection ports' included (switch
/// allocation reads them without testing the port).
pub fn exactly_once(e: &mut VcEngine, len: u32, rate: f64) -> Result<(), String> {
    let n = e.net().nodes();
    let mut rng = stream(3, 0);
    let mut sent = Vec::new();
    let mut got: Vec<(u64, PacketDone)> = Vec::new();
    let fail = |err: icn_engine::ModelError| err.to_string();
    for _ in 0..3_000 {
        for s in 0..n {
            if rng.random::<f64>() < rate {
                let d = rng.random_range(0..n);
                sent.push((s, d, e.net().now()));
                e.net_mut().enqueue(s, d, len);
            }
        }
        e.step(&mut got).map_err(fail)?;
    }
    while e.net().in_network() > 0 {
        e.step(&mut got).map_err(fail)?;
    }
    for _ in 0..200 {
        e.step(&mut got).map_err(fail)?;
    }
    if !e.net().credits_full() {
        return Err("credits not back to full after the drain".into());
    }
    let mut recv: Vec<(usize, usize, u64)> =
        got.iter().map(|(_, p)| (p.src, p.dst, p.created)).collect();
    sent.sort_unstable();
    recv.sort_unstable();
    if sent.is_empty() || sent != recv {
        return Err(format!(
            "{} packets sent, {} delivered, or not the same ones",
            sent.len(),
            recv.len()
        ));
    }
    Ok(())
}

/// 3: the same outcome at 1, 2 and 3 partitions.
pub fn same_at_any_thread_count(case: &Case) -> Result<(), String> {
    let one = drive(&mut (case.build)(1), 0.08, 8, (1_500, 15_000), 2);
    if one.end.is_err() || one.got.is_empty() {
        return Err(format!("{}: sequential run {:?}", case.name, one.end));
    }
    for threads in [2, 3] {
        let par = drive(&mut (case.build)(threads), 0.08, 8, (1_500, 15_000), 2);
        if par != one {
            let first = one.got.iter().zip(&par.got).position(|(a, b)| a != b);
            return Err(format!(
                "{} at {threads} threads differs from 1 thread: first differing delivery {first:?}, ends {:?} vs {:?}, loads equal {}",
                case.name,
                par.end,
                one.end,
                par.loads == one.loads
            ));
        }
    }
    Ok(())
}
