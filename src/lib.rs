//! git-ledger: citeable AI coding-agent evaluation ledgers, kept on Git refs.
//!
//! The library holds every concept of the specification; the `git-ledger` binary only parses
//! the command line and maps results to exit codes.

pub mod admission;
pub mod cite;
pub mod cli;
pub mod declaration;
pub mod error;
pub mod git;
pub mod hand;
pub mod hook;
pub mod import;
pub mod json;
pub mod ledger;
pub mod ledger_diff;
pub mod portfolio;
pub mod render;
pub mod report;
pub mod store;
pub mod sync;
#[cfg(test)]
pub(crate) mod testutil;

pub use error::{Error, Result};

/// Lowercase hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        use std::fmt::Write;
        let _ = write!(out, "{b:02x}");
    }
    out
}
