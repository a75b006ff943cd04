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
mod clock;
mod cross;
mod discover;
mod edit;
mod facts;
mod foreign;
mod group;
pub mod items;
mod known;
pub mod model;
mod mutation;
mod reason;
mod source;
mod split;
mod summary;
mod workspace;

pub use api::cfg::CfgSet;
pub use api::type_arg::type_argument_kind;
/// How the model names a handle's method, a tuple element and a value constructor: the
/// protocol crate's, since those names travel to the harness too.
pub use covcon_protocol::refs;
pub use model::*;
pub use summary::summary;
pub use workspace::{packages_from_metadata, PackageSelection, SelectionError};

use rayon::prelude::*;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Largest file of constants only that is parsed for the sizes it declares: a table a build
/// script generated is no size a type's code would be built around.
const CONST_FILE_MOST: usize = 64 * 1024;

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
    /// Text to analyse instead of what these files hold (absolute paths): a mutant's code,
    /// analysed as a user running covcon on it would have it analysed.
    pub sources: Sources,
}

/// Files' texts that stand in for what is on disk, by absolute path.
pub type Sources = std::collections::BTreeMap<PathBuf, String>;

/// Analyses the library targets of `packages` (parsed in parallel) into one [`Model`].
pub fn analyze(packages: &[PackageInfo], config: &Config) -> Model {
    let mut model = Model {
        format_version: FORMAT_VERSION,
        packages: packages.to_vec(),
        ..Model::default()
    };
    let target = config.cfg.clone().unwrap_or_else(CfgSet::host);
    let per_package: Vec<Analysed> = packages
        .par_iter()
        .map(|pkg| {
            let edition = config
                .edition
                .clone()
                .unwrap_or_else(|| pkg.edition.clone());
            analyze_package(pkg, &edition, &target, &config.types, &config.sources)
        })
        .collect();
    for (package, analysed) in model.packages.iter_mut().zip(per_package) {
        package.first_item = analysed.first_item;
        package.clock_sites = analysed.clock_sites;
        model.types.extend(analysed.types);
        model.diagnostics.extend(analysed.diagnostics);
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
            let mut modules = Vec::new();
            api::index::module_facts(&ast.items, &[], &mut modules);
            let index = api::index::CrateIndex::new(&pkg.lib_name, edition, modules, []);
            let root = [(pkg.lib_root.as_path(), &[][..], source)];
            model.packages[0].clock_sites = clock::package_clock_sites(root.into_iter(), &index);
            let files = vec![source::SourceFile {
                path: pkg.lib_root.clone(),
                module: vec![],
                ast,
            }];
            let usages = api::usage::Usages::collect([source].into_iter(), None, &index);
            let mut diags = Vec::new();
            model.types = analyze_files(
                &files,
                &[],
                None,
                &pkg,
                edition,
                &[],
                &api::NoExternals,
                &usages,
                &mut diags,
            );
            adopt_untested_sites(&mut model.types);
            model.diagnostics = diags;
        }
        Err(d) => model.diagnostics.push(d),
    }
    model.types.sort_by(|a, b| a.path.cmp(&b.path));
    model
}

/// What [`analyze_package`] finds of one package.
struct Analysed {
    types: Vec<TypeModel>,
    diagnostics: Vec<Diagnostic>,
    first_item: Option<Span>,
    clock_sites: Vec<ClockSite>,
}

/// Loads one package's module tree in parallel, then parses again and analyses the files
/// that hold thread-safe types (and what their APIs need), and finds its clock sites.
fn analyze_package(
    pkg: &PackageInfo,
    edition: &str,
    target: &CfgSet,
    filter: &[String],
    sources: &Sources,
) -> Analysed {
    let cfg = target.with_features(&pkg.features);
    let externs = pkg.dependencies.iter().map(|d| d.extern_name.clone());
    let (loaded, facts, index) = foreign::load_package(
        &pkg.lib_root,
        &pkg.lib_name,
        edition,
        externs,
        &cfg,
        sources,
    );
    let mut diags = loaded.diagnostics.clone();
    let safe = discover::thread_safe_names(&facts, &index);
    let names = discover::relevant_names(&facts, &safe);
    // The crate root always: its doc may say what whole-structure operations see, or that
    // a section's operations are not atomic (`discover.rs`), though it declares no type
    // (papaya's `lib.rs` only re-exports its maps).
    let files = source::parse_relevant(&loaded, &cfg, |f| {
        f.module.is_empty() || f.facts.mentions(&names)
    });
    // Files of constants only (a `constants.rs`): the sizes the types' code names may be
    // declared there. Large ones (generated tables) are left out.
    let const_files = source::parse_relevant(&loaded, &cfg, |f| {
        f.facts.declares_consts && !f.facts.mentions(&names) && f.text.len() <= CONST_FILE_MOST
    });
    let dependencies = foreign::Dependencies::new(&pkg.dependencies, target);
    let usages = api::usage::Usages::collect(
        loaded.files.iter().map(|f| f.text.as_str()),
        pkg.manifest_path.parent(),
        &index,
    );
    let mut types = analyze_files(
        &files,
        &const_files,
        Some(&index),
        pkg,
        edition,
        filter,
        &dependencies,
        &usages,
        &mut diags,
    );
    types.extend(foreign_types(
        pkg,
        &index,
        &dependencies,
        filter,
        &mut diags,
    ));
    adopt_untested_sites(&mut types);
    let clock_sites = clock::package_clock_sites(
        loaded
            .files
            .iter()
            .map(|f| (f.path.as_path(), f.module.as_slice(), f.text.as_str())),
        &index,
    );
    Analysed {
        types,
        diagnostics: diags,
        first_item: loaded.first_item.clone(),
        clock_sites,
    }
}

/// The thread-safe types of dependencies that `pkg` re-exports or aliases (`pub use
/// sdd::Queue`, `pub type Mutex<T> = lock_api::Mutex<RawMutex, T>`), analysed in their own
/// crate and presented under `pkg`'s paths ([`foreign`]).
fn foreign_types(
    pkg: &PackageInfo,
    index: &api::index::CrateIndex,
    dependencies: &foreign::Dependencies,
    filter: &[String],
    diags: &mut Vec<Diagnostic>,
) -> Vec<TypeModel> {
    let wanted: Vec<foreign::Foreign> = foreign::foreign_types(index, &pkg.dependencies)
        .into_iter()
        .filter(|f| {
            let name = f.public_path.rsplit("::").next().unwrap_or_default();
            filter.is_empty() || filter.iter().any(|t| t == name || *t == f.public_path)
        })
        .collect();
    let mut out = Vec::new();
    let mut unread = Vec::new();
    let mut krates: Vec<&str> = wanted.iter().map(|f| f.krate.as_str()).collect();
    krates.sort();
    krates.dedup();
    for krate in krates {
        let Some(dep) = pkg.dependencies.iter().find(|d| d.extern_name == krate) else {
            continue;
        };
        let Some(read) = dependencies.get(krate) else {
            unread.push(dep.package.clone());
            continue;
        };
        let (facts, dep_index) = (&read.facts, &read.index);
        let safe = discover::thread_safe_names(facts, dep_index);
        let not_shareable = discover::not_shareable(facts);
        // The dependency's own thread-safe types the package makes public, by definition.
        let mut defs: Vec<(&foreign::Foreign, api::index::Def)> = Vec::new();
        for f in wanted.iter().filter(|f| f.krate == krate) {
            let Some((def, used)) = dep_index.resolve(&[], &f.inner) else {
                continue;
            };
            if let api::index::Def::Item { module, name, .. } = &def {
                let key = (module.clone(), name.clone());
                if used == f.inner.len() && safe.contains_key(&key) && !not_shareable.contains(&key)
                {
                    defs.push((f, def));
                }
            }
        }
        if defs.is_empty() {
            continue;
        }
        let mut names: Vec<String> = defs
            .iter()
            .filter_map(|(_, d)| match d {
                api::index::Def::Item { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
        names.sort();
        names.dedup();
        let mut dep_diags = Vec::new();
        let models = analyze_files(
            read.files(),
            &[],
            Some(dep_index),
            &read.package,
            &read.package.edition,
            &names,
            &api::NoExternals,
            &api::usage::Usages::default(),
            &mut dep_diags,
        );
        for (f, def) in &defs {
            let Some(path) = dep_index.public_path(def) else {
                continue;
            };
            // One the package's users cannot build either (a guard the dependency hands
            // out) is no type of the package's to report.
            match models.iter().find(|m| m.path == path) {
                Some(model) if model.supported() => {
                    out.push(foreign::graft(model.clone(), f, &pkg.name, dep))
                }
                _ => {}
            }
        }
    }
    if !unread.is_empty() {
        diags.push(Diagnostic {
            severity: Severity::Note,
            message: format!(
                "{} re-exports types of {} whose source covcon could not find; they are not tested",
                pkg.name,
                unread.join(", ")
            ),
            span: None,
        });
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn analyze_files(
    files: &[source::SourceFile],
    const_files: &[source::SourceFile],
    index: Option<&api::index::CrateIndex>,
    pkg: &PackageInfo,
    edition: &str,
    filter: &[String],
    externals: &dyn api::ExternalValues,
    usages: &api::usage::Usages,
    diags: &mut Vec<Diagnostic>,
) -> Vec<TypeModel> {
    // syn trees are tied to this thread (proc-macro2 spans), so types are analysed in turn.
    let found = discover::discover(files, const_files, index, pkg, filter, externals, usages);
    let mut types: Vec<TypeModel> = found.iter().map(|t| t.model.clone()).collect();
    cross::take_handles(&mut types);
    cross::take_keys(&mut types);
    let mut facts = Vec::new();
    for (t, model) in found.iter().zip(types.iter_mut()) {
        let mut d = Vec::new();
        let summaries = access::analyze_type(t, edition, &mut d);
        model.pairs = group::group_pairs(model, &summaries);
        model.split_points = split::split_points(t, &summaries);
        model.sync_sites = access::sync_sites(t, &summaries);
        model.mutation_sites = mutation::mutation_sites(t);
        model
            .split_points
            .retain(|s| !t.expanded.contains(&s.method));
        facts.push(cross::lock_facts(t, &summaries));
        diags.extend(d);
    }
    cross::add_handles(&mut types, &facts);
    cross::judge_scope_pairs(&mut types, &facts);
    confine(&mut types);
    types
}

/// The types that cannot be shared ([`TypeModel::confined`]) remove the pairs no second thread
/// can take part in: it takes part through a method of a handle kept before the threads start (not one
/// behind a guard, taking nothing of the instance); one that hands out no such handle leaves
/// the model (its code runs inside the calls of the types that hold it).
fn confine(types: &mut Vec<TypeModel>) {
    let remote = Method::reaches_without_instance;
    types.retain(|t| !t.confined || t.methods.iter().any(remote));
    for t in types.iter_mut().filter(|t| t.confined) {
        let remote: BTreeSet<String> = t
            .methods
            .iter()
            .filter(|m| remote(m))
            .map(|m| m.name.clone())
            .collect();
        for pair in t
            .pairs
            .iter_mut()
            .filter(|p| !p.methods.iter().any(|m| remote.contains(m)))
        {
            pair.group = Group::Removed;
            pair.reasons = vec![format!(
                "`{}` cannot be shared between threads: only the thread that owns it calls its \
                 methods, the other calls its handles'",
                t.name
            )];
        }
    }
}

/// The private types with no public method (kept by discovery for this) leave the model, and
/// their synchronisation sites go to every other type of the package, whose calls run their
/// code: the copy makes schedule points of them, and a lock written by hand there is seen
/// as one. A site two types list is wrapped once. The types covcon cannot test (no
/// constructor it can call) stay, and give their sites to the types it tests too: parking_lot's
/// `RwLock` is lock_api's `RwLock<RawRwLock, T>`, and every one of its calls runs the code of
/// `RawRwLock`, which nothing but that wrapper builds.
///
/// A helper's mutants are another matter: a type that never runs its code would judge them
/// (crossbeam-utils' `Parker`'s `Inner` judged through `AtomicCell`), so the sites say whose
/// they are (`SyncSite::helper`). A type that holds the helper has them as its own already
/// (its methods' calls through a field are followed), mutation sites included.
fn adopt_untested_sites(types: &mut Vec<TypeModel>) {
    let helper = |t: &TypeModel| t.methods.is_empty() && t.reason == Some(Reason::NotPublic);
    // A handle's sites go to the types that hand it out (`cross::add_handles`).
    let untested = |t: &TypeModel| {
        !t.supported() && !helper(t) && !matches!(t.reason, Some(Reason::Handle { .. }))
    };
    let sites: Vec<SyncSite> = types
        .iter()
        .filter(|t| helper(t) || untested(t))
        .flat_map(|t| {
            t.sync_sites.iter().map(|s| SyncSite {
                method: refs::handle_method(&t.name, &s.method),
                untested_owner: untested(t).then(|| t.path.clone()),
                // Its type's own code is not all that writes it: the adopter's calls it too.
                writes_under: None,
                helper: helper(t).then(|| t.path.clone()),
                ..s.clone()
            })
        })
        .collect();
    types.retain(|t| !helper(t));
    for t in types.iter_mut().filter(|t| t.supported()) {
        for site in &sites {
            if !t.sync_sites.iter().any(|s| s.receiver == site.receiver) {
                t.sync_sites.push(site.clone());
            }
        }
    }
}
