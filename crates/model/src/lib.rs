//! The model of git-ledger: the declaration, the ledger and its rows, the one admission
//! function, the portfolio, the report and ledger diffs. It knows neither Git nor where a
//! ledger is kept, nor any terminal; its crate has no dependency that could.

pub mod admission;
pub mod declaration;
pub mod ledger;
pub mod ledger_diff;
pub mod portfolio;
pub mod report;
#[cfg(any(test, feature = "test-support"))]
pub mod testutil;

/// The fingerprint of the rules this build was made with: a SHA-256 over the source files that
/// decide what a declaration or a row may be (this crate's and the base's strict JSON), written
/// by `crates/model/build.rs`. A cache of parsed declarations trusts an entry only under the same rules.
pub const RULES: &str = env!("GIT_LEDGER_RULES");

// The base's modules, named as the crate's own (`crate::error`, `crate::json`, …).
use git_ledger_base::{error, json, refusal, sha256_hex, Result};
