//! Integration tests: the real `git-ledger` binary against real Git repositories, in an
//! environment pinned for determinism. One test binary, one module per area.

mod admitted;
mod agree;
mod audit;
mod citation;
mod cite;
mod common;
mod concurrency;
mod crash;
mod defhash;
mod dry_run;
mod examples;
mod forge;
mod fuzz_regressions;
mod gitstore;
mod guide;
mod harbor;
mod harbor_runs;
mod hooks;
mod hooks_without_binary;
mod hostile;
mod hostile_git;
mod import;
mod inputs;
mod inspect;
mod inspect_runs;
mod kinds;
mod links;
mod log_trust;
mod message_rule;
mod messages;
mod output_size;
mod pin;
mod progress;
mod ready;
mod redteam;
mod refhooks;
mod render;
mod report;
mod runtime;
mod schemas;
mod servers;
mod shell;
mod signature_diff;
mod signing;
mod spelling;
mod sync;
mod sync_conflicts;
mod witness;
mod writers_agree;

/// The generator of the example records, shared with the tests that import them.
#[allow(dead_code)]
#[path = "../../examples/make_examples.rs"]
mod make_examples;
