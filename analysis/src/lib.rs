//! Static analysis for cargo covcon: reads a workspace's source with syn and builds the
//! [`Model`]: thread-safe types, their constructors and methods, BC-ConTest pair groups and
//! SplitRichTest split points. Pure: it reads source files, never spawns a process or prints.
//!
//! Entry points: [`analyze`] for packages selected with [`packages_from_metadata`], and
//! [`analyze_source`] for one source string (tests, examples). [`summary`] renders a model for
//! the terminal.

mod access;
mod discover;
mod group;
pub mod model;
mod source;
mod split;
mod summary;
mod workspace;

pub use model::*;
pub use summary::summary;
pub use workspace::{packages_from_metadata, PackageSelection, SelectionError};

use rayon::prelude::*;
use std::path::PathBuf;

/// What to analyse beyond the package list. Small on purpose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// Keep only types whose bare name or full path is listed (all types when empty).
    pub types: Vec<String>,
    /// Analyse with this edition instead of each package's own (`2021`, `2024`).
    pub edition: Option<String>,
}

/// Analyses the library targets of `packages` (parsed in parallel) into one [`Model`].
pub fn analyze(packages: &[PackageInfo], config: &Config) -> Model {
    let mut model = Model {
        format_version: FORMAT_VERSION,
        packages: packages.to_vec(),
        ..Model::default()
    };
    let per_package: Vec<(Vec<TypeModel>, Vec<Diagnostic>)> = packages
        .par_iter()
        .map(|pkg| {
            let edition = config
                .edition
                .clone()
                .unwrap_or_else(|| pkg.edition.clone());
            analyze_package(pkg, &edition, &config.types)
        })
        .collect();
    for (types, diags) in per_package {
        model.types.extend(types);
        model.diagnostics.extend(diags);
    }
    model.types.sort_by(|a, b| a.path.cmp(&b.path));
    model
}

/// Analyses one source string as the root file (`src/lib.rs`) of crate `crate_name`.
/// `mod x;` declarations cannot be followed and are reported as diagnostics.
pub fn analyze_source(crate_name: &str, edition: &str, source: &str) -> Model {
    let pkg = PackageInfo {
        name: crate_name.replace('_', "-"),
        lib_name: crate_name.replace('-', "_"),
        manifest_path: PathBuf::from("Cargo.toml"),
        lib_root: PathBuf::from("src/lib.rs"),
        edition: edition.to_string(),
    };
    let mut model = Model {
        format_version: FORMAT_VERSION,
        packages: vec![pkg.clone()],
        ..Model::default()
    };
    match source::parse_file(&pkg.lib_root, source) {
        Ok(ast) => {
            let files = vec![source::SourceFile {
                path: pkg.lib_root.clone(),
                module: vec![],
                ast,
            }];
            let mut diags = Vec::new();
            model.types = analyze_files(&files, None, &pkg, edition, &[], &mut diags);
            model.diagnostics = diags;
        }
        Err(d) => model.diagnostics.push(d),
    }
    model.types.sort_by(|a, b| a.path.cmp(&b.path));
    model
}

/// Loads one package's module tree in parallel, then parses again and analyses the files
/// that hold thread-safe types.
fn analyze_package(
    pkg: &PackageInfo,
    edition: &str,
    filter: &[String],
) -> (Vec<TypeModel>, Vec<Diagnostic>) {
    let (loaded, mut diags) = source::load_crate(&pkg.lib_root);
    let mut facts = discover::FileFacts::default();
    for f in &loaded {
        facts.merge(&f.facts);
    }
    let names = facts.relevant_names();
    let files = source::parse_relevant(&loaded, |f| f.facts.mentions(&names));
    let types = analyze_files(&files, Some(&facts), pkg, edition, filter, &mut diags);
    (types, diags)
}

fn analyze_files(
    files: &[source::SourceFile],
    facts: Option<&discover::FileFacts>,
    pkg: &PackageInfo,
    edition: &str,
    filter: &[String],
    diags: &mut Vec<Diagnostic>,
) -> Vec<TypeModel> {
    // syn trees are tied to this thread (proc-macro2 spans), so types are analysed in turn.
    let found = discover::discover(files, facts, pkg, filter);
    let results: Vec<(TypeModel, Vec<Diagnostic>)> = found
        .into_iter()
        .map(|t| {
            let mut d = Vec::new();
            let mut model = t.model.clone();
            let summaries = access::analyze_type(&t, edition, &mut d);
            model.pairs = group::group_pairs(&model, &summaries);
            model.split_points = split::split_points(&t, &summaries);
            (model, d)
        })
        .collect();
    let mut types = Vec::new();
    for (t, d) in results {
        types.push(t);
        diags.extend(d);
    }
    types
}
