//! The API model: what code outside a crate can build and call. For each type: its generic
//! parameters (defaults and candidate instantiations fully qualified), its constructors
//! (functions, `Default`, builder chains), its methods (inherent and from trait impls, with the
//! trait's public path), their parameters as [`ParamKind`]s, the turbofish for generic
//! functions, and the crate's own types that arguments are built of ([`ValueType`]).
//!
//! It reads items after macros and `#[cfg]` ([`macros`]), resolves names through the
//! crate's index ([`index`]) and maps types ([`types`]). It knows nothing of locks: the lock
//! analysis (access trees, groups, split points) annotates the model afterwards.

pub(crate) mod cfg;
pub(crate) mod constants;
pub(crate) mod contract;
pub(crate) mod index;
pub(crate) mod macros;
pub(crate) mod render;
pub(crate) mod syntax;
pub(crate) mod type_arg;
pub(crate) mod types;
pub(crate) mod usage;

use crate::model::*;
use index::{CrateIndex, Def, ImplArgs, ItemKind};
use render::tokens;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use syntax::{DeclItem, Decls, ImplDecl, TypeDecl};
use types::{first_type_arg, is_self_type, type_args, type_name, Scope, TyCx};

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

/// How many levels of value types are followed (`Meter::with_opts(Opts::new(Name::new(..)))`
/// is three).
const VALUE_DEPTH: usize = 3;

/// What the API model says about one type.
pub(crate) struct TypeApi {
    pub(crate) generics: Vec<GenericParam>,
    pub(crate) constructors: Vec<Constructor>,
    pub(crate) methods: Vec<Method>,
    pub(crate) values: Vec<ValueType>,
    pub(crate) implements_debug: bool,
    pub(crate) scopes: Vec<ScopeGuard>,
}

/// Values of other crates' types, built from those crates' own constructors (`sdd::Guard`,
/// `metrics::Key`): what the analysis of a package asks for when a parameter names one.
pub(crate) trait ExternalValues {
    /// The value types for the dependency type at `path` (`["sdd", "Guard"]`): it first, then
    /// those its constructors take in turn; empty when covcon cannot read or build it.
    fn values(&self, path: &[String]) -> Vec<ValueType>;

    /// Public, non-generic types of the package's dependencies that implement the trait at
    /// `trait_path` (`["lock_api", "RawMutex"]`), as the package writes them
    /// (`::parking_lot::RawMutex`); empty when covcon reads none.
    fn implementors(&self, trait_path: &[String]) -> Vec<String>;
}

/// No other crate is read (one source string, or a dependency's own analysis).
pub(crate) struct NoExternals;

impl ExternalValues for NoExternals {
    fn values(&self, _: &[String]) -> Vec<ValueType> {
        Vec::new()
    }

    fn implementors(&self, _: &[String]) -> Vec<String> {
        Vec::new()
    }
}

/// Describes what can be built and called of `decl`.
pub(crate) fn describe(
    decl: &TypeDecl,
    decls: &Decls,
    index: &CrateIndex,
    externals: &dyn ExternalValues,
    usages: &usage::Usages,
) -> TypeApi {
    let impls = decls.impls_of(decl);
    let trait_named = |i: &ImplDecl, n: &str| {
        i.trait_path
            .and_then(|p| p.segments.last())
            .is_some_and(|s| s.ident == n)
    };
    let implements_debug =
        decl.derives.iter().any(|d| d == "Debug") || impls.iter().any(|i| trait_named(i, "Debug"));
    let has_default = decl.derives.iter().any(|d| d == "Default")
        || impls.iter().any(|i| trait_named(i, "Default"));
    let type_generics = type_param_names(decl.generics);
    let wanted: RefCell<BTreeMap<String, Def>> = RefCell::new(BTreeMap::new());
    let scope = Scope {
        index,
        module: &decl.module,
    };
    let cx = TyCx::new(&decl.name, &type_generics, Some(scope), Some(&wanted));
    let mut generics = generic_params(decl.generics, &cx, index);
    concrete_impl_candidates(
        &impls,
        &decl.name,
        &type_generics,
        index,
        &wanted,
        &mut generics,
    );
    used_candidates(&decl.name, usages, index, &wanted, &mut generics);
    dependency_candidates(decl, index, externals, &mut generics);
    if manages_memory(decls) {
        for g in generics.iter_mut().filter(|g| g.kind == GenericKind::Type) {
            g.boxed = !bounded_by_copy(decl, &impls, &g.name);
        }
    }

    let mut methods = Vec::new();
    let mut constructors = Vec::new();
    // Inherent impls first: a method call picks an inherent method over a trait's.
    let mut ordered: Vec<&ImplDecl> = impls
        .iter()
        .copied()
        .filter(|i| i.trait_path.is_none())
        .collect();
    ordered.extend(impls.iter().copied().filter(|i| i.trait_path.is_some()));
    for imp in ordered {
        let module_scope = Scope {
            index,
            module: &imp.module,
        };
        let icx = TyCx::new(
            &decl.name,
            &type_generics,
            Some(module_scope),
            Some(&wanted),
        );
        match imp.trait_path {
            None => inherent_fns(imp, &icx, decls, &mut methods, &mut constructors),
            Some(path) => trait_fns(imp, path, &icx, decls, index, &mut methods),
        }
    }
    for f in &decls.fns {
        constructors.extend(free_constructor(f, decl, &type_generics, index, &wanted));
    }
    // `cfg`-gated impls can define the same method twice: the model keeps the first.
    let mut seen = HashSet::new();
    methods.retain(|m: &Method| seen.insert(m.name.clone()));
    let mut seen = HashSet::new();
    constructors.retain(|c: &Constructor| seen.insert(c.name.clone()));
    if has_default && !constructors.iter().any(|c| c.name == "default") {
        constructors.push(default_constructor());
    }
    let scopes = scope_guards(&methods, decl, decls, index, &type_generics, &wanted);
    let values = value_types(&wanted, decls, index, externals);
    let mut api = TypeApi {
        generics,
        constructors,
        methods,
        values,
        implements_debug,
        scopes,
    };
    drop_unbuildable(&mut api);
    let attrs = match decl.item {
        DeclItem::Struct(s) => &s.attrs,
        DeclItem::Enum(e) => &e.attrs,
    };
    if let Some(why) = contract::type_approximation(attrs) {
        for m in api.methods.iter_mut().filter(|m| m.approximate.is_none()) {
            m.approximate = Some(why.clone());
        }
    }
    receiver_arguments(&mut api.methods);
    holds_inside(&impls, &mut api.methods);
    coalescing(&impls, &mut api.methods);
    // A value type with no constructor is no use to anyone (a guard the receiver hands out).
    api.values.retain(|v| !v.constructors.is_empty());
    api
}

/// The arguments an inherent impl fixes (`impl Registry<Key, AtomicStorage> { pub fn atomic()
/// -> Self }`) go first among their parameters' candidates: its constructors and methods
/// exist for that instantiation only, and the crate meant it to be used so. Only when the
/// crate fixes one argument for the parameter: impls for a family of arguments
/// (`impl AtomicCell<bool>`, `impl AtomicCell<u8>`, …) specialise a type meant for any.
fn concrete_impl_candidates(
    impls: &[&ImplDecl],
    type_name: &str,
    type_generics: &[String],
    index: &CrateIndex,
    wanted: &RefCell<BTreeMap<String, Def>>,
    generics: &mut [GenericParam],
) {
    let mut fixed: Vec<Vec<String>> = vec![Vec::new(); generics.len()];
    for imp in impls.iter().filter(|i| i.trait_path.is_none()) {
        let syn::Type::Path(p) = &*imp.item.self_ty else {
            continue;
        };
        let Some(syn::PathArguments::AngleBracketed(args)) =
            p.path.segments.last().map(|s| &s.arguments)
        else {
            continue;
        };
        let own: Vec<String> = type_param_names(&imp.item.generics);
        let scope = Scope {
            index,
            module: &imp.module,
        };
        let icx = TyCx::new(type_name, type_generics, Some(scope), Some(wanted));
        for ((param, arg), fixed) in generics.iter().zip(&args.args).zip(fixed.iter_mut()) {
            let syn::GenericArgument::Type(ty) = arg else {
                continue;
            };
            if param.kind != GenericKind::Type || param.default.is_some() || mentions(ty, &own) {
                continue;
            }
            if let Ok(q) = icx.qualify(ty) {
                // Mapped for its side effect: a type of the crate or a dependency is wanted
                // as a value type, so arguments of it can be built.
                let _ = icx.param_kind(ty);
                if !fixed.contains(&q) {
                    fixed.push(q);
                }
            }
        }
    }
    for (param, fixed) in generics.iter_mut().zip(fixed) {
        if let [only] = &fixed[..] {
            param.candidates.retain(|c| c != only);
            param.candidates.insert(0, only.clone());
        }
    }
}

/// The arguments the crate's docs and tests write for the type's parameters
/// ([`usage::Usages`]), the most written first, are the candidates of a parameter that has
/// none from its bounds or the crate's concrete impls (prometheus-client's unbounded `M`): the
/// crate's authors chose them. A parameter with candidates keeps them as they are: the harness
/// tries the parameters' candidates together, by position, and governor's `RateLimiter<K, S,
/// C>`, whose concrete impl fixes all three, failed to build when its docs' arguments, written
/// in several combinations, went first for each. A parameter with an informative default keeps
/// it (the harness writes the default, as a user who names only the others gets it).
fn used_candidates(
    type_name: &str,
    usages: &usage::Usages,
    index: &CrateIndex,
    wanted: &RefCell<BTreeMap<String, Def>>,
    generics: &mut [GenericParam],
) {
    let open = |g: &GenericParam| {
        g.kind == GenericKind::Type && g.informative_default().is_none() && g.candidates.is_empty()
    };
    let written = usages.of(type_name);
    if written.is_empty() || !generics.iter().any(open) {
        return;
    }
    let scope = Scope { index, module: &[] };
    let cx = TyCx::new(type_name, &[], Some(scope), Some(wanted));
    // Written arguments skip lifetimes, as `params` does.
    let params: Vec<usize> = (0..generics.len())
        .filter(|&i| generics[i].kind != GenericKind::Lifetime)
        .collect();
    // Per parameter: (argument, times written, first met).
    let mut counts: Vec<Vec<(String, usize, usize)>> = vec![Vec::new(); generics.len()];
    for (n, args) in written.iter().enumerate() {
        // The same name on another type (or a mistake the compiler would reject).
        if args.len() > params.len() {
            continue;
        }
        for (&i, arg) in params.iter().zip(args) {
            let Some(arg) = arg.as_ref().filter(|_| open(&generics[i])) else {
                continue;
            };
            let Ok(ty) = syn::parse_str::<syn::Type>(arg) else {
                continue;
            };
            // What a test can draw values of: not a borrow (`&'static str`), and not the unit
            // an example locks (`Mutex::new(())`), whose every answer is the same `()`.
            let unit = matches!(&ty, syn::Type::Tuple(t) if t.elems.is_empty());
            if unit || matches!(ty, syn::Type::Reference(_)) {
                continue;
            }
            let Ok(q) = cx.qualify(&ty) else { continue };
            // Mapped also for its side effect: a type of the crate is wanted as a value type.
            // Another crate's type must be one covcon draws values of; the crate's own may
            // also be one its code builds (a metric `Family` makes with `M::default()`).
            let own = q.starts_with(&format!("::{}::", index.krate));
            if cx.param_kind(&ty).is_err() && !own {
                continue;
            }
            match counts[i].iter_mut().find(|(a, ..)| *a == q) {
                Some((_, times, _)) => *times += 1,
                None => counts[i].push((q, 1, n)),
            }
        }
    }
    for (param, mut counted) in generics.iter_mut().zip(counts) {
        if counted.is_empty() {
            continue;
        }
        counted.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
        param.candidates = counted.into_iter().map(|(arg, ..)| arg).collect();
    }
}

/// The guards the type's methods hand out that a thread can keep in a scope
/// ([`ScopeGuard`]): a struct of the crate, returned as it is, in `Option` or `Result`, or in
/// a tuple variant of the crate's enum, that borrows the instance (a lifetime parameter) or
/// has a method consuming it, with public methods of its own. Its type parameters must be
/// the owner's, by name (`PlaceholderGuard<'a, Key, Val, ..>` of `Cache<Key, Val, ..>`), so
/// its methods' parameters are the owner's instantiation.
fn scope_guards(
    methods: &[Method],
    decl: &TypeDecl,
    decls: &Decls,
    index: &CrateIndex,
    type_generics: &[String],
    wanted: &RefCell<BTreeMap<String, Def>>,
) -> Vec<ScopeGuard> {
    let mut scopes = Vec::new();
    // An `async fn`'s guard lives in its future's output: the harness's arm for it blocks on
    // the future in one expression, so it has no scope.
    for m in methods.iter().filter(|m| m.supported() && !m.is_async) {
        let Some(returns) = m.returns.as_deref() else {
            continue;
        };
        let Ok(syn::Type::Path(p)) = syn::parse_str::<syn::Type>(returns) else {
            continue;
        };
        let Some(last) = p.path.segments.last() else {
            continue;
        };
        let (inner, holds) = match last.ident.to_string().as_str() {
            "Option" => (first_type_arg(last), GuardHolder::Option),
            "Result" => (first_type_arg(last), GuardHolder::Result),
            _ => (Some(&syn::Type::Path(p.clone())), GuardHolder::Plain),
        };
        let Some(syn::Type::Path(inner)) = inner else {
            continue;
        };
        let Some(found) = decl_named(&inner.path, &decl.module, decls, index) else {
            continue;
        };
        let found = match found.item {
            DeclItem::Struct(_) => Some((found, holds)),
            DeclItem::Enum(e) if holds == GuardHolder::Plain => {
                let Some(enum_path) = index.public_path(&Def::Item {
                    module: found.module.clone(),
                    name: found.name.clone(),
                    kind: ItemKind::Enum,
                }) else {
                    continue;
                };
                e.variants.iter().find_map(|v| {
                    let syn::Fields::Unnamed(fields) = &v.fields else {
                        return None;
                    };
                    let [field] = &fields.unnamed.iter().collect::<Vec<_>>()[..] else {
                        return None;
                    };
                    let syn::Type::Path(held) = &field.ty else {
                        return None;
                    };
                    let guard = decl_named(&held.path, &found.module, decls, index)?;
                    matches!(guard.item, DeclItem::Struct(_)).then(|| {
                        (
                            guard,
                            GuardHolder::Variant(format!("::{enum_path}::{}", v.ident)),
                        )
                    })
                })
            }
            DeclItem::Enum(_) => None,
        };
        let Some((guard, holds)) = found else {
            continue;
        };
        let guard_generics = type_param_names(guard.generics);
        if guard.name == decl.name || !guard_generics.iter().all(|g| type_generics.contains(g)) {
            continue;
        }
        let borrows = guard.generics.lifetimes().next().is_some();
        let finishers = finishers(guard, decls, index, &guard_generics, wanted);
        let consumed = finishers.iter().any(|f| f.takes == GuardTaking::Value);
        if finishers.is_empty() || !(borrows || consumed) {
            continue;
        }
        let Some(guard_path) = index.public_path(&Def::Item {
            module: guard.module.clone(),
            name: guard.name.clone(),
            kind: ItemKind::Struct,
        }) else {
            continue;
        };
        scopes.push(ScopeGuard {
            from: m.name.clone(),
            guard: guard_path,
            holds,
            finishers,
        });
    }
    scopes
}

/// The struct or enum of the crate a path names, seen from `module`, by its declaration.
fn decl_named<'d, 'a>(
    path: &syn::Path,
    module: &[String],
    decls: &'d Decls<'a>,
    index: &CrateIndex,
) -> Option<&'d TypeDecl<'a>> {
    let segs: Vec<String> = render::idents(path);
    let (def, _) = index.resolve(module, &segs)?;
    let Def::Item {
        module, name, kind, ..
    } = def
    else {
        return None;
    };
    if !matches!(kind, ItemKind::Struct | ItemKind::Enum) {
        return None;
    }
    decls
        .types
        .iter()
        .find(|t| t.name == name && t.module == module)
}

/// A guard type's public inherent methods a scope can end with: taking it by value or by
/// reference, every parameter one covcon can generate, not generic themselves.
fn finishers(
    guard: &TypeDecl,
    decls: &Decls,
    index: &CrateIndex,
    guard_generics: &[String],
    wanted: &RefCell<BTreeMap<String, Def>>,
) -> Vec<Finisher> {
    let mut out: Vec<Finisher> = Vec::new();
    for imp in decls
        .impls_of(guard)
        .into_iter()
        .filter(|i| i.trait_path.is_none())
    {
        let scope = Scope {
            index,
            module: &imp.module,
        };
        let cx = TyCx::new(&guard.name, guard_generics, Some(scope), Some(wanted));
        for item in &imp.item.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            let Some(r) = f.sig.receiver() else { continue };
            if !syntax::is_pub(&f.vis) || f.sig.unsafety.is_some() || f.sig.asyncness.is_some() {
                continue;
            }
            let takes = match (
                &r.reference,
                r.mutability.is_some(),
                r.colon_token.is_some(),
            ) {
                (Some(_), false, _) => GuardTaking::Ref,
                (Some(_), true, _) => GuardTaking::Mut,
                (None, _, false) => GuardTaking::Value,
                // `self: Arc<Self>` and the like.
                (None, _, true) => continue,
            };
            let fcx = cx.with_fn_generics(&f.sig.generics, Some(&imp.item.generics));
            let method = method(
                &f.sig,
                Some(&f.block),
                &f.attrs,
                imp.file,
                imp.expanded || macros::is_expanded(&f.attrs),
                None,
                &fcx,
            );
            let generic = method.params.iter().any(|p| {
                p.kind.any(&|k| {
                    matches!(
                        k,
                        ParamKind::Instance { .. } | ParamKind::FromReceiver { .. }
                    )
                })
            });
            if method.supported()
                && method.generic_args.is_empty()
                && !generic
                && !out.iter().any(|f| f.method.name == method.name)
            {
                out.push(Finisher { method, takes });
            }
        }
    }
    out
}

/// Whether `ty` names one of `names` (an impl's own type parameters).
fn mentions(ty: &syn::Type, names: &[String]) -> bool {
    let text = tokens(ty);
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| names.iter().any(|n| n == w))
}

/// Parameters no value can be generated for whose type a no-argument `&self` method of the
/// type returns (`get(&self, key: &K, guard: &Guard<'_>)` with `guard(&self) -> Guard<'_>`)
/// take that method's result on the receiver: the crate's own way to get one. Such a
/// provider's answer is a token for the type's own calls (an epoch guard), not a hold on the
/// object: it is not [`Method::holds`].
fn receiver_arguments(methods: &mut [Method]) {
    let providers: Vec<(String, String)> = methods
        .iter()
        .filter(|m| m.supported() && m.params.is_empty() && m.generic_args.is_empty())
        .filter_map(|m| Some((without_lifetimes(m.returns.as_ref()?), m.name.clone())))
        .collect();
    for m in methods.iter_mut() {
        let Some(Reason::Signature { problems }) = &mut m.reason else {
            continue;
        };
        for p in &mut m.params {
            let named =
                |pr: &Problem| matches!(pr, Problem::Parameter { name, .. } if *name == p.name);
            if !problems.iter().any(named) {
                continue;
            }
            let ty = p.ty.trim();
            let (by_ref, held) = match ty.strip_prefix('&') {
                Some(rest) => (true, rest),
                None => (false, ty),
            };
            if held.trim_start().starts_with("mut ") {
                continue;
            }
            let held = without_lifetimes(held);
            // `&impl Guard`: a provider whose type is named after the trait (`LocalGuard`);
            // a wrong guess fails the harness build and the method is dropped, as any call
            // that does not compile is.
            let wanted = |t: &String| match held.strip_prefix("impl") {
                Some(bound) => {
                    let trait_name = base_name(bound.split('+').next().unwrap_or(bound));
                    !trait_name.is_empty() && base_name(t).ends_with(&trait_name)
                }
                None => *t == held,
            };
            // The same type written through another path (`guard(&self) -> epoch::Guard` for
            // `guard: &Guard`, flurry) when no provider's type is written the same way.
            let by_name =
                |t: &String| !held.starts_with("impl") && last_segment(t) == last_segment(&held);
            let provider = providers
                .iter()
                .find(|(t, _)| wanted(t))
                .or_else(|| providers.iter().find(|(t, _)| by_name(t)));
            if let Some((_, method)) = provider {
                p.kind = ParamKind::FromReceiver {
                    method: method.clone(),
                    by_ref,
                };
                problems
                    .retain(|pr| !matches!(pr, Problem::Parameter { name, .. } if *name == p.name));
            }
        }
        if problems.is_empty() {
            m.reason = None;
        }
    }
    let provided: HashSet<String> = methods
        .iter()
        .flat_map(|m| &m.params)
        .filter_map(|p| match &p.kind {
            ParamKind::FromReceiver { method, .. } => Some(method.clone()),
            _ => None,
        })
        .collect();
    for m in methods.iter_mut() {
        m.holds &= !provided.contains(&m.name);
    }
}

/// The last path segment of a type's text, without generic arguments: `a::LocalGuard<>` →
/// `LocalGuard`.
fn base_name(ty: &str) -> String {
    let head = ty.split('<').next().unwrap_or(ty);
    head.rsplit("::").next().unwrap_or(head).trim().to_string()
}

/// A type's text from its last path segment on: `epoch::Guard<T>` → `Guard<T>`.
fn last_segment(ty: &str) -> &str {
    let head = ty.find('<').map_or(ty, |i| &ty[..i]);
    match head.rfind("::") {
        Some(i) => &ty[i + 2..],
        None => ty,
    }
}

/// A type's text without lifetimes or spaces: `Guard < '_ >` and `'g Guard<'a>` → `Guard`.
fn without_lifetimes(ty: &str) -> String {
    let mut out = String::new();
    let mut chars = ty.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            while chars
                .peek()
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                chars.next();
            }
            while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
                chars.next();
            }
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out.replace("<>", "").replace(",>", ">")
}

fn type_param_names(generics: &syn::Generics) -> Vec<String> {
    generics
        .type_params()
        .map(|t| t.ident.to_string())
        .collect()
}

fn default_constructor() -> Constructor {
    Constructor {
        name: "default".into(),
        kind: ConstructorKind::Default,
        params: vec![],
        returns: ReturnShape::SelfValue,
        chain: vec![],
        ..Constructor::default()
    }
}

/// The type's generic parameters: defaults qualified, and for a parameter bounded by a trait
/// of the crate, the crate's public types that implement it as candidates.
fn generic_params(generics: &syn::Generics, cx: &TyCx, index: &CrateIndex) -> Vec<GenericParam> {
    let mut out = Vec::new();
    for p in &generics.params {
        let written = tokens(p);
        let param = match p {
            syn::GenericParam::Lifetime(l) => GenericParam {
                name: l.lifetime.to_string(),
                kind: GenericKind::Lifetime,
                written,
                ..GenericParam::default()
            },
            syn::GenericParam::Const(c) => GenericParam {
                name: c.ident.to_string(),
                kind: GenericKind::Const,
                written,
                default: c.default.as_ref().and_then(|d| const_default(d, cx)),
                candidates: vec![],
                boxed: false,
            },
            syn::GenericParam::Type(t) => {
                let name = t.ident.to_string();
                let candidates = bound_candidates(&param_bounds(generics, t), index, cx.wanted);
                // A default of the crate's own is built like an argument value (mapping it
                // registers its value type).
                if let Some(d) = &t.default {
                    let _ = cx.param_kind(d);
                }
                GenericParam {
                    default: t.default.as_ref().and_then(|d| cx.qualify(d).ok()),
                    candidates,
                    name,
                    kind: GenericKind::Type,
                    written,
                    boxed: false,
                }
            }
        };
        out.push(param);
    }
    out
}

/// Words of a field type that keep values in memory the crate manages itself: a slot written
/// and read with `ptr::write`/`ptr::read`, a pointer that owns what it points to. A value of
/// such a crate's type parameter that a race reads twice is dropped twice.
const MANUAL_MEMORY: &[&str] = &[
    "MaybeUninit",
    "ManuallyDrop",
    "AtomicPtr",
    "NonNull",
    "*mut",
    "*const",
];

/// Words of a field type that hand what a structure removes to a deferred reclamation scheme
/// (crossbeam-epoch's `Atomic`, sdd's `AtomicShared`/`AtomicOwned`, seize's `Collector`): a value that needs dropping is retired there and dropped later, in batches,
/// so boxed values cost each test the collector's work (scc 3.8.8's `TreeIndex`: 128 tests in
/// 5 s with `Box<u64>` keys, 18,604 with `u64`) and a value dropped twice is dropped at a
/// moment no run controls. Such a crate's parameters stay integers.
const DEFERRED_RECLAMATION: &[&str] = &["Atomic<", "AtomicOwned", "AtomicShared", "Collector"];

/// Whether some field of a type of the crate keeps values in memory the crate manages
/// itself ([`MANUAL_MEMORY`]), and none hands them to deferred reclamation
/// ([`DEFERRED_RECLAMATION`]).
fn manages_memory(decls: &Decls) -> bool {
    let fields = || {
        decls
            .types
            .iter()
            .flat_map(|t| t.fields.iter().map(|(_, ty)| tokens(*ty)))
    };
    fields().any(|text| MANUAL_MEMORY.iter().any(|w| text.contains(w)))
        && !fields().any(|text| DEFERRED_RECLAMATION.iter().any(|w| text.contains(w)))
}

/// Whether the type's declaration or one of its impls (their generics, where clauses and
/// methods' signatures) bounds something by `Copy` where `param` is named: `impl<T: Copy>
/// AtomicCell<T>`'s `load` would not compile for a boxed `T`, and a method that does not
/// compile is left out.
fn bounded_by_copy(decl: &TypeDecl, impls: &[&ImplDecl], param: &str) -> bool {
    let names_copy = |text: &str| {
        text.split(|c: char| !c.is_alphanumeric())
            .any(|w| w == "Copy")
    };
    let decl_bounds = tokens(decl.generics)
        + &decl
            .generics
            .where_clause
            .as_ref()
            .map(tokens)
            .unwrap_or_default();
    names_copy(&decl_bounds)
        || impls.iter().any(|imp| {
            let mut text = tokens(&imp.item.generics);
            text += &imp
                .item
                .generics
                .where_clause
                .as_ref()
                .map(tokens)
                .unwrap_or_default();
            for item in &imp.item.items {
                if let syn::ImplItem::Fn(f) = item {
                    text += &tokens(&f.sig.generics);
                    text += &f
                        .sig
                        .generics
                        .where_clause
                        .as_ref()
                        .map(tokens)
                        .unwrap_or_default();
                }
            }
            names_copy(&text)
                && text
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == param)
        })
}

/// A type parameter's bounds, in its declaration and in the where clause.
fn param_bounds<'g>(
    generics: &'g syn::Generics,
    param: &'g syn::TypeParam,
) -> Vec<&'g syn::TypeParamBound> {
    let mut bounds: Vec<&syn::TypeParamBound> = param.bounds.iter().collect();
    if let Some(w) = &generics.where_clause {
        for pred in &w.predicates {
            if let syn::WherePredicate::Type(pt) = pred {
                if type_name(&pt.bounded_ty).is_some_and(|n| param.ident == n) {
                    bounds.extend(pt.bounds.iter());
                }
            }
        }
    }
    bounds
}

/// Candidates from the package's dependencies for a type parameter that still has none (no
/// implementor in the crate, no default, no use in its docs and tests) and is bounded by a
/// dependency's trait: the dependencies' public types that implement it (issue 29: a type
/// generic over `R: lock_api::RawMutex` gets parking_lot's `RawMutex`). Which of them satisfy
/// every bound the compiler decides: the harness drops a candidate it cannot build with.
fn dependency_candidates(
    decl: &TypeDecl,
    index: &CrateIndex,
    externals: &dyn ExternalValues,
    generics: &mut [GenericParam],
) {
    for t in decl.generics.type_params() {
        let Some(param) = generics.iter_mut().find(|g| t.ident == g.name) else {
            continue;
        };
        if !param.candidates.is_empty() || param.informative_default().is_some() {
            continue;
        }
        for bound in param_bounds(decl.generics, t) {
            let syn::TypeParamBound::Trait(tr) = bound else {
                continue;
            };
            let segs: Vec<String> = tr
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let Some((Def::External(path), used)) = index.resolve(&decl.module, &segs) else {
                continue;
            };
            if used != segs.len() || matches!(path[0].as_str(), "std" | "core" | "alloc") {
                continue;
            }
            for candidate in externals.implementors(&path) {
                if !param.candidates.contains(&candidate) {
                    param.candidates.push(candidate);
                }
            }
        }
    }
}

/// A const parameter's default as code outside the crate writes it: a literal as it is, a
/// named constant by its public path. `None` for a private constant (sdd's `Bag<T, const
/// ARRAY_LEN: usize = DEFAULT_ARRAY_LEN>`): the harness then picks a small value of its own.
fn const_default(default: &syn::Expr, cx: &TyCx) -> Option<String> {
    match default {
        syn::Expr::Lit(_) => Some(tokens(default)),
        syn::Expr::Path(p) if p.qself.is_none() => {
            let ty = syn::Type::Path(syn::TypePath {
                qself: None,
                path: p.path.clone(),
            });
            cx.qualify(&ty).ok()
        }
        syn::Expr::Block(b) => match b.block.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => const_default(e, cx),
            _ => None,
        },
        _ => None,
    }
}

/// Public, non-generic types of the crate implementing a trait of these bounds (each
/// registered in `wanted`, so values of it can be built).
fn bound_candidates(
    bounds: &[&syn::TypeParamBound],
    index: &CrateIndex,
    wanted: Option<&RefCell<BTreeMap<String, Def>>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for b in bounds {
        let syn::TypeParamBound::Trait(t) = b else {
            continue;
        };
        let Some(last) = t.path.segments.last() else {
            continue;
        };
        for (module, ty, args) in index.implementors(&last.ident.to_string()) {
            let Some((def, _)) = index.resolve(&module, &[ty]) else {
                continue;
            };
            if index.item(&def).is_some_and(|i| i.type_params > 0) {
                continue;
            }
            let path = match (&def, args) {
                // A dependency's or std's type the crate implements its trait for
                // (`impl<T> RefCnt for Arc<T>`): any argument does, `u64` is one.
                (Def::External(segs), ImplArgs::Free(n)) => {
                    let mut segs = segs.clone();
                    if matches!(segs[0].as_str(), "alloc" | "core") {
                        segs[0] = "std".into();
                    }
                    let args = vec!["u64"; n].join(", ");
                    let generic = if n > 0 {
                        format!("<{args}>")
                    } else {
                        String::new()
                    };
                    format!("::{}{generic}", segs.join("::"))
                }
                (Def::External(_), ImplArgs::Bounded) => continue,
                // A primitive (`impl EncodeCounterValue for f32`) is named as it is.
                (Def::Builtin(name), _) => name.clone(),
                _ => {
                    let Some(path) = index.public_path(&def) else {
                        continue;
                    };
                    if let Some(wanted) = wanted {
                        wanted.borrow_mut().insert(path.clone(), def.clone());
                    }
                    format!("::{path}")
                }
            };
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

fn inherent_fns(
    imp: &ImplDecl,
    cx: &TyCx,
    decls: &Decls,
    methods: &mut Vec<Method>,
    constructors: &mut Vec<Constructor>,
) {
    for item in &imp.item.items {
        let syn::ImplItem::Fn(f) = item else { continue };
        if !syntax::is_pub(&f.vis) {
            continue;
        }
        let fcx = cx.with_fn_generics(&f.sig.generics, Some(&imp.item.generics));
        match f.sig.receiver() {
            Some(r) if is_ref_self(r) => methods.push(method(
                &f.sig,
                Some(&f.block),
                &f.attrs,
                imp.file,
                imp.expanded || macros::is_expanded(&f.attrs),
                None,
                &fcx,
            )),
            Some(_) => {}
            None => {
                if let Some(mut c) = constructor(&f.sig, &fcx, decls) {
                    c.rendezvous = contract::rendezvous(&f.attrs);
                    constructors.push(c);
                }
            }
        }
    }
}

fn trait_fns(
    imp: &ImplDecl,
    path: &syn::Path,
    cx: &TyCx,
    decls: &Decls,
    index: &CrateIndex,
    methods: &mut Vec<Method>,
) {
    let Some(last) = path.segments.last() else {
        return;
    };
    let name = last.ident.to_string();
    if SKIPPED_TRAITS.contains(&name.as_str()) {
        return;
    }
    let segs: Vec<String> = render::idents(path);
    let def = index.resolve(&imp.module, &segs).map(|(d, _)| d);
    let trait_path = match &def {
        Some(def) => match index.public_path(def) {
            Some(p) => p,
            // A trait only its crate can name: its methods are not part of the API.
            None => return,
        },
        None if segs.len() >= 2 => segs.join("::"),
        None => return,
    };
    // The crate's own trait, whose declaration documents the methods an impl does not.
    let tr = match &def {
        Some(Def::Item {
            module,
            kind: ItemKind::Trait,
            ..
        }) => decls.trait_named(&name, module),
        _ => None,
    };
    let declared_attrs = |name: &syn::Ident| {
        tr.and_then(|tr| {
            tr.item.items.iter().find_map(|item| match item {
                syn::TraitItem::Fn(f) if f.sig.ident == *name => Some(f.attrs.as_slice()),
                _ => None,
            })
        })
    };
    let mut defined = HashSet::new();
    for item in &imp.item.items {
        let syn::ImplItem::Fn(f) = item else { continue };
        defined.insert(f.sig.ident.to_string());
        if f.sig.receiver().is_some_and(is_ref_self) {
            let fcx = cx.with_fn_generics(&f.sig.generics, Some(&imp.item.generics));
            let attrs = match declared_attrs(&f.sig.ident) {
                Some(declared) if !contract::has_doc(&f.attrs) => declared,
                _ => &f.attrs,
            };
            methods.push(method(
                &f.sig,
                Some(&f.block),
                attrs,
                imp.file,
                imp.expanded || macros::is_expanded(&f.attrs),
                Some(trait_path.clone()),
                &fcx,
            ));
        }
    }
    // Default methods of a trait of the crate that the impl does not override.
    let Some(tr) = tr else {
        return;
    };
    let tscope = Scope {
        index,
        module: &tr.module,
    };
    let tcx = TyCx::new(cx.self_name, cx.type_generics, Some(tscope), cx.wanted);
    for item in &tr.item.items {
        let syn::TraitItem::Fn(f) = item else {
            continue;
        };
        if f.default.is_none() || defined.contains(&f.sig.ident.to_string()) {
            continue;
        }
        if f.sig.receiver().is_some_and(is_ref_self) {
            let fcx = tcx.with_fn_generics(&f.sig.generics, None);
            // The body is the trait's, shared by every implementor: not instrumented.
            let mut m = method(
                &f.sig,
                None,
                &f.attrs,
                imp.file,
                true,
                Some(trait_path.clone()),
                &fcx,
            );
            m.span = span_of(imp.file, imp.item.impl_token.span);
            methods.push(m);
        }
    }
}

pub(crate) fn is_ref_self(r: &syn::Receiver) -> bool {
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

pub(crate) fn span_of(file: &Path, span: proc_macro2::Span) -> Span {
    let s = span.start();
    Span {
        file: file.to_path_buf(),
        line: s.line as u32,
        column: s.column as u32,
    }
}

pub(crate) fn span_of_end(file: &Path, span: proc_macro2::Span) -> Span {
    let e = span.end();
    Span {
        file: file.to_path_buf(),
        line: e.line as u32,
        column: e.column as u32,
    }
}

/// A method; `expanded` when its span points into a macro (then it is not instrumented).
/// `attrs` are the attributes its doc comment is read from (for a trait method an impl does
/// not document, the trait's declaration of it).
fn method(
    sig: &syn::Signature,
    block: Option<&syn::Block>,
    attrs: &[syn::Attribute],
    file: &Path,
    expanded: bool,
    trait_name: Option<String>,
    cx: &TyCx,
) -> Method {
    let mut problems = Vec::new();
    if sig.unsafety.is_some() {
        problems.push(Problem::Unsafe);
    }
    let params = params_of(sig, cx, &mut problems);
    let generic_args = generic_args(sig, cx, &mut problems);
    let returns = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, t) => Some(tokens(&**t)),
    };
    // A `const fn` body cannot take the oracle's (non-const) guard call.
    let body_start = block
        .filter(|_| sig.constness.is_none() && !expanded)
        .map(|b| span_of_end(file, b.brace_token.span.open()));
    Method {
        name: sig.ident.to_string(),
        params,
        returns,
        trait_name,
        generic_args,
        span: span_of(file, sig.ident.span()),
        body_start,
        body_end: block.map(|b| span_of_end(file, b.brace_token.span.close())),
        is_async: sig.asyncness.is_some(),
        via: None,
        hands_out: None,
        approximate: contract::approximation(attrs)
            .or_else(|| contract::storage_answer(sig))
            .or_else(|| contract::underscored(sig))
            .or_else(|| match &sig.output {
                syn::ReturnType::Type(_, t) => answers_view(t, cx).then_some(Approximation::View),
                syn::ReturnType::Default => None,
            }),
        iterates: match &sig.output {
            syn::ReturnType::Type(_, t) => is_iterator(t, cx),
            syn::ReturnType::Default => false,
        },
        coalesces: None,
        contended: contract::contended(attrs),
        panics: contract::panics(attrs),
        holds: match &sig.output {
            syn::ReturnType::Type(_, t) => holds_receiver(t, cx),
            syn::ReturnType::Default => false,
        },
        reason: Reason::signature(problems),
    }
}

/// Whether a returned value of type `ty` can hold the object until it is dropped
/// ([`Method::holds`]): a type of the crate whose name says guard or that implements `Drop`
/// (`MutexGuard<T>` of a spin lock crate, quick_cache's `GuardResult<'_, ..>` that may hold a
/// placeholder, a semaphore's `Permit<'_>`), also inside
/// `Option`, `Result`, `LockResult` or `TryLockResult`. The crate's own: its methods are
/// then what takes and releases the hold, so they can answer by it (`is_locked`, `try_lock`).
/// A guard of another crate's lock (`parking_lot::MappedRwLockReadGuard` over a field) holds
/// a lock of a field, whose attempts the copy marks where they find it held
/// (`covcon_rt::attempt`); a reference holds nothing (it has no `Drop`), nor does an
/// `impl Trait`.
fn holds_receiver(ty: &syn::Type, cx: &TyCx) -> bool {
    // Either side of a `Result` (quick_cache's `Result<V, PlaceholderGuard<..>>`).
    answered_crate_type(ty, cx, &|name| {
        name.contains("Guard") || implements(cx, "Drop", name)
    })
}

/// Whether a returned value of type `ty` is a view of the object ([`Approximation::View`]): a
/// type of the crate whose `Debug` lists what it iterates over a collection it borrows
/// ([`CrateIndex::is_live_view`]), also inside `Option`, `Result`, ….
fn answers_view(ty: &syn::Type, cx: &TyCx) -> bool {
    let Some(scope) = cx.scope.as_ref() else {
        return false;
    };
    answered_crate_type(ty, cx, &|name| scope.index.is_live_view(name))
}

/// Whether `ty`, or a type inside it as an `Option`, `Result`, `LockResult` or
/// `TryLockResult` holds it (either side of a `Result`), is a type of the crate whose name
/// `pred` accepts.
fn answered_crate_type(ty: &syn::Type, cx: &TyCx, pred: &dyn Fn(&str) -> bool) -> bool {
    match ty {
        syn::Type::Paren(p) => answered_crate_type(&p.elem, cx, pred),
        syn::Type::Group(g) => answered_crate_type(&g.elem, cx, pred),
        syn::Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            if HOLDER_WRAPPERS.contains(&last.ident.to_string().as_str()) {
                return type_args(last)
                    .into_iter()
                    .any(|inner| answered_crate_type(inner, cx, pred));
            }
            crate_type(p, cx).is_some_and(|name| pred(&name))
        }
        _ => false,
    }
}

/// Marks the methods whose doc says concurrent calls on one key are coalesced into one
/// evaluation of their closure ([`Method::coalesces`]), and those whose doc likens them to one
/// ("Works like [`get_with`], but takes an additional `replace_if` closure"), through such
/// likenings up to three deep.
fn coalescing(impls: &[&ImplDecl], methods: &mut [Method]) {
    let mut own: BTreeMap<String, String> = BTreeMap::new();
    let mut like: BTreeMap<String, String> = BTreeMap::new();
    for imp in impls {
        for item in &imp.item.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            let name = f.sig.ident.to_string();
            if let Some(line) = contract::coalescing(&f.attrs) {
                own.entry(name).or_insert(line);
            } else if let Some(other) = contract::works_like(&f.attrs) {
                like.entry(name).or_insert(other);
            }
        }
    }
    for _ in 0..3 {
        for (name, other) in &like {
            if let Some(line) = own.get(other).cloned() {
                own.entry(name.clone()).or_insert(line);
            }
        }
    }
    for m in methods.iter_mut() {
        if let Some(line) = own.get(&m.name) {
            m.coalesces = Some(line.clone());
        }
    }
}

/// Marks as [`Method::holds`] the methods that take a hold inside: their body (or that of a
/// method of the type they call on `self`, public or not, transitively) calls a method that
/// returns one (`add` calling `self.lock()` of a spin lock crate's own lock). While such a
/// call runs, the other thread may find the object held, just as beside the guard's owner.
fn holds_inside(impls: &[&ImplDecl], methods: &mut [Method]) {
    struct SelfCalls(HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for SelfCalls {
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            if matches!(&*call.receiver, syn::Expr::Path(p) if p.path.is_ident("self")) {
                self.0.insert(call.method.to_string());
            }
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    let mut calls: BTreeMap<String, HashSet<String>> = BTreeMap::new();
    for imp in impls.iter().filter(|i| i.trait_path.is_none()) {
        for item in &imp.item.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            if f.sig.receiver().is_some() {
                let mut found = SelfCalls(HashSet::new());
                syn::visit::Visit::visit_block(&mut found, &f.block);
                calls
                    .entry(f.sig.ident.to_string())
                    .or_default()
                    .extend(found.0);
            }
        }
    }
    let mut holding: HashSet<String> = methods
        .iter()
        .filter(|m| m.holds)
        .map(|m| m.name.clone())
        .collect();
    loop {
        let before = holding.len();
        for (name, called) in &calls {
            if !holding.contains(name) && called.iter().any(|c| holding.contains(c)) {
                holding.insert(name.clone());
            }
        }
        if holding.len() == before {
            break;
        }
    }
    for m in methods.iter_mut() {
        m.holds |= holding.contains(&m.name);
    }
}

/// The wrappers a returned guard may come in, by the name of their last segment.
const HOLDER_WRAPPERS: &[&str] = &["Option", "Result", "LockResult", "TryLockResult"];

/// The iterator traits a returned `impl Trait` or `dyn Trait` may name.
const ITERATOR_TRAITS: &[&str] = &[
    "Iterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "FusedIterator",
];

/// Whether a method's return type is an iterator a test can drive: `impl Iterator<..>`,
/// `Box<dyn Iterator<..>>`, or a type of the crate that implements `Iterator` (found by name
/// among the crate's `impl Iterator for ..` blocks) with a `next` that does not wait for
/// another thread (an event subscriber's does: driven, it would wait out the test's timeout).
fn is_iterator(ty: &syn::Type, cx: &TyCx) -> bool {
    let names_iterator = |bounds: &syn::punctuated::Punctuated<
        syn::TypeParamBound,
        syn::Token![+],
    >| {
        bounds.iter().any(|b| {
            matches!(b, syn::TypeParamBound::Trait(t)
                if t.path.segments.last().is_some_and(|s| ITERATOR_TRAITS.contains(&s.ident.to_string().as_str())))
        })
    };
    match ty {
        syn::Type::ImplTrait(t) => names_iterator(&t.bounds),
        syn::Type::TraitObject(t) => names_iterator(&t.bounds),
        syn::Type::Paren(p) => is_iterator(&p.elem, cx),
        syn::Type::Group(g) => is_iterator(&g.elem, cx),
        syn::Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            if last.ident == "Box" {
                return first_type_arg(last).is_some_and(|inner| is_iterator(inner, cx));
            }
            crate_type(p, cx).is_some_and(|name| {
                implements(cx, "Iterator", &name)
                    && !cx
                        .scope
                        .as_ref()
                        .is_some_and(|scope| scope.index.iterator_waits(&name))
            })
        }
        _ => false,
    }
}

/// The name of the crate's own type a path names, when it resolves to one entirely.
fn crate_type(p: &syn::TypePath, cx: &TyCx) -> Option<String> {
    let scope = cx.scope.as_ref()?;
    let segs = render::idents(&p.path);
    match scope.index.resolve(scope.module, &segs)? {
        (Def::Item { name, .. }, used) if used == segs.len() => Some(name),
        _ => None,
    }
}

/// Whether the crate has an `impl <trait_name> for <name>` (found by name).
fn implements(cx: &TyCx, trait_name: &str, name: &str) -> bool {
    cx.scope.as_ref().is_some_and(|scope| {
        scope
            .index
            .implementors(trait_name)
            .iter()
            .any(|(_, ty, _)| ty == name)
    })
}

/// The turbofish of a generic function: each type or const parameter's chosen type (`_` for
/// a closure's, left to inference). Empty when there is nothing to write.
fn generic_args(sig: &syn::Signature, cx: &TyCx, problems: &mut Vec<Problem>) -> Vec<String> {
    let mut args = Vec::new();
    for p in &sig.generics.params {
        match p {
            syn::GenericParam::Type(t) => {
                let name = t.ident.to_string();
                if cx.closure_generics.contains(&name) {
                    args.push("_".to_string());
                } else if let Some(choice) = cx.chosen.get(&name) {
                    args.push(choice.ty.clone());
                } else {
                    if !problems
                        .iter()
                        .any(|p| matches!(p, Problem::Parameter { why, .. } if why.contains(&format!("`{name}`"))))
                    {
                        problems.push(Problem::Generic { name });
                    }
                    args.push("_".to_string());
                }
            }
            syn::GenericParam::Const(_) => args.push("4".to_string()),
            syn::GenericParam::Lifetime(_) => {}
        }
    }
    if args.iter().all(|a| a == "_") {
        args.clear();
    }
    args
}

fn params_of(sig: &syn::Signature, cx: &TyCx, problems: &mut Vec<Problem>) -> Vec<Param> {
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
            let kind = match cx.param_kind(&t.ty) {
                Ok(k) => k,
                Err(why) => {
                    problems.push(Problem::Parameter {
                        name: name.clone(),
                        why,
                    });
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

/// A constructor: an associated function returning the type (or `Arc`, `Result`, `Option`
/// of it), or a builder whose chain ends in a method returning it.
fn constructor(sig: &syn::Signature, cx: &TyCx, decls: &Decls) -> Option<Constructor> {
    let syn::ReturnType::Type(_, ret) = &sig.output else {
        return None;
    };
    let mut problems = Vec::new();
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
        let (shape, calls) = builder_chain(&builder, cx, decls)?;
        kind = ConstructorKind::Builder;
        returns = shape;
        chain = calls;
        for c in &chain {
            if c.params.iter().any(|p| p.kind == ParamKind::Unsupported) {
                problems.push(Problem::BuilderCall {
                    name: c.name.clone(),
                });
            }
        }
    }
    let params = params_of(sig, cx, &mut problems);
    if sig.asyncness.is_some() {
        problems.push(Problem::Async);
    }
    if sig.unsafety.is_some() {
        problems.push(Problem::Unsafe);
    }
    let generic_args = generic_args(sig, cx, &mut problems);
    Some(Constructor {
        name: sig.ident.to_string(),
        kind,
        params,
        returns,
        chain,
        generic_args,
        reason: Reason::signature(problems),
        ..Constructor::default()
    })
}

/// A public free function of the crate that returns the type, alone or in a tuple
/// (`crossbeam_channel::bounded<T>(cap) -> (Sender<T>, Receiver<T>)`): a constructor called by
/// its path. Its type parameters must be the type's own, in the element's order under the same
/// names, so that the type's instantiation is its turbofish.
fn free_constructor(
    f: &syntax::FnItem,
    decl: &TypeDecl,
    type_generics: &[String],
    index: &CrateIndex,
    wanted: &RefCell<BTreeMap<String, Def>>,
) -> Option<Constructor> {
    let sig = &f.item.sig;
    let syn::ReturnType::Type(_, ret) = &sig.output else {
        return None;
    };
    let elements: Vec<&syn::Type> = match &**ret {
        syn::Type::Tuple(t) => t.elems.iter().collect(),
        other => vec![other],
    };
    let names_type = |ty: &syn::Type| {
        let syn::Type::Path(p) = ty else { return false };
        let segs: Vec<String> = render::idents(&p.path);
        matches!(index.resolve(&f.module, &segs), Some((Def::Item { module, name, .. }, used))
            if used == segs.len() && name == decl.name && module == decl.module)
    };
    let at = elements.iter().position(|e| names_type(e))?;
    // `Sender<T>` for `Sender<T>`: the element's arguments are the type's parameters.
    let syn::Type::Path(p) = elements[at] else {
        return None;
    };
    let args: Vec<String> = type_args(p.path.segments.last()?)
        .into_iter()
        .map(|t| type_name(t).unwrap_or_default())
        .collect();
    let fn_generics = type_param_names(&sig.generics);
    if args != type_generics || fn_generics != type_generics {
        return None;
    }
    let def = Def::Item {
        module: f.module.clone(),
        name: sig.ident.to_string(),
        kind: ItemKind::Fn,
    };
    let function = index.public_path(&def)?;
    let cx = TyCx::new(
        &decl.name,
        type_generics,
        Some(Scope {
            index,
            module: &f.module,
        }),
        Some(wanted),
    );
    let mut problems = Vec::new();
    let params = params_of(sig, &cx, &mut problems);
    if sig.asyncness.is_some() {
        problems.push(Problem::Async);
    }
    if sig.unsafety.is_some() {
        problems.push(Problem::Unsafe);
    }
    let tuple = match &**ret {
        syn::Type::Tuple(_) => Some(TupleReturn {
            index: at,
            elements: elements
                .iter()
                .map(|e| cx.qualify(e).unwrap_or_else(|_| tokens(*e)))
                .collect(),
        }),
        _ => None,
    };
    Some(Constructor {
        name: sig.ident.to_string(),
        kind: ConstructorKind::Function,
        params,
        returns: ReturnShape::SelfValue,
        generic_args: type_generics.to_vec(),
        function: Some(function),
        tuple,
        rendezvous: contract::rendezvous(&f.item.attrs),
        reason: Reason::signature(problems),
        ..Constructor::default()
    })
}

/// How `ret` hands back the type named `self_name`, if it does.
pub(crate) fn return_shape(ret: &syn::Type, self_name: &str) -> Option<ReturnShape> {
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

/// The calls of a builder type's chain: its setters with generable parameters, then the
/// method that returns the built type.
fn builder_chain(builder: &str, cx: &TyCx, decls: &Decls) -> Option<(ReturnShape, Vec<ChainCall>)> {
    let mut setters = Vec::new();
    let mut terminal = None;
    for imp in decls
        .impls
        .iter()
        .filter(|i| i.self_name == builder && i.trait_path.is_none())
    {
        for item in &imp.item.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            if !syntax::is_pub(&f.vis) || f.sig.receiver().is_none() {
                continue;
            }
            let syn::ReturnType::Type(_, ret) = &f.sig.output else {
                continue;
            };
            let mut problems = Vec::new();
            let scope = cx.scope.map(|s| Scope {
                index: s.index,
                module: &imp.module,
            });
            let bcx = TyCx::new(cx.self_name, cx.type_generics, scope, cx.wanted);
            let params = params_of(&f.sig, &bcx, &mut problems);
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
            } else if problems.is_empty() && returns_builder(ret, builder) {
                setters.push(call);
            }
        }
    }
    let (shape, last) = terminal?;
    setters.push(last);
    Some((shape, setters))
}

fn mentions_self_keyword(ty: &syn::Type) -> bool {
    use quote::ToTokens;
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

// ---------------------------------------------------------------------------------------------
// Value types: the crate's own types that arguments are built of.

/// Builds the value types the signatures asked for, and those their constructors ask for in
/// turn, [`VALUE_DEPTH`] levels deep; a dependency's type from that crate's own source.
pub(crate) fn value_types(
    wanted: &RefCell<BTreeMap<String, Def>>,
    decls: &Decls,
    index: &CrateIndex,
    externals: &dyn ExternalValues,
) -> Vec<ValueType> {
    let mut done: BTreeMap<String, ValueType> = BTreeMap::new();
    for _ in 0..VALUE_DEPTH {
        let pending: Vec<(String, Def)> = wanted
            .borrow()
            .iter()
            .filter(|(p, _)| !done.contains_key(*p))
            .map(|(p, d)| (p.clone(), d.clone()))
            .collect();
        if pending.is_empty() {
            break;
        }
        for (path, def) in pending {
            if let Def::External(segs) = &def {
                if !is_std(segs) {
                    for value in externals.values(segs) {
                        done.entry(value.path.clone()).or_insert(value);
                    }
                }
            }
            if let std::collections::btree_map::Entry::Vacant(entry) = done.entry(path) {
                let value = value_type(entry.key(), &def, decls, index, wanted);
                entry.insert(value);
            }
        }
    }
    for path in [PATH_BUF, "std::time::Instant", "std::time::SystemTime"] {
        if wanted.borrow().contains_key(path) || mentions_value(&done, path) {
            done.insert(path.to_string(), std_value_type(path));
        }
    }
    done.into_values().collect()
}

fn is_std(path: &[String]) -> bool {
    matches!(
        path.first().map(String::as_str),
        Some("std" | "core" | "alloc")
    )
}

fn mentions_value(done: &BTreeMap<String, ValueType>, path: &str) -> bool {
    done.values().any(|v| {
        v.constructors
            .iter()
            .any(|c| c.params.iter().any(|p| kind_mentions(&p.kind, path)))
    })
}

fn kind_mentions(kind: &ParamKind, path: &str) -> bool {
    kind.any(&|k| matches!(k, ParamKind::Value { path: p } if p == path))
}

/// The standard types covcon builds: `PathBuf::from(String)`, `Instant::now()`,
/// `SystemTime::now()`.
fn std_value_type(path: &str) -> ValueType {
    let (name, params) = if path == PATH_BUF {
        (
            "from",
            vec![Param {
                name: "path".into(),
                ty: "String".into(),
                kind: ParamKind::String,
            }],
        )
    } else {
        ("now", vec![])
    };
    ValueType {
        path: path.to_string(),
        constructors: vec![Constructor {
            name: name.into(),
            params,
            ..Constructor::default()
        }],
    }
}

fn value_type(
    path: &str,
    def: &Def,
    decls: &Decls,
    index: &CrateIndex,
    wanted: &RefCell<BTreeMap<String, Def>>,
) -> ValueType {
    let mut value = ValueType {
        path: path.to_string(),
        constructors: Vec::new(),
    };
    let Def::Item { module, name, .. } = def else {
        return value;
    };
    let Some(decl) = decls
        .types
        .iter()
        .find(|t| &t.name == name && &t.module == module)
    else {
        return value;
    };
    let generics = type_param_names(decl.generics);
    let scope = Scope {
        index,
        module: &decl.module,
    };
    let cx = TyCx::new(&decl.name, &generics, Some(scope), Some(wanted));
    match decl.item {
        DeclItem::Enum(e) => {
            for v in &e.variants {
                value.constructors.push(variant(v, &cx));
            }
        }
        DeclItem::Struct(s) => {
            let mut inherent = Vec::new();
            let mut fns = Vec::new();
            for imp in decls.impls_of(decl) {
                if imp.trait_path.is_none() {
                    let iscope = Scope {
                        index,
                        module: &imp.module,
                    };
                    let icx = TyCx::new(&decl.name, &generics, Some(iscope), Some(wanted));
                    inherent_fns(imp, &icx, decls, &mut fns, &mut inherent);
                }
            }
            value.constructors.extend(inherent);
            value
                .constructors
                .extend(foreign_constructors(decl, decls, index, wanted));
            let has_default = decl.derives.iter().any(|d| d == "Default")
                || decls.impls_of(decl).iter().any(|i| {
                    i.trait_path
                        .and_then(|p| p.segments.last())
                        .is_some_and(|s| s.ident == "Default")
                });
            if has_default && !value.constructors.iter().any(|c| c.name == "default") {
                value.constructors.push(default_constructor());
            }
            if decl.all_fields_pub && matches!(s.fields, syn::Fields::Named(_)) {
                value.constructors.push(literal(s, &cx));
            }
        }
    }
    // Building something that is itself a handle on shared state is not a value: keep it
    // to plain constructors with generable parameters.
    value
        .constructors
        .retain(|c| c.returns != ReturnShape::ArcSelf);
    // A type with no constructor of its own (nor one named `from`, which would be two of
    // that name) is built through its `From`.
    if !value
        .constructors
        .iter()
        .any(|c| c.supported() || c.name == "from")
    {
        value
            .constructors
            .extend(from_constructor(decl, decls, index, wanted));
    }
    value
}

/// For a value type with no constructor of its own: its first `impl From<S> for X` (without
/// generics of its own) whose `S` covcon can generate, as a constructor `X::from(s)`. A buffer
/// the crate makes only from a `Vec<u64>` is built that way (issue 29's pool, whose
/// `add<B: Into<Chunk>>` was never called: no `Chunk` could be made). Only then: a type that
/// has constructors is built by them as before.
fn from_constructor(
    decl: &TypeDecl,
    decls: &Decls,
    index: &CrateIndex,
    wanted: &RefCell<BTreeMap<String, Def>>,
) -> Option<Constructor> {
    for imp in decls.impls_of(decl) {
        let Some(last) = imp.trait_path.and_then(|p| p.segments.last()) else {
            continue;
        };
        if last.ident != "From" || !imp.item.generics.params.is_empty() {
            continue;
        }
        let Some(source) = first_type_arg(last) else {
            continue;
        };
        let scope = Scope {
            index,
            module: &imp.module,
        };
        let cx = TyCx::new(&decl.name, &[], Some(scope), Some(wanted));
        let (Ok(kind), Ok(qualified)) = (cx.param_kind(source), cx.qualify(source)) else {
            continue;
        };
        if matches!(kind, ParamKind::Unsupported | ParamKind::Generic { .. }) {
            continue;
        }
        return Some(Constructor {
            name: "from".into(),
            params: vec![Param {
                name: "value".into(),
                ty: tokens(source),
                kind,
            }],
            converts: Some(qualified),
            ..Constructor::default()
        });
    }
    None
}

/// Associated functions of the crate's other (public, non-generic) types that return the
/// value type: `Pool::builder() -> PoolBuilder`.
fn foreign_constructors(
    decl: &TypeDecl,
    decls: &Decls,
    index: &CrateIndex,
    wanted: &RefCell<BTreeMap<String, Def>>,
) -> Vec<Constructor> {
    let mut out = Vec::new();
    for imp in decls
        .impls
        .iter()
        .filter(|i| i.trait_path.is_none() && i.self_name != decl.name)
    {
        if !imp.item.generics.params.is_empty() {
            continue;
        }
        let Some(owner) = index
            .resolve(&imp.module, std::slice::from_ref(&imp.self_name))
            .and_then(|(def, _)| index.public_path(&def))
        else {
            continue;
        };
        let scope = Scope {
            index,
            module: &imp.module,
        };
        let cx = TyCx::new(&decl.name, &[], Some(scope), Some(wanted));
        for item in &imp.item.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            if !syntax::is_pub(&f.vis) || f.sig.receiver().is_some() {
                continue;
            }
            let syn::ReturnType::Type(_, ret) = &f.sig.output else {
                continue;
            };
            // `Self` there is the owner: only the value type's own name counts.
            if mentions_self_keyword(ret) || return_shape(ret, &decl.name).is_none() {
                continue;
            }
            let fcx = cx.with_fn_generics(&f.sig.generics, None);
            if let Some(mut c) = constructor(&f.sig, &fcx, decls) {
                if c.kind == ConstructorKind::Function {
                    c.owner = Some(owner.clone());
                    out.push(c);
                }
            }
        }
    }
    out
}

fn variant(v: &syn::Variant, cx: &TyCx) -> Constructor {
    let mut problems = Vec::new();
    let params = v
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let name = f
                .ident
                .as_ref()
                .map_or_else(|| i.to_string(), |n| n.to_string());
            let kind = cx.param_kind(&f.ty).unwrap_or_else(|why| {
                problems.push(Problem::Parameter {
                    name: name.clone(),
                    why,
                });
                ParamKind::Unsupported
            });
            Param {
                name,
                ty: tokens(&f.ty),
                kind,
            }
        })
        .collect();
    // A variant with named fields is written as a literal (`Mode::Slow { factor: 2 }`).
    let kind = match v.fields {
        syn::Fields::Named(_) => ConstructorKind::Literal,
        _ => ConstructorKind::Variant,
    };
    Constructor {
        name: v.ident.to_string(),
        kind,
        params,
        reason: Reason::signature(problems),
        ..Constructor::default()
    }
}

fn literal(s: &syn::ItemStruct, cx: &TyCx) -> Constructor {
    let mut problems = Vec::new();
    let params = s
        .fields
        .iter()
        .filter_map(|f| {
            let name = f.ident.as_ref()?.to_string();
            let kind = cx.param_kind(&f.ty).unwrap_or_else(|why| {
                problems.push(Problem::Parameter {
                    name: name.clone(),
                    why,
                });
                ParamKind::Unsupported
            });
            Some(Param {
                name,
                ty: tokens(&f.ty),
                kind,
            })
        })
        .collect();
    Constructor {
        name: s.ident.to_string(),
        kind: ConstructorKind::Literal,
        params,
        reason: Reason::signature(problems),
        ..Constructor::default()
    }
}

/// Marks constructors and methods unsupported whose arguments need a value type that has no
/// usable constructor (after marking those of the value types themselves, to a fixpoint).
fn drop_unbuildable(api: &mut TypeApi) {
    loop {
        let buildable: HashSet<String> = api
            .values
            .iter()
            .filter(|v| v.constructors.iter().any(|c| c.supported()))
            .map(|v| v.path.clone())
            .collect();
        let mut changed = false;
        for v in &mut api.values {
            for c in &mut v.constructors {
                changed |= check_buildable(&c.params, &buildable, &mut c.reason);
            }
        }
        if !changed {
            break;
        }
    }
    let buildable: HashSet<String> = api
        .values
        .iter()
        .filter(|v| v.constructors.iter().any(|c| c.supported()))
        .map(|v| v.path.clone())
        .collect();
    for c in &mut api.constructors {
        let mut params = c.params.clone();
        for link in &c.chain {
            params.extend(link.params.iter().cloned());
        }
        check_buildable(&params, &buildable, &mut c.reason);
    }
    for m in &mut api.methods {
        check_buildable(&m.params, &buildable, &mut m.reason);
    }
}

/// Marks one signature unsupported if a parameter needs an unbuildable value; answers
/// whether it changed.
fn check_buildable(
    params: &[Param],
    buildable: &HashSet<String>,
    reason: &mut Option<Reason>,
) -> bool {
    if reason.is_some() {
        return false;
    }
    let mut problems = Vec::new();
    for p in params {
        let mut missing = Vec::new();
        unbuildable_in(&p.kind, buildable, &mut missing);
        if let Some(path) = missing.first() {
            problems.push(Problem::Parameter {
                name: p.name.clone(),
                why: format!("covcon finds no way to build a `{path}`"),
            });
        }
    }
    if problems.is_empty() {
        return false;
    }
    *reason = Reason::signature(problems);
    true
}

fn unbuildable_in(kind: &ParamKind, buildable: &HashSet<String>, out: &mut Vec<String>) {
    match kind {
        ParamKind::Value { path } if !buildable.contains(path) => out.push(path.clone()),
        other => {
            for part in other.parts() {
                unbuildable_in(part, buildable, out);
            }
        }
    }
}
