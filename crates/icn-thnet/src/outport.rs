//! The output port's 15-state scheduling machine (paper Fig. 5, §2.3).
//!
//! States: `Poll X` (idle, checking input X this cycle), `Tran X` (forwarding a frame from
//! input X), `Wait X` (that frame is suspended by `ID-STOP`; the link carries `ID-IDLE`),
//! for X in A..E: 3 × 5 = 15 states. One call to [`OutputFsm::step`] is one clock; the
//! returned [`OutAction`] says what the port puts in this cycle's slot.
//!
//! | state    | input this cycle                                 | next       | slot carries       |
//! |----------|--------------------------------------------------|------------|--------------------|
//! | any      | a flow-control char is pending for this channel  | unchanged  | `ID-STOP`/`ID-GO`  |
//! | Poll X   | input X holds a frame head routed to this output | Tran X     | `ID-IDLE` (X's routing char is stripped) |
//! | Poll X   | otherwise                                        | Poll X+1   | `ID-IDLE`          |
//! | Tran X   | downstream has said STOP                         | Wait X     | `ID-IDLE`          |
//! | Tran X   | input X's FIFO is empty (bubble)                 | Tran X     | `ID-IDLE`          |
//! | Tran X   | input X's next symbol is `ID-EOF`                | Poll X+1   | `ID-EOF`           |
//! | Tran X   | input X's next symbol is anything else           | Tran X     | that symbol        |
//! | Wait X   | downstream still stopped                         | Wait X     | `ID-IDLE`          |
//! | Wait X   | `ID-GO` has arrived                              | as Tran X  | as Tran X          |
//!
//! Choices the paper leaves open, made explicit: polling checks one input per cycle (one
//! state per input, as Fig. 5 draws it); after a frame's EOF polling resumes at the input
//! after the one served (circulating priority, which yields A0 B0 C0 A1 …); a GO resumes
//! transmission in the slot it arrives in; the first flow-control row is the paper's
//! "flow-control commands have the highest priority" — the data waits one slot.

use crate::symbol::{PORTS, Port};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum OutState {
    Poll(Port),
    Tran(Port),
    Wait(Port),
}

/// What the bound input's FIFO offers this cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Head {
    Empty,
    Eof,
    /// A data symbol or a routing character for a later switch.
    Other,
}

/// Everything the machine looks at in one clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutView {
    /// A flow-control character waits for this channel's next slot.
    pub flow_control_pending: bool,
    /// In `Poll X`: input X holds a frame head routed to this output (and is not bound).
    pub polled_requests: bool,
    /// The downstream receiver's last flow-control character was `ID-STOP`.
    pub stopped: bool,
    /// In `Tran X` / `Wait X`: input X's FIFO front.
    pub head: Head,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutAction {
    /// Send the pending flow-control character.
    FlowControl,
    /// Send `ID-IDLE`.
    Idle,
    /// Bind input X and drop its routing character; the slot carries `ID-IDLE`.
    Grant(Port),
    /// Pop input X's front symbol and send it.
    Forward(Port),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OutputFsm {
    pub state: OutState,
}

impl Default for OutputFsm {
    fn default() -> Self {
        OutputFsm {
            state: OutState::Poll(0),
        }
    }
}

const fn next(p: Port) -> Port {
    if p as usize + 1 == PORTS { 0 } else { p + 1 }
}

impl OutputFsm {
    /// The input being polled, if idle.
    pub fn polled(&self) -> Option<Port> {
        match self.state {
            OutState::Poll(p) => Some(p),
            _ => None,
        }
    }

    /// The input bound to this output (in `Tran` or `Wait`).
    pub fn bound(&self) -> Option<Port> {
        match self.state {
            OutState::Tran(p) | OutState::Wait(p) => Some(p),
            OutState::Poll(_) => None,
        }
    }

    /// One clock of the machine (see the module table).
    pub fn step(&mut self, v: OutView) -> OutAction {
        if v.flow_control_pending {
            return OutAction::FlowControl;
        }
        match self.state {
            OutState::Poll(p) if v.polled_requests => {
                self.state = OutState::Tran(p);
                OutAction::Grant(p)
            }
            OutState::Poll(p) => {
                self.state = OutState::Poll(next(p));
                OutAction::Idle
            }
            OutState::Tran(p) | OutState::Wait(p) if v.stopped => {
                self.state = OutState::Wait(p);
                OutAction::Idle
            }
            OutState::Tran(p) | OutState::Wait(p) => match v.head {
                Head::Empty => {
                    self.state = OutState::Tran(p);
                    OutAction::Idle
                }
                Head::Eof => {
                    self.state = OutState::Poll(next(p));
                    OutAction::Forward(p)
                }
                Head::Other => {
                    self.state = OutState::Tran(p);
                    OutAction::Forward(p)
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OutAction::*;
    use OutState::*;

    fn view(fc: bool, req: bool, stopped: bool, head: Head) -> OutView {
        OutView {
            flow_control_pending: fc,
            polled_requests: req,
            stopped,
            head,
        }
    }

    fn step(from: OutState, v: OutView) -> (OutState, OutAction) {
        let mut m = OutputFsm { state: from };
        let a = m.step(v);
        (m.state, a)
    }

    fn all_states() -> Vec<OutState> {
        (0..5u8).flat_map(|p| [Poll(p), Tran(p), Wait(p)]).collect()
    }

    #[test]
    fn there_are_fifteen_states() {
        let mut s = all_states();
        s.dedup();
        assert_eq!(s.len(), 15);
    }

    #[test]
    fn row_flow_control_preempts_every_state() {
        for s in all_states() {
            for head in [Head::Empty, Head::Eof, Head::Other] {
                assert_eq!(step(s, view(true, true, false, head)), (s, FlowControl));
            }
        }
    }

    #[test]
    fn rows_poll() {
        for p in 0..5u8 {
            let q = (p + 1) % 5;
            assert_eq!(
                step(Poll(p), view(false, true, false, Head::Empty)),
                (Tran(p), Grant(p))
            );
            // Stopped downstream does not prevent binding (the route char is internal).
            assert_eq!(
                step(Poll(p), view(false, true, true, Head::Empty)),
                (Tran(p), Grant(p))
            );
            assert_eq!(
                step(Poll(p), view(false, false, false, Head::Other)),
                (Poll(q), Idle)
            );
        }
        assert_eq!(
            step(Poll(4), view(false, false, false, Head::Empty)).0,
            Poll(0)
        );
    }

    #[test]
    fn rows_tran() {
        for p in 0..5u8 {
            let q = (p + 1) % 5;
            assert_eq!(
                step(Tran(p), view(false, false, true, Head::Other)),
                (Wait(p), Idle)
            );
            assert_eq!(
                step(Tran(p), view(false, false, false, Head::Empty)),
                (Tran(p), Idle)
            );
            assert_eq!(
                step(Tran(p), view(false, false, false, Head::Eof)),
                (Poll(q), Forward(p))
            );
            assert_eq!(
                step(Tran(p), view(false, false, false, Head::Other)),
                (Tran(p), Forward(p))
            );
            // A request seen while transmitting is irrelevant: the frame holds the output.
            assert_eq!(
                step(Tran(p), view(false, true, false, Head::Other)),
                (Tran(p), Forward(p))
            );
        }
    }

    #[test]
    fn rows_wait() {
        for p in 0..5u8 {
            let q = (p + 1) % 5;
            for head in [Head::Empty, Head::Eof, Head::Other] {
                assert_eq!(
                    step(Wait(p), view(false, false, true, head)),
                    (Wait(p), Idle)
                );
            }
            assert_eq!(
                step(Wait(p), view(false, false, false, Head::Other)),
                (Tran(p), Forward(p))
            );
            assert_eq!(
                step(Wait(p), view(false, false, false, Head::Eof)),
                (Poll(q), Forward(p))
            );
            assert_eq!(
                step(Wait(p), view(false, false, false, Head::Empty)),
                (Tran(p), Idle)
            );
        }
    }

    /// Inputs A, B, C each hold frames of two symbols + EOF for this output (D): the machine
    /// serves them round-robin one frame each, polling D and E in between.
    #[test]
    fn circulating_priority_interleaves_frames() {
        let mut m = OutputFsm::default();
        let mut left = [2u8, 2, 2, 0, 0]; // frames waiting per input
        let mut in_frame = [0u8; 5]; // symbols of the current frame already sent
        let mut served = Vec::new();
        for _ in 0..200 {
            let polled_requests = m.polled().is_some_and(|p| left[p as usize] > 0);
            let head = match m.bound() {
                Some(p) if in_frame[p as usize] == 2 => Head::Eof,
                Some(_) => Head::Other,
                None => Head::Empty,
            };
            match m.step(view(false, polled_requests, false, head)) {
                Grant(p) => served.push(p),
                Forward(p) => {
                    let i = p as usize;
                    in_frame[i] += 1;
                    if in_frame[i] == 3 {
                        in_frame[i] = 0;
                        left[i] -= 1;
                    }
                }
                _ => {}
            }
        }
        assert_eq!(served, vec![0, 1, 2, 0, 1, 2]);
    }
}
