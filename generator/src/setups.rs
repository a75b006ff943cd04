//! Constructor arguments that make a test's setup slow, or a call loop for ever.
//!
//! A type's own constants become argument values (`OwnValues`: a size and its neighbours), and
//! some of them cost more than a test is worth when a constructor takes them: moka 0.9's
//! `SegmentedCache::new(1, 3072)` builds 4,096 caches, 60 ms a run (8,192 for `3073`, 540 ms),
//! where `new(1, 4)` takes 0.4 ms; every sequential order of its verdicts and every schedule of
//! its pair's exploration builds it again, and the type ran 32 tests in 40 s. The worker
//! measures each run's setup (building the instances and prefix, and dropping them:
//! `Response::setup_us`); a constructor argument seen in slow setups only is drawn again, as a
//! call that hung alone is.
//!
//! A setup is slow when it takes [`SLOW_SETUP`] or more and [`SLOW_FACTOR`] times the type's
//! fastest: a type whose every setup is slow (a database opened per test) has no argument to
//! avoid. A value is avoided after [`SLOW_SIGHTINGS`] slow setups and no fast one, so that a
//! run descheduled once on a loaded machine does not cost a value, and a value also seen in a
//! fast setup (slow only beside a long prefix) is kept. Nothing is learned while setups are
//! fast, so the tests of a seed stay the same there.
//!
//! A test whose failure a call running alone until the run's timeout explained
//! (`Execution::looped_alone`: a loop, not a wait the watchdog ends in milliseconds) costs
//! that timeout again in each of its verdict's orders: atomicring 0.5.0's
//! `with_capacity(1)` makes a ring that never holds an item (one slot stays free), whose
//! `push_overwrite` retries for ever, and the campaign spent 9 of every 10 seconds waiting for
//! those runs. The constructor arguments of [`LOOP_SIGHTINGS`] such tests are drawn again, as
//! slow ones are; a wait that blocks for good is ended in milliseconds and teaches nothing.
//!
//! A constructor argument seen in [`FAILED_SIGHTINGS`] failed setups and in no setup that
//! succeeded is drawn again too: concurrent-queue's `bounded(0)` panics ("capacity must be
//! positive"), and 71,754 of `ConcurrentQueue`'s 323,876 tests in 15 s were such setups.

use crate::testcase::{Call, TestCase};
use std::collections::HashMap;

/// The least setup time that can be slow, in microseconds.
const SLOW_SETUP: u64 = 20_000;

/// How many times the type's fastest setup a slow one takes at least.
const SLOW_FACTOR: u64 = 16;

/// Slow setups (and no fast one) before a constructor argument is avoided.
const SLOW_SIGHTINGS: u32 = 2;

/// Tests whose call looped alone before a constructor argument of theirs is avoided.
const LOOP_SIGHTINGS: u32 = 2;

/// Failed setups (and no successful one) before a constructor argument is avoided.
const FAILED_SIGHTINGS: u32 = 4;

/// A constructor argument: the constructor's name, the argument's position and its `Debug`
/// text (`bounded`'s `0` is not `with_capacity`'s).
type Arg = (String, usize, String);

/// What the generator knows of its tests' setup times.
#[derive(Debug, Clone, Default)]
pub(crate) struct SlowSetups {
    /// The fastest setup measured, in microseconds.
    fastest: Option<u64>,
    /// Per constructor argument (its position and `Debug` text): setups seen [slow, fast].
    seen: HashMap<Arg, [u32; 2]>,
    /// Per constructor argument: tests whose call looped alone (`Execution::looped_alone`).
    looped: HashMap<Arg, u32>,
    /// Per constructor argument: setups seen [failed, succeeded] (`Execution::setup_failed`).
    built: HashMap<Arg, [u32; 2]>,
    /// The constructor arguments of each test handed out and not yet recorded.
    outstanding: HashMap<u64, Vec<Arg>>,
}

impl SlowSetups {
    /// Keeps `test`'s constructor arguments until its execution is recorded.
    pub(crate) fn handed_out(&mut self, test: &TestCase) {
        let args = test.instances.iter().flat_map(arguments).collect();
        self.outstanding.insert(test.id, args);
    }

    /// Learns from the setup time of test `id` (`None`: not measured, or the run failed),
    /// whether a call of it looped alone and whether its setup failed.
    pub(crate) fn record(
        &mut self,
        id: u64,
        setup_us: Option<u64>,
        looped_alone: bool,
        setup_failed: bool,
    ) {
        let Some(args) = self.outstanding.remove(&id) else {
            return;
        };
        for arg in &args {
            self.built.entry(arg.clone()).or_default()[usize::from(!setup_failed)] += 1;
        }
        if looped_alone {
            for arg in &args {
                *self.looped.entry(arg.clone()).or_default() += 1;
            }
        }
        let Some(us) = setup_us else {
            return;
        };
        let fastest = *self.fastest.get_or_insert(us);
        self.fastest = Some(fastest.min(us));
        let slow = us >= SLOW_SETUP && us >= fastest.saturating_mul(SLOW_FACTOR);
        for arg in args {
            self.seen.entry(arg).or_default()[usize::from(!slow)] += 1;
        }
    }

    /// Whether `call` (a constructor's) takes an argument seen in slow setups only, in
    /// [`LOOP_SIGHTINGS`] tests whose call looped alone, or in failed setups only.
    pub(crate) fn avoided(&self, call: &Call) -> bool {
        let failing = |arg: &Arg| {
            self.built
                .get(arg)
                .is_some_and(|&[failed, built]| failed >= FAILED_SIGHTINGS && built == 0)
        };
        let slow = |arg: &Arg| {
            self.seen
                .get(arg)
                .is_some_and(|&[slow, fast]| slow >= SLOW_SIGHTINGS && fast == 0)
        };
        let looped = |arg: &Arg| {
            self.looped
                .get(arg)
                .is_some_and(|&tests| tests >= LOOP_SIGHTINGS)
        };
        arguments(call).any(|arg| slow(&arg) || looped(&arg) || failing(&arg))
    }
}

/// A constructor call's arguments, each with its constructor and position.
fn arguments(call: &Call) -> impl Iterator<Item = Arg> + '_ {
    call.args
        .iter()
        .enumerate()
        .map(|(i, arg)| (call.method.clone(), i, format!("{arg:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testcase::Value;

    fn call(args: &[i128]) -> Call {
        Call::new("new", 0, args.iter().map(|&n| Value::Int(n)).collect())
    }

    fn test(id: u64, args: &[i128]) -> TestCase {
        TestCase {
            id,
            type_path: "k::T".into(),
            pair: ["a".into(), "b".into()],
            instances: vec![call(args)],
            handles: Vec::new(),
            prefix: Vec::new(),
            threads: [Vec::new(), Vec::new()],
            noise_seed: 0,
            control: Default::default(),
        }
    }

    /// Setups of `(args, µs)` in order, then whether each of `probes` is avoided.
    fn learn(setups: &[(&[i128], u64)], probes: &[&[i128]]) -> Vec<bool> {
        let mut learned = SlowSetups::default();
        for (id, (args, us)) in setups.iter().enumerate() {
            learned.handed_out(&test(id as u64, args));
            learned.record(id as u64, Some(*us), false, false);
        }
        probes
            .iter()
            .map(|args| learned.avoided(&call(args)))
            .collect()
    }

    #[test]
    fn an_argument_seen_only_in_slow_setups_twice_is_avoided() {
        // moka's SegmentedCache: 4 segments take 400 µs, 3072 take 60 ms.
        let setups: &[(&[i128], u64)] = &[
            (&[1, 4], 400),
            (&[1, 3072], 60_000),
            (&[0, 3072], 62_000),
            (&[0, 4], 380),
        ];
        assert_eq!(
            learn(setups, &[&[1, 4], &[0, 3072], &[5, 3072], &[3072, 4]]),
            [false, true, true, false],
            "3072 as the second argument only; the first arguments were seen fast too"
        );
        // Once slow only, it is not avoided yet.
        assert_eq!(learn(&setups[..2], &[&[1, 3072]]), [false]);
    }

    #[test]
    fn a_value_also_seen_in_a_fast_setup_is_kept() {
        let setups: &[(&[i128], u64)] =
            &[(&[8], 300), (&[8], 50_000), (&[8], 50_000), (&[8], 50_000)];
        assert_eq!(learn(setups, &[&[8]]), [false]);
    }

    #[test]
    fn nothing_is_slow_when_every_setup_takes_about_as_long() {
        // A database opened per test: 25-40 ms every time.
        let setups: &[(&[i128], u64)] = &[
            (&[1], 25_000),
            (&[2], 40_000),
            (&[2], 39_000),
            (&[3], 26_000),
        ];
        assert_eq!(learn(setups, &[&[1], &[2], &[3]]), [false, false, false]);
    }

    #[test]
    fn a_setup_not_measured_teaches_nothing() {
        let mut learned = SlowSetups::default();
        for id in 0..3 {
            learned.handed_out(&test(id, &[3072]));
            learned.record(id, None, false, false);
        }
        learned.handed_out(&test(9, &[4]));
        learned.record(9, Some(300), false, false);
        assert!(!learned.avoided(&call(&[3072])));
        assert!(learned.outstanding.is_empty());
    }

    /// atomicring's `with_capacity(1)`: a call looping alone (failed runs: no setup time) in
    /// two tests built with `1` avoids it; `4`, seen once in such a test beside them, not yet.
    #[test]
    fn an_argument_of_two_tests_whose_call_looped_alone_is_avoided() {
        let mut learned = SlowSetups::default();
        let runs: &[(&[i128], Option<u64>, bool)] = &[
            (&[1], Some(300), false),
            (&[1], None, true),
            (&[4], None, true),
            (&[4], Some(300), false),
        ];
        for (id, (args, us, looped)) in runs.iter().enumerate() {
            learned.handed_out(&test(id as u64, args));
            learned.record(id as u64, *us, *looped, false);
        }
        assert_eq!(
            [learned.avoided(&call(&[1])), learned.avoided(&call(&[4]))],
            [false, false],
            "one such test each"
        );
        learned.handed_out(&test(9, &[1]));
        learned.record(9, None, true, false);
        assert_eq!(
            [learned.avoided(&call(&[1])), learned.avoided(&call(&[4]))],
            [true, false]
        );
    }

    /// concurrent-queue's `bounded(0)` panics ("capacity must be positive"): an argument
    /// seen only in failed setups is avoided after [`FAILED_SIGHTINGS`] of them; one also
    /// seen in a setup that succeeded (a prefix call that failed beside it) is kept.
    #[test]
    fn an_argument_seen_only_in_failed_setups_is_avoided() {
        let mut learned = SlowSetups::default();
        let mut id = 0;
        let mut run = |learned: &mut SlowSetups, args: &[i128], failed: bool| {
            learned.handed_out(&test(id, args));
            learned.record(id, None, false, failed);
            id += 1;
        };
        for _ in 0..FAILED_SIGHTINGS - 1 {
            run(&mut learned, &[0], true);
            run(&mut learned, &[3], true);
        }
        assert!(!learned.avoided(&call(&[0])), "not yet");
        run(&mut learned, &[3], false);
        run(&mut learned, &[0], true);
        run(&mut learned, &[3], true);
        assert_eq!(
            [learned.avoided(&call(&[0])), learned.avoided(&call(&[3]))],
            [true, false]
        );
    }
}
