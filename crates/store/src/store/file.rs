//! File mode: the ledger document in one file, updated in place atomically (written to a
//! temporary file beside it, synced, and renamed over it), so a crash leaves the old or the
//! new ledger, never a mix; writers hold `<file>.lock` from comparing the file to renaming.
//!
//! A ledger path that is a symbolic link (or a chain of them) is written through: the link is
//! resolved to its file when the store is opened, and the lock, the temporary file and the
//! rename are beside that file, so the link stays a link, the link and its target show the
//! same ledger, and writers through either path take the same lock. A ledger file with more
//! than one hard link is refused before anything is written (exit 1): a rename replaces one
//! name only, and the other would keep the old ledger.

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
    /// Record key (`<kind>:<id>`) → row position, built when first asked for (an import of
    /// thousands of Inspect samples asks once per sample) and dropped when the ledger changes.
    records: Option<foldhash::HashMap<String, usize>>,
    /// The bytes and the ledger the last write replaced, kept until the next write or the
    /// store's drop: a caller about to exit may leak the store (the import does) instead of
    /// freeing the replaced ledger's rows one allocation at a time (1,000 rows of twenty
    /// members were 1% of an import's instructions).
    retired: Option<(Vec<u8>, Ledger)>,
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
            path: resolve_ledger_path(ledger)?,
            max_input_bytes,
            bytes,
            ledger: parsed,
            records: None,
            retired: None,
        })
    }

    /// The ledger as last read or written.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The next ledger's bytes and document: this one's rows with the change's in their places
    /// (every row of a change was found scheduled when it was checked).
    fn next(&self, change: &Change) -> Result<(Vec<u8>, Ledger)> {
        let replaced: HashMap<usize, &Row> = (change.rows.iter())
            .filter_map(|w| Some((self.decl.schedule_position(w.row.schedule_id())?, &w.row)))
            .collect();
        let bytes = self.ledger.canonical_replacing(&self.decl, &replaced);
        // The resulting ledger must pass every check of the report, under the same input bound
        // the next reader will hold it to (a ledger written over it could not be read back).
        // When that is proved from what is already checked, the bytes are not parsed again;
        // otherwise the parse decides, names every fault, and gives the store's next ledger.
        if let Some(next) = self.next_proved(&bytes, &replaced) {
            return Ok((bytes, next));
        }
        let next = Ledger::parse(&self.decl, &bytes, self.max_input_bytes)
            .map_err(|e| e.context("the resulting ledger"))?;
        Ok((bytes, next))
    }

    /// The next ledger without reading `bytes` back, when they are proved to be a ledger the
    /// report's checks pass under the input bound; `None` leaves it to the parse. Every row
    /// of `bytes` is a checked [`Row`] (the unchanged ones passed when this ledger was read,
    /// under the same declaration; a change's rows are built only by the row checks), in
    /// schedule order, one per position, below the same header; the canonical bytes are
    /// valid UTF-8 and strict JSON (serde_json writes finite numbers and escaped strings, a
    /// map has no duplicate key). What is left to prove is what only the bytes or the whole
    /// ledger show: the length against the input bound, the nesting of each changed row
    /// against the depth limit (a row is three containers deep: the document, `rows`, the
    /// row), and that no record fills two rows (group 7; the admission decided it already,
    /// and it is checked here again rather than assumed). This ledger passed group 7 when it
    /// was read, so when its records are indexed (as the admission's question asked), only
    /// the changed rows' records are compared: with each other, and with the index, where a
    /// record may be held only by the row the change replaces.
    fn next_proved(&self, bytes: &[u8], replaced: &HashMap<usize, &Row>) -> Option<Ledger> {
        if bytes.len() as u64 > self.max_input_bytes {
            return None;
        }
        let rows = &self.ledger.rows;
        if rows.len() != self.decl.schedule_len() {
            return None;
        }
        for row in replaced.values() {
            let deepest = (row.fields().values())
                .map(|v| 1 + nesting(v))
                .max()
                .unwrap_or(1);
            if 2 + deepest > crate::json::MAX_DEPTH {
                return None;
            }
        }
        let mut next = rows.clone();
        for (&i, row) in replaced {
            *next.get_mut(i)? = Row::clone(row);
        }
        if let Some(index) = &self.records {
            let mut keys = std::collections::HashSet::with_capacity(replaced.len());
            for (&i, row) in replaced {
                if let Some(key) = row.native_record().map(|n| n.key()) {
                    if index.get(&key).is_some_and(|&at| at != i) || !keys.insert(key) {
                        return None;
                    }
                }
            }
        } else {
            let mut records = std::collections::HashSet::with_capacity(next.len());
            for row in &next {
                if let Some(n) = row.native_record() {
                    if !records.insert((n.kind, n.id)) {
                        return None;
                    }
                }
            }
        }
        Some(Ledger {
            declaration_id: self.ledger.declaration_id.clone(),
            declaration_sha256: self.ledger.declaration_sha256.clone(),
            rows: next,
        })
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
        // `<kind>:<id>`: a checked row's kind is one of a few words without `:`, so the key
        // names one (kind, id) pair and a key without `:` names none.
        if !key.contains(':') {
            return Ok(None);
        }
        let ledger = &self.ledger;
        let index = self.records.get_or_insert_with(|| {
            let mut m = foldhash::HashMap::default();
            for (i, r) in ledger.rows.iter().enumerate() {
                if let Some(n) = r.native_record() {
                    m.entry(n.key()).or_insert(i);
                }
            }
            m
        });
        Ok(index
            .get(key)
            .map(|&i| format!("row {}", self.ledger.rows[i].schedule_id())))
    }

    fn write(&mut self, change: &Change) -> std::result::Result<(), WriteError> {
        let (bytes, next) = self.next(change)?;
        // Compare-and-swap on the file's bytes, under its lock: another writer may have
        // replaced it, and none can between the comparison and the rename.
        let _lock = Lock::take(&self.path)?;
        let current = holds(&self.path, &self.bytes)
            .map_err(|e| Error::failed(format!("{}: {e}", self.path.display())))?;
        if !current {
            return Err(WriteError::Moved);
        }
        write_atomically(&self.path, &bytes)?;
        let bytes = std::mem::replace(&mut self.bytes, bytes);
        self.retired = Some((bytes, std::mem::replace(&mut self.ledger, next)));
        self.records = None;
        Ok(())
    }

    fn rehearse(&mut self, change: &Change) -> Result<Option<String>> {
        self.next(change).map(|_| None)
    }

    fn reload(&mut self) -> Result<()> {
        let bytes = crate::json::read_bounded(&self.path, self.max_input_bytes)?;
        self.ledger = Ledger::parse(&self.decl, &bytes, self.max_input_bytes)
            .map_err(|e| e.context(self.path.display()))?;
        self.bytes = bytes;
        self.records = None;
        Ok(())
    }
}

/// How many arrays and objects deep `v` is (0 for a scalar).
fn nesting(v: &serde_json::Value) -> usize {
    match v {
        serde_json::Value::Array(a) => 1 + a.iter().map(nesting).max().unwrap_or(0),
        serde_json::Value::Object(m) => 1 + m.values().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
}

/// The file a ledger path names: a symbolic link resolved (every link of a chain) to its
/// target, which must be a regular file with one name (see the module documentation).
fn resolve_ledger_path(path: &Path) -> Result<PathBuf> {
    let fail = |e: std::io::Error| Error::failed(format!("{}: {e}", path.display()));
    let link = std::fs::symlink_metadata(path).map_err(fail)?;
    let target = if link.file_type().is_symlink() {
        std::fs::canonicalize(path).map_err(fail)?
    } else {
        path.to_owned()
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(&target).map_err(fail)?;
        if meta.is_file() && meta.nlink() > 1 {
            return Err(Error::failed_with_hint(
                format!(
                    "{}: the ledger file is a hard link ({} names for one file): writing it renames a new file over one name, and the others would keep the old ledger",
                    path.display(),
                    meta.nlink()
                ),
                "keep one name for the ledger file (a symbolic link to it is written through)",
            ));
        }
    }
    Ok(target)
}

/// A ledger file's lock, `<file>.lock` beside it (Git's convention for its own files): created
/// only if it does not exist, removed when dropped. Writers hold it from comparing the file's
/// bytes to renaming the new file over it, so two writers cannot both compare, then both rename.
///
/// Written here rather than taken with gix's `gix::lock::Marker`, which does the same (an
/// exclusive create of `<file>.lock`, removed on drop) and adds nothing the tool uses (its
/// removal on a signal needs gix's signal handlers, which the tool does not install). Tried:
/// the held case reads the same, but any other failure (no such directory, no permission)
/// comes as tempfile's `<error> at path "<lock>"`, the lock named twice in "cannot create the
/// lock file", and the text may not change.
struct Lock(PathBuf);

impl Lock {
    fn path_of(path: &Path) -> PathBuf {
        let mut name = path.file_name().unwrap_or_default().to_owned();
        name.push(".lock");
        path.with_file_name(name)
    }

    fn take(path: &Path) -> std::result::Result<Lock, WriteError> {
        let lock = Self::path_of(path);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)
        {
            Ok(_) => Ok(Lock(lock)),
            // Held: another writer is between its comparison and its rename (try again), or a
            // killed one left it (named at the retry bound).
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Err(WriteError::Locked(Error::failed_with_hint(
                    format!("cannot update {}: its lock file {} exists", path.display(), lock.display()),
                    format!("another git-ledger seems to be writing this ledger; if none is, a killed one left the lock behind: remove {} and try again", lock.display()),
                )))
            }
            Err(e) => Err(WriteError::Other(Error::failed(format!(
                "{}: cannot create the lock file: {e}",
                lock.display()
            )))),
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Whether the file at `path` holds exactly `bytes`: what comparing `std::fs::read(path)` with
/// them says (and the same errors), read a stretch at a time into one buffer instead of into
/// a copy of the whole file (a second ledger's size of memory per write).
fn holds(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 64 << 10];
    let mut at = 0;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => return Ok(at == bytes.len()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        match bytes.get(at..at + n) {
            Some(ours) if *ours == buf[..n] => at += n,
            // Longer than `bytes`, or different: read no further.
            _ => return Ok(false),
        }
    }
}

/// Replace `path` with `bytes` atomically: a temporary file in the same directory, synced,
/// then renamed over the original.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    // A symbolic link is written through (its target replaced), never replaced by a file.
    let resolved;
    let path = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            resolved = std::fs::canonicalize(path)
                .map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
            resolved.as_path()
        }
        _ => path,
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{checked, complete_pass, declaration, ledger_with, set};
    use serde_json::json;

    fn store(decl: Declaration, ledger: Ledger, max_input_bytes: u64) -> FileStore {
        let bytes = ledger.canonical(&decl);
        FileStore {
            decl,
            path: PathBuf::from("ledger.json"),
            max_input_bytes,
            bytes,
            ledger,
            records: None,
            retired: None,
        }
    }

    /// `holds` answers what comparing the whole file read with `std::fs::read` answers, and
    /// fails with the same error.
    #[test]
    fn a_file_holds_the_bytes_exactly_when_reading_it_whole_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.json");
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut other = big.clone();
        *other.last_mut().unwrap() ^= 1;
        let mut early = big.clone();
        early[10] ^= 1;
        let cases: Vec<(&[u8], &[u8])> = vec![
            (&big, &big),
            (&big, &big[..big.len() - 1]),
            (&big[..big.len() - 1], &big),
            (&big, &other),
            (&big, &early),
            (&big[..65536], &big[..65536]),
            (&big[..65536], &big[..65537]),
            (b"", b""),
            (b"", b"{}"),
            (b"{}", b""),
        ];
        for (file, ours) in cases {
            std::fs::write(&path, file).unwrap();
            let whole = std::fs::read(&path).unwrap() == ours;
            assert_eq!(
                holds(&path, ours).unwrap(),
                whole,
                "{} / {}",
                file.len(),
                ours.len()
            );
        }
        let missing = dir.path().join("missing.json");
        assert_eq!(
            holds(&missing, b"").unwrap_err().to_string(),
            std::fs::read(&missing).unwrap_err().to_string()
        );
        assert_eq!(
            holds(dir.path(), b"").unwrap_err().to_string(),
            std::fs::read(dir.path()).unwrap_err().to_string()
        );
    }

    #[test]
    fn the_next_ledger_proved_is_the_one_the_parse_reads_and_the_rest_is_left_to_the_parse() {
        let decl = declaration();
        let ids: Vec<String> = decl.schedule().map(|e| e.id).collect();
        let before = ledger_with(&decl, &[complete_pass(&decl, &ids[0])]);
        let row = checked(&decl, &complete_pass(&decl, &ids[1]));
        let replaced = HashMap::from([(1, &row)]);
        let s = store(decl.clone(), before.clone(), u64::MAX);
        let bytes = before.canonical_replacing(&decl, &replaced);
        // Proved: exactly the ledger the parse of the bytes gives.
        let proved = s.next_proved(&bytes, &replaced).expect("proved");
        assert_eq!(proved, Ledger::parse(&decl, &bytes, u64::MAX).unwrap());
        assert_eq!(proved.canonical(&decl), bytes);
        // Over the input bound: not proved (the parse names it).
        let tight = store(decl.clone(), before.clone(), bytes.len() as u64 - 1);
        assert!(tight.next_proved(&bytes, &replaced).is_none());
        let at_bound = store(decl.clone(), before.clone(), bytes.len() as u64);
        assert!(at_bound.next_proved(&bytes, &replaced).is_some());
        // A record already filling another row: not proved (group 7, the parse refuses it).
        let mut twice = complete_pass(&decl, &ids[1]);
        set(
            &mut twice,
            json!({"native_record": before.rows[0].fields()["native_record"].clone()}),
        );
        let twice = checked(&decl, &twice);
        let replaced = HashMap::from([(1, &twice)]);
        let bytes = before.canonical_replacing(&decl, &replaced);
        assert!(s.next_proved(&bytes, &replaced).is_none());
        assert!(Ledger::parse(&decl, &bytes, u64::MAX).is_err());
        // The same answers with the ledger's records indexed (the changed rows compared with
        // the index): the record of row 0 again in row 1 is not proved, ...
        let mut s = store(decl.clone(), before.clone(), u64::MAX);
        let key = before.rows[0].native_record().unwrap().key();
        assert_eq!(
            s.record_owner(&key).unwrap(),
            Some(format!("row {}", ids[0]))
        );
        assert!(s.records.is_some());
        assert!(s.next_proved(&bytes, &replaced).is_none());
        // ... nor two changed rows naming one record, ...
        let mut two = complete_pass(&decl, &ids[0]);
        set(
            &mut two,
            json!({"native_record": row.fields()["native_record"].clone()}),
        );
        let two = checked(&decl, &two);
        let replaced = HashMap::from([(0, &two), (1, &row)]);
        let bytes = before.canonical_replacing(&decl, &replaced);
        assert!(s.next_proved(&bytes, &replaced).is_none());
        assert!(Ledger::parse(&decl, &bytes, u64::MAX).is_err());
        // ... while a row replacing the one that holds its record, and a new record, are.
        let again = checked(&decl, &complete_pass(&decl, &ids[0]));
        let replaced = HashMap::from([(0, &again), (1, &row)]);
        let bytes = before.canonical_replacing(&decl, &replaced);
        let proved = s.next_proved(&bytes, &replaced).expect("proved");
        assert_eq!(proved, Ledger::parse(&decl, &bytes, u64::MAX).unwrap());
    }

    #[test]
    fn nesting_counts_containers() {
        assert_eq!(nesting(&json!(1)), 0);
        assert_eq!(nesting(&json!([])), 1);
        assert_eq!(nesting(&json!({"a": [1, {"b": []}]})), 4);
    }
}
