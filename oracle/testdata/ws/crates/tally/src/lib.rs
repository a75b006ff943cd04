//! A correct counter in a workspace member.

use std::sync::Mutex;

/// Correct: one critical section per method.
#[derive(Debug, Default)]
pub struct Tally {
    n: Mutex<u64>,
}

impl Tally {
    pub fn new() -> Tally {
        Tally::default()
    }
    pub fn bump(&self) -> u64 {
        let mut n = self.n.lock().unwrap();
        *n = helper::bump(*n);
        *n
    }
}
