//! The wire protocol between covcon and a harness worker process: one JSON [`Request`] per
//! line on the worker's stdin, one JSON [`Response`] per line on its stdout for each test the
//! request holds (one, or every test of a [`Request::Batch`], in order).
//!
//! The runtime crate (`oracle/runtime`, compiled into the harness) speaks the same shapes
//! without depending on this crate; the two are kept in step by the round-trip tests.

pub use generator::Control;
use generator::TestCase;
use serde::{Deserialize, Serialize};

/// A request to a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Build the instances, run the prefix on one thread, then the two suffixes on two threads
    /// started together (spinning on an atomic).
    Concurrent {
        test: TestCase,
        noise: Noise,
        timeout_ms: u64,
        /// Whether the response carries what only the results oracle reads: the `Debug` texts
        /// of the results and final state, and a passing run's events (without them a
        /// passing run answers only the pairs it covered, and a trivial run is cheaper).
        #[serde(default = "yes")]
        capture: bool,
        /// Runs of the test back to back, each on a fresh instance with the next noise seed
        /// (`seed`, `seed + 1`, …), answered once: the first run that did not pass, or the
        /// last. Amortises the protocol's cost over several runs of the same test.
        #[serde(default = "one", skip_serializing_if = "is_one")]
        repeat: u64,
        /// No new run of the `repeat` once this many milliseconds passed since the worker
        /// took the request: a batch meant to be about a second of runs stays one when its
        /// runs turn out slower than the one its count was drawn from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repeat_for_ms: Option<u64>,
    },
    /// Build the instances, run the prefix, then the suffix calls one after another on one
    /// thread in the given order: each entry is (thread, index into that thread's calls).
    /// With `noise`, the calls are paced by it as a concurrent run's are (each call's points
    /// draw from a seed of its own) — only the calls in `paced`, or every call when it is
    /// empty: a failure that waiting alone brings on shows here too.
    Sequential {
        test: TestCase,
        order: Vec<(u8, u32)>,
        timeout_ms: u64,
        #[serde(default = "Noise::none", skip_serializing_if = "Noise::is_none")]
        noise: Noise,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        paced: Vec<(u8, u32)>,
        /// Each call on the thread it ran on concurrently (thread 1's on the worker's helper
        /// thread), else every call on one thread.
        #[serde(default, skip_serializing_if = "is_false")]
        own_threads: bool,
        /// As in `Concurrent`: the panic oracle's verdicts read only how the order ended.
        #[serde(default = "yes")]
        capture: bool,
    },
    /// Answered with a `Passed` response with test id 0; used to check a worker is alive.
    Ping,
    /// Several concurrent runs back to back on the worker's two persistent threads, each as
    /// a `Concurrent` request with its own noise and the shared timeout, answered with one
    /// response line per run, in order, each written as soon as its run ends. A deadlock in
    /// one run is answered for that run and ends the worker: the runs after it are not
    /// answered, and the pool sends them again to a fresh worker.
    Batch {
        tests: Vec<BatchRun>,
        timeout_ms: u64,
        /// As in `Concurrent`, for every run.
        #[serde(default = "yes")]
        capture: bool,
        /// As in `Concurrent`, for every run: each is answered once.
        #[serde(default = "one", skip_serializing_if = "is_one")]
        repeat: u64,
    },
}

fn yes() -> bool {
    true
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

fn is_false(b: &bool) -> bool {
    !b
}

/// One concurrent run of a [`Request::Batch`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchRun {
    pub test: TestCase,
    pub noise: Noise,
}

impl Request {
    /// The test ids of the responses this request is answered with, in order.
    pub fn answer_ids(&self) -> Vec<u64> {
        match self {
            Request::Concurrent { test, .. } | Request::Sequential { test, .. } => vec![test.id],
            Request::Ping => vec![0],
            Request::Batch { tests, .. } => tests.iter().map(|run| run.test.id).collect(),
        }
    }
}

/// Schedule perturbation at the schedule points of the instrumented copy (ConTest-style
/// noise): at each point, with these probabilities, yield, spin briefly or sleep briefly.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    pub seed: u64,
    pub yield_p: f64,
    pub spin_p: f64,
    pub sleep_p: f64,
    /// How a concurrent run is scheduled: free (the OS and the noise above decide) or
    /// controlled (one thread at a time, switching at schedule points as `seed` and the
    /// strategy choose; the noise is then unused). Sequential runs ignore it.
    #[serde(default, skip_serializing_if = "Control::is_free")]
    pub control: Control,
    /// A sequential run's real pause before each paced call, in microseconds: time passing
    /// between a thread's calls, as it did in a slow concurrent run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pause_us: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Noise {
    /// No perturbation at all.
    pub fn none() -> Noise {
        Noise {
            seed: 0,
            yield_p: 0.0,
            spin_p: 0.0,
            sleep_p: 0.0,
            control: Control::Free,
            pause_us: 0,
        }
    }

    /// Whether it perturbs nothing.
    pub fn is_none(&self) -> bool {
        self.yield_p + self.spin_p + self.sleep_p <= 0.0
            && self.control.is_free()
            && self.pause_us == 0
    }
}

/// A worker's answer to one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub test_id: u64,
    pub outcome: Outcome,
    /// Start and end of every instrumented method call, in clock order. Left out of a
    /// passing concurrent run's answer when the request did not ask to `capture`.
    #[serde(default)]
    pub events: Vec<Event>,
    /// The concurrent method pairs of the test's type the run covered (CovCon Algorithm 1,
    /// as [`crate::covered_pairs`] computes them from `events`), computed by the worker for a
    /// concurrent run; `None` when the answer does not say (then `events` do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covered: Option<Vec<[String; 2]>>,
    /// `Debug` text of each prefix call's return value (`None` when the return type has no
    /// `Debug` or the call panicked).
    #[serde(default)]
    pub prefix_results: Vec<Option<String>>,
    /// The same for each suffix call, per thread (for a sequential run, indexed as in the
    /// test's threads, not in execution order).
    #[serde(default)]
    pub results: [Vec<Option<String>>; 2],
    /// `Debug` text of instance 0 after the run, when the type implements `Debug`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_state: Option<String>,
    pub elapsed_us: u64,
    /// How many runs of a repeated test were made (the answer is the last one's).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub runs: u64,
    /// A controlled run's schedule: what replays it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// The run ended with more threads in the worker than its setup began with: the type
    /// runs threads of its own (a housekeeper, a timer). Told only when results are captured.
    #[serde(default, skip_serializing_if = "is_false")]
    pub own_threads: bool,
    /// A timed acquisition (`try_lock_for`, …) of a suffix call timed out in this concurrent
    /// run, or an attempt (`try_lock()`) found its lock held: what that call answered is one
    /// no sequential order gives (one thread alone never finds the lock held), by design of
    /// the method, so the results oracle does not judge the run. The panic and deadlock
    /// oracles still do.
    #[serde(default, skip_serializing_if = "is_false")]
    pub timed_out: bool,
    /// The run was blocked for good on condition variables of the copy alone, and the
    /// worker's watchdog ended it by unwinding the waiting calls: the outcome is that
    /// deadlock, and the worker lives on (without this, a deadlock answer ends the worker).
    #[serde(default, skip_serializing_if = "is_false")]
    pub recovered: bool,
}

/// What a controlled run reports about its schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    /// The seed the run's choices were drawn from (a repeated test's `seed + runs - 1`).
    pub seed: u64,
    /// Schedule points the two threads passed together.
    pub steps: u64,
    /// The steps at which the strategy switched threads (the first 32).
    #[serde(default)]
    pub switches: Vec<u64>,
    /// Control ended early: a thread ran too long without a point while awake (a spin loop,
    /// code outside the copy), or the run handed the turn over as often as a run may (each
    /// hand-over can cost a time slice on a loaded machine); the rest of the run was free.
    #[serde(default)]
    pub free: bool,
    /// Times a thread blocked on a lock was woken by the other's release and ran alongside
    /// it up to its next point: stretches the schedule does not order.
    #[serde(default)]
    pub wakes: u64,
    /// Times the turn passed from one thread to the other (the strategy's switches, and a
    /// thread that found a lock held or waits on a condition variable handing over).
    #[serde(default)]
    pub handoffs: u64,
}

impl Schedule {
    /// Whether the schedule ordered the whole run (control never ended, no thread ran
    /// alongside the other after a wake): the same schedule replays it exactly.
    pub fn ordered_all(&self) -> bool {
        !self.free && self.wakes == 0
    }
}

impl Response {
    /// Whether the run was controlled from start to end ([`Schedule::ordered_all`]).
    pub fn replayable(&self) -> bool {
        self.schedule.as_ref().is_some_and(Schedule::ordered_all)
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    /// A call panicked. `thread` is `None` for a constructor or prefix call (then `call` indexes
    /// instances followed by prefix calls), else the suffix thread.
    Panicked {
        thread: Option<u8>,
        call: u32,
        method: String,
        message: String,
        location: Option<String>,
        /// In a concurrent run, the other thread's panic when it panicked too (later by clock).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        also: Vec<Outcome>,
    },
    /// The run did not finish: `inside` names the instrumented method each suffix thread was
    /// in (innermost), if any. `blocked_for_good` says how the watchdog knew: every thread
    /// that could run user code was asleep in an untimed wait (a lock or condition no thread
    /// can release), or else (`false`) the run outlived its timeout: a deadlock, an endless
    /// loop or a very slow run. The worker exits after sending this.
    ///
    /// `lost_wakeup`: the run was blocked for good, the watchdog woke the threads waiting on
    /// a condition variable of the copy (a spurious wake-up, which correct code survives), and
    /// this one then finished its call: it waited for a notify that never came although what
    /// it waited for already held. Sent by the main thread when the run then passed.
    Deadlocked {
        inside: [Option<String>; 2],
        #[serde(default, skip_serializing_if = "is_false")]
        blocked_for_good: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lost_wakeup: Option<u8>,
    },
    /// A constructor returned `Err` or `None`: the test could not be set up.
    SetupFailed {
        message: String,
    },
    /// The worker died (abort, signal, `process::exit`) or stopped answering. Produced by the
    /// parent, never sent by a worker.
    Crashed {
        message: String,
    },
}

impl Outcome {
    /// A run that outlived its timeout without being blocked for good: a deadlock, an endless
    /// loop, or only a run starved of CPU.
    pub fn over_time(&self) -> bool {
        matches!(
            self,
            Outcome::Deadlocked {
                blocked_for_good: false,
                ..
            }
        )
    }
}

/// One start or end of an instrumented method call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Global logical clock value.
    pub clock: u64,
    /// 0 and 1 for the suffix threads, 2 for the prefix.
    pub thread: u8,
    /// `krate::module::Type` of the method (a type under test may call another's methods).
    pub type_path: String,
    pub method: String,
    pub start: bool,
}
