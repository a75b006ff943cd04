//! The wire protocol between covcon and a harness worker process: one JSON [`Request`] per
//! line on the worker's stdin, one JSON [`Response`] per line on its stdout for each test the
//! request holds (one, or every test of a [`Request::Batch`], in order).
//!
//! The messages are the `covcon-protocol` crate's (`protocol/`), which the runtime compiled
//! into the harness (`oracle/runtime`) reads and writes too; covcon's requests carry the
//! generator's [`TestCase`], which the runtime reads as its own `TestData` (the tests below
//! hold the two to the same shapes).

pub use covcon_protocol::{Control, Event, Noise, Outcome, Response, Schedule, UNWOUND_FROM};
use generator::TestCase;

/// A request to a worker, about a test case of the generator.
pub type Request = covcon_protocol::Request<TestCase>;

/// One concurrent run of a [`Request::Batch`].
pub type BatchRun = covcon_protocol::BatchRun<TestCase>;

#[cfg(test)]
mod tests {
    use super::*;
    use covcon_rt::{Arg, Call as RtCall, TestData};
    use generator::{Built, BuiltForm, Call, Chain, Scope, Value};

    /// What the runtime reads of a value: the generator's own shape, a built value without
    /// its type and form.
    fn arg(value: &Value) -> Arg {
        let all = |values: &[Value]| values.iter().map(arg).collect();
        match value {
            Value::Int(n) => Arg::Int(*n),
            Value::Bool(b) => Arg::Bool(*b),
            Value::Char(c) => Arg::Char(*c),
            Value::Float(f) => Arg::Float(*f),
            Value::Str(s) => Arg::Str(s.clone()),
            Value::List(items) => Arg::List(all(items)),
            Value::Option(inner) => Arg::Option(inner.as_deref().map(|v| Box::new(arg(v)))),
            Value::Tuple(items) => Arg::Tuple(all(items)),
            Value::Duration(us) => Arg::Duration(*us),
            Value::Instance(k) => Arg::Instance(*k),
            Value::Closure(inner) => Arg::Closure(Box::new(arg(inner))),
            Value::Err(inner) => Arg::Err(Box::new(arg(inner))),
            Value::Built(built) => Arg::Built {
                ctor: built.ctor.clone(),
                args: all(&built.args),
            },
            Value::FromReceiver(method) => Arg::FromReceiver(method.clone()),
            Value::Handle(k) => Arg::Handle(*k),
        }
    }

    /// What the runtime reads of a call: a kept result's slot among its thread's locals, and
    /// whether it is chained, not on what.
    fn call(written: &Call, local: Option<usize>) -> RtCall {
        RtCall {
            method: written.method.clone(),
            receiver: written.receiver,
            args: written.args.iter().map(arg).collect(),
            times: written.times,
            local,
            chained: written.chained.is_some(),
            scope: written.scope.as_ref().map(|scope| {
                Box::new(covcon_rt::Scope {
                    then: scope.then.iter().map(|c| call(c, None)).collect(),
                    finish: scope.finish.as_ref().map(|c| call(c, None)),
                })
            }),
        }
    }

    /// What the runtime reads of a test case: no pair, noise seed or control (the request's
    /// noise carries the control), each thread's locals numbered from 0.
    fn test_data(test: &TestCase) -> TestData {
        let calls = |calls: &[Call]| calls.iter().map(|c| call(c, None)).collect();
        let thread = |t: usize| {
            let mut slots = 0..;
            test.threads[t]
                .iter()
                .map(|c| call(c, c.keep.then(|| slots.next().unwrap_or_default())))
                .collect()
        };
        TestData {
            id: test.id,
            type_path: test.type_path.clone(),
            instances: calls(&test.instances),
            handles: calls(&test.handles),
            prefix: calls(&test.prefix),
            threads: [thread(0), thread(1)],
        }
    }

    /// A test case with every kind of value and call the generator writes.
    fn every_kind_of_test() -> TestCase {
        let built = Value::Built(Box::new(Built {
            ty: "k::Opts".into(),
            ctor: "new".into(),
            args: vec![Value::Str("a\"b\n".into()), Value::Handle(0)],
            form: BuiltForm::Call {
                chain: vec![("cap".into(), 1)],
                owner: None,
            },
        }));
        let values = vec![
            Value::Int(-3),
            Value::Int(i128::from(u64::MAX)),
            Value::Bool(true),
            Value::Char('é'),
            Value::Float(0.5),
            Value::List(vec![Value::Int(1), Value::Option(None)]),
            Value::Option(Some(Box::new(Value::Tuple(vec![Value::Int(2)])))),
            Value::Duration(1_500),
            Value::Instance(1),
            Value::Closure(Box::new(Value::Err(Box::new(Value::Str("no".into()))))),
            built,
            Value::FromReceiver("guard".into()),
        ];
        let kept = |method: &str| Call {
            keep: true,
            ..Call::new(method, 0, vec![Value::Int(1)])
        };
        let scoped = Call {
            scope: Some(Box::new(Scope {
                then: vec![Call::new("book", 0, vec![Value::Int(3)])],
                finish: Some(Call::new("confirm", 0, vec![Value::Int(2)])),
            })),
            ..Call::new("reserve", 0, vec![])
        };
        let chained = Call {
            chained: Some(Chain {
                from: "get".into(),
                args: 1,
            }),
            ..Call::new("Gauge::add", 0, vec![Value::Str("a".into()), Value::Int(1)])
        };
        TestCase {
            id: 41,
            type_path: "k::Store".into(),
            pair: ["put".into(), "Gauge::add".into()],
            instances: vec![
                Call::new("new", 0, vec![]),
                Call::new("with_capacity", 0, vec![Value::Int(4)]),
            ],
            handles: vec![Call::new("gauge", 0, vec![Value::Str("g".into())])],
            prefix: vec![Call {
                times: 3,
                ..Call::new("put", 0, values)
            }],
            threads: [
                vec![kept("intern"), scoped, kept("intern")],
                vec![
                    kept("intern"),
                    Call::new("Key::len", 2, vec![]),
                    chained,
                    Call::new("put", 1, vec![Value::Handle(2)]),
                ],
            ],
            noise_seed: 9,
            control: Control::Pct {
                depth: 2,
                steps: 40,
            },
        }
    }

    /// Every request covcon writes, with the test above.
    fn every_request() -> Vec<Request> {
        let test = every_kind_of_test();
        let noise = Noise {
            seed: 5,
            yield_p: 0.5,
            spin_p: 0.25,
            sleep_p: 0.125,
            control: Control::Free,
            pause_us: 0,
        };
        let controlled = Noise {
            control: Control::Preempt {
                first: 1,
                at: [3, 0],
            },
            pause_us: 40,
            ..noise
        };
        vec![
            Request::Ping,
            Request::Concurrent {
                test: test.clone(),
                noise,
                timeout_ms: 100,
                capture: true,
                repeat: 1,
                repeat_for_ms: None,
            },
            Request::Concurrent {
                test: test.clone(),
                noise: controlled,
                timeout_ms: 100,
                capture: false,
                repeat: 5_000,
                repeat_for_ms: Some(1_000),
            },
            Request::Sequential {
                test: test.clone(),
                order: vec![(1, 0), (0, 2), (1, 3)],
                timeout_ms: 9,
                noise: Noise::none(),
                paced: Vec::new(),
                own_threads: false,
                capture: true,
            },
            Request::Sequential {
                test: test.clone(),
                order: vec![(0, 0)],
                timeout_ms: 9,
                noise: Noise {
                    control: Control::Random,
                    ..noise
                },
                paced: vec![(0, 0)],
                own_threads: true,
                capture: false,
            },
            Request::Batch {
                tests: vec![
                    BatchRun::once(test.clone(), noise),
                    BatchRun {
                        test,
                        noise: controlled,
                        repeat: 3,
                        repeat_for_ms: Some(20),
                    },
                ],
                timeout_ms: 50,
                capture: false,
            },
        ]
    }

    /// Each request as covcon writes it decodes in the runtime to the same request about the
    /// runtime's view of its test case.
    #[test]
    fn every_request_covcon_writes_reads_in_the_runtime_as_written() {
        for request in every_request() {
            let line = serde_json::to_string(&request).unwrap();
            let read: covcon_protocol::Request<TestData> =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let expected = match request {
                Request::Ping => covcon_protocol::Request::Ping,
                Request::Concurrent {
                    test,
                    noise,
                    timeout_ms,
                    capture,
                    repeat,
                    repeat_for_ms,
                } => covcon_protocol::Request::Concurrent {
                    test: test_data(&test),
                    noise,
                    timeout_ms,
                    capture,
                    repeat,
                    repeat_for_ms,
                },
                Request::Sequential {
                    test,
                    order,
                    timeout_ms,
                    noise,
                    paced,
                    own_threads,
                    capture,
                } => covcon_protocol::Request::Sequential {
                    test: test_data(&test),
                    order,
                    timeout_ms,
                    noise,
                    paced,
                    own_threads,
                    capture,
                },
                Request::Batch {
                    tests,
                    timeout_ms,
                    capture,
                } => covcon_protocol::Request::Batch {
                    tests: tests
                        .into_iter()
                        .map(|run| covcon_protocol::BatchRun {
                            test: test_data(&run.test),
                            noise: run.noise,
                            repeat: run.repeat,
                            repeat_for_ms: run.repeat_for_ms,
                        })
                        .collect(),
                    timeout_ms,
                    capture,
                },
            };
            assert_eq!(read, expected, "{line}");
        }
    }

    /// Each request reads back in covcon (the fake worker's way) as it was written.
    #[test]
    fn every_request_covcon_writes_reads_back_as_written() {
        for request in every_request() {
            let line = serde_json::to_string(&request).unwrap();
            let read: Request = serde_json::from_str(&line).unwrap();
            assert_eq!(read, request, "{line}");
        }
    }

    /// A saved test case (a violation file's, `cargo covcon replay`'s) keeps its schedule
    /// control in the shape it always had.
    #[test]
    fn a_saved_test_case_writes_its_control_as_before() {
        let test = every_kind_of_test();
        let saved = serde_json::to_value(&test).unwrap();
        assert_eq!(
            saved["control"],
            serde_json::json!({"strategy": "pct", "depth": 2, "steps": 40})
        );
        let free = TestCase {
            control: Control::Free,
            ..test.clone()
        };
        assert!(serde_json::to_value(&free)
            .unwrap()
            .get("control")
            .is_none());
        let read: TestCase = serde_json::from_value(saved).unwrap();
        assert_eq!(read, test);
    }
}
