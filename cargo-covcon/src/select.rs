//! Which types and methods a run tests: `--type` patterns, the configuration's include and
//! skip lists, constructor choices, generic instantiations and which methods' answers are
//! approximate, applied to the analysis's [`Model`]. Pure: data in, data out.
//!
//! A type pattern with `*` is a glob over the type path (or its bare name); without one it
//! names a type by bare name, full path or path suffix (`Cache`, `krate::cache::Cache`,
//! `cache::Cache`). Method patterns are `method`, `Type::method` or `krate::Type::method`,
//! globs allowed.

use crate::config::{Config, ValuePools};
use crate::workspace::Workspace;
use analysis::{Approximation, Model, Reason, TypeModel};
use std::collections::BTreeMap;

/// What a run will test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// Types to test, with skipped methods marked unsupported and their pairs removed.
    pub types: Vec<TypeModel>,
    /// Types that matched but cannot be tested, with why.
    pub untested: Vec<(TypeModel, Reason)>,
    /// Settings per type path.
    pub settings: BTreeMap<String, TypeSettings>,
    /// Configuration problems (an instantiation that does not parse, …), as warnings.
    pub warnings: Vec<String>,
}

/// Per-type settings from the configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TypeSettings {
    pub constructor: Option<String>,
    /// Concrete types for the type parameters, in declaration order (for the harness).
    pub instantiate: Option<Vec<String>>,
    pub values: ValuePools,
    /// Methods left out by configuration.
    pub skipped_methods: Vec<String>,
}

/// Applies the command line's type patterns and each package's configuration to `model`.
pub fn select(model: &Model, workspace: &Workspace, cli_types: &[String]) -> Selection {
    let mut selection = Selection::default();
    for t in &model.types {
        let config = workspace.config_for(&t.package);
        if !wanted(t, cli_types, &config) {
            continue;
        }
        let (t, settings, warnings) = configure(t, &config);
        selection.warnings.extend(warnings);
        if let Some(why) = why_not_runnable(&t) {
            selection.untested.push((t, why));
            continue;
        }
        selection.settings.insert(t.path.clone(), settings);
        selection.types.push(t);
    }
    selection
}

/// Why a campaign cannot run a type: the reason it is not supported (`unknown` when it has
/// none), or that none of its methods can be called; `None` when a campaign can run it. The
/// one test of a runnable type, for the analysis's model (here) and the harness's
/// (`session::Prepared`).
pub fn why_not_runnable(t: &TypeModel) -> Option<Reason> {
    if let Some(why) = &t.reason {
        return Some(why.clone());
    }
    if !t.methods.iter().any(|m| m.supported()) {
        return Some(Reason::NoCallableMethod);
    }
    None
}

/// Whether a type is selected by the command line (when it gives patterns) and the
/// configuration's `types`/`skip_types`.
pub fn wanted(t: &TypeModel, cli_types: &[String], config: &Config) -> bool {
    let include = if cli_types.is_empty() {
        &config.types
    } else {
        cli_types
    };
    let included = include.is_empty() || include.iter().any(|p| type_matches(p, &t.path));
    included && !config.skip_types.iter().any(|p| type_matches(p, &t.path))
}

/// Applies the configuration's `approximate` and `exact` lists to the type's methods: a
/// method `exact` names compares its results even if its doc calls its answer approximate;
/// one `approximate` names (and `exact` does not) does not compare them, doc or no doc.
pub fn configure_answers(t: &mut TypeModel, config: &Config) {
    let named = |patterns: &[String], method: &str| {
        patterns.iter().any(|p| method_matches(p, &t.path, method))
    };
    let answers: Vec<Option<Approximation>> = t
        .methods
        .iter()
        .map(|m| {
            if named(&config.exact, &m.name) {
                None
            } else if named(&config.approximate, &m.name) && m.approximate.is_none() {
                Some(Approximation::Configured)
            } else {
                m.approximate.clone()
            }
        })
        .collect();
    t.set_answers(answers);
}

fn configure(t: &TypeModel, config: &Config) -> (TypeModel, TypeSettings, Vec<String>) {
    let mut t = t.clone();
    configure_answers(&mut t, config);
    let mut settings = TypeSettings {
        values: config.values.clone(),
        ..TypeSettings::default()
    };
    let mut warnings = Vec::new();
    let callable: Vec<String> = t
        .methods
        .iter()
        .filter(|m| m.supported())
        .map(|m| m.name.clone())
        .collect();
    for name in callable {
        let included = config.methods.is_empty()
            || config
                .methods
                .iter()
                .any(|p| method_matches(p, &t.path, &name));
        let skipped = config
            .skip_methods
            .iter()
            .any(|p| method_matches(p, &t.path, &name));
        if !included || skipped {
            t.untest_method(&name, Reason::Configured);
            settings.skipped_methods.push(name);
        }
    }
    if let Some((_, name)) = config
        .constructors
        .iter()
        .find(|(p, _)| type_matches(p, &t.path))
    {
        if t.constructors.iter().any(|c| &c.name == name) {
            settings.constructor = Some(name.clone());
        } else {
            let known: Vec<&str> = t.constructors.iter().map(|c| c.name.as_str()).collect();
            warnings.push(format!(
                "{}: configured constructor `{name}` not found (constructors: {})",
                t.path,
                known.join(", ")
            ));
        }
    }
    // `"Type::method" = [..]`: the turbofish of a generic method.
    for (pattern, types) in &config.instantiate {
        if type_matches(pattern, &t.path) {
            continue;
        }
        let instantiable: Vec<String> = t
            .methods
            .iter()
            .filter(|m| method_matches(pattern, &t.path, &m.name))
            .filter(|m| {
                let only_generics_missing = matches!(&m.reason,
                    Some(Reason::Signature { problems }) if problems.iter().all(|p| matches!(p, analysis::Problem::Generic { .. })));
                m.supported() || only_generics_missing
            })
            .map(|m| m.name.clone())
            .collect();
        for name in instantiable {
            t.test_method_with(&name, types.clone());
        }
    }
    if let Some((_, types)) = config
        .instantiate
        .iter()
        .find(|(p, _)| type_matches(p, &t.path))
    {
        let params = t
            .generics
            .iter()
            .filter(|g| g.kind == analysis::GenericKind::Type)
            .count();
        if params == types.len() {
            settings.instantiate = Some(types.clone());
        } else {
            warnings.push(format!(
                "{}: `instantiate` gives {} type(s) for {params} type parameter(s); ignored",
                t.path,
                types.len()
            ));
        }
    }
    (t, settings, warnings)
}

/// Whether a type pattern selects the type at `path`.
pub fn type_matches(pattern: &str, path: &str) -> bool {
    let name = path.rsplit("::").next().unwrap_or(path);
    if pattern.contains('*') {
        return glob(pattern, path) || glob(pattern, name);
    }
    path == pattern || name == pattern || path.ends_with(&format!("::{pattern}"))
}

/// Whether a method pattern selects `method` of the type at `path`.
pub fn method_matches(pattern: &str, path: &str, method: &str) -> bool {
    let name = path.rsplit("::").next().unwrap_or(path);
    let full = format!("{path}::{method}");
    let short = format!("{name}::{method}");
    if pattern.contains('*') {
        return glob(pattern, method) || glob(pattern, &short) || glob(pattern, &full);
    }
    pattern == method
        || pattern == short
        || full.ends_with(&format!("::{pattern}"))
        || pattern == full
}

/// `*` matches any run of characters, `::` included.
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // matches[j]: pattern prefix so far matches text prefix of length j.
    let mut matches = vec![false; t.len() + 1];
    matches[0] = true;
    for &pc in &p {
        if pc == '*' {
            for j in 1..=t.len() {
                matches[j] = matches[j] || matches[j - 1];
            }
        } else {
            for j in (1..=t.len()).rev() {
                matches[j] = matches[j - 1] && t[j - 1] == pc;
            }
            matches[0] = false;
        }
    }
    matches[t.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(pattern: &str, path: &str, expect: bool) {
        assert_eq!(type_matches(pattern, path), expect, "{pattern} vs {path}");
    }

    #[test]
    fn a_bare_name_selects_the_type_of_that_name_only() {
        check("Cache", "krate::cache::Cache", true);
        check("Cache", "krate::cache::CacheBuilder", false);
        check("cache::Cache", "krate::cache::Cache", true);
        check("krate::cache::Cache", "krate::cache::Cache", true);
    }

    #[test]
    fn a_glob_matches_the_path_or_the_name() {
        check("Cache*", "krate::cache::CacheBuilder", true);
        check("krate::*", "krate::cache::Cache", true);
        check("*::Legacy*", "krate::Legacy", true);
        check("other::*", "krate::cache::Cache", false);
    }

    #[test]
    fn method_patterns_take_a_type_prefix() {
        assert!(method_matches("clear", "k::Cache", "clear"));
        assert!(method_matches("Cache::clear", "k::Cache", "clear"));
        assert!(method_matches("k::Cache::clear", "k::Cache", "clear"));
        assert!(!method_matches("Other::clear", "k::Cache", "clear"));
        assert!(method_matches("Cache::get_*", "k::Cache", "get_or_insert"));
    }
}

#[cfg(test)]
mod selection_tests {
    use super::*;
    use analysis::{Constructor, Group, Method, Pair};
    use std::collections::BTreeMap;

    fn method(name: &str) -> Method {
        Method {
            name: name.into(),
            ..Method::default()
        }
    }

    /// A method whose doc says its answer may be stale.
    fn documented_approximate(name: &str) -> Method {
        Method {
            approximate: Some(Approximation::Doc {
                line: "It may be stale.".into(),
            }),
            ..method(name)
        }
    }

    fn model() -> Model {
        let ty = |path: &str, package: &str| TypeModel {
            path: path.into(),
            package: package.into(),
            name: path.rsplit("::").next().unwrap().into(),
            constructors: vec![Constructor {
                name: "new".into(),
                ..Constructor::default()
            }],
            methods: vec![
                method("get"),
                method("put"),
                method("clear"),
                documented_approximate("len"),
            ],
            pairs: vec![
                Pair {
                    methods: ["get".into(), "put".into()],
                    group: Group::High,
                    reasons: vec![],
                },
                Pair {
                    methods: ["put".into(), "clear".into()],
                    group: Group::Low,
                    reasons: vec![],
                },
            ],
            ..TypeModel::default()
        };
        let mut unsupported = ty("b::Odd", "b");
        unsupported.untest(Some(Reason::NoConstructor));
        Model {
            types: vec![ty("a::Cache", "a"), ty("a::Legacy", "a"), unsupported],
            ..Model::default()
        }
    }

    fn workspace(workspace: serde_json::Value, package_a: serde_json::Value) -> Workspace {
        let config = |v: serde_json::Value| {
            crate::config::from_metadata(&serde_json::json!({ "covcon": v }), "x").unwrap()
        };
        Workspace {
            root: "/w".into(),
            target_dir: "/w/target".into(),
            packages: vec![],
            workspace_config: config(workspace),
            package_configs: BTreeMap::from([("a".to_owned(), config(package_a))]),
            root_package: None,
            target_cfg: None,
        }
    }

    /// Renders what was selected: tested types with their callable methods (an approximate
    /// one marked `~doc` or `~configured`) and pairs, untested types with why, and warnings.
    fn check(ws: Workspace, cli_types: &[&str], expect: &str) {
        let cli: Vec<String> = cli_types.iter().map(|s| s.to_string()).collect();
        let selection = select(&model(), &ws, &cli);
        let mut actual = String::new();
        for t in &selection.types {
            let methods: Vec<String> = t
                .methods
                .iter()
                .filter(|m| m.supported())
                .map(|m| match &m.approximate {
                    None => m.name.clone(),
                    Some(
                        Approximation::Doc { .. }
                        | Approximation::TypeDoc { .. }
                        | Approximation::CrateDoc { .. }
                        | Approximation::NotAtomic { .. }
                        | Approximation::AnswersFrom { .. },
                    ) => {
                        format!("{}~doc", m.name)
                    }
                    Some(Approximation::Configured) => format!("{}~configured", m.name),
                    Some(Approximation::Hidden) => format!("{}~hidden", m.name),
                    Some(Approximation::Underscored) => format!("{}~underscored", m.name),
                    Some(Approximation::Storage) => format!("{}~storage", m.name),
                    Some(Approximation::View) => format!("{}~view", m.name),
                })
                .collect();
            let pairs: Vec<String> = t.pairs.iter().map(|p| p.methods.join("|")).collect();
            let settings = &selection.settings[&t.path];
            actual += &format!(
                "{} methods={} pairs={} constructor={:?}\n",
                t.path,
                methods.join(","),
                pairs.join(","),
                settings.constructor
            );
        }
        for (t, why) in &selection.untested {
            actual += &format!("untested {}: {why}\n", t.path);
        }
        for w in &selection.warnings {
            actual += &format!("warning {w}\n");
        }
        assert_eq!(actual, expect);
    }

    #[test]
    fn with_no_configuration_every_supported_type_is_selected() {
        check(
            workspace(serde_json::json!({}), serde_json::json!({})),
            &[],
            "a::Cache methods=get,put,clear,len~doc pairs=get|put,put|clear constructor=None\n\
             a::Legacy methods=get,put,clear,len~doc pairs=get|put,put|clear constructor=None\n\
             untested b::Odd: no public constructor (`new`-like function, `Default` or builder) was found\n",
        );
    }

    #[test]
    fn package_skips_join_workspace_skips_and_drop_their_pairs() {
        check(
            workspace(
                serde_json::json!({"skip_types": ["Legacy"]}),
                serde_json::json!({"skip_methods": ["Cache::clear"]}),
            ),
            &[],
            "a::Cache methods=get,put,len~doc pairs=get|put constructor=None\n\
             untested b::Odd: no public constructor (`new`-like function, `Default` or builder) was found\n",
        );
    }

    #[test]
    fn the_command_line_type_replaces_the_configured_types_but_not_the_skips() {
        check(
            workspace(
                serde_json::json!({"types": ["Legacy"], "skip_types": ["a::Cache"]}),
                serde_json::json!({}),
            ),
            &["a::*"],
            "a::Legacy methods=get,put,clear,len~doc pairs=get|put,put|clear constructor=None\n",
        );
    }

    #[test]
    fn a_configured_constructor_is_used_when_it_exists_and_warned_about_when_not() {
        check(
            workspace(
                serde_json::json!({"constructors": {"Cache": "new", "Legacy": "build"}}),
                serde_json::json!({}),
            ),
            &["a::*"],
            "a::Cache methods=get,put,clear,len~doc pairs=get|put,put|clear constructor=Some(\"new\")\n\
             a::Legacy methods=get,put,clear,len~doc pairs=get|put,put|clear constructor=None\n\
             warning a::Legacy: configured constructor `build` not found (constructors: new)\n",
        );
    }

    #[test]
    fn configured_approximate_methods_join_the_documented_ones_and_exact_overrides_both() {
        check(
            workspace(
                serde_json::json!({"approximate": ["get"]}),
                serde_json::json!({"approximate": ["Cache::put"], "exact": ["Cache::len", "a::Cache::get"]}),
            ),
            &[],
            "a::Cache methods=get,put~configured,clear,len pairs=get|put,put|clear constructor=None\n\
             a::Legacy methods=get~configured,put,clear,len~doc pairs=get|put,put|clear constructor=None\n\
             untested b::Odd: no public constructor (`new`-like function, `Default` or builder) was found\n",
        );
    }
}
