//! Discovery: finds the thread-safe types of a crate, their constructors and their public
//! `&self` methods, and maps every parameter type to a [`ParamKind`] covcon can generate.

use crate::model::*;
use crate::source::{is_cfg_test, SourceFile};
use quote::ToTokens;
use std::collections::{HashMap, HashSet};
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
    /// A concurrent container (`DashMap`, `SegQueue`, `ArrayQueue`): each call is atomic.
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
}

struct TypeDecl<'a> {
    name: String,
    module: Vec<String>,
    file: &'a Path,
    is_pub: bool,
    generics: &'a syn::Generics,
    fields: Vec<(String, &'a syn::Type)>,
    derives: Vec<String>,
    ident: &'a syn::Ident,
}

struct ImplDecl<'a> {
    self_name: String,
    trait_path: Option<&'a syn::Path>,
    unsafe_impl: bool,
    item: &'a syn::ItemImpl,
    file: &'a Path,
    module: Vec<String>,
}

#[derive(Default)]
struct Index<'a> {
    types: Vec<TypeDecl<'a>>,
    impls: Vec<ImplDecl<'a>>,
    /// Trait name → (module, pub).
    traits: HashMap<String, (Vec<String>, bool)>,
    /// Modules declared `pub` (by full module path).
    private_mods: HashSet<Vec<String>>,
    /// `pub use` paths: (module where the `use` is, path segments used).
    reexports: Vec<(Vec<String>, Vec<String>)>,
    /// `static` items of the parsed files.
    statics: Vec<(String, &'a syn::Type)>,
}

/// What the parallel pass keeps of one file: enough to choose the files worth a second parse
/// and to name types and traits from anywhere in the crate.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileFacts {
    /// Declared structs and enums: name, whether a field holds a sync primitive, and the type
    /// names its fields mention.
    pub types: Vec<(String, bool, Vec<String>)>,
    /// Self-type names of impl blocks.
    pub impl_types: Vec<String>,
    pub unsafe_sync: Vec<String>,
    traits: HashMap<String, (Vec<String>, bool)>,
    private_mods: HashSet<Vec<String>>,
    reexports: Vec<(Vec<String>, Vec<String>)>,
}

impl FileFacts {
    pub(crate) fn merge(&mut self, other: &FileFacts) {
        self.types.extend(other.types.iter().cloned());
        self.impl_types.extend(other.impl_types.iter().cloned());
        self.unsafe_sync.extend(other.unsafe_sync.iter().cloned());
        self.traits
            .extend(other.traits.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.private_mods.extend(other.private_mods.iter().cloned());
        self.reexports.extend(other.reexports.iter().cloned());
    }

    /// Type names worth a second parse: types with sync fields or `unsafe impl Sync`, the
    /// local types their fields name, and builder types.
    pub(crate) fn relevant_names(&self) -> HashSet<String> {
        let direct: HashSet<&str> = self
            .types
            .iter()
            .filter(|t| t.1)
            .map(|t| t.0.as_str())
            .chain(self.unsafe_sync.iter().map(String::as_str))
            .collect();
        let mut names: HashSet<String> = HashSet::new();
        for (name, sync, refs) in &self.types {
            if *sync
                || direct.contains(name.as_str())
                || refs.iter().any(|r| direct.contains(r.as_str()))
            {
                names.insert(name.clone());
                names.extend(refs.iter().cloned());
            }
        }
        names.extend(self.unsafe_sync.iter().cloned());
        for (name, _, _) in &self.types {
            if name.ends_with("Builder") {
                names.insert(name.clone());
            }
        }
        names
    }

    pub(crate) fn mentions(&self, names: &HashSet<String>) -> bool {
        self.types.iter().any(|t| names.contains(&t.0))
            || self.impl_types.iter().any(|t| names.contains(t))
    }
}

/// Collects the owned facts of one parsed file.
pub(crate) fn file_facts(ast: &syn::File, module: &[String]) -> FileFacts {
    let mut index = Index::default();
    index_items(&ast.items, module, Path::new(""), &mut index);
    FileFacts {
        types: index
            .types
            .iter()
            .map(|t| {
                let sync = t.fields.iter().any(|(_, ty)| sync_type_in(ty).is_some());
                let mut refs = Vec::new();
                for (_, ty) in &t.fields {
                    mentioned_types(ty, &mut refs);
                }
                (t.name.clone(), sync, refs)
            })
            .collect(),
        impl_types: index.impls.iter().map(|i| i.self_name.clone()).collect(),
        unsafe_sync: index
            .impls
            .iter()
            .filter(|i| {
                i.unsafe_impl
                    && i.trait_path
                        .and_then(|p| p.segments.last())
                        .is_some_and(|s| s.ident == "Sync")
            })
            .map(|i| i.self_name.clone())
            .collect(),
        traits: index.traits,
        private_mods: index.private_mods,
        reexports: index.reexports,
    }
}

fn mentioned_types(ty: &syn::Type, out: &mut Vec<String>) {
    if let syn::Type::Path(p) = ty {
        for seg in &p.path.segments {
            out.push(seg.ident.to_string());
            if let syn::PathArguments::AngleBracketed(a) = &seg.arguments {
                for g in &a.args {
                    if let syn::GenericArgument::Type(t) = g {
                        mentioned_types(t, out);
                    }
                }
            }
        }
    }
}

/// Finds the thread-safe types of one crate. `filter` keeps only types whose name or path
/// matches one of the given strings (all when empty).
/// `crate_facts`, when given, holds the facts of every file of the crate (`files` may be a
/// subset of them).
pub(crate) fn discover<'a>(
    files: &'a [SourceFile],
    crate_facts: Option<&FileFacts>,
    pkg: &PackageInfo,
    filter: &[String],
) -> Vec<FoundType<'a>> {
    let mut index = Index::default();
    for f in files {
        index_items(&f.ast.items, &f.module, &f.path, &mut index);
    }
    if let Some(facts) = crate_facts {
        index.traits = facts.traits.clone();
        index.private_mods = facts.private_mods.clone();
        index.reexports = facts.reexports.clone();
    }
    let mut found = Vec::new();
    for decl in &index.types {
        let path = type_path(&pkg.lib_name, decl, &index);
        if !filter.is_empty() && !filter.iter().any(|f| *f == decl.name || *f == path) {
            continue;
        }
        if let Some(t) = build_type(decl, path, pkg, &index) {
            found.push(t);
        }
    }
    found
}

fn index_items<'a>(
    items: &'a [syn::Item],
    module: &[String],
    file: &'a Path,
    index: &mut Index<'a>,
) {
    for item in items {
        match item {
            syn::Item::Struct(s) if !is_cfg_test(&s.attrs) => {
                let fields = s
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        (
                            f.ident
                                .as_ref()
                                .map(|i| i.to_string())
                                .unwrap_or(i.to_string()),
                            &f.ty,
                        )
                    })
                    .collect();
                index.types.push(TypeDecl {
                    name: s.ident.to_string(),
                    module: module.to_vec(),
                    file,
                    is_pub: is_pub(&s.vis),
                    generics: &s.generics,
                    fields,
                    derives: derives(&s.attrs),
                    ident: &s.ident,
                });
            }
            syn::Item::Enum(e) if !is_cfg_test(&e.attrs) => {
                // Fields of all variants count: an enum holding a Mutex synchronises too.
                let fields = e
                    .variants
                    .iter()
                    .flat_map(|v| v.fields.iter().enumerate().map(move |(i, f)| (v, i, f)))
                    .map(|(v, i, f)| {
                        let n = f
                            .ident
                            .as_ref()
                            .map(|i| i.to_string())
                            .unwrap_or(format!("{}.{i}", v.ident));
                        (n, &f.ty)
                    })
                    .collect();
                index.types.push(TypeDecl {
                    name: e.ident.to_string(),
                    module: module.to_vec(),
                    file,
                    is_pub: is_pub(&e.vis),
                    generics: &e.generics,
                    fields,
                    derives: derives(&e.attrs),
                    ident: &e.ident,
                });
            }
            syn::Item::Impl(i) if !is_cfg_test(&i.attrs) => {
                if let Some(self_name) = type_name(&i.self_ty) {
                    index.impls.push(ImplDecl {
                        self_name,
                        trait_path: i.trait_.as_ref().map(|t| &t.1),
                        unsafe_impl: i.unsafety.is_some(),
                        item: i,
                        file,
                        module: module.to_vec(),
                    });
                }
            }
            syn::Item::Static(st) if !is_cfg_test(&st.attrs) => {
                index.statics.push((st.ident.to_string(), &st.ty));
            }
            syn::Item::Trait(t) => {
                index
                    .traits
                    .insert(t.ident.to_string(), (module.to_vec(), is_pub(&t.vis)));
            }
            syn::Item::Use(u) if is_pub(&u.vis) => {
                let mut paths = Vec::new();
                use_paths(&u.tree, Vec::new(), &mut paths);
                for p in paths {
                    index.reexports.push((module.to_vec(), p));
                }
            }
            syn::Item::Mod(m) if !is_cfg_test(&m.attrs) => {
                let mut child = module.to_vec();
                child.push(m.ident.to_string());
                if !is_pub(&m.vis) {
                    index.private_mods.insert(child.clone());
                }
                if let Some((_, inner)) = &m.content {
                    index_items(inner, &child, file, index);
                }
            }
            _ => {}
        }
    }
}

fn use_paths(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut next = prefix;
            next.push(p.ident.to_string());
            use_paths(&p.tree, next, out);
        }
        syn::UseTree::Name(n) => {
            let mut next = prefix;
            next.push(n.ident.to_string());
            out.push(next);
        }
        syn::UseTree::Rename(r) => {
            let mut next = prefix;
            next.push(r.ident.to_string());
            out.push(next);
        }
        syn::UseTree::Glob(_) => {
            let mut next = prefix;
            next.push("*".into());
            out.push(next);
        }
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix.clone(), out);
            }
        }
    }
}

fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

fn derives(attrs: &[syn::Attribute]) -> Vec<String> {
    let mut out = Vec::new();
    for a in attrs {
        if a.path().is_ident("derive") {
            let _ = a.parse_nested_meta(|m| {
                if let Some(last) = m.path.segments.last() {
                    out.push(last.ident.to_string());
                }
                Ok(())
            });
        }
    }
    out
}

/// The last segment name of a path type (`Cache` for `Cache<K, V>` or `crate::a::Cache`).
pub(crate) fn type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        syn::Type::Paren(p) => type_name(&p.elem),
        syn::Type::Group(g) => type_name(&g.elem),
        _ => None,
    }
}

/// `krate::module::Type`, or a public re-export of it when its module is private.
fn type_path(krate: &str, decl: &TypeDecl, index: &Index) -> String {
    let module = if module_public(&decl.module, index) {
        &decl.module
    } else {
        reexported_in(decl, index).unwrap_or(&decl.module)
    };
    std::iter::once(krate.to_string())
        .chain(module.iter().cloned())
        .chain(std::iter::once(decl.name.clone()))
        .collect::<Vec<_>>()
        .join("::")
}

/// Whether code outside the crate can name the type's module, or a re-export of the type.
fn reachable(decl: &TypeDecl, index: &Index) -> bool {
    module_public(&decl.module, index) || reexported_in(decl, index).is_some()
}

/// A public module that re-exports the type (by name or by a glob of its module).
fn reexported_in<'i>(decl: &TypeDecl, index: &'i Index) -> Option<&'i Vec<String>> {
    index.reexports.iter().find_map(|(module, used)| {
        let last = used.last().map(String::as_str);
        let glob_of_module = last == Some("*")
            && used.len() >= 2
            && decl.module.last() == Some(&used[used.len() - 2]);
        (module_public(module, index) && (last == Some(decl.name.as_str()) || glob_of_module))
            .then_some(module)
    })
}

fn module_public(module: &[String], index: &Index) -> bool {
    (1..=module.len()).all(|n| !index.private_mods.contains(&module[..n]))
}

pub(crate) fn span_of(file: &Path, span: proc_macro2::Span) -> Span {
    let s = span.start();
    Span {
        file: file.to_path_buf(),
        line: s.line as u32,
        column: s.column as u32,
    }
}

fn build_type<'a>(
    decl: &TypeDecl<'a>,
    path: String,
    pkg: &PackageInfo,
    index: &Index<'a>,
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
        if let Some(inner) = local_inner(ty, index, &decl.name) {
            // Its inherent `&self` methods are followed when called as `self.inner.m()`.
            for imp in index
                .impls
                .iter()
                .filter(|i| i.self_name == inner.name && i.trait_path.is_none())
            {
                for item in &imp.item.items {
                    let syn::ImplItem::Fn(f) = item else { continue };
                    if f.sig.receiver().is_some_and(is_ref_self) && !is_cfg_test(&f.attrs) {
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
    // Types of the same name in different modules: an impl belongs to the one in its module
    // (or the one its self-type path names).
    let homonyms = index.types.iter().filter(|t| t.name == decl.name).count();
    let impls: Vec<&ImplDecl> = index
        .impls
        .iter()
        .filter(|i| i.self_name == decl.name)
        .filter(|i| homonyms <= 1 || i.module == decl.module || impl_names_module(i, &decl.module))
        .collect();
    let trait_named = |i: &ImplDecl, n: &str| {
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
    if sync_reasons.is_empty() {
        return None;
    }
    let implements_debug =
        decl.derives.iter().any(|d| d == "Debug") || impls.iter().any(|i| trait_named(i, "Debug"));
    let has_default = decl.derives.iter().any(|d| d == "Default")
        || impls.iter().any(|i| trait_named(i, "Default"));

    let type_generics: Vec<String> = decl
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(t.ident.to_string()),
            _ => None,
        })
        .collect();
    let cx = TyCx {
        self_name: &decl.name,
        type_generics: &type_generics,
        method_generics: HashMap::new(),
        closure_generics: HashSet::new(),
    };

    let mut methods = Vec::new();
    let mut constructors = Vec::new();
    let mut fns = Vec::new();
    for imp in &impls {
        let trait_name = match imp.trait_path {
            None => None,
            Some(p) => match nameable_trait(p, pkg, index) {
                TraitUse::Skip => continue,
                TraitUse::Internal => {
                    // Private traits still matter for the call graph.
                    collect_fns(
                        imp,
                        None,
                        &cx,
                        &mut fns,
                        &mut Vec::new(),
                        &mut Vec::new(),
                        index,
                    );
                    continue;
                }
                TraitUse::Named(n) => Some(n),
            },
        };
        collect_fns(
            imp,
            trait_name,
            &cx,
            &mut fns,
            &mut methods,
            &mut constructors,
            index,
        );
    }
    // `cfg`-gated impls can define the same method twice: the model keeps the first.
    let mut seen = HashSet::new();
    methods.retain(|m: &Method| seen.insert(m.name.clone()));
    let mut seen = HashSet::new();
    constructors.retain(|c: &Constructor| seen.insert(c.name.clone()));
    if has_default && !constructors.iter().any(|c| c.name == "default") {
        constructors.push(Constructor {
            name: "default".into(),
            kind: ConstructorKind::Default,
            params: vec![],
            returns: ReturnShape::SelfValue,
            chain: vec![],
            supported: true,
            reason: None,
        });
    }
    let public_methods = methods.len();
    if public_methods == 0 {
        return None;
    }
    let mut model = TypeModel {
        path,
        package: pkg.name.clone(),
        name: decl.name.clone(),
        span: span_of(decl.file, decl.ident.span()),
        generics: decl.generics.params.iter().map(tokens).collect(),
        sync_reasons,
        implements_debug,
        constructors,
        methods,
        pairs: vec![],
        split_points: vec![],
        supported: true,
        reason: None,
    };
    let unsupported = if !decl.is_pub {
        Some(format!("{UNREACHABLE_TYPE}: the type is not `pub`"))
    } else if !model.constructors.iter().any(|c| c.supported) {
        Some(if model.constructors.is_empty() {
            "no public constructor (`new`-like function, `Default` or builder) was found".into()
        } else {
            "no constructor has parameters covcon can generate".into()
        })
    } else if !model.methods.iter().any(|m| m.supported) {
        Some("no public `&self` method covcon can call".into())
    } else {
        None
    };
    if let Some(why) = unsupported {
        model.supported = false;
        // A type the harness could try is left to it (rustc has the last word on what is
        // reachable); one it cannot try anyway is called internal here if no re-export of
        // its private module was seen.
        model.reason = Some(if decl.is_pub && !reachable(decl, index) {
            format!("{UNREACHABLE_TYPE}: a `pub` type in a private module, not re-exported ({why})")
        } else {
            why
        });
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
    for (name, ty) in &index.statics {
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
    })
}

/// The type behind `Arc`/`Box`/`Rc` (`Box<dyn Fn()>` → `dyn Fn()`).
fn peel_pointers(ty: &syn::Type) -> &syn::Type {
    if let syn::Type::Path(p) = ty {
        if let Some(last) = p.path.segments.last() {
            if matches!(last.ident.to_string().as_str(), "Arc" | "Box" | "Rc") {
                if let Some(inner) = first_type_arg(last) {
                    return peel_pointers(inner);
                }
            }
        }
    }
    ty
}

fn impl_names_module(i: &ImplDecl, module: &[String]) -> bool {
    let syn::Type::Path(p) = &*i.item.self_ty else {
        return false;
    };
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    segs.len() >= 2 && module.last() == Some(&segs[segs.len() - 2])
}

fn article(what: &str) -> String {
    let vowel = what.starts_with(['A', 'E', 'I', 'O', 'U']);
    format!("{} {what}", if vowel { "an" } else { "a" })
}

enum TraitUse {
    Skip,
    Internal,
    Named(String),
}

/// Standard traits whose methods are not part of a type's concurrent API.
const SKIPPED_TRAITS: &[&str] = &[
    "Debug",
    "Display",
    "Drop",
    "Clone",
    "PartialEq",
    "Eq",
    "PartialOrd",
    "Ord",
    "Hash",
    "Default",
    "From",
    "Into",
    "TryFrom",
    "Deref",
    "DerefMut",
    "AsRef",
    "AsMut",
    "Borrow",
    "BorrowMut",
    "Iterator",
    "IntoIterator",
    "Serialize",
    "Deserialize",
    "Send",
    "Sync",
    "Unpin",
    "Error",
    "Future",
    "Write",
    "Read",
    "Extend",
    "FromIterator",
    "Copy",
    "Any",
];

fn nameable_trait(p: &syn::Path, pkg: &PackageInfo, index: &Index) -> TraitUse {
    let Some(last) = p.segments.last() else {
        return TraitUse::Skip;
    };
    let name = last.ident.to_string();
    if SKIPPED_TRAITS.contains(&name.as_str()) {
        return TraitUse::Skip;
    }
    match index.traits.get(&name) {
        Some((module, true)) if module_public(module, index) => TraitUse::Named(
            std::iter::once(pkg.lib_name.clone())
                .chain(module.iter().cloned())
                .chain(std::iter::once(name))
                .collect::<Vec<_>>()
                .join("::"),
        ),
        Some(_) => TraitUse::Internal,
        None => {
            let written = p
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect::<Vec<_>>();
            if written.len() >= 2 {
                TraitUse::Named(written.join("::"))
            } else {
                TraitUse::Internal
            }
        }
    }
}

fn collect_fns<'a>(
    imp: &ImplDecl<'a>,
    trait_name: Option<String>,
    cx: &TyCx,
    fns: &mut Vec<FnDecl<'a>>,
    methods: &mut Vec<Method>,
    constructors: &mut Vec<Constructor>,
    index: &Index<'a>,
) {
    let in_trait = imp.trait_path.is_some();
    for item in &imp.item.items {
        let syn::ImplItem::Fn(f) = item else { continue };
        if is_cfg_test(&f.attrs) {
            continue;
        }
        let name = f.sig.ident.to_string();
        let public = in_trait || is_pub(&f.vis);
        let receiver = f.sig.receiver();
        let ref_self = receiver.is_some_and(is_ref_self);
        fns.push(FnDecl {
            name: name.clone(),
            item: f,
            file: imp.file,
            ref_self,
            field: None,
        });
        if !public {
            continue;
        }
        let mut cx = cx.with_method_generics(&f.sig.generics, imp.item);
        if ref_self {
            let method = build_method(f, imp.file, trait_name.clone(), &mut cx);
            methods.push(method);
        } else if receiver.is_none() && !in_trait {
            if let Some(c) = build_constructor(f, &mut cx, index) {
                constructors.push(c);
            }
        }
    }
}

fn is_ref_self(r: &syn::Receiver) -> bool {
    if r.reference.is_some() {
        return r.mutability.is_none();
    }
    if r.colon_token.is_some() {
        if let syn::Type::Reference(rf) = &*r.ty {
            return rf.mutability.is_none() && type_name(&rf.elem).as_deref() == Some("Self");
        }
    }
    false
}

fn tokens<T: ToTokens>(t: &T) -> String {
    render_tokens(t.to_token_stream())
}

/// Renders tokens the way people write types (`Vec<u8>`, `&'a str`, `impl Fn() -> u32`).
pub(crate) fn render_tokens(ts: proc_macro2::TokenStream) -> String {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    let mut out = String::new();
    let mut prev_word = false;
    let mut prev_joint_quote = false;
    for tt in ts {
        match tt {
            TokenTree::Ident(i) => {
                if prev_word && !prev_joint_quote {
                    out.push(' ');
                }
                out.push_str(&i.to_string());
                prev_word = true;
                prev_joint_quote = false;
            }
            TokenTree::Literal(l) => {
                if prev_word {
                    out.push(' ');
                }
                out.push_str(&l.to_string());
                prev_word = true;
                prev_joint_quote = false;
            }
            TokenTree::Punct(p) => {
                let c = p.as_char();
                let joint = p.spacing() == Spacing::Joint;
                match c {
                    ',' => out.push_str(", "),
                    ';' => out.push_str("; "),
                    '+' => out.push_str(" + "),
                    '=' if !out.ends_with('-') => out.push_str(" = "),
                    ':' if joint || out.ends_with(':') => out.push(':'),
                    ':' => out.push_str(": "),
                    '-' if joint => out.push_str(" -"),
                    '>' if out.ends_with(" -") => out.push_str("> "),
                    '\'' => {
                        if prev_word {
                            out.push(' ');
                        }
                        out.push('\'');
                    }
                    _ => out.push(c),
                }
                prev_joint_quote = c == '\'';
                prev_word = false;
            }
            TokenTree::Group(g) => {
                let inner = render_tokens(g.stream());
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{ ", " }"),
                    Delimiter::None => ("", ""),
                };
                if prev_word && g.delimiter() == Delimiter::Brace {
                    out.push(' ');
                }
                out.push_str(open);
                out.push_str(inner.trim_end());
                out.push_str(close);
                prev_word = false;
                prev_joint_quote = false;
            }
        }
    }
    out.trim_end().to_string()
}

fn build_method(
    f: &syn::ImplItemFn,
    file: &Path,
    trait_name: Option<String>,
    cx: &mut TyCx,
) -> Method {
    let mut reasons = Vec::new();
    let params = params_of(&f.sig, cx, &mut reasons);
    if f.sig.asyncness.is_some() {
        reasons.insert(0, "`async fn`: covcon calls methods synchronously".into());
    }
    if f.sig.unsafety.is_some() {
        reasons.insert(0, "`unsafe fn`".into());
    }
    if !f
        .sig
        .generics
        .params
        .iter()
        .all(|p| matches!(p, syn::GenericParam::Lifetime(_)))
    {
        for p in &f.sig.generics.params {
            if let syn::GenericParam::Type(t) = p {
                if !cx.closure_generics.contains(&t.ident.to_string())
                    && !reasons.iter().any(|r| r.contains("generic"))
                {
                    reasons.push(format!("generic method parameter `{}`", t.ident));
                }
            }
        }
    }
    let returns = match &f.sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, t) => Some(tokens(&**t)),
    };
    Method {
        name: f.sig.ident.to_string(),
        params,
        returns,
        trait_name,
        span: span_of(file, f.sig.ident.span()),
        // A `const fn` body cannot take the oracle's (non-const) guard call.
        body_start: f
            .sig
            .constness
            .is_none()
            .then(|| span_of_end(file, f.block.brace_token.span.open())),
        supported: reasons.is_empty(),
        reason: if reasons.is_empty() {
            None
        } else {
            Some(reasons.join("; "))
        },
    }
}

fn span_of_end(file: &Path, span: proc_macro2::Span) -> Span {
    let e = span.end();
    Span {
        file: file.to_path_buf(),
        line: e.line as u32,
        column: e.column as u32,
    }
}

fn params_of(sig: &syn::Signature, cx: &TyCx, reasons: &mut Vec<String>) -> Vec<Param> {
    sig.inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) => Some(t),
            syn::FnArg::Receiver(_) => None,
        })
        .map(|t| {
            let name = match &*t.pat {
                syn::Pat::Ident(i) => i.ident.to_string(),
                other => tokens(other),
            };
            let kind = match param_kind(&t.ty, cx) {
                Ok(k) => k,
                Err(why) => {
                    reasons.push(format!("parameter `{name}`: {why}"));
                    ParamKind::Unsupported
                }
            };
            Param {
                name,
                ty: tokens(&*t.ty),
                kind,
            }
        })
        .collect()
}

fn build_constructor(f: &syn::ImplItemFn, cx: &mut TyCx, index: &Index) -> Option<Constructor> {
    let syn::ReturnType::Type(_, ret) = &f.sig.output else {
        return None;
    };
    let mut reasons = Vec::new();
    let kind;
    let returns;
    let mut chain = Vec::new();
    if let Some(shape) = return_shape(ret, cx.self_name) {
        kind = ConstructorKind::Function;
        returns = shape;
    } else {
        // A builder: `Type::builder(..)` returns another local type whose chain ends in a
        // method returning the type.
        let builder = type_name(ret)?;
        let (shape, calls) = builder_chain(&builder, cx, index)?;
        kind = ConstructorKind::Builder;
        returns = shape;
        chain = calls;
        for c in &chain {
            if c.params.iter().any(|p| p.kind == ParamKind::Unsupported) {
                reasons.push(format!(
                    "builder call `{}` has a parameter covcon cannot generate",
                    c.name
                ));
            }
        }
    }
    let params = params_of(&f.sig, cx, &mut reasons);
    if f.sig.asyncness.is_some() {
        reasons.push("`async fn`".into());
    }
    if f.sig.unsafety.is_some() {
        reasons.push("`unsafe fn`".into());
    }
    for p in &f.sig.generics.params {
        if let syn::GenericParam::Type(t) = p {
            if !cx.closure_generics.contains(&t.ident.to_string()) {
                reasons.push(format!("generic function parameter `{}`", t.ident));
            }
        }
    }
    Some(Constructor {
        name: f.sig.ident.to_string(),
        kind,
        params,
        returns,
        chain,
        supported: reasons.is_empty(),
        reason: if reasons.is_empty() {
            None
        } else {
            Some(reasons.join("; "))
        },
    })
}

/// How `ret` hands back the type named `self_name`, if it does.
fn return_shape(ret: &syn::Type, self_name: &str) -> Option<ReturnShape> {
    if is_self_type(ret, self_name) {
        return Some(ReturnShape::SelfValue);
    }
    let syn::Type::Path(p) = ret else { return None };
    let last = p.path.segments.last()?;
    let first_arg = first_type_arg(last)?;
    if !is_self_type(first_arg, self_name) {
        return None;
    }
    match last.ident.to_string().as_str() {
        "Arc" => Some(ReturnShape::ArcSelf),
        "Result" | "Fallible" => Some(ReturnShape::ResultSelf),
        "Option" => Some(ReturnShape::OptionSelf),
        _ => None,
    }
}

fn first_type_arg(seg: &syn::PathSegment) -> Option<&syn::Type> {
    let syn::PathArguments::AngleBracketed(a) = &seg.arguments else {
        return None;
    };
    a.args.iter().find_map(|g| match g {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

fn is_self_type(ty: &syn::Type, self_name: &str) -> bool {
    match type_name(ty) {
        Some(n) => n == "Self" || n == self_name,
        None => false,
    }
}

/// The calls of a builder type's chain: its setters with generable parameters, then the
/// method that returns the built type.
fn builder_chain(builder: &str, cx: &TyCx, index: &Index) -> Option<(ReturnShape, Vec<ChainCall>)> {
    let mut setters = Vec::new();
    let mut terminal = None;
    for imp in index
        .impls
        .iter()
        .filter(|i| i.self_name == builder && i.trait_path.is_none())
    {
        for item in &imp.item.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            if !is_pub(&f.vis) || f.sig.receiver().is_none() {
                continue;
            }
            let syn::ReturnType::Type(_, ret) = &f.sig.output else {
                continue;
            };
            let mut reasons = Vec::new();
            let bcx = TyCx {
                self_name: cx.self_name,
                type_generics: cx.type_generics,
                method_generics: HashMap::new(),
                closure_generics: HashSet::new(),
            };
            let params = params_of(&f.sig, &bcx, &mut reasons);
            let call = ChainCall {
                name: f.sig.ident.to_string(),
                params,
            };
            // Inside the builder's impl, `Self` is the builder: only the type's name counts.
            if let Some(shape) =
                return_shape(ret, cx.self_name).filter(|_| !mentions_self_keyword(ret))
            {
                if terminal.is_none() {
                    terminal = Some((shape, call));
                }
            } else if reasons.is_empty() && returns_builder(ret, builder) {
                setters.push(call);
            }
        }
    }
    let (shape, last) = terminal?;
    setters.push(last);
    Some((shape, setters))
}

fn mentions_self_keyword(ty: &syn::Type) -> bool {
    ty.to_token_stream()
        .into_iter()
        .any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "Self"))
        || matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| first_type_arg(s).is_some_and(mentions_self_keyword)))
}

fn returns_builder(ret: &syn::Type, builder: &str) -> bool {
    match ret {
        syn::Type::Reference(r) => returns_builder(&r.elem, builder),
        other => is_self_type(other, builder),
    }
}

/// Types in scope when mapping a parameter type.
pub(crate) struct TyCx<'a> {
    self_name: &'a str,
    type_generics: &'a [String],
    /// Method generic name → its bounds (from `<F: Fn() -> T>` and `where`).
    method_generics: HashMap<String, Vec<syn::TypeParamBound>>,
    closure_generics: HashSet<String>,
}

impl<'a> TyCx<'a> {
    fn with_method_generics(&self, g: &syn::Generics, _imp: &syn::ItemImpl) -> TyCx<'a> {
        let mut method_generics: HashMap<String, Vec<syn::TypeParamBound>> = HashMap::new();
        for p in &g.params {
            if let syn::GenericParam::Type(t) = p {
                method_generics
                    .entry(t.ident.to_string())
                    .or_default()
                    .extend(t.bounds.iter().cloned());
            }
        }
        if let Some(w) = &g.where_clause {
            for pred in &w.predicates {
                if let syn::WherePredicate::Type(pt) = pred {
                    if let Some(n) = type_name(&pt.bounded_ty) {
                        if let Some(b) = method_generics.get_mut(&n) {
                            b.extend(pt.bounds.iter().cloned());
                        }
                    }
                }
            }
        }
        let mut cx = TyCx {
            self_name: self.self_name,
            type_generics: self.type_generics,
            method_generics,
            closure_generics: HashSet::new(),
        };
        let closure: Vec<String> = cx
            .method_generics
            .iter()
            .filter(|(_, b)| closure_bound(b, &cx).is_some())
            .map(|(n, _)| n.clone())
            .collect();
        cx.closure_generics = closure.into_iter().collect();
        cx
    }
}

#[allow(dead_code)]
impl TyCx<'_> {
    pub(crate) fn for_tests(self_name: &str) -> TyCx<'_> {
        TyCx {
            self_name,
            type_generics: &[],
            method_generics: HashMap::new(),
            closure_generics: HashSet::new(),
        }
    }
}

/// `Fn() -> T` / `FnOnce() -> T` / `FnMut() -> T` without arguments: the closure's result kind.
fn closure_bound(bounds: &[syn::TypeParamBound], cx: &TyCx) -> Option<Result<ParamKind, String>> {
    for b in bounds {
        let syn::TypeParamBound::Trait(t) = b else {
            continue;
        };
        let last = t.path.segments.last()?;
        if !matches!(last.ident.to_string().as_str(), "Fn" | "FnOnce" | "FnMut") {
            continue;
        }
        let syn::PathArguments::Parenthesized(args) = &last.arguments else {
            continue;
        };
        if !args.inputs.is_empty() {
            return Some(Err("a closure that takes arguments".into()));
        }
        let returns = match &args.output {
            syn::ReturnType::Default => Ok(ParamKind::Tuple { elems: vec![] }),
            syn::ReturnType::Type(_, t) => param_kind(t, cx),
        };
        return Some(returns.map(|r| ParamKind::Closure {
            returns: Box::new(r),
        }));
    }
    None
}

/// Maps a parameter type to what covcon can generate, or says why it cannot.
pub(crate) fn param_kind(ty: &syn::Type, cx: &TyCx) -> Result<ParamKind, String> {
    match ty {
        syn::Type::Paren(p) => param_kind(&p.elem, cx),
        syn::Type::Group(g) => param_kind(&g.elem, cx),
        syn::Type::Tuple(t) => Ok(ParamKind::Tuple {
            elems: t
                .elems
                .iter()
                .map(|e| param_kind(e, cx))
                .collect::<Result<_, _>>()?,
        }),
        syn::Type::Reference(r) => {
            if r.mutability.is_some() {
                return Err(format!(
                    "`{}`: a `&mut` argument cannot be shared",
                    tokens(ty)
                ));
            }
            match &*r.elem {
                syn::Type::Slice(s) => Ok(ParamKind::Slice {
                    elem: Box::new(param_kind(&s.elem, cx)?),
                }),
                syn::Type::Path(p) if p.path.is_ident("str") => Ok(ParamKind::Str),
                inner if is_self_type(inner, cx.self_name) => Ok(ParamKind::Instance {
                    passing: InstancePassing::Ref,
                }),
                inner => match param_kind(inner, cx)? {
                    ParamKind::Instance { .. } => Ok(ParamKind::Instance {
                        passing: InstancePassing::Ref,
                    }),
                    k => Ok(ParamKind::Ref { inner: Box::new(k) }),
                },
            }
        }
        syn::Type::ImplTrait(it) => {
            let bounds: Vec<_> = it.bounds.iter().cloned().collect();
            if let Some(k) = closure_bound(&bounds, cx) {
                return k;
            }
            for b in &bounds {
                let syn::TypeParamBound::Trait(t) = b else {
                    continue;
                };
                let Some(last) = t.path.segments.last() else {
                    continue;
                };
                let arg = first_type_arg(last).map(tokens);
                match (last.ident.to_string().as_str(), arg.as_deref()) {
                    ("Into", Some("String")) | ("ToString", None) => return Ok(ParamKind::String),
                    ("AsRef", Some("str")) => return Ok(ParamKind::Str),
                    ("Into", Some(other)) => {
                        if let Ok(t) = syn::parse_str::<syn::Type>(other) {
                            return param_kind(&t, cx);
                        }
                    }
                    _ => {}
                }
            }
            Err(format!(
                "`{}`: covcon has no value for this trait",
                tokens(ty)
            ))
        }
        syn::Type::Path(p) if p.qself.is_none() => path_kind(p, cx),
        _ => Err(format!(
            "`{}`: covcon has no generator for this type",
            tokens(ty)
        )),
    }
}

fn path_kind(p: &syn::TypePath, cx: &TyCx) -> Result<ParamKind, String> {
    let last = p.path.segments.last().ok_or("empty type path")?;
    let name = last.ident.to_string();
    let inner = || -> Result<ParamKind, String> {
        let arg =
            first_type_arg(last).ok_or_else(|| format!("`{name}` without a type argument"))?;
        param_kind(arg, cx)
    };
    let int = |signed: bool, bits: u16| Ok(ParamKind::Int { signed, bits });
    match name.as_str() {
        "u8" => int(false, 8),
        "u16" => int(false, 16),
        "u32" => int(false, 32),
        "u64" => int(false, 64),
        "u128" => int(false, 128),
        "usize" => int(false, 64),
        "i8" => int(true, 8),
        "i16" => int(true, 16),
        "i32" => int(true, 32),
        "i64" => int(true, 64),
        "i128" => int(true, 128),
        "isize" => int(true, 64),
        "bool" => Ok(ParamKind::Bool),
        "char" => Ok(ParamKind::Char),
        "f32" => Ok(ParamKind::Float { bits: 32 }),
        "f64" => Ok(ParamKind::Float { bits: 64 }),
        "String" => Ok(ParamKind::String),
        "Duration" => Ok(ParamKind::Duration),
        "Vec" => Ok(ParamKind::Vec {
            elem: Box::new(inner()?),
        }),
        "Option" => Ok(ParamKind::Option {
            inner: Box::new(inner()?),
        }),
        "Arc" => {
            let arg = first_type_arg(last).ok_or("`Arc` without a type argument")?;
            if is_self_type(arg, cx.self_name) {
                Ok(ParamKind::Instance {
                    passing: InstancePassing::Arc,
                })
            } else {
                Err(format!(
                    "`Arc<{}>`: covcon only passes `Arc<Self>`",
                    tokens(arg)
                ))
            }
        }
        n if n == "Self" || n == cx.self_name => Ok(ParamKind::Instance {
            passing: InstancePassing::Value,
        }),
        n if p.path.segments.len() == 1 && cx.type_generics.iter().any(|g| g == n) => {
            Ok(ParamKind::Generic {
                name: n.to_string(),
            })
        }
        n if p.path.segments.len() == 1 && cx.method_generics.contains_key(n) => {
            match closure_bound(&cx.method_generics[n], cx) {
                Some(k) => k,
                None => Err(format!("generic method parameter `{n}`")),
            }
        }
        _ => Err(format!(
            "`{}`: covcon has no generator for this type",
            tokens(p)
        )),
    }
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
fn local_inner<'i, 'a>(
    ty: &syn::Type,
    index: &'i Index<'a>,
    self_name: &str,
) -> Option<&'i TypeDecl<'a>> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let n = last.ident.to_string();
    if matches!(n.as_str(), "Arc" | "Box" | "CachePadded") {
        return local_inner(first_type_arg(last)?, index, self_name);
    }
    if n == self_name {
        return None;
    }
    index.types.iter().find(|t| t.name == n)
}
