//! Speed and robustness check for the analysis on real source trees:
//!
//! `cargo run --release -p covcon-analysis --example analyze_dirs -- DIR...`
//!
//! Each DIR is a crate (its `src/lib.rs` is the root) and all of them are analysed in one
//! `analyze` call, as `cargo covcon analyze --workspace` would. With `--every-file`, every
//! `.rs` file under the DIRs is also analysed on its own with `analyze_source` (a no-panic
//! sweep that also covers files outside the module trees). `--summary` prints the model as
//! `cargo covcon analyze` would.

use analysis::{analyze, analyze_source, Config, PackageInfo};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn main() {
    let mut every_file = false;
    let mut print_summary = false;
    let mut dirs = Vec::new();
    for a in std::env::args().skip(1) {
        if a == "--every-file" {
            every_file = true;
        } else if a == "--summary" {
            print_summary = true;
        } else {
            dirs.push(PathBuf::from(a));
        }
    }
    let packages: Vec<PackageInfo> = dirs
        .iter()
        .filter(|d| d.join("src/lib.rs").exists())
        .map(|d| {
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let base = name
                .rsplit_once('-')
                .map(|(b, _)| b.to_string())
                .unwrap_or(name.clone());
            PackageInfo {
                name: base.clone(),
                lib_name: base.replace('-', "_"),
                manifest_path: d.join("Cargo.toml"),
                lib_root: d.join("src/lib.rs"),
                edition: "2021".into(),
                ..Default::default()
            }
        })
        .collect();
    let lines: usize = packages
        .iter()
        .map(|p| count_tree_lines(p.lib_root.parent().unwrap_or(Path::new("."))))
        .sum();
    let start = Instant::now();
    let model = analyze(&packages, &Config::default());
    let secs = start.elapsed().as_secs_f64();
    let methods: usize = model.types.iter().map(|t| t.methods.len()).sum();
    let pairs: usize = model.types.iter().map(|t| t.pairs.len()).sum();
    println!(
        "{} packages, ~{lines} lines under src/: {:.3} s, {:.0} lines/s; {} types, {methods} methods, {pairs} pairs, {} diagnostics",
        packages.len(),
        secs,
        lines as f64 / secs,
        model.types.len(),
        model.diagnostics.len()
    );
    for t in &model.types {
        println!(
            "  {} ({} methods, {} split points)",
            t.path,
            t.methods.len(),
            t.split_points.len()
        );
    }
    for d in &model.diagnostics {
        println!("  {:?}: {}", d.severity, d.message);
    }
    if print_summary {
        println!("{}", analysis::summary(&model));
    }
    if every_file {
        let mut files = Vec::new();
        for d in &dirs {
            collect_rs(d, &mut files);
        }
        let start = Instant::now();
        let (mut types, mut spots, mut broken) = (0, 0, 0);
        for f in &files {
            if let Ok(text) = std::fs::read_to_string(f) {
                let model = analyze_source("sweep", "2021", &text);
                types += model.types.len();
                // Each split point and body start must take an inserted statement.
                for t in &model.types {
                    let points = t.split_points.iter().map(|p| &p.at);
                    let starts = t.methods.iter().filter_map(|m| m.body_start.as_ref());
                    for at in points.chain(starts) {
                        spots += 1;
                        if !insertable(&text, at.line, at.column) {
                            broken += 1;
                            println!(
                                "  not insertable: {}:{}:{}",
                                f.display(),
                                at.line,
                                at.column
                            );
                        }
                    }
                }
            }
        }
        println!(
            "every-file sweep: {} files, {types} types, {spots} insertion points ({broken} invalid), {:.3} s, no panic",
            files.len(),
            start.elapsed().as_secs_f64()
        );
    }
}

fn insertable(text: &str, line: u32, column: u32) -> bool {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let Some(l) = lines.get_mut(line as usize - 1) else {
        return false;
    };
    let byte = l
        .char_indices()
        .nth(column as usize)
        .map(|(b, _)| b)
        .unwrap_or(l.len());
    l.insert_str(byte, "::covcon_rt::schedule_point(7); ");
    syn::parse_file(&lines.join("\n")).is_ok()
}

fn count_tree_lines(dir: &Path) -> usize {
    let mut files = Vec::new();
    collect_rs(dir, &mut files);
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .map(|t| t.lines().count())
        .sum()
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}
