//! Reading a library target's module tree: `mod x;` resolved to `x.rs` or `x/mod.rs`,
//! `#[path]` honoured, `#[cfg(test)]` modules skipped. Files are parsed in parallel, one
//! level of the tree at a time. A file that cannot be read or parsed becomes a diagnostic.
//!
//! syn trees cannot cross threads (proc-macro2 spans are thread-local), so the parallel pass
//! keeps only owned facts per file ([`FileFacts`]); the few files that hold thread-safe types
//! are parsed again on the analysing thread ([`parse_relevant`]).

use crate::discover::{file_facts, FileFacts};
use crate::model::{Diagnostic, Severity, Span};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// One parsed file of a crate and the module it holds.
pub(crate) struct SourceFile {
    pub path: PathBuf,
    /// Module path below the crate root (`["net", "pool"]`), empty for the root file.
    pub module: Vec<String>,
    pub ast: syn::File,
}

/// One file of a crate as the parallel pass leaves it: text and owned facts, no syntax tree.
pub(crate) struct LoadedFile {
    pub path: PathBuf,
    pub module: Vec<String>,
    pub text: String,
    pub facts: FileFacts,
}

/// Parses the chosen files again on the calling thread.
pub(crate) fn parse_relevant(
    files: &[LoadedFile],
    keep: impl Fn(&LoadedFile) -> bool,
) -> Vec<SourceFile> {
    files
        .iter()
        .filter(|f| keep(f))
        .filter_map(|f| {
            let ast = parse_file(&f.path, &f.text).ok()?;
            Some(SourceFile {
                path: f.path.clone(),
                module: f.module.clone(),
                ast,
            })
        })
        .collect()
}

/// A module whose file still has to be found and parsed.
struct Pending {
    path: PathBuf,
    module: Vec<String>,
    /// Whether children of this file live in its own directory (`lib.rs`, `mod.rs`, `#[path]`).
    mod_rs: bool,
}

/// Loads every module file reachable from the crate root.
pub(crate) fn load_crate(root: &Path) -> (Vec<LoadedFile>, Vec<Diagnostic>) {
    let mut files = Vec::new();
    let mut diagnostics = Vec::new();
    let mut level = vec![Pending {
        path: root.to_path_buf(),
        module: Vec::new(),
        mod_rs: true,
    }];
    let mut seen = std::collections::HashSet::new();
    while !level.is_empty() {
        level.retain(|p| seen.insert(p.path.clone()));
        let results: Vec<(Option<LoadedFile>, Vec<Pending>, Vec<Diagnostic>)> =
            level.par_iter().map(load_one).collect();
        level = Vec::new();
        for (file, children, diags) in results {
            files.extend(file);
            level.extend(children);
            diagnostics.extend(diags);
        }
    }
    (files, diagnostics)
}

fn load_one(p: &Pending) -> (Option<LoadedFile>, Vec<Pending>, Vec<Diagnostic>) {
    let text = match std::fs::read_to_string(&p.path) {
        Ok(t) => t,
        Err(e) => {
            let d = error(format!("cannot read {}: {e}", p.path.display()), None);
            return (None, Vec::new(), vec![d]);
        }
    };
    match parse_file(&p.path, &text) {
        Ok(ast) => {
            let mut children = Vec::new();
            let mut diags = Vec::new();
            let dir = child_dir(&p.path, p.mod_rs);
            let base = p.path.parent().unwrap_or(Path::new("")).to_path_buf();
            collect_mods(
                &ast.items,
                &dir,
                &base,
                &p.module,
                &p.path,
                &mut children,
                &mut diags,
            );
            let facts = file_facts(&ast, &p.module);
            drop(ast);
            let file = LoadedFile {
                path: p.path.clone(),
                module: p.module.clone(),
                text,
                facts,
            };
            (Some(file), children, diags)
        }
        Err(d) => (None, Vec::new(), vec![d]),
    }
}

/// Parses one file; a syntax error becomes a diagnostic with its position.
pub(crate) fn parse_file(path: &Path, text: &str) -> Result<syn::File, Diagnostic> {
    syn::parse_file(text).map_err(|e| {
        let start = e.span().start();
        let span = Span {
            file: path.to_path_buf(),
            line: start.line as u32,
            column: start.column as u32,
        };
        error(
            format!(
                "cannot parse {}: {e}; its types are not analysed",
                path.display()
            ),
            Some(span),
        )
    })
}

fn error(message: String, span: Option<Span>) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error,
        message,
        span,
    }
}

/// The directory in which `mod x;` inside `file` looks for `x.rs` and `x/mod.rs`.
fn child_dir(file: &Path, mod_rs: bool) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new("")).to_path_buf();
    if mod_rs {
        parent
    } else {
        let stem = file
            .file_stem()
            .map(|s| s.to_os_string())
            .unwrap_or_default();
        parent.join(stem)
    }
}

/// Whether attributes say `#[cfg(test)]` (alone, not inside `any`/`not`).
pub(crate) fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Ident>()
                .map(|i| i == "test")
                .unwrap_or(false)
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| {
        if !a.path().is_ident("path") {
            return None;
        }
        let syn::Meta::NameValue(nv) = &a.meta else {
            return None;
        };
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        }
    })
}

fn collect_mods(
    items: &[syn::Item],
    dir: &Path,
    base: &Path,
    module: &[String],
    file: &Path,
    out: &mut Vec<Pending>,
    diags: &mut Vec<Diagnostic>,
) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        if is_cfg_test(&m.attrs) {
            continue;
        }
        let name = syn::ext::IdentExt::unraw(&m.ident).to_string();
        let mut child_module = module.to_vec();
        child_module.push(name.clone());
        let explicit = path_attr(&m.attrs);
        match &m.content {
            Some((_, inner)) => {
                // An inline module: its `mod y;` live in `dir/x/`, or at `dir/<path>/` with #[path].
                let inner_dir = match &explicit {
                    Some(p) => dir.join(p),
                    None => dir.join(&name),
                };
                collect_mods(
                    inner,
                    &inner_dir,
                    &inner_dir,
                    &child_module,
                    file,
                    out,
                    diags,
                );
            }
            None => {
                let found = match &explicit {
                    Some(p) => Some((base.join(p), true)),
                    None => {
                        let flat = dir.join(format!("{name}.rs"));
                        let nested = dir.join(&name).join("mod.rs");
                        if flat.exists() {
                            Some((flat, false))
                        } else if nested.exists() {
                            Some((nested, true))
                        } else {
                            None
                        }
                    }
                };
                match found {
                    Some((path, mod_rs)) => out.push(Pending {
                        path,
                        module: child_module,
                        mod_rs,
                    }),
                    None => {
                        let start = m.ident.span().start();
                        diags.push(Diagnostic {
                            severity: Severity::Warning,
                            message: format!(
                                "module `{name}` declared in {} has no file {name}.rs or {name}/mod.rs; skipped",
                                file.display()
                            ),
                            span: Some(Span { file: file.to_path_buf(), line: start.line as u32, column: start.column as u32 }),
                        });
                    }
                }
            }
        }
    }
}
