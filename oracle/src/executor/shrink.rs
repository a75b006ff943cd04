//! Shrinking: a confirmed violation's test made smaller (`generator::shrink`), each candidate
//! run and judged as the campaign's runs are, and the smaller test kept only when its re-runs
//! show the violation as the original's did.

use super::{OracleExecutor, Violation, ViolationKind};
use crate::results::SequentialOutcomes;
use crate::verdict::Passes;
use generator::{Executor, TestCase};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl OracleExecutor {
    /// Shrinks the violation's test (the one under `key`; `ordered`: it runs under a schedule,
    /// and a candidate must replay as exactly) and keeps the smaller test, with what its run
    /// showed, when it repeats as the original did ([`Self::shrunk_repeats`]). Candidates are
    /// judged with `passes`, the violation's own; at full speed only, the one kept is judged
    /// with every pass first ([`Self::last_in_full`]).
    pub(super) fn shrink_violation(
        &self,
        violation: &mut Violation,
        config: &generator::ShrinkConfig,
        key: &str,
        ordered: bool,
        passes: Passes,
    ) {
        let (repeats, reruns) = violation.confirmed;
        let mut shrink_config = self.shrink_config(config);
        // The candidates kept, in order, as judged: the last is what the report says of the
        // shrunk test.
        let mut kept: Vec<Violation> = Vec::new();
        // A free panic only a batch of runs repeated (`confirm`) is judged the same way in
        // each candidate: one run of a smaller test would almost never show it again. Each
        // try is then up to a second of runs, too much for the cheap cut to one call a thread.
        let rare = !ordered && repeats == 1 && reruns > self.config.confirm_runs;
        shrink_config.one_call_each &= !rare;
        let elapsed_us = violation.response.elapsed_us;
        let shrunk = generator::shrink(
            &violation.test,
            &shrink_config,
            &mut |candidate: &TestCase| {
                let request = if rare {
                    self.confirm_batch_request(candidate, elapsed_us)
                } else {
                    self.concurrent_request(candidate)
                };
                let response = self.pool.request(&request);
                self.count_runs(&self.stats.shrink_runs, candidate, response.runs.max(1));
                if ordered && !response.replayable() {
                    // A smaller test kept under a schedule must replay as exactly.
                    return false;
                }
                let mut outcomes = SequentialOutcomes::new();
                // A wrong result found here already had every linearization topped up
                // (the results oracle's evidence runs), so what varies between runs of the
                // same calls is left out; one more check, as a confirmation makes, adds
                // runs of the closest order before the candidate is kept.
                let found = self
                    .violation_in(candidate, response, &mut outcomes, &mut Vec::new(), passes)
                    .filter(|found| {
                        self.violation_key(found) == key
                            && (found.kind != ViolationKind::WrongResult
                                || self.still_wrong(found, &mut outcomes))
                    });
                let still = found.is_some();
                kept.extend(found);
                still
            },
        );
        let (shrunk_test, judged) = match passes {
            Passes::All => {
                let judged = kept.pop().filter(|k| k.test == shrunk.shrunk);
                (shrunk.shrunk, judged)
            }
            Passes::FullSpeed => {
                let any_kept = !kept.is_empty();
                match self.last_in_full(kept) {
                    Some(judged) => (judged.test.clone(), Some(judged)),
                    None if any_kept => {
                        // Every smaller test kept was explained by a slower pass (a cut to
                        // one call a thread leaves no step between it and the original to
                        // fall back to): shrink again, each candidate judged with every
                        // pass, so that those are refused on the way down.
                        return self.shrink_violation(violation, config, key, ordered, Passes::All);
                    }
                    None => (violation.test.clone(), None),
                }
            }
        };
        if shrunk_test != violation.test
            && !self.shrunk_repeats(judged.as_ref(), violation.confirmed)
        {
            // Kept on one run, the smaller test does not show the violation as the test
            // it came from does: the files keep that one, which replays.
            self.stats.shrunk_dropped.fetch_add(1, Ordering::Relaxed);
        } else if shrunk_test != violation.test {
            if let Some(judged) = judged {
                if passes == Passes::FullSpeed {
                    // The original's count is of the full-speed pass only; the shrunk test's
                    // is of every pass.
                    violation.linearizations = judged.linearizations;
                }
                violation.original_message =
                    Some(std::mem::replace(&mut violation.message, judged.message));
                violation.location = judged.location;
                violation.results = judged.results;
                violation.same_panic_at = judged.same_panic_at;
            }
            let mut shrunk = shrunk_test;
            if matches!(
                violation.kind,
                ViolationKind::WrongResult | ViolationKind::Crash
            ) {
                // Named by the pair the test was built for, which shrinking may have taken
                // out of it (`get_with_if ∥ invalidate_entries_if` shrunk to two
                // `get_with_if`s): the report and the reproducer name the calls it keeps.
                shrunk.pair = pair_kept(&shrunk);
                violation.methods = shrunk.pair.clone();
                violation.methods.sort();
            }
            violation.shrunk = Some(shrunk);
        }
    }

    /// The last of the candidates `kept` (judged at full speed only, in the order they were
    /// kept) that every pass of the verdict still judges a violation with the same key, judged
    /// so ([`Self::judged_in_full`]); tried from the last back, as a later candidate is made
    /// from the one before it. `None` when none is (the shrinking kept only candidates a slower
    /// pass explains).
    fn last_in_full(&self, kept: Vec<Violation>) -> Option<Violation> {
        kept.into_iter()
            .rev()
            .find_map(|candidate| self.judged_in_full(candidate))
    }

    /// Whether the shrunk test `judged` (the last candidate kept, as judged) shows its violation
    /// again in [`SHRUNK_RUNS`] re-runs as the original did in its confirmation (`confirmed`):
    /// in at least half of them when the original repeated in at least half of its re-runs,
    /// at least once otherwise. A candidate is kept on one run, and a window that only
    /// sometimes opens passes that by chance: sled 0.32.1's `pop_min` race, repeated 20 of 20
    /// times under its schedule, was saved shrunk to a test no replay repeated (0 of 20,
    /// the original 20 of 20). `None` (no judged candidate) keeps the shrunk test.
    fn shrunk_repeats(&self, judged: Option<&Violation>, confirmed: (u32, u32)) -> bool {
        let Some(judged) = judged else {
            return true;
        };
        let mut outcomes = SequentialOutcomes::new();
        let (repeats, made) = self.confirm(judged, &mut outcomes, SHRUNK_RUNS);
        let (original, reruns) = confirmed;
        if original * 2 >= reruns.max(1) {
            repeats * 2 >= made.max(1)
        } else {
            repeats > 0
        }
    }

    /// `config` with its time bound cut to what is left of the current type's time, but never
    /// below [`MIN_SHRINK`]: a violation found late in a type's share is still shrunk a little,
    /// and shrinking (a deadlock's candidates cost a timeout each) no longer eats the time of
    /// the types after it.
    fn shrink_config(&self, config: &generator::ShrinkConfig) -> generator::ShrinkConfig {
        let mut config = config.clone();
        if let Some(deadline) = self.deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            config.time_budget = config.time_budget.min(left.max(MIN_SHRINK));
        }
        config
    }
}

/// The pair a shrunk test still calls: each thread's method of the pair it was built for
/// when the thread still calls it, its first call's method otherwise.
fn pair_kept(test: &TestCase) -> [String; 2] {
    let kept = |t: usize| {
        let calls = &test.threads[t];
        if calls.iter().any(|c| c.method == test.pair[t]) {
            test.pair[t].clone()
        } else {
            calls
                .first()
                .map_or_else(|| test.pair[t].clone(), |c| c.method.clone())
        }
    };
    [kept(0), kept(1)]
}

/// Shrinking time a new violation gets even when its type's time is up.
const MIN_SHRINK: Duration = Duration::from_secs(1);

/// Re-runs of a shrunk test before it replaces the test it came from in the files
/// ([`OracleExecutor::shrunk_repeats`]).
const SHRUNK_RUNS: u32 = 4;

#[cfg(test)]
mod tests {
    use super::super::two_threads;
    use super::*;
    use generator::{Call, Value};

    /// moka 0.9.5's `get_with_if ∥ invalidate_entries_if` shrunk to two `get_with_if`s is
    /// named by them; a thread that still calls its method of the pair keeps it.
    #[test]
    fn a_shrunk_test_is_named_by_the_calls_it_keeps() {
        let call = |m: &str| Call::new(m, 0, vec![Value::Int(3)]);
        let mut test = two_threads(
            "k::Cache",
            ["get_with_if", "invalidate_entries_if"],
            [vec![call("get_with_if")], vec![call("get_with_if")]],
        );
        assert_eq!(pair_kept(&test), ["get_with_if", "get_with_if"]);
        test.threads[1] = vec![call("get"), call("invalidate_entries_if")];
        assert_eq!(pair_kept(&test), ["get_with_if", "invalidate_entries_if"]);
        test.threads[1].clear();
        assert_eq!(pair_kept(&test), ["get_with_if", "invalidate_entries_if"]);
    }
}
