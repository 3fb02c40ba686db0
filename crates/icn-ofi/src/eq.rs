//! Event queues (`fi_eq_open`): connection-management events, written by the threads that
//! connect and accept and by `fi_eq_write`, read by the application.

use std::collections::VecDeque;
use std::net::SocketAddrV4;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::ep::Pending;

/// One event. Addresses of C objects (`fid`, `context`) are kept as integers: the queue
/// only hands them back.
pub enum Event {
    /// `FI_CONNREQ` on a passive endpoint: a client at `peer` asks, with `data`; `pending`
    /// is the connection, taken by the `fi_endpoint` (or `fi_reject`) that names it.
    ConnReq {
        fid: usize,
        peer: SocketAddrV4,
        data: Vec<u8>,
        pending: Arc<Mutex<Option<Pending>>>,
    },
    /// `FI_CONNECTED` (with the server's accept data on the client).
    Connected { fid: usize, data: Vec<u8> },
    /// `FI_SHUTDOWN`: the connection ended.
    Shutdown { fid: usize },
    /// What `fi_eq_write` put there (an `fi_eq_entry`'s bytes).
    User { event: u32, bytes: Vec<u8> },
    /// An error event (`fi_eq_readerr`): a rejected or failed connection.
    Error {
        fid: usize,
        context: usize,
        err: i32,
        data: Vec<u8>,
    },
}

impl Event {
    pub fn is_error(&self) -> bool {
        matches!(self, Event::Error { .. })
    }
}

/// The queue. Unbounded only in the count of connections and `fi_eq_write`s, like any
/// libfabric EQ whose reader falls behind.
#[derive(Default)]
pub struct Eq {
    q: Mutex<VecDeque<Event>>,
    cv: Condvar,
}

impl Eq {
    pub fn push(&self, e: Event) {
        self.q
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(e);
        self.cv.notify_all();
    }

    /// Runs `f` on the first event, waiting up to `timeout` (`None`: for ever) for one;
    /// `f` says whether to remove it. `None` if none came in time.
    pub fn with_front<R>(
        &self,
        timeout: Option<Duration>,
        f: impl FnOnce(&mut Event) -> (R, bool),
    ) -> Option<R> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut q = self.q.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(front) = q.front_mut() {
                let (r, remove) = f(front);
                if remove {
                    q.pop_front();
                }
                return Some(r);
            }
            let left = match deadline {
                None => Duration::from_secs(3600),
                Some(d) => d.saturating_duration_since(Instant::now()),
            };
            if left.is_zero() {
                return None;
            }
            q = self
                .cv
                .wait_timeout(q, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Removes every event about `fid` (its endpoint is being closed: nothing may name it).
    pub fn forget(&self, fid: usize) {
        self.q
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|e| match e {
                Event::ConnReq { fid: f, .. }
                | Event::Connected { fid: f, .. }
                | Event::Shutdown { fid: f }
                | Event::Error { fid: f, .. } => *f != fid,
                Event::User { .. } => true,
            });
    }

    pub fn len(&self) -> usize {
        self.q.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_in_order_and_peek_leaves_them() {
        let eq = Eq::default();
        eq.push(Event::Shutdown { fid: 1 });
        eq.push(Event::User {
            event: 7,
            bytes: vec![1],
        });
        let peeked = eq.with_front(Some(Duration::ZERO), |e| {
            (matches!(e, Event::Shutdown { fid: 1 }), false)
        });
        assert_eq!(peeked, Some(true));
        assert_eq!(eq.len(), 2);
        assert_eq!(
            eq.with_front(None, |e| (matches!(e, Event::Shutdown { .. }), true)),
            Some(true)
        );
        assert_eq!(
            eq.with_front(None, |e| (matches!(e, Event::User { event: 7, .. }), true)),
            Some(true)
        );
        assert!(eq.is_empty());
        assert_eq!(
            eq.with_front(Some(Duration::from_millis(5)), |_| ((), true)),
            None
        );
    }

    #[test]
    fn a_waiting_reader_wakes_when_another_thread_pushes() {
        let eq = Arc::new(Eq::default());
        let e2 = eq.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            e2.push(Event::Connected {
                fid: 9,
                data: vec![],
            });
        });
        let got = eq.with_front(Some(Duration::from_secs(10)), |e| {
            (matches!(e, Event::Connected { fid: 9, .. }), true)
        });
        assert_eq!(got, Some(true));
        t.join().unwrap();
    }

    #[test]
    fn forgetting_an_endpoint_drops_its_events_only() {
        let eq = Eq::default();
        eq.push(Event::Shutdown { fid: 1 });
        eq.push(Event::Shutdown { fid: 2 });
        eq.push(Event::User {
            event: 0,
            bytes: vec![],
        });
        eq.forget(1);
        assert_eq!(eq.len(), 2);
        assert_eq!(
            eq.with_front(None, |e| (matches!(e, Event::Shutdown { fid: 2 }), true)),
            Some(true)
        );
    }
}
