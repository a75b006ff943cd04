//! Per-method field-access trees: every read and write of a field reached from `self` (or from
//! another instance of the type passed as a parameter), with the critical sections held at that
//! moment. Guard lifetimes follow Rust's drop rules for the crate's edition (rules R0–R17 of
//! `guards-and-locks.md`): statement temporaries, `let` guards to the end of their block or
//! `drop`, `match` and `if let` scrutinees, `Condvar::wait` splitting a section, tail
//! expressions. Calls to other methods of the type are resolved through a petgraph call graph
//! and the callee's accesses are copied into the caller under the caller's held sections.

use crate::discover::{FieldKind, FoundType};
use crate::model::{Diagnostic, Severity};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;
use syn::spanned::Spanned;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) enum Mode {
    Shared,
    #[default]
    Exclusive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccessKind {
    Read,
    Write,
    /// One indivisible read-modify-write (`fetch_add`, `swap`, `compare_exchange`).
    Update,
}

impl AccessKind {
    pub(crate) fn writes(self) -> bool {
        !matches!(self, AccessKind::Read)
    }
}

/// One acquisition of a lock (or one atomic operation, which is its own tiny section).
#[derive(Debug, Clone, Default)]
pub(crate) struct Section {
    pub id: usize,
    /// The lock's field path from its instance (`state`, `inner.map`).
    pub lock: String,
    /// `self` or the name of a parameter holding another instance.
    pub instance: String,
    pub mode: Mode,
    pub line: u32,
    pub atomic: bool,
    /// A `try_lock`-like acquisition that cannot block.
    pub non_blocking: bool,
    /// Set when the section comes from a callee (`helper() at line 12`).
    pub via: Option<String>,
    /// A `Condvar` wait released this section (the lock is re-taken as a new section).
    pub ended_by_wait: bool,
    /// This section is the lock re-taken when a `Condvar` wait returned.
    pub from_wait: bool,
    /// Acquired inside a loop body: one static section, many dynamic acquisitions.
    pub in_loop: bool,
    /// A guard the method received as its `n`th argument (`fn load(&self, g: MutexGuard<..>)`):
    /// at a call it stands for the caller's section of the guard passed there.
    pub param: Option<usize>,
}

impl Section {
    /// The section of one atomic operation (or one `Once` call).
    fn atomic(lock: String, instance: &str, line: u32) -> Section {
        Section {
            lock,
            instance: instance.to_string(),
            line,
            atomic: true,
            ..Section::default()
        }
    }
}

/// One read or write of a field.
#[derive(Debug, Clone)]
pub(crate) struct Access {
    /// Field key: the path from the instance to the field or to the lock holding the data.
    pub field: String,
    pub instance: String,
    pub kind: AccessKind,
    pub line: u32,
    /// Sections held at the access, outermost first.
    pub sections: Vec<usize>,
    /// Start of the statement of the method body the access belongs to (line, column).
    pub stmt: (u32, u32),
    /// What was done (`load`, `push`, `assignment`).
    pub what: String,
    pub via: Option<String>,
}

/// Everything the analysis learnt about one method's body.
#[derive(Debug, Clone, Default)]
pub(crate) struct MethodSummary {
    pub sections: Vec<Section>,
    pub accesses: Vec<Access>,
    /// `(held, acquired)`: a lock acquired while another section is held.
    pub order: Vec<(usize, usize)>,
    /// Statements (line, column) that contain a `Condvar` wait / a notify.
    pub wait_stmts: Vec<(u32, u32)>,
    pub notify_stmts: Vec<(u32, u32)>,
    /// Sections held at the start of each statement.
    pub held_at: HashMap<(u32, u32), Vec<usize>>,
    /// The lock a guard-returning helper hands back (R17).
    pub returns_guard: Option<(String, Mode)>,
    /// The field a helper hands back a reference to (`fn segment(&self) -> &Mutex<..>`).
    pub returns_field: Option<String>,
}

/// Builds the summaries of every `&self` method of a type, callees before callers.
pub(crate) fn analyze_type(
    ty: &FoundType,
    edition: &str,
    diags: &mut Vec<Diagnostic>,
) -> HashMap<String, MethodSummary> {
    let edition2024 = edition.parse::<u32>().map(|e| e >= 2024).unwrap_or(false);
    let fns: Vec<_> = ty.fns.iter().filter(|f| f.ref_self).collect();
    let mut graph: DiGraph<usize, ()> = DiGraph::new();
    let nodes: Vec<NodeIndex> = (0..fns.len()).map(|i| graph.add_node(i)).collect();
    // Several `cfg`-gated impls may define the same name: edges go to all of them.
    let keys: Vec<String> = fns.iter().map(|f| f.key()).collect();
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, k) in keys.iter().enumerate() {
        by_name.entry(k.as_str()).or_default().push(i);
    }
    for (i, f) in fns.iter().enumerate() {
        let mut callees = Vec::new();
        let mut instances = vec!["self".to_string()];
        instances.extend(instance_params(&f.item.sig, &ty.model.name));
        collect_self_calls(&f.item.block, &instances, f.field.as_deref(), &mut callees);
        for c in callees {
            for &j in by_name.get(c.as_str()).into_iter().flatten() {
                graph.update_edge(nodes[i], nodes[j], ());
            }
        }
    }
    let mut done: HashMap<String, MethodSummary> = HashMap::new();
    // Tarjan yields strongly connected components callees first.
    for scc in petgraph::algo::tarjan_scc(&graph) {
        for node in scc {
            let f = fns[graph[node]];
            let mut w = Walker::new(ty, edition2024, &done);
            w.prefix = f.field.clone().unwrap_or_default();
            w.instances_from(&f.item.sig);
            w.fn_body(&f.item.block);
            for (note, line) in w.notes.drain(..) {
                diags.push(Diagnostic {
                    severity: Severity::Note,
                    message: format!("{}::{}: {note}", ty.model.name, f.name),
                    span: Some(crate::model::Span {
                        file: f.file.to_path_buf(),
                        line,
                        column: 0,
                    }),
                });
            }
            let summary = w.out;
            done.insert(f.key(), summary);
        }
    }
    done
}

/// Parameters that hold another instance of the type (`other: &Self`, `b: Arc<Vector>`).
fn instance_params(sig: &syn::Signature, type_name: &str) -> Vec<String> {
    sig.inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(t) => match &*t.pat {
                syn::Pat::Ident(id) if mentions_self_type(&t.ty, type_name) => {
                    Some(id.ident.to_string())
                }
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        })
        .collect()
}

/// Names of methods called on `self` or on another instance (`other.len()`).
/// Inside a field's method (`field` set), `self.m()` is `field::m`; `self.inner.m()` is
/// `inner::m`.
fn collect_self_calls(
    block: &syn::Block,
    instances: &[String],
    field: Option<&str>,
    out: &mut Vec<String>,
) {
    struct V<'o>(&'o mut Vec<String>, &'o [String], Option<&'o str>);
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            match strip_parens(&m.receiver) {
                syn::Expr::Path(p)
                    if p.path
                        .get_ident()
                        .is_some_and(|i| self.1.iter().any(|n| i == n)) =>
                {
                    match self.2 {
                        Some(f) => self.0.push(format!("{f}::{}", m.method)),
                        None => self.0.push(m.method.to_string()),
                    }
                }
                syn::Expr::Field(f) if self.2.is_none() && is_self(&f.base) => {
                    if let syn::Member::Named(field) = &f.member {
                        self.0.push(format!("{field}::{}", m.method));
                    }
                }
                _ => {}
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            // The walker analyses expression-like macro arguments, so calls there count too.
            let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
            if let Ok(args) = syn::parse::Parser::parse2(parser, mac.tokens.clone()) {
                for a in &args {
                    syn::visit::Visit::visit_expr(self, a);
                }
            }
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*c.func {
                if p.path.segments.len() == 2 && p.path.segments[0].ident == "Self" {
                    self.0.push(p.path.segments[1].ident.to_string());
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
    }
    syn::visit::Visit::visit_block(&mut V(out, instances, field), block);
}

fn is_self(e: &syn::Expr) -> bool {
    matches!(strip_parens(e), syn::Expr::Path(p) if p.path.is_ident("self"))
}

/// Where a value lives: a field of an instance, or the data behind a guard.
#[derive(Debug, Clone, PartialEq)]
enum Base {
    Field { instance: String, path: String },
    Guard(usize),
}

#[derive(Debug, Clone, PartialEq)]
struct Place {
    base: Base,
    proj: Vec<String>,
}

/// The result of evaluating an expression, as far as locks are concerned.
#[derive(Debug, Clone, Default)]
struct Val {
    place: Option<Place>,
    /// The expression's value is a guard created by it (after peeling `unwrap`, `?`, ...).
    fresh_guard: Option<usize>,
}

impl Val {
    fn place(p: Place) -> Val {
        Val {
            place: Some(p),
            fresh_guard: None,
        }
    }
}

#[derive(Debug, Clone)]
enum Binding {
    Guard(usize),
    Alias(Place),
    /// A binding that shadows an outer one with something the analysis does not track.
    Opaque,
}

#[derive(Debug, Clone, Default)]
struct Scope {
    /// Temporaries are registered in the innermost boundary scope.
    boundary: bool,
    temps: Vec<usize>,
    locals: Vec<(String, Binding)>,
    /// Guards whose lifetime was extended to the end of this block (R10).
    extended: Vec<usize>,
}

#[derive(Clone)]
struct State {
    live: Vec<usize>,
    scopes: Vec<Scope>,
    diverged: bool,
}

const MUTATING: &[&str] = &[
    "push",
    "push_back",
    "push_front",
    "insert",
    "remove",
    "clear",
    "pop",
    "pop_back",
    "pop_front",
    "extend",
    "retain",
    "drain",
    "truncate",
    "sort",
    "sort_by",
    "sort_by_key",
    "sort_unstable",
    "dedup",
    "append",
    "entry",
    "get_mut",
    "iter_mut",
    "values_mut",
    "swap",
    "take",
    "replace",
    "as_mut",
    "set",
    "resize",
    "split_off",
    "reserve",
    "shrink_to_fit",
    "push_str",
    "or_insert",
    "or_insert_with",
    "or_default",
    "and_modify",
    "last_mut",
    "first_mut",
    "swap_remove",
    "reverse",
    "fill",
    "rotate_left",
    "rotate_right",
    "write_all",
    "get_or_insert_with",
    "copy_from_slice",
    "remove_entry",
    "try_insert",
    "increment",
    "decrement",
    "add",
    "incr",
];

struct Walker<'a> {
    ty: &'a FoundType<'a>,
    edition2024: bool,
    callees: &'a HashMap<String, MethodSummary>,
    out: MethodSummary,
    live: Vec<usize>,
    scopes: Vec<Scope>,
    diverged: bool,
    cur_stmt: (u32, u32),
    /// Parameters holding another instance of the type.
    instances: Vec<String>,
    /// What could not be followed, with its line.
    notes: Vec<(String, u32)>,
    depth: usize,
    /// The value of the last `Condvar::wait` call (the re-acquired guard).
    last_wait_val: Option<Val>,
    /// What the next closure's first parameter names (an element of a lock collection).
    closure_param: Option<Place>,
    /// For a field's method (`Inner::m` reached as `self.inner.m()`): the field, so that its
    /// `self.count` is `inner.count`.
    prefix: String,
    /// How many loop bodies (or closures, which may run many times) enclose the walk.
    loop_depth: usize,
    /// Guard parameters and their placeholder sections, bound when the body starts.
    param_guards: Vec<(String, usize)>,
}

fn line_of<T: Spanned>(t: &T) -> u32 {
    t.span().start().line as u32
}

fn pos_of<T: Spanned>(t: &T) -> (u32, u32) {
    let s = t.span().start();
    (s.line as u32, s.column as u32)
}

impl<'a> Walker<'a> {
    fn new(
        ty: &'a FoundType<'a>,
        edition2024: bool,
        callees: &'a HashMap<String, MethodSummary>,
    ) -> Self {
        Walker {
            ty,
            edition2024,
            callees,
            out: MethodSummary::default(),
            live: Vec::new(),
            scopes: Vec::new(),
            diverged: false,
            cur_stmt: (0, 0),
            instances: vec!["self".into()],
            notes: Vec::new(),
            depth: 0,
            last_wait_val: None,
            closure_param: None,
            prefix: String::new(),
            loop_depth: 0,
            param_guards: Vec::new(),
        }
    }

    fn instances_from(&mut self, sig: &syn::Signature) {
        self.instances
            .extend(instance_params(sig, &self.ty.model.name));
        // Guards handed in by the caller: held from the start, under a placeholder lock that a
        // call site maps to the caller's section (precision trap 6).
        let typed = sig.inputs.iter().filter_map(|a| match a {
            syn::FnArg::Typed(t) => Some(t),
            syn::FnArg::Receiver(_) => None,
        });
        for (i, t) in typed.enumerate() {
            let syn::Pat::Ident(id) = &*t.pat else {
                continue;
            };
            let ty_name = crate::discover::type_name(&t.ty).unwrap_or_default();
            if !ty_name.ends_with("Guard") {
                continue;
            }
            let mode = if ty_name.contains("Read") {
                Mode::Shared
            } else {
                Mode::Exclusive
            };
            let name = id.ident.to_string();
            let section = self.new_section(Section {
                lock: format!("param {name}"),
                instance: "self".into(),
                mode,
                line: line_of(&id.ident),
                param: Some(i),
                ..Section::default()
            });
            self.live.push(section);
            self.param_guards.push((name, section));
        }
    }

    // ----- scopes and sections -------------------------------------------------------------

    fn push_scope(&mut self, boundary: bool) {
        self.scopes.push(Scope {
            boundary,
            ..Default::default()
        });
    }

    fn pop_scope(&mut self) {
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

    fn release(&mut self, id: usize) {
        self.live.retain(|l| *l != id);
    }

    fn register_temp(&mut self, id: usize) {
        if let Some(scope) = self.scopes.iter_mut().rev().find(|s| s.boundary) {
            scope.temps.push(id);
        }
    }

    /// Removes a guard from the temporaries so that a binding or block can own it.
    fn take_temp(&mut self, id: usize) {
        for s in self.scopes.iter_mut() {
            s.temps.retain(|t| *t != id);
        }
    }

    fn bind(&mut self, name: String, b: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.locals.push((name, b));
        }
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.locals.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, b)| b)
    }

    /// Forgets that `name` owns a guard (moved or dropped) and releases it.
    fn kill_binding(&mut self, name: &str) -> Option<usize> {
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
    fn new_section(&mut self, section: Section) -> usize {
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
    fn acquire(
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

    fn record(&mut self, place: &Place, kind: AccessKind, what: &str, line: u32) {
        let (field, instance) = match &place.base {
            Base::Guard(id) => {
                let s = &self.out.sections[*id];
                (s.lock.clone(), s.instance.clone())
            }
            Base::Field { instance, path } => {
                if path.is_empty() {
                    return;
                }
                if self.is_lock_like(path) {
                    return;
                }
                (path.clone(), instance.clone())
            }
        };
        let mut what = what.to_string();
        if !place.proj.is_empty() && matches!(place.base, Base::Guard(_)) {
            what = format!("{what} of .{}", place.proj.join("."));
        }
        self.out.accesses.push(Access {
            field,
            instance,
            kind,
            line,
            sections: self.live.clone(),
            stmt: self.cur_stmt,
            what,
            via: None,
        });
    }

    fn field_kind(&self, path: &str) -> Option<FieldKind> {
        self.ty.fields.get(path).copied()
    }

    fn save(&self) -> State {
        State {
            live: self.live.clone(),
            scopes: self.scopes.clone(),
            diverged: self.diverged,
        }
    }

    fn restore(&mut self, s: State) {
        self.live = s.live;
        self.scopes = s.scopes;
        self.diverged = s.diverged;
    }

    /// Joins branch end states: a guard stays held only if it is held on every branch that
    /// falls through (must-held).
    fn join(&mut self, before: &State, ends: Vec<State>) {
        let through: Vec<&State> = ends.iter().filter(|s| !s.diverged).collect();
        if through.is_empty() {
            self.restore(before.clone());
            self.diverged = !ends.is_empty();
            return;
        }
        // The last state wins for bindings: after a loop whose body re-binds `g = cv.wait(g)`,
        // `g` is the re-acquired guard, held on every path though by different sections.
        let mut merged = through[through.len() - 1].clone();
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

    fn fn_body(&mut self, block: &syn::Block) {
        self.push_scope(true);
        for (name, id) in std::mem::take(&mut self.param_guards) {
            self.bind(name, Binding::Guard(id));
        }
        let v = self.block_inner(block, true);
        let tail_is_path = matches!(block.stmts.last(), Some(syn::Stmt::Expr(e, None)) if matches!(strip_parens(e), syn::Expr::Path(_)));
        if let Some(id) = v.fresh_guard.or(match v.place {
            _ if !tail_is_path => None,
            Some(Place {
                base: Base::Guard(id),
                ref proj,
            }) if proj.is_empty() => Some(id),
            _ => None,
        }) {
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
    fn block(&mut self, block: &syn::Block) -> Val {
        self.push_scope(false);
        let v = self.block_inner(block, false);
        self.pop_scope();
        v
    }

    fn block_inner(&mut self, block: &syn::Block, fn_level: bool) -> Val {
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

    fn stmt(&mut self, stmt: &syn::Stmt) {
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

    fn local(&mut self, local: &syn::Local) {
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

    /// Decides who owns what a `let` initializer produced (R2, R10).
    fn binding_for(&mut self, pat: &syn::Pat, init: &syn::Expr, v: &Val) -> Option<Owned> {
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

    fn is_lock_like(&self, path: &str) -> bool {
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

    fn guard_var(&self, name: &str) -> Option<usize> {
        match self.lookup(name) {
            Some(Binding::Guard(id)) => Some(*id),
            _ => None,
        }
    }

    // ----- expressions ---------------------------------------------------------------------

    /// Evaluates an expression used as a value: a place it denotes is read.
    fn rvalue(&mut self, e: &syn::Expr) -> Val {
        let v = self.expr(e);
        if v.fresh_guard.is_none() {
            if let Some(p) = &v.place {
                self.rvalue_place(p.clone(), line_of(e));
            }
        }
        v
    }

    fn rvalue_place(&mut self, p: Place, line: u32) {
        if matches!(p.base, Base::Guard(_))
            || !p.proj.is_empty()
            || matches!(&p.base, Base::Field { path, .. } if !path.is_empty())
        {
            self.record(&p, AccessKind::Read, "read", line);
        }
    }

    fn expr(&mut self, e: &syn::Expr) -> Val {
        self.depth += 1;
        let v = if self.depth > 200 {
            Val::default()
        } else {
            self.expr_inner(e)
        };
        self.depth -= 1;
        v
    }

    fn expr_inner(&mut self, e: &syn::Expr) -> Val {
        use syn::Expr;
        match e {
            Expr::Path(p) => {
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
            Expr::Field(f) => {
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
            Expr::Reference(r) => {
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
            Expr::Index(i) => {
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
            Expr::Assign(a) => {
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
            Expr::Binary(b) => {
                use syn::BinOp::*;
                match b.op {
                    And(_) | Or(_) => {
                        self.lazy_operand(&b.left);
                        self.lazy_operand(&b.right);
                    }
                    AddAssign(_) | SubAssign(_) | MulAssign(_) | DivAssign(_) | RemAssign(_)
                    | BitXorAssign(_) | BitAndAssign(_) | BitOrAssign(_) | ShlAssign(_)
                    | ShrAssign(_) => {
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
            Expr::Block(b) => self.block(&b.block),
            Expr::Unsafe(u) => self.block(&u.block),
            Expr::Const(c) => self.block(&c.block),
            Expr::If(i) => self.if_expr(i),
            Expr::Match(m) => self.match_expr(m),
            Expr::While(w) => {
                self.while_expr(w);
                Val::default()
            }
            Expr::ForLoop(f) => {
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
            Expr::Loop(l) => {
                self.loop_body(&l.body);
                self.diverged = false;
                Val::default()
            }
            Expr::Closure(c) => {
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
            Expr::Return(r) => {
                if let Some(v) = &r.expr {
                    let val = self.expr(v);
                    let guard = val.fresh_guard.or(match &val.place {
                        Some(Place {
                            base: Base::Guard(id),
                            proj,
                        }) if proj.is_empty() => Some(*id),
                        _ => None,
                    });
                    match guard {
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

    fn lazy_operand(&mut self, e: &syn::Expr) {
        if let syn::Expr::Let(l) = e {
            // `let` operands of a chain are not temporary scopes.
            self.expr(&l.expr);
            return;
        }
        self.push_scope(true);
        self.rvalue(e);
        self.pop_scope();
    }

    fn loop_body(&mut self, body: &syn::Block) {
        let before = self.save();
        self.loop_depth += 1;
        self.push_scope(true);
        self.block(body);
        self.pop_scope();
        self.loop_depth -= 1;
        let end = self.save();
        self.join(&before, vec![before.clone(), end]);
    }

    fn closure_body(&mut self, body: &syn::Expr) {
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

    fn if_expr(&mut self, i: &syn::ExprIf) -> Val {
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

    fn match_expr(&mut self, m: &syn::ExprMatch) -> Val {
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

    fn while_expr(&mut self, w: &syn::ExprWhile) {
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
    fn bind_pattern(&mut self, pat: &syn::Pat, v: &Val) {
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
        for n in names {
            self.bind(n, Binding::Opaque);
        }
    }

    // ----- calls ---------------------------------------------------------------------------

    fn method_call(&mut self, m: &syn::ExprMethodCall) -> Val {
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
            return Val::default();
        };
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

    /// Calls on a lock, atomic, condvar or once field.
    fn sync_call(
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
            "try_write" => Some((Mode::Exclusive, true)),
            "read" | "read_recursive" | "upgradable_read" | "upgradeable_read" | "read_arc"
                if lockish || (unknown && args.is_empty()) =>
            {
                Some((Mode::Shared, false))
            }
            "try_read" => Some((Mode::Shared, true)),
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
                let access = match name {
                    "load" | "get" => AccessKind::Read,
                    "store" | "set" => AccessKind::Write,
                    n if n.starts_with("fetch_")
                        || n.starts_with("compare_")
                        || n == "swap"
                        || n == "rcu"
                        || n == "update" =>
                    {
                        AccessKind::Update
                    }
                    _ => return Some(Val::default()),
                };
                let id =
                    self.new_section(Section::atomic(format!("atomic {path}"), instance, line));
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
                let id =
                    self.new_section(Section::atomic(format!("container {path}"), instance, line));
                self.live.push(id);
                let place = Place {
                    base: Base::Field {
                        instance: instance.to_string(),
                        path: path.to_string(),
                    },
                    proj: vec![],
                };
                self.record_atomic(&place, access, &format!("{name}()"), line);
                self.release(id);
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
                let id = self.new_section(Section::atomic(format!("once {path}"), instance, line));
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
                Some(Val::default())
            }
            _ => None,
        }
    }

    fn record_atomic(&mut self, place: &Place, kind: AccessKind, what: &str, line: u32) {
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

    /// `g = cv.wait(g)` (std, by value) or `cv.wait(&mut g)` (parking_lot): the lock is released
    /// and re-acquired as a new section (R14).
    fn condvar_wait(
        &mut self,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
        line: u32,
    ) {
        self.out.wait_stmts.push(self.cur_stmt);
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

    fn rebind(&mut self, var: &str, id: usize) {
        for s in self.scopes.iter_mut().rev() {
            if let Some(pos) = s.locals.iter().rposition(|(n, _)| n == var) {
                s.locals[pos].1 = Binding::Guard(id);
                return;
            }
        }
    }

    /// The old guard was moved into `wait`: the variable no longer owns a section.
    fn kill_binding_keep(&mut self, var: &str) {
        for s in self.scopes.iter_mut().rev() {
            if let Some(pos) = s.locals.iter().rposition(|(n, _)| n == var) {
                s.locals[pos].1 = Binding::Opaque;
                return;
            }
        }
    }

    fn call(&mut self, c: &syn::ExprCall) -> Val {
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
                }
            }
        }
        let func_path = match &*c.func {
            syn::Expr::Path(p) => Some(
                p.path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        };
        let segs = func_path.unwrap_or_default();
        let last = segs.last().map(String::as_str).unwrap_or("");
        let line = line_of(&*c.func);
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
                    if self.guard_var(&name).is_some()
                        && !matches!(last, "downgrade" | "upgrade" | "map" | "try_map")
                    {
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

    /// `self.helper(..)`: copies the callee's accesses under the sections held here.
    fn call_own_method(
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
    fn mac(&mut self, mac: &syn::Macro) {
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

enum Owned {
    Guard(usize),
    Extended(usize, Option<String>),
    Alias(Place),
}

/// Whether a borrow of a temporary sits in an extending position of a `let` initializer:
/// operands of tuple, array, struct and cast expressions and block tails (R10).
fn extending_borrow(e: &syn::Expr) -> bool {
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

fn strip_parens(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_parens(&p.expr),
        syn::Expr::Group(g) => strip_parens(&g.expr),
        other => other,
    }
}

fn is_clone_like(e: &syn::Expr) -> bool {
    matches!(strip_parens(e), syn::Expr::MethodCall(m) if m.method == "clone")
        || matches!(strip_parens(e), syn::Expr::Call(c) if matches!(&*c.func, syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "clone")))
}

fn has_let(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Let(_) => true,
        syn::Expr::Binary(b) => has_let(&b.left) || has_let(&b.right),
        syn::Expr::Paren(p) => has_let(&p.expr),
        _ => false,
    }
}

/// Whether a pattern takes ownership of the matched value (`g`, `mut g`, `_g`, `Ok(g)`,
/// `(g, t)`), as opposed to `_` or `ref g`.
fn binds_by_value(pat: &syn::Pat) -> bool {
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

fn single_name(pat: &syn::Pat) -> Option<String> {
    let mut names = Vec::new();
    pat_names(pat, &mut names);
    if names.len() == 1 {
        names.pop()
    } else {
        None
    }
}

fn pat_names(pat: &syn::Pat, out: &mut Vec<String>) {
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

fn mentions_self_type(ty: &syn::Type, name: &str) -> bool {
    match ty {
        syn::Type::Reference(r) => mentions_self_type(&r.elem, name),
        syn::Type::Path(p) => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            if last.ident == "Self" || last.ident == name {
                return true;
            }
            if last.ident == "Arc" {
                if let syn::PathArguments::AngleBracketed(a) = &last.arguments {
                    return a.args.iter().any(|g| matches!(g, syn::GenericArgument::Type(t) if mentions_self_type(t, name)));
                }
            }
            false
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    //! Guard-lifetime rules, one snippet each (the E-rows of guards-and-locks.md §3.3). Each
    //! body runs in `fn f(&self)` of a type with `m: Mutex<Vec<u32>>`, `p: AtomicUsize` and
    //! `cv: Condvar`; `probe!()` reads `p`, and the check says whether `m` is held there.
    use super::*;
    use crate::model::PackageInfo;

    const PRELUDE: &str = "use std::sync::{Mutex, MutexGuard, Condvar};\n\
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};\n\
        pub struct T { m: Mutex<Vec<u32>>, p: AtomicUsize, cv: Condvar }\n";

    fn summaries(edition: &str, body: &str, extra: &str) -> HashMap<String, MethodSummary> {
        let body = body.replace("probe!()", "self.p.load(SeqCst)");
        let src = format!("{PRELUDE}impl T {{\n pub fn new() -> Self {{ todo!() }}\n pub fn f(&self) {{\n{body}\n}}\n{extra}\n}}\n");
        let ast = crate::source::parse_file(std::path::Path::new("lib.rs"), &src)
            .expect("snippet parses");
        let files = vec![crate::source::SourceFile {
            path: "lib.rs".into(),
            module: vec![],
            ast,
        }];
        let pkg = PackageInfo {
            name: "t".into(),
            lib_name: "t".into(),
            edition: edition.into(),
            ..Default::default()
        };
        let mut diags = Vec::new();
        let found = crate::discover::discover(&files, None, &pkg, &[]);
        analyze_type(&found[0], edition, &mut diags)
    }

    /// Whether `m` is held at every `probe!()` in `f`.
    fn held(edition: &str, body: &str, extra: &str) -> bool {
        let s = summaries(edition, body, extra);
        let f = &s["f"];
        let probes: Vec<&Access> = f.accesses.iter().filter(|a| a.field == "p").collect();
        assert!(!probes.is_empty(), "the snippet has no probe: {body}");
        probes
            .iter()
            .all(|a| a.sections.iter().any(|id| f.sections[*id].lock == "m"))
    }

    /// Whether `f` takes `m` while already holding it.
    fn deadlocks(edition: &str, body: &str) -> bool {
        let s = summaries(edition, body, "");
        let f = &s["f"];
        f.order
            .iter()
            .any(|(h, n)| f.sections[*h].lock == "m" && f.sections[*n].lock == "m")
    }

    fn check(rows: &[(&str, &str, bool, bool)]) {
        let mut failures = Vec::new();
        for (case, body, in2021, in2024) in rows {
            for (edition, want) in [("2021", in2021), ("2024", in2024)] {
                let got = held(edition, body, "");
                if got != *want {
                    failures.push(format!("{case} ({edition}): held = {got}, expected {want}"));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn guard_lifetimes_follow_the_probe_table() {
        check(&[
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
        ]);
    }

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
