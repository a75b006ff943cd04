//! [`render_reproducer`]: a violation's test case as a standalone Rust `#[test]` that uses the
//! user's crate by its library name (no covcon runtime, no instrumentation), so it can be
//! pasted into the crate's `tests/` directory as it is.
//!
//! The test runs on two threads that make many runs each (a fresh pair every thousand runs).
//! In each run the first thread builds the instances and runs the prefix, hands the instances
//! to the second, and the two start their suffixes together at a spinning barrier. It repeats
//! until a thread panics (the panic is re-raised on the test's thread) or neither thread moves
//! on for 10 s (reported as a deadlock), for at most a minute. Argument values are rendered the
//! way the harness decodes them.
//!
//! The setup and the calls are the test as the reports lay it out ([`generator::display`]:
//! the same names, `c0`, `c0_e1`, `h0`, `g`, and the same calls on their targets), written as
//! Rust through this module's [`Spelling`]: values converted, instances and kept handles in
//! `Arc`s, `block_on`, a driven iterator, turbofish, an unused result bound to `_`. What only
//! a test needs is written around them here: the threads, the noise, the results' checks.
//!
//! The user's crate is not instrumented, so the reproducer brings its own schedule noise: a
//! rendered `Noise` helper (a xorshift seeded from the run and the thread, std only) spins each
//! thread a random while before its first call and now and then between two calls, in every
//! other run (the odd ones stay quiet). Without it the two threads meet at nearly the same
//! offset in every run, and a bug that needs them to meet at another may never show. It cannot
//! stop a thread inside a method, as covcon's schedule points in the instrumented copy do.
//!
//! [`render_results_reproducer`] writes the reproducer of a wrong result: it embeds the
//! outcomes the linearizations give ([`AllowedOutcomes`]: the `Debug` texts of the compared
//! suffix calls' results and of the final state, with what varied between sequential runs left
//! out), captures the same texts in each concurrent run, and fails with the observed texts
//! next to the closest allowed outcome's when they match none.

use crate::codegen::DRIVE_LIMIT;
use crate::harness::PreparedType;
use crate::results::AllowedOutcomes;
use analysis::{
    ConstructorKind, Finisher, GuardHolder, GuardTaking, InstancePassing, Method, Param, ParamKind,
    ReturnShape, TypeModel, PATH_BUF,
};
use generator::display::{
    built_code, call_code, element_name, finish_code, handle_name, instance_name, setup, statement,
    Spelling, GUARD,
};
use generator::{Call, Target, TestCase, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The indentation of a run's statements in a thread's body (inside the spawn, the loop over
/// runs and the `catch_unwind`).
const CALLS: &str = "                        ";

/// The result text of a call the harness skips because a local it takes was not kept, as
/// covcon-rt's worker writes it. Not compared by the results oracle on either side
/// ([`crate::results`]): whether the call ran follows from its thread's keep, whose own
/// answer is compared or left out.
pub(crate) const SKIPPED: &str = "(skipped: a value it takes was not kept)";

/// A tuple expression or pattern of `items`: `(a,)`, `(a, b,)`, or `()` for none.
fn tuple(items: &[String]) -> String {
    if items.is_empty() {
        "()".to_string()
    } else {
        format!("({},)", items.join(", "))
    }
}

/// The failure a reproducer looks for. Another failure in a run (a panic the report is not
/// about: ratelimit 0.7.1's overflow beside the deadlock covcon reported there) ends that
/// run's batch and is told at the end, should the sought one never show; it does not stop
/// the search, which it would otherwise end every time it comes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sought<'a> {
    /// Any panic or deadlock.
    Any,
    /// A panic with this message, digits aside (as the verdict compares messages).
    Panic(&'a str),
    /// A deadlock: the test's own watch, no panic.
    Deadlock,
    /// A wrong result: the reproducer's own check of a run's results.
    WrongResult,
}

/// The reproducer's source. `prepared` gives the generic instantiation the harness used (a
/// generic type without it gets `u32` for its parameters); `headline` says what went wrong
/// (`panic "key inserted twice" at src/lib.rs:31`) and goes into the file's doc comment. Any
/// panic or deadlock counts ([`Sought::Any`]).
pub fn render_reproducer(
    ty: &TypeModel,
    test: &TestCase,
    prepared: Option<&PreparedType>,
    headline: &str,
) -> String {
    render(ty, test, prepared, headline, None, Sought::Any)
}

/// As [`render_reproducer`], counting only the failure `sought` as the reproduced one.
pub fn render_reproducer_seeking(
    ty: &TypeModel,
    test: &TestCase,
    prepared: Option<&PreparedType>,
    headline: &str,
    sought: Sought<'_>,
) -> String {
    render(ty, test, prepared, headline, None, sought)
}

/// The reproducer of a wrong result: as [`render_reproducer`], and each run also fails when
/// the compared texts match none of `allowed`'s outcomes (computed for this `test`).
pub fn render_results_reproducer(
    ty: &TypeModel,
    test: &TestCase,
    prepared: Option<&PreparedType>,
    headline: &str,
    allowed: &AllowedOutcomes,
) -> String {
    render(
        ty,
        test,
        prepared,
        headline,
        Some(allowed),
        Sought::WrongResult,
    )
}

fn render(
    ty: &TypeModel,
    test: &TestCase,
    prepared: Option<&PreparedType>,
    headline: &str,
    allowed: Option<&AllowedOutcomes>,
    sought: Sought<'_>,
) -> String {
    let instantiation = instantiation(ty, prepared);
    let concrete = concrete_type(ty, test, prepared);
    let cx = Render {
        ty,
        instantiation: &instantiation,
        sees: allowed.is_some() && ty.methods.iter().any(Method::shows_closure_arguments),
    };
    let mut out = String::new();
    // The pair the test was built for, or the first call of each thread.
    let first = |t: usize| test.threads[t].first().map_or("", |c| c.method.as_str());
    let m1 = Some(test.pair[0].as_str())
        .filter(|m| !m.is_empty())
        .unwrap_or(first(0));
    let m2 = Some(test.pair[1].as_str())
        .filter(|m| !m.is_empty())
        .unwrap_or(first(1));
    doc_comment(&mut out, test, headline, m1, m2);
    cx.items(&mut out, test, &concrete, allowed);
    out.push_str(&sought_items(sought));
    let _ = writeln!(
        out,
        "#[test]\nfn covcon_violation_{}_{}_{}() {{",
        test.id,
        ident(m1),
        ident(m2)
    );
    if sought != Sought::Any {
        out.push_str(
            "    // Another failure's panic is printed the first time only.\n\
            \x20   let print = std::panic::take_hook();\n\
            \x20   std::panic::set_hook(Box::new(move |info| {\n\
            \x20       // `try_lock`: a panic raised while `OTHER` is held must not wait for it.\n\
            \x20       if sought(info.payload()) || OTHER.try_lock().map_or(true, |o| o.1.is_none()) {\n\
            \x20           print(info);\n\
            \x20       }\n\
            \x20   }));\n",
        );
    }
    out.push_str(
        "    // A minute, or `COVCON_REPRODUCE_SECS` seconds.\n\
        \x20   let seconds = std::env::var(\"COVCON_REPRODUCE_SECS\").ok().and_then(|s| s.parse().ok()).unwrap_or(60);\n\
        \x20   let deadline = Instant::now() + Duration::from_secs(seconds);\n\
        \x20   // Runs before this batch.\n\
        \x20   let mut first = 0u64;\n\
        \x20   while Instant::now() < deadline {\n\
        \x20       let (shared, stopped) = Shared::new();\n\
        \x20       let shared = Arc::new(shared);\n",
    );
    // What thread 1 builds and hands to thread 2 in each run: not the instances of a type
    // that cannot be shared, whose thread 2 calls only their handles.
    let mut state: Vec<String> = if ty.confined {
        Vec::new()
    } else {
        (0..test.instances.len()).map(instance_name).collect()
    };
    state.extend((0..test.handles.len()).map(handle_name));
    cx.first_thread(&mut out, test, &state, allowed);
    cx.second_thread(&mut out, test, &state, allowed);
    out.push_str(
        "        let runs = shared.watch(&stopped, first);\n\
        \x20       join_within([t0, t1], first + runs);\n\
        \x20       first += runs;\n\
        \x20   }\n",
    );
    if sought != Sought::Any {
        out.push_str("    other_failures(first);\n");
    }
    out.push_str("}\n");
    if out.contains("run_dir(run)") {
        out.push_str(RUN_DIR);
    }
    with_alloc(out)
}

/// The type's generic parameters by name, each with its argument: the harness's, else
/// covcon's first instantiation.
fn instantiation(ty: &TypeModel, prepared: Option<&PreparedType>) -> BTreeMap<String, String> {
    match prepared {
        Some(p) => p.instantiation.clone(),
        None => crate::codegen::generic_names(&ty.generics)
            .into_iter()
            .zip(crate::codegen::instantiate(&ty.generics, 0))
            .filter(|(n, _)| !n.starts_with('\''))
            .collect(),
    }
}

/// The type as the reproducer names it (`T`): the harness's concrete type, else the test's
/// path with covcon's first instantiation.
fn concrete_type(ty: &TypeModel, test: &TestCase, prepared: Option<&PreparedType>) -> String {
    match prepared {
        Some(p) if !p.concrete.is_empty() => p.concrete.clone(),
        _ => {
            let args = crate::codegen::instantiate(&ty.generics, 0);
            let path = format!("::{}", test.type_path);
            if args.is_empty() {
                path
            } else {
                format!("{path}<{}>", args.join(", "))
            }
        }
    }
}

/// The file's `//!` comment: what it reproduces (`m1` and `m2` running concurrently, with
/// `headline`) and how to run it.
fn doc_comment(out: &mut String, test: &TestCase, headline: &str, m1: &str, m2: &str) {
    let _ = writeln!(
        out,
        "//! Reproduces a thread-safety violation cargo covcon found in `{}`: `{m1}` and `{m2}`\n\
         //! running concurrently: {}.\n\
         //!\n\
         //! Test case {} (noise seed {}). Put this file in the crate's `tests/` directory and run\n\
         //! it, built as cargo covcon's harness is: optimised, with debug assertions and overflow\n\
         //! checks on, since a bug may show only as a failed `debug_assert!` or an overflow:\n\
         //!\n\
         //! ```text\n\
         //! CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true \\\n\
         //!     cargo test --release --test <file name>\n\
         //! ```\n\
         //!\n\
         //! It repeats the test for up to a minute (`COVCON_REPRODUCE_SECS` sets another time), with\n\
         //! schedule noise that changes from run to run, and fails as soon as the failure shows.\n\
         //! `cargo covcon replay` runs the `.json` twin{}.\n",
        test.type_path,
        headline.replace('\n', " "),
        test.id,
        test.noise_seed,
        if test.control.is_free() {
            ""
        } else {
            // Only the instrumented copy has the schedule points a schedule names.
            " under the schedule that showed it, on covcon's instrumented copy of the crate,\n\
             //! which repeats the interleaving exactly"
        }
    );
}

/// The helper a reproducer whose calls take paths gets: each run's paths are in a directory
/// of its own under the system's temporary directory (covcon's runs each work in a fresh one),
/// so a run finds none of another's files and nothing is written where the test runs.
const RUN_DIR: &str = "
/// The directory of run `run`, made on first use; the previous run's, over by then, goes.
fn run_dir(run: u64) -> std::path::PathBuf {
    let dir = |r: u64| std::env::temp_dir().join(format!(\"covcon-{}-run-{r}\", std::process::id()));
    if run > 0 {
        let _ = std::fs::remove_dir_all(dir(run - 1));
    }
    let path = dir(run);
    std::fs::create_dir_all(&path).unwrap();
    path
}
";

/// The file with `extern crate alloc;` before its imports when it names `::alloc::` (a
/// `no_std` crate's `alloc::sync::Arc` in a turbofish): a test crate is `std`, whose extern
/// prelude has no `alloc` otherwise.
fn with_alloc(out: String) -> String {
    if !out.contains("::alloc::") {
        return out;
    }
    let imports = "use std::sync::atomic::";
    match out.find(imports) {
        Some(at) => format!("{}extern crate alloc;\n{}", &out[..at], &out[at..]),
        None => out,
    }
}

/// The items that tell the failure `sought` from another: `sought(payload)`, `note_other` and,
/// unless any failure counts, `other_failures` (called after the last run).
fn sought_items(sought: Sought<'_>) -> String {
    let (what, body) = match sought {
        Sought::Any => {
            return "/// Whether a thread's panic is the failure this test reproduces: any is.\n\
                    fn sought(_: &(dyn std::any::Any + Send)) -> bool {\n\
                    \x20   true\n\
                    }\n\n\
                    fn note_other(_: &(dyn std::any::Any + Send)) {}\n\n"
                .to_string()
        }
        Sought::Panic(message) => (
            format!(
                "a panic with the message {:?} (digits aside)",
                message.replace('\n', " ")
            ),
            format!(
                "    const MESSAGE: &str = {message:?};\n\
                 \x20   // Digits aside: lengths, counters and addresses differ from run to run.\n\
                 \x20   let digits = |s: &str| s.split(|c: char| c.is_ascii_digit()).filter(|p| !p.is_empty()).map(str::to_owned).collect::<Vec<_>>();\n\
                 \x20   match payload_text(panic) {{\n\
                 \x20       Some(text) => digits(&text) == digits(MESSAGE),\n\
                 \x20       None => MESSAGE == \"Box<dyn Any>\",\n\
                 \x20   }}\n"
            ),
        ),
        Sought::Deadlock => (
            "a deadlock (no panic is)".to_string(),
            "    let _ = panic;\n    false\n".to_string(),
        ),
        Sought::WrongResult => (
            "a wrong result (`check_outcome`'s panic)".to_string(),
            "    payload_text(panic).is_some_and(|text| text.starts_with(\"wrong result in run \"))\n"
                .to_string(),
        ),
    };
    format!(
        "/// Whether a thread's panic is the failure this test reproduces: {what}.\n\
         fn sought(panic: &(dyn std::any::Any + Send)) -> bool {{\n\
         {body}\
         }}\n\n\
         /// A panic's message, when it has one.\n\
         #[allow(dead_code)]\n\
         fn payload_text(panic: &(dyn std::any::Any + Send)) -> Option<String> {{\n\
         \x20   panic\n\
         \x20       .downcast_ref::<&str>()\n\
         \x20       .map(|s| s.to_string())\n\
         \x20       .or_else(|| panic.downcast_ref::<String>().cloned())\n\
         }}\n\n\
         /// Panics other than the one sought: how many, and the first one's message.\n\
         static OTHER: Mutex<(u64, Option<String>)> = Mutex::new((0, None));\n\n\
         /// Notes a panic that is not the failure sought (another bug, or a contract the test\n\
         /// breaks): its run's batch ends and a fresh one goes on.\n\
         fn note_other(panic: &(dyn std::any::Any + Send)) {{\n\
         \x20   let text = payload_text(panic).unwrap_or_else(|| \"Box<dyn Any>\".to_string());\n\
         \x20   let mut other = lock(&OTHER);\n\
         \x20   if other.1.is_none() {{\n\
         \x20       eprintln!(\"another failure than the one this test reproduces (going on): {{text}}\");\n\
         \x20   }}\n\
         \x20   other.0 += 1;\n\
         \x20   other.1.get_or_insert(text);\n\
         }}\n\n\
         /// After the last of `runs` runs: the failure sought never showed; fails if another did.\n\
         fn other_failures(runs: u64) {{\n\
         \x20   let other = lock(&OTHER).clone();\n\
         \x20   if let (count, Some(first)) = other {{\n\
         \x20       // std's hook again, which the test's quiet one replaced: this panic is told.\n\
         \x20       drop(std::panic::take_hook());\n\
         \x20       panic!(\"the failure this test reproduces did not show in {{}} runs, but another did, {{}} times; the first: {{}}\", runs, count, first);\n\
         \x20   }}\n\
         }}\n\n"
    )
}

/// The reproducer's executor for `async fn` calls, std only: polls the future on the calling
/// thread and parks it while the future is pending.
const BLOCK_ON: &str = "\
/// Runs a future to completion on this thread (the methods under test are `async fn`s).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let mut future = std::pin::pin!(future);
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

";

/// The reproducer's two threads and what they share, the same text in every reproducer.
///
/// One run on two freshly spawned threads is slow to start, and on a loaded machine the two
/// seldom run at the same moment: measured on the lost update of `rusty::hit_counter` with two
/// busy loops on the machine's two cores, a reproducer spawning per run never failed within its
/// minute, where this one failed in every run of thirty (median 0.5 s, at most 4.2 s). A pair of
/// threads makes many runs, meeting at a spinning barrier before each; a fresh pair takes over
/// every thousand runs, since a pair the system placed badly (both on one core) stayed so for a
/// whole minute in one measured run of twenty.
const SHARED: &str = "\
/// Runs one pair of threads makes before a fresh pair takes over, so that two threads the
/// system placed badly (both on one core, say) do not stay so for the whole minute.
const RUNS_PER_PAIR: u64 = 1_000;

/// What the test's two threads share in a batch of runs. Thread 1 builds each run's instances
/// and runs the prefix, then hands the instances to thread 2 (`publish`); the two meet at a
/// spinning barrier (`start_together`) and call at once; thread 2 hands back what it saw
/// (`finish`). A panic in either stops both (`fail`); the test's own thread watches (`watch`).
/// A panic other than the failure sought (`sought`) ends the batch without failing the test:
/// a fresh pair goes on.
struct Shared<S> {
    state: Mutex<Option<S>>,
    published: AtomicU64,
    arrived: AtomicU64,
    finished: AtomicU64,
    seen: Mutex<Vec<String>>,
    failure: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    stop: AtomicBool,
    stopped: Mutex<std::sync::mpsc::Sender<()>>,
}

#[allow(dead_code)]
impl<S> Shared<S> {
    fn new() -> (Self, std::sync::mpsc::Receiver<()>) {
        let (stopped, receiver) = std::sync::mpsc::channel();
        let shared = Shared {
            state: Mutex::new(None),
            published: AtomicU64::new(0),
            arrived: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            seen: Mutex::new(Vec::new()),
            failure: Mutex::new(None),
            stop: AtomicBool::new(false),
            stopped: Mutex::new(stopped),
        };
        (shared, receiver)
    }

    /// Spins until `ready()` holds, yielding now and then; false when the batch stops first.
    fn wait(&self, ready: impl Fn() -> bool) -> bool {
        let mut spins = 0u32;
        while !ready() {
            if self.stopping() {
                return false;
            }
            spins = spins.wrapping_add(1);
            if spins % 4096 == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        true
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = lock(&self.stopped).send(());
    }

    /// A thread panicked: the batch stops, and the test fails with the panic when it is the
    /// failure sought; another is noted (`note_other`).
    fn fail(&self, panic: Box<dyn std::any::Any + Send>) {
        if sought(panic.as_ref()) {
            lock(&self.failure).get_or_insert(panic);
        } else {
            note_other(panic.as_ref());
        }
        self.stop();
    }

    fn publish(&self, run: u64, state: S) {
        *lock(&self.state) = Some(state);
        self.published.store(run, Ordering::SeqCst);
    }

    fn published(&self, run: u64) -> bool {
        self.published.load(Ordering::SeqCst) >= run
    }

    fn take_state(&self) -> S {
        lock(&self.state).take().expect(\"thread 1 published the run\")
    }

    /// Both threads arrive for `run`; false when the batch stops first.
    fn start_together(&self, run: u64) -> bool {
        self.arrived.fetch_add(1, Ordering::SeqCst);
        self.wait(|| self.arrived.load(Ordering::SeqCst) >= 2 * run)
    }

    fn finish(&self, run: u64, seen: Vec<String>) {
        *lock(&self.seen) = seen;
        self.finished.store(run, Ordering::SeqCst);
    }

    fn finished(&self, run: u64) -> bool {
        self.finished.load(Ordering::SeqCst) >= run
    }

    fn take_seen(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.seen))
    }

    /// Waits for the batch to end and answers how many runs it made (`first` runs came
    /// before it). Re-raises a thread's panic, and fails as a deadlock when neither thread
    /// moves on for 10 s.
    fn watch(&self, stopped: &std::sync::mpsc::Receiver<()>, first: u64) -> u64 {
        let progress = || {
            self.published.load(Ordering::SeqCst)
                + self.arrived.load(Ordering::SeqCst)
                + self.finished.load(Ordering::SeqCst)
        };
        let mut last = (progress(), Instant::now());
        while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            stopped.recv_timeout(Duration::from_millis(100))
        {
            if progress() != last.0 {
                last = (progress(), Instant::now());
            } else if last.1.elapsed() > Duration::from_secs(10) {
                let run = first + self.published.load(Ordering::SeqCst);
                panic!(\"deadlock: the two threads made no progress for 10 s (run {})\", run);
            }
        }
        if let Some(panic) = lock(&self.failure).take() {
            std::panic::resume_unwind(panic);
        }
        self.published.load(Ordering::SeqCst)
    }
}

/// Locks `mutex`, whether or not a panicking thread poisoned it.
fn lock<V>(mutex: &Mutex<V>) -> std::sync::MutexGuard<'_, V> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Joins a batch's two threads once it stopped. A thread still in a call 10 s later (spinning
/// on a lock the other thread's panic left broken) fails the test as a deadlock rather than
/// hang it.
fn join_within<R>(threads: [std::thread::JoinHandle<R>; 2], run: u64) {
    let stopped = Instant::now();
    while threads.iter().any(|t| !t.is_finished()) {
        if stopped.elapsed() > Duration::from_secs(10) {
            // std's hook again, which the test's quiet one replaced: this panic is told.
            drop(std::panic::take_hook());
            panic!(\"deadlock: a thread was still in a call 10 s after its batch stopped (run {})\", run);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    for thread in threads {
        let _ = thread.join();
    }
}

";

/// The reproducer's schedule noise, the same text in every reproducer: what it draws changes
/// with the run, its shape does not. Measured on the fixtures, noise in every run made many
/// reproducers slower to fail than none (0.1 s became 1.4 to 9 s) and a few fail that did not;
/// hence the quiet odd runs and the short delays.
const NOISE: &str = "\
/// Schedule noise for one thread of one run, so that over the runs the two threads' calls meet
/// at many different offsets: a spin of random length before the first call, and now and then a
/// short spin or a `yield_now` between two calls. Drawn from a xorshift generator seeded from
/// the run and the thread, so a run's noise is the same every time.
struct Noise(u64);

#[allow(dead_code)]
impl Noise {
    /// Odd runs are quiet (a zero state draws only zeros): calls that start together show
    /// some bugs fastest, noise shows others.
    fn new(run: u64, thread: u64) -> Self {
        if run % 2 == 1 {
            return Noise(0);
        }
        let seed = run.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (thread + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
        Noise(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Spins 0 to 1,023 times; the length's order of magnitude is uniform, so short delays
    /// are as common as long ones.
    fn before_first_call(&mut self) {
        let bits = self.next() % 11;
        let spins = self.next() & ((1 << bits) - 1);
        for _ in 0..spins {
            std::hint::spin_loop();
        }
    }

    /// Nothing half of the time; else a spin of up to 255 times or, one time in sixteen, a
    /// yield.
    fn between_calls(&mut self) {
        match self.next() % 16 {
            0..=7 => {}
            8..=14 => {
                for _ in 0..self.next() % 256 {
                    std::hint::spin_loop();
                }
            }
            _ => std::thread::yield_now(),
        }
    }
}

";

/// The allowed outcomes as constants, and the helpers that compare a run's texts with them.
fn render_allowed(out: &mut String, test: &TestCase, allowed: &AllowedOutcomes) {
    let mut places: Vec<String> = allowed
        .calls
        .iter()
        .map(|&(t, i)| {
            let method = test.threads[t as usize]
                .get(i as usize)
                .map_or("", |c| c.method.as_str());
            format!("thread {} call {} `{method}`", t + 1, i + 1)
        })
        .collect();
    if allowed.final_state {
        places.push("final state".to_string());
    }
    out.push_str("/// What is compared in each run, in this order.\nconst PLACES: &[&str] = &[\n");
    for place in &places {
        let _ = writeln!(out, "    {place:?},");
    }
    out.push_str("];\n\n");
    out.push_str(
        "/// The texts of [`PLACES`] in each outcome a sequential order of the same calls gives\n\
         /// (found by running every order twice on a fresh instance).\n",
    );
    if !allowed.left_out.is_empty() {
        out.push_str("/// Left out, because it is not a function of the calls:\n");
        for left_out in &allowed.left_out {
            let _ = writeln!(out, "/// - {}", left_out.to_string().replace('\n', " "));
        }
    }
    out.push_str("const ALLOWED: &[&[&str]] = &[\n");
    for outcome in &allowed.outcomes {
        let order: Vec<String> = outcome
            .order
            .iter()
            .map(|(t, i)| format!("t{}.{}", t + 1, i + 1))
            .collect();
        let _ = writeln!(out, "    // {}", order.join(" "));
        // Addresses as `clip` writes them: the same code or heap block lies elsewhere in the
        // test's process (prometheus-client's `Family` shows its `fn` constructor).
        let texts: Vec<String> = outcome
            .texts
            .iter()
            .map(|t| format!("{:?}", crate::results::without_addresses(t)))
            .collect();
        let _ = writeln!(out, "    &[{}],", texts.join(", "));
    }
    out.push_str("];\n\n");
    let _ = writeln!(
        out,
        "/// What a call answers when its thread kept no value for it: matches any text.\n\
         const SKIPPED: &str = {SKIPPED:?};\n"
    );
    if allowed.keys.iter().any(|k| *k) {
        render_key_renaming(out, allowed);
    }
    let keyed = allowed.keys.iter().any(|k| *k);
    out.push_str(
        &"/// A `Debug` text cut to 2000 bytes, as cargo covcon's harness cuts it, its addresses (`0x`\n\
         /// and 8 or more hex digits) and null pointers (`0x0`) written `0x…`, as cargo covcon\n\
         /// compares it: where code or an instance lives is no answer of the calls.\n\
         fn clip(text: String) -> String {\n\
        \x20   let mut masked = String::with_capacity(text.len());\n\
        \x20   let mut rest = text.as_str();\n\
        \x20   while let Some(at) = rest.find(\"0x\") {\n\
        \x20       let digits = rest[at + 2..]\n\
        \x20           .find(|c: char| !c.is_ascii_hexdigit())\n\
        \x20           .unwrap_or(rest.len() - at - 2);\n\
        \x20       masked.push_str(&rest[..at + 2]);\n\
        \x20       if digits >= 8 || (digits == 1 && rest[at + 2..].starts_with('0')) {\n\
        \x20           masked.push('…');\n\
        \x20       } else {\n\
        \x20           masked.push_str(&rest[at + 2..at + 2 + digits]);\n\
        \x20       }\n\
        \x20       rest = &rest[at + 2 + digits..];\n\
        \x20   }\n\
        \x20   masked.push_str(rest);\n\
        \x20   let mut text = masked;\n\
        \x20   if text.len() > 2000 {\n\
        \x20       let mut end = 2000;\n\
        \x20       while !text.is_char_boundary(end) {\n\
        \x20           end -= 1;\n\
        \x20       }\n\
        \x20       text.truncate(end);\n\
        \x20       text.push('…');\n\
        \x20   }\n\
        \x20   {HIDE}\n\
         }\n\n\
         /// Fails with the observed texts next to the closest allowed outcome's when `observed`\n\
         /// is none of [`ALLOWED`].\n\
         fn check_outcome(observed: &[String], runs: u64) {\n\
         {RENAME}        \x20   // A call skipped because its thread kept no value for it matches anything: its\n\
        \x20   // thread's keep says whether the value was there.\n\
        \x20   let differing = |allowed: &[&str]| {\n\
        \x20       let skipped = |t: &str| t == SKIPPED;\n\
        \x20       allowed.iter().zip(observed).filter(|(a, o)| **a != o.as_str() && !skipped(a) && !skipped(o)).count()\n\
        \x20   };\n\
        \x20   let Some(closest) = ALLOWED.iter().min_by_key(|a| differing(a)) else {\n\
        \x20       return;\n\
        \x20   };\n\
        \x20   if differing(closest) == 0 {\n\
        \x20       return;\n\
        \x20   }\n\
        \x20   let mut message = format!(\"wrong result in run {runs}: no sequential order of the same calls gives it\");\n\
        \x20   for ((place, seen), expected) in PLACES.iter().zip(observed).zip(closest.iter()) {\n\
        \x20       if seen != expected {\n\
        \x20           message.push_str(&format!(\"\\n  {place}: observed {seen}, closest allowed {expected}\"));\n\
        \x20       }\n\
        \x20   }\n\
        \x20   panic!(\"{}\", message);\n\
         }\n\n"
        .replace(
            "{RENAME}",
            if keyed {
                "\x20   let observed = &renamed_keys(observed);\n"
            } else {
                ""
            },
        )
        .replace(
            "{HIDE}",
            if allowed.hidden.is_empty() {
                "text"
            } else {
                "hide(text)"
            },
        ),
    );
    if !allowed.hidden.is_empty() {
        render_hiding(out, &allowed.hidden);
    }
}

/// The constant and the functions that hide, in a run's texts, the bodies of the values that
/// cargo covcon hid in the allowed outcomes' (`results::hide_objects`): the state of another
/// thread-safe type of the crate that the compared value holds.
fn render_hiding(out: &mut String, hidden: &[String]) {
    let _ = writeln!(
        out,
        "/// Thread-safe types of the crate: inside another value's text, the body of such a value\n\
         /// (its own synchronisation state, which an overlap of the calls changes without\n\
         /// changing their answers) is written `…`, as cargo covcon compares it.\n\
         const HIDDEN: &[&str] = &{hidden:?};\n"
    );
    out.push_str(
        "/// `text` with the body of every value of a [`HIDDEN`] type written `…`.\n\
         fn hide(text: String) -> String {\n\
        \x20   if !HIDDEN.iter().any(|name| text.contains(name)) {\n\
        \x20       return text;\n\
        \x20   }\n\
        \x20   let chars: Vec<char> = text.chars().collect();\n\
        \x20   let word = |c: char| c.is_alphanumeric() || c == '_';\n\
        \x20   let mut out = String::with_capacity(text.len());\n\
        \x20   let mut at = 0;\n\
        \x20   while at < chars.len() {\n\
        \x20       if chars[at] == '\"' {\n\
        \x20           let end = past(&chars, at);\n\
        \x20           out.extend(&chars[at..end]);\n\
        \x20           at = end;\n\
        \x20           continue;\n\
        \x20       }\n\
        \x20       let starts = at == 0 || !(word(chars[at - 1]) || chars[at - 1] == ':');\n\
        \x20       let named = HIDDEN.iter().map(|n| n.chars().collect::<Vec<char>>()).find(|n| {\n\
        \x20           starts\n\
        \x20               && chars[at..].starts_with(n)\n\
        \x20               && !matches!(chars.get(at + n.len()), Some(c) if word(*c))\n\
        \x20       });\n\
        \x20       if let Some(name) = named {\n\
        \x20           let mut open = at + name.len();\n\
        \x20           while chars.get(open) == Some(&' ') {\n\
        \x20               open += 1;\n\
        \x20           }\n\
        \x20           if let Some(&bracket @ ('{' | '(')) = chars.get(open) {\n\
        \x20               out.extend(&name);\n\
        \x20               out.push_str(if bracket == '{' { \" {…}\" } else { \"(…)\" });\n\
        \x20               at = past(&chars, open);\n\
        \x20               continue;\n\
        \x20           }\n\
        \x20       }\n\
        \x20       out.push(chars[at]);\n\
        \x20       at += 1;\n\
        \x20   }\n\
        \x20   out\n\
         }\n\n\
         /// The index just past the string literal or bracketed group that opens at `chars[at]`.\n\
         fn past(chars: &[char], mut at: usize) -> usize {\n\
        \x20   let mut depth = 0usize;\n\
        \x20   while at < chars.len() {\n\
        \x20       match chars[at] {\n\
        \x20           '\"' => {\n\
        \x20               at += 1;\n\
        \x20               while at < chars.len() && chars[at] != '\"' {\n\
        \x20                   at += if chars[at] == '\\\\' { 2 } else { 1 };\n\
        \x20               }\n\
        \x20           }\n\
        \x20           '{' | '(' | '[' => depth += 1,\n\
        \x20           '}' | ')' | ']' => depth = depth.saturating_sub(1),\n\
        \x20           _ => {}\n\
        \x20       }\n\
        \x20       at += 1;\n\
        \x20       if depth == 0 {\n\
        \x20           return at;\n\
        \x20       }\n\
        \x20   }\n\
        \x20   chars.len()\n\
         }\n\n",
    );
}

/// The constants and the function that rename the keys a run observed as cargo covcon renamed
/// the allowed outcomes' (`results::rename_keys`): which value an opaque key has is no answer
/// of the calls, which calls answered the same key is.
fn render_key_renaming(out: &mut String, allowed: &AllowedOutcomes) {
    let keys: Vec<String> = allowed.keys.iter().map(bool::to_string).collect();
    let _ = writeln!(
        out,
        "/// Whether each of [`PLACES`]' calls answers an opaque key of the type, compared up to a\n\
         /// consistent renaming: the n-th distinct key in [`PLACES`] order is written `#n`.\n\
         const KEYED: &[bool] = &[{}];\n\n\
         /// The keys the prefix answered: they keep their text.\n\
         const FIXED_KEYS: &[&str] = &{:?};\n",
        keys.join(", "),
        allowed.fixed_keys
    );
    out.push_str(
        "/// `observed` with the key each [`KEYED`] text holds (inside `Some(..)` or `Ok(..)`, or the\n\
         /// whole text; `None` and `Err(..)` hold none) written `#n`, unless the prefix answered it,\n\
         /// and those keys renamed in the final state (the text after [`KEYED`]'s) too.\n\
         fn renamed_keys(observed: &[String]) -> Vec<String> {\n\
        \x20   let mut names: Vec<String> = Vec::new();\n\
        \x20   let mut renamed = observed.to_vec();\n\
        \x20   for (text, _) in renamed.iter_mut().zip(KEYED).filter(|(_, keyed)| **keyed) {\n\
        \x20       if text == \"None\" || text == SKIPPED || text.starts_with(\"Err(\") {\n\
        \x20           continue;\n\
        \x20       }\n\
        \x20       let (open, key) = [\"Some(\", \"Ok(\"]\n\
        \x20           .iter()\n\
        \x20           .find_map(|open| Some((*open, text.strip_prefix(open)?.strip_suffix(')')?)))\n\
        \x20           .unwrap_or((\"\", text.as_str()));\n\
        \x20       if FIXED_KEYS.contains(&key) {\n\
        \x20           continue;\n\
        \x20       }\n\
        \x20       let n = match names.iter().position(|k| k == key) {\n\
        \x20           Some(n) => n,\n\
        \x20           None => {\n\
        \x20               names.push(key.to_string());\n\
        \x20               names.len() - 1\n\
        \x20           }\n\
        \x20       };\n\
        \x20       let close = if open.is_empty() { \"\" } else { \")\" };\n\
        \x20       *text = format!(\"{open}#{}{close}\", n + 1);\n\
        \x20   }\n\
        \x20   // The final state, after the calls: each key in it renamed too, longest first, but\n\
        \x20   // not one that is a bare number (a count may read the same).\n\
        \x20   if let Some(state) = renamed.get_mut(KEYED.len()) {\n\
        \x20       let mut order: Vec<(usize, &String)> = names\n\
        \x20           .iter()\n\
        \x20           .enumerate()\n\
        \x20           .filter(|(_, key)| key.chars().any(|c| !(c.is_ascii_digit() || c == '-')))\n\
        \x20           .collect();\n\
        \x20       order.sort_by_key(|(_, key)| std::cmp::Reverse(key.len()));\n\
        \x20       for (n, key) in order {\n\
        \x20           *state = state.replace(key.as_str(), &format!(\"#{}\", n + 1));\n\
        \x20       }\n\
        \x20   }\n\
        \x20   renamed\n\
         }\n\n",
    );
}

fn ident(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

struct Render<'a> {
    ty: &'a TypeModel,
    instantiation: &'a BTreeMap<String, String>,
    /// Whether calls answer what their closures saw of their arguments (the results oracle's
    /// reproducer, whose file then holds the `saw` module, [`SAW`]).
    sees: bool,
}

/// The results reproducer's record of what the closures a call passes see of their arguments,
/// as cargo covcon's harness records it (`covcon_rt::see`): a call that called its closures
/// exactly once answers `<answer> saw (<texts>)`, each text the argument's `Debug`, or `_` (an
/// iterator, a type without `Debug`).
const SAW: &str = "/// What the closures a call passes see of their arguments, as cargo covcon's harness records\n\
/// it: a call that called its closures exactly once answers `<answer> saw (<texts>)`.\n\
#[allow(dead_code)]\n\
mod saw {\n\
\x20   use std::cell::RefCell;\n\
\x20   use std::fmt::Debug;\n\
\x20   use std::sync::atomic::{AtomicU64, Ordering};\n\
\n\
\x20   thread_local! {\n\
\x20       static RECORD: RefCell<Option<(u64, u32, Vec<Option<String>>)>> = const { RefCell::new(None) };\n\
\x20   }\n\
\x20   static NEXT: AtomicU64 = AtomicU64::new(1);\n\
\n\
\x20   pub fn start() {\n\
\x20       let id = NEXT.fetch_add(1, Ordering::Relaxed);\n\
\x20       RECORD.with(|r| *r.borrow_mut() = Some((id, 0, Vec::new())));\n\
\x20   }\n\
\n\
\x20   pub fn id() -> u64 {\n\
\x20       RECORD.with(|r| r.borrow().as_ref().map_or(0, |r| r.0))\n\
\x20   }\n\
\n\
\x20   pub fn see(id: u64, texts: impl FnOnce() -> Vec<Option<String>>) {\n\
\x20       let first = RECORD.with(|r| match r.borrow_mut().as_mut() {\n\
\x20           Some(r) if r.0 == id && id != 0 => {\n\
\x20               r.1 += 1;\n\
\x20               r.1 == 1\n\
\x20           }\n\
\x20           _ => false,\n\
\x20       });\n\
\x20       if first {\n\
\x20           let texts = texts();\n\
\x20           RECORD.with(|r| {\n\
\x20               if let Some(r) = r.borrow_mut().as_mut().filter(|r| r.0 == id) {\n\
\x20                   r.2 = texts;\n\
\x20               }\n\
\x20           });\n\
\x20       }\n\
\x20   }\n\
\n\
\x20   pub fn end(text: String) -> String {\n\
\x20       match RECORD.with(|r| r.borrow_mut().take()) {\n\
\x20           Some((_, 1, texts)) if texts.iter().any(Option::is_some) => {\n\
\x20               let texts: Vec<String> = texts.into_iter().map(|t| t.unwrap_or_else(|| \"_\".to_string())).collect();\n\
\x20               format!(\"{text} saw ({})\", texts.join(\", \"))\n\
\x20           }\n\
\x20           _ => text,\n\
\x20       }\n\
\x20   }\n\
\n\
\x20   pub struct Seen<'a, T: ?Sized>(pub &'a T);\n\
\x20   pub trait Items {\n\
\x20       fn saw(&self) -> Option<String>;\n\
\x20   }\n\
\x20   impl<I: Iterator> Items for &&Seen<'_, I> {\n\
\x20       fn saw(&self) -> Option<String> {\n\
\x20           None\n\
\x20       }\n\
\x20   }\n\
\x20   pub trait Text {\n\
\x20       fn saw(&self) -> Option<String>;\n\
\x20   }\n\
\x20   impl<T: Debug + ?Sized> Text for &Seen<'_, T> {\n\
\x20       fn saw(&self) -> Option<String> {\n\
\x20           Some(format!(\"{:?}\", self.0))\n\
\x20       }\n\
\x20   }\n\
\x20   pub trait Nothing {\n\
\x20       fn saw(&self) -> Option<String>;\n\
\x20   }\n\
\x20   impl<T: ?Sized> Nothing for Seen<'_, T> {\n\
\x20       fn saw(&self) -> Option<String> {\n\
\x20           None\n\
\x20       }\n\
\x20   }\n\
}\n\
\n\
/// What a closure sees of its argument `$e`.\n\
macro_rules! saw_text {\n\
\x20   ($e:expr) => {{\n\
\x20       #[allow(unused_imports)]\n\
\x20       use saw::{Items as _, Nothing as _, Text as _};\n\
\x20       (&&&saw::Seen(&$e)).saw()\n\
\x20   }};\n\
}\n\n";

impl Render<'_> {
    /// The file's items before the test: its imports, the type `T` (`concrete`) and the
    /// helpers the test uses.
    fn items(
        &self,
        out: &mut String,
        test: &TestCase,
        concrete: &str,
        allowed: Option<&AllowedOutcomes>,
    ) {
        let ty = self.ty;
        out.push_str(
            "use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};\n\
             use std::sync::{Arc, Mutex};\n\
             use std::time::{Duration, Instant};\n",
        );
        // The crate's traits, for trait methods; the names above shadow anything it exports.
        let krate = test.type_path.split("::").next().unwrap_or_default();
        // `extern crate` too: a crate of edition 2015 (spin 0.9) names its dependencies so in
        // its tests; in later editions it changes nothing.
        let _ = writeln!(
            out,
            "extern crate {krate};\n#[allow(unused_imports)]\nuse {krate}::*;"
        );
        // The traits of trait methods the test calls, wherever they live.
        let mut traits: Vec<&str> = test
            .handles
            .iter()
            .chain(&test.prefix)
            .chain(test.threads.iter().flatten())
            .filter_map(|c| ty.methods.iter().find(|m| m.name == c.method))
            .filter_map(|m| m.trait_name.as_deref())
            .collect();
        traits.sort();
        traits.dedup();
        for tr in traits {
            let _ = writeln!(out, "#[allow(unused_imports)]\nuse {tr} as _;");
        }
        out.push('\n');
        let _ = writeln!(out, "type T = {concrete};\n");
        out.push_str(SHARED);
        out.push_str(NOISE);
        let calls = test
            .handles
            .iter()
            .chain(&test.prefix)
            .chain(test.threads.iter().flatten());
        let mut methods = calls.filter_map(|c| ty.methods.iter().find(|m| m.name == c.method));
        if methods.any(|m| m.is_async) {
            out.push_str(BLOCK_ON);
        }
        if let Some(allowed) = allowed {
            render_allowed(out, test, allowed);
            if self.sees {
                out.push_str(SAW);
            }
        }
    }

    /// Thread 1 (`t0`): builds the run's instances, runs the prefix, hands the instances and
    /// handles (`state`) to thread 2, calls, and checks the run once thread 2 is done.
    fn first_thread(
        &self,
        out: &mut String,
        test: &TestCase,
        state: &[String],
        allowed: Option<&AllowedOutcomes>,
    ) {
        out.push_str(
            "        let t0 = {\n\
            \x20           let shared = Arc::clone(&shared);\n\
            \x20           std::thread::spawn(move || {\n\
            \x20               let mut runs = 0u64;\n\
            \x20               while runs < RUNS_PER_PAIR && Instant::now() < deadline && !shared.stopping() {\n\
            \x20                   runs += 1;\n\
            \x20                   let run = first + runs;\n\
            \x20                   let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {\n",
        );
        // The test's setup as the reports lay it out, written as Rust.
        for statement in setup(test, self) {
            let _ = writeln!(out, "{CALLS}{statement}");
        }
        let clones: Vec<String> = state.iter().map(|s| format!("Arc::clone(&{s})")).collect();
        let _ = writeln!(
            out,
            "{CALLS}shared.publish(runs, {});\n\
             {CALLS}if !shared.start_together(runs) {{\n\
             {CALLS}    return false;\n\
             {CALLS}}}\n\
             {CALLS}let mut noise = Noise::new(run, 0);\n\
             {CALLS}noise.before_first_call();",
            tuple(&clones)
        );
        self.thread_calls(out, test, 0, allowed);
        let _ = writeln!(
            out,
            "{CALLS}if !shared.wait(|| shared.finished(runs)) {{\n\
             {CALLS}    return false;\n\
             {CALLS}}}"
        );
        if let Some(allowed) = allowed {
            let _ = writeln!(out, "{CALLS}let mut observed = seen;");
            let _ = writeln!(out, "{CALLS}observed.extend(shared.take_seen());");
            if allowed.final_state {
                let _ = writeln!(
                    out,
                    "{CALLS}observed.push(clip(format!(\"{{:?}}\", &*{})));",
                    instance_name(0)
                );
            }
            let _ = writeln!(out, "{CALLS}check_outcome(&observed, run);");
        }
        out.push_str(
            "                        true\n\
            \x20                   }));\n\
            \x20                   match result {\n\
            \x20                       std::result::Result::Ok(true) => {}\n\
            \x20                       std::result::Result::Ok(false) => break,\n\
            \x20                       std::result::Result::Err(panic) => {\n\
            \x20                           if sought(panic.as_ref()) {\n\
            \x20                               eprintln!(\"failed in run {run}\");\n\
            \x20                           }\n\
            \x20                           shared.fail(panic);\n\
            \x20                       }\n\
            \x20                   }\n\
            \x20               }\n\
            \x20               shared.stop();\n\
            \x20           })\n\
            \x20       };\n",
        );
    }

    /// Thread 2 (`t1`): takes each run's instances and handles (`state`) from thread 1 and
    /// calls.
    fn second_thread(
        &self,
        out: &mut String,
        test: &TestCase,
        state: &[String],
        allowed: Option<&AllowedOutcomes>,
    ) {
        let _ = writeln!(
            out,
            "        let t1 = {{\n\
            \x20           let shared = Arc::clone(&shared);\n\
            \x20           std::thread::spawn(move || {{\n\
            \x20               let mut runs = 0u64;\n\
            \x20               while shared.wait(|| shared.published(runs + 1)) {{\n\
            \x20                   runs += 1;\n\
            \x20                   let run = first + runs;\n\
            \x20                   #[allow(unused_variables)]\n\
            \x20                   let {} = shared.take_state();\n\
            \x20                   if !shared.start_together(runs) {{\n\
            \x20                       break;\n\
            \x20                   }}\n\
            \x20                   let mut noise = Noise::new(run, 1);\n\
            \x20                   noise.before_first_call();\n\
            \x20                   let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {{",
            tuple(state)
        );
        self.thread_calls(out, test, 1, allowed);
        let _ = writeln!(
            out,
            "{CALLS}{}\n\
            \x20                   }}));\n\
            \x20                   match result {{\n\
            \x20                       std::result::Result::Ok(seen) => shared.finish(runs, seen),\n\
            \x20                       std::result::Result::Err(panic) => {{\n\
            \x20                           if sought(panic.as_ref()) {{\n\
            \x20                               eprintln!(\"failed in run {{run}}\");\n\
            \x20                           }}\n\
            \x20                           shared.fail(panic);\n\
            \x20                           break;\n\
            \x20                       }}\n\
            \x20                   }}\n\
            \x20               }}\n\
            \x20           }})\n\
            \x20       }};",
            if allowed.is_some() {
                "seen"
            } else {
                "Vec::new()"
            }
        );
    }

    /// The statement building instance `index` (`let c0: Arc<T> = Arc::new(T::new());`); a
    /// constructor returning a tuple binds its other elements too (`c0_e1`), for the handles
    /// the test takes from them.
    fn construct_statement(&self, index: usize, call: &Call) -> String {
        let tuple = self
            .ty
            .constructors
            .iter()
            .find(|c| c.name == call.method)
            .and_then(|c| c.tuple.as_ref());
        let name = instance_name(index);
        let Some(tuple) = tuple else {
            return format!("let {name}: Arc<T> = {};", self.construct(call));
        };
        // Each element bound as it is kept: the instance in an `Arc`, the others as they are.
        let (mut elements, mut bound, mut values) = (Vec::new(), Vec::new(), Vec::new());
        for k in 0..tuple.elements.len() {
            elements.push(format!("e{k}"));
            if k == tuple.index {
                bound.push(name.clone());
                values.push(format!("Arc::new(e{k})"));
            } else {
                bound.push(element_name(index, k));
                values.push(format!("e{k}"));
            }
        }
        format!(
            "let ({}) = {{ let ({}) = {}; ({}) }};",
            bound.join(", "),
            elements.join(", "),
            self.construct(call),
            values.join(", ")
        )
    }

    fn construct(&self, call: &Call) -> String {
        let Some(constructor) = self.ty.constructors.iter().find(|c| c.name == call.method) else {
            return format!("Arc::new(T::{}())", call.method);
        };
        let mut args = call.args.iter();
        let mut take = |params: &[Param]| -> String {
            params
                .iter()
                .map(|p| match args.next() {
                    Some(value) => self.argument(value, &p.kind, &p.ty),
                    None => "Default::default()".to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut expr = match (constructor.kind, &constructor.function) {
            (ConstructorKind::Default, _) => "<T as Default>::default()".to_string(),
            (_, Some(function)) => {
                let turbofish: Vec<String> = constructor
                    .generic_args
                    .iter()
                    .map(|a| crate::codegen::substitute(a, self.instantiation))
                    .collect();
                let turbofish = if turbofish.is_empty() {
                    String::new()
                } else {
                    format!("::<{}>", turbofish.join(", "))
                };
                format!("::{function}{turbofish}({})", take(&constructor.params))
            }
            _ => format!("<T>::{}({})", constructor.name, take(&constructor.params)),
        };
        if constructor.tuple.is_some() {
            // The caller takes the tuple apart.
            return expr;
        }
        for link in &constructor.chain {
            let _ = write!(expr, ".{}({})", link.name, take(&link.params));
        }
        match constructor.returns {
            ReturnShape::SelfValue => format!("Arc::new({expr})"),
            ReturnShape::RefClone | ReturnShape::Guard => format!("Arc::new({expr}.clone())"),
            ReturnShape::ArcSelf => expr,
            ReturnShape::ResultSelf | ReturnShape::OptionSelf => {
                format!("Arc::new({expr}.unwrap())")
            }
        }
    }

    /// The model's method named `name` (`add`, `Gauge::add`).
    fn model_method(&self, name: &str) -> Option<&Method> {
        self.ty.methods.iter().find(|m| m.name == name)
    }

    /// The parameters `call`'s arguments are passed for, in order: of a call chained on a
    /// fresh call's result, that call's first.
    fn params(&self, call: &Call) -> Vec<&Param> {
        let from = match call.target() {
            Target::Chained { chain, .. } => self.ty.own_method(&chain.from),
            _ => None,
        };
        from.into_iter()
            .chain(self.model_method(&call.method))
            .flat_map(|m| &m.params)
            .collect()
    }

    /// Thread `thread`'s calls, one statement each, with noise between two calls; under the
    /// results oracle each compared call's `Debug` text goes into `seen`.
    fn thread_calls(
        &self,
        out: &mut String,
        test: &TestCase,
        thread: usize,
        allowed: Option<&AllowedOutcomes>,
    ) {
        if allowed.is_some() {
            let _ = writeln!(out, "{CALLS}let mut seen: Vec<String> = Vec::new();");
        }
        let calls = &test.threads[thread];
        let locals = test.locals(thread);
        // The thread's locals a method may not return (`Option`, `Result`): the harness skips
        // a call using one it did not keep, and so does this.
        let mut optional: Vec<usize> = Vec::new();
        for (index, call) in calls.iter().enumerate() {
            if index > 0 {
                let _ = writeln!(out, "{CALLS}noise.between_calls();");
            }
            if let Some(k) = locals[index] {
                let (statement, maybe) = self.keep_local(k, call);
                let _ = writeln!(out, "{CALLS}{statement}");
                if maybe {
                    optional.push(k);
                }
                continue;
            }
            let place = (thread as u8, index as u32);
            let compared = allowed.is_some_and(|a| a.calls.contains(&place));
            if let Some(scope) = self.scope_code(call) {
                let _ = writeln!(out, "{CALLS}{scope}");
                continue;
            }
            let sees = self.sees
                && self
                    .model_method(&call.method)
                    .is_some_and(Method::shows_closure_arguments);
            let body = if compared && sees {
                format!(
                    "{{ saw::start(); let r = format!(\"{{:?}}\", {}); seen.push(clip(saw::end(r))); }}",
                    call_code(call, self)
                )
            } else if compared {
                format!(
                    "seen.push(clip(format!(\"{{:?}}\", {})));",
                    call_code(call, self)
                )
            } else {
                statement(call, self)
            };
            let mut used: Vec<usize> = call
                .handles_used()
                .into_iter()
                .filter(|k| optional.contains(k))
                .collect();
            used.sort_unstable();
            used.dedup();
            if used.is_empty() {
                let _ = writeln!(out, "{CALLS}{body}");
                continue;
            }
            let names: Vec<String> = used
                .iter()
                .map(|&k| format!("Some({})", handle_name(k)))
                .collect();
            let values: Vec<String> = used
                .iter()
                .map(|&k| format!("{}.as_deref()", handle_name(k)))
                .collect();
            let _ = writeln!(
                out,
                "{CALLS}if let ({},) = ({},) {{ {body} }}",
                names.join(", "),
                values.join(", ")
            );
            if compared {
                let _ = writeln!(out, "{CALLS}else {{ seen.push({SKIPPED:?}.to_string()); }}");
            }
        }
    }

    /// A scope as a block (`generator::Call::scope`): the guard bound, the calls made while
    /// it lives, then the guard's method called on it where the result holds one (`if let
    /// Some(g) = g { let _ = g.confirm(2); }`), or the guard dropped. `None` for a call with
    /// no scope, or one of a guard the model no longer lists.
    fn scope_code(&self, call: &Call) -> Option<String> {
        let scope = call.scope.as_deref()?;
        let guard = self.ty.scopes.iter().find(|s| s.from == call.method)?;
        let mut code = format!("{{ let {GUARD} = {};", call_code(call, self));
        for inner in &scope.then {
            let _ = write!(code, " {}", statement(inner, self));
        }
        let Some(finish) = &scope.finish else {
            let _ = write!(code, " drop({GUARD}); }}");
            return Some(code);
        };
        let finisher = self.finisher(call, finish)?;
        let binding = if finisher.takes == GuardTaking::Mut {
            format!("mut {GUARD}")
        } else {
            GUARD.to_string()
        };
        let end = format!("{};", self.discarded(finish_code(call, finish, self)));
        let _ = match &guard.holds {
            GuardHolder::Plain => write!(code, " let {binding} = {GUARD}; {end} }}"),
            GuardHolder::Option => {
                write!(code, " if let Some({binding}) = {GUARD} {{ {end} }} }}")
            }
            GuardHolder::Result => write!(code, " if let Ok({binding}) = {GUARD} {{ {end} }} }}"),
            GuardHolder::Variant(path) => {
                write!(code, " if let {path}({binding}) = {GUARD} {{ {end} }} }}")
            }
        };
        Some(code)
    }

    /// The guard's method `finish` that ends `scope_call`'s scope, as the model lists it.
    fn finisher(&self, scope_call: &Call, finish: &Call) -> Option<&Finisher> {
        let guard = self
            .ty
            .scopes
            .iter()
            .find(|s| s.from == scope_call.method)?;
        guard
            .finishers
            .iter()
            .find(|f| f.method.name == finish.method)
    }

    /// How the method a kept value comes from returns it.
    fn kept_shape(&self, method: &str) -> ReturnShape {
        let returned = self
            .ty
            .methods
            .iter()
            .flat_map(|m| &m.params)
            .find_map(|p| match &p.kind {
                ParamKind::Returned { from, shape, .. } if *from == method => Some(*shape),
                _ => None,
            });
        self.ty
            .handed_out_by(method)
            .map(|v| v.shape)
            .or(returned)
            .unwrap_or(ReturnShape::SelfValue)
    }

    /// The statement keeping a thread's local `k` from `call`, and whether the local may be
    /// empty: a method returning `Option` or `Result` keeps `Some(Arc)` only for `Some`/`Ok`
    /// (`let h2 = c0.get(1).map(Arc::new);`), as the harness keeps nothing for `None`; any
    /// other result is kept as a handle is (`let h2 = Arc::new(c0.make());`).
    fn keep_local(&self, k: usize, call: &Call) -> (String, bool) {
        let name = handle_name(k);
        let expr = call_code(call, self);
        match self.kept_shape(&call.method) {
            ReturnShape::OptionSelf => (format!("let {name} = {expr}.map(Arc::new);"), true),
            ReturnShape::ResultSelf => (format!("let {name} = {expr}.ok().map(Arc::new);"), true),
            _ => (format!("let {name} = {};", self.kept(call, expr)), false),
        }
    }

    /// A value built by a constructor of one of the type's value types, as Rust, its
    /// arguments rendered for their parameters' kinds.
    fn built(&self, b: &generator::Built) -> String {
        // A path names the run's directory or a file in it, as in covcon's runs ([`RUN_DIR`]).
        if let (PATH_BUF, "from", [Value::Str(path)]) =
            (b.ty.as_str(), b.ctor.as_str(), &b.args[..])
        {
            return format!("run_dir(run).join({path:?})");
        }
        let constructor = self
            .ty
            .values
            .iter()
            .find(|v| v.path == b.ty)
            .and_then(|v| v.constructors.iter().find(|c| c.name == b.ctor));
        let params: Vec<&Param> = match constructor {
            Some(c) => c
                .params
                .iter()
                .chain(c.chain.iter().flat_map(|link| &link.params))
                .collect(),
            None => Vec::new(),
        };
        let code = built_code(b, true, &|i, v| match params.get(i) {
            Some(p) => self.argument(v, &p.kind, &p.ty),
            None => self.value(v, &ParamKind::Unsupported),
        });
        match constructor.map(|c| c.returns) {
            Some(ReturnShape::ResultSelf | ReturnShape::OptionSelf) => format!("{code}.unwrap()"),
            Some(ReturnShape::RefClone | ReturnShape::Guard) => format!("{code}.clone()"),
            _ => code,
        }
    }

    /// An argument for a parameter written `written`.
    fn argument(&self, value: &Value, kind: &ParamKind, written: &str) -> String {
        let written = written.trim();
        match kind {
            // `&Arc<Bar>` (or `&Arc<Arc<Bar>>`) coerces to the `&Bar` the method takes.
            ParamKind::Handle { .. } => match value {
                Value::Handle(k) => format!("&{}", handle_name(*k)),
                _ => format!("&{}", handle_name(0)),
            },
            // A key of a standard type that no call made: the generated value.
            ParamKind::Returned {
                by_ref,
                or: Some(kind),
                ..
            } if !matches!(value, Value::Handle(_)) => {
                let value = self.value(value, kind);
                if *by_ref {
                    format!("&{value}")
                } else {
                    value
                }
            }
            ParamKind::Returned { by_ref, .. } => {
                let handle = match value {
                    Value::Handle(k) => handle_name(*k),
                    _ => handle_name(0),
                };
                if *by_ref {
                    format!("&*{handle}")
                } else {
                    format!("(*{handle}).clone()")
                }
            }
            ParamKind::Instance { passing } => {
                let instance = match value {
                    Value::Instance(k) => instance_name(*k),
                    _ => instance_name(0),
                };
                match passing {
                    InstancePassing::Ref => format!("&*{instance}"),
                    InstancePassing::Arc => format!("Arc::clone(&{instance})"),
                    InstancePassing::Value => format!("(*{instance}).clone()"),
                }
            }
            ParamKind::Closure {
                returns,
                arity,
                shown,
            } => {
                let inner = match value {
                    Value::Closure(inner) => inner.as_ref(),
                    other => other,
                };
                let value = self.value(inner, returns);
                if !self.sees || shown.is_empty() {
                    let ignored = vec!["_"; *arity].join(", ");
                    return format!("move |{ignored}| {value}");
                }
                // What it sees of its arguments is the call's answer too ([`SAW`]).
                let (params, texts) =
                    crate::codegen::seeing_closure_parts(kind, "a", "saw_text!", "None");
                format!("{{ let id = saw::id(); move |{params}| {{ saw::see(id, || vec![{texts}]); {value} }} }}")
            }
            // A literal is a `&'static str`: it fits `&str` and `&'static str` alike.
            ParamKind::Str => self.value(value, &ParamKind::Str),
            ParamKind::Slice { elem } => {
                format!(
                    "&{}[..]",
                    self.value(value, &ParamKind::Vec { elem: elem.clone() })
                )
            }
            ParamKind::Ref { inner } => format!("&{}", self.value(value, inner)),
            kind if written.starts_with('&') => format!("&{}", self.value(value, kind)),
            kind => self.value(value, kind),
        }
    }

    /// An owned value of `kind`, converted the way the harness's decoding converts it.
    fn value(&self, value: &Value, kind: &ParamKind) -> String {
        if let ParamKind::Generic { name } = kind {
            let concrete = self.instantiation.get(name).map_or("u32", String::as_str);
            let kind =
                analysis::type_argument_kind(concrete, &self.ty.values).unwrap_or(ParamKind::Int {
                    signed: false,
                    bits: 32,
                });
            return self.value(value, &kind);
        }
        match (value, kind) {
            // The caller writes it with the call's receiver (`invoke`); a bare one is unused.
            (Value::FromReceiver(method), _) => format!("self.{method}()"),
            (Value::Handle(k), _) => handle_name(*k),
            (Value::Closure(inner), kind) => self.value(inner, kind),
            (
                Value::Err(err),
                ParamKind::Result {
                    err: Some(kind), ..
                },
            ) => {
                format!("Err({})", self.value(err, kind))
            }
            (value, ParamKind::Result { ok, .. }) => format!("Ok({})", self.value(value, ok)),
            (value, ParamKind::Pointer { pointer, inner }) => {
                format!("{}::new({})", pointer.path(), self.value(value, inner))
            }
            (Value::Int(n), ParamKind::NonZero { signed, bits }) => {
                let t = format!("{}{bits}", if *signed { 'i' } else { 'u' });
                // The generator draws in the type's range and never zero; the harness makes a
                // zero one, and so does this.
                let n = if *n == 0 { 1 } else { *n };
                format!("::std::num::NonZero::<{t}>::new({n}).unwrap()")
            }
            (Value::Int(n), ParamKind::Str) => format!("\"{n}\""),
            (Value::Str(s), ParamKind::Str) => format!("{s:?}"),
            (Value::Int(n), ParamKind::String) => format!("String::from(\"{n}\")"),
            (Value::Str(s), ParamKind::String | ParamKind::Unsupported) => {
                format!("String::from({s:?})")
            }
            (Value::Str(s), ParamKind::Vec { .. } | ParamKind::Slice { .. }) => {
                format!("{s:?}.as_bytes().to_vec()")
            }
            (Value::Int(n), ParamKind::Int { .. } | ParamKind::Unsupported) => n.to_string(),
            (Value::Int(n), ParamKind::Float { .. }) => format!("{n}.0"),
            (Value::Int(n), ParamKind::Bool) => (*n != 0).to_string(),
            (Value::Int(n), ParamKind::Duration) => {
                format!("Duration::from_micros({})", (*n).clamp(0, 1_000_000))
            }
            (Value::Duration(us), ParamKind::Int { .. }) => us.to_string(),
            (Value::Int(n), ParamKind::Vec { elem } | ParamKind::Slice { elem }) => {
                format!("vec![{}]", self.value(&Value::Int(*n), elem))
            }
            (Value::Bool(b), _) => b.to_string(),
            (Value::Char(c), _) => format!("{c:?}"),
            (Value::Float(f), _) => format!("{f:?}"),
            (Value::Str(s), _) => format!("{s:?}"),
            (Value::Duration(us), _) => format!("Duration::from_micros({us})"),
            (Value::List(items), kind) => {
                let elem = match kind {
                    ParamKind::Vec { elem } | ParamKind::Slice { elem } => elem.as_ref(),
                    _ => &ParamKind::Unsupported,
                };
                let items: Vec<String> = items.iter().map(|i| self.value(i, elem)).collect();
                format!("vec![{}]", items.join(", "))
            }
            (Value::Option(None), _) => "None".to_string(),
            (Value::Option(Some(inner)), kind) => {
                let inner_kind = match kind {
                    ParamKind::Option { inner } => inner.as_ref(),
                    _ => &ParamKind::Unsupported,
                };
                format!("Some({})", self.value(inner, inner_kind))
            }
            (Value::Tuple(items), kind) => {
                let kinds: &[ParamKind] = match kind {
                    ParamKind::Tuple { elems } => elems,
                    _ => &[],
                };
                let items: Vec<String> = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.value(v, kinds.get(i).unwrap_or(&ParamKind::Unsupported)))
                    .collect();
                if items.len() == 1 {
                    format!("({},)", items[0])
                } else {
                    format!("({})", items.join(", "))
                }
            }
            (Value::Instance(k), _) => format!("Arc::clone(&{})", instance_name(*k)),
            (Value::Built(b), _) => self.built(b),
            (Value::Int(n), _) => n.to_string(),
            // Not made for any other kind; written as it would be for a `Result`.
            (Value::Err(err), kind) => format!("Err({})", self.value(err, kind)),
        }
    }
}

/// The reproducer's spelling of the test the reports lay out: what the reports read, written
/// as Rust that compiles against the user's crate.
impl Spelling for Render<'_> {
    /// `let c0: Arc<T> = Arc::new(<T>::new(1));`, a tuple taken apart
    /// ([`Render::construct_statement`]).
    fn constructor(&self, _type_path: &str, index: usize, call: &Call) -> String {
        self.construct_statement(index, call)
    }

    /// The argument converted for its parameter as the harness decodes it; what the
    /// receiver's method returns, by reference or by value as the parameter takes it.
    fn arg(&self, call: &Call, index: usize, value: &Value) -> String {
        match self.params(call).get(index).copied() {
            Some(Param {
                kind: ParamKind::FromReceiver { method, by_ref },
                ..
            }) => format!(
                "{}{}.{method}()",
                if *by_ref { "&" } else { "" },
                instance_name(call.receiver)
            ),
            Some(p) => self.argument(value, &p.kind, &p.ty),
            None => self.value(value, &ParamKind::Unsupported),
        }
    }

    /// The argument converted for the guard's method's parameter.
    fn finish_arg(&self, scope_call: &Call, finish: &Call, index: usize, value: &Value) -> String {
        let finisher = self.finisher(scope_call, finish);
        match finisher.and_then(|f| f.method.params.get(index)) {
            Some(p) => self.argument(value, &p.kind, &p.ty),
            None => self.value(value, &ParamKind::Unsupported),
        }
    }

    /// With its turbofish when the method has generic arguments, as the harness instantiates
    /// them.
    fn method(&self, method: &str, own: &str) -> String {
        match self.model_method(method) {
            Some(m) if !m.generic_args.is_empty() => {
                let args: Vec<String> = m
                    .generic_args
                    .iter()
                    .map(|a| crate::codegen::substitute(a, self.instantiation))
                    .collect();
                format!("{own}::<{}>", args.join(", "))
            }
            _ => own.to_string(),
        }
    }

    /// An `async fn`'s call through the file's `block_on`; a returned iterator driven in the
    /// same statement, as the harness drives it (`covcon_rt::drive`).
    fn made(&self, method: &str, expr: String) -> String {
        let Some(method) = self.model_method(method) else {
            return expr;
        };
        let expr = if method.is_async {
            format!("block_on({expr})")
        } else {
            expr
        };
        if method.iterates {
            format!("{expr}.take({DRIVE_LIMIT}).count()")
        } else {
            expr
        }
    }

    /// A handle in an `Arc`, `Option` and `Result` unwrapped as the harness does
    /// (`Arc::new(c0.add(3))`); an element of a constructor's tuple as it is
    /// (`Arc::new(c0_e1)`).
    fn kept(&self, call: &Call, expr: String) -> String {
        if let Target::Element(_) = call.target() {
            return format!("Arc::new({expr})");
        }
        let kept = match self.kept_shape(&call.method) {
            ReturnShape::SelfValue | ReturnShape::ArcSelf => expr,
            ReturnShape::RefClone | ReturnShape::Guard => format!("{expr}.clone()"),
            ReturnShape::OptionSelf => {
                format!("{expr}.expect(\"`{}` returns a handle\")", call.method)
            }
            ReturnShape::ResultSelf => format!(
                "{expr}.unwrap_or_else(|_| panic!(\"`{}` returns a handle\"))",
                call.method
            ),
        };
        format!("Arc::new({kept})")
    }

    /// `let _ = c0.add(1)`: a result the test does not use is no warning.
    fn discarded(&self, expr: String) -> String {
        format!("let _ = {expr}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::AllowedOutcome;
    use analysis::{Constructor, Method};

    /// Renders `test` for a `k::Counter` with methods `add(n: u32)`, `get()`, `async
    /// later()`, `put(v: Box<u32>, n: NonZeroU8)` and `iter()` returning an iterator (as a
    /// wrong result's reproducer when `allowed` is given) and checks how often each text
    /// occurs.
    fn check(test: &TestCase, allowed: Option<&AllowedOutcomes>, expect: &[(&str, usize)]) {
        let ty = TypeModel {
            path: "k::Counter".into(),
            package: "k".into(),
            name: "Counter".into(),
            constructors: vec![Constructor {
                name: "new".into(),
                ..Constructor::default()
            }],
            methods: ["add", "get", "later", "put", "iter"]
                .into_iter()
                .map(|name| Method {
                    name: name.into(),
                    is_async: name == "later",
                    iterates: name == "iter",
                    params: match name {
                        "add" => vec![Param {
                            name: "n".into(),
                            ty: "u32".into(),
                            kind: ParamKind::Int {
                                signed: false,
                                bits: 32,
                            },
                        }],
                        "put" => vec![
                            Param {
                                name: "v".into(),
                                ty: "Box<u32>".into(),
                                kind: ParamKind::Pointer {
                                    pointer: analysis::Pointer::Box,
                                    inner: Box::new(ParamKind::Int {
                                        signed: false,
                                        bits: 32,
                                    }),
                                },
                            },
                            Param {
                                name: "n".into(),
                                ty: "NonZeroU8".into(),
                                kind: ParamKind::NonZero {
                                    signed: false,
                                    bits: 8,
                                },
                            },
                        ],
                        _ => vec![],
                    },
                    ..Method::default()
                })
                .collect(),
            ..TypeModel::default()
        };
        let source = match allowed {
            Some(allowed) => render_results_reproducer(&ty, test, None, "lost update", allowed),
            None => render_reproducer(&ty, test, None, "panic \"boom\""),
        };
        for (text, count) in expect {
            assert_eq!(
                source.matches(text).count(),
                *count,
                "`{text}` in:\n{source}"
            );
        }
    }

    fn call(method: &str, args: Vec<Value>) -> Call {
        Call {
            method: method.into(),
            receiver: 0,
            args,
            times: 1,
            keep: false,
            chained: None,
            scope: None,
        }
    }

    /// Thread 1 adds twice, thread 2 reads once.
    fn two_adds_and_a_get() -> TestCase {
        TestCase {
            id: 7,
            type_path: "k::Counter".into(),
            pair: ["add".into(), "get".into()],
            instances: vec![call("new", vec![])],
            handles: vec![],
            prefix: vec![call("add", vec![Value::Int(1)])],
            threads: [
                vec![
                    call("add", vec![Value::Int(2)]),
                    call("add", vec![Value::Int(3)]),
                ],
                vec![call("get", vec![])],
            ],
            noise_seed: 11,
            control: Default::default(),
        }
    }

    /// The setup is the reports' ([`generator::display::setup`]), its statements written as
    /// Rust: the instance in an `Arc`, a result not used bound to `_`, a repeated call its
    /// loop.
    #[test]
    fn the_setup_reads_as_the_reports_lay_it_out_written_as_rust() {
        let mut test = two_adds_and_a_get();
        test.prefix[0].times = 3;
        check(
            &test,
            None,
            &[
                ("let c0: Arc<T> = Arc::new(<T>::new());", 1),
                ("for _ in 0..3 { let _ = c0.add(1); }", 1),
            ],
        );
    }

    #[test]
    fn a_reproducer_brings_its_own_noise_before_each_thread_and_between_calls() {
        check(
            &two_adds_and_a_get(),
            None,
            &[
                ("struct Noise(u64);", 1),
                ("fn before_first_call(&mut self)", 1),
                ("return Noise(0);", 1),
                ("let mut noise = Noise::new(run, 0);", 1),
                ("let mut noise = Noise::new(run, 1);", 1),
                ("noise.before_first_call();", 2),
                // Between thread 1's two calls only: never before a first call or after a last.
                ("noise.between_calls();", 1),
                (
                    "let _ = c0.add(2);\n                        noise.between_calls();\n                        let _ = c0.add(3);",
                    1,
                ),
                ("let _ = c0.add(1);", 1),
            ],
        );
    }

    /// Any panic counts unless a failure is sought; then another ends its batch only, and is
    /// told after the last run if the sought one never showed.
    #[test]
    fn a_reproducer_tells_the_failure_it_seeks_from_another() {
        let any = sought_items(Sought::Any);
        assert!(any.contains("-> bool {\n    true\n}"), "{any}");
        assert!(!any.contains("fn other_failures"), "{any}");
        let panic = sought_items(Sought::Panic("index 3 out of\nrange"));
        for text in [
            "const MESSAGE: &str = \"index 3 out of\\nrange\";",
            "digits(&text) == digits(MESSAGE)",
            "the message \"index 3 out of range\" (digits aside)",
            "fn other_failures(runs: u64)",
            "fn note_other(panic: &(dyn std::any::Any + Send))",
        ] {
            assert!(panic.contains(text), "`{text}` in:\n{panic}");
        }
        let deadlock = sought_items(Sought::Deadlock);
        assert!(
            deadlock.contains("let _ = panic;\n    false\n}"),
            "{deadlock}"
        );
        let wrong = sought_items(Sought::WrongResult);
        assert!(
            wrong.contains("text.starts_with(\"wrong result in run \")"),
            "{wrong}"
        );
        // The test's body calls `other_failures` after its last batch, only when it seeks one.
        let ty = TypeModel {
            path: "k::Counter".into(),
            methods: vec![Method {
                name: "add".into(),
                ..Method::default()
            }],
            ..TypeModel::default()
        };
        let test = TestCase {
            instances: vec![call("new", vec![])],
            threads: [vec![call("add", vec![])], vec![call("add", vec![])]],
            ..two_adds_and_a_get()
        };
        let calls = |sought| {
            render_reproducer_seeking(&ty, &test, None, "panic", sought)
                .matches("    other_failures(first);\n}")
                .count()
        };
        assert_eq!((calls(Sought::Any), calls(Sought::Deadlock)), (0, 1));
    }

    #[test]
    fn a_reproducer_keeps_its_minute_its_failure_messages_and_says_how_to_build_it() {
        check(
            &two_adds_and_a_get(),
            None,
            &[
                ("Duration::from_secs(seconds)", 1),
                (".unwrap_or(60);", 1),
                ("deadlock: the two threads made no progress for 10 s (run {})\", run)", 1),
                // Either thread's panic stops the run and is raised again on the test's thread.
                ("eprintln!(\"failed in run {run}\")", 2),
                ("std::panic::resume_unwind(panic)", 1),
                // Thread 1 builds each run and hands the instances to thread 2.
                ("shared.publish(runs, (Arc::clone(&c0),));", 1),
                ("let (c0,) = shared.take_state();", 1),
                ("const RUNS_PER_PAIR: u64 = 1_000;", 1),
                ("`add` and `get`\n//! running concurrently: panic \"boom\".", 1),
                (
                    "CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true",
                    1,
                ),
                ("cargo test --release --test <file name>", 1),
                ("fn covcon_violation_7_add_get()", 1),
            ],
        );
    }

    #[test]
    fn a_wrong_result_reproducer_records_each_compared_call_with_noise_between_them() {
        let allowed = AllowedOutcomes {
            calls: vec![(0, 0), (0, 1), (1, 0)],
            final_state: true,
            outcomes: vec![AllowedOutcome {
                order: vec![(0, 0), (0, 1), (1, 0)],
                texts: vec!["()".into(), "()".into(), "6".into(), "Counter(6)".into()],
            }],
            left_out: vec![],
            keys: vec![],
            fixed_keys: vec![],
            hidden: vec![],
        };
        check(
            &two_adds_and_a_get(),
            Some(&allowed),
            &[
                ("struct Noise(u64);", 1),
                (
                    "seen.push(clip(format!(\"{:?}\", c0.add(2))));\n                        noise.between_calls();\n                        seen.push(clip(format!(\"{:?}\", c0.add(3))));",
                    1,
                ),
                ("seen.push(clip(format!(\"{:?}\", c0.get())));", 1),
                ("noise.between_calls();", 1),
                ("&[\"()\", \"()\", \"6\", \"Counter(6)\"],", 1),
                ("observed.push(clip(format!(\"{:?}\", &*c0)));", 1),
                // Thread 1 checks the run once thread 2 has handed back what it saw.
                ("observed.extend(shared.take_seen());", 1),
                ("check_outcome(&observed, run);", 1),
                ("wrong result in run {runs}: no sequential order", 1),
            ],
        );
    }

    /// Keys answered by the calls are compared up to renaming, as the oracle compares them:
    /// the reproducer renames what it observes before looking it up among the outcomes.
    #[test]
    fn a_wrong_result_reproducer_renames_the_keys_it_observes() {
        let mut allowed = AllowedOutcomes {
            calls: vec![(0, 0), (0, 1), (1, 0)],
            final_state: false,
            outcomes: vec![AllowedOutcome {
                order: vec![(0, 0), (0, 1), (1, 0)],
                texts: vec!["()".into(), "()".into(), "#1".into()],
            }],
            left_out: vec![],
            keys: vec![false, false, true],
            fixed_keys: vec!["Sym(0)".into()],
            hidden: vec![],
        };
        check(
            &two_adds_and_a_get(),
            Some(&allowed),
            &[
                ("const KEYED: &[bool] = &[false, false, true];", 1),
                ("const FIXED_KEYS: &[&str] = &[\"Sym(0)\"];", 1),
                ("fn renamed_keys(observed: &[String]) -> Vec<String> {", 1),
                ("    let observed = &renamed_keys(observed);\n", 1),
            ],
        );
        allowed.keys = vec![false; 3];
        check(
            &two_adds_and_a_get(),
            Some(&allowed),
            &[("KEYED", 0), ("renamed_keys", 0)],
        );
    }

    /// The bodies of another thread-safe type's values that the oracle hid in the allowed
    /// outcomes' texts are hidden in what a run observes too, and only then.
    #[test]
    fn a_wrong_result_reproducer_hides_what_the_oracle_hid() {
        let mut allowed = AllowedOutcomes {
            calls: vec![(1, 0)],
            final_state: true,
            outcomes: vec![AllowedOutcome {
                order: vec![(0, 0), (0, 1), (1, 0)],
                texts: vec!["6".into(), "Counter { n: 6, bin: Bin {…} }".into()],
            }],
            left_out: vec![],
            keys: vec![],
            fixed_keys: vec![],
            hidden: vec!["Bin".into()],
        };
        check(
            &two_adds_and_a_get(),
            Some(&allowed),
            &[
                ("const HIDDEN: &[&str] = &[\"Bin\"];", 1),
                ("fn hide(text: String) -> String {", 1),
                ("    hide(text)\n}", 1),
                ("&[\"6\", \"Counter { n: 6, bin: Bin {…} }\"],", 1),
            ],
        );
        allowed.hidden.clear();
        check(
            &two_adds_and_a_get(),
            Some(&allowed),
            &[("HIDDEN", 0), ("hide(", 0), ("    text\n}", 1)],
        );
    }

    /// A reproducer goes into the user's crate, whose edition may be 2018, where `panic!`
    /// with a lone literal does not format it (`{message}` printed as written): every panic
    /// of a reproducer passes its arguments.
    #[test]
    fn a_reproducers_panics_format_their_message_in_every_edition() {
        let allowed = AllowedOutcomes {
            calls: vec![(0, 0)],
            final_state: false,
            outcomes: vec![AllowedOutcome {
                order: vec![(0, 0)],
                texts: vec!["()".into()],
            }],
            left_out: vec![],
            keys: vec![],
            fixed_keys: vec![],
            hidden: vec![],
        };
        let test = two_adds_and_a_get();
        let ty = TypeModel {
            path: "k::Counter".into(),
            ..TypeModel::default()
        };
        for source in [
            render_reproducer(&ty, &test, None, "panic"),
            render_results_reproducer(&ty, &test, None, "lost update", &allowed),
        ] {
            let panics: Vec<&str> = source.split("panic!(").skip(1).collect();
            assert!(!panics.is_empty());
            for rest in panics {
                let literal = rest.split('"').nth(1).unwrap_or_default();
                let captures = literal
                    .split('{')
                    .skip(1)
                    .any(|after| after.starts_with(|c: char| c.is_alphabetic() || c == '_'));
                assert!(!captures, "panic!({}", &rest[..rest.len().min(120)]);
            }
        }
    }

    /// An `async fn` call runs through the reproducer's own `block_on`, written only when a
    /// call needs it.
    #[test]
    fn an_async_call_runs_through_a_block_on_of_its_own() {
        check(
            &two_adds_and_a_get(),
            None,
            &[("fn block_on<", 0), ("block_on(", 0)],
        );
        let mut test = two_adds_and_a_get();
        test.threads[1].push(call("later", vec![]));
        check(
            &test,
            None,
            &[("fn block_on<", 1), ("let _ = block_on(c0.later());", 1)],
        );
    }

    #[test]
    fn a_returned_iterator_is_driven_in_the_same_statement_as_the_harness_does() {
        let mut test = two_adds_and_a_get();
        test.threads[1] = vec![call("iter", vec![])];
        check(
            &test,
            None,
            &[(
                &format!("let _ = c0.iter().take({DRIVE_LIMIT}).count();"),
                1,
            )],
        );
    }

    #[test]
    fn a_test_naming_alloc_paths_declares_the_alloc_crate_before_its_imports() {
        let plain = "//! doc\nuse std::sync::atomic::AtomicBool;\nfn f() {}\n".to_string();
        assert_eq!(with_alloc(plain.clone()), plain);
        let named = "//! doc\nuse std::sync::atomic::AtomicBool;\nfn f() { g::<::alloc::sync::Arc<u32>>() }\n";
        assert_eq!(
            with_alloc(named.to_string()),
            "//! doc\nextern crate alloc;\nuse std::sync::atomic::AtomicBool;\nfn f() { g::<::alloc::sync::Arc<u32>>() }\n"
        );
    }

    #[test]
    fn boxed_and_non_zero_arguments_are_written_as_the_harness_decodes_them() {
        let mut test = two_adds_and_a_get();
        test.threads[1] = vec![call("put", vec![Value::Int(5), Value::Int(0)])];
        check(
            &test,
            None,
            &[(
                "c0.put(::std::boxed::Box::new(5), ::std::num::NonZero::<u8>::new(1).unwrap())",
                1,
            )],
        );
    }

    /// A free function returning a tuple is called by its path and taken apart; the handle
    /// the test keeps from the tuple is the element it names.
    #[test]
    fn a_tuple_constructor_is_taken_apart_and_its_other_half_kept() {
        let ty = TypeModel {
            path: "k::Tx".into(),
            name: "Tx".into(),
            generics: vec![analysis::GenericParam {
                name: "T".into(),
                written: "T".into(),
                ..analysis::GenericParam::default()
            }],
            constructors: vec![Constructor {
                name: "channel".into(),
                params: vec![Param {
                    name: "cap".into(),
                    ty: "usize".into(),
                    kind: ParamKind::Int {
                        signed: false,
                        bits: 64,
                    },
                }],
                generic_args: vec!["T".into()],
                function: Some("k::channel".into()),
                tuple: Some(analysis::TupleReturn {
                    index: 0,
                    elements: vec!["::k::Tx<T>".into(), "::k::Rx<T>".into()],
                }),
                ..Constructor::default()
            }],
            methods: vec![Method {
                name: "Rx::recv".into(),
                via: Some(analysis::Via {
                    ty: "k::Rx".into(),
                    from: "#1".into(),
                    kept: Some("::k::Rx<T>".into()),
                    ..analysis::Via::default()
                }),
                ..Method::default()
            }],
            ..TypeModel::default()
        };
        let test = TestCase {
            id: 1,
            type_path: "k::Tx".into(),
            pair: ["Rx::recv".into(), "Rx::recv".into()],
            instances: vec![call("channel", vec![Value::Int(2)])],
            handles: vec![call("#1", vec![])],
            prefix: vec![],
            threads: [vec![call("Rx::recv", vec![])], vec![]],
            noise_seed: 1,
            control: Default::default(),
        };
        let source = render_reproducer(&ty, &test, None, "panic");
        for text in [
            "let (c0, c0_e1) = { let (e0, e1) = ::k::channel::<u32>(2); (Arc::new(e0), e1) };",
            "let h0 = Arc::new(c0_e1);",
            "h0.recv()",
        ] {
            assert!(source.contains(text), "`{text}` in:\n{source}");
        }
    }

    #[test]
    fn a_thread_without_calls_still_draws_its_start_delay() {
        let mut test = two_adds_and_a_get();
        test.threads[1].clear();
        check(
            &test,
            None,
            &[
                ("noise.before_first_call();", 2),
                ("noise.between_calls();", 1),
            ],
        );
    }

    /// A thread's call that keeps its result binds a local inside the thread's closure: a
    /// method returning `Option` keeps `Some` only, and the call using the local runs only
    /// when it was kept, as the harness skips it; a plain result is kept in an `Arc`.
    #[test]
    fn thread_locals_are_bound_in_their_thread_and_optional_ones_guard_their_uses() {
        let key = |shape| Param {
            name: "k".into(),
            ty: "Key".into(),
            kind: ParamKind::Returned {
                from: if shape == ReturnShape::OptionSelf {
                    "take".into()
                } else {
                    "make".into()
                },
                ty: "Key".into(),
                shape,
                by_ref: false,
                or: None,
            },
        };
        let method = |name: &str, params: Vec<Param>| Method {
            name: name.into(),
            params,
            ..Method::default()
        };
        let ty = TypeModel {
            path: "k::Pool".into(),
            package: "k".into(),
            name: "Pool".into(),
            constructors: vec![Constructor {
                name: "new".into(),
                ..Constructor::default()
            }],
            methods: vec![
                method("take", vec![]),
                method("make", vec![]),
                method("give", vec![key(ReturnShape::OptionSelf)]),
                method("show", vec![key(ReturnShape::SelfValue)]),
            ],
            ..TypeModel::default()
        };
        let keep = |name: &str| Call {
            keep: true,
            ..call(name, vec![])
        };
        let test = TestCase {
            id: 1,
            type_path: "k::Pool".into(),
            pair: ["take".into(), "make".into()],
            instances: vec![call("new", vec![])],
            handles: vec![],
            prefix: vec![],
            threads: [
                vec![keep("take"), call("give", vec![Value::Handle(0)])],
                vec![keep("make"), call("show", vec![Value::Handle(1)])],
            ],
            noise_seed: 3,
            control: Default::default(),
        };
        let source = render_reproducer(&ty, &test, None, "panic");
        for (text, count) in [
            ("let h0 = c0.take().map(Arc::new);", 1),
            (
                "if let (Some(h0),) = (h0.as_deref(),) { let _ = c0.give((*h0).clone()); }",
                1,
            ),
            ("let h1 = Arc::new(c0.make());", 1),
            ("let _ = c0.show((*h1).clone());", 1),
            // Locals live in their thread: nothing clones them into the closures.
            ("Arc::clone(&h", 0),
        ] {
            assert_eq!(
                source.matches(text).count(),
                count,
                "`{text}` in:\n{source}"
            );
        }
    }

    /// A handle method behind a guard is called on a fresh call's result in one expression,
    /// that call's arguments first.
    #[test]
    fn a_call_chained_on_a_guard_is_one_expression() {
        let param = |name: &str, ty: &str, kind: ParamKind| Param {
            name: name.into(),
            ty: ty.into(),
            kind,
        };
        let ty = TypeModel {
            path: "k::Family".into(),
            package: "k".into(),
            name: "Family".into(),
            constructors: vec![Constructor {
                name: "new".into(),
                ..Constructor::default()
            }],
            methods: vec![
                Method {
                    name: "get_or_create".into(),
                    params: vec![param("label", "&str", ParamKind::Str)],
                    ..Method::default()
                },
                Method {
                    name: "Gauge::add".into(),
                    params: vec![param(
                        "n",
                        "u64",
                        ParamKind::Int {
                            signed: false,
                            bits: 64,
                        },
                    )],
                    via: Some(analysis::Via {
                        ty: "k::Gauge".into(),
                        from: "get_or_create".into(),
                        shape: ReturnShape::Guard,
                        kept: None,
                    }),
                    ..Method::default()
                },
            ],
            ..TypeModel::default()
        };
        let add = Call {
            chained: Some(generator::Chain {
                from: "get_or_create".into(),
                args: 1,
            }),
            ..call("Gauge::add", vec![Value::Str("a".into()), Value::Int(2)])
        };
        let test = TestCase {
            id: 1,
            type_path: "k::Family".into(),
            pair: ["get_or_create".into(), "Gauge::add".into()],
            instances: vec![call("new", vec![])],
            handles: vec![],
            prefix: vec![],
            threads: [vec![add.clone()], vec![add]],
            noise_seed: 3,
            control: Default::default(),
        };
        let source = render_reproducer(&ty, &test, None, "panic");
        let text = "let _ = c0.get_or_create(\"a\").add(2);";
        assert_eq!(source.matches(text).count(), 2, "{source}");
    }

    /// A scope is a block: the guard bound, the calls made while it lives, then the guard's
    /// method where the result holds one (a variant of the crate's enum here), or the guard
    /// dropped.
    #[test]
    fn a_scope_is_a_block_that_binds_the_guard_and_ends_it() {
        let int = ParamKind::Int {
            signed: false,
            bits: 8,
        };
        let param = Param {
            name: "n".into(),
            ty: "u8".into(),
            kind: int,
        };
        let method = |name: &str| Method {
            name: name.into(),
            params: vec![param.clone()],
            ..Method::default()
        };
        let ty = TypeModel {
            path: "k::Cache".into(),
            package: "k".into(),
            name: "Cache".into(),
            constructors: vec![Constructor {
                name: "new".into(),
                ..Constructor::default()
            }],
            methods: vec![method("get_or_guard"), method("remove")],
            scopes: vec![analysis::ScopeGuard {
                from: "get_or_guard".into(),
                guard: "k::Placeholder".into(),
                holds: GuardHolder::Variant("::k::Lookup::Guard".into()),
                finishers: vec![analysis::Finisher {
                    method: method("insert"),
                    takes: GuardTaking::Value,
                }],
            }],
            ..TypeModel::default()
        };
        let scoped = |finish: Option<Call>| Call {
            scope: Some(Box::new(generator::Scope {
                then: vec![call("remove", vec![Value::Int(2)])],
                finish,
            })),
            ..call("get_or_guard", vec![Value::Int(2)])
        };
        let test = TestCase {
            id: 1,
            type_path: "k::Cache".into(),
            pair: ["get_or_guard".into(), "get_or_guard".into()],
            instances: vec![call("new", vec![])],
            handles: vec![],
            prefix: vec![],
            threads: [
                vec![scoped(Some(call("insert", vec![Value::Int(7)])))],
                vec![scoped(None)],
            ],
            noise_seed: 3,
            control: Default::default(),
        };
        let source = render_reproducer(&ty, &test, None, "panic");
        for text in [
            "{ let g = c0.get_or_guard(2); let _ = c0.remove(2); if let ::k::Lookup::Guard(g) = g { let _ = g.insert(7); } }",
            "{ let g = c0.get_or_guard(2); let _ = c0.remove(2); drop(g); }",
        ] {
            assert_eq!(source.matches(text).count(), 1, "{text}\n{source}");
        }
    }
}
