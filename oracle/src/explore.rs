//! Bounded exhaustive exploration of a pair (CHESS's preemption bounding, Musuvathi and
//! Qadeer, PLDI 2007): the smallest test of the pair — its prefix, then one call of each
//! method, one per thread — is run under every schedule with at most two preemptions. A
//! schedule is a thread to start and the schedule points at which the running thread is
//! switched out (`Control::Preempt`); which points a run passes is only known by running it,
//! so the schedules are a tree: both threads first without preemption, then every first
//! preemption at a point the unpreempted run passed, then every second one after it at a
//! point the once-preempted run passed. Fewest preemptions first, so a budget cut keeps the
//! simplest schedules.

use crate::protocol::Control;
use generator::{TestCase, Value};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What exploring one pair came to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exploration {
    /// Schedules run.
    pub explored: u32,
    /// Schedules with at most two preemptions over the points the runs passed.
    pub schedules: u32,
    /// Schedule points of the longest run without preemption.
    pub steps: u32,
    /// Runs the schedule did not order from start to end (a thread woken behind the
    /// schedule's back, or control lost to code without points).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unordered: u32,
    pub end: ExplorationEnd,
    /// Smallest tests explored: 1, or 2 when a later test of the pair passed a failing value
    /// the first did not ([`takes_failing_value`]). Written only when 2 (read as 1 when
    /// absent).
    #[serde(default = "one", skip_serializing_if = "is_one_or_less")]
    pub tests: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn one() -> u32 {
    1
}

fn is_one_or_less(n: &u32) -> bool {
    *n <= 1
}

/// How an exploration ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExplorationEnd {
    /// Every schedule ran, each ordered from start to end, and none failed: the pair's
    /// smallest test cannot fail with two preemptions or fewer.
    Complete,
    /// Every schedule ran and none failed, but some runs were not fully ordered by their
    /// schedule, so some interleavings may have been left to chance.
    Unordered,
    /// The budget (runs per pair, or the type's time) ran out first.
    #[default]
    Budget,
    /// A schedule failed, and no sequential order fails the same way: a violation.
    Failed,
    /// Schedules failed, each as a sequential order of the same calls does too (a call that
    /// panics or blocks in some order), and none otherwise: no violation. The exploration
    /// goes on past such a failure (another schedule may fail in a way no order does), but
    /// stops at a deadlock, whose runs each cost a blocked run, and after
    /// [`EXPLAINED_RUNS`] explained failures.
    Explained,
}

impl Exploration {
    /// "explored 120 of 120 schedules (at most 2 preemptions)", and how it ended.
    pub fn describe(&self) -> String {
        let end = match self.end {
            ExplorationEnd::Complete => "none failed",
            ExplorationEnd::Unordered => "none failed, some runs not fully ordered",
            ExplorationEnd::Budget => "budget ran out",
            ExplorationEnd::Failed => "one failed, a violation",
            ExplorationEnd::Explained => "failures only as sequential orders fail too",
        };
        let of_tests = if self.tests > 1 {
            format!(" of {} smallest tests", self.tests)
        } else {
            String::new()
        };
        format!(
            "explored {} of {} schedules{of_tests} (at most 2 preemptions, one call per thread): {end}",
            self.explored, self.schedules
        )
    }

    /// This exploration and a `later` one of another smallest test of the same pair, as one:
    /// runs and schedules added up, and the end that says least about the pair (a failure,
    /// else a budget cut, else explained failures, unordered runs, complete).
    pub(crate) fn and(self, later: Exploration) -> Exploration {
        let rank = |end: ExplorationEnd| match end {
            ExplorationEnd::Failed => 0,
            ExplorationEnd::Budget => 1,
            ExplorationEnd::Explained => 2,
            ExplorationEnd::Unordered => 3,
            ExplorationEnd::Complete => 4,
        };
        let end = if rank(later.end) < rank(self.end) {
            later.end
        } else {
            self.end
        };
        Exploration {
            explored: self.explored + later.explored,
            schedules: self.schedules + later.schedules,
            steps: self.steps.max(later.steps),
            unordered: self.unordered + later.unordered,
            end,
            tests: self.tests.max(1) + later.tests.max(1),
        }
    }
}

/// Whether one of the calls of `test`'s threads passes a failing value: an `Err`, a `None`,
/// or a closure that answers one or `false`. Such a call takes the error path of its method
/// (a failed initialisation rolled back, an entry left out) that a call given a succeeding
/// value never runs: once a pair's smallest test was explored with succeeding values, a
/// later one with a failing value is explored too (once_cell 1.21.3: `wait ∥
/// get_or_try_init(|| Err(..))` fails where `get_or_try_init(|| Ok(..))` cannot).
pub(crate) fn takes_failing_value(test: &TestCase) -> bool {
    fn failing(value: &Value) -> bool {
        match value {
            Value::Err(_) | Value::Option(None) => true,
            Value::Closure(answer) => matches!(**answer, Value::Bool(false)) || failing(answer),
            Value::Option(Some(inner)) => failing(inner),
            Value::List(items) | Value::Tuple(items) => items.iter().any(failing),
            _ => false,
        }
    }
    test.threads
        .iter()
        .flatten()
        .any(|call| call.args.iter().any(failing))
}

/// The pair's smallest test: `test`'s instances, handles and prefix, and only the first call
/// of each thread (the pair's two methods). `None` when a thread has no call.
pub(crate) fn smallest(test: &TestCase) -> Option<TestCase> {
    let first = |calls: &[generator::Call]| calls.first().cloned();
    let threads = [
        vec![first(&test.threads[0])?],
        vec![first(&test.threads[1])?],
    ];
    Some(TestCase {
        threads,
        control: Control::Free,
        ..test.clone()
    })
}

/// Explained failing runs after which an exploration stops: a pair whose smallest test fails
/// in most schedules as a sequential order does too (a call that panics whatever the order)
/// keeps its time for the campaign.
pub(crate) const EXPLAINED_RUNS: u32 = 16;

/// The schedules still to run, and what the runs so far showed.
#[derive(Debug)]
pub(crate) struct Tree {
    queue: VecDeque<Control>,
    /// Most schedules to run.
    limit: u32,
    /// Most schedule points to pass in all: a pair whose calls pass thousands of points (a
    /// `len` that visits every shard) explores a few schedules, not `limit` of them, since
    /// each of its runs costs as much as hundreds of short ones and two preemptions among
    /// thousands of points are a sample, not an enumeration.
    point_limit: u64,
    /// Schedule points the runs so far passed.
    points: u64,
    exploration: Exploration,
    failed: Option<ExplorationEnd>,
    /// Runs that failed as a sequential order does too.
    explained: u32,
}

impl Tree {
    /// The two schedules without preemption; at most `limit` runs in all, and no new run
    /// once they passed `point_limit` schedule points.
    pub(crate) fn new(limit: u32, point_limit: u64) -> Tree {
        Tree {
            queue: (0..2)
                .map(|first| Control::Preempt { first, at: [0, 0] })
                .collect(),
            limit,
            point_limit,
            points: 0,
            exploration: Exploration {
                schedules: 2,
                ..Exploration::default()
            },
            failed: None,
            explained: 0,
        }
    }

    /// Up to `n` schedules to run next (none when done or out of budget). A batch never
    /// mixes levels, so the schedules of a level are known when the next one starts.
    pub(crate) fn next(&mut self, n: usize) -> Vec<Control> {
        if self.failed.is_some() {
            return Vec::new();
        }
        let left = self.limit.saturating_sub(self.exploration.explored) as usize;
        // Runs the points left pay for, at the length of the longest run without preemption.
        let points_left = self.point_limit.saturating_sub(self.points);
        let left = left.min(
            usize::try_from(points_left.div_ceil(u64::from(self.exploration.steps.max(1))))
                .unwrap_or(usize::MAX),
        );
        let level = self.queue.front().map(preemptions);
        let mut batch = Vec::new();
        while batch.len() < n.min(left) {
            match self.queue.front() {
                Some(c) if Some(preemptions(c)) == level => {
                    batch.extend(self.queue.pop_front());
                }
                _ => break,
            }
        }
        batch
    }

    /// A schedule ran, passing `steps` points; `ordered` when its schedule ordered all of it.
    pub(crate) fn ran(&mut self, control: Control, steps: u64, ordered: bool) {
        let steps = u32::try_from(steps).unwrap_or(u32::MAX);
        self.points = self.points.saturating_add(steps.into());
        let e = &mut self.exploration;
        e.explored += 1;
        e.unordered += u32::from(!ordered);
        let Control::Preempt { first, at } = control else {
            return;
        };
        let children: Vec<Control> = match at {
            [0, _] => {
                e.steps = e.steps.max(steps);
                (1..=steps)
                    .map(|a| Control::Preempt { first, at: [a, 0] })
                    .collect()
            }
            [a, 0] => (a + 1..=steps)
                .map(|b| Control::Preempt { first, at: [a, b] })
                .collect(),
            _ => Vec::new(),
        };
        e.schedules = e.schedules.saturating_add(children.len() as u32);
        self.queue.extend(children);
    }

    /// A schedule failed with a violation: the exploration stops there.
    pub(crate) fn failed(&mut self) {
        self.failed = Some(ExplorationEnd::Failed);
    }

    /// A schedule failed as a sequential order does too: the exploration goes on, unless
    /// `stop` (a deadlock) or this was the [`EXPLAINED_RUNS`]th such run.
    pub(crate) fn explained(&mut self, stop: bool) {
        self.explained += 1;
        if stop || self.explained >= EXPLAINED_RUNS {
            self.failed = Some(ExplorationEnd::Explained);
        }
    }

    /// What the exploration came to.
    pub(crate) fn exploration(&self) -> Exploration {
        let e = &self.exploration;
        let end = if let Some(end) = self.failed {
            end
        } else if e.explored < e.schedules {
            ExplorationEnd::Budget
        } else if self.explained > 0 {
            ExplorationEnd::Explained
        } else if e.unordered > 0 {
            ExplorationEnd::Unordered
        } else {
            ExplorationEnd::Complete
        };
        Exploration {
            end,
            tests: 1,
            ..e.clone()
        }
    }
}

fn preemptions(control: &Control) -> usize {
    match control {
        Control::Preempt { at, .. } => at.iter().filter(|&&a| a > 0).count(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the tree to its end with runs of `steps(control)` points each, in batches of
    /// `batch`; answers the exploration and every schedule run, in order.
    fn explore(
        limit: u32,
        batch: usize,
        steps: impl Fn(&Control) -> u64,
    ) -> (Exploration, Vec<String>) {
        let mut tree = Tree::new(limit, u64::MAX);
        let mut ran = Vec::new();
        loop {
            let next = tree.next(batch);
            if next.is_empty() {
                break;
            }
            for control in next {
                let Control::Preempt { first, at } = control else {
                    unreachable!()
                };
                ran.push(format!("{first}:{}.{}", at[0], at[1]));
                tree.ran(control, steps(&control), true);
            }
        }
        (tree.exploration(), ran)
    }

    /// An `Err`, a `None`, or a closure answering one or `false`, anywhere in a call's
    /// arguments, is a failing value; an `Ok` (any other value) and `true` are not.
    #[test]
    fn failing_values_are_errors_nones_and_false_answers() {
        let test_with = |arg: Value| {
            let call = |args| generator::Call::new("m", 0, args);
            TestCase {
                id: 1,
                type_path: "k::T".into(),
                pair: ["m".into(), "m".into()],
                instances: vec![call(vec![])],
                handles: Vec::new(),
                prefix: Vec::new(),
                threads: [vec![call(vec![])], vec![call(vec![Value::Int(1), arg])]],
                noise_seed: 0,
                control: Control::Free,
            }
        };
        let closure = |v: Value| Value::Closure(Box::new(v));
        let failing = [
            Value::Err(Box::new(Value::Int(0))),
            Value::Option(None),
            closure(Value::Err(Box::new(Value::Int(2)))),
            closure(Value::Option(None)),
            closure(Value::Bool(false)),
            Value::List(vec![Value::Int(1), Value::Option(None)]),
        ];
        for value in failing {
            assert!(takes_failing_value(&test_with(value.clone())), "{value:?}");
        }
        let succeeding = [
            Value::Int(0),
            Value::Bool(false),
            Value::Option(Some(Box::new(Value::Int(1)))),
            closure(Value::Str("ab".into())),
            closure(Value::Bool(true)),
        ];
        for value in succeeding {
            assert!(!takes_failing_value(&test_with(value.clone())), "{value:?}");
        }
    }

    /// Two explorations of a pair read as one: runs and schedules added, the end that says
    /// least about the pair.
    #[test]
    fn two_explorations_add_up() {
        let e = |explored, end| Exploration {
            explored,
            schedules: explored + 1,
            steps: explored,
            end,
            ..Exploration::default()
        };
        let both = e(10, ExplorationEnd::Complete).and(e(4, ExplorationEnd::Budget));
        assert_eq!(
            (
                both.explored,
                both.schedules,
                both.steps,
                both.tests,
                both.end
            ),
            (14, 16, 10, 2, ExplorationEnd::Budget)
        );
        assert_eq!(
            e(10, ExplorationEnd::Budget)
                .and(e(4, ExplorationEnd::Failed))
                .end,
            ExplorationEnd::Failed
        );
        assert!(
            both.describe().contains("of 2 smallest tests"),
            "{}",
            both.describe()
        );
        assert!(!e(3, ExplorationEnd::Complete)
            .describe()
            .contains("smallest tests"));
        // In the report: `tests` written only when 2, read as 1 when absent.
        let json = serde_json::to_value(&both).unwrap();
        assert_eq!(json["tests"], 2);
        assert_eq!(serde_json::from_value::<Exploration>(json).unwrap(), both);
        let single = Exploration {
            tests: 1,
            ..e(3, ExplorationEnd::Complete)
        };
        let json = serde_json::to_value(&single).unwrap();
        assert!(json.get("tests").is_none(), "{json}");
        assert_eq!(serde_json::from_value::<Exploration>(json).unwrap(), single);
    }

    #[test]
    fn every_schedule_with_at_most_two_preemptions_runs_once_fewest_first() {
        let (e, ran) = explore(1_000, 4, |_| 3);
        // 2 without preemption, 2 × 3 with one, 2 × (2 + 1 + 0) with two.
        assert_eq!((e.explored, e.schedules, e.steps), (14, 14, 3));
        assert_eq!(e.end, ExplorationEnd::Complete);
        assert_eq!(
            ran.join(" "),
            "0:0.0 1:0.0 0:1.0 0:2.0 0:3.0 1:1.0 1:2.0 1:3.0 0:1.2 0:1.3 0:2.3 1:1.2 1:1.3 1:2.3"
        );
    }

    #[test]
    fn the_second_preemptions_follow_the_points_each_preempted_run_passed() {
        // Preempted at 1, thread 0's run passes 5 points (a lock handed over), else 3.
        let (e, ran) = explore(1_000, 32, |c| match c {
            Control::Preempt {
                first: 0,
                at: [1, 0],
            } => 5,
            _ => 3,
        });
        assert_eq!((e.explored, e.schedules), (16, 16));
        assert!(ran.contains(&"0:1.5".to_string()), "{ran:?}");
        assert!(!ran.contains(&"1:1.5".to_string()), "{ran:?}");
    }

    #[test]
    fn a_budget_cut_keeps_the_simplest_schedules_and_says_so() {
        let (e, ran) = explore(5, 32, |_| 3);
        assert_eq!(
            (e.explored, e.schedules, e.end),
            (5, 11, ExplorationEnd::Budget)
        );
        assert_eq!(ran.join(" "), "0:0.0 1:0.0 0:1.0 0:2.0 0:3.0");
        let mut tree = Tree::new(100, u64::MAX);
        let first = tree.next(8);
        tree.ran(first[0], 3, false);
        tree.ran(first[1], 3, true);
        tree.explained(true);
        assert!(tree.next(8).is_empty());
        assert_eq!(tree.exploration().end, ExplorationEnd::Explained);
        assert_eq!(tree.exploration().unordered, 1);
    }

    /// Long runs explore as many schedules as their points pay for: runs of 1,000 points
    /// under a budget of 4,500 make the two unpreempted runs, then as many of the first
    /// preemptions as the 2,500 points left pay for, and say the budget ended it.
    #[test]
    fn long_runs_explore_as_many_schedules_as_the_point_budget_pays_for() {
        let mut tree = Tree::new(400, 4_500);
        let mut ran = 0;
        loop {
            let next = tree.next(32);
            if next.is_empty() {
                break;
            }
            for control in next {
                tree.ran(control, 1_000, true);
                ran += 1;
            }
        }
        let e = tree.exploration();
        assert_eq!((ran, e.explored, e.end), (5, 5, ExplorationEnd::Budget));
        // Short runs under the same budget are not cut: 14 schedules of 3 points.
        let mut tree = Tree::new(400, 4_500);
        while let Some(&control) = tree.next(1).first() {
            tree.ran(control, 3, true);
        }
        assert_eq!(tree.exploration().end, ExplorationEnd::Complete);
    }

    /// A failure a sequential order explains does not end the exploration (a later schedule
    /// may fail as no order does) until a violation, a deadlock or the cap.
    #[test]
    fn explained_failures_let_the_exploration_go_on_up_to_a_cap() {
        let mut tree = Tree::new(1_000, u64::MAX);
        let first = tree.next(8);
        tree.ran(first[0], 3, true);
        tree.explained(false);
        tree.ran(first[1], 3, true);
        assert_eq!(tree.next(8).len(), 6, "the first preemptions still run");
        tree.failed();
        assert!(tree.next(8).is_empty());
        assert_eq!(tree.exploration().end, ExplorationEnd::Failed);

        // Every schedule explained: the cap ends it (of 32 schedules over 5 points), and
        // says how.
        let (mut tree, mut runs) = (Tree::new(1_000, u64::MAX), 0);
        while let Some(&control) = tree.next(1).first() {
            tree.ran(control, 5, true);
            tree.explained(false);
            runs += 1;
        }
        assert_eq!(runs, EXPLAINED_RUNS);
        assert_eq!(tree.exploration().end, ExplorationEnd::Explained);

        // Explained now and then, to the end of the tree.
        let (mut tree, mut runs) = (Tree::new(1_000, u64::MAX), 0);
        while let Some(&control) = tree.next(1).first() {
            tree.ran(control, 3, true);
            if runs == 3 {
                tree.explained(false);
            }
            runs += 1;
        }
        let e = tree.exploration();
        assert_eq!(
            (e.explored, e.schedules, e.end),
            (14, 14, ExplorationEnd::Explained)
        );
    }
}
