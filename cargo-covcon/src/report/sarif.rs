//! SARIF 2.1.0 for code scanning (GitHub and others): one rule per violation kind, one result
//! per violation, located at both methods' declarations, with the reproducer and the saved
//! test as related locations. Source paths are relative to `%SRCROOT%`, the workspace root;
//! a violation already in the baseline is a `note` (reported, not failing), a new one an
//! `error`. Fingerprints are the type, the sorted pair and the kind, as the baseline's key, so
//! code scanning tracks one alert per bug across runs.

use super::{Kind, Report, ViolationReport};
use serde_json::{json, Value};
use std::path::Path;

const KINDS: [(Kind, &str, &str); 4] = [
    (
        Kind::Panic,
        "ThreadSafetyPanic",
        "Two methods run concurrently panic where no sequential order of the same calls does.",
    ),
    (
        Kind::Deadlock,
        "ThreadSafetyDeadlock",
        "Two methods run concurrently block for good where no sequential order of the same calls does.",
    ),
    (
        Kind::Crash,
        "ThreadSafetyCrash",
        "Two methods run concurrently abort the process where no sequential order of the same calls does.",
    ),
    (
        Kind::WrongResult,
        "ThreadSafetyWrongResult",
        "Two methods run concurrently return results no sequential order of the same calls gives.",
    ),
];

/// The report as a SARIF log, its sources relative to the report's workspace root.
pub fn render(report: &Report) -> String {
    let rules: Vec<Value> = KINDS
        .iter()
        .map(|(kind, name, text)| {
            json!({
                "id": rule_id(*kind),
                "name": name,
                "shortDescription": {"text": format!("thread-safety violation: {}", kind.as_str().replace('_', " "))},
                "fullDescription": {"text": text},
                "help": {"text": "Run the reproducer (a plain #[test]) or `cargo covcon replay` on the saved test to see it fail; the report lists the calls of both threads."},
                "defaultConfiguration": {"level": "error"},
                "properties": {"tags": ["concurrency", "thread-safety"]}
            })
        })
        .collect();
    let results: Vec<Value> = report
        .types
        .iter()
        .flat_map(|t| {
            t.violations
                .iter()
                .map(move |v| result(&t.path, t.file.as_deref(), t.line, v))
        })
        .collect();
    let mut log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "cargo-covcon",
                "version": report.covcon_version,
                "informationUri": "https://crates.io/crates/cargo-covcon",
                "rules": rules,
            }},
            "results": results,
            "properties": {"seed": report.seed, "strategy": report.strategy},
        }]
    });
    if let Some(root) = &report.workspace_root {
        let uri = format!("{}/", file_uri(root).trim_end_matches('/'));
        log["runs"][0]["originalUriBaseIds"] = json!({"%SRCROOT%": {"uri": uri}});
    }
    let mut text = serde_json::to_string_pretty(&log).expect("JSON values serialise");
    text.push('\n');
    text
}

fn rule_id(kind: Kind) -> String {
    format!("covcon/{}", kind.as_str())
}

fn rule_index(kind: Kind) -> usize {
    KINDS.iter().position(|(k, ..)| *k == kind).unwrap_or(0)
}

fn result(type_path: &str, type_file: Option<&Path>, type_line: u32, v: &ViolationReport) -> Value {
    let mut locations: Vec<Value> = v
        .sites
        .iter()
        .map(|s| source_location(&s.file, s.line, &format!("`{}`", s.method)))
        .collect();
    if let (true, Some(file)) = (locations.is_empty(), type_file) {
        locations.push(source_location(file, type_line, type_path));
    }
    let mut related = Vec::new();
    for (path, what) in [
        (&v.reproducer, "the reproducer, a plain #[test]"),
        (&v.replay, "the saved test, for `cargo covcon replay`"),
    ] {
        if let Some(path) = path {
            related.push(json!({
                "id": related.len() + 1,
                "physicalLocation": {"artifactLocation": {"uri": file_uri(path)}},
                "message": {"text": what}
            }));
        }
    }
    let mut pair = [v.methods[0].as_str(), v.methods[1].as_str()];
    pair.sort_unstable();
    let mut message = format!(
        "{type_path}: `{}` and `{}` run concurrently: {} — {}",
        v.methods[0],
        v.methods[1],
        v.kind.as_str().replace('_', " "),
        v.message
    );
    let evidence = v.evidence();
    if !evidence.is_empty() {
        message.push_str(&format!(" ({})", evidence.join("; ")));
    }
    json!({
        "ruleId": rule_id(v.kind),
        "ruleIndex": rule_index(v.kind),
        "level": if v.known { "note" } else { "error" },
        "message": {"text": message},
        "locations": locations,
        "relatedLocations": related,
        "partialFingerprints": {
            "covconViolation/v1": format!("{type_path}|{}|{}|{}", pair[0], pair[1], v.kind.as_str())
        },
        "properties": {"testsUntilFound": v.tests_until_found, "known": v.known}
    })
}

fn source_location(file: &Path, line: u32, what: &str) -> Value {
    json!({
        "physicalLocation": {
            "artifactLocation": {
                "uri": file.to_string_lossy().replace('\\', "/"),
                "uriBaseId": "%SRCROOT%"
            },
            "region": {"startLine": line.max(1)}
        },
        "message": {"text": what}
    })
}

/// `file:///abs/path` for an absolute path (relative ones are left relative).
fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    if path.is_absolute() {
        format!(
            "file://{}",
            if text.starts_with('/') {
                text
            } else {
                format!("/{text}")
            }
        )
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    #[test]
    fn each_violation_is_a_result_at_both_methods_with_the_reproducer_related() {
        let mut report = sample::report();
        report.workspace_root = Some("/w".into());
        let log: Value = serde_json::from_str(&render(&report)).unwrap();
        let run = &log["runs"][0];
        assert_eq!(log["version"], "2.1.0");
        assert_eq!(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file:///w/");
        let results = run["results"].as_array().unwrap();
        let violations: usize = sample::report()
            .types
            .iter()
            .map(|t| t.violations.len())
            .sum();
        assert_eq!(results.len(), violations);
        let first = &results[0];
        assert_eq!(first["ruleId"], "covcon/panic");
        assert_eq!(first["level"], "error");
        let rule = &run["tool"]["driver"]["rules"][first["ruleIndex"].as_u64().unwrap() as usize];
        assert_eq!(rule["id"], first["ruleId"]);
        assert!(first["locations"].as_array().unwrap().iter().all(|l| {
            l["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
                && l["physicalLocation"]["region"]["startLine"].as_u64() > Some(0)
        }));
        assert!(first["relatedLocations"][0]["message"]["text"]
            .as_str()
            .unwrap()
            .contains("reproducer"));
        // The one in the baseline is reported, but as a note.
        assert_eq!(results[1]["level"], "note");
    }

    /// serde-sarif's types are generated from the SARIF 2.1.0 JSON schema: every required
    /// property present with the schema's type, every enum value one the schema allows.
    #[test]
    fn the_log_reads_back_as_sarif_2_1_0() {
        let mut report = sample::report();
        report.workspace_root = Some("/w".into());
        let text = render(&report);
        let log: serde_sarif::sarif::Sarif = serde_json::from_str(&text).unwrap();
        assert_eq!(log.runs.len(), 1);
        let results = log.runs[0].results.as_ref().unwrap();
        assert!(results
            .iter()
            .all(|r| r.rule_id.is_some() && r.locations.is_some()));
        // And an empty run is a valid log too.
        let empty = render(&Report::new(1, "bc"));
        serde_json::from_str::<serde_sarif::sarif::Sarif>(&empty).unwrap();
        // The check can fail: a run without its tool's driver, or a level the schema does not
        // know, is refused.
        let broken = [
            text.replacen("\"driver\"", "\"drive\"", 1),
            text.replacen("\"level\": \"error\"", "\"level\": \"fatal\"", 1),
        ];
        for b in broken {
            assert_ne!(b, text);
            assert!(serde_json::from_str::<serde_sarif::sarif::Sarif>(&b).is_err());
        }
    }
}
