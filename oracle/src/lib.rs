//! The part of cargo covcon that runs code: instrumented copies under `target/covcon/`, the
//! generated harness, the worker pool and the verdict on failing runs.

pub mod protocol;
pub mod results;

mod config;
pub use config::{default_jobs, NoiseLevel, OracleConfig, OracleError, Repeat, Scheduling};

mod executor;
mod explore;
mod floor;
pub use floor::floor_ns;
mod mutants;
pub use explore::{Exploration, ExplorationEnd};
pub use mutants::{Mutant, Operator, MUTANT_ENV};
mod pool;
mod trace;
pub use trace::covered_pairs;
mod verdict;
pub use executor::{
    replay, replay_with_worker, same_panic_note, violation_key, OracleExecutor, ReplayResult,
    RunStats, TypeRunStats, Violation, ViolationKind, WORKER_DIR,
};
pub use pool::{kill_all_workers, run_command, CommandEnd};

// Harness engineer's modules.
mod build;
mod clocks;
mod codegen;
mod copy;
mod harness;
pub use harness::{
    prepare, prepare_mutants, prepare_with, Dropped, DroppedKind, Harness, PreparedType,
};
mod reproducer;
mod saved;
pub use reproducer::{
    render_reproducer, render_reproducer_seeking, render_results_reproducer, Sought,
};
pub use saved::{SavedOracle, SavedTest};
