//! Where the copy's code calls the runtime on a test thread, and the state of the run those
//! calls read: the thread's role (0 and 1 the suffix threads, 2 the setup and prefix), the
//! starts and ends of calls it records ([`enter`]), its schedule points and their noise
//! ([`schedule_point`]), its busy waits and atomic operations ([`spin_loop`], [`at`]), and
//! whether the watchdog is ending the run ([`abandoning`]). The worker sets the run's state;
//! the copy's synchronisation (`sync.rs`) and clock (`time.rs`) are built on these points.

use crate::{sched, stuck};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The global logical clock every start and end is stamped from.
static CLOCK: AtomicU64 = AtomicU64::new(1);

/// Role of a thread that is not one of the worker's test threads.
pub(crate) const NO_ROLE: u8 = u8::MAX;

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
/// ([`crate::result_text!`]); only the results oracle reads them.
pub(crate) static CAPTURE: AtomicBool = AtomicBool::new(true);

/// Whether the current request wants the `Debug` texts of call results (see [`crate::result_text!`]).
#[doc(hidden)]
pub fn capturing() -> bool {
    CAPTURE.load(Ordering::Relaxed)
}

/// Whether the starts and ends of calls are noise points too: in a paced sequential order,
/// which must wait where a controlled run hands the turn over.
pub(crate) static PACE_CALLS: AtomicBool = AtomicBool::new(false);

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
        if abandoning() && !std::thread::panicking() {
            std::panic::resume_unwind(Box::new(Abandoned));
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
    // Mixed, not just xored: a repeated test's runs have seeds `s, s + 1, …`, and xorshift
    // from states a bit apart starts out alike (from `s | 1`, two seeds are one state).
    let mixed = crate::hash::mix(seed ^ (u64::from(role) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    RNG.with(|r| r.set(mixed | 1));
}

#[inline]
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

// ---------------------------------------------------------------------------------------------
// The run under way, as the worker's watchdog sees it.

/// When the running test started, in microseconds of the worker's clock (`worker::watch`):
/// which run the watchdog looks at, and which one it ends.
pub(crate) static STARTED_US: AtomicU64 = AtomicU64::new(0);

/// `STARTED_US + 1` of the run the watchdog is ending (`worker::abandon`); 0 for none.
pub(crate) static ABANDON: AtomicU64 = AtomicU64::new(0);

/// The payload a test thread unwinds with when the watchdog ends its blocked run
/// (`worker::abandon`).
pub(crate) struct Abandoned;

/// Whether the running run is one the watchdog is ending: a test thread's wait on a
/// condition variable of the copy then unwinds out of its call instead of returning, and so
/// does its spin ([`spin_loop`]).
pub(crate) fn abandoning() -> bool {
    let abandon = ABANDON.load(Ordering::SeqCst);
    abandon != 0 && abandon == STARTED_US.load(Ordering::SeqCst) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The noise of a repeated test's runs (seeds `s, s + 1, …`) is drawn afresh in each:
    /// seeded as `(s ^ k) | 1`, two neighbouring seeds drew the same numbers.
    #[test]
    fn neighbouring_seeds_draw_different_noise() {
        let draws = |seed| {
            set_role(1, seed);
            let draws: Vec<u64> = (0..4).map(|_| next_random() % 100).collect();
            set_role(NO_ROLE, 0);
            draws
        };
        let runs: std::collections::BTreeSet<Vec<u64>> = (1000..1064).map(draws).collect();
        assert_eq!(runs.len(), 64);
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
