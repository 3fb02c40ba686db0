//! BookSim2 configuration import (issue 24): a BookSim2 config file — `key = value;` lines,
//! `//` comments, command-line `key=value` overrides — becomes an icnlab `vc-router`
//! experiment file with the same network, routing function (BookSim2's semantics, by its
//! name: `dim_order`, `nca_fattree`, `min_dragonflynew`, …), router, traffic and windows.
//!
//! Every key of the file is either translated, accepted because its value is what icnlab
//! does anyway (`router = iq`, `alloc_iters = 1`, `priority = none`, …), or refused by name
//! with the line it is on: a refused key is a BookSim2 feature icnlab does not model, and
//! running without it would silently simulate something else. See [`translate`] for the
//! table.
//!
//! [`parse`] is the syntax (one job), [`translate`] the meaning.

mod parse;
mod translate;

pub use parse::{Entry, Value, parse};
pub use translate::{STATISTICS, translate};

/// Why a BookSim2 configuration cannot be imported; `at` is `FILE:LINE` (or
/// `command line` for an override).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("{at}: {message}")]
    Syntax { at: String, message: String },
    #[error("{at}: key `{key}`: {message}")]
    Key {
        at: String,
        key: String,
        message: String,
    },
}
