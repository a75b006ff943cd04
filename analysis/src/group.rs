//! BC-ConTest grouping of method pairs (bc-contest.txt II.C, Algorithm 1), rendered for Rust.
//!
//! In Rust the data sits inside the lock, so the question is not *whether* a field is protected
//! but whether a method touches it within **one** critical section. A lock protects field x in
//! method m only if every access to x lies in one acquisition of it (the maximum protect lock,
//! MPL). A pair is *removed* when both methods run entirely inside one exclusive acquisition of
//! the same lock with no wait inside; *high* when for a common field with a write the two MPLs
//! do not intersect (two shared sections do not exclude each other), when the methods take two
//! locks in opposite orders, when a double lock is possible, or when one returns an iterator
//! (which reads the state after the call, where the analysis does not follow) and the other
//! writes; *low* otherwise.

use crate::access::{Access, AccessKind, MethodSummary, Mode, Section};
use crate::model::*;
use std::collections::{BTreeSet, HashMap};

/// Every unordered pair of supported methods, self-pairs included, in declaration order.
pub(crate) fn group_pairs(
    model: &TypeModel,
    summaries: &HashMap<String, MethodSummary>,
) -> Vec<Pair> {
    let methods: Vec<&Method> = model.methods.iter().filter(|m| m.supported()).collect();
    let empty = MethodSummary::default();
    let mut pairs = Vec::new();
    for i in 0..methods.len() {
        for j in i..methods.len() {
            let (a, b) = (methods[i], methods[j]);
            let sa = summaries.get(&a.name).unwrap_or(&empty);
            let sb = summaries.get(&b.name).unwrap_or(&empty);
            let iterated = iterator_reads(a, b, sb).or_else(|| iterator_reads(b, a, sa));
            let (group, reasons) = classify(&a.name, sa, &b.name, sb, iterated);
            pairs.push(Pair {
                methods: [a.name.clone(), b.name.clone()],
                group,
                reasons,
            });
        }
    }
    pairs
}

/// Why a pair of a method returning an iterator (`Method::iterates`) and one that writes the
/// type's state is high: the iterator goes on reading that state after the call returns,
/// outside the call's critical sections, in code the analysis does not follow (its `next`). No
/// lock the call holds covers what the iterator reads, so neither removal nor a common lock
/// can be judged from the call's body.
fn iterator_reads(it: &Method, writer: &Method, ws: &MethodSummary) -> Option<String> {
    if !it.iterates {
        return None;
    }
    let written = written_fields(ws);
    if written.is_empty() {
        return None;
    }
    let fields: Vec<String> = written.iter().map(|f| format!("`{f}`")).collect();
    Some(format!(
        "`{}` returns an iterator that reads the type's state after the call, outside its critical sections, and `{}` writes {}",
        it.name,
        writer.name,
        fields.join(", ")
    ))
}

/// The pair's group and why; `iterated` is the reason [`iterator_reads`] gives, if any.
fn classify(
    na: &str,
    a: &MethodSummary,
    nb: &str,
    b: &MethodSummary,
    iterated: Option<String>,
) -> (Group, Vec<String>) {
    let mut high: Vec<String> = iterated.into_iter().collect();
    high.extend(lock_order_conflicts(na, a, nb, b));
    high.extend(double_locks(na, a, nb, b));
    high.extend(double_locks(nb, b, na, a).into_iter().filter(|_| na != nb));
    high.extend(torn_update(na, a, nb, b));
    if na != nb {
        high.extend(torn_update(nb, b, na, a));
    }
    high.extend(foreign_lock_order(na, a, nb, b));
    if na != nb {
        high.extend(foreign_lock_order(nb, b, na, a));
    }
    high.extend(lost_wakeup(na, a, nb, b));
    if na != nb {
        high.extend(lost_wakeup(nb, b, na, a));
    }
    let mut kept = None;
    if high.is_empty() {
        match removed(na, a, nb, b) {
            Removal::Removed(reason) => return (Group::Removed, vec![reason]),
            Removal::Kept(reason) => kept = Some(reason),
            Removal::No => {}
        }
    }
    let fields = field_conflicts(na, a, nb, b);
    high.extend(fields.high);
    let (common, low) = (fields.common, fields.low);
    if !high.is_empty() {
        return (Group::High, high);
    }
    let mut reasons: Vec<String> = kept.into_iter().collect();
    if common.is_empty() {
        reasons.push("no common field".into());
    } else if low.is_empty() {
        reasons.push(format!(
            "common fields ({}) are only read",
            common.join(", ")
        ));
    }
    reasons.extend(low);
    (Group::Low, reasons)
}

/// What a pair's common fields say: fields written and covered by no single critical
/// section in both (high), fields one lock covers in both (low), and every common field.
struct FieldConflicts<'s> {
    high: Vec<String>,
    low: Vec<String>,
    common: Vec<&'s str>,
}

fn field_conflicts<'s>(
    na: &str,
    a: &'s MethodSummary,
    nb: &str,
    b: &'s MethodSummary,
) -> FieldConflicts<'s> {
    let mut high = Vec::new();
    let fields: BTreeSet<&str> = a.accesses.iter().map(|x| x.field.as_str()).collect();
    let common: Vec<&str> = fields
        .into_iter()
        .filter(|f| b.accesses.iter().any(|x| x.field == *f))
        .collect();
    let mut low = Vec::new();
    for field in &common {
        let fa: Vec<&Access> = a.accesses.iter().filter(|x| x.field == *field).collect();
        let fb: Vec<&Access> = b.accesses.iter().filter(|x| x.field == *field).collect();
        let wa = fa.iter().any(|x| x.kind.writes());
        let wb = fb.iter().any(|x| x.kind.writes());
        if !wa && !wb {
            continue;
        }
        // ww: all accesses on both sides; wr: the reader's reads against the writer's writes.
        let (ca, cb): (Vec<&Access>, Vec<&Access>) = if wa && wb {
            (fa.clone(), fb.clone())
        } else if wa {
            (
                fa.iter().copied().filter(|x| x.kind.writes()).collect(),
                fb.clone(),
            )
        } else {
            (
                fa.clone(),
                fb.iter().copied().filter(|x| x.kind.writes()).collect(),
            )
        };
        let mpl_a = mpl(a, &ca);
        let mpl_b = mpl(b, &cb);
        match common_lock(&mpl_a, &mpl_b) {
            Some(lock) => low.push(format!(
                "field `{field}`: protected in both by `{}`",
                lock.trim_start_matches("atomic ")
            )),
            None if na == nb => high.push(format!(
                "field `{field}` is written and no single critical section covers it: `{na}` {}; two calls can interleave there",
                describe(a, &ca, &mpl_a)
            )),
            None => high.push(format!(
                "field `{field}` is written and no single critical section covers it in both: `{na}` {}; `{nb}` {}",
                describe(a, &ca, &mpl_a),
                describe(b, &cb, &mpl_b)
            )),
        }
    }
    FieldConflicts { high, low, common }
}

/// The common-field conflicts of two methods of two types that share state (the halves of
/// a channel, each holding the same `Arc<Inner>`), their fields named by the shared type
/// (`Inner.len`): the reasons a pair across the two is high, if any.
pub(crate) fn shared_field_conflicts(
    na: &str,
    a: &MethodSummary,
    nb: &str,
    b: &MethodSummary,
) -> Vec<String> {
    field_conflicts(na, a, nb, b).high
}

/// Lock-order risk through another object: `a` takes a lock of another object (guarded data's
/// own lock, a parameter's) while holding `L`, and `b` takes `L`. The other object's code may
/// hold its lock and call back into `b` (a parent and its child handles): opposite orders.
fn foreign_lock_order(na: &str, a: &MethodSummary, nb: &str, b: &MethodSummary) -> Vec<String> {
    let mut out = Vec::new();
    for u in a.unseen.iter().filter(|u| u.lock) {
        for &h in &u.sections {
            let held = &a.sections[h];
            let taken_by_b = b
                .sections
                .iter()
                .any(|s| !s.atomic && s.lock == held.lock && s.instance == "self");
            if held.instance == "self" && taken_by_b {
                let reason = format!(
                    "lock-order risk: `{na}` takes {} at line {} while holding `{}`, which `{nb}` takes",
                    u.what, u.line, held.lock
                );
                if !out.contains(&reason) {
                    out.push(reason);
                }
            }
        }
    }
    out
}

/// Multi-field atomicity (an invariant spanning fields): `a` writes two fields in separate
/// critical sections and `b` uses both, so `b` can see one updated and not the other.
fn torn_update(na: &str, a: &MethodSummary, nb: &str, b: &MethodSummary) -> Option<String> {
    let written = written_fields(a);
    let used: BTreeSet<&str> = b.accesses.iter().map(|x| x.field.as_str()).collect();
    let both: Vec<&str> = written.intersection(&used).copied().collect();
    for (i, f) in both.iter().enumerate() {
        for g in both[i + 1..].iter().filter(|g| !other_variants(f, g)) {
            let accs: Vec<&Access> = a
                .accesses
                .iter()
                .filter(|x| x.field == *f || x.field == *g)
                .collect();
            let covered = mpl(a, &accs).iter().any(|s| !s.atomic);
            if covered {
                continue;
            }
            let line = |field: &str| {
                a.accesses
                    .iter()
                    .find(|x| x.field == field && x.kind.writes())
                    .map(|x| x.line)
                    .unwrap_or(0)
            };
            return Some(format!(
                "fields `{f}` and `{g}` change together: `{na}` writes `{f}` at line {} and `{g}` at line {} in separate critical sections, and `{nb}` uses both, so it can see one updated without the other",
                line(f),
                line(g)
            ));
        }
    }
    None
}

/// Whether two field paths lie in different variants of one enum field (`0.Single.0.state`
/// and `0.Bounded.0.tail`: the first segments where they differ both name a variant, written
/// in CamelCase where a field is in snake_case or a number): an instance holds one variant,
/// so the two never change together.
fn other_variants(f: &str, g: &str) -> bool {
    let variant = |s: &str| s.starts_with(|c: char| c.is_ascii_uppercase());
    // A variant is never a path's first segment (a field's name, or the type name a path
    // across types is given: `Inner.len`, `Sender.count`).
    f.split('.')
        .zip(g.split('.'))
        .enumerate()
        .find(|(_, (x, y))| x != y)
        .is_some_and(|(k, (x, y))| k > 0 && variant(x) && variant(y))
}

/// A wake-up `a` can miss: `a` waits on a condition variable and reads a field `b` writes
/// outside every lock its waits release, and `b` notifies. `b`'s write and notify can then
/// fall between `a`'s read and its wait, and wake nobody (atomicring 0.5.0's `pop`: the ring
/// tried without the lock, then `gate` taken and waited on). A read under the lock the wait
/// releases is checked again before the wait can miss anything, as the classic
/// `while !ready { wait }` is.
fn lost_wakeup(na: &str, a: &MethodSummary, nb: &str, b: &MethodSummary) -> Option<String> {
    if a.wait_stmts.is_empty() || b.notify_stmts.is_empty() {
        return None;
    }
    let released: Vec<(&str, &str)> = a
        .sections
        .iter()
        .filter(|s| s.ended_by_wait)
        .map(|s| (s.lock.as_str(), s.instance.as_str()))
        .collect();
    if released.is_empty() {
        return None;
    }
    let written = written_fields(b);
    let read = a.accesses.iter().find(|x| {
        written.contains(x.field.as_str())
            && !x.sections.iter().any(|&i| {
                a.sections
                    .get(i)
                    .is_some_and(|s| released.contains(&(s.lock.as_str(), s.instance.as_str())))
            })
    })?;
    let locks: Vec<String> = released.iter().map(|(l, _)| format!("`{l}`")).collect();
    Some(format!(
        "`{na}` reads `{}` at line {} outside {}, the lock its wait releases, and `{nb}` writes it and notifies: a notify between the read and the wait wakes nobody",
        read.field,
        read.line,
        locks.join(", ")
    ))
}

/// The fields a method writes.
fn written_fields(s: &MethodSummary) -> BTreeSet<&str> {
    s.accesses
        .iter()
        .filter(|x| x.kind.writes())
        .map(|x| x.field.as_str())
        .collect()
}

/// The sections (lock, mode) that cover every access in `accs` within one acquisition.
fn mpl<'s>(s: &'s MethodSummary, accs: &[&Access]) -> Vec<&'s Section> {
    let Some(first) = accs.first() else {
        return vec![];
    };
    first
        .sections
        .iter()
        .filter(|id| accs.iter().all(|x| x.sections.contains(id)))
        .map(|id| &s.sections[*id])
        .collect()
}

/// A lock in both sets, not held for reading on both sides.
fn common_lock(a: &[&Section], b: &[&Section]) -> Option<String> {
    a.iter().find_map(|x| {
        b.iter()
            .find(|y| y.lock == x.lock && !(x.mode == Mode::Shared && y.mode == Mode::Shared))
            .map(|_| x.lock.clone())
    })
}

fn describe(s: &MethodSummary, accs: &[&Access], mpl: &[&Section]) -> String {
    let mut parts: Vec<String> = accs.iter().take(4).map(|x| access_text(s, x)).collect();
    if accs.len() > 4 {
        parts.push(format!("and {} more", accs.len() - 4));
    }
    let tail = if mpl.is_empty() && accs.len() > 1 {
        " (in different critical sections)".to_string()
    } else if mpl.iter().all(|x| x.mode == Mode::Shared) && !mpl.is_empty() {
        " (only under a read lock)".to_string()
    } else {
        String::new()
    };
    format!("{}{tail}", parts.join(", "))
}

fn access_text(s: &MethodSummary, x: &Access) -> String {
    let verb = match x.kind {
        AccessKind::Read => "reads",
        AccessKind::Write => "writes",
        AccessKind::Update => "updates",
    };
    let mut held: Vec<String> = x
        .sections
        .iter()
        .map(|id| &s.sections[*id])
        .filter(|sec| !sec.atomic)
        .map(|sec| {
            let how = if sec.from_wait {
                "re-taken by a condvar wait"
            } else {
                "locked"
            };
            format!("{} {how} at line {}", lock_name(sec), sec.line)
        })
        .collect();
    held.dedup();
    let under = if held.is_empty() {
        String::new()
    } else {
        format!(" under {}", held.join(" and "))
    };
    let inst = if x.instance == "self" || x.instance == "static" {
        String::new()
    } else {
        format!(" of `{}`", x.instance)
    };
    let via = x.via.as_ref().map(|v| format!(" {v}")).unwrap_or_default();
    format!(
        "{verb} it{inst} ({}) at line {}{under}{via}",
        x.what, x.line
    )
}

fn lock_name(s: &Section) -> String {
    let mode = if s.mode == Mode::Shared {
        " (read)"
    } else {
        ""
    };
    if s.instance == "self" || s.instance == "static" {
        format!("`{}`{mode}", s.lock)
    } else {
        format!("`{}.{}`{mode}", s.instance, s.lock)
    }
}

/// Both methods do all their accesses inside one exclusive acquisition of the same lock,
/// and nothing inside waits on a condvar.
/// Whether one lock serialises a pair entirely.
enum Removal {
    Removed(String),
    /// It would be, but a method calls code the analysis does not follow while holding it.
    Kept(String),
    No,
}

fn removed(na: &str, a: &MethodSummary, nb: &str, b: &MethodSummary) -> Removal {
    let (Some(ca), Some(cb)) = (single_cover(a), single_cover(b)) else {
        return Removal::No;
    };
    if ca.lock != cb.lock || ca.instance != "self" || cb.instance != "self" {
        return Removal::No;
    }
    // Sound only when every call made under the lock was seen.
    let unseen = |n: &str, s: &MethodSummary, cover: &Section| {
        s.unseen
            .iter()
            .find(|u| u.sections.contains(&cover.id))
            .map(|u| {
                format!(
                    "not removed though `{}` serialises it: `{n}` calls {} at line {} holding it, code the analysis does not follow",
                    cover.lock, u.what, u.line
                )
            })
    };
    if let Some(reason) = unseen(na, a, ca).or_else(|| unseen(nb, b, cb)) {
        return Removal::Kept(reason);
    }
    Removal::Removed(format!(
        "both run entirely inside one exclusive acquisition of `{}` (`{na}` locks it at line {}, `{nb}` at line {})",
        ca.lock, ca.line, cb.line
    ))
}

fn single_cover(s: &MethodSummary) -> Option<&Section> {
    let first = s.accesses.first()?;
    // Accesses to another instance are not covered by a lock of this one.
    if s.accesses.iter().any(|x| x.instance != "self") {
        return None;
    }
    let cover = first
        .sections
        .iter()
        .map(|id| &s.sections[*id])
        .find(|sec| {
            !sec.atomic
                && !sec.in_loop
                && sec.mode == Mode::Exclusive
                && !sec.ended_by_wait
                && s.accesses.iter().all(|x| x.sections.contains(&sec.id))
        })?;
    // Another acquisition of some lock outside the cover section breaks atomicity too.
    let outside = s.sections.iter().any(|sec| {
        !sec.atomic
            && sec.id != cover.id
            && !s.order.iter().any(|(h, n)| *h == cover.id && *n == sec.id)
    });
    if outside {
        return None;
    }
    Some(cover)
}

/// Lock-order edges `(first, second, across two instances)` with the lines they come from.
fn edges(s: &MethodSummary) -> Vec<(String, String, bool, u32, u32)> {
    s.order
        .iter()
        .map(|(h, n)| (&s.sections[*h], &s.sections[*n]))
        .filter(|(h, n)| !n.non_blocking && !h.atomic && !n.atomic)
        .map(|(h, n)| {
            (
                h.lock.clone(),
                n.lock.clone(),
                h.instance != n.instance,
                h.line,
                n.line,
            )
        })
        .collect()
}

fn lock_order_conflicts(na: &str, a: &MethodSummary, nb: &str, b: &MethodSummary) -> Vec<String> {
    let mut out = Vec::new();
    for (x1, y1, cross1, l1, l2) in edges(a) {
        for (x2, y2, cross2, m1, m2) in edges(b) {
            let opposite = x1 == y2 && y1 == x2 && x1 != y1;
            let across = x1 == y1 && x2 == y2 && x1 == x2 && cross1 && cross2;
            if opposite || across {
                let what = if across {
                    format!("`{x1}` of two instances, one after the other")
                } else {
                    format!("`{x1}` then `{y1}`, while `{nb}` takes `{x2}` then `{y2}`")
                };
                let msg = format!(
                    "lock order: `{na}` takes {what} (lines {l1}, {l2} and {m1}, {m2}); run together they can deadlock"
                );
                if !out.contains(&msg) {
                    out.push(msg);
                }
            }
        }
    }
    out
}

/// A lock taken again while held: a deadlock for exclusive modes, and for read locks as soon as
/// a writer queues in between. High with every method that takes the same lock.
fn double_locks(na: &str, a: &MethodSummary, nb: &str, b: &MethodSummary) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for (h, n) in &a.order {
        let (h, n) = (&a.sections[*h], &a.sections[*n]);
        if h.lock != n.lock || h.instance != n.instance || n.non_blocking || h.atomic {
            continue;
        }
        if !b.sections.iter().any(|s| s.lock == h.lock && !s.atomic) || seen.contains(&&n.lock) {
            continue;
        }
        // One reason per lock: the first place it is taken again.
        seen.push(&n.lock);
        let via = |s: &Section| {
            s.via
                .as_ref()
                .map(|v| format!(" ({v})"))
                .unwrap_or_default()
        };
        out.push(format!(
            "double lock: `{na}` takes `{}` at line {}{} while holding it since line {}{}{}; `{nb}` also takes it",
            n.lock,
            n.line,
            via(n),
            h.line,
            via(h),
            if h.mode == Mode::Shared && n.mode == Mode::Shared { " (two read locks block once a writer waits)" } else { "" }
        ));
    }
    out
}
