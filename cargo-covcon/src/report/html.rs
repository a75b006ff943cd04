//! The HTML report: one self-contained file (inline CSS, inline SVG, a few lines of inline
//! script for the copy buttons) that works offline as a CI artifact.
//!
//! Every piece of user-derived text (type and method names, panic messages, values, paths)
//! goes through [`esc`]; nothing from the report is ever placed in a script.

use super::{Kind, Report, TypeReport, UntestedKind, ViolationReport};
use analysis::Group;
use std::fmt::Write;
use std::path::Path;

/// Renders the report. `source` returns the text of a reproducer file, when it can be read,
/// so the copy button copies the test itself.
pub fn render(report: &Report, source: &dyn Fn(&Path) -> Option<String>) -> String {
    let mut body = String::new();
    summary(&mut body, report);
    for (i, t) in report.types.iter().enumerate() {
        type_section(&mut body, i, t, source);
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>cargo covcon report</title>\n<style>{CSS}</style>\n</head>\n<body>\n\
         <h1>cargo covcon report</h1>\n{body}<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )
}

/// Escapes text for HTML element content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn summary(out: &mut String, report: &Report) {
    let total: usize = report.types.iter().map(|t| t.violations.len()).sum();
    let new = report.new_violations();
    let tests: u64 = report.types.iter().map(|t| t.tests_run).sum();
    let verdict = if new > 0 {
        format!(
            "<span class=\"bad\">{total} violation{} ({new} new)</span>",
            plural(total)
        )
    } else if total > 0 {
        format!(
            "<span class=\"warn\">{total} known violation{}</span>",
            plural(total)
        )
    } else {
        "<span class=\"good\">no violations</span>".to_owned()
    };
    let _ = write!(
        out,
        "<section class=\"summary\"><p class=\"verdict\">{verdict}</p>\n<dl>\
         <dt>types</dt><dd>{}</dd><dt>tests</dt><dd>{tests}</dd>\
         <dt>strategy</dt><dd>{}</dd><dt>seed</dt><dd><code>{}</code></dd>\
         <dt>time</dt><dd>{:.1}s (harness build {:.1}s)</dd>",
        report.types.len(),
        esc(&report.strategy),
        report.seed,
        report.elapsed_s,
        report.build_s
    );
    if !report.shards.is_empty() {
        let _ = write!(
            out,
            "<dt>shards</dt><dd>{}</dd>",
            esc(&report.shards.join(", "))
        );
    }
    out.push_str(
        "</dl>\n<table class=\"types\"><thead><tr><th>type</th><th>tests</th>\
                  <th>pairs covered</th><th>violations</th></tr></thead><tbody>\n",
    );
    for (i, t) in report.types.iter().enumerate() {
        let violations = match (t.untested_kind(), t.violations.len()) {
            (Some(kind), _) => untested_label(kind),
            (None, 0) => "<span class=\"good\">0</span>".to_owned(),
            (None, n) => format!("<span class=\"bad\">{n}</span>"),
        };
        let _ = writeln!(
            out,
            "<tr><td><a href=\"#type-{i}\">{}</a></td><td>{}</td><td>{}/{}</td><td>{violations}</td></tr>",
            esc(&t.path),
            t.tests_run,
            t.pairs_covered(),
            t.pairs_worth()
        );
    }
    out.push_str("</tbody></table>\n");
    for d in &report.diagnostics {
        let _ = writeln!(out, "<p class=\"warn\">{}</p>", esc(d));
    }
    out.push_str("</section>\n");
}

/// The summary table's cell for an untested type: only one covcon missed asks for attention.
fn untested_label(kind: UntestedKind) -> String {
    let class = if kind.fails_gate() { "warn" } else { "muted" };
    format!("<span class=\"{class}\">{}</span>", kind.label())
}

fn type_section(
    out: &mut String,
    i: usize,
    t: &TypeReport,
    source: &dyn Fn(&Path) -> Option<String>,
) {
    let _ = writeln!(
        out,
        "<section class=\"type\" id=\"type-{i}\">\n<h2>{}</h2>",
        esc(&t.path)
    );
    if let Some(file) = &t.file {
        let _ = writeln!(
            out,
            "<p class=\"where\">{}:{}</p>",
            esc(&file.display().to_string()),
            t.line
        );
    }
    if let (Some(why), Some(kind)) = (&t.untested, t.untested_kind()) {
        let class = if kind.fails_gate() { "warn" } else { "muted" };
        let mut label = kind.label().to_owned();
        label[..1].make_ascii_uppercase();
        let _ = writeln!(
            out,
            "<p class=\"{class}\">{label}: {}</p>\n</section>",
            esc(why)
        );
        return;
    }
    let _ = writeln!(
        out,
        "<p>{} tests in {:.1}s; {} of {} pairs worth covering ran concurrently.</p>",
        t.tests_run,
        t.seconds,
        t.pairs_covered(),
        t.pairs_worth()
    );
    if t.own_threads {
        out.push_str(
            "<p class=\"muted\">Runs threads of its own: results compared only where fast and \
             slow sequential runs of the same calls agree.</p>\n",
        );
    }
    for mut note in t.notes() {
        note[..1].make_ascii_uppercase();
        let _ = writeln!(out, "<p class=\"muted\">{}.</p>", esc(&note));
    }
    for (j, v) in t.violations.iter().enumerate() {
        violation(out, &format!("{i}-{j}"), t, v, source);
    }
    method_list(
        out,
        "Results not compared (answers approximate by the type's contract)",
        t.approximate.iter().map(|a| (&a.method, a.why.to_string())),
    );
    method_list(
        out,
        "Failures on a held lock not judged (the type's contract answers so under contention)",
        t.contended.iter().map(|c| (&c.method, c.why())),
    );
    if !t.pairs.is_empty() {
        matrix(out, t);
        reasons(out, t);
    }
    if t.coverage.len() > 1 {
        out.push_str("<h3>Interleaving coverage over time</h3>\n");
        chart(out, t);
    }
    if !t.skipped.is_empty() {
        out.push_str("<details><summary>Skipped</summary><ul>");
        for s in &t.skipped {
            let _ = write!(out, "<li>{}</li>", esc(s));
        }
        out.push_str("</ul></details>\n");
    }
    out.push_str("</section>\n");
}

fn violation(
    out: &mut String,
    id: &str,
    t: &TypeReport,
    v: &ViolationReport,
    source: &dyn Fn(&Path) -> Option<String>,
) {
    let class = if v.known || v.unconfirmed() {
        "violation known"
    } else {
        "violation"
    };
    let known = if v.known {
        " <span class=\"tag\">in baseline</span>"
    } else if v.unconfirmed() {
        " <span class=\"tag\">unconfirmed</span>"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "<div class=\"{class}\"><h3>{} <code>{}</code> ‖ <code>{}</code>{known}</h3>\
         <p class=\"found\">found after {} test{} ({:.1}s)</p>",
        v.kind.as_str(),
        esc(&v.methods[0]),
        esc(&v.methods[1]),
        v.tests_until_found,
        plural(v.tests_until_found as usize),
        v.seconds_until_found
    );
    let outcome = match v.kind {
        Kind::Panic => "panicked",
        Kind::Deadlock => "deadlocked",
        Kind::Crash => "crashed",
        Kind::WrongResult => "returned results no sequential order gives",
    };
    let at = v
        .location
        .as_ref()
        .map(|l| format!(" at {}", esc(l)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<p>{outcome}{at}:</p><pre class=\"message\">{}</pre>",
        esc(&v.message)
    );
    let evidence = v.evidence();
    if !evidence.is_empty() {
        let _ = writeln!(out, "<p class=\"found\">{}</p>", evidence.join("; "));
    }
    if let Some(test) = &v.test {
        let layout = generator::display::layout(test, &t.reading());
        let lines = |ls: Vec<&str>| ls.iter().map(|l| esc(l)).collect::<Vec<_>>().join("\n");
        let _ = writeln!(
            out,
            "<table class=\"test\"><tr><th colspan=\"2\">prefix (one thread)</th></tr>\
             <tr><td colspan=\"2\"><pre>{}</pre></td></tr>\
             <tr><th>thread 0</th><th>thread 1</th></tr>\
             <tr><td><pre>{}</pre></td><td><pre>{}</pre></td></tr></table>",
            lines(layout.setup.iter().map(String::as_str).collect()),
            lines(layout.column(0)),
            lines(layout.column(1))
        );
    }
    if let Some(path) = &v.reproducer {
        let shown = path.display().to_string();
        let code = source(path).unwrap_or_else(|| shown.clone());
        let _ = writeln!(
            out,
            "<p>Reproducer: <code>{}</code> <button class=\"copy\" data-target=\"repro-{id}\">Copy</button></p>\
             <details><summary>test</summary><pre id=\"repro-{id}\">{}</pre></details>",
            esc(&shown),
            esc(&code)
        );
    }
    if let Some(path) = &v.replay {
        let _ = writeln!(
            out,
            "<p>Replay: <code>cargo covcon replay {}</code></p>",
            esc(&path.display().to_string())
        );
    }
    let reasons: Vec<String> = t
        .pairs
        .iter()
        .filter(|p| {
            (p.methods[0] == v.methods[0] && p.methods[1] == v.methods[1])
                || (p.methods[0] == v.methods[1] && p.methods[1] == v.methods[0])
        })
        .flat_map(|p| p.reasons.iter().map(|r| esc(r)))
        .collect();
    if !reasons.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"found\">Static analysis: {}</p>",
            reasons.join("; ")
        );
    }
    out.push_str("</div>\n");
}

/// A list of methods, each with why, under `title` (plain text, not escaped); nothing when
/// there is none.
fn method_list<'a>(
    out: &mut String,
    title: &str,
    methods: impl Iterator<Item = (&'a String, String)>,
) {
    let items: String = methods
        .map(|(method, why)| format!("<li><code>{}</code>: {}</li>", esc(method), esc(&why)))
        .collect();
    if !items.is_empty() {
        let _ = writeln!(out, "<p>{title}:</p><ul class=\"approximate\">{items}</ul>");
    }
}

/// The pair matrix: one cell per unordered pair, shaded by covered/tried, framed by group.
fn matrix(out: &mut String, t: &TypeReport) {
    let mut methods: Vec<&str> = Vec::new();
    for p in &t.pairs {
        for m in &p.methods {
            if !methods.contains(&m.as_str()) {
                methods.push(m);
            }
        }
    }
    out.push_str("<h3>Pairs: covered / tried</h3>\n<div class=\"scroll\"><table class=\"matrix\"><tr><th></th>");
    for m in &methods {
        let _ = write!(out, "<th class=\"col\">{}</th>", esc(m));
    }
    out.push_str("</tr>\n");
    for (r, row) in methods.iter().enumerate() {
        let _ = write!(out, "<tr><th>{}</th>", esc(row));
        for (c, col) in methods.iter().enumerate() {
            let pair = t.pairs.iter().find(|p| {
                (p.methods[0] == *row && p.methods[1] == *col)
                    || (p.methods[0] == *col && p.methods[1] == *row)
            });
            match pair {
                Some(p) if c >= r => {
                    // Tests built for other pairs can cover this one too, so covered may exceed tried.
                    let ratio = if p.tried == 0 {
                        0.0
                    } else {
                        (p.covered as f64 / p.tried as f64).min(1.0)
                    };
                    let group = group_name(p.group);
                    let style = if p.group == Group::Removed {
                        String::new()
                    } else {
                        format!(
                            " style=\"background: rgba(33, 113, 181, {:.2})\"",
                            0.08 + 0.8 * ratio
                        )
                    };
                    // A pair a violation was found on is marked, in the cell and its title.
                    let found = t.violations.iter().any(|v| {
                        let mut a = [v.methods[0].as_str(), v.methods[1].as_str()];
                        let mut b = [p.methods[0].as_str(), p.methods[1].as_str()];
                        a.sort_unstable();
                        b.sort_unstable();
                        a == b
                    });
                    let complete = p
                        .explored
                        .as_ref()
                        .is_some_and(|e| e.end == oracle::ExplorationEnd::Complete);
                    let (class, mark, says) = if found {
                        (" violation", " ✗", ", a violation")
                    } else if complete {
                        ("", " ✓", "")
                    } else {
                        ("", "", "")
                    };
                    let explored = p
                        .explored
                        .as_ref()
                        .map(|e| format!("; {}", e.describe()))
                        .unwrap_or_default();
                    let _ = write!(
                        out,
                        "<td class=\"{group}{class}\"{style} title=\"{} ‖ {}: {group}, overlapped in {} runs, {} tests aimed at it{says}{}\">{}/{}{mark}</td>",
                        esc(&p.methods[0]),
                        esc(&p.methods[1]),
                        p.covered,
                        p.tried,
                        esc(&explored),
                        p.covered,
                        p.tried
                    );
                }
                _ => out.push_str("<td class=\"none\"></td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str(
        "</table></div>\n<p class=\"legend\"><span class=\"key high\">high</span> high-priority group \
         <span class=\"key low\">low</span> low group <span class=\"key removed\">removed</span> \
         not worth running together. Each cell: runs (of any test) in which the two methods \
         overlapped / tests aimed at the pair (a test aimed at another pair can overlap this one \
         too, so the first can be larger); darker = overlapped in a larger share; ✓ the pair's smallest \
         test (one call of each) passed under every schedule with at most two preemptions; ✗ a \
         violation was found on the pair</p>\n",
    );
}

fn reasons(out: &mut String, t: &TypeReport) {
    let high: Vec<_> = t.pairs.iter().filter(|p| p.group == Group::High).collect();
    if high.is_empty() {
        return;
    }
    out.push_str("<h3>Why these pairs are high priority</h3>\n<ul class=\"reasons\">");
    for p in high {
        let why = if p.reasons.is_empty() {
            "(no reason recorded)".to_owned()
        } else {
            p.reasons
                .iter()
                .map(|r| esc(r))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let _ = write!(
            out,
            "<li><code>{}</code> ‖ <code>{}</code>: {why}</li>",
            esc(&p.methods[0]),
            esc(&p.methods[1])
        );
    }
    out.push_str("</ul>\n");
}

/// Covered pairs against tests run, as in CovCon's Figure 3.
fn chart(out: &mut String, t: &TypeReport) {
    const W: f64 = 560.0;
    const H: f64 = 180.0;
    const LEFT: f64 = 44.0;
    const BOTTOM: f64 = 28.0;
    let max_x = t.coverage.iter().map(|p| p.tests).max().unwrap_or(1).max(1) as f64;
    let max_y = (t.pairs_worth() as u64)
        .max(t.coverage.iter().map(|p| p.covered).max().unwrap_or(0))
        .max(1) as f64;
    let x = |v: f64| LEFT + v / max_x * (W - LEFT - 10.0);
    let y = |v: f64| 10.0 + (1.0 - v / max_y) * (H - BOTTOM - 10.0);
    let points: Vec<String> = t
        .coverage
        .iter()
        .map(|p| format!("{:.1},{:.1}", x(p.tests as f64), y(p.covered as f64)))
        .collect();
    let _ = writeln!(
        out,
        "<svg class=\"chart\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" \
         aria-label=\"covered pairs over tests\">\
         <line x1=\"{LEFT}\" y1=\"{y0:.1}\" x2=\"{xe:.1}\" y2=\"{y0:.1}\" class=\"axis\"/>\
         <line x1=\"{LEFT}\" y1=\"10\" x2=\"{LEFT}\" y2=\"{y0:.1}\" class=\"axis\"/>\
         <line x1=\"{LEFT}\" y1=\"{ytop:.1}\" x2=\"{xe:.1}\" y2=\"{ytop:.1}\" class=\"goal\"/>\
         <text x=\"{tx:.1}\" y=\"{ty:.1}\" class=\"label\">{max_y} pairs worth covering</text>\
         <polyline points=\"{}\" class=\"line\"/>\
         <text x=\"{LEFT}\" y=\"{lx:.1}\" class=\"label\">0</text>\
         <text x=\"{xe:.1}\" y=\"{lx:.1}\" class=\"label end\">{max_x} tests</text>\
         <text x=\"4\" y=\"{ly:.1}\" class=\"label\">pairs</text></svg>",
        points.join(" "),
        y0 = y(0.0),
        xe = x(max_x),
        ytop = y(max_y),
        tx = LEFT + 6.0,
        ty = y(max_y) + 12.0,
        lx = H - 8.0,
        ly = H / 2.0,
    );
}

fn group_name(group: Group) -> &'static str {
    match group {
        Group::High => "high",
        Group::Low => "low",
        Group::Removed => "removed",
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

const CSS: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#1b1f24;line-height:1.4}
h1{font-size:1.6em}h2{border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:2em}h3{font-size:1.05em;margin:1.2em 0 .4em}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
pre{background:#f6f8fa;padding:.5em .7em;margin:0;overflow-x:auto;white-space:pre-wrap}
.bad{color:#cf222e;font-weight:600}.good{color:#1a7f37;font-weight:600}.warn{color:#9a6700}.muted{color:#57606a}
.verdict{font-size:1.3em}
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{color:#57606a}dd{margin:0}
table{border-collapse:collapse}
table.types td,table.types th{padding:.25em .8em;border-bottom:1px solid #d0d7de;text-align:left}
.violation{border-left:4px solid #cf222e;padding:.3em 1em;margin:1em 0;background:#fff8f8}
.violation.known{border-left-color:#bf8700;background:#fffbeb}
.tag{font-size:.75em;background:#bf8700;color:#fff;border-radius:3px;padding:0 .4em}
pre.message{background:#ffebe9}
table.test{width:100%;table-layout:fixed;margin:.5em 0}table.test th{text-align:left;font-weight:500;color:#57606a;padding:.3em 0}
table.test td{vertical-align:top;padding:0 .3em .3em 0}
table.matrix th{font-weight:500;font-family:ui-monospace,Menlo,monospace;font-size:.85em;padding:.2em .5em;text-align:right}
table.matrix th.col{text-align:center;vertical-align:bottom}
table.matrix td{width:4.5em;height:2.2em;text-align:center;font-size:.8em;border:1px solid #fff}
table.matrix td.violation{outline:2px solid #cf222e;outline-offset:-2px;font-weight:600}
td.high{outline:2px solid #cf222e;outline-offset:-3px}
td.removed{background:repeating-linear-gradient(45deg,#eee,#eee 4px,#fff 4px,#fff 8px);color:#8c959f}
td.none{background:transparent}
.key{display:inline-block;padding:0 .5em;margin:0 .3em 0 1em;font-size:.85em}
.key.high{outline:2px solid #cf222e;outline-offset:-2px}.key.low{background:rgba(33,113,181,.4)}
.key.removed{background:repeating-linear-gradient(45deg,#eee,#eee 4px,#fff 4px,#fff 8px)}
.legend{color:#57606a;font-size:.85em}
.scroll{overflow-x:auto;max-width:100%}
svg.chart .axis{stroke:#57606a}svg.chart .goal{stroke:#8c959f;stroke-dasharray:4 3}
svg.chart .line{fill:none;stroke:#2171b5;stroke-width:2}
svg.chart .label{font-size:11px;fill:#57606a}svg.chart .end{text-anchor:end}
button.copy{font-size:.8em;cursor:pointer}
.where,.found{color:#57606a;margin:.2em 0}
";

const SCRIPT: &str = "
document.querySelectorAll('button.copy').forEach(function (b) {
  b.addEventListener('click', function () {
    var node = document.getElementById(b.dataset.target);
    var done = function () { b.textContent = 'Copied'; };
    var fallback = function () {
      node.parentElement.open = true;
      var range = document.createRange(); range.selectNodeContents(node);
      var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
      try { document.execCommand('copy'); done(); } catch (e) { b.textContent = 'Press Ctrl+C'; }
    };
    if (navigator.clipboard) { navigator.clipboard.writeText(node.textContent).then(done, fallback); }
    else { fallback(); }
  });
});
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    fn check(expect_present: &[&str], expect_absent: &[&str]) {
        let html = render(&sample::report(), &|_| {
            Some("#[test]\nfn repro() { assert!(1 < 2) }".into())
        });
        for e in expect_present {
            assert!(html.contains(e), "missing {e}");
        }
        for e in expect_absent {
            assert!(!html.contains(e), "unexpected {e}");
        }
    }

    #[test]
    fn a_panic_message_with_a_script_tag_renders_as_text() {
        check(
            &["lost update &lt;script&gt;alert(1)&lt;/script&gt; &amp; more"],
            &["<script>alert(1)"],
        );
    }

    #[test]
    fn the_only_script_is_the_copy_button_handler() {
        let html = render(&sample::report(), &|_| None);
        assert_eq!(html.matches("<script").count(), 1);
    }

    #[test]
    fn arguments_and_reproducers_are_escaped_too() {
        check(
            &["c0.check(&quot;&lt;b&gt;&quot;)", "assert!(1 &lt; 2)"],
            &["\"<b>\""],
        );
    }

    #[test]
    fn the_report_needs_nothing_from_the_network() {
        check(
            &["<svg class=\"chart\""],
            &["http://", "https://", "<link", "src="],
        );
    }

    #[test]
    fn the_matrix_marks_groups_and_shows_covered_over_tried() {
        check(
            &[
                "<td class=\"high violation\" style=\"background: rgba(33, 113, 181, 0.84)\" title=\"deposit ‖ deposit: high, overlapped in 380 runs, 400 tests aimed at it, a violation\">380/400 ✗</td>",
                "<td class=\"removed\" title=\"balance ‖ balance: removed, overlapped in 0 runs, 0 tests aimed at it\">0/0</td>",
                "<code>deposit</code> ‖ <code>deposit</code>: deposit reads `balance` under one lock and writes it under another",
            ],
            &[],
        );
    }

    #[test]
    fn methods_whose_results_were_not_compared_are_listed_with_why() {
        check(
            &["<li><code>balance</code>: its doc says &quot;The balance &lt;may&gt; be stale while others deposit.&quot;</li>"],
            &["<may>"],
        );
    }

    #[test]
    fn known_violations_and_untested_types_are_marked() {
        check(
            &[
                "<span class=\"tag\">in baseline</span>",
                "<p class=\"warn\">Not tested: no constructor covcon can call</p>",
            ],
            &[],
        );
    }

    #[test]
    fn types_with_nothing_to_test_or_internal_ones_are_not_warnings() {
        check(
            &[
                "<span class=\"muted\">nothing to test</span>",
                "<p class=\"muted\">Nothing to test: every method pair was removed",
                "<span class=\"muted\">internal</span>",
                "<p class=\"muted\">Internal: not reachable from outside its crate: a `pub` type in a private module, not re-exported (struct `Hidden` is private)</p>",
            ],
            &["<p class=\"warn\">Nothing", "<p class=\"warn\">Internal"],
        );
    }
}
