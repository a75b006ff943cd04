//! The terminal report: per type what was found, each violation with its outcome, the test as
//! a prefix and two columns side by side, and where the reproducer is.

use super::{Kind, Report, TypeReport, UntestedKind, ViolationReport};
use generator::display::Reading;
use std::fmt::Write;

/// How much to say and whether to colour it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    pub color: bool,
    /// -1 quiet, 0 normal, 1+ verbose.
    pub verbosity: i8,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    fn red(&self, text: &str) -> String {
        self.paint("1;31", text)
    }
    fn yellow(&self, text: &str) -> String {
        self.paint("33", text)
    }
    fn green(&self, text: &str) -> String {
        self.paint("32", text)
    }
    fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }
    fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }
}

pub fn render(report: &Report, style: Style) -> String {
    let mut out = String::new();
    for t in &report.types {
        if style.verbosity < 0 && t.violations.is_empty() {
            continue;
        }
        render_type(&mut out, t, style);
    }
    for d in &report.diagnostics {
        let _ = writeln!(out, "{} {d}", style.yellow("warning:"));
    }
    let _ = writeln!(out, "{}", summary(report, style));
    out
}

/// The last line: counts, time and the seed to repeat the run.
pub fn summary(report: &Report, style: Style) -> String {
    let total: usize = report.types.iter().map(|t| t.violations.len()).sum();
    let new = report.new_violations();
    let unconfirmed = report.unconfirmed_violations();
    let tests: u64 = report.types.iter().map(|t| t.tests_run).sum();
    let found = match (total, new) {
        (0, _) => style.green("no violations"),
        (t, n) if t == n => style.red(&format!("{t} violation{}", plural(t))),
        (t, n) => {
            let mut parts = vec![format!("{n} new")];
            if unconfirmed > 0 {
                parts.push(format!("{unconfirmed} unconfirmed"));
            }
            if t - n - unconfirmed > 0 {
                parts.push(format!("{} in baseline", t - n - unconfirmed));
            }
            let text = format!("{t} violation{} ({})", plural(t), parts.join(", "));
            if n > 0 {
                style.red(&text)
            } else {
                style.yellow(&text)
            }
        }
    };
    // The whole run's time includes the harness build; say so when there was one.
    let build = if report.build_s >= 0.05 {
        format!(" (harness build {:.1}s)", report.build_s)
    } else {
        String::new()
    };
    let mut line = format!(
        "{} {found} in {} type{}, {tests} tests, {:.1}s{build}",
        style.bold("covcon:"),
        report.types.len(),
        plural(report.types.len()),
        report.elapsed_s
    );
    // Only the first kind fails `--fail-on-untested`; the others are said apart from it.
    for (kind, label) in [
        (UntestedKind::Missed, "untested"),
        (UntestedKind::NothingToTest, "with nothing to test"),
        (UntestedKind::Internal, "internal"),
        (UntestedKind::Handle, "tested as handles"),
    ] {
        let n = report.untested_of(kind).count();
        if n > 0 {
            let _ = write!(line, ", {n} {label}");
        }
    }
    if report.interrupted {
        line.push_str(", interrupted");
    }
    let _ = write!(
        line,
        "; seed {} (repeat with --seed {})",
        report.seed, report.seed
    );
    line
}

fn render_type(out: &mut String, t: &TypeReport, style: Style) {
    if let (Some(why), Some(kind)) = (&t.untested, t.untested_kind()) {
        let label = format!("{}:", kind.label());
        let label = match kind {
            UntestedKind::Missed => style.yellow(&label),
            UntestedKind::NothingToTest | UntestedKind::Internal | UntestedKind::Handle => {
                style.dim(&label)
            }
        };
        let _ = writeln!(out, "{}  {label} {why}", style.bold(&t.path));
        return;
    }
    let verdict = match t.violations.len() {
        0 => style.green("ok"),
        n => style.red(&format!("{n} violation{}", plural(n))),
    };
    let explored = match t.pairs_fully_explored() {
        0 => String::new(),
        n => format!(", {n} fully explored"),
    };
    let runs = match t.runs {
        0 => String::new(),
        n => format!(" ({n} runs)"),
    };
    let _ = writeln!(
        out,
        "{}  {} tests{runs}, {}/{} pairs covered{explored}, {verdict}",
        style.bold(&t.path),
        t.tests_run,
        t.pairs_covered(),
        t.pairs_worth()
    );
    if t.own_threads {
        let _ = writeln!(
            out,
            "  {}",
            style.dim(
                "runs threads of its own: results compared only where fast and slow \
                 sequential runs of the same calls agree"
            )
        );
    }
    for note in t.notes() {
        let _ = writeln!(out, "  {}", style.dim(&note));
    }
    for v in t.violations.iter().filter(|v| !v.unconfirmed()) {
        render_violation(out, v, t.reading(), style);
    }
    let unconfirmed: Vec<&ViolationReport> =
        t.violations.iter().filter(|v| v.unconfirmed()).collect();
    if !unconfirmed.is_empty() {
        let _ = writeln!(
            out,
            "  {}",
            style.yellow("unconfirmed (no re-run repeated it; fails the gate only with --strict):")
        );
        for v in unconfirmed {
            render_violation(out, v, t.reading(), style);
        }
    }
    // A type whose doc makes all of it approximate is said once, not method by method, and
    // so is a crate whose doc makes its whole-structure reads approximate.
    let (by_type, own): (Vec<_>, Vec<_>) = t.approximate.iter().partition(|a| {
        matches!(
            a.why,
            analysis::Approximation::TypeDoc { .. } | analysis::Approximation::CrateDoc { .. }
        )
    });
    if let Some(first) = by_type.first() {
        let names: Vec<String> = by_type.iter().map(|a| format!("`{}`", a.method)).collect();
        let which = match first.why {
            analysis::Approximation::CrateDoc { .. } => format!(" ({})", names.join(", ")),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {} the answers of {} methods{which}, nor the final state ({})",
            style.dim("results not compared:"),
            by_type.len(),
            first.why
        );
    }
    for a in own {
        let _ = writeln!(out, "  {} {a}", style.dim("results not compared:"));
    }
    for c in &t.contended {
        let _ = writeln!(
            out,
            "  {} {c}",
            style.dim("failures on a held lock not judged:")
        );
    }
    if style.verbosity > 0 {
        for p in &t.pairs {
            let explored = p
                .explored
                .as_ref()
                .map(|e| format!("; {}", e.describe()))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {} {} ‖ {}: {} tests aimed at it, overlapped in {} runs{explored}",
                style.dim(&format!("{:?}", p.group).to_lowercase()),
                p.methods[0],
                p.methods[1],
                p.tried,
                p.covered
            );
        }
        for s in &t.skipped {
            let _ = writeln!(out, "  {} {s}", style.dim("skipped:"));
        }
    } else if !t.skipped.is_empty() && style.verbosity == 0 {
        let _ = writeln!(
            out,
            "  {}",
            style.dim(&format!("{} skipped (-v to list)", t.skipped.len()))
        );
    }
}

fn render_violation(out: &mut String, v: &ViolationReport, reading: Reading<'_>, style: Style) {
    let known = if v.known { " (known, in baseline)" } else { "" };
    let head = format!(
        "{} {} ‖ {}",
        v.kind.as_str().to_uppercase(),
        v.methods[0],
        v.methods[1]
    );
    let head = if v.known || v.unconfirmed() {
        style.yellow(&head)
    } else {
        style.red(&head)
    };
    let _ = writeln!(
        out,
        "  {head}{known}  found after {} test{} ({:.1}s)",
        v.tests_until_found,
        plural(v.tests_until_found as usize),
        v.seconds_until_found
    );
    let outcome = match (v.kind, &v.location) {
        (Kind::Panic, Some(at)) => format!("panicked at {at}: {}", v.message),
        (Kind::Panic, None) => format!("panicked: {}", v.message),
        (Kind::Deadlock, _) => format!("deadlocked: {}", v.message),
        (Kind::Crash, _) => format!("crashed: {}", v.message),
        (Kind::WrongResult, _) => format!("wrong results: {}", v.message),
    };
    for line in outcome.lines() {
        let _ = writeln!(out, "    {line}");
    }
    let evidence = v.evidence();
    if !evidence.is_empty() {
        let _ = writeln!(out, "    {}", style.dim(&evidence.join("; ")));
    }
    if let Some(test) = &v.test {
        let layout = generator::display::layout(test, &reading);
        for line in &layout.setup {
            let _ = writeln!(out, "    {line}");
        }
        let columns = [layout.column(0), layout.column(1)];
        let width = columns[0]
            .iter()
            .map(|l| l.chars().count())
            .chain([8])
            .max()
            .unwrap_or(8);
        let _ = writeln!(
            out,
            "    {}",
            style.dim(&format!("{:width$} │ thread 1", "thread 0"))
        );
        let rows = columns[0].len().max(columns[1].len());
        for i in 0..rows {
            let left = columns[0].get(i).copied().unwrap_or("");
            let right = columns[1].get(i).copied().unwrap_or("");
            let row = format!("    {left:width$} │ {right}");
            let _ = writeln!(out, "{}", row.trim_end());
        }
    }
    if let (Some(original), Some(test)) = (&v.original_test, &v.test) {
        let _ = writeln!(
            out,
            "    {}",
            style.dim(&format!(
                "shrunk from {} calls to {} (the original test is in report.json)",
                generator::method_calls(original),
                generator::method_calls(test)
            ))
        );
    }
    if let Some(path) = &v.reproducer {
        let _ = writeln!(out, "    reproducer: {}", path.display());
    }
    if let Some(path) = &v.replay {
        let _ = writeln!(
            out,
            "    replay with: cargo covcon replay {}",
            path.display()
        );
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    fn check(style: Style, expect: &str) {
        let actual = render(&sample::report(), style);
        assert_eq!(actual, expect, "actual:\n{actual}");
    }

    #[test]
    fn the_sample_report_renders_violations_side_by_side() {
        check(
            Style::default(),
            r#"bank::Account  1200 tests (1460 runs), 2/2 pairs covered, 1 fully explored, 1 violation
  PANIC deposit ‖ deposit  found after 17 tests (0.5s)
    panicked at bank/src/lib.rs:30:9: lost update <script>alert(1)</script> & more
    none of 6 sequential orders of the same calls fails this way; repeated in 7 of 20 re-runs
    let c0 = Account::new();
    c0.deposit(5);
    thread 0        │ thread 1
    c0.deposit(1)   │ c0.deposit(2)
    c0.check("<b>") │
    reproducer: target/covcon/violations/1.rs
    replay with: cargo covcon replay target/covcon/violations/1.json
  results not compared: `balance` (its doc says "The balance <may> be stale while others deposit.")
  failures on a held lock not judged: `try_withdraw` (its doc says "Returns `None` if the account <could not be locked>.")
  1 skipped (-v to list)
locks::Pair  50 tests, 1/1 pairs covered, 1 violation
  DEADLOCK ab ‖ ba (known, in baseline)  found after 3 tests (0.2s)
    deadlocked: thread 0 in ab, thread 1 in ba
    reproducer: target/covcon/violations/2.rs
odd::Generic  not tested: no constructor covcon can call
odd::Locked  nothing to test: every method pair was removed by the analysis: no two methods can run concurrently
odd::inner::Hidden  internal: not reachable from outside its crate: a `pub` type in a private module, not re-exported (struct `Hidden` is private)
covcon: 2 violations (1 new, 1 in baseline) in 5 types, 1250 tests, 12.5s (harness build 3.2s), 1 untested, 1 with nothing to test, 1 internal; seed 42 (repeat with --seed 42)
"#,
        );
    }

    /// A violation under a schedule says it replayed; one no re-run repeated goes under its
    /// own heading after the confirmed ones, and the summary counts it apart.
    #[test]
    fn scheduled_and_unconfirmed_violations_say_so() {
        let mut report = sample::report();
        let account = &mut report.types[0];
        let mut seen_once = account.violations[0].clone();
        account.violations[0].schedule = Some("pct-2, seed 7".into());
        account.violations[0].confirmed = Some([20, 20]);
        seen_once.methods = ["check".into(), "deposit".into()];
        seen_once.confirmed = Some([0, 20]);
        account.violations.push(seen_once);
        let text = render(&report, Style::default());
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("‖") || l.contains("replayed") || l.contains("unconfirmed"))
            .collect();
        assert_eq!(
            lines,
            [
                "  PANIC deposit ‖ deposit  found after 17 tests (0.5s)",
                "    none of 6 sequential orders of the same calls fails this way; replayed 20 of 20 times under schedule pct-2, seed 7",
                "  unconfirmed (no re-run repeated it; fails the gate only with --strict):",
                "  PANIC check ‖ deposit  found after 17 tests (0.5s)",
                "  DEADLOCK ab ‖ ba (known, in baseline)  found after 3 tests (0.2s)",
                "covcon: 3 violations (1 new, 1 unconfirmed, 1 in baseline) in 5 types, 1250 tests, 12.5s (harness build 3.2s), 1 untested, 1 with nothing to test, 1 internal; seed 42 (repeat with --seed 42)",
            ]
        );
    }

    /// A panic some sequential order shows at another call says so after "no order fails
    /// this way" (lasso 0.7.1's intern that answered `Err` before the second one panicked),
    /// so that a maintainer who runs that order and sees the panic is not told it never shows.
    #[test]
    fn a_panic_an_order_shows_at_another_call_says_so() {
        let mut report = sample::report();
        let found = &mut report.types[0].violations[0];
        found.same_panic_elsewhere = Some(oracle::same_panic_note(
            found.test.as_ref().expect("the sample has its test"),
            &[(1, 0), (0, 0)],
            (0, 0),
        ));
        let text = render(&report, Style::default());
        let evidence = text
            .lines()
            .find(|l| l.contains("sequential orders"))
            .expect("the evidence line");
        assert_eq!(
            evidence,
            "    none of 6 sequential orders of the same calls fails this way; but the order t2.1 t1.1 panics the same way at another call, t1.1 `deposit`: an earlier call of this run likely answered what no order answers; repeated in 7 of 20 re-runs"
        );
    }

    /// An unconfirmed crash says this test need not be its cause; a confirmed one, or an
    /// unconfirmed panic, does not.
    #[test]
    fn an_unconfirmed_crash_says_an_earlier_test_may_have_caused_it() {
        let hint = "an earlier test of the same worker";
        let says = |kind: Kind, confirmed: [u32; 2]| {
            let mut report = sample::report();
            let v = &mut report.types[0].violations[0];
            v.kind = kind;
            v.confirmed = Some(confirmed);
            render(&report, Style::default()).contains(hint)
        };
        assert!(says(Kind::Crash, [0, 20]));
        assert!(!says(Kind::Crash, [3, 20]));
        assert!(!says(Kind::Panic, [0, 20]));
    }

    /// A type with threads of its own, or whose panics only waiting alone explained, says so
    /// under its line; one without says nothing.
    #[test]
    fn own_threads_and_a_clock_outside_the_copy_are_said_under_the_type() {
        let lines = |own_threads: bool, clock_outside: u64| -> Vec<String> {
            let mut report = sample::report();
            report.types[0].own_threads = own_threads;
            report.types[0].clock_outside = clock_outside;
            let text = render(&report, Style::default());
            let mut lines = text.lines().skip_while(|l| !l.starts_with("bank::Account"));
            lines.next();
            lines
                .take_while(|l| !l.trim_start().starts_with("PANIC"))
                .map(|l| l.trim().to_string())
                .collect()
        };
        assert_eq!(lines(false, 0), Vec::<String>::new());
        assert_eq!(
            lines(true, 1),
            [
                "runs threads of its own: results compared only where fast and slow sequential \
                 runs of the same calls agree",
                "clock outside the copy: 1 failing run was explained only by a thread's calls \
                 alone with real pauses (verdicts use paced orders)",
            ]
        );
        assert_eq!(
            lines(false, 3),
            [
                "clock outside the copy: 3 failing runs were explained only by a thread's calls \
              alone with real pauses (verdicts use paced orders)"
            ]
        );
    }

    /// Failing runs whose verdict ran out of time are said under the type, not reported.
    #[test]
    fn failing_runs_not_judged_in_time_are_said_under_the_type() {
        let mut report = sample::report();
        report.types[0].unjudged = 2;
        let text = render(&report, Style::default());
        assert!(
            text.contains(
                "  2 failing runs not judged: the verdict's sequential orders ran out of time \
                 (a larger --time-budget judges them)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_summary_counts_only_missed_types_as_untested_and_older_reports_as_missed() {
        let cases = [
            (None, ", 1 untested;"),
            (Some(UntestedKind::Missed), ", 1 untested;"),
            (
                Some(UntestedKind::NothingToTest),
                ", 1 with nothing to test;",
            ),
            (Some(UntestedKind::Internal), ", 1 internal;"),
        ];
        for (kind, expect) in cases {
            let line = summary(&sample::only_untested(kind), Style::default());
            assert_eq!(
                line,
                format!("covcon: 2 violations (0 new, 2 in baseline) in 3 types, 1250 tests, 12.5s (harness build 3.2s){expect} seed 42 (repeat with --seed 42)"),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn quiet_output_shows_only_types_with_violations() {
        let actual = render(
            &sample::report(),
            Style {
                color: false,
                verbosity: -1,
            },
        );
        assert!(!actual.contains("odd::Generic"), "{actual}");
        assert!(actual.contains("bank::Account"), "{actual}");
    }

    #[test]
    fn verbose_output_lists_pairs_with_their_exploration_and_skipped_methods() {
        let actual = render(
            &sample::report(),
            Style {
                color: false,
                verbosity: 1,
            },
        );
        assert!(
            actual.contains(
                "  high deposit ‖ deposit: 400 tests aimed at it, overlapped in 380 runs"
            ),
            "{actual}"
        );
        assert!(
            actual.contains(
                "  low deposit ‖ balance: 300 tests aimed at it, overlapped in 250 runs; explored 38 of 38 schedules (at most 2 preemptions, one call per thread): none failed"
            ),
            "{actual}"
        );
        assert!(
            actual.contains("  skipped: method `export(&mut self)` takes &mut self"),
            "{actual}"
        );
    }
}
