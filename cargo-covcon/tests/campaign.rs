//! Full campaigns through the real binary on a copy of `tests/data/counter` (a crate with one
//! racy type and its correct twin). One test, run steps in order, so the harness is built
//! once; budgets are small, and no assertion depends on how fast the machine is beyond "a
//! 1 ms window between two critical sections is hit within a few seconds".

mod common;

use common::{Run, Sandbox};
use serde_json::Value;
use std::path::Path;

fn counter() -> Sandbox {
    Sandbox::data("counter")
}

fn check(run: &Run, code: i32, expect: &[&str]) {
    let all = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.code, code,
        "exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    for e in expect {
        assert!(
            all.contains(e),
            "missing {e:?}\nstdout:\n{}\nstderr:\n{}",
            run.stdout,
            run.stderr
        );
    }
}

/// The per-pair `tried` counts of a report's only type: what the generator wrote.
fn tried(report: &Value) -> Vec<(String, u64)> {
    report["types"][0]["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["methods"].to_string(), p["tried"].as_u64().unwrap()))
        .collect()
}

#[test]
fn campaigns_on_the_counter_crate_find_the_race_pass_the_twin_and_gate_on_a_baseline() {
    let sandbox = counter();

    // The correct twin: no violation, exit 0, and the JSON report has the documented shape.
    let run = sandbox.covcon(&[
        "--type",
        "Tally",
        "--seed",
        "5",
        "--strategy",
        "random",
        "--max-tests",
        "128",
        "--out",
        "o",
    ]);
    check(
        &run,
        0,
        &[
            "seed 5 (repeat with --seed 5)",
            "counter::Tally",
            "no violations",
        ],
    );
    let a = sandbox.report("o");
    assert_eq!(a["format_version"], 1);
    assert_eq!(a["seed"], 5);
    assert_eq!(a["strategy"], "random");
    assert_eq!(a["types"].as_array().unwrap().len(), 1);
    let tally = &a["types"][0];
    assert_eq!(tally["path"], "counter::Tally");
    assert_eq!(tally["tests_run"], 128);
    assert_eq!(tally["violations"], serde_json::json!([]));
    // The oracle's counts: every test the campaign counted, and no violation among them.
    assert_eq!(a["oracle"]["tests"], 128);
    assert_eq!(a["oracle"]["violations"], 0);
    assert!(a["oracle"]["sequential_runs"].is_u64());
    for key in ["elapsed_s", "build_s"] {
        assert!(a[key].is_number(), "{key}");
    }

    // The same seed writes the same tests.
    let run = sandbox.covcon(&[
        "--type",
        "Tally",
        "--seed",
        "5",
        "--strategy",
        "random",
        "--max-tests",
        "128",
        "--out",
        "o",
    ]);
    check(&run, 0, &[]);
    assert_eq!(tried(&a), tried(&sandbox.report("o")));

    // The racy type: a violation, exit 2, with a reproducer, and the baseline is saved.
    let run = sandbox.covcon(&[
        "--type",
        "Counter",
        "--seed",
        "1",
        // Bounded by tests, not by the machine's speed; the budget is only a safety net.
        "--max-tests",
        "5000",
        "--time-budget",
        "10m",
        "--out",
        "o",
        "--save-baseline",
        "baseline.json",
        "--report",
        "html",
        "--report",
        "junit",
    ]);
    check(&run, 2, &["counter::Counter", "reproducer:"]);
    let c = sandbox.report("o");
    let violations = c["types"][0]["violations"].as_array().unwrap();
    // A lost update shows as the assertion's panic, or, when both asserts pass, as results no
    // sequential order gives; which one a run hits first depends on timing.
    for violation in violations {
        match violation["kind"].as_str().unwrap() {
            "panic" => {
                let location = violation["location"].as_str().unwrap();
                assert!(location.starts_with("src/lib.rs:"), "{violation}");
                assert!(
                    violation["message"]
                        .as_str()
                        .unwrap()
                        .contains("lost update"),
                    "{violation}"
                );
            }
            "wrong_result" => {}
            other => panic!("unexpected violation kind {other}: {violation}"),
        }
    }
    let violation = &violations[0];
    assert!(Path::new(violation["reproducer"].as_str().unwrap()).exists());

    // The printed replay line works from any directory: the file knows its workspace. Its
    // exit code says what it saw: 2 when the violation showed again, 0 when not.
    let elsewhere = tempfile::TempDir::new().unwrap();
    let saved = violation["replay"].as_str().unwrap();
    let replay_line = format!("cargo covcon replay {saved}");
    assert!(run.stderr.contains(&replay_line) || run.stdout.contains(&replay_line));
    let replay = sandbox.covcon_in(elsewhere.path(), &["replay", saved, "--runs", "200"]);
    assert!(
        [0, 2].contains(&replay.code) && replay.stdout.contains("concurrent runs failed"),
        "replay from another directory\nstdout:\n{}\nstderr:\n{}",
        replay.stdout,
        replay.stderr
    );
    assert_eq!(
        replay.code == 2,
        replay.stdout.contains("thread-safety violation"),
        "{}",
        replay.stdout
    );
    assert!(sandbox.path("o/report.html").exists() && sandbox.path("o/junit.xml").exists());

    // The saved baseline lists exactly the violations of the report.
    let baseline: Value =
        serde_json::from_str(&std::fs::read_to_string(sandbox.path("baseline.json")).unwrap())
            .unwrap();
    let mut saved: Vec<String> = baseline["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| format!("{} {} {}", v["type"], v["methods"], v["kind"]))
        .collect();
    let mut reported: Vec<String> = c["types"][0]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let mut methods: Vec<&str> = v["methods"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap())
                .collect();
            methods.sort();
            format!(
                "\"counter::Counter\" {} {}",
                serde_json::json!(methods),
                v["kind"]
            )
        })
        .collect();
    saved.sort();
    saved.dedup();
    reported.sort();
    reported.dedup();
    assert_eq!(saved, reported);

    // Which of the type's racy pairs a run hits first depends on timing, so the baseline the
    // next run is checked against lists every pair of the type, in every kind.
    let mut known = Vec::new();
    for methods in [
        ["add_checked", "add_checked"],
        ["add_checked", "get"],
        ["get", "get"],
    ] {
        for kind in ["panic", "deadlock", "crash", "wrong_result"] {
            known.push(
                serde_json::json!({"type": "counter::Counter", "methods": methods, "kind": kind}),
            );
        }
    }
    let all = serde_json::json!({"format_version": 1, "violations": known});
    std::fs::write(sandbox.path("baseline.json"), all.to_string()).unwrap();

    // With that baseline the bug no longer fails the run; it is still reported, and it does
    // not end the type's search: the gate looks on for a new violation to its test limit (a
    // third of the type's tests fail, so 200 tests see the known one, found at the first
    // test without a baseline, many times over).
    let run = sandbox.covcon(&[
        "--type",
        "Counter",
        "--seed",
        "1",
        // Bounded by tests, not by the machine's speed; the budget is only a safety net.
        "--max-tests",
        "200",
        "--time-budget",
        "10m",
        "--out",
        "o",
        "--baseline",
        "baseline.json",
    ]);
    check(&run, 0, &["(known, in baseline)"]);
    let known = sandbox.report("o");
    assert_eq!(known["types"][0]["tests_run"], 200, "{known}");

    // A baseline that cannot be read is a usage error before anything runs: no report.
    let run = sandbox.covcon(&[
        "--type",
        "Counter",
        "--out",
        "missing",
        "--baseline",
        "missing.json",
    ]);
    check(&run, 1, &["cannot read baseline `missing.json`"]);
    assert!(!sandbox.path("missing").join("report.json").exists());
}
