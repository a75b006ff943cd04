//! GitHub Actions workflow commands: an `::error` annotation on each method of a newly
//! violating pair (a `::warning` for one already in the baseline), printed when
//! `GITHUB_ACTIONS` is set.

use super::Report;
use std::fmt::Write;

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for (t, v) in report.violations() {
        let level = if v.known { "warning" } else { "error" };
        let title = format!(
            "Thread-safety violation: {} {} | {}",
            t.short_name(),
            v.methods[0],
            v.methods[1]
        );
        let mut message = format!(
            "{}: {} while {} and {} ran concurrently",
            t.path,
            v.kind.as_str(),
            v.methods[0],
            v.methods[1]
        );
        if !v.message.is_empty() {
            let _ = write!(message, ": {}", v.message);
        }
        if let Some(r) = &v.reproducer {
            let _ = write!(message, "\nreproducer: {}", r.display());
        }
        let mut places: Vec<(String, u32)> = v
            .sites
            .iter()
            .map(|s| (s.file.display().to_string(), s.line))
            .collect();
        if places.is_empty() {
            if let Some(file) = &t.file {
                places.push((file.display().to_string(), t.line));
            }
        }
        places.dedup();
        if places.is_empty() {
            let _ = writeln!(
                out,
                "::{level} title={}::{}",
                property(&title),
                data(&message)
            );
        }
        for (file, line) in places {
            let _ = writeln!(
                out,
                "::{level} file={},line={line},title={}::{}",
                property(&file.replace('\\', "/")),
                property(&title),
                data(&message)
            );
        }
    }
    out
}

/// Whether annotations should be printed: GitHub sets `GITHUB_ACTIONS=true` in every step.
pub fn enabled() -> bool {
    std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")
}

fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    #[test]
    fn each_method_of_a_new_violation_gets_an_error_and_known_ones_a_warning() {
        let expect = "\
::error file=bank/src/lib.rs,line=20,title=Thread-safety violation%3A Account deposit | deposit::bank::Account: panic while deposit and deposit ran concurrently: lost update <script>alert(1)</script> & more%0Areproducer: target/covcon/violations/1.rs
::warning file=locks/src/lib.rs,line=3,title=Thread-safety violation%3A Pair ab | ba::locks::Pair: deadlock while ab and ba ran concurrently: thread 0 in ab, thread 1 in ba%0Areproducer: target/covcon/violations/2.rs
";
        assert_eq!(render(&sample::report()), expect);
    }
}
