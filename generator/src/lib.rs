//! Test generation for cargo covcon: coverage state, prioritisation strategies (CovCon,
//! BC-ConTest), test shapes and argument pools, and the campaign loop. Pure: no I/O; the
//! oracle is reached only through the [`Executor`] trait.

pub mod testcase;

pub use testcase::*;
