//! A hand-built report the renderer tests share: one type with a panic violation whose
//! message carries HTML and a method whose results were not compared, one with a deadlock, and one untested type of each kind (one
//! covcon missed, one with nothing to test, one internal to its crate).

use super::*;
use generator::{Call, Value};

fn call(method: &str, args: Vec<Value>) -> Call {
    Call {
        method: method.to_owned(),
        receiver: 0,
        args,
        times: 1,
        keep: false,
        chained: None,
        scope: None,
    }
}

fn pair(a: &str, b: &str, group: Group, tried: u64, covered: u64, reasons: &[&str]) -> PairReport {
    PairReport {
        methods: [a.to_owned(), b.to_owned()],
        group,
        tried,
        covered,
        reasons: reasons.iter().map(|r| r.to_string()).collect(),
        explored: None,
    }
}

/// The sample report: two tested types, then the untested ones.
pub(crate) fn report() -> Report {
    let mut report = Report::new(42, "covcon");
    report.covcon_version = "0.1.0".into();
    report.elapsed_s = 12.5;
    report.build_s = 3.25;
    report.oracle = Some(oracle::RunStats {
        tests: 1300,
        failed: 3,
        explained: 1,
        violations: 2,
        sequential_runs: 14,
        confirm_runs: 40,
        shrink_runs: 60,
        workers_started: 2,
        controlled_runs: 650,
        uncontrolled_runs: 3,
        ..Default::default()
    });
    report.types = vec![account(), locks_pair()];
    report.types.extend(untested_types());
    report
}

/// `bank::Account`: a pair of each group, the lost update, a method whose results are
/// approximate and one that fails on a held lock.
fn account() -> TypeReport {
    TypeReport {
        path: "bank::Account".into(),
        package: "bank".into(),
        file: Some("bank/src/lib.rs".into()),
        line: 12,
        tests_run: 1200,
        runs: 1460,
        seconds: 4.0,
        pairs: vec![
            pair(
                "deposit",
                "deposit",
                Group::High,
                400,
                380,
                &["deposit reads `balance` under one lock and writes it under another"],
            ),
            PairReport {
                explored: Some(oracle::Exploration {
                    explored: 38,
                    schedules: 38,
                    steps: 5,
                    unordered: 0,
                    end: oracle::ExplorationEnd::Complete,
                    tests: 1,
                }),
                ..pair("deposit", "balance", Group::Low, 300, 250, &[])
            },
            pair(
                "balance",
                "balance",
                Group::Removed,
                0,
                0,
                &["both only read"],
            ),
        ],
        violations: vec![lost_update()],
        skipped: vec!["method `export(&mut self)` takes &mut self".into()],
        untested: None,
        untested_kind: None,
        coverage: vec![
            CoveragePoint {
                tests: 0,
                seconds: 0.0,
                covered: 0,
            },
            CoveragePoint {
                tests: 100,
                seconds: 0.5,
                covered: 1,
            },
            CoveragePoint {
                tests: 1200,
                seconds: 4.0,
                covered: 2,
            },
        ],
        setup_failures: 0,
        own_threads: false,
        clock_outside: 0,
        guard_held_deadlocks: 0,
        unjudged: 0,
        builders: Default::default(),
        functions: Default::default(),
        approximate: vec![ApproximateMethod {
            method: "balance".into(),
            why: analysis::Approximation::Doc {
                line: "The balance <may> be stale while others deposit.".into(),
            },
        }],
        contended: vec![crate::report::ContendedMethod {
            method: "try_withdraw".into(),
            line: "Returns `None` if the account <could not be locked>.".into(),
        }],
    }
}

/// The lost update of `bank::Account`, whose message carries HTML.
fn lost_update() -> ViolationReport {
    ViolationReport {
        kind: Kind::Panic,
        methods: ["deposit".into(), "deposit".into()],
        message: "lost update <script>alert(1)</script> & more".into(),
        location: Some("bank/src/lib.rs:30:9".into()),
        reproducer: Some("target/covcon/violations/1.rs".into()),
        replay: Some("target/covcon/violations/1.json".into()),
        tests_until_found: 17,
        seconds_until_found: 0.5,
        test: Some(TestCase {
            id: 17,
            type_path: "bank::Account".into(),
            pair: ["deposit".into(), "deposit".into()],
            instances: vec![call("new", vec![])],
            handles: vec![],
            prefix: vec![call("deposit", vec![Value::Int(5)])],
            threads: [
                vec![
                    call("deposit", vec![Value::Int(1)]),
                    call("check", vec![Value::Str("<b>".into())]),
                ],
                vec![call("deposit", vec![Value::Int(2)])],
            ],
            noise_seed: 9,
            control: Default::default(),
        }),
        original_test: None,
        original_message: None,
        linearizations: 6,
        same_panic_elsewhere: None,
        confirmed: Some([7, 20]),
        sites: vec![Site {
            method: "deposit".into(),
            file: "bank/src/lib.rs".into(),
            line: 20,
        }],
        known: false,
        schedule: None,
    }
}

/// `locks::Pair`: a known deadlock between two methods that take two locks in opposite
/// orders, without its test case.
fn locks_pair() -> TypeReport {
    TypeReport {
        path: "locks::Pair".into(),
        package: "locks".into(),
        file: Some("locks/src/lib.rs".into()),
        line: 3,
        tests_run: 50,
        // As a report written before runs were counted.
        runs: 0,
        seconds: 2.0,
        pairs: vec![pair(
            "ab",
            "ba",
            Group::High,
            50,
            10,
            &["lock order: ab takes a then b, ba takes b then a"],
        )],
        violations: vec![ViolationReport {
            kind: Kind::Deadlock,
            methods: ["ab".into(), "ba".into()],
            message: "thread 0 in ab, thread 1 in ba".into(),
            location: None,
            reproducer: Some("target/covcon/violations/2.rs".into()),
            replay: None,
            tests_until_found: 3,
            seconds_until_found: 0.25,
            test: None,
            original_test: None,
            original_message: None,
            linearizations: 0,
            same_panic_elsewhere: None,
            confirmed: None,
            sites: vec![],
            known: true,
            schedule: None,
        }],
        skipped: vec![],
        untested: None,
        untested_kind: None,
        coverage: vec![],
        setup_failures: 0,
        own_threads: false,
        clock_outside: 0,
        guard_held_deadlocks: 0,
        unjudged: 0,
        builders: Default::default(),
        functions: Default::default(),
        approximate: vec![],
        contended: vec![],
    }
}

/// One untested type of each kind: one covcon missed, one with nothing to test, one internal
/// to its crate.
fn untested_types() -> Vec<TypeReport> {
    vec![
        TypeReport {
            path: "odd::Generic".into(),
            package: "odd".into(),
            untested: Some("no constructor covcon can call".into()),
            untested_kind: Some(UntestedKind::Missed),
            ..TypeReport::default()
        },
        TypeReport {
            path: "odd::Locked".into(),
            package: "odd".into(),
            untested: Some(analysis::Reason::NothingToTest.to_string()),
            untested_kind: Some(UntestedKind::NothingToTest),
            ..TypeReport::default()
        },
        TypeReport {
            path: "odd::inner::Hidden".into(),
            package: "odd".into(),
            untested: Some(
                analysis::Reason::PrivateModule {
                    also: Some(Box::new(analysis::Reason::DoesNotCompile {
                        error: "struct `Hidden` is private".into(),
                    })),
                }
                .to_string(),
            ),
            untested_kind: Some(UntestedKind::Internal),
            ..TypeReport::default()
        },
    ]
}

/// A report whose violations are all known and whose one untested type is of `kind`; `None`
/// is a report written before `untested_kind` existed.
pub(crate) fn only_untested(kind: Option<UntestedKind>) -> Report {
    let mut report = report();
    for v in report.types.iter_mut().flat_map(|t| &mut t.violations) {
        v.known = true;
    }
    report.types.retain(|t| t.untested.is_none());
    report.types.push(TypeReport {
        path: "odd::Odd".into(),
        package: "odd".into(),
        untested: Some("why".into()),
        untested_kind: kind,
        ..TypeReport::default()
    });
    report
}
