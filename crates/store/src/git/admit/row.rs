//! One row file of a ledger commit read and checked: strict JSON under the size bound, every
//! row check, the `schedule_id` its path names, canonical bytes (rule 4's reading of a row;
//! `log`, `diff` and `sync` read rows through it too).

use gix::ObjectId;

use crate::declaration::Declaration;
use crate::error::Error;
use crate::git::layout;
use crate::git::objects::read_blob_bounded_id;
use crate::ledger::Row;
use crate::refusal::Reason;

/// Read and check the row file `blob` of `sid`: strict JSON under the size bound, every row
/// check, its `schedule_id` equal to the one its path names, and canonical bytes. Each reason
/// is a value found at `at` (a row check names the row, the field and its refusal group; the
/// others name the row). `Err` of the outer result: the blob could not be read at all (not
/// in the repository), a failure like a missing record or commit, not a refusal.
pub fn read_row(
    repo: &gix::Repository,
    decl: &Declaration,
    blob: ObjectId,
    sid: &str,
    max_bytes: u64,
    at: &str,
) -> crate::Result<std::result::Result<Row, Vec<Reason>>> {
    let path = layout::row_path(sid);
    Ok(match read_row_bytes(repo, blob, &path, max_bytes, at)? {
        Ok(bytes) => check_row_bytes(decl, &bytes, sid, &path, at),
        Err(reasons) => Err(reasons),
    })
}

/// The first half of [`read_row`]: the bytes of the row file `blob` at `path`, under the size
/// bound (a refusal found at `at`), or `Err` of the outer result when it cannot be read.
pub fn read_row_bytes(
    repo: &gix::Repository,
    blob: ObjectId,
    path: &str,
    max_bytes: u64,
    at: &str,
) -> crate::Result<std::result::Result<Vec<u8>, Vec<Reason>>> {
    match read_blob_bounded_id(repo, blob, max_bytes, path) {
        Ok(bytes) => Ok(Ok(bytes)),
        Err(Error::Refused(r)) => Ok(Err(r.at(at).into_vec())),
        Err(e) if at.is_empty() => Err(e),
        Err(e) => Err(e.context(at)),
    }
}

/// The second half of [`read_row`]: the row file `path` of `sid`, its bytes read, checked.
pub fn check_row_bytes(
    decl: &Declaration,
    bytes: &[u8],
    sid: &str,
    path: &str,
    at: &str,
) -> std::result::Result<Row, Vec<Reason>> {
    let about = |s: String| vec![Reason::new(s).row(sid).at(at)];
    let value = crate::json::parse_strict(bytes)
        .map_err(|e| about(format!("{path} is not valid JSON: {e}")))?;
    // The path names the row: a reason the row's own fields cannot place (its schedule_id
    // missing or wrong) is about that row all the same.
    let row = Row::check_owned(decl, value, "").map_err(|reasons| {
        (reasons.into_iter())
            .map(|r| match r.row {
                Some(_) => r.at(at),
                None => r.row(sid).at(at),
            })
            .collect::<Vec<_>>()
    })?;
    if row.schedule_id() != sid {
        return Err(vec![Reason::new(format!(
            "{path} holds row {}; a row file's path names its schedule_id",
            row.schedule_id()
        ))
        .row(sid)
        .field("schedule_id")
        .at(at)]);
    }
    if row.canonical(decl) != bytes {
        return Err(about(format!(
            "{path} is not the row's canonical bytes (fields in attempt_fields order, nested keys sorted, two-space indent, trailing newline)"
        )));
    }
    Ok(row)
}
