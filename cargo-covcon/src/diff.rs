//! Unified diffs (`git diff`) for `--in-diff`: which lines of which files a change touches,
//! and which thread-safe types those lines belong to.

use analysis::{Span, TypeModel};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Lines of each file, by the file's path as the diff names it (`b/` dropped).
pub type Lines = BTreeMap<String, BTreeSet<u32>>;

/// The lines the diff in `file` touches ([`touched_lines`]); a file that cannot be read is a
/// usage error.
pub fn read(file: &Path) -> anyhow::Result<Lines> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        crate::exit_code::usage_error(format_args!(
            "cannot read --in-diff {}: {e}",
            file.display()
        ))
    })?;
    Ok(touched_lines(&text))
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

/// Whether `changed` touches `ty`: its declaration, the declaration or body of one of its
/// methods (a handle's methods included), or one of its synchronisation sites or split points
/// (the sites of the private helpers its calls run, which the analysis gives the type). Paths
/// match when one ends with the other: a diff names files from the repository's root, which
/// may be above the workspace's.
pub fn touches_type(changed: &Lines, ty: &TypeModel, root: &Path) -> bool {
    let through = |start: &Span, end: Option<&Span>| {
        (
            start.clone(),
            end.map_or(start.line, |e| e.line.max(start.line)),
        )
    };
    let ranges = std::iter::once(through(&ty.span, ty.decl_end.as_ref()))
        .chain(
            ty.methods
                .iter()
                .map(|m| through(&m.span, m.body_end.as_ref())),
        )
        .chain(ty.sync_sites.iter().map(|s| through(&s.receiver, None)))
        .chain(ty.split_points.iter().map(|p| through(&p.at, None)));
    ranges
        .into_iter()
        .any(|(start, last)| touches(changed, &start.file, start.line, last, root))
}

/// Whether `changed` has a line of `file` in `first..=last`.
pub fn touches(changed: &Lines, file: &Path, first: u32, last: u32, root: &Path) -> bool {
    let relative = file.strip_prefix(root).unwrap_or(file);
    changed.iter().any(|(path, lines)| {
        let path = Path::new(path);
        (path.ends_with(relative) || relative.ends_with(path))
            && lines.range(first..=last).next().is_some()
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
        let at = |line: u32, path: &str| Lines::from([(path.to_string(), BTreeSet::from([line]))]);
        for line in [3, 5, 6, 20, 25, 30] {
            assert!(touches_type(&at(line, "src/lib.rs"), &ty, root), "{line}");
            assert!(
                touches_type(&at(line, "repo/ws/src/lib.rs"), &ty, root),
                "{line}"
            );
        }
        for line in [1, 2, 7, 19, 31] {
            assert!(!touches_type(&at(line, "src/lib.rs"), &ty, root), "{line}");
        }
        assert!(!touches_type(&at(25, "src/other.rs"), &ty, root));
    }
}
