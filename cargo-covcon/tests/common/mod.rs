//! Helpers shared by the CLI test binaries: a copy of a test crate or of `fixtures/` in a
//! temporary directory, and the real binary run inside it. Each test binary uses a part.
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A copy of a test crate (or the fixtures workspace) in a fresh temporary directory.
pub struct Sandbox {
    pub dir: TempDir,
}

/// What one run of the binary printed and how it exited.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Sandbox {
    /// A copy of `tests/data/NAME`.
    pub fn data(name: &str) -> Sandbox {
        Sandbox::copy(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data")
                .join(name),
        )
    }

    /// A copy of the bundled fixtures workspace.
    pub fn fixtures() -> Sandbox {
        Sandbox::copy(&fixtures_dir())
    }

    pub fn empty() -> Sandbox {
        Sandbox {
            dir: TempDir::new().unwrap(),
        }
    }

    pub fn copy(src: &Path) -> Sandbox {
        let dir = TempDir::new().unwrap();
        copy_dir(src, dir.path());
        Sandbox { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn manifest(&self) -> String {
        self.path("Cargo.toml").display().to_string()
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Runs `cargo-covcon covcon ARGS` in the sandbox; `CARGO_TARGET_DIR` is kept inside it.
    pub fn covcon(&self, args: &[&str]) -> Run {
        self.covcon_in(self.dir.path(), args)
    }

    /// Runs `cargo-covcon covcon ARGS` with `cwd` as the current directory (for commands that
    /// must work from anywhere); `CARGO_TARGET_DIR` is still the sandbox's.
    #[allow(dead_code)]
    pub fn covcon_in(&self, cwd: &Path, args: &[&str]) -> Run {
        let output = Command::new(env!("CARGO_BIN_EXE_cargo-covcon"))
            .arg("covcon")
            .args(args)
            .current_dir(cwd)
            .env("CARGO_TARGET_DIR", self.path("target"))
            .env_remove("GITHUB_ACTIONS")
            .env_remove("COVCON_SEED")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// The `report.json` written under the output directory `out` (relative to the sandbox).
    pub fn report(&self, out: &str) -> Value {
        let text = std::fs::read_to_string(self.path(out).join("report.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }
}

/// The repository's `fixtures/` workspace (read only: tests work on copies).
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// Copies `src` to `dst`, leaving out `target/` directories.
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "target" {
                copy_dir(&entry.path(), &to);
            }
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}
