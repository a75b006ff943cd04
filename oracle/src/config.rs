//! How the oracle is configured ([`OracleConfig`]) and how it fails ([`OracleError`]).
//!
//! The CLI converts its arguments once into an [`OracleConfig`] and passes it down; every
//! other module of the oracle reads its settings from here.

use crate::protocol::{Control, Noise};
use crate::results::ResultsConfig;
use generator::ShrinkConfig;
use std::path::PathBuf;
use std::time::Duration;

/// Settings for preparing the harness and running tests.
#[derive(Debug, Clone, PartialEq)]
pub struct OracleConfig {
    /// Where everything covcon writes goes: `<target>/covcon`.
    pub out_dir: PathBuf,
    /// Root of the user's workspace (the tree that is copied, never written).
    pub workspace_root: PathBuf,
    /// Number of harness worker processes, at least 1.
    pub jobs: usize,
    /// How long one concurrent or sequential run may take before it counts as a deadlock.
    pub test_timeout: Duration,
    /// Extra arguments passed to `cargo build` of the harness (`--features x`, `--offline`,
    /// `--locked`).
    pub cargo_args: Vec<String>,
    /// How many times a violation is re-run to confirm it (0 disables confirmation).
    pub confirm_runs: u32,
    /// How much schedule noise concurrent runs get at split points.
    pub noise: NoiseLevel,
    /// How concurrent runs are scheduled: free, controlled, or a mix.
    pub scheduling: Scheduling,
    /// Echo cargo's output and worker stderr.
    pub verbose: bool,
    /// Also judge passing runs by their results (the results oracle,
    /// `docs/results-oracle.md`); `None` judges panics, deadlocks and crashes only.
    pub results: Option<ResultsConfig>,
    /// Shrink each new violation to a smaller test that still shows it before writing its
    /// files; `None` keeps the test as found.
    pub shrink: Option<ShrinkConfig>,
    /// Most concurrent runs sent to a worker in one request (`Request::Batch`); 1 sends each
    /// run alone, as a `Request::Concurrent`.
    pub batch: usize,
    /// Runs of each campaign test back to back in its worker, each on a fresh instance with
    /// new noise or a new schedule, up to the first that fails (the protocol's `repeat`).
    /// Under the results oracle always 1. Confirmation, shrinking and replay runs are single
    /// runs.
    pub repeat: Repeat,
    /// The mutant of a harness built by `prepare_mutants` that the workers run
    /// (`COVCON_MUTANT`); `None` runs the code as written.
    pub mutant: Option<u32>,
}

impl OracleConfig {
    /// Defaults for a workspace whose target directory is `<workspace_root>/target`.
    pub fn new(workspace_root: impl Into<PathBuf>) -> OracleConfig {
        let workspace_root = workspace_root.into();
        OracleConfig {
            out_dir: workspace_root.join("target").join("covcon"),
            workspace_root,
            jobs: default_jobs(),
            test_timeout: Duration::from_secs(1),
            cargo_args: Vec::new(),
            confirm_runs: 20,
            noise: NoiseLevel::Low,
            scheduling: Scheduling::default(),
            verbose: false,
            results: None,
            shrink: None,
            batch: 32,
            repeat: Repeat::default(),
            mutant: None,
        }
    }
}

/// Half the available cores (each test keeps two threads busy), but two on a 2-core machine:
/// one worker there leaves a core idle while it waits on covcon and on its own noise, and two
/// ran 37% more tests of the fixtures in 60 s and reached each type's first violation 1.1-1.3x
/// sooner (docs/benchmarks-history.md). One on one core.
pub fn default_jobs() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    jobs_for(cores)
}

fn jobs_for(cores: usize) -> usize {
    (cores / 2).max(cores.min(2))
}

/// How much ConTest-style noise a concurrent run gets at each schedule point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NoiseLevel {
    /// No perturbation: schedule points do nothing.
    None,
    /// Occasional yields and short spins.
    #[default]
    Low,
    /// Frequent yields, spins and short sleeps.
    High,
}

impl NoiseLevel {
    /// The noise for one run with the given seed.
    pub fn noise(self, seed: u64) -> Noise {
        let (yield_p, spin_p, sleep_p) = match self {
            NoiseLevel::None => return Noise::none(),
            NoiseLevel::Low => (0.10, 0.10, 0.01),
            NoiseLevel::High => (0.25, 0.25, 0.10),
        };
        Noise {
            seed,
            yield_p,
            spin_p,
            sleep_p,
            control: Control::Free,
            pause_us: 0,
        }
    }
}

/// How often each campaign test runs in its worker (`--repeat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// This many runs (at least 1). The default is 1: under the panic oracle the adaptive
    /// count found one published bug far less often (quick_cache 0.6.0, docs/benchmarks.md,
    /// session 31); `cargo covcon` picks `Adaptive` under the results oracle (session 37).
    Times(u32),
    /// As many as the test's pair has earned (`auto`): one until a run covered the pair and
    /// for its first 8 tests after, then N (2, 4, 8, up to 16): under the panic oracle for one
    /// test in N and one for the others, under the results oracle for each
    /// (`executor/run.rs`, `adaptive_repeat`).
    Adaptive,
}

impl Default for Repeat {
    fn default() -> Repeat {
        Repeat::Times(1)
    }
}

impl std::str::FromStr for Repeat {
    type Err = String;

    fn from_str(s: &str) -> Result<Repeat, String> {
        match s {
            "auto" => Ok(Repeat::Adaptive),
            _ => s
                .parse::<u32>()
                .map(|n| Repeat::Times(n.max(1)))
                .map_err(|_| format!("`{s}` is not a number of runs or `auto`")),
        }
    }
}

/// How a campaign's concurrent runs are scheduled (`oracle/runtime/src/sched.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Scheduling {
    /// Both threads run at once, perturbed by noise at the schedule points.
    Free,
    /// One thread at a time, switching at schedule points as a seeded strategy chooses
    /// (PCT of depth 2 or 3, or a random walk): every run replays from its seed.
    Controlled,
    /// Half the tests free, half controlled, by their noise seed.
    #[default]
    Mixed,
}

impl Scheduling {
    /// The control of a test with noise seed `seed` whose runs pass about `steps` schedule
    /// points: drawn from the seed, so the same test is scheduled the same way every time.
    pub fn control(self, seed: u64, steps: u32) -> Control {
        let draw = mix(seed ^ 0x5C4E_D01E);
        match self {
            Scheduling::Free => Control::Free,
            Scheduling::Mixed if draw % 8 >= 4 => Control::Free,
            Scheduling::Controlled | Scheduling::Mixed => controlled(draw, steps),
        }
    }
}

/// The controlled strategy `k` picks, over runs of about `steps` points: half PCT of depth 2,
/// a quarter PCT of depth 3, a quarter random walk.
pub(crate) fn controlled(k: u64, steps: u32) -> Control {
    let steps = steps.max(2);
    match k % 4 {
        0 | 1 => Control::Pct { depth: 2, steps },
        2 => Control::Pct { depth: 3, steps },
        _ => Control::Random,
    }
}

impl std::str::FromStr for Scheduling {
    type Err = String;

    fn from_str(s: &str) -> Result<Scheduling, String> {
        match s {
            "free" => Ok(Scheduling::Free),
            "controlled" => Ok(Scheduling::Controlled),
            "mixed" => Ok(Scheduling::Mixed),
            _ => Err(format!(
                "unknown scheduling `{s}` (expected free, controlled or mixed)"
            )),
        }
    }
}

/// splitmix64's finaliser: seeds a bit apart become unrelated.
pub(crate) fn mix(x: u64) -> u64 {
    let x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl std::str::FromStr for NoiseLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<NoiseLevel, String> {
        match s {
            "none" => Ok(NoiseLevel::None),
            "low" => Ok(NoiseLevel::Low),
            "high" => Ok(NoiseLevel::High),
            _ => Err(format!(
                "unknown noise level `{s}` (expected none, low or high)"
            )),
        }
    }
}

/// Why the oracle could not do its job at all. Problems with single types or methods are
/// diagnostics, not errors.
#[derive(Debug, thiserror::Error)]
pub enum OracleError {
    /// Reading or writing a file or directory failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// `cargo build` of the harness failed for reasons other than single calls not compiling.
    #[error("building the harness failed: {message}")]
    Build { message: String },
    /// A harness worker could not be started or talked to.
    #[error("harness worker: {message}")]
    Worker { message: String },
    /// The model or a test case does not fit the prepared harness.
    #[error("{message}")]
    Invalid { message: String },
}

impl OracleError {
    /// An I/O error with what was being done when it happened.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> OracleError {
        OracleError::Io {
            context: context.into(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduling_draws_each_control_from_the_seed() {
        let count = |scheduling: Scheduling| {
            let mut names = std::collections::BTreeMap::new();
            for seed in 0..4_000 {
                *names
                    .entry(scheduling.control(seed, 40).name())
                    .or_insert(0) += 1;
            }
            names
                .into_iter()
                .map(|(n, c)| (n, c / 100))
                .collect::<Vec<_>>()
        };
        assert_eq!(count(Scheduling::Free), [("free".to_string(), 40)]);
        let controlled = count(Scheduling::Controlled);
        let names: Vec<&str> = controlled.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["pct-2", "pct-3", "random"]);
        let mixed = count(Scheduling::Mixed);
        assert_eq!(mixed[0].0, "free");
        assert!((18..=21).contains(&mixed[0].1), "{mixed:?}");
    }

    #[test]
    fn two_cores_get_two_workers_and_more_cores_half_as_many() {
        let jobs: Vec<usize> = [1, 2, 3, 4, 8, 16].map(jobs_for).into();
        assert_eq!(jobs, [1, 2, 2, 2, 4, 8]);
    }
}
