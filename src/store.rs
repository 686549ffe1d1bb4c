//! Ledger stores and the one write path every writer goes through.
//!
//! A [`Store`] holds a ledger state (a file, or a commit on a ledger ref) and can write a
//! [`Change`] on top of the state it read. [`apply`] is the write path of `import`, `put` and
//! `repair` in both modes: build the change from the current state, check every changed row
//! with the admission validator, write, and on a lost race re-read and rebuild a bounded
//! number of times.

use std::collections::HashMap;

use crate::admission::{row_transition, RowChange};
use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::ledger::Row;

pub mod file;

/// How many times a writer rebuilds its change after losing a race.
pub const MAX_ATTEMPTS: usize = 64;

/// A new state of one row, with the native record that justifies it (for a filled row).
#[derive(Debug, Clone)]
pub struct RowWrite {
    pub row: Row,
    /// The bytes of the record file (`records/<hh>/<rest>.json` in a ledger ref); `None`
    /// for a repair.
    pub record: Option<Vec<u8>>,
    /// Where the row came from, for messages (`from <path>`).
    pub source: String,
    /// What the commit message says about the row besides its source (an edited score).
    pub notes: Vec<String>,
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
/// the one place a writer's change is refused. A row fills or repairs one scheduled attempt
/// once per change; filling a row that already holds an attempt is a retry; every other
/// transition is [`row_transition`]'s; a record fills one row (not two in this change, not
/// one it already filled), and its bytes hash to the row's `native_record.sha256`. Each
/// reason names where the row came from (the record path the writer gave).
pub fn check_change<S: Store + ?Sized>(store: &mut S, change: &Change) -> Result<()> {
    let mut reasons = crate::error::Reasons::new();
    let mut rows: HashMap<String, &str> = HashMap::new();
    let mut keys: HashMap<String, String> = HashMap::new();
    for w in &change.rows {
        let id = w.row.schedule_id().to_owned();
        let from = if w.source.is_empty() {
            String::new()
        } else {
            format!(" ({})", w.source)
        };
        if let Some(first) = rows.insert(id.clone(), &w.source) {
            reasons.push(format!(
                "row {id} is filled twice by this change ({first} and {}); one row holds one attempt",
                w.source
            ));
            continue;
        }
        let parent = store.row(&id)?;
        if change.kind != ChangeKind::Repair && !parent.is_deferred() {
            // A retry; its record is checked too (a retry usually brings the same one back).
            reasons.absorb(crate::hand::already_filled(&id, &parent).into_reasons());
        } else {
            // The record rules follow what the transition is, not what the change says.
            match row_transition(store.declaration(), &parent, &w.row, "change") {
                Err(r) => {
                    reasons.extend(r.into_iter().map(|s| s.replacen("change: ", "", 1)));
                    continue;
                }
                Ok(RowChange::Repaired(_)) => continue,
                Ok(RowChange::Filled) => {}
            }
        }
        let Some(rec) = w.row.native_record() else {
            continue;
        };
        let key = rec.key();
        if let Some(other) = keys.insert(key.clone(), id.clone()) {
            reasons.push(format!(
                "record {key}{from} would fill two rows ({other} and {id}); one record cannot fill two rows"
            ));
        } else if let Some(owner) = store.record_owner(&key)? {
            reasons.push(format!(
                "record {key}{from} already filled {owner}; one record cannot fill two rows"
            ));
        }
        match &w.record {
            Some(bytes) if crate::sha256_hex(bytes) == rec.sha256 => {}
            _ => reasons.push(format!(
                "row {id}: native_record.sha256 is not the SHA-256 of the record's bytes{from}"
            )),
        }
    }
    reasons.into_result()
}
