//! Integration tests: the real `git-ledger` binary against real Git repositories, in an
//! environment pinned for determinism. One test binary, one module per area.

mod cite;
mod common;
mod concurrency;
mod crash;
mod defhash;
mod examples;
mod fuzz_regressions;
mod gitstore;
mod hooks;
mod hostile;
mod hostile_git;
mod import;
mod inspect;
mod inspect_runs;
mod messages;
mod pin;
mod progress;
mod render;
mod report;
mod shell;
mod sync;

/// The generator of the example records, shared with the tests that import them.
#[allow(dead_code)]
#[path = "../../examples/make_examples.rs"]
mod make_examples;
