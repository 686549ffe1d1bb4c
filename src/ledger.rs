//! The ledger document (`campaign-ledger/1`) and its rows: the template, strict row checks
//! (refusal groups 1–7 of `ledger.md`), canonical bytes, and typed accessors.
//!
//! A [`Row`] can only be built by [`Row::check`], so every row the rest of the tool holds has
//! passed the row checks against its declaration. A [`Ledger`] holds one row per scheduled
//! attempt, in schedule order.

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashMap;

use crate::declaration::{
    Declaration, Evidence, Expects, ScheduleEntry, StandardAt, Task, STANDARD_FIELDS,
};
use crate::error::{Error, Reasons, Result};
use crate::json::{self, Obj, View, J};
use crate::refusal::{Reason, Rule};
use std::fmt;

mod fast;

/// The format string of a ledger document.
pub const FORMAT: &str = "campaign-ledger/1";
/// The native outcome of a row that holds no attempt.
pub const DEFERRED: &str = "DEFERRED";
/// The reason a template row gives.
pub const NOT_ATTEMPTED: &str = "not attempted";

/// The kinds of native record a row can be filled from.
pub const RECORD_KINDS: [&str; 4] = ["scenario", "arena", "inspect", "hand"];

/// One checked row (an object holding exactly the declared attempt fields).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    fields: Map<String, Value>,
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

impl Row {
    /// The template row of a scheduled attempt: DEFERRED, "not attempted", lists empty, every
    /// other field null.
    pub fn template(decl: &Declaration, schedule_id: &str) -> Option<Row> {
        let entry = decl.schedule_entry(schedule_id)?;
        let task = decl.task(&entry.task)?;
        let fields = (decl.attempt_fields.iter())
            .map(|f| (f.clone(), template_field(f, &entry, task).to_value()))
            .collect();
        Some(Row { fields })
    }

    /// Check a row against the declaration (groups 3–6 of `ledger.md`), returning every reason.
    /// `at` names where the row came from (e.g. `rows[3]` or a file path).
    pub fn check(
        decl: &Declaration,
        value: &Value,
        at: &str,
    ) -> std::result::Result<Row, Vec<String>> {
        Self::check_reasons(decl, value, at).map_err(|r| r.iter().map(Reason::to_string).collect())
    }

    /// [`Row::check`] with each reason as a value: the row's own checks name the row, the field
    /// and the refusal group (`Rule::Ledger`), with the same text.
    pub fn check_reasons(
        decl: &Declaration,
        value: &Value,
        at: &str,
    ) -> std::result::Result<Row, Vec<Reason>> {
        match value {
            Value::Object(m) => {
                let row = Row { fields: m.clone() };
                check_members(decl, &row.fields, &at)?;
                Ok(row)
            }
            _ => Err(vec![Reason::new(format!(
                "{at}: a row must be an object, not {}",
                json::type_name(value)
            ))]),
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
        Value::Object(self.fields.clone())
    }

    /// The row's fields through a [`RowView`] (what the accessors below read).
    pub fn view(&self) -> RowView<'_, Map<String, Value>> {
        RowView {
            obj: &self.fields,
            at: None,
        }
    }
    pub fn schedule_id(&self) -> &str {
        self.view().schedule_id()
    }
    pub fn task_id(&self) -> &str {
        self.view().task_id()
    }
    pub fn native_outcome(&self) -> &str {
        self.view().native_outcome()
    }
    pub fn is_deferred(&self) -> bool {
        self.view().is_deferred()
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
        })
    }
}

/// A field of the template row of a scheduled attempt ([`Row::template`]).
fn template_field<'e>(field: &str, entry: &'e ScheduleEntry, task: &'e Task) -> J<'e, Value> {
    match field {
        "schedule_id" => J::String(&entry.id),
        "task_id" => J::String(&entry.task),
        "repetition" => J::Number(json::Num::Pos(entry.repetition)),
        "evidence" => J::String(task.evidence.as_str()),
        "native_outcome" => J::String(DEFERRED),
        "reason" => J::String(NOT_ATTEMPTED),
        "option_deviations" | "evidence_refs" | "interventions_decision_or_repair" => J::Array(&[]),
        _ => J::Null,
    }
}

/// The reasons one row is refused: those of [`check_members`]'s own checks name the row, the
/// field and the refusal group of `ledger.md`; the nested checks' are sentences (the same text).
#[derive(Default)]
struct RowReasons(Vec<Reason>);

impl RowReasons {
    fn push(&mut self, sentence: String) {
        self.0.push(Reason::new(sentence));
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn into_vec(self) -> Vec<Reason> {
        self.0
    }
}

/// Where a reason is: `row <schedule id>`, or `at` when the row has no schedule id. Written
/// only into a reason, so a row that passes costs no label.
struct Label<'a> {
    sid: Option<&'a str>,
    at: &'a dyn fmt::Display,
}

impl fmt::Display for Label<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.sid {
            Some(id) => write!(f, "row {id}"),
            None => self.at.fmt(f),
        }
    }
}

/// The row checks (groups 3–6 of `ledger.md`) of a row's members, seen through any JSON view:
/// the one row checker, run on the ordinary path's `Map`s ([`Row::check`]) and on the fast
/// path's [`json::Members`]. Every reason is returned; `at` names the row when it has no
/// schedule id. A row that passes is returned with its schedule position, as a [`RowView`]
/// that reads each standard field by its position among the members (found once, by the key
/// check).
pub(crate) fn check_members<'a, O: Obj>(
    decl: &'a Declaration,
    m: &'a O,
    at: &dyn fmt::Display,
) -> std::result::Result<(usize, RowView<'a, O>), Vec<Reason>> {
    let row = RowView {
        obj: m,
        at: decl.attempt_positions(m),
    };
    let mut r = RowReasons::default();
    let sid = row.str_field(Field::ScheduleId);
    let label = Label { sid, at };
    // A reason naming the row (or where it is), the field and the refusal group.
    let bad = |r: &mut RowReasons, group: u8, field: &str, msg: String| {
        let reason = Reason::new(msg).field(field).rule(Rule::Ledger(group));
        r.0.push(match sid {
            Some(id) => reason.row(id),
            None => reason.at(at),
        })
    };

    if row.at.is_none() {
        for f in &decl.attempt_fields {
            if !m.contains_key(f) {
                bad(&mut r, 3, f, "missing declared attempt field".into());
            }
        }
        for (k, _) in m.iter() {
            if !decl.attempt_fields.iter().any(|f| f == k) {
                bad(&mut r, 3, k, "undeclared attempt field".into());
            }
        }
    }
    let Some(sid) = sid else {
        if m.contains_key("schedule_id") {
            bad(&mut r, 3, "schedule_id", "must be a string".into());
        }
        return Err(r.into_vec());
    };
    let Some((position, task, repetition)) = decl.scheduled(sid) else {
        bad(
            &mut r,
            1,
            "schedule_id",
            format!("{sid:?} is not scheduled by the declaration (a retry needs a new declared schedule)"),
        );
        return Err(r.into_vec());
    };
    let get = |f: Field| row.get(f);

    // Group 3: types.
    match get(Field::TaskId) {
        J::String(t) if t == task.id => {}
        other => bad(
            &mut r,
            3,
            "task_id",
            format!("must be {:?}, not {other}", task.id),
        ),
    }
    match get(Field::Repetition).count() {
        Some(n) if n == repetition => {}
        _ => bad(
            &mut r,
            3,
            "repetition",
            format!("must be {}, not {}", repetition, get(Field::Repetition)),
        ),
    }
    // A relabeled row is otherwise well typed: its relabeling is reported beside what its
    // outcome implies (groups 5 and 6), so that every reason is listed.
    let mut relabeled = RowReasons::default();
    match get(Field::Evidence) {
        J::String(e) if Evidence::parse(e) == Some(task.evidence) => {}
        J::String(e) if Evidence::parse(e).is_some() => bad(
            &mut relabeled, 4,
            "evidence",
            format!("is {e:?} but task {} is declared {} (a fixture row is never relabeled live, nor the reverse)", task.id, task.evidence.as_str()),
        ),
        other => bad(&mut r, 3, "evidence", format!("must be \"live\" or \"fixture\", not {other}")),
    }
    let outcome = match get(Field::NativeOutcome) {
        J::String(o) if task.allows_outcome(o) => Some(o),
        J::String(o) => {
            bad(
                &mut r,
                4,
                "native_outcome",
                format!(
                    "{o:?} is not DEFERRED nor a native outcome task {} declares ({})",
                    task.id,
                    task.native_outcomes.join(", ")
                ),
            );
            None
        }
        other => {
            bad(
                &mut r,
                3,
                "native_outcome",
                format!("must be a string, not {other}"),
            );
            None
        }
    };
    for f in [Field::NativeStatus, Field::Reason] {
        if !matches!(get(f), J::Null | J::String(_)) {
            bad(
                &mut r,
                3,
                f.name(),
                format!("must be a string or null, not {}", get(f).type_name()),
            );
        }
    }
    match get(Field::SourceRevision) {
        J::Null => {}
        J::String(s) if crate::declaration::is_full_commit(s) => {}
        other => bad(
            &mut r,
            3,
            "source_revision",
            format!("must be a full hex commit id or null, not {other}"),
        ),
    }
    check_runtime_identity(&mut r, &label, get(Field::RuntimeIdentity));
    check_models(&mut r, &label, get(Field::ActualModelsAndEfforts));
    match get(Field::RunnerOptions) {
        J::Null => {}
        v => check_strings(&mut r, &label, "runner_options", v),
    }
    for f in [Field::OptionDeviations, Field::EvidenceRefs] {
        check_strings(&mut r, &label, f.name(), get(f));
    }
    check_oracle(&mut r, &label, get(Field::OracleChecks));
    for f in [Field::ElapsedSeconds, Field::EstimatedUsd] {
        check_amount(&mut r, &label, &f.name(), get(f));
    }
    match get(Field::Usage) {
        J::Null => {}
        J::Object(u) => {
            for (k, v) in u.iter() {
                match v.view() {
                    // An Inspect row's usage is `model_usage` as recorded: model → counts.
                    J::Object(counts) if task.kind == crate::declaration::Kind::Inspect => {
                        for (c, n) in counts.iter() {
                            check_amount(&mut r, &label, &format_args!("usage.{k}.{c}"), n.view());
                        }
                    }
                    v => check_amount(&mut r, &label, &format_args!("usage.{k}"), v),
                }
            }
        }
        other => bad(
            &mut r,
            3,
            "usage",
            format!("must be an object or null, not {}", other.type_name()),
        ),
    }
    match get(Field::SpentBudget) {
        J::Null => {}
        J::Object(s) => {
            for (k, v) in s.iter() {
                if !task.limits.contains_key(k) {
                    bad(
                        &mut r,
                        3,
                        &format!("spent_budget.{k}"),
                        format!(
                            "is not a limit task {} declares ({})",
                            task.id,
                            task.limits.keys().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    );
                }
                check_amount(&mut r, &label, &format_args!("spent_budget.{k}"), v.view());
            }
        }
        other => bad(
            &mut r,
            3,
            "spent_budget",
            format!("must be an object or null, not {}", other.type_name()),
        ),
    }
    check_interventions(&mut r, &label, get(Field::Interventions));
    check_native_record(&mut r, &label, get(Field::NativeRecord), task);

    let is_relabeled = !relabeled.is_empty();
    if !r.is_empty() {
        r.0.extend(relabeled.0);
        return Err(r.into_vec());
    }
    r.0.extend(relabeled.0);

    // Groups 5 and 6: what the outcome implies.
    match outcome {
        Some(DEFERRED) => {
            // Field by field, without building the template row.
            let entry = decl.schedule_entry(sid).expect("scheduled");
            for f in &decl.attempt_fields {
                if is_relabeled && f == "evidence" {
                    continue; // already reported
                }
                let (found, want) = (m.field(f), template_field(f, &entry, task));
                if !json::j_eq(found, want) {
                    let why = match f.as_str() {
                        "elapsed_seconds" | "usage" | "estimated_usd" | "spent_budget" => "a DEFERRED row carries no time, usage, cost or spend (an attempt that spent anything ran, and keeps its native outcome)",
                        _ => "a DEFERRED row must equal its template row",
                    };
                    bad(
                        &mut r,
                        6,
                        f,
                        format!("{why}: expected {want}, found {found}"),
                    );
                }
            }
        }
        Some("PASS") => {
            let status = get(Field::NativeStatus).as_str();
            let kind = task.kind;
            let want = match task.expects {
                Expects::Completion => kind.completion_status(),
                Expects::Stop => kind.stop_status().unwrap_or_default(),
            };
            let fits = status.is_some_and(|s| match task.expects {
                Expects::Completion => kind.is_completion_status(s),
                Expects::Stop => kind.is_stop_status(s),
            });
            if !fits {
                let want = if kind == crate::declaration::Kind::Inspect {
                    "completed or limit:<type>"
                } else {
                    want
                };
                let what = match status {
                    Some(s) if kind.is_stop_status(s) => {
                        format!("a stop ({s}) on a task that expects completion")
                    }
                    Some(s) if kind.is_completion_status(s) => {
                        format!("a completion ({s}) on a task that expects a stop")
                    }
                    Some(s) => format!("status {s:?} is neither completion nor stop"),
                    None => "no status".to_owned(),
                };
                bad(
                    &mut r,
                    5,
                    "native_status",
                    format!("a native PASS contradicts its own status: {what} (expected {want})"),
                );
            }
            for c in get(Field::OracleChecks).as_array().unwrap_or_default() {
                let c = c.view();
                if !c.get("ok").and_then(J::as_bool).unwrap_or(false) {
                    let name = c.get("name").and_then(J::as_str).unwrap_or_default();
                    bad(
                        &mut r,
                        5,
                        "oracle_checks",
                        format!("a PASS carries a failing oracle check {name:?}"),
                    );
                }
            }
        }
        Some(_)
            if get(Field::Reason)
                .as_str()
                .is_none_or(|s| s.trim().is_empty()) =>
        {
            bad(
                &mut r,
                6,
                "reason",
                "every row that is not a PASS states a reason".into(),
            );
        }
        Some(_) => {}
        None => {}
    }
    if r.is_empty() {
        Ok((position, row))
    } else {
        Err(r.into_vec())
    }
}

/// A checked row's fields through any JSON view: a [`Row`]'s `Map` ([`Row::view`]), or a row
/// the fast path parsed into [`json::Members`] and checked with the same `check_members`.
/// The accessors the report and the classification read.
pub struct RowView<'a, O> {
    obj: &'a O,
    /// Where each standard field is among the members, for a row whose keys are exactly the
    /// declared ones ([`Declaration::attempt_positions`]); else fields are found by name.
    at: Option<&'a StandardAt>,
}

impl<O> Clone for RowView<'_, O> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<O> Copy for RowView<'_, O> {}

impl<'a, O: Obj> RowView<'a, O> {
    /// The value of a standard field (null when missing).
    fn get(self, f: Field) -> J<'a, O::V> {
        match self.at {
            Some(at) => self.obj.field_at(at[f as usize], f.name()),
            None => self.obj.field(f.name()),
        }
    }
    fn str_field(self, f: Field) -> Option<&'a str> {
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
enum Field {
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
    fn name(self) -> &'static str {
        STANDARD_FIELDS[self as usize]
    }
}

fn strs<V: View>(v: J<'_, V>) -> impl Iterator<Item = &str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.view().as_str())
}

fn check_strings<V: View>(r: &mut RowReasons, label: &Label, field: &str, v: J<'_, V>) {
    match v {
        J::Array(items) if items.iter().all(|i| i.view().is_string()) => {}
        J::Array(_) => r.push(format!(
            "{label}: {field}: must be a list of strings (an entry is not a string)"
        )),
        other => r.push(format!(
            "{label}: {field}: must be a list of strings, not {}",
            other.type_name()
        )),
    }
}

fn check_amount<V: View>(r: &mut RowReasons, label: &Label, field: &dyn fmt::Display, v: J<'_, V>) {
    if !v.is_null() && v.nonneg_number().is_none() {
        r.push(format!(
            "{label}: {field}: must be a nonnegative finite number or null, not {v}"
        ));
    }
}

fn check_runtime_identity<V: View>(r: &mut RowReasons, label: &Label, v: J<'_, V>) {
    match v {
        J::Null => {}
        J::Object(m) => {
            if let Some(deps) = m.get("dependencies") {
                let ok = match deps.view() {
                    J::Array(items) => items.iter().all(|i| i.view().is_string()),
                    J::Object(o) => o.field("sha256").is_string(),
                    _ => false,
                };
                if !ok {
                    r.push(format!("{label}: runtime_identity.dependencies: must be a list of \"name==version\" strings or an object with a \"sha256\""));
                }
            }
        }
        other => r.push(format!(
            "{label}: runtime_identity: must be an object or null, not {}",
            other.type_name()
        )),
    }
}

/// A string or null (a member that is missing is neither).
fn string_or_null<V: View>(v: Option<&V>) -> bool {
    v.is_some_and(|v| matches!(v.view(), J::String(_) | J::Null))
}

fn check_models<V: View>(r: &mut RowReasons, label: &Label, v: J<'_, V>) {
    let field = "actual_models_and_efforts";
    let m = match v {
        J::Null => return,
        J::Object(m) => m,
        other => {
            r.push(format!(
                "{label}: {field}: must be an object or null, not {}",
                other.type_name()
            ));
            return;
        }
    };
    for (k, _) in m.iter() {
        if k != "provider" && k != "roles" {
            r.push(format!(
                "{label}: {field}.{k}: unknown key (expected provider and roles)"
            ));
        }
    }
    if !string_or_null(m.get("provider")) {
        r.push(format!(
            "{label}: {field}.provider: must be a string or null"
        ));
    }
    match m.get("roles").map(View::view) {
        Some(J::Object(roles)) => {
            for (role, spec) in roles.iter() {
                let ok = spec.view().as_object().is_some_and(|s| {
                    s.len() == 2 && ["model", "effort"].iter().all(|k| string_or_null(s.get(k)))
                });
                if !ok {
                    r.push(format!("{label}: {field}.roles.{role}: must be {{\"model\": string or null, \"effort\": string or null}}"));
                }
            }
        }
        _ => r.push(format!(
            "{label}: {field}.roles: must be an object of roles"
        )),
    }
}

fn check_oracle<V: View>(r: &mut RowReasons, label: &Label, v: J<'_, V>) {
    match v {
        J::Null => {}
        J::Array(items) => {
            for (i, c) in items.iter().enumerate() {
                let ok = c.view().as_object().is_some_and(|o| {
                    o.len() == 2
                        && o.field("name").is_string()
                        && matches!(o.field("ok"), J::Bool(_))
                });
                if !ok {
                    r.push(format!("{label}: oracle_checks[{i}]: must be {{\"name\": string, \"ok\": boolean}}"));
                }
            }
        }
        other => r.push(format!(
            "{label}: oracle_checks: must be a list or null, not {}",
            other.type_name()
        )),
    }
}

fn check_interventions<V: View>(r: &mut RowReasons, label: &Label, v: J<'_, V>) {
    let field = "interventions_decision_or_repair";
    match v {
        J::Array(items) => {
            for (i, it) in items.iter().enumerate() {
                let ok = it.view().as_object().is_some_and(|o| {
                    o.len() == 2
                        && matches!(o.field("kind").as_str(), Some("decision") | Some("repair"))
                        && o.field("note").is_string()
                });
                if !ok {
                    r.push(format!("{label}: {field}[{i}]: must be {{\"kind\": \"decision\" or \"repair\", \"note\": string}}"));
                }
            }
        }
        other => r.push(format!(
            "{label}: {field}: must be a list, not {}",
            other.type_name()
        )),
    }
}

fn check_native_record<V: View>(r: &mut RowReasons, label: &Label, v: J<'_, V>, task: &Task) {
    match v {
        J::Null => {}
        J::Object(o) => {
            let kind = o.field("kind").as_str();
            let shape = o.len() == 3
                && kind.is_some_and(|k| RECORD_KINDS.contains(&k))
                && o.field("id").as_str().is_some_and(|s| !s.is_empty())
                && o.field("sha256")
                    .as_str()
                    .is_some_and(crate::declaration::is_sha256);
            if !shape {
                r.push(format!("{label}: native_record: must be {{\"kind\": \"scenario\", \"arena\", \"inspect\" or \"hand\", \"id\": string, \"sha256\": hex}} or null"));
            } else {
                let kind = kind.unwrap_or_default();
                if kind != "hand" && kind != task.kind.as_str() {
                    r.push(format!("{label}: native_record.kind: a {kind} record cannot fill a row of {} task {}", task.kind.as_str(), task.id));
                }
            }
        }
        other => r.push(format!(
            "{label}: native_record: must be an object or null, not {}",
            other.type_name()
        )),
    }
}

struct RowSer<'a> {
    row: &'a Row,
    fields: &'a [String],
}

impl Serialize for RowSer<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.fields.len()))?;
        for f in self.fields {
            m.serialize_entry(f, self.row.get(f))?;
        }
        m.end()
    }
}

/// A whole ledger: one checked row per scheduled attempt, in schedule order.
#[derive(Debug, Clone, PartialEq)]
pub struct Ledger {
    pub declaration_id: String,
    pub declaration_sha256: String,
    pub rows: Vec<Row>,
}

impl Ledger {
    /// The template ledger: every row DEFERRED.
    pub fn template(decl: &Declaration) -> Ledger {
        Ledger {
            declaration_id: decl.id.clone(),
            declaration_sha256: decl.sha256.clone(),
            rows: decl
                .schedule()
                .map(|e| Row::template(decl, &e.id).expect("scheduled"))
                .collect(),
        }
    }

    /// Parse a ledger document and apply every refusal rule of `ledger.md` against `decl`.
    pub fn parse(decl: &Declaration, bytes: &[u8], max_input_bytes: u64) -> Result<Ledger> {
        // The fast path (rows parsed and checked on every core) says only yes; a ledger it does
        // not accept is parsed again by the ordinary path, which names every fault.
        if bytes.len() as u64 <= max_input_bytes {
            if let Some(ledger) = fast::parse(decl, bytes) {
                return Ok(ledger);
            }
        }
        let value = json::parse_document(bytes, "ledger", max_input_bytes)?;
        Self::from_owned_value(decl, value)
    }

    /// [`Ledger::parse`] for the new side of a change: every check but "two rows name the same
    /// `native_record`" (group 7), which [`crate::admission::admit`] decides for a change
    /// against the state it follows (as rule 5), so that a ledger file and a ledger ref name the
    /// same row, field and rule for it.
    /// Every reason is a value: a row's own checks name the row, the field and the refusal
    /// group; the rest are sentences.
    pub fn parse_for_change(
        decl: &Declaration,
        bytes: &[u8],
        max_input_bytes: u64,
    ) -> std::result::Result<Ledger, Reasons> {
        if bytes.len() as u64 <= max_input_bytes {
            if let Some(ledger) = fast::parse(decl, bytes) {
                return Ok(ledger);
            }
        }
        let sentences = |e: Error| e.into_reasons();
        let mut value =
            json::parse_document(bytes, "ledger", max_input_bytes).map_err(sentences)?;
        let mut rows_value = match &mut value {
            Value::Object(top) => top.remove("rows"),
            _ => None,
        };
        let mut r = Reasons::new();
        check_top(&mut r, decl, &value).map_err(sentences)?;
        let rows = match rows_value.take() {
            Some(Value::Array(rows)) => rows,
            Some(other) => {
                r.push(format!(
                    "ledger: rows: must be a list, not {}",
                    json::type_name(&other)
                ));
                Vec::new()
            }
            None => {
                r.push("ledger: rows: missing");
                Vec::new()
            }
        };
        let checked = (rows.into_iter().enumerate()).map(|(i, v)| checked_row(decl, i, v));
        Ok(Ledger {
            declaration_id: decl.id.clone(),
            declaration_sha256: decl.sha256.clone(),
            rows: assemble_rows(decl, r, checked, false).map_err(Reasons::from)?,
        })
    }

    /// [`Ledger::parse_for_change`] of a ledger file.
    pub fn read_for_change(
        decl: &Declaration,
        path: &std::path::Path,
        max_input_bytes: u64,
    ) -> Result<Ledger> {
        let bytes = json::read_mapped(path, max_input_bytes)?;
        Self::parse_for_change(decl, &bytes, max_input_bytes)
            .map_err(Error::Refused)
            .map_err(|e| e.context(path.display()))
    }

    /// [`Ledger::parse`] keeping only what `keep` takes of each checked row, in schedule order:
    /// the same checks and refusals, but on the fast path no row is built as a [`Row`] (each is
    /// parsed into [`json::Members`], checked by `check_members`, kept and dropped on the
    /// core that parsed it; `report` of 100,000 rows never holds them all). A ledger the fast
    /// path does not accept is parsed by the ordinary path, exactly as [`Ledger::parse`] does.
    pub fn parse_kept<K: Keep>(
        decl: &Declaration,
        bytes: &[u8],
        max_input_bytes: u64,
        keep: &K,
    ) -> Result<KeptRows<K::Kept>> {
        if bytes.len() as u64 <= max_input_bytes {
            if let Some(kept) = fast::parse_kept(decl, bytes, keep) {
                return Ok(kept);
            }
        }
        let value = json::parse_document(bytes, "ledger", max_input_bytes)?;
        let ledger = Self::from_owned_value(decl, value)?;
        let kept: Vec<K::Kept> = ledger
            .rows
            .iter()
            .map(|row| keep.keep(decl, row.view()))
            .collect();
        Ok(kept.into())
    }

    /// Read and check a ledger file.
    pub fn read(
        decl: &Declaration,
        path: &std::path::Path,
        max_input_bytes: u64,
    ) -> Result<Ledger> {
        let bytes = json::read_mapped(path, max_input_bytes)?;
        Self::parse(decl, &bytes, max_input_bytes).map_err(|e| e.context(path.display()))
    }

    /// Check a parsed ledger document.
    pub fn from_value(decl: &Declaration, value: &Value) -> Result<Ledger> {
        Self::from_owned_value(decl, value.clone())
    }

    /// [`Ledger::from_value`] of a document the caller owns: each row keeps its parsed fields
    /// without a copy.
    pub fn from_owned_value(decl: &Declaration, mut value: Value) -> Result<Ledger> {
        let mut rows_value = match &mut value {
            Value::Object(top) => top.remove("rows"),
            _ => None,
        };
        let mut r = Reasons::new();
        check_top(&mut r, decl, &value)?;
        let rows = match rows_value.take() {
            Some(Value::Array(rows)) => rows,
            Some(other) => {
                r.push(format!(
                    "ledger: rows: must be a list, not {}",
                    json::type_name(&other)
                ));
                Vec::new()
            }
            None => {
                r.push("ledger: rows: missing");
                Vec::new()
            }
        };
        let checked = rows
            .into_iter()
            .enumerate()
            .map(|(i, v)| checked_row(decl, i, v));
        assemble(decl, r, checked)
    }

    /// The row of a schedule id.
    pub fn row(&self, decl: &Declaration, schedule_id: &str) -> Option<&Row> {
        decl.schedule_position(schedule_id)
            .and_then(|i| self.rows.get(i))
    }

    /// How many rows hold an attempt.
    pub fn filled(&self) -> usize {
        self.rows.iter().filter(|r| !r.is_deferred()).count()
    }

    /// The ledger document's canonical bytes.
    pub fn canonical(&self, decl: &Declaration) -> Vec<u8> {
        json::canonical(&DocSer {
            ledger: self,
            fields: &decl.attempt_fields,
        })
    }

    /// The header object `{"id", "sha256"}` of the declaration.
    pub fn declaration_header(&self) -> Value {
        serde_json::json!({"id": self.declaration_id, "sha256": self.declaration_sha256})
    }
}

/// The document's top level without its rows: an object of `format`, `declaration` and `rows`.
fn check_top(r: &mut Reasons, decl: &Declaration, value: &Value) -> Result<()> {
    let Value::Object(top) = value else {
        return Err(Error::refused(format!(
            "ledger: must be an object, not {}",
            json::type_name(value)
        )));
    };
    for k in top.keys() {
        if !["format", "declaration", "rows"].contains(&k.as_str()) {
            r.push(format!("ledger: {k}: unknown key"));
        }
    }
    match top.get("format") {
        Some(Value::String(f)) if f == FORMAT => {}
        other => r.push(format!(
            "ledger: format: must be {FORMAT:?}, not {}",
            other.map_or("missing".to_owned(), |v| v.to_string())
        )),
    }
    check_header_declaration(r, decl, top.get("declaration"));
    Ok(())
}

/// A checked row, or why it was refused with its schedule id as written (for the
/// one-row-per-id check; a row that passed has its own).
type Checked = std::result::Result<Row, (Option<String>, Vec<Reason>)>;

/// `rows[i]`, naming a row without a schedule id in a reason.
struct RowAt(usize);

impl fmt::Display for RowAt {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "rows[{}]", self.0)
    }
}

/// Check `rows[i]`.
fn checked_row(decl: &Declaration, i: usize, v: Value) -> Checked {
    let fields = match v {
        Value::Object(fields) => fields,
        other => {
            let what = format!(
                "{}: a row must be an object, not {}",
                RowAt(i),
                json::type_name(&other)
            );
            return Err((None, vec![Reason::new(what)]));
        }
    };
    match check_members(decl, &fields, &RowAt(i)) {
        Ok(_) => Ok(Row { fields }),
        Err(reasons) => {
            let sid = fields.get("schedule_id").and_then(Value::as_str);
            Err((sid.map(str::to_owned), reasons))
        }
    }
}

/// What [`Ledger::parse_kept`] keeps of each checked row, read through a [`RowView`] (on the
/// fast path a row is never a [`Row`]).
pub trait Keep: Sync {
    type Kept: Send;
    fn keep<O: Obj>(&self, decl: &Declaration, row: RowView<'_, O>) -> Self::Kept;
}

/// What [`Ledger::parse_kept`] kept of every row, in schedule order. The rows stay in the
/// lists each core kept them in (moving 100,000 kept rows into one list took a pass on one
/// core, and fresh memory, for nothing: they are read once, in order).
pub struct KeptRows<T>(Vec<Vec<Placed<T>>>);

/// What the fast path keeps of a checked row: the caller's part, and what the ledger-level
/// rules ask of the row, found on the core that parsed it.
pub(crate) struct Placed<T> {
    /// The row's position in the schedule.
    pos: usize,
    /// Its record key (`<kind>:<id>`), hashed: equal keys hash alike.
    record: Option<u64>,
    kept: T,
}

impl<T> KeptRows<T> {
    /// Rows kept in the given lists, in order: their positions are their places in the whole
    /// (no record key: checking is done with them).
    pub(crate) fn in_lists(lists: Vec<Vec<T>>) -> Self {
        let mut pos = 0;
        let mut place = |kept| {
            pos += 1;
            Placed {
                pos: pos - 1,
                record: None,
                kept,
            }
        };
        KeptRows(
            lists
                .into_iter()
                .map(|list| list.into_iter().map(&mut place).collect())
                .collect(),
        )
    }
    /// How many rows.
    pub fn len(&self) -> usize {
        self.0.iter().map(Vec::len).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The rows, in schedule order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.0.iter().flatten().map(|p| &p.kept)
    }
    /// The rows in two parts of about half each (cut between the lists they are kept in), in
    /// order: for work that can be shared by two cores.
    pub fn halves(self) -> (KeptRows<T>, KeptRows<T>) {
        let half = self.len() / 2;
        let mut lists = self.0;
        let (mut cut, mut seen) = (0, 0);
        while cut < lists.len() && seen + lists[cut].len() <= half {
            seen += lists[cut].len();
            cut += 1;
        }
        // A first list longer than half stays whole on the first side.
        let second = lists.split_off(cut.max(1).min(lists.len()));
        (KeptRows(lists), KeptRows(second))
    }
}

/// Rows kept in one list, in order (as `report` of a ledger read whole keeps them).
impl<T> From<Vec<T>> for KeptRows<T> {
    fn from(rows: Vec<T>) -> Self {
        Self::in_lists(vec![rows])
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for KeptRows<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T> IntoIterator for KeptRows<T> {
    type Item = T;
    type IntoIter = KeptIter<T>;
    fn into_iter(self) -> KeptIter<T> {
        KeptIter {
            left: self.len(),
            rows: self.0.into_iter().flatten(),
        }
    }
}

/// The rows of [`KeptRows`], in schedule order.
pub struct KeptIter<T> {
    rows: std::iter::Flatten<std::vec::IntoIter<Vec<Placed<T>>>>,
    left: usize,
}

impl<T> Iterator for KeptIter<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        let row = self.rows.next()?;
        self.left -= 1;
        Some(row.kept)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T> ExactSizeIterator for KeptIter<T> {}

/// The ledger of checked rows, in document order: one row per schedule id, in schedule order,
/// one record per row, none missing. `r` holds the reasons found so far.
fn assemble(decl: &Declaration, r: Reasons, rows: impl Iterator<Item = Checked>) -> Result<Ledger> {
    Ok(Ledger {
        declaration_id: decl.id.clone(),
        declaration_sha256: decl.sha256.clone(),
        rows: assemble_rows(decl, r, rows, true).map_err(|r| Error::Refused(r.into()))?,
    })
}

/// The checked rows of [`assemble`], in schedule order. `check_records`: refuse two rows that name
/// one record (group 7).
fn assemble_rows(
    decl: &Declaration,
    r: Reasons,
    rows: impl Iterator<Item = Checked>,
    check_records: bool,
) -> std::result::Result<Vec<Row>, Vec<Reason>> {
    let mut r: Vec<Reason> = r.into_vec();
    let n = decl.schedule_len();
    // The rows, while they come in schedule order. A ledger whose rows do not (one out of
    // order, a gap, a refused row) is refused below, so nothing after that is kept.
    let mut out = Vec::with_capacity(n);
    // The last row naming each schedule id: by schedule position for a scheduled id (none:
    // `usize::MAX`), by the id as written otherwise.
    let mut seen = vec![usize::MAX; n];
    let mut seen_unscheduled: HashMap<String, usize> = HashMap::new();
    // Each record key, and the schedule position of the last row it filled.
    let mut records: HashMap<String, usize> = HashMap::with_capacity(n);
    // The furthest schedule position seen so far: rows are in schedule order, and a row
    // out of it is refused rather than silently moved.
    let mut furthest: Option<usize> = None;
    for (i, checked) in rows.enumerate() {
        let sid = match &checked {
            Ok(row) => Some(row.schedule_id()),
            Err((sid, _)) => sid.as_deref(),
        };
        let pos = sid.and_then(|sid| decl.schedule_position(sid));
        if let Some(sid) = sid {
            let before = match pos {
                Some(pos) => {
                    Some(std::mem::replace(&mut seen[pos], i)).filter(|&b| b != usize::MAX)
                }
                None => seen_unscheduled.insert(sid.to_owned(), i),
            };
            if let Some(first) = before {
                r.push(Reason::new(format!("ledger: rows[{i}]: scheduled attempt {sid} appears twice (also rows[{first}]); one row per schedule id, the original row stays")));
                continue;
            }
        }
        match checked {
            Ok(row) => {
                let pos = pos.expect("checked");
                if let Some(key) = row
                    .native_record()
                    .map(|rec| rec.key())
                    .filter(|_| check_records)
                {
                    if let Some(other) = records.get_mut(&key) {
                        let other = std::mem::replace(other, pos);
                        r.push(
                            Reason::new(format!(
                                "record {key} already filled row {} (one record cannot fill two rows)",
                                decl.schedule_at(other).id
                            ))
                            .row(row.schedule_id())
                            .field("native_record")
                            .rule(Rule::Ledger(7)),
                        );
                    } else {
                        records.insert(key, pos);
                    }
                }
                match furthest {
                    Some(last) if pos < last => r.push(Reason::new(format!(
                        "ledger: rows[{i}]: scheduled attempt {} is out of schedule order (it comes before {}; rows are in schedule order)",
                        row.schedule_id(),
                        decl.schedule_at(last).id
                    ))),
                    _ => furthest = Some(pos),
                }
                if pos == out.len() {
                    out.push(row);
                }
            }
            Err((_, reasons)) => r.extend(reasons),
        }
    }
    // A schedule id no row names (a row that names one and passed was seen too).
    for (pos, _) in seen.iter().enumerate().filter(|(_, &i)| i == usize::MAX) {
        let entry = decl.schedule_at(pos);
        r.push(Reason::new(format!("ledger: scheduled attempt {} is missing (every schedule id appears exactly once, DEFERRED if not attempted)", entry.id)));
    }
    if !r.is_empty() {
        return Err(r);
    }
    assert_eq!(
        out.len(),
        n,
        "a ledger refused for nothing has every row in order"
    );
    Ok(out)
}

/// Check a `declaration` header object (`{"id", "sha256"}`) against the declaration.
pub fn check_header_declaration(r: &mut Reasons, decl: &Declaration, v: Option<&Value>) {
    match v {
        Some(Value::Object(d)) => {
            for k in d.keys() {
                if k != "id" && k != "sha256" {
                    r.push(format!("ledger: declaration.{k}: unknown key"));
                }
            }
            match d.get("id") {
                Some(Value::String(id)) if *id == decl.id => {}
                other => r.push(format!(
                    "ledger: declaration.id: names {}, but the declaration is {:?}",
                    other.map_or("nothing".to_owned(), |v| v.to_string()),
                    decl.id
                )),
            }
            match d.get("sha256") {
                Some(Value::String(h)) if *h == decl.sha256 => {}
                other => r.push(format!(
                    "ledger: declaration.sha256: names {}, but the declaration's bytes hash to {} (its bytes changed after admission, or it is another declaration)",
                    other.map_or("nothing".to_owned(), |v| v.to_string()),
                    decl.sha256
                )),
            }
        }
        Some(other) => r.push(format!(
            "ledger: declaration: must be {{\"id\", \"sha256\"}}, not {}",
            json::type_name(other)
        )),
        None => r.push("ledger: declaration: missing".to_owned()),
    }
}

struct DocSer<'a> {
    ledger: &'a Ledger,
    fields: &'a [String],
}

struct RowsSer<'a>(&'a DocSer<'a>);

impl Serialize for RowsSer<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.ledger.rows.len()))?;
        for row in &self.0.ledger.rows {
            seq.serialize_element(&RowSer {
                row,
                fields: self.0.fields,
            })?;
        }
        seq.end()
    }
}

impl Serialize for DocSer<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("format", FORMAT)?;
        m.serialize_entry("declaration", &self.ledger.declaration_header())?;
        m.serialize_entry("rows", &RowsSer(self))?;
        m.end()
    }
}

/// The standard fields, for code that must not depend on a declaration's additions.
pub fn is_standard_field(f: &str) -> bool {
    STANDARD_FIELDS.contains(&f)
}

#[cfg(test)]
mod tests;
