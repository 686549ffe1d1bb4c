//! Scenario records: a run's `result.json` (format `scenario-result/1`), read strictly.
//!
//! [`load`] takes the `result.json` or its evidence directory, refuses a run that was admitted
//! but never graded, parses the closed format (every reason at once) and keeps the exact bytes
//! and their SHA-256. The accessors derive what import.md says a row takes from the record.
//!
//! Decisions where import.md is silent (the format is closed at every level):
//! - Required: `format` (= `scenario-result/1`), `run_id` (non-empty), `scenario` (a valid task
//!   name), `mode` (a string; [`ScenarioRecord::evidence`] judges it), `verdict` (non-empty),
//!   `autocode_status` (present; a string, or null when the harness wrote none).
//! - Optional, absent or null alike: `commit`, `tools_dirty`, `reason`, `oracle`, `profile`,
//!   `harness`, `status_view`, `answers`, `gates`, `elapsed_seconds`.
//! - Inside them: `oracle.checks` is required (a list of `{"name", "ok"}`); `profile.argv` is
//!   required, `profile.name` optional; `harness.wall_seconds` and `harness.cli_calls`,
//!   `status_view.complete`, `status_view.spent_usd` and `status_view.usage` are optional or
//!   null; an answer has `source` (required) and optional `question` and `answer`; a gate has
//!   `name` and `decision` (both required).
//! - Amounts are finite nonnegative numbers; `cli_calls` is an integer count; `usage` is an
//!   object whose values are nonnegative numbers or null. A number keeps the form it was written
//!   in (an integer stays an integer) wherever it is copied.
//! - A record without `profile` has no argv: [`ScenarioRecord::options`] then compares an empty
//!   option list (every declared flag missing, every model and effort null).

use serde_json::{json, Map, Number, Value};
use std::path::{Path, PathBuf};

use super::options::{analyse, DeclaredProfile, OptionsAnalysis};
use super::{check_reason, evidence_for_mode, is_full_commit_id, relative_to_repo, sha256_hex};
use super::{Check, Evidence};
use crate::error::{Error, Reasons, Result};
use crate::json::{parse_document, read_bounded, type_name};
use crate::refusal::Reason;

/// The only format this reader accepts.
pub const FORMAT: &str = "scenario-result/1";

/// A graded scenario run, parsed from its `result.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioRecord {
    /// The evidence directory (the path given, or the parent of the `result.json` given).
    pub evidence_dir: PathBuf,
    /// The `result.json` that was read.
    pub result_path: PathBuf,
    /// The exact bytes of `result.json`.
    pub bytes: Vec<u8>,
    /// SHA-256 of those bytes (lowercase hex).
    pub sha256: String,
    /// `run_id`.
    pub run_id: String,
    /// `scenario`: the task's name.
    pub scenario: String,
    /// `mode`, as recorded.
    pub mode: String,
    /// `commit`, as recorded.
    pub commit: Option<String>,
    /// `tools_dirty`, as recorded.
    pub tools_dirty: Option<bool>,
    /// `verdict`: the native outcome.
    pub verdict: String,
    /// `autocode_status`: the native status.
    pub autocode_status: Option<String>,
    /// `reason`, as recorded.
    pub reason: Option<String>,
    /// `oracle.checks`, null when `oracle` is absent or null.
    pub oracle_checks: Option<Vec<Check>>,
    /// `profile`, when recorded.
    pub profile: Option<ScenarioProfile>,
    /// `harness.wall_seconds`.
    pub wall_seconds: Option<f64>,
    /// `harness.cli_calls`.
    pub cli_calls: Option<u64>,
    /// `status_view`, when recorded.
    pub status_view: Option<StatusView>,
    /// `answers`, in recorded order.
    pub answers: Vec<Answer>,
    /// `gates`, in recorded order.
    pub gates: Vec<Gate>,
    /// `elapsed_seconds`, as written.
    pub elapsed_seconds: Option<Number>,
}

/// The `profile` a scenario run recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioProfile {
    /// The profile's name.
    pub name: Option<String>,
    /// The options the harness forwarded to the agent.
    pub argv: Vec<String>,
}

/// The harness's `status_view`: spend and usage as the agent's status reported them.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusView {
    /// Whether the view covers the whole attempt.
    pub complete: Option<bool>,
    /// Dollars spent, as written.
    pub spent_usd: Option<Number>,
    /// Token and call counts, as written.
    pub usage: Option<Map<String, Value>>,
}

/// A scripted or human answer the run received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Who answered (e.g. `scenario-script`).
    pub source: String,
    /// The question.
    pub question: Option<String>,
    /// The answer.
    pub answer: Option<String>,
}

/// A gate the run passed through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    /// The gate's name (e.g. `plan-approval`).
    pub name: String,
    /// Its decision (e.g. `approved`).
    pub decision: String,
}

/// Read a scenario record from `path`: its `result.json` or its evidence directory. JSON inputs
/// over `max_input_bytes` are refused.
pub fn load(path: &Path, max_input_bytes: u64) -> Result<ScenarioRecord> {
    let (evidence_dir, result_path) = locate(path)?;
    let bytes = read_bounded(&result_path, max_input_bytes)?;
    let what = result_path.display().to_string();
    let record = parse_bytes(bytes, &what, max_input_bytes)?;
    Ok(ScenarioRecord {
        evidence_dir,
        result_path,
        ..record
    })
}

/// Parse the bytes of a `result.json` (named `what` in messages). The record's paths are left
/// empty: [`load`] fills them in from where it found the file.
pub fn parse_bytes(bytes: Vec<u8>, what: &str, max_input_bytes: u64) -> Result<ScenarioRecord> {
    let value = parse_document(&bytes, what, max_input_bytes)?;
    let mut reasons = Reasons::new();
    // Another harness's record (or a ledger, a declaration): one reason that says what it is,
    // not every field of this format it breaks.
    if let Some(other) = super::sniff::recognise(&value).filter(|s| s.reader != Some("--scenario"))
    {
        reasons.push(format!(
            "not a scenario record (format {FORMAT}): it is {other}"
        ));
        return Err(Error::Refused(reasons).context(what));
    }
    let parsed = parse(&value, &mut reasons);
    match parsed {
        Some(p) if reasons.is_empty() => Ok(ScenarioRecord {
            sha256: sha256_hex(&bytes),
            bytes,
            ..p
        }),
        _ => {
            if reasons.is_empty() {
                reasons.push("not a scenario record");
            }
            Err(Error::Refused(reasons).context(what))
        }
    }
}

/// Find the evidence directory and its `result.json`, refusing a run that was never graded.
fn locate(path: &Path) -> Result<(PathBuf, PathBuf)> {
    let shown = path.display();
    let never_graded = |dir: &Path| {
        Error::refused(
            Reason::new(
                "scenario run admitted but never graded (attempt.json without result.json): \
                 import it once it finishes, or write its row with `git ledger put`",
            )
            .at(dir.display()),
        )
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let result = path.join("result.json");
            match std::fs::metadata(&result) {
                Ok(m) if m.is_file() => Ok((path.to_path_buf(), result)),
                Ok(_) => Err(Error::failed(format!(
                    "{}: is not a regular file",
                    result.display()
                ))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if path.join("attempt.json").exists() {
                        Err(never_graded(path))
                    } else {
                        Err(Error::refused(
                            crate::refusal::Reason::new(
                                "neither result.json nor attempt.json: not a scenario \
                             evidence directory",
                            )
                            .at(&shown),
                        ))
                    }
                }
                Err(e) => Err(Error::failed(format!("{}: {e}", result.display()))),
            }
        }
        Ok(_) => {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            Ok((dir, path.to_path_buf()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
            let dir = dir.unwrap_or(Path::new("."));
            if path.file_name().is_some_and(|n| n == "result.json")
                && dir.join("attempt.json").exists()
            {
                Err(never_graded(dir))
            } else {
                Err(Error::failed(format!("{shown}: no such file or directory")))
            }
        }
        Err(e) => Err(Error::failed(format!("{shown}: cannot read: {e}"))),
    }
}

impl ScenarioRecord {
    /// The task this record belongs to: `scenario/<scenario>`.
    pub fn task_id(&self) -> String {
        format!("scenario/{}", self.scenario)
    }

    /// The evidence class its mode implies (an unknown mode is refused).
    pub fn evidence(&self) -> Result<Evidence> {
        evidence_for_mode(&self.mode).map_err(|e| e.context(self.result_path.display()))
    }

    /// `commit` when `tools_dirty` is false and `commit` is a full commit id, else `None`.
    /// (The flag covers `tools/` only: an edited scenario definition is not detected.)
    pub fn source_revision(&self) -> Option<&str> {
        match (&self.commit, self.tools_dirty) {
            (Some(c), Some(false)) if is_full_commit_id(c) => Some(c),
            _ => None,
        }
    }

    /// Refuse a non-PASS record without a reason.
    pub fn check_reason(&self) -> Result<()> {
        check_reason(
            &self.result_path.display().to_string(),
            &self.verdict,
            self.reason.as_deref(),
        )
    }

    /// `oracle_checks` for the row: the checks as recorded, null when there is no oracle.
    pub fn oracle_checks_value(&self) -> Value {
        match &self.oracle_checks {
            Some(checks) => Value::Array(checks.iter().map(Check::to_value).collect()),
            None => Value::Null,
        }
    }

    /// `spent_budget`: `harness_minutes` = `wall_seconds / 60` (a float), `max_steps` =
    /// `cli_calls`; each null when not recorded.
    pub fn spent_budget(&self) -> Value {
        let minutes = self
            .wall_seconds
            .and_then(|s| Number::from_f64(s / 60.0))
            .map_or(Value::Null, Value::Number);
        json!({ "harness_minutes": minutes, "max_steps": self.cli_calls })
    }

    fn complete_view(&self) -> Option<&StatusView> {
        self.status_view
            .as_ref()
            .filter(|v| v.complete == Some(true))
    }

    /// `estimated_usd`: `status_view.spent_usd` only when the view is complete, else null.
    pub fn estimated_usd(&self) -> Value {
        self.complete_view()
            .and_then(|v| v.spent_usd.clone())
            .map_or(Value::Null, Value::Number)
    }

    /// `usage`: `status_view.usage` only when the view is complete, else null.
    pub fn usage(&self) -> Value {
        self.complete_view()
            .and_then(|v| v.usage.clone())
            .map_or(Value::Null, Value::Object)
    }

    /// `elapsed_seconds` as written, or null.
    pub fn elapsed_seconds_value(&self) -> Value {
        self.elapsed_seconds
            .clone()
            .map_or(Value::Null, Value::Number)
    }

    /// The notes of the `decision` interventions: each answer (`answer from <source>`), then
    /// each gate (`gate <name>: <decision>`).
    pub fn decisions(&self) -> Vec<String> {
        let answers = self
            .answers
            .iter()
            .map(|a| format!("answer from {}", a.source));
        let gates = self
            .gates
            .iter()
            .map(|g| format!("gate {}: {}", g.name, g.decision));
        answers.chain(gates).collect()
    }

    /// The forwarded options (`profile.argv`), when a profile was recorded.
    pub fn argv(&self) -> Option<&[String]> {
        self.profile.as_ref().map(|p| p.argv.as_slice())
    }

    /// Models, efforts and option deviations from `profile.argv` (an empty list without one).
    pub fn options(&self, declared: &DeclaredProfile) -> OptionsAnalysis {
        analyse(self.argv().unwrap_or(&[]), declared, None)
    }

    /// `evidence_refs`: the evidence directory and its `result.json`, repository-relative when
    /// inside `repo_root`.
    pub fn evidence_refs(&self, repo_root: Option<&Path>) -> Vec<String> {
        vec![
            relative_to_repo(&self.evidence_dir, repo_root),
            relative_to_repo(&self.result_path, repo_root),
        ]
    }

    /// `native_record`: `{"kind": "scenario", "id": <run_id>, "sha256": <of result.json>}`.
    pub fn native_record(&self) -> Value {
        json!({ "kind": "scenario", "id": self.run_id, "sha256": self.sha256 })
    }
}

// ---- the closed format -----------------------------------------------------------------------

/// Field access on one JSON object, pushing a reason (named by the field's path) for each
/// breach, and refusing keys outside `allowed`.
struct Obj<'a, 'r> {
    at: String,
    map: &'a Map<String, Value>,
    reasons: &'r mut Reasons,
}

impl<'a, 'r> Obj<'a, 'r> {
    /// Open `value` as an object at `at` with the keys it may carry.
    fn open(
        value: &'a Value,
        at: &str,
        allowed: &[&str],
        reasons: &'r mut Reasons,
    ) -> Option<Self> {
        let Value::Object(map) = value else {
            let r =
                crate::refusal::Reason::new(format!("must be an object, not {}", type_name(value)));
            // The member, or the record itself.
            reasons.push(match at {
                "" => r.at(label(at)),
                at => r.field(at),
            });
            return None;
        };
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                // An empty name is no member to name (as the declaration says it): the
                // reason names the object holding it.
                let (r, member) = match key.as_str() {
                    "" => (
                        crate::refusal::Reason::new("unknown key \"\" (an empty name)"),
                        at.to_owned(),
                    ),
                    _ => (crate::refusal::Reason::new("unknown key"), join(at, key)),
                };
                reasons.push(match member.as_str() {
                    "" => r,
                    _ => r.field(member),
                });
            }
        }
        Some(Obj {
            at: at.to_owned(),
            map,
            reasons,
        })
    }

    fn path(&self, key: &str) -> String {
        join(&self.at, key)
    }

    /// The value at `key`, `None` when absent or null; a required field pushes a reason.
    fn get(&mut self, key: &str, required: bool) -> Option<&'a Value> {
        match self.map.get(key) {
            Some(Value::Null) | None => {
                if required {
                    let p = self.path(key);
                    self.reasons
                        .push(crate::refusal::Reason::new("missing (required)").field(p));
                }
                None
            }
            Some(v) => Some(v),
        }
    }

    fn wrong(&mut self, key: &str, expected: &str, v: &Value) {
        let p = self.path(key);
        self.reasons.push(
            crate::refusal::Reason::new(format!("must be {expected}, not {}", type_name(v)))
                .field(p),
        );
    }

    fn string(&mut self, key: &str, required: bool) -> Option<String> {
        match self.get(key, required)? {
            Value::String(s) => Some(s.clone()),
            v => {
                self.wrong(key, "a string", v);
                None
            }
        }
    }

    fn non_empty(&mut self, key: &str) -> Option<String> {
        let s = self.string(key, true)?;
        if s.is_empty() {
            let p = self.path(key);
            self.reasons
                .push(crate::refusal::Reason::new("must not be empty").field(p));
            return None;
        }
        Some(s)
    }

    fn boolean(&mut self, key: &str) -> Option<bool> {
        match self.get(key, false)? {
            Value::Bool(b) => Some(*b),
            v => {
                self.wrong(key, "a boolean", v);
                None
            }
        }
    }

    fn amount(&mut self, key: &str) -> Option<Number> {
        match self.get(key, false)? {
            Value::Number(n) if n.as_f64().is_some_and(|f| f.is_finite() && f >= 0.0) => {
                Some(n.clone())
            }
            v => {
                self.wrong(key, "a nonnegative number", v);
                None
            }
        }
    }

    fn count(&mut self, key: &str) -> Option<u64> {
        match self.get(key, false)? {
            Value::Number(n) if n.as_u64().is_some() => n.as_u64(),
            v => {
                self.wrong(key, "a nonnegative integer", v);
                None
            }
        }
    }

    fn list(&mut self, key: &str, required: bool) -> Option<&'a Vec<Value>> {
        match self.get(key, required)? {
            Value::Array(items) => Some(items),
            v => {
                self.wrong(key, "a list", v);
                None
            }
        }
    }
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

fn label(at: &str) -> &str {
    if at.is_empty() {
        "the record"
    } else {
        at
    }
}

/// Whether `name` can name a task (`[A-Za-z0-9][A-Za-z0-9._-]*`, at most 100, no `..`).
fn valid_task_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && name.len() <= 100
        && !name.contains("..")
}

const TOP: &[&str] = &[
    "format",
    "run_id",
    "scenario",
    "mode",
    "commit",
    "tools_dirty",
    "verdict",
    "autocode_status",
    "reason",
    "oracle",
    "profile",
    "harness",
    "status_view",
    "answers",
    "gates",
    "elapsed_seconds",
];

/// Parse the closed format. Reasons are pushed for every breach; the result is only meaningful
/// when no reason was pushed.
fn parse(value: &Value, reasons: &mut Reasons) -> Option<ScenarioRecord> {
    let mut o = Obj::open(value, "", TOP, reasons)?;
    match o.string("format", true) {
        Some(f) if f == FORMAT => {}
        Some(f) => o
            .reasons
            .push(crate::refusal::Reason::new(format!("{f:?} is not {FORMAT:?}")).field("format")),
        None => {}
    }
    let run_id = o.non_empty("run_id");
    let scenario = o.string("scenario", true);
    if let Some(s) = &scenario {
        if !valid_task_name(s) {
            o.reasons.push(
                crate::refusal::Reason::new(format!(
                    "{s:?} is not a task name ([A-Za-z0-9][A-Za-z0-9._-]*, at most 100 \
                     characters, no ..)"
                ))
                .field("scenario"),
            );
        }
    }
    let mode = o.string("mode", true);
    let commit = o.string("commit", false);
    let tools_dirty = o.boolean("tools_dirty");
    let verdict = o.non_empty("verdict");
    if !o.map.contains_key("autocode_status") {
        o.reasons
            .push(crate::refusal::Reason::new("missing (required)").field("autocode_status"));
    }
    let autocode_status = o.string("autocode_status", false);
    let reason = o.string("reason", false);
    let elapsed_seconds = o.amount("elapsed_seconds");

    let oracle = o.get("oracle", false);
    let profile = o.get("profile", false);
    let harness = o.get("harness", false);
    let status_view = o.get("status_view", false);
    let answers = o.list("answers", false);
    let gates = o.list("gates", false);

    let oracle_checks = oracle.and_then(|v| parse_oracle(v, reasons));
    let profile = profile.and_then(|v| parse_profile(v, reasons));
    let (wall_seconds, cli_calls) = match harness {
        Some(v) => match Obj::open(v, "harness", &["wall_seconds", "cli_calls"], reasons) {
            Some(mut h) => (
                h.amount("wall_seconds").and_then(|n| n.as_f64()),
                h.count("cli_calls"),
            ),
            None => (None, None),
        },
        None => (None, None),
    };
    let status_view = status_view.and_then(|v| parse_status_view(v, reasons));
    let answers = answers.map_or_else(Vec::new, |items| {
        items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let at = format!("answers[{i}]");
                let mut a = Obj::open(v, &at, &["source", "question", "answer"], reasons)?;
                let source = a.non_empty("source");
                let question = a.string("question", false);
                let answer = a.string("answer", false);
                Some(Answer {
                    source: source?,
                    question,
                    answer,
                })
            })
            .collect()
    });
    let gates = gates.map_or_else(Vec::new, |items| {
        items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let at = format!("gates[{i}]");
                let mut g = Obj::open(v, &at, &["name", "decision"], reasons)?;
                let name = g.non_empty("name");
                let decision = g.non_empty("decision");
                Some(Gate {
                    name: name?,
                    decision: decision?,
                })
            })
            .collect()
    });

    Some(ScenarioRecord {
        evidence_dir: PathBuf::new(),
        result_path: PathBuf::new(),
        bytes: Vec::new(),
        sha256: String::new(),
        run_id: run_id?,
        scenario: scenario?,
        mode: mode?,
        commit,
        tools_dirty,
        verdict: verdict?,
        autocode_status,
        reason,
        oracle_checks,
        profile,
        wall_seconds,
        cli_calls,
        status_view,
        answers,
        gates,
        elapsed_seconds,
    })
}

fn parse_oracle(value: &Value, reasons: &mut Reasons) -> Option<Vec<Check>> {
    let mut o = Obj::open(value, "oracle", &["checks"], reasons)?;
    let items = o.list("checks", true)?;
    let mut checks = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("oracle.checks[{i}]");
        let Some(mut c) = Obj::open(item, &at, &["name", "ok"], reasons) else {
            continue;
        };
        let name = c.non_empty("name");
        let ok = match c.get("ok", true) {
            Some(Value::Bool(b)) => Some(*b),
            Some(v) => {
                c.wrong("ok", "a boolean", v);
                None
            }
            None => None,
        };
        if let (Some(name), Some(ok)) = (name, ok) {
            checks.push(Check { name, ok });
        }
    }
    Some(checks)
}

fn parse_profile(value: &Value, reasons: &mut Reasons) -> Option<ScenarioProfile> {
    let mut p = Obj::open(value, "profile", &["name", "argv"], reasons)?;
    let name = p.string("name", false);
    let items = p.list("argv", true)?;
    let mut argv = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(s) => argv.push(s.clone()),
            v => reasons.push(
                crate::refusal::Reason::new(format!("must be a string, not {}", type_name(v)))
                    .field(format!("profile.argv[{i}]")),
            ),
        }
    }
    Some(ScenarioProfile { name, argv })
}

fn parse_status_view(value: &Value, reasons: &mut Reasons) -> Option<StatusView> {
    let mut s = Obj::open(
        value,
        "status_view",
        &["complete", "spent_usd", "usage"],
        reasons,
    )?;
    let complete = s.boolean("complete");
    let spent_usd = s.amount("spent_usd");
    let usage = match s.get("usage", false) {
        Some(Value::Object(map)) => {
            for (k, v) in map {
                let fine = match v {
                    Value::Null => true,
                    Value::Number(n) => n.as_f64().is_some_and(|f| f.is_finite() && f >= 0.0),
                    _ => false,
                };
                if !fine {
                    reasons.push(
                        crate::refusal::Reason::new(format!(
                            "must be a nonnegative number or null, not {}",
                            type_name(v)
                        ))
                        .field(format!("status_view.usage.{k}")),
                    );
                }
            }
            Some(map.clone())
        }
        Some(v) => {
            s.wrong("usage", "an object", v);
            None
        }
        None => None,
    };
    Some(StatusView {
        complete,
        spent_usd,
        usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::DEFAULT_MAX_INPUT_BYTES as MAX;

    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

    fn example() -> Value {
        json!({
            "format": "scenario-result/1",
            "run_id": "20261129T101500Z-ab12",
            "scenario": "bugfix-iso-weeks",
            "mode": "live",
            "commit": COMMIT,
            "tools_dirty": false,
            "verdict": "PASS",
            "autocode_status": "COMPLETE",
            "reason": null,
            "oracle": { "checks": [ { "name": "hidden/test_iso_weeks.py::test_week_53", "ok": true } ] },
            "profile": {
                "name": "build-comparison",
                "argv": ["--provider", "p", "--joint-planning", "--no-telemetry",
                         "--reasoning-effort", "high", "--builder-model", "m"]
            },
            "harness": { "wall_seconds": 2710.4, "cli_calls": 143 },
            "status_view": { "complete": true, "spent_usd": 3.91,
                             "usage": { "input_tokens": 812345, "output_tokens": 40211 } },
            "answers": [ { "source": "scenario-script", "question": "q", "answer": "a" } ],
            "gates": [ { "name": "plan-approval", "decision": "approved" } ],
            "elapsed_seconds": 2731.0
        })
    }

    fn write_run(value: &Value) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(".scenario-runs").join("R1");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("result.json"), serde_json::to_vec(value).unwrap()).unwrap();
        (tmp, dir)
    }

    fn load_value(value: &Value) -> Result<ScenarioRecord> {
        let (_tmp, dir) = write_run(value);
        load(&dir, MAX)
    }

    fn with(key: &str, v: Value) -> Value {
        let mut e = example();
        e[key] = v;
        e
    }

    fn without(key: &str) -> Value {
        let mut e = example();
        e.as_object_mut().unwrap().remove(key);
        e
    }

    /// Assert that the record is refused, one of its reasons about the member `field` (`None`:
    /// the record as a whole) and saying `sentence` (whole).
    #[track_caller]
    fn refused_with(value: &Value, field: Option<&str>, sentence: &str) {
        let e = load_value(value).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        crate::testutil::assert_reason!(
            crate::testutil::refusal(Err::<(), _>(e)),
            row = None,
            field = field,
            rule = None,
            sentence = sentence
        );
    }

    // ---- locating the record -----------------------------------------------------------------

    #[test]
    fn loads_from_the_directory_or_the_file() {
        let (_tmp, dir) = write_run(&example());
        let a = load(&dir, MAX).unwrap();
        let b = load(&dir.join("result.json"), MAX).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.evidence_dir, dir);
        assert_eq!(a.result_path, dir.join("result.json"));
    }

    #[test]
    fn keeps_the_exact_bytes_and_their_sha256() {
        let (_tmp, dir) = write_run(&example());
        let bytes = std::fs::read(dir.join("result.json")).unwrap();
        let r = load(&dir, MAX).unwrap();
        assert_eq!(r.bytes, bytes);
        assert_eq!(r.sha256, sha256_hex(&bytes));
        assert_eq!(
            r.native_record(),
            json!({"kind": "scenario", "id": "20261129T101500Z-ab12", "sha256": sha256_hex(&bytes)})
        );
    }

    #[test]
    fn admitted_but_never_graded_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("attempt.json"), "{}").unwrap();
        for p in [tmp.path().to_path_buf(), tmp.path().join("result.json")] {
            let r = crate::testutil::refusal(load(&p, MAX));
            crate::testutil::assert_only_reason!(
                r,
                place = [tmp.path().display().to_string()],
                row = None,
                field = None,
                rule = None,
                sentence = "scenario run admitted but never graded (attempt.json without \
                            result.json): import it once it finishes, or write its row with \
                            `git ledger put`"
            );
        }
    }

    #[test]
    fn directory_with_neither_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        crate::testutil::assert_only_reason!(
            crate::testutil::refusal(load(tmp.path(), MAX)),
            place = [tmp.path().display().to_string()],
            field = None,
            sentence = "neither result.json nor attempt.json: not a scenario evidence directory"
        );
    }

    #[test]
    fn missing_path_is_a_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let nope = tmp.path().join("nope");
        let e = load(&nope, MAX).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert_eq!(
            e.message().unwrap(),
            format!("{}: no such file or directory", nope.display())
        );
    }

    #[test]
    #[cfg(unix)]
    fn symlink_loop_is_a_clear_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        let e = load(&a, MAX).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        // (The rest is the system's words for the loop.)
        let m = e.message().unwrap();
        assert!(
            m.starts_with(&format!("{}: cannot read: ", a.display())),
            "{m}"
        );
    }

    #[test]
    fn result_json_that_is_a_directory_is_a_failure() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("result.json")).unwrap();
        let e = load(tmp.path(), MAX).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert_eq!(
            e.message().unwrap(),
            format!(
                "{}: is not a regular file",
                tmp.path().join("result.json").display()
            )
        );
    }

    #[test]
    fn over_the_input_bound_is_refused() {
        let (_tmp, dir) = write_run(&example());
        let result = dir.join("result.json");
        let len = std::fs::metadata(&result).unwrap().len();
        crate::testutil::assert_only_reason!(
            crate::testutil::refusal(load(&dir, 10)),
            place = [result.display().to_string()],
            field = None,
            sentence =
                format!("{len} bytes is over the input bound of 10 bytes (--max-input-bytes)")
        );
    }

    #[test]
    fn invalid_json_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        for (bad, said) in [
            (
                &b"{\"format\": 1, \"format\": 2}"[..],
                "duplicate key \"format\" at line 1 column 22",
            ),
            (b"", "EOF while parsing a value at line 1 column 0"),
            (b"\xff", "expected value at line 1 column 1"),
            (b"{} x", "trailing characters at line 1 column 4"),
        ] {
            let result = tmp.path().join("result.json");
            std::fs::write(&result, bad).unwrap();
            crate::testutil::assert_only_reason!(
                crate::testutil::refusal(load(tmp.path(), MAX)),
                place = [result.display().to_string()],
                field = None,
                sentence = format!("not valid JSON: {said}")
            );
        }
    }

    // ---- the closed format -------------------------------------------------------------------

    #[test]
    fn the_spec_example_parses() {
        let r = load_value(&example()).unwrap();
        assert_eq!(r.run_id, "20261129T101500Z-ab12");
        assert_eq!(r.verdict, "PASS");
        assert_eq!(r.autocode_status.as_deref(), Some("COMPLETE"));
        assert_eq!(r.reason, None);
        assert_eq!(r.cli_calls, Some(143));
    }

    #[test]
    fn not_an_object_is_refused() {
        refused_with(&json!([1]), None, "must be an object, not a list");
    }

    #[test]
    fn unknown_keys_are_refused_at_every_level() {
        refused_with(&with("extra", json!(1)), Some("extra"), "unknown key");
        // A key with an empty name is named so, not as an empty member.
        refused_with(
            &with("", json!(1)),
            None,
            "unknown key \"\" (an empty name)",
        );
        let mut e = example();
        e["oracle"][""] = json!(1);
        refused_with(&e, Some("oracle"), "unknown key \"\" (an empty name)");
        let mut e = example();
        e["oracle"]["x"] = json!(1);
        refused_with(&e, Some("oracle.x"), "unknown key");
        let mut e = example();
        e["oracle"]["checks"][0]["x"] = json!(1);
        refused_with(&e, Some("oracle.checks[0].x"), "unknown key");
        let mut e = example();
        e["profile"]["x"] = json!(1);
        refused_with(&e, Some("profile.x"), "unknown key");
        let mut e = example();
        e["harness"]["x"] = json!(1);
        refused_with(&e, Some("harness.x"), "unknown key");
        let mut e = example();
        e["status_view"]["x"] = json!(1);
        refused_with(&e, Some("status_view.x"), "unknown key");
        let mut e = example();
        e["answers"][0]["x"] = json!(1);
        refused_with(&e, Some("answers[0].x"), "unknown key");
        let mut e = example();
        e["gates"][0]["x"] = json!(1);
        refused_with(&e, Some("gates[0].x"), "unknown key");
    }

    #[test]
    fn required_fields_are_refused_when_missing_or_null() {
        for key in ["format", "run_id", "scenario", "mode", "verdict"] {
            refused_with(&without(key), Some(key), "missing (required)");
            refused_with(&with(key, Value::Null), Some(key), "missing (required)");
        }
        refused_with(
            &without("autocode_status"),
            Some("autocode_status"),
            "missing (required)",
        );
    }

    #[test]
    fn autocode_status_may_be_null() {
        let r = load_value(&with("autocode_status", Value::Null)).unwrap();
        assert_eq!(r.autocode_status, None);
    }

    #[test]
    fn every_reason_is_listed_at_once() {
        let mut e = without("run_id");
        e["verdict"] = json!(1);
        e["extra"] = json!(1);
        let err = load_value(&e).unwrap_err();
        let reasons = err.refusal_reasons();
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(
            (reasons.iter()).all(|r| r.place.len() == 1 && r.place[0].ends_with("/result.json")),
            "{reasons:?}"
        );
        let fields: Vec<_> = reasons.iter().map(|r| r.field.as_deref()).collect();
        assert_eq!(fields, [Some("extra"), Some("run_id"), Some("verdict")]);
    }

    #[test]
    fn wrong_format_is_refused() {
        refused_with(
            &with("format", json!("scenario-result/2")),
            Some("format"),
            "\"scenario-result/2\" is not \"scenario-result/1\"",
        );
    }

    #[test]
    fn empty_run_id_and_verdict_are_refused() {
        refused_with(
            &with("run_id", json!("")),
            Some("run_id"),
            "must not be empty",
        );
        refused_with(
            &with("verdict", json!("")),
            Some("verdict"),
            "must not be empty",
        );
    }

    #[test]
    fn scenario_must_be_a_task_name() {
        for bad in ["", "-x", "a/b", "a..b", &"a".repeat(101)] {
            let s = format!(
                "{bad:?} is not a task name ([A-Za-z0-9][A-Za-z0-9._-]*, at most 100 characters, \
                 no ..)"
            );
            refused_with(&with("scenario", json!(bad)), Some("scenario"), &s);
        }
        assert!(load_value(&with("scenario", json!("a.b_c-1"))).is_ok());
    }

    #[test]
    fn wrong_types_are_refused() {
        refused_with(
            &with("mode", json!(1)),
            Some("mode"),
            "must be a string, not an integer",
        );
        refused_with(
            &with("commit", json!(1)),
            Some("commit"),
            "must be a string, not an integer",
        );
        refused_with(
            &with("tools_dirty", json!("no")),
            Some("tools_dirty"),
            "must be a boolean, not a string",
        );
        refused_with(
            &with("reason", json!([])),
            Some("reason"),
            "must be a string, not a list",
        );
        refused_with(
            &with("oracle", json!([])),
            Some("oracle"),
            "must be an object, not a list",
        );
        refused_with(
            &with("answers", json!({})),
            Some("answers"),
            "must be a list, not an object",
        );
        refused_with(
            &with("gates", json!("x")),
            Some("gates"),
            "must be a list, not a string",
        );
        refused_with(
            &with("profile", json!("x")),
            Some("profile"),
            "must be an object, not a string",
        );
        refused_with(
            &with("harness", json!(1)),
            Some("harness"),
            "must be an object, not an integer",
        );
        refused_with(
            &with("status_view", json!(true)),
            Some("status_view"),
            "must be an object, not a boolean",
        );
    }

    #[test]
    fn optional_fields_may_be_absent_or_null() {
        for key in [
            "commit",
            "tools_dirty",
            "reason",
            "oracle",
            "profile",
            "harness",
            "status_view",
            "answers",
            "gates",
            "elapsed_seconds",
        ] {
            let a = load_value(&without(key)).unwrap();
            let b = load_value(&with(key, Value::Null)).unwrap();
            assert_eq!(a.decisions(), b.decisions(), "{key}");
        }
    }

    #[test]
    fn oracle_checks_need_name_and_boolean_ok() {
        refused_with(
            &with("oracle", json!({})),
            Some("oracle.checks"),
            "missing (required)",
        );
        refused_with(
            &with("oracle", json!({"checks": [{"name": "t", "ok": 1}]})),
            Some("oracle.checks[0].ok"),
            "must be a boolean, not an integer",
        );
        refused_with(
            &with("oracle", json!({"checks": [{"ok": true}]})),
            Some("oracle.checks[0].name"),
            "missing (required)",
        );
        refused_with(
            &with("oracle", json!({"checks": ["t"]})),
            Some("oracle.checks[0]"),
            "must be an object, not a string",
        );
    }

    #[test]
    fn oracle_checks_as_recorded_or_null() {
        let r = load_value(&with(
            "oracle",
            json!({"checks": [{"name": "b", "ok": false}, {"name": "a", "ok": true}]}),
        ))
        .unwrap();
        assert_eq!(
            r.oracle_checks_value(),
            json!([{"name": "b", "ok": false}, {"name": "a", "ok": true}])
        );
        let r = load_value(&with("oracle", json!({"checks": []}))).unwrap();
        assert_eq!(r.oracle_checks_value(), json!([]));
        let r = load_value(&with("oracle", Value::Null)).unwrap();
        assert_eq!(r.oracle_checks_value(), Value::Null);
    }

    #[test]
    fn profile_argv_must_be_strings() {
        refused_with(
            &with("profile", json!({"name": "x"})),
            Some("profile.argv"),
            "missing (required)",
        );
        refused_with(
            &with("profile", json!({"argv": ["--a", 1]})),
            Some("profile.argv[1]"),
            "must be a string, not an integer",
        );
        let r = load_value(&with("profile", json!({"argv": []}))).unwrap();
        assert_eq!(r.argv(), Some(&[][..]));
    }

    #[test]
    fn amounts_must_be_nonnegative_numbers() {
        refused_with(
            &with("elapsed_seconds", json!(-1)),
            Some("elapsed_seconds"),
            "must be a nonnegative number, not an integer",
        );
        refused_with(
            &with("harness", json!({"wall_seconds": "1"})),
            Some("harness.wall_seconds"),
            "must be a nonnegative number, not a string",
        );
        refused_with(
            &with("status_view", json!({"complete": true, "spent_usd": -0.5})),
            Some("status_view.spent_usd"),
            "must be a nonnegative number, not a number",
        );
        refused_with(
            &with("status_view", json!({"usage": {"input_tokens": -1}})),
            Some("status_view.usage.input_tokens"),
            "must be a nonnegative number or null, not an integer",
        );
        refused_with(
            &with("status_view", json!({"usage": {"x": "1"}})),
            Some("status_view.usage.x"),
            "must be a nonnegative number or null, not a string",
        );
        refused_with(
            &with("status_view", json!({"usage": [1]})),
            Some("status_view.usage"),
            "must be an object, not a list",
        );
        refused_with(
            &with("status_view", json!({"complete": "yes"})),
            Some("status_view.complete"),
            "must be a boolean, not a string",
        );
    }

    #[test]
    fn cli_calls_is_an_integer_count() {
        refused_with(
            &with("harness", json!({"cli_calls": 2.0})),
            Some("harness.cli_calls"),
            "must be a nonnegative integer, not a number",
        );
        refused_with(
            &with("harness", json!({"cli_calls": -2})),
            Some("harness.cli_calls"),
            "must be a nonnegative integer, not an integer",
        );
    }

    #[test]
    fn answers_and_gates_need_their_fields() {
        refused_with(
            &with("answers", json!([{"question": "q"}])),
            Some("answers[0].source"),
            "missing (required)",
        );
        refused_with(
            &with("answers", json!([{"source": "s", "answer": 1}])),
            Some("answers[0].answer"),
            "must be a string, not an integer",
        );
        refused_with(
            &with("gates", json!([{"name": "g"}])),
            Some("gates[0].decision"),
            "missing (required)",
        );
        refused_with(
            &with("gates", json!([{"decision": "d"}])),
            Some("gates[0].name"),
            "missing (required)",
        );
        refused_with(
            &with("gates", json!([1])),
            Some("gates[0]"),
            "must be an object, not an integer",
        );
    }

    // ---- derived values ----------------------------------------------------------------------

    #[test]
    fn task_id_is_scenario_slash_name() {
        assert_eq!(
            load_value(&example()).unwrap().task_id(),
            "scenario/bugfix-iso-weeks"
        );
    }

    #[test]
    fn evidence_class_from_mode() {
        assert_eq!(
            load_value(&example()).unwrap().evidence().unwrap(),
            Evidence::Live
        );
        for m in ["fake", "live-hybrid"] {
            let r = load_value(&with("mode", json!(m))).unwrap();
            assert_eq!(r.evidence().unwrap(), Evidence::Fixture);
        }
        let r = load_value(&with("mode", json!("replay"))).unwrap();
        let reasons = crate::testutil::refusal(r.evidence());
        let found = crate::testutil::assert_only_reason!(
            reasons,
            field = None,
            sentence = "mode \"replay\" is not one the import knows (live, fake, or a mode \
                        containing -hybrid)"
        );
        assert_eq!(found.place, [r.result_path.display().to_string()]);
    }

    #[test]
    fn source_revision_only_with_clean_tools_and_a_full_commit() {
        assert_eq!(
            load_value(&example()).unwrap().source_revision(),
            Some(COMMIT)
        );
        let sha256_commit = "a".repeat(64);
        let r = load_value(&with("commit", json!(sha256_commit))).unwrap();
        assert_eq!(r.source_revision(), Some(sha256_commit.as_str()));
        for v in [
            with("tools_dirty", json!(true)),
            without("tools_dirty"),
            with("tools_dirty", Value::Null),
            without("commit"),
            with("commit", json!("0123456")),
            with("commit", json!("HEAD")),
            with("commit", json!(COMMIT.to_uppercase())),
        ] {
            assert_eq!(load_value(&v).unwrap().source_revision(), None, "{v}");
        }
    }

    #[test]
    fn spent_budget_from_harness_or_null() {
        let r = load_value(&example()).unwrap();
        assert_eq!(
            r.spent_budget(),
            json!({"harness_minutes": 2710.4 / 60.0, "max_steps": 143})
        );
        let r = load_value(&with("harness", json!({"wall_seconds": 120}))).unwrap();
        let b = r.spent_budget();
        assert_eq!(b, json!({"harness_minutes": 2.0, "max_steps": null}));
        assert!(b["harness_minutes"].is_f64());
        assert_eq!(
            String::from_utf8(crate::json::canonical(&b)).unwrap(),
            "{\n  \"harness_minutes\": 2.0,\n  \"max_steps\": null\n}\n"
        );
        let r = load_value(&with("harness", json!({"cli_calls": 0}))).unwrap();
        assert_eq!(
            r.spent_budget(),
            json!({"harness_minutes": null, "max_steps": 0})
        );
        let r = load_value(&without("harness")).unwrap();
        assert_eq!(
            r.spent_budget(),
            json!({"harness_minutes": null, "max_steps": null})
        );
    }

    #[test]
    fn cost_and_usage_only_from_a_complete_status_view() {
        let r = load_value(&example()).unwrap();
        assert_eq!(r.estimated_usd(), json!(3.91));
        assert_eq!(
            r.usage(),
            json!({"input_tokens": 812345, "output_tokens": 40211})
        );
        for sv in [
            json!({"complete": false, "spent_usd": 3.91, "usage": {"input_tokens": 1}}),
            json!({"spent_usd": 3.91, "usage": {"input_tokens": 1}}),
            json!({"complete": null, "spent_usd": 3.91}),
        ] {
            let r = load_value(&with("status_view", sv)).unwrap();
            assert_eq!(r.estimated_usd(), Value::Null);
            assert_eq!(r.usage(), Value::Null);
        }
        let r = load_value(&with("status_view", json!({"complete": true}))).unwrap();
        assert_eq!(r.estimated_usd(), Value::Null);
        assert_eq!(r.usage(), Value::Null);
        let r = load_value(&without("status_view")).unwrap();
        assert_eq!(r.estimated_usd(), Value::Null);
    }

    #[test]
    fn integers_stay_integers() {
        let mut e = example();
        e["elapsed_seconds"] = json!(2731);
        e["status_view"]["spent_usd"] = json!(4);
        let r = load_value(&e).unwrap();
        assert!(r.elapsed_seconds_value().is_u64());
        assert!(r.estimated_usd().is_u64());
        assert!(load_value(&example())
            .unwrap()
            .elapsed_seconds_value()
            .is_f64());
        assert_eq!(
            load_value(&without("elapsed_seconds"))
                .unwrap()
                .elapsed_seconds_value(),
            Value::Null
        );
    }

    #[test]
    fn decisions_answers_then_gates() {
        let mut e = example();
        e["gates"] = json!([{"name": "plan-approval", "decision": "approved"},
                            {"name": "merge", "decision": "rejected"}]);
        e["answers"] = json!([{"source": "scenario-script"}, {"source": "human"}]);
        assert_eq!(
            load_value(&e).unwrap().decisions(),
            vec![
                "answer from scenario-script",
                "answer from human",
                "gate plan-approval: approved",
                "gate merge: rejected"
            ]
        );
        assert!(load_value(&without("answers"))
            .unwrap()
            .decisions()
            .iter()
            .all(|d| d.starts_with("gate")));
    }

    #[test]
    fn reason_required_for_non_pass() {
        assert!(load_value(&example()).unwrap().check_reason().is_ok());
        let r = load_value(&with("verdict", json!("FALSE_COMPLETE"))).unwrap();
        assert_eq!(r.check_reason().unwrap_err().exit_code(), 2);
        let mut e = with("verdict", json!("FALSE_COMPLETE"));
        e["reason"] = json!("oracle failed");
        assert!(load_value(&e).unwrap().check_reason().is_ok());
    }

    #[test]
    fn options_from_profile_argv_or_none() {
        let declared = DeclaredProfile {
            provider: "p".into(),
            ..Default::default()
        };
        let r = load_value(&example()).unwrap();
        assert_eq!(
            r.options(&declared).option_deviations[0],
            "added --joint-planning"
        );
        let r = load_value(&without("profile")).unwrap();
        assert_eq!(r.argv(), None);
        assert_eq!(
            r.options(&declared).option_deviations,
            vec!["missing --provider=p"]
        );
    }

    #[test]
    fn evidence_refs_relative_inside_the_repo() {
        let (tmp, dir) = write_run(&example());
        let r = load(&dir, MAX).unwrap();
        assert_eq!(
            r.evidence_refs(Some(tmp.path())),
            vec![".scenario-runs/R1", ".scenario-runs/R1/result.json"]
        );
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(
            r.evidence_refs(Some(elsewhere.path())),
            vec![
                dir.display().to_string(),
                dir.join("result.json").display().to_string()
            ]
        );
    }
}
