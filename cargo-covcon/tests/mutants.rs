//! `cargo covcon mutants` on the `meter` test crate: the mutants it makes, their outcomes under
//! covcon's campaign and under a hand-written test (`--test-cmd`), the files it writes, and
//! its exit codes.

mod common;

use common::{Run, Sandbox};
use serde_json::Value;

/// The outcomes written to `mutants.out/outcomes.json`, by mutant name.
fn outcomes(sandbox: &Sandbox) -> Vec<(String, String)> {
    let out = sandbox.path("target/covcon/mutants.out");
    let text = std::fs::read_to_string(out.join("outcomes.json")).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                o["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The outcome of the one mutant whose name contains `what`.
fn outcome_of<'a>(all: &'a [(String, String)], what: &str) -> &'a str {
    let found: Vec<&(String, String)> = all.iter().filter(|(n, _)| n.contains(what)).collect();
    assert_eq!(found.len(), 1, "one mutant named like {what:?} in {all:?}");
    &found[0].1
}

fn check_code(run: &Run, code: i32) {
    assert_eq!(
        run.code, code,
        "exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
}

#[test]
fn covcon_catches_the_split_section_the_late_lock_and_the_lost_ticket_and_marks_the_borrowed_split_unviable_and_the_locked_counter_equivalent(
) {
    let sandbox = Sandbox::data("mutants");
    let list = sandbox.covcon(&["mutants", "--list"]);
    check_code(&list, 0);
    let names: Vec<&str> = list.stdout.lines().collect();
    assert_eq!(names.len(), 5, "{}", list.stdout);
    assert!(
        list.stdout.contains(
            "src/lib.rs:30:9: `totals` (line 30) taken after the statement on line 31: it runs unlocked"
        ),
        "{}",
        list.stdout
    );
    assert!(
        list.stdout.contains(
            "src/lib.rs:33:9: split the critical section of `totals` (line 30) before line 33"
        ),
        "{}",
        list.stdout
    );
    assert!(list.stdout.contains("(unviable)"), "{}", list.stdout);
    assert!(
        list.stdout
            .contains("`self.served.fetch_add` done as a load and a store (equivalent)"),
        "{}",
        list.stdout
    );

    // Bounded by tests, not by the machine's speed; the budget is only a safety net.
    let run = sandbox.covcon(&[
        "mutants",
        "--budget",
        "10m",
        "--max-tests",
        "3000",
        "--seed",
        "3",
    ]);
    check_code(&run, 0);
    let all = outcomes(&sandbox);
    assert_eq!(outcome_of(&all, "before line 33"), "caught");
    assert_eq!(outcome_of(&all, "tickets.fetch_add"), "caught");
    // `served` counted before the lock: `served()` sees it ahead of the hits.
    assert_eq!(outcome_of(&all, "taken after the statement"), "caught");
    assert_eq!(outcome_of(&all, "before line 46"), "unviable");
    // Every write of `served` holds the lock: not run, and not in the score.
    assert_eq!(outcome_of(&all, "served.fetch_add"), "equivalent");
    assert!(run.stdout.contains("score 100.0%"), "{}", run.stdout);
    let out = sandbox.path("target/covcon/mutants.out");
    for file in [
        "mutants.json",
        "caught.txt",
        "missed.txt",
        "unviable.txt",
        "equivalent.txt",
        "report.html",
    ] {
        assert!(out.join(file).exists(), "{file} written");
    }
    let equivalent = std::fs::read_to_string(out.join("equivalent.txt")).unwrap();
    assert!(
        equivalent.contains("every write of `self.served` holds `totals`"),
        "the reason: {equivalent}"
    );
    let unviable = std::fs::read_to_string(out.join("unviable.txt")).unwrap();
    assert!(unviable.contains("borrowed"), "rustc's reason: {unviable}");
    // The user's code is untouched: the mutants live in the copy.
    let source = std::fs::read_to_string(sandbox.path("src/lib.rs")).unwrap();
    assert!(!source.contains("covcon_rt"), "{source}");
}

#[test]
fn a_hand_written_test_misses_what_it_never_calls_covcon_catches_it_and_a_failing_baseline_exits_4()
{
    // The meter crate denies warnings: the copy, schema and all, must build when the user's
    // command builds it, also where covcon's rewrite leaves a lint to say something (the
    // sleep below made covcon's leaves `use std::thread` unused).
    let sandbox = Sandbox::data("mutants");
    let lib = std::fs::read_to_string(sandbox.path("src/lib.rs")).unwrap();
    sandbox.write(
        "src/lib.rs",
        &format!("{lib}\nuse std::thread;\n\n/// Waits a moment.\npub fn pause() {{\n    thread::sleep(std::time::Duration::from_millis(1));\n}}\n"),
    );
    let cmd = "cargo test --offline --test concurrent";
    let run = sandbox.covcon(&[
        "mutants",
        "--test-cmd",
        cmd,
        "--operators",
        "rmw_to_load_store",
    ]);
    // The test never takes a ticket: the ticket's lost update is missed, exit 2. The locked
    // counter's mutant is equivalent: no command runs for it.
    check_code(&run, 2);
    let all = outcomes(&sandbox);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(outcome_of(&all, "served.fetch_add"), "equivalent");
    assert_eq!(outcome_of(&all, "tickets.fetch_add"), "missed");
    let missed =
        std::fs::read_to_string(sandbox.path("target/covcon/mutants.out/missed.txt")).unwrap();
    assert!(
        missed.contains("+        { let __covcon_v = self.tickets.load(Ordering::SeqCst); self.tickets.store(__covcon_v.wrapping_add(1), Ordering::SeqCst); __covcon_v }"),
        "the missed mutant's diff: {missed}"
    );
    let text =
        std::fs::read_to_string(sandbox.path("target/covcon/mutants.out/outcomes.json")).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    let log = report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|o| o["log"].as_str())
        .expect("the command's log");
    let log = std::fs::read_to_string(log).unwrap();
    assert!(log.contains("records_from_two_threads"), "{log}");

    // Both judges on the same mutants: covcon catches both; the test never takes a ticket,
    // so the lost ticket is covcon's only (whether the test's real threads hit the split
    // is up to the machine); nothing gets through both, exit 0.
    let run = sandbox.covcon(&[
        "mutants",
        "--compare",
        cmd,
        "--operators",
        "split_section,rmw_to_load_store",
        "--budget",
        "10m",
        "--max-tests",
        "3000",
        "--seed",
        "3",
    ]);
    check_code(&run, 0);
    assert!(
        run.stdout.contains(&format!(
            "compare: covcon and `{cmd}` on the same mutants, 2 judged by both"
        )),
        "{}",
        run.stdout
    );
    let compare =
        std::fs::read_to_string(sandbox.path("target/covcon/mutants.out/compare.txt")).unwrap();
    let (_, only) = compare
        .split_once("caught by covcon only:\n")
        .unwrap_or_else(|| panic!("{compare}"));
    assert!(
        only.lines()
            .take_while(|l| l.starts_with("  "))
            .any(|l| l.contains("`self.tickets.fetch_add`")),
        "{compare}"
    );
    let text =
        std::fs::read_to_string(sandbox.path("target/covcon/mutants.out/outcomes.json")).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        report["compare"]["neither"],
        serde_json::json!([]),
        "{compare}"
    );
    assert_eq!(
        report["compare"]["outcomes"].as_array().map(Vec::len),
        Some(4),
        "the command's judgement of each mutant: {compare}"
    );

    // A test that fails on the code as written cannot judge mutants.
    sandbox.write(
        "tests/broken.rs",
        "#[test]\nfn fails() {\n    panic!(\"always\");\n}\n",
    );
    let run = sandbox.covcon(&[
        "mutants",
        "--test-cmd",
        "cargo test --offline --test broken",
    ]);
    check_code(&run, 4);
    assert!(
        run.stderr.contains("fails on the unmutated code"),
        "{}",
        run.stderr
    );

    // A command that passes, but not within --timeout even once built, would time out every
    // mutant: it is refused after one more run, bounded by that timeout.
    let run = sandbox.covcon(&["mutants", "--test-cmd", "sleep 3", "--timeout", "1s"]);
    check_code(&run, 4);
    assert!(
        run.stderr
            .contains("takes longer than --timeout 1s on the unmutated code, built"),
        "{}",
        run.stderr
    );
}

#[test]
fn in_diff_keeps_the_mutants_on_changed_lines_and_bad_arguments_are_usage_errors() {
    let sandbox = Sandbox::data("mutants");
    let diff = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -55,3 +55,3 @@\n     pub fn ticket(&self) -> u64 {\n-        self.tickets.fetch_add(1, Ordering::Relaxed)\n+        self.tickets.fetch_add(1, Ordering::SeqCst)\n     }\n";
    sandbox.write("change.diff", diff);
    let run = sandbox.covcon(&["mutants", "--list", "--in-diff", "change.diff"]);
    check_code(&run, 0);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    assert!(run.stdout.contains("tickets.fetch_add"), "{}", run.stdout);

    let run = sandbox.covcon(&["mutants", "--operators", "split,swap"]);
    check_code(&run, 1);
    assert!(
        run.stderr.contains("unknown operator `split`"),
        "{}",
        run.stderr
    );
}

/// Three types of one sandbox (one build):
/// - `Gauge`, whose code as written the results oracle already fails (a torn read of two
///   counters by `both`, by design): its mutants are judged under the results oracle with
///   `both`'s answers left out, and the report says so;
/// - `Slots`, a type public in a private module (as concurrent-queue's `Bounded`), which the
///   harness cannot name: its mutant is judged through `Pool`, which holds it;
/// - `Board`, lock-free: a claim in a compare-and-swap retry loop, and a slot published by a
///   flag stored after its value: the retry taken once and the flag stored first are caught.
#[test]
fn mutants_of_a_failing_baseline_of_a_private_type_and_of_lock_free_code_are_judged() {
    let sandbox = Sandbox::data("mutants");
    let source = std::fs::read_to_string(sandbox.path("src/lib.rs")).unwrap();
    sandbox.write("src/lib.rs", &format!("{source}{MORE}"));
    let run = sandbox.covcon(&[
        "mutants",
        "--type",
        "Gauge",
        "--type",
        "Pool",
        "--type",
        "Slots",
        "--type",
        "Board",
        "--type",
        "Tally",
        "--budget",
        "10m",
        "--max-tests",
        "2000",
        "--seed",
        "1",
    ]);
    // Gauge's counters swapped show only in `both`, which is left out: missed, exit 2.
    check_code(&run, 2);
    // `both`'s answers, beside the other thread's `miss_then_hit` only.
    assert!(
        run.stdout
            .lines()
            .any(|l| l.contains("its mutants were judged with both beside ")
                && l.contains("miss_then_hit")
                && l.contains("left out of the comparison")),
        "{}",
        run.stdout
    );
    // And says that what the unmutated type showed may be a bug of its own.
    assert!(
        run.stdout.lines().any(
            |l| l.contains("Gauge answers what no order of its calls gives")
                && l.contains("`cargo covcon --oracle results --type ")
        ),
        "{}",
        run.stdout
    );
    let text =
        std::fs::read_to_string(sandbox.path("target/covcon/mutants.out/outcomes.json")).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    let baseline: Vec<&Value> = report["baseline"].as_array().unwrap().iter().collect();
    let gauge = baseline
        .iter()
        .find(|b| b["of"] == "meter::Gauge")
        .unwrap_or_else(|| panic!("{baseline:?}"));
    assert_eq!(gauge["passed"], true, "{gauge}");
    let left_out = gauge["left_out"].as_array().unwrap();
    assert_eq!(left_out.len(), 1, "{gauge}");
    assert!(
        left_out[0]
            .as_str()
            .is_some_and(|l| l.starts_with("both beside ") && l.contains("miss_then_hit")),
        "{gauge}"
    );
    assert!(
        gauge["left_out_because"]
            .as_str()
            .is_some_and(|f| f.contains("wrong_result")),
        "{gauge}"
    );
    assert!(gauge.get("fallback").is_none(), "{gauge}");
    let outcomes = report["outcomes"].as_array().unwrap();
    let of = |ty: &str| -> Vec<&Value> {
        outcomes
            .iter()
            .filter(|o| o["type_path"].as_str() == Some(ty))
            .collect()
    };
    // Two loads-and-stores, whose lost updates the final state shows, and the second
    // counter's increment made first, which only `both` could show.
    assert_eq!(of("meter::Gauge").len(), 3, "{outcomes:?}");
    for o in of("meter::Gauge") {
        let want = match o["operator"].as_str() {
            Some("publish_early") => "missed",
            _ => "caught",
        };
        assert_eq!(o["outcome"], want, "{o}");
        assert!(o.get("oracle").is_none(), "judged under results: {o}");
    }
    let split = of("meter::slots::Slots");
    assert_eq!(split.len(), 1, "{outcomes:?}");
    assert_eq!(split[0]["outcome"], "caught", "{}", split[0]);
    assert_eq!(
        split[0]["through"],
        serde_json::json!(["meter::Pool"]),
        "{}",
        split[0]
    );
    let caught =
        std::fs::read_to_string(sandbox.path("target/covcon/mutants.out/caught.txt")).unwrap();
    assert!(caught.contains("judged through meter::Pool"), "{caught}");
    let board = of("meter::board::Board");
    for operator in ["retry_once", "publish_early"] {
        let made: Vec<&&Value> = board.iter().filter(|o| o["operator"] == operator).collect();
        assert_eq!(made.len(), 1, "one {operator} mutant of Board: {board:?}");
        assert_eq!(made[0]["outcome"], "caught", "{}", made[0]);
    }
    // A lock of the crate's own with no `try_lock`: the split re-acquires it blocking.
    let tally = of("meter::own::Tally");
    let split: Vec<&&Value> = tally
        .iter()
        .filter(|o| o["operator"] == "split_section")
        .collect();
    assert_eq!(split.len(), 1, "one split of Tally: {tally:?}");
    assert_eq!(split[0]["outcome"], "caught", "{}", split[0]);
    assert!(
        tally.iter().all(|o| o["outcome"] != "unviable"),
        "{tally:?}"
    );
}

/// The types the test above adds to the meter crate.
const MORE: &str = "
/// Misses, then hits, each its own counter; `both` reads them without a lock, so it may see
/// the miss of a `miss_then_hit` and not its hit: approximate by design.
#[derive(Debug, Default)]
pub struct Gauge {
    hits: AtomicU64,
    misses: AtomicU64,
}

impl Gauge {
    pub fn new() -> Gauge {
        Gauge::default()
    }

    pub fn miss_then_hit(&self) {
        self.misses.fetch_add(1, Ordering::SeqCst);
        self.hits.fetch_add(1, Ordering::SeqCst);
    }

    pub fn both(&self) -> (u64, u64) {
        (self.hits.load(Ordering::SeqCst), self.misses.load(Ordering::SeqCst))
    }
}

mod slots {
    use std::sync::Mutex;

    /// Two counts always changed together, in one critical section. Public in a private
    /// module: no path outside the crate names it.
    pub struct Slots {
        state: Mutex<(u64, u64)>,
    }

    impl Slots {
        pub fn new() -> Slots {
            Slots { state: Mutex::new((0, 0)) }
        }

        pub fn put(&self) {
            let mut state = self.state.lock().unwrap();
            state.0 += 1;
            state.1 += 1;
        }

        pub fn check(&self) {
            let state = self.state.lock().unwrap();
            assert_eq!(state.0, state.1, \"a put seen half done\");
        }
    }
}

pub mod board {
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

    /// Up to two values, each in a slot claimed by a compare-and-swap retry loop, written,
    /// then marked ready; a read waits for each claimed slot to be ready.
    #[derive(Default)]
    pub struct Board {
        claimed: AtomicUsize,
        values: [AtomicU64; 2],
        ready: [AtomicBool; 2],
    }

    impl Board {
        pub fn new() -> Board {
            Board::default()
        }

        pub fn post(&self, value: u32) -> bool {
            let mut slot = self.claimed.load(Ordering::Acquire);
            loop {
                if slot >= 2 {
                    return false;
                }
                match self.claimed.compare_exchange(slot, slot + 1, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(now) => slot = now,
                }
            }
            assert_eq!(self.values[slot].load(Ordering::Relaxed), 0, \"slot claimed twice\");
            self.values[slot].store(u64::from(value) + 1, Ordering::Relaxed);
            self.ready[slot].store(true, Ordering::Release);
            true
        }

        pub fn read(&self) -> Vec<u32> {
            let claimed = self.claimed.load(Ordering::Acquire).min(2);
            let mut out: Vec<u32> = (0..claimed)
                .map(|slot| {
                    while !self.ready[slot].load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                    let value = self.values[slot].load(Ordering::Relaxed);
                    assert_ne!(value, 0, \"a ready slot without its value\");
                    (value - 1) as u32
                })
                .collect();
            out.sort_unstable();
            out
        }
    }
}

pub mod own {
    /// A lock of the crate's own, with `lock()` and no `try_lock` (as crossbeam-channel's
    /// `utils::Mutex`).
    pub struct Mutex<T>(std::sync::Mutex<T>);

    impl<T> Mutex<T> {
        pub fn new(value: T) -> Mutex<T> {
            Mutex(std::sync::Mutex::new(value))
        }

        pub fn lock(&self) -> std::sync::MutexGuard<'_, T> {
            self.0.lock().unwrap_or_else(|e| e.into_inner())
        }
    }

    /// Two counts always changed together, under the crate's own lock.
    pub struct Tally {
        counts: Mutex<(u64, u64)>,
    }

    impl Tally {
        pub fn new() -> Tally {
            Tally { counts: Mutex::new((0, 0)) }
        }

        pub fn add(&self) {
            let mut counts = self.counts.lock();
            counts.0 += 1;
            counts.1 += 1;
        }

        pub fn check(&self) {
            let counts = self.counts.lock();
            assert_eq!(counts.0, counts.1, \"an add seen half done\");
        }
    }
}

/// A public pool over the private slots, in one flavour of several (as concurrent-queue's
/// `ConcurrentQueue(Inner)` over its private `Bounded`).
pub struct Pool(Flavor);

enum Flavor {
    Slots(slots::Slots),
}

impl Pool {
    pub fn new() -> Pool {
        Pool(Flavor::Slots(slots::Slots::new()))
    }

    pub fn put(&self) {
        match &self.0 {
            Flavor::Slots(s) => s.put(),
        }
    }

    pub fn check(&self) {
        match &self.0 {
            Flavor::Slots(s) => s.check(),
        }
    }
}
";
