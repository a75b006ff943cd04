//! Trace analysis: which methods of the type under test ran concurrently in one run (CovCon
//! Algorithm 1), and which method the other thread was in when a call failed.

use crate::protocol::Event;
use std::collections::HashMap;

/// The concurrent method pairs covered by a run's events, counting only methods of
/// `type_path`: one entry per time a method started while a method of another thread was
/// running (so a pair may appear several times, as Algorithm 1 counts it), each pair with the
/// smaller name first, sorted. A worker computes the same for each concurrent run
/// ([`Response::covered`](crate::protocol::Response::covered)).
pub fn covered_pairs(events: &[Event], type_path: &str) -> Vec<[String; 2]> {
    let mut running: HashMap<u8, Vec<&str>> = HashMap::new();
    let mut pairs = Vec::new();
    for event in in_clock_order(events, type_path) {
        if event.start {
            for (thread, stack) in &running {
                if *thread == event.thread {
                    continue;
                }
                for other in stack {
                    pairs.push(sorted_pair(&event.method, other));
                }
            }
            running.entry(event.thread).or_default().push(&event.method);
        } else if let Some(stack) = running.get_mut(&event.thread) {
            // An end without a start (a trace cut short) is ignored rather than trusted.
            stack.pop();
        }
    }
    pairs.sort();
    pairs
}

/// The top-level method another suffix thread ran while `thread`'s top-level call of
/// `method` was running (the last such call, since a failing call ends its thread's suffix).
pub(crate) fn concurrent_partner(
    events: &[Event],
    type_path: &str,
    thread: u8,
    method: &str,
) -> Option<String> {
    let calls = top_level_calls(&in_clock_order(events, type_path));
    let (_, start, end) = calls
        .iter()
        .filter(|(t, _, _)| t.thread == thread && t.method == method)
        .map(|(t, start, end)| (t, *start, *end))
        .next_back()?;
    calls
        .iter()
        .filter(|(t, _, _)| t.thread != thread && t.thread < 2)
        .find(|(_, s, e)| *s < end && start < *e)
        .map(|(t, _, _)| t.method.clone())
}

/// The events of `type_path`, sorted by clock.
fn in_clock_order<'e>(events: &'e [Event], type_path: &str) -> Vec<&'e Event> {
    let mut ours: Vec<&Event> = events.iter().filter(|e| e.type_path == type_path).collect();
    ours.sort_by_key(|e| e.clock);
    ours
}

/// Each outermost call as (its start event, start clock, end clock); a call still running at
/// the end of the trace ends at `u64::MAX`.
pub(crate) fn top_level_calls<'e>(events: &[&'e Event]) -> Vec<(&'e Event, u64, u64)> {
    let mut depth: HashMap<u8, (usize, usize)> = HashMap::new();
    let mut calls: Vec<(&Event, u64, u64)> = Vec::new();
    for event in events {
        let (level, open) = depth.entry(event.thread).or_insert((0, usize::MAX));
        if event.start {
            if *level == 0 {
                *open = calls.len();
                calls.push((event, event.clock, u64::MAX));
            }
            *level += 1;
        } else if *level > 0 {
            *level -= 1;
            if *level == 0 {
                calls[*open].2 = event.clock;
            }
        }
    }
    calls
}

fn sorted_pair(a: &str, b: &str) -> [String; 2] {
    if a <= b {
        [a.to_string(), b.to_string()]
    } else {
        [b.to_string(), a.to_string()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TY: &str = "k::T";

    /// Events written as `"0+put 1+get 0-put 1-get"`: thread, `+` start or `-` end, method;
    /// a method named `other.x` belongs to another type.
    fn events(trace: &str) -> Vec<Event> {
        trace
            .split_whitespace()
            .enumerate()
            .map(|(clock, word)| {
                let thread = word[..1].parse().unwrap();
                let method = &word[2..];
                let (type_path, method) = match method.strip_prefix("other.") {
                    Some(m) => ("k::Other", m),
                    None => (TY, method),
                };
                Event {
                    clock: clock as u64 + 1,
                    thread,
                    type_path: type_path.to_string(),
                    method: method.to_string(),
                    start: &word[1..2] == "+",
                }
            })
            .collect()
    }

    fn check(trace: &str, expect: &[[&str; 2]]) {
        let got = covered_pairs(&events(trace), TY);
        let want: Vec<[String; 2]> = expect
            .iter()
            .map(|[a, b]| [a.to_string(), b.to_string()])
            .collect();
        assert_eq!(got, want, "trace {trace}");
    }

    #[test]
    fn overlapping_calls_on_two_threads_cover_their_pair() {
        check("0+put 1+get 0-put 1-get", &[["get", "put"]]);
    }

    #[test]
    fn calls_one_after_another_cover_nothing() {
        check("0+put 0-put 1+get 1-get", &[]);
    }

    #[test]
    fn the_prefix_thread_never_overlaps_the_suffixes() {
        check("2+put 2-put 0+get 0-get 1+len 1-len", &[]);
    }

    #[test]
    fn an_indirect_call_inside_a_method_counts_too() {
        check(
            "0+m3 0+m4 1+m1 0-m4 0-m3 1-m1",
            &[["m1", "m3"], ["m1", "m4"]],
        );
    }

    #[test]
    fn each_overlapping_start_counts_once_more() {
        check(
            "0+put 1+get 1-get 1+get 1-get 0-put",
            &[["get", "put"], ["get", "put"]],
        );
    }

    #[test]
    fn a_method_overlapping_itself_is_a_self_pair() {
        check("0+put 1+put 1-put 0-put", &[["put", "put"]]);
    }

    #[test]
    fn methods_of_other_types_are_left_out() {
        check("0+put 1+other.get 0-put 1-other.get", &[]);
    }

    #[test]
    fn an_end_without_a_start_is_ignored() {
        check("0-put 0+put 1+get 1-get 0-put", &[["get", "put"]]);
    }

    #[test]
    fn the_partner_is_the_other_threads_call_overlapping_the_failing_one() {
        let trace = events("0+put 0-put 0+get 1+clear 1-clear 0-get 1+len 1-len");
        assert_eq!(
            concurrent_partner(&trace, TY, 0, "get").as_deref(),
            Some("clear")
        );
        assert_eq!(concurrent_partner(&trace, TY, 1, "len"), None);
        assert_eq!(concurrent_partner(&trace, TY, 0, "missing"), None);
    }

    #[test]
    fn a_call_still_running_at_the_end_of_the_trace_overlaps_what_comes_after() {
        let trace = events("0+take 1+put 1-put");
        assert_eq!(
            concurrent_partner(&trace, TY, 0, "take").as_deref(),
            Some("put")
        );
    }
}
