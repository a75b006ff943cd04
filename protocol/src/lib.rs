//! The messages cargo covcon and a harness worker exchange: one JSON [`Request`] per line on the
//! worker's stdin, one JSON [`Response`] per line on its stdout for each test the request holds
//! (one, or every test of a [`Request::Batch`], in order).
//!
//! Both sides use these types: covcon (`oracle/src/protocol.rs`) to write requests and read
//! answers, the runtime compiled into the harness (`covcon-rt`) to read requests and write
//! answers, so the shapes and field names exist once. A request carries a test case of the
//! sender's choice (`T`): covcon sends the generator's `TestCase`, the worker reads it as its
//! own `TestData`, the parts of it a run needs. An answer names methods and types (`N`): the
//! worker writes them from the `&'static str`s the instrumented copy records, covcon reads
//! `String`s.
//!
//! The crate is compiled into every harness, beside the user's crate, so it depends on serde
//! alone: no `derive`, whose proc-macro and syn would join every harness's build. Its serde
//! impls are written by hand against serde's data model (`request.rs`, `response.rs`), over
//! the field names of `field.rs`. Decoding is lenient where a worker has always been: unknown
//! fields are skipped, and most fields have a default (a request without `timeout_ms` waits
//! [`DEFAULT_TIMEOUT_MS`]).

mod field;
pub mod refs;
mod request;
mod response;

pub use request::{BatchRun, Control, Noise, Request, DEFAULT_TIMEOUT_MS};
pub use response::{Event, Outcome, Response, Schedule, UNWOUND_FROM};
