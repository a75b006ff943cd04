//! Reading a library target's module tree: `mod x;` resolved to `x.rs` or `x/mod.rs`,
//! `#[path]` honoured, items and modules behind item macros and `#[cfg]` expanded
//! ([`crate::api::macros`]), so `#[cfg(test)]` modules and other targets' code are left out.
//! Files are parsed in parallel, one level of the tree at a time. A file that cannot be read or
//! parsed becomes a diagnostic.
//!
//! syn trees cannot cross threads (proc-macro2 spans are thread-local), so the parallel pass
//! keeps only owned facts per file ([`FileFacts`]); the few files that hold thread-safe types
//! are parsed again on the analysing thread ([`parse_relevant`]). A crate's `macro_rules!`
//! are collected as the tree is read; a file that used one before its definition was read is
//! read again once it is known.

use crate::api::cfg::CfgSet;
use crate::api::macros::{Expander, MacroTable};
use crate::facts::{file_facts, FileFacts};
use crate::model::{Diagnostic, Severity, Span};
use rayon::prelude::*;
use std::collections::HashSet;
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
    mod_rs: bool,
}

/// A crate's files, its `macro_rules!` and what could not be read.
pub(crate) struct LoadedCrate {
    pub files: Vec<LoadedFile>,
    /// Where the root file's first item starts (see `PackageInfo::first_item`).
    pub first_item: Option<Span>,
    pub macros: MacroTable,
    pub diagnostics: Vec<Diagnostic>,
}

/// How many times files that use a macro defined later are read again.
const MACRO_ROUNDS: usize = 3;

/// Parses the chosen files again on the calling thread, expanded as when they were loaded.
pub(crate) fn parse_relevant(
    loaded: &LoadedCrate,
    cfg: &CfgSet,
    keep: impl Fn(&LoadedFile) -> bool,
) -> Vec<SourceFile> {
    loaded
        .files
        .iter()
        .filter(|f| keep(f))
        .filter_map(|f| {
            let ast = parse_file(&f.path, &f.text).ok()?;
            let ast = Expander::new(cfg, &loaded.macros).file(ast);
            Some(SourceFile {
                path: f.path.clone(),
                module: f.module.clone(),
                ast,
            })
        })
        .collect()
}

/// A module whose file still has to be found and parsed.
#[derive(Clone)]
struct Pending {
    path: PathBuf,
    module: Vec<String>,
    /// Whether children of this file live in its own directory (`lib.rs`, `mod.rs`, `#[path]`).
    mod_rs: bool,
}

/// Loads every module file reachable from the crate root under `cfg`.
pub(crate) fn load_crate(root: &Path, cfg: &CfgSet, sources: &crate::Sources) -> LoadedCrate {
    let mut files: Vec<LoadedFile> = Vec::new();
    let mut diagnostics = Vec::new();
    let mut macros = MacroTable::default();
    let mut seen = HashSet::new();
    let mut level = vec![Pending {
        path: root.to_path_buf(),
        module: Vec::new(),
        mod_rs: true,
    }];
    for round in 0..=MACRO_ROUNDS {
        while !level.is_empty() {
            level.retain(|p| seen.insert(p.path.clone()));
            let table = &macros;
            let results: Vec<Loaded> = level
                .par_iter()
                .map(|p| load_one(p, cfg, table, sources))
                .collect();
            level = Vec::new();
            for loaded in results {
                if let Some(file) = &loaded.file {
                    macros.merge(&file.facts.macros);
                }
                files.extend(loaded.file);
                level.extend(loaded.children);
                diagnostics.extend(loaded.diagnostics);
            }
        }
        // Files that invoked a macro whose definition was read after them: read them again.
        let again: Vec<usize> = files
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f.facts
                    .unknown_macros
                    .iter()
                    .any(|m| macros.rules.contains_key(m))
            })
            .map(|(i, _)| i)
            .collect();
        if again.is_empty() || round == MACRO_ROUNDS {
            break;
        }
        for i in again.into_iter().rev() {
            let old = files.remove(i);
            let pending = Pending {
                path: old.path,
                module: old.module,
                mod_rs: old.mod_rs,
            };
            let loaded = load_one(&pending, cfg, &macros, sources);
            files.extend(loaded.file);
            level.extend(loaded.children);
        }
    }
    for file in &files {
        for unread in &file.facts.unread {
            // An error: code of the crate was not analysed (as with a file that does not parse).
            diagnostics.push(Diagnostic {
                severity: Severity::Error,
                message: format!(
                    "{} declared inside `{}!` {} not read: covcon cannot expand that macro ({})",
                    plural(unread.modules.len(), "module"),
                    unread.macro_name,
                    if unread.modules.len() == 1 {
                        "was"
                    } else {
                        "were"
                    },
                    unread
                        .modules
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                span: Some(Span {
                    file: file.path.clone(),
                    line: unread.line,
                    column: 0,
                }),
            });
        }
    }
    let first_item = std::fs::read_to_string(root)
        .ok()
        .and_then(|text| syn::parse_file(&text).ok())
        .and_then(|ast| {
            use syn::spanned::Spanned;
            let start = ast.items.first()?.span().start();
            Some(Span {
                file: root.to_path_buf(),
                line: start.line as u32,
                column: start.column as u32,
            })
        });
    LoadedCrate {
        files,
        first_item,
        macros,
        diagnostics,
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

struct Loaded {
    file: Option<LoadedFile>,
    children: Vec<Pending>,
    diagnostics: Vec<Diagnostic>,
}

fn load_one(p: &Pending, cfg: &CfgSet, macros: &MacroTable, sources: &crate::Sources) -> Loaded {
    let text = match sources
        .get(&p.path)
        .map_or_else(|| std::fs::read_to_string(&p.path), |text| Ok(text.clone()))
    {
        Ok(t) => t,
        Err(e) => {
            let d = error(format!("cannot read {}: {e}", p.path.display()), None);
            return Loaded {
                file: None,
                children: Vec::new(),
                diagnostics: vec![d],
            };
        }
    };
    let ast = match parse_file(&p.path, &text) {
        Ok(ast) => ast,
        Err(d) => {
            return Loaded {
                file: None,
                children: Vec::new(),
                diagnostics: vec![d],
            }
        }
    };
    // The file's own macros are known to its own items.
    let mut table = MacroTable::default();
    table.collect(&ast.items);
    table.merge(macros);
    let mut expander = Expander::new(cfg, &table);
    let ast = expander.file(ast);
    let mut children = Vec::new();
    let mut diagnostics = Vec::new();
    let dir = child_dir(&p.path, p.mod_rs);
    let base = p.path.parent().unwrap_or(Path::new("")).to_path_buf();
    collect_mods(
        &ast.items,
        &dir,
        &base,
        &p.module,
        &p.path,
        &mut children,
        &mut diagnostics,
    );
    let mut facts = file_facts(&ast, &p.module);
    facts.macros.merge(&table);
    facts.unknown_macros = expander.unknown;
    facts.unread = expander.unread;
    drop(ast);
    Loaded {
        file: Some(LoadedFile {
            path: p.path.clone(),
            module: p.module.clone(),
            text,
            facts,
            mod_rs: p.mod_rs,
        }),
        children,
        diagnostics,
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

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| str_attr(a, "path"))
}

/// The string of an attribute `#[name = "…"]` (`#[path = "x.rs"]`, and `#[doc = "…"]`, which
/// `///` becomes); `None` for another attribute or another shape.
pub(crate) fn str_attr(attr: &syn::Attribute, name: &str) -> Option<String> {
    let syn::Meta::NameValue(nv) = &attr.meta else {
        return None;
    };
    if !nv.path.is_ident(name) {
        return None;
    }
    match &nv.value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    }
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
