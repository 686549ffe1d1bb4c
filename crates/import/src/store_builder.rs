//! Building an Arena store from SQL text: how the example records (`arena/examples/`) and the
//! tests make real `results.sqlite3` files without keeping a binary in the repository.
//!
//! This is the only code in the tool that writes an Arena store; the import itself opens
//! stores read-only ([`super::arena`]).

use std::path::{Path, PathBuf};

use super::arena::DB_FILE;
use crate::error::{Error, Result};

/// Create `<dir>/results.sqlite3` afresh from `sql` (the schema of import.md and its rows):
/// the directory is created when missing, and a database already there (with its `-wal`,
/// `-shm` or `-journal` file) is replaced. Returns the database's path.
pub fn build_store_from_sql(dir: &Path, sql: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::failed(format!("{}: cannot create: {e}", dir.display())))?;
    let db = dir.join(DB_FILE);
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let p = PathBuf::from(format!("{}{suffix}", db.display()));
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::failed(format!(
                    "{}: cannot remove: {e}",
                    p.display()
                )))
            }
        }
    }
    let conn = rusqlite::Connection::open(&db)
        .map_err(|e| Error::failed(format!("{}: cannot create: {e}", db.display())))?;
    conn.execute_batch(sql)
        .map_err(|e| Error::failed(format!("{}: the SQL script failed: {e}", db.display())))?;
    conn.close()
        .map_err(|(_, e)| Error::failed(format!("{}: cannot close: {e}", db.display())))?;
    Ok(db)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_replaces_a_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s");
        let sql = format!(
            "{}INSERT INTO store VALUES ('store_id', 's1'), ('schema_version', '1');",
            crate::arena::SCHEMA
        );
        build_store_from_sql(&store, &sql).unwrap();
        assert_eq!(crate::open_store(&store).unwrap().store_id(), "s1");
        // A second build replaces the first instead of failing on existing tables.
        build_store_from_sql(&store, &sql.replace("'s1'", "'s2'")).unwrap();
        assert_eq!(crate::open_store(&store).unwrap().store_id(), "s2");
        let e = build_store_from_sql(&store, "NOT SQL").unwrap_err();
        assert_eq!(e.exit_code(), 1);
    }
}
