//! Parameter types: what covcon can generate for each ([`ParamKind`]), and the fully
//! qualified spelling of a type written in some module ([`TyCx::qualify`]), so the harness can
//! name it from outside the crate.
//!
//! Names are resolved through the crate's [`CrateIndex`] when the context has one: a crate's
//! own struct or enum becomes a value built from its constructors ([`ParamKind::Value`]), a
//! type alias is followed, a generic method parameter is given a concrete type its bounds
//! allow (`T: AsRef<str>` → `String`, `Q` where `K: Borrow<Q>` → `K`, `T: Metric` → a type
//! of the crate that implements `Metric`).

use super::index::{CrateIndex, Def, ItemKind};
use super::render::{idents, tokens};
use crate::model::{InstancePassing, ParamKind, Pointer, PATH_BUF};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use syn::visit_mut::VisitMut;

/// Where a signature is written: the crate's names and the module.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub(crate) index: &'a CrateIndex,
    pub(crate) module: &'a [String],
}

/// A concrete type chosen for a generic method parameter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Choice {
    pub(crate) kind: ParamKind,
    /// Fully qualified; may name the type's own parameters (`K`).
    pub(crate) ty: String,
}

/// Types in scope when mapping a parameter type.
#[derive(Clone)]
pub(crate) struct TyCx<'a> {
    pub(crate) self_name: &'a str,
    pub(crate) type_generics: &'a [String],
    /// Method generic name → its bounds (from `<F: Fn() -> T>` and `where`).
    pub(crate) method_generics: HashMap<String, Vec<syn::TypeParamBound>>,
    pub(crate) closure_generics: HashSet<String>,
    /// Concrete types for the method's other generic parameters.
    pub(crate) chosen: BTreeMap<String, Choice>,
    pub(crate) scope: Option<Scope<'a>>,
    /// Values of the crate's own types the signatures need: public path → definition.
    pub(crate) wanted: Option<&'a RefCell<BTreeMap<String, Def>>>,
}

impl<'a> TyCx<'a> {
    pub(crate) fn new(
        self_name: &'a str,
        type_generics: &'a [String],
        scope: Option<Scope<'a>>,
        wanted: Option<&'a RefCell<BTreeMap<String, Def>>>,
    ) -> TyCx<'a> {
        TyCx {
            self_name,
            type_generics,
            method_generics: HashMap::new(),
            closure_generics: HashSet::new(),
            chosen: BTreeMap::new(),
            scope,
            wanted,
        }
    }

    /// This context with a function's own generic parameters in scope, each given a
    /// concrete type where its bounds allow one. `where_clauses` are the function's and the
    /// impl block's (a `K: Borrow<Q>` often sits on either).
    pub(crate) fn with_fn_generics(
        &self,
        generics: &syn::Generics,
        impl_generics: Option<&syn::Generics>,
    ) -> TyCx<'a> {
        let mut method_generics: HashMap<String, Vec<syn::TypeParamBound>> = HashMap::new();
        for p in generics.type_params() {
            method_generics
                .entry(p.ident.to_string())
                .or_default()
                .extend(p.bounds.iter().cloned());
        }
        // `X: Borrow<Q>`: a `Q` argument can be an `X` (a type parameter or a concrete type).
        let mut borrows: HashMap<String, syn::Type> = HashMap::new();
        for clause in [
            generics.where_clause.as_ref(),
            impl_generics.and_then(|g| g.where_clause.as_ref()),
        ]
        .into_iter()
        .flatten()
        {
            for pred in &clause.predicates {
                let syn::WherePredicate::Type(pt) = pred else {
                    continue;
                };
                let Some(bounded) = type_name(&pt.bounded_ty) else {
                    continue;
                };
                if let Some(b) = method_generics.get_mut(&bounded) {
                    b.extend(pt.bounds.iter().cloned());
                }
                for bound in &pt.bounds {
                    let Some((name, Some(arg))) = trait_bound(bound) else {
                        continue;
                    };
                    match name.as_str() {
                        "Borrow" => {
                            if let Some(q) = type_name(arg) {
                                borrows.insert(q, pt.bounded_ty.clone());
                            }
                        }
                        // `IVec: From<V>` (sled's `insert<K, V>`) bounds `V` as `V: Into<IVec>`
                        // would: an `IVec` is one.
                        "From" if !method_generics.contains_key(&bounded) => {
                            let target = &pt.bounded_ty;
                            if let Some(b) =
                                type_name(arg).and_then(|g| method_generics.get_mut(&g))
                            {
                                b.push(syn::parse_quote!(Into<#target>));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let mut cx = TyCx {
            self_name: self.self_name,
            type_generics: self.type_generics,
            method_generics,
            closure_generics: HashSet::new(),
            chosen: BTreeMap::new(),
            scope: self.scope,
            wanted: self.wanted,
        };
        // In declaration order, and again while a pass chooses more: a bound naming another
        // parameter of the method (`A: From<B>`) is read once that one is chosen. (Read in a
        // `HashMap`'s order, `A` was a `u32` in some runs and unsupported in others.)
        let names: Vec<String> = generics
            .type_params()
            .map(|p| p.ident.to_string())
            .collect();
        for name in &names {
            if closure_bound(&cx.method_generics[name], &cx).is_some() {
                cx.closure_generics.insert(name.clone());
            }
        }
        loop {
            let mut chose = false;
            for name in &names {
                if cx.closure_generics.contains(name) || cx.chosen.contains_key(name) {
                    continue;
                }
                if let Some(choice) = cx.choice_for(name, &borrows) {
                    cx.chosen.insert(name.clone(), choice);
                    chose = true;
                }
            }
            if !chose {
                break;
            }
        }
        cx
    }

    /// A concrete type for the method's generic parameter `name`: the type it borrows as
    /// (`K: Borrow<Q>` makes a `Q` argument a `K`), or one its bounds allow.
    fn choice_for(&self, name: &str, borrows: &HashMap<String, syn::Type>) -> Option<Choice> {
        if let Some(owner) = borrows.get(name) {
            let choice = match type_name(owner) {
                Some(k) if self.type_generics.contains(&k) => Some(Choice {
                    kind: ParamKind::Generic { name: k.clone() },
                    ty: k,
                }),
                _ => self.param_kind(owner).ok().and_then(|kind| {
                    Some(Choice {
                        kind,
                        ty: self.qualify(owner).ok()?,
                    })
                }),
            };
            if choice.is_some() {
                return choice;
            }
        }
        self.choose(&self.method_generics[name])
    }

    /// A concrete type for a generic parameter with these bounds, if covcon knows one.
    fn choose(&self, bounds: &[syn::TypeParamBound]) -> Option<Choice> {
        let mut choice: Option<Choice> = None;
        for bound in bounds {
            let Some((name, arg)) = trait_bound(bound) else {
                continue;
            };
            let arg_text = arg.map(tokens);
            let found = match (name.as_str(), arg_text.as_deref()) {
                // The turbofish names `String`: the argument is one (a reproducer writes
                // `String::from("ab")`, not the literal).
                ("AsRef" | "Borrow", Some("str"))
                | ("Into", Some("String"))
                | ("ToString" | "Display", None) => Some(string_choice()),
                // A path (`open<P: AsRef<Path>>(dir: P)`): a `PathBuf` (`PATH_BUF`), which
                // each run puts in a fresh directory of its own.
                ("AsRef", Some("Path" | "std::path::Path"))
                | ("Into", Some("PathBuf" | "std::path::PathBuf")) => {
                    let ty: syn::Type = syn::parse_quote!(::std::path::PathBuf);
                    Some(Choice {
                        kind: self.param_kind(&ty).ok()?,
                        ty: "::std::path::PathBuf".into(),
                    })
                }
                ("AsRef", Some("[u8]")) => Some(Choice {
                    kind: ParamKind::Vec {
                        elem: Box::new(ParamKind::Int {
                            signed: false,
                            bits: 8,
                        }),
                    },
                    ty: "::std::vec::Vec<u8>".into(),
                }),
                // `Q: Equivalent<K>` (hashbrown, indexmap, moka, scc) holds for `K` itself, and
                // `T: From<X>` for `X`.
                ("Equivalent" | "Comparable" | "Into" | "From", Some(_)) => self.same_as(arg?),
                // `Q: ToOwned<Owned = K>` (moka, quick_cache): `K` itself, when it is `Clone`.
                ("ToOwned", _) => match assoc_binding(bound, "Owned") {
                    Some(owned) => self.same_as(owned),
                    None => continue,
                },
                (n, _) if MARKER_TRAITS.contains(&n) => None,
                (n, _) => self.implementor_of(n),
            };
            match (found, &choice) {
                (Some(c), None) => choice = Some(c),
                (Some(_), Some(_)) => {}
                (None, _) if MARKER_TRAITS.contains(&name.as_str()) => {}
                // A bound covcon cannot satisfy with its choice: give up on the parameter.
                (None, _) => return None,
            }
        }
        Some(choice.unwrap_or(Choice {
            kind: ParamKind::Int {
                signed: false,
                bits: 32,
            },
            ty: "u32".into(),
        }))
    }

    /// `ty` itself as the choice: a type parameter of the type stays generic.
    fn same_as(&self, ty: &syn::Type) -> Option<Choice> {
        if let Some(k) = type_name(ty).filter(|k| self.type_generics.contains(k)) {
            return Some(Choice {
                kind: ParamKind::Generic { name: k.clone() },
                ty: k,
            });
        }
        Some(Choice {
            kind: self.param_kind(ty).ok()?,
            ty: self.qualify(ty).ok()?,
        })
    }

    /// A public, non-generic type of the crate that implements the trait named `name`.
    fn implementor_of(&self, name: &str) -> Option<Choice> {
        let scope = self.scope?;
        for (module, ty, _) in scope.index.implementors(name) {
            let segs = vec![ty.clone()];
            let Some((def, _)) = scope.index.resolve(&module, &segs) else {
                continue;
            };
            // A value of a dependency's type has no constructor covcon knows, and a primitive
            // is not a value type of the crate.
            if !matches!(def, Def::Item { .. }) {
                continue;
            }
            if scope.index.item(&def).is_some_and(|i| i.type_params > 0) {
                continue;
            }
            let Some(path) = scope.index.public_path(&def) else {
                continue;
            };
            if let Some(wanted) = self.wanted {
                wanted.borrow_mut().insert(path.clone(), def);
            }
            return Some(Choice {
                kind: ParamKind::Value { path: path.clone() },
                ty: format!("::{path}"),
            });
        }
        None
    }

    /// Maps a parameter type to what covcon can generate, or says why it cannot.
    pub(crate) fn param_kind(&self, ty: &syn::Type) -> Result<ParamKind, String> {
        match ty {
            syn::Type::Paren(p) => self.param_kind(&p.elem),
            syn::Type::Group(g) => self.param_kind(&g.elem),
            syn::Type::Tuple(t) => Ok(ParamKind::Tuple {
                elems: t
                    .elems
                    .iter()
                    .map(|e| self.param_kind(e))
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
                        elem: Box::new(self.param_kind(&s.elem)?),
                    }),
                    syn::Type::Path(p) if p.path.is_ident("str") => Ok(ParamKind::Str),
                    inner if is_self_type(inner, self.self_name) => Ok(ParamKind::Instance {
                        passing: InstancePassing::Ref,
                    }),
                    inner => match self.param_kind(inner)? {
                        ParamKind::Instance { .. } => Ok(ParamKind::Instance {
                            passing: InstancePassing::Ref,
                        }),
                        // `&Path`: a `PathBuf` derefs to it.
                        ParamKind::Value { path } if path == "std::path::Path" => {
                            Ok(ParamKind::Ref {
                                inner: Box::new(ParamKind::Value {
                                    path: PATH_BUF.into(),
                                }),
                            })
                        }
                        k => Ok(ParamKind::Ref { inner: Box::new(k) }),
                    },
                }
            }
            syn::Type::ImplTrait(it) => {
                let bounds: Vec<_> = it.bounds.iter().cloned().collect();
                if let Some(k) = closure_bound(&bounds, self) {
                    return k;
                }
                match self.choose(&bounds) {
                    Some(choice) if bounds.iter().any(|b| trait_bound(b).is_some()) => {
                        Ok(choice.kind)
                    }
                    _ => Err(format!(
                        "`{}`: covcon has no value for this trait",
                        tokens(ty)
                    )),
                }
            }
            syn::Type::Path(p) if p.qself.is_none() => self.path_kind(p),
            _ => Err(format!(
                "`{}`: covcon has no generator for this type",
                tokens(ty)
            )),
        }
    }

    fn path_kind(&self, p: &syn::TypePath) -> Result<ParamKind, String> {
        let last = p.path.segments.last().ok_or("empty type path")?;
        let name = last.ident.to_string();
        let inner = || -> Result<ParamKind, String> {
            let arg =
                first_type_arg(last).ok_or_else(|| format!("`{name}` without a type argument"))?;
            self.param_kind(arg)
        };
        let single = p.path.segments.len() == 1;
        if single && self.type_generics.contains(&name) {
            return Ok(ParamKind::Generic { name });
        }
        if single && self.method_generics.contains_key(&name) {
            if let Some(k) = closure_bound(&self.method_generics[&name], self) {
                return k;
            }
            return match self.chosen.get(&name) {
                Some(choice) => Ok(choice.kind.clone()),
                None => Err(format!("generic method parameter `{name}`")),
            };
        }
        if name == "Self" || name == self.self_name {
            return Ok(ParamKind::Instance {
                passing: InstancePassing::Value,
            });
        }
        // A name of the crate shadows the standard ones.
        if let Some(kind) = self.local_kind(p)? {
            return Ok(kind);
        }
        if let Some(kind) = int_kind(&name) {
            return Ok(kind);
        }
        match name.as_str() {
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
            "Result" => Ok(ParamKind::Result {
                ok: Box::new(inner()?),
                // An error covcon cannot make leaves the `Result` always `Ok`, as before.
                err: type_args(last)
                    .get(1)
                    .and_then(|e| self.param_kind(e).ok())
                    .filter(|k| !k.any(&|k| matches!(k, ParamKind::Unsupported)))
                    .map(Box::new),
            }),
            "Arc" | "Box" => {
                let arg = first_type_arg(last)
                    .ok_or_else(|| format!("`{name}` without a type argument"))?;
                if name == "Arc" && is_self_type(arg, self.self_name) {
                    return Ok(ParamKind::Instance {
                        passing: InstancePassing::Arc,
                    });
                }
                let pointer = if name == "Arc" {
                    Pointer::Arc
                } else {
                    Pointer::Box
                };
                match self.param_kind(arg)? {
                    ParamKind::Instance { .. } => Err(format!(
                        "`{}`: covcon passes the instance as `&Self` or `Arc<Self>` only",
                        tokens(p)
                    )),
                    inner => Ok(ParamKind::Pointer {
                        pointer,
                        inner: Box::new(inner),
                    }),
                }
            }
            "NonZero" => match inner()? {
                ParamKind::Int { signed, bits } => Ok(ParamKind::NonZero { signed, bits }),
                _ => Err(format!(
                    "`{}`: covcon has no generator for this type",
                    tokens(p)
                )),
            },
            n if n.starts_with("NonZero") => match int_kind(&n["NonZero".len()..].to_lowercase()) {
                Some(ParamKind::Int { signed, bits }) => Ok(ParamKind::NonZero { signed, bits }),
                _ => Err(format!(
                    "`{}`: covcon has no generator for this type",
                    tokens(p)
                )),
            },
            "PathBuf" | "Path" | "Instant" | "SystemTime" => {
                let path = match name.as_str() {
                    "PathBuf" => PATH_BUF,
                    "Path" => "std::path::Path",
                    "Instant" => "std::time::Instant",
                    _ => "std::time::SystemTime",
                };
                // Registered, so the standard value type is built for it.
                if let Some(wanted) = self.wanted {
                    let segs = path.split("::").map(String::from).collect();
                    wanted
                        .borrow_mut()
                        .insert(path.to_string(), Def::External(segs));
                }
                Ok(ParamKind::Value { path: path.into() })
            }
            _ => Err(format!(
                "`{}`: covcon has no generator for this type",
                tokens(p)
            )),
        }
    }

    /// A crate-local name: a type alias (followed), or a struct or enum of the crate (built
    /// from its constructors). `None` when the name is not the crate's.
    fn local_kind(&self, p: &syn::TypePath) -> Result<Option<ParamKind>, String> {
        let Some(scope) = self.scope else {
            return Ok(None);
        };
        let segs: Vec<String> = idents(&p.path);
        let Some((def, used)) = scope.index.resolve(scope.module, &segs) else {
            return Ok(None);
        };
        if used != segs.len() {
            return Ok(None);
        }
        // A dependency's type without type arguments (`&Guard` for `sdd::Guard`): a value
        // built from that crate's constructors, if covcon can read them.
        if let Def::External(path) = &def {
            let dependency = !matches!(path[0].as_str(), "std" | "core" | "alloc")
                && scope.index.is_extern(&path[0])
                && path.len() > 1;
            let plain = p.path.segments.iter().all(|s| s.arguments.is_empty());
            if !dependency || !plain {
                return Ok(None);
            }
            let joined = path.join("::");
            if let Some(wanted) = self.wanted {
                wanted.borrow_mut().insert(joined.clone(), def.clone());
            }
            return Ok(Some(ParamKind::Value { path: joined }));
        }
        let Def::Item { module, name, kind } = &def else {
            return Ok(None);
        };
        let item = scope.index.item(&def);
        match kind {
            ItemKind::Alias => {
                let Some(target) = item
                    .and_then(|i| i.alias_of.as_deref())
                    .and_then(|t| syn::parse_str::<syn::Type>(t).ok())
                else {
                    return Ok(None);
                };
                if item.is_some_and(|i| i.type_params > 0) {
                    return Err(format!("`{}`: a generic type alias", tokens(p)));
                }
                let cx = TyCx::new(
                    self.self_name,
                    self.type_generics,
                    Some(Scope {
                        index: scope.index,
                        module,
                    }),
                    self.wanted,
                );
                cx.param_kind(&target).map(Some)
            }
            ItemKind::Struct | ItemKind::Enum => {
                if item.is_some_and(|i| i.type_params > 0) {
                    return Err(format!(
                        "`{}`: covcon does not build values of generic types",
                        tokens(p)
                    ));
                }
                let path = scope
                    .index
                    .public_path(&def)
                    .ok_or_else(|| format!("`{name}` is not reachable from outside its crate"))?;
                if let Some(wanted) = self.wanted {
                    wanted.borrow_mut().insert(path.clone(), def.clone());
                }
                Ok(Some(ParamKind::Value { path }))
            }
            _ => Ok(None),
        }
    }

    /// The type as code outside the crate writes it: every path resolved and made absolute
    /// (`Key` → `::my_crate::keys::Key`, `RandomState` →
    /// `::std::collections::hash_map::RandomState`), generic parameters and `Self` kept.
    pub(crate) fn qualify(&self, ty: &syn::Type) -> Result<String, String> {
        let mut ty = ty.clone();
        let mut q = Qualifier {
            cx: self,
            error: None,
        };
        q.visit_type_mut(&mut ty);
        match q.error {
            Some(e) => Err(e),
            None => Ok(tokens(&ty)),
        }
    }
}

struct Qualifier<'c, 'a> {
    cx: &'c TyCx<'a>,
    error: Option<String>,
}

impl VisitMut for Qualifier<'_, '_> {
    fn visit_type_path_mut(&mut self, tp: &mut syn::TypePath) {
        if tp.qself.is_none() && self.error.is_none() {
            self.rewrite(&mut tp.path);
        }
        syn::visit_mut::visit_type_path_mut(self, tp);
    }

    fn visit_trait_bound_mut(&mut self, b: &mut syn::TraitBound) {
        if self.error.is_none() {
            self.rewrite(&mut b.path);
        }
        syn::visit_mut::visit_trait_bound_mut(self, b);
    }

    fn visit_lifetime_mut(&mut self, l: &mut syn::Lifetime) {
        if l.ident != "static" && l.ident != "_" {
            *l = syn::Lifetime::new("'static", l.apostrophe);
        }
    }
}

impl Qualifier<'_, '_> {
    fn rewrite(&mut self, path: &mut syn::Path) {
        let first = match path.segments.first() {
            Some(s) => s.ident.to_string(),
            None => return,
        };
        let cx = self.cx;
        if path.leading_colon.is_none() && (cx.type_generics.contains(&first) || first == "Self") {
            return;
        }
        if path.leading_colon.is_none() && cx.method_generics.contains_key(&first) {
            if let Some(choice) = cx.chosen.get(&first) {
                if path.segments.len() == 1 {
                    if let Ok(p) = syn::parse_str::<syn::Path>(&choice.ty) {
                        *path = p;
                    }
                }
            }
            return;
        }
        let Some(scope) = cx.scope else {
            return;
        };
        let mut segs: Vec<String> = idents(path);
        if path.leading_colon.is_some() {
            segs.insert(0, String::new());
        }
        let Some((def, used)) = scope.index.resolve(scope.module, &segs) else {
            self.error = Some(format!("cannot resolve `{}`", tokens(&*path)));
            return;
        };
        if matches!(def, Def::Builtin(_)) {
            return;
        }
        let Some(public) = scope.index.public_path(&def) else {
            self.error = Some(format!(
                "`{}` is not reachable from outside its crate",
                tokens(&*path)
            ));
            return;
        };
        let used = used.saturating_sub(usize::from(path.leading_colon.is_some()));
        let Ok(mut new_path) = syn::parse_str::<syn::Path>(&format!("::{public}")) else {
            return;
        };
        // The last resolved segment keeps its generic arguments; associated names follow.
        if let (Some(last_new), Some(last_old)) = (
            new_path.segments.last_mut(),
            path.segments.iter().nth(used.max(1) - 1),
        ) {
            last_new.arguments = last_old.arguments.clone();
        }
        for seg in path.segments.iter().skip(used.max(1)) {
            new_path.segments.push(seg.clone());
        }
        *path = new_path;
    }
}

/// Traits a generic parameter's choice does not have to be checked against: every type
/// covcon generates has them (or the compiler will say otherwise and the call is dropped).
const MARKER_TRAITS: &[&str] = &[
    "Hash",
    "Eq",
    "PartialEq",
    "Ord",
    "PartialOrd",
    "Clone",
    "Copy",
    "Debug",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Default",
    "Serialize",
    "DeserializeOwned",
    "Any",
];

fn string_choice() -> Choice {
    Choice {
        kind: ParamKind::String,
        ty: "::std::string::String".into(),
    }
}

/// The kind of a primitive integer type's name (`usize` is generated as 64 bits).
fn int_kind(name: &str) -> Option<ParamKind> {
    let (signed, bits) = match name {
        "u8" => (false, 8),
        "u16" => (false, 16),
        "u32" => (false, 32),
        "u64" | "usize" => (false, 64),
        "u128" => (false, 128),
        "i8" => (true, 8),
        "i16" => (true, 16),
        "i32" => (true, 32),
        "i64" | "isize" => (true, 64),
        "i128" => (true, 128),
        _ => return None,
    };
    Some(ParamKind::Int { signed, bits })
}

/// The type an associated type binding of a trait bound names: `K` for `Owned` in
/// `ToOwned<Owned = K>`.
fn assoc_binding<'b>(b: &'b syn::TypeParamBound, name: &str) -> Option<&'b syn::Type> {
    let syn::TypeParamBound::Trait(t) = b else {
        return None;
    };
    let syn::PathArguments::AngleBracketed(a) = &t.path.segments.last()?.arguments else {
        return None;
    };
    a.args.iter().find_map(|g| match g {
        syn::GenericArgument::AssocType(at) if at.ident == name => Some(&at.ty),
        _ => None,
    })
}

/// `Name<Arg>` of a trait bound: the trait's last segment and its first type argument.
fn trait_bound(b: &syn::TypeParamBound) -> Option<(String, Option<&syn::Type>)> {
    let syn::TypeParamBound::Trait(t) = b else {
        return None;
    };
    let last = t.path.segments.last()?;
    Some((last.ident.to_string(), first_type_arg(last)))
}

/// `Fn() -> T` / `FnOnce() -> T` / `FnMut() -> T` without arguments: the closure's result kind.
pub(crate) fn closure_bound(
    bounds: &[syn::TypeParamBound],
    cx: &TyCx,
) -> Option<Result<ParamKind, String>> {
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
        // Its arguments are ignored: the closure returns a generated value (a predicate
        // `FnMut(&K) -> bool` answers `true` or `false`).
        let returns = match &args.output {
            syn::ReturnType::Default => Ok(ParamKind::Tuple { elems: vec![] }),
            syn::ReturnType::Type(_, t) => cx.param_kind(t),
        };
        let arity = args.inputs.len();
        // What an `FnOnce` closure shows of each argument: plain data only. Asked without
        // `wanted`: an argument is no value covcon must build (parking_lot's `OnceState`
        // would otherwise join the model's value types).
        let shown: Vec<bool> = if last.ident == "FnOnce" {
            let asked = TyCx {
                wanted: None,
                ..cx.clone()
            };
            args.inputs
                .iter()
                .map(|t| asked.param_kind(t).is_ok_and(|k| k.is_plain_data()))
                .collect()
        } else {
            Vec::new()
        };
        let shown = if shown.contains(&true) {
            shown
        } else {
            Vec::new()
        };
        return Some(returns.map(|r| ParamKind::Closure {
            returns: Box::new(r),
            arity,
            shown,
        }));
    }
    None
}

pub(crate) fn first_type_arg(seg: &syn::PathSegment) -> Option<&syn::Type> {
    type_args(seg).into_iter().next()
}

/// A path segment's type arguments, in order (`K, V` of `Map<'a, K, V>`).
pub(crate) fn type_args(seg: &syn::PathSegment) -> Vec<&syn::Type> {
    let syn::PathArguments::AngleBracketed(a) = &seg.arguments else {
        return Vec::new();
    };
    a.args
        .iter()
        .filter_map(|g| match g {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect()
}

pub(crate) fn is_self_type(ty: &syn::Type, self_name: &str) -> bool {
    match type_name(ty) {
        Some(n) => n == "Self" || n == self_name,
        None => false,
    }
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
