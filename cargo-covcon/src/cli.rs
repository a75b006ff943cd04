//! The command line as clap sees it: argv in, [`Args`] out. Nothing here reads files or
//! decides anything; `options.rs` turns [`Args`] into the `Options` the commands use.

use crate::exit_code;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// `cargo` as clap sees it when it runs us as `cargo covcon …`.
#[derive(Debug, Parser)]
#[command(name = "cargo", bin_name = "cargo")]
pub enum Cargo {
    #[command(name = "covcon")]
    Covcon(Args),
}

/// Find thread-safety violations in Rust types by generating concurrent tests
#[derive(Debug, clap::Args)]
#[command(
    version,
    about,
    after_help = exit_code::HELP,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate and run concurrent tests (the default)
    #[command(after_help = exit_code::HELP)]
    Run(Box<RunArgs>),
    /// Print the static model: thread-safe types, methods, pair groups
    Analyze(AnalyzeArgs),
    /// List the thread-safe types and their methods, one per line
    List(ListArgs),
    /// Run the test of a saved violation again
    Replay(ReplayArgs),
    /// Render or merge JSON reports
    Report(ReportArgs),
    /// Compare strategies: tests and seconds until the first violation, over several seeds
    Bench(BenchArgs),
    /// Concurrency mutation testing: make correct types thread-unsafe one site at a time and
    /// see whether covcon (or your own tests, with --test-cmd) catches each
    #[command(after_help = exit_code::HELP)]
    Mutants(MutantsArgs),
}

/// The change a command keeps to (`run`, `list`: the types whose code it touches;
/// `mutants`: the mutants on the lines it adds): a diff given, or the one git gives.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ChangeArgs {
    /// Only what a unified diff (`git diff` output) touches: the types whose code it changes
    /// and the types that hold them (for `mutants`: the mutants on the lines it adds)
    #[arg(long, value_name = "FILE", help_heading = "Selection")]
    pub in_diff: Option<PathBuf>,
    /// As --in-diff, with the diff git gives from the merge base of REF and HEAD to the
    /// working tree, untracked files included
    #[arg(
        long,
        value_name = "REF",
        conflicts_with = "in_diff",
        help_heading = "Selection"
    )]
    pub changed_since: Option<String>,
}

impl ChangeArgs {
    /// The diff's text, when a change is given (`crate::diff::named`); git runs in the
    /// repository that holds `workspace`'s manifest.
    pub fn diff(&self, workspace: &WorkspaceArgs) -> anyhow::Result<Option<String>> {
        crate::diff::named(
            self.in_diff.as_deref(),
            self.changed_since.as_deref(),
            workspace.manifest_path.as_deref(),
        )
    }
}

/// Which packages, features and cargo flags.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WorkspaceArgs {
    /// Path to Cargo.toml
    #[arg(long, value_name = "PATH", help_heading = "Package Selection")]
    pub manifest_path: Option<PathBuf>,
    /// Package to test (repeatable)
    #[arg(
        short,
        long = "package",
        value_name = "SPEC",
        help_heading = "Package Selection"
    )]
    pub packages: Vec<String>,
    /// Test all packages in the workspace
    #[arg(long, alias = "all", help_heading = "Package Selection")]
    pub workspace: bool,
    /// Exclude packages from the test (with --workspace)
    #[arg(long, value_name = "SPEC", help_heading = "Package Selection")]
    pub exclude: Vec<String>,
    /// Space or comma separated list of features to activate
    #[arg(
        short = 'F',
        long,
        value_name = "FEATURES",
        value_delimiter = ',',
        help_heading = "Feature Selection"
    )]
    pub features: Vec<String>,
    /// Activate all available features
    #[arg(long, help_heading = "Feature Selection")]
    pub all_features: bool,
    /// Do not activate the `default` feature
    #[arg(long, help_heading = "Feature Selection")]
    pub no_default_features: bool,
    /// Run without accessing the network
    #[arg(long, help_heading = "Manifest Options")]
    pub offline: bool,
    /// Assert that `Cargo.lock` will remain unchanged
    #[arg(long, help_heading = "Manifest Options")]
    pub locked: bool,
}

/// How much to print and in which colours.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OutputArgs {
    /// Print less: no progress, only violations and errors
    #[arg(short, long, conflicts_with = "verbose", help_heading = "Output")]
    pub quiet: bool,
    /// Print more: every type's pairs and skipped methods
    #[arg(short, long, action = clap::ArgAction::Count, help_heading = "Output")]
    pub verbose: u8,
    /// Coloring
    #[arg(long, value_enum, value_name = "WHEN", help_heading = "Output")]
    pub color: Option<ColorChoice>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportKind {
    Terminal,
    Json,
    Html,
    Junit,
    /// SARIF 2.1.0, for code scanning (`report.sarif`).
    Sarif,
}

#[derive(Debug, Clone, Default, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Only test these types: a name, a path suffix or a glob with `*` (repeatable)
    #[arg(long = "type", value_name = "PATTERN", help_heading = "Selection")]
    pub types: Vec<String>,
    /// Test only shard K of N (0-based), for splitting a run across CI jobs
    #[arg(long, value_name = "K/N", help_heading = "Selection")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub change: ChangeArgs,
    /// Time for the whole campaign: 90, 90s, 2m, 1h [default: 60s]
    #[arg(long, value_name = "DURATION", help_heading = "Execution")]
    pub time_budget: Option<String>,
    /// Worker processes running tests at once [default: half the cores, 2 on 2 cores]
    #[arg(short, long, value_name = "N", help_heading = "Execution")]
    pub jobs: Option<usize>,
    /// Seed for test generation; the same seed repeats the same tests
    #[arg(
        long,
        value_name = "N",
        env = "COVCON_SEED",
        help_heading = "Execution"
    )]
    pub seed: Option<u64>,
    /// Pair prioritisation: covcon, bc, random or naive [default: bc]
    #[arg(long, value_name = "STRATEGY", help_heading = "Execution")]
    pub strategy: Option<String>,
    /// How long one test may run before it counts as a deadlock [default: 1s]
    #[arg(long, value_name = "DURATION", help_heading = "Execution")]
    pub test_timeout: Option<String>,
    /// Stop each type after N tests
    #[arg(long, value_name = "N", help_heading = "Execution")]
    pub max_tests: Option<u64>,
    /// Tests handed to the workers at once (the time budget is checked between batches)
    #[arg(long, value_name = "N", hide = true, help_heading = "Execution")]
    pub batch_size: Option<usize>,
    /// Run each generated test N times back to back in its worker, with new noise or a new
    /// schedule each time, up to the first run that fails (under `--oracle results` every run
    /// that answers otherwise is judged); `auto`: once for a pair's first tests, up to 16 as
    /// its tests go on [default: 1; `auto` under `--oracle results`]
    #[arg(long, value_name = "N|auto", help_heading = "Execution")]
    pub repeat: Option<oracle::Repeat>,
    /// How the two threads of a test are scheduled: `free` (both at once, with noise),
    /// `controlled` (one at a time, switching where a seeded strategy says: every run
    /// replays) or `mixed` (half each) [default: mixed]
    #[arg(long, value_name = "MODE", value_parser = ["free", "controlled", "mixed"], help_heading = "Execution")]
    pub schedule: Option<String>,
    /// Keep testing a type after its first violation
    #[arg(long, help_heading = "Execution")]
    pub keep_going: bool,
    /// What counts as a violation: `panic` (a panic or deadlock no sequential order shows) or
    /// `results` (also return values no sequential order gives) [default: panic]
    #[arg(long, value_enum, value_name = "ORACLE", help_heading = "Execution")]
    pub oracle: Option<OracleKind>,
    /// Report violations as found, without shrinking them to a smaller failing test
    #[arg(long, help_heading = "Execution")]
    pub no_shrink: bool,
    /// Also write html or junit (repeatable; terminal and json are always produced)
    #[arg(
        long = "report",
        value_enum,
        value_name = "FORMAT",
        help_heading = "Output"
    )]
    pub reports: Vec<ReportKind>,
    /// Directory for reports, reproducers and the harness [default: <target-dir>/covcon]
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub out: Option<PathBuf>,
    /// Known violations: they do not fail the run, nor end their type's search
    #[arg(long, value_name = "FILE", help_heading = "CI Gate")]
    pub baseline: Option<PathBuf>,
    /// Write this run's violations as a baseline file
    #[arg(long, value_name = "FILE", help_heading = "CI Gate")]
    pub save_baseline: Option<PathBuf>,
    /// Exit 2 when a selected type could not be tested
    #[arg(long, help_heading = "CI Gate")]
    pub fail_on_untested: bool,
    /// Exit 2 for unconfirmed violations too (repeated by no re-run)
    #[arg(long, help_heading = "CI Gate")]
    pub strict: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AnalyzeFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, clap::Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Only show types whose path matches (repeatable)
    #[arg(long = "type", value_name = "PATTERN")]
    pub types: Vec<String>,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    pub format: AnalyzeFormat,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Only list types whose path matches (repeatable)
    #[arg(long = "type", value_name = "PATTERN")]
    pub types: Vec<String>,
    /// List only the types of shard K of N
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub change: ChangeArgs,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// A violation file written by a run (`target/covcon/violations/N.json`)
    pub file: PathBuf,
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// How many times to run the test
    #[arg(long, default_value_t = 1000)]
    pub runs: u32,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// JSON reports to merge (shards of one run)
    #[arg(long, value_name = "FILE", num_args = 1.., required = true)]
    pub merge: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Also write html or junit (repeatable; terminal and json are always produced)
    #[arg(long = "report", value_enum, value_name = "FORMAT")]
    pub reports: Vec<ReportKind>,
    /// Directory for the merged reports [default: target/covcon]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Known violations that do not fail the gate
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Exit 2 when a type could not be tested
    #[arg(long)]
    pub fail_on_untested: bool,
    /// Exit 2 for unconfirmed violations too (repeated by no re-run)
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Only these types: a name, a path suffix or a glob with `*` (repeatable)
    #[arg(long = "type", value_name = "PATTERN")]
    pub types: Vec<String>,
    /// Seeds per type and strategy
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub seeds: u64,
    /// The first seed; the others follow it
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub first_seed: u64,
    /// Strategies to compare, comma separated
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "random,naive,covcon,bc"
    )]
    pub strategies: Vec<String>,
    /// Tests per run at most
    #[arg(long, value_name = "N", default_value_t = 3000)]
    pub max_tests: u64,
    /// Time per run at most: 5, 5s, 1m
    #[arg(long, value_name = "DURATION", default_value = "3s")]
    pub time_budget: String,
    /// Worker processes running tests at once [default: half the cores, 2 on 2 cores]
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// How long one test may run before it counts as a deadlock [default: 1s]
    #[arg(long, value_name = "DURATION")]
    pub test_timeout: Option<String>,
    /// Run each generated test N times back to back in its worker, with new noise or a new
    /// schedule each time, up to the first run that fails, or `auto` as for a run [default: 1]
    #[arg(long, value_name = "N|auto")]
    pub repeat: Option<oracle::Repeat>,
    /// How the threads of a test are scheduled, as for a run: free, controlled or mixed
    /// [default: mixed]
    #[arg(long, value_name = "MODE", value_parser = ["free", "controlled", "mixed"])]
    pub schedule: Option<String>,
    /// What counts as a violation, as for a run: `panic` or `results` (wrong results too)
    /// [default: panic]
    #[arg(long, value_enum, value_name = "ORACLE")]
    pub oracle: Option<OracleKind>,
    /// Shrink each violation before it counts as found, as a run does by default: the
    /// seconds are then those until the report a user would get [default: the first
    /// sighting, not shrunk]
    #[arg(long)]
    pub shrink: bool,
    /// Only measure the floor, the cheapest two-thread run on this machine (two warm threads,
    /// one trivial call each), against which runs per second are read; no workspace needed
    #[arg(long)]
    pub floor: bool,
    /// Types whose coverage over time is recorded (repeatable) [default: the two with the most methods]
    #[arg(long = "coverage-type", value_name = "PATTERN")]
    pub coverage_types: Vec<String>,
    /// Write the markdown table to FILE, and FILE's stem with .json and -coverage.csv next to it
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `cargo covcon mutants`.
#[derive(Debug, Clone, clap::Args)]
pub struct MutantsArgs {
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Only these types: a name, a path suffix or a glob with `*` (repeatable)
    #[arg(long = "type", value_name = "PATTERN")]
    pub types: Vec<String>,
    /// Only these operators, comma separated: split_section, release_early, acquire_late,
    /// swap_lock_order, rmw_to_load_store, while_to_if, drop_notify, retry_once,
    /// publish_early
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub operators: Vec<String>,
    /// Campaign time per mutant (and per type for the unmutated baseline): 10, 10s, 1m
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub budget: String,
    /// Tests per mutant at most (and per type for the unmutated baseline); with a long
    /// --budget, a judgement that does not depend on the machine's speed
    #[arg(long, value_name = "N")]
    pub max_tests: Option<u64>,
    /// Judge the mutants with this shell command run in the instrumented copy (with
    /// COVCON_MUTANT set) instead of covcon's campaign: a mutant is caught when it fails
    #[arg(long, value_name = "CMD")]
    pub test_cmd: Option<String>,
    /// Judge every mutant twice, with covcon's campaign and with this shell command (run as
    /// --test-cmd runs it), and print which caught what: covcon only, the command only, both,
    /// neither (exit 2 when some mutant was caught by neither)
    #[arg(long, value_name = "CMD", conflicts_with = "test_cmd")]
    pub compare: Option<String>,
    /// How long one --test-cmd (or --compare) run may take [default: five times the unmutated run, at least 30s]
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    #[command(flatten)]
    pub change: ChangeArgs,
    /// Seed of the campaigns (each mutant's campaign uses it)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Worker processes running tests at once [default: half the cores, 2 on 2 cores]
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// What counts as caught in covcon's campaigns: panics and deadlocks only (`panic`), or
    /// also results no sequential order gives (`results`, the default here: a split critical
    /// section often returns a wrong answer without panicking)
    #[arg(long, value_enum, value_name = "ORACLE", default_value = "results")]
    pub oracle: OracleKind,
    /// Only list the mutants (after building the copy, so unviable ones are marked), without
    /// running them; each says the types whose campaigns judge it when they are others
    #[arg(long)]
    pub list: bool,
}

/// Parses argv, accepting both `cargo-covcon covcon …` (how cargo runs us) and
/// `cargo-covcon …` (running the binary directly).
pub fn parse(mut argv: Vec<std::ffi::OsString>) -> Result<Args, clap::Error> {
    if argv.get(1).is_none_or(|a| a != "covcon") {
        argv.insert(1, "covcon".into());
    }
    argv[0] = "cargo".into();
    let Cargo::Covcon(args) = Cargo::try_parse_from(argv)?;
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn check(argv: &str, expect: &str) {
        let argv = argv.split_whitespace().map(Into::into).collect();
        let actual = match parse(argv) {
            Ok(args) => format!("{args:?}"),
            Err(e) => format!("error: {:?}", e.kind()),
        };
        assert!(
            actual.contains(expect),
            "{actual}\n does not contain\n{expect}"
        );
    }

    #[test]
    fn the_subcommand_name_cargo_passes_is_stripped() {
        check("cargo-covcon covcon --seed 7", "seed: Some(7)");
    }

    #[test]
    fn the_binary_also_runs_without_the_subcommand_name() {
        check("cargo-covcon --seed 7", "seed: Some(7)");
    }

    #[test]
    fn analyze_takes_cargo_flags() {
        check(
            "cargo-covcon covcon analyze --manifest-path x/Cargo.toml --format json",
            "manifest_path: Some(\"x/Cargo.toml\")",
        );
    }

    #[test]
    fn report_formats_repeat() {
        check(
            "cargo-covcon covcon --report html --report junit",
            "reports: [Html, Junit]",
        );
    }

    #[test]
    fn run_flags_before_a_subcommand_are_an_error() {
        check(
            "cargo-covcon covcon --time-budget 5 analyze",
            "error: ArgumentConflict",
        );
    }

    #[test]
    fn report_needs_files_to_merge() {
        check(
            "cargo-covcon covcon report",
            "error: MissingRequiredArgument",
        );
    }

    #[test]
    fn help_lines_start_with_a_capital_and_have_no_trailing_period() {
        let cmd = Cargo::command();
        let covcon = cmd.find_subcommand("covcon").unwrap();
        let mut commands = vec![covcon];
        commands.extend(covcon.get_subcommands());
        for command in commands {
            for arg in command.get_arguments() {
                let Some(help) = arg.get_help() else { continue };
                let help = help.to_string();
                assert!(help.starts_with(|c: char| c.is_uppercase()), "{help}");
                assert!(!help.ends_with('.'), "{help}");
            }
        }
    }

    #[test]
    fn the_clap_definition_is_consistent() {
        Cargo::command().debug_assert();
    }
}

/// `--oracle`: which runs count as violations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OracleKind {
    /// Panics and deadlocks that no linearization shows (CovCon's oracle).
    #[default]
    Panic,
    /// Also return values and final states that no linearization gives.
    Results,
}
