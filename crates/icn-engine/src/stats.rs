//! Statistics shared by all models: online moments, bounded-memory percentiles, Student-t confidence
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

/// Samples a [`Histogram`] keeps exactly; past this many it keeps an HDR histogram instead
/// (512 KiB of samples, about the size the HDR histogram reaches for values up to 2^62).
pub const EXACT_SAMPLES: u64 = 1 << 16;

/// Significant decimal digits of the HDR histogram: 3 gives 2048 sub-buckets per power of two,
/// so every value below 2048 is exact and every larger one is within [`RELATIVE_ERROR`].
const SIGFIG: u8 = 3;

/// The largest relative error of [`Histogram::quantile`] once it holds more than
/// [`EXACT_SAMPLES`] samples: 2^-10 (< 0.1 %). Mean, count and max stay exact.
pub const RELATIVE_ERROR: f64 = 1.0 / 1024.0;

/// The largest value the HDR histogram tracks (its auto-resize limit, 2^62); larger samples
/// are counted at this value for the quantiles strictly between min and max, while min, max
/// and mean still see them exactly.
const HDR_LIMIT: u64 = (i64::MAX / 2) as u64;

/// Percentiles of integer samples (cycles, ns, steps) in memory bounded by a fixed size, never
/// by the values: the samples themselves while there are at most [`EXACT_SAMPLES`] (quantiles
/// exact), then an HDR histogram (quantiles within [`RELATIVE_ERROR`], values below 2048
/// exact, ~0.5 MiB at most). A dense value-indexed array would need memory proportional to the
/// largest value — terabytes for a finish time of 10^12 ns.
///
/// Which form is used depends only on the number of samples, so the results depend only on
/// the multiset of samples, never on the order of `add` and `merge` (determinism across
/// thread counts).
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    store: Store,
    total: u64,
    sum: u128,
    max: u64,
    min: u64,
}

#[derive(Clone, Debug)]
enum Store {
    Exact(Vec<u64>),
    Hdr(Box<hdrhistogram::Histogram<u64>>),
}

impl Default for Store {
    fn default() -> Self {
        Store::Exact(Vec::new())
    }
}

impl Store {
    fn hdr_of(samples: &[u64]) -> Box<hdrhistogram::Histogram<u64>> {
        let mut h = Box::new(
            hdrhistogram::Histogram::<u64>::new(SIGFIG).expect("3 significant digits are valid"),
        );
        samples.iter().for_each(|&v| Store::record(&mut h, v));
        h
    }

    fn record(h: &mut hdrhistogram::Histogram<u64>, v: u64) {
        h.record(v.min(HDR_LIMIT))
            .expect("auto-resizing histogram records values up to its limit");
    }

    /// Turns the exact samples into an HDR histogram (once the count passes the limit).
    fn make_hdr(&mut self) -> &mut hdrhistogram::Histogram<u64> {
        if let Store::Exact(samples) = self {
            *self = Store::Hdr(Store::hdr_of(samples));
        }
        match self {
            Store::Hdr(h) => h,
            Store::Exact(_) => unreachable!("converted above"),
        }
    }
}

impl Histogram {
    pub fn add(&mut self, value: u64) {
        self.min = if self.total == 0 {
            value
        } else {
            self.min.min(value)
        };
        self.max = self.max.max(value);
        self.total += 1;
        self.sum += u128::from(value);
        if self.total > EXACT_SAMPLES {
            Store::record(self.store.make_hdr(), value);
        } else if let Store::Exact(samples) = &mut self.store {
            samples.push(value);
        }
    }

    pub fn merge(&mut self, other: &Histogram) {
        if other.total == 0 {
            return;
        }
        self.min = if self.total == 0 {
            other.min
        } else {
            self.min.min(other.min)
        };
        self.max = self.max.max(other.max);
        self.total += other.total;
        self.sum += other.sum;
        let exact = self.total <= EXACT_SAMPLES;
        match (&mut self.store, &other.store) {
            (Store::Exact(a), Store::Exact(b)) if exact => a.extend_from_slice(b),
            (store, other) => {
                let h = store.make_hdr();
                match other {
                    Store::Exact(b) => b.iter().for_each(|&v| Store::record(h, v)),
                    Store::Hdr(b) => h
                        .add(b.as_ref())
                        .expect("auto-resizing histograms of the same precision add"),
                }
            }
        }
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// Exact mean of all samples; NaN when empty.
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    /// The smallest value v such that at least a fraction `q` of samples are ≤ v
    /// (the "nearest rank" definition); NaN when empty. Exact up to [`EXACT_SAMPLES`]
    /// samples, within [`RELATIVE_ERROR`] of it beyond (and always within [min, max]).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let q = q.clamp(0.0, 1.0);
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let v = match &self.store {
            _ if rank == 1 => self.min,
            _ if rank == self.total => self.max,
            Store::Exact(samples) => {
                let mut sorted = samples.clone();
                let (_, v, _) = sorted.select_nth_unstable((rank - 1) as usize);
                *v
            }
            Store::Hdr(h) => h.value_at_quantile(q).clamp(self.min, self.max),
        };
        v as f64
    }

    /// Exact largest sample; NaN when empty.
    pub fn max(&self) -> f64 {
        if self.total == 0 {
            f64::NAN
        } else {
            self.max as f64
        }
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

    /// Nearest-rank quantile of a sorted slice, the definition `Histogram::quantile` follows.
    fn nearest_rank(sorted: &[u64], q: f64) -> u64 {
        let n = sorted.len();
        sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1]
    }

    #[test]
    fn histogram_memory_is_not_sized_by_values() {
        // A dense value-indexed histogram allocated 8 bytes per value up to the largest:
        // 8 TB for one finish time of 10^12 ns, and u64::MAX could not even be indexed.
        let mut h = Histogram::default();
        h.add(1_000_000_000_000);
        h.add(1);
        assert_eq!(h.quantile(1.0), 1e12);
        assert_eq!(h.quantile(0.5), 1.0);
        h.add(u64::MAX);
        assert_eq!(h.max(), u64::MAX as f64);
        assert_eq!(h.quantile(0.99), u64::MAX as f64);
        // Past the exact limit the HDR form takes the same huge values.
        let mut big = Histogram::default();
        for i in 0..=EXACT_SAMPLES {
            big.add(i * 1_000_000_007);
        }
        big.add(u64::MAX);
        assert_eq!(big.max(), u64::MAX as f64);
        assert_eq!(big.quantile(1.0), u64::MAX as f64);
        assert_eq!(big.quantile(0.0), 0.0);
    }

    #[test]
    fn histogram_past_the_exact_limit_is_within_the_stated_error() {
        // 3 × EXACT_SAMPLES samples spread over 12 decades (a seeded LCG, log-uniform).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut xs = Vec::new();
        let mut h = Histogram::default();
        for _ in 0..3 * EXACT_SAMPLES {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let v = 10f64.powf((x >> 11) as f64 / (1u64 << 53) as f64 * 12.0) as u64;
            xs.push(v);
            h.add(v);
        }
        xs.sort_unstable();
        for q in [0.0, 0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
            let exact = nearest_rank(&xs, q) as f64;
            let got = h.quantile(q);
            assert!(
                (got - exact).abs() <= RELATIVE_ERROR * exact,
                "q {q}: {got} vs exact {exact}"
            );
        }
        assert_eq!(h.max(), *xs.last().unwrap() as f64);
        let mean = xs.iter().map(|&v| v as u128).sum::<u128>() as f64 / xs.len() as f64;
        assert_eq!(h.mean(), mean);
        // Values below 2048 are exact in the HDR form too.
        let mut small = Histogram::default();
        (0..2 * EXACT_SAMPLES).for_each(|i| small.add(i % 2048));
        assert_eq!(small.quantile(0.5), 1023.0);
        assert_eq!(small.quantile(0.99), 2027.0);
    }

    #[test]
    fn histogram_merge_order_does_not_matter_across_the_limit() {
        // Two halves of EXACT_SAMPLES + 10 samples: each exact, their union not.
        let xs: Vec<u64> = (0..EXACT_SAMPLES + 10)
            .map(|i| (i * 7919) % 1_000_003 * 1000)
            .collect();
        let (a, b) = xs.split_at(xs.len() / 3);
        let of = |s: &[u64]| {
            let mut h = Histogram::default();
            s.iter().for_each(|&v| h.add(v));
            h
        };
        let all = of(&xs);
        let (mut ab, mut ba) = (of(a), of(b));
        ab.merge(&of(b));
        ba.merge(&of(a));
        for q in [0.0, 0.25, 0.5, 0.99, 1.0] {
            assert_eq!(ab.quantile(q), all.quantile(q));
            assert_eq!(ba.quantile(q), all.quantile(q));
        }
        assert_eq!(
            (ab.count(), ab.max(), ab.mean()),
            (all.count(), all.max(), all.mean())
        );
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

        /// Merging in any split gives what adding every sample to one histogram gives.
        #[test]
        fn histogram_merge_equals_adding_all(
            xs in proptest::collection::vec(0u64..u64::MAX, 1..300), split in 0usize..300
        ) {
            let split = split.min(xs.len());
            let (mut a, mut b, mut all) = (Histogram::default(), Histogram::default(), Histogram::default());
            xs[..split].iter().for_each(|&x| a.add(x));
            xs[split..].iter().for_each(|&x| b.add(x));
            xs.iter().for_each(|&x| all.add(x));
            a.merge(&b);
            for q in [0.0, 0.5, 0.99, 1.0] {
                prop_assert_eq!(a.quantile(q), all.quantile(q));
            }
            prop_assert_eq!(a.count(), all.count());
            prop_assert_eq!(a.max(), all.max());
        }
    }
}
