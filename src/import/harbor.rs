//! Harbor trials (`harbor.md`): a job directory (every trial directory in it) or one trial
//! directory, each trial's `result.json` read strictly, matched to the declared task whose
//! `harbor.task` is its `task_name`, and converted into a row over the same row model as the
//! other kinds. The record id is `<job id>/<trial name>`; Harbor keeps the trial name when it
//! retries, so a retry's result is a second record for a row already filled, which the one
//! write path refuses as every retry. This module adds no admission rule of its own.
//!
//! By job: this file (the trial as read, its directory's job, `job.log`'s retried trials),
//! `row.rs` (a trial converted into a row), `time.rs` (Harbor's UTC timestamps).

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::declaration::{Declaration, Task};
use crate::error::{Error, Reasons, Result};

mod row;
mod time;

pub use row::{trial_row, Env};
pub use time::parse_utc;

/// The agents that run no model: Harbor's `oracle` (the task's reference solution) and `nop`.
/// Their trials are fixture evidence, as `mockllm` runs are for Inspect.
pub const SCRIPTED_AGENTS: [&str; 2] = ["oracle", "nop"];

/// One trial as read.
#[derive(Debug, Clone)]
pub struct HarborTrial {
    /// The trial directory.
    pub dir: PathBuf,
    /// `result.json`'s exact bytes (the record).
    pub bytes: Vec<u8>,
    /// `result.json`, parsed strictly and checked for the fields the row is built from.
    pub result: Value,
    pub task_name: String,
    pub trial_name: String,
    /// `config.job_id`.
    pub job_id: String,
    /// The trial lock's `task.digest`; `None` when the trial has no `lock.json`.
    pub digest: Option<String>,
    /// The job's `n_attempts` (its `config.json`, 1 when omitted); `None` when the trial's
    /// job directory holds no `config.json`.
    pub n_attempts: Option<u64>,
    /// The first exception type the job's `job.log` names for this trial in a `Retrying` line.
    pub retried: Option<String>,
    /// Whether the trial was read from a job directory given (not a trial directory given).
    pub from_job_dir: bool,
    /// `result.json` relative to the job directory's parent (the row's evidence reference).
    pub evidence: String,
}

impl HarborTrial {
    /// The record id: `<job id>/<trial name>`.
    pub fn record_id(&self) -> String {
        format!("{}/{}", self.job_id, self.trial_name)
    }
    /// The record key: `harbor:<job id>/<trial name>`.
    pub fn key(&self) -> String {
        format!("harbor:{}", self.record_id())
    }
    /// How the trial is named in messages: its `result.json` as given.
    pub fn label(&self) -> String {
        self.dir.join("result.json").display().to_string()
    }
}

/// Read a `--harbor` argument: a job directory (it holds `job.log`, or no `result.json`:
/// every directory in it that holds a `result.json`, in name order) or a trial directory.
/// Returns the trials and notes for the output (trial directories without a result). A file
/// that cannot be read ends the call (exit 1); a result that breaks Harbor's format is
/// refused, with every other.
pub fn load(path: &Path, max_bytes: u64) -> Result<(Vec<HarborTrial>, Vec<String>)> {
    let meta =
        std::fs::metadata(path).map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
    if !meta.is_dir() {
        return Err(Error::failed(format!(
            "{}: is not a directory (--harbor takes a Harbor job directory or a trial directory)",
            path.display()
        )));
    }
    let is_job = path.join("job.log").is_file() || !path.join("result.json").is_file();
    let mut reasons = Reasons::new();
    let mut trials = Vec::new();
    let mut notes = Vec::new();
    if is_job {
        let job = Job::read(path, max_bytes)?;
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| Error::failed(format!("{}: {e}", path.display())))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            if !dir.join("result.json").is_file() {
                notes.push(format!(
                    "{}: no result.json (a trial not finished, or not a trial): not imported",
                    dir.display()
                ));
                continue;
            }
            match read_trial(&dir, &job, max_bytes) {
                Ok(t) => trials.push(t),
                Err(Error::Refused(r)) => reasons.absorb(r),
                Err(e) => return Err(e),
            }
        }
        if trials.is_empty() && reasons.is_empty() {
            return Err(Error::refused(
                crate::refusal::Reason::new(
                    "no trial directory with a result.json: not a Harbor job directory, or a job no trial of which has finished"
                )
                .at(path.display())
            ));
        }
    } else {
        // A trial directory: its job is its parent (its config.json and job.log).
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let job = Job::read(parent, max_bytes)?;
        match read_trial(path, &job, max_bytes) {
            Ok(mut t) => {
                t.from_job_dir = false;
                trials.push(t)
            }
            Err(Error::Refused(r)) => reasons.absorb(r),
            Err(e) => return Err(e),
        }
    }
    reasons.into_result()?;
    Ok((trials, notes))
}

/// What a job directory says about all its trials.
struct Job {
    dir: PathBuf,
    n_attempts: Option<u64>,
    /// Trial name → the first exception type of its `Retrying` lines in `job.log`.
    retried: HashMap<String, String>,
}

impl Job {
    fn read(dir: &Path, max_bytes: u64) -> Result<Job> {
        let config = dir.join("config.json");
        let n_attempts = if config.is_file() {
            let (_, v) = crate::json::read_document(&config, max_bytes)?;
            if !v.is_object() {
                return Err(Error::refused(format!(
                    "{}: not a Harbor job configuration (a JSON object)",
                    config.display()
                )));
            }
            match v.get("n_attempts") {
                None => Some(1),
                Some(n) => match crate::json::count(n).filter(|n| *n >= 1) {
                    Some(n) => Some(n),
                    None => {
                        return Err(Error::refused(format!(
                            "{}: n_attempts must be a positive integer, not {n}",
                            config.display()
                        )))
                    }
                },
            }
        } else {
            None
        };
        let log = dir.join("job.log");
        let retried = if log.is_file() {
            let bytes = crate::json::read_bounded(&log, max_bytes)?;
            retried_trials(&String::from_utf8_lossy(&bytes))
        } else {
            HashMap::new()
        };
        Ok(Job {
            dir: dir.to_path_buf(),
            n_attempts,
            retried,
        })
    }
}

/// The trials `job.log` says Harbor retried: each line `Trial <name> failed with exception
/// <type>. Retrying …` (`harbor/trial/queue.py`), the first line of a trial giving the first
/// try's exception.
pub fn retried_trials(log: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for line in log.lines() {
        let Some(at) = line.find("Trial ") else {
            continue;
        };
        let rest = &line[at + "Trial ".len()..];
        let Some((name, rest)) = rest.split_once(" failed with exception ") else {
            continue;
        };
        let Some((kind, _)) = rest.split_once(". Retrying") else {
            continue;
        };
        let plain = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace);
        if plain(name) && plain(kind) {
            out.entry(name.to_owned())
                .or_insert_with(|| kind.to_owned());
        }
    }
    out
}

fn read_trial(dir: &Path, job: &Job, max_bytes: u64) -> Result<HarborTrial> {
    let path = dir.join("result.json");
    let label = path.display().to_string();
    let bytes = crate::json::read_bounded(&path, max_bytes)?;
    let result = crate::json::parse_strict(&bytes).map_err(|e| {
        Error::refused(
            crate::refusal::Reason::new(format!(
                "not strict JSON ({e}): a truncated or damaged Harbor result"
            ))
            .at(&label),
        )
    })?;
    // Another harness's record (or a ledger, a declaration): one reason that says what it is.
    if let Some(other) = super::sniff::recognise(&result).filter(|s| s.reader != Some("--harbor")) {
        return Err(Error::refused(
            crate::refusal::Reason::new(format!("not a Harbor trial result: it is {other}"))
                .at(&label),
        ));
    }
    let problems = check_result(&result);
    if !problems.is_empty() {
        let mut r = Reasons::new();
        for p in problems {
            r.push(crate::refusal::Reason::new(p.to_string()).at(&label));
        }
        return Err(r.into());
    }
    let text = |k: &str| result[k].as_str().unwrap_or_default().to_owned();
    let (task_name, trial_name) = (text("task_name"), text("trial_name"));
    let job_id = result["config"]["job_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let lock = dir.join("lock.json");
    let digest = if lock.is_file() {
        let (_, v) = crate::json::read_document(&lock, max_bytes)?;
        if !v.get("task").is_some_and(Value::is_object) {
            return Err(Error::refused(format!(
                "{}: not a Harbor trial lock (a JSON object whose task is an object)",
                lock.display()
            )));
        }
        match v.get("task").and_then(|t| t.get("digest")) {
            Some(Value::String(d)) => Some(d.clone()),
            None | Some(Value::Null) => None,
            Some(other) => {
                return Err(Error::refused(format!(
                    "{}: task.digest must be a string, not {other}",
                    lock.display()
                )))
            }
        }
    } else {
        None
    };
    let base = job.dir.parent().unwrap_or(Path::new(""));
    let evidence = match path.strip_prefix(base) {
        Ok(rel) if !base.as_os_str().is_empty() => rel.to_path_buf(),
        _ => path.clone(),
    };
    let evidence = evidence
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    Ok(HarborTrial {
        dir: dir.to_path_buf(),
        retried: job.retried.get(&trial_name).cloned(),
        from_job_dir: true,
        bytes,
        result,
        task_name,
        trial_name,
        job_id,
        digest,
        n_attempts: job.n_attempts,
        evidence,
    })
}

/// Every way a parsed `result.json` breaks the part of Harbor's `TrialResult` a row is built
/// from (other keys are Harbor's and are kept, not read).
fn check_result(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(m) = v.as_object() else {
        return vec![format!(
            "must be a JSON object (Harbor's TrialResult), not {}",
            crate::json::type_name(v)
        )];
    };
    let nonempty = |out: &mut Vec<String>, at: &str, v: Option<&Value>| match v {
        Some(Value::String(s)) if !s.is_empty() => {}
        Some(other) => out.push(format!("{at} must be a non-empty string, not {other}")),
        None => out.push(format!("{at} is missing")),
    };
    nonempty(&mut out, "task_name", m.get("task_name"));
    nonempty(&mut out, "trial_name", m.get("trial_name"));
    nonempty(&mut out, "id", m.get("id"));
    let config = m.get("config");
    match config {
        Some(Value::Object(c)) => {
            nonempty(&mut out, "config.job_id", c.get("job_id"));
            match c.get("agent") {
                Some(Value::Object(a)) => {
                    for k in ["name", "model_name"] {
                        if !matches!(a.get(k), None | Some(Value::Null | Value::String(_))) {
                            out.push(format!("config.agent.{k} must be a string or null"));
                        }
                    }
                    if !matches!(a.get("kwargs"), None | Some(Value::Null | Value::Object(_))) {
                        out.push("config.agent.kwargs must be an object or null".into());
                    }
                }
                _ => out.push("config.agent must be an object".into()),
            }
            for k in [
                "timeout_multiplier",
                "agent_timeout_multiplier",
                "verifier_timeout_multiplier",
            ] {
                match c.get(k) {
                    None | Some(Value::Null) => {}
                    Some(n) if n.as_f64().is_some_and(f64::is_finite) => {}
                    Some(other) => out.push(format!("config.{k} must be a number, not {other}")),
                }
            }
        }
        _ => out.push("config must be an object (the trial's configuration)".into()),
    }
    match m.get("agent_info") {
        Some(Value::Object(a)) => {
            if !matches!(a.get("name"), Some(Value::String(_))) {
                out.push("agent_info.name must be a string".into());
            }
            match a.get("model_info") {
                None | Some(Value::Null) => {}
                Some(Value::Object(mi)) => {
                    if !matches!(mi.get("name"), Some(Value::String(_))) {
                        out.push("agent_info.model_info.name must be a string".into());
                    }
                    if !matches!(
                        mi.get("provider"),
                        None | Some(Value::Null | Value::String(_))
                    ) {
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
    match m.get("verifier_result") {
        None | Some(Value::Null) => {}
        Some(Value::Object(vr)) => match vr.get("rewards") {
            None | Some(Value::Null) => {}
            Some(Value::Object(rw)) => {
                for (k, r) in rw {
                    if !r.as_f64().is_some_and(f64::is_finite) || r.is_boolean() {
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
    let exception = |out: &mut Vec<String>, at: &str, e: Option<&Value>| match e {
        None | Some(Value::Null) => {}
        Some(Value::Object(x)) => {
            if !matches!(x.get("exception_type"), Some(Value::String(s)) if !s.is_empty()) {
                out.push(format!("{at}.exception_type must be a non-empty string"));
            }
            if !matches!(x.get("exception_message"), Some(Value::String(_))) {
                out.push(format!("{at}.exception_message must be a string"));
            }
        }
        Some(other) => out.push(format!("{at} must be an object or null, not {other}")),
    };
    exception(&mut out, "exception_info", m.get("exception_info"));
    match m.get("step_results") {
        None | Some(Value::Null) => {}
        Some(Value::Array(steps)) => {
            for (i, s) in steps.iter().enumerate() {
                exception(
                    &mut out,
                    &format!("step_results[{i}].exception_info"),
                    s.get("exception_info"),
                );
            }
        }
        Some(other) => out.push(format!("step_results must be a list or null, not {other}")),
    }
    let stamp = |out: &mut Vec<String>, at: &str, v: Option<&Value>| match v {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if parse_utc(s).is_some() => {}
        Some(other) => out.push(format!(
            "{at} must be a UTC timestamp (YYYY-MM-DDTHH:MM:SS[.ffffff]Z) or null, not {other}"
        )),
    };
    stamp(&mut out, "started_at", m.get("started_at"));
    stamp(&mut out, "finished_at", m.get("finished_at"));
    for phase in ["agent_execution", "verifier"] {
        match m.get(phase) {
            None | Some(Value::Null) => {}
            Some(Value::Object(p)) => {
                stamp(
                    &mut out,
                    &format!("{phase}.started_at"),
                    p.get("started_at"),
                );
                stamp(
                    &mut out,
                    &format!("{phase}.finished_at"),
                    p.get("finished_at"),
                );
            }
            Some(other) => out.push(format!("{phase} must be an object or null, not {other}")),
        }
    }
    match m.get("agent_result") {
        None | Some(Value::Null) => {}
        Some(Value::Object(a)) => {
            for k in ["n_input_tokens", "n_cache_tokens", "n_output_tokens"] {
                match a.get(k) {
                    None | Some(Value::Null) => {}
                    Some(n) if crate::json::count(n).is_some() => {}
                    Some(other) => out.push(format!(
                        "agent_result.{k} must be a nonnegative integer or null, not {other}"
                    )),
                }
            }
            match a.get("cost_usd") {
                None | Some(Value::Null) => {}
                Some(n) if crate::json::nonneg_number(n).is_some() => {}
                Some(other) => out.push(format!(
                    "agent_result.cost_usd must be a nonnegative number or null, not {other}"
                )),
            }
            match a.get("model_usage") {
                None | Some(Value::Null) => {}
                Some(Value::Object(models)) => {
                    for (model, counts) in models {
                        match counts {
                            Value::Object(c) => {
                                for (k, n) in c {
                                    if !n.is_null() && crate::json::nonneg_number(n).is_none() {
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

/// The declared task of each Harbor task name.
pub struct TaskIndex<'d> {
    tasks: HashMap<&'d str, &'d Task>,
}

impl<'d> TaskIndex<'d> {
    pub fn new(decl: &'d Declaration) -> Self {
        let tasks = decl
            .tasks
            .iter()
            .filter_map(|t| Some((t.harbor.as_ref()?.task.as_str(), t)))
            .collect();
        TaskIndex { tasks }
    }
    /// The task whose `harbor.task` is `name`.
    pub fn task(&self, name: &str) -> Option<&'d Task> {
        self.tasks.get(name).copied()
    }
}

#[cfg(test)]
mod tests;
