//! Loading the user's workspace: the one place that runs `cargo metadata` (and `rustc --print
//! cfg`, for the target configuration `#[cfg]` is evaluated against).
//!
//! It turns the selection flags (`-p`, `--workspace`, `--exclude`, features, `--offline`,
//! `--locked`) into a cargo command, runs it, and hands the analysis the packages to read plus
//! what the binary needs itself: the target directory and the `metadata.covcon` tables.

use crate::config::{self, Config};
use crate::exit_code::{usage_error, ExitCode, OrExit};
use analysis::PackageInfo;
use anyhow::Result;
use cargo_metadata::{CargoOpt, Metadata, MetadataCommand};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What the selection flags asked for, converted once from the command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkspaceOptions {
    pub manifest_path: Option<PathBuf>,
    pub packages: Vec<String>,
    pub workspace: bool,
    pub exclude: Vec<String>,
    pub features: Vec<String>,
    pub all_features: bool,
    pub no_default_features: bool,
    pub offline: bool,
    pub locked: bool,
}

/// The workspace as covcon needs it.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub root: PathBuf,
    pub target_dir: PathBuf,
    /// The selected packages that have a library target, in metadata order.
    pub packages: Vec<PackageInfo>,
    /// `[workspace.metadata.covcon]`.
    pub workspace_config: Config,
    /// `[package.metadata.covcon]` of each workspace member, by package name.
    pub package_configs: BTreeMap<String, Config>,
    /// The package at the workspace root, if the root manifest has one.
    pub root_package: Option<String>,
    /// What `rustc --print cfg` says about the host target (`None` if rustc could not be
    /// asked: the analysis then assumes the target covcon was built for).
    pub target_cfg: Option<analysis::CfgSet>,
}

impl Workspace {
    /// The static model of the selected packages, `#[cfg]` evaluated for the host target
    /// and each package's enabled features.
    pub fn analyze(&self) -> analysis::Model {
        let config = analysis::Config {
            cfg: self.target_cfg.clone(),
            ..analysis::Config::default()
        };
        analysis::analyze(&self.packages, &config)
    }

    /// The model of one type of `package` as it is with `sources` standing in for the files
    /// they name (a mutant's code).
    pub fn analyze_type(
        &self,
        package: &str,
        type_path: &str,
        sources: analysis::Sources,
    ) -> Option<analysis::TypeModel> {
        let package = self.packages.iter().find(|p| p.name == package)?;
        let config = analysis::Config {
            cfg: self.target_cfg.clone(),
            types: vec![type_path.to_string()],
            sources,
            ..analysis::Config::default()
        };
        let model = analysis::analyze(std::slice::from_ref(package), &config);
        model.types.into_iter().find(|t| t.path == type_path)
    }

    /// The configuration for one package: its own table over the workspace's.
    pub fn config_for(&self, package: &str) -> Config {
        match self.package_configs.get(package) {
            Some(own) => own.over(&self.workspace_config),
            None => self.workspace_config.clone(),
        }
    }

    /// Settings that apply to the whole run: the workspace table, under the root package's
    /// own table when the root manifest is a package (a single-crate project has no
    /// `[workspace.metadata]`).
    pub fn run_config(&self) -> Config {
        match &self.root_package {
            Some(root) => self.config_for(root),
            None => self.workspace_config.clone(),
        }
    }
}

/// The `cargo metadata` command for these options. Pure, so it can be tested.
pub fn metadata_command(options: &WorkspaceOptions) -> MetadataCommand {
    let mut command = MetadataCommand::new();
    command.cargo_path(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    if let Some(path) = &options.manifest_path {
        command.manifest_path(path);
    }
    if options.all_features {
        command.features(CargoOpt::AllFeatures);
    }
    if options.no_default_features {
        command.features(CargoOpt::NoDefaultFeatures);
    }
    let features: Vec<String> = options
        .features
        .iter()
        .flat_map(|f| f.split_whitespace())
        .map(str::to_owned)
        .collect();
    if !features.is_empty() {
        command.features(CargoOpt::SomeFeatures(features));
    }
    let mut other = Vec::new();
    if options.offline {
        other.push("--offline".to_owned());
    }
    if options.locked {
        other.push("--locked".to_owned());
    }
    command.other_options(other);
    command
}

/// Runs `cargo metadata` and selects packages. Any failure here is the user's workspace or
/// flags, so it exits 1.
pub fn load(options: &WorkspaceOptions) -> Result<Workspace> {
    if let Some(path) = &options.manifest_path {
        if !path.is_file() {
            return Err(usage_error(format_args!(
                "manifest path `{}` does not exist",
                path.display()
            )));
        }
    }
    let metadata = metadata_command(options).exec().or_exit(ExitCode::Usage)?;
    let mut workspace = from_metadata(&metadata, options)?;
    workspace.target_cfg = target_cfg();
    Ok(workspace)
}

/// `rustc --print cfg` of the rustc cargo would use.
fn target_cfg() -> Option<analysis::CfgSet> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = std::process::Command::new(rustc)
        .args(["--print", "cfg"])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| analysis::CfgSet::from_rustc_print(&String::from_utf8_lossy(&output.stdout)))
}

/// Selects packages (with the analysis crate's cargo rules) and reads configuration from
/// already-loaded metadata.
pub fn from_metadata(metadata: &Metadata, options: &WorkspaceOptions) -> Result<Workspace> {
    let selection = analysis::PackageSelection {
        packages: options.packages.clone(),
        workspace: options.workspace,
        exclude: options.exclude.clone(),
    };
    let packages =
        analysis::packages_from_metadata(metadata, &selection).or_exit(ExitCode::Usage)?;
    let workspace_config =
        config::from_metadata(&metadata.workspace_metadata, "workspace").map_err(usage_error)?;
    let mut package_configs = BTreeMap::new();
    for package in metadata.workspace_packages() {
        let config = config::from_metadata(&package.metadata, "package")
            .map_err(|e| usage_error(format_args!("{e} in package `{}`", package.name)))?;
        package_configs.insert(package.name.to_string(), config);
    }
    Ok(Workspace {
        root: metadata.workspace_root.clone().into(),
        target_dir: metadata.target_directory.clone().into(),
        packages,
        workspace_config,
        package_configs,
        root_package: metadata.root_package().map(|p| p.name.to_string()),
        target_cfg: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(options: WorkspaceOptions, expect: &[&str]) {
        let command = metadata_command(&options).cargo_command();
        let argv: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        for e in expect {
            assert!(argv.iter().any(|a| a == e), "{argv:?} lacks {e}");
        }
    }

    #[test]
    fn the_manifest_path_and_features_reach_cargo() {
        check(
            WorkspaceOptions {
                manifest_path: Some("x/Cargo.toml".into()),
                features: vec!["a b".into(), "c".into()],
                ..Default::default()
            },
            &["--manifest-path", "x/Cargo.toml", "--features", "a,b,c"],
        );
    }

    #[test]
    fn offline_and_locked_reach_cargo() {
        check(
            WorkspaceOptions {
                offline: true,
                locked: true,
                all_features: true,
                ..Default::default()
            },
            &["--offline", "--locked", "--all-features"],
        );
    }
}
