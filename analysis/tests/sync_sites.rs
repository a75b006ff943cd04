//! Synchronisation sites: each lock acquisition and atomic operation on a field, with the
//! source positions of its receiver and call, which the oracle wraps to make schedule points.
//! The tests render each site as the source text its positions cut out: `method: receiver |
//! rest of the call`, white space collapsed.

mod common;

use analysis::{analyze_source, SyncOp};
use common::slice;

fn check(body: &str, expect: &str) {
    let source = format!(
        "use std::sync::{{Mutex, RwLock, Arc, Condvar}};\nuse std::sync::atomic::{{AtomicBool, AtomicUsize, Ordering}};\n{body}"
    );
    let model = analyze_source("sites", "2021", &source);
    let mut out = String::new();
    for ty in &model.types {
        for site in &ty.sync_sites {
            let from = (site.receiver.line, site.receiver.column);
            let what = match &site.op {
                SyncOp::Acquire { attempt, .. } => format!(" (or {attempt})"),
                SyncOp::TimedAcquire { attempt, .. } => format!(" (timed, or {attempt})"),
                SyncOp::Attempt { .. } => " (attempt)".to_string(),
                SyncOp::Atomic => " (atomic)".to_string(),
                SyncOp::FlagAttempt => " (flag attempt)".to_string(),
                SyncOp::Container => " (container)".to_string(),
                SyncOp::Wait { lock } => format!(" (releasing {lock})"),
                SyncOp::WaitMut => " (waits, borrowing its guard)".to_string(),
                SyncOp::Notify { all, waited } => {
                    format!(" (notify, all: {all}, waited: {waited})")
                }
            };
            out.push_str(&format!(
                "{}: {} | {}{what}\n",
                site.method,
                slice(&source, from, site.receiver_end),
                slice(&source, site.receiver_end, site.call_end),
            ));
        }
    }
    let want: String = expect
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(out, want, "\n{}", analysis::summary(&model));
}

#[test]
fn timed_acquisitions_are_sites_whose_timeout_the_schedule_chooses() {
    check(
        r#"
pub struct Ledger { entries: parking_lot::RwLock<Vec<u64>>, owner: parking_lot::Mutex<u8> }
impl Ledger {
    pub fn new() -> Self { Ledger { entries: parking_lot::RwLock::new(vec![]), owner: parking_lot::Mutex::new(0) } }
    pub fn record(&self, v: u64) -> bool {
        match self.entries.try_write_for(Duration::from_millis(1)) { Some(mut e) => { e.push(v); true } None => false }
    }
    pub fn peek(&self) -> Option<usize> { self.entries.try_read_for(D).map(|e| e.len()) }
    pub fn own(&self) -> bool { self.owner.try_lock_for(D).is_some() }
    pub fn own_by(&self, t: Instant) -> bool { self.owner.try_lock_until(t).is_some() }
}
"#,
        "record: self.entries | .try_write_for(Duration::from_millis(1)) (timed, or try_write)
         peek: self.entries | .try_read_for(D) (timed, or try_read)
         own: self.owner | .try_lock_for(D) (timed, or try_lock)
         own_by: self.owner | .try_lock_until(t) (timed, or try_lock)",
    );
}

#[test]
fn lock_acquisitions_and_atomic_operations_on_fields_are_sites_in_source_order() {
    check(
        r#"
pub struct Stock { items: Mutex<Vec<u32>>, names: RwLock<Vec<String>>, count: AtomicUsize }
impl Stock {
    pub fn new() -> Self { Stock { items: Mutex::new(vec![]), names: RwLock::new(vec![]), count: AtomicUsize::new(0) } }
    pub fn add(&self, x: u32) {
        let n = self.count.fetch_add(1, Ordering::SeqCst);
        self.items
            .lock()
            .unwrap()
            .push(x + n as u32);
    }
    pub fn name(&self, i: usize) -> Option<String> {
        self.names.read().unwrap().get(i).cloned()
    }
    pub fn rename(&self, i: usize) {
        if let Some(n) = self.names.write().unwrap().get_mut(i) { n.push('!'); }
        if let Ok(g) = self.items.try_lock() { drop(g); }
    }
}
"#,
        "add: self.count | .fetch_add(1, Ordering::SeqCst) (atomic)
         add: self.items | .lock() (or try_lock)
         name: self.names | .read() (or try_read)
         rename: self.names | .write() (or try_write)
         rename: self.items | .try_lock() (attempt)",
    );
}

#[test]
fn helpers_and_the_inner_types_methods_have_sites_too_each_once() {
    check(
        r#"
pub struct Cache { inner: Arc<Inner> }
struct Inner { map: Mutex<Vec<u32>> }
impl Inner {
    fn len(&self) -> usize { self.map.lock().unwrap().len() }
}
impl Cache {
    pub fn new() -> Self { Cache { inner: Arc::new(Inner { map: Mutex::new(vec![]) }) } }
    pub fn len(&self) -> usize { self.inner.len() }
    pub fn push(&self, x: u32) { self.put(x); self.put(x); }
    fn put(&self, x: u32) { self.inner.map.lock().unwrap().push(x); }
}
"#,
        "inner::len: self.map | .lock() (or try_lock)
         put: self.inner.map | .lock() (or try_lock)",
    );
}

#[test]
fn a_condvar_wait_by_value_names_the_mutex_of_its_guard_and_notifies_of_waited_condvars_are_sites()
{
    check(
        r#"
pub struct Queue { inner: Arc<Inner> }
struct Inner { items: Mutex<Vec<u32>>, ready: Condvar, spare: Condvar }
impl Inner {
    fn take(&self) -> u32 {
        let mut items = self.items.lock().unwrap();
        while items.is_empty() { items = self.ready.wait(items).unwrap(); }
        items.pop().unwrap()
    }
}
impl Queue {
    pub fn new() -> Self { Queue { inner: Arc::new(Inner { items: Mutex::new(vec![]), ready: Condvar::new(), spare: Condvar::new() }) } }
    /// Nothing waits on `spare` by value: its notify is no schedule point.
    pub fn poke(&self) { self.inner.spare.notify_all(); }
    pub fn take(&self) -> u32 { self.inner.take() }
    pub fn put(&self, x: u32) {
        self.inner.items.lock().unwrap().push(x);
        self.inner.ready.notify_one();
    }
    pub fn take_soon(&self) -> Option<u32> {
        let items = self.inner.items.lock().unwrap();
        let (mut items, _) = self.inner.ready.wait_timeout(items, std::time::Duration::from_millis(1)).unwrap();
        items.pop()
    }
}
"#,
        "inner::take: self.items | .lock() (or try_lock)
         inner::take: self.ready | .wait(items) (releasing self.items)
         poke: self.inner.spare | .notify_all() (notify, all: true, waited: false)
         put: self.inner.items | .lock() (or try_lock)
         put: self.inner.ready | .notify_one() (notify, all: false, waited: true)
         take_soon: self.inner.items | .lock() (or try_lock)
         take_soon: self.inner.ready | .wait_timeout(items, std::time::Duration::from_millis(1)) (releasing self.inner.items)",
    );
}

/// parking_lot's untimed `wait(&mut guard)` on a guard of the type's own mutex is a site
/// (the copy registers its waiter with the watchdog), and makes the condition variable's
/// notifies sites; its timed waits, and a wait on a guard that is not the type's, are not.
#[test]
fn a_condvar_wait_borrowing_a_guard_of_the_types_own_mutex_is_a_site() {
    // atomicring 0.5.0's shape: `pop` waits without looking at the ring again under the lock.
    check(
        r#"
pub struct Ring { items: parking_lot::Mutex<Vec<u32>>, ready: parking_lot::Condvar, later: parking_lot::Condvar }
impl Ring {
    pub fn new() -> Self { Ring { items: parking_lot::Mutex::new(vec![]), ready: parking_lot::Condvar::new(), later: parking_lot::Condvar::new() } }
    pub fn put(&self, x: u32) {
        self.items.lock().push(x);
        self.ready.notify_one();
        self.later.notify_all();
    }
    pub fn take(&self) -> u32 {
        let mut items = self.items.lock();
        loop {
            if let Some(x) = items.pop() { return x; }
            self.ready.wait(&mut items);
        }
    }
    pub fn take_soon(&self) -> Option<u32> {
        let mut items = self.items.lock();
        self.later.wait_for(&mut items, std::time::Duration::from_millis(1));
        items.pop()
    }
    pub fn take_from(&self, other: &parking_lot::Mutex<Vec<u32>>) -> Option<u32> {
        let mut items = other.lock();
        self.later.wait(&mut items);
        items.pop()
    }
}
"#,
        "put: self.items | .lock() (or try_lock)
         put: self.ready | .notify_one() (notify, all: false, waited: true)
         put: self.later | .notify_all() (notify, all: true, waited: false)
         take: self.items | .lock() (or try_lock)
         take: self.ready | .wait(&mut items) (waits, borrowing its guard)
         take_soon: self.items | .lock() (or try_lock)",
    );
}

/// A compare-exchange of a `bool` flag from `false` to `true`, outside any loop, in a function
/// that also stores `false` to it is a lock written by hand (mini-moka's housekeeper), and
/// its failure contention: an attempt. A flag never released (a once flag) and one retried
/// in a loop (a spin lock) stay plain atomics. A private type whose methods are all
/// `pub(crate)` is no type of the model, and the package's types take its sites over.
#[test]
fn calls_on_a_dependencys_container_are_sites_and_on_the_crates_own_types_not() {
    // lasso 0.7.1's shape: a key published in one map before its string is in the other.
    // Between the two calls another thread can resolve the key: every call is a site (the
    // harness makes points of those that follow another site of their function). A field holding a thread-safe type of the crate itself
    // has its points in that type's own code (`ids::next`: the counter's, followed into).
    check(
        r#"
use dashmap::DashMap;
pub struct Counter { n: AtomicUsize }
impl Counter {
    pub fn new() -> Self { Counter { n: AtomicUsize::new(0) } }
    pub fn next(&self) -> usize { self.n.fetch_add(1, Ordering::SeqCst) }
}
pub struct Interner { map: DashMap<String, usize>, strings: Arc<DashMap<usize, String>>, ids: Counter }
impl Interner {
    pub fn new() -> Self { Interner { map: DashMap::new(), strings: Arc::new(DashMap::new()), ids: Counter::new() } }
    pub fn intern(&self, s: &str) -> usize {
        if let Some(k) = self.map.get(s) { return *k; }
        let k = *self.map
            .entry(s.to_string())
            .or_insert_with(|| self.ids.next());
        self.strings.insert(k, s.to_string());
        k
    }
    pub fn resolve(&self, k: usize) -> String { self.strings.get(&k).expect("key out of bounds").clone() }
}
"#,
        "next: self.n | .fetch_add(1, Ordering::SeqCst) (atomic)
         ids::next: self.n | .fetch_add(1, Ordering::SeqCst) (atomic)
         intern: self.map | .get(s) (container)
         intern: self.map | .entry(s.to_string()) (container)
         intern: self.strings | .insert(k, s.to_string()) (container)
         resolve: self.strings | .get(&k) (container)",
    );
}

#[test]
fn a_flag_taken_and_released_in_one_function_is_an_attempt() {
    check(
        r#"
pub struct Cache { keeper: Box<dyn Send + Sync>, n: AtomicUsize }
impl Cache {
    pub fn new() -> Self { todo!() }
    pub fn len(&self) -> usize { self.n.load(Ordering::Relaxed) }
}
pub(crate) struct Keeper { busy: AtomicBool, started: AtomicBool, spin: AtomicBool }
impl Keeper {
    pub(crate) fn try_sync(&self) -> bool {
        match self.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => { self.busy.store(false, Ordering::Release); true }
            Err(_) => false,
        }
    }
    pub(crate) fn start(&self) -> bool {
        self.started.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }
    pub(crate) fn with_spin(&self) {
        while self.spin.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {}
        self.spin.store(false, Ordering::Release);
    }
}
"#,
        "len: self.n | .load(Ordering::Relaxed) (atomic)
         Keeper::try_sync: self.busy | .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed) (flag attempt)
         Keeper::try_sync: self.busy | .store(false, Ordering::Release) (atomic)
         Keeper::start: self.started | .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire) (atomic)
         Keeper::with_spin: self.spin | .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed) (atomic)
         Keeper::with_spin: self.spin | .store(false, Ordering::Release) (atomic)",
    );
}

/// A type covcon cannot test (no constructor it can call: parking_lot's `RawRwLock`, which only
/// lock_api's generic `RwLock` builds) stays in the model, and the types it tests take its sites
/// over, since their calls run its code through calls the analysis cannot follow (a trait
/// object here, a type parameter there): without them the copy had no schedule point inside
/// parking_lot's `RwLock` at all.
#[test]
fn the_types_covcon_tests_take_the_sites_of_the_ones_it_cannot_build() {
    check(
        r#"
pub trait Acquire: Send + Sync { fn acquire(&self); }
pub struct Locked { raw: Box<dyn Acquire>, n: AtomicUsize }
impl Locked {
    pub fn new() -> Self { todo!() }
    pub fn go(&self) { self.raw.acquire(); self.n.fetch_add(1, Ordering::Relaxed); }
}
pub struct RawLock { state: AtomicUsize }
impl Acquire for RawLock {
    fn acquire(&self) { self.state.fetch_add(1, Ordering::Acquire); }
}
"#,
        "go: self.n | .fetch_add(1, Ordering::Relaxed) (atomic)
         RawLock::acquire: self.state | .fetch_add(1, Ordering::Acquire) (atomic)
         acquire: self.state | .fetch_add(1, Ordering::Acquire) (atomic)",
    );
}

/// A site taken over from a type covcon cannot build names that type, so mutants leave it; a
/// private helper's sites name the helper, so that its mutants go to a type that holds it (one
/// that reaches it through a field has them as its own), not to the first type that lists them.
#[test]
fn a_site_taken_from_a_type_covcon_cannot_build_names_it() {
    let source = r#"
use std::sync::atomic::{AtomicUsize, Ordering};
pub trait Acquire: Send + Sync { fn acquire(&self); }
pub struct Locked { raw: Box<dyn Acquire>, n: AtomicUsize, h: Helper }
impl Locked {
    pub fn new() -> Self { todo!() }
    pub fn go(&self) { self.raw.acquire(); self.h.bump(); self.n.fetch_add(1, Ordering::Relaxed); }
}
pub struct RawLock { state: AtomicUsize }
impl Acquire for RawLock {
    fn acquire(&self) { self.state.fetch_add(1, Ordering::Acquire); }
}
pub(crate) struct Helper { m: AtomicUsize }
impl Helper {
    pub(crate) fn bump(&self) { self.m.fetch_add(1, Ordering::Relaxed); }
}
pub struct Apart { n: AtomicUsize }
impl Apart {
    pub fn new() -> Self { Apart { n: AtomicUsize::new(0) } }
    pub fn go(&self) { self.n.fetch_add(1, Ordering::Relaxed); }
}
"#;
    let model = analyze_source("sites", "2021", source);
    let locked = model.types.iter().find(|t| t.name == "Locked").unwrap();
    let owners: Vec<(&str, Option<&str>)> = locked
        .sync_sites
        .iter()
        .map(|s| (s.method.as_str(), s.untested_owner.as_deref()))
        .collect();
    assert!(
        owners.contains(&("RawLock::acquire", Some("sites::RawLock"))),
        "{owners:?}"
    );
    assert!(
        owners
            .iter()
            .any(|(m, o)| m.ends_with("bump") && o.is_none()),
        "{owners:?}"
    );
    assert!(owners.contains(&("go", None)), "{owners:?}");
    let helpers = |name: &str| -> Vec<(String, Option<String>)> {
        let ty = model.types.iter().find(|t| t.name == name).unwrap();
        ty.sync_sites
            .iter()
            .filter(|s| s.method.ends_with("bump"))
            .map(|s| (s.method.clone(), s.helper.clone()))
            .collect()
    };
    assert_eq!(
        helpers("Apart"),
        [(
            "Helper::bump".to_string(),
            Some("sites::Helper".to_string())
        )]
    );
    assert!(
        helpers("Locked").iter().all(|(_, h)| h.is_none()),
        "{:?}",
        helpers("Locked")
    );
    let locked = model.types.iter().find(|t| t.name == "Locked").unwrap();
    assert_eq!(locked.holds, ["sites::Helper"]);
}

/// An atomic whose every write is made holding one lock exclusively says so
/// (`writes_under`): done as a load and a store there, it loses no update, so the mutant
/// that does so is equivalent. Any write outside it, under a read lock, through a helper some
/// method calls unlocked, or on another instance, and it says nothing.
#[test]
fn an_atomic_written_only_under_one_lock_names_that_lock() {
    let cases = [
        // Every write under `m` (also through a helper called under it); a read outside.
        (
            "pub fn a(&self) { let g = self.m.lock().unwrap(); self.n.fetch_add(1, Ordering::SeqCst); drop(g); }
             pub fn b(&self) { let _g = self.m.lock().unwrap(); self.reset(); }
             fn reset(&self) { let _g = self.m.lock().unwrap(); self.n.store(0, Ordering::SeqCst); }
             pub fn c(&self) -> usize { self.n.load(Ordering::SeqCst) }",
            Some("m"),
        ),
        // One write unlocked.
        (
            "pub fn a(&self) { let _g = self.m.lock().unwrap(); self.n.fetch_add(1, Ordering::SeqCst); }
             pub fn b(&self) { self.n.fetch_sub(1, Ordering::SeqCst); }",
            None,
        ),
        // A helper that writes it and that one method calls without the lock.
        (
            "pub fn a(&self) { let _g = self.m.lock().unwrap(); self.bump(); }
             pub fn b(&self) { self.bump(); }
             fn bump(&self) { self.n.fetch_add(1, Ordering::SeqCst); }",
            None,
        ),
        // Writes under a read lock: two can hold it at once.
        (
            "pub fn a(&self) { let _g = self.r.read().unwrap(); self.n.fetch_add(1, Ordering::SeqCst); }",
            None,
        ),
        // Two writes under different locks.
        (
            "pub fn a(&self) { let _g = self.m.lock().unwrap(); self.n.fetch_add(1, Ordering::SeqCst); }
             pub fn b(&self) { let _g = self.r.write().unwrap(); self.n.fetch_add(1, Ordering::SeqCst); }",
            None,
        ),
    ];
    for (methods, want) in cases {
        let source = format!(
            "use std::sync::{{Mutex, RwLock}};\nuse std::sync::atomic::{{AtomicUsize, Ordering}};
pub struct Count {{ m: Mutex<()>, r: RwLock<()>, n: AtomicUsize }}
impl Count {{
    pub fn new() -> Self {{ todo!() }}
    {methods}
}}
"
        );
        let model = analyze_source("sites", "2021", &source);
        let count = model.types.iter().find(|t| t.name == "Count").unwrap();
        let atomic: Vec<Option<&str>> = count
            .sync_sites
            .iter()
            .filter(|s| s.op == SyncOp::Atomic)
            .map(|s| s.writes_under.as_deref())
            .collect();
        let writes = atomic.iter().filter(|w| w.is_some()).count();
        assert!(!atomic.is_empty(), "{methods}");
        match want {
            Some(lock) => assert!(
                atomic.iter().all(|w| *w == Some(lock)),
                "{methods}: {atomic:?}"
            ),
            None => assert_eq!(writes, 0, "{methods}: {atomic:?}"),
        }
    }
}
