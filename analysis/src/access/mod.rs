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
use std::collections::{BTreeSet, HashMap};
use syn::spanned::Spanned;

mod calls;
mod guards;
mod walk;

use guards::*;
use walk::*;

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

    /// What a method of an atomic (std's, or a cell's such as crossbeam's `AtomicCell`,
    /// arc-swap's) does to it, by its name; `None` for one that is no access.
    pub(crate) fn of_atomic(name: &str) -> Option<AccessKind> {
        match name {
            "load" | "get" => Some(AccessKind::Read),
            "store" | "set" => Some(AccessKind::Write),
            n if n.starts_with("fetch_")
                || n.starts_with("compare_")
                || n == "swap"
                || n == "rcu"
                || n == "update" =>
            {
                Some(AccessKind::Update)
            }
            _ => None,
        }
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

/// A call made while a lock is held into code the analysis does not follow (another type's
/// method, a trait object, a closure or callback), or a lock of another object taken there.
#[derive(Debug, Clone)]
pub(crate) struct Unseen {
    /// What is called (`child.tick()`, `self.handler`), or the lock taken.
    pub what: String,
    pub line: u32,
    /// A lock of another object (`entry.lock()` on guarded data, a parameter's lock).
    pub lock: bool,
    /// The non-atomic sections held at the call (none: it matters only where a caller holds
    /// one).
    pub sections: Vec<usize>,
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
    /// Calls into code not followed, and locks of other objects taken, with the locks held.
    pub unseen: Vec<Unseen>,
    /// Methods called on data that is not the type's own fields (an element of guarded data,
    /// a local, a parameter), by name, with the locks held: `bar.draw()` holding the
    /// display's state. Another type of the crate with a method of that name may be the callee
    /// (`cross.rs` follows them between a type and its handles, for lock order).
    pub calls_out: Vec<CallOut>,
    /// Lock acquisitions and atomic operations on the type's fields, where they are written.
    pub sites: Vec<Site>,
    /// Atomic `bool` fields the body stores `false` to (`self.busy.store(false, o)`): a
    /// flag it releases, which makes a compare-exchange of it from `false` to `true` an
    /// attempt ([`crate::model::SyncOp::FlagAttempt`]).
    pub flags_cleared: Vec<String>,
}

/// A lock acquisition or atomic operation written in the body: `receiver.op(..)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    pub op: crate::model::SyncOp,
    /// The field operated on (`state`, `inner.ready`), as the walk names it.
    pub field: String,
    /// Start and end of the receiver, end of the call (line, column).
    pub receiver: (u32, u32),
    pub receiver_end: (u32, u32),
    pub call_end: (u32, u32),
}

/// A method called on data that is not the type's own, holding a lock.
#[derive(Debug, Clone)]
pub(crate) struct CallOut {
    pub name: String,
    pub line: u32,
    /// The non-atomic sections held.
    pub sections: Vec<usize>,
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
    // The field paths of followed enum variants (`0.Single.0`): a method called on a local
    // (`q.push(v)` in a `match` arm binding `q`) may be any of theirs.
    let variants: BTreeSet<&str> = fns
        .iter()
        .filter_map(|f| f.field.as_deref())
        .filter(|f| f.contains('.'))
        .collect();
    for (i, f) in fns.iter().enumerate() {
        let mut callees = Vec::new();
        let mut instances = vec!["self".to_string()];
        instances.extend(instance_params(&f.item.sig, &ty.model.name));
        collect_self_calls(&f.item.block, &instances, f.field.as_deref(), &mut callees);
        if f.field.is_none() && !variants.is_empty() {
            let mut on_locals = Vec::new();
            collect_local_calls(&f.item.block, &instances, &mut on_locals);
            for m in on_locals {
                callees.extend(variants.iter().map(|v| format!("{v}::{m}")));
            }
        }
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

/// Parameters whose calls run code the analysis does not see: a trait object, an `impl
/// Trait`, a generic parameter or a type other than the standard library's plain values (a
/// handle of another type, a callback). Guards and instances of the type itself are followed.
fn foreign_params(sig: &syn::Signature, type_name: &str) -> Vec<String> {
    let typed = sig.inputs.iter().filter_map(|a| match a {
        syn::FnArg::Typed(t) => Some(t),
        syn::FnArg::Receiver(_) => None,
    });
    typed
        .filter(|t| !mentions_self_type(&t.ty, type_name) && runs_unseen_code(&t.ty))
        .filter_map(|t| match &*t.pat {
            syn::Pat::Ident(id) => Some(id.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// Whether calls on a value of this type may run code of another type: anything but the
/// standard library's plain values and guards.
fn runs_unseen_code(ty: &syn::Type) -> bool {
    const PLAIN: &[&str] = &[
        "str",
        "String",
        "Vec",
        "VecDeque",
        "Option",
        "Result",
        "HashMap",
        "HashSet",
        "BTreeMap",
        "BTreeSet",
        "Duration",
        "Instant",
        "SystemTime",
        "Path",
        "PathBuf",
        "OsStr",
        "OsString",
        "Cow",
        "Ordering",
        "Range",
        "bool",
        "char",
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "usize",
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "isize",
        "f32",
        "f64",
    ];
    if let syn::Type::Reference(r) = ty {
        return runs_unseen_code(&r.elem);
    }
    let held = crate::discover::peel_pointers(ty);
    match held {
        syn::Type::TraitObject(_) | syn::Type::ImplTrait(_) => true,
        syn::Type::Path(_) => crate::api::types::type_name(held)
            .is_some_and(|n| !PLAIN.contains(&n.as_str()) && !n.ends_with("Guard")),
        syn::Type::Slice(s) => runs_unseen_code(&s.elem),
        syn::Type::Array(a) => runs_unseen_code(&a.elem),
        _ => false,
    }
}

/// Methods of the standard traits whose user implementations do not take locks of their own
/// as a rule (a `Clone` or `Hash` of a key): calls of them are not counted as unseen.
const PLAIN_TRAIT_METHODS: &[&str] = &[
    "clone",
    "eq",
    "ne",
    "cmp",
    "partial_cmp",
    "hash",
    "borrow",
    "as_ref",
    "into",
    "to_string",
    "to_owned",
    "fmt",
    "len",
    "is_empty",
    "iter",
    "get",
    "contains",
    "contains_key",
    "as_str",
];

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
                syn::Expr::Field(f) if is_self(&f.base) => {
                    if let syn::Member::Named(field) = &f.member {
                        match self.2 {
                            // A followed type's own field (`self.receivers.notify()` in a
                            // variant's channel: `flavor.Array.0.receivers::notify`).
                            Some(prefix) => self.0.push(format!("{prefix}.{field}::{}", m.method)),
                            None => self.0.push(format!("{field}::{}", m.method)),
                        }
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

/// The methods called on a local variable (`q.push(v)`), not on an instance.
fn collect_local_calls(block: &syn::Block, instances: &[String], out: &mut Vec<String>) {
    struct V<'o>(&'o mut Vec<String>, &'o [String]);
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if let syn::Expr::Path(p) = strip_parens(&m.receiver) {
                if p.path
                    .get_ident()
                    .is_some_and(|i| !self.1.iter().any(|n| i == n))
                {
                    self.0.push(m.method.to_string());
                }
            }
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    syn::visit::Visit::visit_block(&mut V(out, instances), block);
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

    /// The guard the value is: one it created, or one it names (a guard variable, not a
    /// place inside the guarded data).
    fn guard(&self) -> Option<usize> {
        self.fresh_guard.or(match &self.place {
            Some(Place {
                base: Base::Guard(id),
                proj,
            }) if proj.is_empty() => Some(*id),
            _ => None,
        })
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
    /// Parameters whose methods (or which, called) run code the analysis does not follow:
    /// trait objects, `impl Trait` and generic parameters, other types.
    foreign: Vec<String>,
    /// What could not be followed, with its line.
    notes: Vec<(String, u32)>,
    depth: usize,
    /// The value of the last `Condvar::wait` call (the re-acquired guard).
    last_wait_val: Option<Val>,
    /// The mutex the last `Condvar::wait`'s guard (passed by value) is of, as an expression
    /// at the call (`self.items`).
    last_wait_lock: Option<String>,
    /// Whether the last `Condvar::wait` borrowed a guard of the type's own lock (`&mut g`,
    /// parking_lot's), so that its site is a [`crate::model::SyncOp::WaitMut`].
    last_wait_mut: bool,
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

fn end_of<T: Spanned>(t: &T) -> (u32, u32) {
    let e = t.span().end();
    (e.line as u32, e.column as u32)
}

/// The synchronisation sites of a type's functions (public methods and helpers), each once,
/// in source order; none in a function a macro wrote (its spans point into the macro). A
/// notify is `waited` when some site waits on its condition variable (std's waits, which take
/// the guard by value, and parking_lot's untimed `wait(&mut guard)`); only waited notifies
/// become schedule points.
pub(crate) fn sync_sites(
    ty: &FoundType,
    summaries: &HashMap<String, MethodSummary>,
) -> Vec<crate::model::SyncSite> {
    use crate::model::SyncOp;
    let waited: std::collections::HashSet<&str> = summaries
        .values()
        .flat_map(|s| &s.sites)
        .filter(|s| matches!(s.op, SyncOp::Wait { .. } | SyncOp::WaitMut))
        .map(|s| s.field.as_str())
        .collect();
    let mut out: Vec<crate::model::SyncSite> = Vec::new();
    for f in ty.fns.iter().filter(|f| f.ref_self) {
        if ty.expanded.contains(&f.name) {
            continue;
        }
        let Some(summary) = summaries.get(&f.key()) else {
            continue;
        };
        for site in &summary.sites {
            let ordered = site.receiver <= site.receiver_end && site.receiver_end < site.call_end;
            if !ordered {
                continue;
            }
            let op = match &site.op {
                SyncOp::Notify { all, .. } => SyncOp::Notify {
                    all: *all,
                    waited: waited.contains(site.field.as_str()),
                },
                // A flag the function never releases is no lock (a once flag: failing to
                // set it is what a later call alone finds too).
                SyncOp::FlagAttempt if !summary.flags_cleared.contains(&site.field) => {
                    SyncOp::Atomic
                }
                op => op.clone(),
            };
            let writes_under = if op == SyncOp::Atomic {
                writes_under(ty, summaries, &site.field)
            } else {
                None
            };
            out.push(crate::model::SyncSite {
                method: f.key(),
                op,
                receiver: crate::model::Span {
                    file: f.file.to_path_buf(),
                    line: site.receiver.0,
                    column: site.receiver.1,
                },
                receiver_end: site.receiver_end,
                call_end: site.call_end,
                untested_owner: None,
                writes_under,
                helper: None,
            });
        }
    }
    out.sort_by(|a, b| {
        (&a.receiver.file, a.receiver.line, a.receiver.column).cmp(&(
            &b.receiver.file,
            b.receiver.line,
            b.receiver.column,
        ))
    });
    out.dedup_by(|a, b| a.receiver == b.receiver);
    out
}

/// The lock every write of atomic `field` is made holding, exclusively, in all of `ty`'s
/// `&self` functions (a helper's writes count in its callers, with their locks, and on its
/// own, without them: a helper that some path calls unlocked is seen so): `None` when some
/// write holds none in common, is on another instance (`other.count`), or a function has no
/// summary to tell.
fn writes_under(
    ty: &FoundType,
    summaries: &HashMap<String, MethodSummary>,
    field: &str,
) -> Option<String> {
    let mut common: Option<BTreeSet<String>> = None;
    for f in ty.fns.iter().filter(|f| f.ref_self) {
        let summary = summaries.get(&f.key())?;
        for access in summary
            .accesses
            .iter()
            .filter(|a| a.field == field && a.kind.writes())
        {
            if access.instance != "self" {
                return None;
            }
            let held: BTreeSet<String> = access
                .sections
                .iter()
                .map(|&id| &summary.sections[id])
                .filter(|s| !s.atomic && s.instance == "self" && s.mode == Mode::Exclusive)
                .map(|s| s.lock.clone())
                .collect();
            let now = match common.take() {
                None => held,
                Some(before) => before.intersection(&held).cloned().collect(),
            };
            if now.is_empty() {
                return None;
            }
            common = Some(now);
        }
    }
    common?.into_iter().next()
}

impl<'a> Walker<'a> {
    pub(super) fn new(
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
            foreign: Vec::new(),
            notes: Vec::new(),
            depth: 0,
            last_wait_val: None,
            last_wait_lock: None,
            last_wait_mut: false,
            closure_param: None,
            prefix: String::new(),
            loop_depth: 0,
            param_guards: Vec::new(),
        }
    }

    pub(super) fn instances_from(&mut self, sig: &syn::Signature) {
        self.instances
            .extend(instance_params(sig, &self.ty.model.name));
        self.foreign = foreign_params(sig, &self.ty.model.name);
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

    /// The non-atomic sections held now.
    pub(super) fn held(&self) -> Vec<usize> {
        self.live
            .iter()
            .copied()
            .filter(|&s| !self.out.sections[s].atomic)
            .collect()
    }

    /// Records a call into code not followed (or another object's lock), with the locks held
    /// (none here may still be some where a caller calls this method).
    /// Records a method called on data not the type's own, with the locks held (none here
    /// may still be some where a caller calls this method).
    pub(super) fn call_out(&mut self, name: &str, line: u32) {
        let sections = self.held();
        self.out.calls_out.push(CallOut {
            name: name.to_string(),
            line,
            sections,
        });
    }

    pub(super) fn unseen(&mut self, what: String, line: u32, lock: bool) {
        let sections = self.held();
        self.out.unseen.push(Unseen {
            what,
            line,
            lock,
            sections,
        });
    }

    pub(super) fn record(&mut self, place: &Place, kind: AccessKind, what: &str, line: u32) {
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

    pub(super) fn field_kind(&self, path: &str) -> Option<FieldKind> {
        self.ty.fields.get(path).copied()
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
pub(super) mod testing {
    //! Guard-lifetime rules, one snippet each (the E-rows of guards-and-locks.md §3.3). Each
    //! body runs in `fn f(&self)` of a type with `m: Mutex<Vec<u32>>`, `p: AtomicUsize` and
    //! `cv: Condvar`; `probe!()` reads `p`, and the check says whether `m` is held there.
    use super::*;
    use crate::model::PackageInfo;

    pub(super) const PRELUDE: &str = "use std::sync::{Mutex, MutexGuard, Condvar};\n\
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};\n\
        pub struct T { m: Mutex<Vec<u32>>, p: AtomicUsize, cv: Condvar }\n";

    pub(super) fn summaries(
        edition: &str,
        body: &str,
        extra: &str,
    ) -> HashMap<String, MethodSummary> {
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
        let found = crate::discover::discover(
            &files,
            &[],
            None,
            &pkg,
            &[],
            &crate::api::NoExternals,
            &crate::api::usage::Usages::default(),
        );
        analyze_type(&found[0], edition, &mut diags)
    }

    /// Whether `m` is held at every `probe!()` in `f`.
    pub(super) fn held(edition: &str, body: &str, extra: &str) -> bool {
        let s = summaries(edition, body, extra);
        let f = &s["f"];
        let probes: Vec<&Access> = f.accesses.iter().filter(|a| a.field == "p").collect();
        assert!(!probes.is_empty(), "the snippet has no probe: {body}");
        probes
            .iter()
            .all(|a| a.sections.iter().any(|id| f.sections[*id].lock == "m"))
    }

    /// Whether `f` takes `m` while already holding it.
    pub(super) fn deadlocks(edition: &str, body: &str) -> bool {
        let s = summaries(edition, body, "");
        let f = &s["f"];
        f.order
            .iter()
            .any(|(h, n)| f.sections[*h].lock == "m" && f.sections[*n].lock == "m")
    }

    pub(super) fn check(rows: &[(&str, &str, bool, bool)]) {
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
}
