//! Running: the requests that send a test to the workers (a campaign's batches, one
//! concurrent run or a batch of them, a sequential order, paced or slow), the control a
//! campaign test runs under, and the exploration of a pair's smallest test under every
//! schedule with at most two preemptions (`crate::explore`'s tree); and the counts of the
//! runs made, per type. What a run shows is judged by the caller: an exploration is handed
//! its judge.

use super::{lock, OracleExecutor, TypeRunStats, Violation};
use crate::config::{mix, NoiseLevel, OracleConfig, Repeat, Scheduling};
use crate::explore::{self, Exploration};
use crate::protocol::{BatchRun, Control, Noise, Request, Response};
use crate::results::Speed;
use crate::verdict::{Failure, Pace};
use generator::TestCase;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

impl OracleExecutor {
    /// `test` with the control its runs get: the one it has, or one drawn from its noise seed
    /// by [`OracleConfig::scheduling`].
    pub(super) fn scheduled(&self, test: &TestCase) -> TestCase {
        let mut test = test.clone();
        if test.control.is_free() {
            let steps = self.steps_of(&test.type_path);
            test.control = self.config.scheduling.control(test.noise_seed, steps);
        }
        test
    }

    /// About how many schedule points a controlled run of `type_path` passes.
    pub(super) fn steps_of(&self, type_path: &str) -> u32 {
        lock(&self.steps)
            .get(type_path)
            .copied()
            .unwrap_or(DEFAULT_STEPS)
    }

    /// One concurrent run of `test` (a confirmation, a shrinking candidate, a replay).
    pub(super) fn concurrent_request(&self, test: &TestCase) -> Request {
        self.runs_request(test, Runs::ONCE)
    }

    /// Concurrent runs of `test` back to back, answered once.
    fn runs_request(&self, test: &TestCase, runs: Runs) -> Request {
        Request::Concurrent {
            test: test.clone(),
            noise: self.noise_of(test),
            timeout_ms: timeout_ms(&self.config),
            capture: self.config.results.is_some(),
            repeat: runs.repeat,
            repeat_for_ms: runs.for_ms,
        }
    }

    /// The one batch of runs that gives a rare free panic its chance again (confirmation, and
    /// each shrinking candidate of such a panic): [`confirm_batch`] runs, and no new one after
    /// [`CONFIRM_BATCH_TIME`]. The count is drawn from how long the run that failed took, with
    /// a floor of 1,000: runs slower than that one (a loaded machine, a test whose calls wait
    /// on timeouts) or than a millisecond would make the batch many seconds, all of them past
    /// the campaign's deadline, which is looked at only between tests.
    pub(super) fn confirm_batch_request(&self, test: &TestCase, elapsed_us: u64) -> Request {
        let runs = Runs {
            repeat: confirm_batch(elapsed_us),
            for_ms: Some(CONFIRM_BATCH_TIME.as_millis() as u64),
        };
        self.runs_request(test, runs)
    }

    /// The noise and control of a concurrent run of `test`.
    fn noise_of(&self, test: &TestCase) -> Noise {
        Noise {
            control: test.control,
            ..self.config.noise.noise(test.noise_seed)
        }
    }

    /// Runs of a campaign test: [`OracleConfig::repeat`], or as many as the test's pair has
    /// earned ([`adaptive_repeat`]), no new one after [`REPEAT_LIMIT`] (a test whose runs are
    /// far slower than its type's). Counts the test for its pair. Under the results oracle
    /// the worker answers the runs whose results differ (`Response::others`), each judged.
    fn campaign_runs(&self, test: &TestCase) -> Runs {
        match self.config.repeat {
            Repeat::Times(repeat) => Runs {
                repeat: u64::from(repeat.max(1)),
                for_ms: None,
            },
            Repeat::Adaptive => {
                let mut pace = lock(&self.pace);
                let earned = pace.aimed(test);
                let spread = self.config.results.is_none();
                match adaptive_repeat(earned, pace.run_us(&test.type_path), spread) {
                    1 => Runs::ONCE,
                    repeat => Runs {
                        repeat,
                        for_ms: Some(REPEAT_LIMIT.as_millis() as u64),
                    },
                }
            }
        }
    }

    /// Takes a campaign answer into what `--repeat auto` reads ([`RepeatPace::ran`]).
    pub(super) fn pace_with(&self, test: &TestCase, response: &Response) {
        if self.config.repeat == Repeat::Adaptive {
            lock(&self.pace).ran(&test.type_path, response);
        }
    }

    /// One request running `tests` concurrently, each as often as [`Self::campaign_runs`]
    /// says: a batch, or a plain concurrent request for one test.
    pub(super) fn batch_request(&self, tests: &[TestCase]) -> Request {
        if let [test] = tests {
            return self.runs_request(test, self.campaign_runs(test));
        }
        self.batch_of(tests, |test| self.campaign_runs(test))
    }

    /// A batch running each of `tests` as often as `runs` says.
    pub(super) fn batch_of(
        &self,
        tests: &[TestCase],
        mut runs: impl FnMut(&TestCase) -> Runs,
    ) -> Request {
        Request::Batch {
            tests: tests
                .iter()
                .map(|test| {
                    let Runs { repeat, for_ms } = runs(test);
                    BatchRun {
                        test: test.clone(),
                        noise: self.noise_of(test),
                        repeat,
                        repeat_for_ms: for_ms,
                    }
                })
                .collect(),
            timeout_ms: timeout_ms(&self.config),
            capture: self.config.results.is_some(),
        }
    }

    pub(super) fn sequential(&self, test: &TestCase, order: &[(u8, u32)]) -> Response {
        self.paced_sequential(test, order, &Pace::Full)
    }

    /// A sequential run the results oracle asks for: at full speed, or slow, with a pause of
    /// `pause_us` (from the concurrent run's length) before each call.
    pub(super) fn results_run(
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
            Speed::NewWorker => {
                self.pool.restart_worker();
                self.sequential(test, order)
            }
        }
    }

    /// A sequential run of `order`; a paced one draws its noise from a seed of its own (a
    /// shrinking candidate keeps its test's noise seed, and with it the same delays at every
    /// point, which would judge every candidate alike).
    pub(super) fn paced_sequential(
        &self,
        test: &TestCase,
        order: &[(u8, u32)],
        pace: &Pace,
    ) -> Response {
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

    /// Adds `n` concurrent runs of `test` to `counter` and to its type's
    /// [`TypeRunStats::runs`].
    pub(super) fn count_runs(&self, counter: &AtomicU64, test: &TestCase, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
        self.type_stats_of(test, |stats| stats.runs += n);
    }

    /// Changes the run stats of `test`'s type.
    pub(super) fn type_stats_of(&self, test: &TestCase, change: impl FnOnce(&mut TypeRunStats)) {
        let mut per_type = self
            .per_type
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        change(per_type.entry(test.type_path.clone()).or_default());
    }

    /// Explores the smallest test of `test`'s pair under every schedule with at most two
    /// preemptions, once per pair and once more for a test passing a failing value
    /// ([`TypeRunStats::claim_exploration`], `explore.rs`), unless runs are free or the type's
    /// time is up. Answers the violation a failing schedule shows, as `judge` finds it in a
    /// candidate's run.
    pub(super) fn explore(
        &self,
        test: &TestCase,
        mut judge: impl FnMut(&TestCase, Response) -> Option<Violation>,
    ) -> Option<Violation> {
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
            let request = self.batch_of(&candidates, |_| Runs::ONCE);
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
                found = judge(candidate, response);
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

/// What the adaptive `repeat` ([`adaptive_repeat`]) reads: how many campaign tests each pair
/// was given so far, and about how long a run of each type takes.
#[derive(Default)]
pub(super) struct RepeatPace {
    /// Per type, the tests aimed at each pair since a run first covered it.
    aimed: HashMap<String, HashMap<[String; 2], u64>>,
    run_us: HashMap<String, u64>,
}

impl RepeatPace {
    /// Counts a campaign test of `test`'s pair; answers the tests the pair had before it
    /// since a run first covered it (0 while none has: new tests are what a pair not yet
    /// covered needs, not more runs of the same one).
    fn aimed(&mut self, test: &TestCase) -> u64 {
        let mut pair = test.pair.clone();
        pair.sort();
        match self
            .aimed
            .get_mut(&test.type_path)
            .and_then(|pairs| pairs.get_mut(&pair))
        {
            Some(tests) => {
                *tests += 1;
                *tests - 1
            }
            None => 0,
        }
    }

    /// About how long a run of `type_path` takes, in microseconds; 0 before any answer.
    fn run_us(&self, type_path: &str) -> u64 {
        self.run_us.get(type_path).copied().unwrap_or(0)
    }

    /// Takes a campaign answer's time per run into its type's estimate (a moving average,
    /// so a slow stretch of a loaded machine passes),
    /// and the pairs it covered into those whose tests are counted.
    pub(super) fn ran(&mut self, type_path: &str, response: &Response) {
        let per_run = response.elapsed_us / response.runs.max(1);
        let estimate = self.run_us.entry(type_path.to_string()).or_insert(per_run);
        *estimate = (*estimate * 3 + per_run) / 4;
        let pairs = self.aimed.entry(type_path.to_string()).or_default();
        for pair in response.covered.iter().flatten() {
            if !pairs.contains_key(pair) {
                let mut pair = pair.clone();
                pair.sort();
                pairs.entry(pair).or_insert(0);
            }
        }
    }
}

/// Runs of the next campaign test of a pair that was given `tests` tests since a run first
/// covered it ([`RepeatPace`]), on a type whose runs take about `run_us` each (0: not known
/// yet). A pair's first tests run once:
/// a bug that any run of them shows is reported as soon as the tests can find it, not after
/// runs of the same test. Then the runs double with the pair's tests — 2 from its 8th test,
/// 4 from its 16th, up to 16 from its 64th — for a narrow window that new tests keep
/// missing, as long as the runs fit in about [`REPEAT_TIME`]: each answer still comes back
/// in about that time, and the campaign keeps steering.
///
/// With `spread` (the panic oracle) only one test in `runs` gets its `runs`, the others one:
/// the repeated runs take about as long as the single tests beside them, never most of the
/// pair's time. A bug in a rare test that fails in a good share of its runs needs new tests,
/// not runs of the old ones (quick_cache 0.6.0: 0 of 3 seeds when every test ran its 16, 3 of
/// 3 with one in N). Under the results oracle every test gets its runs: a wrong result that
/// needs many schedules of one test (moka 0.9.5's coalesced `get_with`) was found in 2 of 4
/// campaigns so and in 0 of 4 with one in N, and a test's runs share its sequential orders.
pub(crate) fn adaptive_repeat(tests: u64, run_us: u64, spread: bool) -> u64 {
    let earned = match tests {
        0..8 => 1,
        8..16 => 2,
        16..32 => 4,
        32..64 => 8,
        _ => 16,
    };
    let fits = (REPEAT_TIME.as_micros() as u64 / run_us.max(1)).max(1);
    let runs = earned.min(fits);
    if !spread || tests.is_multiple_of(runs) {
        runs
    } else {
        1
    }
}

/// About how long the runs of one repeated campaign test take ([`adaptive_repeat`]).
const REPEAT_TIME: Duration = Duration::from_millis(2);

/// No new run of a repeated campaign test after this long: its runs may be far slower than
/// its type's others (a call that waits for a deadline), and answers must come back.
const REPEAT_LIMIT: Duration = Duration::from_millis(20);

/// How often a request runs its test: `repeat` runs, no new one after `for_ms`.
#[derive(Clone, Copy)]
pub(super) struct Runs {
    repeat: u64,
    for_ms: Option<u64>,
}

impl Runs {
    pub(super) const ONCE: Runs = Runs {
        repeat: 1,
        for_ms: None,
    };
}

/// Runs in the one batch that confirms a panic its single re-runs did not repeat: about a
/// second of a run that took `elapsed_us`, between 1,000 and 100,000, and no more than fit in
/// [`CONFIRM_BATCH_TIME`] ([`OracleExecutor::confirm_batch_request`]).
fn confirm_batch(elapsed_us: u64) -> u64 {
    (1_000_000 / elapsed_us.max(1)).clamp(1_000, 100_000)
}

/// The longest a batch of [`confirm_batch`] runs goes on in the worker.
const CONFIRM_BATCH_TIME: Duration = Duration::from_secs(1);

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

/// The schedule points PCT assumes a run of a type passes before one of its runs said.
const DEFAULT_STEPS: u32 = 24;

fn timeout_ms(config: &OracleConfig) -> u64 {
    (config.test_timeout.as_millis() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A pair's first tests run once; its later ones `n` times (spread: one in `n` of them),
    /// as long as their runs fit in about 2 ms (a run's time not known yet: 0).
    #[test]
    fn a_pair_earns_runs_as_its_tests_go_on_within_the_time_of_an_answer() {
        let table = [
            // (tests of the pair before, µs per run, runs spread, runs not spread)
            (0, 0, 1, 1),
            (7, 10, 1, 1),
            (8, 10, 2, 2),
            (9, 10, 1, 2),
            (16, 10, 4, 4),
            (17, 10, 1, 4),
            (40, 10, 8, 8),
            (41, 10, 1, 8),
            (64, 10, 16, 16),
            (65, 10, 1, 16),
            (10_000, 0, 16, 16),
            (10_001, 0, 1, 16),
            (10_000, 250, 8, 8),
            (10_000, 1_000, 2, 2),
            (10_000, 5_000, 1, 1),
            (8, 5_000, 1, 1),
        ];
        for (tests, run_us, spread, not_spread) in table {
            let got = [true, false].map(|s| adaptive_repeat(tests, run_us, s));
            assert_eq!(got, [spread, not_spread], "{tests} tests, {run_us} µs");
        }
    }

    /// A pair's tests count towards more runs only once a run covered the pair; each test
    /// counts once, and a run's time enters its type's average.
    #[test]
    fn a_pairs_tests_count_once_a_run_covered_it() {
        use crate::protocol::Outcome;
        let test = super::super::two_threads("t::T", ["b", "a"], [vec![], vec![]]);
        let mut pace = RepeatPace::default();
        assert_eq!((pace.aimed(&test), pace.aimed(&test)), (0, 0));
        let mut answer = Response::new(1, Outcome::Passed);
        answer.covered = Some(vec![["a".to_string(), "b".to_string()]]);
        answer.elapsed_us = 800;
        answer.runs = 4;
        pace.ran("t::T", &answer);
        assert_eq!(pace.run_us("t::T"), 200);
        let counted: Vec<u64> = (0..3).map(|_| pace.aimed(&test)).collect();
        assert_eq!(counted, [0, 1, 2]);
        // Another answer covering it again does not start the count over.
        pace.ran("t::T", &answer);
        assert_eq!(pace.aimed(&test), 3);
        let other = super::super::two_threads("u::U", ["a", "b"], [vec![], vec![]]);
        assert_eq!(pace.aimed(&other), 0);
    }
}
