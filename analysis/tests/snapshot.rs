//! The JSON of whole small types, as `cargo covcon analyze --format json` prints them, pinned
//! with insta: a bounded buffer with a condvar and a counter whose id allocation is racy.

use analysis::analyze_source;

const BUFFER: &str = r#"use std::sync::{Condvar, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};

/// A bounded buffer (SplitRichTest's running example).
#[derive(Debug)]
pub struct Buffer {
    slots: Mutex<Vec<u32>>,
    not_empty: Condvar,
    capacity: usize,
}

impl Buffer {
    pub fn new(capacity: usize) -> Self {
        Buffer { slots: Mutex::new(Vec::new()), not_empty: Condvar::new(), capacity }
    }

    pub fn put(&self, v: u32) -> bool {
        let full = self.slots.lock().unwrap().len() >= self.capacity;
        if full {
            return false;
        }
        self.slots.lock().unwrap().push(v);
        self.not_empty.notify_one();
        true
    }

    pub fn take(&self) -> u32 {
        let mut slots = self.slots.lock().unwrap();
        while slots.is_empty() {
            slots = self.not_empty.wait(slots).unwrap();
        }
        slots.remove(0)
    }
}

#[derive(Default)]
pub struct Ids {
    next: AtomicU64,
}

impl Ids {
    pub fn next(&self) -> u64 {
        let id = self.next.load(Ordering::SeqCst);
        self.next.store(id + 1, Ordering::SeqCst);
        id
    }
}
"#;

#[test]
fn a_bounded_buffer_and_a_racy_id_allocator_serialise_as_documented() {
    let model = analyze_source("shapes", "2021", BUFFER);
    insta::assert_json_snapshot!(model);
}

#[test]
fn the_summary_of_the_same_types_reads_well() {
    let model = analyze_source("shapes", "2021", BUFFER);
    insta::assert_snapshot!(analysis::summary(&model));
}

const SHARDED: &str = r#"use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Default)]
pub struct Shards {
    shards: [Mutex<Vec<u64>>; 2],
    count: AtomicUsize,
}

impl Shards {
    pub fn insert(&self, k: u64) {
        self.shards[(k % 2) as usize].lock().unwrap().push(k);
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    /// How many keys were inserted.
    ///
    /// The count is kept apart from the shards, so while another thread inserts it may be
    /// stale.
    pub fn len(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }
}
"#;

#[test]
fn a_method_documented_approximate_serialises_and_reads_with_its_sentence() {
    let model = analyze_source("shapes", "2021", SHARDED);
    let len = &model.types[0].methods[1];
    insta::assert_json_snapshot!(len.approximate, @r#"
    {
      "by": "doc",
      "line": "The count is kept apart from the shards, so while another thread inserts it may be stale."
    }
    "#);
    insta::assert_snapshot!(
        "summary_of_a_documented_approximate_len",
        analysis::summary(&model)
    );
}
