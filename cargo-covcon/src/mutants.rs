//! `cargo covcon mutants`: concurrency mutation testing. Every mutant the oracle makes of the
//! selected types (`oracle::Mutant`: a split critical section, a guard released before the
//! end of its section or taken after the statement that follows it, a swapped lock order, an
//! atomic read-modify-write done as a load and a store, a condition wait's `while` made `if`,
//! a notify left out, a retried compare-and-swap's failure taken for a success, a publishing
//! store made before the write) is compiled into one instrumented copy as a mutant schema;
//! then each is judged, one after the other, by a covcon campaign on its type (or by the
//! user's own command, `--test-cmd`; or by both, `--compare`, [`compare`]), with
//! `COVCON_MUTANT` naming it. Outcomes, as cargo-mutants has
//! them: caught, missed, unviable (the copy did not compile with it), timeout (`--test-cmd`
//! only), and skipped (its type cannot be driven, or already fails unmutated); and
//! equivalent (the analysis shows no test can tell it from the original), not judged.
//!
//! Output goes to `<target>/covcon/mutants.out/` (the previous one kept as `mutants.out.old`):
//! `mutants.json`, `outcomes.json`, `caught.txt`, `missed.txt` (with each missed mutant's
//! diff), `timeout.txt`, `unviable.txt`, `skipped.txt`, `equivalent.txt`, `diff/ID.diff`, `report.html`, and
//! `log/ID.log` with `--test-cmd` or `--compare`, and `compare.txt` with `--compare`.

mod compare;

use crate::cli::MutantsArgs;
use crate::exit_code::{usage_error, ExitCode, Failure};
use crate::options::{parse_duration, Console, OracleOptions, DEFAULT_STRATEGY};
use crate::output::stdout;
use crate::report::html::esc;
use crate::session::{harness_error, interrupt_flag, Prepared, Session};
use crate::workspace::{self, WorkspaceOptions};
use analysis::TypeModel;
use anyhow::{Context, Result};
use generator::{CampaignConfig, StopFlag, Strategy};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use oracle::results::ResultsConfig;
use oracle::{CommandEnd, Mutant, Operator, MUTANT_ENV};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What became of one mutant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Caught,
    Missed,
    Timeout,
    Unviable,
    Skipped,
    /// No test can tell it from the original ([`Mutant::equivalent`] says why): not run,
    /// and left out of the score, as cargo-mutants would have a user mark it.
    Equivalent,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Caught => "caught",
            Status::Missed => "missed",
            Status::Timeout => "timeout",
            Status::Unviable => "unviable",
            Status::Skipped => "skipped",
            Status::Equivalent => "equivalent",
        }
    }
}

/// The violation a campaign caught a mutant with.
#[derive(Debug, Clone, Serialize)]
pub struct Caught {
    pub kind: String,
    pub methods: [String; 2],
    pub message: String,
    pub tests_until_found: u64,
    pub seconds_until_found: f64,
    /// Re-runs that failed the same way, of those made.
    pub confirmed: (u32, u32),
}

/// One mutant and its outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    #[serde(flatten)]
    pub mutant: Mutant,
    pub outcome: Status,
    /// Time spent judging it.
    pub seconds: f64,
    /// Tests its campaign ran (not with `--test-cmd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caught_by: Option<Caught>,
    /// Why it is unviable (rustc's message) or skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Pairs of its type that the analysis of the mutated code puts in another group than
    /// the original's (not with `--test-cmd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regrouped: Option<usize>,
    /// The command's output, with `--test-cmd`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<PathBuf>,
    /// The oracle that judged it, when not the run's: `panic`, for a type whose unmutated
    /// code already fails under `results` ([`Baseline::fallback`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oracle: Option<String>,
    /// The types whose campaigns judged it, when not its own: a type covcon cannot test
    /// (a private one) is judged through the types that hold it, one after the other until
    /// one catches it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub through: Option<Vec<String>>,
}

/// The unmutated code, judged first: a type (or the command) that already fails cannot tell
/// a mutant from the bug it has.
#[derive(Debug, Clone, Serialize)]
pub struct Baseline {
    /// A type path, or `--test-cmd`.
    pub of: String,
    pub passed: bool,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// What the `results` oracle showed on the unmutated type (a clock-dependent answer, a
    /// read that is not linearizable by design) when the `panic` oracle then found nothing:
    /// the type's mutants are judged under `panic` instead of skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Under the `results` oracle: the methods whose answers (and `final state`, when it is)
    /// the unmutated type's runs gave in no sequential order, each time as the only
    /// difference left (an `is_full` beside a `force_push` that is not linearizable by
    /// design, or a bug of the type's own: concurrent-queue 2.5.0's `close` lost to a racing
    /// `force_push`), left out of the comparison in its mutants' campaigns, so that the rest
    /// is still compared; with what was seen first. The summary says it may be a bug.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out_because: Option<String>,
}

/// Caught, missed, timeouts of one operator or type, and the score.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Score {
    pub name: String,
    pub caught: usize,
    pub missed: usize,
    pub timeout: usize,
    pub unviable: usize,
    pub skipped: usize,
    pub equivalent: usize,
    /// (caught + timeout) / (caught + missed + timeout), as a percentage; `None` when nothing
    /// was judged. A timeout counts as caught (the tests did not pass), as in PIT.
    pub score: Option<f64>,
}

impl Score {
    fn of<'a>(name: &str, outcomes: impl IntoIterator<Item = &'a Outcome>) -> Score {
        let mut s = Score {
            name: name.to_string(),
            ..Score::default()
        };
        for o in outcomes {
            match o.outcome {
                Status::Caught => s.caught += 1,
                Status::Missed => s.missed += 1,
                Status::Timeout => s.timeout += 1,
                Status::Unviable => s.unviable += 1,
                Status::Skipped => s.skipped += 1,
                Status::Equivalent => s.equivalent += 1,
            }
        }
        let judged = s.caught + s.missed + s.timeout;
        s.score = (judged > 0).then(|| 100.0 * (s.caught + s.timeout) as f64 / judged as f64);
        s
    }
}

/// What `--list` says of a mutant's judge: nothing when its own type runs it, the types it is
/// judged through when they are others (a private helper's code, run by its holders), or that
/// no type can run it (it will be skipped).
fn through_mark(path: &str, through: &[&TypeModel]) -> String {
    match through {
        [] => " (skipped: covcon cannot test the type)".to_string(),
        [own] if own.path == path => String::new(),
        holders => format!(
            " (judged through {})",
            holders
                .iter()
                .map(|t| t.path.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The types a mutant in `method` of the type `path` is judged through, one after the other
/// until one catches it: the type itself when it is runnable and covcon calls that method; the
/// types that hold it, whose calls run its code, when covcon cannot test it (a private type
/// inside a public one, a helper) — when none does, those that hold a type that holds it
/// (concurrent-queue's `Block` is held by its private `Unbounded`), up to three types up. A
/// runnable type's public method covcon cannot call (crossbeam-skiplist's `SkipList::insert`,
/// whose `&Guard` it cannot make) goes to the holders first (`SkipMap::insert` calls it), the
/// type itself last; one not among its public methods (a private helper, reached from which
/// public methods the model does not say) to the type first, then the holders. `all` is every
/// type of the model, runnable or not.
fn judged_through<'a>(
    path: &str,
    method: &str,
    runnable: &'a [TypeModel],
    all: &[TypeModel],
) -> Vec<&'a TypeModel> {
    let Some(own) = runnable.iter().find(|t| t.path == path) else {
        return holders(path, runnable, all);
    };
    match own.methods.iter().find(|m| m.name == method) {
        Some(m) if m.supported => vec![own],
        Some(_) => {
            let mut through = holders(path, runnable, all);
            through.push(own);
            through
        }
        None => std::iter::once(own)
            .chain(holders(path, runnable, all))
            .collect(),
    }
}

/// The runnable types that hold the type `path` in their fields, or when none does, those
/// that hold a type that holds it, up to three types up.
fn holders<'a>(path: &str, runnable: &'a [TypeModel], all: &[TypeModel]) -> Vec<&'a TypeModel> {
    let mut level = vec![path];
    let mut seen = BTreeSet::from([path]);
    for _ in 0..3 {
        let holds =
            |t: &&TypeModel| t.path != path && t.holds.iter().any(|h| level.contains(&h.as_str()));
        let found: Vec<&TypeModel> = runnable.iter().filter(holds).collect();
        if !found.is_empty() {
            return found;
        }
        level = all
            .iter()
            .filter(holds)
            .map(|t| t.path.as_str())
            .filter(|p| seen.insert(*p))
            .collect();
    }
    Vec::new()
}

#[cfg(test)]
impl Outcome {
    /// `mutant` judged `status`, nothing else known (for tests).
    fn bare(mutant: Mutant, status: Status) -> Outcome {
        Outcome {
            mutant,
            outcome: status,
            seconds: 0.0,
            tests: None,
            caught_by: None,
            reason: None,
            regrouped: None,
            log: None,
            oracle: None,
            through: None,
        }
    }
}

/// Everything `outcomes.json` holds.
#[derive(Debug, Clone, Serialize)]
pub struct MutantsReport {
    /// `covcon` (a campaign per mutant) or the `--test-cmd` command.
    pub judge: String,
    pub seed: u64,
    pub budget_s: f64,
    pub elapsed_s: f64,
    pub build_s: f64,
    pub interrupted: bool,
    pub total: Score,
    pub operators: Vec<Score>,
    pub types: Vec<Score>,
    pub baseline: Vec<Baseline>,
    pub outcomes: Vec<Outcome>,
    /// With `--compare CMD`: the command's judgement of the same mutants beside covcon's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare: Option<compare::Comparison>,
}

pub fn mutants(args: &MutantsArgs) -> Result<ExitCode> {
    let start = Instant::now();
    let console = Console::new(&args.output);
    let budget = parse_duration(&args.budget)
        .map_err(|e| usage_error(format_args!("invalid --budget: {e}")))?;
    let timeout = args
        .timeout
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(|e| usage_error(format_args!("invalid --timeout: {e}")))?;
    let operators = parse_operators(&args.operators)?;
    let changed = args
        .change
        .diff(&args.workspace)?
        .map(|text| crate::diff::added_lines(&text));
    let workspace = workspace::load(&WorkspaceOptions::new(&args.workspace))?;
    let covcon_dir = workspace.target_dir.join("covcon");
    // Workers, the test timeout and the scheduling as a run would have them: `-j` over
    // `[..metadata.covcon]`.
    let oracle = OracleOptions::mutants(
        args,
        &console,
        &workspace.run_config(),
        &workspace.target_dir,
    )?;
    let session = Session::new(workspace, &args.types, &oracle);
    let workspace = &session.workspace;
    let selection = &session.selection;
    if selection.types.is_empty() {
        return Err(usage_error("no testable thread-safe type selected"));
    }
    console.note("mutants: building the copy with every mutant compiled in (once; reused while the code is unchanged)");
    let prepared = session.prepare_mutants()?;
    let harness = &prepared.harness;
    let chosen: Vec<&Mutant> = harness
        .mutants
        .iter()
        .filter(|m| operators.contains(&m.operator))
        .filter(|m| {
            changed
                .as_ref()
                .is_none_or(|c| touches(c, m, &workspace.root))
        })
        .collect();
    console.note(format_args!(
        "mutants: {} mutant(s) of {} type(s){}, {} unviable, {} equivalent; harness {}",
        chosen.len(),
        selection.types.len(),
        if changed.is_some() {
            " on changed lines"
        } else {
            ""
        },
        chosen
            .iter()
            .filter(|m| harness.unviable.contains_key(&m.id))
            .count(),
        chosen.iter().filter(|m| m.equivalent.is_some()).count(),
        if harness.cached {
            "cached".to_string()
        } else {
            format!("built in {:.1}s", harness.build_secs)
        }
    ));
    if args.list {
        let (runnable, drivable) = (&prepared.runnable, &prepared.drivable);
        let mut text = String::new();
        for m in &chosen {
            let mark = if harness.unviable.contains_key(&m.id) {
                " (unviable)".to_string()
            } else if m.equivalent.is_some() {
                " (equivalent)".to_string()
            } else {
                through_mark(
                    &m.type_path,
                    &judged_through(&m.type_path, &m.method, runnable, &drivable.types),
                )
            };
            let _ = writeln!(text, "{:>4}  {}{mark}", m.id, m.name);
        }
        stdout(&text);
        return Ok(ExitCode::Success);
    }
    let out = covcon_dir.join("mutants.out");
    rotate(&out)?;
    let stop = interrupt_flag(&console);
    let judge = Judge {
        session: &session,
        prepared: &prepared,
        chosen: &chosen,
        stop: &stop,
        console: &console,
        out: &out,
    };
    // The command first: when it fails on the unmutated code, no campaign is spent.
    let compared = match &args.compare {
        Some(cmd) => {
            console.note(format_args!(
                "mutants: judging with `{cmd}` first, then with covcon"
            ));
            Some((cmd, judge.by_command(cmd, timeout, &covcon_dir)?))
        }
        None => None,
    };
    let (baseline, outcomes) = match &args.test_cmd {
        Some(cmd) => judge.by_command(cmd, timeout, &covcon_dir)?,
        None => {
            let strategy: Strategy = DEFAULT_STRATEGY.parse().map_err(usage_error)?;
            let campaign = CampaignConfig {
                strategy,
                seed: args.seed,
                time_budget: budget,
                max_tests_per_type: args.max_tests,
                batch_size: 16,
                types: BTreeMap::new(),
                stop: stop.clone(),
                scopes: session.oracle.results.is_none(),
                // Any violation catches the mutant, confirmed or not.
                stop_at_unconfirmed: true,
                ..CampaignConfig::default()
            };
            judge.by_campaign(campaign)?
        }
    };
    let report = MutantsReport {
        judge: args
            .test_cmd
            .clone()
            .unwrap_or_else(|| format!("covcon (oracle {:?})", args.oracle).to_lowercase()),
        seed: args.seed,
        budget_s: budget.as_secs_f64(),
        elapsed_s: start.elapsed().as_secs_f64(),
        build_s: harness.build_secs,
        interrupted: stop.raised(),
        total: Score::of("all", &outcomes),
        operators: Operator::ALL
            .iter()
            .map(|op| {
                Score::of(
                    op.as_str(),
                    outcomes.iter().filter(|o| o.mutant.operator == *op),
                )
            })
            .filter(|s| s.caught + s.missed + s.timeout + s.unviable + s.skipped > 0)
            .collect(),
        types: outcomes
            .iter()
            .map(|o| o.mutant.type_path.as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(|t| Score::of(t, outcomes.iter().filter(|o| o.mutant.type_path == t)))
            .collect(),
        compare: compared.map(|(cmd, (base, theirs))| {
            compare::Comparison::new(cmd.clone(), base, &outcomes, theirs)
        }),
        baseline,
        outcomes,
    };
    write_outputs(&out, &report)?;
    stdout(&terminal(&report, console.verbose > 0));
    console.note(format_args!("mutants: wrote {}", out.display()));
    Ok(if report.interrupted {
        ExitCode::Interrupted
    } else if let Some(c) = &report.compare {
        // The question is what gets through both judges.
        if c.neither.is_empty() {
            ExitCode::Success
        } else {
            ExitCode::Violations
        }
    } else if report.total.missed > 0 {
        ExitCode::Violations
    } else {
        ExitCode::Success
    })
}

/// Leaves the places of a wrong result out of `cfg`'s comparison (a method's answers, or the
/// final state); what was not left out already, as the report names it.
fn leave_out(cfg: &mut ResultsConfig, differences: &[oracle::results::Difference]) -> Vec<String> {
    let mut more = Vec::new();
    for d in differences {
        match &d.place {
            oracle::results::Place::Call { method, .. } => {
                if cfg.ignored_methods.insert(method.clone()) {
                    more.push(method.clone());
                }
            }
            oracle::results::Place::FinalState => {
                if std::mem::replace(&mut cfg.compare_final_state, false) {
                    more.push("final state".to_string());
                }
            }
        }
    }
    more
}

/// `--operators`: names of `Operator::ALL`; all when empty.
fn parse_operators(names: &[String]) -> Result<Vec<Operator>> {
    if names.is_empty() {
        return Ok(Operator::ALL.to_vec());
    }
    names
        .iter()
        .map(|n| {
            Operator::ALL
                .into_iter()
                .find(|op| op.as_str() == n.trim())
                .ok_or_else(|| {
                    let known: Vec<&str> = Operator::ALL.iter().map(|o| o.as_str()).collect();
                    usage_error(format_args!(
                        "unknown operator `{n}`; known: {}",
                        known.join(", ")
                    ))
                })
        })
        .collect()
}

/// Whether a mutant's lines (its diff's old side) include a line the diff adds. Paths match
/// when one ends with the other: a diff names files from the repository's root, which may be
/// above the workspace's.
fn touches(changed: &crate::diff::Lines, m: &Mutant, root: &Path) -> bool {
    let lines = m
        .diff
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"));
    let last = m.line + (lines.count() as u32).max(1) - 1;
    crate::diff::touches(changed, &m.file, m.line, last, root)
}

/// Keeps the previous output as `<out>.old` and starts an empty one.
fn rotate(out: &Path) -> Result<()> {
    if out.exists() {
        let old = out.with_extension("out.old");
        if old.exists() {
            std::fs::remove_dir_all(&old).with_context(|| format!("removing {}", old.display()))?;
        }
        std::fs::rename(out, &old).with_context(|| format!("moving {}", out.display()))?;
    }
    std::fs::create_dir_all(out.join("diff")).with_context(|| format!("creating {}", out.display()))
}

/// What judging every mutant shares.
struct Judge<'a> {
    session: &'a Session,
    prepared: &'a Prepared,
    chosen: &'a [&'a Mutant],
    stop: &'a StopFlag,
    console: &'a Console,
    out: &'a Path,
}

impl Judge<'_> {
    /// The outcome of a mutant that is not run: unviable, equivalent, or skipped for `why`.
    fn not_run(&self, m: &Mutant, why: Option<String>) -> Option<Outcome> {
        let unviable = self.prepared.harness.unviable.get(&m.id);
        let (outcome, reason) = match (unviable, &m.equivalent, why) {
            (Some(error), _, _) => (Status::Unviable, Some(error.clone())),
            (None, Some(because), _) => (Status::Equivalent, Some(because.clone())),
            (None, None, Some(why)) => (Status::Skipped, Some(why)),
            (None, None, None) => return None,
        };
        Some(Outcome {
            mutant: m.clone(),
            outcome,
            seconds: 0.0,
            tests: None,
            caught_by: None,
            reason,
            regrouped: None,
            log: None,
            oracle: None,
            through: None,
        })
    }

    /// A covcon campaign per mutant, on the type whose code it changes, after one on each such
    /// type unmutated.
    fn by_campaign(&self, campaign: CampaignConfig) -> Result<(Vec<Baseline>, Vec<Outcome>)> {
        let config = &self.session.oracle;
        let (runnable, drivable) = (&self.prepared.runnable, &self.prepared.drivable);
        let targets =
            |m: &Mutant| judged_through(&m.type_path, &m.method, runnable, &drivable.types);
        let why_not = |m: &Mutant| -> Option<String> {
            if !targets(m).is_empty() {
                return None;
            }
            let path = m.type_path.as_str();
            let reason = drivable
                .types
                .iter()
                .find(|t| t.path == path)
                .and_then(|t| t.reason.as_ref().map(ToString::to_string))
                .unwrap_or_else(|| "no method covcon can call".to_string());
            Some(format!("covcon cannot test the type: {reason}"))
        };
        let campaign_of = |t: &TypeModel| CampaignConfig {
            types: self.prepared.campaign_types(t),
            ..campaign.clone()
        };
        // Under the `results` oracle with `results`, under `panic` without.
        let run = |t: &TypeModel,
                   mutant: Option<u32>,
                   results: Option<ResultsConfig>|
         -> Result<generator::TypeResult<oracle::Violation>> {
            let mut config = config.clone();
            config.mutant = mutant;
            config.results = results;
            let mut executor = self.prepared.executor(&config)?;
            let campaign = CampaignConfig {
                scopes: config.results.is_none(),
                ..campaign_of(t)
            };
            let result = generator::run_campaign(
                std::slice::from_ref(t),
                &campaign,
                &mut executor,
                &mut |_| {},
            );
            result
                .types
                .into_iter()
                .next()
                .context("a campaign of one type answered no type")
        };
        // The unmutated types first.
        let wanted: BTreeSet<&str> = self
            .chosen
            .iter()
            .filter(|m| {
                !self.prepared.harness.unviable.contains_key(&m.id) && m.equivalent.is_none()
            })
            .flat_map(|m| targets(m))
            .map(|t| t.path.as_str())
            .collect();
        let mut baseline = Vec::new();
        let mut judged_by: BTreeMap<String, Option<ResultsConfig>> = BTreeMap::new();
        for t in runnable.iter().filter(|t| wanted.contains(t.path.as_str())) {
            if self.stop.raised() {
                break;
            }
            self.console.note(format_args!(
                "mutants: baseline: {} unmutated for {:.0}s",
                t.path,
                campaign.time_budget.as_secs_f64()
            ));
            let started = Instant::now();
            let failure_of = |r: &generator::TypeResult<oracle::Violation>| {
                r.violations.first().map(|v| {
                    let [a, b] = &v.violation.methods;
                    format!(
                        "{} in {a} ∥ {b}: {}",
                        v.violation.kind,
                        first_line(&v.violation.message)
                    )
                })
            };
            // Under the results oracle, a wrong result whose only differences are answers of
            // methods not yet left out (or the final state) leaves those out and runs again,
            // at most three times.
            let mut results = config.results.clone();
            let (mut left_out, mut left_out_because) = (Vec::new(), None);
            let mut failure;
            let mut rounds = 0;
            loop {
                let r = run(t, None, results.clone())?;
                failure = failure_of(&r);
                let differences = r
                    .violations
                    .first()
                    .and_then(|v| v.violation.results.as_ref())
                    .map(|v| &v.differences);
                let (Some(differences), Some(cfg)) = (differences, results.as_mut()) else {
                    break;
                };
                if rounds == 3 || self.stop.raised() {
                    break;
                }
                let more = leave_out(cfg, differences);
                if more.is_empty() {
                    break;
                }
                self.console.note(format_args!(
                    "mutants: baseline: {} fails under the results oracle ({}); leaving out {} and running it again",
                    t.path,
                    failure.as_deref().unwrap_or_default(),
                    more.join(", ")
                ));
                left_out_because.get_or_insert_with(|| failure.clone().unwrap_or_default());
                left_out.extend(more);
                rounds += 1;
            }
            if failure.is_some() {
                // What was left out did not make it pass: the whole results oracle goes.
                left_out.clear();
                left_out_because = None;
                results = config.results.clone();
            }
            let mut fallback = None;
            // A wrong result of the code as written may be the type's contract (a clock, a
            // read that is approximate by design): its mutants can still be judged by what
            // the panic oracle sees, rather than not at all.
            if let (Some(shown), Some(_)) = (&failure, &config.results) {
                if !self.stop.raised() {
                    self.console.note(format_args!(
                        "mutants: baseline: {} fails under the results oracle ({shown}); trying the panic oracle",
                        t.path
                    ));
                    let under_panic = failure_of(&run(t, None, None)?);
                    if under_panic.is_none() && !self.stop.raised() {
                        fallback = failure.take();
                        results = None;
                    } else {
                        failure = under_panic.or(failure);
                    }
                }
            }
            judged_by.insert(t.path.clone(), results);
            baseline.push(Baseline {
                of: t.path.clone(),
                passed: failure.is_none(),
                seconds: started.elapsed().as_secs_f64(),
                failure,
                fallback,
                left_out,
                left_out_because,
            });
        }
        // The results oracle a type's mutants are judged under: as its baseline passed.
        let results_of = |path: &str| {
            judged_by
                .get(path)
                .cloned()
                .unwrap_or_else(|| config.results.clone())
        };
        let failing = |path: &str| {
            baseline
                .iter()
                .find(|b| b.of == path && !b.passed)
                .map(|b| {
                    format!(
                        "the unmutated type already shows a violation ({}); fix it or leave the type out",
                        b.failure.as_deref().unwrap_or_default()
                    )
                })
        };
        let progress = Progress::new(self.console, self.chosen.len());
        let mut outcomes = Vec::new();
        for m in self.chosen {
            if self.stop.raised() {
                break;
            }
            // Judged through the targets whose code as written passed its baseline.
            let targets: Vec<&TypeModel> = targets(m)
                .into_iter()
                .filter(|t| failing(&t.path).is_none())
                .collect();
            let why = why_not(m).or_else(|| {
                targets.is_empty().then(|| {
                    failing(&m.type_path).unwrap_or_else(|| {
                        "every type that holds it already shows a violation unmutated".to_string()
                    })
                })
            });
            if let Some(o) = self.not_run(m, why) {
                progress.done(&o);
                outcomes.push(o);
                continue;
            }
            progress.start(m);
            let started = Instant::now();
            let (mut tests, mut regrouped, mut caught_by, mut oracle) = (0, 0, None, None);
            let mut through = Vec::new();
            for t in &targets {
                let (t, changed) = self.as_mutated(t, m);
                let results = results_of(&t.path);
                let panic_only = results.is_none() && config.results.is_some();
                let r = run(&t, Some(m.id), results)?;
                tests += r.tests_run;
                regrouped += changed;
                through.push(t.path.clone());
                oracle = panic_only.then(|| "panic".to_string());
                caught_by = r.violations.first().map(|v| Caught {
                    kind: v.violation.kind.to_string(),
                    methods: v.violation.methods.clone(),
                    message: first_line(&v.violation.message),
                    tests_until_found: v.tests_until_found,
                    seconds_until_found: v.seconds_until_found,
                    confirmed: v.violation.confirmed,
                });
                if caught_by.is_some() || self.stop.raised() {
                    break;
                }
            }
            let o = Outcome {
                mutant: (*m).clone(),
                outcome: if caught_by.is_some() {
                    Status::Caught
                } else {
                    Status::Missed
                },
                seconds: started.elapsed().as_secs_f64(),
                tests: Some(tests),
                caught_by,
                reason: None,
                regrouped: Some(regrouped),
                log: None,
                oracle,
                through: (through != [m.type_path.as_str()]).then_some(through),
            };
            progress.done(&o);
            outcomes.push(o);
        }
        progress.finish();
        Ok((baseline, outcomes))
    }

    /// The type as the analysis has it in the mutated code: the same methods and pairs, each
    /// pair in the group the mutant's code puts it in (a split critical section no longer
    /// protects what it protected; the campaign must not skip the pairs it opens). Also how
    /// many pairs changed group. The type unchanged when its code cannot be analysed.
    fn as_mutated(&self, t: &TypeModel, m: &Mutant) -> (TypeModel, usize) {
        let mut t = t.clone();
        let mutated = std::fs::read_to_string(&m.file)
            .ok()
            .and_then(|source| m.apply(&source))
            .and_then(|text| {
                let sources = analysis::Sources::from([(m.file.clone(), text)]);
                self.session
                    .workspace
                    .analyze_type(&t.package, &t.path, sources)
            });
        let Some(mutated) = mutated else {
            return (t, 0);
        };
        let mut regrouped = 0;
        for pair in &mut t.pairs {
            let again = mutated.pairs.iter().find(|p| p.methods == pair.methods);
            if let Some(again) = again.filter(|p| p.group != pair.group) {
                pair.group = again.group;
                pair.reasons = again.reasons.clone();
                regrouped += 1;
            }
        }
        (t, regrouped)
    }

    /// The user's command per mutant, run in the instrumented copy, after once unmutated.
    fn by_command(
        &self,
        cmd: &str,
        timeout: Option<Duration>,
        covcon_dir: &Path,
    ) -> Result<(Vec<Baseline>, Vec<Outcome>)> {
        let logs = self.out.join("log");
        std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
        let target = covcon_dir.join("mutants-target");
        let run = |mutant: Option<u32>, log: &Path, limit: Option<Duration>| {
            let mut env = vec![("CARGO_TARGET_DIR", target.display().to_string())];
            env.extend(mutant.map(|id| (MUTANT_ENV, id.to_string())));
            oracle::run_command(
                cmd,
                &self.prepared.harness.copy_root,
                &env,
                log,
                limit,
                &|| self.stop.raised(),
            )
            .map_err(harness_error)
        };
        self.console.note(format_args!(
            "mutants: baseline: `{cmd}` in {} unmutated",
            self.prepared.harness.copy_root.display()
        ));
        let base_log = logs.join("baseline.log");
        let started = Instant::now();
        let ran = run(None, &base_log, None)?;
        let base_secs = started.elapsed().as_secs_f64();
        let baseline = vec![Baseline {
            of: "--test-cmd".to_string(),
            passed: ran == CommandEnd::Passed,
            seconds: base_secs,
            failure: (ran != CommandEnd::Passed)
                .then(|| format!("{ran:?}; see {}", base_log.display())),
            fallback: None,
            left_out: Vec::new(),
            left_out_because: None,
        }];
        if ran == CommandEnd::Stopped {
            return Ok((baseline, Vec::new()));
        }
        if ran != CommandEnd::Passed {
            return Err(Failure {
                code: ExitCode::BaselineFailed,
                error: anyhow::anyhow!(
                    "`{cmd}` fails on the unmutated code ({ran:?}), so it cannot judge mutants; its output is in {}",
                    base_log.display()
                ),
            }
            .into());
        }
        // A `--timeout` shorter than the unmutated run times out every mutant, unless the
        // build was what took the time: run it once more, built, within that limit.
        if let Some(limit) = timeout.filter(|t| t.as_secs_f64() < base_secs) {
            self.console.note(format_args!(
                "mutants: baseline: {base_secs:.0}s, over --timeout {}s: again, built",
                limit.as_secs_f64()
            ));
            let log = logs.join("baseline-built.log");
            let again = run(None, &log, Some(limit))?;
            if again == CommandEnd::Stopped {
                return Ok((baseline, Vec::new()));
            }
            if again != CommandEnd::Passed {
                let why = match again {
                    CommandEnd::TimedOut => format!(
                        "takes longer than --timeout {}s on the unmutated code, built ({base_secs:.0}s the first time), so every mutant would time out: give a longer --timeout, or none (five times the unmutated run, at least 30s)",
                        limit.as_secs_f64()
                    ),
                    _ => format!("fails on the unmutated code the second time ({again:?}), so it cannot judge mutants"),
                };
                return Err(Failure {
                    code: ExitCode::BaselineFailed,
                    error: anyhow::anyhow!("`{cmd}` {why}; its output is in {}", log.display()),
                }
                .into());
            }
        }
        // The first run built the tests; later runs reuse the build (a mutant is chosen at
        // run time), so the baseline's time is a fair measure of one run.
        let limit = timeout.unwrap_or_else(|| Duration::from_secs_f64((base_secs * 5.0).max(30.0)));
        let progress = Progress::new(self.console, self.chosen.len());
        let mut outcomes = Vec::new();
        for m in self.chosen {
            if self.stop.raised() {
                break;
            }
            if let Some(o) = self.not_run(m, None) {
                progress.done(&o);
                outcomes.push(o);
                continue;
            }
            progress.start(m);
            let log = logs.join(format!("{}.log", m.id));
            let started = Instant::now();
            let ran = run(Some(m.id), &log, Some(limit))?;
            if ran == CommandEnd::Stopped {
                break;
            }
            let o = Outcome {
                mutant: (*m).clone(),
                outcome: match ran {
                    CommandEnd::Passed => Status::Missed,
                    CommandEnd::Failed(_) => Status::Caught,
                    CommandEnd::TimedOut | CommandEnd::Stopped => Status::Timeout,
                },
                seconds: started.elapsed().as_secs_f64(),
                tests: None,
                caught_by: None,
                reason: None,
                regrouped: None,
                log: Some(log),
                oracle: None,
                through: None,
            };
            progress.done(&o);
            outcomes.push(o);
        }
        progress.finish();
        Ok((baseline, outcomes))
    }
}

/// A bar over the mutants on a terminal, a line per mutant otherwise, nothing with `-q`.
struct Progress {
    bar: Option<ProgressBar>,
    plain: bool,
    total: usize,
    done: std::cell::Cell<usize>,
}

impl Progress {
    fn new(console: &Console, total: usize) -> Progress {
        let bar = (!console.quiet && console.stderr_is_terminal).then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        Progress {
            plain: !console.quiet && bar.is_none(),
            bar,
            total,
            done: std::cell::Cell::new(0),
        }
    }

    fn start(&self, m: &Mutant) {
        if let Some(bar) = &self.bar {
            bar.set_message(m.name.clone());
        }
    }

    fn done(&self, o: &Outcome) {
        self.done.set(self.done.get() + 1);
        let line = format!(
            "{:<8} {} ({:.1}s)",
            o.outcome.as_str(),
            o.mutant.name,
            o.seconds
        );
        if let Some(bar) = &self.bar {
            bar.inc(1);
            if o.outcome == Status::Missed {
                bar.println(line);
            }
        } else if self.plain {
            eprintln!("mutants: [{}/{}] {line}", self.done.get(), self.total);
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// The terminal summary: missed mutants, the score per operator and per type, the total.
pub fn terminal(report: &MutantsReport, verbose: bool) -> String {
    let mut out = String::new();
    // What the unmutated code showed is a violation like any other: by design (a method
    // documented as approximate that the analysis did not read so) or a bug of its own, as
    // concurrent-queue 2.5.0's `close` lost to a racing `force_push` was.
    for b in &report.baseline {
        if let Some(shown) = &b.fallback {
            let _ = writeln!(
                out,
                "baseline under the results oracle failed: {}: {shown}; its mutants were judged under the panic oracle",
                b.of
            );
        }
        if !b.left_out.is_empty() {
            let _ = writeln!(
                out,
                "baseline under the results oracle: {}: {}; its mutants were judged with {} left out of the comparison",
                b.of,
                b.left_out_because.as_deref().unwrap_or_default(),
                b.left_out.join(", ")
            );
        }
        if b.fallback.is_some() || !b.left_out.is_empty() {
            let _ = writeln!(
                out,
                "  the unmutated {} answers what no order of its calls gives: a bug of its own unless a method is approximate by design; `cargo covcon --oracle results --type {}` reports it with a reproducer",
                b.of, b.of
            );
        }
    }
    for b in report.baseline.iter().filter(|b| !b.passed) {
        let _ = writeln!(
            out,
            "baseline failed: {}: {}",
            b.of,
            b.failure.as_deref().unwrap_or_default()
        );
    }
    let missed: Vec<&Outcome> = report
        .outcomes
        .iter()
        .filter(|o| o.outcome == Status::Missed)
        .collect();
    if !missed.is_empty() {
        let _ = writeln!(out, "missed:");
        for o in &missed {
            let _ = writeln!(out, "  {}", o.mutant.name);
            if verbose {
                for line in o.mutant.diff.lines() {
                    let _ = writeln!(out, "    {line}");
                }
            }
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{}", score_table("operator", &report.operators));
    let _ = writeln!(out, "{}", score_table("type", &report.types));
    let t = &report.total;
    let _ = writeln!(
        out,
        "{} mutants in {:.0}s: {} caught, {} missed, {} timeout, {} unviable, {} skipped, {} equivalent; score {}{}",
        report.outcomes.len(),
        report.elapsed_s,
        t.caught,
        t.missed,
        t.timeout,
        t.unviable,
        t.skipped,
        t.equivalent,
        t.score.map_or_else(|| "—".to_string(), |s| format!("{s:.1}%")),
        if report.interrupted { " (interrupted)" } else { "" }
    );
    if let Some(c) = &report.compare {
        out.push('\n');
        out.push_str(&c.terminal(&report.outcomes));
    }
    out
}

fn score_table(what: &str, scores: &[Score]) -> String {
    let width = scores
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(0)
        .max(what.len());
    let mut out =
        format!("{what:<width$}  caught  missed  timeout  unviable  skipped  equivalent  score\n");
    for s in scores {
        let _ = writeln!(
            out,
            "{:<width$}  {:>6}  {:>6}  {:>7}  {:>8}  {:>7}  {:>10}  {:>5}",
            s.name,
            s.caught,
            s.missed,
            s.timeout,
            s.unviable,
            s.skipped,
            s.equivalent,
            s.score
                .map_or_else(|| "—".to_string(), |v| format!("{v:.0}%"))
        );
    }
    out
}

fn write_outputs(out: &Path, report: &MutantsReport) -> Result<()> {
    let write = |name: &str, text: String| {
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    let mutants: Vec<&Mutant> = report.outcomes.iter().map(|o| &o.mutant).collect();
    write("mutants.json", serde_json::to_string_pretty(&mutants)?)?;
    write("outcomes.json", serde_json::to_string_pretty(report)?)?;
    for status in [
        Status::Caught,
        Status::Missed,
        Status::Timeout,
        Status::Unviable,
        Status::Skipped,
        Status::Equivalent,
    ] {
        let mut text = String::new();
        for o in report.outcomes.iter().filter(|o| o.outcome == status) {
            let _ = writeln!(text, "{}", o.mutant.name);
            if let Some(through) = &o.through {
                let _ = writeln!(text, "    judged through {}", through.join(", "));
            }
            match status {
                Status::Caught => {
                    if let Some(c) = &o.caught_by {
                        let [a, b] = &c.methods;
                        let _ = writeln!(
                            text,
                            "    {} in {a} ∥ {b} after {} tests ({:.2}s): {}",
                            c.kind, c.tests_until_found, c.seconds_until_found, c.message
                        );
                    }
                }
                Status::Missed | Status::Timeout => {
                    text.push_str(&o.mutant.diff);
                    text.push('\n');
                }
                Status::Unviable | Status::Skipped | Status::Equivalent => {
                    let reason = o.reason.as_deref().unwrap_or_default();
                    let _ = writeln!(text, "    {}", first_line(reason));
                }
            }
        }
        write(&format!("{}.txt", status.as_str()), text)?;
    }
    for o in &report.outcomes {
        write(&format!("diff/{}.diff", o.mutant.id), o.mutant.diff.clone())?;
    }
    if let Some(c) = &report.compare {
        write("compare.txt", c.text(&report.outcomes))?;
    }
    write("report.html", html(report))
}

/// The HTML report: the score, per operator and per type, and every mutant with its diff.
pub fn html(report: &MutantsReport) -> String {
    let mut body = String::new();
    let t = &report.total;
    let _ = writeln!(
        body,
        "<p class=\"verdict\">Mutation score <b>{}</b>: {} caught, {} missed, {} timeout of {} judged; {} unviable, {} skipped, {} equivalent. Judge: <code>{}</code>, {:.0}s per mutant at most, seed {}; {:.0}s in all{}.</p>",
        t.score.map_or_else(|| "—".to_string(), |s| format!("{s:.1}%")),
        t.caught,
        t.missed,
        t.timeout,
        t.caught + t.missed + t.timeout,
        t.unviable,
        t.skipped,
        t.equivalent,
        esc(&report.judge),
        report.budget_s,
        report.seed,
        report.elapsed_s,
        if report.interrupted { ", interrupted" } else { "" }
    );
    for b in &report.baseline {
        if let Some(shown) = &b.fallback {
            let _ = writeln!(
                body,
                "<p class=\"muted\"><code>{}</code> fails unmutated under the results oracle ({}): its mutants were judged under the panic oracle.</p>",
                esc(&b.of),
                esc(shown)
            );
        }
        if !b.left_out.is_empty() {
            let _ = writeln!(
                body,
                "<p class=\"muted\"><code>{}</code> unmutated gave answers no order gives ({}): its mutants were judged under the results oracle with <code>{}</code> left out of the comparison.</p>",
                esc(&b.of),
                esc(b.left_out_because.as_deref().unwrap_or_default()),
                esc(&b.left_out.join(", "))
            );
        }
    }
    if let Some(c) = &report.compare {
        body.push_str(&c.html());
    }
    for (title, scores) in [
        ("By operator", &report.operators),
        ("By type", &report.types),
    ] {
        let _ = writeln!(body, "<h2>{title}</h2>\n<table class=\"types\"><tr><th></th><th>caught</th><th>missed</th><th>timeout</th><th>unviable</th><th>skipped</th><th>equivalent</th><th>score</th></tr>");
        for s in scores {
            let _ = writeln!(
                body,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&s.name),
                s.caught,
                s.missed,
                s.timeout,
                s.unviable,
                s.skipped,
                s.equivalent,
                s.score.map_or_else(|| "—".to_string(), |v| format!("{v:.0}%"))
            );
        }
        body.push_str("</table>\n");
    }
    body.push_str("<h2>Mutants</h2>\n");
    for o in &report.outcomes {
        let class = match o.outcome {
            Status::Caught | Status::Timeout => "good",
            Status::Missed => "bad",
            Status::Unviable | Status::Skipped | Status::Equivalent => "muted",
        };
        let _ = writeln!(
            body,
            "<h3><span class=\"{class}\">{}</span> {}</h3>",
            o.outcome.as_str(),
            esc(&o.mutant.name)
        );
        if let Some(c) = &o.caught_by {
            let [a, b] = &c.methods;
            let _ = writeln!(
                body,
                "<p class=\"found\">{} in <code>{}</code> ∥ <code>{}</code> after {} tests ({:.2}s): {}</p>",
                esc(&c.kind),
                esc(a),
                esc(b),
                c.tests_until_found,
                c.seconds_until_found,
                esc(&c.message)
            );
        }
        if let Some(through) = &o.through {
            let _ = writeln!(
                body,
                "<p class=\"muted\">judged through {}</p>",
                esc(&through.join(", "))
            );
        }
        if let Some(reason) = &o.reason {
            let _ = writeln!(body, "<p class=\"muted\">{}</p>", esc(&first_line(reason)));
        }
        let _ = writeln!(body, "<pre>{}</pre>", esc(&o.mutant.diff));
    }
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>cargo covcon mutants</title>\n<style>{CSS}</style></head>\n<body>\n<h1>cargo covcon mutants</h1>\n{body}</body>\n</html>\n"
    )
}

const CSS: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#1b1f24;line-height:1.4}
h2{border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:2em}h3{font-size:1em;font-weight:500;margin:1.2em 0 .3em}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
pre{background:#f6f8fa;padding:.5em .7em;margin:0;overflow-x:auto;white-space:pre-wrap}
.bad{color:#cf222e;font-weight:600}.good{color:#1a7f37;font-weight:600}.muted{color:#57606a}.found{color:#57606a;margin:.2em 0}
.verdict{font-size:1.2em}
table.types td,table.types th{padding:.25em .8em;border-bottom:1px solid #d0d7de;text-align:left}
";

#[cfg(test)]
mod tests {
    use super::*;

    /// A mutant of a type covcon cannot run goes to the runnable types that hold it, or to
    /// those that hold its holders; a runnable type judges its own, through its holders first
    /// when covcon cannot call the mutated method, and then its holders when the method is a
    /// private helper.
    #[test]
    fn a_mutant_is_judged_through_the_runnable_types_that_hold_its_code() {
        let method = |name: &str, supported: bool| analysis::Method {
            name: name.into(),
            supported,
            ..analysis::Method::default()
        };
        let ty = |path: &str, holds: &[&str]| TypeModel {
            path: path.into(),
            holds: holds.iter().map(|h| h.to_string()).collect(),
            methods: vec![method("len", true), method("insert", false)],
            ..TypeModel::default()
        };
        let queue = ty("k::Queue", &["k::Inner", "k::Unbounded", "k::List"]);
        let unbounded = ty("k::Unbounded", &["k::Block"]);
        let other = ty("k::Other", &[]);
        let list = ty("k::List", &["k::Node"]);
        let all = [queue.clone(), unbounded, other.clone(), list.clone()];
        let runnable = [queue, other, list];
        let through = |path: &str, method: &str| -> Vec<String> {
            judged_through(path, method, &runnable, &all)
                .into_iter()
                .map(|t| t.path.clone())
                .collect()
        };
        assert_eq!(through("k::Other", "len"), ["k::Other"]);
        assert_eq!(through("k::Inner", "len"), ["k::Queue"]);
        assert_eq!(through("k::Block", "len"), ["k::Queue"]);
        assert!(through("k::Stray", "len").is_empty());
        // `List::insert` takes what covcon cannot make: `Queue`'s calls run it first.
        assert_eq!(through("k::List", "len"), ["k::List"]);
        assert_eq!(through("k::List", "insert"), ["k::Queue", "k::List"]);
        assert_eq!(through("k::List", "insert_at"), ["k::List", "k::Queue"]);
        assert_eq!(through("k::Other", "insert"), ["k::Other"]);
        // What `--list` says of each.
        let mark = |path: &str, method: &str| {
            through_mark(path, &judged_through(path, method, &runnable, &all))
        };
        assert_eq!(mark("k::Other", "len"), "");
        assert_eq!(mark("k::Block", "len"), " (judged through k::Queue)");
        assert_eq!(
            mark("k::List", "insert"),
            " (judged through k::Queue, k::List)"
        );
        assert_eq!(
            mark("k::Stray", "len"),
            " (skipped: covcon cannot test the type)"
        );
    }

    /// A mutant of `/repo/ws/src/lib.rs` as `mutants.json` has it.
    fn mutant(operator: Operator, line: u32, diff: String) -> Mutant {
        serde_json::from_value(serde_json::json!({
            "id": 1, "name": "m", "type_path": "k::T", "method": "f", "operator": operator,
            "file": "/repo/ws/src/lib.rs", "line": line, "column": 8, "description": "",
            "diff": diff,
        }))
        .unwrap()
    }

    #[test]
    fn a_wrong_results_places_are_left_out_once_each() {
        use oracle::results::{Difference, Place};
        let at = |place| Difference {
            place,
            observed: String::new(),
            expected: String::new(),
        };
        let call = |method: &str| {
            at(Place::Call {
                thread: 0,
                index: 0,
                method: method.to_string(),
            })
        };
        let mut cfg = ResultsConfig::default();
        let first = [call("is_full"), call("is_full"), at(Place::FinalState)];
        assert_eq!(leave_out(&mut cfg, &first), ["is_full", "final state"]);
        assert!(!cfg.compare_final_state);
        assert!(cfg.ignored_methods.contains("is_full"));
        // Nothing new: the baseline stops leaving out and keeps its failure.
        assert!(leave_out(&mut cfg, &first).is_empty());
        assert_eq!(leave_out(&mut cfg, &[call("len")]), ["len"]);
    }

    #[test]
    fn the_score_counts_timeouts_as_caught_and_leaves_out_what_was_not_judged() {
        // Equivalent mutants are not judged either: no test could catch them.
        let outcome =
            |status| Outcome::bare(mutant(Operator::SplitSection, 3, String::new()), status);
        let all = [
            outcome(Status::Caught),
            outcome(Status::Timeout),
            outcome(Status::Missed),
            outcome(Status::Missed),
            outcome(Status::Unviable),
            outcome(Status::Skipped),
            outcome(Status::Equivalent),
        ];
        let s = Score::of("all", &all);
        assert_eq!(
            (
                s.caught,
                s.missed,
                s.timeout,
                s.unviable,
                s.skipped,
                s.equivalent
            ),
            (1, 2, 1, 1, 1, 1)
        );
        assert_eq!(s.score, Some(50.0));
        assert_eq!(Score::of("none", &all[4..]).score, None);
    }

    #[test]
    fn a_mutant_is_on_a_changed_line_when_its_lines_meet_one_the_diff_adds() {
        let m = mutant(
            Operator::SwapLockOrder,
            20,
            "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -20,2 +20,1 @@\n-        let a = x;\n-        let b = y;\n+        let b = y; let a = x;\n".into(),
        );
        let root = Path::new("/repo/ws");
        let changed =
            |path: &str, line| BTreeMap::from([(path.to_string(), BTreeSet::from([line]))]);
        assert!(touches(&changed("ws/src/lib.rs", 21), &m, root));
        assert!(touches(&changed("src/lib.rs", 20), &m, root));
        assert!(!touches(&changed("ws/src/lib.rs", 22), &m, root));
        assert!(!touches(&changed("ws/src/other.rs", 20), &m, root));
    }
}
