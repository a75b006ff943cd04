//! Sizes a type's code names: the integer constants of its module and impls
//! (`const BLOCK_CAP: usize = 31`) and the literal capacities its methods allocate with
//! (`Vec::with_capacity(16)`, `bounded(8)`). A test that repeats a call that many times (and
//! one more, one less) crosses the boundary a segmented or chunked type changes shape at.
//! A type parameter's default of the crate counts as the type's own code: the configuration
//! a type is built with by default (`Slab<T, C: Config = DefaultConfig>`, `impl Config for
//! DefaultConfig { const INITIAL_PAGE_SIZE: usize = 32; }`) is where its sizes are written.

use super::index::CrateIndex;
use super::render::idents;
use super::syntax::{Decls, TypeDecl};
use std::collections::BTreeSet;
use syn::visit::Visit;

/// Smallest and largest size kept: 0 and 1 are always tried, and a repeat count above a few
/// thousand calls makes one test slow.
const RANGE: std::ops::RangeInclusive<u64> = 2..=4096;
/// Most sizes kept per type, smallest first.
const MOST: usize = 8;

/// The sizes of `decl`'s module and impl blocks, sorted.
pub(crate) fn size_constants(decl: &TypeDecl, decls: &Decls, index: &CrateIndex) -> Vec<u64> {
    let mut found = Sizes::default();
    visit_own_items(decl, decls, index, &mut found);
    found.0.into_iter().take(MOST).collect()
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
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        syn::Expr::Paren(p) => int_value(&p.expr),
        syn::Expr::Group(g) => int_value(&g.expr),
        syn::Expr::Binary(b) => {
            let (l, r) = (int_value(&b.left)?, int_value(&b.right)?);
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
