//! Integration tests: the real `git-ledger` binary against real Git repositories, in an
//! environment pinned for determinism. One test binary, one module per area.

mod cite;
mod common;
mod defhash;
mod fuzz_regressions;
mod hostile;
mod pin;
