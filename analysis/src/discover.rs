//! Thread-safety detection: which types of a crate synchronise internally (a field holds a
//! lock, an atomic or a concurrent container, directly or through another type of the crate
//! or a known one of a dependency, or the type has `unsafe impl Sync`), and for each the syntax
//! the lock analysis walks ([`FoundType`]: fields, method bodies, statics). What can be built
//! and called of such a type is the API model's ([`crate::api::describe`]).
//!
//! The parallel pass keeps owned [`FileFacts`] per file; [`thread_safe_names`] decides on
//! them, by composition to a fixpoint, which types are thread-safe, so only the files that
//! matter are parsed again for [`discover`].

use crate::api::index::{module_facts, CrateIndex, Def, ModuleFacts};
use crate::api::macros::{MacroTable, Unread};
use crate::api::syntax::{Decls, TypeDecl};
use crate::api::types::first_type_arg;
pub(crate) use crate::api::types::type_name;
use crate::api::{self, is_ref_self};
use crate::known::known_sync;
use crate::model::*;
use crate::source::SourceFile;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// What a field holds, as far as the analysis needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldKind {
    /// std or parking_lot/spin `Mutex`-like: `lock()` is exclusive.
    Mutex,
    /// `RwLock`-like: `read()` shared, `write()` exclusive.
    RwLock,
    Condvar,
    Atomic,
    /// A concurrent container (`DashMap`, `SegQueue`, `ArrayQueue`), or another type that
    /// synchronises internally: each call is atomic.
    Concurrent,
    Once,
    UnsafeCell,
    Other,
}

/// A function of an impl block of the type, with or without `self`.
pub(crate) struct FnDecl<'a> {
    pub name: String,
    pub item: &'a syn::ImplItemFn,
    pub file: &'a Path,
    /// Takes `&self` (or `self: &Self`).
    pub ref_self: bool,
    /// For a method of a local type held in a field (`inner: Arc<Inner>`): that field's name.
    /// Its `self` is `self.inner` of the type under analysis.
    pub field: Option<String>,
}

impl FnDecl<'_> {
    /// The name calls resolve to: `helper`, or `inner::helper` for a field's method.
    pub(crate) fn key(&self) -> String {
        match &self.field {
            None => self.name.clone(),
            Some(f) => format!("{f}::{}", self.name),
        }
    }
}

/// A thread-safe type with the syntax the later passes need.
pub(crate) struct FoundType<'a> {
    pub model: TypeModel,
    /// Field paths from `self` (`count`, `inner.map`) and what they hold.
    pub fields: HashMap<String, FieldKind>,
    /// Fields whose calls the analysis cannot see into: trait objects and generic parameters
    /// (`handler` → `a trait object`).
    pub opaque_fields: HashMap<String, String>,
    /// `static`s holding a lock or atomic (`CACHE`), reachable from any method by name.
    pub statics: HashSet<String>,
    pub fns: Vec<FnDecl<'a>>,
    /// Methods whose bodies a `macro_rules!` template wrote: their spans point into the
    /// macro, so no schedule point goes there.
    pub expanded: HashSet<String>,
}

/// What the parallel pass keeps of one file: enough to decide which types are thread-safe,
/// to choose the files worth a second parse, and to resolve names anywhere in the crate.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileFacts {
    pub types: Vec<TypeFact>,
    pub impls: Vec<ImplFact>,
    /// Traits declared in the file.
    pub traits: Vec<String>,
    pub modules: Vec<ModuleFacts>,
    pub macros: MacroTable,
    /// Item macros that were not expanded because their definition was not known yet.
    pub unknown_macros: Vec<String>,
    /// Item macros that declare modules covcon could not read.
    pub unread: Vec<Unread>,
}

/// A struct or enum, by name, with what its fields hold.
#[derive(Debug, Clone, Default)]
pub(crate) struct TypeFact {
    pub name: String,
    pub module: Vec<String>,
    /// Per field: its name, the sync primitive it names (`Mutex`), and every path its type
    /// mentions (`["Arc"]`, `["inner", "Slots"]`).
    pub fields: Vec<(String, Option<String>, Vec<Vec<String>>)>,
    /// Names its generic parameters' defaults and bounds mention (`Key` in `K = Key`,
    /// `Metric` in `M: Metric`).
    pub generic_names: Vec<String>,
}

/// An impl block, by the last segment of its self type.
#[derive(Debug, Clone, Default)]
pub(crate) struct ImplFact {
    pub self_name: String,
    pub trait_name: Option<String>,
    pub unsafe_impl: bool,
    /// Type names in the signatures of its public functions (argument types to build).
    pub signature_names: Vec<String>,
}

impl FileFacts {
    pub(crate) fn merge(&mut self, other: &FileFacts) {
        self.types.extend(other.types.iter().cloned());
        self.impls.extend(other.impls.iter().cloned());
        self.traits.extend(other.traits.iter().cloned());
        self.modules.extend(other.modules.iter().cloned());
        self.macros.merge(&other.macros);
        self.unknown_macros
            .extend(other.unknown_macros.iter().cloned());
        self.unread.extend(other.unread.iter().cloned());
    }

    /// Whether the file declares a type or trait named in `names`, or implements one.
    pub(crate) fn mentions(&self, names: &HashSet<String>) -> bool {
        self.types.iter().any(|t| names.contains(&t.name))
            || self.impls.iter().any(|i| names.contains(&i.self_name))
            || self.traits.iter().any(|t| names.contains(t))
    }
}

/// Collects the owned facts of one parsed (and expanded) file.
pub(crate) fn file_facts(ast: &syn::File, module: &[String]) -> FileFacts {
    let mut facts = FileFacts::default();
    collect_facts(&ast.items, module, &mut facts);
    module_facts(&ast.items, module, &mut facts.modules);
    facts.macros.collect(&ast.items);
    facts
}

fn collect_facts(items: &[syn::Item], module: &[String], facts: &mut FileFacts) {
    for item in items {
        match item {
            syn::Item::Struct(s) => facts.types.push(type_fact(
                &s.ident,
                module,
                &s.generics,
                s.fields.iter().enumerate().map(|(i, f)| {
                    (
                        f.ident.as_ref().map_or(i.to_string(), |n| n.to_string()),
                        &f.ty,
                    )
                }),
            )),
            syn::Item::Enum(e) => facts.types.push(type_fact(
                &e.ident,
                module,
                &e.generics,
                e.variants.iter().flat_map(|v| {
                    v.fields.iter().enumerate().map(move |(i, f)| {
                        (
                            f.ident
                                .as_ref()
                                .map_or(format!("{}.{i}", v.ident), |n| n.to_string()),
                            &f.ty,
                        )
                    })
                }),
            )),
            syn::Item::Impl(i) => {
                let Some(self_name) = type_name(&i.self_ty) else {
                    continue;
                };
                let mut names = Vec::new();
                for ii in &i.items {
                    if let syn::ImplItem::Fn(f) = ii {
                        if i.trait_.is_some() || matches!(f.vis, syn::Visibility::Public(_)) {
                            for input in &f.sig.inputs {
                                if let syn::FnArg::Typed(t) = input {
                                    mentioned_names(&t.ty, &mut names);
                                }
                            }
                            if let syn::ReturnType::Type(_, t) = &f.sig.output {
                                mentioned_names(t, &mut names);
                            }
                        }
                    }
                }
                facts.impls.push(ImplFact {
                    self_name,
                    trait_name: i
                        .trait_
                        .as_ref()
                        .and_then(|t| t.1.segments.last())
                        .map(|s| s.ident.to_string()),
                    unsafe_impl: i.unsafety.is_some(),
                    signature_names: names,
                });
            }
            syn::Item::Trait(t) => facts.traits.push(t.ident.to_string()),
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    let mut child = module.to_vec();
                    child.push(syn::ext::IdentExt::unraw(&m.ident).to_string());
                    collect_facts(inner, &child, facts);
                }
            }
            _ => {}
        }
    }
}

fn type_fact<'a>(
    ident: &syn::Ident,
    module: &[String],
    generics: &syn::Generics,
    fields: impl Iterator<Item = (String, &'a syn::Type)>,
) -> TypeFact {
    let mut generic_names = Vec::new();
    for p in generics.type_params() {
        if let Some(d) = &p.default {
            mentioned_names(d, &mut generic_names);
        }
        for b in &p.bounds {
            if let syn::TypeParamBound::Trait(t) = b {
                generic_names.extend(t.path.segments.last().map(|s| s.ident.to_string()));
            }
        }
    }
    TypeFact {
        generic_names,
        name: ident.to_string(),
        module: module.to_vec(),
        fields: fields
            .map(|(name, ty)| {
                let mut paths = Vec::new();
                mentioned_paths(ty, &mut paths);
                (name, sync_type_in(ty), paths)
            })
            .collect(),
    }
}

/// Every type path a type mentions, generic arguments included, as segments.
fn mentioned_paths(ty: &syn::Type, out: &mut Vec<Vec<String>>) {
    use syn::visit::Visit;
    struct Paths<'o>(&'o mut Vec<Vec<String>>);
    impl<'ast> Visit<'ast> for Paths<'_> {
        fn visit_type_path(&mut self, p: &'ast syn::TypePath) {
            let mut segs: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            if p.path.leading_colon.is_some() {
                segs.insert(0, String::new());
            }
            self.0.push(segs);
            syn::visit::visit_type_path(self, p);
        }
    }
    Paths(out).visit_type(ty);
}

fn mentioned_names(ty: &syn::Type, out: &mut Vec<String>) {
    let mut paths = Vec::new();
    mentioned_paths(ty, &mut paths);
    out.extend(paths.into_iter().filter_map(|p| p.last().cloned()));
}

/// The thread-safe types of a crate, by (module, name), from the facts of all its files: a
/// field holds a sync primitive, `unsafe impl Sync` (the value is `None`), or — to a fixpoint —
/// a field holds a thread-safe type of the crate or a known synchronising type of a dependency
/// (the value says which).
pub(crate) type ThreadSafe = BTreeMap<(Vec<String>, String), Option<String>>;

pub(crate) fn thread_safe_names(facts: &FileFacts, index: &CrateIndex) -> ThreadSafe {
    let mut safe = ThreadSafe::new();
    let unsafe_sync: HashSet<&str> = facts
        .impls
        .iter()
        .filter(|i| i.unsafe_impl && i.trait_name.as_deref() == Some("Sync"))
        .map(|i| i.self_name.as_str())
        .collect();
    // A type with `unsafe impl Sync` alone is thread-safe itself, but a field holding one
    // (a raw-pointer bucket declared `Sync`) does not make its owner synchronise.
    let mut declared_only = HashSet::new();
    for t in &facts.types {
        let direct = t.fields.iter().any(|f| f.1.is_some());
        if direct || unsafe_sync.contains(t.name.as_str()) {
            safe.insert((t.module.clone(), t.name.clone()), None);
            if !direct {
                declared_only.insert((t.module.clone(), t.name.clone()));
            }
        }
    }
    loop {
        let mut added = false;
        for t in &facts.types {
            let key = (t.module.clone(), t.name.clone());
            if safe.contains_key(&key) {
                continue;
            }
            let holds = t.fields.iter().find_map(|(field, _, paths)| {
                paths.iter().find_map(|p| {
                    let (def, used) = index.resolve(&t.module, p)?;
                    if used != p.len() {
                        return None;
                    }
                    match def {
                        Def::Item { module, name, .. }
                            if name != t.name || module != t.module =>
                        {
                            let key = (module, name.clone());
                            (safe.contains_key(&key) && !declared_only.contains(&key))
                                .then(|| format!("field '{field}' holds a `{name}`, which synchronises internally"))
                        }
                        Def::External(path) => known_sync(&path).map(|_| {
                            format!(
                                "field '{field}' holds a `{}`, which synchronises internally",
                                path.join("::")
                            )
                        }),
                        _ => None,
                    }
                })
            });
            if let Some(why) = holds {
                safe.insert(key, Some(why));
                added = true;
            }
        }
        if !added {
            break;
        }
    }
    safe
}

/// Type names worth a second parse: the thread-safe types, the types their fields and their
/// public signatures name (two levels, for argument values), the traits they implement, and
/// builders.
pub(crate) fn relevant_names(facts: &FileFacts, safe: &ThreadSafe) -> HashSet<String> {
    let mut names: HashSet<String> = safe.keys().map(|(_, n)| n.clone()).collect();
    let mut bound_traits = HashSet::new();
    for t in &facts.types {
        if names.contains(&t.name) {
            for (_, _, paths) in &t.fields {
                names.extend(paths.iter().filter_map(|p| p.last().cloned()));
            }
            names.extend(t.generic_names.iter().cloned());
            bound_traits.extend(t.generic_names.iter().cloned());
        }
    }
    // The types that implement a trait a type parameter is bounded by: its candidates.
    for i in &facts.impls {
        if i.trait_name
            .as_ref()
            .is_some_and(|t| bound_traits.contains(t))
        {
            names.insert(i.self_name.clone());
        }
    }
    for _ in 0..2 {
        let mut more = Vec::new();
        for i in &facts.impls {
            if names.contains(&i.self_name) {
                more.extend(i.signature_names.iter().cloned());
                more.extend(i.trait_name.iter().cloned());
            }
        }
        names.extend(more);
    }
    for t in &facts.types {
        if t.name.ends_with("Builder") {
            names.insert(t.name.clone());
        }
    }
    names
}

/// Finds the thread-safe types among `files`. `filter` keeps only types whose name or path
/// matches one of the given strings (all when empty). Without `index`, names are resolved
/// within `files` only.
pub(crate) fn discover<'a>(
    files: &'a [SourceFile],
    index: Option<&CrateIndex>,
    pkg: &PackageInfo,
    filter: &[String],
) -> Vec<FoundType<'a>> {
    let own_index;
    let index = match index {
        Some(i) => i,
        None => {
            let mut modules = Vec::new();
            for f in files {
                module_facts(&f.ast.items, &f.module, &mut modules);
            }
            own_index = CrateIndex::new(
                &pkg.lib_name,
                &pkg.edition,
                modules,
                pkg.dependencies.iter().map(|d| d.extern_name.clone()),
            );
            &own_index
        }
    };
    let mut facts = FileFacts::default();
    for f in files {
        facts.merge(&file_facts(&f.ast, &f.module));
    }
    let safe = thread_safe_names(&facts, index);
    let decls = Decls::of(files);
    let mut found = Vec::new();
    for decl in &decls.types {
        let Some(composed) = safe.get(&(decl.module.clone(), decl.name.clone())) else {
            continue;
        };
        let def = Def::Item {
            module: decl.module.clone(),
            name: decl.name.clone(),
            kind: match decl.item {
                api::syntax::DeclItem::Struct(_) => api::index::ItemKind::Struct,
                api::syntax::DeclItem::Enum(_) => api::index::ItemKind::Enum,
            },
        };
        let public_path = index.public_path(&def).filter(|_| decl.is_pub);
        let path = public_path.clone().unwrap_or_else(|| {
            std::iter::once(pkg.lib_name.clone())
                .chain(decl.module.iter().cloned())
                .chain(std::iter::once(decl.name.clone()))
                .collect::<Vec<_>>()
                .join("::")
        });
        if !filter.is_empty() && !filter.iter().any(|f| *f == decl.name || *f == path) {
            continue;
        }
        if let Some(t) = build_type(
            decl,
            path,
            public_path.is_some(),
            composed,
            pkg,
            &decls,
            index,
        ) {
            found.push(t);
        }
    }
    found
}

fn build_type<'a>(
    decl: &TypeDecl<'a>,
    path: String,
    reachable: bool,
    composed: &Option<String>,
    pkg: &PackageInfo,
    decls: &Decls<'a>,
    index: &CrateIndex,
) -> Option<FoundType<'a>> {
    let mut sync_reasons = Vec::new();
    let mut fields = HashMap::new();
    let mut inner_fns = Vec::new();
    for (name, ty) in &decl.fields {
        fields.insert(name.clone(), field_kind(ty));
        if let Some(what) = sync_type_in(ty) {
            sync_reasons.push(format!("field '{name}' is {}", article(&what)));
            continue;
        }
        // One level through a local type: `inner: Arc<Inner>` with `Inner { count: AtomicUsize }`.
        if let Some(inner) = local_inner(ty, decls, &decl.name) {
            // Its inherent `&self` methods are followed when called as `self.inner.m()`.
            for imp in decls
                .impls
                .iter()
                .filter(|i| i.self_name == inner.name && i.trait_path.is_none())
            {
                for item in &imp.item.items {
                    let syn::ImplItem::Fn(f) = item else { continue };
                    if f.sig.receiver().is_some_and(is_ref_self) {
                        inner_fns.push(FnDecl {
                            name: f.sig.ident.to_string(),
                            item: f,
                            file: imp.file,
                            ref_self: true,
                            field: Some(name.clone()),
                        });
                    }
                }
            }
            for (iname, ity) in &inner.fields {
                fields.insert(format!("{name}.{iname}"), field_kind(ity));
                if let Some(what) = sync_type_in(ity) {
                    sync_reasons.push(format!("field '{name}.{iname}' is {}", article(&what)));
                }
            }
        }
    }
    let impls = decls.impls_of(decl);
    let trait_named = |i: &api::syntax::ImplDecl, n: &str| {
        i.trait_path
            .and_then(|p| p.segments.last())
            .is_some_and(|s| s.ident == n)
    };
    if impls
        .iter()
        .any(|i| i.unsafe_impl && trait_named(i, "Sync"))
    {
        sync_reasons.push("unsafe impl Sync".to_string());
    }
    // Composition deeper than one level, or a dependency's synchronising type.
    for (name, ty) in &decl.fields {
        if let Some(kind) = composed_kind(ty, &decl.module, index) {
            if fields.get(name) == Some(&FieldKind::Other) {
                fields.insert(name.clone(), kind);
            }
        }
    }
    if sync_reasons.is_empty() {
        sync_reasons.push(composed.clone()?);
    }
    let api = api::describe(decl, decls, index);
    if api.methods.is_empty() {
        return None;
    }
    let mut model = TypeModel {
        path,
        package: pkg.name.clone(),
        name: decl.name.clone(),
        span: api::span_of(decl.file, decl.ident.span()),
        generics: api.generics,
        sync_reasons,
        implements_debug: api.implements_debug,
        constructors: api.constructors,
        methods: api.methods,
        pairs: vec![],
        split_points: vec![],
        values: api.values,
        supported: true,
        reason: None,
    };
    let unsupported = if !decl.is_pub {
        Some(Reason::NotPublic)
    } else if !model.constructors.iter().any(|c| c.supported) {
        Some(if model.constructors.is_empty() {
            Reason::NoConstructor
        } else {
            Reason::NoUsableConstructor
        })
    } else if !model.methods.iter().any(|m| m.supported) {
        Some(Reason::NoCallableMethod)
    } else {
        None
    };
    if let Some(why) = unsupported {
        model.supported = false;
        // A type the harness could try is left to it (rustc has the last word on what is
        // reachable); one it cannot try anyway is called internal here if no re-export of
        // its private module was seen.
        model.reason = Some(if decl.is_pub && !reachable {
            Reason::PrivateModule {
                also: Some(Box::new(why)),
            }
        } else {
            why
        });
    }
    let type_generics: Vec<String> = decl
        .generics
        .type_params()
        .map(|t| t.ident.to_string())
        .collect();
    let mut fns = Vec::new();
    let mut expanded = HashSet::new();
    for imp in &impls {
        for item in &imp.item.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            if imp.expanded || decl.expanded {
                expanded.insert(f.sig.ident.to_string());
            }
            fns.push(FnDecl {
                name: f.sig.ident.to_string(),
                item: f,
                file: imp.file,
                ref_self: f.sig.receiver().is_some_and(is_ref_self),
                field: None,
            });
        }
    }
    fns.extend(inner_fns);
    let mut opaque_fields = HashMap::new();
    for (name, ty) in &decl.fields {
        let held = peel_pointers(ty);
        if matches!(held, syn::Type::TraitObject(_)) {
            opaque_fields.insert(name.clone(), "a trait object".to_string());
        } else if let Some(g) = type_name(held).filter(|n| type_generics.contains(n)) {
            opaque_fields.insert(name.clone(), format!("of generic type `{g}`"));
        }
    }
    // Global locks: keyed by their name among the fields (statics are UPPER_CASE, fields not).
    let mut statics = HashSet::new();
    for (name, ty) in &decls.statics {
        if sync_type_in(ty).is_some() && !fields.contains_key(name) {
            fields.insert(name.clone(), field_kind(ty));
            statics.insert(name.clone());
        }
    }
    Some(FoundType {
        model,
        fields,
        fns,
        opaque_fields,
        statics,
        expanded,
    })
}

/// What a field holds when it is a thread-safe type of the crate or a known one of a
/// dependency (through `Arc`, `Box` and the like).
fn composed_kind(ty: &syn::Type, module: &[String], index: &CrateIndex) -> Option<FieldKind> {
    let held = peel_pointers(ty);
    let syn::Type::Path(p) = held else {
        return None;
    };
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    match index.resolve(module, &segs)? {
        (Def::External(path), _) => known_sync(&path),
        (Def::Item { .. }, _) => Some(FieldKind::Concurrent),
        _ => None,
    }
}

/// The type behind `Arc`/`Box`/`Rc` (`Box<dyn Fn()>` → `dyn Fn()`).
fn peel_pointers(ty: &syn::Type) -> &syn::Type {
    if let syn::Type::Path(p) = ty {
        if let Some(last) = p.path.segments.last() {
            if matches!(
                last.ident.to_string().as_str(),
                "Arc" | "Box" | "Rc" | "CachePadded"
            ) {
                if let Some(inner) = first_type_arg(last) {
                    return peel_pointers(inner);
                }
            }
        }
    }
    ty
}

fn article(what: &str) -> String {
    let vowel = what.starts_with(['A', 'E', 'I', 'O', 'U']);
    format!("{} {what}", if vowel { "an" } else { "a" })
}

/// The name of a sync primitive somewhere in `ty` (`Mutex`, `AtomicUsize`), if any.
pub(crate) fn sync_type_in(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => {
            for seg in &p.path.segments {
                let n = seg.ident.to_string();
                if is_sync_primitive(&n) {
                    return Some(n);
                }
            }
            let last = p.path.segments.last()?;
            if let syn::PathArguments::AngleBracketed(a) = &last.arguments {
                for g in &a.args {
                    if let syn::GenericArgument::Type(t) = g {
                        if let Some(n) = sync_type_in(t) {
                            return Some(n);
                        }
                    }
                }
            }
            None
        }
        syn::Type::Array(a) => sync_type_in(&a.elem),
        syn::Type::Tuple(t) => t.elems.iter().find_map(sync_type_in),
        syn::Type::Paren(p) => sync_type_in(&p.elem),
        syn::Type::Group(g) => sync_type_in(&g.elem),
        _ => None,
    }
}

fn is_sync_primitive(n: &str) -> bool {
    matches!(
        n,
        "Mutex"
            | "RwLock"
            | "Condvar"
            | "Once"
            | "OnceLock"
            | "LazyLock"
            | "ReentrantMutex"
            | "FairMutex"
            | "ShardedLock"
            | "AtomicCell"
            | "ArcSwap"
            | "ArcSwapOption"
            | "DashMap"
            | "SpinMutex"
            | "DashSet"
            | "SegQueue"
            | "ArrayQueue"
            | "ConcurrentQueue"
            | "SpinRwLock"
            | "Barrier"
    ) || (n.starts_with("Atomic") && n.len() > 6)
}

/// What a field's type holds at its top (through `Arc`, `Box`, `CachePadded`).
pub(crate) fn field_kind(ty: &syn::Type) -> FieldKind {
    let ty = match ty {
        syn::Type::Array(a) => &*a.elem,
        other => other,
    };
    let syn::Type::Path(p) = ty else {
        return FieldKind::Other;
    };
    let Some(last) = p.path.segments.last() else {
        return FieldKind::Other;
    };
    let n = last.ident.to_string();
    match n.as_str() {
        // A collection of locks (`Vec<Mutex<_>>`, segments, shards) counts as one lock.
        "Arc" | "Box" | "Rc" | "CachePadded" | "Pin" | "Vec" | "VecDeque" => first_type_arg(last)
            .map(field_kind)
            .unwrap_or(FieldKind::Other),
        "Mutex" | "ReentrantMutex" | "FairMutex" | "SpinMutex" => FieldKind::Mutex,
        "RwLock" | "ShardedLock" | "SpinRwLock" => FieldKind::RwLock,
        "Condvar" => FieldKind::Condvar,
        // `LazyLock<Mutex<_>>` derefs to its value: the lock inside is what is called.
        "LazyLock" | "Lazy" => first_type_arg(last)
            .map(field_kind)
            .unwrap_or(FieldKind::Once),
        "Once" | "OnceLock" => FieldKind::Once,
        "UnsafeCell" | "SyncUnsafeCell" => FieldKind::UnsafeCell,
        n if (n.starts_with("Atomic") && n.len() > 6) || n == "ArcSwap" || n == "ArcSwapOption" => {
            FieldKind::Atomic
        }
        "DashMap" | "DashSet" | "SegQueue" | "ArrayQueue" | "ConcurrentQueue" | "Injector" => {
            FieldKind::Concurrent
        }
        _ => FieldKind::Other,
    }
}

/// The local struct a field holds through `Arc`/`Box` (or directly), other than the type itself.
fn local_inner<'d, 'a>(
    ty: &syn::Type,
    decls: &'d Decls<'a>,
    self_name: &str,
) -> Option<&'d TypeDecl<'a>> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let n = last.ident.to_string();
    if matches!(n.as_str(), "Arc" | "Box" | "CachePadded") {
        return local_inner(first_type_arg(last)?, decls, self_name);
    }
    if n == self_name {
        return None;
    }
    decls.types.iter().find(|t| t.name == n)
}
