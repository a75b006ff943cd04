//! Runtime compiled into cargo covcon's harness and instrumented copies.
//!
//! Two audiences use it:
//! - the instrumented copy of the user's crate calls [`enter`] at the top of every method of a
//!   type under test (an RAII guard stamps its start and its end, even when it unwinds) and
//!   [`schedule_point`] at the analysis's split points, where ConTest-style noise is applied;
//! - the generated harness implements [`Driver`] once per type and hands the drivers to
//!   [`worker_main`], which speaks covcon's JSON-lines protocol on stdin/stdout (the
//!   `covcon-protocol` crate's messages, which covcon writes and reads too; the test cases
//!   they carry are read as this crate's [`TestData`]).
//!
//! Inside a worker, the suffix of thread 0 runs on the worker's main thread and the suffix of
//! thread 1 on one persistent helper thread; both start by spinning on an atomic (briefly, then
//! yielding, then parking), never a `Barrier`. A watchdog thread turns a run that outlives its
//! timeout into a `deadlocked` answer, after which the worker exits.
//!
//! Each file imports only files below it: `hash.rs` (the copy's hash keys) and `stuck.rs` (the
//! blocked-for-good test); `sched.rs` (controlled scheduling); `points.rs` (where the copy
//! calls in on a test thread, and the run's state those calls read); `time.rs` (the virtual
//! clock); `sync.rs` (the copy's locks and condition variables) and `value.rs` (test cases and
//! their arguments); `worker.rs`. This file names their public items and holds those no
//! module uses (`Confined`, the `Debug` capture, what closures saw).

pub mod hash;
mod points;
mod sched;
mod stuck;
mod sync;
pub mod time;
mod value;
mod worker;

pub use points::{at, capturing, drive, enter, schedule_point, spin_loop, untraced, Guard};
pub use sync::{
    acquire, acquire_blocking, acquire_for, acquire_until, attempt, notifying, wait_mut, Attempt,
    Cond,
};
pub use value::{
    arg_at, closure, closure_at, raw_at, Arg, Call, CallError, FromArg, Scope, TestData,
};
pub use worker::{run_path, worker_main, Answer, Constructed, Cx, Driver, Handle, Registered, Run};

/// Whether mutant `id` of the copy's mutant schema is the one this process runs (`cargo
/// covcon mutants`): the `COVCON_MUTANT` environment variable names it. Read once.
#[inline]
pub fn mutant(id: u32) -> bool {
    static ACTIVE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *ACTIVE.get_or_init(|| {
        std::env::var("COVCON_MUTANT")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }) == id
}

/// The ordering a mutant's load and store use (`mutants.rs`): named through the runtime, so a
/// `no_std` crate's copy, which has no `::std`, and an edition-2015 one, which has no `::core`
/// at its root, compile it alike.
#[doc(hidden)]
pub const SEQ_CST: std::sync::atomic::Ordering = std::sync::atomic::Ordering::SeqCst;

/// The type path of the event pair a scope's guard is held between (from the call that handed
/// it out returning to the end of the scope; `generator::Call::scope`): a run blocked inside it
/// blocked while the test held a guard of the type's, which the oracle does not report.
pub const SCOPE_HELD: &str = "(scope)";

/// How far the harness's `state_text!` formats an instance: past the worker's clip length, so
/// the clipped text is the same as the whole text's.
#[doc(hidden)]
pub const STATE_TEXT_LIMIT: usize = worker::MAX_TEXT;

/// `f(value)`: a mutant's stand-in for `fetch_update(set, fetch, f)`, whose closure gets its
/// parameter type from this signature as it got it from `fetch_update`'s.
#[inline]
pub fn apply<T, F: FnOnce(T) -> Option<T>>(value: T, f: F) -> Option<T> {
    f(value)
}

/// What a closure covcon passes saw of its arguments, during the call that passed it: the call's
/// answer under the results oracle, beside what the method returned (scc's `read(&k, |k, v|
/// ..)` answers what the closure returns, which covcon makes up; dashmap's
/// `alter(&k, |k, v| ..)` hands the value over and keeps what the closure answers). Only a
/// closure bound `FnOnce` is made to see (`ParamKind::Closure::shown`): one that may be called
/// for every entry (`retain`, `scan`) visits a structure another thread changes, which no
/// order need repeat, as an iterator's items are not compared. A call's arm starts the record
/// ([`seen_start`]); each closure it passes takes the record's id when it is made
/// ([`seen_id`]) and adds the `Debug` texts of its arguments when called on that thread during
/// that call ([`see`]); the arm ends it ([`seen_end`]). A call whose closures ran more than once
/// (or never) answers only what it returned.
mod seen {
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The record's id, how many times a closure of it was called, and what the first saw.
    struct Record {
        id: u64,
        calls: u32,
        texts: Vec<Option<String>>,
    }

    thread_local! {
        static SEEN: RefCell<Option<Record>> = const { RefCell::new(None) };
    }
    static NEXT: AtomicU64 = AtomicU64::new(1);

    /// Starts this thread's record for the call about to be made, when results are captured.
    pub fn seen_start() {
        let record = crate::capturing().then(|| Record {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            calls: 0,
            texts: Vec::new(),
        });
        SEEN.with(|s| *s.borrow_mut() = record);
    }

    /// The id of this thread's record (0: none), taken by a closure when it is made.
    pub fn seen_id() -> u64 {
        SEEN.with(|s| s.borrow().as_ref().map_or(0, |r| r.id))
    }

    /// A closure made during record `id` was called: its arguments' texts (`texts`, computed
    /// only for its first call on the thread that holds that record).
    pub fn see(id: u64, texts: impl FnOnce() -> Vec<Option<String>>) {
        let first = SEEN.with(|s| {
            let mut s = s.borrow_mut();
            match s.as_mut() {
                Some(r) if r.id == id && id != 0 => {
                    r.calls += 1;
                    r.calls == 1
                }
                _ => false,
            }
        });
        if !first {
            return;
        }
        // Formatting runs user code, which may call covcon's closures again: not borrowed.
        let texts = texts();
        SEEN.with(|s| {
            if let Some(r) = s.borrow_mut().as_mut().filter(|r| r.id == id) {
                r.texts = texts;
            }
        });
    }

    /// Ends this thread's record: the call's answer `text`, with what its closures saw when
    /// they were called exactly once (`Some(1) saw ("a", 1)`, `_` for an argument with
    /// nothing to show). An answer with no text stays none: a reproducer formats answers with
    /// `Debug`, and compares no call without it.
    pub fn seen_end(text: Option<String>) -> Option<String> {
        let record = SEEN.with(|s| s.borrow_mut().take());
        match (record, text) {
            (Some(r), Some(text)) if r.calls == 1 && r.texts.iter().any(Option::is_some) => {
                let saw: Vec<String> = r
                    .texts
                    .into_iter()
                    .map(|t| t.unwrap_or_else(|| "_".to_string()))
                    .collect();
                Some(format!("{text} saw ({})", saw.join(", ")))
            }
            (_, text) => text,
        }
    }
}
pub use seen::{see, seen_end, seen_id, seen_start};

/// The instance of a type that can be sent to another thread but not shared (`Send`, not
/// `Sync`: a work-stealing deque's `Worker`, a `Parker`), kept so only the thread that built it
/// touches it: the worker's main thread, which builds a test's instances and handles, runs its
/// prefix and thread 0's calls. Thread 1 calls only the handles the instance handed out (a
/// `Stealer`), as a program that owns such a value on one thread does. The worker keeps its
/// instances in an `Arc` both test threads can reach; this wrapper makes that allowed for a
/// `Send` type by checking, at every use, that the user is the thread that built it (a
/// generated test that breaks the rule panics with a message naming covcon, never touches the
/// value from the other thread).
pub struct Confined<T> {
    value: T,
    owner: std::thread::ThreadId,
}

// SAFETY: a shared `&Confined<T>` gives access to the value on the thread that built it only
// (`Deref` checks); what moves between threads is the value itself, which is `Send`.
unsafe impl<T: Send> Sync for Confined<T> {}

impl<T> Confined<T> {
    /// `value`, owned by the calling thread.
    pub fn new(value: T) -> Confined<T> {
        Confined {
            value,
            owner: std::thread::current().id(),
        }
    }
}

impl<T> std::ops::Deref for Confined<T> {
    type Target = T;

    fn deref(&self) -> &T {
        assert!(
            std::thread::current().id() == self.owner,
            "covcon: a test touched a value that is not `Sync` from a thread other than its owner's"
        );
        &self.value
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Confined<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

/// Support for the generated harness's `Debug` capture: `(&&Wrap(&x)).covcon_debug(limit)` is
/// `Some(format!("{x:?}"))` (stopped a little past `limit` bytes) when `x`'s type implements `Debug` and `None` otherwise (autoref
/// specialisation, resolved at compile time for the concrete types the harness uses).
pub mod spec {
    use std::fmt::Debug;

    pub struct Wrap<'a, T: ?Sized>(pub &'a T);

    pub trait ViaDebug {
        fn covcon_debug(&self, limit: usize) -> Option<String>;
    }
    /// Formatting stops once the text is longer than `limit` bytes (what is kept of a state
    /// is clipped anyway): a type whose `Debug` lists thousands of preallocated slots costs
    /// the same as a small one.
    impl<T: Debug + ?Sized> ViaDebug for &Wrap<'_, T> {
        fn covcon_debug(&self, limit: usize) -> Option<String> {
            let mut out = UpTo {
                text: String::new(),
                limit,
            };
            // An error is the writer's own stop (or a `Debug` impl's): the text so far.
            let _ = std::fmt::write(&mut out, format_args!("{:?}", self.0));
            Some(out.text)
        }
    }

    pub trait ViaNothing {
        fn covcon_debug(&self, limit: usize) -> Option<String>;
    }
    impl<T: ?Sized> ViaNothing for Wrap<'_, T> {
        fn covcon_debug(&self, _limit: usize) -> Option<String> {
            None
        }
    }

    /// A `String` writer that refuses more once it holds over `limit` bytes.
    struct UpTo {
        text: String,
        limit: usize,
    }

    impl std::fmt::Write for UpTo {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            if self.text.len() > self.limit {
                return Err(std::fmt::Error);
            }
            self.text.push_str(s);
            Ok(())
        }
    }

    /// What a closure's argument shows ([`crate::seen_text!`]): nothing for an iterator (one
    /// over a structure another thread changes need not be a snapshot, as the items of one a
    /// method returns are not compared; before its `Debug`, which a `vec::IntoIter` has);
    /// else its `Debug` text; else `None`.
    pub struct Seen<'a, T: ?Sized>(pub &'a T);

    pub trait SeenDebug {
        fn covcon_seen(&self) -> Option<String>;
    }
    impl<T: Debug + ?Sized> SeenDebug for &Seen<'_, T> {
        fn covcon_seen(&self) -> Option<String> {
            (&&Wrap(self.0)).covcon_debug(crate::STATE_TEXT_LIMIT)
        }
    }

    pub trait SeenItems {
        fn covcon_seen(&self) -> Option<String>;
    }
    impl<I: Iterator> SeenItems for &&Seen<'_, I> {
        fn covcon_seen(&self) -> Option<String> {
            None
        }
    }

    pub trait SeenNothing {
        fn covcon_seen(&self) -> Option<String>;
    }
    impl<T: ?Sized> SeenNothing for Seen<'_, T> {
        fn covcon_seen(&self) -> Option<String> {
            None
        }
    }

    /// `Some(x.clone())` when the type implements `Clone`, else `None`.
    pub struct CloneWrap<'a, T>(pub &'a T);

    pub trait ViaClone<T> {
        fn covcon_clone(&self) -> Option<T>;
    }
    impl<T: Clone> ViaClone<T> for &CloneWrap<'_, T> {
        fn covcon_clone(&self) -> Option<T> {
            Some(self.0.clone())
        }
    }

    pub trait NoClone<T> {
        fn covcon_clone(&self) -> Option<T>;
    }
    impl<T> NoClone<T> for CloneWrap<'_, T> {
        fn covcon_clone(&self) -> Option<T> {
            None
        }
    }
}

/// `Debug` text of an expression's value, or `None` when its type has no `Debug`; with a limit,
/// formatting stops once the text is longer.
#[macro_export]
macro_rules! debug_text {
    ($e:expr) => {
        $crate::debug_text!($e, usize::MAX)
    };
    ($e:expr, $limit:expr) => {{
        #[allow(unused_imports)]
        use $crate::spec::{ViaDebug as _, ViaNothing as _};
        (&&$crate::spec::Wrap(&$e)).covcon_debug($limit)
    }};
}

/// `Debug` text of an instance for its final state: as [`debug_text!`], but formatting stops
/// a little past the longest text the worker sends back, which it clips to.
#[macro_export]
macro_rules! state_text {
    ($e:expr) => {
        $crate::debug_text!($e, $crate::STATE_TEXT_LIMIT)
    };
}

/// `Debug` text of a call's result, when the current request wants results captured (the
/// results oracle) and the type has `Debug`; `None` otherwise.
#[macro_export]
macro_rules! result_text {
    ($e:expr) => {{
        if $crate::capturing() {
            $crate::debug_text!($e)
        } else {
            ::std::option::Option::None
        }
    }};
}

/// What a closure covcon passes sees of its argument `$e`: its `Debug` text, or `None` (an
/// iterator, a type without `Debug`).
#[macro_export]
macro_rules! seen_text {
    ($e:expr) => {{
        #[allow(unused_imports)]
        use $crate::spec::{SeenDebug as _, SeenItems as _, SeenNothing as _};
        (&&&$crate::spec::Seen(&$e)).covcon_seen()
    }};
}

/// A clone of the value, or `None` when its type is not `Clone`.
#[macro_export]
macro_rules! try_clone {
    ($e:expr) => {{
        #[allow(unused_imports)]
        use $crate::spec::{NoClone as _, ViaClone as _};
        (&&$crate::spec::CloneWrap($e)).covcon_clone()
    }};
}

/// Runs a future to completion on the calling thread, parking it while the future is pending
/// (an `async fn` under test is called like any other method). A future that never wakes
/// parks the thread for good, which the worker treats as it treats a blocked call.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closure's arguments as its call's answer: `Debug` texts, `_` for an iterator or a type
    /// without `Debug`; only for one call of the closures during the call that made them, and
    /// only on its record.
    #[test]
    fn a_call_answers_what_its_closure_saw_when_it_was_called_once() {
        struct Opaque;
        let call = |times: usize| {
            seen_start();
            let id = seen_id();
            for i in 0..times {
                let (a, mut b, c) = (7u8, vec!["x", "y"].into_iter(), Opaque);
                see(id, || vec![seen_text!(a), seen_text!(b), seen_text!(c)]);
                // An iterator shows nothing and is not taken.
                assert_eq!(b.next(), Some("x"), "call {i}");
            }
            seen_end(Some("Some(1)".to_string()))
        };
        assert_eq!(call(1).as_deref(), Some("Some(1) saw (7, _, _)"));
        assert_eq!(call(0).as_deref(), Some("Some(1)"));
        assert_eq!(call(2).as_deref(), Some("Some(1)"));
        // A closure made for another call (another thread's, or an earlier one's) adds nothing.
        seen_start();
        let stale = seen_id();
        seen_start();
        let v = 1;
        see(stale, || vec![seen_text!(v)]);
        assert_eq!(seen_end(None), None);
        // Nothing is recorded once ended, or with no record.
        see(seen_id(), || vec![seen_text!(v)]);
        assert_eq!(seen_end(None), None);
    }

    /// A confined value is used on the thread that built it; another thread that reaches it
    /// panics instead of using it.
    #[test]
    fn a_confined_value_is_used_by_its_owner_only() {
        let shared = std::sync::Arc::new(Confined::new(std::cell::Cell::new(3)));
        shared.set(4);
        assert_eq!(format!("{shared:?}"), "Cell { value: 4 }");
        let theirs = std::sync::Arc::clone(&shared);
        let touched = std::thread::spawn(move || theirs.get()).join();
        let message = touched.unwrap_err();
        assert!(message
            .downcast_ref::<&str>()
            .is_some_and(|m| m.starts_with("covcon: a test touched")));
        assert_eq!(shared.get(), 4);
    }
}
