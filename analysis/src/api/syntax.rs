//! The declarations of the parsed files, by reference into their syntax trees: structs and
//! enums with their fields, impl blocks, traits with their default methods, and `static`s.
//! Both halves of the analysis read them: the API model (what can be built and called) and
//! thread-safety detection with the lock analysis (fields and method bodies).

use super::macros::is_expanded;
use crate::source::SourceFile;
use std::path::Path;

pub(crate) struct TypeDecl<'a> {
    pub(crate) name: String,
    pub(crate) module: Vec<String>,
    pub(crate) file: &'a Path,
    pub(crate) is_pub: bool,
    pub(crate) generics: &'a syn::Generics,
    /// Field name (or index, `Variant.0` for enums) and type.
    pub(crate) fields: Vec<(String, &'a syn::Type)>,
    /// For a struct: whether every field is `pub` (so a literal can build it).
    pub(crate) all_fields_pub: bool,
    pub(crate) derives: Vec<String>,
    pub(crate) ident: &'a syn::Ident,
    pub(crate) item: DeclItem<'a>,
    /// Written by a `macro_rules!` template: spans point into the macro.
    pub(crate) expanded: bool,
}

#[derive(Clone, Copy)]
pub(crate) enum DeclItem<'a> {
    Struct(&'a syn::ItemStruct),
    Enum(&'a syn::ItemEnum),
}

pub(crate) struct ImplDecl<'a> {
    pub(crate) self_name: String,
    pub(crate) trait_path: Option<&'a syn::Path>,
    pub(crate) unsafe_impl: bool,
    pub(crate) item: &'a syn::ItemImpl,
    pub(crate) file: &'a Path,
    pub(crate) module: Vec<String>,
    pub(crate) expanded: bool,
}

/// A public free function (a constructor candidate: `channel::bounded(cap) -> (Sender<T>,
/// Receiver<T>)`).
pub(crate) struct FnItem<'a> {
    pub(crate) module: Vec<String>,
    pub(crate) item: &'a syn::ItemFn,
}

pub(crate) struct TraitDecl<'a> {
    pub(crate) name: String,
    pub(crate) module: Vec<String>,
    pub(crate) item: &'a syn::ItemTrait,
}

#[derive(Default)]
pub(crate) struct Decls<'a> {
    pub(crate) types: Vec<TypeDecl<'a>>,
    pub(crate) impls: Vec<ImplDecl<'a>>,
    pub(crate) traits: Vec<TraitDecl<'a>>,
    /// `static` items: name and type.
    pub(crate) statics: Vec<(String, &'a syn::Type)>,
    /// `const` items and the module they are in.
    pub(crate) consts: Vec<(Vec<String>, &'a syn::ItemConst)>,
    pub(crate) fns: Vec<FnItem<'a>>,
}

impl<'a> Decls<'a> {
    pub(crate) fn of(files: &'a [SourceFile]) -> Decls<'a> {
        let mut decls = Decls::default();
        for f in files {
            decls.add(&f.ast.items, &f.module, &f.path);
        }
        decls
    }

    fn add(&mut self, items: &'a [syn::Item], module: &[String], file: &'a Path) {
        for item in items {
            match item {
                syn::Item::Struct(s) => {
                    let fields = s
                        .fields
                        .iter()
                        .enumerate()
                        .map(|(i, f)| {
                            let name = f.ident.as_ref().map(|i| i.to_string());
                            (name.unwrap_or(i.to_string()), &f.ty)
                        })
                        .collect();
                    self.types.push(TypeDecl {
                        name: s.ident.to_string(),
                        module: module.to_vec(),
                        file,
                        is_pub: is_pub(&s.vis),
                        generics: &s.generics,
                        fields,
                        all_fields_pub: s.fields.iter().all(|f| is_pub(&f.vis)),
                        derives: derives(&s.attrs),
                        ident: &s.ident,
                        item: DeclItem::Struct(s),
                        expanded: is_expanded(&s.attrs),
                    });
                }
                syn::Item::Enum(e) => {
                    // Fields of all variants count: an enum holding a Mutex synchronises too.
                    let fields = e
                        .variants
                        .iter()
                        .flat_map(|v| v.fields.iter().enumerate().map(move |(i, f)| (v, i, f)))
                        .map(|(v, i, f)| {
                            let name = f.ident.as_ref().map(|i| i.to_string());
                            (name.unwrap_or(format!("{}.{i}", v.ident)), &f.ty)
                        })
                        .collect();
                    self.types.push(TypeDecl {
                        name: e.ident.to_string(),
                        module: module.to_vec(),
                        file,
                        is_pub: is_pub(&e.vis),
                        generics: &e.generics,
                        fields,
                        all_fields_pub: false,
                        derives: derives(&e.attrs),
                        ident: &e.ident,
                        item: DeclItem::Enum(e),
                        expanded: is_expanded(&e.attrs),
                    });
                }
                syn::Item::Impl(i) => {
                    if let Some(self_name) = super::types::type_name(&i.self_ty) {
                        self.impls.push(ImplDecl {
                            self_name,
                            trait_path: i.trait_.as_ref().map(|t| &t.1),
                            unsafe_impl: i.unsafety.is_some(),
                            item: i,
                            file,
                            module: module.to_vec(),
                            expanded: is_expanded(&i.attrs),
                        });
                    }
                }
                syn::Item::Fn(f) if is_pub(&f.vis) => self.fns.push(FnItem {
                    module: module.to_vec(),
                    item: f,
                }),
                syn::Item::Static(st) => self.statics.push((st.ident.to_string(), &st.ty)),
                syn::Item::Const(c) => self.consts.push((module.to_vec(), c)),
                syn::Item::Trait(t) => self.traits.push(TraitDecl {
                    name: t.ident.to_string(),
                    module: module.to_vec(),
                    item: t,
                }),
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        let mut child = module.to_vec();
                        child.push(syn::ext::IdentExt::unraw(&m.ident).to_string());
                        self.add(inner, &child, file);
                    }
                }
                _ => {}
            }
        }
    }

    /// The impl blocks of a type: those whose self type names it, and when several types
    /// share the name, only those in its module or naming its module.
    pub(crate) fn impls_of(&self, decl: &TypeDecl) -> Vec<&ImplDecl<'a>> {
        let homonyms = self.types.iter().filter(|t| t.name == decl.name).count();
        self.impls
            .iter()
            .filter(|i| i.self_name == decl.name)
            .filter(|i| {
                homonyms <= 1 || i.module == decl.module || impl_names_module(i, &decl.module)
            })
            .collect()
    }

    pub(crate) fn trait_named(&self, name: &str, module_hint: &[String]) -> Option<&TraitDecl<'a>> {
        let mut matching = self.traits.iter().filter(|t| t.name == name);
        let first = matching.next()?;
        if first.module == module_hint {
            return Some(first);
        }
        Some(matching.find(|t| t.module == module_hint).unwrap_or(first))
    }
}

fn impl_names_module(i: &ImplDecl, module: &[String]) -> bool {
    let syn::Type::Path(p) = &*i.item.self_ty else {
        return false;
    };
    let segs: Vec<String> = super::render::idents(&p.path);
    segs.len() >= 2 && module.last() == Some(&segs[segs.len() - 2])
}

pub(crate) fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

fn derives(attrs: &[syn::Attribute]) -> Vec<String> {
    let mut out = Vec::new();
    for a in attrs {
        if a.path().is_ident("derive") {
            let _ = a.parse_nested_meta(|m| {
                if let Some(last) = m.path.segments.last() {
                    out.push(last.ident.to_string());
                }
                Ok(())
            });
        }
    }
    out
}
