//! Replaying: a saved test case run again ([`replay`], `cargo covcon replay`): concurrently
//! until it fails, its failure confirmed as a campaign's is, then judged against its
//! linearizations.

use super::confirm::rerun;
use super::judge::{describe, kind_of};
use super::{worker_command, OracleExecutor, ViolationKind};
use crate::config::{OracleConfig, OracleError};
use crate::harness::Harness;
use crate::protocol::Outcome;
use crate::results::SequentialOutcomes;
use crate::verdict::{self, Failure, Order, Passes};
use analysis::Model;
use generator::TestCase;
use serde::Serialize;
use std::path::Path;

/// What replaying a saved test case showed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayResult {
    /// Concurrent runs made.
    pub runs: u32,
    /// Runs that failed the way the first failing one did.
    pub failures: u32,
    /// How the first failing run ended (`Passed` when none failed).
    pub outcome: Outcome,
    /// Set when the failure is a thread-safety violation.
    pub violation: Option<ViolationKind>,
    /// The linearization that failed the same way, when the failure is not a violation.
    pub explained_by: Option<Order>,
    /// Sequential runs made for the verdict.
    pub linearizations: u32,
    /// For a panic judged a violation: an order that panicked the same way at another call,
    /// and that call ([`crate::Violation::same_panic_at`]).
    pub same_panic_at: Option<(Order, (u8, u32))>,
}

/// Runs a saved test case again: concurrently up to `config.confirm_runs` times (at least
/// once) until it fails, then the remaining runs count how often the failure repeats, and the
/// failure is judged against its linearizations.
pub fn replay(
    harness: &Harness,
    config: &OracleConfig,
    test: &TestCase,
) -> Result<ReplayResult, OracleError> {
    replay_with_worker(&harness.binary, config, &Model::default(), test)
}

/// [`replay`] on workers started from `program` (see [`OracleExecutor::with_worker`]). With
/// the results oracle on, `model` gives the contracts the campaign judged by (answers that are
/// approximate, calls that hold the object).
pub fn replay_with_worker(
    program: &Path,
    config: &OracleConfig,
    model: &Model,
    test: &TestCase,
) -> Result<ReplayResult, OracleError> {
    let config = OracleConfig {
        jobs: 1,
        ..config.clone()
    };
    let executor = OracleExecutor::start(worker_command(program, &config), &config, model)?;
    Ok(executor.replay(test))
}

impl OracleExecutor {
    /// Replays `test` as [`replay`] does, on this executor's workers.
    pub fn replay(&self, test: &TestCase) -> ReplayResult {
        let runs = self.config.confirm_runs.max(1);
        let mut result = ReplayResult {
            runs: 0,
            failures: 0,
            outcome: Outcome::Passed,
            violation: None,
            explained_by: None,
            linearizations: 0,
            same_panic_at: None,
        };
        let mut outcomes = SequentialOutcomes::new();
        for run in 1..=runs {
            // The first run as saved, the others as the confirmation re-runs it (the saved
            // noise every run left a failure the confirmation repeated 2 times in 20 unseen
            // in 1,100 replays).
            let again = if run == 1 {
                test.clone()
            } else {
                rerun(test, run)
            };
            let response = self.pool.request(&self.concurrent_request(&again));
            result.runs = run;
            let outcome = response.outcome.clone();
            let Some(failure) = Failure::of_run(test, &response) else {
                if outcome != Outcome::Passed {
                    // The setup or prefix failed: nothing concurrent to judge.
                    result.outcome = outcome;
                    return result;
                }
                // With the results oracle on, a passing run may still be a violation.
                if let Some(violation) =
                    self.violation_in(test, response, &mut outcomes, &mut Vec::new(), Passes::All)
                {
                    let (repeats, more) = self.confirm(&violation, &mut outcomes, runs - run);
                    result.runs += more;
                    result.failures = 1 + repeats;
                    result.violation = Some(violation.kind);
                    result.linearizations = violation.linearizations;
                    return result;
                }
                continue;
            };
            let pause_us = verdict::alone_pause(response.elapsed_us);
            let found = describe(test, &failure, response, 0);
            let (repeats, more) = self.confirm(&found, &mut outcomes, runs - run);
            result.runs += more;
            result.failures = 1 + repeats;
            result.outcome = outcome;
            let verdict = verdict::judge(
                test,
                &failure,
                pause_us,
                self.explaining_pass_of(test),
                None,
                |order, pace| self.paced_sequential(test, order, pace).outcome,
            );
            result.linearizations = verdict.tried;
            result.violation = verdict.violation.then(|| kind_of(&failure));
            result.explained_by = verdict.explained_by.map(|(order, _)| order);
            result.same_panic_at = verdict.same_panic_at;
            return result;
        }
        result
    }
}
