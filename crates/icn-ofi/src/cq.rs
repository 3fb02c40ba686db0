//! Completion queues (`fi_cq_open`), safe layer: a CQ reads the work queues of the
//! endpoints bound to it (icn-via progresses inside those calls: manual data progress).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::ep::{CqEntry, CqError, Ep};
use crate::error::*;

/// A completion queue.
#[derive(Default)]
pub struct Cq {
    /// Bound endpoints and which of their queues report here (transmit, receive).
    eps: Mutex<Vec<(Weak<Ep>, bool, bool)>>,
    /// Completions found beyond what a read asked for, oldest first.
    ready: Mutex<VecDeque<CqEntry>>,
    errors: Mutex<VecDeque<CqError>>,
}

impl Cq {
    pub fn bind(&self, ep: &Arc<Ep>, tx: bool, rx: bool) {
        let mut eps = self.eps.lock().unwrap_or_else(|e| e.into_inner());
        eps.retain(|(w, _, _)| w.strong_count() > 0);
        match eps
            .iter_mut()
            .find(|(w, _, _)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(ep)))
        {
            Some(e) => {
                e.1 |= tx;
                e.2 |= rx;
            }
            None => eps.push((Arc::downgrade(ep), tx, rx)),
        }
    }

    /// `fi_cq_read`: up to `max` completions, each handed to `emit` with its index;
    /// `Err(FI_EAVAIL)` if none but an error waits, `Err(FI_EAGAIN)` if nothing. No
    /// allocation on this path (completions beyond `max` wait in `ready`).
    pub fn read(
        &self,
        max: usize,
        emit: &mut dyn FnMut(usize, &CqEntry),
    ) -> std::result::Result<usize, i32> {
        let mut n = 0;
        {
            let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
            while n < max {
                match ready.pop_front() {
                    Some(e) => {
                        emit(n, &e);
                        n += 1;
                    }
                    None => break,
                }
            }
        }
        // The endpoints are polled even when enough completions wait: polling is also
        // what sends their acknowledgements (manual progress). The list's lock is held
        // while polling (binding waits), so a read allocates nothing.
        {
            let eps = self.eps.lock().unwrap_or_else(|e| e.into_inner());
            for (w, tx, rx) in eps.iter() {
                let Some(ep) = w.upgrade() else { continue };
                ep.poll(*tx, *rx, &mut |r| {
                    match r {
                        Ok(e) if n < max => {
                            emit(n, &e);
                            n += 1;
                        }
                        Ok(e) => self
                            .ready
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push_back(e),
                        Err(e) => self
                            .errors
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push_back(e),
                    }
                    true
                });
            }
        }
        if n > 0 {
            return Ok(n);
        }
        if !self
            .errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
        {
            return Err(FI_EAVAIL);
        }
        Err(FI_EAGAIN)
    }

    /// `fi_cq_sread`: [`Cq::read`] until something comes or `timeout` passes (`None`: for
    /// ever); polls, then yields, then naps (there is no wait object to sleep on).
    pub fn sread(
        &self,
        max: usize,
        emit: &mut dyn FnMut(usize, &CqEntry),
        timeout: Option<Duration>,
    ) -> std::result::Result<usize, i32> {
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            match self.read(max, emit) {
                Err(FI_EAGAIN) => {}
                r => return r,
            }
            if timeout.is_some_and(|t| start.elapsed() >= t) {
                return Err(FI_EAGAIN);
            }
            spins += 1;
            if spins > 1000 {
                std::thread::sleep(Duration::from_micros(50));
            } else if spins > 100 {
                std::thread::yield_now();
            }
        }
    }

    /// `fi_cq_readerr`: the oldest error.
    pub fn read_err(&self) -> Option<CqError> {
        self.errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()
    }
}
