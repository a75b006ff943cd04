//! Documented contracts: whether a method's doc comment declares its answer racy or
//! approximate ("an approximation", "may be stale", "not linearizable"). Such a method is
//! still called and judged for panics and deadlocks, but the results oracle does not compare
//! its results: a `len` that sums a sharded map's shards one at a time answers, beside a
//! concurrent insert, a count no order of the calls gives, and says so.

use crate::model::Approximation;

/// The phrases by which a doc comment says a method's answer need not match any order of the
/// calls, lower case. Each is matched on word boundaries; one ending in `*` is a stem that
/// may go on (`approx*`: approximate, approximately, approximation, approx.).
///
/// They are phrases rather than words because the words alone say too much: "stale" also
/// names entries a cleanup removes, "snapshot" a type or an argument ("restores from a
/// snapshot"), "hint" an argument passed on ("passes a capacity hint"). The phrases say it of
/// the answer. A false match only stops the results oracle comparing that method's results
/// (`exact = [..]` in the metadata undoes it); a miss leaves a documented relaxation to be
/// reported as a wrong result (`approximate = [..]` adds it).
const PHRASES: &[&str] = &[
    "approx*",
    // Not a stem: an "estimator" the call updates (mini-moka's popularity estimator) says
    // nothing of its answer.
    "estimate",
    "estimates",
    "estimated",
    "an estimation",
    "overcount*",
    "undercount*",
    "racy",
    "without any guarantee*",
    "no guarantee of accuracy",
    "be stale",
    "be out of date",
    "be out-of-date",
    "be outdated",
    "be inaccurate",
    "be imprecise",
    "not be accurate",
    "not be exact",
    "not exact",
    "inexact",
    "returns a snapshot",
    "is a snapshot",
    "only a snapshot",
    "just a snapshot",
    "is a hint",
    "only a hint",
    "just a hint",
    "returns a hint",
    "not linearizable",
    "not linearisable",
    "eventually consistent",
    "weakly consistent",
    // An answer about what happened while the call ran (sled's `flush`: "Returns the number
    // of bytes flushed during this call") counts an interval, not a point: two overlapping
    // calls each count what both did, which no order of the calls gives.
    "during this call",
    "during the call",
    // An answer about the storage a structure takes (sled's `size_on_disk`: "Returns the
    // on-disk size of the storage files"; `space_amplification`: "their total physical
    // size") measures its layout, which the buffering of two threads' writes changes, not
    // its contents: sled 0.33.0 answered 174 bytes beside a concurrent `pop_max`, 224 in
    // every order.
    "on-disk size",
    "size on disk",
    "disk usage",
    "physical size",
    "memory usage",
    "memory footprint",
];

/// The phrases by which a type's doc comment says what it holds is kept on a best effort:
/// mini-moka's `Cache` "performs a best-effort bounding of the map using an entry
/// replacement algorithm". A method's own doc can say its answer is approximate; these say
/// the contents are, so every answer is.
const TYPE_PHRASES: &[&str] = &[
    "best-effort",
    "best effort",
    "eventually consistent",
    "weakly consistent",
    "not linearizable",
    "not linearisable",
];

/// The phrases by which a crate's doc comment says that whole-structure operations see a
/// snapshot or a transient state (flurry's "# Consistency" section, after Java's
/// `ConcurrentHashMap`; papaya's: "Aggregate operations, such as iterators, rely on a weak
/// snapshot of the table").
const CRATE_PHRASES: &[&str] = &[
    "operate on a snapshot",
    "operates on a snapshot",
    "weak snapshot",
    "transient state*",
    "weakly consistent",
    "not linearizable",
    "not linearisable",
];

/// The phrases by which a method's doc says the method itself is not atomic (sled's
/// `Tree::clear`: "Note that this is not atomic."): its effect is made in steps another
/// thread's calls can fall between (`clear` removing keys one by one while a
/// `compare_and_swap` inserts one), which says more than an approximate answer: the other
/// calls' answers and the final state are in question too.
const NOT_ATOMIC_PHRASES: &[&str] = &[
    "not atomic",
    "non-atomic",
    "nonatomic",
    "not an atomic operation",
    "not performed atomically",
    "not done atomically",
    // flurry's `retain`: "If `f` returns `false` for a given key/value pair, but the value for
    // that pair is concurrently modified before the removal takes place, the entry will not
    // be removed": its removals are steps a concurrent update falls between.
    "concurrently modified before",
];

/// The phrases by which a section of the crate's doc, which a method's doc points to for
/// details, says that the operations it speaks of are made in steps concurrent calls fall
/// between (papaya's "# Consistency", which `clear` and `retain` point to: "operations such
/// as `clear` and `clone` rely on iteration and may not produce "perfect" results if the map
/// is being concurrently modified"), besides [`NOT_ATOMIC_PHRASES`].
const SECTION_PHRASES: &[&str] = &[
    "being concurrently modified",
    "concurrent modification*",
    "weak snapshot",
    "weakly consistent",
    "not linearizable",
    "not linearisable",
];

/// The phrases by which a method's doc says it fails when it finds a lock held: quick_cache's
/// `try_insert` ("`Err((key, value))` if the shard lock could not be acquired without
/// blocking"), scc's `try_entry` ("`None` if the entry could not be locked"). Only locks:
/// "without blocking" alone also describes a channel's `try_recv`, whose `Err(Empty)` is an
/// answer some order gives, and a lost message shows as one.
const CONTENTION_PHRASES: &[&str] = &[
    "could not be locked",
    "cannot be locked",
    "can't be locked",
    "could not be acquired",
    "cannot be acquired",
    "can't be acquired",
    "fails to acquire",
    "failed to acquire",
    "could not acquire",
    "cannot acquire",
    "lock contention",
    "lock is contended",
    "is already locked",
    "is currently locked",
    "lock is held",
    "lock is already held",
    "lock is currently held",
];

/// The phrases by which a constructor's doc says that what it builds pairs concurrent calls up
/// ([`crate::model::Constructor::rendezvous`]): crossbeam-channel's `bounded` ("A special case
/// is zero-capacity channel, which cannot hold any messages. Instead, send and receive
/// operations must appear at the same time in order to pair up and pass the message over."),
/// std's `sync_channel` and flume's `bounded` ("rendezvous"). A send succeeds there only
/// beside a receive that takes its message, and a receive only beside that send: each
/// answers what no order of whole calls gives, where each alone finds no partner.
const RENDEZVOUS_PHRASES: &[&str] = &[
    "rendezvous",
    "pair up",
    "pairs up",
    "must appear at the same time",
    "zero-capacity",
    "zero capacity",
];

/// Words that, just before a phrase (within two words), deny it: "is not an approximation",
/// "can never be stale", "no estimate".
const NEGATIONS: &[&str] = &["not", "never", "no"];

/// Whether the doc comment `attrs` carry declares the method's answer approximate, with the
/// sentence that says so.
pub(crate) fn approximation(attrs: &[syn::Attribute]) -> Option<Approximation> {
    quoted(attrs, NOT_ATOMIC_PHRASES)
        .map(|line| Approximation::NotAtomic { line })
        .or_else(|| quoted(attrs, PHRASES).map(|line| Approximation::Doc { line }))
        .or_else(|| doc_hidden(attrs).then_some(Approximation::Hidden))
}

/// Whether `attrs` carry `#[doc(hidden)]`.
fn doc_hidden(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc")
            && a.parse_args::<syn::Ident>()
                .is_ok_and(|word| word == "hidden")
    })
}

/// Whether the type's doc comment `attrs` carry says its contents are kept on a best effort,
/// with the sentence that says so.
pub(crate) fn type_approximation(attrs: &[syn::Attribute]) -> Option<Approximation> {
    quoted(attrs, TYPE_PHRASES).map(|line| Approximation::TypeDoc { line })
}

/// A section of the crate root's doc that says the operations it speaks of are not atomic
/// ([`not_atomic_sections`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section {
    /// The anchor rustdoc gives its heading (`consistency`, `atomic-operations`).
    pub anchor: String,
    pub heading: String,
    /// The sentence that says so.
    pub line: String,
}

/// The sections (under `#` headings) of the crate root's doc comment (`attrs`, its inner
/// attributes) that say the operations they speak of are not atomic
/// ([`SECTION_PHRASES`], [`NOT_ATOMIC_PHRASES`]).
pub(crate) fn not_atomic_sections(attrs: &[syn::Attribute]) -> Vec<Section> {
    let sections = doc_sections(attrs);
    let phrases: Vec<&str> = NOT_ATOMIC_PHRASES
        .iter()
        .chain(SECTION_PHRASES)
        .copied()
        .collect();
    sections
        .into_iter()
        .filter_map(|(heading, words)| {
            let line = quoted_in(&words.join(" "), &phrases)?;
            Some(Section {
                anchor: anchor_of(&heading),
                heading,
                line,
            })
        })
        .collect()
}

/// The anchor rustdoc gives a heading: lower case, white space made `-`, other punctuation
/// (a code span's backticks) dropped.
fn anchor_of(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '_' => Some(c.to_ascii_lowercase()),
            c if c.is_whitespace() || c == '-' => Some('-'),
            _ => None,
        })
        .collect()
}

/// Whether the doc comment `attrs` carry points to one of `sections` of the crate root's doc
/// for details (a link to `crate#consistency`, or `index.html#consistency` as older docs
/// write it): the method is not atomic by what that section says
/// ([`Approximation::NotAtomic`], quoting the pointer and the section's sentence).
pub(crate) fn section_not_atomic(
    attrs: &[syn::Attribute],
    sections: &[Section],
) -> Option<Approximation> {
    if sections.is_empty() {
        return None;
    }
    let text = doc_text_of(attrs);
    for target in ["crate#", "index.html#"] {
        let mut from = 0;
        while let Some(found) = text[from..].find(target) {
            let at = from + found;
            from = at + target.len();
            // The link's target starts after `(`, `: ` or white space; a URL is another site's.
            let start = text[..at]
                .rfind(|c: char| c == '(' || c.is_whitespace())
                .map_or(0, |i| i + 1);
            let prefix = &text[start..at];
            if prefix.contains("://") || !prefix.chars().all(|c| c == '.' || c == '/') {
                continue;
            }
            let anchor: String = text[from..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            if let Some(section) = sections.iter().find(|s| s.anchor == anchor) {
                let pointer = sentence(&text, at, from);
                return Some(Approximation::NotAtomic {
                    line: format!(
                        "{pointer} — its crate's doc, \"# {}\": {}",
                        section.heading, section.line
                    ),
                });
            }
        }
    }
    None
}

/// Whether the crate root's doc comment (`attrs`, its inner attributes) says that what
/// inspects a structure as a whole sees a snapshot, with the sentence that says so.
pub(crate) fn crate_approximation(attrs: &[syn::Attribute]) -> Option<Approximation> {
    quoted(attrs, CRATE_PHRASES).map(|line| Approximation::CrateDoc { line })
}

/// The phrases by which a method's doc says that concurrent calls on one key share one
/// evaluation of their closure (moka's `get_with`: "concurrent calls on the same key are
/// coalesced into one evaluation of the `init` closure. Only one of the calls evaluates its
/// closure, and other calls wait for that closure to complete").
const COALESCING_PHRASES: &[&str] = &[
    "coalesced into one evaluation",
    "other calls wait for that closure to complete",
];

/// Whether the doc comment `attrs` carry says the method fails when it finds a lock held
/// ([`crate::model::Method::contended`]), with the sentence that says so.
///
/// The sentence must name a failure answer (`None`, `Err`, an error, `false`, "fails"): spin's
/// `is_locked` "Returns `true` if the lock is currently held", which says what its success
/// means, not how it fails.
pub(crate) fn contended(attrs: &[syn::Attribute]) -> Option<String> {
    let line = quoted(attrs, CONTENTION_PHRASES)?;
    let lower = line.to_ascii_lowercase();
    let names_failure = ["none", "err", "error", "false", "fail*"]
        .iter()
        .any(|word| find_phrase(&lower, word).is_some());
    names_failure.then_some(line)
}

/// Whether a constructor's doc comment says what it builds pairs concurrent calls up (a
/// rendezvous), with the sentence that says so.
pub(crate) fn rendezvous(attrs: &[syn::Attribute]) -> Option<String> {
    quoted(attrs, RENDEZVOUS_PHRASES)
}

/// A collection's `capacity()` (no argument but the receiver) answers the storage it has
/// allocated ([`Approximation::Storage`]).
pub(crate) fn storage_answer(sig: &syn::Signature) -> Option<Approximation> {
    let only_receiver =
        sig.inputs.len() == 1 && matches!(sig.inputs.first(), Some(syn::FnArg::Receiver(_)));
    let answers = matches!(sig.output, syn::ReturnType::Type(..));
    (sig.ident == "capacity" && only_receiver && answers).then_some(Approximation::Storage)
}

/// A method named with a leading `_` is outside the API by convention
/// ([`Approximation::Underscored`]).
pub(crate) fn underscored(sig: &syn::Signature) -> Option<Approximation> {
    sig.ident
        .to_string()
        .starts_with('_')
        .then_some(Approximation::Underscored)
}

/// Whether the doc comment `attrs` carry says concurrent calls of the method on one key are
/// coalesced into one evaluation of their closure, with the sentence that says so.
pub(crate) fn coalescing(attrs: &[syn::Attribute]) -> Option<String> {
    quoted(attrs, COALESCING_PHRASES)
}

/// The method a doc comment opens by likening this one to: "Works like [`get_with`](..), but
/// takes an additional `replace_if` closure", "Similar to [`get_with`], but ...", "Deprecated,
/// replaced with [`get_with`]". Its name, without a path or `()`.
pub(crate) fn works_like(attrs: &[syn::Attribute]) -> Option<String> {
    let text = doc_text_of(attrs);
    let mut lower = text.to_ascii_lowercase();
    // A maintainer's note first ("TODO: Remove this in v0.13.0. Deprecated, replaced with
    // [`try_get_with`]": moka 0.12's deprecated aliases) does not open the doc.
    while lower.starts_with("todo") {
        lower = match lower.split_once(". ") {
            Some((_, after)) => after.to_string(),
            None => return None,
        };
    }
    let rest = [
        "works like ",
        "similar to ",
        "same as ",
        "like ",
        // A deprecated alias delegates to what replaces it (moka's `get_or_insert_with`).
        "deprecated, replaced with ",
        "deprecated, use ",
        "deprecated: use ",
    ]
    .iter()
    .find_map(|opening| lower.strip_prefix(opening))?;
    let rest = rest.strip_prefix('[').unwrap_or(rest);
    let name = rest.strip_prefix('`')?.split('`').next()?;
    let name = name.trim_end_matches("()");
    let name = name.rsplit(['.', ':']).next().unwrap_or(name);
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| name.to_string())
}

/// The sentence of the doc comment `attrs` carry in which the first of `phrases` stands.
fn quoted(attrs: &[syn::Attribute], phrases: &[&str]) -> Option<String> {
    quoted_in(&doc_text_of(attrs), phrases)
}

/// The sentence of `text` in which the first of `phrases` stands.
fn quoted_in(text: &str, phrases: &[&str]) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let (at, end) = phrases
        .iter()
        .filter_map(|phrase| find_phrase(&lower, phrase))
        .min()?;
    Some(sentence(text, at, end).to_string())
}

/// The sections of a doc comment under its `#` headings (any level), outside code blocks:
/// each heading's text and the words under it, up to the next heading. Words before the first
/// heading are in none.
fn doc_sections(attrs: &[syn::Attribute]) -> Vec<(String, Vec<String>)> {
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_code = false;
    for text in attrs.iter().filter_map(doc_attr) {
        for line in text.lines().map(str::trim) {
            if line.starts_with("```") || line.starts_with("~~~") {
                in_code = !in_code;
            } else if in_code {
                continue;
            } else if let Some(heading) = line.strip_prefix('#') {
                sections.push((
                    heading.trim_start_matches('#').trim().to_string(),
                    Vec::new(),
                ));
            } else if let Some((_, words)) = sections.last_mut() {
                words.extend(line.split_whitespace().map(str::to_string));
            }
        }
    }
    sections
}

/// The first sentence of the doc comment's `# Panics` section (any heading level), or the
/// heading's own text when the section has no sentence before the next heading or the end.
pub(crate) fn panics(attrs: &[syn::Attribute]) -> Option<String> {
    let (_, words) = doc_sections(attrs)
        .into_iter()
        .find(|(heading, _)| heading.eq_ignore_ascii_case("panics"))?;
    let text = words.join(" ");
    let end = [". ", "! ", "? "]
        .iter()
        .filter_map(|e| text.find(e).map(|at| at + 1))
        .min()
        .unwrap_or(text.len());
    let first = text[..end].trim();
    Some(if first.is_empty() { "# Panics" } else { first }.to_string())
}

/// Whether `attrs` hold any doc comment.
pub(crate) fn has_doc(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| doc_attr(a).is_some())
}

/// The doc comment's text outside code blocks, its lines joined and every run of white space
/// made one space, so that a phrase wrapped over two lines is found.
fn doc_text_of(attrs: &[syn::Attribute]) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut in_code = false;
    for text in attrs.iter().filter_map(doc_attr) {
        for line in text.lines().map(str::trim) {
            if line.starts_with("```") || line.starts_with("~~~") {
                in_code = !in_code;
            } else if !in_code {
                words.extend(line.split_whitespace().map(str::to_string));
                // A heading ends a sentence of its own: it is not quoted with the next.
                if line.starts_with('#') {
                    if let Some(last) = words.last_mut() {
                        if !last.ends_with(['.', '!', '?']) {
                            last.push('.');
                        }
                    }
                }
            }
        }
    }
    words.join(" ")
}

/// The text of a `#[doc = "…"]` attribute (what `///` and `/** */` become).
fn doc_attr(attr: &syn::Attribute) -> Option<String> {
    crate::source::str_attr(attr, "doc")
}

/// The sentence of `text` that holds `at..end`: from the end of the sentence before (`. `,
/// `! `, `? `) to the end of its own, which may run over several doc lines.
fn sentence(text: &str, at: usize, end: usize) -> &str {
    const ENDS: [&str; 4] = [". ", "! ", "? ", ".) "];
    let start = ENDS
        .iter()
        .filter_map(|e| text[..at].rfind(e).map(|i| i + e.len()))
        .max()
        .unwrap_or(0);
    let stop = ENDS
        .iter()
        .filter_map(|e| text[end..].find(e).map(|i| end + i + 1))
        .min()
        .unwrap_or(text.len());
    &text[start..stop]
}

/// The first place `phrase` (of [`PHRASES`]) occurs in `text` on word boundaries and not
/// denied, as the range of the match.
fn find_phrase(text: &str, phrase: &str) -> Option<(usize, usize)> {
    let (words, stem) = match phrase.strip_suffix('*') {
        Some(words) => (words, true),
        None => (phrase, false),
    };
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(found) = text[from..].find(words) {
        let at = from + found;
        let end = at + words.len();
        from = end;
        let starts_word = !text[..at].chars().next_back().is_some_and(is_word);
        let ends_word = stem || !text[end..].chars().next().is_some_and(is_word);
        if !starts_word || !ends_word || denied(&text[..at]) {
            continue;
        }
        let rest = text[end..]
            .find(|c: char| !is_word(c))
            .unwrap_or(text.len() - end);
        return Some((at, if stem { end + rest } else { end }));
    }
    None
}

/// Whether the two words before a match (`before` is the text up to it) deny it.
fn denied(before: &str) -> bool {
    before
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .rev()
        .take(2)
        .any(|w| NEGATIONS.contains(&w))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The doc comment `doc` (its lines as `///` writes them) declares the answer
    /// approximate with `expect` quoted, or not at all when `expect` is `None`.
    fn check(doc: &str, expect: Option<&str>) {
        let source = doc.lines().map(|l| format!("///{l}\n")).collect::<String>() + "fn f() {}";
        let item: syn::ItemFn = syn::parse_str(&source).unwrap();
        let got = approximation(&item.attrs).map(|a| match a {
            Approximation::Doc { line } => line,
            Approximation::Configured
            | Approximation::Hidden
            | Approximation::Underscored
            | Approximation::Storage
            | Approximation::View
            | Approximation::NotAtomic { .. }
            | Approximation::TypeDoc { .. }
            | Approximation::CrateDoc { .. }
            | Approximation::AnswersFrom { .. } => unreachable!(),
        });
        assert_eq!(got.as_deref(), expect, "{doc}");
    }

    /// sled's `#[doc(hidden)] space_amplification` (a physical size ratio) is outside the
    /// documented API: its answer is not held to a linearization; a doc's own words first.
    #[test]
    fn a_hidden_method_promises_no_answer() {
        let item: syn::ItemFn = syn::parse_str("#[doc(hidden)]\nfn f() {}").unwrap();
        assert_eq!(approximation(&item.attrs), Some(Approximation::Hidden));
        let item: syn::ItemFn =
            syn::parse_str("/// A best-effort estimate.\n#[doc(hidden)]\nfn f() {}").unwrap();
        assert!(matches!(
            approximation(&item.attrs),
            Some(Approximation::Doc { .. })
        ));
        let item: syn::ItemFn = syn::parse_str("#[doc(alias = \"x\")]\nfn f() {}").unwrap();
        assert_eq!(approximation(&item.attrs), None);
    }

    #[test]
    fn a_doc_that_calls_the_answer_approximate_is_quoted() {
        for (doc, line) in [
            (
                " Returns an approximation of the number of elements.",
                "Returns an approximation of the number of elements.",
            ),
            (
                " The number of entries.\n\n The count is approximate while others insert.",
                "The count is approximate while others insert.",
            ),
            (" Approximately how many.", "Approximately how many."),
            (
                " Returns the value without any guarantees about concurrent updates.",
                "Returns the value without any guarantees about concurrent updates.",
            ),
            (
                " The answer may be stale by the time it returns.",
                "The answer may be stale by the time it returns.",
            ),
            (" It might already be stale.", "It might already be stale."),
            (
                " Under contention the count may be inaccurate.",
                "Under contention the count may be inaccurate.",
            ),
            (
                " Returns a snapshot of the queue's length.",
                "Returns a snapshot of the queue's length.",
            ),
            (" The length. This is only a hint.", "This is only a hint."),
            (" Not linearizable.", "Not linearizable."),
            (
                " Returns the on-disk size of the storage files\n for this database.",
                "Returns the on-disk size of the storage files for this database.",
            ),
            (
                " Reads are eventually consistent.",
                "Reads are eventually consistent.",
            ),
            (
                " The value returned is an estimate.",
                "The value returned is an estimate.",
            ),
            (
                " It may overcount entries if an old array is not dropped yet.",
                "It may overcount entries if an old array is not dropped yet.",
            ),
            (" This is racy.", "This is racy."),
            (" NOT LINEARIZABLE", "NOT LINEARIZABLE"),
            (
                " Calls fsync. Returns the number of bytes flushed during\n this call.",
                "Returns the number of bytes flushed during this call.",
            ),
        ] {
            check(doc, Some(line));
        }
    }

    #[test]
    fn a_constructor_whose_doc_says_its_calls_pair_up_is_a_rendezvous() {
        let said = |doc: &str| rendezvous(&attrs_of(doc));
        let bounded = "Creates a channel of bounded capacity.\n\nA special case is \
                       zero-capacity channel, which cannot hold any messages. Instead, send \
                       and receive operations must appear at the same time in order to pair up \
                       and pass the message over.";
        assert!(said(bounded).is_some_and(|line| line.contains("zero-capacity")));
        assert!(said("Creates a rendezvous channel: a send waits for a receive.").is_some());
        for doc in [
            "Creates a channel of bounded capacity.",
            "Creates a queue.\n\n# Panics\n\nPanics if the capacity is zero.",
        ] {
            assert_eq!(said(doc), None, "{doc}");
        }
    }

    #[test]
    fn a_doc_that_calls_the_method_not_atomic_is_quoted_as_such() {
        let attrs =
            attrs_of(" Clears the `Tree`, removing all values.\n\n Note that this is not atomic.");
        assert_eq!(
            approximation(&attrs),
            Some(Approximation::NotAtomic {
                line: "Note that this is not atomic.".into()
            })
        );
        let attrs = attrs_of(" Retains only the elements specified by the predicate.\n\n # Notes\n\n If `f` returns `false` for a given key/value pair, but the value for that pair is concurrently\n modified before the removal takes place, the entry will not be removed.");
        assert!(
            matches!(
                approximation(&attrs),
                Some(Approximation::NotAtomic { ref line }) if line.contains("concurrently modified before")
            ),
            "{:?}",
            approximation(&attrs)
        );
        let attrs = attrs_of(" A non-atomic read of both counters.");
        assert!(matches!(
            approximation(&attrs),
            Some(Approximation::NotAtomic { .. })
        ));
        // Atomic, said of something else or denied: not a relaxation.
        for doc in [
            " Atomically swaps the value.",
            " Uses an atomic counter.",
            " This is never not atomic.",
        ] {
            assert_eq!(approximation(&attrs_of(doc)), None, "{doc}");
        }
    }

    /// papaya's crate doc ("# Consistency") and the `clear` that points to it: a method whose
    /// doc points to a section of the crate's doc that says its operations may not be atomic
    /// is not atomic, quoting both; a pointer to another section, to another site, or no
    /// pointer, is not.
    #[test]
    fn a_doc_pointing_to_a_crate_section_that_says_not_atomic_is_not_atomic() {
        let krate: syn::File = syn::parse_str(
            "//! # Usage\n\
             //!\n\
             //! Pin the map, then use it.\n\
             //!\n\
             //! ```\n\
             //! // this is not atomic (in code: not read)\n\
             //! ```\n\
             //!\n\
             //! # Consistency\n\
             //!\n\
             //! Reads reflect the most-recent write. Similarly, operations such as `clear` and\n\
             //! `clone` rely on iteration and may not produce \"perfect\" results if the map is\n\
             //! being concurrently modified.\n\
             //!\n\
             //! ## `Atomic` operations\n\
             //!\n\
             //! `update` is atomic.\n",
        )
        .unwrap();
        let sections = not_atomic_sections(&krate.attrs);
        assert_eq!(
            sections,
            [Section {
                anchor: "consistency".into(),
                heading: "Consistency".into(),
                line: "Similarly, operations such as `clear` and `clone` rely on iteration and \
                       may not produce \"perfect\" results if the map is being concurrently \
                       modified."
                    .into(),
            }]
        );
        assert_eq!(anchor_of("`Atomic` operations"), "atomic-operations");
        let clear = attrs_of(
            " Clears the map.\n\n Note that this method will block until any in-progress resizes are\n completed before proceeding. See the [consistency](crate#consistency)\n section for details.",
        );
        assert_eq!(
            section_not_atomic(&clear, &sections),
            Some(Approximation::NotAtomic {
                line: "See the [consistency](crate#consistency) section for details. — its \
                       crate's doc, \"# Consistency\": Similarly, operations such as `clear` and \
                       `clone` rely on iteration and may not produce \"perfect\" results if the \
                       map is being concurrently modified."
                    .into()
            })
        );
        // As older docs write the pointer: a reference link to `index.html#…`.
        let older = attrs_of(
            " Clears the map. See [the notes].\n\n [the notes]: ../index.html#consistency",
        );
        assert!(section_not_atomic(&older, &sections).is_some());
        for doc in [
            " Pins the map. See the [crate-level documentation](crate#usage) for details.",
            " See [std](https://doc.rust-lang.org/std/collections/index.html#consistency).",
            " Clears the map.",
        ] {
            assert_eq!(section_not_atomic(&attrs_of(doc), &sections), None, "{doc}");
        }
    }

    #[test]
    fn the_sentence_is_quoted_even_when_it_runs_over_lines() {
        check(
            " The count is read shard by shard, so it may be\n stale when others insert.",
            Some("The count is read shard by shard, so it may be stale when others insert."),
        );
        check(
            " Sums the shards one at a time, so the count is\n an approximation! Use it for metrics.",
            Some("Sums the shards one at a time, so the count is an approximation!"),
        );
    }

    #[test]
    fn the_first_sentence_that_says_so_is_quoted() {
        check(
            " Sums the shards one at a time.\n It is an approximation.\n It may be stale.",
            Some("It is an approximation."),
        );
    }

    #[test]
    fn the_words_alone_or_denied_do_not_make_an_answer_approximate() {
        for doc in [
            " Returns the number of elements.",
            " Removes stale entries.",
            " Restores the set from a snapshot of another.",
            " Returns a [`Snapshot`] of the counters.",
            " Passes `n` to the allocator as a capacity hint.",
            " Exact: this is not an approximation.",
            " The count can never be stale: it is read under the lock.",
            " Linearizable.",
            " Calls `self.inexactness()`.",
            " This method does not update the historic popularity estimator.",
            "",
        ] {
            check(doc, None);
        }
    }

    #[test]
    fn a_type_doc_that_keeps_its_contents_on_a_best_effort_makes_every_answer_approximate() {
        let doc = |text: &str| -> Vec<syn::Attribute> {
            let item: syn::ItemStruct =
                syn::parse_str(&format!("#[doc = {text:?}]\npub struct Cache;")).unwrap();
            item.attrs
        };
        let line = " It performs a best-effort bounding of the map using an entry replacement \
                    algorithm.";
        assert_eq!(
            type_approximation(&doc(line)),
            Some(Approximation::TypeDoc {
                line: line.trim().to_string()
            })
        );
        assert_eq!(type_approximation(&doc(" A concurrent map.")), None);
        // A method's "approximate" is the method's: the type's contents are not.
        assert_eq!(type_approximation(&doc(" Its `len` is approximate.")), None);
    }

    /// The `# Panics` section's first sentence, each `///` line an attribute of its own as
    /// rustc gives them; a section that ends at the next heading; none without the heading
    /// (a sentence that only mentions panics elsewhere), nor inside a code block.
    #[test]
    fn the_first_sentence_of_a_panics_section_is_quoted() {
        let of = |doc: &str| {
            let source = doc.lines().map(|l| format!("///{l}\n")).collect::<String>() + "fn f() {}";
            let item: syn::ItemFn = syn::parse_str(&source).unwrap();
            panics(&item.attrs)
        };
        let semaphore = " Adds permits.\n\n # Panics\n\n If adding `permits` permits would cause \
                         the permit\n count to overflow. It is then left as it was.\n\n # Examples";
        assert_eq!(
            of(semaphore).as_deref(),
            Some("If adding `permits` permits would cause the permit count to overflow.")
        );
        assert_eq!(
            of(" Pushes.\n ## Panics\n # Examples\n Never panics.").as_deref(),
            Some("# Panics")
        );
        assert_eq!(of(" Pushes. This panics if the queue is full."), None);
        assert_eq!(of(" Pushes.\n ```\n # Panics\n ```\n Fine."), None);
    }

    #[test]
    fn code_blocks_in_the_doc_are_not_read() {
        check(
            " The number of elements.\n\n ```\n let approx = set.len();\n ```",
            None,
        );
    }

    #[test]
    fn attributes_other_than_doc_comments_are_not_read() {
        let item: syn::ItemFn =
            syn::parse_str("#[deprecated = \"approximate\"]\n#[inline]\nfn f() {}").unwrap();
        assert_eq!(approximation(&item.attrs), None);
        assert!(!has_doc(&item.attrs));
    }

    /// quick_cache's and scc's attempts say they fail on a held lock; a channel's
    /// `try_recv` ("without blocking") and a denial do not.
    #[test]
    fn a_doc_that_fails_on_a_held_lock_is_quoted() {
        for (doc, quote) in [
            (
                " Attempts to insert an item in the cache with key `key` without blocking.\n Returns `Ok(())` if the item was inserted, or `Err((key, value))` if the shard lock\n could not be acquired without blocking. Lock contention is the only failure\n mode.",
                Some("Returns `Ok(())` if the item was inserted, or `Err((key, value))` if the shard lock could not be acquired without blocking."),
            ),
            (
                " Tries to get the entry.\n\n Returns `None` if the entry could not be locked.",
                Some("Returns `None` if the entry could not be locked."),
            ),
            (" Returns `false` if the lock is held by another thread.", Some("Returns `false` if the lock is held by another thread.")),
            (" Attempts to receive a message without blocking.", None),
            (" Returns `Err(Full)` if the channel is full and the send would block.", None),
            (" This never fails to acquire the lock.", None),
            (" Returns `true` if the lock is currently held.", None),
        ] {
            assert_eq!(contended(&attrs_of(doc)).as_deref(), quote, "{doc}");
        }
    }

    /// A collection's `capacity()` measures its storage; a `capacity` that takes an
    /// argument, or a method of another name, does not.
    #[test]
    fn a_collections_capacity_answers_its_storage() {
        let storage = |sig: &str| {
            let item: syn::TraitItemFn = syn::parse_str(&format!("{sig};")).unwrap();
            storage_answer(&item.sig)
        };
        assert_eq!(
            storage("fn capacity(&self) -> usize"),
            Some(Approximation::Storage)
        );
        assert_eq!(storage("fn capacity(&self, shard: usize) -> usize"), None);
        assert_eq!(storage("fn capacity(&self)"), None);
        assert_eq!(storage("fn capacity() -> usize"), None);
        assert_eq!(storage("fn len(&self) -> usize"), None);
    }

    /// dashmap's `Map::_capacity` is an implementation detail by its name; `capacity_` and
    /// `len` are not.
    #[test]
    fn a_method_named_with_a_leading_underscore_promises_no_answer() {
        let underscore = |sig: &str| {
            let item: syn::TraitItemFn = syn::parse_str(&format!("{sig};")).unwrap();
            underscored(&item.sig)
        };
        assert_eq!(
            underscore("fn _capacity(&self) -> usize"),
            Some(Approximation::Underscored)
        );
        assert_eq!(underscore("fn capacity_(&self) -> usize"), None);
        assert_eq!(underscore("fn len(&self) -> usize"), None);
    }

    fn attrs_of(doc: &str) -> Vec<syn::Attribute> {
        let source = doc.lines().map(|l| format!("///{l}\n")).collect::<String>() + "fn f() {}";
        syn::parse_str::<syn::ItemFn>(&source).unwrap().attrs
    }

    #[test]
    fn a_doc_that_coalesces_concurrent_calls_is_quoted_and_a_likening_names_its_method() {
        let get_with = " Returns a clone of the value, running `init` if absent.\n\
            \n\
            This method prevents to evaluate the `init` closure multiple times on the same\n\
            key even if the method is concurrently called by many threads; only one of the\n\
            calls evaluates its closure, and other calls wait for that closure to complete.";
        let line = coalescing(&attrs_of(get_with)).expect("coalescing");
        assert!(line.starts_with("This method prevents"), "{line}");
        assert!(line.ends_with("to complete."), "{line}");
        let newer = " Concurrent calls on the same key are coalesced into one evaluation of\n the `init` closure.";
        assert!(coalescing(&attrs_of(newer)).is_some());
        assert_eq!(coalescing(&attrs_of(" Inserts a value.")), None);
        for (doc, like) in [
            (
                " Works like [`get_with`](#method.get_with), but takes an additional\n `replace_if` closure.",
                Some("get_with"),
            ),
            (" Similar to [`Cache::get_with()`], but by reference.", Some("get_with")),
            (" Similar to `get`.", Some("get")),
            (
                " Deprecated, replaced with [`try_get_with`](#method.try_get_with)",
                Some("try_get_with"),
            ),
            (
                " TODO: Remove this in v0.13.0.\n Deprecated, replaced with [`try_get_with`](#method.try_get_with)",
                Some("try_get_with"),
            ),
            (" TODO: like `get`, but faster", None),
            (" Returns a value. Works like [`get_with`].", None),
            (" Works like a charm.", None),
        ] {
            assert_eq!(works_like(&attrs_of(doc)).as_deref(), like, "{doc}");
        }
    }
}
