//! Test cases as the worker reads them, the decoding of argument values into the Rust types
//! the generated harness asks for ([`FromArg`]), and what a call that cannot be made answers
//! ([`CallError`]).
//!
//! The JSON shapes are those of `generator::TestCase`/`Call`/`Value` (externally tagged,
//! snake_case), which a request of the protocol carries (`oracle/src/protocol.rs` holds the
//! two to the same shapes). Decoding is lenient on purpose: a type parameter instantiated as
//! `String` may receive an integer from the generator, and gets its decimal text.

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use std::fmt;
use std::time::Duration;

/// A call that could not be made: unknown method, an argument that does not decode, a
/// constructor that returned `Err` or `None`. Answered as `setup_failed`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallError(pub String);

impl CallError {
    pub fn new(message: impl Into<String>) -> CallError {
        CallError(message.into())
    }
}

/// A concrete argument value (`generator::Value`).
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Int(i128),
    Bool(bool),
    Char(char),
    Float(f64),
    Str(String),
    List(Vec<Arg>),
    Option(Option<Box<Arg>>),
    Tuple(Vec<Arg>),
    /// Microseconds.
    Duration(u64),
    Instance(usize),
    Closure(Box<Arg>),
    /// `Err` of this value (`generator::Value::Err`); any other value is `Ok` of itself where
    /// a `Result` is wanted.
    Err(Box<Arg>),
    /// A value built by a constructor of one of the type's value types: the constructor's
    /// name and every argument in order.
    Built {
        ctor: String,
        args: Vec<Arg>,
    },
    /// Made by the driver from the receiver (`generator::Value::FromReceiver`): the method.
    FromReceiver(String),
    /// A handle the test keeps (`generator::Value::Handle`), by index.
    Handle(usize),
}

/// A constructor or method call (`generator::Call`).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub method: String,
    pub receiver: usize,
    pub args: Vec<Arg>,
    /// Calls in a row (a prefix's `for _ in 0..times`); at least 1.
    pub times: u32,
    /// In a thread: the slot among the thread's locals its result is kept in
    /// (`generator::Call::keep`), numbered as the test is decoded.
    pub local: Option<usize>,
    /// A handle method's call made on a fresh call's result in one expression: `receiver` is
    /// the instance (`generator::Call::chained`).
    pub chained: bool,
    /// The guard the call returns kept while the scope's calls run, then handed to the
    /// scope's finishing call (`generator::Call::scope`).
    pub scope: Option<Box<Scope>>,
}

/// What a thread does while it holds a call's guard (`generator::Scope`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scope {
    pub then: Vec<Call>,
    /// The guard's method, with its arguments.
    pub finish: Option<Call>,
}

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scope, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scope;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a scope")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scope, A::Error> {
                let mut scope = Scope::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Then => scope.then = map.next_value()?,
                        Key::Finish => scope.finish = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(scope)
            }
        }
        d.deserialize_map(V)
    }
}

/// A test case (`generator::TestCase`), the parts a worker needs.
#[derive(Debug, Clone, PartialEq)]
pub struct TestData {
    pub id: u64,
    pub type_path: String,
    pub instances: Vec<Call>,
    /// Calls on instances whose results the test keeps as handles (`let h0 = c0.add(3)`);
    /// a handle method's call names its handle by `receiver`.
    pub handles: Vec<Call>,
    pub prefix: Vec<Call>,
    pub threads: [Vec<Call>; 2],
}

// Decoding, written against serde's data model by hand (the runtime, like the protocol crate,
// uses no derive, whose proc-macro would join every harness's build): the worker decodes each
// request line (`covcon_protocol::Request<TestData>`) straight into these types without
// building a `serde_json::Value` tree first, and the same impls decode from a `Value` when a
// malformed line has to be taken apart test by test.

impl<'de> Deserialize<'de> for TestData {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TestData, D::Error> {
        d.deserialize_map(TestDataVisitor)
    }
}

struct TestDataVisitor;

impl<'de> Visitor<'de> for TestDataVisitor {
    type Value = TestData;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a covcon test case")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TestData, A::Error> {
        let mut test = TestData {
            id: 0,
            type_path: String::new(),
            instances: Vec::new(),
            handles: Vec::new(),
            prefix: Vec::new(),
            threads: [Vec::new(), Vec::new()],
        };
        let (mut has_type, mut has_threads) = (false, false);
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Id => test.id = map.next_value()?,
                Key::TypePath => {
                    test.type_path = map.next_value()?;
                    has_type = true;
                }
                Key::Instances => {
                    test.instances = map.next_value::<Option<_>>()?.unwrap_or_default()
                }
                Key::Handles => test.handles = map.next_value::<Option<_>>()?.unwrap_or_default(),
                Key::Prefix => test.prefix = map.next_value::<Option<_>>()?.unwrap_or_default(),
                Key::Threads => {
                    test.threads = map.next_value::<ThreadCalls>()?.0;
                    has_threads = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !has_type {
            return Err(de::Error::custom("test case without `type_path`"));
        }
        if !has_threads {
            return Err(de::Error::custom(
                "`threads` must be a list of two lists of calls",
            ));
        }
        // Each thread's keeping calls get their slots, in order.
        for calls in &mut test.threads {
            let locals = calls.iter_mut().filter_map(|c| c.local.as_mut());
            for (slot, local) in locals.enumerate() {
                *local = slot;
            }
        }
        Ok(test)
    }
}

/// `threads`: exactly two lists of calls.
struct ThreadCalls([Vec<Call>; 2]);

impl<'de> Deserialize<'de> for ThreadCalls {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ThreadCalls, D::Error> {
        let mut lists = Vec::<Vec<Call>>::deserialize(d)?;
        if lists.len() != 2 {
            return Err(de::Error::custom(
                "`threads` must be a list of two lists of calls",
            ));
        }
        let second = lists.pop().unwrap_or_default();
        let first = lists.pop().unwrap_or_default();
        Ok(ThreadCalls([first, second]))
    }
}

impl<'de> Deserialize<'de> for Call {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Call, D::Error> {
        d.deserialize_map(CallVisitor)
    }
}

struct CallVisitor;

impl<'de> Visitor<'de> for CallVisitor {
    type Value = Call;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a call with a `method`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Call, A::Error> {
        let (mut method, mut receiver, mut args, mut times) = (None, 0, Vec::new(), 1);
        let (mut keep, mut chained, mut scope) = (false, false, None);
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Method => method = Some(map.next_value::<String>()?),
                Key::Receiver => receiver = map.next_value::<Option<usize>>()?.unwrap_or(0),
                Key::Args => args = map.next_value::<Option<_>>()?.unwrap_or_default(),
                Key::Times => times = map.next_value::<u32>()?.max(1),
                Key::Keep => keep = map.next_value::<bool>()?,
                Key::Chained => {
                    chained = map.next_value::<Option<IgnoredAny>>()?.is_some();
                }
                Key::Scope => scope = map.next_value::<Option<Box<Scope>>>()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let method = method.ok_or_else(|| de::Error::custom("call without `method`"))?;
        Ok(Call {
            method,
            receiver,
            args,
            times,
            // Numbered by the test that holds the call.
            local: keep.then_some(0),
            chained,
            scope,
        })
    }
}

impl<'de> Deserialize<'de> for Arg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Arg, D::Error> {
        d.deserialize_map(ArgVisitor)
    }
}

struct ArgVisitor;

impl<'de> Visitor<'de> for ArgVisitor {
    type Value = Arg;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a covcon value such as {\"int\": 3}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Arg, A::Error> {
        let Some(tag) = map.next_key::<Key>()? else {
            return Err(de::Error::custom("not a covcon value: {}"));
        };
        let arg = match tag {
            Key::Int => Arg::Int(map.next_value::<Int>()?.0),
            Key::Bool => Arg::Bool(map.next_value()?),
            Key::Char => Arg::Char(map.next_value()?),
            Key::Float => Arg::Float(map.next_value()?),
            Key::Str => Arg::Str(map.next_value()?),
            Key::List => Arg::List(map.next_value()?),
            Key::Tuple => Arg::Tuple(map.next_value()?),
            Key::Option => Arg::Option(map.next_value::<Option<Box<Arg>>>()?),
            Key::Duration => Arg::Duration(map.next_value()?),
            Key::Instance => Arg::Instance(map.next_value()?),
            Key::Closure => Arg::Closure(map.next_value()?),
            Key::Err => Arg::Err(map.next_value()?),
            Key::FromReceiver => Arg::FromReceiver(map.next_value()?),
            Key::Handle => Arg::Handle(map.next_value()?),
            Key::Built => {
                let built = map.next_value::<BuiltArg>()?;
                Arg::Built {
                    ctor: built.0,
                    args: built.1,
                }
            }
            Key::Other(name) => {
                return Err(de::Error::custom(format!(
                    "not a covcon value: unknown kind `{name}`"
                )))
            }
            other => {
                return Err(de::Error::custom(format!(
                    "not a covcon value: unknown kind `{other:?}`"
                )))
            }
        };
        // One kind per value: `{"int": 1, "str": "a"}` is not a value.
        if map.next_key::<IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("not a covcon value: more than one kind"));
        }
        Ok(arg)
    }
}

/// `{"ty": .., "ctor": "new", "args": [..], "form": ..}`: the constructor and its arguments
/// (how the value is written is the reports' business).
struct BuiltArg(String, Vec<Arg>);

impl<'de> Deserialize<'de> for BuiltArg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<BuiltArg, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = BuiltArg;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a built value with a `ctor` and `args`")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BuiltArg, A::Error> {
                let (mut ctor, mut args) = (None, Vec::new());
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Ctor => ctor = Some(map.next_value::<String>()?),
                        Key::Args => args = map.next_value::<Option<_>>()?.unwrap_or_default(),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let ctor = ctor.ok_or_else(|| de::Error::custom("built value without `ctor`"))?;
                Ok(BuiltArg(ctor, args))
            }
        }
        d.deserialize_map(V)
    }
}

/// An integer argument: any JSON number, floats truncated (the generator writes integers; a
/// hand-edited replay file may not).
struct Int(i128);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Int, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E>(self, n: i64) -> Result<Int, E> {
                Ok(Int(i128::from(n)))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Int, E> {
                Ok(Int(i128::from(n)))
            }
            fn visit_i128<E>(self, n: i128) -> Result<Int, E> {
                Ok(Int(n))
            }
            fn visit_u128<E>(self, n: u128) -> Result<Int, E> {
                Ok(Int(n as i128))
            }
            fn visit_f64<E>(self, f: f64) -> Result<Int, E> {
                Ok(Int(f as i128))
            }
        }
        d.deserialize_any(V)
    }
}

/// The field names of test cases, calls and values, decoded without allocating (the names of
/// the requests that carry them are the protocol crate's).
#[derive(Debug)]
enum Key {
    // Test cases and calls.
    Id,
    TypePath,
    Instances,
    Handles,
    Prefix,
    Threads,
    Pair,
    NoiseSeed,
    Control,
    Method,
    Receiver,
    Args,
    Times,
    Keep,
    Chained,
    Scope,
    Then,
    Finish,
    // Value kinds.
    Int,
    Bool,
    Char,
    Float,
    Str,
    List,
    Option,
    Tuple,
    Duration,
    Instance,
    Closure,
    Err,
    Built,
    FromReceiver,
    Handle,
    Ctor,
    Other(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E>(self, name: &str) -> Result<Key, E> {
                Ok(match name {
                    "id" => Key::Id,
                    "type_path" => Key::TypePath,
                    "instances" => Key::Instances,
                    "handles" => Key::Handles,
                    "prefix" => Key::Prefix,
                    "threads" => Key::Threads,
                    "pair" => Key::Pair,
                    "noise_seed" => Key::NoiseSeed,
                    "control" => Key::Control,
                    "method" => Key::Method,
                    "receiver" => Key::Receiver,
                    "args" => Key::Args,
                    "times" => Key::Times,
                    "keep" => Key::Keep,
                    "chained" => Key::Chained,
                    "scope" => Key::Scope,
                    "then" => Key::Then,
                    "finish" => Key::Finish,
                    "int" => Key::Int,
                    "bool" => Key::Bool,
                    "char" => Key::Char,
                    "float" => Key::Float,
                    "str" => Key::Str,
                    "list" => Key::List,
                    "option" => Key::Option,
                    "tuple" => Key::Tuple,
                    "duration" => Key::Duration,
                    "instance" => Key::Instance,
                    "closure" => Key::Closure,
                    "err" => Key::Err,
                    "built" => Key::Built,
                    "from_receiver" => Key::FromReceiver,
                    "handle" => Key::Handle,
                    "ctor" => Key::Ctor,
                    other => Key::Other(other.to_string()),
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

impl Arg {
    fn as_int(&self) -> Option<i128> {
        match self {
            Arg::Int(n) => Some(*n),
            Arg::Bool(b) => Some(i128::from(*b)),
            Arg::Char(c) => Some(i128::from(u32::from(*c))),
            Arg::Float(f) => Some(*f as i128),
            Arg::Str(s) => s.parse().ok().or(Some(s.len() as i128)),
            Arg::Duration(us) => Some(i128::from(*us)),
            Arg::Closure(inner) => inner.as_int(),
            Arg::Option(Some(inner)) => inner.as_int(),
            _ => None,
        }
    }
}

impl Arg {
    /// A built value's constructor and arguments (the generated value builders match on
    /// them).
    pub fn built(&self) -> Result<(&str, &[Arg]), CallError> {
        match self {
            Arg::Built { ctor, args } => Ok((ctor, args)),
            Arg::Closure(inner) => inner.built(),
            other => Err(CallError(format!("not a built value: {other:?}"))),
        }
    }

    /// An optional argument: `None`, or the value inside.
    pub fn option(&self) -> Option<&Arg> {
        match self {
            Arg::Option(inner) => inner.as_deref(),
            other => Some(other),
        }
    }

    /// A list argument's items (a single value counts as a list of one).
    pub fn items(&self) -> &[Arg] {
        match self {
            Arg::List(items) | Arg::Tuple(items) => items,
            Arg::Option(None) => &[],
            other => std::slice::from_ref(other),
        }
    }
}

/// Argument `i` of a built value's arguments, decoded.
pub fn arg_at<A: FromArg>(args: &[Arg], i: usize) -> Result<A, CallError> {
    let arg = raw_at(args, i)?;
    A::from_arg(arg).map_err(|e| CallError(format!("argument {i}: {e}")))
}

/// The value a closure argument `i` of a built value returns, decoded.
pub fn closure_at<A: FromArg>(args: &[Arg], i: usize) -> Result<A, CallError> {
    match raw_at(args, i)? {
        Arg::Closure(inner) => {
            A::from_arg(inner).map_err(|e| CallError(format!("argument {i}: {e}")))
        }
        _ => arg_at(args, i),
    }
}

/// Argument `i` of a built value's arguments, undecoded.
pub fn raw_at(args: &[Arg], i: usize) -> Result<&Arg, CallError> {
    args.get(i)
        .ok_or_else(|| CallError(format!("a constructor needs argument {i}")))
}

/// Decoding of an [`Arg`] into an owned Rust value.
pub trait FromArg: Sized {
    fn from_arg(arg: &Arg) -> Result<Self, String>;
}

fn mismatch<T>(arg: &Arg) -> Result<T, String> {
    Err(format!(
        "cannot make a `{}` from {arg:?}",
        std::any::type_name::<T>()
    ))
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl FromArg for $t {
            fn from_arg(arg: &Arg) -> Result<$t, String> {
                match arg.as_int() {
                    // Out-of-range values wrap, so a pool value never fails a call.
                    Some(n) => Ok(n as $t),
                    None => mismatch(arg),
                }
            }
        }
    )*};
}
ints!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

macro_rules! floats {
    ($($t:ty),*) => {$(
        impl FromArg for $t {
            fn from_arg(arg: &Arg) -> Result<$t, String> {
                match arg {
                    Arg::Float(f) => Ok(*f as $t),
                    other => other.as_int().map(|n| n as $t).ok_or(()).or_else(|()| mismatch(arg)),
                }
            }
        }
    )*};
}
floats!(f32, f64);

impl FromArg for bool {
    fn from_arg(arg: &Arg) -> Result<bool, String> {
        match arg {
            Arg::Bool(b) => Ok(*b),
            other => other
                .as_int()
                .map(|n| n != 0)
                .ok_or(())
                .or_else(|()| mismatch(arg)),
        }
    }
}

impl FromArg for char {
    fn from_arg(arg: &Arg) -> Result<char, String> {
        match arg {
            Arg::Char(c) => Ok(*c),
            Arg::Str(s) if !s.is_empty() => Ok(s.chars().next().unwrap_or('a')),
            other => match other.as_int() {
                Some(n) => Ok(char::from_u32((n as u32) % 26 + u32::from('a')).unwrap_or('a')),
                None => mismatch(arg),
            },
        }
    }
}

impl FromArg for String {
    fn from_arg(arg: &Arg) -> Result<String, String> {
        match arg {
            Arg::Str(s) => Ok(s.clone()),
            Arg::Char(c) => Ok(c.to_string()),
            Arg::Int(n) => Ok(n.to_string()),
            Arg::Bool(b) => Ok(b.to_string()),
            Arg::Float(f) => Ok(f.to_string()),
            Arg::Closure(inner) => String::from_arg(inner),
            _ => mismatch(arg),
        }
    }
}

/// For `&'static str` parameters and `Option<&str>`, `Vec<&str>` and the like: the string is
/// leaked, a few bytes per call, which a harness worker can afford.
impl FromArg for &'static str {
    fn from_arg(arg: &Arg) -> Result<&'static str, String> {
        String::from_arg(arg).map(|s| &*Box::leak(s.into_boxed_str()))
    }
}

impl FromArg for Duration {
    fn from_arg(arg: &Arg) -> Result<Duration, String> {
        match arg {
            Arg::Duration(us) => Ok(Duration::from_micros(*us)),
            other => match other.as_int() {
                Some(n) => Ok(Duration::from_micros(n.clamp(0, 1_000_000) as u64)),
                None => mismatch(arg),
            },
        }
    }
}

impl FromArg for () {
    fn from_arg(_: &Arg) -> Result<(), String> {
        Ok(())
    }
}

impl<T: FromArg> FromArg for Vec<T> {
    fn from_arg(arg: &Arg) -> Result<Vec<T>, String> {
        match arg {
            Arg::List(items) | Arg::Tuple(items) => items.iter().map(T::from_arg).collect(),
            // A string given where bytes (or chars) are wanted: one element per byte.
            Arg::Str(s) => s
                .bytes()
                .map(|b| T::from_arg(&Arg::Int(i128::from(b))))
                .collect(),
            Arg::Option(None) => Ok(Vec::new()),
            other => Ok(vec![T::from_arg(other)?]),
        }
    }
}

impl<T: FromArg> FromArg for Box<T> {
    fn from_arg(arg: &Arg) -> Result<Box<T>, String> {
        T::from_arg(arg).map(Box::new)
    }
}

impl<T: FromArg> FromArg for std::sync::Arc<T> {
    fn from_arg(arg: &Arg) -> Result<std::sync::Arc<T>, String> {
        T::from_arg(arg).map(std::sync::Arc::new)
    }
}

macro_rules! non_zero {
    ($($t:ty),*) => {$(
        /// Zero (after the integer's wrapping) becomes one, as the generator draws it.
        impl FromArg for std::num::NonZero<$t> {
            fn from_arg(arg: &Arg) -> Result<std::num::NonZero<$t>, String> {
                let n = match <$t>::from_arg(arg)? {
                    0 => 1,
                    n => n,
                };
                std::num::NonZero::new(n).ok_or_else(|| format!("{n} is zero"))
            }
        }
    )*};
}
non_zero!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

/// `Err` of the error's value, or `Ok` of any other value.
impl<T: FromArg, E: FromArg> FromArg for Result<T, E> {
    fn from_arg(arg: &Arg) -> Result<Self, String> {
        match arg {
            Arg::Err(err) => Ok(Err(E::from_arg(err)?)),
            Arg::Closure(inner) => Self::from_arg(inner),
            other => Ok(Ok(T::from_arg(other)?)),
        }
    }
}

impl<T: FromArg> FromArg for Option<T> {
    fn from_arg(arg: &Arg) -> Result<Option<T>, String> {
        match arg {
            Arg::Option(None) => Ok(None),
            Arg::Option(Some(inner)) => T::from_arg(inner).map(Some),
            other => T::from_arg(other).map(Some),
        }
    }
}

macro_rules! tuples {
    ($(($($t:ident $i:tt),*)),*) => {$(
        impl<$($t: FromArg),*> FromArg for ($($t,)*) {
            fn from_arg(arg: &Arg) -> Result<($($t,)*), String> {
                match arg {
                    Arg::Tuple(items) | Arg::List(items) => Ok(($(
                        $t::from_arg(items.get($i).ok_or_else(|| format!("tuple too short: {arg:?}"))?)?,
                    )*)),
                    _ => mismatch(arg),
                }
            }
        }
    )*};
}
tuples!((A 0), (A 0, B 1), (A 0, B 1, C 2), (A 0, B 1, C 2, D 3), (A 0, B 1, C 2, D 3, E 4));

/// A closure argument: returns a clone of `value` each time it is called, so it satisfies
/// `FnOnce() -> T`, `FnMut() -> T` and `Fn() -> T` bounds alike. It is a schedule point
/// first: a caller's closure does work while the type waits for it (an initializer runs while
/// the cell says "running"), and the other thread may run then.
pub fn closure<T: Clone>(value: T) -> impl Fn() -> T + Clone {
    move || {
        crate::points::schedule_point();
        value.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value as Json};

    fn check(json: Json, expect: &str) {
        let text = json.to_string();
        let arg =
            serde_json::from_str::<Arg>(&text).map_or_else(|e| e.to_string(), |a| format!("{a:?}"));
        // Decoding from a `Value` (the worker's path for malformed lines) agrees.
        let from_value =
            Arg::deserialize(&json).map_or_else(|e| e.to_string(), |a| format!("{a:?}"));
        assert_eq!(
            arg.split(" at line").next(),
            Some(from_value.as_str()),
            "{text}"
        );
        assert_eq!(from_value, expect, "{text}");
    }

    #[test]
    fn values_in_generator_json_decode_to_args() {
        check(json!({"int": 3}), "Int(3)");
        check(json!({"str": "a"}), "Str(\"a\")");
        check(json!({"option": null}), "Option(None)");
        check(
            json!({"option": {"bool": true}}),
            "Option(Some(Bool(true)))",
        );
        check(
            json!({"tuple": [{"int": 1}, {"char": "x"}]}),
            "Tuple([Int(1), Char('x')])",
        );
        check(json!({"closure": {"duration": 5}}), "Closure(Duration(5))");
        check(
            json!({"closure": {"err": {"int": 3}}}),
            "Closure(Err(Int(3)))",
        );
        check(json!({"instance": 1}), "Instance(1)");
        check(
            json!({"built": {"ty": "k::Opts", "ctor": "new", "args": [{"str": "a"}], "form": {"call": {}}}}),
            "Built { ctor: \"new\", args: [Str(\"a\")] }",
        );
        check(json!({"int": 2.9}), "Int(2)");
        check(json!({"int": u64::MAX}), "Int(18446744073709551615)");
        check(
            json!({"bogus": 1}),
            "not a covcon value: unknown kind `bogus`",
        );
        check(
            json!({"int": 1, "str": "a"}),
            "not a covcon value: more than one kind",
        );
        check(json!({}), "not a covcon value: {}");
    }

    #[test]
    fn lenient_decoding_turns_ints_into_strings_and_bytes() {
        assert_eq!(String::from_arg(&Arg::Int(4)).unwrap(), "4");
        assert_eq!(Vec::<u8>::from_arg(&Arg::Str("ab".into())).unwrap(), b"ab");
        assert_eq!(u8::from_arg(&Arg::Int(300)).unwrap(), 44);
        assert_eq!(
            Option::<&str>::from_arg(&Arg::Option(Some(Box::new(Arg::Str("k".into()))))).unwrap(),
            Some("k")
        );
        assert_eq!(
            <(u32, Option<String>)>::from_arg(&Arg::Tuple(vec![Arg::Int(1), Arg::Option(None)]))
                .unwrap(),
            (1, None)
        );
    }

    /// A closure's `Result`: `Err` of the error's value, `Ok` of anything else.
    #[test]
    fn a_result_is_err_of_an_err_value_and_ok_of_any_other() {
        type R = Result<u32, String>;
        assert_eq!(R::from_arg(&Arg::Int(4)).unwrap(), Ok(4));
        let err = Arg::Err(Box::new(Arg::Str("no".into())));
        assert_eq!(R::from_arg(&err).unwrap(), Err("no".to_string()));
        assert_eq!(
            R::from_arg(&Arg::Closure(Box::new(err))).unwrap(),
            Err("no".into())
        );
    }

    #[test]
    fn pointers_wrap_their_value_and_a_zero_non_zero_becomes_one() {
        assert_eq!(*std::sync::Arc::<u64>::from_arg(&Arg::Int(7)).unwrap(), 7);
        assert_eq!(
            *Box::<String>::from_arg(&Arg::Str("a".into())).unwrap(),
            "a"
        );
        assert_eq!(
            std::num::NonZeroUsize::from_arg(&Arg::Int(0))
                .unwrap()
                .get(),
            1
        );
        assert_eq!(
            std::num::NonZeroU8::from_arg(&Arg::Int(256)).unwrap().get(),
            1
        );
        assert_eq!(
            std::num::NonZeroI32::from_arg(&Arg::Int(-3)).unwrap().get(),
            -3
        );
    }

    /// Each thread's keeping calls get their slots in order, from 0 in each thread; a chained
    /// call is marked; calls elsewhere keep nothing.
    #[test]
    fn keeping_calls_are_numbered_per_thread_as_the_test_decodes() {
        let call = |method: &str, keep: bool| json!({"method": method, "args": [], "keep": keep});
        let test: TestData = serde_json::from_value(json!({
            "id": 1,
            "type_path": "k::T",
            "instances": [{"method": "new", "args": []}],
            "threads": [
                [call("intern", true), call("len", false), call("intern", true)],
                [call("len", false), call("intern", true),
                 {"method": "Gauge::add", "args": [], "chained": {"from": "get", "args": 0}}],
            ],
        }))
        .unwrap();
        let locals =
            |t: usize| -> Vec<Option<usize>> { test.threads[t].iter().map(|c| c.local).collect() };
        assert_eq!(locals(0), [Some(0), None, Some(1)]);
        assert_eq!(locals(1), [None, Some(0), None]);
        assert!(test.threads[1][2].chained && !test.threads[1][1].chained);
        assert_eq!(test.instances[0].local, None);
    }

    /// A request whose test case does not decode is an error saying what is wrong, where, not
    /// a panic; one that decodes names its test.
    #[test]
    fn a_request_reads_its_test_case_or_says_what_is_wrong_with_it() {
        let read = |line: &str| {
            serde_json::from_str::<covcon_protocol::Request<TestData>>(line)
                .map(|request| request.answer_ids(|test| test.id))
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            read(
                r#"{"op":"concurrent","test":{"id":7,"type_path":"c::T","pair":["a","b"],"instances":[{"method":"new","args":[]}],"prefix":[],"threads":[[{"method":"a","receiver":0,"args":[{"int":1}]}],[]],"noise_seed":3}}"#
            ),
            Ok(vec![7])
        );
        assert_eq!(
            read(r#"{"op":"concurrent","test":{"id":1,"type_path":"c::T","threads":[[]]}}"#),
            Err("`threads` must be a list of two lists of calls at line 1 column 68".into())
        );
        assert_eq!(
            read(
                r#"{"op":"concurrent","test":{"id":1,"type_path":"c::T","threads":[[{"args":[]}],[]]}}"#
            ),
            Err("call without `method` at line 1 column 76".into())
        );
        assert_eq!(
            read(r#"{"op": "launch", "test": {"id": 9}}"#),
            Err("test case without `type_path` at line 1 column 34".into())
        );
    }
}
