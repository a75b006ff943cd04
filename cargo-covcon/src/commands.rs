//! The top of the binary: dispatching the subcommands, and those other than the campaign
//! itself (`analyze`, `list`, `report --merge`, `replay`). Writing reports and the exit code
//! are `output.rs`'s; the campaign is `run.rs`'s and the benchmark `bench.rs`'s.

use crate::baseline::Baseline;
use crate::cli::{AnalyzeArgs, AnalyzeFormat, Args, Command, ListArgs, ReplayArgs, ReportArgs};
use crate::exit_code::{usage_error, ExitCode, OrExit};
use crate::options::{Console, RunOptions};
use crate::output::{finish, stdout, Gate};
use crate::report::{self, Report};
use crate::select;
use crate::shard::Shard;
use crate::workspace::{self, Workspace, WorkspaceOptions};
use anyhow::Result;
use std::path::PathBuf;

pub fn dispatch(args: Args) -> Result<ExitCode> {
    match args.command {
        None => run_command(&args.run),
        Some(Command::Run(run)) => run_command(&run),
        Some(Command::Analyze(a)) => analyze(&a),
        Some(Command::List(l)) => list(&l),
        Some(Command::Replay(r)) => replay(&r),
        Some(Command::Report(r)) => merge(&r),
        Some(Command::Bench(b)) => crate::bench::bench(&b),
        Some(Command::Mutants(m)) => crate::mutants::mutants(&m),
    }
}

fn run_command(args: &crate::cli::RunArgs) -> Result<ExitCode> {
    let console = Console::new(&args.output);
    let workspace = workspace::load(&WorkspaceOptions::new(&args.workspace))?;
    let options = RunOptions::new(args, console, &workspace)?;
    crate::run::run(&options, workspace)
}

/// Loads the workspace and runs the analysis on the selected packages.
pub fn load_model(options: &WorkspaceOptions) -> Result<(Workspace, analysis::Model)> {
    let workspace = workspace::load(options)?;
    let model = workspace.analyze();
    Ok((workspace, model))
}

/// Keeps the types the command line and configuration select, with the methods the
/// configuration calls approximate or exact marked so.
fn filter_types(model: &mut analysis::Model, workspace: &Workspace, patterns: &[String]) {
    model
        .types
        .retain(|t| select::wanted(t, patterns, &workspace.config_for(&t.package)));
    for t in &mut model.types {
        select::configure_answers(t, &workspace.config_for(&t.package));
    }
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
    if let Some(text) = args.change.diff(&args.workspace)? {
        let changed = crate::diff::touched_lines(&text);
        let types: Vec<&analysis::TypeModel> = model.types.iter().collect();
        let testable: Vec<bool> = types.iter().map(|t| t.supported()).collect();
        let touched = crate::diff::touched_types(&changed, &types, &testable, &workspace.root);
        let mut touched = touched.into_iter();
        model.types.retain(|_| touched.next().unwrap_or(false));
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
        if !t.supported() {
            out.push_str(&format!(
                "  (not testable: {})",
                t.reason
                    .as_ref()
                    .map_or_else(|| "unknown reason".to_string(), |r| r.to_string())
            ));
        } else if t.confined {
            out.push_str(
                "  (not Sync: one thread owns it, the other calls the handles it hands out)",
            );
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
            if !m.supported() {
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
        baseline: Baseline::load_given(args.baseline.as_deref())?,
        save_baseline: None,
        fail_on_untested: args.fail_on_untested,
        strict: args.strict,
    };
    finish(&mut merged, &args.reports, &out, &gate, &console)
}

fn replay(args: &ReplayArgs) -> Result<ExitCode> {
    let console = Console::new(&args.output);
    crate::run::replay(args, &console)
}
