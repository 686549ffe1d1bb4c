//! The row type: [`Row`] (built only by the row checks, or as a template row), its typed
//! accessors (through [`RowView`]), and its canonical bytes (fields in `attempt_fields` order).

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;

use super::checks::{check_members, template_field};
use super::view::{Check, NativeRecord, RowView};
use crate::declaration::{Declaration, Evidence};
use crate::json::{self};
use crate::refusal::Reason;

/// One checked row (an object holding exactly the declared attempt fields). A row never
/// changes once checked, so its members are shared: a copy (the state before a change, the
/// row a change writes, the row an import reports) is a count, not a copy of twenty members.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub(super) fields: Arc<Map<String, Value>>,
    /// The two fields nearly every question about a row reads first, read from `fields` once
    /// when the row is made (a look-up by name in a row's map compares keys; a writer of 1,000
    /// rows asked for them tens of thousands of times): `schedule_id` as [`RowView`] reads it,
    /// and whether `native_outcome` is DEFERRED.
    schedule_id: Arc<str>,
    deferred: bool,
}

impl Row {
    /// A row of these (checked) fields.
    pub(super) fn new(fields: Map<String, Value>) -> Row {
        let view = RowView {
            obj: &fields,
            at: None,
        };
        let (schedule_id, deferred) = (view.schedule_id().into(), view.is_deferred());
        Row {
            fields: Arc::new(fields),
            schedule_id,
            deferred,
        }
    }

    /// The template row of a scheduled attempt: DEFERRED, "not attempted", lists empty, every
    /// other field null.
    pub fn template(decl: &Declaration, schedule_id: &str) -> Option<Row> {
        let entry = decl.schedule_entry(schedule_id)?;
        let task = decl.task(&entry.task)?;
        let fields = (decl.attempt_fields.iter())
            .map(|f| {
                let v = template_field(f, &entry.id, entry.repetition, task);
                (f.clone(), v.to_value())
            })
            .collect();
        Some(Row::new(fields))
    }

    /// Check a row against the declaration (groups 3–6 of `ledger.md`), returning every reason
    /// as a value: the row's own checks name the row, the field and the refusal group
    /// (`Rule::Ledger`). `at` names where the row came from (e.g. `rows[3]` or a file path).
    pub fn check(
        decl: &Declaration,
        value: &Value,
        at: &str,
    ) -> std::result::Result<Row, Vec<Reason>> {
        Self::check_reasons(decl, value, at)
    }

    /// [`Row::check`] (the name its callers knew when it returned the texts).
    pub fn check_reasons(
        decl: &Declaration,
        value: &Value,
        at: &str,
    ) -> std::result::Result<Row, Vec<Reason>> {
        Self::check_owned(decl, value.clone(), at)
    }

    /// [`Row::check_reasons`] of a value the caller gives up: a row that passes keeps its
    /// members, not a copy of them.
    pub fn check_owned(
        decl: &Declaration,
        value: Value,
        at: &str,
    ) -> std::result::Result<Row, Vec<Reason>> {
        match value {
            Value::Object(fields) => {
                check_members(decl, &fields, &at)?;
                Ok(Row::new(fields))
            }
            other => Err(not_an_object(&other, at)),
        }
    }

    /// The value of a field.
    pub fn get(&self, field: &str) -> &Value {
        self.fields.get(field).unwrap_or(&Value::Null)
    }

    /// The row as a JSON object.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }

    /// A copy of the fields, for building a changed row (check it again with [`Row::check`]).
    pub fn to_value(&self) -> Value {
        Value::Object(Map::clone(&self.fields))
    }

    /// The row's fields through a [`RowView`] (what the accessors below read).
    pub fn view(&self) -> RowView<'_, Map<String, Value>> {
        RowView {
            obj: &self.fields,
            at: None,
        }
    }
    pub fn schedule_id(&self) -> &str {
        &self.schedule_id
    }
    pub fn task_id(&self) -> &str {
        self.view().task_id()
    }
    pub fn native_outcome(&self) -> &str {
        self.view().native_outcome()
    }
    pub fn is_deferred(&self) -> bool {
        self.deferred
    }
    pub fn native_status(&self) -> Option<&str> {
        self.view().native_status()
    }
    pub fn reason(&self) -> Option<&str> {
        self.view().reason()
    }
    pub fn source_revision(&self) -> Option<&str> {
        self.view().source_revision()
    }
    pub fn evidence(&self) -> Evidence {
        self.view().evidence()
    }
    pub fn runtime_identity(&self) -> Option<&Map<String, Value>> {
        self.view().runtime_identity()
    }
    pub fn actual_models_and_efforts(&self) -> Option<&Map<String, Value>> {
        self.view().actual_models_and_efforts()
    }
    pub fn option_deviations(&self) -> impl Iterator<Item = &str> {
        self.view().option_deviations()
    }
    pub fn evidence_refs(&self) -> impl Iterator<Item = &str> {
        self.view().evidence_refs()
    }
    pub fn oracle_checks(&self) -> Option<Vec<Check<'_>>> {
        self.view().oracle_checks()
    }
    pub fn elapsed_seconds(&self) -> Option<f64> {
        self.view().elapsed_seconds()
    }
    pub fn estimated_usd(&self) -> Option<f64> {
        self.view().estimated_usd()
    }
    /// The spend recorded against a declared limit (`None`: unknown).
    pub fn spent(&self, limit: &str) -> Option<f64> {
        self.view().spent(limit)
    }
    /// `(kind, note)` of each intervention, in order.
    pub fn interventions(&self) -> impl Iterator<Item = (&str, &str)> {
        self.view().interventions()
    }
    pub fn native_record(&self) -> Option<NativeRecord<'_>> {
        self.view().native_record()
    }

    /// The row's canonical bytes: fields in `attempt_fields` order, nested keys sorted,
    /// two-space indent, trailing newline (the bytes of `rows/<id>.json`).
    pub fn canonical(&self, decl: &Declaration) -> Vec<u8> {
        json::canonical(&RowSer {
            row: self,
            fields: &decl.attempt_fields,
            sorted: None,
        })
    }
}

/// A row written with its fields in `fields` order (the declaration's `attempt_fields`).
pub(super) struct RowSer<'a> {
    pub(super) row: &'a Row,
    pub(super) fields: &'a [String],
    /// The positions in `fields` of the fields in key order ([`sorted_fields`]), for a writer
    /// of many rows: a row's members, held in key order, are then read in one pass instead of
    /// looked up by name one field at a time.
    pub(super) sorted: Option<&'a [usize]>,
}

/// The positions of `fields` in the order of their names (the order a row's map holds them).
pub(super) fn sorted_fields(fields: &[String]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..fields.len()).collect();
    order.sort_by(|&a, &b| fields[a].cmp(&fields[b]));
    order
}

/// Most fields a row's values are gathered for on the stack (more: looked up by name).
const GATHERED: usize = 64;

impl Serialize for RowSer<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.fields.len()))?;
        // A checked row holds exactly the declared fields: its members in key order are the
        // fields in `sorted` order, each compared by name as it is taken. Any other row (none
        // is, but it costs nothing to ask) is written by look-ups, as before.
        let members = self.row.fields();
        let n = self.fields.len();
        if let Some(sorted) = self.sorted.filter(|s| s.len() == n && n <= GATHERED) {
            let mut values = [&Value::Null; GATHERED];
            let gathered = members.len() == n
                && (members.iter().zip(sorted)).all(|((k, v), &i)| {
                    values[i] = v;
                    *k == self.fields[i]
                });
            if gathered {
                for (f, v) in self.fields.iter().zip(values) {
                    m.serialize_entry(f, v)?;
                }
                return m.end();
            }
        }
        for f in self.fields {
            m.serialize_entry(f, self.row.get(f))?;
        }
        m.end()
    }
}

/// The reason a value that is not an object is no row.
fn not_an_object(value: &Value, at: &str) -> Vec<Reason> {
    vec![Reason::new(format!(
        "a row must be an object, not {}",
        json::type_name(value)
    ))
    .at(at)]
}
