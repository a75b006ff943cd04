//! The items of a source file by line: whose code a line is, for `--in-diff` and
//! `--changed-since` when a changed line is in no thread-safe type's own code (a private
//! method, a helper type a field holds, a free function).

use syn::spanned::Spanned;

/// One item of a file, by the lines it spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeItem {
    pub kind: ItemKind,
    pub first: u32,
    pub last: u32,
}

/// What an item is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemKind {
    /// A struct, enum or union, or an `impl` block (inherent or of a trait) for it: the code
    /// of the type named so (the last segment of its path).
    Type(String),
    /// Any other item that holds code: a free function, a const, a static, a trait, a macro.
    Code,
}

/// The items of `source` that hold code, nested modules' included (a `use`, an `extern crate`
/// and a `mod` declaration hold none), or `None` when it does not parse.
pub fn code_items(source: &str) -> Option<Vec<CodeItem>> {
    let file = syn::parse_file(source).ok()?;
    let mut items = Vec::new();
    collect(&file.items, &mut items);
    Some(items)
}

/// The item of `items` that holds line `line` (they do not overlap: a module's items are
/// listed in its place, and an item's own inner items are not listed).
pub fn item_at(items: &[CodeItem], line: u32) -> Option<&CodeItem> {
    items.iter().find(|i| (i.first..=i.last).contains(&line))
}

fn collect(items: &[syn::Item], out: &mut Vec<CodeItem>) {
    for item in items {
        let kind = match item {
            syn::Item::Struct(s) => ItemKind::Type(s.ident.to_string()),
            syn::Item::Enum(e) => ItemKind::Type(e.ident.to_string()),
            syn::Item::Union(u) => ItemKind::Type(u.ident.to_string()),
            syn::Item::Impl(i) => match named_type(&i.self_ty) {
                Some(name) => ItemKind::Type(name),
                None => ItemKind::Code,
            },
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect(inner, out);
                }
                continue;
            }
            syn::Item::Use(_) | syn::Item::ExternCrate(_) => continue,
            _ => ItemKind::Code,
        };
        let span = item.span();
        out.push(CodeItem {
            kind,
            first: span.start().line as u32,
            last: span.end().line as u32,
        });
    }
}

/// The last segment of the path `ty` names (`Pool<T>` → `Pool`), through references.
fn named_type(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        syn::Type::Reference(r) => named_type(&r.elem),
        syn::Type::Paren(p) => named_type(&p.elem),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_belongs_to_the_item_that_holds_code() {
        let source = "use std::sync::Mutex;\n\
            \n\
            pub(crate) struct Pool {\n\
                state: Mutex<u32>,\n\
            }\n\
            \n\
            impl Pool {\n\
                fn grow(&self) {\n\
                    *self.state.lock().unwrap() += 1;\n\
                }\n\
            }\n\
            \n\
            fn helper() -> u32 {\n\
                1\n\
            }\n\
            mod inner {\n\
                impl<T> std::fmt::Debug for super::Cell<T> {\n\
                    fn fmt(&self, _: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) }\n\
                }\n\
            }\n";
        let items = code_items(source).expect("it parses");
        let kind = |line| item_at(&items, line).map(|i| i.kind.clone());
        assert_eq!(kind(1), None, "a use holds no code");
        assert_eq!(kind(2), None);
        assert_eq!(kind(4), Some(ItemKind::Type("Pool".into())));
        assert_eq!(kind(9), Some(ItemKind::Type("Pool".into())));
        assert_eq!(kind(12), None);
        assert_eq!(kind(14), Some(ItemKind::Code));
        assert_eq!(kind(16), None, "a module is not an item of its own");
        assert_eq!(kind(18), Some(ItemKind::Type("Cell".into())));
        assert_eq!(code_items("fn ("), None);
    }
}
