//! git-ledger: citeable AI coding-agent evaluation ledgers, kept on Git refs.
//!
//! The library holds every concept of the specification; the `git-ledger` binary only parses
//! the command line and maps results to exit codes.

pub mod cite;
pub mod cli;
pub mod error;
pub mod json;

pub use error::{Error, Result};
