//! A companion crate whose types `facade` makes public: a queue it re-exports and a lock
//! generic over its raw lock, which `facade` aliases with a raw lock of its own.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A queue with a lock-free length.
pub struct Queue<T> {
    items: Mutex<Vec<T>>,
    len: AtomicUsize,
}

impl<T> Queue<T> {
    pub fn new() -> Queue<T> {
        Queue {
            items: Mutex::new(Vec::new()),
            len: AtomicUsize::new(0),
        }
    }
    pub fn push(&self, v: T) {
        self.items.lock().unwrap().push(v);
        self.len.fetch_add(1, Ordering::SeqCst);
    }
    pub fn pop(&self) -> Option<T> {
        let v = self.items.lock().unwrap().pop();
        if v.is_some() {
            self.len.fetch_sub(1, Ordering::SeqCst);
        }
        v
    }
    pub fn len(&self) -> usize {
        self.len.load(Ordering::SeqCst)
    }
}

/// What a lock is made of.
pub trait RawLock {
    fn new() -> Self;
    fn lock(&self);
    fn unlock(&self);
}

/// A value behind a raw lock `R`: all its synchronisation is `R`'s.
pub struct Lock<R, T> {
    raw: R,
    value: UnsafeCell<T>,
}

unsafe impl<R: RawLock + Sync, T: Send> Sync for Lock<R, T> {}

impl<R: RawLock, T: Clone> Lock<R, T> {
    pub fn new(value: T) -> Lock<R, T> {
        Lock {
            raw: R::new(),
            value: UnsafeCell::new(value),
        }
    }
    pub fn set(&self, value: T) {
        self.raw.lock();
        unsafe { *self.value.get() = value };
        self.raw.unlock();
    }
    pub fn get(&self) -> T {
        self.raw.lock();
        let v = unsafe { (*self.value.get()).clone() };
        self.raw.unlock();
        v
    }
    /// A parameter of the raw lock's type: the alias fixes it, so covcon leaves this out.
    pub fn swap_raw(&self, _other: &R) {}
}

/// A value of the companion crate that the facade's methods take: built by its own
/// constructor, read from this source.
#[derive(Debug, Clone)]
pub struct Ticket {
    number: u32,
}

impl Ticket {
    pub fn new(number: u32) -> Ticket {
        Ticket { number }
    }
    pub fn number(&self) -> u32 {
        self.number
    }
}

/// What a score board adds up with; the engine ships the one implementation (`Wide`), and
/// nothing in `facade` names it.
pub trait Tally: Default + Send {
    fn add(&mut self, n: u32);
    fn total(&self) -> u64;
}

/// Sums in 64 bits.
#[derive(Debug, Default)]
pub struct Wide {
    total: u64,
}

impl Tally for Wide {
    fn add(&mut self, n: u32) {
        self.total += u64::from(n);
    }
    fn total(&self) -> u64 {
        self.total
    }
}
