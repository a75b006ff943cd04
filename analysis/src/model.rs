//! The static model: what the analysis hands to the generator, the oracle and the reports.
//!
//! This module is the contract between the crates. Every type here is serde-serialisable and
//! its JSON form is what `cargo covcon analyze --format json` prints (documented in
//! `docs/analysis-json.md`). Add fields with `#[serde(default)]`; never rename or remove one
//! without bumping [`FORMAT_VERSION`].

pub use crate::reason::{Problem, Reason};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Version of the JSON shape of [`Model`].
///
/// 2: typed skip reasons ([`Reason`]), generic parameters as [`GenericParam`], value types of
/// the crate's own argument types ([`ValueType`], [`ParamKind::Value`]), generic arguments of
/// methods and constructors, trait methods named by their trait's public path, package
/// features and dependencies.
pub const FORMAT_VERSION: u32 = 2;

/// Everything the analysis found in the packages it was given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub format_version: u32,
    /// The packages analysed, in the order they were given.
    #[serde(default)]
    pub packages: Vec<PackageInfo>,
    /// The thread-safe types found, ordered by path.
    pub types: Vec<TypeModel>,
    /// Everything the analysis could not read or model, in words a user can act on.
    pub diagnostics: Vec<Diagnostic>,
}

/// A package as the analysis saw it (filled from cargo metadata by the caller).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageInfo {
    /// The package name as in `Cargo.toml` (`my-crate`).
    pub name: String,
    /// The library crate name as code names it (`my_crate`).
    pub lib_name: String,
    pub manifest_path: PathBuf,
    /// The library target's root file (`src/lib.rs`).
    pub lib_root: PathBuf,
    /// `2015`, `2018`, `2021` or `2024`.
    pub edition: String,
    /// The features enabled for this build (from `cargo metadata`'s resolve).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// The package's normal dependencies as its code names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<Dependency>,
    /// Where the library root's first item starts, after the crate's inner attributes: where
    /// crate-level items can be inserted (the oracle's `extern crate` for edition 2015).
    /// Filled by the analysis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_item: Option<Span>,
    /// Where the package's code reads std's clock or sleeps, which the oracle's copy points
    /// at covcon's virtual clock. Filled by the analysis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_sites: Vec<ClockSite>,
}

/// A read of std's clock, a sleep, or a draw of std's hash keys, in a package's code
/// (`analysis/src/clock.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockSite {
    pub read: ClockRead,
    /// Where the called path (`Instant::now`, `thread::sleep`) or, for `elapsed`, the
    /// receiver starts.
    pub at: Span,
    /// Where that path or receiver ends (line, column), in the same file.
    pub end: (u32, u32),
    /// Where the whole call ends (line, column): just after its `)`.
    pub call_end: (u32, u32),
}

/// What a [`ClockSite`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockRead {
    /// `Instant::now()`.
    Now,
    /// `SystemTime::now()`.
    SystemNow,
    /// `instant.elapsed()`.
    Elapsed,
    /// `system_time.elapsed()`.
    SystemElapsed,
    /// `thread::sleep(duration)`.
    Sleep,
    /// `thread::park_timeout(duration)`.
    ParkTimeout,
    /// `receiver.recv_timeout(duration)`, on any receiver (std's and crossbeam's channels
    /// name it so); `at`..`end` is the receiver.
    RecvTimeout,
    /// `hint::spin_loop()` (or the older `atomic::spin_loop_hint()`): a busy wait's pause,
    /// which the copy reports, so that a wait nothing can end is told from a slow run.
    SpinLoop,
    /// The last argument of a method call named `…_until` or `…_deadline` that the package
    /// does not define (`cv.wait_until(&mut g, deadline)` of parking_lot): a deadline given to
    /// code that compares it with the real clock; `at`..`end` is the argument.
    Deadline,
    /// `RandomState::new()` or `RandomState::default()` of std: not the clock but the other
    /// thing a run draws from outside the test, the keys a hash map hashes with; the copy
    /// keys its states by the test (`oracle/runtime/src/hash.rs`).
    HashKeys,
}

/// A dependency a package's code can name (`use dashmap::DashMap`), so that the harness can
/// depend on it too when it writes that crate's paths.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dependency {
    /// The crate name code uses (`dashmap`, or the rename).
    pub extern_name: String,
    /// The package name on its registry (`dashmap`).
    pub package: String,
    /// The exact version resolved (`6.1.0`).
    pub version: String,
    /// For a path dependency: its directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Its library target's root file (from `cargo metadata`, in the registry's sources for a
    /// registry dependency): read when the package re-exports or aliases one of its types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lib_root: Option<PathBuf>,
    /// Its library crate name as its own code names it (`lock_api`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub lib_name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub edition: String,
    /// The features enabled for it in this build.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// The crate names its own code can name (its normal dependencies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub externs: Vec<String>,
    /// Part of the same project as the package: a path dependency, or one with an author,
    /// the repository or the repository's owner in common (lock_api for parking_lot, sdd for
    /// scc). Only a companion's re-exported types are tested as the package's own.
    #[serde(default, skip_serializing_if = "is_false")]
    pub companion: bool,
}

/// A type whose `&self` methods synchronise internally.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TypeModel {
    /// `krate::module::Type`, with the library crate name first.
    pub path: String,
    /// The package (Cargo name) that defines it.
    pub package: String,
    /// The bare type name (`Type`).
    pub name: String,
    /// Where the type is declared.
    pub span: Span,
    /// Where its declaration ends (the closing `}` or `;`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decl_end: Option<Span>,
    /// Generic parameters, in declaration order.
    #[serde(default)]
    pub generics: Vec<GenericParam>,
    /// Why covcon considers it thread-safe (`field 'map' is a Mutex`, `unsafe impl Sync`).
    pub sync_reasons: Vec<String>,
    /// Whether a `Debug` impl (derived or written) was seen.
    #[serde(default)]
    pub implements_debug: bool,
    pub constructors: Vec<Constructor>,
    pub methods: Vec<Method>,
    /// Every unordered pair of supported public methods, self-pairs included.
    pub pairs: Vec<Pair>,
    /// Ranked split points over all methods, best first.
    pub split_points: Vec<SplitPoint>,
    /// Lock acquisitions and atomic operations in the bodies of the type's methods and
    /// helpers, in source order: where the instrumented copy makes schedule points of
    /// synchronisation (a controlled run switches threads there, and a thread whose lock is
    /// held hands its turn over instead of sleeping).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sync_sites: Vec<SyncSite>,
    /// Where concurrency mutants can be made of the type's code (`cargo covcon mutants`),
    /// besides its atomic operations and notifies (which are sync sites), in source order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mutation_sites: Vec<MutationSite>,
    /// The crate's own types that arguments are built of (`MeterOpts` for
    /// `with_opts(opts: MeterOpts)`), with their constructors; nested ones included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<ValueType>,
    /// Sizes the type's code names (`const BLOCK_CAP: usize = 31`, `with_capacity(16)`),
    /// sorted: repeat counts worth trying, as boundaries where the type changes shape.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constants: Vec<u64>,
    /// Durations the type's code names (`const TICK: Duration = Duration::from_millis(5)`), in
    /// microseconds, sorted, between 1 µs and 1 s: arguments worth passing to its timeouts and
    /// periods, besides the generator's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub durations: Vec<u64>,
    /// The crate's types its fields hold, by path, three fields down (`base: BaseCache` and
    /// the `Inner` that holds): code its calls may run. A mutant of such a type that covcon
    /// cannot test on its own (a private `Bounded` inside a public queue) is judged through
    /// the types that hold it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<String>,
    /// Guards the type's methods hand out that a thread keeps while it makes further calls
    /// and then ends with one of the guard's own methods (`let r = c0.reserve(3); c0.book(3,
    /// 1); r.confirm(2)`): issue 29, item 3.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<ScopeGuard>,
    /// The type can be sent to another thread but not shared (`Send`, not `Sync`: a field holds
    /// a `Cell` or a raw pointer), and hands out handles that can (a work-stealing deque's
    /// `Worker` and its `Stealer`s): one thread owns the instance, the other calls only the
    /// handles' methods. Its pairs are those with a handle's method on one side.
    #[serde(default, skip_serializing_if = "is_false")]
    pub confined: bool,
    /// Why covcon cannot drive the type at all (no usable constructor, ...); `None` when it
    /// can ([`TypeModel::supported`]). Written as `supported` and `reason`.
    #[serde(flatten, with = "crate::reason::support")]
    pub reason: Option<Reason>,
}

/// A generic parameter of a type, constructor or method.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenericParam {
    pub name: String,
    pub kind: GenericKind,
    /// As declared, for reports (`K: Hash + Eq`, `'a`, `const N: usize`, `S = RandomState`).
    pub written: String,
    /// The default, fully qualified (`::std::collections::hash_map::RandomState`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Fully qualified types the analysis proposes from the bounds (a type of the crate that
    /// implements a trait bound), tried before covcon's usual candidates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// A type parameter whose values the crate may keep in memory it manages itself (a
    /// field of one of its types is a `MaybeUninit`, a raw or atomic pointer, an epoch
    /// pointer…) and that no impl of the type bounds by `Copy`: covcon tries a boxed integer
    /// for it first (`Box<i32>`), so that a value read twice, or read where none was
    /// written, frees memory twice or a pointer that is garbage, a crash the panic oracle
    /// sees, where an integer would pass unnoticed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub boxed: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GenericKind {
    Lifetime,
    #[default]
    Type,
    Const,
}

impl GenericParam {
    /// The default, unless it is `()`: a unit default (`Once<T = ()>`) makes every answer of
    /// type `T` the same `()`, so a value written twice, or the wrong one returned, looks
    /// right. Such a parameter is instantiated like one without a default, the unit last.
    pub fn informative_default(&self) -> Option<&String> {
        self.default
            .as_ref()
            .filter(|d| d.chars().filter(|c| !c.is_whitespace()).collect::<String>() != "()")
    }
}

impl std::fmt::Display for GenericParam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.written)
    }
}

/// The value type of paths (`PathBuf`, `&Path`, `AsRef<Path>` parameters), built
/// `PathBuf::from(String)`: the generator draws its string from its path pool, the harness
/// puts it in the run's own directory, the reproducer in a directory per run.
pub const PATH_BUF: &str = "std::path::PathBuf";

/// A type of the crate (or a standard one) whose values are built from constructors to be
/// passed as arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ValueType {
    /// Public path (`krate::opts::MeterOpts`, `std::path::PathBuf`).
    pub path: String,
    /// How values are built; a `Variant` constructor is an enum variant.
    pub constructors: Vec<Constructor>,
}

/// A way to build an instance.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Constructor {
    /// The associated function (`new`, `with_capacity`), `default` for `Default`, or the
    /// builder chain's first function.
    pub name: String,
    pub kind: ConstructorKind,
    pub params: Vec<Param>,
    /// How the built value is returned.
    pub returns: ReturnShape,
    /// For a builder: the calls after the first one, in order (`max(3)`, `build()`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<ChainCall>,
    /// Fully qualified types for the function's own generic parameters, in order (a
    /// turbofish); empty when it has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generic_args: Vec<String>,
    /// For a value type built by a function of another type (`Pool::builder()` builds a
    /// `PoolBuilder`): that type's public path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// For a free function (`crossbeam_channel::bounded`): its public path. It is called by
    /// that path, with the type's parameters as its turbofish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// For a function returning a tuple (`bounded(cap) -> (Sender<T>, Receiver<T>)`): which
    /// element is the instance, and every element's type. The others are kept as handles of
    /// the test (`Via::from` `#1`), so a channel's receiving half lives beside its sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuple: Option<TupleReturn>,
    /// For a value type's `impl From<S> for X` (`name` is `from`): `S`, fully qualified. The
    /// call names the impl, `<X as From<S>>::from(s)`, since `X::from` alone would leave the
    /// argument's type to inference, which the blanket `From<X> for X` makes ambiguous.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub converts: Option<String>,
    /// The sentence of its doc that says what it builds pairs concurrent calls up (a
    /// rendezvous: crossbeam-channel's `bounded(0)`, whose sends "must appear at the same
    /// time" as receives "in order to pair up"). Each such call completes only beside the
    /// other, which no order of whole calls gives, so the results oracle does not compare
    /// answers in a test whose instance it built (`ResultsConfig::rendezvous`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rendezvous: Option<String>,
    /// Why covcon cannot call it, when it cannot ([`Constructor::supported`]).
    #[serde(flatten, with = "crate::reason::support")]
    pub reason: Option<Reason>,
}

impl Constructor {
    /// Whether a test can build an instance (or a value) with it: it has no [`Reason`] not to.
    pub fn supported(&self) -> bool {
        self.reason.is_none()
    }
}

/// Which element of a constructor's tuple is the instance.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TupleReturn {
    pub index: usize,
    /// Each element's type, fully qualified, in terms of the type's own parameters
    /// (`::crossbeam_channel::Receiver<T>`).
    pub elements: Vec<String>,
}

/// One call after the first in a builder chain.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChainCall {
    pub name: String,
    pub params: Vec<Param>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConstructorKind {
    /// An associated function returning the type.
    #[default]
    Function,
    /// `Default::default()`, derived or written.
    Default,
    /// A builder chain ending in a method that returns the type.
    Builder,
    /// An enum variant (`Mode::Fast`, `Limit::Max(n)`), for value types.
    Variant,
    /// A literal, for value types: of a struct whose fields are all `pub` (`name` is the
    /// struct's), or of an enum variant with named fields (`name` is the variant's); the
    /// parameters are the fields.
    Literal,
}

/// A guard a method of the type hands out (a placeholder, a reservation, an upgradable read),
/// which borrows the instance or is consumed by a method of its own, so it is neither shared
/// nor kept as a handle: a thread keeps it on its stack while it makes its next calls, then
/// ends the scope with one of the guard's methods or drops it (`generator::Scope`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopeGuard {
    /// The type's method that returns it (`reserve`).
    pub from: String,
    /// The guard type's path (`krate::booking::Reservation`), for reports.
    pub guard: String,
    /// Where the guard is in what `from` returns.
    pub holds: GuardHolder,
    /// The guard's public methods a scope can end with, by value (`confirm(self, who)`) or
    /// by reference; their parameters name the owner's type parameters.
    pub finishers: Vec<Finisher>,
}

/// Where a guard is in a method's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardHolder {
    /// The result is the guard.
    Plain,
    /// `Some(guard)`.
    Option,
    /// `Ok(guard)`.
    Result,
    /// A tuple variant of the crate's enum (`::quick_cache::sync::GuardResult::Guard`), by
    /// the path a pattern names it.
    Variant(String),
}

/// A method of a [`ScopeGuard`]'s type and how it takes the guard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finisher {
    pub method: Method,
    /// `self` (the guard is consumed), `&self` or `&mut self`.
    pub takes: GuardTaking,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardTaking {
    Value,
    Ref,
    Mut,
}

/// How a constructor hands back the instance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReturnShape {
    #[default]
    SelfValue,
    ArcSelf,
    ResultSelf,
    OptionSelf,
    /// `&Self`: only for a handle a method returns by reference (`fn unparker(&self) ->
    /// &Unparker`), which the harness keeps as a clone.
    RefClone,
    /// A guard whose deref target is the handle (`fn get_or_create(&self, ..) ->
    /// MappedRwLockReadGuard<'_, Gauge>`): it borrows the owner, so it is never kept; a handle
    /// method is called on it in one expression (`c0.get_or_create("a").add(1)`,
    /// `generator::Call::chained`), the guard dropping where Rust drops the temporary.
    Guard,
}

/// A public `&self` method (or any method the analysis records, with `supported` false).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Method {
    pub name: String,
    pub params: Vec<Param>,
    /// The return type as written, `None` for `()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returns: Option<String>,
    /// The trait this method comes from, by the path code outside the crate names it
    /// (`krate::Snapshot`, `metrics::CounterFn`), when it comes from a trait impl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trait_name: Option<String>,
    /// Fully qualified types for the method's own generic parameters, in order (a
    /// turbofish); empty when it has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generic_args: Vec<String>,
    /// An `async fn`: the harness runs its future to completion on the calling thread
    /// (`covcon_rt::block_on`), so a test calls it like any other method.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_async: bool,
    /// Where the method is declared.
    pub span: Span,
    /// The position just after the `{` of the body: where the oracle inserts its
    /// start/end guard in the instrumented copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_start: Option<Span>,
    /// Where the body ends (just after its `}`), when the method has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_end: Option<Span>,
    /// For a method of a handle the type hands out (`Handle::tick`, where `Display::add`
    /// returns a `Handle`): where the handle comes from. Such a method is called on a handle
    /// a test binds before its prefix, and paired with the type's own methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Via>,
    /// For a handle's method that hands out a thread-safe type in turn (`Db::open_tree` of a
    /// `Config` whose `open` hands out the `Db`, answering a `Tree`): that type, and how the
    /// method returns it. Its answer is treated as that of a method the type hands a handle
    /// out by ([`TypeModel::hands_out`]), though no test calls the second handle's methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hands_out: Option<HandedOut>,
    /// Set when the method's answer is approximate by its contract: its doc comment says so
    /// (`len` of a sharded set that sums its shards without a global lock: "may be stale"), or
    /// the package's covcon metadata lists it in `approximate`. It is still called and judged
    /// for panics and deadlocks, but the results oracle does not compare its results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approximate: Option<Approximation>,
    /// Whether the method returns an iterator (`impl Iterator<..>`, `Box<dyn Iterator<..>>`,
    /// or a type of the crate with an `Iterator` impl). A test drives what such a call
    /// returns, in the same step (`c0.iter()` takes up to 64 items), since a bug may be in the
    /// iterator's `next` racing the other thread; its answer is not compared by the results
    /// oracle (an iterator over a concurrent structure need not be a snapshot).
    #[serde(default, skip_serializing_if = "is_false")]
    pub iterates: bool,
    /// Set when the method's doc says that concurrent calls on one key are coalesced into one
    /// evaluation of their closure (moka's `get_with`: "Only one of the calls evaluates its
    /// closure, and other calls wait for that closure to complete"), or likens it to such a
    /// method ("Works like [`get_with`]"); the sentence that says so. The results oracle
    /// accepts such a call answering what an overlapping call of such a method on the same
    /// key answered: it waited for that call's closure instead of running its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coalesces: Option<String>,
    /// Set when the method's doc says it fails when it finds a lock held (quick_cache's
    /// `try_insert`: "`Err((key, value))` if the shard lock could not be acquired without
    /// blocking"; scc's `try_entry`: "`None` if the entry could not be locked"); the sentence
    /// that says so. A failure answer of such a call (`None`, `false`, `Err(..)`) is the
    /// contract's answer to contention, which no order of whole calls gives: the results
    /// oracle does not judge a test in which one answered so. Its other answers are compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contended: Option<String>,
    /// The first sentence of the method's `# Panics` doc section, when it has one
    /// (maitake-sync's `add_permits`: "If adding `permits` permits would cause the permit
    /// count to overflow [`MAX_PERMITS`] ([`usize::MAX`] - 1)."). Such a method panics, by its
    /// contract, for some arguments, and an integer type's edges are where such contracts
    /// are broken: the generator draws its integer arguments small, where the two threads'
    /// calls meet, instead of calls that panic in every order of the test (and a concurrent
    /// run whose two doomed calls panic and then abort while unwinding the other's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub panics: Option<String>,
    /// Whether what it returns can hold the object after the call returns, until it is
    /// dropped: a guard type of the crate itself, by name (`MutexGuard<T>` of a spin lock crate, `GuardResult`,
    /// `Option<SpinGuard<'_>>`) or a type of the crate with a `Drop` impl (a `Permit<'_>`);
    /// also a method that takes such a hold inside (`add` calling `self.lock()`), until it
    /// returns. While it lives the other thread may find the object locked or busy, which no order of
    /// whole calls shows: the results oracle does not compare the calls' answers of a test
    /// that makes such a call (its final state still is). A guard of a field's lock (another
    /// crate's type) is not: where an attempt finds that lock held the copy says so instead.
    #[serde(default, skip_serializing_if = "is_false")]
    pub holds: bool,
    /// Why covcon cannot call it from a generated test, when it cannot
    /// ([`Method::supported`]).
    #[serde(flatten, with = "crate::reason::support")]
    pub reason: Option<Reason>,
}

/// Why a method's answer is approximate ([`Method::approximate`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Approximation {
    /// The method's doc comment says so; `line` quotes the line (or the lines a phrase runs
    /// over) that does.
    Doc { line: String },
    /// The type's doc comment says its contents are kept on a best effort (a cache that
    /// bounds itself "best-effort", by a replacement policy that sees calls in the order they
    /// reach it); `line` quotes it. Every method's answer, and the final state, depend on that
    /// policy's view of a concurrent run.
    TypeDoc { line: String },
    /// The crate's doc comment says that what inspects a structure as a whole sees a
    /// snapshot or a transient state (flurry: "Operations that inspect the map as a whole,
    /// rather than a single key, operate on a snapshot"); `line` quotes it. The methods that
    /// take no key or value of their own (`len`, `iter`, `clear`, `is_subset(&other)`), and the
    /// final state, which `Debug` reads as a whole, are approximate.
    CrateDoc { line: String },
    /// The method's doc comment says the method is not atomic (sled's `Tree::clear`: "Note
    /// that this is not atomic."); `line` quotes it. Its effect interleaves with the other
    /// thread's calls, so neither their answers nor the final state need be what some order
    /// of whole calls gives: the results oracle does not judge a test that calls it.
    NotAtomic { line: String },
    /// `approximate = ["Type::method"]` in the package's or workspace's covcon metadata.
    Configured,
    /// The method is `#[doc(hidden)]`: outside the documented API, so nothing promises what
    /// it answers beside a concurrent call (sled 0.32's `space_amplification`, a ratio of the
    /// files' physical size that the log's buffering of two threads' writes changes).
    Hidden,
    /// The method's name starts with `_`, which by Rust's naming convention marks what a
    /// caller is not meant to use, so nothing promises what it answers beside a concurrent
    /// call: dashmap 6.2.1's `Map` trait ("Implementation detail that is exposed due to
    /// generic constraints in public types") has `_capacity`, which sums the shards' storage one
    /// lock at a time and answered 15 beside a `_shrink_to_fit` where every order gives 24.
    Underscored,
    /// The method answers a view of the object: a type of the crate that borrows it (a
    /// lifetime argument) and whose `Debug` lists the entries it iterates over `self`
    /// (papaya's `HashSet::pin_owned` answers `HashSetRef<'_, ..>`, printed
    /// `f.debug_set().entries(self.iter())`). Its text, read after the call returns, shows
    /// the object as it is then, the other thread's later calls included, not what the call
    /// answered: papaya 0.2.5's `pin_owned(); insert(0) ∥ pin_owned(); len()` printed the
    /// second `pin_owned` as `{0}` beside a `len` of 0, which no order gives (replayed 20/20).
    View,
    /// The method answers what another method answers, and that method's doc says its
    /// answer is approximate: `method` (`SkipList::len`, "just an approximation") is the one
    /// whose doc says so, `line` quotes it. The method's body ends in a call of it, alone or
    /// compared with a literal (crossbeam-skiplist's `SkipSet::is_empty` is
    /// `self.inner.is_empty()`, down to `base::SkipList::is_empty`, `self.len() == 0`), so
    /// the answer is no more exact than the one it comes from, though its own doc is silent.
    AnswersFrom { method: String, line: String },
    /// The method is a collection's `capacity()`: it measures the storage the structure has
    /// allocated, not its contents, and when a concurrent structure grows or gives back its
    /// storage depends on the calls' timing (scc's `HashSet` frees its buckets when the last
    /// entry goes, unless another thread's call is reading them: `capacity` answered 64
    /// beside a `remove_if`, 0 in every order).
    Storage,
}

/// `its doc says "…"`, or `configured approximate`.
impl std::fmt::Display for Approximation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Approximation::Doc { line } => write!(f, "its doc says \"{line}\""),
            Approximation::TypeDoc { line } => write!(f, "its type's doc says \"{line}\""),
            Approximation::CrateDoc { line } => write!(f, "its crate's doc says \"{line}\""),
            Approximation::NotAtomic { line } => {
                write!(f, "its doc says it is not atomic: \"{line}\"")
            }
            Approximation::AnswersFrom { method, line } => {
                write!(f, "it answers from `{method}`, whose doc says \"{line}\"")
            }
            Approximation::Configured => f.write_str("configured approximate"),
            Approximation::Hidden => {
                f.write_str("it is #[doc(hidden)], outside the documented API")
            }
            Approximation::View => f.write_str(
                "it answers a view that borrows the object and lists it when printed, after the call returns",
            ),
            Approximation::Underscored => f.write_str(
                "its name starts with `_`, by convention no part of the API a caller relies on",
            ),
            Approximation::Storage => f.write_str(
                "it measures allocated storage, which the calls' timing grows and frees",
            ),
        }
    }
}

/// Where a handle method's receiver comes from: a method of the type under test that returns
/// another thread-safe type of the crate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Via {
    /// The handle type's public path (`krate::display::Handle`).
    pub ty: String,
    /// The method of the type under test that returns it (`add`), or `#k` for element `k` of
    /// the tuple the instance's constructor returned ([`Constructor::tuple`]).
    pub from: String,
    /// How `from` returns it (`Handle`, `Arc<Handle>`, `Option<Handle>`, `Result<Handle, E>`).
    pub shape: ReturnShape,
    /// The type the handle is kept as, in terms of the type's own parameters, when the
    /// handle type is generic (`::crossbeam_channel::Receiver<T>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
}

/// A thread-safe type a method answers ([`TypeModel::hands_out`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandedOut {
    /// Its public path (`sled::Tree`).
    pub ty: String,
    /// How the method returns it.
    pub shape: ReturnShape,
}

impl Via {
    /// For a handle from the constructor's tuple (`#1`): the element's index.
    pub fn tuple_element(&self) -> Option<usize> {
        match crate::refs::HandleFrom::parse(&self.from) {
            crate::refs::HandleFrom::Element(k) => Some(k),
            crate::refs::HandleFrom::Method(_) => None,
        }
    }
}

impl TypeModel {
    /// Whether covcon can drive the type: it has no [`Reason`] not to.
    pub fn supported(&self) -> bool {
        self.reason.is_none()
    }

    /// The methods whose answer is an opaque key: one of the type's own type parameters
    /// (`K`, `Option<K>`, `Result<K, E>`, or a `Result` alias such as lasso's
    /// `LassoResult<K>`) that the tests only ever hand back. That is, every parameter of its
    /// methods that names the type parameter takes a key a call returned, never a generated
    /// value (`ParamKind::Returned` without `or`, as `cross::take_keys` gives `resolve(key:
    /// &K)`). What a user can do with such a key is pass it back, so which value a key has is
    /// no answer of the calls; which calls answered the same key is. The results oracle
    /// compares these answers up to a consistent renaming of keys (lasso's `ThreadedRodeo`
    /// numbers keys before they resolve, in no order across its shards).
    pub fn key_answers(&self) -> std::collections::BTreeSet<String> {
        let own: Vec<&str> = self
            .generics
            .iter()
            .filter(|g| g.kind == GenericKind::Type)
            .map(|g| g.name.as_str())
            .collect();
        let params = || {
            self.methods
                .iter()
                .filter(|m| m.supported() && m.via.is_none())
                .flat_map(|m| &m.params)
        };
        let opaque: Vec<&str> = own
            .into_iter()
            .filter(|g| {
                let mut named = params().filter(|p| names_word(&p.ty, g)).peekable();
                named.peek().is_some()
                    && named.all(
                        |p| matches!(&p.kind, ParamKind::Returned { ty, or: None, .. } if ty == g),
                    )
            })
            .collect();
        self.methods
            .iter()
            .filter(|m| m.supported() && m.via.is_none())
            .filter(|m| {
                m.returns
                    .as_deref()
                    .and_then(key_returned)
                    .is_some_and(|k| opaque.contains(&k.as_str()))
            })
            .map(|m| m.name.clone())
            .collect()
    }

    /// The type's own method named `name`, not a handle's (the `from` of a [`Via`]).
    pub fn own_method(&self, name: &str) -> Option<&Method> {
        self.methods
            .iter()
            .find(|m| m.name == name && m.via.is_none())
    }

    /// What method `name` hands out, when it answers a thread-safe type that shares the
    /// object's state: a handle whose methods the type's tests call ([`TypeModel::handed_out_by`])
    /// or, for a handle's method, a type that handle hands out in turn ([`Method::hands_out`]).
    /// Such an answer is not the object's logical state: the results oracle leaves it out, and
    /// a call that does not keep it answers its variant only.
    pub fn hands_out(&self, name: &str) -> Option<HandedOut> {
        if let Some(via) = self.handed_out_by(name) {
            return Some(HandedOut {
                ty: via.ty.clone(),
                shape: via.shape,
            });
        }
        self.methods
            .iter()
            .find(|m| m.name == name)
            .and_then(|m| m.hands_out.clone())
    }

    /// How method `name` hands out a handle whose methods the type's tests call, when it does:
    /// the [`Via`] of those methods (`Db::open_tree` hands out a `Tree`). Not an element of the
    /// constructor's tuple (`#1`).
    pub fn handed_out_by(&self, name: &str) -> Option<&Via> {
        self.methods
            .iter()
            .filter_map(|m| m.via.as_ref())
            .find(|v| v.from == name && v.tuple_element().is_none())
    }
}

impl Method {
    /// Whether a test can call the method: it has no [`Reason`] not to.
    pub fn supported(&self) -> bool {
        self.reason.is_none()
    }

    /// Whether a call of the method answers what a closure it passes was handed: one of its
    /// parameters is an `FnOnce` closure that shows an argument (`ParamKind::Closure::shown`),
    /// and its answer is no iterator the test drives instead.
    pub fn shows_closure_arguments(&self) -> bool {
        !self.iterates
            && self
                .params
                .iter()
                .any(|p| matches!(&p.kind, ParamKind::Closure { shown, .. } if !shown.is_empty()))
    }

    /// Whether a thread that cannot touch the instance can make the call (thread 1 of a
    /// [`TypeModel::confined`] type): a handle's method, on a handle kept before the threads
    /// start (not one behind a guard, reached through a fresh call on the instance), taking no
    /// instance and no value made on the receiver in the thread.
    pub fn reaches_without_instance(&self) -> bool {
        self.supported()
            && self
                .via
                .as_ref()
                .is_some_and(|v| v.shape != ReturnShape::Guard)
            && !self.params.iter().any(|p| {
                p.kind.any(&|k| {
                    matches!(
                        k,
                        ParamKind::Instance { .. } | ParamKind::FromReceiver { .. }
                    )
                })
            })
    }

    /// The handle type's bare name and the method's own name, for a handle method
    /// (`Handle::tick` → `("Handle", "tick")`).
    pub fn handle_parts(&self) -> Option<(&str, &str)> {
        self.via.as_ref()?;
        match crate::refs::MethodRef::parse(&self.name) {
            crate::refs::MethodRef::Handle { handle, method } => Some((handle, method)),
            crate::refs::MethodRef::Own(_) => None,
        }
    }
}

/// A parameter of a constructor or method.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    /// The type as written in the source (`&str`, `Vec<u8>`, `&Self`).
    pub ty: String,
    /// What covcon can generate for it.
    pub kind: ParamKind,
}

/// The shapes of argument covcon knows how to generate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ParamKind {
    /// `u8`..`u128`, `usize`, `i8`..`i128`, `isize`.
    Int {
        signed: bool,
        bits: u16,
    },
    Bool,
    Char,
    Float {
        bits: u16,
    },
    /// `String` by value.
    String,
    /// `&str`.
    Str,
    /// `Vec<T>` by value.
    Vec {
        elem: Box<ParamKind>,
    },
    /// `&[T]` (byte slices included).
    Slice {
        elem: Box<ParamKind>,
    },
    /// `&T` for any other `T` covcon can generate by value (`&u64`, `&String`, `&K`): the
    /// harness generates a `T` and passes a reference to it.
    Ref {
        inner: Box<ParamKind>,
    },
    Option {
        inner: Box<ParamKind>,
    },
    /// `Result<T, E>`: `Ok` of a generated `T` (a closure's result, mostly); when covcon can
    /// generate an `E` (`err`), now and then `Err` of one (a closure that fails:
    /// `try_call_once(|| Err(0))`). Without `err` the error type is left to inference.
    Result {
        ok: Box<ParamKind>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        err: Option<Box<ParamKind>>,
    },
    Tuple {
        elems: Vec<ParamKind>,
    },
    /// `std::time::Duration`.
    Duration,
    /// `NonZeroU32`, `NonZeroUsize`, `NonZero<u8>`, …: a non-zero integer (zero becomes one).
    NonZero {
        signed: bool,
        bits: u16,
    },
    /// `Box<T>` or `Arc<T>` of a generable `T` (not of the type under test: that is an
    /// [`ParamKind::Instance`]).
    Pointer {
        pointer: Pointer,
        inner: Box<ParamKind>,
    },
    /// Another instance of the type under test, or the shared instance itself.
    Instance {
        passing: InstancePassing,
    },
    /// `impl FnOnce() -> T`, `impl Fn(&K) -> T`, `F: FnMut(&K, &V) -> T`: a closure that
    /// returns a value. One bound `FnOnce` (called at most once, a point in the call) shows
    /// its arguments of plain data (`shown`, per argument, empty when it shows none:
    /// [`ParamKind::is_plain_data`], the caller's keys and values, not the structure's own
    /// nodes, whose `Debug` shows bookkeeping the other thread changes), which its call answers
    /// under the results oracle (`covcon_rt::see`); an `Fn`/`FnMut` one may be called for every
    /// entry of a structure another thread changes (`retain`), and ignores its `arity` arguments.
    Closure {
        returns: Box<ParamKind>,
        #[serde(default, skip_serializing_if = "is_zero")]
        arity: usize,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        shown: Vec<bool>,
    },
    /// A type parameter of the type itself (`K`, `V`), filled in when the type is instantiated.
    Generic {
        name: String,
    },
    /// A value of a type built from its constructors: one of the type's
    /// [`TypeModel::values`], by path.
    Value {
        path: String,
    },
    /// What a no-argument `&self` method of the receiver returns (`&map.guard()` for
    /// `guard: &Guard<'_>`): a handle the type hands out for its own calls. Passed by
    /// reference when `by_ref`.
    FromReceiver {
        method: String,
        by_ref: bool,
    },
    /// `&Handle`, where `Handle` is a type the type under test hands out (a method of it
    /// returns one, `Method::via`): a handle the test keeps, by its type's path, and how the
    /// method returns it (how the harness keeps it).
    Handle {
        ty: String,
        shape: ReturnShape,
    },
    /// A value of a type only the type's own methods make (an opaque key: `Key` from
    /// `insert(&self, ..) -> Key`), for a parameter nothing else can build: a value the test
    /// keeps from a call of `from` (`TestCase::handles`), `Option`/`Result` unwrapped as
    /// `shape` says, cloned, or passed by reference when `by_ref`. `ty` is the type as the
    /// parameter writes it.
    Returned {
        from: String,
        ty: String,
        shape: ReturnShape,
        by_ref: bool,
        /// A key of a standard type (`remove(idx: usize)` beside `insert(v) -> Option<usize>`):
        /// as often a generated value of this kind as the kept one, since any `usize` is a
        /// `usize` and a key no call made is worth trying too.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        or: Option<Box<ParamKind>>,
    },
    /// Anything else: recorded with the reason, never silently dropped.
    #[default]
    Unsupported,
}

impl ParamKind {
    /// Whether a closure of this kind shows its call argument `k` (`Closure::shown`).
    pub fn shows_argument(&self, k: usize) -> bool {
        matches!(self, ParamKind::Closure { shown, .. } if shown.get(k).copied().unwrap_or(false))
    }

    /// Whether a value of this kind is data a caller puts in and gets back: numbers, text,
    /// durations, the type's own parameters, and references, options, tuples, vectors and
    /// slices of them; not a structure's node, a handle or a type covcon cannot make (scc's
    /// `Stack::peek_with` hands its closure `Option<&Entry<T>>`, whose `Debug` shows the
    /// entry's `removed` flag and `next` pointer, which a concurrent `pop_all` changes).
    pub fn is_plain_data(&self) -> bool {
        match self {
            ParamKind::Int { .. }
            | ParamKind::Bool
            | ParamKind::Char
            | ParamKind::Float { .. }
            | ParamKind::String
            | ParamKind::Str
            | ParamKind::Duration
            | ParamKind::NonZero { .. }
            | ParamKind::Generic { .. } => true,
            ParamKind::Vec { elem } | ParamKind::Slice { elem } => elem.is_plain_data(),
            ParamKind::Ref { inner } | ParamKind::Option { inner } => inner.is_plain_data(),
            ParamKind::Tuple { elems } => elems.iter().all(ParamKind::is_plain_data),
            _ => false,
        }
    }

    /// The kinds a value of this kind is made of: the element of a `Vec` or slice, the `T`
    /// of `&T`, `Option<T>`, `Box<T>`/`Arc<T>` and `Result<T, _>`, a closure's result, a
    /// tuple's elements.
    pub fn parts(&self) -> Vec<&ParamKind> {
        match self {
            ParamKind::Vec { elem } | ParamKind::Slice { elem } => vec![elem],
            ParamKind::Ref { inner }
            | ParamKind::Option { inner }
            | ParamKind::Pointer { inner, .. } => vec![inner],
            ParamKind::Result { ok, err } => std::iter::once(ok).chain(err).map(|k| &**k).collect(),
            ParamKind::Closure { returns, .. } => vec![returns],
            ParamKind::Tuple { elems } => elems.iter().collect(),
            _ => Vec::new(),
        }
    }

    /// [`ParamKind::parts`], to change.
    pub fn parts_mut(&mut self) -> Vec<&mut ParamKind> {
        match self {
            ParamKind::Vec { elem } | ParamKind::Slice { elem } => vec![elem],
            ParamKind::Ref { inner }
            | ParamKind::Option { inner }
            | ParamKind::Pointer { inner, .. } => vec![inner],
            ParamKind::Result { ok, err } => {
                std::iter::once(ok).chain(err).map(|k| &mut **k).collect()
            }
            ParamKind::Closure { returns, .. } => vec![returns],
            ParamKind::Tuple { elems } => elems.iter_mut().collect(),
            _ => Vec::new(),
        }
    }

    /// Whether this kind, or one it is made of at any depth, satisfies `f`.
    pub fn any(&self, f: &impl Fn(&ParamKind) -> bool) -> bool {
        f(self) || self.parts().into_iter().any(|p| p.any(f))
    }

    /// Renames the type parameters this kind names (`ParamKind::Generic`) as `to` says;
    /// `false`, with the kind partly renamed, when `to` has no name for one.
    pub fn rename_generics(&mut self, to: &impl Fn(&str) -> Option<String>) -> bool {
        if let ParamKind::Generic { name } = self {
            return match to(name) {
                Some(new) => {
                    *name = new;
                    true
                }
                None => false,
            };
        }
        self.parts_mut().into_iter().all(|p| p.rename_generics(to))
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The owning pointer of a [`ParamKind::Pointer`] argument.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pointer {
    #[default]
    Box,
    Arc,
}

impl Pointer {
    /// The pointer's path from anywhere (`::std::sync::Arc`).
    pub fn path(self) -> &'static str {
        match self {
            Pointer::Box => "::std::boxed::Box",
            Pointer::Arc => "::std::sync::Arc",
        }
    }
}

/// How an instance argument is passed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstancePassing {
    #[default]
    Ref,
    Arc,
    Value,
}

/// An unordered pair of methods and its BC-ConTest group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    /// Method names, the first not after the second in declaration order.
    pub methods: [String; 2],
    pub group: Group,
    /// Why the pair is in its group, in words a user can check against the code.
    pub reasons: Vec<String>,
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    High,
    #[default]
    Low,
    Removed,
}

/// A place inside a method where an interleaving matters (SplitRichTest).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SplitPoint {
    pub method: String,
    /// Position at which a schedule point can be inserted as a statement: the start of the
    /// statement that follows the CFG edge, inside a block.
    pub at: Span,
    /// Follows a `while … wait` or precedes an `if … notify`.
    pub cond_syn: bool,
    /// Number of shared fields accessed on every path before and after the edge.
    pub num_sv: u32,
    /// What lies on each side, for the reports.
    pub description: String,
}

/// A lock acquisition, atomic operation or condition variable's wait or notify on a field,
/// written `receiver.op(args)` in a method body (`self.state.lock()`,
/// `self.count.fetch_add(1, SeqCst)`, `self.ready.wait(guard)`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncSite {
    /// The function whose body holds it (a public method or a helper).
    pub method: String,
    pub op: SyncOp,
    /// Where the receiver expression starts (`self` of `self.state.lock()`).
    pub receiver: Span,
    /// Where the receiver ends (line, column), in the same file: just before `.lock`.
    pub receiver_end: (u32, u32),
    /// Where the whole call ends (line, column): just after its `)`.
    pub call_end: (u32, u32),
    /// The type covcon cannot build whose code holds the site, when a type it tests listed it
    /// as that type's (`RawRwLock` for parking_lot's `RwLock`): a schedule point, but no
    /// mutant's site, since the type a mutant is judged through might never run that code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untested_owner: Option<String>,
    /// For an atomic operation: the lock (a field path, `state`) that every write of its
    /// atomic in the type's code is made holding, exclusively. Done as a load and a store
    /// there, the operation loses no update, since no other write can come between the two:
    /// its mutant is equivalent. `None` when a write is made without it, on another instance,
    /// or in code another type shares (a handle's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes_under: Option<String>,
    /// The private helper whose code holds the site (a type with no public method, which
    /// left the model), when this type took the site over from it: every tested type of the
    /// package runs it as a schedule point, but its mutants are the helper's, judged through
    /// the types that hold it ([`TypeModel::holds`]), whose calls run its code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helper: Option<String>,
}

impl SyncSite {
    /// The private helper whose site this is, when one of `types` holds it: the site is then
    /// the code of those holders (their mutants, their lines in a diff), not of every type
    /// that took it over. `None` for a type's own site, or a helper none of them holds.
    pub fn held_helper<'a>(&'a self, types: &[&TypeModel]) -> Option<&'a String> {
        self.helper
            .as_ref()
            .filter(|h| types.iter().any(|t| t.holds.contains(h)))
    }
}

/// What a [`SyncSite`] does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum SyncOp {
    /// A blocking acquisition (`lock`, `read`, `write`, …) and the method that attempts the
    /// same acquisition without blocking (`try_lock`, `try_read`, …).
    Acquire { blocking: String, attempt: String },
    /// A timed acquisition (parking_lot's and lock_api's `try_lock_for(d)`, `try_write_for`,
    /// `try_read_for`, or the `_until(deadline)` ones) and the attempt without waiting
    /// (`try_lock`, …): whether it times out
    /// is the schedule's choice in a controlled run.
    TimedAcquire { timed: String, attempt: String },
    /// An acquisition that does not wait (`try_lock()`, `try_read()`, `try_write()`): when it
    /// finds the lock held, what its call answers is one only contention gives.
    Attempt { attempt: String },
    /// A lock written by hand on a `bool` flag: `compare_exchange(false, true, ..)` (or
    /// `_weak`) outside any loop, in a function that also stores `false` to the flag (the
    /// release): mini-moka's housekeeper `try_sync`. When it fails, the flag was held by the
    /// other thread's call, and what this call answers is one only contention gives.
    FlagAttempt,
    /// One operation on an atomic (`load`, `fetch_add`, `compare_exchange`, …).
    #[default]
    Atomic,
    /// One call on a dependency's concurrent container (`self.map.insert(k, v)` on a
    /// `DashMap`, `self.queue.push(x)` on a `SegQueue`): indivisible itself, but two of them
    /// in one method are two steps another thread can come between (lasso's key published in
    /// one map before its string is in the other). A schedule point, no mutant: the
    /// container's code is not the crate's.
    Container,
    /// A condition variable's wait that takes the guard by value (std's `wait`,
    /// `wait_timeout`, `wait_while`, `wait_timeout_while`), and the mutex that guard is of,
    /// as an expression at the site (`self.items`).
    Wait { lock: String },
    /// A condition variable's untimed wait that borrows the guard (`cv.wait(&mut guard)`:
    /// parking_lot's, lock_api-style) of a lock of the type: the copy registers the waiting
    /// thread with the watchdog, which can wake it (a probe for a lost wake-up) and end a run
    /// blocked there without losing the worker. The wait itself is the condition variable's
    /// own, not taken over by the schedule (a waiter found asleep gives the turn away).
    WaitMut,
    /// A condition variable's `notify_one` (`all` false) or `notify_all`; `waited` when some
    /// site waits on that condition variable (only those notifies are schedule points).
    Notify { all: bool, waited: bool },
}

/// Where a concurrency mutant can be made (positions are (line, column) in the file of the
/// `Span` they go with).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum MutationSite {
    /// A guard bound by `let`, and the places after it in its block, each between two
    /// statements that use the guard, where it can be dropped and taken again; and `nested`:
    /// the starts (just after `{`) of the blocks of an `if` or `match` whose condition uses
    /// the guard and whose block uses it again (a check-then-act in one statement).
    Section {
        method: String,
        guard: GuardLet,
        splits: Vec<(u32, u32)>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        nested: Vec<(u32, u32)>,
    },
    /// A guard bound by `let` that lives to the end of its block, and where the statements
    /// after its last use start, when one of them touches `self`: dropping the guard there
    /// moves them out of the critical section.
    ReleaseEarly {
        method: String,
        guard: GuardLet,
        at: (u32, u32),
    },
    /// Two guards bound one right after the other, whose acquisitions can be swapped.
    LockOrder {
        method: String,
        first: GuardLet,
        second: GuardLet,
    },
    /// A `while` loop (its keyword at `at`) whose body waits on a condition variable, and the
    /// position of the body's closing brace.
    WaitLoop {
        method: String,
        at: Span,
        body_end: (u32, u32),
    },
    /// A guard bound by `let` and the statement right after it, which does not use the guard
    /// but calls a method on `self`'s state (an atomic, another lock, a helper): `stmt` to
    /// `stmt_end`, and for a `let`, its initialiser `init` (start, end). The acquisition can
    /// be moved past it: the statement runs before the lock is taken (SHCR, a critical
    /// section shifted down).
    AcquireLate {
        method: String,
        guard: GuardLet,
        stmt: (u32, u32),
        stmt_end: (u32, u32),
        #[serde(default, skip_serializing_if = "Option::is_none")]
        init: Option<((u32, u32), (u32, u32))>,
    },
    /// A `compare_exchange` (or `_weak`) inside a loop of the function, its receiver starting
    /// at `at` and its call ending at `call_end`: a retry loop, whose failed attempt can be
    /// taken for a success, so that the loop's work is done once and the failure ignored.
    RetryCas {
        method: String,
        at: Span,
        call_end: (u32, u32),
    },
    /// Two statements one right after the other in a block: `write`, which writes shared state
    /// (an atomic store or read-modify-write, or a write through a pointer or a cell), up to
    /// `write_end`; then an atomic store or read-modify-write whose answer is not used, on
    /// another receiver, that publishes it: its receiver from `publish` to `receiver_end`, its
    /// call to `call_end`, the statement (with its `;`) to `publish_end`. They can be swapped:
    /// published before it is written.
    Publish {
        method: String,
        write: Span,
        write_end: (u32, u32),
        publish: (u32, u32),
        receiver_end: (u32, u32),
        call_end: (u32, u32),
        publish_end: (u32, u32),
    },
}

impl MutationSite {
    /// The function it is in.
    pub fn method(&self) -> &str {
        match self {
            MutationSite::Section { method, .. }
            | MutationSite::ReleaseEarly { method, .. }
            | MutationSite::LockOrder { method, .. }
            | MutationSite::WaitLoop { method, .. }
            | MutationSite::AcquireLate { method, .. }
            | MutationSite::RetryCas { method, .. }
            | MutationSite::Publish { method, .. } => method,
        }
    }
}

/// `let g = self.m.lock().unwrap();`: where its parts are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardLet {
    /// The bound name (`g`).
    pub name: String,
    /// The statement's start (`let`) and end (after its `;`).
    pub stmt: Span,
    pub stmt_end: (u32, u32),
    /// The binding (`mut g`).
    pub pattern: (u32, u32),
    pub pattern_end: (u32, u32),
    /// The initialiser (`self.m.lock().unwrap()`).
    pub init: (u32, u32),
    pub init_end: (u32, u32),
    /// The acquisition inside it: its receiver (`self.m`), where that ends, where the call
    /// (`.lock()`) ends, and the method (`lock`).
    pub receiver: (u32, u32),
    pub receiver_end: (u32, u32),
    pub call_end: (u32, u32),
    pub acquire: String,
}

/// A source position. `line` is 1-based, `column` 0-based in characters (proc-macro2's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    pub file: PathBuf,
    pub line: u32,
    pub column: u32,
}

/// Something the analysis could not read or model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    #[default]
    Warning,
    Note,
}

/// Whether `ty` mentions `word` as a whole identifier (`&K`, `Vec<K>`; not `Key`).
fn names_word(ty: &str, word: &str) -> bool {
    ty.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// The type parameter a return type answers, bare or in an `Option`, a `Result` or a `Result`
/// alias (`LassoResult<K>`): `K`.
fn key_returned(returns: &str) -> Option<String> {
    let ty: syn::Type = syn::parse_str(returns).ok()?;
    let syn::Type::Path(p) = &ty else { return None };
    let last = p.path.segments.last()?;
    let name = last.ident.to_string();
    let inner = if name == "Option" || name.ends_with("Result") {
        let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
            return None;
        };
        match a.args.first()? {
            syn::GenericArgument::Type(t) => t,
            _ => return None,
        }
    } else {
        &ty
    };
    let syn::Type::Path(ip) = inner else {
        return None;
    };
    ip.path.get_ident().map(ToString::to_string)
}
