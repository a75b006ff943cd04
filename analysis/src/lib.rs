//! Static analysis for cargo covcon: reads a workspace's source with syn and builds the
//! [`Model`]: thread-safe types, their constructors and methods, BC-ConTest pair groups and
//! SplitRichTest split points. Pure: it reads source files, never spawns a process or prints.
//!
//! Two halves: the API model ([`api`]: items after macros and `#[cfg]`, names resolved to the
//! paths code outside the crate writes, constructors, methods and argument values) and the
//! lock analysis (`access`, `group`, `split`: which method pairs can conflict and where an
//! interleaving matters). [`discover`] joins them: it finds the thread-safe types, asks the API
//! model what can be built and called of each, and hands the lock analysis their syntax.
//!
//! Entry points: [`analyze`] for packages selected with [`packages_from_metadata`], and
//! [`analyze_source`] for one source string (tests, examples). [`summary`] renders a model for
//! the terminal.

mod access;
mod api;
mod cross;
mod discover;
mod facts;
mod group;
mod known;
pub mod model;
mod reason;
mod source;
mod split;
mod summary;
mod workspace;

pub use api::cfg::CfgSet;
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
    /// The target's configuration (`rustc --print cfg`) that `#[cfg]` is evaluated against,
    /// each package's features added; the host covcon was built for when `None`.
    pub cfg: Option<CfgSet>,
}

/// Analyses the library targets of `packages` (parsed in parallel) into one [`Model`].
pub fn analyze(packages: &[PackageInfo], config: &Config) -> Model {
    let mut model = Model {
        format_version: FORMAT_VERSION,
        packages: packages.to_vec(),
        ..Model::default()
    };
    let target = config.cfg.clone().unwrap_or_else(CfgSet::host);
    let per_package: Vec<(Vec<TypeModel>, Vec<Diagnostic>, Option<Span>)> = packages
        .par_iter()
        .map(|pkg| {
            let edition = config
                .edition
                .clone()
                .unwrap_or_else(|| pkg.edition.clone());
            let cfg = target.with_features(&pkg.features);
            analyze_package(pkg, &edition, &cfg, &config.types)
        })
        .collect();
    for (package, (types, diags, first_item)) in model.packages.iter_mut().zip(per_package) {
        package.first_item = first_item;
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
        ..PackageInfo::default()
    };
    let mut model = Model {
        format_version: FORMAT_VERSION,
        packages: vec![pkg.clone()],
        ..Model::default()
    };
    match source::parse_file(&pkg.lib_root, source) {
        Ok(ast) => {
            let cfg = CfgSet::host();
            let mut table = api::macros::MacroTable::default();
            table.collect(&ast.items);
            let ast = api::macros::Expander::new(&cfg, &table).file(ast);
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
/// that hold thread-safe types (and what their APIs need).
fn analyze_package(
    pkg: &PackageInfo,
    edition: &str,
    cfg: &CfgSet,
    filter: &[String],
) -> (Vec<TypeModel>, Vec<Diagnostic>, Option<Span>) {
    let loaded = source::load_crate(&pkg.lib_root, cfg);
    let mut diags = loaded.diagnostics.clone();
    let mut facts = facts::FileFacts::default();
    for f in &loaded.files {
        facts.merge(&f.facts);
    }
    let index = api::index::CrateIndex::new(
        &pkg.lib_name,
        edition,
        facts.modules.clone(),
        pkg.dependencies.iter().map(|d| d.extern_name.clone()),
    );
    let safe = discover::thread_safe_names(&facts, &index);
    let names = discover::relevant_names(&facts, &safe);
    let files = source::parse_relevant(&loaded, cfg, |f| f.facts.mentions(&names));
    let types = analyze_files(&files, Some(&index), pkg, edition, filter, &mut diags);
    (types, diags, loaded.first_item.clone())
}

fn analyze_files(
    files: &[source::SourceFile],
    index: Option<&api::index::CrateIndex>,
    pkg: &PackageInfo,
    edition: &str,
    filter: &[String],
    diags: &mut Vec<Diagnostic>,
) -> Vec<TypeModel> {
    // syn trees are tied to this thread (proc-macro2 spans), so types are analysed in turn.
    let found = discover::discover(files, index, pkg, filter);
    let mut types: Vec<TypeModel> = found.iter().map(|t| t.model.clone()).collect();
    cross::take_handles(&mut types);
    let mut facts = Vec::new();
    for (t, model) in found.iter().zip(types.iter_mut()) {
        let mut d = Vec::new();
        let summaries = access::analyze_type(t, edition, &mut d);
        model.pairs = group::group_pairs(model, &summaries);
        model.split_points = split::split_points(t, &summaries);
        model
            .split_points
            .retain(|s| !t.expanded.contains(&s.method));
        facts.push(cross::lock_facts(t, &summaries));
        diags.extend(d);
    }
    cross::add_handles(&mut types, &facts);
    types
}
