//! [`OracleExecutor`]: runs the generator's test cases on the pool of harness workers (in
//! chunks, pipelined), reports the concurrent method pairs each run covered, judges failing
//! runs against their linearizations (and, with [`OracleConfig::results`], passing runs by
//! their results), confirms each new violation by re-running it, shrinks it when
//! [`OracleConfig::shrink`] is set, and writes it to `<out>/violations/N.json` (the test case,
//! which `cargo covcon replay` runs again) and `N.rs` (a standalone reproducer). [`replay()`]
//! runs one saved test case again.
//!
//! A file per job, each calling only the files named before it and what this file holds:
//! `run.rs` (the requests that send a test to the workers, a campaign test's control,
//! exploring a pair's smallest test), `judge.rs` (the verdict on a run and the violation it
//! shows), `confirm.rs` (a schedule that shows a violation found free, re-runs), `shrink.rs`,
//! `record.rs` (a new violation confirmed, shrunk and written; [`record::ViolationFiles`])
//! and `replay.rs`. This file holds the executor's state and the types the files share, and
//! the campaign's glue above them: [`Executor::execute`] runs chunks, each run's coverage and
//! violation (`conclude`, `judge`).
//!
//! Protocol expectations (for the runtime): a sequential run reports a panic with the
//! `thread` and `call` of the failing call as numbered in the test's threads, not in
//! execution order; a worker answers `Ping` with test id 0, answers requests in the order it
//! reads them, and exits at end of input.

mod confirm;
mod judge;
mod record;
mod replay;
mod run;
mod shrink;

use confirm::unconfirmed;
pub use judge::same_panic_note;
use record::ViolationFiles;
pub use replay::{replay, replay_with_worker, ReplayResult};

use crate::config::{OracleConfig, OracleError};
use crate::explore::Exploration;
use crate::harness::Harness;
use crate::pool::{Pool, WorkerCommand};
use crate::protocol::{Outcome, Request, Response};
use crate::results::{ResultsViolation, SequentialOutcomes};
use crate::trace;
use crate::verdict::Failure;
use analysis::Model;
use generator::{Call, Execution, Executor, StopAt, TestCase};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A thread-safety violation: a concurrent failure no linearization repeats, or (with the
/// results oracle on) a passing run whose results no linearization gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    pub kind: ViolationKind,
    pub type_path: String,
    /// The two methods involved, sorted: for a panic the failing method and the one the
    /// other thread was running, for a deadlock the methods both threads were blocked in,
    /// otherwise the pair the test was built for.
    pub methods: [String; 2],
    /// The panic message, or a description of the deadlock, crash or wrong results.
    pub message: String,
    /// Where the panic happened (`src/lib.rs:12:9`), for a panic.
    pub location: Option<String>,
    /// The concurrent run that showed it.
    pub test: TestCase,
    /// How that run ended, with each call's result.
    pub response: Response,
    /// Linearizations run sequentially, none of which failed the same way.
    pub linearizations: u32,
    /// The standalone `#[test]` reproducing it (`<out>/violations/N.rs`).
    pub reproducer: PathBuf,
    /// The test case as JSON (`<out>/violations/N.json`), for `cargo covcon replay`.
    pub json: PathBuf,
    /// (re-runs that failed the same way, re-runs made) when it was confirmed; shared by all
    /// violations with the same key, which are confirmed and written once.
    pub confirmed: (u32, u32),
    /// For a wrong result: the closest linearization and where its results differ.
    pub results: Option<ResultsViolation>,
    /// A smaller test that still shows the violation, when shrinking is on and found one; the
    /// files are written from it, and `message`, `location` and `results` are its run's.
    pub shrunk: Option<TestCase>,
    /// The message of the test as first found, when it was shrunk (for a wrong result, its
    /// observed and expected results are numbered as that test's calls).
    pub original_message: Option<String>,
    /// For a panic: a sequential order (full speed) that panicked the same way, with the same
    /// message at the same location, but at another call (`(thread, index)`), when one did
    /// (`crate::verdict::Verdict::same_panic_at`): no order fails at the failing call, yet the
    /// panic is not new to sequential runs. Of the test `message` is of.
    pub same_panic_at: Option<(crate::verdict::Order, (u8, u32))>,
}

impl Violation {
    /// [`same_panic_note`] for [`Violation::same_panic_at`], of the test the files hold.
    pub fn same_panic_note(&self) -> Option<String> {
        let (order, at) = self.same_panic_at.as_ref()?;
        Some(same_panic_note(
            self.shrunk.as_ref().unwrap_or(&self.test),
            order,
            *at,
        ))
    }
}

/// How a violation showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    Panic,
    Deadlock,
    Crash,
    /// A run that passed with results no linearization gives (the results oracle).
    WrongResult,
}

impl std::fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ViolationKind::Panic => "panic",
            ViolationKind::Deadlock => "deadlock",
            ViolationKind::Crash => "crash",
            ViolationKind::WrongResult => "wrong_result",
        })
    }
}

/// What the runs of one type came to, for telling a type that was tested from one whose
/// tests never got past their setup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeRunStats {
    pub tests: u64,
    /// Concurrent runs made for the type: its tests' runs (more than one a test under
    /// `repeat`), and the runs exploring pairs, confirming violations (a schedule searched
    /// for one found free included) and shrinking them. Sequential runs are not counted.
    pub runs: u64,
    /// Runs whose constructors or prefix failed.
    pub setup_failures: u64,
    /// The first of those failures' messages.
    pub first_setup_error: Option<String>,
    /// Bounded exhaustive exploration of each pair's smallest test, by pair (names sorted).
    pub explored: BTreeMap<[String; 2], Exploration>,
    /// Pairs whose explored smallest test passed a failing value
    /// ([`crate::explore::takes_failing_value`]): another is not explored for it.
    pub explored_failing: BTreeSet<[String; 2]>,
    /// Runs those explorations made.
    pub explore_runs: u64,
    /// Whether a run ended with threads the type started itself (`Response::own_threads`),
    /// for the report: its answers depend on time too, which the results oracle's slow runs
    /// ([`crate::results::Speed::Slow`]) leave out of the comparison.
    pub own_threads: bool,
    /// Panics the verdict explained only by the failing thread's calls run alone with pauses
    /// ([`crate::verdict::Pace::Paused`]): the type reads a clock covcon does not control
    /// (through a dependency, a syscall), so its verdicts fall back on waiting for real.
    pub clock_outside: u64,
    /// Deadlocks no order explained in which a thread was blocked holding a scope's guard
    /// (`generator::Call::scope`), not reported: holding a guard while calling into the type
    /// may be what its contract forbids (dashmap's entries).
    pub guard_held_deadlocks: u64,
    /// Wrong results that a rewrite of the test with its coalesced calls' closures as they
    /// ran gives (`ResultsConfig::coalesced_variants`), not reported.
    pub coalesced_explained: u64,
    /// Failing runs whose verdict ran out of time ([`crate::verdict::Verdict::cut_short`]),
    /// not reported.
    pub unjudged: u64,
    /// The fastest setup of a passing campaign run (`Response::setup_us`), in microseconds.
    pub fastest_setup_us: Option<u64>,
}

/// Whether a test whose run's setup (building and dropping its instances and prefix) took
/// `setup_us` is too slow to explore, when the type's fastest took `fastest_us`: 5 ms and 16
/// times the fastest. An exploration runs the test up to 400 times (`EXPLORE_RUNS`); moka 0.9's
/// `SegmentedCache::new(2, 3072)` (4,096 caches) takes 120–470 ms to set up where
/// `new(2, 3)` takes 0.1–0.3 ms, and its campaign spent most of its time exploring such tests.
/// A later test of the pair with a faster setup is explored instead; a type whose every setup
/// is slow (a database opened per test) is explored as before.
pub(crate) fn slow_to_explore(setup_us: u64, fastest_us: Option<u64>) -> bool {
    const SLOW_TO_EXPLORE_US: u64 = 5_000;
    setup_us >= SLOW_TO_EXPLORE_US
        && fastest_us.is_some_and(|fastest| setup_us >= fastest.saturating_mul(16))
}

/// Counts over everything an executor has run so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RunStats {
    /// Concurrent test runs requested by the generator.
    pub tests: u64,
    /// Of those, runs that panicked in a suffix, deadlocked or crashed.
    pub failed: u64,
    /// Failed runs a linearization repeated (ordinary bugs, expected blocking).
    pub explained: u64,
    /// Runs judged violations, wrong results included (duplicates of a known violation too).
    pub violations: u64,
    /// Runs whose constructors or prefix failed, so nothing concurrent was tested.
    pub setup_failures: u64,
    /// Deadlocks no linearization explained but no re-run repeated either: most likely a run
    /// starved of CPU past its timeout, so they are not reported.
    pub unconfirmed_deadlocks: u64,
    /// Sequential runs made for verdicts, concurrent re-runs made to confirm violations, and
    /// concurrent runs of candidates while shrinking them.
    pub sequential_runs: u64,
    pub confirm_runs: u64,
    pub shrink_runs: u64,
    /// Shrunk tests left out because their re-runs did not show the violation as the
    /// original's did (the files keep the original).
    pub shrunk_dropped: u64,
    /// Worker processes started, replacements of crashed or deadlocked ones included.
    pub workers_started: u64,
    /// Campaign runs scheduled by the controlled scheduler, and of those the ones where
    /// control ended early (a thread ran too long without a schedule point, awake).
    pub controlled_runs: u64,
    pub uncontrolled_runs: u64,
    /// Runs made exploring pairs' smallest tests under every schedule with at most two
    /// preemptions.
    pub explore_runs: u64,
}

impl RunStats {
    /// The counts of two runs together (shards of one run merged).
    pub fn add(&self, other: &RunStats) -> RunStats {
        RunStats {
            tests: self.tests + other.tests,
            failed: self.failed + other.failed,
            explained: self.explained + other.explained,
            violations: self.violations + other.violations,
            setup_failures: self.setup_failures + other.setup_failures,
            unconfirmed_deadlocks: self.unconfirmed_deadlocks + other.unconfirmed_deadlocks,
            sequential_runs: self.sequential_runs + other.sequential_runs,
            confirm_runs: self.confirm_runs + other.confirm_runs,
            shrink_runs: self.shrink_runs + other.shrink_runs,
            shrunk_dropped: self.shrunk_dropped + other.shrunk_dropped,
            controlled_runs: self.controlled_runs + other.controlled_runs,
            uncontrolled_runs: self.uncontrolled_runs + other.uncontrolled_runs,
            explore_runs: self.explore_runs + other.explore_runs,
            workers_started: self.workers_started + other.workers_started,
        }
    }
}

/// The oracle as the generator's [`Executor`].
pub struct OracleExecutor {
    pool: Pool,
    config: OracleConfig,
    /// Where the instrumented copy is, to turn panic locations into the user's paths.
    copy_root: PathBuf,
    /// The violations written so far, and where the next one's files go.
    files: ViolationFiles,
    stats: Stats,
    per_type: Mutex<BTreeMap<String, TypeRunStats>>,
    /// When the campaign's current type is out of time (see `Executor::set_deadline`).
    deadline: Option<Instant>,
    /// Which violation ends the current type's search (`Executor::set_stop_at`), and whether
    /// the batch being run has one: its other tests are then run for their coverage only,
    /// neither judged nor explored, and its chunks not yet started are left out.
    stop_at: StopAt,
    /// Keys of violations a baseline lists (`Executor::set_known`): they end no search.
    known: BTreeSet<String>,
    search_over: AtomicBool,
    /// Per type, about how many schedule points a controlled run passes (PCT spreads its
    /// change points over them): the most seen lately.
    steps: Mutex<HashMap<String, u32>>,
    /// Per type, the verdict's pass that explained its last explained failure
    /// ([`crate::verdict::Verdict::pass`]), which the next verdict makes first.
    explaining_pass: Mutex<HashMap<String, usize>>,
    /// Types a failure of which only a pass past the full-speed one explained (or only the
    /// failing thread alone with real pauses): their failures and shrinking candidates get
    /// every pass ([`OracleExecutor::verdict_passes`]).
    explained_slowly: Mutex<BTreeSet<String>>,
    /// What the campaign's adaptive `repeat` reads: tests per pair, a run's time per type.
    pace: Mutex<run::RepeatPace>,
}

impl OracleExecutor {
    /// Starts `config.jobs` workers of a prepared harness.
    pub fn new(
        harness: &Harness,
        config: &OracleConfig,
        model: &Model,
    ) -> Result<OracleExecutor, OracleError> {
        let mut executor = OracleExecutor::with_worker(&harness.binary, config, model)?;
        executor.files.prepared = harness.types.clone();
        executor.copy_root = harness.copy_root.clone();
        Ok(executor)
    }

    /// Starts `config.jobs` workers from `program`: a harness binary, or any stand-in that
    /// speaks the worker protocol (`oracle::protocol`) on stdin/stdout.
    pub fn with_worker(
        program: &Path,
        config: &OracleConfig,
        model: &Model,
    ) -> Result<OracleExecutor, OracleError> {
        OracleExecutor::start(worker_command(program, config), config, model)
    }

    pub(crate) fn start(
        command: WorkerCommand,
        config: &OracleConfig,
        model: &Model,
    ) -> Result<OracleExecutor, OracleError> {
        let pool = Pool::start(command, config.jobs)?;
        let files = ViolationFiles::open(config.out_dir.join("violations"), model)?;
        let copy_root = config.out_dir.join("copy");
        let mut config = config.clone();
        if let Some(results) = &mut config.results {
            // What the types' contracts leave open is not compared (their documented
            // approximate answers), in every campaign that runs the results oracle.
            results.learn_contracts(model);
        }
        Ok(OracleExecutor {
            pool,
            config,
            copy_root,
            files,
            stats: Stats::default(),
            per_type: Mutex::new(BTreeMap::new()),
            deadline: None,
            stop_at: StopAt::Never,
            known: BTreeSet::new(),
            search_over: AtomicBool::new(false),
            steps: Mutex::new(HashMap::new()),
            explaining_pass: Mutex::new(HashMap::new()),
            explained_slowly: Mutex::new(BTreeSet::new()),
            pace: Mutex::new(run::RepeatPace::default()),
        })
    }

    /// Forgets what earlier campaigns learnt, so that the next one runs as a campaign of a
    /// fresh `cargo covcon` would: each type's run stats and explored pairs, the violations
    /// recorded (the next sighting is confirmed, shrunk and written again, as a first one),
    /// the verdict passes that explained and the types explained slowly, the schedule points
    /// seen and the pace of `--repeat auto`. The workers stay. `cargo covcon bench` calls it
    /// before each of its campaigns: without it, a type's first campaign explored its pairs
    /// and confirmed its violations for every later seed and strategy.
    pub fn start_afresh(&mut self) {
        fn forget<T: Default>(m: &mut Mutex<T>) {
            *m.get_mut().unwrap_or_else(|p| p.into_inner()) = T::default();
        }
        forget(&mut self.per_type);
        forget(&mut self.steps);
        forget(&mut self.explaining_pass);
        forget(&mut self.explained_slowly);
        forget(&mut self.pace);
        self.files.forget_known();
        self.deadline = None;
        self.stop_at = StopAt::Never;
        *self.search_over.get_mut() = false;
    }

    /// What the runs of each type came to so far, by type path.
    pub fn type_stats(&self) -> BTreeMap<String, TypeRunStats> {
        self.per_type
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// What has been run so far.
    pub fn stats(&self) -> RunStats {
        let s = &self.stats;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        RunStats {
            tests: get(&s.tests),
            failed: get(&s.failed),
            explained: get(&s.explained),
            violations: get(&s.violations),
            setup_failures: get(&s.setup_failures),
            unconfirmed_deadlocks: get(&s.unconfirmed_deadlocks),
            sequential_runs: get(&s.sequential_runs),
            confirm_runs: get(&s.confirm_runs),
            shrink_runs: get(&s.shrink_runs),
            shrunk_dropped: get(&s.shrunk_dropped),
            controlled_runs: get(&s.controlled_runs),
            uncontrolled_runs: get(&s.uncontrolled_runs),
            explore_runs: get(&s.explore_runs),
            workers_started: self.pool.spawned(),
        }
    }

    /// Number of worker processes running tests in parallel.
    pub fn jobs(&self) -> usize {
        self.pool.jobs()
    }

    /// Runs a chunk of tests on the calling pool thread's worker, their concurrent runs in
    /// batches (at least two, pipelined), then judges the failing ones, then explores the
    /// pairs not yet explored; once a violation ends the type's search, nothing more is
    /// judged or explored.
    fn run_chunk(&self, tests: &[TestCase]) -> Vec<Execution<Violation>> {
        let tests: Vec<TestCase> = tests.iter().map(|t| self.scheduled(t)).collect();
        let per_request = tests.len().div_ceil(2).clamp(1, self.config.batch.max(1));
        let requests: Vec<Request> = tests
            .chunks(per_request)
            .map(|batch| self.batch_request(batch))
            .collect();
        let responses = self.pool.request_all(&requests);
        let mut executions: Vec<Execution<Violation>> = tests
            .iter()
            .zip(responses)
            .map(|(test, response)| {
                let judge = !self.search_over.load(Ordering::Relaxed);
                let execution = self.conclude(test, response, judge);
                self.note_search(&execution);
                execution
            })
            .collect();
        // Exploring a pair's smallest test (up to hundreds of runs) comes after the chunk's
        // own tests are judged: a violation one of them shows ends the search first.
        for (test, execution) in tests.iter().zip(&mut executions) {
            if self.search_over.load(Ordering::Relaxed) {
                break;
            }
            if let Some(setup_us) = execution.setup_us {
                let fastest = lock(&self.per_type)
                    .get(&test.type_path)
                    .and_then(|stats| stats.fastest_setup_us);
                if slow_to_explore(setup_us, fastest) {
                    continue;
                }
            }
            let judge = |candidate: &TestCase, response| self.judge(candidate, response).0;
            if let Some(violation) = self.explore(test, judge) {
                execution.violation.get_or_insert(violation);
                self.note_search(execution);
            }
        }
        executions
    }

    /// Marks the type's search over when `execution`'s violation ends it.
    fn note_search(&self, execution: &Execution<Violation>) {
        if execution
            .violation
            .as_ref()
            .is_some_and(|v| self.ends_search(v))
        {
            self.search_over.store(true, Ordering::Relaxed);
        }
    }

    /// Whether `violation` ends its type's search (`Executor::set_stop_at`).
    fn ends_search(&self, violation: &Violation) -> bool {
        if !self.known.is_empty() && self.known.contains(&key_of(violation)) {
            return false;
        }
        match self.stop_at {
            StopAt::Never => false,
            StopAt::Any => true,
            StopAt::Conclusive => self.conclusive(violation),
        }
    }

    /// The coverage of one concurrent run, and (when `judge` is set) the violation it shows,
    /// if any.
    fn conclude(
        &self,
        test: &TestCase,
        mut response: Response,
        judge: bool,
    ) -> Execution<Violation> {
        let count = |counter: &AtomicU64| counter.fetch_add(1, Ordering::Relaxed);
        count(&self.stats.tests);
        self.pace_with(test, &response);
        if let Some(schedule) = &response.schedule {
            count(&self.stats.controlled_runs);
            if schedule.free {
                count(&self.stats.uncontrolled_runs);
            }
            let seen = u32::try_from(schedule.steps).unwrap_or(u32::MAX).max(2);
            let mut steps = lock(&self.steps);
            let estimate = steps.entry(test.type_path.clone()).or_insert(seen);
            *estimate = seen.max(*estimate - *estimate / 8);
        }
        // A repeated test's answer is its last run's: replays need that run's seed.
        let sent = test;
        let last_run = run_of(sent, &response);
        let test = last_run.as_ref();
        let covered = response
            .covered
            .take()
            .unwrap_or_else(|| trace::covered_pairs(&response.events, &test.type_path));
        let failed = Failure::of(&response.outcome).is_some();
        let (passed, setup_us) = (response.outcome == Outcome::Passed, response.setup_us);
        let setup_failed = !failed && response.outcome != Outcome::Passed;
        if setup_failed {
            count(&self.stats.setup_failures);
        }
        self.note_type_run(test, &response, setup_failed);
        let (violation, hung) = if judge {
            self.judge(sent, response)
        } else {
            (None, Vec::new())
        };
        let looped_alone = hung.iter().any(|(_, looped)| *looped);
        let hung = hung.into_iter().map(|(call, _)| call).collect();
        match (&violation, failed) {
            (Some(_), _) => count(&self.stats.violations),
            (None, true) => count(&self.stats.explained),
            (None, false) => 0,
        };
        if failed {
            count(&self.stats.failed);
        }
        Execution {
            test_id: test.id,
            covered,
            violation,
            hung,
            setup_us: (passed && setup_us > 0).then_some(setup_us),
            looped_alone,
            setup_failed,
        }
    }

    /// The violation the runs `response` answers of `test` (as sent) show, confirmed and
    /// written, and the calls that hung alone (see [`Execution::hung`]), each with whether it
    /// ran until the timeout ([`Execution::looped_alone`]). The answered run is
    /// judged as the run it was (its own seed), and after it the earlier runs of a repeated
    /// test that answered otherwise (`Response::others`, results captured), each likewise,
    /// against the same sequential runs: the orders of one test's calls are run once for all
    /// its runs.
    fn judge(
        &self,
        test: &TestCase,
        mut response: Response,
    ) -> (Option<Violation>, Vec<(Call, bool)>) {
        let others = std::mem::take(&mut response.others);
        let mut outcomes = SequentialOutcomes::new();
        let mut hung = Vec::new();
        let passes = self.verdict_passes(test);
        let run = run_of(test, &response);
        let mut violation = self.violation_in(&run, response, &mut outcomes, &mut hung, passes);
        for other in others {
            if violation.is_some() {
                break;
            }
            let run = run_of(test, &other);
            violation = self.violation_in(&run, other, &mut outcomes, &mut hung, passes);
        }
        let violation =
            violation.and_then(|violation| self.record(violation, &mut outcomes, passes));
        (violation, hung)
    }

    fn note_type_run(&self, test: &TestCase, response: &Response, setup_failed: bool) {
        self.type_stats_of(test, |stats| {
            stats.own_threads |= response.own_threads;
            if response.outcome == Outcome::Passed && response.setup_us > 0 {
                let fastest = stats.fastest_setup_us.get_or_insert(response.setup_us);
                *fastest = (*fastest).min(response.setup_us);
            }
            stats.tests += 1;
            stats.runs += response.runs.max(1);
            if setup_failed {
                stats.setup_failures += 1;
                if stats.first_setup_error.is_none() {
                    stats.first_setup_error = Some(match &response.outcome {
                        Outcome::SetupFailed { message } => message.clone(),
                        other => format!("{other:?}"),
                    });
                }
            }
        });
    }
}

impl Executor for OracleExecutor {
    type Violation = Violation;

    fn execute(&mut self, tests: &[TestCase]) -> Vec<Execution<Violation>> {
        let chunk = chunk_size(tests.len(), self.jobs(), self.config.batch);
        let chunks: Vec<&[TestCase]> = tests.chunks(chunk).collect();
        let deadline = self.deadline;
        let first = chunks.first().copied();
        self.search_over.store(false, Ordering::Relaxed);
        self.pool
            .map(&chunks, |chunk| {
                // Chunks not started by the deadline, or once a violation ended the type's
                // search, are left out; the first always runs, so a campaign makes progress
                // however short its budget.
                let late = deadline.is_some_and(|d| Instant::now() >= d)
                    || self.search_over.load(Ordering::Relaxed);
                if late && first.is_none_or(|f| f.as_ptr() != chunk.as_ptr()) {
                    return Vec::new();
                }
                self.run_chunk(chunk)
            })
            .into_iter()
            .flatten()
            .collect()
    }

    /// One no re-run repeated does not end the type's search: it may show again, and be
    /// confirmed then.
    fn conclusive(&self, violation: &Violation) -> bool {
        !unconfirmed(violation.confirmed)
    }

    fn violation_key(&self, violation: &Violation) -> String {
        key_of(violation)
    }

    fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    fn set_stop_at(&mut self, stop: StopAt) {
        self.stop_at = stop;
    }

    fn set_known(&mut self, known: &BTreeSet<String>) {
        self.known.clone_from(known);
    }
}

fn key_of(violation: &Violation) -> String {
    violation_key(
        &violation.type_path,
        &violation.methods,
        violation.kind.to_string().as_str(),
    )
}

/// The key of a violation of `kind` (`panic`, `deadlock`, `crash`, `wrong_result`) in the pair
/// `methods` of `type_path`, as `Executor::violation_key` gives it: a baseline's entries become
/// the campaign's known keys through it.
pub fn violation_key(type_path: &str, methods: &[String; 2], kind: &str) -> String {
    let [a, b] = if methods[0] <= methods[1] {
        [&methods[0], &methods[1]]
    } else {
        [&methods[1], &methods[0]]
    };
    format!("{type_path}::{{{a}, {b}}} {kind}")
}

/// The directory under the output directory that workers run in ([`WorkerCommand::dir`]).
pub const WORKER_DIR: &str = "worker-cwd";

/// The run of `test` that `response` answers: a repeated test's k-th run ran under its own
/// seed (its schedule's, or `noise_seed + k - 1` for a free run), which replays it.
fn run_of<'t>(test: &'t TestCase, response: &Response) -> std::borrow::Cow<'t, TestCase> {
    let seed = match &response.schedule {
        Some(schedule) => schedule.seed,
        None => test
            .noise_seed
            .wrapping_add(response.runs.saturating_sub(1)),
    };
    if seed == test.noise_seed {
        std::borrow::Cow::Borrowed(test)
    } else {
        std::borrow::Cow::Owned(TestCase {
            noise_seed: seed,
            ..test.clone()
        })
    }
}

/// The worker command for a harness binary: no arguments, `COVCON_VERBOSE` when verbose, run
/// in [`WORKER_DIR`] under the output directory (an absolute path, as a relative `--out` is
/// meant from covcon's own directory).
fn worker_command(program: &Path, config: &OracleConfig) -> WorkerCommand {
    let mut env = Vec::new();
    if config.verbose {
        env.push(("COVCON_VERBOSE".to_string(), "1".to_string()));
    }
    if let Some(mutant) = config.mutant {
        env.push((crate::MUTANT_ENV.to_string(), mutant.to_string()));
    }
    let dir = std::path::absolute(config.out_dir.join(WORKER_DIR)).ok();
    WorkerCommand {
        // Absolute: a relative program with another working directory is ambiguous.
        program: std::path::absolute(program).unwrap_or_else(|_| program.to_path_buf()),
        args: Vec::new(),
        env,
        dir,
        verbose: config.verbose,
    }
}

/// Tests per chunk: about four chunks per worker, so a chunk slowed by a failure to judge
/// does not hold the batch up, and at most two batches of `batch` (at least 64 tests), so a
/// chunk's answers come back in good time.
fn chunk_size(tests: usize, jobs: usize, batch: usize) -> usize {
    tests
        .div_ceil(jobs.max(1) * 4)
        .clamp(1, (2 * batch).max(64))
}

#[derive(Default)]
struct Stats {
    tests: AtomicU64,
    failed: AtomicU64,
    explained: AtomicU64,
    violations: AtomicU64,
    setup_failures: AtomicU64,
    unconfirmed_deadlocks: AtomicU64,
    sequential_runs: AtomicU64,
    confirm_runs: AtomicU64,
    shrink_runs: AtomicU64,
    shrunk_dropped: AtomicU64,
    controlled_runs: AtomicU64,
    uncontrolled_runs: AtomicU64,
    explore_runs: AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
/// A test of `type_path` built by `new()`, with no prefix, aimed at `pair`.
fn two_threads(type_path: &str, pair: [&str; 2], threads: [Vec<Call>; 2]) -> TestCase {
    TestCase {
        id: 1,
        type_path: type_path.into(),
        pair: pair.map(String::from),
        instances: vec![Call::new("new", 0, vec![])],
        handles: vec![],
        prefix: vec![],
        threads,
        noise_seed: 0,
        control: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::slow_to_explore;

    #[test]
    fn a_test_is_too_slow_to_explore_only_beside_faster_setups_of_its_type() {
        // moka's SegmentedCache: 3072 segments against 3.
        assert!(slow_to_explore(120_000, Some(150)));
        // 3 ms is not slow, whatever the fastest.
        assert!(!slow_to_explore(3_000, Some(50)));
        // A database opened per test: every setup slow alike.
        assert!(!slow_to_explore(40_000, Some(25_000)));
        // Nothing to compare with yet.
        assert!(!slow_to_explore(120_000, None));
    }
}
