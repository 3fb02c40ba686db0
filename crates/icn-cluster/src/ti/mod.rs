//! SimGrid time-independent (TI) traces: the actions ([`action`]), their datatypes
//! ([`datatype`]), finding and streaming a trace's files with a pre-scan that checks every
//! line before the run ([`reader`]), and the replay over any fabric ([`replay`]).
pub mod action;
pub mod datatype;
pub mod reader;
pub mod replay;
