//! SCI ring model: A/B aging and intelligent A/B aging (spec/sci.md).

pub mod protocol;
