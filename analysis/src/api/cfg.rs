//! `#[cfg(..)]` conditions, evaluated as rustc would for the harness build: the target's
//! configuration (`rustc --print cfg`, or the host covcon was built for), the package's
//! enabled features, `debug_assertions` (the harness profile keeps them on) and nothing else:
//! `test`, `doc`, `docsrs`, `miri` and any custom cfg are unset, as in a plain `cargo build`.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::collections::BTreeSet;

/// The configuration options that are set, as `name` or `name="value"` pairs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CfgSet {
    names: BTreeSet<String>,
    pairs: BTreeSet<(String, String)>,
}

impl CfgSet {
    /// Reads the output of `rustc --print cfg` (one `name` or `name="value"` per line).
    pub fn from_rustc_print(text: &str) -> CfgSet {
        let mut set = CfgSet::default();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            match line.split_once('=') {
                Some((name, value)) => {
                    set.pairs
                        .insert((name.to_string(), value.trim_matches('"').to_string()));
                }
                None => {
                    set.names.insert(line.to_string());
                }
            }
        }
        set.names.insert("debug_assertions".to_string());
        set
    }

    /// The target covcon itself was compiled for: what `rustc --print cfg` would say for the
    /// usual host targets, without running rustc. Used when the caller gives no configuration.
    pub fn host() -> CfgSet {
        let mut lines = vec![
            format!("target_os=\"{}\"", std::env::consts::OS),
            format!("target_family=\"{}\"", std::env::consts::FAMILY),
            format!("target_arch=\"{}\"", std::env::consts::ARCH),
            format!("target_pointer_width=\"{}\"", usize::BITS),
            format!(
                "target_endian=\"{}\"",
                if cfg!(target_endian = "little") {
                    "little"
                } else {
                    "big"
                }
            ),
            "panic=\"unwind\"".to_string(),
        ];
        lines.push(std::env::consts::FAMILY.to_string());
        for width in ["8", "16", "32", "64", "ptr"] {
            lines.push(format!("target_has_atomic=\"{width}\""));
        }
        if cfg!(target_env = "gnu") {
            lines.push("target_env=\"gnu\"".to_string());
        }
        CfgSet::from_rustc_print(&lines.join("\n"))
    }

    /// This set with `feature="…"` for each enabled feature.
    pub fn with_features(&self, features: &[String]) -> CfgSet {
        let mut set = self.clone();
        for f in features {
            set.pairs.insert(("feature".to_string(), f.clone()));
        }
        set
    }

    /// Whether the item carrying `attrs` is compiled: every `#[cfg(..)]` among them holds.
    pub(crate) fn enabled(&self, attrs: &[syn::Attribute]) -> bool {
        attrs
            .iter()
            .filter(|a| a.path().is_ident("cfg"))
            .all(|a| match &a.meta {
                syn::Meta::List(list) => self.holds(&list.tokens),
                _ => true,
            })
    }

    /// Evaluates one predicate (`unix`, `feature = "x"`, `all(..)`, `any(..)`, `not(..)`).
    /// A predicate covcon cannot read counts as true, so code is never lost to a misreading.
    pub(crate) fn holds(&self, predicate: &TokenStream) -> bool {
        let tokens: Vec<TokenTree> = predicate.clone().into_iter().collect();
        let mut pos = 0;
        match self.parse(&tokens, &mut pos) {
            Some(value) if pos >= tokens.len() || is_comma(&tokens[pos]) => value,
            _ => true,
        }
    }

    fn parse(&self, tokens: &[TokenTree], pos: &mut usize) -> Option<bool> {
        let TokenTree::Ident(name) = tokens.get(*pos)? else {
            return match tokens.get(*pos)? {
                TokenTree::Literal(l) if l.to_string() == "true" => {
                    *pos += 1;
                    Some(true)
                }
                _ => None,
            };
        };
        *pos += 1;
        let name = name.to_string();
        match tokens.get(*pos) {
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                *pos += 1;
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                let mut values = Vec::new();
                let mut i = 0;
                while i < inner.len() {
                    values.push(self.parse(&inner, &mut i)?);
                    if i < inner.len() {
                        if !is_comma(&inner[i]) {
                            return None;
                        }
                        i += 1;
                    }
                }
                match name.as_str() {
                    "all" => Some(values.iter().all(|v| *v)),
                    "any" => Some(values.iter().any(|v| *v)),
                    "not" if values.len() == 1 => Some(!values[0]),
                    _ => None,
                }
            }
            Some(TokenTree::Punct(p)) if p.as_char() == '=' => {
                *pos += 1;
                let TokenTree::Literal(lit) = tokens.get(*pos)? else {
                    return None;
                };
                *pos += 1;
                let value = lit.to_string();
                let value = value.trim_matches('"');
                Some(self.pairs.contains(&(name, value.to_string())))
            }
            _ => Some(match name.as_str() {
                "true" => true,
                "false" => false,
                _ => self.names.contains(&name),
            }),
        }
    }
}

fn is_comma(t: &TokenTree) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == ',')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(predicate: &str, expect: bool) {
        let set =
            CfgSet::from_rustc_print("unix\ntarget_os=\"linux\"\ntarget_pointer_width=\"64\"")
                .with_features(&["std".to_string()]);
        let tokens: TokenStream = predicate.parse().expect("tokens");
        assert_eq!(set.holds(&tokens), expect, "{predicate}");
    }

    #[test]
    fn predicates_follow_the_target_and_the_features() {
        check("unix", true);
        check("windows", false);
        check("test", false);
        check("debug_assertions", true);
        check("target_os = \"linux\"", true);
        check("target_os = \"macos\"", false);
        check("feature = \"std\"", true);
        check("feature = \"nightly\"", false);
        check("all(unix, feature = \"std\")", true);
        check("all(unix, not(feature = \"std\"))", false);
        check("any(windows, target_pointer_width = \"64\")", true);
        check("not(any(loom, miri))", true);
        check("all()", true);
        check("any()", false);
        check("true", true);
        check("false", false);
    }

    #[test]
    fn a_predicate_covcon_cannot_read_keeps_the_item() {
        check("unknown_fn(x)", true);
        check("= =", true);
    }

    #[test]
    fn cfg_attributes_must_all_hold() {
        let set = CfgSet::from_rustc_print("unix");
        let item: syn::ItemStruct = syn::parse_quote! {
            #[cfg(unix)]
            #[cfg(not(feature = "x"))]
            struct S;
        };
        assert!(set.enabled(&item.attrs));
        let item: syn::ItemStruct = syn::parse_quote! {
            #[cfg(unix)]
            #[cfg(test)]
            struct S;
        };
        assert!(!set.enabled(&item.attrs));
    }
}
