//! Time under covcon's control: the clock the instrumented copy reads.
//!
//! The copy's `Instant::now()`, `SystemTime::now()`, `elapsed()` of an `Instant` or
//! `SystemTime` it can see the type of, and `thread::sleep(d)` are written as calls of this
//! module (`oracle/src/harness.rs`, from the analysis's `ClockSite`s). Outside a worker (the
//! user's own tests run in the copy by `cargo covcon mutants --test-cmd`) every function is
//! std's. In a worker, a test's calls read a *virtual* clock that is a function of the call
//! alone: call `slot` of a test (its constructors, handles and prefix calls numbered in
//! order, then each thread's suffix calls numbered after them, the two threads' `i`th calls
//! sharing a slot) starts at `slot × CALL_GAP`, and reads inside the call see that time, the
//! first [`STILL_READS`] of them exactly, later ones a little later ([`offset`]). A
//! sequential order runs every call with the slot it had in the concurrent run, so it reads
//! the same clock: a failure that time alone brings on (a refill
//! overdue, an entry expired) happens there too, whatever the load of the machine, and is
//! explained instead of reported. A sleep moves the calling call's clock on by its length
//! and returns at once (a schedule point, then a yield), so waiting costs no wall time.
//!
//! A dependency's clock that the harness patches (`quanta`, `oracle/src/clocks.rs`) reads the
//! same virtual time through [`dependency_nanos`].
//!
//! Threads that are not running a test's call (a thread the type started itself) read the
//! latest time any call has read, moved on a little at each read, so their own loops end.

use crate::points;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, SystemTimeError};

/// Virtual time between the starts of two consecutive call slots: longer than what a call's
/// own reads add ([`offset`]) for any call that reads the clock fewer than a thousand times,
/// so a thread's clock runs forward from call to call.
pub(crate) const CALL_GAP: Duration = Duration::from_millis(1);

/// The longest a timed wait of a test's call waits for real under the virtual clock: a
/// notify that would have come later could have been that late anyway (the notifying thread
/// delayed), so waking then is an answer the program can give, and a sequential order, where
/// no test thread can notify, does not wait out every timeout.
pub(crate) const REAL_WAIT_CAP: Duration = Duration::from_millis(1);

/// What one read of the clock moves a call's clock on by, before [`offset`]'s growth.
const STEP_NS: u64 = 100;

/// Whether the clock is virtual: set by the worker (`worker_main`) only.
static VIRTUAL: AtomicBool = AtomicBool::new(false);

/// The latest virtual time handed out, in nanoseconds after the origin.
static LATEST: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The running call's clock: its start (ns after the origin) and the reads made so far.
    static CALL: Cell<Option<(u64, u64)>> = const { Cell::new(None) };
}

/// The real instant and system time virtual time 0 stands for: the worker's start.
fn origin() -> &'static (Instant, SystemTime) {
    static ORIGIN: OnceLock<(Instant, SystemTime)> = OnceLock::new();
    ORIGIN.get_or_init(|| (Instant::now(), SystemTime::now()))
}

/// Makes this process's clock virtual (the worker, before its first request).
pub(crate) fn make_virtual() {
    origin();
    VIRTUAL.store(true, Ordering::SeqCst);
}

/// Starts call slot `slot` on the calling thread: its reads come from the slot's clock.
pub(crate) fn begin_call(slot: u32) {
    let start = u64::from(slot).saturating_mul(CALL_GAP.as_nanos() as u64);
    CALL.with(|c| c.set(Some((start, 0))));
}

/// Ends the calling thread's call: its reads come from the shared clock again.
pub(crate) fn end_call() {
    CALL.with(|c| c.set(None));
}

/// The virtual slot of suffix call `index` of a test with `setup_calls` setup calls
/// (constructors, handles, prefix calls, which take slots `0..setup_calls`).
pub(crate) fn suffix_slot(setup_calls: usize, index: u32) -> u32 {
    (setup_calls as u32).saturating_add(1).saturating_add(index)
}

/// Starts a new test: the shared clock starts again from 0.
pub(crate) fn reset() {
    LATEST.store(0, Ordering::SeqCst);
}

/// Reads of a call that all see the call's start: a compare-and-swap loop that retries in a
/// concurrent run reads the clock more often than the same call in a sequential order, and
/// must still see the same time there (else a refill timestamp differs by a step, and the
/// results oracle sees a wrong result where there is none).
const STILL_READS: u64 = 64;

/// How far a call's clock has moved after `reads` reads: nothing for the first
/// [`STILL_READS`], then a fixed step each and a term that grows with the cube of the count,
/// so that a loop that waits for a deadline by reading the clock (`while start.elapsed() <
/// timeout`) gets there within about a million reads even for an hour, instead of spinning
/// until the watchdog calls it a deadlock.
fn offset(reads: u64) -> u64 {
    let reads = reads.saturating_sub(STILL_READS);
    let cube = reads.saturating_mul(reads).saturating_mul(reads) >> 24;
    STEP_NS
        .saturating_mul(reads)
        .saturating_add(STEP_NS.saturating_mul(cube))
}

/// The next virtual time of the calling thread, in nanoseconds after the origin.
fn tick() -> u64 {
    let at = CALL.with(|c| match c.get() {
        Some((start, reads)) => {
            c.set(Some((start, reads + 1)));
            Some(call_time(start, reads))
        }
        None => None,
    });
    match at {
        Some(at) => {
            LATEST.fetch_max(at, Ordering::Relaxed);
            at
        }
        None => LATEST.fetch_add(STEP_NS, Ordering::Relaxed) + STEP_NS,
    }
}

fn is_virtual() -> bool {
    VIRTUAL.load(Ordering::Relaxed)
}

/// `Instant::now()` of the copy.
pub fn now() -> Instant {
    points::clock_read();
    if !is_virtual() {
        return Instant::now();
    }
    origin().0 + Duration::from_nanos(tick())
}

/// Where a dependency's clock that covcon patches (`quanta`, `oracle/src/clocks.rs`) starts
/// its virtual instants: far enough from zero that an instant minus any plausible duration
/// (an hour's time-to-live, a day's) stays an instant, and never zero, which quanta takes for
/// "no recent time set".
pub const DEPENDENCY_EPOCH_NS: u64 = 1 << 46;

/// A dependency clock's reading in a worker, in that clock's nanoseconds
/// ([`DEPENDENCY_EPOCH_NS`] plus the virtual time [`now`] reads: the same call slot reads
/// the same time on either clock); `None` outside a worker, where the dependency reads its own
/// clock. The patched `quanta::Clock::now()`, `Clock::recent()`, `Instant::now()` and
/// `Instant::recent()` return this when it is `Some`.
pub fn dependency_nanos() -> Option<u64> {
    points::clock_read();
    if !is_virtual() {
        return None;
    }
    Some(DEPENDENCY_EPOCH_NS.saturating_add(tick()))
}

/// `SystemTime::now()` of the copy.
pub fn system_now() -> SystemTime {
    points::clock_read();
    if !is_virtual() {
        return SystemTime::now();
    }
    origin().1 + Duration::from_nanos(tick())
}

/// `instant.elapsed()` of the copy (saturating, as std's).
pub fn elapsed(instant: &Instant) -> Duration {
    now().saturating_duration_since(*instant)
}

/// `time.elapsed()` of the copy, for a `SystemTime`.
pub fn system_elapsed(time: &SystemTime) -> Result<Duration, SystemTimeError> {
    system_now().duration_since(*time)
}

/// `thread::sleep(duration)` of the copy: inside a test's call, the call's clock moves on by
/// `duration` and the thread only passes a schedule point and yields; elsewhere a real sleep.
pub fn sleep(duration: Duration) {
    if is_virtual() && advance(duration) {
        points::schedule_point();
        std::thread::yield_now();
    } else {
        std::thread::sleep(duration);
    }
}

/// `thread::park_timeout(duration)` of the copy: inside a test's call, a schedule point and a
/// real park of at most a millisecond (an `unpark` still ends it at once), after which the
/// call's clock has moved on by `duration`, as if the park had lasted it (a wake-up the system
/// delays to the timeout is one a real run can see); elsewhere std's.
pub fn park_timeout(duration: Duration) {
    if in_virtual_call() {
        points::schedule_point();
        std::thread::park_timeout(duration.min(REAL_WAIT_CAP));
        advance(duration);
    } else {
        std::thread::park_timeout(duration);
    }
}

/// `receiver.recv_timeout(timeout)` of the copy (std's and crossbeam's channels, or anything
/// with such a method), `recv` being that call: inside a test's call, a schedule point and a
/// real wait of at most a millisecond (a message sent later could have been that late: its
/// sender delayed), and when it answers an error, the call's clock has moved on by the whole
/// timeout; elsewhere the call itself.
pub fn recv_timeout<R: ?Sized, T, E>(
    receiver: &R,
    recv: impl FnOnce(&R, Duration) -> Result<T, E>,
    timeout: Duration,
) -> Result<T, E> {
    if !in_virtual_call() {
        return recv(receiver, timeout);
    }
    points::schedule_point();
    let got = recv(receiver, timeout.min(REAL_WAIT_CAP));
    if got.is_err() {
        advance(timeout);
    }
    got
}

/// A deadline the copy hands to code that reads the real clock (parking_lot's
/// `cv.wait_until(&mut g, deadline)`, crossbeam's `rx.recv_deadline(deadline)`): the virtual
/// `deadline` made a real instant as far ahead of the real clock as it is ahead of the
/// calling thread's virtual one. Inside a test's call, a schedule point, a real wait of at
/// most [`REAL_WAIT_CAP`], and the call's clock moved on to the deadline, as if the
/// wait had lasted it (as [`park_timeout`]); elsewhere (a thread the type started) the whole
/// wait is real. Outside a worker, `deadline` itself.
pub fn deadline(deadline: Instant) -> Instant {
    if !is_virtual() {
        return deadline;
    }
    let in_call = in_virtual_call();
    let now = origin().0 + Duration::from_nanos(peek());
    let (wait, moved) = deadline_wait(deadline, now, in_call);
    if in_call {
        points::schedule_point();
        advance(moved);
    }
    Instant::now().checked_add(wait).unwrap_or(deadline)
}

/// How long a wait for `deadline`, given when the thread's virtual clock reads `now`, waits
/// for real, and how far it moves the call's clock (`in_call`) on.
fn deadline_wait(deadline: Instant, now: Instant, in_call: bool) -> (Duration, Duration) {
    let remaining = deadline.saturating_duration_since(now);
    if in_call {
        (remaining.min(REAL_WAIT_CAP), remaining)
    } else {
        (remaining.min(BACKGROUND_WAIT_CAP), Duration::ZERO)
    }
}

/// The longest real wait a deadline made real gives a thread that runs no call: its virtual
/// clock follows the latest time any call read, which starts again at 0 with each test, so a
/// deadline it took before a test began (after a call that waited an hour of virtual time)
/// can lie far ahead; such a thread wakes to look again instead of sleeping that long.
const BACKGROUND_WAIT_CAP: Duration = Duration::from_secs(1);

/// The calling thread's virtual time, in nanoseconds after the origin, without reading it
/// (a read moves a call's clock on).
fn peek() -> u64 {
    CALL.with(|c| c.get()).map_or_else(
        || LATEST.load(Ordering::Relaxed),
        |(start, reads)| call_time(start, reads),
    )
}

/// The clock of a call that started at `start` and has read it `reads` times.
fn call_time(start: u64, reads: u64) -> u64 {
    start.saturating_add(offset(reads))
}

/// Moves the calling thread's call clock on by `duration`: what a timed wait that timed out
/// waited. False when the thread runs no call (then nothing moves).
pub(crate) fn advance(duration: Duration) -> bool {
    let by = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    CALL.with(|c| match c.get() {
        Some((start, reads)) => {
            let start = start.saturating_add(by);
            c.set(Some((start, reads)));
            LATEST.fetch_max(start, Ordering::Relaxed);
            true
        }
        None => false,
    })
}

/// Whether the calling thread runs a call of a test under the virtual clock.
pub(crate) fn in_virtual_call() -> bool {
    is_virtual() && CALL.with(|c| c.get().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calls_clock_stands_still_then_moves_by_steps_that_grow_so_a_deadline_loop_ends() {
        assert_eq!(offset(0), 0);
        assert_eq!(offset(STILL_READS), 0);
        assert_eq!(offset(STILL_READS + 1), 100);
        assert_eq!(offset(STILL_READS + 10), 1_000);
        // A thousand reads stay within a call's gap, so a thread's clock runs forward.
        assert!(
            offset(1_000) < CALL_GAP.as_nanos() as u64,
            "{}",
            offset(1_000)
        );
        // A million reads pass an hour.
        assert!(
            offset(1_000_000) > 3_600_000_000_000,
            "{}",
            offset(1_000_000)
        );
    }

    #[test]
    fn the_same_slot_reads_the_same_clock_and_sleeps_move_only_their_call() {
        make_virtual();
        let read = |slot: u32, sleep_ms: u64| {
            begin_call(slot);
            let a = now();
            sleep(Duration::from_millis(sleep_ms));
            let b = now();
            end_call();
            (a, b)
        };
        let (a, b) = read(3, 0);
        let (c, d) = read(3, 0);
        assert_eq!((a, b), (c, d));
        let (e, f) = read(3, 500);
        assert_eq!(e, a);
        assert_eq!(f.duration_since(e), Duration::from_millis(500));
        let (g, _) = read(4, 0);
        assert_eq!(g.duration_since(a), CALL_GAP);
        assert_eq!(suffix_slot(2, 0), 3);
    }

    /// sled's pool thread waited on parking_lot's `wait_until(now + 1s)` with a virtual
    /// instant a second of the worker's life behind the real clock, and woke at once, for
    /// ever. A deadline made real lies as far ahead of the real clock as it lay ahead of the
    /// virtual one; in a call the real wait is capped and the call's clock moves to it.
    #[test]
    fn a_virtual_deadline_is_made_real_by_what_remains_of_it() {
        make_virtual();
        begin_call(100_000);
        let before = now();
        let real = deadline(before + Duration::from_secs(1));
        let after = now();
        end_call();
        assert!(real <= Instant::now() + REAL_WAIT_CAP, "{real:?}");
        assert!(after.duration_since(before) >= Duration::from_secs(1));
        // A thread the type started waits the whole second; one past its deadline, not at all.
        let at = origin().0 + Duration::from_secs(50);
        let second = Duration::from_secs(1);
        assert_eq!(
            deadline_wait(at + second, at, false),
            (second, Duration::ZERO)
        );
        let hour = Duration::from_secs(3600);
        assert_eq!(
            deadline_wait(at + hour, at, false),
            (BACKGROUND_WAIT_CAP, Duration::ZERO)
        );
        assert_eq!(
            deadline_wait(at + second, at, true),
            (REAL_WAIT_CAP, second)
        );
        assert_eq!(
            deadline_wait(at, at + second, false),
            (Duration::ZERO, Duration::ZERO)
        );
    }

    /// A receive of an hour on an empty channel inside a call gives up at once (its real wait
    /// is capped), its call's clock an hour on; one that finds a message takes it and leaves
    /// the clock alone.
    #[test]
    fn a_timed_receive_in_a_call_moves_its_clock_only_when_it_gives_up() {
        make_virtual();
        let (tx, rx) = std::sync::mpsc::channel::<u8>();
        begin_call(13);
        let before = now();
        let hour = Duration::from_secs(3600);
        let empty = recv_timeout(&rx, |r, d| r.recv_timeout(d), hour);
        let after = now();
        tx.send(7).unwrap();
        let full = recv_timeout(&rx, |r, d| r.recv_timeout(d), hour);
        let last = now();
        end_call();
        assert!(empty.is_err());
        assert_eq!(after.duration_since(before), hour);
        assert_eq!(full, Ok(7));
        assert_eq!(last, after);
    }

    /// A park of an hour inside a call returns (its real wait is capped), its call's clock an
    /// hour on, as after a sleep.
    #[test]
    fn a_timed_park_in_a_call_moves_its_clock_by_the_timeout() {
        make_virtual();
        begin_call(9);
        let before = now();
        park_timeout(Duration::from_secs(3600));
        let after = now();
        end_call();
        assert_eq!(after.duration_since(before), Duration::from_secs(3600));
    }
}
