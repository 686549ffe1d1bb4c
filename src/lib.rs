//! git-ledger: citeable AI coding-agent evaluation ledgers, kept on Git refs.
//!
//! This crate is the command line (`cli`) over the workspace's layers, each a crate of its own:
//! `git-ledger-base` (errors, refusals, strict JSON), `git-ledger-model` (declaration, ledger,
//! admission, portfolio, report), `git-ledger-cite` (the citeability gate), `git-ledger-git`
//! (generic Git plumbing), `git-ledger-store` (the ledger where it is kept, on a file or a ref),
//! `git-ledger-import` (the harness importers) and `git-ledger-render`. Their modules are
//! re-exported under the names they had when they were one crate, so `git_ledger::declaration`
//! and `crate::declaration` keep meaning what they did.

pub mod cli;
#[cfg(test)]
mod layering;

pub use git_ledger_base::{civil, error, hex, json, refusal, sha256_hex, Error, Result};
pub use git_ledger_cite as cite;
pub use git_ledger_import as import;
pub use git_ledger_model::{admission, declaration, ledger, ledger_diff, portfolio, report};
pub use git_ledger_render as render;
pub use git_ledger_store::{audit, git, hand, hook, store, sync, verify, witness, write};
