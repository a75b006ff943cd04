//! Controlled scheduling: in a controlled run the two test threads run one at a time and switch
//! only at schedule points (the start and end of every instrumented call, and the split points
//! of the copy), as a seeded strategy chooses. The same test with the same [`Control`] and seed
//! makes the same choices, so a failing run replays.
//!
//! The thread that does not hold the turn waits for it (spinning briefly, then yielding, then
//! sleeping for microseconds: never an untimed wait, which the stuck test would take for a
//! deadlock). A thread holding the turn can block where no point is: on a lock the waiting
//! thread holds, in a condition variable, in a sleep. The waiting thread notices that the
//! holder has not reached a point for a while and asks the kernel whether it is asleep in a
//! futex wait (`/proc/self/task/<tid>/syscall`: a lock, a condition variable, `park`, timed
//! or not); if it is, the waiting thread takes the turn (the sleeper is *blocked* and the
//! strategy passes it over until it runs again). A sleep keeps the turn: it waits for time
//! alone and ends by itself. (A timed wait whose timeout runs out while the other thread has
//! the turn wakes at a moment the schedule does not fix: such a run replays as far as timing
//! allows.) Waking is synchronous with
//! the release (the kernel makes the sleeper runnable inside the releasing call), so whether a
//! blocked thread can run is known at the releaser's next point, the same in every replay.
//!
//! A holder that neither reaches a point nor blocks for [`STALL`] (a spin loop, a long
//! computation, code outside the copy) ends control for the run: both threads run free from
//! then on and the run is marked *not fully controlled*. Nothing here ever calls a run a
//! deadlock: the watchdog still does, with its usual evidence.
//!
//! Locks of the copy do not put a thread to sleep under control: the copy acquires them
//! through `covcon_rt::acquire`, which tries the lock and, when it is held, hands the turn to
//! the other thread ([`busy`]); the waiting thread tries again when the strategy next chooses
//! it, which it may only after the other thread has passed a point since the failed try. Two
//! threads that each wait for a lock the other holds block for real, one after the other, and
//! the stuck test sees the deadlock.
//!
//! Condition variables of the copy are taken over the same way (`covcon_rt::Cond`): a
//! waiting thread releases the lock and hands the turn over ([`cond_wait`]); it can be chosen
//! again once the other thread notified that condition variable ([`notify`]), or at any point
//! if its wait has a timeout (being chosen unnotified is the timeout), and then re-takes the
//! lock like any acquisition.
//!
//! A thread chosen [`FAIR_STEPS`] points in a row while the other could run is switched out
//! (PCT: its priority drops below the other's): a spin loop with a point inside (an atomic the
//! copy instruments) waits for the other thread, which the highest-priority rule alone would
//! never let run.
//!
//! Every hand-over of the turn waits for the other thread to be given a core, which costs
//! microseconds on an idle machine and a scheduler time slice (milliseconds) on a loaded one:
//! a run switched at thousands of points (a random walk through a method that loops over 4,096
//! shards) took seconds there, outlived the test timeout and was taken for a deadlock that no
//! sequential order shows. So a run hands over at most [`MAX_HANDOFFS`] times, after which
//! control ends as at a stall; and a random walk tosses for a switch only until it has switched
//! [`MAX_COIN_SWITCHES`] times, which keeps a long run controlled, and replayable, further.
//!
//! Strategies: PCT (Burckhardt et al., ASPLOS 2010: random thread priorities, `depth − 1`
//! priority change points over the run's expected number of steps; the highest-priority
//! runnable thread runs) and a random walk (at every point, either thread with even odds).

use covcon_protocol::{Control, Schedule};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long the waiting thread lets the holder run without a point before looking whether
/// it is asleep.
const LOOK_AFTER: Duration = Duration::from_micros(20);
/// How long a holder may go without a point, awake, before control ends for the run.
const STALL: Duration = Duration::from_millis(20);
/// Most switches recorded.
const MAX_SWITCHES: usize = 32;
/// Points one thread may be chosen in a row while the other could run.
pub(crate) const FAIR_STEPS: u32 = 256;
/// Most times a run hands the turn to the other thread before control ends for it: on a
/// loaded machine each costs up to a time slice (a few milliseconds), and the run must stay
/// well inside the test timeout (1 s by default) there.
const MAX_HANDOFFS: u64 = 128;
/// Switches a random walk makes by its coin before it stops tossing (the running thread then
/// runs on until it cannot, or for [`FAIR_STEPS`] points).
const MAX_COIN_SWITCHES: u32 = 48;

/// Whether a controlled run is under way (cleared when control ends).
static ON: AtomicBool = AtomicBool::new(false);
/// The thread that may run.
static TURN: AtomicU8 = AtomicU8::new(0);
/// Per thread: its suffix has ended.
static FINISHED: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
/// Per thread: found asleep while holding the turn, and not at a point since.
static BLOCKED: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
/// Per thread: waiting for its turn (asleep there is not blocked: it sleeps in short timed
/// naps and sees the turn come within one).
static WAITING: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
/// Per thread: points passed (the waiting thread watches the holder's).
static PROGRESS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
/// Per thread: found a lock of the copy held and handed its turn over ([`busy`]).
static LOCK_WAIT: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
/// Per thread in a lock wait: the other thread's progress when the try failed. It may try
/// again once the other has passed a point since (and so may have released the lock).
static LOCK_WAIT_SEEN: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
/// Per thread: the address of the condition variable of the copy it waits on (0 for none).
static COND_WAIT: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
/// Per thread: its condition wait has a timeout.
static COND_TIMED: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
/// Per thread: its condition wait was notified.
static NOTIFIED: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
/// Whether control ended early in this run.
static GAVE_UP: AtomicBool = AtomicBool::new(false);
/// Blocked threads woken while the other held the turn, this run.
static WAKES: AtomicU64 = AtomicU64::new(0);
/// Times the turn was handed to the other thread, this run ([`MAX_HANDOFFS`]).
static HANDOFFS: AtomicU64 = AtomicU64::new(0);
/// The strategy's state: used only by the thread holding the turn, so never contended.
static STATE: Mutex<Option<Strategy>> = Mutex::new(None);

struct Strategy {
    control: Control,
    seed: u64,
    rng: u64,
    /// PCT priorities, higher runs; change points lower the running thread's.
    priority: [i64; 2],
    /// PCT change points (steps), ascending.
    changes: Vec<u64>,
    step: u64,
    switches: Vec<u64>,
    /// Times in a row the running thread was chosen while the other could run.
    run_length: u32,
    /// Switches the random walk's coin made ([`MAX_COIN_SWITCHES`]).
    coin_switches: u32,
}

impl Strategy {
    fn new(control: Control, seed: u64) -> Strategy {
        let mut strategy = Strategy {
            control,
            seed,
            // Mixed, as the noise's generator is (`points::set_role`): the runs of a repeated
            // test have neighbouring seeds.
            rng: crate::hash::mix(seed ^ 0xA076_1D64_78BD_642F) | 1,
            priority: [0, 0],
            changes: Vec::new(),
            step: 0,
            switches: Vec::new(),
            run_length: 0,
            coin_switches: 0,
        };
        match control {
            Control::Pct { depth, steps } => {
                let depth = i64::from(depth.clamp(1, 3));
                let first = (strategy.next() & 1) as usize;
                strategy.priority[first] = depth + 1;
                strategy.priority[1 - first] = depth;
                let steps = u64::from(steps.max(2));
                strategy.changes = (1..depth).map(|_| 1 + strategy.next() % steps).collect();
                strategy.changes.sort_unstable();
            }
            Control::Preempt { first, .. } => {
                strategy.priority[usize::from(first.min(1))] = 1;
            }
            Control::Random | Control::Free => {
                let first = (strategy.next() & 1) as usize;
                strategy.priority[first] = 1;
            }
        }
        strategy
    }

    /// xorshift64*.
    fn next(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The thread that starts.
    fn first(&self) -> u8 {
        u8::from(self.priority[1] > self.priority[0])
    }

    /// The thread to run after `me`'s point, `other` being able to run or not: the random
    /// walk tosses a coin; PCT and given preemptions lower the running thread's priority at
    /// their steps, and the higher-priority thread that can run runs.
    fn choose(&mut self, me: u8, other_runnable: bool) -> u8 {
        self.step += 1;
        let other = 1 - me;
        let (mine, theirs) = (usize::from(me), usize::from(other));
        match self.control {
            Control::Free => return me,
            Control::Random => {
                // A coin per point (tossed only when the other can run): heads, it goes first.
                let switch = other_runnable
                    && self.coin_switches < MAX_COIN_SWITCHES
                    && self.next() & 1 == 1;
                self.coin_switches += u32::from(switch);
                self.priority[mine] = i64::from(!switch);
                self.priority[theirs] = i64::from(switch);
            }
            Control::Pct { .. } => {
                let changed = self.changes.iter().filter(|&&c| c == self.step).count();
                if changed > 0 {
                    let lowest = self.priority.iter().copied().min().unwrap_or(0);
                    self.priority[mine] = lowest - changed as i64;
                }
            }
            Control::Preempt { at, .. } => {
                if at.contains(&(self.step as u32)) {
                    // The running thread yields its priority to the other for good.
                    self.priority[mine] = -(self.step as i64);
                    self.priority[theirs] = 1;
                }
            }
        }
        if other_runnable && self.run_length >= FAIR_STEPS {
            // Fairness: the running thread may be spinning on what the other is to do.
            let lowest = self.priority.iter().copied().min().unwrap_or(0);
            self.priority[mine] = lowest - 1;
        }
        let next = if other_runnable && self.priority[theirs] > self.priority[mine] {
            other
        } else {
            me
        };
        self.run_length = if next == me && other_runnable {
            self.run_length + 1
        } else {
            0
        };
        if next != me && self.switches.len() < MAX_SWITCHES {
            self.switches.push(self.step);
        }
        next
    }
}

/// Starts controlled scheduling for the next concurrent run (before either thread starts).
pub(crate) fn begin_run(control: Control, seed: u64) {
    for t in 0..2 {
        FINISHED[t].store(false, Ordering::SeqCst);
        BLOCKED[t].store(false, Ordering::SeqCst);
        PROGRESS[t].store(0, Ordering::SeqCst);
        LOCK_WAIT[t].store(false, Ordering::SeqCst);
        COND_WAIT[t].store(0, Ordering::SeqCst);
        NOTIFIED[t].store(false, Ordering::SeqCst);
    }
    GAVE_UP.store(false, Ordering::SeqCst);
    WAKES.store(0, Ordering::SeqCst);
    HANDOFFS.store(0, Ordering::SeqCst);
    if control == Control::Free {
        *state() = None;
        ON.store(false, Ordering::SeqCst);
        return;
    }
    let strategy = Strategy::new(control, seed);
    TURN.store(strategy.first(), Ordering::SeqCst);
    *state() = Some(strategy);
    ON.store(true, Ordering::SeqCst);
}

/// Ends the run's control and answers its schedule (`None` for a free run).
pub(crate) fn end_run() -> Option<Schedule> {
    ON.store(false, Ordering::SeqCst);
    state().take().as_ref().map(Strategy::record)
}

/// The schedule of the controlled run under way, for the watchdog's answer when the run never
/// ends (its threads are blocked, not in the scheduler; `None` for a free run).
pub(crate) fn snapshot() -> Option<Schedule> {
    STATE.try_lock().ok()?.as_ref().map(Strategy::record)
}

impl Strategy {
    /// The run's schedule so far, as the answer reports it.
    fn record(&self) -> Schedule {
        Schedule {
            seed: self.seed,
            steps: self.step,
            switches: self.switches.clone(),
            free: GAVE_UP.load(Ordering::SeqCst),
            wakes: WAKES.load(Ordering::SeqCst),
            handoffs: HANDOFFS.load(Ordering::SeqCst),
        }
    }
}

fn state() -> std::sync::MutexGuard<'static, Option<Strategy>> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether the current run is controlled (and control has not ended).
#[inline]
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Thread `me` starts its suffix: waits for its turn.
pub(crate) fn thread_start(me: u8) {
    if on() && me < 2 {
        wait_turn(me);
    }
}

/// Thread `me` ended its suffix: the other runs on alone.
pub(crate) fn thread_end(me: u8) {
    if me >= 2 {
        return;
    }
    FINISHED[usize::from(me)].store(true, Ordering::SeqCst);
    if on() {
        TURN.store(1 - me, Ordering::SeqCst);
    }
}

/// A schedule point on test thread `me` of a controlled run.
pub(crate) fn point(me: u8) {
    switched_at_point(me);
}

/// [`point`], answering whether the strategy handed the turn to the other thread there (and
/// it came back): a timed acquisition that found its lock held waits on when it did, and
/// times out when the strategy kept running it (`covcon_rt::acquire_for`).
pub(crate) fn switched_at_point(me: u8) -> bool {
    if me >= 2 || !on() {
        return false;
    }
    let mine = usize::from(me);
    PROGRESS[mine].fetch_add(1, Ordering::SeqCst);
    if BLOCKED[mine].swap(false, Ordering::SeqCst) {
        WAKES.fetch_add(1, Ordering::SeqCst);
    }
    if TURN.load(Ordering::SeqCst) != me {
        // Woken from a block while the other held the turn: it decides.
        wait_turn(me);
        return true;
    }
    let other = 1 - me;
    let next = {
        let mut state = state();
        let Some(strategy) = state.as_mut() else {
            return false;
        };
        strategy.choose(me, runnable(other))
    };
    if next != me && hand_over(next) {
        wait_turn(me);
        return true;
    }
    false
}

/// Gives the turn to thread `to`, unless the run has handed over [`MAX_HANDOFFS`] times
/// already: then control ends for it (both threads run free from here, the run is marked not
/// fully controlled) and the answer is false.
fn hand_over(to: u8) -> bool {
    // Only the thread holding the turn hands it over: the count is never contended.
    let handed = HANDOFFS.load(Ordering::SeqCst);
    if handed >= MAX_HANDOFFS {
        GAVE_UP.store(true, Ordering::SeqCst);
        ON.store(false, Ordering::SeqCst);
        return false;
    }
    HANDOFFS.store(handed + 1, Ordering::SeqCst);
    TURN.store(to, Ordering::SeqCst);
    true
}

/// Thread `me`, holding the turn, found a lock of the copy held: it hands the turn to the
/// other thread and waits to be chosen again, then answers true (try again). Answers false
/// when the other cannot run (it finished, is blocked, or waits for a lock itself and `me` has
/// not passed a point since its try): `me` must then block for real.
pub(crate) fn busy(me: u8) -> bool {
    if me >= 2 || !on() {
        return false;
    }
    let other = 1 - me;
    if !runnable(other) {
        return false;
    }
    let mine = usize::from(me);
    LOCK_WAIT_SEEN[mine].store(
        PROGRESS[usize::from(other)].load(Ordering::SeqCst),
        Ordering::SeqCst,
    );
    LOCK_WAIT[mine].store(true, Ordering::SeqCst);
    if !hand_over(other) {
        LOCK_WAIT[mine].store(false, Ordering::SeqCst);
        return false;
    }
    wait_turn(me);
    LOCK_WAIT[mine].store(false, Ordering::SeqCst);
    on()
}

/// How a controlled condition wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woken {
    Notified,
    TimedOut,
    /// Control ended during the wait: a spurious wake-up, which std allows.
    Spurious,
    /// An untimed wait no notify the copy saw reached got the turn back: the other thread
    /// finished or blocked (the caller tells a notify missing from the code from one the copy
    /// did not see).
    Abandoned,
}

/// Whether thread `me` can wait under control now: the other thread can run (and so may
/// notify), or the wait has a timeout (then it times out at once when nothing else can run).
/// Otherwise the wait is std's, which sleeps for real where the stuck test sees it.
pub(crate) fn can_wait(me: u8, timed: bool) -> bool {
    if me >= 2 || !on() {
        return false;
    }
    // The wait releases a lock: a thread that found it held may try again.
    PROGRESS[usize::from(me)].fetch_add(1, Ordering::SeqCst);
    timed || runnable(1 - me)
}

/// Thread `me`, holding the turn, has released its lock to wait on the condition variable at
/// `condvar`: it hands the turn over and waits to be chosen, which it can be once notified,
/// or at any point when `timed` (chosen unnotified, it timed out).
pub(crate) fn cond_wait(me: u8, condvar: usize, timed: bool) -> Woken {
    let mine = usize::from(me);
    NOTIFIED[mine].store(false, Ordering::SeqCst);
    COND_TIMED[mine].store(timed, Ordering::SeqCst);
    COND_WAIT[mine].store(condvar, Ordering::SeqCst);
    let other = 1 - me;
    if runnable(other) && hand_over(other) {
        wait_turn(me);
    }
    COND_WAIT[mine].store(0, Ordering::SeqCst);
    let notified = NOTIFIED[mine].swap(false, Ordering::SeqCst);
    match (notified, on(), timed) {
        (true, _, _) => Woken::Notified,
        (false, false, _) => Woken::Spurious,
        (false, true, true) => Woken::TimedOut,
        (false, true, false) => Woken::Abandoned,
    }
}

/// Thread `me` notifies the condition variable at `condvar`: the other thread, if it waits on
/// it under control, may run from now on.
pub(crate) fn notify(me: u8, condvar: usize) {
    if me >= 2 {
        return;
    }
    let other = usize::from(1 - me);
    if COND_WAIT[other].load(Ordering::SeqCst) == condvar {
        NOTIFIED[other].store(true, Ordering::SeqCst);
    }
}

/// Whether thread `t` can run now: not finished, and not asleep in a wait it was found in.
/// A thread found asleep that is awake now was woken by a release since (waking is
/// synchronous with it) and is on its way: it either gets what it waited for and reaches a
/// point, where it waits for its turn, or sleeps again (the lock was taken back before it
/// ran). The caller stands still at its point until it is one or the other, so the answer is
/// the same in every replay.
fn runnable(t: u8) -> bool {
    let t = usize::from(t);
    if FINISHED[t].load(Ordering::SeqCst) {
        return false;
    }
    let waits_unnotified = COND_WAIT[t].load(Ordering::SeqCst) != 0
        && !NOTIFIED[t].load(Ordering::SeqCst)
        && !COND_TIMED[t].load(Ordering::SeqCst);
    if waits_unnotified {
        return false;
    }
    let waits_for_lock = LOCK_WAIT[t].load(Ordering::SeqCst);
    if waits_for_lock
        && PROGRESS[1 - t].load(Ordering::SeqCst) == LOCK_WAIT_SEEN[t].load(Ordering::SeqCst)
    {
        return false;
    }
    if !BLOCKED[t].load(Ordering::SeqCst) {
        return true;
    }
    let started = Instant::now();
    loop {
        if FINISHED[t].load(Ordering::SeqCst) {
            return false;
        }
        if WAITING[t].load(Ordering::SeqCst) || started.elapsed() >= STALL {
            if BLOCKED[t].swap(false, Ordering::SeqCst) {
                WAKES.fetch_add(1, Ordering::SeqCst);
            }
            return true;
        }
        if asleep(t) {
            return false;
        }
        std::thread::yield_now();
    }
}

/// Waits until thread `me` holds the turn, taking it when the holder ends, blocks or stalls.
fn wait_turn(me: u8) {
    WAITING[usize::from(me)].store(true, Ordering::SeqCst);
    wait_turn_inner(me);
    WAITING[usize::from(me)].store(false, Ordering::SeqCst);
}

fn wait_turn_inner(me: u8) {
    let other = usize::from(1 - me);
    let mut seen = PROGRESS[other].load(Ordering::SeqCst);
    let mut since = Instant::now();
    let mut looked = since;
    let mut spins = 0u32;
    loop {
        if !on() || TURN.load(Ordering::SeqCst) == me {
            return;
        }
        if FINISHED[other].load(Ordering::SeqCst) {
            TURN.store(me, Ordering::SeqCst);
            return;
        }
        spins = spins.wrapping_add(1);
        if spins < 64 {
            std::hint::spin_loop();
            continue;
        }
        let progress = PROGRESS[other].load(Ordering::SeqCst);
        let now = Instant::now();
        if progress != seen {
            seen = progress;
            since = now;
            looked = now;
        } else if now.duration_since(looked) >= LOOK_AFTER {
            looked = now;
            // The holder may have reached a point and handed over just now.
            if TURN.load(Ordering::SeqCst) == me {
                return;
            }
            if WAITING[other].load(Ordering::SeqCst) {
                // Handed the turn a moment ago, the holder is still in its nap.
                since = now;
            } else if asleep(other) {
                BLOCKED[other].store(true, Ordering::SeqCst);
                TURN.store(me, Ordering::SeqCst);
                return;
            }
            if now.duration_since(since) >= STALL {
                GAVE_UP.store(true, Ordering::SeqCst);
                ON.store(false, Ordering::SeqCst);
                return;
            }
        }
        if now.duration_since(since) < Duration::from_micros(200) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(20));
        }
    }
}

/// Whether test thread `t` is blocked: asleep in a futex wait (a lock, a condition variable,
/// `park`, with or without a timeout), waiting for another thread. A sleep is not: it waits
/// for time alone, and the thread keeps its turn through it, so a replay does not depend on
/// how long it took. Where this cannot be read, a thread is never blocked: control then ends
/// at [`STALL`].
fn asleep(t: usize) -> bool {
    crate::stuck::test_thread_waits(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(control: Control, seed: u64, points: &[u8]) -> (u8, Vec<u8>) {
        let mut s = Strategy::new(control, seed);
        let first = s.first();
        let mut running = first;
        let mut order = Vec::new();
        for _ in points {
            running = s.choose(running, true);
            order.push(running);
        }
        (first, order)
    }

    /// A repeated test's runs have seeds `s, s + 1, …` (`worker::answer`): each gets a
    /// schedule of its own. Seeded as `(s ^ k) | 1`, two neighbouring seeds were one state,
    /// so 16 runs made at most 8 schedules.
    #[test]
    fn neighbouring_seeds_make_different_schedules() {
        for base in [0_u64, 1 << 40, 0xDEAD_BEEF_0000] {
            let control = Control::Pct {
                depth: 3,
                steps: 40,
            };
            let schedules: std::collections::BTreeSet<(u8, Vec<u8>)> = (base..base + 64)
                .map(|seed| run(control, seed, &[0; 40]))
                .collect();
            // 64 draws of about 1,600 schedules: a few may meet by chance, not half.
            assert!(schedules.len() >= 56, "{base}: {}", schedules.len());
        }
    }

    #[test]
    fn pct_switches_once_per_change_point_and_replays_from_its_seed() {
        for seed in 0..50 {
            for depth in 1..=3u8 {
                let control = Control::Pct { depth, steps: 20 };
                let (first, order) = run(control, seed, &[0; 20]);
                let mut switches = 0;
                let mut last = first;
                for &t in &order {
                    switches += usize::from(t != last);
                    last = t;
                }
                // Two threads, depth − 1 change points (two may fall on one step).
                assert!(
                    switches <= usize::from(depth - 1),
                    "{seed} {depth} {order:?}"
                );
                assert_eq!(run(control, seed, &[0; 20]), (first, order));
            }
        }
        // Over seeds, depth 2 does switch, at different steps.
        let steps: std::collections::BTreeSet<usize> = (0..50)
            .filter_map(|seed| {
                let (first, order) = run(
                    Control::Pct {
                        depth: 2,
                        steps: 20,
                    },
                    seed,
                    &[0; 20],
                );
                order.iter().position(|&t| t != first)
            })
            .collect();
        assert!(steps.len() > 5, "{steps:?}");
    }

    #[test]
    fn preemptions_fall_where_asked() {
        let (first, order) = run(
            Control::Preempt {
                first: 1,
                at: [3, 6],
            },
            9,
            &[0; 8],
        );
        assert_eq!(first, 1);
        assert_eq!(order, [1, 1, 0, 0, 0, 1, 1, 1]);
    }

    /// A long run (a method looping over thousands of shards) is not switched at thousands of
    /// points: each switch costs a time slice on a loaded machine.
    #[test]
    fn a_random_walk_stops_tossing_after_its_switches() {
        for seed in 0..20 {
            let (first, order) = run(Control::Random, seed, &[0; 20_000]);
            let mut last = first;
            let mut switches = Vec::new();
            for (step, &t) in order.iter().enumerate() {
                if t != last {
                    switches.push(step);
                }
                last = t;
            }
            // The coin's switches, then one per FAIR_STEPS points at most.
            let coin = u32::try_from(switches.len()).unwrap();
            assert!(
                coin <= MAX_COIN_SWITCHES + 20_000 / FAIR_STEPS,
                "{seed}: {coin}"
            );
            assert!(coin >= MAX_COIN_SWITCHES, "{seed}: {coin}");
            // Early in the run the coin still switches often.
            let early = switches.iter().filter(|&&s| s < 200).count();
            assert!(early > 20, "{seed}: {early}");
            assert_eq!(run(Control::Random, seed, &[0; 20_000]), (first, order));
        }
    }

    #[test]
    fn a_thread_that_cannot_run_is_never_chosen() {
        let mut s = Strategy::new(Control::Random, 3);
        for _ in 0..100 {
            assert_eq!(s.choose(0, false), 0);
        }
        assert!(s.switches.is_empty());
    }
}
