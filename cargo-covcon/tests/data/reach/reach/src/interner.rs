use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::RwLock;

/// Generic methods, often the ones that race.
pub struct Interner {
    map: RwLock<HashMap<String, u32>>,
    next: AtomicU32,
}

impl Interner {
    pub fn new() -> Interner {
        Interner {
            map: RwLock::new(HashMap::new()),
            next: AtomicU32::new(0),
        }
    }
    pub fn intern<T: AsRef<str>>(&self, s: T) -> u32 {
        let s = s.as_ref();
        if let Some(k) = self.map.read().unwrap().get(s) {
            return *k;
        }
        let mut map = self.map.write().unwrap();
        *map.entry(s.to_string())
            .or_insert_with(|| self.next.fetch_add(1, Ordering::SeqCst))
    }
    pub fn get<Q>(&self, s: &Q) -> Option<u32>
    where
        String: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.read().unwrap().get(s).copied()
    }
    pub fn take<T: From<u32>>(&self, n: u32) -> Vec<T> {
        (0..n.min(3)).map(T::from).collect()
    }
    /// A closure with an argument.
    pub fn retain(&self, mut keep: impl FnMut(&str) -> bool) {
        self.map.write().unwrap().retain(|k, _| keep(k));
    }
    /// A closure returning a `Result` whose error type is the method's own parameter.
    pub fn get_or_try<F, E>(&self, s: &str, init: F) -> Result<u32, E>
    where
        F: FnOnce() -> Result<u32, E>,
    {
        if let Some(k) = self.get(s) {
            return Ok(k);
        }
        let k = init()?;
        self.map.write().unwrap().entry(s.to_string()).or_insert(k);
        Ok(k)
    }
}
