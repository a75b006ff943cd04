//! Concurrent test cases and the feedback the generator gets about them.
//!
//! This module is the contract between the generator and whatever runs the tests (the oracle
//! in production, a fake executor in tests). A [`TestCase`] holds concrete values only, so it
//! can be replayed, printed as Rust and saved as JSON.

use analysis::refs::{HandleFrom, MethodRef};
/// How a test's concurrent runs are scheduled: the protocol's, which the oracle sends in each
/// run's noise.
pub use covcon_protocol::Control;
use serde::{Deserialize, Serialize};

/// One concurrent test: build instances, run a sequential prefix, then two threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestCase {
    /// Unique within a campaign, in generation order.
    pub id: u64,
    /// `krate::module::Type`.
    pub type_path: String,
    /// The pair of methods this test was built to try (the two suffixes' methods).
    pub pair: [String; 2],
    /// One constructor call per instance. Instance 0 is the shared instance under test;
    /// instance 1, when present, is a second instance for calls that take one.
    pub instances: Vec<Call>,
    /// Calls of methods that return a handle (another thread-safe type of the crate), each on
    /// the instance its `receiver` names, run after the instances are built; handle `k` is
    /// what the `k`th returned. A handle method's call (`Bar::tick`) names its handle by
    /// `receiver`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handles: Vec<Call>,
    /// Calls run sequentially, on one thread, before the two threads start.
    pub prefix: Vec<Call>,
    /// The two suffixes, run concurrently, one per thread.
    pub threads: [Vec<Call>; 2],
    /// Seed for the schedule noise at split points, so a run can be repeated; in a
    /// controlled run, the seed of the scheduler's choices.
    pub noise_seed: u64,
    /// How its concurrent runs are scheduled: free, or by a controlled strategy that
    /// `noise_seed` replays exactly.
    #[serde(default, skip_serializing_if = "Control::is_free")]
    pub control: Control,
}

impl TestCase {
    /// For each call of thread `thread`, the handle number it keeps its result as
    /// ([`Call::keep`]): locals follow the test's handles, thread 1's after thread 0's.
    pub fn locals(&self, thread: usize) -> Vec<Option<usize>> {
        let mut next = self.handles.len();
        if thread == 1 {
            next += self.threads[0].iter().filter(|c| c.keep).count();
        }
        self.threads[thread]
            .iter()
            .map(|c| {
                c.keep.then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect()
    }

    /// Whether a thread keeps a guard in a scope ([`Call::scope`]): the test's orders run
    /// each scope whole, so under the results oracle its results are not compared.
    pub fn has_scope(&self) -> bool {
        self.threads.iter().flatten().any(|c| c.scope.is_some())
    }
}

/// A call of a constructor or method. `receiver` is an instance index (ignored for
/// constructors).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    pub method: String,
    #[serde(default)]
    pub receiver: usize,
    pub args: Vec<Value>,
    /// How many times the call is made in a row (`for _ in 0..times { .. }`); more than one
    /// only in a prefix, where the calls run sequentially.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub times: u32,
    /// In a thread: the call's result is kept as the thread's next *local* handle (`let h2 =
    /// c0.intern("a");`), which later calls of the same thread take (`c0.resolve(h2)`) or are
    /// made on (`h2.inc()`). A thread's locals are numbered after the test's
    /// [`TestCase::handles`], in the order its calls keep them; the other thread never sees
    /// them. Only calls of a method some parameter or handle method names as its `from`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub keep: bool,
    /// A handle method's call (`Gauge::add`) made in one expression on what a fresh call of
    /// the method that hands the handle out returns (`c0.get_or_create("a").add(1)`): a guard
    /// that borrows its owner and cannot be kept. `receiver` is then the instance, and `args`
    /// hold that method's arguments first, then the handle method's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chained: Option<Chain>,
    /// In a thread: the call returns a guard (an [`analysis::ScopeGuard`]'s `from`) that the
    /// thread keeps on its stack while it makes the scope's calls, then ends with one of the
    /// guard's methods or drops (`let g = c0.reserve(3); c0.book(3, 1); g.confirm(2)`). The
    /// whole scope is one step of the thread: a sequential order runs it without the other
    /// thread's calls in between, which is why a test with a scope is judged for panics and
    /// deadlocks only, its results not compared ([`TestCase::has_scope`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Box<Scope>>,
}

/// What a thread does while it holds a [`Call::scope`]'s guard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scope {
    /// Calls on the instances, made in order while the guard lives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub then: Vec<Call>,
    /// The guard's method the scope ends with (a [`analysis::Finisher`]; its receiver is the
    /// guard, not an instance), or none: the guard is dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<Call>,
}

/// The call a [`Call::chained`] call is made on the result of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chain {
    /// The method that hands out the handle (`get_or_create`).
    pub from: String,
    /// How many of the call's arguments are that method's (the first ones).
    pub args: usize,
}

/// What a [`Call`] is made on, and the method's own name (how its `method` and `chained`
/// say it; the spelling is `analysis::refs`').
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// A method (or constructor) of the instance `receiver` names (`c0.push(1)`).
    Instance(&'a str),
    /// A handle method (`Bar::tick`) on the kept handle `receiver` names (`h0.tick()`).
    Handle(&'a str),
    /// A handle method on what a fresh call of `chain.from` on the instance `receiver` names
    /// returns (`c0.get_or_create("a").add(1)`).
    Chained { chain: &'a Chain, method: &'a str },
    /// In [`TestCase::handles`]: element `k` of the tuple the constructor of the instance
    /// `receiver` names returned.
    Element(usize),
}

impl Call {
    /// What the call is made on.
    pub fn target(&self) -> Target<'_> {
        if let HandleFrom::Element(k) = HandleFrom::parse(&self.method) {
            return Target::Element(k);
        }
        match (MethodRef::parse(&self.method), &self.chained) {
            (MethodRef::Own(method), _) => Target::Instance(method),
            (MethodRef::Handle { method, .. }, None) => Target::Handle(method),
            (MethodRef::Handle { method, .. }, Some(chain)) => Target::Chained { chain, method },
        }
    }

    /// Whether the call is a handle method's (`Bar::tick`) made on a kept handle rather than
    /// an instance, not one [`Call::chained`] on a call's result.
    pub fn on_handle(&self) -> bool {
        matches!(self.target(), Target::Handle(_))
    }

    /// One call of `method` on instance `receiver`.
    pub fn new(method: impl Into<String>, receiver: usize, args: Vec<Value>) -> Call {
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

    /// The handles the call uses: its receiver for a handle method's call, and every handle
    /// among its arguments, at any depth.
    pub fn handles_used(&self) -> Vec<usize> {
        let mut used = Vec::new();
        self.clone().map_handles(&mut |k| {
            used.push(k);
            k
        });
        used
    }

    /// Renumbers the handles the call uses ([`Call::handles_used`]) as `to` says.
    pub fn map_handles(&mut self, to: &mut impl FnMut(usize) -> usize) {
        if self.on_handle() {
            self.receiver = to(self.receiver);
        }
        self.args.iter_mut().for_each(|v| v.map_handles(to));
        if let Some(scope) = &mut self.scope {
            scope.then.iter_mut().for_each(|c| c.map_handles(to));
            if let Some(finish) = &mut scope.finish {
                finish.args.iter_mut().for_each(|v| v.map_handles(to));
            }
        }
    }
}

impl Value {
    /// Renumbers the handles this value passes, at any depth, as `to` says.
    pub fn map_handles(&mut self, to: &mut impl FnMut(usize) -> usize) {
        match self {
            Value::Handle(k) => *k = to(*k),
            Value::List(items) | Value::Tuple(items) => {
                items.iter_mut().for_each(|v| v.map_handles(to))
            }
            Value::Option(Some(inner)) | Value::Closure(inner) | Value::Err(inner) => {
                inner.map_handles(to)
            }
            Value::Built(b) => b.args.iter_mut().for_each(|v| v.map_handles(to)),
            _ => {}
        }
    }
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A concrete argument value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    Int(i128),
    Bool(bool),
    Char(char),
    Float(f64),
    Str(String),
    /// A `Vec` or slice.
    List(Vec<Value>),
    Option(Option<Box<Value>>),
    Tuple(Vec<Value>),
    /// A `Duration` in microseconds.
    Duration(u64),
    /// Instance number (see [`TestCase::instances`]).
    Instance(usize),
    /// A closure that returns this value.
    Closure(Box<Value>),
    /// `Err` of this value, for a `Result` parameter or a closure's `Result` (any other value
    /// stands for `Ok` of it there).
    Err(Box<Value>),
    /// A value of one of the type's [`analysis::ValueType`]s, built by a constructor.
    Built(Box<Built>),
    /// What the named no-argument method of the call's receiver returns (`&c0.guard()`).
    FromReceiver(String),
    /// A handle the test keeps (see [`TestCase::handles`]), passed by reference (`&h0`).
    Handle(usize),
}

/// A value built by calling a constructor of its type (`MeterOpts::new("a", "b")`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Built {
    /// The value type's public path (`krate::opts::MeterOpts`).
    pub ty: String,
    /// The constructor's name: a function, `default`, a variant or the struct's name.
    pub ctor: String,
    /// Every argument in order, a builder chain's calls' after the first call's.
    pub args: Vec<Value>,
    /// How the construction is written.
    pub form: BuiltForm,
}

/// How a [`Built`] value is written in Rust.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BuiltForm {
    /// `Ty::ctor(args)`, then the chain's calls, each with its number of arguments; `Owner::ctor`
    /// when a function of another type builds it.
    Call {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        chain: Vec<(String, usize)>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner: Option<String>,
    },
    /// `<Ty as Default>::default()`.
    Default,
    /// `Ty::Variant(args)`, or `Ty::Variant` without arguments.
    Variant,
    /// `Ty { field: arg, .. }`, or `Ty::Variant { field: arg, .. }` when `variant`.
    Literal { fields: Vec<String>, variant: bool },
}

/// What executing one test taught the generator.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution<V> {
    pub test_id: u64,
    /// Unordered method pairs that ran concurrently (CovCon Algorithm 1), each with the
    /// smaller name first, indirect calls included.
    pub covered: Vec<[String; 2]>,
    /// A confirmed thread-safety violation, if the run showed one.
    pub violation: Option<V>,
    /// Calls that hung when run alone (a sequential order blocked in them, which explained
    /// the run's deadlock): each costs a timeout, so the generator does not write them again.
    pub hung: Vec<Call>,
    /// Microseconds the test's run spent building its instances and prefix and dropping
    /// them, when it passed and the executor measured it: the generator draws again
    /// constructor arguments seen only in slow setups (see `TestGenerator::record`).
    pub setup_us: Option<u64>,
    /// Whether a call of `hung` ran alone until the run's timeout (a loop that never ends,
    /// not a wait the watchdog ends in milliseconds): every such run costs the timeout, and
    /// the state the test's constructor arguments made is the likelier cause than the
    /// call's own (atomicring's `with_capacity(1)`, where `push_overwrite` retries for
    /// ever), so the generator draws those arguments again after a second such test.
    pub looped_alone: bool,
    /// Whether the test's setup failed: a constructor or a prefix call panicked before the
    /// threads started. A constructor argument seen only in failed setups (concurrent-queue's
    /// `bounded(0)`, "capacity must be positive") is drawn again.
    pub setup_failed: bool,
}

/// The oracle as the generator sees it.
pub trait Executor {
    /// Whatever the executor knows about a violation; the campaign only needs a key to tell
    /// distinct violations apart.
    type Violation: Clone;

    /// Runs the tests (in parallel if it can) and answers one [`Execution`] per test, in any
    /// order.
    fn execute(&mut self, tests: &[TestCase]) -> Vec<Execution<Self::Violation>>;

    /// A key that is equal for two violations that are the same bug (type, pair and kind).
    fn violation_key(&self, violation: &Self::Violation) -> String;

    /// Whether the violation ends its type's search (unless the campaign keeps going): an
    /// executor that re-runs what it finds answers `false` for one no re-run repeated, and
    /// the campaign goes on, where a later sighting of it may be confirmed and take its
    /// place. The default: every violation does.
    fn conclusive(&self, _violation: &Self::Violation) -> bool {
        true
    }

    /// When the current type's time is up. An executor may then leave tests of a batch it
    /// has not started out of its answer (they count as not run), so a slow batch cannot
    /// overrun a budget by much. The default ignores it.
    fn set_deadline(&mut self, _deadline: Option<std::time::Instant>) {}

    /// Which violation ends the current type's search (see [`StopAt`]), set at the start of
    /// each type. An executor may then leave out the work a batch would still do for the type
    /// once such a violation is in (judging its other failing runs, exploring): the campaign
    /// stops the type after this batch, and that work is what the user would wait for before
    /// the report. The default ignores it.
    fn set_stop_at(&mut self, _stop: StopAt) {}

    /// The keys ([`Self::violation_key`]) of violations already known (a CI gate's
    /// baseline), set at the start of each type: one of them ends no search, so an executor
    /// that leaves out work once a batch has a violation that does ([`Self::set_stop_at`])
    /// must not leave it out for these. The default ignores it.
    fn set_known(&mut self, _known: &std::collections::BTreeSet<String>) {}
}

/// Which violation ends a type's search ([`Executor::set_stop_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StopAt {
    /// None: the campaign goes on after violations (`--keep-going`).
    #[default]
    Never,
    /// The first one [`Executor::conclusive`] says is.
    Conclusive,
    /// The first one, confirmed or not (the benchmark's).
    Any,
}
