//! Arguments and configuration converted once into the options the commands use.
//!
//! The command line wins over `[package.metadata.covcon]`, which wins over
//! `[workspace.metadata.covcon]`, which wins over the defaults. Nothing below this module looks
//! at clap types or metadata tables.

use crate::baseline::Baseline;
use crate::cli::{
    BenchArgs, ColorChoice, MutantsArgs, OracleKind, OutputArgs, ReplayArgs, ReportKind, RunArgs,
    WorkspaceArgs,
};
use crate::config::Config;
use crate::exit_code::usage_error;
use crate::report::terminal::Style;
use crate::shard::Shard;
use crate::workspace::{Workspace, WorkspaceOptions};
use anyhow::Result;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The strategies the generator offers, and the one used when none is asked for.
pub const STRATEGIES: [&str; 4] = ["covcon", "bc", "random", "naive"];
pub const DEFAULT_STRATEGY: &str = "bc";
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(60);

/// How much to print and in which colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Console {
    pub quiet: bool,
    pub verbose: u8,
    pub color_stdout: bool,
    pub color_stderr: bool,
    /// Whether stderr is a terminal (progress bars) or not (plain lines).
    pub stderr_is_terminal: bool,
}

impl Console {
    pub fn new(args: &OutputArgs) -> Console {
        let choice =
            args.color
                .or_else(|| match std::env::var("CARGO_TERM_COLOR").ok()?.as_str() {
                    "always" => Some(ColorChoice::Always),
                    "never" => Some(ColorChoice::Never),
                    _ => None,
                });
        let env_set =
            |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
        let stderr_is_terminal = std::io::stderr().is_terminal();
        let color = |is_terminal: bool| match choice {
            Some(ColorChoice::Always) => true,
            Some(ColorChoice::Never) => false,
            _ if env_set("NO_COLOR") => false,
            _ if env_set("CLICOLOR_FORCE") => true,
            _ => is_terminal,
        };
        Console {
            quiet: args.quiet,
            verbose: args.verbose,
            color_stdout: color(std::io::stdout().is_terminal()),
            color_stderr: color(stderr_is_terminal),
            stderr_is_terminal,
        }
    }

    pub fn verbosity(&self) -> i8 {
        if self.quiet {
            -1
        } else {
            self.verbose.min(3) as i8
        }
    }

    pub fn stdout_style(&self) -> Style {
        Style {
            color: self.color_stdout,
            verbosity: self.verbosity(),
        }
    }

    /// A note on stderr, unless quiet.
    pub fn note(&self, text: impl std::fmt::Display) {
        if !self.quiet {
            eprintln!("{text}");
        }
    }

    pub fn warn(&self, text: impl std::fmt::Display) {
        if self.color_stderr {
            eprintln!("\x1b[1;33mwarning:\x1b[0m {text}");
        } else {
            eprintln!("warning: {text}");
        }
    }
}

impl WorkspaceOptions {
    pub fn new(args: &WorkspaceArgs) -> WorkspaceOptions {
        WorkspaceOptions {
            manifest_path: args.manifest_path.clone(),
            packages: args.packages.clone(),
            workspace: args.workspace,
            exclude: args.exclude.clone(),
            features: args.features.clone(),
            all_features: args.all_features,
            no_default_features: args.no_default_features,
            offline: args.offline,
            locked: args.locked,
        }
    }

    /// The same selection as arguments for `cargo build` of the harness.
    pub fn cargo_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        let features: Vec<&str> = self
            .features
            .iter()
            .flat_map(|f| f.split([' ', ',']))
            .filter(|f| !f.is_empty())
            .collect();
        if !features.is_empty() {
            args.push("--features".to_owned());
            args.push(features.join(","));
        }
        if self.all_features {
            args.push("--all-features".to_owned());
        }
        if self.no_default_features {
            args.push("--no-default-features".to_owned());
        }
        if self.offline {
            args.push("--offline".to_owned());
        }
        if self.locked {
            args.push("--locked".to_owned());
        }
        args
    }
}

/// Everything `cargo covcon run` needs, merged from the command line and the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    pub workspace: WorkspaceOptions,
    pub console: Console,
    /// `--type` patterns from the command line (configuration patterns apply per package).
    pub types: Vec<String>,
    pub shard: Option<Shard>,
    /// The lines a diff touches (`--in-diff`): only the types they touch are tested.
    pub in_diff: Option<crate::diff::Lines>,
    pub time_budget: Duration,
    /// How the oracle runs the tests, as every command that runs tests converts it.
    pub oracle: OracleOptions,
    pub seed: u64,
    /// Whether the seed was chosen by the user (else it came from the clock).
    pub seed_given: bool,
    pub strategy: String,
    pub keep_going: bool,
    pub max_tests: Option<u64>,
    pub batch_size: Option<usize>,
    pub reports: Vec<ReportKind>,
    pub out: PathBuf,
    /// The `--baseline` file, read once before anything runs: the diff's type selection,
    /// the campaign's known violations and the report's marking all take it from here.
    pub baseline: Option<Baseline>,
    pub save_baseline: Option<PathBuf>,
    pub fail_on_untested: bool,
    /// Unconfirmed violations fail the run too (`--strict`).
    pub strict: bool,
}

impl RunOptions {
    /// Merges the command line over the run-wide configuration of `workspace`.
    pub fn new(args: &RunArgs, console: Console, workspace: &Workspace) -> Result<RunOptions> {
        let config = workspace.run_config();
        RunOptions::merge(args, console, &config, &workspace.target_dir)
    }

    fn merge(
        args: &RunArgs,
        console: Console,
        config: &Config,
        target_dir: &std::path::Path,
    ) -> Result<RunOptions> {
        let budget_text = args
            .time_budget
            .clone()
            .or_else(|| config.time_budget.as_ref().map(|b| b.as_text()));
        let time_budget = match budget_text {
            Some(text) => parse_duration(&text)
                .map_err(|e| usage_error(format_args!("invalid time budget: {e}")))?,
            None => DEFAULT_BUDGET,
        };
        let settings = OracleSettings::merge(
            args.jobs,
            args.test_timeout.as_deref(),
            args.schedule.as_deref(),
            config,
        )?;
        let strategy = args
            .strategy
            .clone()
            .or_else(|| config.strategy.clone())
            .unwrap_or_else(|| DEFAULT_STRATEGY.to_owned());
        if !STRATEGIES.contains(&strategy.as_str()) {
            return Err(usage_error(format_args!(
                "unknown strategy `{strategy}` (expected one of {})",
                STRATEGIES.join(", ")
            )));
        }
        let shard = args
            .shard
            .as_deref()
            .map(|s| s.parse::<Shard>().map_err(usage_error))
            .transpose()?;
        let reports = if !args.reports.is_empty() {
            args.reports.clone()
        } else if !config.reports.is_empty() {
            config
                .reports
                .iter()
                .map(|r| parse_report_kind(r))
                .collect::<Result<_>>()?
        } else {
            vec![ReportKind::Terminal, ReportKind::Json]
        };
        let (seed, seed_given) = match args.seed.or(config.seed) {
            Some(seed) => (seed, true),
            None => (seed_from_clock(), false),
        };
        // Relative paths: from the current directory on the command line, from the workspace
        // root (the target dir's parent) in the configuration.
        let out = match (&args.out, &config.out) {
            (Some(out), _) => std::path::absolute(out).unwrap_or_else(|_| out.clone()),
            (None, Some(out)) => target_dir.parent().unwrap_or(target_dir).join(out),
            (None, None) => target_dir.join("covcon"),
        };
        let workspace = WorkspaceOptions::new(&args.workspace);
        let oracle = OracleOptions {
            out_dir: out.clone(),
            cargo_args: workspace.cargo_args(),
            settings,
            oracle: args.oracle.or(config.oracle).unwrap_or_default(),
            repeat: args.repeat,
            shrink: !args.no_shrink,
            verbose: console.verbose > 1,
            confirm_runs: None,
        };
        Ok(RunOptions {
            workspace,
            console,
            types: args.types.clone(),
            shard,
            in_diff: args
                .change
                .diff(&args.workspace)?
                .map(|text| crate::diff::touched_lines(&text)),
            time_budget,
            oracle,
            seed,
            seed_given,
            strategy,
            keep_going: args.keep_going || config.keep_going.unwrap_or(false),
            max_tests: args.max_tests.or(config.max_tests),
            batch_size: args.batch_size,
            reports,
            out,
            baseline: Baseline::load_given(args.baseline.as_deref())?,
            save_baseline: args.save_baseline.clone(),
            fail_on_untested: args.fail_on_untested || config.fail_on_untested.unwrap_or(false),
            strict: args.strict || config.strict.unwrap_or(false),
        })
    }
}

/// Everything the oracle's configuration is made of, for every command that runs tests
/// (`run`, `bench`, `mutants`, `replay`): converted once from the command's arguments and the
/// run-wide configuration (`RunOptions::new`, [`OracleOptions::bench`],
/// [`OracleOptions::mutants`], [`OracleOptions::replay`]), and made into the oracle's
/// `OracleConfig` in one place, `session::oracle_config`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OracleOptions {
    /// Where the harness, the reproducers and the oracle's other files go.
    pub out_dir: PathBuf,
    /// The package selection as arguments for `cargo build` of the harness.
    pub cargo_args: Vec<String>,
    /// Workers, the test timeout and the scheduling.
    pub settings: OracleSettings,
    pub oracle: OracleKind,
    /// Runs of each generated test (`--repeat`); `None`: the oracle's default.
    pub repeat: Option<oracle::Repeat>,
    /// Shrink each violation before writing its files.
    pub shrink: bool,
    /// Echo cargo's output and the workers' stderr (`-vv`).
    pub verbose: bool,
    /// Re-runs of a violation (`replay --runs`); `None`: the oracle's default.
    pub confirm_runs: Option<u32>,
}

impl OracleOptions {
    /// `cargo covcon bench`'s: the harness in `<target>/covcon`, the table's `oracle` when
    /// `--oracle` is not given. Violations are not shrunk unless `--shrink` says so (the
    /// bench measures the first sighting, or with it the report a run gives); the oracle's own
    /// confirmation runs stay on: a deadlock counts only once a re-run repeats it. Each of the
    /// bench's campaigns starts afresh (`OracleExecutor::start_afresh`), so each pays its own
    /// confirmations and explorations, as a run does.
    pub fn bench(
        args: &BenchArgs,
        console: &Console,
        config: &Config,
        target_dir: &Path,
    ) -> Result<OracleOptions> {
        Ok(OracleOptions {
            out_dir: target_dir.join("covcon"),
            cargo_args: WorkspaceOptions::new(&args.workspace).cargo_args(),
            settings: OracleSettings::merge(
                args.jobs,
                args.test_timeout.as_deref(),
                args.schedule.as_deref(),
                config,
            )?,
            oracle: args.oracle.or(config.oracle).unwrap_or_default(),
            repeat: args.repeat,
            shrink: args.shrink,
            verbose: console.verbose > 1,
            confirm_runs: None,
        })
    }

    /// `cargo covcon mutants`'s: the mutant harness in `<target>/covcon/mutants`, no
    /// shrinking, and `--oracle` whatever the table says (its default here is `results`: a
    /// split critical section most often answers wrong without panicking).
    pub fn mutants(
        args: &MutantsArgs,
        console: &Console,
        config: &Config,
        target_dir: &Path,
    ) -> Result<OracleOptions> {
        Ok(OracleOptions {
            out_dir: target_dir.join("covcon").join("mutants"),
            cargo_args: WorkspaceOptions::new(&args.workspace).cargo_args(),
            settings: OracleSettings::merge(args.jobs, None, None, config)?,
            oracle: args.oracle,
            repeat: None,
            shrink: false,
            verbose: console.verbose > 1,
            confirm_runs: None,
        })
    }

    /// `cargo covcon replay`'s: the harness of the run that saved the test (`out_dir`), one
    /// worker, `--runs` runs, under the oracle the test was `found_under`; the test timeout
    /// and scheduling from the table.
    pub fn replay(
        args: &ReplayArgs,
        console: &Console,
        config: &Config,
        out_dir: PathBuf,
        found_under: OracleKind,
    ) -> Result<OracleOptions> {
        Ok(OracleOptions {
            out_dir,
            cargo_args: WorkspaceOptions::new(&args.workspace).cargo_args(),
            settings: OracleSettings::merge(Some(1), None, None, config)?,
            oracle: found_under,
            repeat: None,
            shrink: false,
            verbose: console.verbose > 1,
            confirm_runs: Some(args.runs),
        })
    }
}

/// How the oracle runs tests, for every command that runs them: the command line over the
/// run-wide configuration; `None` is the oracle's default.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OracleSettings {
    pub jobs: Option<usize>,
    pub test_timeout: Option<Duration>,
    pub scheduling: Option<oracle::Scheduling>,
}

impl OracleSettings {
    /// Each setting from the command line when given, else from `config`.
    pub fn merge(
        jobs: Option<usize>,
        test_timeout: Option<&str>,
        schedule: Option<&str>,
        config: &Config,
    ) -> Result<OracleSettings> {
        let jobs = jobs.or(config.jobs);
        if jobs == Some(0) {
            return Err(usage_error("--jobs must be at least 1"));
        }
        let test_timeout = match test_timeout {
            Some(text) => Some(text.to_owned()),
            None => config.test_timeout.as_ref().map(|b| b.as_text()),
        }
        .map(|text| {
            parse_duration(&text)
                .map_err(|e| usage_error(format_args!("invalid test timeout: {e}")))
        })
        .transpose()?;
        let scheduling = schedule
            .or(config.schedule.as_deref())
            .map(|s| s.parse::<oracle::Scheduling>().map_err(usage_error))
            .transpose()?;
        Ok(OracleSettings {
            jobs,
            test_timeout,
            scheduling,
        })
    }
}

pub fn parse_report_kind(text: &str) -> Result<ReportKind> {
    use clap::ValueEnum;
    ReportKind::from_str(text, true).map_err(|_| {
        usage_error(format_args!(
            "unknown report format `{text}` (expected terminal, json, html or junit)"
        ))
    })
}

/// A seed from the clock, for runs without `--seed`; it is printed so the run can be repeated.
fn seed_from_clock() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    // Keep seeds short enough to type.
    nanos % 1_000_000_000
}

/// `90` and `90s` are seconds; `2m`, `1h`, `500ms` and combinations like `1m30s` work too.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration".into());
    }
    if let Ok(seconds) = text.parse::<f64>() {
        return seconds_to_duration(seconds, text);
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!(
                "`{text}` is not a duration (try 90, 90s, 2m or 1h)"
            ));
        }
        let number: f64 = rest[..digits]
            .parse()
            .map_err(|_| format!("`{text}` is not a duration"))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let factor = match rest[..unit_len].trim() {
            "ms" => 0.001,
            "s" | "sec" | "secs" => 1.0,
            "m" | "min" | "mins" => 60.0,
            "h" | "hr" | "hours" => 3600.0,
            unit => {
                return Err(format!(
                    "unknown unit `{unit}` in `{text}` (use ms, s, m or h)"
                ))
            }
        };
        rest = &rest[unit_len..];
        total += seconds_to_duration(number * factor, text)?;
    }
    Ok(total)
}

fn seconds_to_duration(seconds: f64, text: &str) -> Result<Duration, String> {
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(format!("`{text}` is not a duration"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Budget;

    fn check(text: &str, expect: &str) {
        let actual = match parse_duration(text) {
            Ok(d) => format!("{d:?}"),
            Err(e) => format!("error: {e}"),
        };
        assert_eq!(actual, expect);
    }

    #[test]
    fn budgets_take_seconds_minutes_and_hours() {
        check("90", "90s");
        check("90s", "90s");
        check("2m", "120s");
        check("1h", "3600s");
        check("1m30s", "90s");
        check("500ms", "500ms");
        check("1.5", "1.5s");
    }

    #[test]
    fn bad_budgets_say_what_is_wrong() {
        check("", "error: empty duration");
        check(
            "2 weeks",
            "error: unknown unit `weeks` in `2 weeks` (use ms, s, m or h)",
        );
        check("m", "error: `m` is not a duration (try 90, 90s, 2m or 1h)");
        check("-3", "error: `-3` is not a duration");
    }

    fn merged(args: RunArgs, config: Config) -> Result<RunOptions> {
        RunOptions::merge(
            &args,
            Console::default(),
            &config,
            std::path::Path::new("/t"),
        )
    }

    #[test]
    fn the_command_line_wins_over_configuration() {
        let config = Config {
            time_budget: Some(Budget::Text("2m".into())),
            strategy: Some("random".into()),
            seed: Some(5),
            reports: vec!["html".into()],
            ..Config::default()
        };
        let args = RunArgs {
            time_budget: Some("10s".into()),
            seed: Some(7),
            ..RunArgs::default()
        };
        let options = merged(args, config).unwrap();
        assert_eq!(options.time_budget, Duration::from_secs(10));
        assert_eq!(options.strategy, "random");
        assert_eq!((options.seed, options.seed_given), (7, true));
        assert_eq!(options.reports, [ReportKind::Html]);
        assert_eq!(options.out, PathBuf::from("/t/covcon"));
    }

    /// The oracle settings every command that runs tests shares with a run: each from the
    /// command line when given, else from the table.
    #[test]
    fn oracle_settings_take_the_command_line_over_the_table() {
        let config = Config {
            jobs: Some(3),
            test_timeout: Some(Budget::Text("2s".into())),
            schedule: Some("controlled".into()),
            ..Config::default()
        };
        let merged = OracleSettings::merge(Some(1), None, Some("free"), &config).unwrap();
        assert_eq!(
            merged,
            OracleSettings {
                jobs: Some(1),
                test_timeout: Some(Duration::from_secs(2)),
                scheduling: Some(oracle::Scheduling::Free),
            }
        );
        let zero = Config {
            jobs: Some(0),
            ..Config::default()
        };
        assert!(OracleSettings::merge(None, None, None, &zero).is_err());
        assert!(OracleSettings::merge(None, Some("soon"), None, &Config::default()).is_err());
    }

    /// `schedule` and `strict` come from the table when the command line says nothing; a
    /// scheduling that is none of the three is a usage error, wherever it was written.
    #[test]
    fn scheduling_and_strictness_are_configurable() {
        let config = Config {
            schedule: Some("controlled".into()),
            strict: Some(true),
            ..Config::default()
        };
        let options = merged(RunArgs::default(), config.clone()).unwrap();
        assert_eq!(
            options.oracle.settings.scheduling,
            Some(oracle::Scheduling::Controlled)
        );
        assert!(options.strict);
        let args = RunArgs {
            schedule: Some("free".into()),
            ..RunArgs::default()
        };
        let options = merged(args, config).unwrap();
        assert_eq!(
            options.oracle.settings.scheduling,
            Some(oracle::Scheduling::Free)
        );
        let wrong = Config {
            schedule: Some("chaotic".into()),
            ..Config::default()
        };
        let error = merged(RunArgs::default(), wrong).map(|_| ()).unwrap_err();
        assert!(
            error.to_string().contains("unknown scheduling `chaotic`"),
            "{error}"
        );
        let options = merged(RunArgs::default(), Config::default()).unwrap();
        assert_eq!(
            (options.oracle.settings.scheduling, options.strict),
            (None, false)
        );
    }

    #[test]
    fn defaults_apply_when_nothing_is_configured() {
        let options = merged(RunArgs::default(), Config::default()).unwrap();
        assert_eq!(options.time_budget, DEFAULT_BUDGET);
        assert_eq!(options.strategy, DEFAULT_STRATEGY);
        assert!(!options.seed_given);
        assert_eq!(options.reports, [ReportKind::Terminal, ReportKind::Json]);
    }

    #[test]
    fn the_strategies_and_default_match_the_generators() {
        assert_eq!(generator::Strategy::default().name(), DEFAULT_STRATEGY);
        let names: Vec<&str> = generator::Strategy::ALL.iter().map(|s| s.name()).collect();
        let mut ours = STRATEGIES.to_vec();
        ours.sort();
        let mut theirs = names.clone();
        theirs.sort();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn an_unknown_strategy_in_the_config_is_a_usage_error() {
        let config = Config {
            strategy: Some("fast".into()),
            ..Config::default()
        };
        let err = merged(RunArgs::default(), config).unwrap_err();
        assert_eq!(
            crate::exit_code::code_of(&err),
            crate::exit_code::ExitCode::Usage
        );
        assert!(err.to_string().contains("unknown strategy `fast`"), "{err}");
    }

    #[test]
    fn the_harness_build_gets_the_same_features_and_flags() {
        let options = WorkspaceOptions {
            features: vec!["a b".into(), "c".into()],
            locked: true,
            ..WorkspaceOptions::default()
        };
        assert_eq!(options.cargo_args(), ["--features", "a,b,c", "--locked"]);
    }
}
