//! The campaign loop (CovCon Algorithm 2, batched): for each type, select pairs and write
//! tests, run them through the [`Executor`], feed the coverage back, and stop at the first
//! violation, the type's share of the time budget, a test limit or a coverage goal.
//!
//! Only the clock is outside the seed's control: which tests are written depends on the seed
//! and the feedback alone, and how many of them run depends on the time budget.

use crate::coverage::PairCoverage;
use crate::generate::{GeneratorConfig, TestGenerator};
use crate::pools::Pools;
use crate::strategy::Strategy;
use crate::testcase::{Executor, StopAt, TestCase};
use analysis::{Diagnostic, ParamKind, Reason, TypeModel};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Settings of a whole campaign.
#[derive(Debug, Clone, PartialEq)]
pub struct CampaignConfig {
    pub strategy: Strategy,
    pub seed: u64,
    /// For all types together; split by their pairs (`type_weight`), time a type leaves unused
    /// goes to later ones.
    pub time_budget: Duration,
    pub max_tests_per_type: Option<u64>,
    /// Tests handed to [`Executor::execute`] at once.
    pub batch_size: usize,
    /// Go on after a type's first violation ([`Executor::conclusive`] one), reporting each
    /// distinct violation once.
    pub keep_going: bool,
    /// Keys ([`Executor::violation_key`]) of violations a baseline already lists: finding
    /// one does not end its type's search (a CI gate looks on for a new violation of a type
    /// with a known one), and it is reported once, as any other.
    pub known: BTreeSet<String>,
    /// Stop a type at its first violation even when it is not [`Executor::conclusive`] (the
    /// bench, which measures the first sighting, and mutants, which count any as a catch).
    pub stop_at_unconfirmed: bool,
    /// Stop a type once every non-removed pair was covered this many times.
    pub coverage_goal: Option<u32>,
    pub pools: Pools,
    /// Per-type settings, by type path (`krate::module::Type`).
    pub types: BTreeMap<String, TypeConfig>,
    /// Raised (by a signal handler, say) to end the campaign after the current batch: the
    /// type running stops as `Interrupted`, the ones after it are skipped as not reached.
    pub stop: StopFlag,
    /// In how many tests (percent) threads may keep guards in scopes (`generator::Scope`):
    /// [`crate::scoped_tests`] for the oracle.
    pub scoped_tests: u32,
}

/// A flag another thread raises to stop a campaign; clones share it.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl StopFlag {
    pub fn raise(&self) -> bool {
        self.0.swap(true, std::sync::atomic::Ordering::SeqCst)
    }

    pub fn raised(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Two flags are the same flag: configurations compare equal when they share it.
impl PartialEq for StopFlag {
    fn eq(&self, other: &StopFlag) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Default for CampaignConfig {
    fn default() -> CampaignConfig {
        CampaignConfig {
            strategy: Strategy::default(),
            seed: 0,
            time_budget: Duration::from_secs(60),
            max_tests_per_type: None,
            batch_size: 64,
            keep_going: false,
            known: BTreeSet::new(),
            stop_at_unconfirmed: false,
            coverage_goal: None,
            pools: Pools::default(),
            types: BTreeMap::new(),
            stop: StopFlag::default(),
            scoped_tests: 100,
        }
    }
}

/// Settings that override the defaults for one type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TypeConfig {
    /// The constructor to use, by name.
    pub constructor: Option<String>,
    /// What each type parameter is instantiated with (by default small integers).
    pub instantiation: BTreeMap<String, ParamKind>,
    /// Pools for this type instead of the campaign's.
    pub pools: Option<Pools>,
}

/// What a progress bar needs, sent after each batch and when a type starts or ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub type_path: String,
    /// Position of the type among all types given, from 0.
    pub type_index: usize,
    pub type_count: usize,
    pub tests_run: u64,
    pub pairs_covered: usize,
    pub pairs_worth_covering: usize,
    pub violations: usize,
    /// Of the whole campaign's time budget.
    pub time_left: Duration,
    /// True in the last report for the type.
    pub done: bool,
}

/// What a campaign found, per type in the order given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignResult<V> {
    pub strategy: Strategy,
    pub seed: u64,
    pub types: Vec<TypeResult<V>>,
    pub tests_run: u64,
    pub seconds: f64,
}

/// The campaign of one type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeResult<V> {
    pub path: String,
    /// Why the type was not tested at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Reason>,
    /// Why testing stopped; `None` when skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<StopReason>,
    pub tests_run: u64,
    pub seconds: f64,
    /// P with tried and covered counts, in declaration order.
    pub pairs: Vec<PairCoverage>,
    /// Distinct violations, in the order found.
    pub violations: Vec<FoundViolation<V>>,
    /// Coverage over time (CovCon Fig. 3): a point when the type starts, whenever another
    /// pair is covered for the first time, and when it ends.
    pub history: Vec<HistoryPoint>,
    /// Methods and constructors left out, and why.
    pub diagnostics: Vec<Diagnostic>,
}

/// Why a type's campaign ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Violation,
    TimeBudget,
    MaxTests,
    CoverageGoal,
    /// The strategy had no pair left to try.
    Exhausted,
    /// The campaign's [`StopFlag`] was raised.
    Interrupted,
}

/// A violation with the test that showed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoundViolation<V> {
    pub violation: V,
    /// [`Executor::violation_key`] of the violation.
    pub key: String,
    pub test: TestCase,
    /// Tests of this type generated up to and including this one.
    pub tests_until_found: u64,
    pub seconds_until_found: f64,
}

/// One point of a coverage-over-time chart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HistoryPoint {
    pub seconds: f64,
    pub tests_run: u64,
    /// Distinct non-removed pairs covered so far.
    pub pairs_covered: usize,
}

/// Runs a campaign over `types`, in order, through `executor`; `observer` gets progress.
pub fn run_campaign<E: Executor>(
    types: &[TypeModel],
    config: &CampaignConfig,
    executor: &mut E,
    observer: &mut dyn FnMut(&Progress),
) -> CampaignResult<E::Violation> {
    let start = Instant::now();
    let mut next_id = 0;
    let prepared: Vec<Result<TestGenerator, Reason>> = types
        .iter()
        .map(|model| TestGenerator::new(model, &generator_config(model, config)))
        .collect();
    // What the types still to run weigh together, for their shares of the time.
    let mut weights_left: f64 = prepared
        .iter()
        .flatten()
        .map(|g| type_weight(g.pairs_worth_covering()))
        .sum();
    let mut results = Vec::new();
    for (index, (model, generator)) in types.iter().zip(prepared).enumerate() {
        let result = match generator {
            Err(reason) => skipped(model, reason),
            Ok(_) if config.stop.raised() => skipped(model, Reason::Interrupted),
            Ok(mut generator) => {
                generator.start_ids_at(next_id);
                let remaining = config.time_budget.saturating_sub(start.elapsed());
                let weight = type_weight(generator.pairs_worth_covering());
                let budget = type_budget(remaining, weight, weights_left);
                weights_left -= weight;
                let ctx = TypeRun {
                    config,
                    executor,
                    observer,
                    index,
                    count: types.len(),
                    start,
                    budget,
                };
                ctx.run(&mut generator, next_id)
            }
        };
        next_id += result.tests_run;
        results.push(result);
    }
    CampaignResult {
        strategy: config.strategy,
        seed: config.seed,
        tests_run: results.iter().map(|r| r.tests_run).sum(),
        types: results,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// A type's share of what is left of the budget: its `weight` of the `weights_left` of the
/// types (this one included) still to run.
pub fn type_budget(remaining: Duration, weight: f64, weights_left: f64) -> Duration {
    if weights_left <= weight || weights_left <= 0.0 {
        return remaining;
    }
    remaining.mul_f64(weight / weights_left)
}

/// What a type weighs in the split of the time budget: the square root of its pairs worth
/// covering (at least one). A type with many methods has many more pairs to cover (parking_lot
/// 0.12's `RwLock` 190, its `Condvar` 3) but not as many more bugs to find: 8 times the time
/// for 64 times the pairs.
pub fn type_weight(pairs_worth_covering: usize) -> f64 {
    (pairs_worth_covering.max(1) as f64).sqrt()
}

/// The generator settings for one type: the campaign's, overridden by the type's own, with a
/// seed of its own so a type's tests do not depend on which types run before it.
fn generator_config(model: &TypeModel, config: &CampaignConfig) -> GeneratorConfig {
    let type_config = config.types.get(&model.path).cloned().unwrap_or_default();
    GeneratorConfig {
        strategy: config.strategy,
        seed: config.seed ^ fnv1a(model.path.as_bytes()),
        pools: type_config.pools.unwrap_or_else(|| config.pools.clone()),
        constructor: type_config.constructor,
        instantiation: type_config.instantiation,
        first_test_id: 0,
        scoped_tests: config.scoped_tests,
    }
}

/// FNV-1a: a hash that stays the same across Rust versions, unlike `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn skipped<V>(model: &TypeModel, reason: Reason) -> TypeResult<V> {
    TypeResult {
        path: model.path.clone(),
        skipped: Some(reason),
        stopped: None,
        tests_run: 0,
        seconds: 0.0,
        pairs: Vec::new(),
        violations: Vec::new(),
        history: Vec::new(),
        diagnostics: Vec::new(),
    }
}

/// Everything one type's loop needs besides its generator.
struct TypeRun<'a, E: Executor> {
    config: &'a CampaignConfig,
    executor: &'a mut E,
    observer: &'a mut dyn FnMut(&Progress),
    index: usize,
    count: usize,
    start: Instant,
    budget: Duration,
}

impl<E: Executor> TypeRun<'_, E> {
    fn run(mut self, generator: &mut TestGenerator, first_id: u64) -> TypeResult<E::Violation> {
        let type_start = Instant::now();
        let config = self.config;
        let mut result: TypeResult<E::Violation> = TypeResult {
            path: generator.type_path().to_string(),
            skipped: None,
            stopped: None,
            tests_run: 0,
            seconds: 0.0,
            pairs: Vec::new(),
            violations: Vec::new(),
            history: vec![HistoryPoint {
                seconds: 0.0,
                tests_run: 0,
                pairs_covered: 0,
            }],
            diagnostics: generator.diagnostics().to_vec(),
        };
        let mut keys = BTreeSet::new();
        self.executor
            .set_deadline(type_start.checked_add(self.budget));
        self.executor
            .set_stop_at(match (config.keep_going, config.stop_at_unconfirmed) {
                (true, _) => StopAt::Never,
                (false, true) => StopAt::Any,
                (false, false) => StopAt::Conclusive,
            });
        self.executor.set_known(&config.known);
        self.report(generator, &result, false);
        let stopped = loop {
            if let Some(reason) = stop_reason(
                config,
                generator,
                &result,
                &*self.executor,
                type_start.elapsed() >= self.budget,
            ) {
                break reason;
            }
            let limit = config
                .max_tests_per_type
                .map_or(u64::MAX, |max| max - result.tests_run);
            let batch = generator.next_batch(
                config
                    .batch_size
                    .max(1)
                    .min(limit.try_into().unwrap_or(usize::MAX)),
            );
            if batch.is_empty() {
                break StopReason::Exhausted;
            }
            let mut executions = self.executor.execute(&batch);
            executions.sort_by_key(|e| e.test_id);
            let covered_before = generator.pairs_covered();
            result.tests_run += executions.len() as u64;
            for execution in executions {
                generator.record(&execution);
                let Some(violation) = execution.violation else {
                    continue;
                };
                let Some(test) = batch.iter().find(|t| t.id == execution.test_id) else {
                    continue;
                };
                let key = self.executor.violation_key(&violation);
                let found = FoundViolation {
                    violation,
                    key,
                    test: test.clone(),
                    tests_until_found: test.id - first_id + 1,
                    seconds_until_found: type_start.elapsed().as_secs_f64(),
                };
                if keys.insert(found.key.clone()) {
                    result.violations.push(found);
                } else if self.executor.conclusive(&found.violation) {
                    // A violation first seen unconfirmed, confirmed now: reported as found
                    // here, where it first counts.
                    let executor = &*self.executor;
                    if let Some(first) = result
                        .violations
                        .iter_mut()
                        .find(|v| v.key == found.key && !executor.conclusive(&v.violation))
                    {
                        *first = found;
                    }
                }
            }
            if generator.pairs_covered() != covered_before {
                result.history.push(point(type_start, &result, generator));
            }
            self.report(generator, &result, false);
        };
        self.executor.set_deadline(None);
        result.stopped = Some(stopped);
        result.seconds = type_start.elapsed().as_secs_f64();
        result.pairs = generator.pairs().to_vec();
        result.history.push(point(type_start, &result, generator));
        self.report(generator, &result, true);
        result
    }

    fn report(&mut self, generator: &TestGenerator, result: &TypeResult<E::Violation>, done: bool) {
        (self.observer)(&Progress {
            type_path: result.path.clone(),
            type_index: self.index,
            type_count: self.count,
            tests_run: result.tests_run,
            pairs_covered: generator.pairs_covered(),
            pairs_worth_covering: generator.pairs_worth_covering(),
            violations: result.violations.len(),
            time_left: self.config.time_budget.saturating_sub(self.start.elapsed()),
            done,
        });
    }
}

/// Why the type should stop now, if it should.
fn stop_reason<E: Executor>(
    config: &CampaignConfig,
    generator: &TestGenerator,
    result: &TypeResult<E::Violation>,
    executor: &E,
    out_of_time: bool,
) -> Option<StopReason> {
    if config.stop.raised() {
        Some(StopReason::Interrupted)
    } else if result
        .violations
        .iter()
        .filter(|v| !config.known.contains(&v.key))
        .any(|v| config.stop_at_unconfirmed || executor.conclusive(&v.violation))
        && !config.keep_going
    {
        Some(StopReason::Violation)
    } else if config
        .coverage_goal
        .is_some_and(|goal| generator.coverage_goal_reached(goal))
    {
        Some(StopReason::CoverageGoal)
    } else if config
        .max_tests_per_type
        .is_some_and(|max| result.tests_run >= max)
    {
        Some(StopReason::MaxTests)
    } else if out_of_time {
        Some(StopReason::TimeBudget)
    } else {
        None
    }
}

fn point<V>(
    type_start: Instant,
    result: &TypeResult<V>,
    generator: &TestGenerator,
) -> HistoryPoint {
    HistoryPoint {
        seconds: type_start.elapsed().as_secs_f64(),
        tests_run: result.tests_run,
        pairs_covered: generator.pairs_covered(),
    }
}
