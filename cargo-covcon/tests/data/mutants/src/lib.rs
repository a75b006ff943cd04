#![deny(warnings)] //! Test data for `cargo covcon mutants`: a correct type, each of whose synchronisation sites
//! a mutant breaks.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

#[derive(Debug, Default)]
struct Totals {
    hits: u64,
    bytes: u64,
}

/// Hits and bytes served, always changed together, and a ticket number per request.
#[derive(Debug, Default)]
pub struct Meter {
    totals: Mutex<Totals>,
    tickets: AtomicU64,
    served: AtomicU64,
}

impl Meter {
    pub fn new() -> Meter {
        Meter::default()
    }

    /// Counts a hit that served `bytes` bytes: one critical section. `served` is only ever
    /// written here, under the lock, so its update done as a load and a store loses nothing:
    /// that mutant is equivalent; counted before the lock is taken, it is not.
    pub fn record(&self, bytes: u8) {
        let mut totals = self.totals.lock().unwrap();
        self.served.fetch_add(1, Ordering::Relaxed);
        totals.hits += 1;
        totals.bytes += u64::from(bytes);
    }

    pub fn snapshot(&self) -> (u64, u64) {
        let totals = self.totals.lock().unwrap();
        (totals.hits, totals.bytes)
    }

    /// Hits plus bytes; the guard is borrowed across the statements, so a mutant that drops
    /// it between them does not compile.
    pub fn total(&self) -> u64 {
        let totals = self.totals.lock().unwrap();
        let hits = &totals.hits;
        let sum = *hits + totals.bytes;
        sum
    }

    pub fn reset(&self) {
        *self.totals.lock().unwrap() = Totals::default();
    }

    /// A fresh ticket number: never the same twice.
    pub fn ticket(&self) -> u64 {
        self.tickets.fetch_add(1, Ordering::SeqCst)
    }

    /// Hits and requests served, read in one critical section: always equal, since `record`
    /// counts both under the lock.
    pub fn served(&self) -> (u64, u64) {
        let totals = self.totals.lock().unwrap();
        (totals.hits, self.served.load(Ordering::Relaxed))
    }
}
