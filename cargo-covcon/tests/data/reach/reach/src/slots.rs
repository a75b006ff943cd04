use std::collections::HashMap;
use std::hash::Hash;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Arguments behind pointers and non-zero integers, and keys taken as `&Q` where
/// `Q: ToOwned<Owned = K>` (moka's and quick_cache's `*_by_ref` methods).
pub struct Slots<K> {
    map: Mutex<HashMap<K, Arc<String>>>,
    cap: NonZeroUsize,
    lookups: AtomicU64,
}

impl<K: Hash + Eq + Clone> Slots<K> {
    pub fn new(cap: NonZeroUsize) -> Slots<K> {
        Slots {
            map: Mutex::new(HashMap::new()),
            cap,
            lookups: AtomicU64::new(0),
        }
    }
    pub fn put(&self, key: Box<K>, value: Arc<String>) -> bool {
        let mut map = self.map.lock().unwrap();
        if map.len() >= self.cap.get() {
            return false;
        }
        map.insert(*key, value);
        true
    }
    pub fn get_by_ref<Q>(&self, key: &Q) -> Option<Arc<String>>
    where
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let key = key.to_owned();
        self.map.lock().unwrap().get(&key).cloned()
    }
    pub fn shrink(&self, to: NonZeroUsize) -> usize {
        let mut map = self.map.lock().unwrap();
        while map.len() > to.get() {
            let Some(k) = map.keys().next().cloned() else { break };
            map.remove(&k);
        }
        map.len()
    }
}
