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
/// (`SyncSite::untested_owner`) — and touches each type that took such a site there. Paths
/// match when one ends with the other: a diff names files from the repository's root, which
/// may be above the workspace's.
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
    let mut touched = vec![false; types.len()];
    for (file, lines) in changed {
        for &line in lines {
            let direct: Vec<bool> = own.iter().map(|r| holds(r, file, line)).collect();
            let owners: Vec<usize> = (0..types.len())
                .filter(|&i| direct[i] || guards[i].iter().any(|&g| direct[g]))
                .collect();
            let owned = owners.iter().any(|&i| testable[i]);
            for &i in &owners {
                touched[i] = true;
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
