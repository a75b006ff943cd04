//! Calls and values written as Rust, shared by the terminal and HTML reports.

use generator::{Call, Target, TestCase, Value};

/// `c0.deposit(5)`: a method call on an instance; `h0.tick()` on a handle the test keeps.
pub fn call(call: &Call) -> String {
    let mut args: Vec<String> = call
        .args
        .iter()
        .map(|v| match v {
            Value::FromReceiver(m) => format!("&c{}.{m}()", call.receiver),
            other => value(other),
        })
        .collect();
    match call.target() {
        // On a fresh call's result, in one expression: `c0.get_or_create("a").add(1)`.
        Target::Chained { chain, method: own } => {
            let own_args = args.split_off(chain.args.min(args.len()));
            format!(
                "c{}.{}({}).{own}({})",
                call.receiver,
                chain.from,
                args.join(", "),
                own_args.join(", ")
            )
        }
        Target::Handle(own) => format!("h{}.{own}({})", call.receiver, args.join(", ")),
        Target::Instance(_) | Target::Element(_) => {
            format!("c{}.{}({})", call.receiver, call.method, args.join(", "))
        }
    }
}

/// `let c0 = Account::new(1);`: the constructor call of instance `i`; a builder's reads as its
/// chain (`Limiter::builder(3).burst(0).build()`), `builders` giving each call's arguments; a
/// free function's by its path, a tuple taken apart (`let (c0, c0_e1) =
/// crossbeam_channel::bounded(2);`).
pub fn constructor(index: usize, call: &Call, type_name: &str, shapes: Shapes<'_>) -> String {
    if let Some(f) = shapes.functions.get(&call.method) {
        let code = format!("{}({})", f.path, args(&call.args));
        return match f.tuple {
            Some([at, arity]) => {
                let names: Vec<String> = (0..arity)
                    .map(|k| {
                        if k == at {
                            format!("c{index}")
                        } else {
                            format!("c{index}_e{k}")
                        }
                    })
                    .collect();
                format!("let ({}) = {code};", names.join(", "))
            }
            None => format!("let c{index} = {code};"),
        };
    }
    let code = match shapes.builders.get(&call.method) {
        Some(chain) if chain.iter().map(|(_, n)| n).sum::<usize>() == call.args.len() => {
            let mut rest = call.args.as_slice();
            let links: Vec<String> = chain
                .iter()
                .map(|(name, n)| {
                    let (mine, after) = rest.split_at(*n);
                    rest = after;
                    format!("{name}({})", args(mine))
                })
                .collect();
            links.join(".")
        }
        _ => format!("{}({})", call.method, args(&call.args)),
    };
    format!("let c{index} = {type_name}::{code};")
}

/// `TypeReport::builders`.
pub type Builders = std::collections::BTreeMap<String, Vec<(String, usize)>>;

/// `TypeReport::functions`.
pub type Functions = std::collections::BTreeMap<String, super::FreeFunction>;

/// How a type's constructors are written: its builders and free functions.
#[derive(Clone, Copy)]
pub struct Shapes<'a> {
    pub builders: &'a Builders,
    pub functions: &'a Functions,
}

impl<'a> Shapes<'a> {
    pub fn of(t: &'a super::TypeReport) -> Shapes<'a> {
        Shapes {
            builders: &t.builders,
            functions: &t.functions,
        }
    }
}

fn args(values: &[Value]) -> String {
    values.iter().map(value).collect::<Vec<_>>().join(", ")
}

pub fn value(value: &Value) -> String {
    match value {
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Char(c) => format!("{c:?}"),
        Value::Float(f) => format!("{f:?}"),
        Value::Str(s) => format!("{s:?}"),
        Value::List(items) => format!("vec![{}]", args(items)),
        Value::Option(None) => "None".to_owned(),
        Value::Option(Some(v)) => format!("Some({})", self::value(v)),
        Value::Tuple(items) => format!(
            "({}{})",
            args(items),
            if items.len() == 1 { "," } else { "" }
        ),
        Value::Duration(us) => format!("Duration::from_micros({us})"),
        Value::Instance(i) => format!("&c{i}"),
        Value::Closure(v) => format!("|| {}", self::value(v)),
        Value::Err(v) => format!("Err({})", self::value(v)),
        Value::Built(b) => generator::built_code(b, false, &|_, v| self::value(v)),
        Value::FromReceiver(m) => format!("&self.{m}()"),
        Value::Handle(k) => format!("&h{k}"),
    }
}

/// The test as lines: constructors and prefix, then the two threads' calls.
pub struct Layout {
    pub setup: Vec<String>,
    pub threads: [Vec<String>; 2],
}

pub fn layout(test: &TestCase, shapes: Shapes<'_>) -> Layout {
    let name = test
        .type_path
        .rsplit("::")
        .next()
        .unwrap_or(&test.type_path);
    let mut setup: Vec<String> = test
        .instances
        .iter()
        .enumerate()
        .map(|(i, c)| constructor(i, c, name, shapes))
        .collect();
    setup.extend(test.handles.iter().enumerate().map(|(k, c)| {
        match c.target() {
            // An element of the instance's constructor's tuple.
            Target::Element(element) => format!("let h{k} = c{}_e{element};", c.receiver),
            _ => format!("let h{k} = {};", call(c)),
        }
    }));
    setup.extend(test.prefix.iter().map(|c| match c.times {
        1 => format!("{};", call(c)),
        _ => repeated(c),
    }));
    // A thread's lines read as its column: no `;` after each. A scope is its lines: the
    // guard bound, the calls made while it lives indented, then its end.
    let thread = |t: usize| -> Vec<String> {
        test.threads[t]
            .iter()
            .zip(test.locals(t))
            .flat_map(|(c, local)| match (local, &c.scope) {
                (Some(k), _) => vec![format!("let h{k} = {}", call(c))],
                (None, Some(scope)) => scope_lines(c, scope),
                (None, None) => vec![repeated(c)],
            })
            .collect()
    };
    Layout {
        setup,
        threads: [thread(0), thread(1)],
    }
}

/// A scope's lines (`generator::Call::scope`): `let g = c0.reserve(3)`, then `  c0.book(3,
/// 1)` and `  g.confirm(2)`, or `  drop(g)` when no call ends it.
fn scope_lines(c: &Call, scope: &generator::Scope) -> Vec<String> {
    let mut lines = vec![format!("let g = {}", call(c))];
    lines.extend(
        scope
            .then
            .iter()
            .map(|inner| format!("  {}", repeated(inner))),
    );
    lines.push(match &scope.finish {
        Some(finish) => format!("  g.{}({})", finish.method, args(&finish.args)),
        None => "  drop(g)".to_string(),
    });
    lines
}

/// A call, in its loop when it repeats.
fn repeated(c: &Call) -> String {
    match c.times {
        1 => call(c),
        n => format!("for _ in 0..{n} {{ {}; }}", call(c)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static NO_BUILDERS: Builders = Builders::new();
    static NO_FUNCTIONS: Functions = Functions::new();
    const NO_SHAPES: Shapes<'static> = Shapes {
        builders: &NO_BUILDERS,
        functions: &NO_FUNCTIONS,
    };

    fn shapes(builders: &Builders) -> Shapes<'_> {
        Shapes {
            builders,
            functions: &NO_FUNCTIONS,
        }
    }

    fn check(v: Value, expect: &str) {
        assert_eq!(value(&v), expect);
    }

    #[test]
    fn values_read_as_rust() {
        check(Value::Str("a\"b".into()), "\"a\\\"b\"");
        check(
            Value::List(vec![Value::Int(1), Value::Int(-2)]),
            "vec![1, -2]",
        );
        check(Value::Option(Some(Box::new(Value::Char('x')))), "Some('x')");
        check(Value::Tuple(vec![Value::Bool(true)]), "(true,)");
        check(Value::Closure(Box::new(Value::Float(1.0))), "|| 1.0");
        check(Value::Instance(1), "&c1");
    }

    #[test]
    fn a_repeated_prefix_call_is_written_as_the_loop_that_runs() {
        let mut push = Call::new("push", 0, vec![Value::Int(0)]);
        push.times = 30;
        let test = TestCase {
            id: 1,
            type_path: "shapes::seg_queue::SegQueue".into(),
            pair: ["push".into(), "len".into()],
            instances: vec![Call::new("new", 0, vec![])],
            handles: vec![],
            prefix: vec![push, Call::new("pop", 0, vec![])],
            threads: [
                vec![Call::new("push", 0, vec![Value::Int(1)])],
                vec![Call::new("len", 0, vec![])],
            ],
            noise_seed: 0,
            control: Default::default(),
        };
        let layout = layout(&test, NO_SHAPES);
        assert_eq!(
            layout.setup,
            [
                "let c0 = SegQueue::new();",
                "for _ in 0..30 { c0.push(0); }",
                "c0.pop();"
            ]
        );
        assert_eq!(layout.threads, [["c0.push(1)"], ["c0.len()"]]);
    }

    /// A handle is kept from its owner's call, and its methods are called on it by name.
    #[test]
    fn handles_are_kept_in_the_setup_and_their_methods_called_on_them() {
        let test = TestCase {
            id: 1,
            type_path: "handles::multi_bar::MultiBar".into(),
            pair: ["render".into(), "Bar::tick".into()],
            instances: vec![Call::new("new", 0, vec![])],
            handles: vec![Call::new("add", 0, vec![Value::Int(3)])],
            prefix: vec![Call::new("Bar::inc", 0, vec![Value::Int(1)])],
            threads: [
                vec![Call::new("render", 0, vec![])],
                vec![Call::new("Bar::tick", 0, vec![])],
            ],
            noise_seed: 0,
            control: Default::default(),
        };
        let layout = layout(&test, NO_SHAPES);
        assert_eq!(
            layout.setup,
            [
                "let c0 = MultiBar::new();",
                "let h0 = c0.add(3);",
                "h0.inc(1);"
            ]
        );
        assert_eq!(layout.threads, [["c0.render()"], ["h0.tick()"]]);
    }

    /// A builder constructor reads as the chain it runs, each call with its own arguments;
    /// one whose arguments do not add up (an older report) is written as a plain call.
    #[test]
    fn a_builder_constructor_is_written_as_its_chain() {
        let builders: Builders = [(
            "builder".to_string(),
            vec![
                ("builder".to_string(), 2),
                ("max_tokens".to_string(), 1),
                ("build".to_string(), 0),
            ],
        )]
        .into();
        let call = Call::new(
            "builder",
            0,
            vec![Value::Int(0), Value::Duration(1), Value::Int(3)],
        );
        assert_eq!(
            constructor(0, &call, "Limiter", shapes(&builders)),
            "let c0 = Limiter::builder(0, Duration::from_micros(1)).max_tokens(3).build();"
        );
        let short = Call::new("builder", 0, vec![Value::Int(0)]);
        assert_eq!(
            constructor(1, &short, "Limiter", shapes(&builders)),
            "let c1 = Limiter::builder(0);"
        );
    }

    /// A free function's constructor reads by its path, a tuple taken apart, and a handle
    /// from the tuple is the element it names.
    #[test]
    fn a_free_function_returning_a_tuple_is_taken_apart() {
        let functions: Functions = [(
            "bounded".to_string(),
            super::super::FreeFunction {
                path: "crossbeam_channel::bounded".into(),
                tuple: Some([0, 2]),
            },
        )]
        .into();
        let test = TestCase {
            id: 1,
            type_path: "crossbeam_channel::Sender".into(),
            pair: ["send".into(), "Receiver::recv".into()],
            instances: vec![Call::new("bounded", 0, vec![Value::Int(1)])],
            handles: vec![Call::new("#1", 0, vec![])],
            prefix: vec![],
            threads: [
                vec![Call::new("send", 0, vec![Value::Int(3)])],
                vec![Call::new("Receiver::recv", 0, vec![])],
            ],
            noise_seed: 0,
            control: Default::default(),
        };
        let shapes = Shapes {
            builders: &NO_BUILDERS,
            functions: &functions,
        };
        let layout = layout(&test, shapes);
        assert_eq!(
            layout.setup,
            [
                "let (c0, c0_e1) = crossbeam_channel::bounded(1);",
                "let h0 = c0_e1;"
            ]
        );
        assert_eq!(layout.threads, [["c0.send(3)"], ["h0.recv()"]]);
    }

    /// A thread's call that keeps its result binds its local where it runs, thread 2's
    /// after thread 1's; a repeated call reads as its loop.
    #[test]
    fn thread_locals_are_bound_in_their_column() {
        let keep = |method: &str, arg: &str| Call {
            keep: true,
            ..Call::new(method, 0, vec![Value::Str(arg.into())])
        };
        let mut repeated = Call::new("intern", 0, vec![Value::Str("b".into())]);
        repeated.times = 31;
        let test = TestCase {
            id: 1,
            type_path: "shapes::interner::Interner".into(),
            pair: ["intern".into(), "resolve".into()],
            instances: vec![Call::new("new", 0, vec![])],
            handles: vec![],
            prefix: vec![repeated.clone()],
            threads: [
                vec![keep("intern", "a"), repeated],
                vec![
                    keep("intern", "a"),
                    Call::new("resolve", 0, vec![Value::Handle(1)]),
                ],
            ],
            noise_seed: 0,
            control: Default::default(),
        };
        let layout = layout(&test, NO_SHAPES);
        assert_eq!(
            layout.setup,
            [
                "let c0 = Interner::new();",
                "for _ in 0..31 { c0.intern(\"b\"); }"
            ]
        );
        assert_eq!(
            layout.threads,
            [
                [
                    "let h0 = c0.intern(\"a\")",
                    "for _ in 0..31 { c0.intern(\"b\"); }"
                ],
                ["let h1 = c0.intern(\"a\")", "c0.resolve(&h1)"]
            ]
        );
    }

    /// A scope reads as the guard bound, the calls made while it lives, and its end.
    #[test]
    fn a_scope_reads_as_its_guard_the_calls_it_spans_and_its_end() {
        let reserve = |finish: Option<Call>| Call {
            scope: Some(Box::new(generator::Scope {
                then: vec![Call::new("book", 0, vec![Value::Int(3), Value::Int(1)])],
                finish,
            })),
            ..Call::new("reserve", 0, vec![Value::Int(3)])
        };
        let test = TestCase {
            id: 1,
            type_path: "rusty::booking::Booking".into(),
            pair: ["reserve".into(), "reserve".into()],
            instances: vec![Call::new("new", 0, vec![])],
            handles: vec![],
            prefix: vec![],
            threads: [
                vec![reserve(Some(Call::new("confirm", 0, vec![Value::Int(2)])))],
                vec![reserve(None)],
            ],
            noise_seed: 0,
            control: Default::default(),
        };
        let layout = layout(&test, NO_SHAPES);
        assert_eq!(
            layout.threads,
            [
                ["let g = c0.reserve(3)", "  c0.book(3, 1)", "  g.confirm(2)"],
                ["let g = c0.reserve(3)", "  c0.book(3, 1)", "  drop(g)"]
            ]
        );
    }

    /// A call on a guard reads as one expression, the guard's call first.
    #[test]
    fn a_call_chained_on_a_guard_reads_as_one_expression() {
        let add = Call {
            chained: Some(generator::Chain {
                from: "get_or_create".into(),
                args: 1,
            }),
            ..Call::new("Gauge::add", 0, vec![Value::Str("a".into()), Value::Int(2)])
        };
        assert_eq!(call(&add), "c0.get_or_create(\"a\").add(2)");
    }
}
