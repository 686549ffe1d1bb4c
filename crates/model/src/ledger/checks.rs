//! The row checks (refusal groups 1–7 of `ledger.md`), written once over [`json::View`] so the
//! ordinary path (`serde_json::Value`) and the fast path (`json::Node`) refuse alike: each
//! reason names the row, the field and its group. The template row's fields are here too,
//! since a DEFERRED row is checked against them.

use serde_json::Value;
use std::fmt;

use super::view::{Field, RowView};
use super::{DEFERRED, NOT_ATTEMPTED, RECORD_KINDS};
use crate::declaration::{Declaration, Evidence, Expects, Task};
use crate::json::{self, Obj, View, J};
use crate::refusal::{Reason, Rule};

/// The reasons one row is refused: those of [`check_members`]'s own checks name the row, the
/// field and the refusal group of `ledger.md`; the nested checks' are sentences (the same text).
#[derive(Default)]
struct RowReasons(Vec<Reason>);

impl RowReasons {
    /// A reason about the row `label` names (or where it is): the field and its refusal group.
    fn push(&mut self, label: &Label, group: u8, field: impl Into<String>, sentence: String) {
        let reason = Reason::new(sentence).field(field).rule(Rule::Ledger(group));
        self.0.push(match label.sid {
            Some(id) => reason.row(id),
            None => reason.at(label.at),
        });
    }
    /// A field of the wrong type (refusal group 3), about the row `label` names.
    fn typed(&mut self, label: &Label, field: impl Into<String>, sentence: String) {
        self.push(label, 3, field, sentence);
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn into_vec(self) -> Vec<Reason> {
        self.0
    }
}

/// Whom a reason is about: the row `sid` names, or the place `at` when the row has no
/// schedule id.
struct Label<'a> {
    sid: Option<&'a str>,
    at: &'a dyn fmt::Display,
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

    if row.at.is_none() {
        check_keys(&mut r, &label, decl, m);
    }
    let scheduled = check_scheduled(&mut r, &label, decl, m);
    let (Some(sid), Some((position, task, repetition))) = (sid, scheduled) else {
        return Err(r.into_vec());
    };

    // Group 3: types (and group 4: a value the task does not declare).
    check_place(&mut r, &label, row, task, repetition);
    // A relabeled row is otherwise well typed: its relabeling is reported beside what its
    // outcome implies (groups 5 and 6), so that every reason is listed.
    let mut relabeled = RowReasons::default();
    check_evidence(&mut r, &mut relabeled, &label, row, task);
    let outcome = check_outcome(&mut r, &label, row, task);
    check_types(&mut r, &label, row, task);

    let is_relabeled = !relabeled.is_empty();
    let well_typed = r.is_empty();
    r.0.extend(relabeled.0);
    if !well_typed {
        return Err(r.into_vec());
    }

    // Groups 5 and 6: what the outcome implies.
    match outcome {
        Some(DEFERRED) => check_deferred(
            &mut r,
            &label,
            decl,
            m,
            (sid, repetition),
            task,
            is_relabeled,
        ),
        Some("PASS") => check_pass(&mut r, &label, row, task),
        Some(_) => check_reason_stated(&mut r, &label, row),
        None => {}
    }
    if r.is_empty() {
        Ok((position, row))
    } else {
        Err(r.into_vec())
    }
}

/// Group 3: the row's keys are exactly the declared `attempt_fields` (asked only when the
/// fast key check did not find them so).
fn check_keys<O: Obj>(r: &mut RowReasons, label: &Label, decl: &Declaration, m: &O) {
    for f in &decl.attempt_fields {
        if !m.contains_key(f) {
            r.push(label, 3, f, "missing declared attempt field".into());
        }
    }
    for (k, _) in m.iter() {
        if !decl.attempt_fields.iter().any(|f| f == k) {
            r.push(label, 3, k, "undeclared attempt field".into());
        }
    }
}

/// The row's place in the schedule (position, task, repetition), or `None` with its reason: a
/// schedule id that is not a string (group 3) or that the declaration does not schedule
/// (group 1). A row without a `schedule_id` member gets no reason here (the key check named it).
fn check_scheduled<'d, O: Obj>(
    r: &mut RowReasons,
    label: &Label,
    decl: &'d Declaration,
    m: &O,
) -> Option<(usize, &'d Task, u64)> {
    let Some(sid) = label.sid else {
        if m.contains_key("schedule_id") {
            r.push(label, 3, "schedule_id", "must be a string".into());
        }
        return None;
    };
    let scheduled = decl.scheduled(sid);
    if scheduled.is_none() {
        r.push(
            label,
            1,
            "schedule_id",
            format!("{sid:?} is not scheduled by the declaration (a retry needs a new declared schedule)"),
        );
    }
    scheduled
}

/// Group 3: `task_id` and `repetition` are those the schedule id names.
fn check_place<O: Obj>(
    r: &mut RowReasons,
    label: &Label,
    row: RowView<'_, O>,
    task: &Task,
    repetition: u64,
) {
    match row.get(Field::TaskId) {
        J::String(t) if t == task.id => {}
        other => r.push(
            label,
            3,
            "task_id",
            format!("must be {:?}, not {other}", task.id),
        ),
    }
    match row.get(Field::Repetition).count() {
        Some(n) if n == repetition => {}
        _ => r.push(
            label,
            3,
            "repetition",
            format!("must be {}, not {}", repetition, row.get(Field::Repetition)),
        ),
    }
}

/// `evidence`: the task's declared evidence; another valid one is a relabeling (group 4, kept
/// in `relabeled`), anything else a type error (group 3).
fn check_evidence<O: Obj>(
    r: &mut RowReasons,
    relabeled: &mut RowReasons,
    label: &Label,
    row: RowView<'_, O>,
    task: &Task,
) {
    match row.get(Field::Evidence) {
        J::String(e) if Evidence::parse(e) == Some(task.evidence) => {}
        J::String(e) if Evidence::parse(e).is_some() => relabeled.push(
            label, 4,
            "evidence",
            format!("is {e:?} but task {} is declared {} (a fixture row is never relabeled live, nor the reverse)", task.id, task.evidence.as_str()),
        ),
        other => r.push(label, 3, "evidence", format!("must be \"live\" or \"fixture\", not {other}")),
    }
}

/// `native_outcome`: DEFERRED or an outcome the task declares (group 4), a string (group 3).
/// The outcome is returned when it is one of those.
fn check_outcome<'a, O: Obj>(
    r: &mut RowReasons,
    label: &Label,
    row: RowView<'a, O>,
    task: &Task,
) -> Option<&'a str> {
    match row.get(Field::NativeOutcome) {
        J::String(o) if task.allows_outcome(o) => Some(o),
        J::String(o) => {
            r.push(
                label,
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
            r.push(
                label,
                3,
                "native_outcome",
                format!("must be a string, not {other}"),
            );
            None
        }
    }
}

/// Group 3: the types of the fields after the outcome, in `STANDARD_FIELDS` order.
fn check_types<O: Obj>(r: &mut RowReasons, label: &Label, row: RowView<'_, O>, task: &Task) {
    let get = |f: Field| row.get(f);
    for f in [Field::NativeStatus, Field::Reason] {
        if !matches!(get(f), J::Null | J::String(_)) {
            r.push(
                label,
                3,
                f.name(),
                format!("must be a string or null, not {}", get(f).type_name()),
            );
        }
    }
    match get(Field::SourceRevision) {
        J::Null => {}
        J::String(s) if crate::declaration::is_full_commit(s) => {}
        other => r.push(
            label,
            3,
            "source_revision",
            format!("must be a full hex commit id or null, not {other}"),
        ),
    }
    check_runtime_identity(r, label, get(Field::RuntimeIdentity));
    check_models(r, label, get(Field::ActualModelsAndEfforts));
    match get(Field::RunnerOptions) {
        J::Null => {}
        v => check_strings(r, label, "runner_options", v),
    }
    for f in [Field::OptionDeviations, Field::EvidenceRefs] {
        check_strings(r, label, f.name(), get(f));
    }
    check_oracle(r, label, get(Field::OracleChecks));
    for f in [Field::ElapsedSeconds, Field::EstimatedUsd] {
        check_amount(r, label, &f.name(), get(f));
    }
    check_usage(r, label, get(Field::Usage), task);
    check_spent_budget(r, label, get(Field::SpentBudget), task);
    check_interventions(r, label, get(Field::Interventions));
    check_native_record(r, label, get(Field::NativeRecord), task);
}

/// `usage`: null, or an object of amounts; an Inspect row's holds counts per model, a Harbor
/// row's `model_usage` counts per model ([`check_harbor_model_usage`]).
fn check_usage<V: View>(r: &mut RowReasons, label: &Label, v: J<'_, V>, task: &Task) {
    match v {
        J::Null => {}
        J::Object(u) => {
            for (k, v) in u.iter() {
                match v.view() {
                    // An Inspect row's usage is `model_usage` as recorded: model → counts.
                    J::Object(counts) if task.kind == crate::declaration::Kind::Inspect => {
                        for (c, n) in counts.iter() {
                            check_amount(r, label, &format_args!("usage.{k}.{c}"), n.view());
                        }
                    }
                    J::Object(models)
                        if task.kind == crate::declaration::Kind::Harbor && k == "model_usage" =>
                    {
                        check_harbor_model_usage::<V>(r, label, models);
                    }
                    v => check_amount(r, label, &format_args!("usage.{k}"), v),
                }
            }
        }
        other => r.push(
            label,
            3,
            "usage",
            format!("must be an object or null, not {}", other.type_name()),
        ),
    }
}

/// A Harbor row's `usage.model_usage`: model → its counts and cost, each an amount.
fn check_harbor_model_usage<V: View>(r: &mut RowReasons, label: &Label, models: &V::Obj) {
    for (model, counts) in models.iter() {
        match counts.view() {
            J::Object(counts) => {
                for (c, n) in counts.iter() {
                    check_amount(
                        r,
                        label,
                        &format_args!("usage.model_usage.{model}.{c}"),
                        n.view(),
                    );
                }
            }
            other => r.typed(
                label,
                format!("usage.model_usage.{model}"),
                format!("must be an object, not {}", other.type_name()),
            ),
        }
    }
}

/// `spent_budget`: null, or an amount per limit the task declares.
fn check_spent_budget<V: View>(r: &mut RowReasons, label: &Label, v: J<'_, V>, task: &Task) {
    match v {
        J::Null => {}
        J::Object(s) => {
            for (k, v) in s.iter() {
                if !task.limits.contains_key(k) {
                    r.push(
                        label,
                        3,
                        format!("spent_budget.{k}"),
                        format!(
                            "is not a limit task {} declares ({})",
                            task.id,
                            task.limits.keys().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    );
                }
                check_amount(r, label, &format_args!("spent_budget.{k}"), v.view());
            }
        }
        other => r.push(
            label,
            3,
            "spent_budget",
            format!("must be an object or null, not {}", other.type_name()),
        ),
    }
}

/// Group 6: a DEFERRED row equals its template row, field by field (without building the
/// template row); a relabeled `evidence` is not reported twice.
fn check_deferred<O: Obj>(
    r: &mut RowReasons,
    label: &Label,
    decl: &Declaration,
    m: &O,
    // The row's schedule id and repetition, scheduled (the id as the schedule writes it: its
    // position was found from it).
    (sid, repetition): (&str, u64),
    task: &Task,
    is_relabeled: bool,
) {
    for f in &decl.attempt_fields {
        if is_relabeled && f == "evidence" {
            continue; // already reported
        }
        let (found, want) = (m.field(f), template_field(f, sid, repetition, task));
        if !json::j_eq(found, want) {
            let why = match f.as_str() {
                "elapsed_seconds" | "usage" | "estimated_usd" | "spent_budget" => "a DEFERRED row carries no time, usage, cost or spend (an attempt that spent anything ran, and keeps its native outcome)",
                _ => "a DEFERRED row must equal its template row",
            };
            r.push(
                label,
                6,
                f,
                format!("{why}: expected {want}, found {found}"),
            );
        }
    }
}

/// Group 5: a native PASS agrees with its own status (the completion or stop the task
/// expects) and carries no failing oracle check.
fn check_pass<O: Obj>(r: &mut RowReasons, label: &Label, row: RowView<'_, O>, task: &Task) {
    let status = row.get(Field::NativeStatus).as_str();
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
        let want = match kind {
            crate::declaration::Kind::Inspect => "completed or limit:<type>",
            crate::declaration::Kind::Harbor => {
                "completed or exception:<type> of an exception whose reward Harbor's policy counts"
            }
            _ => want,
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
        r.push(
            label,
            5,
            "native_status",
            format!("a native PASS contradicts its own status: {what} (expected {want})"),
        );
    }
    for c in row.get(Field::OracleChecks).as_array().unwrap_or_default() {
        let c = c.view();
        if !c.get("ok").and_then(J::as_bool).unwrap_or(false) {
            let name = c.get("name").and_then(J::as_str).unwrap_or_default();
            r.push(
                label,
                5,
                "oracle_checks",
                format!("a PASS carries a failing oracle check {name:?}"),
            );
        }
    }
}

/// Group 6: every row that is not a PASS (nor DEFERRED) states a reason.
fn check_reason_stated<O: Obj>(r: &mut RowReasons, label: &Label, row: RowView<'_, O>) {
    if row
        .get(Field::Reason)
        .as_str()
        .is_none_or(|s| s.trim().is_empty())
    {
        r.push(
            label,
            6,
            "reason",
            "every row that is not a PASS states a reason".into(),
        );
    }
}

fn check_strings<V: View>(r: &mut RowReasons, label: &Label, field: &str, v: J<'_, V>) {
    match v {
        J::Array(items) if items.iter().all(|i| i.view().is_string()) => {}
        J::Array(_) => r.typed(
            label,
            field,
            "must be a list of strings (an entry is not a string)".to_string(),
        ),
        other => r.typed(
            label,
            field,
            format!("must be a list of strings, not {}", other.type_name()),
        ),
    }
}

fn check_amount<V: View>(r: &mut RowReasons, label: &Label, field: &dyn fmt::Display, v: J<'_, V>) {
    if !v.is_null() && v.nonneg_number().is_none() {
        r.typed(
            label,
            field.to_string(),
            format!("must be a nonnegative finite number or null, not {v}"),
        );
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
                    r.typed(label, "runtime_identity.dependencies", "must be a list of \"name==version\" strings or an object with a \"sha256\"".to_string());
                }
            }
        }
        other => r.typed(
            label,
            "runtime_identity",
            format!("must be an object or null, not {}", other.type_name()),
        ),
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
            r.typed(
                label,
                field.to_string(),
                format!("must be an object or null, not {}", other.type_name()),
            );
            return;
        }
    };
    for (k, _) in m.iter() {
        if k != "provider" && k != "roles" {
            r.typed(
                label,
                format!("{field}.{k}"),
                "unknown key (expected provider and roles)".to_string(),
            );
        }
    }
    if !string_or_null(m.get("provider")) {
        r.typed(
            label,
            format!("{field}.provider"),
            "must be a string or null".to_string(),
        );
    }
    match m.get("roles").map(View::view) {
        Some(J::Object(roles)) => {
            for (role, spec) in roles.iter() {
                let ok = spec.view().as_object().is_some_and(|s| {
                    s.len() == 2 && ["model", "effort"].iter().all(|k| string_or_null(s.get(k)))
                });
                if !ok {
                    r.typed(
                        label,
                        format!("{field}.roles.{role}"),
                        "must be {\"model\": string or null, \"effort\": string or null}"
                            .to_string(),
                    );
                }
            }
        }
        _ => r.typed(
            label,
            format!("{field}.roles"),
            "must be an object of roles".to_string(),
        ),
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
                    r.typed(
                        label,
                        format!("oracle_checks[{i}]"),
                        "must be {\"name\": string, \"ok\": boolean}".to_string(),
                    );
                }
            }
        }
        other => r.typed(
            label,
            "oracle_checks",
            format!("must be a list or null, not {}", other.type_name()),
        ),
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
                    r.typed(
                        label,
                        format!("{field}[{i}]"),
                        "must be {\"kind\": \"decision\" or \"repair\", \"note\": string}"
                            .to_string(),
                    );
                }
            }
        }
        other => r.typed(
            label,
            field.to_string(),
            format!("must be a list, not {}", other.type_name()),
        ),
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
                r.typed(label, "native_record", "must be {\"kind\": \"scenario\", \"arena\", \"inspect\", \"harbor\" or \"hand\", \"id\": string, \"sha256\": hex} or null".to_string());
            } else {
                let kind = kind.unwrap_or_default();
                if kind != "hand" && kind != task.kind.as_str() {
                    r.typed(
                        label,
                        "native_record.kind",
                        format!(
                            "a {kind} record cannot fill a row of {} task {}",
                            task.kind.as_str(),
                            task.id
                        ),
                    );
                }
            }
        }
        other => r.typed(
            label,
            "native_record",
            format!("must be an object or null, not {}", other.type_name()),
        ),
    }
}

/// A field of the template row of a scheduled attempt ([`Row::template`]): the attempt's
/// schedule id `id`, its `repetition` of `task` (given apart, so that a row's check need not
/// build the schedule entry).
pub(super) fn template_field<'e>(
    field: &str,
    id: &'e str,
    repetition: u64,
    task: &'e Task,
) -> J<'e, Value> {
    match field {
        "schedule_id" => J::String(id),
        "task_id" => J::String(&task.id),
        "repetition" => J::Number(json::Num::Pos(repetition)),
        "evidence" => J::String(task.evidence.as_str()),
        "native_outcome" => J::String(DEFERRED),
        "reason" => J::String(NOT_ATTEMPTED),
        "option_deviations" | "evidence_refs" | "interventions_decision_or_repair" => J::Array(&[]),
        _ => J::Null,
    }
}
