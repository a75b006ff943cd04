//! Guard lifetimes and scopes, by Rust's drop rules: which critical sections are held, when
//! a guard is bound, moved, shadowed or dropped, and how the states of branches join.

use super::*;

impl Walker<'_> {
    pub(super) fn push_scope(&mut self, boundary: bool) {
        self.scopes.push(Scope {
            boundary,
            ..Default::default()
        });
    }

    pub(super) fn pop_scope(&mut self) {
        if let Some(scope) = self.scopes.pop() {
            for id in scope.temps.iter().rev() {
                self.release(*id);
            }
            for (_, b) in scope.locals.iter().rev() {
                if let Binding::Guard(id) = b {
                    self.release(*id);
                }
            }
            for id in scope.extended.iter().rev() {
                self.release(*id);
            }
        }
    }

    pub(super) fn release(&mut self, id: usize) {
        self.live.retain(|l| *l != id);
    }

    pub(super) fn register_temp(&mut self, id: usize) {
        if let Some(scope) = self.scopes.iter_mut().rev().find(|s| s.boundary) {
            scope.temps.push(id);
        }
    }

    /// Removes a guard from the temporaries so that a binding or block can own it.
    pub(super) fn take_temp(&mut self, id: usize) {
        for s in self.scopes.iter_mut() {
            s.temps.retain(|t| *t != id);
        }
    }

    pub(super) fn bind(&mut self, name: String, b: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.locals.push((name, b));
        }
    }

    pub(super) fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.locals.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, b)| b)
    }

    /// Forgets that `name` owns a guard (moved or dropped) and releases it.
    pub(super) fn kill_binding(&mut self, name: &str) -> Option<usize> {
        for s in self.scopes.iter_mut().rev() {
            if let Some(pos) = s.locals.iter().rposition(|(n, _)| n == name) {
                if let Binding::Guard(id) = s.locals[pos].1 {
                    s.locals[pos].1 = Binding::Opaque;
                    self.live.retain(|l| *l != id);
                    return Some(id);
                }
                return None;
            }
        }
        None
    }

    /// Adds a section; `id` is assigned here.
    pub(super) fn new_section(&mut self, section: Section) -> usize {
        let id = self.out.sections.len();
        let in_loop = section.in_loop || self.loop_depth > 0;
        self.out.sections.push(Section {
            id,
            in_loop,
            ..section
        });
        id
    }

    /// A lock acquisition: records order edges against what is held, makes it live as a temp.
    pub(super) fn acquire(
        &mut self,
        lock: String,
        instance: String,
        mode: Mode,
        line: u32,
        non_blocking: bool,
    ) -> usize {
        let id = self.new_section(Section {
            lock,
            instance,
            mode,
            line,
            non_blocking,
            ..Section::default()
        });
        for &h in &self.live {
            if !self.out.sections[h].atomic {
                self.out.order.push((h, id));
            }
        }
        self.live.push(id);
        self.register_temp(id);
        id
    }

    pub(super) fn save(&self) -> State {
        State {
            live: self.live.clone(),
            scopes: self.scopes.clone(),
            diverged: self.diverged,
        }
    }

    pub(super) fn restore(&mut self, s: State) {
        self.live = s.live;
        self.scopes = s.scopes;
        self.diverged = s.diverged;
    }

    /// Joins branch end states: a guard stays held only if it is held on every branch that
    /// falls through (must-held).
    pub(super) fn join(&mut self, before: &State, ends: Vec<State>) {
        let through: Vec<&State> = ends.iter().filter(|s| !s.diverged).collect();
        if through.is_empty() {
            self.restore(before.clone());
            self.diverged = !ends.is_empty();
            return;
        }
        // The newest guard wins for bindings: after a loop or an `if` whose body re-binds
        // `g = cv.wait(g)`, `g` may be the re-acquired guard, held on every path though by
        // different sections. Taking the re-acquired one keeps a check before the wait and an
        // act after it in two sections, as they are on the path that waited.
        let newest = |s: &State| s.live.iter().copied().max();
        let mut merged = through
            .iter()
            .max_by_key(|s| newest(s))
            .map(|s| (*s).clone())
            .expect("at least one branch falls through");
        let same_binding = |id: usize| -> bool {
            for (si, scope) in merged.scopes.iter().enumerate() {
                for (li, (_, b)) in scope.locals.iter().enumerate() {
                    if !matches!(b, Binding::Guard(x) if *x == id) {
                        continue;
                    }
                    let lock = &self.out.sections[id].lock;
                    return through.iter().all(|st| {
                        matches!(st.scopes.get(si).and_then(|sc| sc.locals.get(li)),
                            Some((_, Binding::Guard(other))) if st.live.contains(other) && self.out.sections[*other].lock == *lock)
                    });
                }
            }
            false
        };
        let keep: Vec<usize> = merged
            .live
            .iter()
            .copied()
            .filter(|id| through.iter().all(|s| s.live.contains(id)) || same_binding(*id))
            .collect();
        merged.live = keep;
        for scope_idx in 0..merged.scopes.len() {
            let locals = merged.scopes[scope_idx].locals.clone();
            for (i, (name, b)) in locals.iter().enumerate() {
                if let Binding::Guard(id) = b {
                    if !merged.live.contains(id) {
                        merged.scopes[scope_idx].locals[i] = (name.clone(), Binding::Opaque);
                    }
                }
            }
        }
        merged.diverged = false;
        self.restore(merged);
    }

    // ----- statements ----------------------------------------------------------------------

    /// Decides who owns what a `let` initializer produced (R2, R10).
    pub(super) fn binding_for(
        &mut self,
        pat: &syn::Pat,
        init: &syn::Expr,
        v: &Val,
    ) -> Option<Owned> {
        let by_value = binds_by_value(pat);
        if let Some(g) = v.fresh_guard {
            if by_value {
                return Some(Owned::Guard(g));
            }
            return None;
        }
        // `let g = other_guard;` transfers ownership.
        if by_value {
            if let syn::Expr::Path(p) = strip_parens(init) {
                let name = p.path.get_ident().map(|i| i.to_string());
                if let Some((name, id)) = name.and_then(|n| self.guard_var(&n).map(|id| (n, id))) {
                    self.kill_binding(&name);
                    self.live.push(id);
                    return Some(Owned::Guard(id));
                }
            }
        }
        // `let t = (&m.lock().unwrap()[0], 1);`: a borrow in an extending position keeps the
        // statement's guard temporaries alive to the end of the block (R10).
        if !matches!(strip_parens(init), syn::Expr::Reference(_)) && extending_borrow(init) {
            let temps: Vec<usize> = self
                .scopes
                .last()
                .map(|s| s.temps.clone())
                .unwrap_or_default();
            if let Some(&id) = temps.last() {
                return Some(Owned::Extended(id, None));
            }
        }
        if let syn::Expr::Reference(_) = strip_parens(init) {
            if let Some(p) = &v.place {
                if let Base::Guard(id) = p.base {
                    let temp = self.scopes.iter().any(|s| s.temps.contains(&id));
                    let name = single_name(pat);
                    if temp {
                        return Some(Owned::Extended(id, name));
                    }
                    return name.map(|_| Owned::Alias(p.clone()));
                }
                return Some(Owned::Alias(p.clone()));
            }
        }
        if let Some(p) = &v.place {
            match &p.base {
                // `let inner = self.inner.clone();` keeps pointing at the same locks.
                Base::Field { path, .. } if is_clone_like(init) || self.is_lock_like(path) => {
                    return Some(Owned::Alias(p.clone()));
                }
                _ => self.rvalue_place(p.clone(), line_of(init)),
            }
        }
        None
    }

    pub(super) fn is_lock_like(&self, path: &str) -> bool {
        matches!(
            self.field_kind(path),
            Some(
                FieldKind::Mutex
                    | FieldKind::RwLock
                    | FieldKind::Atomic
                    | FieldKind::Condvar
                    | FieldKind::Once
                    | FieldKind::Concurrent
            )
        )
    }

    pub(super) fn guard_var(&self, name: &str) -> Option<usize> {
        match self.lookup(name) {
            Some(Binding::Guard(id)) => Some(*id),
            _ => None,
        }
    }

    // ----- expressions ---------------------------------------------------------------------

    pub(super) fn rebind(&mut self, var: &str, id: usize) {
        for s in self.scopes.iter_mut().rev() {
            if let Some(pos) = s.locals.iter().rposition(|(n, _)| n == var) {
                s.locals[pos].1 = Binding::Guard(id);
                return;
            }
        }
    }

    /// The old guard was moved into `wait`: the variable no longer owns a section.
    pub(super) fn kill_binding_keep(&mut self, var: &str) {
        for s in self.scopes.iter_mut().rev() {
            if let Some(pos) = s.locals.iter().rposition(|(n, _)| n == var) {
                s.locals[pos].1 = Binding::Opaque;
                return;
            }
        }
    }
}

pub(super) enum Owned {
    Guard(usize),
    Extended(usize, Option<String>),
    Alias(Place),
}

/// Whether a borrow of a temporary sits in an extending position of a `let` initializer:
/// operands of tuple, array, struct and cast expressions and block tails (R10).
pub(super) fn extending_borrow(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Reference(r) => !matches!(strip_parens(&r.expr), syn::Expr::Path(_)),
        syn::Expr::Tuple(t) => t.elems.iter().any(extending_borrow),
        syn::Expr::Array(a) => a.elems.iter().any(extending_borrow),
        syn::Expr::Struct(s) => s.fields.iter().any(|f| extending_borrow(&f.expr)),
        syn::Expr::Cast(c) => extending_borrow(&c.expr),
        syn::Expr::Paren(p) => extending_borrow(&p.expr),
        syn::Expr::Call(c) if matches!(&*c.func, syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident.to_string().starts_with(char::is_uppercase))) => {
            c.args.iter().any(extending_borrow)
        }
        _ => false,
    }
}

/// Whether a pattern takes ownership of the matched value (`g`, `mut g`, `_g`, `Ok(g)`,
/// `(g, t)`), as opposed to `_` or `ref g`.
pub(super) fn binds_by_value(pat: &syn::Pat) -> bool {
    match pat {
        syn::Pat::Ident(i) => i.by_ref.is_none(),
        syn::Pat::Type(t) => binds_by_value(&t.pat),
        syn::Pat::TupleStruct(t) => t.elems.iter().any(binds_by_value),
        syn::Pat::Tuple(t) => t.elems.iter().any(binds_by_value),
        syn::Pat::Struct(s) => s.fields.iter().any(|f| binds_by_value(&f.pat)),
        syn::Pat::Paren(p) => binds_by_value(&p.pat),
        _ => false,
    }
}

pub(super) fn single_name(pat: &syn::Pat) -> Option<String> {
    let mut names = Vec::new();
    pat_names(pat, &mut names);
    if names.len() == 1 {
        names.pop()
    } else {
        None
    }
}

pub(super) fn pat_names(pat: &syn::Pat, out: &mut Vec<String>) {
    match pat {
        syn::Pat::Ident(i) => {
            out.push(i.ident.to_string());
            if let Some((_, sub)) = &i.subpat {
                pat_names(sub, out);
            }
        }
        syn::Pat::Type(t) => pat_names(&t.pat, out),
        syn::Pat::TupleStruct(t) => t.elems.iter().for_each(|p| pat_names(p, out)),
        syn::Pat::Tuple(t) => t.elems.iter().for_each(|p| pat_names(p, out)),
        syn::Pat::Struct(s) => s.fields.iter().for_each(|f| pat_names(&f.pat, out)),
        syn::Pat::Paren(p) => pat_names(&p.pat, out),
        syn::Pat::Reference(r) => pat_names(&r.pat, out),
        syn::Pat::Slice(s) => s.elems.iter().for_each(|p| pat_names(p, out)),
        syn::Pat::Or(o) => {
            if let Some(first) = o.cases.first() {
                pat_names(first, out)
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    //! Guard lifetimes, one snippet each (see `testing` for the type they run in).
    use super::super::testing::*;

    /// The E-rows of guards-and-locks.md §3.3: (case, body, `m` held at the probe in edition
    /// 2021, in 2024).
    const PROBE_TABLE: &[(&str, &str, bool, bool)] = &[
        (
            "E1 statement temporary",
            "self.m.lock().unwrap().push(4);\nprobe!();",
            false,
            false,
        ),
        (
            "E2 shadowing keeps the guard",
            "let g = self.m.lock().unwrap();\nlet g = 5;\nprobe!();",
            true,
            true,
        ),
        (
            "E3 value read out of the guard",
            "let x = self.m.lock().unwrap().len();\nprobe!();",
            false,
            false,
        ),
        (
            "E3 a deref of a temporary guard copies the data",
            "let x = *self.m.lock().unwrap();\nprobe!();",
            false,
            false,
        ),
        (
            "E4 borrow of the deref is extended",
            "let r = &*self.m.lock().unwrap();\nprobe!();",
            true,
            true,
        ),
        (
            "E5 borrow of an element is extended",
            "let r = &self.m.lock().unwrap()[0];\nprobe!();",
            true,
            true,
        ),
        (
            "E6 else of if let",
            "if let Some(x) = self.m.lock().unwrap().first() {\n} else {\nprobe!();\n}",
            true,
            false,
        ),
        (
            "E6b then of if let",
            "if let Some(x) = self.m.lock().unwrap().first() {\nprobe!();\n}",
            true,
            true,
        ),
        (
            "E7 match arms",
            "match self.m.lock().unwrap().len() {\n0 => { probe!(); }\n_ => { probe!(); }\n}",
            true,
            true,
        ),
        (
            "E8 plain if condition",
            "if self.m.lock().unwrap().len() > 0 {\nprobe!();\n}",
            false,
            false,
        ),
        (
            "E9 while let body",
            "while let Some(x) = self.m.lock().unwrap().pop() {\nprobe!();\n}",
            true,
            true,
        ),
        (
            "E9b plain while condition",
            "while self.m.lock().unwrap().len() > 0 {\nprobe!();\n}",
            false,
            false,
        ),
        (
            "E10 for iterator",
            "for v in self.m.lock().unwrap().iter() {\nprobe!();\n}",
            true,
            true,
        ),
        (
            "E11 second operand of &&",
            "if self.m.lock().unwrap().len() > 0 && probe!() > 0 {}",
            false,
            false,
        ),
        (
            "E12 later call argument",
            "std::cmp::max(self.m.lock().unwrap().len(), probe!());",
            true,
            true,
        ),
        (
            "E13 block tail as argument",
            "std::cmp::max({ self.m.lock().unwrap().len() }, probe!());",
            true,
            false,
        ),
        (
            "E14 non-let match guard",
            "match 1 {\n_ if self.m.lock().unwrap().len() > 0 => { probe!(); }\n_ => {}\n}",
            false,
            false,
        ),
        (
            "E15 let underscore drops at once",
            "let _ = self.m.lock().unwrap();\nprobe!();",
            false,
            false,
        ),
        (
            "E15b let _g keeps it",
            "let _g = self.m.lock().unwrap();\nprobe!();",
            true,
            true,
        ),
        (
            "E16 drop releases",
            "let g = self.m.lock().unwrap();\ndrop(g);\nprobe!();",
            false,
            false,
        ),
        (
            "E18b compound assignment right side first",
            "self.m.lock().unwrap()[0] += probe!() as u32;",
            false,
            false,
        ),
        (
            "E19 let else initializer",
            "let Some(x) = self.m.lock().unwrap().first().copied() else { return };\nprobe!();",
            false,
            false,
        ),
        (
            "E20 borrow inside a tuple",
            "let t = (&self.m.lock().unwrap()[0], 1);\nprobe!();",
            true,
            true,
        ),
        (
            "E21 else if condition",
            "if let Some(x) = self.m.lock().unwrap().first() {\n} else if probe!() > 0 {\n}",
            true,
            false,
        ),
        (
            "E23 poison recovery binds the guard",
            "let g = self.m.lock().unwrap_or_else(|e| e.into_inner());\nprobe!();",
            true,
            true,
        ),
        (
            "E24 try_lock in if let",
            "if let Ok(g) = self.m.try_lock() {\nprobe!();\n}",
            true,
            true,
        ),
        (
            "E25 block tail in a let",
            "let v = { self.m.lock().unwrap().len() };\nprobe!();",
            false,
            false,
        ),
        (
            "let guard ends with its block",
            "{\nlet g = self.m.lock().unwrap();\n}\nprobe!();",
            false,
            false,
        ),
        (
            "moving the guard keeps it held",
            "let g = self.m.lock().unwrap();\nlet h = g;\nprobe!();",
            true,
            true,
        ),
        (
            "R13 a drop on one branch only is not must-held",
            "let g = self.m.lock().unwrap();\nif probe!() > 0 { drop(g); }\nprobe!();",
            false,
            false,
        ),
        (
            "R16 closures run in place inherit the held set",
            "let g = self.m.lock().unwrap();\ng.iter().for_each(|_| { probe!(); });",
            true,
            true,
        ),
        (
            "R16 a spawned thread holds nothing",
            "let g = self.m.lock().unwrap();\nstd::thread::spawn(move || { probe!(); });",
            false,
            false,
        ),
    ];

    #[test]
    fn guard_lifetimes_follow_the_probe_table() {
        check(PROBE_TABLE);
    }

    #[test]
    fn a_guard_passed_to_a_helper_is_the_helpers_guard() {
        let takes = |extra: &str, body: &str| -> bool {
            let s = summaries("2021", body, extra);
            let f = &s["f"];
            f.order
                .iter()
                .any(|(h, n)| f.sections[*h].lock == "m" && f.sections[*n].lock == "m")
        };
        let drops_first = "fn load(&self, g: MutexGuard<'_, Vec<u32>>) { drop(g); self.m.lock().unwrap().push(1); }";
        let keeps =
            "fn load(&self, g: MutexGuard<'_, Vec<u32>>) { self.m.lock().unwrap().push(1); }";
        let call = "let g = self.m.lock().unwrap();\nself.load(g);";
        assert!(
            !takes(drops_first, call),
            "the helper released the guard before locking again"
        );
        assert!(
            takes(keeps, call),
            "the helper locks again while the guard it was given is alive"
        );
        // Accesses through the parameter are accesses of the caller's lock.
        let s = summaries(
            "2021",
            call,
            "fn load(&self, mut g: MutexGuard<'_, Vec<u32>>) { g.push(1); }",
        );
        assert!(s["f"]
            .accesses
            .iter()
            .any(|a| a.field == "m" && a.kind.writes()));
    }
}
