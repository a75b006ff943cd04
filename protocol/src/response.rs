//! What a worker answers: a [`Response`] per test, with its [`Outcome`], [`Event`]s and
//! [`Schedule`].

use crate::field::{needed, put, Field, Kind};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// A worker's answer to one test. `N` is how it names methods and types: the worker writes
/// the instrumented copy's `&'static str`s, covcon reads `String`s.
///
/// Only `test_id`, `outcome` and `elapsed_us` must be there; the rest is left out when empty,
/// `None`, `false`, 0 or, for `runs`, 1 (events and results are always written).
#[derive(Debug, Clone, PartialEq)]
pub struct Response<N = String> {
    pub test_id: u64,
    pub outcome: Outcome,
    /// Start and end of every instrumented method call, in clock order. Left out of a
    /// passing concurrent run's answer, and of a sequential order's that passed or panicked,
    /// when the request did not ask to `capture`.
    pub events: Vec<Event<N>>,
    /// The concurrent method pairs of the test's type the run covered (CovCon Algorithm 1,
    /// as `oracle::covered_pairs` computes them from `events`), computed by the worker for a
    /// concurrent run; `None` when the answer does not say (then `events` do).
    pub covered: Option<Vec<[N; 2]>>,
    /// `Debug` text of each prefix call's return value (`None` when the return type has no
    /// `Debug` or the call panicked).
    pub prefix_results: Vec<Option<String>>,
    /// The same for each suffix call, per thread (for a sequential run, indexed as in the
    /// test's threads, not in execution order).
    pub results: [Vec<Option<String>>; 2],
    /// `Debug` text of instance 0 after the run, when the type implements `Debug`.
    pub final_state: Option<String>,
    pub elapsed_us: u64,
    /// Of the last run, the microseconds spent building its instances and handles, running
    /// its prefix and dropping them again: what the test costs before and after its threads
    /// run (a constructor given `4096` segments builds 4,096 caches). 0 when not measured.
    pub setup_us: u64,
    /// How many runs of a repeated test were made (the answer is the last one's).
    pub runs: u64,
    /// A controlled run's schedule: what replays it.
    pub schedule: Option<Schedule>,
    /// The run ended with more threads in the worker than its setup began with: the type
    /// runs threads of its own (a housekeeper, a timer). Told only when results are captured.
    pub own_threads: bool,
    /// A timed acquisition (`try_lock_for`, …) of a suffix call timed out in this concurrent
    /// run, or an attempt (`try_lock()`) found its lock held: what that call answered is one
    /// no sequential order gives (one thread alone never finds the lock held), by design of
    /// the method, so the results oracle does not judge the run. The panic and deadlock
    /// oracles still do.
    pub timed_out: bool,
    /// The run was blocked for good on condition variables of the copy alone, and the
    /// worker's watchdog ended it by unwinding the waiting calls, or its wake-up probe woke
    /// a waiter that then finished the run: the outcome is that deadlock, and the worker
    /// lives on (without this, a deadlock answer ends the worker).
    pub recovered: bool,
    /// Of a repeated test whose results are captured, the earlier runs that passed with
    /// results unlike this answer's and each other's (results, prefix results and final
    /// state), each a whole answer of its own with its `runs` the run's number (1 for the
    /// first) and its own `schedule`: the results oracle judges every one, and the k-th run
    /// replays from `seed + k - 1`. Empty otherwise; never nested.
    pub others: Vec<Response<N>>,
    /// Which worker process answered: covcon's pool numbers its workers as it starts them
    /// (1 for the first) and marks each answer. Not on the wire; 0 when not known. Text a
    /// type prints that differs from process to process (a clock's calibration, an address)
    /// is only compared between runs of one process, or once its variation is seen.
    pub worker: u64,
}

impl<N> Response<N> {
    /// An answer that says only how the run ended: no events, results or schedule, one run.
    pub fn new(test_id: u64, outcome: Outcome) -> Response<N> {
        Response {
            test_id,
            outcome,
            events: Vec::new(),
            covered: None,
            prefix_results: Vec::new(),
            results: [Vec::new(), Vec::new()],
            final_state: None,
            elapsed_us: 0,
            setup_us: 0,
            runs: 1,
            schedule: None,
            own_threads: false,
            timed_out: false,
            recovered: false,
            others: Vec::new(),
            worker: 0,
        }
    }

    /// Whether two runs of one test answered alike: what the results oracle compares (the
    /// suffix calls' results, the final state) and the prefix's results (evidence of what
    /// varies). A repeated run keeps only `others` unlike its answer and each other.
    pub fn answers_like(&self, other: &Response<N>) -> bool {
        self.results == other.results
            && self.final_state == other.final_state
            && self.prefix_results == other.prefix_results
    }

    /// Whether the run was controlled from start to end ([`Schedule::ordered_all`]).
    pub fn replayable(&self) -> bool {
        self.schedule.as_ref().is_some_and(Schedule::ordered_all)
    }
}

/// What a controlled run reports about its schedule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schedule {
    /// The seed the run's choices were drawn from (a repeated test's `seed + runs - 1`).
    pub seed: u64,
    /// Schedule points the two threads passed together.
    pub steps: u64,
    /// The steps at which the strategy switched threads (the first 32).
    pub switches: Vec<u64>,
    /// Control ended early: a thread ran too long without a point while awake (a spin loop,
    /// code outside the copy), or the run handed the turn over as often as a run may (each
    /// hand-over can cost a time slice on a loaded machine); the rest of the run was free.
    pub free: bool,
    /// Times a thread blocked on a lock was woken by the other's release and ran alongside
    /// it up to its next point: stretches the schedule does not order.
    pub wakes: u64,
    /// Times the turn passed from one thread to the other (the strategy's switches, and a
    /// thread that found a lock held or waits on a condition variable handing over).
    pub handoffs: u64,
}

impl Schedule {
    /// Whether the schedule ordered the whole run (control never ended, no thread ran
    /// alongside the other after a wake): the same schedule replays it exactly.
    pub fn ordered_all(&self) -> bool {
        !self.free && self.wakes == 0
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
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
        blocked_for_good: bool,
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

/// What a worker writes to its stderr, before the process aborts, when a test's call panics
/// while an earlier panic of the same call unwinds (a guard whose `Drop` panics too), followed
/// by the earlier panic's message, ` at `, and its location: the crash's message then says
/// which panic the call failed with ([`Outcome::unwound_from`]).
pub const UNWOUND_FROM: &str = "covcon worker: a panic while unwinding from: ";

impl Outcome {
    /// For a crash whose worker aborted on a panic while a call's earlier panic unwound, that
    /// earlier panic's message and location ([`UNWOUND_FROM`]).
    pub fn unwound_from(&self) -> Option<(&str, &str)> {
        let Outcome::Crashed { message } = self else {
            return None;
        };
        let line = message.lines().find_map(|l| l.strip_prefix(UNWOUND_FROM))?;
        line.rsplit_once(" at ")
    }
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event<N = String> {
    /// Global logical clock value.
    pub clock: u64,
    /// 0 and 1 for the suffix threads, 2 for the prefix.
    pub thread: u8,
    /// `krate::module::Type` of the method (a type under test may call another's methods).
    pub type_path: N,
    pub method: N,
    pub start: bool,
}

// Writing (see `request.rs`).

impl<N: Serialize> Serialize for Response<N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        put(&mut map, Field::TestId, &self.test_id)?;
        put(&mut map, Field::Outcome, &self.outcome)?;
        put(&mut map, Field::Events, &self.events)?;
        if let Some(covered) = &self.covered {
            put(&mut map, Field::Covered, covered)?;
        }
        put(&mut map, Field::PrefixResults, &self.prefix_results)?;
        put(&mut map, Field::Results, &self.results)?;
        if let Some(state) = &self.final_state {
            put(&mut map, Field::FinalState, state)?;
        }
        put(&mut map, Field::ElapsedUs, &self.elapsed_us)?;
        if self.setup_us != 0 {
            put(&mut map, Field::SetupUs, &self.setup_us)?;
        }
        if self.runs != 1 {
            put(&mut map, Field::Runs, &self.runs)?;
        }
        if let Some(schedule) = &self.schedule {
            put(&mut map, Field::Schedule, schedule)?;
        }
        for (field, set) in [
            (Field::OwnThreads, self.own_threads),
            (Field::TimedOut, self.timed_out),
            (Field::Recovered, self.recovered),
        ] {
            if set {
                put(&mut map, field, &true)?;
            }
        }
        if !self.others.is_empty() {
            put(&mut map, Field::Others, &self.others)?;
        }
        map.end()
    }
}

impl Serialize for Schedule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        put(&mut map, Field::Seed, &self.seed)?;
        put(&mut map, Field::Steps, &self.steps)?;
        put(&mut map, Field::Switches, &self.switches)?;
        put(&mut map, Field::Free, &self.free)?;
        put(&mut map, Field::Wakes, &self.wakes)?;
        put(&mut map, Field::Handoffs, &self.handoffs)?;
        map.end()
    }
}

impl Serialize for Outcome {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self {
            Outcome::Passed => put(&mut map, Field::Kind, Kind::Passed.name())?,
            Outcome::Panicked {
                thread,
                call,
                method,
                message,
                location,
                also,
            } => {
                put(&mut map, Field::Kind, Kind::Panicked.name())?;
                put(&mut map, Field::Thread, thread)?;
                put(&mut map, Field::Call, call)?;
                put(&mut map, Field::Method, method)?;
                put(&mut map, Field::Message, message)?;
                put(&mut map, Field::Location, location)?;
                if !also.is_empty() {
                    put(&mut map, Field::Also, also)?;
                }
            }
            Outcome::Deadlocked {
                inside,
                blocked_for_good,
                lost_wakeup,
            } => {
                put(&mut map, Field::Kind, Kind::Deadlocked.name())?;
                put(&mut map, Field::Inside, inside)?;
                if *blocked_for_good {
                    put(&mut map, Field::BlockedForGood, blocked_for_good)?;
                }
                if let Some(thread) = lost_wakeup {
                    put(&mut map, Field::LostWakeup, thread)?;
                }
            }
            Outcome::SetupFailed { message } => {
                put(&mut map, Field::Kind, Kind::SetupFailed.name())?;
                put(&mut map, Field::Message, message)?;
            }
            Outcome::Crashed { message } => {
                put(&mut map, Field::Kind, Kind::Crashed.name())?;
                put(&mut map, Field::Message, message)?;
            }
        }
        map.end()
    }
}

impl<N: Serialize> Serialize for Event<N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        put(&mut map, Field::Clock, &self.clock)?;
        put(&mut map, Field::Thread, &self.thread)?;
        put(&mut map, Field::TypePath, &self.type_path)?;
        put(&mut map, Field::Method, &self.method)?;
        put(&mut map, Field::Start, &self.start)?;
        map.end()
    }
}

// Reading (see `request.rs`).

impl<'de, N: Deserialize<'de>> Deserialize<'de> for Response<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Response<N>, D::Error> {
        struct V<N>(PhantomData<N>);
        impl<'de, N: Deserialize<'de>> Visitor<'de> for V<N> {
            type Value = Response<N>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a worker's answer")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Response<N>, A::Error> {
                let (mut test_id, mut outcome, mut elapsed_us) = (None, None, None);
                let mut response = Response::new(0, Outcome::Passed);
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::TestId => test_id = Some(map.next_value()?),
                        Field::Outcome => outcome = Some(map.next_value()?),
                        Field::ElapsedUs => elapsed_us = Some(map.next_value()?),
                        Field::Events => response.events = map.next_value()?,
                        Field::Covered => response.covered = map.next_value()?,
                        Field::PrefixResults => response.prefix_results = map.next_value()?,
                        Field::Results => response.results = map.next_value()?,
                        Field::FinalState => response.final_state = map.next_value()?,
                        Field::SetupUs => response.setup_us = map.next_value()?,
                        Field::Runs => response.runs = map.next_value()?,
                        Field::Schedule => response.schedule = map.next_value()?,
                        Field::OwnThreads => response.own_threads = map.next_value()?,
                        Field::TimedOut => response.timed_out = map.next_value()?,
                        Field::Recovered => response.recovered = map.next_value()?,
                        Field::Others => response.others = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Response {
                    test_id: needed(test_id, Field::TestId)?,
                    outcome: needed(outcome, Field::Outcome)?,
                    elapsed_us: needed(elapsed_us, Field::ElapsedUs)?,
                    ..response
                })
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

impl<'de> Deserialize<'de> for Schedule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Schedule, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Schedule;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a run's schedule")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Schedule, A::Error> {
                let (mut seed, mut steps) = (None, None);
                let mut schedule = Schedule::default();
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::Seed => seed = Some(map.next_value()?),
                        Field::Steps => steps = Some(map.next_value()?),
                        Field::Switches => schedule.switches = map.next_value()?,
                        Field::Free => schedule.free = map.next_value()?,
                        Field::Wakes => schedule.wakes = map.next_value()?,
                        Field::Handoffs => schedule.handoffs = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Schedule {
                    seed: needed(seed, Field::Seed)?,
                    steps: needed(steps, Field::Steps)?,
                    ..schedule
                })
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for Outcome {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Outcome, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Outcome;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an outcome: {\"kind\": \"passed\", …}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Outcome, A::Error> {
                // The fields of every kind, then the kind (`kind` may come last).
                let mut kind = None::<String>;
                let (mut thread, mut call, mut method) = (None, None, None);
                let (mut message, mut location, mut also) = (None, None, Vec::new());
                let (mut inside, mut blocked_for_good, mut lost_wakeup) = (None, false, None);
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::Kind => kind = Some(map.next_value()?),
                        Field::Thread => thread = map.next_value()?,
                        Field::Call => call = Some(map.next_value()?),
                        Field::Method => method = Some(map.next_value()?),
                        Field::Message => message = Some(map.next_value()?),
                        Field::Location => location = map.next_value()?,
                        Field::Also => also = map.next_value()?,
                        Field::Inside => inside = Some(map.next_value()?),
                        Field::BlockedForGood => blocked_for_good = map.next_value()?,
                        Field::LostWakeup => lost_wakeup = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let kind = needed(kind, Field::Kind)?;
                match Kind::of(&kind) {
                    Some(Kind::Passed) => Ok(Outcome::Passed),
                    Some(Kind::Panicked) => Ok(Outcome::Panicked {
                        thread,
                        call: needed(call, Field::Call)?,
                        method: needed(method, Field::Method)?,
                        message: needed(message, Field::Message)?,
                        location,
                        also,
                    }),
                    Some(Kind::Deadlocked) => Ok(Outcome::Deadlocked {
                        inside: needed(inside, Field::Inside)?,
                        blocked_for_good,
                        lost_wakeup,
                    }),
                    Some(Kind::SetupFailed) => Ok(Outcome::SetupFailed {
                        message: needed(message, Field::Message)?,
                    }),
                    Some(Kind::Crashed) => Ok(Outcome::Crashed {
                        message: needed(message, Field::Message)?,
                    }),
                    None => Err(de::Error::custom(format!("unknown outcome `{kind}`"))),
                }
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de, N: Deserialize<'de>> Deserialize<'de> for Event<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Event<N>, D::Error> {
        struct V<N>(PhantomData<N>);
        impl<'de, N: Deserialize<'de>> Visitor<'de> for V<N> {
            type Value = Event<N>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an event: {\"clock\": …, \"thread\": …, …}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event<N>, A::Error> {
                let (mut clock, mut thread, mut start) = (None, None, None);
                let (mut type_path, mut method) = (None, None);
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::Clock => clock = Some(map.next_value()?),
                        Field::Thread => thread = Some(map.next_value()?),
                        Field::TypePath => type_path = Some(map.next_value()?),
                        Field::Method => method = Some(map.next_value()?),
                        Field::Start => start = Some(map.next_value()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Event {
                    clock: needed(clock, Field::Clock)?,
                    thread: needed(thread, Field::Thread)?,
                    type_path: needed(type_path, Field::TypePath)?,
                    method: needed(method, Field::Method)?,
                    start: needed(start, Field::Start)?,
                })
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(clock: u64, thread: u8, method: &'static str, start: bool) -> Event<&'static str> {
        Event {
            clock,
            thread,
            type_path: "k::T",
            method,
            start,
        }
    }

    /// A passing run of `a` ∥ `b"q`, as the worker answers it.
    fn passed() -> Response<&'static str> {
        Response {
            events: vec![
                event(1, 0, "a", true),
                event(2, 1, "b\"q", true),
                event(3, 0, "a", false),
                event(4, 1, "b\"q", false),
            ],
            covered: Some(vec![["a", "b"]]),
            prefix_results: vec![Some("1".into()), None],
            results: [vec![Some("()".into())], vec![None]],
            final_state: Some("T { n: 1 }".into()),
            elapsed_us: 12,
            ..Response::new(7, Outcome::Passed)
        }
    }

    fn panicked() -> Outcome {
        Outcome::Panicked {
            thread: Some(1),
            call: 0,
            method: "b".into(),
            message: "boom\n".into(),
            location: Some("src/lib.rs:3:5".into()),
            also: vec![],
        }
    }

    const EVENTS: &str = r#""events":[{"clock":1,"thread":0,"type_path":"k::T","method":"a","start":true},{"clock":2,"thread":1,"type_path":"k::T","method":"b\"q","start":true},{"clock":3,"thread":0,"type_path":"k::T","method":"a","start":false},{"clock":4,"thread":1,"type_path":"k::T","method":"b\"q","start":false}]"#;

    /// `line` with `{events}` for [`EVENTS`] and `{rest}` for what [`passed`] answers after
    /// them.
    fn expand(line: &str) -> String {
        line.replace("{events}", EVENTS).replace(
            "{rest}",
            r#""covered":[["a","b"]],"prefix_results":["1",null],"results":[["()"],[null]],"final_state":"T { n: 1 }","elapsed_us":12"#,
        )
    }

    /// Answers are the bytes the worker and covcon wrote when they spelled the protocol out
    /// each (covcon's derived impls, the worker's own writer): the worker's with `&str`
    /// names, and covcon's with `String`s, alike; each reads back as it was.
    #[test]
    fn answers_are_written_as_before_and_read_back() {
        let answers: [(Response<&'static str>, &str); 8] = [
            (
                passed(),
                r#"{"test_id":7,"outcome":{"kind":"passed"},{events},{rest}}"#,
            ),
            (
                Response {
                    covered: None,
                    final_state: None,
                    setup_us: 250,
                    runs: 4,
                    own_threads: true,
                    timed_out: true,
                    recovered: true,
                    others: vec![Response {
                        results: [vec![Some("1".into())], vec![]],
                        runs: 2,
                        ..Response::new(7, Outcome::Passed)
                    }],
                    schedule: Some(Schedule {
                        seed: 9,
                        steps: 30,
                        switches: vec![3, 7],
                        free: true,
                        wakes: 1,
                        handoffs: 2,
                    }),
                    ..passed()
                },
                r#"{"test_id":7,"outcome":{"kind":"passed"},{events},"prefix_results":["1",null],"results":[["()"],[null]],"elapsed_us":12,"setup_us":250,"runs":4,"schedule":{"seed":9,"steps":30,"switches":[3,7],"free":true,"wakes":1,"handoffs":2},"own_threads":true,"timed_out":true,"recovered":true,"others":[{"test_id":7,"outcome":{"kind":"passed"},"events":[],"prefix_results":[],"results":[["1"],[]],"elapsed_us":0,"runs":2}]}"#,
            ),
            (
                Response {
                    outcome: panicked(),
                    ..passed()
                },
                r#"{"test_id":7,"outcome":{"kind":"panicked","thread":1,"call":0,"method":"b","message":"boom\n","location":"src/lib.rs:3:5"},{events},{rest}}"#,
            ),
            (
                Response {
                    outcome: Outcome::Panicked {
                        thread: None,
                        call: 2,
                        method: "new".into(),
                        message: "m".into(),
                        location: None,
                        also: vec![panicked()],
                    },
                    ..passed()
                },
                r#"{"test_id":7,"outcome":{"kind":"panicked","thread":null,"call":2,"method":"new","message":"m","location":null,"also":[{"kind":"panicked","thread":1,"call":0,"method":"b","message":"boom\n","location":"src/lib.rs:3:5"}]},{events},{rest}}"#,
            ),
            (
                Response {
                    outcome: Outcome::Deadlocked {
                        inside: [Some("a".into()), None],
                        blocked_for_good: true,
                        lost_wakeup: Some(1),
                    },
                    ..passed()
                },
                r#"{"test_id":7,"outcome":{"kind":"deadlocked","inside":["a",null],"blocked_for_good":true,"lost_wakeup":1},{events},{rest}}"#,
            ),
            (
                Response {
                    outcome: Outcome::Deadlocked {
                        inside: [None, None],
                        blocked_for_good: false,
                        lost_wakeup: None,
                    },
                    schedule: Some(Schedule {
                        seed: 1,
                        ..Schedule::default()
                    }),
                    ..passed()
                },
                r#"{"test_id":7,"outcome":{"kind":"deadlocked","inside":[null,null]},{events},{rest},"schedule":{"seed":1,"steps":0,"switches":[],"free":false,"wakes":0,"handoffs":0}}"#,
            ),
            (
                Response {
                    outcome: Outcome::SetupFailed {
                        message: "no".into(),
                    },
                    ..passed()
                },
                r#"{"test_id":7,"outcome":{"kind":"setup_failed","message":"no"},{events},{rest}}"#,
            ),
            (
                Response {
                    outcome: Outcome::Crashed {
                        message: "signal 9".into(),
                    },
                    ..passed()
                },
                r#"{"test_id":7,"outcome":{"kind":"crashed","message":"signal 9"},{events},{rest}}"#,
            ),
        ];
        for (answer, line) in answers {
            let line = expand(line);
            assert_eq!(serde_json::to_string(&answer).unwrap(), line);
            let read: Response = serde_json::from_str(&line).unwrap();
            assert_eq!(serde_json::to_string(&read).unwrap(), line);
            assert_eq!(format!("{read:?}"), format!("{answer:?}"));
        }
    }

    /// Decodes `line` as covcon does and describes it, or gives the error.
    fn check(line: &str, expect: &str) {
        let got = match serde_json::from_str::<Response>(line) {
            Ok(r) => format!("{} {:?} events {}", r.test_id, r.outcome, r.events.len()),
            Err(e) => format!("error: {e}"),
        };
        assert_eq!(got, expect, "{line}");
    }

    /// An answer needs its test id, outcome and time, in any order; the rest has defaults,
    /// and a field covcon does not know is skipped.
    #[test]
    fn an_answer_needs_its_id_outcome_and_time_only() {
        check(
            r#"{"elapsed_us":3,"outcome":{"message":"m","kind":"setup_failed"},"later":{},"test_id":2}"#,
            r#"2 SetupFailed { message: "m" } events 0"#,
        );
        check(
            r#"{"test_id":2,"outcome":{"kind":"passed"}}"#,
            "error: missing field `elapsed_us` at line 1 column 41",
        );
        check(
            r#"{"test_id":2,"outcome":{"kind":"panicked","call":1},"elapsed_us":3}"#,
            "error: missing field `method` at line 1 column 51",
        );
        check(
            r#"{"test_id":2,"outcome":{"kind":"won"},"elapsed_us":3}"#,
            "error: unknown outcome `won` at line 1 column 37",
        );
    }
}
