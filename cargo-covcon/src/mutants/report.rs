//! Showing `cargo covcon mutants`' progress and its report: a bar (or a line) per mutant
//! judged, the terminal summary, the files of `mutants.out/` and its HTML page. Pure
//! renderers from a [`MutantsReport`], besides the bar and the files.

use super::model::{MutantsReport, Outcome, Score, Status};
use crate::options::Console;
use crate::report::html::esc;
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use oracle::Mutant;
use std::fmt::Write as _;
use std::path::Path;

/// Keeps the previous output as `<out>.old` and starts an empty one.
pub(super) fn rotate(out: &Path) -> Result<()> {
    if out.exists() {
        let old = out.with_extension("out.old");
        if old.exists() {
            std::fs::remove_dir_all(&old).with_context(|| format!("removing {}", old.display()))?;
        }
        std::fs::rename(out, &old).with_context(|| format!("moving {}", out.display()))?;
    }
    std::fs::create_dir_all(out.join("diff")).with_context(|| format!("creating {}", out.display()))
}

/// A bar over the mutants on a terminal, a line per mutant otherwise, nothing with `-q`.
pub(super) struct Progress {
    bar: Option<ProgressBar>,
    plain: bool,
    total: usize,
    done: std::cell::Cell<usize>,
}

impl Progress {
    pub(super) fn new(console: &Console, total: usize) -> Progress {
        let bar = (!console.quiet && console.stderr_is_terminal).then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        Progress {
            plain: !console.quiet && bar.is_none(),
            bar,
            total,
            done: std::cell::Cell::new(0),
        }
    }

    pub(super) fn start(&self, m: &Mutant) {
        if let Some(bar) = &self.bar {
            bar.set_message(m.name.clone());
        }
    }

    pub(super) fn done(&self, o: &Outcome) {
        self.done.set(self.done.get() + 1);
        let line = format!(
            "{:<8} {} ({:.1}s)",
            o.outcome.as_str(),
            o.mutant.name,
            o.seconds
        );
        if let Some(bar) = &self.bar {
            bar.inc(1);
            if o.outcome == Status::Missed {
                bar.println(line);
            }
        } else if self.plain {
            eprintln!("mutants: [{}/{}] {line}", self.done.get(), self.total);
        }
    }

    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

pub(super) fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// The terminal summary: missed mutants, the score per operator and per type, the total.
pub fn terminal(report: &MutantsReport, verbose: bool) -> String {
    let mut out = String::new();
    // What the unmutated code showed is a violation like any other: by design (a method
    // documented as approximate that the analysis did not read so) or a bug of its own, as
    // concurrent-queue 2.5.0's `close` lost to a racing `force_push` was.
    for b in &report.baseline {
        if let Some(shown) = &b.fallback {
            let _ = writeln!(
                out,
                "baseline under the results oracle failed: {}: {shown}; its mutants were judged under the panic oracle",
                b.of
            );
        }
        if !b.left_out.is_empty() {
            let _ = writeln!(
                out,
                "baseline under the results oracle: {}: {}; its mutants were judged with {} left out of the comparison",
                b.of,
                b.left_out_because.as_deref().unwrap_or_default(),
                b.left_out.join(", ")
            );
        }
        if b.fallback.is_some() || !b.left_out.is_empty() {
            let _ = writeln!(
                out,
                "  the unmutated {} answers what no order of its calls gives: a bug of its own unless a method is approximate by design; `cargo covcon --oracle results --type {}` reports it with a reproducer",
                b.of, b.of
            );
        }
    }
    for b in report.baseline.iter().filter(|b| !b.passed) {
        let _ = writeln!(
            out,
            "baseline failed: {}: {}",
            b.of,
            b.failure.as_deref().unwrap_or_default()
        );
    }
    let missed: Vec<&Outcome> = report
        .outcomes
        .iter()
        .filter(|o| o.outcome == Status::Missed)
        .collect();
    if !missed.is_empty() {
        let _ = writeln!(out, "missed:");
        for o in &missed {
            let _ = writeln!(out, "  {}", o.mutant.name);
            if verbose {
                for line in o.mutant.diff.lines() {
                    let _ = writeln!(out, "    {line}");
                }
            }
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{}", score_table("operator", &report.operators));
    let _ = writeln!(out, "{}", score_table("type", &report.types));
    let t = &report.total;
    let _ = writeln!(
        out,
        "{} mutants in {:.0}s: {} caught, {} missed, {} timeout, {} unviable, {} skipped, {} equivalent; score {}{}",
        report.outcomes.len(),
        report.elapsed_s,
        t.caught,
        t.missed,
        t.timeout,
        t.unviable,
        t.skipped,
        t.equivalent,
        t.score.map_or_else(|| "—".to_string(), |s| format!("{s:.1}%")),
        if report.interrupted { " (interrupted)" } else { "" }
    );
    if let Some(c) = &report.compare {
        out.push('\n');
        out.push_str(&c.terminal(&report.outcomes));
    }
    out
}

fn score_table(what: &str, scores: &[Score]) -> String {
    let width = scores
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(0)
        .max(what.len());
    let mut out =
        format!("{what:<width$}  caught  missed  timeout  unviable  skipped  equivalent  score\n");
    for s in scores {
        let _ = writeln!(
            out,
            "{:<width$}  {:>6}  {:>6}  {:>7}  {:>8}  {:>7}  {:>10}  {:>5}",
            s.name,
            s.caught,
            s.missed,
            s.timeout,
            s.unviable,
            s.skipped,
            s.equivalent,
            s.score
                .map_or_else(|| "—".to_string(), |v| format!("{v:.0}%"))
        );
    }
    out
}

pub(super) fn write_outputs(out: &Path, report: &MutantsReport) -> Result<()> {
    let write = |name: &str, text: String| {
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    let mutants: Vec<&Mutant> = report.outcomes.iter().map(|o| &o.mutant).collect();
    write("mutants.json", serde_json::to_string_pretty(&mutants)?)?;
    write("outcomes.json", serde_json::to_string_pretty(report)?)?;
    for status in [
        Status::Caught,
        Status::Missed,
        Status::Timeout,
        Status::Unviable,
        Status::Skipped,
        Status::Equivalent,
    ] {
        let mut text = String::new();
        for o in report.outcomes.iter().filter(|o| o.outcome == status) {
            let _ = writeln!(text, "{}", o.mutant.name);
            if let Some(through) = &o.through {
                let _ = writeln!(text, "    judged through {}", through.join(", "));
            }
            match status {
                Status::Caught => {
                    if let Some(c) = &o.caught_by {
                        let [a, b] = &c.methods;
                        let _ = writeln!(
                            text,
                            "    {} in {a} ∥ {b} after {} tests ({:.2}s): {}",
                            c.kind, c.tests_until_found, c.seconds_until_found, c.message
                        );
                    }
                }
                Status::Missed | Status::Timeout => {
                    text.push_str(&o.mutant.diff);
                    text.push('\n');
                }
                Status::Unviable | Status::Skipped | Status::Equivalent => {
                    let reason = o.reason.as_deref().unwrap_or_default();
                    let _ = writeln!(text, "    {}", first_line(reason));
                }
            }
        }
        write(&format!("{}.txt", status.as_str()), text)?;
    }
    for o in &report.outcomes {
        write(&format!("diff/{}.diff", o.mutant.id), o.mutant.diff.clone())?;
    }
    if let Some(c) = &report.compare {
        write("compare.txt", c.text(&report.outcomes))?;
    }
    write("report.html", html(report))
}

/// The HTML report: the score, per operator and per type, and every mutant with its diff.
pub fn html(report: &MutantsReport) -> String {
    let mut body = String::new();
    let t = &report.total;
    let _ = writeln!(
        body,
        "<p class=\"verdict\">Mutation score <b>{}</b>: {} caught, {} missed, {} timeout of {} judged; {} unviable, {} skipped, {} equivalent. Judge: <code>{}</code>, {:.0}s per mutant at most, seed {}; {:.0}s in all{}.</p>",
        t.score.map_or_else(|| "—".to_string(), |s| format!("{s:.1}%")),
        t.caught,
        t.missed,
        t.timeout,
        t.caught + t.missed + t.timeout,
        t.unviable,
        t.skipped,
        t.equivalent,
        esc(&report.judge),
        report.budget_s,
        report.seed,
        report.elapsed_s,
        if report.interrupted { ", interrupted" } else { "" }
    );
    for b in &report.baseline {
        if let Some(shown) = &b.fallback {
            let _ = writeln!(
                body,
                "<p class=\"muted\"><code>{}</code> fails unmutated under the results oracle ({}): its mutants were judged under the panic oracle.</p>",
                esc(&b.of),
                esc(shown)
            );
        }
        if !b.left_out.is_empty() {
            let _ = writeln!(
                body,
                "<p class=\"muted\"><code>{}</code> unmutated gave answers no order gives ({}): its mutants were judged under the results oracle with <code>{}</code> left out of the comparison.</p>",
                esc(&b.of),
                esc(b.left_out_because.as_deref().unwrap_or_default()),
                esc(&b.left_out.join(", "))
            );
        }
    }
    if let Some(c) = &report.compare {
        body.push_str(&c.html());
    }
    for (title, scores) in [
        ("By operator", &report.operators),
        ("By type", &report.types),
    ] {
        let _ = writeln!(body, "<h2>{title}</h2>\n<table class=\"types\"><tr><th></th><th>caught</th><th>missed</th><th>timeout</th><th>unviable</th><th>skipped</th><th>equivalent</th><th>score</th></tr>");
        for s in scores {
            let _ = writeln!(
                body,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&s.name),
                s.caught,
                s.missed,
                s.timeout,
                s.unviable,
                s.skipped,
                s.equivalent,
                s.score.map_or_else(|| "—".to_string(), |v| format!("{v:.0}%"))
            );
        }
        body.push_str("</table>\n");
    }
    body.push_str("<h2>Mutants</h2>\n");
    for o in &report.outcomes {
        let class = match o.outcome {
            Status::Caught | Status::Timeout => "good",
            Status::Missed => "bad",
            Status::Unviable | Status::Skipped | Status::Equivalent => "muted",
        };
        let _ = writeln!(
            body,
            "<h3><span class=\"{class}\">{}</span> {}</h3>",
            o.outcome.as_str(),
            esc(&o.mutant.name)
        );
        if let Some(c) = &o.caught_by {
            let [a, b] = &c.methods;
            let _ = writeln!(
                body,
                "<p class=\"found\">{} in <code>{}</code> ∥ <code>{}</code> after {} tests ({:.2}s): {}</p>",
                esc(&c.kind),
                esc(a),
                esc(b),
                c.tests_until_found,
                c.seconds_until_found,
                esc(&c.message)
            );
        }
        if let Some(through) = &o.through {
            let _ = writeln!(
                body,
                "<p class=\"muted\">judged through {}</p>",
                esc(&through.join(", "))
            );
        }
        if let Some(reason) = &o.reason {
            let _ = writeln!(body, "<p class=\"muted\">{}</p>", esc(&first_line(reason)));
        }
        let _ = writeln!(body, "<pre>{}</pre>", esc(&o.mutant.diff));
    }
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>cargo covcon mutants</title>\n<style>{CSS}</style></head>\n<body>\n<h1>cargo covcon mutants</h1>\n{body}</body>\n</html>\n"
    )
}

const CSS: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#1b1f24;line-height:1.4}
h2{border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:2em}h3{font-size:1em;font-weight:500;margin:1.2em 0 .3em}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
pre{background:#f6f8fa;padding:.5em .7em;margin:0;overflow-x:auto;white-space:pre-wrap}
.bad{color:#cf222e;font-weight:600}.good{color:#1a7f37;font-weight:600}.muted{color:#57606a}.found{color:#57606a;margin:.2em 0}
.verdict{font-size:1.2em}
table.types td,table.types th{padding:.25em .8em;border-bottom:1px solid #d0d7de;text-align:left}
";
