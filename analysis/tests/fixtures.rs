//! The fixtures workspace's expectation table (`fixtures/expected.json`) read from the
//! analysis side: every method pair the table names as buggy must be in the high group, so the
//! generator tries it first. (Whether a run then shows the bug is the CLI tests' business.)

use analysis::{analyze, Config, Group, PackageInfo};
use std::path::Path;

#[test]
fn every_buggy_pair_of_the_fixture_table_is_in_the_high_group() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let table: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("expected.json")).expect("fixtures/expected.json"),
    )
    .expect("valid table");
    let entries = table.as_array().expect("a list");
    let mut crates: Vec<&str> = entries.iter().filter_map(|e| e["crate"].as_str()).collect();
    crates.sort();
    crates.dedup();
    let packages: Vec<PackageInfo> = crates
        .iter()
        .map(|c| PackageInfo {
            name: c.to_string(),
            lib_name: c.replace('-', "_"),
            manifest_path: root.join(c).join("Cargo.toml"),
            lib_root: root.join(c).join("src/lib.rs"),
            edition: if c.contains("2024") {
                "2024".into()
            } else {
                "2021".into()
            },
            ..Default::default()
        })
        .collect();
    let model = analyze(&packages, &Config::default());
    let mut misses = Vec::new();
    for e in entries {
        let ty = e["type"].as_str().unwrap_or_default();
        for pair in e["pairs"].as_array().into_iter().flatten() {
            let (a, b) = (
                pair[0].as_str().unwrap_or_default(),
                pair[1].as_str().unwrap_or_default(),
            );
            let group = model.types.iter().find(|t| t.path == ty).and_then(|t| {
                t.pairs
                    .iter()
                    .find(|p| {
                        (p.methods[0] == a && p.methods[1] == b)
                            || (p.methods[0] == b && p.methods[1] == a)
                    })
                    .map(|p| p.group)
            });
            if group != Some(Group::High) {
                misses.push(format!("{ty} ({a}, {b}): {group:?}"));
            }
        }
    }
    assert!(
        misses.is_empty(),
        "buggy pairs not in the high group:\n{}",
        misses.join("\n")
    );
}
