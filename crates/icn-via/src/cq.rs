//! Completion queues (`VipCreateCQ`, `VipCQDone`, `VipCQWait`, `VipResizeCQ`).
//!
//! As in VIA, a CQ does not take descriptors off their work queues: it records *which* work
//! queue of *which* VI has a completion, and the consumer then calls `send_done`/`recv_done`
//! on that VI. One CQ can gather many VIs so a server polls one place.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::engine::ViCore;
use crate::error::{Result, ViaError};
use crate::lock::FastMutex;

/// Which work queue of a VI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkQueue {
    Send,
    Recv,
}

/// Identifies a VI within its NIC (returned by CQ polls).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ViId(pub u32);

pub(crate) struct CqShared {
    entries: Mutex<VecDeque<(u32, WorkQueue)>>,
    capacity: Mutex<usize>,
    overflowed: std::sync::atomic::AtomicBool,
    members: Mutex<Vec<Weak<FastMutex<ViCore>>>>,
}

impl CqShared {
    pub(crate) fn push(&self, vi: u32, q: WorkQueue) {
        let cap = *self.capacity.lock().unwrap_or_else(|e| e.into_inner());
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if e.len() >= cap {
            self.overflowed
                .store(true, std::sync::atomic::Ordering::Relaxed);
        } else {
            e.push_back((vi, q));
        }
    }
    pub(crate) fn attach(&self, core: &Arc<FastMutex<ViCore>>) {
        self.members
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::downgrade(core));
    }
}

/// A completion queue. Attach work queues to it in [`crate::Nic::create_vi`].
#[derive(Clone)]
pub struct CompletionQueue {
    pub(crate) shared: Arc<CqShared>,
}

impl CompletionQueue {
    pub(crate) fn new(capacity: usize) -> Result<Self> {
        check_capacity(capacity)?;
        Ok(CompletionQueue {
            shared: Arc::new(CqShared {
                entries: Mutex::new(VecDeque::new()),
                capacity: Mutex::new(capacity),
                overflowed: false.into(),
                members: Mutex::new(Vec::new()),
            }),
        })
    }

    fn progress_members(&self) {
        let members: Vec<_> = self
            .shared
            .members
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for m in members {
            let mut core = m.lock();
            core.progress();
            core.flush_ack();
        }
    }

    /// `VipCQDone`: the next (VI, work queue) with a completion, if any.
    pub fn done(&self) -> Result<Option<(ViId, WorkQueue)>> {
        if self
            .shared
            .overflowed
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Err(ViaError::ResourceExhausted(
                "completion queue overflowed".into(),
            ));
        }
        let pop = || {
            self.shared
                .entries
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pop_front()
        };
        if let Some((v, q)) = pop() {
            return Ok(Some((ViId(v), q)));
        }
        self.progress_members();
        Ok(pop().map(|(v, q)| (ViId(v), q)))
    }

    /// `VipCQWait`: blocks until an entry arrives or `timeout` passes. Polls for
    /// [`crate::link::backoff::DEFAULT_SPIN`] (as a VI's wait does by default: a message
    /// from a peer on another core arrives within it, and a sleep would cost the wake-up
    /// latency), then yields, then sleeps with a growing back-off (capped at 1.3 ms), never
    /// busy-waiting for long.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<(ViId, WorkQueue)> {
        let start = Instant::now();
        let deadline = timeout.map(|t| start + t);
        let spin = crate::link::backoff::DEFAULT_SPIN.min(timeout.unwrap_or(Duration::MAX));
        let mut round = 0u32;
        loop {
            if let Some(e) = self.done()? {
                return Ok(e);
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Err(ViaError::Timeout);
            }
            if now - start < spin {
                std::hint::spin_loop();
                continue;
            }
            if round < 64 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(10u64 << (round - 64).min(7)));
            }
            round = round.saturating_add(1);
        }
    }

    /// `VipResizeCQ`.
    pub fn resize(&self, capacity: usize) -> Result<()> {
        check_capacity(capacity)?;
        *self
            .shared
            .capacity
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = capacity;
        Ok(())
    }
}

fn check_capacity(capacity: usize) -> Result<()> {
    if capacity == 0 || capacity > 1 << 20 {
        return Err(ViaError::InvalidParameter(format!(
            "CQ capacity must be in 1..=1048576, got {capacity}"
        )));
    }
    Ok(())
}
