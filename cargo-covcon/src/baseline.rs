//! The CI gate's memory: violations already known, keyed by type, method pair and kind.
//!
//! `--save-baseline FILE` writes the violations of a run; `--baseline FILE` marks the
//! violations it lists as known, so only new ones set exit code 2. Messages and test ids are
//! not part of the key: they change from run to run while the bug stays the same.

use crate::exit_code::{ExitCode, OrExit};
use crate::report::{Kind, Report};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub format_version: u32,
    pub violations: Vec<Known>,
}

/// One known violation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Known {
    #[serde(rename = "type")]
    pub type_path: String,
    /// Sorted, so `a | b` and `b | a` are the same pair.
    pub methods: [String; 2],
    pub kind: Kind,
}

impl Known {
    fn new(type_path: &str, methods: &[String; 2], kind: Kind) -> Known {
        let mut methods = methods.clone();
        methods.sort();
        Known {
            type_path: type_path.to_owned(),
            methods,
            kind,
        }
    }
}

impl Baseline {
    /// The violations of a report, sorted and without duplicates.
    pub fn of(report: &Report) -> Baseline {
        let mut violations: Vec<Known> = report
            .violations()
            .map(|(t, v)| Known::new(&t.path, &v.methods, v.kind))
            .collect();
        violations.sort();
        violations.dedup();
        Baseline {
            format_version: FORMAT_VERSION,
            violations,
        }
    }

    /// Marks the report's violations that this baseline lists as known.
    pub fn apply(&self, report: &mut Report) {
        let known: Vec<Known> = self
            .violations
            .iter()
            .map(|k| Known::new(&k.type_path, &k.methods, k.kind))
            .collect();
        for t in &mut report.types {
            for v in &mut t.violations {
                v.known = known.contains(&Known::new(&t.path, &v.methods, v.kind));
            }
        }
    }

    /// The campaign's known violation keys (`oracle::violation_key`): a violation the
    /// baseline lists does not end its type's search.
    pub fn keys(&self) -> BTreeSet<String> {
        self.violations
            .iter()
            .map(|k| oracle::violation_key(&k.type_path, &k.methods, k.kind.as_str()))
            .collect()
    }

    pub fn load(path: &Path) -> Result<Baseline> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read baseline `{}`", path.display()))?;
        let baseline: Baseline = serde_json::from_str(&text)
            .with_context(|| format!("`{}` is not a covcon baseline", path.display()))?;
        Ok(baseline)
    }

    /// The baseline at `path` when one is given; a file that cannot be read or is not a
    /// baseline is a usage error.
    pub fn load_given(path: Option<&Path>) -> Result<Option<Baseline>> {
        path.map(|path| Baseline::load(path).or_exit(ExitCode::Usage))
            .transpose()
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)? + "\n";
        std::fs::write(path, text)
            .with_context(|| format!("cannot write baseline `{}`", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    fn check(baseline: serde_json::Value, expect_new: usize) {
        let baseline: Baseline = serde_json::from_value(baseline).unwrap();
        let mut report = sample::report();
        baseline.apply(&mut report);
        assert_eq!(report.new_violations(), expect_new);
    }

    #[test]
    fn a_run_checked_against_its_own_baseline_has_no_new_violations() {
        let mut report = sample::report();
        Baseline::of(&report).apply(&mut report);
        assert_eq!(report.new_violations(), 0);
    }

    #[test]
    fn the_pair_matches_in_either_order() {
        check(
            serde_json::json!({"format_version": 1, "violations": [
                {"type": "locks::Pair", "methods": ["ba", "ab"], "kind": "deadlock"}]}),
            1,
        );
    }

    #[test]
    fn a_different_kind_on_the_same_pair_is_new() {
        check(
            serde_json::json!({"format_version": 1, "violations": [
                {"type": "bank::Account", "methods": ["deposit", "deposit"], "kind": "deadlock"}]}),
            2,
        );
    }

    #[test]
    fn the_campaign_knows_each_entry_by_the_executors_key_in_either_order() {
        let baseline: Baseline = serde_json::from_value(serde_json::json!({
            "format_version": 1, "violations": [
                {"type": "locks::Pair", "methods": ["ba", "ab"], "kind": "deadlock"},
                {"type": "locks::Pair", "methods": ["ab", "ba"], "kind": "wrong_result"}]}))
        .unwrap();
        let pair = ["ab".to_string(), "ba".to_string()];
        let expect: BTreeSet<String> = [
            oracle::violation_key("locks::Pair", &pair, "deadlock"),
            oracle::violation_key("locks::Pair", &pair, "wrong_result"),
        ]
        .into();
        assert_eq!(baseline.keys(), expect);
        assert!(
            expect.contains("locks::Pair::{ab, ba} deadlock"),
            "{expect:?}"
        );
    }

    #[test]
    fn the_baseline_file_is_small_and_sorted() {
        let text = serde_json::to_string(&Baseline::of(&sample::report())).unwrap();
        assert_eq!(
            text,
            r#"{"format_version":1,"violations":[{"type":"bank::Account","methods":["deposit","deposit"],"kind":"panic"},{"type":"locks::Pair","methods":["ab","ba"],"kind":"deadlock"}]}"#
        );
    }
}
