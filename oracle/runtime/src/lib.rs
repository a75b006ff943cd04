//! Runtime compiled into cargo covcon's harness and instrumented copies.
