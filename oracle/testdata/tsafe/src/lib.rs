//! Small thread-safe types with known behaviour, driven by the oracle's harness tests. Each type
//! documents what covcon must conclude about it. `/*sp*/` marks the split points the tests'
//! hand-written models put a schedule point at.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Correct: every method is one atomic operation or one critical section. Takes every kind
/// of argument the harness can generate.
#[derive(Debug, Default)]
pub struct Counter {
    n: AtomicU64,
    log: Mutex<Vec<String>>,
}

impl Counter {
    pub fn new() -> Counter {
        Counter::default()
    }
    pub fn starting_at(n: u64) -> Arc<Counter> {
        let c = Counter::new();
        c.n.store(n, Ordering::SeqCst);
        Arc::new(c)
    }
    pub fn checked(n: i32) -> Result<Counter, String> {
        if n < 0 {
            return Err(format!("negative start {n}"));
        }
        Ok(Counter::new())
    }
    pub fn incr(&self) -> u64 {
        self.n.fetch_add(1, Ordering::SeqCst) + 1
    }
    /// `incr` after the future has been pending once (it wakes itself).
    pub async fn incr_later(&self) -> u64 {
        PendingOnce(false).await;
        self.incr()
    }
    pub fn get(&self) -> u64 {
        self.n.load(Ordering::SeqCst)
    }
    pub fn add(&self, by: u32) {
        self.n.fetch_add(u64::from(by), Ordering::SeqCst);
    }
    pub fn note(&self, text: &str, tags: &[u8], extra: Option<(char, bool)>) -> usize {
        let mut log = self.log.lock().unwrap();
        log.push(format!("{text}{tags:?}{extra:?}"));
        log.len()
    }
    pub fn label(&self, name: &'static str, alias: Option<&str>) -> String {
        format!("{name}/{}", alias.unwrap_or("-"))
    }
    pub fn wait(&self, d: Duration) -> Duration {
        d
    }
    pub fn compute(&self, f: impl FnOnce() -> u64) -> u64 {
        let v = f();
        self.n.fetch_add(v, Ordering::SeqCst) + v
    }
    pub fn merge(&self, other: &Counter) {
        let v = other.get();
        self.n.fetch_add(v, Ordering::SeqCst);
    }
    pub fn share(&self, other: Arc<Counter>) -> u64 {
        other.get()
    }
    pub fn twice(&self) -> u64 {
        self.incr();
        self.incr()
    }
    pub fn shout(&self) {
        println!("this must not reach the protocol");
    }
}

/// Check-then-act on a Mutex'd map: `insert_new` checks under one acquisition and inserts
/// under another, asserting the key is still absent. Two threads inserting the same key panic
/// ("key inserted twice"); no sequential order does. A thread-safety violation (panic).
#[derive(Debug, Default)]
pub struct Registry {
    map: Mutex<HashMap<u32, u32>>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }
    pub fn insert_new(&self, key: u32, value: u32) -> bool {
        let present = self.map.lock().unwrap().contains_key(&key);
        if present {
            return false;
        }
        /*sp*/
        std::thread::yield_now();
        let old = self.map.lock().unwrap().insert(key, value);
        assert!(old.is_none(), "key inserted twice");
        true
    }
    pub fn len(&self) -> usize {
        self.map.lock().unwrap().len()
    }
}

/// Two locks taken in opposite orders by `forward` and `backward`, and `transfer` locks self
/// then the other instance: deadlocks (violations) between the two methods, or between two
/// instances calling `transfer` on each other.
#[derive(Debug, Default)]
pub struct Accounts {
    a: Mutex<u64>,
    b: Mutex<u64>,
}

impl Accounts {
    pub fn new() -> Accounts {
        Accounts::default()
    }
    pub fn forward(&self) {
        let mut a = self.a.lock().unwrap();
        /*sp*/
        std::thread::sleep(Duration::from_millis(1));
        let mut b = self.b.lock().unwrap();
        *a += 1;
        *b += 1;
    }
    pub fn backward(&self) {
        let mut b = self.b.lock().unwrap();
        /*sp*/
        std::thread::sleep(Duration::from_millis(1));
        let mut a = self.a.lock().unwrap();
        *a += 1;
        *b += 1;
    }
    pub fn transfer(&self, other: &Accounts) {
        let mut mine = self.a.lock().unwrap();
        /*sp*/
        std::thread::sleep(Duration::from_millis(1));
        let mut theirs = other.a.lock().unwrap();
        *mine += 1;
        *theirs += 1;
    }
}

/// Plain bugs and blocking: `explode` panics whatever the order (not a violation), `take`
/// blocks on an empty queue sequentially too (not a violation), `abort` and `spin` end or
/// hang the worker (must not stop a campaign). `take_delayed` waits while a thread of its own
/// sleeps and then puts: a wait another thread will end is not blocked for good.
/// `put_quietly` forgets to notify: a `take` already waiting misses it (a lost wake-up).
/// `take_once` waits under `if`: a spurious wake-up makes it pop an empty queue.
/// `put_later` returns at once and puts from a thread of its own 100 ms later: the state
/// changes after the call, as a housekeeper's would.
#[derive(Debug, Default)]
pub struct Queue {
    items: Arc<Mutex<Vec<u32>>>,
    ready: Condvar,
}

impl Queue {
    pub fn new() -> Queue {
        Queue::default()
    }
    pub fn put(&self, v: u32) {
        self.items.lock().unwrap().push(v);
        self.ready.notify_one();
    }
    pub fn put_quietly(&self, v: u32) {
        self.items.lock().unwrap().push(v);
    }
    pub fn put_later(&self, v: u32) {
        let items = Arc::clone(&self.items);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            items.lock().unwrap().push(v);
        });
    }
    pub fn take(&self) -> u32 {
        let mut items = self.items.lock().unwrap();
        loop {
            if let Some(v) = items.pop() {
                return v;
            }
            items = self.ready.wait(items).unwrap();
        }
    }
    /// `take` waiting under `if`: after any wake-up it pops, certain an item is there.
    pub fn take_once(&self) -> u32 {
        let mut items = self.items.lock().unwrap();
        if items.is_empty() {
            items = self.ready.wait(items).unwrap();
        }
        items.pop().expect("woken with an item")
    }
    pub fn take_delayed(&self) -> u32 {
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(60));
                self.put(7);
            });
            self.take()
        })
    }
    pub fn explode(&self) {
        panic!("always broken");
    }
    pub fn abort(&self) {
        std::process::abort();
    }
    pub fn spin(&self) {
        #[allow(clippy::empty_loop)]
        loop {
            std::hint::spin_loop();
        }
    }
}

/// `Queue`'s `put`, `put_quietly` and `take` on a mutex and condition variable with
/// parking_lot's API (`wait(&mut guard)`, [`parked`]): the copy registers the wait with the
/// watchdog (`covcon_rt::wait_mut`).
#[derive(Debug)]
pub struct ParkedQueue {
    items: parked::Mutex<Vec<u32>>,
    ready: parked::Condvar,
}

impl ParkedQueue {
    pub fn new() -> ParkedQueue {
        ParkedQueue {
            items: parked::Mutex::new(Vec::new()),
            ready: parked::Condvar::new(),
        }
    }
    pub fn put(&self, v: u32) {
        self.items.lock().push(v);
        self.ready.notify_one();
    }
    pub fn put_quietly(&self, v: u32) {
        self.items.lock().push(v);
    }
    pub fn take(&self) -> u32 {
        let mut items = self.items.lock();
        loop {
            if let Some(v) = items.pop() {
                return v;
            }
            self.ready.wait(&mut items);
        }
    }
}

mod parked {
    //! A mutex and condition variable with parking_lot's API (`lock()` answers the guard,
    //! `wait(&mut guard)` borrows it), on std's. Nothing here is public, so the analysis
    //! tests none of it.

    use std::sync::PoisonError;

    /// std's, under names the analysis does not take for a lock: the sites are the users'.
    type Lock<T> = std::sync::Mutex<T>;
    type Signal = std::sync::Condvar;

    pub(crate) struct Mutex<T>(Lock<T>);

    pub(crate) struct MutexGuard<'a, T>(Option<std::sync::MutexGuard<'a, T>>);

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Mutex<T> {
            Mutex(Lock::new(value))
        }
        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            MutexGuard(Some(self.0.lock().unwrap_or_else(PoisonError::into_inner)))
        }
        pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
            self.0.try_lock().ok().map(|guard| MutexGuard(Some(guard)))
        }
    }

    impl<T: std::fmt::Debug> std::fmt::Debug for Mutex<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.0.fmt(f)
        }
    }

    impl<T> std::ops::Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            self.0.as_deref().expect("a guard holds its lock")
        }
    }

    impl<T> std::ops::DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            self.0.as_deref_mut().expect("a guard holds its lock")
        }
    }

    #[derive(Debug)]
    pub(crate) struct Condvar(Signal);

    impl Condvar {
        pub(crate) fn new() -> Condvar {
            Condvar(Signal::new())
        }
        pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
            let held = guard.0.take().expect("a guard holds its lock");
            guard.0 = Some(self.0.wait(held).unwrap_or_else(PoisonError::into_inner));
        }
        pub(crate) fn notify_one(&self) -> bool {
            self.0.notify_one();
            true
        }
        pub(crate) fn notify_all(&self) -> usize {
            self.0.notify_all();
            0
        }
    }
}

/// Generic: instantiated by the harness. `K` needs `Hash + Eq`, `V` needs `Clone`.
#[derive(Debug)]
pub struct Cache<K, V> {
    map: Mutex<HashMap<K, V>>,
}

impl<K: std::hash::Hash + Eq, V: Clone> Cache<K, V> {
    pub fn new() -> Self {
        Cache {
            map: Mutex::new(HashMap::new()),
        }
    }
    pub fn put(&self, k: K, v: V) -> Option<V> {
        self.map.lock().unwrap().insert(k, v)
    }
    pub fn get(&self, k: &K) -> Option<V> {
        self.map.lock().unwrap().get(k).cloned()
    }
}

/// Only constructible from strings: `u32` does not satisfy `Named<T: From<&'static str>>`, so
/// the harness has to move on to `String`.
#[derive(Debug)]
pub struct Named<T> {
    names: Mutex<Vec<T>>,
}

impl<T: From<&'static str> + Clone> Named<T> {
    pub fn new() -> Self {
        Named {
            names: Mutex::new(vec![T::from("first")]),
        }
    }
    pub fn first(&self) -> T {
        self.names.lock().unwrap()[0].clone()
    }
}

/// Built with a builder chain: `Pool::builder().size(n).build()`. Not `Debug`.
pub struct Pool {
    size: usize,
    used: AtomicU64,
}

pub struct PoolBuilder {
    size: usize,
}

impl Pool {
    pub fn builder() -> PoolBuilder {
        PoolBuilder { size: 1 }
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub fn acquire(&self) -> Option<u64> {
        let used = self.used.fetch_add(1, Ordering::SeqCst);
        (used < self.size as u64).then_some(used)
    }
    /// Returns a type without `Debug`: its result is captured as nothing.
    pub fn spare(&self) -> PoolBuilder {
        PoolBuilder { size: self.size }
    }
    /// The model claims this takes an integer; it does not, so its call cannot compile.
    pub fn resize(&self, to: PoolBuilder) -> usize {
        to.size
    }
    /// A value that is not `Clone`: a test cannot pass one it kept to `give_back`.
    pub fn lot(&self) -> Lot {
        Lot(self.used.load(Ordering::SeqCst))
    }
    pub fn give_back(&self, lot: Lot) -> u64 {
        lot.0
    }
}

/// Neither `Clone` nor `Copy`.
pub struct Lot(u64);

impl Lot {
    pub fn new(n: u64) -> Lot {
        Lot(n)
    }
}

impl PoolBuilder {
    pub fn size(mut self, size: usize) -> PoolBuilder {
        self.size = size;
        self
    }
    pub fn build(self) -> Pool {
        Pool {
            size: self.size,
            used: AtomicU64::new(0),
        }
    }
}

/// A `const fn` method: the start guard cannot go into it, so the copy must leave it out.
#[derive(Debug, Default)]
pub struct Fixed {
    v: AtomicU64,
}

impl Fixed {
    pub const fn zero() -> Fixed {
        Fixed {
            v: AtomicU64::new(0),
        }
    }
    pub const fn answer(&self) -> u64 {
        42
    }
    pub fn bump(&self) -> u64 {
        self.v.fetch_add(1, Ordering::SeqCst)
    }
}

/// Correct and `Clone` (clones share the items): built by an `Option` constructor, and takes
/// another instance by value.
#[derive(Debug, Default, Clone)]
pub struct Bag {
    items: Arc<Mutex<Vec<u32>>>,
}

impl Bag {
    pub fn maybe(n: u32) -> Option<Bag> {
        (n > 0).then(|| Bag {
            items: Arc::new(Mutex::new(vec![n])),
        })
    }
    pub fn adopt(&self, other: Bag) -> usize {
        let theirs = other.items.lock().unwrap().clone();
        let mut mine = self.items.lock().unwrap();
        mine.extend(theirs);
        mine.len()
    }
}

/// A value per calling thread, as a sharded slab keys its shards by thread: what `mine` sees
/// depends on which thread calls it, not on how calls interleave.
/// `hash` answers with the set's own hash keys, drawn when it is built.
pub struct Shards {
    by_thread: Mutex<std::collections::HashMap<std::thread::ThreadId, u32>>,
    keys: std::collections::hash_map::RandomState,
}

impl Shards {
    pub fn new() -> Shards {
        Shards {
            by_thread: Mutex::new(std::collections::HashMap::new()),
            keys: std::collections::hash_map::RandomState::new(),
        }
    }
    pub fn hash(&self, v: u32) -> u64 {
        std::hash::BuildHasher::hash_one(&self.keys, v)
    }
    pub fn put(&self, v: u32) {
        let me = std::thread::current().id();
        self.by_thread.lock().unwrap().insert(me, v);
    }
    pub fn mine(&self) -> u32 {
        let me = std::thread::current().id();
        *self
            .by_thread
            .lock()
            .unwrap()
            .get(&me)
            .expect("nothing was put on this thread")
    }
}

pub use hidden::Secret;
// A private import: `tsafe::Imported` exists but is private outside the crate.
use hidden::Imported;

/// Keeps the private import used.
#[allow(dead_code)]
fn imported() -> Imported {
    Imported::new()
}

mod hidden {
    //! A private module: `Secret` is reachable through the re-export at the crate root;
    //! `Imported` (imported privately at the root) and `Internal` (not imported at all) only
    //! from inside the crate.

    use std::sync::Mutex;

    #[derive(Debug, Default)]
    pub struct Imported {
        v: Mutex<u32>,
    }

    impl Imported {
        pub fn new() -> Imported {
            Imported::default()
        }
        pub fn peek(&self) -> u32 {
            *self.v.lock().unwrap()
        }
    }

    #[derive(Debug, Default)]
    pub struct Internal {
        v: Mutex<u32>,
    }

    impl Internal {
        pub fn new() -> Internal {
            Internal::default()
        }
        pub fn peek(&self) -> u32 {
            *self.v.lock().unwrap()
        }
    }

    /// Correct; the model names it `tsafe::hidden::Secret`, the harness has to use
    /// `tsafe::Secret`.
    #[derive(Debug, Default)]
    pub struct Secret {
        v: Mutex<u32>,
    }

    impl Secret {
        pub fn new() -> Secret {
            Secret::default()
        }
        pub fn peek(&self) -> u32 {
            *self.v.lock().unwrap()
        }
    }
}

/// A future that is pending once, waking its task, then ready.
struct PendingOnce(bool);

impl std::future::Future for PendingOnce {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}
