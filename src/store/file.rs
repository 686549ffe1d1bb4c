//! File mode: the ledger document in one file, updated in place atomically (written to a
//! temporary file beside it, synced, and renamed over it), so a crash leaves the old or the
//! new ledger, never a mix.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Change, Store, WriteError};
use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::ledger::{Ledger, Row};

/// A ledger file and its declaration.
pub struct FileStore {
    decl: Declaration,
    path: PathBuf,
    max_input_bytes: u64,
    bytes: Vec<u8>,
    ledger: Ledger,
}

impl FileStore {
    /// Read the declaration and the ledger; a ledger that already fails a check of the report
    /// is refused.
    pub fn open(declaration: &Path, ledger: &Path, max_input_bytes: u64) -> Result<Self> {
        let decl = Declaration::read(declaration, max_input_bytes)?;
        let bytes = crate::json::read_bounded(ledger, max_input_bytes)?;
        let parsed = Ledger::parse(&decl, &bytes, max_input_bytes).map_err(|e| {
            e.context(format!(
                "{} (the ledger already fails a check of the report)",
                ledger.display()
            ))
        })?;
        Ok(FileStore {
            decl,
            path: ledger.to_owned(),
            max_input_bytes,
            bytes,
            ledger: parsed,
        })
    }

    /// The ledger as last read or written.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }
}

impl Store for FileStore {
    fn declaration(&self) -> &Declaration {
        &self.decl
    }

    fn filled(&mut self) -> Result<usize> {
        Ok(self.ledger.filled())
    }

    fn row(&mut self, schedule_id: &str) -> Result<Row> {
        self.ledger
            .row(&self.decl, schedule_id)
            .cloned()
            .ok_or_else(|| {
                Error::refused(format!(
                    "{schedule_id} is not scheduled by declaration {}",
                    self.decl.id
                ))
            })
    }

    fn record_owner(&mut self, key: &str) -> Result<Option<String>> {
        Ok(self
            .ledger
            .rows
            .iter()
            .find(|r| r.native_record().is_some_and(|n| n.key() == key))
            .map(|r| format!("row {}", r.schedule_id())))
    }

    fn write(&mut self, change: &Change) -> std::result::Result<(), WriteError> {
        let mut next = self.ledger.clone();
        let positions: HashMap<&str, usize> = change
            .rows
            .iter()
            .filter_map(|w| {
                Some((
                    w.row.schedule_id(),
                    self.decl.schedule_position(w.row.schedule_id())?,
                ))
            })
            .collect();
        for w in &change.rows {
            next.rows[positions[w.row.schedule_id()]] = w.row.clone();
        }
        let bytes = next.canonical(&self.decl);
        // The resulting ledger must pass every check of the report.
        Ledger::parse(&self.decl, &bytes, u64::MAX)
            .map_err(|e| e.context("the resulting ledger"))?;
        // Compare-and-swap on the file's bytes: another writer may have replaced it.
        let current = std::fs::read(&self.path)
            .map_err(|e| Error::failed(format!("{}: {e}", self.path.display())))?;
        if current != self.bytes {
            return Err(WriteError::Moved);
        }
        write_atomically(&self.path, &bytes)?;
        self.bytes = bytes;
        self.ledger = next;
        Ok(())
    }

    fn reload(&mut self) -> Result<()> {
        let bytes = crate::json::read_bounded(&self.path, self.max_input_bytes)?;
        self.ledger = Ledger::parse(&self.decl, &bytes, self.max_input_bytes)
            .map_err(|e| e.context(self.path.display()))?;
        self.bytes = bytes;
        Ok(())
    }
}

/// Replace `path` with `bytes` atomically: a temporary file in the same directory, synced,
/// then renamed over the original.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let fail = |e: std::io::Error| Error::failed(format!("{}: cannot write: {e}", path.display()));
    let mut tmp = tempfile::Builder::new()
        .prefix(".git-ledger-")
        .tempfile_in(dir)
        .map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path).map_err(|e| fail(e.error))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
