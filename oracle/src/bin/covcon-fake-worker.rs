//! A stand-in harness worker for the runner's tests: it speaks the worker protocol but runs no
//! real code. What a call does is decided by its method name, so a test case is a script:
//!
//! - `ok…` passes; `racy` panics in concurrent runs only; `buggy` panics always;
//! - `lone` panics in concurrent runs, and in a thread's calls run alone with pauses when
//!   it is the thread's only call (a smaller test that only the verdict's last pass explains);
//! - `flaky` panics in every second concurrent run of this worker process; `rare` in its first
//!   and every 50th (a window free runs hit once in thousands);
//! - `seeded` panics in a free concurrent run whose test's noise seed is a multiple of 4 (a
//!   failure some noise shows and other noise does not);
//! - `narrow` panics in a free concurrent run, and in a controlled one only when its schedule
//!   preempts the first thread at point 3 (a window only one schedule of its test hits);
//!   a controlled run answers its schedule with four points per call;
//! - `lock` deadlocks in a concurrent run when the other thread also calls `lock`;
//! - `slow` times out (answers `deadlocked`, not blocked for good) when the run's timeout is
//!   under 500 ms, and passes with a longer one: a run starved of CPU;
//! - `stall` times out (answers `deadlocked`) in the first concurrent run of its test in the
//!   calling process and passes afterwards, as a run starved of CPU on a loaded machine does;
//! - `fickle` panics in every concurrent run while its thread makes more calls after it, and
//!   in a test where it is its thread's last call only in the first concurrent run of that
//!   test (its id and number of calls) in the calling process: a shrunk test that fails once
//!   and never again;
//! - `take` blocks unless a `put` ran before it (in a concurrent run it always blocks);
//! - `abort` aborts the process; `abort_conc` aborts in concurrent runs only;
//!   `exit` calls `process::exit(3)`; `hang` never answers; `touch` writes the file
//!   `covcon-fake-touched` in its working directory, as code that writes a relative path does;
//! - `taint` passes and leaves its process broken, as a double free corrupts a heap without
//!   crashing; `tainted` aborts in a process a `taint` ran in, and passes elsewhere;
//! - a first constructor named `fail` makes the setup fail;
//! - `hit` adds one to a counter and returns it; `lost` does too, except that two `lost`
//!   calls at the same step of a concurrent run both return the same value (a lost update),
//!   in a free run, and in a controlled one only where `narrow` panics; `drift` loses the
//!   same way in the worker's first concurrent run and from its sixth on; `skew` in a free
//!   run whose test's noise seed is a multiple of 4 (a repeated test's k-th run is the test
//!   with `noise_seed + k - 1`, as covcon replays it).
//! - `calibration` answers `Calibration(pid)`, the worker's process id: text that differs
//!   from process to process (a clock calibrated when its process first reads it).
//!   Other calls return `()`; the final state is the counter.
//!
//! A `batch` request is answered one run at a time, each line written as its run ends.
//! Concurrent runs pair call i of thread 0 with call i of thread 1 in the event trace.

use oracle::protocol::{Control, Event, Noise, Outcome, Request, Response, Schedule};
use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut concurrent_runs = 0u64;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let request: Request = match serde_json::from_str(&line) {
            Ok(request) => request,
            Err(e) => {
                eprintln!("fake worker: bad request: {e}");
                std::process::exit(2);
            }
        };
        let responses = match request {
            Request::Ping => vec![response(0, Outcome::Passed, Vec::new())],
            Request::Concurrent {
                test,
                noise,
                repeat,
                timeout_ms,
                capture,
                ..
            } => vec![repeated(
                &test,
                noise,
                repeat,
                timeout_ms,
                capture,
                &mut concurrent_runs,
            )],
            Request::Sequential {
                test, order, noise, ..
            } => vec![sequential(&test, &order, noise.pause_us > 0)],
            Request::Batch {
                tests,
                timeout_ms,
                capture,
            } => {
                // Answered one run at a time, as the real worker does, so an abort in the
                // middle leaves the runs before it answered.
                for run in tests {
                    answer(repeated(
                        &run.test,
                        run.noise,
                        run.repeat,
                        timeout_ms,
                        capture,
                        &mut concurrent_runs,
                    ));
                }
                Vec::new()
            }
        };
        responses.into_iter().for_each(answer);
    }
}

/// Runs `test` up to `repeat` times, up to the first run that does not pass, run k as the test
/// with noise seed `noise_seed + k - 1`, and answers the last; with `capture`, the earlier runs
/// whose results differ from its and each other's go with it, as the real worker sends them.
fn repeated(
    test: &generator::TestCase,
    noise: Noise,
    repeat: u64,
    timeout_ms: u64,
    capture: bool,
    concurrent_runs: &mut u64,
) -> Response {
    let mut others: Vec<Response> = Vec::new();
    for made in 1.. {
        *concurrent_runs += 1;
        let run = generator::TestCase {
            noise_seed: test.noise_seed.wrapping_add(made - 1),
            ..test.clone()
        };
        let mut response = concurrent(&run, noise, *concurrent_runs, timeout_ms);
        response.runs = made;
        let passed = response.outcome == Outcome::Passed;
        if !passed || made >= repeat.max(1) {
            if passed {
                others.retain(|other| !other.answers_like(&response));
            }
            response.others = others;
            return response;
        }
        if capture && !others.iter().any(|other| other.answers_like(&response)) {
            others.push(response);
        }
    }
    unreachable!("the runs end at `repeat`")
}

/// Writes one answer line; exits after a deadlock, as the real worker does after its
/// watchdog fires.
fn answer(response: Response) {
    let deadlocked = matches!(response.outcome, Outcome::Deadlocked { .. });
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &response).unwrap();
    out.write_all(b"\n").unwrap();
    out.flush().unwrap();
    if deadlocked {
        std::process::exit(0);
    }
}

fn concurrent(test: &generator::TestCase, noise: Noise, run: u64, timeout_ms: u64) -> Response {
    let mut answer = concurrent_run(test, noise, run, timeout_ms);
    if !noise.control.is_free() {
        let calls = test.threads.iter().map(Vec::len).sum::<usize>();
        answer.schedule = Some(Schedule {
            seed: noise.seed,
            steps: 4 * calls as u64,
            switches: Vec::new(),
            free: false,
            wakes: 0,
            handoffs: 0,
        });
    }
    answer
}

fn concurrent_run(test: &generator::TestCase, noise: Noise, run: u64, timeout_ms: u64) -> Response {
    if let Some(setup) = setup_failure(test) {
        return response(test.id, setup, Vec::new());
    }
    let in_window = match noise.control {
        Control::Free => true,
        Control::Preempt { at, .. } => at[0] == 3,
        _ => false,
    };
    let mut events = Vec::new();
    let mut clock = 0;
    let mut event = |thread: u8, method: &str, start: bool| {
        clock += 1;
        events.push(Event {
            clock,
            thread,
            type_path: test.type_path.clone(),
            method: method.to_string(),
            start,
        });
    };
    let [a, b] = &test.threads;
    let mut counter = 0u64;
    let mut results: [Vec<Option<String>>; 2] = [Vec::new(), Vec::new()];
    for i in 0..a.len().max(b.len()) {
        let calls = [a.get(i), b.get(i)];
        for (t, call) in calls.iter().enumerate() {
            if let Some(call) = call {
                event(t as u8, &call.method, true);
            }
        }
        let names = calls.map(|c| c.map(|c| c.method.as_str()));
        if names == [Some("lock"), Some("lock")] {
            let inside = names.map(|n| n.map(str::to_string));
            return response(
                test.id,
                Outcome::Deadlocked {
                    inside,
                    blocked_for_good: true,
                    lost_wakeup: None,
                },
                events,
            );
        }
        for (t, name) in names.iter().enumerate() {
            let Some(name) = name else { continue };
            let outcome = match *name {
                "racy" | "buggy" | "overdue" | "lone" => panic(t as u8, i as u32, name),
                "flaky" if run & 1 == 0 => panic(t as u8, i as u32, name),
                "narrow" if in_window => panic(t as u8, i as u32, name),
                "seeded" if noise.control.is_free() && test.noise_seed.is_multiple_of(4) => {
                    panic(t as u8, i as u32, name)
                }
                "rare" if run == 1 || run.is_multiple_of(50) => panic(t as u8, i as u32, name),
                "fickle"
                    if i + 1 < test.threads[t].len()
                        || first_time(&format!(
                            "fickle-{}-{}",
                            test.id,
                            test.threads[0].len() + test.threads[1].len()
                        )) =>
                {
                    panic(t as u8, i as u32, name)
                }
                "take" => Outcome::Deadlocked {
                    inside: [Some("take".into()), None],
                    blocked_for_good: true,
                    lost_wakeup: None,
                },
                "slow" if timeout_ms < 500 => Outcome::Deadlocked {
                    inside: [Some("slow".into()), None],
                    blocked_for_good: false,
                    lost_wakeup: None,
                },
                "stall" if first_stall(test.id) => Outcome::Deadlocked {
                    inside: [Some("stall".into()), None],
                    blocked_for_good: false,
                    lost_wakeup: None,
                },
                _ => misbehave(name, true),
            };
            if outcome != Outcome::Passed {
                return response(test.id, outcome, events);
            }
        }
        let lost = (in_window && names == [Some("lost"), Some("lost")])
            || (names == [Some("drift"), Some("drift")] && (run == 1 || run >= 6))
            || (names == [Some("skew"), Some("skew")]
                && noise.control.is_free()
                && test.noise_seed.is_multiple_of(4));
        if lost {
            counter += 1;
        }
        for (t, name) in names.iter().enumerate() {
            let Some(name) = name else { continue };
            results[t].push(Some(match *name {
                "lost" | "drift" | "skew" if lost => counter.to_string(),
                "hit" | "lost" | "drift" | "skew" => {
                    counter += 1;
                    counter.to_string()
                }
                // A timed acquisition that timed out: the other thread held the lock.
                "busy" => "None".to_string(),
                "calibration" => calibration(),
                _ => "()".to_string(),
            }));
            event(t as u8, name, false);
        }
    }
    let mut answer = response(test.id, Outcome::Passed, events);
    answer.results = results;
    answer.final_state = Some(format!("Counter {{ n: {counter} }}"));
    answer.timed_out = test.threads.iter().flatten().any(|c| c.method == "busy");
    answer
}

/// A sequential run; `paused` when the calls are paused before each (the verdict's last
/// pass, a thread's calls alone).
fn sequential(test: &generator::TestCase, order: &[(u8, u32)], paused: bool) -> Response {
    if let Some(setup) = setup_failure(test) {
        return response(test.id, setup, Vec::new());
    }
    let mut put = false;
    let mut counter = 0u64;
    let [a, b] = &test.threads;
    let mut results = [vec![None; a.len()], vec![None; b.len()]];
    // Each call's start and end, as the instrumented calls record them (a blocked call has
    // no end).
    let mut events = Vec::new();
    let mut event = |thread: u8, method: &str, start: bool| {
        events.push(Event {
            clock: events.len() as u64 + 1,
            thread,
            type_path: test.type_path.clone(),
            method: method.to_string(),
            start,
        });
    };
    for &(t, i) in order {
        let name = test.threads[t as usize][i as usize].method.as_str();
        event(t, name, true);
        let outcome = match name {
            "buggy" => panic(t, i, name),
            // A refill overdue on a clock covcon does not control: one thread that waits
            // between its calls meets it too.
            "overdue" if paused => panic(t, i, name),
            // Met alone, paused, only by a thread that calls nothing else.
            "lone" if paused && test.threads[t as usize].len() == 1 => panic(t, i, name),
            "put" => {
                put = true;
                Outcome::Passed
            }
            "take" if !put => Outcome::Deadlocked {
                inside: [Some("take".into()), None],
                blocked_for_good: true,
                lost_wakeup: None,
            },
            _ => misbehave(name, false),
        };
        if outcome != Outcome::Passed {
            return response(test.id, outcome, events);
        }
        event(t, name, false);
        results[t as usize][i as usize] =
            Some(if matches!(name, "hit" | "lost" | "drift" | "skew") {
                counter += 1;
                counter.to_string()
            } else if name == "busy" {
                // One thread alone always gets the lock.
                "Some(0)".to_string()
            } else if name == "calibration" {
                calibration()
            } else {
                "()".to_string()
            });
    }
    let mut answer = response(test.id, Outcome::Passed, events);
    answer.results = results;
    answer.final_state = Some(format!("Counter {{ n: {counter} }}"));
    answer
}

/// What `calibration` answers: text that differs from one worker process to the next.
fn calibration() -> String {
    format!("Calibration({})", std::process::id())
}

/// The file `touch` writes, relative to the worker's working directory.
const TOUCHED: &str = "covcon-fake-touched";

/// Whether a `taint` ran in this process.
static TAINTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The behaviours that do not depend on the other thread.
fn misbehave(name: &str, concurrent: bool) -> Outcome {
    match name {
        "abort" => std::process::abort(),
        "abort_conc" if concurrent => std::process::abort(),
        "exit" => std::process::exit(3),
        "taint" => {
            TAINTED.store(true, std::sync::atomic::Ordering::Relaxed);
            Outcome::Passed
        }
        "tainted" if TAINTED.load(std::sync::atomic::Ordering::Relaxed) => std::process::abort(),
        "hang" => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        "touch" => {
            std::fs::write(TOUCHED, b"").expect("the worker's directory is writable");
            Outcome::Passed
        }
        _ => Outcome::Passed,
    }
}

fn setup_failure(test: &generator::TestCase) -> Option<Outcome> {
    (test.instances.first()?.method == "fail").then(|| Outcome::SetupFailed {
        message: "constructor returned Err".into(),
    })
}

fn panic(thread: u8, call: u32, method: &str) -> Outcome {
    Outcome::Panicked {
        thread: Some(thread),
        call,
        method: method.to_string(),
        message: format!("{method} went wrong"),
        location: Some("src/lib.rs:7:9".into()),
        also: vec![],
    }
}

fn response(test_id: u64, outcome: Outcome, events: Vec<Event>) -> Response {
    Response {
        events,
        elapsed_us: 1,
        ..Response::new(test_id, outcome)
    }
}

/// Whether this is the first `stall` of test `id` for the process that started this worker
/// (workers are replaced after a deadlock, so the memory is a marker file).
fn first_stall(id: u64) -> bool {
    first_time(&format!("stall-{id}"))
}

/// Whether this is the first time the calling process asks about `tag` (a marker file in the
/// temporary directory, named by the parent's pid, survives a worker's restart).
fn first_time(tag: &str) -> bool {
    let marker = std::env::temp_dir().join(format!(
        "covcon-fake-{tag}-{}",
        std::os::unix::process::parent_id()
    ));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(marker)
        .is_ok()
}
