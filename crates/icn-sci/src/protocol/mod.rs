//! Sans-IO protocol cores: plain state machines with no clock or queue of the simulator inside,
//! each unit-tested against the tables of spec/sci.md.

pub mod intelligent;
pub mod packet;
pub mod receiver;
pub mod sender;
pub mod symbol;

pub use intelligent::{NotifyBuffer, Sst, allowed};
pub use receiver::{Decision, GenerationEnd, Policy, Receiver};
pub use sender::{ActiveBuffers, ActiveSend, EchoOutcome, SenderError, SlotState};
pub use symbol::{Echo, Phase, ServeState, StateChange, Symbol};
