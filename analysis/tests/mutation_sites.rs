//! Mutation sites: where `cargo covcon mutants` can split a critical section, take a lock
//! later, swap two acquisitions, turn a wait loop into an `if`, take a retried compare-and-swap's failure for a
//! success or publish a write before it is made. The tests render each site with the source
//! text its positions cut out.

mod common;

use analysis::{analyze_source, GuardLet, MutationSite};
use common::slice;

/// The first words of the line at a position.
fn line_at(source: &str, at: (u32, u32)) -> String {
    let line = source.lines().nth(at.0 as usize - 1).unwrap_or_default();
    let text: String = line.chars().skip(at.1 as usize).collect();
    text.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn guard(source: &str, g: &GuardLet) -> String {
    format!(
        "{} = {} [{}|{}]",
        slice(source, g.pattern, g.pattern_end),
        slice(source, g.init, g.init_end),
        slice(source, g.receiver, g.receiver_end),
        slice(source, g.receiver_end, g.call_end),
    )
}

fn check(body: &str, expect: &str) {
    let source = format!("use std::sync::{{Mutex, Condvar}};\n{body}");
    let model = analyze_source("mutants", "2021", &source);
    let mut out = String::new();
    for ty in &model.types {
        for site in &ty.mutation_sites {
            let line = match site {
                MutationSite::Section {
                    method,
                    guard: g,
                    splits,
                    nested,
                } => {
                    let at: Vec<String> = splits.iter().map(|&s| line_at(&source, s)).collect();
                    let inside: Vec<String> = nested.iter().map(|&s| line_at(&source, s)).collect();
                    let mut line = format!(
                        "{method}: section {} split before: {}",
                        guard(&source, g),
                        at.join(" / ")
                    );
                    if !inside.is_empty() {
                        line.push_str(&format!(" inside: {}", inside.join(" / ")));
                    }
                    line
                }
                MutationSite::ReleaseEarly {
                    method,
                    guard: g,
                    at,
                } => format!(
                    "{method}: release {} before: {}",
                    guard(&source, g),
                    line_at(&source, *at)
                ),
                MutationSite::LockOrder {
                    method,
                    first,
                    second,
                } => format!(
                    "{method}: order {} then {}",
                    guard(&source, first),
                    guard(&source, second)
                ),
                MutationSite::WaitLoop {
                    method,
                    at,
                    body_end,
                } => format!(
                    "{method}: wait loop `{}` ends with `{}`",
                    line_at(&source, (at.line, at.column)),
                    line_at(&source, *body_end)
                ),
                MutationSite::AcquireLate {
                    method,
                    guard: g,
                    stmt,
                    stmt_end,
                    init,
                } => {
                    let mut line = format!(
                        "{method}: acquire {} after `{}`",
                        guard(&source, g),
                        slice(&source, *stmt, *stmt_end)
                    );
                    if let Some((from, to)) = init {
                        line.push_str(&format!(" init `{}`", slice(&source, *from, *to)));
                    }
                    line
                }
                MutationSite::RetryCas {
                    method,
                    at,
                    call_end,
                } => format!(
                    "{method}: retry `{}`",
                    slice(&source, (at.line, at.column), *call_end)
                ),
                MutationSite::Publish {
                    method,
                    write,
                    write_end,
                    publish,
                    receiver_end,
                    call_end,
                    publish_end,
                } => format!(
                    "{method}: publish `{}` after `{}` [{}|{}]",
                    slice(&source, *publish, *publish_end),
                    slice(&source, (write.line, write.column), *write_end),
                    slice(&source, *publish, *receiver_end),
                    slice(&source, *receiver_end, *call_end),
                ),
            };
            out.push_str(&line);
            out.push('\n');
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
fn a_guard_used_before_a_statement_boundary_and_after_it_can_be_split_there_and_two_lets_swapped() {
    check(
        r#"
pub struct Stock { items: Mutex<Vec<u32>>, total: Mutex<u64> }
impl Stock {
    pub fn new() -> Self { Stock { items: Mutex::new(vec![]), total: Mutex::new(0) } }
    /// Split after the read of `len` (the push uses it later); not after `unrelated`, whose
    /// statement does not use the guard, nor after the `drop`.
    pub fn add(&self, x: u32) {
        let mut items = self.items.lock().unwrap();
        let n = items.len();
        let unrelated = x + 1;
        items.push(unrelated + n as u32);
        drop(items);
        let mut t = self.total.lock().expect("total");
        *t += 1;
    }
    /// No split: nothing before `let b` uses `a`. The two acquisitions can be swapped.
    pub fn both(&self) -> u64 {
        let a = self.items.lock().unwrap();
        let b = self.total.lock().unwrap();
        a.len() as u64 + *b
    }
}
"#,
        "add: section mut items = self.items.lock().unwrap() [self.items|.lock()] split before: let unrelated =
         both: order a = self.items.lock().unwrap() [self.items|.lock()] then b = self.total.lock().unwrap() [self.total|.lock()]",
    );
}

#[test]
fn a_while_loop_that_waits_is_a_wait_loop_and_a_closure_is_not_followed() {
    check(
        r#"
pub struct Queue { items: Mutex<Vec<u32>>, ready: Condvar }
impl Queue {
    pub fn new() -> Self { Queue { items: Mutex::new(vec![]), ready: Condvar::new() } }
    pub fn take(&self) -> u32 {
        let mut items = self.items.lock().unwrap();
        while items.is_empty() {
            items = self.ready.wait(items).unwrap();
        }
        items.pop().unwrap()
    }
    pub fn later(&self) -> impl Fn() + '_ {
        move || { let g = self.items.lock().unwrap(); let n = g.len(); let _ = (n, g.len()); }
    }
}
"#,
        "take: section mut items = self.items.lock().unwrap() [self.items|.lock()] split before: items.pop().unwrap()
         take: wait loop `while items.is_empty() {` ends with `}`",
    );
}

#[test]
fn a_check_then_act_in_an_if_or_match_splits_inside_its_blocks_and_a_rebinding_ends_the_guard() {
    check(
        r#"
pub struct Table { rows: Mutex<Vec<u32>>, slot: Mutex<Option<Vec<u32>>> }
impl Table {
    pub fn new() -> Self { Table { rows: Mutex::new(vec![]), slot: Mutex::new(None) } }
    /// The `Some` arm acts on the row the scrutinee found; `None` does not use the guard.
    pub fn remove(&self, x: u32) -> bool {
        let mut rows = self.rows.lock().unwrap();
        match rows.iter().position(|&r| r == x) {
            Some(i) => { rows.remove(i); true }
            None => { false }
        }
    }
    /// Both branches act under the guard, in the guard's last statement; not the first `if`,
    /// after which the guard is used again (a guard moved into the block is gone after it),
    /// nor the loop's body (it would be gone on the loop's next round).
    pub fn put(&self, x: u32) {
        let mut rows = self.rows.lock().unwrap();
        if rows.is_empty() { rows.push(0) }
        while rows.len() > 3 { if rows.is_empty() { rows.pop(); } }
        if rows.contains(&x) { rows.retain(|&r| r != x) } else { rows.push(x) }
    }
    /// After `let slot = slot.as_mut()..`, `slot` is no guard: no split after it.
    pub fn fill(&self) -> Option<usize> {
        let mut slot = self.slot.lock().unwrap();
        let slot = slot.as_mut()?;
        slot.push(1);
        Some(slot.len())
    }
}
"#,
        "remove: section mut rows = self.rows.lock().unwrap() [self.rows|.lock()] split before:  inside: rows.remove(i); true }
         put: section mut rows = self.rows.lock().unwrap() [self.rows|.lock()] split before: while rows.len() > / if rows.contains(&x) { inside: rows.retain(|&r| r != / rows.push(x) }",
    );
}

#[test]
fn statements_after_a_guards_last_use_that_touch_self_can_be_moved_out_of_its_section() {
    check(
        r#"
use std::sync::atomic::{AtomicUsize, Ordering};
pub struct Chan { queue: Mutex<Vec<u32>>, len: AtomicUsize }
impl Chan {
    pub fn new() -> Self { Chan { queue: Mutex::new(vec![]), len: AtomicUsize::new(0) } }
    /// The count is changed after the push, still under the lock.
    pub fn send(&self, v: u32) -> bool {
        let mut queue = self.queue.lock().unwrap();
        queue.push(v);
        self.len.fetch_add(1, Ordering::SeqCst);
        true
    }
    /// Nothing after the last use touches `self`; and a guard dropped by hand is left alone.
    pub fn peek(&self) -> bool {
        let queue = self.queue.lock().unwrap();
        let empty = queue.is_empty();
        !empty
    }
    pub fn clear(&self) {
        let mut queue = self.queue.lock().unwrap();
        queue.clear();
        drop(queue);
        self.len.store(0, Ordering::SeqCst);
    }
}
"#,
        "send: release mut queue = self.queue.lock().unwrap() [self.queue|.lock()] before: self.len.fetch_add(1, Ordering::SeqCst);",
    );
}

#[test]
fn a_compare_exchange_in_a_loop_is_a_retry_and_one_outside_any_loop_or_in_a_closure_is_not() {
    check(
        r#"
use std::sync::atomic::{AtomicUsize, Ordering::*};
pub struct Claims { next: AtomicUsize, flag: AtomicUsize }
impl Claims {
    pub fn new() -> Self { Claims { next: AtomicUsize::new(0), flag: AtomicUsize::new(0) } }
    pub fn claim(&self) -> usize {
        let mut n = self.next.load(Acquire);
        loop {
            match self.next.compare_exchange_weak(n, n + 1, AcqRel, Acquire) {
                Ok(_) => return n,
                Err(now) => n = now,
            }
        }
    }
    pub fn spin(&self) {
        while self.flag.compare_exchange(0, 1, Acquire, Relaxed).is_err() {}
    }
    pub fn try_once(&self) -> bool {
        self.flag.compare_exchange(0, 1, Acquire, Relaxed).is_ok()
    }
    pub fn later(&self) {
        for _ in 0..2 {
            let f = || self.flag.compare_exchange(0, 1, Acquire, Relaxed);
            let _ = f();
        }
    }
}
"#,
        "claim: retry `self.next.compare_exchange_weak(n, n + 1, AcqRel, Acquire)`
         spin: retry `self.flag.compare_exchange(0, 1, Acquire, Relaxed)`",
    );
}

#[test]
fn a_write_then_an_atomic_write_to_another_receiver_is_a_publication_and_one_to_the_same_is_not() {
    check(
        r#"
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
pub struct Slot { value: AtomicU64, cell: UnsafeCell<u64>, ready: AtomicBool, count: AtomicU64 }
unsafe impl Sync for Slot {}
impl Slot {
    pub fn new() -> Self {
        Slot { value: AtomicU64::new(0), cell: UnsafeCell::new(0), ready: AtomicBool::new(false), count: AtomicU64::new(0) }
    }
    /// Three publications: the value, then the flag; the cell, then the count; the cell
    /// through a closure, then the flag.
    pub fn put(&self, v: u64) {
        self.value.store(v, Relaxed);
        self.ready.store(true, Release);
        unsafe { *self.cell.get() = v };
        self.count.fetch_add(1, Release);
        self.with_mut(|p| unsafe { p.write(v) });
        self.ready.store(true, Release);
    }
    fn with_mut(&self, f: impl FnOnce(*mut u64)) { f(self.cell.get()) }
    /// None: the same atomic twice, an answer used, a `let` first.
    pub fn others(&self, v: u64) -> u64 {
        self.value.store(v, Relaxed);
        self.value.fetch_add(1, Release);
        let old = self.count.swap(0, AcqRel);
        let seen = self.ready.swap(true, AcqRel);
        old + seen as u64
    }
}
"#,
        "put: publish `self.ready.store(true, Release);` after `self.value.store(v, Relaxed);` [self.ready|.store(true, Release)]
         put: publish `self.count.fetch_add(1, Release);` after `unsafe { *self.cell.get() = v };` [self.count|.fetch_add(1, Release)]
         put: publish `self.ready.store(true, Release);` after `self.with_mut(|p| unsafe { p.write(v) });` [self.ready|.store(true, Release)]",
    );
}

#[test]
fn a_statement_after_a_guard_that_calls_into_self_without_the_guard_can_run_before_the_lock() {
    check(
        r#"
use std::sync::atomic::{AtomicU64, Ordering};
pub struct Store { items: Mutex<Vec<u64>>, len: AtomicU64, cap: usize }
impl Store {
    pub fn new() -> Self { Store { items: Mutex::new(vec![]), len: AtomicU64::new(0), cap: 4 } }
    /// The count read after the lock, and an increment after another lock: both can move.
    pub fn push(&self, x: u64) -> u64 {
        let mut items = self.items.lock().unwrap();
        let n = self.len.load(Ordering::SeqCst);
        items.push(x + n);
        self.len.fetch_add(1, Ordering::SeqCst);
        n
    }
    /// None: the next statement uses the guard, reads a plain field only, or is the tail.
    pub fn others(&self) -> usize {
        let items = self.items.lock().unwrap();
        let k = items.len();
        drop(items);
        let items = self.items.lock().unwrap();
        let c = self.cap;
        let _ = c + items.len();
        let last = self.items.lock().unwrap();
        self.len.load(Ordering::SeqCst) as usize + k + last.len()
    }
}
"#,
        "push: release mut items = self.items.lock().unwrap() [self.items|.lock()] before: self.len.fetch_add(1, Ordering::SeqCst);
         push: acquire mut items = self.items.lock().unwrap() [self.items|.lock()] after `let n = self.len.load(Ordering::SeqCst);` init `self.len.load(Ordering::SeqCst)`
         others: release items = self.items.lock().unwrap() [self.items|.lock()] before: self.len.load(Ordering::SeqCst) as usize
         others: section items = self.items.lock().unwrap() [self.items|.lock()] split before: let last =",
    );
}
