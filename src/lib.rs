//! git-ledger: citeable AI coding-agent evaluation ledgers, kept on Git refs.
//!
//! The library holds every concept of the specification; the `git-ledger` binary only parses
//! the command line and maps results to exit codes.

pub mod admission;
pub mod audit;
pub mod cite;
pub mod civil;
pub mod cli;
pub mod declaration;
pub mod error;
pub mod git;
pub mod hand;
pub mod hook;
pub mod import;
pub mod json;
#[cfg(test)]
mod layering;
pub mod ledger;
pub mod ledger_diff;
pub mod portfolio;
pub mod refusal;
pub mod render;
pub mod report;
pub mod store;
pub mod sync;
#[cfg(test)]
pub(crate) mod testutil;
pub mod witness;

pub use error::{Error, Result};

/// Lowercase hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of some bytes (digests, object ids).
pub fn hex(bytes: &[u8]) -> String {
    faster_hex::hex_string(bytes)
}
