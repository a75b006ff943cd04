//! Walking a method body: blocks, statements and expressions in evaluation order, with
//! temporaries and tail expressions where Rust drops them.

use super::*;

impl Walker<'_> {
    pub(super) fn fn_body(&mut self, block: &syn::Block) {
        self.push_scope(true);
        for (name, id) in std::mem::take(&mut self.param_guards) {
            self.bind(name, Binding::Guard(id));
        }
        let v = self.block_inner(block, true);
        let tail_is_path = matches!(block.stmts.last(), Some(syn::Stmt::Expr(e, None)) if matches!(strip_parens(e), syn::Expr::Path(_)));
        let guard = if tail_is_path {
            v.guard()
        } else {
            v.fresh_guard
        };
        if let Some(id) = guard {
            let s = &self.out.sections[id];
            self.out.returns_guard = Some((s.lock.clone(), s.mode));
        } else if let Some(Place {
            base: Base::Field { instance, path },
            proj,
        }) = &v.place
        {
            if instance == "self" && proj.is_empty() && !path.is_empty() {
                self.out.returns_field = Some(path.clone());
            }
        }
        self.pop_scope();
    }

    /// A block expression: its own scope for `let`s; the tail's temporaries belong to the
    /// enclosing temporary scope (2021) or die at the block's end (2024).
    pub(super) fn block(&mut self, block: &syn::Block) -> Val {
        self.push_scope(false);
        let v = self.block_inner(block, false);
        self.pop_scope();
        v
    }

    pub(super) fn block_inner(&mut self, block: &syn::Block, fn_level: bool) -> Val {
        let n = block.stmts.len();
        let mut result = Val::default();
        for (i, stmt) in block.stmts.iter().enumerate() {
            let saved = self.cur_stmt;
            self.cur_stmt = pos_of(stmt);
            self.out
                .held_at
                .entry(self.cur_stmt)
                .or_insert_with(|| self.live.clone());
            let is_tail = i + 1 == n && matches!(stmt, syn::Stmt::Expr(_, None));
            if is_tail {
                let syn::Stmt::Expr(e, None) = stmt else {
                    unreachable!()
                };
                if self.edition2024 && !fn_level {
                    self.push_scope(true);
                    result = self.expr(e);
                    if let Some(g) = result.fresh_guard {
                        // A guard that is the block's value moves out to the enclosing scope.
                        self.take_temp(g);
                        self.register_temp(g);
                    }
                    self.pop_scope();
                } else {
                    result = self.expr(e);
                    // A tail naming a guard variable hands the guard out; anything else that
                    // denotes a place reads it.
                    let hands_out_guard = matches!(strip_parens(e), syn::Expr::Path(_))
                        && matches!(
                            result.place,
                            Some(Place {
                                base: Base::Guard(_),
                                ..
                            })
                        );
                    if let Some(p) = &result.place {
                        if result.fresh_guard.is_none() && !hands_out_guard {
                            self.rvalue_place(p.clone(), line_of(e));
                        }
                    }
                }
            } else {
                self.stmt(stmt);
            }
            self.cur_stmt = saved;
        }
        result
    }

    pub(super) fn stmt(&mut self, stmt: &syn::Stmt) {
        match stmt {
            syn::Stmt::Local(local) => self.local(local),
            syn::Stmt::Expr(e, _) => {
                self.push_scope(true);
                self.rvalue(e);
                self.pop_scope();
            }
            syn::Stmt::Macro(m) => {
                self.push_scope(true);
                self.mac(&m.mac);
                self.pop_scope();
            }
            syn::Stmt::Item(_) => {}
        }
    }

    pub(super) fn local(&mut self, local: &syn::Local) {
        self.push_scope(true);
        let mut binding = None;
        if let Some(init) = &local.init {
            let v = self.expr(&init.expr);
            binding = self.binding_for(&local.pat, &init.expr, &v);
            if let Some((_, diverge)) = &init.diverge {
                let before = self.save();
                self.rvalue(diverge);
                let end = self.save();
                self.join(&before, vec![end]);
                self.diverged = false;
            }
        }
        // Take ownership out of the statement's temporaries before they die.
        let mut names = Vec::new();
        pat_names(&local.pat, &mut names);
        match binding {
            Some(Owned::Guard(id)) => {
                self.take_temp(id);
                self.pop_scope();
                let name = names.first().cloned().unwrap_or_default();
                self.bind(name, Binding::Guard(id));
                for other in names.iter().skip(1) {
                    self.bind(other.clone(), Binding::Opaque);
                }
            }
            Some(Owned::Extended(id, name)) => {
                self.take_temp(id);
                self.pop_scope();
                if let Some(scope) = self.scopes.last_mut() {
                    scope.extended.push(id);
                }
                if let Some(name) = name {
                    self.bind(
                        name,
                        Binding::Alias(Place {
                            base: Base::Guard(id),
                            proj: vec![],
                        }),
                    );
                }
            }
            Some(Owned::Alias(place)) => {
                self.pop_scope();
                if let Some(name) = names.first() {
                    self.bind(name.clone(), Binding::Alias(place));
                }
            }
            None => {
                self.pop_scope();
                for n in names {
                    self.bind(n, Binding::Opaque);
                }
            }
        }
    }

    /// Evaluates an expression used as a value: a place it denotes is read.
    pub(super) fn rvalue(&mut self, e: &syn::Expr) -> Val {
        let v = self.expr(e);
        if v.fresh_guard.is_none() {
            if let Some(p) = &v.place {
                self.rvalue_place(p.clone(), line_of(e));
            }
        }
        v
    }

    pub(super) fn rvalue_place(&mut self, p: Place, line: u32) {
        if matches!(p.base, Base::Guard(_))
            || !p.proj.is_empty()
            || matches!(&p.base, Base::Field { path, .. } if !path.is_empty())
        {
            self.record(&p, AccessKind::Read, "read", line);
        }
    }

    pub(super) fn expr(&mut self, e: &syn::Expr) -> Val {
        self.depth += 1;
        let v = if self.depth > 200 {
            Val::default()
        } else {
            self.expr_inner(e)
        };
        self.depth -= 1;
        v
    }

    pub(super) fn expr_inner(&mut self, e: &syn::Expr) -> Val {
        use syn::Expr;
        match e {
            Expr::Path(p) => self.path_expr(p),
            Expr::Field(f) => self.field_expr(f),
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Unary(u) => match u.op {
                // `*guard` is the data, not the guard: a `let` of it binds a copy (E3).
                syn::UnOp::Deref(_) => Val {
                    place: self.expr(&u.expr).place,
                    fresh_guard: None,
                },
                _ => {
                    self.rvalue(&u.expr);
                    Val::default()
                }
            },
            Expr::Reference(r) => self.reference_expr(r, e),
            Expr::Index(i) => self.index_expr(i),
            Expr::MethodCall(m) => self.method_call(m),
            Expr::Call(c) => self.call(c),
            Expr::Try(t) => {
                let v = self.expr(&t.expr);
                Val {
                    place: v.place,
                    fresh_guard: v.fresh_guard,
                }
            }
            Expr::Await(a) => {
                let v = self.expr(&a.base);
                Val {
                    place: v.place,
                    fresh_guard: v.fresh_guard,
                }
            }
            Expr::Assign(a) => self.assign_expr(a, e),
            Expr::Binary(b) => self.binary_expr(b, e),
            Expr::Block(b) => self.block(&b.block),
            Expr::Unsafe(u) => self.block(&u.block),
            Expr::Const(c) => self.block(&c.block),
            Expr::If(i) => self.if_expr(i),
            Expr::Match(m) => self.match_expr(m),
            Expr::While(w) => {
                self.while_expr(w);
                Val::default()
            }
            Expr::ForLoop(f) => self.for_expr(f),
            Expr::Loop(l) => {
                self.loop_body(&l.body);
                self.diverged = false;
                Val::default()
            }
            Expr::Closure(c) => self.closure_expr(c),
            Expr::Return(r) => self.return_expr(r),
            Expr::Break(b) => {
                if let Some(v) = &b.expr {
                    self.rvalue(v);
                }
                self.diverged = true;
                Val::default()
            }
            Expr::Continue(_) => {
                self.diverged = true;
                Val::default()
            }
            Expr::Let(l) => {
                // Only reached for `let` chains; the caller handles plain `if let`.
                self.expr(&l.expr);
                Val::default()
            }
            Expr::Macro(m) => {
                self.mac(&m.mac);
                Val::default()
            }
            Expr::Tuple(t) => {
                for e in &t.elems {
                    self.rvalue(e);
                }
                Val::default()
            }
            Expr::Array(a) => {
                for e in &a.elems {
                    self.rvalue(e);
                }
                Val::default()
            }
            Expr::Struct(s) => {
                for f in &s.fields {
                    self.rvalue(&f.expr);
                }
                if let Some(r) = &s.rest {
                    self.rvalue(r);
                }
                Val::default()
            }
            Expr::Cast(c) => {
                self.rvalue(&c.expr);
                Val::default()
            }
            Expr::Range(r) => {
                if let Some(s) = &r.start {
                    self.rvalue(s);
                }
                if let Some(s) = &r.end {
                    self.rvalue(s);
                }
                Val::default()
            }
            Expr::Repeat(r) => {
                self.rvalue(&r.expr);
                Val::default()
            }
            Expr::Async(_) => Val::default(),
            _ => Val::default(),
        }
    }

    fn path_expr(&mut self, p: &syn::ExprPath) -> Val {
        // `CACHE`, `self::CACHE`, `crate::CACHE`: a global lock.
        if let Some(last) = p.path.segments.last() {
            let n = last.ident.to_string();
            if self.ty.statics.contains(&n) && self.lookup(&n).is_none() {
                return Val::place(Place {
                    base: Base::Field {
                        instance: "static".into(),
                        path: n,
                    },
                    proj: vec![],
                });
            }
        }
        let Some(id) = p.path.get_ident() else {
            return Val::default();
        };
        let name = id.to_string();
        if name == "self" {
            return Val::place(Place {
                base: Base::Field {
                    instance: "self".into(),
                    path: self.prefix.clone(),
                },
                proj: vec![],
            });
        }
        match self.lookup(&name) {
            Some(Binding::Guard(g)) => Val::place(Place {
                base: Base::Guard(*g),
                proj: vec![],
            }),
            Some(Binding::Alias(p)) => Val::place(p.clone()),
            Some(Binding::Opaque) => Val::default(),
            None if self.instances.contains(&name) => Val::place(Place {
                base: Base::Field {
                    instance: name,
                    path: String::new(),
                },
                proj: vec![],
            }),
            None => Val::default(),
        }
    }

    fn field_expr(&mut self, f: &syn::ExprField) -> Val {
        let v = self.expr(&f.base);
        let member = match &f.member {
            syn::Member::Named(i) => i.to_string(),
            syn::Member::Unnamed(i) => i.index.to_string(),
        };
        match v.place {
            Some(Place {
                base: Base::Field { instance, path },
                proj,
            }) if proj.is_empty() => {
                let path = if path.is_empty() {
                    member
                } else {
                    format!("{path}.{member}")
                };
                Val::place(Place {
                    base: Base::Field { instance, path },
                    proj,
                })
            }
            Some(mut p) => {
                p.proj.push(member);
                Val::place(p)
            }
            None => Val::default(),
        }
    }

    fn reference_expr(&mut self, r: &syn::ExprReference, e: &syn::Expr) -> Val {
        let v = self.expr(&r.expr);
        if let Some(p) = &v.place {
            if r.mutability.is_some() {
                self.record(p, AccessKind::Write, "&mut borrow", line_of(e));
                return Val::default();
            }
        }
        Val {
            place: v.place,
            fresh_guard: None,
        }
    }

    fn index_expr(&mut self, i: &syn::ExprIndex) -> Val {
        let v = self.expr(&i.expr);
        self.rvalue(&i.index);
        match v.place {
            Some(mut p) if matches!(p.base, Base::Guard(_)) => {
                p.proj.push("[..]".into());
                Val::place(p)
            }
            other => Val {
                place: other,
                fresh_guard: None,
            },
        }
    }

    fn assign_expr(&mut self, a: &syn::ExprAssign, e: &syn::Expr) -> Val {
        // The value is evaluated first, then the place (R9).
        let rv = self.rvalue(&a.right);
        if let syn::Expr::Path(p) = strip_parens(&a.left) {
            if let (Some(name), Some(new)) =
                (p.path.get_ident().map(|i| i.to_string()), rv.fresh_guard)
            {
                // `g = cv.wait(g)` re-binds; `g = m.lock()` acquires before the old
                // guard is dropped (R9), then replaces it.
                if let Some(old) = self.guard_var(&name) {
                    self.release(old);
                }
                self.take_temp(new);
                self.rebind(&name, new);
                return Val::default();
            }
        }
        let lv = self.expr(&a.left);
        if let Some(p) = lv.place {
            self.record(&p, AccessKind::Write, "assignment", line_of(e));
        }
        Val::default()
    }

    fn binary_expr(&mut self, b: &syn::ExprBinary, e: &syn::Expr) -> Val {
        use syn::BinOp::*;
        match b.op {
            And(_) | Or(_) => {
                self.lazy_operand(&b.left);
                self.lazy_operand(&b.right);
            }
            AddAssign(_) | SubAssign(_) | MulAssign(_) | DivAssign(_) | RemAssign(_)
            | BitXorAssign(_) | BitAndAssign(_) | BitOrAssign(_) | ShlAssign(_) | ShrAssign(_) => {
                self.rvalue(&b.right);
                let lv = self.expr(&b.left);
                if let Some(p) = lv.place {
                    self.record(&p, AccessKind::Update, "compound assignment", line_of(e));
                }
            }
            _ => {
                self.rvalue(&b.left);
                self.rvalue(&b.right);
            }
        }
        Val::default()
    }

    fn for_expr(&mut self, f: &syn::ExprForLoop) -> Val {
        // The iterator expression's temporaries live through the whole loop (R4).
        let it = self.expr(&f.expr);
        self.push_scope(false);
        let mut names = Vec::new();
        pat_names(&f.pat, &mut names);
        match it.place {
            Some(p)
                if matches!(&p.base, Base::Field { path, .. } if self.is_lock_like(path))
                    && names.len() == 1 =>
            {
                self.bind(names[0].clone(), Binding::Alias(p));
            }
            other => {
                if let Some(p) = other {
                    if it.fresh_guard.is_none() {
                        self.rvalue_place(p, line_of(&f.expr));
                    }
                }
                for n in names {
                    self.bind(n, Binding::Opaque);
                }
            }
        }
        self.loop_body(&f.body);
        self.pop_scope();
        Val::default()
    }

    fn closure_expr(&mut self, c: &syn::ExprClosure) -> Val {
        let param = self.closure_param.take();
        self.push_scope(false);
        for (i, input) in c.inputs.iter().enumerate() {
            let mut names = Vec::new();
            pat_names(input, &mut names);
            for n in names {
                match (&param, i) {
                    (Some(p), 0) => self.bind(n, Binding::Alias(p.clone())),
                    _ => self.bind(n, Binding::Opaque),
                }
            }
        }
        self.closure_body(&c.body);
        self.pop_scope();
        Val::default()
    }

    fn return_expr(&mut self, r: &syn::ExprReturn) -> Val {
        if let Some(v) = &r.expr {
            let val = self.expr(v);
            match val.guard() {
                Some(id) => {
                    let s = &self.out.sections[id];
                    self.out.returns_guard = Some((s.lock.clone(), s.mode));
                }
                None => {
                    if let Some(p) = val.place {
                        self.rvalue_place(p, line_of(v));
                    }
                }
            }
        }
        self.diverged = true;
        Val::default()
    }

    pub(super) fn lazy_operand(&mut self, e: &syn::Expr) {
        if let syn::Expr::Let(l) = e {
            // `let` operands of a chain are not temporary scopes.
            self.expr(&l.expr);
            return;
        }
        self.push_scope(true);
        self.rvalue(e);
        self.pop_scope();
    }

    pub(super) fn loop_body(&mut self, body: &syn::Block) {
        let before = self.save();
        self.loop_depth += 1;
        self.push_scope(true);
        self.block(body);
        self.pop_scope();
        self.loop_depth -= 1;
        let end = self.save();
        self.join(&before, vec![before.clone(), end]);
    }

    pub(super) fn closure_body(&mut self, body: &syn::Expr) {
        let before = self.save();
        self.loop_depth += 1;
        self.push_scope(true);
        self.rvalue(body);
        self.pop_scope();
        self.loop_depth -= 1;
        self.restore(State {
            diverged: before.diverged,
            ..self.save()
        });
        self.live = before.live;
    }

    pub(super) fn if_expr(&mut self, i: &syn::ExprIf) -> Val {
        let mut ends = Vec::new();
        let start;
        if let syn::Expr::Let(l) = &*i.cond {
            // 2021: the scrutinee's temporaries belong to the enclosing scope and live through
            // both branches (R6). 2024: they end before `else`.
            if self.edition2024 {
                self.push_scope(true);
            }
            let v = self.expr(&l.expr);
            start = self.save();
            self.push_scope(false);
            self.bind_pattern(&l.pat, &v);
            self.block(&i.then_branch);
            self.pop_scope();
            if self.edition2024 {
                self.pop_scope();
            }
            ends.push(self.save());
            self.restore(start.clone());
            if self.edition2024 {
                self.pop_scope();
            }
        } else {
            if matches!(&*i.cond, syn::Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_)) && has_let(&i.cond))
            {
                self.rvalue(&i.cond);
            } else {
                self.push_scope(true);
                self.rvalue(&i.cond);
                self.pop_scope();
            }
            start = self.save();
            self.push_scope(true);
            self.block(&i.then_branch);
            self.pop_scope();
            ends.push(self.save());
            self.restore(start.clone());
        }
        match &i.else_branch {
            Some((_, e)) => {
                self.push_scope(true);
                self.rvalue(e);
                self.pop_scope();
                ends.push(self.save());
            }
            None => ends.push(self.save()),
        }
        let base = self.save();
        self.join(&base, ends);
        Val::default()
    }

    pub(super) fn match_expr(&mut self, m: &syn::ExprMatch) -> Val {
        // The scrutinee is not a temporary scope: its guards live through every arm (R4).
        let v = self.expr(&m.expr);
        let start = self.save();
        let mut ends = Vec::new();
        for arm in &m.arms {
            self.restore(start.clone());
            self.push_scope(true);
            self.bind_pattern(&arm.pat, &v);
            if let Some((_, g)) = &arm.guard {
                self.push_scope(true);
                self.rvalue(g);
                self.pop_scope();
            }
            self.rvalue(&arm.body);
            self.pop_scope();
            ends.push(self.save());
        }
        self.restore(start.clone());
        if ends.is_empty() {
            return Val::default();
        }
        self.join(&start, ends);
        Val::default()
    }

    pub(super) fn while_expr(&mut self, w: &syn::ExprWhile) {
        let before = self.save();
        self.loop_depth += 1;
        if let syn::Expr::Let(l) = &*w.cond {
            // Condition and body form one temporary scope per iteration (R5).
            self.push_scope(true);
            let v = self.expr(&l.expr);
            self.push_scope(false);
            self.bind_pattern(&l.pat, &v);
            self.block(&w.body);
            self.pop_scope();
            self.pop_scope();
        } else {
            self.push_scope(true);
            self.rvalue(&w.cond);
            self.pop_scope();
            self.push_scope(true);
            self.block(&w.body);
            self.pop_scope();
        }
        self.loop_depth -= 1;
        let end = self.save();
        self.join(&before, vec![before.clone(), end]);
    }

    /// Binds the names of a pattern matched against `v` (`Ok(g)`, `Some(mut g)`) (R11).
    pub(super) fn bind_pattern(&mut self, pat: &syn::Pat, v: &Val) {
        let mut names = Vec::new();
        pat_names(pat, &mut names);
        if let Some(g) = v.fresh_guard {
            if binds_by_value(pat) && names.len() == 1 {
                // The guard moves into the binding, which lives in this arm or block.
                self.take_temp(g);
                self.bind(names[0].clone(), Binding::Guard(g));
                return;
            }
        }
        // A variant of an enum field the analysis follows (`Inner::Single(q)` matched
        // against `&self.0`): `q` names the variant's field `0.Single.0`.
        let mut aliased = Vec::new();
        if let Some(Place {
            base: Base::Field { instance, path },
            proj,
        }) = &v.place
        {
            if proj.is_empty() {
                let mut found = Vec::new();
                variant_bindings(pat, path, &mut found);
                for (name, field) in found {
                    if self.field_kind(&field).is_some() {
                        let place = Place {
                            base: Base::Field {
                                instance: instance.clone(),
                                path: field,
                            },
                            proj: vec![],
                        };
                        aliased.push(name.clone());
                        self.bind(name, Binding::Alias(place));
                    }
                }
            }
        }
        for n in names {
            if !aliased.contains(&n) {
                self.bind(n, Binding::Opaque);
            }
        }
    }

    // ----- calls ---------------------------------------------------------------------------
}

/// The names a variant pattern binds to the variant's fields of the enum at field path
/// `path`: `Inner::Single(q)` binds `q` to `{path}.Single.0`, `Kind::A { x, y: z }` binds `x`
/// to `{path}.A.x` and `z` to `{path}.A.y`; a reference or parenthesised pattern is looked
/// through. Only a plain name binds (a nested pattern is not followed).
fn variant_bindings(pat: &syn::Pat, path: &str, out: &mut Vec<(String, String)>) {
    let plain = |p: &syn::Pat| match p {
        syn::Pat::Ident(i) if i.subpat.is_none() => Some(i.ident.to_string()),
        _ => None,
    };
    match pat {
        syn::Pat::Reference(r) => variant_bindings(&r.pat, path, out),
        syn::Pat::Paren(p) => variant_bindings(&p.pat, path, out),
        syn::Pat::TupleStruct(t) => {
            let Some(variant) = t.path.segments.last() else {
                return;
            };
            for (i, elem) in t.elems.iter().enumerate() {
                if let Some(name) = plain(elem) {
                    out.push((name, format!("{path}.{}.{i}", variant.ident)));
                }
            }
        }
        syn::Pat::Struct(s) => {
            let Some(variant) = s.path.segments.last() else {
                return;
            };
            for f in &s.fields {
                if let (syn::Member::Named(member), Some(name)) = (&f.member, plain(&f.pat)) {
                    out.push((name, format!("{path}.{}.{member}", variant.ident)));
                }
            }
        }
        _ => {}
    }
}

pub(super) fn strip_parens(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_parens(&p.expr),
        syn::Expr::Group(g) => strip_parens(&g.expr),
        other => other,
    }
}

pub(super) fn is_clone_like(e: &syn::Expr) -> bool {
    matches!(strip_parens(e), syn::Expr::MethodCall(m) if m.method == "clone")
        || matches!(strip_parens(e), syn::Expr::Call(c) if matches!(&*c.func, syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "clone")))
}

pub(super) fn has_let(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Let(_) => true,
        syn::Expr::Binary(b) => has_let(&b.left) || has_let(&b.right),
        syn::Expr::Paren(p) => has_let(&p.expr),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    //! Evaluation order as rustc walks an expression.
    use super::super::testing::*;

    #[test]
    fn a_second_lock_call_in_one_statement_deadlocks_as_rustc_evaluates_it() {
        // E17: the right side's guard is still alive when the left side locks.
        assert!(deadlocks(
            "2021",
            "*self.m.lock().unwrap() = vec![self.m.lock().unwrap().len() as u32];"
        ));
        // E17b: the receiver's guard is alive while the argument locks.
        assert!(deadlocks(
            "2024",
            "self.m.lock().unwrap().push(self.m.lock().unwrap().len() as u32);"
        ));
        assert!(!deadlocks(
            "2021",
            "self.m.lock().unwrap().push(1);\nself.m.lock().unwrap().push(2);"
        ));
        // E13 in 2021 only.
        assert!(deadlocks(
            "2021",
            "std::cmp::max({ self.m.lock().unwrap().len() }, self.m.lock().unwrap().len());"
        ));
        assert!(!deadlocks(
            "2024",
            "std::cmp::max({ self.m.lock().unwrap().len() }, self.m.lock().unwrap().len());"
        ));
    }
}
