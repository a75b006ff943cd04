//! CLI tests: the real binary on copies of test crates (`tests/data/`) and of `fixtures/`.
//! Most use the fast paths (analysis, listing, report merging); none depends on timing.

mod common;

use assert_cmd::Command;
use common::{Run, Sandbox};

/// Checks the exit code and that stdout+stderr contain each expected piece.
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

#[test]
fn help_documents_the_exit_codes_and_exits_0() {
    let run = Sandbox::empty().covcon(&["--help"]);
    check(
        &run,
        0,
        &[
            "Exit codes:",
            "70  internal error",
            "--time-budget",
            "--manifest-path",
        ],
    );
}

#[test]
fn an_unknown_flag_is_a_usage_error_with_code_1() {
    let run = Sandbox::empty().covcon(&["--no-such-flag"]);
    check(&run, 1, &["--no-such-flag"]);
}

#[test]
fn a_missing_manifest_exits_1() {
    let sandbox = Sandbox::empty();
    let run = sandbox.covcon(&["analyze", "--manifest-path", "nowhere/Cargo.toml"]);
    check(
        &run,
        1,
        &["manifest path `nowhere/Cargo.toml` does not exist"],
    );
}

#[test]
fn a_misspelt_configuration_key_exits_1_and_names_it() {
    let sandbox = Sandbox::data("badconfig");
    let run = sandbox.covcon(&["list", "--manifest-path", &sandbox.manifest()]);
    check(
        &run,
        1,
        &["unknown field `skip_method`", "package `badconfig`"],
    );
}

/// The oracle's settings in `[package.metadata.covcon]` reach every command that runs tests,
/// not `run` alone: a scheduling no command knows stops each of them before any build.
#[test]
fn every_command_that_runs_tests_reads_the_configured_oracle_settings() {
    let sandbox = Sandbox::data("counter");
    let manifest = sandbox.path("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("schedule = \"sometimes\"\n");
    std::fs::write(&manifest, text).unwrap();
    let manifest = sandbox.manifest();
    // A saved test of the crate's type, as a run writes one.
    sandbox.write(
        "saved.json",
        r#"{"id": 1, "type_path": "counter::Counter", "pair": ["add_checked", "get"],
            "instances": [], "prefix": [], "threads": [[], []], "noise_seed": 1}"#,
    );
    let replay = ["replay", "saved.json"];
    for command in [&[][..], &["bench"][..], &["mutants"][..], &replay[..]] {
        let mut args = command.to_vec();
        args.extend(["--manifest-path", &manifest]);
        let run = sandbox.covcon(&args);
        check(&run, 1, &["unknown scheduling `sometimes`"]);
        assert!(!run.stderr.contains("harness"), "{}", run.stderr);
    }
}

/// A diff that replaces line `line` of `path` (named from the repository's root).
fn one_line_diff(path: &str, line: u32, removed: &str, added: &str) -> String {
    format!(
        "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -{line},1 +{line},1 @@\n-{removed}\n+{added}\n"
    )
}

/// The types `list --in-diff` shows for `diff` in `sandbox`'s workspace.
fn listed_in_diff(sandbox: &Sandbox, diff: &str) -> Vec<String> {
    let file = sandbox.write("change.diff", diff);
    let run = sandbox.covcon(&[
        "list",
        "--in-diff",
        &file.display().to_string(),
        "--manifest-path",
        &sandbox.manifest(),
    ]);
    check(&run, 0, &[]);
    run.stdout
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// `--in-diff` keeps the types a diff touches: through a method's body, a field of the
/// declaration, or not at all (a blank line between two types); a run with nothing touched
/// has nothing to test and passes.
#[test]
fn in_diff_selects_the_types_the_diff_touches() {
    let sandbox = Sandbox::data("counter");
    let lib = "src/lib.rs";
    let body = one_line_diff(
        lib,
        47,
        "        *self.value.lock().unwrap() += n;",
        "        *self.value.lock().unwrap() += n + 0;",
    );
    assert_eq!(listed_in_diff(&sandbox, &body), ["counter::Tally"]);
    let field = one_line_diff(
        lib,
        8,
        "    value: Mutex<u32>,",
        "    value: std::sync::Mutex<u32>,",
    );
    assert_eq!(listed_in_diff(&sandbox, &field), ["counter::Counter"]);
    let between = one_line_diff(lib, 30, "", " ");
    assert!(listed_in_diff(&sandbox, &between).is_empty());
    let file = sandbox.write("change.diff", &between);
    let run = sandbox.covcon(&[
        "--in-diff",
        &file.display().to_string(),
        "--manifest-path",
        &sandbox.manifest(),
    ]);
    check(
        &run,
        0,
        &[
            "the diff touches 0 of",
            "no type the diff touches can be tested",
        ],
    );
}

/// In a workspace of many packages, a diff named from the repository's root touches the type
/// whose method it changes, and a change in a scope's guard (`Reservation::confirm`) touches
/// the type whose scopes keep it: not every type of the package, although each takes the
/// guard's synchronisation sites for its copy.
#[test]
fn in_diff_keeps_a_change_to_the_type_that_owns_it_in_a_workspace() {
    let sandbox = Sandbox::fixtures();
    let source = std::fs::read_to_string(sandbox.path("rusty/src/booking.rs")).unwrap();
    for method in ["fn reserve", "fn confirm"] {
        // A line of the method's body.
        let line = source
            .lines()
            .position(|l| l.contains(method))
            .expect("the method is in the fixture") as u32
            + 3;
        let diff = one_line_diff("fixtures/rusty/src/booking.rs", line, "x", "y");
        assert_eq!(
            listed_in_diff(&sandbox, &diff),
            ["rusty::booking::Booking", "rusty::booking::Reservation"],
            "{method}"
        );
    }
}

/// `--changed-since REF` lists the types the change since REF touches, from the branch's
/// commits and the working tree alike: a committed line of a private helper no type owns
/// (dbcp's `ConnectionPool`, which both data sources hold), an uncommitted line of a
/// constructor (`TallyBook::new`), and an untracked new module; a `mod` line and a `use`
/// touch nothing. Nothing changed, nothing listed.
#[test]
fn changed_since_selects_what_the_branch_and_the_working_tree_change() {
    let sandbox = Sandbox::fixtures();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(sandbox.path(""))
            .args([
                "-c",
                "user.name=covcon",
                "-c",
                "user.email=covcon@example.com",
            ])
            .args(args)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    let edit = |file: &str, from: &str, to: &str| {
        let path = sandbox.path(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file} has {from}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    };
    let listed = |reference: &str| -> Vec<String> {
        let run = sandbox.covcon(&[
            "list",
            "--changed-since",
            reference,
            "--manifest-path",
            &sandbox.manifest(),
        ]);
        check(&run, 0, &[]);
        let mut types: Vec<String> = run
            .stdout
            .lines()
            .filter(|l| !l.starts_with(' '))
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_owned)
            .collect();
        types.sort();
        types
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    assert!(listed("HEAD").is_empty());
    edit(
        "dbcp/src/pool.rs",
        "        Ok(id)\n",
        "        Ok(id.max(1))\n",
    );
    edit(
        "dbcp/src/pool.rs",
        "use std::sync::Mutex;",
        "use std::sync::{Mutex};",
    );
    git(&["commit", "-qam", "change"]);
    let pool = [
        "dbcp::per_user_pool_data_source::PerUserPoolDataSource",
        "dbcp::shared_pool_data_source::SharedPoolDataSource",
    ];
    assert_eq!(listed("HEAD~1"), pool);
    assert!(listed("HEAD").is_empty());
    edit(
        "rusty/src/tally_book.rs",
        "        Self::default()",
        "        Self::default() ",
    );
    edit(
        "rusty/src/lib.rs",
        "pub mod booking;",
        "pub mod booking;\npub mod fresh;",
    );
    sandbox.write(
        "rusty/src/fresh.rs",
        "use std::sync::Mutex;\n\n#[derive(Debug, Default)]\npub struct Fresh {\n    n: Mutex<u32>,\n}\n\nimpl Fresh {\n    pub fn bump(&self) -> u32 {\n        let mut n = self.n.lock().unwrap();\n        *n += 1;\n        *n\n    }\n}\n",
    );
    assert_eq!(
        listed("HEAD~1"),
        [
            pool[0],
            pool[1],
            "rusty::fresh::Fresh",
            "rusty::tally_book::TallyBook"
        ]
    );
    assert_eq!(
        listed("HEAD"),
        ["rusty::fresh::Fresh", "rusty::tally_book::TallyBook"]
    );
    let run = sandbox.covcon(&[
        "list",
        "--changed-since",
        "no-such-branch",
        "--manifest-path",
        &sandbox.manifest(),
    ]);
    check(&run, 1, &["--changed-since no-such-branch", "merge-base"]);
}

#[test]
fn a_bad_time_budget_exits_1() {
    let sandbox = Sandbox::data("counter");
    let run = sandbox.covcon(&[
        "--manifest-path",
        &sandbox.manifest(),
        "--time-budget",
        "soon",
    ]);
    check(&run, 1, &["invalid time budget"]);
}

#[test]
fn a_bad_shard_exits_1() {
    let sandbox = Sandbox::data("counter");
    let run = sandbox.covcon(&[
        "list",
        "--manifest-path",
        &sandbox.manifest(),
        "--shard",
        "2/2",
    ]);
    check(&run, 1, &["shard k must be less than n"]);
}

#[test]
fn a_crate_without_thread_safe_types_exits_0_with_a_warning_and_a_report() {
    let sandbox = Sandbox::data("plain");
    let run = sandbox.covcon(&["--manifest-path", &sandbox.manifest(), "--seed", "3"]);
    check(
        &run,
        0,
        &[
            "no testable thread-safe type selected",
            "no violations in 0 types",
            "seed 3",
        ],
    );
    let report = std::fs::read_to_string(sandbox.path("target/covcon/report.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["types"], serde_json::json!([]));
}

#[test]
fn list_on_the_counter_crate_shows_types_and_methods_but_not_skipped_types() {
    let sandbox = Sandbox::data("counter");
    let run = sandbox.covcon(&["list", "--manifest-path", &sandbox.manifest()]);
    check(
        &run,
        0,
        &[
            "counter::Counter\n",
            "    add_checked(n: u32)",
            "counter::Tally\n",
        ],
    );
    assert!(!run.stdout.contains("Ignored"), "{}", run.stdout);
}

#[test]
fn list_shards_of_the_fixtures_partition_the_types() {
    let sandbox = Sandbox::fixtures();
    let types = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["list", "--manifest-path"];
        let manifest = sandbox.manifest();
        all.push(&manifest);
        all.extend(args);
        let run = sandbox.covcon(&all);
        check(&run, 0, &[]);
        run.stdout
            .lines()
            .filter(|l| !l.starts_with(' '))
            .map(|l| l.split_whitespace().next().unwrap().to_owned())
            .collect()
    };
    let whole = types(&[]);
    let (a, b) = (types(&["--shard", "0/2"]), types(&["--shard", "1/2"]));
    assert!(whole.len() >= 2, "{whole:?}");
    let mut joined: Vec<String> = a.iter().chain(&b).cloned().collect();
    joined.sort();
    let mut sorted = whole.clone();
    sorted.sort();
    assert_eq!(joined, sorted);
    assert!(a.iter().all(|t| !b.contains(t)));
}

#[test]
fn analyze_on_a_copy_of_the_fixtures_prints_a_summary() {
    let sandbox = Sandbox::fixtures();
    let run = sandbox.covcon(&["analyze", "--manifest-path", &sandbox.manifest()]);
    check(&run, 0, &[]);
    assert!(!run.stdout.trim().is_empty(), "{}", run.stderr);
}

#[test]
fn analyze_json_is_the_model_with_its_format_version() {
    let sandbox = Sandbox::data("counter");
    let run = sandbox.covcon(&[
        "analyze",
        "--format",
        "json",
        "--manifest-path",
        &sandbox.manifest(),
    ]);
    check(&run, 0, &[]);
    let model: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(model["format_version"], 2);
    let paths: Vec<&str> = model["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["counter::Counter", "counter::Tally"]);
}

#[test]
fn analyze_type_filter_keeps_only_the_named_type() {
    let sandbox = Sandbox::data("counter");
    let run = sandbox.covcon(&[
        "analyze",
        "--format",
        "json",
        "--type",
        "Tally",
        "--manifest-path",
        &sandbox.manifest(),
    ]);
    check(&run, 0, &[]);
    let model: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(model["types"].as_array().unwrap().len(), 1);
}

/// The methods `analyze --format json` marks approximate in the fixtures' sharded set, each as
/// `method: by` (`doc` with the quoted sentence, or `configured`), after `[package.metadata.covcon]`
/// of the `nondet` crate is `metadata`.
fn approximate_methods_in_the_sharded_set(metadata: &str) -> Vec<String> {
    let sandbox = Sandbox::fixtures();
    let manifest = sandbox.path("nondet/Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str(&format!("\n[package.metadata.covcon]\n{metadata}\n"));
    std::fs::write(&manifest, text).unwrap();
    let run = sandbox.covcon(&[
        "analyze",
        "--format",
        "json",
        "-p",
        "nondet",
        "--type",
        "ShardedSet",
        "--manifest-path",
        &sandbox.manifest(),
    ]);
    check(&run, 0, &[]);
    let model: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    model["types"][0]["methods"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["approximate"].is_object())
        .map(|m| {
            let why = &m["approximate"];
            let line = why["line"]
                .as_str()
                .map(|l| format!(" \"{l}\""))
                .unwrap_or_default();
            format!(
                "{}: {}{line}",
                m["name"].as_str().unwrap(),
                why["by"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn analyze_shows_the_documented_approximate_len_and_the_metadata_overrides_it() {
    let documented =
        "len: doc \"While other threads insert or remove, the answer is an approximation.\"";
    assert_eq!(approximate_methods_in_the_sharded_set(""), [documented]);
    assert_eq!(
        approximate_methods_in_the_sharded_set(
            "exact = [\"ShardedSet::len\"]\napproximate = [\"nondet::sharded_set::ShardedSet::contains\"]"
        ),
        ["contains: configured"]
    );
}

#[test]
fn analyze_text_quotes_the_doc_of_an_approximate_method() {
    let sandbox = Sandbox::fixtures();
    let run = sandbox.covcon(&[
        "analyze",
        "-p",
        "nondet",
        "--type",
        "ShardedSet",
        "--manifest-path",
        &sandbox.manifest(),
    ]);
    check(&run, 0, &[]);
    assert!(
        run.stdout.contains(
            "    len() -> usize\n      approximate answer, results not compared: its doc says \"While other threads insert or remove, the answer is an approximation.\""
        ),
        "{}",
        run.stdout
    );
}

/// A shard's report with one type, with or without a violation whose message has HTML in it.
fn shard_report(seed: u64, shard: &str, path: &str, violation: bool) -> String {
    let violations = if violation {
        r#"[{"kind": "panic", "methods": ["add", "add"], "message": "lost <script>alert(1)</script>",
            "tests_until_found": 3, "seconds_until_found": 0.1}]"#
    } else {
        "[]"
    };
    format!(
        r#"{{"format_version": 1, "seed": {seed}, "strategy": "bc", "elapsed_s": 1.0, "build_s": 0.5,
            "shards": ["{shard}"],
            "types": [{{"path": "{path}", "tests_run": 10,
                "pairs": [{{"methods": ["add", "add"], "group": "high", "tried": 10, "covered": 4}}],
                "violations": {violations}, "skipped": []}}]}}"#
    )
}

#[test]
fn merging_shard_reports_joins_them_and_exits_2_on_a_violation() {
    let sandbox = Sandbox::empty();
    let a = sandbox.write("a.json", &shard_report(7, "0/2", "k::A", true));
    let b = sandbox.write("b.json", &shard_report(7, "1/2", "k::B", false));
    let run = sandbox.covcon(&[
        "report",
        "--merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        "merged",
        "--report",
        "html",
        "--report",
        "junit",
    ]);
    check(
        &run,
        2,
        &["PANIC add ‖ add", "k::B", "1 violation in 2 types"],
    );
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sandbox.path("merged/report.json")).unwrap())
            .unwrap();
    assert_eq!(merged["types"].as_array().unwrap().len(), 2);
    assert_eq!(merged["shards"], serde_json::json!(["0/2", "1/2"]));
    let html = std::fs::read_to_string(sandbox.path("merged/report.html")).unwrap();
    assert!(html.contains("lost &lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<script>alert"));
    let junit = std::fs::read_to_string(sandbox.path("merged/junit.xml")).unwrap();
    assert!(junit.contains("<testsuite name=\"k::A\""), "{junit}");
}

#[test]
fn a_saved_baseline_suppresses_known_violations() {
    let sandbox = Sandbox::empty();
    let a = sandbox.write("a.json", &shard_report(7, "0/1", "k::A", true));
    let a = a.to_str().unwrap();
    sandbox.write(
        "baseline.json",
        r#"{"format_version": 1, "violations": [{"type": "k::A", "methods": ["add", "add"], "kind": "panic"}]}"#,
    );
    let run = sandbox.covcon(&[
        "report",
        "--merge",
        a,
        "--baseline",
        "baseline.json",
        "--out",
        "o",
    ]);
    check(&run, 0, &["(known, in baseline)"]);
    let other = r#"{"format_version": 1, "violations": [{"type": "k::A", "methods": ["add", "add"], "kind": "deadlock"}]}"#;
    sandbox.write("other.json", other);
    let run = sandbox.covcon(&[
        "report",
        "--merge",
        a,
        "--baseline",
        "other.json",
        "--out",
        "o",
    ]);
    check(&run, 2, &[]);
}

#[test]
fn merging_overlapping_shards_is_a_usage_error() {
    let sandbox = Sandbox::empty();
    let a = sandbox.write("a.json", &shard_report(7, "0/2", "k::A", false));
    let run = sandbox.covcon(&[
        "report",
        "--merge",
        a.to_str().unwrap(),
        a.to_str().unwrap(),
        "--out",
        "o",
    ]);
    check(&run, 1, &["appears in more than one report"]);
}

#[test]
fn merging_a_file_that_is_not_a_report_exits_1() {
    let sandbox = Sandbox::empty();
    let a = sandbox.write("a.json", "{\"hello\": 1}");
    let run = sandbox.covcon(&["report", "--merge", a.to_str().unwrap()]);
    check(&run, 1, &["is not a covcon JSON report"]);
}

#[test]
fn annotations_are_printed_inside_github_actions() {
    let sandbox = Sandbox::empty();
    let a = sandbox.write("a.json", &shard_report(7, "0/1", "k::A", true));
    let output = Command::new(env!("CARGO_BIN_EXE_cargo-covcon"))
        .args(["covcon", "report", "--merge", a.to_str().unwrap(), "--out"])
        .arg(sandbox.path("o"))
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("::error title=Thread-safety violation%3A A add | add::k::A: panic"),
        "{stdout}"
    );
}
