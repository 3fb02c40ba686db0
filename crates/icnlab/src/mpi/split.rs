//! Which replications each rank runs.
//!
//! Job j of the one-process order (point-major: every replication of point 0, then of point 1,
//! ...) runs on rank j mod n. Why round robin over replications rather than blocks of points:
//! the points of a load sweep differ in cost by orders of magnitude (the saturated ones run
//! longest, and they sit together at one end of the axis), and `run` has a single point whose
//! replications are all the work there is. Results do not depend on the split: a job's metrics
//! are a pure function of its point's config and its replication's seed.

use crate::exec::Job;

/// The jobs of `all` that `rank` of `size` runs, in the order of `all`.
pub fn share(all: &[Job], rank: usize, size: usize) -> Vec<Job> {
    all.iter()
        .skip(rank)
        .step_by(size.max(1))
        .copied()
        .collect()
}

/// Every rank's share, in rank order, concatenated: the jobs whose metrics the ranks send
/// (rank 0's first), so that [`crate::exec::Runner::assemble`] can put them back in place.
pub fn shares_in_rank_order(all: &[Job], size: usize) -> Vec<Job> {
    (0..size).flat_map(|r| share(all, r, size)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::all_jobs;
    use proptest::prelude::*;

    /// 3 points × 2 replications on 4 ranks, by hand: jobs 0..6 are
    /// (0,0) (0,1) (1,0) (1,1) (2,0) (2,1); rank r takes jobs r and r + 4.
    #[test]
    fn round_robin_over_replications() {
        let all = all_jobs(3, 2);
        assert_eq!(share(&all, 0, 4), vec![(0, 0), (2, 0)]);
        assert_eq!(share(&all, 1, 4), vec![(0, 1), (2, 1)]);
        assert_eq!(share(&all, 2, 4), vec![(1, 0)]);
        assert_eq!(share(&all, 3, 4), vec![(1, 1)]);
    }

    /// `run` (one point) with 5 replications on 2 ranks: both ranks work.
    #[test]
    fn one_point_is_split_by_replication() {
        let all = all_jobs(1, 5);
        assert_eq!(share(&all, 0, 2), vec![(0, 0), (0, 2), (0, 4)]);
        assert_eq!(share(&all, 1, 2), vec![(0, 1), (0, 3)]);
    }

    proptest! {
        /// Exactly once: the shares partition the jobs, and differ in size by at most one.
        #[test]
        fn shares_partition_the_jobs(points in 0usize..40, reps in 1u32..6, size in 1usize..9) {
            let all = all_jobs(points, reps);
            let mut joined = shares_in_rank_order(&all, size);
            prop_assert_eq!(joined.len(), all.len());
            joined.sort_unstable();
            prop_assert_eq!(&joined, &all);
            let lens: Vec<usize> = (0..size).map(|r| share(&all, r, size).len()).collect();
            let (lo, hi) = (lens.iter().min().unwrap(), lens.iter().max().unwrap());
            prop_assert!(hi - lo <= 1, "{lens:?}");
        }
    }
}
