//! Handles and pairs across types. A type whose method returns another thread-safe type of the
//! crate (`Display::add(&self) -> Handle`) hands out handles that share its state; the bugs
//! between them (a lock-order inversion between the display's `render` and a handle's `tick`)
//! live in pairs that span the two types. Each such method's result becomes a *handle* of
//! the tests of the type that returns it: the handle type's methods join that type's methods
//! as `Handle::tick`, paired with its own, and the pairs across the two are grouped by the
//! locks each side takes, matched by lock type (`Mutex<State>` held by the display and taken
//! by the handle is, as far as a static analysis can tell, the same lock).
//!
//! A cross pair is never removed: the analysis cannot see that a handle's lock is the one its
//! owner serialises on. It is high when the two methods take two lock types in opposite
//! orders (or one takes a lock of another object, or calls out, holding the lock type the
//! other takes holding a second one): a lock-order risk across types; low otherwise.

use crate::access::MethodSummary;
use crate::api::render::idents;
use crate::api::types::{type_args, type_name};
use crate::discover::FoundType;
use crate::model::*;
use crate::refs::{self, MethodRef};
use std::collections::{BTreeSet, HashMap};

/// What a method's locking looks like by lock type: the types it takes, and each acquisition
/// made holding another (`(held, taken, line)`; `None` when the taken lock is another object's
/// or a call the analysis does not follow, which may take any lock).
#[derive(Debug, Clone, Default)]
pub(crate) struct LockFacts {
    takes: BTreeSet<String>,
    orders: Vec<LockOrder>,
    /// Methods called on data not the type's own holding a lock (`(held, method, line)`):
    /// [`followed`] looks them up in the other type of a pair.
    calls: Vec<(String, String, u32)>,
    /// The method's accesses and sections, fields named by the local type that holds them
    /// when a field holds one (`inner.len` → `Inner.len`), else by this type (`Tx.count`):
    /// two types holding one `Arc<Inner>` meet on `Inner`'s fields.
    shared: MethodSummary,
}

/// An acquisition made holding a lock.
#[derive(Debug, Clone)]
struct LockOrder {
    held: String,
    /// The lock type taken; `None` for another object's lock or a call the analysis does not
    /// follow, which may take any.
    taken: Option<String>,
    line: u32,
    /// The other type's method that takes it, when [`followed`] found it through a call.
    through: Option<String>,
}

impl LockOrder {
    fn new(held: String, taken: Option<String>, line: u32) -> LockOrder {
        LockOrder {
            held,
            taken,
            line,
            through: None,
        }
    }
}

/// The lock facts of every method of a type, by method name.
pub(crate) fn lock_facts(
    ty: &FoundType,
    summaries: &HashMap<String, MethodSummary>,
) -> HashMap<String, LockFacts> {
    summaries
        .iter()
        .filter(|(name, _)| !MethodRef::parse(name).is_handle())
        .map(|(name, s)| {
            let type_of = |id: usize| {
                let section = s.sections.iter().find(|x| x.id == id)?;
                if section.atomic || section.instance != "self" {
                    return None;
                }
                ty.lock_types.get(&section.lock).cloned()
            };
            let mut facts = LockFacts {
                shared: shared_names(ty, s),
                ..LockFacts::default()
            };
            for section in &s.sections {
                facts.takes.extend(type_of(section.id));
            }
            for &(held, taken) in &s.order {
                if let Some(h) = type_of(held) {
                    let line = s
                        .sections
                        .iter()
                        .find(|x| x.id == taken)
                        .map_or(0, |x| x.line);
                    facts.orders.push(LockOrder::new(h, type_of(taken), line));
                }
            }
            for unseen in &s.unseen {
                for &held in &unseen.sections {
                    if let Some(h) = type_of(held) {
                        facts.orders.push(LockOrder::new(h, None, unseen.line));
                    }
                }
            }
            for call in &s.calls_out {
                for &held in &call.sections {
                    if let Some(h) = type_of(held) {
                        facts.calls.push((h, call.name.clone(), call.line));
                    }
                }
            }
            (name.clone(), facts)
        })
        .collect()
}

/// `s` with its fields and locks named as [`LockFacts::shared`] says.
fn shared_names(ty: &FoundType, s: &MethodSummary) -> MethodSummary {
    // The longest followed prefix names the type: `flavor.Array.0.head` is the array
    // channel's `Channel.head` in a `Sender` and a `Receiver` alike.
    let rename = |path: &str| -> String {
        let mut cut = Some(path.len());
        while let Some(at) = cut {
            let (root, rest) = (&path[..at], path.get(at + 1..).unwrap_or(""));
            if let Some(inner) = ty.inner_types.get(root) {
                return match rest {
                    "" => inner.clone(),
                    rest => format!("{inner}.{rest}"),
                };
            }
            cut = root.rfind('.');
        }
        format!("{}.{path}", ty.model.name)
    };
    let mut s = s.clone();
    for a in &mut s.accesses {
        a.field = rename(&a.field);
    }
    for section in &mut s.sections {
        section.lock = rename(&section.lock);
    }
    s
}

/// Adds to each type the methods of the handles its methods return, with their pairs and
/// split points. `facts[i]` are the lock facts of `types[i]`.
pub(crate) fn add_handles(types: &mut [TypeModel], facts: &[HashMap<String, LockFacts>]) {
    let before: Vec<TypeModel> = types.to_vec();
    let mut handed_out: Vec<(usize, String)> = Vec::new();
    for (i, owner) in types.iter_mut().enumerate() {
        if !owner.supported() {
            continue;
        }
        let mut seen_handles = BTreeSet::new();
        let mut added = method_handles(&before, i, &mut seen_handles);
        added.extend(tuple_handles(&before, i, &mut seen_handles));
        if added.is_empty() {
            continue;
        }
        share_handles_code(owner, &before, &seen_handles);
        add_cross_pairs(owner, &added, &facts[i], facts);
        add_handle_pairs(owner, &before, &added);
        for &h in &seen_handles {
            let from = added
                .iter()
                .find(|(x, _)| *x == h)
                .and_then(|(_, m)| m.via.as_ref())
                .map_or_else(String::new, |v| v.from.clone());
            handed_out.push((h, format!("{}::{from}", owner.name)));
        }
        owner.methods.extend(added.into_iter().map(|(_, m)| m));
    }
    // A handle nothing outside the crate builds is tested through its owners.
    for (h, owner) in handed_out {
        // A supported handle has no reason, and is tested on its own.
        let Some(reason) = &mut types[h].reason else {
            continue;
        };
        match reason {
            Reason::Handle { owners } => owners.push(owner),
            Reason::NoConstructor | Reason::NoUsableConstructor => {
                *reason = Reason::Handle {
                    owners: vec![owner],
                }
            }
            _ => {}
        }
    }
}

/// The methods of the handles the methods of `types[owner]` return (by the handle type's
/// index), each named `Handle::m`; `seen` gets each handle type.
fn method_handles(
    types: &[TypeModel],
    owner: usize,
    seen: &mut BTreeSet<usize>,
) -> Vec<(usize, Method)> {
    let generics = &types[owner].generics;
    let mut added: Vec<(usize, Method)> = Vec::new();
    for from in types[owner]
        .methods
        .iter()
        .filter(|m| m.supported() && m.via.is_none())
    {
        let Some(returns) = from.returns.as_deref() else {
            continue;
        };
        let plain = returned_name(returns).and_then(|(name, shape)| {
            let name = instantiated_name(generics, name);
            Some((handle_type(types, owner, &name)?, shape, None))
        });
        let Some((h, shape, generic)) = plain.or_else(|| {
            let (h, generic) = generic_handle(types, owner, generics, returns)?;
            Some((h, ReturnShape::SelfValue, Some(generic)))
        }) else {
            continue;
        };
        if !seen.insert(h) {
            continue;
        }
        let handle = &types[h];
        for m in handle
            .methods
            .iter()
            .filter(|m| m.supported() && m.via.is_none())
        {
            let renaming = generic.as_ref().map(|g| (type_params(handle), &g.args[..]));
            let Some(mut method) = handle_method(
                handle,
                m,
                Via {
                    ty: handle.path.clone(),
                    from: from.name.clone(),
                    shape,
                    kept: generic.as_ref().map(|g| g.kept.clone()),
                },
                renaming,
            ) else {
                continue;
            };
            // The handle's own handle (`Db::open_tree` answering a `Tree`), by the rule
            // that made `handle` one of the owner's.
            method.hands_out = m
                .returns
                .as_deref()
                .and_then(returned_name)
                .filter(|(_, shape)| *shape != ReturnShape::Guard)
                .and_then(|(name, shape)| {
                    let name = instantiated_name(&handle.generics, name);
                    Some(HandedOut {
                        ty: types[handle_type(types, h, &name)?].path.clone(),
                        shape,
                    })
                });
            added.push((h, method));
        }
    }
    added
}

/// Gives `owner` what the code of its handles (`handles`, indices into `types`) has that its
/// tests meet: their value types, their split points and synchronisation sites (named
/// `Handle::m`).
fn share_handles_code(owner: &mut TypeModel, types: &[TypeModel], handles: &BTreeSet<usize>) {
    // The owner and its handles share state (`Worker` and `Stealer` one `Inner`): the
    // writes of one type's code are not all there are.
    for site in &mut owner.sync_sites {
        site.writes_under = None;
    }
    for &h in handles {
        let handle = &types[h];
        for value in &handle.values {
            if !owner.values.iter().any(|v| v.path == value.path) {
                owner.values.push(value.clone());
            }
        }
        for point in &handle.split_points {
            owner.split_points.push(SplitPoint {
                method: refs::handle_method(&handle.name, &point.method),
                ..point.clone()
            });
        }
        for site in &handle.sync_sites {
            if !owner.sync_sites.iter().any(|s| s.receiver == site.receiver) {
                owner.sync_sites.push(SyncSite {
                    method: refs::handle_method(&handle.name, &site.method),
                    writes_under: None,
                    ..site.clone()
                });
            }
        }
    }
}

/// Pairs each of `owner`'s own methods with each handle method `added`, grouped by the locks
/// the two take. `own_facts` are the owner's lock facts, `facts[h]` handle type `h`'s.
fn add_cross_pairs(
    owner: &mut TypeModel,
    added: &[(usize, Method)],
    own_facts: &HashMap<String, LockFacts>,
    facts: &[HashMap<String, LockFacts>],
) {
    let own: Vec<String> = owner
        .methods
        .iter()
        .filter(|m| m.supported() && m.via.is_none())
        .map(|m| m.name.clone())
        .collect();
    for a in &own {
        for (h, b) in added {
            let (handle_name, method) = b.handle_parts().unwrap_or_default();
            // Each side's calls into the other type, followed for the locks they take.
            let fa = followed(own_facts.get(a.as_str()), &facts[*h], handle_name);
            let fb = followed(facts[*h].get(method), own_facts, &owner.name);
            let (group, reasons) = classify(
                (a, Some(&fa)),
                (&b.name, Some(&fb)),
                handle_name,
                &b.via.as_ref().map(|v| v.from.clone()).unwrap_or_default(),
                owner.confined,
            );
            owner.pairs.push(Pair {
                methods: [a.clone(), b.name.clone()],
                group,
                reasons,
            });
        }
    }
}

/// Pairs the handle methods `added` with each other and themselves: as the handle type's own
/// pair is grouped (`types[h]`), a removed one kept low.
fn add_handle_pairs(owner: &mut TypeModel, types: &[TypeModel], added: &[(usize, Method)]) {
    for (x, (h, a)) in added.iter().enumerate() {
        for (_, b) in &added[x..] {
            let own_name = |m: &Method| MethodRef::parse(&m.name).method().to_string();
            let (na, nb) = (own_name(a), own_name(b));
            let in_handle = types[*h].pairs.iter().find(|p| {
                p.methods == [na.clone(), nb.clone()] || p.methods == [nb.clone(), na.clone()]
            });
            let (group, reasons) = match in_handle {
                // Two calls on one handle conflict as the handle type's own pair does,
                // but a removal there trusted the handle's lock alone: keep it low here.
                Some(p) if p.group == Group::Removed => (
                    Group::Low,
                    vec![format!(
                        "on handles from one owner; alone, `{}` would remove it: {}",
                        types[*h].name,
                        p.reasons.join("; ")
                    )],
                ),
                Some(p) => (p.group, p.reasons.clone()),
                None => (Group::Low, vec!["two handle methods".to_string()]),
            };
            owner.pairs.push(Pair {
                methods: [a.name.clone(), b.name.clone()],
                group,
                reasons,
            });
        }
    }
}

/// The pairs of a method that hands out a scope guard ([`ScopeGuard`]) are judged with the
/// guard's finishing methods too: the guard outlives the call, and a scope's finishing call
/// runs the guard's own code (`Reservation::confirm`, two critical sections on the owner's
/// table) beside the other thread's call. A pair the guard's code conflicts with on a shared
/// field (through the owner it borrows) is high; any other pair of the method is at least low,
/// never removed: what the method's own locks show is not all its scopes do. `facts[i]` are
/// the lock facts of `types[i]`.
pub(crate) fn judge_scope_pairs(types: &mut [TypeModel], facts: &[HashMap<String, LockFacts>]) {
    let paths: Vec<String> = types.iter().map(|t| t.path.clone()).collect();
    for (i, ty) in types.iter_mut().enumerate() {
        for scope in &ty.scopes {
            let guard_facts = paths
                .iter()
                .position(|p| *p == scope.guard)
                .and_then(|g| facts.get(g));
            for pair in ty.pairs.iter_mut() {
                let Some(other) = (if pair.methods[0] == scope.from {
                    Some(&pair.methods[1])
                } else if pair.methods[1] == scope.from {
                    Some(&pair.methods[0])
                } else {
                    None
                }) else {
                    continue;
                };
                let other_facts = facts[i].get(other.as_str());
                let mut high = Vec::new();
                for finisher in &scope.finishers {
                    let name = &finisher.method.name;
                    let (Some(fa), Some(fb)) =
                        (guard_facts.and_then(|f| f.get(name.as_str())), other_facts)
                    else {
                        continue;
                    };
                    let guard_name = scope.guard.rsplit("::").next().unwrap_or(&scope.guard);
                    for reason in crate::group::shared_field_conflicts(
                        &format!("{guard_name}::{name}"),
                        &fa.shared,
                        other,
                        &fb.shared,
                    ) {
                        high.push(format!("in a scope of `{}`'s guard: {reason}", scope.from));
                    }
                }
                if !high.is_empty() && pair.group != Group::High {
                    pair.group = Group::High;
                    pair.reasons = high;
                } else if pair.group == Group::Removed {
                    pair.group = Group::Low;
                    pair.reasons.insert(
                        0,
                        format!(
                            "`{}` hands out a `{}` that tests keep in scopes: the guard's own \
                             methods run beside the other call too",
                            scope.from, scope.guard
                        ),
                    );
                }
            }
        }
    }
}

/// Gives a parameter `&Handle` of a type's method, where `Handle` is a type one of its methods
/// returns, a kept handle for its argument (`insert_after(&self, at: &Bar, ..)`), so that the
/// method is called. Runs before the pairs are grouped, since it makes methods callable.
pub(crate) fn take_handles(types: &mut [TypeModel]) {
    let before: Vec<TypeModel> = types.to_vec();
    for (i, owner) in types.iter_mut().enumerate() {
        if !owner.supported() {
            continue;
        }
        let mut handles: Vec<(String, String, ReturnShape)> = Vec::new();
        for from in owner
            .methods
            .iter()
            .filter(|m| m.supported() && m.via.is_none())
        {
            let Some((name, shape)) = from.returns.as_deref().and_then(returned_name) else {
                continue;
            };
            // A guard borrows its owner: no test keeps one to pass along.
            if shape == ReturnShape::Guard {
                continue;
            }
            if let Some(h) = handle_type(&before, i, &name) {
                if !handles.iter().any(|(n, _, _)| *n == name) {
                    handles.push((name, before[h].path.clone(), shape));
                }
            }
        }
        // What the type's own methods return, unwrapped: a parameter of that type nothing
        // else builds takes a value kept from one of them.
        // Makers first (`insert(v) -> Key`): a getter with no arguments returning an `Option`
        // (`first() -> Option<Key>`) answers `None` on a fresh instance, and is no source.
        let mut returned: Vec<(String, String, ReturnShape)> = Vec::new();
        let mut sources: Vec<&Method> = owner
            .methods
            .iter()
            .filter(|m| m.supported() && m.via.is_none())
            .collect();
        sources.sort_by_key(|m| m.params.is_empty());
        for from in sources {
            if let Some((ty, shape)) = from.returns.as_deref().and_then(returned_value) {
                let getter = from.params.is_empty() && shape != ReturnShape::SelfValue;
                if !getter && !returned.iter().any(|(t, _, _)| *t == ty) {
                    returned.push((ty, from.name.clone(), shape));
                }
            }
        }
        if handles.is_empty() && returned.is_empty() {
            continue;
        }
        for m in owner.methods.iter_mut().filter(|m| m.via.is_none()) {
            let mut problems = match &m.reason {
                Some(Reason::Signature { problems }) => problems.clone(),
                _ if m.supported() => Vec::new(),
                _ => continue,
            };
            for p in m.params.iter_mut() {
                // What the API model made of it: nothing, a value it cannot build, or a
                // fresh one from a method of the receiver, where a kept handle can do.
                let failed = problems
                    .iter()
                    .any(|pr| matches!(pr, Problem::Parameter { name, .. } if *name == p.name));
                let a_handle =
                    referenced_name(&p.ty).is_some_and(|n| handles.iter().any(|(h, _, _)| *h == n));
                // A value of the crate's own type that a method of the type returns: kept from
                // that method, and when covcon builds the type too, built half of the time.
                let built = match &p.kind {
                    ParamKind::Value { .. } => Some(&p.kind),
                    ParamKind::Ref { inner } if matches!(**inner, ParamKind::Value { .. }) => {
                        Some(&**inner)
                    }
                    _ => None,
                };
                if let Some(built) = built.filter(|_| !a_handle) {
                    let or = (!failed).then(|| Box::new(built.clone()));
                    if let Some(kept) = kept_value(&p.ty, &m.name, &returned, or) {
                        p.kind = kept;
                        problems.retain(
                            |pr| !matches!(pr, Problem::Parameter { name, .. } if *name == p.name),
                        );
                        continue;
                    }
                }
                let replace = match &p.kind {
                    ParamKind::Unsupported | ParamKind::Value { .. } => failed,
                    ParamKind::Ref { inner } => {
                        failed && matches!(**inner, ParamKind::Value { .. })
                    }
                    ParamKind::FromReceiver { by_ref: true, .. } => true,
                    _ => false,
                };
                if !replace {
                    continue;
                }
                let Some(name) = referenced_name(&p.ty) else {
                    continue;
                };
                if let Some((_, ty, shape)) = handles.iter().find(|(n, _, _)| *n == name) {
                    p.kind = ParamKind::Handle {
                        ty: ty.clone(),
                        shape: *shape,
                    };
                    problems.retain(
                        |pr| !matches!(pr, Problem::Parameter { name, .. } if *name == p.name),
                    );
                }
            }
            if problems.is_empty() {
                m.reason = None;
            } else {
                m.reason = Reason::signature(problems);
            }
        }
    }
}

/// What a parameter written `ty` of `method` takes when a method of the type returns that type
/// (`returned`: type, method, how it is wrapped): the value a call of that method returned
/// (`ParamKind::Returned`), or, with `or`, that half of the time and a built value otherwise.
/// An opaque key nothing else builds (`remove(key: Key)`) has no `or`; a value type the crate
/// builds too (`revoke(grant: Grant)` with a public `Grant::new(slot, epoch)`, as a
/// generational arena's index is built from its raw parts) has one: a built value names what
/// the type made only by chance, and a race on an entry needs one that does. `None` when no
/// other method returns the type, or for a `&mut`.
fn kept_value(
    ty: &str,
    method: &str,
    returned: &[(String, String, ReturnShape)],
    or: Option<Box<ParamKind>>,
) -> Option<ParamKind> {
    let (by_ref, written) = passed_as(ty)?;
    let written = normalized(written);
    let (ty, from, shape) = returned
        .iter()
        .find(|(t, from, _)| *t == written && from != method)?;
    Some(ParamKind::Returned {
        from: from.clone(),
        ty: ty.clone(),
        shape: *shape,
        by_ref,
        or,
    })
}

/// Gives a key parameter of a standard integer type (`remove(idx: usize)`, `get(key: u64)`)
/// the value a maker method of the same type returned (`insert(v) -> Option<usize>`), half of
/// the time (`ParamKind::Returned` with `or`): a generated `usize` names an entry of a slab or
/// an arena only by chance, and a race on an entry needs the key of one. The parameter's name
/// says it is a key; the maker takes arguments (a getter such as `len()` makes none) but no
/// key (`get(key)` looks one up).
///
/// A parameter of one of the type's own type parameters (`resolve(key: &K)`) takes what a
/// maker returned of that type parameter (`get_or_intern(val: T) -> K`), whatever its name,
/// and never a generated one (no `or`): lasso 0.7.1's race needs the thread to resolve the key
/// its own call has just made, and a made-up `Spur::default()` is no key a user holds. Lasso
/// hands keys out before they resolve, in no order across its shards, so that key 0, made
/// up, panics "Key out of bounds" while another thread's intern of it is under way, which
/// no sequential order gives: a report on lasso 0.7.2 and 0.7.3, whose callers only resolve
/// keys it returned (`resolve` documents the panic for a key it did not make).
pub(crate) fn take_keys(types: &mut [TypeModel]) {
    for owner in types.iter_mut().filter(|t| t.supported()) {
        let own_generics: Vec<String> = owner.generics.iter().map(|g| g.name.clone()).collect();
        let makers: Vec<(String, String, ReturnShape)> = owner
            .methods
            .iter()
            // One whose only arguments are timeouts (`pop_until(deadline: Instant) ->
            // Option<T>`) is a getter that waits: it hands back what a caller put in
            // (atomicring 0.5.0's queue, whose `try_push(content: T)` took only popped values).
            .filter(|m| {
                m.supported() && m.via.is_none() && m.params.iter().any(|p| !is_time(&p.kind))
            })
            // One that takes a key looks an entry up (`get(key) -> Option<usize>` answers a
            // value, or `None`): it makes no key.
            .filter(|m| !m.params.iter().any(|p| is_key_name(&p.name)))
            .filter_map(|m| {
                let returns = m.returns.as_deref()?;
                let (ty, shape) = returned_key(returns).or_else(|| {
                    // One that takes what it returns (`swap(v: T) -> T`) holds values; it
                    // makes no keys.
                    returned_generic(returns, &own_generics)
                        .filter(|(name, _)| !m.params.iter().any(|p| names_word(&p.ty, name)))
                })?;
                Some((ty, m.name.clone(), shape))
            })
            .collect();
        if makers.is_empty() {
            continue;
        }
        for m in owner
            .methods
            .iter_mut()
            .filter(|m| m.supported() && m.via.is_none())
        {
            for p in m.params.iter_mut() {
                let Some((by_ref, written)) = passed_as(&p.ty) else {
                    continue;
                };
                let (int, named) = match &p.kind {
                    ParamKind::Int { .. } => (p.kind.clone(), is_key_name(&p.name)),
                    ParamKind::Ref { inner } if matches!(**inner, ParamKind::Int { .. }) => {
                        ((**inner).clone(), is_key_name(&p.name))
                    }
                    ParamKind::Generic { .. } => (p.kind.clone(), true),
                    ParamKind::Ref { inner } if matches!(**inner, ParamKind::Generic { .. }) => {
                        ((**inner).clone(), true)
                    }
                    _ => continue,
                };
                if !named {
                    continue;
                }
                let written = normalized(written);
                if let Some((ty, from, shape)) = makers
                    .iter()
                    .find(|(t, from, _)| *t == written && *from != m.name)
                {
                    let made_up = !matches!(int, ParamKind::Generic { .. });
                    p.kind = ParamKind::Returned {
                        from: from.clone(),
                        ty: ty.clone(),
                        shape: *shape,
                        by_ref,
                        or: made_up.then(|| Box::new(int)),
                    };
                }
            }
        }
    }
}

/// Whether a parameter is a time (a timeout or a deadline): a `Duration`, an `Instant` or a
/// `SystemTime`, by reference or in an `Option`.
fn is_time(kind: &ParamKind) -> bool {
    match kind {
        ParamKind::Duration => true,
        ParamKind::Value { path } => {
            matches!(
                path.as_str(),
                "std::time::Instant" | "std::time::SystemTime"
            )
        }
        ParamKind::Ref { inner } | ParamKind::Option { inner } => is_time(inner),
        _ => false,
    }
}

/// Whether a parameter's name says it is a key: `key`, `idx`, `index`, `id`, `token`,
/// `handle`, `slot`, or one ending in `_key`, `_idx`, `_id`.
fn is_key_name(name: &str) -> bool {
    let name = name.trim_start_matches('_');
    matches!(
        name,
        "key" | "idx" | "index" | "id" | "token" | "handle" | "slot"
    ) || ["_key", "_idx", "_id"].iter().any(|s| name.ends_with(s))
}

/// The standard integer a method returns (`usize`, `Option<u64>`, `Result<u32, E>`), with how
/// it is wrapped.
fn returned_key(returns: &str) -> Option<(String, ReturnShape)> {
    let ty: syn::Type = syn::parse_str(returns).ok()?;
    let (ip, shape) = unwrapped_path(&ty)?;
    let name = ip.path.get_ident()?.to_string();
    matches!(
        name.as_str(),
        "u8" | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
    )
    .then_some((name, shape))
}

/// The path type a return type holds, `Option`/`Result` unwrapped, with how it is wrapped.
fn unwrapped_path(ty: &syn::Type) -> Option<(&syn::TypePath, ReturnShape)> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let (inner, shape) = match last.ident.to_string().as_str() {
        "Option" => (
            crate::api::types::first_type_arg(last)?,
            ReturnShape::OptionSelf,
        ),
        "Result" => (
            crate::api::types::first_type_arg(last)?,
            ReturnShape::ResultSelf,
        ),
        _ => (ty, ReturnShape::SelfValue),
    };
    match inner {
        syn::Type::Path(ip) => Some((ip, shape)),
        _ => None,
    }
}

/// A parameter's written type as a kept value is passed: `(true, "Key")` for `&Key`, `(false,
/// "Key")` for `Key`; `None` for a `&mut`, which no kept value can be.
fn passed_as(ty: &str) -> Option<(bool, &str)> {
    match ty.trim().strip_prefix('&') {
        Some(inner) if inner.trim_start().starts_with("mut ") => None,
        Some(inner) => Some((true, inner)),
        None => Some((false, ty.trim())),
    }
}

/// A type's text without spaces, for comparing what two signatures write.
fn normalized(ty: &str) -> String {
    ty.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Whether `ty` mentions `word` as a whole identifier (`&K`, `Vec<K>`; not `Key`).
fn names_word(ty: &str, word: &str) -> bool {
    ty.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// One of the type's own type parameters a method returns (`K`, `Option<K>`, `Result<K, E>`),
/// with how it is wrapped.
fn returned_generic(returns: &str, generics: &[String]) -> Option<(String, ReturnShape)> {
    let ty: syn::Type = syn::parse_str(returns).ok()?;
    let (ip, shape) = unwrapped_path(&ty)?;
    let name = ip.path.get_ident()?.to_string();
    generics.contains(&name).then_some((name, shape))
}

/// The value type a method returns, `Option`/`Result` unwrapped, when it can be a key: not
/// `()`, a reference, a primitive, a string, a collection, a guard or anything generic over a
/// lifetime (standard types have generators of their own, and a borrowed value cannot be kept).
fn returned_value(returns: &str) -> Option<(String, ReturnShape)> {
    let ty: syn::Type = syn::parse_str(returns).ok()?;
    let (ip, shape) = unwrapped_path(&ty)?;
    let seg = ip.path.segments.last()?;
    let name = seg.ident.to_string();
    let std_like = matches!(
        name.as_str(),
        "bool"
            | "char"
            | "f32"
            | "f64"
            | "String"
            | "str"
            | "Vec"
            | "Box"
            | "Arc"
            | "Rc"
            | "Option"
            | "Result"
            | "HashMap"
            | "HashSet"
            | "BTreeMap"
            | "BTreeSet"
            | "VecDeque"
            | "Duration"
            | "Instant"
            | "Self"
    ) || matches!(
        name.as_str(),
        "u8" | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
    ) || name.ends_with("Guard")
        || name.len() == 1;
    let borrowed = crate::api::render::tokens(ip).contains('\'');
    (!std_like && !borrowed).then(|| (normalized(&crate::api::render::tokens(ip)), shape))
}

/// The bare name of the type a shared reference names (`&Bar`, `&'a Bar` → `Bar`).
fn referenced_name(ty: &str) -> Option<String> {
    let ty: syn::Type = syn::parse_str(ty).ok()?;
    let syn::Type::Reference(r) = ty else {
        return None;
    };
    if r.mutability.is_some() {
        return None;
    }
    let syn::Type::Path(p) = &*r.elem else {
        return None;
    };
    let seg = p.path.segments.last()?;
    seg.arguments.is_empty().then(|| seg.ident.to_string())
}

/// The bare name of the type a method returns and how it is returned (`Arc<Handle>` →
/// `("Handle", ArcSelf)`), for the shapes a handle can be kept in.
fn returned_name(returns: &str) -> Option<(String, ReturnShape)> {
    let ty: syn::Type = syn::parse_str(returns).ok()?;
    if let syn::Type::Reference(r) = &ty {
        // `&Unparker`: kept as a clone (a handle type that is not `Clone` does not compile,
        // and its methods are dropped).
        let syn::Type::Path(p) = &*r.elem else {
            return None;
        };
        let seg = p.path.segments.last()?;
        return (r.mutability.is_none() && seg.arguments.is_empty())
            .then(|| (seg.ident.to_string(), ReturnShape::RefClone));
    }
    let (last, shape) = {
        let syn::Type::Path(p) = &ty else { return None };
        let last = p.path.segments.last()?;
        let shape = match last.ident.to_string().as_str() {
            "Arc" => ReturnShape::ArcSelf,
            "Option" => ReturnShape::OptionSelf,
            "Result" => ReturnShape::ResultSelf,
            guard if is_guard(guard) => {
                // The deref target is the last type argument (lock_api's guards take the raw
                // lock first: `MappedRwLockReadGuard<'a, R, T>`).
                let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                    return None;
                };
                let target = args.args.iter().rev().find_map(|a| match a {
                    syn::GenericArgument::Type(syn::Type::Path(p)) => p.path.segments.last(),
                    _ => None,
                })?;
                return target
                    .arguments
                    .is_empty()
                    .then(|| (target.ident.to_string(), ReturnShape::Guard));
            }
            _ => {
                return Some((last.ident.to_string(), ReturnShape::SelfValue))
                    .filter(|_| last.arguments.is_empty())
            }
        };
        (last, shape)
    };
    let inner = crate::api::types::first_type_arg(last)?;
    let syn::Type::Path(p) = inner else {
        return None;
    };
    let seg = p.path.segments.last()?;
    seg.arguments
        .is_empty()
        .then(|| (seg.ident.to_string(), shape))
}

/// The type a returned type's name stands for: for one of the owner's type parameters (a
/// guard over `M`, prometheus-client's `MappedRwLockReadGuard<'_, M>`), the type the harness
/// instantiates it with first — its default, else its first candidate (a type of the crate
/// implementing its bound; `codegen::instantiate`) — by its last segment; else `name`.
fn instantiated_name(generics: &[GenericParam], name: String) -> String {
    let Some(g) = generics
        .iter()
        .find(|g| g.kind == GenericKind::Type && g.name == name)
    else {
        return name;
    };
    let Some(ty) = g.informative_default().or_else(|| g.candidates.first()) else {
        return name;
    };
    // `::k::metrics::Level` → `Level`; a generic one (`Level<u8>`) is no handle type.
    let last = ty.rsplit("::").next().unwrap_or(ty).trim();
    if last.contains('<') {
        return name;
    }
    last.to_string()
}

/// Whether a returned type's name is a guard's, whose deref target a handle method can be
/// called on: std's and lock_api's (`MutexGuard`, `MappedRwLockReadGuard`, …), a map's entry
/// references (`Ref`, `RefMut`, dashmap's and others').
fn is_guard(name: &str) -> bool {
    name.ends_with("Guard") || matches!(name, "Ref" | "RefMut" | "MappedRef" | "MappedRefMut")
}

/// The one other type of the crate named `name` that can be a handle: public, and not
/// generic, or generic with a default for each parameter (`Counter<N = u64, A = AtomicU64>`,
/// which the bare name `Counter` instantiates). A generic handle's methods that take one of its
/// parameters are left out (`handle_method`).
fn handle_type(types: &[TypeModel], owner: usize, name: &str) -> Option<usize> {
    named_type(types, owner, name).filter(|&j| {
        types[j]
            .generics
            .iter()
            .all(|g| g.kind != GenericKind::Lifetime && g.default.is_some())
    })
}

/// The one type named `name` other than `owner`, when only one is and users can reach it.
fn named_type(types: &[TypeModel], owner: usize, name: &str) -> Option<usize> {
    let mut candidates = types
        .iter()
        .enumerate()
        .filter(|(j, t)| *j != owner && t.name == name);
    let (j, t) = candidates.next()?;
    if candidates.next().is_some() || t.reason.as_ref().is_some_and(Reason::is_internal) {
        return None;
    }
    Some(j)
}

/// The handle's method `m` as its owner's (`Handle::m`, reached `via`), its parameters
/// renamed from the handle type's parameters to the owner's (`renaming`: the handle's type
/// parameters, and what each stands for) when the handle is generic; `None` when a parameter
/// cannot be generated in the owner's tests.
fn handle_method(
    handle: &TypeModel,
    m: &Method,
    via: Via,
    renaming: Option<(Vec<&str>, &[Option<String>])>,
) -> Option<Method> {
    let kinds: Vec<ParamKind> = match &renaming {
        None => m.params.iter().map(|p| p.kind.clone()).collect(),
        Some((params, args)) => m
            .params
            .iter()
            .map(|p| renamed(&p.kind, params, args))
            .collect::<Option<_>>()?,
    };
    if kinds
        .iter()
        .any(|k| !callable_on_handle(k, renaming.is_some()))
    {
        return None;
    }
    let mut method = Method {
        name: refs::handle_method(&handle.name, &m.name),
        body_start: None,
        via: Some(via),
        ..m.clone()
    };
    for (p, kind) in method.params.iter_mut().zip(kinds) {
        p.kind = kind;
    }
    Some(method)
}

/// A type's own type parameters, by name.
fn type_params(t: &TypeModel) -> Vec<&str> {
    t.generics
        .iter()
        .filter(|g| g.kind == GenericKind::Type)
        .map(|g| g.name.as_str())
        .collect()
}

/// Whether a handle method's parameter can be generated in its owner's tests: not one that
/// names the handle type's instances, receiver or (unless `generic_ok`: they were renamed to
/// the owner's) type parameters.
fn callable_on_handle(kind: &ParamKind, generic_ok: bool) -> bool {
    !kind.any(&|k| match k {
        ParamKind::Instance { .. } | ParamKind::FromReceiver { .. } => true,
        ParamKind::Generic { .. } => !generic_ok,
        _ => false,
    })
}

/// The handle methods of the other elements of the tuples the owner's constructors return
/// (`bounded(cap) -> (Sender<T>, Receiver<T>)`: a `Sender`'s tests keep the `Receiver` as
/// handle `#1` and call `Receiver::recv` on it). The element's type arguments are the owner's
/// parameters; the handle type's parameters are renamed to them, and a method whose
/// parameter names one that cannot be is left out.
fn tuple_handles(
    types: &[TypeModel],
    owner: usize,
    seen: &mut BTreeSet<usize>,
) -> Vec<(usize, Method)> {
    let mut added = Vec::new();
    for c in types[owner].constructors.iter().filter(|c| c.supported()) {
        let Some(tuple) = &c.tuple else { continue };
        for (k, element) in tuple.elements.iter().enumerate() {
            if k == tuple.index {
                continue;
            }
            let Ok(syn::Type::Path(p)) = syn::parse_str::<syn::Type>(element) else {
                continue;
            };
            let path: Vec<String> = idents(&p.path);
            let Some(h) = types
                .iter()
                .position(|t| t.path.split("::").eq(path.iter().map(String::as_str)))
                .filter(|&h| h != owner)
            else {
                continue;
            };
            if !seen.insert(h) {
                continue;
            }
            let handle = &types[h];
            let args: Vec<Option<String>> = p
                .path
                .segments
                .last()
                .map(type_args)
                .unwrap_or_default()
                .into_iter()
                .map(type_name)
                .collect();
            let params = type_params(handle);
            for m in handle
                .methods
                .iter()
                .filter(|m| m.supported() && m.via.is_none())
            {
                let via = Via {
                    ty: handle.path.clone(),
                    from: refs::element(k),
                    shape: ReturnShape::SelfValue,
                    kept: Some(element.clone()),
                };
                if let Some(method) = handle_method(handle, m, via, Some((params.clone(), &args))) {
                    added.push((h, method));
                }
            }
        }
    }
    added
}

/// A generic handle type a method returns as it is, its type arguments the owner's own type
/// parameters (`Worker<T>::stealer(&self) -> Stealer<T>`).
struct GenericHandle {
    /// The owner's parameter each of the handle's type parameters stands for, by position.
    args: Vec<Option<String>>,
    /// The handle's type as the owner keeps it, by its public path
    /// (`::crossbeam_deque::Stealer<T>`).
    kept: String,
}

/// The handle `returns` names when it is a generic type of the crate (by name, one of that
/// name) written with the owner's type parameters only, as many as it has.
fn generic_handle(
    types: &[TypeModel],
    owner: usize,
    owner_generics: &[GenericParam],
    returns: &str,
) -> Option<(usize, GenericHandle)> {
    let Ok(syn::Type::Path(p)) = syn::parse_str::<syn::Type>(returns) else {
        return None;
    };
    let last = p.path.segments.last()?;
    let args: Vec<Option<String>> = type_args(last).into_iter().map(type_name).collect();
    let h = named_type(types, owner, &last.ident.to_string())?;
    let handle = &types[h];
    let own = |a: &Option<String>| {
        a.as_ref().is_some_and(|a| {
            owner_generics
                .iter()
                .any(|g| g.kind == GenericKind::Type && g.name == *a)
        })
    };
    if args.is_empty() || args.len() != type_params(handle).len() || !args.iter().all(own) {
        return None;
    }
    let names: Vec<&str> = args.iter().flatten().map(String::as_str).collect();
    let kept = format!("::{}<{}>", handle.path, names.join(", "));
    Some((h, GenericHandle { args, kept }))
}

/// `kind` with the handle type's parameters (`params`) renamed to the owner's (`args`, by
/// position); `None` when it names one the owner has no name for.
fn renamed(kind: &ParamKind, params: &[&str], args: &[Option<String>]) -> Option<ParamKind> {
    let mut kind = kind.clone();
    let to = |name: &str| {
        let at = params.iter().position(|p| *p == name)?;
        args.get(at)?.clone()
    };
    kind.rename_generics(&to).then_some(kind)
}

/// `facts` with its calls into `other` (a type whose methods are `other_facts`, named
/// `other_name`) followed: a method called holding `X` whose name is a method of `other`
/// takes, holding `X`, every lock type that method takes (`render` holding the display's
/// state calls `bar.draw()`, which locks the bar). One level deep, by name, and only into the
/// other type of a pair across types: where a name is some other type's method (`push` on a
/// `Vec`), no lock is added unless `other` has a method of that name that takes one, and the
/// worst that adds is a pair put first.
fn followed(
    facts: Option<&LockFacts>,
    other_facts: &HashMap<String, LockFacts>,
    other_name: &str,
) -> LockFacts {
    let mut out = facts.cloned().unwrap_or_default();
    for (held, name, line) in facts.map_or(&[][..], |f| &f.calls) {
        let Some(callee) = other_facts.get(name) else {
            continue;
        };
        for taken in callee.takes.iter().filter(|&t| t != held) {
            out.orders.push(LockOrder {
                through: Some(format!("{other_name}::{name}")),
                ..LockOrder::new(held.clone(), Some(taken.clone()), *line)
            });
        }
    }
    out
}

/// The group of a pair across types: high on a lock-order risk between the two, low
/// otherwise, never removed.
fn classify(
    (a, fa): (&str, Option<&LockFacts>),
    (b, fb): (&str, Option<&LockFacts>),
    handle: &str,
    from: &str,
    confined: bool,
) -> (Group, Vec<String>) {
    let empty = LockFacts::default();
    let (fa, fb) = (fa.unwrap_or(&empty), fb.unwrap_or(&empty));
    let mut high = inversions((a, fa), (b, fb));
    high.extend(inversions((b, fb), (a, fa)));
    // The halves of one tuple (a channel's) share what they were made with; so do an owner
    // that cannot be shared and its handles, the only way two threads reach its state.
    if from.starts_with('#') || confined {
        high.extend(crate::group::shared_field_conflicts(
            a, &fa.shared, b, &fb.shared,
        ));
    }
    if !high.is_empty() {
        return (Group::High, high);
    }
    let common: Vec<&String> = fa.takes.intersection(&fb.takes).collect();
    let reason = if common.is_empty() {
        format!("across types (`{handle}` from `{from}`): no lock type in common")
    } else {
        format!(
            "across types (`{handle}` from `{from}`): both take a `{}`, which may be one lock",
            common[0]
        )
    };
    (Group::Low, vec![reason])
}

/// `a` holding `X` takes `Y` (or something unseen), while `b` takes `X` holding `Y`.
fn inversions((a, fa): (&str, &LockFacts), (b, fb): (&str, &LockFacts)) -> Vec<String> {
    let through = |o: &LockOrder| match &o.through {
        Some(callee) => format!(" (through `{callee}`)"),
        None => String::new(),
    };
    let mut out = Vec::new();
    for oa in &fa.orders {
        for ob in &fb.orders {
            let x = &oa.held;
            if ob.taken.as_ref() != Some(x) || ob.held == *x {
                continue;
            }
            let taken = match &oa.taken {
                Some(y) if *y == ob.held => format!("a `{y}`{}", through(oa)),
                Some(_) => continue,
                None => "another object's lock or unseen code".to_string(),
            };
            let reason = format!(
                "lock order across types: `{a}` takes {taken} holding a `{x}` (line {}); `{b}` takes a `{x}`{} holding a `{}` (line {})",
                oa.line,
                through(ob),
                ob.held,
                ob.line
            );
            if !out.contains(&reason) {
                out.push(reason);
            }
        }
    }
    out
}
