//! The runner (pool, trace analysis, verdict, confirmation, violation files, replay) driven
//! through its public API against `covcon-fake-worker`, a stand-in worker whose calls behave
//! as their method names say (see `src/bin/covcon-fake-worker.rs`).

use analysis::Model;
use generator::ShrinkConfig;
use generator::{Call, Control, Executor, StopAt, TestCase};
use oracle::results::ResultsConfig;
use oracle::{OracleConfig, OracleExecutor, Scheduling, Violation};
use std::path::Path;
use std::time::Duration;

const FAKE: &str = env!("CARGO_BIN_EXE_covcon-fake-worker");

/// Free scheduling: the fake worker's outcomes do not depend on a schedule, except
/// `narrow`'s ([`a_violation_found_free_is_replayed_under_a_schedule_that_shows_it`]).
fn config(out: &Path, jobs: usize) -> OracleConfig {
    OracleConfig {
        out_dir: out.to_path_buf(),
        jobs,
        test_timeout: Duration::from_millis(200),
        confirm_runs: 4,
        scheduling: Scheduling::Free,
        ..OracleConfig::new(out)
    }
}

/// A test case from a script `"a b | c"`: thread 0 calls a then b, thread 1 calls c; an
/// optional `ctor:` first word names the constructor.
fn test_case(id: u64, script: &str) -> TestCase {
    let (ctor, script) = match script.split_once(':') {
        Some((ctor, rest)) => (ctor.trim(), rest),
        None => ("new", script),
    };
    let call = |m: &str| Call {
        method: m.to_string(),
        receiver: 0,
        args: vec![],
        times: 1,
        keep: false,
        chained: None,
        scope: None,
    };
    let (a, b) = script.split_once('|').expect("two threads");
    let calls = |s: &str| s.split_whitespace().map(call).collect::<Vec<_>>();
    let threads = [calls(a), calls(b)];
    let pair = [
        threads[0].first().map_or("", |c| &c.method).to_string(),
        threads[1].first().map_or("", |c| &c.method).to_string(),
    ];
    TestCase {
        id,
        type_path: "fake::T".into(),
        pair,
        instances: vec![call(ctor)],
        handles: vec![],
        prefix: vec![],
        threads,
        noise_seed: id,
        control: Default::default(),
    }
}

fn render(violation: &Option<Violation>) -> String {
    match violation {
        None => "none".into(),
        Some(v) => format!(
            "{} {{{}, {}}} \"{}\" after {} linearizations",
            v.kind, v.methods[0], v.methods[1], v.message, v.linearizations
        ),
    }
}

/// Runs each script as one test on `jobs` fake workers and compares one line per test:
/// `covered pairs; violation`.
fn check(jobs: usize, scripts: &[&str], expect: &str) {
    check_with(config(Path::new("unused"), jobs), scripts, expect);
}

/// [`check`] with settings of its own (the output directory is replaced by a fresh one).
fn check_with(config: OracleConfig, scripts: &[&str], expect: &str) {
    check_model(config, &Model::default(), scripts, expect);
}

/// [`check_with`], the executor given `model`.
fn check_model(config: OracleConfig, model: &Model, scripts: &[&str], expect: &str) {
    let out = tempfile::tempdir().unwrap();
    let config = OracleConfig {
        out_dir: out.path().to_path_buf(),
        ..config
    };
    let mut executor = OracleExecutor::with_worker(Path::new(FAKE), &config, model).unwrap();
    let tests: Vec<TestCase> = scripts
        .iter()
        .enumerate()
        .map(|(i, s)| test_case(i as u64 + 1, s))
        .collect();
    let executions = executor.execute(&tests);
    let got: Vec<String> = executions
        .iter()
        .zip(&tests)
        .map(|(e, t)| {
            assert_eq!(e.test_id, t.id, "executions come back in test order");
            let covered: Vec<String> = e.covered.iter().map(|[a, b]| format!("{a}+{b}")).collect();
            format!("[{}]; {}", covered.join(" "), render(&e.violation))
        })
        .collect();
    assert_eq!(got.join("\n"), expect.trim());
}

/// An executor on one fake worker with the free-scheduling [`config`], writing under `out`.
fn one_fake_worker(out: &Path) -> OracleExecutor {
    OracleExecutor::with_worker(Path::new(FAKE), &config(out, 1), &Model::default()).unwrap()
}

/// Workers run in covcon's directory under the output directory: a relative path the code
/// under test writes (`File::create("a")`, a `PathBuf` argument) lands there, never in the
/// user's project, from which covcon runs.
#[test]
fn workers_write_relative_paths_under_the_output_directory() {
    let out = tempfile::tempdir().unwrap();
    let mut executor = one_fake_worker(out.path());
    let executions = executor.execute(&[test_case(1, "touch | ok")]);
    assert!(executions[0].violation.is_none());
    let touched = out
        .path()
        .join(oracle::WORKER_DIR)
        .join("covcon-fake-touched");
    assert!(touched.is_file(), "{} was written", touched.display());
    assert!(!Path::new("covcon-fake-touched").exists());
}

#[test]
fn overlapping_calls_cover_their_pair_and_pass() {
    check(
        1,
        &["ok_a ok_b | ok_b ok_a", "ok_a | "],
        "[ok_a+ok_b ok_a+ok_b]; none\n[]; none",
    );
}

#[test]
fn a_panic_only_concurrent_runs_show_is_a_violation() {
    // Two orders at full speed, then both again in each of the two paced passes.
    check(
        1,
        &["racy | ok"],
        r#"[ok+racy]; panic {ok, racy} "racy went wrong" after 9 linearizations"#,
    );
}

#[test]
fn a_panic_sequential_runs_show_too_is_not_reported() {
    check(1, &["buggy | ok"], "[buggy+ok]; none");
}

/// A panic the failing thread's calls give alone when paused (a refill overdue on a clock
/// covcon does not control) is not reported, and the type's stats count it for the report.
#[test]
fn a_panic_only_waiting_alone_explains_is_not_reported_and_is_counted() {
    let out = tempfile::tempdir().unwrap();
    let mut executor = one_fake_worker(out.path());
    let tests = [test_case(1, "overdue | ok"), test_case(2, "racy | ok")];
    let executions = executor.execute(&tests);
    let got: Vec<String> = executions.iter().map(|e| render(&e.violation)).collect();
    assert_eq!(got[0], "none");
    assert!(got[1].starts_with("panic {ok, racy}"), "{got:?}");
    // The racy panic was run alone too, and not explained: only the overdue one counts.
    assert_eq!(executor.type_stats()["fake::T"].clock_outside, 1);
}

/// A violation already recorded is answered from its record (no confirmation runs again);
/// after `start_afresh` (what `cargo covcon bench` does before each campaign) the same
/// violation is a first sighting again: confirmed anew and written to files of its own, and
/// the type's stats start over.
#[test]
fn after_starting_afresh_a_known_violation_is_confirmed_and_written_again() {
    let out = tempfile::tempdir().unwrap();
    let mut executor = one_fake_worker(out.path());
    let racy = || [test_case(1, "racy | ok")];
    let first = executor.execute(&racy()).remove(0).violation.unwrap();
    let confirms = executor.stats().confirm_runs;
    assert!(confirms > 0);
    let known = executor.execute(&racy()).remove(0).violation.unwrap();
    assert_eq!(
        executor.stats().confirm_runs,
        confirms,
        "answered from the record"
    );
    assert_eq!(known.reproducer, first.reproducer);
    executor.start_afresh();
    assert!(executor.type_stats().is_empty());
    let again = executor.execute(&racy()).remove(0).violation.unwrap();
    assert!(executor.stats().confirm_runs > confirms, "confirmed anew");
    assert_ne!(again.reproducer, first.reproducer, "files of its own");
    assert_eq!(executor.type_stats()["fake::T"].tests, 1);
}

#[test]
fn a_lock_order_deadlock_is_a_violation_and_the_worker_is_replaced() {
    check(
        1,
        &["lock | lock", "ok_a | ok_b"],
        "[lock+lock]; deadlock {lock, lock} \"deadlock: thread 0 blocked in lock, thread 1 blocked in lock\" after 4 linearizations\n[ok_a+ok_b]; none",
    );
}

#[test]
fn a_timeout_that_no_rerun_repeats_is_not_reported_as_a_deadlock() {
    check(1, &["stall | ok"], "[ok+stall]; none");
}

/// A run the watchdog saw only over its time (never blocked for good), every time at the
/// campaign's timeout, is re-run with four times the time: the fake's `slow`, a run starved of
/// CPU, then finishes, and no deadlock is reported.
#[test]
fn a_deadlock_seen_only_over_time_is_rerun_with_more_time() {
    let out = tempfile::tempdir().unwrap();
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), &config(out.path(), 1), &Model::default())
            .unwrap();
    let executions = executor.execute(&[test_case(1, "slow | ok")]);
    assert_eq!(render(&executions[0].violation), "none");
    assert_eq!(executor.stats().unconfirmed_deadlocks, 1);
}

#[test]
fn a_blocking_take_on_an_empty_queue_is_not_reported() {
    check(1, &["take | put"], "[put+take]; none");
}

/// The fake's concurrent `take` hangs even after the other thread's `put` has returned: a lost
/// wake-up, which `take` before `put` does not explain (there `take` waits for a `put` still
/// to come); the orders with `put` first pass.
#[test]
fn a_take_hung_after_the_other_thread_finished_its_put_is_a_violation() {
    check(
        1,
        &["ok_a take | put"],
        "[ok_a+put]; deadlock {ok_a, take} \"deadlock: thread 0 blocked in take after thread 1 had finished all its calls\" after 4 linearizations",
    );
}

/// The call a sequential order blocked in, when that explained a run's deadlock, comes back
/// as `hung` for the generator to avoid; a deadlock no order explains gives none.
#[test]
fn the_call_a_sequential_order_hung_in_comes_back_to_the_generator() {
    let out = tempfile::tempdir().unwrap();
    let config = OracleConfig {
        out_dir: out.path().to_path_buf(),
        ..config(Path::new("unused"), 1)
    };
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), &config, &Model::default()).unwrap();
    // `take` hangs while the other thread's `ok_b` still runs: `take` before `put` explains it.
    let tests = [
        test_case(1, "ok_a take | put ok_b"),
        test_case(2, "lock | lock"),
    ];
    let hung: Vec<Vec<String>> = executor
        .execute(&tests)
        .iter()
        .map(|e| e.hung.iter().map(|c| c.method.clone()).collect())
        .collect();
    assert_eq!(hung, [vec!["take".to_string()], vec![]]);
}

#[test]
fn aborts_and_exits_do_not_stop_the_run() {
    check(
        2,
        &["abort | ok", "exit | ok", "ok_a | ok_b", "abort_conc | ok"],
        "[]; none\n[]; none\n[ok_a+ok_b]; none\n[]; crash {abort_conc, ok} \"the worker was killed by signal 6 (SIGABRT: abort)\" after 4 linearizations",
    );
}

#[test]
fn a_worker_lost_in_the_middle_of_a_pipelined_chunk_costs_only_its_own_test() {
    // One worker, 12 tests: chunks of 3 with two requests in flight at a time.
    check(
        1,
        &[
            "ok_a | ok_b",
            "abort | ok",
            "ok_a | ok_b",
            "ok_a | ok_b",
            "lock | lock",
            "ok_a | ok_b",
            "exit | ok",
            "abort_conc | ok",
            "ok_a | ok_b",
            "fail: ok | ok",
            "racy | ok",
            "ok_a | ok_b",
        ],
        r#"[ok_a+ok_b]; none
[]; none
[ok_a+ok_b]; none
[ok_a+ok_b]; none
[lock+lock]; deadlock {lock, lock} "deadlock: thread 0 blocked in lock, thread 1 blocked in lock" after 4 linearizations
[ok_a+ok_b]; none
[]; none
[]; crash {abort_conc, ok} "the worker was killed by signal 6 (SIGABRT: abort)" after 4 linearizations
[ok_a+ok_b]; none
[]; none
[ok+racy]; panic {ok, racy} "racy went wrong" after 9 linearizations
[ok_a+ok_b]; none"#,
    );
}

/// A worker runs one type's tests: what a test left broken in its process (a heap a double
/// free corrupted; the fake worker's `taint`) brings down a later run of its own type, never
/// one of another type.
#[test]
fn what_a_test_left_broken_in_its_worker_fails_only_its_own_types_later_runs() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[("fake::A", "taint | ok"), ("fake::A", "tainted | ok")],
            "none\ncrash",
        ),
        (
            &[
                ("fake::A", "taint | ok"),
                ("fake::B", "tainted | ok"),
                ("fake::A", "ok | ok"),
                ("fake::A", "tainted | ok"),
            ],
            "none\nnone\nnone\nnone",
        ),
    ];
    for (case, expect) in cases {
        let out = tempfile::tempdir().unwrap();
        let mut executor = one_fake_worker(out.path());
        let tests: Vec<TestCase> = case
            .iter()
            .enumerate()
            .map(|(i, (type_path, script))| TestCase {
                type_path: type_path.to_string(),
                ..test_case(i as u64 + 1, script)
            })
            .collect();
        let got: Vec<String> = executor
            .execute(&tests)
            .iter()
            .map(|e| {
                e.violation
                    .as_ref()
                    .map_or("none".into(), |v| v.kind.to_string())
            })
            .collect();
        assert_eq!(got.join("\n"), *expect, "{case:?}");
    }
}

#[test]
fn a_failed_setup_is_not_a_violation() {
    check(1, &["fail: racy | ok"], "[]; none");
}

#[test]
fn many_tests_on_two_workers_come_back_in_order() {
    let scripts: Vec<&str> = (0..40)
        .map(|i| {
            if i % 7 == 3 {
                "buggy | ok"
            } else {
                "ok_a | ok_b"
            }
        })
        .collect();
    let expect: Vec<&str> = (0..40)
        .map(|i| {
            if i % 7 == 3 {
                "[buggy+ok]; none"
            } else {
                "[ok_a+ok_b]; none"
            }
        })
        .collect();
    check(2, &scripts, &expect.join("\n"));
}

#[test]
fn a_worker_that_stops_answering_is_killed_and_replaced() {
    let out = tempfile::tempdir().unwrap();
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), &config(out.path(), 1), &Model::default())
            .unwrap();
    let tests = [test_case(1, "hang | ok"), test_case(2, "ok_a | ok_b")];
    let executions = executor.execute(&tests);
    // The hang repeats sequentially (a crash there too), so it is not a violation.
    assert_eq!(render(&executions[0].violation), "none");
    assert_eq!(executions[1].covered.len(), 1);
    let stats = executor.stats();
    assert_eq!((stats.tests, stats.failed, stats.explained), (2, 1, 1));
    assert!(stats.workers_started >= 3, "{stats:?}");
}

#[test]
fn a_violation_is_confirmed_and_written_once_as_json_and_rust() {
    let out = tempfile::tempdir().unwrap();
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), &config(out.path(), 1), &Model::default())
            .unwrap();
    let tests = [test_case(1, "racy | ok"), test_case(2, "ok | racy")];
    let executions = executor.execute(&tests);
    let [Some(first), Some(second)] = [&executions[0].violation, &executions[1].violation] else {
        panic!("both runs are violations: {executions:?}");
    };
    assert_eq!(executor.violation_key(first), "fake::T::{ok, racy} panic");
    assert_eq!(
        executor.violation_key(first),
        executor.violation_key(second)
    );
    assert_eq!(first.confirmed, (4, 4));
    assert_eq!(first.json, out.path().join("violations/1.json"));
    assert_eq!(second.json, first.json, "the same bug is written once");
    assert_eq!(
        second.test, first.test,
        "a later find is shown with the test its files and confirmation are of"
    );
    let saved = saved(first);
    assert_eq!(saved, tests[0]);
    assert!(first.reproducer.exists());
    assert!(!out.path().join("violations/2.json").exists());
}

/// A violation found long after its type's time was up is confirmed by one re-run, not by
/// all of them: a slow type's thousand schedules and twenty re-runs took minutes past a 60 s
/// budget (moka 0.9.5, 680 s).
#[test]
fn a_violation_found_past_its_types_time_is_confirmed_by_one_run() {
    let out = tempfile::tempdir().unwrap();
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), &config(out.path(), 1), &Model::default())
            .unwrap();
    let past = std::time::Instant::now().checked_sub(Duration::from_secs(60));
    executor.set_deadline(past);
    let executions = executor.execute(&[test_case(1, "racy | ok")]);
    let Some(found) = &executions[0].violation else {
        panic!("a violation: {executions:?}");
    };
    assert_eq!(found.confirmed, (1, 1));
}

/// A violation a free run found is searched a controlled schedule for (sampled PCT and random
/// walks first, then every schedule with at most two preemptions); the one found goes with
/// the test into the files and the confirmation, which then repeats it every time. Without
/// scheduling, the same test is confirmed free, where `narrow` happens to repeat too.
#[test]
fn a_violation_found_free_is_replayed_under_a_schedule_that_shows_it() {
    let out = tempfile::tempdir().unwrap();
    let mixed = OracleConfig {
        scheduling: Scheduling::Mixed,
        ..config(out.path(), 1)
    };
    let (test, saved) = found_free_and_scheduled(&mixed, "narrow | ok");
    let replayed =
        oracle::replay_with_worker(Path::new(FAKE), &mixed, &Model::default(), &saved).unwrap();
    assert_eq!((replayed.runs, replayed.failures), (4, 4));

    let out = tempfile::tempdir().unwrap();
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), &config(out.path(), 1), &Model::default())
            .unwrap();
    let executions = executor.execute(std::slice::from_ref(&test));
    let found = executions[0].violation.as_ref().expect("a violation");
    assert_eq!(found.test.control, Control::Free);
}

/// The same for a wrong result: a lost update a free run showed is searched a schedule for,
/// each candidate judged by its results, and confirmed and saved under the one that shows it.
#[test]
fn a_wrong_result_found_free_is_replayed_under_a_schedule_that_shows_it() {
    let out = tempfile::tempdir().unwrap();
    let mixed = OracleConfig {
        scheduling: Scheduling::Mixed,
        results: Some(ResultsConfig::default()),
        ..config(out.path(), 1)
    };
    let (_, saved) = found_free_and_scheduled(&mixed, "lost | lost");
    let replayed =
        oracle::replay_with_worker(Path::new(FAKE), &mixed, &Model::default(), &saved).unwrap();
    assert_eq!((replayed.runs, replayed.failures), (4, 4));
}

/// Replaying a free test draws fresh noise for each run after the first, as the campaign's
/// confirmation does: a failure the saved test's own noise does not show still repeats.
#[test]
fn a_free_violation_is_replayed_with_fresh_noise_for_each_run() {
    let out = tempfile::tempdir().unwrap();
    let config = OracleConfig {
        confirm_runs: 40,
        ..config(out.path(), 1)
    };
    let mut saved = test_case(1, "seeded | ok");
    saved.noise_seed = 1;
    assert_eq!(saved.control, Control::Free);
    let replayed =
        oracle::replay_with_worker(Path::new(FAKE), &config, &Model::default(), &saved).unwrap();
    assert!(replayed.failures > 0, "{} runs", replayed.runs);
    assert!(replayed.violation.is_some());
}

/// Runs `script` as one test whose seed the mix leaves free, so the campaign's own run is a
/// free one, and checks that the violation it shows was confirmed 4 of 4 and saved under the
/// one schedule of the fake that shows it. Answers the test and the saved one.
fn found_free_and_scheduled(config: &OracleConfig, script: &str) -> (TestCase, TestCase) {
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), config, &Model::default()).unwrap();
    let mut test = test_case(1, script);
    test.noise_seed = (0..)
        .find(|&s| Scheduling::Mixed.control(s, 8).is_free())
        .unwrap();
    let executions = executor.execute(std::slice::from_ref(&test));
    let found = executions[0].violation.as_ref().expect("a violation");
    let expected = if config.results.is_some() {
        "wrong_result"
    } else {
        "panic"
    };
    assert_eq!(found.kind.to_string(), expected);
    assert_eq!(
        found.test.control,
        Control::Preempt {
            first: 0,
            at: [3, 0]
        }
    );
    assert_eq!(found.confirmed, (4, 4));
    // Every concurrent run the oracle made counts as one of the type's runs: the campaign's,
    // the schedule search's, the confirmation's and the shrinking's.
    let stats = executor.stats();
    let runs = stats.tests + stats.confirm_runs + stats.shrink_runs + stats.explore_runs;
    assert!(stats.confirm_runs > 4, "{stats:?}");
    assert_eq!(
        executor.type_stats()[&test.type_path].runs,
        runs,
        "{stats:?}"
    );
    let saved = saved(found);
    assert_eq!(saved.control, found.test.control);
    (test, saved)
}

/// A violation no re-run repeated is judged again when a later test shows it: confirmed
/// then, it replaces the first in its files. The fake's `drift` loses an update in its
/// worker's first concurrent run and from the sixth on: the first test's four re-runs (runs
/// 2-5) do not repeat it, the second test's (run 6, re-runs 7-10) all do.
#[test]
fn an_unconfirmed_violation_seen_again_is_confirmed_then() {
    let out = tempfile::tempdir().unwrap();
    let config = OracleConfig {
        results: Some(ResultsConfig::default()),
        ..config(out.path(), 1)
    };
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), &config, &Model::default()).unwrap();
    let first = executor.execute(&[test_case(1, "drift | drift")]);
    let first = first[0].violation.as_ref().expect("a lost update");
    assert_eq!(first.confirmed, (0, 4));
    assert!(!executor.conclusive(first));
    let again = executor.execute(&[test_case(2, "drift | drift")]);
    let again = again[0].violation.as_ref().expect("the same lost update");
    assert_eq!(again.confirmed, (4, 4));
    assert!(executor.conclusive(again));
    assert_eq!(
        (&again.json, &again.reproducer),
        (&first.json, &first.reproducer)
    );
    let saved = saved(again);
    assert_eq!(saved.id, 2);
}

/// Under the results oracle a repeated test's answer carries its earlier runs that answered
/// otherwise, and each is judged as the run it was. The fake's `skew` loses an update only in a
/// free run whose test's noise seed is a multiple of 4: test 2 run four times (seeds 2, 3, 4,
/// 5) loses it in its third run only, and its last run is linearizable; the violation is the
/// third run's, saved with seed 4. Test 5 (seeds 5 to 8) loses it in its last run. Each runs
/// on an executor of its own (a second sighting would take the first's files), confirmation
/// off (re-runs of a free run draw other seeds): what is checked is which run is judged and
/// saved. A test with a scope is judged for panics and deadlocks alone.
#[test]
fn a_wrong_result_in_an_earlier_run_of_a_repeated_test_is_judged_as_that_run() {
    let out = tempfile::tempdir().unwrap();
    let config = OracleConfig {
        results: Some(ResultsConfig::default()),
        repeat: oracle::Repeat::Times(4),
        confirm_runs: 0,
        ..config(out.path(), 1)
    };
    let found: Vec<(u64, u64, u64)> = [2, 5]
        .iter()
        .map(|&id| {
            let mut executor =
                OracleExecutor::with_worker(Path::new(FAKE), &config, &Model::default()).unwrap();
            let executions = executor.execute(&[test_case(id, "skew | skew")]);
            let v = executions[0].violation.as_ref().expect("a lost update");
            assert_eq!(v.kind, oracle::ViolationKind::WrongResult);
            (v.test.id, saved(v).noise_seed, v.response.runs)
        })
        .collect();
    // (test, the saved run's seed, that run's number)
    assert_eq!(found, [(2, 4, 3), (5, 8, 4)]);
    // The same test with a guard kept in a scope: its orders run the scope whole, so its
    // results are not compared and the lost update is not judged.
    let mut scoped = test_case(2, "skew | skew");
    scoped.threads[0][0].scope = Some(Box::new(generator::Scope {
        then: Vec::new(),
        finish: None,
    }));
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), &config, &Model::default()).unwrap();
    let executions = executor.execute(&[scoped]);
    assert_eq!(render(&executions[0].violation), "none");
}

#[test]
fn a_flaky_violation_records_how_often_it_repeated() {
    let out = tempfile::tempdir().unwrap();
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), &config(out.path(), 1), &Model::default())
            .unwrap();
    // The fake's `flaky` panics in every second concurrent run of a worker.
    let tests = [test_case(1, "flaky | ok"), test_case(2, "flaky | ok")];
    let executions = executor.execute(&tests);
    assert_eq!(render(&executions[0].violation), "none");
    let violation = executions[1].violation.as_ref().expect("second run fails");
    assert_eq!(violation.confirmed, (2, 4));
}

/// An executor on the fake worker that shrinks what it finds, writing under `out`.
fn shrinking(out: &Path) -> OracleExecutor {
    let config = OracleConfig {
        shrink: Some(ShrinkConfig::default()),
        ..config(out, 1)
    };
    OracleExecutor::with_worker(Path::new(FAKE), &config, &Model::default()).unwrap()
}

/// The test case a violation's file holds.
fn saved(violation: &oracle::Violation) -> TestCase {
    serde_json::from_str(&std::fs::read_to_string(&violation.json).unwrap()).unwrap()
}

/// A panic found free that none of the single re-runs repeats gets one batch of runs in the
/// worker (lasso 0.7.1's window, between two calls into a dependency, shows once in
/// thousands): the fake's `rare` panics again at its worker's 50th run. Shrinking judges
/// each candidate by such a batch too.
#[test]
fn a_rare_panic_is_confirmed_and_shrunk_by_batches_of_runs_in_the_worker() {
    let out = tempfile::tempdir().unwrap();
    let mut executor = shrinking(out.path());
    let executions = executor.execute(&[test_case(1, "rare ok_a | ok ok_b ok_c")]);
    let violation = executions[0]
        .violation
        .as_ref()
        .expect("the first run fails");
    // Runs 2-5 are the single re-runs; the batch starts at run 6 and fails at run 50.
    assert_eq!(violation.confirmed, (1, 4 + 45));
    let shrunk = violation.shrunk.as_ref().expect("a smaller test");
    assert_eq!(shrunk.threads, test_case(1, "rare | ok").threads);
}

/// A shrunk test kept on one run must show the violation again before it replaces the
/// test it came from: the fake's `fickle` panics every time while its thread calls on after
/// it, and as its thread's last call only once per test shape, so every smaller test
/// fails once and never again; the files keep the original, which replays.
#[test]
fn a_shrunk_test_that_does_not_fail_again_is_not_what_the_files_keep() {
    let out = tempfile::tempdir().unwrap();
    let mut executor = shrinking(out.path());
    // An id no other test of this process uses: the fake's markers are per process.
    let test = test_case(7_001, "fickle ok_a | ok ok_b");
    let executions = executor.execute(std::slice::from_ref(&test));
    let violation = executions[0].violation.as_ref().expect("a panic");
    assert_eq!(violation.confirmed, (4, 4));
    assert_eq!(violation.shrunk, None);
    assert_eq!(executor.stats().shrunk_dropped, 1);
    let saved = saved(violation);
    assert_eq!(saved.threads, test.threads);
}

/// A panic a controlled schedule showed once and its re-runs under that schedule never again
/// (a window inside a dependency the copy does not instrument: parking_lot 0.8.1's
/// `ReentrantMutex`, 0 of 20) gets one batch of free runs; repeated there, the test is kept
/// free, as a free panic only a batch repeated is. The fake's `rare` panics at its worker's
/// first run and every 50th, whatever the schedule.
#[test]
fn a_panic_its_schedule_never_repeats_is_confirmed_by_a_batch_of_free_runs() {
    let out = tempfile::tempdir().unwrap();
    let config = OracleConfig {
        scheduling: Scheduling::Mixed,
        ..config(out.path(), 1)
    };
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), &config, &Model::default()).unwrap();
    let mut test = test_case(1, "rare | ok");
    test.noise_seed = (0..)
        .find(|&s| !Scheduling::Mixed.control(s, 8).is_free())
        .unwrap();
    let executions = executor.execute(std::slice::from_ref(&test));
    let violation = executions[0]
        .violation
        .as_ref()
        .expect("the first run fails");
    // Runs 2-5 re-run the schedule; the free batch starts at run 6 and fails at run 50.
    assert_eq!(violation.confirmed, (1, 4 + 45));
    assert_eq!(violation.test.control, Control::Free);
    let saved = saved(violation);
    assert_eq!(saved.control, Control::Free);
}

#[test]
fn numbering_carries_on_after_earlier_violations() {
    let out = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(out.path().join("violations")).unwrap();
    std::fs::write(out.path().join("violations/7.json"), "{}").unwrap();
    let mut executor =
        OracleExecutor::with_worker(Path::new(FAKE), &config(out.path(), 1), &Model::default())
            .unwrap();
    let executions = executor.execute(&[test_case(1, "racy | ok")]);
    let violation = executions[0].violation.as_ref().unwrap();
    assert_eq!(violation.json, out.path().join("violations/8.json"));
}

fn with_results(jobs: usize) -> OracleConfig {
    OracleConfig {
        results: Some(ResultsConfig::default()),
        ..config(Path::new("unused"), jobs)
    }
}

#[test]
fn a_lost_update_is_a_wrong_result_with_the_results_oracle_on() {
    check_with(
        with_results(1),
        &["lost | lost", "hit | hit", "lost | hit"],
        "[lost+lost]; wrong_result {lost, lost} \"results no linearization gives: closest linearization: t1.1 t2.1\n  thread 2 call 1 `lost`: observed 1, expected 2\n  final state: observed Counter { n: 1 }, expected Counter { n: 2 }\" after 2 linearizations\n[hit+hit]; none\n[hit+lost]; none",
    );
}

/// `calibration` answers text that differs from one worker process to the next. The worker
/// that ran the first test concurrently aborts in the second, so the first is judged with
/// sequential runs in another process, whose `Calibration(pid)` differs: one more run of the
/// closest order in a new worker shows the text varying, and no wrong result is reported
/// (governor's `QuantaClock` was, in a campaign whose later tests timed out).
#[test]
fn text_that_differs_between_worker_processes_is_no_wrong_result() {
    // Eight tests on one worker: chunks of two, each judged after both of its tests ran.
    let mut scripts = vec!["calibration | hit", "abort | ok"];
    scripts.extend(["ok_a | ok_b"; 6]);
    let mut expect = vec!["[calibration+hit]; none", "[]; none"];
    expect.extend(["[ok_a+ok_b]; none"; 6]);
    check_with(with_results(1), &scripts, &expect.join("\n"));
}

/// `busy` answers `None` when run concurrently (its timed acquisition timed out, the run says)
/// and `Some(0)` alone: a contention-only answer by design, not judged.
#[test]
fn an_answer_given_because_a_timed_acquisition_timed_out_is_not_judged() {
    check_with(
        with_results(1),
        &["busy | busy", "busy | ok"],
        "[busy+busy]; none\n[busy+ok]; none",
    );
}

/// `lost` of the fake type, documented approximate: its results are not compared, but the
/// final state, which counts one hit too few, still is.
#[test]
fn a_documented_approximate_method_of_the_model_is_not_compared_but_the_final_state_is() {
    let model = Model {
        types: vec![analysis::TypeModel {
            path: "fake::T".into(),
            methods: vec![analysis::Method {
                name: "lost".into(),
                approximate: Some(analysis::Approximation::Doc {
                    line: "The count may be stale.".into(),
                }),
                ..analysis::Method::default()
            }],
            ..analysis::TypeModel::default()
        }],
        ..Model::default()
    };
    check_model(
        with_results(1),
        &model,
        &["lost | lost", "hit | hit", "lost | hit"],
        "[lost+lost]; wrong_result {lost, lost} \"results no linearization gives: closest linearization: t1.1 t2.1\n  final state: observed Counter { n: 1 }, expected Counter { n: 2 }\" after 2 linearizations\n[hit+hit]; none\n[hit+lost]; none",
    );
}

#[test]
fn a_lost_update_is_not_judged_with_the_results_oracle_off() {
    check(1, &["lost | lost"], "[lost+lost]; none");
}

#[test]
fn a_new_violation_is_shrunk_and_its_files_hold_the_smaller_test() {
    let out = tempfile::tempdir().unwrap();
    let mut executor = shrinking(out.path());
    let found = test_case(1, "racy ok_a | ok ok_b ok_c");
    let executions = executor.execute(std::slice::from_ref(&found));
    let violation = executions[0].violation.as_ref().expect("a violation");
    assert_eq!(violation.test, found);
    let shrunk = violation.shrunk.as_ref().expect("a smaller test");
    assert_eq!(shrunk.threads, test_case(1, "racy | ok").threads);
    let saved = saved(violation);
    assert_eq!(&saved, shrunk);
    assert!(executor.stats().shrink_runs > 0);
}

/// Shrinking judges its candidates at full speed only (a quarter of a verdict's runs, no real
/// pauses), then the smaller test it kept with every pass before the files take it; when that
/// verdict explains it, the candidate kept before it, and when every one kept is explained,
/// shrinking starts again with every pass for each candidate. The fake's `lone` panics paused
/// alone when it is its thread's only call: `lone | ok`, kept at full speed (the cut to one
/// call a thread, with nothing kept before it), is explained, and shrinking again keeps
/// `ok_b lone | ok`, which the files take.
#[test]
fn a_smaller_test_kept_at_full_speed_is_judged_with_every_pass_before_the_files_take_it() {
    let out = tempfile::tempdir().unwrap();
    let mut executor = shrinking(out.path());
    let found = test_case(1, "ok ok_b lone | ok");
    let executions = executor.execute(std::slice::from_ref(&found));
    let violation = executions[0].violation.as_ref().expect("a violation");
    let shrunk = violation.shrunk.as_ref().expect("a smaller test");
    assert_eq!(shrunk.threads, test_case(1, "ok_b lone | ok").threads);
    assert_eq!(&saved(violation), shrunk);
    assert_eq!(executor.stats().shrunk_dropped, 0);
    // `lone | ok` was judged in full, and explained by its thread alone with pauses.
    assert!(executor.type_stats()["fake::T"].clock_outside >= 1);
}

/// With shrinking on, a campaign failure is first judged at full speed only, as its shrinking
/// candidates are; nothing is reported before every pass judged what the files would keep. The
/// fake's `overdue` panics in its thread's calls alone with pauses (a clock outside the copy):
/// neither the test nor its smaller candidate is reported, and the type's later failures are
/// judged with every pass from the first.
#[test]
fn a_failure_judged_at_full_speed_only_is_judged_in_full_before_it_is_reported() {
    for script in ["overdue | ok", "overdue ok_a | ok"] {
        let out = tempfile::tempdir().unwrap();
        let mut executor = shrinking(out.path());
        let executions = executor.execute(&[test_case(1, script)]);
        assert_eq!(render(&executions[0].violation), "none", "{script}");
        assert!(
            executor.type_stats()["fake::T"].clock_outside >= 1,
            "{script}"
        );
        let executions = executor.execute(&[test_case(2, "racy ok_a | ok")]);
        let violation = executions[0].violation.as_ref().expect("a violation");
        let shrunk = violation.shrunk.as_ref().expect("a smaller test");
        assert_eq!(shrunk.threads, test_case(2, "racy | ok").threads);
    }
}

/// Once a violation ends the type's search (the campaign stops there unless it keeps going),
/// the rest of the batch is not judged, so the report does not wait for verdicts nobody
/// reads: a test of the same chunk is run for its coverage only (the deadlock beside the
/// panic, two tests a chunk here), the chunks not yet started are left out. Going on, every
/// test is run and judged.
#[test]
fn after_a_violation_that_ends_the_search_the_batch_is_not_judged_further() {
    let mut scripts = vec!["racy | ok", "lock | lock"];
    scripts.extend(["ok_a | ok_b"; 6]);
    let tests: Vec<TestCase> = (1..)
        .zip(&scripts)
        .map(|(id, script)| test_case(id, script))
        .collect();
    for (stop, expect) in [
        (StopAt::Conclusive, vec!["panic {ok, racy}", "none"]),
        (
            StopAt::Never,
            [
                vec!["panic {ok, racy}", "deadlock {lock, lock}"],
                vec!["none"; 6],
            ]
            .concat(),
        ),
    ] {
        let out = tempfile::tempdir().unwrap();
        let mut executor = one_fake_worker(out.path());
        executor.set_stop_at(stop);
        let executions = executor.execute(&tests);
        let got: Vec<String> = executions.iter().map(|e| render(&e.violation)).collect();
        assert_eq!(got.len(), expect.len(), "{stop:?}: {got:?}");
        for (got, expect) in got.iter().zip(&expect) {
            assert!(got.starts_with(expect), "{stop:?}: {got} for {expect}");
        }
    }
}

fn check_replay(script: &str, expect: &str) {
    let out = tempfile::tempdir().unwrap();
    let result = oracle::replay_with_worker(
        Path::new(FAKE),
        &config(out.path(), 1),
        &Model::default(),
        &test_case(1, script),
    )
    .unwrap();
    let got = format!(
        "runs={} failures={} violation={:?} explained_by={:?}",
        result.runs, result.failures, result.violation, result.explained_by
    );
    assert_eq!(got, expect);
}

#[test]
fn replaying_a_racy_test_reports_the_violation_again() {
    check_replay(
        "racy | ok",
        "runs=4 failures=4 violation=Some(Panic) explained_by=None",
    );
}

#[test]
fn replaying_a_plain_bug_names_the_linearization_that_repeats_it() {
    check_replay(
        "buggy | ok",
        "runs=4 failures=4 violation=None explained_by=Some([(0, 0)])",
    );
}

#[test]
fn replaying_a_passing_test_runs_it_every_time() {
    check_replay(
        "ok_a | ok_b",
        "runs=4 failures=0 violation=None explained_by=None",
    );
}

#[test]
fn a_worker_program_that_does_not_exist_is_an_error() {
    let out = tempfile::tempdir().unwrap();
    let err = OracleExecutor::with_worker(
        Path::new("/nonexistent/covcon-harness"),
        &config(out.path(), 1),
        &Model::default(),
    )
    .err()
    .expect("no worker can start");
    assert!(err.to_string().contains("did not answer a ping"), "{err}");
}

#[test]
fn a_deadlock_a_panic_and_an_abort_inside_a_batch_cost_only_their_own_tests() {
    // One worker, 64 tests: chunks of 16, sent as two batches of 8 each, pipelined. Every
    // failure below is in the middle of a batch, and the tests after it run on a fresh worker.
    let failing = [
        (3, "lock | lock"),
        (5, "racy | ok"),
        (10, "abort_conc | ok"),
        (11, "exit | ok"),
        (20, "fail: ok | ok"),
        (29, "lock | lock"),
        (44, "abort | ok"),
        (60, "buggy | ok"),
    ];
    let script = |i: usize| {
        failing
            .iter()
            .find(|(at, _)| *at == i)
            .map_or("ok_a | ok_b", |(_, s)| *s)
    };
    let expect = |i: usize| {
        match script(i) {
        "lock | lock" => "[lock+lock]; deadlock {lock, lock} \"deadlock: thread 0 blocked in lock, thread 1 blocked in lock\" after 4 linearizations",
        "racy | ok" => "[ok+racy]; panic {ok, racy} \"racy went wrong\" after 9 linearizations",
        "abort_conc | ok" => "[]; crash {abort_conc, ok} \"the worker was killed by signal 6 (SIGABRT: abort)\" after 4 linearizations",
        "buggy | ok" => "[buggy+ok]; none",
        "ok_a | ok_b" => "[ok_a+ok_b]; none",
        _ => "[]; none",
    }
    };
    let scripts: Vec<&str> = (0..64).map(script).collect();
    let expected: Vec<&str> = (0..64).map(expect).collect();
    check(1, &scripts, &expected.join("\n"));
}
