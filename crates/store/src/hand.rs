//! Rows written by hand: `put` (a row no harness record can fill, into a DEFERRED slot) and
//! `repair` (one repair intervention appended to a filled row). Both build a [`Change`] that
//! goes through the same write path and admission checks as an import.

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::ledger::Row;
use crate::store::{Change, ChangeKind, RowWrite, Store};

/// Build the change `put` writes: the row file's bytes become the row, `native_record` set to
/// `{"kind": "hand", "id": <schedule id>, "sha256": <sha256 of the row file's bytes>}`.
pub fn put<S: Store + ?Sized>(
    store: &mut S,
    schedule_id: &str,
    row_bytes: &[u8],
    source: &str,
    max_input_bytes: u64,
) -> Result<Change> {
    let mut value = crate::json::parse_document(row_bytes, source, max_input_bytes)?;
    let decl = store.declaration();
    if decl.schedule_position(schedule_id).is_none() {
        return Err(Error::refused(format!("{schedule_id} is not scheduled by declaration {} (a retry needs a new declared schedule)", decl.id)));
    }
    let Some(obj) = value.as_object_mut() else {
        return Err(Error::refused(
            crate::refusal::Reason::new("a row must be a JSON object").at(source),
        ));
    };
    match obj.get("schedule_id") {
        Some(Value::String(s)) if s == schedule_id => {}
        other => {
            return Err(Error::refused(
                crate::refusal::Reason::new(format!(
                    "schedule_id is {}, but the row is put into {schedule_id}",
                    other.map_or("missing".to_owned(), |v| v.to_string())
                ))
                .at(source),
            ))
        }
    }
    match obj.get("native_record") {
        Some(Value::Null) => {}
        Some(_) => {
            return Err(Error::refused(
                crate::refusal::Reason::new(
                    "native_record must be null: put sets it to the hand record",
                )
                .at(source),
            ))
        }
        None => {} // reported as a missing field by the row check
    }
    if obj.contains_key("native_record") {
        obj.insert(
            "native_record".into(),
            json!({"kind": "hand", "id": schedule_id, "sha256": crate::sha256_hex(row_bytes)}),
        );
    }
    if obj.get("native_outcome").and_then(Value::as_str) == Some(crate::ledger::DEFERRED) {
        return Err(Error::refused_with_hint(
            crate::refusal::Reason::new(
                "is DEFERRED, but put writes an attempted row (DEFERRED is what the slot already holds)"
            )
            .row(schedule_id)
            .field("native_outcome")
            .at(source),
            "set native_outcome to what happened (one of the task's native outcomes) and say why in reason; an attempt that never ran stays DEFERRED without a put",
        ));
    }
    let row = Row::check_owned(decl, value, source).map_err(Error::refusal)?;
    Ok(Change {
        kind: ChangeKind::Put,
        rows: vec![RowWrite {
            row,
            record: Some(crate::store::Record::new(row_bytes)),
            source: source.to_owned(),
        }],
    })
}

/// Build the change `repair` writes: one `repair` intervention appended to a filled row.
pub fn repair<S: Store + ?Sized>(store: &mut S, schedule_id: &str, note: &str) -> Result<Change> {
    // A blank note is refused by the transition rule (`admission::transition`,
    // `admission::REPAIR_NOTE_EMPTY`), as the hooks refuse it.
    let current = store.row(schedule_id)?;
    // A change of a DEFERRED row is a fill, never a repair (the kind admission gives it).
    if crate::admission::Kind::of(&current, &current) != crate::admission::Kind::Repairs {
        return Err(Error::refused_with_hint(
            format!(
                "row {schedule_id} holds no attempt (DEFERRED): only a filled row can be repaired"
            ),
            format!("fill it first with `git ledger import` or `git ledger put {schedule_id} <ROW.json>`"),
        ));
    }
    let mut value = current.to_value();
    value["interventions_decision_or_repair"]
        .as_array_mut()
        .expect("checked row")
        .push(json!({"kind": "repair", "note": note}));
    let row = Row::check_owned(store.declaration(), value, schedule_id).map_err(Error::refusal)?;
    Ok(Change {
        kind: ChangeKind::Repair,
        rows: vec![RowWrite {
            row,
            record: None,
            source: String::new(),
        }],
    })
}
