//! Static analysis for cargo covcon: reads a workspace's source with syn and builds the
//! [`Model`]: thread-safe types, their constructors and methods, BC-ConTest pair groups and
//! SplitRichTest split points. Pure: it reads source files, never spawns a process or prints.

pub mod model;

pub use model::*;
