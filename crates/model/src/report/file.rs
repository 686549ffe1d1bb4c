//! The report of a ledger file (file mode): the file read and hashed while the declaration is
//! parsed, its rows checked, classified and dropped on every core beside the hash, so that
//! what stays resident is the declaration, a stretch per core and the summaries, never the
//! whole file.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{build_from, LedgerState, Report, Summarise};
use crate::declaration::Declaration;
use crate::error::Result;
use crate::json;
use crate::ledger::Ledger;

/// The report of the ledger file at `ledger_path` against the declaration at `decl_path`,
/// every JSON input bounded by `max` bytes. The declaration's fault, if any, is the one
/// reported; then the ledger's, named by its path.
pub fn from_files(decl_path: &Path, ledger_path: &Path, max: u64) -> Result<Report> {
    // The ledger file is read and hashed while the declaration is parsed (neither needs the
    // other; the declaration's fault, if any, is still the one reported): the file's SHA-256
    // (the state the report names) is one core's work from the first byte to the last, which
    // nothing can share, so it starts first, and the rows are handed over as soon as the file
    // is mapped.
    let path = ledger_path.to_path_buf();
    let (mapped, input) = std::sync::mpsc::sync_channel(1);
    // Set when the hash is no longer wanted (a fault is returned instead): the thread stops
    // at its next stretch rather than hash the rest of the file for nobody.
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let hashing = std::thread::spawn(move || -> Result<Option<String>> {
        // Mapped without being made resident: each stretch is given back once read (by the
        // hash and by the parse alike: the text is not needed again).
        let bytes = Arc::new(json::read_streamed(&path, max)?);
        let _ = mapped.send(bytes.clone());
        Ok(bytes.sha256_released_unless(&stopped))
    });
    let give_up = |hashing: std::thread::JoinHandle<_>| {
        stop.store(true, Ordering::Relaxed);
        // Its result is not wanted, nor its fault: the fault returned is the one found here.
        let _ = join(hashing);
    };
    let decl = match Declaration::read_released(decl_path, max) {
        Ok(decl) => decl,
        Err(e) => {
            give_up(hashing);
            return Err(e);
        }
    };
    let Ok(bytes) = input.recv() else {
        // Not read: its fault is what the thread returned.
        return Err(join(hashing).expect_err("a ledger not read is a fault"));
    };
    // Each row is classified and dropped on the core that parsed and checked it: the
    // report is built from the summaries, never from 100,000 rows held at once. What stays
    // resident is the declaration, a stretch per core and the summaries, not the file.
    let release = |r| bytes.release(r);
    let rows = match Ledger::parse_kept_releasing(&decl, &bytes, max, &Summarise::new(), &release) {
        Ok(rows) => rows,
        Err(e) => {
            give_up(hashing);
            return Err(e.context(ledger_path.display()));
        }
    };
    let sha256 = join(hashing)?.expect("a hash not stopped is finished");
    // Unmapping 225 MB takes a while: beside the building, not before it (the hash's own
    // handle is gone with its thread).
    Ok(std::thread::scope(|s| {
        s.spawn(move || drop(bytes));
        build_from(&decl, rows, LedgerState::file(sha256))
    }))
}

/// What a thread returned (its panic, resumed here).
fn join<T>(thread: std::thread::JoinHandle<T>) -> T {
    thread
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}
