//! Where a package's code reads the clock or sleeps (`ClockSite`s), so that the oracle's copy
//! reads covcon's virtual clock there instead (`oracle/runtime/src/time.rs`).
//!
//! Found in the syntax of every file of the package, not only the types' methods: a helper
//! function or a free function reads the clock for them as often. Only what is plainly std's
//! is taken: `Instant::now()` and `SystemTime::now()` where the file imports them from
//! `std::time` (or writes the path out), `thread::sleep(d)` (or `sleep` imported from
//! `std::thread`), and `x.elapsed()` where `x` is `Instant::now()` itself, a field the file
//! declares as an `Instant` or `SystemTime`, or a local or parameter given that type or bound
//! to `Instant::now()`; also `thread::park_timeout(d)` and any `x.recv_timeout(d)` (a channel's
//! timed receive), and a busy wait's `hint::spin_loop()`, which the copy reports to the worker. Clocks read elsewhere (through a dependency, `quanta`, a syscall) stay
//! real; the verdict does not count on them.
//!
//! A virtual `Instant` the copy hands to code that reads the real clock must be made real
//! first: the last argument of a method call named `…_until` or `…_deadline`
//! (`cv.wait_until(&mut g, deadline)` of parking_lot, `rx.recv_deadline(d)` of crossbeam),
//! unless it is a lock's `try_…_until` (a sync site, whose wrap reads the deadline itself) or
//! the package defines a function of that name, which reads the virtual clock
//! like the rest of the copy (`ClockRead::Deadline`). sled 0.32's thread pool computed
//! `Instant::now() + 1s` and waited on parking_lot's `Condvar::wait_until` for it: given a
//! virtual instant behind the real clock, seven pool threads woke at once, for ever, and
//! took both cores from the test.
//!
//! Also std's `RandomState::new()` and `RandomState::default()` (`ClockRead::HashKeys`): the
//! keys a run would otherwise draw from the system, which the copy keys by the test instead.
//! States std makes inside its own code (`HashMap::new()`) and other crates' hashers stay as
//! they are.

use crate::api::index::{CrateIndex, Def};
use crate::api::render::idents;
use crate::model::{ClockRead, ClockSite, Span};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use syn::spanned::Spanned;
use syn::visit::Visit;

/// The clock sites of a crate's files (path, module path, text), each file's in source order.
/// A path is std's by the file's imports and then by the crate's own names (`index`): one
/// that reaches std through the crate's re-exports (`pub use std::{sync, thread};` in a
/// `shim` module, then `use crate::shim::thread;`) is std's.
pub(crate) fn package_clock_sites<'a>(
    files: impl Iterator<Item = (&'a Path, &'a [String], &'a str)>,
    index: &CrateIndex,
) -> Vec<ClockSite> {
    let files: Vec<_> = files.collect();
    let own = own_deadline_functions(files.iter().map(|(_, _, text)| *text));
    files
        .into_iter()
        .flat_map(|(file, module, text)| clock_sites(file, module, text, index, &own))
        .collect()
}

/// Whether a called method's name says it takes a deadline (`wait_until`, `recv_deadline`).
/// A lock's timed acquisition (`try_lock_until`) is not: the copy wraps it as a sync site,
/// whose wrap reads the deadline on the virtual clock (`covcon_rt::acquire_until`).
fn is_deadline_name(name: &str) -> bool {
    (name.ends_with("_until") || name.ends_with("_deadline")) && !name.starts_with("try_")
}

/// The names of the package's own functions that take a deadline by their name: calls of
/// those stay as they are.
fn own_deadline_functions<'a>(texts: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for text in texts {
        for (at, _) in text.match_indices("fn ") {
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let name: String = text[at + 3..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if is_deadline_name(&name) {
                out.insert(name);
            }
        }
    }
    out
}

/// The clock sites of one file's text, in source order; none when it does not parse.
fn clock_sites(
    file: &Path,
    module: &[String],
    text: &str,
    index: &CrateIndex,
    own_deadlines: &BTreeSet<String>,
) -> Vec<ClockSite> {
    if ![
        "Instant",
        "SystemTime",
        "sleep",
        "park_timeout",
        "recv_timeout",
        "spin_loop",
        "RandomState",
        "_until",
        "_deadline",
    ]
    .iter()
    .any(|w| text.contains(w))
    {
        return Vec::new();
    }
    let Ok(ast) = syn::parse_file(text) else {
        return Vec::new();
    };
    let mut imports = Imports::default();
    imports.visit_file(&ast);
    let mut typed = Typed::default();
    typed.visit_file(&ast);
    let mut finder = Finder {
        file,
        module,
        index,
        imports: &imports.names,
        typed: &typed,
        own_deadlines,
        out: Vec::new(),
    };
    finder.visit_file(&ast);
    finder.out
}

/// What a file's `use` items make a single name stand for: `Instant` → `std::time::Instant`.
#[derive(Default)]
struct Imports {
    names: BTreeMap<String, Vec<String>>,
}

impl<'ast> Visit<'ast> for Imports {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        walk_use(&item.tree, &mut Vec::new(), &mut self.names);
    }
}

fn walk_use(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut BTreeMap<String, Vec<String>>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            walk_use(&p.tree, prefix, out);
            prefix.pop();
        }
        // `use std::thread::{self, Thread}` names the module itself: `thread` is `std::thread`
        // (crossbeam-channel's `thread::park_timeout` was left unvirtualised beside a virtual
        // `Instant::now()`, and a timed wait never reached its deadline).
        syn::UseTree::Name(n) if n.ident == "self" => {
            if let Some(last) = prefix.last() {
                out.insert(last.clone(), prefix.clone());
            }
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.insert(n.ident.to_string(), path);
        }
        syn::UseTree::Rename(r) if r.ident == "self" => {
            out.insert(r.rename.to_string(), prefix.clone());
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            out.insert(r.rename.to_string(), path);
        }
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| walk_use(t, prefix, out)),
        syn::UseTree::Glob(_) => {}
    }
}

/// Names the file gives a clock type: fields declared as one, and locals and parameters
/// typed as one or bound to `Instant::now()`. By name only, over the whole file: a name that
/// is a clock in one function and something else in another is taken in both, and the copy
/// that does not compile with it leaves that site out.
#[derive(Default)]
struct Typed {
    instants: Vec<String>,
    system_times: Vec<String>,
}

impl Typed {
    fn note(&mut self, name: String, ty: &syn::Type) {
        match clock_type(ty) {
            Some(ClockType::Instant) => self.instants.push(name),
            Some(ClockType::SystemTime) => self.system_times.push(name),
            None => {}
        }
    }

    fn kind_of(&self, name: &str) -> Option<ClockType> {
        if self.instants.iter().any(|n| n == name) {
            Some(ClockType::Instant)
        } else if self.system_times.iter().any(|n| n == name) {
            Some(ClockType::SystemTime)
        } else {
            None
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ClockType {
    Instant,
    SystemTime,
}

/// `Instant`, `std::time::Instant`, `SystemTime`… as a type (not a reference or an `Option`).
fn clock_type(ty: &syn::Type) -> Option<ClockType> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    let names = idents(&p.path);
    let std_path = names.len() == 1 || names.starts_with(&["std".into(), "time".into()]);
    match names.last().map(String::as_str) {
        Some("Instant") if std_path => Some(ClockType::Instant),
        Some("SystemTime") if std_path => Some(ClockType::SystemTime),
        _ => None,
    }
}

impl<'ast> Visit<'ast> for Typed {
    fn visit_field(&mut self, field: &'ast syn::Field) {
        if let Some(name) = &field.ident {
            self.note(name.to_string(), &field.ty);
        }
        syn::visit::visit_field(self, field);
    }

    fn visit_pat_type(&mut self, pat: &'ast syn::PatType) {
        if let syn::Pat::Ident(id) = &*pat.pat {
            self.note(id.ident.to_string(), &pat.ty);
        }
        syn::visit::visit_pat_type(self, pat);
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        if let (syn::Pat::Ident(id), Some(init)) = (&local.pat, &local.init) {
            if is_now_call(&init.expr, "Instant") {
                self.instants.push(id.ident.to_string());
            }
        }
        syn::visit::visit_local(self, local);
    }
}

/// Whether `expr` is a call `Instant::now()` (or `SystemTime::now()`, by `ty`), whatever it
/// is imported as.
fn is_now_call(expr: &syn::Expr, ty: &str) -> bool {
    let syn::Expr::Call(call) = expr else {
        return false;
    };
    let syn::Expr::Path(p) = &*call.func else {
        return false;
    };
    let names = idents(&p.path);
    names.len() >= 2 && names[names.len() - 2] == ty && names[names.len() - 1] == "now"
}

struct Finder<'a> {
    file: &'a Path,
    module: &'a [String],
    index: &'a CrateIndex,
    imports: &'a BTreeMap<String, Vec<String>>,
    typed: &'a Typed,
    own_deadlines: &'a BTreeSet<String>,
    out: Vec<ClockSite>,
}

impl Finder<'_> {
    /// The full path a written path stands for, its first segment looked up in the file's
    /// imports (a function's own too), then resolved by the crate's names: std's through the
    /// crate's re-exports, a module's item not.
    fn resolve(&self, path: &syn::Path) -> Vec<String> {
        let names = idents(path);
        let full = match names.first().and_then(|first| self.imports.get(first)) {
            Some(full) => full
                .iter()
                .cloned()
                .chain(names[1..].iter().cloned())
                .collect(),
            None => names,
        };
        match self.index.resolve(self.module, &full) {
            Some((Def::External(std), used)) => {
                std.into_iter().chain(full[used..].to_vec()).collect()
            }
            _ => full,
        }
    }

    /// What a called path reads of the clock, if it is std's `now` or `sleep` (or draws
    /// std's hash keys).
    fn read_of(&self, path: &syn::Path) -> Option<ClockRead> {
        let full = self.resolve(path);
        let full: Vec<&str> = full.iter().map(String::as_str).collect();
        match full.as_slice() {
            ["std" | "core", "time", "Instant", "now"] => Some(ClockRead::Now),
            ["std" | "core", "time", "SystemTime", "now"] => Some(ClockRead::SystemNow),
            ["std", "thread", "sleep"] => Some(ClockRead::Sleep),
            ["std", "thread", "park_timeout"] => Some(ClockRead::ParkTimeout),
            ["std" | "core", "hint", "spin_loop"]
            | ["std" | "core", "sync", "atomic", "spin_loop_hint"] => Some(ClockRead::SpinLoop),
            ["std", "collections", "hash_map", "RandomState", "new" | "default"]
            | ["std", "hash", "RandomState", "new" | "default"] => Some(ClockRead::HashKeys),
            _ => None,
        }
    }

    /// The clock type of an `elapsed()` receiver, when the file says what it is.
    fn receiver_type(&self, receiver: &syn::Expr) -> Option<ClockType> {
        match receiver {
            syn::Expr::Field(f) => match &f.member {
                syn::Member::Named(name) => self.typed.kind_of(&name.to_string()),
                syn::Member::Unnamed(_) => None,
            },
            syn::Expr::Path(p) if p.path.segments.len() == 1 && p.qself.is_none() => {
                self.typed.kind_of(&p.path.segments[0].ident.to_string())
            }
            syn::Expr::Call(call) => match &*call.func {
                syn::Expr::Path(p) => match self.read_of(&p.path) {
                    Some(ClockRead::Now) => Some(ClockType::Instant),
                    Some(ClockRead::SystemNow) => Some(ClockType::SystemTime),
                    _ => None,
                },
                _ => None,
            },
            syn::Expr::Paren(p) => self.receiver_type(&p.expr),
            syn::Expr::Reference(r) => self.receiver_type(&r.expr),
            _ => None,
        }
    }

    fn push(
        &mut self,
        read: ClockRead,
        start: proc_macro2::LineColumn,
        end: proc_macro2::LineColumn,
        call_end: proc_macro2::LineColumn,
    ) {
        self.out.push(ClockSite {
            read,
            at: Span {
                file: self.file.to_path_buf(),
                line: start.line as u32,
                column: start.column as u32,
            },
            end: (end.line as u32, end.column as u32),
            call_end: (call_end.line as u32, call_end.column as u32),
        });
    }
}

impl<'ast> Visit<'ast> for Finder<'_> {
    /// The arguments of an expression-like macro (`assert!`, `format!`, `debug!`, …): a clock
    /// read there is the code's like any other, and reading std's clock beside covcon's would
    /// compare two clocks.
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(args) = syn::parse::Parser::parse2(parser, mac.tokens.clone()) {
            for arg in &args {
                self.visit_expr(arg);
            }
        }
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func {
            if p.qself.is_none() {
                if let Some(read) = self.read_of(&p.path) {
                    let span = p.span();
                    self.push(read, span.start(), span.end(), call.span().end());
                }
            }
        }
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        if call.method == "elapsed" && call.args.is_empty() && call.turbofish.is_none() {
            let read = match self.receiver_type(&call.receiver) {
                Some(ClockType::Instant) => Some(ClockRead::Elapsed),
                Some(ClockType::SystemTime) => Some(ClockRead::SystemElapsed),
                None => None,
            };
            if let Some(read) = read {
                let receiver = call.receiver.span();
                self.push(read, receiver.start(), receiver.end(), call.span().end());
            }
        }
        // A channel's timed receive, whatever the receiver's type: the name is the convention.
        if call.method == "recv_timeout" && call.args.len() == 1 && call.turbofish.is_none() {
            let receiver = call.receiver.span();
            self.push(
                ClockRead::RecvTimeout,
                receiver.start(),
                receiver.end(),
                call.span().end(),
            );
        }
        // A deadline handed to a dependency's timed wait: its last argument.
        let method = call.method.to_string();
        if is_deadline_name(&method) && !self.own_deadlines.contains(&method) {
            if let Some(last) = call.args.last() {
                let arg = last.span();
                self.push(
                    ClockRead::Deadline,
                    arg.start(),
                    arg.end(),
                    call.span().end(),
                );
            }
        }
        syn::visit::visit_expr_method_call(self, call);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sites of `files` (path, module path, text), one crate's files with its index.
    fn sites(files: &[(&str, Vec<String>, &str)]) -> Vec<ClockSite> {
        let mut modules = Vec::new();
        for (_, module, text) in files {
            if let Ok(ast) = syn::parse_file(text) {
                crate::api::index::module_facts(&ast.items, module, &mut modules);
            }
        }
        let index = CrateIndex::new("k", "2021", modules, []);
        let files = files
            .iter()
            .map(|(path, module, text)| (Path::new(*path), module.as_slice(), *text));
        package_clock_sites(files, &index)
    }

    /// Each site as `read line:column-line:column..line:column`.
    fn check(text: &str, expect: &[&str]) {
        let sites = sites(&[("f.rs", vec![], text)]);
        let got: Vec<String> = sites
            .iter()
            .map(|s| {
                format!(
                    "{:?} {}:{}-{}:{}..{}:{}",
                    s.read, s.at.line, s.at.column, s.end.0, s.end.1, s.call_end.0, s.call_end.1
                )
            })
            .collect();
        assert_eq!(got, expect);
    }

    #[test]
    fn std_clock_reads_and_sleeps_are_sites_by_their_imports() {
        check(
            "use std::time::{Duration, Instant};\nuse std::thread;\n\
             fn f() { let t = Instant::now(); thread::sleep(Duration::from_millis(1)); }",
            &["Now 3:17-3:29..3:31", "Sleep 3:33-3:46..3:72"],
        );
        check(
            "fn f() { let _ = std::time::SystemTime::now(); std::thread::sleep(d); }",
            &["SystemNow 1:17-1:43..1:45", "Sleep 1:47-1:65..1:68"],
        );
        // Another crate's `Instant`, or one of the file's own, is not std's.
        check("use quanta::Instant;\nfn f() { Instant::now(); }", &[]);
        check(
            "struct Instant;\nimpl Instant { fn now() {} }\nfn f() { Instant::now(); }",
            &[],
        );
        check(
            "use std::thread::sleep as nap;\nfn f() { nap(d); }",
            &["Sleep 2:9-2:12..2:15"],
        );
        check(
            "use std::thread;\nfn f() { thread::park_timeout(d); std::thread::park(); }",
            &["ParkTimeout 2:9-2:29..2:32"],
        );
        // The module itself named in a group, or renamed (crossbeam-channel 0.3.6's context.rs).
        check(
            "use std::thread::{self, Thread};\nfn f() { thread::park_timeout(d); }",
            &["ParkTimeout 2:9-2:29..2:32"],
        );
        check(
            "use std::thread::{self as th};\nfn f() { th::park_timeout(d); }",
            &["ParkTimeout 2:9-2:25..2:28"],
        );
        check(
            "fn f(&self) { self.rx.recv_timeout(d).ok(); self.rx.recv(); }",
            &["RecvTimeout 1:14-1:21..1:37"],
        );
        // In a macro's arguments too.
        check(
            "use std::time::Instant;\nfn f(t: Instant) { assert!(Instant::now() >= t, \"{:?}\", t.elapsed()); }",
            &["Now 2:27-2:39..2:41", "Elapsed 2:56-2:57..2:67"],
        );
    }

    /// sled 0.32's pool waited on parking_lot's `wait_until(&mut queue, cutoff)` with a
    /// virtual `cutoff`: the deadline argument is a site; a function of the package's own
    /// named so is not (it reads the virtual clock itself).
    #[test]
    fn a_deadline_given_to_a_dependencys_timed_wait_is_a_site_unless_the_package_defines_it() {
        check(
            "fn f(&self) { let r = self.cv.wait_until(&mut q, cutoff); rx.recv_deadline(now + d); }",
            &["Deadline 1:49-1:55..1:56", "Deadline 1:75-1:82..1:83"],
        );
        check(
            "impl W { fn wait_until(&self, t: u64) {} }
fn f(w: &W) { w.wait_until(3); m.try_lock_until(d); tx.send_deadline(v, d); }",
            &["Deadline 2:72-2:73..2:74"],
        );
        // `until` alone, or a word that only contains it, is not a deadline's name.
        check("fn f() { x.until(d); x.untilted(d); }", &[]);
    }

    /// quick_cache's `thread::park_timeout` went through its `shim` module and stayed on the
    /// real clock beside a virtual `Instant::now()`: a campaign of 60 s ran 115 s.
    #[test]
    fn std_reached_through_the_crates_own_reexports_is_std() {
        let shim = "#[cfg(not(feature = \"shuttle\"))]\npub use std::{sync, thread};\n\
                    #[cfg(feature = \"shuttle\")]\npub use shuttle::thread;\n\
                    pub mod time { pub use std::time::Instant as Clock; }\n\
                    pub(crate) use self::time as clock;\n\
                    pub mod own { pub fn sleep(_: u8) {} }";
        let wait = "use crate::shim::{thread, time::Clock};\nuse super::shim;\n\
                    fn f() { thread::park_timeout(d); Clock::now(); shim::clock::Clock::now(); }\n\
                    fn g() { shim::own::sleep(1); other::thread::sleep(d); shim::thread::sleep(d); }";
        let lib = "mod shim;\nmod wait;\nfn f() { shim::thread::sleep(d); crate::shim::sync::atomic::spin_loop_hint(); }";
        let sites = sites(&[
            ("src/lib.rs", vec![], lib),
            ("src/shim.rs", vec!["shim".to_string()], shim),
            ("src/wait.rs", vec!["wait".to_string()], wait),
        ]);
        let got: Vec<String> = sites
            .iter()
            .map(|s| {
                format!(
                    "{} {:?} {}:{}",
                    s.at.file.display(),
                    s.read,
                    s.at.line,
                    s.at.column
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                "src/lib.rs Sleep 3:9",
                "src/lib.rs SpinLoop 3:33",
                "src/wait.rs ParkTimeout 3:9",
                "src/wait.rs Now 3:34",
                "src/wait.rs Now 3:48",
                "src/wait.rs Sleep 4:55",
            ]
        );
    }

    /// A busy wait's pause, however the file names it; another `spin_loop` is not one.
    #[test]
    fn spin_loop_hints_are_sites() {
        check(
            "use core::hint;\nfn f() { hint::spin_loop(); core::hint::spin_loop(); }",
            &["SpinLoop 2:9-2:24..2:26", "SpinLoop 2:28-2:49..2:51"],
        );
        check(
            "use std::hint::spin_loop;\n#[allow(deprecated)]\nfn f() { spin_loop(); std::sync::atomic::spin_loop_hint(); }",
            &["SpinLoop 3:9-3:18..3:20", "SpinLoop 3:22-3:55..3:57"],
        );
        check("fn spin_loop() {}\nfn f() { spin_loop(); }", &[]);
    }

    /// std's `RandomState` made by name, however the file imports it; another crate's, and the
    /// states std makes itself (`HashMap::new()`), are not sites.
    #[test]
    fn a_random_state_of_std_is_a_site() {
        check(
            "use std::collections::hash_map::RandomState;\n\
             fn f() { RandomState::new(); RandomState::default(); std::hash::RandomState::new(); }",
            &[
                "HashKeys 2:9-2:25..2:27",
                "HashKeys 2:29-2:49..2:51",
                "HashKeys 2:53-2:80..2:82",
            ],
        );
        check(
            "use std::collections::{hash_map, HashMap};\nfn f() { hash_map::RandomState::new(); HashMap::<u8, u8>::new(); }",
            &["HashKeys 2:9-2:35..2:37"],
        );
        check(
            "use ahash::RandomState;\nfn f() { RandomState::new(); }",
            &[],
        );
    }

    #[test]
    fn elapsed_is_a_site_where_the_file_says_its_receiver_is_a_clock() {
        check(
            "use std::time::Instant;\nstruct S { epoch: Instant, other: Timer }\n\
             impl S { fn a(&self) { self.epoch.elapsed(); self.other.elapsed(); } }",
            &["Elapsed 3:23-3:33..3:43"],
        );
        check(
            "use std::time::Instant;\nfn f(since: Instant) { let t = Instant::now(); t.elapsed(); since.elapsed(); }",
            &[
                "Now 2:31-2:43..2:45",
                "Elapsed 2:47-2:48..2:58",
                "Elapsed 2:60-2:65..2:75",
            ],
        );
        check(
            "use std::time::SystemTime;\nstruct S { at: std::time::SystemTime }\nfn f(s: &S) { s.at.elapsed(); }",
            &["SystemElapsed 3:14-3:18..3:28"],
        );
    }

    #[test]
    fn a_file_that_never_names_a_clock_is_not_parsed() {
        check("fn f( {", &[]);
    }
}
