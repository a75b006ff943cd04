//! Recording: a violation not seen before is confirmed, shrunk and written to
//! `<out>/violations/N.json` (the test case as a [`SavedTest`], which `cargo covcon replay`
//! runs again) and `N.rs` (a standalone reproducer, `crate::reproducer`); one already known
//! gets the files and confirmation of the first. The files, their numbering and the
//! violations written are [`ViolationFiles`]'s.

use super::confirm::unconfirmed;
use super::{lock, OracleExecutor, Violation, ViolationKind};
use crate::config::{OracleConfig, OracleError};
use crate::harness::PreparedType;
use crate::reproducer::{render_reproducer_seeking, render_results_reproducer, Sought};
use crate::results::{allowed_outcomes, AllowedOutcomes, SequentialOutcomes};
use crate::saved::{SavedOracle, SavedTest};
use crate::verdict::Passes;
use analysis::{Model, TypeModel};
use generator::{Executor, TestCase};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

impl OracleExecutor {
    /// Confirms, shrinks and writes a violation not seen before; one already known gets the
    /// files and confirmation of the first. A wrong result the confirmation runs explain away
    /// is dropped. A known violation no re-run repeated is tried again when it shows again
    /// (up to [`RECONFIRMATIONS`] times): this sighting's test, under a schedule of its own,
    /// may repeat where the first did not; then it takes the first's files.
    ///
    /// A violation judged at full speed only (`passes`, [`Passes::FullSpeed`]) is judged with
    /// every pass before it is written or returned: the shrunk test when shrinking kept one
    /// (shrinking judges it so), else the test itself; one a slower pass explains is dropped.
    pub(super) fn record(
        &self,
        mut violation: Violation,
        outcomes: &mut SequentialOutcomes,
        passes: Passes,
    ) -> Option<Violation> {
        let key = self.violation_key(&violation);
        // The files of an unconfirmed violation this sighting tries to confirm.
        let mut again = None;
        // A wrong result's check has no passes.
        let passes = match violation.kind {
            ViolationKind::WrongResult => Passes::All,
            _ => passes,
        };
        // Judged at full speed only, and not judged in full yet; a sighting of a known
        // violation is judged in full at once.
        let mut provisional = passes == Passes::FullSpeed;
        if provisional && lock(&self.files.known).contains_key(&key) {
            if !self.holds_in_full(&mut violation) {
                return None;
            }
            provisional = false;
        }
        if let Some(recorded) = lock(&self.files.known).get_mut(&key) {
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
            if let Some(recorded) = lock(&self.files.known).get_mut(&key) {
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
            self.shrink_violation(&mut violation, config, &key, ordered, passes);
        }
        if provisional && violation.shrunk.is_none() && !self.holds_in_full(&mut violation) {
            return None;
        }
        let allowed = self.allowed_for(&violation, outcomes);
        let mut known = lock(&self.files.known);
        if let Some(recorded) = known.get(&key) {
            // Another pool thread recorded the same bug meanwhile (or confirmed it, when
            // this sighting was to confirm it).
            if again.is_none() || !unconfirmed(recorded.confirmed) {
                recorded.fill(&mut violation);
                return Some(violation);
            }
        }
        let recorded = self
            .files
            .write(&violation, allowed.as_ref(), again, &self.config);
        recorded.fill(&mut violation);
        known.insert(key, recorded);
        Some(violation)
    }

    /// Whether every pass of the verdict still finds `violation` (judged at full speed only)
    /// a violation with the same key; if so, it takes that verdict's count of sequential runs.
    fn holds_in_full(&self, violation: &mut Violation) -> bool {
        match self.judged_in_full(violation.clone()) {
            Some(found) => {
                violation.linearizations = found.linearizations;
                violation.same_panic_at = found.same_panic_at;
                true
            }
            None => false,
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
}

/// The violations a campaign writes: the directory their files go to, the number the next
/// one takes, the ones already confirmed and written (by key), and what their reproducers are
/// rendered from.
pub(super) struct ViolationFiles {
    /// `<out>/violations`.
    dir: PathBuf,
    next_number: AtomicU32,
    /// Violations already confirmed and written, by key.
    known: Mutex<HashMap<String, Recorded>>,
    /// The model's types, by path.
    types: HashMap<String, TypeModel>,
    /// How the harness instantiated each type (empty for a stand-in worker).
    pub(super) prepared: Vec<PreparedType>,
}

impl ViolationFiles {
    /// Forgets the violations recorded: the next sighting of each is a first one (its files
    /// numbered on).
    pub(super) fn forget_known(&mut self) {
        self.known
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// The files in `dir`, made if missing, numbered on from the highest already there.
    pub(super) fn open(dir: PathBuf, model: &Model) -> Result<ViolationFiles, OracleError> {
        std::fs::create_dir_all(&dir)
            .map_err(|e| OracleError::io(format!("creating {}", dir.display()), e))?;
        let next_number = AtomicU32::new(highest_number(&dir) + 1);
        Ok(ViolationFiles {
            dir,
            next_number,
            known: Mutex::new(HashMap::new()),
            types: model
                .types
                .iter()
                .map(|t| (t.path.clone(), t.clone()))
                .collect(),
            prepared: Vec::new(),
        })
    }

    /// Writes a violation's test (as JSON) and reproducer: to `N.json` and `N.rs` at the next
    /// free number, or to `paths` (an earlier, unconfirmed sighting's files, replaced). A write
    /// failure is reported in the paths' place (the campaign goes on; the violation is still
    /// returned).
    pub(super) fn write(
        &self,
        violation: &Violation,
        allowed: Option<&AllowedOutcomes>,
        paths: Option<(PathBuf, PathBuf)>,
        config: &OracleConfig,
    ) -> Recorded {
        let (json, reproducer) = paths.unwrap_or_else(|| {
            let number = self.next_number.fetch_add(1, Ordering::Relaxed);
            (
                self.dir.join(format!("{number}.json")),
                self.dir.join(format!("{number}.rs")),
            )
        });
        let test = violation.shrunk.as_ref().unwrap_or(&violation.test);
        let mut harness_types: Vec<String> = self.types.keys().cloned().collect();
        harness_types.sort();
        let saved = SavedTest {
            test: test.clone(),
            workspace_root: Some(config.workspace_root.clone()),
            harness_types,
            features: SavedTest::feature_args(&config.cargo_args),
            oracle: config.results.is_some().then_some(SavedOracle::Results),
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
                    None => {
                        let sought = match violation.kind {
                            ViolationKind::Panic => Sought::Panic(&violation.message),
                            ViolationKind::Deadlock => Sought::Deadlock,
                            ViolationKind::Crash | ViolationKind::WrongResult => Sought::Any,
                        };
                        render_reproducer_seeking(ty, test, prepared, &headline, sought)
                    }
                }
            }
            None => format!(
                "// covcon: type `{}` is not in the model; the test case is in the .json file.\n",
                violation.type_path
            ),
        }
    }
}

/// Times a violation no re-run repeated is judged again when the campaign meets it again
/// ([`OracleExecutor::record`]).
const RECONFIRMATIONS: u32 = 3;

/// Files and confirmation of a violation already written.
#[derive(Debug, Clone)]
pub(super) struct Recorded {
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
