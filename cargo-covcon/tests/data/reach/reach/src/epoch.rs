//! A map whose calls take a guard the map hands out (`map.get(&k, &map.guard())`), as
//! flurry's and crossbeam-skiplist's do.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Pins the map while it lives.
pub struct Guard<'a> {
    map: &'a Epoch,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.map.pinned.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Debug, Default)]
pub struct Epoch {
    pinned: AtomicUsize,
    entries: Mutex<Vec<(u32, u32)>>,
}

impl Epoch {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn guard(&self) -> Guard<'_> {
        self.pinned.fetch_add(1, Ordering::SeqCst);
        Guard { map: self }
    }

    pub fn insert(&self, key: u32, value: u32, guard: &Guard<'_>) {
        assert!(std::ptr::eq(guard.map, self), "a guard of another map");
        self.entries.lock().unwrap().push((key, value));
    }

    pub fn get<'g>(&'g self, key: u32, guard: &'g Guard<'_>) -> Option<u32> {
        assert!(self.pinned.load(Ordering::SeqCst) > 0 && std::ptr::eq(guard.map, self));
        let entries = self.entries.lock().unwrap();
        entries.iter().rev().find(|e| e.0 == key).map(|e| e.1)
    }
}
