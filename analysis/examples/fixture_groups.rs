//! Checks the analysis against the fixtures' expectation table: for every fixture type with
//! buggy pairs, prints the group each pair landed in (they should be `high`).
//!
//! `cargo run -p covcon-analysis --example fixture_groups -- fixtures`

use analysis::{analyze, Config, Group, PackageInfo};
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "fixtures".into()));
    let table: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("expected.json")).expect("expected.json"),
    )
    .expect("json");
    let mut crates: Vec<String> = table
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["crate"].as_str().map(String::from))
        .collect();
    crates.sort();
    crates.dedup();
    let packages: Vec<PackageInfo> = crates
        .iter()
        .map(|c| PackageInfo {
            name: c.clone(),
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
    let (mut ok, mut total) = (0, 0);
    for e in table.as_array().into_iter().flatten() {
        let ty = e["type"].as_str().unwrap_or_default();
        let Some(t) = model.types.iter().find(|t| t.path == ty) else {
            println!("MISSING {ty}");
            continue;
        };
        let status = if t.supported() {
            String::new()
        } else {
            format!(
                " (unsupported: {})",
                t.reason.as_ref().map(|r| r.to_string()).unwrap_or_default()
            )
        };
        for p in e["pairs"].as_array().into_iter().flatten() {
            let a = p[0].as_str().unwrap_or_default();
            let b = p[1].as_str().unwrap_or_default();
            let found = t.pairs.iter().find(|x| {
                (x.methods[0] == a && x.methods[1] == b) || (x.methods[0] == b && x.methods[1] == a)
            });
            total += 1;
            match found {
                Some(x) if x.group == Group::High => {
                    ok += 1;
                    println!("high    {ty} ({a}, {b}){status}");
                }
                Some(x) => println!(
                    "{:<7} {ty} ({a}, {b}){status}: {}",
                    format!("{:?}", x.group).to_lowercase(),
                    x.reasons.join(" | ")
                ),
                None => println!("nopair  {ty} ({a}, {b}){status}"),
            }
        }
    }
    println!(
        "{ok}/{total} expected buggy pairs are high; {} diagnostics",
        model.diagnostics.len()
    );
    // Correct types (no expected pair): how many of their pairs are high anyway.
    for e in table
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["pairs"].as_array().is_some_and(|p| p.is_empty()))
    {
        let ty = e["type"].as_str().unwrap_or_default();
        if let Some(t) = model.types.iter().find(|t| t.path == ty) {
            let high = t.pairs.iter().filter(|p| p.group == Group::High).count();
            println!(
                "correct {ty}: {high}/{} pairs high{}",
                t.pairs.len(),
                if t.supported() { "" } else { " (unsupported)" }
            );
        } else {
            println!("correct {ty}: not found");
        }
    }
    for d in &model.diagnostics {
        println!("  {:?}: {}", d.severity, d.message);
    }
}
