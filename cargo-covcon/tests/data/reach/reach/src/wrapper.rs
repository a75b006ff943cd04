use std::sync::Mutex;

/// One shard: the only type here with a lock of its own.
struct Shard {
    items: Mutex<Vec<u64>>,
}

/// The shards, without a lock of their own.
struct Shards {
    shards: Vec<Shard>,
}

/// A set whose only field is `Shards`: thread-safe two types deep.
pub struct Set {
    inner: Shards,
}

impl Set {
    pub fn new() -> Set {
        let shards = (0..2)
            .map(|_| Shard {
                items: Mutex::new(Vec::new()),
            })
            .collect();
        Set {
            inner: Shards { shards },
        }
    }
    pub fn insert(&self, v: u64) -> bool {
        let shard = &self.inner.shards[(v % 2) as usize];
        let mut items = shard.items.lock().unwrap();
        if items.contains(&v) {
            return false;
        }
        items.push(v);
        true
    }
    pub fn contains(&self, v: u64) -> bool {
        self.inner.shards[(v % 2) as usize]
            .items
            .lock()
            .unwrap()
            .contains(&v)
    }
    pub fn len(&self) -> usize {
        self.inner
            .shards
            .iter()
            .map(|s| s.items.lock().unwrap().len())
            .sum()
    }
}

/// A queue of jobs whose only field is a concurrent queue of a dependency.
pub struct Jobs {
    queue: crossbeam_deque::Injector<u64>,
}

impl Jobs {
    pub fn new() -> Jobs {
        Jobs {
            queue: crossbeam_deque::Injector::new(),
        }
    }
    pub fn push(&self, job: u64) {
        self.queue.push(job);
    }
    pub fn steal(&self) -> Option<u64> {
        self.queue.steal().success()
    }
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}
