//! Admission: which ledger state may follow which.
//!
//! This module is the one place where the transition rules of `git.md` live. A row transition
//! ([`row_transition`]) is what import, put and repair produce and what every hook and `verify`
//! re-check: a DEFERRED row becoming a valid attempted row, or a filled row gaining only
//! appended `repair` interventions. Everything else is refused, naming the row and the field.

use serde_json::Value;

use crate::declaration::Declaration;
use crate::json;
use crate::ledger::Row;

/// What a changed row did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowChange {
    /// A DEFERRED row now holds an attempt (a new record file must come with it).
    Filled,
    /// A filled row gained this many appended repair interventions.
    Repaired(usize),
}

/// Why an appended repair with a blank note is refused (`repair` and the hooks alike).
pub const REPAIR_NOTE_EMPTY: &str =
    "a repair's note is empty; it must say what the person fixed (`git ledger repair <ID> --note TEXT`)";

/// Decide whether `child` may follow `parent` for one scheduled attempt. Both rows have
/// already passed [`Row::check`]. `at` names where the change was found (a commit, a file).
/// A row filled from a hand record names that record after itself; an appended repair says
/// what was fixed (a note that is not blank).
pub fn row_transition(
    decl: &Declaration,
    parent: &Row,
    child: &Row,
    at: &str,
) -> Result<RowChange, Vec<String>> {
    let id = parent.schedule_id();
    if child.schedule_id() != id {
        // A caller pairs rows by path or position; a row that names another attempt is not
        // a change of this one (and would otherwise fill a DEFERRED slot with another row).
        return Err(vec![format!(
            "{at}: row {id}: schedule_id: the new row names {:?}; a row never moves to another scheduled attempt",
            child.schedule_id()
        )]);
    }
    if parent.is_deferred() {
        if child.is_deferred() {
            // Both equal their template (Row::check), so nothing changed.
            return Err(vec![format!(
                "{at}: row {id}: a DEFERRED row was rewritten without change"
            )]);
        }
        let Some(rec) = child.native_record() else {
            return Err(vec![format!(
                "{at}: row {id}: native_record: a filled row names the record it was filled from (rule 5: one record file per filled row)"
            )]);
        };
        if rec.kind == "hand" && rec.id != id {
            // `put` names a hand record after its own row; one named after another row takes
            // that row's record key, and that row's `put` would then be refused.
            return Err(vec![format!(
                "{at}: row {id}: native_record.id: a hand record is named after the row it fills ({{\"kind\": \"hand\", \"id\": {id:?}}}, as `put` writes it), not {:?}: it would take the record key of another row and block that row's `put`",
                rec.id
            )]);
        }
        return Ok(RowChange::Filled);
    }
    // A filled row: only appended repairs.
    let mut reasons = Vec::new();
    for f in &decl.attempt_fields {
        if f == "interventions_decision_or_repair" {
            continue;
        }
        if !json::value_eq(parent.get(f), child.get(f)) {
            let what = if f == "native_outcome" || f == "native_record" {
                "a filled row is never replaced (a retry needs a new declared schedule; the original row stays)"
            } else {
                "a filled row admits no change but appended repair interventions"
            };
            reasons.push(format!(
                "{at}: row {id}: {f}: {what} (was {}, now {})",
                parent.get(f),
                child.get(f)
            ));
        }
    }
    let before = interventions(parent);
    let after = interventions(child);
    let field = "interventions_decision_or_repair";
    if after.len() < before.len() || !before.iter().zip(after).all(|(a, b)| json::value_eq(a, b)) {
        reasons.push(format!("{at}: row {id}: {field}: recorded interventions never change or disappear; a repair is appended"));
    } else {
        for extra in &after[before.len()..] {
            if extra.get("kind").and_then(Value::as_str) != Some("repair") {
                reasons.push(format!("{at}: row {id}: {field}: only repair interventions may be appended to a filled row, not {extra}"));
            } else if extra
                .get("note")
                .and_then(Value::as_str)
                .is_none_or(|n| n.trim().is_empty())
            {
                reasons.push(format!("{at}: row {id}: {field}: {REPAIR_NOTE_EMPTY}"));
            }
        }
    }
    if !reasons.is_empty() {
        return Err(reasons);
    }
    match after.len() - before.len() {
        0 => Err(vec![format!(
            "{at}: row {id}: a filled row was rewritten without change"
        )]),
        n => Ok(RowChange::Repaired(n)),
    }
}

fn interventions(row: &Row) -> &[Value] {
    row.get("interventions_decision_or_repair")
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

#[cfg(test)]
mod tests;
