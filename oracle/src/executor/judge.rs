//! Judging: whether a run shows a violation — a failure no linearization repeats (the
//! verdict, `crate::verdict`, on sequential runs of its orders; a test with scopes also with
//! the other thread's calls moved inside a scope), or (with the results oracle on) a passing
//! run of a test without scopes whose results no linearization gives (`crate::results`) — and
//! the violation it shows,
//! before it is confirmed and written; and whether a later run shows it again.

use super::{lock, OracleExecutor, Violation, ViolationKind};
use crate::protocol::{Outcome, Response};
use crate::results::{
    check_results_until, holding_guard, stuck_call, Depth, ResultsVerdict, ResultsViolation,
    SequentialOutcomes,
};
use crate::trace;
use crate::verdict::{self, Failure, Pace, Passes};
use generator::{Call, Executor, TestCase};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

impl OracleExecutor {
    /// The violation a run of `test` shows, judged but not yet confirmed or written: a
    /// failure no linearization repeats, or (with the results oracle on) a passing run whose
    /// results no linearization gives. `outcomes` keeps the sequential runs of `test`; `hung`
    /// gets the call a sequential order blocked in when that explained a failure (a call
    /// that hangs alone, such as `reserve(usize::MAX)`: not worth generating again), and
    /// whether it ran until the timeout rather than being found blocked for good. A
    /// failure's verdict makes the passes `passes` says ([`Passes::FullSpeed`]: a provisional
    /// one, for shrinking candidates).
    pub(super) fn violation_in(
        &self,
        test: &TestCase,
        response: Response,
        outcomes: &mut SequentialOutcomes,
        hung: &mut Vec<(Call, bool)>,
        passes: Passes,
    ) -> Option<Violation> {
        if let Some(failure) = Failure::of_run(test, &response) {
            let mut last = None;
            let pause_us = verdict::alone_pause(response.elapsed_us);
            let verdict = verdict::judge_with(
                test,
                &failure,
                pause_us,
                self.explaining_pass_of(test),
                self.deadline
                    .map(|d| (d + RECORD_GRACE).max(Instant::now() + VERDICT_LEAST)),
                passes,
                |order, pace| {
                    let response = self.paced_sequential(test, order, pace);
                    let outcome = response.outcome.clone();
                    last = Some(response);
                    outcome
                },
            );
            self.note_explaining_pass(test, verdict.pass, verdict.alone);
            if verdict.cut_short {
                self.type_stats_of(test, |stats| stats.unjudged += 1);
                return None;
            }
            if verdict.alone {
                self.type_stats_of(test, |stats| stats.clock_outside += 1);
            }
            if !verdict.violation {
                // The run that explained the failure is the last one made.
                if let (
                    Some((
                        order,
                        Outcome::Deadlocked {
                            blocked_for_good, ..
                        },
                    )),
                    Some(last),
                ) = (&verdict.explained_by, &last)
                {
                    let at = stuck_call(test, order, &last.events);
                    let call = at.and_then(|at| {
                        let (thread, index) = order[at];
                        test.threads[thread as usize].get(index as usize)
                    });
                    hung.extend(call.map(|call| (call.clone(), !blocked_for_good)));
                }
                return None;
            }
            // A scope runs whole in the orders above; a user's thread may let the other
            // thread's calls run while it holds the guard. If one thread's scope with the
            // other's calls made inside it panics the same way, that single-threaded order
            // explains the run (a vacant entry's key taken before the entry is filled panics
            // alone too): no violation.
            if let Failure::Panic {
                message, location, ..
            } = &failure
            {
                // Calls that keep locals cannot be moved into the other thread's scope (their
                // locals are numbered by thread): with those orders untried, no report.
                for inside in scope_interiors(test)? {
                    let order: Vec<(u8, u32)> = (0..inside.threads[0].len() as u32)
                        .map(|i| (0, i))
                        .collect();
                    let run = self.paced_sequential(&inside, &order, &Pace::Full);
                    if let Outcome::Panicked {
                        message: m,
                        location: l,
                        ..
                    } = &run.outcome
                    {
                        if verdict::same_message(message, m)
                            && (location.is_none() || l.is_none() || location == l)
                        {
                            return None;
                        }
                    }
                }
            }
            // Blocked while a thread held a scope's guard (two threads each holding a map's
            // entry while calling into the map): the test's own use of the guard may be what
            // the type's contract forbids, so no deadlock of it is reported.
            if matches!(failure, Failure::Deadlock { .. })
                && holding_guard(&response.events).contains(&true)
            {
                self.type_stats_of(test, |stats| stats.guard_held_deadlocks += 1);
                return None;
            }
            let mut violation = describe(test, &failure, response, verdict.tried);
            violation.location = violation.location.map(|l| self.user_location(l));
            violation.same_panic_at = verdict.same_panic_at;
            return Some(violation);
        }
        if response.outcome != Outcome::Passed {
            return None;
        }
        let (results, linearizations) = self.wrong_results(test, &response, outcomes)?;
        Some(describe_results(test, response, results, linearizations))
    }

    /// The results violation a passing run of `test` shows (with the results oracle on), and
    /// how many linearizations were compared: none of the orders of `test`'s calls gives its
    /// results, and none of the orders of any rewrite of `test` with its coalesced calls'
    /// closures as they ran either ([`crate::results::ResultsConfig::coalesced_variants`]).
    fn wrong_results(
        &self,
        test: &TestCase,
        response: &Response,
        outcomes: &mut SequentialOutcomes,
    ) -> Option<(ResultsViolation, u32)> {
        let config = self.config.results.as_ref()?;
        // Its orders run each scope whole, while a user's thread may let the other thread's
        // calls see the guard held (`is_reserved` true): no order gives such answers, and no
        // comparison of them is sound. The test is judged for panics and deadlocks alone.
        if test.has_scope() {
            return None;
        }
        let pause_us = verdict::alone_pause(response.elapsed_us);
        let check = |test: &TestCase, outcomes: &mut SequentialOutcomes, depth| {
            check_results_until(
                test,
                response,
                outcomes,
                config,
                (self.deadline, depth),
                |order, speed| self.results_run(test, order, speed, pause_us),
            )
        };
        let first = check(test, outcomes, Depth::Full);
        let ResultsVerdict::Violation(results) = first.verdict else {
            return None;
        };
        let variants = config.coalesced_variants(test, response);
        // A first look at every rewrite (its orders as they stand) before any is checked in
        // full: the one that explains the run need not be the first, and a full check gathers
        // evidence (every order run a few times over) before it says a rewrite does not.
        for (depth, variant) in [Depth::FirstMatch, Depth::Full]
            .into_iter()
            .flat_map(|depth| variants.iter().map(move |variant| (depth, variant)))
        {
            let mut runs = outcomes.take_variant(variant);
            let again = check(variant, &mut runs, depth);
            outcomes.keep_variant(runs);
            let explained = match depth {
                Depth::FirstMatch => matches!(again.verdict, ResultsVerdict::Linearizable { .. }),
                Depth::Full => !matches!(again.verdict, ResultsVerdict::Violation(_)),
            };
            if explained {
                self.type_stats_of(test, |stats| stats.coalesced_explained += 1);
                return None;
            }
        }
        Some((results, first.linearizations))
    }

    /// Whether a run of `test` shows a violation again: the same `failure`, or without one (a
    /// wrong result) results no linearization gives, judged with the sequential runs in
    /// `outcomes`.
    pub(super) fn shows_again(
        &self,
        test: &TestCase,
        failure: Option<&Failure>,
        response: &Response,
        outcomes: &mut SequentialOutcomes,
    ) -> bool {
        match (failure, &self.config.results) {
            (Some(failure), _) => failure.is_repeated_by(&response.outcome),
            (None, Some(_)) if response.outcome == Outcome::Passed => {
                self.wrong_results(test, response, outcomes).is_some()
            }
            (None, _) => false,
        }
    }

    /// Whether the first run of a wrong result is still one after the confirmation runs: they
    /// add sequential runs of the same calls, which show more of what varies from run to run
    /// (a `HashMap`'s order, a random id) and is then left out of the comparison.
    pub(super) fn still_wrong(
        &self,
        violation: &Violation,
        outcomes: &mut SequentialOutcomes,
    ) -> bool {
        // Within the type's time, as the first verdict: a type whose every sequential run
        // builds thousands of segments (moka's `SegmentedCache::new(_, 3072)`) took minutes
        // to confirm a wrong result past a 30 s share.
        self.wrong_results(&violation.test, &violation.response, outcomes)
            .is_some()
    }

    /// A panic location in the instrumented copy, made relative to the workspace root (the
    /// copy keeps every line where it was).
    fn user_location(&self, location: String) -> String {
        match Path::new(&location).strip_prefix(&self.copy_root) {
            Ok(relative) => relative.display().to_string(),
            Err(_) => location,
        }
    }

    /// The verdict pass that explained the last explained failure of `test`'s type.
    pub(super) fn explaining_pass_of(&self, test: &TestCase) -> Option<usize> {
        let passes = self
            .explaining_pass
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        passes.get(&test.type_path).copied()
    }

    fn note_explaining_pass(&self, test: &TestCase, pass: Option<usize>, alone: bool) {
        if pass.is_some_and(|pass| pass > 0) || alone {
            lock(&self.explained_slowly).insert(test.type_path.clone());
        }
        if let Some(pass) = pass {
            self.explaining_pass
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .insert(test.type_path.clone(), pass);
        }
    }

    /// The passes a campaign failure of `test` is first judged with, and its shrinking
    /// candidates after it: when it will be shrunk, the orders at full speed only
    /// ([`Passes::FullSpeed`]) while none of the type's failures needed more to be explained
    /// (paced orders, the calls' own threads, real pauses); every pass otherwise. The test a
    /// report shows is the shrunk one, judged with every pass before it is kept
    /// (`shrink_violation`), or the test itself when shrinking kept nothing (`record`). A
    /// 5 + 5-call test has up to 252 orders, each run in every pass: a quarter of that is what
    /// a violation's first verdict then costs.
    pub(super) fn verdict_passes(&self, test: &TestCase) -> Passes {
        if self.config.shrink.is_some() && !lock(&self.explained_slowly).contains(&test.type_path) {
            Passes::FullSpeed
        } else {
            Passes::All
        }
    }

    /// `violation` judged again with every pass ([`Passes::All`]), when that still finds a
    /// violation with the same key: a provisional one's (judged at full speed only) check
    /// before it is reported.
    pub(super) fn judged_in_full(&self, violation: Violation) -> Option<Violation> {
        let key = self.violation_key(&violation);
        self.violation_in(
            &violation.test,
            violation.response,
            &mut SequentialOutcomes::new(),
            &mut Vec::new(),
            Passes::All,
        )
        .filter(|found| self.violation_key(found) == key)
    }
}

/// How long past its type's deadline a violation's schedule search and confirmation may go
/// on ([`OracleExecutor::recording_late`]). A thousand schedules of a slow test took minutes:
/// moka 0.9.5's `SegmentedCache` (4,096 segments built per run) ran 680 s for a 60 s budget.
pub(super) const RECORD_GRACE: Duration = Duration::from_secs(10);

/// The least time a panic's or deadlock's verdict has, however late after its type's deadline
/// it starts (also [`RECORD_GRACE`] past the deadline): a verdict is fast but for sequential
/// orders that block, each costing a timeout; a failure found as the time ran out is still
/// judged.
const VERDICT_LEAST: Duration = Duration::from_secs(10);

pub(super) fn kind_of(failure: &Failure) -> ViolationKind {
    match failure {
        Failure::Panic { .. } => ViolationKind::Panic,
        Failure::Deadlock { .. } => ViolationKind::Deadlock,
        Failure::Crash { .. } => ViolationKind::Crash,
    }
}

/// What a report says when a sequential order of `test` panicked as the violation did but
/// at another call ([`Violation::same_panic_at`]): `order` (thread, index) pairs, `at` the call
/// it panicked at. Threads and calls are numbered from 1, as in results messages.
pub fn same_panic_note(test: &TestCase, order: &[(u8, u32)], at: (u8, u32)) -> String {
    let label = |(thread, index): (u8, u32)| format!("t{}.{}", thread + 1, index + 1);
    let order: Vec<String> = order.iter().map(|&call| label(call)).collect();
    let method = test
        .threads
        .get(usize::from(at.0))
        .and_then(|calls| calls.get(at.1 as usize))
        .map(|call| format!(" `{}`", call.method))
        .unwrap_or_default();
    format!(
        "the order {} panics the same way at another call, {}{method}: an earlier call of this run likely answered what no order answers",
        order.join(" "),
        label(at),
    )
}

/// The violation a failing run shows, before it is confirmed and written.
pub(super) fn describe(
    test: &TestCase,
    failure: &Failure,
    response: Response,
    tried: u32,
) -> Violation {
    let other_of_pair = |method: &str| {
        if test.pair[0] == method {
            test.pair[1].clone()
        } else {
            test.pair[0].clone()
        }
    };
    let (methods, message, location) = match failure {
        Failure::Panic {
            thread,
            method,
            message,
            location,
            ..
        } => {
            let partner =
                trace::concurrent_partner(&response.events, &test.type_path, *thread, method)
                    .unwrap_or_else(|| other_of_pair(method));
            ([method.clone(), partner], message.clone(), location.clone())
        }
        Failure::Deadlock {
            inside,
            lost_wakeup,
            waited_after,
        } => {
            let methods = match inside {
                [Some(a), Some(b)] => [a.clone(), b.clone()],
                [Some(a), None] | [None, Some(a)] => [a.clone(), other_of_pair(a)],
                [None, None] => test.pair.clone(),
            };
            let in_call = |t: usize| inside[t].as_deref().unwrap_or("(no instrumented method)");
            let message = match lost_wakeup {
                Some(t) => format!(
                    "lost wake-up: thread {t} waited in {} on a condition variable for a notify that never came, although what it waited for already held: every thread was blocked, and one wake-up from covcon's watchdog (as a spurious wake-up would be, which code that re-checks its condition survives) let it finish; without it, it waits for ever",
                    in_call(usize::from(*t).min(1))
                ),
                // One thread hung after the other had finished every call: say so, not
                // that the other was blocked somewhere no instrumented method shows.
                None => match waited_after {
                    Some((t, _)) => format!(
                        "deadlock: thread {t} blocked in {} after thread {} had finished all its calls",
                        in_call(usize::from(*t).min(1)),
                        1 - t.min(&1),
                    ),
                    None => format!(
                        "deadlock: thread 0 blocked in {}, thread 1 blocked in {}",
                        in_call(0),
                        in_call(1),
                    ),
                },
            };
            (methods, message, None)
        }
        Failure::Crash { message } => (test.pair.clone(), message.clone(), None),
    };
    let mut methods = methods;
    methods.sort();
    Violation {
        kind: kind_of(failure),
        type_path: test.type_path.clone(),
        methods,
        message,
        location,
        test: test.clone(),
        response,
        linearizations: tried,
        reproducer: PathBuf::new(),
        json: PathBuf::new(),
        confirmed: (0, 0),
        results: None,
        shrunk: None,
        original_message: None,
        same_panic_at: None,
    }
}

/// The violation a passing run with wrong results shows, before it is confirmed and written.
fn describe_results(
    test: &TestCase,
    response: Response,
    results: ResultsViolation,
    linearizations: u32,
) -> Violation {
    let mut methods = test.pair.clone();
    methods.sort();
    Violation {
        kind: ViolationKind::WrongResult,
        type_path: test.type_path.clone(),
        methods,
        message: format!("results no linearization gives: {results}"),
        location: None,
        test: test.clone(),
        response,
        linearizations,
        reproducer: PathBuf::new(),
        json: PathBuf::new(),
        confirmed: (0, 0),
        results: Some(results),
        shrunk: None,
        original_message: None,
        same_panic_at: None,
    }
}

/// Single-threaded tests in which one thread's scope has some of the other thread's calls
/// made inside it (`generator::Call::scope`), right after the guard is handed out or right
/// before the scope ends: the orders a scope's whole runs leave out. The other thread's calls
/// keep their order: those before the moved ones run just before the scope, those after at the
/// end. Empty for a test without scopes; `None` when a thread with a scope faces calls of the
/// other that keep a local (their locals are numbered by thread, so they cannot move).
pub(super) fn scope_interiors(test: &TestCase) -> Option<Vec<TestCase>> {
    let mut out = Vec::new();
    for (t, calls) in test.threads.iter().enumerate() {
        let others = &test.threads[1 - t];
        if others.is_empty() || calls.iter().all(|c| c.scope.is_none()) {
            continue;
        }
        if others.iter().any(|c| c.keep) {
            return None;
        }
        for (i, call) in calls.iter().enumerate() {
            let Some(scope) = &call.scope else { continue };
            for at in [0, scope.then.len()] {
                for a in 0..others.len() {
                    for b in a + 1..=others.len() {
                        let mut moved = (**scope).clone();
                        for (k, other) in others[a..b].iter().enumerate() {
                            moved.then.insert(at + k, other.clone());
                        }
                        let mut mine: Vec<Call> = calls[..i].to_vec();
                        mine.extend(others[..a].iter().cloned());
                        let mut scoped = call.clone();
                        scoped.scope = Some(Box::new(moved));
                        mine.push(scoped);
                        mine.extend(calls[i + 1..].iter().cloned());
                        mine.extend(others[b..].iter().cloned());
                        let mut inside = test.clone();
                        inside.threads = [mine, Vec::new()];
                        out.push(inside);
                    }
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::two_threads;
    use super::*;
    use generator::{Scope, Value};

    /// The orders a whole scope leaves out, as single-threaded tests: some of the other
    /// thread's calls moved inside the scope (after the guard is handed out, or before the
    /// scope ends), the ones before them just before the scope, the rest at the end.
    #[test]
    fn the_other_threads_calls_are_moved_inside_a_scope_in_order() {
        let call = |m: &str| Call::new(m, 0, vec![Value::Int(1)]);
        let scoped = Call {
            scope: Some(Box::new(Scope {
                then: vec![call("len")],
                finish: Some(call("insert")),
            })),
            ..call("vacant_entry")
        };
        let test = two_threads(
            "k::Slab",
            ["vacant_entry", "take"],
            [vec![scoped], vec![call("take"), call("get")]],
        );
        let texts: Vec<String> = scope_interiors(&test)
            .unwrap()
            .iter()
            .map(|t| {
                t.to_string()
                    .split_once("thread 0: ")
                    .unwrap()
                    .1
                    .to_string()
            })
            .collect();
        assert_eq!(
            texts,
            [
                "{ let g = c0.vacant_entry(1); c0.take(1); c0.len(1); g.insert(1) }; c0.get(1) | thread 1: -",
                "{ let g = c0.vacant_entry(1); c0.take(1); c0.get(1); c0.len(1); g.insert(1) } | thread 1: -",
                "c0.take(1); { let g = c0.vacant_entry(1); c0.get(1); c0.len(1); g.insert(1) } | thread 1: -",
                "{ let g = c0.vacant_entry(1); c0.len(1); c0.take(1); g.insert(1) }; c0.get(1) | thread 1: -",
                "{ let g = c0.vacant_entry(1); c0.len(1); c0.take(1); c0.get(1); g.insert(1) } | thread 1: -",
                "c0.take(1); { let g = c0.vacant_entry(1); c0.len(1); c0.get(1); g.insert(1) } | thread 1: -",
            ]
        );
        // A call of the other thread that keeps a local cannot move: nothing can be tried.
        let mut keeping = test.clone();
        keeping.threads[1][0].keep = true;
        assert!(scope_interiors(&keeping).is_none());
        let mut plain = test.clone();
        plain.threads[0][0].scope = None;
        assert_eq!(scope_interiors(&plain).map(|v| v.len()), Some(0));
    }
}
