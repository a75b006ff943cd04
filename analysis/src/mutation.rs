//! Where concurrency mutants can be made of a type's code (`cargo covcon mutants`), found in
//! the syntax of its methods and helpers (SplitRichTest's operators, rendered for Rust; see
//! `guards-and-locks.md` for the guard rules they lean on):
//!
//! - a *section*: `let g = self.m.lock().unwrap();` and the places after it, in the same
//!   block, between two statements that both use the guard, where it can be dropped and taken
//!   again (SPCR, split a critical region);
//! - a *release*: where the statements after a guard's last use start, when the guard
//!   lives on to the end of its block and one of them touches `self` (they can be moved out
//!   of the section by dropping the guard there);
//! - a *lock order*: two such `let`s one after the other, which can be swapped;
//! - a *late acquisition*: such a `let` and the statement after it, which does not use the
//!   guard but calls into `self`'s state: the lock can be taken after it (SHCR, the section
//!   shifted down);
//! - a *wait loop*: a `while` whose body waits on a condition variable, which can be made to
//!   run its body at most once (WTIS, `while` to `if`);
//! - a *retry*: a `compare_exchange` inside a loop, whose failure can be taken for a success
//!   (the retry loop done once);
//! - a *publication*: a write of shared state followed by an atomic store or read-modify-write
//!   to another atomic, which can be swapped (the flag stored before the data it publishes).
//!
//! Atomic read-modify-writes and notifies are synchronisation sites already
//! (`TypeModel::sync_sites`). Positions only: the oracle cuts the text out of the source.

use crate::access::AccessKind;
use crate::discover::FoundType;
use crate::model::{GuardLet, MutationSite, Span};
use proc_macro2::TokenTree;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::Visit;

/// The mutation sites of a type's functions, in source order; none in a function a macro
/// wrote (its spans point into the macro).
pub(crate) fn mutation_sites(ty: &FoundType) -> Vec<MutationSite> {
    let mut out = Vec::new();
    for f in ty.fns.iter().filter(|f| f.ref_self) {
        if ty.expanded.contains(&f.name) {
            continue;
        }
        let mut finder = Finder {
            method: f.key(),
            file: f.file,
            out: &mut out,
            loops: 0,
        };
        finder.visit_block(&f.item.block);
    }
    out
}

struct Finder<'o> {
    method: String,
    file: &'o std::path::Path,
    out: &'o mut Vec<MutationSite>,
    /// How many loops of the function the visit is inside.
    loops: usize,
}

impl Finder<'_> {
    /// Visits a loop's syntax (its condition too) as inside a loop.
    fn in_loop(&mut self, walk: impl FnOnce(&mut Self)) {
        self.loops += 1;
        walk(self);
        self.loops -= 1;
    }
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_block(&mut self, block: &'ast syn::Block) {
        let guards: Vec<Option<GuardLet>> = block
            .stmts
            .iter()
            .map(|s| guard_let(s, self.file))
            .collect();
        for (i, guard) in guards.iter().enumerate() {
            let Some(guard) = guard else { continue };
            let uses: Vec<bool> = block.stmts[i + 1..]
                .iter()
                .map(|s| mentions(s, &guard.name))
                .collect();
            // The guard's life in this block ends at an explicit `drop(g)`, and its name's at
            // a `let` that binds the name again (`let g = g.as_mut()?;`): after that, `g` is
            // something else.
            let ended = block.stmts[i + 1..]
                .iter()
                .position(|s| drops(s, &guard.name) || rebinds(s, &guard.name));
            let live = ended.unwrap_or(uses.len());
            // Statements after the last use, up to the block's end, that touch `self`.
            let last = uses.iter().rposition(|&u| u);
            if let (None, Some(last)) = (ended, last) {
                let tail = &block.stmts[i + 1 + last + 1..];
                if tail.iter().any(|s| mentions(s, "self")) {
                    self.out.push(MutationSite::ReleaseEarly {
                        method: self.method.clone(),
                        guard: guard.clone(),
                        at: pos(tail[0].span().start()),
                    });
                }
            }
            // Between statement j and j + 1 (after the `let`), both sides using the guard.
            let splits: Vec<(u32, u32)> = (0..live.saturating_sub(1))
                .filter(|&j| uses[j] && uses[j + 1..live].contains(&true))
                .map(|j| pos(block.stmts[i + 1 + j + 1].span().start()))
                .collect();
            let mut nested = Nested {
                name: &guard.name,
                out: Vec::new(),
            };
            // Only in the guard's last statement: the guard moved into a block's own binding
            // is gone after the block.
            if let Some(last) = uses[..live].iter().rposition(|&u| u) {
                nested.visit_stmt(&block.stmts[i + 1 + last]);
            }
            if !splits.is_empty() || !nested.out.is_empty() {
                self.out.push(MutationSite::Section {
                    method: self.method.clone(),
                    guard: guard.clone(),
                    splits,
                    nested: nested.out,
                });
            }
            if let (Some(None), Some(next)) = (guards.get(i + 1), block.stmts.get(i + 1)) {
                if let Some(site) = late_acquisition(guard, next, &self.method) {
                    self.out.push(site);
                }
            }
            if let Some(Some(next)) = guards.get(i + 1) {
                let init = &block.stmts[i + 1];
                if !mentions(init, &guard.name) && guard.name != next.name {
                    self.out.push(MutationSite::LockOrder {
                        method: self.method.clone(),
                        first: guard.clone(),
                        second: next.clone(),
                    });
                }
            }
        }
        for pair in block.stmts.windows(2) {
            if let Some(site) = publication(&pair[0], &pair[1], self.file, &self.method) {
                self.out.push(site);
            }
        }
        syn::visit::visit_block(self, block);
    }

    fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
        if waits(&w.body) {
            self.out.push(MutationSite::WaitLoop {
                method: self.method.clone(),
                at: span(self.file, w.while_token.span.start()),
                body_end: pos(w.body.brace_token.span.close().start()),
            });
        }
        self.in_loop(|f| syn::visit::visit_expr_while(f, w));
    }

    fn visit_expr_loop(&mut self, l: &'ast syn::ExprLoop) {
        self.in_loop(|f| syn::visit::visit_expr_loop(f, l));
    }

    fn visit_expr_for_loop(&mut self, l: &'ast syn::ExprForLoop) {
        self.in_loop(|f| syn::visit::visit_expr_for_loop(f, l));
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let cas = matches!(
            m.method.to_string().as_str(),
            "compare_exchange" | "compare_exchange_weak"
        );
        if cas && self.loops > 0 {
            self.out.push(MutationSite::RetryCas {
                method: self.method.clone(),
                at: span(self.file, m.receiver.span().start()),
                call_end: pos(m.span().end()),
            });
        }
        syn::visit::visit_expr_method_call(self, m);
    }

    // Closures and nested functions are other code.
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// The blocks of `if`s and `match`es that check something under guard `name` and act on it
/// under the guard again, in source order: where the guard can be dropped and taken again
/// between the check and the act. Closures, loops and nested functions are left out (a guard
/// moved in a loop's body is gone on its next round).
struct Nested<'n> {
    name: &'n str,
    out: Vec<(u32, u32)>,
}

impl Nested<'_> {
    fn block(&mut self, block: &syn::Block) {
        if mentions(block, self.name) {
            self.out.push(pos(block.brace_token.span.open().end()));
        }
    }
}

impl<'ast> Visit<'ast> for Nested<'_> {
    fn visit_expr_if(&mut self, e: &'ast syn::ExprIf) {
        if mentions(&e.cond, self.name) {
            self.block(&e.then_branch);
            if let Some((_, otherwise)) = &e.else_branch {
                if let syn::Expr::Block(b) = &**otherwise {
                    self.block(&b.block);
                }
            }
        }
        syn::visit::visit_expr_if(self, e);
    }

    fn visit_expr_match(&mut self, e: &'ast syn::ExprMatch) {
        if mentions(&e.expr, self.name) {
            for arm in &e.arms {
                if let syn::Expr::Block(b) = &*arm.body {
                    self.block(&b.block);
                }
            }
        }
        syn::visit::visit_expr_match(self, e);
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        // A `let` that binds the name again hides the guard from what follows.
        if !rebinds_pat(&local.pat, self.name) {
            syn::visit::visit_local(self, local);
        }
    }

    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_while(&mut self, _: &'ast syn::ExprWhile) {}
    fn visit_expr_for_loop(&mut self, _: &'ast syn::ExprForLoop) {}
    fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// The statement after guard `guard`'s `let`, when it can run before the lock is taken: it
/// does not name the guard, calls a method on a path of `self` (`self.n.load(..)`,
/// `self.other.lock()`, `self.helper()`), and is an expression statement or a `let` with an
/// initialiser and no `else`.
fn late_acquisition(guard: &GuardLet, next: &syn::Stmt, method: &str) -> Option<MutationSite> {
    if mentions(next, &guard.name) || !calls_on_self(next) {
        return None;
    }
    let init = match next {
        syn::Stmt::Local(local) => {
            let init = local.init.as_ref().filter(|i| i.diverge.is_none())?;
            Some((pos(init.expr.span().start()), pos(init.expr.span().end())))
        }
        syn::Stmt::Expr(_, Some(_)) => None,
        _ => return None,
    };
    Some(MutationSite::AcquireLate {
        method: method.to_string(),
        guard: guard.clone(),
        stmt: pos(next.span().start()),
        stmt_end: pos(next.span().end()),
        init,
    })
}

/// Whether some method call in `stmt` (closures left out) has a receiver rooted at `self`.
fn calls_on_self(stmt: &syn::Stmt) -> bool {
    struct Calls(bool);
    impl<'ast> Visit<'ast> for Calls {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            self.0 |= from_self(&m.receiver);
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    /// `self`, or a field, element or call's answer of something that is.
    fn from_self(e: &syn::Expr) -> bool {
        match e {
            syn::Expr::Path(p) => p.path.is_ident("self"),
            syn::Expr::Field(f) => from_self(&f.base),
            syn::Expr::Index(i) => from_self(&i.expr),
            syn::Expr::MethodCall(m) => from_self(&m.receiver),
            syn::Expr::Paren(p) => from_self(&p.expr),
            _ => false,
        }
    }
    let mut calls = Calls(false);
    calls.visit_stmt(stmt);
    calls.0
}

/// An atomic write of a value with an ordering (`store(v, o)`, `fetch_add(v, o)`,
/// `swap(v, o)`): two arguments, and a name the access analysis takes for a write.
fn atomic_write(m: &syn::ExprMethodCall) -> bool {
    m.args.len() == 2
        && AccessKind::of_atomic(&m.method.to_string()).is_some_and(AccessKind::writes)
}

/// `first; second;` where `first` writes shared state and `second` publishes it with an
/// atomic write (two arguments, value and ordering; its answer unused) to a receiver `first`
/// does not write.
fn publication(
    first: &syn::Stmt,
    second: &syn::Stmt,
    file: &std::path::Path,
    method: &str,
) -> Option<MutationSite> {
    let syn::Stmt::Expr(syn::Expr::MethodCall(publish), Some(semi)) = second else {
        return None;
    };
    if !atomic_write(publish) {
        return None;
    }
    let syn::Stmt::Expr(write, Some(_)) = first else {
        return None;
    };
    let written = written_place(write)?;
    let receiver = publish.receiver.to_token_stream().to_string();
    if written.as_deref() == Some(receiver.as_str()) {
        return None;
    }
    Some(MutationSite::Publish {
        method: method.to_string(),
        write: span(file, first.span().start()),
        write_end: pos(first.span().end()),
        publish: pos(publish.receiver.span().start()),
        receiver_end: pos(publish.receiver.span().end()),
        call_end: pos(publish.span().end()),
        publish_end: pos(semi.span.end()),
    })
}

/// Whether an expression statement writes shared state, and the receiver it writes (as
/// tokens) when that is an atomic's: `x.store(v, o)`, `x.fetch_add(1, o)`, a write through a
/// pointer (`p.write(v)`, `ptr::write(p, v)`, `*cell.get() = v`), alone, as the one
/// statement of a block or an `unsafe` block, or as the body of a method's one closure
/// argument (`cell.with_mut(|p| unsafe { p.write(v) })`). `None` for anything else.
fn written_place(e: &syn::Expr) -> Option<Option<String>> {
    match e {
        syn::Expr::MethodCall(m) => {
            let name = m.method.to_string();
            if atomic_write(m) {
                Some(Some(m.receiver.to_token_stream().to_string()))
            } else if matches!(name.as_str(), "write" | "write_volatile") && m.args.len() == 1 {
                Some(None)
            } else if let (1, Some(syn::Expr::Closure(c))) = (m.args.len(), m.args.first()) {
                // A cell written through a closure (loom's and concurrent-queue's
                // `slot.value.with_mut(|p| unsafe { p.write(v) })`).
                written_place(&c.body).map(|_| None)
            } else {
                None
            }
        }
        syn::Expr::Block(syn::ExprBlock { block, .. })
        | syn::Expr::Unsafe(syn::ExprUnsafe { block, .. }) => match block.stmts.as_slice() {
            [syn::Stmt::Expr(inner, _)] => written_place(inner),
            _ => None,
        },
        syn::Expr::Call(c) => {
            let syn::Expr::Path(p) = &*c.func else {
                return None;
            };
            let last = p.path.segments.last()?.ident.to_string();
            (p.path.segments.len() > 1 && matches!(last.as_str(), "write" | "write_volatile"))
                .then_some(None)
        }
        syn::Expr::Assign(a) => {
            matches!(&*a.left, syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)))
                .then_some(None)
        }
        _ => None,
    }
}

/// `let g = <..>.lock()<..>;` with a plain binding (`g`, `mut g`) and a lock acquisition on a
/// field of `self` at the start of its initialiser's chain.
fn guard_let(stmt: &syn::Stmt, file: &std::path::Path) -> Option<GuardLet> {
    let syn::Stmt::Local(local) = stmt else {
        return None;
    };
    let syn::Pat::Ident(binding) = &local.pat else {
        return None;
    };
    if binding.by_ref.is_some() || binding.subpat.is_some() {
        return None;
    }
    let init = local.init.as_ref().filter(|i| i.diverge.is_none())?;
    let call = acquisition(&init.expr)?;
    Some(GuardLet {
        name: binding.ident.to_string(),
        stmt: span(file, local.span().start()),
        stmt_end: pos(local.span().end()),
        pattern: pos(binding.span().start()),
        pattern_end: pos(binding.span().end()),
        init: pos(init.expr.span().start()),
        init_end: pos(init.expr.span().end()),
        receiver: pos(call.receiver.span().start()),
        receiver_end: pos(call.receiver.span().end()),
        call_end: pos(call.span().end()),
        acquire: call.method.to_string(),
    })
}

/// The blocking lock acquisition a guard's initialiser starts from: `self.m.lock()` in
/// `self.m.lock().unwrap()`, `self.m.write().expect("..")`.
fn acquisition(e: &syn::Expr) -> Option<&syn::ExprMethodCall> {
    let syn::Expr::MethodCall(m) = e else {
        return None;
    };
    let name = m.method.to_string();
    let blocking = m.args.is_empty()
        && matches!(
            name.as_str(),
            "lock" | "read" | "write" | "read_recursive" | "upgradable_read"
        );
    if blocking && rooted_at_self(&m.receiver) {
        return Some(m);
    }
    if matches!(
        name.as_str(),
        "unwrap" | "expect" | "unwrap_or_else" | "unwrap_or_default"
    ) {
        return acquisition(&m.receiver);
    }
    None
}

/// `self.a.b`: a field path of `self`.
fn rooted_at_self(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Field(f) => match &*f.base {
            syn::Expr::Path(p) => p.path.is_ident("self"),
            other => rooted_at_self(other),
        },
        _ => false,
    }
}

/// Whether a statement (or any syntax) names `name` anywhere in its tokens.
fn mentions(stmt: &impl ToTokens, name: &str) -> bool {
    fn walk(ts: proc_macro2::TokenStream, name: &str) -> bool {
        ts.into_iter().any(|t| match t {
            TokenTree::Ident(i) => i == name,
            TokenTree::Group(g) => walk(g.stream(), name),
            _ => false,
        })
    }
    walk(stmt.to_token_stream(), name)
}

/// `let <pattern naming name> = ..;`
fn rebinds(stmt: &syn::Stmt, name: &str) -> bool {
    let syn::Stmt::Local(local) = stmt else {
        return false;
    };
    rebinds_pat(&local.pat, name)
}

fn rebinds_pat(pat: &syn::Pat, name: &str) -> bool {
    struct Binds<'n>(&'n str, bool);
    impl<'ast> Visit<'ast> for Binds<'_> {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.1 |= p.ident == self.0;
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut binds = Binds(name, false);
    binds.visit_pat(pat);
    binds.1
}

/// `drop(name);`
fn drops(stmt: &syn::Stmt, name: &str) -> bool {
    let syn::Stmt::Expr(syn::Expr::Call(c), _) = stmt else {
        return false;
    };
    let callee = matches!(&*c.func, syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "drop"));
    callee && c.args.len() == 1 && matches!(&c.args[0], syn::Expr::Path(p) if p.path.is_ident(name))
}

/// Whether a block waits on a condition variable (`wait`, `wait_timeout`, … on anything),
/// closures left out.
fn waits(block: &syn::Block) -> bool {
    struct Waits(bool);
    impl<'ast> Visit<'ast> for Waits {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let name = m.method.to_string();
            self.0 |= !m.args.is_empty() && (name == "wait" || name.starts_with("wait_"));
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    }
    let mut w = Waits(false);
    w.visit_block(block);
    w.0
}

fn pos(at: proc_macro2::LineColumn) -> (u32, u32) {
    (at.line as u32, at.column as u32)
}

fn span(file: &std::path::Path, at: proc_macro2::LineColumn) -> Span {
    Span {
        file: file.to_path_buf(),
        line: at.line as u32,
        column: at.column as u32,
    }
}
