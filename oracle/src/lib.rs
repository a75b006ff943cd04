//! The part of cargo covcon that runs code: instrumented copies under `target/covcon/`, the
//! generated harness, the worker pool and the verdict on failing runs.

pub mod protocol;
