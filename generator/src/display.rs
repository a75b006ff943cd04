//! The one rendering of a [`TestCase`]: Rust-like lines, with the same names and calls for
//! every reader of a test.
//!
//! ```text
//! let c0 = Cache::new(2);
//! c0.put(1, "x");
//! thread 0   │ thread 1
//! c0.get(1)  │ c0.len()
//! ```
//!
//! [`layout`] lays a test out as its setup (the constructors, the handles it keeps and the
//! prefix, run once on one thread) and its two threads' steps: the terminal and HTML reports
//! show it as lines and columns, and a test's `Display` is its one-line form (`let c0 =
//! Cache::new(2); c0.put(1, "x"); thread 0: c0.get(1) | thread 1: c0.len()`). Names are the
//! same everywhere: instances `c0`, `c1`, … in the order they are built, the other elements
//! of a tuple a constructor returns `c0_e1`, the handles a test keeps and then each thread's
//! locals `h0`, `h1`, …, a scope's guard `g`; what a call is made on is its [`Target`].
//!
//! What a reading and code that compiles write differently goes through a [`Spelling`]: how
//! an instance is built, and how an argument, a method's name, a call and a kept value are
//! written. [`Reading`] is the reports' (values as they read, a constructor as the type's
//! builder or free function writes it); the oracle's reproducer has its own (values converted
//! as the harness decodes them, instances and handles in `Arc`s, `block_on`, turbofish), with
//! which it writes its setup ([`setup`]) and its threads' calls ([`call_code`],
//! [`finish_code`]).

use crate::testcase::{Built, BuiltForm, Call, Scope, Target, TestCase, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// `c0`, `c1`, …: the test's instances, in the order they are built.
pub fn instance_name(index: usize) -> String {
    format!("c{index}")
}

/// `c0_e1`: element `k` of the tuple the constructor of instance `instance` returned.
pub fn element_name(instance: usize, k: usize) -> String {
    format!("c{instance}_e{k}")
}

/// `h0`, `h1`, …: the handles a test keeps, then each thread's locals
/// ([`TestCase::locals`]).
pub fn handle_name(index: usize) -> String {
    format!("h{index}")
}

/// The guard a thread holds through a scope ([`Call::scope`]).
pub const GUARD: &str = "g";

/// How a rendering writes what a test's shape leaves open. The defaults are the reading
/// ([`Reading`]): values as their `Display` writes them, calls as they are.
pub trait Spelling {
    /// The statement building instance `index`, of the type `type_path`, with its
    /// constructor `call`, binding its [`instance_name`] (and, when the constructor returns a
    /// tuple, the other elements' [`element_name`]s): `let c0 = Cache::new(2);`.
    fn constructor(&self, type_path: &str, index: usize, call: &Call) -> String;

    /// Argument `index` of `call` (a chained call's: the first call's arguments first):
    /// `value` as it reads, and what the receiver's method returns as `&c0.guard()`.
    fn arg(&self, call: &Call, _index: usize, value: &Value) -> String {
        match value {
            Value::FromReceiver(method) => format!("&{}.{method}()", instance_name(call.receiver)),
            other => other.to_string(),
        }
    }

    /// Argument `index` of `finish`, the guard's call that ends `scope_call`'s scope.
    fn finish_arg(
        &self,
        _scope_call: &Call,
        _finish: &Call,
        _index: usize,
        value: &Value,
    ) -> String {
        value.to_string()
    }

    /// The model's method `method` (`add`, `Gauge::add`) where it is called by its own name
    /// `own`: `add`, or with what Rust needs after the name (a turbofish).
    fn method(&self, _method: &str, own: &str) -> String {
        own.to_string()
    }

    /// A call of the model's method `method`, written `expr`, as it is made: a reading leaves
    /// it; code that compiles may run a future to completion or drive a returned iterator.
    fn made(&self, _method: &str, expr: String) -> String {
        expr
    }

    /// What the test's setup keeps as a handle of `call`'s result, the call written `expr`.
    fn kept(&self, _call: &Call, expr: String) -> String {
        expr
    }

    /// A call whose result is not used, written `expr`, as a statement (without its `;`).
    fn discarded(&self, expr: String) -> String {
        expr
    }
}

/// A call as an expression: `c0.deposit(5)` on an instance, `h0.tick()` on a handle the test
/// keeps, `c0.get_or_create("a").add(2)` on a fresh call's result, in one expression. An
/// element of a constructor's tuple, which a test keeps as a handle, is its name (`c0_e1`).
pub fn call_code(call: &Call, spelling: &(impl Spelling + ?Sized)) -> String {
    let mut args: Vec<String> = call
        .args
        .iter()
        .enumerate()
        .map(|(i, v)| spelling.arg(call, i, v))
        .collect();
    let made = |method: &str, own: &str, receiver: String, args: &[String]| {
        let name = spelling.method(method, own);
        spelling.made(method, format!("{receiver}.{name}({})", args.join(", ")))
    };
    match call.target() {
        Target::Instance(own) => made(&call.method, own, instance_name(call.receiver), &args),
        Target::Handle(own) => made(&call.method, own, handle_name(call.receiver), &args),
        Target::Chained { chain, method: own } => {
            let own_args = args.split_off(chain.args.min(args.len()));
            let from = made(
                &chain.from,
                &chain.from,
                instance_name(call.receiver),
                &args,
            );
            made(&call.method, own, from, &own_args)
        }
        Target::Element(k) => element_name(call.receiver, k),
    }
}

/// The guard's call that ends `scope_call`'s scope: `g.confirm(2)`.
pub fn finish_code(
    scope_call: &Call,
    finish: &Call,
    spelling: &(impl Spelling + ?Sized),
) -> String {
    let args: Vec<String> = finish
        .args
        .iter()
        .enumerate()
        .map(|(i, v)| spelling.finish_arg(scope_call, finish, i, v))
        .collect();
    format!("{GUARD}.{}({})", finish.method, args.join(", "))
}

/// A test as lines: what runs once, on one thread, before the two threads, then each
/// thread's steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Statements ([`setup`]): `let c0 = Cache::new(2);`, `let h0 = c0.add(3);`, `c0.put(1,
    /// "x");`.
    pub setup: Vec<String>,
    /// Each thread's steps, in order, each its lines: a call's one line (`c0.get(1)`, a
    /// kept local `let h1 = c0.intern("a")`, a repeated call `for _ in 0..3 { c0.push(1);
    /// }`), or a scope's: the guard bound (`let g = c0.reserve(3)`), the calls made while it
    /// lives and its end, indented (`  c0.book(3, 1)`, `  g.confirm(2)`, or `  drop(g)` when
    /// no call ends it).
    pub threads: [Vec<Vec<String>>; 2],
}

impl Layout {
    /// Thread `thread`'s lines, its steps' one after another.
    pub fn column(&self, thread: usize) -> Vec<&str> {
        self.threads[thread]
            .iter()
            .flatten()
            .map(String::as_str)
            .collect()
    }
}

/// `test` laid out as `spelling` writes it.
pub fn layout(test: &TestCase, spelling: &(impl Spelling + ?Sized)) -> Layout {
    Layout {
        setup: setup(test, spelling),
        threads: [0, 1].map(|t| steps(test, t, spelling)),
    }
}

/// The statements a test runs once, on one thread, before its two threads: each instance's
/// constructor, each handle it keeps (`let h0 = c0.add(3);`, an element of a constructor's
/// tuple `let h0 = c0_e1;`), then the prefix, a repeated call as its loop (`for _ in 0..30 {
/// c0.push(0); }`).
pub fn setup(test: &TestCase, spelling: &(impl Spelling + ?Sized)) -> Vec<String> {
    let instances = test
        .instances
        .iter()
        .enumerate()
        .map(|(i, c)| spelling.constructor(&test.type_path, i, c));
    let handles = test.handles.iter().enumerate().map(|(k, c)| {
        let kept = spelling.kept(c, call_code(c, spelling));
        format!("let {} = {kept};", handle_name(k))
    });
    let prefix = test.prefix.iter().map(|c| statement(c, spelling));
    instances.chain(handles).chain(prefix).collect()
}

/// A call whose result is not used as a statement: `c0.pop();`, or its loop when it repeats
/// (`for _ in 0..30 { c0.push(0); }`).
pub fn statement(call: &Call, spelling: &(impl Spelling + ?Sized)) -> String {
    match call.times {
        1 => format!("{};", repeated(call, spelling)),
        _ => repeated(call, spelling),
    }
}

/// Thread `thread`'s steps ([`Layout::threads`]).
fn steps(test: &TestCase, thread: usize, spelling: &(impl Spelling + ?Sized)) -> Vec<Vec<String>> {
    test.threads[thread]
        .iter()
        .zip(test.locals(thread))
        .map(|(c, local)| match (local, &c.scope) {
            (Some(k), _) => vec![format!(
                "let {} = {}",
                handle_name(k),
                call_code(c, spelling)
            )],
            (None, Some(scope)) => scope_lines(c, scope, spelling),
            (None, None) => vec![repeated(c, spelling)],
        })
        .collect()
}

/// A scope's lines: `let g = c0.reserve(3)`, then `  c0.book(3, 1)` and `  g.confirm(2)`, or
/// `  drop(g)` when no call ends it.
fn scope_lines(c: &Call, scope: &Scope, spelling: &(impl Spelling + ?Sized)) -> Vec<String> {
    let mut lines = vec![format!("let {GUARD} = {}", call_code(c, spelling))];
    lines.extend(
        scope
            .then
            .iter()
            .map(|inner| format!("  {}", repeated(inner, spelling))),
    );
    lines.push(match &scope.finish {
        Some(finish) => format!("  {}", finish_code(c, finish, spelling)),
        None => format!("  drop({GUARD})"),
    });
    lines
}

/// A call whose result is not used (`c0.pop()`), in its loop when it repeats (`for _ in
/// 0..30 { c0.push(0); }`).
fn repeated(c: &Call, spelling: &(impl Spelling + ?Sized)) -> String {
    let code = spelling.discarded(call_code(c, spelling));
    match c.times {
        1 => code,
        n => format!("for _ in 0..{n} {{ {code}; }}"),
    }
}

/// A type's builder constructors, by their first function's name: each call of the chain
/// (the first function's included) with how many of the constructor's arguments it takes.
pub type Builders = BTreeMap<String, Vec<(String, usize)>>;

/// A type's constructors that are free functions, by name (`bounded`).
pub type Functions = BTreeMap<String, FreeFunction>;

/// A constructor that is a free function of the crate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FreeFunction {
    /// Its public path (`crossbeam_channel::bounded`).
    pub path: String,
    /// For one returning a tuple: `[the instance's index, the tuple's length]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuple: Option<[usize; 2]>,
}

/// The reports' [`Spelling`]: values as they read, and a constructor as the call it makes, by
/// the type's builders and free functions.
#[derive(Debug, Clone, Copy)]
pub struct Reading<'a> {
    pub builders: &'a Builders,
    pub functions: &'a Functions,
}

static NO_BUILDERS: Builders = Builders::new();
static NO_FUNCTIONS: Functions = Functions::new();

impl Reading<'static> {
    /// Knowing no builder or free function: each constructor reads as a plain call of the
    /// type's (`Limiter::builder(0, 3)`). A test's `Display`.
    pub const PLAIN: Reading<'static> = Reading {
        builders: &NO_BUILDERS,
        functions: &NO_FUNCTIONS,
    };
}

impl Spelling for Reading<'_> {
    /// `let c0 = Account::new(1);`; a builder's reads as its chain (`let c0 =
    /// Limiter::builder(3).burst(0).build();`), one whose arguments do not add up to it (an
    /// older report) as a plain call; a free function's by its path, a tuple taken apart (`let
    /// (c0, c0_e1) = crossbeam_channel::bounded(2);`).
    fn constructor(&self, type_path: &str, index: usize, call: &Call) -> String {
        let args = |values: &[Value], first: usize| -> String {
            let args: Vec<String> = (first..)
                .zip(values)
                .map(|(i, v)| self.arg(call, i, v))
                .collect();
            args.join(", ")
        };
        let name = instance_name(index);
        if let Some(f) = self.functions.get(&call.method) {
            let code = format!("{}({})", f.path, args(&call.args, 0));
            return match f.tuple {
                Some([at, arity]) => {
                    let names: Vec<String> = (0..arity)
                        .map(|k| {
                            if k == at {
                                name.clone()
                            } else {
                                element_name(index, k)
                            }
                        })
                        .collect();
                    format!("let ({}) = {code};", names.join(", "))
                }
                None => format!("let {name} = {code};"),
            };
        }
        let code = match self.builders.get(&call.method) {
            Some(chain) if chain.iter().map(|(_, n)| n).sum::<usize>() == call.args.len() => {
                let mut at = 0;
                let links: Vec<String> = chain
                    .iter()
                    .map(|(link, n)| {
                        let code = format!("{link}({})", args(&call.args[at..at + n], at));
                        at += n;
                        code
                    })
                    .collect();
                links.join(".")
            }
            _ => format!("{}({})", call.method, args(&call.args, 0)),
        };
        format!("let {name} = {}::{code};", short_name(type_path))
    }
}

/// The last segment of a path: `Cache` of `cache::lru::Cache`.
fn short_name(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path)
}

/// The layout on one line: the setup's statements, then `thread 0: c0.get(1); c0.remove(1) |
/// thread 1: c0.len()`, a scope as its block (`{ let g = c0.reserve(3); c0.book(3, 1);
/// g.confirm(2) }`), a thread without calls as `-`. Each constructor reads as a plain call
/// ([`Reading::PLAIN`]).
impl fmt::Display for TestCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let layout = layout(self, &Reading::PLAIN);
        for line in &layout.setup {
            write!(f, "{line} ")?;
        }
        let thread = |t: usize| -> String {
            let steps: Vec<String> = layout.threads[t]
                .iter()
                .map(|step| match step.as_slice() {
                    [line] => line.clone(),
                    lines => {
                        let lines: Vec<&str> = lines.iter().map(|l| l.trim_start()).collect();
                        format!("{{ {} }}", lines.join("; "))
                    }
                })
                .collect();
            if steps.is_empty() {
                "-".to_string()
            } else {
                steps.join("; ")
            }
        };
        write!(f, "thread 0: {} | thread 1: {}", thread(0), thread(1))
    }
}

/// A value as it reads in Rust: `vec![0, -1]`, `Some('x')`, `(1,)`,
/// `Duration::from_micros(10)`, `|| "b"`; an instance passed as `&c1`, a kept handle as `&h0`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Char(v) => write!(f, "{v:?}"),
            Value::Float(v) => write!(f, "{v:?}"),
            Value::Str(v) => write!(f, "{v:?}"),
            Value::List(items) => write!(f, "vec![{}]", Values(items)),
            Value::Option(None) => f.write_str("None"),
            Value::Option(Some(v)) => write!(f, "Some({v})"),
            Value::Err(v) => write!(f, "Err({v})"),
            Value::Tuple(items) if items.len() == 1 => write!(f, "({},)", items[0]),
            Value::Tuple(items) => write!(f, "({})", Values(items)),
            Value::Duration(us) => write!(f, "Duration::from_micros({us})"),
            Value::Instance(i) => write!(f, "&{}", instance_name(*i)),
            Value::Closure(v) => write!(f, "|| {v}"),
            Value::Built(b) => f.write_str(&built_code(b, false, &|_, v| v.to_string())),
            Value::FromReceiver(method) => write!(f, "&self.{method}()"),
            Value::Handle(k) => write!(f, "&{}", handle_name(*k)),
        }
    }
}

/// Values separated by `, `.
struct Values<'a>(&'a [Value]);

impl fmt::Display for Values<'_> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testcase::Chain;

    fn call(receiver: usize, method: &str, args: Vec<Value>) -> Call {
        Call::new(method, receiver, args)
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

    /// Checks `test`'s layout, as the reports write it without builders or free functions:
    /// its setup, then each thread's column.
    fn check(test: &TestCase, setup: &[&str], threads: [&[&str]; 2]) {
        let layout = layout(test, &Reading::PLAIN);
        assert_eq!(layout.setup, setup);
        assert_eq!(
            [layout.column(0), layout.column(1)],
            threads.map(<[&str]>::to_vec)
        );
    }

    #[test]
    fn a_test_reads_as_constructor_prefix_and_two_threads_on_one_line() {
        let test = test(
            vec![call(0, "new", vec![Value::Int(2)])],
            vec![call(0, "put", vec![Value::Int(1), Value::Str("x".into())])],
            [
                vec![
                    call(0, "get", vec![Value::Int(1)]),
                    call(0, "remove", vec![Value::Int(1)]),
                ],
                vec![call(0, "len", vec![])],
            ],
        );
        assert_eq!(
            test.to_string(),
            r#"let c0 = Cache::new(2); c0.put(1, "x"); thread 0: c0.get(1); c0.remove(1) | thread 1: c0.len()"#
        );
    }

    #[test]
    fn values_read_as_rust() {
        for (value, expect) in [
            (Value::Str("a\"b".into()), "\"a\\\"b\""),
            (
                Value::List(vec![Value::Int(1), Value::Int(-2)]),
                "vec![1, -2]",
            ),
            (Value::Option(Some(Box::new(Value::Char('x')))), "Some('x')"),
            (Value::Option(None), "None"),
            (Value::Tuple(vec![Value::Bool(true)]), "(true,)"),
            (Value::Tuple(vec![]), "()"),
            (Value::Closure(Box::new(Value::Float(1.0))), "|| 1.0"),
            (Value::Duration(2000), "Duration::from_micros(2000)"),
            (Value::Err(Box::new(Value::Int(3))), "Err(3)"),
            (Value::Instance(1), "&c1"),
            (Value::Handle(2), "&h2"),
        ] {
            assert_eq!(value.to_string(), expect);
        }
    }

    #[test]
    fn a_repeated_prefix_call_is_written_as_the_loop_that_runs() {
        let mut push = call(0, "push", vec![Value::Int(0)]);
        push.times = 30;
        let test = test(
            vec![call(0, "new", vec![])],
            vec![push, call(0, "pop", vec![])],
            [
                vec![call(0, "push", vec![Value::Int(1)])],
                vec![call(0, "len", vec![])],
            ],
        );
        check(
            &test,
            &[
                "let c0 = Cache::new();",
                "for _ in 0..30 { c0.push(0); }",
                "c0.pop();",
            ],
            [&["c0.push(1)"], &["c0.len()"]],
        );
    }

    /// A handle is kept from its owner's call, and its methods are called on it by name.
    #[test]
    fn handles_are_kept_in_the_setup_and_their_methods_called_on_them() {
        let mut test = test(
            vec![call(0, "new", vec![])],
            vec![call(0, "Bar::inc", vec![Value::Int(1)])],
            [
                vec![call(0, "render", vec![])],
                vec![call(0, "Bar::tick", vec![])],
            ],
        );
        test.handles = vec![call(0, "add", vec![Value::Int(3)])];
        check(
            &test,
            &[
                "let c0 = Cache::new();",
                "let h0 = c0.add(3);",
                "h0.inc(1);",
            ],
            [&["c0.render()"], &["h0.tick()"]],
        );
        assert_eq!(
            test.to_string(),
            "let c0 = Cache::new(); let h0 = c0.add(3); h0.inc(1); thread 0: c0.render() | thread 1: h0.tick()"
        );
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
        let reading = Reading {
            builders: &builders,
            functions: &NO_FUNCTIONS,
        };
        let chained = call(
            0,
            "builder",
            vec![Value::Int(0), Value::Duration(1), Value::Int(3)],
        );
        assert_eq!(
            reading.constructor("k::Limiter", 0, &chained),
            "let c0 = Limiter::builder(0, Duration::from_micros(1)).max_tokens(3).build();"
        );
        let short = call(0, "builder", vec![Value::Int(0)]);
        assert_eq!(
            reading.constructor("k::Limiter", 1, &short),
            "let c1 = Limiter::builder(0);"
        );
        assert_eq!(
            Reading::PLAIN.constructor("k::Limiter", 0, &chained),
            "let c0 = Limiter::builder(0, Duration::from_micros(1), 3);"
        );
    }

    /// A free function's constructor reads by its path, a tuple taken apart, and a handle
    /// from the tuple is the element it names.
    #[test]
    fn a_free_function_returning_a_tuple_is_taken_apart() {
        let functions: Functions = [(
            "bounded".to_string(),
            FreeFunction {
                path: "crossbeam_channel::bounded".into(),
                tuple: Some([0, 2]),
            },
        )]
        .into();
        let mut test = test(
            vec![call(0, "bounded", vec![Value::Int(1)])],
            vec![],
            [
                vec![call(0, "send", vec![Value::Int(3)])],
                vec![call(0, "Receiver::recv", vec![])],
            ],
        );
        test.handles = vec![call(0, "#1", vec![])];
        let reading = Reading {
            builders: &NO_BUILDERS,
            functions: &functions,
        };
        let layout = layout(&test, &reading);
        assert_eq!(
            layout.setup,
            [
                "let (c0, c0_e1) = crossbeam_channel::bounded(1);",
                "let h0 = c0_e1;"
            ]
        );
        assert_eq!(layout.column(0), ["c0.send(3)"]);
        assert_eq!(layout.column(1), ["h0.recv()"]);
    }

    /// A thread's call that keeps its result binds its local where it runs, thread 1's
    /// after thread 0's; a repeated call reads as its loop.
    #[test]
    fn thread_locals_are_bound_in_their_column() {
        let keep = |method: &str, arg: &str| Call {
            keep: true,
            ..call(0, method, vec![Value::Str(arg.into())])
        };
        let mut repeated = call(0, "intern", vec![Value::Str("b".into())]);
        repeated.times = 31;
        let test = test(
            vec![call(0, "new", vec![])],
            vec![repeated.clone()],
            [
                vec![keep("intern", "a"), repeated],
                vec![
                    keep("intern", "a"),
                    call(0, "resolve", vec![Value::Handle(1)]),
                    call(1, "Sym::hash", vec![]),
                ],
            ],
        );
        check(
            &test,
            &[
                "let c0 = Cache::new();",
                "for _ in 0..31 { c0.intern(\"b\"); }",
            ],
            [
                &[
                    "let h0 = c0.intern(\"a\")",
                    "for _ in 0..31 { c0.intern(\"b\"); }",
                ],
                &["let h1 = c0.intern(\"a\")", "c0.resolve(&h1)", "h1.hash()"],
            ],
        );
    }

    /// A scope reads as the guard bound, the calls made while it lives, and its end; on one
    /// line, as its block.
    #[test]
    fn a_scope_reads_as_its_guard_the_calls_it_spans_and_its_end() {
        let reserve = |finish: Option<Call>| Call {
            scope: Some(Box::new(Scope {
                then: vec![call(0, "book", vec![Value::Int(3), Value::Int(1)])],
                finish,
            })),
            ..call(0, "reserve", vec![Value::Int(3)])
        };
        let test = test(
            vec![call(0, "new", vec![])],
            vec![],
            [
                vec![reserve(Some(call(0, "confirm", vec![Value::Int(2)])))],
                vec![reserve(None)],
            ],
        );
        check(
            &test,
            &["let c0 = Cache::new();"],
            [
                &["let g = c0.reserve(3)", "  c0.book(3, 1)", "  g.confirm(2)"],
                &["let g = c0.reserve(3)", "  c0.book(3, 1)", "  drop(g)"],
            ],
        );
        assert_eq!(
            test.to_string(),
            "let c0 = Cache::new(); thread 0: { let g = c0.reserve(3); c0.book(3, 1); g.confirm(2) } | thread 1: { let g = c0.reserve(3); c0.book(3, 1); drop(g) }"
        );
    }

    /// A call on a guard reads as one expression, the guard's call first.
    #[test]
    fn a_call_chained_on_a_guard_reads_as_one_expression() {
        let add = Call {
            chained: Some(Chain {
                from: "get_or_create".into(),
                args: 1,
            }),
            ..call(0, "Gauge::add", vec![Value::Str("a".into()), Value::Int(2)])
        };
        assert_eq!(
            call_code(&add, &Reading::PLAIN),
            "c0.get_or_create(\"a\").add(2)"
        );
    }

    /// Second instances, passed by reference, and a thread without calls.
    #[test]
    fn second_instances_are_passed_by_name_and_an_empty_thread_reads_as_a_dash() {
        let test = test(
            vec![call(0, "default", vec![]), call(0, "default", vec![])],
            vec![],
            [vec![call(0, "transfer", vec![Value::Instance(1)])], vec![]],
        );
        assert_eq!(
            test.to_string(),
            "let c0 = Cache::default(); let c1 = Cache::default(); thread 0: c0.transfer(&c1) | thread 1: -"
        );
    }

    /// A spelling's hooks: every argument, method name, call and kept value goes through
    /// them, the chained call's first call too.
    #[test]
    fn a_spelling_writes_arguments_methods_calls_and_kept_values() {
        struct Loud;
        impl Spelling for Loud {
            fn constructor(&self, _: &str, index: usize, _: &Call) -> String {
                format!("let {} = T::make();", instance_name(index))
            }
            fn arg(&self, _: &Call, index: usize, value: &Value) -> String {
                format!("a{index}({value})")
            }
            fn method(&self, _: &str, own: &str) -> String {
                format!("{own}::<u8>")
            }
            fn made(&self, method: &str, expr: String) -> String {
                format!("made[{method}]({expr})")
            }
            fn kept(&self, _: &Call, expr: String) -> String {
                format!("Arc::new({expr})")
            }
            fn discarded(&self, expr: String) -> String {
                format!("let _ = {expr}")
            }
        }
        let add = Call {
            chained: Some(Chain {
                from: "get_or_create".into(),
                args: 1,
            }),
            ..call(0, "Gauge::add", vec![Value::Str("a".into()), Value::Int(2)])
        };
        let mut test = test(vec![call(0, "new", vec![])], vec![add], [vec![], vec![]]);
        test.handles = vec![call(0, "gauge", vec![])];
        assert_eq!(
            setup(&test, &Loud),
            [
                "let c0 = T::make();",
                "let h0 = Arc::new(made[gauge](c0.gauge::<u8>()));",
                "let _ = made[Gauge::add](made[get_or_create](c0.get_or_create::<u8>(a0(\"a\"))).add::<u8>(a1(2)));",
            ]
        );
    }
}
