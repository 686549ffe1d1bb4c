//! The base every layer of git-ledger stands on: errors and refusal reasons, strict JSON, civil
//! dates, and the hex and SHA-256 helpers. It knows no declaration, no ledger and no Git.

pub mod civil;
pub mod error;
pub mod json;
pub mod refusal;
#[cfg(any(test, feature = "test-support"))]
pub mod testutil;

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
