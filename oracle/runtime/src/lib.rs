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

pub mod hash;
mod sched;
mod stuck;
pub mod time;
mod value;
mod worker;

pub use value::{
    arg_at, closure, closure_at, raw_at, Arg, Call, CallError, FromArg, Scope, TestData,
};
pub use worker::{run_path, worker_main, Answer, Constructed, Cx, Driver, Handle, Registered, Run};

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The global logical clock every start and end is stamped from.
static CLOCK: AtomicU64 = AtomicU64::new(1);

/// Role of a thread that is not one of the worker's test threads.
const NO_ROLE: u8 = u8::MAX;

/// One start or end of an instrumented method call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawEvent {
    pub(crate) clock: u64,
    pub(crate) type_path: &'static str,
    pub(crate) method: &'static str,
    pub(crate) start: bool,
}

/// Most events a role's buffer keeps in one run before it records only the outermost calls'
/// starts and ends (see [`enter`]). A call that spins on a lock of its own type (a spin
/// lock's `lock` inside a barrier's `wait`) starts and ends millions of nested calls a
/// second; recorded, they took gigabytes and a JSON answer of as many events.
pub(crate) const MAX_NESTED_EVENTS: usize = 1 << 14;

/// Most events a role's buffer keeps in one run at all. The outermost calls are kept past
/// [`MAX_NESTED_EVENTS`] (a test's own calls are a handful), but code the copy does not
/// instrument can call instrumented methods from outside any call: dropping moka 0.9's
/// `SegmentedCache` of a few million segments in a prefix (a drawn `num_segments`) recorded
/// each segment's `weighted_size`, and answers of hundreds of megabytes held a campaign minutes
/// past its budget.
pub(crate) const MAX_EVENTS: usize = 1 << 16;

/// Events per role: 0 and 1 are the suffix threads, 2 the prefix. Each thread only locks its
/// own buffer, so the buffers add no synchronisation between the two suffix threads.
pub(crate) static BUFFERS: [Mutex<Vec<RawEvent>>; 3] = [
    Mutex::new(Vec::new()),
    Mutex::new(Vec::new()),
    Mutex::new(Vec::new()),
];

/// Whether the current request wants the `Debug` texts of results and final state
/// ([`result_text!`]); only the results oracle reads them.
pub(crate) static CAPTURE: AtomicBool = AtomicBool::new(true);

/// Whether the current request wants the `Debug` texts of call results (see [`result_text!`]).
#[doc(hidden)]
pub fn capturing() -> bool {
    CAPTURE.load(Ordering::Relaxed)
}

/// Whether the starts and ends of calls are noise points too: in a paced sequential order,
/// which must wait where a controlled run hands the turn over.
pub(crate) static PACE_CALLS: AtomicBool = AtomicBool::new(false);

/// Whether a timed acquisition timed out, or an attempt ([`attempt`]) found its lock held,
/// since the worker last took it ([`take_timed_out`]): what the call answered then is one no
/// sequential order gives (one thread alone never finds the lock held), so the results oracle
/// does not judge that run.
static TIMED_OUT: AtomicBool = AtomicBool::new(false);

/// Whether a timed acquisition timed out, or an attempt found its lock held, since the last
/// call, which clears it.
pub(crate) fn take_timed_out() -> bool {
    TIMED_OUT.swap(false, Ordering::Relaxed)
}

/// Noise probabilities for the current run, as `f64` bits (yield, spin, sleep).
pub(crate) static NOISE: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];

thread_local! {
    static ROLE: Cell<u8> = const { Cell::new(NO_ROLE) };
    /// Instrumented calls this thread is inside: 0 when the next call is one of the test's own.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static RNG: Cell<u64> = const { Cell::new(0x9E37_79B9_7F4A_7C15) };
    /// The last panic seen on this thread: message, location, clock.
    pub(crate) static LAST_PANIC: RefCell<Option<(String, Option<String>, u64)>> =
        const { RefCell::new(None) };
}

/// Guard returned by [`enter`]: records the end of the call when dropped.
#[must_use]
pub struct Guard {
    role: u8,
    type_path: &'static str,
    method: &'static str,
    /// Whether the start was recorded: then so is the end, and a run's events stay balanced.
    recorded: bool,
}

/// Records the start of `type_path::method` on this thread; the end is recorded when the
/// returned guard is dropped, also during unwinding. Does nothing on threads that are not a
/// worker's test threads. A nested call (inside another instrumented call) is recorded only
/// while its role's buffer holds fewer than [`MAX_NESTED_EVENTS`]; the outermost calls always
/// are, so coverage of the test's own calls and the call a stuck run is in stay known.
#[inline]
pub fn enter(type_path: &'static str, method: &'static str) -> Guard {
    let role = ROLE.with(Cell::get);
    let mut recorded = false;
    if role != NO_ROLE {
        let depth = DEPTH.with(|d| d.replace(d.get().saturating_add(1)));
        if depth == 0 {
            stuck::note_progress(role);
        }
        recorded = record(role, type_path, method, true, depth == 0);
        sched::point(role);
        if PACE_CALLS.load(Ordering::Relaxed) {
            schedule_point();
        }
    }
    Guard {
        role,
        type_path,
        method,
        recorded,
    }
}

impl Drop for Guard {
    #[inline]
    fn drop(&mut self) {
        if self.role != NO_ROLE {
            if DEPTH.with(|d| d.replace(d.get().saturating_sub(1))) <= 1 {
                stuck::note_progress(self.role);
            }
            if self.recorded {
                record(self.role, self.type_path, self.method, false, true);
            }
            sched::point(self.role);
            if PACE_CALLS.load(Ordering::Relaxed) {
                schedule_point();
            }
        }
    }
}

/// Records one event in `role`'s buffer unless it is a start and the buffer is full: past
/// [`MAX_NESTED_EVENTS`] for a nested call's, past [`MAX_EVENTS`] for an outermost one's
/// (`always`); answers whether it did.
fn record(
    role: u8,
    type_path: &'static str,
    method: &'static str,
    start: bool,
    always: bool,
) -> bool {
    let mut buffer = BUFFERS[role as usize]
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // Only starts are refused: the end of a recorded start always is, so the record stays
    // balanced (and holds at most twice the cap).
    if start
        && buffer.len()
            >= if always {
                MAX_EVENTS
            } else {
                MAX_NESTED_EVENTS
            }
    {
        return false;
    }
    let clock = CLOCK.fetch_add(1, Ordering::SeqCst);
    buffer.push(RawEvent {
        clock,
        type_path,
        method,
        start,
    });
    true
}

/// A blocking lock acquisition of the instrumented copy: `self.state.lock()` is written
/// `::covcon_rt::acquire(&self.state, |l| l.try_lock(), |l| l.lock())`. Outside a controlled
/// run it is the blocking call. In one, it is a schedule point, and a thread that finds the
/// lock held does not sleep in the kernel (where the release would wake it at a moment no
/// schedule fixes): it hands its turn to the other thread and tries again when the strategy
/// next chooses it. When the other thread cannot run either (finished, or blocked itself), it
/// blocks for real, so a deadlock still ends with both threads asleep, as the stuck test
/// expects.
#[inline]
pub fn acquire<'a, L: ?Sized, A: Attempt>(
    lock: &'a L,
    mut attempt: impl FnMut(&'a L) -> A,
    block: impl FnOnce(&'a L) -> A::Held,
) -> A::Held {
    let role = ROLE.with(Cell::get);
    if role >= 2 || !sched::on() {
        return block(lock);
    }
    sched::point(role);
    loop {
        if !sched::on() {
            return block(lock);
        }
        if let Some(held) = attempt(lock).held() {
            return held;
        }
        if !sched::busy(role) {
            return block(lock);
        }
    }
}

/// A timed acquisition of the instrumented copy: `self.state.try_lock_for(d)` is written
/// `::covcon_rt::acquire_for(&self.state, |l| l.try_lock(), |l, d| l.try_lock_for(d), d)`.
/// In a controlled run, a schedule point; a thread that finds the lock held passes one more
/// point there: when the strategy hands the turn to the other thread, it waits (and tries
/// again when it gets the turn back), and when the strategy keeps it running, or the other
/// cannot run, the wait has run out: it times out, its call's virtual clock moved on by
/// `timeout`. So whether, and when, a timed acquisition times out is the schedule's choice,
/// explored and replayed like a preemption. Outside control, the timed call itself, waiting
/// for real at most [`REAL_WAIT_CAP`] inside a test's call (a timeout is a legal answer of a
/// program whose other thread was slow), the clock moved by the whole timeout when it times
/// out.
#[inline]
pub fn acquire_for<'a, L: ?Sized, G>(
    lock: &'a L,
    mut attempt: impl FnMut(&'a L) -> Option<G>,
    timed: impl FnOnce(&'a L, Duration) -> Option<G>,
    timeout: Duration,
) -> Option<G> {
    let role = ROLE.with(Cell::get);
    if role < 2 && sched::on() {
        sched::point(role);
        loop {
            if let Some(held) = attempt(lock) {
                return Some(held);
            }
            if !sched::on() {
                break;
            }
            if !sched::switched_at_point(role) {
                time::advance(timeout);
                TIMED_OUT.store(true, Ordering::Relaxed);
                return None;
            }
        }
    }
    let got = timed(lock, real_wait(timeout));
    if got.is_none() {
        time::advance(timeout);
        TIMED_OUT.store(true, Ordering::Relaxed);
    }
    got
}

/// A timed acquisition up to a deadline (`lock.try_lock_until(deadline)`): as [`acquire_for`],
/// the time left being what lies between the copy's clock and `deadline`. `timed` is the
/// lock's `_for` acquisition, given a real wait of at most what is left.
pub fn acquire_until<'a, L: ?Sized, G>(
    lock: &'a L,
    attempt: impl FnMut(&'a L) -> Option<G>,
    timed: impl FnOnce(&'a L, Instant) -> Option<G>,
    deadline: Instant,
) -> Option<G> {
    let left = deadline.saturating_duration_since(time::now());
    acquire_for(
        lock,
        attempt,
        |lock, wait| timed(lock, Instant::now() + wait),
        left,
    )
}

/// What a non-blocking acquisition answers: the guard (as the blocking call would answer
/// it), or `None` when the lock is held.
pub trait Attempt {
    /// What the blocking acquisition returns.
    type Held;
    fn held(self) -> Option<Self::Held>;
    /// Whether it found the lock held (as [`attempt`] reads it).
    fn contended(&self) -> bool;
}

/// parking_lot's, lock_api's and spin's `try_lock`, `try_read`, `try_write`.
impl<G> Attempt for Option<G> {
    type Held = G;
    fn held(self) -> Option<G> {
        self
    }
    fn contended(&self) -> bool {
        self.is_none()
    }
}

/// std's `try_lock`, `try_read`, `try_write`: a poisoned lock is acquired (and answered
/// poisoned, as `lock()` would).
impl<G> Attempt for Result<G, std::sync::TryLockError<G>> {
    type Held = std::sync::LockResult<G>;
    fn held(self) -> Option<std::sync::LockResult<G>> {
        match self {
            Ok(guard) => Some(Ok(guard)),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(Err(poisoned)),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }
    fn contended(&self) -> bool {
        matches!(self, Err(std::sync::TryLockError::WouldBlock))
    }
}

/// A lock written by hand on a `bool` flag: `flag.compare_exchange(false, true, ..)` failing
/// found the flag set by the other thread's call (the analysis takes only a flag the same
/// function releases, outside any loop).
impl Attempt for Result<bool, bool> {
    type Held = bool;
    fn held(self) -> Option<bool> {
        self.ok()
    }
    fn contended(&self) -> bool {
        self.is_err()
    }
}

/// An acquisition that does not wait, in the instrumented copy: `self.m.try_lock()` is
/// written `::covcon_rt::attempt(&self.m, |l| l.try_lock())`. In a controlled run, a schedule
/// point just before it. When it finds the lock held the run says so ([`take_timed_out`]),
/// whatever thread made it: a call that answers by contention (`try_push` answering `false`
/// while the other thread holds the queue) is not a wrong result.
#[inline]
pub fn attempt<'a, L: ?Sized, R: Attempt>(lock: &'a L, attempt: impl FnOnce(&'a L) -> R) -> R {
    let role = ROLE.with(Cell::get);
    if role < 2 && sched::on() {
        sched::point(role);
    }
    let got = attempt(lock);
    if got.contended() {
        TIMED_OUT.store(true, Ordering::Relaxed);
    }
    got
}

/// `core::hint::spin_loop()` (or `std::hint::spin_loop()`, `spin_loop_hint()`) of the
/// instrumented copy: the pause, and a note that the test thread busy-waits. One that spins
/// on, without finishing a call of the test or reading the clock, counts as waiting for good
/// (`stuck.rs`), so a spin lock or barrier nothing can release ends its run in milliseconds.
///
/// In a run the watchdog ends as blocked for good (`worker::abandon`), the spinning thread
/// leaves its call here by unwinding, as a condition variable's waiter does, so the worker
/// answers the deadlock and lives on; not while it unwinds already (a `Drop` that spins).
#[inline]
pub fn spin_loop() {
    let role = ROLE.with(Cell::get);
    if role != NO_ROLE {
        stuck::note_spin(role);
        if worker::abandoning() && !std::thread::panicking() {
            std::panic::resume_unwind(Box::new(worker::Abandoned));
        }
    }
    std::hint::spin_loop();
}

/// The current test thread read the clock: a busy wait that does is waiting for time, which
/// passes, not for good.
pub(crate) fn clock_read() {
    let role = ROLE.with(Cell::get);
    if role != NO_ROLE {
        stuck::note_progress(role);
    }
}

/// An atomic operation of the instrumented copy: `self.count.fetch_add(1, o)` is written
/// `::covcon_rt::at(&self.count).fetch_add(1, o)`. In a controlled run, a schedule point just
/// before the operation; otherwise nothing.
#[inline]
pub fn at<T: ?Sized>(place: &T) -> &T {
    let role = ROLE.with(Cell::get);
    if role < 2 && sched::on() {
        sched::point(role);
    }
    place
}

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

/// A notify of the instrumented copy: `self.ready.notify_one()` is written
/// `::covcon_rt::notifying(&self.ready, false).notify_one()`. In a controlled run, the other
/// test thread, if it waits on this condition variable ([`Cond`]), is marked notified (it may
/// run from now on), and the notify is a schedule point; the real notify follows, for waits
/// outside control. Otherwise nothing.
#[inline]
pub fn notifying(condvar: &std::sync::Condvar, _all: bool) -> &std::sync::Condvar {
    let role = ROLE.with(Cell::get);
    if role < 2 && sched::on() {
        // Two test threads: a notify of either kind wakes the one other waiter there can be.
        sched::notify(role, address(condvar));
        sched::point(role);
    }
    condvar
}

/// How many notifies std's condition variable has had, where that can be read: on Linux it
/// is one futex word that every `notify_one` and `notify_all` increments, waiter or not
/// (std's `sys::sync::condvar::futex`). `None` where its size says it is something else.
/// It tells a wait that no notify at all reached (a notify missing from the code: wait for
/// real, as the program would) from one a notify the copy did not see may have reached (a
/// thread of the user's own: return, as that notify would have made it).
pub(crate) fn notify_count(condvar: &std::sync::Condvar) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        use std::sync::atomic::AtomicU32;
        let word = std::mem::size_of::<std::sync::Condvar>() == std::mem::size_of::<AtomicU32>()
            && std::mem::align_of::<std::sync::Condvar>() == std::mem::align_of::<AtomicU32>();
        if word {
            // SAFETY: on Linux, std's Condvar is exactly one `AtomicU32` (its futex), as the
            // size and alignment checked above agree; it is only read, atomically, as std
            // itself reads it.
            let futex = unsafe { &*(condvar as *const std::sync::Condvar).cast::<AtomicU32>() };
            return Some(futex.load(Ordering::SeqCst));
        }
    }
    let _ = condvar;
    None
}

fn address<C: ?Sized>(value: &C) -> usize {
    (value as *const C).cast::<u8>() as usize
}

/// A condition variable's wait in the instrumented copy: `self.ready.wait(items)`, where
/// `items` guards `self.items`, is written `::covcon_rt::Cond(&self.ready,
/// &self.items).wait(items)`. Outside a controlled run every method is std's. In one, the wait
/// releases the lock, hands the turn to the other thread and runs again when the strategy
/// chooses it after a notify ([`notifying`]) — or, for a timed wait, at any point, which is
/// its timeout — then re-takes the lock as [`acquire`] does, so the wake-up, and who gets the
/// lock first after it, are the schedule's choices like any other. A wait no one can end
/// (untimed, the other thread finished or blocked) waits for real; so does one whose guard is
/// not of the mutex the analysis named (its data does not lie inside that mutex). A wait no
/// test thread can end any more (the other finished or blocked without a notify the copy saw)
/// waits for real when no notify reached the condition variable at all since it began
/// ([`notify_count`]: a notify missing from the code deadlocks as it would), and otherwise
/// returns as a spurious wake-up, which std allows — as does a wait during which control
/// ended: a notify the copy did not see (a thread of the user's own) is never lost.
pub struct Cond<'a, T>(pub &'a std::sync::Condvar, pub &'a std::sync::Mutex<T>);

/// The condition variable each test thread is waiting on for real with no timeout (its
/// address, 0 for none): what the watchdog's wake-up probe ([`wake_waiters`]) notifies. The
/// third slot is the worker's main thread outside a test thread's role (building the
/// instances, running the prefix), which only the watchdog's ending of a blocked run wakes.
static WAITING: [Mutex<usize>; 3] = [const { Mutex::new(0) }; 3];

thread_local! {
    /// Whether this is the worker's main thread (the one that runs the setup).
    static SETUP_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as the worker's main thread.
pub(crate) fn mark_setup_thread() {
    SETUP_THREAD.with(|s| s.set(true));
}

/// A test thread's untimed wait on `cv`, for real, registered in [`WAITING`] while it lasts.
fn waiting_for_real<R>(cv: &std::sync::Condvar, wait: impl FnOnce() -> R) -> R {
    let role = ROLE.with(Cell::get);
    let index = if role == NO_ROLE && SETUP_THREAD.with(Cell::get) {
        2
    } else {
        usize::from(role)
    };
    let Some(slot) = WAITING.get(index) else {
        return wait();
    };
    *slot.lock().unwrap_or_else(|p| p.into_inner()) = address(cv);
    let result = wait();
    *slot.lock().unwrap_or_else(|p| p.into_inner()) = 0;
    if worker::abandoning() {
        // The run is blocked for good and the watchdog woke this wait to end it: leave the
        // call by unwinding (no panic message; the worker answers the deadlock).
        drop(result);
        std::panic::resume_unwind(Box::new(worker::Abandoned));
    }
    result
}

/// How many test threads wait for real on a condition variable of the copy, registered in
/// [`WAITING`].
pub(crate) fn registered_waiters() -> usize {
    WAITING
        .iter()
        .filter(|slot| *slot.lock().unwrap_or_else(|p| p.into_inner()) != 0)
        .count()
}

/// The watchdog's probe of a run blocked for good: a spurious wake-up (which std allows at
/// any time, so correct code waits in a loop and survives it) of every test thread waiting
/// for real, untimed, on a condition variable of the copy. Answers which threads were woken
/// (bits 0 and 1). A woken thread that then gets on with its call was waiting for a notify
/// that never came although what it waited for already held: a lost wake-up.
pub(crate) fn wake_waiters() -> u8 {
    wake(&WAITING[..2])
}

/// Wakes every registered waiter, the setup's too: the watchdog ending a blocked run.
pub(crate) fn wake_all_waiters() {
    wake(&WAITING);
}

fn wake(slots: &[Mutex<usize>]) -> u8 {
    let mut woken = 0;
    for (role, slot) in slots.iter().enumerate() {
        // Held while notifying: the waiting thread clears its slot under the same lock before
        // its wait's borrow of the condition variable ends, so the address is alive here.
        let cv = slot.lock().unwrap_or_else(|p| p.into_inner());
        if *cv != 0 {
            // SAFETY: a non-zero slot holds the address of a `Condvar` a test thread is
            // waiting on through a `&Condvar` that outlives the slot's entry (see above).
            unsafe { &*(*cv as *const std::sync::Condvar) }.notify_all();
            woken |= 1 << role;
        }
    }
    woken
}

type Guard_<'a, T> = std::sync::MutexGuard<'a, T>;

impl<'a, T> Cond<'a, T> {
    pub fn wait(self, guard: Guard_<'a, T>) -> std::sync::LockResult<Guard_<'a, T>> {
        match self.controlled_wait(guard, false) {
            Ok(woken) => woken
                .map(|(guard, _)| guard)
                .map_err(|p| std::sync::PoisonError::new(p.into_inner().0)),
            Err(guard) => waiting_for_real(self.0, move || self.0.wait(guard)),
        }
    }

    pub fn wait_timeout(
        self,
        guard: Guard_<'a, T>,
        timeout: Duration,
    ) -> std::sync::LockResult<(Guard_<'a, T>, std::sync::WaitTimeoutResult)> {
        match self.controlled_wait(guard, true) {
            Ok(woken) => {
                if matches!(&woken, Ok((_, true))) {
                    time::advance(timeout);
                }
                self.timeout_result(woken)
            }
            Err(guard) => {
                let waited = self.0.wait_timeout(guard, real_wait(timeout));
                timed_out_after(&waited, timeout);
                waited
            }
        }
    }

    pub fn wait_while<F: FnMut(&mut T) -> bool>(
        self,
        mut guard: Guard_<'a, T>,
        mut condition: F,
    ) -> std::sync::LockResult<Guard_<'a, T>> {
        while condition(&mut *guard) {
            guard = Cond(self.0, self.1).wait(guard)?;
        }
        Ok(guard)
    }

    pub fn wait_timeout_while<F: FnMut(&mut T) -> bool>(
        self,
        mut guard: Guard_<'a, T>,
        timeout: Duration,
        mut condition: F,
    ) -> std::sync::LockResult<(Guard_<'a, T>, std::sync::WaitTimeoutResult)> {
        if !controlled() {
            let waited = self
                .0
                .wait_timeout_while(guard, real_wait(timeout), condition);
            timed_out_after(&waited, timeout);
            return waited;
        }
        loop {
            if !condition(&mut *guard) {
                return self.timeout_result(Ok((guard, false)));
            }
            let (woken, result) = Cond(self.0, self.1).wait_timeout(guard, timeout)?;
            guard = woken;
            if result.timed_out() {
                return self.timeout_result(Ok((guard, true)));
            }
        }
    }

    /// Waits under control: `Err(guard)` when this wait cannot be controlled (then it is
    /// std's), else the re-taken guard and whether the wait timed out.
    #[allow(clippy::type_complexity)]
    fn controlled_wait(
        &self,
        guard: Guard_<'a, T>,
        timed: bool,
    ) -> Result<std::sync::LockResult<(Guard_<'a, T>, bool)>, Guard_<'a, T>> {
        let role = ROLE.with(Cell::get);
        let data = address(&*guard);
        let mutex = address(self.1);
        let of_mutex = mutex <= data && data <= mutex + std::mem::size_of_val(self.1);
        if role >= 2 || !of_mutex || !sched::can_wait(role, timed) {
            return Err(guard);
        }
        let notified_before = notify_count(self.0);
        drop(guard);
        let woken = sched::cond_wait(role, address(self.0), timed);
        let lock = acquire(self.1, |m| m.try_lock(), |m| m.lock());
        let unreached = notified_before.is_some() && notify_count(self.0) == notified_before;
        if woken == sched::Woken::Abandoned && unreached {
            // No notify at all since the wait began, and no test thread left to send one:
            // the program would wait on, so this wait does, for real.
            return Err(lock.unwrap_or_else(std::sync::PoisonError::into_inner));
        }
        let timed_out = woken == sched::Woken::TimedOut;
        Ok(match lock {
            Ok(guard) => Ok((guard, timed_out)),
            Err(poisoned) => Err(std::sync::PoisonError::new((
                poisoned.into_inner(),
                timed_out,
            ))),
        })
    }

    /// std's result of a timed wait, made by std (a `WaitTimeoutResult` cannot be built
    /// otherwise): a wait of no time that times out, or returns at once, as asked.
    #[allow(clippy::type_complexity)]
    fn timeout_result(
        &self,
        woken: std::sync::LockResult<(Guard_<'a, T>, bool)>,
    ) -> std::sync::LockResult<(Guard_<'a, T>, std::sync::WaitTimeoutResult)> {
        let (guard, timed_out, poisoned) = match woken {
            Ok((guard, timed_out)) => (guard, timed_out, false),
            Err(p) => {
                let (guard, timed_out) = p.into_inner();
                (guard, timed_out, true)
            }
        };
        let made = self
            .0
            .wait_timeout_while(guard, Duration::ZERO, |_| timed_out)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if poisoned {
            Err(std::sync::PoisonError::new(made))
        } else {
            Ok(made)
        }
    }
}

/// The longest a timed wait of a test's call waits for real under the virtual clock
/// ([`time`]): a notify that would have come later could have been that late anyway (the
/// notifying thread delayed), so waking then is an answer the program can give, and a
/// sequential order, where no test thread can notify, does not wait out every timeout.
pub(crate) const REAL_WAIT_CAP: Duration = Duration::from_millis(1);

/// How long a timed wait of `timeout` waits for real (see [`REAL_WAIT_CAP`]).
fn real_wait(timeout: Duration) -> Duration {
    if time::in_virtual_call() {
        timeout.min(REAL_WAIT_CAP)
    } else {
        timeout
    }
}

/// After a real timed wait: when it timed out, the call's virtual clock has waited the whole
/// `timeout`.
fn timed_out_after<G>(
    waited: &std::sync::LockResult<(G, std::sync::WaitTimeoutResult)>,
    timeout: Duration,
) {
    let timed_out = match waited {
        Ok((_, result)) => result.timed_out(),
        Err(poisoned) => poisoned.get_ref().1.timed_out(),
    };
    if timed_out {
        time::advance(timeout);
    }
}

/// Whether the calling thread is a test thread of a controlled run.
fn controlled() -> bool {
    ROLE.with(Cell::get) < 2 && sched::on()
}

/// Runs `f` as if the current thread were not a test thread: its calls are not traced and its
/// schedule points do nothing. For what the driver makes from the receiver before a call (a
/// guard the method takes), which is not one of the test's calls.
pub fn untraced<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(u8);
    impl Drop for Restore {
        fn drop(&mut self) {
            ROLE.with(|r| r.set(self.0));
        }
    }
    let _restore = Restore(ROLE.with(|r| r.replace(NO_ROLE)));
    f()
}

/// A place where an interleaving matters: in a controlled run, where the scheduler may switch
/// threads (`sched.rs`); otherwise, with the current run's probabilities, yields, spins
/// briefly or sleeps briefly (ConTest-style noise). Does nothing on threads that are not a
/// worker's test threads, or when the run has no noise.
#[inline]
pub fn schedule_point() {
    let role = ROLE.with(Cell::get);
    if role == NO_ROLE {
        return;
    }
    if sched::on() {
        // A controlled run: the point is where the scheduler may switch threads; no noise.
        return sched::point(role);
    }
    let yield_p = f64::from_bits(NOISE[0].load(Ordering::Relaxed));
    let spin_p = f64::from_bits(NOISE[1].load(Ordering::Relaxed));
    let sleep_p = f64::from_bits(NOISE[2].load(Ordering::Relaxed));
    if yield_p + spin_p + sleep_p <= 0.0 {
        return;
    }
    let draw = next_random();
    let roll = (draw >> 11) as f64 / (1u64 << 53) as f64;
    if roll < yield_p {
        std::thread::yield_now();
    } else if roll < yield_p + spin_p {
        spin_for(spin_length(draw));
    } else if roll < yield_p + spin_p + sleep_p {
        std::thread::sleep(Duration::from_micros(10 + (draw & 0x7f)));
    }
}

/// Drives an iterator a method returned, as its caller would use it: takes up to `limit` items
/// (the oracle's `DRIVE_LIMIT`, a bound on one that never ends), each read and dropped, with a
/// schedule point after each, so the other thread can run between two `next` calls. Answers
/// how many it took.
pub fn drive<I: IntoIterator>(items: I, limit: usize) -> usize {
    let mut taken = 0;
    for item in items.into_iter().take(limit) {
        std::hint::black_box(&item);
        drop(item);
        taken += 1;
        schedule_point();
    }
    taken
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

/// Shortest and longest spin of the noise. A spin is timed, not counted: a `pause` costs
/// 10 to 140 cycles depending on the processor (26 ns on the EPYC covcon is measured on, where
/// the old 0–1,023 `pause`s took 13 µs on average, as long as a sleep).
const SPIN_MIN: Duration = Duration::from_nanos(50);
const SPIN_MAX: Duration = Duration::from_micros(20);

/// A spin length drawn log-uniformly between [`SPIN_MIN`] and [`SPIN_MAX`] from `draw`'s low
/// 16 bits, so that every scale is as likely: nanoseconds shift a narrow window, microseconds
/// let the other thread through a whole short call. Mean about 3.3 µs.
fn spin_length(draw: u64) -> Duration {
    let at = (draw & 0xffff) as f64 / 65_535.0;
    let (min, max) = (SPIN_MIN.as_nanos() as f64, SPIN_MAX.as_nanos() as f64);
    Duration::from_nanos((min * (max / min).powf(at)) as u64)
}

fn spin_for(length: Duration) {
    let started = Instant::now();
    while started.elapsed() < length {
        std::hint::spin_loop();
    }
}

/// Makes the calling thread's sleeps as long as asked: Linux otherwise lets a sleep run up to
/// 50 µs late (the default timer slack), which more than doubled the noise's short sleeps.
pub(crate) fn precise_sleeps() {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn prctl(option: i32, ...) -> i32;
        }
        const PR_SET_TIMERSLACK: i32 = 29;
        // SAFETY: PR_SET_TIMERSLACK takes one unsigned long and changes only the calling
        // thread's timer slack; a failure leaves it as it was.
        unsafe {
            prctl(PR_SET_TIMERSLACK, 1 as std::ffi::c_ulong);
        }
    }
}

/// The current thread's clock, for the panic hook.
pub(crate) fn now() -> u64 {
    CLOCK.fetch_add(1, Ordering::SeqCst)
}

/// Makes the current thread a test thread with `role` and seeds its noise generator.
pub(crate) fn set_role(role: u8, seed: u64) {
    ROLE.with(|r| r.set(role));
    // A thread whose earlier run was abandoned inside a call starts this one outermost.
    DEPTH.with(|d| d.set(0));
    if role != NO_ROLE {
        stuck::note_progress(role);
    }
    let mixed = seed ^ (u64::from(role) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    RNG.with(|r| r.set(mixed | 1));
}

pub(crate) fn role() -> u8 {
    ROLE.with(Cell::get)
}

/// xorshift64*: cheap, per thread, reproducible from the run's seed.
fn next_random() -> u64 {
    RNG.with(|r| {
        let mut x = r.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        r.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    })
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

    /// Outside a controlled run, a timed acquisition up to a deadline an hour away on the
    /// copy's clock waits for real at most the cap, and when it times out its call's clock has
    /// reached the deadline.
    #[test]
    fn an_acquisition_until_a_deadline_on_the_copys_clock_waits_what_is_left() {
        time::make_virtual();
        time::begin_call(11);
        let deadline = time::now() + Duration::from_secs(3600);
        let mut given = None;
        let got: Option<()> = acquire_until(
            &(),
            |_| None,
            |_, real_deadline| {
                given = Some(real_deadline.saturating_duration_since(Instant::now()));
                None
            },
            deadline,
        );
        let reached = time::now();
        time::end_call();
        assert_eq!(got, None);
        assert!(given.is_some_and(|wait| wait <= REAL_WAIT_CAP), "{given:?}");
        assert_eq!(reached, deadline);
        // The run says so (for the results oracle), once.
        assert!(take_timed_out());
        assert!(!take_timed_out());
    }

    /// Code the copy does not instrument calling instrumented methods from outside any call
    /// (a drop of millions of a type's parts) leaves a bounded, balanced record too.
    #[test]
    fn outermost_calls_past_the_cap_are_not_recorded_and_the_record_stays_balanced() {
        set_role(2, 1);
        BUFFERS[2].lock().unwrap().clear();
        for _ in 0..2 * MAX_EVENTS {
            drop(enter("t::Cache", "weighted_size"));
        }
        set_role(NO_ROLE, 0);
        let events: Vec<RawEvent> = std::mem::take(&mut *BUFFERS[2].lock().unwrap());
        assert!(events.len() <= MAX_EVENTS + 1, "{}", events.len());
        let starts = events.iter().filter(|e| e.start).count();
        assert_eq!(starts * 2, events.len());
    }

    /// A call that starts far more nested calls than a buffer keeps (a spin lock's `lock`
    /// inside a barrier's `wait`, spinning) leaves a bounded, balanced record in which its own
    /// start and end, and the next outermost call's, are still there.
    #[test]
    fn nested_calls_past_the_cap_are_not_recorded_and_the_outermost_always_are() {
        set_role(0, 1);
        BUFFERS[0].lock().unwrap().clear();
        {
            let _outer = enter("t::Barrier", "wait");
            for _ in 0..3 * MAX_NESTED_EVENTS {
                let _inner = enter("t::Mutex", "lock");
                let _innermost = enter("t::Mutex", "try_lock");
            }
        }
        drop(enter("t::Barrier", "is_leader"));
        set_role(NO_ROLE, 0);
        let events: Vec<RawEvent> = std::mem::take(&mut *BUFFERS[0].lock().unwrap());
        assert!(events.len() <= MAX_NESTED_EVENTS + 4, "{}", events.len());
        let mut depth = 0_i64;
        for event in &events {
            depth += if event.start { 1 } else { -1 };
            assert!(depth >= 0);
        }
        assert_eq!(depth, 0);
        let outermost: Vec<(&str, bool)> = events
            .iter()
            .filter(|e| e.type_path == "t::Barrier")
            .map(|e| (e.method, e.start))
            .collect();
        assert_eq!(
            outermost,
            [
                ("wait", true),
                ("wait", false),
                ("is_leader", true),
                ("is_leader", false)
            ]
        );
        assert!(events.windows(2).all(|w| w[0].clock < w[1].clock));
    }

    #[test]
    fn spins_are_drawn_log_uniformly_between_the_bounds() {
        assert_eq!(spin_length(0), SPIN_MIN);
        assert_eq!(spin_length(0xffff), SPIN_MAX);
        // Only the low 16 bits count.
        assert_eq!(spin_length(0xabcd_0000), SPIN_MIN);
        // Halfway in the draw is the geometric mean, 1 µs, not the arithmetic one.
        let middle = spin_length(0x8000).as_nanos();
        assert!((990..=1010).contains(&middle), "{middle} ns");
        let quarters: Vec<u128> = [0x4000, 0xc000].map(|d| spin_length(d).as_nanos()).into();
        assert!((215..=230).contains(&quarters[0]), "{quarters:?}");
        assert!((4400..=4500).contains(&quarters[1]), "{quarters:?}");
    }
}
