//! The worker: reads one request per line on stdin, runs it, answers one line on stdout.
//!
//! Thread 0's suffix runs on the main thread and thread 1's on a persistent helper thread. A
//! run starts when the main thread bumps `GO`; the helper acknowledges (`ACK`) and both run at
//! once, so the start skew is one cache-line transfer. Waiting is spin-then-yield-then-park, so
//! an idle worker does not burn a core and two spinners never starve each other for long.
//! A watchdog thread polls the running test's start time and answers `deadlocked` itself, then
//! ends the process: a thread cannot be cancelled, a process can.

use crate::points::{
    self, set_role, RawEvent, ABANDON, BUFFERS, CAPTURE, LAST_PANIC, NOISE, NO_ROLE, PACE_CALLS,
    STARTED_US,
};
use crate::sched;
use crate::stuck::{self, Snapshot};
use crate::sync;
use crate::time;
use crate::value::{Arg, Call, CallError, FromArg, TestData};
use covcon_protocol::refs::MethodRef;
use covcon_protocol::{BatchRun, Control, Event, Noise, Outcome, Request, Response};
use serde::Deserialize;
use serde_json::Value as Json;
use std::io::{BufRead, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// One type under test, as the generated harness drives it.
pub trait Driver: Sync + 'static {
    type Instance: Send + Sync + 'static;

    /// `krate::module::Type`, as in the model and the test cases.
    fn type_path(&self) -> &'static str;

    /// Runs one constructor call (`call.method` names it); `cx` holds the instances built
    /// before this one.
    fn construct(
        &self,
        call: &Call,
        cx: &Cx<'_, Self::Instance>,
    ) -> Result<Constructed<Self::Instance>, CallError>;

    /// Runs one method call on `cx.receiver(call)`, answering the `Debug` text of its result.
    fn invoke(&self, call: &Call, cx: &Cx<'_, Self::Instance>)
        -> Result<Option<String>, CallError>;

    /// `Debug` text of an instance, when its type has `Debug`.
    fn state(&self, instance: &Self::Instance) -> Option<String>;

    /// Runs a call whose result the test keeps as a handle (`let h0 = c0.add(3)`): a method
    /// of the instance that returns another thread-safe type. The default knows none.
    fn handle(&self, call: &Call, _cx: &Cx<'_, Self::Instance>) -> Result<Handle, CallError> {
        Err(CallError(format!("no handle method `{}`", call.method)))
    }

    /// Whether each run gets a fresh, empty directory for its path arguments ([`RunDir`]): the
    /// type takes paths, and what one run writes there must not be what the next run finds.
    fn fresh_dir(&self) -> bool {
        false
    }
}

/// The fresh directory of one run of a type that takes paths: made in the worker's directory
/// (covcon's, under its output directory) and removed when the run ends. The run's path
/// arguments are in it ([`run_path`]), absolute, so a thread left over from an earlier run
/// (one the watchdog gave up on) writes to its own run's directory, never to this one; and
/// the run's texts name it `.` ([`RunDir::tidy`]), so every run's results read alike. It is
/// also the worker's working directory while the run lasts: a path the type makes up itself
/// is relative (sled's `Config::default()` opens `default.sled`), and in one directory shared
/// by the runs and both workers a run found another worker's lock held, or the files an
/// earlier run had written.
struct RunDir {
    dir: std::path::PathBuf,
    /// The working directory before the run, set again when it ends.
    before: Option<std::path::PathBuf>,
}

/// The directory of the run under way, if its type takes paths.
static RUN_DIR: Mutex<Option<std::path::PathBuf>> = Mutex::new(None);

impl RunDir {
    fn enter() -> Option<RunDir> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::current_dir()
            .ok()?
            .join(format!("run-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        *RUN_DIR.lock().unwrap_or_else(|p| p.into_inner()) = Some(dir.clone());
        let before = std::env::current_dir().ok();
        let _ = std::env::set_current_dir(&dir);
        Some(RunDir { dir, before })
    }

    /// `answer`'s texts with this run's directory written `.`.
    fn tidy(&self, mut answer: Answer) -> Answer {
        let Some(dir) = self.dir.to_str() else {
            return answer;
        };
        let tidy = |text: &mut Option<String>| {
            if let Some(t) = text.as_mut().filter(|t| t.contains(dir)) {
                *t = t.replace(dir, ".");
            }
        };
        answer.prefix_results.iter_mut().for_each(tidy);
        answer.results.iter_mut().flatten().for_each(tidy);
        tidy(&mut answer.final_state);
        answer
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        *RUN_DIR.lock().unwrap_or_else(|p| p.into_inner()) = None;
        if let Some(before) = &self.before {
            let _ = std::env::set_current_dir(before);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A path argument (`PathBuf::from(path)`): in the directory of the run under way when its
/// type takes paths ([`Driver::fresh_dir`]), as written otherwise.
#[doc(hidden)]
pub fn run_path(path: String) -> std::path::PathBuf {
    match &*RUN_DIR.lock().unwrap_or_else(|p| p.into_inner()) {
        Some(dir) => dir.join(path),
        None => std::path::PathBuf::from(path),
    }
}

/// A handle a test keeps: what a handle method returned, of a type the driver knows.
pub type Handle = Box<dyn std::any::Any + Send + Sync>;

/// What a constructor built: the instance, and for a function returning a tuple (a channel's
/// two halves), the other elements (`None` at the instance's own place), which the test takes
/// as handles `#k` ([`Cx::take_element`]).
pub type Constructed<T> = (Arc<T>, Vec<Option<Handle>>);

/// An instance with its type erased: an `Arc<dyn Any>` around the driver's `Arc<Instance>`,
/// so that the worker's code exists once, not once per type of the harness ([`Erased`]).
type AnyInstance = Arc<dyn std::any::Any + Send + Sync>;

/// What a driver's call can see: the instances and handles of the current test, and what
/// else the instances' constructors returned.
pub struct Cx<'a, T> {
    instances: &'a [AnyInstance],
    handles: &'a [Handle],
    /// The running thread's locals (`generator::Call::keep`), numbered from `local_base`
    /// (after the handles, thread 1's after thread 0's); empty outside the threads.
    locals: &'a [OnceLock<Handle>],
    local_base: usize,
    elements: &'a [Mutex<Vec<Option<Handle>>>],
    /// The type the instances are `Arc`s of, which [`Cx::receiver`] answers.
    instance: std::marker::PhantomData<fn() -> T>,
}

impl<T> Clone for Cx<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Cx<'_, T> {}

impl<'a, T> Cx<'a, T> {
    /// The same view, its instances taken as `Arc<U>`s.
    fn typed<U>(self) -> Cx<'a, U> {
        Cx {
            instances: self.instances,
            handles: self.handles,
            locals: self.locals,
            local_base: self.local_base,
            elements: self.elements,
            instance: std::marker::PhantomData,
        }
    }

    /// Argument `i` of `call`, decoded.
    pub fn arg<A: FromArg>(&self, call: &Call, i: usize) -> Result<A, CallError> {
        let arg = call
            .args
            .get(i)
            .ok_or_else(|| CallError(format!("`{}` needs argument {i}", call.method)))?;
        A::from_arg(arg).map_err(|e| CallError(format!("argument {i} of `{}`: {e}", call.method)))
    }

    /// Argument `i` of `call`, undecoded (for arguments built by a value builder).
    pub fn raw<'c>(&self, call: &'c Call, i: usize) -> Result<&'c Arg, CallError> {
        call.args
            .get(i)
            .ok_or_else(|| CallError(format!("`{}` needs argument {i}", call.method)))
    }

    /// The value a closure argument `i` of `call` returns, decoded.
    pub fn closure_value<A: FromArg>(&self, call: &Call, i: usize) -> Result<A, CallError> {
        match call.args.get(i) {
            Some(Arg::Closure(inner)) => A::from_arg(inner)
                .map_err(|e| CallError(format!("argument {i} of `{}`: {e}", call.method))),
            _ => self.arg(call, i),
        }
    }

    /// Argument `i` of `call`, which must be an instance number.
    pub fn instance(&self, call: &Call, i: usize) -> Result<&'a Arc<T>, CallError>
    where
        T: 'static,
    {
        match call.args.get(i) {
            Some(Arg::Instance(k)) => self.nth(*k),
            Some(Arg::Closure(inner)) => match **inner {
                Arg::Instance(k) => self.nth(k),
                _ => Err(CallError(format!(
                    "argument {i} of `{}` is not an instance",
                    call.method
                ))),
            },
            _ => Err(CallError(format!(
                "argument {i} of `{}` is not an instance",
                call.method
            ))),
        }
    }

    /// The instance `call` is made on.
    pub fn receiver(&self, call: &Call) -> Result<&'a Arc<T>, CallError>
    where
        T: 'static,
    {
        self.nth(call.receiver)
    }

    /// The handle a handle method's `call` is made on, as the type it was kept as.
    pub fn handle<H: 'static>(&self, call: &Call) -> Result<&'a H, CallError> {
        self.kept(call, call.receiver)
    }

    /// Element `k` of the tuple the constructor of `call`'s receiver returned, taken (each
    /// element is kept once, as a handle).
    pub fn take_element(&self, call: &Call, k: usize) -> Result<Handle, CallError> {
        let missing = || CallError(format!("instance {} has no element {k}", call.receiver));
        let elements = self.elements.get(call.receiver).ok_or_else(missing)?;
        let mut elements = elements.lock().unwrap_or_else(|e| e.into_inner());
        elements
            .get_mut(k)
            .and_then(Option::take)
            .ok_or_else(missing)
    }

    /// The handle argument `i` of `call` names, as the type it was kept as.
    pub fn handle_arg<H: 'static>(&self, call: &Call, i: usize) -> Result<&'a H, CallError> {
        match call.args.get(i) {
            Some(Arg::Handle(k)) => self.kept(call, *k),
            _ => Err(CallError(format!(
                "argument {i} of `{}` is not a handle",
                call.method
            ))),
        }
    }

    /// The kept value argument `i` of `call` names, cloned; `None` when it names none (the
    /// argument is to be built from the generated value instead).
    pub fn kept_arg<H: Clone + 'static>(
        &self,
        call: &Call,
        i: usize,
    ) -> Result<Option<H>, CallError> {
        match call.args.get(i) {
            Some(Arg::Handle(k)) => self.kept::<H>(call, *k).cloned().map(Some),
            _ => Ok(None),
        }
    }

    fn kept<H: 'static>(&self, call: &Call, k: usize) -> Result<&'a H, CallError> {
        self.any_kept(k)
            .ok_or_else(|| CallError(format!("handle {k} does not exist (yet)")))?
            .downcast_ref::<H>()
            .ok_or_else(|| CallError(format!("handle {k} is not what `{}` takes", call.method)))
    }

    /// Handle `k`: one of the test's, or a local of the running thread.
    fn any_kept(&self, k: usize) -> Option<&'a Handle> {
        if k < self.handles.len() {
            return self.handles.get(k);
        }
        self.locals.get(k.checked_sub(self.local_base)?)?.get()
    }

    fn nth(&self, k: usize) -> Result<&'a Arc<T>, CallError>
    where
        T: 'static,
    {
        let instance = self
            .instances
            .get(k)
            .ok_or_else(|| CallError(format!("instance {k} does not exist (yet)")))?;
        instance
            .downcast_ref::<Arc<T>>()
            .ok_or_else(|| CallError(format!("instance {k} is not the driver's type")))
    }
}

/// A driver behind a trait object, so one worker serves every type of the harness.
pub trait Registered: Sync {
    fn type_path(&self) -> &'static str;
    fn run(&'static self, request: &Run) -> Answer;
}

impl<D: Driver> Registered for D {
    fn type_path(&self) -> &'static str {
        Driver::type_path(self)
    }
    fn run(&'static self, request: &Run) -> Answer {
        run(self, self.fresh_dir(), request)
    }
}

/// A [`Driver`] whose instances are [`AnyInstance`]s. The worker's code (setup, runs, the
/// threads' calls) takes drivers as this trait object: generic over the driver, it was
/// compiled once per type of the harness and was most of a large harness's machine code (the
/// fixtures' 93 types: 60 % of the LLVM lines, most of a 50 s build of the harness crate).
trait Erased: Sync {
    fn construct(
        &self,
        call: &Call,
        cx: Cx<'_, Untyped>,
    ) -> Result<(AnyInstance, Vec<Option<Handle>>), CallError>;
    fn invoke(&self, call: &Call, cx: Cx<'_, Untyped>) -> Result<Option<String>, CallError>;
    fn handle(&self, call: &Call, cx: Cx<'_, Untyped>) -> Result<Handle, CallError>;
    fn state(&self, instance: &AnyInstance) -> Option<String>;
}

/// The instance type of a [`Cx`] the worker's own code holds: it never asks for an instance.
enum Untyped {}

impl<D: Driver> Erased for D {
    fn construct(
        &self,
        call: &Call,
        cx: Cx<'_, Untyped>,
    ) -> Result<(AnyInstance, Vec<Option<Handle>>), CallError> {
        let (instance, elements) = Driver::construct(self, call, &cx.typed())?;
        Ok((Arc::new(instance), elements))
    }
    fn invoke(&self, call: &Call, cx: Cx<'_, Untyped>) -> Result<Option<String>, CallError> {
        Driver::invoke(self, call, &cx.typed())
    }
    fn handle(&self, call: &Call, cx: Cx<'_, Untyped>) -> Result<Handle, CallError> {
        Driver::handle(self, call, &cx.typed())
    }
    fn state(&self, instance: &AnyInstance) -> Option<String> {
        Driver::state(self, instance.downcast_ref::<Arc<D::Instance>>()?)
    }
}

/// Runs one request on `driver`, in a fresh directory when its type takes paths.
fn run(driver: &'static dyn Erased, fresh_dir: bool, request: &Run) -> Answer {
    let dir = if fresh_dir { RunDir::enter() } else { None };
    let answer = match &request.mode {
        Mode::Concurrent {
            seed,
            noise,
            control,
        } => run_concurrent(driver, &request.test, *seed, *noise, *control),
        Mode::Sequential {
            order,
            noise,
            paced,
            own_threads,
        } => run_sequential(driver, &request.test, order, *noise, paced, *own_threads),
    };
    match dir {
        Some(dir) => dir.tidy(answer),
        None => answer,
    }
}

#[doc(hidden)]
pub struct Run {
    test: Arc<TestData>,
    mode: Mode,
}

enum Mode {
    Concurrent {
        seed: u64,
        noise: [f64; 3],
        control: Control,
    },
    Sequential {
        order: Vec<(u8, u32)>,
        noise: Noise,
        paced: Vec<(u8, u32)>,
        own_threads: bool,
    },
}

impl Mode {
    fn concurrent(noise: Noise) -> Mode {
        Mode::Concurrent {
            seed: noise.seed,
            noise: noise.probabilities(),
            control: noise.control,
        }
    }
}

/// The answer to one run: its events name what the copy records, `&'static str`s. Its time
/// is set when it is written ([`finish`]).
#[doc(hidden)]
pub type Answer = Response<&'static str>;

/// Runs the worker until stdin closes: the harness's `main` is one call of this.
pub fn worker_main(drivers: Vec<&'static dyn Registered>) {
    let out = take_stdout();
    stuck::MAIN.register();
    sync::mark_setup_thread();
    crate::time::make_virtual();
    crate::hash::make_keyed();
    points::precise_sleeps();
    install_panic_hook();
    start_helper();
    start_watchdog();
    let mut input = protocol_input();
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.trim().is_empty() {
            continue;
        }
        serve(&drivers, line.trim(), out);
    }
    std::process::exit(0);
}

/// Answers one request line: one answer, or for a `batch` one answer per run, each written as
/// soon as its run ends (so that when run k aborts the process, runs before k are answered).
fn serve(drivers: &[&'static dyn Registered], line: &str, out: &Mutex<Box<dyn Write + Send>>) {
    let started = Instant::now();
    let request = match serde_json::from_str::<Request<TestData>>(line) {
        Ok(request) => request,
        Err(e) => return serve_malformed(drivers, line, e, out),
    };
    CAPTURE.store(captures(&request), Ordering::Relaxed);
    match request {
        Request::Ping => write_line(out, &finish(empty_answer(Outcome::Passed), started)),
        Request::Concurrent {
            test,
            noise,
            timeout_ms,
            repeat,
            repeat_for_ms,
            ..
        } => {
            let repeat = Repeat {
                runs: repeat,
                until: repeat_for_ms.map(|ms| started + Duration::from_millis(ms)),
            };
            let answer = answer(drivers, test, Mode::concurrent(noise), repeat, timeout_ms);
            write_line(out, &finish(answer, started));
        }
        Request::Sequential {
            test,
            order,
            timeout_ms,
            noise,
            paced,
            own_threads,
            capture,
        } => {
            let mode = Mode::Sequential {
                order,
                noise,
                paced,
                own_threads,
            };
            let mut answer = answer(drivers, test, mode, Repeat::once(), timeout_ms);
            if !capture {
                drop_unread_events(&mut answer);
            }
            write_line(out, &finish(answer, started));
        }
        Request::Batch {
            tests, timeout_ms, ..
        } => {
            for BatchRun {
                test,
                noise,
                repeat,
                repeat_for_ms,
            } in tests
            {
                let started = Instant::now();
                let repeat = Repeat {
                    runs: repeat,
                    until: repeat_for_ms.map(|ms| started + Duration::from_millis(ms)),
                };
                let answer = answer(drivers, test, Mode::concurrent(noise), repeat, timeout_ms);
                write_line(out, &finish(answer, started));
            }
        }
    }
}

/// Leaves out a sequential order's events where no reader needs them: without `capture` (the
/// panic oracle) its verdict reads how an order that passed or panicked ended, not its
/// events, and those were most of the answer, written here and parsed by covcon for each of
/// up to 252 orders a pass (18 KB for one of `rusty`'s `LoaderCache` with 5 + 5 calls). A
/// blocked order keeps them: the verdict finds the call it hung in from them.
fn drop_unread_events(answer: &mut Answer) {
    if passed(&answer.outcome) || matches!(answer.outcome, Outcome::Panicked { .. }) {
        answer.events.clear();
    }
}

/// Whether `request` wants the `Debug` texts of results and final state.
fn captures(request: &Request<TestData>) -> bool {
    match request {
        Request::Concurrent { capture, .. }
        | Request::Sequential { capture, .. }
        | Request::Batch { capture, .. } => *capture,
        Request::Ping => true,
    }
}

/// Answers a line that does not decode: an unreadable line with one `setup_failed` answer
/// under test id 0; a batch with one answer per run, running those that decode; any other
/// request with one `setup_failed` answer under its test's id if it has one, so the answer is
/// not taken for noise.
fn serve_malformed(
    drivers: &[&'static dyn Registered],
    line: &str,
    error: serde_json::Error,
    out: &Mutex<Box<dyn Write + Send>>,
) {
    let started = Instant::now();
    let json: Json = match serde_json::from_str(line) {
        Ok(json) => json,
        Err(e) => {
            let answer = setup_failed(format!("unreadable request: {e}"));
            return write_line(out, &finish(answer, started));
        }
    };
    let id_of = |test: Option<&Json>| {
        test.and_then(|t| t.get("id"))
            .and_then(Json::as_u64)
            .unwrap_or(0)
    };
    let batch = json.get("op").and_then(Json::as_str) == Some("batch");
    let Some(runs) = json.get("tests").and_then(Json::as_array).filter(|_| batch) else {
        let answer = setup_failed(error.to_string());
        return write_line(
            out,
            &finish(with_id(id_of(json.get("test")), answer), started),
        );
    };
    let timeout_ms = json
        .get("timeout_ms")
        .and_then(Json::as_u64)
        .unwrap_or(covcon_protocol::DEFAULT_TIMEOUT_MS);
    CAPTURE.store(
        json.get("capture").and_then(Json::as_bool).unwrap_or(true),
        Ordering::Relaxed,
    );
    for run in runs {
        let started = Instant::now();
        let answer = match BatchRun::<TestData>::deserialize(run) {
            Ok(BatchRun { test, noise, .. }) => answer(
                drivers,
                test,
                Mode::concurrent(noise),
                Repeat::once(),
                timeout_ms,
            ),
            Err(e) => with_id(id_of(run.get("test")), setup_failed(e.to_string())),
        };
        write_line(out, &finish(answer, started));
    }
}

/// Whether a run's outcome is a pass.
fn passed(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Passed)
}

/// How many times [`answer`] runs a test at most.
#[derive(Clone, Copy)]
struct Repeat {
    runs: u64,
    /// No new run after this instant: a batch that confirms a rare failure is "about a second
    /// of runs", which a count drawn from one run's time overshoots when the runs slow down
    /// (a loaded machine, a test that waits).
    until: Option<Instant>,
}

impl Repeat {
    fn times(runs: u64) -> Repeat {
        Repeat { runs, until: None }
    }

    fn once() -> Repeat {
        Repeat::times(1)
    }
}

/// Runs one test `repeat` times at most (seeds `seed, seed + 1, …`), up to the first run that
/// does not pass, and answers that run (or the last) under the test's id, with `runs` saying
/// how many ran and `covered` the pairs any of them covered: repeating in the worker amortises
/// the protocol's cost when the same test is run again and again.
fn answer(
    drivers: &[&'static dyn Registered],
    test: TestData,
    mode: Mode,
    repeat: Repeat,
    timeout_ms: u64,
) -> Answer {
    let id = test.id;
    let Some(driver) = drivers.iter().find(|d| d.type_path() == test.type_path) else {
        let missing = format!("type `{}` is not in the harness", test.type_path);
        return with_id(id, setup_failed(missing));
    };
    let mut run = Run {
        test: Arc::new(test),
        mode,
    };
    let mut runs = 0;
    let mut covered: Vec<[&'static str; 2]> = Vec::new();
    let mut others: Vec<Answer> = Vec::new();
    let keep_others = repeat.runs > 1 && CAPTURE.load(Ordering::Relaxed);
    loop {
        watch(id, timeout_ms);
        let run_started = Instant::now();
        let mut answer = driver.run(&run);
        if let Some((deadlock, events)) = take_abandoned() {
            answer.outcome = deadlock;
            answer.events = events;
            answer.final_state = None;
            answer.recovered = true;
        } else if passed(&answer.outcome) || matches!(answer.outcome, Outcome::Panicked { .. }) {
            if let Some(blocked) = woken_by_probe(passed(&answer.outcome)) {
                // The run ended by itself after the wake-up: the worker is as good as after
                // any run, and is kept.
                answer.outcome = blocked;
                answer.recovered = true;
            }
        }
        unwatch();
        runs += 1;
        let late = repeat.until.is_some_and(|until| Instant::now() >= until);
        if !passed(&answer.outcome) || runs >= repeat.runs || late {
            answer.runs = runs;
            if let Some(last) = answer.covered.as_mut().filter(|_| runs > 1) {
                covered.extend(last.iter().copied());
                covered.sort_unstable();
                covered.dedup();
                *last = covered;
            }
            if judged_for_results(&answer) {
                others.retain(|other| !other.answers_like(&answer));
            }
            answer.others = others;
            return with_id(id, answer);
        }
        // Only what answers need: the pairs earlier runs covered, once each.
        for pair in answer.covered.iter().flatten() {
            if !covered.contains(pair) {
                covered.push(*pair);
            }
        }
        if keep_others
            && others.len() < MAX_OTHERS
            && judged_for_results(&answer)
            && !others.iter().any(|other| other.answers_like(&answer))
        {
            answer.runs = runs;
            answer.covered = None;
            answer.elapsed_us = run_started.elapsed().as_micros() as u64;
            others.push(with_id(id, answer));
        }
        if let Mode::Concurrent { seed, .. } = &mut run.mode {
            *seed = seed.wrapping_add(1);
        }
    }
}

/// Most earlier runs of a repeated test an answer carries (`Response::others`): runs whose
/// results differ from every one kept before are rare past the first few (most orders of two
/// threads' calls answer alike), and each costs the results oracle a check.
const MAX_OTHERS: usize = 8;

/// Whether the results oracle judges what `answer`'s run answered: it passed, and no timed
/// acquisition or attempt made its answers ones no sequential order gives.
fn judged_for_results(answer: &Answer) -> bool {
    passed(&answer.outcome) && !answer.timed_out
}

fn empty_answer(outcome: Outcome) -> Answer {
    Response::new(0, outcome)
}

fn setup_failed(message: String) -> Answer {
    empty_answer(Outcome::SetupFailed { message })
}

/// `answer` under test id `id`.
fn with_id(id: u64, answer: Answer) -> Answer {
    Answer {
        test_id: id,
        ..answer
    }
}

/// The answer as one JSON line (without its newline), written straight into a string: the
/// worker answers every run, so this builds no `serde_json::Value` tree.
fn finish(mut answer: Answer, started: Instant) -> String {
    // A passing run's events serve only the results oracle (`capture`); the pairs it covered
    // are all the panic oracle needs, and far cheaper to send and read.
    if passed(&answer.outcome) && !CAPTURE.load(Ordering::Relaxed) && answer.covered.is_some() {
        answer.events.clear();
    }
    answer.elapsed_us = started.elapsed().as_micros() as u64;
    // Text, numbers and booleans only: nothing in an answer fails to serialise.
    serde_json::to_string(&answer).expect("answers always serialise")
}

// ---------------------------------------------------------------------------------------------
// Running one test.

/// How one call ended, when it did not return normally.
enum Failure {
    Panic {
        message: String,
        location: Option<String>,
        clock: u64,
    },
    Setup(String),
}

/// What one thread (or the prefix) did.
struct ThreadRun {
    results: Vec<Option<String>>,
    /// Index of the failing call and how it failed.
    failure: Option<(u32, String, Failure)>,
}

fn guarded<R>(f: impl FnOnce() -> Result<R, CallError>) -> Result<R, Failure> {
    LAST_PANIC.with(|p| p.borrow_mut().take());
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(CallError(message))) => Err(Failure::Setup(clip(message))),
        Err(payload) => {
            let (message, location, clock) = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| (payload_text(payload.as_ref()), None, points::now()));
            // The payload may itself panic on drop; forget it rather than risk that.
            std::mem::forget(payload);
            Err(Failure::Panic {
                message: clip(message),
                location,
                clock,
            })
        }
    }
}

/// What a test's setup built: its instances and the handles kept from them. Handles drop
/// first (a handle may hold a share of its instance).
struct Built {
    /// Each thread's locals, one slot per call of it that keeps its result.
    locals: [Vec<OnceLock<Handle>>; 2],
    handles: Vec<Handle>,
    /// What else each instance's constructor returned and no handle took yet.
    elements: Vec<Mutex<Vec<Option<Handle>>>>,
    instances: Vec<AnyInstance>,
}

impl Built {
    /// What the setup's calls see: no thread's locals.
    fn cx(&self) -> Cx<'_, Untyped> {
        Cx {
            instances: &self.instances,
            handles: &self.handles,
            locals: &[],
            local_base: self.handles.len(),
            elements: &self.elements,
            instance: std::marker::PhantomData,
        }
    }

    /// What thread `thread`'s calls see: its own locals too.
    fn cx_of(&self, thread: usize) -> Cx<'_, Untyped> {
        let thread = thread.min(1);
        Cx {
            locals: &self.locals[thread],
            local_base: self.handles.len() + if thread == 1 { self.locals[0].len() } else { 0 },
            ..self.cx()
        }
    }
}

/// One call of thread `thread`: kept into its local slot when it keeps its result
/// (answering no result text, or why nothing was kept: a method returning `None` or `Err`
/// leaves the local empty); skipped, with a result text saying so, when it uses a local its
/// thread did not keep; otherwise made `call.times` times.
fn thread_call(
    driver: &dyn Erased,
    built: &Built,
    thread: usize,
    call: &Call,
) -> Result<Option<String>, Failure> {
    let cx = built.cx_of(thread);
    if uses_missing_local(call, &cx) {
        return Ok(Some(SKIPPED.to_string()));
    }
    match call.local {
        Some(slot) => match guarded(|| driver.handle(call, cx)) {
            Ok(handle) => {
                let _ = built.locals[thread.min(1)][slot].set(handle);
                Ok(None)
            }
            Err(Failure::Setup(why)) => Ok(Some(format!("(not kept: {why})"))),
            Err(panic) => Err(panic),
        },
        None => guarded(|| invoke_times(driver, call, cx)),
    }
}

/// The result text of a call skipped because a local it takes was not kept; the reproducer
/// (`oracle/src/reproducer.rs`) writes the same.
const SKIPPED: &str = "(skipped: a value it takes was not kept)";

/// Whether `call` uses a local of the running thread (its receiver for a handle method, or a
/// handle argument at any depth) that is empty. Free for a thread that keeps none: the check
/// is on every call of every run.
fn uses_missing_local(call: &Call, cx: &Cx<'_, Untyped>) -> bool {
    if cx.locals.is_empty() {
        return false;
    }
    fn handles_in(arg: &Arg, out: &mut Vec<usize>) {
        match arg {
            Arg::Handle(k) => out.push(*k),
            Arg::List(items) | Arg::Tuple(items) | Arg::Built { args: items, .. } => {
                items.iter().for_each(|a| handles_in(a, out))
            }
            Arg::Option(Some(inner)) | Arg::Closure(inner) => handles_in(inner, out),
            _ => {}
        }
    }
    let mut used = Vec::new();
    if MethodRef::parse(&call.method).is_handle() && !call.chained {
        used.push(call.receiver);
    }
    call.args.iter().for_each(|a| handles_in(a, &mut used));
    used.into_iter()
        .any(|k| k >= cx.handles.len() && cx.any_kept(k).is_none())
}

/// The instances and handles, and the prefix's results, ready for the suffixes.
type Ready = (Built, Vec<Option<String>>);

/// Builds the instances and handles and runs the prefix, on the calling thread as role 2.
/// Setup calls are numbered in that order (instances, handles, prefix) in a failure.
fn setup(driver: &'static dyn Erased, test: &TestData) -> Result<Ready, Box<Answer>> {
    set_role(2, 0);
    // Each setup call reads the clock of its own slot, its number here (see `time`).
    time::reset();
    // Every run of the test hashes with the same keys (see `hash`).
    crate::hash::reset(test.id);
    let mut built = Built {
        locals: test.threads.each_ref().map(|calls| {
            calls
                .iter()
                .filter(|c| c.local.is_some())
                .map(|_| OnceLock::new())
                .collect()
        }),
        handles: Vec::new(),
        elements: Vec::new(),
        instances: Vec::new(),
    };
    for (index, call) in test.instances.iter().enumerate() {
        match in_slot(index as u32, || {
            guarded(|| driver.construct(call, built.cx()))
        }) {
            Ok((instance, elements)) => {
                built.instances.push(instance);
                built.elements.push(Mutex::new(elements));
            }
            Err(failure) => {
                return Err(Box::new(setup_failure(
                    None,
                    index as u32,
                    &call.method,
                    failure,
                )))
            }
        }
    }
    for (index, call) in test.handles.iter().enumerate() {
        let call_index = (test.instances.len() + index) as u32;
        match in_slot(call_index, || guarded(|| driver.handle(call, built.cx()))) {
            Ok(handle) => built.handles.push(handle),
            Err(failure) => {
                let answer = setup_failure(None, call_index, &call.method, failure);
                quietly(move || drop(built));
                return Err(Box::new(answer));
            }
        }
    }
    let mut prefix_results = Vec::with_capacity(test.prefix.len());
    for (index, call) in test.prefix.iter().enumerate() {
        let call_index = (test.instances.len() + test.handles.len() + index) as u32;
        match in_slot(call_index, || {
            guarded(|| invoke_times(driver, call, built.cx()))
        }) {
            Ok(result) => prefix_results.push(result.map(clip)),
            Err(failure) => {
                let mut answer = setup_failure(None, call_index, &call.method, failure);
                answer.prefix_results = prefix_results;
                return Err(Box::new(answer));
            }
        }
    }
    Ok((built, prefix_results))
}

/// Runs `f`, a call of clock slot `slot` (see `time`), on the calling thread.
fn in_slot<R>(slot: u32, f: impl FnOnce() -> R) -> R {
    time::begin_call(slot);
    let result = f();
    time::end_call();
    result
}

/// The clock slot of suffix call `index` of `test`: after its setup calls, the two threads'
/// `index`th calls sharing one, so a sequential order reads the clock the concurrent run read.
fn suffix_slot(test: &TestData, index: u32) -> u32 {
    let setup = test.instances.len() + test.handles.len() + test.prefix.len();
    time::suffix_slot(setup, index)
}

/// `call.times` calls in a row (a prefix's loop), answering the last one's result.
fn invoke_times(
    driver: &dyn Erased,
    call: &Call,
    cx: Cx<'_, Untyped>,
) -> Result<Option<String>, CallError> {
    let mut result = driver.invoke(call, cx)?;
    for _ in 1..call.times {
        result = driver.invoke(call, cx)?;
    }
    Ok(result)
}

fn setup_failure(thread: Option<u8>, call: u32, method: &str, failure: Failure) -> Answer {
    let mut answer = empty_answer(failed(thread, call, method, &failure));
    answer.events = drain_events();
    answer
}

/// The outcome of a run whose call `call` (of `thread`, or of the setup) failed.
fn failed(thread: Option<u8>, call: u32, method: &str, failure: &Failure) -> Outcome {
    match failure {
        Failure::Panic {
            message, location, ..
        } => Outcome::Panicked {
            thread,
            call,
            method: method.to_string(),
            message: message.clone(),
            location: location.clone(),
            also: Vec::new(),
        },
        Failure::Setup(message) => Outcome::SetupFailed {
            message: message.clone(),
        },
    }
}

fn run_thread(
    driver: &'static dyn Erased,
    built: &Built,
    test: &TestData,
    thread: usize,
) -> ThreadRun {
    let calls = &test.threads[thread];
    let mut results = Vec::with_capacity(calls.len());
    for (index, call) in calls.iter().enumerate() {
        let slot = suffix_slot(test, index as u32);
        match in_slot(slot, || thread_call(driver, built, thread, call)) {
            Ok(result) => results.push(result.map(clip)),
            Err(failure) => {
                results.resize(calls.len(), None);
                return ThreadRun {
                    results,
                    failure: Some((index as u32, call.method.clone(), failure)),
                };
            }
        }
    }
    ThreadRun {
        results,
        failure: None,
    }
}

fn run_concurrent(
    driver: &'static dyn Erased,
    test: &Arc<TestData>,
    seed: u64,
    noise: [f64; 3],
    control: Control,
) -> Answer {
    clear_events();
    set_noise([0.0; 3]);
    let threads_before = thread_count();
    let setup_started = Instant::now();
    let (built, prefix_results) = match setup(driver, test) {
        Ok(ready) => ready,
        Err(answer) => return *answer,
    };
    let setup_took = setup_started.elapsed();
    let built = Arc::new(built);
    let slot: Arc<Mutex<Option<ThreadRun>>> = Arc::new(Mutex::new(None));
    let job: Job = {
        let (built, test, slot) = (built.clone(), test.clone(), slot.clone());
        Box::new(move || {
            set_role(1, seed);
            sched::thread_start(1);
            let run = run_thread(driver, &built, &test, 1);
            sched::thread_end(1);
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(run);
            set_role(NO_ROLE, 0);
        })
    };
    set_noise(noise);
    sync::take_timed_out();
    sched::begin_run(control, seed);
    set_role(0, seed);
    let generation = launch(job);
    sched::thread_start(0);
    let mine = run_thread(driver, &built, test, 0);
    sched::thread_end(0);
    set_role(NO_ROLE, 0);
    wait_done(generation);
    let schedule = sched::end_run();
    let timed_out = sync::take_timed_out();
    set_noise([0.0; 3]);
    let theirs = slot
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .unwrap_or(ThreadRun {
            results: vec![None; test.threads[1].len()],
            failure: None,
        });
    let final_state = state_of(driver, &built.instances);
    let own_threads = threads_before.is_some_and(|before| thread_count() > Some(before));
    let runs = [mine, theirs];
    let outcome = concurrent_outcome(&runs);
    let [mine, theirs] = runs;
    let dropping = Instant::now();
    quietly(move || drop(built));
    let setup_us = (setup_took + dropping.elapsed()).as_micros() as u64;
    let events = drain_events();
    Answer {
        covered: Some(covered_pairs(&events, &test.type_path)),
        events,
        prefix_results,
        results: [mine.results, theirs.results],
        final_state,
        setup_us: setup_us.max(1),
        schedule,
        own_threads,
        timed_out,
        ..empty_answer(outcome)
    }
}

/// The first failure by clock; a call that could not be made wins over a panic. When the
/// other thread panicked too, its panic goes along as `also`: the first panic by clock may
/// follow from state the other thread's panicking call left half changed (an atomic counted
/// before the panic), and a sequential order that runs that call first explains the run.
fn concurrent_outcome(runs: &[ThreadRun; 2]) -> Outcome {
    let mut first: Option<(u8, &(u32, String, Failure))> = None;
    for (thread, run) in runs.iter().enumerate() {
        let Some(failure) = &run.failure else {
            continue;
        };
        let earlier = match (&first, &failure.2) {
            (None, _) => true,
            (Some(_), Failure::Setup(_)) => true,
            (
                Some((_, (_, _, Failure::Panic { clock: a, .. }))),
                Failure::Panic { clock: b, .. },
            ) => b < a,
            (Some(_), Failure::Panic { .. }) => false,
        };
        if earlier {
            first = Some((thread as u8, failure));
        }
    }
    match first {
        None => Outcome::Passed,
        Some((thread, (call, method, failure))) => {
            let mut outcome = failed(Some(thread), *call, method, failure);
            let other_thread = 1 - thread;
            let other = &runs[usize::from(other_thread)];
            if let (
                Some((call, method, other @ Failure::Panic { .. })),
                Outcome::Panicked { also, .. },
            ) = (&other.failure, &mut outcome)
            {
                also.push(failed(Some(other_thread), *call, method, other));
            }
            outcome
        }
    }
}

/// Runs the suffix calls in `order` on this thread. With `noise`, the schedule points of the
/// calls in `paced` (of every call when it is empty) are paced as a concurrent run's are,
/// from a seed of the call's own (the run's seed mixed with the call's index).
fn run_sequential(
    driver: &'static dyn Erased,
    test: &TestData,
    order: &[(u8, u32)],
    noise: Noise,
    paced: &[(u8, u32)],
    own_threads: bool,
) -> Answer {
    clear_events();
    set_noise([0.0; 3]);
    let (built, prefix_results) = match setup(driver, test) {
        Ok(ready) => ready,
        Err(answer) => return *answer,
    };
    let built = Arc::new(built);
    let mut results = [
        vec![None; test.threads[0].len()],
        vec![None; test.threads[1].len()],
    ];
    let mut outcome = Outcome::Passed;
    for &(thread, index) in order {
        let Some(call) = test.threads[thread as usize].get(index as usize) else {
            outcome = Outcome::SetupFailed {
                message: format!("thread {thread} has no call {index}"),
            };
            break;
        };
        let seed = noise.seed ^ u64::from(index).wrapping_mul(0xD1B5_4A32_D192_ED03);
        let pace = paced.is_empty() || paced.contains(&(thread, index));
        if pace && noise.pause_us > 0 {
            // Time passing between calls, on a clock covcon does not control (see
            // `oracle/src/verdict.rs`, the pass of a thread alone).
            std::thread::sleep(Duration::from_micros(noise.pause_us));
        }
        let p = noise.probabilities();
        set_noise(if pace { p } else { [0.0; 3] });
        // A controlled run also waits at the starts and ends of calls (where it hands the
        // turn over): a paced order waits there too, so what waiting alone brings on shows.
        PACE_CALLS.store(pace && !p.iter().all(|&p| p <= 0.0), Ordering::Relaxed);
        // With `own_threads`, each call on the thread it ran on concurrently: a type that
        // behaves by thread (a per-thread shard, a thread-local cache, an owner check) does the
        // same here, so only the interleaving differs from the concurrent run.
        let slot = suffix_slot(test, index);
        let result = if own_threads && thread == 1 {
            on_helper(driver, &built, call, seed, slot)
        } else {
            set_role(thread, seed);
            let result = in_slot(slot, || {
                thread_call(driver, &built, usize::from(thread), call)
            });
            set_role(NO_ROLE, 0);
            result
        };
        match result {
            Ok(result) => results[thread as usize][index as usize] = result.map(clip),
            Err(failure) => {
                outcome = failed(Some(thread), index, &call.method, &failure);
                break;
            }
        }
    }
    set_noise([0.0; 3]);
    PACE_CALLS.store(false, Ordering::Relaxed);
    if paced.is_empty() && noise.pause_us > 0 && passed(&outcome) {
        // The state of a run that passed is read after a pause too: in a concurrent run it
        // is read once both threads are joined, a while after the last call, and a type's
        // own thread (a housekeeper that sweeps on a timer) may have changed it by then. A
        // slow run that reads it at once would agree with the fast runs on a state the
        // concurrent run never had the time to keep, and the results oracle would compare
        // it. A run that failed is compared with nothing (the verdict's runs of a thread
        // alone up to its panic): no pause.
        std::thread::sleep(Duration::from_micros(noise.pause_us));
    }
    let final_state = state_of(driver, &built.instances);
    quietly(move || drop(built));
    Answer {
        events: drain_events(),
        prefix_results,
        results,
        final_state,
        ..empty_answer(outcome)
    }
}

/// Threads of this process now (Linux: `/proc/self/task`), when results are captured (the
/// results oracle is the one reader of [`Answer::own_threads`]); `None` otherwise or where it
/// cannot be read.
fn thread_count() -> Option<usize> {
    if !CAPTURE.load(Ordering::Relaxed) {
        return None;
    }
    std::fs::read_dir("/proc/self/task")
        .ok()
        .map(|entries| entries.count())
}

/// A call's result text, or how it failed.
type CallResult = Result<Option<String>, Failure>;

/// One call of thread 1 run on the helper thread, thread 1 of the concurrent runs, while
/// the main thread waits.
fn on_helper(
    driver: &'static dyn Erased,
    built: &Arc<Built>,
    call: &Call,
    seed: u64,
    clock_slot: u32,
) -> CallResult {
    let slot: Arc<Mutex<Option<CallResult>>> = Arc::new(Mutex::new(None));
    let job: Job = {
        let (built, call, slot) = (built.clone(), call.clone(), slot.clone());
        Box::new(move || {
            set_role(1, seed);
            let result = in_slot(clock_slot, || thread_call(driver, &built, 1, &call));
            set_role(NO_ROLE, 0);
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
        })
    };
    let generation = launch(job);
    wait_done(generation);
    let result = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
    result.unwrap_or_else(|| {
        Err(Failure::Setup(
            "the helper thread did not run the call".into(),
        ))
    })
}

/// `Debug` text of instance 0, clipped; `None` if it has none or formatting panics.
fn state_of(driver: &'static dyn Erased, instances: &[AnyInstance]) -> Option<String> {
    if !CAPTURE.load(Ordering::Relaxed) {
        return None;
    }
    let first = instances.first()?;
    catch_unwind(AssertUnwindSafe(|| driver.state(first)))
        .ok()
        .flatten()
        .map(clip)
}

/// Runs `f`, ignoring a panic (a `Drop` impl that panics must not end the worker).
fn quietly(f: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(f));
}

/// Longest `Debug` text sent back, in bytes.
pub(crate) const MAX_TEXT: usize = 2_000;

/// `text` cut to [`MAX_TEXT`] bytes (at a character boundary), marked with `…` when cut.
fn clip(mut text: String) -> String {
    if text.len() > MAX_TEXT {
        let mut end = MAX_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

fn set_noise(p: [f64; 3]) {
    for (slot, p) in NOISE.iter().zip(p) {
        slot.store(p.to_bits(), Ordering::Relaxed);
    }
}

fn clear_events() {
    for buffer in &BUFFERS {
        buffer.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

fn drain_events() -> Vec<Event<&'static str>> {
    let mut all = Vec::new();
    for (role, buffer) in BUFFERS.iter().enumerate() {
        let mut buffer = buffer.lock().unwrap_or_else(|p| p.into_inner());
        all.extend(buffer.drain(..).map(|e| event(role, e)));
    }
    all.sort_by_key(|e| e.clock);
    all
}

/// Event `e` of role `role`'s buffer, as answers carry it.
fn event(role: usize, e: RawEvent) -> Event<&'static str> {
    Event {
        clock: e.clock,
        thread: role as u8,
        type_path: e.type_path,
        method: e.method,
        start: e.start,
    }
}

/// The concurrent method pairs a run's events (in clock order) show, counting only methods of
/// `type_path`: CovCon Algorithm 1, as `oracle/src/trace.rs` `covered_pairs` computes it from
/// the same events (a test of the oracle holds the two to the same answers). One entry each
/// time a method starts while a method of another thread runs, the smaller name first, sorted.
fn covered_pairs(events: &[Event<&'static str>], type_path: &str) -> Vec<[&'static str; 2]> {
    let mut running: [Vec<&'static str>; 3] = Default::default();
    let mut pairs = Vec::new();
    for event in events.iter().filter(|e| e.type_path == type_path) {
        let thread = usize::from(event.thread).min(2);
        if event.start {
            for (other, stack) in running.iter().enumerate() {
                if other != thread {
                    for &method in stack {
                        pairs.push(if event.method <= method {
                            [event.method, method]
                        } else {
                            [method, event.method]
                        });
                    }
                }
            }
            running[thread].push(event.method);
        } else {
            running[thread].pop();
        }
    }
    pairs.sort_unstable();
    pairs
}

// ---------------------------------------------------------------------------------------------
// The helper thread and the start protocol.

type Job = Box<dyn FnOnce() + Send>;

static GO: AtomicU64 = AtomicU64::new(0);
static ACK: AtomicU64 = AtomicU64::new(0);
static DONE: AtomicU64 = AtomicU64::new(0);
static PARKED: AtomicBool = AtomicBool::new(false);
static JOB: Mutex<Option<Job>> = Mutex::new(None);
static HELPER: OnceLock<Thread> = OnceLock::new();

/// How long a waiting thread spins before it starts yielding. Short on purpose: while one
/// thread spins, the thread it waits for may be queued behind it on the same core (the
/// starvation DESIGN.md warns about; on 2 cores shared with covcon and other work that is
/// common), and yielding lets that thread run. Measured on the 2-core machine, a longer spin
/// (20 µs) gained nothing on a quiet machine and lost under load (docs/benchmarks.md). Timed
/// rather than counted, because a `pause` costs 10 to 140 cycles depending on the processor.
const SPIN_FOR: Duration = Duration::from_micros(2);
/// How long a waiting thread yields before it parks or sleeps.
const YIELD_FOR: Duration = Duration::from_millis(2);

/// Waits until `ready()` holds: spins for [`SPIN_FOR`], then yields for [`YIELD_FOR`], then
/// calls `idle()` (which parks or sleeps briefly) until it holds.
fn wait_while_not(ready: impl Fn() -> bool, idle: impl Fn()) {
    let started = Instant::now();
    let mut spins = 0u32;
    while !ready() {
        spins = spins.wrapping_add(1);
        // Reading the clock costs as much as a few spins; look at it now and then.
        if spins & 15 != 0 {
            std::hint::spin_loop();
            continue;
        }
        let waited = started.elapsed();
        if waited < SPIN_FOR {
            std::hint::spin_loop();
        } else if waited < SPIN_FOR + YIELD_FOR {
            std::thread::yield_now();
        } else {
            idle();
        }
    }
}

fn start_helper() {
    let handle = std::thread::Builder::new()
        .name("covcon-thread-1".into())
        // The main thread's usual size, so both suffixes have the same room before a stack
        // overflow.
        .stack_size(8 << 20)
        .spawn(helper_loop)
        .expect("cannot start the worker's helper thread");
    let _ = HELPER.set(handle.thread().clone());
}

fn helper_loop() {
    stuck::HELPER.register();
    points::precise_sleeps();
    let mut seen = 0;
    loop {
        seen = wait_for_go(seen);
        let job = JOB.lock().unwrap_or_else(|p| p.into_inner()).take();
        stuck::HELPER.set_idle(false);
        ACK.store(seen, Ordering::SeqCst);
        if let Some(job) = job {
            job();
        }
        stuck::HELPER.set_idle(true);
        DONE.store(seen, Ordering::SeqCst);
    }
}

fn wait_for_go(seen: u64) -> u64 {
    wait_while_not(
        || GO.load(Ordering::SeqCst) != seen,
        || {
            PARKED.store(true, Ordering::SeqCst);
            if GO.load(Ordering::SeqCst) == seen {
                // `launch` unparks after bumping `GO` whenever `PARKED` is set, and `GO` is
                // checked after setting it, so no wake-up is lost; the timeout is only a
                // safety net.
                std::thread::park_timeout(Duration::from_millis(50));
            }
            PARKED.store(false, Ordering::SeqCst);
        },
    );
    GO.load(Ordering::SeqCst)
}

/// Hands thread 1's job to the helper and returns once the helper has taken it, so both
/// suffixes start together.
fn launch(job: Job) -> u64 {
    *JOB.lock().unwrap_or_else(|p| p.into_inner()) = Some(job);
    let generation = GO.fetch_add(1, Ordering::SeqCst) + 1;
    if PARKED.load(Ordering::SeqCst) {
        if let Some(helper) = HELPER.get() {
            helper.unpark();
        }
    }
    wait_until(&ACK, generation);
    generation
}

fn wait_done(generation: u64) {
    stuck::MAIN.set_idle(true);
    wait_until(&DONE, generation);
    stuck::MAIN.set_idle(false);
}

fn wait_until(flag: &AtomicU64, generation: u64) {
    wait_while_not(
        || flag.load(Ordering::SeqCst) >= generation,
        || std::thread::sleep(Duration::from_micros(50)),
    );
}

// ---------------------------------------------------------------------------------------------
// The watchdog.

/// Test id being run, plus one (0: idle).
static RUNNING: AtomicU64 = AtomicU64::new(0);
static TIMEOUT_MS: AtomicU64 = AtomicU64::new(10_000);
static EPOCH: OnceLock<Instant> = OnceLock::new();
static OUT: OnceLock<Mutex<Box<dyn Write + Send>>> = OnceLock::new();

fn epoch_us() -> u64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_micros() as u64
}

fn watch(test_id: u64, timeout_ms: u64) {
    TIMEOUT_MS.store(timeout_ms.max(1), Ordering::SeqCst);
    STARTED_US.store(epoch_us(), Ordering::SeqCst);
    RUNNING.store(test_id + 1, Ordering::SeqCst);
}

fn unwatch() {
    RUNNING.store(0, Ordering::SeqCst);
}

fn start_watchdog() {
    epoch_us();
    std::thread::Builder::new()
        .name("covcon-watchdog".into())
        .spawn(watchdog_loop)
        .expect("cannot start the worker's watchdog");
}

fn watchdog_loop() {
    stuck::WATCHDOG.register();
    // The run the last snapshot was taken in (`RUNNING`, `STARTED_US`), and the snapshot.
    let mut last: Option<((u64, u64), Snapshot)> = None;
    loop {
        let timeout_ms = TIMEOUT_MS.load(Ordering::SeqCst);
        // A test thread waiting for real on a condition variable of the copy is a run that is
        // likely blocked for good, and one the watchdog can end without losing the worker
        // ([`abandon`]): looked at every millisecond, from its second on.
        let waiting = sync::registered_waiters() > 0;
        // A look that found every thread asleep is checked a millisecond later, not a tick:
        // the second look that agrees is the proof, and each run blocked for good (a
        // sequential order that waits for what only the other thread would do, a lock-order
        // deadlock) costs what the watchdog takes to see it. Looking every millisecond at
        // every run would wake the watchdog beside the short runs that end by themselves,
        // most of a campaign's.
        let confirming = last.as_ref().is_some_and(|(run, _)| {
            *run == (
                RUNNING.load(Ordering::SeqCst),
                STARTED_US.load(Ordering::SeqCst),
            )
        });
        let tick_ms = if waiting || confirming {
            1
        } else {
            (timeout_ms / 10).clamp(1, TICK_MS)
        };
        std::thread::sleep(Duration::from_millis(tick_ms));
        let running = RUNNING.load(Ordering::SeqCst);
        if running == 0 {
            last = None;
            continue;
        }
        let started = STARTED_US.load(Ordering::SeqCst);
        let age_us = epoch_us().saturating_sub(started);
        let over_time = age_us >= timeout_ms * 1000;
        // Blocked for good: two snapshots in the same run, taken one after the other, that agree.
        let stuck = !over_time
            && age_us >= STUCK_AFTER_MS * 1000
            && match stuck::blocked_snapshot() {
                None => {
                    last = None;
                    false
                }
                Some(now) => {
                    let same = matches!(&last, Some((run, before))
                        if *run == (running, started) && *before == now);
                    last = Some(((running, started), now));
                    same
                }
            };
        if !over_time && !stuck {
            continue;
        }
        if stuck && probe(started) {
            // Woken: give the run another look before calling it blocked.
            last = None;
            continue;
        }
        if stuck && abandon(running, started, last.as_ref().map(|(_, s)| s)) {
            last = None;
            continue;
        }
        let Some(out) = OUT.get() else { hard_exit(3) };
        // Holding the protocol's output, so the main thread cannot answer in between: if the
        // run is still the same one, it is over its time or blocked for good, a deadlock (or,
        // over time, an endless loop).
        let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
        if RUNNING.load(Ordering::SeqCst) != running || STARTED_US.load(Ordering::SeqCst) != started
        {
            last = None;
            continue;
        }
        let events = peek_events();
        let inside = [innermost(&events, 0), innermost(&events, 1)];
        let deadlock = Outcome::Deadlocked {
            inside,
            blocked_for_good: stuck,
            lost_wakeup: None,
        };
        let answer = Answer {
            events,
            elapsed_us: epoch_us().saturating_sub(started),
            schedule: sched::snapshot(),
            ..Response::new(running - 1, deadlock)
        };
        let text = serde_json::to_string(&answer).expect("answers always serialise");
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
        hard_exit(3);
    }
}

/// The deadlock the ended run answers, with its `STARTED_US` and its events when it was
/// found blocked (the unwinding then ends its calls, which the answer must not show: the
/// oracle reads which call blocked from the calls that did not end).
type AbandonedRun = (u64, Outcome, Vec<Event<&'static str>>);
static ABANDONED: Mutex<Option<AbandonedRun>> = Mutex::new(None);

/// Ends run `started` (blocked for good, after the wake-up probe) without giving up the
/// worker, when what blocks it can be undone: every thread of the snapshot is a test thread
/// of the worker and each waits, untimed, on a condition variable of the copy
/// ([`sync::registered_waiters`]) or spins for good in the copy's busy wait (a spin lock that
/// nothing releases, [`crate::spin_loop`]). Nothing else could ever release them, so the
/// deadlock is certain; the waiters are woken once more and unwind out of their calls
/// (`waiting_for_real`), the spinners unwind at their next pause, and the main thread answers
/// the deadlock when the run returns ([`take_abandoned`]). A thread blocked on a lock, or a
/// thread of the user's, cannot be undone: then `false`, and the watchdog answers and exits
/// as before. Once per run: a run still blocked after it (a call that caught the unwinding, a
/// `Drop` that spins while unwinding) is left to that.
fn abandon(running: u64, started: u64, snapshot: Option<&stuck::Snapshot>) -> bool {
    let Some(threads) = snapshot.and_then(stuck::Snapshot::test_threads_only) else {
        return false;
    };
    let spinners = snapshot.map_or(0, stuck::Snapshot::spinners);
    if threads == 0
        || sync::registered_waiters() + spinners != threads
        || ABANDON.load(Ordering::SeqCst) == started + 1
    {
        return false;
    }
    let events = peek_events();
    let inside = [innermost(&events, 0), innermost(&events, 1)];
    *ABANDONED.lock().unwrap_or_else(|p| p.into_inner()) = Some((
        started,
        Outcome::Deadlocked {
            inside,
            blocked_for_good: true,
            lost_wakeup: None,
        },
        events,
    ));
    ABANDON.store(started + 1, Ordering::SeqCst);
    // Only the same run's waiters: a new run's would be woken for nothing.
    if RUNNING.load(Ordering::SeqCst) == running && STARTED_US.load(Ordering::SeqCst) == started {
        sync::wake_all_waiters();
    }
    true
}

/// The deadlock of the run that just returned, when the watchdog ended it ([`abandon`]), and
/// its events as they were when it was found blocked.
fn take_abandoned() -> Option<(Outcome, Vec<Event<&'static str>>)> {
    let started = STARTED_US.load(Ordering::SeqCst);
    let mut abandoned = ABANDONED.lock().unwrap_or_else(|p| p.into_inner());
    abandoned
        .take_if(|(run, _, _)| *run == started)
        .map(|(_, deadlock, events)| (deadlock, events))
}

/// The watchdog's wake-up probe of a run blocked for good, once per run.
struct Probe {
    /// The run's `STARTED_US`.
    started: u64,
    /// The test threads it woke (bits 0 and 1).
    woken: u8,
    /// The instrumented calls the test threads were in.
    inside: [Option<String>; 2],
}

static PROBE: Mutex<Option<Probe>> = Mutex::new(None);

/// `started` of the last run the probe looked at (0: none), read without a lock after every
/// run that passed; only a run that matches takes the lock for [`PROBE`].
static WOKEN_RUN: AtomicU64 = AtomicU64::new(0);

/// Wakes the threads of run `started` that wait for real on a condition variable of the copy
/// (a spurious wake-up, which correct code survives: [`sync::wake_waiters`]), the first time
/// the run is blocked for good. Answers whether it woke any.
fn probe(started: u64) -> bool {
    let mut probe = PROBE.lock().unwrap_or_else(|p| p.into_inner());
    if probe.as_ref().is_some_and(|p| p.started == started) {
        return false;
    }
    let events = peek_events();
    let inside = [innermost(&events, 0), innermost(&events, 1)];
    // Marked before the wake-up, under the lock: a woken thread's run can end, and the main
    // thread look, before this function returns; it then waits for the lock and the probe.
    WOKEN_RUN.store(started, Ordering::SeqCst);
    let woken = sync::wake_waiters();
    *probe = Some(Probe {
        started,
        woken,
        inside,
    });
    woken != 0
}

/// For a run that passed after the probe woke a thread of it: the run was blocked for good,
/// and a spurious wake-up let the waiting thread finish its call, so it waited for a notify
/// that never came although what it waited for already held. Without the wake-up, which
/// nothing promises, it would have waited for ever: the outcome is that deadlock, marked as a
/// lost wake-up of the (first) woken thread.
///
/// A run that panicked after the probe woke it (code that waits under `if` popping an empty
/// queue) did so because of that wake-up: it is the deadlock too, but not a lost wake-up
/// (`passed` false), since what the thread waited for did not hold.
fn woken_by_probe(passed: bool) -> Option<Outcome> {
    if WOKEN_RUN.load(Ordering::SeqCst) != STARTED_US.load(Ordering::SeqCst) {
        return None;
    }
    let probe = PROBE.lock().unwrap_or_else(|p| p.into_inner());
    let probe = probe
        .as_ref()
        .filter(|p| p.started == STARTED_US.load(Ordering::SeqCst) && p.woken != 0)?;
    Some(Outcome::Deadlocked {
        inside: probe.inside.clone(),
        blocked_for_good: true,
        lost_wakeup: passed.then(|| probe.woken.trailing_zeros() as u8),
    })
}

/// The watchdog's longest sleep between two looks at the running test.
const TICK_MS: u64 = 5;
/// How long a run goes before the watchdog starts asking whether it is blocked for good. Two
/// looks that agree prove the run blocked, whenever they are taken (a thread a wake-up made
/// runnable shows as running, [`stuck::blocked_snapshot`]); the threshold only saves looks at
/// runs that end by themselves.
const STUCK_AFTER_MS: u64 = 2;

/// The events recorded so far, without waiting on a buffer a stuck thread might hold.
fn peek_events() -> Vec<Event<&'static str>> {
    let mut all = Vec::new();
    for (role, buffer) in BUFFERS.iter().enumerate() {
        if let Ok(buffer) = buffer.try_lock() {
            all.extend(buffer.iter().map(|e| event(role, *e)));
        }
    }
    all.sort_by_key(|e| e.clock);
    all
}

/// The method `role` was in at the end of `events`, innermost first.
fn innermost(events: &[Event<&'static str>], role: u8) -> Option<String> {
    let mut stack = Vec::new();
    for e in events {
        if e.thread != role {
            continue;
        }
        if e.start {
            stack.push(e.method);
        } else {
            stack.pop();
        }
    }
    stack.last().map(|m| m.to_string())
}

// ---------------------------------------------------------------------------------------------
// Process plumbing: the protocol's stdout, the panic hook, exiting.

/// Keeps the real stdout for the protocol and points file descriptor 1 at stderr, so a
/// `println!` in user code cannot corrupt an answer.
fn take_stdout() -> &'static Mutex<Box<dyn Write + Send>> {
    OUT.get_or_init(|| Mutex::new(protocol_output()))
}

#[cfg(unix)]
fn protocol_output() -> Box<dyn Write + Send> {
    use std::os::fd::FromRawFd;
    extern "C" {
        fn dup(fd: i32) -> i32;
        fn dup2(from: i32, to: i32) -> i32;
    }
    let _ = std::io::stdout().flush();
    // SAFETY: dup/dup2 on the process's own standard descriptors; the duplicate is owned by
    // the File from here on and nothing else closes it.
    unsafe {
        let fd = dup(1);
        if fd < 0 {
            return Box::new(std::io::stdout());
        }
        dup2(2, 1);
        Box::new(std::io::BufWriter::new(std::fs::File::from_raw_fd(fd)))
    }
}

/// Keeps the real stdin for the protocol and points file descriptor 0 at `/dev/null`, so user
/// code that reads stdin cannot swallow a request.
#[cfg(unix)]
fn protocol_input() -> Box<dyn BufRead> {
    use std::os::fd::{AsRawFd, FromRawFd};
    extern "C" {
        fn dup(fd: i32) -> i32;
        fn dup2(from: i32, to: i32) -> i32;
    }
    let null = std::fs::File::open("/dev/null");
    // SAFETY: as in `protocol_output`; the duplicate is owned by the File from here on.
    unsafe {
        let fd = dup(0);
        match (fd, null) {
            (fd, Ok(null)) if fd >= 0 => {
                dup2(null.as_raw_fd(), 0);
                Box::new(std::io::BufReader::new(std::fs::File::from_raw_fd(fd)))
            }
            _ => Box::new(std::io::stdin().lock()),
        }
    }
}

#[cfg(not(unix))]
fn protocol_input() -> Box<dyn BufRead> {
    Box::new(std::io::stdin().lock())
}

#[cfg(not(unix))]
fn protocol_output() -> Box<dyn Write + Send> {
    Box::new(std::io::stdout())
}

fn write_line(out: &Mutex<Box<dyn Write + Send>>, text: &str) {
    let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
    let ok = writeln!(out, "{text}").and_then(|()| out.flush());
    if ok.is_err() {
        // The parent went away: nobody to answer to.
        hard_exit(0);
    }
}

fn install_panic_hook() {
    let verbose = std::env::var_os("COVCON_VERBOSE").is_some();
    std::panic::set_hook(Box::new(move |info| {
        let message = payload_text(info.payload());
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
        if points::role() != NO_ROLE {
            let clock = points::now();
            LAST_PANIC.with(|p| {
                let mut last = p.borrow_mut();
                // `guarded` clears it before each call and takes it when it catches one: a
                // panic that finds it set came while the call's earlier panic unwound (a
                // guard whose `Drop` panics too), and the process is about to abort. Say
                // which panic the call failed with, for the crash's message.
                if let Some((first, at, _)) = last.as_ref() {
                    eprintln!(
                        "{}{first} at {}",
                        covcon_protocol::UNWOUND_FROM,
                        at.as_deref().unwrap_or("?")
                    );
                }
                *last = Some((message, location, clock));
            });
        } else if verbose {
            eprintln!("covcon worker: panic outside a test thread: {message} at {location:?}");
        }
    }));
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "Box<dyn Any>".to_string()
    }
}

/// Ends the process at once, without running destructors or `atexit` handlers that a stuck
/// thread could block.
fn hard_exit(code: i32) -> ! {
    #[cfg(unix)]
    {
        extern "C" {
            fn _exit(code: i32) -> !;
        }
        // SAFETY: `_exit` ends the process; no Rust state is observed afterwards.
        unsafe { _exit(code) }
    }
    #[cfg(not(unix))]
    std::process::exit(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Debug` of thousands of entries, counting the entries it formatted.
    struct Slots(std::cell::Cell<usize>);

    struct Slot<'a>(usize, &'a std::cell::Cell<usize>);

    impl std::fmt::Debug for Slot<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.1.set(self.1.get() + 1);
            write!(f, "({}, \"slot\")", self.0)
        }
    }

    impl std::fmt::Debug for Slots {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_list()
                .entries((0..100_000).map(|i| Slot(i, &self.0)))
                .finish()
        }
    }

    /// An instance's state text stops being formatted past the clip length, and clips to
    /// the same text as the whole `Debug` would; a type without `Debug` has none.
    #[test]
    fn a_long_state_is_formatted_only_as_far_as_it_is_kept() {
        let slots = Slots(std::cell::Cell::new(0));
        let whole = crate::debug_text!(slots).expect("Debug");
        assert_eq!(slots.0.get(), 100_000);
        slots.0.set(0);
        let short = crate::state_text!(slots).expect("Debug");
        assert!(slots.0.get() < 1_000, "{} entries formatted", slots.0.get());
        assert!(short.len() > MAX_TEXT && short.len() < 2 * MAX_TEXT);
        assert_eq!(clip(short), clip(whole));
        struct Opaque;
        assert_eq!(crate::state_text!(Opaque), None);
        let small = vec![1, 2, 3];
        assert_eq!(crate::state_text!(small).as_deref(), Some("[1, 2, 3]"));
    }

    /// A run of a type that takes paths: its path arguments are in a fresh directory of its
    /// own, its texts name that directory `.`, and the directory is gone when the run ends.
    #[test]
    fn a_runs_paths_are_in_a_directory_of_its_own_that_its_texts_call_dot() {
        assert_eq!(run_path("a".into()), std::path::PathBuf::from("a"));
        let home = std::env::current_dir().unwrap();
        let first = RunDir::enter().expect("a directory in the working directory");
        let a = run_path("a".into());
        assert!(a.is_absolute() && a.starts_with(&first.dir) && first.dir.is_dir());
        // A path the type makes up itself (`default.sled`) lands there too.
        assert_eq!(std::env::current_dir().unwrap(), first.dir);
        let mut answer = empty_answer(Outcome::Passed);
        answer.results[0].push(Some(format!("Ok({a:?})")));
        answer.final_state = Some(format!("Store {{ dir: {:?} }}", first.dir));
        let answer = first.tidy(answer);
        assert_eq!(answer.results[0][0].as_deref(), Some("Ok(\"./a\")"));
        assert_eq!(answer.final_state.as_deref(), Some("Store { dir: \".\" }"));
        let dir = first.dir.clone();
        drop(first);
        assert!(!dir.exists());
        assert_eq!(std::env::current_dir().unwrap(), home);
        assert_eq!(run_path("a".into()), std::path::PathBuf::from("a"));
        let second = RunDir::enter().unwrap();
        assert_ne!(second.dir, dir);
    }

    /// An answer as the worker writes it reads in covcon as it was made, its events and
    /// covered pairs named by `String`s.
    #[test]
    fn an_answer_reads_in_covcon_as_the_worker_wrote_it() {
        let raw = |clock, method, start| RawEvent {
            clock,
            type_path: "k::T",
            method,
            start,
        };
        let events = vec![event(0, raw(1, "a", true)), event(1, raw(2, "b\"", true))];
        let answer = Answer {
            covered: Some(covered_pairs(&events, "k::T")),
            events,
            results: [vec![Some("()".into())], vec![None]],
            schedule: Some(covcon_protocol::Schedule {
                seed: 3,
                steps: 2,
                ..Default::default()
            }),
            ..empty_answer(Outcome::Panicked {
                thread: Some(1),
                call: 0,
                method: "b".into(),
                message: "m".into(),
                location: None,
                also: Vec::new(),
            })
        };
        let line = finish(with_id(7, answer.clone()), Instant::now());
        let read: Response = serde_json::from_str(&line).unwrap();
        assert_eq!(
            read.covered,
            Some(vec![["a".to_string(), "b\"".to_string()]])
        );
        assert_eq!(
            format!("{read:?}"),
            format!(
                "{:?}",
                Answer {
                    elapsed_us: read.elapsed_us,
                    ..with_id(7, answer)
                }
            )
        );
    }
}
