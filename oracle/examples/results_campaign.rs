//! Runs a short campaign with the results oracle and shrinking on, over packages of a
//! workspace such as `fixtures/`, and prints each violation with its shrunk test: a check of
//! the executor's results mode on real code, until the CLI has a flag for it.
//!
//! ```text
//! cargo run --release -p covcon-oracle --example results_campaign -- \
//!     fixtures rusty,jfree,commons [SECONDS] [TYPE_SUBSTRING | !TYPE_SUBSTRING]
//! ```

use analysis::PackageInfo;
use generator::{CampaignConfig, Executor, ShrinkConfig, TypeConfig};
use oracle::results::ResultsConfig;
use oracle::{OracleConfig, OracleExecutor};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = std::fs::canonicalize(args.first().map_or("fixtures", String::as_str))
        .expect("the workspace directory exists");
    let packages: Vec<PackageInfo> = args
        .get(1)
        .map_or("rusty", String::as_str)
        .split(',')
        .map(|name| package(&root, name))
        .collect();
    let seconds: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let only = args.get(3).cloned().unwrap_or_default();

    let mut model = analysis::analyze(&packages, &analysis::Config::default());
    match only.strip_prefix('!') {
        Some(left_out) => model.types.retain(|t| !t.path.contains(left_out)),
        None => model.types.retain(|t| t.path.contains(&only)),
    }
    let config = OracleConfig {
        out_dir: std::env::temp_dir().join("covcon-results-campaign"),
        cargo_args: vec!["--offline".into()],
        results: Some(ResultsConfig::default()),
        shrink: Some(ShrinkConfig {
            time_budget: Duration::from_secs(10),
            ..ShrinkConfig::default()
        }),
        ..OracleConfig::new(&root)
    };
    let harness = oracle::prepare(&model, &config).unwrap_or_else(|e| panic!("{e}"));
    let model = harness.drivable_model(&model);
    let types: Vec<_> = model
        .types
        .iter()
        .filter(|t| t.supported())
        .cloned()
        .collect();
    let mut executor = OracleExecutor::new(&harness, &config, &model).expect("workers start");
    let campaign = CampaignConfig {
        seed: 7,
        time_budget: Duration::from_secs(seconds),
        keep_going: true,
        types: harness
            .types
            .iter()
            .map(|p| {
                let values = model
                    .types
                    .iter()
                    .find(|t| t.path == p.path)
                    .map(|t| t.values.clone())
                    .unwrap_or_default();
                let instantiation = p.instantiation_kinds(&values);
                (
                    p.path.clone(),
                    TypeConfig {
                        instantiation,
                        ..TypeConfig::default()
                    },
                )
            })
            .collect(),
        ..CampaignConfig::default()
    };
    let result = generator::run_campaign(&types, &campaign, &mut executor, &mut |_| {});
    for ty in &result.types {
        println!("{}: {} tests", ty.path, ty.tests_run);
        for found in &ty.violations {
            let v = &found.violation;
            println!(
                "  {} confirmed {:?}",
                executor.violation_key(v),
                v.confirmed
            );
            println!("    {}", v.message.replace('\n', "\n    "));
            if let Some(shrunk) = &v.shrunk {
                println!(
                    "    shrunk from {} to {} calls: {:?} | {:?}",
                    generator::method_calls(&v.test),
                    generator::method_calls(shrunk),
                    shrunk.threads[0]
                        .iter()
                        .map(|c| &c.method)
                        .collect::<Vec<_>>(),
                    shrunk.threads[1]
                        .iter()
                        .map(|c| &c.method)
                        .collect::<Vec<_>>(),
                );
            }
        }
    }
    println!("{:?}", executor.stats());
}

/// A package of the workspace at `root`, in the directory of its name.
fn package(root: &Path, name: &str) -> PackageInfo {
    let dir: PathBuf = root.join(name);
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a package manifest");
    let edition = manifest
        .lines()
        .find_map(|l| l.strip_prefix("edition = "))
        .map_or("2021".to_string(), |e| e.trim_matches('"').to_string());
    PackageInfo {
        name: name.to_string(),
        lib_name: name.replace('-', "_"),
        manifest_path: dir.join("Cargo.toml"),
        lib_root: dir.join("src/lib.rs"),
        edition,
        ..PackageInfo::default()
    }
}
