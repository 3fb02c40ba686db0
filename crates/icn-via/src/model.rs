//! `model = "via-bench"`: one point of the VIA benchmarks as an icnlab model, so
//! `icnlab reproduce via` sweeps transports × sizes and plots them with the usual machinery.
//!
//! Unlike the simulation models this one *measures the machine*: its result is not a
//! function of (config, seed) — the seed is unused, and replications give the run-to-run
//! spread. Runs are serialised by a process-wide lock so that parallel replications or sweep
//! points never share the CPUs they are measuring.
//!
//! | key | default | allowed |
//! |---|---|---|
//! | `program` | `"pingpong"` | `"pingpong"`, `"window"` |
//! | `transport` | `"shm"` | `"shm"`, `"tcp"` (icn-via providers), `"raw_tcp"`, `"raw_unix"` (baselines) |
//! | `size` | 8 | 0..=8 MiB (≥ 1 for the raw baselines) |
//! | `iterations` | 1000 | 1..=10^7 (pingpong round trips) |
//! | `warmup` | 100 | 0..=10^6 |
//! | `messages` | 2000 | 1..=10^7 (window) |
//! | `window` | 64 | 1..=512 |
//! | `reliability` | `"reliable_delivery"` | `"unreliable"`, `"reliable_delivery"`, `"reliable_reception"` |
//! | `pin` | true | pin the two sides to different CPUs (icn-via transports only) |

pub mod doc;

use std::sync::Mutex;

use icn_engine::{Invalid, Metrics, Model, ModelError, Progress};
use serde::{Deserialize, Serialize};

use crate::attrs::{MAX_TRANSFER_SIZE, Reliability};
use crate::bench::{BenchConfig, Kind, RawSocket, run_local, run_raw};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Shm,
    Tcp,
    RawTcp,
    RawUnix,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ViaBenchConfig {
    pub program: Kind,
    pub transport: Transport,
    pub size: usize,
    pub iterations: usize,
    pub warmup: usize,
    pub messages: usize,
    pub window: usize,
    pub reliability: Reliability,
    pub pin: bool,
}

impl Default for ViaBenchConfig {
    fn default() -> Self {
        ViaBenchConfig {
            program: Kind::Pingpong,
            transport: Transport::Shm,
            size: 8,
            iterations: 1000,
            warmup: 100,
            messages: 2000,
            window: 64,
            reliability: Reliability::ReliableDelivery,
            pin: true,
        }
    }
}

impl ViaBenchConfig {
    fn bench(&self) -> BenchConfig {
        BenchConfig {
            sizes: vec![self.size],
            iterations: self.iterations,
            warmup: self.warmup,
            messages: self.messages,
            window: self.window,
            reliability: self.reliability,
            pin: self.pin,
            ..BenchConfig::default()
        }
    }
}

/// The model.
pub struct ViaBench;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

impl Model for ViaBench {
    const NAME: &'static str = "via-bench";
    const DOC: &'static icn_engine::ModelDoc = &doc::DOC;
    const ABOUT: &'static str = "VIA pingpong/window measured over icn-via (shm, tcp) and raw TCP/Unix sockets on this machine";
    type Config = ViaBenchConfig;
    /// Nothing to parse ahead of the runs: the prepared point is the validated config.
    type Prepared = ViaBenchConfig;

    fn validate(c: &ViaBenchConfig) -> Result<(), Invalid> {
        let raw = matches!(c.transport, Transport::RawTcp | Transport::RawUnix);
        let min = usize::from(raw);
        Invalid::check(
            (min..=MAX_TRANSFER_SIZE as usize).contains(&c.size),
            "size",
            if raw {
                "1..=1073741824 for raw baselines"
            } else {
                "0..=1073741824"
            },
            c.size,
        )?;
        Invalid::check(
            (1..=10_000_000).contains(&c.iterations),
            "iterations",
            "1..=10000000",
            c.iterations,
        )?;
        Invalid::check(c.warmup <= 1_000_000, "warmup", "0..=1000000", c.warmup)?;
        Invalid::check(
            (1..=10_000_000).contains(&c.messages),
            "messages",
            "1..=10000000",
            c.messages,
        )?;
        Invalid::check((1..=512).contains(&c.window), "window", "1..=512", c.window)?;
        Ok(())
    }

    fn work(c: &ViaBenchConfig) -> u64 {
        match c.program {
            Kind::Pingpong => (c.iterations + c.warmup) as u64,
            Kind::Window => c.messages as u64,
        }
    }

    fn prepare(
        cfg: &ViaBenchConfig,
        _ctx: &icn_engine::Context,
    ) -> Result<ViaBenchConfig, Invalid> {
        Self::validate(cfg)?;
        Ok(cfg.clone())
    }

    fn run_prepared(
        c: &ViaBenchConfig,
        _seed: u64,
        progress: &dyn Progress,
    ) -> Result<Metrics, ModelError> {
        let _only_us = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let cfg = c.bench();
        let rows = match c.transport {
            Transport::Shm => run_local("shm", c.program, &cfg),
            Transport::Tcp => run_local("tcp", c.program, &cfg),
            Transport::RawTcp => run_raw(RawSocket::Tcp, c.program, &cfg),
            Transport::RawUnix => run_raw(RawSocket::Unix, c.program, &cfg),
        }
        .map_err(|e| ModelError::Failed(format!("benchmark failed: {e}")))?;
        progress.advance(Self::work(c));
        let value = rows.first().map_or(f64::NAN, |r| r.value);
        let mut m = Metrics::default();
        match c.program {
            Kind::Pingpong => m.put(&doc::LATENCY_US, value),
            Kind::Window => m.put(&doc::BANDWIDTH_MB_S, value),
        };
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_names_the_key_and_range() {
        let ok = ViaBenchConfig::default();
        assert!(ViaBench::validate(&ok).is_ok());
        let e = ViaBench::validate(&ViaBenchConfig {
            window: 0,
            ..ok.clone()
        })
        .unwrap_err();
        assert_eq!(e.key, "window");
        let e = ViaBench::validate(&ViaBenchConfig {
            transport: Transport::RawTcp,
            size: 0,
            ..ok.clone()
        })
        .unwrap_err();
        assert_eq!(e.key, "size");
        assert!(
            ViaBench::validate(&ViaBenchConfig {
                size: 0,
                ..ok.clone()
            })
            .is_ok()
        );
        assert!(
            ViaBench::validate(&ViaBenchConfig {
                size: (1 << 30) + 1,
                ..ok
            })
            .is_err()
        );
    }

    #[test]
    fn config_parses_from_toml_with_defaults_and_rejects_unknown_keys() {
        let c: ViaBenchConfig =
            toml::from_str("program = \"window\"\ntransport = \"raw_unix\"\nsize = 4096").unwrap();
        assert_eq!(
            (c.program, c.transport, c.size, c.window),
            (Kind::Window, Transport::RawUnix, 4096, 64)
        );
        assert!(toml::from_str::<ViaBenchConfig>("bogus = 1").is_err());
    }
}
