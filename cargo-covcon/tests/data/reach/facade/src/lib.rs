//! A facade over a companion crate (as parking_lot is over lock_api, scc over sdd): its
//! types are the companion's, re-exported or aliased with a raw lock of the facade's own.

use std::sync::atomic::{AtomicBool, Ordering};

pub use engine::Queue;

/// A spin lock: the raw lock the facade's `SpinLock` is made of.
pub struct Spin {
    locked: AtomicBool,
}

impl engine::RawLock for Spin {
    fn new() -> Spin {
        Spin {
            locked: AtomicBool::new(false),
        }
    }
    fn lock(&self) {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
    }
    fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }
}

/// What users of the facade call.
pub type SpinLock<T> = engine::Lock<Spin, T>;
