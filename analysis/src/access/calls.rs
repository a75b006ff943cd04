//! Recognising calls: lock acquisitions (`lock`, `read`, `write`, `try_*`), atomic
//! operations, `Condvar` waits and notifies, calls of the type's own methods (whose accesses
//! are copied in under the caller's sections) and macros.

use super::*;
use crate::api::render::idents;

/// The attempt without waiting of a timed acquisition (`try_lock` of `try_lock_for(d)` and of
/// `try_lock_until(deadline)`).
fn timed_attempt(name: &str) -> Option<&'static str> {
    match name {
        "try_lock_for" | "try_lock_until" => Some("try_lock"),
        "try_write_for" | "try_write_until" => Some("try_write"),
        "try_read_for" | "try_read_until" => Some("try_read"),
        _ => None,
    }
}

/// A blocking acquisition by its name and argument count (`lock()`, `read()`, `write()`).
fn blocking_lock(name: &str, args: usize) -> bool {
    args == 0
        && matches!(
            name,
            "lock"
                | "lock_arc"
                | "write"
                | "write_arc"
                | "read"
                | "read_arc"
                | "read_recursive"
                | "upgradable_read"
        )
}

/// An operation of an atomic (std's and the crates' atomics and cells alike).
fn atomic_op(name: &str) -> bool {
    matches!(name, "load" | "store" | "swap" | "get" | "set" | "update")
        || name.starts_with("fetch_")
        || name.starts_with("compare_")
}

/// The variable an expression starts from: `child` for `child.state.lock()`.
fn root_ident(e: &syn::Expr) -> Option<String> {
    match strip_parens(e) {
        syn::Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        syn::Expr::Field(f) => root_ident(&f.base),
        syn::Expr::MethodCall(m) => root_ident(&m.receiver),
        syn::Expr::Index(i) => root_ident(&i.expr),
        syn::Expr::Reference(r) => root_ident(&r.expr),
        syn::Expr::Unary(u) => root_ident(&u.expr),
        _ => None,
    }
}

/// The associated functions of guard types that map a guard to a part of its data through a
/// closure (std's `MutexGuard::map`, parking_lot's and lock_api's mapped guards).
const GUARD_MAPS: &[&str] = &[
    "map",
    "try_map",
    "filter_map",
    "map_split",
    "try_map_or_err",
];

impl Walker<'_> {
    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall) -> Val {
        let name = m.method.to_string();
        let line = line_of(&m.method);
        // Peeling the poison wrapper keeps the guard fresh (R2).
        if matches!(
            name.as_str(),
            "unwrap" | "expect" | "unwrap_or_else" | "into_inner" | "map_err" | "unwrap_or_default"
        ) {
            let v = self.expr(&m.receiver);
            for a in &m.args {
                self.rvalue(a);
            }
            if v.fresh_guard.is_some() || name != "into_inner" {
                return v;
            }
        }
        if matches!(
            name.as_str(),
            "clone" | "as_ref" | "deref" | "borrow" | "as_deref"
        ) && m.args.is_empty()
        {
            // An `Arc` clone of a field still names the same locks; a clone of guarded data is
            // a read that hands back a plain value.
            let v = self.expr(&m.receiver);
            return match v.place {
                Some(p) if matches!(p.base, Base::Field { .. }) && v.fresh_guard.is_none() => {
                    Val::place(p)
                }
                Some(p) => {
                    self.record(&p, AccessKind::Read, &format!("{name}()"), line);
                    Val::default()
                }
                None => Val::default(),
            };
        }
        let recv = self.expr(&m.receiver);
        let Some(place) = recv.place.clone() else {
            for a in &m.args {
                self.rvalue(a);
            }
            // Another object's lock (a local's, a loop variable's, a parameter's), or a
            // parameter's method (`child.tick()`).
            let root = root_ident(&m.receiver);
            if blocking_lock(&name, m.args.len()) {
                let whose = root.map_or("another object".to_string(), |r| format!("`{r}`"));
                self.unseen(format!("{whose}'s lock (`{name}()`)"), line, true);
            } else {
                self.call_out(&name, line);
                if let Some(root) = root.filter(|r| self.foreign.contains(r)) {
                    if !PLAIN_TRAIT_METHODS.contains(&name.as_str()) {
                        self.unseen(format!("`{root}.{name}()`"), line, false);
                    }
                }
            }
            return Val::default();
        };
        // A lock inside guarded data (`g.children[i].lock()`): another object's.
        if matches!(place.base, Base::Guard(_)) && blocking_lock(&name, m.args.len()) {
            self.unseen(format!("a lock in guarded data (`{name}()`)"), line, true);
        } else if matches!(place.base, Base::Guard(_)) && !place.proj.is_empty() {
            // A method of something inside what the guard holds (`bar.draw()` on an element);
            // one on the guarded value itself is its own type's (`state.println()` on the
            // `MultiState` a `RwLock<MultiState>` guards), never the other type's.
            self.call_out(&name, line);
        }
        if let Base::Field { instance, path } = &place.base {
            if place.proj.is_empty() {
                if path.is_empty() {
                    return self.call_own_method(&name, instance.clone(), &m.args, line);
                }
                // `self.inner.m()`, or `self.m()` inside a field's method.
                let key = format!("{path}::{name}");
                if self.ty.fns.iter().any(|f| f.key() == key) {
                    return self.call_own_method(&key, instance.clone(), &m.args, line);
                }
                if matches!(
                    self.field_kind(path),
                    Some(FieldKind::Mutex | FieldKind::RwLock)
                ) {
                    // A collection of locks: its elements name the same lock, and a closure
                    // over them (`.map(|s| s.lock())`) gets the element as its parameter.
                    if matches!(
                        name.as_str(),
                        "iter"
                            | "get"
                            | "first"
                            | "last"
                            | "values"
                            | "as_slice"
                            | "into_iter"
                            | "enumerate"
                            | "unwrap"
                            | "expect"
                    ) {
                        for a in &m.args {
                            self.rvalue(a);
                        }
                        return Val::place(place);
                    }
                    if m.args.iter().any(|a| matches!(a, syn::Expr::Closure(_))) {
                        self.closure_param = Some(place.clone());
                    }
                }
                if let Some(v) = self.sync_call(&name, instance, path, &m.args, line) {
                    self.sync_site(m, &name, path);
                    return v;
                }
            }
        }
        if let Base::Field { path, .. } = &place.base {
            if let Some(what) = self.ty.opaque_fields.get(path) {
                let note = format!("calls `{name}()` on `self.{path}` ({what}) at line {line}: what it locks is unknown");
                if !self.notes.iter().any(|(n, _)| *n == note) {
                    self.notes.push((note, line));
                }
                if !PLAIN_TRAIT_METHODS.contains(&name.as_str()) {
                    self.unseen(format!("`self.{path}.{name}()`"), line, false);
                }
            }
        }
        // An ordinary method on data: receiver first, then the arguments (R9).
        for a in &m.args {
            self.rvalue(a);
        }
        let kind = if MUTATING.contains(&name.as_str()) {
            AccessKind::Write
        } else {
            AccessKind::Read
        };
        // `UnsafeCell::get` hands out the cell's place.
        if name == "get" && m.args.is_empty() {
            if let Base::Field { path, .. } = &place.base {
                if self.field_kind(path) == Some(FieldKind::UnsafeCell) {
                    return Val::place(place);
                }
            }
        }
        self.record(&place, kind, &format!("{name}()"), line);
        Val::default()
    }

    /// Records a blocking acquisition of a lock field, an operation on an atomic field or a
    /// call on a dependency's concurrent container, as a site the instrumented copy makes a
    /// schedule point of.
    fn sync_site(&mut self, m: &syn::ExprMethodCall, name: &str, path: &str) {
        use crate::model::SyncOp;
        let op = match self.field_kind(path) {
            Some(FieldKind::Mutex | FieldKind::RwLock) if blocking_lock(name, m.args.len()) => {
                SyncOp::Acquire {
                    blocking: name.to_string(),
                    attempt: format!("try_{name}"),
                }
            }
            Some(FieldKind::Mutex | FieldKind::RwLock)
                if m.args.is_empty() && matches!(name, "try_lock" | "try_read" | "try_write") =>
            {
                SyncOp::Attempt {
                    attempt: name.to_string(),
                }
            }
            Some(FieldKind::Mutex | FieldKind::RwLock) if m.args.len() == 1 => {
                let Some(attempt) = timed_attempt(name) else {
                    return;
                };
                SyncOp::TimedAcquire {
                    timed: name.to_string(),
                    attempt: attempt.to_string(),
                }
            }
            Some(FieldKind::Atomic) if atomic_op(name) => {
                let literal = |i: usize, value: bool| matches!(m.args.iter().nth(i), Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(b), .. })) if b.value == value);
                if name == "store"
                    && literal(0, false)
                    && !self.out.flags_cleared.iter().any(|f| f == path)
                {
                    self.out.flags_cleared.push(path.to_string());
                }
                let exchange = matches!(name, "compare_exchange" | "compare_exchange_weak");
                if exchange && literal(0, false) && literal(1, true) && self.loop_depth == 0 {
                    SyncOp::FlagAttempt
                } else {
                    SyncOp::Atomic
                }
            }
            Some(FieldKind::Concurrent) if !self.ty.own_sync.contains(path) => SyncOp::Container,
            Some(FieldKind::Condvar)
                if name == "wait" && std::mem::take(&mut self.last_wait_mut) =>
            {
                SyncOp::WaitMut
            }
            Some(FieldKind::Condvar)
                if matches!(
                    name,
                    "wait" | "wait_timeout" | "wait_while" | "wait_timeout_while"
                ) =>
            {
                match self.last_wait_lock.take() {
                    Some(lock) => SyncOp::Wait { lock },
                    None => return,
                }
            }
            Some(FieldKind::Condvar) if name == "notify_one" || name == "notify_all" => {
                SyncOp::Notify {
                    all: name == "notify_all",
                    waited: false,
                }
            }
            _ => return,
        };
        self.out.sites.push(Site {
            op,
            field: path.to_string(),
            receiver: pos_of(&m.receiver),
            receiver_end: end_of(&m.receiver),
            call_end: end_of(m),
        });
    }

    /// Calls on a lock, atomic, condvar or once field.
    pub(super) fn sync_call(
        &mut self,
        name: &str,
        instance: &str,
        path: &str,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
        line: u32,
    ) -> Option<Val> {
        let kind = self.field_kind(path);
        let lockish = matches!(kind, Some(FieldKind::Mutex | FieldKind::RwLock));
        let unknown = kind.is_none();
        let acquire = match name {
            "lock" | "lock_arc" => Some((Mode::Exclusive, false)),
            "try_lock" | "try_lock_for" | "try_lock_until" => Some((Mode::Exclusive, true)),
            "write" | "write_arc" if lockish || (unknown && args.is_empty()) => {
                Some((Mode::Exclusive, false))
            }
            "try_write" | "try_write_for" | "try_write_until" => Some((Mode::Exclusive, true)),
            "read" | "read_recursive" | "upgradable_read" | "upgradeable_read" | "read_arc"
                if lockish || (unknown && args.is_empty()) =>
            {
                Some((Mode::Shared, false))
            }
            "try_read" | "try_read_for" | "try_read_until" => Some((Mode::Shared, true)),
            _ => None,
        };
        if let Some((mode, nb)) = acquire {
            if kind.is_some() && !lockish {
                return None;
            }
            for a in args {
                self.rvalue(a);
            }
            let id = self.acquire(path.to_string(), instance.to_string(), mode, line, nb);
            return Some(Val {
                place: Some(Place {
                    base: Base::Guard(id),
                    proj: vec![],
                }),
                fresh_guard: Some(id),
            });
        }
        match kind {
            Some(FieldKind::Atomic) => {
                for a in args {
                    self.rvalue(a);
                }
                let Some(access) = AccessKind::of_atomic(name) else {
                    return Some(Val::default());
                };
                self.indivisible(format!("atomic {path}"), instance, path, access, name, line);
                Some(Val::default())
            }
            Some(FieldKind::Concurrent) => {
                // One call on a concurrent container is one indivisible operation.
                for a in args {
                    self.rvalue(a);
                }
                let access = if MUTATING.contains(&name)
                    || matches!(
                        name,
                        "push" | "pop" | "force_push" | "steal" | "alter" | "alter_all"
                    ) {
                    AccessKind::Update
                } else {
                    AccessKind::Read
                };
                let what = format!("{name}()");
                self.indivisible(
                    format!("container {path}"),
                    instance,
                    path,
                    access,
                    &what,
                    line,
                );
                Some(Val::default())
            }
            Some(FieldKind::Condvar) => {
                if name.starts_with("wait") {
                    self.condvar_wait(args, line);
                    return Some(self.last_wait_val.take().unwrap_or_default());
                }
                if name.starts_with("notify") {
                    self.out.notify_stmts.push(self.cur_stmt);
                }
                for a in args {
                    self.rvalue(a);
                }
                Some(Val::default())
            }
            Some(FieldKind::Once) => {
                for a in args {
                    self.rvalue(a);
                }
                let access = match name {
                    "get" | "is_completed" | "wait" => AccessKind::Read,
                    "set" | "take" => AccessKind::Write,
                    _ => AccessKind::Update,
                };
                self.indivisible(format!("once {path}"), instance, path, access, name, line);
                Some(Val::default())
            }
            _ => None,
        }
    }

    pub(super) fn record_atomic(&mut self, place: &Place, kind: AccessKind, what: &str, line: u32) {
        let Base::Field { instance, path } = &place.base else {
            return;
        };
        self.out.accesses.push(Access {
            field: path.clone(),
            instance: instance.clone(),
            kind,
            line,
            sections: self.live.clone(),
            stmt: self.cur_stmt,
            what: what.to_string(),
            via: None,
        });
    }

    /// One indivisible operation on the field at `path` (an atomic's, a `Once`'s, a
    /// concurrent container's): a section of its own around the access.
    fn indivisible(
        &mut self,
        section: String,
        instance: &str,
        path: &str,
        access: AccessKind,
        name: &str,
        line: u32,
    ) {
        let id = self.new_section(Section::atomic(section, instance, line));
        self.live.push(id);
        let place = Place {
            base: Base::Field {
                instance: instance.to_string(),
                path: path.to_string(),
            },
            proj: vec![],
        };
        self.record_atomic(&place, access, name, line);
        self.release(id);
    }

    /// `g = cv.wait(g)` (std, by value) or `cv.wait(&mut g)` (parking_lot): the lock is released
    /// and re-acquired as a new section (R14).
    pub(super) fn condvar_wait(
        &mut self,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
        line: u32,
    ) {
        self.out.wait_stmts.push(self.cur_stmt);
        self.last_wait_lock = None;
        self.last_wait_mut = false;
        let mut result = Val::default();
        if let Some(first) = args.first() {
            let (by_ref, inner) = match strip_parens(first) {
                syn::Expr::Reference(r) => (true, strip_parens(&r.expr)),
                other => (false, other),
            };
            if let syn::Expr::Path(p) = inner {
                if let Some(var) = p.path.get_ident().map(|i| i.to_string()) {
                    if let Some(old) = self.guard_var(&var) {
                        let (lock, instance, mode) = {
                            let s = &self.out.sections[old];
                            (s.lock.clone(), s.instance.clone(), s.mode)
                        };
                        if by_ref {
                            self.last_wait_mut = args.len() == 1;
                        } else {
                            self.last_wait_lock = self.expression_of(&instance, &lock);
                        }
                        self.out.sections[old].ended_by_wait = true;
                        self.release(old);
                        let new = self.new_section(Section {
                            lock,
                            instance,
                            mode,
                            line,
                            from_wait: true,
                            ..Section::default()
                        });
                        self.live.push(new);
                        if by_ref {
                            self.rebind(&var, new);
                        } else {
                            self.kill_binding_keep(&var);
                            self.register_temp(new);
                            result = Val {
                                place: Some(Place {
                                    base: Base::Guard(new),
                                    proj: vec![],
                                }),
                                fresh_guard: Some(new),
                            };
                        }
                    }
                }
            }
        }
        for a in args.iter().skip(1) {
            self.rvalue(a);
        }
        self.last_wait_val = Some(result);
    }

    /// How the field at `path` of `instance` is written in the body being walked
    /// (`self.items`, or `self.items` for `inner.items` inside `Inner`'s own method); `None`
    /// for what is no field of an instance (a static).
    fn expression_of(&self, instance: &str, path: &str) -> Option<String> {
        if !self.instances.iter().any(|i| i == instance) || path.is_empty() {
            return None;
        }
        let path = match (instance, self.prefix.as_str()) {
            ("self", "") => path,
            ("self", prefix) => path.strip_prefix(prefix)?.strip_prefix('.')?,
            _ => path,
        };
        Some(format!("{instance}.{path}"))
    }

    pub(super) fn call(&mut self, c: &syn::ExprCall) -> Val {
        // `(self.handler)(x)`: calling a closure or trait object held in a field.
        if !matches!(&*c.func, syn::Expr::Path(_)) {
            let f = self.expr(&c.func);
            if let Some(Place {
                base: Base::Field { path, .. },
                ..
            }) = &f.place
            {
                if let Some(what) = self.ty.opaque_fields.get(path) {
                    let line = line_of(&*c.func);
                    self.notes.push((
                        format!(
                            "calls `self.{path}` ({what}) at line {line}: what it locks is unknown"
                        ),
                        line,
                    ));
                    self.unseen(format!("`self.{path}`"), line, false);
                }
            }
        }
        let func_path = match &*c.func {
            syn::Expr::Path(p) => Some(idents(&p.path)),
            _ => None,
        };
        let segs = func_path.unwrap_or_default();
        let last = segs.last().map(String::as_str).unwrap_or("");
        let line = line_of(&*c.func);
        // Calling a closure or callback parameter (`f(x)`).
        if let [f] = segs.as_slice() {
            if self.foreign.contains(f) {
                self.unseen(format!("`{f}(..)`"), line, false);
            }
        }
        if matches!(last, "drop") && c.args.len() == 1 {
            if let syn::Expr::Path(p) = strip_parens(&c.args[0]) {
                if let Some(name) = p.path.get_ident() {
                    if self.kill_binding(&name.to_string()).is_some() {
                        return Val::default();
                    }
                }
            }
        }
        if matches!(last, "forget") && c.args.len() == 1 {
            return Val::default();
        }
        // `Self::helper(self, ..)` and `Type::helper(&self, ..)`.
        if segs.len() == 2 && (segs[0] == "Self" || segs[0] == self.ty.model.name) {
            if let Some(first) = c.args.first() {
                let v = self.expr(first);
                if let Some(Place {
                    base: Base::Field { instance, path },
                    proj,
                }) = v.place
                {
                    if path.is_empty() && proj.is_empty() {
                        let rest: syn::punctuated::Punctuated<syn::Expr, syn::Token![,]> =
                            c.args.iter().skip(1).cloned().collect();
                        return self.call_own_method(last, instance, &rest, line);
                    }
                }
            }
        }
        if let [.., ty, f] = segs.as_slice() {
            if ty.ends_with("Guard") && GUARD_MAPS.contains(&f.as_str()) {
                return self.guard_map(&c.args);
            }
        }
        // Guard-taking functions: `MutexGuard::unlocked`, `RwLockWriteGuard::downgrade`...
        let spawn = last.contains("spawn");
        let saved_live = self.live.clone();
        if spawn {
            // A new thread holds nothing (R16).
            self.live.clear();
        }
        for a in &c.args {
            // A guard moved into an unknown function is released there (R12).
            if let syn::Expr::Path(p) = strip_parens(a) {
                if let Some(name) = p.path.get_ident().map(|i| i.to_string()) {
                    if self.guard_var(&name).is_some() && !matches!(last, "downgrade" | "upgrade") {
                        self.kill_binding(&name);
                        continue;
                    }
                }
            }
            if last == "unlocked" || last == "unlocked_fair" {
                // The closure runs with the lock released.
                if let syn::Expr::Reference(r) = strip_parens(a) {
                    if let syn::Expr::Path(p) = strip_parens(&r.expr) {
                        if let Some(id) = p
                            .path
                            .get_ident()
                            .and_then(|i| self.guard_var(&i.to_string()))
                        {
                            self.release(id);
                            continue;
                        }
                    }
                }
            }
            self.rvalue(a);
        }
        if spawn || last == "unlocked" || last == "unlocked_fair" {
            self.live = saved_live;
        }
        Val::default()
    }

    /// `MutexGuard::map(guard, |data| ..)`, `RwLockReadGuard::try_map(..)` and the like: the
    /// closure's parameter is the guarded data, so what it touches is accessed in the guard's
    /// section, and the mapped guard the call returns owns that section as the argument did.
    fn guard_map(&mut self, args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>) -> Val {
        let mut args = args.iter();
        let Some(first) = args.next() else {
            return Val::default();
        };
        let moved_var = match strip_parens(first) {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .map(|i| i.to_string())
                .filter(|n| self.guard_var(n).is_some()),
            _ => None,
        };
        let v = self.expr(first);
        let Some(id) = v.guard() else {
            for a in args {
                self.rvalue(a);
            }
            return Val::default();
        };
        if let Some(var) = &moved_var {
            // The guard moves into the mapped one: the section lives on in the result.
            self.kill_binding_keep(var);
            self.register_temp(id);
        }
        for a in args {
            if matches!(strip_parens(a), syn::Expr::Closure(_)) {
                self.closure_param = Some(Place {
                    base: Base::Guard(id),
                    proj: vec![],
                });
            }
            self.rvalue(a);
        }
        let owned = v.fresh_guard.is_some() || moved_var.is_some();
        Val {
            place: Some(Place {
                base: Base::Guard(id),
                proj: vec![],
            }),
            fresh_guard: owned.then_some(id),
        }
    }

    /// `self.helper(..)`: copies the callee's accesses under the sections held here.
    pub(super) fn call_own_method(
        &mut self,
        name: &str,
        instance: String,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
        line: u32,
    ) -> Val {
        // A guard variable passed by value moves into the callee: it is the callee's guard
        // parameter from here on, and no longer ours.
        let mut moved: HashMap<usize, usize> = HashMap::new();
        for (i, a) in args.iter().enumerate() {
            if let syn::Expr::Path(p) = strip_parens(a) {
                if let Some(var) = p.path.get_ident().map(|i| i.to_string()) {
                    if let Some(id) = self.guard_var(&var) {
                        self.kill_binding(&var);
                        moved.insert(i, id);
                        continue;
                    }
                }
            }
            self.rvalue(a);
        }
        let Some(callee) = self.callees.get(name) else {
            if self.ty.fns.iter().any(|f| f.key() == name && f.ref_self) {
                self.notes.push((
                    format!("recursive call to `{name}` at line {line} is not followed"),
                    line,
                ));
            } else if !self.ty.fns.iter().any(|f| f.key() == name) {
                self.notes.push((
                    format!("call to `{name}` at line {line} is not a method of the type (a trait or Deref method?); its locks are unknown"),
                    line,
                ));
                if !PLAIN_TRAIT_METHODS.contains(&name) {
                    self.unseen(format!("`{name}()`, not a method of the type"), line, false);
                }
            }
            return Val::default();
        };
        let via = format!("via {name}() at line {line}");
        let mut map = HashMap::new();
        let rename = |i: &str| {
            if i == "self" {
                instance.clone()
            } else {
                i.to_string()
            }
        };
        // The callee's guard parameters stand for the sections of the guards passed in.
        let mut lock_rename: HashMap<String, (String, String)> = HashMap::new();
        for s in &callee.sections {
            if let Some(&caller) = s.param.and_then(|i| moved.get(&i)) {
                let c = &self.out.sections[caller];
                lock_rename.insert(s.lock.clone(), (c.lock.clone(), c.instance.clone()));
                map.insert(s.id, caller);
            }
        }
        for s in &callee.sections {
            if map.contains_key(&s.id) {
                continue;
            }
            let (lock, inst) = match lock_rename.get(&s.lock) {
                Some((l, i)) => (l.clone(), i.clone()),
                None => (s.lock.clone(), rename(&s.instance)),
            };
            let id = self.new_section(Section {
                lock,
                instance: inst,
                via: Some(via.clone()),
                param: None,
                ..s.clone()
            });
            map.insert(s.id, id);
        }
        // Locks the callee takes while we hold ours.
        for s in callee
            .sections
            .iter()
            .filter(|s| !s.atomic && s.param.is_none())
        {
            for &h in &self.live {
                if !self.out.sections[h].atomic {
                    self.out.order.push((h, map[&s.id]));
                }
            }
        }
        for (a, b) in &callee.order {
            self.out.order.push((map[a], map[b]));
        }
        for u in &callee.unseen {
            let mut sections = self.held();
            sections.extend(u.sections.iter().map(|s| map[s]));
            self.out.unseen.push(Unseen {
                what: format!("{} {via}", u.what),
                sections,
                ..u.clone()
            });
        }
        for c in &callee.calls_out {
            let mut sections = self.held();
            sections.extend(c.sections.iter().map(|s| map[s]));
            self.out.calls_out.push(CallOut {
                sections,
                ..c.clone()
            });
        }
        for a in &callee.accesses {
            let mut sections = self.live.clone();
            sections.extend(a.sections.iter().map(|s| map[s]));
            let (field, inst) = match lock_rename.get(&a.field) {
                Some((l, i)) => (l.clone(), i.clone()),
                None => (a.field.clone(), rename(&a.instance)),
            };
            self.out.accesses.push(Access {
                field,
                instance: inst,
                kind: a.kind,
                line: a.line,
                sections,
                stmt: self.cur_stmt,
                what: a.what.clone(),
                via: Some(a.via.clone().unwrap_or_else(|| via.clone())),
            });
        }
        if !callee.wait_stmts.is_empty() {
            self.out.wait_stmts.push(self.cur_stmt);
        }
        if !callee.notify_stmts.is_empty() {
            self.out.notify_stmts.push(self.cur_stmt);
        }
        if let Some(path) = callee.returns_field.clone() {
            return Val::place(Place {
                base: Base::Field { instance, path },
                proj: vec![],
            });
        }
        if let Some((lock, mode)) = callee.returns_guard.clone() {
            // A guard-returning helper is an acquisition here (R17).
            let id = self.acquire(lock, instance, mode, line, false);
            self.out.sections[id].via = Some(via);
            return Val {
                place: Some(Place {
                    base: Base::Guard(id),
                    proj: vec![],
                }),
                fresh_guard: Some(id),
            };
        }
        Val::default()
    }

    /// Known macros have expression arguments; others are left alone.
    pub(super) fn mac(&mut self, mac: &syn::Macro) {
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let known = matches!(
            name.as_str(),
            "println"
                | "print"
                | "eprintln"
                | "eprint"
                | "format"
                | "write"
                | "writeln"
                | "assert"
                | "assert_eq"
                | "assert_ne"
                | "debug_assert"
                | "debug_assert_eq"
                | "debug_assert_ne"
                | "debug"
                | "info"
                | "warn"
                | "error"
                | "trace"
                | "vec"
                | "panic"
                | "dbg"
                | "unreachable"
                | "todo"
                | "unimplemented"
                | "format_args"
        );
        let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        match syn::parse::Parser::parse2(parser, mac.tokens.clone()) {
            Ok(args) => {
                for a in &args {
                    self.rvalue(a);
                }
            }
            Err(_) if known => {}
            Err(_) => {
                if mac.tokens.to_string().contains("self") {
                    let line = line_of(&mac.path);
                    self.notes.push((
                        format!("the body of macro `{name}!` at line {line} is not analysed"),
                        line,
                    ));
                }
            }
        }
        if matches!(
            name.as_str(),
            "panic" | "unreachable" | "todo" | "unimplemented"
        ) {
            self.diverged = true;
        }
    }
}

#[cfg(test)]
mod tests {
    //! Lock, atomic and condvar calls and calls of the type's own methods.
    use super::super::testing::*;
    use super::super::*;

    #[test]
    fn helpers_are_inlined_under_the_callers_sections() {
        let helper = "fn helper(&self) -> usize { self.p.load(SeqCst) }";
        assert!(held(
            "2021",
            "let g = self.m.lock().unwrap();\nself.helper();",
            helper
        ));
        assert!(!held("2021", "self.helper();", helper));
        // R17: a helper returning a guard is an acquisition in the caller.
        let getter = "fn state(&self) -> MutexGuard<'_, Vec<u32>> { self.m.lock().unwrap() }";
        assert!(held("2024", "let g = self.state();\nprobe!();", getter));
        assert!(!held("2024", "self.state().push(1);\nprobe!();", getter));
    }

    #[test]
    fn a_condvar_wait_splits_the_critical_section() {
        let s = summaries(
            "2021",
            "let mut g = self.m.lock().unwrap();\nprobe!();\nwhile g.is_empty() {\ng = self.cv.wait(g).unwrap();\n}\nprobe!();",
            "",
        );
        let f = &s["f"];
        let probes: Vec<&Access> = f.accesses.iter().filter(|a| a.field == "p").collect();
        let m_section = |a: &Access| {
            a.sections
                .iter()
                .copied()
                .find(|id| f.sections[*id].lock == "m")
        };
        assert!(m_section(probes[0]).is_some() && m_section(probes[1]).is_some());
        assert_ne!(
            m_section(probes[0]),
            m_section(probes[1]),
            "the wait re-acquires as a new section"
        );
    }
}
