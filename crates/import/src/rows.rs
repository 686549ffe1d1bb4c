//! Native records become ledger rows.
//!
//! [`scenario_row`] and [`arena_row`] turn one parsed record plus the schedule id the evaluator
//! names into a row value carrying every declared attempt field, and pass it through
//! [`Row::check`] (the one row validity check). What only the record can break — another task
//! or kind, another evidence class, an unknown mode, a non-PASS without reason, an Arena case
//! that pins another base commit, other checks or another oracle — is refused here, every
//! reason at once, naming the record, the schedule id and the field.
//!
//! The Git facts an Arena row is compared with (the oracle digests and the runner tools'
//! definition hash at the declared `source_revision`) are read once per import call into
//! [`GitPins`].

use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::options::{DeclaredProfile, OptionsAnalysis, RoleSpec};
use super::{ArenaAttempt, Evidence, ScenarioRecord};
use crate::declaration::{Declaration, Kind, ScheduleEntry, Task};
use crate::error::{Error, Reasons, Result};
use crate::ledger::Row;

/// The note every scenario row's output carries (import.md, `source_revision`).
pub const SCENARIO_DEFINITION_NOTE: &str = "a scenario record does not pin the scenario's own \
     definition, oracle or checks (tools_dirty covers tools/ only): an edited scenario \
     definition is not detected";

/// What the declared revision holds in local Git objects, read once per import call: the
/// definition hash of `runner_tools.path` and the SHA-256 of each Arena task's oracle blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitPins {
    /// The declared `source_revision`.
    pub revision: String,
    /// The definition hash of `runner_tools.path` at that revision.
    pub runner_tools_identity: String,
    /// Task id → SHA-256 of its `oracle.path` blob at that revision.
    pub oracles: BTreeMap<String, String>,
}

impl GitPins {
    /// Read the pins of `tasks` (Arena tasks; others are skipped) from `repo` at the
    /// declaration's `source_revision`. A commit that is not local fails with the
    /// `git fetch --unshallow` hint.
    pub fn read<'a>(
        repo: &gix::Repository,
        decl: &Declaration,
        tasks: impl IntoIterator<Item = &'a Task>,
    ) -> Result<GitPins> {
        let Some(revision) = decl.source_revision.clone() else {
            return Err(Error::refused(format!(
                "declaration {} has no source_revision: Arena records cannot be checked",
                decl.id
            )));
        };
        let commit = crate::git::require_commit(repo, &revision)?;
        let tools = crate::git::definition_hash(repo, commit, &decl.runner_tools.path)
            .map_err(|e| e.context(format!("runner_tools.path at {revision}")))?;
        let mut oracles = BTreeMap::new();
        for task in tasks {
            let Some(oracle) = &task.oracle else { continue };
            if oracles.contains_key(&task.id) {
                continue;
            }
            let sha = crate::git::blob_sha256(repo, commit, &oracle.path)
                .map_err(|e| e.context(format!("task {}: oracle.path at {revision}", task.id)))?;
            oracles.insert(task.id.clone(), sha);
        }
        Ok(GitPins {
            revision,
            runner_tools_identity: tools.sha256,
            oracles,
        })
    }
}

/// What a conversion needs besides the record: where evidence paths are relative to, and the
/// runtime identity the call adds to every row.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The repository's work tree root (evidence paths inside it are written relative to it).
    pub repo_root: Option<&'a Path>,
    /// The validated `--runtime-identity` object, if given.
    pub runtime_identity: Option<&'a Value>,
    /// The Git pins (needed for Arena records only).
    pub pins: Option<&'a GitPins>,
    /// Inspect revision prefixes resolved in the local repository.
    pub inspect_revisions: Option<&'a HashMap<String, super::inspect::Resolved>>,
    /// `--skip-undeclared`: skip (and list) Inspect samples and Harbor trials no task
    /// declares.
    pub skip_undeclared: bool,
    /// `--revision`, resolved to a full commit id: the source revision of Harbor rows.
    pub harbor_revision: Option<&'a str>,
}

/// A record converted into a checked row, with what the write and the output need.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The checked row.
    pub row: Row,
    /// The record file (`result.json`, or the Arena export), shared with the change written.
    pub record: crate::store::Record,
    /// The record key `<kind>:<id>`.
    pub key: String,
    /// Where the row came from, for messages (`from <source>`).
    pub source: String,
    /// Notes the output shows beside the row.
    pub notes: Vec<String>,
}

/// The declared configuration the forwarded options are compared with.
pub fn declared_profile(decl: &Declaration) -> DeclaredProfile {
    let p = &decl.profile;
    DeclaredProfile {
        provider: p.provider.clone().unwrap_or_default(),
        joint_planning: p.joint_planning,
        roles: p
            .roles
            .iter()
            .map(|(name, r)| {
                (
                    name.clone(),
                    RoleSpec {
                        model: r.model.clone(),
                        // Null only in a declaration of Inspect tasks alone.
                        effort: r.effort.clone().unwrap_or_default(),
                    },
                )
            })
            .collect(),
        extra_options: p.extra_options.clone(),
    }
}

/// The schedule entry and task a record is for, refusing an unscheduled id, another task or
/// another kind.
fn target<'d>(
    decl: &'d Declaration,
    schedule_id: &str,
    record_task: &str,
    record_kind: Kind,
    label: &str,
    r: &mut Reasons,
) -> Option<(ScheduleEntry, &'d Task)> {
    let Some(entry) = decl.schedule_entry(schedule_id) else {
        r.push(
            crate::refusal::Reason::new(format!(
                "{schedule_id} is not scheduled by declaration {} (a retry needs a new declared schedule)",
                decl.id
            ))
            .at(label)
            .row(schedule_id)
        );
        return None;
    };
    let task = decl.task(&entry.task)?;
    if task.kind != record_kind || task.id != record_task {
        r.push(
            crate::refusal::Reason::new(format!(
                "a record of another task or kind: it is {} {} record of task {record_task}, \
             but {schedule_id} schedules {} task {}",
                if record_kind == Kind::Arena || record_kind == Kind::Inspect {
                    "an"
                } else {
                    "a"
                },
                record_kind.as_str(),
                task.kind.as_str(),
                task.id
            ))
            .at(label)
            .row(schedule_id),
        );
        return None;
    }
    Some((entry, task))
}

/// A reader's reasons (which name the record) with the schedule id they concern.
fn for_id(e: Error, schedule_id: &str) -> Reasons {
    e.into_reasons().map(|x| for_schedule_id(x, schedule_id))
}

/// Name the schedule id a record was given for in one of its reasons: the reason is about
/// that row (its `row`), unless it already names one (a row check's reason names the row
/// it checked, which is this one).
pub(crate) fn for_schedule_id(
    reason: crate::refusal::Reason,
    schedule_id: &str,
) -> crate::refusal::Reason {
    if reason.row.is_some() {
        reason
    } else {
        reason.row(schedule_id)
    }
}

/// The evidence class a record's mode gives its row's `evidence` (`import.md`: `live` is live,
/// `fake` and every `-hybrid` mode fixture). A class other than the task's is refused by the
/// row check, as any relabeled row is (`ledger.md` group 4), not here: this only adds a hint
/// that says where the class came from. An unknown mode is refused (the record's format).
pub(crate) fn record_evidence(
    evidence: Result<Evidence>,
    why: &str,
    task: &Task,
    schedule_id: &str,
    r: &mut Reasons,
) -> Evidence {
    match evidence {
        Err(e) => {
            r.absorb(for_id(e, schedule_id));
            task.evidence
        }
        Ok(e) => {
            if e != task.evidence {
                r.hint(format!(
                    "{why} is {} evidence: it cannot fill a row of task {}, declared {}",
                    e.as_str(),
                    task.id,
                    task.evidence.as_str()
                ));
            }
            e
        }
    }
}

/// `spent_budget` with every declared limit of the task as a key (null where the record does
/// not establish it).
fn spent_budget(task: &Task, recorded: &Value) -> Value {
    let mut out = Map::new();
    for name in task.limits.keys() {
        out.insert(
            name.clone(),
            recorded.get(name).cloned().unwrap_or(Value::Null),
        );
    }
    Value::Object(out)
}

fn decisions(notes: Vec<String>) -> Value {
    Value::Array(
        notes
            .into_iter()
            .map(|n| json!({"kind": "decision", "note": n}))
            .collect(),
    )
}

/// A row with every declared attempt field null, then the given fields set.
fn row_value(decl: &Declaration, fields: Vec<(&str, Value)>) -> Value {
    let mut m: Map<String, Value> = decl
        .attempt_fields
        .iter()
        .map(|f| (f.clone(), Value::Null))
        .collect();
    for (k, v) in fields {
        m.insert(k.to_owned(), v);
    }
    Value::Object(m)
}

/// Check the built row with the one row check: each reason (row, field, refusal group) found
/// at the record, as a row `put` writes is refused at its file.
pub(crate) fn check_row(
    decl: &Declaration,
    value: Value,
    label: &str,
    schedule_id: &str,
    r: &mut Reasons,
) -> Option<Row> {
    match Row::check_owned(decl, value, "") {
        Ok(row) => Some(row),
        Err(reasons) => {
            r.extend(
                reasons
                    .into_iter()
                    .map(|x| for_schedule_id(x.at(label), schedule_id)),
            );
            None
        }
    }
}

fn common_fields(
    entry: &ScheduleEntry,
    evidence: Evidence,
    options: OptionsAnalysis,
    ctx: &Context,
) -> Vec<(&'static str, Value)> {
    vec![
        ("schedule_id", Value::from(entry.id.clone())),
        ("task_id", Value::from(entry.task.clone())),
        ("repetition", Value::from(entry.repetition)),
        ("evidence", Value::from(evidence.as_str())),
        (
            "runtime_identity",
            ctx.runtime_identity.cloned().unwrap_or(Value::Null),
        ),
        (
            "actual_models_and_efforts",
            options.actual_models_and_efforts,
        ),
        ("option_deviations", Value::from(options.option_deviations)),
    ]
}

/// Convert a graded scenario run into the row of `schedule_id`.
pub fn scenario_row(
    decl: &Declaration,
    ctx: &Context,
    schedule_id: &str,
    rec: &ScenarioRecord,
) -> Result<Converted> {
    let label = rec.result_path.display().to_string();
    let mut r = Reasons::new();
    let Some((entry, task)) = target(
        decl,
        schedule_id,
        &rec.task_id(),
        Kind::Scenario,
        &label,
        &mut r,
    ) else {
        return Err(Error::Refused(r));
    };
    let why = format!("{label}: row {schedule_id}: a {:?} run", rec.mode);
    let evidence = record_evidence(rec.evidence(), &why, task, schedule_id, &mut r);
    if let Err(e) = rec.check_reason() {
        r.absorb(for_id(e, schedule_id));
    }
    let options = rec.options(&declared_profile(decl));
    let mut fields = common_fields(&entry, evidence, options, ctx);
    fields.extend([
        ("native_outcome", Value::from(rec.verdict.clone())),
        ("native_status", json!(rec.autocode_status)),
        ("reason", json!(rec.reason)),
        ("source_revision", json!(rec.source_revision())),
        ("runner_options", Value::Null),
        ("oracle_checks", rec.oracle_checks_value()),
        ("evidence_refs", json!(rec.evidence_refs(ctx.repo_root))),
        ("elapsed_seconds", rec.elapsed_seconds_value()),
        ("usage", rec.usage()),
        ("estimated_usd", rec.estimated_usd()),
        ("spent_budget", spent_budget(task, &rec.spent_budget())),
        (
            "interventions_decision_or_repair",
            decisions(rec.decisions()),
        ),
        ("native_record", rec.native_record()),
    ]);
    let row = check_row(decl, row_value(decl, fields), &label, schedule_id, &mut r);
    match row {
        Some(row) if r.is_empty() => {
            let mut notes = Vec::new();
            if rec.source_revision().is_none() {
                notes.push(match (&rec.commit, rec.tools_dirty) {
                    (_, Some(true)) => "source_revision null: tools_dirty is true".to_owned(),
                    (None, _) => "source_revision null: the record names no commit".to_owned(),
                    (Some(_), None) => {
                        "source_revision null: the record does not say whether tools/ was dirty"
                            .to_owned()
                    }
                    (Some(c), Some(false)) => {
                        format!("source_revision null: commit {c:?} is not a full commit id")
                    }
                });
            }
            Ok(Converted {
                row,
                record: crate::store::Record::new(rec.bytes.as_slice()),
                key: format!("scenario:{}", rec.run_id),
                source: super::relative_to_repo(&rec.result_path, ctx.repo_root),
                notes,
            })
        }
        _ => Err(Error::Refused(r)),
    }
}

/// Convert a finished Arena attempt into the row of `schedule_id`. Needs `ctx.pins`.
pub fn arena_row(
    decl: &Declaration,
    ctx: &Context,
    schedule_id: &str,
    att: &ArenaAttempt,
) -> Result<Converted> {
    let label = format!("{}#{}", att.store_dir.display(), att.attempt_id);
    let mut r = Reasons::new();
    let Some((entry, task)) = target(
        decl,
        schedule_id,
        &att.task_id(),
        Kind::Arena,
        &label,
        &mut r,
    ) else {
        return Err(Error::Refused(r));
    };
    let Some(pins) = ctx.pins else {
        return Err(Error::failed(format!(
            "{label}: row {schedule_id}: the Git pins of the declaration were not read"
        )));
    };
    let why = format!("{label}: row {schedule_id}: a {:?} run", att.mode);
    let evidence = record_evidence(att.evidence(), &why, task, schedule_id, &mut r);
    if let Err(e) = att.check_reason() {
        r.absorb(for_id(e, schedule_id));
    }
    // The case as stored must be the declared task's.
    let case = &att.case;
    match &task.upstream {
        Some(up) => {
            if case.base_commit != up.base_commit {
                r.push(
                    crate::refusal::Reason::new(format!(
                        "case {}: base_commit {} is not the declared upstream.base_commit {}",
                        case.case_id, case.base_commit, up.base_commit
                    ))
                    .at(&label)
                    .row(schedule_id),
                );
            }
            let stored: std::collections::BTreeSet<&str> =
                case.required_checks.iter().map(String::as_str).collect();
            let declared: std::collections::BTreeSet<&str> =
                up.checks.iter().map(String::as_str).collect();
            if stored != declared {
                let missing: Vec<&str> = declared.difference(&stored).copied().collect();
                let extra: Vec<&str> = stored.difference(&declared).copied().collect();
                r.push(
                    crate::refusal::Reason::new(format!(
                        "case {}: required_checks are not the declared upstream.checks \
                     (missing: [{}]; not declared: [{}])",
                        case.case_id,
                        missing.join(", "),
                        extra.join(", ")
                    ))
                    .at(&label)
                    .row(schedule_id),
                );
            }
        }
        None => r.push(
            crate::refusal::Reason::new(format!(
                "task {} declares no upstream to compare the case with",
                task.id
            ))
            .at(&label)
            .row(schedule_id),
        ),
    }
    match pins.oracles.get(&task.id) {
        Some(sha) if *sha == case.oracle_sha256 => {}
        Some(sha) => r.push(
            crate::refusal::Reason::new(format!(
                "case {}: oracle_sha256 {} is another oracle than the declared {} at {} \
             (SHA-256 {sha})",
                case.case_id,
                case.oracle_sha256,
                task.oracle.as_ref().map_or("oracle", |o| o.path.as_str()),
                pins.revision
            ))
            .at(&label)
            .row(schedule_id),
        ),
        None => r.push(
            crate::refusal::Reason::new(format!(
                "task {} declares no oracle to compare the case with",
                task.id
            ))
            .at(&label)
            .row(schedule_id),
        ),
    }
    let mut notes = Vec::new();
    let revision = match &att.runner_tools_identity {
        Some(id) if *id == pins.runner_tools_identity => Some(pins.revision.clone()),
        other => {
            notes.push(format!(
                "source_revision null: runner_tools_identity {} is not the definition hash of {} \
                 at {} ({})",
                other.as_deref().unwrap_or("(none)"),
                decl.runner_tools.path,
                pins.revision,
                pins.runner_tools_identity
            ));
            None
        }
    };
    let max_iterations = task
        .limits
        .get("max_iterations")
        .map_or(0, |&n| n.max(0.0) as u64);
    let options = att.options(&declared_profile(decl), max_iterations);
    let mut fields = common_fields(&entry, evidence, options, ctx);
    fields.extend([
        ("native_outcome", Value::from(att.verdict.clone())),
        ("native_status", Value::from(att.status.clone())),
        ("reason", json!(att.reason)),
        ("source_revision", json!(revision)),
        ("runner_options", json!(att.runner_options)),
        ("oracle_checks", att.oracle_checks_value()),
        ("evidence_refs", json!(att.evidence_refs(ctx.repo_root))),
        ("elapsed_seconds", att.elapsed_seconds_value()),
        ("usage", Value::Null),
        ("estimated_usd", Value::Null),
        ("spent_budget", spent_budget(task, &Value::Null)),
        (
            "interventions_decision_or_repair",
            decisions(att.decisions()),
        ),
        ("native_record", att.native_record()),
    ]);
    let row = check_row(decl, row_value(decl, fields), &label, schedule_id, &mut r);
    match row {
        Some(row) if r.is_empty() => Ok(Converted {
            row,
            record: crate::store::Record::new(att.export.as_slice()),
            key: format!("arena:{}/{}", att.store_id, att.attempt_id),
            source: format!(
                "{}#{}",
                super::relative_to_repo(&att.store_dir, ctx.repo_root),
                att.attempt_id
            ),
            notes,
        }),
        _ => Err(Error::Refused(r)),
    }
}

/// The pinned runtime keys a runtime identity may carry besides `dependencies`.
pub const RUNTIME_KEYS: [&str; 4] = ["python", "psutil", "native_provider", "packages"];

/// Parse and validate a `--runtime-identity` file: a strict JSON object with exactly the
/// pinned runtime keys (`python`, `psutil`, `native_provider` strings; `packages` an object of
/// version strings) and `dependencies` (a list of `name==version` strings, or an object with
/// exactly a `sha256` of 64 lowercase hex digits).
pub fn parse_runtime_identity(bytes: &[u8], what: &str, max_input_bytes: u64) -> Result<Value> {
    let value = crate::json::parse_document(bytes, what, max_input_bytes)?;
    let mut r = Reasons::new();
    let Value::Object(m) = &value else {
        return Err(Error::refused(
            crate::refusal::Reason::new(format!(
                "a runtime identity must be a JSON object, not {}",
                crate::json::type_name(&value)
            ))
            .at(what),
        ));
    };
    for k in m.keys() {
        if k != "dependencies" && !RUNTIME_KEYS.contains(&k.as_str()) {
            r.push(
                crate::refusal::Reason::new(
                    "unknown key (expected python, psutil, native_provider, packages, dependencies)",
                )
                .field(k.as_str())
                .at(what),
            );
        }
    }
    for k in ["python", "psutil", "native_provider"] {
        match m.get(k) {
            Some(Value::String(_)) => {}
            Some(v) => r.push(
                crate::refusal::Reason::new(format!(
                    "must be a string, not {}",
                    crate::json::type_name(v)
                ))
                .field(k.to_string())
                .at(what),
            ),
            None => r.push(
                crate::refusal::Reason::new("missing (required)")
                    .field(k.to_string())
                    .at(what),
            ),
        }
    }
    match m.get("packages") {
        Some(Value::Object(p)) => {
            for (name, v) in p {
                if !v.is_string() {
                    r.push(
                        crate::refusal::Reason::new(format!(
                            "must be a version string, not {}",
                            crate::json::type_name(v)
                        ))
                        .field(format!("packages.{name}"))
                        .at(what),
                    );
                }
            }
        }
        Some(v) => r.push(
            crate::refusal::Reason::new(format!(
                "must be an object, not {}",
                crate::json::type_name(v)
            ))
            .field("packages")
            .at(what),
        ),
        None => r.push(
            crate::refusal::Reason::new("missing (required)")
                .field("packages")
                .at(what),
        ),
    }
    match m.get("dependencies") {
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let ok = item.as_str().and_then(|s| s.split_once("==")).is_some_and(
                    |(name, version)| !name.trim().is_empty() && !version.trim().is_empty(),
                );
                if !ok {
                    r.push(
                        crate::refusal::Reason::new(format!(
                            "must be a \"name==version\" string, not {item}"
                        ))
                        .field(format!("dependencies[{i}]"))
                        .at(what),
                    );
                }
            }
        }
        Some(Value::Object(o)) => {
            for k in o.keys().filter(|k| *k != "sha256") {
                r.push(
                    crate::refusal::Reason::new("unknown key (a freeze object holds only sha256)")
                        .field(format!("dependencies.{k}"))
                        .at(what),
                );
            }
            match o.get("sha256") {
                Some(Value::String(s)) if crate::declaration::is_sha256(s) => {}
                Some(v) => r.push(
                    crate::refusal::Reason::new(format!(
                        "must be 64 lowercase hex digits, not {v}"
                    ))
                    .field("dependencies.sha256")
                    .at(what),
                ),
                None => r.push(
                    crate::refusal::Reason::new("missing (required)")
                        .field("dependencies.sha256")
                        .at(what),
                ),
            }
        }
        Some(v) => r.push(
            crate::refusal::Reason::new(format!(
                "must be a list of \"name==version\" strings or an object with a sha256, not {}",
                crate::json::type_name(v)
            ))
            .field("dependencies")
            .at(what),
        ),
        None => r.push(
            crate::refusal::Reason::new("missing (required)")
                .field("dependencies")
                .at(what),
        ),
    }
    r.into_result().map(|()| value)
}

#[cfg(test)]
mod tests;
