//! [`OracleExecutor`]: runs the generator's test cases on the pool of harness workers (in
//! chunks, pipelined), reports the concurrent method pairs each run covered, judges failing
//! runs against their linearizations (and, with [`OracleConfig::results`], passing runs by
//! their results), confirms each new violation by re-running it, shrinks it when
//! [`OracleConfig::shrink`] is set, and writes it to `<out>/violations/N.json` (the test case,
//! which `cargo covcon replay` runs again) and `N.rs` (a standalone reproducer). [`replay`]
//! runs one saved test case again.
//!
//! Protocol expectations (for the runtime): a sequential run reports a panic with the
//! `thread` and `call` of the failing call as numbered in the test's threads, not in
//! execution order; a worker answers `Ping` with test id 0, answers requests in the order it
//! reads them, and exits at end of input.

use crate::config::{controlled, mix, NoiseLevel, OracleConfig, OracleError, Scheduling};
use crate::explore::{self, Exploration};
use crate::harness::{Harness, PreparedType};
use crate::pool::{Pool, WorkerCommand};
use crate::protocol::{BatchRun, Control, Noise, Outcome, Request, Response};
use crate::reproducer::{render_reproducer, render_results_reproducer};
use crate::results::{
    allowed_outcomes, check_results_until, holding_guard, stuck_call, AllowedOutcomes,
    ResultsVerdict, ResultsViolation, SequentialOutcomes, Speed,
};
use crate::saved::{SavedOracle, SavedTest};
use crate::trace;
use crate::verdict::{self, Failure, Order, Pace};
use analysis::{Model, TypeModel};
use generator::{Call, Execution, Executor, TestCase};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    /// ([`explore::takes_failing_value`]): another is not explored for it.
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
    /// Failing runs whose verdict ran out of time ([`crate::verdict::Verdict::cut_short`]),
    /// not reported.
    pub unjudged: u64,
}

impl TypeRunStats {
    /// Whether the caller may explore `pair`'s smallest test now (`failing`: it passes a
    /// failing value, [`explore::takes_failing_value`]), marking the exploration as under
    /// way. A pair is explored once, and once more when a later test of it passes a failing
    /// value the first did not: an error path the first never ran.
    fn claim_exploration(&mut self, pair: &[String; 2], failing: bool) -> bool {
        let done = self.explored.get(pair).map(|e| e.explored > 0);
        let again = failing && done == Some(true) && !self.explored_failing.contains(pair);
        if done.is_some() && !again {
            return false;
        }
        if failing {
            self.explored_failing.insert(pair.clone());
        }
        if !again {
            // Under way: another test of the pair does not start one meanwhile.
            self.explored.insert(pair.clone(), Exploration::default());
        }
        true
    }

    /// What a claimed exploration of `pair` came to; `keep` false when it did not run under
    /// control, so that another test of the pair may try. A second exploration adds to the
    /// first ([`Exploration::and`]).
    fn record_exploration(&mut self, pair: [String; 2], exploration: Exploration, keep: bool) {
        self.explore_runs += u64::from(exploration.explored);
        let first = self.explored.remove(&pair).filter(|e| e.explored > 0);
        if !keep {
            self.explored_failing.remove(&pair);
        }
        match (keep, first) {
            (true, Some(first)) => self.explored.insert(pair, first.and(exploration)),
            (true, None) => self.explored.insert(pair, exploration),
            (false, Some(first)) => self.explored.insert(pair, first),
            (false, None) => None,
        };
    }
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
    types: HashMap<String, TypeModel>,
    /// How the harness instantiated each type (empty for a stand-in worker).
    prepared: Vec<PreparedType>,
    /// Where the instrumented copy is, to turn panic locations into the user's paths.
    copy_root: PathBuf,
    violations_dir: PathBuf,
    /// Violations already confirmed and written, by key.
    known: Mutex<HashMap<String, Recorded>>,
    next_number: AtomicU32,
    stats: Stats,
    per_type: Mutex<BTreeMap<String, TypeRunStats>>,
    /// When the campaign's current type is out of time (see `Executor::set_deadline`).
    deadline: Option<Instant>,
    /// Per type, about how many schedule points a controlled run passes (PCT spreads its
    /// change points over them): the most seen lately.
    steps: Mutex<HashMap<String, u32>>,
    /// Per type, the verdict's pass that explained its last explained failure
    /// ([`verdict::Verdict::pass`]), which the next verdict makes first.
    explaining_pass: Mutex<HashMap<String, usize>>,
}

impl OracleExecutor {
    /// Starts `config.jobs` workers of a prepared harness.
    pub fn new(
        harness: &Harness,
        config: &OracleConfig,
        model: &Model,
    ) -> Result<OracleExecutor, OracleError> {
        let mut executor = OracleExecutor::with_worker(&harness.binary, config, model)?;
        executor.prepared = harness.types.clone();
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
        let violations_dir = config.out_dir.join("violations");
        std::fs::create_dir_all(&violations_dir)
            .map_err(|e| OracleError::io(format!("creating {}", violations_dir.display()), e))?;
        let next_number = AtomicU32::new(highest_number(&violations_dir) + 1);
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
            types: model
                .types
                .iter()
                .map(|t| (t.path.clone(), t.clone()))
                .collect(),
            prepared: Vec::new(),
            copy_root,
            violations_dir,
            known: Mutex::new(HashMap::new()),
            next_number,
            stats: Stats::default(),
            per_type: Mutex::new(BTreeMap::new()),
            deadline: None,
            steps: Mutex::new(HashMap::new()),
            explaining_pass: Mutex::new(HashMap::new()),
        })
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
    /// batches (at least two, pipelined), then judges the failing ones.
    fn run_chunk(&self, tests: &[TestCase]) -> Vec<Execution<Violation>> {
        let tests: Vec<TestCase> = tests.iter().map(|t| self.scheduled(t)).collect();
        let per_request = tests.len().div_ceil(2).clamp(1, self.config.batch.max(1));
        let requests: Vec<Request> = tests
            .chunks(per_request)
            .map(|batch| self.batch_request(batch))
            .collect();
        let responses = self.pool.request_all(&requests);
        tests
            .iter()
            .zip(responses)
            .map(|(test, response)| {
                let mut execution = self.conclude(test, response);
                if let Some(violation) = self.explore(test) {
                    execution.violation.get_or_insert(violation);
                }
                execution
            })
            .collect()
    }

    /// Explores the smallest test of `test`'s pair under every schedule with at most two
    /// preemptions, once per pair and once more for a test passing a failing value
    /// ([`TypeRunStats::claim_exploration`], `explore.rs`), unless runs are free or the type's
    /// time is up. Answers the violation a failing schedule shows.
    fn explore(&self, test: &TestCase) -> Option<Violation> {
        let late = || self.deadline.is_some_and(|d| Instant::now() >= d);
        if self.config.scheduling == Scheduling::Free || late() {
            return None;
        }
        let base = explore::smallest(test)?;
        let mut pair = test.pair.clone();
        pair.sort();
        {
            let mut per_type = lock(&self.per_type);
            let stats = per_type.entry(test.type_path.clone()).or_default();
            // At most about half a type's runs go to exploring: a type of many pairs (or
            // long methods) keeps time for the campaign's own tests, and the pairs not yet
            // explored get their turn as the tests go on.
            if stats.explore_runs > stats.tests
                || !stats.claim_exploration(&pair, explore::takes_failing_value(&base))
            {
                return None;
            }
        }
        let mut tree = explore::Tree::new(EXPLORE_RUNS, EXPLORE_POINTS);
        let mut found = None;
        let mut keep = true;
        // The failures a sequential order explained: the same failure of the same calls is
        // judged the same whatever the schedule, so it is not judged again.
        let mut explained: Vec<Failure> = Vec::new();
        'runs: loop {
            let schedules = tree.next(self.config.batch.max(1));
            if schedules.is_empty() || late() {
                break;
            }
            let candidates: Vec<TestCase> = schedules
                .iter()
                .map(|&control| TestCase {
                    control,
                    ..base.clone()
                })
                .collect();
            let request = self.batch_of(&candidates, 1);
            let responses = self.pool.request_all(std::slice::from_ref(&request));
            self.count_runs(&self.stats.explore_runs, test, responses.len() as u64);
            for (candidate, response) in candidates.iter().zip(responses) {
                let Some(schedule) = response.schedule.clone() else {
                    // Not run under control (a setup that failed, a worker that cannot):
                    // nothing was explored, and another test of the pair may try.
                    keep = false;
                    break 'runs;
                };
                tree.ran(candidate.control, schedule.steps, schedule.ordered_all());
                let Some(failure) = Failure::of(&response.outcome) else {
                    continue;
                };
                let deadlock = matches!(failure, Failure::Deadlock { .. });
                if explained.contains(&failure) {
                    tree.explained(deadlock);
                    continue;
                }
                found = self.judge(candidate, response).0;
                if found.is_some() {
                    tree.failed();
                    break 'runs;
                }
                tree.explained(deadlock);
                explained.push(failure);
            }
        }
        let exploration = tree.exploration();
        let mut per_type = lock(&self.per_type);
        let stats = per_type.entry(test.type_path.clone()).or_default();
        stats.record_exploration(pair, exploration, keep);
        found
    }

    /// `test` with the control its runs get: the one it has, or one drawn from its noise seed
    /// by [`OracleConfig::scheduling`].
    fn scheduled(&self, test: &TestCase) -> TestCase {
        let mut test = test.clone();
        if test.control.is_free() {
            let steps = self.steps_of(&test.type_path);
            test.control = self.config.scheduling.control(test.noise_seed, steps);
        }
        test
    }

    /// About how many schedule points a controlled run of `type_path` passes.
    fn steps_of(&self, type_path: &str) -> u32 {
        lock(&self.steps)
            .get(type_path)
            .copied()
            .unwrap_or(DEFAULT_STEPS)
    }

    /// The coverage of one concurrent run, and the violation it shows, if any.
    fn conclude(&self, test: &TestCase, mut response: Response) -> Execution<Violation> {
        let count = |counter: &AtomicU64| counter.fetch_add(1, Ordering::Relaxed);
        count(&self.stats.tests);
        // A repeated test's answer is its last run's: replays need that run's seed.
        let seed = match &response.schedule {
            Some(schedule) => {
                count(&self.stats.controlled_runs);
                if schedule.free {
                    count(&self.stats.uncontrolled_runs);
                }
                let seen = u32::try_from(schedule.steps).unwrap_or(u32::MAX).max(2);
                let mut steps = lock(&self.steps);
                let estimate = steps.entry(test.type_path.clone()).or_insert(seen);
                *estimate = seen.max(*estimate - *estimate / 8);
                schedule.seed
            }
            None => test
                .noise_seed
                .wrapping_add(response.runs.saturating_sub(1)),
        };
        let last_run;
        let test = if seed == test.noise_seed {
            test
        } else {
            last_run = TestCase {
                noise_seed: seed,
                ..test.clone()
            };
            &last_run
        };
        let covered = response
            .covered
            .take()
            .unwrap_or_else(|| trace::covered_pairs(&response.events, &test.type_path));
        let failed = Failure::of(&response.outcome).is_some();
        let setup_failed = !failed && response.outcome != Outcome::Passed;
        if setup_failed {
            count(&self.stats.setup_failures);
        }
        self.note_type_run(test, &response, setup_failed);
        let (violation, hung) = self.judge(test, response);
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
        }
    }

    /// The violation a run of `test` shows, confirmed and written, and the calls that hung
    /// alone (see [`Execution::hung`]).
    fn judge(&self, test: &TestCase, response: Response) -> (Option<Violation>, Vec<Call>) {
        let mut outcomes = SequentialOutcomes::new();
        let mut hung = Vec::new();
        let violation = self
            .violation_in(test, response, &mut outcomes, &mut hung)
            .and_then(|violation| self.record(violation, &mut outcomes));
        (violation, hung)
    }

    fn note_type_run(&self, test: &TestCase, response: &Response, setup_failed: bool) {
        self.type_stats_of(test, |stats| {
            stats.own_threads |= response.own_threads;
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

    /// The verdict pass that explained the last explained failure of `test`'s type.
    fn explaining_pass_of(&self, test: &TestCase) -> Option<usize> {
        let passes = self
            .explaining_pass
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        passes.get(&test.type_path).copied()
    }

    fn note_explaining_pass(&self, test: &TestCase, pass: Option<usize>) {
        if let Some(pass) = pass {
            self.explaining_pass
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .insert(test.type_path.clone(), pass);
        }
    }

    /// Adds `n` concurrent runs of `test` to `counter` and to its type's
    /// [`TypeRunStats::runs`].
    fn count_runs(&self, counter: &AtomicU64, test: &TestCase, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
        self.type_stats_of(test, |stats| stats.runs += n);
    }

    /// Changes the run stats of `test`'s type.
    fn type_stats_of(&self, test: &TestCase, change: impl FnOnce(&mut TypeRunStats)) {
        let mut per_type = self
            .per_type
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        change(per_type.entry(test.type_path.clone()).or_default());
    }

    /// The violation a run of `test` shows, judged but not yet confirmed or written: a
    /// failure no linearization repeats, or (with the results oracle on) a passing run whose
    /// results no linearization gives. `outcomes` keeps the sequential runs of `test`; `hung`
    /// gets the call a sequential order blocked in when that explained a failure (a call
    /// that hangs alone, such as `reserve(usize::MAX)`: not worth generating again).
    fn violation_in(
        &self,
        test: &TestCase,
        response: Response,
        outcomes: &mut SequentialOutcomes,
        hung: &mut Vec<Call>,
    ) -> Option<Violation> {
        if let Some(failure) = Failure::of(&response.outcome) {
            let mut last = None;
            let pause_us = verdict::alone_pause(response.elapsed_us);
            let verdict = verdict::judge(
                test,
                &failure,
                pause_us,
                self.explaining_pass_of(test),
                self.deadline
                    .map(|d| (d + RECORD_GRACE).max(Instant::now() + VERDICT_LEAST)),
                |order, pace| {
                    let response = self.paced_sequential(test, order, pace);
                    let outcome = response.outcome.clone();
                    last = Some(response);
                    outcome
                },
            );
            self.note_explaining_pass(test, verdict.pass);
            if verdict.cut_short {
                self.type_stats_of(test, |stats| stats.unjudged += 1);
                return None;
            }
            if verdict.alone {
                self.type_stats_of(test, |stats| stats.clock_outside += 1);
            }
            if !verdict.violation {
                // The run that explained the failure is the last one made.
                if let (Some((order, Outcome::Deadlocked { .. })), Some(last)) =
                    (&verdict.explained_by, &last)
                {
                    let at = stuck_call(test, order, &last.events);
                    let call = at.and_then(|at| {
                        let (thread, index) = order[at];
                        test.threads[thread as usize].get(index as usize)
                    });
                    hung.extend(call.cloned());
                }
                return None;
            }
            // A scope runs whole in the orders above; a user's thread may let the other
            // thread's calls run while it holds the guard. If one thread's scope with the
            // other's calls made inside it panics the same way, that single-threaded order
            // explains the run (a vacant entry's key taken before the entry is filled panics
            // alone too): no violation.
            if let Failure::Panic {
                message, location, ..
            } = &failure
            {
                // Calls that keep locals cannot be moved into the other thread's scope (their
                // locals are numbered by thread): with those orders untried, no report.
                for inside in scope_interiors(test)? {
                    let order: Vec<(u8, u32)> = (0..inside.threads[0].len() as u32)
                        .map(|i| (0, i))
                        .collect();
                    let run = self.paced_sequential(&inside, &order, &Pace::Full);
                    if let Outcome::Panicked {
                        message: m,
                        location: l,
                        ..
                    } = &run.outcome
                    {
                        if verdict::same_message(message, m)
                            && (location.is_none() || l.is_none() || location == l)
                        {
                            return None;
                        }
                    }
                }
            }
            // Blocked while a thread held a scope's guard (two threads each holding a map's
            // entry while calling into the map): the test's own use of the guard may be what
            // the type's contract forbids, so no deadlock of it is reported.
            if matches!(failure, Failure::Deadlock { .. })
                && holding_guard(&response.events).contains(&true)
            {
                self.type_stats_of(test, |stats| stats.guard_held_deadlocks += 1);
                return None;
            }
            let mut violation = describe(test, &failure, response, verdict.tried);
            violation.location = violation.location.map(|l| self.user_location(l));
            return Some(violation);
        }
        if response.outcome != Outcome::Passed {
            return None;
        }
        let config = self.config.results.as_ref()?;
        let pause_us = verdict::alone_pause(response.elapsed_us);
        let check = check_results_until(
            test,
            &response,
            outcomes,
            config,
            self.deadline,
            |order, speed| self.results_run(test, order, speed, pause_us),
        );
        let ResultsVerdict::Violation(results) = check.verdict else {
            return None;
        };
        Some(describe_results(
            test,
            response,
            results,
            check.linearizations,
        ))
    }

    /// Confirms, shrinks and writes a violation not seen before; one already known gets the
    /// files and confirmation of the first. A wrong result the confirmation runs explain away
    /// is dropped. A known violation no re-run repeated is tried again when it shows again
    /// (up to [`RECONFIRMATIONS`] times): this sighting's test, under a schedule of its own,
    /// may repeat where the first did not; then it takes the first's files.
    fn record(
        &self,
        mut violation: Violation,
        outcomes: &mut SequentialOutcomes,
    ) -> Option<Violation> {
        let key = self.violation_key(&violation);
        // The files of an unconfirmed violation this sighting tries to confirm.
        let mut again = None;
        if let Some(recorded) = lock(&self.known).get_mut(&key) {
            if !unconfirmed(recorded.confirmed) || recorded.retries >= RECONFIRMATIONS {
                recorded.fill(&mut violation);
                return Some(violation);
            }
            recorded.retries += 1;
            again = Some((recorded.json.clone(), recorded.reproducer.clone()));
        }
        let ordered = self.schedule_and_confirm(&mut violation, outcomes);
        // A timeout is only evidence of a deadlock when it happens again: a run starved of CPU
        // on a loaded machine also times out once. A panic is evidence by itself.
        // With confirmation turned off (`confirm_runs = 0`) the timeout is all there is.
        let (repeats, reruns) = violation.confirmed;
        if again.is_some() && repeats == 0 {
            // Not repeated this time either: reported as first recorded, its re-runs counted.
            if let Some(recorded) = lock(&self.known).get_mut(&key) {
                if unconfirmed(recorded.confirmed) {
                    recorded.confirmed.1 = recorded.confirmed.1.saturating_add(reruns);
                }
                recorded.fill(&mut violation);
            }
            return Some(violation);
        }
        if violation.kind == ViolationKind::Deadlock && reruns > 0 && repeats == 0 {
            self.stats
                .unconfirmed_deadlocks
                .fetch_add(1, Ordering::Relaxed);
            return None;
        }
        if violation.kind == ViolationKind::WrongResult && !self.still_wrong(&violation, outcomes) {
            return None;
        }
        if let Some(config) = &self.config.shrink {
            self.shrink_violation(&mut violation, config, &key, ordered);
        }
        let allowed = self.allowed_for(&violation, outcomes);
        let mut known = lock(&self.known);
        if let Some(recorded) = known.get(&key) {
            // Another pool thread recorded the same bug meanwhile (or confirmed it, when
            // this sighting was to confirm it).
            if again.is_none() || !unconfirmed(recorded.confirmed) {
                recorded.fill(&mut violation);
                return Some(violation);
            }
        }
        let recorded = self.write(&violation, allowed.as_ref(), again);
        recorded.fill(&mut violation);
        known.insert(key, recorded);
        Some(violation)
    }

    /// Puts a violation found free under a schedule that shows it ([`Self::find_schedule`]),
    /// then confirms it (`violation.confirmed`); a scheduled panic no re-run repeated is tried
    /// free again. Answers whether its test now runs ordered, replaying exactly.
    fn schedule_and_confirm(
        &self,
        violation: &mut Violation,
        outcomes: &mut SequentialOutcomes,
    ) -> bool {
        let mut ordered = violation.response.replayable();
        let as_found = violation.test.clone();
        if let Some(scheduled) = self.find_schedule(violation, outcomes) {
            // Found free: from here on it runs under a schedule that shows it, so the
            // confirmation, the shrinking, the files and `replay` repeat it exactly.
            violation.test = scheduled;
            ordered = true;
        }
        violation.confirmed = self.confirm(violation, outcomes, self.config.confirm_runs);
        if violation.confirmed.0 == 0 && !violation.test.control.is_free() && !self.recording_late()
        {
            // A schedule that showed a panic once and never again: its window is where the
            // schedule does not reach, inside a dependency the copy does not instrument
            // (parking_lot 0.8.1's `ReentrantMutex`, whose count is lock_api's: 0 of 20, then
            // 11 of 20). Free runs of the test, one batch, may show it again; then the test is
            // kept free, and shrunk and replayed as free panics are.
            let free = TestCase {
                control: Control::Free,
                ..as_found
            };
            let failure = Failure::of(&violation.response.outcome);
            if let Some(failure @ Failure::Panic { .. }) = &failure {
                let (repeated, made) =
                    self.confirm_by_batch(&free, failure, violation.response.elapsed_us);
                violation.confirmed = (repeated, violation.confirmed.1.saturating_add(made));
                if repeated > 0 {
                    violation.test = free;
                    ordered = false;
                }
            }
        }
        ordered
    }

    /// Shrinks the violation's test (the one under `key`; `ordered`: it runs under a schedule,
    /// and a candidate must replay as exactly) and keeps the smaller test, with what its run
    /// showed, when it repeats as the original did ([`Self::shrunk_repeats`]).
    fn shrink_violation(
        &self,
        violation: &mut Violation,
        config: &generator::ShrinkConfig,
        key: &str,
        ordered: bool,
    ) {
        let (repeats, reruns) = violation.confirmed;
        let config = self.shrink_config(config);
        // The last candidate kept, as judged: what the report says of the shrunk test.
        let mut kept: Option<Violation> = None;
        // A free panic only a batch of runs repeated (`confirm`) is judged the same way in
        // each candidate: one run of a smaller test would almost never show it again.
        let rare = !ordered && repeats == 1 && reruns > self.config.confirm_runs;
        let elapsed_us = violation.response.elapsed_us;
        let shrunk = generator::shrink(&violation.test, &config, &mut |candidate: &TestCase| {
            let request = if rare {
                self.confirm_batch_request(candidate, elapsed_us)
            } else {
                self.concurrent_request(candidate)
            };
            let response = self.pool.request(&request);
            self.count_runs(&self.stats.shrink_runs, candidate, response.runs.max(1));
            if ordered && !response.replayable() {
                // A smaller test kept under a schedule must replay as exactly.
                return false;
            }
            let mut outcomes = SequentialOutcomes::new();
            // A wrong result found here already had every linearization topped up
            // (the results oracle's evidence runs), so what varies between runs of the
            // same calls is left out; one more check, as a confirmation makes, adds
            // runs of the closest order before the candidate is kept.
            let found = self
                .violation_in(candidate, response, &mut outcomes, &mut Vec::new())
                .filter(|found| {
                    self.violation_key(found) == key
                        && (found.kind != ViolationKind::WrongResult
                            || self.still_wrong(found, &mut outcomes))
                });
            let still = found.is_some();
            if still {
                kept = found;
            }
            still
        });
        let judged = kept.filter(|k| k.test == shrunk.shrunk);
        if shrunk.shrunk != violation.test
            && !self.shrunk_repeats(judged.as_ref(), violation.confirmed)
        {
            // Kept on one run, the smaller test does not show the violation as the test
            // it came from does: the files keep that one, which replays.
            self.stats.shrunk_dropped.fetch_add(1, Ordering::Relaxed);
        } else if shrunk.shrunk != violation.test {
            if let Some(judged) = judged {
                violation.original_message =
                    Some(std::mem::replace(&mut violation.message, judged.message));
                violation.location = judged.location;
                violation.results = judged.results;
            }
            let mut shrunk = shrunk.shrunk;
            if matches!(
                violation.kind,
                ViolationKind::WrongResult | ViolationKind::Crash
            ) {
                // Named by the pair the test was built for, which shrinking may have taken
                // out of it (`get_with_if ∥ invalidate_entries_if` shrunk to two
                // `get_with_if`s): the report and the reproducer name the calls it keeps.
                shrunk.pair = pair_kept(&shrunk);
                violation.methods = shrunk.pair.clone();
                violation.methods.sort();
            }
            violation.shrunk = Some(shrunk);
        }
    }

    /// For a wrong result, the outcomes every linearization of the test written to the files
    /// (the shrunk one, if any) gives, which its reproducer compares runs with; `outcomes`
    /// holds the runs of the original test, reused when it was not shrunk.
    fn allowed_for(
        &self,
        violation: &Violation,
        outcomes: &mut SequentialOutcomes,
    ) -> Option<AllowedOutcomes> {
        let config = self.config.results.as_ref()?;
        if violation.kind != ViolationKind::WrongResult {
            return None;
        }
        let test = violation.shrunk.as_ref().unwrap_or(&violation.test);
        allowed_outcomes(test, outcomes, config, |order| self.sequential(test, order))
    }

    /// Whether the first run of a wrong result is still one after the confirmation runs: they
    /// add sequential runs of the same calls, which show more of what varies from run to run
    /// (a `HashMap`'s order, a random id) and is then left out of the comparison.
    fn still_wrong(&self, violation: &Violation, outcomes: &mut SequentialOutcomes) -> bool {
        let Some(config) = &self.config.results else {
            return false;
        };
        let test = &violation.test;
        let pause_us = verdict::alone_pause(violation.response.elapsed_us);
        // Within the type's time, as the first verdict: a type whose every sequential run
        // builds thousands of segments (moka's `SegmentedCache::new(_, 3072)`) took minutes
        // to confirm a wrong result past a 30 s share.
        let check = check_results_until(
            test,
            &violation.response,
            outcomes,
            config,
            self.deadline,
            |order, speed| self.results_run(test, order, speed, pause_us),
        );
        matches!(check.verdict, ResultsVerdict::Violation(_))
    }

    /// `config` with its time bound cut to what is left of the current type's time, but never
    /// below [`MIN_SHRINK`]: a violation found late in a type's share is still shrunk a little,
    /// and shrinking (a deadlock's candidates cost a timeout each) no longer eats the time of
    /// the types after it.
    /// Whether a violation's schedule search and confirmation are past their time:
    /// [`RECORD_GRACE`] after the type's deadline.
    fn recording_late(&self) -> bool {
        self.deadline
            .is_some_and(|d| Instant::now() >= d + RECORD_GRACE)
    }

    fn shrink_config(&self, config: &generator::ShrinkConfig) -> generator::ShrinkConfig {
        let mut config = config.clone();
        if let Some(deadline) = self.deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            config.time_budget = config.time_budget.min(left.max(MIN_SHRINK));
        }
        config
    }

    /// For a panic, deadlock or wrong result found in a run its schedule did not fully order
    /// (a free run, or a controlled one where control ended or a woken thread ran alongside
    /// the other), a schedule of the same test that shows it again and orders the whole run,
    /// so it replays exactly: first PCT and random-walk seeds, then every schedule with at
    /// most two preemptions (CHESS's bound) over the steps a controlled run of the test
    /// passes, in batches, until one fails the same way (for a wrong result: passes with
    /// results no linearization gives, judged with the sequential runs in `outcomes`) or
    /// [`SCHEDULE_SEARCH`] runs are spent. `None` when the run was fully ordered already,
    /// scheduling is off, or no schedule showed it.
    fn find_schedule(
        &self,
        violation: &Violation,
        outcomes: &mut SequentialOutcomes,
    ) -> Option<TestCase> {
        let test = &violation.test;
        if violation.response.replayable() || self.config.scheduling == Scheduling::Free {
            return None;
        }
        let failure = Failure::of(&violation.response.outcome);
        match &failure {
            Some(Failure::Crash { .. }) => return None,
            // A wrong result (the run passed) is judged as the campaign judged it.
            None if violation.kind != ViolationKind::WrongResult
                || self.config.results.is_none() =>
            {
                return None
            }
            _ => {}
        }
        let with = |control: Control, seed: u64| TestCase {
            control,
            noise_seed: seed,
            ..test.clone()
        };
        let steps = self.steps_of(&test.type_path);
        let mut candidates: Vec<TestCase> = (0..SAMPLED_SCHEDULES as u64)
            .map(|i| with(controlled(i, steps), mix(test.noise_seed ^ mix(i))))
            .collect();
        let (mut tried, mut enumerated, mut seen_steps) = (0, false, 0);
        while tried < SCHEDULE_SEARCH && !candidates.is_empty() && !self.recording_late() {
            let take = candidates.len().min(self.config.batch.max(1));
            let batch: Vec<TestCase> = candidates.drain(..take).collect();
            let request = self.batch_of(&batch, 1);
            let responses = self.pool.request_all(std::slice::from_ref(&request));
            self.count_runs(&self.stats.confirm_runs, test, batch.len() as u64);
            for (candidate, response) in batch.into_iter().zip(responses) {
                tried += 1;
                // Only a run the schedule ordered from start to end: it replays exactly.
                if response.replayable()
                    && self.shows_again(&candidate, failure.as_ref(), &response, outcomes)
                {
                    return Some(candidate);
                }
                if let Some(schedule) = &response.schedule {
                    seen_steps = seen_steps.max(schedule.steps);
                }
            }
            if candidates.is_empty() && !enumerated && seen_steps > 0 {
                enumerated = true;
                candidates = preemptions(u32::try_from(seen_steps).unwrap_or(u32::MAX))
                    .map(|control| with(control, test.noise_seed))
                    .take(SCHEDULE_SEARCH.saturating_sub(tried))
                    .collect();
            }
        }
        None
    }

    /// Whether the shrunk test `judged` (the last candidate kept, as judged) shows its violation
    /// again in [`SHRUNK_RUNS`] re-runs as the original did in its confirmation (`confirmed`):
    /// in at least half of them when the original repeated in at least half of its re-runs,
    /// at least once otherwise. A candidate is kept on one run, and a window that only
    /// sometimes opens passes that by chance: sled 0.32.1's `pop_min` race, repeated 20 of 20
    /// times under its schedule, was saved shrunk to a test no replay repeated (0 of 20,
    /// the original 20 of 20). `None` (no judged candidate) keeps the shrunk test.
    fn shrunk_repeats(&self, judged: Option<&Violation>, confirmed: (u32, u32)) -> bool {
        let Some(judged) = judged else {
            return true;
        };
        let mut outcomes = SequentialOutcomes::new();
        let (repeats, made) = self.confirm(judged, &mut outcomes, SHRUNK_RUNS);
        let (original, reruns) = confirmed;
        if original * 2 >= reruns.max(1) {
            repeats * 2 >= made.max(1)
        } else {
            repeats > 0
        }
    }

    /// Re-runs the violation's test concurrently up to `runs` times and counts the runs that
    /// show it again: the same failure, or for a wrong result, results no linearization gives
    /// (judged with the sequential runs already made). Stops at the first repeated deadlock or
    /// crash, which cost a worker each. Answers (repeats, runs made).
    fn confirm(
        &self,
        violation: &Violation,
        outcomes: &mut SequentialOutcomes,
        runs: u32,
    ) -> (u32, u32) {
        let test = &violation.test;
        let failure = Failure::of(&violation.response.outcome);
        // A deadlock the watchdog only saw over its time, never blocked for good, may be a
        // run starved of CPU on a loaded machine (two such in a row are not rare there:
        // crossbeam-channel 0.3.6's parked receivers, 1 of 8): its re-runs get
        // `OVER_TIME_RERUN` times the time, in which a starved run finishes and a deadlock
        // does not.
        let over_time_only = violation.response.outcome.over_time();
        let mut repeats = 0;
        for run in 1..=runs {
            if run > 1 && self.recording_late() {
                // Out of time: what the runs made so far showed.
                return (repeats, run - 1);
            }
            self.count_runs(&self.stats.confirm_runs, test, 1);
            let mut request = self.concurrent_request(&rerun(test, run));
            if over_time_only {
                if let Request::Concurrent { timeout_ms, .. } = &mut request {
                    *timeout_ms = timeout_ms.saturating_mul(OVER_TIME_RERUN);
                }
            }
            let response = self.pool.request(&request);
            if self.shows_again(test, failure.as_ref(), &response, outcomes) {
                repeats += 1;
                if matches!(
                    failure,
                    Some(Failure::Deadlock { .. } | Failure::Crash { .. })
                ) {
                    return (repeats, run);
                }
            }
        }
        if repeats == 0 && runs > 0 && matches!(test.control, Control::Free) {
            if let Some(failure @ Failure::Panic { .. }) = &failure {
                // A window no schedule point of the copy reaches (between two calls into a
                // dependency: lasso 0.7.1) shows once in thousands of free runs, as it did
                // in the campaign: one batch of runs in the worker, as many as fit in about
                // a second of the test's running time, gives it that chance again.
                let again = rerun(test, runs + 1);
                let (repeated, made) =
                    self.confirm_by_batch(&again, failure, violation.response.elapsed_us);
                return (repeated, runs.saturating_add(made));
            }
        }
        (repeats, runs)
    }

    /// One batch of free runs of `test` ([`Self::confirm_batch_request`]): whether it showed
    /// `failure` again (0 or 1), and how many runs it made.
    fn confirm_by_batch(&self, test: &TestCase, failure: &Failure, elapsed_us: u64) -> (u32, u32) {
        let request = self.confirm_batch_request(test, elapsed_us);
        let response = self.pool.request(&request);
        self.count_runs(&self.stats.confirm_runs, test, response.runs.max(1));
        let made = u32::try_from(response.runs.max(1)).unwrap_or(u32::MAX);
        (u32::from(failure.is_repeated_by(&response.outcome)), made)
    }

    /// Whether a run of `test` shows a violation again: the same `failure`, or without one (a
    /// wrong result) results no linearization gives, judged with the sequential runs in
    /// `outcomes`.
    fn shows_again(
        &self,
        test: &TestCase,
        failure: Option<&Failure>,
        response: &Response,
        outcomes: &mut SequentialOutcomes,
    ) -> bool {
        match (failure, &self.config.results) {
            (Some(failure), _) => failure.is_repeated_by(&response.outcome),
            (None, Some(config)) if response.outcome == Outcome::Passed => {
                let pause_us = verdict::alone_pause(response.elapsed_us);
                let check = check_results_until(
                    test,
                    response,
                    outcomes,
                    config,
                    self.deadline,
                    |order, speed| self.results_run(test, order, speed, pause_us),
                );
                matches!(check.verdict, ResultsVerdict::Violation(_))
            }
            (None, _) => false,
        }
    }

    /// A panic location in the instrumented copy, made relative to the workspace root (the
    /// copy keeps every line where it was).
    fn user_location(&self, location: String) -> String {
        match Path::new(&location).strip_prefix(&self.copy_root) {
            Ok(relative) => relative.display().to_string(),
            Err(_) => location,
        }
    }

    /// One concurrent run of `test` (a confirmation, a shrinking candidate, a replay).
    fn concurrent_request(&self, test: &TestCase) -> Request {
        self.runs_request(test, 1)
    }

    /// `repeat` concurrent runs of `test` back to back, answered once.
    fn runs_request(&self, test: &TestCase, repeat: u64) -> Request {
        Request::Concurrent {
            test: test.clone(),
            noise: self.noise_of(test),
            timeout_ms: timeout_ms(&self.config),
            capture: self.config.results.is_some(),
            repeat,
            repeat_for_ms: None,
        }
    }

    /// The one batch of runs that gives a rare free panic its chance again (confirmation, and
    /// each shrinking candidate of such a panic): [`confirm_batch`] runs, and no new one after
    /// [`CONFIRM_BATCH_TIME`]. The count is drawn from how long the run that failed took, with
    /// a floor of 1,000: runs slower than that one (a loaded machine, a test whose calls wait
    /// on timeouts) or than a millisecond would make the batch many seconds, all of them past
    /// the campaign's deadline, which is looked at only between tests.
    fn confirm_batch_request(&self, test: &TestCase, elapsed_us: u64) -> Request {
        let mut request = self.runs_request(test, confirm_batch(elapsed_us));
        if let Request::Concurrent { repeat_for_ms, .. } = &mut request {
            *repeat_for_ms = Some(CONFIRM_BATCH_TIME.as_millis() as u64);
        }
        request
    }

    /// The noise and control of a concurrent run of `test`.
    fn noise_of(&self, test: &TestCase) -> Noise {
        Noise {
            control: test.control,
            ..self.config.noise.noise(test.noise_seed)
        }
    }

    /// Runs of each campaign test: [`OracleConfig::repeat`] under the panic oracle; one under
    /// the results oracle, which judges the results of every run it is answered.
    fn campaign_repeat(&self) -> u64 {
        match self.config.results {
            Some(_) => 1,
            None => u64::from(self.config.repeat.max(1)),
        }
    }

    /// One request running `tests` concurrently, each [`Self::campaign_repeat`] times: a
    /// batch, or a plain concurrent request for one test.
    fn batch_request(&self, tests: &[TestCase]) -> Request {
        if let [test] = tests {
            return self.runs_request(test, self.campaign_repeat());
        }
        self.batch_of(tests, self.campaign_repeat())
    }

    /// A batch running each of `tests` `repeat` times.
    fn batch_of(&self, tests: &[TestCase], repeat: u64) -> Request {
        Request::Batch {
            tests: tests
                .iter()
                .map(|test| BatchRun {
                    test: test.clone(),
                    noise: self.noise_of(test),
                })
                .collect(),
            timeout_ms: timeout_ms(&self.config),
            capture: self.config.results.is_some(),
            repeat,
        }
    }

    fn sequential(&self, test: &TestCase, order: &[(u8, u32)]) -> Response {
        self.paced_sequential(test, order, &Pace::Full)
    }

    /// A sequential run the results oracle asks for: at full speed, or slow, with a pause of
    /// `pause_us` (from the concurrent run's length) before each call.
    fn results_run(
        &self,
        test: &TestCase,
        order: &[(u8, u32)],
        speed: Speed,
        pause_us: u64,
    ) -> Response {
        match speed {
            Speed::Full => self.sequential(test, order),
            Speed::Slow => self.paced_sequential(test, order, &Pace::Paused { pause_us }),
            Speed::OwnThreads => self.paced_sequential(test, order, &Pace::OwnThreads),
        }
    }

    /// A sequential run of `order`; a paced one draws its noise from a seed of its own (a
    /// shrinking candidate keeps its test's noise seed, and with it the same delays at every
    /// point, which would judge every candidate alike).
    fn paced_sequential(&self, test: &TestCase, order: &[(u8, u32)], pace: &Pace) -> Response {
        let run = self.stats.sequential_runs.fetch_add(1, Ordering::Relaxed);
        let (noise, paced) = match pace {
            Pace::Full | Pace::OwnThreads => (Noise::none(), Vec::new()),
            Pace::Paused { pause_us } => {
                // The pauses count towards the run's timeout: together they take at most a
                // quarter of it, so a paused order never looks like a deadlock.
                let calls = order.len() as u64 + 1;
                let most = timeout_ms(&self.config) * 1000 / 4 / calls;
                let noise = Noise {
                    pause_us: (*pause_us).min(most),
                    ..Noise::none()
                };
                (noise, Vec::new())
            }
            Pace::Paced { pass, calls } => (
                pacing(*pass, mix(test.noise_seed ^ mix(pass ^ run))),
                calls.clone(),
            ),
        };
        self.pool.request(&Request::Sequential {
            test: test.clone(),
            order: order.to_vec(),
            timeout_ms: timeout_ms(&self.config),
            noise,
            paced,
            own_threads: *pace == Pace::OwnThreads,
            capture: self.config.results.is_some(),
        })
    }

    /// Writes a violation's test (as JSON) and reproducer: to `N.json` and `N.rs` at the next
    /// free number, or to `paths` (an earlier, unconfirmed sighting's files, replaced). A write
    /// failure is reported in the paths' place (the campaign goes on; the violation is still
    /// returned).
    fn write(
        &self,
        violation: &Violation,
        allowed: Option<&AllowedOutcomes>,
        paths: Option<(PathBuf, PathBuf)>,
    ) -> Recorded {
        let (json, reproducer) = paths.unwrap_or_else(|| {
            let number = self.next_number.fetch_add(1, Ordering::Relaxed);
            (
                self.violations_dir.join(format!("{number}.json")),
                self.violations_dir.join(format!("{number}.rs")),
            )
        });
        let test = violation.shrunk.as_ref().unwrap_or(&violation.test);
        let mut harness_types: Vec<String> = self.types.keys().cloned().collect();
        harness_types.sort();
        let saved = SavedTest {
            test: test.clone(),
            workspace_root: Some(self.config.workspace_root.clone()),
            harness_types,
            features: SavedTest::feature_args(&self.config.cargo_args),
            oracle: self
                .config
                .results
                .is_some()
                .then_some(SavedOracle::Results),
        };
        let test_json = saved.to_json();
        let source = self.reproducer_source(violation, allowed);
        for (path, text) in [(&json, test_json), (&reproducer, source)] {
            if let Err(e) = std::fs::write(path, text) {
                eprintln!("covcon: cannot write {}: {e}", path.display());
            }
        }
        Recorded {
            json,
            reproducer,
            confirmed: violation.confirmed,
            test: violation.test.clone(),
            shrunk: violation.shrunk.clone(),
            retries: 0,
        }
    }

    /// The reproducer of the test written to the files; a wrong result's compares each run
    /// with `allowed` (without them, it can only fail on a panic or a deadlock).
    fn reproducer_source(
        &self,
        violation: &Violation,
        allowed: Option<&AllowedOutcomes>,
    ) -> String {
        match self.types.get(&violation.type_path) {
            Some(ty) => {
                let prepared = self.prepared.iter().find(|p| p.path == ty.path);
                let test = violation.shrunk.as_ref().unwrap_or(&violation.test);
                let headline = headline(violation);
                match allowed {
                    Some(allowed) => {
                        render_results_reproducer(ty, test, prepared, &headline, allowed)
                    }
                    None => render_reproducer(ty, test, prepared, &headline),
                }
            }
            None => format!(
                "// covcon: type `{}` is not in the model; the test case is in the .json file.\n",
                violation.type_path
            ),
        }
    }
}

impl Executor for OracleExecutor {
    type Violation = Violation;

    fn execute(&mut self, tests: &[TestCase]) -> Vec<Execution<Violation>> {
        let chunk = chunk_size(tests.len(), self.jobs(), self.config.batch);
        let chunks: Vec<&[TestCase]> = tests.chunks(chunk).collect();
        let deadline = self.deadline;
        let first = chunks.first().copied();
        self.pool
            .map(&chunks, |chunk| {
                // Chunks not started by the deadline are left out; the first always runs, so
                // a campaign makes progress however short its budget.
                let late = deadline.is_some_and(|d| Instant::now() >= d);
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
        let [a, b] = &violation.methods;
        format!("{}::{{{a}, {b}}} {}", violation.type_path, violation.kind)
    }

    fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }
}

/// What replaying a saved test case showed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayResult {
    /// Concurrent runs made.
    pub runs: u32,
    /// Runs that failed the way the first failing one did.
    pub failures: u32,
    /// How the first failing run ended (`Passed` when none failed).
    pub outcome: Outcome,
    /// Set when the failure is a thread-safety violation.
    pub violation: Option<ViolationKind>,
    /// The linearization that failed the same way, when the failure is not a violation.
    pub explained_by: Option<Order>,
    /// Sequential runs made for the verdict.
    pub linearizations: u32,
}

/// How many times a run's timeout a re-run of a deadlock seen only over its time gets.
const OVER_TIME_RERUN: u64 = 4;

/// Re-run `run` of `test` (a confirmation's, a replay's): a free run's noise seed does not
/// fix its interleaving, so each re-run draws other noise, as a user's reruns would; a
/// schedule is replayed as it is.
fn rerun(test: &TestCase, run: u32) -> TestCase {
    TestCase {
        noise_seed: match test.control {
            Control::Free => mix(test.noise_seed ^ u64::from(run)),
            _ => test.noise_seed,
        },
        ..test.clone()
    }
}

/// Runs in the one batch that confirms a panic its single re-runs did not repeat: about a
/// second of a run that took `elapsed_us`, between 1,000 and 100,000, and no more than fit in
/// [`CONFIRM_BATCH_TIME`] ([`OracleExecutor::confirm_batch_request`]).
fn confirm_batch(elapsed_us: u64) -> u64 {
    (1_000_000 / elapsed_us.max(1)).clamp(1_000, 100_000)
}

/// The longest a batch of [`confirm_batch`] runs goes on in the worker.
const CONFIRM_BATCH_TIME: Duration = Duration::from_secs(1);

/// Runs a saved test case again: concurrently up to `config.confirm_runs` times (at least
/// once) until it fails, then the remaining runs count how often the failure repeats, and the
/// failure is judged against its linearizations.
pub fn replay(
    harness: &Harness,
    config: &OracleConfig,
    test: &TestCase,
) -> Result<ReplayResult, OracleError> {
    replay_with_worker(&harness.binary, config, &Model::default(), test)
}

/// [`replay`] on workers started from `program` (see [`OracleExecutor::with_worker`]). With
/// the results oracle on, `model` gives the contracts the campaign judged by (answers that are
/// approximate, calls that hold the object).
pub fn replay_with_worker(
    program: &Path,
    config: &OracleConfig,
    model: &Model,
    test: &TestCase,
) -> Result<ReplayResult, OracleError> {
    let config = OracleConfig {
        jobs: 1,
        ..config.clone()
    };
    let executor = OracleExecutor::start(worker_command(program, &config), &config, model)?;
    Ok(executor.replay(test))
}

impl OracleExecutor {
    pub(crate) fn replay(&self, test: &TestCase) -> ReplayResult {
        let runs = self.config.confirm_runs.max(1);
        let mut result = ReplayResult {
            runs: 0,
            failures: 0,
            outcome: Outcome::Passed,
            violation: None,
            explained_by: None,
            linearizations: 0,
        };
        let mut outcomes = SequentialOutcomes::new();
        for run in 1..=runs {
            // The first run as saved, the others as the confirmation re-runs it (the saved
            // noise every run left a failure the confirmation repeated 2 times in 20 unseen
            // in 1,100 replays).
            let again = if run == 1 {
                test.clone()
            } else {
                rerun(test, run)
            };
            let response = self.pool.request(&self.concurrent_request(&again));
            result.runs = run;
            let outcome = response.outcome.clone();
            let Some(failure) = Failure::of(&outcome) else {
                if outcome != Outcome::Passed {
                    // The setup or prefix failed: nothing concurrent to judge.
                    result.outcome = outcome;
                    return result;
                }
                // With the results oracle on, a passing run may still be a violation.
                if let Some(violation) =
                    self.violation_in(test, response, &mut outcomes, &mut Vec::new())
                {
                    let (repeats, more) = self.confirm(&violation, &mut outcomes, runs - run);
                    result.runs += more;
                    result.failures = 1 + repeats;
                    result.violation = Some(violation.kind);
                    result.linearizations = violation.linearizations;
                    return result;
                }
                continue;
            };
            let pause_us = verdict::alone_pause(response.elapsed_us);
            let found = describe(test, &failure, response, 0);
            let (repeats, more) = self.confirm(&found, &mut outcomes, runs - run);
            result.runs += more;
            result.failures = 1 + repeats;
            result.outcome = outcome;
            let verdict = verdict::judge(
                test,
                &failure,
                pause_us,
                self.explaining_pass_of(test),
                None,
                |order, pace| self.paced_sequential(test, order, pace).outcome,
            );
            result.linearizations = verdict.tried;
            result.violation = verdict.violation.then(|| kind_of(&failure));
            result.explained_by = verdict.explained_by.map(|(order, _)| order);
            return result;
        }
        result
    }
}

/// The directory under the output directory that workers run in ([`WorkerCommand::dir`]).
pub const WORKER_DIR: &str = "worker-cwd";

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

/// The noise of paced pass `pass`: the high level (the delays a concurrent run meets), then
/// a sleep at every point. A failure that waiting alone brings on must not slip through
/// because no draw happened to wait where it matters: the verdict runs on every failing run of
/// a campaign, and a per-verdict slip of 1 % is a false alarm per campaign.
fn pacing(pass: u64, seed: u64) -> Noise {
    if pass == 0 {
        return NoiseLevel::High.noise(seed);
    }
    Noise {
        seed,
        yield_p: 0.0,
        spin_p: 0.0,
        sleep_p: 1.0,
        control: Control::Free,
        pause_us: 0,
    }
}

/// Runs one pair's exploration makes at most: every schedule with at most two preemptions of
/// a run of 13 points or fewer (2 + 2·13 + 13·12 = 184 would do; longer runs get the
/// simplest schedules first).
const EXPLORE_RUNS: u32 = 400;

/// Schedule points one pair's exploration passes at most: 400 runs of 40 points, or 4 runs
/// of a call that passes 4,000 (sharded-slab's `len`, which visits each of 4,096 shards,
/// made eight pairs explore 400 runs of 4,100 points each and left the campaign a third of
/// its tests).
const EXPLORE_POINTS: u64 = 16_000;

/// Whether a violation's confirmation (re-runs that repeated it, re-runs made) made re-runs
/// and none repeated it.
fn unconfirmed(confirmed: (u32, u32)) -> bool {
    matches!(confirmed, (0, runs) if runs > 0)
}

/// Times a violation no re-run repeated is judged again when the campaign meets it again
/// ([`OracleExecutor::record`]).
const RECONFIRMATIONS: u32 = 3;

/// Schedules a violation found free is tried under, at most ([`OracleExecutor::find_schedule`]).
const SCHEDULE_SEARCH: usize = 1_000;
/// Of those, PCT and random-walk seeds tried before the preemptions are enumerated.
const SAMPLED_SCHEDULES: usize = 64;

/// Every schedule of a run of `steps` points with at most two preemptions, fewest first:
/// either thread first, then switched out at step `a`, then at step `b > a`.
fn preemptions(steps: u32) -> impl Iterator<Item = Control> {
    let steps = steps.max(1);
    let none = (0..2).map(|first| Control::Preempt { first, at: [0, 0] });
    let one =
        (1..=steps).flat_map(|a| (0..2).map(move |first| Control::Preempt { first, at: [a, 0] }));
    let two = (1..=steps).flat_map(move |a| {
        (a + 1..=steps)
            .flat_map(move |b| (0..2).map(move |first| Control::Preempt { first, at: [a, b] }))
    });
    none.chain(one).chain(two)
}

/// The schedule points PCT assumes a run of a type passes before one of its runs said.
const DEFAULT_STEPS: u32 = 24;

/// Shrinking time a new violation gets even when its type's time is up.
const MIN_SHRINK: Duration = Duration::from_secs(1);

/// Re-runs of a shrunk test before it replaces the test it came from in the files
/// ([`OracleExecutor::shrunk_repeats`]).
const SHRUNK_RUNS: u32 = 4;

/// How long past its type's deadline a violation's schedule search and confirmation may go
/// on ([`OracleExecutor::recording_late`]). A thousand schedules of a slow test took minutes:
/// moka 0.9.5's `SegmentedCache` (4,096 segments built per run) ran 680 s for a 60 s budget.
const RECORD_GRACE: Duration = Duration::from_secs(10);

/// The least time a panic's or deadlock's verdict has, however late after its type's deadline
/// it starts (also [`RECORD_GRACE`] past the deadline): a verdict is fast but for sequential
/// orders that block, each costing a timeout; a failure found as the time ran out is still
/// judged.
const VERDICT_LEAST: Duration = Duration::from_secs(10);

fn timeout_ms(config: &OracleConfig) -> u64 {
    (config.test_timeout.as_millis() as u64).max(1)
}

fn kind_of(failure: &Failure) -> ViolationKind {
    match failure {
        Failure::Panic { .. } => ViolationKind::Panic,
        Failure::Deadlock { .. } => ViolationKind::Deadlock,
        Failure::Crash { .. } => ViolationKind::Crash,
    }
}

/// The violation a failing run shows, before it is confirmed and written.
fn describe(test: &TestCase, failure: &Failure, response: Response, tried: u32) -> Violation {
    let other_of_pair = |method: &str| {
        if test.pair[0] == method {
            test.pair[1].clone()
        } else {
            test.pair[0].clone()
        }
    };
    let (methods, message, location) = match failure {
        Failure::Panic {
            thread,
            method,
            message,
            location,
            ..
        } => {
            let partner =
                trace::concurrent_partner(&response.events, &test.type_path, *thread, method)
                    .unwrap_or_else(|| other_of_pair(method));
            ([method.clone(), partner], message.clone(), location.clone())
        }
        Failure::Deadlock {
            inside,
            lost_wakeup,
        } => {
            let methods = match inside {
                [Some(a), Some(b)] => [a.clone(), b.clone()],
                [Some(a), None] | [None, Some(a)] => [a.clone(), other_of_pair(a)],
                [None, None] => test.pair.clone(),
            };
            let in_call = |t: usize| inside[t].as_deref().unwrap_or("(no instrumented method)");
            let message = match lost_wakeup {
                Some(t) => format!(
                    "lost wake-up: thread {t} waited in {} on a condition variable for a notify that never came, although what it waited for already held: every thread was blocked, and a spurious wake-up (which correct code survives) let it finish; without one it waits for ever",
                    in_call(usize::from(*t).min(1))
                ),
                None => format!(
                    "deadlock: thread 0 blocked in {}, thread 1 blocked in {}",
                    in_call(0),
                    in_call(1),
                ),
            };
            (methods, message, None)
        }
        Failure::Crash { message } => (test.pair.clone(), message.clone(), None),
    };
    let mut methods = methods;
    methods.sort();
    Violation {
        kind: kind_of(failure),
        type_path: test.type_path.clone(),
        methods,
        message,
        location,
        test: test.clone(),
        response,
        linearizations: tried,
        reproducer: PathBuf::new(),
        json: PathBuf::new(),
        confirmed: (0, 0),
        results: None,
        shrunk: None,
        original_message: None,
    }
}

/// The pair a shrunk test still calls: each thread's method of the pair it was built for
/// when the thread still calls it, its first call's method otherwise.
fn pair_kept(test: &TestCase) -> [String; 2] {
    let kept = |t: usize| {
        let calls = &test.threads[t];
        if calls.iter().any(|c| c.method == test.pair[t]) {
            test.pair[t].clone()
        } else {
            calls
                .first()
                .map_or_else(|| test.pair[t].clone(), |c| c.method.clone())
        }
    };
    [kept(0), kept(1)]
}

/// The violation a passing run with wrong results shows, before it is confirmed and written.
fn describe_results(
    test: &TestCase,
    response: Response,
    results: ResultsViolation,
    linearizations: u32,
) -> Violation {
    let mut methods = test.pair.clone();
    methods.sort();
    Violation {
        kind: ViolationKind::WrongResult,
        type_path: test.type_path.clone(),
        methods,
        message: format!("results no linearization gives: {results}"),
        location: None,
        test: test.clone(),
        response,
        linearizations,
        reproducer: PathBuf::new(),
        json: PathBuf::new(),
        confirmed: (0, 0),
        results: Some(results),
        shrunk: None,
        original_message: None,
    }
}

/// Files and confirmation of a violation already written.
#[derive(Debug, Clone)]
struct Recorded {
    json: PathBuf,
    reproducer: PathBuf,
    confirmed: (u32, u32),
    /// The test confirmed (with the schedule it ran under) and its shrunk version: a later
    /// violation of the same key is reported with them, so the test shown is the one the
    /// confirmation counts and the files hold.
    test: TestCase,
    shrunk: Option<TestCase>,
    /// Later sightings judged again because no re-run repeated this one.
    retries: u32,
}

impl Recorded {
    fn fill(&self, violation: &mut Violation) {
        violation.json = self.json.clone();
        violation.reproducer = self.reproducer.clone();
        violation.confirmed = self.confirmed;
        violation.test = self.test.clone();
        violation.shrunk = self.shrunk.clone();
    }
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

/// The highest N of an `N.json` already in `dir` (0 if none), so numbering carries on
/// across campaigns instead of overwriting earlier findings.
fn highest_number(dir: &Path) -> u32 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".json")?.parse::<u32>().ok()
        })
        .max()
        .unwrap_or(0)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What went wrong, in one line, for the reproducer's doc comment.
fn headline(violation: &Violation) -> String {
    let at = violation
        .location
        .as_deref()
        .map(|l| format!(" at {l}"))
        .unwrap_or_default();
    match violation.kind {
        ViolationKind::Panic => format!("panic {:?}{at}", violation.message),
        ViolationKind::Deadlock | ViolationKind::Crash => violation.message.clone(),
        ViolationKind::WrongResult => {
            // The difference is the original test's: a shrunk test numbers its calls anew.
            let first = violation
                .results
                .as_ref()
                .and_then(|r| r.differences.first());
            match (first, &violation.shrunk) {
                (Some(d), None) => format!(
                    "wrong result: {}: observed {}, expected {}",
                    d.place, d.observed, d.expected
                ),
                (Some(d), Some(_)) => format!(
                    "wrong result (before shrinking: {}: observed {}, expected {})",
                    d.place, d.observed, d.expected
                ),
                (None, _) => "wrong result".to_string(),
            }
        }
    }
}

/// Single-threaded tests in which one thread's scope has some of the other thread's calls
/// made inside it (`generator::Call::scope`), right after the guard is handed out or right
/// before the scope ends: the orders a scope's whole runs leave out. The other thread's calls
/// keep their order: those before the moved ones run just before the scope, those after at the
/// end. Empty for a test without scopes; `None` when a thread with a scope faces calls of the
/// other that keep a local (their locals are numbered by thread, so they cannot move).
pub(crate) fn scope_interiors(test: &TestCase) -> Option<Vec<TestCase>> {
    let mut out = Vec::new();
    for (t, calls) in test.threads.iter().enumerate() {
        let others = &test.threads[1 - t];
        if others.is_empty() || calls.iter().all(|c| c.scope.is_none()) {
            continue;
        }
        if others.iter().any(|c| c.keep) {
            return None;
        }
        for (i, call) in calls.iter().enumerate() {
            let Some(scope) = &call.scope else { continue };
            for at in [0, scope.then.len()] {
                for a in 0..others.len() {
                    for b in a + 1..=others.len() {
                        let mut moved = (**scope).clone();
                        for (k, other) in others[a..b].iter().enumerate() {
                            moved.then.insert(at + k, other.clone());
                        }
                        let mut mine: Vec<Call> = calls[..i].to_vec();
                        mine.extend(others[..a].iter().cloned());
                        let mut scoped = call.clone();
                        scoped.scope = Some(Box::new(moved));
                        mine.push(scoped);
                        mine.extend(calls[i + 1..].iter().cloned());
                        mine.extend(others[b..].iter().cloned());
                        let mut inside = test.clone();
                        inside.threads = [mine, Vec::new()];
                        out.push(inside);
                    }
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use generator::{Scope, Value};

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

    /// A pair is explored once; a later test passing a failing value gets a second
    /// exploration, once, which adds to the first; one under way is not started twice, and
    /// one that did not run under control leaves the pair to another test.
    #[test]
    fn a_pair_is_explored_again_once_for_a_failing_value() {
        let pair = ["get_or_try_init".to_string(), "wait".to_string()];
        let ran = |explored, end| Exploration {
            explored,
            schedules: explored,
            steps: 3,
            end,
            ..Exploration::default()
        };
        let mut stats = TypeRunStats::default();
        assert!(stats.claim_exploration(&pair, false));
        // Under way: neither kind of test starts another.
        assert!(!stats.claim_exploration(&pair, false));
        assert!(!stats.claim_exploration(&pair, true));
        stats.record_exploration(pair.clone(), ran(14, crate::ExplorationEnd::Complete), true);
        assert!(!stats.claim_exploration(&pair, false));
        assert!(stats.claim_exploration(&pair, true));
        assert!(!stats.claim_exploration(&pair, true));
        stats.record_exploration(pair.clone(), ran(5, crate::ExplorationEnd::Failed), true);
        let both = &stats.explored[&pair];
        assert_eq!(
            (both.explored, both.tests, both.end),
            (19, 2, crate::ExplorationEnd::Failed)
        );
        assert_eq!(stats.explore_runs, 19);
        assert!(!stats.claim_exploration(&pair, true));

        // A first exploration with a failing value needs no second one.
        let mut stats = TypeRunStats::default();
        assert!(stats.claim_exploration(&pair, true));
        stats.record_exploration(pair.clone(), ran(3, crate::ExplorationEnd::Complete), true);
        assert!(!stats.claim_exploration(&pair, true));

        // A second exploration that did not run under control keeps the first and lets
        // another failing test try.
        let mut stats = TypeRunStats::default();
        assert!(stats.claim_exploration(&pair, false));
        stats.record_exploration(pair.clone(), ran(3, crate::ExplorationEnd::Complete), true);
        assert!(stats.claim_exploration(&pair, true));
        stats.record_exploration(pair.clone(), Exploration::default(), false);
        assert_eq!(stats.explored[&pair].explored, 3);
        assert!(stats.claim_exploration(&pair, true));
    }

    /// moka 0.9.5's `get_with_if ∥ invalidate_entries_if` shrunk to two `get_with_if`s is
    /// named by them; a thread that still calls its method of the pair keeps it.
    #[test]
    fn a_shrunk_test_is_named_by_the_calls_it_keeps() {
        let call = |m: &str| Call::new(m, 0, vec![Value::Int(3)]);
        let mut test = two_threads(
            "k::Cache",
            ["get_with_if", "invalidate_entries_if"],
            [vec![call("get_with_if")], vec![call("get_with_if")]],
        );
        assert_eq!(pair_kept(&test), ["get_with_if", "get_with_if"]);
        test.threads[1] = vec![call("get"), call("invalidate_entries_if")];
        assert_eq!(pair_kept(&test), ["get_with_if", "invalidate_entries_if"]);
        test.threads[1].clear();
        assert_eq!(pair_kept(&test), ["get_with_if", "invalidate_entries_if"]);
    }

    /// The orders a whole scope leaves out, as single-threaded tests: some of the other
    /// thread's calls moved inside the scope (after the guard is handed out, or before the
    /// scope ends), the ones before them just before the scope, the rest at the end.
    #[test]
    fn the_other_threads_calls_are_moved_inside_a_scope_in_order() {
        let call = |m: &str| Call::new(m, 0, vec![Value::Int(1)]);
        let scoped = Call {
            scope: Some(Box::new(Scope {
                then: vec![call("len")],
                finish: Some(call("insert")),
            })),
            ..call("vacant_entry")
        };
        let test = two_threads(
            "k::Slab",
            ["vacant_entry", "take"],
            [vec![scoped], vec![call("take"), call("get")]],
        );
        let texts: Vec<String> = scope_interiors(&test)
            .unwrap()
            .iter()
            .map(|t| {
                t.to_string()
                    .split_once("thread 0: ")
                    .unwrap()
                    .1
                    .to_string()
            })
            .collect();
        assert_eq!(
            texts,
            [
                "{ let g = c0.vacant_entry(1); c0.take(1); c0.len(1); g.insert(1) }; c0.get(1) | thread 1: -",
                "{ let g = c0.vacant_entry(1); c0.take(1); c0.get(1); c0.len(1); g.insert(1) } | thread 1: -",
                "c0.take(1); { let g = c0.vacant_entry(1); c0.get(1); c0.len(1); g.insert(1) } | thread 1: -",
                "{ let g = c0.vacant_entry(1); c0.len(1); c0.take(1); g.insert(1) }; c0.get(1) | thread 1: -",
                "{ let g = c0.vacant_entry(1); c0.len(1); c0.take(1); c0.get(1); g.insert(1) } | thread 1: -",
                "c0.take(1); { let g = c0.vacant_entry(1); c0.len(1); c0.get(1); g.insert(1) } | thread 1: -",
            ]
        );
        // A call of the other thread that keeps a local cannot move: nothing can be tried.
        let mut keeping = test.clone();
        keeping.threads[1][0].keep = true;
        assert!(scope_interiors(&keeping).is_none());
        let mut plain = test.clone();
        plain.threads[0][0].scope = None;
        assert_eq!(scope_interiors(&plain).map(|v| v.len()), Some(0));
    }
}
