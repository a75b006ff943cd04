//! Calls and values written as Rust, shared by the terminal and HTML reports.

use generator::{Call, TestCase, Value};

/// `c0.deposit(5)`: a method call on an instance.
pub fn call(call: &Call) -> String {
    let args: Vec<String> = call
        .args
        .iter()
        .map(|v| match v {
            Value::FromReceiver(m) => format!("&c{}.{m}()", call.receiver),
            other => value(other),
        })
        .collect();
    format!("c{}.{}({})", call.receiver, call.method, args.join(", "))
}

/// `let c0 = Account::new(1);`: the constructor call of instance `i`.
pub fn constructor(index: usize, call: &Call, type_name: &str) -> String {
    format!(
        "let c{index} = {type_name}::{}({});",
        call.method,
        args(&call.args)
    )
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
        Value::Built(b) => generator::built_code(b, false, &|_, v| self::value(v)),
        Value::FromReceiver(m) => format!("&self.{m}()"),
    }
}

/// The test as lines: constructors and prefix, then the two threads' calls.
pub struct Layout {
    pub setup: Vec<String>,
    pub threads: [Vec<String>; 2],
}

pub fn layout(test: &TestCase) -> Layout {
    let name = test
        .type_path
        .rsplit("::")
        .next()
        .unwrap_or(&test.type_path);
    let mut setup: Vec<String> = test
        .instances
        .iter()
        .enumerate()
        .map(|(i, c)| constructor(i, c, name))
        .collect();
    setup.extend(test.prefix.iter().map(|c| match c.times {
        1 => format!("{};", call(c)),
        n => format!("for _ in 0..{n} {{ {}; }}", call(c)),
    }));
    Layout {
        setup,
        threads: [
            test.threads[0].iter().map(call).collect(),
            test.threads[1].iter().map(call).collect(),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            prefix: vec![push, Call::new("pop", 0, vec![])],
            threads: [
                vec![Call::new("push", 0, vec![Value::Int(1)])],
                vec![Call::new("len", 0, vec![])],
            ],
            noise_seed: 0,
        };
        let layout = layout(&test);
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
}
