//! The report of a ledger file (file mode): the file read while the declaration is parsed,
//! its rows checked, classified and dropped on every core, its SHA-256 hashed beside the
//! parse, so that what stays resident is the declaration, a stretch per core and the
//! summaries, never the whole file.

use std::path::Path;

use super::{build_from, LedgerState, Report, Summarise};
use crate::declaration::Declaration;
use crate::error::Result;
use crate::json;
use crate::ledger::Ledger;

/// The report of the ledger file at `ledger_path` against the declaration at `decl_path`,
/// every JSON input bounded by `max` bytes. The declaration's fault, if any, is the one
/// reported; then the ledger's, named by its path.
pub fn from_files(decl_path: &Path, ledger_path: &Path, max: u64) -> Result<Report> {
    // The ledger file is read while the declaration is parsed (neither needs the other;
    // the declaration's fault, if any, is still the one reported).
    let path = ledger_path.to_path_buf();
    // Mapped without being made resident: each stretch is given back once read.
    let reading = std::thread::spawn(move || json::read_streamed(&path, max));
    // Its hash is taken and its schedule checked, each stretch given back once read: the
    // text is not needed again.
    let decl = Declaration::read_released(decl_path, max)?;
    let bytes = reading
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))?;
    // Each row is classified and dropped on the core that parsed and checked it: the
    // report is built from the summaries, never from 100,000 rows held at once.
    // The file's SHA-256 (the state the report names) is hashed beside the parse.
    // Both give back each stretch of a mapped file once read: what stays resident is
    // the declaration, a stretch per core and the summaries, not the file.
    let (rows, sha256) = std::thread::scope(|s| {
        let hashing = s.spawn(|| bytes.sha256_released());
        let release = |r| bytes.release(r);
        let rows = Ledger::parse_kept_releasing(&decl, &bytes, max, &Summarise::new(), &release);
        let sha256 = hashing
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (rows, sha256)
    });
    let rows = rows.map_err(|e| e.context(ledger_path.display()))?;
    // Unmapping 225 MB takes a while: beside the building, not before it.
    Ok(std::thread::scope(|s| {
        s.spawn(move || drop(bytes));
        build_from(&decl, rows, LedgerState::file(sha256))
    }))
}
