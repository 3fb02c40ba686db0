//! The mutex of a VI's engine and of a region's bytes: one locked instruction per
//! uncontended lock/unlock pair instead of two.
//!
//! `std::sync::Mutex` releases with an atomic swap (to learn whether a waiter sleeps), a
//! locked instruction like its acquiring compare-exchange; on this machine each costs ~8 ns,
//! and a small message's echo (its arrival, the receive's completion, the reply's post)
//! crossed five of them: the receive buffer's lock and unlock, the VI's unlock on returning
//! the completion, the VI's and the send buffer's lock for the reply. OpenMPI's single-threaded
//! path takes none. Here a release whose lock word says "nobody waits" is a plain `Release`
//! store; only a release that finds a waiter announced swaps and wakes.
//!
//! | state | meaning |
//! |---|---|
//! | 0 | unlocked |
//! | 1 | locked, no waiter announced |
//! | 2 | locked, a waiter may sleep on the word (futex) |
//!
//! Acquire: compare-exchange 0 → 1; if that fails, spin a little, then swap in 2 (taking the
//! lock if the old value was 0) and sleep on the word while it is 2. Release: if the word is
//! 1, store 0; else swap 0 and wake one sleeper. The plain store can race with a waiter's
//! swap of 1 → 2 between the release's load and its store: the store then erases the 2 and
//! that waiter is not woken. So a waiter never sleeps longer than [`SLEEP_SLICE`] before it
//! looks again: a lost wake-up (a window of a few instructions, and only under contention)
//! costs at most that, never a hang. Mutual exclusion does not depend on it: only the holder
//! ever stores or swaps 0, and a lock is taken only by an atomic read-modify-write that
//! found 0.
//!
//! No poisoning (the callers ignored it: a panic mid-copy leaves bytes, which are still bytes).

#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

const UNLOCKED: u32 = 0;
const LOCKED: u32 = 1;
const CONTENDED: u32 = 2;
/// Spins before a contended acquire starts sleeping (a short critical section ends first).
const SPINS: u32 = 100;
/// Longest sleep of a waiter between two looks at the lock (see the module doc).
pub const SLEEP_SLICE: Duration = Duration::from_millis(1);

/// A mutual-exclusion lock around a `T`.
pub struct FastMutex<T> {
    state: AtomicU32,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands out access to `data` to one thread at a time (only the thread
// whose read-modify-write moved the state from UNLOCKED holds a guard, until the guard's
// drop stores UNLOCKED again), so sharing the mutex between threads shares `T` only by
// moving exclusive access around: `T: Send` suffices, as for `std::sync::Mutex`.
unsafe impl<T: Send> Sync for FastMutex<T> {}
// SAFETY: the mutex owns its `T`; sending it sends the `T`.
unsafe impl<T: Send> Send for FastMutex<T> {}

impl<T> FastMutex<T> {
    pub fn new(value: T) -> Self {
        FastMutex {
            state: AtomicU32::new(UNLOCKED),
            data: UnsafeCell::new(value),
        }
    }

    /// Blocks until the lock is held; the guard releases it on drop.
    #[inline]
    pub fn lock(&self) -> FastGuard<'_, T> {
        if self
            .state
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        FastGuard { mutex: self }
    }

    /// The lock if it is free right now, else `None` (never waits). The guard is made only
    /// when the exchange took the lock: a guard made and dropped on failure would release
    /// the holder's lock (its drop unlocks).
    #[inline]
    pub fn try_lock(&self) -> Option<FastGuard<'_, T>> {
        let taken = self
            .state
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        taken.then(|| FastGuard { mutex: self })
    }

    #[cold]
    fn lock_contended(&self) {
        for _ in 0..SPINS {
            if self.state.load(Ordering::Relaxed) == UNLOCKED
                && self
                    .state
                    .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            std::hint::spin_loop();
        }
        // Announce a waiter; the swap takes the lock if it was free (leaving CONTENDED: the
        // release then wakes someone who may not exist, which is only a wasted call).
        while self.state.swap(CONTENDED, Ordering::Acquire) != UNLOCKED {
            let _ = rustix::thread::futex::wait(
                &self.state,
                rustix::thread::futex::Flags::PRIVATE,
                CONTENDED,
                Some(&crate::link::timespec(SLEEP_SLICE)),
            );
        }
    }

    #[inline]
    fn unlock(&self) {
        if self.state.load(Ordering::Relaxed) == LOCKED {
            self.state.store(UNLOCKED, Ordering::Release);
        } else {
            self.unlock_contended();
        }
    }

    #[cold]
    fn unlock_contended(&self) {
        if self.state.swap(UNLOCKED, Ordering::Release) == CONTENDED {
            let _ =
                rustix::thread::futex::wake(&self.state, rustix::thread::futex::Flags::PRIVATE, 1);
        }
    }
}

impl<T: Default> Default for FastMutex<T> {
    fn default() -> Self {
        FastMutex::new(T::default())
    }
}

/// Exclusive access to the value of a [`FastMutex`] while it lives.
pub struct FastGuard<'a, T> {
    mutex: &'a FastMutex<T>,
}

impl<T> Deref for FastGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: a guard exists only while its thread holds the lock (module doc), so no
        // other reference to the data exists; the borrow ends with the guard's.
        unsafe { &*self.mutex.data.get() }
    }
}

impl<T> DerefMut for FastGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this borrow the guard's only one.
        unsafe { &mut *self.mutex.data.get() }
    }
}

impl<T> Drop for FastGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.mutex.unlock();
    }
}

#[cfg(test)]
mod tests {
    //! Heap only, threads and futexes: runs under Miri (`cargo +nightly miri test -p icn-via
    //! --lib lock`), which checks the `unsafe` blocks' claims and explores interleavings.
    use super::*;
    use std::sync::Arc;

    #[test]
    fn uncontended_lock_and_release_leave_the_word_free() {
        let m = FastMutex::new(5u64);
        {
            let mut g = m.lock();
            *g += 1;
            assert_eq!(m.state.load(Ordering::Relaxed), LOCKED);
        }
        assert_eq!(m.state.load(Ordering::Relaxed), UNLOCKED);
        assert_eq!(*m.lock(), 6);
    }

    /// A failed `try_lock` leaves the holder's lock held (a guard made and dropped on
    /// failure once released it: the ack keeper then ran beside a VI's owner, and a
    /// stress run of libvipl's pair case hit `unreachable!` in the receive state machine).
    #[test]
    fn a_failed_try_lock_leaves_the_lock_held_and_a_free_one_is_taken() {
        let m = FastMutex::new(0u32);
        let g = m.lock();
        assert!(m.try_lock().is_none());
        assert_eq!(m.state.load(Ordering::Relaxed), LOCKED, "still held");
        assert!(m.try_lock().is_none());
        drop(g);
        let t = m.try_lock().expect("free");
        assert_eq!(m.state.load(Ordering::Relaxed), LOCKED);
        drop(t);
        assert_eq!(m.state.load(Ordering::Relaxed), UNLOCKED);
    }

    #[test]
    fn try_lock_beside_lock_never_loses_an_increment() {
        let m = Arc::new(FastMutex::new((0u64, 0u64)));
        let per = if cfg!(miri) { 50 } else { 50_000 };
        let hs: Vec<_> = (0..3)
            .map(|i| {
                let m = m.clone();
                std::thread::spawn(move || {
                    let mut done = 0;
                    while done < per {
                        let g = if i == 0 { m.try_lock() } else { Some(m.lock()) };
                        if let Some(mut g) = g {
                            let a = g.0;
                            g.0 = a + 1;
                            g.1 += 1;
                            assert_eq!(g.0, g.1);
                            done += 1;
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*m.lock(), (3 * per, 3 * per));
    }

    #[test]
    fn threads_never_lose_an_increment() {
        let m = Arc::new(FastMutex::new((0u64, 0u64)));
        let (threads, per) = if cfg!(miri) { (3, 50) } else { (4, 50_000) };
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for _ in 0..per {
                        let mut g = m.lock();
                        // two non-atomic steps: a second holder would tear them apart
                        let a = g.0;
                        g.0 = a + 1;
                        g.1 += 1;
                        assert_eq!(g.0, g.1);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let g = m.lock();
        assert_eq!(*g, (threads * per, threads * per));
    }

    #[test]
    fn a_waiter_sleeps_while_the_holder_works_and_gets_the_lock_after() {
        let m = Arc::new(FastMutex::new(Vec::new()));
        let g = m.lock();
        let m2 = m.clone();
        let t = std::thread::spawn(move || m2.lock().push(2));
        // the waiter announces itself (spins, then swaps in CONTENDED and sleeps)
        while m.state.load(Ordering::Relaxed) != CONTENDED {
            std::thread::yield_now();
        }
        drop(g);
        t.join().unwrap();
        m.lock().push(3);
        assert_eq!(*m.lock(), [2, 3]);
        assert_eq!(m.state.load(Ordering::Relaxed), UNLOCKED);
    }

    #[test]
    fn a_lost_wake_up_costs_a_slice_not_a_hang() {
        // The race of the module doc, forced: the holder's plain release erases the waiter's
        // CONTENDED (as if it had loaded LOCKED just before the waiter's swap) and wakes
        // nobody; the waiter must still get the lock, after its sleep slice at most.
        let m = Arc::new(FastMutex::new(0u32));
        let g = m.lock();
        let m2 = m.clone();
        let t = std::thread::spawn(move || *m2.lock() += 1);
        while m.state.load(Ordering::Relaxed) != CONTENDED {
            std::thread::yield_now();
        }
        std::mem::forget(g);
        m.state.store(UNLOCKED, Ordering::Release);
        t.join().unwrap();
        assert_eq!(*m.lock(), 1);
    }
}
