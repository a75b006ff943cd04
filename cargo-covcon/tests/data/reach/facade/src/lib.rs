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

/// The same, its parameter named as the one it fixes (`engine::Lock<R, T>`'s `R`).
pub type Latch<R> = engine::Lock<Spin, R>;

/// Takes a value of a dependency's type (`&engine::Ticket`), which covcon builds with that
/// crate's `Ticket::new`.
pub struct Board {
    punched: std::sync::Mutex<Vec<u32>>,
    last: std::sync::atomic::AtomicU32,
}

impl Board {
    pub fn new() -> Board {
        Board {
            punched: std::sync::Mutex::new(Vec::new()),
            last: std::sync::atomic::AtomicU32::new(0),
        }
    }
    pub fn punch(&self, ticket: &engine::Ticket) {
        self.punched.lock().unwrap().push(ticket.number());
        self.last.store(ticket.number(), Ordering::SeqCst);
    }
    pub fn last(&self) -> u32 {
        self.last.load(Ordering::SeqCst)
    }
}

/// Generic over the engine's `Tally`, which only the engine implements: its type argument
/// comes from a dependency's impls (`engine::Wide`).
pub struct Scores<C: engine::Tally> {
    tally: std::sync::Mutex<C>,
    adds: std::sync::atomic::AtomicU32,
}

impl<C: engine::Tally> Scores<C> {
    pub fn new() -> Scores<C> {
        Scores {
            tally: std::sync::Mutex::new(C::default()),
            adds: std::sync::atomic::AtomicU32::new(0),
        }
    }
    pub fn add(&self, n: u32) {
        self.tally.lock().unwrap().add(n);
        self.adds.fetch_add(1, Ordering::SeqCst);
    }
    pub fn total(&self) -> u64 {
        self.tally.lock().unwrap().total()
    }
}
