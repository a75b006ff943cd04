//! Types of a companion crate that a package re-exports or aliases are analysed in the crate
//! that defines them and presented under the package's path. The data is the `facade` crate of
//! the CLI tests' reach workspace, over its path dependency `engine`.

use analysis::{analyze, Config, Dependency, Model, PackageInfo};
use std::path::{Path, PathBuf};

fn reach_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cargo-covcon/tests/data/reach")
}

fn facade(companion: bool) -> Model {
    let dir = reach_dir();
    let engine = Dependency {
        extern_name: "engine".into(),
        package: "engine".into(),
        version: "0.1.0".into(),
        lib_root: Some(dir.join("vendor/engine/src/lib.rs")),
        lib_name: "engine".into(),
        edition: "2021".into(),
        companion,
        ..Dependency::default()
    };
    let pkg = PackageInfo {
        name: "facade".into(),
        lib_name: "facade".into(),
        manifest_path: dir.join("facade/Cargo.toml"),
        lib_root: dir.join("facade/src/lib.rs"),
        edition: "2021".into(),
        dependencies: vec![engine],
        ..PackageInfo::default()
    };
    analyze(&[pkg], &Config::default())
}

fn render(model: &Model) -> String {
    let mut out = String::new();
    for t in &model.types {
        let generics: Vec<&str> = t.generics.iter().map(|g| g.name.as_str()).collect();
        out.push_str(&format!(
            "{} <{}> package={} {}\n",
            t.path,
            generics.join(", "),
            t.package,
            t.sync_reasons.join("; ")
        ));
        for m in &t.methods {
            let why = m
                .reason
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            let guard = if m.body_start.is_some() {
                " guarded"
            } else {
                ""
            };
            out.push_str(&format!("  {}{guard}{why}\n", m.name));
        }
        for v in &t.values {
            let ctors: Vec<&str> = v.constructors.iter().map(|c| c.name.as_str()).collect();
            out.push_str(&format!("  value {}: {}\n", v.path, ctors.join(", ")));
        }
    }
    out
}

#[test]
fn a_companions_reexported_and_aliased_types_are_the_packages_own() {
    let got = render(&facade(true));
    let want = "\
facade::Board <> package=facade field 'punched' is a Mutex; field 'last' is an AtomicU32
  punch guarded
  last guarded
  value engine::Ticket: new
facade::Latch <R> package=facade unsafe impl Sync; defined in engine 0.1.0 as `engine::Lock`
  set
  get
  swap_raw: parameter `_other`: type parameter `R` is fixed by the alias `facade::Latch`
facade::Queue <T> package=facade field 'items' is a Mutex; field 'len' is an AtomicUsize; defined in engine 0.1.0 as `engine::Queue`
  push
  pop
  len
facade::Scores <C> package=facade field 'tally' is a Mutex; field 'adds' is an AtomicU32
  add guarded
  total guarded
facade::Spin <> package=facade field 'locked' is an AtomicBool
  lock guarded
  unlock guarded
facade::SpinLock <T> package=facade unsafe impl Sync; defined in engine 0.1.0 as `engine::Lock`
  set
  get
  swap_raw: parameter `_other`: type parameter `R` is fixed by the alias `facade::SpinLock`
";
    assert_eq!(got, want);
}

#[test]
fn a_third_partys_reexported_types_are_left_to_their_own_crate_but_its_values_are_built() {
    let got = render(&facade(false));
    assert!(
        !got.contains("facade::Queue") && !got.contains("SpinLock"),
        "{got}"
    );
    assert!(got.contains("value engine::Ticket: new"), "{got}");
}

#[test]
fn a_type_parameter_bounded_by_a_dependencys_trait_takes_the_dependencys_implementors() {
    let model = facade(false);
    let scores = model
        .types
        .iter()
        .find(|t| t.path == "facade::Scores")
        .expect("facade::Scores");
    let candidates: Vec<&str> = scores.generics[0]
        .candidates
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(candidates, ["::engine::Wide"]);
}
