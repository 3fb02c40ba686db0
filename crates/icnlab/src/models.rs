//! The registry of models the CLI can run, by the name used in `model = "..."`.

use crate::exec::{ModelRunner, Runner};
use crate::mm1::Mm1;

static MM1: ModelRunner<Mm1> = ModelRunner::new();
static VIA: ModelRunner<icn_via::model::ViaBench> = ModelRunner::new();

/// Every model, in the order `icnlab models` lists them.
pub fn all() -> [&'static dyn Runner; 2] {
    [&MM1, &VIA]
}

pub fn find(name: &str) -> Option<&'static dyn Runner> {
    all().into_iter().find(|r| r.name() == name)
}

/// "sci, thnet, ..." for error messages.
pub fn names() -> String {
    all()
        .iter()
        .map(|r| format!("\"{}\"", r.name()))
        .collect::<Vec<_>>()
        .join(", ")
}
