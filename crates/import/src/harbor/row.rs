//! A trial becomes a row, field by field as `harbor.md`'s table says: the verdict from the
//! declared reward and Harbor's error policy, the first try of a trial `job.log` says was
//! retried, usage and spend, option deviations, models and efforts, and the evidence class.

use serde_json::{json, Map, Value};

use super::result::MULTIPLIERS;
use super::time::seconds_from;
use super::{HarborTrial, TrialResult, SCRIPTED_AGENTS};
use crate::declaration::{harbor_reward_valid, Declaration, Evidence, Kind, Task};
use crate::inspect::Built;

/// Everything a conversion needs besides the trial.
pub struct Env<'a> {
    pub runtime_identity: Option<&'a Value>,
    /// `--revision`, resolved to a full commit id.
    pub revision: Option<&'a str>,
}

/// The first line of a text.
fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default().trim_end()
}

/// A declared value as written (an integral value without a fraction).
fn show(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

/// Each difference between the declaration and how the trial ran (`harbor.md`,
/// `option_deviations`).
fn option_deviations(decl: &Declaration, task: &Task, trial: &HarborTrial) -> Vec<String> {
    let spec = task.harbor.as_ref().expect("a harbor task");
    let r = &trial.result;
    let mut out = Vec::new();
    let agent = r.agent.as_str();
    if agent != spec.agent {
        out.push(format!(
            "agent: declared {}, the trial ran {}",
            spec.agent,
            if agent.is_empty() {
                "an unnamed agent"
            } else {
                agent
            }
        ));
    }
    for (k, x) in MULTIPLIERS.iter().zip(r.multipliers) {
        if let Some(x) = x.filter(|x| *x != 1.0) {
            out.push(format!("{k}: {} (the task's timeouts scaled)", show(x)));
        }
    }
    match &trial.digest {
        Some(d) if *d == spec.digest => {}
        Some(d) => out.push(format!(
            "task digest: declared {}, the trial's lock has {d} (the task directory differs)",
            spec.digest
        )),
        None => out.push(format!(
            "task digest: the trial has no lock.json (task.digest), declared {}: not compared",
            spec.digest
        )),
    }
    match trial.n_attempts {
        Some(n) if n == decl.repetitions => {}
        Some(n) => out.push(format!(
            "n_attempts: declared {} (repetitions), the job ran {n}",
            decl.repetitions
        )),
        None => out.push(format!(
            "n_attempts: declared {} (repetitions); the trial's job directory has no config.json: not compared",
            decl.repetitions
        )),
    }
    out
}

/// The models and efforts of the declared roles: role `agent` is the trial's model
/// (`agent_info.model_info.name`, null for agents that run none) and reasoning effort
/// (`config.agent.kwargs.reasoning_effort`); another role ran nothing Harbor records.
fn models_and_efforts(decl: &Declaration, result: &TrialResult) -> Value {
    let mut roles = Map::new();
    for name in decl.profile.roles.keys() {
        let v = if name == "agent" {
            json!({"model": result.model, "effort": result.effort})
        } else {
            json!({"model": null, "effort": null})
        };
        roles.insert(name.clone(), v);
    }
    json!({"provider": result.provider, "roles": roles})
}

/// `agent_result`'s counts and `model_usage` as recorded; null when all are null.
fn usage(result: &TrialResult) -> Value {
    let mut m = Map::new();
    for (k, v) in [
        ("n_input_tokens", &result.n_input_tokens),
        ("n_cache_tokens", &result.n_cache_tokens),
        ("n_output_tokens", &result.n_output_tokens),
    ] {
        m.insert(k.to_owned(), v.clone());
    }
    let models = result.model_usage.clone();
    let all_null = m.values().all(Value::is_null) && models.is_null();
    m.insert("model_usage".to_owned(), models);
    if all_null {
        Value::Null
    } else {
        Value::Object(m)
    }
}

/// Convert one trial of `task` into the row of `schedule_id`; refusals name the trial. A
/// graded trial whose verifier recorded rewards, none under the declared `harbor.reward`, is
/// refused (docs/reference/workflow.md, rule 4: the declaration and the trial disagree, a
/// typo is the usual cause), never an UNSCORED row that could not be undone.
pub fn trial_row(
    decl: &Declaration,
    env: &Env<'_>,
    task: &Task,
    schedule_id: &str,
    trial: &HarborTrial,
) -> std::result::Result<Built, Vec<crate::refusal::Reason>> {
    let spec = task.harbor.as_ref().expect("a harbor task");
    let r = &trial.result;
    // How the trial is named, made only for a hint or a refusal.
    let label = || trial.label();
    let agent = r.agent.as_str();
    let evidence = if SCRIPTED_AGENTS.contains(&agent) {
        Evidence::Fixture
    } else {
        Evidence::Live
    };
    let evidence_hint = (evidence != task.evidence).then(|| {
        format!(
            "{}: row {schedule_id}: a trial of {} is {} evidence: it cannot fill a row of task {}, declared {}",
            label(),
            if evidence == Evidence::Fixture {
                format!("Harbor's scripted {agent} agent")
            } else {
                format!("agent {agent} (not oracle or nop)")
            },
            evidence.as_str(),
            task.id,
            task.evidence.as_str()
        )
    });
    let mut notes = Vec::new();
    let excs: Vec<(&str, &str)> = (r.exceptions.iter())
        .map(|(k, m)| (k.as_str(), m.as_str()))
        .collect();
    let rewards = r.rewards.as_deref();
    let reward = rewards.and_then(|m| m.iter().find(|(k, _)| *k == spec.reward).map(|(_, v)| v));
    let (outcome, status, reason, checks, measured) = if let Some(kind) = &trial.retried {
        notes.push(format!(
            "job.log says Harbor retried this trial after {kind}: it deleted the first attempt, which is this row's (ERROR); the surviving result.json is the retry's, kept as the record, its reward not used (a retry needs a new declared schedule)"
        ));
        (
            "ERROR",
            format!("exception:{kind}"),
            format!("{kind} (from job.log): Harbor deleted the first attempt and ran the trial again; the retry's result is not this attempt's"),
            Value::Null,
            false,
        )
    } else if let Some((kind, msg)) = excs.iter().find(|(k, _)| !harbor_reward_valid(k)).copied() {
        let line = first_line(msg);
        (
            "ERROR",
            format!("exception:{}", excs[0].0),
            if line.is_empty() {
                kind.to_owned()
            } else {
                format!("{kind}: {line}")
            },
            Value::Null,
            true,
        )
    } else {
        let status = match excs.first() {
            Some((k, _)) => format!("exception:{k}"),
            None => "completed".to_owned(),
        };
        let graded = |why: String| match excs.first() {
            Some((k, m)) if !first_line(m).is_empty() => format!("{why} ({k}: {})", first_line(m)),
            Some((k, _)) => format!("{why} ({k})"),
            None => why,
        };
        match (rewards, reward) {
            (None, _) => (
                "UNSCORED",
                status,
                graded("the verifier recorded no rewards".to_owned()),
                Value::Null,
                true,
            ),
            (Some(all), None) => {
                let mut names: Vec<&str> = all.iter().map(|(k, _)| k.as_str()).collect();
                names.sort_unstable();
                if !names.is_empty() {
                    return Err(vec![crate::refusal::Reason::new(format!(
                        "the verifier recorded no reward {:?} but has rewards {}: the declaration (task {}, harbor.reward) and the trial disagree",
                        spec.reward,
                        names.join(", "),
                        task.id
                    ))
                    .rule(crate::refusal::Rule::Workflow(4))
                    .at(label()).row(schedule_id)]);
                }
                (
                    "UNSCORED",
                    status,
                    graded("the verifier recorded no rewards".to_owned()),
                    Value::Null,
                    true,
                )
            }
            (Some(_), Some(value)) => {
                let ok = value.as_f64().is_some_and(|x| x >= spec.pass_at_least);
                let checks = json!([{"name": spec.reward, "ok": ok}]);
                if ok {
                    ("PASS", status, String::new(), checks, true)
                } else {
                    (
                        "FAIL",
                        status,
                        graded(format!("{} = {value}", spec.reward)),
                        checks,
                        true,
                    )
                }
            }
        }
    };
    let source_revision = match env.revision {
        Some(rev) => Value::from(rev),
        None => {
            notes.push("source_revision null: Harbor records no revision (the Harbor plugin records HEAD at job start; a batch import states it with --revision REV)".to_owned());
            Value::Null
        }
    };
    let field = |v: &Value| -> Value {
        if measured {
            v.clone()
        } else {
            Value::Null
        }
    };
    let seconds = |(start, end): (Option<i64>, Option<i64>)| -> Value {
        if !measured {
            return Value::Null;
        }
        seconds_from(start, end)
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number)
    };
    let elapsed = seconds(r.trial_times);
    let mut spent = Map::new();
    for name in task.limits.keys() {
        let v = match name.as_str() {
            "agent_seconds" => seconds(r.agent_times),
            "verifier_seconds" => seconds(r.verifier_times),
            "cost_usd" => field(&r.cost_usd),
            "input_tokens" => field(&r.n_input_tokens),
            "output_tokens" => field(&r.n_output_tokens),
            _ => Value::Null,
        };
        spent.insert(name.clone(), v);
    }
    // (The repetition alone, without building the schedule entry and its id.)
    let repetition = decl.scheduled(schedule_id).map(|(_, _, rep)| rep);
    let mut fields = [
        ("schedule_id", Value::from(schedule_id)),
        ("task_id", Value::from(task.id.clone())),
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
        ("actual_models_and_efforts", models_and_efforts(decl, r)),
        ("runner_options", Value::Null),
        (
            "option_deviations",
            json!(option_deviations(decl, task, trial)),
        ),
        ("oracle_checks", checks),
        ("evidence_refs", json!([trial.evidence])),
        ("elapsed_seconds", elapsed),
        ("usage", if measured { usage(r) } else { Value::Null }),
        ("estimated_usd", field(&r.cost_usd)),
        ("spent_budget", Value::Object(spent)),
        ("interventions_decision_or_repair", json!([])),
        (
            "native_record",
            json!({"kind": Kind::Harbor.as_str(), "id": trial.record_id(), "sha256": trial.record.sha256()}),
        ),
    ]
    .map(|(k, v)| (k, Some(v)));
    // The row's map made once: each declared field with its value (null for a field added to
    // the twenty, which a trial does not fill), found at its own place among the twenty, where
    // the declaration puts it, before any search; a standard field not declared (a declaration
    // never leaves one out) added, for the row check to refuse.
    let mut take = |i: usize, f: &str| -> Value {
        let at = match fields.get(i) {
            Some((k, _)) if *k == f => Some(i),
            _ => fields.iter().position(|(k, _)| *k == f),
        };
        at.and_then(|i| fields[i].1.take()).unwrap_or(Value::Null)
    };
    let mut m: Map<String, Value> = (decl.attempt_fields.iter().enumerate())
        .map(|(i, f)| (f.clone(), take(i, f)))
        .collect();
    for (k, v) in fields {
        if let Some(v) = v {
            m.insert(k.to_owned(), v);
        }
    }
    Ok(Built {
        row: Value::Object(m),
        evidence_hint,
        key: trial.key(),
        notes,
    })
}
