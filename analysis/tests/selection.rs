//! Package selection from saved `cargo metadata --no-deps` output (tests/data): a virtual
//! workspace `alpha` (lib, edition inherited from the workspace: 2024, the only default
//! member), `beta-tool` (bin only) and `gamma` (lib named `gamma_core` at src/core.rs); and the
//! same workspace with a root package `root-pkg` (edition 2018).

use analysis::{packages_from_metadata, PackageSelection, SelectionError};

fn metadata(name: &str) -> cargo_metadata::Metadata {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("saved metadata"))
        .expect("valid metadata")
}

fn sel(packages: &[&str], workspace: bool, exclude: &[&str]) -> PackageSelection {
    PackageSelection {
        packages: packages.iter().map(|s| s.to_string()).collect(),
        workspace,
        exclude: exclude.iter().map(|s| s.to_string()).collect(),
    }
}

/// Renders the selection as `name lib_name edition lib_root` lines, or the error.
fn check(file: &str, selection: PackageSelection, expect: &str) {
    let got = match packages_from_metadata(&metadata(file), &selection) {
        Ok(pkgs) => pkgs
            .iter()
            .map(|p| {
                format!(
                    "{} {} {} {}\n",
                    p.name,
                    p.lib_name,
                    p.edition,
                    p.lib_root.display()
                )
            })
            .collect::<String>(),
        Err(e) => format!("error: {e}\n"),
    };
    let want: String = expect
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn no_flag_in_a_virtual_workspace_takes_the_default_members() {
    check(
        "metadata-virtual.json",
        sel(&[], false, &[]),
        "alpha alpha 2024 /ws/alpha/src/lib.rs",
    );
}

#[test]
fn no_flag_with_a_root_package_takes_the_root_package() {
    check(
        "metadata-rooted.json",
        sel(&[], false, &[]),
        "root-pkg root_pkg 2018 /ws/src/lib.rs",
    );
}

#[test]
fn workspace_takes_every_member_with_a_library_minus_excludes() {
    check(
        "metadata-virtual.json",
        sel(&[], true, &[]),
        "alpha alpha 2024 /ws/alpha/src/lib.rs
         gamma gamma_core 2021 /ws/gamma/src/core.rs",
    );
    check(
        "metadata-virtual.json",
        sel(&[], true, &["alpha"]),
        "gamma gamma_core 2021 /ws/gamma/src/core.rs",
    );
}

#[test]
fn package_names_select_those_packages_and_unknown_names_are_errors() {
    check(
        "metadata-virtual.json",
        sel(&["gamma"], false, &[]),
        "gamma gamma_core 2021 /ws/gamma/src/core.rs",
    );
    check(
        "metadata-virtual.json",
        sel(&["nope"], false, &[]),
        "error: package `nope` is not a member of the workspace",
    );
    check(
        "metadata-virtual.json",
        sel(&["beta-tool"], false, &[]),
        "error: package `beta-tool` has no library target: covcon tests library types",
    );
    check(
        "metadata-virtual.json",
        sel(&[], true, &["nope"]),
        "error: excluded package `nope` is not a member of the workspace",
    );
    check(
        "metadata-virtual.json",
        sel(&["alpha"], false, &["gamma"]),
        "error: `--exclude` can only be used together with `--workspace`",
    );
    let _ = SelectionError::NothingToAnalyse;
}
