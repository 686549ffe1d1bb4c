//! The ledger where it is kept — a file or a ref — and everything that writes or checks it
//! there: the `Store` and its writers (`store`, `hand`), the ledger on a ref (`git`), `sync`,
//! `verify`, `audit`, `witness` and the hooks.

pub mod audit;
pub mod git;
pub mod hand;
pub mod hook;
pub mod store;
pub mod sync;
pub mod verify;
pub mod witness;
pub mod write;

// The lower crates' modules, named as the crate's own (`crate::declaration`, `crate::json`, …).
use git_ledger_base::{civil, error, json, refusal, sha256_hex, Result};
#[cfg(test)]
use git_ledger_model::testutil;
use git_ledger_model::{admission, declaration, ledger, ledger_diff, portfolio, report};
