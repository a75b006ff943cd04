//! A violation's test as it is saved (`target/covcon/violations/N.json`) and read back by
//! `cargo covcon replay`: the test case, and what a replay needs to build the same harness.

use generator::TestCase;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use std::path::PathBuf;

/// A saved violation's test. Files written before a field existed still read: each is
/// optional, and the test case's own fields sit at the top level (`flatten`), as they always
/// have. Read through a `serde_json::Value` ([`SavedTest::deserialize`]): serde's `flatten`
/// cannot read an integer argument (`Value::Int` is an `i128`) back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SavedTest {
    #[serde(flatten)]
    pub test: TestCase,
    /// The workspace the test ran in, so a replay works from any directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_root: Option<PathBuf>,
    /// The types the harness instrumented: a replay instruments the same, so a controlled
    /// schedule meets the same schedule points.
    #[serde(default)]
    pub harness_types: Vec<String>,
    /// The feature selection the harness was built with, as `cargo build` arguments
    /// (`--features x`, `--all-features`, `--no-default-features`): a type behind a feature
    /// exists only with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// The oracle that judged it, when not the panic oracle: a wrong result replays as one
    /// only under the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracle: Option<SavedOracle>,
}

/// The fields of a [`SavedTest`] beside its test case's, read on their own.
#[derive(Deserialize)]
struct Beside {
    #[serde(default)]
    workspace_root: Option<PathBuf>,
    #[serde(default)]
    harness_types: Vec<String>,
    #[serde(default)]
    features: Vec<String>,
    #[serde(default)]
    oracle: Option<SavedOracle>,
}

impl<'de> Deserialize<'de> for SavedTest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SavedTest, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        let test = TestCase::deserialize(&value).map_err(D::Error::custom)?;
        let beside = Beside::deserialize(&value).map_err(D::Error::custom)?;
        Ok(SavedTest {
            test,
            workspace_root: beside.workspace_root,
            harness_types: beside.harness_types,
            features: beside.features,
            oracle: beside.oracle,
        })
    }
}

/// The oracle a saved test was judged by, when it is not the panic oracle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SavedOracle {
    Results,
}

impl SavedTest {
    /// The file's text: pretty JSON, keys in the order a `serde_json::Value` keeps them (as
    /// files before this struct were written).
    pub fn to_json(&self) -> String {
        let value = serde_json::to_value(self).expect("test cases always serialise");
        serde_json::to_string_pretty(&value).expect("JSON values serialise")
    }

    pub fn from_json(text: &str) -> serde_json::Result<SavedTest> {
        serde_json::from_str(text)
    }

    /// The `cargo build` feature arguments of `cargo_args` (what [`SavedTest::features`] keeps).
    pub fn feature_args(cargo_args: &[String]) -> Vec<String> {
        let mut kept = Vec::new();
        for (i, a) in cargo_args.iter().enumerate() {
            match a.as_str() {
                "--features" => kept.extend([a].into_iter().chain(cargo_args.get(i + 1)).cloned()),
                "--all-features" | "--no-default-features" => kept.push(a.clone()),
                _ => {}
            }
        }
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file as `cargo covcon` wrote it before the fields it now has (no `workspace_root`,
    /// `harness_types`, `features` or `oracle`), and one with all of them.
    #[test]
    fn old_and_new_files_read() {
        // An integer argument among them: `flatten` alone could not read it back.
        let old = r#"{"id": 3, "type_path": "k::Counter", "pair": ["inc", "get"],
            "instances": [{"method": "new", "args": []}], "prefix": [],
            "threads": [[{"method": "inc", "args": [{"int": 5}]}], [{"method": "get", "args": []}]],
            "noise_seed": 7}"#;
        let saved = SavedTest::from_json(old).unwrap();
        assert_eq!(saved.test.type_path, "k::Counter");
        assert_eq!(saved.test.threads[0][0].args, [generator::Value::Int(5)]);
        assert_eq!(saved.workspace_root, None);
        assert!(saved.harness_types.is_empty() && saved.features.is_empty());
        assert_eq!(saved.oracle, None);

        let new = SavedTest {
            workspace_root: Some("/w".into()),
            harness_types: vec!["k::Counter".into()],
            features: SavedTest::feature_args(&[
                "--locked".into(),
                "--features".into(),
                "x".into(),
                "--no-default-features".into(),
            ]),
            oracle: Some(SavedOracle::Results),
            ..saved
        };
        assert_eq!(new.features, ["--features", "x", "--no-default-features"]);
        let text = new.to_json();
        assert!(text.contains(r#""oracle": "results""#), "{text}");
        assert_eq!(SavedTest::from_json(&text).unwrap(), new);
    }
}
