//! Judging the mutants: which types' campaigns judge a mutant ([`judged_through`]), the
//! unmutated baseline, a covcon campaign per mutant ([`Judge::by_campaign`]) or the user's
//! command per mutant ([`Judge::by_command`]).

use super::model::{Baseline, Caught, Outcome, Status};
use super::report::{first_line, Progress};
use crate::exit_code::{ExitCode, Failure};
use crate::options::Console;
use crate::session::{harness_error, Prepared, Session};
use analysis::TypeModel;
use anyhow::{Context, Result};
use generator::{CampaignConfig, StopFlag};
use oracle::results::ResultsConfig;
use oracle::{CommandEnd, Mutant, ViolationKind, MUTANT_ENV};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// What `--list` says of a mutant's judge: nothing when its own type runs it, the types it is
/// judged through when they are others (a private helper's code, run by its holders), or that
/// no type can run it (it will be skipped).
pub(super) fn through_mark(path: &str, through: &[&TypeModel]) -> String {
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
pub(super) fn judged_through<'a>(
    path: &str,
    method: &str,
    runnable: &'a [TypeModel],
    all: &[TypeModel],
) -> Vec<&'a TypeModel> {
    let Some(own) = runnable.iter().find(|t| t.path == path) else {
        return holders(path, runnable, all);
    };
    match own.methods.iter().find(|m| m.name == method) {
        Some(m) if m.supported() => vec![own],
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

/// The wrong results of the code as written that narrowed a type's comparison
/// ([`leave_out`]), and the disturbers found among them.
#[derive(Debug, Clone, Default)]
struct Disturbed {
    /// Each wrong result no disturber explains yet, with what it left out.
    failures: Vec<WrongResult>,
    /// What the disturbers found leave out, as the report names it.
    found: Vec<String>,
    /// Whether the type is built in more than one way (several constructors, or one that
    /// takes arguments): only then can one instance be a flavour the others are not.
    flavours: bool,
}

impl Disturbed {
    /// None yet, for the type `t`.
    fn of(t: &TypeModel) -> Disturbed {
        Disturbed {
            flavours: t.constructors.len() > 1
                || t.constructors.iter().any(|c| !c.params.is_empty()),
            ..Disturbed::default()
        }
    }

    /// Everything left out, as the report names it: the disturbers, then the places each
    /// other wrong result left out.
    fn notes(&self) -> Vec<String> {
        let places = self.failures.iter().flat_map(|f| f.notes.iter().cloned());
        self.found.iter().cloned().chain(places).collect()
    }
}

/// One wrong result of the code as written: its test's pair, the methods whose answers
/// differed, the instance's constructor calls ([`oracle::results::instance_text`]), and what
/// it left out (a method's answers, or with `None` the final state, beside those methods).
#[derive(Debug, Clone, Default)]
struct WrongResult {
    pair: BTreeSet<String>,
    differed: BTreeSet<String>,
    instance: String,
    added: Vec<(Option<String>, BTreeSet<String>)>,
    notes: Vec<String>,
}

/// What [`leave_out`] left out now, and everything left out for the type since its baseline
/// began, as the report names them.
#[derive(Debug, Default, PartialEq, Eq)]
struct LeftOut {
    more: Vec<String>,
    all: Vec<String>,
}

/// Leaves the places of a wrong result of `test` out of `cfg`'s comparison, beside what
/// disturbed them: a method's answers in tests that call one of the methods the other thread
/// called (concurrent-queue's `is_full` beside the `force_push` that was half done), the
/// final state in tests that call one of the test's pair; what was not left out already, as
/// the report names it (`is_full beside force_push, pop`).
///
/// When it and earlier wrong results share a disturber ([`disturber`]), that disturber's
/// tests are left out whole instead, and what was narrowed for those results is undone.
fn leave_out(
    cfg: &mut ResultsConfig,
    differences: &[oracle::results::Difference],
    test: &generator::TestCase,
    disturbed: &mut Disturbed,
) -> LeftOut {
    let mut failure = WrongResult {
        pair: test.pair.iter().cloned().collect(),
        differed: differences
            .iter()
            .filter_map(|d| match &d.place {
                oracle::results::Place::Call { method, .. } => Some(method.clone()),
                oracle::results::Place::FinalState => None,
            })
            .collect(),
        instance: oracle::results::instance_text(test),
        ..WrongResult::default()
    };
    if let Some(more) = disturber(disturbed, &failure, cfg) {
        return LeftOut {
            more: vec![more],
            all: disturbed.notes(),
        };
    }
    let note = |what: &str, beside: BTreeSet<String>, failure: &mut WrongResult| {
        if !beside.is_empty() {
            let names: Vec<&str> = beside.iter().map(String::as_str).collect();
            failure
                .notes
                .push(format!("{what} beside {}", names.join(", ")));
            let what = (what != FINAL_STATE).then(|| what.to_string());
            failure.added.push((what, beside));
        }
    };
    for d in differences {
        match &d.place {
            oracle::results::Place::Call { thread, method, .. } => {
                let others: BTreeSet<String> = test
                    .threads
                    .iter()
                    .enumerate()
                    .filter(|(t, _)| *t != usize::from(*thread))
                    .flat_map(|(_, calls)| calls.iter().map(|c| c.method.clone()))
                    .collect();
                let known = cfg.ignored_beside.entry(method.clone()).or_default();
                let new: BTreeSet<String> = others
                    .into_iter()
                    .filter(|m| known.insert(m.clone()))
                    .collect();
                note(method, new, &mut failure);
            }
            oracle::results::Place::FinalState => {
                let new: BTreeSet<String> = test
                    .pair
                    .iter()
                    .filter(|m| cfg.state_ignored_beside.insert((*m).clone()))
                    .cloned()
                    .collect();
                note(FINAL_STATE, new, &mut failure);
            }
        }
    }
    let more = failure.notes.clone();
    if !more.is_empty() {
        disturbed.failures.push(failure);
    }
    LeftOut {
        more,
        all: disturbed.notes(),
    }
}

/// What [`disturber`] found: a method whose tests, or an instance whose tests, are left out.
enum Cause {
    Method(String),
    Instance(String),
}

impl Cause {
    /// Whether the wrong result `f` is one of this cause's tests.
    fn explains(&self, f: &WrongResult) -> bool {
        match self {
            Cause::Method(m) => f.pair.contains(m),
            Cause::Instance(i) => &f.instance == i,
        }
    }

    /// As the report names what it leaves out.
    fn note(&self) -> String {
        match self {
            Cause::Method(m) => format!("every answer beside {m}"),
            Cause::Instance(i) => format!("every answer of instances built as `{i}`"),
        }
    }
}

/// How the report names the final state among the places left out.
const FINAL_STATE: &str = "final state";

/// The disturber `failure` shares with earlier wrong results no disturber explains yet, if
/// any, left out whole ([`ResultsConfig::unjudged_beside`],
/// [`ResultsConfig::unjudged_instances`]) with what was narrowed for the wrong results it
/// explains undone; its note:
/// - a method of `failure`'s pair in the pairs of earlier ones, of two pairs or more, that did
///   not answer wrong in most of them (concurrent-queue 2.5.0's `force_push` on a full queue
///   disturbs `is_full`, `is_empty`, `len`, `push` and `close` in turn: a round for each
///   answer, where one round does; a method that answered wrong beside each of two others is
///   their victim, not their disturber);
/// - else, for a type built in several ways, the instance `failure` and at least two earlier
///   ones were built as, in two pairs or more (concurrent-queue's `bounded(1)`, a one-slot
///   flavour whose `push` answers `Full` while a `pop` is half done, whatever the pair).
fn disturber(
    disturbed: &mut Disturbed,
    failure: &WrongResult,
    cfg: &mut ResultsConfig,
) -> Option<String> {
    fn pairs(group: &[&WrongResult]) -> usize {
        group.iter().map(|f| &f.pair).collect::<BTreeSet<_>>().len()
    }
    let by_method = failure.pair.iter().find_map(|m| {
        if cfg.unjudged_beside.contains(m) {
            return None;
        }
        let group: Vec<&WrongResult> = disturbed
            .failures
            .iter()
            .filter(|f| f.pair.contains(m))
            .chain(std::iter::once(failure))
            .collect();
        let victim = 2 * group.iter().filter(|f| f.differed.contains(m)).count() > group.len();
        (group.len() >= 2 && pairs(&group) >= 2 && !victim).then(|| m.clone())
    });
    let by_instance = || {
        if !disturbed.flavours || cfg.unjudged_instances.contains(&failure.instance) {
            return None;
        }
        let group: Vec<&WrongResult> = disturbed
            .failures
            .iter()
            .filter(|f| f.instance == failure.instance)
            .chain(std::iter::once(failure))
            .collect();
        (group.len() >= 3 && pairs(&group) >= 2).then(|| failure.instance.clone())
    };
    let cause = match by_method {
        Some(m) => Cause::Method(m),
        None => Cause::Instance(by_instance()?),
    };
    let (explained, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut disturbed.failures)
        .into_iter()
        .partition(|f| cause.explains(f));
    disturbed.failures = rest;
    for (what, beside) in explained.iter().flat_map(|f| &f.added) {
        let from = match what {
            Some(method) => cfg.ignored_beside.get_mut(method),
            None => Some(&mut cfg.state_ignored_beside),
        };
        if let Some(set) = from {
            set.retain(|m| !beside.contains(m));
        }
    }
    cfg.ignored_beside.retain(|_, beside| !beside.is_empty());
    let note = cause.note();
    match cause {
        Cause::Method(m) => cfg.unjudged_beside.insert(m),
        Cause::Instance(i) => cfg.unjudged_instances.insert(i),
    };
    disturbed.found.push(note.clone());
    Some(note)
}

/// What judging a mutant does when the code as written shows the violation its campaign
/// found ([`Judge::shows_unmutated`]), as a baseline that had found it would have done.
#[derive(Debug, PartialEq, Eq)]
enum Unmutated {
    /// Under the results oracle: these methods' answers (or the final state, or tests of a
    /// disturber) are left out of the comparison, and the mutant judged again.
    LeaveOut(LeftOut),
    /// A wrong result with nothing (more) to leave out: the type's mutants are judged under
    /// the panic oracle.
    PanicOracle,
    /// A panic, deadlock or crash of the code as written: the type judges no mutant.
    Spoiled,
}

/// [`Unmutated`] for a violation of `kind` whose results differed in `differences`, the
/// mutant judged under `results` (changed as decided, with `disturbed`), after `rounds` earlier such rounds
/// (at most [`LEAVE_OUT_ROUNDS`] leave something out, as in a baseline).
fn after_unmutated(
    kind: ViolationKind,
    differences: Option<&[oracle::results::Difference]>,
    test: &generator::TestCase,
    results: &mut Option<ResultsConfig>,
    disturbed: &mut Disturbed,
    rounds: u32,
) -> Unmutated {
    if kind != ViolationKind::WrongResult || results.is_none() {
        return Unmutated::Spoiled;
    }
    let more = match (differences, results.as_mut()) {
        (Some(d), Some(cfg)) if rounds < LEAVE_OUT_ROUNDS => leave_out(cfg, d, test, disturbed),
        _ => LeftOut::default(),
    };
    if more.more.is_empty() {
        *results = None;
        Unmutated::PanicOracle
    } else {
        Unmutated::LeaveOut(more)
    }
}

/// Most rounds of leaving out what a wrong result of the code as written showed, in its
/// baseline and again while its mutants are judged: each leaves a method out only beside the
/// calls that disturbed it, so a type with several such answers takes a few.
const LEAVE_OUT_ROUNDS: u32 = 8;

/// Runs of a mutant's violating test with no mutant on ([`Judge::shows_unmutated`]).
const UNMUTATED_RUNS: u32 = 20;

/// What judging every mutant shares.
pub(super) struct Judge<'a> {
    pub session: &'a Session,
    pub prepared: &'a Prepared,
    pub chosen: &'a [&'a Mutant],
    pub stop: &'a StopFlag,
    pub console: &'a Console,
    pub out: &'a Path,
}

/// The baselines of the unmutated types a campaign judges mutants through.
#[derive(Default)]
struct Baselines {
    of_types: Vec<Baseline>,
    /// By path, the results oracle each type's mutants are judged under, and what its wrong
    /// results narrowed that comparison for ([`leave_out`]).
    judged_under: BTreeMap<String, (Option<ResultsConfig>, Disturbed)>,
}

impl Baselines {
    /// The baseline of the type `path`.
    fn of_type(&mut self, path: &str) -> Option<&mut Baseline> {
        self.of_types.iter_mut().find(|b| b.of == path)
    }

    /// Why the type `path` cannot judge a mutant: it already fails unmutated.
    fn failing(&self, path: &str) -> Option<String> {
        self.of_types
            .iter()
            .find(|b| b.of == path && !b.passed)
            .map(|b| {
                format!(
                    "the unmutated type already shows a violation ({}); fix it or leave the type out",
                    b.failure.as_deref().unwrap_or_default()
                )
            })
    }
}

/// The first violation a campaign found, as a baseline's failure names it.
fn failure_of(r: &generator::TypeResult<oracle::Violation>) -> Option<String> {
    r.violations.first().map(|v| {
        let [a, b] = &v.violation.methods;
        format!(
            "{} in {a} ∥ {b}: {}",
            v.violation.kind,
            first_line(&v.violation.message)
        )
    })
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
    pub(super) fn by_campaign(
        &self,
        campaign: CampaignConfig,
    ) -> Result<(Vec<Baseline>, Vec<Outcome>)> {
        // The unmutated types first.
        let wanted: BTreeSet<&str> = self
            .chosen
            .iter()
            .filter(|m| {
                !self.prepared.harness.unviable.contains_key(&m.id) && m.equivalent.is_none()
            })
            .flat_map(|m| self.targets(m))
            .map(|t| t.path.as_str())
            .collect();
        let mut baselines = Baselines::default();
        let runnable = &self.prepared.runnable;
        for t in runnable.iter().filter(|t| wanted.contains(t.path.as_str())) {
            if self.stop.raised() {
                break;
            }
            let (baseline, results, disturbed) = self.baseline(t, &campaign)?;
            baselines
                .judged_under
                .insert(t.path.clone(), (results, disturbed));
            baselines.of_types.push(baseline);
        }
        let progress = Progress::new(self.console, self.chosen.len());
        let mut outcomes = Vec::new();
        for m in self.chosen {
            if self.stop.raised() {
                break;
            }
            let o = self.by_campaign_one(m, &mut baselines, &campaign, &progress)?;
            progress.done(&o);
            outcomes.push(o);
        }
        progress.finish();
        Ok((baselines.of_types, outcomes))
    }

    /// The types whose campaigns judge `m` ([`judged_through`]).
    fn targets(&self, m: &Mutant) -> Vec<&TypeModel> {
        let (runnable, drivable) = (&self.prepared.runnable, &self.prepared.drivable);
        judged_through(&m.type_path, &m.method, runnable, &drivable.types)
    }

    /// Why no campaign can judge `m`: no type covcon runs runs its code.
    fn why_not(&self, m: &Mutant) -> Option<String> {
        if !self.targets(m).is_empty() {
            return None;
        }
        let path = m.type_path.as_str();
        let reason = self
            .prepared
            .drivable
            .types
            .iter()
            .find(|t| t.path == path)
            .and_then(|t| t.reason.as_ref().map(ToString::to_string))
            .unwrap_or_else(|| "no method covcon can call".to_string());
        Some(format!("covcon cannot test the type: {reason}"))
    }

    /// A campaign of `t` alone on `mutant` (the code as written with `None`), under the
    /// `results` oracle with `results`, under `panic` without.
    fn run(
        &self,
        t: &TypeModel,
        mutant: Option<u32>,
        results: Option<ResultsConfig>,
        campaign: &CampaignConfig,
    ) -> Result<generator::TypeResult<oracle::Violation>> {
        let mut config = self.session.oracle.clone();
        config.mutant = mutant;
        config.results = results;
        let mut executor = self.prepared.executor(&config)?;
        let campaign = CampaignConfig {
            types: self.prepared.campaign_types(t),
            scoped_tests: generator::scoped_tests(config.results.is_some()),
            ..campaign.clone()
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
    }

    /// The unmutated `t`'s baseline, and the results oracle its mutants are judged under:
    /// the run's, with the methods left out whose answers differed in the baseline, or none
    /// (the panic oracle) when the type fails under it as written.
    fn baseline(
        &self,
        t: &TypeModel,
        campaign: &CampaignConfig,
    ) -> Result<(Baseline, Option<ResultsConfig>, Disturbed)> {
        let config = &self.session.oracle;
        self.console.note(format_args!(
            "mutants: baseline: {} unmutated for {:.0}s",
            t.path,
            campaign.time_budget.as_secs_f64()
        ));
        let started = Instant::now();
        // Under the results oracle, a wrong result whose only differences are answers of
        // methods not yet left out beside its calls (or the final state) leaves those out
        // beside them and runs again, at most `LEAVE_OUT_ROUNDS` times.
        let mut results = config.results.clone();
        let mut disturbed = Disturbed::of(t);
        let (mut left_out, mut left_out_because) = (Vec::new(), None);
        let mut failure;
        let mut rounds = 0;
        loop {
            let r = self.run(t, None, results.clone(), campaign)?;
            failure = failure_of(&r);
            let shown = r
                .violations
                .first()
                .and_then(|v| Some((v.violation.results.as_ref()?, &v.violation.test)));
            let (Some((shown, test)), Some(cfg)) = (shown, results.as_mut()) else {
                break;
            };
            if rounds == LEAVE_OUT_ROUNDS || self.stop.raised() {
                break;
            }
            let more = leave_out(cfg, &shown.differences, test, &mut disturbed);
            if more.more.is_empty() {
                break;
            }
            left_out = more.all;
            let more = more.more;
            self.console.note(format_args!(
                "mutants: baseline: {} fails under the results oracle ({}); leaving out {} and running it again",
                t.path,
                failure.as_deref().unwrap_or_default(),
                more.join(", ")
            ));
            left_out_because.get_or_insert_with(|| failure.clone().unwrap_or_default());
            rounds += 1;
        }
        if failure.is_some() {
            // What was left out did not make it pass: the whole results oracle goes.
            left_out.clear();
            left_out_because = None;
            results = config.results.clone();
            disturbed = Disturbed::of(t);
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
                let under_panic = failure_of(&self.run(t, None, None, campaign)?);
                if under_panic.is_none() && !self.stop.raised() {
                    fallback = failure.take();
                    results = None;
                } else {
                    failure = under_panic.or(failure);
                }
            }
        }
        let baseline = Baseline {
            of: t.path.clone(),
            passed: failure.is_none(),
            seconds: started.elapsed().as_secs_f64(),
            failure,
            fallback,
            left_out,
            left_out_because,
        };
        Ok((baseline, results, disturbed))
    }

    /// `m` judged by the campaigns of the types that run its code and passed their baselines,
    /// one after the other until one catches it; or why it is not run.
    fn by_campaign_one(
        &self,
        m: &Mutant,
        baselines: &mut Baselines,
        campaign: &CampaignConfig,
        progress: &Progress,
    ) -> Result<Outcome> {
        let config = &self.session.oracle;
        // Judged through the targets whose code as written passed its baseline.
        let targets: Vec<&TypeModel> = self
            .targets(m)
            .into_iter()
            .filter(|t| baselines.failing(&t.path).is_none())
            .collect();
        let why = self.why_not(m).or_else(|| {
            targets.is_empty().then(|| {
                baselines.failing(&m.type_path).unwrap_or_else(|| {
                    "every type that holds it already shows a violation unmutated".to_string()
                })
            })
        });
        if let Some(o) = self.not_run(m, why) {
            return Ok(o);
        }
        progress.start(m);
        let started = Instant::now();
        let (mut tests, mut regrouped, mut caught_by, mut oracle) = (0, 0, None, None);
        let mut through = Vec::new();
        // Set when a target's campaign found what the code as written shows too.
        let mut spoiled = None;
        for t in &targets {
            let (t, changed) = self.as_mutated(t, m);
            // The results oracle a type's mutants are judged under: as its baseline passed.
            let (mut results, mut disturbed) = baselines
                .judged_under
                .get(&t.path)
                .cloned()
                .unwrap_or_else(|| (config.results.clone(), Disturbed::of(&t)));
            regrouped += changed;
            through.push(t.path.clone());
            let mut rounds = 0;
            let r = loop {
                let r = self.run(&t, Some(m.id), results.clone(), campaign)?;
                tests += r.tests_run;
                let Some(v) = r.violations.first() else {
                    break Some(r);
                };
                if self.stop.raised() || !self.shows_unmutated(&v.violation, &results)? {
                    break Some(r);
                }
                // The baseline missed it: what the mutant's campaign found is the type's own.
                let shown = failure_of(&r).unwrap_or_default();
                let differences = v
                    .violation
                    .results
                    .as_ref()
                    .map(|w| w.differences.as_slice());
                let then = after_unmutated(
                    v.violation.kind,
                    differences,
                    &v.violation.test,
                    &mut results,
                    &mut disturbed,
                    rounds,
                );
                rounds += 1;
                let baseline = baselines.of_type(&t.path);
                match then {
                    Unmutated::LeaveOut(more) => {
                        if let Some(b) = baseline {
                            b.left_out_because.get_or_insert_with(|| shown.clone());
                            b.left_out = more.all;
                        }
                        let notes = more.more;
                        self.console.note(format_args!(
                        "mutants: {} shows unmutated what mutant {}'s campaign found ({shown}); leaving out {} and judging it again",
                        t.path,
                        m.id,
                        notes.join(", ")
                    ));
                    }
                    Unmutated::PanicOracle => {
                        self.console.note(format_args!(
                        "mutants: {} shows unmutated what mutant {}'s campaign found ({shown}); judging its mutants under the panic oracle",
                        t.path, m.id
                    ));
                        if let Some(b) = baseline {
                            b.fallback.get_or_insert(shown);
                            b.left_out.clear();
                            b.left_out_because = None;
                        }
                    }
                    Unmutated::Spoiled => {
                        if let Some(b) = baseline {
                            b.passed = false;
                            b.failure =
                                Some(format!("{shown} (seen while judging mutant {})", m.id));
                        }
                        spoiled = baselines.failing(&t.path);
                        break None;
                    }
                }
                baselines
                    .judged_under
                    .insert(t.path.clone(), (results.clone(), disturbed.clone()));
            };
            let Some(r) = r else {
                continue;
            };
            let panic_only = results.is_none() && config.results.is_some();
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
        let (outcome, reason) = match (&caught_by, spoiled) {
            (Some(_), _) => (Status::Caught, None),
            (None, Some(why)) if through.len() == 1 => (Status::Skipped, Some(why)),
            _ => (Status::Missed, None),
        };
        Ok(Outcome {
            mutant: m.clone(),
            outcome,
            seconds: started.elapsed().as_secs_f64(),
            tests: Some(tests),
            caught_by,
            reason,
            regrouped: Some(regrouped),
            log: None,
            oracle,
            through: (through != [m.type_path.as_str()]).then_some(through),
        })
    }

    /// Whether the code as written shows `v` too: the test that showed it under a mutant,
    /// replayed with no mutant on (the run as saved, then re-runs with other noise, as a
    /// confirmation makes), under the same oracle. A baseline of a few seconds can miss what
    /// the type shows unmutated (concurrent-queue 2.5.0's `is_full` beside a `force_push`,
    /// found by the mutants' campaigns of one run and by its baseline in another): a mutant
    /// is caught only by what its mutation makes.
    fn shows_unmutated(
        &self,
        v: &oracle::Violation,
        results: &Option<ResultsConfig>,
    ) -> Result<bool> {
        let mut config = self.session.oracle.clone();
        config.mutant = None;
        config.results = results.clone();
        config.confirm_runs = UNMUTATED_RUNS;
        let executor = self.prepared.executor(&config)?;
        Ok(executor.replay(&v.test).violation == Some(v.kind))
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
        let regrouped = t.regroup(&mutated.pairs);
        (t, regrouped)
    }

    /// The user's command per mutant, run in the instrumented copy, after once unmutated.
    pub(super) fn by_command(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A test of `k::Queue` whose threads call `threads`, built for `pair`.
    fn test_of(pair: [&str; 2], threads: [&[&str]; 2]) -> generator::TestCase {
        let calls = |names: &[&str]| {
            names
                .iter()
                .map(|m| generator::Call::new(*m, 0, Vec::new()))
                .collect()
        };
        generator::TestCase {
            id: 0,
            type_path: "k::Queue".into(),
            pair: pair.map(String::from),
            instances: vec![generator::Call::new("new", 0, Vec::new())],
            handles: Vec::new(),
            prefix: Vec::new(),
            threads: [calls(threads[0]), calls(threads[1])],
            noise_seed: 0,
            control: Default::default(),
        }
    }

    /// What the code as written shows too is dealt with as a baseline would have: a wrong
    /// result's differing answers left out ([`LEAVE_OUT_ROUNDS`] at most), then the panic oracle; a
    /// panic spoils the type.
    #[test]
    fn a_violation_the_unmutated_code_shows_leaves_out_falls_back_or_spoils() {
        use oracle::results::{Difference, Place};
        let call = |method: &str| Difference {
            place: Place::Call {
                thread: 0,
                index: 1,
                method: method.into(),
            },
            observed: "false".into(),
            expected: "true".into(),
        };
        let wrong = ViolationKind::WrongResult;
        let test = test_of(["force_push", "is_full"], [&["is_full"], &["force_push"]]);
        let mut results = Some(ResultsConfig::default());
        let mut disturbed = Disturbed::default();
        let mut judged = |d: &[Difference], results: &mut Option<ResultsConfig>, round| {
            after_unmutated(wrong, Some(d), &test, results, &mut disturbed, round)
        };
        let is_full = [call("is_full")];
        assert_eq!(
            judged(&is_full, &mut results, 0),
            Unmutated::LeaveOut(LeftOut {
                more: vec!["is_full beside force_push".into()],
                all: vec!["is_full beside force_push".into()],
            })
        );
        assert!(results
            .as_ref()
            .is_some_and(|r| r.ignored_beside["is_full"].iter().eq(["force_push"])));
        let final_state = [difference_at(Place::FinalState)];
        assert_eq!(
            judged(&final_state, &mut results, 1),
            Unmutated::LeaveOut(LeftOut {
                more: vec!["final state beside force_push, is_full".into()],
                all: vec![
                    "is_full beside force_push".into(),
                    "final state beside force_push, is_full".into()
                ],
            })
        );
        // Nothing more to leave out: the panic oracle.
        assert_eq!(judged(&is_full, &mut results, 2), Unmutated::PanicOracle);
        assert!(results.is_none());
        // Past the last round nothing is left out, whatever differs.
        let mut again = Some(ResultsConfig::default());
        let len = [call("len")];
        assert_eq!(
            after_unmutated(
                wrong,
                Some(&len),
                &test,
                &mut again,
                &mut Disturbed::default(),
                LEAVE_OUT_ROUNDS
            ),
            Unmutated::PanicOracle
        );
        for kind in [
            ViolationKind::Panic,
            ViolationKind::Deadlock,
            ViolationKind::Crash,
        ] {
            let mut results = Some(ResultsConfig::default());
            let mut disturbed = Disturbed::default();
            assert_eq!(
                after_unmutated(kind, None, &test, &mut results, &mut disturbed, 0),
                Unmutated::Spoiled
            );
            assert_eq!(
                after_unmutated(kind, None, &test, &mut None, &mut disturbed, 0),
                Unmutated::Spoiled
            );
        }
    }

    /// A mutant of a type covcon cannot run goes to the runnable types that hold it, or to
    /// those that hold its holders; a runnable type judges its own, through its holders first
    /// when covcon cannot call the mutated method, and then its holders when the method is a
    /// private helper.
    #[test]
    fn a_mutant_is_judged_through_the_runnable_types_that_hold_its_code() {
        let method = |name: &str, supported: bool| analysis::Method {
            name: name.into(),
            reason: (!supported).then_some(analysis::Reason::NothingToTest),
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

    /// A difference at `place`, its texts left empty.
    fn difference_at(place: oracle::results::Place) -> oracle::results::Difference {
        oracle::results::Difference {
            place,
            observed: String::new(),
            expected: String::new(),
        }
    }

    /// A difference in the answer of thread 0's first call, of `method`.
    fn answer_of(method: &str) -> oracle::results::Difference {
        difference_at(oracle::results::Place::Call {
            thread: 0,
            index: 0,
            method: method.to_string(),
        })
    }

    #[test]
    fn a_wrong_results_places_are_left_out_once_each() {
        use oracle::results::{Difference, Place};
        let (at, call) = (difference_at, answer_of);
        let mut cfg = ResultsConfig::default();
        let mut disturbed = Disturbed::default();
        let mut leave_out = |cfg: &mut ResultsConfig, d: &[Difference], test: &_| {
            super::leave_out(cfg, d, test, &mut disturbed).more
        };
        let test = test_of(
            ["force_push", "is_full"],
            [&["is_full", "len"], &["force_push", "pop"]],
        );
        let first = [call("is_full"), call("is_full"), at(Place::FinalState)];
        assert_eq!(
            leave_out(&mut cfg, &first, &test),
            [
                "is_full beside force_push, pop",
                "final state beside force_push, is_full"
            ]
        );
        // Beside those calls only: the comparison stays on elsewhere.
        assert!(cfg.compare_final_state && cfg.ignored_methods.is_empty());
        // Nothing new: the baseline stops leaving out and keeps its failure.
        assert!(leave_out(&mut cfg, &first, &test).is_empty());
        assert_eq!(
            leave_out(&mut cfg, &[call("len")], &test),
            ["len beside force_push, pop"]
        );
        // The same answer disturbed by another call: that one too.
        let other = test_of(["close", "is_full"], [&["is_full"], &["close"]]);
        assert_eq!(
            leave_out(&mut cfg, &[call("is_full")], &other),
            ["is_full beside close"]
        );
    }

    /// A method in the pairs of two wrong results or more, of two pairs or more, that did not
    /// answer wrong in most of them, is their disturber: its tests are left out whole, and
    /// what was narrowed for those results is undone.
    #[test]
    fn the_method_every_wrong_result_was_beside_is_left_out_whole() {
        use oracle::results::{Difference, Place};
        let (at, call) = (difference_at, answer_of);
        let mut cfg = ResultsConfig::default();
        let mut disturbed = Disturbed::default();
        let mut notes = Vec::new();
        let mut leave_out = |cfg: &mut ResultsConfig, d: &[Difference], pair: [&str; 2]| {
            let test = test_of(pair, [&[pair[0]], &[pair[1]]]);
            let left = super::leave_out(cfg, d, &test, &mut disturbed);
            notes = left.all;
            left.more
        };
        let state = [at(Place::FinalState)];
        assert_eq!(
            leave_out(&mut cfg, &state, ["force_push", "is_empty"]),
            ["final state beside force_push, is_empty"]
        );
        assert_eq!(
            leave_out(&mut cfg, &[call("is_full")], ["is_full", "force_push"]),
            ["every answer beside force_push"]
        );
        assert!(cfg.state_ignored_beside.is_empty() && cfg.ignored_beside.is_empty());
        assert!(cfg.unjudged_beside.iter().eq(["force_push"]));
        // A wrong answer of the method in both pairs does not make it their disturber.
        assert_eq!(
            leave_out(&mut cfg, &[call("pop")], ["pop", "push"]),
            ["pop beside push"]
        );
        // A method that answered wrong in one of two is still their disturber.
        assert_eq!(
            leave_out(&mut cfg, &[call("push")], ["push", "len"]),
            ["every answer beside push"]
        );
        assert!(cfg.unjudged_beside.iter().eq(["force_push", "push"]));
        assert!(cfg.ignored_beside.is_empty() && cfg.unjudged_instances.is_empty());
        // Nor does one pair met twice: only its answers are left out.
        let mut again = ResultsConfig::default();
        let mut disturbed = Disturbed::default();
        let test = test_of(
            ["is_full", "force_push"],
            [&["is_full", "len"], &["force_push"]],
        );
        for (d, want) in [
            (call("is_full"), "is_full beside force_push"),
            (call("len"), "len beside force_push"),
        ] {
            let left = super::leave_out(&mut again, &[d], &test, &mut disturbed);
            assert_eq!(left.more, [want]);
        }
        assert!(again.unjudged_beside.is_empty());
        assert_eq!(
            notes,
            ["every answer beside force_push", "every answer beside push"]
        );
    }

    /// Three wrong results of tests of one instance of a type built in several ways, in
    /// several pairs with no disturber among them, leave that instance's tests out whole; of
    /// a type built one way only, they are narrowed as before.
    #[test]
    fn the_instance_every_wrong_result_was_built_as_is_left_out_whole() {
        let call = answer_of;
        let one_slot = |pair: [&str; 2]| {
            let mut test = test_of(pair, [&[pair[0]], &[pair[1]]]);
            test.instances = vec![generator::Call::new(
                "bounded",
                0,
                vec![generator::Value::Int(1)],
            )];
            test
        };
        let bounded = analysis::Constructor {
            name: "bounded".into(),
            params: vec![analysis::Param::default()],
            ..analysis::Constructor::default()
        };
        let queue = TypeModel {
            constructors: vec![bounded],
            ..TypeModel::default()
        };
        let first = one_slot(["push", "pop"]);
        let second = one_slot(["is_empty", "pop"]);
        let third = one_slot(["len", "pop"]);
        for (mut disturbed, want) in [
            (
                Disturbed::of(&queue),
                "every answer of instances built as `bounded(1)`",
            ),
            (Disturbed::of(&TypeModel::default()), "len beside pop"),
        ] {
            let mut cfg = ResultsConfig::default();
            // `pop` answered wrong in both: their victim.
            let left = leave_out(
                &mut cfg,
                &[call("push"), call("pop")],
                &first,
                &mut disturbed,
            );
            assert_eq!(left.more, ["push beside pop", "pop beside pop"]);
            let left = leave_out(
                &mut cfg,
                &[call("is_empty"), call("pop")],
                &second,
                &mut disturbed,
            );
            assert_eq!(left.more, ["is_empty beside pop"]);
            let left = leave_out(
                &mut cfg,
                &[call("len"), call("pop")],
                &third,
                &mut disturbed,
            );
            assert_eq!(left.more[0], want);
        }
    }
}
