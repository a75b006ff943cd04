//! The names by which the model, a test case and a saved violation refer to what a test
//! calls, and the one place they are written and read (analysis re-exports it as
//! `analysis::refs`; the runtime reads a call's method with it).
//!
//! They travel as text (in the model's JSON, a test case's JSON, the wire to the harness and
//! a saved violation, which old files must still read), so their spelling is fixed:
//!
//! - a method of the type under test by its own name (`push`); a method of a *handle* type
//!   (another thread-safe type of the crate the type hands out) as `Handle::method`, the
//!   handle type's bare name first (`Bar::tick`) — Rust method names never hold `::`;
//! - where a handle comes from (the model's `Via::from`, a handle call of a test): the method
//!   of the owner that returns it (`add`), or `#k` for element `k` of the tuple the
//!   instance's constructor returns;
//! - a value type's constructor, in the harness's list of what it dropped, as
//!   `path::constructor` (`krate::Key::new`).
//!
//! Everything else reads them through [`MethodRef`], [`HandleFrom`] and
//! [`value_constructor_parts`], and writes them through [`handle_method`], [`element`] and
//! [`value_constructor`].

/// A method as the model names it: the type's own, or a handle type's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodRef<'a> {
    /// A method of the type under test (`push`).
    Own(&'a str),
    /// A method of a handle type (`Bar::tick`): the handle type's bare name and the method's
    /// own name.
    Handle { handle: &'a str, method: &'a str },
}

impl<'a> MethodRef<'a> {
    /// Reads a method name of the model (or of a test's call).
    pub fn parse(name: &'a str) -> MethodRef<'a> {
        match name.split_once("::") {
            Some((handle, method)) => MethodRef::Handle { handle, method },
            None => MethodRef::Own(name),
        }
    }

    /// The method's own name, without its handle type (`tick` of `Bar::tick`).
    pub fn method(self) -> &'a str {
        match self {
            MethodRef::Own(method) | MethodRef::Handle { method, .. } => method,
        }
    }

    /// The handle type's bare name, for a handle's method.
    pub fn handle(self) -> Option<&'a str> {
        match self {
            MethodRef::Own(_) => None,
            MethodRef::Handle { handle, .. } => Some(handle),
        }
    }

    pub fn is_handle(self) -> bool {
        matches!(self, MethodRef::Handle { .. })
    }
}

/// The model's name of method `method` of the handle type named `handle` (`Bar::tick`).
pub fn handle_method(handle: &str, method: &str) -> String {
    format!("{handle}::{method}")
}

/// Where a handle comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleFrom<'a> {
    /// A method of the owner that returns it (`add`, or `Db::open_tree` on a handle).
    Method(&'a str),
    /// Element `k` of the tuple the instance's constructor returns (`#k`).
    Element(usize),
}

impl<'a> HandleFrom<'a> {
    pub fn parse(from: &'a str) -> HandleFrom<'a> {
        match from.strip_prefix('#').and_then(|k| k.parse().ok()) {
            Some(k) => HandleFrom::Element(k),
            None => HandleFrom::Method(from),
        }
    }
}

/// How element `k` of a constructor's tuple is named as a handle's source (`#1`).
pub fn element(k: usize) -> String {
    format!("#{k}")
}

/// The key of a value type's constructor (`krate::Key::new`).
pub fn value_constructor(path: &str, constructor: &str) -> String {
    format!("{path}::{constructor}")
}

/// A [`value_constructor`] key split back into the value type's path and the constructor.
pub fn value_constructor_parts(key: &str) -> Option<(&str, &str)> {
    key.rsplit_once("::")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_as_written() {
        for (name, parsed) in [
            ("push", MethodRef::Own("push")),
            (
                "Bar::tick",
                MethodRef::Handle {
                    handle: "Bar",
                    method: "tick",
                },
            ),
        ] {
            assert_eq!(MethodRef::parse(name), parsed);
        }
        let written = handle_method("Bar", "tick");
        assert_eq!(MethodRef::parse(&written).method(), "tick");
        assert_eq!(MethodRef::parse(&written).handle(), Some("Bar"));
        assert_eq!(HandleFrom::parse(&element(2)), HandleFrom::Element(2));
        assert_eq!(HandleFrom::parse("add"), HandleFrom::Method("add"));
        // A `#` that is no element's index names no element.
        assert_eq!(HandleFrom::parse("#x"), HandleFrom::Method("#x"));
        let key = value_constructor("k::m::Key", "new");
        assert_eq!(value_constructor_parts(&key), Some(("k::m::Key", "new")));
    }
}
