//! The results oracle on the bundled fixtures, through the real binary on a copy of
//! `fixtures/` (fixed seed, small budgets, only the types concerned):
//!
//! - the counter whose `hit()` loads then stores is reported as a wrong result under
//!   `--oracle results` and not at all under `--oracle panic`, and its shrunk reproducer
//!   fails when run as a `#[test]` of the uninstrumented crate (alone: see [`LOAD`]);
//! - its correct twin is never reported;
//! - types whose methods return fresh random ids or iterate a `HashMap` raise no false alarm;
//! - a sharded set whose `len` is documented approximate is never reported, and without the
//!   doc sentence it is.

mod common;

use assert_cmd::Command;
use common::{copy_dir, fixtures_dir};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::RwLock;
use tempfile::TempDir;

/// What this file's tests load the machine with. Campaigns share it (they run side by side);
/// running a reproducer takes it alone. A reproducer runs on the real threads of the
/// uninstrumented crate, where a lost update's window is a few instructions wide: on a machine
/// whose two cores ran this file's other campaigns, one did not fail within its minute in CI.
/// Alone, or with one core kept busy, it failed within 18 s in each of twenty runs
/// (docs/benchmarks-history.md).
static LOAD: RwLock<()> = RwLock::new(());

const SEED: &str = "1";

/// A copy of the fixtures workspace in a temporary directory, with its own target dir.
struct Copy {
    dir: TempDir,
}

impl Copy {
    fn new() -> Copy {
        let dir = TempDir::new().unwrap();
        copy_dir(&fixtures_dir(), &dir.path().join("fixtures"));
        Copy { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("fixtures")
    }

    fn target(&self) -> PathBuf {
        self.dir.path().join("target")
    }

    /// Runs a campaign over `types` of `package` with `oracle` and answers its report. Every
    /// run of one copy writes to the same `out/`, so a second run reuses the harness.
    fn campaign(&self, packages: &[&str], types: &[&str], oracle: &str, max_tests: &str) -> Value {
        self.campaign_args(packages, types, oracle, max_tests, "10m", &[])
    }

    /// `cargo covcon replay FILE --runs RUNS`, from the copy's directory: its stdout.
    fn replay(&self, file: &str, runs: &str) -> String {
        let output = {
            let _sharing = LOAD.read().unwrap_or_else(|e| e.into_inner());
            Command::new(env!("CARGO_BIN_EXE_cargo-covcon"))
                .args(["covcon", "replay", file, "--runs", runs])
                .current_dir(self.dir.path())
                .env("CARGO_TARGET_DIR", self.target())
                .env("NO_COLOR", "1")
                .output()
                .unwrap()
        };
        String::from_utf8_lossy(&output.stdout).to_string()
    }

    /// [`Copy::campaign`] with a time budget of its own (a safety net, set well above what
    /// `max_tests` takes, so that the tests bound the campaign even on a loaded machine) and
    /// more arguments (`--keep-going`).
    fn campaign_args(
        &self,
        packages: &[&str],
        types: &[&str],
        oracle: &str,
        max_tests: &str,
        budget: &str,
        extra: &[&str],
    ) -> Value {
        let out = self.dir.path().join("out");
        let mut command = Command::new(env!("CARGO_BIN_EXE_cargo-covcon"));
        command
            .arg("covcon")
            .arg("--manifest-path")
            .arg(self.root().join("Cargo.toml"))
            .args(["--oracle", oracle])
            .args(["--seed", SEED, "--max-tests", max_tests])
            .args(["--time-budget", budget, "-q"])
            .args(extra)
            .arg("--out")
            .arg(&out)
            .current_dir(self.dir.path())
            .env("CARGO_TARGET_DIR", self.target())
            .env_remove("GITHUB_ACTIONS")
            .env_remove("COVCON_SEED")
            .env("NO_COLOR", "1");
        for package in packages {
            command.args(["-p", package]);
        }
        for ty in types {
            command.args(["--type", ty]);
        }
        let output = {
            let _sharing = LOAD.read().unwrap_or_else(|e| e.into_inner());
            command.output().unwrap()
        };
        let report = std::fs::read_to_string(out.join("report.json")).unwrap_or_else(|e| {
            panic!(
                "no report ({e}); stderr:\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
        serde_json::from_str(&report).unwrap()
    }
}

/// One line per type of the report: the kinds of its violations, `nothing`, or `untested`.
fn outcomes(report: &Value) -> String {
    let mut lines = Vec::new();
    for t in report["types"].as_array().unwrap() {
        let mut kinds: Vec<&str> = t["violations"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| v["kind"].as_str().unwrap())
            .collect();
        kinds.sort();
        kinds.dedup();
        let outcome = if !kinds.is_empty() {
            kinds.join(", ")
        } else if t["tests_run"].as_u64().unwrap_or(0) == 0 && t["untested"].is_string() {
            "untested".to_string()
        } else {
            "nothing".to_string()
        };
        lines.push(format!("{}: {outcome}", t["path"].as_str().unwrap()));
    }
    lines.sort();
    lines.join("\n")
}

fn check(report: &Value, expect: &str) {
    assert_eq!(outcomes(report), expect, "report: {report:#}");
}

/// Calls in a test case (instances, prefix and both threads).
fn calls(test: &Value) -> usize {
    let len = |v: &Value| v.as_array().map_or(0, Vec::len);
    len(&test["instances"])
        + len(&test["prefix"])
        + len(&test["threads"][0])
        + len(&test["threads"][1])
}

#[test]
fn a_lost_update_is_a_wrong_result_under_the_results_oracle_only_and_its_twin_is_never_reported() {
    let copy = Copy::new();
    let packages = ["rusty", "twins"];
    let types = ["rusty::hit_counter::HitCounter", "twins::counter::Counter"];
    // The twin holds one lock in every method, so the analysis may leave no pair of it worth
    // running together: then it is untested, which is not a report either. The campaign goes
    // on after the first violation, for one of two hits (below).
    let keep_going = ["--keep-going"];
    let results = copy.campaign_args(&packages, &types, "results", "300", "10m", &keep_going);
    let twin = |outcome: &str| format!("twins::counter::Counter: {outcome}");
    let twin_untested = outcomes(&results).ends_with(&twin("untested"));
    let twin_line = twin(if twin_untested { "untested" } else { "nothing" });
    check(
        &results,
        &format!("rusty::hit_counter::HitCounter: wrong_result\n{twin_line}"),
    );
    let panic = copy.campaign(&packages, &types, "panic", "300");
    check(
        &panic,
        &format!("rusty::hit_counter::HitCounter: nothing\n{twin_line}"),
    );

    // The files hold the shrunk test, no larger than the original, and its reproducer fails
    // as a `#[test]` of the uninstrumented crate: that of a lost update of two `hit`s (or
    // `add_bytes`, which hits), whose window the copy widens below. A lost `reset` (`[hit,
    // reset] ∥ [reset, hit]` ending with 2 hits, bc's short test) needs a `hit` to load after
    // the other thread's store and store after its `reset`, which that window does not make
    // likely natively.
    let counter = results["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "rusty::hit_counter::HitCounter")
        .unwrap();
    let violation = counter["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| !v["test"].to_string().contains("\"reset\""))
        .unwrap_or_else(|| panic!("no violation without a reset: {counter:#}"));
    let mut written: Value = serde_json::from_str(
        &std::fs::read_to_string(violation["replay"].as_str().unwrap()).unwrap(),
    )
    .unwrap();
    // The file is the report's test plus the workspace it ran in and the types its harness
    // instrumented (what `replay` reads).
    let instrumented = written.as_object_mut().unwrap().remove("harness_types");
    assert_eq!(instrumented, Some(serde_json::json!(types)));
    // And the oracle that judged it, which `replay` judges it by.
    let judged_by = written.as_object_mut().unwrap().remove("oracle");
    assert_eq!(judged_by, Some(serde_json::json!("results")));
    let replay = copy.replay(violation["replay"].as_str().unwrap(), "300");
    assert!(
        replay.contains("concurrent runs failed") && !replay.contains(" 0 of "),
        "{replay}"
    );
    assert!(replay.contains("violation (wrong_result)"), "{replay}");
    let ran_in = written.as_object_mut().unwrap().remove("workspace_root");
    let ran_in = PathBuf::from(ran_in.as_ref().and_then(Value::as_str).unwrap());
    assert_eq!(
        ran_in.canonicalize().unwrap(),
        copy.root().canonicalize().unwrap()
    );
    assert_eq!(written, violation["test"]);
    if let Some(original) = violation.get("original_test").filter(|o| !o.is_null()) {
        assert!(calls(&written) < calls(original), "{written:#}");
        // What the report says is the shrunk test's run, judged again: every call its
        // message names (`t2.3`, `thread 2 call 3`) is a call of the test shown.
        assert!(violation["original_message"].is_string(), "{violation:#}");
        let message = violation["message"].as_str().unwrap();
        let message = message.replace("thread ", "t").replace(" call ", ".");
        for word in message.split(|c: char| c.is_whitespace() || c == ':') {
            let Some((t, i)) = word.strip_prefix('t').and_then(|w| w.split_once('.')) else {
                continue;
            };
            let (Ok(t), Ok(i)) = (t.parse::<usize>(), i.parse::<usize>()) else {
                continue;
            };
            let shown = written["threads"][t - 1].as_array().map_or(0, Vec::len);
            assert!(
                i <= shown,
                "{word} is not a call of the test shown: {violation:#}"
            );
        }
    }
    let source = std::fs::read_to_string(violation["reproducer"].as_str().unwrap()).unwrap();
    assert!(source.contains("const ALLOWED"), "{source}");
    // The uninstrumented `hit` loses an update only if the other thread runs between its
    // `load` and its `store`, a few instructions apart: with the other core busy the two
    // threads seldom run at once and the reproducer once went its whole minute without a
    // failure (in CI). How often reproducers of such windows fail natively is a measure
    // (scripts/check-reproducers.sh), not this test's claim; its claim is that the reproducer
    // captures the results, compares them with the allowed outcomes and fails on a lost
    // update. So the copy's `hit` sleeps 200 µs between the two, which makes the race show
    // in most runs whether the threads share a core or not. (A `yield_now` there was not
    // enough with both cores taken by processes of a higher priority: the reproducer went its
    // minute without a failure, session 40.)
    let hit_counter = copy.root().join("rusty/src/hit_counter.rs");
    let code = std::fs::read_to_string(&hit_counter).unwrap();
    let racy = "let n = self.hits.load(Ordering::Relaxed);\n";
    assert!(code.contains(racy), "{code}");
    let widened = code.replace(
        racy,
        &format!("{racy}std::thread::sleep(std::time::Duration::from_micros(200));\n"),
    );
    std::fs::write(&hit_counter, widened).unwrap();
    let tests = copy.root().join("rusty/tests");
    std::fs::write(tests.join("covcon_wrong_result.rs"), &source).unwrap();
    let cargo_test = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO"))
            .args(["test", "--release", "-q", "-p", "rusty"])
            .args(["--test", "covcon_wrong_result"])
            .args(extra)
            .current_dir(copy.root())
            .env("CARGO_TARGET_DIR", copy.target())
            .output()
            .unwrap()
    };
    let build = cargo_test(&["--no-run"]);
    assert!(
        build.status.success(),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let run = {
        let _alone = LOAD.write().unwrap_or_else(|e| e.into_inner());
        cargo_test(&[])
    };
    let output =
        String::from_utf8_lossy(&run.stdout).to_string() + &String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "the reproducer passed:\n{output}");
    assert!(output.contains("wrong result in run"), "{output}");
}

/// A `close` lost to a racing `force_push` that stores the word it read instead of
/// compare-exchanging it (concurrent-queue 2.5.0's, found on published code in session 19):
/// a wrong result under the results oracle; its twin, a compare-exchange, never.
#[test]
fn a_close_lost_to_a_racing_store_is_a_wrong_result_and_its_twin_is_never_reported() {
    let copy = Copy::new();
    let types = [
        "rusty::closable_ring::ClosableRing",
        "twins::closable_ring::ClosableRing",
    ];
    let report = copy.campaign(&["rusty", "twins"], &types, "results", "300");
    check(
        &report,
        "rusty::closable_ring::ClosableRing: wrong_result\ntwins::closable_ring::ClosableRing: nothing",
    );
}

/// The one-slot twin under the results oracle: until session 44 its `put` gave its value back
/// beside another `put` writing, and a `take` then found the slot empty, which no order gives
/// (reported at seeds 1–3 within 16 to 88 tests); a `put` now waits for the write.
#[test]
fn a_slot_whose_put_waits_for_another_write_is_never_reported() {
    let copy = Copy::new();
    let report = copy.campaign(&["twins"], &["twins::one_slot::OneSlot"], "results", "300");
    check(&report, "twins::one_slot::OneSlot: nothing");
}

/// A lost update shown only to a closure: `with_tally` hands the tally to the closure covcon
/// passes, and nothing else shows it. The call answers what its closure saw of its argument
/// (`true saw (1)`), so `add ∥ add` then `with_tally` is a wrong result; its twin never.
#[test]
fn a_lost_update_only_a_closure_is_handed_is_a_wrong_result_and_its_twin_is_never_reported() {
    let copy = Copy::new();
    let types = [
        "rusty::tally_book::TallyBook",
        "twins::tally_book::TallyBook",
    ];
    // Found within 6 to 426 tests at seeds 1–30 (median about 120); the twin runs them all.
    let report = copy.campaign(&["rusty", "twins"], &types, "results", "2000");
    check(
        &report,
        "rusty::tally_book::TallyBook: wrong_result\ntwins::tally_book::TallyBook: nothing",
    );
    let book = report["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "rusty::tally_book::TallyBook")
        .unwrap();
    let message = book["violations"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains(" saw ("),
        "what the closure saw: {message}"
    );
}

/// Also answers by contention: a spin lock's own `try_lock` and `is_locked` beside the other
/// thread's guard (`Method::holds`), and a `try_add` whose `try_lock` found the lock held
/// (`covcon_rt::attempt`). Each was reported as a wrong result within 10 tests before.
/// Also a stack whose derived `Debug` shows a garbage bin of the crate's own (a thread-safe
/// type of it), whose count of entries that waited for a reader an overlap of `peek` and
/// `pop` raises: compared inside the stack's text, it was reported at this seed after 44
/// tests (`peek ∥ pop`, final state `waited: 1` where every order leaves 0).
#[test]
fn random_ids_map_order_housekeeping_contention_and_a_helpers_state_raise_no_false_alarm() {
    let copy = Copy::new();
    let types = [
        "nondet::ticket_machine::TicketMachine",
        "nondet::tag_index::TagIndex",
        "nondet::swept_cache::SweptCache",
        "nondet::spin_lock::SpinLock",
        "nondet::tally::Tally",
        "nondet::deferred_stack::DeferredStack",
        "nondet::deferred_stack::Bin",
    ];
    let report = copy.campaign(&["nondet"], &types, "results", "400");
    check(
        &report,
        "nondet::deferred_stack::Bin: nothing\nnondet::deferred_stack::DeferredStack: nothing\n\
         nondet::spin_lock::SpinLock: nothing\nnondet::swept_cache::SweptCache: nothing\n\
         nondet::tag_index::TagIndex: nothing\nnondet::tally::Tally: nothing\n\
         nondet::ticket_machine::TicketMachine: nothing",
    );
    for t in report["types"].as_array().unwrap() {
        assert!(t["tests_run"].as_u64().unwrap() > 0, "{t:#}");
        // The worker saw the housekeeper, and the report says so.
        let swept = t["path"] == "nondet::swept_cache::SweptCache";
        assert_eq!(t["own_threads"].as_bool().unwrap_or(false), swept, "{t:#}");
    }
}

/// Entries stamped with `quanta`'s clock (a dependency's, as moka's caches): an insert that
/// read the clock before the other thread's `invalidate_all` and stored its entry after that
/// thread's next insert of the key leaves the key gone, by the map's contract. With the
/// clock real, the results oracle reported it as a wrong result (`insert ∥ invalidate_all`,
/// final state `{}`) after 96 to 224 tests of this seed (three runs, c. 0.8 s) and after 604
/// in a campaign over the whole crate; the harness's `quanta` reads covcon's virtual clock, on
/// which every order reads the same time per call slot, and nothing is reported.
#[test]
fn entries_stamped_with_a_dependencys_clock_raise_no_false_alarm() {
    let copy = Copy::new();
    let report = copy.campaign(
        &["nondet"],
        &["nondet::stamped_map::StampedMap"],
        "results",
        "1000",
    );
    check(&report, "nondet::stamped_map::StampedMap: nothing");
    let map = &report["types"][0];
    assert_eq!(map["tests_run"].as_u64(), Some(1000), "{map:#}");
}

/// A bug only a thread that keeps a returned guard reaches (`let r = reserve(s); r.confirm(w)`
/// racing `book(s, w)`: `slot N double-booked`) is found under the results oracle too, which
/// writes such scopes in half of the tests and judges those for panics alone; the correct
/// twin, whose `Reservation` made `book` answer `false` in a way no order of whole calls gives
/// (a false alarm of session 37's main), is never reported. The bench (3,000 tests, 3 s) found
/// the bug in 8 of 8 seeds after 51 to 887 tests; before, scopes were never written under the
/// results oracle and it was not found in 3,000.
#[test]
fn a_bug_only_a_kept_guard_shows_is_found_under_the_results_oracle_and_its_twin_never_reported() {
    let copy = Copy::new();
    let types = ["rusty::booking::Booking", "twins::booking::Booking"];
    let report = copy.campaign(&["rusty", "twins"], &types, "results", "3000");
    check(
        &report,
        "rusty::booking::Booking: panic\ntwins::booking::Booking: nothing",
    );
    let twin = &report["types"][1];
    assert_eq!(twin["tests_run"].as_u64(), Some(3000), "{twin:#}");
}

/// An interner whose keys are numbered across two shards before they resolve, as lasso's
/// `ThreadedRodeo`: `get_or_intern("") ∥ get_or_intern("a"); len()` may answer keys 0 and 1
/// with `len` 1 (the second string recorded first), which no order of whole calls gives with
/// those numbers and the order `"a"` first gives with the keys swapped. Keys are only handed
/// back by the tests, so their answers are compared up to renaming and nothing is reported.
/// Compared as written, the landed main reported it after 509 tests of this seed (and after
/// 384 to 1,360 at seeds 2 to 5).
#[test]
fn keys_numbered_out_of_order_across_shards_raise_no_false_alarm() {
    let copy = Copy::new();
    let report = copy.campaign(
        &["nondet"],
        &["nondet::sharded_interner::ShardedInterner"],
        "results",
        "2000",
    );
    check(
        &report,
        "nondet::sharded_interner::ShardedInterner: nothing",
    );
    let interner = &report["types"][0];
    assert_eq!(interner["tests_run"].as_u64(), Some(2000), "{interner:#}");
}

/// A metrics family whose `get_or_create` replaces a counter another thread created between
/// its read-lock miss and its write-lock insert: the lost update is in `inc` on the counter
/// the call returned, so only a test whose threads keep what `get_or_create` returns and call
/// `inc` on it shows it (`Family`, an `Arc`), or call `add` on it in one expression while its
/// guard lives (`GuardedFamily`, a read guard as prometheus-client's; `MetricFamily<M: Metric>`,
/// the same behind a guard over its type parameter, whose metric's methods are called once `M`
/// is instantiated; `LabeledFamily<S, M>`, whose unbounded `M` is instantiated as its doc
/// example writes it). All are reported as wrong results; the twins never are; each reproducer,
/// with its threads' `let h1 = ...` bindings or chained calls, compiles against the
/// uninstrumented crate.
#[test]
fn a_lost_update_on_a_returned_handle_is_found_through_bindings_and_chained_calls() {
    let copy = Copy::new();
    let types = [
        "shapes::family::Family",
        "shapes::family::FamilyFixed",
        "shapes::family::GuardedFamily",
        "shapes::family::GuardedFamilyFixed",
        "shapes::metric_family::MetricFamily",
        "shapes::metric_family::MetricFamilyFixed",
        "shapes::labeled_family::LabeledFamily",
        "shapes::labeled_family::LabeledFamilyFixed",
    ];
    let report = copy.campaign(&["shapes"], &types, "results", "3000");
    check(
        &report,
        "shapes::family::Family: wrong_result\nshapes::family::FamilyFixed: nothing\n\
         shapes::family::GuardedFamily: wrong_result\nshapes::family::GuardedFamilyFixed: nothing\n\
         shapes::labeled_family::LabeledFamily: wrong_result\n\
         shapes::labeled_family::LabeledFamilyFixed: nothing\n\
         shapes::metric_family::MetricFamily: wrong_result\n\
         shapes::metric_family::MetricFamilyFixed: nothing",
    );
    let tests = copy.root().join("shapes/tests");
    std::fs::create_dir_all(&tests).unwrap();
    for (path, shown) in [
        ("family::Family", "= Arc::new(c0.get_or_create("),
        ("family::GuardedFamily", ").add("),
        ("metric_family::MetricFamily", ").add("),
        // The instantiation the crate's doc example writes (`LabeledFamily::<String, Hits>`),
        // and the family's `fn` constructor shown as `0x…` in the allowed final states.
        ("labeled_family::LabeledFamily", ").inc("),
    ] {
        let family = report["types"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["path"] == format!("shapes::{path}"))
            .unwrap();
        let violation = &family["violations"][0];
        let uses_result = |thread: &Value| {
            thread
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["keep"] == true || c["chained"].is_object())
        };
        let threads = &violation["test"]["threads"];
        assert!(
            uses_result(&threads[0]) || uses_result(&threads[1]),
            "{violation:#}"
        );
        let source = std::fs::read_to_string(violation["reproducer"].as_str().unwrap()).unwrap();
        assert!(source.contains(shown), "{source}");
        if path.starts_with("labeled_family") {
            // The address of the family's `fn` constructor differs in the reproducer's process.
            assert!(source.contains("constructor: 0x…"), "{source}");
        }
        let file = format!("covcon_{}", path.replace("::", "_").to_lowercase());
        std::fs::write(tests.join(format!("{file}.rs")), &source).unwrap();
        let build = std::process::Command::new(env!("CARGO"))
            .args(["test", "--release", "-q", "-p", "shapes", "--no-run"])
            .args(["--test", &file])
            .current_dir(copy.root())
            .env("CARGO_TARGET_DIR", copy.target())
            .output()
            .unwrap();
        assert!(
            build.status.success(),
            "the reproducer does not compile:\n{}\n{source}",
            String::from_utf8_lossy(&build.stderr)
        );
    }
}

/// The sharded set's `len` sums its shards' counts without a lock, and an `insert` of a key
/// already present counts it until it finds it there: `insert(0) ∥ len()` after an
/// `insert(0)` can answer 2. Its doc calls the answer an approximation, so under `--oracle
/// results` its results are not compared, the report says so with the doc's sentence, and
/// nothing is reported (the other calls and the final state are still compared). The same
/// type with that sentence taken out of the doc is reported as a wrong result of `len`.
/// Measured (debug binary): documented, nothing in 1,000 tests at seeds 1–5; undocumented,
/// found after 29–344 tests at seeds 1–10 and 47–444 in sixteen runs at seed 1, some at a
/// load of 10 on two cores (the campaign's feedback depends on timing). A 1,000-test campaign
/// takes 10–20 s, so the 10 min budget is only a safety net.
#[test]
fn a_documented_approximate_len_is_not_compared_and_without_its_doc_it_is_reported() {
    const SET: &str = "nondet::sharded_set::ShardedSet";
    const SENTENCE: &str = "While other threads insert or remove, the answer is an approximation.";
    let copy = Copy::new();
    let documented = copy.campaign_args(&["nondet"], &[SET], "results", "400", "10m", &[]);
    check(&documented, &format!("{SET}: nothing"));
    let set = &documented["types"][0];
    assert!(set["tests_run"].as_u64().unwrap() > 0, "{set:#}");
    assert_eq!(
        set["approximate"],
        serde_json::json!([{"method": "len", "why": {"by": "doc", "line": SENTENCE}}])
    );

    let file = copy.root().join("nondet/src/sharded_set.rs");
    let source = std::fs::read_to_string(&file).unwrap();
    let written = "    /// While other threads insert or remove, the answer is an approximation. An insert of a\n    /// key already present";
    assert!(
        source.contains(written),
        "the doc sentence moved:\n{source}"
    );
    let undocumented = source.replace(
        written,
        "    /// An insert of a\n    /// key already present",
    );
    std::fs::write(&file, undocumented).unwrap();
    let report = copy.campaign_args(&["nondet"], &[SET], "results", "1000", "10m", &[]);
    check(&report, &format!("{SET}: wrong_result"));
    let set = &report["types"][0];
    assert!(set.get("approximate").is_none(), "{set:#}");
    // The wrong answer is `len`'s. The violation's pair is the shrunk test's (`pair_kept`):
    // a shrunk test that keeps `insert` on both threads and `len` after one of them is named
    // `insert ∥ insert` (seen once, loaded), so the message is what says whose answer it was.
    let violation = &set["violations"][0];
    let message = violation["message"].as_str().unwrap_or_default();
    assert!(message.contains("`len`: observed"), "{violation:#}");
}
