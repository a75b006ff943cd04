use crate::keys::Key;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::Mutex;

/// Generic with defaults written as this module names them: `Key` lives in another module,
/// `RandomState` is imported.
pub struct Pool<K = Key, S = RandomState> {
    slots: Mutex<Vec<K>>,
    hasher: S,
}

impl<K: Clone, S: BuildHasher + Default> Pool<K, S> {
    pub fn new() -> Self {
        Pool {
            slots: Mutex::new(Vec::new()),
            hasher: S::default(),
        }
    }
    pub fn put(&self, key: K) {
        let _ = self.hasher.hash_one(1u8);
        self.slots.lock().unwrap().push(key);
    }
    pub fn take(&self) -> Option<K> {
        self.slots.lock().unwrap().pop()
    }
    pub fn len(&self) -> usize {
        self.slots.lock().unwrap().len()
    }
    /// Two acquisitions: the pairs with it are worth running.
    pub fn put_twice(&self, key: K) {
        self.put(key.clone());
        self.put(key);
    }
}
