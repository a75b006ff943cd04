//! `cargo covcon mutants`: concurrency mutation testing. Every mutant the oracle makes of the
//! selected types (`oracle::Mutant`: a split critical section, a guard released before the
//! end of its section or taken after the statement that follows it, a swapped lock order, an
//! atomic read-modify-write done as a load and a store, a condition wait's `while` made `if`,
//! a notify left out, a retried compare-and-swap's failure taken for a success, a publishing
//! store made before the write) is compiled into one instrumented copy as a mutant schema;
//! then each is judged, one after the other, by a covcon campaign on its type (or by the
//! user's own command, `--test-cmd`; or by both, `--compare`, [`compare`]), with
//! `COVCON_MUTANT` naming it. Outcomes, as cargo-mutants has
//! them: caught, missed, unviable (the copy did not compile with it), timeout (`--test-cmd`
//! only), and skipped (its type cannot be driven, or already fails unmutated); and
//! equivalent (the analysis shows no test can tell it from the original), not judged.
//!
//! Output goes to `<target>/covcon/mutants.out/` (the previous one kept as `mutants.out.old`):
//! `mutants.json`, `outcomes.json`, `caught.txt`, `missed.txt` (with each missed mutant's
//! diff), `timeout.txt`, `unviable.txt`, `skipped.txt`, `equivalent.txt`, `diff/ID.diff`, `report.html`, and
//! `log/ID.log` with `--test-cmd` or `--compare`, and `compare.txt` with `--compare`.
//!
//! This file is the command: the session, which mutants to judge, and the exit code.
//! `model.rs` holds what it finds (outcomes, baselines, scores, the report), `judge.rs` judges
//! the mutants (by campaign or by command), `report.rs` shows progress and renders the
//! report (terminal, files, HTML), `compare.rs` sets the two judges of `--compare` side by side.

mod compare;
mod judge;
mod model;
mod report;

use crate::cli::MutantsArgs;
use crate::exit_code::{usage_error, ExitCode};
use crate::options::{parse_duration, Console, OracleOptions, DEFAULT_STRATEGY};
use crate::output::stdout;
use crate::session::{interrupt_flag, Prepared, Session};
use crate::workspace::{self, WorkspaceOptions};
use anyhow::Result;
use generator::{CampaignConfig, Strategy};
use judge::{judged_through, through_mark, Judge};
use model::{MutantsReport, Score};
use oracle::{Mutant, Operator};
use report::{rotate, terminal, write_outputs};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

pub fn mutants(args: &MutantsArgs) -> Result<ExitCode> {
    let start = Instant::now();
    let console = Console::new(&args.output);
    let budget = parse_duration(&args.budget)
        .map_err(|e| usage_error(format_args!("invalid --budget: {e}")))?;
    let timeout = args
        .timeout
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(|e| usage_error(format_args!("invalid --timeout: {e}")))?;
    let operators = parse_operators(&args.operators)?;
    let changed = args
        .change
        .diff(&args.workspace)?
        .map(|text| crate::diff::added_lines(&text));
    let workspace = workspace::load(&WorkspaceOptions::new(&args.workspace))?;
    let covcon_dir = workspace.target_dir.join("covcon");
    // Workers, the test timeout and the scheduling as a run would have them: `-j` over
    // `[..metadata.covcon]`.
    let oracle = OracleOptions::mutants(
        args,
        &console,
        &workspace.run_config(),
        &workspace.target_dir,
    )?;
    let session = Session::new(workspace, &args.types, &oracle);
    let workspace = &session.workspace;
    let selection = &session.selection;
    if selection.types.is_empty() {
        return Err(usage_error("no testable thread-safe type selected"));
    }
    console.note("mutants: building the copy with every mutant compiled in (once; reused while the code is unchanged)");
    let prepared = session.prepare_mutants()?;
    let harness = &prepared.harness;
    let chosen: Vec<&Mutant> = harness
        .mutants
        .iter()
        .filter(|m| operators.contains(&m.operator))
        .filter(|m| {
            changed
                .as_ref()
                .is_none_or(|c| touches(c, m, &workspace.root))
        })
        .collect();
    console.note(format_args!(
        "mutants: {} mutant(s) of {} type(s){}, {} unviable, {} equivalent; harness {}",
        chosen.len(),
        selection.types.len(),
        if changed.is_some() {
            " on changed lines"
        } else {
            ""
        },
        chosen
            .iter()
            .filter(|m| harness.unviable.contains_key(&m.id))
            .count(),
        chosen.iter().filter(|m| m.equivalent.is_some()).count(),
        if harness.cached {
            "cached".to_string()
        } else {
            format!("built in {:.1}s", harness.build_secs)
        }
    ));
    if args.list {
        stdout(&list_text(&chosen, &prepared));
        return Ok(ExitCode::Success);
    }
    let out = covcon_dir.join("mutants.out");
    rotate(&out)?;
    let stop = interrupt_flag(&console);
    let judge = Judge {
        session: &session,
        prepared: &prepared,
        chosen: &chosen,
        stop: &stop,
        console: &console,
        out: &out,
    };
    // The command first: when it fails on the unmutated code, no campaign is spent.
    let compared = match &args.compare {
        Some(cmd) => {
            console.note(format_args!(
                "mutants: judging with `{cmd}` first, then with covcon"
            ));
            Some((cmd, judge.by_command(cmd, timeout, &covcon_dir)?))
        }
        None => None,
    };
    let (baseline, outcomes) = match &args.test_cmd {
        Some(cmd) => judge.by_command(cmd, timeout, &covcon_dir)?,
        None => {
            let campaign = CampaignConfig {
                time_budget: budget,
                stop: stop.clone(),
                scoped_tests: generator::scoped_tests(session.oracle.results.is_some()),
                ..campaign_config(args)?
            };
            judge.by_campaign(campaign)?
        }
    };
    let report = MutantsReport {
        judge: args
            .test_cmd
            .clone()
            .unwrap_or_else(|| format!("covcon (oracle {:?})", args.oracle).to_lowercase()),
        seed: args.seed,
        budget_s: budget.as_secs_f64(),
        elapsed_s: start.elapsed().as_secs_f64(),
        build_s: harness.build_secs,
        interrupted: stop.raised(),
        total: Score::of("all", &outcomes),
        operators: Score::by_operator(&outcomes),
        types: Score::by_type(&outcomes),
        compare: compared.map(|(cmd, (base, theirs))| {
            compare::Comparison::new(cmd.clone(), base, &outcomes, theirs)
        }),
        baseline,
        outcomes,
    };
    write_outputs(&out, &report)?;
    stdout(&terminal(&report, console.verbose > 0));
    console.note(format_args!("mutants: wrote {}", out.display()));
    Ok(exit_code(&report))
}

/// What `--list` prints: each mutant chosen, with what judges it when not its own type.
fn list_text(chosen: &[&Mutant], prepared: &Prepared) -> String {
    let (runnable, drivable) = (&prepared.runnable, &prepared.drivable);
    let mut text = String::new();
    for m in chosen {
        let mark = if prepared.harness.unviable.contains_key(&m.id) {
            " (unviable)".to_string()
        } else if m.equivalent.is_some() {
            " (equivalent)".to_string()
        } else {
            through_mark(
                &m.type_path,
                &judged_through(&m.type_path, &m.method, runnable, &drivable.types),
            )
        };
        let _ = writeln!(text, "{:>4}  {}{mark}", m.id, m.name);
    }
    text
}

/// The campaign of each mutant (and of each type unmutated) as the command line sets it, but
/// for its time budget and stop flag.
fn campaign_config(args: &MutantsArgs) -> Result<CampaignConfig> {
    let strategy: Strategy = DEFAULT_STRATEGY.parse().map_err(usage_error)?;
    Ok(CampaignConfig {
        strategy,
        seed: args.seed,
        max_tests_per_type: args.max_tests,
        batch_size: 16,
        types: BTreeMap::new(),
        // Any violation catches the mutant, confirmed or not.
        stop_at_unconfirmed: true,
        ..CampaignConfig::default()
    })
}

/// Interrupted, or mutants missed (with `--compare`: missed by both judges), or none.
fn exit_code(report: &MutantsReport) -> ExitCode {
    if report.interrupted {
        ExitCode::Interrupted
    } else if let Some(c) = &report.compare {
        // The question is what gets through both judges.
        if c.neither.is_empty() {
            ExitCode::Success
        } else {
            ExitCode::Violations
        }
    } else if report.total.missed > 0 {
        ExitCode::Violations
    } else {
        ExitCode::Success
    }
}

/// `--operators`: names of `Operator::ALL`; all when empty.
fn parse_operators(names: &[String]) -> Result<Vec<Operator>> {
    if names.is_empty() {
        return Ok(Operator::ALL.to_vec());
    }
    names
        .iter()
        .map(|n| {
            Operator::ALL
                .into_iter()
                .find(|op| op.as_str() == n.trim())
                .ok_or_else(|| {
                    let known: Vec<&str> = Operator::ALL.iter().map(|o| o.as_str()).collect();
                    usage_error(format_args!(
                        "unknown operator `{n}`; known: {}",
                        known.join(", ")
                    ))
                })
        })
        .collect()
}

/// Whether a mutant's lines (its diff's old side) include a line the diff adds. Paths match
/// when one ends with the other: a diff names files from the repository's root, which may be
/// above the workspace's.
fn touches(changed: &crate::diff::Lines, m: &Mutant, root: &Path) -> bool {
    let lines = m
        .diff
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"));
    let last = m.line + (lines.count() as u32).max(1) - 1;
    crate::diff::touches(changed, &m.file, m.line, last, root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::mutant;
    use std::collections::BTreeSet;

    #[test]
    fn a_mutant_is_on_a_changed_line_when_its_lines_meet_one_the_diff_adds() {
        let m = mutant(
            Operator::SwapLockOrder,
            20,
            "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -20,2 +20,1 @@\n-        let a = x;\n-        let b = y;\n+        let b = y; let a = x;\n".into(),
        );
        let root = Path::new("/repo/ws");
        let changed =
            |path: &str, line| BTreeMap::from([(path.to_string(), BTreeSet::from([line]))]);
        assert!(touches(&changed("ws/src/lib.rs", 21), &m, root));
        assert!(touches(&changed("src/lib.rs", 20), &m, root));
        assert!(!touches(&changed("ws/src/lib.rs", 22), &m, root));
        assert!(!touches(&changed("ws/src/other.rs", 20), &m, root));
    }
}
