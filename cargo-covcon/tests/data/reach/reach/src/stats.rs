use crate::export::Export;
use std::sync::Mutex;

/// Its `export` comes from a trait of another module.
pub struct Stats {
    hits: Mutex<Vec<u64>>,
}

impl Stats {
    pub fn new() -> Stats {
        Stats {
            hits: Mutex::new(Vec::new()),
        }
    }
    pub fn hit(&self, v: u64) {
        self.hits.lock().unwrap().push(v);
    }
}

impl Export for Stats {
    fn export(&self) -> String {
        format!("{:?}", self.hits.lock().unwrap())
    }
}
