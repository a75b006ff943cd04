//! The instrumented copy: the user's workspace tree (minus `target/` and VCS directories) is
//! mirrored under `<out>/copy/`, with guards and schedule points inserted and a path
//! dependency on the runtime crate added to each package under test.
//!
//! Only files whose content changed are written, so cargo's incremental builds of the copy are
//! reused from run to run; files that disappeared from the source are removed from the copy.
//! The user's tree is only ever read. Insertions never add a line, so a rustc error in the copy
//! points at the same line as in the user's source.

use crate::OracleError;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

/// Text inserted at a position of a source file of the user's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Insertion {
    /// Absolute path in the user's tree.
    pub(crate) file: PathBuf,
    /// 1-based line, 0-based column in characters (proc-macro2's convention).
    pub(crate) line: u32,
    pub(crate) column: u32,
    pub(crate) text: String,
    /// The order of insertions at one position: what closes an expression that ends there
    /// goes before a statement that starts there, which goes before what opens an expression
    /// that starts there.
    pub(crate) rank: Rank,
    /// The position (line, column) that names the instrumentation it belongs to: its own, or
    /// for one of the parts of a wrapped call, the call's start. The parts are left out
    /// together when the copy does not compile with them. A mutant's parts have `(0, id)`.
    pub(crate) key: (u32, u32),
    /// Set for a replacement: the text from `line`:`column` to here is replaced by `text`
    /// (padded with the line breaks it takes out, so that lines stay where they were).
    pub(crate) end: Option<(u32, u32)>,
}

/// See [`Insertion::rank`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Rank {
    Close,
    Middle,
    Statement,
    /// What wraps a statement that starts there, inside the statements inserted before it
    /// and outside what opens its expression (a mutant's `if !on { … }` around it).
    Wrap,
    Open,
}

impl Insertion {
    /// A statement (or item) inserted at `line`:`column`.
    pub(crate) fn statement(file: PathBuf, line: u32, column: u32, text: String) -> Insertion {
        Insertion {
            file,
            line,
            column,
            text,
            rank: Rank::Statement,
            key: (line, column),
            end: None,
        }
    }
}

/// The copy after [`sync`].
#[derive(Debug, Clone)]
pub(crate) struct Copy {
    /// `<out>/copy`.
    pub(crate) root: PathBuf,
    /// Hash of every path and content written to the copy.
    pub(crate) fingerprint: u64,
    /// Insertions whose position did not exist in the file (stale model): left out.
    pub(crate) misplaced: Vec<Insertion>,
}

/// Directory names never copied, wherever they are.
const SKIPPED_DIRS: [&str; 7] = [".git", ".hg", ".svn", ".jj", ".bzr", "_darcs", ".pijul"];

/// Mirrors `workspace_root` into `<out_dir>/copy`, applying `insertions` and adding a
/// dependency on the runtime at `runtime_dir` to the manifests in `manifests` (absolute paths
/// in the user's tree).
pub(crate) fn sync(
    workspace_root: &Path,
    out_dir: &Path,
    insertions: &[Insertion],
    manifests: &BTreeSet<PathBuf>,
    runtime_dir: &Path,
) -> Result<Copy, OracleError> {
    let root = out_dir.join("copy");
    let mut by_file: BTreeMap<PathBuf, Vec<&Insertion>> = BTreeMap::new();
    for insertion in insertions {
        by_file
            .entry(absolute(workspace_root, &insertion.file))
            .or_default()
            .push(insertion);
    }
    let mut files = Vec::new();
    list_files(workspace_root, workspace_root, out_dir, &mut files)?;
    let mut hasher = DefaultHasher::new();
    let mut misplaced = Vec::new();
    let mut kept = BTreeSet::new();
    for relative in &files {
        let source = workspace_root.join(relative);
        let mut content = std::fs::read(&source)
            .map_err(|e| OracleError::io(format!("reading {}", source.display()), e))?;
        if let Some(list) = by_file.get(&source) {
            let text = String::from_utf8_lossy(&content).into_owned();
            let (text, missed) = insert(&text, list);
            misplaced.extend(missed.into_iter().cloned());
            content = text.into_bytes();
        }
        if relative.file_name().is_some_and(|n| n == "Cargo.toml") {
            let text = String::from_utf8_lossy(&content).into_owned();
            let wants_runtime = manifests.contains(&source);
            content = fix_manifest(
                &text,
                &source,
                workspace_root,
                wants_runtime.then_some(runtime_dir),
            )
            .into_bytes();
        }
        relative.hash(&mut hasher);
        content.hash(&mut hasher);
        let target = root.join(relative);
        write_if_changed(&target, &content)?;
        kept.insert(target);
    }
    remove_stale(&root, &kept)?;
    Ok(Copy {
        root,
        fingerprint: hasher.finish(),
        misplaced,
    })
}

/// Where a path of the user's tree lives in the copy.
pub(crate) fn in_copy(workspace_root: &Path, copy_root: &Path, path: &Path) -> PathBuf {
    let path = absolute(workspace_root, path);
    match path.strip_prefix(workspace_root) {
        Ok(relative) => copy_root.join(relative),
        Err(_) => path,
    }
}

/// `path` made absolute against the workspace root (which is canonical). An absolute path
/// outside it that reaches into it through a symbolic link (a checkout under a linked
/// directory, macOS's `/tmp`; cargo reports manifests as the user named them) is resolved,
/// so that it maps into the copy: left as it was, the harness would build the user's
/// uninstrumented tree.
pub(crate) fn absolute(workspace_root: &Path, path: &Path) -> PathBuf {
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        workspace_root.join(path)
    };
    if path.starts_with(workspace_root) {
        return path;
    }
    match path.canonicalize() {
        Ok(resolved) if resolved.starts_with(workspace_root) => resolved,
        _ => path,
    }
}

/// The files under `dir`, relative to `workspace_root`, in name order: no version control
/// directory, no build output (`target` at the root or marked by its `CACHEDIR.TAG`), nothing
/// under `out_dir`.
pub(crate) fn list_files(
    workspace_root: &Path,
    dir: &Path,
    out_dir: &Path,
    files: &mut Vec<PathBuf>,
) -> Result<(), OracleError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| OracleError::io(format!("listing {}", dir.display()), e))?;
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        if kind.is_dir() {
            let is_target =
                name == "target" && (dir == workspace_root || path.join("CACHEDIR.TAG").exists());
            if is_target || SKIPPED_DIRS.iter().any(|s| name == *s) || path == out_dir {
                continue;
            }
            list_files(workspace_root, &path, out_dir, files)?;
        } else if kind.is_file() || (kind.is_symlink() && path.is_file()) {
            if let Ok(relative) = path.strip_prefix(workspace_root) {
                files.push(relative.to_path_buf());
            }
        }
    }
    Ok(())
}

/// Inserts each text at its position; answers the new text and the insertions whose position
/// does not exist in it.
pub(crate) fn insert<'a>(text: &str, insertions: &[&'a Insertion]) -> (String, Vec<&'a Insertion>) {
    let lines = Lines::new(text);
    let mut placed: Vec<(usize, Rank, usize, usize, &Insertion)> = Vec::new();
    let mut missed = Vec::new();
    for (order, insertion) in insertions.iter().enumerate() {
        let start = lines.offset(insertion.line, insertion.column);
        let end = match insertion.end {
            Some((line, column)) => lines.offset(line, column),
            None => start,
        };
        match (start, end) {
            (Some(start), Some(end)) if start <= end => {
                placed.push((start, insertion.rank, order, end, insertion))
            }
            _ => missed.push(*insertion),
        }
    }
    placed.sort_by_key(|(offset, rank, order, _, _)| (*offset, *rank, *order));
    let mut out = String::with_capacity(text.len() + placed.len() * 64);
    let mut done = 0;
    for (offset, _, _, end, insertion) in placed {
        if offset < done {
            // Inside a replaced range: the replacement says what goes there.
            missed.push(insertion);
            continue;
        }
        out.push_str(&text[done..offset]);
        out.push_str(&insertion.text);
        let breaks = text[offset..end].matches('\n').count();
        for _ in insertion.text.matches('\n').count()..breaks {
            out.push('\n');
        }
        done = end;
    }
    out.push_str(&text[done..]);
    (out, missed)
}

/// Byte offsets of positions (1-based line, 0-based column in characters) in a text.
pub(crate) struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    pub(crate) fn new(text: &'t str) -> Lines<'t> {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { text, starts }
    }

    /// The byte offset of a position; the end of a line is a position too.
    pub(crate) fn offset(&self, line: u32, column: u32) -> Option<usize> {
        let start = *self.starts.get((line as usize).checked_sub(1)?)?;
        let text = self.text;
        let line_end = text[start..].find('\n').map_or(text.len(), |e| start + e);
        let line = &text[start..line_end];
        let column = column as usize;
        if column == line.chars().count() {
            Some(line_end)
        } else {
            line.char_indices().nth(column).map(|(i, _)| start + i)
        }
    }

    /// The text between two positions.
    pub(crate) fn slice(&self, from: (u32, u32), to: (u32, u32)) -> Option<&'t str> {
        let (a, b) = (self.offset(from.0, from.1)?, self.offset(to.0, to.1)?);
        self.text.get(a..b)
    }
}

/// Makes ascending relative `path`s absolute (they would point elsewhere from the copy) and,
/// for a package under test, adds the runtime dependency. Unparsable manifests are copied as
/// they are; cargo will report them.
fn fix_manifest(
    text: &str,
    source: &Path,
    workspace_root: &Path,
    runtime: Option<&Path>,
) -> String {
    let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else {
        return text.to_string();
    };
    let dir = source.parent().unwrap_or(workspace_root);
    let mut changed = absolutize_paths(doc.as_item_mut(), dir, workspace_root);
    if let Some(runtime) = runtime {
        let deps = doc
            .entry("dependencies")
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
        if let Some(deps) = deps.as_table_like_mut() {
            let mut dep = toml_edit::InlineTable::new();
            dep.insert("path", runtime.display().to_string().into());
            deps.insert("covcon-rt", toml_edit::value(dep));
            changed = true;
        }
    }
    if changed {
        doc.to_string()
    } else {
        text.to_string()
    }
}

fn absolutize_paths(item: &mut toml_edit::Item, dir: &Path, workspace_root: &Path) -> bool {
    let mut changed = false;
    if let Some(table) = item.as_table_like_mut() {
        for (key, value) in table.iter_mut() {
            if key.get() == "path" {
                if let Some(path) = value.as_str().filter(|p| p.starts_with("..")) {
                    let resolved = normalize(&dir.join(path));
                    if !resolved.starts_with(workspace_root) {
                        *value = toml_edit::value(resolved.display().to_string());
                        changed = true;
                    }
                }
            } else {
                changed |= absolutize_paths(value, dir, workspace_root);
            }
        }
    } else if let Some(value) = item.as_value_mut() {
        if let Some(inline) = value.as_inline_table_mut() {
            let mut wrapped = toml_edit::Item::Value(toml_edit::Value::InlineTable(inline.clone()));
            if absolutize_paths(&mut wrapped, dir, workspace_root) {
                if let Some(fixed) = wrapped.as_inline_table() {
                    *inline = fixed.clone();
                }
                changed = true;
            }
        }
    }
    changed
}

/// Removes `.` and `..` components without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Writes `content` to `path` unless it already holds exactly that, keeping its mtime.
pub(crate) fn write_if_changed(path: &Path, content: &[u8]) -> Result<bool, OracleError> {
    if std::fs::read(path).is_ok_and(|old| old == content) {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| OracleError::io(format!("creating {}", parent.display()), e))?;
    }
    std::fs::write(path, content)
        .map_err(|e| OracleError::io(format!("writing {}", path.display()), e))?;
    Ok(true)
}

fn remove_stale(root: &Path, kept: &BTreeSet<PathBuf>) -> Result<(), OracleError> {
    let mut present = Vec::new();
    if root.exists() {
        list_files(root, root, &root.join("target"), &mut present)?;
    }
    for relative in present {
        let path = root.join(&relative);
        if !kept.contains(&path) {
            let _ = std::fs::remove_file(&path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, at: &[(u32, u32, &str)], expect: &str) {
        let insertions: Vec<Insertion> = at
            .iter()
            .map(|(line, column, text)| {
                Insertion::statement(PathBuf::from("f.rs"), *line, *column, text.to_string())
            })
            .collect();
        let refs: Vec<&Insertion> = insertions.iter().collect();
        let (out, missed) = insert(text, &refs);
        let missed: Vec<String> = missed
            .iter()
            .map(|m| format!("{}:{}", m.line, m.column))
            .collect();
        assert_eq!(format!("{out}|{}", missed.join(",")), expect);
    }

    #[cfg(unix)]
    #[test]
    fn a_path_through_a_symbolic_link_maps_into_the_copy() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir_all(real.join("src")).unwrap();
        std::fs::write(real.join("src/lib.rs"), "").unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let root = real.canonicalize().unwrap();
        let through_link = dir.path().join("link/src/lib.rs");
        let copy_root = Path::new("/copy");
        assert_eq!(
            in_copy(&root, copy_root, &through_link),
            copy_root.join("src/lib.rs")
        );
        assert_eq!(
            in_copy(&root, copy_root, Path::new("src/lib.rs")),
            copy_root.join("src/lib.rs")
        );
        // A path outside the workspace stays where it is.
        let outside = dir.path().join("elsewhere.rs");
        assert_eq!(in_copy(&root, copy_root, &outside), outside);
    }

    #[test]
    fn insertions_go_at_character_columns_and_keep_the_line_count() {
        check(
            "fn a() {\n    x();\n}\n",
            &[(1, 8, "G;")],
            "fn a() {G;\n    x();\n}\n|",
        );
        check(
            "fn é() {\n    x();\n}\n",
            &[(1, 8, "G;"), (2, 4, "S;")],
            "fn é() {G;\n    S;x();\n}\n|",
        );
        check("fn a() {}\n", &[(9, 0, "G;")], "fn a() {}\n|9:0");
    }

    #[test]
    fn a_replacement_keeps_the_lines_it_spans_and_what_falls_inside_it_is_left_out() {
        let text = "fn a() {\n    let x = f(1,\n        2);\n    g();\n}\n";
        let replace = Insertion {
            end: Some((3, 10)),
            ..Insertion::statement(PathBuf::from("f.rs"), 2, 12, "h()".into())
        };
        let inside = Insertion::statement(PathBuf::from("f.rs"), 3, 8, "X".into());
        let after = Insertion::statement(PathBuf::from("f.rs"), 4, 4, "S;".into());
        let (out, missed) = insert(text, &[&replace, &inside, &after]);
        assert_eq!(out, "fn a() {\n    let x = h()\n;\n    S;g();\n}\n");
        assert_eq!(missed, vec![&inside]);
    }

    #[test]
    fn manifests_of_packages_under_test_get_the_runtime_and_absolute_outside_paths() {
        let text = "[package]\nname = \"p\"\n\n[dependencies]\nq = { path = \"../../q\" }\nr = { path = \"../r\" }\n";
        let fixed = fix_manifest(
            text,
            Path::new("/ws/p/Cargo.toml"),
            Path::new("/ws"),
            Some(Path::new("/out/covcon-rt")),
        );
        assert!(fixed.contains("q = { path = \"/q\" }"), "{fixed}");
        assert!(fixed.contains("r = { path = \"../r\" }"), "{fixed}");
        assert!(
            fixed.contains("covcon-rt = { path = \"/out/covcon-rt\" }"),
            "{fixed}"
        );
    }
}
