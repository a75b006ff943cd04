//! The floor of a concurrent test's cost: the cheapest possible two-thread test on this
//! machine, against which covcon's runs per second are read (`cargo covcon bench --floor`,
//! `scripts/throughput-bench.py`, the runner benchmark).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Nanoseconds per run of the cheapest possible two-thread test, over `rounds` runs: a
/// persistent helper thread and the calling thread start together by spinning on a round
/// counter (spin briefly, then yield), each make one `fetch_add`, and the calling thread waits
/// for the helper to finish.
pub fn floor_ns(rounds: u64) -> f64 {
    timed_rounds(rounds).0
}

/// [`floor_ns`], and the shared counter's final value (both threads' calls, every round).
fn timed_rounds(rounds: u64) -> (f64, u64) {
    let round = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let value = Arc::new(AtomicU64::new(0));
    let helper = {
        let (round, done, value) = (round.clone(), done.clone(), value.clone());
        std::thread::spawn(move || {
            for r in 1..=rounds {
                wait_for(&round, r);
                black_box(value.fetch_add(1, Ordering::SeqCst));
                done.store(r, Ordering::Release);
            }
        })
    };
    let started = Instant::now();
    for r in 1..=rounds {
        round.store(r, Ordering::Release);
        black_box(value.fetch_add(1, Ordering::SeqCst));
        wait_for(&done, r);
    }
    let elapsed = started.elapsed();
    helper.join().expect("helper thread");
    (
        elapsed.as_nanos() as f64 / rounds.max(1) as f64,
        value.load(Ordering::SeqCst),
    )
}

fn wait_for(counter: &AtomicU64, target: u64) {
    let mut spins = 0u32;
    while counter.load(Ordering::Acquire) < target {
        spins += 1;
        if spins < 1_000 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every round is made by both threads: the shared counter ends at twice the rounds.
    #[test]
    fn the_floor_runs_each_round_on_both_threads() {
        let (ns, calls) = super::timed_rounds(1_000);
        assert_eq!(calls, 2_000);
        assert!(ns > 0.0);
    }
}
