//! Inspect AI logs (`inspect.md`): `.eval` archives and `.json` logs read strictly, each
//! sample an attempt whose schedule id the declaration fixes (the task whose `inspect.task`
//! and `inspect.sample_id` match, repetition = epoch), converted into a row over the same row
//! model as the other kinds. This module adds no admission rule of its own: what the ledger
//! refuses (a row already filled, a record filling two rows, …) is the one write path's.
//!
//! [`json`](mod@json) is the reader that accepts `NaN`/`Infinity`/`-Infinity` (for Inspect logs only);
//! [`zip`] the bounded archive reader.

use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::declaration::{sample_key, Declaration, Evidence, Kind, Task};
use crate::error::{Error, Reasons, Result};

pub mod json;
pub mod zip;

use json::{IVal, Num, Reader, Take};

/// An `.eval` archive may be this many times the input bound (`--max-input-bytes`, which
/// bounds each member's decompressed JSON): a log holds one member per sample.
pub const ARCHIVE_FACTOR: u64 = 16;

/// The note every Inspect row's output carries (`inspect.md`, `definition`).
pub const DEFINITION_NOTE: &str = "Inspect does not hash what a sample ran: the log cannot \
     prove that the pinned definition is what ran";

/// Which format a log is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Eval,
    Json,
}

/// One log as read: the eval spec, the run's status and its samples.
#[derive(Debug, Clone)]
pub struct InspectLog {
    /// The path as given (or found in the directory given).
    pub path: PathBuf,
    pub format: Format,
    /// The run's status; `None` when the log has no header yet (a run still being written).
    pub status: Option<String>,
    /// Whether the header (`header.json`, or a `.json` log's top level) was there.
    pub has_header: bool,
    /// The eval spec (`eval`).
    pub eval: IVal,
    pub samples: Vec<InspectSample>,
}

impl InspectLog {
    /// Whether the run had ended when the log was read.
    pub fn ended(&self) -> bool {
        self.has_header && self.status.as_deref().is_some_and(|s| s != "started")
    }
}

/// One human approval of a tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    pub function: String,
    pub call_id: String,
    pub decision: String,
    pub explanation: Option<String>,
}

/// One sample as read, with the exact bytes the log holds for it.
#[derive(Debug, Clone)]
pub struct InspectSample {
    /// `samples/<id>_epoch_<n>.json` (`.eval`) or `samples[<i>]` (`.json`).
    pub member: String,
    pub bytes: Vec<u8>,
    pub id: IVal,
    pub epoch: IVal,
    pub uuid: Option<String>,
    pub scores: IVal,
    pub error: IVal,
    pub error_retries: IVal,
    pub limit: IVal,
    pub model_usage: IVal,
    pub total_time: IVal,
    pub working_time: IVal,
    pub invalidation: IVal,
    /// The number of `messages`, when it is a list.
    pub messages: Option<usize>,
    /// Approvals whose approver is `human`.
    pub approvals: Vec<Approval>,
}

/// The fields of a sample that are built (the rest is checked, not built).
const SAMPLE_FIELDS: [&str; 11] = [
    "id",
    "epoch",
    "uuid",
    "scores",
    "error",
    "error_retries",
    "limit",
    "model_usage",
    "total_time",
    "working_time",
    "invalidation",
];

/// Read a list of transcript events, keeping the approvals by a person; the events nested in
/// an event (an older Inspect's `subtask` events) are read the same way.
fn read_events(
    r: &mut Reader<'_>,
    approvals: &mut Vec<Approval>,
) -> std::result::Result<(), String> {
    r.array(|r| {
        if !r.at_object() {
            return r.skip();
        }
        let mut ev: Vec<(String, IVal)> = Vec::new();
        r.object(|r, k| {
            if matches!(
                &*k,
                "event" | "approver" | "decision" | "call" | "explanation"
            ) {
                ev.push((k.into_owned(), r.value()?));
                Ok(())
            } else if &*k == "events" && r.at_array() {
                read_events(r, approvals)
            } else {
                r.skip()
            }
        })?;
        let ev = IVal::Obj(ev);
        if ev.get("event").as_str() == Some("approval")
            && ev.get("approver").as_str() == Some("human")
        {
            let call = ev.get("call");
            approvals.push(Approval {
                function: call.get("function").as_str().unwrap_or("?").to_owned(),
                call_id: call.get("id").as_str().unwrap_or("?").to_owned(),
                decision: ev.get("decision").as_str().unwrap_or("?").to_owned(),
                explanation: ev.get("explanation").as_str().map(str::to_owned),
            });
        }
        Ok(())
    })
    .map(|_| ())
}

/// Read one sample object selectively, from the reader's position.
fn read_sample(
    r: &mut Reader<'_>,
    member: String,
    bytes: Vec<u8>,
) -> std::result::Result<InspectSample, String> {
    let mut fields: HashMap<&'static str, IVal> = HashMap::new();
    let mut messages = None;
    let mut approvals = Vec::new();
    if !r.at_object() {
        return Err("a sample must be an object".into());
    }
    r.object(|r, key| {
        if let Some(f) = SAMPLE_FIELDS.iter().find(|f| **f == key) {
            fields.insert(f, r.value()?);
            return Ok(());
        }
        let take = match &*key {
            "messages" if r.at_array() => Take::Count,
            "events" if r.at_array() => Take::Value,
            _ => Take::Skip,
        };
        match take {
            Take::Count => messages = Some(r.array(|r| r.skip())?),
            Take::Value => read_events(r, &mut approvals)?,
            Take::Skip => r.skip()?,
        }
        Ok(())
    })?;
    let mut take = |k: &str| fields.remove(k).unwrap_or(IVal::Null);
    let uuid = take("uuid");
    Ok(InspectSample {
        member,
        bytes,
        id: take("id"),
        epoch: take("epoch"),
        uuid: uuid.as_str().filter(|s| !s.is_empty()).map(str::to_owned),
        scores: take("scores"),
        error: take("error"),
        error_retries: take("error_retries"),
        limit: take("limit"),
        model_usage: take("model_usage"),
        total_time: take("total_time"),
        working_time: take("working_time"),
        invalidation: take("invalidation"),
        messages,
        approvals,
    })
}

/// A refusal naming the log (and member).
fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::refused(format!("{}: {what}", path.display()))
}

/// The manifests `eval_set` writes beside its logs (not logs themselves).
pub const MANIFESTS: [&str; 2] = ["logs.json", "eval-set.json"];

/// Read every log a `--inspect` argument names: a log file, or every `.eval` and `.json` log
/// directly in a directory, in name order (the manifests `eval_set` writes there,
/// [`MANIFESTS`], are left out and named in the second list). A path that cannot be read is a
/// failure (exit 1); a log that breaks its format is refused (exit 2).
pub fn load(path: &Path, max_input_bytes: u64) -> Result<(Vec<InspectLog>, Vec<String>)> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::failed(format!("{}: cannot read: {e}", path.display())))?;
    if meta.is_dir() {
        let mut files: Vec<PathBuf> = Vec::new();
        let entries = std::fs::read_dir(path)
            .map_err(|e| Error::failed(format!("{}: cannot list: {e}", path.display())))?;
        for e in entries {
            let e =
                e.map_err(|e| Error::failed(format!("{}: cannot list: {e}", path.display())))?;
            let p = e.path();
            if p.is_file()
                && matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("eval" | "json")
                )
            {
                files.push(p);
            }
        }
        files.sort();
        let mut out = Vec::with_capacity(files.len());
        let mut manifests = Vec::new();
        let mut r = Reasons::new();
        for f in files {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if MANIFESTS.contains(&name) {
                manifests.push(format!(
                    "{}: an eval_set manifest, not a log (left out)",
                    f.display()
                ));
                continue;
            }
            match read_log(&f, max_input_bytes) {
                Ok(l) => out.push(l),
                Err(Error::Refused(reasons)) => r.absorb(reasons),
                Err(e) => return Err(e),
            }
        }
        r.into_result()?;
        return Ok((out, manifests));
    }
    read_log(path, max_input_bytes).map(|l| (vec![l], Vec::new()))
}

/// Read one log file by its extension.
pub fn read_log(path: &Path, max_input_bytes: u64) -> Result<InspectLog> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("eval") => {
            let bytes =
                crate::json::read_bounded(path, max_input_bytes.saturating_mul(ARCHIVE_FACTOR))?;
            read_eval(path, &bytes, max_input_bytes)
        }
        Some("json") => {
            let bytes = crate::json::read_bounded(path, max_input_bytes)?;
            read_json(path, &bytes)
        }
        _ => Err(bad(
            path,
            "not an Inspect log: --inspect takes .eval or .json logs, or a directory of them",
        )),
    }
}

/// An `.eval` archive.
pub fn read_eval(path: &Path, bytes: &[u8], max_input_bytes: u64) -> Result<InspectLog> {
    let archive = zip::Archive::open(bytes).map_err(|e| bad(path, e))?;
    let member = |name: &str| -> Result<Option<IVal>> {
        let Some(i) = archive.last(name) else {
            return Ok(None);
        };
        let data = archive
            .read(i, max_input_bytes)
            .map_err(|e| bad(path, format_args!("{name}: {e}")))?;
        json::parse(&data)
            .map(Some)
            .map_err(|e| bad(path, format_args!("{name}: not valid JSON: {e}")))
    };
    let header = member("header.json")?;
    let (eval, status, has_header) = match &header {
        Some(h) => (
            h.get("eval").clone(),
            h.get("status").as_str().map(str::to_owned),
            true,
        ),
        None => match member("_journal/start.json")? {
            Some(start) => (start.get("eval").clone(), None, false),
            None => {
                return Err(bad(
                    path,
                    "not an Inspect log: neither header.json nor _journal/start.json",
                ))
            }
        },
    };
    // A run that had not ended wrote its spec in _journal/start.json; a started header may lack
    // it too.
    let eval = if eval.as_object().is_none() {
        member("_journal/start.json")?
            .map(|s| s.get("eval").clone())
            .unwrap_or(IVal::Null)
    } else {
        eval
    };
    if eval.as_object().is_none() {
        return Err(bad(path, "the log holds no eval spec (eval)"));
    }
    // Each sample member name once, the last entry of a repeated name counting, in the order
    // of those last entries.
    let mut last: HashMap<&str, usize> = HashMap::with_capacity(archive.entries.len());
    for (i, e) in archive.entries.iter().enumerate() {
        last.insert(&e.name, i);
    }
    let mut samples = Vec::new();
    for (i, e) in archive.entries.iter().enumerate() {
        if !(e.name.starts_with("samples/") && e.name.ends_with(".json")) {
            continue;
        }
        if last.get(e.name.as_str()) != Some(&i) {
            continue;
        }
        let data = archive
            .read(i, max_input_bytes)
            .map_err(|err| bad(path, format_args!("{}: {err}", e.name)))?;
        let mut r =
            Reader::new(&data).map_err(|err| bad(path, format_args!("{}: {err}", e.name)))?;
        let s = read_sample(&mut r, e.name.clone(), Vec::new())
            .and_then(|s| r.end().map(|()| s))
            .map_err(|err| bad(path, format_args!("{}: not a valid sample: {err}", e.name)))?;
        samples.push(InspectSample { bytes: data, ..s });
    }
    Ok(InspectLog {
        path: path.to_owned(),
        format: Format::Eval,
        status,
        has_header,
        eval,
        samples,
    })
}

/// A `.json` log: one `EvalLog` object, samples inline (each kept as its exact bytes).
pub fn read_json(path: &Path, bytes: &[u8]) -> Result<InspectLog> {
    let fail = |e: String| bad(path, format_args!("not a valid Inspect log: {e}"));
    let mut r = Reader::new(bytes).map_err(fail)?;
    let mut eval = IVal::Null;
    let mut status = None;
    let mut samples = Vec::new();
    if !r.at_object() {
        return Err(fail("the log must be an object".into()));
    }
    r.object(|r, key| match &*key {
        "eval" => {
            eval = r.value()?;
            Ok(())
        }
        "status" => {
            status = r.value()?.as_str().map(str::to_owned);
            Ok(())
        }
        "samples" if r.at_array() => {
            let mut i = 0;
            r.array(|r| {
                let start = r.value_start();
                let s = read_sample(r, format!("samples[{i}]"), Vec::new())?;
                let end = r.pos();
                samples.push(InspectSample {
                    bytes: bytes[start..end].to_vec(),
                    ..s
                });
                i += 1;
                Ok(())
            })?;
            Ok(())
        }
        _ => r.skip(),
    })
    .and_then(|()| r.end())
    .map_err(fail)?;
    if eval.as_object().is_none() {
        return Err(bad(path, "the log holds no eval spec (eval)"));
    }
    Ok(InspectLog {
        path: path.to_owned(),
        format: Format::Json,
        status,
        has_header: true,
        eval,
        samples,
    })
}

// ---------------------------------------------------------------------------------------------
// Samples become rows.

/// What a revision prefix resolved to in the local repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    Commit(String),
    /// Why not: ambiguous, not found, no repository.
    Not(String),
}

/// Resolve an abbreviated commit id to the one full commit id it names among the commits of
/// the local repository.
pub fn resolve_prefix(repo: Option<&gix::Repository>, prefix: &str) -> Resolved {
    let Some(repo) = repo else {
        return Resolved::Not("no local repository to resolve it in (--repo)".into());
    };
    let hex_ok = prefix.len() >= 4
        && prefix.len() <= repo.object_hash().len_in_hex()
        && prefix.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex_ok {
        return Resolved::Not(format!("{prefix:?} is not an abbreviated commit id"));
    }
    let lower = prefix.to_ascii_lowercase();
    let Ok(p) = gix::hash::Prefix::from_hex(&lower) else {
        return Resolved::Not(format!("{prefix:?} is not an abbreviated commit id"));
    };
    let mut candidates = std::collections::HashSet::new();
    if let Err(e) = repo.objects.lookup_prefix(p, Some(&mut candidates)) {
        return Resolved::Not(format!("cannot look up {prefix}: {e}"));
    }
    let commits: Vec<gix::ObjectId> = candidates
        .into_iter()
        .filter(|id| {
            matches!(repo.try_find_header(*id), Ok(Some(h)) if h.kind() == gix::object::Kind::Commit)
        })
        .collect();
    match commits.as_slice() {
        [one] => Resolved::Commit(one.to_string()),
        [] => Resolved::Not(format!(
            "commit {prefix} is not in the local repository (a shallow clone, or another repository?)"
        )),
        many => Resolved::Not(format!(
            "{prefix} is ambiguous: {} commits of the local repository start with it",
            many.len()
        )),
    }
}

/// The sample's attempt in the declaration: its task and schedule id, or why it has none.
pub enum Target<'d> {
    Scheduled {
        task: &'d Task,
        schedule_id: String,
    },
    /// No declared task has this Inspect task and sample id.
    Undeclared,
    /// A declared sample's epoch that the schedule does not have.
    Unscheduled {
        task: &'d Task,
        epoch: String,
    },
}

/// Declared Inspect samples by (Inspect task, sample id key).
pub struct SampleIndex<'d> {
    tasks: HashMap<(String, String), &'d Task>,
}

impl<'d> SampleIndex<'d> {
    pub fn new(decl: &'d Declaration) -> Self {
        let tasks = decl
            .tasks
            .iter()
            .filter_map(|t| {
                let s = t.inspect.as_ref()?;
                Some(((s.task.clone(), sample_key(&s.sample_id)), t))
            })
            .collect();
        SampleIndex { tasks }
    }

    /// Where `sample` of `log` belongs.
    pub fn target(
        &self,
        decl: &Declaration,
        log: &InspectLog,
        sample: &InspectSample,
    ) -> Target<'d> {
        let task_name = log.eval.get("task").as_str().unwrap_or_default();
        let Some(id) = sample.id.to_json().filter(crate::declaration::is_sample_id) else {
            return Target::Undeclared;
        };
        let Some(task) = self
            .tasks
            .get(&(task_name.to_owned(), sample_key(&id)))
            .copied()
        else {
            return Target::Undeclared;
        };
        match sample.epoch.as_count() {
            Some(e) if (1..=decl.repetitions).contains(&e) => Target::Scheduled {
                task,
                schedule_id: crate::declaration::schedule_id(&task.id, e, decl.repetitions),
            },
            _ => Target::Unscheduled {
                task,
                epoch: sample.epoch.display(),
            },
        }
    }
}

/// How a sample is named in messages: `<log>#<member>`.
pub fn label(log: &InspectLog, sample: &InspectSample) -> String {
    format!("{}#{}", log.path.display(), sample.member)
}

/// The sample's record key id: its `uuid`, or `<eval_id>/<sample id>/<epoch>` (the run id
/// stands in for an eval id older logs lack).
pub fn record_id(log: &InspectLog, sample: &InspectSample) -> Option<String> {
    if let Some(u) = &sample.uuid {
        return Some(u.clone());
    }
    let eval_id = (log.eval.get("eval_id").as_str())
        .or_else(|| log.eval.get("run_id").as_str())
        .filter(|s| !s.is_empty())?;
    Some(format!(
        "{eval_id}/{}/{}",
        sample.id.display(),
        sample.epoch.display()
    ))
}

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

/// The log's revision: the full commit when `dirty` is false and the prefix resolves
/// uniquely; else null and the note saying why.
pub fn revision_of(eval: &IVal, lookup: &dyn Fn(&str) -> Resolved) -> (Value, Option<String>) {
    let rev = eval.get("revision");
    if rev.is_null() {
        return (
            Value::Null,
            Some("source_revision null: the log records no revision (eval.revision)".into()),
        );
    }
    let Some(commit) = rev.get("commit").as_str().filter(|c| !c.is_empty()) else {
        return (
            Value::Null,
            Some("source_revision null: the log's revision names no commit".into()),
        );
    };
    match rev.get("dirty") {
        IVal::Bool(false) => {}
        IVal::Bool(true) => {
            return (
                Value::Null,
                Some(format!("source_revision null: the tree of commit {commit} was dirty when the eval ran")),
            )
        }
        _ => {
            return (
                Value::Null,
                Some(format!(
                    "source_revision null: the log does not say whether the tree of commit {commit} was dirty (an older Inspect)"
                )),
            )
        }
    }
    match lookup(commit) {
        Resolved::Commit(full) => (Value::from(full), None),
        Resolved::Not(why) => (Value::Null, Some(format!("source_revision null: {why}"))),
    }
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
    pub key: String,
    pub notes: Vec<String>,
    /// Notes the commit message carries too (an edited score).
    pub message_notes: Vec<String>,
}

/// Convert one sample of `task` into the row of `schedule_id`; refusals name the sample.
pub fn sample_row(
    decl: &Declaration,
    env: &Env<'_>,
    task: &Task,
    schedule_id: &str,
    log: &InspectLog,
    sample: &InspectSample,
) -> std::result::Result<Built, Vec<String>> {
    let label = format!("{} (for {schedule_id})", label(log, sample));
    let spec = task.inspect.as_ref().expect("an inspect task");
    let mut r = Vec::new();
    let scripted = is_scripted(&log.eval, sample);
    match (scripted, task.evidence) {
        (true, Evidence::Live) => r.push(format!(
            "{label}: evidence: a mockllm (scripted) model is fixture evidence and cannot fill live row {schedule_id}"
        )),
        (false, Evidence::Fixture) => r.push(format!(
            "{label}: evidence: a live run cannot fill fixture row {schedule_id} (task {} is declared fixture)",
            task.id
        )),
        _ => {}
    }
    let Some(record) = record_id(log, sample) else {
        r.push(format!(
            "{label}: the sample has no uuid and the log no eval_id or run_id: no record id"
        ));
        return Err(r);
    };
    let mut notes = Vec::new();
    let mut message_notes = Vec::new();
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
        message_notes.push(edit.clone());
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
    let log_path = super::relative_to_repo(&log.path, env.repo_root);
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
        ("evidence", Value::from(task.evidence.as_str())),
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
        key: format!("{}:{record}", Kind::Inspect.as_str()),
        notes,
        message_notes,
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

/// The logs' distinct revision prefixes (of clean trees), for resolving them once.
pub fn revision_prefixes(logs: &[InspectLog]) -> Vec<String> {
    let mut out: BTreeMap<String, ()> = BTreeMap::new();
    for l in logs {
        let rev = l.eval.get("revision");
        if rev.get("dirty").as_bool() == Some(false) {
            if let Some(c) = rev.get("commit").as_str() {
                out.insert(c.to_owned(), ());
            }
        }
    }
    out.into_keys().collect()
}

#[cfg(test)]
mod tests;
