//! The cycle-level ring simulator that drives the protocol cores.

pub mod delays;
pub mod events;
pub mod measure;
pub mod sim;
pub mod trace;
pub mod traffic;
pub mod wire;

pub use events::Event;
pub use sim::Sim;
