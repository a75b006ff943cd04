//! The readable terminal summary of a [`Model`], printed by `cargo covcon analyze`.

use crate::model::*;
use std::fmt::Write;

/// How many split points per type the summary lists.
const TOP_SPLIT_POINTS: usize = 5;

/// Renders the model for the terminal: per type its constructors, methods with their support
/// status, pairs by group with reasons, the best split points; then the diagnostics.
pub fn summary(model: &Model) -> String {
    let mut out = String::new();
    if model.types.is_empty() {
        out.push_str("No thread-safe types found.\n");
    }
    for ty in &model.types {
        type_summary(&mut out, ty);
    }
    if !model.diagnostics.is_empty() {
        let _ = writeln!(out, "Diagnostics ({}):", model.diagnostics.len());
        for d in &model.diagnostics {
            let at = d
                .span
                .as_ref()
                .map(|s| format!(" ({}:{})", s.file.display(), s.line))
                .unwrap_or_default();
            let sev = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "note",
            };
            let _ = writeln!(out, "  {sev}: {}{at}", d.message);
        }
    }
    out
}

fn type_summary(out: &mut String, ty: &TypeModel) {
    let status = match &ty.reason {
        None => String::new(),
        Some(r) => format!(" [not supported: {r}]"),
    };
    let _ = writeln!(
        out,
        "{} ({}:{}){status}",
        ty.path,
        ty.span.file.display(),
        ty.span.line
    );
    let _ = writeln!(out, "  thread-safe because: {}", ty.sync_reasons.join(", "));
    let _ = writeln!(out, "  constructors:");
    if ty.constructors.is_empty() {
        let _ = writeln!(out, "    (none)");
    }
    for c in &ty.constructors {
        let chain: String = c
            .chain
            .iter()
            .map(|cc| format!(".{}({})", cc.name, param_list(&cc.params)))
            .collect();
        let _ = writeln!(
            out,
            "    {}({}){chain}{}",
            c.name,
            param_list(&c.params),
            support(&c.reason)
        );
    }
    let _ = writeln!(out, "  methods:");
    for m in &ty.methods {
        let ret = m
            .returns
            .as_ref()
            .map(|r| format!(" -> {r}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    {}({}){ret}{}",
            m.name,
            param_list(&m.params),
            support(&m.reason)
        );
        if let Some(approximation) = &m.approximate {
            let _ = writeln!(
                out,
                "      approximate answer, results not compared: {approximation}"
            );
        }
    }
    for group in [Group::High, Group::Low, Group::Removed] {
        let pairs: Vec<&Pair> = ty.pairs.iter().filter(|p| p.group == group).collect();
        if pairs.is_empty() {
            continue;
        }
        let name = match group {
            Group::High => "high",
            Group::Low => "low",
            Group::Removed => "removed",
        };
        let _ = writeln!(out, "  pairs, {name} ({}):", pairs.len());
        for p in pairs {
            let _ = writeln!(out, "    ({}, {})", p.methods[0], p.methods[1]);
            if group != Group::Low {
                for r in &p.reasons {
                    let _ = writeln!(out, "      - {r}");
                }
            }
        }
    }
    if !ty.split_points.is_empty() {
        let _ = writeln!(
            out,
            "  split points (best {} of {}):",
            TOP_SPLIT_POINTS.min(ty.split_points.len()),
            ty.split_points.len()
        );
        for s in ty.split_points.iter().take(TOP_SPLIT_POINTS) {
            let cond = if s.cond_syn { ", condSyn" } else { "" };
            let _ = writeln!(
                out,
                "    {} line {}: numSV {}{cond} — {}",
                s.method, s.at.line, s.num_sv, s.description
            );
        }
    }
    out.push('\n');
}

fn param_list(params: &[Param]) -> String {
    params
        .iter()
        .map(|p| format!("{}: {}", p.name, p.ty))
        .collect::<Vec<_>>()
        .join(", ")
}

fn support(reason: &Option<Reason>) -> String {
    match reason {
        None => String::new(),
        Some(r) => format!("  [unsupported: {r}]"),
    }
}
