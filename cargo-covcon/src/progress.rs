//! Progress while a campaign runs: an indicatif bar on a terminal, plain lines (one per type
//! finished) when stderr is not one, nothing with `-q`.

use crate::options::Console;
use generator::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

pub struct Reporter {
    bar: Option<ProgressBar>,
    plain: bool,
    verbose: bool,
}

impl Reporter {
    pub fn new(console: &Console) -> Reporter {
        let bar = (!console.quiet && console.stderr_is_terminal).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix:.bold} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Reporter {
            plain: !console.quiet && bar.is_none(),
            bar,
            verbose: console.verbose > 0,
        }
    }

    /// The observer handed to `generator::run_campaign`.
    pub fn observe(&mut self, progress: &Progress) {
        let line = line(progress);
        if let Some(bar) = &self.bar {
            bar.set_prefix(format!(
                "[{}/{}]",
                progress.type_index + 1,
                progress.type_count
            ));
            bar.set_message(line.clone());
            if progress.done {
                bar.println(format!("  {}", done_line(progress)));
            }
        } else if self.plain && (progress.done || self.verbose) {
            eprintln!(
                "covcon: [{}/{}] {}",
                progress.type_index + 1,
                progress.type_count,
                line
            );
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `krate::Cache: 1234 tests, 7/10 pairs covered, 0 violations, 42s left`
pub fn line(p: &Progress) -> String {
    format!(
        "{}: {} tests, {}/{} pairs covered, {} violation{}, {}s left",
        p.type_path,
        p.tests_run,
        p.pairs_covered,
        p.pairs_worth_covering,
        p.violations,
        if p.violations == 1 { "" } else { "s" },
        p.time_left.as_secs()
    )
}

fn done_line(p: &Progress) -> String {
    format!(
        "{} {}: {} tests, {}/{} pairs covered, {} violation{}",
        if p.violations > 0 { "✗" } else { "✓" },
        p.type_path,
        p.tests_run,
        p.pairs_covered,
        p.pairs_worth_covering,
        p.violations,
        if p.violations == 1 { "" } else { "s" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_progress_line_names_tests_pairs_violations_and_time_left() {
        let p = Progress {
            type_path: "k::Cache".into(),
            type_index: 1,
            type_count: 3,
            tests_run: 1234,
            pairs_covered: 7,
            pairs_worth_covering: 10,
            violations: 1,
            time_left: Duration::from_secs(42),
            done: false,
        };
        assert_eq!(
            line(&p),
            "k::Cache: 1234 tests, 7/10 pairs covered, 1 violation, 42s left"
        );
    }
}
