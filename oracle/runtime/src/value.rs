//! Test cases as the worker reads them, and the decoding of argument values into the Rust
//! types the generated harness asks for ([`FromArg`]).
//!
//! The JSON shapes are those of `generator::TestCase`/`Call`/`Value` (externally tagged,
//! snake_case). Decoding is lenient on purpose: a type parameter instantiated as `String` may
//! receive an integer from the generator, and gets its decimal text.

use serde_json::Value as Json;
use std::time::Duration;

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
}

/// A constructor or method call (`generator::Call`).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub method: String,
    pub receiver: usize,
    pub args: Vec<Arg>,
}

/// A test case (`generator::TestCase`), the parts a worker needs.
#[derive(Debug, Clone, PartialEq)]
pub struct TestData {
    pub id: u64,
    pub type_path: String,
    pub instances: Vec<Call>,
    pub prefix: Vec<Call>,
    pub threads: [Vec<Call>; 2],
}

impl TestData {
    pub(crate) fn from_json(json: &Json) -> Result<TestData, String> {
        let calls = |key: &str| -> Result<Vec<Call>, String> {
            match json.get(key) {
                Some(Json::Array(items)) => items.iter().map(Call::from_json).collect(),
                None | Some(Json::Null) => Ok(Vec::new()),
                Some(other) => Err(format!("`{key}` is not a list: {other}")),
            }
        };
        let threads = match json.get("threads") {
            Some(Json::Array(items)) if items.len() == 2 => {
                let thread = |json: &Json| -> Result<Vec<Call>, String> {
                    json.as_array()
                        .ok_or_else(|| format!("a thread is not a list: {json}"))?
                        .iter()
                        .map(Call::from_json)
                        .collect()
                };
                [thread(&items[0])?, thread(&items[1])?]
            }
            _ => return Err("`threads` must be a list of two lists of calls".to_string()),
        };
        Ok(TestData {
            id: json.get("id").and_then(Json::as_u64).unwrap_or(0),
            type_path: json
                .get("type_path")
                .and_then(Json::as_str)
                .ok_or("test case without `type_path`")?
                .to_string(),
            instances: calls("instances")?,
            prefix: calls("prefix")?,
            threads,
        })
    }
}

impl Call {
    fn from_json(json: &Json) -> Result<Call, String> {
        let method = json
            .get("method")
            .and_then(Json::as_str)
            .ok_or_else(|| format!("call without `method`: {json}"))?;
        let args = match json.get("args") {
            Some(Json::Array(items)) => {
                items.iter().map(Arg::from_json).collect::<Result<_, _>>()?
            }
            _ => Vec::new(),
        };
        Ok(Call {
            method: method.to_string(),
            receiver: json.get("receiver").and_then(Json::as_u64).unwrap_or(0) as usize,
            args,
        })
    }
}

impl Arg {
    fn from_json(json: &Json) -> Result<Arg, String> {
        let bad = || format!("not a covcon value: {json}");
        let Json::Object(map) = json else {
            return Err(bad());
        };
        let (tag, inner) = map.iter().next().ok_or_else(bad)?;
        let list = |inner: &Json| -> Result<Vec<Arg>, String> {
            inner
                .as_array()
                .ok_or_else(bad)?
                .iter()
                .map(Arg::from_json)
                .collect()
        };
        Ok(match tag.as_str() {
            "int" => Arg::Int(json_int(inner).ok_or_else(bad)?),
            "bool" => Arg::Bool(inner.as_bool().ok_or_else(bad)?),
            "char" => Arg::Char(
                inner
                    .as_str()
                    .and_then(|s| s.chars().next())
                    .ok_or_else(bad)?,
            ),
            "float" => Arg::Float(inner.as_f64().ok_or_else(bad)?),
            "str" => Arg::Str(inner.as_str().ok_or_else(bad)?.to_string()),
            "list" => Arg::List(list(inner)?),
            "tuple" => Arg::Tuple(list(inner)?),
            "option" => match inner {
                Json::Null => Arg::Option(None),
                some => Arg::Option(Some(Box::new(Arg::from_json(some)?))),
            },
            "duration" => Arg::Duration(inner.as_u64().ok_or_else(bad)?),
            "instance" => Arg::Instance(inner.as_u64().ok_or_else(bad)? as usize),
            "closure" => Arg::Closure(Box::new(Arg::from_json(inner)?)),
            _ => return Err(bad()),
        })
    }

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

fn json_int(json: &Json) -> Option<i128> {
    json.as_i64()
        .map(i128::from)
        .or_else(|| json.as_u64().map(i128::from))
        .or_else(|| json.as_f64().map(|f| f as i128))
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
/// `FnOnce() -> T`, `FnMut() -> T` and `Fn() -> T` bounds alike.
pub fn closure<T: Clone>(value: T) -> impl Fn() -> T + Clone {
    move || value.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(json: Json, expect: &str) {
        let arg = Arg::from_json(&json).map_or_else(|e| e, |a| format!("{a:?}"));
        assert_eq!(arg, expect);
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
        check(json!({"instance": 1}), "Instance(1)");
        check(json!({"bogus": 1}), "not a covcon value: {\"bogus\":1}");
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
}
