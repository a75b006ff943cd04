//! JUnit XML (Jenkins flavour) for CI dashboards: one `<testsuite>` per type, one
//! `<testcase>` per method pair. A new violation is a `<failure>`; a pair the analysis removed
//! and a type covcon could not test are `<skipped>`; a violation already in the baseline is
//! reported in `<system-out>` and does not fail.
//!
//! An untested type is one testcase named `type`. One covcon missed is `<skipped>` with why.
//! One with nothing to test passes, with why in `<system-out>`: the analysis showed no two of
//! its methods can run concurrently, a complete verdict, and a skip would sit among the ones
//! that ask for attention. An internal one stays `<skipped>` (it was not tested, and a pass
//! would claim it was), its message saying it is internal and why.

use super::{Report, TypeReport, UntestedKind};
use analysis::Group;
use std::fmt::Write;

pub fn render(report: &Report) -> String {
    let tests: usize = report.types.iter().map(cases).sum();
    let failures = report.new_violations();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"covcon\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" time=\"{:.3}\">",
        report.elapsed_s
    );
    for t in &report.types {
        suite(&mut out, t, report.seed);
    }
    out.push_str("</testsuites>\n");
    out
}

fn cases(t: &TypeReport) -> usize {
    if t.untested.is_some() {
        1
    } else {
        t.pairs.len().max(1)
    }
}

fn suite(out: &mut String, t: &TypeReport, seed: u64) {
    let failures = t.violations.iter().filter(|v| !v.known).count();
    let skipped = match t.untested_kind() {
        Some(UntestedKind::NothingToTest | UntestedKind::Handle) => 0,
        Some(_) => 1,
        None => t.pairs.iter().filter(|p| p.group == Group::Removed).count(),
    };
    let name = esc(&t.path);
    let _ = writeln!(
        out,
        "  <testsuite name=\"{name}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{:.3}\">",
        cases(t),
        t.seconds
    );
    let _ = writeln!(
        out,
        "    <properties><property name=\"seed\" value=\"{seed}\"/></properties>"
    );
    if let (Some(why), Some(kind)) = (&t.untested, t.untested_kind()) {
        let body = match kind {
            UntestedKind::Missed => format!("<skipped message=\"{}\"/>", esc(why)),
            UntestedKind::NothingToTest | UntestedKind::Handle => {
                format!("<system-out>{}: {}</system-out>", kind.label(), esc(why))
            }
            UntestedKind::Internal => {
                format!("<skipped message=\"{}: {}\"/>", kind.label(), esc(why))
            }
        };
        let _ = writeln!(
            out,
            "    <testcase classname=\"{name}\" name=\"type\">{body}</testcase>"
        );
        out.push_str("  </testsuite>\n");
        return;
    }
    if t.pairs.is_empty() {
        let _ = writeln!(out, "    <testcase classname=\"{name}\" name=\"type\"/>");
    }
    for p in &t.pairs {
        let case = esc(&format!("{} | {}", p.methods[0], p.methods[1]));
        let _ = write!(
            out,
            "    <testcase classname=\"{name}\" name=\"{case}\" time=\"0\">"
        );
        let same = |m: &[String; 2]| {
            (m[0] == p.methods[0] && m[1] == p.methods[1])
                || (m[0] == p.methods[1] && m[1] == p.methods[0])
        };
        for v in t.violations.iter().filter(|v| same(&v.methods)) {
            let mut body = v.message.clone();
            if let Some(at) = &v.location {
                let _ = write!(body, "\nat {at}");
            }
            if let Some(r) = &v.reproducer {
                let _ = write!(body, "\nreproducer: {}", r.display());
            }
            if v.known {
                let _ = write!(
                    out,
                    "<system-out>known {} (in baseline): {}</system-out>",
                    v.kind.as_str(),
                    esc(&body)
                );
            } else {
                let _ = write!(
                    out,
                    "<failure type=\"{}\" message=\"{}\">{}</failure>",
                    v.kind.as_str(),
                    esc(v.message.lines().next().unwrap_or_default()),
                    esc(&body)
                );
            }
        }
        if p.group == Group::Removed {
            out.push_str("<skipped message=\"removed by the static analysis\"/>");
        }
        out.push_str("</testcase>\n");
    }
    out.push_str("  </testsuite>\n");
}

/// Escapes text for XML and drops characters XML 1.0 cannot hold.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    fn check(expect: &[&str]) {
        let xml = render(&sample::report());
        for e in expect {
            assert!(xml.contains(e), "missing {e} in\n{xml}");
        }
    }

    #[test]
    fn each_type_is_a_testsuite_and_each_pair_a_testcase() {
        check(&[
            "<testsuites name=\"covcon\" tests=\"7\" failures=\"1\" errors=\"0\" time=\"12.500\">",
            "<testsuite name=\"bank::Account\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" time=\"4.000\">",
            "<testcase classname=\"bank::Account\" name=\"deposit | balance\" time=\"0\"></testcase>",
        ]);
    }

    #[test]
    fn a_new_violation_is_a_failure_with_escaped_text() {
        check(&["<failure type=\"panic\" message=\"lost update &lt;script&gt;alert(1)&lt;/script&gt; &amp; more\">"]);
    }

    #[test]
    fn a_known_violation_does_not_fail() {
        check(&["<system-out>known deadlock (in baseline): thread 0 in ab, thread 1 in ba"]);
    }

    #[test]
    fn the_counts_match_the_testcases_written() {
        let mut report = sample::report();
        // An untested type may still list its pairs (the budget ran out before its turn).
        report.types[2].pairs = report.types[0].pairs.clone();
        let xml = render(&report);
        assert_eq!(xml.matches("<testcase ").count(), 7, "{xml}");
        assert!(
            xml.contains("<testsuites name=\"covcon\" tests=\"7\""),
            "{xml}"
        );
    }

    #[test]
    fn an_untested_type_is_skipped() {
        check(&["<testcase classname=\"odd::Generic\" name=\"type\"><skipped message=\"no constructor covcon can call\"/></testcase>"]);
    }

    #[test]
    fn a_type_with_nothing_to_test_passes_with_a_note() {
        check(&[
            "<testsuite name=\"odd::Locked\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\"",
            "<testcase classname=\"odd::Locked\" name=\"type\"><system-out>nothing to test: every method pair was removed by the analysis: no two methods can run concurrently</system-out></testcase>",
        ]);
    }

    #[test]
    fn an_internal_type_is_skipped_saying_it_was_not_tested_directly() {
        check(&["<testcase classname=\"odd::inner::Hidden\" name=\"type\"><skipped message=\"internal: not reachable from outside its crate: a `pub` type in a private module, not re-exported (struct `Hidden` is private)\"/></testcase>"]);
    }

    #[test]
    fn control_characters_are_dropped() {
        assert_eq!(esc("a\u{1}b\nc"), "ab\nc");
    }
}
