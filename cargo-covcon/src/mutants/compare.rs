//! `cargo covcon mutants --compare CMD`: the same mutants judged by covcon's campaign and by
//! the crate's own tests (`CMD`, as `--test-cmd` runs it), and the table a maintainer reads:
//! caught by covcon only, by the tests only, by both, by neither.

use super::model::{Baseline, Outcome, Status};
use crate::report::html::esc;
use serde::Serialize;
use std::fmt::Write as _;

/// The command's judgement beside covcon's, by mutant id.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The command.
    pub judge: String,
    pub baseline: Vec<Baseline>,
    /// The command's outcomes (covcon's are the report's own).
    pub outcomes: Vec<Outcome>,
    /// Mutants judged by both (caught, missed or timed out under each), by who caught them.
    pub covcon_only: Vec<u32>,
    pub command_only: Vec<u32>,
    pub both: Vec<u32>,
    pub neither: Vec<u32>,
    /// Mutants one judge judged and the other did not (skipped, a campaign stopped).
    pub one_judged: Vec<u32>,
}

/// Caught (a timeout counts as caught, as in the score), missed, or not judged.
fn caught(status: Status) -> Option<bool> {
    match status {
        Status::Caught | Status::Timeout => Some(true),
        Status::Missed => Some(false),
        Status::Unviable | Status::Skipped | Status::Equivalent => None,
    }
}

impl Comparison {
    pub fn new(
        judge: String,
        baseline: Vec<Baseline>,
        covcon: &[Outcome],
        command: Vec<Outcome>,
    ) -> Comparison {
        let mut c = Comparison {
            judge,
            baseline,
            outcomes: Vec::new(),
            covcon_only: Vec::new(),
            command_only: Vec::new(),
            both: Vec::new(),
            neither: Vec::new(),
            one_judged: Vec::new(),
        };
        for ours in covcon {
            let id = ours.mutant.id;
            let theirs = command.iter().find(|o| o.mutant.id == id);
            match (caught(ours.outcome), theirs.and_then(|o| caught(o.outcome))) {
                (Some(true), Some(true)) => c.both.push(id),
                (Some(true), Some(false)) => c.covcon_only.push(id),
                (Some(false), Some(true)) => c.command_only.push(id),
                (Some(false), Some(false)) => c.neither.push(id),
                (None, None) => {}
                _ => c.one_judged.push(id),
            }
        }
        c.outcomes = command;
        c
    }

    /// Who caught how many, then the names of the mutants in each group but `both`.
    pub fn terminal(&self, covcon: &[Outcome]) -> String {
        let judged = self.both.len() + self.covcon_only.len() + self.command_only.len();
        let judged = judged + self.neither.len();
        let cmd = format!("`{}`", self.judge);
        let mut out = format!(
            "compare: covcon and {cmd} on the same mutants, {judged} judged by both{}\n",
            if self.one_judged.is_empty() {
                String::new()
            } else {
                format!(" ({} by one only)", self.one_judged.len())
            }
        );
        let only = format!("caught by {cmd} only");
        let rows = [
            ("caught by both", &self.both),
            ("caught by covcon only", &self.covcon_only),
            (only.as_str(), &self.command_only),
            ("caught by neither", &self.neither),
        ];
        let width = rows.iter().map(|(t, _)| t.len()).max().unwrap_or(0);
        for (title, ids) in rows {
            let _ = writeln!(out, "  {title:<width$}  {:>4}", ids.len());
        }
        let name = |id: &u32| {
            covcon
                .iter()
                .find(|o| o.mutant.id == *id)
                .map_or_else(|| id.to_string(), |o| o.mutant.name.clone())
        };
        for (title, ids) in &rows[1..] {
            if !ids.is_empty() {
                let _ = writeln!(out, "{title}:");
                for id in ids.iter() {
                    let _ = writeln!(out, "  {}", name(id));
                }
            }
        }
        out
    }

    /// `compare.txt`: each group with its mutants' names.
    pub fn text(&self, covcon: &[Outcome]) -> String {
        let mut out = self.terminal(covcon);
        if !self.both.is_empty() {
            let _ = writeln!(out, "caught by both:");
            for o in covcon.iter().filter(|o| self.both.contains(&o.mutant.id)) {
                let _ = writeln!(out, "  {}", o.mutant.name);
            }
        }
        out
    }

    /// The table, for the HTML report.
    pub fn html(&self) -> String {
        let cmd = esc(&self.judge);
        format!(
            "<h2>covcon and <code>{cmd}</code></h2>\n<table class=\"types\"><tr><th></th><th>caught by <code>{cmd}</code></th><th>missed by <code>{cmd}</code></th></tr>\n<tr><td>caught by covcon</td><td>{}</td><td>{}</td></tr>\n<tr><td>missed by covcon</td><td>{}</td><td>{}</td></tr></table>\n",
            self.both.len(),
            self.covcon_only.len(),
            self.command_only.len(),
            self.neither.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(id: u32, status: Status) -> Outcome {
        // A mutant as `mutants.json` has it (its schema is the oracle's own).
        let mutant = serde_json::json!({
            "id": id, "name": format!("m{id}"), "type_path": "t", "method": "f",
            "operator": "split_section", "file": "src/lib.rs", "line": 1, "column": 0,
            "description": "", "diff": "",
        });
        Outcome::bare(serde_json::from_value(mutant).unwrap(), status)
    }

    #[test]
    fn each_mutant_judged_by_both_lands_in_one_cell_and_a_timeout_counts_as_caught() {
        use Status::*;
        let covcon = [
            outcome(1, Caught),
            outcome(2, Caught),
            outcome(3, Missed),
            outcome(4, Missed),
            outcome(5, Skipped),
            outcome(6, Equivalent),
            outcome(7, Missed),
        ];
        let command = vec![
            outcome(1, Timeout),
            outcome(2, Missed),
            outcome(3, Caught),
            outcome(4, Missed),
            outcome(5, Caught),
            outcome(6, Equivalent),
        ];
        let c = Comparison::new("cargo test".into(), Vec::new(), &covcon, command);
        assert_eq!(
            (
                c.both,
                c.covcon_only,
                c.command_only,
                c.neither,
                c.one_judged
            ),
            (vec![1], vec![2], vec![3], vec![4], vec![5, 7])
        );
    }
}
