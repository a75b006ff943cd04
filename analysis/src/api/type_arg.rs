//! What covcon draws values of for a type parameter instantiated with a concrete type: the
//! one reader of a type argument's text (a candidate the analysis proposed, a default, one of
//! covcon's own, or one the user fixed in `[package.metadata.covcon]`), through syn and
//! [`TyCx::param_kind`], so the harness and the reproducer never parse a type themselves.

use super::types::TyCx;
use crate::model::{ParamKind, ValueType};

/// The kind of the values a test passes for a type parameter instantiated with `ty` (`u32`,
/// `::std::string::String`, `::std::sync::Arc<u64>`, `Vec<(String, u64)>`, a value type of
/// the crate by its path): `None` when covcon does not draw values of it.
///
/// What a type argument can be drawn as is narrower than a parameter's: integers up to 64
/// bits, `bool`, `char`, `String`, and `Box`/`Arc`/`Vec`/`Option`/tuples of them, written by
/// the standard library's paths or their short names; or exactly one of the type's `values`.
/// Floats are left out on purpose: a type keyed by its parameter (a map, a set) compares
/// keys by `==`, and a NaN key is never found again, which no thread-safety bug explains.
/// References, 128-bit integers, `()` and another crate's types are left out too.
pub fn type_argument_kind(ty: &str, values: &[ValueType]) -> Option<ParamKind> {
    let text = ty.trim();
    let path = text.trim_start_matches("::");
    if values.iter().any(|v| v.path == path) {
        return Some(ParamKind::Value {
            path: path.to_string(),
        });
    }
    let parsed = syn::parse_str::<syn::Type>(text).ok()?;
    if !standard_paths_only(&parsed) {
        return None;
    }
    let kind = TyCx::new("", &[], None, None).param_kind(&parsed).ok()?;
    drawable(&kind).then_some(kind)
}

/// Every path in `ty` is one name (`u32`, `String`, `Vec<u8>`) or starts at the standard
/// library (`::std::vec::Vec`, `core::option::Option`): a type of another crate that happens
/// to be called `Vec` is not the standard one.
fn standard_paths_only(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Paren(p) => standard_paths_only(&p.elem),
        syn::Type::Group(g) => standard_paths_only(&g.elem),
        syn::Type::Tuple(t) => t.elems.iter().all(standard_paths_only),
        syn::Type::Path(p) if p.qself.is_none() => {
            let segments = &p.path.segments;
            let root = segments.first().map(|s| s.ident.to_string());
            let standard =
                segments.len() == 1 || matches!(root.as_deref(), Some("std" | "core" | "alloc"));
            standard
                && segments.iter().all(|s| match &s.arguments {
                    syn::PathArguments::None => true,
                    syn::PathArguments::AngleBracketed(args) => args.args.iter().all(|a| match a {
                        syn::GenericArgument::Type(t) => standard_paths_only(t),
                        _ => false,
                    }),
                    syn::PathArguments::Parenthesized(_) => false,
                })
        }
        _ => false,
    }
}

/// Whether covcon draws values of a type argument of `kind` ([`type_argument_kind`]).
fn drawable(kind: &ParamKind) -> bool {
    match kind {
        ParamKind::Int { bits, .. } => *bits <= 64,
        ParamKind::Bool | ParamKind::Char | ParamKind::String => true,
        ParamKind::Pointer { inner, .. } | ParamKind::Option { inner } => drawable(inner),
        ParamKind::Vec { elem } => drawable(elem),
        ParamKind::Tuple { elems } => !elems.is_empty() && elems.iter().all(drawable),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Pointer;

    fn u(bits: u16) -> ParamKind {
        ParamKind::Int {
            signed: false,
            bits,
        }
    }

    fn vec(elem: ParamKind) -> ParamKind {
        ParamKind::Vec {
            elem: Box::new(elem),
        }
    }

    #[test]
    fn a_type_argument_written_as_std_types_reads_as_the_kinds_covcon_draws() {
        let string = || ParamKind::String;
        let values = [ValueType {
            path: "k::Labels".into(),
            constructors: vec![],
        }];
        for (ty, kind) in [
            ("u32", Some(u(32))),
            ("usize", Some(u(64))),
            (
                "i64",
                Some(ParamKind::Int {
                    signed: true,
                    bits: 64,
                }),
            ),
            ("bool", Some(ParamKind::Bool)),
            ("char", Some(ParamKind::Char)),
            ("String", Some(string())),
            ("::std::string::String", Some(string())),
            ("std::string::String", Some(string())),
            ("Vec<u8>", Some(vec(u(8)))),
            ("::std::vec::Vec<u8>", Some(vec(u(8)))),
            (
                "::std::vec::Vec<(::std::string::String, ::std::string::String)>",
                Some(vec(ParamKind::Tuple {
                    elems: vec![string(), string()],
                })),
            ),
            (
                "::std::sync::Arc<u64>",
                Some(ParamKind::Pointer {
                    pointer: Pointer::Arc,
                    inner: Box::new(u(64)),
                }),
            ),
            (
                "Box<String>",
                Some(ParamKind::Pointer {
                    pointer: Pointer::Box,
                    inner: Box::new(string()),
                }),
            ),
            (
                "Option<(u64, Vec<String>)>",
                Some(ParamKind::Option {
                    inner: Box::new(ParamKind::Tuple {
                        elems: vec![u(64), vec(string())],
                    }),
                }),
            ),
            (
                "::k::Labels",
                Some(ParamKind::Value {
                    path: "k::Labels".into(),
                }),
            ),
            ("()", None),
            ("f64", None),
            ("u128", None),
            ("&'static str", None),
            ("::std::time::Duration", None),
            ("::k::Other", None),
            ("Vec<::k::Labels>", None),
            ("::k::Vec<u8>", None),
            ("::std::sync::Arc<::k::Labels>", None),
            ("fn() -> u32", None),
            ("not a type <", None),
        ] {
            assert_eq!(type_argument_kind(ty, &values), kind, "{ty}");
        }
    }
}
