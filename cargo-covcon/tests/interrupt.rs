//! Ctrl-C in the middle of a campaign: covcon stops after the running batch, writes the report
//! of what ran (marked interrupted, the types it did not reach untested) and exits 130.

mod common;

use common::Sandbox;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn sigint_mid_run_writes_the_partial_report_and_exits_130() {
    let sandbox = Sandbox::data("counter");
    // `Counter` runs first and, with `--keep-going`, for its whole share of a long budget;
    // `Tally` comes after it and is never reached.
    let mut child = Command::new(env!("CARGO_BIN_EXE_cargo-covcon"))
        .args([
            "covcon",
            "--keep-going",
            "--time-budget",
            "10m",
            "--seed",
            "1",
        ])
        // `random`: under `bc` every pair of `Tally` is removed and it would have nothing to test.
        .args(["--strategy", "random"])
        .args(["--out", "o", "-v"])
        .current_dir(sandbox.path("."))
        .env("CARGO_TARGET_DIR", sandbox.path("target"))
        .env_remove("GITHUB_ACTIONS")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `-v` prints a progress line per batch: the first one says tests are running.
    let (lines_tx, lines) = mpsc::channel::<String>();
    let mut stdout = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
        text
    });
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let started = loop {
        match lines.recv_timeout(Duration::from_secs(600)) {
            Ok(line) => {
                let running = line.starts_with("covcon: [1/2]") && line.contains(" tests");
                seen.push(line);
                if running {
                    break true;
                }
            }
            Err(_) => break false,
        }
    };
    assert!(started, "the campaign never started:\n{}", seen.join("\n"));
    let signal = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signal.success());
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let stdout = stdout.join().unwrap();
    seen.extend(lines.try_iter());
    let stderr = seen.join("\n");
    assert_eq!(status.code(), Some(130), "stderr:\n{stderr}");
    assert!(stderr.contains("covcon: interrupted"), "{stderr}");

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(sandbox.path("o/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["interrupted"], true);
    let types = report["types"].as_array().unwrap();
    let counter = types
        .iter()
        .find(|t| t["path"] == "counter::Counter")
        .unwrap();
    let tally = types
        .iter()
        .find(|t| t["path"] == "counter::Tally")
        .unwrap();
    assert!(counter["tests_run"].as_u64().unwrap() > 0, "{counter}");
    assert!(counter["untested"].is_null(), "{counter}");
    assert_eq!(
        tally["untested"], "the run was interrupted before its turn",
        "{tally}"
    );
    assert_eq!(tally["untested_kind"], "missed");
    // The terminal report says so on its last line.
    assert!(stdout.contains(", interrupted; seed 1"), "{stdout}");
}
