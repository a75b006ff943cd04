//! Every exit code `cargo covcon` can return, in one place.
//!
//! The numbers are a public interface (CI jobs gate on them); they are documented in
//! `docs/exit-codes.md` and in `--help`. Never renumber one.

use std::fmt;

/// The process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitCode {
    /// No (new) violation found.
    Success = 0,
    /// Bad command line, bad configuration, or a workspace cargo cannot read.
    Usage = 1,
    /// At least one new violation (or, with `--fail-on-untested`, a type covcon could not test).
    Violations = 2,
    /// The generated harness did not build.
    HarnessBuild = 3,
    /// `mutants`: the unmutated code already fails the judge (`--test-cmd` fails, as
    /// cargo-mutants' baseline does), so no mutant can be judged.
    BaselineFailed = 4,
    /// A bug in covcon (sysexits `EX_SOFTWARE`).
    Internal = 70,
    /// Interrupted by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it); the report of
    /// what ran was written.
    Interrupted = 130,
}

impl ExitCode {
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// The text shown after `--help`.
pub const HELP: &str = "\
Exit codes:
  0   no violation found (or only violations already in --baseline)
  1   usage or configuration error
  2   violations found (or types covcon could not test, with --fail-on-untested);
      mutants: some viable mutant was missed
  3   the generated harness failed to build
  4   mutants: the --test-cmd fails on the unmutated code (the baseline)
  70  internal error in covcon
  130 interrupted (Ctrl-C, SIGTERM): the report of what ran is written; a second Ctrl-C quits at once";

/// An error that knows which exit code it ends the process with.
#[derive(Debug)]
pub struct Failure {
    pub code: ExitCode,
    pub error: anyhow::Error,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.error)
    }
}

impl std::error::Error for Failure {}

/// Attaches an exit code to an error.
pub trait OrExit<T> {
    fn or_exit(self, code: ExitCode) -> anyhow::Result<T>;
}

impl<T, E: Into<anyhow::Error>> OrExit<T> for Result<T, E> {
    fn or_exit(self, code: ExitCode) -> anyhow::Result<T> {
        self.map_err(|e| {
            Failure {
                code,
                error: e.into(),
            }
            .into()
        })
    }
}

/// A usage or configuration error with a message.
pub fn usage_error(message: impl fmt::Display) -> anyhow::Error {
    Failure {
        code: ExitCode::Usage,
        error: anyhow::anyhow!("{message}"),
    }
    .into()
}

/// The exit code an error ends the process with: the one attached with [`OrExit`], else
/// internal error.
pub fn code_of(error: &anyhow::Error) -> ExitCode {
    error
        .chain()
        .find_map(|e| e.downcast_ref::<Failure>())
        .map_or(ExitCode::Internal, |f| f.code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(error: anyhow::Error, expect: ExitCode) {
        assert_eq!(code_of(&error), expect);
    }

    #[test]
    fn an_error_without_a_code_is_internal() {
        check(anyhow::anyhow!("boom"), ExitCode::Internal);
    }

    #[test]
    fn a_coded_error_keeps_its_code_through_context() {
        let err: anyhow::Result<()> = Err(anyhow::anyhow!("no such file")).or_exit(ExitCode::Usage);
        check(err.unwrap_err().context("reading config"), ExitCode::Usage);
    }

    #[test]
    fn the_help_text_lists_every_code() {
        for code in [0, 1, 2, 3, 4, 70, 130] {
            assert!(
                HELP.contains(&format!("  {code} ")),
                "{code} missing from HELP"
            );
        }
    }
}
