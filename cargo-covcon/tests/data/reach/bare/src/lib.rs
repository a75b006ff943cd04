//! A `no_std` crate: a read-copy-update cell whose `update` names `alloc::sync::Arc` in its
//! bounds, so the harness's turbofish does too (a published RCU cell's obstacle).
#![no_std]

extern crate alloc;

use alloc::sync::Arc;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

/// A shared value, replaced as a whole under a spin lock.
pub struct Rcu<T> {
    locked: AtomicBool,
    value: UnsafeCell<Option<Arc<T>>>,
}

unsafe impl<T: Send + Sync> Sync for Rcu<T> {}
unsafe impl<T: Send + Sync> Send for Rcu<T> {}

impl<T> Rcu<T> {
    pub fn new(value: Option<T>) -> Self {
        Rcu {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value.map(Arc::new)),
        }
    }

    /// The current value.
    pub fn read(&self) -> Option<Arc<T>> {
        self.lock();
        // SAFETY: the spin lock is held.
        let value = unsafe { (*self.value.get()).clone() };
        self.unlock();
        value
    }

    /// Replaces the value with what `f` makes of it; answers the old one.
    pub fn update<R, F>(&self, f: F) -> Option<Arc<T>>
    where
        F: FnOnce(Option<Arc<T>>) -> Option<R>,
        R: Into<Arc<T>>,
    {
        self.lock();
        // SAFETY: the spin lock is held.
        let old = unsafe { (*self.value.get()).take() };
        let new = f(old.clone()).map(Into::into);
        // SAFETY: the spin lock is held.
        unsafe { *self.value.get() = new };
        self.unlock();
        old
    }

    fn lock(&self) {
        while self
            .locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            core::hint::spin_loop();
        }
    }

    fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }
}
