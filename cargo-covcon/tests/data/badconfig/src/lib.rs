//! Test data: a crate with a misspelt covcon configuration key.

pub struct Nothing;
