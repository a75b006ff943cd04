//! Hash keys under covcon's control: the keys the copy's `RandomState`s hash with.
//!
//! std's `RandomState::new()` (and `default()`) draws its keys from the operating system once
//! per thread and adds one for each state after: in a worker, two runs of the same test hash
//! with different keys. A type whose behaviour depends on where keys land (a shard chosen by
//! hash, a frequency sketch's counters, a map's iteration order) then does something else in
//! every run: a failure found under one set of keys is not repeated by the sequential orders
//! that judge it, by the re-runs that confirm it or by `cargo covcon replay`; under the
//! results oracle, a correct type's hash order differs between the concurrent run and its
//! sequential orders.
//!
//! The copy's `RandomState::new()` and `RandomState::default()` of std (the analysis's
//! `ClockRead::HashKeys` sites) are written as [`random_state`]. Outside a worker (the user's
//! own tests run in the copy by `cargo covcon mutants --test-cmd`) it is std's. In a worker,
//! the `n`th state made since the test's setup began has keys that are a function of the test's
//! id and `n`: every run of the test (concurrent, sequential, confirming, replayed) hashes
//! alike, and two tests hash differently, so the campaign still meets many layouts of keys.
//! `HashMap::new()` and other states std makes inside its own code stay std's.

use std::collections::hash_map::RandomState;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether states are keyed by the test: set by the worker (`worker_main`) only.
static KEYED: AtomicBool = AtomicBool::new(false);

/// The running test's id, mixed.
static TEST: AtomicU64 = AtomicU64::new(0);

/// States made since the running test's setup began.
static MADE: AtomicU64 = AtomicU64::new(0);

/// Makes this process's states keyed by the test (the worker, before its first request).
pub(crate) fn make_keyed() {
    KEYED.store(true, Ordering::SeqCst);
}

/// Starts test `id`'s setup: the states it makes are numbered from 0 again.
pub(crate) fn reset(id: u64) {
    TEST.store(mix(id ^ 0x6A09_E667_F3BC_C909), Ordering::SeqCst);
    MADE.store(0, Ordering::SeqCst);
}

/// A `RandomState`: in a worker, keyed by the running test and the number of states it made
/// before; elsewhere std's.
pub fn random_state() -> RandomState {
    if !KEYED.load(Ordering::Relaxed) {
        return RandomState::new();
    }
    let n = MADE.fetch_add(1, Ordering::SeqCst);
    let test = TEST.load(Ordering::SeqCst);
    let k0 = mix(test ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let k1 = mix(k0 ^ 0xBB67_AE85_84CA_A73B);
    keyed(k0, k1)
}

/// A `RandomState` with keys `k0` and `k1`. std's is two `u64` keys and nothing else (every
/// release since 1.0); its fields are private, so the state is written as the two keys. Any
/// two `u64`s are valid keys, whichever field each lands in. Where the type is not the size
/// and alignment of two `u64`s (a std that changed it), std's own state is used instead: the
/// runs hash as they did before this module.
fn keyed(k0: u64, k1: u64) -> RandomState {
    if std::mem::size_of::<RandomState>() != std::mem::size_of::<[u64; 2]>()
        || std::mem::align_of::<RandomState>() != std::mem::align_of::<u64>()
    {
        return RandomState::new();
    }
    let keys = [k0, k1];
    // SAFETY: same size (checked above); `RandomState` is two `u64` keys, for which every
    // bit pattern is valid.
    unsafe { std::mem::transmute_copy::<[u64; 2], RandomState>(&keys) }
}

/// splitmix64's finaliser: a bijection whose outputs for neighbouring inputs share nothing,
/// also the seeding of the runs' xorshift generators (`points::set_role`, `sched::Strategy`).
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hashes(states: &[RandomState]) -> Vec<u64> {
        states.iter().map(|s| s.hash_one("covcon")).collect()
    }

    /// One test in this process: the keyed flag and the counters are process-wide.
    #[test]
    fn a_test_hashes_alike_in_every_run_and_unlike_other_tests() {
        // Outside a worker: std's, a new key for each state.
        let std_states = [random_state(), random_state()];
        let std_hashes = hashes(&std_states);
        assert_ne!(std_hashes[0], std_hashes[1]);

        make_keyed();
        let run = |id: u64| {
            reset(id);
            hashes(&[random_state(), random_state(), random_state()])
        };
        let first = run(7);
        assert_eq!(run(7), first, "two runs of test 7");
        // The states of one run differ from each other, and from another test's.
        assert_ne!(first[0], first[1]);
        assert_ne!(first[1], first[2]);
        let other = run(8);
        assert!(
            other.iter().all(|h| !first.contains(h)),
            "{first:?} {other:?}"
        );
        // A keyed state behaves as std's: its clones hash alike.
        reset(7);
        let state = random_state();
        assert_eq!(state.clone().hash_one(5u32), state.hash_one(5u32));
    }
}
