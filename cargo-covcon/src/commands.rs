//! The subcommands other than the campaign itself: `analyze`, `list`, `report --merge` and
//! `replay`, plus what every command shares: writing reports and deciding the exit code.

use crate::baseline::Baseline;
use crate::cli::{
    AnalyzeArgs, AnalyzeFormat, Args, Command, ListArgs, ReplayArgs, ReportArgs, ReportKind,
};
use crate::exit_code::{usage_error, ExitCode, OrExit};
use crate::options::{Console, RunOptions};
use crate::report::{self, github, html, junit, terminal, Report, UntestedKind};
use crate::select;
use crate::shard::Shard;
use crate::workspace::{self, Workspace, WorkspaceOptions};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub fn dispatch(args: Args) -> Result<ExitCode> {
    match args.command {
        None => run_command(&args.run),
        Some(Command::Run(run)) => run_command(&run),
        Some(Command::Analyze(a)) => analyze(&a),
        Some(Command::List(l)) => list(&l),
        Some(Command::Replay(r)) => replay(&r),
        Some(Command::Report(r)) => merge(&r),
        Some(Command::Bench(b)) => crate::bench::bench(&b),
    }
}

fn run_command(args: &crate::cli::RunArgs) -> Result<ExitCode> {
    let console = Console::new(&args.output);
    let workspace = workspace::load(&WorkspaceOptions::new(&args.workspace))?;
    let options = RunOptions::new(args, console, &workspace)?;
    crate::run::run(&options, &workspace)
}

/// Loads the workspace and runs the analysis on the selected packages.
pub fn load_model(options: &WorkspaceOptions) -> Result<(Workspace, analysis::Model)> {
    let workspace = workspace::load(options)?;
    let model = workspace.analyze();
    Ok((workspace, model))
}

/// Keeps the types the command line and configuration select.
fn filter_types(model: &mut analysis::Model, workspace: &Workspace, patterns: &[String]) {
    model
        .types
        .retain(|t| select::wanted(t, patterns, &workspace.config_for(&t.package)));
}

fn analyze(args: &AnalyzeArgs) -> Result<ExitCode> {
    let (workspace, mut model) = load_model(&WorkspaceOptions::new(&args.workspace))?;
    filter_types(&mut model, &workspace, &args.types);
    match args.format {
        AnalyzeFormat::Json => stdout(&(serde_json::to_string_pretty(&model)? + "\n")),
        AnalyzeFormat::Text => stdout(&analysis::summary(&model)),
    }
    Ok(ExitCode::Success)
}

fn list(args: &ListArgs) -> Result<ExitCode> {
    let (workspace, mut model) = load_model(&WorkspaceOptions::new(&args.workspace))?;
    filter_types(&mut model, &workspace, &args.types);
    if let Some(shard) = &args.shard {
        let shard: Shard = shard.parse().map_err(usage_error)?;
        let keep = shard.select(model.types.iter().map(|t| t.path.as_str()));
        let keep: Vec<String> = keep.into_iter().map(str::to_owned).collect();
        model.types.retain(|t| keep.contains(&t.path));
    }
    stdout(&list_text(&model));
    Ok(ExitCode::Success)
}

/// Each type on a line, then each of its methods on an indented line; methods covcon cannot
/// call say why.
pub fn list_text(model: &analysis::Model) -> String {
    let mut out = String::new();
    for t in &model.types {
        out.push_str(&t.path);
        if !t.supported {
            out.push_str(&format!(
                "  (not testable: {})",
                t.reason
                    .as_ref()
                    .map_or_else(|| "unknown reason".to_string(), |r| r.to_string())
            ));
        }
        out.push('\n');
        for m in &t.methods {
            let params: Vec<String> = m
                .params
                .iter()
                .map(|p| format!("{}: {}", p.name, p.ty))
                .collect();
            let mut line = format!("    {}({})", m.name, params.join(", "));
            if let Some(r) = &m.returns {
                line.push_str(&format!(" -> {r}"));
            }
            if !m.supported {
                line.push_str(&format!(
                    "  (skipped: {})",
                    m.reason
                        .as_ref()
                        .map_or_else(|| "unsupported".to_string(), |r| r.to_string())
                ));
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

fn merge(args: &ReportArgs) -> Result<ExitCode> {
    let console = Console::new(&args.output);
    let mut reports = Vec::new();
    for path in &args.merge {
        reports.push((path.clone(), Report::load(path).or_exit(ExitCode::Usage)?));
    }
    let mut merged = report::merge(reports).map_err(usage_error)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("target").join("covcon"));
    let gate = Gate {
        baseline: args.baseline.clone(),
        save_baseline: None,
        fail_on_untested: args.fail_on_untested,
    };
    finish(&mut merged, &args.reports, &out, &gate, &console)
}

fn replay(args: &ReplayArgs) -> Result<ExitCode> {
    let console = Console::new(&args.output);
    crate::run::replay(
        &args.file,
        args.runs,
        &WorkspaceOptions::new(&args.workspace),
        &console,
    )
}

/// What decides the exit code besides the report.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    pub baseline: Option<PathBuf>,
    pub save_baseline: Option<PathBuf>,
    pub fail_on_untested: bool,
}

impl Gate {
    pub fn new(options: &RunOptions) -> Gate {
        Gate {
            baseline: options.baseline.clone(),
            save_baseline: options.save_baseline.clone(),
            fail_on_untested: options.fail_on_untested,
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
    if let Some(path) = &gate.baseline {
        Baseline::load(path).or_exit(ExitCode::Usage)?.apply(report);
    }
    write_reports(report, kinds, out, console)?;
    if let Some(path) = &gate.save_baseline {
        Baseline::of(report).save(path)?;
        console.note(format_args!(
            "covcon: baseline written to {}",
            path.display()
        ));
    }
    Ok(exit_code(report, gate.fail_on_untested))
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

/// 2 for new violations (or, under `--fail-on-untested`, types covcon could not test: not
/// those with nothing to test or only their own crate can reach), else 0.
pub fn exit_code(report: &Report, fail_on_untested: bool) -> ExitCode {
    let missed = || {
        report
            .untested()
            .any(|t| t.untested_kind().is_some_and(UntestedKind::fails_gate))
    };
    if report.new_violations() > 0 || (fail_on_untested && missed()) {
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
        assert_eq!(exit_code(&report, fail_on_untested), expect);
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
