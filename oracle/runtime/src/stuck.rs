//! Telling a run that is blocked for good from a slow one, so that a deadlock is answered in
//! milliseconds instead of at the run's timeout.
//!
//! A run is stuck when every thread that could make progress in user code is asleep in an
//! untimed futex wait (a `Mutex`, `RwLock` or `Condvar` without timeout, `park`, a channel's
//! `recv`): then nothing in the process can wake any of them. The worker's own threads count
//! only while they run user code; while they wait in the runtime (the helper between runs, the
//! main thread waiting for the helper's suffix) they touch no lock of the user's. Every other
//! thread of the process (threads the user's code started) counts, whatever it does, except
//! while both test threads wait in the runtime: the run is then ending.
//!
//! The watchdog takes two [`Snapshot`]s a few milliseconds apart; the run is stuck if both
//! show the same threads, each in an untimed futex wait, each with the same number of context
//! switches. A thread that was woken in between shows as running or has switched more, so the
//! two snapshots together prove that all of them were asleep at one same moment.
//!
//! Linux only (it reads `/proc/self/task/*/syscall`), on x86-64 and AArch64 (the futex
//! syscall's number); elsewhere, and whenever a file cannot be read, nothing is ever stuck and
//! the timeout decides as before. A timed wait, a sleep or a blocking read never count as
//! stuck.
//!
//! Nor does spinning, with one exception: a test thread that has spun (the copy's
//! `core::hint::spin_loop()`, [`crate::spin_loop`]) for [`SPIN_STUCK_MS`] and
//! [`SPIN_STUCK_PAUSES`] pauses without finishing one of the test's calls or reading the clock
//! in between, and still spins (its last pause under [`SPIN_RECENT_MS`] ago), counts as
//! waiting for good, the time it started spinning
//! standing in for its context switches. A call that spun once and then computes for long
//! is not taken for one that spins on. A spin lock's `lock` or a
//! barrier's `wait` that nothing else can release then ends in milliseconds too, instead of
//! at the timeout; a thread that still runs, or a thread of the user's that does not sleep,
//! keeps the run alive as before.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// How long a test thread spins, without finishing a call of the test or reading the clock,
/// before the stuck test counts it as waiting for good.
pub(crate) const SPIN_STUCK_MS: u64 = 50;

/// How recent a spinning thread's last pause must be for it to count as spinning still.
const SPIN_RECENT_MS: u64 = 10;

/// How many pauses a thread must have made since it began spinning to count as spinning for
/// good: a spin that nothing ends makes thousands a millisecond, while a bounded backoff makes
/// about a hundred before it parks or reads the clock (crossbeam's `Backoff`: 127 pauses and a
/// few yields). On a loaded machine those few yields, and the time slices the thread waits for
/// a core, stretched one such backoff past [`SPIN_STUCK_MS`]: crossbeam-channel 0.3.6's
/// `recv_timeout` was taken for a thread spinning for good, and its run for a deadlock.
const SPIN_STUCK_PAUSES: u64 = 1_000;

/// A worker thread, as the stuck test sees it.
pub(crate) struct RuntimeThread {
    /// Its kernel thread id, 0 until it registers.
    tid: AtomicI32,
    /// Whether it is waiting in the runtime rather than running user code.
    idle: AtomicBool,
    /// When it began spinning without progress ([`note_spin`]), in microseconds since the
    /// first look plus one; 0 while it is not.
    spinning_since: AtomicU64,
    /// When it last paused in a spin, on the same clock.
    last_spin: AtomicU64,
    /// Pauses since it began spinning.
    pauses: AtomicU64,
}

impl RuntimeThread {
    const fn new(idle: bool) -> RuntimeThread {
        RuntimeThread {
            tid: AtomicI32::new(0),
            idle: AtomicBool::new(idle),
            spinning_since: AtomicU64::new(0),
            last_spin: AtomicU64::new(0),
            pauses: AtomicU64::new(0),
        }
    }

    /// Since when it has spun without progress, if for [`SPIN_STUCK_MS`] and
    /// [`SPIN_STUCK_PAUSES`] at least by `now` ([`now_us`]).
    fn stuck_spinning(&self, now: u64) -> Option<u64> {
        let since = self.spinning_since.load(Ordering::SeqCst);
        let last = self.last_spin.load(Ordering::SeqCst);
        (since != 0
            && now.saturating_sub(since) >= SPIN_STUCK_MS * 1000
            && now.saturating_sub(last) <= SPIN_RECENT_MS * 1000
            && self.pauses.load(Ordering::SeqCst) >= SPIN_STUCK_PAUSES)
            .then_some(since)
    }

    /// Records the calling thread as this one.
    pub(crate) fn register(&'static self) {
        if let Some(tid) = current_tid() {
            self.tid.store(tid, Ordering::SeqCst);
        }
        CURRENT.with(|c| c.set(Some(self)));
    }

    pub(crate) fn set_idle(&self, idle: bool) {
        self.idle.store(idle, Ordering::SeqCst);
    }
}

/// The main thread: thread 0's suffix, sequential runs, setup. Idle while it waits for the
/// helper to finish thread 1's suffix.
pub(crate) static MAIN: RuntimeThread = RuntimeThread::new(false);
/// The helper thread: thread 1's suffix. Idle between runs.
pub(crate) static HELPER: RuntimeThread = RuntimeThread::new(true);
/// The watchdog: never runs user code.
pub(crate) static WATCHDOG: RuntimeThread = RuntimeThread::new(true);

thread_local! {
    /// The worker thread the calling thread is, once it registered.
    static CURRENT: std::cell::Cell<Option<&'static RuntimeThread>> =
        const { std::cell::Cell::new(None) };
}

/// The worker thread a test thread of `role` runs on: the calling thread itself when it
/// registered (a sequential order runs thread 1's calls on the main thread, and a spin there
/// is the main thread's), else the helper for thread 1 and the main thread otherwise.
fn thread_of(role: u8) -> &'static RuntimeThread {
    CURRENT
        .with(std::cell::Cell::get)
        .unwrap_or(if role == 1 { &HELPER } else { &MAIN })
}

/// The test thread of `role` spins (a busy wait's pause): from now on, unless it already is.
pub(crate) fn note_spin(role: u8) {
    let thread = thread_of(role);
    let now = now_us();
    thread.last_spin.store(now, Ordering::SeqCst);
    if thread.spinning_since.load(Ordering::Relaxed) == 0 {
        thread.pauses.store(0, Ordering::SeqCst);
        thread.spinning_since.store(now, Ordering::SeqCst);
    }
    thread.pauses.fetch_add(1, Ordering::SeqCst);
}

/// The test thread of `role` made progress (finished or began one of the test's calls, read
/// the clock): it is not spinning for good.
pub(crate) fn note_progress(role: u8) {
    let thread = thread_of(role);
    if thread.spinning_since.load(Ordering::Relaxed) != 0 {
        thread.spinning_since.store(0, Ordering::SeqCst);
    }
}

/// Microseconds since the first call, plus one.
fn now_us() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_micros() as u64 + 1
}

/// Whether test thread `t` (0: the main thread, 1: the helper) is asleep in a futex wait, with
/// or without a timeout (a lock, a condition variable, `park`): waiting for another thread,
/// unlike a sleep, which waits for time alone. `false` where this cannot be read.
pub(crate) fn test_thread_waits(t: usize) -> bool {
    let thread = if t == 0 { &MAIN } else { &HELPER };
    let tid = thread.tid.load(Ordering::SeqCst);
    tid != 0
        && std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall"))
            .is_ok_and(|line| futex_wait_timeout(&line).is_some())
}

/// Every thread that could run user code, each asleep in an untimed futex wait, with its
/// context switches so far.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Snapshot {
    threads: Vec<(i32, u64)>,
}

/// The snapshot of a process in which every thread that could run user code is asleep in an
/// untimed futex wait, or `None` if one is not (or cannot be read), or if none could.
pub(crate) fn blocked_snapshot() -> Option<Snapshot> {
    let workers = [&MAIN, &HELPER, &WATCHDOG]
        .map(|t| (t.tid.load(Ordering::SeqCst), t.idle.load(Ordering::SeqCst)));
    let mut all = Vec::new();
    for entry in std::fs::read_dir("/proc/self/task").ok()? {
        all.push(entry.ok()?.file_name().to_str()?.parse::<i32>().ok()?);
    }
    let tids = threads_to_look_at(&all, workers)?;
    // A test thread spinning for good: the time it began stands in for its switches (the
    // top bit set, so it is never taken for a count of them).
    let now = now_us();
    let spinning = |tid: i32| {
        [&MAIN, &HELPER]
            .into_iter()
            .find(|t| t.tid.load(Ordering::SeqCst) == tid)
            .and_then(|t| t.stuck_spinning(now))
            .map(|since| since | SPINNING)
    };
    // All the waits first: a running thread (usually the first one read) ends the look early.
    for &tid in &tids {
        if spinning(tid).is_some() {
            continue;
        }
        let syscall = std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall")).ok()?;
        if !in_untimed_futex_wait(&syscall) {
            return None;
        }
    }
    let mut threads = Vec::with_capacity(tids.len());
    for tid in tids {
        if let Some(since) = spinning(tid) {
            threads.push((tid, since));
            continue;
        }
        let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
        // A thread a wake-up has made runnable still shows the futex wait in its syscall file
        // until it runs, and its switches do not move while it waits for a core: its state
        // says it is no longer asleep.
        if !sleeping(&status) {
            return None;
        }
        threads.push((tid, context_switches(&status)?));
    }
    threads.sort_unstable();
    Some(Snapshot { threads })
}

/// The threads of the process (`all`) the stuck test looks at, given the worker's main
/// thread, helper and watchdog as `(tid, idle)`: every thread but the worker's idle ones, or
/// `None` when there is nothing to look at.
///
/// Nothing is looked at while both test threads are idle: the helper has finished its suffix
/// and the main thread is on its way out of its wait for it (a sleep of microseconds, which a
/// loaded machine can stretch to milliseconds), so the run is ending, whatever the threads of
/// the user's do. Looking then took a run for blocked for good because a timer thread of the
/// user's (futures-timer's, between two timers) was parked untimed while the main thread had
/// not yet been given a core: governor 0.10.4's `until_n_ready`, a false alarm under load.
/// Nor is a process of hundreds of threads looked at: each look reads two small files per
/// thread, and such a run is left to the timeout rather than slowed down every few
/// milliseconds.
fn threads_to_look_at(all: &[i32], workers: [(i32, bool); 3]) -> Option<Vec<i32>> {
    let [main, helper, _] = workers;
    if main.1 && helper.1 {
        return None;
    }
    let tids: Vec<i32> = all
        .iter()
        .copied()
        .filter(|tid| !workers.iter().any(|&(w, idle)| idle && w == *tid))
        .collect();
    (!tids.is_empty() && tids.len() <= MAX_THREADS).then_some(tids)
}

impl Snapshot {
    /// How many threads it holds when they are all the worker's test threads (the main
    /// thread, the helper); `None` when it holds another (a thread the user's code started).
    pub(crate) fn test_threads_only(&self) -> Option<usize> {
        let ours = [
            MAIN.tid.load(Ordering::SeqCst),
            HELPER.tid.load(Ordering::SeqCst),
        ];
        self.threads
            .iter()
            .all(|(tid, _)| *tid != 0 && ours.contains(tid))
            .then_some(self.threads.len())
    }
}

impl Snapshot {
    /// How many of its threads spin for good (the others sleep in a futex wait).
    pub(crate) fn spinners(&self) -> usize {
        self.threads
            .iter()
            .filter(|(_, switches)| switches & SPINNING != 0)
            .count()
    }
}

/// The bit that marks a snapshot's entry as a spinning thread's (the time it began spinning
/// standing in for its context switches, which never reach it).
const SPINNING: u64 = 1 << 63;

/// Most threads (besides the worker's own) the stuck test looks at.
const MAX_THREADS: usize = 64;

/// Whether a `/proc/<pid>/task/<tid>/syscall` line shows a futex wait without a timeout:
/// `NR arg0 … arg5 sp pc`, with `futex(uaddr, op, val, timeout, …)`.
fn in_untimed_futex_wait(line: &str) -> bool {
    futex_wait_timeout(line) == Some(0)
}

/// The timeout argument of the futex wait a `/proc/<pid>/task/<tid>/syscall` line shows (0:
/// none), or `None` when it shows no futex wait.
fn futex_wait_timeout(line: &str) -> Option<u64> {
    let futex = FUTEX?;
    let mut fields = line.split_whitespace();
    if fields.next().and_then(|nr| nr.parse::<i64>().ok()) != Some(futex) {
        return None;
    }
    let args: Vec<u64> = fields
        .take(4)
        .filter_map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .collect();
    let [_, op, _, timeout] = args[..] else {
        return None;
    };
    // The command without FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME (256): FUTEX_WAIT,
    // FUTEX_LOCK_PI, FUTEX_WAIT_BITSET and FUTEX_WAIT_REQUEUE_PI all sleep until woken or
    // until the timeout, if any.
    matches!(op & 127, 0 | 6 | 9 | 11).then_some(timeout)
}

/// Whether a `/proc/…/status` text shows an interruptible sleep (`State:\tS (sleeping)`), as
/// a futex wait is until a wake-up makes the thread runnable (`R`).
fn sleeping(status: &str) -> bool {
    status
        .lines()
        .find_map(|l| l.strip_prefix("State:"))
        .is_some_and(|state| state.trim_start().starts_with('S'))
}

/// Voluntary plus involuntary context switches, from a `/proc/…/status` text.
fn context_switches(status: &str) -> Option<u64> {
    let count = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    Some(count("voluntary_ctxt_switches:")? + count("nonvoluntary_ctxt_switches:")?)
}

/// The futex syscall's number where this test is known to hold.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
const FUTEX: Option<i64> = Some(202);
#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
const FUTEX: Option<i64> = Some(98);
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
const FUTEX: Option<i64> = None;

/// The calling thread's kernel id, from `/proc/thread-self` (`<pid>/task/<tid>`).
fn current_tid() -> Option<i32> {
    FUTEX?;
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Condvar, Mutex};
    use std::time::Duration;

    #[test]
    fn reads_the_syscall_line() {
        let cases = [
            // std's Mutex::lock: FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, no timeout.
            ("202 0x7f3a 0x89 0x2 0x0 0x0 0xffffffff 0x7ffd 0x7f3b", true),
            // FUTEX_WAIT | FUTEX_PRIVATE_FLAG, no timeout (a parking_lot park).
            ("202 0x7f3a 0x80 0x2 0x0 0x0 0x0 0x7ffd 0x7f3b", true),
            // The same with a timeout: it wakes by itself.
            (
                "202 0x7f3a 0x89 0x2 0x7ffd1234 0x0 0xffffffff 0x7ffd 0x7f3b",
                false,
            ),
            // FUTEX_WAKE is not a wait.
            ("202 0x7f3a 0x81 0x1 0x0 0x0 0x0 0x7ffd 0x7f3b", false),
            // clock_nanosleep, running, and a truncated line.
            ("230 0x0 0x0 0x7fff 0x7fff 0x0 0x0 0x7fff 0x7efc", false),
            ("running", false),
            ("202 0x7f3a 0x89", false),
        ];
        for (line, untimed) in cases {
            let expected = untimed && cfg!(all(target_os = "linux", target_arch = "x86_64"));
            assert_eq!(in_untimed_futex_wait(line), expected, "{line}");
        }
    }

    #[test]
    fn only_an_interruptible_sleep_is_asleep() {
        assert!(sleeping("Name:\tx\nState:\tS (sleeping)\nTgid:\t1\n"));
        // Woken, waiting for a core; running; in an uninterruptible wait; unreadable.
        assert!(!sleeping("Name:\tx\nState:\tR (running)\n"));
        assert!(!sleeping("State:\tD (disk sleep)\n"));
        assert!(!sleeping("Name:\tx\n"));
    }

    #[test]
    fn counts_context_switches() {
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t7\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(context_switches(status), Some(10));
        assert_eq!(context_switches("Name:\tx\n"), None);
    }

    /// A thread of the test process waiting on a condition variable nobody signals is stuck;
    /// the test's own thread, spinning, is not (it reads the files, so it is running).
    #[test]
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    fn a_spinning_reader_is_never_stuck_but_sees_a_sleeper() {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let waiter = {
            let pair = pair.clone();
            std::thread::spawn(move || {
                let tid = current_tid().expect("a thread id");
                let (lock, signal) = &*pair;
                let mut woken = lock.lock().unwrap();
                TID.store(tid, Ordering::SeqCst);
                while !*woken {
                    woken = signal.wait(woken).unwrap();
                }
            })
        };
        let tid = loop {
            let tid = TID.load(Ordering::SeqCst);
            if tid != 0 {
                break tid;
            }
            std::thread::yield_now();
        };
        // The calling thread reads the files, so it is running: never stuck as a whole.
        assert_eq!(blocked_snapshot(), None);
        // The waiter itself, once asleep, shows an untimed futex wait.
        let mut asleep = false;
        for _ in 0..200 {
            let line = std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall"))
                .expect("the waiter's syscall file");
            if in_untimed_futex_wait(&line) {
                asleep = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(asleep, "the waiter never showed an untimed futex wait");
        let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status"))
            .expect("the waiter's status file");
        assert!(sleeping(&status), "{status}");
        *pair.0.lock().unwrap() = true;
        pair.1.notify_all();
        waiter.join().unwrap();
    }

    static TID: AtomicI32 = AtomicI32::new(0);

    /// The worker's idle threads are never looked at; while both test threads are idle (the
    /// run ending), nothing is, even a thread of the user's asleep untimed.
    #[test]
    fn looks_at_no_thread_while_both_test_threads_are_idle() {
        let (main, helper, watchdog, user) = (10, 11, 12, 20);
        let all = [main, helper, watchdog, user];
        let cases = [
            // (main idle, helper idle): what is looked at.
            ((false, false), Some(vec![main, helper, user])),
            // The main thread waits for the helper's suffix.
            ((true, false), Some(vec![helper, user])),
            // A sequential order on the main thread, the helper between runs.
            ((false, true), Some(vec![main, user])),
            // The helper's suffix is done, the main thread not yet out of its wait.
            ((true, true), None),
        ];
        for ((main_idle, helper_idle), expected) in cases {
            let workers = [(main, main_idle), (helper, helper_idle), (watchdog, true)];
            assert_eq!(
                threads_to_look_at(&all, workers),
                expected,
                "main idle {main_idle}, helper idle {helper_idle}"
            );
        }
        // Too many threads to look at every few milliseconds; or none at all.
        let many: Vec<i32> = (100..100 + MAX_THREADS as i32 + 1).collect();
        let workers = [(main, false), (helper, true), (watchdog, true)];
        assert_eq!(threads_to_look_at(&many, workers), None);
        assert_eq!(threads_to_look_at(&[helper, watchdog], workers), None);
    }

    /// A spin counts for the worker thread that spins, whatever the role of its call: a
    /// sequential order runs thread 1's calls on the main thread, whose spin the stuck test
    /// must see there (else a spin lock blocking alone ran into the timeout and cost the
    /// worker).
    #[test]
    fn a_spin_counts_for_the_thread_that_spins_whatever_its_role() {
        static ON_MAIN: RuntimeThread = RuntimeThread::new(false);
        std::thread::spawn(|| {
            ON_MAIN.register();
            note_spin(1);
            assert_ne!(ON_MAIN.spinning_since.load(Ordering::SeqCst), 0);
            note_progress(1);
            assert_eq!(ON_MAIN.spinning_since.load(Ordering::SeqCst), 0);
        })
        .join()
        .unwrap();
    }

    /// A test thread spinning counts from its first pause until it makes progress; only a
    /// spin of [`SPIN_STUCK_MS`] or more is one for good.
    #[test]
    fn a_spin_counts_from_its_first_pause_until_progress() {
        note_progress(1);
        assert_eq!(HELPER.spinning_since.load(Ordering::SeqCst), 0);
        note_spin(1);
        let since = HELPER.spinning_since.load(Ordering::SeqCst);
        assert_ne!(since, 0);
        note_spin(1);
        assert_eq!(HELPER.spinning_since.load(Ordering::SeqCst), since);
        assert_eq!(HELPER.pauses.load(Ordering::SeqCst), 2);
        note_progress(1);
        // A new spin counts its pauses afresh.
        note_spin(1);
        assert_eq!(HELPER.pauses.load(Ordering::SeqCst), 1);
        note_progress(1);
        assert_eq!(HELPER.spinning_since.load(Ordering::SeqCst), 0);

        let thread = RuntimeThread::new(false);
        let stuck_after = SPIN_STUCK_MS * 1000;
        assert_eq!(thread.stuck_spinning(stuck_after * 9), None);
        thread.spinning_since.store(1_000, Ordering::SeqCst);
        thread
            .last_spin
            .store(1_000 + stuck_after - 1, Ordering::SeqCst);
        thread.pauses.store(SPIN_STUCK_PAUSES, Ordering::SeqCst);
        assert_eq!(thread.stuck_spinning(1_000 + stuck_after - 1), None);
        assert_eq!(thread.stuck_spinning(1_000 + stuck_after), Some(1_000));
        // As long, but a bounded backoff's few pauses (its thread starved of a core).
        thread.pauses.store(SPIN_STUCK_PAUSES - 1, Ordering::SeqCst);
        assert_eq!(thread.stuck_spinning(1_000 + stuck_after), None);
        thread.pauses.store(SPIN_STUCK_PAUSES, Ordering::SeqCst);
        // Spun once, then went on without pausing again: not spinning still.
        let late = 1_000 + stuck_after + SPIN_RECENT_MS * 1000;
        assert_eq!(thread.stuck_spinning(late), None);
    }
}
