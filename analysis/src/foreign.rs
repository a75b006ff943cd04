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
//! It also builds *values* of dependencies' types for arguments ([`DependencyValues`]): a
//! method taking `guard: &Guard` (scc's `sdd::Guard`) or a registry keyed by `metrics::Key` is
//! called with a value made by that crate's own constructors (`Guard::new()`,
//! `Key::from_name(..)`), read from its source the first time one is asked for.

use crate::api::cfg::CfgSet;
use crate::api::index::{CrateIndex, Def};
use crate::api::syntax::Decls;
use crate::api::types::{Scope, TyCx};
use crate::api::{self, ExternalValues};
use crate::facts::FileFacts;
use crate::model::{
    Dependency, GenericKind, Param, ParamKind, Problem, Reason, TypeModel, ValueType,
};
use crate::source::{self, LoadedCrate, SourceFile};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// A crate's files (loaded in parallel), their joined facts and its name index.
pub(crate) fn load_package(
    lib_root: &Path,
    lib_name: &str,
    edition: &str,
    externs: impl IntoIterator<Item = String>,
    cfg: &CfgSet,
) -> (LoadedCrate, FileFacts, CrateIndex) {
    let loaded = source::load_crate(lib_root, cfg);
    let mut facts = FileFacts::default();
    for f in &loaded.files {
        facts.merge(&f.facts);
    }
    let index = CrateIndex::new(lib_name, edition, facts.modules.clone(), externs);
    (loaded, facts, index)
}

/// A dependency read from its library root: its files, facts and index, the configuration
/// they were read under, and a package description to analyse it as.
pub(crate) struct ReadDependency {
    pub(crate) loaded: LoadedCrate,
    pub(crate) facts: FileFacts,
    pub(crate) index: CrateIndex,
    pub(crate) cfg: CfgSet,
    pub(crate) package: crate::model::PackageInfo,
}

/// Reads the dependency the package names `krate`, with its own features; `None` when the
/// package has no such dependency or its source is not on disk.
pub(crate) fn read_dependency(
    deps: &[Dependency],
    krate: &str,
    target: &CfgSet,
) -> Option<ReadDependency> {
    let dep = deps.iter().find(|d| d.extern_name == krate)?;
    let lib_root = dep.lib_root.as_ref().filter(|r| r.is_file())?;
    let cfg = target.with_features(&dep.features);
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
    })
}

/// Files a dependency may have for covcon to read it for a value: past that, it is a large
/// crate whose types are not argument values (a runtime, a framework).
const MAX_DEPENDENCY_FILES: usize = 200;

/// Values of the package's dependencies' types, each dependency read once, on demand.
pub(crate) struct DependencyValues<'p> {
    deps: &'p [Dependency],
    target: &'p CfgSet,
    /// By extern name: the dependency's parsed files and index, `None` when it cannot be read.
    read: RefCell<HashMap<String, Option<ReadCrate>>>,
}

/// A dependency as read for its values: its parsed files and its name index.
type ReadCrate = (Vec<SourceFile>, CrateIndex);

impl<'p> DependencyValues<'p> {
    pub(crate) fn new(deps: &'p [Dependency], target: &'p CfgSet) -> DependencyValues<'p> {
        DependencyValues {
            deps,
            target,
            read: RefCell::new(HashMap::new()),
        }
    }

    fn read(&self, krate: &str) -> Option<ReadCrate> {
        let dep = read_dependency(self.deps, krate, self.target)?;
        if dep.loaded.files.len() > MAX_DEPENDENCY_FILES {
            return None;
        }
        let files = source::parse_relevant(&dep.loaded, &dep.cfg, |_| true);
        Some((files, dep.index))
    }
}

impl ExternalValues for DependencyValues<'_> {
    fn values(&self, path: &[String]) -> Vec<ValueType> {
        let Some((krate, inner)) = path.split_first() else {
            return Vec::new();
        };
        let mut read = self.read.borrow_mut();
        let entry = read
            .entry(krate.clone())
            .or_insert_with(|| self.read(krate));
        let Some((files, index)) = entry.as_ref() else {
            return Vec::new();
        };
        let Some((def @ Def::Item { .. }, used)) = index.resolve(&[], inner) else {
            return Vec::new();
        };
        if used != inner.len() {
            return Vec::new();
        }
        let decls = Decls::of(files);
        // Asked for under the path the package names it by; the dependency's own public path
        // may differ (a re-export): the first value answers to the package's.
        let asked = path.join("::");
        let wanted = RefCell::new(BTreeMap::from([(asked.clone(), def)]));
        let mut values = api::value_types(&wanted, &decls, index, &api::NoExternals);
        values.sort_by_key(|v| v.path != asked);
        values
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
    let segs: Vec<String> = tp
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let (Def::External(path), used) = index.resolve(module, &segs)? else {
        return None;
    };
    if used != segs.len() || path.len() < 2 {
        return None;
    }
    let no_generics: [String; 0] = [];
    let cx = TyCx::new("", &no_generics, Some(Scope { index, module }), None);
    let mut args = Vec::new();
    if let syn::PathArguments::AngleBracketed(a) = &tp.path.segments.last()?.arguments {
        for arg in &a.args {
            let syn::GenericArgument::Type(ty) = arg else {
                continue;
            };
            let own = crate::api::types::type_name(ty).filter(|n| item.alias_params.contains(n));
            args.push(match own {
                Some(name) => AliasArg::Param(name),
                None => AliasArg::Fixed(cx.qualify(ty).ok()?),
            });
        }
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
    let mut renames: Vec<(String, String)> = Vec::new();
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
                renames.push((param.name.clone(), name.clone()))
            }
            AliasArg::Param(_) => {}
            AliasArg::Fixed(_) => fixed.push(param.name.clone()),
        }
    }
    // Parameters after the alias's arguments take their defaults: they are fixed too.
    fixed.extend(type_params.map(|g| g.name.clone()));
    model.generics.retain(|g| !fixed.contains(&g.name));
    for g in &mut model.generics {
        if let Some((_, to)) = renames.iter().find(|(from, _)| *from == g.name) {
            g.written = rename_words(&g.written, &g.name, to);
            g.name = to.clone();
        }
    }
    let alias = model.path.clone();
    let fix = |params: &mut Vec<Param>, supported: &mut bool, reason: &mut Option<Reason>| {
        let mut problems = Vec::new();
        for p in params.iter_mut() {
            for (from, to) in &renames {
                rename_kind(&mut p.kind, from, to);
                p.ty = rename_words(&p.ty, from, to);
            }
            if let Some(name) = fixed.iter().find(|f| mentions_generic(&p.kind, f)) {
                problems.push(Problem::Parameter {
                    name: p.name.clone(),
                    why: format!("type parameter `{name}` is fixed by the alias `{alias}`"),
                });
                p.kind = ParamKind::Unsupported;
            }
        }
        if !problems.is_empty() && *supported {
            *supported = false;
            *reason = Reason::signature(problems);
        }
    };
    for c in &mut model.constructors {
        fix(&mut c.params, &mut c.supported, &mut c.reason);
    }
    for m in &mut model.methods {
        fix(&mut m.params, &mut m.supported, &mut m.reason);
        if let Some(r) = &mut m.returns {
            for (from, to) in &renames {
                *r = rename_words(r, from, to);
            }
        }
    }
}

fn mentions_generic(kind: &ParamKind, name: &str) -> bool {
    match kind {
        ParamKind::Generic { name: n } => n == name,
        ParamKind::Vec { elem } | ParamKind::Slice { elem } => mentions_generic(elem, name),
        ParamKind::Ref { inner }
        | ParamKind::Option { inner }
        | ParamKind::Pointer { inner, .. } => mentions_generic(inner, name),
        ParamKind::Result { ok } => mentions_generic(ok, name),
        ParamKind::Closure { returns, .. } => mentions_generic(returns, name),
        ParamKind::Tuple { elems } => elems.iter().any(|e| mentions_generic(e, name)),
        _ => false,
    }
}

fn rename_kind(kind: &mut ParamKind, from: &str, to: &str) {
    match kind {
        ParamKind::Generic { name } if name == from => *name = to.to_string(),
        ParamKind::Vec { elem } | ParamKind::Slice { elem } => rename_kind(elem, from, to),
        ParamKind::Ref { inner }
        | ParamKind::Option { inner }
        | ParamKind::Pointer { inner, .. } => rename_kind(inner, from, to),
        ParamKind::Result { ok } => rename_kind(ok, from, to),
        ParamKind::Closure { returns, .. } => rename_kind(returns, from, to),
        ParamKind::Tuple { elems } => elems.iter_mut().for_each(|e| rename_kind(e, from, to)),
        _ => {}
    }
}

/// `text` with every whole identifier `from` replaced by `to`.
fn rename_words(text: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        out.push_str(if word == from { to } else { &word });
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
        assert_eq!(rename_words("&T, Tx<T>", "T", "V"), "&V, Tx<V>");
        assert_eq!(rename_words("T", "T", "V"), "V");
    }
}
