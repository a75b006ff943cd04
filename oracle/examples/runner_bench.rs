//! Measures the runner for `docs/benchmarks.md`: harness preparation cold and cached, start-up
//! of the worker pool, concurrent tests per second on a trivial type (`tsafe::Counter`, one
//! `incr` against one `get`) with 1 and 2 workers and 1 to 64 runs per request
//! (`OracleConfig::batch`), and the floor: two warm in-process threads started by spinning on
//! an atomic, each making one trivial call.
//!
//! Run with `cargo run --release -p covcon-oracle --example runner_bench [TESTS]`.

use analysis::{Constructor, Method, Model, ReturnShape, Span, TypeModel};
use generator::{Call, Executor, TestCase};
use oracle::{NoiseLevel, OracleConfig, OracleExecutor};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn main() {
    let tests: u64 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    // `RUNNER_BENCH_DIR` keeps the harness (and its symbols, for a profiler) after the run.
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let out_dir = std::env::var_os("RUNNER_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| scratch.path().join("covcon"));
    let config = OracleConfig {
        out_dir,
        cargo_args: vec!["--offline".into()],
        noise: NoiseLevel::None,
        ..OracleConfig::new(testdata())
    };
    let model = model();

    let started = Instant::now();
    let cold = oracle::prepare(&model, &config).unwrap_or_else(|e| panic!("{e}"));
    let cold_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let harness = oracle::prepare(&model, &config).unwrap_or_else(|e| panic!("{e}"));
    let cached_secs = started.elapsed().as_secs_f64();
    let executor = OracleExecutor::new(
        &harness,
        &OracleConfig {
            jobs: 1,
            ..config.clone()
        },
        &model,
    )
    .expect("workers start");
    let start_secs = started.elapsed().as_secs_f64();
    drop(executor);
    println!(
        "harness build, cold:           {cold_secs:.1} s (cached flag {})",
        cold.cached
    );
    println!(
        "harness prepare, cached:       {cached_secs:.3} s (cached flag {})",
        harness.cached
    );
    println!("cached prepare + 1 worker up:  {start_secs:.3} s");

    let floor_ns = oracle::floor_ns(2_000_000);
    println!(
        "floor (2 warm threads, 1 call each, in process): {floor_ns:.0} ns/test = {:.0} tests/s",
        1e9 / floor_ns
    );
    // Constructor only (protocol and setup cost), then one call per thread; each with one run
    // per request (batch 1, the protocol before batching) and with several. The settings take
    // turns, three rounds, so that a swing of the machine's load hits them all alike.
    let settings: Vec<(usize, usize, usize)> = [(1, 0), (1, 1), (2, 1)]
        .into_iter()
        .flat_map(|(jobs, calls)| BATCHES.map(|batch| (jobs, calls, batch)))
        .collect();
    let mut us_per_test = vec![Vec::new(); settings.len()];
    for round in 1..=ROUNDS {
        for (&(jobs, calls, batch), times) in settings.iter().zip(&mut us_per_test) {
            let config = OracleConfig {
                jobs,
                batch,
                ..config.clone()
            };
            let mut executor =
                OracleExecutor::new(&harness, &config, &model).expect("workers start");
            let mut tests = counter_tests(tests);
            for test in &mut tests {
                test.threads[0].truncate(calls);
                test.threads[1].truncate(calls);
            }
            executor.execute(&tests[..1000.min(tests.len())]);
            let started = Instant::now();
            let executions = executor.execute(&tests);
            let secs = started.elapsed().as_secs_f64();
            let covered = executions.iter().filter(|e| !e.covered.is_empty()).count();
            let us = secs * 1e6 / tests.len() as f64;
            times.push(us);
            println!(
                "round {round}: {jobs} worker(s), {calls} call(s) per thread, batch {batch:>2}: {} tests in {secs:.2} s = {:.0} tests/s, {us:.1} us/test ({covered} covered their pair)",
                tests.len(),
                tests.len() as f64 / secs,
            );
        }
    }
    println!("\nbest and worst of {ROUNDS} rounds:");
    for (&(jobs, calls, batch), times) in settings.iter().zip(&us_per_test) {
        let best = times.iter().copied().fold(f64::INFINITY, f64::min);
        let worst = times.iter().copied().fold(0.0, f64::max);
        println!(
            "{jobs} worker(s), {calls} call(s) per thread, batch {batch:>2}: best {best:.1} us/test ({:.0} tests/s), worst {worst:.1} us/test",
            1e6 / best
        );
    }
}

/// Runs per request compared: 1 is one request per test, as before batching.
const BATCHES: [usize; 4] = [1, 8, 32, 64];
const ROUNDS: usize = 3;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tsafe")
}

/// `incr` on thread 0 against `get` on thread 1, on a fresh `Counter`.
fn counter_tests(n: u64) -> Vec<TestCase> {
    let call = |m: &str| Call {
        method: m.into(),
        receiver: 0,
        args: vec![],
        times: 1,
        keep: false,
        chained: None,
        scope: None,
    };
    (1..=n)
        .map(|id| TestCase {
            id,
            type_path: "tsafe::Counter".into(),
            pair: ["get".into(), "incr".into()],
            instances: vec![call("new")],
            handles: vec![],
            prefix: vec![],
            threads: [vec![call("incr")], vec![call("get")]],
            noise_seed: id,
            control: Default::default(),
        })
        .collect()
}

/// The model of `tsafe::Counter` with `new`, `incr` and `get`, bodies located in the source.
fn model() -> Model {
    let file = testdata().join("src/lib.rs");
    let source = std::fs::read_to_string(&file).expect("testdata source");
    let body_start = |name: &str| {
        let (line, text) = source
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains(&format!("pub fn {name}(&self)")))
            .expect("method in testdata");
        Span {
            file: file.clone(),
            line: line as u32 + 1,
            column: text.rfind('{').expect("one-line signature") as u32 + 1,
        }
    };
    let method = |name: &str| Method {
        name: name.into(),
        returns: Some("u64".into()),
        body_start: Some(body_start(name)),
        ..Method::default()
    };
    Model {
        format_version: 1,
        types: vec![TypeModel {
            path: "tsafe::Counter".into(),
            package: "tsafe".into(),
            name: "Counter".into(),
            span: Span {
                file: file.clone(),
                line: 1,
                column: 0,
            },
            implements_debug: true,
            constructors: vec![Constructor {
                name: "new".into(),
                returns: ReturnShape::SelfValue,
                ..Constructor::default()
            }],
            methods: vec![method("incr"), method("get")],
            ..TypeModel::default()
        }],
        ..Model::default()
    }
}
