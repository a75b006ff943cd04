//! Package selection: turns `cargo metadata` output into the [`PackageInfo`]s to analyse,
//! following cargo's own `-p` / `--workspace` / `--exclude` rules. Pure: the caller runs cargo.

use crate::model::{Dependency, PackageInfo};
use cargo_metadata::{DependencyKind, Metadata, Node, NodeDep, Package, Target, TargetKind};

/// Which packages the user asked for, as on cargo's command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageSelection {
    /// `-p NAME`, repeatable.
    pub packages: Vec<String>,
    /// `--workspace`.
    pub workspace: bool,
    /// `--exclude NAME`, only meaningful with `--workspace`.
    pub exclude: Vec<String>,
}

/// Why a selection could not be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    #[error("package `{0}` is not a member of the workspace")]
    UnknownPackage(String),
    #[error("`--exclude` can only be used together with `--workspace`")]
    ExcludeWithoutWorkspace,
    #[error("excluded package `{0}` is not a member of the workspace")]
    UnknownExclude(String),
    #[error("package `{0}` has no library target: covcon tests library types")]
    NoLibrary(String),
    #[error("no selected package has a library target")]
    NothingToAnalyse,
}

/// Selects the packages to analyse from workspace metadata.
///
/// With no flag: the root package if there is one, else the default members (all members
/// when cargo gives no default members). `-p` names must be workspace members with a library
/// target. `--workspace` takes every member minus `--exclude`. Packages without a library
/// target are skipped silently unless named with `-p`. The result keeps metadata order.
pub fn packages_from_metadata(
    meta: &Metadata,
    sel: &PackageSelection,
) -> Result<Vec<PackageInfo>, SelectionError> {
    let members = meta.workspace_packages();
    if !sel.exclude.is_empty() && !sel.workspace {
        return Err(SelectionError::ExcludeWithoutWorkspace);
    }
    let chosen: Vec<&Package> = if sel.workspace {
        for name in &sel.exclude {
            if !members.iter().any(|p| p.name.as_str() == name) {
                return Err(SelectionError::UnknownExclude(name.clone()));
            }
        }
        members
            .iter()
            .copied()
            .filter(|p| !sel.exclude.iter().any(|e| e == p.name.as_str()))
            .collect()
    } else if !sel.packages.is_empty() {
        let mut chosen = Vec::new();
        for name in &sel.packages {
            let Some(pkg) = members.iter().find(|p| p.name.as_str() == name) else {
                return Err(SelectionError::UnknownPackage(name.clone()));
            };
            if lib_target(pkg).is_none() {
                return Err(SelectionError::NoLibrary(name.clone()));
            }
            if !chosen.iter().any(|c: &&Package| c.id == pkg.id) {
                chosen.push(*pkg);
            }
        }
        chosen
    } else if let Some(root) = meta.root_package() {
        vec![root]
    } else if meta.workspace_default_members.is_available()
        && !meta.workspace_default_packages().is_empty()
    {
        meta.workspace_default_packages()
    } else {
        members
    };
    let infos: Vec<PackageInfo> = chosen
        .into_iter()
        .filter_map(|p| package_info(meta, p))
        .collect();
    if infos.is_empty() {
        return Err(SelectionError::NothingToAnalyse);
    }
    Ok(infos)
}

fn lib_target(pkg: &Package) -> Option<&Target> {
    pkg.targets.iter().find(|t| {
        t.kind
            .iter()
            .any(|k| matches!(k, TargetKind::Lib | TargetKind::RLib | TargetKind::DyLib))
    })
}

fn package_info(meta: &Metadata, pkg: &Package) -> Option<PackageInfo> {
    let lib = lib_target(pkg)?;
    let node = resolve_node(meta, pkg);
    let features = features_of(node);
    let dependencies = normal_deps(node)
        .filter_map(|d| {
            let p = meta.packages.iter().find(|p| p.id == d.pkg)?;
            let dep_node = resolve_node(meta, p);
            let lib = lib_target(p);
            Some(Dependency {
                extern_name: d.name.clone(),
                package: p.name.to_string(),
                version: p.version.to_string(),
                path: p
                    .source
                    .is_none()
                    .then(|| {
                        p.manifest_path
                            .parent()
                            .map(|d| d.as_std_path().to_path_buf())
                    })
                    .flatten(),
                lib_root: lib.map(|l| l.src_path.clone().into_std_path_buf()),
                lib_name: lib.map(|l| l.name.replace('-', "_")).unwrap_or_default(),
                edition: p.edition.as_str().to_string(),
                features: features_of(dep_node),
                externs: normal_deps(dep_node).map(|d| d.name.clone()).collect(),
                companion: p.source.is_none() || companions(pkg, p),
            })
        })
        .collect();
    Some(PackageInfo {
        name: pkg.name.to_string(),
        lib_name: lib.name.replace('-', "_"),
        manifest_path: pkg.manifest_path.clone().into_std_path_buf(),
        lib_root: lib.src_path.clone().into_std_path_buf(),
        edition: pkg.edition.as_str().to_string(),
        features,
        dependencies,
        first_item: None,
        clock_sites: Vec::new(),
    })
}

fn resolve_node<'m>(meta: &'m Metadata, pkg: &Package) -> Option<&'m Node> {
    meta.resolve
        .as_ref()
        .and_then(|r| r.nodes.iter().find(|n| n.id == pkg.id))
}

fn features_of(node: Option<&Node>) -> Vec<String> {
    node.map(|n| n.features.iter().map(|f| f.to_string()).collect())
        .unwrap_or_default()
}

/// A resolved package's normal (not dev, not build) dependencies.
fn normal_deps(node: Option<&Node>) -> impl Iterator<Item = &NodeDep> {
    node.into_iter().flat_map(|n| {
        n.deps
            .iter()
            .filter(|d| d.dep_kinds.iter().any(|k| k.kind == DependencyKind::Normal))
    })
}

/// Whether two packages come from one project: an author, the repository or the
/// repository's owner (`github.com/Amanieu`) in common.
fn companions(a: &Package, b: &Package) -> bool {
    if a.authors.iter().any(|x| b.authors.contains(x)) {
        return true;
    }
    let owner = |p: &Package| {
        let repo = p.repository.as_deref()?.trim().to_lowercase();
        let repo = repo.trim_end_matches('/').trim_end_matches(".git");
        let rest = repo.split_once("://").map_or(repo, |(_, r)| r);
        let mut parts = rest.split('/');
        let host = parts.next()?;
        let owner = parts.next()?;
        Some(format!("{host}/{owner}"))
    };
    owner(a).is_some_and(|o| Some(o) == owner(b))
}
