//! A small hand-written concurrent test, the kind `cargo covcon mutants --test-cmd` scores.

use meter::Meter;
use std::sync::Arc;

#[test]
fn records_from_two_threads_keep_hits_and_bytes_together() {
    let meter = Arc::new(Meter::new());
    let writer = {
        let meter = Arc::clone(&meter);
        std::thread::spawn(move || {
            for _ in 0..20_000 {
                meter.record(1);
            }
        })
    };
    for _ in 0..20_000 {
        let (hits, bytes) = meter.snapshot();
        assert_eq!(hits, bytes, "a snapshot saw a hit without its bytes");
    }
    writer.join().unwrap();
    assert_eq!(meter.snapshot(), (20_000, 20_000));
}
