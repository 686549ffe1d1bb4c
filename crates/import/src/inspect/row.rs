//! A sample becomes a row: the verdict from its scores, usage and cost, option deviations,
//! models and efforts, whether it was scripted, and the row [`sample_row`] builds from them.

use serde_json::{json, Map, Value};
use std::path::Path;

use super::index::{label, record_id, revision_of, Resolved};
use super::json::{self, IVal, Num};
use super::{InspectLog, InspectSample, DEFINITION_NOTE};
use crate::declaration::{Declaration, Evidence, Kind, Task};

/// The first line of a text.
fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default().trim_end()
}

/// The provider of a model name: the part before its first `/`.
fn provider(model: &str) -> &str {
    model.split_once('/').map_or(model, |(p, _)| p)
}

/// What the verdict is read from: the declared scorer's first value, and whether (and how) the
/// score was edited after the run.
struct Verdict {
    /// The value the scorer recorded; `None` when the scorer recorded none.
    value: Option<IVal>,
    explanation: Option<String>,
    /// A sentence naming the edit, when there was one.
    edit: Option<String>,
}

fn verdict(scores: &IVal, scorer: &str) -> Verdict {
    let score = scores.get(scorer);
    if score.as_object().is_none() {
        return Verdict {
            value: None,
            explanation: None,
            edit: None,
        };
    }
    let history = score.get("history").as_array().unwrap_or_default();
    let current = score.get("value");
    let describe = |e: &IVal| {
        let p = e.get("provenance");
        let mut who = Vec::new();
        if let Some(a) = p.get("author").as_str() {
            who.push(format!("by {a}"));
        }
        if let Some(t) = p.get("timestamp").as_str() {
            who.push(format!("at {t}"));
        }
        if let Some(r) = p.get("reason").as_str() {
            who.push(format!("reason: {}", first_line(r)));
        }
        who.join(", ")
    };
    match history.first() {
        // The scorer's own score, never edited.
        None => Verdict {
            value: Some(current.clone()),
            explanation: score.get("explanation").as_str().map(str::to_owned),
            edit: None,
        },
        // The first entry is the scorer's original (it has no provenance).
        Some(first) if first.get("provenance").is_null() => {
            let value = match first.get("value") {
                IVal::Str(s) if s == "UNCHANGED" => current.clone(),
                v => v.clone(),
            };
            let explanation = match first.get("explanation") {
                IVal::Str(s) if s == "UNCHANGED" => {
                    score.get("explanation").as_str().map(str::to_owned)
                }
                v => v.as_str().map(str::to_owned),
            };
            let edit = (history.len() > 1).then(|| {
                let edits: Vec<String> = history[1..].iter().map(describe).filter(|d| !d.is_empty()).collect();
                format!(
                    "score {scorer} was edited after the run ({} edit{}{}): the scorer's {} counts, not the edited {}",
                    history.len() - 1,
                    if history.len() == 2 { "" } else { "s" },
                    if edits.is_empty() { String::new() } else { format!(", {}", edits.join("; ")) },
                    value.display(),
                    current.display()
                )
            });
            Verdict {
                value: Some(value),
                explanation,
                edit,
            }
        }
        // The score was created by an edit: the scorer recorded none.
        Some(first) => {
            let d = describe(first);
            Verdict {
                value: None,
                explanation: None,
                edit: Some(format!(
                    "score {scorer} was added by an edit after the run{}: the scorer recorded none",
                    if d.is_empty() {
                        String::new()
                    } else {
                        format!(" ({d})")
                    }
                )),
            }
        }
    }
}

/// A value in `pass`, compared by value.
fn in_pass(value: &IVal, pass: &[Value]) -> bool {
    pass.iter().any(|p| json::same(value, p))
}

/// A nonnegative finite amount, else null (NaN and infinities are unknown).
fn amount(v: &IVal) -> Value {
    match v.as_num() {
        Some(n) if n.finite().is_some_and(|f| f >= 0.0) => {
            n.to_json().map_or(Value::Null, Value::Number)
        }
        _ => Value::Null,
    }
}

/// `model_usage` as recorded (model → counts, each a nonnegative number or null), and the cost
/// when every model has a `total_cost`.
fn usage(model_usage: &IVal) -> (Value, Value, Value) {
    let Some(models) = model_usage.as_object().filter(|m| !m.is_empty()) else {
        return (Value::Null, Value::Null, Value::Null);
    };
    let mut out = Map::new();
    let mut cost = Some(0.0f64);
    let mut tokens = Some(0.0f64);
    for (model, counts) in models {
        let mut c = Map::new();
        for (k, v) in counts.as_object().unwrap_or_default() {
            c.insert(k.clone(), amount(v));
        }
        match counts.get("total_cost").as_f64() {
            Some(x) if x >= 0.0 => cost = cost.map(|s| s + x),
            _ => cost = None,
        }
        match counts.get("total_tokens").as_f64() {
            Some(x) if x >= 0.0 => tokens = tokens.map(|s| s + x),
            _ => tokens = None,
        }
        out.insert(model.clone(), Value::Object(c));
    }
    let num = |x: Option<f64>| {
        x.and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number)
    };
    let tokens = match tokens {
        // A count stays an integer when it is one.
        Some(t) if t.fract() == 0.0 && t <= u64::MAX as f64 => Value::from(t as u64),
        t => num(t),
    };
    (Value::Object(out), num(cost), tokens)
}

/// Each difference between the declaration and the eval (`inspect.md`, `option_deviations`).
fn option_deviations(decl: &Declaration, task: &Task, eval: &IVal) -> Vec<String> {
    let mut out = Vec::new();
    let config = eval.get("config");
    let epochs = match config.get("epochs") {
        IVal::Null => Some(1),
        v => v.as_count(),
    };
    if epochs != Some(decl.repetitions) {
        out.push(format!(
            "epochs: declared {} (repetitions), eval ran {}",
            decl.repetitions,
            config.get("epochs").display()
        ));
    }
    for name in crate::declaration::INSPECT_LIMITS {
        let ran = config.get(name);
        match (task.limits.get(name), ran) {
            (None, IVal::Null) => {}
            (Some(d), IVal::Null) => {
                out.push(format!("{name}: declared {}, eval set none", show(*d)))
            }
            (None, r) => out.push(format!("{name}: not declared, eval set {}", r.display())),
            (Some(d), r) => {
                if r.as_f64() != Some(*d) {
                    out.push(format!(
                        "{name}: declared {}, eval set {}",
                        show(*d),
                        r.display()
                    ));
                }
            }
        }
    }
    let declared = &task.inspect.as_ref().expect("an inspect task").task_args;
    let ran = eval.get("task_args");
    let ran_m = ran.as_object().unwrap_or_default();
    for (k, v) in declared {
        match ran_m.iter().find(|(rk, _)| rk == k) {
            None => out.push(format!("task_args.{k}: declared {v}, eval ran none")),
            Some((_, rv)) if !json::same(rv, v) => out.push(format!(
                "task_args.{k}: declared {v}, eval ran {}",
                rv.display()
            )),
            Some(_) => {}
        }
    }
    for (k, rv) in ran_m {
        if !declared.contains_key(k) {
            out.push(format!(
                "task_args.{k}: not declared, eval ran {}",
                rv.display()
            ));
        }
    }
    out
}

/// A declared limit as written (an integral value without a fraction).
fn show(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// The models and efforts of the declared roles: `default` is the eval's main model, every
/// other role an entry of `eval.model_roles`; `provider` the main model's prefix.
fn models_and_efforts(decl: &Declaration, eval: &IVal) -> Value {
    let main = eval.get("model").as_str();
    let mut roles = Map::new();
    for name in decl.profile.roles.keys() {
        let (model, effort) = if name == "default" {
            (
                main,
                eval.get("model_generate_config")
                    .get("reasoning_effort")
                    .as_str(),
            )
        } else {
            let r = eval.get("model_roles").get(name);
            (
                r.get("model").as_str(),
                r.get("config").get("reasoning_effort").as_str(),
            )
        };
        roles.insert(name.clone(), json!({"model": model, "effort": effort}));
    }
    json!({"provider": main.map(provider), "roles": roles})
}

/// Whether the eval ran a scripted model: its main model, a role's model or a model the sample
/// used is `mockllm/…`.
fn is_scripted(eval: &IVal, sample: &InspectSample) -> bool {
    let mock = |m: &str| provider(m) == "mockllm";
    eval.get("model").as_str().is_some_and(mock)
        || eval
            .get("model_roles")
            .as_object()
            .unwrap_or_default()
            .iter()
            .any(|(_, r)| r.get("model").as_str().is_some_and(mock))
        || sample
            .model_usage
            .as_object()
            .unwrap_or_default()
            .iter()
            .any(|(m, _)| mock(m))
}

/// Everything a conversion needs besides the sample.
pub struct Env<'a> {
    pub repo_root: Option<&'a Path>,
    pub runtime_identity: Option<&'a Value>,
    pub lookup: &'a dyn Fn(&str) -> Resolved,
}

/// A converted sample: the row value and what the output says about it.
#[derive(Debug)]
pub struct Built {
    pub row: Value,
    /// Where the row's evidence class came from, when it is not the task's (the row check
    /// refuses the row; this is the hint beside its reason).
    pub evidence_hint: Option<String>,
    pub key: String,
    pub notes: Vec<String>,
}

/// Convert one sample of `task` into the row of `schedule_id`; refusals name the sample.
pub fn sample_row(
    decl: &Declaration,
    env: &Env<'_>,
    task: &Task,
    schedule_id: &str,
    log: &InspectLog,
    sample: &InspectSample,
) -> std::result::Result<Built, Vec<crate::refusal::Reason>> {
    let label = label(log, sample);
    let spec = task.inspect.as_ref().expect("an inspect task");
    let mut r = Vec::new();
    // The row's evidence class: a scripted (mockllm) model is fixture evidence, any other model
    // live. A class other than the task's is the row check's refusal (a relabeled row), as
    // for every importer.
    let evidence = if is_scripted(&log.eval, sample) {
        Evidence::Fixture
    } else {
        Evidence::Live
    };
    let evidence_hint = (evidence != task.evidence).then(|| {
        format!(
            "{label}: row {schedule_id}: a run of {} model is {} evidence: it cannot fill a row of task {}, declared {}",
            if evidence == Evidence::Fixture { "a mockllm (scripted)" } else { "a live (not mockllm)" },
            evidence.as_str(),
            task.id,
            task.evidence.as_str()
        )
    });
    let Some(record) = record_id(log, sample) else {
        r.push(
            crate::refusal::Reason::new(
                "the sample has no uuid and the log no eval_id or run_id: no record id",
            )
            .at(&label)
            .row(schedule_id),
        );
        return Err(r);
    };
    let mut notes = Vec::new();
    let retries = sample.error_retries.as_array().unwrap_or_default();
    let retried = !retries.is_empty();
    let v = verdict(&sample.scores, &spec.scorer);
    let (outcome, status, reason, checks) = if retried {
        let msg = retries[0].get("message").as_str().unwrap_or_default();
        let msg = first_line(msg);
        notes.push(format!(
            "the harness retried this sample after an error ({} {}): this attempt is the first try's ERROR; the retry's result is not this attempt's (a retry needs a new declared schedule)",
            retries.len(),
            if retries.len() == 1 { "retry" } else { "retries" }
        ));
        (
            "ERROR",
            "error".to_owned(),
            if msg.is_empty() {
                "the first try ended in an error (the log records no message)".to_owned()
            } else {
                msg.to_owned()
            },
            Value::Null,
        )
    } else if !sample.error.is_null() {
        let msg = first_line(sample.error.get("message").as_str().unwrap_or_default());
        (
            "ERROR",
            "error".to_owned(),
            if msg.is_empty() {
                "the sample ended in an error (the log records no message)".to_owned()
            } else {
                msg.to_owned()
            },
            Value::Null,
        )
    } else {
        let status = match sample.limit.get("type").as_str() {
            Some(t) if !sample.limit.is_null() => format!("limit:{t}"),
            _ if !sample.limit.is_null() => "limit:unknown".to_owned(),
            _ => "completed".to_owned(),
        };
        let others: Vec<&str> = sample
            .scores
            .as_object()
            .unwrap_or_default()
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        if v.value.is_none() && !others.is_empty() && sample.scores.get(&spec.scorer).is_null() {
            // Scores, but none under the declared name: the declaration and the log disagree
            // (a typo is the usual cause); never an UNSCORED row that could not be undone.
            let mut names = others.clone();
            names.sort_unstable();
            names.dedup();
            r.push(
                crate::refusal::Reason::new(format!(
                    "the sample has no score from the declared scorer {} but has scores from {}: the declaration (task {}, inspect.scorer) and the log disagree",
                    spec.scorer,
                    names.join(", "),
                    task.id
                ))
                .at(&label).row(schedule_id),
            );
            return Err(r);
        }
        match &v.value {
            None => (
                "UNSCORED",
                status,
                format!("no {} score from the scorer", spec.scorer),
                Value::Null,
            ),
            Some(IVal::Num(Num::NaN)) => {
                // The scorer's own reason for not scoring (`Score.unscored(reason=…)`, or the
                // older `metadata.unscored_reason`), when it gave one.
                let score = sample.scores.get(&spec.scorer);
                let why = (score.get("reason").as_str())
                    .or_else(|| score.get("metadata").get("unscored_reason").as_str())
                    .map(first_line)
                    .filter(|w| !w.is_empty());
                (
                    "UNSCORED",
                    status,
                    match why {
                        Some(w) => format!("{} scored NaN (unscored): {w}", spec.scorer),
                        None => format!("{} scored NaN (unscored)", spec.scorer),
                    },
                    Value::Null,
                )
            }
            Some(IVal::Null) => (
                "UNSCORED",
                status,
                format!("{} recorded no value", spec.scorer),
                Value::Null,
            ),
            Some(value) => {
                let ok = in_pass(value, &spec.pass);
                let checks = json!([{"name": spec.scorer, "ok": ok}]);
                if ok {
                    ("PASS", status, String::new(), checks)
                } else {
                    let mut reason = format!("{} scored {}", spec.scorer, value.display());
                    if let Some(e) = v
                        .explanation
                        .as_deref()
                        .map(first_line)
                        .filter(|e| !e.is_empty())
                    {
                        reason.push_str(": ");
                        reason.push_str(e);
                    }
                    ("FAIL", status, reason, checks)
                }
            }
        }
    };
    if let Some(edit) = &v.edit {
        notes.push(edit.clone());
    }
    if !sample.invalidation.is_null() {
        notes.push(format!(
            "the sample is invalidated in the log{}: it keeps its verdict",
            sample
                .invalidation
                .get("reason")
                .as_str()
                .map(|r| format!(" ({})", first_line(r)))
                .unwrap_or_default()
        ));
    }
    let (source_revision, rev_note) = revision_of(&log.eval, env.lookup);
    notes.extend(rev_note);
    if let Some(s) = log
        .status
        .as_deref()
        .filter(|s| log.ended() && *s != "success")
    {
        notes.push(format!(
            "the run ended with status {s}: declared samples it did not reach stay DEFERRED"
        ));
    }
    if !log.ended() {
        notes.push(match (&log.status, log.has_header) {
            (Some(s), _) => format!("the run had not ended (status {s}) when the log was read"),
            (None, false) => {
                "the run had not ended (the log has no header yet) when the log was read".to_owned()
            }
            (None, true) => "the log records no status: the run may not have ended".to_owned(),
        });
    }
    notes.push(DEFINITION_NOTE.to_owned());
    let (usage, cost, tokens) = if retried {
        (Value::Null, Value::Null, Value::Null)
    } else {
        usage(&sample.model_usage)
    };
    let elapsed = if retried {
        Value::Null
    } else {
        amount(&sample.total_time)
    };
    let mut spent = Map::new();
    for name in task.limits.keys() {
        let v = if retried {
            Value::Null
        } else {
            match name.as_str() {
                "message_limit" => sample.messages.map_or(Value::Null, Value::from),
                "token_limit" => tokens.clone(),
                "time_limit" => elapsed.clone(),
                "working_limit" => amount(&sample.working_time),
                "cost_limit" => cost.clone(),
                _ => Value::Null,
            }
        };
        spent.insert(name.clone(), v);
    }
    let interventions: Vec<Value> = sample
        .approvals
        .iter()
        .map(|a| {
            let mut note = format!(
                "human approval of tool call {} ({}): {}",
                a.function, a.call_id, a.decision
            );
            if let Some(e) = a
                .explanation
                .as_deref()
                .map(first_line)
                .filter(|e| !e.is_empty())
            {
                note.push_str(": ");
                note.push_str(e);
            }
            json!({"kind": "decision", "note": note})
        })
        .collect();
    let log_path = crate::relative_to_repo(&log.path, env.repo_root);
    let mut m: Map<String, Value> = decl
        .attempt_fields
        .iter()
        .map(|f| (f.clone(), Value::Null))
        .collect();
    let (entry_task, repetition) = (
        task.id.clone(),
        decl.schedule_entry(schedule_id).map(|e| e.repetition),
    );
    for (k, v) in [
        ("schedule_id", Value::from(schedule_id)),
        ("task_id", Value::from(entry_task)),
        ("repetition", json!(repetition)),
        ("evidence", Value::from(evidence.as_str())),
        ("native_outcome", Value::from(outcome)),
        ("native_status", Value::from(status)),
        (
            "reason",
            if outcome == "PASS" {
                Value::Null
            } else {
                Value::from(reason)
            },
        ),
        ("source_revision", source_revision),
        (
            "runtime_identity",
            env.runtime_identity.cloned().unwrap_or(Value::Null),
        ),
        (
            "actual_models_and_efforts",
            models_and_efforts(decl, &log.eval),
        ),
        ("runner_options", Value::Null),
        (
            "option_deviations",
            json!(option_deviations(decl, task, &log.eval)),
        ),
        ("oracle_checks", checks),
        (
            "evidence_refs",
            json!([format!("{log_path}#{}", sample.member)]),
        ),
        ("elapsed_seconds", elapsed),
        ("usage", usage),
        ("estimated_usd", cost),
        ("spent_budget", Value::Object(spent)),
        (
            "interventions_decision_or_repair",
            Value::Array(interventions),
        ),
        (
            "native_record",
            json!({"kind": "inspect", "id": record, "sha256": crate::sha256_hex(&sample.bytes)}),
        ),
    ] {
        m.insert(k.to_owned(), v);
    }
    if !r.is_empty() {
        return Err(r);
    }
    Ok(Built {
        row: Value::Object(m),
        evidence_hint,
        key: format!("{}:{record}", Kind::Inspect.as_str()),
        notes,
    })
}

/// Samples that were not imported, for the output.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Skipped {
    /// `<log>#<member>` of samples already in the ledger from the same record, with the row.
    pub already_in_ledger: Vec<String>,
    /// `<log>#<member>` of samples of no declared task, skipped with `--skip-undeclared`.
    pub undeclared: Vec<String>,
}
