//! Send delays of one measurement window, kept as samples and summarised once at the end.
//!
//! A dense histogram (`icn_engine::stats::Histogram`) needs memory proportional to the
//! largest delay; on a saturated 64-node ring delays reach millions of cycles and one
//! histogram per source would need gigabytes. Samples need memory proportional to the sends
//! completed, which the window bounds. Quantiles use the same nearest-rank definition as the
//! engine's histogram.

/// Mean, median, 99th percentile and maximum of a set of delays (cycles); NaN when empty.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelaySummary {
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// Delay samples in cycles.
#[derive(Clone, Debug, Default)]
pub struct Delays {
    samples: Vec<u64>,
}

impl Delays {
    pub fn add(&mut self, cycles: u64) {
        self.samples.push(cycles);
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Summary of the union of several sample sets.
    pub fn summarise<'a>(sets: impl IntoIterator<Item = &'a Delays>) -> DelaySummary {
        let mut all: Vec<u64> = sets
            .into_iter()
            .flat_map(|d| d.samples.iter().copied())
            .collect();
        if all.is_empty() {
            return DelaySummary {
                mean: f64::NAN,
                p50: f64::NAN,
                p99: f64::NAN,
                max: f64::NAN,
            };
        }
        all.sort_unstable();
        let n = all.len();
        // Nearest rank: the smallest sample with at least a fraction q of samples ≤ it.
        let quantile = |q: f64| all[((q * n as f64).ceil() as usize).clamp(1, n) - 1] as f64;
        DelaySummary {
            mean: all.iter().map(|&d| d as u128).sum::<u128>() as f64 / n as f64,
            p50: quantile(0.5),
            p99: quantile(0.99),
            max: all[n - 1] as f64,
        }
    }

    pub fn summary(&self) -> DelaySummary {
        Delays::summarise([self])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icn_engine::stats::Histogram;
    use proptest::prelude::*;

    #[test]
    fn by_hand() {
        let mut d = Delays::default();
        assert!(d.summary().mean.is_nan());
        for v in [5, 1, 3, 2, 4, 100] {
            d.add(v);
        }
        let s = d.summary();
        assert_eq!((s.p50, s.p99, s.max), (3.0, 100.0, 100.0));
        assert!((s.mean - 115.0 / 6.0).abs() < 1e-12);
    }

    proptest! {
        /// Same answers as the engine's exact histogram.
        #[test]
        fn agrees_with_the_engine_histogram(xs in proptest::collection::vec(0u64..5_000, 1..300), split in 0usize..300) {
            let (mut a, mut b, mut h) = (Delays::default(), Delays::default(), Histogram::default());
            for (i, &x) in xs.iter().enumerate() {
                if i < split { a.add(x) } else { b.add(x) }
                h.add(x);
            }
            let s = Delays::summarise([&a, &b]);
            prop_assert_eq!(s.p50, h.quantile(0.5));
            prop_assert_eq!(s.p99, h.quantile(0.99));
            prop_assert_eq!(s.max, h.max());
            prop_assert!((s.mean - h.mean()).abs() <= 1e-9 * h.mean().max(1.0));
        }
    }
}
