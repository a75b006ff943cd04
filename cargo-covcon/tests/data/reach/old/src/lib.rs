//! An edition-2015 crate: `::covcon_rt` names the crate root here, so the instrumented copy
//! needs an `extern crate`.
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Tally {
    n: AtomicUsize,
}

impl Tally {
    pub fn new() -> Tally {
        Tally {
            n: AtomicUsize::new(0),
        }
    }
    pub fn add(&self) {
        self.n.fetch_add(1, Ordering::SeqCst);
    }
    pub fn get(&self) -> usize {
        self.n.load(Ordering::SeqCst)
    }
}
