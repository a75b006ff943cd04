//! Building the harness: the `cargo build` command line (a pure function), running it with
//! `--message-format=json`, and reading rustc's errors back as (file, line, message) so the
//! caller can map each one to the dispatch entry or the insertion that caused it.

use crate::OracleError;
use serde_json::Value as Json;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One error rustc reported, at the places it points to (primary spans and the macro call
/// sites they expand from), as absolute paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompileError {
    pub(crate) places: Vec<(PathBuf, u32)>,
    /// The first line of rustc's message (`mismatched types`).
    pub(crate) message: String,
    /// rustc's full rendering, for error reports.
    pub(crate) rendered: String,
}

/// How a build ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct BuildOutcome {
    pub(crate) success: bool,
    pub(crate) errors: Vec<CompileError>,
    /// Cargo's own stderr (dependency resolution failures and the like).
    pub(crate) stderr: String,
}

/// Arguments of `cargo` for a harness build. Features were moved into the manifest by the
/// caller; `--locked`/`--frozen` are dropped because the harness's lock file is its own.
pub(crate) fn cargo_argv(manifest: &Path, target_dir: &Path, cargo_args: &[String]) -> Vec<String> {
    let mut argv = vec![
        "build".to_string(),
        "--release".to_string(),
        "--message-format=json".to_string(),
        "--manifest-path".to_string(),
        manifest.display().to_string(),
        "--target-dir".to_string(),
        target_dir.display().to_string(),
    ];
    let mut args = cargo_args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            // The harness is built once, for the host, in release, with its own lock file.
            "--locked"
            | "--frozen"
            | "--all-features"
            | "--no-default-features"
            | "--release"
            | "--workspace"
            | "--all" => {}
            "--features" | "-F" | "-p" | "--package" | "--manifest-path" | "--target-dir"
            | "--target" | "--profile" | "--message-format" | "--exclude" => {
                args.next();
            }
            a if [
                "--features=",
                "--package=",
                "--manifest-path=",
                "--target-dir=",
                "--target=",
                "--profile=",
                "--message-format=",
                "--exclude=",
            ]
            .iter()
            .any(|p| a.starts_with(p)) => {}
            a => argv.push(a.to_string()),
        }
    }
    argv
}

/// Features asked for in `cargo_args`: (features, whether default features stay on, whether
/// all features are on).
pub(crate) fn requested_features(cargo_args: &[String]) -> (Vec<String>, bool, bool) {
    let mut features = Vec::new();
    let (mut default, mut all) = (true, false);
    let mut args = cargo_args.iter();
    while let Some(arg) = args.next() {
        let list = match arg.as_str() {
            "--features" | "-F" => args.next().cloned(),
            a => a.strip_prefix("--features=").map(str::to_string),
        };
        if let Some(list) = list {
            features.extend(
                list.split([',', ' '])
                    .filter(|f| !f.is_empty())
                    .map(|f| f.rsplit('/').next().unwrap_or(f).to_string()),
            );
        }
        match arg.as_str() {
            "--no-default-features" => default = false,
            "--all-features" => all = true,
            _ => {}
        }
    }
    (features, default, all)
}

/// The rustflags variable for a harness build: the user's own flags, and lints capped at
/// `warn`, as cargo caps them for dependencies. The copy of the user's crate is a path
/// dependency, so without the cap a `#![deny(warnings)]` crate fails to build under a rustc
/// newer than its authors' (and so would `RUSTFLAGS=-D warnings` in a CI job). rustc keeps the
/// first `--cap-lints` it is given, so dependencies keep cargo's `allow`.
pub(crate) fn rustflags_env(
    rustflags: Option<String>,
    encoded: Option<String>,
) -> (&'static str, String) {
    const CAP: &str = "--cap-lints=warn";
    match encoded {
        Some(e) if !e.is_empty() => ("CARGO_ENCODED_RUSTFLAGS", format!("{e}\x1f{CAP}")),
        _ => match rustflags {
            Some(r) if !r.trim().is_empty() => ("RUSTFLAGS", format!("{} {CAP}", r.trim())),
            _ => ("RUSTFLAGS", CAP.to_string()),
        },
    }
}

/// Runs cargo and collects the errors.
pub(crate) fn run(argv: &[String], verbose: bool) -> Result<BuildOutcome, OracleError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let (flags_var, flags) = rustflags_env(
        std::env::var("RUSTFLAGS").ok(),
        std::env::var("CARGO_ENCODED_RUSTFLAGS").ok(),
    );
    let mut child = Command::new(cargo)
        .args(argv)
        .env(flags_var, flags)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| OracleError::io("starting cargo", e))?;
    let stderr = child.stderr.take();
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(stderr) = stderr {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if verbose {
                    eprintln!("{line}");
                }
                text.push_str(&line);
                text.push('\n');
            }
        }
        text
    });
    let mut errors = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(error) = parse_message(&line) {
                if verbose {
                    eprint!("{}", error.rendered);
                }
                errors.push(error);
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| OracleError::io("waiting for cargo", e))?;
    let stderr = stderr_reader.join().unwrap_or_default();
    Ok(BuildOutcome {
        success: status.success(),
        errors,
        stderr,
    })
}

/// An error from one line of cargo's JSON output, if it is one.
pub(crate) fn parse_message(line: &str) -> Option<CompileError> {
    let json: Json = serde_json::from_str(line).ok()?;
    if json.get("reason")?.as_str()? != "compiler-message" {
        return None;
    }
    let message = json.get("message")?;
    if message.get("level")?.as_str()? != "error" {
        return None;
    }
    let base = json
        .get("manifest_path")
        .and_then(Json::as_str)
        .and_then(|m| Path::new(m).parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut places = Vec::new();
    for span in message
        .get("spans")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        if span.get("is_primary").and_then(Json::as_bool) == Some(true) {
            collect_places(span, &base, &mut places);
        }
    }
    // Errors without a primary span (`aborting due to ...`) say nothing about a place.
    if places.is_empty() && message.get("code").is_none_or(Json::is_null) {
        let text = message.get("message")?.as_str()?;
        if text.starts_with("aborting due to") || text.starts_with("could not compile") {
            return None;
        }
    }
    Some(CompileError {
        places,
        message: message
            .get("message")
            .and_then(Json::as_str)
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("")
            .to_string(),
        rendered: message
            .get("rendered")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string(),
    })
}

fn collect_places(span: &Json, base: &Path, places: &mut Vec<(PathBuf, u32)>) {
    if let (Some(file), Some(line)) = (
        span.get("file_name").and_then(Json::as_str),
        span.get("line_start").and_then(Json::as_u64),
    ) {
        let file = Path::new(file);
        let file = if file.is_absolute() {
            file.to_path_buf()
        } else {
            base.join(file)
        };
        places.push((file, line as u32));
    }
    if let Some(call_site) = span.get("expansion").and_then(|e| e.get("span")) {
        collect_places(call_site, base, places);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lints_are_capped_at_warn_after_the_users_own_rustflags() {
        use super::rustflags_env;
        assert_eq!(
            rustflags_env(None, None),
            ("RUSTFLAGS", "--cap-lints=warn".into())
        );
        assert_eq!(
            rustflags_env(Some("-D warnings".into()), None),
            ("RUSTFLAGS", "-D warnings --cap-lints=warn".into())
        );
        assert_eq!(
            rustflags_env(Some("-D warnings".into()), Some("--cfg\x1fx".into())),
            (
                "CARGO_ENCODED_RUSTFLAGS",
                "--cfg\x1fx\x1f--cap-lints=warn".into()
            )
        );
    }

    use super::*;

    fn check(cargo_args: &[&str], expect: &str) {
        let args: Vec<String> = cargo_args.iter().map(|s| s.to_string()).collect();
        let argv = cargo_argv(Path::new("/h/Cargo.toml"), Path::new("/t"), &args);
        let (features, default, all) = requested_features(&args);
        assert_eq!(
            format!("{} | {features:?} {default} {all}", argv.join(" ")),
            expect
        );
    }

    #[test]
    fn cargo_arguments_keep_offline_and_move_features_to_the_manifest() {
        check(
            &[],
            "build --release --message-format=json --manifest-path /h/Cargo.toml --target-dir /t | [] true false",
        );
        check(
            &["--offline", "--locked", "--features", "a,b", "--no-default-features"],
            "build --release --message-format=json --manifest-path /h/Cargo.toml --target-dir /t --offline | [\"a\", \"b\"] false false",
        );
        check(
            &["--features=p/x", "--all-features", "-p", "p", "--target", "x86", "-j", "2"],
            "build --release --message-format=json --manifest-path /h/Cargo.toml --target-dir /t -j 2 | [\"x\"] true true",
        );
    }

    #[test]
    fn rustc_errors_are_read_with_their_macro_call_sites() {
        let line = r#"{"reason":"compiler-message","manifest_path":"/h/Cargo.toml","message":{"level":"error","message":"mismatched types\nmore","code":{"code":"E0308"},"rendered":"error[E0308]","spans":[{"file_name":"/rt/src/lib.rs","line_start":9,"is_primary":true,"expansion":{"span":{"file_name":"src/t0.rs","line_start":31}}}]}}"#;
        let error = parse_message(line).unwrap();
        assert_eq!(error.message, "mismatched types");
        assert_eq!(
            error.places,
            [
                (PathBuf::from("/rt/src/lib.rs"), 9),
                (PathBuf::from("/h/src/t0.rs"), 31)
            ]
        );
        let warning = line.replace("\"error\"", "\"warning\"");
        assert_eq!(parse_message(&warning), None);
        assert_eq!(
            parse_message(r#"{"reason":"build-finished","success":false}"#),
            None
        );
    }
}
