//! How a crate's own docs and tests write its generic types: `Family::<Labels, Counter>::default()`
//! in a doc example, `let c: Cache<u64, String> = ..` in a test. The arguments they write that
//! code outside the crate can name go first among a type parameter's candidates (issue 29,
//! item 1): the crate's authors chose them, so they meet the bounds the code needs, also those
//! the declaration leaves unsaid. prometheus-client 0.18's `Family<S, M, C = fn() -> M>` leaves
//! `M` unbounded: `M = u32` compiles, and its `get_or_create` then hands out a number where the
//! docs hand out a `Counter`, whose `inc` is where its lost update shows.
//!
//! Read are the Rust code blocks of the doc comments of the crate's files (`///`, `//!`), its
//! README's, and the files of its `tests/` and `examples/` directories. A block is parsed as a
//! function body (as rustdoc runs it) and its hidden lines (`# `) count. An argument is kept
//! when every name in it reaches a definition: through the snippet's own `use`s, as a path of
//! the crate (`my_crate::metrics::Counter`), from the crate root (std's prelude, primitives),
//! or as the only public type of the crate with that name. A type the example declares itself
//! (`struct Labels`) is not kept: the harness cannot name it.

use super::index::{CrateIndex, Def};
use super::render::tokens;
use std::collections::HashMap;
use std::path::Path;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;

/// Largest file read for usages: a generated test table says nothing a person chose.
const LARGEST_FILE: usize = 512 * 1024;

/// Most files read from `tests/` and `examples/` each.
const MOST_FILES: usize = 200;

/// The argument lists the crate's docs and tests write for its generic types.
#[derive(Debug, Default, Clone)]
pub(crate) struct Usages {
    /// By type name (its last segment): each written argument list, its arguments as code
    /// from the crate root (`crate::metrics::Counter`, `u64`), `None` for one that could
    /// not be named there (and for lifetimes), in the order met.
    by_name: HashMap<String, Vec<Vec<Option<String>>>>,
}

impl Usages {
    /// The usages of the package whose library files' texts are `sources` and whose manifest
    /// directory is `dir`.
    pub(crate) fn collect<'a>(
        sources: impl Iterator<Item = &'a str>,
        dir: Option<&Path>,
        index: &CrateIndex,
    ) -> Usages {
        let mut usages = Usages::default();
        for text in sources {
            for block in doc_blocks(text) {
                usages.read_snippet(&block, index);
            }
        }
        let Some(dir) = dir else {
            return usages;
        };
        if let Ok(readme) = std::fs::read_to_string(dir.join("README.md")) {
            for block in markdown_blocks(&readme) {
                usages.read_snippet(&block, index);
            }
        }
        for sub in ["tests", "examples"] {
            for file in rust_files(&dir.join(sub)) {
                if let Ok(text) = std::fs::read_to_string(&file) {
                    if text.len() <= LARGEST_FILE {
                        if let Ok(ast) = syn::parse_file(&text) {
                            usages.read(&ast, index);
                        }
                    }
                }
            }
        }
        usages
    }

    /// The argument lists written for the type named `name`, in the order met.
    pub(crate) fn of(&self, name: &str) -> &[Vec<Option<String>>] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// Reads a doc example: a whole file when it declares `main`, else a function's body.
    fn read_snippet(&mut self, code: &str, index: &CrateIndex) {
        if code.len() > LARGEST_FILE {
            return;
        }
        let file = if code.contains("fn main") {
            syn::parse_file(code)
        } else {
            syn::parse_file(&format!("fn main() {{\n{code}\n}}"))
        };
        if let Ok(file) = file {
            self.read(&file, index);
        }
    }

    fn read(&mut self, file: &syn::File, index: &CrateIndex) {
        let mut imports = Imports::default();
        imports.visit_file(file);
        let mut paths = Paths {
            imports: &imports.0,
            index,
            found: Vec::new(),
        };
        paths.visit_file(file);
        for (name, args) in paths.found {
            self.by_name.entry(name).or_default().push(args);
        }
    }
}

/// The names a file's `use` items bring in (anywhere in it, also inside functions): name →
/// path. Globs are left out.
#[derive(Default)]
struct Imports(HashMap<String, Vec<String>>);

impl Imports {
    fn tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                path.push(n.ident.to_string());
                self.0.insert(n.ident.to_string(), path);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                self.0.insert(r.rename.to_string(), path);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.tree(prefix, t);
                }
            }
            syn::UseTree::Glob(_) => {}
        }
    }
}

impl<'ast> Visit<'ast> for Imports {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.tree(&mut Vec::new(), &u.tree);
    }
}

/// Every path segment with angle-bracketed type arguments (`Cache<u64, String>` in a type,
/// `Family::<L, Counter>` in an expression), its arguments named from the crate root.
struct Paths<'a> {
    imports: &'a HashMap<String, Vec<String>>,
    index: &'a CrateIndex,
    found: Vec<(String, Vec<Option<String>>)>,
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_path_segment(&mut self, seg: &'ast syn::PathSegment) {
        if let syn::PathArguments::AngleBracketed(args) = &seg.arguments {
            let named = args
                .args
                .iter()
                .filter_map(|a| match a {
                    syn::GenericArgument::Lifetime(_) => None,
                    syn::GenericArgument::Type(t) => Some(self.named(t)),
                    _ => Some(None),
                })
                .collect::<Vec<_>>();
            if !named.is_empty() {
                self.found.push((seg.ident.to_string(), named));
            }
        }
        syn::visit::visit_path_segment(self, seg);
    }
}

impl Paths<'_> {
    /// `ty` written from the crate root, when every name in it can be.
    fn named(&self, ty: &syn::Type) -> Option<String> {
        let mut ty = ty.clone();
        let mut rooted = Rooted {
            imports: self.imports,
            index: self.index,
            failed: false,
        };
        rooted.visit_type_mut(&mut ty);
        (!rooted.failed).then(|| tokens(&ty))
    }
}

/// Rewrites a type's paths to start at the crate root (`crate::…` for the crate's own,
/// `::std::…` for std's), failing on a name it cannot place.
struct Rooted<'a> {
    imports: &'a HashMap<String, Vec<String>>,
    index: &'a CrateIndex,
    failed: bool,
}

impl VisitMut for Rooted<'_> {
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        match ty {
            syn::Type::Path(_)
            | syn::Type::Tuple(_)
            | syn::Type::Reference(_)
            | syn::Type::Array(_)
            | syn::Type::Slice(_)
            | syn::Type::Paren(_)
            | syn::Type::BareFn(_) => syn::visit_mut::visit_type_mut(self, ty),
            // `impl Trait`, `dyn Trait`, `_` and macros name no type the harness can write.
            _ => self.failed = true,
        }
    }

    fn visit_type_path_mut(&mut self, tp: &mut syn::TypePath) {
        if tp.qself.is_some() {
            self.failed = true;
            return;
        }
        match self.root(&tp.path) {
            Some(segs) => {
                let args: Vec<syn::PathArguments> = tp
                    .path
                    .segments
                    .iter()
                    .map(|s| s.arguments.clone())
                    .collect();
                let Ok(mut path) = syn::parse_str::<syn::Path>(&segs.join("::")) else {
                    self.failed = true;
                    return;
                };
                // The written segments' arguments stay on the segments they were written on,
                // counted from the end (an import replaces the first segment by several).
                let skip = path.segments.len().saturating_sub(args.len());
                for (seg, a) in path.segments.iter_mut().skip(skip).zip(args) {
                    seg.arguments = a;
                }
                path.leading_colon = segs
                    .first()
                    .is_some_and(|f| f != "crate")
                    .then(Default::default)
                    .filter(|_| segs.len() > 1);
                tp.path = path;
            }
            None => self.failed = true,
        }
        syn::visit_mut::visit_type_path_mut(self, tp);
    }
}

impl Rooted<'_> {
    /// The segments `path` names from the crate root, `crate` first for the crate's own.
    fn root(&self, path: &syn::Path) -> Option<Vec<String>> {
        let mut segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let first = segs.first()?.clone();
        if path.leading_colon.is_none() {
            if let Some(imported) = self.imports.get(&first) {
                segs.splice(0..1, imported.iter().cloned());
            }
        }
        let index = self.index;
        if segs[0] == index.krate {
            segs[0] = "crate".into();
        }
        let def = match index.resolve(&[], &segs) {
            Some((def, used)) if used == segs.len() => def,
            // `use my_crate::*;` brought it in: the one public type of that name.
            _ if segs.len() == 1 => index.public_type_named(&segs[0])?,
            _ => return None,
        };
        match def {
            Def::Builtin(name) => Some(vec![name]),
            Def::External(p) => Some(p),
            Def::Item { .. } => {
                let public = index.public_path(&def)?;
                let mut out = vec!["crate".to_string()];
                out.extend(public.split("::").skip(1).map(String::from));
                Some(out)
            }
            Def::Module(_) => None,
        }
    }
}

/// The Rust code blocks of the doc comments (`///`, `//!`) of a file's text, hidden lines
/// (`# `) included.
fn doc_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    let mut rust = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let Some(doc) = trimmed
            .strip_prefix("///")
            .or_else(|| trimmed.strip_prefix("//!"))
        else {
            // A comment ends: so does any block left open in it.
            current = None;
            continue;
        };
        let doc = doc.strip_prefix(' ').unwrap_or(doc);
        fence_line(doc, &mut current, &mut rust, &mut blocks);
    }
    blocks
}

/// The Rust code blocks of a Markdown text.
fn markdown_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    let mut rust = false;
    for line in text.lines() {
        fence_line(line, &mut current, &mut rust, &mut blocks);
    }
    blocks
}

/// One line of documentation: opens or closes a fenced block, or adds to the open one.
fn fence_line(line: &str, current: &mut Option<String>, rust: &mut bool, blocks: &mut Vec<String>) {
    let trimmed = line.trim();
    if let Some(info) = trimmed
        .strip_prefix("```")
        .or_else(|| trimmed.strip_prefix("~~~"))
    {
        match current.take() {
            Some(block) => {
                if *rust {
                    blocks.push(block);
                }
            }
            None => {
                *rust = is_rust(info);
                *current = Some(String::new());
            }
        }
        return;
    }
    if let Some(block) = current {
        // rustdoc's hidden lines: `# let x = 1;` runs as `let x = 1;`, a lone `#` is blank.
        let code = match trimmed.strip_prefix('#') {
            Some(rest) if rest.is_empty() || rest.starts_with(' ') => {
                rest.strip_prefix(' ').unwrap_or(rest)
            }
            _ => line,
        };
        block.push_str(code);
        block.push('\n');
    }
}

/// Whether a fence's info string marks Rust that compiles, as rustdoc reads it: no info, or
/// only rustdoc's attributes (`ignore`, `no_run`, `should_panic`, `edition2021`); not
/// `compile_fail`, and not another language.
fn is_rust(info: &str) -> bool {
    info.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .all(|w| {
            matches!(
                w,
                "rust" | "ignore" | "no_run" | "should_panic" | "test_harness"
            ) || w.starts_with("edition")
        })
}

/// The `.rs` files under `dir`, a few levels down, sorted, at most [`MOST_FILES`].
fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for path in entries.filter_map(Result::ok).map(|e| e.path()) {
            if path.is_dir() && depth < 3 {
                stack.push((path, depth + 1));
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out.truncate(MOST_FILES);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::index::module_facts;

    fn index(source: &str) -> CrateIndex {
        let file = syn::parse_file(source).unwrap();
        let mut modules = Vec::new();
        module_facts(&file.items, &[], &mut modules);
        CrateIndex::new("metrics", "2021", modules, ["parking_lot".to_string()])
    }

    const CRATE: &str = "
        pub mod counter { pub struct Counter; }
        pub mod family { pub struct Family<S, M> { s: S, m: M } }
        mod private { pub struct Hidden; }
    ";

    #[test]
    fn doc_examples_name_the_arguments_the_crate_uses() {
        let lib = r#"
/// ```
/// # use metrics::counter::Counter;
/// # use metrics::family::Family;
/// #[derive(Clone, Hash, PartialEq, Eq)]
/// struct Labels { method: String }
/// let family = Family::<Labels, Counter>::default();
/// let other: Family<Vec<(String, u64)>, metrics::counter::Counter> = Family::default();
/// ```
///
/// ```text
/// Family<u8, u8> is not code
/// ```
///
/// ```compile_fail
/// let f = Family::<u16, u16>::default();
/// ```
pub struct Family;
"#;
        let usages = Usages::collect([lib].into_iter(), None, &index(CRATE));
        assert_eq!(
            usages.of("Family"),
            &[
                vec![None, Some("crate::counter::Counter".to_string())],
                vec![
                    Some("::std::vec::Vec<(::std::string::String, u64)>".into()),
                    Some("crate::counter::Counter".into())
                ],
            ]
        );
    }

    #[test]
    fn a_test_file_names_a_crate_type_by_its_unique_name_and_not_a_private_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("tests/it.rs"),
            "use metrics::*;\n#[test] fn t() { let f: Family<u32, Counter> = todo!(); \
             let g: Family<Hidden, u8> = todo!(); let h = Family::<_, Counter>::new(); }",
        )
        .unwrap();
        let usages = Usages::collect(std::iter::empty(), Some(dir.path()), &index(CRATE));
        let counter = Some("crate::counter::Counter".to_string());
        assert_eq!(
            usages.of("Family"),
            &[
                vec![Some("u32".to_string()), counter.clone()],
                vec![None, Some("u8".to_string())],
                vec![None, counter],
            ]
        );
    }
}
