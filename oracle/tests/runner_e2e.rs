//! The runner end to end on the real harness of `testdata/tsafe`: `prepare` builds it once
//! (in `target/tmp/covcon-runner-test`), then each test drives an [`OracleExecutor`] with
//! hand-written test cases and checks what it reports: a check-then-act and lock-order
//! inversions are violations; a plain bug, a blocking `take`, an abort and an endless loop are
//! not, and do not stop the run.
//!
//! A concurrent bug shows only in some schedules, so a racy test case is run in a batch of
//! copies and the test asserts that the batch found it, never how often.

use analysis::{
    Constructor, ConstructorKind, InstancePassing, Method, Model, Param, ParamKind, ReturnShape,
    Span, SplitPoint, TypeModel,
};
use generator::{Call, Executor, TestCase, Value};
use oracle::protocol::Control;
use oracle::results::ResultsConfig;
use oracle::{Harness, NoiseLevel, OracleConfig, OracleExecutor};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tsafe")
}

fn config(jobs: usize) -> OracleConfig {
    OracleConfig {
        out_dir: Path::new(env!("CARGO_TARGET_TMPDIR")).join("covcon-runner-test"),
        jobs,
        test_timeout: Duration::from_millis(400),
        cargo_args: vec!["--offline".into()],
        confirm_runs: 3,
        noise: NoiseLevel::Low,
        ..OracleConfig::new(testdata())
    }
}

/// The harness, prepared once for all tests of this file.
fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    static BUILDING: Mutex<()> = Mutex::new(());
    let _building = BUILDING.lock().unwrap_or_else(|p| p.into_inner());
    HARNESS.get_or_init(|| oracle::prepare(&model(), &config(1)).unwrap_or_else(|e| panic!("{e}")))
}

// ---------------------------------------------------------------------------------------------
// The hand-written model of the testdata types the runner drives.

fn model() -> Model {
    let u32_ = || Param {
        name: "p".into(),
        ty: "u32".into(),
        kind: ParamKind::Int {
            signed: false,
            bits: 32,
        },
    };
    let accounts = Param {
        name: "other".into(),
        ty: "&Accounts".into(),
        kind: ParamKind::Instance {
            passing: InstancePassing::Ref,
        },
    };
    Model {
        format_version: 1,
        types: vec![
            ty("Counter", vec![("incr", vec![]), ("get", vec![])]),
            ty(
                "Registry",
                vec![("insert_new", vec![u32_(), u32_()]), ("len", vec![])],
            ),
            ty(
                "Accounts",
                vec![
                    ("forward", vec![]),
                    ("backward", vec![]),
                    ("transfer", vec![accounts]),
                ],
            ),
            ty(
                "Queue",
                vec![
                    ("put", vec![u32_()]),
                    ("take", vec![]),
                    ("explode", vec![]),
                    ("abort", vec![]),
                    ("spin", vec![]),
                ],
            ),
        ],
        ..Model::default()
    }
}

/// A type of `tsafe` with a `new()` constructor and these methods, located in the source
/// (body starts, and the `/*sp*/` markers as split points).
fn ty(name: &str, methods: Vec<(&str, Vec<Param>)>) -> TypeModel {
    let file = testdata().join("src/lib.rs");
    let source = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = source.lines().collect();
    let span = |line: usize, column: usize| Span {
        file: file.clone(),
        line: line as u32 + 1,
        column: column as u32,
    };
    let impl_line = lines
        .iter()
        .position(|l| l.starts_with(&format!("impl {name} {{")))
        .unwrap_or_else(|| panic!("no impl {name}"));
    let mut split_points = Vec::new();
    let methods = methods
        .into_iter()
        .map(|(method, params)| {
            let fn_line = (impl_line..lines.len())
                .find(|&i| lines[i].contains(&format!("pub fn {method}(")))
                .unwrap_or_else(|| panic!("no fn {name}::{method}"));
            let brace = lines[fn_line].rfind('{').expect("signature on one line");
            let end = (fn_line + 1..lines.len())
                .find(|&i| lines[i].starts_with("    }"))
                .unwrap();
            for (i, text) in lines.iter().enumerate().take(end).skip(fn_line + 1) {
                if let Some(at) = text.find("/*sp*/") {
                    split_points.push(SplitPoint {
                        method: method.into(),
                        at: span(i, at + "/*sp*/".len()),
                        ..SplitPoint::default()
                    });
                }
            }
            Method {
                name: method.into(),
                params,
                body_start: Some(span(fn_line, brace + 1)),
                ..Method::default()
            }
        })
        .collect();
    TypeModel {
        path: format!("tsafe::{name}"),
        package: "tsafe".into(),
        name: name.into(),
        span: span(impl_line, 0),
        implements_debug: true,
        constructors: vec![Constructor {
            name: "new".into(),
            kind: ConstructorKind::Function,
            returns: ReturnShape::SelfValue,
            ..Constructor::default()
        }],
        methods,
        split_points,
        ..TypeModel::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Tests.

/// Runs one test of this file at a time: each executor's workers spin two threads, and more
/// spinners than cores would slow runs past their timeout (a false deadlock).
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ALONE: Mutex<()> = Mutex::new(());
    ALONE.lock().unwrap_or_else(|p| p.into_inner())
}

fn call(method: &str, args: Vec<Value>) -> Call {
    Call {
        method: method.into(),
        receiver: 0,
        args,
        times: 1,
        keep: false,
        chained: None,
        scope: None,
    }
}

fn int(v: i128) -> Value {
    Value::Int(v)
}

/// `copies` copies of one test case of `tsafe::<name>` (one `new()` instance per entry of
/// `instances`), with ids from 1.
fn tests(name: &str, instances: usize, threads: [Vec<Call>; 2], copies: u64) -> Vec<TestCase> {
    let first = |t: &[Call]| t.first().map_or(String::new(), |c| c.method.clone());
    (1..=copies)
        .map(|id| TestCase {
            id,
            type_path: format!("tsafe::{name}"),
            pair: [first(&threads[0]), first(&threads[1])],
            instances: (0..instances).map(|_| call("new", vec![])).collect(),
            handles: vec![],
            prefix: vec![],
            threads: threads.clone(),
            noise_seed: id,
            control: Default::default(),
        })
        .collect()
}

/// Runs the tests on `jobs` workers and compares the distinct violation keys found.
fn check(jobs: usize, tests: &[TestCase], expect: &[&str]) -> OracleExecutor {
    check_with(config(jobs), tests, expect)
}

fn check_with(config: OracleConfig, tests: &[TestCase], expect: &[&str]) -> OracleExecutor {
    let _alone = one_at_a_time();
    let mut executor = OracleExecutor::new(harness(), &config, &model()).unwrap();
    let executions = executor.execute(tests);
    assert_eq!(executions.len(), tests.len());
    let keys: BTreeSet<String> = executions
        .iter()
        .filter_map(|e| e.violation.as_ref())
        .map(|v| executor.violation_key(v))
        .collect();
    let want: BTreeSet<String> = expect.iter().map(|s| s.to_string()).collect();
    let messages: Vec<&str> = executions
        .iter()
        .filter_map(|e| Some(e.violation.as_ref()?.message.as_str()))
        .collect();
    assert_eq!(keys, want, "{:?}\n{messages:#?}", executor.stats());
    executor
}

#[test]
fn a_check_then_act_on_a_mutexed_map_is_a_panic_violation() {
    let insert = |v| call("insert_new", vec![int(1), int(v)]);
    let executor = check(
        1,
        &tests("Registry", 1, [vec![insert(1)], vec![insert(2)]], 40),
        &["tsafe::Registry::{insert_new, insert_new} panic"],
    );
    let stats = executor.stats();
    assert_eq!(stats.tests, 40);
    assert_eq!(stats.explained, 0, "{stats:?}");
}

#[test]
fn a_violation_is_written_as_json_to_replay_and_as_rust() {
    let insert = |v| call("insert_new", vec![int(1), int(v)]);
    let tests = tests("Registry", 1, [vec![insert(1)], vec![insert(2)]], 40);
    let _alone = one_at_a_time();
    let mut executor = OracleExecutor::new(harness(), &config(1), &model()).unwrap();
    let executions = executor.execute(&tests);
    let violation = executions
        .iter()
        .find_map(|e| e.violation.clone())
        .expect("the race shows in 40 runs");
    assert_eq!(violation.message, "key inserted twice");
    let location = violation.location.as_deref().unwrap();
    assert!(location.starts_with("src/lib.rs:"), "{location}");
    let saved: TestCase =
        serde_json::from_str(&std::fs::read_to_string(&violation.json).unwrap()).unwrap();
    assert_eq!(saved.type_path, "tsafe::Registry");
    let reproducer = std::fs::read_to_string(&violation.reproducer).unwrap();
    assert!(reproducer.contains("#[test]"), "{reproducer}");
    assert!(reproducer.contains("insert_new"), "{reproducer}");
    assert!(reproducer.contains("key inserted twice"), "{reproducer}");
    let replayed = oracle::replay(harness(), &config(1), &saved).unwrap();
    assert!(
        replayed.runs >= 1 && replayed.explained_by.is_none(),
        "{replayed:?}"
    );
}

#[test]
fn a_lock_order_inversion_between_two_methods_is_a_deadlock_violation() {
    check(
        1,
        &tests(
            "Accounts",
            1,
            [
                vec![call("forward", vec![])],
                vec![call("backward", vec![])],
            ],
            3,
        ),
        &["tsafe::Accounts::{backward, forward} deadlock"],
    );
}

#[test]
fn a_lock_order_inversion_between_two_instances_is_a_deadlock_violation() {
    let mut tests = tests(
        "Accounts",
        2,
        [
            vec![call("transfer", vec![Value::Instance(1)])],
            vec![call("transfer", vec![Value::Instance(0)])],
        ],
        3,
    );
    for test in &mut tests {
        test.threads[1][0].receiver = 1;
    }
    check(
        1,
        &tests,
        &["tsafe::Accounts::{transfer, transfer} deadlock"],
    );
}

#[test]
fn a_plain_bug_and_a_blocking_take_are_not_reported() {
    let mut all = tests(
        "Queue",
        1,
        [
            vec![call("explode", vec![])],
            vec![call("put", vec![int(1)])],
        ],
        3,
    );
    all.extend(tests(
        "Queue",
        1,
        [vec![call("take", vec![])], vec![call("take", vec![])]],
        1,
    ));
    let executor = check(1, &all, &[]);
    let stats = executor.stats();
    assert_eq!((stats.failed, stats.explained), (4, 4), "{stats:?}");
}

#[test]
fn an_abort_and_an_endless_loop_do_not_stop_the_run() {
    let put = || call("put", vec![int(1)]);
    let mut all = tests("Queue", 1, [vec![call("abort", vec![])], vec![put()]], 1);
    all.extend(tests(
        "Queue",
        1,
        [vec![call("spin", vec![])], vec![put()]],
        1,
    ));
    all.extend(tests(
        "Queue",
        1,
        [vec![put(), call("take", vec![])], vec![put()]],
        4,
    ));
    for (id, test) in all.iter_mut().enumerate() {
        test.id = id as u64 + 1;
    }
    let executor = check(2, &all, &[]);
    let stats = executor.stats();
    assert_eq!(
        (stats.tests, stats.failed, stats.explained),
        (6, 2, 2),
        "{stats:?}"
    );
    assert!(stats.workers_started >= 4, "{stats:?}");
}

#[test]
fn an_abort_an_endless_loop_and_a_panic_inside_batches_cost_only_their_own_tests() {
    // One worker, 64 tests: chunks of 16, each sent as two batches of 8. The failures sit in
    // the middle of batches; every other test must still run and pass.
    let put = || call("put", vec![int(1)]);
    let mut all = tests("Queue", 1, [vec![put()], vec![put()]], 64);
    all[5].threads[0] = vec![call("abort", vec![])];
    all[12].threads[0] = vec![call("spin", vec![])];
    all[19].threads[0] = vec![call("explode", vec![])];
    let executor = check(1, &all, &[]);
    let stats = executor.stats();
    assert_eq!(
        (stats.tests, stats.failed, stats.explained),
        (64, 3, 3),
        "{stats:?}"
    );
}

#[test]
fn correct_types_raise_no_wrong_result_with_the_results_oracle_on() {
    let config = OracleConfig {
        results: Some(ResultsConfig::default()),
        ..config(1)
    };
    let incr_get = || vec![call("incr", vec![]), call("get", vec![])];
    let mut all = tests("Counter", 1, [incr_get(), incr_get()], 20);
    // Different keys: no race, but the map's Debug text lists them in a per-instance order.
    let insert = |k| call("insert_new", vec![int(k), int(k)]);
    all.extend(tests("Registry", 1, [vec![insert(1)], vec![insert(2)]], 20));
    for (id, test) in all.iter_mut().enumerate() {
        test.id = id as u64 + 1;
    }
    let executor = check_with(config, &all, &[]);
    let stats = executor.stats();
    assert!(stats.sequential_runs >= 40, "{stats:?}");
}

/// The first test of a pair also has its smallest test (one call per thread) run under every
/// schedule with at most two preemptions: the check-then-act window of `insert_new` is opened
/// by a schedule, not by chance, and the exploration stops there with a violation; a pair
/// that cannot fail (`incr` ∥ `get` on an atomic) is explored to its end.
#[test]
fn a_pairs_smallest_test_is_explored_under_every_schedule_with_two_preemptions() {
    let mut config = config(1);
    config.scheduling = oracle::Scheduling::Controlled;
    let insert = |v| call("insert_new", vec![int(1), int(v)]);
    let executor = check_with(
        config.clone(),
        &tests("Registry", 1, [vec![insert(1)], vec![insert(2)]], 1),
        &["tsafe::Registry::{insert_new, insert_new} panic"],
    );
    let pair = |a: &str, b: &str| [a.to_string(), b.to_string()];
    let registry =
        &executor.type_stats()["tsafe::Registry"].explored[&pair("insert_new", "insert_new")];
    assert_eq!(registry.end, oracle::ExplorationEnd::Failed, "{registry:?}");
    let executor = check_with(
        config,
        &tests(
            "Counter",
            1,
            [vec![call("incr", vec![])], vec![call("get", vec![])]],
            1,
        ),
        &[],
    );
    let counter = &executor.type_stats()["tsafe::Counter"].explored[&pair("get", "incr")];
    assert_eq!(counter.end, oracle::ExplorationEnd::Complete, "{counter:?}");
    // Both threads first without preemption, then at least one preemption at each point.
    assert!(counter.schedules > 2 + 2 * counter.steps, "{counter:?}");
    assert_eq!(counter.explored, counter.schedules);
    assert_eq!(executor.stats().explore_runs, u64::from(counter.explored));
}

/// A violation a repeated test shows on its k-th run (k > 1) is the k-th run's: confirmed,
/// written and replayed under that run's schedule. The test's seed is one whose first run
/// passes (found by running the seeds once each: controlled runs replay), so the violation
/// cannot be the first run's.
#[test]
fn a_violation_on_the_kth_run_of_a_repeated_test_is_that_runs_and_replays() {
    let mut config = config(1);
    config.scheduling = oracle::Scheduling::Controlled;
    config.repeat = oracle::Repeat::Times(1);
    let insert = |v| call("insert_new", vec![int(1), int(v)]);
    // PCT's change point over about the points the run passes (the campaign learns them).
    let pct = Control::Pct { depth: 2, steps: 6 };
    let candidates: Vec<TestCase> = tests("Registry", 1, [vec![insert(1)], vec![insert(2)]], 30)
        .into_iter()
        .map(|test| TestCase {
            control: pct,
            ..test
        })
        .collect();
    let _alone = one_at_a_time();
    let mut once = OracleExecutor::new(harness(), &config, &model()).unwrap();
    let passing = once
        .execute(&candidates)
        .into_iter()
        .filter(|e| e.violation.is_none())
        .map(|e| e.test_id)
        .min()
        .expect("some of 30 controlled runs pass");
    drop(once);
    let test = candidates[(passing - 1) as usize].clone();
    assert_eq!(test.noise_seed, passing);
    config.repeat = oracle::Repeat::Times(64);
    let mut repeated = OracleExecutor::new(harness(), &config, &model()).unwrap();
    let violation = repeated
        .execute(std::slice::from_ref(&test))
        .into_iter()
        .find_map(|e| e.violation)
        .expect("one of 64 controlled runs shows the race");
    assert_eq!(violation.message, "key inserted twice");
    let saved: TestCase =
        serde_json::from_str(&std::fs::read_to_string(&violation.json).unwrap()).unwrap();
    assert!(
        saved.noise_seed > test.noise_seed && saved.noise_seed < test.noise_seed + 64,
        "the failing run's seed {} is not a later run's of {}: {:?} {:?}",
        saved.noise_seed,
        test.noise_seed,
        repeated.stats(),
        repeated.type_stats()
    );
    assert_eq!(saved.control, pct);
    let replayed = oracle::replay(harness(), &config, &saved).unwrap();
    assert!(
        replayed.failures >= 1 && replayed.explained_by.is_none(),
        "{replayed:?}"
    );
}
