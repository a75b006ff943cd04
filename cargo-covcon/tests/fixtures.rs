//! The bundled fixtures against their expected outcomes: one campaign of the real binary over
//! a copy of `fixtures/` with a fixed seed and a small budget per type, whose `report.json` is
//! compared, type by type, with `fixtures/expected.json`.
//!
//! Every bug that shows as a panic or a deadlock must be found, as that kind of violation;
//! correct, blocking and hostile types (`none`) must report nothing; bugs that only give a
//! wrong result are expected misses under the panic oracle. Rows that are not found reliably
//! within the budget are listed in [`EXPECTED_MISSES`] with the reason, never dropped.

mod common;

use assert_cmd::Command;
use common::{copy_dir, fixtures_dir};
use serde_json::Value;
use std::collections::BTreeMap;
use tempfile::TempDir;

/// The seed of the campaign; any seed should do, this one is the one measured.
const SEED: &str = "1";
/// Tests per type at most: what bounds the campaign. A type stops at its first violation;
/// correct types run all their tests. The buggy rows are found within a few hundred tests
/// (docs/benchmarks-history.md: `bc`'s largest over ten seeds is 466), so 4,000 leaves a wide margin,
/// except for the rows in [`EXPECTED_MISSES`];
/// the correct blocking twin costs most (a blocked run is about 30 ms). The time budget is only a safety net, far beyond what
/// the campaign takes on a loaded machine: a budget that ran out would make the outcome depend
/// on the machine's speed (it did: a busy core once left two panic fixtures unfound).
const MAX_TESTS: &str = "4000";
const TIME_BUDGET: &str = "1h";

/// Panic or deadlock rows that are not found reliably within the budget above: the test
/// accepts both a miss and a find for them. `ConcurrentHashMap` was one until `bc` mixed
/// stage-setting calls into its suffixes (docs/generator.md); it has since been found in 10
/// of 10 seeds of two bench runs, after 6 to 466 tests. `SegQueue` needs 30 pushes in the
/// prefix and a pop racing a `len`: 10 of 10 seeds within 30,000 tests but up to 8,966 of
/// them (median 1,809), and at this seed found within 10,000 in 5 of 7 runs (the campaign's
/// feedback depends on timing, so a seed does not fix the tests).
const EXPECTED_MISSES: &[(&str, &str)] = &[
    (
        "shapes::seg_queue::SegQueue",
        "needs a repeated prefix and a narrow window; found within 10,000 tests in 5 of 7 runs \
         at this seed (2,784 tests in the one run of 2026-11-26), not measured at 4,000",
    ),
    (
        "handles::slot_map::SlotMap",
        "needs both threads to remove one key still live after the prefix, inside a window \
         between two acquisitions; found within 10,000 tests in 7 of 8 seeds (4 of 8 with the \
         binary of 2026-11-24), and missed once at this seed",
    ),
    (
        "shapes::buffer_pool::BufferPool",
        "needs more than 8 releases before the threads (a repeated call) and two acquires \
         between one's two acquisitions; at this seed found in 40 of 40 campaigns of the type \
         alone (48 to 2,704 tests), but missed within 4,000 twice on a loaded machine \
         (session 44: this test beside a mutants run, and the type beside a build)",
    ),
];

/// One row of `fixtures/expected.json`.
struct Row {
    path: String,
    shows_as: String,
}

fn expected_rows() -> Vec<Row> {
    let text = std::fs::read_to_string(fixtures_dir().join("expected.json")).unwrap();
    let rows: Vec<Value> = serde_json::from_str(&text).unwrap();
    rows.iter()
        .map(|r| Row {
            path: r["type"].as_str().unwrap().to_owned(),
            shows_as: r["shows_as"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// What the outcome of a row should read like.
fn expected_outcome(row: &Row) -> String {
    let found = format!("finds a {}", row.shows_as);
    if let Some((_, why)) = EXPECTED_MISSES.iter().find(|(t, _)| *t == row.path) {
        return format!("{found}, or nothing (expected miss: {why})");
    }
    match row.shows_as.as_str() {
        "panic" | "deadlock" | "crash" => found,
        _ => "reports nothing".to_owned(),
    }
}

/// What the report says about a row, in the words of [`expected_outcome`]. A buggy type's
/// violations must all be of its kind; the pair is not compared, since a test with longer
/// suffixes shows the same bug under another pair (`log ∥ log` with a removal after one `log`).
/// An untested type reports nothing.
fn actual_outcome(row: &Row, reported: Option<&Value>) -> String {
    let Some(t) = reported else {
        return "is not in the report".to_owned();
    };
    let violations = t["violations"].as_array().cloned().unwrap_or_default();
    let unexpected: Vec<String> = violations
        .iter()
        .filter(|v| v["kind"] != row.shows_as.as_str())
        .map(|v| {
            format!(
                "{} {} ∥ {}: {}",
                v["kind"].as_str().unwrap_or_default(),
                v["methods"][0].as_str().unwrap_or_default(),
                v["methods"][1].as_str().unwrap_or_default(),
                v["message"].as_str().unwrap_or_default()
            )
        })
        .collect();
    let outcome = if !unexpected.is_empty() {
        format!("reports {}", unexpected.join("; "))
    } else if violations.is_empty() {
        match t["untested"].as_str() {
            Some(why) if row.shows_as != "none" => format!("is untested: {why}"),
            _ => "reports nothing".to_owned(),
        }
    } else {
        format!("finds a {}", row.shows_as)
    };
    let expected = expected_outcome(row);
    let allowed_miss = expected.contains("or nothing") && outcome == "reports nothing";
    let allowed_find = expected.contains("or nothing") && expected.starts_with(&outcome);
    if allowed_miss || allowed_find {
        expected
    } else {
        outcome
    }
}

/// Compares every row's outcome with what the report says, as one table so that a failure
/// shows every mismatch at once.
fn check(rows: &[Row], report: &Value) {
    let types: BTreeMap<&str, &Value> = report["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["path"].as_str().unwrap(), t))
        .collect();
    let line = |row: &Row, outcome: String| format!("{}: {outcome}", row.path);
    let expect: Vec<String> = rows.iter().map(|r| line(r, expected_outcome(r))).collect();
    let actual: Vec<String> = rows
        .iter()
        .map(|r| line(r, actual_outcome(r, types.get(r.path.as_str()).copied())))
        .collect();
    assert_eq!(actual.join("\n"), expect.join("\n"));
}

/// The report of one campaign of the real binary over a fresh copy of the fixtures at
/// [`SEED`], with `args` (the packages, the test limit); exit code 2, as violations are found.
fn campaign(args: &[&str]) -> Value {
    let dir = TempDir::new().unwrap();
    let copy = dir.path().join("fixtures");
    copy_dir(&fixtures_dir(), &copy);
    let out = dir.path().join("out");
    let output = Command::new(env!("CARGO_BIN_EXE_cargo-covcon"))
        .arg("covcon")
        .arg("--manifest-path")
        .arg(copy.join("Cargo.toml"))
        .args(["--seed", SEED])
        .args(args)
        .args(["--time-budget", TIME_BUDGET, "-q"])
        .arg("--out")
        .arg(&out)
        .current_dir(dir.path())
        .env("CARGO_TARGET_DIR", dir.path().join("target"))
        .env_remove("GITHUB_ACTIONS")
        .env_remove("COVCON_SEED")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // 2: violations found, as there must be.
    assert_eq!(output.status.code(), Some(2), "stderr:\n{stderr}");
    let text = std::fs::read_to_string(out.join("report.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn every_panic_and_deadlock_fixture_is_found_and_nothing_is_reported_on_correct_types() {
    let rows = expected_rows();
    assert!(rows.len() >= 30, "expected.json has {} rows", rows.len());
    let report = campaign(&["--max-tests", MAX_TESTS]);
    check(&rows, &report);
}
