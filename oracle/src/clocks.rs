//! Clocks of dependencies under covcon's control: a copy of `quanta` whose clock reads
//! covcon's virtual clock in a worker, patched into the harness build.
//!
//! The copy's own reads of std's clock are rewritten where they are (`analysis/src/clock.rs`,
//! `oracle/runtime/src/time.rs`). A crate that reads `quanta` instead (moka's caches stamp
//! every entry with `quanta::Instant::now()`; governor's and metrics-util's clocks hold a
//! `quanta::Clock`) would keep a real clock, which no sequential order replays: an insert that
//! read the clock before the other thread's `invalidate_all` and stored its entry after that
//! thread's own later insert loses the key, a final state no order of whole calls gives and a
//! report of correct code (moka 0.9.6's documented "values inserted before the time when this
//! method was called"). Under the virtual clock each call slot reads the same time in every
//! run, concurrent or sequential, so such an answer is explained.
//!
//! For every registry `quanta` the packages under test depend on, the package's sources are
//! copied to `<out>/clocks/quanta-<version>`, and there `Clock::now`, `Clock::recent`,
//! `Instant::now` and `Instant::recent` each begin with a return of
//! `covcon_rt::time::dependency_nanos()` when it is `Some` (in a worker; outside one, as in
//! `cargo covcon mutants --test-cmd`, the real clock as before). The harness manifest patches
//! crates.io's `quanta` of that version with the copy. A version whose sources do not have the
//! four functions as written from 0.10 to 0.12 is left real, and said so; a harness build that
//! fails inside a patched copy is built again without the patches (`harness.rs`).

use crate::copy::{list_files, write_if_changed};
use crate::OracleError;
use analysis::model::Model;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The directory under the run's output directory that holds the patched copies.
pub(crate) const CLOCKS_DIR: &str = "clocks";

/// A registry package patched so that its clock reads covcon's virtual clock in a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClockPatch {
    /// The package's name on crates.io (`quanta`).
    pub(crate) package: String,
    /// The exact version patched (`0.10.1`).
    pub(crate) version: String,
    /// Where the patched copy is.
    pub(crate) dir: PathBuf,
}

/// What [`patch_dependency_clocks`] did: the copies it wrote, and a line for each dependency
/// clock it left real.
#[derive(Debug, Default)]
pub(crate) struct ClockPatches {
    pub(crate) patches: Vec<ClockPatch>,
    pub(crate) left_real: Vec<String>,
}

/// The functions of `quanta` that hand out an `Instant`, as its sources write their first
/// line, and the file each is in: each gets the virtual branch.
const QUANTA_READS: [(&str, &str); 4] = [
    ("src/lib.rs", "pub fn now(&self) -> Instant {"),
    ("src/lib.rs", "pub fn recent(&self) -> Instant {"),
    ("src/instant.rs", "pub fn now() -> Instant {"),
    ("src/instant.rs", "pub fn recent() -> Instant {"),
];

/// The statement each of [`QUANTA_READS`] begins with.
const QUANTA_VIRTUAL_READ: &str = "\n        // Written by cargo covcon: covcon's virtual clock in a worker.\n        \
     if let ::core::option::Option::Some(covcon_ns) = ::covcon_rt::time::dependency_nanos() {\n            \
     return Instant(covcon_ns);\n        }";

/// Copies and patches every registry `quanta` the model's packages depend on, under
/// `<out_dir>/clocks`, each depending on the runtime at `runtime_dir`.
pub(crate) fn patch_dependency_clocks(
    model: &Model,
    out_dir: &Path,
    runtime_dir: &Path,
) -> Result<ClockPatches, OracleError> {
    let mut sources: BTreeMap<String, PathBuf> = BTreeMap::new();
    for dependency in model.packages.iter().flat_map(|p| &p.dependencies) {
        if dependency.package != "quanta" || dependency.path.is_some() {
            continue;
        }
        // `<registry>/quanta-0.10.1/src/lib.rs`: the package is two levels up.
        let dir = dependency
            .lib_root
            .as_deref()
            .and_then(Path::parent)
            .and_then(Path::parent);
        if let Some(dir) = dir {
            sources
                .entry(dependency.version.clone())
                .or_insert_with(|| dir.to_path_buf());
        }
    }
    let mut out = ClockPatches::default();
    for (version, source) in sources {
        let dir = out_dir.join(CLOCKS_DIR).join(format!("quanta-{version}"));
        match patched_quanta(&source, runtime_dir) {
            Some(files) => {
                for (relative, content) in &files {
                    write_if_changed(&dir.join(relative), content)?;
                }
                out.patches.push(ClockPatch {
                    package: "quanta".to_string(),
                    version,
                    dir,
                });
            }
            None => out.left_real.push(format!(
                "quanta {version}: its clock stays real (its sources at {} are not as covcon \
                 patches them); answers that depend on it may be reported",
                source.display()
            )),
        }
    }
    Ok(out)
}

/// The files of the `quanta` package at `source`, relative to it, with its clock's reads
/// virtual and its manifest depending on the runtime; `None` when they cannot be patched.
fn patched_quanta(source: &Path, runtime_dir: &Path) -> Option<Vec<(PathBuf, Vec<u8>)>> {
    let mut files = Vec::new();
    list_files(source, source, &source.join("target"), &mut files).ok()?;
    let mut out = Vec::new();
    let mut patched = 0;
    for relative in files {
        let mut content = std::fs::read(source.join(&relative)).ok()?;
        let name = relative.to_string_lossy().replace('\\', "/");
        if QUANTA_READS.iter().any(|(file, _)| *file == name) {
            let text = String::from_utf8(content).ok()?;
            let (text, n) = with_virtual_reads(&text, &name)?;
            patched += n;
            content = text.into_bytes();
        } else if name == "Cargo.toml" {
            let text = String::from_utf8(content).ok()?;
            content = manifest_with_runtime(&text, runtime_dir)?.into_bytes();
        }
        out.push((relative, content));
    }
    (patched == QUANTA_READS.len()).then_some(out)
}

/// `text` (the file `name` of quanta) with the virtual branch at the start of each of its
/// [`QUANTA_READS`], and how many it patched; `None` when one of them is written twice.
fn with_virtual_reads(text: &str, name: &str) -> Option<(String, usize)> {
    let mut out = text.to_string();
    let mut patched = 0;
    for (_, first_line) in QUANTA_READS.iter().filter(|(file, _)| *file == name) {
        let mut found = out.match_indices(first_line);
        let Some((at, _)) = found.next() else {
            continue;
        };
        if found.next().is_some() {
            return None;
        }
        out.insert_str(at + first_line.len(), QUANTA_VIRTUAL_READ);
        patched += 1;
    }
    Some((out, patched))
}

/// The package manifest `text` depending on the runtime, and in a workspace of its own (it
/// lives under the user's target directory).
fn manifest_with_runtime(text: &str, runtime_dir: &Path) -> Option<String> {
    let mut manifest = text.parse::<toml_edit::DocumentMut>().ok()?;
    let dependencies = manifest
        .entry("dependencies")
        .or_insert_with(toml_edit::table)
        .as_table_like_mut()?;
    let mut runtime = toml_edit::InlineTable::new();
    runtime.insert("path", runtime_dir.display().to_string().into());
    dependencies.insert("covcon-rt", toml_edit::value(runtime));
    if !manifest.contains_key("workspace") {
        manifest.insert("workspace", toml_edit::table());
    }
    Some(manifest.to_string())
}

/// The patched packages, as a note names them (`quanta 0.10.1`).
pub(crate) fn names(patches: &[ClockPatch]) -> String {
    patches
        .iter()
        .map(|p| format!("{} {}", p.package, p.version))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The harness manifest's `[patch.crates-io]` table for `patches` (empty when there are none).
/// A second version of one package gets a key of its own that names the package.
pub(crate) fn patch_table(patches: &[ClockPatch]) -> String {
    if patches.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n# Dependency clocks that read covcon's virtual clock in a worker (clocks.rs).\n\
         [patch.crates-io]\n",
    );
    let mut seen = BTreeMap::new();
    for patch in patches {
        let n = seen.entry(patch.package.as_str()).or_insert(0);
        let key = if *n == 0 {
            patch.package.clone()
        } else {
            format!(
                "{}-covcon-{}",
                patch.package,
                patch.version.replace('.', "-")
            )
        };
        *n += 1;
        out.push_str(&format!(
            "{} = {{ path = {}, package = {} }}\n",
            toml_edit::Key::new(key),
            toml_edit::Value::from(patch.dir.display().to_string()),
            toml_edit::Value::from(patch.package.clone()),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of quanta 0.10–0.12's two files, cut to the four functions.
    const LIB: &str =
        "impl Clock {\n    pub fn now(&self) -> Instant {\n        real()\n    }\n\n    \
                       pub fn recent(&self) -> Instant {\n        real()\n    }\n}\n";
    const INSTANT: &str = "pub struct Instant(pub(crate) u64);\nimpl Instant {\n    \
                           pub fn now() -> Instant {\n        crate::get_now()\n    }\n    \
                           pub fn recent() -> Instant {\n        crate::get_recent()\n    }\n}\n";

    fn package(dir: &Path, lib: &str, instant: &str) {
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"quanta\"\nversion = \"0.10.1\"\n\n[dependencies.once_cell]\nversion = \"1\"\n",
        )
        .unwrap();
        std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
        std::fs::write(dir.join("src/instant.rs"), instant).unwrap();
        std::fs::create_dir_all(dir.join("target/release")).unwrap();
        std::fs::write(dir.join("target/release/junk"), "x").unwrap();
    }

    #[test]
    fn each_of_quantas_four_reads_begins_with_the_virtual_clock_and_its_manifest_names_the_runtime()
    {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("quanta-0.10.1");
        package(&source, LIB, INSTANT);
        let files = patched_quanta(&source, Path::new("/out/covcon-rt")).unwrap();
        let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(names, ["Cargo.toml", "src/instant.rs", "src/lib.rs"]);
        let text = |name: &str| {
            let (_, content) = files
                .iter()
                .find(|(p, _)| p.display().to_string() == name)
                .unwrap();
            String::from_utf8(content.clone()).unwrap()
        };
        let lib = text("src/lib.rs");
        assert_eq!(lib.matches("dependency_nanos()").count(), 2, "{lib}");
        assert!(
            lib.contains("pub fn now(&self) -> Instant {\n        // Written by cargo covcon"),
            "{lib}"
        );
        assert!(
            lib.contains("return Instant(covcon_ns);\n        }\n        real()"),
            "{lib}"
        );
        assert_eq!(
            text("src/instant.rs").matches("dependency_nanos()").count(),
            2
        );
        let manifest: toml::Table = text("Cargo.toml").parse().unwrap();
        assert_eq!(
            manifest["dependencies"]["covcon-rt"]["path"].as_str(),
            Some("/out/covcon-rt")
        );
        assert!(manifest["dependencies"].get("once_cell").is_some());
        assert!(manifest.contains_key("workspace"));
    }

    #[test]
    fn a_quanta_without_one_of_the_four_reads_or_with_one_twice_is_not_patched() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("a");
        package(
            &missing,
            &LIB.replace("recent(&self)", "latest(&self)"),
            INSTANT,
        );
        assert!(patched_quanta(&missing, Path::new("/rt")).is_none());
        let twice = dir.path().join("b");
        package(&twice, &format!("{LIB}{LIB}"), INSTANT);
        assert!(patched_quanta(&twice, Path::new("/rt")).is_none());
    }

    #[test]
    fn two_versions_of_quanta_are_patched_under_two_keys() {
        let patch = |version: &str| ClockPatch {
            package: "quanta".to_string(),
            version: version.to_string(),
            dir: PathBuf::from(format!("/out/clocks/quanta-{version}")),
        };
        assert_eq!(patch_table(&[]), "");
        let table = patch_table(&[patch("0.10.1"), patch("0.12.6")]);
        let parsed: toml::Table = table.parse().unwrap();
        let patches = parsed["patch"]["crates-io"].as_table().unwrap();
        let keys: Vec<&String> = patches.keys().collect();
        assert_eq!(keys, ["quanta", "quanta-covcon-0-12-6"]);
        assert_eq!(
            patches["quanta-covcon-0-12-6"]["path"].as_str(),
            Some("/out/clocks/quanta-0.12.6")
        );
        assert_eq!(
            patches["quanta-covcon-0-12-6"]["package"].as_str(),
            Some("quanta")
        );
    }
}
