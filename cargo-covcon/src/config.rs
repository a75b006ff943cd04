//! Configuration from `[workspace.metadata.covcon]` and `[package.metadata.covcon]`.
//!
//! cargo metadata hands both tables over as JSON, so no TOML is parsed here. Unknown keys are
//! a configuration error (exit 1) rather than silently ignored: a typo in a skip list would
//! otherwise test what the user meant to skip. Precedence is command line, then package
//! table, then workspace table, then defaults; lists from all three are joined.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One `metadata.covcon` table. Every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Campaign time budget: a number of seconds or `"90s"`, `"2m"`, `"1h"`.
    #[serde(alias = "time-budget")]
    pub time_budget: Option<Budget>,
    pub strategy: Option<String>,
    pub jobs: Option<usize>,
    pub seed: Option<u64>,
    #[serde(alias = "keep-going")]
    pub keep_going: Option<bool>,
    /// `panic` or `results`.
    pub oracle: Option<crate::cli::OracleKind>,
    /// How long one test may run before it counts as a deadlock.
    #[serde(alias = "test-timeout")]
    pub test_timeout: Option<Budget>,
    /// Tests per type at most.
    #[serde(alias = "max-tests")]
    pub max_tests: Option<u64>,
    /// Report formats: `terminal`, `json`, `html`, `junit`.
    pub reports: Vec<String>,
    pub out: Option<PathBuf>,
    #[serde(alias = "fail-on-untested")]
    pub fail_on_untested: Option<bool>,
    /// `free`, `controlled` or `mixed`.
    pub schedule: Option<String>,
    /// Unconfirmed violations fail the run too.
    pub strict: Option<bool>,
    /// Only test types matching these patterns.
    pub types: Vec<String>,
    /// Never test types matching these patterns.
    #[serde(alias = "skip-types")]
    pub skip_types: Vec<String>,
    /// Only call methods matching these patterns (`method` or `Type::method`).
    pub methods: Vec<String>,
    /// Never call methods matching these patterns.
    #[serde(alias = "skip-methods")]
    pub skip_methods: Vec<String>,
    /// Methods (patterns as `methods`) whose answers are approximate by contract although
    /// their docs do not say so: still called, but the results oracle does not compare their
    /// results.
    pub approximate: Vec<String>,
    /// Methods whose answers are exact although their docs read as approximate: the results
    /// oracle compares them. Wins over `approximate`.
    pub exact: Vec<String>,
    /// Type pattern → name of the constructor that builds instances.
    pub constructors: BTreeMap<String, String>,
    /// Type pattern → the concrete types for its generic parameters, in order.
    pub instantiate: BTreeMap<String, Vec<String>>,
    /// Argument value pools.
    pub values: ValuePools,
}

/// Values arguments are drawn from; empty means the generator's defaults.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ValuePools {
    pub int: Vec<i64>,
    pub string: Vec<String>,
    pub char: Vec<char>,
    pub float: Vec<f64>,
}

/// A time budget as written in the config: seconds, or a string with a unit.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Budget {
    Seconds(u64),
    Text(String),
}

impl Budget {
    pub fn as_text(&self) -> String {
        match self {
            Budget::Seconds(s) => s.to_string(),
            Budget::Text(t) => t.clone(),
        }
    }
}

/// Reads the `covcon` key of a metadata table (`Null` or no key gives the defaults).
pub fn from_metadata(metadata: &serde_json::Value, origin: &str) -> Result<Config, String> {
    match metadata.get("covcon") {
        None | Some(serde_json::Value::Null) => Ok(Config::default()),
        Some(table) => serde_json::from_value(table.clone())
            .map_err(|e| format!("invalid [{origin}.metadata.covcon]: {e}")),
    }
}

impl Config {
    /// `self` (the more specific table) over `base`: scalars from `self` when set, lists
    /// joined with `self`'s first.
    pub fn over(&self, base: &Config) -> Config {
        fn join<T: Clone>(a: &[T], b: &[T]) -> Vec<T> {
            a.iter().chain(b).cloned().collect()
        }
        fn join_map<V: Clone>(
            a: &BTreeMap<String, V>,
            b: &BTreeMap<String, V>,
        ) -> BTreeMap<String, V> {
            let mut out = b.clone();
            out.extend(a.iter().map(|(k, v)| (k.clone(), v.clone())));
            out
        }
        Config {
            time_budget: self
                .time_budget
                .clone()
                .or_else(|| base.time_budget.clone()),
            strategy: self.strategy.clone().or_else(|| base.strategy.clone()),
            jobs: self.jobs.or(base.jobs),
            seed: self.seed.or(base.seed),
            keep_going: self.keep_going.or(base.keep_going),
            oracle: self.oracle.or(base.oracle),
            max_tests: self.max_tests.or(base.max_tests),
            test_timeout: self
                .test_timeout
                .clone()
                .or_else(|| base.test_timeout.clone()),
            reports: if self.reports.is_empty() {
                base.reports.clone()
            } else {
                self.reports.clone()
            },
            out: self.out.clone().or_else(|| base.out.clone()),
            fail_on_untested: self.fail_on_untested.or(base.fail_on_untested),
            schedule: self.schedule.clone().or_else(|| base.schedule.clone()),
            strict: self.strict.or(base.strict),
            types: join(&self.types, &base.types),
            skip_types: join(&self.skip_types, &base.skip_types),
            methods: join(&self.methods, &base.methods),
            skip_methods: join(&self.skip_methods, &base.skip_methods),
            approximate: join(&self.approximate, &base.approximate),
            exact: join(&self.exact, &base.exact),
            constructors: join_map(&self.constructors, &base.constructors),
            instantiate: join_map(&self.instantiate, &base.instantiate),
            values: ValuePools {
                int: if self.values.int.is_empty() {
                    base.values.int.clone()
                } else {
                    self.values.int.clone()
                },
                string: if self.values.string.is_empty() {
                    base.values.string.clone()
                } else {
                    self.values.string.clone()
                },
                char: if self.values.char.is_empty() {
                    base.values.char.clone()
                } else {
                    self.values.char.clone()
                },
                float: if self.values.float.is_empty() {
                    base.values.float.clone()
                } else {
                    self.values.float.clone()
                },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(metadata: serde_json::Value, expect: &str) {
        let actual = match from_metadata(&metadata, "workspace") {
            Ok(config) => format!("{config:?}"),
            Err(e) => e,
        };
        assert!(
            actual.contains(expect),
            "{actual}\n does not contain\n{expect}"
        );
    }

    #[test]
    fn no_table_gives_the_defaults() {
        assert_eq!(
            from_metadata(&serde_json::Value::Null, "workspace"),
            Ok(Config::default())
        );
        check(json!({"other-tool": 1}), "time_budget: None");
    }

    #[test]
    fn a_budget_may_be_seconds_or_text() {
        check(json!({"covcon": {"time_budget": 90}}), "Seconds(90)");
        check(json!({"covcon": {"time-budget": "2m"}}), "Text(\"2m\")");
    }

    #[test]
    fn an_unknown_key_is_an_error_that_names_the_table() {
        check(
            json!({"covcon": {"skip_method": ["a"]}}),
            "invalid [workspace.metadata.covcon]: unknown field `skip_method`",
        );
    }

    #[test]
    fn the_package_table_wins_for_scalars_and_joins_lists() {
        let ws = from_metadata(
            &json!({"covcon": {"jobs": 1, "strategy": "bc", "skip_methods": ["a"]}}),
            "workspace",
        )
        .unwrap();
        let pkg = from_metadata(
            &json!({"covcon": {"jobs": 4, "skip_methods": ["b"]}}),
            "package",
        )
        .unwrap();
        let merged = pkg.over(&ws);
        assert_eq!(merged.jobs, Some(4));
        assert_eq!(merged.strategy.as_deref(), Some("bc"));
        assert_eq!(merged.skip_methods, ["b", "a"]);
    }

    #[test]
    fn approximate_and_exact_lists_join_like_the_other_method_lists() {
        let ws = from_metadata(
            &json!({"covcon": {"approximate": ["len"], "exact": ["Set::hint"]}}),
            "workspace",
        )
        .unwrap();
        let pkg = from_metadata(
            &json!({"covcon": {"approximate": ["Map::size"]}}),
            "package",
        )
        .unwrap();
        let merged = pkg.over(&ws);
        assert_eq!(merged.approximate, ["Map::size", "len"]);
        assert_eq!(merged.exact, ["Set::hint"]);
    }
}
