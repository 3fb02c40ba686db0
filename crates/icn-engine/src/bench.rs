//! A speed workload a model crate exports for `icnlab bench`: each crate lists its own
//! targets (`<crate>::bench::targets()`), so a new model's benchmark is added where the model
//! is, and the CLI only times them.

/// A benchmark workload: runs once and returns the units of work it did.
pub struct Target {
    /// The name `icnlab bench NAME` selects (`NAME-` prefixes select a family).
    pub name: &'static str,
    /// The fixed workload, in one line.
    pub workload: &'static str,
    /// The unit of work, counted by `run` (rates are per second of it).
    pub unit: &'static str,
    pub run: fn() -> Result<f64, String>,
}
