//! What `cargo covcon mutants` finds, as `outcomes.json` and the reports have it: each
//! mutant's [`Outcome`], the unmutated code's [`Baseline`], the [`Score`]s and the whole
//! [`MutantsReport`]. Data only: judging is `judge.rs`'s, rendering `report.rs`'s.

use super::compare;
use oracle::{Mutant, Operator};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// What became of one mutant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Caught,
    Missed,
    Timeout,
    Unviable,
    Skipped,
    /// No test can tell it from the original ([`Mutant::equivalent`] says why): not run,
    /// and left out of the score, as cargo-mutants would have a user mark it.
    Equivalent,
}

impl Status {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Status::Caught => "caught",
            Status::Missed => "missed",
            Status::Timeout => "timeout",
            Status::Unviable => "unviable",
            Status::Skipped => "skipped",
            Status::Equivalent => "equivalent",
        }
    }
}

/// The violation a campaign caught a mutant with.
#[derive(Debug, Clone, Serialize)]
pub struct Caught {
    pub kind: String,
    pub methods: [String; 2],
    pub message: String,
    pub tests_until_found: u64,
    pub seconds_until_found: f64,
    /// Re-runs that failed the same way, of those made.
    pub confirmed: (u32, u32),
}

/// One mutant and its outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    #[serde(flatten)]
    pub mutant: Mutant,
    pub outcome: Status,
    /// Time spent judging it.
    pub seconds: f64,
    /// Tests its campaign ran (not with `--test-cmd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caught_by: Option<Caught>,
    /// Why it is unviable (rustc's message) or skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Pairs of its type that the analysis of the mutated code puts in another group than
    /// the original's (not with `--test-cmd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regrouped: Option<usize>,
    /// The command's output, with `--test-cmd`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<PathBuf>,
    /// The oracle that judged it, when not the run's: `panic`, for a type whose unmutated
    /// code already fails under `results` ([`Baseline::fallback`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oracle: Option<String>,
    /// The types whose campaigns judged it, when not its own: a type covcon cannot test
    /// (a private one) is judged through the types that hold it, one after the other until
    /// one catches it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub through: Option<Vec<String>>,
}

/// The unmutated code, judged first: a type (or the command) that already fails cannot tell
/// a mutant from the bug it has.
#[derive(Debug, Clone, Serialize)]
pub struct Baseline {
    /// A type path, or `--test-cmd`.
    pub of: String,
    pub passed: bool,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// What the `results` oracle showed on the unmutated type (a clock-dependent answer, a
    /// read that is not linearizable by design) when the `panic` oracle then found nothing:
    /// the type's mutants are judged under `panic` instead of skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Under the `results` oracle: the methods whose answers (and `final state`, when it is)
    /// the unmutated type's runs gave in no sequential order, each time as the only
    /// difference left (an `is_full` beside a `force_push` that is not linearizable by
    /// design, or a bug of the type's own: concurrent-queue 2.5.0's `close` lost to a racing
    /// `force_push`), left out of the comparison in its mutants' campaigns, so that the rest
    /// is still compared; with what was seen first. The summary says it may be a bug.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out_because: Option<String>,
}

/// Caught, missed, timeouts of one operator or type, and the score.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Score {
    pub name: String,
    pub caught: usize,
    pub missed: usize,
    pub timeout: usize,
    pub unviable: usize,
    pub skipped: usize,
    pub equivalent: usize,
    /// (caught + timeout) / (caught + missed + timeout), as a percentage; `None` when nothing
    /// was judged. A timeout counts as caught (the tests did not pass), as in PIT.
    pub score: Option<f64>,
}

impl Score {
    pub(super) fn of<'a>(name: &str, outcomes: impl IntoIterator<Item = &'a Outcome>) -> Score {
        let mut s = Score {
            name: name.to_string(),
            ..Score::default()
        };
        for o in outcomes {
            match o.outcome {
                Status::Caught => s.caught += 1,
                Status::Missed => s.missed += 1,
                Status::Timeout => s.timeout += 1,
                Status::Unviable => s.unviable += 1,
                Status::Skipped => s.skipped += 1,
                Status::Equivalent => s.equivalent += 1,
            }
        }
        let judged = s.caught + s.missed + s.timeout;
        s.score = (judged > 0).then(|| 100.0 * (s.caught + s.timeout) as f64 / judged as f64);
        s
    }

    /// The score of each operator that made a mutant not left out as equivalent, in
    /// [`Operator::ALL`]'s order.
    pub(super) fn by_operator(outcomes: &[Outcome]) -> Vec<Score> {
        Operator::ALL
            .iter()
            .map(|op| {
                Score::of(
                    op.as_str(),
                    outcomes.iter().filter(|o| o.mutant.operator == *op),
                )
            })
            .filter(|s| s.caught + s.missed + s.timeout + s.unviable + s.skipped > 0)
            .collect()
    }

    /// The score of each type with a mutant, by path.
    pub(super) fn by_type(outcomes: &[Outcome]) -> Vec<Score> {
        outcomes
            .iter()
            .map(|o| o.mutant.type_path.as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(|t| Score::of(t, outcomes.iter().filter(|o| o.mutant.type_path == t)))
            .collect()
    }
}

#[cfg(test)]
impl Outcome {
    /// `mutant` judged `status`, nothing else known (for tests).
    pub(super) fn bare(mutant: Mutant, status: Status) -> Outcome {
        Outcome {
            mutant,
            outcome: status,
            seconds: 0.0,
            tests: None,
            caught_by: None,
            reason: None,
            regrouped: None,
            log: None,
            oracle: None,
            through: None,
        }
    }
}

/// A mutant of `/repo/ws/src/lib.rs` as `mutants.json` has it (for tests).
#[cfg(test)]
pub(super) fn mutant(operator: Operator, line: u32, diff: String) -> Mutant {
    serde_json::from_value(serde_json::json!({
        "id": 1, "name": "m", "type_path": "k::T", "method": "f", "operator": operator,
        "file": "/repo/ws/src/lib.rs", "line": line, "column": 8, "description": "",
        "diff": diff,
    }))
    .unwrap()
}

/// Everything `outcomes.json` holds.
#[derive(Debug, Clone, Serialize)]
pub struct MutantsReport {
    /// `covcon` (a campaign per mutant) or the `--test-cmd` command.
    pub judge: String,
    pub seed: u64,
    pub budget_s: f64,
    pub elapsed_s: f64,
    pub build_s: f64,
    pub interrupted: bool,
    pub total: Score,
    pub operators: Vec<Score>,
    pub types: Vec<Score>,
    pub baseline: Vec<Baseline>,
    pub outcomes: Vec<Outcome>,
    /// With `--compare CMD`: the command's judgement of the same mutants beside covcon's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare: Option<compare::Comparison>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_score_counts_timeouts_as_caught_and_leaves_out_what_was_not_judged() {
        // Equivalent mutants are not judged either: no test could catch them.
        let outcome =
            |status| Outcome::bare(mutant(Operator::SplitSection, 3, String::new()), status);
        let all = [
            outcome(Status::Caught),
            outcome(Status::Timeout),
            outcome(Status::Missed),
            outcome(Status::Missed),
            outcome(Status::Unviable),
            outcome(Status::Skipped),
            outcome(Status::Equivalent),
        ];
        let s = Score::of("all", &all);
        assert_eq!(
            (
                s.caught,
                s.missed,
                s.timeout,
                s.unviable,
                s.skipped,
                s.equivalent
            ),
            (1, 2, 1, 1, 1, 1)
        );
        assert_eq!(s.score, Some(50.0));
        assert_eq!(Score::of("none", &all[4..]).score, None);
    }
}
