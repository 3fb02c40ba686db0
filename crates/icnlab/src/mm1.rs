//! `model = "mm1"`: a single-server FIFO queue with Poisson arrivals and exponential service.
//!
//! It is the workbench's smallest model and its end-to-end check: queueing theory gives the
//! exact mean time in system, 1 / (μ − λ), so a user (and the test suite) can see that the
//! whole pipeline — config, replications, confidence intervals, sweeps, CSV, plots — reports
//! the right number with an honest interval before trusting it with a network model.

use icn_engine::doc::{Key, KeyGroup, ModelDoc, Output, key, output};
use icn_engine::rng::{Rng, stream};
use icn_engine::stats::Summary;
use icn_engine::{Invalid, Metrics, Model, ModelError, Progress};
use serde::{Deserialize, Serialize};

pub struct Mm1;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Mm1Config {
    /// Arrival rate λ (customers per time unit).
    pub arrival_rate: f64,
    /// Service rate μ (customers per time unit); stability needs λ < μ.
    pub service_rate: f64,
    /// Customers discarded at the start (warm-up).
    pub warmup: u64,
    /// Customers measured after warm-up.
    pub customers: u64,
}

impl Default for Mm1Config {
    fn default() -> Self {
        Mm1Config {
            arrival_rate: 0.5,
            service_rate: 1.0,
            warmup: 1_000,
            customers: 100_000,
        }
    }
}

/// Unit and meaning of every key of [`Mm1Config`] (defaults and ranges come from the config
/// and [`Mm1::validate`]).
const KEYS: &[Key] = &[
    key("arrival_rate", "1/time", "arrival rate λ"),
    key(
        "service_rate",
        "1/time",
        "service rate μ; stability needs λ < μ",
    ),
    key("warmup", "customers", "discarded at the start"),
    key("customers", "customers", "measured after the warm-up"),
];

const SOJOURN_MEAN: Output = output("sojourn_mean", "time", "mean time in system (simulated)");
const SOJOURN_EXACT: Output = output("sojourn_exact", "time", "1 / (μ − λ), queueing theory");
const UTILISATION: Output = output("utilisation", "", "ρ = λ / μ");

const DOC: ModelDoc = ModelDoc {
    keys: &[KeyGroup {
        prefix: "",
        keys: KEYS,
        when: "",
    }],
    optional: &[],
    outputs: &[&[SOJOURN_MEAN, SOJOURN_EXACT, UTILISATION]],
    suffixes: &[],
    tables: &[],
};

impl Model for Mm1 {
    const NAME: &'static str = "mm1";
    const DOC: &'static ModelDoc = &DOC;
    const ABOUT: &'static str = "M/M/1 queue with an exact answer: the pipeline's self-check";
    type Config = Mm1Config;
    /// Nothing to parse ahead of the runs: the prepared point is the validated config.
    type Prepared = Mm1Config;

    fn validate(cfg: &Mm1Config) -> Result<(), Invalid> {
        Invalid::check(
            cfg.service_rate > 0.0 && cfg.service_rate.is_finite(),
            "service_rate",
            "(0, ∞)",
            cfg.service_rate,
        )?;
        Invalid::check(
            cfg.arrival_rate > 0.0 && cfg.arrival_rate < cfg.service_rate,
            "arrival_rate",
            &format!("(0, service_rate = {})", cfg.service_rate),
            cfg.arrival_rate,
        )?;
        Invalid::check(
            (1..=1_000_000_000).contains(&cfg.customers),
            "customers",
            "1 ..= 10^9",
            cfg.customers,
        )?;
        // Like `customers`: 2^63 − 1 customers of warm-up would never finish.
        Invalid::check(
            cfg.warmup <= 1_000_000_000,
            "warmup",
            "0 ..= 10^9",
            cfg.warmup,
        )
    }

    fn work(cfg: &Mm1Config) -> u64 {
        cfg.warmup + cfg.customers
    }

    fn prepare(cfg: &Mm1Config, _ctx: &icn_engine::Context) -> Result<Mm1Config, Invalid> {
        Self::validate(cfg)?;
        Ok(cfg.clone())
    }

    fn run_prepared(
        cfg: &Mm1Config,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<Metrics, ModelError> {
        let mut arrivals = stream(seed, 0);
        let mut services = stream(seed, 1);
        let exp = |rng: &mut icn_engine::rng::SimRng, rate: f64| -> f64 {
            -(1.0 - rng.random::<f64>()).ln() / rate
        };
        // Lindley's recursion on the work the server has left when a customer arrives, not
        // on absolute clock times: at λ = 1e-300 the clock reaches 1e300, where adding a
        // service time of ~1 changes nothing and every sojourn came out as 0.
        let mut backlog = 0.0f64;
        let mut sojourn = Summary::default();
        for i in 0..cfg.warmup + cfg.customers {
            let gap = exp(&mut arrivals, cfg.arrival_rate);
            let time_in_system = (backlog - gap).max(0.0) + exp(&mut services, cfg.service_rate);
            backlog = time_in_system;
            if i >= cfg.warmup {
                sojourn.add(time_in_system);
            }
            if i % 65_536 == 65_535 {
                progress.advance(65_536);
            }
        }
        let mut m = Metrics::default();
        m.put(&SOJOURN_MEAN, sojourn.mean)
            .put(&SOJOURN_EXACT, 1.0 / (cfg.service_rate - cfg.arrival_rate))
            .put(&UTILISATION, cfg.arrival_rate / cfg.service_rate);
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_engine::model::NoProgress;

    #[test]
    fn mean_sojourn_matches_queueing_theory() {
        let cfg = Mm1Config {
            arrival_rate: 0.5,
            service_rate: 1.0,
            warmup: 1000,
            customers: 200_000,
        };
        let m = Mm1::run(&cfg, 3, &NoProgress).unwrap();
        let (sim, exact) = (
            m.require("sojourn_mean").unwrap(),
            m.require("sojourn_exact").unwrap(),
        );
        assert_eq!(exact, 2.0);
        assert!((sim - exact).abs() < 0.1, "simulated {sim}, exact {exact}");
        assert_eq!(DOC.undeclared(&m), Vec::<String>::new());
    }

    /// Issue 22: λ = 1e-300 (inside (0, μ)) reported a sojourn of 0 against the exact 1
    /// (absolute times of 1e300 swallowed every service time).
    #[test]
    fn a_tiny_arrival_rate_gives_the_exact_sojourn() {
        for arrival_rate in [1e-300, 5e-324, 1e-15] {
            let cfg = Mm1Config {
                arrival_rate,
                customers: 100_000,
                ..Mm1Config::default()
            };
            let m = Mm1::run(&cfg, 3, &NoProgress).unwrap();
            let (sim, exact) = (
                m.require("sojourn_mean").unwrap(),
                m.require("sojourn_exact").unwrap(),
            );
            assert!((exact - 1.0).abs() < 1e-12, "{exact}");
            assert!(
                (sim - exact).abs() < 0.02,
                "λ {arrival_rate}: simulated {sim}"
            );
        }
    }

    #[test]
    fn endless_warmup_is_rejected() {
        let cfg = Mm1Config {
            warmup: (1 << 63) - 1,
            ..Mm1Config::default()
        };
        assert_eq!(Mm1::validate(&cfg).unwrap_err().key, "warmup");
    }

    #[test]
    fn unstable_queue_is_rejected() {
        let cfg = Mm1Config {
            arrival_rate: 1.0,
            ..Mm1Config::default()
        };
        assert_eq!(Mm1::validate(&cfg).unwrap_err().key, "arrival_rate");
    }
}
