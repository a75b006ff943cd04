//! Test data for cargo-covcon's CLI tests.

use std::sync::Mutex;

/// A counter whose `add_checked` reads and writes under two separate acquisitions.
#[derive(Debug, Default)]
pub struct Counter {
    value: Mutex<u32>,
}

impl Counter {
    pub fn new() -> Counter {
        Counter { value: Mutex::new(0) }
    }

    pub fn get(&self) -> u32 {
        *self.value.lock().unwrap()
    }

    pub fn add_checked(&self, n: u32) {
        let before = *self.value.lock().unwrap();
        // Widens the window between the two critical sections so the CLI tests see the bug
        // within a small budget.
        std::thread::sleep(std::time::Duration::from_millis(1));
        let after = before + n;
        *self.value.lock().unwrap() = after;
        assert_eq!(self.get(), before + n, "lost update");
    }
}

/// A correct twin: everything under one acquisition.
#[derive(Debug, Default)]
pub struct Tally {
    value: Mutex<u32>,
}

impl Tally {
    pub fn new() -> Tally {
        Tally { value: Mutex::new(0) }
    }

    pub fn get(&self) -> u32 {
        *self.value.lock().unwrap()
    }

    pub fn add(&self, n: u32) {
        *self.value.lock().unwrap() += n;
    }
}

/// Skipped by the package configuration.
#[derive(Debug, Default)]
pub struct Ignored {
    value: Mutex<u32>,
}

impl Ignored {
    pub fn new() -> Ignored {
        Ignored { value: Mutex::new(0) }
    }

    pub fn get(&self) -> u32 {
        *self.value.lock().unwrap()
    }
}
