//! A trial's `result.json` as the row needs it: every way it can break the part of Harbor's
//! `TrialResult` a row is built from ([`check_result`]), and, once it passes, those parts read
//! into typed fields ([`TrialResult`]) — one pass over the parsed document, nothing of it kept.
//! Both are written once over [`View`], so the fast reader's [`crate::json::Node`] (borrowing
//! its strings from the file's bytes) and the ordinary `serde_json::Value` give the same
//! answers, reasons and all.

use serde_json::Value;
use std::fmt::Display;

use super::time::parse_utc;
use crate::json::{Obj, View, J};

/// The parts of a checked `result.json` that a row is built from (`harbor.md`'s table). Other
/// keys are Harbor's and are kept in the record, not read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrialResult {
    pub task_name: String,
    pub trial_name: String,
    /// `config.job_id`.
    pub job_id: String,
    /// The agent the trial ran: `config.agent.name`, else `agent_info.name` (an agent given by
    /// import path has no configured name); empty when neither is a string.
    pub agent: String,
    /// `agent_info.model_info.name` and `.provider` (null for agents that run no model).
    pub model: Option<String>,
    pub provider: Option<String>,
    /// `config.agent.kwargs.reasoning_effort`, when a string.
    pub effort: Option<String>,
    /// `config.timeout_multiplier`, `config.agent_timeout_multiplier`,
    /// `config.verifier_timeout_multiplier` (in [`MULTIPLIERS`] order), when numbers.
    pub multipliers: [Option<f64>; 3],
    /// `verifier_result.rewards` (name → number, in name order); `None` when it or
    /// `verifier_result` is null or absent.
    pub rewards: Option<Vec<(String, Value)>>,
    /// The trial's exceptions, its own first, then each step's (Harbor's
    /// `TrialResult._recorded_exceptions`): (type, message).
    pub exceptions: Vec<(String, String)>,
    /// `started_at` / `finished_at` of the trial, of `agent_execution` and of `verifier`, as
    /// microseconds since the epoch ([`parse_utc`]); `None` when null or absent.
    pub trial_times: (Option<i64>, Option<i64>),
    pub agent_times: (Option<i64>, Option<i64>),
    pub verifier_times: (Option<i64>, Option<i64>),
    /// `agent_result`'s `n_input_tokens`, `n_cache_tokens`, `n_output_tokens` and `cost_usd`
    /// as recorded (a number, or null), and its `model_usage` (null when absent).
    pub n_input_tokens: Value,
    pub n_cache_tokens: Value,
    pub n_output_tokens: Value,
    pub cost_usd: Value,
    pub model_usage: Value,
}

/// The timeout multipliers of a trial's configuration, in [`TrialResult::multipliers`] order.
pub const MULTIPLIERS: [&str; 3] = [
    "timeout_multiplier",
    "agent_timeout_multiplier",
    "verifier_timeout_multiplier",
];

/// A member of an object as a [`J`].
fn at<'a, V: View>(o: &'a V::Obj, key: &str) -> Option<J<'a, V>> {
    o.get(key).map(View::view)
}

/// A string member, owned.
fn text<V: View>(v: Option<J<'_, V>>) -> Option<String> {
    v.and_then(J::as_str).map(str::to_owned)
}

/// A number as the row writes it (an integer stays one); anything else is null.
fn number<V: View>(v: Option<J<'_, V>>) -> Value {
    match v {
        Some(J::Number(n)) => n.to_number().map_or(Value::Null, Value::Number),
        _ => Value::Null,
    }
}

/// A timestamp member, when it is one.
fn stamp<V: View>(v: Option<J<'_, V>>) -> Option<i64> {
    v.and_then(J::as_str).and_then(parse_utc)
}

impl TrialResult {
    /// Read a result that passed [`check_result`] (on anything else the fields read are the
    /// parts that are there, and the rest is empty).
    pub fn read<V: View>(v: &V) -> TrialResult {
        let top = v.view();
        let get = |k: &str| top.get(k);
        let config = get("config");
        let agent = config.and_then(|c| c.get("agent"));
        let info = get("agent_info");
        let model_info = info.and_then(|i| i.get("model_info"));
        let times = |phase: Option<J<'_, V>>| {
            (
                stamp(phase.and_then(|p| p.get("started_at"))),
                stamp(phase.and_then(|p| p.get("finished_at"))),
            )
        };
        let one = |e: Option<J<'_, V>>| -> Option<(String, String)> {
            let e = e?;
            Some((
                e.get("exception_type")?.as_str()?.to_owned(),
                e.get("exception_message")?
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ))
        };
        let mut exceptions: Vec<(String, String)> =
            one(get("exception_info")).into_iter().collect();
        for s in get("step_results")
            .and_then(J::as_array)
            .unwrap_or_default()
        {
            exceptions.extend(one(s.view().get("exception_info")));
        }
        let rewards = get("verifier_result")
            .and_then(|r| r.get("rewards"))
            .and_then(J::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.to_owned(), v.view().to_value()))
                    .collect()
            });
        let usage = get("agent_result");
        let counted = |k: &str| number(usage.and_then(|a| a.get(k)));
        TrialResult {
            task_name: text(get("task_name")).unwrap_or_default(),
            trial_name: text(get("trial_name")).unwrap_or_default(),
            job_id: text(config.and_then(|c| c.get("job_id"))).unwrap_or_default(),
            agent: text(agent.and_then(|a| a.get("name")))
                .or_else(|| text(info.and_then(|i| i.get("name"))))
                .unwrap_or_default(),
            model: text(model_info.and_then(|m| m.get("name"))),
            provider: text(model_info.and_then(|m| m.get("provider"))),
            effort: text(
                agent
                    .and_then(|a| a.get("kwargs"))
                    .and_then(|k| k.get("reasoning_effort")),
            ),
            multipliers: MULTIPLIERS.map(|k| config.and_then(|c| c.get(k)).and_then(J::as_f64)),
            rewards,
            exceptions,
            trial_times: times(Some(top)),
            agent_times: times(get("agent_execution")),
            verifier_times: times(get("verifier")),
            n_input_tokens: counted("n_input_tokens"),
            n_cache_tokens: counted("n_cache_tokens"),
            n_output_tokens: counted("n_output_tokens"),
            cost_usd: counted("cost_usd"),
            model_usage: usage
                .and_then(|a| a.get("model_usage"))
                .map_or(Value::Null, J::to_value),
        }
    }
}

/// Every way a parsed `result.json` breaks the part of Harbor's `TrialResult` a row is built
/// from (other keys are Harbor's and are kept, not read).
pub fn check_result<V: View>(v: &V) -> Vec<String> {
    let mut out = Vec::new();
    let Some(m) = v.view().as_object() else {
        return vec![format!(
            "must be a JSON object (Harbor's TrialResult), not {}",
            v.view().type_name()
        )];
    };
    let nonempty = |out: &mut Vec<String>, name: &str, v: Option<J<'_, V>>| match v {
        Some(J::String(s)) if !s.is_empty() => {}
        Some(other) => out.push(format!("{name} must be a non-empty string, not {other}")),
        None => out.push(format!("{name} is missing")),
    };
    nonempty(&mut out, "task_name", at::<V>(m, "task_name"));
    nonempty(&mut out, "trial_name", at::<V>(m, "trial_name"));
    nonempty(&mut out, "id", at::<V>(m, "id"));
    match at::<V>(m, "config") {
        Some(J::Object(c)) => {
            nonempty(&mut out, "config.job_id", at::<V>(c, "job_id"));
            match at::<V>(c, "agent") {
                Some(J::Object(a)) => {
                    for k in ["name", "model_name"] {
                        if !matches!(at::<V>(a, k), None | Some(J::Null | J::String(_))) {
                            out.push(format!("config.agent.{k} must be a string or null"));
                        }
                    }
                    if !matches!(at::<V>(a, "kwargs"), None | Some(J::Null | J::Object(_))) {
                        out.push("config.agent.kwargs must be an object or null".into());
                    }
                }
                _ => out.push("config.agent must be an object".into()),
            }
            for k in MULTIPLIERS {
                match at::<V>(c, k) {
                    None | Some(J::Null) => {}
                    Some(n) if n.as_f64().is_some_and(f64::is_finite) => {}
                    Some(other) => out.push(format!("config.{k} must be a number, not {other}")),
                }
            }
        }
        _ => out.push("config must be an object (the trial's configuration)".into()),
    }
    match at::<V>(m, "agent_info") {
        Some(J::Object(a)) => {
            if !matches!(at::<V>(a, "name"), Some(J::String(_))) {
                out.push("agent_info.name must be a string".into());
            }
            match at::<V>(a, "model_info") {
                None | Some(J::Null) => {}
                Some(J::Object(mi)) => {
                    if !matches!(at::<V>(mi, "name"), Some(J::String(_))) {
                        out.push("agent_info.model_info.name must be a string".into());
                    }
                    if !matches!(at::<V>(mi, "provider"), None | Some(J::Null | J::String(_))) {
                        out.push("agent_info.model_info.provider must be a string or null".into());
                    }
                }
                Some(other) => out.push(format!(
                    "agent_info.model_info must be an object or null, not {other}"
                )),
            }
        }
        _ => out.push("agent_info must be an object".into()),
    }
    match at::<V>(m, "verifier_result") {
        None | Some(J::Null) => {}
        Some(J::Object(vr)) => match at::<V>(vr, "rewards") {
            None | Some(J::Null) => {}
            Some(J::Object(rw)) => {
                for (k, r) in rw.iter() {
                    let r = r.view();
                    if !r.as_f64().is_some_and(f64::is_finite) || r.as_bool().is_some() {
                        out.push(format!(
                            "verifier_result.rewards.{k} must be a number (Harbor's rewards are floats or integers), not {r}"
                        ));
                    }
                }
            }
            Some(other) => out.push(format!(
                "verifier_result.rewards must be an object (reward name → number) or null, not {other}"
            )),
        },
        Some(other) => out.push(format!(
            "verifier_result must be an object or null, not {other}"
        )),
    }
    // A field's name is written out only in a reason (`format_args!`, not a `String` per field).
    let exception = |out: &mut Vec<String>, name: &dyn Display, e: Option<J<'_, V>>| match e {
        None | Some(J::Null) => {}
        Some(J::Object(x)) => {
            if !matches!(at::<V>(x, "exception_type"), Some(J::String(s)) if !s.is_empty()) {
                out.push(format!("{name}.exception_type must be a non-empty string"));
            }
            if !matches!(at::<V>(x, "exception_message"), Some(J::String(_))) {
                out.push(format!("{name}.exception_message must be a string"));
            }
        }
        Some(other) => out.push(format!("{name} must be an object or null, not {other}")),
    };
    exception(&mut out, &"exception_info", at::<V>(m, "exception_info"));
    match at::<V>(m, "step_results") {
        None | Some(J::Null) => {}
        Some(J::Array(steps)) => {
            for (i, s) in steps.iter().enumerate() {
                exception(
                    &mut out,
                    &format_args!("step_results[{i}].exception_info"),
                    s.view().get("exception_info"),
                );
            }
        }
        Some(other) => out.push(format!("step_results must be a list or null, not {other}")),
    }
    let timestamp = |out: &mut Vec<String>, name: &dyn Display, v: Option<J<'_, V>>| match v {
        None | Some(J::Null) => {}
        Some(J::String(s)) if parse_utc(s).is_some() => {}
        Some(other) => out.push(format!(
            "{name} must be a UTC timestamp (YYYY-MM-DDTHH:MM:SS[.ffffff]Z) or null, not {other}"
        )),
    };
    timestamp(&mut out, &"started_at", at::<V>(m, "started_at"));
    timestamp(&mut out, &"finished_at", at::<V>(m, "finished_at"));
    for phase in ["agent_execution", "verifier"] {
        match at::<V>(m, phase) {
            None | Some(J::Null) => {}
            Some(J::Object(p)) => {
                timestamp(
                    &mut out,
                    &format_args!("{phase}.started_at"),
                    at::<V>(p, "started_at"),
                );
                timestamp(
                    &mut out,
                    &format_args!("{phase}.finished_at"),
                    at::<V>(p, "finished_at"),
                );
            }
            Some(other) => out.push(format!("{phase} must be an object or null, not {other}")),
        }
    }
    match at::<V>(m, "agent_result") {
        None | Some(J::Null) => {}
        Some(J::Object(a)) => {
            for k in ["n_input_tokens", "n_cache_tokens", "n_output_tokens"] {
                match at::<V>(a, k) {
                    None | Some(J::Null) => {}
                    Some(n) if n.count().is_some() => {}
                    Some(other) => out.push(format!(
                        "agent_result.{k} must be a nonnegative integer or null, not {other}"
                    )),
                }
            }
            match at::<V>(a, "cost_usd") {
                None | Some(J::Null) => {}
                Some(n) if n.nonneg_number().is_some() => {}
                Some(other) => out.push(format!(
                    "agent_result.cost_usd must be a nonnegative number or null, not {other}"
                )),
            }
            match at::<V>(a, "model_usage") {
                None | Some(J::Null) => {}
                Some(J::Object(models)) => {
                    for (model, counts) in models.iter() {
                        match counts.view() {
                            J::Object(c) => {
                                for (k, n) in c.iter() {
                                    let n = n.view();
                                    if !n.is_null() && n.nonneg_number().is_none() {
                                        out.push(format!(
                                            "agent_result.model_usage.{model}.{k} must be a nonnegative number or null, not {n}"
                                        ));
                                    }
                                }
                            }
                            other => out.push(format!(
                                "agent_result.model_usage.{model} must be an object, not {other}"
                            )),
                        }
                    }
                }
                Some(other) => out.push(format!(
                    "agent_result.model_usage must be an object or null, not {other}"
                )),
            }
        }
        Some(other) => out.push(format!(
            "agent_result must be an object or null, not {other}"
        )),
    }
    out
}
