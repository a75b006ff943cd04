//! The thread-safety oracle: is a failing concurrent run a violation?
//!
//! A concurrent run that panics, deadlocks or crashes is run again sequentially in every
//! linearization (every interleaving of the two suffixes that keeps each thread's order, after
//! the same prefix, on fresh instances). If one of them fails the same way, the failure is an
//! ordinary bug or expected behaviour (a blocking call with nothing to wait for); if none does,
//! it is a thread-safety violation.
//!
//! A concurrent run is slower than a sequential one: its calls wait on each other and on the
//! noise. On a type whose answers depend on the clock (a rate limiter's refill, an expiry),
//! that waiting alone can make a call fail that a full-speed sequential run never does. So
//! the orders are run once at full speed and then paced by schedule noise (see [`judge`]); a
//! paced order that fails the same way explains the run too.

use crate::protocol::{Event, Outcome, Response};
use generator::TestCase;

/// A linearization: the suffix calls in execution order, each (thread, index in its thread).
pub(crate) type Order = Vec<(u8, u32)>;

/// How a concurrent run failed, when it failed in its suffixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    Panic {
        thread: u8,
        call: u32,
        method: String,
        message: String,
        location: Option<String>,
        /// The other thread's panic in the same run, if it panicked too (later by clock):
        /// (thread, call, message, location).
        also: Vec<(u8, u32, String, Option<String>)>,
    },
    Deadlock {
        inside: [Option<String>; 2],
        /// The thread a wake-up probe let finish (see `Outcome::Deadlocked`).
        lost_wakeup: Option<u8>,
        /// `(t, c)` when thread `t` hung in its call `c` after the other thread had finished
        /// all its calls ([`Failure::waited_after`]): only orders that run all of the other
        /// thread's calls before that call can explain it.
        waited_after: Option<(u8, u32)>,
    },
    Crash {
        message: String,
    },
}

impl Failure {
    /// The failure a concurrent run of `test` shows, as its verdict judges it: its outcome's
    /// ([`Failure::of`]), a deadlock marked by the run's events ([`Failure::waited_after`]).
    /// The campaign and `replay` both judge through this, so they judge alike.
    pub(crate) fn of_run(test: &TestCase, response: &Response) -> Option<Failure> {
        Failure::of(&response.outcome)
            .map(|failure| failure.waited_after(test, &response.outcome, &response.events))
    }

    /// The failure a concurrent run's outcome shows, if any. A panic in a constructor or the
    /// prefix is not one: those run sequentially anyway.
    pub(crate) fn of(outcome: &Outcome) -> Option<Failure> {
        match outcome {
            Outcome::Panicked {
                thread: Some(thread),
                call,
                method,
                message,
                location,
                also,
            } => Some(Failure::Panic {
                thread: *thread,
                call: *call,
                method: method.clone(),
                message: message.clone(),
                location: location.clone(),
                also: also
                    .iter()
                    .filter_map(|o| match o {
                        Outcome::Panicked {
                            thread: Some(t),
                            call,
                            message,
                            location,
                            ..
                        } => Some((*t, *call, message.clone(), location.clone())),
                        _ => None,
                    })
                    .collect(),
            }),
            Outcome::Deadlocked {
                inside,
                lost_wakeup,
                ..
            } => Some(Failure::Deadlock {
                inside: inside.clone(),
                lost_wakeup: *lost_wakeup,
                waited_after: None,
            }),
            Outcome::Crashed { message } => Some(Failure::Crash {
                message: message.clone(),
            }),
            Outcome::Passed
            | Outcome::Panicked { thread: None, .. }
            | Outcome::SetupFailed { .. } => None,
        }
    }

    /// The deadlock of a run of `test` with `events`, marked [`Failure::Deadlock`]'s
    /// `waited_after` when one thread hung in one of its calls after the other had finished
    /// all of its own: a sequential order hangs the same way only if it runs the other
    /// thread's calls before the hung one, since each of them finished, so took effect,
    /// while the hung call still waited (rsevents 0.2.1: `wait` parked for good after `set`
    /// had returned, which the order `wait; set` does not explain: there `wait` waits for a
    /// `set` that has not run). Read from the suffix calls' outermost events; when they do
    /// not account for every call (a call that records none), the failure is left as it is.
    /// Only for a run whose threads were blocked for good (`outcome`): a call that spun
    /// until the run's timeout (`Outcome::over_time`) may have spun only because the other
    /// thread was starved until just before the end, and would have finished once that thread's
    /// calls took effect (atomicring 0.5.1's `push_overwrite` spinning on a full queue beside
    /// a `try_pop` was reported so, where the order with the pop after both pushes spins too).
    fn waited_after(self, test: &TestCase, outcome: &Outcome, events: &[Event]) -> Failure {
        if outcome.over_time() {
            return self;
        }
        let Failure::Deadlock {
            inside,
            lost_wakeup,
            waited_after: None,
        } = self
        else {
            return self;
        };
        // Each suffix thread's outermost calls (`trace::top_level_calls`), each of which
        // must be the thread's next call of the test: a call that records no events of its
        // own but calls code that does would be miscounted, and is left as it is.
        let mut sorted: Vec<&Event> = events.iter().filter(|e| e.thread < 2).collect();
        sorted.sort_by_key(|e| e.clock);
        let calls = crate::trace::top_level_calls(&sorted);
        let mut counts = [(0u32, 0u32); 2];
        for (start, _, end) in calls {
            let t = usize::from(start.thread);
            let next = test.threads[t].get(counts[t].0 as usize);
            if next.is_none_or(|call| call.method != start.method) {
                return Failure::Deadlock {
                    inside,
                    lost_wakeup,
                    waited_after: None,
                };
            }
            counts[t].0 += 1;
            counts[t].1 += u32::from(end != u64::MAX);
        }
        let len = |t: usize| u32::try_from(test.threads[t].len()).unwrap_or(u32::MAX);
        let finished = |t: usize| counts[t] == (len(t), len(t));
        let hung = |t: usize| counts[t].0 == counts[t].1 + 1 && counts[t].0 <= len(t);
        let waited_after = (0..2usize)
            .find(|&t| hung(t) && finished(1 - t))
            .map(|t| (t as u8, counts[t].1));
        Failure::Deadlock {
            inside,
            lost_wakeup,
            waited_after,
        }
    }

    /// Whether a run (concurrent or sequential) with this outcome failed the same way: the
    /// same panic (message up to numbers, and location) at the same call — the first panic
    /// of the run, or the other thread's when both panicked; for a deadlock or a crash, any
    /// block or crash.
    pub(crate) fn is_repeated_by(&self, outcome: &Outcome) -> bool {
        match (self, outcome) {
            (
                Failure::Panic {
                    thread,
                    call,
                    message,
                    location,
                    also,
                    ..
                },
                Outcome::Panicked {
                    thread: Some(t),
                    call: c,
                    message: m,
                    location: l,
                    ..
                },
            ) => {
                let same = |thread: &u8, call: &u32, message: &str, location: &Option<String>| {
                    thread == t
                        && call == c
                        && same_message(message, m)
                        && (location.is_none() || l.is_none() || location == l)
                };
                same(thread, call, message, location)
                    || also.iter().any(|(t, c, m, l)| same(t, c, m, l))
            }
            // A sequential run that panicked the same way, and aborted when a guard's `Drop`
            // panicked too while that panic unwound (maitake-sync's `Permit`, whose return of
            // its permits overflows the count the failing `add_permits(usize::MAX)` left): the
            // worker said which panic it unwound from, though not at which call, so it counts
            // at any call of the order (which ends at the failing call).
            (
                Failure::Panic {
                    message,
                    location,
                    also,
                    ..
                },
                outcome @ Outcome::Crashed { .. },
            ) => outcome.unwound_from().is_some_and(|(m, l)| {
                std::iter::once((message, location))
                    .chain(also.iter().map(|(_, _, m, l)| (m, l)))
                    .any(|(message, location)| {
                        same_message(message, m) && location.as_deref().is_none_or(|at| at == l)
                    })
            }),
            // A lost wake-up is repeated only by another: a run that blocks in a wait whose
            // condition does not hold (`take` before any `put`) waits again when woken, and
            // does not explain a wait that a wake-up lets finish.
            (
                Failure::Deadlock {
                    lost_wakeup: Some(_),
                    ..
                },
                outcome,
            ) => matches!(
                outcome,
                Outcome::Deadlocked {
                    lost_wakeup: Some(_),
                    ..
                }
            ),
            // A run that never ends and a worker that dies are both the end of the worker;
            // a hang the watchdog missed even shows as a crash. Either explains the other.
            (
                Failure::Deadlock { .. } | Failure::Crash { .. },
                Outcome::Deadlocked { .. } | Outcome::Crashed { .. },
            ) => true,
            _ => false,
        }
    }
}

/// What the sequential runs said about a failure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    /// No linearization failed the same way, and every one was run past the prefix (else
    /// there is no verdict, and no violation).
    pub violation: bool,
    /// Sequential runs made.
    pub tried: u32,
    /// The linearization that failed the same way, and how, when there is one.
    pub explained_by: Option<(Order, Outcome)>,
    /// Only the last pass explained it: the failing thread's calls alone with real pauses
    /// ([`Pace::Paused`]), a clock the copy does not control.
    pub alone: bool,
    /// The pass over the orders that explained it ([`judge`]'s numbering: 0 at full speed,
    /// then the paced passes, then on the calls' own threads), when one did.
    pub pass: Option<usize>,
    /// The verdict ran out of time before an order explained the failure or every order was
    /// run: no violation, since the orders not run might have explained it.
    pub cut_short: bool,
    /// For a violation: a full-speed order that panicked as the failure did (its message, at
    /// its location) but at another call ([`same_panic_elsewhere`]).
    pub same_panic_at: Option<(Order, (u8, u32))>,
}

/// How fast a sequential order runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pace {
    /// No noise: each call right after the one before.
    Full,
    /// Paced by schedule noise: pass `pass` (each draws its own delays), in the `calls` given
    /// or, when none are, in every call.
    Paced { pass: u64, calls: Vec<(u8, u32)> },
    /// At full speed, each call on the thread it ran on concurrently: for a type that behaves
    /// by the calling thread (sharded-slab keys its shards by thread), whose single-threaded
    /// orders differ from the run in more than the interleaving. Last, since handing each call
    /// to another thread costs time, and time is what the other passes keep under control.
    OwnThreads,
    /// At full speed, with a real pause of `pause_us` before each call: the verdict's last
    /// pass, the failing thread's calls alone (see [`judge`]), and the results oracle's slow
    /// runs of a type with threads of its own.
    Paused { pause_us: u64 },
}

/// The pause before each call of a thread run alone ([`Pace::Paused`]), from how long the
/// concurrent run took: twice that, so that any time that passed between two of its events
/// passes between two calls here, but at least [`MIN_PAUSE`] and at most [`MAX_PAUSE`].
pub(crate) fn alone_pause(concurrent_us: u64) -> u64 {
    concurrent_us
        .saturating_mul(2)
        .clamp(MIN_PAUSE.as_micros() as u64, MAX_PAUSE.as_micros() as u64)
}

/// Shortest pause between calls of a thread run alone: a millisecond, past the refill of any
/// limiter whose interval a fast concurrent run could have outrun.
const MIN_PAUSE: std::time::Duration = std::time::Duration::from_millis(1);

/// Longest pause: a run that took longer (it blocked, or the machine was that busy) is paced by
/// a second, which keeps a verdict's cost bounded.
const MAX_PAUSE: std::time::Duration = std::time::Duration::from_secs(1);

/// Paced passes over the orders after the full-speed one, for failures it does not explain.
pub(crate) const PACED_PASSES: u64 = 2;

/// Runs of one order and pace while its prefix fails.
const PREFIX_ATTEMPTS: u32 = 4;

/// Judges `failure` of `test` by running linearizations with `run` until one repeats it:
/// every order at full speed, then, for a panic, every order paced, [`PACED_PASSES`] times.
///
/// A paced pass slows down only the calls that failed (a panic's call, and the other
/// thread's if it panicked too), as the concurrent run was slow there and not in the calls
/// before, which passed. Pacing every call would make an earlier call fail first where the
/// failure is a matter of time (a refill overdue at the first `until_next`, not the third),
/// and costs a delay at every point of every call. Only panics are paced: waiting does not
/// make two threads block each other for good, and a deadlock's orders are the costly ones.
/// A run whose prefix panicked as the concurrent run's call did explains it too (see
/// [`Failure::is_repeated_in_prefix`]); one whose prefix failed otherwise is run again.
///
/// Last, for a panic no order repeated, each panicking thread's calls are run alone up to
/// the panic, with a real pause of `pause_us` before each ([`Pace::Paused`]): a panic they
/// give at the same place (message and location, at any call of the same method) is one a
/// single thread meets by waiting, on a clock covcon does not control (a dependency's, a
/// syscall's). Unlike the paced passes, whose delays are drawn, this pass cannot miss on a
/// busy machine: a slower concurrent run only makes its pauses longer.
///
/// `first` is the pass to make first: the one that explained the type's last explained
/// failure ([`Verdict::pass`]). A type whose calls behave by thread (sharded-slab) is explained
/// only on the calls' own threads, one whose answers depend on time only when paced; trying
/// that pass first saves the others' runs. The verdict does not depend on the passes' order:
/// any pass that repeats the failure explains it, and a violation is a failure none repeats.
///
/// No run starts after `give_up_at`: the verdict is then cut short ([`Verdict::cut_short`]),
/// no violation. A sequential order that blocks costs a timeout and a worker restart, and a
/// failure every order of which blocks (a mutant's lost wake-up under a panic) ran its
/// hundreds of orders, pass after pass, for over 18 minutes of a 10-s budget.
pub(crate) fn judge(
    test: &TestCase,
    failure: &Failure,
    pause_us: u64,
    first: Option<usize>,
    give_up_at: Option<std::time::Instant>,
    run: impl FnMut(&[(u8, u32)], &Pace) -> Outcome,
) -> Verdict {
    judge_with(test, failure, pause_us, first, give_up_at, Passes::All, run)
}

/// Which of [`judge`]'s passes a verdict makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Passes {
    /// Every one: a verdict that reports.
    All,
    /// The orders at full speed only, a quarter of the runs and no real pauses: a provisional
    /// verdict, for the candidates of a shrinking whose last one is then judged with
    /// [`Passes::All`]. A failure it calls a violation may still be explained by a later pass
    /// (a type whose answers depend on time or on the calling thread).
    FullSpeed,
}

/// [`judge`], making only the passes `passes` says.
pub(crate) fn judge_with(
    test: &TestCase,
    failure: &Failure,
    pause_us: u64,
    first: Option<usize>,
    give_up_at: Option<std::time::Instant>,
    passes_made: Passes,
    mut run: impl FnMut(&[(u8, u32)], &Pace) -> Outcome,
) -> Verdict {
    let late = || give_up_at.is_some_and(|at| std::time::Instant::now() >= at);
    // Runs one order at `pace`: explained when it fails as the concurrent run did (or its
    // prefix does); a run stopped by its prefix is run again, a few times, since the
    // concurrent run got past the prefix, and so can this one.
    let mut run_order = |order: &[(u8, u32)], pace: &Pace, tried: &mut u32| {
        let mut attempts = 0;
        loop {
            if late() {
                return Ran::Late;
            }
            let outcome = run(order, pace);
            *tried += 1;
            attempts += 1;
            if failure.is_repeated_by(&outcome) || failure.is_repeated_in_prefix(&outcome) {
                return Ran::Explained(Verdict {
                    violation: false,
                    tried: *tried,
                    explained_by: Some((order.to_vec(), outcome)),
                    alone: false,
                    pass: None,
                    cut_short: false,
                    same_panic_at: None,
                });
            }
            if got_past_prefix(&outcome) || attempts == PREFIX_ATTEMPTS {
                return Ran::Outcome(outcome);
            }
        }
    };
    let mut tried = 0;
    let orders = orders_to_try(test, failure);
    // Whether a run of each order got past the prefix: one whose prefix failed (a clock or
    // a random number the prefix depends on) says nothing about the suffixes.
    let mut ran_through = vec![false; orders.len()];
    let failed = failure.calls();
    let passes = if matches!(failure, Failure::Panic { .. }) {
        PACED_PASSES
    } else {
        0
    };
    let paced = (0..passes).map(|pass| Pace::Paced {
        pass,
        calls: failed.clone(),
    });
    let mut passes: Vec<(usize, Pace)> = std::iter::once(Pace::Full)
        .chain(paced)
        .chain(std::iter::once(Pace::OwnThreads))
        .enumerate()
        .collect();
    if passes_made == Passes::FullSpeed {
        passes.truncate(1);
    } else if let Some(at) = first.and_then(|first| passes.iter().position(|(i, _)| *i == first)) {
        let pass = passes.remove(at);
        passes.insert(0, pass);
    }
    // The full-speed pass's outcomes, kept for the report (`Verdict::same_panic_at`).
    let mut full_speed: Vec<(Order, Outcome)> = Vec::new();
    for (pass, pace) in passes {
        // The full-speed pass's outcomes, by order, for the doomed check below.
        let mut outcomes: Vec<(Order, Outcome)> = Vec::new();
        let keep = pace == Pace::Full && matches!(failure, Failure::Panic { .. });
        for (i, order) in orders.iter().enumerate() {
            let outcome = match run_order(order, &pace, &mut tried) {
                Ran::Explained(verdict) => return verdict.with_pass(pass),
                Ran::Late => return Verdict::cut_short(tried),
                Ran::Outcome(outcome) => outcome,
            };
            ran_through[i] |= got_past_prefix(&outcome);
            if keep {
                outcomes.push((order.clone(), outcome));
            }
        }
        // The failing call panics in every sequential order, only otherwise (a call given an
        // argument it cannot take: `reserve(usize::MAX)` overflows in one check or another,
        // depending on a counter the other thread had not updated yet), or the order panics
        // before it gets there. The calls fail whatever the order; concurrency chose only how.
        // Not a thread-safety violation. When both threads panicked, the orders above were cut
        // at whichever failing call came first, so an order cut at the other thread's call is
        // run on to this one (maitake-sync's `add_permits(usize::MAX)`, whose overflow check
        // panics with its own message or with an arithmetic overflow depending on the count,
        // beside the other thread's panic in a permit's release; and in an order where the
        // other thread's own `add_permits(usize::MAX)` comes first, that one panics).
        if let (true, Some(&target)) = (keep, failed.first()) {
            let mut run = |order: &Order| run_order(order, &pace, &mut tried);
            match doomed_at(test, target, &mut outcomes, &mut run) {
                Doom::Doomed(explained) => {
                    return Verdict {
                        violation: false,
                        tried,
                        explained_by: Some(explained),
                        alone: false,
                        pass: Some(pass),
                        cut_short: false,
                        same_panic_at: None,
                    }
                }
                Doom::Explained(verdict) => return verdict.with_pass(pass),
                Doom::Late => return Verdict::cut_short(tried),
                Doom::No => {}
            }
        }
        if keep {
            full_speed = outcomes;
        }
    }
    let alone = match passes_made {
        Passes::All => failed,
        Passes::FullSpeed => Vec::new(),
    };
    for (thread, call) in alone {
        let order: Order = (0..=call).map(|index| (thread, index)).collect();
        if late() {
            return Verdict::cut_short(tried);
        }
        let outcome = run(&order, &Pace::Paused { pause_us });
        tried += 1;
        if failure.is_repeated_alone(test, &outcome) || failure.is_repeated_in_prefix(&outcome) {
            return Verdict {
                violation: false,
                tried,
                explained_by: Some((order, outcome)),
                alone: true,
                pass: None,
                cut_short: false,
                same_panic_at: None,
            };
        }
    }
    // An order never run past its prefix might have explained the failure: no verdict.
    let violation = ran_through.iter().all(|&through| through);
    Verdict {
        violation,
        tried,
        explained_by: None,
        alone: false,
        pass: None,
        cut_short: false,
        same_panic_at: violation
            .then(|| same_panic_elsewhere(failure, &full_speed))
            .flatten(),
    }
}

/// The first of `outcomes` (orders run at full speed) that panicked as `failure` did, with its
/// message at its location, but at another call: what a report says beside "no order fails
/// this way", which is true of the failing call but would read as false to a maintainer who
/// sees an order panic there. lasso 0.7.1's `set_memory_limits ∥ [try_get_or_intern,
/// try_get_or_intern]`: the concurrent run's first intern answered `Err`, which no order
/// gives, and its second panicked; the order `set_memory_limits` first panics at the first.
/// `None` for other failures, and for a panic without a location (nothing to tell a panic at
/// another call from another panic with the same message).
fn same_panic_elsewhere(
    failure: &Failure,
    outcomes: &[(Order, Outcome)],
) -> Option<(Order, (u8, u32))> {
    let Failure::Panic {
        thread,
        call,
        message,
        location: Some(location),
        ..
    } = failure
    else {
        return None;
    };
    outcomes.iter().find_map(|(order, outcome)| match outcome {
        Outcome::Panicked {
            thread: Some(t),
            call: c,
            message: m,
            location: Some(l),
            ..
        } if (*t, *c) != (*thread, *call) && l == location && same_message(message, m) => {
            Some((order.clone(), (*t, *c)))
        }
        _ => None,
    })
}

/// How one sequential order went ([`judge_with`]'s `run_order`).
enum Ran {
    /// It failed as the concurrent run did: the verdict.
    Explained(Verdict),
    /// The verdict's time ran out before it ran.
    Late,
    /// It ran, and did not explain the failure.
    Outcome(Outcome),
}

/// Whether a failing call panics in every order ([`doomed_at`]).
enum Doom {
    /// It does: an order and how it panicked there.
    Doomed((Order, Outcome)),
    /// An order run for the check explained the failure outright.
    Explained(Verdict),
    /// The verdict's time ran out during the check.
    Late,
    No,
}

/// Whether the call `target` (thread, index) of `test` panics, with whatever message, in
/// every linearization cut at it that gets that far: each order either panics there or
/// panics at an earlier call (then the calls fail in that order whatever `target` does), and
/// at least one panics there. `outcomes` holds the orders already run at this pace (those run
/// here are added); an order not among them is run with `run`. Nothing is run when an order
/// already run refutes it.
fn doomed_at(
    test: &TestCase,
    target: (u8, u32),
    outcomes: &mut Vec<(Order, Outcome)>,
    run: &mut dyn FnMut(&Order) -> Ran,
) -> Doom {
    // Some(true): it panicked at `target`; Some(false): at an earlier call of the order;
    // None: it did not panic by `target` (it passed, blocked, crashed, or failed its prefix).
    let panicked = |order: &Order, outcome: &Outcome| match outcome {
        Outcome::Panicked {
            thread: Some(t),
            call,
            ..
        } => match order.iter().position(|c| *c == (*t, *call)) {
            Some(at) if at + 1 == order.len() => Some(true),
            Some(_) => Some(false),
            None => None,
        },
        // Aborted on a panic while a panic of the order unwound: at some call of it.
        crashed @ Outcome::Crashed { .. } if crashed.unwound_from().is_some() => Some(false),
        _ => None,
    };
    let lens = [test.threads[0].len(), test.threads[1].len()];
    let mut orders: Vec<Order> = Vec::new();
    for mut order in linearizations(lens, MAX_ORDERS) {
        if let Some(at) = order.iter().position(|c| *c == target) {
            order.truncate(at + 1);
        }
        if !orders.contains(&order) {
            orders.push(order);
        }
    }
    let known = |outcomes: &[(Order, Outcome)], order: &Order| {
        outcomes
            .iter()
            .find(|(o, _)| o == order)
            .map(|(_, outcome)| outcome.clone())
    };
    if orders.iter().any(|order| {
        known(outcomes, order).is_some_and(|outcome| panicked(order, &outcome).is_none())
    }) {
        return Doom::No;
    }
    let mut first = None;
    for order in orders {
        let outcome = match known(outcomes, &order) {
            Some(outcome) => outcome,
            None => match run(&order) {
                Ran::Explained(verdict) => return Doom::Explained(verdict),
                Ran::Late => return Doom::Late,
                Ran::Outcome(outcome) => {
                    outcomes.push((order.clone(), outcome.clone()));
                    outcome
                }
            },
        };
        match panicked(&order, &outcome) {
            None => return Doom::No,
            Some(true) => {
                first.get_or_insert((order, outcome));
            }
            Some(false) => {}
        }
    }
    first.map_or(Doom::No, Doom::Doomed)
}

impl Verdict {
    /// This verdict, made in [`judge`]'s pass `pass`.
    fn with_pass(self, pass: usize) -> Verdict {
        Verdict {
            pass: Some(pass),
            ..self
        }
    }

    /// No verdict: time ran out after `tried` runs ([`judge`]'s `give_up_at`).
    fn cut_short(tried: u32) -> Verdict {
        Verdict {
            violation: false,
            tried,
            explained_by: None,
            alone: false,
            pass: None,
            cut_short: true,
            same_panic_at: None,
        }
    }
}

impl Failure {
    /// Whether a sequential run's prefix panicked as this panic did: the same method, message
    /// (up to numbers) and location. The concurrent run got past the same prefix, so the
    /// prefix fails only now and then (it reads a clock, or a random number), and the failure
    /// is one a single thread meets, without any other.
    fn is_repeated_in_prefix(&self, outcome: &Outcome) -> bool {
        match (self, outcome) {
            (
                Failure::Panic {
                    method,
                    message,
                    location,
                    ..
                },
                Outcome::Panicked {
                    thread: None,
                    method: m,
                    message: text,
                    location: at,
                    ..
                },
            ) => {
                method == m
                    && same_message(message, text)
                    && (location.is_none() || at.is_none() || location == at)
            }
            _ => false,
        }
    }

    /// Whether a run of one panicking thread's calls alone panicked as that thread did in the
    /// concurrent run: the same message (up to numbers) and location, at a call of the same
    /// method (waiting may make an earlier call of it fail first).
    fn is_repeated_alone(&self, test: &TestCase, outcome: &Outcome) -> bool {
        let Failure::Panic {
            thread,
            call,
            message,
            location,
            also,
            ..
        } = self
        else {
            return false;
        };
        let Outcome::Panicked {
            thread: Some(t),
            call: c,
            message: m,
            location: l,
            ..
        } = outcome
        else {
            return false;
        };
        let method = |thread: u8, call: u32| {
            test.threads[usize::from(thread.min(1))]
                .get(call as usize)
                .map(|c| c.method.as_str())
        };
        std::iter::once((*thread, *call, message, location))
            .chain(also.iter().map(|(t, c, m, l)| (*t, *c, m, l)))
            .any(|(thread, call, message, location)| {
                thread == *t
                    && method(thread, call).is_some()
                    && method(thread, call) == method(*t, *c)
                    && same_message(message, m)
                    && location == l
            })
    }

    /// The calls that failed: a panic's, and the other thread's when it panicked too; none
    /// for a deadlock or a crash.
    fn calls(&self) -> Vec<(u8, u32)> {
        match self {
            Failure::Panic {
                thread, call, also, ..
            } => std::iter::once((*thread, *call))
                .chain(also.iter().map(|(t, c, ..)| (*t, *c)))
                .collect(),
            Failure::Deadlock { .. } | Failure::Crash { .. } => Vec::new(),
        }
    }
}

/// Whether a sequential run got as far as its suffix calls.
fn got_past_prefix(outcome: &Outcome) -> bool {
    !matches!(
        outcome,
        Outcome::Panicked { thread: None, .. } | Outcome::SetupFailed { .. }
    )
}

/// Most linearizations enumerated for one failure; with the generator's suffixes of at most
/// five calls there are at most 252.
const MAX_ORDERS: usize = 5_000;

/// The linearizations worth running for `failure`. For a panic at call c of thread t, a
/// sequential run stops at the first panic, so only the part up to (t, c) matters: orders
/// are cut there and duplicates dropped.
fn orders_to_try(test: &TestCase, failure: &Failure) -> Vec<Order> {
    let lens = [test.threads[0].len(), test.threads[1].len()];
    let mut all = linearizations(lens, MAX_ORDERS);
    if let Failure::Deadlock {
        waited_after: Some((t, c)),
        ..
    } = failure
    {
        // The other thread's calls all before the hung one (see `Failure::waited_after`).
        let other = 1 - t;
        all.retain(|order| {
            let hung = order.iter().position(|call| *call == (*t, *c));
            let last_other = order.iter().rposition(|(thread, _)| *thread == other);
            match (hung, last_other) {
                (Some(hung), Some(last)) => last < hung,
                _ => true,
            }
        });
    }
    let targets = failure.calls();
    if targets.is_empty() {
        return all;
    }
    let mut cut: Vec<Order> = Vec::new();
    for mut order in all {
        if let Some(at) = order.iter().position(|c| targets.contains(c)) {
            order.truncate(at + 1);
        }
        if !cut.contains(&order) {
            cut.push(order);
        }
    }
    cut
}

/// Every interleaving of two sequences of `lens[0]` and `lens[1]` calls that keeps each
/// sequence's order (at most `limit` of them), in lexicographic order.
pub(crate) fn linearizations(lens: [usize; 2], limit: usize) -> Vec<Order> {
    let mut out = Vec::new();
    let mut current = Vec::with_capacity(lens[0] + lens[1]);
    interleave(lens, [0, 0], &mut current, &mut out, limit);
    out
}

fn interleave(
    lens: [usize; 2],
    next: [usize; 2],
    current: &mut Order,
    out: &mut Vec<Order>,
    limit: usize,
) {
    if out.len() >= limit {
        return;
    }
    if next == lens {
        out.push(current.clone());
        return;
    }
    for thread in 0..2u8 {
        let t = thread as usize;
        if next[t] < lens[t] {
            current.push((thread, next[t] as u32));
            let mut after = next;
            after[t] += 1;
            interleave(lens, after, current, out, limit);
            current.pop();
        }
    }
}

/// Panic messages are compared with every run of digits treated alike, since lengths,
/// indices and counts in a message depend on the interleaving.
pub(crate) fn same_message(a: &str, b: &str) -> bool {
    fn shape(s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut in_digits = false;
        for ch in s.chars() {
            if ch.is_ascii_digit() {
                if !in_digits {
                    out.push('#');
                }
                in_digits = true;
            } else {
                out.push(ch);
                in_digits = false;
            }
        }
        out
    }
    a == b || shape(a) == shape(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use generator::Call;

    fn order_text(order: &[(u8, u32)]) -> String {
        order
            .iter()
            .map(|(t, c)| format!("{}{}", ["a", "b"][*t as usize], c))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn check_linearizations(lens: [usize; 2], expect: &[&str]) {
        let got: Vec<String> = linearizations(lens, MAX_ORDERS)
            .iter()
            .map(|o| order_text(o))
            .collect();
        assert_eq!(got, expect);
    }

    #[test]
    fn one_call_each_has_two_linearizations() {
        check_linearizations([1, 1], &["a0 b0", "b0 a0"]);
    }

    #[test]
    fn two_and_one_calls_have_three_linearizations_keeping_thread_order() {
        check_linearizations([2, 1], &["a0 a1 b0", "a0 b0 a1", "b0 a0 a1"]);
    }

    #[test]
    fn an_empty_suffix_leaves_one_linearization() {
        check_linearizations([0, 2], &["b0 b1"]);
    }

    #[test]
    fn five_calls_each_have_two_hundred_fifty_two_linearizations() {
        assert_eq!(linearizations([5, 5], MAX_ORDERS).len(), 252);
        assert_eq!(linearizations([5, 5], 10).len(), 10);
    }

    fn test_case(lens: [usize; 2]) -> TestCase {
        let call = |m: &str| Call {
            method: m.to_string(),
            receiver: 0,
            args: vec![],
            times: 1,
            keep: false,
            chained: None,
            scope: None,
        };
        TestCase {
            id: 1,
            type_path: "k::T".into(),
            pair: ["a".into(), "b".into()],
            instances: vec![call("new")],
            handles: vec![],
            prefix: vec![],
            threads: [
                (0..lens[0]).map(|_| call("a")).collect(),
                (0..lens[1]).map(|_| call("b")).collect(),
            ],
            noise_seed: 0,
            control: Default::default(),
        }
    }

    fn panic_at(thread: u8, call: u32, message: &str) -> Outcome {
        Outcome::Panicked {
            thread: Some(thread),
            call,
            method: "m".into(),
            message: message.into(),
            location: Some("src/lib.rs:3:9".into()),
            also: vec![],
        }
    }

    /// `first`, a panic, with `then`, the other thread's later panic, as the run's `also`.
    fn with_also(mut first: Outcome, then: Outcome) -> Outcome {
        if let Outcome::Panicked { also, .. } = &mut first {
            also.push(then);
        }
        first
    }

    /// Judges `concurrent` against sequential runs answered by `sequential`, and renders the
    /// verdict with the orders that were run.
    /// (The orders listed are the full-speed pass's; `paced` counts the paced runs.)
    fn check_verdict(
        lens: [usize; 2],
        concurrent: Outcome,
        sequential: impl Fn(&[(u8, u32)]) -> Outcome,
        expect: &str,
    ) {
        // The calls of one thread alone, paused, pass here: `check_paced_verdict` judges them.
        let sequential = |order: &[(u8, u32)], pace: &Pace| match pace {
            Pace::Paused { .. } => Outcome::Passed,
            _ => sequential(order),
        };
        check_paced_verdict(lens, concurrent, sequential, expect);
    }

    fn check_paced_verdict(
        lens: [usize; 2],
        concurrent: Outcome,
        sequential: impl Fn(&[(u8, u32)], &Pace) -> Outcome,
        expect: &str,
    ) {
        let failure = Failure::of(&concurrent).expect("a failing outcome");
        let (mut ran, mut paced, mut own, mut alone) = (Vec::new(), 0, 0, 0);
        let verdict = judge(
            &test_case(lens),
            &failure,
            1_000,
            None,
            None,
            |order, pace| {
                match pace {
                    Pace::Full => ran.push(order_text(order)),
                    Pace::Paced { .. } => paced += 1,
                    Pace::OwnThreads => own += 1,
                    Pace::Paused { .. } => alone += 1,
                }
                sequential(order, pace)
            },
        );
        let mut own = if own > 0 {
            format!(" own={own}")
        } else {
            String::new()
        };
        if alone > 0 {
            own.push_str(&format!(" alone={alone}"));
        }
        let got = format!(
            "violation={} tried={} paced={paced}{own} ran=[{}]{}{}",
            verdict.violation,
            verdict.tried,
            ran.join(" | "),
            if verdict.alone {
                " explained alone"
            } else {
                ""
            },
            verdict
                .same_panic_at
                .map(|(order, at)| format!(
                    " same panic at {} in [{}]",
                    order_text(&[at]),
                    order_text(&order)
                ))
                .unwrap_or_default(),
        );
        assert_eq!(got, expect);
    }

    /// A wait that hung after the other thread had finished its calls (rsevents 0.2.1: `wait`
    /// parked for good after `set` returned) is explained only by orders that run the other
    /// thread's calls first: `wait; set`, which hangs because `set` never runs, does not.
    /// Events that do not account for every call, or a run that only outlived its timeout,
    /// leave the failure as before.
    #[test]
    fn a_wait_hung_after_the_other_thread_finished_needs_its_calls_first() {
        let event = |thread: u8, method: &str, start: bool| Event {
            clock: 0,
            thread,
            type_path: "k::T".into(),
            method: method.into(),
            start,
        };
        let test = test_case([2, 1]);
        let deadlock = Outcome::Deadlocked {
            inside: [Some("a".into()), None],
            blocked_for_good: true,
            lost_wakeup: None,
        };
        let failure = Failure::of(&deadlock).expect("a deadlock");
        // The prefix's events (thread 2) and nested ones do not count.
        let events = vec![
            event(2, "new", true),
            event(2, "new", false),
            event(0, "a", true),
            event(0, "inner", true),
            event(0, "inner", false),
            event(0, "a", false),
            event(1, "b", true),
            event(0, "a", true),
            event(1, "b", false),
        ];
        let marked = failure.clone().waited_after(&test, &deadlock, &events);
        assert!(
            matches!(
                marked,
                Failure::Deadlock {
                    waited_after: Some((0, 1)),
                    ..
                }
            ),
            "{marked:?}"
        );
        // An outermost call the test did not make (its own made no events): nothing marked.
        let mut stray = events.clone();
        stray[6] = event(1, "inner", true);
        stray[8] = event(1, "inner", false);
        assert!(matches!(
            failure.clone().waited_after(&test, &deadlock, &stray),
            Failure::Deadlock {
                waited_after: None,
                ..
            }
        ));
        // Thread 1's end missing: not every call accounted for, nothing marked.
        let unmarked = failure.clone().waited_after(&test, &deadlock, &events[..8]);
        // A run that only outlived its timeout (a call spinning, perhaps while the other
        // thread was starved until just before the end): nothing marked.
        let over_time = Outcome::Deadlocked {
            inside: [Some("a".into()), None],
            blocked_for_good: false,
            lost_wakeup: None,
        };
        assert!(matches!(
            failure.clone().waited_after(&test, &over_time, &events),
            Failure::Deadlock {
                waited_after: None,
                ..
            }
        ));
        assert!(
            matches!(
                unmarked,
                Failure::Deadlock {
                    waited_after: None,
                    ..
                }
            ),
            "{unmarked:?}"
        );
        // Only a sequential order in which `a` runs twice with nothing after it hangs, as a
        // wait with nothing to wake it; the orders the marked failure tries put `b` first.
        let hangs = |order: &[(u8, u32)]| {
            if order.first() == Some(&(0, 0)) && order.get(1) == Some(&(0, 1)) {
                deadlock.clone()
            } else {
                Outcome::Passed
            }
        };
        let judged = |failure: &Failure| {
            let mut ran = Vec::new();
            let verdict = judge(&test, failure, 1_000, None, None, |order, pace| {
                if *pace == Pace::Full {
                    ran.push(order_text(order));
                }
                hangs(order)
            });
            (verdict.violation, ran.join(" | "))
        };
        assert_eq!(judged(&unmarked), (false, "a0 a1 b0".to_string()));
        assert_eq!(judged(&marked), (true, "a0 b0 a1 | b0 a0 a1".to_string()));
    }

    /// A verdict out of time makes no more runs and reports nothing: every sequential order
    /// of a mutant's failure blocked, each costing a timeout, for 18 minutes of a 10-s budget.
    #[test]
    fn a_verdict_past_its_time_gives_up_without_a_violation() {
        let failure = Failure::of(&panic_at(1, 0, "lost wake-up")).expect("a panic");
        let test = test_case([2, 2]);
        let blocks = |_: &[(u8, u32)], _: &Pace| Outcome::Deadlocked {
            inside: [None, None],
            blocked_for_good: false,
            lost_wakeup: None,
        };
        let mut runs = 0;
        let give_up_at = std::time::Instant::now() + std::time::Duration::from_secs(3600);
        let judged = judge(&test, &failure, 1_000, None, Some(give_up_at), |o, p| {
            runs += 1;
            blocks(o, p)
        });
        assert_eq!(
            (judged.violation, judged.cut_short, judged.tried),
            (true, false, runs)
        );
        let mut runs = 0;
        let past = std::time::Instant::now();
        let judged = judge(&test, &failure, 1_000, None, Some(past), |o, p| {
            runs += 1;
            blocks(o, p)
        });
        assert_eq!((judged.violation, judged.cut_short, runs), (false, true, 0));
    }

    /// A type that behaves by the calling thread (sharded-slab's per-thread shards) fails
    /// in an order only when each call runs on its own thread: that pass explains the run.
    #[test]
    fn a_panic_an_order_on_the_calls_own_threads_repeats_is_not_a_violation() {
        check_paced_verdict(
            [1, 1],
            panic_at(1, 0, "inserted into full slot"),
            |_, pace| match pace {
                Pace::OwnThreads => panic_at(1, 0, "inserted into full slot"),
                _ => Outcome::Passed,
            },
            "violation=false tried=7 paced=4 own=1 ran=[a0 b0 | b0]",
        );
    }

    /// The pass that explained the type's last failure goes first: an order on the calls' own
    /// threads explains the run in one run; and a failure no pass explains is judged with the
    /// same runs, whichever pass goes first.
    #[test]
    fn the_pass_that_explained_the_last_failure_is_tried_first() {
        let failure = Failure::of(&panic_at(1, 0, "inserted into full slot")).expect("a panic");
        let by_thread = |_: &[(u8, u32)], pace: &Pace| match pace {
            Pace::OwnThreads => panic_at(1, 0, "inserted into full slot"),
            _ => Outcome::Passed,
        };
        let first = judge(&test_case([1, 1]), &failure, 1_000, None, None, by_thread);
        assert_eq!((first.violation, first.tried), (false, 7));
        let own = first.pass;
        assert_eq!(own, Some(1 + PACED_PASSES as usize));
        let mut paces = Vec::new();
        let next = judge(
            &test_case([1, 1]),
            &failure,
            1_000,
            own,
            None,
            |order, pace| {
                paces.push(pace.clone());
                by_thread(order, pace)
            },
        );
        assert_eq!((next.violation, next.tried, next.pass), (false, 1, own));
        assert_eq!(paces, [Pace::OwnThreads]);
        let never = |_: &[(u8, u32)], _: &Pace| Outcome::Passed;
        let unexplained = judge(&test_case([2, 1]), &failure, 1_000, None, None, never);
        for first in [Some(1), own] {
            let judged = judge(&test_case([2, 1]), &failure, 1_000, first, None, never);
            assert_eq!(judged, unexplained);
        }
        assert!(unexplained.violation);
    }

    /// A provisional verdict (a shrinking candidate's) makes the full-speed pass only: the
    /// same failure another pass explains is a violation to it, with a quarter of the runs and
    /// none of the real pauses; every pass still runs the orders at full speed first.
    #[test]
    fn a_full_speed_verdict_makes_only_the_full_speed_pass() {
        let failure = Failure::of(&panic_at(1, 0, "inserted into full slot")).expect("a panic");
        let by_thread = |_: &[(u8, u32)], pace: &Pace| match pace {
            Pace::OwnThreads => panic_at(1, 0, "inserted into full slot"),
            _ => Outcome::Passed,
        };
        let test = test_case([1, 1]);
        let mut paces = Vec::new();
        let quick = judge_with(
            &test,
            &failure,
            1_000,
            Some(3),
            None,
            Passes::FullSpeed,
            |o, p| {
                paces.push(p.clone());
                by_thread(o, p)
            },
        );
        assert_eq!((quick.violation, quick.tried, quick.pass), (true, 2, None));
        assert_eq!(paces, [Pace::Full, Pace::Full]);
        let all = judge_with(&test, &failure, 1_000, None, None, Passes::All, by_thread);
        assert_eq!((all.violation, all.pass), (false, Some(3)));
    }

    /// papaya's `reserve(usize::MAX)` panics in every sequential order (an `unwrap` of the
    /// overflowing length) and concurrently elsewhere ("capacity overflow", the length read
    /// as 0 while the other thread's insert was under way): the call fails whatever the
    /// order, so it is not a violation. A call that panics in some orders only, otherwise,
    /// still is one.
    #[test]
    fn a_call_that_panics_in_every_order_with_another_message_is_not_a_violation() {
        let overflow = panic_at(0, 1, "capacity overflow");
        check_paced_verdict(
            [2, 1],
            overflow.clone(),
            |_, _| panic_at(0, 1, "called `Option::unwrap()` on a `None` value"),
            "violation=false tried=3 paced=0 ran=[a0 a1 | a0 b0 a1 | b0 a0 a1]",
        );
        check_paced_verdict(
            [2, 1],
            overflow,
            |order, _| match order.first() {
                Some((1, _)) => panic_at(0, 1, "called `Option::unwrap()` on a `None` value"),
                _ => Outcome::Passed,
            },
            "violation=true tried=13 paced=6 own=3 alone=1 ran=[a0 a1 | a0 b0 a1 | b0 a0 a1]",
        );
    }

    /// maitake-sync 0.2.2's `add_permits(usize::MAX)` beside another thread's permits: the
    /// overflow check panics with its own message when the count is 0 and with an arithmetic
    /// overflow when it is 1, and the other thread's release panicked too. The orders are cut
    /// at whichever panicking call comes first, so `b0` alone passes and says nothing of `a0`:
    /// `b0 a0` is run too, and `a0` panics in every order. Where `b0 a0` passes, `a0` is not
    /// doomed, and the other thread's call is not checked by running more orders (`b0` passed).
    #[test]
    fn a_call_that_panics_in_every_order_beside_the_other_threads_panic_is_not_a_violation() {
        let both = with_also(
            panic_at(0, 0, "semaphore overflow adding 18 permits to 0"),
            panic_at(1, 0, "attempt to add with overflow"),
        );
        let overflow = |order: &[(u8, u32)]| match order.last() {
            Some((0, 0)) => panic_at(0, 0, "attempt to add with overflow"),
            _ => Outcome::Passed,
        };
        check_verdict(
            [1, 1],
            both.clone(),
            overflow,
            "violation=false tried=3 paced=0 ran=[a0 | b0 | b0 a0]",
        );
        let only_first = |order: &[(u8, u32)]| match order {
            [(0, 0)] => panic_at(0, 0, "attempt to add with overflow"),
            _ => Outcome::Passed,
        };
        check_verdict(
            [1, 1],
            both,
            only_first,
            "violation=true tried=11 paced=4 own=2 alone=2 ran=[a0 | b0 | b0 a0]",
        );
    }

    /// The same count seen from the other side: thread 1's `add_permits(usize::MAX)` panicked
    /// first, by its own check (the count at 0 while thread 0's `try_acquire(3)` held it),
    /// then thread 0's permit, given back, overflowed it. Thread 0's third call, another
    /// `add_permits(usize::MAX)`, panics wherever it runs first, so one order never gets to
    /// `b0`; every order that does panics there. Where `b0` passes after `a1`, it is not doomed.
    #[test]
    fn a_call_that_panics_in_every_order_reaching_it_is_not_a_violation() {
        let both = with_also(
            panic_at(1, 0, "semaphore overflow adding 18 permits to 0"),
            panic_at(0, 1, "attempt to add with overflow"),
        );
        // a2 and b0 overflow wherever they run; the run stops at the first panic.
        let overflow = |order: &[(u8, u32)]| {
            order
                .iter()
                .find(|c| **c == (0, 2) || **c == (1, 0))
                .map_or(Outcome::Passed, |&(t, c)| {
                    panic_at(t, c, "attempt to add with overflow")
                })
        };
        check_verdict(
            [3, 1],
            both.clone(),
            overflow,
            "violation=false tried=5 paced=0 ran=[a0 a1 | a0 b0 | b0 | a0 a1 a2 b0 | a0 a1 b0]",
        );
        let b0_passes_after_a1 = |order: &[(u8, u32)]| match order {
            [(0, 0), (0, 1), (1, 0)] => Outcome::Passed,
            _ => overflow(order),
        };
        check_verdict(
            [3, 1],
            both,
            b0_passes_after_a1,
            "violation=true tried=16 paced=6 own=3 alone=2 ran=[a0 a1 | a0 b0 | b0 | a0 a1 a2 b0 | a0 a1 b0]",
        );
    }

    /// maitake-sync's `Permit`: the failing call's panic unwound through a guard whose `Drop`
    /// panicked too, and the sequential run's worker aborted, saying which panic it unwound
    /// from. The same panic explains the run; another does not.
    #[test]
    fn a_sequential_abort_while_the_same_panic_unwound_explains_it() {
        let crash = |message: &str| Outcome::Crashed {
            message: format!(
                "the worker was killed by signal 6 (SIGABRT: abort); its last output:\n\
                 {}{message} at src/lib.rs:3:9\nthread caused non-unwinding panic. aborting.",
                crate::protocol::UNWOUND_FROM
            ),
        };
        check_verdict(
            [1, 1],
            panic_at(1, 0, "attempt to add with overflow"),
            |_| crash("attempt to add with overflow"),
            "violation=false tried=1 paced=0 ran=[a0 b0]",
        );
        check_verdict(
            [1, 1],
            panic_at(1, 0, "attempt to add with overflow"),
            |_| crash("attempt to subtract with overflow"),
            "violation=true tried=9 paced=4 own=2 alone=1 ran=[a0 b0 | b0]",
        );
    }

    /// A token bucket's `until_next` panics when a refill is overdue: the concurrent run was
    /// slow enough for that at thread 1's second call, the full-speed orders are not. A pass
    /// that paces that call repeats it. A paced run that fails at another call (the first,
    /// its refill overdue too) is not the same failure.
    #[test]
    fn a_panic_a_paced_order_repeats_at_its_call_is_not_a_violation() {
        let overdue = |call| panic_at(1, call, "overflow when subtracting durations");
        check_paced_verdict(
            [1, 2],
            overdue(1),
            |order, pace| match pace {
                Pace::Full | Pace::OwnThreads | Pace::Paused { .. } => Outcome::Passed,
                Pace::Paced { calls, .. } => match order.iter().find(|c| calls.contains(c)) {
                    Some(&(_, call)) => overdue(call),
                    None => Outcome::Passed,
                },
            },
            "violation=false tried=4 paced=1 ran=[a0 b0 b1 | b0 a0 b1 | b0 b1]",
        );
        check_paced_verdict(
            [1, 2],
            overdue(1),
            |_, pace| match pace {
                Pace::Full | Pace::OwnThreads | Pace::Paused { .. } => Outcome::Passed,
                Pace::Paced { .. } => overdue(0),
            },
            "violation=true tried=13 paced=6 own=3 alone=1 ran=[a0 b0 b1 | b0 a0 b1 | b0 b1]",
        );
    }

    /// The same bucket read through a clock covcon does not control, where no paced pass
    /// happened to wait long enough: thread 1's calls alone, paused, panic at its first
    /// `until_next` with the same message and location, which explains the run. Another
    /// message there does not.
    #[test]
    fn a_panic_one_threads_calls_alone_repeat_when_paused_is_not_a_violation() {
        let overdue = |call| panic_at(1, call, "overflow when subtracting durations");
        let alone = |answer: Outcome| {
            move |order: &[(u8, u32)], pace: &Pace| match pace {
                Pace::Paused { pause_us: 1_000 } => {
                    assert_eq!(order_text(order), "b0 b1");
                    answer.clone()
                }
                _ => Outcome::Passed,
            }
        };
        check_paced_verdict(
            [1, 2],
            overdue(1),
            alone(overdue(0)),
            "violation=false tried=13 paced=6 own=3 alone=1 ran=[a0 b0 b1 | b0 a0 b1 | b0 b1] explained alone",
        );
        check_paced_verdict(
            [1, 2],
            overdue(1),
            alone(panic_at(1, 0, "another message")),
            "violation=true tried=13 paced=6 own=3 alone=1 ran=[a0 b0 b1 | b0 a0 b1 | b0 b1]",
        );
        assert_eq!(alone_pause(0), 1_000);
        assert_eq!(alone_pause(3_000), 6_000);
        assert_eq!(alone_pause(u64::MAX), 1_000_000);
    }

    /// A prefix that panics now and then as the concurrent run's call did (both read the
    /// clock) shows the panic needs no second thread.
    #[test]
    fn a_prefix_panicking_as_the_run_did_explains_it() {
        let prefix_panic = |method: &str| Outcome::Panicked {
            thread: None,
            call: 1,
            method: method.into(),
            message: "boom".into(),
            location: Some("src/lib.rs:3:9".into()),
            also: vec![],
        };
        // The same method explains at once; another one is retried and never explains.
        for (method, expect) in [
            ("m", "violation=false tried=2 paced=0 ran=[a0 b0 | b0]"),
            (
                "other",
                "violation=false tried=21 paced=10 own=5 alone=1 ran=[a0 b0 | b0 | b0 | b0 | b0]",
            ),
        ] {
            check_verdict(
                [1, 1],
                panic_at(1, 0, "boom"),
                |order| {
                    if order.len() == 1 {
                        prefix_panic(method)
                    } else {
                        Outcome::Passed
                    }
                },
                expect,
            );
        }
    }

    /// A prefix that fails now and then (it reads the clock) leaves an order unjudged when it
    /// fails in every run of it: no violation without a verdict on every order.
    #[test]
    fn an_order_whose_prefix_always_fails_leaves_the_failure_unjudged() {
        let prefix_panic = || Outcome::Panicked {
            thread: None,
            call: 1,
            method: "until_next".into(),
            message: "overflow when subtracting durations".into(),
            location: None,
            also: vec![],
        };
        check_verdict(
            [1, 1],
            panic_at(1, 0, "boom"),
            |order| {
                if order.len() == 1 {
                    prefix_panic()
                } else {
                    Outcome::Passed
                }
            },
            "violation=false tried=21 paced=10 own=5 alone=1 ran=[a0 b0 | b0 | b0 | b0 | b0]",
        );
        let runs = std::cell::Cell::new(0);
        check_verdict(
            [1, 1],
            panic_at(1, 0, "boom"),
            |order| {
                runs.set(runs.get() + 1);
                if order.len() == 1 && runs.get() < 7 {
                    prefix_panic()
                } else {
                    Outcome::Passed
                }
            },
            "violation=true tried=12 paced=4 own=2 alone=1 ran=[a0 b0 | b0 | b0 | b0 | b0]",
        );
    }

    #[test]
    fn a_panic_no_linearization_repeats_is_a_violation() {
        check_verdict(
            [1, 1],
            panic_at(1, 0, "boom"),
            |_| Outcome::Passed,
            "violation=true tried=9 paced=4 own=2 alone=1 ran=[a0 b0 | b0]",
        );
    }

    #[test]
    fn a_panic_a_linearization_repeats_is_not_a_violation() {
        check_verdict(
            [1, 1],
            panic_at(1, 0, "len is 3"),
            |order| {
                if order.len() == 2 {
                    panic_at(1, 0, "len is 4")
                } else {
                    Outcome::Passed
                }
            },
            "violation=false tried=1 paced=0 ran=[a0 b0]",
        );
    }

    /// (The order `b0` first passes: were `a1` to fail in every order that reaches it, the call
    /// would be doomed, as above.) The verdict notes the order that panicked the same way at
    /// another call, for the report to say so beside "no order fails this way"; a panic with the
    /// same message at another location is another panic, and is not noted.
    #[test]
    fn a_panic_with_another_message_or_at_another_call_does_not_explain() {
        check_verdict(
            [2, 1],
            panic_at(0, 1, "boom"),
            |order| match order {
                [(0, 0), (0, 1)] => panic_at(0, 0, "boom"),
                [(1, 0), ..] => Outcome::Passed,
                _ => panic_at(0, 1, "other"),
            },
            "violation=true tried=13 paced=6 own=3 alone=1 ran=[a0 a1 | a0 b0 a1 | b0 a0 a1] same panic at a0 in [a0 a1]",
        );
        let elsewhere = |outcome| match outcome {
            Outcome::Panicked {
                thread,
                call,
                method,
                message,
                also,
                ..
            } => Outcome::Panicked {
                thread,
                call,
                method,
                message,
                location: Some("src/lib.rs:40:5".into()),
                also,
            },
            other => other,
        };
        check_verdict(
            [2, 1],
            panic_at(0, 1, "boom"),
            |order| match order {
                [(0, 0), (0, 1)] => elsewhere(panic_at(0, 0, "boom")),
                [(1, 0), ..] => Outcome::Passed,
                _ => panic_at(0, 1, "other"),
            },
            "violation=true tried=13 paced=6 own=3 alone=1 ran=[a0 a1 | a0 b0 a1 | b0 a0 a1]",
        );
    }

    /// Seen on metrics-util's `AtomicSamplingReservoir::new(0)`, whose `record` panics on any
    /// first sample: thread 1's `record` counted its sample, then paused before panicking;
    /// thread 0's `record` saw the count and passed, thread 0 reset the count and its next
    /// `record` panicked first by clock. Thread 1's own panic, later, is the one a sequential
    /// order repeats (b0 first): not a violation.
    #[test]
    fn a_panic_explained_through_the_other_threads_later_panic_is_not_a_violation() {
        let first_by_clock = panic_at(0, 2, "cannot sample empty range");
        let both = with_also(
            first_by_clock.clone(),
            panic_at(1, 0, "cannot sample empty range"),
        );
        // Every order panics at its first sample: a1 or b0 (a0 and a2 take none).
        let sequential = |order: &[(u8, u32)]| {
            let first = order.iter().find(|&&(t, c)| t == 1 || c == 1);
            first.map_or(Outcome::Passed, |&(t, c)| {
                panic_at(t, c, "cannot sample empty range")
            })
        };
        check_verdict(
            [3, 1],
            first_by_clock,
            sequential,
            "violation=true tried=17 paced=8 own=4 alone=1 ran=[a0 a1 a2 | a0 a1 b0 a2 | a0 b0 a1 a2 | b0 a0 a1 a2] same panic at a1 in [a0 a1 a2]",
        );
        check_verdict(
            [3, 1],
            both,
            sequential,
            "violation=false tried=3 paced=0 ran=[a0 a1 a2 | a0 a1 b0 | a0 b0]",
        );
    }

    #[test]
    fn a_deadlock_is_explained_by_a_linearization_that_blocks() {
        check_verdict(
            [1, 1],
            Outcome::Deadlocked {
                inside: [Some("take".into()), Some("put".into())],
                blocked_for_good: true,
                lost_wakeup: None,
            },
            |order| {
                if order[0] == (0, 0) {
                    Outcome::Deadlocked {
                        inside: [Some("take".into()), None],
                        blocked_for_good: true,
                        lost_wakeup: None,
                    }
                } else {
                    Outcome::Passed
                }
            },
            "violation=false tried=1 paced=0 ran=[a0 b0]",
        );
    }

    #[test]
    fn a_deadlock_no_linearization_blocks_is_a_violation_even_if_one_panics() {
        check_verdict(
            [1, 1],
            Outcome::Deadlocked {
                inside: [Some("ab".into()), Some("ba".into())],
                blocked_for_good: true,
                lost_wakeup: None,
            },
            |_| panic_at(0, 0, "poisoned"),
            "violation=true tried=4 paced=0 own=2 ran=[a0 b0 | b0 a0]",
        );
    }

    #[test]
    fn a_crash_is_explained_by_a_linearization_that_crashes() {
        check_verdict(
            [1, 1],
            Outcome::Crashed {
                message: "SIGABRT".into(),
            },
            |order| {
                if order[0] == (1, 0) {
                    Outcome::Crashed {
                        message: "SIGABRT".into(),
                    }
                } else {
                    Outcome::Passed
                }
            },
            "violation=false tried=2 paced=0 ran=[a0 b0 | b0 a0]",
        );
    }

    #[test]
    fn a_deadlock_is_explained_by_a_linearization_that_kills_the_worker() {
        check_verdict(
            [1, 1],
            Outcome::Deadlocked {
                inside: [Some("spin".into()), None],
                blocked_for_good: false,
                lost_wakeup: None,
            },
            |_| Outcome::Crashed {
                message: "stopped answering".into(),
            },
            "violation=false tried=1 paced=0 ran=[a0 b0]",
        );
    }

    #[test]
    fn prefix_panics_and_setup_failures_are_not_concurrent_failures() {
        let prefix = Outcome::Panicked {
            thread: None,
            call: 1,
            method: "new".into(),
            message: "x".into(),
            location: None,
            also: vec![],
        };
        assert_eq!(Failure::of(&prefix), None);
        assert_eq!(
            Failure::of(&Outcome::SetupFailed {
                message: "Err".into()
            }),
            None
        );
        assert_eq!(Failure::of(&Outcome::Passed), None);
    }
}
