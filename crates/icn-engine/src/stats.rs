//! Statistics shared by all models: online moments, exact percentiles, Student-t confidence
//! intervals over independent replications, and Jain's fairness index.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Running mean / variance / extremes (Welford), O(1) memory.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub mean: f64,
    m2: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    pub fn add(&mut self, x: f64) {
        if self.count == 0 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.count += 1;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// Sample variance (n − 1 denominator); 0 for fewer than two samples.
    pub fn variance(&self) -> f64 {
        if self.count < 2 {
            0.0
        } else {
            self.m2 / (self.count - 1) as f64
        }
    }
}

/// Exact percentiles of integer samples (cycles, steps), kept as a histogram so that memory is
/// bounded by the range of values rather than the number of samples.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    sum: u128,
}

impl Histogram {
    pub fn add(&mut self, value: u64) {
        let i = usize::try_from(value).expect("histogram value fits in memory index");
        if i >= self.counts.len() {
            self.counts.resize((i + 1).next_power_of_two(), 0);
        }
        self.counts[i] += 1;
        self.total += 1;
        self.sum += u128::from(value);
    }

    pub fn merge(&mut self, other: &Histogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.sum += other.sum;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    /// The smallest value v such that at least a fraction `q` of samples are ≤ v
    /// (the "nearest rank" definition); NaN when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (v, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return v as f64;
            }
        }
        unreachable!("rank ≤ total")
    }

    pub fn max(&self) -> f64 {
        self.counts
            .iter()
            .rposition(|&c| c > 0)
            .map_or(f64::NAN, |v| v as f64)
    }
}

/// Mean and half-width of the two-sided 95 % Student-t confidence interval of independent
/// samples (replications). The half-width is `None` for fewer than two samples, and NaN
/// samples are skipped (a metric undefined in some replication, e.g. a delay with no packet).
pub fn mean_ci95(samples: &[f64]) -> (f64, Option<f64>) {
    let mut s = Summary::default();
    samples
        .iter()
        .copied()
        .filter(|x| !x.is_nan())
        .for_each(|x| s.add(x));
    if s.count == 0 {
        return (f64::NAN, None);
    }
    if s.count < 2 {
        return (s.mean, None);
    }
    let dof = (s.count - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, dof)
        .expect("dof > 0")
        .inverse_cdf(0.975);
    (s.mean, Some(t * (s.variance() / s.count as f64).sqrt()))
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes everything.
/// Returns NaN for an empty or all-zero input.
pub fn jain_fairness(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        f64::NAN
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn jain_extremes() {
        assert_eq!(jain_fairness(&[3.0, 3.0, 3.0, 3.0]), 1.0);
        assert_eq!(jain_fairness(&[1.0, 0.0, 0.0, 0.0]), 0.25);
        assert!(jain_fairness(&[]).is_nan());
    }

    #[test]
    fn ci_of_known_samples() {
        // Samples 1..=5: mean 3, s = sqrt(2.5), t(0.975, 4) = 2.776445.
        let (m, h) = mean_ci95(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(m, 3.0);
        let expected = 2.776_445 * (2.5f64 / 5.0).sqrt();
        assert!((h.unwrap() - expected).abs() < 1e-5, "{h:?} vs {expected}");
        assert_eq!(mean_ci95(&[4.0]), (4.0, None));
        assert_eq!(mean_ci95(&[f64::NAN, 4.0]), (4.0, None));
    }

    #[test]
    fn histogram_quantiles_by_hand() {
        let mut h = Histogram::default();
        for v in [5, 1, 3, 2, 4, 100] {
            h.add(v);
        }
        assert_eq!(h.quantile(0.5), 3.0);
        assert_eq!(h.quantile(0.99), 100.0);
        assert_eq!(h.quantile(0.0), 1.0);
        assert_eq!(h.max(), 100.0);
        assert!((h.mean() - 115.0 / 6.0).abs() < 1e-12);
    }

    proptest! {
        #[test]
        fn summary_matches_two_pass(xs in proptest::collection::vec(-1e6f64..1e6, 1..200)) {
            let mut s = Summary::default();
            xs.iter().for_each(|&x| s.add(x));
            let mean = xs.iter().sum::<f64>() / xs.len() as f64;
            prop_assert!((s.mean - mean).abs() <= 1e-6 * (1.0 + mean.abs()));
            prop_assert_eq!(s.min, xs.iter().copied().fold(f64::INFINITY, f64::min));
            prop_assert_eq!(s.max, xs.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        }

        #[test]
        fn histogram_quantile_is_a_sample_with_enough_mass_below(
            xs in proptest::collection::vec(0u64..500, 1..300), q in 0.0f64..1.0
        ) {
            let mut h = Histogram::default();
            xs.iter().for_each(|&x| h.add(x));
            let v = h.quantile(q) as u64;
            prop_assert!(xs.contains(&v));
            let below = xs.iter().filter(|&&x| x <= v).count() as f64;
            prop_assert!(below >= q * xs.len() as f64);
            let strictly_below = xs.iter().filter(|&&x| x < v).count() as f64;
            prop_assert!(strictly_below < (q * xs.len() as f64).max(1.0));
        }
    }
}
