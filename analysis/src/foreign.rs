//! Thread-safe types a crate makes public but another crate defines: a re-export (`pub use
//! sdd::{Bag, Queue, Stack}` in scc) or a type alias (`pub type Mutex<T> =
//! lock_api::Mutex<RawMutex, T>` in parking_lot). Users call them by the crate's path, so
//! covcon tests them there: the defining crate's source is read (from `cargo metadata`'s
//! library root), its type analysed as any other, and the model renamed to the public path
//! ([`graft`]). The dependency is not copied or instrumented: the harness stamps such a type's
//! calls, and it has no split points.
//!
//! This module finds the candidates ([`foreign_types`]) and rewrites the analysed model; the
//! analysing is `lib.rs`'s, which owns the pipeline.
//!
//! It also builds *values* of dependencies' types for arguments ([`Dependencies`], which reads each dependency once for both uses): a
//! method taking `guard: &Guard` (scc's `sdd::Guard`) or a registry keyed by `metrics::Key` is
//! called with a value made by that crate's own constructors (`Guard::new()`,
//! `Key::from_name(..)`), read from its source the first time one is asked for.

use crate::api::cfg::CfgSet;
use crate::api::index::{CrateIndex, Def, ImplArgs};
use crate::api::render::idents;
use crate::api::syntax::Decls;
use crate::api::types::{type_args, type_name, Scope, TyCx};
use crate::api::{self, ExternalValues};
use crate::facts::FileFacts;
use crate::model::{
    Dependency, GenericKind, Param, ParamKind, Problem, Reason, TypeModel, ValueType,
};
use crate::source::{self, LoadedCrate, SourceFile};
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::rc::Rc;

/// A crate's files (loaded in parallel), their joined facts and its name index.
pub(crate) fn load_package(
    lib_root: &Path,
    lib_name: &str,
    edition: &str,
    externs: impl IntoIterator<Item = String>,
    cfg: &CfgSet,
    sources: &crate::Sources,
) -> (LoadedCrate, FileFacts, CrateIndex) {
    let loaded = source::load_crate(lib_root, cfg, sources);
    let mut facts = FileFacts::default();
    for f in &loaded.files {
        facts.merge(&f.facts);
    }
    let index = CrateIndex::new(lib_name, edition, facts.modules.clone(), externs);
    (loaded, facts, index)
}

/// A dependency read from its library root: its files, facts and index, the configuration
/// they were read under, a package description to analyse it as, and its files parsed (once,
/// on the first use).
pub(crate) struct ReadDependency {
    pub(crate) loaded: LoadedCrate,
    pub(crate) facts: FileFacts,
    pub(crate) index: CrateIndex,
    pub(crate) cfg: CfgSet,
    pub(crate) package: crate::model::PackageInfo,
    parsed: OnceCell<Vec<SourceFile>>,
}

impl ReadDependency {
    /// Every file of the crate, parsed and expanded.
    pub(crate) fn files(&self) -> &[SourceFile] {
        self.parsed
            .get_or_init(|| source::parse_relevant(&self.loaded, &self.cfg, |_| true))
    }
}

/// Files a dependency may have for covcon to read it for a value: past that, it is a large
/// crate whose types are not argument values (a runtime, a framework).
const MAX_DEPENDENCY_FILES: usize = 200;

/// The package's dependencies, each read once, on demand: for the types the package
/// re-exports from one (`lib.rs`), and for values of their types ([`ExternalValues`]).
pub(crate) struct Dependencies<'p> {
    deps: &'p [Dependency],
    target: &'p CfgSet,
    /// By extern name; `None` when the package has no such dependency or its source is not
    /// on disk.
    read: RefCell<HashMap<String, Option<Rc<ReadDependency>>>>,
}

impl<'p> Dependencies<'p> {
    pub(crate) fn new(deps: &'p [Dependency], target: &'p CfgSet) -> Dependencies<'p> {
        Dependencies {
            deps,
            target,
            read: RefCell::new(HashMap::new()),
        }
    }

    /// The dependency the package names `krate`, read with its own features.
    pub(crate) fn get(&self, krate: &str) -> Option<Rc<ReadDependency>> {
        self.read
            .borrow_mut()
            .entry(krate.to_string())
            .or_insert_with(|| self.read(krate).map(Rc::new))
            .clone()
    }

    fn read(&self, krate: &str) -> Option<ReadDependency> {
        let dep = self.deps.iter().find(|d| d.extern_name == krate)?;
        let lib_root = dep.lib_root.as_ref().filter(|r| r.is_file())?;
        let cfg = self.target.with_features(&dep.features);
        let lib_name = if dep.lib_name.is_empty() {
            krate
        } else {
            &dep.lib_name
        };
        let edition = if dep.edition.is_empty() {
            "2021"
        } else {
            &dep.edition
        };
        let (loaded, facts, index) = load_package(
            lib_root,
            lib_name,
            edition,
            dep.externs.iter().cloned(),
            &cfg,
            &crate::Sources::new(),
        );
        let package = crate::model::PackageInfo {
            name: dep.package.clone(),
            lib_name: lib_name.to_string(),
            lib_root: lib_root.clone(),
            edition: edition.to_string(),
            features: dep.features.clone(),
            dependencies: dep
                .externs
                .iter()
                .map(|e| Dependency {
                    extern_name: e.clone(),
                    ..Dependency::default()
                })
                .collect(),
            ..crate::model::PackageInfo::default()
        };
        Some(ReadDependency {
            loaded,
            facts,
            index,
            cfg,
            package,
            parsed: OnceCell::new(),
        })
    }
}

impl ExternalValues for Dependencies<'_> {
    fn values(&self, path: &[String]) -> Vec<ValueType> {
        let Some((krate, inner)) = path.split_first() else {
            return Vec::new();
        };
        let Some(dep) = self
            .get(krate)
            .filter(|d| d.loaded.files.len() <= MAX_DEPENDENCY_FILES)
        else {
            return Vec::new();
        };
        let Some((def @ Def::Item { .. }, used)) = dep.index.resolve(&[], inner) else {
            return Vec::new();
        };
        if used != inner.len() {
            return Vec::new();
        }
        let decls = Decls::of(dep.files());
        // Asked for under the path the package names it by; the dependency's own public path
        // may differ (a re-export): the first value answers to the package's.
        let asked = path.join("::");
        let wanted = RefCell::new(BTreeMap::from([(asked.clone(), def)]));
        let mut values = api::value_types(&wanted, &decls, &dep.index, &api::NoExternals);
        values.sort_by_key(|v| v.path != asked);
        values
    }

    /// Read from the trait's crate and from each dependency that depends on it (parking_lot
    /// implements lock_api's `RawMutex`); an implementation is matched by the trait's last
    /// name, so a same-named trait of another crate can slip in: the harness's build decides.
    fn implementors(&self, trait_path: &[String]) -> Vec<String> {
        let (Some(krate), Some(name)) = (trait_path.first(), trait_path.last()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let readers = self
            .deps
            .iter()
            .filter(|d| &d.extern_name == krate || d.externs.contains(krate));
        for dep in readers {
            let Some(read) = self
                .get(&dep.extern_name)
                .filter(|d| d.loaded.files.len() <= MAX_DEPENDENCY_FILES)
            else {
                continue;
            };
            for (module, ty, args) in read.index.implementors(name) {
                if args != ImplArgs::Free(0) {
                    continue;
                }
                let Some((def @ Def::Item { .. }, _)) = read.index.resolve(&module, &[ty]) else {
                    continue;
                };
                if read.index.item(&def).is_some_and(|i| i.type_params > 0) {
                    continue;
                }
                // Its public path starts with the crate's own name; the package may rename it.
                let Some(path) = read.index.public_path(&def) else {
                    continue;
                };
                let inner = path.split_once("::").map_or("", |(_, rest)| rest);
                let candidate = format!("::{}::{inner}", dep.extern_name);
                if !inner.is_empty() && !out.contains(&candidate) {
                    out.push(candidate);
                }
            }
        }
        // A type named as the trait (parking_lot's `RawMutex` for `lock_api::RawMutex`) first:
        // the one a user would write.
        out.sort_by_key(|c| !c.ends_with(&format!("::{name}")));
        out
    }
}

/// A type of another crate the package makes public under its own path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Foreign {
    /// The path users write (`parking_lot::Mutex`).
    pub(crate) public_path: String,
    /// The defining crate, as the package's code names it (`lock_api`).
    pub(crate) krate: String,
    /// The path inside the defining crate, after its name (`["Mutex"]`).
    pub(crate) inner: Vec<String>,
    /// For an alias: the defining type's type arguments, in order.
    pub(crate) alias: Option<Vec<AliasArg>>,
}

/// One type argument an alias gives the type it names.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AliasArg {
    /// One of the alias's own parameters (`T`): the parameter stays, under this name.
    Param(String),
    /// A concrete type, fully qualified from the package (`::parking_lot::RawMutex`): the
    /// parameter is gone.
    Fixed(String),
}

/// The other crates' types the package re-exports or aliases, for its companion dependencies.
pub(crate) fn foreign_types(index: &CrateIndex, deps: &[Dependency]) -> Vec<Foreign> {
    // Only a companion's types are the package's product (lock_api's for parking_lot); a
    // third party's (`DashMap` aliased as a state store) is tested in its own crate.
    let known = |krate: &str| deps.iter().any(|d| d.extern_name == krate && d.companion);
    let crate::api::index::ForeignNames { reexports, aliases } = index.foreign_names();
    let mut out: Vec<Foreign> = reexports
        .into_iter()
        .filter(|(path, _)| known(&path[0]))
        .map(|(path, public_path)| Foreign {
            public_path,
            krate: path[0].clone(),
            inner: path[1..].to_vec(),
            alias: None,
        })
        .collect();
    for (def, public_path) in aliases {
        if let Some(f) = alias_target(index, &def, public_path) {
            if known(&f.krate) {
                out.push(f);
            }
        }
    }
    out
}

/// What a public alias names, when it is a type of another crate.
fn alias_target(index: &CrateIndex, def: &Def, public_path: String) -> Option<Foreign> {
    let Def::Item { module, .. } = def else {
        return None;
    };
    let item = index.item(def)?;
    let target: syn::Type = syn::parse_str(item.alias_of.as_deref()?).ok()?;
    let syn::Type::Path(tp) = &target else {
        return None;
    };
    if tp.qself.is_some() {
        return None;
    }
    let segs: Vec<String> = idents(&tp.path);
    let (Def::External(path), used) = index.resolve(module, &segs)? else {
        return None;
    };
    if used != segs.len() || path.len() < 2 {
        return None;
    }
    let no_generics: [String; 0] = [];
    let cx = TyCx::new("", &no_generics, Some(Scope { index, module }), None);
    let mut args = Vec::new();
    for ty in type_args(tp.path.segments.last()?) {
        let own = type_name(ty).filter(|n| item.alias_params.contains(n));
        args.push(match own {
            Some(name) => AliasArg::Param(name),
            None => AliasArg::Fixed(cx.qualify(ty).ok()?),
        });
    }
    Some(Foreign {
        public_path,
        krate: path[0].clone(),
        inner: path[1..].to_vec(),
        alias: Some(args),
    })
}

/// The model of a dependency's type, analysed in its own crate, as the package presents it:
/// its public path and package, no instrumentation (the dependency is not copied), and for
/// an alias, the parameters the alias fixes gone (a method parameter of such a type is not
/// generated) and the ones it renames renamed.
pub(crate) fn graft(
    mut model: TypeModel,
    foreign: &Foreign,
    package: &str,
    dep: &Dependency,
) -> TypeModel {
    model.sync_reasons.push(format!(
        "defined in {} {} as `{}`",
        dep.package, dep.version, model.path
    ));
    model.path = foreign.public_path.clone();
    model.package = package.to_string();
    model.split_points.clear();
    model.sync_sites.clear();
    model.mutation_sites.clear();
    for m in &mut model.methods {
        m.body_start = None;
    }
    if let Some(args) = &foreign.alias {
        apply_alias(&mut model, args);
    }
    model
}

/// Renames or removes the defining type's type parameters as the alias's arguments say.
fn apply_alias(model: &mut TypeModel, args: &[AliasArg]) {
    let mut renames: BTreeMap<String, String> = BTreeMap::new();
    let mut fixed: Vec<String> = Vec::new();
    let mut type_params = model
        .generics
        .iter()
        .filter(|g| g.kind != GenericKind::Lifetime);
    for arg in args {
        let Some(param) = type_params.next() else {
            break;
        };
        match arg {
            AliasArg::Param(name) if *name != param.name => {
                renames.insert(param.name.clone(), name.clone());
            }
            AliasArg::Param(_) => {}
            AliasArg::Fixed(_) => fixed.push(param.name.clone()),
        }
    }
    // Parameters after the alias's arguments take their defaults: they are fixed too.
    fixed.extend(type_params.map(|g| g.name.clone()));
    model.generics.retain(|g| !fixed.contains(&g.name));
    for g in &mut model.generics {
        g.written = rename_words(&g.written, &renames);
        g.name = rename_words(&g.name, &renames);
    }
    // All at once: an alias may give a parameter the name of one it fixes.
    let to = |name: &str| {
        Some(
            renames
                .get(name)
                .cloned()
                .unwrap_or_else(|| name.to_string()),
        )
    };
    let alias = model.path.clone();
    let fix = |params: &mut Vec<Param>, reason: &mut Option<Reason>| {
        let mut problems = Vec::new();
        for p in params.iter_mut() {
            let names_fixed = |f: &String| {
                p.kind
                    .any(&|k| matches!(k, ParamKind::Generic { name } if name == f))
            };
            if let Some(name) = fixed.iter().find(|f| names_fixed(f)) {
                problems.push(Problem::Parameter {
                    name: p.name.clone(),
                    why: format!("type parameter `{name}` is fixed by the alias `{alias}`"),
                });
                p.kind = ParamKind::Unsupported;
            }
            p.kind.rename_generics(&to);
            p.ty = rename_words(&p.ty, &renames);
        }
        if !problems.is_empty() && reason.is_none() {
            *reason = Reason::signature(problems);
        }
    };
    for c in &mut model.constructors {
        fix(&mut c.params, &mut c.reason);
    }
    for m in &mut model.methods {
        fix(&mut m.params, &mut m.reason);
        if let Some(r) = &mut m.returns {
            *r = rename_words(r, &renames);
        }
    }
}

/// `text` with every whole identifier that is a key of `renames` replaced by its value, all
/// at once.
fn rename_words(text: &str, renames: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut word = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        out.push_str(renames.get(&word).unwrap_or(&word));
        word.clear();
        out.push(c);
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_identifiers_are_renamed() {
        let renames = BTreeMap::from([("T".to_string(), "V".to_string())]);
        assert_eq!(rename_words("&T, Tx<T>", &renames), "&V, Tx<V>");
        assert_eq!(rename_words("T", &renames), "V");
        // All at once: `R` becomes `T` while `T` becomes `U`, not `U` twice.
        let swap = BTreeMap::from([
            ("R".to_string(), "T".to_string()),
            ("T".to_string(), "U".to_string()),
        ]);
        assert_eq!(rename_words("Map<R, T>", &swap), "Map<T, U>");
    }
}
