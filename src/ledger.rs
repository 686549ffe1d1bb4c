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

use crate::declaration::{Declaration, Evidence, Expects, Task, STANDARD_FIELDS};
use crate::error::{Error, Reasons, Result};
use crate::json;

mod fast;

/// The format string of a ledger document.
pub const FORMAT: &str = "campaign-ledger/1";
/// The native outcome of a row that holds no attempt.
pub const DEFERRED: &str = "DEFERRED";
/// The reason a template row gives.
pub const NOT_ATTEMPTED: &str = "not attempted";

/// The kinds of native record a row can be filled from.
pub const RECORD_KINDS: [&str; 3] = ["scenario", "arena", "hand"];

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
        let mut fields = Map::new();
        for f in &decl.attempt_fields {
            let v = match f.as_str() {
                "schedule_id" => Value::from(entry.id.clone()),
                "task_id" => Value::from(entry.task.clone()),
                "repetition" => Value::from(entry.repetition),
                "evidence" => Value::from(task.evidence.as_str()),
                "native_outcome" => Value::from(DEFERRED),
                "reason" => Value::from(NOT_ATTEMPTED),
                "option_deviations" | "evidence_refs" | "interventions_decision_or_repair" => {
                    Value::Array(Vec::new())
                }
                _ => Value::Null,
            };
            fields.insert(f.clone(), v);
        }
        Some(Row { fields })
    }

    /// Check a row against the declaration (groups 3–6 of `ledger.md`), returning every reason.
    /// `at` names where the row came from (e.g. `rows[3]` or a file path).
    pub fn check(
        decl: &Declaration,
        value: &Value,
        at: &str,
    ) -> std::result::Result<Row, Vec<String>> {
        match value {
            Value::Object(m) => Self::check_fields(decl, Row { fields: m.clone() }, at),
            _ => Err(Self::not_an_object(value, at)),
        }
    }

    /// [`Row::check`] of a value the caller owns: the row keeps its fields without a copy
    /// (a 100,000-row ledger spent a third of `report` copying them).
    pub fn check_owned(
        decl: &Declaration,
        value: Value,
        at: &str,
    ) -> std::result::Result<Row, Vec<String>> {
        match value {
            Value::Object(fields) => Self::check_fields(decl, Row { fields }, at),
            other => Err(Self::not_an_object(&other, at)),
        }
    }

    fn not_an_object(value: &Value, at: &str) -> Vec<String> {
        vec![format!(
            "{at}: a row must be an object, not {}",
            json::type_name(value)
        )]
    }

    /// The checks of [`Row::check`] on a row's fields; returns the row when it passes.
    fn check_fields(
        decl: &Declaration,
        row: Row,
        at: &str,
    ) -> std::result::Result<Row, Vec<String>> {
        let mut r = Reasons::new();
        let m = &row.fields;
        let sid = m.get("schedule_id").and_then(Value::as_str);
        let label = match sid {
            Some(id) => format!("row {id}"),
            None => at.to_owned(),
        };
        let bad =
            |r: &mut Reasons, field: &str, msg: String| r.push(format!("{label}: {field}: {msg}"));

        for f in &decl.attempt_fields {
            if !m.contains_key(f) {
                bad(&mut r, f, "missing declared attempt field".into());
            }
        }
        for k in m.keys() {
            if !decl.attempt_fields.contains(k) {
                bad(&mut r, k, "undeclared attempt field".into());
            }
        }
        let Some(sid) = sid else {
            if m.contains_key("schedule_id") {
                bad(&mut r, "schedule_id", "must be a string".into());
            }
            return Err(r.into_vec());
        };
        let Some(entry) = decl.schedule_entry(sid) else {
            r.push(format!("{label}: schedule_id: {sid:?} is not scheduled by the declaration (a retry needs a new declared schedule)"));
            return Err(r.into_vec());
        };
        let task = decl.task(&entry.task).expect("scheduled task exists");
        let get = |k: &str| m.get(k).unwrap_or(&Value::Null);

        // Group 3: types.
        match get("task_id") {
            Value::String(t) if *t == entry.task => {}
            other => bad(
                &mut r,
                "task_id",
                format!("must be {:?}, not {other}", entry.task),
            ),
        }
        match json::count(get("repetition")) {
            Some(n) if n == entry.repetition => {}
            _ => bad(
                &mut r,
                "repetition",
                format!("must be {}, not {}", entry.repetition, get("repetition")),
            ),
        }
        // A relabeled row is otherwise well typed: its relabeling is reported beside what its
        // outcome implies (groups 5 and 6), so that every reason is listed.
        let mut relabeled = Reasons::new();
        match get("evidence") {
            Value::String(e) if Evidence::parse(e) == Some(task.evidence) => {}
            Value::String(e) if Evidence::parse(e).is_some() => bad(
                &mut relabeled,
                "evidence",
                format!("is {e:?} but task {} is declared {} (a fixture row is never relabeled live, nor the reverse)", task.id, task.evidence.as_str()),
            ),
            other => bad(&mut r, "evidence", format!("must be \"live\" or \"fixture\", not {other}")),
        }
        let outcome = match get("native_outcome") {
            Value::String(o) if task.allows_outcome(o) => Some(o.as_str()),
            Value::String(o) => {
                bad(
                    &mut r,
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
                    "native_outcome",
                    format!("must be a string, not {other}"),
                );
                None
            }
        };
        for k in ["native_status", "reason"] {
            if !matches!(get(k), Value::Null | Value::String(_)) {
                bad(
                    &mut r,
                    k,
                    format!("must be a string or null, not {}", json::type_name(get(k))),
                );
            }
        }
        match get("source_revision") {
            Value::Null => {}
            Value::String(s) if crate::declaration::is_full_commit(s) => {}
            other => bad(
                &mut r,
                "source_revision",
                format!("must be a full hex commit id or null, not {other}"),
            ),
        }
        check_runtime_identity(&mut r, &label, get("runtime_identity"));
        check_models(&mut r, &label, get("actual_models_and_efforts"));
        match get("runner_options") {
            Value::Null => {}
            v => check_strings(&mut r, &label, "runner_options", v),
        }
        for k in ["option_deviations", "evidence_refs"] {
            check_strings(&mut r, &label, k, get(k));
        }
        check_oracle(&mut r, &label, get("oracle_checks"));
        for k in ["elapsed_seconds", "estimated_usd"] {
            check_amount(&mut r, &label, k, get(k));
        }
        match get("usage") {
            Value::Null => {}
            Value::Object(u) => {
                for (k, v) in u {
                    check_amount(&mut r, &label, &format!("usage.{k}"), v);
                }
            }
            other => bad(
                &mut r,
                "usage",
                format!("must be an object or null, not {}", json::type_name(other)),
            ),
        }
        match get("spent_budget") {
            Value::Null => {}
            Value::Object(s) => {
                for (k, v) in s {
                    if !task.limits.contains_key(k) {
                        bad(
                            &mut r,
                            &format!("spent_budget.{k}"),
                            format!(
                                "is not a limit task {} declares ({})",
                                task.id,
                                task.limits.keys().cloned().collect::<Vec<_>>().join(", ")
                            ),
                        );
                    }
                    check_amount(&mut r, &label, &format!("spent_budget.{k}"), v);
                }
            }
            other => bad(
                &mut r,
                "spent_budget",
                format!("must be an object or null, not {}", json::type_name(other)),
            ),
        }
        check_interventions(&mut r, &label, get("interventions_decision_or_repair"));
        check_native_record(&mut r, &label, get("native_record"), task);

        let is_relabeled = !relabeled.is_empty();
        if !r.is_empty() {
            r.extend(relabeled.into_vec());
            return Err(r.into_vec());
        }
        r.extend(relabeled.into_vec());

        // Groups 5 and 6: what the outcome implies.
        match outcome {
            Some(DEFERRED) => {
                let template = Row::template(decl, sid).expect("scheduled");
                for f in &decl.attempt_fields {
                    if is_relabeled && f == "evidence" {
                        continue; // already reported
                    }
                    if !json::value_eq(&row.fields[f], &template.fields[f]) {
                        let why = match f.as_str() {
                            "elapsed_seconds" | "usage" | "estimated_usd" | "spent_budget" => "a DEFERRED row carries no time, usage, cost or spend (an attempt that spent anything ran, and keeps its native outcome)",
                            _ => "a DEFERRED row must equal its template row",
                        };
                        bad(
                            &mut r,
                            f,
                            format!(
                                "{why}: expected {}, found {}",
                                template.fields[f], row.fields[f]
                            ),
                        );
                    }
                }
            }
            Some("PASS") => {
                let status = row.native_status();
                let want = match task.expects {
                    Expects::Completion => task.kind.completion_status(),
                    Expects::Stop => task.kind.stop_status(),
                };
                if status != Some(want) {
                    let what = match status {
                        Some(s) if s == task.kind.stop_status() => {
                            format!("a stop ({s}) on a task that expects completion")
                        }
                        Some(s) if s == task.kind.completion_status() => {
                            format!("a completion ({s}) on a task that expects a stop")
                        }
                        Some(s) => format!("status {s:?} is neither completion nor stop"),
                        None => "no status".to_owned(),
                    };
                    bad(
                        &mut r,
                        "native_status",
                        format!(
                            "a native PASS contradicts its own status: {what} (expected {want})"
                        ),
                    );
                }
                if let Some(checks) = row.oracle_checks() {
                    for c in checks.iter().filter(|c| !c.ok) {
                        bad(
                            &mut r,
                            "oracle_checks",
                            format!("a PASS carries a failing oracle check {:?}", c.name),
                        );
                    }
                }
            }
            Some(_) if row.reason().is_none_or(|s| s.trim().is_empty()) => {
                bad(
                    &mut r,
                    "reason",
                    "every row that is not a PASS states a reason".into(),
                );
            }
            Some(_) => {}
            None => {}
        }
        if r.is_empty() {
            Ok(row)
        } else {
            Err(r.into_vec())
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

    fn str_field(&self, f: &str) -> Option<&str> {
        self.get(f).as_str()
    }
    pub fn schedule_id(&self) -> &str {
        self.str_field("schedule_id").unwrap_or_default()
    }
    pub fn task_id(&self) -> &str {
        self.str_field("task_id").unwrap_or_default()
    }
    pub fn native_outcome(&self) -> &str {
        self.str_field("native_outcome").unwrap_or_default()
    }
    pub fn is_deferred(&self) -> bool {
        self.native_outcome() == DEFERRED
    }
    pub fn native_status(&self) -> Option<&str> {
        self.str_field("native_status")
    }
    pub fn reason(&self) -> Option<&str> {
        self.str_field("reason")
    }
    pub fn source_revision(&self) -> Option<&str> {
        self.str_field("source_revision")
    }
    pub fn evidence(&self) -> Evidence {
        Evidence::parse(self.str_field("evidence").unwrap_or_default()).unwrap_or(Evidence::Live)
    }
    pub fn runtime_identity(&self) -> Option<&Map<String, Value>> {
        self.get("runtime_identity").as_object()
    }
    pub fn actual_models_and_efforts(&self) -> Option<&Map<String, Value>> {
        self.get("actual_models_and_efforts").as_object()
    }
    pub fn option_deviations(&self) -> impl Iterator<Item = &str> {
        strs(self.get("option_deviations"))
    }
    pub fn evidence_refs(&self) -> impl Iterator<Item = &str> {
        strs(self.get("evidence_refs"))
    }
    pub fn oracle_checks(&self) -> Option<Vec<Check<'_>>> {
        self.get("oracle_checks").as_array().map(|a| {
            a.iter()
                .map(|c| Check {
                    name: c["name"].as_str().unwrap_or_default(),
                    ok: c["ok"].as_bool().unwrap_or(false),
                })
                .collect()
        })
    }
    pub fn elapsed_seconds(&self) -> Option<f64> {
        self.get("elapsed_seconds").as_f64()
    }
    pub fn estimated_usd(&self) -> Option<f64> {
        self.get("estimated_usd").as_f64()
    }
    /// The spend recorded against a declared limit (`None`: unknown).
    pub fn spent(&self, limit: &str) -> Option<f64> {
        self.get("spent_budget").get(limit).and_then(Value::as_f64)
    }
    /// `(kind, note)` of each intervention, in order.
    pub fn interventions(&self) -> impl Iterator<Item = (&str, &str)> {
        self.get("interventions_decision_or_repair")
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                (
                    i["kind"].as_str().unwrap_or_default(),
                    i["note"].as_str().unwrap_or_default(),
                )
            })
    }
    pub fn native_record(&self) -> Option<NativeRecord<'_>> {
        let r = self.get("native_record").as_object()?;
        Some(NativeRecord {
            kind: r.get("kind")?.as_str()?,
            id: r.get("id")?.as_str()?,
            sha256: r.get("sha256")?.as_str()?,
        })
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

fn strs(v: &Value) -> impl Iterator<Item = &str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str)
}

fn check_strings(r: &mut Reasons, label: &str, field: &str, v: &Value) {
    match v {
        Value::Array(items) if items.iter().all(Value::is_string) => {}
        Value::Array(_) => r.push(format!(
            "{label}: {field}: must be a list of strings (an entry is not a string)"
        )),
        other => r.push(format!(
            "{label}: {field}: must be a list of strings, not {}",
            json::type_name(other)
        )),
    }
}

fn check_amount(r: &mut Reasons, label: &str, field: &str, v: &Value) {
    if !v.is_null() && json::nonneg_number(v).is_none() {
        r.push(format!(
            "{label}: {field}: must be a nonnegative finite number or null, not {v}"
        ));
    }
}

fn check_runtime_identity(r: &mut Reasons, label: &str, v: &Value) {
    match v {
        Value::Null => {}
        Value::Object(m) => {
            if let Some(deps) = m.get("dependencies") {
                let ok = match deps {
                    Value::Array(items) => items.iter().all(Value::is_string),
                    Value::Object(o) => o.get("sha256").is_some_and(Value::is_string),
                    _ => false,
                };
                if !ok {
                    r.push(format!("{label}: runtime_identity.dependencies: must be a list of \"name==version\" strings or an object with a \"sha256\""));
                }
            }
        }
        other => r.push(format!(
            "{label}: runtime_identity: must be an object or null, not {}",
            json::type_name(other)
        )),
    }
}

fn check_models(r: &mut Reasons, label: &str, v: &Value) {
    let field = "actual_models_and_efforts";
    let m = match v {
        Value::Null => return,
        Value::Object(m) => m,
        other => {
            r.push(format!(
                "{label}: {field}: must be an object or null, not {}",
                json::type_name(other)
            ));
            return;
        }
    };
    for k in m.keys() {
        if k != "provider" && k != "roles" {
            r.push(format!(
                "{label}: {field}.{k}: unknown key (expected provider and roles)"
            ));
        }
    }
    if !matches!(
        m.get("provider"),
        Some(Value::String(_)) | Some(Value::Null)
    ) {
        r.push(format!(
            "{label}: {field}.provider: must be a string or null"
        ));
    }
    match m.get("roles") {
        Some(Value::Object(roles)) => {
            for (role, spec) in roles {
                let ok = spec.as_object().is_some_and(|s| {
                    s.len() == 2
                        && ["model", "effort"].iter().all(|k| {
                            matches!(s.get(*k), Some(Value::String(_)) | Some(Value::Null))
                        })
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

fn check_oracle(r: &mut Reasons, label: &str, v: &Value) {
    match v {
        Value::Null => {}
        Value::Array(items) => {
            for (i, c) in items.iter().enumerate() {
                let ok = c.as_object().is_some_and(|o| {
                    o.len() == 2
                        && o.get("name").is_some_and(Value::is_string)
                        && o.get("ok").is_some_and(Value::is_boolean)
                });
                if !ok {
                    r.push(format!("{label}: oracle_checks[{i}]: must be {{\"name\": string, \"ok\": boolean}}"));
                }
            }
        }
        other => r.push(format!(
            "{label}: oracle_checks: must be a list or null, not {}",
            json::type_name(other)
        )),
    }
}

fn check_interventions(r: &mut Reasons, label: &str, v: &Value) {
    let field = "interventions_decision_or_repair";
    match v {
        Value::Array(items) => {
            for (i, it) in items.iter().enumerate() {
                let ok = it.as_object().is_some_and(|o| {
                    o.len() == 2
                        && matches!(
                            o.get("kind").and_then(Value::as_str),
                            Some("decision") | Some("repair")
                        )
                        && o.get("note").is_some_and(Value::is_string)
                });
                if !ok {
                    r.push(format!("{label}: {field}[{i}]: must be {{\"kind\": \"decision\" or \"repair\", \"note\": string}}"));
                }
            }
        }
        other => r.push(format!(
            "{label}: {field}: must be a list, not {}",
            json::type_name(other)
        )),
    }
}

fn check_native_record(r: &mut Reasons, label: &str, v: &Value, task: &Task) {
    match v {
        Value::Null => {}
        Value::Object(o) => {
            let shape = o.len() == 3
                && o.get("kind")
                    .and_then(Value::as_str)
                    .is_some_and(|k| RECORD_KINDS.contains(&k))
                && o.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
                && o.get("sha256")
                    .and_then(Value::as_str)
                    .is_some_and(crate::declaration::is_sha256);
            if !shape {
                r.push(format!("{label}: native_record: must be {{\"kind\": \"scenario\", \"arena\" or \"hand\", \"id\": string, \"sha256\": hex}} or null"));
            } else {
                let kind = o["kind"].as_str().unwrap_or_default();
                if kind != "hand" && kind != task.kind.as_str() {
                    r.push(format!("{label}: native_record.kind: a {kind} record cannot fill a row of {} task {}", task.kind.as_str(), task.id));
                }
            }
        }
        other => r.push(format!(
            "{label}: native_record: must be an object or null, not {}",
            json::type_name(other)
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

    /// [`Ledger::parse`] keeping only `keep(decl, row)` of each checked row, in schedule order:
    /// the same checks and refusals, but on the fast path each row is dropped on the core
    /// that parsed it (`report` of 100,000 rows never holds them all). A ledger the fast path
    /// does not accept is parsed by the ordinary path, exactly as [`Ledger::parse`] does.
    pub fn parse_kept<T: Send>(
        decl: &Declaration,
        bytes: &[u8],
        max_input_bytes: u64,
        keep: impl Fn(&Declaration, Row) -> T + Sync,
    ) -> Result<Vec<T>> {
        if bytes.len() as u64 <= max_input_bytes {
            let kept = fast::parse_with(decl, bytes, |decl, row| Kept::of(decl, row, &keep));
            if let Some(kept) = kept {
                return Ok(kept.into_iter().map(|k| k.kept).collect());
            }
        }
        let value = json::parse_document(bytes, "ledger", max_input_bytes)?;
        let ledger = Self::from_owned_value(decl, value)?;
        Ok(ledger.rows.into_iter().map(|row| keep(decl, row)).collect())
    }

    /// [`Ledger::read`] keeping only `keep(decl, row)` of each row (see [`Ledger::parse_kept`]).
    pub fn read_kept<T: Send>(
        decl: &Declaration,
        path: &std::path::Path,
        max_input_bytes: u64,
        keep: impl Fn(&Declaration, Row) -> T + Sync,
    ) -> Result<Vec<T>> {
        let bytes = json::read_bounded(path, max_input_bytes)?;
        Self::parse_kept(decl, &bytes, max_input_bytes, keep).map_err(|e| e.context(path.display()))
    }

    /// Read and check a ledger file.
    pub fn read(
        decl: &Declaration,
        path: &std::path::Path,
        max_input_bytes: u64,
    ) -> Result<Ledger> {
        let bytes = json::read_bounded(path, max_input_bytes)?;
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

/// A row's schedule id as written (for the one-row-per-id check) and the row checked.
type Checked<T = Row> = (Option<String>, std::result::Result<T, Vec<String>>);

/// Check `rows[i]`.
fn checked_row(decl: &Declaration, i: usize, v: Value) -> Checked {
    let sid = v
        .get("schedule_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    (sid, Row::check_owned(decl, v, &format!("rows[{i}]")))
}

/// What [`assemble`] needs of a checked row: its schedule id and its record's key. A [`Row`]
/// answers from its fields; a [`Kept`] summary answers from what it kept of them.
trait Slot {
    fn schedule_id(&self) -> &str;
    fn record_key(&self) -> Option<String>;
}

impl Slot for Row {
    fn schedule_id(&self) -> &str {
        Row::schedule_id(self)
    }
    fn record_key(&self) -> Option<String> {
        self.native_record().map(|rec| rec.key())
    }
}

/// What a caller keeps of a checked row (see [`Ledger::parse_kept`]), with the row's schedule
/// id and record key for the ledger-level checks.
struct Kept<T> {
    schedule_id: String,
    record_key: Option<String>,
    kept: T,
}

impl<T> Kept<T> {
    fn of(decl: &Declaration, row: Row, keep: &impl Fn(&Declaration, Row) -> T) -> Kept<T> {
        Kept {
            schedule_id: row.schedule_id().to_owned(),
            record_key: Slot::record_key(&row),
            kept: keep(decl, row),
        }
    }
}

impl<T> Slot for Kept<T> {
    fn schedule_id(&self) -> &str {
        &self.schedule_id
    }
    fn record_key(&self) -> Option<String> {
        self.record_key.clone()
    }
}

/// The ledger of checked rows, in document order: one row per schedule id, in schedule order,
/// one record per row, none missing. `r` holds the reasons found so far.
fn assemble(decl: &Declaration, r: Reasons, rows: impl Iterator<Item = Checked>) -> Result<Ledger> {
    Ok(Ledger {
        declaration_id: decl.id.clone(),
        declaration_sha256: decl.sha256.clone(),
        rows: assemble_slots(decl, r, rows)?,
    })
}

/// [`assemble`] of any kind of checked row: the rows in schedule order.
fn assemble_slots<T: Slot>(
    decl: &Declaration,
    mut r: Reasons,
    rows: impl Iterator<Item = Checked<T>>,
) -> Result<Vec<T>> {
    let mut slots: Vec<Option<T>> = std::iter::repeat_with(|| None)
        .take(decl.schedule_len())
        .collect();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut records: HashMap<String, String> = HashMap::new();
    // The furthest schedule position seen so far: rows are in schedule order, and a row
    // out of it is refused rather than silently moved.
    let mut furthest: Option<(usize, String)> = None;
    for (i, (sid, checked)) in rows.enumerate() {
        if let Some(sid) = sid {
            if let Some(first) = seen.insert(sid.clone(), i) {
                r.push(format!("ledger: rows[{i}]: scheduled attempt {sid} appears twice (also rows[{first}]); one row per schedule id, the original row stays"));
                continue;
            }
        }
        match checked {
            Ok(row) => {
                if let Some(key) = row.record_key() {
                    if let Some(other) = records.insert(key.clone(), row.schedule_id().to_owned()) {
                        r.push(format!("row {}: native_record: record {key} already filled row {other} (one record cannot fill two rows)", row.schedule_id()));
                    }
                }
                let pos = decl.schedule_position(row.schedule_id()).expect("checked");
                match &furthest {
                    Some((last, last_id)) if pos < *last => r.push(format!(
                        "ledger: rows[{i}]: scheduled attempt {} is out of schedule order (it comes before {last_id}; rows are in schedule order)",
                        row.schedule_id()
                    )),
                    _ => furthest = Some((pos, row.schedule_id().to_owned())),
                }
                slots[pos] = Some(row);
            }
            Err(reasons) => r.extend(reasons),
        }
    }
    for (pos, slot) in slots.iter().enumerate() {
        if slot.is_some() {
            continue;
        }
        let entry = decl.schedule_at(pos);
        if !seen.contains_key(entry.id.as_str()) {
            r.push(format!("ledger: scheduled attempt {} is missing (every schedule id appears exactly once, DEFERRED if not attempted)", entry.id));
        }
    }
    r.into_result()?;
    Ok(slots
        .into_iter()
        .map(|s| s.expect("every slot filled"))
        .collect())
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
