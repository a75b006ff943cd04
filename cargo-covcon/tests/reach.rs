//! Zero configuration on crates shaped like published ones: a copy of `tests/data/reach` (a
//! workspace whose thread-safe types sit behind the obstacles covcon met on real crates) is
//! run once with a small budget, and every type must be tested with every method called.
//! The table says, per type, which obstacle it stands for and which methods must run.

mod common;

use common::Sandbox;
use serde_json::Value;
use std::collections::BTreeSet;

/// (type, obstacle, methods that must be called).
const EXPECTED: &[(&str, &str, &[&str])] = &[
    (
        "reach::Counter",
        "declared inside `cfg_if!`",
        &["incr", "get"],
    ),
    (
        "reach::Set",
        "a wrapper whose lock is two types deep; its module comes from the crate's own macro",
        &["insert", "contains", "len"],
    ),
    (
        "reach::Jobs",
        "a wrapper around a dependency's concurrent queue",
        &["push", "steal", "is_empty"],
    ),
    (
        "reach::Meter",
        "built from an options struct (`Meter::with_opts(MeterOpts::new(..))`)",
        &["inc_by", "get", "describe"],
    ),
    (
        "reach::Pool",
        "default type parameters from another module and an import",
        &["put", "take", "len", "put_twice"],
    ),
    (
        "reach::Interner",
        "generic methods (`AsRef<str>`, `&Q where String: Borrow<Q>`, a turbofish), closures \
         with arguments or returning `Result`",
        &["intern", "get", "take", "retain", "get_or_try"],
    ),
    (
        "reach::Stats",
        "a trait method of a trait in another module, and its default method",
        &["hit", "export", "export_len"],
    ),
    (
        "reach::Epoch",
        "methods that take a guard the map hands out (`&map.guard()`)",
        &["insert", "get", "guard"],
    ),
    (
        "reach::Slots",
        "`Box<K>`, `Arc<String>` and `NonZeroUsize` arguments, a key `&Q` where \
         `Q: ToOwned<Owned = K>`",
        &["put", "get_by_ref", "shrink"],
    ),
    (
        "reach::Tx",
        "built only by a free function returning a tuple (`channel(cap) -> (Tx<T>, Rx<T>)`); \
         the receiving half is kept as a handle",
        &["send", "len", "Rx::try_recv", "Rx::recv_timeout"],
    ),
    (
        "reach::Rx",
        "the tuple's second element, with the sending half kept as a handle",
        &["try_recv", "recv_timeout", "Tx::send", "Tx::len"],
    ),
    (
        "facade::Board",
        "a method taking a value of a dependency's type (`&engine::Ticket`)",
        &["punch", "last"],
    ),
    (
        "facade::Queue",
        "a companion crate's type the crate re-exports (`pub use engine::Queue`)",
        &["push", "pop", "len"],
    ),
    (
        "facade::SpinLock",
        "a companion crate's type the crate aliases with a raw lock of its own \
         (`pub type SpinLock<T> = engine::Lock<Spin, T>`)",
        &["set", "get"],
    ),
    (
        "facade::Latch",
        "an alias naming its parameter as the one it fixes (`Latch<R> = engine::Lock<Spin, R>`)",
        &["set", "get"],
    ),
    (
        "facade::Scores",
        "generic over a dependency's trait that only the dependency implements \
         (`C: engine::Tally`, `engine::Wide`)",
        &["add", "total"],
    ),
    ("old::Tally", "an edition-2015 crate", &["add", "get"]),
    (
        "bare::Rcu",
        "a `no_std` crate whose method's bounds name `alloc::sync::Arc` (its turbofish does too)",
        &["read", "update"],
    ),
    (
        "strict::Gauge",
        "`#![deny(warnings)]` with a cfg newer compilers warn about",
        &["set", "get"],
    ),
];

/// Types reported untested, and why that is right.
const UNTESTED: &[(&str, &str)] = &[(
    "facade::Spin",
    "a raw lock whose only constructor is a trait's associated function",
)];

/// Methods of a report type that ran in at least one test (appear in a tried pair).
fn called(ty: &Value) -> BTreeSet<String> {
    ty["pairs"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|p| p["tried"].as_u64().unwrap_or(0) > 0)
        .flat_map(|p| p["methods"].as_array().cloned().unwrap_or_default())
        .filter_map(|m| m.as_str().map(String::from))
        .collect()
}

#[test]
fn every_type_behind_a_published_crates_obstacles_is_tested_with_every_method() {
    let sandbox = Sandbox::data("reach");
    let run = sandbox.covcon(&[
        "--workspace",
        // Bounded by tests, not by the machine's speed; the budget is only a safety net.
        "--max-tests",
        "1500",
        "--time-budget",
        "10m",
        "--seed",
        "1",
        "--out",
        "o",
    ]);
    assert_eq!(
        run.code, 0,
        "exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let report = sandbox.report("o");
    let types = report["types"].as_array().unwrap();
    let mut problems = Vec::new();
    for (path, obstacle, methods) in EXPECTED {
        let Some(ty) = types.iter().find(|t| t["path"] == *path) else {
            problems.push(format!("{path} ({obstacle}): not found"));
            continue;
        };
        if let Some(why) = ty["untested"].as_str() {
            problems.push(format!("{path} ({obstacle}): untested: {why}"));
            continue;
        }
        let called = called(ty);
        let missing: Vec<&&str> = methods.iter().filter(|m| !called.contains(**m)).collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{path} ({obstacle}): never called {missing:?}; skipped: {}",
                ty["skipped"]
            ));
        }
        // Instrumentation reached the type: some pair was seen running concurrently.
        let covered = ty["coverage"]
            .as_array()
            .and_then(|c| c.last())
            .and_then(|p| p["covered"].as_u64())
            .unwrap_or(0);
        if covered == 0 {
            problems.push(format!("{path} ({obstacle}): no pair covered"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for (path, why) in UNTESTED {
        let untested = types
            .iter()
            .find(|t| t["path"] == *path)
            .and_then(|t| t["untested"].as_str());
        assert!(untested.is_some(), "{path} ({why}) should be untested");
    }
    assert_eq!(
        types.len(),
        EXPECTED.len() + UNTESTED.len(),
        "{:?}",
        types.iter().map(|t| &t["path"]).collect::<Vec<_>>()
    );
}
