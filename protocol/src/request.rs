//! What covcon asks a worker: [`Request`], with the schedule [`Noise`] and [`Control`] of a run.

use crate::field::{needed, put, Field, Op, Strategy};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// How long a run may take when a request does not say (`timeout_ms`).
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

/// A request to a worker, about test cases of type `T`.
///
/// Decoding makes every request one a worker can run: a `repeat` of 0 is 1, and an `order`'s
/// thread above 1 is thread 1.
#[derive(Debug, Clone, PartialEq)]
pub enum Request<T> {
    /// Build the instances, run the prefix on one thread, then the two suffixes on two threads
    /// started together (spinning on an atomic).
    Concurrent {
        test: T,
        noise: Noise,
        timeout_ms: u64,
        /// Whether the response carries what only the results oracle reads: the `Debug` texts
        /// of the results and final state, and a passing run's events (without them a
        /// passing run answers only the pairs it covered, and a trivial run is cheaper).
        /// True when left out.
        capture: bool,
        /// Runs of the test back to back, each on a fresh instance with the next noise seed
        /// (`seed`, `seed + 1`, …), answered once: the first run that did not pass, or the
        /// last. Amortises the protocol's cost over several runs of the same test. Written
        /// only when not 1.
        repeat: u64,
        /// No new run of the `repeat` once this many milliseconds passed since the worker
        /// took the request: a batch meant to be about a second of runs stays one when its
        /// runs turn out slower than the one its count was drawn from.
        repeat_for_ms: Option<u64>,
    },
    /// Build the instances, run the prefix, then the suffix calls one after another on one
    /// thread in the given order: each entry is (thread, index into that thread's calls).
    /// With `noise`, the calls are paced by it as a concurrent run's are (each call's points
    /// draw from a seed of its own) — only the calls in `paced`, or every call when it is
    /// empty: a failure that waiting alone brings on shows here too.
    Sequential {
        test: T,
        order: Vec<(u8, u32)>,
        timeout_ms: u64,
        /// Written only when it perturbs something ([`Noise::is_none`]).
        noise: Noise,
        paced: Vec<(u8, u32)>,
        /// Each call on the thread it ran on concurrently (thread 1's on the worker's helper
        /// thread), else every call on one thread.
        own_threads: bool,
        /// As in `Concurrent`: the panic oracle's verdicts read only how the order ended.
        capture: bool,
    },
    /// Answered with a `Passed` response with test id 0; used to check a worker is alive.
    Ping,
    /// Several concurrent runs back to back on the worker's two persistent threads, each as
    /// a `Concurrent` request with its own noise and the shared timeout, answered with one
    /// response line per run, in order, each written as soon as its run ends. A deadlock in
    /// one run is answered for that run and ends the worker: the runs after it are not
    /// answered, and the pool sends them again to a fresh worker.
    Batch {
        tests: Vec<BatchRun<T>>,
        timeout_ms: u64,
        /// As in `Concurrent`, for every run.
        capture: bool,
    },
}

/// One concurrent test of a [`Request::Batch`].
#[derive(Debug, Clone, PartialEq)]
pub struct BatchRun<T> {
    pub test: T,
    pub noise: Noise,
    /// As in `Concurrent`: runs of the test back to back, answered once. Each test of a
    /// batch has its own (the campaign gives a pair's later tests more runs). Written only
    /// when not 1; a 0 decodes as 1.
    pub repeat: u64,
    /// As in `Concurrent`, from when the worker starts this test's runs.
    pub repeat_for_ms: Option<u64>,
}

impl<T> BatchRun<T> {
    /// One run of `test` with `noise`.
    pub fn once(test: T, noise: Noise) -> BatchRun<T> {
        BatchRun {
            test,
            noise,
            repeat: 1,
            repeat_for_ms: None,
        }
    }
}

impl<T> Request<T> {
    /// The test ids of the responses this request is answered with, in order (`id` tells a
    /// test's).
    pub fn answer_ids(&self, id: impl Fn(&T) -> u64) -> Vec<u64> {
        match self {
            Request::Concurrent { test, .. } | Request::Sequential { test, .. } => vec![id(test)],
            Request::Ping => vec![0],
            Request::Batch { tests, .. } => tests.iter().map(|run| id(&run.test)).collect(),
        }
    }
}

/// Schedule perturbation at the schedule points of the instrumented copy (ConTest-style
/// noise): at each point, with these probabilities, yield, spin briefly or sleep briefly.
/// Every field may be left out (then zero, or free), and the whole noise may be `null`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    pub seed: u64,
    pub yield_p: f64,
    pub spin_p: f64,
    pub sleep_p: f64,
    /// How a concurrent run is scheduled: free (the OS and the noise above decide) or
    /// controlled (one thread at a time, switching at schedule points as `seed` and the
    /// strategy choose; the noise is then unused). Sequential runs ignore it. Written only
    /// when not free.
    pub control: Control,
    /// A sequential run's real pause before each paced call, in microseconds: time passing
    /// between a thread's calls, as it did in a slow concurrent run. Written only when not 0.
    pub pause_us: u64,
}

impl Noise {
    /// No perturbation at all.
    pub fn none() -> Noise {
        Noise {
            seed: 0,
            yield_p: 0.0,
            spin_p: 0.0,
            sleep_p: 0.0,
            control: Control::Free,
            pause_us: 0,
        }
    }

    /// Whether it perturbs nothing.
    pub fn is_none(&self) -> bool {
        self.yield_p + self.spin_p + self.sleep_p <= 0.0
            && self.control.is_free()
            && self.pause_us == 0
    }

    /// The probabilities of yielding, spinning and sleeping at a point, in that order.
    pub fn probabilities(&self) -> [f64; 3] {
        [self.yield_p, self.spin_p, self.sleep_p]
    }
}

impl Default for Noise {
    fn default() -> Noise {
        Noise::none()
    }
}

/// How a test's concurrent runs are scheduled (`oracle/runtime/src/sched.rs` runs them). A
/// test case carries its own (`generator::TestCase::control`), which covcon sends in the
/// run's [`Noise`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Control {
    /// Both threads run at once; noise at the schedule points.
    #[default]
    Free,
    /// PCT (Burckhardt et al., ASPLOS 2010): random thread priorities and `depth - 1`
    /// priority change points over about `steps` schedule points.
    Pct { depth: u8, steps: u32 },
    /// At every schedule point, either thread with even odds.
    Random,
    /// Thread `first` runs first and the running thread is switched out at the schedule
    /// points numbered in `at` (0 for none): bounded exhaustive exploration.
    Preempt { first: u8, at: [u32; 2] },
}

impl Control {
    pub fn is_free(&self) -> bool {
        *self == Control::Free
    }

    /// A short name for reports: `free`, `pct-2`, `random`, `preempt`.
    pub fn name(&self) -> String {
        match self {
            Control::Free => "free".into(),
            Control::Pct { depth, .. } => format!("pct-{depth}"),
            Control::Random => "random".into(),
            Control::Preempt { .. } => "preempt".into(),
        }
    }
}

// Writing. Objects are written as maps (`serialize_map`), which is what JSON writes a struct
// as; fields a reader defaults are left out where the type's docs say so.

impl<T: Serialize> Serialize for Request<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self {
            Request::Concurrent {
                test,
                noise,
                timeout_ms,
                capture,
                repeat,
                repeat_for_ms,
            } => {
                put(&mut map, Field::Op, Op::Concurrent.name())?;
                put(&mut map, Field::Test, test)?;
                put(&mut map, Field::Noise, noise)?;
                put(&mut map, Field::TimeoutMs, timeout_ms)?;
                put(&mut map, Field::Capture, capture)?;
                if *repeat != 1 {
                    put(&mut map, Field::Repeat, repeat)?;
                }
                if let Some(ms) = repeat_for_ms {
                    put(&mut map, Field::RepeatForMs, ms)?;
                }
            }
            Request::Sequential {
                test,
                order,
                timeout_ms,
                noise,
                paced,
                own_threads,
                capture,
            } => {
                put(&mut map, Field::Op, Op::Sequential.name())?;
                put(&mut map, Field::Test, test)?;
                put(&mut map, Field::Order, order)?;
                put(&mut map, Field::TimeoutMs, timeout_ms)?;
                if !noise.is_none() {
                    put(&mut map, Field::Noise, noise)?;
                }
                if !paced.is_empty() {
                    put(&mut map, Field::Paced, paced)?;
                }
                if *own_threads {
                    put(&mut map, Field::OwnThreads, own_threads)?;
                }
                put(&mut map, Field::Capture, capture)?;
            }
            Request::Ping => put(&mut map, Field::Op, Op::Ping.name())?,
            Request::Batch {
                tests,
                timeout_ms,
                capture,
            } => {
                put(&mut map, Field::Op, Op::Batch.name())?;
                put(&mut map, Field::Tests, tests)?;
                put(&mut map, Field::TimeoutMs, timeout_ms)?;
                put(&mut map, Field::Capture, capture)?;
            }
        }
        map.end()
    }
}

impl<T: Serialize> Serialize for BatchRun<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        put(&mut map, Field::Test, &self.test)?;
        put(&mut map, Field::Noise, &self.noise)?;
        if self.repeat != 1 {
            put(&mut map, Field::Repeat, &self.repeat)?;
        }
        if let Some(ms) = self.repeat_for_ms {
            put(&mut map, Field::RepeatForMs, &ms)?;
        }
        map.end()
    }
}

impl Serialize for Noise {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        put(&mut map, Field::Seed, &self.seed)?;
        put(&mut map, Field::YieldP, &self.yield_p)?;
        put(&mut map, Field::SpinP, &self.spin_p)?;
        put(&mut map, Field::SleepP, &self.sleep_p)?;
        if !self.control.is_free() {
            put(&mut map, Field::Control, &self.control)?;
        }
        if self.pause_us != 0 {
            put(&mut map, Field::PauseUs, &self.pause_us)?;
        }
        map.end()
    }
}

impl Serialize for Control {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self {
            Control::Free => put(&mut map, Field::Strategy, Strategy::Free.name())?,
            Control::Pct { depth, steps } => {
                put(&mut map, Field::Strategy, Strategy::Pct.name())?;
                put(&mut map, Field::Depth, depth)?;
                put(&mut map, Field::Steps, steps)?;
            }
            Control::Random => put(&mut map, Field::Strategy, Strategy::Random.name())?,
            Control::Preempt { first, at } => {
                put(&mut map, Field::Strategy, Strategy::Preempt.name())?;
                put(&mut map, Field::First, first)?;
                put(&mut map, Field::At, at)?;
            }
        }
        map.end()
    }
}

// Reading, straight from the line's text into these types: a worker reads a request per test,
// and building a `serde_json::Value` tree first was a quarter of its time per test.

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Request<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Request<T>, D::Error> {
        d.deserialize_map(RequestVisitor(PhantomData))
    }
}

struct RequestVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for RequestVisitor<T> {
    type Value = Request<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a covcon request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Request<T>, A::Error> {
        // The fields of every kind of request, then the kind (`op` may come last).
        let mut op: Option<String> = None;
        let mut test = None;
        let mut noise = Noise::none();
        let mut order = Vec::new();
        let mut paced = Vec::new();
        let mut own_threads = false;
        let mut tests = Vec::new();
        let (mut timeout_ms, mut repeat, mut capture) = (DEFAULT_TIMEOUT_MS, 1, true);
        let mut repeat_for_ms = None;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Op => op = Some(map.next_value()?),
                Field::Test => test = Some(map.next_value::<T>()?),
                Field::Noise => noise = map.next_value()?,
                Field::Order => order = map.next_value::<Vec<(u8, u32)>>()?,
                Field::Paced => paced = map.next_value::<Vec<(u8, u32)>>()?,
                Field::OwnThreads => own_threads = map.next_value()?,
                Field::Tests => tests = map.next_value()?,
                Field::TimeoutMs => timeout_ms = map.next_value()?,
                Field::Repeat => repeat = map.next_value::<u64>()?.max(1),
                Field::RepeatForMs => repeat_for_ms = map.next_value()?,
                Field::Capture => capture = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let op = op.ok_or_else(|| de::Error::custom("request without `op`"))?;
        let the_test = |test: Option<T>| {
            test.ok_or_else(|| de::Error::custom(format!("`{op}` request without `test`")))
        };
        Ok(match Op::of(&op) {
            Some(Op::Ping) => Request::Ping,
            Some(Op::Concurrent) => Request::Concurrent {
                test: the_test(test)?,
                noise,
                timeout_ms,
                capture,
                repeat,
                repeat_for_ms,
            },
            Some(Op::Sequential) => Request::Sequential {
                test: the_test(test)?,
                order: order.into_iter().map(|(t, i)| (t.min(1), i)).collect(),
                timeout_ms,
                noise,
                paced,
                own_threads,
                capture,
            },
            Some(Op::Batch) => Request::Batch {
                tests,
                timeout_ms,
                capture,
            },
            None => return Err(de::Error::custom(format!("unknown request `{op}`"))),
        })
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for BatchRun<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<BatchRun<T>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = BatchRun<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a run of a batch: {\"test\": …, \"noise\": …}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BatchRun<T>, A::Error> {
                let (mut test, mut noise, mut repeat) = (None, Noise::none(), 1);
                let mut repeat_for_ms = None;
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::Test => test = Some(map.next_value()?),
                        Field::Noise => noise = map.next_value()?,
                        Field::Repeat => repeat = map.next_value::<u64>()?.max(1),
                        Field::RepeatForMs => repeat_for_ms = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let test = test.ok_or_else(|| de::Error::custom("batch run without `test`"))?;
                Ok(BatchRun {
                    test,
                    noise,
                    repeat,
                    repeat_for_ms,
                })
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

impl<'de> Deserialize<'de> for Noise {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Noise, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Noise;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("schedule noise: {\"seed\": …, \"yield_p\": …, …}")
            }
            fn visit_unit<E>(self) -> Result<Noise, E> {
                Ok(Noise::none())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Noise, A::Error> {
                let mut noise = Noise::none();
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::Seed => noise.seed = map.next_value()?,
                        Field::YieldP => noise.yield_p = map.next_value()?,
                        Field::SpinP => noise.spin_p = map.next_value()?,
                        Field::SleepP => noise.sleep_p = map.next_value()?,
                        Field::PauseUs => noise.pause_us = map.next_value()?,
                        Field::Control => noise.control = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(noise)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Control {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Control, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Control;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a schedule control: {\"strategy\": \"pct\", …}")
            }
            fn visit_unit<E>(self) -> Result<Control, E> {
                Ok(Control::Free)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Control, A::Error> {
                let mut strategy = None::<String>;
                let (mut depth, mut steps, mut first, mut at) = (2u8, 0u32, 0u8, [0u32; 2]);
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::Strategy => strategy = Some(map.next_value()?),
                        Field::Depth => depth = map.next_value()?,
                        Field::Steps => steps = map.next_value()?,
                        Field::First => first = map.next_value()?,
                        Field::At => at = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let strategy = needed(strategy, Field::Strategy)?;
                match Strategy::of(&strategy) {
                    Some(Strategy::Free) => Ok(Control::Free),
                    Some(Strategy::Pct) => Ok(Control::Pct { depth, steps }),
                    Some(Strategy::Random) => Ok(Control::Random),
                    Some(Strategy::Preempt) => Ok(Control::Preempt { first, at }),
                    None => Err(de::Error::custom(format!(
                        "unknown schedule strategy `{strategy}`"
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value as Json;

    /// Decodes `line` (its test case as a JSON value) and describes it in one line, or gives
    /// the error.
    fn check(line: &str, expect: &str) {
        let got = match serde_json::from_str::<Request<Json>>(line) {
            Ok(request) => describe(&request),
            Err(e) => format!("error: {e}"),
        };
        assert_eq!(got, expect, "{line}");
    }

    fn describe(request: &Request<Json>) -> String {
        let noise = |n: &Noise| format!("seed {} p {:?}", n.seed, n.probabilities());
        match request {
            Request::Ping => "ping".to_string(),
            Request::Concurrent {
                test,
                noise: n,
                timeout_ms,
                capture,
                repeat,
                repeat_for_ms,
            } => format!(
                "concurrent {} {} repeat {repeat}{}; timeout {timeout_ms}; capture {capture}",
                test["id"],
                noise(n),
                repeat_for_ms
                    .map(|ms| format!(" for {ms} ms"))
                    .unwrap_or_default()
            ),
            Request::Sequential {
                test,
                order,
                timeout_ms,
                noise: n,
                paced,
                own_threads,
                capture,
            } => format!(
                "sequential {} {order:?} {} paced {paced:?}{}; timeout {timeout_ms}; capture {capture}",
                test["id"],
                noise(n),
                if *own_threads { " own threads" } else { "" }
            ),
            Request::Batch {
                tests,
                timeout_ms,
                capture,
            } => format!(
                "batch {:?}; timeout {timeout_ms}; capture {capture}",
                tests
                    .iter()
                    .map(|r| (
                        r.test["id"].as_u64().unwrap_or(0),
                        r.noise.seed,
                        r.repeat,
                        r.repeat_for_ms
                    ))
                    .collect::<Vec<_>>()
            ),
        }
    }

    const TEST: &str = r#"{"id": 7, "type_path": "c::T"}"#;

    #[test]
    fn every_request_of_the_protocol_decodes() {
        check(r#"{"op":"ping"}"#, "ping");
        check(
            &format!(
                r#"{{"op":"concurrent","test":{TEST},"noise":{{"seed":5,"yield_p":0.5,"spin_p":0.25,"sleep_p":0.0}},"timeout_ms":100}}"#
            ),
            "concurrent 7 seed 5 p [0.5, 0.25, 0.0] repeat 1; timeout 100; capture true",
        );
        check(
            &format!(r#"{{"test":{TEST},"order":[[0,0],[3,1]],"timeout_ms":9,"op":"sequential"}}"#),
            "sequential 7 [(0, 0), (1, 1)] seed 0 p [0.0, 0.0, 0.0] paced []; timeout 9; capture true",
        );
        check(
            &format!(
                r#"{{"op":"sequential","test":{TEST},"order":[[1,0]],"noise":{{"seed":4,"yield_p":0.25,"spin_p":0.25,"sleep_p":0.1}},"paced":[[1,0]],"own_threads":true}}"#
            ),
            "sequential 7 [(1, 0)] seed 4 p [0.25, 0.25, 0.1] paced [(1, 0)] own threads; timeout 10000; capture true",
        );
        check(
            &format!(
                r#"{{"op":"batch","tests":[{{"test":{TEST},"noise":{{"seed":1}}}},{{"noise":{{"seed":2}},"test":{TEST},"repeat":8,"repeat_for_ms":20}},{{"test":{TEST},"repeat":0}}],"timeout_ms":50,"capture":false}}"#
            ),
            "batch [(7, 1, 1, None), (7, 2, 8, Some(20)), (7, 0, 1, None)]; timeout 50; capture false",
        );
        check(
            &format!(r#"{{"op":"concurrent","test":{TEST},"noise":null,"repeat":0}}"#),
            "concurrent 7 seed 0 p [0.0, 0.0, 0.0] repeat 1; timeout 10000; capture true",
        );
        check(
            &format!(
                r#"{{"op":"concurrent","test":{TEST},"noise":null,"repeat":5000,"repeat_for_ms":1000,"later":[1]}}"#
            ),
            "concurrent 7 seed 0 p [0.0, 0.0, 0.0] repeat 5000 for 1000 ms; timeout 10000; capture true",
        );
    }

    #[test]
    fn malformed_requests_are_errors_not_panics() {
        check(
            r#"{"op":"launch"}"#,
            "error: unknown request `launch` at line 1 column 15",
        );
        check(
            r#"{"timeout_ms":9}"#,
            "error: request without `op` at line 1 column 16",
        );
        check(
            r#"{"op":"concurrent"}"#,
            "error: `concurrent` request without `test` at line 1 column 19",
        );
        check(
            r#"{"op":"batch","tests":[{"noise":null}]}"#,
            "error: batch run without `test` at line 1 column 37",
        );
        check(
            r#"{"op":"ping","noise":{"control":{"strategy":"fair"}}}"#,
            "error: unknown schedule strategy `fair` at line 1 column 51",
        );
    }

    fn noise() -> Noise {
        Noise {
            seed: 5,
            yield_p: 0.5,
            spin_p: 0.25,
            sleep_p: 0.0,
            control: Control::Free,
            pause_us: 0,
        }
    }

    fn controlled() -> Noise {
        Noise {
            control: Control::Preempt {
                first: 1,
                at: [3, 0],
            },
            pause_us: 40,
            ..noise()
        }
    }

    /// Requests (about test 7, written `7` here) are the bytes covcon wrote when
    /// `oracle/src/protocol.rs` derived their serde impls, and each reads back as it was.
    #[test]
    fn requests_are_written_as_before_and_read_back() {
        let requests: [(Request<u64>, &str); 7] = [
            (Request::Ping, r#"{"op":"ping"}"#),
            (
                Request::Concurrent {
                    test: 7,
                    noise: noise(),
                    timeout_ms: 100,
                    capture: true,
                    repeat: 1,
                    repeat_for_ms: None,
                },
                r#"{"op":"concurrent","test":7,"noise":{"seed":5,"yield_p":0.5,"spin_p":0.25,"sleep_p":0.0},"timeout_ms":100,"capture":true}"#,
            ),
            (
                Request::Concurrent {
                    test: 7,
                    noise: controlled(),
                    timeout_ms: 100,
                    capture: false,
                    repeat: 5000,
                    repeat_for_ms: Some(1000),
                },
                r#"{"op":"concurrent","test":7,"noise":{"seed":5,"yield_p":0.5,"spin_p":0.25,"sleep_p":0.0,"control":{"strategy":"preempt","first":1,"at":[3,0]},"pause_us":40},"timeout_ms":100,"capture":false,"repeat":5000,"repeat_for_ms":1000}"#,
            ),
            (
                Request::Sequential {
                    test: 7,
                    order: vec![(0, 0), (1, 0)],
                    timeout_ms: 9,
                    noise: Noise::none(),
                    paced: vec![],
                    own_threads: false,
                    capture: true,
                },
                r#"{"op":"sequential","test":7,"order":[[0,0],[1,0]],"timeout_ms":9,"capture":true}"#,
            ),
            (
                Request::Sequential {
                    test: 7,
                    order: vec![(1, 0), (0, 0)],
                    timeout_ms: 9,
                    noise: Noise {
                        control: Control::Random,
                        ..noise()
                    },
                    paced: vec![(1, 0)],
                    own_threads: true,
                    capture: false,
                },
                r#"{"op":"sequential","test":7,"order":[[1,0],[0,0]],"timeout_ms":9,"noise":{"seed":5,"yield_p":0.5,"spin_p":0.25,"sleep_p":0.0,"control":{"strategy":"random"}},"paced":[[1,0]],"own_threads":true,"capture":false}"#,
            ),
            (
                Request::Batch {
                    tests: vec![
                        BatchRun::once(7, noise()),
                        BatchRun {
                            test: 7,
                            noise: controlled(),
                            repeat: 3,
                            repeat_for_ms: Some(20),
                        },
                    ],
                    timeout_ms: 50,
                    capture: false,
                },
                r#"{"op":"batch","tests":[{"test":7,"noise":{"seed":5,"yield_p":0.5,"spin_p":0.25,"sleep_p":0.0}},{"test":7,"noise":{"seed":5,"yield_p":0.5,"spin_p":0.25,"sleep_p":0.0,"control":{"strategy":"preempt","first":1,"at":[3,0]},"pause_us":40},"repeat":3,"repeat_for_ms":20}],"timeout_ms":50,"capture":false}"#,
            ),
            (
                Request::Batch {
                    tests: vec![],
                    timeout_ms: 50,
                    capture: true,
                },
                r#"{"op":"batch","tests":[],"timeout_ms":50,"capture":true}"#,
            ),
        ];
        for (request, line) in requests {
            assert_eq!(serde_json::to_string(&request).unwrap(), line);
            assert_eq!(serde_json::from_str::<Request<u64>>(line).unwrap(), request);
        }
    }

    /// Every control as a test case saves it, and `null` or `{}` fields for none.
    #[test]
    fn controls_are_written_as_before_and_read_back() {
        let controls = [
            (Control::Free, r#"{"strategy":"free"}"#),
            (
                Control::Pct {
                    depth: 2,
                    steps: 40,
                },
                r#"{"strategy":"pct","depth":2,"steps":40}"#,
            ),
            (Control::Random, r#"{"strategy":"random"}"#),
            (
                Control::Preempt {
                    first: 1,
                    at: [3, 0],
                },
                r#"{"strategy":"preempt","first":1,"at":[3,0]}"#,
            ),
        ];
        for (control, text) in controls {
            assert_eq!(serde_json::to_string(&control).unwrap(), text);
            assert_eq!(serde_json::from_str::<Control>(text).unwrap(), control);
        }
        assert_eq!(
            serde_json::from_str::<Control>("null").unwrap(),
            Control::Free
        );
        assert_eq!(serde_json::from_str::<Noise>("{}").unwrap(), Noise::none());
    }

    #[test]
    fn a_request_answers_under_its_tests_ids() {
        let run = |test| BatchRun::once(test, noise());
        let batch = Request::Batch {
            tests: vec![run(3u64), run(5)],
            timeout_ms: 1,
            capture: true,
        };
        assert_eq!(batch.answer_ids(|t| *t), [3, 5]);
        assert_eq!(Request::<u64>::Ping.answer_ids(|t| *t), [0]);
    }
}
