//! `cargo covcon bench`: how many tests and seconds each strategy needs until the first
//! violation, per type, over several seeds, in one process on one machine (CovCon Table II).
//!
//! The harness is built once; then every (type, seed, strategy) gets a campaign of its own
//! through `generator::run_campaign` and one shared `OracleExecutor`, strategies interleaved
//! so that a change in machine load hits all of them alike; the executor starts each
//! campaign afresh (`OracleExecutor::start_afresh`: its workers stay, what it learnt goes),
//! so that no campaign finds a type's pairs explored or its violation confirmed by an
//! earlier one. With `--shrink` each violation is shrunk as a run's is, and its seconds are
//! those until the report a user gets. A few types also get a
//! coverage-over-time run per strategy (CovCon Fig. 3). Results go to stdout as markdown and,
//! with `--out FILE`, to FILE, `FILE.json` and `FILE-coverage.csv`.

use crate::cli::BenchArgs;
use crate::exit_code::{usage_error, ExitCode};
use crate::options::{parse_duration, Console, OracleOptions};
use crate::output::stdout;
use crate::select;
use crate::session::{Prepared, Session};
use crate::workspace::{self, WorkspaceOptions};
use analysis::{Group, TypeModel};
use anyhow::{Context, Result};
use generator::{CampaignConfig, HistoryPoint, Strategy};
use oracle::OracleExecutor;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Tests per batch: small, so that tests-until-found is not rounded up to a big batch.
const BATCH: usize = 8;

/// One campaign of one type with one strategy and seed.
#[derive(Debug, Clone, Serialize)]
pub struct BenchRun {
    pub type_path: String,
    pub strategy: String,
    pub seed: u64,
    /// Tests until the first violation, `None` when none was found within the budget.
    pub tests_until_found: Option<u64>,
    pub seconds_until_found: Option<f64>,
    /// `panic`, `deadlock`, … and the pair of the first violation.
    pub found: Option<String>,
    pub tests_run: u64,
    pub seconds: f64,
}

/// The runs of one type and strategy, summarised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub type_path: String,
    pub strategy: String,
    pub found: usize,
    pub runs: usize,
    /// Medians over all runs, a run without a violation counting as infinitely long; `None`
    /// when half or more of the runs found nothing.
    pub median_tests: Option<f64>,
    pub median_seconds: Option<f64>,
    /// Smallest and largest over the runs that found a violation.
    pub min_max_tests: Option<(u64, u64)>,
    pub min_max_seconds: Option<(f64, f64)>,
}

/// Coverage over time of one type and strategy (`--keep-going`, one seed).
#[derive(Debug, Clone, Serialize)]
pub struct CoverageRun {
    pub type_path: String,
    pub strategy: String,
    pub seed: u64,
    /// Pairs of the type the analysis did not remove (what `pairs_covered` counts).
    pub pairs: usize,
    pub points: Vec<HistoryPoint>,
}

/// Everything one bench run measured.
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    pub machine: String,
    pub build_s: f64,
    pub build_cached: bool,
    pub seeds: Vec<u64>,
    pub strategies: Vec<String>,
    pub max_tests: u64,
    pub time_budget_s: f64,
    pub jobs: usize,
    pub elapsed_s: f64,
    pub summaries: Vec<Summary>,
    pub runs: Vec<BenchRun>,
    pub coverage: Vec<CoverageRun>,
}

pub fn bench(args: &BenchArgs) -> Result<ExitCode> {
    if args.floor {
        stdout(&floor_text());
        return Ok(ExitCode::Success);
    }
    let start = Instant::now();
    let console = Console::new(&args.output);
    let strategies: Vec<Strategy> = args
        .strategies
        .iter()
        .map(|s| s.parse().map_err(usage_error))
        .collect::<Result<_>>()?;
    if strategies.is_empty() || args.seeds == 0 {
        return Err(usage_error("--seeds and --strategies must not be empty"));
    }
    let per_run = parse_duration(&args.time_budget)
        .map_err(|e| usage_error(format_args!("invalid time budget: {e}")))?;
    let workspace = workspace::load(&WorkspaceOptions::new(&args.workspace))?;
    // Workers, the test timeout, the scheduling and the oracle as a run would have them: the
    // command line over `[..metadata.covcon]`.
    let oracle = OracleOptions::bench(
        args,
        &console,
        &workspace.run_config(),
        &workspace.target_dir,
    )?;
    let session = Session::new(workspace, &args.types, &oracle);
    if session.selection.types.is_empty() {
        return Err(usage_error("no testable thread-safe type selected"));
    }
    console.note("bench: preparing the harness");
    let build_start = Instant::now();
    let prepared = session.prepare()?;
    let harness = &prepared.harness;
    console.note(format_args!(
        "bench: harness ready in {:.1}s ({})",
        build_start.elapsed().as_secs_f64(),
        if harness.cached { "cached" } else { "built" }
    ));
    let runnable = &prepared.runnable;
    let mut executor = prepared.executor(&session.oracle)?;
    let seeds: Vec<u64> = (0..args.seeds).map(|i| args.first_seed + i).collect();
    let settings = Settings {
        max_tests: args.max_tests,
        per_run,
        prepared: &prepared,
        scoped_tests: generator::scoped_tests(session.oracle.results.is_some()),
    };
    let mut runs = Vec::new();
    for (i, t) in runnable.iter().enumerate() {
        for &seed in &seeds {
            for &strategy in &strategies {
                runs.push(settings.run(&mut executor, t, strategy, seed));
            }
        }
        let found = runs
            .iter()
            .filter(|r| r.type_path == t.path && r.tests_until_found.is_some())
            .count();
        console.note(format_args!(
            "bench: [{}/{}] {}: {found}/{} runs found a violation",
            i + 1,
            runnable.len(),
            t.path,
            seeds.len() * strategies.len()
        ));
    }
    let mut coverage = Vec::new();
    for t in coverage_types(runnable, &args.coverage_types) {
        for &strategy in &strategies {
            coverage.push(settings.coverage(&mut executor, t, strategy, seeds[0]));
        }
    }
    drop(executor);
    let strategy_names: Vec<String> = strategies.iter().map(ToString::to_string).collect();
    let mut summaries = Vec::new();
    for t in runnable {
        for s in &strategy_names {
            let of: Vec<&BenchRun> = runs
                .iter()
                .filter(|r| r.type_path == t.path && &r.strategy == s)
                .collect();
            summaries.push(summarise(&t.path, s, &of));
        }
    }
    let result = BenchResult {
        machine: machine(),
        build_s: harness.build_secs,
        build_cached: harness.cached,
        seeds,
        strategies: strategy_names,
        max_tests: args.max_tests,
        time_budget_s: per_run.as_secs_f64(),
        jobs: session.oracle.jobs,
        elapsed_s: start.elapsed().as_secs_f64(),
        summaries,
        runs,
        coverage,
    };
    let text = markdown(&result);
    stdout(&text);
    if let Some(out) = &args.out {
        write_outputs(out, &text, &result)?;
        console.note(format_args!(
            "bench: wrote {}, {} and {}",
            out.display(),
            sibling(out, ".json").display(),
            sibling(out, "-coverage.csv").display()
        ));
    }
    Ok(ExitCode::Success)
}

/// Rounds of each floor measurement, and measurements (the best is kept: the machine's
/// other work only slows a round down).
const FLOOR_ROUNDS: u64 = 1_000_000;
const FLOOR_TRIES: usize = 3;

/// The floor (`oracle::floor_ns`), best of [`FLOOR_TRIES`], as `bench --floor` prints it.
fn floor_text() -> String {
    let ns = (0..FLOOR_TRIES)
        .map(|_| oracle::floor_ns(FLOOR_ROUNDS))
        .fold(f64::INFINITY, f64::min);
    format!(
        "floor: {ns:.0} ns per run, {:.0} runs/s (two warm threads, one trivial call each; best of {FLOOR_TRIES} x {FLOOR_ROUNDS} rounds)\n",
        1e9 / ns
    )
}

/// What every run shares.
struct Settings<'a> {
    max_tests: u64,
    per_run: Duration,
    prepared: &'a Prepared,
    /// In how many tests threads may keep guards in scopes (`generator::scoped_tests`).
    scoped_tests: u32,
}

impl Settings<'_> {
    fn config(&self, t: &TypeModel, strategy: Strategy, seed: u64) -> CampaignConfig {
        CampaignConfig {
            strategy,
            seed,
            time_budget: self.per_run,
            max_tests_per_type: Some(self.max_tests),
            batch_size: BATCH,
            types: self.prepared.campaign_types(t),
            scoped_tests: self.scoped_tests,
            // The bench measures the first sighting, as it always has.
            stop_at_unconfirmed: true,
            ..CampaignConfig::default()
        }
    }

    fn run(
        &self,
        executor: &mut OracleExecutor,
        t: &TypeModel,
        strategy: Strategy,
        seed: u64,
    ) -> BenchRun {
        let config = self.config(t, strategy, seed);
        executor.start_afresh();
        let result =
            generator::run_campaign(std::slice::from_ref(t), &config, executor, &mut |_| {});
        let r = result.types.into_iter().next();
        let first = r.as_ref().and_then(|r| r.violations.first());
        BenchRun {
            type_path: t.path.clone(),
            strategy: strategy.to_string(),
            seed,
            tests_until_found: first.map(|v| v.tests_until_found),
            seconds_until_found: first.map(|v| v.seconds_until_found),
            found: first.map(|v| {
                let [a, b] = &v.violation.methods;
                format!("{} {a} ∥ {b}", v.violation.kind)
            }),
            tests_run: r.as_ref().map_or(0, |r| r.tests_run),
            seconds: r.as_ref().map_or(0.0, |r| r.seconds),
        }
    }

    fn coverage(
        &self,
        executor: &mut OracleExecutor,
        t: &TypeModel,
        strategy: Strategy,
        seed: u64,
    ) -> CoverageRun {
        let config = CampaignConfig {
            keep_going: true,
            ..self.config(t, strategy, seed)
        };
        executor.start_afresh();
        let result =
            generator::run_campaign(std::slice::from_ref(t), &config, executor, &mut |_| {});
        let r = result.types.into_iter().next();
        CoverageRun {
            type_path: t.path.clone(),
            strategy: strategy.to_string(),
            seed,
            pairs: r.as_ref().map_or(0, |r| {
                r.pairs.iter().filter(|p| p.group != Group::Removed).count()
            }),
            points: r.map(|r| r.history).unwrap_or_default(),
        }
    }
}

/// The types named by `patterns`, or else the two with the most pairs.
fn coverage_types<'a>(types: &'a [TypeModel], patterns: &[String]) -> Vec<&'a TypeModel> {
    if !patterns.is_empty() {
        return types
            .iter()
            .filter(|t| patterns.iter().any(|p| select::type_matches(p, &t.path)))
            .collect();
    }
    let mut by_size: Vec<&TypeModel> = types.iter().collect();
    by_size.sort_by_key(|t| std::cmp::Reverse(t.methods.iter().filter(|m| m.supported()).count()));
    by_size.truncate(2);
    by_size
}

/// Median of `values`, `None` standing for "not found within the budget", which sorts after
/// every number; `None` when the median itself falls on a run that found nothing.
pub fn censored_median(values: &[Option<f64>]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut found: Vec<f64> = values.iter().flatten().copied().collect();
    found.sort_by(f64::total_cmp);
    let n = values.len();
    let at = |i: usize| found.get(i).copied();
    if n % 2 == 1 {
        at(n / 2)
    } else {
        Some((at(n / 2 - 1)? + at(n / 2)?) / 2.0)
    }
}

fn summarise(type_path: &str, strategy: &str, runs: &[&BenchRun]) -> Summary {
    let tests: Vec<Option<f64>> = runs
        .iter()
        .map(|r| r.tests_until_found.map(|t| t as f64))
        .collect();
    let seconds: Vec<Option<f64>> = runs.iter().map(|r| r.seconds_until_found).collect();
    let found_tests: Vec<u64> = runs.iter().filter_map(|r| r.tests_until_found).collect();
    let found_seconds: Vec<f64> = runs.iter().filter_map(|r| r.seconds_until_found).collect();
    Summary {
        type_path: type_path.to_owned(),
        strategy: strategy.to_owned(),
        found: found_tests.len(),
        runs: runs.len(),
        median_tests: censored_median(&tests),
        median_seconds: censored_median(&seconds),
        min_max_tests: found_tests
            .iter()
            .min()
            .copied()
            .zip(found_tests.iter().max().copied()),
        min_max_seconds: found_seconds
            .iter()
            .copied()
            .reduce(f64::min)
            .zip(found_seconds.iter().copied().reduce(f64::max)),
    }
}

/// `a / b` when both are known and `b` is not zero.
fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (b > 0.0).then(|| a / b)
}

/// Resamples behind a bootstrap interval ([`speedup_interval`]).
const RESAMPLES: usize = 2_000;

/// Seconds below this count as this much in a ratio (a bug found at once).
const LEAST_SECONDS: f64 = 1e-4;

/// The 90 % bootstrap interval of the geometric mean over types of `random`'s median seconds
/// over a strategy's: `types` holds, per type, both strategies' seconds per seed, a run that
/// found nothing counted as the whole time budget. Each resample draws every type's seeds
/// again, with replacement, for each strategy apart. Ten seeds of a skewed distribution pin a
/// median loosely: the interval says how far apart two strategies' medians may be by chance.
/// Deterministic (a `StdRng` seeded with `seed`); `None` without a type or a run.
fn speedup_interval(types: &[(Vec<f64>, Vec<f64>)], seed: u64) -> Option<(f64, f64)> {
    if types.is_empty() || types.iter().any(|(r, m)| r.is_empty() || m.is_empty()) {
        return None;
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut median_of_resample = |values: &[f64]| {
        let drawn: Vec<Option<f64>> = (0..values.len())
            .map(|_| values.choose(&mut rng).copied())
            .collect();
        censored_median(&drawn).map_or(LEAST_SECONDS, |m| m.max(LEAST_SECONDS))
    };
    let mut geomeans: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let logs: f64 = types
                .iter()
                .map(|(random, mine)| (median_of_resample(random) / median_of_resample(mine)).ln())
                .sum();
            (logs / types.len() as f64).exp()
        })
        .collect();
    geomeans.sort_by(f64::total_cmp);
    Some((
        geomeans[RESAMPLES / 20],
        geomeans[RESAMPLES - 1 - RESAMPLES / 20],
    ))
}

/// The seconds of each run of `type_path` under `strategy`, a miss counted as `budget`.
fn seconds_of(result: &BenchResult, type_path: &str, strategy: &str) -> Vec<f64> {
    result
        .runs
        .iter()
        .filter(|r| r.type_path == type_path && r.strategy == strategy)
        .map(|r| r.seconds_until_found.unwrap_or(result.time_budget_s))
        .collect()
}

fn fmt_interval(interval: Option<(f64, f64)>) -> String {
    interval.map_or_else(String::new, |(lo, hi)| format!(" ({lo:.2}–{hi:.2})"))
}

fn fmt_opt(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.digits$}"))
}

/// The results as markdown: settings, the per-type table and the coverage tables.
pub fn markdown(result: &BenchResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Machine: {}. Harness build: {:.1} s{}. {} seed(s) ({}–{}), at most {} tests and {:.1} s per run, {} worker(s); whole bench {:.0} s.\n",
        result.machine,
        result.build_s,
        if result.build_cached { " (cached)" } else { "" },
        result.seeds.len(),
        result.seeds.first().copied().unwrap_or(0),
        result.seeds.last().copied().unwrap_or(0),
        result.max_tests,
        result.time_budget_s,
        result.jobs,
        result.elapsed_s,
    );
    out.push_str(
        "Tests and seconds until the first violation: median over seeds (a run that found nothing counts as infinite; — when half or more found nothing) and min–max over the runs that found one. Speedup: median of `random` / median of the strategy; after the seconds' speedup, in brackets, its 90 % bootstrap interval over the seeds (a run that found nothing counted as the time budget).\n\n",
    );
    out.push_str("| type | strategy | found | tests: median | tests: min–max | seconds: median | seconds: min–max | speedup (tests) | speedup (s) |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for s in &result.summaries {
        let random = result
            .summaries
            .iter()
            .find(|r| r.type_path == s.type_path && r.strategy == "random");
        let speedup = |mine: Option<f64>, theirs: Option<f64>| {
            if s.strategy == "random" {
                String::new()
            } else {
                ratio(theirs, mine).map_or_else(|| "—".to_owned(), |r| format!("{r:.2}×"))
            }
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {}/{} | {} | {} | {} | {} | {} | {} |",
            s.type_path,
            s.strategy,
            s.found,
            s.runs,
            fmt_opt(s.median_tests, 0),
            s.min_max_tests
                .map_or_else(|| "—".to_owned(), |(a, b)| format!("{a}–{b}")),
            fmt_opt(s.median_seconds, 3),
            s.min_max_seconds
                .map_or_else(|| "—".to_owned(), |(a, b)| format!("{a:.3}–{b:.3}")),
            speedup(s.median_tests, random.and_then(|r| r.median_tests)),
            speedup(s.median_seconds, random.and_then(|r| r.median_seconds))
                + &seconds_interval(result, s, random.is_some()),
        );
    }
    out.push('\n');
    out.push_str(&totals(result));
    for type_path in result
        .coverage
        .iter()
        .map(|c| c.type_path.as_str())
        .collect::<std::collections::BTreeSet<_>>()
    {
        out.push_str(&coverage_table(result, type_path));
    }
    out
}

/// The 90 % interval of `random` / `s` in median seconds, as a cell's tail; empty for
/// `random` itself and without a `random` to compare with.
fn seconds_interval(result: &BenchResult, s: &Summary, has_random: bool) -> String {
    if s.strategy == "random" || !has_random {
        return String::new();
    }
    let types = [(
        seconds_of(result, &s.type_path, "random"),
        seconds_of(result, &s.type_path, &s.strategy),
    )];
    fmt_interval(speedup_interval(&types, BOOTSTRAP_SEED))
}

/// The seed of every bootstrap stream: the same runs give the same intervals.
const BOOTSTRAP_SEED: u64 = 0xB007_57A9;

/// Per strategy: types found on the median, and how often its median beats `random`'s.
fn totals(result: &BenchResult) -> String {
    let mut out = String::from("| strategy | types found on the median | found/runs | median tests below random's | geometric mean speedup (tests) | geometric mean speedup (s), 90 % interval |\n|---|---:|---:|---:|---:|---:|\n");
    for strategy in &result.strategies {
        let mine: Vec<&Summary> = result
            .summaries
            .iter()
            .filter(|s| &s.strategy == strategy)
            .collect();
        let (mut better, mut compared, mut both, mut log_sum) = (0, 0, 0, 0.0);
        // In seconds, over the types both found on the median: the point and its interval.
        let (mut log_sum_s, mut seconds) = (0.0, Vec::new());
        for s in &mine {
            let Some(random) = result
                .summaries
                .iter()
                .find(|r| r.type_path == s.type_path && r.strategy == "random")
            else {
                continue;
            };
            // A type found on the median by one of the two only counts for that one.
            match (s.median_tests, random.median_tests) {
                (Some(a), Some(b)) => {
                    compared += 1;
                    both += 1;
                    better += usize::from(a < b);
                    log_sum += (b.max(1.0) / a.max(1.0)).ln();
                    if let (Some(mine), Some(theirs)) = (s.median_seconds, random.median_seconds) {
                        log_sum_s += (theirs.max(LEAST_SECONDS) / mine.max(LEAST_SECONDS)).ln();
                        seconds.push((
                            seconds_of(result, &s.type_path, "random"),
                            seconds_of(result, &s.type_path, strategy),
                        ));
                    }
                }
                (Some(_), None) => {
                    compared += 1;
                    better += 1;
                }
                (None, Some(_)) => compared += 1,
                (None, None) => {}
            }
        }
        let in_seconds = if strategy == "random" || seconds.is_empty() {
            "—".to_owned()
        } else {
            format!(
                "{:.2}×{}",
                (log_sum_s / seconds.len() as f64).exp(),
                fmt_interval(speedup_interval(&seconds, BOOTSTRAP_SEED))
            )
        };
        let _ = writeln!(
            out,
            "| {strategy} | {}/{} | {}/{} | {} | {} | {in_seconds} |",
            mine.iter().filter(|s| s.median_tests.is_some()).count(),
            mine.len(),
            mine.iter().map(|s| s.found).sum::<usize>(),
            mine.iter().map(|s| s.runs).sum::<usize>(),
            if strategy == "random" {
                "—".to_owned()
            } else {
                format!("{better}/{compared}")
            },
            if strategy == "random" || both == 0 {
                "—".to_owned()
            } else {
                format!("{:.2}×", (log_sum / both as f64).exp())
            },
        );
    }
    out.push('\n');
    out
}

/// Pairs covered after 10, 30, 100, … tests, one column per strategy.
fn coverage_table(result: &BenchResult, type_path: &str) -> String {
    let runs: Vec<&CoverageRun> = result
        .coverage
        .iter()
        .filter(|c| c.type_path == type_path)
        .collect();
    let pairs = runs.first().map_or(0, |c| c.pairs);
    let mut out = format!(
        "Pairs covered over tests, `{type_path}` ({pairs} pairs not removed by the analysis, seed {}, going on after violations):\n\n| tests |",
        runs.first().map_or(0, |c| c.seed)
    );
    for r in &runs {
        let _ = write!(out, " {} |", r.strategy);
    }
    out.push_str("\n|---:|");
    out.push_str(&"---:|".repeat(runs.len()));
    out.push('\n');
    let mut marks = vec![];
    let mut m = 10;
    while m < result.max_tests {
        marks.push(m);
        marks.push(m * 3);
        m *= 10;
    }
    marks.retain(|&m| m < result.max_tests);
    marks.push(result.max_tests);
    for mark in marks {
        let _ = write!(out, "| {mark} |");
        for r in &runs {
            let last = r.points.last().map_or(0, |p| p.tests_run);
            let cell = if mark > last {
                "".to_owned()
            } else {
                covered_at(&r.points, |p| p.tests_run <= mark).to_string()
            };
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    let _ = write!(out, "| seconds to the last new pair |");
    for r in &runs {
        let last_new = r
            .points
            .windows(2)
            .filter(|w| w[1].pairs_covered > w[0].pairs_covered)
            .map(|w| w[1].seconds)
            .next_back()
            .unwrap_or(0.0);
        let _ = write!(out, " {last_new:.3} |");
    }
    out.push_str("\n\n");
    out
}

/// Pairs covered at the last point that satisfies `before` (the history is a step function).
fn covered_at(points: &[HistoryPoint], before: impl Fn(&HistoryPoint) -> bool) -> usize {
    points
        .iter()
        .take_while(|p| before(p))
        .last()
        .map_or(0, |p| p.pairs_covered)
}

/// Cores, CPU model and load average, from `/proc` where there is one.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .map_or_else(String::new, |l| format!(", load average {l} at the end"));
    format!("{cores} cores, {model}{load}")
}

/// `bench.md` → `bench.json`, `bench-coverage.csv`.
fn sibling(out: &Path, suffix: &str) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or_else(|| "bench".to_owned(), |s| s.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}{suffix}"))
}

fn write_outputs(out: &Path, text: &str, result: &BenchResult) -> Result<()> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    let write = |path: PathBuf, text: String| {
        std::fs::write(&path, text).with_context(|| format!("cannot write `{}`", path.display()))
    };
    write(out.to_path_buf(), text.to_owned())?;
    write(
        sibling(out, ".json"),
        serde_json::to_string_pretty(result)? + "\n",
    )?;
    let mut csv = String::from("type,strategy,seed,tests,seconds,covered\n");
    for c in &result.coverage {
        for p in &c.points {
            let _ = writeln!(
                csv,
                "{},{},{},{},{:.4},{}",
                c.type_path, c.strategy, c.seed, p.tests_run, p.seconds, p.pairs_covered
            );
        }
    }
    write(sibling(out, "-coverage.csv"), csv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(values: &[Option<f64>], expect: Option<f64>) {
        assert_eq!(censored_median(values), expect, "{values:?}");
    }

    #[test]
    fn the_median_of_found_runs_is_the_middle_value() {
        check(&[Some(3.0), Some(1.0), Some(2.0)], Some(2.0));
    }

    #[test]
    fn an_even_number_of_runs_averages_the_two_middle_values() {
        check(&[Some(4.0), Some(1.0), Some(2.0), Some(3.0)], Some(2.5));
    }

    #[test]
    fn runs_that_found_nothing_count_as_longer_than_any_that_did() {
        check(&[None, Some(100.0), Some(1.0)], Some(100.0));
    }

    #[test]
    fn the_median_is_unknown_when_half_the_runs_found_nothing() {
        check(&[None, Some(1.0), None, Some(2.0)], None);
        check(&[], None);
    }

    /// Seconds per seed of a skewed time to a bug: most runs quick, a few slow.
    fn skewed(scale: f64) -> Vec<f64> {
        [0.1, 0.2, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0, 2.0, 6.0]
            .iter()
            .map(|s| s * scale)
            .collect()
    }

    /// Two strategies with the same times have an interval around 1; one four times as fast
    /// in every seed has one above 1 (and around 4); the interval of several types is the
    /// geometric mean's; the same runs give the same interval.
    #[test]
    fn the_seconds_speedup_interval_brackets_the_ratio_by_chance_alone() {
        let same = speedup_interval(&[(skewed(1.0), skewed(1.0))], 1).unwrap();
        assert!(same.0 < 1.0 && 1.0 < same.1, "{same:?}");
        let faster = speedup_interval(&[(skewed(1.0), skewed(0.25))], 1).unwrap();
        assert!(
            1.0 < faster.0 && faster.0 < 4.0 && 4.0 < faster.1,
            "{faster:?}"
        );
        let both = speedup_interval(
            &[(skewed(1.0), skewed(1.0)), (skewed(1.0), skewed(0.25))],
            1,
        )
        .unwrap();
        assert!(same.0 < both.0 && both.1 < faster.1, "{both:?}");
        assert!(both.0 < 2.0 && 2.0 < both.1, "{both:?}");
        assert_eq!(
            speedup_interval(&[(skewed(1.0), skewed(0.25))], 1),
            Some(faster)
        );
        assert_eq!(speedup_interval(&[], 1), None);
        assert_eq!(speedup_interval(&[(vec![], skewed(1.0))], 1), None);
    }

    /// The bench's tables: each type's seconds speedup with its interval, and the strategy's
    /// geometric mean in seconds with its own; a miss counts as the budget in the interval.
    #[test]
    fn the_tables_give_the_seconds_speedup_with_its_interval() {
        let runs: Vec<BenchRun> = ["random", "bc"]
            .iter()
            .flat_map(|strategy| {
                let scale = if *strategy == "bc" { 0.25 } else { 1.0 };
                skewed(scale)
                    .into_iter()
                    .enumerate()
                    .map(move |(seed, s)| BenchRun {
                        type_path: "m::T".into(),
                        strategy: (*strategy).into(),
                        seed: seed as u64,
                        // The slowest `random` run found nothing within the budget.
                        tests_until_found: (s < 6.0).then_some(10),
                        seconds_until_found: (s < 6.0).then_some(s),
                        found: None,
                        tests_run: 10,
                        seconds: s,
                    })
            })
            .collect();
        let summaries = ["random", "bc"]
            .iter()
            .map(|strategy| {
                let mine: Vec<&BenchRun> =
                    runs.iter().filter(|r| r.strategy == *strategy).collect();
                summarise("m::T", strategy, &mine)
            })
            .collect();
        let result = BenchResult {
            machine: "test".into(),
            build_s: 0.0,
            build_cached: true,
            seeds: (0..10).collect(),
            strategies: vec!["random".into(), "bc".into()],
            max_tests: 100,
            time_budget_s: 20.0,
            jobs: 1,
            elapsed_s: 0.0,
            summaries,
            runs,
            coverage: Vec::new(),
        };
        let table = markdown(&result);
        let interval = speedup_interval(
            &[(seconds_of(&result, "m::T", "random"), skewed(0.25))],
            BOOTSTRAP_SEED,
        )
        .unwrap();
        let cell = format!("4.00×{}", fmt_interval(Some(interval)));
        assert!(
            table.contains(&format!("| 1.00× | {cell} |")),
            "per type:\n{table}"
        );
        assert!(
            table.contains(&format!("| bc | 1/1 | 10/10 | 0/1 | 1.00× | {cell} |")),
            "totals:\n{table}"
        );
        assert!(
            table.contains("| random | 1/1 | 9/10 | — | — | — |"),
            "{table}"
        );
    }

    #[test]
    fn outputs_sit_next_to_the_markdown_file() {
        assert_eq!(
            sibling(Path::new("out/bench.md"), ".json"),
            Path::new("out/bench.json")
        );
        assert_eq!(
            sibling(Path::new("bench.md"), "-coverage.csv"),
            Path::new("bench-coverage.csv")
        );
    }
}
