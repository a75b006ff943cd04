//! A sibling crate the type under test depends on.

/// One more than `n`.
pub fn bump(n: u64) -> u64 {
    n + 1
}
