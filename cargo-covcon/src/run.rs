//! The campaign: load the workspace → analyze → select types → shard → build the harness →
//! run the generator against the oracle → reports → exit code. Also `replay`, which needs the
//! same harness.

use crate::baseline::Baseline;
use crate::cli::{OracleKind, ReplayArgs};
use crate::exit_code::{usage_error, ExitCode, OrExit};
use crate::options::{Console, OracleOptions, RunOptions};
use crate::output::{finish, stdout, Gate};
use crate::progress::Reporter;
use crate::report::{
    ApproximateMethod, CoveragePoint, Kind, PairReport, Report, Site, TypeReport, UntestedKind,
    ViolationReport,
};
use crate::select::Selection;
use crate::session::{harness_error, interrupt_flag, Session};
use crate::workspace::{self, Workspace, WorkspaceOptions};
use analysis::{ConstructorKind, Reason, Severity, TypeModel};
use anyhow::{Context, Result};
use generator::display::FreeFunction;
use generator::{CampaignConfig, Strategy, TypeResult};
use oracle::{SavedOracle, SavedTest, ViolationKind};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub fn run(options: &RunOptions, workspace: Workspace) -> Result<ExitCode> {
    let start = Instant::now();
    let console = &options.console;
    // Printed even with -q: without it a run cannot be repeated.
    eprintln!(
        "covcon: seed {seed} (repeat with --seed {seed}), strategy {}, budget {}s",
        options.strategy,
        options.time_budget.as_secs_f64(),
        seed = options.seed
    );
    let mut session = Session::new(workspace, &options.types, &options.oracle);
    let workspace = &session.workspace;
    if console.verbose > 0 {
        for d in &session.model.diagnostics {
            match &d.span {
                Some(s) => console.warn(format_args!(
                    "{}:{}: {}",
                    relative(&s.file, &workspace.root).display(),
                    s.line,
                    d.message
                )),
                None => console.warn(&d.message),
            }
        }
    }
    let selection = &mut session.selection;
    if let Some(shard) = options.shard {
        apply_shard(selection, shard);
        console.note(format_args!(
            "covcon: shard {shard}: {} type(s)",
            selection.types.len() + selection.untested.len()
        ));
    }
    if let Some(changed) = &options.in_diff {
        let before = selection.types.len() + selection.untested.len();
        // A type the baseline knows a violation of is tested too: the change may have fixed
        // it (or moved it), and the run says which.
        let known: Vec<String> = options
            .baseline
            .iter()
            .flat_map(|b| &b.violations)
            .map(|k| k.type_path.clone())
            .collect();
        apply_diff(selection, changed, &workspace.root, &known);
        let touched: Vec<&str> = selection
            .types
            .iter()
            .map(|t| t.path.as_str())
            .chain(selection.untested.iter().map(|(t, _)| t.path.as_str()))
            .collect();
        console.note(format_args!(
            "covcon: the diff touches {} of {before} type(s){}{}",
            touched.len(),
            if touched.is_empty() { "" } else { ": " },
            touched.join(", ")
        ));
    }
    let mut report = Report::new(options.seed, &options.strategy);
    report.workspace_root = Some(workspace.root.clone());
    report.shards = options.shard.iter().map(ToString::to_string).collect();
    report.diagnostics = selection.warnings.clone();
    report.diagnostics.extend(
        session
            .model
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| match &d.span {
                Some(s) => format!(
                    "{}:{}: {}",
                    relative(&s.file, &workspace.root).display(),
                    s.line,
                    d.message
                ),
                None => d.message.clone(),
            }),
    );
    for (t, why) in &selection.untested {
        report.types.push(untested_report(t, why, &workspace.root));
    }
    if selection.types.is_empty() && options.in_diff.is_some() {
        console.note("covcon: no type the diff touches can be tested; nothing to run");
    } else if selection.types.is_empty() {
        console.warn("no testable thread-safe type selected; nothing to run");
    } else {
        let tested = campaign(options, &session, &mut report)?;
        report.types.extend(tested);
    }
    untested_owners(&mut report.types, &session.selection.untested);
    report.types.sort_by(|a, b| a.path.cmp(&b.path));
    report.elapsed_s = start.elapsed().as_secs_f64();
    let code = finish(
        &mut report,
        &options.reports,
        &options.out,
        &Gate::new(options),
        console,
    )?;
    Ok(if report.interrupted {
        ExitCode::Interrupted
    } else {
        code
    })
}

/// Keeps the types the diff's lines touch ([`crate::diff::touched_types`]), tested or not.
pub(crate) fn apply_diff(
    selection: &mut Selection,
    changed: &crate::diff::Lines,
    root: &Path,
    known: &[String],
) {
    let types: Vec<&analysis::TypeModel> = selection
        .types
        .iter()
        .chain(selection.untested.iter().map(|(t, _)| t))
        .collect();
    let testable: Vec<bool> = (0..types.len())
        .map(|i| i < selection.types.len())
        .collect();
    let mut touched = crate::diff::touched_types(changed, &types, &testable, root);
    for (t, touched) in types.iter().zip(&mut touched) {
        *touched |= known.contains(&t.path);
    }
    let (tested, untested) = touched.split_at(selection.types.len());
    let mut tested = tested.iter();
    selection.types.retain(|_| *tested.next().unwrap_or(&false));
    let mut untested = untested.iter();
    selection
        .untested
        .retain(|_| *untested.next().unwrap_or(&false));
}

/// Keeps the shard's types; untested types are dealt together with tested ones so each
/// appears in exactly one shard's report.
fn apply_shard(selection: &mut Selection, shard: crate::shard::Shard) {
    let all = selection
        .types
        .iter()
        .map(|t| t.path.as_str())
        .chain(selection.untested.iter().map(|(t, _)| t.path.as_str()));
    let keep: Vec<String> = shard.select(all).into_iter().map(str::to_owned).collect();
    selection.types.retain(|t| keep.contains(&t.path));
    selection.untested.retain(|(t, _)| keep.contains(&t.path));
}

/// Tests per batch. The campaign checks the budget between batches and the oracle skips the
/// chunks of a batch it has not started by the deadline, but a started chunk of tests that each
/// run into the deadlock timeout still overshoots; smaller batches keep that bounded at little
/// cost in throughput.
const DEFAULT_BATCH: usize = 16;

/// Builds the harness and runs the generator against the oracle; one report per type.
fn campaign(
    options: &RunOptions,
    session: &Session,
    report: &mut Report,
) -> Result<Vec<TypeReport>> {
    let console = &options.console;
    let root = &session.workspace.root;
    let oracle_config = &session.oracle;
    console.note("covcon: preparing the harness (built once, reused while the code is unchanged)");
    let prepared = session.prepare()?;
    let harness = &prepared.harness;
    report.build_s = harness.build_secs;
    if options.console.verbose > 0 {
        for d in &harness.diagnostics {
            console.warn(&d.message);
        }
    }
    let mut reports: Vec<TypeReport> = prepared
        .undrivable
        .iter()
        .map(|(t, why)| untested_report(t, why, root))
        .collect();
    let runnable = &prepared.runnable;
    if runnable.is_empty() {
        console.warn("the harness can drive none of the selected types; nothing to run");
        return Ok(reports);
    }
    let mut executor = prepared.executor(oracle_config)?;
    let strategy: Strategy = options.strategy.parse().map_err(usage_error)?;
    let types = prepared.type_configs.clone();
    // A violation the baseline knows ends no type's search: the gate looks on for new ones.
    let known = options
        .baseline
        .as_ref()
        .map(Baseline::keys)
        .unwrap_or_default();
    let config = CampaignConfig {
        strategy,
        seed: options.seed,
        time_budget: options.time_budget,
        keep_going: options.keep_going,
        known,
        max_tests_per_type: options.max_tests,
        batch_size: options.batch_size.unwrap_or(DEFAULT_BATCH),
        types,
        stop: interrupt_flag(console),
        // A scope runs whole in the results oracle's sequential orders: not written there.
        scoped_tests: generator::scoped_tests(oracle_config.results.is_some()),
        ..CampaignConfig::default()
    };
    let mut reporter = Reporter::new(console);
    let result = generator::run_campaign(runnable, &config, &mut executor, &mut |p| {
        reporter.observe(p)
    });
    reporter.finish();
    report.interrupted = config.stop.raised();
    let stats = executor.stats();
    if console.verbose > 0 {
        console.note(format_args!(
            "covcon: oracle: {} tests ({} failed, {} of those explained by a sequential order), {} sequential runs for verdicts, {} confirmation re-runs, {} shrinking runs, {} worker processes started; {} controlled runs ({} where control ended early), {} runs exploring pairs",
            stats.tests,
            stats.failed,
            stats.explained,
            stats.sequential_runs,
            stats.confirm_runs,
            stats.shrink_runs,
            stats.workers_started,
            stats.controlled_runs,
            stats.uncontrolled_runs,
            stats.explore_runs
        ));
    }
    report.oracle = Some(stats);
    let type_stats = executor.type_stats();
    drop(executor);
    for (t, r) in runnable.iter().zip(result.types) {
        let mut type_report = type_report(t, r, root, &harness.copy_root);
        if let Some(stats) = type_stats.get(&t.path) {
            note_setup_failures(&mut type_report, stats);
        }
        if oracle_config.results.is_some() {
            type_report.approximate = approximate_methods(t);
            type_report.contended = contended_methods(t);
        }
        reports.push(type_report);
    }
    Ok(reports)
}

fn untested_report(t: &TypeModel, why: &Reason, root: &Path) -> TypeReport {
    TypeReport {
        path: t.path.clone(),
        package: t.package.clone(),
        file: Some(relative(&t.span.file, root)),
        line: t.span.line,
        untested: Some(why.to_string()),
        untested_kind: Some(untested_kind(why)),
        skipped: unsupported_methods(t),
        ..TypeReport::default()
    }
}

/// A handle type is tested through its owners' tests: when none of its owners was tested
/// (the harness could not use one, or it was not selected), the handle was not either, and its
/// report says so instead of "tested as a handle".
fn untested_owners(types: &mut [TypeReport], untested: &[(TypeModel, Reason)]) {
    let tested: BTreeSet<String> = types
        .iter()
        .filter(|t| t.untested.is_none())
        .filter_map(|t| t.path.rsplit("::").next().map(str::to_string))
        .collect();
    for (t, why) in untested {
        let Reason::Handle { owners } = why else {
            continue;
        };
        let owner_type = |o: &String| o.split("::").next().unwrap_or(o).to_string();
        if owners.iter().any(|o| tested.contains(&owner_type(o))) {
            continue;
        }
        if let Some(report) = types.iter_mut().find(|r| r.path == t.path) {
            let by: Vec<String> = owners.iter().map(|o| format!("`{o}`")).collect();
            report.untested = Some(format!(
                "handed out by {}, and no owner was tested",
                by.join(", ")
            ));
            report.untested_kind = Some(UntestedKind::Missed);
        }
    }
}

/// Tells the untested types `--fail-on-untested` should not fail for from the others, by the
/// kind of reason the analysis, the generator or the oracle gives.
fn untested_kind(why: &Reason) -> UntestedKind {
    match why {
        Reason::NothingToTest => UntestedKind::NothingToTest,
        Reason::Handle { .. } => UntestedKind::Handle,
        why if why.is_internal() => UntestedKind::Internal,
        _ => UntestedKind::Missed,
    }
}

fn unsupported_methods(t: &TypeModel) -> Vec<String> {
    t.methods
        .iter()
        .filter(|m| !m.supported())
        .map(|m| {
            format!(
                "method `{}`: {}",
                m.name,
                m.reason
                    .as_ref()
                    .map_or_else(|| "not supported".to_string(), |r| r.to_string())
            )
        })
        .collect()
}

/// A type most of whose tests failed before their threads started (a constructor returning
/// `Err`, a prefix call panicking) was not really tested: it says so, with the first error,
/// and counts as untested for `--fail-on-untested` (unless it showed a violation anyway).
fn note_setup_failures(report: &mut TypeReport, stats: &oracle::TypeRunStats) {
    report.setup_failures = stats.setup_failures;
    report.runs = stats.runs;
    report.own_threads = stats.own_threads;
    report.clock_outside = stats.clock_outside;
    report.guard_held_deadlocks = stats.guard_held_deadlocks;
    report.unjudged = stats.unjudged;
    for pair in &mut report.pairs {
        let mut key = pair.methods.clone();
        key.sort();
        pair.explored = stats.explored.get(&key).cloned();
    }
    if report.untested.is_some()
        || !report.violations.is_empty()
        || stats.tests == 0
        || stats.setup_failures * 2 <= stats.tests
    {
        return;
    }
    let error = stats
        .first_setup_error
        .as_deref()
        .unwrap_or("unknown error");
    report.untested = Some(format!(
        "most tests failed in setup ({} of {}), before their threads started; the first: {error}",
        stats.setup_failures, stats.tests
    ));
    report.untested_kind = Some(UntestedKind::Missed);
}

/// The report of one type's campaign, with static reasons and source positions from the model.
/// Panic locations inside the instrumented copy (`<out>/copy/...`) are mapped back to the
/// user's tree: the copy keeps line numbers.
pub fn type_report(
    t: &TypeModel,
    result: TypeResult<oracle::Violation>,
    root: &Path,
    copy_root: &Path,
) -> TypeReport {
    let mut skipped = unsupported_methods(t);
    skipped.extend(result.diagnostics.iter().map(|d| d.message.clone()));
    skipped.dedup();
    let site = |method: &str| {
        t.methods.iter().find(|m| m.name == method).map(|m| Site {
            method: method.to_owned(),
            file: relative(&m.span.file, root),
            line: m.span.line,
        })
    };
    let untested = result.skipped.or_else(|| {
        (result.tests_run == 0).then(|| Reason::Other {
            text: "the time budget ran out before covcon reached it (raise --time-budget)".into(),
        })
    });
    let violations = result
        .violations
        .into_iter()
        .map(|found| {
            let v = found.violation;
            let mut sites: Vec<Site> = v.methods.iter().filter_map(|m| site(m)).collect();
            sites.dedup();
            ViolationReport {
                kind: kind(v.kind),
                methods: v.methods.clone(),
                message: v.message.clone(),
                location: v.location.as_deref().map(|l| user_location(l, copy_root)),
                reproducer: Some(v.reproducer.clone()),
                replay: Some(v.json.clone()),
                tests_until_found: found.tests_until_found,
                seconds_until_found: found.seconds_until_found,
                // The violation's own test: the one its confirmation ran and its files hold,
                // with the schedule it runs under (the generator's may be a later duplicate's).
                original_test: v.shrunk.is_some().then(|| v.test.clone()),
                original_message: v.original_message.clone(),
                test: Some(v.shrunk.clone().unwrap_or_else(|| v.test.clone())),
                linearizations: v.linearizations,
                same_panic_elsewhere: v.same_panic_note(),
                confirmed: (v.confirmed.1 > 0).then_some([v.confirmed.0, v.confirmed.1]),
                sites,
                known: false,
                schedule: schedule_of(v.shrunk.as_ref().unwrap_or(&v.test)),
            }
        })
        .collect();
    TypeReport {
        path: t.path.clone(),
        package: t.package.clone(),
        file: Some(relative(&t.span.file, root)),
        line: t.span.line,
        tests_run: result.tests_run,
        // The oracle's count, filled in after the campaign (`note_setup_failures`).
        runs: 0,
        seconds: result.seconds,
        pairs: result
            .pairs
            .into_iter()
            .map(|p| {
                let reasons = t
                    .pairs
                    .iter()
                    .find(|m| same_pair(&m.methods, &p.methods))
                    .map(|m| m.reasons.clone())
                    .unwrap_or_default();
                PairReport {
                    methods: p.methods,
                    group: p.group,
                    tried: p.tried,
                    covered: p.covered,
                    reasons,
                    explored: None,
                }
            })
            .collect(),
        violations,
        skipped,
        untested_kind: untested.as_ref().map(untested_kind),
        untested: untested.map(|u| u.to_string()),
        coverage: result
            .history
            .iter()
            .map(|h| CoveragePoint {
                tests: h.tests_run,
                seconds: h.seconds,
                covered: h.pairs_covered as u64,
            })
            .collect(),
        setup_failures: 0,
        own_threads: false,
        clock_outside: 0,
        guard_held_deadlocks: 0,
        unjudged: 0,
        builders: builders(t),
        functions: functions(t),
        approximate: Vec::new(),
        contended: Vec::new(),
    }
}

/// The type's callable methods whose answers are approximate by its contract: the results
/// oracle does not compare them (`TypeReport::approximate`).
fn approximate_methods(t: &TypeModel) -> Vec<ApproximateMethod> {
    t.methods
        .iter()
        .filter(|m| m.supported())
        .filter_map(|m| {
            Some(ApproximateMethod {
                method: m.name.clone(),
                why: m.approximate.clone()?,
            })
        })
        .collect()
}

/// The type's callable methods whose doc says they fail on a held lock
/// (`TypeReport::contended`).
fn contended_methods(t: &TypeModel) -> Vec<crate::report::ContendedMethod> {
    t.methods
        .iter()
        .filter(|m| m.supported())
        .filter_map(|m| {
            Some(crate::report::ContendedMethod {
                method: m.name.clone(),
                line: m.contended.clone()?,
            })
        })
        .collect()
}

/// The type's free-function constructors as the report renders them
/// (`TypeReport::functions`).
fn functions(t: &TypeModel) -> generator::display::Functions {
    t.constructors
        .iter()
        .filter_map(|c| {
            let path = c.function.clone()?;
            let tuple = c.tuple.as_ref().map(|t| [t.index, t.elements.len()]);
            Some((c.name.clone(), FreeFunction { path, tuple }))
        })
        .collect()
}

/// The type's builder constructors as the report renders them (`TypeReport::builders`).
fn builders(t: &TypeModel) -> generator::display::Builders {
    t.constructors
        .iter()
        .filter(|c| c.kind == ConstructorKind::Builder)
        .map(|c| {
            let first = (c.name.clone(), c.params.len());
            let rest = c.chain.iter().map(|l| (l.name.clone(), l.params.len()));
            (c.name.clone(), std::iter::once(first).chain(rest).collect())
        })
        .collect()
}

/// `<copy>/src/lib.rs:27:40` → `src/lib.rs:27:40`; other locations are kept.
fn user_location(location: &str, copy_root: &Path) -> String {
    let prefix = format!("{}/", copy_root.display());
    location
        .strip_prefix(&prefix)
        .unwrap_or(location)
        .to_owned()
}

fn same_pair(a: &[String; 2], b: &[String; 2]) -> bool {
    (a[0] == b[0] && a[1] == b[1]) || (a[0] == b[1] && a[1] == b[0])
}

fn kind(kind: ViolationKind) -> Kind {
    match kind {
        ViolationKind::Panic => Kind::Panic,
        ViolationKind::Deadlock => Kind::Deadlock,
        ViolationKind::Crash => Kind::Crash,
        ViolationKind::WrongResult => Kind::WrongResult,
    }
}

/// A path relative to the workspace root when it lies inside it (annotations and reports
/// read better, and GitHub wants repository-relative paths).
pub fn relative(path: &Path, root: &Path) -> PathBuf {
    if path.is_relative() {
        return path.to_path_buf();
    }
    path.strip_prefix(root)
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

/// `cargo covcon replay FILE`: runs a saved violation's test again, `runs` times.
/// How a violation's test is scheduled, for the report: `pct-2, seed 7`; `None` when free.
fn schedule_of(test: &generator::TestCase) -> Option<String> {
    match test.control {
        generator::Control::Free => None,
        generator::Control::Preempt { first, at } => {
            let at: Vec<String> = at.iter().filter(|&&a| a > 0).map(u32::to_string).collect();
            Some(if at.is_empty() {
                format!("thread {first} first, no preemption")
            } else {
                format!(
                    "thread {first} first, preempted at point {}",
                    at.join(" and ")
                )
            })
        }
        control => Some(format!("{}, seed {}", control.name(), test.noise_seed)),
    }
}

pub fn replay(args: &ReplayArgs, console: &Console) -> Result<ExitCode> {
    let file = &args.file;
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read `{}`", file.display()))
        .or_exit(ExitCode::Usage)?;
    let not_a_test = || format!("`{}` is not a saved covcon test case", file.display());
    let saved = SavedTest::from_json(&text)
        .with_context(not_a_test)
        .or_exit(ExitCode::Usage)?;
    let test = &saved.test;
    let workspace_options = WorkspaceOptions::new(&args.workspace);
    let workspace = workspace::load(&replay_workspace(&workspace_options, &saved))?;
    // The types the run that saved the file instrumented (files since controlled scheduling
    // say), so a schedule meets the same points; else the test's type alone.
    let mut patterns = saved.harness_types.clone();
    if !patterns.contains(&test.type_path) {
        patterns.push(test.type_path.clone());
    }
    // The harness of the run that saved the file: `<out>/violations/N.json`.
    let out_dir = file
        .canonicalize()
        .ok()
        .and_then(|f| {
            let dir = f.parent()?;
            (dir.file_name()? == "violations").then(|| dir.parent().map(Path::to_path_buf))?
        })
        .unwrap_or_else(|| workspace.target_dir.join("covcon"));
    // A wrong result replays as one under the results oracle that found it.
    let found_under = if saved.oracle == Some(SavedOracle::Results) {
        OracleKind::Results
    } else {
        OracleKind::Panic
    };
    let config = workspace.run_config();
    let options = OracleOptions::replay(args, console, &config, out_dir, found_under)?;
    let mut session = Session::new(workspace, &patterns, &options);
    if !session
        .selection
        .types
        .iter()
        .any(|t| t.path == test.type_path)
    {
        return Err(usage_error(format_args!(
            "type {} of the saved test is not a testable type of the selected packages (use --manifest-path or -p)",
            test.type_path
        )));
    }
    // Patterns match path suffixes too: only the types named.
    session
        .selection
        .types
        .retain(|s| patterns.contains(&s.path));
    console.note("covcon: preparing the harness");
    let prepared = session.prepare()?;
    let program = &prepared.harness.binary;
    let result = oracle::replay_with_worker(program, &session.oracle, &prepared.selected, test)
        .map_err(harness_error)?;
    stdout(&format!(
        "{}: {} of {} concurrent runs failed\n",
        test.type_path, result.failures, result.runs
    ));
    match result.violation {
        Some(kind) => {
            stdout(&format!(
                "thread-safety violation ({kind}): no linearization of the two threads fails the same way ({} tried)\n",
                result.linearizations
            ));
            if let Some((order, at)) = &result.same_panic_at {
                stdout(&format!(
                    "but {}\n",
                    oracle::same_panic_note(test, order, *at)
                ));
            }
            Ok(ExitCode::Violations)
        }
        None if result.explained_by.is_some() => {
            stdout("the failure is not a thread-safety violation: a sequential order fails the same way\n");
            Ok(ExitCode::Success)
        }
        None if result.failures > 0 => {
            stdout("no verdict: the prefix failed in every sequential run of an order, so whether one fails the same way is unknown\n");
            Ok(ExitCode::Success)
        }
        None => {
            stdout("no failure this time; concurrency bugs are intermittent, try --runs with a larger number\n");
            Ok(ExitCode::Success)
        }
    }
}

/// The workspace to replay in: the one given (`--manifest-path`), else the one the file says
/// the test ran in (`workspace_root`, written since violation files carry it), else the
/// current directory's. The features likewise: those given, else those the file says the
/// harness was built with (`features`, as `cargo build` arguments).
fn replay_workspace(given: &WorkspaceOptions, saved: &SavedTest) -> WorkspaceOptions {
    let mut options = given.clone();
    let chose_features =
        !options.features.is_empty() || options.all_features || options.no_default_features;
    if !chose_features {
        let args = &saved.features;
        for (i, a) in args.iter().enumerate() {
            match a.as_str() {
                "--features" => options
                    .features
                    .extend(args.get(i + 1).map(|f| f.to_string())),
                "--all-features" => options.all_features = true,
                "--no-default-features" => options.no_default_features = true,
                _ => {}
            }
        }
    }
    if options.manifest_path.is_none() {
        let root = saved.workspace_root.as_ref();
        if let Some(root) = root.filter(|r| r.join("Cargo.toml").is_file()) {
            options.manifest_path = Some(root.join("Cargo.toml"));
        }
    }
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The baseline's campaign keys are spelled from the report's kind and the executor's
    /// from the oracle's: each kind must spell the same in both, or every entry of a baseline
    /// would silently stop ending no search.
    #[test]
    fn each_oracle_kind_keys_as_its_report_kind() {
        let pair = ["put".to_string(), "get".to_string()];
        for oracle_kind in [
            ViolationKind::Panic,
            ViolationKind::Deadlock,
            ViolationKind::Crash,
            ViolationKind::WrongResult,
        ] {
            assert_eq!(
                oracle::violation_key("m::T", &pair, kind(oracle_kind).as_str()),
                oracle::violation_key("m::T", &pair, &oracle_kind.to_string()),
            );
        }
    }

    fn check(location: &str, expect: &str) {
        assert_eq!(
            user_location(location, Path::new("/w/target/covcon/copy")),
            expect
        );
    }

    /// lasso's `ThreadedRodeo` exists only with `--features multi-threaded`: the violation
    /// file says so, and a replay given no features of its own takes them.
    #[test]
    fn a_replay_takes_the_features_the_violation_was_found_with_unless_given_its_own() {
        let saved = SavedTest::from_json(
            r#"{"id": 1, "type_path": "lasso::ThreadedRodeo", "pair": ["get", "get"],
                "instances": [], "prefix": [], "threads": [[], []], "noise_seed": 0,
                "features": ["--features", "multi-threaded,serde", "--no-default-features"]}"#,
        )
        .unwrap();
        let options = replay_workspace(&WorkspaceOptions::default(), &saved);
        assert_eq!(options.features, ["multi-threaded,serde"]);
        assert!(options.no_default_features && !options.all_features);
        let given = WorkspaceOptions {
            all_features: true,
            ..WorkspaceOptions::default()
        };
        let options = replay_workspace(&given, &saved);
        assert!(options.features.is_empty() && !options.no_default_features);
        assert!(options.all_features);
    }

    #[test]
    fn a_panic_in_the_instrumented_copy_points_at_the_users_file() {
        check("/w/target/covcon/copy/src/lib.rs:27:40", "src/lib.rs:27:40");
    }

    #[test]
    fn a_panic_outside_the_copy_keeps_its_location() {
        check(
            "/rustc/abc/library/core/src/option.rs:3:1",
            "/rustc/abc/library/core/src/option.rs:3:1",
        );
    }

    #[test]
    fn a_type_most_of_whose_tests_failed_in_setup_is_untested_with_the_first_error() {
        let stats = |tests, setup_failures| oracle::TypeRunStats {
            tests,
            setup_failures,
            first_setup_error: Some("`new` returned Err(Closed)".into()),
            ..Default::default()
        };
        let mut report = TypeReport::default();
        note_setup_failures(&mut report, &stats(100, 50));
        assert_eq!(
            (report.untested.as_deref(), report.setup_failures),
            (None, 50)
        );
        note_setup_failures(&mut report, &stats(100, 51));
        assert_eq!(
            report.untested.as_deref(),
            Some("most tests failed in setup (51 of 100), before their threads started; the first: `new` returned Err(Closed)")
        );
        assert_eq!(report.untested_kind, Some(UntestedKind::Missed));
    }

    /// A handle whose owners were not tested is reported untested, not "tested as a handle".
    #[test]
    fn a_handle_whose_owner_was_not_tested_is_untested() {
        let handle = |path: &str| TypeModel {
            path: path.into(),
            ..TypeModel::default()
        };
        let report = |path: &str, untested: Option<&str>| TypeReport {
            path: path.into(),
            untested: untested.map(str::to_string),
            untested_kind: untested.map(|_| UntestedKind::Handle),
            ..TypeReport::default()
        };
        let owned = |owner: &str| Reason::Handle {
            owners: vec![format!("{owner}::remote")],
        };
        let mut types = vec![
            report("k::Local", Some("the harness cannot use it")),
            report("k::Remote", Some("tested as a handle")),
            report("k::Display", None),
            report("k::Bar", Some("tested as a handle")),
        ];
        types[0].untested_kind = Some(UntestedKind::Missed);
        untested_owners(
            &mut types,
            &[
                (handle("k::Remote"), owned("Local")),
                (handle("k::Bar"), owned("Display")),
            ],
        );
        assert_eq!(
            types[1].untested.as_deref(),
            Some("handed out by `Local::remote`, and no owner was tested")
        );
        assert_eq!(types[1].untested_kind, Some(UntestedKind::Missed));
        assert_eq!(types[3].untested_kind, Some(UntestedKind::Handle));
    }

    mod untested_kinds {
        use super::super::*;

        fn check(why: Reason, expect: UntestedKind) {
            assert_eq!(untested_kind(&why), expect, "{why}");
        }

        #[test]
        fn a_type_whose_every_pair_the_analysis_removed_has_nothing_to_test() {
            check(Reason::NothingToTest, UntestedKind::NothingToTest);
        }

        #[test]
        fn a_type_private_even_at_the_crate_root_is_internal() {
            check(Reason::NotPublic, UntestedKind::Internal);
            check(
                Reason::PrivateModule {
                    also: Some(Box::new(Reason::DoesNotCompile {
                        error: "struct `Bounded` is private".into(),
                    })),
                },
                UntestedKind::Internal,
            );
        }

        #[test]
        fn a_type_covcon_could_not_drive_or_reach_is_missed() {
            check(Reason::NoCallableMethod, UntestedKind::Missed);
            check(
                Reason::DoesNotCompile {
                    error: "the harness cannot use it: mismatched types".into(),
                },
                UntestedKind::Missed,
            );
            check(
                Reason::Other {
                    text: "the time budget ran out before covcon reached it".into(),
                },
                UntestedKind::Missed,
            );
        }
    }
}
