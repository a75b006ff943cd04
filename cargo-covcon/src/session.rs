//! A campaign session: what every command that runs tests (`run`, `bench`, `mutants` and
//! `replay`) does before its first test, done one way for all of them. The workspace is
//! analysed into a model and the command line's and configuration's types selected; the
//! oracle's configuration is made from the command's [`OracleOptions`] ([`oracle_config`],
//! the one place cargo-covcon makes an `OracleConfig`); then the harness is built for the
//! selection ([`Session::prepare`]), the types it drives are parted into those a campaign can
//! run and the others, each runnable type gets the generator's settings, and executors start
//! on the harness ([`Prepared`]). Also the flag Ctrl-C raises during a campaign. Below `run`,
//! `bench` and `mutants`.

use crate::cli::OracleKind;
use crate::exit_code::{ExitCode, Failure};
use crate::options::{Console, OracleOptions};
use crate::select::{self, Selection, TypeSettings};
use crate::workspace::Workspace;
use analysis::{Model, ParamKind, Reason, TypeModel};
use anyhow::Result;
use generator::{Pools, ShrinkConfig, StopFlag, TypeConfig};
use oracle::results::ResultsConfig;
use oracle::{Harness, OracleConfig, OracleError, OracleExecutor};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The workspace, what of it a command tests, and how the oracle runs its tests.
pub(crate) struct Session {
    pub workspace: Workspace,
    /// The analysis of the workspace's selected packages.
    pub model: Model,
    /// The types the command line and the configuration select; a command may keep fewer (a
    /// shard, a diff's, a saved test's) before it prepares the harness.
    pub selection: Selection,
    /// The oracle's configuration, from the command's options ([`oracle_config`]).
    pub oracle: OracleConfig,
}

impl Session {
    /// Analyses `workspace`, selects the types `types` (or else the configuration) names, and
    /// configures the oracle as `options` say.
    pub fn new(workspace: Workspace, types: &[String], options: &OracleOptions) -> Session {
        let model = workspace.analyze();
        let selection = select::select(&model, &workspace, types);
        let oracle = oracle_config(&workspace.root, options);
        Session {
            workspace,
            model,
            selection,
            oracle,
        }
    }

    /// Builds (or reuses) the harness for the selected types, with any configured generic
    /// instantiations, in the oracle's `out_dir`.
    pub fn prepare(&self) -> Result<Prepared> {
        self.prepare_with(|selected, instantiations| {
            oracle::prepare_with(selected, &self.oracle, instantiations)
        })
    }

    /// [`Session::prepare`] with every mutant of the selected types compiled into the copy as
    /// a mutant schema (`cargo covcon mutants`).
    pub fn prepare_mutants(&self) -> Result<Prepared> {
        self.prepare_with(|selected, instantiations| {
            oracle::prepare_mutants(selected, &self.oracle, instantiations)
        })
    }

    fn prepare_with(
        &self,
        prepare: impl FnOnce(&Model, &BTreeMap<String, Vec<String>>) -> Result<Harness, OracleError>,
    ) -> Result<Prepared> {
        let selected = Model {
            types: self.selection.types.clone(),
            ..self.model.clone()
        };
        let harness =
            prepare(&selected, &instantiations(&self.selection)).map_err(harness_error)?;
        Ok(Prepared::new(selected, harness, &self.selection))
    }
}

/// A session's harness, and what a campaign needs of it.
pub(crate) struct Prepared {
    /// The model restricted to the selection, as the harness was built for it.
    pub selected: Model,
    pub harness: Harness,
    /// `selected` as the harness drives it: the types, constructors and methods it dropped
    /// marked unsupported.
    pub drivable: Model,
    /// The drivable types a campaign can run, in the model's order.
    pub runnable: Vec<TypeModel>,
    /// The other drivable types, with why a campaign cannot run them.
    pub undrivable: Vec<(TypeModel, Reason)>,
    /// The generator's settings for each runnable type, by path.
    pub type_configs: BTreeMap<String, TypeConfig>,
}

impl Prepared {
    fn new(selected: Model, harness: Harness, selection: &Selection) -> Prepared {
        let drivable = harness.drivable_model(&selected);
        let mut runnable = Vec::new();
        let mut undrivable = Vec::new();
        for t in &drivable.types {
            match select::why_not_runnable(t) {
                Some(why) => undrivable.push((t.clone(), why)),
                None => runnable.push(t.clone()),
            }
        }
        let type_configs = type_configs(&runnable, selection, &harness);
        Prepared {
            selected,
            harness,
            drivable,
            runnable,
            undrivable,
            type_configs,
        }
    }

    /// Workers of the harness under `config`: the session's, or a variant of it (a mutant's).
    pub fn executor(&self, config: &OracleConfig) -> Result<OracleExecutor> {
        OracleExecutor::new(&self.harness, config, &self.drivable).map_err(harness_error)
    }

    /// The generator's settings of `t` alone, for a campaign of that one type.
    pub fn campaign_types(&self, t: &TypeModel) -> BTreeMap<String, TypeConfig> {
        self.type_configs
            .get(&t.path)
            .map(|c| BTreeMap::from([(t.path.clone(), c.clone())]))
            .unwrap_or_default()
    }
}

/// The oracle's configuration for a workspace at `root`: the one place cargo-covcon makes an
/// `OracleConfig`, so every command that runs tests gets the same settings the same way.
pub(crate) fn oracle_config(root: &Path, options: &OracleOptions) -> OracleConfig {
    let mut config = OracleConfig::new(root);
    config.out_dir = options.out_dir.clone();
    config.cargo_args = options.cargo_args.clone();
    let settings = &options.settings;
    if let Some(jobs) = settings.jobs {
        config.jobs = jobs;
    }
    if let Some(timeout) = settings.test_timeout {
        config.test_timeout = timeout;
    }
    if let Some(scheduling) = settings.scheduling {
        config.scheduling = scheduling;
    }
    // Under the results oracle a test's runs are judged against one set of sequential runs
    // (`Response::others`), and `auto` found more published bugs than one run a test
    // (docs/benchmarks.md, "Throughput", session 37); the panic oracle keeps 1 (session 31).
    config.repeat = match options.repeat {
        Some(repeat) => repeat,
        None if options.oracle == OracleKind::Results => oracle::Repeat::Adaptive,
        None => config.repeat,
    };
    if let Some(runs) = options.confirm_runs {
        config.confirm_runs = runs.max(1);
    }
    config.verbose = options.verbose;
    if options.oracle == OracleKind::Results {
        config.results = Some(ResultsConfig::default());
    }
    if options.shrink {
        config.shrink = Some(SHRINK);
    }
    config
}

/// The flag Ctrl-C and SIGTERM raise during a campaign (`run`'s, `mutants`'): the first ends
/// it after the batch that is running, with the report of what ran written; a second quits at
/// once. Before the campaign (while the harness builds) the signals keep their default effect:
/// nothing ran.
pub(crate) fn interrupt_flag(console: &Console) -> StopFlag {
    let stop = StopFlag::default();
    let flag = stop.clone();
    let quiet = console.quiet;
    let installed = ctrlc::set_handler(move || {
        if flag.raise() {
            oracle::kill_all_workers();
            std::process::exit(ExitCode::Interrupted.code());
        }
        if !quiet {
            eprintln!(
                "covcon: interrupted; finishing the running batch and writing the report (again to quit at once)"
            );
        }
    });
    if let Err(e) = installed {
        console.warn(format_args!("cannot handle Ctrl-C: {e}"));
    }
    stop
}

/// Shrinking runs inside the campaign's time budget, so each new violation gets a few seconds
/// of it at most.
const SHRINK: ShrinkConfig = ShrinkConfig {
    max_checks: 150,
    time_budget: Duration::from_secs(5),
    runs_per_candidate: 3,
    one_call_each: true,
};

/// A harness that does not build exits 3; anything else the oracle cannot do is internal.
pub(crate) fn harness_error(error: OracleError) -> anyhow::Error {
    let code = match &error {
        OracleError::Build { .. } => ExitCode::HarnessBuild,
        _ => ExitCode::Internal,
    };
    Failure {
        code,
        error: error.into(),
    }
    .into()
}

/// The generic instantiations configured per type (`instantiate = [...]`), by type path.
fn instantiations(selection: &Selection) -> BTreeMap<String, Vec<String>> {
    selection
        .settings
        .iter()
        .filter_map(|(path, s)| Some((path.clone(), s.instantiate.clone()?)))
        .collect()
}

/// The generator's settings for each type: configured pools and constructor, and the
/// concrete types the harness chose for its type parameters.
fn type_configs(
    types: &[TypeModel],
    selection: &Selection,
    harness: &Harness,
) -> BTreeMap<String, TypeConfig> {
    types
        .iter()
        .map(|t| {
            let settings = selection.settings.get(&t.path).cloned().unwrap_or_default();
            let prepared = harness.types.iter().find(|p| p.path == t.path);
            let instantiation = prepared
                .map(|p| p.instantiation_kinds(&t.values))
                .unwrap_or_default();
            (t.path.clone(), type_config(&settings, instantiation))
        })
        .collect()
}

fn type_config(settings: &TypeSettings, instantiation: BTreeMap<String, ParamKind>) -> TypeConfig {
    let values = &settings.values;
    let pools = (!values.int.is_empty()
        || !values.string.is_empty()
        || !values.char.is_empty()
        || !values.float.is_empty())
    .then(|| {
        let mut pools = Pools::default();
        if !values.int.is_empty() {
            pools.ints = values.int.iter().map(|&i| i128::from(i)).collect();
            pools.signed_ints.clear();
        }
        if !values.string.is_empty() {
            pools.strings = values.string.clone();
        }
        if !values.char.is_empty() {
            pools.chars = values.char.clone();
        }
        if !values.float.is_empty() {
            pools.floats = values.float.clone();
        }
        pools
    });
    TypeConfig {
        constructor: settings.constructor.clone(),
        instantiation,
        pools,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Args, Command};
    use crate::config::{Budget, Config};
    use crate::options::OracleSettings;
    use std::path::PathBuf;

    /// The oracle's configuration for `argv` (a `bench`, `mutants` or `replay` command line)
    /// under the run-wide table `config`, as the command makes it.
    fn configured(argv: &str, config: &Config) -> OracleConfig {
        let words = argv.split_whitespace().map(Into::into).collect();
        let Args { command, .. } = crate::cli::parse(words).unwrap();
        let console = Console::default();
        let target = Path::new("/w/target");
        let options = match command {
            Some(Command::Bench(args)) => OracleOptions::bench(&args, &console, config, target),
            Some(Command::Mutants(args)) => OracleOptions::mutants(&args, &console, config, target),
            Some(Command::Replay(args)) => {
                let out = target.join("covcon");
                OracleOptions::replay(&args, &console, config, out, OracleKind::Panic)
            }
            _ => panic!("not a command that runs tests: {argv:?}"),
        };
        oracle_config(Path::new("/w"), &options.unwrap())
    }

    /// `[..metadata.covcon]` reaches every command that runs tests, not `run` alone, and each
    /// command's own flags win over it.
    #[test]
    fn bench_mutants_and_replay_take_the_oracle_settings_from_the_table() {
        let table = Config {
            jobs: Some(3),
            test_timeout: Some(Budget::Text("2s".into())),
            schedule: Some("controlled".into()),
            oracle: Some(OracleKind::Results),
            ..Config::default()
        };
        let seen = |c: &OracleConfig| {
            (
                c.jobs,
                c.test_timeout,
                c.scheduling,
                c.results.is_some(),
                c.shrink.is_some(),
            )
        };
        let from_table = (3, Duration::from_secs(2), oracle::Scheduling::Controlled);
        let (jobs, timeout, scheduling) = from_table;
        let bench = configured("cargo-covcon bench", &table);
        assert_eq!(seen(&bench), (jobs, timeout, scheduling, true, false));
        assert_eq!(bench.out_dir, PathBuf::from("/w/target/covcon"));
        let bench = configured("cargo-covcon bench -j 1 --schedule free --repeat 4", &table);
        assert_eq!(
            seen(&bench),
            (1, timeout, oracle::Scheduling::Free, true, false)
        );
        assert_eq!(bench.repeat, oracle::Repeat::Times(4));
        let bench = configured("cargo-covcon bench --repeat auto", &table);
        assert_eq!(bench.repeat, oracle::Repeat::Adaptive);
        let mutants = configured("cargo-covcon mutants", &table);
        assert_eq!(seen(&mutants), (jobs, timeout, scheduling, true, false));
        assert_eq!(mutants.out_dir, PathBuf::from("/w/target/covcon/mutants"));
        // Mutants keep their own default oracle, `results`, whatever the table says.
        let panic = Config {
            oracle: Some(OracleKind::Panic),
            ..table.clone()
        };
        let mutants = configured("cargo-covcon mutants -j 2", &panic);
        assert_eq!(seen(&mutants), (2, timeout, scheduling, true, false));
        // A replay runs one worker, as often as `--runs` says.
        let replay = configured("cargo-covcon replay v.json --runs 7", &table);
        assert_eq!(seen(&replay), (1, timeout, scheduling, false, false));
        assert_eq!(replay.confirm_runs, 7);
    }

    /// The settings not given keep the oracle's defaults.
    #[test]
    fn the_oracle_keeps_its_defaults_for_what_no_option_gives() {
        let root = Path::new("/w");
        let config = oracle_config(root, &OracleOptions::default());
        assert_eq!(
            (config.jobs, config.test_timeout, config.scheduling),
            (
                oracle::default_jobs(),
                Duration::from_secs(1),
                oracle::Scheduling::default()
            )
        );
        assert_eq!(
            (config.repeat, config.confirm_runs),
            (oracle::Repeat::Times(1), 20)
        );
        assert!(config.results.is_none() && config.shrink.is_none() && !config.verbose);
        let options = OracleOptions {
            settings: OracleSettings {
                jobs: Some(1),
                test_timeout: Some(Duration::from_secs(2)),
                scheduling: Some(oracle::Scheduling::Free),
            },
            repeat: Some("0".parse().unwrap()),
            shrink: true,
            ..OracleOptions::default()
        };
        let config = oracle_config(root, &options);
        assert_eq!(
            (config.jobs, config.test_timeout, config.scheduling),
            (1, Duration::from_secs(2), oracle::Scheduling::Free)
        );
        assert_eq!(config.repeat, oracle::Repeat::Times(1));
        assert_eq!(config.shrink, Some(SHRINK));
        // Under the results oracle a test runs as often as its pair earned, unless told.
        let results = OracleOptions {
            oracle: OracleKind::Results,
            ..OracleOptions::default()
        };
        assert_eq!(
            oracle_config(root, &results).repeat,
            oracle::Repeat::Adaptive
        );
        let once = OracleOptions {
            repeat: Some(oracle::Repeat::Times(1)),
            ..results
        };
        assert_eq!(oracle_config(root, &once).repeat, oracle::Repeat::Times(1));
    }

    #[test]
    fn a_harness_that_does_not_build_exits_3_and_other_oracle_errors_70() {
        let build = OracleError::Build {
            message: "E0308".into(),
        };
        assert_eq!(
            crate::exit_code::code_of(&harness_error(build)),
            ExitCode::HarnessBuild
        );
        let worker = OracleError::Worker {
            message: "gone".into(),
        };
        assert_eq!(
            crate::exit_code::code_of(&harness_error(worker)),
            ExitCode::Internal
        );
    }
}
