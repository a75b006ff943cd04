//! The results oracle: a concurrent run that passed is still a thread-safety violation when
//! its results match no linearization's. The type is its own sequential specification (as in
//! OCaml's Lin): each linearization of the two suffixes is run sequentially on a fresh
//! instance after the same prefix, and the `Debug` text of every suffix call's return value,
//! and of instance 0 at the end, is compared with the concurrent run's.
//!
//! False alarms are guarded against by leaving out of the comparison whatever is not a
//! function of the calls: a method whose text differed between two sequential runs of the same
//! calls (random ids, timestamps, `HashMap` iteration order) is left out everywhere, and so is
//! the final state when its text differed; so is a call whose result has no `Debug` text, and
//! a call of a method whose answer is approximate by the type's contract (its doc comment says
//! so, or the configuration: `analysis::Method::approximate`). [`ResultsCheck::left_out`] says
//! what was left out and why; those methods are still covered by the panic oracle.
//!
//! Accepting is cheap: linearizations are tried one at a time, each run once and a second
//! time only if it does not match outright, and the first that matches ends the check. Only
//! on the way to a violation are more runs made (the prefix alone twice, every linearization
//! tried up to 2 + [`ResultsConfig::extra_runs`] runs, the closest `extra_runs` more at each
//! later check) to catch text that changes from run to run. Sequential outcomes are kept per test in [`SequentialOutcomes`], so a confirmation
//! re-run does not run them again.
//!
//! Everything here is pure: runs are made by the caller's closure (the executor sends
//! `Request::Sequential` with the order; an empty order runs the prefix alone).

use crate::protocol::{Event, Outcome, Response};
use crate::reproducer::SKIPPED;
use crate::verdict::linearizations;
use analysis::{Approximation, Model};
use generator::{Call, TestCase};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Settings of the results oracle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultsConfig {
    /// Most linearizations tried for one test; a test with more whose first ones all differ
    /// is inconclusive, not a violation. Suffixes of five calls each have 252.
    pub max_linearizations: usize,
    /// Extra sequential runs of every linearization tried before a violation is declared; the
    /// closest gets as many more at each later check of the same test (so confirmations add
    /// evidence).
    pub extra_runs: u32,
    /// Methods whose results are never compared (configured by the user, e.g. `try_lock`
    /// style methods that may fail under contention by design).
    pub ignored_methods: BTreeSet<String>,
    /// Per method, the methods beside which its answers are not compared: its calls in a test
    /// whose threads call one of them are left out (`cargo covcon mutants`' baseline:
    /// concurrent-queue's `is_full` answers `false` while a `force_push` on the full queue is
    /// half done, which leaves `is_full` out beside `force_push`, not in every test).
    pub ignored_beside: BTreeMap<String, BTreeSet<String>>,
    /// The methods beside which the final state is not compared (as [`Self::ignored_beside`]).
    pub state_ignored_beside: BTreeSet<String>,
    /// The methods beside which nothing is compared: a test whose threads call one of them is
    /// not judged by this oracle, its panics and deadlocks still count (`cargo covcon
    /// mutants`' baseline: concurrent-queue 2.5.0's `force_push` on a full queue disturbs the
    /// answers of `is_full`, `is_empty`, `len`, `push` and `close` beside it, one at a time).
    pub unjudged_beside: BTreeSet<String>,
    /// The instances, as [`instance_text`] writes their constructor calls (`bounded(1)`), in
    /// whose tests nothing is compared: a flavour of the type the code as written gives
    /// results no order gives in (`cargo covcon mutants`' baseline: concurrent-queue 2.5.0's
    /// one-slot queue answers `Full` to a push while a pop is half done).
    pub unjudged_instances: BTreeSet<String>,
    /// Whether the final state is compared (a type whose `Debug` shows schedule-dependent
    /// counters, such as spins or contended acquisitions, may turn it off).
    pub compare_final_state: bool,
    /// Per type path, the methods whose answers are approximate by the type's contract, and
    /// why: their results are never compared in that type's tests (each call is still made,
    /// and its panics and deadlocks still count). Read from the model
    /// ([`ResultsConfig::learn_contracts`], which the executor calls).
    pub approximate: BTreeMap<String, BTreeMap<String, Approximation>>,
    /// Per type path, the methods whose answer can hold the object after the call, until it
    /// is dropped (`analysis::Method::holds`: `lock() -> MutexGuard<T>`). In a test that makes
    /// such a call no call's answer is compared: while the answer lived, the other thread may
    /// have found the object locked or busy (`try_lock` answering `None`, `is_locked` true),
    /// which no order of whole calls gives. The final state still is compared. Read from the
    /// model ([`ResultsConfig::learn_contracts`]).
    pub holding: BTreeMap<String, BTreeSet<String>>,
    /// Per type path, the methods whose answer a test drives item by item
    /// (`analysis::Method::iterates`): the other thread may see the type part way through
    /// (a draining iterator's `len` beside it), so, as for [`ResultsConfig::holding`], a test
    /// that calls one compares only its final state.
    pub driven: BTreeMap<String, BTreeSet<String>>,
    /// Per type path, why its contents are approximate by its contract
    /// (`analysis::Approximation::TypeDoc`: a cache bounded "best-effort" by a replacement
    /// policy): its final state is not compared either.
    pub approximate_state: BTreeMap<String, Approximation>,
    /// Per type path, the methods whose doc says concurrent calls on one key are coalesced
    /// into one evaluation of their closure (`analysis::Method::coalesces`), each with the
    /// kind of answer its closure gives ([`closure_shape`]: moka coalesces a `get_with` with
    /// a `get_with_if`, but a `try_get_with` only with calls whose closures return a `Result`
    /// of the same error type, "as long as these closures return the same error type"). Such
    /// a call may answer what an overlapping call of such a method with the same shape on the
    /// same key answered; beside one of another shape on that key, both evaluate their own
    /// closures, which no order of whole calls gives, and neither answer is compared.
    pub coalescing: BTreeMap<String, BTreeMap<String, ClosureShape>>,
    /// Per type path, the methods that hand out a handle onto the object (`Db::open_tree`
    /// answering a `Tree` the test calls methods on, `analysis::Via::from`), with the handle's
    /// type: their answers are not compared. A handle shares the object's state, and its text
    /// is read after the call returns, when the other thread may have changed that state
    /// (sled's `Tree` prints the page cache's next page id).
    pub handing_out: BTreeMap<String, BTreeMap<String, String>>,
    /// Per type path, the methods whose doc says they fail when they find a lock held
    /// (`analysis::Method::contended`), with the sentence that says so: a test in which such
    /// a call answered a failure (`None`, `false`, `Err(..)`) is not judged; their other
    /// answers are compared.
    pub contended: BTreeMap<String, BTreeMap<String, String>>,
    /// Per type path, the methods whose answer is an opaque key
    /// (`analysis::TypeModel::key_answers`: one of the type's own type parameters that tests
    /// only hand back). Their answers are compared up to a consistent renaming of keys
    /// ([`renamed_keys`]): lasso's `ThreadedRodeo` numbers keys before they resolve, in no
    /// order across its shards, so two threads' interns may get keys 1 and 0 where every
    /// order of whole calls gives 0 and 1; which calls answered the same key still counts.
    pub keys: BTreeMap<String, BTreeSet<String>>,
    /// Per type path, the constructors whose doc says what they build pairs concurrent calls
    /// up (`analysis::Constructor::rendezvous`: a zero-capacity channel), with the sentence
    /// that says so: a test whose instance one of them built is not judged by this oracle (a
    /// `try_send` that met a waiting `recv_timeout` answers `Ok` beside the receive's message,
    /// where each alone finds no partner in every order); its panics and deadlocks still count.
    pub rendezvous: BTreeMap<String, BTreeMap<String, String>>,
    /// The names of the model's thread-safe types, as a derived `Debug` writes them
    /// (`Incinerator`, `ThreadLocal`): inside the text of another type's answer or final
    /// state, such a value's text is not compared ([`hide_objects`]). It is the state of a
    /// concurrent helper the compared value holds, which an overlap of the two threads'
    /// calls changes without changing what the calls answer: lockfree's `Map` prints its
    /// `Incinerator`, a garbage list that keeps a node removed while the other thread was
    /// paused and drops it at once in every order. Read from the model
    /// ([`ResultsConfig::learn_contracts`]).
    pub inner_objects: BTreeSet<String>,
}

impl Default for ResultsConfig {
    fn default() -> ResultsConfig {
        ResultsConfig {
            max_linearizations: 252,
            extra_runs: 4,
            ignored_methods: BTreeSet::new(),
            ignored_beside: BTreeMap::new(),
            state_ignored_beside: BTreeSet::new(),
            unjudged_beside: BTreeSet::new(),
            unjudged_instances: BTreeSet::new(),
            compare_final_state: true,
            approximate: BTreeMap::new(),
            holding: BTreeMap::new(),
            driven: BTreeMap::new(),
            approximate_state: BTreeMap::new(),
            coalescing: BTreeMap::new(),
            handing_out: BTreeMap::new(),
            contended: BTreeMap::new(),
            keys: BTreeMap::new(),
            rendezvous: BTreeMap::new(),
            inner_objects: BTreeSet::new(),
        }
    }
}

impl ResultsConfig {
    /// Adds the methods of `model`'s types whose answers are approximate
    /// (`analysis::Method::approximate`) to [`ResultsConfig::approximate`], and those whose
    /// answers hold the object (`analysis::Method::holds`) to [`ResultsConfig::holding`].
    pub fn learn_contracts(&mut self, model: &Model) {
        for t in &model.types {
            self.inner_objects.insert(debug_name(&t.path).to_string());
            let keys = t.key_answers();
            if !keys.is_empty() {
                self.keys.insert(t.path.clone(), keys);
            }
            for c in &t.constructors {
                if let Some(line) = &c.rendezvous {
                    self.rendezvous
                        .entry(t.path.clone())
                        .or_default()
                        .insert(c.name.clone(), line.clone());
                }
            }
            for m in &t.methods {
                if let Some(
                    why @ (Approximation::TypeDoc { .. } | Approximation::CrateDoc { .. }),
                ) = &m.approximate
                {
                    self.approximate_state.insert(t.path.clone(), why.clone());
                }
                if let Some(why) = &m.approximate {
                    self.approximate
                        .entry(t.path.clone())
                        .or_default()
                        .insert(m.name.clone(), why.clone());
                }
                if m.holds {
                    self.holding
                        .entry(t.path.clone())
                        .or_default()
                        .insert(m.name.clone());
                }
                if m.coalesces.is_some() {
                    self.coalescing
                        .entry(t.path.clone())
                        .or_default()
                        .insert(m.name.clone(), closure_shape(m));
                }
                if let Some(line) = &m.contended {
                    self.contended
                        .entry(t.path.clone())
                        .or_default()
                        .insert(m.name.clone(), line.clone());
                }
                if m.iterates {
                    self.driven
                        .entry(t.path.clone())
                        .or_default()
                        .insert(m.name.clone());
                }
                // The type's own handle makers (`Db::open_tree`) and a handle's method that
                // hands out a type in turn (`Config`'s `Db::open_tree`), as the codegen
                // answers them by their variant.
                if let Some(handed) = t.hands_out(&m.name) {
                    self.handing_out
                        .entry(t.path.clone())
                        .or_default()
                        .insert(m.name.clone(), handed.ty);
                }
            }
        }
    }

    /// The names whose values' bodies are hidden in `test`'s texts ([`Hidden`]).
    fn hidden_in<'a>(&'a self, test: &'a TestCase) -> Hidden<'a> {
        Hidden {
            names: &self.inner_objects,
            own: debug_name(&test.type_path),
        }
    }

    /// Whether the final state of `test`'s runs is compared: of its type, and beside its calls
    /// ([`Self::state_ignored_beside`]).
    fn compares_state(&self, test: &TestCase) -> bool {
        self.compare_final_state
            && !self.approximate_state.contains_key(&test.type_path)
            && !calls_one_of(test, &self.state_ignored_beside)
    }

    /// Why the final state of `concurrent`, a run of `test`, is not compared either: a call's
    /// answer held the object ([`Self::held_by`]) and a call answered a failure
    /// ([`failed_under_hold`]).
    fn state_held_by(&self, test: &TestCase, concurrent: &Response) -> Option<LeftOutReason> {
        self.held_by(test)
            .filter(|_| failed_under_hold(test, concurrent))
    }

    /// Why no call's answer of `test` is compared: the first of its suffix calls whose answer
    /// holds the object ([`ResultsConfig::holding`]) or is driven ([`ResultsConfig::driven`]).
    fn held_by(&self, test: &TestCase) -> Option<LeftOutReason> {
        let empty = BTreeSet::new();
        let holding = self.holding.get(&test.type_path).unwrap_or(&empty);
        let driven = self.driven.get(&test.type_path).unwrap_or(&empty);
        test.threads.iter().flatten().find_map(|call| {
            let method = call.method.clone();
            if holding.contains(&call.method) {
                Some(LeftOutReason::HeldBy { method })
            } else if driven.contains(&call.method) {
                Some(LeftOutReason::DrivenBy { method })
            } else {
                None
            }
        })
    }

    /// Whether call `index` of thread `thread` answered, in the concurrent run, what a call
    /// of the other thread answered there, both calls of methods that coalesce concurrent
    /// calls on one key with closures of the same shape ([`ResultsConfig::coalescing`]) and
    /// on the same key (their first argument): the call waited for the other's closure, as
    /// their contract allows. Or the other thread calls such a method of another shape on that
    /// key: the two are not coalesced, and each may answer its own closure's value.
    fn coalesced(
        &self,
        test: &TestCase,
        concurrent: &Response,
        thread: usize,
        index: usize,
    ) -> bool {
        let Some(methods) = self.coalescing.get(&test.type_path) else {
            return false;
        };
        let call = &test.threads[thread][index];
        let Some(shape) = methods.get(&call.method) else {
            return false;
        };
        let answer = result(concurrent, thread, index);
        let other = 1 - thread;
        test.threads[other].iter().enumerate().any(|(j, c)| {
            let Some(other_shape) = methods.get(&c.method) else {
                return false;
            };
            c.receiver == call.receiver
                && !c.args.is_empty()
                && c.args.first() == call.args.first()
                && (other_shape != shape
                    || (answer.is_some() && result(concurrent, other, j) == answer))
        })
    }

    /// `test` rewritten as its coalesced calls ran: each call that answered what a call of
    /// the other thread answered, both of one coalescing method shape on one key
    /// ([`Self::coalesced`]), waited for one closure of the two, as the contract says, so the
    /// call's effect, and what later calls see, is that of a call with that closure. Which of
    /// the two ran is not known, so each pair gives two rewrites (the second call takes the
    /// first's closure, or the first the second's), and every combination of the first
    /// [`MOST_COALESCED_PAIRS`] pairs is answered. Empty when no call was coalesced so, or the
    /// two closures are the same anyway.
    ///
    /// moka 0.9.6: `optionally_get_with(3, || None)` ∥ `optionally_get_with(3, || Some(0));
    /// optionally_get_with(3, || Some(2))`: the second call waited for the first's closure and
    /// answered `None`, so the third ran its own and answered `Some(2)`, which no order of the
    /// calls as written gives (each has the second insert 0), and the rewrite where the second
    /// call has `|| None` gives.
    pub fn coalesced_variants(&self, test: &TestCase, concurrent: &Response) -> Vec<TestCase> {
        let Some(methods) = self.coalescing.get(&test.type_path) else {
            return Vec::new();
        };
        let closure = |call: &Call| {
            call.args
                .iter()
                .position(|a| matches!(a, generator::Value::Closure(_)))
        };
        // (thread 0's call, thread 1's call, each one's closure argument).
        let mut pairs: Vec<((usize, usize), (usize, usize))> = Vec::new();
        let mut taken = BTreeSet::new();
        for (i, first) in test.threads[0].iter().enumerate() {
            let (Some(shape), Some(answer), Some(mine)) = (
                methods.get(&first.method),
                result(concurrent, 0, i),
                closure(first),
            ) else {
                continue;
            };
            let partner = test.threads[1].iter().enumerate().find_map(|(j, second)| {
                let theirs = closure(second)?;
                (!taken.contains(&j)
                    && methods.get(&second.method) == Some(shape)
                    && second.receiver == first.receiver
                    && !second.args.is_empty()
                    && second.args.first() == first.args.first()
                    && result(concurrent, 1, j) == Some(answer)
                    && second.args[theirs] != first.args[mine])
                    .then_some((j, theirs))
            });
            if let Some((j, theirs)) = partner {
                taken.insert(j);
                pairs.push(((i, mine), (j, theirs)));
            }
        }
        pairs.truncate(MOST_COALESCED_PAIRS);
        if pairs.is_empty() {
            return Vec::new();
        }
        (0..1u32 << pairs.len())
            .map(|choice| {
                let mut variant = test.clone();
                for (n, ((i, mine), (j, theirs))) in pairs.iter().enumerate() {
                    if choice & (1 << n) == 0 {
                        variant.threads[1][*j].args[*theirs] =
                            test.threads[0][*i].args[*mine].clone();
                    } else {
                        variant.threads[0][*i].args[*mine] =
                            test.threads[1][*j].args[*theirs].clone();
                    }
                }
                variant
            })
            .collect()
    }

    /// A method of [`ResultsConfig::unjudged_beside`] one of `test`'s threads calls.
    fn unjudged_call(&self, test: &TestCase) -> Option<String> {
        test.threads
            .iter()
            .flatten()
            .find(|call| self.unjudged_beside.contains(&call.method))
            .map(|call| call.method.clone())
    }

    /// An instance of `test` built by a constructor whose doc says what it builds pairs
    /// concurrent calls up ([`ResultsConfig::rendezvous`]): the constructor and the sentence.
    fn rendezvous_instance(&self, test: &TestCase) -> Option<(String, String)> {
        let constructors = self.rendezvous.get(&test.type_path)?;
        test.instances.iter().find_map(|call| {
            let line = constructors.get(&call.method)?;
            Some((call.method.clone(), line.clone()))
        })
    }

    /// A suffix call of `test` whose method's doc says it is not atomic
    /// (`Approximation::NotAtomic`), with the sentence that says so.
    fn not_atomic_call(&self, test: &TestCase) -> Option<(String, String)> {
        let methods = self.approximate.get(&test.type_path)?;
        test.threads
            .iter()
            .flatten()
            .find_map(|call| match methods.get(&call.method)? {
                Approximation::NotAtomic { line } => Some((call.method.clone(), line.clone())),
                _ => None,
            })
    }

    /// A suffix call of `test` whose method fails when it finds a lock held
    /// ([`ResultsConfig::contended`]) and that answered a failure in `concurrent`: the
    /// method, its answer and the doc's sentence.
    fn contended_failure<'r>(
        &self,
        test: &TestCase,
        concurrent: &'r Response,
    ) -> Option<(String, &'r str, String)> {
        let methods = self.contended.get(&test.type_path)?;
        suffix_answers(test, concurrent).find_map(|(call, text)| {
            let line = methods.get(&call.method)?;
            let failed = matches!(text, "None" | "false") || text.starts_with("Err(");
            failed.then(|| (call.method.clone(), text, line.clone()))
        })
    }

    /// Why the results of `method`'s calls in `test` are not compared: beside one of the
    /// test's calls ([`Self::ignored_beside`]), or as [`Self::not_compared`] says.
    fn not_compared_in(&self, test: &TestCase, method: &str) -> Option<LeftOutReason> {
        if self
            .ignored_beside
            .get(method)
            .is_some_and(|beside| calls_one_of(test, beside))
        {
            return Some(LeftOutReason::Ignored);
        }
        self.not_compared(&test.type_path, method)
    }

    /// Why the results of `method`'s calls in tests of the type at `type_path` are never
    /// compared, when the configuration or the type's contract says so.
    fn not_compared(&self, type_path: &str, method: &str) -> Option<LeftOutReason> {
        if self.ignored_methods.contains(method) {
            return Some(LeftOutReason::Ignored);
        }
        if let Some(handle) = self.handing_out.get(type_path).and_then(|m| m.get(method)) {
            return Some(LeftOutReason::HandsOut {
                handle: handle.clone(),
            });
        }
        let why = self.approximate.get(type_path)?.get(method)?;
        Some(LeftOutReason::Approximate { why: why.clone() })
    }
}

/// The constructor calls that built `test`'s instances, as text: `bounded(1)`, `new(); new()`.
pub fn instance_text(test: &TestCase) -> String {
    test.instances
        .iter()
        .map(|c| {
            let args: Vec<String> = c.args.iter().map(ToString::to_string).collect();
            format!("{}({})", c.method, args.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether one of `test`'s threads calls one of `methods`.
fn calls_one_of(test: &TestCase, methods: &BTreeSet<String>) -> bool {
    !methods.is_empty()
        && test
            .threads
            .iter()
            .flatten()
            .any(|call| methods.contains(&call.method))
}

/// What the results oracle found, with what it left out and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultsCheck {
    pub verdict: ResultsVerdict,
    /// Parts of the runs' output left out of the comparison, and why; sorted, final state last.
    pub left_out: Vec<LeftOut>,
    /// Sequential runs made by this check (runs cached from earlier checks not counted).
    pub runs: u32,
    /// Linearizations compared with the concurrent run.
    pub linearizations: u32,
}

/// The results oracle's decision on one concurrent run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResultsVerdict {
    /// Not checked: the concurrent run did not pass (the panic oracle judges it), or the test
    /// has no suffix calls.
    NotChecked { reason: String },
    /// This linearization's results and final state match the concurrent run's.
    Linearizable { order: Vec<(u8, u32)> },
    /// No decision: no linearization passed sequentially (a call that blocks or panics when
    /// run alone), or there were too many linearizations to try them all.
    Inconclusive { reason: String },
    /// No linearization matches: a thread-safety violation.
    Violation(ResultsViolation),
}

/// A results violation, for the report: the observed results next to the closest
/// linearization's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultsViolation {
    /// The linearization whose results differ from the concurrent run's in the fewest places.
    pub closest: Vec<(u8, u32)>,
    /// Where they differ, in thread order, final state last.
    pub differences: Vec<Difference>,
}

/// One place where the concurrent run's output differs from a linearization's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    pub place: Place,
    /// Debug text in the concurrent run.
    pub observed: String,
    /// Debug text in the linearization's sequential run.
    pub expected: String,
}

/// A compared part of a run's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Place {
    /// The return value of call `index` of suffix `thread` (both from 0).
    Call {
        thread: u8,
        index: u32,
        method: String,
    },
    /// The `Debug` text of instance 0 after both threads finished.
    FinalState,
}

/// Something left out of the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// A method name, or `None` for the final state.
    pub method: Option<String>,
    pub reason: LeftOutReason,
}

/// Why something was left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LeftOutReason {
    /// The concurrent run has no `Debug` text for it (the type does not implement `Debug`).
    NoDebug,
    /// Its text differed between two sequential runs of the same calls.
    Unstable { first: String, second: String },
    /// The configuration says so ([`ResultsConfig::ignored_methods`],
    /// [`ResultsConfig::compare_final_state`]).
    Ignored,
    /// The method's answer is approximate by the type's contract
    /// ([`ResultsConfig::approximate`]): its doc says so, or the configuration does.
    Approximate { why: Approximation },
    /// A call of the test (of `method`) answers a value that holds the object until it is
    /// dropped ([`ResultsConfig::holding`]).
    HeldBy { method: String },
    /// A call of the test (of `method`) answers an iterator the test drives item by item
    /// ([`ResultsConfig::driven`]).
    DrivenBy { method: String },
    /// The method answers a handle onto the object ([`ResultsConfig::handing_out`]).
    HandsOut { handle: String },
}

/// The sequential runs made for one test, kept so that checking the same test again
/// (confirmation re-runs) does not run them again. Given another test, it starts over.
#[derive(Debug, Clone, Default)]
pub struct SequentialOutcomes {
    /// The calls the runs belong to.
    calls: Option<TestCalls>,
    /// Runs per order; the empty order is the prefix alone. Events are dropped.
    runs: BTreeMap<Vec<(u8, u32)>, Vec<Response>>,
    /// The first text seen for each prefix call, in any run.
    prefix_seen: Vec<Option<String>>,
    /// Methods whose text changed between runs of the same calls, with the first two texts.
    unstable_methods: BTreeMap<String, (String, String)>,
    unstable_state: Option<(String, String)>,
    /// Starts of orders whose run panicked or blocked at their last call: a linearization
    /// starting the same way would stop there too (sequential runs are deterministic), so it
    /// is not run.
    failing_starts: Vec<Vec<(u8, u32)>>,
    /// Orders also run with each call on the thread it ran on concurrently
    /// ([`Speed::OwnThreads`]).
    on_own_threads: BTreeSet<Vec<(u8, u32)>>,
    /// The sequential runs of this test's rewrites with coalesced calls' closures as they ran
    /// ([`ResultsConfig::coalesced_variants`]), each its own, kept as this test's are: a
    /// confirmation re-run of a moka test checks up to eight rewrites again, each of up to
    /// 252 orders run a few times over, which then run only the closest order's extra runs.
    variants: Vec<SequentialOutcomes>,
}

#[derive(Debug, Clone, PartialEq)]
struct TestCalls {
    instances: Vec<Call>,
    handles: Vec<Call>,
    prefix: Vec<Call>,
    threads: [Vec<Call>; 2],
}

impl TestCalls {
    fn of(test: &TestCase) -> TestCalls {
        TestCalls {
            instances: test.instances.clone(),
            handles: test.handles.clone(),
            prefix: test.prefix.clone(),
            threads: test.threads.clone(),
        }
    }
}

impl SequentialOutcomes {
    pub fn new() -> SequentialOutcomes {
        SequentialOutcomes::default()
    }

    /// Sequential runs held.
    pub fn len(&self) -> usize {
        self.runs.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The runs held for `variant`, a rewrite of this test's calls
    /// ([`ResultsConfig::coalesced_variants`]), taken out to check it with; give them back
    /// with [`SequentialOutcomes::keep_variant`]. None yet: a fresh set.
    pub fn take_variant(&mut self, variant: &TestCase) -> SequentialOutcomes {
        let calls = TestCalls::of(variant);
        match self
            .variants
            .iter()
            .position(|v| v.calls.as_ref() == Some(&calls))
        {
            Some(at) => self.variants.swap_remove(at),
            None => SequentialOutcomes::new(),
        }
    }

    /// Keeps the runs of a variant ([`SequentialOutcomes::take_variant`]) with this test's.
    pub fn keep_variant(&mut self, variant: SequentialOutcomes) {
        if variant.calls.is_some() {
            self.variants.push(variant);
        }
    }

    /// Starts over unless the runs held are of `test`'s calls.
    fn for_test(&mut self, test: &TestCase) {
        let calls = TestCalls::of(test);
        if self.calls.as_ref() != Some(&calls) {
            *self = SequentialOutcomes {
                calls: Some(calls),
                ..SequentialOutcomes::default()
            };
        }
    }

    /// Whether a run of `order` is known to stop before its end without being run.
    fn known_to_stop(&self, order: &[(u8, u32)]) -> bool {
        self.failing_starts
            .iter()
            .any(|start| start.len() < order.len() && order.starts_with(start))
    }

    /// Whether the runs held cannot show text that differs between worker processes: none of
    /// them was made by the concurrent run's worker process `worker` (known: not 0), and all
    /// were made by one other process.
    fn all_in_one_other_process(&self, worker: u64) -> bool {
        let mut workers = self.runs.values().flatten().map(|run| run.worker);
        let Some(first) = workers.next() else {
            return false;
        };
        worker != 0 && first != worker && workers.all(|w| w == first)
    }

    fn runs_of(&self, order: &[(u8, u32)]) -> &[Response] {
        self.runs.get(order).map_or(&[], Vec::as_slice)
    }

    /// Whether `order` ran, never passed, and at least once only ran out of time (a run
    /// still going at its timeout, not blocked for good): what it answers is unknown, so it
    /// cannot count against the concurrent run. On a starved machine a sequential run of a
    /// slow type (files, sleeps) can end so.
    fn unfinished(&self, order: &[(u8, u32)]) -> bool {
        let runs = self.runs_of(order);
        !runs.iter().any(|r| r.outcome == Outcome::Passed)
            && runs.iter().any(|r| r.outcome.over_time())
    }

    /// Keeps a sequential run of `order` and learns which texts change between runs.
    fn record(&mut self, test: &TestCase, order: &[(u8, u32)], mut response: Response) {
        response.events = Vec::new();
        self.learn_from_prefix(test, &response.prefix_results);
        let earlier = self.runs.get(order).map_or(&[][..], Vec::as_slice);
        // Texts that differ between runs only in the order of a map's entries count as
        // varying here, as before (a reproducer compares whole texts); matching forgives it.
        let mut unstable = Vec::new();
        let mut unstable_state = None;
        for before in earlier {
            for (t, calls) in test.threads.iter().enumerate() {
                for (i, call) in calls.iter().enumerate() {
                    if let Some(pair) =
                        changed_in_order(result(before, t, i), result(&response, t, i))
                    {
                        unstable.push((call.method.clone(), pair));
                    }
                }
            }
            let both_passed =
                before.outcome == Outcome::Passed && response.outcome == Outcome::Passed;
            if both_passed {
                if let Some(pair) = changed_in_order(
                    before.final_state.as_deref(),
                    response.final_state.as_deref(),
                ) {
                    unstable_state.get_or_insert(pair);
                }
            }
        }
        for (method, pair) in unstable {
            self.unstable_methods.entry(method).or_insert(pair);
        }
        if self.unstable_state.is_none() {
            self.unstable_state = unstable_state;
        }
        self.runs.entry(order.to_vec()).or_default().push(response);
    }

    /// Prefix calls are the same calls in the same order in every run, concurrent ones
    /// included: any change in their text is instability.
    fn learn_from_prefix(&mut self, test: &TestCase, prefix_results: &[Option<String>]) {
        for (i, call) in test.prefix.iter().enumerate() {
            let Some(text) = prefix_results.get(i).cloned().flatten() else {
                continue;
            };
            if self.prefix_seen.len() <= i {
                self.prefix_seen.resize(i + 1, None);
            }
            match &self.prefix_seen[i] {
                None => self.prefix_seen[i] = Some(text),
                Some(first) if *first != text => {
                    let pair = (first.clone(), text);
                    self.unstable_methods
                        .entry(call.method.clone())
                        .or_insert(pair);
                }
                Some(_) => {}
            }
        }
    }

    /// Where the concurrent run differs from the closest passing run of `order`, with what is
    /// known to be unstable and what `config` ignores left out; `None` when no run of `order`
    /// passed.
    fn differences(
        &self,
        test: &TestCase,
        concurrent: &Response,
        order: &[(u8, u32)],
        config: &ResultsConfig,
    ) -> Option<Vec<Difference>> {
        self.runs_of(order)
            .iter()
            .filter(|run| run.outcome == Outcome::Passed)
            .map(|run| self.compare(test, concurrent, run, config))
            .min_by_key(Vec::len)
    }

    fn compare(
        &self,
        test: &TestCase,
        concurrent: &Response,
        sequential: &Response,
        config: &ResultsConfig,
    ) -> Vec<Difference> {
        let mut out = Vec::new();
        let mut coalesced = false;
        let held = config.held_by(test).is_some();
        let keyed = config.keys.get(&test.type_path);
        // The prefix is the same in both runs: a key either's prefix answered keeps its text.
        let fixed: Vec<String> = keyed.map_or_else(Vec::new, |keyed| {
            let mut fixed = prefix_keys(test, concurrent, keyed);
            fixed.extend(prefix_keys(test, sequential, keyed));
            fixed
        });
        // Only the compared calls' keys are named, as the reproducer names them
        // (`allowed_outcomes`): a left-out call's key (its method's text varies) would shift
        // the names of the others.
        let compared = |call: &Call| {
            !held
                && config.not_compared_in(test, &call.method).is_none()
                && !self.unstable_methods.contains_key(&call.method)
        };
        let (observed_keys, observed_names) =
            renamed_keys(test, concurrent, keyed, &fixed, &compared);
        let (expected_keys, expected_names) =
            renamed_keys(test, sequential, keyed, &fixed, &compared);
        fn text<'a>(
            renamed: &'a BTreeMap<(usize, usize), String>,
            response: &'a Response,
            t: usize,
            i: usize,
        ) -> Option<&'a str> {
            renamed
                .get(&(t, i))
                .map(String::as_str)
                .or_else(|| result(response, t, i))
        }
        let hidden = config.hidden_in(test);
        fn hide<'a>(text: Option<&'a str>, hidden: &Hidden) -> Option<Cow<'a, str>> {
            text.map(|text| hide_objects(text, hidden))
        }
        for (t, calls) in test.threads.iter().enumerate() {
            for (i, call) in calls.iter().enumerate() {
                if !compared(call) {
                    continue;
                }
                if let Some((observed, expected)) = changed(
                    hide(text(&observed_keys, concurrent, t, i), &hidden).as_deref(),
                    hide(text(&expected_keys, sequential, t, i), &hidden).as_deref(),
                ) {
                    // Skipped because its thread kept no value for it (`open` failed to take
                    // the file lock the other thread's `open` held): whether the value was
                    // there is its thread's keep's answer, compared or left out on its own.
                    if observed == SKIPPED || expected == SKIPPED {
                        continue;
                    }
                    if config.coalesced(test, concurrent, t, i) {
                        // Its own closure did not run (or ran beside the other's): its effect
                        // is not the one the order gives either.
                        coalesced = true;
                        continue;
                    }
                    // A renamed key is shown beside the key it renames.
                    let shown = |renamed: String, response| match result(response, t, i) {
                        Some(raw) if raw != renamed => format!("{raw} ({renamed})"),
                        _ => renamed,
                    };
                    out.push(Difference {
                        place: Place::Call {
                            thread: t as u8,
                            index: i as u32,
                            method: call.method.clone(),
                        },
                        observed: shown(observed, concurrent),
                        expected: shown(expected, sequential),
                    });
                }
            }
        }
        if config.compares_state(test)
            && self.unstable_state.is_none()
            && !coalesced
            && config.state_held_by(test, concurrent).is_none()
        {
            let observed_state = concurrent
                .final_state
                .as_deref()
                .map(|text| rename_keys_in_state(text, &observed_names));
            let expected_state = sequential
                .final_state
                .as_deref()
                .map(|text| rename_keys_in_state(text, &expected_names));
            if let Some((observed, expected)) = changed(
                hide(observed_state.as_deref(), &hidden).as_deref(),
                hide(expected_state.as_deref(), &hidden).as_deref(),
            ) {
                out.push(Difference {
                    place: Place::FinalState,
                    observed,
                    expected,
                });
            }
        }
        out
    }

    /// What is left out when comparing with `concurrent`.
    fn left_out(
        &self,
        test: &TestCase,
        concurrent: &Response,
        config: &ResultsConfig,
    ) -> Vec<LeftOut> {
        let mut methods: BTreeMap<String, LeftOutReason> = self
            .unstable_methods
            .iter()
            .map(|(method, (first, second))| {
                let reason = LeftOutReason::Unstable {
                    first: first.clone(),
                    second: second.clone(),
                };
                (method.clone(), reason)
            })
            .collect();
        let held = config.held_by(test);
        for (t, calls) in test.threads.iter().enumerate() {
            for (i, call) in calls.iter().enumerate() {
                if let Some(reason) = &held {
                    methods.insert(call.method.clone(), reason.clone());
                } else if let Some(reason) = config.not_compared_in(test, &call.method) {
                    methods.insert(call.method.clone(), reason);
                } else if result(concurrent, t, i).is_none() {
                    methods
                        .entry(call.method.clone())
                        .or_insert(LeftOutReason::NoDebug);
                }
            }
        }
        let mut out: Vec<LeftOut> = methods
            .into_iter()
            .map(|(method, reason)| LeftOut {
                method: Some(method),
                reason,
            })
            .collect();
        let state_held = config.state_held_by(test, concurrent);
        let state = match (&self.unstable_state, &concurrent.final_state) {
            _ if !config.compare_final_state
                || calls_one_of(test, &config.state_ignored_beside) =>
            {
                Some(LeftOutReason::Ignored)
            }
            _ if !config.compares_state(test) => config
                .approximate_state
                .get(&test.type_path)
                .map(|why| LeftOutReason::Approximate { why: why.clone() }),
            _ if state_held.is_some() => state_held,
            (Some((first, second)), _) => Some(LeftOutReason::Unstable {
                first: first.clone(),
                second: second.clone(),
            }),
            (None, None) => Some(LeftOutReason::NoDebug),
            (None, Some(_)) => None,
        };
        out.extend(state.map(|reason| LeftOut {
            method: None,
            reason,
        }));
        out
    }
}

/// Checks the results of `concurrent`, a concurrent run of `test`, against its
/// linearizations. `run` makes one sequential run of the given order (an empty order runs
/// the prefix alone) on a fresh instance; `outcomes` keeps those runs for later checks of the
/// same test. Without a deadline: the campaign judges within its time
/// ([`check_results_until`]).
#[cfg(test)]
pub(crate) fn check_results(
    test: &TestCase,
    concurrent: &Response,
    outcomes: &mut SequentialOutcomes,
    config: &ResultsConfig,
    run: impl FnMut(&[(u8, u32)], Speed) -> Response,
) -> ResultsCheck {
    check_results_until(test, concurrent, outcomes, config, (None, Depth::Full), run)
}

/// How far a check of results goes ([`check_results_until`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// To a verdict: a violation only once every order has been run a few times over, so
    /// that text that varies between runs of the same calls is left out.
    Full,
    /// A quick look: each order run once, and again when it does not match outright, up to
    /// the first that gives the run as it stands (`Linearizable`); none, and the check is
    /// `Inconclusive` without gathering evidence. For a test's rewrites
    /// ([`ResultsConfig::coalesced_variants`]) before any of them is checked in full: the
    /// one that explains a run is often not the first.
    FirstMatch,
}

/// How long after the campaign's deadline a verdict begun before it may go on.
pub const VERDICT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// [`check_results`], giving up ([`ResultsVerdict::Inconclusive`]) once `deadline` plus
/// [`VERDICT_GRACE`] has passed: a type whose every order answers otherwise (sharded-slab's
/// keys name the calling thread's shard) runs hundreds of sequential orders per test, and a
/// 20 s budget took 64 s.
pub fn check_results_until(
    test: &TestCase,
    concurrent: &Response,
    outcomes: &mut SequentialOutcomes,
    config: &ResultsConfig,
    (deadline, depth): (Option<std::time::Instant>, Depth),
    run: impl FnMut(&[(u8, u32)], Speed) -> Response,
) -> ResultsCheck {
    let mut check = Check {
        test,
        concurrent,
        outcomes,
        config,
        run,
        runs: 0,
        slow_left: SLOW_RUNS,
        give_up_at: deadline.map(|d| d + VERDICT_GRACE),
        cut_short: false,
        depth,
    };
    let (verdict, linearizations) = check.decide();
    ResultsCheck {
        left_out: match verdict {
            ResultsVerdict::NotChecked { .. } => Vec::new(),
            _ => check.outcomes.left_out(test, concurrent, config),
        },
        verdict,
        runs: check.runs,
        linearizations,
    }
}

/// Every outcome the linearizations of one test give, with what is left out of the
/// comparison masked: what a standalone reproducer of a results violation compares its
/// concurrent runs with ([`allowed_outcomes`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AllowedOutcomes {
    /// The suffix calls whose results are compared, as (thread, index), in thread order.
    pub calls: Vec<(u8, u32)>,
    /// Whether the final state (instance 0's `Debug` text) is compared, after the calls.
    pub final_state: bool,
    /// The distinct outcomes, each with the first linearization that gave it.
    pub outcomes: Vec<AllowedOutcome>,
    /// What is left out, and why.
    pub left_out: Vec<LeftOut>,
    /// Per compared call, whether it answers an opaque key ([`ResultsConfig::keys`]): the
    /// outcomes' texts have those keys renamed ([`rename_keys`]), and a run's texts are
    /// renamed the same way before they are compared.
    pub keys: Vec<bool>,
    /// The keys the prefix answered, which keep their text when renaming.
    pub fixed_keys: Vec<String>,
    /// The names whose values' bodies the texts have hidden ([`ResultsConfig::inner_objects`]
    /// but the type's own, [`hide_objects`]): only those some text shows, so a run's texts
    /// are hidden the same way before they are compared.
    pub hidden: Vec<String>,
}

/// One outcome a linearization gives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AllowedOutcome {
    pub order: Vec<(u8, u32)>,
    /// The texts of [`AllowedOutcomes::calls`] in that order, then the final state if compared.
    pub texts: Vec<String>,
}

/// Runs every linearization of `test` (at most [`ResultsConfig::max_linearizations`]) at
/// least twice, and the prefix alone twice, through `run` (as for [`check_results`]; runs
/// already in `outcomes` are reused), and answers the outcomes they give with whatever
/// varied between runs of the same calls masked. `None` when the test has more
/// linearizations than that, no suffix calls, or no linearization passed: then no complete
/// set of outcomes is known.
pub fn allowed_outcomes(
    test: &TestCase,
    outcomes: &mut SequentialOutcomes,
    config: &ResultsConfig,
    mut run: impl FnMut(&[(u8, u32)]) -> Response,
) -> Option<AllowedOutcomes> {
    let lens = [test.threads[0].len(), test.threads[1].len()];
    if lens == [0, 0] || count_linearizations(lens) > config.max_linearizations {
        return None;
    }
    outcomes.for_test(test);
    let mut orders = linearizations(lens, config.max_linearizations);
    orders.insert(0, Vec::new());
    for order in &orders {
        if outcomes.runs_of(order).is_empty() && outcomes.known_to_stop(order) {
            continue;
        }
        while outcomes.runs_of(order).len() < 2
            && outcomes
                .runs_of(order)
                .iter()
                .all(|r| r.outcome == Outcome::Passed)
        {
            let response = run(order);
            if let Some(start) = stopped_at(test, order, &response) {
                outcomes.failing_starts.push(start);
            }
            outcomes.record(test, order, response);
        }
    }
    let passing: Vec<(&Vec<(u8, u32)>, &Response)> = orders[1..]
        .iter()
        .flat_map(|order| outcomes.runs_of(order).iter().map(move |r| (order, r)))
        .filter(|(_, r)| r.outcome == Outcome::Passed)
        .collect();
    let &(_, sample) = passing.first()?;
    let mut calls = Vec::new();
    for (t, thread) in test.threads.iter().enumerate() {
        for (i, call) in thread.iter().enumerate() {
            let masked = config.not_compared_in(test, &call.method).is_some()
                || outcomes.unstable_methods.contains_key(&call.method)
                || passing.iter().any(|(_, r)| result(r, t, i).is_none());
            if !masked {
                calls.push((t as u8, i as u32));
            }
        }
    }
    let final_state = config.compares_state(test)
        && outcomes.unstable_state.is_none()
        && passing.iter().all(|(_, r)| r.final_state.is_some());
    let no_keys = BTreeSet::new();
    let keyed_methods = config.keys.get(&test.type_path).unwrap_or(&no_keys);
    let keys: Vec<bool> = calls
        .iter()
        .map(|&(t, i)| keyed_methods.contains(&test.threads[t as usize][i as usize].method))
        .collect();
    let fixed_keys = prefix_keys(test, sample, keyed_methods);
    let hidden = config.hidden_in(test);
    let mut shown: BTreeSet<&str> = BTreeSet::new();
    let mut allowed: Vec<AllowedOutcome> = Vec::new();
    for (order, response) in &passing {
        let mut texts: Vec<String> = calls
            .iter()
            .map(|&(t, i)| {
                result(response, t as usize, i as usize)
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        let names = rename_keys(&mut texts, &keys, &fixed_keys);
        if final_state {
            texts.extend(
                response
                    .final_state
                    .as_deref()
                    .map(|state| rename_keys_in_state(state, &names).into_owned()),
            );
        }
        for text in &mut texts {
            if let Cow::Owned(hid) = hide_objects(text, &hidden) {
                shown.extend(
                    hidden
                        .names
                        .iter()
                        .map(String::as_str)
                        .filter(|name| hidden.hides(name) && text.contains(name)),
                );
                *text = hid;
            }
        }
        if !allowed.iter().any(|a| a.texts == texts) {
            allowed.push(AllowedOutcome {
                order: order.to_vec(),
                texts,
            });
        }
    }
    let mut left_out = outcomes.left_out(test, sample, config);
    // A call masked because some passing run has no text for it is listed too.
    for (t, thread) in test.threads.iter().enumerate() {
        for (i, call) in thread.iter().enumerate() {
            let compared = calls.contains(&(t as u8, i as u32));
            let listed = left_out
                .iter()
                .any(|l| l.method.as_deref() == Some(&call.method));
            if !compared && !listed {
                left_out.push(LeftOut {
                    method: Some(call.method.clone()),
                    reason: LeftOutReason::NoDebug,
                });
            }
        }
    }
    Some(AllowedOutcomes {
        calls,
        final_state,
        outcomes: allowed,
        left_out,
        keys,
        fixed_keys,
        hidden: shown.into_iter().map(str::to_string).collect(),
    })
}

/// How fast a sequential run of the results oracle goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speed {
    /// Each call right after the one before.
    Full,
    /// A pause before each call, and before the final state is read: what an order answers
    /// when its calls take long, and what its state has become by the time a concurrent run's
    /// threads are joined. A type that reads a clock the copy does not control, or runs
    /// threads of its own (a housekeeper evicting), answers by time as well as by the calls;
    /// text that a full-speed and a slow run of the same order disagree on is left out like
    /// any other text that varies.
    Slow,
    /// Each call on the thread it ran on in the concurrent run: a type that answers by the
    /// calling thread (sharded-slab's keys name the thread's shard) gives its other answer
    /// there, and text that differs from the one-thread runs is left out as varying.
    OwnThreads,
    /// At full speed, in a worker process started for it: what a type prints that differs
    /// from process to process (governor's `QuantaClock`, calibrated when a process first
    /// reads the clock) differs from the runs made in the process before, and is left out as
    /// varying. Made when none of the test's sequential runs ran in the process of the
    /// concurrent run being judged (that worker was replaced in between: a later test of its
    /// batch timed out).
    NewWorker,
}

/// Slow runs one check makes at most, on the way to a violation only: what they show is left
/// out for every order, so a few are enough, and each costs a pause per call.
const SLOW_RUNS: u32 = 4;

struct Check<'a, R> {
    test: &'a TestCase,
    concurrent: &'a Response,
    outcomes: &'a mut SequentialOutcomes,
    config: &'a ResultsConfig,
    run: R,
    runs: u32,
    /// Slow runs still to make ([`SLOW_RUNS`]).
    slow_left: u32,
    /// When the verdict gives up, inconclusive ([`check_results_until`]).
    give_up_at: Option<std::time::Instant>,
    /// Whether it gave up part way.
    cut_short: bool,
    depth: Depth,
}

impl<R: FnMut(&[(u8, u32)], Speed) -> Response> Check<'_, R> {
    /// The verdict and how many linearizations were compared.
    fn decide(&mut self) -> (ResultsVerdict, u32) {
        if self.concurrent.outcome != Outcome::Passed {
            let reason = "the concurrent run did not pass: the panic oracle judges it".to_string();
            return (ResultsVerdict::NotChecked { reason }, 0);
        }
        if self.test.threads.iter().all(Vec::is_empty) {
            let reason = "the test has no suffix calls".to_string();
            return (ResultsVerdict::NotChecked { reason }, 0);
        }
        if self.concurrent.timed_out {
            // `None` from "the ledger stayed busy": one thread alone never finds the lock
            // held, so no linearization can give what that call answered, by its design.
            let reason = "a timed acquisition timed out or an attempt found its lock held: its \
                          call answered what only contention gives"
                .to_string();
            return (ResultsVerdict::NotChecked { reason }, 0);
        }
        if let Some(method) = self.config.unjudged_call(self.test) {
            let reason = format!(
                "the test calls `{method}`, beside which the code as written gives results no \
                 order of whole calls gives"
            );
            return (ResultsVerdict::NotChecked { reason }, 0);
        }
        if !self.config.unjudged_instances.is_empty() {
            let instance = instance_text(self.test);
            if self.config.unjudged_instances.contains(&instance) {
                let reason = format!(
                    "the instance `{instance}` gives results no order of whole calls gives as \
                     the code is written"
                );
                return (ResultsVerdict::NotChecked { reason }, 0);
            }
        }
        if let Some((constructor, line)) = self.config.rendezvous_instance(self.test) {
            let reason = format!(
                "the instance was built by `{constructor}`, whose doc says its calls pair up \
                 (\"{line}\"): a call that met its partner answers what no order of whole \
                 calls gives"
            );
            return (ResultsVerdict::NotChecked { reason }, 0);
        }
        if let Some((method, line)) = self.config.not_atomic_call(self.test) {
            let reason = format!(
                "`{method}` is not atomic by its doc (\"{line}\"): its effect interleaves with \
                 the other thread's calls, which no order of whole calls shows"
            );
            return (ResultsVerdict::NotChecked { reason }, 0);
        }
        if let Some((method, text)) = contention_answer(self.test, self.concurrent) {
            let reason = format!(
                "`{method}` answered `{text}`: what its type answers under contention, which \
                 no order of whole calls gives"
            );
            return (ResultsVerdict::NotChecked { reason }, 0);
        }
        if let Some((method, text, line)) =
            self.config.contended_failure(self.test, self.concurrent)
        {
            let reason = format!(
                "`{method}` answered `{text}`: its doc says it fails when it finds a lock held \
                 (\"{line}\"), which no order of whole calls gives"
            );
            return (ResultsVerdict::NotChecked { reason }, 0);
        }
        self.outcomes.for_test(self.test);
        self.outcomes
            .learn_from_prefix(self.test, &self.concurrent.prefix_results);
        let orders = orders_to_try(self.test, self.concurrent, self.config.max_linearizations);
        let (matching, compared) = self.first_match(&orders);
        if let Some(order) = matching {
            return (linearizable(&order), compared);
        }
        if self.cut_short {
            return (out_of_time(), compared);
        }
        if self.depth == Depth::FirstMatch {
            let reason = "no order gives the run as it stands (a first look)".to_string();
            return (ResultsVerdict::Inconclusive { reason }, compared);
        }
        self.gather_evidence(&orders);
        if self.cut_short {
            return (out_of_time(), compared);
        }
        if let Some(order) = orders.iter().find(|order| self.matches(order)) {
            return (linearizable(order), compared);
        }
        (self.final_verdict(&orders), compared)
    }

    /// Runs `orders` in turn, each once and a second time if it does not match outright,
    /// until one matches; also says how many were compared. The orders already run for this
    /// test (by an earlier check: another run of a repeated test, a confirmation's re-run)
    /// are compared first, as they stand: a match among them costs no run.
    fn first_match(&mut self, orders: &[Vec<(u8, u32)>]) -> (Option<Vec<(u8, u32)>>, u32) {
        let mut compared = 0;
        for order in orders {
            if self.outcomes.runs_of(order).is_empty() {
                continue;
            }
            compared += 1;
            if self.matches(order) {
                return (Some(order.clone()), compared);
            }
        }
        let mut compared = 0;
        for order in orders {
            if self.late() {
                self.cut_short = true;
                break;
            }
            if self.outcomes.runs_of(order).is_empty() && self.outcomes.known_to_stop(order) {
                continue;
            }
            compared += 1;
            for wanted in 1..=2 {
                let runs = self.outcomes.runs_of(order);
                if runs.len() < wanted {
                    // A run that did not pass cannot match; running it again would not help.
                    if runs.iter().any(|run| run.outcome != Outcome::Passed) {
                        break;
                    }
                    self.run_order(order);
                }
                if self.matches(order) {
                    return (Some(order.clone()), compared);
                }
            }
        }
        (None, compared)
    }

    /// On the way to a violation: the prefix alone twice, every linearization tried up to
    /// `2 + extra_runs` runs, and the closest `extra_runs` more, to catch text that changes
    /// only now and then. Every order, not only the closest: the text that varies may belong
    /// to another (a `HashMap` of two keys listed by the call that runs last prints in either
    /// order, while the closest linearization may run that call first, on an empty map). The
    /// orders are topped up once per test (a confirmation re-run finds them cached); at each
    /// later check the closest gets `extra_runs` more, so confirmations add evidence where it
    /// matters most without re-running every order each time.
    fn gather_evidence(&mut self, orders: &[Vec<(u8, u32)>]) {
        while self.outcomes.runs_of(&[]).len() < 2 {
            self.run_order(&[]);
        }
        let wanted = 2 + self.config.extra_runs as usize;
        let topped_up: Vec<bool> = orders
            .iter()
            .map(|order| self.outcomes.runs_of(order).len() >= wanted)
            .collect();
        // The first top-up of each order is slow while slow runs last (see [`Speed::Slow`]):
        // the orders come most plausible first, the closest among them.
        for order in orders {
            if self.late() {
                self.cut_short = true;
                return;
            }
            let mut first = true;
            loop {
                // A run that did not pass cannot match; running it again would not help.
                let runs = self.outcomes.runs_of(order);
                if runs.is_empty()
                    || runs.len() >= wanted
                    || runs.iter().any(|run| run.outcome != Outcome::Passed)
                {
                    break;
                }
                if std::mem::take(&mut first) {
                    self.run_evidence(order);
                } else {
                    self.run_order(order);
                }
            }
        }
        let Some(closest) = self.closest(orders) else {
            return;
        };
        let again = orders
            .iter()
            .zip(&topped_up)
            .any(|(order, &topped)| topped && *order == closest.closest);
        if again {
            for _ in 0..self.config.extra_runs {
                self.run_order(&closest.closest);
            }
        }
        // The closest once more with each call on its own thread, once per test.
        if self.outcomes.on_own_threads.insert(closest.closest.clone()) {
            self.run_order_at(&closest.closest, Speed::OwnThreads);
        }
        // Compared with runs of one other process only: the closest once more in a new one
        // (after which the runs come from two, so once per test).
        if self
            .outcomes
            .all_in_one_other_process(self.concurrent.worker)
        {
            self.run_order_at(&closest.closest, Speed::NewWorker);
        }
    }

    /// The verdict when no linearization matches.
    fn final_verdict(&self, orders: &[Vec<(u8, u32)>]) -> ResultsVerdict {
        let lens = [self.test.threads[0].len(), self.test.threads[1].len()];
        let all = count_linearizations(lens);
        let unfinished = orders
            .iter()
            .filter(|o| self.outcomes.unfinished(o))
            .count();
        match self.closest(orders) {
            None => ResultsVerdict::Inconclusive {
                reason: "no linearization passed when run sequentially".to_string(),
            },
            Some(_) if orders.len() < all => ResultsVerdict::Inconclusive {
                reason: format!(
                    "none of the first {} of {all} linearizations matches",
                    orders.len()
                ),
            },
            Some(_) if unfinished > 0 => ResultsVerdict::Inconclusive {
                reason: format!(
                    "{unfinished} of {all} linearizations only ran out of time when run \
                     sequentially: what they answer is unknown"
                ),
            },
            Some(violation) => ResultsVerdict::Violation(violation),
        }
    }

    fn run_order(&mut self, order: &[(u8, u32)]) {
        self.run_order_at(order, Speed::Full);
    }

    /// Whether the verdict is past the time it may take ([`check_results_until`]).
    fn late(&self) -> bool {
        self.give_up_at
            .is_some_and(|at| std::time::Instant::now() >= at)
    }

    /// A run of `order` on the way to a violation: slow while [`SLOW_RUNS`] last.
    fn run_evidence(&mut self, order: &[(u8, u32)]) {
        let speed = if self.slow_left > 0 {
            self.slow_left -= 1;
            Speed::Slow
        } else {
            Speed::Full
        };
        self.run_order_at(order, speed);
    }

    fn run_order_at(&mut self, order: &[(u8, u32)], speed: Speed) {
        let response = (self.run)(order, speed);
        let set_up = !matches!(
            response.outcome,
            Outcome::SetupFailed { .. } | Outcome::Panicked { thread: None, .. }
        );
        if speed == Speed::Slow && !set_up {
            // A slow run whose prefix failed (a clock-dependent prefix, now and then) says
            // nothing about the suffixes: it does not count against the slow runs.
            self.slow_left += 1;
        }
        self.runs += 1;
        if let Some(start) = stopped_at(self.test, order, &response) {
            self.outcomes.failing_starts.push(start);
        }
        self.outcomes.record(self.test, order, response);
    }

    fn matches(&self, order: &[(u8, u32)]) -> bool {
        self.outcomes
            .differences(self.test, self.concurrent, order, self.config)
            .is_some_and(|d| d.is_empty())
    }

    /// The passing linearization with the fewest differences (the first on a tie).
    fn closest(&self, orders: &[Vec<(u8, u32)>]) -> Option<ResultsViolation> {
        let mut best: Option<ResultsViolation> = None;
        for order in orders {
            let Some(differences) =
                self.outcomes
                    .differences(self.test, self.concurrent, order, self.config)
            else {
                continue;
            };
            if best
                .as_ref()
                .is_none_or(|b| differences.len() < b.differences.len())
            {
                best = Some(ResultsViolation {
                    closest: order.clone(),
                    differences,
                });
            }
        }
        best
    }
}

/// The most pairs of coalesced calls whose closures [`ResultsConfig::coalesced_variants`]
/// rewrites (two to this power rewrites, each judged by its linearizations).
const MOST_COALESCED_PAIRS: usize = 3;

/// The kind of answer a coalescing method's closure gives (moka coalesces only calls whose
/// closures agree on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosureShape {
    Value,
    Result,
    Option,
}

/// The shape of the first closure parameter of a coalescing method.
fn closure_shape(m: &analysis::Method) -> ClosureShape {
    let returns = m.params.iter().find_map(|p| match &p.kind {
        analysis::ParamKind::Closure { returns, .. } => Some(&**returns),
        _ => None,
    });
    match returns {
        Some(analysis::ParamKind::Result { .. }) => ClosureShape::Result,
        Some(analysis::ParamKind::Option { .. }) => ClosureShape::Option,
        _ => ClosureShape::Value,
    }
}

/// The verdict of a check the campaign's deadline cut short.
fn out_of_time() -> ResultsVerdict {
    ResultsVerdict::Inconclusive {
        reason: "the time budget ran out before every linearization was compared".to_string(),
    }
}

/// The linearizations to compare, most plausible first: those closest to the order in which
/// the concurrent run started its calls (fewest pairs of calls swapped), then in lexicographic
/// order. Only the first `limit` are listed, plus the observed order itself.
fn orders_to_try(test: &TestCase, concurrent: &Response, limit: usize) -> Vec<Vec<(u8, u32)>> {
    let lens = [test.threads[0].len(), test.threads[1].len()];
    let mut orders = linearizations(lens, limit.max(1));
    let Some(observed) = observed_order(lens, concurrent) else {
        return orders;
    };
    if !orders.contains(&observed) {
        orders.pop();
        orders.push(observed.clone());
    }
    plausible_first(&mut orders, &observed);
    orders
}

/// Sorts `orders` by how many pairs of calls each swaps from `observed`, ties kept in the
/// order they came in.
fn plausible_first(orders: &mut [Vec<(u8, u32)>], observed: &[(u8, u32)]) {
    let ranks = Ranks::of(observed);
    // Cached: a key per order, not one per comparison (a repeated test's every distinct
    // answer is checked, and sorting 252 orders by a recomputed key was half of a results
    // campaign's time). Stable, as `sort_by_key` is.
    orders.sort_by_cached_key(|order| ranks.swapped_pairs(order));
}

/// Where each call stands in an observed order, by thread and call: what
/// [`Ranks::swapped_pairs`] looks up, made once for all the orders compared with it.
struct Ranks([Vec<usize>; 2]);

impl Ranks {
    fn of(observed: &[(u8, u32)]) -> Ranks {
        let calls = |thread| observed.iter().filter(|(t, _)| *t == thread).count();
        let mut ranks = [vec![0; calls(0)], vec![0; calls(1)]];
        for (rank, &(thread, call)) in observed.iter().enumerate() {
            if let Some(slot) = ranks
                .get_mut(thread as usize)
                .and_then(|calls| calls.get_mut(call as usize))
            {
                *slot = rank;
            }
        }
        Ranks(ranks)
    }

    /// How many pairs of calls `order` runs the other way round from the observed order.
    fn swapped_pairs(&self, order: &[(u8, u32)]) -> usize {
        let rank = |&(thread, call): &(u8, u32)| {
            self.0
                .get(thread as usize)
                .and_then(|calls| calls.get(call as usize))
                .copied()
                .unwrap_or(0)
        };
        let mut swapped = 0;
        for (i, a) in order.iter().enumerate() {
            let a = rank(a);
            for b in &order[i + 1..] {
                swapped += usize::from(rank(b) < a);
            }
        }
        swapped
    }
}

/// The order in which the concurrent run started its suffix calls, from its events: the
/// k-th outermost start on a thread is that thread's call k. `None` when the events do not
/// account for every call (a method that is not instrumented).
fn observed_order(lens: [usize; 2], concurrent: &Response) -> Option<Vec<(u8, u32)>> {
    let mut starts: Vec<(u64, (u8, u32))> = Vec::new();
    for thread in 0..2u8 {
        let mut depth = 0usize;
        let mut calls = 0u32;
        for event in concurrent.events.iter().filter(|e| e.thread == thread) {
            if event.start {
                if depth == 0 {
                    starts.push((event.clock, (thread, calls)));
                    calls += 1;
                }
                depth += 1;
            } else {
                depth = depth.checked_sub(1)?;
            }
        }
        if calls as usize != lens[thread as usize] {
            return None;
        }
    }
    starts.sort_by_key(|&(clock, _)| clock);
    Some(starts.into_iter().map(|(_, call)| call).collect())
}

fn linearizable(order: &[(u8, u32)]) -> ResultsVerdict {
    ResultsVerdict::Linearizable {
        order: order.to_vec(),
    }
}

/// C(len0 + len1, len0), saturating.
fn count_linearizations([len0, len1]: [usize; 2]) -> usize {
    let mut count: usize = 1;
    for k in 1..=len0.min(len1) {
        count = count.saturating_mul(len0 + len1 - len0.min(len1) + k) / k;
    }
    count
}

/// The start of `order` up to the call a sequential run of `test` stopped at, when it is
/// known: the panicking call, or for a run that blocked the call its events show started and
/// not ended. `None` for a crash, or when the events do not follow `order` call by call (a
/// method that is not instrumented).
fn stopped_at(
    test: &TestCase,
    order: &[(u8, u32)],
    sequential: &Response,
) -> Option<Vec<(u8, u32)>> {
    let at = match &sequential.outcome {
        Outcome::Panicked {
            thread: Some(thread),
            call,
            ..
        } => order.iter().position(|&c| c == (*thread, *call))?,
        Outcome::Deadlocked { .. } => stuck_call(test, order, &sequential.events)?,
        Outcome::Passed
        | Outcome::Panicked { thread: None, .. }
        | Outcome::SetupFailed { .. }
        | Outcome::Crashed { .. } => return None,
    };
    Some(order[..=at].to_vec())
}

/// `covcon_rt::SCOPE_HELD`: the type path of the events between which a thread holds a
/// scope's guard.
pub(crate) const SCOPE_HELD: &str = "(scope)";

/// Which suffix threads a run's events leave holding a scope's guard (inside the
/// [`SCOPE_HELD`] mark): blocked, for a deadlock, while the test held a guard of the type's.
pub(crate) fn holding_guard(events: &[Event]) -> [bool; 2] {
    let mut held = [0i32; 2];
    for e in events
        .iter()
        .filter(|e| e.type_path == SCOPE_HELD && e.thread < 2)
    {
        held[usize::from(e.thread)] += if e.start { 1 } else { -1 };
    }
    held.map(|h| h > 0)
}

/// The position in `order` of the call a blocked sequential run was in: its outermost
/// suffix calls, in clock order, must be `order`'s, and the last one must not have ended.
pub(crate) fn stuck_call(test: &TestCase, order: &[(u8, u32)], events: &[Event]) -> Option<usize> {
    // A scope's held-guard mark is no call: the scope's calls count as its call's.
    let mut events: Vec<&Event> = events
        .iter()
        .filter(|e| e.thread < 2 && e.type_path != SCOPE_HELD)
        .collect();
    events.sort_by_key(|e| e.clock);
    let mut depth = 0usize;
    let mut started = 0usize;
    // The calls made inside the scope of the call last started, still to come: their events
    // are the scope's, not the next call's.
    let mut inside: std::collections::VecDeque<&str> = Default::default();
    let mut finish: Option<&str> = None;
    for event in events {
        if event.start {
            if depth == 0 {
                if inside.front() == Some(&event.method.as_str()) {
                    inside.pop_front();
                } else if finish == Some(event.method.as_str()) {
                    finish = None;
                } else {
                    let &(thread, index) = order.get(started)?;
                    let call = test.threads[thread as usize].get(index as usize)?;
                    if event.thread != thread || event.method != call.method {
                        return None;
                    }
                    started += 1;
                    let scope = call.scope.as_deref();
                    inside = scope
                        .map(|s| s.then.iter().map(|c| c.method.as_str()).collect())
                        .unwrap_or_default();
                    finish = scope
                        .and_then(|s| s.finish.as_ref())
                        .map(|f| f.method.as_str());
                }
            }
            depth += 1;
        } else {
            depth = depth.checked_sub(1)?;
        }
    }
    (depth > 0).then(|| started - 1)
}

/// The Debug text of call `index` of thread `thread` in `response`, if any.
/// The answers a type gives when another thread got in the way (crossbeam's `Steal::Retry`,
/// dashmap's `TryResult::Locked`, std's `TryLockError::WouldBlock`) or is part way through a
/// call (parking_lot's `OnceState::InProgress`): by their contract, not wrong results,
/// however no sequential order gives them.
const CONTENTION_ANSWERS: &[&str] = &["Retry", "Locked", "WouldBlock", "Contended", "InProgress"];

/// The first suffix call of `concurrent` that answered one of [`CONTENTION_ANSWERS`] (alone,
/// or as `Err(..)`), with its text.
fn contention_answer<'r>(test: &TestCase, concurrent: &'r Response) -> Option<(String, &'r str)> {
    suffix_answers(test, concurrent).find_map(|(call, text)| {
        let bare = text
            .strip_prefix("Err(")
            .and_then(|t| t.strip_suffix(')'))
            .unwrap_or(text);
        CONTENTION_ANSWERS
            .contains(&bare)
            .then(|| (call.method.clone(), text))
    })
}

/// Whether a suffix call of `test` answered a failure (`false`, `None`, `Err(..)`) in
/// `concurrent`: in a test with a call whose answer holds the object, the other thread's call
/// may have failed because the hold lived (a `book` of a slot the other thread's `reserve`
/// answer holds answers `false`), and then its effect is missing from the final state, which no
/// order of whole calls gives: the final state is left out too (`twins::booking::Booking`
/// was reported so, `reserve(0) ∥ book(0, 0)`, session 37).
fn failed_under_hold(test: &TestCase, concurrent: &Response) -> bool {
    suffix_answers(test, concurrent)
        .any(|(_, text)| text == "false" || text == "None" || text.starts_with("Err("))
}

/// Each suffix call of `test` that answered a text in `concurrent`, with the text, thread by
/// thread.
fn suffix_answers<'a, 'r>(
    test: &'a TestCase,
    concurrent: &'r Response,
) -> impl Iterator<Item = (&'a Call, &'r str)> {
    test.threads.iter().enumerate().flat_map(move |(t, calls)| {
        calls
            .iter()
            .enumerate()
            .filter_map(move |(i, call)| Some((call, result(concurrent, t, i)?)))
    })
}

/// The compared suffix calls' answers of `keyed` methods ([`ResultsConfig::keys`]) in
/// `response` (`compared` says which calls are compared), each
/// with its key renamed `#n`, the n-th distinct key answered in thread order (thread 0's calls,
/// then thread 1's): two runs' answers are the same up to a consistent renaming of keys
/// exactly when their renamed texts are. The key is the text inside `Some(..)` or `Ok(..)`, or
/// the whole text; `None`, `Err(..)` and a skipped call are no key. A key in `fixed` (one a
/// prefix call of such a method answered) keeps its text: it is the same in every run, and a
/// fresh call answering it is no renaming.
fn renamed_keys(
    test: &TestCase,
    response: &Response,
    keyed: Option<&BTreeSet<String>>,
    fixed: &[String],
    compared: &dyn Fn(&Call) -> bool,
) -> (BTreeMap<(usize, usize), String>, Vec<String>) {
    let Some(keyed) = keyed else {
        return (BTreeMap::new(), Vec::new());
    };
    let (places, mut texts): (Vec<(usize, usize)>, Vec<String>) = test
        .threads
        .iter()
        .enumerate()
        .flat_map(|(t, calls)| calls.iter().enumerate().map(move |(i, c)| (t, i, c)))
        .filter(|(_, _, call)| keyed.contains(&call.method) && compared(call))
        .filter_map(|(t, i, _)| Some(((t, i), result(response, t, i)?.to_string())))
        .unzip();
    let all = vec![true; texts.len()];
    let names = rename_keys(&mut texts, &all, fixed);
    (places.into_iter().zip(texts).collect(), names)
}

/// The keys the prefix calls of `keyed` methods answered in `response`.
fn prefix_keys(test: &TestCase, response: &Response, keyed: &BTreeSet<String>) -> Vec<String> {
    test.prefix
        .iter()
        .zip(&response.prefix_results)
        .filter(|(call, _)| keyed.contains(&call.method))
        .filter_map(|(_, text)| Some(key_in(text.as_deref()?)?.1.to_string()))
        .collect()
}

/// `texts` (a reproducer's compared texts, in [`AllowedOutcomes::calls`] order) with the key
/// of each text `keys` marks renamed `#n` as [`renamed_keys`] renames them, a key in `fixed`
/// (the prefix's) kept. The reproducer renames what it observes by the same rule.
pub(crate) fn rename_keys(texts: &mut [String], keys: &[bool], fixed: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (text, _) in texts.iter_mut().zip(keys).filter(|(_, keyed)| **keyed) {
        let Some((open, key, close)) = key_in(text) else {
            continue;
        };
        if fixed.iter().any(|f| f == key) {
            continue;
        }
        let n = names.iter().position(|k| k == key).unwrap_or_else(|| {
            names.push(key.to_string());
            names.len() - 1
        });
        *text = format!("{open}#{}{close}", n + 1);
    }
    names
}

/// `state` (a final state's text) with each key in `names` renamed `#n` as the calls' answers
/// were ([`rename_keys`]' answer): a map from strings to keys shows the keys the calls handed
/// out. A key whose text is a bare number is left as it is, since a count or a length in the
/// state may read the same; so is a key no call answered.
pub(crate) fn rename_keys_in_state<'s>(state: &'s str, names: &[String]) -> Cow<'s, str> {
    if names.is_empty() {
        return Cow::Borrowed(state);
    }
    let mut order: Vec<(usize, &String)> = names
        .iter()
        .enumerate()
        .filter(|(_, key)| key.chars().any(|c| !(c.is_ascii_digit() || c == '-')))
        .collect();
    // Longer keys first, so that no key is renamed inside another.
    order.sort_by_key(|(_, key)| std::cmp::Reverse(key.len()));
    let mut state = state.to_string();
    for (n, key) in order {
        state = state.replace(key.as_str(), &format!("#{}", n + 1));
    }
    Cow::Owned(state)
}

/// A key answer's parts: what opens it, the key, what closes it (`("Some(", "Spur(1)", ")")`);
/// `None` for an answer that holds no key.
pub(crate) fn key_in(text: &str) -> Option<(&str, &str, &str)> {
    if text == "None" || text == SKIPPED || text.starts_with("Err(") {
        return None;
    }
    for open in ["Some(", "Ok("] {
        if let Some(key) = text.strip_prefix(open).and_then(|k| k.strip_suffix(')')) {
            return Some((open, key, ")"));
        }
    }
    Some(("", text, ""))
}

fn result(response: &Response, thread: usize, index: usize) -> Option<&str> {
    response.results[thread].get(index)?.as_deref()
}

/// Both texts, when there are two and they differ. A part the concurrent text `a` shows as
/// `<locked>` matches anything.
fn changed(a: Option<&str>, b: Option<&str>) -> Option<(String, String)> {
    changed_by(a, b, matches_with_holes)
}

/// [`changed`], with a map's entries compared in the order they are written.
fn changed_in_order(a: Option<&str>, b: Option<&str>) -> Option<(String, String)> {
    changed_by(a, b, matches_in_order)
}

/// Both texts, when there are two and `same` says they differ.
fn changed_by(
    a: Option<&str>,
    b: Option<&str>,
    same: fn(&str, &str) -> bool,
) -> Option<(String, String)> {
    match (a, b) {
        (Some(a), Some(b)) if !same(a, b) => Some((a.to_string(), b.to_string())),
        _ => None,
    }
}

/// What std's and parking_lot's `Debug` of a `Mutex` or `RwLock` print for the data when the
/// lock is held: a value captured while the other test thread held a lock inside it (a handle
/// that shares the type's state) says nothing about that data.
const LOCKED: [&str; 2] = ["\"<locked>\"", "<locked>"];

/// Whether `observed` equals `expected` with each `<locked>` in it standing for any text,
/// and any address for any other; the entries of a `{…}` group (a map's or a set's `Debug`, or
/// a struct's fields) in any order. A hash map with a random hasher per instance (flurry's,
/// dashmap's) lists the same entries in another order in every run, and two sequential runs
/// that happen to agree do not mark the text as varying.
fn matches_with_holes(observed: &str, expected: &str) -> bool {
    if matches_in_order(observed, expected) {
        return true;
    }
    observed.contains('{')
        && expected.contains('{')
        && matches_in_order(&unordered(observed), &unordered(expected))
}

/// `text` with the entries of every `{…}` group sorted (nested groups first); `[…]` and `(…)`
/// keep their order, and string literals are copied as they are.
fn unordered(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    let mut out = String::with_capacity(text.len());
    while at < chars.len() {
        out.push_str(&unordered_item(&chars, &mut at));
    }
    out
}

/// The item at `*at` (one char, a string literal or a whole bracketed group), canonical.
fn unordered_item(chars: &[char], at: &mut usize) -> String {
    let c = chars[*at];
    *at += 1;
    match c {
        '"' => {
            let mut out = String::from('"');
            while *at < chars.len() {
                let d = chars[*at];
                *at += 1;
                out.push(d);
                if d == '\\' && *at < chars.len() {
                    out.push(chars[*at]);
                    *at += 1;
                } else if d == '"' {
                    break;
                }
            }
            out
        }
        '{' | '[' | '(' => {
            let close = match c {
                '{' => '}',
                '[' => ']',
                _ => ')',
            };
            let mut entries: Vec<String> = Vec::new();
            let mut entry = String::new();
            while *at < chars.len() && chars[*at] != close {
                if chars[*at] == ',' {
                    entries.push(std::mem::take(&mut entry).trim().to_string());
                    *at += 1;
                } else {
                    entry.push_str(&unordered_item(chars, at));
                }
            }
            *at += 1;
            if !entry.trim().is_empty() {
                entries.push(entry.trim().to_string());
            }
            if c == '{' {
                entries.sort();
            }
            format!("{c}{}{close}", entries.join(", "))
        }
        c => c.to_string(),
    }
}

/// [`matches_with_holes`], in the order the texts are written.
fn matches_in_order(observed: &str, expected: &str) -> bool {
    if observed == expected {
        return true;
    }
    if observed.contains("0x") && expected.contains("0x") {
        let (observed, expected) = (without_addresses(observed), without_addresses(expected));
        return observed == expected || matches_locked(&observed, &expected);
    }
    matches_locked(observed, expected)
}

/// The name a derived `Debug` gives the type at `path`: its last segment, without generic
/// arguments (`lockfree::incin::Incinerator<T>` → `Incinerator`).
pub(crate) fn debug_name(path: &str) -> &str {
    let last = path.rsplit("::").next().unwrap_or(path);
    last.split('<').next().unwrap_or(last).trim()
}

/// The names whose values' bodies [`hide_objects`] hides in one type's texts: the model's
/// thread-safe types ([`ResultsConfig::inner_objects`]) but that type.
pub(crate) struct Hidden<'a> {
    pub(crate) names: &'a BTreeSet<String>,
    pub(crate) own: &'a str,
}

impl Hidden<'_> {
    fn hides(&self, name: &str) -> bool {
        name != self.own && self.names.contains(name)
    }
}

/// `text` with the body of every value of a type [`Hidden`] names written `…`: `Map { incin:
/// Incinerator { counter: 1, .. }, n: 2 }` → `Map { incin: Incinerator {…}, n: 2 }` (see
/// [`ResultsConfig::inner_objects`]). A name counts where it starts a word (not a path's last
/// segment) and is followed by `{` or `(`; string literals are copied as they are. One pass
/// over the text, which is borrowed when nothing is hidden.
pub(crate) fn hide_objects<'t>(text: &'t str, hidden: &Hidden) -> Cow<'t, str> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        if b == b'"' {
            at = string_end(bytes, at);
            continue;
        }
        if !word(b) || (at > 0 && (word(bytes[at - 1]) || bytes[at - 1] == b':')) {
            at += 1;
            continue;
        }
        let mut end = at;
        while end < bytes.len() && word(bytes[end]) {
            end += 1;
        }
        let mut open = end;
        while bytes.get(open) == Some(&b' ') {
            open += 1;
        }
        match bytes.get(open) {
            Some(&bracket @ (b'{' | b'(')) if hidden.hides(&text[at..end]) => {
                let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
                out.push_str(&text[copied..end]);
                out.push_str(if bracket == b'{' { " {…}" } else { "(…)" });
                at = group_end(bytes, open);
                copied = at;
            }
            _ => at = end,
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(&text[copied..]);
            Cow::Owned(out)
        }
    }
}

/// The index just past the string literal that opens at `bytes[at]`.
fn string_end(bytes: &[u8], mut at: usize) -> usize {
    at += 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// The index just past the bracketed group that opens at `bytes[open]` (`{`, `(` or `[`),
/// nested groups and string literals inside it skipped.
fn group_end(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    let mut at = open;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                at = string_end(bytes, at);
                continue;
            }
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// `text` with every address in it (`0x` and at least 8 hex digits: a pointer's `Debug`,
/// `data_ptr()`, `as_mut_ptr()`), and every null pointer (`0x0`), written `0x…`: where an
/// instance lives differs from run to run, and says nothing of what the calls did; nor does
/// whether a structure's own pointer is null yet: lockfree's `Queue` prints its `front` and
/// `back`, which a `pop` beside a `push` leaves on the node it took (unlinked lazily, by the
/// next `pop`) where every order has cleared them.
pub(crate) fn without_addresses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let digits = after.len()
            - after
                .trim_start_matches(|c: char| c.is_ascii_hexdigit())
                .len();
        if digits >= 8 || (digits == 1 && after.starts_with('0')) {
            out.push_str("0x…");
        } else {
            out.push_str(&rest[at..at + 2 + digits]);
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// [`matches_with_holes`] for `<locked>` holes alone.
fn matches_locked(observed: &str, expected: &str) -> bool {
    if observed == expected {
        return true;
    }
    let Some(hole) = LOCKED.iter().find(|h| observed.contains(**h)) else {
        return false;
    };
    let parts: Vec<&str> = observed.split(hole).collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !expected.starts_with(first) || expected.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &expected[first.len()..];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// `thread 1 call 2 `hit``, numbered from 1 as in the report's test display.
impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Call {
                thread,
                index,
                method,
            } => write!(f, "thread {} call {} `{method}`", thread + 1, index + 1),
            Place::FinalState => f.write_str("final state"),
        }
    }
}

impl fmt::Display for LeftOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.method {
            Some(method) => write!(f, "`{method}`: ")?,
            None => f.write_str("final state: ")?,
        }
        match &self.reason {
            LeftOutReason::NoDebug => f.write_str("no Debug text"),
            LeftOutReason::Ignored => f.write_str("ignored by configuration"),
            LeftOutReason::Approximate { why } => write!(f, "approximate answer: {why}"),
            LeftOutReason::HeldBy { method } => write!(
                f,
                "`{method}` answers a value that holds the object until it is dropped: \
                 meanwhile the other thread may find it locked or busy"
            ),
            LeftOutReason::DrivenBy { method } => write!(
                f,
                "`{method}` answers an iterator driven item by item: meanwhile the other \
                 thread may find the object part way through"
            ),
            LeftOutReason::HandsOut { handle } => write!(
                f,
                "answers a handle (`{handle}`) onto the object, whose text is read after the \
                 call, when the other thread may have changed what it shows"
            ),
            LeftOutReason::Unstable { first, second } => write!(
                f,
                "its Debug text differed between two sequential runs of the same calls ({first} vs {second})"
            ),
        }
    }
}

/// The closest linearization, then one line per difference:
///
/// ```text
/// closest linearization: t1.1 t2.1
///   thread 2 call 1 `hit`: observed 1, expected 2
/// ```
impl fmt::Display for ResultsViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("closest linearization:")?;
        for (thread, index) in &self.closest {
            write!(f, " t{}.{}", thread + 1, index + 1)?;
        }
        for difference in &self.differences {
            write!(
                f,
                "\n  {}: observed {}, expected {}",
                difference.place, difference.observed, difference.expected
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn test_case(type_name: &str, prefix: &[&str], threads: [&[&str]; 2]) -> TestCase {
        let calls = |methods: &[&str]| -> Vec<Call> {
            methods
                .iter()
                .map(|m| Call {
                    method: m.to_string(),
                    receiver: 0,
                    args: vec![],
                    times: 1,
                    keep: false,
                    chained: None,
                    scope: None,
                })
                .collect()
        };
        TestCase {
            id: 1,
            type_path: format!("fixtures::{type_name}"),
            pair: [threads[0][0].into(), threads[1][0].into()],
            instances: calls(&["new"]),
            handles: vec![],
            prefix: calls(prefix),
            threads: [calls(threads[0]), calls(threads[1])],
            noise_seed: 0,
            control: Default::default(),
        }
    }

    /// A passed concurrent run; `-` is a result without Debug text.
    fn concurrent(results: [&[&str]; 2], final_state: Option<&str>) -> Response {
        let texts = |r: &[&str]| -> Vec<Option<String>> {
            r.iter()
                .map(|t| (*t != "-").then(|| t.to_string()))
                .collect()
        };
        Response {
            results: [texts(results[0]), texts(results[1])],
            final_state: final_state.map(String::from),
            elapsed_us: 5,
            ..Response::new(1, Outcome::Passed)
        }
    }

    /// Sequential run number `run` of `order` on a fake type. `Counter` and `Map` count
    /// `hit`s; `take` blocks on an empty `Queue` and `put` fills it; `new_id` returns a fresh id
    /// per call and run; `keys` lists a map's keys in an order that changes from run to run,
    /// `tags` lists the keys `hit` added in an order that changes in one run of four, and `Map`'s final state is printed in that order
    /// too; `opaque` has no Debug; `wait` blocks when run alone; `Opaque` has no Debug.
    fn fake_run(test: &TestCase, order: &[(u8, u32)], run: u64) -> Response {
        fake_run_at(test, order, run, Speed::Full)
    }

    /// [`fake_run`] at `speed`: a `key` answers `Key(t)` on thread `t` when each call runs on
    /// its own thread, `Key(0)` when all run on one (sharded-slab's keys name the shard of
    /// the calling thread).
    fn fake_run_at(test: &TestCase, order: &[(u8, u32)], run: u64, speed: Speed) -> Response {
        // Sequential runs are made by worker 2, or by worker 3 when in a new one.
        let worker = if speed == Speed::NewWorker { 3 } else { 2 };
        let mut count = 0;
        let mut ids = 0;
        let mut queued = 0;
        let mut interned = 0;
        let mut apply = |method: &str| -> Result<Option<String>, Outcome> {
            match method {
                // An interner numbering the strings it interns (each call a new string).
                "intern" => {
                    interned += 1;
                    Ok(Some(format!("Sym({})", interned - 1)))
                }
                "try_intern" => {
                    interned += 1;
                    Ok(Some(format!("Ok(Sym({}))", interned - 1)))
                }
                "interned" => Ok(Some(interned.to_string())),
                // A clock calibrated when its process first reads it (governor's QuantaClock).
                "clock" => Ok(Some(format!("Calibration({worker})"))),
                "hit" => {
                    count += 1;
                    Ok(Some(count.to_string()))
                }
                "get" => Ok(Some(count.to_string())),
                "lock" => Ok(Some(format!("Guard({count})"))),
                "new_id" => {
                    ids += 1;
                    Ok(Some(format!("Id({})", run * 10 + ids)))
                }
                "keys" => Ok(Some(["[1, 2]", "[2, 1]"][run as usize % 2].to_string())),
                // Two tags list in the other order now and then: in one run of four.
                "tags" => Ok(Some(match count {
                    0 => "[]".to_string(),
                    1 => "[1]".to_string(),
                    _ => ["[1, 2]", "[2, 1]"][usize::from(run % 4 == 3)].to_string(),
                })),
                "opaque" => Ok(None),
                "put" => {
                    queued += 1;
                    Ok(Some("()".into()))
                }
                "take" if queued == 0 => Err(Outcome::Deadlocked {
                    inside: [Some("take".into()), None],
                    blocked_for_good: true,
                    lost_wakeup: None,
                }),
                "take" => {
                    queued -= 1;
                    Ok(Some("()".into()))
                }
                "wait" => Err(Outcome::Deadlocked {
                    inside: [Some("wait".into()), None],
                    blocked_for_good: true,
                    lost_wakeup: None,
                }),
                other => panic!("the fake type has no method {other}"),
            }
        };
        let mut response = concurrent([&[], &[]], None);
        response.worker = worker;
        response.results = [
            vec![None; test.threads[0].len()],
            vec![None; test.threads[1].len()],
        ];
        for call in &test.prefix {
            response.prefix_results.push(apply(&call.method).unwrap());
        }
        let mut events = Vec::new();
        let mut cache: BTreeMap<i128, i128> = BTreeMap::new();
        // The interner's strings (one per call) and the keys they got, in interning order.
        let mut strings: Vec<String> = Vec::new();
        for &(t, i) in order {
            let method = &test.threads[t as usize][i as usize].method;
            events.push((t, method.as_str(), true));
            let on = if speed == Speed::OwnThreads { t } else { 0 };
            let answer = match method.as_str() {
                "key" => Ok(Some(format!("Key({on})"))),
                // moka's `optionally_get_with(key, init)`: the value, or `init`'s inserted.
                "optionally_get_with" => {
                    let args = &test.threads[t as usize][i as usize].args;
                    let (generator::Value::Int(key), generator::Value::Closure(init)) =
                        (&args[0], &args[1])
                    else {
                        panic!("optionally_get_with(key, init)")
                    };
                    let value = cache.get(key).copied().or(match &**init {
                        generator::Value::Option(Some(v)) => match &**v {
                            generator::Value::Int(v) => Some(*v),
                            _ => None,
                        },
                        _ => None,
                    });
                    if let Some(v) = value {
                        cache.insert(*key, v);
                    }
                    Ok(Some(format!("{value:?}")))
                }
                _ => apply(method),
            };
            match answer {
                Ok(text) => {
                    if let Some(key) = text.as_deref().and_then(key_in) {
                        if method.ends_with("intern") {
                            strings.push(format!("\"s{t}{i}\": {}", key.1));
                        }
                    }
                    response.results[t as usize][i as usize] = text
                }
                Err(outcome) => {
                    // As the worker's watchdog answers: events, no results.
                    response.outcome = outcome;
                    response.results = [vec![], vec![]];
                    break;
                }
            }
            events.push((t, method.as_str(), false));
        }
        response.events = self::events(&events);
        response.final_state = match test.type_path.as_str() {
            "fixtures::Counter" => Some(format!("Counter {{ n: {count} }}")),
            "fixtures::Queue" => Some(format!("Queue {{ n: {queued} }}")),
            "fixtures::Map" => Some(["{1: 1, 2: 2}", "{2: 2, 1: 1}"][run as usize % 2].into()),
            "fixtures::Interner" => Some(format!("Interner {{ map: {{{}}} }}", strings.join(", "))),
            _ => None,
        };
        response
    }

    /// Checks `concurrent` against `test`'s linearizations run on the fake type, and renders
    /// the check and the orders run (`-` for the prefix alone).
    fn check_with(
        test: &TestCase,
        concurrent: &Response,
        outcomes: &mut SequentialOutcomes,
        config: &ResultsConfig,
        expect: &str,
    ) {
        let ran = RefCell::new(Vec::new());
        let runs_before = outcomes.len() as u64;
        let check = check_results(test, concurrent, outcomes, config, |order, speed| {
            let mut ran = ran.borrow_mut();
            let own = match speed {
                Speed::OwnThreads => " own",
                Speed::NewWorker => " new",
                _ => "",
            };
            ran.push(if order.is_empty() {
                "-".to_string()
            } else {
                order_text(order) + own
            });
            fake_run_at(test, order, runs_before + ran.len() as u64 - 1, speed)
        });
        let verdict = match &check.verdict {
            ResultsVerdict::NotChecked { reason } => format!("not checked: {reason}"),
            ResultsVerdict::Linearizable { order } => {
                format!("linearizable by {}", order_text(order))
            }
            ResultsVerdict::Inconclusive { reason } => format!("inconclusive: {reason}"),
            ResultsVerdict::Violation(violation) => format!("violation: {violation}"),
        };
        let left_out: Vec<String> = check.left_out.iter().map(|l| l.to_string()).collect();
        let got = format!(
            "{verdict}\nleft out: [{}]\nruns={} linearizations={} ran=[{}]",
            left_out.join("; "),
            check.runs,
            check.linearizations,
            ran.into_inner().join(" | ")
        );
        assert_eq!(got, expect);
    }

    fn check(test: &TestCase, concurrent: &Response, expect: &str) {
        let config = ResultsConfig::default();
        check_with(
            test,
            concurrent,
            &mut SequentialOutcomes::new(),
            &config,
            expect,
        );
    }

    fn order_text(order: &[(u8, u32)]) -> String {
        order
            .iter()
            .map(|(t, c)| format!("{}{}", ["a", "b"][*t as usize], c))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The quick look at a rewrite: its orders as they stand, twice each at most, no
    /// evidence gathered; a lost update matches no order, a run that one order gives does.
    #[test]
    fn a_first_look_runs_each_order_twice_at_most_and_gathers_no_evidence() {
        let config = ResultsConfig::default();
        let look = |test: &TestCase, concurrent: &Response| {
            let mut made = 0;
            let check = check_results_until(
                test,
                concurrent,
                &mut SequentialOutcomes::new(),
                &config,
                (None, Depth::FirstMatch),
                |order, speed| {
                    made += 1;
                    fake_run_at(test, order, made, speed)
                },
            );
            let found = matches!(check.verdict, ResultsVerdict::Linearizable { .. });
            (found, made)
        };
        let (test, lost) = lost_update();
        assert_eq!(look(&test, &lost), (false, 4), "two orders, twice each");
        let fine = concurrent([&["1"], &["2"]], Some("Counter { n: 2 }"));
        assert_eq!(look(&test, &fine), (true, 1));
    }

    /// A variant's runs (a rewrite of the test, `coalesced_variants`) are kept with the
    /// test's: checking it again (a confirmation re-run of the same test) runs nothing new
    /// but the closest order's extra runs, where a fresh set ran every order again.
    #[test]
    fn a_variants_runs_are_kept_with_its_tests_and_reused() {
        let (test, concurrent) = lost_update();
        let mut variant = test.clone();
        variant.prefix.push(test.threads[0][0].clone());
        let config = ResultsConfig::default();
        let mut outcomes = SequentialOutcomes::new();
        outcomes.for_test(&test);
        let check_variant = |outcomes: &mut SequentialOutcomes| {
            let mut runs = outcomes.take_variant(&variant);
            let mut made = 0;
            check_results(&variant, &concurrent, &mut runs, &config, |order, speed| {
                made += 1;
                fake_run_at(&variant, order, made, speed)
            });
            outcomes.keep_variant(runs);
            made
        };
        let first = check_variant(&mut outcomes);
        let again = check_variant(&mut outcomes);
        assert!(first > 6, "the first check runs every order: {first}");
        assert!(again <= config.extra_runs as u64 + 1, "again: {again}");
        assert_eq!(outcomes.variants.len(), 1);
        // Another test's runs start over, its variants' too.
        outcomes.for_test(&test_case("Counter", &[], [&["hit"], &["get"]]));
        assert!(outcomes.variants.is_empty());
    }

    fn lost_update() -> (TestCase, Response) {
        (
            test_case("Counter", &[], [&["hit"], &["hit"]]),
            concurrent([&["1"], &["1"]], Some("Counter { n: 1 }")),
        )
    }

    /// An address (`data_ptr()`, a pointer's `Debug`) matches any other: where the instance
    /// lives differs from run to run. Short hex numbers are values like any other.
    /// flurry's `HashMap` lists its entries in a random order per instance: the same entries
    /// in another order match, other entries or another order inside `[…]` do not.
    #[test]
    fn the_entries_of_a_map_match_in_any_order_and_a_lists_do_not() {
        assert!(matches_with_holes("{6: 3, 0: 1}", "{0: 1, 6: 3}"));
        assert!(matches_with_holes(
            "Set { items: {\"b, c\", \"a\"}, n: [1, 2] }",
            "Set { items: {\"a\", \"b, c\"}, n: [1, 2] }"
        ));
        assert!(!matches_with_holes("{6: 3, 0: 1}", "{6: 3}"));
        assert!(!matches_with_holes("{0: [1, 2]}", "{0: [2, 1]}"));
        assert!(!matches_with_holes("Some([1, 2])", "Some([2, 1])"));
        assert!(matches_with_holes(
            "{1: {a, b}, 0: {}}",
            "{0: {}, 1: {b, a}}"
        ));
    }

    /// lockfree 0.3's `Queue` prints its `front` and `back`: a `pop` beside a `push` leaves
    /// them on the node it took, unlinked lazily, where every order has cleared them.
    #[test]
    fn a_null_pointer_matches_an_address_and_a_zero_value_does_not_match_one() {
        assert!(matches_with_holes(
            "Queue { front: 0x7f349c0326a0, back: 0x7f349c0326a0 }",
            "Queue { front: 0x0, back: 0x0 }"
        ));
        assert!(!matches_with_holes("Flags(0x0)", "Flags(0x1)"));
        assert!(!matches_with_holes("Flags(0x00)", "Flags(0x10)"));
        assert_eq!(
            without_addresses("a: 0x0, b: 0x01, c: 0x0f"),
            "a: 0x…, b: 0x01, c: 0x0f"
        );
    }

    #[test]
    fn the_text_of_another_thread_safe_type_inside_a_value_is_hidden() {
        assert_eq!(debug_name("lockfree::incin::Incinerator<T>"), "Incinerator");
        assert_eq!(debug_name("Bin"), "Bin");
        let names: BTreeSet<String> = ["Incinerator", "ThreadLocal", "Map"]
            .map(String::from)
            .into();
        let names = Hidden {
            names: &names,
            own: "Map",
        };
        assert_eq!(
            hide_objects(
                r#"Map { top: 0x55b4a9026940, incin: Incinerator { counter: 0, tls: ThreadLocal { storage: Some([Garbage::Pair(0x7fa0)]) } }, n: "Incinerator {", m: 2 }"#,
                &names
            ),
            r#"Map { top: 0x55b4a9026940, incin: Incinerator {…}, n: "Incinerator {", m: 2 }"#
        );
        // A path, a longer name and a unit value are not values of the type; a tuple struct is.
        assert_eq!(
            hide_objects(
                "S { a: x::Incinerator { n: 1 }, b: Incinerators { n: 1 }, c: Incinerator, d: ThreadLocal(3) }",
                &names
            ),
            "S { a: x::Incinerator { n: 1 }, b: Incinerators { n: 1 }, c: Incinerator, d: ThreadLocal(…) }"
        );
        assert!(matches!(
            hide_objects("Map { n: 1 }", &names),
            Cow::Borrowed(_)
        ));
    }

    /// A final state that differs only inside another thread-safe type of the crate matches;
    /// one that differs outside it, or in the type's own text, does not.
    #[test]
    fn a_final_state_differing_only_inside_a_helper_of_the_crate_is_not_a_violation() {
        let config = ResultsConfig {
            inner_objects: ["Bin".to_string(), "Stack".to_string()].into(),
            ..ResultsConfig::default()
        };
        let outcomes = SequentialOutcomes::new();
        let stack = test_case("Stack", &[], [&["get"], &["get"]]);
        let state = |waited: u8, entries: &str| {
            format!("Stack {{ entries: [{entries}], bin: Bin {{ waited: {waited} }} }}")
        };
        let run = |state: String| concurrent([&["1"], &["1"]], Some(&state));
        let expected = run(state(0, "1"));
        assert!(outcomes
            .compare(&stack, &run(state(1, "1")), &expected, &config)
            .is_empty());
        assert_eq!(
            outcomes
                .compare(&stack, &run(state(0, "2")), &expected, &config)
                .len(),
            1
        );
        // The type's own text is compared.
        let bin = test_case("Bin", &[], [&["get"], &["get"]]);
        let differences = outcomes.compare(
            &bin,
            &run("Bin { waited: 1 }".into()),
            &run("Bin { waited: 0 }".into()),
            &config,
        );
        assert_eq!(differences.len(), 1);
    }

    #[test]
    fn addresses_match_any_address_and_short_hex_is_a_value() {
        assert!(matches_with_holes("0x55af3b7d2564", "0x55af3b7cc824"));
        assert!(matches_with_holes(
            "Node { next: 0x7f00aa001230, n: 1 }",
            "Node { next: 0x7f00bb004560, n: 1 }"
        ));
        assert!(!matches_with_holes(
            "Node { next: 0x7f00aa001230, n: 1 }",
            "Node { next: 0x7f00bb004560, n: 2 }"
        ));
        assert!(!matches_with_holes("Flags(0x01)", "Flags(0x02)"));
        assert!(matches_with_holes(
            "M { data: <locked>, at: 0x7f00aa001230 }",
            "M { data: 3, at: 0x7f00bb004560 }"
        ));
    }

    #[test]
    fn a_lock_shown_as_locked_matches_any_data_and_nothing_else_is_a_wildcard() {
        let expected =
            r#"Bar { state: Mutex { data: 3, .. }, shared: Mutex { data: Shared { n: 1 }, .. } }"#;
        let held =
            r#"Bar { state: Mutex { data: 3, .. }, shared: Mutex { data: "<locked>", .. } }"#;
        assert!(matches_with_holes(held, expected));
        let other =
            r#"Bar { state: Mutex { data: 4, .. }, shared: Mutex { data: "<locked>", .. } }"#;
        assert!(!matches_with_holes(other, expected));
        assert!(matches_with_holes(
            "RwLock { data: <locked> }",
            "RwLock { data: [1, 2] }"
        ));
        assert!(!matches_with_holes(
            "RwLock { data: [1] }",
            "RwLock { data: [1, 2] }"
        ));
        assert!(changed(Some(held), Some(expected)).is_none());
        assert!(changed(Some(other), Some(expected)).is_some());
    }

    #[test]
    fn a_lost_update_on_a_counter_is_a_violation() {
        let (test, run) = lost_update();
        check(
            &test,
            &run,
            "violation: closest linearization: t1.1 t2.1
  thread 2 call 1 `hit`: observed 1, expected 2
  final state: observed Counter { n: 1 }, expected Counter { n: 2 }
left out: []
runs=15 linearizations=2 ran=[a0 b0 | a0 b0 | b0 a0 | b0 a0 | - | - | a0 b0 | a0 b0 | a0 b0 | a0 b0 | b0 a0 | b0 a0 | b0 a0 | b0 a0 | a0 b0 own]",
        );
    }

    /// lasso 0.7.3's `ThreadedRodeo`: thread 1's intern took key 0 and thread 2's key 1, but
    /// thread 2's string was recorded first, so its `len` (here `interned`) answered 1: with
    /// key 1 no order of whole calls gives that. Keys are opaque to their users (tests only
    /// hand them back), so answers are the same up to renaming keys: no violation. Compared as
    /// written, it is one.
    #[test]
    fn keys_numbered_in_another_order_match_up_to_renaming() {
        let test = test_case("Interner", &[], [&["intern"], &["try_intern", "interned"]]);
        // The strings map shows the keys too: renamed with the answers' names.
        let run = concurrent(
            [&["Sym(0)"], &["Ok(Sym(1))", "1"]],
            Some(r#"Interner { map: {"s00": Sym(0), "s10": Sym(1)} }"#),
        );
        let mut config = ResultsConfig::default();
        config.keys.insert(
            "fixtures::Interner".into(),
            ["intern".to_string(), "try_intern".to_string()].into(),
        );
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &config,
            "linearizable by b0 b1 a0
left out: []
runs=5 linearizations=3 ran=[a0 b0 b1 | a0 b0 b1 | b0 a0 b1 | b0 a0 b1 | b0 b1 a0]",
        );
        check(
            &test,
            &run,
            "violation: closest linearization: t1.1 t2.1 t2.2
  thread 2 call 2 `interned`: observed 1, expected 2
left out: []
runs=21 linearizations=3 ran=[a0 b0 b1 | a0 b0 b1 | b0 a0 b1 | b0 a0 b1 | b0 b1 a0 | b0 b1 a0 | - | - | a0 b0 b1 | a0 b0 b1 | a0 b0 b1 | a0 b0 b1 | b0 a0 b1 | b0 a0 b1 | b0 a0 b1 | b0 a0 b1 | b0 b1 a0 | b0 b1 a0 | b0 b1 a0 | b0 b1 a0 | a0 b0 b1 own]",
        );
    }

    /// Renaming keeps which calls answered the same key: two interns of new strings that
    /// answered one key, or a new string answering a key the prefix handed out, match no
    /// order, whatever the keys are called.
    #[test]
    fn one_key_for_two_new_strings_or_an_old_key_for_a_new_string_is_a_violation() {
        let mut config = ResultsConfig::default();
        config
            .keys
            .insert("fixtures::Interner".into(), ["intern".to_string()].into());
        let verdict = |prefix: &[&str], threads: [&[&str]; 2], answers: [&[&str]; 2]| {
            let test = test_case("Interner", prefix, threads);
            let run = concurrent(answers, None);
            let mut outcomes = SequentialOutcomes::new();
            check_results(&test, &run, &mut outcomes, &config, |o, _| {
                fake_run(&test, o, 0)
            })
            .verdict
        };
        let two_new = verdict(&[], [&["intern"], &["intern"]], [&["Sym(0)"], &["Sym(0)"]]);
        let ResultsVerdict::Violation(violation) = two_new else {
            panic!("{two_new:?}")
        };
        assert_eq!(
            violation.to_string(),
            "closest linearization: t1.1 t2.1
  thread 2 call 1 `intern`: observed Sym(0) (#1), expected Sym(1) (#2)"
        );
        let old_key = verdict(
            &["intern"],
            [&["intern"], &["interned"]],
            [&["Sym(0)"], &["2"]],
        );
        assert!(
            matches!(old_key, ResultsVerdict::Violation(_)),
            "{old_key:?}"
        );
    }

    /// Keys in a final state are renamed as the answers named them, longest first; a key that
    /// is a bare number, or one no call answered, keeps its text.
    #[test]
    fn keys_in_the_final_state_are_renamed_as_the_answers_are() {
        let names = ["Sym(1)".to_string(), "Sym(10)".into(), "7".into()];
        assert_eq!(
            rename_keys_in_state(
                "{\"a\": Sym(10), \"b\": Sym(1), \"c\": Sym(2), n: 7}",
                &names
            ),
            "{\"a\": #2, \"b\": #1, \"c\": Sym(2), n: 7}"
        );
    }

    /// The reproducer's allowed outcomes are renamed as the check renames: every order of two
    /// new interns answers `#1` then `#2`, the prefix's key keeping its text.
    #[test]
    fn allowed_outcomes_rename_keys_and_keep_the_prefixs() {
        let mut config = ResultsConfig::default();
        config
            .keys
            .insert("fixtures::Interner".into(), ["intern".to_string()].into());
        let test = test_case(
            "Interner",
            &["intern"],
            [&["intern"], &["intern", "interned"]],
        );
        let allowed = allowed_outcomes(&test, &mut SequentialOutcomes::new(), &config, |o| {
            fake_run(&test, o, 0)
        })
        .unwrap();
        assert_eq!(allowed.keys, [true, true, false]);
        assert_eq!(allowed.fixed_keys, ["Sym(0)"]);
        let texts: Vec<String> = allowed.outcomes.iter().map(|o| o.texts.join(" ")).collect();
        // The final state (the strings' map, in the order they were interned) is renamed too.
        assert_eq!(
            texts,
            [
                r#"#1 #2 3 Interner { map: {"s00": #1, "s10": #2} }"#,
                r#"#1 #2 3 Interner { map: {"s10": #2, "s00": #1} }"#,
                r#"#1 #2 2 Interner { map: {"s10": #2, "s00": #1} }"#,
            ]
        );
    }

    /// A slab whose keys name the calling thread's shard: the concurrent run's thread 2 got
    /// `Key(1)`, which no order run on one thread gives. On the way to a violation the
    /// closest order runs once more with each call on its own thread, and `key`, whose text
    /// then differs, is left out as varying.
    #[test]
    fn an_answer_by_the_calling_thread_is_left_out_once_an_order_runs_on_its_threads() {
        let test = test_case("Slab", &[], [&["key"], &["key"]]);
        check(
            &test,
            &concurrent([&["Key(0)"], &["Key(1)"]], None),
            "linearizable by a0 b0
left out: [`key`: its Debug text differed between two sequential runs of the same calls (Key(0) vs Key(1)); final state: no Debug text]
runs=15 linearizations=2 ran=[a0 b0 | a0 b0 | b0 a0 | b0 a0 | - | - | a0 b0 | a0 b0 | a0 b0 | a0 b0 | b0 a0 | b0 a0 | b0 a0 | b0 a0 | a0 b0 own]",
        );
    }

    /// A bucket refilled on a clock the copy does not control: at full speed a sequential
    /// order finds no token due, the concurrent run (slower) found one. A slow run answers as
    /// the concurrent run did, so the check raises no alarm; with full-speed runs alone it
    /// would.
    #[test]
    fn what_a_slow_sequential_run_answers_otherwise_raises_no_alarm() {
        let test = test_case("Bucket", &[], [&["available"], &["available"]]);
        let observed = concurrent([&["1"], &["1"]], None);
        let config = ResultsConfig::default();
        let judge = |slow: &str| {
            let mut slow_runs = 0;
            let check = check_results(
                &test,
                &observed,
                &mut SequentialOutcomes::new(),
                &config,
                |_, speed| match speed {
                    Speed::Full | Speed::OwnThreads | Speed::NewWorker => {
                        concurrent([&["0"], &["0"]], None)
                    }
                    Speed::Slow => {
                        slow_runs += 1;
                        concurrent([&[slow], &[slow]], None)
                    }
                },
            );
            let violation = matches!(check.verdict, ResultsVerdict::Violation(_));
            format!("violation={violation} slow runs={slow_runs}")
        };
        assert_eq!(judge("1"), "violation=false slow runs=2");
        // A slow run that answers as the fast ones do changes nothing: a wrong result is one.
        assert_eq!(judge("0"), "violation=true slow runs=2");
    }

    #[test]
    fn the_fetch_add_twin_is_linearizable_in_either_order_and_cheap_to_accept() {
        let test = test_case("Counter", &[], [&["hit"], &["hit"]]);
        check(
            &test,
            &concurrent([&["1"], &["2"]], Some("Counter { n: 2 }")),
            "linearizable by a0 b0\nleft out: []\nruns=1 linearizations=1 ran=[a0 b0]",
        );
        check(
            &test,
            &concurrent([&["2"], &["1"]], Some("Counter { n: 2 }")),
            "linearizable by b0 a0\nleft out: []\nruns=3 linearizations=2 ran=[a0 b0 | a0 b0 | b0 a0]",
        );
    }

    #[test]
    fn a_method_returning_a_fresh_random_id_is_left_out_and_raises_no_alarm() {
        let test = test_case("Counter", &["new_id"], [&["new_id", "hit"], &["new_id"]]);
        let mut run = concurrent([&["Id(7)", "1"], &["Id(9)"]], Some("Counter { n: 1 }"));
        run.prefix_results = vec![Some("Id(5)".into())];
        check(
            &test,
            &run,
            "linearizable by a0 a1 b0
left out: [`new_id`: its Debug text differed between two sequential runs of the same calls (Id(5) vs Id(1))]
runs=1 linearizations=1 ran=[a0 a1 b0]",
        );
        // Without a prefix, the second run of the first linearization shows it.
        let test = test_case("Counter", &[], [&["new_id"], &["new_id"]]);
        check(
            &test,
            &concurrent([&["Id(7)"], &["Id(9)"]], Some("Counter { n: 0 }")),
            "linearizable by a0 b0
left out: [`new_id`: its Debug text differed between two sequential runs of the same calls (Id(1) vs Id(11))]
runs=2 linearizations=1 ran=[a0 b0 | a0 b0]",
        );
    }

    #[test]
    fn hash_map_iteration_order_that_differs_between_sequential_runs_is_left_out() {
        let test = test_case("Map", &[], [&["hit", "keys"], &["keys"]]);
        check(
            &test,
            &concurrent([&["1", "[2, 1]"], &["[1, 2]"]], Some("{2: 2, 1: 1}")),
            "linearizable by a0 a1 b0
left out: [`keys`: its Debug text differed between two sequential runs of the same calls ([1, 2] vs [2, 1]); final state: its Debug text differed between two sequential runs of the same calls ({1: 1, 2: 2} vs {2: 2, 1: 1})]
runs=2 linearizations=1 ran=[a0 a1 b0 | a0 a1 b0]",
        );
    }

    #[test]
    fn text_that_varies_only_in_an_order_other_than_the_closest_raises_no_alarm() {
        // `tags` ran first in the concurrent run, so the closest linearization runs it on an
        // empty map, where its text never varies; two tags print in either order only when it
        // runs last. Re-running only the closest order reported this correct type.
        let test = test_case("Tags", &[], [&["hit", "hit"], &["tags"]]);
        let mut run = concurrent([&["1", "2"], &["[2, 1]"]], None);
        run.events = events(&[
            (1, "tags", true),
            (0, "hit", true),
            (0, "hit", false),
            (0, "hit", true),
            (0, "hit", false),
            (1, "tags", false),
        ]);
        check(
            &test,
            &run,
            "linearizable by b0 a0 a1
left out: [`tags`: its Debug text differed between two sequential runs of the same calls ([1, 2] vs [2, 1]); final state: no Debug text]
runs=21 linearizations=3 ran=[b0 a0 a1 | b0 a0 a1 | a0 b0 a1 | a0 b0 a1 | a0 a1 b0 | a0 a1 b0 | - | - | b0 a0 a1 | b0 a0 a1 | b0 a0 a1 | b0 a0 a1 | a0 b0 a1 | a0 b0 a1 | a0 b0 a1 | a0 b0 a1 | a0 a1 b0 | a0 a1 b0 | a0 a1 b0 | a0 a1 b0 | b0 a0 a1 own]",
        );
    }

    /// Text a type prints that differs from process to process (a clock calibrated when its
    /// process first reads it), compared between a concurrent run in one worker and
    /// sequential runs in another (the first was replaced after a later test timed out): the
    /// closest order runs once more in a new worker, which shows the text varying, and it is
    /// left out (governor 0.10.4's `RateLimiter::clock`, reported under the results oracle).
    /// The same text from the worker that made the sequential runs is a difference.
    #[test]
    fn text_that_differs_between_worker_processes_is_left_out_not_reported() {
        let test = test_case("Limiter", &[], [&["clock", "hit"], &["hit"]]);
        let in_worker = |worker| Response {
            worker,
            ..concurrent([&["Calibration(1)", "1"], &["2"]], None)
        };
        check(
            &test,
            &in_worker(1),
            "linearizable by a0 a1 b0
left out: [`clock`: its Debug text differed between two sequential runs of the same calls (Calibration(2) vs Calibration(3)); final state: no Debug text]
runs=22 linearizations=3 ran=[a0 a1 b0 | a0 a1 b0 | a0 b0 a1 | a0 b0 a1 | b0 a0 a1 | b0 a0 a1 | - | - | a0 a1 b0 | a0 a1 b0 | a0 a1 b0 | a0 a1 b0 | a0 b0 a1 | a0 b0 a1 | a0 b0 a1 | a0 b0 a1 | b0 a0 a1 | b0 a0 a1 | b0 a0 a1 | b0 a0 a1 | a0 a1 b0 own | a0 a1 b0 new]",
        );
        check(
            &test,
            &in_worker(2),
            "violation: closest linearization: t1.1 t1.2 t2.1
  thread 1 call 1 `clock`: observed Calibration(1), expected Calibration(2)
left out: [final state: no Debug text]
runs=21 linearizations=3 ran=[a0 a1 b0 | a0 a1 b0 | a0 b0 a1 | a0 b0 a1 | b0 a0 a1 | b0 a0 a1 | - | - | a0 a1 b0 | a0 a1 b0 | a0 a1 b0 | a0 a1 b0 | a0 b0 a1 | a0 b0 a1 | a0 b0 a1 | a0 b0 a1 | b0 a0 a1 | b0 a0 a1 | b0 a0 a1 | b0 a0 a1 | a0 a1 b0 own]",
        );
    }

    #[test]
    fn results_without_debug_text_are_left_out() {
        let test = test_case("Opaque", &[], [&["opaque"], &["opaque"]]);
        check(
            &test,
            &concurrent([&["-"], &["-"]], None),
            "linearizable by a0 b0
left out: [`opaque`: no Debug text; final state: no Debug text]
runs=1 linearizations=1 ran=[a0 b0]",
        );
    }

    #[test]
    fn a_concurrent_run_that_panicked_is_left_to_the_panic_oracle() {
        let (test, mut run) = lost_update();
        run.outcome = Outcome::Panicked {
            thread: Some(0),
            call: 0,
            method: "hit".into(),
            message: "overflow".into(),
            location: None,
            also: vec![],
        };
        check(
            &test,
            &run,
            "not checked: the concurrent run did not pass: the panic oracle judges it
left out: []
runs=0 linearizations=0 ran=[]",
        );
    }

    /// The lost update's run, had a timed acquisition of it timed out: not checked, and no
    /// sequential run made (a confirmation or a shrinking candidate is judged the same way).
    #[test]
    fn a_run_whose_timed_acquisition_timed_out_is_not_checked() {
        let (test, mut run) = lost_update();
        run.timed_out = true;
        check(
            &test,
            &run,
            "not checked: a timed acquisition timed out or an attempt found its lock held: its call answered what only contention gives
left out: []
runs=0 linearizations=0 ran=[]",
        );
    }

    /// The only order that gives what the concurrent run answered never finished when run
    /// alone: its sequential runs ran out of time (a starved machine, a slow type). What it
    /// answers is unknown, so the run is no violation: inconclusive. The same order blocked
    /// for good does count against the run.
    #[test]
    fn an_order_that_only_ran_out_of_time_is_not_evidence_of_a_violation() {
        let test = test_case("Counter", &[], [&["hit"], &["hit"]]);
        let observed = concurrent([&["2"], &["1"]], Some("Counter { n: 2 }"));
        let verdict = |blocked_for_good: bool| {
            let check = check_results(
                &test,
                &observed,
                &mut SequentialOutcomes::new(),
                &ResultsConfig::default(),
                |order, _| match order.first() {
                    Some((1, _)) => Response {
                        outcome: Outcome::Deadlocked {
                            inside: [None, Some("hit".into())],
                            blocked_for_good,
                            lost_wakeup: None,
                        },
                        ..concurrent([&[], &[]], None)
                    },
                    _ => concurrent([&["1"], &["2"]], Some("Counter { n: 2 }")),
                },
            );
            match check.verdict {
                ResultsVerdict::Inconclusive { reason } => format!("inconclusive: {reason}"),
                ResultsVerdict::Violation(_) => "violation".to_string(),
                other => format!("{other:?}"),
            }
        };
        assert_eq!(
            verdict(false),
            "inconclusive: 1 of 2 linearizations only ran out of time when run sequentially: what they answer is unknown"
        );
        assert_eq!(verdict(true), "violation");
    }

    /// A steal that answered `Retry` beside another thread's call (crossbeam-deque's
    /// `Injector`): the contract's answer under contention, not judged; no sequential run made.
    #[test]
    fn an_answer_by_contention_is_not_checked() {
        let test = test_case("Counter", &[], [&["hit"], &["get", "get"]]);
        for (answer, shown) in [("Retry", "Retry"), ("Err(WouldBlock)", "Err(WouldBlock)")] {
            check(
                &test,
                &concurrent([&["1"], &["0", answer]], Some("Counter { n: 1 }")),
                &format!(
                    "not checked: `get` answered `{shown}`: what its type answers under contention, which no order of whole calls gives
left out: []
runs=0 linearizations=0 ran=[]"
                ),
            );
        }
        // A text that only contains such a word is an answer like any other.
        check(
            &test,
            &concurrent([&["1"], &["0", "Retrying(3)"]], Some("Counter { n: 1 }")),
            "violation: closest linearization: t2.1 t1.1 t2.2
  thread 2 call 2 `get`: observed Retrying(3), expected 1
left out: []
runs=21 linearizations=3 ran=[a0 b0 b1 | a0 b0 b1 | b0 a0 b1 | b0 a0 b1 | b0 b1 a0 | b0 b1 a0 | - | - | a0 b0 b1 | a0 b0 b1 | a0 b0 b1 | a0 b0 b1 | b0 a0 b1 | b0 a0 b1 | b0 a0 b1 | b0 a0 b1 | b0 b1 a0 | b0 b1 a0 | b0 b1 a0 | b0 b1 a0 | b0 a0 b1 own]",
        );
    }

    #[test]
    fn calls_that_block_when_run_alone_make_the_check_inconclusive() {
        let test = test_case("Counter", &[], [&["wait"], &["wait"]]);
        check(
            &test,
            &concurrent([&["()"], &["()"]], Some("Counter { n: 0 }")),
            "inconclusive: no linearization passed when run sequentially
left out: []
runs=4 linearizations=2 ran=[a0 b0 | b0 a0 | - | -]",
        );
    }

    #[test]
    fn linearizations_starting_like_one_that_blocked_are_not_run() {
        let test = test_case("Queue", &[], [&["take", "put"], &["put", "take"]]);
        check(
            &test,
            &concurrent([&["()", "()"], &["()", "()"]], Some("Queue { n: 0 }")),
            "linearizable by b0 a0 a1 b1\nleft out: []\nruns=2 linearizations=2 ran=[a0 a1 b0 b1 | b0 a0 a1 b1]",
        );
    }

    #[test]
    fn a_blocked_run_is_placed_by_its_events_only_when_they_follow_its_order() {
        let test = test_case("Queue", &[], [&["take", "put"], &["put", "take"]]);
        let order = [(1, 0), (0, 0), (0, 1), (1, 1)];
        let cases: [(&[EventSpec], Option<usize>); 4] = [
            (
                &[(1, "put", true), (1, "put", false), (0, "take", true)],
                Some(1),
            ),
            // A nested call inside put, and prefix events (thread 2), do not count.
            (
                &[
                    (2, "len", true),
                    (2, "len", false),
                    (1, "put", true),
                    (1, "grow", true),
                    (1, "grow", false),
                    (1, "put", false),
                    (0, "take", true),
                ],
                Some(1),
            ),
            // take is not the call the order runs second: the events cannot be trusted.
            (
                &[(1, "put", true), (1, "put", false), (0, "put", true)],
                None,
            ),
            // Every call ended: nothing was stuck.
            (&[(1, "put", true), (1, "put", false)], None),
        ];
        for (list, expect) in cases {
            assert_eq!(stuck_call(&test, &order, &events(list)), expect, "{list:?}");
        }
    }

    /// The mark's type path is the runtime's, which the harness writes its events with.
    #[test]
    fn the_held_guard_mark_is_the_runtimes() {
        let runtime = include_str!("../runtime/src/lib.rs");
        let declared = format!("pub const SCOPE_HELD: &str = {SCOPE_HELD:?};");
        assert!(runtime.contains(&declared), "{declared}");
    }

    /// A thread holds a scope's guard between the two events of the `(scope)` mark: blocked
    /// in a call inside the scope it does; blocked in a call after its scope ended, it does
    /// not.
    #[test]
    fn a_thread_blocked_inside_its_scope_holds_the_guard() {
        let mark = |thread: u8, start: bool, clock: u64| Event {
            clock,
            thread,
            type_path: SCOPE_HELD.into(),
            method: "entry".into(),
            start,
        };
        let mut run = events(&[
            (0, "entry", true),
            (0, "entry", false),
            (1, "entry", true),
            (1, "entry", false),
        ]);
        run.push(mark(0, true, 10));
        run.push(mark(1, true, 11));
        run.push(mark(1, false, 12));
        run.extend(events(&[(0, "get", true), (1, "get", true)]));
        assert_eq!(holding_guard(&run), [true, false]);
        assert_eq!(holding_guard(&events(&[(0, "get", true)])), [false, false]);
    }

    /// The calls made inside a scope (`let g = lock(); lock(); ..`) are the scope's call's:
    /// a second `lock` blocked inside it is the scope's call that blocked.
    #[test]
    fn a_call_blocked_inside_a_scope_is_the_scope_call() {
        let mut test = test_case("Lock", &[], [&["lock", "get"], &["get"]]);
        test.threads[0][0].scope = Some(Box::new(generator::Scope {
            then: vec![Call::new("lock", 0, vec![])],
            finish: Some(Call::new("set", 0, vec![])),
        }));
        let order = [(1, 0), (0, 0), (0, 1)];
        let list: &[EventSpec] = &[
            (1, "get", true),
            (1, "get", false),
            (0, "lock", true),
            (0, "lock", false),
            (0, "lock", true),
        ];
        assert_eq!(stuck_call(&test, &order, &events(list)), Some(1));
        // The held-guard mark around the scope's calls is no call of the order.
        let mut marked = events(list);
        marked.insert(
            4,
            Event {
                clock: 3,
                thread: 0,
                type_path: SCOPE_HELD.into(),
                method: "lock".into(),
                start: true,
            },
        );
        assert_eq!(stuck_call(&test, &order, &marked), Some(1));
    }

    #[test]
    fn too_many_linearizations_to_try_make_the_check_inconclusive() {
        let (test, run) = lost_update();
        let config = ResultsConfig {
            max_linearizations: 1,
            extra_runs: 0,
            ..ResultsConfig::default()
        };
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &config,
            "inconclusive: none of the first 1 of 2 linearizations matches
left out: []
runs=5 linearizations=1 ran=[a0 b0 | a0 b0 | - | - | a0 b0 own]",
        );
    }

    #[test]
    fn a_confirmation_rerun_reuses_the_sequential_outcomes_of_the_same_test() {
        let config = ResultsConfig::default();
        let mut outcomes = SequentialOutcomes::new();
        let (test, run) = lost_update();
        check_with(
            &test,
            &run,
            &mut outcomes,
            &config,
            &lost_update_rendered(
                15,
                "a0 b0 | a0 b0 | b0 a0 | b0 a0 | - | - | a0 b0 | a0 b0 | a0 b0 | a0 b0 | b0 a0 | b0 a0 | b0 a0 | b0 a0 | a0 b0 own",
            ),
        );
        assert_eq!(outcomes.len(), 15);
        check_with(
            &test,
            &run,
            &mut outcomes,
            &config,
            &lost_update_rendered(4, "a0 b0 | a0 b0 | a0 b0 | a0 b0"),
        );
        let twin = concurrent([&["2"], &["1"]], Some("Counter { n: 2 }"));
        check_with(
            &test,
            &twin,
            &mut outcomes,
            &config,
            "linearizable by b0 a0\nleft out: []\nruns=0 linearizations=2 ran=[]",
        );
        // Another test's calls: the outcomes start over.
        let other = test_case("Counter", &["hit"], [&["hit"], &["hit"]]);
        let run = concurrent([&["2"], &["3"]], Some("Counter { n: 3 }"));
        check_with(
            &other,
            &run,
            &mut outcomes,
            &config,
            "linearizable by a0 b0\nleft out: []\nruns=1 linearizations=1 ran=[a0 b0]",
        );
        assert_eq!(outcomes.len(), 1);
    }

    fn lost_update_rendered(runs: u32, ran: &str) -> String {
        format!(
            "violation: closest linearization: t1.1 t2.1
  thread 2 call 1 `hit`: observed 1, expected 2
  final state: observed Counter {{ n: 1 }}, expected Counter {{ n: 2 }}
left out: []
runs={runs} linearizations=2 ran=[{ran}]"
        )
    }

    #[test]
    fn linearizations_are_counted_without_listing_them() {
        for (lens, count) in [
            ([1, 1], 2),
            ([2, 1], 3),
            ([0, 3], 1),
            ([5, 5], 252),
            ([3, 4], 35),
        ] {
            assert_eq!(count_linearizations(lens), count);
            assert_eq!(linearizations(lens, usize::MAX).len(), count);
        }
    }

    #[test]
    fn a_violation_serialises_for_the_json_report() {
        let violation = ResultsVerdict::Violation(ResultsViolation {
            closest: vec![(0, 0), (1, 0)],
            differences: vec![Difference {
                place: Place::Call {
                    thread: 1,
                    index: 0,
                    method: "hit".into(),
                },
                observed: "1".into(),
                expected: "2".into(),
            }],
        });
        assert_eq!(
            serde_json::to_string(&violation).unwrap(),
            r#"{"kind":"violation","closest":[[0,0],[1,0]],"differences":[{"place":{"kind":"call","thread":1,"index":0,"method":"hit"},"observed":"1","expected":"2"}]}"#
        );
    }

    /// (thread, method, start).
    type EventSpec<'a> = (u8, &'a str, bool);

    /// Events of a run, in clock order.
    fn events(list: &[EventSpec]) -> Vec<Event> {
        list.iter()
            .enumerate()
            .map(|(clock, &(thread, method, start))| Event {
                clock: clock as u64,
                thread,
                type_path: "fixtures::Counter".into(),
                method: method.into(),
                start,
            })
            .collect()
    }

    /// `hit ∥ hit` on a counter, the second thread's call started and ended first: it answered
    /// 1, the first thread's 2.
    fn second_thread_first() -> Response {
        let mut run = concurrent([&["2"], &["1"]], Some("Counter { n: 2 }"));
        run.events = events(&[
            (1, "hit", true),
            (1, "hit", false),
            (0, "hit", true),
            (0, "hit", false),
        ]);
        run
    }

    /// An order already run for the test is compared before any order is run: a run whose
    /// results `b0 a0` gives, checked after a check that ran `b0 a0` only, runs nothing, though
    /// with no events to go by `a0 b0` comes first.
    #[test]
    fn orders_already_run_are_compared_before_any_is_run() {
        let test = test_case("Counter", &[], [&["hit"], &["hit"]]);
        let started_b = second_thread_first();
        let config = ResultsConfig::default();
        let mut outcomes = SequentialOutcomes::new();
        check_with(
            &test,
            &started_b,
            &mut outcomes,
            &config,
            "linearizable by b0 a0\nleft out: []\nruns=1 linearizations=1 ran=[b0 a0]",
        );
        let no_events = concurrent([&["2"], &["1"]], Some("Counter { n: 2 }"));
        check_with(
            &test,
            &no_events,
            &mut outcomes,
            &config,
            "linearizable by b0 a0\nleft out: []\nruns=0 linearizations=1 ran=[]",
        );
    }

    #[test]
    fn the_linearization_the_concurrent_run_started_its_calls_in_is_tried_first() {
        let test = test_case("Counter", &[], [&["hit"], &["hit"]]);
        check(
            &test,
            &second_thread_first(),
            "linearizable by b0 a0\nleft out: []\nruns=1 linearizations=1 ran=[b0 a0]",
        );
    }

    #[test]
    fn the_observed_order_counts_outermost_calls_only_and_needs_every_call() {
        let nested = events(&[
            (0, "hit", true),
            (1, "get", true),
            (0, "load", true),
            (0, "load", false),
            (0, "hit", false),
            (1, "get", false),
            (0, "hit", true),
            (0, "hit", false),
        ]);
        let mut run = concurrent([&[], &[]], None);
        run.events = nested;
        assert_eq!(
            observed_order([2, 1], &run),
            Some(vec![(0, 0), (1, 0), (0, 1)])
        );
        assert_eq!(observed_order([2, 2], &run), None);
        let swapped =
            |order: &[(u8, u32)], observed: &[(u8, u32)]| Ranks::of(observed).swapped_pairs(order);
        assert_eq!(
            swapped(&[(1, 0), (0, 0), (0, 1)], &[(0, 0), (1, 0), (0, 1)]),
            1
        );
        assert_eq!(
            swapped(&[(0, 0), (0, 1), (1, 0)], &[(1, 0), (0, 0), (0, 1)]),
            2
        );
        assert_eq!(
            swapped(&[(0, 0), (0, 1), (1, 0)], &[(0, 0), (0, 1), (1, 0)]),
            0
        );
        assert_eq!(
            swapped(&[(1, 0), (0, 0), (0, 1)], &[(0, 0), (0, 1), (1, 0)]),
            2
        );
    }

    /// The orders are tried fewest swapped pairs first, ties in lexicographic order: the same
    /// order as sorting by a pair count made by hand, for every observed order of 3 + 3 calls.
    #[test]
    fn linearizations_are_tried_fewest_swaps_first_and_ties_lexicographic() {
        let lens = [3, 3];
        let all = linearizations(lens, 1_000);
        assert_eq!(all.len(), 20);
        for observed in &all {
            let by_hand = |order: &Vec<(u8, u32)>| {
                let at = |call| observed.iter().position(|c| c == call).unwrap();
                let mut swapped = 0;
                for i in 0..order.len() {
                    for j in i + 1..order.len() {
                        swapped += usize::from(at(&order[j]) < at(&order[i]));
                    }
                }
                swapped
            };
            let mut expected: Vec<(usize, Vec<(u8, u32)>)> = all
                .iter()
                .map(|order| (by_hand(order), order.clone()))
                .collect();
            expected.sort();
            let mut sorted = all.clone();
            plausible_first(&mut sorted, observed);
            let expected: Vec<Vec<(u8, u32)>> = expected.into_iter().map(|(_, o)| o).collect();
            assert_eq!(sorted, expected, "observed {observed:?}");
            assert_eq!(&sorted[0], observed);
        }
    }

    #[test]
    fn configured_methods_and_final_state_are_never_compared() {
        let (test, run) = lost_update();
        let config = ResultsConfig {
            ignored_methods: ["hit".to_string()].into(),
            ..ResultsConfig::default()
        };
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &config,
            "violation: closest linearization: t1.1 t2.1
  final state: observed Counter { n: 1 }, expected Counter { n: 2 }
left out: [`hit`: ignored by configuration]
runs=15 linearizations=2 ran=[a0 b0 | a0 b0 | b0 a0 | b0 a0 | - | - | a0 b0 | a0 b0 | a0 b0 | a0 b0 | b0 a0 | b0 a0 | b0 a0 | b0 a0 | a0 b0 own]",
        );
        let config = ResultsConfig {
            ignored_methods: ["hit".to_string()].into(),
            compare_final_state: false,
            ..ResultsConfig::default()
        };
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &config,
            "linearizable by a0 b0
left out: [`hit`: ignored by configuration; final state: ignored by configuration]
runs=1 linearizations=1 ran=[a0 b0]",
        );
    }

    /// A method left out beside others (a mutants baseline's `is_full` beside `force_push`)
    /// is left out only in tests that call one of them; the final state likewise.
    #[test]
    fn a_method_left_out_beside_others_is_compared_in_tests_without_them() {
        let (test, run) = lost_update();
        let beside = |others: &[&str]| ResultsConfig {
            ignored_beside: [(
                "hit".to_string(),
                others.iter().map(|m| m.to_string()).collect(),
            )]
            .into(),
            state_ignored_beside: others.iter().map(|m| m.to_string()).collect(),
            ..ResultsConfig::default()
        };
        // Beside `hit`, which the test calls: as if both were configured out.
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &beside(&["hit"]),
            "linearizable by a0 b0
left out: [`hit`: ignored by configuration; final state: ignored by configuration]
runs=1 linearizations=1 ran=[a0 b0]",
        );
        // Beside `reset`, which it does not call: the lost update is reported.
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &beside(&["reset"]),
            &lost_update_rendered(
                15,
                "a0 b0 | a0 b0 | b0 a0 | b0 a0 | - | - | a0 b0 | a0 b0 | a0 b0 | a0 b0 | b0 a0 | b0 a0 | b0 a0 | b0 a0 | a0 b0 own",
            ),
        );
    }

    /// A method beside which nothing is compared (a mutants baseline's `force_push`): a test
    /// that calls it is not judged, nor run in order; one that does not is.
    #[test]
    fn a_test_calling_a_method_beside_which_nothing_is_compared_is_not_checked() {
        let (test, run) = lost_update();
        let unjudged = |methods: &[&str]| ResultsConfig {
            unjudged_beside: methods.iter().map(|m| m.to_string()).collect(),
            ..ResultsConfig::default()
        };
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &unjudged(&["hit"]),
            "not checked: the test calls `hit`, beside which the code as written gives results \
             no order of whole calls gives
left out: []
runs=0 linearizations=0 ran=[]",
        );
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &unjudged(&["reset"]),
            &lost_update_rendered(
                15,
                "a0 b0 | a0 b0 | b0 a0 | b0 a0 | - | - | a0 b0 | a0 b0 | a0 b0 | a0 b0 | b0 a0 | b0 a0 | b0 a0 | b0 a0 | a0 b0 own",
            ),
        );
        // Nor is a test of an instance left out whole.
        let instance = ResultsConfig {
            unjudged_instances: [instance_text(&test)].into(),
            ..ResultsConfig::default()
        };
        let mut outcomes = SequentialOutcomes::new();
        let check = check_results(&test, &run, &mut outcomes, &instance, |_, _| unreachable!());
        assert!(
            matches!(&check.verdict, ResultsVerdict::NotChecked { reason } if reason.contains("`new()`")),
            "{:?}",
            check.verdict
        );
    }

    /// quick_cache's `try_insert` answering `Err(..)` beside another insert on its shard:
    /// its doc's answer to a held lock, not judged; its success answers are.
    #[test]
    fn a_failure_the_doc_gives_a_held_lock_is_not_checked() {
        let line = "Returns `false` if the lock is held.";
        let config = ResultsConfig {
            contended: [(
                "fixtures::Counter".to_string(),
                [("get".to_string(), line.to_string())].into(),
            )]
            .into(),
            ..ResultsConfig::default()
        };
        let test = test_case("Counter", &[], [&["hit"], &["get", "get"]]);
        for answer in ["false", "None", "Err((\"a\", 1))"] {
            check_with(
                &test,
                &concurrent([&["1"], &["0", answer]], Some("Counter { n: 1 }")),
                &mut SequentialOutcomes::new(),
                &config,
                &format!(
                    "not checked: `get` answered `{answer}`: its doc says it fails when it finds a lock held (\"{line}\"), which no order of whole calls gives
left out: []
runs=0 linearizations=0 ran=[]"
                ),
            );
        }
        // A success answer no order gives is still a wrong result.
        check_with(
            &test,
            &concurrent([&["1"], &["0", "7"]], Some("Counter { n: 1 }")),
            &mut SequentialOutcomes::new(),
            &config,
            "violation: closest linearization: t2.1 t1.1 t2.2
  thread 2 call 2 `get`: observed 7, expected 1
left out: []
runs=21 linearizations=3 ran=[a0 b0 b1 | a0 b0 b1 | b0 a0 b1 | b0 a0 b1 | b0 b1 a0 | b0 b1 a0 | - | - | a0 b0 b1 | a0 b0 b1 | a0 b0 b1 | a0 b0 b1 | b0 a0 b1 | b0 a0 b1 | b0 a0 b1 | b0 a0 b1 | b0 b1 a0 | b0 b1 a0 | b0 b1 a0 | b0 b1 a0 | b0 a0 b1 own]",
        );
    }

    /// A config in which `get` of the fake `Counter` is approximate by its doc.
    /// A configuration in which the fixtures' `Counter::{method}` is approximate for `why`.
    fn approximate_counter(method: &str, why: Approximation) -> ResultsConfig {
        ResultsConfig {
            approximate: [(
                "fixtures::Counter".to_string(),
                [(method.to_string(), why)].into(),
            )]
            .into(),
            ..ResultsConfig::default()
        }
    }

    fn approximate_get() -> ResultsConfig {
        approximate_counter(
            "get",
            Approximation::Doc {
                line: "The count may be stale.".into(),
            },
        )
    }

    #[test]
    fn an_approximate_methods_results_are_not_compared_and_the_doc_says_why() {
        // `get` beside two hits answers 5, which no order gives.
        let test = test_case("Counter", &[], [&["hit", "hit"], &["get"]]);
        let run = concurrent([&["1", "2"], &["5"]], Some("Counter { n: 2 }"));
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &approximate_get(),
            "linearizable by a0 a1 b0
left out: [`get`: approximate answer: its doc says \"The count may be stale.\"]
runs=1 linearizations=1 ran=[a0 a1 b0]",
        );
        // Without the contract it is a wrong result.
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &ResultsConfig {
                extra_runs: 0,
                ..ResultsConfig::default()
            },
            "violation: closest linearization: t1.1 t1.2 t2.1
  thread 2 call 1 `get`: observed 5, expected 2
left out: []
runs=9 linearizations=3 ran=[a0 a1 b0 | a0 a1 b0 | a0 b0 a1 | a0 b0 a1 | b0 a0 a1 | b0 a0 a1 | - | - | a0 a1 b0 own]",
        );
    }

    #[test]
    fn beside_an_approximate_method_the_other_calls_and_the_final_state_are_still_compared() {
        let test = test_case("Counter", &[], [&["hit"], &["hit", "get"]]);
        let run = concurrent([&["1"], &["1", "7"]], Some("Counter { n: 1 }"));
        let config = ResultsConfig {
            extra_runs: 0,
            ..approximate_get()
        };
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &config,
            "violation: closest linearization: t1.1 t2.1 t2.2
  thread 2 call 1 `hit`: observed 1, expected 2
  final state: observed Counter { n: 1 }, expected Counter { n: 2 }
left out: [`get`: approximate answer: its doc says \"The count may be stale.\"]
runs=9 linearizations=3 ran=[a0 b0 b1 | a0 b0 b1 | b0 a0 b1 | b0 a0 b1 | b0 b1 a0 | b0 b1 a0 | - | - | a0 b0 b1 own]",
        );
    }

    #[test]
    fn a_method_is_approximate_only_in_the_type_whose_contract_says_so() {
        let test = test_case("Queue", &[], [&["put"], &["get"]]);
        let run = concurrent([&["()"], &["5"]], Some("Queue { n: 1 }"));
        let config = ResultsConfig {
            extra_runs: 0,
            ..approximate_get()
        };
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &config,
            "violation: closest linearization: t1.1 t2.1
  thread 2 call 1 `get`: observed 5, expected 0
left out: []
runs=7 linearizations=2 ran=[a0 b0 | a0 b0 | b0 a0 | b0 a0 | - | - | a0 b0 own]",
        );
    }

    /// A verdict past the campaign's deadline (and its grace) gives up, inconclusive, instead of
    /// running more orders; one with time left decides as before.
    #[test]
    fn a_verdict_past_the_deadline_gives_up_inconclusive() {
        let (test, run) = lost_update();
        let config = ResultsConfig::default();
        let past = std::time::Instant::now() - VERDICT_GRACE - std::time::Duration::from_secs(1);
        let mut runs = 0;
        let check = check_results_until(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &config,
            (Some(past), Depth::Full),
            |order, speed| {
                runs += 1;
                fake_run_at(&test, order, 0, speed)
            },
        );
        assert_eq!(check.verdict, out_of_time());
        assert_eq!(runs, 0);
        let later = std::time::Instant::now() + std::time::Duration::from_secs(3600);
        let check = check_results_until(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &config,
            (Some(later), Depth::Full),
            |order, speed| fake_run_at(&test, order, 0, speed),
        );
        assert!(
            matches!(check.verdict, ResultsVerdict::Violation(_)),
            "{:?}",
            check.verdict
        );
    }

    /// mini-moka's `Cache` "performs a best-effort bounding of the map": its type's doc makes
    /// every answer approximate, and its final state is not compared either.
    #[test]
    fn a_type_whose_doc_makes_its_contents_approximate_has_no_final_state_compared() {
        let (test, run) = lost_update();
        let why = Approximation::TypeDoc {
            line: "It keeps entries on a best-effort basis.".into(),
        };
        let model = Model {
            types: vec![analysis::TypeModel {
                path: test.type_path.clone(),
                methods: vec![analysis::Method {
                    name: "hit".into(),
                    approximate: Some(why.clone()),
                    ..analysis::Method::default()
                }],
                ..analysis::TypeModel::default()
            }],
            ..Model::default()
        };
        let mut config = ResultsConfig::default();
        config.learn_contracts(&model);
        assert_eq!(config.approximate_state[&test.type_path], why);
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &config,
            "linearizable by a0 b0
left out: [`hit`: approximate answer: its type's doc says \"It keeps entries on a best-effort basis.\"; final state: approximate answer: its type's doc says \"It keeps entries on a best-effort basis.\"]
runs=1 linearizations=1 ran=[a0 b0]",
        );
    }

    #[test]
    fn the_contracts_are_learnt_from_the_models_methods() {
        let method = |name: &str, approximate: Option<Approximation>| analysis::Method {
            name: name.into(),
            approximate,
            ..analysis::Method::default()
        };
        let model = Model {
            types: vec![analysis::TypeModel {
                path: "k::Set".into(),
                methods: vec![
                    method("insert", None),
                    method("len", Some(Approximation::Configured)),
                    method("Shard::len", Some(Approximation::Configured)),
                ],
                ..analysis::TypeModel::default()
            }],
            ..Model::default()
        };
        let mut config = ResultsConfig::default();
        config.learn_contracts(&model);
        let set = &config.approximate["k::Set"];
        assert_eq!(set.keys().collect::<Vec<_>>(), ["Shard::len", "len"]);
        assert_eq!(config.not_compared("k::Set", "insert"), None);
        assert_eq!(
            config.not_compared("k::Set", "len"),
            Some(LeftOutReason::Approximate {
                why: Approximation::Configured
            })
        );
        assert_eq!(config.not_compared("k::Other", "len"), None);
        let mut model = model;
        model.types[0].methods.push(analysis::Method {
            holds: true,
            ..method("entry", None)
        });
        model.types[0].methods.push(analysis::Method {
            iterates: true,
            ..method("iter", None)
        });
        model.types[0].methods.push(analysis::Method {
            coalesces: Some("Only one of the calls evaluates its closure.".into()),
            ..method("get_with", None)
        });
        model.types[0].methods.push(analysis::Method {
            contended: Some("Returns `None` if the entry could not be locked.".into()),
            ..method("try_entry", None)
        });
        config.learn_contracts(&model);
        assert_eq!(config.holding["k::Set"], ["entry".to_string()].into());
        assert_eq!(
            config.contended["k::Set"],
            [(
                "try_entry".to_string(),
                "Returns `None` if the entry could not be locked.".to_string()
            )]
            .into()
        );
        // Its successes are compared.
        assert_eq!(config.not_compared("k::Set", "try_entry"), None);
        assert_eq!(config.driven["k::Set"], ["iter".to_string()].into());
        assert_eq!(
            config.coalescing["k::Set"],
            [("get_with".to_string(), ClosureShape::Value)].into()
        );
        // sled's `Db::open_tree` hands out a `Tree`: its answer is left out; a handle from
        // the constructor's tuple names no method.
        let via = |from: &str| analysis::Via {
            ty: "k::Tree".into(),
            from: from.into(),
            shape: analysis::ReturnShape::default(),
            kept: None,
        };
        // As in a real model, the maker is one of the type's own methods.
        model.types[0].methods.push(method("open_tree", None));
        model.types[0].methods.push(analysis::Method {
            via: Some(via("open_tree")),
            ..method("Tree::insert", None)
        });
        model.types[0].methods.push(analysis::Method {
            via: Some(via("#1")),
            ..method("Tree::len", None)
        });
        config.learn_contracts(&model);
        assert_eq!(
            config.not_compared("k::Set", "open_tree"),
            Some(LeftOutReason::HandsOut {
                handle: "k::Tree".into()
            })
        );
        assert_eq!(config.handing_out["k::Set"].len(), 1);
        assert_eq!(config.not_compared("k::Set", "Tree::insert"), None);
        // A handle's method handing out a type in turn (`Config`'s `Db::open_tree`).
        model.types[0].methods.push(analysis::Method {
            via: Some(via("open")),
            hands_out: Some(analysis::HandedOut {
                ty: "k::Leaf".into(),
                shape: analysis::ReturnShape::ResultSelf,
            }),
            ..method("Tree::open_leaf", None)
        });
        config.learn_contracts(&model);
        assert_eq!(
            config.not_compared("k::Set", "Tree::open_leaf"),
            Some(LeftOutReason::HandsOut {
                handle: "k::Leaf".into()
            })
        );
    }

    /// Two `hit`s of one key that the fake's type coalesces (moka's `get_with`: the second
    /// waited for the first's closure and answered its value): both answered 1, which no
    /// order of the calls gives, but their contract allows. On different keys it is a
    /// violation still, as it is when the method does not coalesce.
    #[test]
    fn a_coalescing_call_may_answer_what_the_other_threads_call_on_its_key_answered() {
        let mut test = test_case("Counter", &[], [&["hit"], &["hit"]]);
        let key = |test: &mut TestCase, t: usize, k: i128| {
            test.threads[t][0].args = vec![generator::Value::Int(k)];
        };
        key(&mut test, 0, 7);
        key(&mut test, 1, 7);
        let coalescing = ResultsConfig {
            extra_runs: 0,
            coalescing: [(
                "fixtures::Counter".to_string(),
                [("hit".to_string(), ClosureShape::Value)].into(),
            )]
            .into(),
            ..ResultsConfig::default()
        };
        // The coalesced call's own effect is absent (the count is 1, every order makes it
        // 2): the final state is not compared either.
        let run = concurrent([&["1"], &["1"]], Some("Counter { n: 1 }"));
        check_with(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &coalescing,
            "linearizable by a0 b0\nleft out: []\nruns=1 linearizations=1 ran=[a0 b0]",
        );
        let violation = |test: &TestCase, config: &ResultsConfig| {
            let mut outcomes = SequentialOutcomes::new();
            let check = check_results(test, &run, &mut outcomes, config, |order, speed| {
                fake_run_at(test, order, 0, speed)
            });
            matches!(check.verdict, ResultsVerdict::Violation(_))
        };
        let plain = ResultsConfig {
            extra_runs: 0,
            ..ResultsConfig::default()
        };
        assert!(violation(&test, &plain));
        key(&mut test, 1, 8);
        assert!(violation(&test, &coalescing));
        // A coalescing method whose closure gives another kind of answer (moka's
        // `optionally_get_with` beside a `get_with`) is not coalesced with it: each may answer
        // its own closure's value, and neither answer is compared.
        let mut mixed = test_case("Counter", &[], [&["hit"], &["get"]]);
        key(&mut mixed, 0, 7);
        key(&mut mixed, 1, 7);
        let run = concurrent([&["1"], &["5"]], None);
        let mut shapes = coalescing.clone();
        shapes
            .coalescing
            .get_mut("fixtures::Counter")
            .unwrap()
            .insert("get".into(), ClosureShape::Option);
        let linearizable = |test: &TestCase, config: &ResultsConfig| {
            let check = check_results(
                test,
                &run,
                &mut SequentialOutcomes::new(),
                config,
                |o, s| fake_run_at(test, o, 0, s),
            );
            matches!(check.verdict, ResultsVerdict::Linearizable { .. })
        };
        assert!(linearizable(&mixed, &shapes));
        assert!(!linearizable(&mixed, &coalescing));
    }

    /// moka 0.9.6's `optionally_get_with(3, || None) ∥ optionally_get_with(3, || Some(0));
    /// optionally_get_with(3, || Some(2))`: the first two answered `None` (coalesced: the
    /// second waited for the first's closure), so the third ran its own. Which closure ran is
    /// not known: one rewrite gives the second call the first's closure, the other the first
    /// the second's. Calls that answered differently, or on another key, are not rewritten.
    #[test]
    fn coalesced_calls_are_rewritten_with_either_ones_closure() {
        use generator::Value;
        let mut test = test_case(
            "Cache",
            &[],
            [
                &["optionally_get_with"],
                &["optionally_get_with", "optionally_get_with"],
            ],
        );
        let closure = |v: Option<i128>| {
            Value::Closure(Box::new(Value::Option(v.map(|v| Box::new(Value::Int(v))))))
        };
        test.threads[0][0].args = vec![Value::Int(3), closure(None)];
        test.threads[1][0].args = vec![Value::Int(3), closure(Some(0))];
        test.threads[1][1].args = vec![Value::Int(3), closure(Some(2))];
        let config = ResultsConfig {
            coalescing: [(
                "fixtures::Cache".to_string(),
                [("optionally_get_with".to_string(), ClosureShape::Option)].into(),
            )]
            .into(),
            ..ResultsConfig::default()
        };
        let closures = |t: &TestCase| -> Vec<Vec<Value>> {
            t.threads
                .iter()
                .map(|calls| calls.iter().map(|c| c.args[1].clone()).collect())
                .collect()
        };
        let run = concurrent([&["None"], &["None", "Some(2)"]], None);
        let variants: Vec<_> = config
            .coalesced_variants(&test, &run)
            .iter()
            .map(closures)
            .collect();
        assert_eq!(
            variants,
            [
                vec![vec![closure(None)], vec![closure(None), closure(Some(2))]],
                vec![
                    vec![closure(Some(0))],
                    vec![closure(Some(0)), closure(Some(2))]
                ],
            ]
        );
        // Different answers: each ran its own closure (moka 0.9.5's bug when both are
        // `Some`), nothing to rewrite.
        let run = concurrent([&["None"], &["Some(0)", "Some(0)"]], None);
        assert!(config.coalesced_variants(&test, &run).is_empty());
        // Another key, or a method that does not coalesce.
        let run = concurrent([&["None"], &["None", "Some(2)"]], None);
        let mut other_key = test.clone();
        other_key.threads[1][0].args[0] = Value::Int(4);
        assert!(config.coalesced_variants(&other_key, &run).is_empty());
        assert!(ResultsConfig::default()
            .coalesced_variants(&test, &run)
            .is_empty());
        // Judged: no order of the calls as written gives `None, None, Some(2)`; the rewrite
        // in which the second call waited for the first's `|| None` does.
        let verdict = |test: &TestCase| {
            let check = check_results(
                test,
                &run,
                &mut SequentialOutcomes::new(),
                &config,
                |o, s| fake_run_at(test, o, 0, s),
            );
            match check.verdict {
                ResultsVerdict::Violation(_) => "violation",
                ResultsVerdict::Linearizable { .. } => "linearizable",
                _ => "other",
            }
        };
        let variants = config.coalesced_variants(&test, &run);
        assert_eq!(
            [verdict(&test), verdict(&variants[0]), verdict(&variants[1])],
            ["violation", "linearizable", "violation"]
        );
    }

    /// A test calling a method its doc says is not atomic (sled's `Tree::clear`) is not judged:
    /// a key the other thread's `compare_and_swap` put in while `clear` removed keys one by
    /// one survives it, which no order of whole calls gives.
    #[test]
    fn a_test_calling_a_method_documented_not_atomic_is_not_judged() {
        let test = test_case("Counter", &[], [&["hit"], &["get"]]);
        let run = concurrent([&["1"], &["7"]], Some("Counter { n: 1 }"));
        let config = ResultsConfig {
            extra_runs: 0,
            ..approximate_counter(
                "hit",
                Approximation::NotAtomic {
                    line: "Note that this is not atomic.".into(),
                },
            )
        };
        let check = check_results(
            &test,
            &run,
            &mut SequentialOutcomes::new(),
            &config,
            |o, s| fake_run_at(&test, o, 0, s),
        );
        match check.verdict {
            ResultsVerdict::NotChecked { reason } => assert!(reason.contains("`hit`"), "{reason}"),
            other => panic!("{other:?}"),
        }
        // Another approximation of the same method leaves only its answer out: `get` is judged.
        let doc = ResultsConfig {
            extra_runs: 0,
            ..approximate_counter(
                "hit",
                Approximation::Doc {
                    line: "An estimate.".into(),
                },
            )
        };
        let check = check_results(&test, &run, &mut SequentialOutcomes::new(), &doc, |o, s| {
            fake_run_at(&test, o, 0, s)
        });
        assert!(
            matches!(check.verdict, ResultsVerdict::Violation(_)),
            "{:?}",
            check.verdict
        );
    }

    /// A test whose instance a constructor built whose doc says its calls pair up (a
    /// zero-capacity channel: a `try_send` that met a waiting `recv_timeout` answers `Ok`, and
    /// the receive the message, where each alone finds no partner) is not judged; one built
    /// by another constructor of the same type is.
    #[test]
    fn a_test_of_an_instance_whose_calls_pair_up_is_not_judged() {
        let mut test = test_case("Counter", &[], [&["hit"], &["get"]]);
        let run = concurrent([&["1"], &["7"]], Some("Counter { n: 1 }"));
        let line = "send and receive operations must appear at the same time in order to pair up";
        let config = ResultsConfig {
            extra_runs: 0,
            rendezvous: BTreeMap::from([(
                "fixtures::Counter".to_string(),
                BTreeMap::from([("bounded".to_string(), line.to_string())]),
            )]),
            ..ResultsConfig::default()
        };
        let verdict = |test: &TestCase| {
            check_results(
                test,
                &run,
                &mut SequentialOutcomes::new(),
                &config,
                |o, s| fake_run_at(test, o, 0, s),
            )
            .verdict
        };
        assert!(
            matches!(verdict(&test), ResultsVerdict::Violation(_)),
            "built by `new`"
        );
        test.instances[0].method = "bounded".into();
        match verdict(&test) {
            ResultsVerdict::NotChecked { reason } => {
                assert!(
                    reason.contains("`bounded`") && reason.contains("pair up"),
                    "{reason}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    /// A call its thread skipped for want of a kept value (sled's `Db::open_tree` on a `Db`
    /// whose `open` found the file lock the other thread's `open` held) is not compared: its
    /// thread's keep says whether the value was there. A wrong answer beside it still is.
    #[test]
    fn a_call_skipped_for_want_of_a_kept_value_is_not_compared() {
        let test = test_case("Counter", &[], [&["get"], &["hit"]]);
        let config = ResultsConfig {
            extra_runs: 0,
            ..ResultsConfig::default()
        };
        let verdict = |run: &Response| {
            check_results(
                &test,
                run,
                &mut SequentialOutcomes::new(),
                &config,
                |o, s| fake_run_at(&test, o, 0, s),
            )
            .verdict
        };
        let skipped = concurrent([&[SKIPPED], &["1"]], Some("Counter { n: 1 }"));
        assert!(
            matches!(verdict(&skipped), ResultsVerdict::Linearizable { .. }),
            "{:?}",
            verdict(&skipped)
        );
        let wrong = concurrent([&["7"], &["1"]], Some("Counter { n: 1 }"));
        assert!(matches!(verdict(&wrong), ResultsVerdict::Violation(_)));
    }

    /// A draining iterator beside a `get` that saw it part way (the fake's `get` answered 7,
    /// which no order gives): only the final state is compared.
    #[test]
    fn in_a_test_with_a_driven_iterator_only_the_final_state_is_compared() {
        let test = test_case("Counter", &[], [&["keys"], &["get"]]);
        let config = ResultsConfig {
            driven: [("fixtures::Counter".to_string(), ["keys".to_string()].into())].into(),
            ..ResultsConfig::default()
        };
        let why = "answers an iterator driven item by item: meanwhile the other thread may \
                   find the object part way through";
        check_with(
            &test,
            &concurrent([&["[1, 2]"], &["7"]], Some("Counter { n: 0 }")),
            &mut SequentialOutcomes::new(),
            &config,
            &format!(
                "linearizable by a0 b0\nleft out: [`get`: `keys` {why}; `keys`: `keys` {why}]\n\
                 runs=1 linearizations=1 ran=[a0 b0]"
            ),
        );
    }

    /// A `lock` of the fake `Counter` whose guard the other thread's `hit` found held (it
    /// answered `busy`, which no order of whole calls gives): no call's answer is compared
    /// in the test, but the final state still is.
    #[test]
    fn in_a_test_with_a_call_whose_answer_holds_the_object_only_the_final_state_is_compared() {
        let test = test_case("Counter", &[], [&["lock"], &["hit"]]);
        let config = ResultsConfig {
            extra_runs: 0,
            holding: [("fixtures::Counter".to_string(), ["lock".to_string()].into())].into(),
            ..ResultsConfig::default()
        };
        let held = "left out: [`hit`: `lock` answers a value that holds the object until it is \
                    dropped: meanwhile the other thread may find it locked or busy; `lock`: \
                    `lock` answers a value that holds the object until it is dropped: meanwhile \
                    the other thread may find it locked or busy]";
        check_with(
            &test,
            &concurrent([&["Guard(0)"], &["busy"]], Some("Counter { n: 1 }")),
            &mut SequentialOutcomes::new(),
            &config,
            &format!("linearizable by a0 b0\n{held}\nruns=1 linearizations=1 ran=[a0 b0]"),
        );
        check_with(
            &test,
            &concurrent([&["Guard(0)"], &["busy"]], Some("Counter { n: 0 }")),
            &mut SequentialOutcomes::new(),
            &config,
            &format!(
                "violation: closest linearization: t1.1 t2.1
  final state: observed Counter {{ n: 0 }}, expected Counter {{ n: 1 }}
{held}
runs=7 linearizations=2 ran=[a0 b0 | a0 b0 | b0 a0 | b0 a0 | - | - | a0 b0 own]"
            ),
        );
        // A call that answered a failure may have failed because the hold lived: its
        // effect's absence from the final state is no violation either.
        check_with(
            &test,
            &concurrent([&["Guard(0)"], &["false"]], Some("Counter { n: 0 }")),
            &mut SequentialOutcomes::new(),
            &config,
            &format!(
                "linearizable by a0 b0\n{}; final state: `lock` answers a value that holds the \
                 object until it is dropped: meanwhile the other thread may find it locked or \
                 busy]\nruns=1 linearizations=1 ran=[a0 b0]",
                held.trim_end_matches(']')
            ),
        );
        // Without the contract, the answer `busy` is a wrong result.
        check_with(
            &test,
            &concurrent([&["Guard(0)"], &["busy"]], Some("Counter { n: 1 }")),
            &mut SequentialOutcomes::new(),
            &ResultsConfig {
                extra_runs: 0,
                ..ResultsConfig::default()
            },
            "violation: closest linearization: t1.1 t2.1
  thread 2 call 1 `hit`: observed busy, expected 1
left out: []
runs=7 linearizations=2 ran=[a0 b0 | a0 b0 | b0 a0 | b0 a0 | - | - | a0 b0 own]",
        );
    }

    /// [`allowed_outcomes`] on the fake type.
    mod allowed {
        use super::*;

        /// Renders the allowed outcomes of `test` (or `none`) and the orders run.
        fn check(test: &TestCase, config: &ResultsConfig, expect: &str) {
            let mut ran = Vec::new();
            let allowed = allowed_outcomes(test, &mut SequentialOutcomes::new(), config, |order| {
                ran.push(if order.is_empty() {
                    "-".to_string()
                } else {
                    order_text(order)
                });
                fake_run(test, order, ran.len() as u64 - 1)
            });
            let got = match allowed {
                None => "none".to_string(),
                Some(a) => {
                    let calls: Vec<String> = a.calls.iter().map(|c| order_text(&[*c])).collect();
                    let outcomes: Vec<String> = a
                        .outcomes
                        .iter()
                        .map(|o| format!("{}: {}", order_text(&o.order), o.texts.join(" | ")))
                        .collect();
                    let left_out: Vec<String> = a.left_out.iter().map(|l| l.to_string()).collect();
                    format!(
                        "calls [{}] final state {}\n{}\nleft out: [{}]",
                        calls.join(" "),
                        a.final_state,
                        outcomes.join("\n"),
                        left_out.join("; ")
                    )
                }
            };
            assert_eq!(format!("{got}\nran=[{}]", ran.join(" | ")), expect);
        }

        #[test]
        fn every_linearization_gives_an_outcome_with_its_results_and_final_state() {
            check(
                &test_case("Counter", &[], [&["hit"], &["hit"]]),
                &ResultsConfig::default(),
                "calls [a0 b0] final state true
a0 b0: 1 | 2 | Counter { n: 2 }
b0 a0: 2 | 1 | Counter { n: 2 }
left out: []
ran=[- | - | a0 b0 | a0 b0 | b0 a0 | b0 a0]",
            );
        }

        #[test]
        fn a_method_whose_text_changes_between_runs_is_masked_and_listed() {
            check(
                &test_case("Counter", &[], [&["new_id"], &["hit"]]),
                &ResultsConfig::default(),
                "calls [b0] final state true
a0 b0: 1 | Counter { n: 1 }
left out: [`new_id`: its Debug text differed between two sequential runs of the same calls (Id(21) vs Id(31))]
ran=[- | - | a0 b0 | a0 b0 | b0 a0 | b0 a0]",
            );
        }

        #[test]
        fn an_unstable_final_state_and_a_method_without_debug_are_left_out() {
            check(
                &test_case("Map", &[], [&["keys"], &["opaque"]]),
                &ResultsConfig::default(),
                "calls [] final state false
a0 b0: 
left out: [`keys`: its Debug text differed between two sequential runs of the same calls ([1, 2] vs [2, 1]); `opaque`: no Debug text; final state: its Debug text differed between two sequential runs of the same calls ({1: 1, 2: 2} vs {2: 2, 1: 1})]
ran=[- | - | a0 b0 | a0 b0 | b0 a0 | b0 a0]",
            );
        }

        #[test]
        fn an_order_that_blocks_when_run_alone_gives_no_outcome() {
            check(
                &test_case("Queue", &[], [&["take"], &["put"]]),
                &ResultsConfig::default(),
                "calls [a0 b0] final state true
b0 a0: () | () | Queue { n: 0 }
left out: []
ran=[- | - | a0 b0 | b0 a0 | b0 a0]",
            );
        }

        #[test]
        fn an_approximate_methods_calls_are_masked_and_listed() {
            check(
                &test_case("Counter", &[], [&["hit"], &["get"]]),
                &approximate_get(),
                "calls [a0] final state true
a0 b0: 1 | Counter { n: 1 }
left out: [`get`: approximate answer: its doc says \"The count may be stale.\"]
ran=[- | - | a0 b0 | a0 b0 | b0 a0 | b0 a0]",
            );
        }

        #[test]
        fn no_outcomes_are_known_when_there_are_too_many_orders_or_none_passes() {
            let config = ResultsConfig {
                max_linearizations: 5,
                ..ResultsConfig::default()
            };
            check(
                &test_case("Counter", &[], [&["hit", "hit"], &["hit", "hit"]]),
                &config,
                "none\nran=[]",
            );
            check(
                &test_case("Queue", &[], [&["wait"], &["wait"]]),
                &ResultsConfig::default(),
                "none\nran=[- | - | a0 b0 | b0 a0]",
            );
        }
    }
}
