//! Discovery of thread-safe types, constructors, methods and parameter kinds. Each test is a
//! source snippet and the compact rendering of what the model says about it.

use analysis::{analyze_source, ConstructorKind, Model, ParamKind};

fn kind(k: &ParamKind) -> String {
    match k {
        ParamKind::Int { signed, bits } => format!("{}{bits}", if *signed { "i" } else { "u" }),
        ParamKind::Bool => "bool".into(),
        ParamKind::Char => "char".into(),
        ParamKind::Float { bits } => format!("f{bits}"),
        ParamKind::String => "string".into(),
        ParamKind::Str => "str".into(),
        ParamKind::Vec { elem } => format!("vec({})", kind(elem)),
        ParamKind::Slice { elem } => format!("slice({})", kind(elem)),
        ParamKind::Ref { inner } => format!("ref({})", kind(inner)),
        ParamKind::Option { inner } => format!("option({})", kind(inner)),
        ParamKind::Result { ok, err: None } => format!("ok({})", kind(ok)),
        ParamKind::Result { ok, err: Some(err) } => {
            format!("ok({}) or err({})", kind(ok), kind(err))
        }
        ParamKind::Tuple { elems } => format!(
            "tuple({})",
            elems.iter().map(kind).collect::<Vec<_>>().join(", ")
        ),
        ParamKind::Duration => "duration".into(),
        ParamKind::NonZero { signed, bits } => {
            format!("nonzero({}{bits})", if *signed { "i" } else { "u" })
        }
        ParamKind::Pointer { pointer, inner } => format!("{pointer:?}({})", kind(inner)),
        ParamKind::Instance { passing } => format!("instance({passing:?})"),
        ParamKind::Closure { returns, .. } => format!("closure({})", kind(returns)),
        ParamKind::Generic { name } => format!("generic({name})"),
        ParamKind::Value { path } => format!("value({path})"),
        ParamKind::FromReceiver { method, by_ref } => {
            format!("{}self.{method}()", if *by_ref { "&" } else { "" })
        }
        ParamKind::Handle { ty, .. } => format!("handle({ty})"),
        ParamKind::Returned { from, .. } => format!("returned({from})"),
        ParamKind::Unsupported => "unsupported".into(),
    }
}

fn render(model: &Model) -> String {
    let mut out = String::new();
    for t in &model.types {
        let status = if t.supported() {
            "supported".to_string()
        } else {
            format!(
                "unsupported: {}",
                t.reason.as_ref().map(|r| r.to_string()).unwrap_or_default()
            )
        };
        out.push_str(&format!(
            "type {} <{}> debug={} {status}\n",
            t.path,
            t.generics
                .iter()
                .map(|g| g.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            t.implements_debug
        ));
        for c in &t.constructors {
            let params: Vec<String> = c
                .params
                .iter()
                .map(|p| format!("{}: {}", p.name, kind(&p.kind)))
                .collect();
            let chain: String = c
                .chain
                .iter()
                .map(|cc| format!(".{}({})", cc.name, cc.params.len()))
                .collect();
            let k = match c.kind {
                ConstructorKind::Function => "fn",
                ConstructorKind::Default => "default",
                ConstructorKind::Builder => "builder",
                ConstructorKind::Variant => "variant",
                ConstructorKind::Literal => "literal",
            };
            let why = c
                .reason
                .as_ref()
                .map(|r| format!(" unsupported: {r}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "  ctor {k} {}({}){chain} -> {:?}{why}\n",
                c.name,
                params.join(", "),
                c.returns
            ));
        }
        for m in &t.methods {
            let params: Vec<String> = m
                .params
                .iter()
                .map(|p| format!("{}: {}", p.name, kind(&p.kind)))
                .collect();
            let why = m
                .reason
                .as_ref()
                .map(|r| format!(" unsupported: {r}"))
                .unwrap_or_default();
            let tr = m
                .trait_name
                .as_ref()
                .map(|t| format!(" [{t}]"))
                .unwrap_or_default();
            let turbofish = if m.generic_args.is_empty() {
                String::new()
            } else {
                format!("::<{}>", m.generic_args.join(", "))
            };
            let asyncness = if m.is_async { "async " } else { "" };
            let approximate = m
                .approximate
                .as_ref()
                .map(|a| format!(" approximate: {a}"))
                .unwrap_or_default();
            let iterates = if m.iterates { " iterates" } else { "" };
            let holds = if m.holds { " holds" } else { "" };
            out.push_str(&format!(
                "  method {asyncness}{}{turbofish}({}){tr}{why}{approximate}{iterates}{holds}\n",
                m.name,
                params.join(", ")
            ));
        }
        for v in &t.values {
            let ctors: Vec<String> = v
                .constructors
                .iter()
                .map(|c| {
                    let owner = c
                        .owner
                        .as_ref()
                        .map(|o| format!("{o}::"))
                        .unwrap_or_default();
                    format!("{:?} {owner}{}({})", c.kind, c.name, c.params.len())
                })
                .collect();
            out.push_str(&format!("  value {}: {}\n", v.path, ctors.join(", ")));
        }
    }
    for d in &model.diagnostics {
        out.push_str(&format!("diagnostic {:?}: {}\n", d.severity, d.message));
    }
    out
}

fn check(source: &str, expect: &str) {
    let got: String = render(&analyze_source("demo", "2021", source))
        .lines()
        .map(|l| format!("{}\n", l.trim()))
        .collect();
    let want: String = expect
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn constructors_of_every_shape_are_found() {
    check(
        "use std::sync::{Arc, Mutex};
        #[derive(Debug, Default)]
        pub struct Pool { slots: Mutex<Vec<u8>> }
        impl Pool {
            pub fn new() -> Self { todo!() }
            pub fn shared(n: usize) -> Arc<Pool> { todo!() }
            pub fn try_new(n: u8) -> Result<Self, String> { todo!() }
            pub fn maybe(name: &str) -> Option<Self> { todo!() }
            pub fn builder(cap: u32) -> PoolBuilder { todo!() }
            fn private() -> Self { todo!() }
            pub fn size(&self) -> usize { self.slots.lock().unwrap().len() }
        }
        pub struct PoolBuilder { cap: u32 }
        impl PoolBuilder {
            pub fn max(mut self, n: u32) -> Self { self }
            pub fn name(&mut self, s: String) -> &mut Self { self }
            pub fn build(self) -> Result<Pool, String> { todo!() }
        }",
        "type demo::Pool <> debug=true supported
          ctor fn new() -> SelfValue
          ctor fn shared(n: u64) -> ArcSelf
          ctor fn try_new(n: u8) -> ResultSelf
          ctor fn maybe(name: str) -> OptionSelf
          ctor builder builder(cap: u32).max(1).name(1).build(0) -> ResultSelf
          ctor default default() -> SelfValue
          method size()",
    );
}

#[test]
fn parameter_types_map_to_kinds_and_the_rest_is_unsupported_with_a_reason() {
    check(
        "use std::sync::Mutex; use std::time::Duration; use std::sync::Arc;
        pub struct Store<K, V> { map: Mutex<Vec<(K, V)>> }
        impl<K: Clone, V: Clone> Store<K, V> {
            pub fn new() -> Self { todo!() }
            pub fn scalars(&self, a: i8, b: u64, c: isize, d: bool, e: char, f: f32) {}
            pub fn owned(&self, s: String, v: Vec<u16>, o: Option<i32>, t: (u8, bool), d: Duration) {}
            pub fn borrowed(&self, s: &str, b: &[u8], k: &K, n: &u32) {}
            pub fn generic(&self, k: K, v: V) {}
            pub fn others(&self, a: &Self, b: Arc<Self>, c: Store<K, V>) {}
            pub fn closures(&self, f: impl FnOnce() -> V, g: impl Fn()) {}
            pub fn bound<F: FnOnce() -> u32>(&self, f: F) {}
            pub fn into(&self, s: impl Into<String>, r: impl AsRef<str>) {}
            pub fn mutable(&self, v: &mut Vec<u8>) {}
            pub fn method_generic<Q: AsRef<K>>(&self, q: Q) {}
            pub fn unknown(&self, m: std::collections::HashMap<u8, u8>) {}
            pub async fn later(&self) {}
            pub fn takes_mut(&mut self) {}
        }",
        "type demo::Store <K, V> debug=false supported
          ctor fn new() -> SelfValue
          method scalars(a: i8, b: u64, c: i64, d: bool, e: char, f: f32)
          method owned(s: string, v: vec(u16), o: option(i32), t: tuple(u8, bool), d: duration)
          method borrowed(s: str, b: slice(u8), k: ref(generic(K)), n: ref(u32))
          method generic(k: generic(K), v: generic(V))
          method others(a: instance(Ref), b: instance(Arc), c: instance(Value))
          method closures(f: closure(generic(V)), g: closure(tuple()))
          method bound(f: closure(u32))
          method into(s: string, r: string)
          method mutable(v: unsupported) unsupported: parameter `v`: `&mut Vec<u8>`: a `&mut` argument cannot be shared
          method method_generic(q: unsupported) unsupported: parameter `q`: generic method parameter `Q`
          method unknown(m: unsupported) unsupported: parameter `m`: `std::collections::HashMap<u8, u8>`: covcon has no generator for this type
          method async later()",
    );
}

#[test]
fn types_without_sync_fields_are_ignored_and_unsafe_impl_sync_counts() {
    check(
        "use std::cell::UnsafeCell;
        pub struct Plain { x: u32 }
        impl Plain { pub fn new() -> Self { todo!() } pub fn get(&self) -> u32 { self.x } }
        pub struct Raw { v: UnsafeCell<u64> }
        unsafe impl Sync for Raw {}
        impl Raw { pub fn new() -> Self { todo!() } pub fn bump(&self) { unsafe { *self.v.get() += 1; } } }",
        "type demo::Raw <> debug=false supported
          ctor fn new() -> SelfValue
          method bump()",
    );
}

#[test]
fn methods_returning_an_iterator_are_marked_so_tests_drive_it() {
    check(
        "use std::sync::Mutex;
        pub struct Log { entries: Mutex<Vec<u64>> }
        pub mod iter {
            pub struct Entries<'a> { pub(crate) log: &'a super::Log, pub(crate) next: usize }
            impl Iterator for Entries<'_> { type Item = u64; fn next(&mut self) -> Option<u64> { None } }
            pub struct Cursor { pub(crate) at: usize }
        }
        impl Log {
            pub fn new() -> Self { todo!() }
            pub fn entries(&self) -> iter::Entries<'_> { todo!() }
            pub fn keys(&self) -> impl Iterator<Item = u64> + '_ { todo!() }
            pub fn values(&self) -> impl DoubleEndedIterator<Item = u64> { todo!() }
            pub fn boxed(&self) -> Box<dyn Iterator<Item = u64> + '_> { todo!() }
            pub fn cursor(&self) -> iter::Cursor { todo!() }
            pub fn snapshot(&self) -> Vec<u64> { todo!() }
        }",
        "type demo::Log <> debug=false supported
          ctor fn new() -> SelfValue
          method entries() iterates
          method keys() iterates
          method values() iterates
          method boxed() iterates
          method cursor()
          method snapshot()",
    );
}

#[test]
fn methods_whose_answer_holds_the_object_until_dropped_are_marked() {
    check(
        "use std::sync::{Mutex, MutexGuard, LockResult};
        use std::sync::atomic::AtomicBool;
        use std::borrow::Cow;
        pub struct SpinLock { locked: AtomicBool }
        pub mod guard {
            pub struct SpinGuard<'a> { pub(crate) lock: &'a super::SpinLock }
            pub struct Permit<'a> { pub(crate) lock: &'a super::SpinLock }
            impl Drop for Permit<'_> { fn drop(&mut self) {} }
            pub enum GuardResult<'a> { Value(u64), Guard(SpinGuard<'a>) }
            pub struct View<'a> { pub(crate) lock: &'a super::SpinLock }
        }
        pub struct Cell { m: Mutex<u64> }
        impl SpinLock {
            pub fn new() -> Self { todo!() }
            pub fn lock(&self) -> guard::SpinGuard { todo!() }
            pub fn try_lock(&self) -> Option<guard::SpinGuard<'_>> { todo!() }
            pub fn acquire(&self) -> Result<guard::Permit<'_>, ()> { todo!() }
            pub fn value_or_wait(&self) -> Result<u64, guard::SpinGuard<'_>> { todo!() }
            pub fn view(&self) -> guard::View<'_> { todo!() }
            pub fn value_or_guard(&self) -> guard::GuardResult<'_> { todo!() }
            pub fn name(&self) -> Cow<'static, str> { todo!() }
            pub fn peek(&self) -> Option<&u64> { todo!() }
            pub fn add(&self, n: u64) -> u64 { self.bump(n) }
            fn bump(&self, n: u64) -> u64 { let g = self.lock(); n }
            pub fn is_locked(&self) -> bool { todo!() }
        }
        impl Cell {
            pub fn new() -> Self { todo!() }
            pub fn lock(&self) -> MutexGuard<u64> { todo!() }
            pub fn locked(&self) -> LockResult<MutexGuard<'_, u64>> { todo!() }
        }",
        "type demo::Cell <> debug=false supported
          ctor fn new() -> SelfValue
          method lock()
          method locked()
        type demo::SpinLock <> debug=false supported
          ctor fn new() -> SelfValue
          method lock() holds
          method try_lock() holds
          method acquire() holds
          method value_or_wait() holds
          method view()
          method value_or_guard() holds
          method name()
          method peek()
          method add(n: u64) holds
          method is_locked()",
    );
}

#[test]
fn trait_methods_are_recorded_with_their_trait_and_std_traits_are_skipped() {
    check(
        "use std::sync::atomic::AtomicU32;
        pub mod api { pub trait Counter { fn hit(&self) -> u32; } }
        pub struct Hits { n: AtomicU32 }
        impl Hits { pub fn new() -> Self { todo!() } }
        impl api::Counter for Hits { fn hit(&self) -> u32 { 0 } }
        impl std::fmt::Debug for Hits { fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) } }
        impl Clone for Hits { fn clone(&self) -> Self { todo!() } }",
        "type demo::Hits <> debug=true supported
          ctor fn new() -> SelfValue
          method hit() [demo::api::Counter]",
    );
}

#[test]
fn types_in_private_modules_are_named_by_their_public_reexport() {
    check(
        "mod imp {
            use std::sync::Mutex;
            pub struct Cache { m: Mutex<u8> }
            impl Cache { pub fn new() -> Self { todo!() } pub fn get(&self) -> u8 { *self.m.lock().unwrap() } }
        }
        pub use imp::Cache;
        pub mod open {
            pub struct Gate { m: std::sync::RwLock<bool> }
            impl Gate { pub fn new() -> Self { todo!() } pub fn is_open(&self) -> bool { *self.m.read().unwrap() } }
        }",
        "type demo::Cache <> debug=false supported
          ctor fn new() -> SelfValue
          method get()
          type demo::open::Gate <> debug=false supported
          ctor fn new() -> SelfValue
          method is_open()",
    );
}

/// Only its own crate can name a type that is not `pub`, or a `pub` one in a private module
/// with no re-export: unsupported as "not reachable from outside its crate". One the harness
/// could still try (a constructor, a method) is left to the harness, where rustc decides.
#[test]
fn types_only_their_crate_can_name_are_unreachable_or_left_to_the_harness() {
    check(
        "mod imp {
            use std::sync::Mutex;
            pub struct Slots { m: Mutex<u8> }
            impl Slots { pub(crate) fn new() -> Self { todo!() } pub fn get(&self) -> u8 { *self.m.lock().unwrap() } }
            pub struct Tried { m: Mutex<u8> }
            impl Tried { pub fn new() -> Self { todo!() } pub fn get(&self) -> u8 { *self.m.lock().unwrap() } }
        }
        pub(crate) struct Own { m: std::sync::Mutex<u8> }
        impl Own { pub fn new() -> Self { todo!() } pub fn get(&self) -> u8 { 0 } }
        pub mod open {
            pub struct Gate { m: std::sync::RwLock<bool> }
            impl Gate { fn new() -> Self { todo!() } pub fn is_open(&self) -> bool { *self.m.read().unwrap() } }
        }",
        "type demo::Own <> debug=false unsupported: not reachable from outside its crate: the type is not `pub`
          ctor fn new() -> SelfValue
          method get()
          type demo::imp::Slots <> debug=false unsupported: not reachable from outside its crate: a `pub` type in a private module, not re-exported (no public constructor (`new`-like function, `Default` or builder) was found)
          method get()
          type demo::imp::Tried <> debug=false supported
          ctor fn new() -> SelfValue
          method get()
          type demo::open::Gate <> debug=false unsupported: no public constructor (`new`-like function, `Default` or builder) was found
          method is_open()",
    );
}

#[test]
fn a_type_without_a_usable_constructor_is_recorded_as_unsupported() {
    check(
        "pub struct Flag { b: std::sync::atomic::AtomicBool }
        impl Flag { pub fn make(v: &mut u8) -> Self { todo!() } pub fn set(&self) {} }",
        "type demo::Flag <> debug=false unsupported: no constructor has parameters covcon can generate
          ctor fn make(v: unsupported) -> SelfValue unsupported: parameter `v`: `&mut u8`: a `&mut` argument cannot be shared
          method set()",
    );
}

#[test]
fn a_file_syn_cannot_parse_is_a_diagnostic_not_a_panic() {
    check("pub struct Broken { ", "diagnostic Error: cannot parse src/lib.rs: cannot parse string into token stream; its types are not analysed");
}

#[test]
fn body_start_is_just_after_the_opening_brace() {
    let src = "pub struct A { n: std::sync::atomic::AtomicU8 }\nimpl A {\n    pub fn new() -> Self { todo!() }\n    pub fn get(&self) -> u8 {\n        0\n    }\n}\n";
    let model = analyze_source("demo", "2021", src);
    let m = &model.types[0].methods[0];
    let start = m.body_start.clone().expect("a body");
    assert_eq!((m.span.line, m.span.column), (4, 11));
    assert_eq!((start.line, start.column), (4, 29));
    let line = src.lines().nth(3).unwrap();
    assert_eq!(
        &line[..start.column as usize],
        "    pub fn get(&self) -> u8 {"
    );
}

#[test]
fn trait_object_and_generic_calls_and_unknown_macros_are_noted_and_the_rest_is_analysed() {
    check(
        "use std::sync::Mutex;
        pub struct Bus<T> { handler: Box<dyn Fn(u32) + Send + Sync>, sink: T, q: Mutex<Vec<u32>> }
        impl<T: Sink> Bus<T> {
            pub fn new(sink: T) -> Self { todo!() }
            pub fn emit(&self, x: u32) {
                self.q.lock().unwrap().push(x);
                (self.handler)(x);
                self.sink.send(x);
                my_macro!(self.q => x);
            }
        }",
        "type demo::Bus <T> debug=false supported
          ctor fn new(sink: generic(T)) -> SelfValue
          method emit(x: u32)
          diagnostic Note: Bus::emit: calls `self.handler` (a trait object) at line 7: what it locks is unknown
          diagnostic Note: Bus::emit: calls `send()` on `self.sink` (of generic type `T`) at line 8: what it locks is unknown
          diagnostic Note: Bus::emit: the body of macro `my_macro!` at line 9 is not analysed",
    );
}

#[test]
fn wrappers_options_structs_generic_and_trait_methods_are_reached() {
    check(
        "mod shard {
             pub(crate) struct Shard { pub(crate) items: std::sync::Mutex<Vec<u64>> }
             pub(crate) struct Shards { pub(crate) all: Vec<Shard> }
         }
         pub mod opts {
             pub struct Opts { name: String }
             impl Opts { pub fn new(name: impl Into<String>) -> Opts { todo!() } }
             #[derive(Default)]
             pub struct Flags { pub fast: bool, pub size: u8 }
             pub enum Mode { Fast, Slow(u8), Custom { factor: u16 } }
         }
         pub mod export {
             pub trait Export { fn export(&self) -> String; fn size(&self) -> usize { 0 } }
         }
         pub struct Set { inner: shard::Shards }
         impl Set {
             pub fn with(opts: opts::Opts, mode: opts::Mode) -> Set { todo!() }
             pub fn flags(&self, f: opts::Flags) {}
             pub fn intern<T: AsRef<str>>(&self, s: T) -> u32 { 0 }
             pub fn get<Q: ?Sized + std::hash::Hash>(&self, q: &Q) -> bool
                 where String: std::borrow::Borrow<Q> { false }
             pub fn take<T: From<u8>>(&self) -> Vec<T> { vec![] }
             pub fn read<R: std::io::Read>(&self, r: R) {}
             pub fn retain(&self, f: impl FnMut(&u64) -> bool) {}
             pub fn try_get_with<F, E>(&self, init: F) where F: FnOnce() -> Result<u64, E> {}
             pub fn load(&self, f: impl FnOnce() -> Result<u64, std::io::Error>) {}
             pub fn save<P: AsRef<std::path::Path>>(&self, to: P) {}
             pub fn open_at(&self, dir: impl Into<std::path::PathBuf>) {}
         }
         impl export::Export for Set { fn export(&self) -> String { String::new() } }",
        "type demo::Set <> debug=false supported
          ctor fn with(opts: value(demo::opts::Opts), mode: value(demo::opts::Mode)) -> SelfValue
          method flags(f: value(demo::opts::Flags))
          method intern::<::std::string::String>(s: string)
          method get::<::std::string::String>(q: ref(string))
          method take::<u8>()
          method read(r: unsupported) unsupported: parameter `r`: generic method parameter `R`
          method retain(f: closure(bool))
          method try_get_with::<_, u32>(init: closure(ok(u64) or err(u32)))
          method load(f: closure(ok(u64)))
          method save::<::std::path::PathBuf>(to: value(std::path::PathBuf))
          method open_at(dir: value(std::path::PathBuf))
          method export() [demo::export::Export]
          method size() [demo::export::Export]
          value demo::opts::Flags: Default default(0), Literal Flags(2)
          value demo::opts::Mode: Variant Fast(0), Variant Slow(1), Literal Custom(1)
          value demo::opts::Opts: Function new(1)
          value std::path::PathBuf: Function from(1)",
    );
}

#[test]
fn a_value_the_crate_makes_only_through_from_is_built_by_that_impl() {
    // Issue 29's pool: `add<B: Into<Chunk>>` with no constructor of `Chunk` but its `From`
    // impl was left out, so the pool was never filled. `Token` has a constructor of its own
    // and keeps only it; `Opaque`'s `From` source is a trait object, so it stays unbuildable.
    check(
        "use std::sync::Mutex;
         pub struct Chunk { words: Vec<u64> }
         impl From<Vec<u64>> for Chunk { fn from(words: Vec<u64>) -> Self { Chunk { words } } }
         pub struct Token(u32);
         impl Token { pub fn new(n: u32) -> Self { Token(n) } }
         impl From<u32> for Token { fn from(n: u32) -> Self { Token(n) } }
         pub struct Opaque(Box<dyn Fn()>);
         impl From<Box<dyn Fn()>> for Opaque { fn from(f: Box<dyn Fn()>) -> Self { Opaque(f) } }
         pub struct Pool { free: Mutex<Vec<Chunk>> }
         impl Pool {
             pub fn new() -> Self { todo!() }
             pub fn add<B: Into<Chunk>>(&self, buf: B) {}
             pub fn stamp(&self, t: Token) {}
             pub fn keep(&self, o: Opaque) {}
         }",
        "type demo::Pool <> debug=false supported
          ctor fn new() -> SelfValue
          method add::<::demo::Chunk>(buf: value(demo::Chunk))
          method stamp(t: value(demo::Token))
          method keep(o: value(demo::Opaque)) unsupported: parameter `o`: covcon finds no way to build a `demo::Opaque`
          value demo::Chunk: Function from(1)
          value demo::Token: Function new(1)",
    );
    let model = analyze_source(
        "demo",
        "2021",
        "pub struct Chunk { words: Vec<u64> }
         impl From<Vec<u64>> for Chunk { fn from(words: Vec<u64>) -> Self { Chunk { words } } }
         pub struct Pool { free: std::sync::Mutex<Vec<Chunk>> }
         impl Pool { pub fn add<B: Into<Chunk>>(&self, buf: B) {} }",
    );
    let from = &model.types[0].values[0].constructors[0];
    // Named by its impl: `Chunk::from(v)` alone leaves `v`'s type to inference.
    assert_eq!(
        from.converts.as_deref(),
        Some("::std::vec::Vec<u64>"),
        "{from:?}"
    );
}

#[test]
fn a_where_clause_on_the_crates_type_chooses_the_parameter_it_converts_from() {
    // sled 0.32.1's `Tree::insert<K, V>(..) where IVec: From<V>`: `V` was answered with a
    // `u32`, the call did not compile and the tree was never filled. `V` is now the crate's
    // type itself (`IVec: From<IVec>`), built through its own `From`. A bound between two
    // generics of the method (`A: From<B>`) does not bound `B`; `A` is read once `B` is
    // chosen, whatever the order (it was unsupported or a `u32` by a `HashMap`'s order).
    // `watch` returns an
    // iterator whose `next` waits for an event: it is not driven.
    check(
        "use std::sync::{Mutex, mpsc::Receiver};
         pub struct IVec(Vec<u8>);
         impl From<Vec<u8>> for IVec { fn from(v: Vec<u8>) -> Self { IVec(v) } }
         pub struct Subscriber { rx: Receiver<u8> }
         impl Iterator for Subscriber { type Item = u8; fn next(&mut self) -> Option<u8> { self.rx.recv().ok() } }
         pub struct Keys(Vec<u8>);
         impl Iterator for Keys { type Item = u8; fn next(&mut self) -> Option<u8> { self.0.pop() } }
         pub struct Tree { map: Mutex<Vec<IVec>> }
         impl Tree {
             pub fn new() -> Self { todo!() }
             pub fn insert<K, V>(&self, key: K, value: V) where K: AsRef<[u8]>, IVec: From<V> {}
             pub fn pair<A, B>(&self, a: A, b: B) where A: From<B> {}
             pub fn watch(&self) -> Subscriber { todo!() }
             pub fn keys(&self) -> Keys { todo!() }
         }",
        "type demo::Tree <> debug=false supported
          ctor fn new() -> SelfValue
          method insert::<::std::vec::Vec<u8>, ::demo::IVec>(key: vec(u8), value: value(demo::IVec))
          method pair::<u32, u32>(a: u32, b: u32)
          method watch()
          method keys() iterates
          value demo::IVec: Function from(1)",
    );
}

#[test]
fn locks_in_boxed_slices_defaulted_generic_atomics_and_renamed_imports_make_a_type_thread_safe() {
    check(
        "use std::sync::RwLock;
         mod imp { pub struct Cell { v: std::sync::OnceLock<u8> } impl Cell { pub fn get(&self) -> u8 { 0 } } }
         use imp::Cell as Imp;
         pub struct Shards { shards: Box<[RwLock<Vec<u8>>]> }
         impl Shards { pub fn new() -> Self { todo!() } pub fn len(&self) -> usize { 0 } }
         pub struct Counter<N = u64, A = std::sync::atomic::AtomicU64> { value: std::sync::Arc<A>, n: std::marker::PhantomData<N> }
         impl<N, A> Counter<N, A> { pub fn inc(&self) -> N { todo!() } }
         impl Default for Counter { fn default() -> Self { todo!() } }
         pub struct Once { inner: Imp }
         impl Once { pub fn new() -> Self { todo!() } pub fn get(&self) -> u8 { 0 } }",
        "type demo::Counter <N = u64, A = std::sync::atomic::AtomicU64> debug=false supported
          ctor default default() -> SelfValue
          method inc()
          type demo::Once <> debug=false supported
          ctor fn new() -> SelfValue
          method get()
          type demo::Shards <> debug=false supported
          ctor fn new() -> SelfValue
          method len()
          type demo::imp::Cell <> debug=false unsupported: not reachable from outside its crate: a `pub` type in a private module, not re-exported (no public constructor (`new`-like function, `Default` or builder) was found)
          method get()",
    );
}

#[test]
fn sizes_the_types_code_names_become_its_constants() {
    let model = analyze_source(
        "demo",
        "2021",
        "use std::sync::Mutex;
         const BLOCK_CAP: usize = 31;
         const SHIFT: usize = 1 << 6;
         const HUGE: usize = 1 << 20;
         pub struct Queue { blocks: Mutex<Vec<Vec<u64>>> }
         impl Queue {
             const LAP: usize = 32 - 1;
             pub fn new() -> Self { Queue { blocks: Mutex::new(Vec::with_capacity(16)) } }
             pub fn push(&self, v: u64) { let b = [0u8; 8]; self.blocks.lock().unwrap().reserve(1); }
         }",
    );
    assert_eq!(model.types[0].constants, [8, 16, 31, 64]);
}

/// sharded-slab writes its page size in the configuration its `Slab` defaults to: a prefix
/// of 32 inserts fills the first page, where its insert/remove race lay.
#[test]
fn sizes_of_the_configuration_a_type_parameter_defaults_to_are_the_types_own() {
    let model = analyze_source(
        "demo",
        "2021",
        "use std::sync::atomic::AtomicUsize;
         pub mod cfg {
             pub trait Config { const INITIAL_PAGE_SIZE: usize; const MAX_THREADS: usize; }
             pub struct DefaultConfig { _p: () }
             impl Config for DefaultConfig {
                 const INITIAL_PAGE_SIZE: usize = 32;
                 const MAX_THREADS: usize = 4096;
             }
             pub struct TestConfig;
             impl Config for TestConfig { const INITIAL_PAGE_SIZE: usize = 4; const MAX_THREADS: usize = 8; }
         }
         pub use cfg::DefaultConfig;
         pub struct Slab<T, C: cfg::Config = DefaultConfig> { len: AtomicUsize, t: std::marker::PhantomData<(T, C)> }
         impl<T> Slab<T> { pub fn new() -> Self { todo!() } }
         impl<T, C: cfg::Config> Slab<T, C> { pub fn insert(&self, v: T) -> Option<usize> { todo!() } }",
    );
    let slab = model.types.iter().find(|t| t.name == "Slab").unwrap();
    // `TestConfig`, which nothing defaults to, is not the slab's.
    assert_eq!(slab.constants, [32, 4096]);
}

/// mini-moka 0.10.1's `Cache` holds a `BaseCache` whose `Inner` flushes its read log at
/// `READ_LOG_FLUSH_POINT`, a constant of another module: the code a type's fields hold runs
/// in its calls, and the constants that code names are where its state changes shape. Ones
/// no such code names are not the type's.
#[test]
fn constants_the_code_of_the_types_a_type_holds_names_become_its_constants() {
    let model = analyze_source(
        "demo",
        "2021",
        "use std::sync::{Arc, Mutex};
         mod constants {
             pub(crate) const REPEATS: usize = 4;
             pub(crate) const FLUSH_POINT: usize = 64;
             pub(crate) const LOG_SIZE: usize = FLUSH_POINT * (REPEATS + 2);
             pub(crate) const UNUSED: usize = 1000;
         }
         mod base {
             use super::constants::{FLUSH_POINT, LOG_SIZE};
             pub(crate) struct Inner { log: Mutex<Vec<u32>> }
             impl Inner {
                 pub(crate) fn record(&self) -> bool {
                     let mut log = self.log.lock().unwrap();
                     log.push(1);
                     log.len() >= FLUSH_POINT && log.capacity() < LOG_SIZE
                 }
             }
             pub(crate) struct BaseCache { pub(crate) inner: Arc<Inner> }
             impl BaseCache {
                 pub(crate) fn new() -> Self { BaseCache { inner: Arc::new(Inner { log: Mutex::new(Vec::with_capacity(super::constants::REPEATS)) }) } }
             }
         }
         pub struct Cache { base: base::BaseCache }
         impl Cache {
             pub fn new() -> Self { Cache { base: base::BaseCache::new() } }
             pub fn get(&self) -> bool { self.base.inner.record() }
         }",
    );
    let cache = model.types.iter().find(|t| t.name == "Cache").unwrap();
    assert_eq!(cache.constants, [4, 64, 384]);
}

#[test]
fn durations_the_types_code_names_become_its_durations() {
    let model = analyze_source(
        "demo",
        "2021",
        "use std::sync::Mutex;
         use std::time::Duration;
         const TICK: Duration = Duration::from_millis(5);
         const FOREVER: Duration = Duration::from_secs(3600);
         pub struct Timer { next: Mutex<u64> }
         impl Timer {
             const SPIN: Duration = Duration::from_micros(50);
             pub fn new() -> Self { Timer { next: Mutex::new(0) } }
             pub fn wait(&self) { std::thread::sleep(Duration::from_nanos(1_500)); }
             pub fn period(&self, n: u64) -> Duration { Duration::from_millis(n) }
         }",
    );
    // The hour is longer than a test should wait; `from_millis(n)` is not a literal.
    assert_eq!(model.types[0].durations, [2, 50, 5_000]);
}

#[test]
fn std_types_the_crate_implements_a_bound_for_are_candidates_with_their_arguments_filled() {
    let model = analyze_source(
        "demo",
        "2018",
        "#![no_std]
         extern crate alloc;
         use alloc::{rc::Rc, sync::Arc};
         use core::sync::atomic::AtomicPtr;
         pub trait RefCnt {}
         impl<T> RefCnt for Arc<T> {}
         impl<T: ?Sized> RefCnt for Rc<T> {}
         impl<T: RefCnt> RefCnt for Option<T> {}
         impl<'a, T> RefCnt for &'a [T] where T: Copy {}
         impl RefCnt for f32 {}
         pub struct Swap<T: RefCnt> { ptr: AtomicPtr<u8>, t: core::marker::PhantomData<T> }
         impl<T: RefCnt> Swap<T> {
             pub fn new(v: T) -> Self { todo!() }
             pub fn load(&self) -> T { todo!() }
         }",
    );
    let t = &model.types[0];
    assert_eq!(t.path, "demo::Swap");
    assert_eq!(
        t.generics[0].candidates,
        ["::std::sync::Arc<u64>", "::std::rc::Rc<u64>", "f32"]
    );
    // A primitive is named as it is, and no value type is made of it or of `Arc`.
    assert!(t.values.is_empty(), "{:?}", t.values);
}

#[test]
fn a_type_declared_sync_that_also_holds_atomics_makes_its_wrapper_thread_safe() {
    check(
        "mod base {
             pub struct Padded<T>(T);
             pub(crate) struct Hot { len: core::sync::atomic::AtomicUsize }
             pub struct List { head: *mut u8, hot: Padded<Hot> }
             unsafe impl Sync for List {}
         }
         pub struct Raw { p: *mut u8 }
         unsafe impl Sync for Raw {}
         pub struct Map { inner: base::List }
         impl Map { pub fn new() -> Self { todo!() } pub fn len(&self) -> usize { 0 } }
         pub struct Bucket { raw: Raw }
         impl Bucket { pub fn new() -> Self { todo!() } pub fn get(&self) -> usize { 0 } }",
        "type demo::Map <> debug=false supported
          ctor fn new() -> SelfValue
          method len()",
    );
}

#[test]
fn arguments_an_inherent_impl_fixes_come_first_among_the_candidates() {
    let model = analyze_source(
        "demo",
        "2021",
        "use std::sync::Mutex;
         pub mod storage { pub struct Atomic; pub struct Plain; }
         use storage::Atomic;
         pub trait Storage<K> {}
         impl<K> Storage<K> for storage::Plain {}
         impl<K> Storage<K> for Atomic {}
         pub struct Registry<K, S> { map: Mutex<Vec<(K, S)>> }
         impl Registry<String, Atomic> { pub fn atomic() -> Self { todo!() } }
         pub struct Cell<T> { v: std::sync::atomic::AtomicU64, t: std::marker::PhantomData<T> }
         impl<T> Cell<T> { pub fn new() -> Self { todo!() } pub fn get(&self) -> u64 { 0 } }
         impl Cell<bool> { pub fn flip(&self) {} }
         impl Cell<u8> { pub fn add(&self, n: u8) {} }
         impl<K, S: Storage<K>> Registry<K, S> {
             pub fn new(s: S) -> Self { todo!() }
             pub fn len(&self) -> usize { 0 }
         }",
    );
    // A family of specialisations fixes nothing.
    let cell = model.types.iter().find(|t| t.name == "Cell").unwrap();
    assert!(
        cell.generics[0].candidates.is_empty(),
        "{:?}",
        cell.generics
    );
    let t = model.types.iter().find(|t| t.name == "Registry").unwrap();
    let candidates: Vec<&[String]> = t.generics.iter().map(|g| &g.candidates[..]).collect();
    assert_eq!(
        candidates,
        [
            &["::std::string::String".to_string()][..],
            // The struct bounds `S` by nothing, so only the fixed argument is a candidate.
            &["::demo::storage::Atomic".to_string()][..]
        ]
    );
}

#[test]
fn a_parameter_of_a_type_the_receiver_hands_out_takes_that_methods_result() {
    check(
        "use std::sync::atomic::AtomicUsize;
         pub struct Guard<'a> { map: &'a Map }
         pub struct Map { n: AtomicUsize }
         impl Map {
             pub fn new() -> Self { todo!() }
             pub fn guard(&self) -> Guard<'_> { todo!() }
             pub fn get<'g>(&'g self, key: u8, guard: &'g Guard<'_>) -> Option<&'g u8> { None }
             pub fn owned(&self, guard: Guard<'_>) {}
             pub fn mutable(&self, guard: &mut Guard<'_>) {}
         }",
        "type demo::Map <> debug=false supported
          ctor fn new() -> SelfValue
          method guard()
          method get(key: u8, guard: &self.guard())
          method owned(guard: self.guard())
          method mutable(guard: unsupported) unsupported: parameter `guard`: `&mut Guard<'_>`: a `&mut` argument cannot be shared",
    );
}

/// flurry's `guard(&self) -> epoch::Guard` for `insert(&self, k, v, guard: &Guard)`: the same
/// type written through another path.
#[test]
fn a_provider_written_through_another_path_is_taken() {
    check(
        "use std::sync::atomic::AtomicUsize;
         pub mod epoch { pub struct Guard { n: u8 } }
         use epoch::Guard;
         pub struct Map { n: AtomicUsize }
         impl Map {
             pub fn new() -> Self { todo!() }
             pub fn guard(&self) -> epoch::Guard { todo!() }
             pub fn insert<'g>(&'g self, key: u8, guard: &'g Guard) -> Option<&'g u8> { None }
         }",
        "type demo::Map <> debug=false supported
          ctor fn new() -> SelfValue
          method guard()
          method insert(key: u8, guard: &self.guard())",
    );
}

/// papaya's `get(&self, key: &Q, guard: &impl Guard)` with `guard(&self) -> LocalGuard<'_>`: an
/// `impl Trait` parameter takes the result of a method whose type is named after the trait.
#[test]
fn an_impl_trait_parameter_takes_a_receiver_method_named_after_the_trait() {
    check(
        "use std::sync::atomic::AtomicUsize;
         pub trait Guard {}
         pub struct LocalGuard<'a> { map: &'a Map }
         impl Guard for LocalGuard<'_> {}
         pub struct Map { n: AtomicUsize }
         impl Map {
             pub fn new() -> Self { todo!() }
             pub fn guard(&self) -> LocalGuard<'_> { todo!() }
             pub fn len(&self) -> usize { 0 }
             pub fn get<'g>(&self, key: u8, guard: &'g impl Guard) -> Option<&'g u8> { None }
             pub fn visit(&self, v: &impl Visitor) {}
         }
         pub trait Visitor {}",
        "type demo::Map <> debug=false supported
          ctor fn new() -> SelfValue
          method guard()
          method len()
          method get(key: u8, guard: &self.guard())
          method visit(v: unsupported) unsupported: parameter `v`: `impl Visitor`: covcon has no value for this trait",
    );
}

#[test]
fn boxed_shared_and_non_zero_arguments_and_to_owned_keys_are_generated() {
    check(
        "use std::sync::{Arc, Mutex}; use std::num::NonZeroUsize; use std::hash::Hash;
        pub struct Cache<K, V> { map: Mutex<Vec<(K, V)>> }
        impl<K: Clone, V: Clone> Cache<K, V> {
            pub fn new(cap: NonZeroUsize) -> Self { todo!() }
            pub fn boxed(&self, v: Box<V>, s: Arc<String>, o: Option<Box<u8>>) {}
            pub fn limits(&self, a: std::num::NonZero<u32>, b: core::num::NonZeroI8) {}
            pub fn by_ref<Q>(&self, key: &Q) -> Option<V> where Q: Hash + Eq + ToOwned<Owned = K> + ?Sized { None }
            pub fn shared_self(&self, other: Box<Self>) {}
        }",
        "type demo::Cache <K, V> debug=false supported
          ctor fn new(cap: nonzero(u64)) -> SelfValue
          method boxed(v: Box(generic(V)), s: Arc(string), o: option(Box(u8)))
          method limits(a: nonzero(u32), b: nonzero(i8))
          method by_ref::<K>(key: ref(generic(K)))
          method shared_self(other: unsupported) unsupported: parameter `other`: `Box<Self>`: covcon passes the instance as `&Self` or `Arc<Self>` only",
    );
}

#[test]
fn a_type_that_cannot_be_shared_is_not_tested_but_still_makes_its_owner_thread_safe() {
    check(
        "use std::cell::{Cell, UnsafeCell}; use std::sync::atomic::AtomicUsize;
        use std::sync::Mutex; use std::marker::PhantomData;
        pub struct Slot { state: AtomicUsize, value: UnsafeCell<u64> }
        impl Slot { pub fn new() -> Self { todo!() } pub fn get(&self) -> u64 { 0 } }
        pub struct Queue { slot: Slot }
        unsafe impl Sync for Queue {}
        impl Queue { pub fn new() -> Self { todo!() } pub fn get(&self) -> u64 { 0 } }
        pub struct Parker { n: AtomicUsize, _marker: PhantomData<*const ()> }
        impl Parker { pub fn new() -> Self { todo!() } pub fn park(&self) {} }
        pub struct Guarded { cells: Mutex<Cell<u8>> }
        impl Guarded { pub fn new() -> Self { todo!() } pub fn bump(&self) {} }",
        "type demo::Guarded <> debug=false supported
          ctor fn new() -> SelfValue
          method bump()
        type demo::Queue <> debug=false supported
          ctor fn new() -> SelfValue
          method get()",
    );
}

#[test]
fn a_type_synchronising_through_a_parameter_its_crate_fixes_is_thread_safe() {
    check(
        "use std::sync::atomic::AtomicU64; use std::marker::PhantomData;
        pub struct InMemory { tat: AtomicU64 }
        impl InMemory { pub fn new() -> Self { todo!() } }
        pub struct Unkeyed;
        pub struct Limiter<K, S> { state: S, key: PhantomData<K> }
        impl Limiter<Unkeyed, InMemory> { pub fn direct(burst: u32) -> Self { todo!() } }
        impl<K, S> Limiter<K, S> { pub fn check(&self) -> bool { true } }
        pub struct Plain<S> { state: S }
        impl<S> Plain<S> { pub fn new(s: S) -> Self { todo!() } pub fn get(&self) -> bool { true } }",
        "type demo::Limiter <K, S> debug=false supported
          ctor fn direct(burst: u32) -> SelfValue
          method check()
          value demo::InMemory: Function new(0)",
    );
}

#[test]
fn a_private_modules_type_whose_name_the_root_gives_another_is_internal() {
    check(
        "use std::sync::Mutex;
        mod raw {
            use std::sync::Mutex;
            pub struct Map { m: Mutex<u8> }
            impl Map { pub fn new() -> Self { todo!() } pub fn get(&self) -> u8 { 0 } }
        }
        pub struct Map { inner: Mutex<u8> }
        impl Map { pub fn with(n: u8) -> Self { todo!() } pub fn get(&self) -> u8 { 0 } }",
        "type demo::Map <> debug=false supported
          ctor fn with(n: u8) -> SelfValue
          method get()
        type demo::raw::Map <> debug=false unsupported: not reachable from outside its crate: a `pub` type in a private module, not re-exported
          ctor fn new() -> SelfValue
          method get()",
    );
}

#[test]
fn a_method_whose_doc_calls_its_answer_approximate_says_so_with_the_line() {
    check(
        "use std::sync::Mutex;
        pub mod api {
            pub trait Sized_ {
                /// How many, counted without the lock:
                /// an approximation while others insert.
                fn size(&self) -> usize;
                /// Whether any.
                fn any(&self) -> bool;
            }
        }
        pub struct Set { shards: Vec<Mutex<Vec<u64>>> }
        impl Set {
            pub fn new() -> Self { todo!() }
            /// Sums the shards one at a time.
            ///
            /// The count may be stale when another thread inserts.
            pub fn len(&self) -> usize { 0 }
            /// Whether `k` is in, not an estimate.
            pub fn contains(&self, k: u64) -> bool { false }
        }
        impl api::Sized_ for Set {
            fn size(&self) -> usize { 0 }
            /// Whether any; only a hint while others insert.
            fn any(&self) -> bool { false }
        }",
        r#"type demo::Set <> debug=false supported
          ctor fn new() -> SelfValue
          method len() approximate: its doc says "The count may be stale when another thread inserts."
          method contains(k: u64)
          method size() [demo::api::Sized_] approximate: its doc says "How many, counted without the lock: an approximation while others insert."
          method any() [demo::api::Sized_] approximate: its doc says "Whether any; only a hint while others insert.""#,
    );
}

/// A guard a method returns that borrows the instance or is consumed by a method of its own
/// is a scope guard (issue 29, item 3): found in `Option`, `Result` or a variant of the crate's
/// enum, with the guard's public methods as finishers, its type parameters the owner's. A
/// returned value that neither borrows nor is consumed is not one, nor is a guard type whose
/// type parameter the owner does not have.
#[test]
fn guards_kept_in_scopes_are_found_through_option_and_enum_variants_with_their_finishers() {
    let model = analyze_source(
        "demo",
        "2021",
        "use std::sync::Mutex;
        pub struct Table<V> { held: Mutex<Vec<u8>>, v: Mutex<Option<V>> }
        pub struct Hold<'a, V> { table: &'a Table<V>, slot: u8 }
        pub struct Ticket { n: u8 }
        pub struct Alien<'a, W> { w: &'a W }
        pub enum Lookup<'a, V> { Found(V), Wait(Hold<'a, V>), Gone }
        impl<V> Table<V> {
            pub fn new() -> Self { todo!() }
            pub fn reserve(&self, slot: u8) -> Option<Hold<'_, V>> { todo!() }
            pub fn lookup(&self, slot: u8) -> Lookup<'_, V> { todo!() }
            pub fn try_hold(&self, slot: u8) -> Result<Hold<'_, V>, u8> { todo!() }
            pub fn ticket(&self) -> Ticket { todo!() }
            pub fn alien(&self) -> Option<Alien<'_, u8>> { todo!() }
        }
        impl<'a, V> Hold<'a, V> {
            pub fn slot(&self) -> u8 { self.slot }
            pub fn confirm(self, value: V) { todo!() }
            pub fn bump(&mut self) { todo!() }
            pub fn merge(self, other: &Hold<'a, V>) { todo!() }
            fn private(self) {}
        }
        impl Ticket { pub fn number(&self) -> u8 { self.n } }
        impl<'a, W> Alien<'a, W> { pub fn done(self) {} }",
    );
    let table = model.types.iter().find(|t| t.name == "Table").unwrap();
    let scopes: Vec<String> = table
        .scopes
        .iter()
        .map(|s| {
            let finishers: Vec<String> = s
                .finishers
                .iter()
                .map(|f| format!("{}:{:?}", f.method.name, f.takes))
                .collect();
            format!(
                "{} {} {:?} [{}]",
                s.from,
                s.guard,
                s.holds,
                finishers.join(" ")
            )
        })
        .collect();
    assert_eq!(
        scopes,
        [
            "reserve demo::Hold Option [slot:Ref confirm:Value bump:Mut]",
            "lookup demo::Hold Variant(\"::demo::Lookup::Wait\") [slot:Ref confirm:Value bump:Mut]",
            "try_hold demo::Hold Result [slot:Ref confirm:Value bump:Mut]",
        ]
    );
    let confirm = &table.scopes[0].finishers[1].method;
    assert_eq!(
        confirm.params[0].kind,
        ParamKind::Generic { name: "V".into() }
    );
}

/// A type that can be sent but not shared (a `Cell` field) and hands out a handle that can be
/// shared (a work-stealing deque's `Worker` and `Stealer`, both generic) is a confined type:
/// its pairs are those with a handle's method on one side. One that hands out no handle is
/// not in the model.
#[test]
fn a_type_that_cannot_be_shared_is_tested_through_the_handles_it_hands_out() {
    let model = analyze_source(
        "demo",
        "2021",
        "use std::cell::Cell;
        use std::sync::{Arc, Mutex, atomic::AtomicUsize};
        struct Inner<T> { len: AtomicUsize, items: Mutex<Vec<T>> }
        pub struct Worker<T> { inner: Arc<Inner<T>>, pushed: Cell<u64> }
        unsafe impl<T: Send> Send for Worker<T> {}
        pub struct Stealer<T> { inner: Arc<Inner<T>> }
        impl<T> Worker<T> {
            pub fn new() -> Self { todo!() }
            pub fn push(&self, task: T) { todo!() }
            pub fn pop(&self) -> Option<T> { todo!() }
            pub fn stealer(&self) -> Stealer<T> { todo!() }
        }
        impl<T> Stealer<T> {
            pub fn steal(&self) -> Option<T> { todo!() }
            pub fn give(&self, task: T) { todo!() }
        }
        pub struct Lonely { n: AtomicUsize, seen: Cell<u8> }
        impl Lonely { pub fn new() -> Self { todo!() } pub fn get(&self) -> usize { 0 } }",
    );
    let names: Vec<&str> = model.types.iter().map(|t| t.path.as_str()).collect();
    assert_eq!(names, ["demo::Stealer", "demo::Worker"]);
    let worker = &model.types[1];
    assert!(worker.confined && worker.supported(), "{worker:?}");
    assert!(!model.types[0].confined);
    let steal = worker
        .methods
        .iter()
        .find(|m| m.name == "Stealer::give")
        .unwrap();
    let via = steal.via.as_ref().unwrap();
    assert_eq!(
        (via.from.as_str(), via.kept.as_deref()),
        ("stealer", Some("::demo::Stealer<T>"))
    );
    assert_eq!(
        kind(&steal.params[0].kind),
        kind(&worker.methods[0].params[0].kind)
    );
    let group = |a: &str, b: &str| {
        worker
            .pairs
            .iter()
            .find(|p| p.methods == [a.to_string(), b.to_string()])
            .map(|p| p.group)
    };
    assert_eq!(group("push", "pop"), Some(analysis::Group::Removed));
    assert_eq!(group("pop", "pop"), Some(analysis::Group::Removed));
    assert_ne!(
        group("pop", "Stealer::steal"),
        Some(analysis::Group::Removed)
    );
    assert!(group("pop", "Stealer::steal").is_some());
    assert_ne!(
        group("Stealer::steal", "Stealer::give"),
        Some(analysis::Group::Removed)
    );
}

#[test]
fn a_parameter_the_crate_may_keep_in_memory_it_manages_is_marked_boxed_unless_copy_bounds_it() {
    let with_slots = "use std::cell::UnsafeCell;
         use std::mem::MaybeUninit;
         use std::sync::atomic::{AtomicUsize, AtomicU64};
         struct Slot<T> { stamp: AtomicUsize, value: UnsafeCell<MaybeUninit<T>> }
         pub struct Queue<T> { head: AtomicUsize, slots: Box<[Slot<T>]> }
         unsafe impl<T: Send> Sync for Queue<T> {}
         impl<T> Queue<T> {
             pub fn new() -> Self { todo!() }
             pub fn push(&self, v: T) { todo!() }
             pub fn pop(&self) -> Option<T> { todo!() }
         }
         pub struct Cell<T> { v: AtomicU64, t: std::marker::PhantomData<T> }
         impl<T> Cell<T> { pub fn new(v: T) -> Self { todo!() } }
         impl<T: Copy> Cell<T> { pub fn load(&self) -> T { todo!() } }";
    let model = analyze_source("demo", "2021", with_slots);
    let boxed = |name: &str| {
        let t = model.types.iter().find(|t| t.name == name).unwrap();
        t.generics[0].boxed
    };
    assert!(boxed("Queue"));
    // `Cell<Box<u32>>` has no `load`.
    assert!(!boxed("Cell"));
    // A crate that keeps no value in memory of its own: integers as ever.
    let plain = analyze_source(
        "demo",
        "2021",
        "use std::sync::Mutex;
         pub struct Stack<T> { items: Mutex<Vec<T>> }
         impl<T> Stack<T> { pub fn new() -> Self { todo!() } pub fn push(&self, v: T) {} }",
    );
    assert!(!plain.types[0].generics[0].boxed);
    // A crate that hands what it removes to an epoch collector: values dropped later, in
    // batches, cost every test the collector's work; integers as ever.
    let epoch = analyze_source(
        "demo",
        "2021",
        "use std::mem::MaybeUninit;
         use std::sync::atomic::AtomicUsize;
         pub struct Atomic<T>(std::marker::PhantomData<T>);
         struct Node<T> { value: MaybeUninit<T> }
         pub struct Tree<T> { len: AtomicUsize, root: Atomic<Node<T>> }
         unsafe impl<T: Send> Sync for Tree<T> {}
         impl<T> Tree<T> { pub fn new() -> Self { todo!() } pub fn insert(&self, v: T) {} }",
    );
    let tree = epoch.types.iter().find(|t| t.name == "Tree").unwrap();
    assert!(!tree.generics[0].boxed);
}
