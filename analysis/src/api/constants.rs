//! Sizes a type's code names: the integer constants of its module and impls
//! (`const BLOCK_CAP: usize = 31`) and the literal capacities its methods allocate with
//! (`Vec::with_capacity(16)`, `bounded(8)`). A test that repeats a call that many times (and
//! one more, one less) crosses the boundary a segmented or chunked type changes shape at.
//! A type parameter's default of the crate counts as the type's own code: the configuration
//! a type is built with by default (`Slab<T, C: Config = DefaultConfig>`, `impl Config for
//! DefaultConfig { const INITIAL_PAGE_SIZE: usize = 32; }`) is where its sizes are written.
//! So does the code of the crate's types its fields hold (`base: BaseCache`, whose `inner:
//! Arc<Inner>` does the work), and a `const` of the crate any of that code names, wherever it
//! is declared (mini-moka flushes its read log at `READ_LOG_FLUSH_POINT`, a constant of a
//! `constants` module, named in the code of a type its `Cache` holds two fields down).

use super::index::{CrateIndex, Def, ItemKind};
use super::render::idents;
use super::syntax::{Decls, TypeDecl};
use std::collections::BTreeSet;
use syn::visit::Visit;

/// Smallest and largest size kept: 0 and 1 are always tried, and a repeat count above a few
/// thousand calls makes one test slow.
const RANGE: std::ops::RangeInclusive<u64> = 2..=4096;
/// Most sizes kept per type, smallest first.
const MOST: usize = 8;

/// How many fields down the crate's types a type holds are followed, and how many at most.
const HELD_DEPTH: usize = 3;
const HELD_MOST: usize = 16;

/// The sizes of `decl`'s module and impl blocks and of the impl blocks of `held` (its
/// [`held_types`]), sorted.
pub(crate) fn size_constants(
    decl: &TypeDecl,
    held: &[&TypeDecl],
    decls: &Decls,
    index: &CrateIndex,
) -> Vec<u64> {
    let mut found = Sizes::default();
    visit_own_items(decl, decls, index, &mut found);
    for imp in held.iter().flat_map(|t| decls.impls_of(t)) {
        found.visit_item_impl(imp.item);
    }
    for (module, item) in code_of(decl, held, decls, index) {
        let mut named = Named {
            module,
            decls,
            index,
            found: &mut found.0,
        };
        named.visit_item_impl(item);
    }
    found.0.into_iter().take(MOST).collect()
}

/// The impl blocks whose code runs when `decl`'s methods do, as far as the syntax shows: its
/// own, those of the types its parameters default to, and those of `held`, the crate's types
/// its fields hold; each with its module.
fn code_of<'d, 'a>(
    decl: &TypeDecl,
    held: &[&TypeDecl],
    decls: &'d Decls<'a>,
    index: &CrateIndex,
) -> Vec<(&'d [String], &'a syn::ItemImpl)> {
    let defaults = default_types(decl, decls, index);
    std::iter::once(decl)
        .chain(defaults)
        .chain(held.iter().copied())
        .flat_map(|t| decls.impls_of(t))
        .map(|imp| (imp.module.as_slice(), imp.item))
        .collect()
}

/// The crate's types `decl`'s fields hold (`inner: Arc<Inner<K>>` → `Inner`), and theirs, up
/// to [`HELD_DEPTH`] fields down; not `decl` itself.
pub(crate) fn held_types<'d, 'a>(
    decl: &TypeDecl,
    decls: &'d Decls<'a>,
    index: &CrateIndex,
) -> Vec<&'d TypeDecl<'a>> {
    let same = |a: &TypeDecl, b: &TypeDecl| a.name == b.name && a.module == b.module;
    let mut found: Vec<&'d TypeDecl<'a>> = Vec::new();
    let mut level: Vec<&TypeDecl> = vec![decl];
    for _ in 0..HELD_DEPTH {
        let mut next = Vec::new();
        for t in level {
            for (_, ty) in &t.fields {
                let mut paths = TypePaths::default();
                paths.visit_type(ty);
                for path in paths.0 {
                    let Some(held) = super::decl_named(path, &t.module, decls, index) else {
                        continue;
                    };
                    if same(held, decl) || found.iter().any(|f| same(f, held)) {
                        continue;
                    }
                    if found.len() < HELD_MOST {
                        found.push(held);
                        next.push(held);
                    }
                }
            }
        }
        level = next;
    }
    found
}

/// Every path a type names (`Arc<Inner<K>>`: `Arc`, `Inner`, `K`).
#[derive(Default)]
struct TypePaths<'ast>(Vec<&'ast syn::Path>);

impl<'ast> Visit<'ast> for TypePaths<'ast> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.0.push(path);
        syn::visit::visit_path(self, path);
    }
}

/// The values of the crate's `const`s that code in `module` names (`READ_LOG_FLUSH_POINT`,
/// `constants::CAP`), evaluated where they are declared (`FLUSH * (REPEATS + 2)` too).
struct Named<'n, 'd, 'a> {
    module: &'n [String],
    decls: &'d Decls<'a>,
    index: &'n CrateIndex,
    found: &'n mut BTreeSet<u64>,
}

impl<'ast> Visit<'ast> for Named<'_, '_, '_> {
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if p.qself.is_none() {
            if let Some(n) = const_value(&p.path, self.module, self.decls, self.index, 0)
                .filter(|n| RANGE.contains(n))
            {
                self.found.insert(n);
            }
        }
        syn::visit::visit_expr_path(self, p);
    }
}

/// How many `const`s deep a value is followed (`A = B * 2`, `B = C + 1`, …).
const CONST_DEPTH: usize = 4;

/// The value of the crate's `const` that `path` names in `module`, if it is an integer
/// expression of literals and other such `const`s.
fn const_value(
    path: &syn::Path,
    module: &[String],
    decls: &Decls,
    index: &CrateIndex,
    depth: usize,
) -> Option<u64> {
    if depth > CONST_DEPTH {
        return None;
    }
    let (def, _) = index.resolve(module, &idents(path))?;
    let Def::Item {
        module,
        name,
        kind: ItemKind::Value,
        ..
    } = def
    else {
        return None;
    };
    let (declared_in, item) = decls
        .consts
        .iter()
        .find(|(m, c)| *m == module && c.ident == name)?;
    eval(&item.expr, &|p| {
        const_value(p, declared_in, decls, index, depth + 1)
    })
}

/// Visits the `const`s of `decl`'s module, its impl blocks and the impl blocks of the crate's
/// types its type parameters default to: the code a type's own values are read from.
fn visit_own_items<'ast>(
    decl: &TypeDecl,
    decls: &'ast Decls,
    index: &CrateIndex,
    visitor: &mut impl Visit<'ast>,
) {
    for (module, c) in &decls.consts {
        if *module == decl.module {
            visitor.visit_item_const(c);
        }
    }
    for imp in decls.impls_of(decl) {
        visitor.visit_item_impl(imp.item);
    }
    for default in default_types(decl, decls, index) {
        for imp in decls.impls_of(default) {
            visitor.visit_item_impl(imp.item);
        }
    }
}

/// The crate's types `decl`'s type parameters default to (`C = DefaultConfig`), resolved
/// from `decl`'s module as any path of its code is.
fn default_types<'d, 'a>(
    decl: &TypeDecl,
    decls: &'d Decls<'a>,
    index: &CrateIndex,
) -> Vec<&'d TypeDecl<'a>> {
    decl.generics
        .type_params()
        .filter_map(|p| match p.default.as_ref()? {
            syn::Type::Path(t) if t.qself.is_none() => {
                super::decl_named(&t.path, &decl.module, decls, index)
            }
            _ => None,
        })
        .collect()
}

/// Shortest and longest duration kept, in microseconds: zero is always tried, and a longer
/// wait makes one test slow wherever the clock is not covcon's.
const DURATION_RANGE_US: std::ops::RangeInclusive<u64> = 1..=1_000_000;

/// The durations `decl`'s module and impl blocks name (`const TICK: Duration =
/// Duration::from_millis(5)`, `Duration::from_micros(50)` in a method), in microseconds (a
/// nanosecond count rounded up), sorted. Timeouts and periods worth passing as arguments: a
/// type's own tick is where its timing changes.
pub(crate) fn duration_constants(decl: &TypeDecl, decls: &Decls, index: &CrateIndex) -> Vec<u64> {
    let mut found = Durations::default();
    visit_own_items(decl, decls, index, &mut found);
    found.0.into_iter().take(MOST).collect()
}

#[derive(Default)]
struct Durations(BTreeSet<u64>);

impl<'ast> Visit<'ast> for Durations {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let Some(us) = duration_us(call).filter(|us| DURATION_RANGE_US.contains(us)) {
            self.0.insert(us);
        }
        syn::visit::visit_expr_call(self, call);
    }
}

/// The microseconds of `Duration::from_secs(2)`, `from_millis`, `from_micros`, `from_nanos`
/// (rounded up) or `Duration::new(s, ns)` with literal arguments.
fn duration_us(call: &syn::ExprCall) -> Option<u64> {
    let syn::Expr::Path(p) = &*call.func else {
        return None;
    };
    let segments = idents(&p.path);
    let [.., ty, f] = segments.as_slice() else {
        return None;
    };
    if ty != "Duration" {
        return None;
    }
    let args: Vec<u64> = call.args.iter().map(int_value).collect::<Option<_>>()?;
    match (f.as_str(), args.as_slice()) {
        ("from_secs", [s]) => s.checked_mul(1_000_000),
        ("from_millis", [ms]) => ms.checked_mul(1_000),
        ("from_micros", [us]) => Some(*us),
        ("from_nanos", [ns]) => Some(ns.div_ceil(1_000)),
        ("new", [s, ns]) => s.checked_mul(1_000_000)?.checked_add(ns.div_ceil(1_000)),
        _ => None,
    }
}

#[derive(Default)]
struct Sizes(BTreeSet<u64>);

impl Sizes {
    fn add(&mut self, expr: &syn::Expr) {
        if let Some(n) = int_value(expr).filter(|n| RANGE.contains(n)) {
            self.0.insert(n);
        }
    }
}

impl<'ast> Visit<'ast> for Sizes {
    fn visit_item_const(&mut self, c: &'ast syn::ItemConst) {
        self.add(&c.expr);
    }

    fn visit_impl_item_const(&mut self, c: &'ast syn::ImplItemConst) {
        self.add(&c.expr);
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func {
            if p.path.segments.last().is_some_and(|s| is_sizing(&s.ident)) {
                call.args.iter().for_each(|a| self.add(a));
            }
        }
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        if is_sizing(&call.method) {
            call.args.iter().for_each(|a| self.add(a));
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_repeat(&mut self, r: &'ast syn::ExprRepeat) {
        self.add(&r.len);
        syn::visit::visit_expr_repeat(self, r);
    }
}

/// Calls whose integer argument is a size: `with_capacity`, `bounded`, `reserve`, `resize`.
fn is_sizing(name: &syn::Ident) -> bool {
    let name = name.to_string();
    name.contains("capacity") || matches!(name.as_str(), "bounded" | "reserve" | "resize")
}

/// The value of an integer expression made of literals: `31`, `1 << 5`, `32 - 1`, `(8 * 4)`.
fn int_value(expr: &syn::Expr) -> Option<u64> {
    eval(expr, &|_| None)
}

/// The value of an integer expression made of literals and of paths `named` gives a value.
fn eval(expr: &syn::Expr, named: &dyn Fn(&syn::Path) -> Option<u64>) -> Option<u64> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        syn::Expr::Paren(p) => eval(&p.expr, named),
        syn::Expr::Group(g) => eval(&g.expr, named),
        syn::Expr::Path(p) if p.qself.is_none() => named(&p.path),
        syn::Expr::Binary(b) => {
            let (l, r) = (eval(&b.left, named)?, eval(&b.right, named)?);
            match b.op {
                syn::BinOp::Add(_) => l.checked_add(r),
                syn::BinOp::Sub(_) => l.checked_sub(r),
                syn::BinOp::Mul(_) => l.checked_mul(r),
                syn::BinOp::Div(_) => l.checked_div(r),
                syn::BinOp::Shl(_) => u32::try_from(r).ok().and_then(|r| l.checked_shl(r)),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_expressions_of_literals_are_evaluated_and_others_are_not() {
        let cases = [
            ("31", Some(31)),
            ("1 << 5", Some(32)),
            ("(32 - 1)", Some(31)),
            ("8 * 4 / 2", Some(16)),
            ("0 - 1", None),
            ("N + 1", None),
            ("usize::MAX", None),
        ];
        for (text, want) in cases {
            let expr: syn::Expr = syn::parse_str(text).unwrap();
            assert_eq!(int_value(&expr), want, "{text}");
        }
    }

    #[test]
    fn durations_of_literals_are_read_in_microseconds_and_others_are_not() {
        let cases = [
            ("Duration::from_secs(2)", Some(2_000_000)),
            ("std::time::Duration::from_millis(5)", Some(5_000)),
            ("Duration::from_micros(1 << 4)", Some(16)),
            ("Duration::from_nanos(1_500)", Some(2)),
            ("Duration::new(1, 500)", Some(1_000_001)),
            ("Duration::from_millis(n)", None),
            ("Duration::from_secs_f64(0.5)", None),
            ("Instant::from_millis(5)", None),
        ];
        for (text, want) in cases {
            let syn::Expr::Call(call) = syn::parse_str::<syn::Expr>(text).unwrap() else {
                panic!("{text} is not a call");
            };
            assert_eq!(duration_us(&call), want, "{text}");
        }
    }
}
