//! Preparing a campaign's oracle: its configuration from the options, the harness for the
//! selected types, and the generator's settings per type. Shared by `run.rs` (the campaign and
//! `replay`) and `bench.rs`; below both.

use crate::cli::OracleKind;
use crate::exit_code::{ExitCode, Failure};
use crate::options::RunOptions;
use crate::select::{Selection, TypeSettings};
use crate::workspace::Workspace;
use analysis::{Model, ParamKind, TypeModel};
use anyhow::Result;
use generator::{Pools, ShrinkConfig, TypeConfig};
use oracle::results::ResultsConfig;
use oracle::{Harness, OracleConfig, OracleError};
use std::collections::BTreeMap;
use std::time::Duration;

pub(crate) fn oracle_config(options: &RunOptions, workspace: &Workspace) -> OracleConfig {
    let mut config = OracleConfig::new(&workspace.root);
    config.out_dir = options.out.clone();
    config.cargo_args = options.workspace.cargo_args();
    options.oracle_settings.apply(&mut config);
    if let Some(repeat) = options.repeat {
        config.repeat = repeat.max(1);
    }
    config.verbose = options.console.verbose > 1;
    if options.oracle == OracleKind::Results {
        config.results = Some(ResultsConfig::default());
    }
    if options.shrink {
        config.shrink = Some(SHRINK);
    }
    config
}

/// Shrinking runs inside the campaign's time budget, so each new violation gets a few seconds
/// of it at most.
const SHRINK: ShrinkConfig = ShrinkConfig {
    max_checks: 150,
    time_budget: Duration::from_secs(5),
    runs_per_candidate: 3,
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
pub(crate) fn instantiations(selection: &Selection) -> BTreeMap<String, Vec<String>> {
    selection
        .settings
        .iter()
        .filter_map(|(path, s)| Some((path.clone(), s.instantiate.clone()?)))
        .collect()
}

/// Builds (or reuses) the harness for the selected types, with any configured generic
/// instantiations; also answers the model restricted to the selection.
pub(crate) fn prepare_harness(
    model: &Model,
    selection: &Selection,
    config: &OracleConfig,
) -> Result<(Model, Harness)> {
    prepare_selected(model, selection, |selected, instantiations| {
        oracle::prepare_with(selected, config, instantiations)
    })
}

/// [`prepare_harness`] with every mutant of the selected types compiled into the copy as a
/// mutant schema (`cargo covcon mutants`), in `config.out_dir`.
pub(crate) fn prepare_mutant_harness(
    model: &Model,
    selection: &Selection,
    config: &OracleConfig,
) -> Result<(Model, Harness)> {
    prepare_selected(model, selection, |selected, instantiations| {
        oracle::prepare_mutants(selected, config, instantiations)
    })
}

fn prepare_selected(
    model: &Model,
    selection: &Selection,
    prepare: impl FnOnce(&Model, &BTreeMap<String, Vec<String>>) -> Result<Harness, OracleError>,
) -> Result<(Model, Harness)> {
    let selected = Model {
        types: selection.types.clone(),
        ..model.clone()
    };
    let harness = prepare(&selected, &instantiations(selection)).map_err(harness_error)?;
    Ok((selected, harness))
}

/// The generator's settings for each type: configured pools and constructor, and the
/// concrete types the harness chose for its type parameters.
pub(crate) fn type_configs(
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
