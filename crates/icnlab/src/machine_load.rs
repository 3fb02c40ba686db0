//! How busy the machine is, from `/proc/loadavg`: the 1-minute load average and the number
//! of runnable tasks now. Wall-clock measurements (`icnlab via run`) are only meaningful
//! when the machine is not busier than its cores; this says when it is.

/// One reading.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Load {
    /// 1-, 5- and 15-minute load averages.
    pub avg1: f64,
    pub avg5: f64,
    pub avg15: f64,
    /// Tasks runnable at the moment of reading (including the reader).
    pub runnable: u32,
}

impl Load {
    /// Parses `/proc/loadavg` (`0.52 0.58 0.59 3/1064 12345`).
    pub fn parse(text: &str) -> Option<Load> {
        let mut f = text.split_whitespace();
        let avg1 = f.next()?.parse().ok()?;
        let avg5 = f.next()?.parse().ok()?;
        let avg15 = f.next()?.parse().ok()?;
        let runnable = f.next()?.split_once('/')?.0.parse().ok()?;
        Some(Load {
            avg1,
            avg5,
            avg15,
            runnable,
        })
    }

    /// Reads it now (`None` where there is no `/proc/loadavg`).
    pub fn now() -> Option<Load> {
        Load::parse(&std::fs::read_to_string("/proc/loadavg").ok()?)
    }

    /// Busier than `cores`: a load average above the cores, or more runnable tasks than
    /// cores counting the reader (read before a run starts and after it ends, so the
    /// others alone fill every core: a busy loop per core is enough).
    pub fn busier_than(&self, cores: usize) -> bool {
        self.avg1 > cores as f64 || self.runnable as usize > cores
    }
}

impl std::fmt::Display for Load {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "load {:.2}, {} runnable", self.avg1, self.runnable)
    }
}

/// Median, minimum and maximum of `xs` (non-empty), the median of an even count being the
/// mean of the middle two.
pub fn median_min_max(xs: &[f64]) -> (f64, f64, f64) {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let med = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (med, v[0], v[n - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loadavg_lines_parse_or_are_refused() {
        assert_eq!(
            Load::parse("0.52 0.58 0.59 3/1064 12345\n"),
            Some(Load {
                avg1: 0.52,
                avg5: 0.58,
                avg15: 0.59,
                runnable: 3
            })
        );
        assert_eq!(Load::parse(""), None);
        assert_eq!(Load::parse("x 0.5 0.5 3/10 1"), None);
        assert_eq!(Load::parse("0.5 0.5 0.5 310 1"), None);
    }

    #[test]
    fn busier_than_its_cores_by_load_or_by_runnable_tasks() {
        let l = |avg1, runnable| Load {
            avg1,
            avg5: 0.0,
            avg15: 0.0,
            runnable,
        };
        assert!(!l(1.9, 2).busier_than(2)); // the reader and one other
        assert!(l(1.9, 3).busier_than(2)); // the reader and a busy loop per core
        assert!(l(2.1, 1).busier_than(2));
        assert!(!l(2.0, 0).busier_than(2));
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median_min_max(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(median_min_max(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
        assert_eq!(median_min_max(&[7.0]), (7.0, 7.0, 7.0));
    }
}
