//! The names of a crate, owned: what each module defines and imports, so that a name written
//! anywhere can be resolved to what it denotes, and a definition to a path code outside the
//! crate can write (through `pub` modules and `pub use` re-exports). Built per file in the
//! parallel pass ([`module_facts`]) and joined per crate ([`CrateIndex`]).

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

/// One module's definitions and imports.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModuleFacts {
    /// Below the crate root (`["net", "pool"]`), empty for the root.
    pub(crate) path: Vec<String>,
    pub(crate) items: Vec<ItemFact>,
    pub(crate) uses: Vec<UseFact>,
    /// `impl Trait for Type` blocks: (last segment of the type, last segment of the trait,
    /// how the type's generic arguments can be filled).
    pub(crate) trait_impls: Vec<(String, String, ImplArgs)>,
    /// Types whose `impl Iterator` waits in `next` (a receive, a wait, a park): an event
    /// subscriber's iterator, which waits for the next event however long it takes.
    pub(crate) waiting_iterators: Vec<String>,
    /// Types with a lifetime parameter whose `impl Debug` lists the entries of an iterator
    /// over `self` (`f.debug_map().entries(self.iter())`): a view that borrows a collection
    /// and prints it as it is when printed (papaya's `HashMapRef<'_, ..>`).
    pub(crate) live_views: Vec<String>,
}

/// The generic arguments of an implementing type (`Arc<T>` in `impl<T> RefCnt for Arc<T>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ImplArgs {
    /// `n` arguments, each a parameter of the impl without bounds: any type does.
    Free(usize),
    /// Arguments covcon cannot fill without solving bounds.
    Bounded,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ItemFact {
    pub(crate) name: String,
    pub(crate) kind: ItemKind,
    /// Declared `pub` (not `pub(crate)` or narrower).
    pub(crate) public: bool,
    /// For a type alias: the aliased type's tokens; for a struct or enum: how many generic
    /// type parameters it has.
    pub(crate) alias_of: Option<String>,
    pub(crate) type_params: usize,
    /// For a type alias: its type parameters' names, in order (`T` of `type Mutex<T> = ..`).
    pub(crate) alias_params: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ItemKind {
    Struct,
    Enum,
    Union,
    Trait,
    Alias,
    Fn,
    Value,
    Mod,
}

impl ItemKind {
    fn is_type_namespace(self) -> bool {
        !matches!(self, ItemKind::Fn | ItemKind::Value)
    }
}

/// `use a::b::C;`, `use a::b::C as D;`, `use a::*;`, `extern crate x as y;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UseFact {
    /// The path as written; a leading `::` is an empty first segment.
    pub(crate) path: Vec<String>,
    /// The name it brings into scope; `None` for a glob.
    pub(crate) name: Option<String>,
    pub(crate) public: bool,
}

/// What a path denotes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Def {
    /// An item of this crate.
    Item {
        module: Vec<String>,
        name: String,
        kind: ItemKind,
    },
    Module(Vec<String>),
    /// A path into another crate, from its root (`["std", "time", "Duration"]`).
    External(Vec<String>),
    /// A primitive type (`u8`, `str`).
    Builtin(String),
}

const BUILTINS: &[&str] = &[
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32",
    "f64", "bool", "char", "str",
];

/// The standard prelude's types and traits, by name.
const PRELUDE: &[(&str, &str)] = &[
    ("Option", "std::option::Option"),
    ("Some", "std::option::Option::Some"),
    ("None", "std::option::Option::None"),
    ("Result", "std::result::Result"),
    ("Ok", "std::result::Result::Ok"),
    ("Err", "std::result::Result::Err"),
    ("Vec", "std::vec::Vec"),
    ("String", "std::string::String"),
    ("Box", "std::boxed::Box"),
    ("ToString", "std::string::ToString"),
    ("ToOwned", "std::borrow::ToOwned"),
    ("Clone", "std::clone::Clone"),
    ("Copy", "std::marker::Copy"),
    ("Send", "std::marker::Send"),
    ("Sync", "std::marker::Sync"),
    ("Sized", "std::marker::Sized"),
    ("Unpin", "std::marker::Unpin"),
    ("Default", "std::default::Default"),
    ("Drop", "std::ops::Drop"),
    ("Fn", "std::ops::Fn"),
    ("FnMut", "std::ops::FnMut"),
    ("FnOnce", "std::ops::FnOnce"),
    ("Iterator", "std::iter::Iterator"),
    ("IntoIterator", "std::iter::IntoIterator"),
    ("Extend", "std::iter::Extend"),
    ("FromIterator", "std::iter::FromIterator"),
    ("PartialEq", "std::cmp::PartialEq"),
    ("Eq", "std::cmp::Eq"),
    ("PartialOrd", "std::cmp::PartialOrd"),
    ("Ord", "std::cmp::Ord"),
    ("AsRef", "std::convert::AsRef"),
    ("AsMut", "std::convert::AsMut"),
    ("Into", "std::convert::Into"),
    ("From", "std::convert::From"),
    ("TryFrom", "std::convert::TryFrom"),
    ("TryInto", "std::convert::TryInto"),
];

/// First segment of the path of an `extern crate` item: the crate itself.
const EXTERN: &str = "$extern";

/// Deepest chain of imports followed while resolving one name.
const MAX_DEPTH: usize = 24;

/// Collects the facts of `items` (a file's, or an inline module's) into `out`, one entry per
/// module, inline modules included.
pub(crate) fn module_facts(items: &[syn::Item], module: &[String], out: &mut Vec<ModuleFacts>) {
    let mut facts = ModuleFacts {
        path: module.to_vec(),
        ..ModuleFacts::default()
    };
    for item in items {
        let (name, kind, vis, generics) = match item {
            syn::Item::Struct(s) => (&s.ident, ItemKind::Struct, &s.vis, Some(&s.generics)),
            syn::Item::Enum(e) => (&e.ident, ItemKind::Enum, &e.vis, Some(&e.generics)),
            syn::Item::Union(u) => (&u.ident, ItemKind::Union, &u.vis, Some(&u.generics)),
            syn::Item::Trait(t) => (&t.ident, ItemKind::Trait, &t.vis, None),
            syn::Item::Type(t) => (&t.ident, ItemKind::Alias, &t.vis, Some(&t.generics)),
            syn::Item::Fn(f) => (&f.sig.ident, ItemKind::Fn, &f.vis, None),
            syn::Item::Const(c) => (&c.ident, ItemKind::Value, &c.vis, None),
            syn::Item::Static(s) => (&s.ident, ItemKind::Value, &s.vis, None),
            syn::Item::Mod(m) => {
                let mut child = module.to_vec();
                child.push(unraw(&m.ident));
                if let Some((_, inner)) = &m.content {
                    module_facts(inner, &child, out);
                }
                (&m.ident, ItemKind::Mod, &m.vis, None)
            }
            syn::Item::Use(u) => {
                let mut paths = Vec::new();
                use_tree(&u.tree, Vec::new(), &mut paths);
                for (path, name) in paths {
                    facts.uses.push(UseFact {
                        path,
                        name,
                        public: is_pub(&u.vis),
                    });
                }
                continue;
            }
            syn::Item::ExternCrate(e) => {
                let name = e.rename.as_ref().map_or(&e.ident, |r| &r.1);
                facts.uses.push(UseFact {
                    path: vec![EXTERN.to_string(), unraw(&e.ident)],
                    name: Some(unraw(name)),
                    public: is_pub(&e.vis),
                });
                continue;
            }
            syn::Item::Impl(i) => {
                if let (Some((_, trait_path, _)), Some(self_name)) =
                    (&i.trait_, last_segment_of_type(&i.self_ty))
                {
                    if let Some(t) = trait_path.segments.last() {
                        if t.ident == "Iterator" && next_waits(i) {
                            facts.waiting_iterators.push(self_name.clone());
                        }
                        if t.ident == "Debug" && borrows(&i.self_ty) && lists_self(i) {
                            facts.live_views.push(self_name.clone());
                        }
                        facts.trait_impls.push((
                            self_name,
                            t.ident.to_string(),
                            impl_args(&i.self_ty, &i.generics),
                        ));
                    }
                }
                continue;
            }
            _ => continue,
        };
        let alias_of = match item {
            syn::Item::Type(t) => Some(quote::ToTokens::to_token_stream(&*t.ty).to_string()),
            _ => None,
        };
        let type_params = generics.map_or(0, |g| g.type_params().count());
        let alias_params = match item {
            syn::Item::Type(t) => t.generics.type_params().map(|p| unraw(&p.ident)).collect(),
            _ => Vec::new(),
        };
        facts.items.push(ItemFact {
            name: unraw(name),
            kind,
            public: is_pub(vis),
            alias_of,
            type_params,
            alias_params,
        });
    }
    out.push(facts);
}

fn unraw(ident: &syn::Ident) -> String {
    syn::ext::IdentExt::unraw(ident).to_string()
}

fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

fn last_segment_of_type(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn use_tree(
    tree: &syn::UseTree,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut next = prefix;
            next.push(unraw(&p.ident));
            use_tree(&p.tree, next, out);
        }
        syn::UseTree::Name(n) => {
            let name = unraw(&n.ident);
            if name == "self" {
                // `use a::b::{self}` brings `b`.
                let last = prefix.last().cloned();
                out.push((prefix, last));
            } else {
                let mut next = prefix;
                next.push(name.clone());
                out.push((next, Some(name)));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut next = prefix;
            let name = unraw(&r.ident);
            if name != "self" {
                next.push(name);
            }
            if r.rename != "_" {
                out.push((next, Some(unraw(&r.rename))));
            }
        }
        syn::UseTree::Glob(_) => out.push((prefix, None)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_tree(t, prefix.clone(), out);
            }
        }
    }
}

/// What [`CrateIndex::foreign_names`] finds.
pub(crate) struct ForeignNames {
    /// (The path into the other crate, the crate's public path for it.)
    pub(crate) reexports: Vec<(Vec<String>, String)>,
    /// (A public type alias, its public path.)
    pub(crate) aliases: Vec<(Def, String)>,
}

/// The joined facts of one crate, with name resolution and public paths.
#[derive(Debug, Clone, Default)]
pub(crate) struct CrateIndex {
    /// The library crate name (`my_crate`).
    pub(crate) krate: String,
    pub(crate) edition: u16,
    modules: HashMap<Vec<String>, ModuleFacts>,
    /// Crate names code can name without an import: the dependencies, `std`, `core`, `alloc`.
    externs: BTreeSet<String>,
    /// The shortest path from outside the crate to each public definition (segments after
    /// the crate name).
    public_paths: HashMap<Def, Vec<String>>,
}

impl CrateIndex {
    pub(crate) fn new(
        krate: &str,
        edition: &str,
        modules: Vec<ModuleFacts>,
        dependencies: impl IntoIterator<Item = String>,
    ) -> CrateIndex {
        let mut map: HashMap<Vec<String>, ModuleFacts> = HashMap::new();
        for m in modules {
            let entry = map.entry(m.path.clone()).or_insert_with(|| ModuleFacts {
                path: m.path.clone(),
                ..ModuleFacts::default()
            });
            entry.items.extend(m.items);
            entry.uses.extend(m.uses);
            entry.trait_impls.extend(m.trait_impls);
            entry.waiting_iterators.extend(m.waiting_iterators);
            entry.live_views.extend(m.live_views);
        }
        let mut externs: BTreeSet<String> = dependencies.into_iter().collect();
        externs.extend(["std", "core", "alloc"].map(String::from));
        let mut index = CrateIndex {
            krate: krate.to_string(),
            edition: edition.parse().unwrap_or(2021),
            modules: map,
            externs,
            public_paths: HashMap::new(),
        };
        index.public_paths = index.compute_public_paths();
        index
    }

    /// Resolves a path written in module `from`: the definition it reaches and how many
    /// segments that took (the rest name associated items: `Type::new`, `Enum::Variant`).
    pub(crate) fn resolve(&self, from: &[String], segments: &[String]) -> Option<(Def, usize)> {
        self.resolve_at(from, segments, 0)
    }

    fn resolve_at(&self, from: &[String], segs: &[String], depth: usize) -> Option<(Def, usize)> {
        if depth > MAX_DEPTH || segs.is_empty() {
            return None;
        }
        let (mut current, mut i) = match segs[0].as_str() {
            EXTERN => (Def::External(vec![segs.get(1)?.clone()]), 2),
            "" if self.edition <= 2015 => (Def::Module(Vec::new()), 1),
            "" => (Def::External(vec![segs.get(1)?.clone()]), 2),
            "crate" | "$crate" => (Def::Module(Vec::new()), 1),
            "self" => (Def::Module(from.to_vec()), 1),
            "super" => {
                let mut module = from.to_vec();
                let mut i = 0;
                while segs.get(i).map(String::as_str) == Some("super") {
                    module.pop()?;
                    i += 1;
                }
                (Def::Module(module), i)
            }
            first => (self.lookup_scope(from, first, depth)?, 1),
        };
        while i < segs.len() {
            match &current {
                Def::Module(m) => {
                    current = self.lookup_member(m, &segs[i], depth)?;
                    i += 1;
                }
                Def::External(p) => {
                    let mut p = p.clone();
                    p.push(segs[i].clone());
                    current = Def::External(p);
                    i += 1;
                }
                Def::Item { .. } | Def::Builtin(_) => break,
            }
        }
        Some((current, i))
    }

    /// A name in the scope of `module`: its items and imports, then the extern crates, the
    /// primitive types and the prelude.
    fn lookup_scope(&self, module: &[String], name: &str, depth: usize) -> Option<Def> {
        if let Some(def) = self.lookup_member(module, name, depth) {
            return Some(def);
        }
        if self.edition <= 2015 && !module.is_empty() {
            // 2015: extern crates are items of the root, visible from submodules only in `use`.
            if let Some(def) = self.lookup_member(&[], name, depth) {
                if matches!(def, Def::External(_)) {
                    return Some(def);
                }
            }
        }
        if self.externs.contains(name) {
            return Some(Def::External(vec![name.to_string()]));
        }
        if BUILTINS.contains(&name) {
            return Some(Def::Builtin(name.to_string()));
        }
        PRELUDE
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, path)| Def::External(path.split("::").map(String::from).collect()))
    }

    /// A name defined in or imported into `module` (what `module::name` reaches).
    fn lookup_member(&self, module: &[String], name: &str, depth: usize) -> Option<Def> {
        if depth > MAX_DEPTH {
            return None;
        }
        let facts = self.modules.get(module)?;
        let mut value = None;
        for item in facts.items.iter().filter(|i| i.name == name) {
            let def = if item.kind == ItemKind::Mod {
                let mut child = module.to_vec();
                child.push(name.to_string());
                Def::Module(child)
            } else {
                Def::Item {
                    module: module.to_vec(),
                    name: name.to_string(),
                    kind: item.kind,
                }
            };
            if item.kind.is_type_namespace() {
                return Some(def);
            }
            value.get_or_insert(def);
        }
        for u in facts
            .uses
            .iter()
            .filter(|u| u.name.as_deref() == Some(name))
        {
            if let Some((def, used)) = self.resolve_use(module, &u.path, depth + 1) {
                if used == u.path.len() {
                    return Some(def);
                }
            }
        }
        for u in facts.uses.iter().filter(|u| u.name.is_none()) {
            if let Some((Def::Module(target), used)) = self.resolve_use(module, &u.path, depth + 1)
            {
                if used == u.path.len() && target != module {
                    if let Some(def) = self.lookup_member(&target, name, depth + 1) {
                        return Some(def);
                    }
                }
            }
        }
        value
    }

    /// Resolves a `use` path written in `module`: relative to the crate root in edition
    /// 2015, to the module (or an extern crate) after.
    fn resolve_use(
        &self,
        module: &[String],
        path: &[String],
        depth: usize,
    ) -> Option<(Def, usize)> {
        let first = path.first()?.as_str();
        let relative = matches!(first, "crate" | "self" | "super" | "" | EXTERN);
        if self.edition <= 2015 && !relative {
            return self.resolve_at(&[], path, depth);
        }
        if !relative {
            // Uniform paths: a local name of the module first, else an extern crate. A name
            // imported by the very `use` being resolved must not find itself.
            let facts = self.modules.get(module)?;
            let local = facts.items.iter().any(|i| i.name == first)
                || facts
                    .uses
                    .iter()
                    .any(|u| u.name.as_deref() == Some(first) && u.path != path);
            if !local && self.externs.contains(first) {
                let mut p = vec![first.to_string()];
                p.extend(path[1..].iter().cloned());
                return Some((Def::External(p), path.len()));
            }
        }
        self.resolve_at(module, path, depth)
    }

    /// The path code outside the crate writes for a definition (`my_crate::sync::Pool`),
    /// through `pub` modules and `pub use` re-exports, the shortest when there are several.
    pub(crate) fn public_path(&self, def: &Def) -> Option<String> {
        match def {
            Def::External(p) => Some(p.join("::")),
            Def::Builtin(b) => Some(b.clone()),
            _ => {
                let segs = self.public_paths.get(def)?;
                Some(
                    std::iter::once(self.krate.clone())
                        .chain(segs.iter().cloned())
                        .collect::<Vec<_>>()
                        .join("::"),
                )
            }
        }
    }

    /// Breadth first from the root through `pub` items and `pub use`s: the first path that
    /// reaches a definition is among the shortest.
    fn compute_public_paths(&self) -> HashMap<Def, Vec<String>> {
        let mut paths: HashMap<Def, Vec<String>> = HashMap::new();
        let mut queue: VecDeque<(Vec<String>, Vec<String>)> = VecDeque::new();
        let mut seen: HashSet<(Vec<String>, Vec<String>)> = HashSet::new();
        queue.push_back((Vec::new(), Vec::new()));
        paths.insert(Def::Module(Vec::new()), Vec::new());
        while let Some((module, public)) = queue.pop_front() {
            if seen.len() > 20_000 || !seen.insert((module.clone(), public.clone())) {
                continue;
            }
            let Some(facts) = self.modules.get(&module) else {
                continue;
            };
            let mut reach = |def: Def, at: Vec<String>, queue: &mut VecDeque<_>| {
                if let Def::Module(m) = &def {
                    queue.push_back((m.clone(), at.clone()));
                }
                paths.entry(def).or_insert(at);
            };
            for item in facts.items.iter().filter(|i| i.public) {
                let mut at = public.clone();
                at.push(item.name.clone());
                let def = if item.kind == ItemKind::Mod {
                    let mut child = module.clone();
                    child.push(item.name.clone());
                    Def::Module(child)
                } else {
                    Def::Item {
                        module: module.clone(),
                        name: item.name.clone(),
                        kind: item.kind,
                    }
                };
                reach(def, at, &mut queue);
            }
            for u in facts.uses.iter().filter(|u| u.public) {
                let Some((def, used)) = self.resolve_use(&module, &u.path, 0) else {
                    continue;
                };
                if used != u.path.len() {
                    continue;
                }
                match &u.name {
                    Some(name) => {
                        let mut at = public.clone();
                        at.push(name.clone());
                        reach(def, at, &mut queue);
                    }
                    None => {
                        // A glob re-export: the target module's public members appear here.
                        if let Def::Module(target) = def {
                            queue.push_back((target, public.clone()));
                        }
                    }
                }
            }
        }
        paths
    }

    /// What the crate makes public of other crates' items: each `pub use dep::a::Item`
    /// reachable from outside, as (the path into the other crate, the crate's public path),
    /// and each public type alias (`pub type Mutex<T> = dep::Mutex<Raw, T>`), as (its
    /// definition, the public path). Sorted by public path.
    pub(crate) fn foreign_names(&self) -> ForeignNames {
        let mut reexports = Vec::new();
        let mut aliases = Vec::new();
        for (def, at) in &self.public_paths {
            let public = std::iter::once(self.krate.clone())
                .chain(at.iter().cloned())
                .collect::<Vec<_>>()
                .join("::");
            match def {
                Def::External(path) if path.len() > 1 => reexports.push((path.clone(), public)),
                Def::Item {
                    kind: ItemKind::Alias,
                    ..
                } => aliases.push((def.clone(), public)),
                _ => {}
            }
        }
        reexports.sort_by(|a, b| a.1.cmp(&b.1));
        aliases.sort_by(|a, b| a.1.cmp(&b.1));
        ForeignNames { reexports, aliases }
    }

    /// Names of the types that implement a trait named `trait_name` (last segment) in the
    /// crate, with how their generic arguments can be filled.
    pub(crate) fn implementors(&self, trait_name: &str) -> Vec<(Vec<String>, String, ImplArgs)> {
        let mut out = Vec::new();
        for m in self.modules.values() {
            for (ty, tr, args) in &m.trait_impls {
                if tr == trait_name {
                    out.push((m.path.clone(), ty.clone(), *args));
                }
            }
        }
        out.sort();
        out
    }

    /// Whether the crate's `impl Iterator for <name>` waits in `next` (found by name).
    pub(crate) fn iterator_waits(&self, name: &str) -> bool {
        self.modules
            .values()
            .any(|m| m.waiting_iterators.iter().any(|t| t == name))
    }

    /// Whether the crate's `impl Debug for <name>` prints a view of a collection it borrows
    /// (found by name; [`ModuleFacts::live_views`]).
    pub(crate) fn is_live_view(&self, name: &str) -> bool {
        self.modules
            .values()
            .any(|m| m.live_views.iter().any(|t| t == name))
    }

    /// The one public struct, enum, union or type alias of the crate named `name`, if there is
    /// exactly one (what an example's `use my_crate::*;` makes `name` mean).
    pub(crate) fn public_type_named(&self, name: &str) -> Option<Def> {
        let mut found = self.public_paths.keys().filter(|def| {
            matches!(def, Def::Item { name: n, kind, .. }
                if n == name
                    && matches!(kind, ItemKind::Struct | ItemKind::Enum | ItemKind::Union | ItemKind::Alias))
        });
        let def = found.next()?;
        found.next().is_none().then(|| def.clone())
    }

    /// Whether code of the crate can name the crate `name` (a dependency, `std`, …).
    pub(crate) fn is_extern(&self, name: &str) -> bool {
        self.externs.contains(name)
    }

    /// The item facts of a local definition.
    pub(crate) fn item(&self, def: &Def) -> Option<&ItemFact> {
        let Def::Item { module, name, kind } = def else {
            return None;
        };
        self.modules
            .get(module)?
            .items
            .iter()
            .find(|i| &i.name == name && i.kind == *kind)
    }
}

/// Whether an `impl Iterator` block's `next` calls what waits for another thread: a channel's
/// `recv()`, a `wait`, `wait_while` or `park` (sled's `Subscriber`, whose `next` waits for the
/// next event on a watched prefix). A test that drove such an iterator would wait until its
/// timeout, whatever the other thread does.
/// Whether `ty` has a lifetime argument (`HashMapRef<'_, K, V>`, `Ref<'a, T>`).
fn borrows(ty: &syn::Type) -> bool {
    let syn::Type::Path(p) = ty else { return false };
    p.path.segments.last().is_some_and(|last| {
        matches!(&last.arguments, syn::PathArguments::AngleBracketed(args)
            if args.args.iter().any(|a| matches!(a, syn::GenericArgument::Lifetime(_))))
    })
}

/// Whether an `impl Debug`'s `fmt` lists entries that a method of `self` iterates:
/// `.entries(self.iter())`, `.entries(self.map.keys())`.
fn lists_self(imp: &syn::ItemImpl) -> bool {
    struct Lists(bool);
    impl<'ast> syn::visit::Visit<'ast> for Lists {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if m.method == "entries" && m.args.iter().any(calls_on_self) {
                self.0 = true;
            }
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    fn calls_on_self(e: &syn::Expr) -> bool {
        match e {
            syn::Expr::MethodCall(m) => calls_on_self(&m.receiver),
            syn::Expr::Field(f) => calls_on_self(&f.base),
            syn::Expr::Path(p) => p.path.is_ident("self"),
            syn::Expr::Reference(r) => calls_on_self(&r.expr),
            syn::Expr::Paren(p) => calls_on_self(&p.expr),
            _ => false,
        }
    }
    let mut lists = Lists(false);
    visit_method(imp, "fmt", &mut lists);
    lists.0
}

/// Visits the body of the impl's method `name`.
fn visit_method<'ast>(
    imp: &'ast syn::ItemImpl,
    name: &str,
    visitor: &mut impl syn::visit::Visit<'ast>,
) {
    for item in &imp.items {
        if let syn::ImplItem::Fn(f) = item {
            if f.sig.ident == name {
                visitor.visit_block(&f.block);
            }
        }
    }
}

fn next_waits(imp: &syn::ItemImpl) -> bool {
    struct Waits(bool);
    impl<'ast> syn::visit::Visit<'ast> for Waits {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let name = m.method.to_string();
            if matches!(
                name.as_str(),
                "recv" | "wait" | "wait_while" | "blocking_recv"
            ) || (name == "park" && m.args.is_empty())
            {
                self.0 = true;
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*c.func {
                if p.path.segments.last().is_some_and(|s| s.ident == "park") {
                    self.0 = true;
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut waits = Waits(false);
    visit_method(imp, "next", &mut waits);
    waits.0
}

/// How the generic arguments of an impl's self type can be filled: each a parameter of the
/// impl with no bound (`impl<T> Tr for Arc<T>`), or not.
fn impl_args(self_ty: &syn::Type, generics: &syn::Generics) -> ImplArgs {
    let syn::Type::Path(p) = self_ty else {
        return ImplArgs::Bounded;
    };
    let Some(last) = p.path.segments.last() else {
        return ImplArgs::Bounded;
    };
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
        return ImplArgs::Free(0);
    };
    let bounded: Vec<String> = generics
        .where_clause
        .iter()
        .flat_map(|w| &w.predicates)
        .filter_map(|p| match p {
            syn::WherePredicate::Type(t) => {
                Some(quote::ToTokens::to_token_stream(&t.bounded_ty).to_string())
            }
            _ => None,
        })
        .collect();
    let free = |t: &syn::Type| {
        generics.type_params().any(|g| {
            let name = g.ident.to_string();
            let only_sized = g.bounds.iter().all(|b| {
                matches!(b, syn::TypeParamBound::Trait(t)
                    if matches!(t.modifier, syn::TraitBoundModifier::Maybe(_)))
            });
            only_sized
                && !bounded.contains(&name)
                && matches!(t, syn::Type::Path(p) if p.path.is_ident(&g.ident))
        })
    };
    let mut n = 0;
    for arg in &a.args {
        match arg {
            syn::GenericArgument::Type(t) if free(t) => n += 1,
            syn::GenericArgument::Lifetime(_) => {}
            _ => return ImplArgs::Bounded,
        }
    }
    ImplArgs::Free(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(edition: &str, files: &[(&[&str], &str)]) -> CrateIndex {
        let mut modules = Vec::new();
        for (module, text) in files {
            let file = syn::parse_file(text).expect("parses");
            let module: Vec<String> = module.iter().map(|s| s.to_string()).collect();
            module_facts(&file.items, &module, &mut modules);
        }
        CrateIndex::new("k", edition, modules, ["dep".to_string()])
    }

    /// Resolves `path` written in `module` and renders the public path of what it reaches.
    fn check(index: &CrateIndex, module: &[&str], path: &str, expect: Option<&str>) {
        let module: Vec<String> = module.iter().map(|s| s.to_string()).collect();
        let segs: Vec<String> = path.split("::").map(String::from).collect();
        let got = index
            .resolve(&module, &segs)
            .and_then(|(def, _)| index.public_path(&def));
        assert_eq!(got.as_deref(), expect, "{path} in {module:?}");
    }

    #[test]
    fn names_resolve_through_imports_globs_and_reexports() {
        let index = index(
            "2021",
            &[
                (
                    &[],
                    "mod imp; pub mod sync; pub use imp::Pool; pub use self::imp::key::*;",
                ),
                (
                    &["imp"],
                    "pub mod key; use super::sync::Lock as L; use dep::Thing; pub struct Pool; struct Hidden;",
                ),
                (&["imp", "key"], "pub struct Key; pub enum Mode { A }"),
                (&["sync"], "pub struct Lock; pub(crate) struct Inner;"),
            ],
        );
        check(&index, &["imp"], "Pool", Some("k::Pool"));
        check(&index, &["imp"], "key::Key", Some("k::Key"));
        check(&index, &["imp", "key"], "Mode", Some("k::Mode"));
        check(&index, &["imp"], "L", Some("k::sync::Lock"));
        check(&index, &["imp"], "Thing", Some("dep::Thing"));
        check(&index, &["imp"], "Hidden", None);
        check(&index, &["sync"], "Inner", None);
        check(&index, &[], "crate::sync::Lock", Some("k::sync::Lock"));
        check(&index, &["imp", "key"], "super::Pool", Some("k::Pool"));
        check(&index, &["sync"], "Vec", Some("std::vec::Vec"));
        check(&index, &["sync"], "u64", Some("u64"));
        check(
            &index,
            &["sync"],
            "std::time::Duration",
            Some("std::time::Duration"),
        );
        check(&index, &["sync"], "Nowhere", None);
    }

    #[test]
    fn edition_2015_uses_are_relative_to_the_crate_root() {
        let index = index(
            "2015",
            &[
                (&[], "extern crate dep as d; pub mod a; mod b;"),
                (&["a"], "use b::Thing; pub use d::Other; pub struct A;"),
                (&["b"], "pub struct Thing;"),
            ],
        );
        check(&index, &["a"], "Thing", None);
        check(&index, &["a"], "Other", Some("dep::Other"));
        check(&index, &["a"], "A", Some("k::a::A"));
    }

    #[test]
    fn associated_names_stop_at_the_type() {
        let index = index("2021", &[(&[], "pub struct S; pub enum E { V }")]);
        let (def, used) = index
            .resolve(&[], &["E".to_string(), "V".to_string()])
            .expect("resolves");
        assert_eq!(used, 1);
        assert_eq!(index.public_path(&def).as_deref(), Some("k::E"));
    }

    #[test]
    fn an_iterator_whose_next_receives_or_waits_is_told_apart() {
        let index = index(
            "2021",
            &[
                (
                    &[],
                    "pub mod sub; pub struct Keys(Vec<u8>); \
                     impl Iterator for Keys { type Item = u8; fn next(&mut self) -> Option<u8> { self.0.pop() } }",
                ),
                (
                    &["sub"],
                    "pub struct Subscriber { rx: Receiver<u8> } \
                     impl Iterator for Subscriber { type Item = u8; \
                         fn next(&mut self) -> Option<u8> { loop { return self.rx.recv().ok(); } } } \
                     pub struct Waiter(Arc<(Mutex<bool>, Condvar)>); \
                     impl Iterator for Waiter { type Item = (); fn next(&mut self) -> Option<()> { \
                         let g = self.0 .0.lock().unwrap(); let _g = self.0 .1.wait(g); Some(()) } } \
                     pub struct Polled { rx: Receiver<u8> } \
                     impl Iterator for Polled { type Item = u8; \
                         fn next(&mut self) -> Option<u8> { self.rx.try_recv().ok() } }",
                ),
            ],
        );
        assert!(!index.iterator_waits("Keys"));
        assert!(index.iterator_waits("Subscriber"));
        assert!(index.iterator_waits("Waiter"));
        assert!(!index.iterator_waits("Polled"));
        assert!(!index.iterator_waits("Nowhere"));
    }
}
