//! The thread-safety oracle: is a failing concurrent run a violation?
//!
//! A concurrent run that panics, deadlocks or crashes is run again sequentially in every
//! linearization (every interleaving of the two suffixes that keeps each thread's order, after
//! the same prefix, on fresh instances). If one of them fails the same way, the failure is an
//! ordinary bug or expected behaviour (a blocking call with nothing to wait for); if none does,
//! it is a thread-safety violation.

use crate::protocol::Outcome;
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
    },
    Crash {
        message: String,
    },
}

impl Failure {
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
            Outcome::Deadlocked { inside, .. } => Some(Failure::Deadlock {
                inside: inside.clone(),
            }),
            Outcome::Crashed { message } => Some(Failure::Crash {
                message: message.clone(),
            }),
            Outcome::Passed
            | Outcome::Panicked { thread: None, .. }
            | Outcome::SetupFailed { .. } => None,
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
    /// No linearization failed the same way.
    pub violation: bool,
    /// Sequential runs made.
    pub tried: u32,
    /// The linearization that failed the same way, and how, when there is one.
    pub explained_by: Option<(Order, Outcome)>,
}

/// Judges `failure` of `test` by running linearizations with `run` until one repeats it.
pub(crate) fn judge(
    test: &TestCase,
    failure: &Failure,
    mut run: impl FnMut(&[(u8, u32)]) -> Outcome,
) -> Verdict {
    let mut tried = 0;
    for order in orders_to_try(test, failure) {
        let outcome = run(&order);
        tried += 1;
        if failure.is_repeated_by(&outcome) {
            return Verdict {
                violation: false,
                tried,
                explained_by: Some((order, outcome)),
            };
        }
    }
    Verdict {
        violation: true,
        tried,
        explained_by: None,
    }
}

/// Most linearizations enumerated for one failure; with the generator's suffixes of at most
/// five calls there are at most 252.
const MAX_ORDERS: usize = 5_000;

/// The linearizations worth running for `failure`. For a panic at call c of thread t, a
/// sequential run stops at the first panic, so only the part up to (t, c) matters: orders
/// are cut there and duplicates dropped.
fn orders_to_try(test: &TestCase, failure: &Failure) -> Vec<Order> {
    let lens = [test.threads[0].len(), test.threads[1].len()];
    let all = linearizations(lens, MAX_ORDERS);
    let Failure::Panic {
        thread, call, also, ..
    } = failure
    else {
        return all;
    };
    let targets: Vec<(u8, u32)> = std::iter::once((*thread, *call))
        .chain(also.iter().map(|(t, c, ..)| (*t, *c)))
        .collect();
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
fn same_message(a: &str, b: &str) -> bool {
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
        };
        TestCase {
            id: 1,
            type_path: "k::T".into(),
            pair: ["a".into(), "b".into()],
            instances: vec![call("new")],
            prefix: vec![],
            threads: [
                (0..lens[0]).map(|_| call("a")).collect(),
                (0..lens[1]).map(|_| call("b")).collect(),
            ],
            noise_seed: 0,
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

    /// Judges `concurrent` against sequential runs answered by `sequential`, and renders the
    /// verdict with the orders that were run.
    fn check_verdict(
        lens: [usize; 2],
        concurrent: Outcome,
        sequential: impl Fn(&[(u8, u32)]) -> Outcome,
        expect: &str,
    ) {
        let failure = Failure::of(&concurrent).expect("a failing outcome");
        let mut ran = Vec::new();
        let verdict = judge(&test_case(lens), &failure, |order| {
            ran.push(order_text(order));
            sequential(order)
        });
        let got = format!(
            "violation={} tried={} ran=[{}]",
            verdict.violation,
            verdict.tried,
            ran.join(" | ")
        );
        assert_eq!(got, expect);
    }

    #[test]
    fn a_panic_no_linearization_repeats_is_a_violation() {
        check_verdict(
            [1, 1],
            panic_at(1, 0, "boom"),
            |_| Outcome::Passed,
            "violation=true tried=2 ran=[a0 b0 | b0]",
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
            "violation=false tried=1 ran=[a0 b0]",
        );
    }

    #[test]
    fn a_panic_with_another_message_or_at_another_call_does_not_explain() {
        check_verdict(
            [2, 1],
            panic_at(0, 1, "boom"),
            |order| match order.len() {
                2 => panic_at(0, 0, "boom"),
                _ => panic_at(0, 1, "other"),
            },
            "violation=true tried=3 ran=[a0 a1 | a0 b0 a1 | b0 a0 a1]",
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
        let mut both = first_by_clock.clone();
        if let Outcome::Panicked { also, .. } = &mut both {
            also.push(panic_at(1, 0, "cannot sample empty range"));
        }
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
            "violation=true tried=4 ran=[a0 a1 a2 | a0 a1 b0 a2 | a0 b0 a1 a2 | b0 a0 a1 a2]",
        );
        check_verdict(
            [3, 1],
            both,
            sequential,
            "violation=false tried=3 ran=[a0 a1 a2 | a0 a1 b0 | a0 b0]",
        );
    }

    #[test]
    fn a_deadlock_is_explained_by_a_linearization_that_blocks() {
        check_verdict(
            [1, 1],
            Outcome::Deadlocked {
                inside: [Some("take".into()), Some("put".into())],
                blocked_for_good: true,
            },
            |order| {
                if order[0] == (0, 0) {
                    Outcome::Deadlocked {
                        inside: [Some("take".into()), None],
                        blocked_for_good: true,
                    }
                } else {
                    Outcome::Passed
                }
            },
            "violation=false tried=1 ran=[a0 b0]",
        );
    }

    #[test]
    fn a_deadlock_no_linearization_blocks_is_a_violation_even_if_one_panics() {
        check_verdict(
            [1, 1],
            Outcome::Deadlocked {
                inside: [Some("ab".into()), Some("ba".into())],
                blocked_for_good: true,
            },
            |_| panic_at(0, 0, "poisoned"),
            "violation=true tried=2 ran=[a0 b0 | b0 a0]",
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
            "violation=false tried=2 ran=[a0 b0 | b0 a0]",
        );
    }

    #[test]
    fn a_deadlock_is_explained_by_a_linearization_that_kills_the_worker() {
        check_verdict(
            [1, 1],
            Outcome::Deadlocked {
                inside: [Some("spin".into()), None],
                blocked_for_good: false,
            },
            |_| Outcome::Crashed {
                message: "stopped answering".into(),
            },
            "violation=false tried=1 ran=[a0 b0]",
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
