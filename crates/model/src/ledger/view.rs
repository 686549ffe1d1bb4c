//! [`RowView`]: a checked row's fields read through any JSON view (a [`Row`]'s map, or a row
//! the fast path parsed), with the accessors the report and the classification read, and what
//! they return ([`Check`], [`NativeRecord`]). It is the floor of the row: it knows no other part.

use super::DEFERRED;
use crate::declaration::{Evidence, StandardAt, STANDARD_FIELDS};
use crate::json::{Obj, View, J};

/// A checked row's fields through any JSON view: a [`Row`](super::Row)'s `Map` ([`Row::view`](super::Row::view)), or a row
/// the fast path parsed into [`json::Members`](crate::json::Members) and checked with the same `check_members`.
/// The accessors the report and the classification read.
pub struct RowView<'a, O> {
    pub(super) obj: &'a O,
    /// Where each standard field is among the members, for a row whose keys are exactly the
    /// declared ones ([`Declaration::attempt_positions`]); else fields are found by name.
    pub(super) at: Option<&'a StandardAt>,
}

impl<O> Clone for RowView<'_, O> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<O> Copy for RowView<'_, O> {}

impl<'a, O: Obj> RowView<'a, O> {
    /// The value of a standard field, if the row has it: by its position when the row's keys
    /// are the declared ones, else by name.
    fn node(self, f: Field) -> Option<&'a O::V> {
        match self.at {
            Some(at) => self.obj.get_at(at[f as usize], f.name()),
            None => self.obj.get(f.name()),
        }
    }
    /// The value of a standard field (null when missing).
    pub(super) fn get(self, f: Field) -> J<'a, O::V> {
        self.node(f).map_or(J::Null, View::view)
    }
    /// [`View::repeat_id`] of a standard field's value: a number shared by every row whose
    /// field is the same value read once (a campaign's runtime, its models).
    fn repeat_id(self, f: Field) -> Option<u64> {
        self.node(f).and_then(View::repeat_id)
    }
    /// [`RowView::repeat_id`] of `runtime_identity`.
    pub fn runtime_identity_repeat(self) -> Option<u64> {
        self.repeat_id(Field::RuntimeIdentity)
    }
    /// [`RowView::repeat_id`] of `actual_models_and_efforts`.
    pub fn models_repeat(self) -> Option<u64> {
        self.repeat_id(Field::ActualModelsAndEfforts)
    }
    pub(super) fn str_field(self, f: Field) -> Option<&'a str> {
        self.get(f).as_str()
    }
    pub fn schedule_id(self) -> &'a str {
        self.str_field(Field::ScheduleId).unwrap_or_default()
    }
    pub fn task_id(self) -> &'a str {
        self.str_field(Field::TaskId).unwrap_or_default()
    }
    pub fn native_outcome(self) -> &'a str {
        self.str_field(Field::NativeOutcome).unwrap_or_default()
    }
    pub fn is_deferred(self) -> bool {
        self.native_outcome() == DEFERRED
    }
    pub fn native_status(self) -> Option<&'a str> {
        self.str_field(Field::NativeStatus)
    }
    pub fn reason(self) -> Option<&'a str> {
        self.str_field(Field::Reason)
    }
    pub fn source_revision(self) -> Option<&'a str> {
        self.str_field(Field::SourceRevision)
    }
    pub fn evidence(self) -> Evidence {
        Evidence::parse(self.str_field(Field::Evidence).unwrap_or_default())
            .unwrap_or(Evidence::Live)
    }
    pub fn runtime_identity(self) -> Option<&'a O> {
        self.get(Field::RuntimeIdentity).as_object()
    }
    pub fn actual_models_and_efforts(self) -> Option<&'a O> {
        self.get(Field::ActualModelsAndEfforts).as_object()
    }
    pub fn option_deviations(self) -> impl Iterator<Item = &'a str> {
        strs(self.get(Field::OptionDeviations))
    }
    pub fn evidence_refs(self) -> impl Iterator<Item = &'a str> {
        strs(self.get(Field::EvidenceRefs))
    }
    pub fn oracle_checks(self) -> Option<Vec<Check<'a>>> {
        self.get(Field::OracleChecks).as_array().map(|a| {
            a.iter()
                .map(|c| Check {
                    name: c.view().get("name").and_then(J::as_str).unwrap_or_default(),
                    ok: c.view().get("ok").and_then(J::as_bool).unwrap_or(false),
                })
                .collect()
        })
    }
    pub fn elapsed_seconds(self) -> Option<f64> {
        self.get(Field::ElapsedSeconds).as_f64()
    }
    pub fn estimated_usd(self) -> Option<f64> {
        self.get(Field::EstimatedUsd).as_f64()
    }
    /// The spend recorded against a declared limit (`None`: unknown).
    pub fn spent(self, limit: &str) -> Option<f64> {
        self.get(Field::SpentBudget).get(limit).and_then(J::as_f64)
    }
    /// `(kind, note)` of each intervention, in order.
    pub fn interventions(self) -> impl Iterator<Item = (&'a str, &'a str)> {
        self.get(Field::Interventions)
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                let i = i.view();
                (
                    i.get("kind").and_then(J::as_str).unwrap_or_default(),
                    i.get("note").and_then(J::as_str).unwrap_or_default(),
                )
            })
    }
    pub fn native_record(self) -> Option<NativeRecord<'a>> {
        let r = self.get(Field::NativeRecord).as_object()?;
        Some(NativeRecord {
            kind: r.field("kind").as_str()?,
            id: r.field("id").as_str()?,
            sha256: r.field("sha256").as_str()?,
        })
    }
}

/// The standard fields, by their place in [`STANDARD_FIELDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    ScheduleId,
    TaskId,
    Repetition,
    Evidence,
    NativeOutcome,
    NativeStatus,
    Reason,
    SourceRevision,
    RuntimeIdentity,
    ActualModelsAndEfforts,
    RunnerOptions,
    OptionDeviations,
    OracleChecks,
    EvidenceRefs,
    ElapsedSeconds,
    Usage,
    EstimatedUsd,
    SpentBudget,
    Interventions,
    NativeRecord,
}

impl Field {
    pub(super) fn name(self) -> &'static str {
        STANDARD_FIELDS[self as usize]
    }
}

fn strs<V: View>(v: J<'_, V>) -> impl Iterator<Item = &str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.view().as_str())
}

/// One oracle check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check<'a> {
    pub name: &'a str,
    pub ok: bool,
}

/// `native_record` of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeRecord<'a> {
    pub kind: &'a str,
    pub id: &'a str,
    pub sha256: &'a str,
}

impl NativeRecord<'_> {
    /// The record key `<kind>:<id>` ("one record cannot fill two rows" compares these).
    pub fn key(&self) -> String {
        format!("{}:{}", self.kind, self.id)
    }
}
