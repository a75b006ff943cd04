//! A crate written before rustc 1.80: `#![deny(warnings)]` with a custom cfg it does not
//! declare, which newer compilers warn about (`unexpected_cfgs`). Cargo caps lints for
//! dependencies, so its users never see it; covcon builds it as a path dependency and must
//! cap them too.
#![deny(warnings)]
use std::sync::atomic::{AtomicI64, Ordering};

pub struct Gauge {
    v: AtomicI64,
}

impl Gauge {
    pub fn new() -> Gauge {
        Gauge { v: AtomicI64::new(0) }
    }
    #[cfg(not(loom))]
    pub fn set(&self, v: i64) {
        self.v.store(v, Ordering::SeqCst);
    }
    pub fn get(&self) -> i64 {
        self.v.load(Ordering::SeqCst)
    }
}
