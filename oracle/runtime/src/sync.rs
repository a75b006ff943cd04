//! The copy's synchronisation, wrapped (`oracle/src/harness.rs` writes the calls): blocking,
//! timed and non-blocking lock acquisitions ([`acquire`], [`acquire_for`], [`attempt`]) and
//! condition variables' waits and notifies ([`Cond`], [`notifying`]). Outside a controlled run
//! each is the call it wraps, a timed wait capped under the virtual clock; in one, each is a
//! schedule point, and a thread that would block hands the turn to the other instead
//! (`sched.rs`). The test threads' real waits on the copy's condition variables are
//! registered here, for the watchdog to wake ([`wake_waiters`]).

use crate::points::{abandoning, role, Abandoned, NO_ROLE};
use crate::sched;
use crate::time::{self, REAL_WAIT_CAP};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    let role = role();
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

/// A blocking acquisition of a lock that has no non-blocking attempt (a lock type of the
/// crate's own with only `lock()`: crossbeam-channel's `utils::Mutex`): `self.m.lock()` is
/// written `::covcon_rt::acquire_blocking(&self.m, |l| l.lock())`. In a controlled run a
/// schedule point before the blocking call; a thread that then finds the lock held sleeps in
/// the kernel, where the other thread sees it blocked and takes the turn (`sched.rs`), as at
/// any lock the copy does not wrap.
#[inline]
pub fn acquire_blocking<'a, L: ?Sized, H>(lock: &'a L, block: impl FnOnce(&'a L) -> H) -> H {
    let role = role();
    if role < 2 && sched::on() {
        sched::point(role);
    }
    block(lock)
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
    let role = role();
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
    let role = role();
    if role < 2 && sched::on() {
        sched::point(role);
    }
    let got = attempt(lock);
    if got.contended() {
        TIMED_OUT.store(true, Ordering::Relaxed);
    }
    got
}

/// A notify of the instrumented copy: `self.ready.notify_one()` is written
/// `::covcon_rt::notifying(&self.ready, false).notify_one()`. In a controlled run, the other
/// test thread, if it waits on this condition variable ([`Cond`]), is marked notified (it may
/// run from now on), and the notify is a schedule point; the real notify follows, for waits
/// outside control. Otherwise nothing.
#[inline]
pub fn notifying<C: ?Sized>(condvar: &C, _all: bool) -> &C {
    let role = role();
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
fn notify_count(condvar: &std::sync::Condvar) -> Option<u32> {
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

/// How to wake the condition variable each test thread is waiting on for real with no
/// timeout (its `notify_all`, `None` for none): what the watchdog's wake-up probe
/// ([`wake_waiters`]) calls. The third slot is the worker's main thread outside a test
/// thread's role (building the instances, running the prefix), which only the watchdog's
/// ending of a blocked run wakes. Each entry borrows the waiting call's condition variable
/// and is cleared, under its slot's lock, before that borrow ends ([`waiting_for_real`]).
static WAITING: [Mutex<Option<Waker>>; 3] = [const { Mutex::new(None) }; 3];

/// A waiting thread's condition variable's `notify_all`, borrowed for as long as the thread
/// waits (the `'static` is the slot's promise, not the borrow's: see [`WAITING`]).
type Waker = &'static (dyn Fn() + Sync);

thread_local! {
    /// Whether this is the worker's main thread (the one that runs the setup).
    static SETUP_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as the worker's main thread.
pub(crate) fn mark_setup_thread() {
    SETUP_THREAD.with(|s| s.set(true));
}

/// A test thread's untimed wait on a condition variable, for real, registered in [`WAITING`]
/// while it lasts with `wake`, the condition variable's `notify_all`.
fn waiting_for_real<R>(wake: &(dyn Fn() + Sync), wait: impl FnOnce() -> R) -> R {
    let role = role();
    let index = if role == NO_ROLE && SETUP_THREAD.with(Cell::get) {
        2
    } else {
        usize::from(role)
    };
    let Some(slot) = WAITING.get(index) else {
        return wait();
    };
    // SAFETY: only the lifetime is changed. The entry is cleared below, under the slot's
    // lock, before `wake` (borrowed for this whole call) can end, and [`wake`] calls it only
    // under the same lock; an unwinding `wait` (a panic in the user's wait) is caught by
    // `Registration`'s drop, which clears it too.
    let waker: Waker = unsafe { std::mem::transmute::<&(dyn Fn() + Sync), Waker>(wake) };
    let registered = Registration(slot);
    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(waker);
    let result = wait();
    drop(registered);
    if abandoning() {
        // The run is blocked for good and the watchdog woke this wait to end it: leave the
        // call by unwinding (no panic message; the worker answers the deadlock).
        drop(result);
        std::panic::resume_unwind(Box::new(Abandoned));
    }
    result
}

/// Clears a [`WAITING`] slot when dropped: after the wait returns, or while it unwinds.
struct Registration(&'static Mutex<Option<Waker>>);

impl Drop for Registration {
    fn drop(&mut self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// How many test threads wait for real on a condition variable of the copy, registered in
/// [`WAITING`].
pub(crate) fn registered_waiters() -> usize {
    WAITING
        .iter()
        .filter(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).is_some())
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

fn wake(slots: &[Mutex<Option<Waker>>]) -> u8 {
    let mut woken = 0;
    for (role, slot) in slots.iter().enumerate() {
        // Held while notifying: the waiting thread clears its slot under the same lock before
        // its wait's borrow of the condition variable ends, so the waker is alive here.
        let waker = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(notify_all) = *waker {
            notify_all();
            woken |= 1 << role;
        }
    }
    woken
}

/// A condition variable's untimed wait that borrows its guard, in the instrumented copy:
/// parking_lot's `self.ready.wait(&mut items)` is written `::covcon_rt::wait_mut(&self.ready,
/// |c| { c.notify_all(); }, |c| c.wait(&mut items))`. The wait is the condition variable's
/// own, in every run (a controlled run's scheduler finds the waiter asleep and gives the
/// turn away, and the other thread's notify wakes it for real); a test thread's wait is
/// registered with the watchdog while it lasts, as std's uncontrolled waits are
/// ([`waiting_for_real`]): a run blocked for good there gets the wake-up probe (a lost
/// wake-up shows as the woken thread getting on with its call) and is ended without losing
/// the worker. parking_lot promises no spurious wake-ups, but the probe only wakes a run
/// that is blocked for good already: whatever the woken thread then does, the run is the
/// deadlock it was.
pub fn wait_mut<'a, C: Sync + ?Sized, R>(
    condvar: &'a C,
    notify_all: impl Fn(&C) + Sync,
    wait: impl FnOnce(&'a C) -> R,
) -> R {
    let wake = || notify_all(condvar);
    waiting_for_real(&wake, || wait(condvar))
}

type Guard_<'a, T> = std::sync::MutexGuard<'a, T>;

impl<'a, T> Cond<'a, T> {
    pub fn wait(self, guard: Guard_<'a, T>) -> std::sync::LockResult<Guard_<'a, T>> {
        match self.controlled_wait(guard, false) {
            Ok(woken) => woken
                .map(|(guard, _)| guard)
                .map_err(|p| std::sync::PoisonError::new(p.into_inner().0)),
            Err(guard) => waiting_for_real(&|| self.0.notify_all(), move || self.0.wait(guard)),
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
        let role = role();
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
    role() < 2 && sched::on()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
