//! The ledger document (`campaign-ledger/1`) and its rows: the template, strict row checks
//! (refusal groups 1–7 of `ledger.md`), canonical bytes, and typed accessors.
//!
//! A [`Row`] can only be built by [`Row::check`], so every row the rest of the tool holds has
//! passed the row checks against its declaration. A [`Ledger`] holds one row per scheduled
//! attempt, in schedule order.
//!
//! By job: `row.rs` (the row type, its accessors and canonical bytes), `checks.rs` (the row checks),
//! `view.rs` (a checked row through any JSON view), `document.rs` (the ledger document, its
//! parse and canonical bytes), `fast.rs` (the report's parallel parse).

use crate::declaration::STANDARD_FIELDS;

mod checks;
mod document;
mod fast;
mod row;
mod view;

pub use document::{check_header_declaration, Keep, KeptIter, KeptRows, Ledger};
pub use row::Row;
pub use view::{Check, NativeRecord, RowView};
// What the fast path shares with the ordinary parse.
use checks::check_members;
use document::{assemble_rows, check_top, checked_row, Checked, Placed};

/// The format string of a ledger document.
pub const FORMAT: &str = "campaign-ledger/1";
/// The native outcome of a row that holds no attempt.
pub const DEFERRED: &str = "DEFERRED";
/// The reason a template row gives.
pub const NOT_ATTEMPTED: &str = "not attempted";

/// The kinds of native record a row can be filled from.
pub const RECORD_KINDS: [&str; 4] = ["scenario", "arena", "inspect", "hand"];

/// The standard fields, for code that must not depend on a declaration's additions.
pub fn is_standard_field(f: &str) -> bool {
    STANDARD_FIELDS.contains(&f)
}

#[cfg(test)]
mod tests;
