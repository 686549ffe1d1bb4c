//! The ledger ref's tree layout and commit messages (`docs/reference/layout.md`, "The tree" and
//! "Commits"): path names, the `ledger.json` header, the template tree `init` writes (and the
//! admission validator recomputes without writing), and reading trailers back for `log` (the
//! messages themselves are [`super::message`]'s).

use gix::objs::{Kind, WriteTo};
use gix::ObjectId;
use serde_json::Value;

use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::ledger::{Row, FORMAT};

/// Where ledger refs live.
pub const REF_PREFIX: &str = "refs/ledgers/";
/// The declaration's exact bytes.
pub const CAMPAIGN: &str = "campaign.json";
/// The declared writers' allowed-signers file, exact bytes (only when the declaration names
/// writers; `signing.md`).
pub const WRITERS: &str = "writers";
/// The ledger header (`format` and `declaration`, no rows).
pub const HEADER: &str = "ledger.json";
/// One file per scheduled attempt below this directory.
pub const ROWS: &str = "rows";
/// One file per native record below this directory.
pub const RECORDS: &str = "records";

/// Trailer keys.
pub const T_DECLARATION: &str = "Ledger-Declaration";
pub const T_ATTEMPT: &str = "Ledger-Attempt";
pub const T_REPAIR: &str = "Ledger-Repair";
pub const T_FILLED: &str = "Ledger-Filled";

/// Where replace refs live (`git replace`): `refs/replace/<id of the replaced object>`.
pub const REPLACE_PREFIX: &str = "refs/replace/";

/// Whether `name` starts with `prefix` when ASCII case is ignored. On a case-insensitive file
/// system (macOS, Windows) `refs/LEDGERS/x` is the file of `refs/ledgers/x`, so a check that
/// compares bytes would let another spelling of a guarded ref through.
fn folds_to(name: &str, prefix: &str) -> bool {
    name.len() >= prefix.len()
        && name.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// Whether `name` is a ledger ref in some spelling (`refs/ledgers/…`, `refs/LEDGERS/…`, …):
/// what the hooks guard. Only the lowercase spelling is ever admitted.
pub fn folds_to_ledger_ref(name: &str) -> bool {
    folds_to(name, REF_PREFIX)
}

/// Whether `name` is a replace ref in some spelling.
pub fn folds_to_replace_ref(name: &str) -> bool {
    folds_to(name, REPLACE_PREFIX)
}

/// Where notes refs live (`git notes`; `git log` shows `refs/notes/commits` by default).
pub const NOTES_PREFIX: &str = "refs/notes/";

/// Whether `name` is a notes ref in some spelling.
pub fn folds_to_notes_ref(name: &str) -> bool {
    folds_to(name, NOTES_PREFIX)
}

/// Why `name` is refused when it is a ledger ref spelled other than in lowercase.
pub fn misspelled_ledger_ref(name: &str) -> Option<String> {
    (folds_to_ledger_ref(name) && !name.starts_with(REF_PREFIX)).then(|| {
        format!(
            "{name}: a ledger ref is spelled {REF_PREFIX}{} in lowercase; every other spelling is refused (on a case-insensitive file system it is the same file, and would move the ledger unchecked)",
            &name[REF_PREFIX.len()..]
        )
    })
}

/// `refs/ledgers/<id>`.
pub fn ref_name(declaration_id: &str) -> String {
    format!("{REF_PREFIX}{declaration_id}")
}

/// `rows/<schedule id>.json`.
pub fn row_path(schedule_id: &str) -> String {
    format!("{ROWS}/{schedule_id}.json")
}

/// `records/<hh>/<rest>.json`: the SHA-256 of the record key `"<kind>:<id>"`, split after its
/// first two hex digits (as Git fans out `.git/objects`), so that no tree grows with every
/// filled row.
pub fn record_path(key: &str) -> String {
    let hex = crate::sha256_hex(key.as_bytes());
    format!("{RECORDS}/{}/{}.json", &hex[..2], &hex[2..])
}

/// The schedule id a `rows/…` path names (not checked against a schedule).
pub fn schedule_id_of(path: &str) -> Option<&str> {
    path.strip_prefix("rows/")?.strip_suffix(".json")
}

/// Whether `name` is a fan-out directory's name below `records/`: two lowercase hex digits.
pub fn is_fanout_name(name: &[u8]) -> bool {
    name.len() == 2 && name.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `name` is a record file's name inside a fan-out directory: 62 lowercase hex digits
/// (the rest of the key's SHA-256) and `.json`.
pub fn is_record_name(name: &[u8]) -> bool {
    name.strip_suffix(b".json").is_some_and(|stem| {
        stem.len() == 62 && stem.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// Whether `path` is a fan-out directory: `records/<2 lowercase hex>`.
pub fn is_fanout_dir(path: &str) -> bool {
    path.strip_prefix("records/")
        .is_some_and(|hh| is_fanout_name(hh.as_bytes()))
}

/// Whether `path` has the shape of a record file: `records/<2 hex>/<62 hex>.json` (lowercase).
/// Which fan-out directory a key belongs in is [`record_path`]'s answer, checked by rule 5.
pub fn is_record_path(path: &str) -> bool {
    path.strip_prefix("records/")
        .and_then(|p| p.split_once('/'))
        .is_some_and(|(hh, rest)| is_fanout_name(hh.as_bytes()) && is_record_name(rest.as_bytes()))
}

/// The canonical bytes of `ledger.json`: `{"format", "declaration": {"id", "sha256"}}`, keys
/// in the ledger document's order.
pub fn header_bytes(decl: &Declaration) -> Vec<u8> {
    let format = Value::from(FORMAT);
    let declaration = serde_json::json!({"id": decl.id, "sha256": decl.sha256});
    crate::json::canonical_ordered(vec![("format", &format), ("declaration", &declaration)])
}

/// Every `(path, bytes)` of the root commit `init` writes but `campaign.json` (the
/// declaration's own bytes, a blob the caller has): the header and every template row.
pub fn template_files(decl: &Declaration) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![(HEADER.to_owned(), header_bytes(decl))];
    for e in decl.schedule() {
        if let Some(row) = Row::template(decl, &e.id) {
            files.push((row_path(&e.id), row.canonical(decl)));
        }
    }
    files
}

/// Build a tree of regular files (mode 100644) from blobs already stored (`blobs`, as `(path,
/// id)`) and from `(path, bytes)`, handing every other object to `write` (which stores it, or
/// only hashes it). Returns the root tree id.
pub fn build_tree(
    hash: gix::hash::Kind,
    blobs: &[(&str, ObjectId)],
    files: &[(String, Vec<u8>)],
    write: &mut dyn FnMut(Kind, &[u8]) -> Result<ObjectId>,
) -> Result<ObjectId> {
    let never = gix::objs::find::Never;
    let mut editor = gix::objs::tree::Editor::new(gix::objs::Tree::empty(), &never, hash);
    let written = files
        .iter()
        .map(|(path, bytes)| Ok((path.as_str(), write(Kind::Blob, bytes)?)))
        .collect::<Result<Vec<_>>>()?;
    for &(path, id) in blobs.iter().chain(&written) {
        editor
            .upsert(path.split('/'), gix::objs::tree::EntryKind::Blob, id)
            .map_err(|e| Error::failed(format!("cannot build the tree at {path}: {e}")))?;
    }
    let mut buf = Vec::new();
    editor.write(|tree| {
        buf.clear();
        tree.write_to(&mut buf)
            .map_err(|e| Error::failed(format!("cannot serialise a tree: {e}")))?;
        write(Kind::Tree, &buf)
    })
}

/// The tree id `init` writes for `decl`, whose bytes are the blob `campaign` (and whose
/// writers file is the blob `writers`, when it names writers), computed without writing any
/// object.
pub fn template_tree_id(
    hash: gix::hash::Kind,
    decl: &Declaration,
    campaign: ObjectId,
    writers: Option<ObjectId>,
) -> Result<ObjectId> {
    let mut blobs = vec![(CAMPAIGN, campaign)];
    blobs.extend(writers.map(|w| (WRITERS, w)));
    build_tree(hash, &blobs, &template_files(decl), &mut |kind, data| {
        gix::objs::compute_hash(hash, kind, data)
            .map_err(|e| Error::failed(format!("cannot hash an object: {e}")))
    })
}

/// One `Ledger-Attempt` trailer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Attempt {
    pub schedule_id: String,
    pub native_outcome: String,
    /// The portfolio outcome key (`verified_delivery`, …).
    pub outcome: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_the_ledger_prefix_is_a_ledger_ref_and_only_lowercase_passes() {
        for name in [
            "refs/ledgers/x",
            "refs/LEDGERS/x",
            "Refs/Ledgers/a/b",
            "REFS/LEDGERS/",
        ] {
            assert!(folds_to_ledger_ref(name), "{name}");
        }
        for name in [
            "refs/ledger/x",
            "refs/heads/ledgers/x",
            "refs/ledgersx",
            "refs/",
            "",
        ] {
            assert!(!folds_to_ledger_ref(name), "{name}");
        }
        assert_eq!(misspelled_ledger_ref("refs/ledgers/x"), None);
        assert_eq!(misspelled_ledger_ref("refs/heads/x"), None);
        let why = misspelled_ledger_ref("refs/LEDGERS/x").unwrap();
        assert!(why.starts_with("refs/LEDGERS/x: ") && why.contains("refs/ledgers/x in lowercase"));
        // Not at a character boundary: no panic.
        assert!(!folds_to_ledger_ref("refs/ledgersé/x"));
        // Where sync keeps refused attempts, and the remote-tracking copies: no ledger refs.
        for name in [
            "refs/ledger-conflicts/x/1",
            "refs/LEDGER-CONFLICTS/x/1",
            "refs/remotes/origin/ledgers/x",
        ] {
            assert!(
                !folds_to_ledger_ref(name) && misspelled_ledger_ref(name).is_none(),
                "{name}"
            );
        }
        assert_eq!(misspelled_ledger_ref("refs/ledgersé/x"), None);
        assert!(folds_to_replace_ref("refs/Replace/1") && !folds_to_replace_ref("refs/replaced"));
    }

    #[test]
    fn record_paths_have_the_spec_shape() {
        let p = record_path("hand:x/01");
        assert!(is_record_path(&p));
        let hex = crate::sha256_hex(b"hand:x/01");
        assert_eq!(p, format!("records/{}/{}.json", &hex[..2], &hex[2..]));
        assert!(is_fanout_dir(p.rsplit_once('/').unwrap().0));
        // The flat layout of version 1, and names that are not the fan-out's shape.
        assert!(!is_record_path(&format!("records/{hex}.json")));
        assert!(!is_record_path("records/abc.json"));
        assert!(!is_record_path(&format!(
            "records/{}/{}.json",
            &hex[..2],
            &hex[..62].to_uppercase()
        )));
        assert!(!is_record_path(&format!(
            "records/{}/{}.json",
            &hex[..3],
            &hex[3..]
        )));
        assert!(!is_record_path(&format!(
            "records/{}/{}.JSON",
            &hex[..2],
            &hex[2..]
        )));
        assert!(!is_fanout_dir("records/AB") && !is_fanout_dir("records/abc"));
        assert_eq!(schedule_id_of("rows/a/b/01.json"), Some("a/b/01"));
    }
}
