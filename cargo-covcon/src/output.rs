//! What every command that produces a report shares: applying the baseline, writing the
//! report files, printing the terminal report and annotations, and the exit code. Below
//! `commands.rs`, `run.rs` and `bench.rs`, which all use it.

use crate::baseline::Baseline;
use crate::cli::ReportKind;
use crate::exit_code::ExitCode;
use crate::options::{Console, RunOptions};
use crate::report::{github, html, junit, sarif, terminal, Report, UntestedKind};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// What decides the exit code besides the report.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    pub baseline: Option<Baseline>,
    pub save_baseline: Option<PathBuf>,
    pub fail_on_untested: bool,
    /// Unconfirmed violations (repeated by no re-run) fail the run too.
    pub strict: bool,
}

impl Gate {
    pub fn new(options: &RunOptions) -> Gate {
        Gate {
            baseline: options.baseline.clone(),
            save_baseline: options.save_baseline.clone(),
            fail_on_untested: options.fail_on_untested,
            strict: options.strict,
        }
    }
}

/// Applies the baseline, writes every report, prints the terminal report and annotations,
/// and decides the exit code.
pub fn finish(
    report: &mut Report,
    kinds: &[ReportKind],
    out: &Path,
    gate: &Gate,
    console: &Console,
) -> Result<ExitCode> {
    if let Some(baseline) = &gate.baseline {
        baseline.apply(report);
    }
    write_reports(report, kinds, out, console)?;
    if let Some(path) = &gate.save_baseline {
        Baseline::of(report).save(path)?;
        console.note(format_args!(
            "covcon: baseline written to {}",
            path.display()
        ));
    }
    Ok(exit_code(report, gate))
}

/// Writes `report.json` (always) and the files `kinds` ask for under `out`, then prints the
/// terminal report and, inside GitHub Actions, annotations.
pub fn write_reports(
    report: &Report,
    kinds: &[ReportKind],
    out: &Path,
    console: &Console,
) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create `{}`", out.display()))?;
    let write = |name: &str, text: String| -> Result<PathBuf> {
        let path = out.join(name);
        std::fs::write(&path, text)
            .with_context(|| format!("cannot write `{}`", path.display()))?;
        Ok(path)
    };
    let json = write("report.json", report.to_json())?;
    let mut written = vec![json];
    if kinds.contains(&ReportKind::Html) {
        let source = |p: &Path| std::fs::read_to_string(p).ok();
        written.push(write("report.html", html::render(report, &source))?);
    }
    if kinds.contains(&ReportKind::Sarif) {
        written.push(write("report.sarif", sarif::render(report))?);
    }
    if kinds.contains(&ReportKind::Junit) {
        written.push(write("junit.xml", junit::render(report))?);
    }
    stdout(&terminal::render(report, console.stdout_style()));
    if github::enabled() {
        stdout(&github::render(report));
    }
    for path in written {
        console.note(format_args!("covcon: wrote {}", path.display()));
    }
    Ok(())
}

/// Writes to stdout; a closed pipe (`cargo covcon list | head`) is not an error, and the
/// exit code still reflects the run.
pub fn stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// 2 for new confirmed violations (or, under `--strict`, unconfirmed ones too; under
/// `--fail-on-untested`, types covcon could not test: not those with nothing to test or only
/// their own crate can reach), else 0.
pub fn exit_code(report: &Report, gate: &Gate) -> ExitCode {
    let missed = || {
        report
            .untested()
            .any(|t| t.untested_kind().is_some_and(UntestedKind::fails_gate))
    };
    let unconfirmed = gate.strict && report.unconfirmed_violations() > 0;
    if report.new_violations() > 0 || unconfirmed || (gate.fail_on_untested && missed()) {
        ExitCode::Violations
    } else {
        ExitCode::Success
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    fn check(report: Report, fail_on_untested: bool, expect: ExitCode) {
        let gate = Gate {
            fail_on_untested,
            ..Gate::default()
        };
        assert_eq!(exit_code(&report, &gate), expect);
    }

    /// A violation no re-run repeated is reported but fails the gate only under `--strict`;
    /// one repeated once, or never re-run (confirmation off), fails it as before.
    #[test]
    fn unconfirmed_violations_fail_the_gate_only_when_strict() {
        let cases = [
            (Some([0, 20]), ExitCode::Success, ExitCode::Violations),
            (Some([1, 20]), ExitCode::Violations, ExitCode::Violations),
            (None, ExitCode::Violations, ExitCode::Violations),
        ];
        for (confirmed, lenient, strict) in cases {
            let mut report = sample::report();
            for t in &mut report.types {
                for v in &mut t.violations {
                    v.known = false;
                    v.confirmed = confirmed;
                }
            }
            for (strict_gate, expect) in [(false, lenient), (true, strict)] {
                let gate = Gate {
                    strict: strict_gate,
                    ..Gate::default()
                };
                assert_eq!(
                    exit_code(&report, &gate),
                    expect,
                    "{confirmed:?} {strict_gate}"
                );
            }
        }
    }

    #[test]
    fn new_violations_exit_2() {
        check(sample::report(), false, ExitCode::Violations);
    }

    #[test]
    fn known_violations_and_untested_types_exit_0() {
        let mut report = sample::report();
        Baseline::of(&report).apply(&mut report);
        check(report, false, ExitCode::Success);
    }

    #[test]
    fn untested_types_exit_2_with_fail_on_untested() {
        let mut report = sample::report();
        Baseline::of(&report).apply(&mut report);
        check(report, true, ExitCode::Violations);
    }

    #[test]
    fn only_types_covcon_missed_fail_the_gate_and_older_reports_count_as_missed() {
        use ExitCode::{Success, Violations};
        let cases = [
            (None, Success, Violations),
            (Some(UntestedKind::Missed), Success, Violations),
            (Some(UntestedKind::NothingToTest), Success, Success),
            (Some(UntestedKind::Internal), Success, Success),
        ];
        for (kind, without, with) in cases {
            check(sample::only_untested(kind), false, without);
            check(sample::only_untested(kind), true, with);
        }
    }
}
