//! Concurrency mutants (`cargo covcon mutants`): each makes one site of a correct type's code
//! thread-unsafe, as SplitRichTest's operators do (splitrichtest.txt III.B.1), rendered for
//! Rust:
//!
//! - [`Operator::SplitSection`] (SPCR): drop a guard between two statements that use it, and
//!   take the lock again;
//! - [`Operator::ReleaseEarly`] (a statement moved out of its section): drop a guard right
//!   after its last use, so the statements after it that touch `self` run unlocked;
//! - [`Operator::AcquireLate`] (SHCR, a section shifted down): take a lock after the
//!   statement that follows its `let`, so that statement runs unlocked;
//! - [`Operator::SwapLockOrder`]: take two locks of one method in the other order;
//! - [`Operator::RmwToLoadStore`] (RTXC's atomicity analogue): an atomic read-modify-write
//!   (`fetch_add`, `swap`, `compare_exchange`, `fetch_update`, …) done as a load and a store;
//! - [`Operator::WhileToIf`] (WTIS): a `while` that waits on a condition variable runs its
//!   body at most once;
//! - [`Operator::DropNotify`] (RTXC): a `notify_one` or `notify_all` is not made;
//! - [`Operator::RetryOnce`]: a `compare_exchange` in a retry loop takes its failure for a
//!   success, so the loop's work is done once (a CAS retry dropped);
//! - [`Operator::PublishEarly`]: an atomic store or read-modify-write that publishes a write
//!   made just before it (a flag stored after the data) is made first.
//!
//! All of a harness's mutants are compiled into its copy at once, as a *mutant schema*: each
//! site becomes `if ::covcon_rt::mutant(ID) { mutated } else { original }`, and a worker (or a
//! `cargo test` of the copy) runs mutant ID when `COVCON_MUTANT=ID` is set. One build for all
//! mutants; one that does not compile is left out of the schema as *unviable*, as cargo-mutants
//! does. Schema code is written in the copy only; the user's tree is never touched.

use crate::copy::{Insertion, Lines, Rank};
use analysis::{GuardLet, MutationSite, Span, SyncOp, SyncSite, TypeModel};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The environment variable that selects the mutant a worker runs.
pub const MUTANT_ENV: &str = "COVCON_MUTANT";

/// How a mutant breaks the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operator {
    SplitSection,
    ReleaseEarly,
    AcquireLate,
    SwapLockOrder,
    RmwToLoadStore,
    WhileToIf,
    DropNotify,
    RetryOnce,
    PublishEarly,
}

impl Operator {
    pub const ALL: [Operator; 9] = [
        Operator::SplitSection,
        Operator::ReleaseEarly,
        Operator::AcquireLate,
        Operator::SwapLockOrder,
        Operator::RmwToLoadStore,
        Operator::WhileToIf,
        Operator::DropNotify,
        Operator::RetryOnce,
        Operator::PublishEarly,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Operator::SplitSection => "split_section",
            Operator::ReleaseEarly => "release_early",
            Operator::AcquireLate => "acquire_late",
            Operator::SwapLockOrder => "swap_lock_order",
            Operator::RmwToLoadStore => "rmw_to_load_store",
            Operator::WhileToIf => "while_to_if",
            Operator::DropNotify => "drop_notify",
            Operator::RetryOnce => "retry_once",
            Operator::PublishEarly => "publish_early",
        }
    }
}

impl std::fmt::Display for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One mutant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutant {
    /// 1-based, in the order of the types and their sites.
    pub id: u32,
    /// `src/lib.rs:12:9: split the critical section of `items` before line 13` — stable
    /// across runs of the same source, as cargo-mutants' names are.
    pub name: String,
    pub type_path: String,
    /// The function the site is in (a method or a helper of the type).
    pub method: String,
    pub operator: Operator,
    /// The file (absolute, in the user's tree) and where the mutated code starts.
    pub file: PathBuf,
    pub line: u32,
    pub column: u32,
    /// What it does, in words.
    pub description: String,
    /// The mutation as it would be written in the user's code, as a unified diff.
    pub diff: String,
    /// Why no test can tell it from the original, when the analysis knows: an atomic
    /// read-modify-write done as a load and a store where every write of that atomic holds
    /// one lock (`SyncSite::writes_under`). Such a mutant is reported, not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equivalent: Option<String>,
    /// The schema's insertions and replacements in the copy.
    #[serde(skip)]
    pub(crate) schema: Vec<Insertion>,
    /// The edit the diff shows: from, to ((line, column) each) and the new text.
    #[serde(skip)]
    pub(crate) edit: Option<Edit>,
}

type Edit = ((u32, u32), (u32, u32), String);

/// One edit of a mutant's schema: start, end when it replaces text, the text with `{ID}`
/// for the mutant's number, and its rank among insertions at the same place.
type SchemaEdit = ((u32, u32), Option<(u32, u32)>, String, Rank);

impl Mutant {
    /// The file's text with the mutation written in as the diff shows it, given the file's
    /// text; `None` when the positions are not in it. (What a user who made this mistake
    /// would have: `cargo covcon mutants` analyses it to judge the mutant as covcon would
    /// judge that code.)
    pub fn apply(&self, source: &str) -> Option<String> {
        let (start, end, text) = self.edit.as_ref()?;
        let lines = Lines::new(source);
        let (a, b) = (lines.offset(start.0, start.1)?, lines.offset(end.0, end.1)?);
        Some(format!("{}{text}{}", &source[..a], &source[b..]))
    }
}

/// The mutants of `types` (their files resolved by `resolve`), numbered from 1, reading each
/// source file once. Sites whose source does not read as the analysis says are skipped.
pub(crate) fn generate(
    types: &[&TypeModel],
    resolve: impl Fn(usize, &Path) -> PathBuf,
    workspace_root: &Path,
) -> Vec<Mutant> {
    let mut sources = std::collections::BTreeMap::<PathBuf, Option<String>>::new();
    let mut drafts = Vec::new();
    for (index, ty) in types.iter().enumerate() {
        let mut made = Vec::new();
        for site in &ty.mutation_sites {
            let file = resolve(index, &site_file(site));
            let source = sources
                .entry(file.clone())
                .or_insert_with(|| std::fs::read_to_string(&file).ok());
            if let Some(source) = source {
                made.extend(from_mutation_site(site, &file, source));
            }
        }
        // A site of a type covcon cannot build is a schedule point only: this type's tests
        // may never run its code. A private helper's, which every type lists, is the helper's
        // own mutant when a type holds it (judged through its holders), else the first type's.
        for site in ty.sync_sites.iter().filter(|s| s.untested_owner.is_none()) {
            let file = resolve(index, &site.receiver.file);
            let source = sources
                .entry(file.clone())
                .or_insert_with(|| std::fs::read_to_string(&file).ok());
            if let Some(source) = source {
                let owner = site.held_helper(types);
                made.extend(
                    from_sync_site(site, &file, source)
                        .into_iter()
                        .map(|d| Draft {
                            owner: owner.cloned(),
                            ..d
                        }),
                );
            }
        }
        made.sort_by_key(|d| (d.file.clone(), d.line, d.column, d.operator));
        drafts.push(made);
    }
    // Code two types share (a handle's and its owner's helper) is mutated once, as the first
    // type's; but a type's own method claims it before a type that reaches it through a field
    // (`0.Slots.0::put`, a `Pool` dispatching to its `Slots` variant), so the mutant is the
    // inner type's, judged through its holders when covcon cannot build it.
    let key = |d: &Draft| (d.file.clone(), d.line, d.column, d.operator);
    let mut owner = std::collections::BTreeMap::new();
    for followed in [false, true] {
        for (index, made) in drafts.iter().enumerate() {
            for d in made.iter().filter(|d| d.method.contains("::") == followed) {
                owner.entry(key(d)).or_insert(index);
            }
        }
    }
    let mut out = Vec::new();
    for (index, made) in drafts.into_iter().enumerate() {
        for draft in made {
            if owner.get(&key(&draft)) != Some(&index) {
                continue;
            }
            owner.remove(&key(&draft));
            let id = out.len() as u32 + 1;
            let source = sources[&draft.file].as_deref().unwrap_or_default();
            out.push(draft.finish(id, types[index], workspace_root, source));
        }
    }
    out
}

fn site_file(site: &MutationSite) -> PathBuf {
    match site {
        MutationSite::Section { guard, .. }
        | MutationSite::ReleaseEarly { guard, .. }
        | MutationSite::AcquireLate { guard, .. } => guard.stmt.file.clone(),
        MutationSite::LockOrder { first, .. } => first.stmt.file.clone(),
        MutationSite::WaitLoop { at, .. } | MutationSite::RetryCas { at, .. } => at.file.clone(),
        MutationSite::Publish { write, .. } => write.file.clone(),
    }
}

/// A mutant before it has its number: the schema's texts take the number as `{ID}`.
struct Draft {
    method: String,
    operator: Operator,
    file: PathBuf,
    line: u32,
    column: u32,
    description: String,
    /// The user-level edit (start, end, new text) the diff shows.
    user: ((u32, u32), (u32, u32), String),
    /// The schema's edits.
    schema: Vec<SchemaEdit>,
    equivalent: Option<String>,
    /// The type whose code it is, when not the one whose sites listed it: a private helper
    /// some type holds, judged through its holders.
    owner: Option<String>,
}

impl Draft {
    /// The mutant numbered `id`, `source` being its file's text.
    fn finish(self, id: u32, ty: &TypeModel, workspace_root: &Path, source: &str) -> Mutant {
        let shown = self
            .file
            .strip_prefix(workspace_root)
            .unwrap_or(&self.file)
            .display()
            .to_string();
        let schema = self
            .schema
            .into_iter()
            .map(|(start, end, text, rank)| Insertion {
                file: self.file.clone(),
                line: start.0,
                column: start.1,
                text: text.replace("{ID}", &id.to_string()),
                rank,
                key: (0, id),
                end,
            })
            .collect();
        Mutant {
            id,
            name: format!(
                "{shown}:{}:{}: {}",
                self.line,
                self.column + 1,
                self.description
            ),
            type_path: self.owner.unwrap_or_else(|| ty.path.clone()),
            method: self.method,
            operator: self.operator,
            diff: unified_diff(source, &shown, self.user.clone()),
            edit: Some(self.user),
            equivalent: self.equivalent,
            file: self.file,
            line: self.line,
            column: self.column,
            description: self.description,
            schema,
        }
    }
}

/// Whether mutant `ID` is on, in schema code.
const ON: &str = "::covcon_rt::mutant({ID})";
const SEQ_CST: &str = "::std::sync::atomic::Ordering::SeqCst";

/// The drafts of one mutation site in `file`, whose text is `source`: none where that text
/// is not what the site says.
fn from_mutation_site(site: &MutationSite, file: &Path, source: &str) -> Vec<Draft> {
    let text = SiteText {
        method: site.method(),
        file,
        source,
        lines: Lines::new(source),
    };
    match site {
        MutationSite::Section {
            guard,
            splits,
            nested,
            ..
        } => text.split_section(guard, splits, nested),
        MutationSite::ReleaseEarly { guard, at, .. } => text.release_early(guard, *at),
        MutationSite::AcquireLate {
            guard,
            stmt,
            stmt_end,
            init,
            ..
        } => text.acquire_late(guard, *stmt, *stmt_end, *init),
        MutationSite::LockOrder { first, second, .. } => text.swap_lock_order(first, second),
        MutationSite::WaitLoop { at, body_end, .. } => text.while_to_if(at, *body_end),
        MutationSite::RetryCas { at, call_end, .. } => text.retry_once(at, *call_end),
        MutationSite::Publish {
            write,
            write_end,
            publish,
            receiver_end,
            call_end,
            publish_end,
            ..
        } => text.publish_early(
            write,
            *write_end,
            *publish,
            *receiver_end,
            *call_end,
            *publish_end,
        ),
    }
}

/// What a mutation site's drafts are made from: the function it is in, its file and the
/// file's text.
struct SiteText<'s> {
    method: &'s str,
    file: &'s Path,
    source: &'s str,
    lines: Lines<'s>,
}

impl SiteText<'_> {
    /// A draft of the site's function, at `at` in its file.
    fn draft(
        &self,
        operator: Operator,
        at: (u32, u32),
        description: String,
        user: ((u32, u32), (u32, u32), String),
        schema: Vec<SchemaEdit>,
    ) -> Draft {
        Draft {
            method: self.method.to_string(),
            operator,
            file: self.file.to_path_buf(),
            line: at.0,
            column: at.1,
            description,
            user,
            schema,
            equivalent: None,
            owner: None,
        }
    }

    /// [`Operator::SplitSection`]: `guard` dropped and taken again at each of `splits` (between
    /// two statements) and `nested` (inside a block).
    fn split_section(
        &self,
        guard: &GuardLet,
        splits: &[(u32, u32)],
        nested: &[(u32, u32)],
    ) -> Vec<Draft> {
        let lines = &self.lines;
        let (Some(pattern), Some(init), Some(wrapped)) = (
            one_line(lines.slice(guard.pattern, guard.pattern_end)),
            one_line(lines.slice(guard.init, guard.init_end)),
            wrapped_init(guard, lines),
        ) else {
            return Vec::new();
        };
        let name = &guard.name;
        let between = splits
            .iter()
            .map(|&at| (at, format!("before line {}", at.0)));
        let inside = nested
            .iter()
            .map(|&at| (at, format!("inside the block at line {}", at.0)));
        between
            .chain(inside)
            .map(|(at, place)| {
                self.draft(
                    Operator::SplitSection,
                    at,
                    format!(
                        "split the critical section of `{name}` (line {}) {place}",
                        guard.stmt.line
                    ),
                    (at, at, format!("drop({name}); let {pattern} = {init}; ")),
                    vec![(
                        at,
                        None,
                        format!(
                            "let {pattern} = if {ON} {{ drop({name}); {wrapped} }} else {{ {name} }}; "
                        ),
                        Rank::Statement,
                    )],
                )
            })
            .collect()
    }

    /// [`Operator::ReleaseEarly`]: `guard` dropped at `at`, after its last use.
    fn release_early(&self, guard: &GuardLet, at: (u32, u32)) -> Vec<Draft> {
        let name = &guard.name;
        vec![self.draft(
            Operator::ReleaseEarly,
            at,
            format!(
                "release `{name}` (line {}) after its last use, before line {}: what follows runs unlocked",
                guard.stmt.line, at.0
            ),
            (at, at, format!("drop({name}); ")),
            vec![(
                at,
                None,
                format!("if {ON} {{ drop({name}); }} "),
                Rank::Statement,
            )],
        )]
    }

    /// [`Operator::AcquireLate`]: `guard` taken after the statement from `stmt` to `stmt_end`
    /// (a `let` whose initialiser is `init`, if it is one).
    fn acquire_late(
        &self,
        guard: &GuardLet,
        stmt: (u32, u32),
        stmt_end: (u32, u32),
        init: Option<((u32, u32), (u32, u32))>,
    ) -> Vec<Draft> {
        let lines = &self.lines;
        let start = (guard.stmt.line, guard.stmt.column);
        let texts = (
            lines.slice(start, guard.stmt_end),
            lines.slice(guard.stmt_end, stmt),
            lines.slice(stmt, stmt_end),
        );
        let (Some(lock), Some(between), Some(next)) = texts else {
            return Vec::new();
        };
        // The statement's text runs before the lock when the mutant is on, and where it
        // was when it is off; a `let` keeps its place and takes the early value.
        let schema = match init {
            None => made_first(
                start,
                (stmt, stmt_end),
                one_line(Some(next)).unwrap_or_default(),
            ),
            Some((from, to)) => {
                let Some(value) = one_line(lines.slice(from, to)) else {
                    return Vec::new();
                };
                vec![
                    (
                        start,
                        None,
                        format!("let __covcon_early{{ID}} = if {ON} {{ ::core::option::Option::Some({value}) }} else {{ ::core::option::Option::None }}; "),
                        Rank::Wrap,
                    ),
                    (
                        from,
                        None,
                        "match __covcon_early{ID} { ::core::option::Option::Some(__covcon_v) => __covcon_v, ::core::option::Option::None => ".to_string(),
                        Rank::Wrap,
                    ),
                    (to, None, " }".to_string(), Rank::Close),
                ]
            }
        };
        vec![self.draft(
            Operator::AcquireLate,
            start,
            format!(
                "`{}` (line {}) taken after the statement on line {}: it runs unlocked",
                guard.name, guard.stmt.line, stmt.0
            ),
            (start, stmt_end, format!("{next}{between}{lock}")),
            schema,
        )]
    }

    /// [`Operator::SwapLockOrder`]: `second` taken before `first`.
    fn swap_lock_order(&self, first: &GuardLet, second: &GuardLet) -> Vec<Draft> {
        let lines = &self.lines;
        let texts = (
            one_line(lines.slice(first.pattern, first.pattern_end)),
            one_line(lines.slice(second.pattern, second.pattern_end)),
            one_line(lines.slice(first.init, first.init_end)),
            one_line(lines.slice(second.init, second.init_end)),
            wrapped_init(first, lines),
            wrapped_init(second, lines),
        );
        let (Some(p1), Some(p2), Some(i1), Some(i2), Some(w1), Some(w2)) = texts else {
            return Vec::new();
        };
        let (start, end) = ((first.stmt.line, first.stmt.column), second.stmt_end);
        let (n1, n2) = (&first.name, &second.name);
        vec![self.draft(
            Operator::SwapLockOrder,
            start,
            format!("take `{n2}` before `{n1}` (lines {} and {})", first.stmt.line, second.stmt.line),
            (start, end, format!("let {p2} = {i2}; let {p1} = {i1};")),
            vec![(
                start,
                Some(end),
                format!(
                    "let ({p1}, {p2}) = if {ON} {{ let {n2} = {w2}; let {n1} = {w1}; ({n1}, {n2}) }} else {{ let {n1} = {w1}; let {n2} = {w2}; ({n1}, {n2}) }};"
                ),
                Rank::Open,
            )],
        )]
    }

    /// [`Operator::WhileToIf`]: the `while` at `at`, whose body ends at `body_end`, made `if`.
    fn while_to_if(&self, at: &Span, body_end: (u32, u32)) -> Vec<Draft> {
        let start = (at.line, at.column);
        let keyword_end = (at.line, at.column + "while".len() as u32);
        if self.lines.slice(start, keyword_end) != Some("while") {
            return Vec::new();
        }
        vec![self.draft(
            Operator::WhileToIf,
            start,
            format!(
                "`while` waiting on a condition variable (line {}) made `if`",
                at.line
            ),
            (start, keyword_end, "if".to_string()),
            vec![(
                body_end,
                None,
                format!("; if {ON} {{ break }} "),
                Rank::Middle,
            )],
        )]
    }

    /// [`Operator::RetryOnce`]: the failure of the `compare_exchange` from `at` to `call_end`
    /// taken for a success.
    fn retry_once(&self, at: &Span, call_end: (u32, u32)) -> Vec<Draft> {
        let start = (at.line, at.column);
        let Some(call) = one_line(self.lines.slice(start, call_end)) else {
            return Vec::new();
        };
        let Some(head) = call
            .split('(')
            .next()
            .filter(|h| h.contains(".compare_exchange"))
        else {
            return Vec::new();
        };
        // std's atomics (and sdd's `AtomicRaw`) fail with the value they found, of the
        // success's type; crossbeam-epoch's `Atomic::compare_exchange(current, new,
        // success, failure, guard)` with a `CompareExchangeError` whose `current` is that.
        let epoch = call
            .find(".compare_exchange")
            .and_then(|at| parse_call(&call[at..]))
            .is_some_and(|(method, args)| {
                pointer_guard(&method, &args).is_some() && names_epoch(self.source)
            });
        let found = if epoch { ".current" } else { "" };
        vec![self.draft(
            Operator::RetryOnce,
            start,
            format!(
                "`{}` in a retry loop: its failure taken for a success",
                head.trim().replace(" .", ".")
            ),
            (
                call_end,
                call_end,
                format!(".or_else(|actual| Ok(actual{found}))"),
            ),
            vec![(
                call_end,
                None,
                format!(
                    ".or_else(|__covcon_v| if {ON} {{ ::core::result::Result::Ok(__covcon_v{found}) }} else {{ ::core::result::Result::Err(__covcon_v) }})"
                ),
                Rank::Close,
            )],
        )]
    }

    /// [`Operator::PublishEarly`]: the store from `publish` to `publish_end` (its receiver
    /// ending at `receiver_end`, its call at `call_end`) made before the write from `write` to
    /// `write_end`.
    fn publish_early(
        &self,
        write: &Span,
        write_end: (u32, u32),
        publish: (u32, u32),
        receiver_end: (u32, u32),
        call_end: (u32, u32),
        publish_end: (u32, u32),
    ) -> Vec<Draft> {
        let lines = &self.lines;
        let start = (write.line, write.column);
        let texts = (
            lines.slice(start, write_end),
            lines.slice(write_end, publish),
            lines.slice(publish, publish_end),
            one_line(lines.slice(publish, receiver_end)),
            one_line(lines.slice(receiver_end, call_end)),
        );
        let (Some(first), Some(between), Some(second), Some(receiver), Some(call)) = texts else {
            return Vec::new();
        };
        let Some(method) = call
            .trim_start()
            .strip_prefix('.')
            .and_then(|c| c.split('(').next())
        else {
            return Vec::new();
        };
        vec![self.draft(
            Operator::PublishEarly,
            start,
            format!(
                "`{receiver}.{}` (line {}) made before the write on line {}: published before it is written",
                method.trim(),
                publish.0,
                write.line
            ),
            (start, publish_end, format!("{second}{between}{first}")),
            // A schedule point after the early store too: the window it opens (before
            // the write it publishes) is one a schedule can stop in.
            made_first(
                start,
                (publish, publish_end),
                format!("::covcon_rt::at(&{receiver}){call}; ::covcon_rt::at(&());"),
            ),
        )]
    }
}

/// The schema of a statement (`stmt`: start, end) made before the code at `start` when the
/// mutant is on: `moved` (its text, one line) runs there, and the statement where it was only
/// when the mutant is off. The statement keeps the copy's own instrumentation inside the
/// switch's braces ([`Rank::Wrap`]).
fn made_first(start: (u32, u32), stmt: ((u32, u32), (u32, u32)), moved: String) -> Vec<SchemaEdit> {
    vec![
        (start, None, format!("if {ON} {{ {moved} }} "), Rank::Wrap),
        (stmt.0, None, format!("if !{ON} {{ "), Rank::Wrap),
        (stmt.1, None, " }".to_string(), Rank::Close),
    ]
}

/// A guard's initialiser with its acquisition wrapped as the copy wraps every acquisition
/// (`covcon_rt::acquire`), so a mutant's re-acquisition is a schedule point too.
fn wrapped_init(guard: &GuardLet, lines: &Lines) -> Option<String> {
    let receiver = one_line(lines.slice(guard.receiver, guard.receiver_end))?;
    let rest = one_line(lines.slice(guard.call_end, guard.init_end))?;
    let method = &guard.acquire;
    Some(format!(
        "::covcon_rt::acquire(&{receiver}, |__covcon_l| __covcon_l.try_{method}(), |__covcon_l| __covcon_l.{method}()){rest}"
    ))
}

fn from_sync_site(site: &SyncSite, file: &Path, source: &str) -> Vec<Draft> {
    let lines = Lines::new(source);
    let start = (site.receiver.line, site.receiver.column);
    let (Some(receiver), Some(call)) = (
        one_line(lines.slice(start, site.receiver_end)),
        one_line(lines.slice(site.receiver_end, site.call_end)),
    ) else {
        return Vec::new();
    };
    let Some((method, args)) = parse_call(&call) else {
        return Vec::new();
    };
    let draft = |operator, description: String, user: String, schema: String| Draft {
        method: site.method.clone(),
        operator,
        file: file.to_path_buf(),
        line: start.0,
        column: start.1,
        description,
        user: (start, site.call_end, user),
        schema: vec![(start, Some(site.call_end), schema, Rank::Open)],
        equivalent: None,
        owner: None,
    };
    match &site.op {
        SyncOp::Atomic | SyncOp::FlagAttempt => {
            let Some((user, mutated)) = load_store(&receiver, &method, &args, names_epoch(source))
            else {
                return Vec::new();
            };
            let original = match site.op {
                SyncOp::FlagAttempt => {
                    format!("::covcon_rt::attempt(&{receiver}, |__covcon_l| __covcon_l{call})")
                }
                _ => format!("::covcon_rt::at(&{receiver}){call}"),
            };
            let equivalent = site.writes_under.as_ref().map(|lock| {
                format!("every write of `{receiver}` holds `{lock}`: no other write comes between the load and the store")
            });
            vec![Draft {
                equivalent,
                ..draft(
                    Operator::RmwToLoadStore,
                    format!(
                        "`{}.{method}` done as a load and a store",
                        receiver.replace(" .", ".")
                    ),
                    user,
                    format!("(if {ON} {{ {mutated} }} else {{ {original} }})"),
                )
            }]
        }
        SyncOp::Notify { waited, .. } => {
            let original = if *waited {
                let all = method == "notify_all";
                format!("::covcon_rt::notifying(&{receiver}, {all}){call}")
            } else {
                format!("{receiver}{call}")
            };
            vec![draft(
                Operator::DropNotify,
                format!("`{receiver}.{method}()` left out"),
                "()".to_string(),
                format!("{{ if !{ON} {{ {original}; }} }}"),
            )]
        }
        SyncOp::Acquire { .. }
        | SyncOp::TimedAcquire { .. }
        | SyncOp::Attempt { .. }
        | SyncOp::Wait { .. }
        | SyncOp::WaitMut
        | SyncOp::Container => Vec::new(),
    }
}

/// `.fetch_add(1, Ordering::SeqCst)` → (`fetch_add`, [`1`, `Ordering::SeqCst`]).
fn parse_call(call: &str) -> Option<(String, Vec<String>)> {
    let call = call.trim();
    let rest = call.strip_prefix('.')?;
    let open = rest.find('(')?;
    let method = rest[..open].trim().to_string();
    let inner = rest[open + 1..].strip_suffix(')')?;
    let mut args = Vec::new();
    let (mut depth, mut piece) = (0i32, String::new());
    for c in inner.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                args.push(piece.trim().to_string());
                piece.clear();
                continue;
            }
            _ => {}
        }
        piece.push(c);
    }
    if !piece.trim().is_empty() {
        args.push(piece.trim().to_string());
    }
    Some((method, args))
}

/// The guard an epoch-protected atomic pointer's operation takes after std's arguments
/// (crossbeam-epoch's `Atomic`, sdd's `AtomicRaw`: `swap(new, order, &guard)`,
/// `compare_exchange(current, new, success, failure, &guard)`), which its `load` takes too;
/// `None` for std's atomics.
fn pointer_guard<'a>(method: &str, args: &'a [String]) -> Option<&'a str> {
    let std = match method {
        "compare_exchange" | "compare_exchange_weak" => 4,
        "fetch_update" => 3,
        _ => 2,
    };
    (args.len() == std + 1).then(|| args[std].as_str())
}

/// Whether a file names crossbeam-epoch, whose failed `compare_exchange` answers a
/// `CompareExchangeError` (the pointer it found in `current`) rather than that pointer.
fn names_epoch(source: &str) -> bool {
    source.contains("crossbeam_epoch")
}

/// An atomic read-modify-write as a load and a store: the text a user would write, and the
/// schema's (each access a schedule point). An epoch-protected pointer's guard goes to the
/// load ([`pointer_guard`]); `epoch`: the file names crossbeam-epoch, whose failed exchange no
/// load can answer. `None` for an operation that is no read-modify-write.
fn load_store(
    receiver: &str,
    method: &str,
    args: &[String],
    epoch: bool,
) -> Option<(String, String)> {
    // An atomic cell's operations take no ordering (crossbeam's `AtomicCell::compare_exchange(
    // current, new)`, `fetch_add(v)`), nor do its `load` and `store`, which the runtime's view
    // of an atomic (`covcon_rt::at`) does not cover: not mutated (crossbeam-channel's `tick`
    // flavour gave two unviable mutants, "this method takes 0 arguments but 1 argument was
    // supplied").
    let least = match method {
        "compare_exchange" | "compare_exchange_weak" => 4,
        "fetch_update" => 3,
        _ => 2,
    };
    if args.len() < least {
        return None;
    }
    let guard = pointer_guard(method, args).map(|g| format!(", {g}"));
    let cas = matches!(method, "compare_exchange" | "compare_exchange_weak");
    if cas && epoch && guard.is_some() {
        return None;
    }
    let guard = guard.unwrap_or_default();
    let arg = |i: usize| args.get(i).cloned();
    let combine = |v: &str, a: &str| -> Option<String> {
        Some(match method {
            "fetch_add" => format!("{v}.wrapping_add({a})"),
            "fetch_sub" => format!("{v}.wrapping_sub({a})"),
            "fetch_and" => format!("{v} & ({a})"),
            "fetch_or" => format!("{v} | ({a})"),
            "fetch_xor" => format!("{v} ^ ({a})"),
            "fetch_nand" => format!("!({v} & ({a}))"),
            // `Ord::max`, in every prelude: no path a `no_std` crate lacks.
            "fetch_max" => format!("{v}.max({a})"),
            "fetch_min" => format!("{v}.min({a})"),
            "swap" => a.to_string(),
            _ => return None,
        })
    };
    // The update function is a closure whose parameter type comes from `fetch_update`'s
    // signature; called through a generic function its type is known the same way.
    let body = |load: &str,
                store: &dyn Fn(&str) -> String,
                apply: &dyn Fn(&str, &str) -> String|
     -> Option<String> {
        let v = "__covcon_v";
        Some(match method {
            "compare_exchange" | "compare_exchange_weak" => format!(
                "let {v} = {load}; if {v} == ({}) {{ {}; Ok({v}) }} else {{ Err({v}) }}",
                arg(0)?,
                store(&arg(1)?)
            ),
            "fetch_update" => format!(
                "let {v} = {load}; match {} {{ Some(__covcon_n) => {{ {}; Ok({v}) }} None => Err({v}) }}",
                apply(v, &args.get(2..)?.join(", ")),
                store("__covcon_n")
            ),
            _ => format!("let {v} = {load}; {}; {v}", store(&combine(v, &arg(0)?)?)),
        })
    };
    let user = body(
        &format!("{receiver}.load({SEQ_CST}{guard})"),
        &|value| format!("{receiver}.store({value}, {SEQ_CST})"),
        &|v, f| format!("({f})({v})"),
    )?;
    // The schema is compiled into the copy: its ordering is the runtime's, since a `no_std`
    // crate has no `::std` (issue 32).
    let schema = body(
        &format!("::covcon_rt::at(__covcon_r).load(::covcon_rt::SEQ_CST{guard})"),
        &|value| format!("::covcon_rt::at(__covcon_r).store({value}, ::covcon_rt::SEQ_CST)"),
        &|v, f| format!("::covcon_rt::apply({v}, {f})"),
    )?;
    Some((
        format!("{{ {user} }}").replace("::std::sync::atomic::Ordering::", "Ordering::"),
        format!("let __covcon_r = &{receiver}; {schema}"),
    ))
}

/// Text with its line breaks (and the indentation after them) made single spaces; `None`
/// for text that was not there.
fn one_line(text: Option<&str>) -> Option<String> {
    let text = text?;
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split('\n');
    out.push_str(lines.next().unwrap_or_default().trim_end());
    for line in lines {
        out.push(' ');
        out.push_str(line.trim());
    }
    Some(out)
}

/// The unified diff of one edit: the lines it touches, before and after.
fn unified_diff(source: &str, shown: &str, edit: ((u32, u32), (u32, u32), String)) -> String {
    let ((start, end, text), lines) = (edit, Lines::new(source));
    let (Some(a), Some(b)) = (lines.offset(start.0, start.1), lines.offset(end.0, end.1)) else {
        return String::new();
    };
    let first = source[..a].rfind('\n').map_or(0, |i| i + 1);
    let last = source[b..].find('\n').map_or(source.len(), |i| b + i);
    let before = &source[first..last];
    let after = format!("{}{}{}", &source[first..a], text, &source[b..last]);
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let mut out = format!(
        "--- a/{shown}\n+++ b/{shown}\n@@ -{},{} +{},{} @@\n",
        start.0,
        old.len(),
        start.0,
        new.len()
    );
    for line in old {
        out.push_str(&format!("-{line}\n"));
    }
    for line in new {
        out.push_str(&format!("+{line}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A directory holding `lib.rs` with one `self.n.fetch_add(1, o)` in `fn f`, and that
    /// call's site as the analysis has it.
    fn one_atomic_site() -> (tempfile::TempDir, analysis::SyncSite) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lib.rs");
        std::fs::write(&file, "fn f() {\n    self.n.fetch_add(1, o);\n}\n").unwrap();
        let site = analysis::SyncSite {
            method: "f".into(),
            op: analysis::SyncOp::Atomic,
            receiver: analysis::Span {
                file,
                line: 2,
                column: 4,
            },
            receiver_end: (2, 10),
            call_end: (2, 26),
            ..Default::default()
        };
        (dir, site)
    }

    #[test]
    fn a_site_of_a_type_covcon_cannot_build_is_no_mutant_and_a_locked_atomic_is_equivalent() {
        let (dir, site) = one_atomic_site();
        let mut ty = TypeModel {
            sync_sites: vec![site.clone()],
            ..TypeModel::default()
        };
        let made = |ty: &TypeModel| generate(&[ty], |_, f| f.to_path_buf(), dir.path());
        assert!(!made(&ty).is_empty());
        assert!(made(&ty).iter().all(|m| m.equivalent.is_none()));
        // Every write of the atomic holds `m`: the load-and-store mutant is equivalent.
        ty.sync_sites[0].writes_under = Some("m".into());
        let equivalent: Vec<Option<String>> = made(&ty).into_iter().map(|m| m.equivalent).collect();
        assert_eq!(
            equivalent,
            [Some(
                "every write of `self.n` holds `m`: no other write comes between the load and the store"
                    .to_string()
            )]
        );
        ty.sync_sites[0].untested_owner = Some("k::Raw".into());
        assert!(made(&ty).is_empty());
    }

    /// A private helper's site, which every type of the package lists, is the helper's own
    /// mutant when a type holds it (judged through the holders, as a private type's is); the
    /// first type's only when none does.
    #[test]
    fn a_helpers_site_is_the_mutant_of_a_type_that_holds_the_helper() {
        let (dir, site) = one_atomic_site();
        let site = analysis::SyncSite {
            method: "Inner::f".into(),
            helper: Some("k::Inner".into()),
            ..site
        };
        let of = |path: &str, holds: &[&str]| TypeModel {
            path: path.into(),
            sync_sites: vec![site.clone()],
            holds: holds.iter().map(|h| h.to_string()).collect(),
            ..TypeModel::default()
        };
        let judged_through = |types: &[TypeModel]| {
            let types: Vec<&TypeModel> = types.iter().collect();
            let made = generate(&types, |_, f| f.to_path_buf(), dir.path());
            assert!(!made.is_empty());
            made.into_iter()
                .map(|m| m.type_path)
                .collect::<BTreeSet<_>>()
        };
        let (cell, parker) = (of("k::AtomicCell", &[]), of("k::Parker", &["k::Inner"]));
        assert_eq!(
            judged_through(&[cell.clone(), parker]),
            BTreeSet::from(["k::Inner".to_string()])
        );
        assert_eq!(
            judged_through(&[cell, of("k::Unparker", &[])]),
            BTreeSet::from(["k::AtomicCell".to_string()])
        );
    }

    #[test]
    fn a_call_is_split_into_its_method_and_top_level_arguments() {
        assert_eq!(
            parse_call(".compare_exchange(f(1, 2), [3, 4].len(), A, B)"),
            Some((
                "compare_exchange".into(),
                vec![
                    "f(1, 2)".into(),
                    "[3, 4].len()".into(),
                    "A".into(),
                    "B".into()
                ]
            ))
        );
        assert_eq!(
            parse_call(".load(Ordering::SeqCst)").map(|c| c.1.len()),
            Some(1)
        );
        assert_eq!(parse_call("load()"), None);
    }

    #[test]
    fn read_modify_writes_become_a_load_and_a_store_and_plain_accesses_do_not() {
        let (user, schema) =
            load_store("self.n", "fetch_add", &["1".into(), "o".into()], false).unwrap();
        assert_eq!(
            user,
            "{ let __covcon_v = self.n.load(Ordering::SeqCst); self.n.store(__covcon_v.wrapping_add(1), Ordering::SeqCst); __covcon_v }"
        );
        assert!(
            schema.starts_with(
                "let __covcon_r = &self.n; let __covcon_v = ::covcon_rt::at(__covcon_r).load("
            ),
            "{schema}"
        );
        let (user, _) = load_store(
            "self.s",
            "compare_exchange",
            &["0".into(), "1".into(), "a".into(), "b".into()],
            false,
        )
        .unwrap();
        assert!(user.contains("if __covcon_v == (0) { self.s.store(1, Ordering::SeqCst); Ok(__covcon_v) } else { Err(__covcon_v) }"), "{user}");
        // No `::std` in what the copy compiles: a `no_std` crate has none (issue 32).
        for method in ["fetch_add", "fetch_max", "swap", "compare_exchange"] {
            let args = ["1".to_string(), "2".into(), "a".into(), "b".into()];
            let (_, schema) = load_store("self.n", method, &args, false).unwrap();
            assert!(!schema.contains("::std::"), "{schema}");
        }
        let (user, _) =
            load_store("self.n", "fetch_max", &["7".into(), "o".into()], false).unwrap();
        assert!(
            user.contains("self.n.store(__covcon_v.max(7), Ordering::SeqCst)"),
            "{user}"
        );
        // An epoch-protected pointer's load takes the guard its operation took (scc's
        // `self.root.swap(RawPtr::null(), Acquire, &guard)`: five unviable mutants without).
        let (user, schema) = load_store(
            "self.root",
            "swap",
            &["RawPtr::null()".into(), "Acquire".into(), "&guard".into()],
            false,
        )
        .unwrap();
        assert_eq!(
            user,
            "{ let __covcon_v = self.root.load(Ordering::SeqCst, &guard); self.root.store(RawPtr::null(), Ordering::SeqCst); __covcon_v }"
        );
        assert!(
            schema.contains(".load(::covcon_rt::SEQ_CST, &guard);"),
            "{schema}"
        );
        let exchange: Vec<String> = ["p", "q", "a", "b", "&guard"].map(String::from).into();
        let (user, _) = load_store("self.root", "compare_exchange", &exchange, false).unwrap();
        assert!(
            user.contains("self.root.load(Ordering::SeqCst, &guard); if __covcon_v == (p)"),
            "{user}"
        );
        // crossbeam-epoch's failed exchange is an error struct no load gives.
        assert!(load_store("self.root", "compare_exchange", &exchange, true).is_none());
        assert!(load_store("self.n", "load", &["o".into()], false).is_none());
        // An atomic cell's operations, which take no ordering: not mutated.
        let cell = ["c".into(), "n".into()];
        assert!(load_store("self.t", "compare_exchange", &cell, false).is_none());
        assert!(load_store("self.t", "fetch_add", &["1".into()], false).is_none());
        assert!(load_store("self.n", "store", &["1".into(), "o".into()], false).is_none());
    }

    /// The lock-free operators on a claim loop and a publication: the diff a user reads, and
    /// the schema in the copy, where each site's instrumentation stays outside the mutant's
    /// switch (the copy's own `at(&..)` parts are written here by hand).
    #[test]
    fn a_retried_compare_exchange_takes_its_failure_for_a_success_and_a_flag_is_published_first() {
        let source = "use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
pub struct Board { next: AtomicUsize, value: AtomicUsize, ready: AtomicBool }
impl Board {
    pub fn new() -> Self { Board { next: AtomicUsize::new(0), value: AtomicUsize::new(0), ready: AtomicBool::new(false) } }
    pub fn post(&self, v: usize) -> usize {
        let mut n = self.next.load(Acquire);
        loop {
            match self.next.compare_exchange_weak(n, n + 1, AcqRel, Acquire) {
                Ok(_) => break,
                Err(now) => n = now,
            }
        }
        self.value.store(v, Relaxed);
        self.ready.store(true, Release);
        n
    }
}
";
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lib.rs");
        std::fs::write(&file, source).unwrap();
        let model = analysis::analyze_source("board", "2021", source);
        let ty = &model.types[0];
        let made = generate(&[ty], |_, _| file.clone(), dir.path());
        let of = |op: Operator| {
            made.iter()
                .find(|m| m.operator == op)
                .unwrap_or_else(|| panic!("a {op} mutant in {made:#?}"))
        };
        let retry = of(Operator::RetryOnce);
        assert!(retry.diff.contains(
            "+            match self.next.compare_exchange_weak(n, n + 1, AcqRel, Acquire).or_else(|actual| Ok(actual)) {"
        ), "{}", retry.diff);
        let publish = of(Operator::PublishEarly);
        assert_eq!(
            publish.diff,
            "--- a/lib.rs\n+++ b/lib.rs\n@@ -13,2 +13,2 @@\n-        self.value.store(v, Relaxed);\n-        self.ready.store(true, Release);\n+        self.ready.store(true, Release);\n+        self.value.store(v, Relaxed);\n"
        );
        // The copy: both mutants' schemas with the two stores' own instrumentation.
        let at = |line: u32, column: u32, text: &str, rank: Rank| Insertion {
            rank,
            ..Insertion::statement(file.clone(), line, column, text.to_string())
        };
        let own = [
            at(13, 8, "::covcon_rt::at(&", Rank::Open),
            at(13, 18, ")", Rank::Close),
            at(14, 8, "::covcon_rt::at(&", Rank::Open),
            at(14, 18, ")", Rank::Close),
        ];
        let all: Vec<&Insertion> = own
            .iter()
            .chain(retry.schema.iter())
            .chain(publish.schema.iter())
            .collect();
        let (copy, missed) = crate::copy::insert(source, &all);
        assert!(missed.is_empty(), "{missed:?}");
        let lines: Vec<&str> = copy.lines().collect();
        let (r, p) = (retry.id, publish.id);
        assert_eq!(
            lines[7].trim(),
            format!("match self.next.compare_exchange_weak(n, n + 1, AcqRel, Acquire).or_else(|__covcon_v| if ::covcon_rt::mutant({r}) {{ ::core::result::Result::Ok(__covcon_v) }} else {{ ::core::result::Result::Err(__covcon_v) }}) {{")
        );
        assert_eq!(
            lines[12].trim(),
            format!("if ::covcon_rt::mutant({p}) {{ ::covcon_rt::at(&self.ready).store(true, Release); ::covcon_rt::at(&()); }} ::covcon_rt::at(&self.value).store(v, Relaxed);")
        );
        assert_eq!(
            lines[13].trim(),
            format!("if !::covcon_rt::mutant({p}) {{ ::covcon_rt::at(&self.ready).store(true, Release); }}")
        );
    }

    /// crossbeam-epoch's `Atomic::compare_exchange` takes a guard, a fifth argument, and fails
    /// with a `CompareExchangeError`: its failure taken for a success is the pointer it found
    /// (`current`), of the success's type, where std's is the error itself (metrics-util's
    /// and crossbeam-skiplist's six retry loops were unviable, "mismatched types").
    #[test]
    fn an_epoch_pointers_failed_exchange_is_taken_for_a_success_with_the_pointer_it_found() {
        let source = "use crossbeam_epoch::{Atomic, Owned, Shared, Guard};
use std::sync::atomic::{AtomicUsize, Ordering};
pub struct List { head: Atomic<u64>, len: AtomicUsize }
impl List {
    pub fn new() -> Self { List { head: Atomic::null(), len: AtomicUsize::new(0) } }
    pub fn len(&self) -> usize { self.len.load(Ordering::Acquire) }
    pub fn push(&self, guard: &Guard) {
        loop {
            let head = self.head.load(Ordering::Acquire, guard);
            match self.head.compare_exchange(head, Owned::new(1), Ordering::AcqRel, Ordering::Acquire, guard) {
                Ok(_) => break,
                Err(_) => continue,
            }
        }
    }
}
";
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lib.rs");
        std::fs::write(&file, source).unwrap();
        let model = analysis::analyze_source("list", "2021", source);
        let made = generate(&[&model.types[0]], |_, _| file.clone(), dir.path());
        let retry = made
            .iter()
            .find(|m| m.operator == Operator::RetryOnce)
            .unwrap_or_else(|| panic!("a retry_once mutant in {made:#?}"));
        assert!(
            retry
                .diff
                .contains(", Ordering::Acquire, guard).or_else(|actual| Ok(actual.current)) {"),
            "{}",
            retry.diff
        );
        let schema: String = retry.schema.iter().map(|i| i.text.as_str()).collect();
        assert!(
            schema.contains("::core::result::Result::Ok(__covcon_v.current) } else { ::core::result::Result::Err(__covcon_v) }"),
            "{schema}"
        );
    }

    /// A lock taken after the statement that follows it: a `let` takes the value computed
    /// before the lock, an expression statement runs before it, each only when the mutant
    /// is on.
    #[test]
    fn a_lock_is_taken_after_the_statement_that_follows_it() {
        let source = "use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
pub struct Store { items: Mutex<Vec<u64>>, len: AtomicU64 }
impl Store {
    pub fn new() -> Self { Store { items: Mutex::new(vec![]), len: AtomicU64::new(0) } }
    pub fn push(&self, x: u64) -> u64 {
        let mut items = self.items.lock().unwrap();
        let n = self.len.load(Ordering::SeqCst);
        items.push(x + n);
        n
    }
    pub fn bump(&self) {
        let items = self.items.lock().unwrap();
        self.len.fetch_add(1, Ordering::SeqCst);
        assert!(items.len() as u64 <= self.len.load(Ordering::SeqCst));
    }
}
";
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lib.rs");
        std::fs::write(&file, source).unwrap();
        let model = analysis::analyze_source("store", "2021", source);
        let made = generate(&[&model.types[0]], |_, _| file.clone(), dir.path());
        let late: Vec<&Mutant> = made
            .iter()
            .filter(|m| m.operator == Operator::AcquireLate)
            .collect();
        assert_eq!(late.len(), 2, "{made:#?}");
        assert_eq!(
            late[0].diff,
            "--- a/lib.rs\n+++ b/lib.rs\n@@ -7,2 +7,2 @@\n-        let mut items = self.items.lock().unwrap();\n-        let n = self.len.load(Ordering::SeqCst);\n+        let n = self.len.load(Ordering::SeqCst);\n+        let mut items = self.items.lock().unwrap();\n"
        );
        let all: Vec<&Insertion> = late.iter().flat_map(|m| m.schema.iter()).collect();
        let (copy, missed) = crate::copy::insert(source, &all);
        assert!(missed.is_empty(), "{missed:?}");
        let lines: Vec<&str> = copy.lines().map(str::trim).collect();
        let (a, b) = (late[0].id, late[1].id);
        let (some, none) = (
            "::core::option::Option::Some",
            "::core::option::Option::None",
        );
        assert_eq!(
            lines[6],
            format!("let __covcon_early{a} = if ::covcon_rt::mutant({a}) {{ {some}(self.len.load(Ordering::SeqCst)) }} else {{ {none} }}; let mut items = self.items.lock().unwrap();")
        );
        assert_eq!(
            lines[7],
            format!("let n = match __covcon_early{a} {{ {some}(__covcon_v) => __covcon_v, {none} => self.len.load(Ordering::SeqCst) }};")
        );
        assert_eq!(
            lines[12],
            format!("if ::covcon_rt::mutant({b}) {{ self.len.fetch_add(1, Ordering::SeqCst); }} let items = self.items.lock().unwrap();")
        );
        assert_eq!(
            lines[13],
            format!("if !::covcon_rt::mutant({b}) {{ self.len.fetch_add(1, Ordering::SeqCst); }}")
        );
    }

    #[test]
    fn the_diff_shows_the_whole_lines_an_edit_touches() {
        let source = "fn f() {\n    a.fetch_add(1, o);\n}\n";
        let diff = unified_diff(source, "src/lib.rs", ((2, 4), (2, 21), "X".into()));
        assert_eq!(
            diff,
            "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -2,1 +2,1 @@\n-    a.fetch_add(1, o);\n+    X;\n"
        );
    }
}
