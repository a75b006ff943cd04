//! The pool of persistent harness worker processes.
//!
//! Each worker is a process in its own process group that reads one JSON [`Request`] per line
//! on stdin and answers one JSON [`Response`] per line on stdout for each test of the request
//! (a [`Request::Batch`] holds several). The pool owns one worker per rayon thread of its own
//! thread pool, so `jobs` tests run at once without any worker being shared, and a worker runs
//! the tests of one type only ([`Pool::live_worker`]); a thread keeps up
//! to two requests in flight to its worker ([`Pool::request_all`]), so the worker finds the
//! next one waiting when it finishes one. A worker that reports a deadlock, dies, or stops
//! answering is killed with its whole process group and replaced by a fresh one on the next
//! request; what happened becomes the [`Outcome`] of the test it was running, never an error of
//! the campaign, and the tests it had not answered go to the fresh one. Workers are killed when
//! the pool is dropped, and when covcon is interrupted: the first pool installs a handler for
//! SIGINT, SIGTERM and SIGHUP (unless the program has its own) that kills every live worker
//! group and then lets the signal take its default course. A program with its own handler
//! calls [`kill_all_workers`]. A worker whose parent vanished anyway exits at the end of its
//! input.
//!
//! This is the only module of the oracle that spawns test processes.

use crate::config::OracleError;
use crate::protocol::{BatchRun, Outcome, Request, Response};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How to start one worker process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The directory workers run in: covcon's own, so that a relative path the code under
    /// test writes to (`File::create("a")`, a `PathBuf` argument) lands there and not in the
    /// user's project. `None`: covcon's working directory (the fake workers of tests).
    pub dir: Option<PathBuf>,
    /// Echo the workers' stderr, prefixed with the worker number.
    pub verbose: bool,
}

/// A fixed number of workers, each bound to one thread of the pool's rayon thread pool.
pub(crate) struct Pool {
    command: WorkerCommand,
    slots: Vec<Mutex<Option<Worker>>>,
    threads: rayon::ThreadPool,
    /// Workers started so far, first ones included.
    spawned: AtomicU64,
}

impl Pool {
    /// Starts `jobs` workers (at least one) and checks that each answers a ping.
    pub(crate) fn start(command: WorkerCommand, jobs: usize) -> Result<Pool, OracleError> {
        let jobs = jobs.max(1);
        let threads = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .thread_name(|i| format!("covcon-pool-{i}"))
            .build()
            .map_err(|e| OracleError::Worker {
                message: format!("cannot start the pool's threads: {e}"),
            })?;
        let pool = Pool {
            command,
            slots: (0..jobs).map(|_| Mutex::new(None)).collect(),
            threads,
            spawned: AtomicU64::new(0),
        };
        for index in 0..jobs {
            let mut responses = pool.request_all_on(index, &[Request::Ping]);
            if let Some(Outcome::Crashed { message }) = responses.pop().map(|r| r.outcome) {
                return Err(OracleError::Worker {
                    message: format!(
                        "`{}` did not answer a ping: {message}",
                        pool.command.program.display()
                    ),
                });
            }
        }
        Ok(pool)
    }

    /// Number of workers.
    pub(crate) fn jobs(&self) -> usize {
        self.slots.len()
    }

    /// How many worker processes were started, replacements included.
    pub(crate) fn spawned(&self) -> u64 {
        self.spawned.load(Ordering::Relaxed)
    }

    /// Runs `work` on every item in parallel, one item per pool thread at a time; inside
    /// `work`, [`Pool::request`] talks to that thread's own worker. Results keep item order.
    pub(crate) fn map<T, R>(&self, items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R>
    where
        T: Sync,
        R: Send,
    {
        use rayon::prelude::*;
        self.threads
            .install(|| items.par_iter().with_max_len(1).map(&work).collect())
    }

    /// Sends one request to the calling pool thread's worker (worker 0 outside the pool) and
    /// waits for its answer. A run timeout in the request is enforced by the worker's watchdog;
    /// the pool gives up on a worker that has not answered within twice that plus a grace.
    pub(crate) fn request(&self, request: &Request) -> Response {
        let mut responses = self.request_all(std::slice::from_ref(request));
        responses.pop().expect("one response per request")
    }

    /// Sends `requests` to the calling pool thread's worker and answers one response per test
    /// they hold (one per request, every test of a batch), in order. Up to [`PIPELINE`]
    /// requests are in flight, so the worker finds the next request waiting when it finishes
    /// one. When a worker dies, stops answering or deadlocks, the test it was running is
    /// answered as such, and the tests it had not answered yet (the rest of a batch included)
    /// go again to a fresh worker.
    pub(crate) fn request_all(&self, requests: &[Request]) -> Vec<Response> {
        let index = self
            .threads
            .current_thread_index()
            .unwrap_or(0)
            .min(self.slots.len() - 1);
        self.request_all_on(index, requests)
    }

    fn request_all_on(&self, index: usize, requests: &[Request]) -> Vec<Response> {
        let mut slot = lock(&self.slots[index]);
        let mut responses = Vec::with_capacity(requests.len());
        // Requests not fully answered yet; the first `sent` went to the current worker, and
        // `answered` of the first one's tests came back.
        // (A request that asks for no answer, an empty batch, is not sent at all.)
        let mut queue: VecDeque<Pending> = requests
            .iter()
            .flat_map(one_type_each)
            .map(Pending::new)
            .filter(|p| !p.ids.is_empty())
            .collect();
        let mut sent = 0;
        let mut answered = 0;
        while let Some(current) = queue.front() {
            let wanted = current.ids[answered];
            let patience = patience(&current.request);
            let started = Instant::now();
            let mut serial = 0;
            let of_type = current.type_path.as_deref();
            let result = self
                .live_worker(&mut slot, index, of_type)
                .and_then(|worker| {
                    serial = worker.serial;
                    // Only requests about the worker's type share its pipeline: the next type's
                    // go to a fresh worker once these are answered.
                    while sent < queue.len()
                        && sent < PIPELINE
                        && queue[sent]
                            .type_path
                            .as_deref()
                            .is_none_or(|t| Some(t) == of_type)
                    {
                        if worker.send(&queue[sent]).is_err() {
                            // The worker is gone; its answers so far may still be in the pipe,
                            // and `receive` reports the death where it happened.
                            break;
                        }
                        sent += 1;
                    }
                    worker.receive(wanted, patience)
                });
            let lost = match result {
                // The worker exits after a deadlock it did not recover from; make sure of it
                // below.
                Ok(mut response) => {
                    response.worker = serial;
                    for other in &mut response.others {
                        other.worker = serial;
                    }
                    let deadlocked = matches!(response.outcome, Outcome::Deadlocked { .. })
                        && !response.recovered;
                    responses.push(response);
                    deadlocked
                }
                Err(message) => {
                    responses.push(Response {
                        worker: serial,
                        ..crashed(wanted, message, started)
                    });
                    true
                }
            };
            answered += 1;
            if lost {
                if let Some(worker) = slot.take() {
                    worker.kill();
                }
                // What the worker had not answered goes to the next one: the rest of this
                // request, then the requests after it.
                let current = queue.pop_front().expect("the current request");
                if let Some(rest) = current.rest(answered) {
                    queue.push_front(rest);
                }
                sent = 0;
                answered = 0;
            } else if answered == queue[0].ids.len() {
                queue.pop_front();
                sent -= 1;
                answered = 0;
            }
        }
        responses
    }

    /// Ends the calling pool thread's worker (worker 0's outside the pool), so that its next
    /// request goes to a new process: what a type prints that differs from one process to
    /// the next (a clock calibrated when the process first reads it) shows only that way.
    pub(crate) fn restart_worker(&self) {
        let index = self
            .threads
            .current_thread_index()
            .unwrap_or(0)
            .min(self.slots.len() - 1);
        if let Some(worker) = lock(&self.slots[index]).take() {
            worker.kill();
        }
    }

    /// The slot's worker for a request about `type_path`'s tests, started first if the slot
    /// is empty or its worker ran another type's tests: a worker serves one type. Code that
    /// frees a value twice or writes past a buffer does not always crash at once; the heap it
    /// corrupted can bring a later run down, and that run must not be another type's. (The
    /// fixtures' `rusty::Permits`, safe code on parking_lot's lock, was once reported crashing
    /// with SIGSEGV in a worker that had run `rusty::OneSlot`'s double frees.)
    fn live_worker<'s>(
        &self,
        slot: &'s mut Option<Worker>,
        index: usize,
        type_path: Option<&str>,
    ) -> Result<&'s mut Worker, String> {
        let served_another =
            |w: &Worker| matches!((w.served.as_deref(), type_path), (Some(a), Some(b)) if a != b);
        if slot.as_ref().is_some_and(served_another) {
            if let Some(worker) = slot.take() {
                worker.kill();
            }
        }
        if slot.is_none() {
            let serial = self.spawned.fetch_add(1, Ordering::Relaxed) + 1;
            let worker = Worker::spawn(&self.command, index, serial).map_err(|e| {
                format!(
                    "cannot start worker `{}`: {e}",
                    self.command.program.display()
                )
            })?;
            *slot = Some(worker);
        }
        let worker = slot.as_mut().expect("a worker is in the slot");
        if let Some(t) = type_path {
            if worker.served.is_none() {
                worker.served = Some(t.to_string());
            }
        }
        Ok(worker)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for slot in &self.slots {
            if let Some(worker) = lock(slot).take() {
                worker.kill();
            }
        }
    }
}

/// Kills every worker process (and its process group) still alive in this process, from
/// every pool. Meant for a program's own Ctrl-C handler; the pools notice on their next
/// request.
pub fn kill_all_workers() {
    for slot in &LIVE_GROUPS {
        let pgid = slot.load(Ordering::Relaxed);
        if pgid > 0 {
            kill_group(pgid);
        }
    }
}

/// Process groups of live workers (0 for a free slot), lock-free so that a signal handler
/// can read them. A worker that finds no free slot is still killed on drop.
static LIVE_GROUPS: [AtomicI32; 256] = [const { AtomicI32::new(0) }; 256];

fn register_group(pgid: i32) {
    install_signal_handlers();
    for slot in &LIVE_GROUPS {
        if slot
            .compare_exchange(0, pgid, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

fn unregister_group(pgid: i32) {
    for slot in &LIVE_GROUPS {
        let _ = slot.compare_exchange(pgid, 0, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// Installs [`on_terminating_signal`] for SIGINT, SIGTERM and SIGHUP where their disposition
/// is still the default, once per process.
fn install_signal_handlers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: both sigaction structs are valid for the calls; the handler only makes
            // async-signal-safe calls (atomic loads, killpg, signal, raise).
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction != libc::SIG_DFL
                {
                    continue;
                }
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_terminating_signal as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut new.sa_mask);
                libc::sigaction(signal, &new, std::ptr::null_mut());
            }
        }
    });
}

/// Kills every worker group, then lets the signal do what it would have done (end covcon).
extern "C" fn on_terminating_signal(signal: libc::c_int) {
    kill_all_workers();
    // SAFETY: signal and raise are async-signal-safe; the default action then applies.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// Most requests sent to one worker before its first answer is read.
const PIPELINE: usize = 2;
/// How long a worker gets to start and answer the first ping.
const PING_TIMEOUT: Duration = Duration::from_secs(30);
/// Lines of a worker's stderr kept to explain a crash.
const STDERR_LINES: usize = 12;

/// How long to wait for each answer to `request` before giving the worker up: each of its
/// `repeat` runs may take nearly the run timeout the worker's watchdog enforces.
fn patience(request: &Request) -> Duration {
    let wait = |timeout_ms: u64, runs: u64| {
        Duration::from_millis(timeout_ms.saturating_mul(runs.saturating_add(1)))
            + Duration::from_secs(2)
    };
    match request {
        // The last run may start just before the time is up.
        Request::Concurrent {
            timeout_ms,
            repeat,
            repeat_for_ms: Some(for_ms),
            ..
        } => wait(*timeout_ms, *repeat).min(
            Duration::from_millis(for_ms.saturating_add(*timeout_ms)) + Duration::from_secs(2),
        ),
        Request::Concurrent {
            timeout_ms, repeat, ..
        } => wait(*timeout_ms, *repeat),
        Request::Batch {
            tests, timeout_ms, ..
        } => tests
            .iter()
            .map(|run| match run.repeat_for_ms {
                Some(for_ms) => wait(*timeout_ms, run.repeat).min(
                    Duration::from_millis(for_ms.saturating_add(*timeout_ms))
                        + Duration::from_secs(2),
                ),
                None => wait(*timeout_ms, run.repeat),
            })
            .max()
            .unwrap_or_else(|| wait(*timeout_ms, 1)),
        Request::Sequential { timeout_ms, .. } => wait(*timeout_ms, 1),
        Request::Ping => PING_TIMEOUT,
    }
}

fn crashed(test_id: u64, message: String, started: Instant) -> Response {
    Response {
        elapsed_us: started.elapsed().as_micros() as u64,
        ..Response::new(test_id, Outcome::Crashed { message })
    }
}

/// A request not fully answered yet, with the test ids of its answers.
struct Pending<'r> {
    request: Cow<'r, Request>,
    ids: Vec<u64>,
    /// The type of its tests (one type: [`one_type_each`]); `None` for a ping.
    type_path: Option<String>,
    /// The request as one JSON line, made once however often it is sent.
    line: String,
}

impl<'r> Pending<'r> {
    fn new(request: Cow<'r, Request>) -> Pending<'r> {
        let mut line = serde_json::to_string(request.as_ref()).expect("requests always serialise");
        line.push('\n');
        Pending {
            ids: request.answer_ids(|test| test.id),
            type_path: request_type(&request).map(str::to_string),
            request,
            line,
        }
    }

    /// What is left to ask after the first `answered` answers, if anything: the rest of a
    /// batch (a batch of one becomes a plain concurrent request).
    fn rest(self, answered: usize) -> Option<Pending<'r>> {
        let Request::Batch {
            tests,
            timeout_ms,
            capture,
        } = self.request.into_owned()
        else {
            return None;
        };
        let mut left: Vec<BatchRun> = tests.into_iter().skip(answered).collect();
        let request = match left.len() {
            0 => return None,
            1 => {
                let run = left.pop().expect("one run");
                Request::Concurrent {
                    test: run.test,
                    noise: run.noise,
                    timeout_ms,
                    capture,
                    repeat: run.repeat,
                    repeat_for_ms: run.repeat_for_ms,
                }
            }
            _ => Request::Batch {
                tests: left,
                timeout_ms,
                capture,
            },
        };
        Some(Pending::new(Cow::Owned(request)))
    }
}

/// The type whose tests `request` is about: its first test's.
fn request_type(request: &Request) -> Option<&str> {
    match request {
        Request::Concurrent { test, .. } | Request::Sequential { test, .. } => {
            Some(&test.type_path)
        }
        Request::Batch { tests, .. } => tests.first().map(|run| run.test.type_path.as_str()),
        Request::Ping => None,
    }
}

/// `request` as requests about one type each: a batch whose tests are of several types is
/// cut where the type changes, so that no worker runs two types' tests ([`Pool::live_worker`]).
fn one_type_each(request: &Request) -> Vec<Cow<'_, Request>> {
    let Request::Batch {
        tests,
        timeout_ms,
        capture,
    } = request
    else {
        return vec![Cow::Borrowed(request)];
    };
    if tests
        .windows(2)
        .all(|w| w[0].test.type_path == w[1].test.type_path)
    {
        return vec![Cow::Borrowed(request)];
    }
    tests
        .chunk_by(|a, b| a.test.type_path == b.test.type_path)
        .map(|runs| {
            Cow::Owned(Request::Batch {
                tests: runs.to_vec(),
                timeout_ms: *timeout_ms,
                capture: *capture,
            })
        })
        .collect()
}

/// One live worker process.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    /// The worker's stdout, read in the requesting thread (no hop through another thread).
    stdout: LineReader,
    /// The last lines of its stderr.
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Answers expected to requests sent and not received yet.
    in_flight: usize,
    /// Its number among the pool's workers, in the order they were started (1 for the first):
    /// what marks its answers ([`Response::worker`]).
    serial: u64,
    /// The type whose tests it ran, once it ran any: the only type it runs.
    served: Option<String>,
}

impl Worker {
    fn spawn(command: &WorkerCommand, index: usize, serial: u64) -> std::io::Result<Worker> {
        let mut child = Command::new(&command.program);
        child
            .args(&command.args)
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(dir) = &command.dir {
            std::fs::create_dir_all(dir)?;
            child.current_dir(dir);
        }
        let mut child = child.spawn()?;
        register_group(child.id() as i32);
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr_pipe = child.stderr.take().expect("stderr is piped");
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr);
        let verbose = command.verbose;
        std::thread::Builder::new()
            .name(format!("covcon-worker-{index}-err"))
            .spawn(move || keep_tail(stderr_pipe, &tail, verbose, index))?;
        Ok(Worker {
            child,
            stdin,
            stdout: LineReader::new(stdout),
            stderr,
            in_flight: 0,
            serial,
            served: None,
        })
    }

    /// Sends one request; a failure to write means the worker is gone.
    fn send(&mut self, pending: &Pending<'_>) -> std::io::Result<()> {
        if self.in_flight == 0 {
            // Whatever the worker printed before belongs to earlier tests.
            lock(&self.stderr).clear();
        }
        self.stdin.write_all(pending.line.as_bytes())?;
        self.stdin.flush()?;
        self.in_flight += pending.ids.len();
        Ok(())
    }

    /// Waits up to `patience` for the response with test id `wanted`. Any failure of the
    /// worker comes back as the message of a crash.
    ///
    /// On a machine with more runnable threads than cores the wait stretches with the load:
    /// a worker that is alive but starved of the CPU (its run and its watchdog both waiting
    /// for a core) is slow, not stuck, and calling it a crash would report a violation the
    /// code does not have (the fixtures' correct `PollQueue`, beside the suite and a covcon
    /// campaign, at a load of 5.6 on 2 cores: "no response after 4.0 s").
    fn receive(&mut self, wanted: u64, patience: Duration) -> Result<Response, String> {
        let started = Instant::now();
        let mut patience = patience;
        let mut stretched = false;
        loop {
            let left = patience.saturating_sub(started.elapsed());
            match self.stdout.next_line(left) {
                Ok(Some(line)) => match serde_json::from_str::<Response>(&line) {
                    Ok(response) if response.test_id == wanted => {
                        self.in_flight -= 1;
                        return Ok(response);
                    }
                    // A line user code printed: not an answer, keep it for a crash message.
                    _ => self.note(line),
                },
                Ok(None) if !stretched && matches!(self.child.try_wait(), Ok(None)) => {
                    stretched = true;
                    patience = patience.mul_f64(load_stretch(load_average(), cores()));
                }
                Ok(None) => {
                    return Err(format!(
                        "the worker stopped answering (no response after {:.1} s){}",
                        patience.as_secs_f64(),
                        self.stderr_tail()
                    ))
                }
                Err(_) => return Err(self.death_message()),
            }
        }
    }

    /// Why the worker's stdout closed: its exit status and the end of its stderr.
    fn death_message(&mut self) -> String {
        let status = wait_briefly(&mut self.child);
        // Give the stderr thread a moment to collect the last words.
        std::thread::sleep(Duration::from_millis(20));
        let how = match status {
            Some(status) => describe_exit(status),
            None => "the worker closed its output but did not exit".to_string(),
        };
        format!("{how}{}", self.stderr_tail())
    }

    fn note(&self, line: String) {
        push_tail(&self.stderr, line);
    }

    fn stderr_tail(&self) -> String {
        let tail = lock(&self.stderr);
        if tail.is_empty() {
            String::new()
        } else {
            let lines: Vec<&str> = tail.iter().map(String::as_str).collect();
            format!("; its last output:\n{}", lines.join("\n"))
        }
    }

    /// Kills the worker's process group and reaps it.
    fn kill(mut self) {
        let pgid = self.child.id() as i32;
        kill_group(pgid);
        let _ = self.child.wait();
        unregister_group(pgid);
    }
}

fn kill_group(pgid: i32) {
    // SAFETY: killpg has no memory-safety preconditions; a stale id fails with ESRCH.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

/// How much longer than its patience a live worker is waited for: the runnable threads per
/// core over the last minute (1 on a machine that is not oversubscribed), at most
/// [`MOST_STRETCH`] times.
fn load_stretch(load: Option<f64>, cores: usize) -> f64 {
    let per_core = load.unwrap_or(0.0) / cores.max(1) as f64;
    per_core.clamp(1.0, MOST_STRETCH)
}

/// The longest a live worker's patience stretches, as a multiple of it.
const MOST_STRETCH: f64 = 8.0;

/// The system's load average over the last minute, where the platform has one.
fn load_average() -> Option<f64> {
    let mut load = [0.0f64; 1];
    // SAFETY: `getloadavg` writes at most `nelem` doubles to the buffer it is given.
    let n = unsafe { libc::getloadavg(load.as_mut_ptr(), 1) };
    (n == 1).then_some(load[0])
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Waits up to a second for a worker whose output closed to exit.
fn wait_briefly(child: &mut Child) -> Option<ExitStatus> {
    let until = Instant::now() + Duration::from_secs(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            _ => return None,
        }
    }
}

fn describe_exit(status: ExitStatus) -> String {
    if let Some(signal) = status.signal() {
        let name = match signal {
            libc::SIGABRT => " (SIGABRT: abort)",
            libc::SIGSEGV => " (SIGSEGV: segmentation fault or stack overflow)",
            libc::SIGBUS => " (SIGBUS)",
            libc::SIGILL => " (SIGILL)",
            libc::SIGKILL => " (SIGKILL)",
            libc::SIGTERM => " (SIGTERM)",
            libc::SIGFPE => " (SIGFPE)",
            _ => "",
        };
        format!("the worker was killed by signal {signal}{name}")
    } else {
        match status.code() {
            Some(code) => format!("the worker exited with status {code}"),
            None => "the worker exited".to_string(),
        }
    }
}

/// Reads lines from a worker's stdout with a deadline, using `poll` so that the thread that
/// sent a request is the one woken by its answer.
struct LineReader {
    pipe: ChildStdout,
    buffer: Vec<u8>,
    /// Bytes of `buffer` already handed out as lines.
    consumed: usize,
    /// Bytes after `consumed` already searched for a newline (none there): an answer of
    /// hundreds of megabytes arrives in thousands of reads, and searching it whole after each
    /// read kept a campaign's thread busy for minutes on one answer.
    searched: usize,
}

impl LineReader {
    fn new(pipe: ChildStdout) -> LineReader {
        LineReader {
            pipe,
            buffer: Vec::with_capacity(64 * 1024),
            consumed: 0,
            searched: 0,
        }
    }

    /// The next line (without its newline); `Ok(None)` when none came within `patience`;
    /// an error at end of file or on a failed read.
    fn next_line(&mut self, patience: Duration) -> std::io::Result<Option<String>> {
        let deadline = Instant::now() + patience;
        loop {
            let unsearched = self.consumed + self.searched;
            if let Some(at) = self.buffer[unsearched..].iter().position(|&b| b == b'\n') {
                let end = unsearched + at;
                let line = String::from_utf8_lossy(&self.buffer[self.consumed..end]).into_owned();
                self.consumed = end + 1;
                self.searched = 0;
                if self.consumed == self.buffer.len() {
                    self.buffer.clear();
                    self.consumed = 0;
                }
                return Ok(Some(line));
            }
            self.searched = self.buffer.len() - self.consumed;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !readable(&self.pipe, left)? {
                return Ok(None);
            }
            let mut chunk = [0u8; 64 * 1024];
            let n = self.pipe.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buffer.extend_from_slice(&chunk[..n]);
        }
    }
}

/// Waits up to `patience` for `pipe` to have data (or be closed).
fn readable(pipe: &ChildStdout, patience: Duration) -> std::io::Result<bool> {
    let mut fd = libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = patience.as_millis().clamp(1, i32::MAX as u128) as i32;
    loop {
        // SAFETY: `fd` is a valid pollfd for the duration of the call, and its count is 1.
        let ready = unsafe { libc::poll(&mut fd, 1, ms) };
        if ready >= 0 {
            return Ok(ready > 0);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

fn keep_tail(pipe: impl Read, tail: &Mutex<VecDeque<String>>, verbose: bool, index: usize) {
    for line in BufReader::new(pipe).lines() {
        let Ok(line) = line else { break };
        if verbose {
            eprintln!("[worker {index}] {line}");
        }
        push_tail(tail, line);
    }
}

fn push_tail(tail: &Mutex<VecDeque<String>>, line: String) {
    let mut tail = lock(tail);
    if tail.len() == STDERR_LINES {
        tail.pop_front();
    }
    tail.push_back(line);
}

/// Locks a mutex, carrying on after a panic elsewhere (the data stays usable).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How one run of a user's test command ended (`cargo covcon mutants --test-cmd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandEnd {
    Passed,
    /// It exited unsuccessfully (with this code, or by a signal: `None`).
    Failed(Option<i32>),
    TimedOut,
    /// `stop` said so before it ended.
    Stopped,
}

/// Runs `sh -c CMD` in `dir` with `env` set and `MUTANT_ENV` only as `env` sets it, its output
/// to `log`, in a process group of its own that is killed (everything it started with it,
/// `cargo test` and the test binaries) after `limit` or once `stop` answers true, and by a
/// second Ctrl-C like the workers. The command's builds cap lints at `warn`
/// ([`crate::build::rustflags_env`], after the user's own flags, as the harness build does):
/// the copy is covcon's rewrite, and what it leaves a lint to say (an import of `std::thread`
/// unused once the copy's sleeps are covcon's) must not fail a `#![deny(warnings)]` crate's
/// suite on the unmutated code.
pub fn run_command(
    cmd: &str,
    dir: &Path,
    env: &[(&str, String)],
    log: &Path,
    limit: Option<Duration>,
    stop: &dyn Fn() -> bool,
) -> Result<CommandEnd, OracleError> {
    let file = std::fs::File::create(log)
        .map_err(|e| OracleError::io(format!("creating {}", log.display()), e))?;
    let err = file
        .try_clone()
        .map_err(|e| OracleError::io(format!("opening {}", log.display()), e))?;
    let (flags_var, flags) = crate::build::rustflags_env(
        std::env::var("RUSTFLAGS").ok(),
        std::env::var("CARGO_ENCODED_RUSTFLAGS").ok(),
    );
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .env_remove(crate::MUTANT_ENV)
        .env(flags_var, flags)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| OracleError::io(format!("running `{cmd}`"), e))?;
    let pgid = child.id() as i32;
    register_group(pgid);
    let started = Instant::now();
    let end = loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break CommandEnd::Passed,
            Ok(Some(status)) => break CommandEnd::Failed(status.code()),
            Ok(None) => {}
            Err(e) => {
                kill_group(pgid);
                unregister_group(pgid);
                return Err(OracleError::io(format!("waiting for `{cmd}`"), e));
            }
        }
        let over = limit.is_some_and(|l| started.elapsed() > l);
        if over || stop() {
            kill_group(pgid);
            let _ = child.wait();
            break if over {
                CommandEnd::TimedOut
            } else {
                CommandEnd::Stopped
            };
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Whatever it left running in its group goes with it.
    kill_group(pgid);
    unregister_group(pgid);
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line far longer than one read comes whole, and the line after it comes next.
    #[test]
    fn a_line_of_many_reads_comes_whole_and_then_the_next() {
        let mut child = Command::new("sh")
            .args([
                "-c",
                "head -c 3000000 /dev/zero | tr '\\0' x; printf '\\nshort\\nlast'",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh runs");
        let mut reader = LineReader::new(child.stdout.take().expect("piped"));
        let patience = Duration::from_secs(60);
        let long = reader.next_line(patience).unwrap().expect("a line");
        assert_eq!(long.len(), 3_000_000);
        assert!(long.bytes().all(|b| b == b'x'));
        assert_eq!(
            reader.next_line(patience).unwrap().as_deref(),
            Some("short")
        );
        // A last line without its newline is not a line: the end of the output is an error.
        assert!(reader.next_line(patience).is_err());
        child.wait().expect("sh exits");
    }

    /// A live worker's patience stretches by the runnable threads per core, never below
    /// its own and never past [`MOST_STRETCH`] times it; unknown load changes nothing.
    #[test]
    fn a_live_workers_patience_stretches_with_the_load_per_core() {
        let cases = [
            (None, 2, 1.0),
            (Some(0.5), 2, 1.0),
            (Some(2.0), 2, 1.0),
            (Some(5.6), 2, 2.8),
            (Some(12.0), 4, 3.0),
            (Some(100.0), 2, MOST_STRETCH),
            (Some(3.0), 0, 3.0),
        ];
        for (load, cores, want) in cases {
            let got = load_stretch(load, cores);
            assert!((got - want).abs() < 1e-9, "{load:?} on {cores}: {got}");
        }
    }
}
