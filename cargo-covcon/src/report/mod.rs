//! The report: one serde value describing a run, from which every output format is rendered.
//!
//! Its JSON form is `report.json`, documented in `docs/report-json.md`. Fields added later
//! carry `#[serde(default)]`, so older reports still load (for `report --merge` and
//! `--baseline`); a change that breaks readers bumps [`FORMAT_VERSION`].

pub mod github;
pub mod html;
pub mod junit;
pub mod sarif;
pub mod terminal;

use analysis::Group;
use anyhow::{Context, Result};
use generator::TestCase;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Version of the JSON shape of [`Report`].
pub const FORMAT_VERSION: u32 = 1;

/// Everything a run found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub format_version: u32,
    /// The seed the tests were generated from (`--seed` repeats the run).
    pub seed: u64,
    pub strategy: String,
    /// Wall-clock seconds of the whole run, harness build included.
    pub elapsed_s: f64,
    /// Seconds spent building the harness (0 when it was reused).
    pub build_s: f64,
    #[serde(default)]
    pub covcon_version: String,
    /// The run was interrupted (Ctrl-C, SIGTERM): the report covers what ran, and the types
    /// not reached are untested.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The workspace root the types' `file`s are relative to (SARIF's `%SRCROOT%`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_root: Option<std::path::PathBuf>,
    /// `K/N` when the run was one shard; a merged report lists every shard.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<String>,
    pub types: Vec<TypeReport>,
    /// Warnings about the run as a whole (analysis diagnostics, merge notes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<String>,
    /// What the oracle ran: tests, and the sequential, confirmation and shrinking runs made
    /// to judge them (absent when no campaign ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracle: Option<oracle::RunStats>,
}

/// What happened to one type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TypeReport {
    /// `krate::module::Type`.
    pub path: String,
    #[serde(default)]
    pub package: String,
    /// Where the type is declared, relative to the workspace root when inside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    #[serde(default)]
    pub line: u32,
    pub tests_run: u64,
    /// Concurrent runs made for the type: its tests' runs, and the runs exploring pairs,
    /// confirming and shrinking violations (`oracle::TypeRunStats::runs`); 0 in a report
    /// written before the field.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub runs: u64,
    /// Seconds of the campaign spent on this type.
    #[serde(default)]
    pub seconds: f64,
    pub pairs: Vec<PairReport>,
    pub violations: Vec<ViolationReport>,
    /// Methods, pairs or the whole type covcon could not test, each with why.
    pub skipped: Vec<String>,
    /// Set when the type was not tested at all, with why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untested: Option<String>,
    /// What kind of untested it is; read through [`TypeReport::untested_kind`], since a report
    /// written before the field existed has only `untested`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untested_kind: Option<UntestedKind>,
    /// Interleaving coverage over time: covered pairs after each batch of tests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coverage: Vec<CoveragePoint>,
    /// Of `tests_run`, runs whose constructors or prefix failed, so that nothing concurrent
    /// ran.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub setup_failures: u64,
    /// Its runs ended with threads it started itself (a housekeeper, a timer): the results
    /// oracle compared only what fast and slow sequential runs of the same calls agree on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_threads: bool,
    /// Failing runs whose panic only the failing thread's calls run alone, with pauses,
    /// explained: the type reads a clock covcon does not control (through a dependency, a
    /// syscall), and its verdicts fall back on waiting for real.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clock_outside: u64,
    /// Deadlocks with a thread blocked while its scope held a guard of the type's: not
    /// reported (the test's use of the guard may be what the type's contract forbids).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub guard_held_deadlocks: u64,
    /// Failing runs whose verdict ran out of time (the type's budget, and a grace after it)
    /// before some order of the same calls explained them or every order ran: not reported.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unjudged: u64,
    /// The builder constructors, by their first function's name: each call of the chain
    /// (the first function's included) with how many of the constructor's arguments it takes,
    /// so that a test's constructor reads as the chain it runs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub builders: generator::display::Builders,
    /// The constructors that are free functions, by name (`bounded`), so that a test's
    /// constructor reads as the call it makes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub functions: generator::display::Functions,
    /// Under `--oracle results`: the methods whose results were not compared because their
    /// answers are approximate by the type's contract, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approximate: Vec<ApproximateMethod>,
    /// Under `--oracle results`: the methods whose doc says they fail when they find a lock
    /// held (`analysis::Method::contended`): a test in which one answered a failure was not
    /// judged; their other answers were compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contended: Vec<ContendedMethod>,
}

/// A method whose doc says it fails when it finds a lock held, with the sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContendedMethod {
    pub method: String,
    pub line: String,
}

impl ContendedMethod {
    /// `its doc says "…"`.
    pub fn why(&self) -> String {
        format!("its doc says \"{}\"", self.line)
    }
}

impl std::fmt::Display for ContendedMethod {
    /// `` `try_entry` (its doc says "…") ``.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` ({})", self.method, self.why())
    }
}

/// A method whose answer is approximate by its type's contract (`analysis::Method::approximate`):
/// its calls ran and were judged for panics and deadlocks, but the results oracle did not
/// compare their results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApproximateMethod {
    pub method: String,
    /// The doc's sentence that says so, or the configuration.
    pub why: analysis::Approximation,
}

impl std::fmt::Display for ApproximateMethod {
    /// `` `len` (its doc says "…") ``.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` ({})", self.method, self.why)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Why a type was not tested, as far as `--fail-on-untested` is concerned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UntestedKind {
    /// covcon could not drive the type (no usable constructor, no method the harness can
    /// call, a harness that cannot use it) or the time budget ran out before its turn. The
    /// user can act (configure, raise the budget), so it fails `--fail-on-untested`. A report
    /// without a kind reads as this one.
    #[default]
    Missed,
    /// The analysis removed every method pair: no two methods can run concurrently (one lock
    /// serialises them all, say). A static verdict, not a failure to test.
    NothingToTest,
    /// Not reachable from outside its crate (not `pub`, or a `pub` type in a private module
    /// that is not re-exported): only its own crate can call it, through its public types.
    /// Testing it directly could report misuse the public API prevents.
    Internal,
    /// A handle another type hands out and no code outside the crate builds: its methods
    /// run in that type's tests, on the handles it returns (the reason names them).
    Handle,
}

impl UntestedKind {
    /// How every report names it, before the reason: "not tested", "nothing to test",
    /// "internal" (an internal type's reason already says it is not reachable from outside).
    pub fn label(self) -> &'static str {
        match self {
            UntestedKind::Missed => "not tested",
            UntestedKind::NothingToTest => "nothing to test",
            UntestedKind::Internal => "internal",
            UntestedKind::Handle => "tested as a handle",
        }
    }

    /// Whether an untested type of this kind fails the run under `--fail-on-untested`.
    pub fn fails_gate(self) -> bool {
        self == UntestedKind::Missed
    }
}

/// A pair of methods: how many tests were aimed at it, and in how many runs it overlapped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairReport {
    pub methods: [String; 2],
    pub group: Group,
    /// Tests the generator wrote for this pair: their two threads start with its methods.
    pub tried: u64,
    /// Runs, of any test of the type, in which a call of each method overlapped in time: a
    /// test aimed at another pair often overlaps this one too, so this can exceed `tried`.
    pub covered: u64,
    /// The static reasons for the group (from the analysis).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// The pair's smallest test (one call of each method, one per thread) run under every
    /// schedule with at most two preemptions, as far as the budget went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explored: Option<oracle::Exploration>,
}

/// The kind of failure a violation showed.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    #[default]
    Panic,
    Deadlock,
    Crash,
    /// The run passed, but with results no sequential order of the same calls gives.
    WrongResult,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Panic => "panic",
            Kind::Deadlock => "deadlock",
            Kind::Crash => "crash",
            Kind::WrongResult => "wrong_result",
        }
    }
}

/// A confirmed thread-safety violation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ViolationReport {
    pub kind: Kind,
    /// The pair of methods whose concurrent run failed.
    pub methods: [String; 2],
    /// The panic message, or which method each thread was in when it deadlocked.
    pub message: String,
    /// `file:line:column` of the panic, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// A ready-to-paste `#[test]` that reproduces the violation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<PathBuf>,
    /// The saved test, for `cargo covcon replay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<PathBuf>,
    pub tests_until_found: u64,
    pub seconds_until_found: f64,
    /// The test that showed it (shrunk, when the oracle found a smaller one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<TestCase>,
    /// The test as first found, when `test` is a shrunk version of it. `message` is the shrunk
    /// test's (re-judged: for a wrong result, its observed and expected results are numbered as
    /// `test`'s calls); `original_message` is this test's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_test: Option<TestCase>,
    /// The message of `original_test`'s run, when the test was shrunk and re-judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_message: Option<String>,
    /// Sequential orders of the same calls run, none of which failed the same way.
    #[serde(default)]
    pub linearizations: u32,
    /// For a panic: an order that panics the same way (message and location) at another call
    /// than the failing one, said in words (`oracle::same_panic_note`). No order fails at the
    /// failing call, yet the panic is not new to sequential runs: an earlier answer of the
    /// concurrent run was likely one no order gives (the deviation the panic oracle cannot
    /// see; `--oracle results` can).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_panic_elsewhere: Option<String>,
    /// `[failed the same way, re-runs made]` when the oracle re-ran the test to confirm it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<[u32; 2]>,
    /// Where the two methods are declared, for annotations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sites: Vec<Site>,
    /// True when `--baseline` already listed it: reported, but it does not fail the run.
    #[serde(default)]
    pub known: bool,
    /// The controlled schedule it ran under (`pct-2, seed 7`), which replays it; `None` when
    /// it was found and re-run free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
}

impl ViolationReport {
    /// Why the violation is believed, one clause each: the sequential orders that did not
    /// fail this way and how often a re-run repeated it.
    pub fn evidence(&self) -> Vec<String> {
        let mut evidence = Vec::new();
        if self.linearizations > 0 {
            evidence.push(format!(
                "none of {} sequential orders of the same calls fails this way",
                self.linearizations
            ));
        }
        if let Some(note) = &self.same_panic_elsewhere {
            evidence.push(format!("but {note}"));
        }
        match (self.confirmed, &self.schedule) {
            (Some([hits, runs]), Some(schedule)) => evidence.push(format!(
                "replayed {hits} of {runs} times under schedule {schedule}"
            )),
            (Some([hits, runs]), None) => {
                evidence.push(format!("repeated in {hits} of {runs} re-runs"))
            }
            (None, _) => {}
        }
        // A worker runs many tests: memory one of them corrupted shows where it is next used,
        // maybe in a later test (thingbuf 0.1.6's `send_timeout` leaves a stack node linked,
        // and a later test that never sends aborted on "malloc(): unaligned tcache chunk").
        if self.kind == Kind::Crash && self.unconfirmed() {
            evidence.push(
                "a crash no re-run repeats may be damage an earlier test of the same worker left: \
                 this test need not be its cause"
                    .to_string(),
            );
        }
        evidence
    }

    /// Seen once and repeated by none of its re-runs: reported in a section of its own, and
    /// failing the gate only with `--strict`.
    pub fn unconfirmed(&self) -> bool {
        matches!(self.confirmed, Some([0, runs]) if runs > 0)
    }
}

/// A method's declaration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Site {
    pub method: String,
    pub file: PathBuf,
    pub line: u32,
}

/// Coverage after some number of tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CoveragePoint {
    pub tests: u64,
    pub seconds: f64,
    /// Pairs seen running concurrently so far.
    pub covered: u64,
}

impl TypeReport {
    /// How its tests read in the terminal and HTML reports: constructors by the type's
    /// builders and free functions.
    pub fn reading(&self) -> generator::display::Reading<'_> {
        generator::display::Reading {
            builders: &self.builders,
            functions: &self.functions,
        }
    }

    /// What the report says of a type that reads a clock covcon does not control, when its
    /// verdicts had to fall back on waiting for real ([`TypeReport::clock_outside`]).
    pub fn clock_outside_note(&self) -> Option<String> {
        let n = self.clock_outside;
        (n > 0).then(|| {
            format!(
                "clock outside the copy: {n} failing run{} explained only by a thread's calls \
                 alone with real pauses (verdicts use paced orders)",
                if n == 1 { " was" } else { "s were" }
            )
        })
    }

    /// What the report says of deadlocks left unreported because a thread held a scope's
    /// guard ([`TypeReport::guard_held_deadlocks`]).
    pub fn guard_held_note(&self) -> Option<String> {
        let n = self.guard_held_deadlocks;
        (n > 0).then(|| {
            format!(
                "{n} deadlock{} with a thread holding a guard of the type's in a scope not \
                 reported: holding a guard while calling into the type may be what its \
                 contract forbids",
                if n == 1 { "" } else { "s" }
            )
        })
    }

    /// The notes the terminal and HTML reports write under the type: a clock outside the
    /// copy, deadlocks left unreported under a held guard, failing runs left unjudged.
    pub fn notes(&self) -> Vec<String> {
        [
            self.clock_outside_note(),
            self.guard_held_note(),
            self.unjudged_note(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// What the report says of failing runs left unjudged for time ([`TypeReport::unjudged`]).
    pub fn unjudged_note(&self) -> Option<String> {
        let n = self.unjudged;
        (n > 0).then(|| {
            format!(
                "{n} failing run{} not judged: the verdict's sequential orders ran out of \
                 time (a larger --time-budget judges {})",
                if n == 1 { "" } else { "s" },
                if n == 1 { "it" } else { "them" }
            )
        })
    }

    /// Pairs worth covering: all but those the analysis removed.
    pub fn pairs_worth(&self) -> usize {
        self.pairs
            .iter()
            .filter(|p| p.group != Group::Removed)
            .count()
    }

    /// Pairs whose smallest test ran under every schedule with at most two preemptions, each
    /// ordered from start to end, without a failure.
    pub fn pairs_fully_explored(&self) -> usize {
        self.pairs
            .iter()
            .filter(|p| {
                p.explored
                    .as_ref()
                    .is_some_and(|e| e.end == oracle::ExplorationEnd::Complete)
            })
            .count()
    }

    /// Pairs worth covering that ran concurrently at least once.
    pub fn pairs_covered(&self) -> usize {
        self.pairs
            .iter()
            .filter(|p| p.group != Group::Removed && p.covered > 0)
            .count()
    }

    /// The kind of untested, when the type was not tested; [`UntestedKind::Missed`] when the
    /// report does not say (it predates the field).
    pub fn untested_kind(&self) -> Option<UntestedKind> {
        self.untested
            .as_ref()
            .map(|_| self.untested_kind.unwrap_or_default())
    }

    pub fn short_name(&self) -> &str {
        self.path.rsplit("::").next().unwrap_or(&self.path)
    }
}

impl Report {
    pub fn new(seed: u64, strategy: &str) -> Report {
        Report {
            format_version: FORMAT_VERSION,
            seed,
            strategy: strategy.to_owned(),
            covcon_version: env!("CARGO_PKG_VERSION").to_owned(),
            ..Report::default()
        }
    }

    pub fn violations(&self) -> impl Iterator<Item = (&TypeReport, &ViolationReport)> {
        self.types
            .iter()
            .flat_map(|t| t.violations.iter().map(move |v| (t, v)))
    }

    /// Violations not in the baseline and confirmed: the ones that fail the run.
    pub fn new_violations(&self) -> usize {
        self.violations()
            .filter(|(_, v)| !v.known && !v.unconfirmed())
            .count()
    }

    /// Violations not in the baseline that no re-run repeated: they fail the run only with
    /// `--strict`.
    pub fn unconfirmed_violations(&self) -> usize {
        self.violations()
            .filter(|(_, v)| !v.known && v.unconfirmed())
            .count()
    }

    /// Types not tested at all, of every kind.
    pub fn untested(&self) -> impl Iterator<Item = &TypeReport> {
        self.types.iter().filter(|t| t.untested.is_some())
    }

    /// Untested types of one kind.
    pub fn untested_of(&self, kind: UntestedKind) -> impl Iterator<Item = &TypeReport> {
        self.types
            .iter()
            .filter(move |t| t.untested_kind() == Some(kind))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises") + "\n"
    }

    pub fn load(path: &Path) -> Result<Report> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read report `{}`", path.display()))?;
        let report: Report = serde_json::from_str(&text)
            .with_context(|| format!("`{}` is not a covcon JSON report", path.display()))?;
        if report.format_version != FORMAT_VERSION {
            anyhow::bail!(
                "`{}` has report format {}, this covcon reads format {FORMAT_VERSION}",
                path.display(),
                report.format_version
            );
        }
        Ok(report)
    }
}

/// Joins the reports of the shards of one run. Shards must not share a type.
pub fn merge(reports: Vec<(PathBuf, Report)>) -> Result<Report, String> {
    let mut iter = reports.into_iter();
    let Some((_, mut merged)) = iter.next() else {
        return Err("nothing to merge".into());
    };
    for (path, report) in iter {
        if report.seed != merged.seed {
            merged.diagnostics.push(format!(
                "`{}` ran with seed {}, not {}; pass the same --seed to every shard to make the run repeatable",
                path.display(),
                report.seed,
                merged.seed
            ));
        }
        if report.strategy != merged.strategy {
            return Err(format!(
                "`{}` used strategy {}, not {}: shards must run with the same arguments",
                path.display(),
                report.strategy,
                merged.strategy
            ));
        }
        for t in report.types {
            if merged.types.iter().any(|m| m.path == t.path) {
                return Err(format!(
                    "type {} appears in more than one report (`{}`): shards must run with the same arguments",
                    t.path,
                    path.display()
                ));
            }
            merged.types.push(t);
        }
        merged.elapsed_s = merged.elapsed_s.max(report.elapsed_s);
        merged.build_s = merged.build_s.max(report.build_s);
        merged.shards.extend(report.shards);
        merged.diagnostics.extend(report.diagnostics);
        merged.oracle = match (merged.oracle, report.oracle) {
            (Some(a), Some(b)) => Some(a.add(&b)),
            (a, b) => a.or(b),
        };
    }
    merged.types.sort_by(|a, b| a.path.cmp(&b.path));
    merged.shards.sort();
    Ok(merged)
}

#[cfg(test)]
pub(crate) mod sample;

#[cfg(test)]
mod tests {
    use super::*;

    fn check(reports: Vec<Report>, expect: &str) {
        let named = reports
            .into_iter()
            .enumerate()
            .map(|(i, r)| (PathBuf::from(format!("shard{i}.json")), r))
            .collect();
        let actual = match merge(named) {
            Ok(r) => format!(
                "types: {} shards: {} oracle tests: {:?} diagnostics: {:?}",
                r.types
                    .iter()
                    .map(|t| t.path.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                r.shards.join(" "),
                r.oracle.map(|o| o.tests),
                r.diagnostics
            ),
            Err(e) => format!("error: {e}"),
        };
        assert_eq!(actual, expect);
    }

    fn shard(seed: u64, k: usize, types: &[&str]) -> Report {
        let mut report = Report::new(seed, "covcon");
        report.shards = vec![format!("{k}/2")];
        report.types = types
            .iter()
            .map(|p| TypeReport {
                path: p.to_string(),
                ..Default::default()
            })
            .collect();
        report.oracle = Some(oracle::RunStats {
            tests: 10 * types.len() as u64,
            ..Default::default()
        });
        report
    }

    #[test]
    fn merging_shards_joins_their_types_in_order_and_sums_their_tests() {
        check(
            vec![shard(1, 1, &["b::B"]), shard(1, 0, &["a::A", "c::C"])],
            "types: a::A b::B c::C shards: 0/2 1/2 oracle tests: Some(30) diagnostics: []",
        );
        let mut older = shard(1, 1, &["b::B"]);
        older.oracle = None;
        check(
            vec![older, shard(1, 0, &["a::A"])],
            "types: a::A b::B shards: 0/2 1/2 oracle tests: Some(10) diagnostics: []",
        );
    }

    #[test]
    fn merging_shards_with_different_seeds_notes_it() {
        check(
            vec![shard(1, 0, &["a::A"]), shard(2, 1, &["b::B"])],
            "types: a::A b::B shards: 0/2 1/2 oracle tests: Some(20) diagnostics: [\"`shard1.json` ran with seed 2, not 1; pass the same --seed to every shard to make the run repeatable\"]",
        );
    }

    #[test]
    fn merging_overlapping_shards_is_an_error() {
        check(
            vec![shard(1, 0, &["a::A"]), shard(1, 0, &["a::A"])],
            "error: type a::A appears in more than one report (`shard1.json`): shards must run with the same arguments",
        );
    }

    /// Keeps `docs/report-json.md` honest: every field the report writes is documented there.
    #[test]
    fn every_json_field_is_documented() {
        let doc = include_str!("../../../docs/report-json.md");
        let json = serde_json::to_value(sample::report()).unwrap();
        let mut keys = Vec::new();
        collect_keys(&json, &mut keys);
        for key in keys {
            assert!(
                doc.contains(&format!("`{key}`")),
                "`{key}` is not in docs/report-json.md"
            );
        }
    }

    fn collect_keys(value: &serde_json::Value, keys: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    // The test case is the generator's type, documented as a whole.
                    if k != "test" {
                        keys.push(k.clone());
                        collect_keys(v, keys);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| collect_keys(v, keys)),
            _ => {}
        }
    }

    #[test]
    fn the_sample_report_round_trips_through_json() {
        let report = sample::report();
        let back: Report = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(back, report);
    }

    mod untested_kinds {
        use super::*;

        /// Reads one type from its JSON fields and answers its kind of untested.
        fn check(fields: &str, expect: Option<UntestedKind>) {
            let json = format!(
                r#"{{"path": "a::A", "tests_run": 0, "pairs": [], "violations": [], "skipped": []{fields}}}"#
            );
            let t: TypeReport = serde_json::from_str(&json).unwrap();
            assert_eq!(t.untested_kind(), expect, "{json}");
            let back: TypeReport =
                serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
            assert_eq!(back, t, "{json}");
        }

        #[test]
        fn each_kind_reads_back_from_its_snake_case_name() {
            check(
                r#", "untested": "why", "untested_kind": "missed""#,
                Some(UntestedKind::Missed),
            );
            check(
                r#", "untested": "why", "untested_kind": "nothing_to_test""#,
                Some(UntestedKind::NothingToTest),
            );
            check(
                r#", "untested": "why", "untested_kind": "internal""#,
                Some(UntestedKind::Internal),
            );
        }

        #[test]
        fn an_older_report_without_the_kind_reads_as_missed() {
            check(r#", "untested": "why""#, Some(UntestedKind::Missed));
        }

        #[test]
        fn a_tested_type_has_no_kind() {
            check("", None);
        }

        #[test]
        fn the_kind_is_written_only_for_untested_types() {
            let json = sample::report().to_json();
            assert_eq!(json.matches("\"untested_kind\"").count(), 3, "{json}");
            assert!(
                json.contains("\"untested_kind\": \"nothing_to_test\""),
                "{json}"
            );
        }
    }
}
