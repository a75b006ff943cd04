//! What the parallel pass keeps of each file ([`FileFacts`]: types with what their fields
//! hold, impls, traits, modules, macros), and how a field's type is classified
//! ([`FieldKind`], [`sync_type_in`]). Owned data, no syntax trees: `source.rs` collects it
//! while reading a crate, `discover.rs` decides on it which types are thread-safe.

use crate::api::index::{module_facts, ModuleFacts};
use crate::api::macros::{MacroTable, Unread};
use crate::api::render::idents;
use crate::api::types::{first_type_arg, type_args, type_name};
use std::collections::HashSet;

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
    /// The file declares a `const` item of a module (`const FLUSH_POINT: usize = 64`): a size
    /// the code of another file may name ([`crate::api::constants`]).
    pub declares_consts: bool,
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
    /// A field is plainly not `Sync` (a raw pointer, `NonNull`, `Cell`, `RefCell`,
    /// `UnsafeCell` or `Rc`, not inside a lock): without `unsafe impl Sync`, the type cannot
    /// be shared between threads at all.
    pub not_sync: bool,
    /// Fields whose type is one of the type's own type parameters, with its position among
    /// them (`state: S` of `RateLimiter<K, S, C, MW>` is `("state", 1)`).
    pub param_fields: Vec<(String, usize)>,
}

/// An impl block, by the last segment of its self type.
#[derive(Debug, Clone, Default)]
pub(crate) struct ImplFact {
    pub self_name: String,
    pub trait_name: Option<String>,
    pub unsafe_impl: bool,
    /// Type names in the signatures of its public functions (argument types to build).
    pub signature_names: Vec<String>,
    /// For an inherent impl: the module it is in and its self type's type arguments, each
    /// as path segments when it is a path naming no parameter of the impl
    /// (`impl RateLimiter<NotKeyed, InMemoryState, ..>` fixes `InMemoryState`).
    pub module: Vec<String>,
    pub fixed_args: Vec<Option<Vec<String>>>,
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
        self.declares_consts |= other.declares_consts;
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
                let fixed_args = fixed_args(i);
                facts.impls.push(ImplFact {
                    module: module.to_vec(),
                    fixed_args,
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
            syn::Item::Const(_) => facts.declares_consts = true,
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

/// For an inherent impl, each type argument of its self type as path segments when it is a
/// path naming no parameter of the impl (`impl RateLimiter<NotKeyed, InMemoryState, C>` fixes
/// `NotKeyed` and `InMemoryState`, not `C`); empty for a trait impl.
fn fixed_args(i: &syn::ItemImpl) -> Vec<Option<Vec<String>>> {
    let (None, syn::Type::Path(p)) = (&i.trait_, &*i.self_ty) else {
        return Vec::new();
    };
    let Some(last) = p.path.segments.last() else {
        return Vec::new();
    };
    let own: Vec<String> = i
        .generics
        .type_params()
        .map(|p| p.ident.to_string())
        .collect();
    type_args(last)
        .into_iter()
        .map(|arg| match arg {
            syn::Type::Path(tp) if tp.qself.is_none() => {
                let segs = idents(&tp.path);
                (!(segs.len() == 1 && own.contains(&segs[0]))).then_some(segs)
            }
            _ => None,
        })
        .collect()
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
    let mut not_sync = false;
    let params: Vec<String> = generics
        .type_params()
        .map(|p| p.ident.to_string())
        .collect();
    let mut param_fields = Vec::new();
    TypeFact {
        generic_names,
        name: ident.to_string(),
        module: module.to_vec(),
        fields: fields
            .map(|(name, ty)| {
                let mut paths = Vec::new();
                mentioned_paths(ty, &mut paths);
                not_sync |= plainly_not_sync(ty);
                if let syn::Type::Path(p) = ty {
                    if p.qself.is_none() && p.path.segments.len() == 1 {
                        let param = p.path.segments[0].ident.to_string();
                        if let Some(at) = params.iter().position(|x| *x == param) {
                            param_fields.push((name.clone(), at));
                        }
                    }
                }
                let ty = with_defaults(ty, generics);
                (name, sync_type_in(&ty), paths)
            })
            .collect(),
        not_sync,
        param_fields,
    }
}

/// Whether a field of this type makes its struct `!Sync` for certain: the type, through the
/// wrappers that keep `Sync` as it is (`Arc`, `Box`, `Vec`, `Option`, arrays, tuples,
/// `PhantomData`), is a raw pointer, `NonNull`, `Cell`, `RefCell`, `UnsafeCell` or `Rc`. What
/// sits inside a lock or an atomic is not looked at (`Mutex<Cell<u8>>` is `Sync`).
fn plainly_not_sync(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Ptr(_) => true,
        syn::Type::Array(a) => plainly_not_sync(&a.elem),
        syn::Type::Slice(s) => plainly_not_sync(&s.elem),
        syn::Type::Tuple(t) => t.elems.iter().any(plainly_not_sync),
        syn::Type::Paren(p) => plainly_not_sync(&p.elem),
        syn::Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            match last.ident.to_string().as_str() {
                "NonNull" | "Cell" | "RefCell" | "UnsafeCell" | "Rc" => true,
                "Arc" | "Box" | "Vec" | "Option" | "PhantomData" | "CachePadded" => {
                    let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
                        return false;
                    };
                    a.args.iter().any(|g| match g {
                        syn::GenericArgument::Type(t) => plainly_not_sync(t),
                        _ => false,
                    })
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// `ty` with each type parameter that has a default replaced by it: a field `value: Arc<A>`
/// of `Counter<N = u64, A = AtomicU64>` holds an `Arc<AtomicU64>` as the type is named
/// unqualified (`Counter`), which is how users and the harness name it.
pub(crate) fn with_defaults(ty: &syn::Type, generics: &syn::Generics) -> syn::Type {
    use syn::visit_mut::VisitMut;
    struct Defaults<'g>(&'g syn::Generics);
    impl VisitMut for Defaults<'_> {
        fn visit_type_mut(&mut self, ty: &mut syn::Type) {
            if let syn::Type::Path(p) = ty {
                if p.qself.is_none() && p.path.segments.len() == 1 {
                    let seg = &p.path.segments[0];
                    let default = self
                        .0
                        .type_params()
                        .find(|t| t.ident == seg.ident)
                        .and_then(|t| t.default.clone());
                    if let Some(d) = default {
                        *ty = d;
                        return;
                    }
                }
            }
            syn::visit_mut::visit_type_mut(self, ty);
        }
    }
    let mut ty = ty.clone();
    if generics.type_params().any(|t| t.default.is_some()) {
        Defaults(generics).visit_type_mut(&mut ty);
    }
    ty
}

/// Every type path a type mentions, generic arguments included, as segments.
fn mentioned_paths(ty: &syn::Type, out: &mut Vec<Vec<String>>) {
    use syn::visit::Visit;
    struct Paths<'o>(&'o mut Vec<Vec<String>>);
    impl<'ast> Visit<'ast> for Paths<'_> {
        fn visit_type_path(&mut self, p: &'ast syn::TypePath) {
            let mut segs: Vec<String> = idents(&p.path);
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
        syn::Type::Slice(a) => sync_type_in(&a.elem),
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

/// The lock type a field holds, as written without spaces (`Mutex<State>`,
/// `RwLock<Vec<u8>>`), through the wrappers [`field_kind`] looks through: what two types'
/// locks are matched by when the analysis looks for a lock order across types.
pub(crate) fn lock_type(ty: &syn::Type) -> Option<String> {
    let ty = match ty {
        syn::Type::Array(a) => &*a.elem,
        syn::Type::Slice(a) => &*a.elem,
        other => other,
    };
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    match last.ident.to_string().as_str() {
        "Arc" | "Box" | "Rc" | "CachePadded" | "Pin" | "Vec" | "VecDeque" | "LazyLock" | "Lazy" => {
            lock_type(first_type_arg(last)?)
        }
        "Mutex" | "ReentrantMutex" | "FairMutex" | "SpinMutex" | "RwLock" | "ShardedLock"
        | "SpinRwLock" => {
            let text = quote::quote!(#last).to_string();
            Some(text.chars().filter(|c| !c.is_whitespace()).collect())
        }
        _ => None,
    }
}

/// What a field's type holds at its top (through `Arc`, `Box`, `CachePadded`).
pub(crate) fn field_kind(ty: &syn::Type) -> FieldKind {
    let ty = match ty {
        syn::Type::Array(a) => &*a.elem,
        syn::Type::Slice(a) => &*a.elem,
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
