//! Request lines as the worker reads them (`oracle/src/protocol.rs` `Request` is the contract),
//! decoded straight from the line's text into these types: no `serde_json::Value` tree is
//! built for a well-formed line, which was a quarter of a worker's time per test.

use crate::sched::Control;
use crate::value::{Key, TestData};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use std::fmt;

/// One decoded request line.
pub(crate) struct Line {
    pub(crate) op: Op,
    pub(crate) timeout_ms: u64,
    /// Whether the `Debug` texts of results and final state are wanted (only the results
    /// oracle reads them; formatting them is a good part of a trivial run's cost).
    pub(crate) capture: bool,
}

pub(crate) enum Op {
    Ping,
    Concurrent {
        test: TestData,
        noise: Noise,
        /// Runs of the same test, seeds `seed, seed + 1, …`, up to the first that fails.
        repeat: u64,
        /// No new run once this many milliseconds passed since the first began.
        repeat_for_ms: Option<u64>,
    },
    Sequential {
        test: TestData,
        order: Vec<(u8, u32)>,
        /// Pacing for the calls (none: full speed)...
        noise: Noise,
        /// ...in these calls only, or in every call when empty.
        paced: Vec<(u8, u32)>,
        /// Each call on the thread it ran on concurrently (else all on one thread).
        own_threads: bool,
    },
    Batch {
        runs: Vec<BatchRun>,
        /// Runs of each test, as for `Concurrent`; each test is answered once.
        repeat: u64,
    },
}

/// One concurrent run of a batch.
pub(crate) struct BatchRun {
    pub(crate) test: TestData,
    pub(crate) noise: Noise,
}

/// Schedule noise of one run (`protocol::Noise`).
#[derive(Clone, Copy, Default)]
pub(crate) struct Noise {
    pub(crate) seed: u64,
    /// Probabilities of yielding, spinning and sleeping at a schedule point.
    pub(crate) p: [f64; 3],
    /// How a concurrent run is scheduled (free: by the OS and the noise above).
    pub(crate) control: Control,
    /// A sequential run's real pause before each paced call, in microseconds.
    pub(crate) pause_us: u64,
}

impl<'de> Deserialize<'de> for Line {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Line, D::Error> {
        d.deserialize_map(LineVisitor)
    }
}

struct LineVisitor;

impl<'de> Visitor<'de> for LineVisitor {
    type Value = Line;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a covcon request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Line, A::Error> {
        let mut op: Option<String> = None;
        let mut test = None;
        let mut noise = Noise::default();
        let mut order = Vec::new();
        let mut paced = Vec::new();
        let mut own_threads = false;
        let mut runs = Vec::new();
        let (mut timeout_ms, mut repeat, mut capture) = (10_000, 1, true);
        let mut repeat_for_ms = None;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Op => op = Some(map.next_value()?),
                Key::Test => test = Some(map.next_value::<TestData>()?),
                Key::Noise => noise = map.next_value()?,
                Key::Order => order = map.next_value::<Vec<(u8, u32)>>()?,
                Key::Paced => paced = map.next_value::<Vec<(u8, u32)>>()?,
                Key::OwnThreads => own_threads = map.next_value()?,
                Key::Tests => runs = map.next_value()?,
                Key::TimeoutMs => timeout_ms = map.next_value()?,
                Key::Repeat => repeat = map.next_value::<u64>()?.max(1),
                Key::RepeatForMs => repeat_for_ms = map.next_value()?,
                Key::Capture => capture = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let op = op.ok_or_else(|| de::Error::custom("request without `op`"))?;
        let needed = |test: Option<TestData>| {
            test.ok_or_else(|| de::Error::custom(format!("`{op}` request without `test`")))
        };
        let op = match op.as_str() {
            "ping" => Op::Ping,
            "concurrent" => Op::Concurrent {
                test: needed(test)?,
                noise,
                repeat,
                repeat_for_ms,
            },
            "sequential" => Op::Sequential {
                test: needed(test)?,
                order: order.into_iter().map(|(t, i)| (t.min(1), i)).collect(),
                noise,
                paced,
                own_threads,
            },
            "batch" => Op::Batch { runs, repeat },
            other => return Err(de::Error::custom(format!("unknown request `{other}`"))),
        };
        Ok(Line {
            op,
            timeout_ms,
            capture,
        })
    }
}

impl<'de> Deserialize<'de> for BatchRun {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<BatchRun, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = BatchRun;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a run of a batch: {\"test\": …, \"noise\": …}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BatchRun, A::Error> {
                let (mut test, mut noise) = (None, Noise::default());
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Test => test = Some(map.next_value()?),
                        Key::Noise => noise = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let test = test.ok_or_else(|| de::Error::custom("batch run without `test`"))?;
                Ok(BatchRun { test, noise })
            }
        }
        d.deserialize_map(V)
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
                Ok(Noise::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Noise, A::Error> {
                let mut noise = Noise::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Seed => noise.seed = map.next_value()?,
                        Key::YieldP => noise.p[0] = map.next_value()?,
                        Key::SpinP => noise.p[1] = map.next_value()?,
                        Key::SleepP => noise.p[2] = map.next_value()?,
                        Key::PauseUs => noise.pause_us = map.next_value()?,
                        Key::Control => noise.control = map.next_value()?,
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
                let mut strategy = String::new();
                let (mut depth, mut steps, mut first, mut at) = (2u8, 0u32, 0u8, [0u32; 2]);
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Strategy => strategy = map.next_value()?,
                        Key::Depth => depth = map.next_value()?,
                        Key::Steps => steps = map.next_value()?,
                        Key::First => first = map.next_value()?,
                        Key::At => at = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                match strategy.as_str() {
                    "free" => Ok(Control::Free),
                    "pct" => Ok(Control::Pct { depth, steps }),
                    "random" => Ok(Control::Random),
                    "preempt" => Ok(Control::Preempt { first, at }),
                    other => Err(de::Error::custom(format!(
                        "unknown schedule strategy `{other}`"
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

    /// Decodes `line` and describes it in one line, or gives the error.
    fn check(line: &str, expect: &str) {
        let got = match serde_json::from_str::<Line>(line) {
            Ok(Line {
                op,
                timeout_ms,
                capture,
            }) => {
                let op = match op {
                    Op::Ping => "ping".to_string(),
                    Op::Concurrent {
                        test,
                        noise,
                        repeat,
                        repeat_for_ms,
                    } => format!(
                        "concurrent {} seed {} p {:?} repeat {repeat}{}",
                        test.id,
                        noise.seed,
                        noise.p,
                        repeat_for_ms
                            .map(|ms| format!(" for {ms} ms"))
                            .unwrap_or_default()
                    ),
                    Op::Sequential {
                        test,
                        order,
                        noise,
                        paced,
                        own_threads,
                    } => format!(
                        "sequential {} {order:?} seed {} p {:?} paced {paced:?}{}",
                        test.id,
                        noise.seed,
                        noise.p,
                        if own_threads { " own threads" } else { "" }
                    ),
                    Op::Batch { runs, repeat } => format!(
                        "batch repeat {repeat} {:?}",
                        runs.iter()
                            .map(|r| (r.test.id, r.noise.seed))
                            .collect::<Vec<_>>()
                    ),
                };
                format!("{op}; timeout {timeout_ms}; capture {capture}")
            }
            Err(e) => format!("error: {e}"),
        };
        assert_eq!(got, expect, "{line}");
    }

    const TEST: &str = r#"{"id": 7, "type_path": "c::T", "pair": ["a", "b"], "instances": [{"method": "new", "args": []}], "prefix": [], "threads": [[{"method": "a", "receiver": 0, "args": [{"int": 1}]}], []], "noise_seed": 3}"#;

    #[test]
    fn every_request_of_the_protocol_decodes() {
        check(r#"{"op":"ping"}"#, "ping; timeout 10000; capture true");
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
                r#"{{"op":"sequential","test":{TEST},"order":[[1,0]],"noise":{{"seed":4,"yield_p":0.25,"spin_p":0.25,"sleep_p":0.1}},"paced":[[1,0]]}}"#
            ),
            "sequential 7 [(1, 0)] seed 4 p [0.25, 0.25, 0.1] paced [(1, 0)]; timeout 10000; capture true",
        );
        check(
            &format!(
                r#"{{"op":"batch","tests":[{{"test":{TEST},"noise":{{"seed":1}}}},{{"noise":{{"seed":2}},"test":{TEST}}}],"timeout_ms":50,"capture":false}}"#
            ),
            "batch repeat 1 [(7, 1), (7, 2)]; timeout 50; capture false",
        );
        check(
            &format!(r#"{{"op":"concurrent","test":{TEST},"noise":null,"repeat":0}}"#),
            "concurrent 7 seed 0 p [0.0, 0.0, 0.0] repeat 1; timeout 10000; capture true",
        );
        check(
            &format!(
                r#"{{"op":"concurrent","test":{TEST},"noise":null,"repeat":5000,"repeat_for_ms":1000}}"#
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
            r#"{"op":"concurrent"}"#,
            "error: `concurrent` request without `test` at line 1 column 19",
        );
        check(
            r#"{"op":"concurrent","test":{"id":1,"type_path":"c::T","threads":[[]]}}"#,
            "error: `threads` must be a list of two lists of calls at line 1 column 68",
        );
        check(
            r#"{"op":"concurrent","test":{"id":1,"type_path":"c::T","threads":[[{"args":[]}],[]]}}"#,
            "error: call without `method` at line 1 column 76",
        );
    }
}
