//! Items hidden behind item-position macros, and `#[cfg]` on items, fields and impl items.
//!
//! Real crates declare modules and types inside macros: `cfg_if! { if #[cfg(..)] { mod imp; }
//! else { .. } }`, or a wrapper of their own (`macro_rules! cfg_std { ($($i:item)*) =>
//! { $( #[cfg(feature = "std")] $i )* } }`). [`Expander`] turns a file's items into the items
//! the compiler would see: `cfg_if!` picks its first branch whose condition holds, a crate's
//! own `macro_rules!` are expanded (matching and transcription of the common fragment kinds),
//! another macro whose body reads as items is taken as those items, and every `#[cfg]` is
//! evaluated. What cannot be read is named ([`Unread`]) when it declares modules.
//!
//! Items that come out of a `macro_rules!` template carry the [`EXPANDED`] marker attribute:
//! their spans point into the macro, not at the code, so the oracle does not instrument them.

use super::cfg::CfgSet;
use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};
use std::collections::HashMap;
use syn::parse::{ParseStream, Parser};

/// Name of the marker attribute on items written by a `macro_rules!` template.
pub(crate) const EXPANDED: &str = "covcon_expanded";

/// Deepest nesting of macro invocations followed.
const MAX_DEPTH: usize = 8;

/// The crate's `macro_rules!` definitions: name to the text of the rules. Owned text, so the
/// table can cross threads; each thread parses a definition once when it first needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct MacroTable {
    pub(crate) rules: HashMap<String, String>,
}

impl MacroTable {
    /// Adds the `macro_rules!` defined among `items` (and in inline modules), keeping the
    /// first definition of a name.
    pub(crate) fn collect(&mut self, items: &[syn::Item]) {
        for item in items {
            match item {
                syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                    if let Some(name) = &m.ident {
                        self.rules
                            .entry(name.to_string())
                            .or_insert_with(|| m.mac.tokens.to_string());
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        self.collect(inner);
                    }
                }
                _ => {}
            }
        }
    }

    pub(crate) fn merge(&mut self, other: &MacroTable) {
        for (name, text) in &other.rules {
            self.rules
                .entry(name.clone())
                .or_insert_with(|| text.clone());
        }
    }
}

/// An item macro covcon could not read although it declares modules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unread {
    pub(crate) macro_name: String,
    /// The `mod` names found in its tokens.
    pub(crate) modules: Vec<String>,
    pub(crate) line: u32,
}

/// Expands the items of one file.
pub(crate) struct Expander<'a> {
    cfg: &'a CfgSet,
    table: &'a MacroTable,
    parsed: HashMap<String, Option<Vec<Rule>>>,
    /// Invocations of macros that are not (yet) in the table, by name.
    pub(crate) unknown: Vec<String>,
    pub(crate) unread: Vec<Unread>,
}

impl<'a> Expander<'a> {
    pub(crate) fn new(cfg: &'a CfgSet, table: &'a MacroTable) -> Expander<'a> {
        Expander {
            cfg,
            table,
            parsed: HashMap::new(),
            unknown: Vec::new(),
            unread: Vec::new(),
        }
    }

    /// The file with its macros expanded and its `#[cfg]`-disabled items removed.
    pub(crate) fn file(&mut self, mut file: syn::File) -> syn::File {
        let items = std::mem::take(&mut file.items);
        file.items = self.items(items, 0);
        file
    }

    fn items(&mut self, items: Vec<syn::Item>, depth: usize) -> Vec<syn::Item> {
        let mut out = Vec::new();
        for item in items {
            if !self.cfg.enabled(item_attrs(&item)) {
                continue;
            }
            match item {
                syn::Item::Macro(m) if m.ident.is_none() => {
                    out.extend(self.invocation(&m, depth));
                }
                syn::Item::Mod(mut m) => {
                    if let Some((brace, inner)) = m.content.take() {
                        m.content = Some((brace, self.items(inner, depth)));
                    }
                    out.push(syn::Item::Mod(m));
                }
                syn::Item::Impl(mut i) => {
                    let items = std::mem::take(&mut i.items);
                    i.items = self.impl_items(items, depth);
                    out.push(syn::Item::Impl(i));
                }
                syn::Item::Struct(mut s) => {
                    self.fields(&mut s.fields);
                    out.push(syn::Item::Struct(s));
                }
                syn::Item::Enum(mut e) => {
                    e.variants = std::mem::take(&mut e.variants)
                        .into_iter()
                        .filter(|v| self.cfg.enabled(&v.attrs))
                        .collect();
                    for v in e.variants.iter_mut() {
                        self.fields(&mut v.fields);
                    }
                    out.push(syn::Item::Enum(e));
                }
                syn::Item::Trait(mut t) => {
                    t.items.retain(|ti| self.cfg.enabled(trait_item_attrs(ti)));
                    out.push(syn::Item::Trait(t));
                }
                other => out.push(other),
            }
        }
        out
    }

    /// An impl block's items with its `#[cfg]`-disabled items removed and its macro
    /// invocations expanded as [`Expander::invocation`] does items: concurrent-queue declares
    /// `ConcurrentQueue::unbounded` inside its own `const_fn!` (a `const fn` where `loom` is
    /// off, a plain one where it is on).
    fn impl_items(&mut self, items: Vec<syn::ImplItem>, depth: usize) -> Vec<syn::ImplItem> {
        let mut out = Vec::new();
        for item in items {
            if !self.cfg.enabled(impl_item_attrs(&item)) {
                continue;
            }
            match item {
                syn::ImplItem::Macro(m) if depth < MAX_DEPTH => {
                    let name = m.mac.path.segments.last().map(|s| s.ident.to_string());
                    let own = name.filter(|n| self.table.rules.contains_key(n));
                    let tokens = match &own {
                        Some(name) => self
                            .rules(name)
                            .and_then(|rules| expand(rules, &m.mac.tokens)),
                        None => Some(m.mac.tokens.clone()),
                    };
                    let Some(items) = tokens.and_then(parse_impl_items) else {
                        continue;
                    };
                    let items = self.impl_items(items, depth + 1);
                    // A template's spans point into the macro: not instrumented.
                    out.extend(items.into_iter().map(|item| match own {
                        Some(_) => mark_impl_expanded(item),
                        None => item,
                    }));
                }
                other => out.push(other),
            }
        }
        out
    }

    fn fields(&self, fields: &mut syn::Fields) {
        let named = match fields {
            syn::Fields::Named(n) => &mut n.named,
            syn::Fields::Unnamed(u) => &mut u.unnamed,
            syn::Fields::Unit => return,
        };
        let kept: syn::punctuated::Punctuated<syn::Field, syn::Token![,]> = std::mem::take(named)
            .into_iter()
            .filter(|f| self.cfg.enabled(&f.attrs))
            .collect();
        *named = kept;
    }

    fn invocation(&mut self, m: &syn::ItemMacro, depth: usize) -> Vec<syn::Item> {
        let Some(last) = m.mac.path.segments.last() else {
            return Vec::new();
        };
        let name = last.ident.to_string();
        let line = last.ident.span().start().line as u32;
        if depth >= MAX_DEPTH {
            self.note_unread(&name, &m.mac.tokens, line);
            return Vec::new();
        }
        if name == "cfg_if" {
            return match cfg_if_branch(self.cfg, &m.mac.tokens) {
                Some(tokens) => match parse_items(tokens) {
                    Some(items) => self.items(items, depth + 1),
                    None => {
                        self.note_unread(&name, &m.mac.tokens, line);
                        Vec::new()
                    }
                },
                None => Vec::new(),
            };
        }
        if self.table.rules.contains_key(&name) {
            let expanded = self
                .rules(&name)
                .and_then(|rules| expand(rules, &m.mac.tokens))
                .and_then(parse_items);
            return match expanded {
                Some(items) => {
                    let items = self.items(items, depth + 1);
                    items.into_iter().map(mark_expanded).collect()
                }
                None => {
                    self.note_unread(&name, &m.mac.tokens, line);
                    Vec::new()
                }
            };
        }
        // A macro of another crate: its body taken as items when it reads as items (cfg
        // wrappers, `pin_project!`-like pass-throughs); otherwise it is left out.
        match parse_items(m.mac.tokens.clone()) {
            Some(items) if !items.is_empty() => self.items(items, depth + 1),
            _ => {
                self.unknown.push(name.clone());
                self.note_unread(&name, &m.mac.tokens, line);
                Vec::new()
            }
        }
    }

    fn note_unread(&mut self, name: &str, tokens: &TokenStream, line: u32) {
        let mut modules = Vec::new();
        declared_modules(tokens.clone(), &mut modules);
        if !modules.is_empty() {
            self.unread.push(Unread {
                macro_name: name.to_string(),
                modules,
                line,
            });
        }
    }

    fn rules(&mut self, name: &str) -> Option<&Vec<Rule>> {
        if !self.parsed.contains_key(name) {
            let rules = self
                .table
                .rules
                .get(name)
                .and_then(|text| text.parse::<TokenStream>().ok())
                .and_then(parse_rules);
            self.parsed.insert(name.to_string(), rules);
        }
        self.parsed.get(name).and_then(Option::as_ref)
    }
}

fn parse_items(tokens: TokenStream) -> Option<Vec<syn::Item>> {
    syn::parse2::<syn::File>(tokens).ok().map(|f| f.items)
}

/// Impl items, as a macro's tokens give them (`None` when they do not read as such).
fn parse_impl_items(tokens: TokenStream) -> Option<Vec<syn::ImplItem>> {
    let parser = |input: ParseStream| {
        let mut items = Vec::new();
        while !input.is_empty() {
            items.push(input.parse::<syn::ImplItem>()?);
        }
        Ok(items)
    };
    parser.parse2(tokens).ok()
}

fn mark_impl_expanded(mut item: syn::ImplItem) -> syn::ImplItem {
    let marker: syn::Attribute = syn::parse_quote!(#[covcon_expanded]);
    if let syn::ImplItem::Fn(f) = &mut item {
        f.attrs.push(marker);
    }
    item
}

fn mark_expanded(mut item: syn::Item) -> syn::Item {
    let marker: syn::Attribute = syn::parse_quote!(#[covcon_expanded]);
    if let Some(attrs) = item_attrs_mut(&mut item) {
        attrs.push(marker);
    }
    item
}

/// Whether the item came out of a `macro_rules!` template (see [`EXPANDED`]).
pub(crate) fn is_expanded(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident(EXPANDED))
}

/// `mod x` names among the tokens (at any depth), for the note on an unread macro.
fn declared_modules(tokens: TokenStream, out: &mut Vec<String>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in tokens.iter().enumerate() {
        match t {
            TokenTree::Ident(id) if id == "mod" => {
                if let Some(TokenTree::Ident(name)) = tokens.get(i + 1) {
                    out.push(name.to_string());
                }
            }
            TokenTree::Group(g) => declared_modules(g.stream(), out),
            _ => {}
        }
    }
}

/// The tokens of the first `cfg_if!` branch whose condition holds (or of its `else`).
fn cfg_if_branch(cfg: &CfgSet, tokens: &TokenStream) -> Option<TokenStream> {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let mut i = 0;
    loop {
        match tokens.get(i) {
            Some(TokenTree::Ident(id)) if id == "if" => {
                // `if #[cfg(pred)] { items }`
                let Some(TokenTree::Group(attr)) = tokens.get(i + 2) else {
                    return None;
                };
                let Some(TokenTree::Group(body)) = tokens.get(i + 3) else {
                    return None;
                };
                if cfg_attr_holds(cfg, &attr.stream()) {
                    return Some(body.stream());
                }
                i += 4;
            }
            Some(TokenTree::Ident(id)) if id == "else" => match tokens.get(i + 1) {
                Some(TokenTree::Group(body)) if body.delimiter() == Delimiter::Brace => {
                    return Some(body.stream())
                }
                _ => i += 1,
            },
            Some(TokenTree::Punct(p)) if p.as_char() == '#' => {
                // The old form: `#[cfg(pred)] { items }` blocks side by side.
                let (Some(TokenTree::Group(attr)), Some(TokenTree::Group(body))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                else {
                    return None;
                };
                if cfg_attr_holds(cfg, &attr.stream()) {
                    return Some(body.stream());
                }
                i += 3;
            }
            _ => return None,
        }
    }
}

/// `cfg(pred)`, the inside of a `#[..]`.
fn cfg_attr_holds(cfg: &CfgSet, attr: &TokenStream) -> bool {
    let tokens: Vec<TokenTree> = attr.clone().into_iter().collect();
    match (tokens.first(), tokens.get(1)) {
        (Some(TokenTree::Ident(id)), Some(TokenTree::Group(g))) if id == "cfg" => {
            cfg.holds(&g.stream())
        }
        _ => true,
    }
}

// ---------------------------------------------------------------------------------------------
// macro_rules!: matching and transcription.

#[derive(Debug, Clone)]
struct Rule {
    matcher: Vec<Pattern>,
    body: Vec<Pattern>,
}

#[derive(Debug, Clone)]
enum Pattern {
    Token(TokenTree),
    Group(Delimiter, Vec<Pattern>),
    /// `$name:fragment` in a matcher, `$name` in a body (fragment empty).
    Var(String, String),
    Repeat(Vec<Pattern>, Option<TokenTree>, char),
    /// `$crate`.
    Crate,
}

/// The rules of a `macro_rules!` body: `(matcher) => { body };` …
fn parse_rules(tokens: TokenStream) -> Option<Vec<Rule>> {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut rules = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let TokenTree::Group(matcher) = &tokens[i] else {
            return None;
        };
        let arrow = matches!((tokens.get(i + 1), tokens.get(i + 2)),
            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == '=' && b.as_char() == '>');
        let Some(TokenTree::Group(body)) = tokens.get(i + 3).filter(|_| arrow) else {
            return None;
        };
        rules.push(Rule {
            matcher: patterns(matcher.stream(), true),
            body: patterns(body.stream(), false),
        });
        i += 4;
        if matches!(tokens.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ';') {
            i += 1;
        }
    }
    Some(rules)
}

fn patterns(tokens: TokenStream, matcher: bool) -> Vec<Pattern> {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Punct(p) if p.as_char() == '$' => match tokens.get(i + 1) {
                Some(TokenTree::Ident(id)) if id == "crate" => {
                    out.push(Pattern::Crate);
                    i += 2;
                }
                Some(TokenTree::Ident(id)) => {
                    let name = id.to_string();
                    let fragment = match (tokens.get(i + 2), tokens.get(i + 3)) {
                        (Some(TokenTree::Punct(c)), Some(TokenTree::Ident(f)))
                            if matcher && c.as_char() == ':' =>
                        {
                            i += 2;
                            f.to_string()
                        }
                        _ => String::new(),
                    };
                    out.push(Pattern::Var(name, fragment));
                    i += 2;
                }
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                    let inner = patterns(g.stream(), matcher);
                    let (sep, op, used) = match (tokens.get(i + 2), tokens.get(i + 3)) {
                        (Some(TokenTree::Punct(op)), _) if is_rep_op(op.as_char()) => {
                            (None, op.as_char(), 3)
                        }
                        (Some(sep), Some(TokenTree::Punct(op))) if is_rep_op(op.as_char()) => {
                            (Some(sep.clone()), op.as_char(), 4)
                        }
                        _ => (None, '*', 2),
                    };
                    out.push(Pattern::Repeat(inner, sep, op));
                    i += used;
                }
                _ => {
                    out.push(Pattern::Token(tokens[i].clone()));
                    i += 1;
                }
            },
            TokenTree::Group(g) => {
                out.push(Pattern::Group(g.delimiter(), patterns(g.stream(), matcher)));
                i += 1;
            }
            other => {
                out.push(Pattern::Token(other.clone()));
                i += 1;
            }
        }
    }
    out
}

fn is_rep_op(c: char) -> bool {
    matches!(c, '*' | '+' | '?')
}

#[derive(Debug, Clone)]
enum Bound {
    One(Vec<TokenTree>),
    Seq(Vec<Bound>),
}

type Bindings = HashMap<String, Bound>;

/// Expands an invocation with the first rule that matches it.
fn expand(rules: &[Rule], input: &TokenStream) -> Option<TokenStream> {
    let input: Vec<TokenTree> = input.clone().into_iter().collect();
    for rule in rules {
        let mut binds = Bindings::new();
        let mut pos = 0;
        if match_seq(&rule.matcher, &input, &mut pos, &mut binds) && pos == input.len() {
            let mut out = Vec::new();
            transcribe(&rule.body, &binds, &mut out)?;
            return Some(out.into_iter().collect());
        }
    }
    None
}

fn match_seq(pats: &[Pattern], input: &[TokenTree], pos: &mut usize, binds: &mut Bindings) -> bool {
    for pat in pats {
        match pat {
            Pattern::Token(t) => {
                let Some(got) = input.get(*pos) else {
                    return false;
                };
                if !same_token(t, got) {
                    return false;
                }
                *pos += 1;
            }
            Pattern::Crate => return false,
            Pattern::Group(delim, inner) => {
                let Some(TokenTree::Group(g)) = input.get(*pos) else {
                    return false;
                };
                if g.delimiter() != *delim {
                    return false;
                }
                let inner_input: Vec<TokenTree> = g.stream().into_iter().collect();
                let mut inner_pos = 0;
                if !match_seq(inner, &inner_input, &mut inner_pos, binds)
                    || inner_pos != inner_input.len()
                {
                    return false;
                }
                *pos += 1;
            }
            Pattern::Var(name, fragment) => {
                let Some(used) = fragment_len(fragment, &input[*pos..]) else {
                    return false;
                };
                binds.insert(
                    name.clone(),
                    Bound::One(wrap_fragment(fragment, &input[*pos..*pos + used])),
                );
                *pos += used;
            }
            Pattern::Repeat(inner, sep, op) => {
                let mut runs: Vec<Bindings> = Vec::new();
                loop {
                    let mut try_pos = *pos;
                    if !runs.is_empty() {
                        if let Some(sep) = sep {
                            match input.get(try_pos) {
                                Some(t) if same_token(sep, t) => try_pos += 1,
                                _ => break,
                            }
                        }
                    }
                    let mut run = Bindings::new();
                    if try_pos >= input.len() && !inner.is_empty() {
                        break;
                    }
                    if !match_seq(inner, input, &mut try_pos, &mut run) || try_pos == *pos {
                        break;
                    }
                    *pos = try_pos;
                    runs.push(run);
                    if *op == '?' {
                        break;
                    }
                }
                if *op == '+' && runs.is_empty() {
                    return false;
                }
                let mut names = Vec::new();
                var_names(inner, &mut names);
                for name in names {
                    let seq = runs
                        .iter()
                        .map(|r| r.get(&name).cloned().unwrap_or(Bound::Seq(Vec::new())))
                        .collect();
                    binds.insert(name, Bound::Seq(seq));
                }
            }
        }
    }
    true
}

fn var_names(pats: &[Pattern], out: &mut Vec<String>) {
    for p in pats {
        match p {
            Pattern::Var(name, _) => out.push(name.clone()),
            Pattern::Group(_, inner) | Pattern::Repeat(inner, _, _) => var_names(inner, out),
            Pattern::Token(_) | Pattern::Crate => {}
        }
    }
}

fn same_token(a: &TokenTree, b: &TokenTree) -> bool {
    match (a, b) {
        (TokenTree::Group(x), TokenTree::Group(y)) => {
            x.delimiter() == y.delimiter() && x.stream().to_string() == y.stream().to_string()
        }
        (TokenTree::Ident(x), TokenTree::Ident(y)) => x == y,
        (TokenTree::Punct(x), TokenTree::Punct(y)) => x.as_char() == y.as_char(),
        (TokenTree::Literal(x), TokenTree::Literal(y)) => x.to_string() == y.to_string(),
        _ => false,
    }
}

/// Expressions keep their precedence when pasted: they go in an invisible group.
fn wrap_fragment(fragment: &str, tokens: &[TokenTree]) -> Vec<TokenTree> {
    if fragment == "expr" && tokens.len() > 1 {
        let group = Group::new(Delimiter::None, tokens.iter().cloned().collect());
        vec![TokenTree::Group(group)]
    } else {
        tokens.to_vec()
    }
}

/// How many tokens of `input` one fragment of this kind takes, if it matches.
fn fragment_len(fragment: &str, input: &[TokenTree]) -> Option<usize> {
    match fragment {
        "tt" => input.first().map(|_| 1),
        "ident" => matches!(input.first(), Some(TokenTree::Ident(_))).then_some(1),
        "lifetime" => match (input.first(), input.get(1)) {
            (Some(TokenTree::Punct(p)), Some(TokenTree::Ident(_))) if p.as_char() == '\'' => {
                Some(2)
            }
            _ => None,
        },
        "literal" => match (input.first(), input.get(1)) {
            (Some(TokenTree::Literal(_)), _) => Some(1),
            (Some(TokenTree::Ident(i)), _) if i == "true" || i == "false" => Some(1),
            (Some(TokenTree::Punct(p)), Some(TokenTree::Literal(_))) if p.as_char() == '-' => {
                Some(2)
            }
            _ => None,
        },
        "block" => {
            matches!(input.first(), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace)
                .then_some(1)
        }
        "vis" => prefix_len(input, |s| s.parse::<syn::Visibility>().map(|_| ())),
        "ty" => prefix_len(input, |s| s.parse::<syn::Type>().map(|_| ())),
        "path" => prefix_len(input, |s| s.parse::<syn::TypePath>().map(|_| ())),
        "expr" | "expr_2021" => prefix_len(input, |s| s.parse::<syn::Expr>().map(|_| ())),
        "item" => prefix_len(input, |s| s.parse::<syn::Item>().map(|_| ())),
        "stmt" => prefix_len(input, |s| s.parse::<syn::Stmt>().map(|_| ())),
        "pat" | "pat_param" => prefix_len(input, |s| syn::Pat::parse_single(s).map(|_| ())),
        "meta" => prefix_len(input, |s| s.parse::<syn::Meta>().map(|_| ())),
        _ => None,
    }
}

/// Tokens taken by parsing one `T` from the front of `input`.
fn prefix_len(
    input: &[TokenTree],
    parse: impl Fn(ParseStream) -> syn::Result<()>,
) -> Option<usize> {
    let stream: TokenStream = input.iter().cloned().collect();
    let parser = |s: ParseStream| -> syn::Result<usize> {
        parse(s)?;
        let rest: TokenStream = s.parse()?;
        Ok(rest.into_iter().count())
    };
    parser
        .parse2(stream)
        .ok()
        .map(|rest| input.len().saturating_sub(rest))
}

fn transcribe(pats: &[Pattern], binds: &Bindings, out: &mut Vec<TokenTree>) -> Option<()> {
    for pat in pats {
        match pat {
            Pattern::Token(t) => out.push(t.clone()),
            Pattern::Crate => out.push(TokenTree::Ident(Ident::new("crate", Span::call_site()))),
            Pattern::Group(delim, inner) => {
                let mut inside = Vec::new();
                transcribe(inner, binds, &mut inside)?;
                out.push(TokenTree::Group(Group::new(
                    *delim,
                    inside.into_iter().collect(),
                )));
            }
            Pattern::Var(name, _) => match binds.get(name) {
                Some(Bound::One(tokens)) => out.extend(tokens.iter().cloned()),
                Some(Bound::Seq(_)) => return None,
                None => {
                    out.push(TokenTree::Punct(proc_macro2::Punct::new(
                        '$',
                        proc_macro2::Spacing::Alone,
                    )));
                    out.push(TokenTree::Ident(Ident::new(name, Span::call_site())));
                }
            },
            Pattern::Repeat(inner, sep, _) => {
                let mut names = Vec::new();
                var_names(inner, &mut names);
                let count = names
                    .iter()
                    .filter_map(|n| match binds.get(n) {
                        Some(Bound::Seq(s)) => Some(s.len()),
                        _ => None,
                    })
                    .max()?;
                for i in 0..count {
                    if i > 0 {
                        if let Some(sep) = sep {
                            out.push(sep.clone());
                        }
                    }
                    let mut run = binds.clone();
                    for n in &names {
                        if let Some(Bound::Seq(s)) = binds.get(n) {
                            if let Some(b) = s.get(i) {
                                run.insert(n.clone(), b.clone());
                            }
                        }
                    }
                    transcribe(inner, &run, out)?;
                }
            }
        }
    }
    Some(())
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn item_attrs_mut(item: &mut syn::Item) -> Option<&mut Vec<syn::Attribute>> {
    Some(match item {
        syn::Item::Const(i) => &mut i.attrs,
        syn::Item::Enum(i) => &mut i.attrs,
        syn::Item::Fn(i) => &mut i.attrs,
        syn::Item::Impl(i) => &mut i.attrs,
        syn::Item::Mod(i) => &mut i.attrs,
        syn::Item::Static(i) => &mut i.attrs,
        syn::Item::Struct(i) => &mut i.attrs,
        syn::Item::Trait(i) => &mut i.attrs,
        syn::Item::Type(i) => &mut i.attrs,
        syn::Item::Union(i) => &mut i.attrs,
        syn::Item::Use(i) => &mut i.attrs,
        _ => return None,
    })
}

fn impl_item_attrs(item: &syn::ImplItem) -> &[syn::Attribute] {
    match item {
        syn::ImplItem::Const(i) => &i.attrs,
        syn::ImplItem::Fn(i) => &i.attrs,
        syn::ImplItem::Type(i) => &i.attrs,
        syn::ImplItem::Macro(i) => &i.attrs,
        _ => &[],
    }
}

fn trait_item_attrs(item: &syn::TraitItem) -> &[syn::Attribute] {
    match item {
        syn::TraitItem::Const(i) => &i.attrs,
        syn::TraitItem::Fn(i) => &i.attrs,
        syn::TraitItem::Type(i) => &i.attrs,
        syn::TraitItem::Macro(i) => &i.attrs,
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;

    /// Expands `source` with the host configuration and feature `std`, and renders the
    /// top-level item kinds and names (`mod a`, `struct S`), marked `!` when expanded from a
    /// template, then the unread notes.
    fn check(source: &str, expect: &str) {
        let cfg = CfgSet::from_rustc_print("unix\ntarget_os=\"linux\"")
            .with_features(&["std".to_string()]);
        let file = syn::parse_file(source).expect("parses");
        let mut table = MacroTable::default();
        table.collect(&file.items);
        let mut expander = Expander::new(&cfg, &table);
        let file = expander.file(file);
        let mut got = Vec::new();
        for item in &file.items {
            let mark = if is_expanded(item_attrs(item)) {
                "!"
            } else {
                ""
            };
            let text = match item {
                syn::Item::Mod(m) => format!("mod {}", m.ident),
                syn::Item::Struct(s) => format!(
                    "struct {}({})",
                    s.ident,
                    s.fields
                        .iter()
                        .map(|f| f.ty.to_token_stream().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                syn::Item::Use(u) => format!("use {}", u.tree.to_token_stream()),
                syn::Item::Impl(i) => format!("impl {}", i.items.len()),
                syn::Item::Macro(m) if m.ident.is_some() => continue,
                other => format!("{}", other.to_token_stream()),
            };
            got.push(format!("{mark}{text}"));
        }
        for u in &expander.unread {
            got.push(format!(
                "unread {}! line {}: {}",
                u.macro_name,
                u.line,
                u.modules.join(" ")
            ));
        }
        assert_eq!(got.join("\n"), expect.trim());
    }

    #[test]
    fn cfg_if_takes_its_first_branch_that_holds() {
        check(
            r#"
            cfg_if::cfg_if! {
                if #[cfg(windows)] { mod win; }
                else if #[cfg(unix)] { mod unix_impl; pub use unix_impl::Lock; }
                else { mod other; }
            }
            "#,
            "mod unix_impl\nuse unix_impl :: Lock",
        );
        check(
            "cfg_if! { if #[cfg(feature = \"nightly\")] { mod fast; } else { mod slow; } }",
            "mod slow",
        );
    }

    #[test]
    fn cfg_removes_items_fields_and_impl_items() {
        check(
            r#"
            #[cfg(test)] mod tests;
            #[cfg(feature = "std")] mod with_std;
            #[cfg(not(feature = "std"))] mod without_std;
            pub struct S { #[cfg(loom)] a: u8, b: u16 }
            impl S { #[cfg(windows)] fn w(&self) {} fn u(&self) {} }
            "#,
            "mod with_std\nstruct S(u16)\nimpl 1",
        );
    }

    #[test]
    fn a_crates_own_wrapper_macros_are_expanded() {
        check(
            r#"
            macro_rules! cfg_std {
                ($($item:item)*) => { $( #[cfg(feature = "std")] $item )* }
            }
            macro_rules! cfg_net {
                ($($item:item)*) => { $( #[cfg(feature = "net")] $item )* }
            }
            macro_rules! modules {
                ($($name:ident),* $(,)?) => { $( mod $name; pub use self::$name::*; )* }
            }
            cfg_std! { pub mod sync; pub struct Pool(u8); }
            cfg_net! { pub mod net; }
            modules!(a, b,);
            "#,
            "!mod sync\n!struct Pool(u8)\n!mod a\n!use self :: a :: *\n!mod b\n!use self :: b :: *",
        );
    }

    #[test]
    fn fragments_of_several_kinds_match() {
        check(
            r#"
            macro_rules! wrap {
                ($(#[$m:meta])* $v:vis struct $name:ident($t:ty) = $e:expr;) => {
                    $(#[$m])* $v struct $name($t);
                    impl $name { const DEFAULT: $t = $e; }
                };
                ($name:ident) => { struct $name(u8); };
            }
            wrap!(#[derive(Debug)] pub struct Key(u64) = 1 + 2;);
            wrap!(Other);
            "#,
            "!struct Key(u64)\n!impl 1\n!struct Other(u8)",
        );
    }

    #[test]
    fn macros_that_hide_modules_and_cannot_be_read_are_named() {
        check(
            r#"
            compile! { some weird syntax; mod hidden; mod other; }
            lazy_static! { static ref X: u8 = 1; }
            thing! { pub struct Fine(u8); }
            "#,
            "struct Fine(u8)\nunread compile! line 2: hidden other",
        );
    }
}
