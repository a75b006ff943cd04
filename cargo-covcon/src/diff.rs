//! Unified diffs (`git diff`) for `--in-diff`: which lines of which files a change touches,
//! and which thread-safe types those lines belong to.

use analysis::{Span, TypeModel};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Lines of each file, by the file's path as the diff names it (`b/` dropped).
pub type Lines = BTreeMap<String, BTreeSet<u32>>;

/// The text of the diff in `file` (`--in-diff`); a file that cannot be read is a usage error.
pub fn read(file: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(file).map_err(|e| {
        crate::exit_code::usage_error(format_args!(
            "cannot read --in-diff {}: {e}",
            file.display()
        ))
    })
}

/// The change since `reference` as a unified diff (`--changed-since REF`): `git diff` from the
/// commit where the current branch left `reference` (their merge base) to the working tree, so
/// committed and uncommitted changes alike and not what `reference` gained since, then each
/// untracked Rust file (not ignored) as added whole. Run in the repository that holds `dir`.
/// Not a repository, or no such reference, is a usage error.
pub fn since(reference: &str, dir: &Path) -> anyhow::Result<String> {
    let git = |args: &[&str], at: &Path| -> anyhow::Result<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(at)
            .args(args)
            .output()
            .map_err(|e| {
                crate::exit_code::usage_error(format_args!(
                    "--changed-since needs git, which could not be run: {e}"
                ))
            })?;
        if !out.status.success() {
            return Err(crate::exit_code::usage_error(format_args!(
                "--changed-since {reference}: `git {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let top = git(&["rev-parse", "--show-toplevel"], dir)?;
    let top = Path::new(top.trim());
    let base = git(&["merge-base", reference, "HEAD"], top)?;
    let mut text = git(
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-renames",
            base.trim(),
        ],
        top,
    )?;
    let untracked = git(&["ls-files", "--others", "--exclude-standard", "-z"], top)?;
    for file in untracked.split('\0').filter(|f| f.ends_with(".rs")) {
        let Ok(source) = std::fs::read_to_string(top.join(file)) else {
            continue;
        };
        text.push_str(&whole_file_added(file, &source));
    }
    Ok(text)
}

/// A unified diff adding `source` as the new file `file`.
fn whole_file_added(file: &str, source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut text = format!(
        "diff --git a/{file} b/{file}\nnew file mode 100644\n--- /dev/null\n+++ b/{file}\n@@ -0,0 +1,{} @@\n",
        lines.len()
    );
    for line in lines {
        text.push('+');
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// The diff `--in-diff FILE` or `--changed-since REF` names, if either (`manifest_path`: the
/// repository is the one holding it, or the working directory's).
pub fn named(
    in_diff: Option<&Path>,
    changed_since: Option<&str>,
    manifest_path: Option<&Path>,
) -> anyhow::Result<Option<String>> {
    if let Some(file) = in_diff {
        return read(file).map(Some);
    }
    let Some(reference) = changed_since else {
        return Ok(None);
    };
    let dir = manifest_path
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    since(reference, dir).map(Some)
}

/// The lines a unified diff adds, on the new side.
pub fn added_lines(text: &str) -> Lines {
    parse(text, false)
}

/// The lines a diff changes on the new side: those it adds, and for each run of removed lines
/// the lines on either side of the gap it leaves (a removed `lock()` touches the code around
/// it).
pub fn touched_lines(text: &str) -> Lines {
    parse(text, true)
}

fn parse(text: &str, removals: bool) -> Lines {
    let mut out = Lines::new();
    let mut file: Option<String> = None;
    let mut line = 0u32;
    for l in text.lines() {
        if let Some(path) = l.strip_prefix("+++ ") {
            let path = path.split('\t').next().unwrap_or_default().trim();
            file =
                (path != "/dev/null").then(|| path.strip_prefix("b/").unwrap_or(path).to_string());
        } else if let Some(hunk) = l.strip_prefix("@@ ") {
            // `@@ -a,b +c,d @@`: the new side starts at line c.
            line = hunk
                .split_whitespace()
                .find_map(|w| w.strip_prefix('+'))
                .and_then(|w| w.split(',').next()?.parse().ok())
                .unwrap_or(0);
        } else if l.starts_with("--- ") || l.starts_with("diff ") || l.starts_with("index ") {
            continue;
        } else if let Some(f) = &file {
            if l.starts_with('+') {
                out.entry(f.clone()).or_default().insert(line);
                line += 1;
            } else if l.starts_with('-') {
                if removals {
                    let lines = out.entry(f.clone()).or_default();
                    lines.insert(line);
                    lines.extend(line.checked_sub(1).filter(|&l| l > 0));
                }
            } else if l.starts_with(' ') || l.is_empty() {
                line += 1;
            }
        }
    }
    out
}

/// Which of `types` the diff in `changed` touches, in order. A changed line belongs to the
/// types whose own code holds it: the declaration, a method's declaration or body (a handle's
/// methods included), a synchronisation site or split point of its own, or the code of a
/// guard its scopes keep (`TypeModel::scopes`: `Reservation::confirm` is `Booking`'s). A line no testable
/// type owns (`testable`, by index) is in code they may run without owning it — a private
/// helper or an untestable type, whose sites the analysis gives every type of the package
/// (`SyncSite::untested_owner`) — and touches each type that took such a site there. A type
/// whose code a line is in also touches the types that call into it by holding it (see
/// [`callers`]). Paths match when one ends with the other: a diff names files from the
/// repository's root, which may be above the workspace's.
pub fn touched_types(
    changed: &Lines,
    types: &[&TypeModel],
    testable: &[bool],
    root: &Path,
) -> Vec<bool> {
    let own: Vec<Vec<(&Path, u32, u32)>> = types.iter().map(|t| own_ranges(t, types)).collect();
    let adopted: Vec<Vec<(&Path, u32, u32)>> = types
        .iter()
        .map(|t| {
            t.sync_sites
                .iter()
                .filter(|s| s.untested_owner.is_some())
                .map(|s| (s.receiver.file.as_path(), s.receiver.line, s.receiver.line))
                .collect()
        })
        .collect();
    let holds = |ranges: &[(&Path, u32, u32)], file: &str, line: u32| {
        ranges
            .iter()
            .any(|(f, first, last)| same_file(file, f, root) && (*first..=*last).contains(&line))
    };
    // The types among `types` each type's scopes keep a guard of.
    let guards: Vec<Vec<usize>> = types
        .iter()
        .map(|t| {
            t.scopes
                .iter()
                .filter_map(|s| types.iter().position(|g| g.path == s.guard))
                .collect()
        })
        .collect();
    let callers = callers(types);
    let mut touched = vec![false; types.len()];
    for (file, lines) in changed {
        let mut source = None;
        for &line in lines {
            let direct: Vec<bool> = own.iter().map(|r| holds(r, file, line)).collect();
            let mut owners: Vec<usize> = (0..types.len())
                .filter(|&i| direct[i] || guards[i].iter().any(|&g| direct[g]))
                .collect();
            if owners.is_empty() && file.ends_with(".rs") {
                let source = source.get_or_insert_with(|| Source::read(file, root));
                owners = source.code_owners(line, types);
            }
            let owned = owners.iter().any(|&i| testable[i]);
            for &i in &owners {
                touched[i] = true;
                for &c in &callers[i] {
                    touched[c] = true;
                }
            }
            if !owned {
                for (i, sites) in adopted.iter().enumerate() {
                    touched[i] |= holds(sites, file, line);
                }
            }
        }
    }
    touched
}

/// A changed file as read from the working tree, for lines no type's own code holds.
struct Source {
    /// The directory of the package it is in (the nearest above it with a `Cargo.toml`), when
    /// it was found under the root.
    package: Option<std::path::PathBuf>,
    /// Its items, `None` when it could not be read or parsed.
    items: Option<Vec<analysis::items::CodeItem>>,
    /// Its lines, as read.
    lines: Vec<String>,
}

impl Source {
    /// The file the diff's `path` names: under `root`, or, for a diff named from a repository
    /// root above it, under `root` without the path's first components.
    fn read(path: &str, root: &Path) -> Source {
        let path = Path::new(path);
        let found = (0..path.components().count())
            .map(|skip| root.join(path.components().skip(skip).collect::<std::path::PathBuf>()))
            .find(|p| p.is_file());
        let text = found.as_ref().and_then(|p| std::fs::read_to_string(p).ok());
        Source {
            items: text.as_deref().and_then(analysis::items::code_items),
            lines: text
                .iter()
                .flat_map(|t| t.lines())
                .map(str::to_owned)
                .collect(),
            package: found.as_deref().and_then(|p| {
                p.ancestors()
                    .skip(1)
                    .find(|d| d.join("Cargo.toml").is_file())
                    .map(Path::to_path_buf)
            }),
        }
    }

    /// Which of `types` line `line` is the code of, when none owns it: a line of a type's
    /// `impl` or declaration (a private method, a helper type) is the code of the types of
    /// that name and of those that hold a type of that name; any other code (a free function,
    /// a const, a file that does not parse, a type nothing holds) may run in any type of its
    /// package, which is all of them. A line outside every item (a `use`, a comment between
    /// items) is nobody's, and so is one that holds no code of its own (blank, or only
    /// braces: the `}` before a removed line between two items).
    fn code_owners(&self, line: u32, types: &[&TypeModel]) -> Vec<usize> {
        let named = |path: &str, name: &str| path.rsplit("::").next() == Some(name);
        let text = self.lines.get(line.saturating_sub(1) as usize);
        if text.is_some_and(|t| t.trim().chars().all(|c| "{}();,".contains(c))) {
            return Vec::new();
        }
        if let Some(items) = &self.items {
            match analysis::items::item_at(items, line).map(|i| &i.kind) {
                None => return Vec::new(),
                Some(analysis::items::ItemKind::Type(name)) => {
                    let found: Vec<usize> = (0..types.len())
                        .filter(|&i| {
                            named(&types[i].path, name)
                                || types[i].holds.iter().any(|h| named(h, name))
                        })
                        .filter(|&i| self.same_package(types[i]))
                        .collect();
                    if !found.is_empty() {
                        return found;
                    }
                }
                Some(analysis::items::ItemKind::Code) => {}
            }
        }
        (0..types.len())
            .filter(|&i| self.same_package(types[i]))
            .collect()
    }

    /// Whether `ty` is declared in the package this file is in.
    fn same_package(&self, ty: &TypeModel) -> bool {
        self.package
            .as_deref()
            .is_some_and(|package| ty.span.file.starts_with(package))
    }
}

/// For each of `types`, the others that call into its code: those that hold it in a field
/// (`TypeModel::holds`: concurrent-queue's `ConcurrentQueue` holds its `Bounded`), and those
/// that hold one of them, three levels up.
fn callers(types: &[&TypeModel]) -> Vec<BTreeSet<usize>> {
    let holding = |i: usize| -> Vec<usize> {
        (0..types.len())
            .filter(|&j| j != i && types[j].holds.contains(&types[i].path))
            .collect()
    };
    (0..types.len())
        .map(|i| {
            let mut found = BTreeSet::new();
            let mut level = vec![i];
            for _ in 0..3 {
                level = level
                    .into_iter()
                    .flat_map(holding)
                    .filter(|&j| j != i && found.insert(j))
                    .collect();
            }
            found
        })
        .collect()
}

/// The lines of a type's own code: its declaration, its methods' declarations and bodies,
/// its own synchronisation sites (a private helper's only when it holds the helper, if one of
/// `types` does: [`analysis::SyncSite::held_helper`]) and its split points.
fn own_ranges<'a>(ty: &'a TypeModel, types: &[&TypeModel]) -> Vec<(&'a Path, u32, u32)> {
    fn through<'a>(start: &'a Span, end: Option<&Span>) -> (&'a Path, u32, u32) {
        (
            start.file.as_path(),
            start.line,
            end.map_or(start.line, |e| e.line.max(start.line)),
        )
    }
    let mut ranges = vec![through(&ty.span, ty.decl_end.as_ref())];
    ranges.extend(
        ty.methods
            .iter()
            .map(|m| through(&m.span, m.body_end.as_ref())),
    );
    ranges.extend(
        ty.sync_sites
            .iter()
            .filter(|s| s.untested_owner.is_none())
            .filter(|s| s.held_helper(types).is_none_or(|h| ty.holds.contains(h)))
            .map(|s| through(&s.receiver, None)),
    );
    ranges.extend(ty.split_points.iter().map(|p| through(&p.at, None)));
    ranges
}

/// Whether the diff's `path` names `file` (the model's, absolute or under `root`).
fn same_file(path: &str, file: &Path, root: &Path) -> bool {
    let relative = file.strip_prefix(root).unwrap_or(file);
    let path = Path::new(path);
    path.ends_with(relative) || relative.ends_with(path)
}

/// Whether `changed` has a line of `file` in `first..=last`.
pub fn touches(changed: &Lines, file: &Path, first: u32, last: u32, root: &Path) -> bool {
    changed.iter().any(|(path, lines)| {
        same_file(path, file, root) && lines.range(first..=last).next().is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::Method;

    const DIFF: &str = "diff --git a/src/lib.rs b/src/lib.rs\nindex 1..2 100644\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -10,4 +10,5 @@ impl X {\n     a();\n-    b();\n+    c();\n+    d();\n     e();\n@@ -40,3 +41,2 @@\n     x();\n-    y();\n     z();\n--- a/gone.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n";

    #[test]
    fn a_diff_gives_the_lines_it_adds_on_the_new_side() {
        let changed = added_lines(DIFF);
        assert_eq!(changed.len(), 1, "{changed:?}");
        assert_eq!(
            changed["src/lib.rs"].iter().copied().collect::<Vec<_>>(),
            vec![11, 12]
        );
    }

    /// A removal touches the lines around the gap it leaves, also in a hunk that adds none.
    #[test]
    fn a_removal_touches_the_lines_beside_it() {
        let changed = touched_lines(DIFF);
        assert_eq!(
            changed["src/lib.rs"].iter().copied().collect::<Vec<_>>(),
            vec![10, 11, 12, 41, 42]
        );
    }

    fn span(line: u32) -> Span {
        Span {
            file: "/ws/src/lib.rs".into(),
            line,
            column: 4,
        }
    }

    /// A type is touched through its declaration or a method's body, in the file the diff
    /// names relative to a root above the workspace's; not by a line between its items.
    #[test]
    fn a_type_is_touched_through_its_declaration_or_a_methods_body() {
        let ty = TypeModel {
            span: span(3),
            decl_end: Some(span(6)),
            methods: vec![Method {
                name: "put".into(),
                span: span(20),
                body_end: Some(span(30)),
                ..Method::default()
            }],
            ..TypeModel::default()
        };
        let root = Path::new("/ws");
        let touched = |line: u32, path: &str| {
            let at = Lines::from([(path.to_string(), BTreeSet::from([line]))]);
            touched_types(&at, &[&ty], &[true], root)[0]
        };
        for line in [3, 5, 6, 20, 25, 30] {
            assert!(touched(line, "src/lib.rs"), "{line}");
            assert!(touched(line, "repo/ws/src/lib.rs"), "{line}");
        }
        for line in [1, 2, 7, 19, 31] {
            assert!(!touched(line, "src/lib.rs"), "{line}");
        }
        assert!(!touched(25, "src/other.rs"));
    }

    /// A site the analysis gave every type of the package (an untestable guard's, which runs
    /// its owner's code) touches them only where no testable type owns the line: a change in
    /// the owner's method touches the owner alone, one in the helper's own code every type
    /// that took its sites.
    #[test]
    fn an_adopted_site_touches_its_adopters_only_where_no_tested_type_owns_the_line() {
        let adopted = |line: u32| analysis::SyncSite {
            method: "Guard::confirm".into(),
            receiver: span(line),
            untested_owner: Some("k::Guard".into()),
            ..analysis::SyncSite::default()
        };
        let owner = TypeModel {
            span: span(1),
            methods: vec![Method {
                name: "reserve".into(),
                span: span(10),
                body_end: Some(span(14)),
                ..Method::default()
            }],
            sync_sites: vec![adopted(12), adopted(40)],
            ..TypeModel::default()
        };
        let other = TypeModel {
            span: span(60),
            sync_sites: vec![adopted(12), adopted(40)],
            ..TypeModel::default()
        };
        let root = Path::new("/ws");
        let at = |line: u32| Lines::from([("src/lib.rs".to_string(), BTreeSet::from([line]))]);
        let touched = |line| touched_types(&at(line), &[&owner, &other], &[true, true], root);
        assert_eq!(touched(12), [true, false]);
        assert_eq!(touched(40), [true, true]);
        assert_eq!(touched(50), [false, false]);
        // The guard's own code, once the owner's scopes keep that guard: the owner's.
        let guard = TypeModel {
            path: "k::Guard".into(),
            span: span(38),
            methods: vec![Method {
                name: "confirm".into(),
                span: span(39),
                body_end: Some(span(42)),
                ..Method::default()
            }],
            ..TypeModel::default()
        };
        let keeper = TypeModel {
            scopes: vec![analysis::ScopeGuard {
                from: "reserve".into(),
                guard: "k::Guard".into(),
                holds: analysis::GuardHolder::Plain,
                finishers: vec![],
            }],
            ..owner.clone()
        };
        let types = [&keeper, &other, &guard];
        assert_eq!(
            touched_types(&at(40), &types, &[true, true, false], root),
            [true, false, true]
        );
    }

    /// The types that hold a type (three levels up) call into its code.
    #[test]
    fn a_change_in_a_types_code_touches_the_types_that_hold_it_three_levels_up() {
        let ty = |path: &str, holds: &[&str]| TypeModel {
            path: path.into(),
            holds: holds.iter().map(|h| h.to_string()).collect(),
            ..TypeModel::default()
        };
        let types = [
            ty("k::Inner", &[]),
            ty("k::Queue", &["k::Inner"]),
            ty("k::Pool", &["k::Queue"]),
            ty("k::Other", &[]),
        ];
        let types: Vec<&TypeModel> = types.iter().collect();
        let found: Vec<Vec<usize>> = callers(&types)
            .into_iter()
            .map(|c| c.into_iter().collect())
            .collect();
        assert_eq!(found, [vec![1, 2], vec![2], vec![], vec![]]);
    }

    /// An untracked file reads as a diff that adds every line of it.
    #[test]
    fn a_new_file_is_added_whole() {
        let text = whole_file_added("src/fresh.rs", "a\n\nb\n");
        let lines = added_lines(&text);
        assert_eq!(lines["src/fresh.rs"], BTreeSet::from([1, 2, 3]));
    }

    /// A private helper's site, which every type of the package took, touches the types that
    /// hold the helper (crossbeam-utils' `Parker` for its `Inner`, not `AtomicCell`), and every
    /// type that took it when none holds it.
    #[test]
    fn a_helpers_site_touches_the_types_that_hold_the_helper() {
        let site = analysis::SyncSite {
            method: "Inner::park".into(),
            receiver: span(30),
            helper: Some("k::Inner".into()),
            ..analysis::SyncSite::default()
        };
        let of = |start: u32, holds: &[&str]| TypeModel {
            span: span(start),
            sync_sites: vec![site.clone()],
            holds: holds.iter().map(|h| h.to_string()).collect(),
            ..TypeModel::default()
        };
        let root = Path::new("/ws");
        let at = Lines::from([("src/lib.rs".to_string(), BTreeSet::from([30]))]);
        let (cell, parker) = (of(1, &[]), of(10, &["k::Inner"]));
        assert_eq!(
            touched_types(&at, &[&cell, &parker], &[true, true], root),
            [false, true]
        );
        let unparker = of(20, &[]);
        assert_eq!(
            touched_types(&at, &[&cell, &unparker], &[true, true], root),
            [true, true]
        );
    }
}
