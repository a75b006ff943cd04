//! `cargo covcon`: the command line, the campaign and the reports.
//!
//! `main` parses argv, dispatches to one command and turns its result into an exit code
//! (`exit_code.rs`). Commands get options converted once from the arguments (`options.rs`);
//! the only process this binary spawns itself is `cargo metadata` (`workspace.rs`); building
//! and running the harness is the oracle's.

mod baseline;
mod bench;
mod cli;
mod commands;
mod config;
mod diff;
mod exit_code;
mod mutants;
mod options;
mod output;
mod progress;
mod report;
mod run;
mod select;
mod session;
mod shard;
mod workspace;

use exit_code::ExitCode;

fn main() {
    let code = match cli::parse(std::env::args_os().collect()) {
        Err(e) => {
            // clap prints help and version to stdout with its own code 0; everything else is
            // a usage error, which is 1 here (clap would say 2, our "violations found").
            let _ = e.print();
            if e.use_stderr() {
                ExitCode::Usage
            } else {
                ExitCode::Success
            }
        }
        Ok(args) => match commands::dispatch(args) {
            Ok(code) => code,
            Err(error) => {
                let code = exit_code::code_of(&error);
                eprintln!("error: {error:#}");
                if code == ExitCode::Internal {
                    eprintln!("note: this is a bug in cargo covcon; please report it with the command line you ran");
                }
                code
            }
        },
    };
    std::process::exit(code.code());
}
