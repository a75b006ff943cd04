//! Calls and values written as Rust, shared by the terminal and HTML reports.

use generator::{Call, TestCase, Value};

/// `c0.deposit(5)`: a method call on an instance.
pub fn call(call: &Call) -> String {
    format!("c{}.{}({})", call.receiver, call.method, args(&call.args))
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
    setup.extend(test.prefix.iter().map(|c| format!("{};", call(c))));
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
}
