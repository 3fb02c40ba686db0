//! Ring.
