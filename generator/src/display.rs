//! A compact, human-readable form of a [`TestCase`] for reports and progress output:
//!
//! `a = Cache::new(2); prefix: a.put(1, "x"); thread 1: a.get(1); a.remove(1) | thread 2: a.len()`
//!
//! Instances are named `a`, `b`, … in the order they are built. This is not Rust: the
//! ready-to-paste `#[test]` is the oracle's job, since only it knows how values are passed.

use crate::testcase::{Built, BuiltForm, Call, Scope, Target, TestCase, Value};
use std::fmt;

impl fmt::Display for TestCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let type_name = self
            .type_path
            .rsplit("::")
            .next()
            .unwrap_or(&self.type_path);
        for (i, constructor) in self.instances.iter().enumerate() {
            write!(
                f,
                "{} = {type_name}::{}({}); ",
                instance_name(i),
                constructor.method,
                Args(&constructor.args)
            )?;
        }
        for (k, call) in self.handles.iter().enumerate() {
            write!(
                f,
                "{} = {}; ",
                handle_name(k),
                Calls(std::slice::from_ref(call))
            )?;
        }
        if !self.prefix.is_empty() {
            write!(f, "prefix: {}; ", Calls(&self.prefix))?;
        }
        write!(
            f,
            "thread 1: {} | thread 2: {}",
            ThreadCalls(self, 0),
            ThreadCalls(self, 1)
        )
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Char(v) => write!(f, "{v:?}"),
            Value::Float(v) => write!(f, "{v:?}"),
            Value::Str(v) => write!(f, "{v:?}"),
            Value::List(items) => write!(f, "[{}]", Args(items)),
            Value::Option(None) => f.write_str("None"),
            Value::Option(Some(v)) => write!(f, "Some({v})"),
            Value::Err(v) => write!(f, "Err({v})"),
            Value::Tuple(items) if items.len() == 1 => write!(f, "({},)", items[0]),
            Value::Tuple(items) => write!(f, "({})", Args(items)),
            Value::Duration(us) if us % 1000 == 0 => write!(f, "{}ms", us / 1000),
            Value::Duration(us) => write!(f, "{us}µs"),
            Value::Instance(i) => f.write_str(&instance_name(*i)),
            Value::Closure(v) => write!(f, "|| {v}"),
            Value::Built(b) => f.write_str(&built_code(b, false, &|_, v| v.to_string())),
            Value::FromReceiver(method) => write!(f, "&self.{method}()"),
            Value::Handle(k) => write!(f, "&{}", handle_name(*k)),
        }
    }
}

/// A built value as Rust: `MeterOpts::new("a", "b")`, `Mode::Fast`, `Opts { size: 1 }`,
/// `Limiter::builder(2).burst(1).build()`. Named by the type's last segment, or with
/// `full_path` by its whole path (`<::krate::opts::MeterOpts>::new`) where the code must
/// compile outside the crate; `arg` renders the `i`th argument.
pub fn built_code(b: &Built, full_path: bool, arg: &dyn Fn(usize, &Value) -> String) -> String {
    let short = b.ty.rsplit("::").next().unwrap_or(&b.ty).to_string();
    let plain = if full_path {
        format!("::{}", b.ty)
    } else {
        short.clone()
    };
    let call_head = if full_path {
        format!("<{plain}>")
    } else {
        short
    };
    let list = |range: std::ops::Range<usize>| -> String {
        range
            .map(|i| arg(i, &b.args[i]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &b.form {
        BuiltForm::Default if full_path => {
            format!("<{plain} as ::std::default::Default>::default()")
        }
        BuiltForm::Default => format!("{plain}::default()"),
        BuiltForm::Variant if b.args.is_empty() => format!("{plain}::{}", b.ctor),
        BuiltForm::Variant => format!("{plain}::{}({})", b.ctor, list(0..b.args.len())),
        BuiltForm::Literal { fields, variant } => {
            let head = if *variant {
                format!("{plain}::{}", b.ctor)
            } else {
                plain.clone()
            };
            let body: Vec<String> = fields
                .iter()
                .enumerate()
                .take(b.args.len())
                .map(|(i, name)| format!("{name}: {}", arg(i, &b.args[i])))
                .collect();
            format!("{head} {{ {} }}", body.join(", "))
        }
        BuiltForm::Call { chain, owner } => {
            let chained: usize = chain.iter().map(|(_, n)| n).sum();
            let first = b.args.len().saturating_sub(chained);
            let head = match owner {
                Some(o) if full_path => format!("<::{o}>"),
                Some(o) => o.rsplit("::").next().unwrap_or(o).to_string(),
                None => call_head,
            };
            let mut out = format!("{head}::{}({})", b.ctor, list(0..first));
            let mut at = first;
            for (name, n) in chain {
                let end = (at + n).min(b.args.len());
                out.push_str(&format!(".{name}({})", list(at..end)));
                at = end;
            }
            out
        }
    }
}

/// `a`, `b`, …, `z`, then `i26`, `i27`, ….
fn instance_name(index: usize) -> String {
    match u8::try_from(index) {
        Ok(i) if i < 26 => char::from(b'a' + i).to_string(),
        _ => format!("i{index}"),
    }
}

/// `h0`, `h1`, …: the handles a test keeps.
pub fn handle_name(index: usize) -> String {
    format!("h{index}")
}

/// The receiver's name and the method's own name: `h0` and `tick` for a handle method
/// (`Bar::tick`), the instance's name and the method otherwise.
pub fn receiver_and_method(call: &Call) -> (String, &str) {
    match call.target() {
        Target::Handle(own) => (handle_name(call.receiver), own),
        Target::Instance(own) | Target::Chained { method: own, .. } => {
            (instance_name(call.receiver), own)
        }
        Target::Element(_) => (instance_name(call.receiver), &call.method),
    }
}

/// A scope as one step: `{ g = a.reserve(3); a.book(3, 1); g.confirm(2) }`, the guard
/// dropped at the end when no call finishes it (`drop(g)`). `call` is how the call that
/// hands the guard out is written.
fn scope_text(call: &str, scope: &Scope) -> String {
    let mut steps = vec![format!("g = {call}")];
    steps.extend(
        scope
            .then
            .iter()
            .map(|c| Calls(std::slice::from_ref(c)).to_string()),
    );
    steps.push(match &scope.finish {
        Some(finish) => format!("g.{}({})", finish.method, Args(&finish.args)),
        None => "drop(g)".to_string(),
    });
    format!("{{ {} }}", steps.join("; "))
}

struct Args<'a>(&'a [Value]);

impl fmt::Display for Args<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, value) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{value}")?;
        }
        Ok(())
    }
}

/// A thread's calls, each call that keeps its result bound to its local (`h2 = a.intern("x")`).
struct ThreadCalls<'a>(&'a TestCase, usize);

impl fmt::Display for ThreadCalls<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ThreadCalls(test, thread) = *self;
        let calls = &test.threads[thread];
        if calls.is_empty() {
            return f.write_str("-");
        }
        for ((i, call), local) in calls.iter().enumerate().zip(test.locals(thread)) {
            if i > 0 {
                f.write_str("; ")?;
            }
            if let Some(k) = local {
                write!(f, "{} = ", handle_name(k))?;
            }
            write!(f, "{}", Calls(std::slice::from_ref(call)))?;
        }
        Ok(())
    }
}

struct Calls<'a>(&'a [Call]);

impl fmt::Display for Calls<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("-");
        }
        for (i, call) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            let (receiver, method) = receiver_and_method(call);
            let mut args: Vec<String> = call
                .args
                .iter()
                .map(|v| match v {
                    Value::FromReceiver(m) => format!("&{receiver}.{m}()"),
                    other => other.to_string(),
                })
                .collect();
            // A call on a fresh call's result: `a.get_or_create("x").add(1)`.
            let receiver = match &call.chained {
                Some(chain) => {
                    let own = args.split_off(chain.args.min(args.len()));
                    let from = format!("{receiver}.{}({})", chain.from, args.join(", "));
                    args = own;
                    from
                }
                None => receiver,
            };
            let mut text = format!("{receiver}.{method}({})", args.join(", "));
            if let Some(scope) = &call.scope {
                text = scope_text(&text, scope);
            }
            if call.times > 1 {
                write!(f, "for _ in 0..{} {{ {text} }}", call.times)?;
            } else {
                f.write_str(&text)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(receiver: usize, method: &str, args: Vec<Value>) -> Call {
        Call {
            method: method.into(),
            receiver,
            args,
            times: 1,
            keep: false,
            chained: None,
            scope: None,
        }
    }

    fn check(test: TestCase, expect: &str) {
        assert_eq!(test.to_string(), expect);
    }

    fn test(instances: Vec<Call>, prefix: Vec<Call>, threads: [Vec<Call>; 2]) -> TestCase {
        TestCase {
            id: 0,
            type_path: "cache::lru::Cache".into(),
            pair: ["get".into(), "put".into()],
            instances,
            handles: vec![],
            prefix,
            threads,
            noise_seed: 0,
            control: Default::default(),
        }
    }

    #[test]
    fn a_test_reads_as_constructor_prefix_and_two_threads() {
        check(
            test(
                vec![call(0, "new", vec![Value::Int(2)])],
                vec![call(0, "put", vec![Value::Int(1), Value::Str("x".into())])],
                [
                    vec![
                        call(0, "get", vec![Value::Int(1)]),
                        call(0, "remove", vec![Value::Int(1)]),
                    ],
                    vec![call(0, "len", vec![])],
                ],
            ),
            r#"a = Cache::new(2); prefix: a.put(1, "x"); thread 1: a.get(1); a.remove(1) | thread 2: a.len()"#,
        );
    }

    /// A call that keeps its result binds the next local, thread 1's after thread 0's, and a
    /// repeated call reads as its loop.
    #[test]
    fn thread_locals_are_bound_where_they_are_kept() {
        let keep = |method: &str| Call {
            keep: true,
            ..call(0, method, vec![Value::Str("a".into())])
        };
        let mut repeated = call(0, "put", vec![Value::Int(1), Value::Str("x".into())]);
        repeated.times = 3;
        check(
            test(
                vec![call(0, "new", vec![])],
                vec![],
                [
                    vec![keep("intern"), call(0, "resolve", vec![Value::Handle(0)])],
                    vec![keep("intern"), call(1, "Sym::hash", vec![]), repeated],
                ],
            ),
            r#"a = Cache::new(); thread 1: h0 = a.intern("a"); a.resolve(&h0) | thread 2: h1 = a.intern("a"); h1.hash(); for _ in 0..3 { a.put(1, "x") }"#,
        );
    }

    #[test]
    fn second_instances_and_every_value_shape_print_compactly() {
        let values = vec![
            Value::Bool(true),
            Value::Char('c'),
            Value::Float(1.0),
            Value::List(vec![Value::Int(0), Value::Int(-1)]),
            Value::Option(Some(Box::new(Value::Int(3)))),
            Value::Option(None),
            Value::Tuple(vec![Value::Int(1)]),
            Value::Duration(10),
            Value::Duration(2000),
            Value::Closure(Box::new(Value::Str("b".into()))),
        ];
        check(
            test(
                vec![call(0, "default", vec![]), call(0, "default", vec![])],
                vec![],
                [
                    vec![call(0, "transfer", vec![Value::Instance(1)])],
                    vec![call(1, "odd", values)],
                ],
            ),
            r#"a = Cache::default(); b = Cache::default(); thread 1: a.transfer(b) | thread 2: b.odd(true, 'c', 1.0, [0, -1], Some(3), None, (1,), 10µs, 2ms, || "b")"#,
        );
    }
}
