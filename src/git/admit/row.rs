//! One row file of a ledger commit read and checked: strict JSON under the size bound, every
//! row check, the `schedule_id` its path names, canonical bytes (rule 4's reading of a row;
//! `log`, `diff` and `sync` read rows through it too).

use gix::ObjectId;

use crate::declaration::Declaration;
use crate::git::layout;
use crate::git::objects::read_blob_bounded_id;
use crate::ledger::Row;
use crate::refusal::Reason;

/// Read and check the row file `blob` of `sid`: strict JSON under the size bound, every row
/// check, its `schedule_id` equal to the one its path names, and canonical bytes. `at` starts
/// every reason.
pub fn read_row(
    repo: &gix::Repository,
    decl: &Declaration,
    blob: ObjectId,
    sid: &str,
    max_bytes: u64,
    at: &str,
) -> std::result::Result<Row, Vec<String>> {
    read_row_reasons(repo, decl, blob, sid, max_bytes, at)
        .map_err(|r| r.iter().map(Reason::to_string).collect())
}

/// [`read_row`] with each reason as a value (a row check names the row, the field and its
/// refusal group; the others are sentences), found at `at`.
pub fn read_row_reasons(
    repo: &gix::Repository,
    decl: &Declaration,
    blob: ObjectId,
    sid: &str,
    max_bytes: u64,
    at: &str,
) -> std::result::Result<Row, Vec<Reason>> {
    let path = layout::row_path(sid);
    let what = format!("{at}: {path}");
    let sentence = |s: String| vec![Reason::new(s)];
    let bytes = read_blob_bounded_id(repo, blob, max_bytes, &what)
        .map_err(|e| e.reasons().into_iter().map(Reason::new).collect::<Vec<_>>())?;
    let value = crate::json::parse_strict(&bytes)
        .map_err(|e| sentence(format!("{at}: row {sid}: {path} is not valid JSON: {e}")))?;
    let row = Row::check_reasons(decl, &value, &path)
        .map_err(|reasons| reasons.into_iter().map(|r| r.at(at)).collect::<Vec<_>>())?;
    if row.schedule_id() != sid {
        return Err(sentence(format!(
            "{at}: row {sid}: schedule_id: {path} holds row {}; a row file's path names its schedule_id",
            row.schedule_id()
        )));
    }
    if row.canonical(decl) != bytes {
        return Err(sentence(format!(
            "{at}: row {sid}: {path} is not the row's canonical bytes (fields in attempt_fields order, nested keys sorted, two-space indent, trailing newline)"
        )));
    }
    Ok(row)
}
