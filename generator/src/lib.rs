//! Test generation for cargo covcon: coverage state, prioritisation strategies (CovCon,
//! BC-ConTest), test shapes and argument pools, and the campaign loop. Pure: no I/O; the
//! oracle is reached only through the [`Executor`] trait.
//!
//! The entry point is [`run_campaign`]. A [`TestGenerator`] (one type's state) can also be
//! driven directly with [`TestGenerator::next_batch`] and [`TestGenerator::record`]. A failing
//! test is made minimal with [`shrink`]. A test reads as [`display`] lays it out, the one
//! rendering the reports and the oracle's reproducer share.

pub mod display;
pub mod testcase;

mod campaign;
mod coverage;
mod generate;
mod pools;
mod setups;
mod shrink;
mod strategy;

pub use campaign::{
    run_campaign, type_budget, type_weight, CampaignConfig, CampaignResult, FoundViolation,
    HistoryPoint, Progress, StopFlag, StopReason, TypeConfig, TypeResult,
};
pub use coverage::PairCoverage;
pub use generate::{
    scoped_tests, GeneratorConfig, TestGenerator, LONG_SUFFIX, MAX_PREFIX_CALLS, SHORT_SUFFIX,
    SHORT_TESTS,
};
pub use pools::Pools;
pub use shrink::{method_calls, shrink, ShrinkConfig, ShrinkStop, Shrunk, StillFails};
pub use strategy::{bc_score, covcon_score, Strategy};
pub use testcase::*;
