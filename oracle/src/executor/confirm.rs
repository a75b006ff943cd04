//! Confirming: a violation found free is first put under a schedule that shows it again, so
//! it replays exactly (PCT and random-walk seeds, then every schedule with at most two
//! preemptions), then re-run to count how often it repeats; a rare free panic gets one batch
//! of about a second of runs in the worker. Each re-run is judged by `judge.rs`.

use super::judge::RECORD_GRACE;
use super::{OracleExecutor, Violation, ViolationKind};
use crate::config::{controlled, mix, Scheduling};
use crate::protocol::{Control, Request};
use crate::results::SequentialOutcomes;
use crate::verdict::Failure;
use generator::TestCase;
use std::time::Instant;

impl OracleExecutor {
    /// Puts a violation found free under a schedule that shows it ([`Self::find_schedule`]),
    /// then confirms it (`violation.confirmed`); a scheduled panic no re-run repeated is tried
    /// free again. Answers whether its test now runs ordered, replaying exactly.
    pub(super) fn schedule_and_confirm(
        &self,
        violation: &mut Violation,
        outcomes: &mut SequentialOutcomes,
    ) -> bool {
        let mut ordered = violation.response.replayable();
        let as_found = violation.test.clone();
        if let Some(scheduled) = self.find_schedule(violation, outcomes) {
            // Found free: from here on it runs under a schedule that shows it, so the
            // confirmation, the shrinking, the files and `replay` repeat it exactly.
            violation.test = scheduled;
            ordered = true;
        }
        violation.confirmed = self.confirm(violation, outcomes, self.config.confirm_runs);
        if violation.confirmed.0 == 0 && !violation.test.control.is_free() && !self.recording_late()
        {
            // A schedule that showed a panic once and never again: its window is where the
            // schedule does not reach, inside a dependency the copy does not instrument
            // (parking_lot 0.8.1's `ReentrantMutex`, whose count is lock_api's: 0 of 20, then
            // 11 of 20). Free runs of the test, one batch, may show it again; then the test is
            // kept free, and shrunk and replayed as free panics are.
            let free = TestCase {
                control: Control::Free,
                ..as_found
            };
            let failure = Failure::of(&violation.response.outcome);
            if let Some(failure @ Failure::Panic { .. }) = &failure {
                let (repeated, made) =
                    self.confirm_by_batch(&free, failure, violation.response.elapsed_us);
                violation.confirmed = (repeated, violation.confirmed.1.saturating_add(made));
                if repeated > 0 {
                    violation.test = free;
                    ordered = false;
                }
            }
        }
        ordered
    }

    /// For a panic, deadlock or wrong result found in a run its schedule did not fully order
    /// (a free run, or a controlled one where control ended or a woken thread ran alongside
    /// the other), a schedule of the same test that shows it again and orders the whole run,
    /// so it replays exactly: first PCT and random-walk seeds, then every schedule with at
    /// most two preemptions (CHESS's bound) over the steps a controlled run of the test
    /// passes, in batches, until one fails the same way (for a wrong result: passes with
    /// results no linearization gives, judged with the sequential runs in `outcomes`) or
    /// [`SCHEDULE_SEARCH`] runs are spent. `None` when the run was fully ordered already,
    /// scheduling is off, or no schedule showed it.
    fn find_schedule(
        &self,
        violation: &Violation,
        outcomes: &mut SequentialOutcomes,
    ) -> Option<TestCase> {
        let test = &violation.test;
        if violation.response.replayable() || self.config.scheduling == Scheduling::Free {
            return None;
        }
        let failure = Failure::of(&violation.response.outcome);
        match &failure {
            Some(Failure::Crash { .. }) => return None,
            // A wrong result (the run passed) is judged as the campaign judged it.
            None if violation.kind != ViolationKind::WrongResult
                || self.config.results.is_none() =>
            {
                return None
            }
            _ => {}
        }
        let with = |control: Control, seed: u64| TestCase {
            control,
            noise_seed: seed,
            ..test.clone()
        };
        let steps = self.steps_of(&test.type_path);
        let mut candidates: Vec<TestCase> = (0..SAMPLED_SCHEDULES as u64)
            .map(|i| with(controlled(i, steps), mix(test.noise_seed ^ mix(i))))
            .collect();
        let (mut tried, mut enumerated, mut seen_steps) = (0, false, 0);
        while tried < SCHEDULE_SEARCH && !candidates.is_empty() && !self.recording_late() {
            let take = candidates.len().min(self.config.batch.max(1));
            let batch: Vec<TestCase> = candidates.drain(..take).collect();
            let request = self.batch_of(&batch, |_| super::run::Runs::ONCE);
            let responses = self.pool.request_all(std::slice::from_ref(&request));
            self.count_runs(&self.stats.confirm_runs, test, batch.len() as u64);
            for (candidate, response) in batch.into_iter().zip(responses) {
                tried += 1;
                // Only a run the schedule ordered from start to end: it replays exactly.
                if response.replayable()
                    && self.shows_again(&candidate, failure.as_ref(), &response, outcomes)
                {
                    return Some(candidate);
                }
                if let Some(schedule) = &response.schedule {
                    seen_steps = seen_steps.max(schedule.steps);
                }
            }
            if candidates.is_empty() && !enumerated && seen_steps > 0 {
                enumerated = true;
                candidates = preemptions(u32::try_from(seen_steps).unwrap_or(u32::MAX))
                    .map(|control| with(control, test.noise_seed))
                    .take(SCHEDULE_SEARCH.saturating_sub(tried))
                    .collect();
            }
        }
        None
    }

    /// Re-runs the violation's test concurrently up to `runs` times and counts the runs that
    /// show it again: the same failure, or for a wrong result, results no linearization gives
    /// (judged with the sequential runs already made). Stops at the first repeated deadlock or
    /// crash, which cost a worker each. Answers (repeats, runs made).
    pub(super) fn confirm(
        &self,
        violation: &Violation,
        outcomes: &mut SequentialOutcomes,
        runs: u32,
    ) -> (u32, u32) {
        let test = &violation.test;
        let failure = Failure::of(&violation.response.outcome);
        // A deadlock the watchdog only saw over its time, never blocked for good, may be a
        // run starved of CPU on a loaded machine (two such in a row are not rare there:
        // crossbeam-channel 0.3.6's parked receivers, 1 of 8): its re-runs get
        // `OVER_TIME_RERUN` times the time, in which a starved run finishes and a deadlock
        // does not.
        let over_time_only = violation.response.outcome.over_time();
        let mut repeats = 0;
        for run in 1..=runs {
            if run > 1 && self.recording_late() {
                // Out of time: what the runs made so far showed.
                return (repeats, run - 1);
            }
            self.count_runs(&self.stats.confirm_runs, test, 1);
            let mut request = self.concurrent_request(&rerun(test, run));
            if over_time_only {
                if let Request::Concurrent { timeout_ms, .. } = &mut request {
                    *timeout_ms = timeout_ms.saturating_mul(OVER_TIME_RERUN);
                }
            }
            let response = self.pool.request(&request);
            if self.shows_again(test, failure.as_ref(), &response, outcomes) {
                repeats += 1;
                if matches!(
                    failure,
                    Some(Failure::Deadlock { .. } | Failure::Crash { .. })
                ) {
                    return (repeats, run);
                }
            }
        }
        if repeats == 0 && runs > 0 && matches!(test.control, Control::Free) {
            if let Some(failure @ Failure::Panic { .. }) = &failure {
                // A window no schedule point of the copy reaches (between two calls into a
                // dependency: lasso 0.7.1) shows once in thousands of free runs, as it did
                // in the campaign: one batch of runs in the worker, as many as fit in about
                // a second of the test's running time, gives it that chance again.
                let again = rerun(test, runs + 1);
                let (repeated, made) =
                    self.confirm_by_batch(&again, failure, violation.response.elapsed_us);
                return (repeated, runs.saturating_add(made));
            }
        }
        (repeats, runs)
    }

    /// One batch of free runs of `test` ([`Self::confirm_batch_request`]): whether it showed
    /// `failure` again (0 or 1), and how many runs it made.
    fn confirm_by_batch(&self, test: &TestCase, failure: &Failure, elapsed_us: u64) -> (u32, u32) {
        let request = self.confirm_batch_request(test, elapsed_us);
        let response = self.pool.request(&request);
        self.count_runs(&self.stats.confirm_runs, test, response.runs.max(1));
        let made = u32::try_from(response.runs.max(1)).unwrap_or(u32::MAX);
        (u32::from(failure.is_repeated_by(&response.outcome)), made)
    }

    /// Whether a violation's schedule search and confirmation are past their time:
    /// [`RECORD_GRACE`] after the type's deadline.
    fn recording_late(&self) -> bool {
        self.deadline
            .is_some_and(|d| Instant::now() >= d + RECORD_GRACE)
    }
}

/// Re-run `run` of `test` (a confirmation's, a replay's): a free run's noise seed does not
/// fix its interleaving, so each re-run draws other noise, as a user's reruns would; a
/// schedule is replayed as it is.
pub(super) fn rerun(test: &TestCase, run: u32) -> TestCase {
    TestCase {
        noise_seed: match test.control {
            Control::Free => mix(test.noise_seed ^ u64::from(run)),
            _ => test.noise_seed,
        },
        ..test.clone()
    }
}

/// How many times a run's timeout a re-run of a deadlock seen only over its time gets.
const OVER_TIME_RERUN: u64 = 4;

/// Whether a violation's confirmation (re-runs that repeated it, re-runs made) made re-runs
/// and none repeated it.
pub(super) fn unconfirmed(confirmed: (u32, u32)) -> bool {
    matches!(confirmed, (0, runs) if runs > 0)
}

/// Schedules a violation found free is tried under, at most ([`OracleExecutor::find_schedule`]).
const SCHEDULE_SEARCH: usize = 1_000;

/// Of those, PCT and random-walk seeds tried before the preemptions are enumerated.
const SAMPLED_SCHEDULES: usize = 64;

/// Every schedule of a run of `steps` points with at most two preemptions, fewest first:
/// either thread first, then switched out at step `a`, then at step `b > a`.
fn preemptions(steps: u32) -> impl Iterator<Item = Control> {
    let steps = steps.max(1);
    let none = (0..2).map(|first| Control::Preempt { first, at: [0, 0] });
    let one =
        (1..=steps).flat_map(|a| (0..2).map(move |first| Control::Preempt { first, at: [a, 0] }));
    let two = (1..=steps).flat_map(move |a| {
        (a + 1..=steps)
            .flat_map(move |b| (0..2).map(move |first| Control::Preempt { first, at: [a, b] }))
    });
    none.chain(one).chain(two)
}
