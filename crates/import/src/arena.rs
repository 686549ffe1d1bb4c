//! Arena stores: one attempt read from `<store>/results.sqlite3`, strictly and read-only.
//!
//! [`open_store`] opens the database with `SQLITE_OPEN_READ_ONLY` (never creating, migrating or
//! write-locking it) and checks its schema; [`read_attempt`] reads one attempt, its case, checks
//! and evidence in one read transaction (one consistent snapshot while a running Arena appends),
//! verifies the case digests and builds the attempt's canonical export, whose SHA-256 the row's
//! `native_record` names.
//!
//! Decisions where import.md is silent:
//! - The five tables must have exactly import.md's columns (a missing or an extra column is
//!   refused: an extra column would either be dropped from the export or be a format the tool
//!   does not know). Other tables are ignored.
//! - `store.schema_version` must be the text `1`; `store.store_id` must be a non-empty text.
//! - A value of the wrong storage class (a BLOB anywhere, a number where text is expected, text
//!   in `elapsed_seconds`, a NULL in a required column, a non-finite REAL) is refused, naming
//!   the column. `elapsed_seconds` must be nonnegative.
//! - Digests are compared as stored text against the lowercase hex SHA-256.
//! - A non-NULL verdict is copied whatever the status; only a NULL verdict is refused.
//! - Concurrency: a WAL store being written (even with an open write transaction) and a
//!   rollback-journal store whose writer holds a RESERVED lock are read at their last commit.
//!   A rollback-journal writer holding the PENDING or EXCLUSIVE lock (while it commits) blocks
//!   readers: the open waits for the busy timeout (default [`DEFAULT_BUSY_TIMEOUT`]), then fails
//!   with "store is locked". The URI `immutable` flag is never used, since a live writer may be
//!   appending.
//! - Nothing in the store directory is ever created or changed. A rollback-journal store is
//!   opened read-only in place (such a reader creates no file and writes none; its locks are
//!   `fcntl` locks). A WAL store (the header says WAL, or a `-wal` file is beside it) is not:
//!   a reader in place creates `-wal` and `-shm` when they are missing (and fails in a
//!   read-only directory), and writes its read marks into an existing `-shm`. It is read from a
//!   private copy instead: the database and its `-wal` are copied into a new temporary
//!   directory (never the `-shm`), the copy taken again while either file changed during the
//!   copy (a writer appending or checkpointing; up to the busy timeout, then "store is being
//!   written"), and the copy opened, where SQLite's WAL recovery keeps exactly the committed
//!   transactions: frames of a transaction still open (spilled before its commit) have no
//!   commit frame and are not read, as a reader in place would not see them either. The
//!   import reads the store as of the copy (a commit after it is not seen); the copy costs
//!   the store's size in the temporary directory while the store is open, and is removed
//!   when it is closed.
//! - Errors: a missing store directory or database, a file that is not SQLite, a locked or
//!   unreadable store are failures (exit 1); a store whose content breaks a rule (empty file,
//!   wrong schema, bad values, digests that differ, a RUNNING attempt) is refused (exit 2).

use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension};
use serde_json::{json, Map, Number, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::options::{analyse, DeclaredProfile, OptionsAnalysis};
use super::{check_reason, evidence_for_mode, relative_to_repo, sha256_hex, Check, Evidence};
use crate::error::{Error, Reasons, Result};
use crate::json::{canonical, parse_strict};
use crate::refusal::Reason;

/// The database file inside a store directory.
pub const DB_FILE: &str = "results.sqlite3";

/// How long opening and reading wait for a writer's lock before failing.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The store schema of import.md (`schema_version` 1), as SQL.
pub const SCHEMA: &str = "\
CREATE TABLE store   (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE cases   (case_id TEXT PRIMARY KEY, base_commit TEXT NOT NULL,
                      required_checks TEXT NOT NULL, oracle_sha256 TEXT NOT NULL,
                      definition TEXT NOT NULL, definition_digest TEXT NOT NULL);
CREATE TABLE attempts (attempt_id TEXT PRIMARY KEY,
                      case_id TEXT NOT NULL REFERENCES cases(case_id),
                      case_digest TEXT NOT NULL, runner_tools_identity TEXT,
                      runner_options TEXT NOT NULL, mode TEXT NOT NULL, verdict TEXT,
                      status TEXT NOT NULL, reason TEXT, plan_approval TEXT,
                      started_at TEXT, finished_at TEXT, elapsed_seconds REAL);
CREATE TABLE checks   (attempt_id TEXT NOT NULL, name TEXT NOT NULL, ok INTEGER NOT NULL,
                       PRIMARY KEY (attempt_id, name));
CREATE TABLE evidence (attempt_id TEXT NOT NULL, ref TEXT NOT NULL);
";

const STORE_COLUMNS: &[&str] = &["key", "value"];
const CASE_COLUMNS: &[&str] = &[
    "case_id",
    "base_commit",
    "required_checks",
    "oracle_sha256",
    "definition",
    "definition_digest",
];
const ATTEMPT_COLUMNS: &[&str] = &[
    "attempt_id",
    "case_id",
    "case_digest",
    "runner_tools_identity",
    "runner_options",
    "mode",
    "verdict",
    "status",
    "reason",
    "plan_approval",
    "started_at",
    "finished_at",
    "elapsed_seconds",
];
const CHECK_COLUMNS: &[&str] = &["attempt_id", "name", "ok"];
const EVIDENCE_COLUMNS: &[&str] = &["attempt_id", "ref"];

/// An Arena store opened read-only, its schema checked.
#[derive(Debug)]
pub struct ArenaStore {
    dir: PathBuf,
    db_path: PathBuf,
    conn: Connection,
    store_id: String,
    busy_timeout: Duration,
    /// The private copy a WAL store is read from (after `conn`: dropped once it is closed).
    _copy: Option<tempfile::TempDir>,
}

impl ArenaStore {
    /// The store directory, as given.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The database file, `<dir>/results.sqlite3`.
    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// The store's `store_id`.
    pub fn store_id(&self) -> &str {
        &self.store_id
    }
}

/// One case row as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArenaCase {
    /// `case_id`.
    pub case_id: String,
    /// `base_commit`, as stored.
    pub base_commit: String,
    /// `required_checks`, parsed from its JSON text.
    pub required_checks: Vec<String>,
    /// `oracle_sha256`, as stored.
    pub oracle_sha256: String,
    /// `definition`, the stored text.
    pub definition: String,
    /// `definition_digest`, as stored (verified against `definition`).
    pub definition_digest: String,
}

/// One finished attempt, with its case, checks, evidence and canonical export.
#[derive(Debug, Clone, PartialEq)]
pub struct ArenaAttempt {
    /// The store directory, as given.
    pub store_dir: PathBuf,
    /// The store's `store_id`.
    pub store_id: String,
    /// `attempt_id`.
    pub attempt_id: String,
    /// `case_id`.
    pub case_id: String,
    /// `case_digest`: the definition digest the attempt ran against.
    pub case_digest: String,
    /// `runner_tools_identity`, as stored.
    pub runner_tools_identity: Option<String>,
    /// `runner_options`, parsed from its JSON text.
    pub runner_options: Vec<String>,
    /// `mode`, as stored.
    pub mode: String,
    /// `verdict`: the native outcome (never NULL here).
    pub verdict: String,
    /// `status`: the native status.
    pub status: String,
    /// `reason`, as stored.
    pub reason: Option<String>,
    /// `plan_approval`, as stored.
    pub plan_approval: Option<String>,
    /// `started_at`, as stored.
    pub started_at: Option<String>,
    /// `finished_at`, as stored.
    pub finished_at: Option<String>,
    /// `elapsed_seconds`, as stored (REAL as a float).
    pub elapsed_seconds: Option<Number>,
    /// The attempt's case.
    pub case: ArenaCase,
    /// Its checks, by name (byte order).
    pub checks: Vec<Check>,
    /// Its evidence references, in rowid order.
    pub evidence: Vec<String>,
    /// The canonical JSON export of the attempt.
    pub export: Vec<u8>,
    /// SHA-256 of the export (lowercase hex).
    pub export_sha256: String,
}

/// Open the store in `dir` read-only with the default busy timeout.
pub fn open_store(dir: &Path) -> Result<ArenaStore> {
    open_store_with(dir, DEFAULT_BUSY_TIMEOUT)
}

/// Open the store in `dir` read-only, waiting at most `busy_timeout` for a writer's lock.
pub fn open_store_with(dir: &Path, busy_timeout: Duration) -> Result<ArenaStore> {
    let db_path = dir.join(DB_FILE);
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(Error::failed(format!(
                "{}: not a directory (an Arena store is a directory holding {DB_FILE})",
                dir.display()
            )))
        }
        Err(e) => return Err(Error::failed(format!("{}: {e}", dir.display()))),
    }
    let meta = match std::fs::metadata(&db_path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let message = format!("{}: no {DB_FILE}: not an Arena store", dir.display());
            // Another harness's record directory: say which flag reads it.
            return Err(
                if dir.join("result.json").is_file() || dir.join("attempt.json").is_file() {
                    Error::failed_with_hint(
                    message,
                    "it holds a result.json or attempt.json: a scenario run's evidence directory (--scenario <ID> <DIR>) or a Harbor trial (--harbor <DIR>), not an Arena store",
                )
                } else {
                    Error::failed(message)
                },
            );
        }
        Err(e) => return Err(Error::failed(format!("{}: {e}", db_path.display()))),
    };
    if !meta.is_file() {
        return Err(Error::failed(format!(
            "{}: not a regular file",
            db_path.display()
        )));
    }
    if meta.len() == 0 {
        return Err(Error::refused(
            crate::refusal::Reason::new("empty file, not an Arena store").at(db_path.display()),
        ));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    // A database reached through a symbolic link keeps its `-wal` beside the file the link
    // points to, where SQLite looks for it: judge and copy that one, not a `-wal` beside the
    // link (which would read the store without its committed, not yet checkpointed
    // transactions).
    let real_db = std::fs::canonicalize(&db_path).unwrap_or_else(|_| db_path.clone());
    let copy = if is_wal_store(&real_db)? {
        Some(private_copy(&real_db, busy_timeout)?)
    } else {
        None
    };
    let open_path = match &copy {
        Some(c) => c.path().join(DB_FILE),
        None => real_db,
    };
    let conn = Connection::open_with_flags(&open_path, flags)
        .map_err(|e| sql_error(&db_path, busy_timeout, e))?;
    conn.busy_timeout(busy_timeout)
        .map_err(|e| sql_error(&db_path, busy_timeout, e))?;
    let store_id = {
        let tx = conn
            .unchecked_transaction()
            .map_err(|e| sql_error(&db_path, busy_timeout, e))?;
        check_schema(&tx, &db_path, busy_timeout)?
    };
    Ok(ArenaStore {
        dir: dir.to_path_buf(),
        db_path,
        conn,
        store_id,
        busy_timeout,
        _copy: copy,
    })
}

/// The `-wal` file beside a database.
fn wal_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push("-wal");
    PathBuf::from(p)
}

/// Whether a database is in WAL mode: its header's read and write versions are 2 (SQLite's
/// file format, bytes 18 and 19), or a `-wal` file is beside it.
fn is_wal_store(db: &Path) -> Result<bool> {
    use std::io::Read;
    let mut header = [0u8; 20];
    let mut f = std::fs::File::open(db)
        .map_err(|e| Error::failed(format!("{}: cannot read the store: {e}", db.display())))?;
    let n = f
        .read(&mut header)
        .map_err(|e| Error::failed(format!("{}: cannot read the store: {e}", db.display())))?;
    if n == header.len() && header[18] == 2 && header[19] == 2 {
        return Ok(true);
    }
    Ok(wal_path(db).exists())
}

/// What identifies one state of a file: size, modification time and inode (`None`: absent).
fn file_state(p: &Path) -> Result<Option<(u64, std::time::SystemTime, u64)>> {
    match std::fs::metadata(p) {
        Ok(m) => {
            #[cfg(unix)]
            let ino = std::os::unix::fs::MetadataExt::ino(&m);
            #[cfg(not(unix))]
            let ino = 0;
            let mtime = m
                .modified()
                .map_err(|e| Error::failed(format!("{}: {e}", p.display())))?;
            Ok(Some((m.len(), mtime, ino)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::failed(format!("{}: {e}", p.display()))),
    }
}

/// Copy a WAL store's database and `-wal` into a new temporary directory, again while either
/// changed during the copy (see the module documentation). Nothing beside `db` is written.
fn private_copy(db: &Path, busy_timeout: Duration) -> Result<tempfile::TempDir> {
    let wal = wal_path(db);
    let deadline = std::time::Instant::now() + busy_timeout;
    let fail = |what: &Path, e: std::io::Error| {
        Error::failed(format!("{}: cannot copy the store: {e}", what.display()))
    };
    loop {
        let before = (file_state(db)?, file_state(&wal)?);
        let tmp = tempfile::Builder::new()
            .prefix("git-ledger-arena-")
            .tempdir()
            .map_err(|e| Error::failed(format!("cannot make a temporary directory: {e}")))?;
        let copied = std::fs::copy(db, tmp.path().join(DB_FILE))
            .map_err(|e| fail(db, e))
            .and_then(|_| match before.1 {
                Some(_) => std::fs::copy(&wal, tmp.path().join(format!("{DB_FILE}-wal")))
                    .map(|_| ())
                    .or_else(|e| match e.kind() {
                        std::io::ErrorKind::NotFound => Ok(()), // checkpointed away: again
                        _ => Err(fail(&wal, e)),
                    }),
                None => Ok(()),
            });
        copied?;
        let after = (file_state(db)?, file_state(&wal)?);
        if before == after {
            return Ok(tmp);
        }
        if std::time::Instant::now() >= deadline {
            return Err(Error::failed_with_hint(
                format!(
                    "{}: store is being written (it changed while it was copied, for {} ms)",
                    db.display(),
                    busy_timeout.as_millis()
                ),
                "retry once the writer has committed",
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A SQLite error as the failure a user can act on.
fn sql_error(db: &Path, busy_timeout: Duration, e: rusqlite::Error) -> Error {
    let code = match &e {
        rusqlite::Error::SqliteFailure(f, _) => Some(f.code),
        _ => None,
    };
    match code {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Error::failed_with_hint(
            format!(
                "{}: store is locked by another process (waited {} ms)",
                db.display(),
                busy_timeout.as_millis()
            ),
            "retry once the writer has committed",
        ),
        Some(ErrorCode::NotADatabase) => {
            Error::failed(format!("{}: not an SQLite database", db.display()))
        }
        _ => Error::failed(format!("{}: cannot read the store: {e}", db.display())),
    }
}

/// Check the five tables and their columns, `schema_version` and `store_id`; return the id.
fn check_schema(conn: &Connection, db: &Path, timeout: Duration) -> Result<String> {
    let err = |e| sql_error(db, timeout, e);
    let mut reasons = Reasons::new();
    for (table, expected) in [
        ("store", STORE_COLUMNS),
        ("cases", CASE_COLUMNS),
        ("attempts", ATTEMPT_COLUMNS),
        ("checks", CHECK_COLUMNS),
        ("evidence", EVIDENCE_COLUMNS),
    ] {
        let mut stmt = conn
            .prepare("SELECT name FROM pragma_table_info(?1)")
            .map_err(err)?;
        let columns: Vec<String> = stmt
            .query_map([table], |r| r.get::<_, String>(0))
            .map_err(err)?
            .collect::<rusqlite::Result<_>>()
            .map_err(err)?;
        if columns.is_empty() {
            reasons.push(format!("table {table} is missing"));
            continue;
        }
        for c in expected {
            if !columns.iter().any(|have| have == c) {
                reasons.push(format!("table {table} lacks column {c}"));
            }
        }
        for c in &columns {
            if !expected.contains(&c.as_str()) {
                reasons.push(format!("table {table} has unknown column {c}"));
            }
        }
    }
    let refuse = |reasons: Reasons| {
        Error::Refused(reasons)
            .context("not an Arena store")
            .context(db.display())
    };
    if !reasons.is_empty() {
        return Err(refuse(reasons));
    }
    let mut lookup = |key: &str| -> Result<Option<String>> {
        let v = conn
            .query_row("SELECT value FROM store WHERE key = ?1", [key], |r| {
                Ok(match r.get_ref(0)? {
                    ValueRef::Text(t) => std::str::from_utf8(t).ok().map(str::to_owned),
                    _ => None,
                })
            })
            .optional()
            .map_err(err)?;
        match v {
            None => {
                reasons.push(format!("store has no {key}"));
                Ok(None)
            }
            Some(None) => {
                reasons.push(format!("store {key} is not UTF-8 text"));
                Ok(None)
            }
            Some(Some(s)) => Ok(Some(s)),
        }
    };
    let version = lookup("schema_version")?;
    let store_id = lookup("store_id")?;
    if let Some(v) = &version {
        if v != "1" {
            reasons.push(format!("store schema_version is {v:?}, not \"1\""));
        }
    }
    if store_id.as_deref() == Some("") {
        reasons.push("store store_id is empty");
    }
    match store_id {
        Some(id) if reasons.is_empty() => Ok(id),
        _ => Err(refuse(reasons)),
    }
}

/// Read one attempt with its case, checks and evidence, in one snapshot. Refuses a missing,
/// RUNNING or verdict-less attempt, a case whose digests differ, and malformed values.
pub fn read_attempt(store: &ArenaStore, attempt_id: &str) -> Result<ArenaAttempt> {
    let Snapshot {
        attempt,
        case_id,
        case,
        checks,
        evidence,
    } = read_snapshot(store, attempt_id)?;
    let mut reasons = Reasons::new();
    // The attempt's own state first: a running attempt is refused before anything else.
    let (verdict, status) =
        finished_state(&attempt, &mut reasons).map_err(|e| in_attempt(store, attempt_id, e))?;
    let columns = AttemptColumns::read(&attempt, &mut reasons);
    let case_columns = CaseColumns::read(&case, &mut reasons);
    check_case_digests(
        &case_id,
        columns.case_digest.as_deref(),
        &case_columns,
        &mut reasons,
    );
    let checks = read_checks(checks, &mut reasons);
    let evidence = read_evidence(evidence, &mut reasons);
    reasons.extend(attempt.problems());
    reasons.extend(case.problems());
    if !reasons.is_empty() {
        return Err(in_attempt(store, attempt_id, Error::Refused(reasons)));
    }

    let export = export(store, &attempt, &case, &checks, &evidence);
    let internal = || {
        Error::failed(format!(
            "{}: attempt {attempt_id}: inconsistent store row",
            store.db_path.display()
        ))
    };
    Ok(ArenaAttempt {
        store_dir: store.dir.clone(),
        store_id: store.store_id.clone(),
        attempt_id: attempt_id.to_owned(),
        case_id,
        case_digest: columns.case_digest.ok_or_else(internal)?,
        runner_tools_identity: columns.runner_tools_identity,
        runner_options: columns.runner_options.ok_or_else(internal)?,
        mode: columns.mode.ok_or_else(internal)?,
        verdict: verdict.ok_or_else(internal)?,
        status: status.ok_or_else(internal)?,
        reason: columns.reason,
        plan_approval: columns.plan_approval,
        started_at: columns.started_at,
        finished_at: columns.finished_at,
        elapsed_seconds: columns.elapsed_seconds,
        case: case_columns.into_case(internal)?,
        checks,
        evidence,
        export_sha256: sha256_hex(&export),
        export,
    })
}

/// A reason about the attempt is found in the store, at the attempt.
fn in_attempt(store: &ArenaStore, attempt_id: &str, e: Error) -> Error {
    e.context(format!("attempt {attempt_id}"))
        .context(store.db_path.display())
}

/// What one read transaction saw of an attempt: its row, its case's row, and the raw cells of
/// its checks and evidence.
struct Snapshot {
    attempt: Row,
    case_id: String,
    case: Row,
    checks: Vec<(Cell, Cell)>,
    evidence: Vec<Cell>,
}

/// One read transaction: one snapshot of the attempt, its case, checks and evidence. It ends
/// (and releases the shared lock) when `tx` drops on return. A missing attempt, an attempt
/// without a text `case_id` and a case not in the store are refused here.
fn read_snapshot(store: &ArenaStore, attempt_id: &str) -> Result<Snapshot> {
    let err = |e| sql_error(&store.db_path, store.busy_timeout, e);
    let tx = store.conn.unchecked_transaction().map_err(err)?;
    let select = |table: &str, columns: &[&str], key: &str, id: &str| -> Result<Option<Row>> {
        let sql = format!(
            "SELECT {} FROM {table} WHERE {key} = ?1",
            columns.join(", ")
        );
        let cells = tx
            .query_row(&sql, [id], |r| {
                (0..columns.len())
                    .map(|i| Cell::from_ref(r.get_ref(i)?))
                    .collect::<rusqlite::Result<Vec<Cell>>>()
            })
            .optional()
            .map_err(err)?;
        Ok(cells.map(|cells| Row {
            table: table.to_owned(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            cells,
        }))
    };
    let Some(attempt) = select("attempts", ATTEMPT_COLUMNS, "attempt_id", attempt_id)? else {
        return Err(in_attempt(
            store,
            attempt_id,
            Error::refused("no such attempt in the store"),
        ));
    };
    let mut reasons = Reasons::new();
    let Some(case_id) = attempt.text(&mut reasons, "case_id", true) else {
        reasons.extend(attempt.problems());
        return Err(in_attempt(store, attempt_id, Error::Refused(reasons)));
    };
    let Some(case) = select("cases", CASE_COLUMNS, "case_id", &case_id)? else {
        return Err(in_attempt(
            store,
            attempt_id,
            Error::refused(format!("names case {case_id}, which is not in the store")),
        ));
    };
    let checks: Vec<(Cell, Cell)> = tx
        .prepare("SELECT name, ok FROM checks WHERE attempt_id = ?1")
        .and_then(|mut stmt| {
            stmt.query_map([attempt_id], |r| {
                Ok((
                    Cell::from_ref(r.get_ref(0)?)?,
                    Cell::from_ref(r.get_ref(1)?)?,
                ))
            })?
            .collect()
        })
        .map_err(err)?;
    let evidence: Vec<Cell> = tx
        .prepare("SELECT ref FROM evidence WHERE attempt_id = ?1 ORDER BY rowid")
        .and_then(|mut stmt| {
            stmt.query_map([attempt_id], |r| Cell::from_ref(r.get_ref(0)?))?
                .collect()
        })
        .map_err(err)?;
    Ok(Snapshot {
        attempt,
        case_id,
        case,
        checks,
        evidence,
    })
}

/// The attempt's `verdict` and `status`, refusing an attempt that has not finished (a NULL
/// verdict: RUNNING, or another status); an empty verdict is a reason.
fn finished_state(
    attempt: &Row,
    reasons: &mut Reasons,
) -> Result<(Option<String>, Option<String>)> {
    let verdict = attempt.text(reasons, "verdict", false);
    let status = attempt.text(reasons, "status", true);
    if matches!(attempt.get("verdict"), Cell::Null) {
        let why = match &status {
            Some(s) if s == "RUNNING" => {
                "is still RUNNING (verdict NULL): import it once it finishes".to_owned()
            }
            Some(s) => format!("has a NULL verdict with status {s}, not RUNNING"),
            None => format!(
                "has a NULL verdict with status {}, not RUNNING",
                attempt.get("status").describe()
            ),
        };
        return Err(Error::refused(why));
    }
    if verdict.as_deref() == Some("") {
        reasons.push("attempts.verdict is empty");
    }
    Ok((verdict, status))
}

/// The attempt's other columns, each read and checked (`None`: an optional NULL, or a value
/// whose reason was pushed).
struct AttemptColumns {
    case_digest: Option<String>,
    runner_tools_identity: Option<String>,
    runner_options: Option<Vec<String>>,
    mode: Option<String>,
    reason: Option<String>,
    plan_approval: Option<String>,
    started_at: Option<String>,
    finished_at: Option<String>,
    elapsed_seconds: Option<Number>,
}

impl AttemptColumns {
    /// Read from the attempt's row, in column order, every fault a reason.
    fn read(attempt: &Row, reasons: &mut Reasons) -> AttemptColumns {
        let case_digest = attempt.text(reasons, "case_digest", true);
        let runner_tools_identity = attempt.text(reasons, "runner_tools_identity", false);
        let runner_options = attempt
            .text(reasons, "runner_options", true)
            .and_then(|t| string_list(&t, "attempts.runner_options", reasons));
        let mode = attempt.text(reasons, "mode", true);
        let reason = attempt.text(reasons, "reason", false);
        let plan_approval = attempt.text(reasons, "plan_approval", false);
        let started_at = attempt.text(reasons, "started_at", false);
        let finished_at = attempt.text(reasons, "finished_at", false);
        let elapsed_seconds = match attempt.get("elapsed_seconds") {
            Cell::Null => None,
            Cell::Value(Value::Number(n)) if n.as_f64().is_some_and(|f| f >= 0.0) => {
                Some(n.clone())
            }
            other => {
                reasons.push(format!(
                    "attempts.elapsed_seconds must be a nonnegative number, not {}",
                    other.describe()
                ));
                None
            }
        };
        AttemptColumns {
            case_digest,
            runner_tools_identity,
            runner_options,
            mode,
            reason,
            plan_approval,
            started_at,
            finished_at,
            elapsed_seconds,
        }
    }
}

/// The case's columns, each read and checked (`None`: a value whose reason was pushed).
struct CaseColumns {
    case_id: Option<String>,
    base_commit: Option<String>,
    required_checks: Option<Vec<String>>,
    oracle_sha256: Option<String>,
    definition: Option<String>,
    definition_digest: Option<String>,
}

impl CaseColumns {
    /// Read from the case's row, in column order, every fault a reason.
    fn read(case: &Row, reasons: &mut Reasons) -> CaseColumns {
        CaseColumns {
            case_id: case.text(reasons, "case_id", true),
            base_commit: case.text(reasons, "base_commit", true),
            required_checks: case
                .text(reasons, "required_checks", true)
                .and_then(|t| string_list(&t, "cases.required_checks", reasons)),
            oracle_sha256: case.text(reasons, "oracle_sha256", true),
            definition: case.text(reasons, "definition", true),
            definition_digest: case.text(reasons, "definition_digest", true),
        }
    }

    /// The case, once no reason was found (a column still missing is `internal()`).
    fn into_case(self, internal: impl Fn() -> Error) -> Result<ArenaCase> {
        Ok(ArenaCase {
            case_id: self.case_id.ok_or_else(&internal)?,
            base_commit: self.base_commit.ok_or_else(&internal)?,
            required_checks: self.required_checks.ok_or_else(&internal)?,
            oracle_sha256: self.oracle_sha256.ok_or_else(&internal)?,
            definition: self.definition.ok_or_else(&internal)?,
            definition_digest: self.definition_digest.ok_or_else(&internal)?,
        })
    }
}

/// The case's definition hashes to its `definition_digest`, which is the `case_digest` the
/// attempt ran against: otherwise the definition changed (after the attempt).
fn check_case_digests(
    case_id: &str,
    case_digest: Option<&str>,
    case: &CaseColumns,
    reasons: &mut Reasons,
) {
    if let (Some(def), Some(stored)) = (&case.definition, &case.definition_digest) {
        let computed = sha256_hex(def.as_bytes());
        if computed != *stored {
            reasons.push(
                Reason::new(format!(
                    "its definition hashes to {computed}, not its definition_digest {stored}: \
                     the definition changed"
                ))
                .at(format!("case {case_id}")),
            );
        }
    }
    if let (Some(ran), Some(stored)) = (case_digest, &case.definition_digest) {
        if ran != stored {
            reasons.push(
                Reason::new(format!(
                    "definition_digest {stored} differs from the attempt's case_digest {ran}: \
                     the definition changed after the attempt"
                ))
                .at(format!("case {case_id}")),
            );
        }
    }
}

/// The attempt's checks from their cells (a text name, `ok` 0 or 1), sorted by name in byte
/// order; every other cell a reason.
fn read_checks(raw: Vec<(Cell, Cell)>, reasons: &mut Reasons) -> Vec<Check> {
    let mut checks = Vec::with_capacity(raw.len());
    for (name, ok) in raw {
        let name = match name {
            Cell::Value(Value::String(s)) => s,
            other => {
                reasons.push(format!(
                    "checks.name must be text, not {}",
                    other.describe()
                ));
                continue;
            }
        };
        match ok {
            Cell::Value(Value::Number(n)) if n.as_i64() == Some(0) || n.as_i64() == Some(1) => {
                checks.push(Check {
                    ok: n.as_i64() == Some(1),
                    name,
                })
            }
            other => reasons.push(format!(
                "check {name}: ok must be 0 or 1, not {}",
                other.describe()
            )),
        }
    }
    checks.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    checks
}

/// The attempt's evidence references from their cells, in rowid order; a cell that is not
/// text is a reason.
fn read_evidence(raw: Vec<Cell>, reasons: &mut Reasons) -> Vec<String> {
    let mut evidence = Vec::with_capacity(raw.len());
    for cell in raw {
        match cell {
            Cell::Value(Value::String(s)) => evidence.push(s),
            other => reasons.push(format!(
                "evidence.ref must be text, not {}",
                other.describe()
            )),
        }
    }
    evidence
}

/// The canonical JSON export of an attempt (its row, its case's, its checks and evidence, the
/// store id): the record's bytes.
fn export(
    store: &ArenaStore,
    attempt: &Row,
    case: &Row,
    checks: &[Check],
    evidence: &[String],
) -> Vec<u8> {
    canonical(&json!({
        "attempt": attempt.to_object(),
        "case": case.to_object(),
        "checks": checks.iter().map(Check::to_value).collect::<Vec<_>>(),
        "evidence": evidence,
        "store_id": store.store_id,
    }))
}

/// Parse a stored JSON text as a list of strings, strictly.
fn string_list(text: &str, what: &str, reasons: &mut Reasons) -> Option<Vec<String>> {
    let value = match parse_strict(text.as_bytes()) {
        Ok(v) => v,
        Err(e) => {
            reasons.push(format!("{what} is not valid JSON: {e}"));
            return None;
        }
    };
    let items = match value {
        Value::Array(items) => items,
        other => {
            reasons.push(format!(
                "{what} must be a JSON list of strings, not {}",
                crate::json::type_name(&other)
            ));
            return None;
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        match item {
            Value::String(s) => out.push(s),
            other => {
                reasons.push(format!(
                    "{what}[{i}] must be a string, not {}",
                    crate::json::type_name(&other)
                ));
                return None;
            }
        }
    }
    Some(out)
}

/// One SQLite value: convertible to JSON, or the reason it is not.
#[derive(Debug, Clone)]
enum Cell {
    Null,
    Value(Value),
    Bad(String),
}

impl Cell {
    fn from_ref(v: ValueRef<'_>) -> rusqlite::Result<Cell> {
        Ok(match v {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(i) => Cell::Value(Value::from(i)),
            ValueRef::Real(f) => match Number::from_f64(f) {
                Some(n) => Cell::Value(Value::Number(n)),
                None => Cell::Bad("a non-finite REAL".into()),
            },
            ValueRef::Text(t) => match std::str::from_utf8(t) {
                Ok(s) => Cell::Value(Value::String(s.to_owned())),
                Err(_) => Cell::Bad("text that is not UTF-8".into()),
            },
            ValueRef::Blob(_) => Cell::Bad("a BLOB".into()),
        })
    }

    fn describe(&self) -> String {
        match self {
            Cell::Null => "NULL".into(),
            Cell::Value(Value::String(s)) => format!("text {s:?}"),
            Cell::Value(Value::Number(n)) if n.is_f64() => format!("REAL {n}"),
            Cell::Value(v) => format!("INTEGER {v}"),
            Cell::Bad(what) => what.clone(),
        }
    }
}

/// A row read by column name.
struct Row {
    table: String,
    columns: Vec<String>,
    cells: Vec<Cell>,
}

impl Row {
    fn get(&self, column: &str) -> &Cell {
        self.columns
            .iter()
            .position(|c| c == column)
            .map_or(&Cell::Null, |i| &self.cells[i])
    }

    /// A text column; a NULL is a reason when `required`, any non-text value always is.
    fn text(&self, reasons: &mut Reasons, column: &str, required: bool) -> Option<String> {
        match self.get(column) {
            Cell::Value(Value::String(s)) => Some(s.clone()),
            Cell::Null if !required => None,
            Cell::Bad(_) => None, // reported once by `problems`
            other => {
                reasons.push(format!(
                    "{}.{column} must be text, not {}",
                    self.table,
                    other.describe()
                ));
                None
            }
        }
    }

    /// Every value that cannot be represented in JSON.
    fn problems(&self) -> Vec<String> {
        self.columns
            .iter()
            .zip(&self.cells)
            .filter_map(|(c, cell)| match cell {
                Cell::Bad(what) => Some(format!("{}.{c} holds {what}", self.table)),
                _ => None,
            })
            .collect()
    }

    /// Every column as JSON (NULL as null); only called once `problems` is empty.
    fn to_object(&self) -> Value {
        let mut map = Map::new();
        for (c, cell) in self.columns.iter().zip(&self.cells) {
            let v = match cell {
                Cell::Value(v) => v.clone(),
                Cell::Null | Cell::Bad(_) => Value::Null,
            };
            map.insert(c.clone(), v);
        }
        Value::Object(map)
    }
}

impl ArenaAttempt {
    /// The task this attempt belongs to: `arena/<case_id>`.
    pub fn task_id(&self) -> String {
        format!("arena/{}", self.case_id)
    }

    /// The evidence class its mode implies (an unknown mode is refused).
    pub fn evidence(&self) -> Result<Evidence> {
        evidence_for_mode(&self.mode).map_err(|e| e.context(self.label()))
    }

    fn label(&self) -> String {
        format!("{}#{}", self.store_dir.display(), self.attempt_id)
    }

    /// Refuse a non-PASS attempt without a reason.
    pub fn check_reason(&self) -> Result<()> {
        check_reason(&self.label(), &self.verdict, self.reason.as_deref())
    }

    /// `oracle_checks` for the row: the checks by name.
    pub fn oracle_checks_value(&self) -> Value {
        Value::Array(self.checks.iter().map(Check::to_value).collect())
    }

    /// `spent_budget`: Arena measures none of its declared limits, so every amount is null.
    pub fn spent_budget(&self) -> Value {
        json!({ "cli_invocation_seconds": null, "oracle_seconds": null, "max_iterations": null })
    }

    /// `elapsed_seconds` as stored, or null.
    pub fn elapsed_seconds_value(&self) -> Value {
        self.elapsed_seconds
            .clone()
            .map_or(Value::Null, Value::Number)
    }

    /// The notes of the `decision` interventions: the plan approval, when recorded.
    pub fn decisions(&self) -> Vec<String> {
        self.plan_approval
            .iter()
            .map(|a| format!("benchmark plan approval: {a}"))
            .collect()
    }

    /// Models, efforts and option deviations from `runner_options`.
    pub fn options(&self, declared: &DeclaredProfile, max_iterations: u64) -> OptionsAnalysis {
        analyse(&self.runner_options, declared, Some(max_iterations))
    }

    /// `evidence_refs`: the recorded refs in rowid order, then `<store>#<attempt_id>` (the
    /// store repository-relative when inside `repo_root`).
    pub fn evidence_refs(&self, repo_root: Option<&Path>) -> Vec<String> {
        let mut refs = self.evidence.clone();
        refs.push(format!(
            "{}#{}",
            relative_to_repo(&self.store_dir, repo_root),
            self.attempt_id
        ));
        refs
    }

    /// `native_record`: `{"kind": "arena", "id": "<store_id>/<attempt_id>", "sha256": …}`.
    pub fn native_record(&self) -> Value {
        json!({
            "kind": "arena",
            "id": format!("{}/{}", self.store_id, self.attempt_id),
            "sha256": self.export_sha256,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::store_from_sql;

    const CASE: &str = "sympy-matrix-derivatives";
    const DEFINITION: &str = "{\"brief\": \"différentiate\"}";
    const BASE: &str = "0123456789abcdef0123456789abcdef01234567";

    fn digest() -> String {
        sha256_hex(DEFINITION.as_bytes())
    }

    /// The schema, one case and two attempts: `a1` finished (PASS), `a2` still running.
    fn store_sql() -> String {
        let d = digest();
        format!(
            "{SCHEMA}
            INSERT INTO store VALUES ('store_id', 'store-1'), ('schema_version', '1');
            INSERT INTO cases VALUES ('{CASE}', '{BASE}', '[\"test_a\", \"test_b\"]', 'oraclehash',
                                      '{DEFINITION}', '{d}');
            INSERT INTO attempts VALUES ('a1', '{CASE}', '{d}', NULL, '[\"--provider\", \"p\"]',
                                         'live', 'PASS', 'COMPLETED', NULL, 'alice',
                                         '2026-01-01T00:00:00Z', NULL, 12.5);
            INSERT INTO attempts VALUES ('a2', '{CASE}', '{d}', 'tools', '[]', 'live', NULL,
                                         'RUNNING', NULL, NULL, NULL, NULL, NULL);
            INSERT INTO checks VALUES ('a1', 'test_b', 1), ('a1', 'test_a', 1), ('a2', 'x', 0);
            INSERT INTO evidence VALUES ('a1', 'logs/z.txt'), ('a2', 'other'), ('a1', 'diff/a.patch');
            "
        )
    }

    fn store(extra_sql: &str) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        store_from_sql(tmp.path(), &format!("{}{extra_sql}", store_sql()));
        tmp
    }

    fn read(tmp: &tempfile::TempDir, id: &str) -> Result<ArenaAttempt> {
        read_attempt(&open_store(tmp.path())?, id)
    }

    /// Assert that `r` is refused, one of its reasons found at the store (its file, or the
    /// attempt as `<store>#a1`: a temporary path, not compared), then at `within` (`attempt
    /// a1`), saying `sentence` (whole).
    #[track_caller]
    fn refused_with(r: Result<impl std::fmt::Debug>, within: &[&str], sentence: &str) {
        let reasons = crate::testutil::refusal(r);
        let found = crate::testutil::assert_reason!(reasons, sentence = sentence);
        assert!(
            found.place.len() == within.len() + 1 && found.place[1..] == *within,
            "{found:?}"
        );
    }

    fn failed_with(r: Result<impl std::fmt::Debug>, needle: &str) {
        let e = r.unwrap_err();
        assert_eq!(e.exit_code(), 1, "{e}");
        assert!(e.to_string().contains(needle), "{needle:?} not in {e}");
    }

    // ---- opening ------------------------------------------------------------------------------

    #[test]
    fn opens_a_valid_store() {
        let tmp = store("");
        let s = open_store(tmp.path()).unwrap();
        assert_eq!(s.store_id(), "store-1");
        assert_eq!(s.dir(), tmp.path());
        assert_eq!(s.db_path(), tmp.path().join(DB_FILE));
    }

    #[test]
    fn missing_store_is_a_failure_and_nothing_is_created() {
        let tmp = tempfile::tempdir().unwrap();
        failed_with(open_store(tmp.path()), "no results.sqlite3");
        assert!(!tmp.path().join(DB_FILE).exists());
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
        failed_with(open_store(&tmp.path().join("nope")), "nope");
        std::fs::write(tmp.path().join("file"), "x").unwrap();
        failed_with(open_store(&tmp.path().join("file")), "not a directory");
        std::fs::create_dir(tmp.path().join(DB_FILE)).unwrap();
        failed_with(open_store(tmp.path()), "not a regular file");
    }

    #[test]
    fn non_sqlite_file_is_a_clear_failure() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join(DB_FILE),
            "this is not a database, just text that is long enough to be read as a header\n"
                .repeat(20),
        )
        .unwrap();
        failed_with(open_store(tmp.path()), "not an SQLite database");
    }

    #[test]
    fn empty_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(DB_FILE), "").unwrap();
        refused_with(
            open_store(tmp.path()),
            &[],
            "empty file, not an Arena store",
        );
    }

    #[test]
    fn an_sqlite_file_without_the_schema_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        store_from_sql(tmp.path(), "CREATE TABLE other (x);");
        let e = open_store(tmp.path()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let r = crate::testutil::refusal(Err::<(), _>(e));
        assert_eq!(r.len(), 5, "{r:?}");
        assert_eq!(r[0].place[1..], ["not an Arena store"], "{r:?}");
        assert_eq!(r[0].sentence, "table store is missing");
    }

    #[test]
    fn missing_and_extra_columns_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let sql = SCHEMA
            .replace("plan_approval TEXT,", "")
            .replace("ref TEXT NOT NULL", "ref TEXT NOT NULL, note TEXT");
        store_from_sql(tmp.path(), &sql);
        let r = crate::testutil::refusal(open_store(tmp.path()));
        assert_eq!(
            r.iter().map(|r| r.sentence.as_str()).collect::<Vec<_>>(),
            [
                "table attempts lacks column plan_approval",
                "table evidence has unknown column note"
            ]
        );
    }

    #[test]
    fn other_tables_are_ignored() {
        let tmp = store("CREATE TABLE logs (x);");
        assert!(open_store(tmp.path()).is_ok());
    }

    #[test]
    fn schema_version_must_be_1() {
        let tmp = store("UPDATE store SET value = '2' WHERE key = 'schema_version';");
        refused_with(
            open_store(tmp.path()),
            &["not an Arena store"],
            "store schema_version is \"2\", not \"1\"",
        );
        let tmp = store("DELETE FROM store WHERE key = 'schema_version';");
        refused_with(
            open_store(tmp.path()),
            &["not an Arena store"],
            "store has no schema_version",
        );
        let tmp = store("UPDATE store SET value = x'31' WHERE key = 'schema_version';");
        refused_with(
            open_store(tmp.path()),
            &["not an Arena store"],
            "store schema_version is not UTF-8 text",
        );
        // An integer 1 is stored as the text '1' under TEXT affinity.
        let tmp = store("UPDATE store SET value = 1 WHERE key = 'schema_version';");
        assert!(open_store(tmp.path()).is_ok());
    }

    #[test]
    fn store_id_must_be_present() {
        let tmp = store("DELETE FROM store WHERE key = 'store_id';");
        refused_with(
            open_store(tmp.path()),
            &["not an Arena store"],
            "store has no store_id",
        );
        let tmp = store("UPDATE store SET value = '' WHERE key = 'store_id';");
        refused_with(
            open_store(tmp.path()),
            &["not an Arena store"],
            "store store_id is empty",
        );
    }

    #[test]
    fn the_connection_is_read_only_and_the_file_unchanged() {
        let tmp = store("");
        let before = std::fs::read(tmp.path().join(DB_FILE)).unwrap();
        let s = open_store(tmp.path()).unwrap();
        read_attempt(&s, "a1").unwrap();
        let e = s
            .conn
            .execute("DELETE FROM attempts", [])
            .unwrap_err()
            .to_string();
        assert!(e.contains("readonly"), "{e}");
        drop(s);
        assert_eq!(std::fs::read(tmp.path().join(DB_FILE)).unwrap(), before);
        assert!(!tmp.path().join("results.sqlite3-journal").exists());
    }

    // ---- reading an attempt -------------------------------------------------------------------

    #[test]
    fn reads_every_column_of_a_finished_attempt() {
        let tmp = store("");
        let a = read(&tmp, "a1").unwrap();
        assert_eq!(a.store_id, "store-1");
        assert_eq!(a.attempt_id, "a1");
        assert_eq!(a.case_id, CASE);
        assert_eq!(a.case_digest, digest());
        assert_eq!(a.runner_tools_identity, None);
        assert_eq!(a.runner_options, vec!["--provider", "p"]);
        assert_eq!(a.mode, "live");
        assert_eq!(a.verdict, "PASS");
        assert_eq!(a.status, "COMPLETED");
        assert_eq!(a.reason, None);
        assert_eq!(a.plan_approval.as_deref(), Some("alice"));
        assert_eq!(a.started_at.as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(a.finished_at, None);
        assert_eq!(a.elapsed_seconds_value(), json!(12.5));
        assert_eq!(
            a.case,
            ArenaCase {
                case_id: CASE.into(),
                base_commit: BASE.into(),
                required_checks: vec!["test_a".into(), "test_b".into()],
                oracle_sha256: "oraclehash".into(),
                definition: DEFINITION.into(),
                definition_digest: digest(),
            }
        );
    }

    #[test]
    fn checks_by_name_and_evidence_in_rowid_order() {
        let tmp = store("INSERT INTO checks VALUES ('a1', 'B_upper', 0), ('a1', 'é', 1);");
        let a = read(&tmp, "a1").unwrap();
        let names: Vec<_> = a.checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["B_upper", "test_a", "test_b", "é"]);
        assert_eq!(
            a.oracle_checks_value(),
            json!([{"name": "B_upper", "ok": false}, {"name": "test_a", "ok": true},
                   {"name": "test_b", "ok": true}, {"name": "é", "ok": true}])
        );
        assert_eq!(a.evidence, vec!["logs/z.txt", "diff/a.patch"]);
    }

    #[test]
    fn the_export_is_canonical_json_of_the_rows() {
        let tmp = store("");
        let a = read(&tmp, "a1").unwrap();
        let d = digest();
        let expected = format!(
            r#"{{
  "attempt": {{
    "attempt_id": "a1",
    "case_digest": "{d}",
    "case_id": "{CASE}",
    "elapsed_seconds": 12.5,
    "finished_at": null,
    "mode": "live",
    "plan_approval": "alice",
    "reason": null,
    "runner_options": "[\"--provider\", \"p\"]",
    "runner_tools_identity": null,
    "started_at": "2026-01-01T00:00:00Z",
    "status": "COMPLETED",
    "verdict": "PASS"
  }},
  "case": {{
    "base_commit": "{BASE}",
    "case_id": "{CASE}",
    "definition": "{{\"brief\": \"différentiate\"}}",
    "definition_digest": "{d}",
    "oracle_sha256": "oraclehash",
    "required_checks": "[\"test_a\", \"test_b\"]"
  }},
  "checks": [
    {{
      "name": "test_a",
      "ok": true
    }},
    {{
      "name": "test_b",
      "ok": true
    }}
  ],
  "evidence": [
    "logs/z.txt",
    "diff/a.patch"
  ],
  "store_id": "store-1"
}}
"#
        );
        assert_eq!(String::from_utf8(a.export.clone()).unwrap(), expected);
        assert_eq!(a.export_sha256, sha256_hex(expected.as_bytes()));
        assert_eq!(
            a.native_record(),
            json!({"kind": "arena", "id": "store-1/a1", "sha256": a.export_sha256})
        );
        // Reading twice gives the same bytes.
        assert_eq!(read(&tmp, "a1").unwrap().export, a.export);
    }

    #[test]
    fn export_keeps_integers_and_reals_apart() {
        // REAL affinity turns an integer into a float; a column without affinity keeps it.
        let tmp = store("UPDATE attempts SET elapsed_seconds = 12 WHERE attempt_id = 'a1';");
        let a = read(&tmp, "a1").unwrap();
        assert!(String::from_utf8(a.export)
            .unwrap()
            .contains("\"elapsed_seconds\": 12.0,"));
        let tmp = tempfile::tempdir().unwrap();
        let sql = store_sql().replace("elapsed_seconds REAL", "elapsed_seconds");
        store_from_sql(tmp.path(), &sql);
        store_from_sql(
            tmp.path(),
            "UPDATE attempts SET elapsed_seconds = 12 WHERE attempt_id = 'a1';",
        );
        let a = read(&tmp, "a1").unwrap();
        assert!(a.elapsed_seconds_value().is_i64());
        assert!(String::from_utf8(a.export)
            .unwrap()
            .contains("\"elapsed_seconds\": 12,"));
    }

    #[test]
    fn unknown_attempt_is_refused() {
        let tmp = store("");
        refused_with(
            read(&tmp, "zz"),
            &["attempt zz"],
            "no such attempt in the store",
        );
    }

    #[test]
    fn running_attempt_is_refused() {
        let tmp = store("");
        refused_with(
            read(&tmp, "a2"),
            &["attempt a2"],
            "is still RUNNING (verdict NULL): import it once it finishes",
        );
    }

    #[test]
    fn null_verdict_with_another_status_is_refused() {
        let tmp = store("UPDATE attempts SET status = 'FAILED' WHERE attempt_id = 'a2';");
        refused_with(
            read(&tmp, "a2"),
            &["attempt a2"],
            "has a NULL verdict with status FAILED, not RUNNING",
        );
    }

    #[test]
    fn a_verdict_with_any_status_is_copied() {
        let tmp = store(
            "UPDATE attempts SET verdict = 'ERROR', reason = 'crashed' WHERE attempt_id = 'a2';",
        );
        let a = read(&tmp, "a2").unwrap();
        assert_eq!(
            (a.verdict.as_str(), a.status.as_str()),
            ("ERROR", "RUNNING")
        );
    }

    #[test]
    fn empty_verdict_is_refused() {
        let tmp = store("UPDATE attempts SET verdict = '' WHERE attempt_id = 'a1';");
        refused_with(
            read(&tmp, "a1"),
            &["attempt a1"],
            "attempts.verdict is empty",
        );
    }

    #[test]
    fn case_missing_from_the_store_is_refused() {
        let tmp = store(
            "PRAGMA foreign_keys = OFF; UPDATE attempts SET case_id = 'gone' WHERE attempt_id = 'a1';",
        );
        refused_with(
            read(&tmp, "a1"),
            &["attempt a1"],
            "names case gone, which is not in the store",
        );
    }

    #[test]
    fn edited_definition_is_refused_with_both_digests() {
        let tmp = store(&format!(
            "UPDATE cases SET definition = '{{}}' WHERE case_id = '{CASE}';"
        ));
        let r = crate::testutil::refusal(read(&tmp, "a1"));
        crate::testutil::assert_only_reason!(
            r,
            sentence = format!(
                "its definition hashes to {}, not its definition_digest {}: the definition \
                 changed",
                sha256_hex(b"{}"),
                digest()
            )
        );
    }

    #[test]
    fn definition_changed_after_the_attempt_is_refused() {
        let new_def = "{\"brief\": \"v2\"}";
        let new_digest = sha256_hex(new_def.as_bytes());
        let tmp = store(&format!(
            "UPDATE cases SET definition = '{new_def}', definition_digest = '{new_digest}';"
        ));
        let r = crate::testutil::refusal(read(&tmp, "a1"));
        crate::testutil::assert_only_reason!(
            r,
            sentence = format!(
                "definition_digest {new_digest} differs from the attempt's case_digest {}: the \
                 definition changed after the attempt",
                digest()
            )
        );
    }

    #[test]
    fn digests_compare_as_stored_text() {
        let upper = digest().to_uppercase();
        let tmp = store(&format!(
            "UPDATE cases SET definition_digest = '{upper}'; UPDATE attempts SET case_digest = '{upper}';"
        ));
        let s = format!(
            "its definition hashes to {}, not its definition_digest {}: the definition changed",
            digest(),
            digest().to_uppercase()
        );
        let case = format!("case {CASE}");
        refused_with(read(&tmp, "a1"), &["attempt a1", &case], &s);
    }

    #[test]
    fn checks_ok_must_be_0_or_1() {
        assert!(read(&store("UPDATE checks SET ok = 0;"), "a1").is_ok());
        for (bad, shown) in [
            ("2", "INTEGER 2"),
            ("-1", "INTEGER -1"),
            ("'yes'", "text \"yes\""),
            ("1.5", "REAL 1.5"),
            ("NULL", "NULL"),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            // Without the NOT NULL constraint, to reach the NULL case.
            let sql = store_sql().replace("ok INTEGER NOT NULL", "ok INTEGER");
            store_from_sql(tmp.path(), &sql);
            store_from_sql(
                tmp.path(),
                &format!("UPDATE checks SET ok = {bad} WHERE name = 'test_a';"),
            );
            let s = format!("check test_a: ok must be 0 or 1, not {shown}");
            refused_with(read(&tmp, "a1"), &["attempt a1"], &s);
        }
        // The text '1' becomes the integer 1 under INTEGER affinity.
        assert!(read(&store("UPDATE checks SET ok = '1';"), "a1").is_ok());
    }

    #[test]
    fn required_checks_must_be_a_json_list_of_strings() {
        for (bad, said) in [
            (
                "not json",
                "cases.required_checks is not valid JSON: expected ident at line 1 column 2",
            ),
            (
                "[\"a\", \"a\"] x",
                "cases.required_checks is not valid JSON: trailing characters at line 1 column 12",
            ),
            (
                "{\"a\": 1, \"a\": 2}",
                "cases.required_checks is not valid JSON: duplicate key \"a\" at line 1 column 12",
            ),
            (
                "{}",
                "cases.required_checks must be a JSON list of strings, not an object",
            ),
            (
                "[\"a\", 1]",
                "cases.required_checks[1] must be a string, not an integer",
            ),
        ] {
            let tmp = store(&format!("UPDATE cases SET required_checks = '{bad}';"));
            refused_with(read(&tmp, "a1"), &["attempt a1"], said);
        }
        let tmp = store("UPDATE cases SET required_checks = '[]';");
        assert!(read(&tmp, "a1").unwrap().case.required_checks.is_empty());
    }

    #[test]
    fn runner_options_must_be_a_json_list_of_strings() {
        let tmp = store("UPDATE attempts SET runner_options = '[1]' WHERE attempt_id = 'a1';");
        refused_with(
            read(&tmp, "a1"),
            &["attempt a1"],
            "attempts.runner_options[0] must be a string, not an integer",
        );
        let tmp = store("UPDATE attempts SET runner_options = '' WHERE attempt_id = 'a1';");
        refused_with(
            read(&tmp, "a1"), &["attempt a1"], "attempts.runner_options is not valid JSON: EOF while parsing a value at line 1 column 0",
        );
    }

    #[test]
    fn wrong_storage_classes_are_refused_naming_the_column() {
        for (sql, said) in [
            (
                "UPDATE attempts SET mode = x'6c697665' WHERE attempt_id = 'a1';",
                "attempts.mode holds a BLOB",
            ),
            (
                "UPDATE attempts SET elapsed_seconds = 'slow' WHERE attempt_id = 'a1';",
                "attempts.elapsed_seconds must be a nonnegative number, not text \"slow\"",
            ),
            (
                "UPDATE attempts SET elapsed_seconds = -1 WHERE attempt_id = 'a1';",
                "attempts.elapsed_seconds must be a nonnegative number, not REAL -1.0",
            ),
            (
                "UPDATE attempts SET elapsed_seconds = 1e999 WHERE attempt_id = 'a1';",
                "attempts.elapsed_seconds holds a non-finite REAL",
            ),
            (
                "UPDATE attempts SET verdict = x'00' WHERE attempt_id = 'a1';",
                "attempts.verdict holds a BLOB",
            ),
            (
                "UPDATE cases SET base_commit = x'00';",
                "cases.base_commit holds a BLOB",
            ),
            (
                "UPDATE evidence SET ref = x'00' WHERE attempt_id = 'a1';",
                "evidence.ref must be text, not a BLOB",
            ),
            (
                "UPDATE checks SET name = x'00' WHERE name = 'test_a';",
                "checks.name must be text, not a BLOB",
            ),
            (
                "UPDATE attempts SET reason = CAST(x'ff' AS TEXT) WHERE attempt_id = 'a1';",
                "attempts.reason holds text that is not UTF-8",
            ),
        ] {
            let tmp = store(sql);
            refused_with(read(&tmp, "a1"), &["attempt a1"], said);
        }
    }

    #[test]
    fn null_in_a_required_column_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let sql = store_sql().replace("mode TEXT NOT NULL", "mode TEXT");
        store_from_sql(tmp.path(), &sql);
        store_from_sql(tmp.path(), "UPDATE attempts SET mode = NULL;");
        refused_with(
            read(&tmp, "a1"),
            &["attempt a1"],
            "attempts.mode must be text, not NULL",
        );
    }

    #[test]
    fn a_number_where_text_is_expected_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let sql = store_sql().replace("status TEXT NOT NULL", "status NOT NULL");
        store_from_sql(tmp.path(), &sql);
        store_from_sql(tmp.path(), "UPDATE attempts SET status = 7;");
        refused_with(
            read(&tmp, "a1"),
            &["attempt a1"],
            "attempts.status must be text, not INTEGER 7",
        );
    }

    // ---- derived values -----------------------------------------------------------------------

    #[test]
    fn derived_values_for_the_row() {
        let tmp = store("");
        let a = read(&tmp, "a1").unwrap();
        assert_eq!(a.task_id(), "arena/sympy-matrix-derivatives");
        assert_eq!(a.evidence().unwrap(), Evidence::Live);
        assert_eq!(a.decisions(), vec!["benchmark plan approval: alice"]);
        assert_eq!(
            a.spent_budget(),
            json!({"cli_invocation_seconds": null, "oracle_seconds": null, "max_iterations": null})
        );
        assert!(a.check_reason().is_ok());
        let declared = DeclaredProfile {
            provider: "p".into(),
            ..Default::default()
        };
        assert_eq!(
            a.options(&declared, 3).option_deviations,
            vec!["missing --max-iterations=3"]
        );
    }

    #[test]
    fn no_plan_approval_no_decision_and_reason_rule() {
        let tmp = store(
            "UPDATE attempts SET plan_approval = NULL, verdict = 'FAIL' WHERE attempt_id = 'a1';",
        );
        let a = read(&tmp, "a1").unwrap();
        assert!(a.decisions().is_empty());
        refused_with(
            a.check_reason(),
            &[],
            "native outcome FAIL has no reason; the import never invents one",
        );
    }

    #[test]
    fn mode_decides_the_evidence_class() {
        for (mode, class) in [
            ("fake", Evidence::Fixture),
            ("live-hybrid", Evidence::Fixture),
        ] {
            let tmp = store(&format!("UPDATE attempts SET mode = '{mode}';"));
            assert_eq!(read(&tmp, "a1").unwrap().evidence().unwrap(), class);
        }
        let tmp = store("UPDATE attempts SET mode = 'dry-run';");
        refused_with(
            read(&tmp, "a1").unwrap().evidence(), &[], "mode \"dry-run\" is not one the import knows (live, fake, or a mode containing -hybrid)",
        );
    }

    #[test]
    fn evidence_refs_end_with_the_store_and_attempt() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path().join(".autocode").join("arena-hard-v1");
        store_from_sql(&dir, &store_sql());
        let a = read_attempt(&open_store(&dir).unwrap(), "a1").unwrap();
        assert_eq!(
            a.evidence_refs(Some(repo.path())),
            vec!["logs/z.txt", "diff/a.patch", ".autocode/arena-hard-v1#a1"]
        );
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(
            a.evidence_refs(Some(elsewhere.path()))[2],
            format!("{}#a1", dir.display())
        );
    }

    // ---- a store being written ----------------------------------------------------------------

    fn insert_a3(conn: &Connection) {
        conn.execute_batch(&format!(
            "INSERT INTO attempts VALUES ('a3', '{CASE}', '{}', NULL, '[]', 'live', 'PASS',
                                          'COMPLETED', NULL, NULL, NULL, NULL, 1.0);
             INSERT INTO checks VALUES ('a1', 'uncommitted', 0);",
            digest()
        ))
        .unwrap();
    }

    #[test]
    fn wal_store_with_an_open_write_transaction_is_readable() {
        let tmp = tempfile::tempdir().unwrap();
        let writer = store_from_sql(tmp.path(), &store_sql());
        let mode: String = writer
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        writer.execute_batch("BEGIN IMMEDIATE;").unwrap();
        insert_a3(&writer);
        let store = open_store_with(tmp.path(), Duration::from_millis(200)).unwrap();
        let a = read_attempt(&store, "a1").unwrap();
        assert_eq!(a.checks.len(), 2, "the uncommitted check is not seen");
        refused_with(
            read_attempt(&store, "a3"),
            &["attempt a3"],
            "no such attempt in the store",
        );
        writer.execute_batch("COMMIT;").unwrap();
        // The store is read as of its private copy; opened again, it shows the commit.
        refused_with(
            read_attempt(&store, "a3"),
            &["attempt a3"],
            "no such attempt in the store",
        );
        let store = open_store(tmp.path()).unwrap();
        assert_eq!(read_attempt(&store, "a3").unwrap().verdict, "PASS");
    }

    #[test]
    fn wal_store_without_a_writer_is_readable() {
        let tmp = tempfile::tempdir().unwrap();
        let writer = store_from_sql(tmp.path(), &store_sql());
        writer
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            .unwrap();
        insert_a3(&writer);
        drop(writer);
        let store = open_store(tmp.path()).unwrap();
        assert_eq!(read_attempt(&store, "a3").unwrap().verdict, "PASS");
    }

    #[test]
    fn rollback_journal_store_with_a_reserved_lock_is_readable() {
        let tmp = tempfile::tempdir().unwrap();
        let writer = store_from_sql(tmp.path(), &store_sql());
        let mode: String = writer
            .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
        writer.execute_batch("BEGIN IMMEDIATE;").unwrap(); // RESERVED lock
        insert_a3(&writer);
        let store = open_store_with(tmp.path(), Duration::from_millis(200)).unwrap();
        assert_eq!(read_attempt(&store, "a1").unwrap().checks.len(), 2);
        refused_with(
            read_attempt(&store, "a3"),
            &["attempt a3"],
            "no such attempt in the store",
        );
        drop(store);
        writer.execute_batch("COMMIT;").unwrap();
    }

    #[test]
    fn rollback_journal_store_with_an_exclusive_lock_is_a_clear_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let writer = store_from_sql(tmp.path(), &store_sql());
        writer
            .query_row("PRAGMA journal_mode = DELETE", [], |r| {
                r.get::<_, String>(0)
            })
            .unwrap();
        writer.execute_batch("BEGIN EXCLUSIVE;").unwrap();
        insert_a3(&writer);
        let e = open_store_with(tmp.path(), Duration::from_millis(100)).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        let shown = e.to_string();
        assert!(
            shown.contains("store is locked by another process (waited 100 ms)"),
            "{shown}"
        );
        assert!(shown.contains("hint: retry"), "{shown}");
        writer.execute_batch("COMMIT;").unwrap();
        assert!(open_store(tmp.path()).is_ok());
    }
}
