//! Ledger stores and the one write path every writer goes through.
//!
//! A [`Store`] holds a ledger state (a file, or a commit on a ledger ref) and can write a
//! [`Change`] on top of the state it read. [`apply`] is the write path of `import`, `put` and
//! `repair` in both modes: build the change from the current state, check every changed row
//! with the admission validator, write, and on a lost race re-read and rebuild a bounded
//! number of times.

use std::sync::Arc;

use crate::admission::{
    self, LedgerChange, LedgerState, RecordEdit, RecordFile, Records, Refusal, RowEdit,
};
use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::ledger::Row;

pub mod file;

/// How many times a writer rebuilds its change after losing a race.
pub const MAX_ATTEMPTS: usize = 64;

/// A native record's bytes and their SHA-256, computed from them when the record is made: the
/// only way to make one, and the bytes never change after, so [`Record::sha256`] is always the
/// hash of [`Record::bytes`]. Shared, not copied: the records an import reads, the rows it
/// converts and the change it writes hold the same bytes, hashed once (the admission compares
/// the row's `native_record.sha256` with this hash, as it compared it with the bytes hashed
/// again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    bytes: Arc<[u8]>,
    sha256: Arc<str>,
}

impl Record {
    /// The record of `bytes`, hashed.
    pub fn new(bytes: impl Into<Arc<[u8]>>) -> Record {
        let bytes = bytes.into();
        let sha256 = crate::sha256_hex(&bytes).into();
        Record { bytes, sha256 }
    }
    /// The record's bytes (the record file's).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    /// The SHA-256 of [`Record::bytes`], 64 lowercase hex digits.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
}

/// A new state of one row, with the native record that justifies it (for a filled row).
#[derive(Debug, Clone)]
pub struct RowWrite {
    pub row: Row,
    /// The record file (`records/<hh>/<rest>.json` in a ledger ref); `None` for a repair.
    pub record: Option<Record>,
    /// Where the row came from, for messages (`from <path>`).
    pub source: String,
}

/// What kind of write a change is (it decides the commit message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Import,
    Put,
    Repair,
}

/// A change to a ledger: rows in schedule order.
#[derive(Debug, Clone)]
pub struct Change {
    pub kind: ChangeKind,
    pub rows: Vec<RowWrite>,
}

/// Why a write did not happen.
#[derive(Debug)]
pub enum WriteError {
    /// Another writer moved the ledger since it was read: re-read and rebuild.
    Moved,
    /// The ref's lock file could not be taken in time: another process is moving the ref, or
    /// a killed one left its `.lock` file behind. Worth another try; at the retry bound the
    /// error (naming the lock file) is the answer, not "other writers kept winning".
    Locked(Error),
    Other(Error),
}

impl From<Error> for WriteError {
    fn from(e: Error) -> Self {
        WriteError::Other(e)
    }
}

/// A place a ledger state is read from and written to.
pub trait Store {
    /// The declaration the ledger follows.
    fn declaration(&self) -> &Declaration;
    /// The current row of a scheduled attempt.
    fn row(&mut self, schedule_id: &str) -> Result<Row>;
    /// Where record key (`<kind>:<id>`) is already in the ledger (e.g. `row X` or the record
    /// file's path), if it is.
    fn record_owner(&mut self, key: &str) -> Result<Option<String>>;
    /// Write `change` on top of the state last read, atomically.
    fn write(&mut self, change: &Change) -> std::result::Result<(), WriteError>;
    /// Everything [`Store::write`] checks, up to the write itself, and nothing written (a dry
    /// run): the commit message the write would carry (ref mode), `None` for a file.
    fn rehearse(&mut self, change: &Change) -> Result<Option<String>>;
    /// Re-read the current state after a lost race.
    fn reload(&mut self) -> Result<()>;
    /// How many rows hold an attempt in the current state. The default reads every row; a
    /// store that keeps the count (a ledger ref's `Ledger-Filled` trailer, a parsed ledger
    /// file) answers without reading the ledger again.
    fn filled(&mut self) -> Result<usize> {
        let ids: Vec<String> = self
            .declaration()
            .schedule()
            .map(|e| e.id.clone())
            .collect();
        let mut n = 0;
        for id in &ids {
            if !self.row(id)?.is_deferred() {
                n += 1;
            }
        }
        Ok(n)
    }
    /// Where the last write landed, for the command's output (ref mode: the ref, the commit
    /// and the filled count); `None` for a file.
    fn location(&self) -> Option<String> {
        None
    }
}

/// Build a change from the current state with `build`, check it, write it; rebuild on a lost
/// race. Returns the change that was written.
pub fn apply<S: Store + ?Sized>(
    store: &mut S,
    mut build: impl FnMut(&mut S) -> Result<Change>,
) -> Result<Change> {
    // The lock's error, while every attempt so far found the lock held.
    let mut locked = None;
    let mut moved = false;
    for attempt in 0..MAX_ATTEMPTS {
        let change = build(store)?;
        check_change(store, &change)?;
        // Nothing to write (an import whose every Inspect sample is already in the ledger):
        // no commit, no rewritten file.
        if change.rows.is_empty() {
            return Ok(change);
        }
        match store.write(&change) {
            Ok(()) => return Ok(change),
            Err(WriteError::Moved) => moved = true,
            Err(WriteError::Locked(e)) => locked = Some(e),
            Err(WriteError::Other(e)) => return Err(e),
        }
        backoff(attempt);
        store.reload()?;
    }
    // A lock held through every attempt, with nothing moving the ledger, was never released:
    // not contention. A lock that other writers took and released in turn is.
    if let (Some(e), false) = (locked, moved) {
        return Err(e);
    }
    Err(Error::Contended(format!(
        "the ledger moved on each of {MAX_ATTEMPTS} tries (other writers kept winning); nothing was written"
    )))
}

/// What a dry run found: the change [`apply`] would write, the commit message it would carry
/// (ref mode), and how many rows would hold an attempt after it.
#[derive(Debug)]
pub struct Rehearsal {
    pub change: Change,
    pub message: Option<String>,
    pub filled: usize,
}

/// [`apply`] without the write (`--dry-run`): build the change from the current state, check it
/// with the same admission, and run the store's own checks up to the write
/// ([`Store::rehearse`]); nothing is written and no ref moves. A refusal is the refusal the
/// real command would give against the same state.
pub fn rehearse<S: Store + ?Sized>(
    store: &mut S,
    build: impl FnOnce(&mut S) -> Result<Change>,
) -> Result<Rehearsal> {
    let change = build(store)?;
    check_change(store, &change)?;
    let newly = change.rows.iter().filter(|w| w.record.is_some()).count();
    let filled = store.filled()? + newly;
    let message = if change.rows.is_empty() {
        None
    } else {
        store.rehearse(&change)?
    };
    Ok(Rehearsal {
        change,
        message,
        filled,
    })
}

/// After a lost race, wait a little before rebuilding, so that writers that keep colliding
/// spread out: a random pause of up to 2^attempt ms, capped at 50 ms.
fn backoff(attempt: usize) {
    use std::hash::{BuildHasher, Hasher};
    let cap_ms = (1u64 << attempt.min(6)).min(50);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(attempt);
    let micros = h.finish() % (cap_ms * 1000 + 1);
    std::thread::sleep(std::time::Duration::from_micros(micros));
}

/// Check every row of a change against the store's current state, before anything is written:
/// the change reduced to a [`LedgerChange`] (each row's current and new state, each record's
/// bytes hashed) and decided by [`admission::admit`], the one place transitions are refused.
/// Each reason names where the row came from (the record path the writer gave).
pub fn check_change<S: Store + ?Sized>(store: &mut S, change: &Change) -> Result<()> {
    verdict(store, change)?.map(|_| ()).map_err(Error::from)
}

/// [`check_change`]'s verdict before it becomes an [`Error`]: what the step does (its kind and
/// what each row does), or the refusal with every reason as a value. `Err` when the store
/// cannot be read. Whether a row is retried is asked of its rows alone, as the commit validator
/// asks it (`docs/decisions.md`, "One retry question").
pub fn verdict<S: Store + ?Sized>(
    store: &mut S,
    change: &Change,
) -> Result<std::result::Result<admission::Step, Refusal>> {
    let mut rows = Vec::with_capacity(change.rows.len());
    let mut files: Vec<RecordFile> = Vec::new();
    // (Hashed with foldhash: a change's records are many, and SipHash showed in an import.)
    let mut file_ids = foldhash::HashSet::default();
    // Where each record the change names is already in the ledger (asked before deciding, so
    // that the declaration can be borrowed from the store while the change is decided).
    let mut owners = foldhash::HashMap::default();
    for w in &change.rows {
        let before = store.row(w.row.schedule_id())?;
        let key = w.row.native_record().map(|rec| rec.key());
        if let Some(key) = &key {
            if !owners.contains_key(key) {
                let owner = store.record_owner(key)?;
                owners.insert(key.clone(), owner);
            }
        }
        if let (Some(key), Some(record)) = (key, &w.record) {
            let id = admission::record_id(&key);
            // One file per record: a record named by two rows is refused once, as two rows.
            if file_ids.insert(id.clone()) {
                let shown = if w.source.is_empty() {
                    format!("record {key}")
                } else {
                    format!("record {key} ({})", w.source)
                };
                files.push(RecordFile {
                    id,
                    shown,
                    edit: RecordEdit::Added {
                        sha256: Some(record.sha256().to_owned()),
                    },
                });
            }
        }
        rows.push(RowEdit {
            before,
            after: w.row.clone(),
            from: w.source.clone(),
        });
    }
    let model = LedgerChange {
        rows,
        records: Records::Files { files, name: None },
    };
    admission::admit(store.declaration(), &model, &mut Owners(owners))
}

/// The owners of the records a change names, read from the store before it is decided.
struct Owners(foldhash::HashMap<String, Option<String>>);

impl LedgerState for Owners {
    fn record_owner(&mut self, key: &str) -> Result<Option<String>> {
        Ok(self.0.get(key).cloned().flatten())
    }
}
