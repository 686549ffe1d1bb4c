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
use document::{assemble_rows, check_top, Checked, Placed};
pub use fast::Release;

/// The parse entry points: the fast path (`fast.rs`: rows parsed and checked on every core),
/// which says only yes, then for a ledger it does not accept the ordinary path
/// (`document.rs`), which names every fault. They are here, above both, so that the fast path
/// may build the document's types while the document knows nothing of the fast path.
impl Ledger {
    /// Parse a ledger document and apply every refusal rule of `ledger.md` against `decl`.
    pub fn parse(
        decl: &crate::declaration::Declaration,
        bytes: &[u8],
        max_input_bytes: u64,
    ) -> crate::error::Result<Ledger> {
        if bytes.len() as u64 <= max_input_bytes {
            if let Some(ledger) = fast::parse(decl, bytes) {
                return Ok(ledger);
            }
        }
        Ledger::parse_ordinary(decl, bytes, max_input_bytes)
    }

    /// [`Ledger::parse`] for the new side of a change: every check but "two rows name the same
    /// `native_record`" (group 7), which [`crate::admission::admit`] decides for a change
    /// against the state it follows (as rule 5), so that a ledger file and a ledger ref name the
    /// same row, field and rule for it. Every reason is a value: a row's own checks name the
    /// row, the field and the refusal group; the rest are sentences.
    pub fn parse_for_change(
        decl: &crate::declaration::Declaration,
        bytes: &[u8],
        max_input_bytes: u64,
    ) -> std::result::Result<Ledger, crate::error::Reasons> {
        if bytes.len() as u64 <= max_input_bytes {
            if let Some(ledger) = fast::parse(decl, bytes) {
                return Ok(ledger);
            }
        }
        Ledger::parse_for_change_ordinary(decl, bytes, max_input_bytes)
    }

    /// [`Ledger::parse`] keeping only what `keep` takes of each checked row, in schedule order:
    /// the same checks and refusals, but on the fast path no row is built as a [`Row`] (each is
    /// parsed into [`crate::json::Members`], checked by `check_members`, kept and dropped on
    /// the core that parsed it; `report` of 100,000 rows never holds them all). A ledger the
    /// fast path does not accept is parsed by the ordinary path, exactly as [`Ledger::parse`]
    /// does.
    pub fn parse_kept<K: Keep>(
        decl: &crate::declaration::Declaration,
        bytes: &[u8],
        max_input_bytes: u64,
        keep: &K,
    ) -> crate::error::Result<KeptRows<K::Kept>> {
        Ledger::parse_kept_releasing(decl, bytes, max_input_bytes, keep, &|_| {})
    }

    /// [`Ledger::parse_kept`] telling `release` each stretch of `bytes` the fast path is done
    /// with, so that a mapped file's pages are given back as its rows are read
    /// ([`crate::json::Input::release`]): `report` of a ledger file holds the stretch each core
    /// reads and what it keeps of each row, never the whole file. (A ledger the fast path
    /// refuses is read again whole by the ordinary path, which names every fault.)
    pub fn parse_kept_releasing<K: Keep>(
        decl: &crate::declaration::Declaration,
        bytes: &[u8],
        max_input_bytes: u64,
        keep: &K,
        release: Release,
    ) -> crate::error::Result<KeptRows<K::Kept>> {
        if bytes.len() as u64 <= max_input_bytes {
            if let Some(kept) = fast::parse_kept(decl, bytes, keep, release) {
                return Ok(kept);
            }
        }
        Ledger::parse_kept_ordinary(decl, bytes, max_input_bytes, keep)
    }
}

/// The format string of a ledger document.
pub const FORMAT: &str = "campaign-ledger/1";
/// The native outcome of a row that holds no attempt.
pub const DEFERRED: &str = "DEFERRED";
/// The reason a template row gives.
pub const NOT_ATTEMPTED: &str = "not attempted";

/// The kinds of native record a row can be filled from.
pub const RECORD_KINDS: [&str; 5] = ["scenario", "arena", "inspect", "harbor", "hand"];

#[cfg(test)]
mod tests;
