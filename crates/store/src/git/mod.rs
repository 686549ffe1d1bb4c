//! The ledger on a ref, over the generic Git plumbing of `git_ledger_git`: the ref layout, ledger
//! commit messages and trailers, commit admission, signatures and allowed signers, the ref
//! store, pins and readiness, history, the declaration cache and replace refs. `crate::git::X`
//! names the plumbing (re-exported here) and these modules alike.

pub use git_ledger_git::*;

pub mod admit;
pub mod allowed_signers;
pub mod decl_cache;
pub mod diff;
pub mod history;
mod known;
pub mod layout;
pub mod message;
pub mod pin;
pub mod read;
pub mod ready;
pub mod replace;
pub mod sign;
pub mod signature;
pub mod store;
