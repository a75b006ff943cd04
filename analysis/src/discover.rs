//! Thread-safety detection: which types of a crate synchronise internally (a field holds a
//! lock, an atomic or a concurrent container, directly or through another type of the crate
//! or a known one of a dependency, or the type has `unsafe impl Sync`), and for each the syntax
//! the lock analysis walks ([`FoundType`]: fields, method bodies, statics). What can be built
//! and called of such a type is the API model's ([`crate::api::describe`]).
//!
//! The parallel pass keeps owned [`FileFacts`] per file (`facts.rs`); [`thread_safe_names`] decides on
//! them, by composition to a fixpoint, which types are thread-safe, so only the files that
//! matter are parsed again for [`discover`].

use crate::api::index::{module_facts, CrateIndex, Def};
use crate::api::render::idents;
use crate::api::syntax::{DeclItem, Decls, TypeDecl};
use crate::api::types::first_type_arg;
pub(crate) use crate::api::types::type_name;
use crate::api::{self, is_ref_self};
pub(crate) use crate::facts::FieldKind;
use crate::facts::{field_kind, file_facts, lock_type, sync_type_in, with_defaults, FileFacts};
use crate::known::known_sync;
use crate::model::*;
use crate::source::SourceFile;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

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

/// The path users name `decl` by, when it is public and reachable.
fn public_path(decl: &TypeDecl, index: &CrateIndex) -> Option<String> {
    let def = Def::Item {
        module: decl.module.clone(),
        name: decl.name.clone(),
        kind: match decl.item {
            api::syntax::DeclItem::Struct(_) => api::index::ItemKind::Struct,
            api::syntax::DeclItem::Enum(_) => api::index::ItemKind::Enum,
        },
    };
    index.public_path(&def).filter(|_| decl.is_pub)
}

/// `TypeModel::path` of `decl`: its public path, else `krate::module::Type`.
fn model_path(decl: &TypeDecl, index: &CrateIndex, pkg: &PackageInfo) -> String {
    public_path(decl, index).unwrap_or_else(|| internal_path(decl, pkg))
}

/// `krate::module::Type`: the path of a type no public path names.
fn internal_path(decl: &TypeDecl, pkg: &PackageInfo) -> String {
    std::iter::once(pkg.lib_name.clone())
        .chain(decl.module.iter().cloned())
        .chain(std::iter::once(decl.name.clone()))
        .collect::<Vec<_>>()
        .join("::")
}

/// A thread-safe type with the syntax the later passes need.
pub(crate) struct FoundType<'a> {
    pub model: TypeModel,
    /// Field paths from `self` (`count`, `inner.map`) and what they hold.
    pub fields: HashMap<String, FieldKind>,
    /// The lock type each lock field holds (`state` → `Mutex<State>`).
    pub lock_types: HashMap<String, String>,
    /// Fields whose calls the analysis cannot see into: trait objects and generic parameters
    /// (`handler` → `a trait object`).
    pub opaque_fields: HashMap<String, String>,
    /// `static`s holding a lock or atomic (`CACHE`), reachable from any method by name.
    pub statics: HashSet<String>,
    pub fns: Vec<FnDecl<'a>>,
    /// Methods whose bodies a `macro_rules!` template wrote: their spans point into the
    /// macro, so no schedule point goes there.
    pub expanded: HashSet<String>,
    /// Fields holding a local type whose fields are followed (`inner` → `Inner`, for
    /// `inner: Arc<Inner<T>>`): state another type may share.
    pub inner_types: HashMap<String, String>,
    /// Fields whose [`FieldKind::Concurrent`] is a thread-safe type of the crate itself: its
    /// synchronisation is instrumented in its own code, so a call on it is no schedule point
    /// of its own (a dependency's container, `DashMap`, is: [`crate::model::SyncOp::Container`]).
    pub own_sync: HashSet<String>,
}

/// The thread-safe types of a crate, by (module, name), from the facts of all its files: a
/// field holds a sync primitive, `unsafe impl Sync` (the value is `None`), or — to a fixpoint —
/// a field holds a thread-safe type of the crate or a known synchronising type of a dependency
/// (the value says which).
pub(crate) type ThreadSafe = BTreeMap<(Vec<String>, String), Option<String>>;

pub(crate) fn thread_safe_names(facts: &FileFacts, index: &CrateIndex) -> ThreadSafe {
    let mut safe = ThreadSafe::new();
    let unsafe_sync = unsafe_sync_names(facts);
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
            // A type declared `Sync` is looked at again: it synchronises for real when a
            // field holds a synchronising type (`SkipList` with `unsafe impl Sync` and its
            // atomics in `hot_data: CachePadded<HotData>`), and then its owners do too.
            if safe.contains_key(&key) && !declared_only.contains(&key) {
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
            let holds = holds.or_else(|| fixed_param_holds(t, facts, index, &safe, &declared_only));
            if let Some(why) = holds {
                declared_only.remove(&key);
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

/// A field whose type is a type parameter the crate fixes, in an inherent impl, to a
/// synchronising type (`state: S` with `impl RateLimiter<NotKeyed, InMemoryState, ..>`): the
/// type synchronises through it as the crate uses it.
fn fixed_param_holds(
    t: &crate::facts::TypeFact,
    facts: &FileFacts,
    index: &CrateIndex,
    safe: &ThreadSafe,
    declared_only: &HashSet<(Vec<String>, String)>,
) -> Option<String> {
    for (field, at) in &t.param_fields {
        for imp in facts
            .impls
            .iter()
            .filter(|i| i.self_name == t.name && i.trait_name.is_none())
        {
            let Some(Some(arg)) = imp.fixed_args.get(*at) else {
                continue;
            };
            let Some((def, used)) = index.resolve(&imp.module, arg) else {
                continue;
            };
            if used != arg.len() {
                continue;
            }
            let name = arg.last().cloned().unwrap_or_default();
            let synchronises = match def {
                Def::Item { module, name, .. } => {
                    let key = (module, name);
                    safe.contains_key(&key) && !declared_only.contains(&key)
                }
                Def::External(path) => known_sync(&path).is_some(),
                _ => false,
            };
            if synchronises {
                return Some(format!(
                    "field '{field}' holds the `{name}` an impl of `{}` fixes, which synchronises internally",
                    t.name
                ));
            }
        }
    }
    None
}

/// The thread-safe types that cannot be shared between threads themselves (a `Cell`, a raw
/// pointer, … without `unsafe impl Sync`): they synchronise for their owners (`Single` inside
/// `ConcurrentQueue`), but no test can share one.
pub(crate) fn not_shareable(facts: &FileFacts) -> HashSet<(Vec<String>, String)> {
    let unsafe_sync = unsafe_sync_names(facts);
    facts
        .types
        .iter()
        .filter(|t| t.not_sync && !unsafe_sync.contains(t.name.as_str()))
        .map(|t| (t.module.clone(), t.name.clone()))
        .collect()
}

/// The names of the types with `unsafe impl Sync`.
fn unsafe_sync_names(facts: &FileFacts) -> HashSet<&str> {
    facts
        .impls
        .iter()
        .filter(|i| i.unsafe_impl && i.trait_name.as_deref() == Some("Sync"))
        .map(|i| i.self_name.as_str())
        .collect()
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
    const_files: &'a [SourceFile],
    index: Option<&CrateIndex>,
    pkg: &PackageInfo,
    filter: &[String],
    externals: &dyn api::ExternalValues,
    usages: &api::usage::Usages,
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
    let not_shareable = not_shareable(&facts);
    let mut decls = Decls::of(files);
    // Only the constants of the files of constants: their other items (a helper type, an
    // impl) stay out of discovery, as they were before those files were read.
    decls.consts.extend(Decls::of(const_files).consts);
    let mut found = Vec::new();
    // The index in `decls.types` of each found type's declaration.
    let mut found_decls = Vec::new();
    for (decl_index, decl) in decls.types.iter().enumerate() {
        let key = (decl.module.clone(), decl.name.clone());
        // A type that cannot be shared is kept as a confined one: tested only through the
        // handles it hands out (`lib.rs` drops it when it hands out none).
        let Some(composed) = safe.get(&key) else {
            continue;
        };
        let confined = not_shareable.contains(&key);
        let public_path = public_path(decl, index);
        let path = public_path
            .clone()
            .unwrap_or_else(|| internal_path(decl, pkg));
        if !filter.is_empty() && !filter.iter().any(|f| *f == decl.name || *f == path) {
            continue;
        }
        if let Some(mut t) = build_type(
            decl,
            path,
            public_path.is_some(),
            composed,
            pkg,
            &decls,
            index,
            externals,
            usages,
        ) {
            t.model.confined = confined;
            found.push(t);
            found_decls.push(decl_index);
        }
    }
    let root = files.iter().find(|f| f.module.is_empty());
    // A method whose doc points to a section of the crate's doc for details, where that
    // section says the operations it speaks of are not atomic (papaya's `clear` and `retain`,
    // to "# Consistency"), is not atomic.
    let sections = root.map_or_else(Vec::new, |f| {
        api::contract::not_atomic_sections(&f.ast.attrs)
    });
    for t in &mut found {
        let pointing: HashMap<String, Approximation> = t
            .fns
            .iter()
            .filter(|f| f.field.is_none())
            .filter_map(|f| {
                let why = api::contract::section_not_atomic(&f.item.attrs, &sections)?;
                Some((f.name.clone(), why))
            })
            .collect();
        for m in &mut t.model.methods {
            if let Some(why) = pointing.get(&m.name) {
                if !matches!(m.approximate, Some(Approximation::NotAtomic { .. })) {
                    m.approximate = Some(why.clone());
                }
            }
        }
    }
    // A method that answers what an approximate method of the crate answers.
    let answers_from = answers_from_approximate(&decls, index);
    for (t, decl_index) in found.iter_mut().zip(&found_decls) {
        for m in t
            .model
            .methods
            .iter_mut()
            .filter(|m| m.approximate.is_none())
        {
            if let Some(why) = answers_from.get(&(*decl_index, m.name.clone())) {
                m.approximate = Some(why.clone());
            }
        }
    }
    // A crate whose doc says whole-structure operations see a snapshot (flurry): those of
    // its types' methods that take no key or value of their own are approximate.
    let crate_doc = root.and_then(|f| api::contract::crate_approximation(&f.ast.attrs));
    if let Some(why) = crate_doc {
        for t in &mut found {
            for m in t
                .model
                .methods
                .iter_mut()
                .filter(|m| m.approximate.is_none())
            {
                let whole = m.params.iter().all(|p| {
                    matches!(
                        p.kind,
                        ParamKind::FromReceiver { .. } | ParamKind::Instance { .. }
                    )
                });
                if whole {
                    m.approximate = Some(why.clone());
                }
            }
        }
    }
    found
}

#[allow(clippy::too_many_arguments)]
fn build_type<'a>(
    decl: &TypeDecl<'a>,
    path: String,
    reachable: bool,
    composed: &Option<String>,
    pkg: &PackageInfo,
    decls: &Decls<'a>,
    index: &CrateIndex,
    externals: &dyn api::ExternalValues,
    usages: &api::usage::Usages,
) -> Option<FoundType<'a>> {
    let SyncFields {
        mut fields,
        lock_types,
        mut sync_reasons,
        inner_fns,
        inner_types,
        own_sync,
    } = sync_fields(decl, decls, index);
    if sync_reasons.is_empty() {
        sync_reasons.push(composed.clone()?);
    }
    let api = api::describe(decl, decls, index, externals, usages);
    // A private type with no public method is kept for its synchronisation sites, which the
    // package's tested types take over (`analyze_files`): mini-moka's `Housekeeper`, whose
    // `pub(crate) fn try_sync` is a lock written by hand on a flag, runs inside their calls.
    if api.methods.is_empty() && decl.is_pub {
        return None;
    }
    let held = api::constants::held_types(decl, decls, index);
    let mut model = TypeModel {
        path,
        package: pkg.name.clone(),
        name: decl.name.clone(),
        span: api::span_of(decl.file, decl.ident.span()),
        decl_end: Some(api::span_of_end(decl.file, {
            use syn::spanned::Spanned;
            match decl.item {
                api::syntax::DeclItem::Struct(s) => s.span(),
                api::syntax::DeclItem::Enum(e) => e.span(),
            }
        })),
        generics: api.generics,
        sync_reasons,
        implements_debug: api.implements_debug,
        constructors: api.constructors,
        methods: api.methods,
        pairs: vec![],
        split_points: vec![],
        sync_sites: vec![],
        mutation_sites: vec![],
        values: api.values,
        constants: api::constants::size_constants(decl, &held, decls, index),
        holds: held.iter().map(|t| model_path(t, index, pkg)).collect(),
        durations: api::constants::duration_constants(decl, decls, index),
        scopes: api.scopes,
        confined: false,
        reason: None,
    };
    if let Some(why) = unsupported(&model, decl.is_pub) {
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
    } else if decl.is_pub && !reachable && root_name_taken(decl, index) {
        // The harness would retry it at the crate root, where the name is another type's
        // (papaya's private `raw::HashMap` under the public `papaya::HashMap`).
        model.reason = Some(Reason::PrivateModule { also: None });
    }
    let (mut fns, expanded) = own_fns(decl, decls);
    fns.extend(inner_fns);
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
        lock_types,
        fns,
        opaque_fields: opaque_fields(decl),
        statics,
        expanded,
        inner_types,
        own_sync,
    })
}

/// What a type's fields hold, why it synchronises, and the methods of a local type one of its
/// fields holds (followed when called as `self.inner.m()`).
struct SyncFields<'a> {
    fields: HashMap<String, FieldKind>,
    lock_types: HashMap<String, String>,
    sync_reasons: Vec<String>,
    inner_fns: Vec<FnDecl<'a>>,
    inner_types: HashMap<String, String>,
    own_sync: HashSet<String>,
}

fn sync_fields<'a>(decl: &TypeDecl<'a>, decls: &Decls<'a>, index: &CrateIndex) -> SyncFields<'a> {
    let mut sync_reasons = Vec::new();
    let mut fields = HashMap::new();
    let mut lock_types = HashMap::new();
    let mut inner_fns = Vec::new();
    let mut inner_types = HashMap::new();
    for (name, ty) in &decl.fields {
        let ty = &with_defaults(ty, decl.generics);
        let local = local_inner(ty, decls, &decl.name);
        // A type of the crate named like an atomic (atomicring's `AtomicRingBuffer`,
        // prometheus' `AtomicF64`) is no atomic of std's but a type with fields and methods
        // of its own: followed like any type of the crate, so that its methods' accesses
        // are the caller's (`self.ring.try_push(x)` writes `ring.mem`), not taken for one
        // atomic operation each.
        let kind = field_kind(ty);
        let own_atomic = kind == FieldKind::Atomic
            && local.is_some_and(|t| t.name.starts_with("Atomic") && !t.fields.is_empty());
        let kind = if own_atomic { FieldKind::Other } else { kind };
        fields.insert(name.clone(), kind);
        lock_types.extend(lock_type(ty).map(|t| (name.clone(), t)));
        if let Some(what) = sync_type_in(ty) {
            sync_reasons.push(format!("field '{name}' is {}", article(&what)));
            if !own_atomic {
                continue;
            }
        }
        // One level through a local type: `inner: Arc<Inner>` with `Inner { count: AtomicUsize }`.
        if let Some(inner) = local {
            let mut into = Followed {
                fields: &mut fields,
                lock_types: &mut lock_types,
                sync_reasons: &mut sync_reasons,
                inner_fns: &mut inner_fns,
                inner_types: &mut inner_types,
            };
            into.follow(name, inner, decls, index, Depth::ByName);
            // An enum's variants one level further: `Inner::Single(Single<T>)` is followed
            // as the field `0.Single.0`, which `match &self.0 { Inner::Single(q) => .. }`
            // binds `q` to (concurrent-queue's `ConcurrentQueue(Inner<T>)` dispatching to
            // its flavours), so a method's accesses are its flavours' and its pairs are
            // grouped by them.
            if matches!(inner.item, DeclItem::Enum(_)) {
                for (variant_field, vty) in &inner.fields {
                    let payload = local_type_at(vty, decls, index, &inner.module, 0).filter(|p| {
                        matches!(p.item, DeclItem::Struct(_))
                            && p.name != inner.name
                            && p.name != decl.name
                    });
                    if let Some(payload) = payload {
                        let path = format!("{name}.{variant_field}");
                        into.follow(&path, payload, decls, index, Depth::Resolved(1));
                    }
                }
            }
        }
    }
    let trait_named = |i: &api::syntax::ImplDecl, n: &str| {
        i.trait_path
            .and_then(|p| p.segments.last())
            .is_some_and(|s| s.ident == n)
    };
    if decls
        .impls_of(decl)
        .iter()
        .any(|i| i.unsafe_impl && trait_named(i, "Sync"))
    {
        sync_reasons.push("unsafe impl Sync".to_string());
    }
    // Composition deeper than one level, or a dependency's synchronising type.
    let mut own_sync = HashSet::new();
    for (name, ty) in &decl.fields {
        if let Some((kind, own)) =
            composed_kind(&with_defaults(ty, decl.generics), &decl.module, index)
        {
            if fields.get(name) == Some(&FieldKind::Other) {
                fields.insert(name.clone(), kind);
            }
            // Also a type of the crate named like a known container (`SegQueue`).
            if own && fields.get(name) == Some(&FieldKind::Concurrent) {
                own_sync.insert(name.clone());
            }
        }
    }
    SyncFields {
        fields,
        lock_types,
        sync_reasons,
        inner_fns,
        inner_types,
        own_sync,
    }
}

/// How [`Followed::follow`] came to a type: a field's type found by its name alone (the first
/// type of the crate so named, its impls all those of the name: one level, as before
/// `local_type_at`, whose path resolution changes what types such as papaya's `HashSet` see,
/// `raw::HashMap` for `map::HashMap`; not yet measured), or a variant's type found by its
/// path, followed `n` levels further.
#[derive(Clone, Copy)]
enum Depth {
    ByName,
    Resolved(usize),
}

/// Where [`sync_fields`] puts what it learns from a local type one of the type's fields holds.
struct Followed<'s, 'a> {
    fields: &'s mut HashMap<String, FieldKind>,
    lock_types: &'s mut HashMap<String, String>,
    sync_reasons: &'s mut Vec<String>,
    inner_fns: &'s mut Vec<FnDecl<'a>>,
    inner_types: &'s mut HashMap<String, String>,
}

impl<'a> Followed<'_, 'a> {
    /// Follows the local type `inner` held at the field path `path` (`inner`, or
    /// `0.Single.0` for a variant's): its `&self` methods become `path::name`, its fields
    /// `path.field`, and `depth` levels further the fields of the local structs its own
    /// fields hold (a variant's `head: CachePadded<Position<T>>` is `0.Unbounded.0.head.index`,
    /// as the variant's type, analysed alone, sees it).
    fn follow(
        &mut self,
        path: &str,
        inner: &TypeDecl<'a>,
        decls: &Decls<'a>,
        index: &CrateIndex,
        how: Depth,
    ) {
        self.inner_types
            .insert(path.to_string(), inner.name.clone());
        // Impls by the type's name; a type found by its path only its module's when another
        // type has that name.
        let (depth, resolved) = match how {
            Depth::ByName => (0, false),
            Depth::Resolved(depth) => (depth, true),
        };
        let unique = decls.types.iter().filter(|t| t.name == inner.name).count() == 1;
        for imp in decls.impls.iter().filter(|i| {
            i.self_name == inner.name
                && i.trait_path.is_none()
                && (!resolved || unique || i.module == inner.module)
        }) {
            for item in &imp.item.items {
                let syn::ImplItem::Fn(f) = item else { continue };
                if f.sig.receiver().is_some_and(is_ref_self) {
                    self.inner_fns.push(FnDecl {
                        name: f.sig.ident.to_string(),
                        item: f,
                        file: imp.file,
                        ref_self: true,
                        field: Some(path.to_string()),
                    });
                }
            }
        }
        for (iname, ity) in &inner.fields {
            let field = format!("{path}.{iname}");
            self.fields.insert(field.clone(), field_kind(ity));
            if let Some(t) = lock_type(ity) {
                self.lock_types.insert(field.clone(), t);
            }
            if let Some(what) = sync_type_in(ity) {
                self.sync_reasons
                    .push(format!("field '{field}' is {}", article(&what)));
            }
            if depth > 0 && field_kind(ity) == FieldKind::Other {
                let nested = local_type_at(ity, decls, index, &inner.module, 0)
                    .filter(|t| matches!(t.item, DeclItem::Struct(_)) && t.name != inner.name);
                if let Some(nested) = nested {
                    self.follow(&field, nested, decls, index, Depth::Resolved(depth - 1));
                }
            }
        }
    }
}

/// Whether the crate root names another definition by this type's name.
fn root_name_taken(decl: &TypeDecl, index: &CrateIndex) -> bool {
    match index.resolve(&[], std::slice::from_ref(&decl.name)) {
        Some((Def::Item { module, .. }, 1)) => module != decl.module,
        Some((Def::Module(_) | Def::External(_), 1)) => true,
        _ => false,
    }
}

/// Why a found type cannot be tested at all, if it cannot.
fn unsupported(model: &TypeModel, is_pub: bool) -> Option<Reason> {
    if !is_pub {
        Some(Reason::NotPublic)
    } else if !model.constructors.iter().any(|c| c.supported()) {
        Some(if model.constructors.is_empty() {
            Reason::NoConstructor
        } else {
            Reason::NoUsableConstructor
        })
    } else if !model.methods.iter().any(|m| m.supported()) {
        Some(Reason::NoCallableMethod)
    } else {
        None
    }
}

/// The functions of the type's own impl blocks, and the names of those a macro wrote.
fn own_fns<'a>(decl: &TypeDecl<'a>, decls: &Decls<'a>) -> (Vec<FnDecl<'a>>, HashSet<String>) {
    let mut fns = Vec::new();
    let mut expanded = HashSet::new();
    // A type that borrows another (a guard, an entry: `Reservation<'a>`) runs all its
    // methods beside its owner's calls, `confirm(self)` and `drop(&mut self)` too: the lock
    // analysis reads them all, so their locks are sync sites (of the owners that adopt them).
    let borrows = decl.generics.lifetimes().next().is_some();
    for imp in &decls.impls_of(decl) {
        for item in &imp.item.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            if imp.expanded || decl.expanded || crate::api::macros::is_expanded(&f.attrs) {
                expanded.insert(f.sig.ident.to_string());
            }
            fns.push(FnDecl {
                name: f.sig.ident.to_string(),
                item: f,
                file: imp.file,
                ref_self: f
                    .sig
                    .receiver()
                    .is_some_and(|r| is_ref_self(r) || (borrows && r.colon_token.is_none())),
                field: None,
            });
        }
    }
    (fns, expanded)
}

/// Fields whose calls the analysis cannot see into: trait objects and generic parameters.
fn opaque_fields(decl: &TypeDecl) -> HashMap<String, String> {
    let type_generics: Vec<String> = decl
        .generics
        .type_params()
        .map(|t| t.ident.to_string())
        .collect();
    let mut opaque = HashMap::new();
    for (name, ty) in &decl.fields {
        let ty = &with_defaults(ty, decl.generics);
        let held = peel_pointers(ty);
        if matches!(held, syn::Type::TraitObject(_)) {
            opaque.insert(name.clone(), "a trait object".to_string());
        } else if let Some(g) = type_name(held).filter(|n| type_generics.contains(n)) {
            opaque.insert(name.clone(), format!("of generic type `{g}`"));
        }
    }
    opaque
}

/// What a field holds when it is a thread-safe type of the crate or a known one of a
/// dependency (through `Arc`, `Box` and the like), and whether it is the crate's own.
fn composed_kind(
    ty: &syn::Type,
    module: &[String],
    index: &CrateIndex,
) -> Option<(FieldKind, bool)> {
    let held = peel_pointers(ty);
    let syn::Type::Path(p) = held else {
        return None;
    };
    let segs: Vec<String> = idents(&p.path);
    match index.resolve(module, &segs)? {
        (Def::External(path), _) => known_sync(&path).map(|k| (k, false)),
        (Def::Item { .. }, _) => Some((FieldKind::Concurrent, true)),
        _ => None,
    }
}

/// The type behind `Arc`/`Box`/`Rc` (`Box<dyn Fn()>` → `dyn Fn()`).
pub(crate) fn peel_pointers(ty: &syn::Type) -> &syn::Type {
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

/// The local struct a field holds through `Arc`/`Box` (or directly), other than the type itself.
fn local_inner<'d, 'a>(
    ty: &syn::Type,
    decls: &'d Decls<'a>,
    self_name: &str,
) -> Option<&'d TypeDecl<'a>> {
    let n = held_path(ty)?.segments.last()?.ident.to_string();
    if n == self_name {
        return None;
    }
    decls.types.iter().find(|t| t.name == n)
}

/// The `&self` methods of the crate's types (by the index of their type in `decls.types`,
/// and name) that answer what a method whose doc calls its answer approximate (or not atomic)
/// answers: their body ends in a call of it on `self` or on a field of `self` that holds a type
/// of the crate, alone or compared with a literal (`self.inner.is_empty()`, `self.len() ==
/// 0`), to a fixpoint through such delegations, private methods and the types a wrapper
/// holds included. The analysis of one type (a mutant's, `--type`) sees the same, as it reads
/// the declarations, not the thread-safe types found.
fn answers_from_approximate(
    decls: &Decls,
    index: &CrateIndex,
) -> BTreeMap<(usize, String), Approximation> {
    let mut known: BTreeMap<(usize, String), Approximation> = BTreeMap::new();
    let mut tails: BTreeMap<(usize, String), (usize, String)> = BTreeMap::new();
    for (i, decl) in decls.types.iter().enumerate() {
        let field_type = |field: &str| {
            let (_, ty) = decl.fields.iter().find(|(name, _)| name == field)?;
            let held = local_type_at(ty, decls, index, &decl.module, 0)?;
            decls.types.iter().position(|t| std::ptr::eq(t, held))
        };
        for imp in decls
            .impls_of(decl)
            .iter()
            .filter(|i| i.trait_path.is_none())
        {
            for item in &imp.item.items {
                let syn::ImplItem::Fn(f) = item else { continue };
                if !f.sig.receiver().is_some_and(is_ref_self) {
                    continue;
                }
                let key = (i, f.sig.ident.to_string());
                match api::contract::approximation(&f.attrs) {
                    Some(Approximation::Doc { line }) => {
                        let method = format!("{}::{}", decl.name, key.1);
                        known.insert(key, Approximation::AnswersFrom { method, line });
                        continue;
                    }
                    Some(why @ Approximation::NotAtomic { .. }) => {
                        known.insert(key, why);
                        continue;
                    }
                    _ => {}
                }
                let callee = tail_call(&f.block).and_then(|(field, method)| match field {
                    None => Some((i, method)),
                    Some(field) => Some((field_type(&field)?, method)),
                });
                if let Some(callee) = callee {
                    tails.insert(key, callee);
                }
            }
        }
    }
    loop {
        let more: Vec<_> = tails
            .iter()
            .filter(|(key, _)| !known.contains_key(*key))
            .filter_map(|(key, callee)| Some((key.clone(), known.get(callee)?.clone())))
            .collect();
        if more.is_empty() {
            break;
        }
        known.extend(more);
    }
    // A method's own doc is its own approximation (`contract::approximation`, in the model
    // already); what is returned is what the others answer from.
    known.retain(|key, _| tails.contains_key(key));
    known
}

/// The call a block's value is the answer of: its tail expression is `self.m(..)` or
/// `self.field.m(..)` (`None` or the field's name, and `m`), through `&`, `!`, parentheses,
/// `?`, or a binary operator whose other side is a literal (`self.len() == 0`, `self.len() +
/// 1`).
fn tail_call(block: &syn::Block) -> Option<(Option<String>, String)> {
    let Some(syn::Stmt::Expr(tail, None)) = block.stmts.last() else {
        return None;
    };
    let is_self = |e: &syn::Expr| matches!(e, syn::Expr::Path(p) if p.path.is_ident("self"));
    let mut e = tail;
    loop {
        e = match e {
            syn::Expr::Paren(p) => &p.expr,
            syn::Expr::Reference(r) => &r.expr,
            syn::Expr::Try(t) => &t.expr,
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => &u.expr,
            syn::Expr::Binary(b) if matches!(&*b.right, syn::Expr::Lit(_)) => &b.left,
            syn::Expr::Binary(b) if matches!(&*b.left, syn::Expr::Lit(_)) => &b.right,
            syn::Expr::MethodCall(call) => {
                let method = call.method.to_string();
                return match &*call.receiver {
                    r if is_self(r) => Some((None, method)),
                    syn::Expr::Field(f) if is_self(&f.base) => match &f.member {
                        syn::Member::Named(name) => Some((Some(name.to_string()), method)),
                        syn::Member::Unnamed(i) => Some((Some(i.index.to_string()), method)),
                    },
                    _ => None,
                };
            }
            _ => return None,
        };
    }
}

/// The path of the type a field's type holds through `&` (a guard's borrow of its owner,
/// `booking: &'a Booking`: the owner's locks, taken through it, are sync sites of the
/// guard's methods), `Arc`, `Box` and `CachePadded`.
fn held_path(ty: &syn::Type) -> Option<&syn::Path> {
    match ty {
        syn::Type::Reference(r) => held_path(&r.elem),
        syn::Type::Path(p) => {
            let last = p.path.segments.last()?;
            if matches!(
                last.ident.to_string().as_str(),
                "Arc" | "Box" | "CachePadded"
            ) {
                held_path(first_type_arg(last)?)
            } else {
                Some(&p.path)
            }
        }
        _ => None,
    }
}

/// The local type a field's type names, found by its path from the module `from` (three
/// `Channel`s in crossbeam-channel's flavour modules are three types), through `&`, `Arc`,
/// `Box` and `CachePadded`, and through a wrapper of the crate that derefs to its type
/// parameter (crossbeam-channel's `counter::Sender<C>`, `Deref<Target = C>`: the channel
/// `C` is what its methods reach). A name the crate's paths do not resolve counts only
/// when one type of the crate has it.
fn local_type_at<'d, 'a>(
    ty: &syn::Type,
    decls: &'d Decls<'a>,
    index: &CrateIndex,
    from: &[String],
    depth: usize,
) -> Option<&'d TypeDecl<'a>> {
    if depth > 4 {
        return None;
    }
    let path = held_path(ty)?;
    let last = path.segments.last()?;
    let n = last.ident.to_string();
    let segs = idents(path);
    let found = match index.resolve(from, &segs) {
        Some((Def::Item { module, name, .. }, _)) => decls
            .types
            .iter()
            .find(|t| t.name == name && t.module == module),
        Some(_) => None,
        None => {
            let mut named = decls.types.iter().filter(|t| t.name == n);
            named.next().filter(|_| named.next().is_none())
        }
    }?;
    if !matches!(found.item, DeclItem::Struct(_)) {
        return Some(found);
    }
    match deref_param(found, decls) {
        Some(i) => {
            let arg = crate::api::types::type_args(last).into_iter().nth(i)?;
            local_type_at(arg, decls, index, from, depth + 1)
        }
        None => Some(found),
    }
}

/// The position of the type parameter a struct of the crate derefs to (`impl<C> Deref for
/// Sender<C> { type Target = C; .. }`: 0), if it has such an impl.
fn deref_param(decl: &TypeDecl, decls: &Decls) -> Option<usize> {
    decls.impls.iter().find_map(|imp| {
        let named_deref = imp
            .trait_path
            .and_then(|t| t.segments.last())
            .is_some_and(|s| s.ident == "Deref");
        if imp.self_name != decl.name || !named_deref {
            return None;
        }
        let target = imp.item.items.iter().find_map(|item| match item {
            syn::ImplItem::Type(t) if t.ident == "Target" => Some(&t.ty),
            _ => None,
        })?;
        let syn::Type::Path(target) = target else {
            return None;
        };
        let target = target.path.get_ident()?;
        let syn::Type::Path(self_ty) = &*imp.item.self_ty else {
            return None;
        };
        let args = crate::api::types::type_args(self_ty.path.segments.last()?);
        args.iter()
            .position(|a| matches!(a, syn::Type::Path(p) if p.path.get_ident() == Some(target)))
    })
}
