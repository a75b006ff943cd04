//! Tokens rendered the way people write types and code (`Vec<u8>`, `&'a str`,
//! `impl Fn() -> u32`), for the model, the reports and the generated harness.

use quote::ToTokens;

/// A path's segments as written, without their arguments (`a::b::C<T>` → `["a", "b", "C"]`).
pub(crate) fn idents(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

pub(crate) fn tokens<T: ToTokens>(t: &T) -> String {
    render_tokens(t.to_token_stream())
}

/// Renders tokens the way people write types (`Vec<u8>`, `&'a str`, `impl Fn() -> u32`).
pub(crate) fn render_tokens(ts: proc_macro2::TokenStream) -> String {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    let mut out = String::new();
    let mut prev_word = false;
    let mut prev_joint_quote = false;
    for tt in ts {
        match tt {
            TokenTree::Ident(i) => {
                if prev_word && !prev_joint_quote {
                    out.push(' ');
                }
                out.push_str(&i.to_string());
                prev_word = true;
                prev_joint_quote = false;
            }
            TokenTree::Literal(l) => {
                if prev_word {
                    out.push(' ');
                }
                out.push_str(&l.to_string());
                prev_word = true;
                prev_joint_quote = false;
            }
            TokenTree::Punct(p) => {
                let c = p.as_char();
                let joint = p.spacing() == Spacing::Joint;
                match c {
                    ',' => out.push_str(", "),
                    ';' => out.push_str("; "),
                    '+' => out.push_str(" + "),
                    '=' if !out.ends_with('-') => out.push_str(" = "),
                    ':' if joint || out.ends_with(':') => out.push(':'),
                    ':' => out.push_str(": "),
                    '-' if joint => out.push_str(" -"),
                    '>' if out.ends_with(" -") => out.push_str("> "),
                    '\'' => {
                        if prev_word {
                            out.push(' ');
                        }
                        out.push('\'');
                    }
                    _ => out.push(c),
                }
                prev_joint_quote = c == '\'';
                prev_word = false;
            }
            TokenTree::Group(g) => {
                let inner = render_tokens(g.stream());
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{ ", " }"),
                    Delimiter::None => ("", ""),
                };
                if prev_word && g.delimiter() == Delimiter::Brace {
                    out.push(' ');
                }
                out.push_str(open);
                out.push_str(inner.trim_end());
                out.push_str(close);
                prev_word = false;
                prev_joint_quote = false;
            }
        }
    }
    out.trim_end().to_string()
}
