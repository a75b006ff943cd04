use std::sync::atomic::{AtomicU64, Ordering};

/// Found only inside `cfg_if!`.
pub struct Counter {
    n: AtomicU64,
}

impl Counter {
    pub fn new() -> Counter {
        Counter { n: AtomicU64::new(0) }
    }
    pub fn incr(&self) -> u64 {
        self.n.fetch_add(1, Ordering::SeqCst)
    }
    pub fn get(&self) -> u64 {
        self.n.load(Ordering::SeqCst)
    }
}
