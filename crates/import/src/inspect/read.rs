//! Reading Inspect logs: a `--inspect` argument's logs (a file, or a directory's `.eval` and
//! `.json` logs without the manifests), each `.eval` archive through the bounded zip reader and
//! each `.json` log, strictly; samples and their approval events.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::json::{self, IVal, Reader, Take};
use super::zip;
use super::{Approval, Format, InspectLog, InspectSample, IMPORT_FACTOR, SAMPLE_FIELDS};
use crate::error::{Error, Reasons, Result};
use crate::refusal::Reason;

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

/// A refusal naming the log.
fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::refused(Reason::new(what.to_string()).at(path.display()))
}

/// A refusal naming the log and its member.
fn bad_member(path: &Path, member: &str, what: impl std::fmt::Display) -> Error {
    Error::refused(Reason::new(what.to_string()).at(member).at(path.display()))
}

/// The memory an import may keep is spent (by the directory, or at a member): a refusal naming
/// the log (and the member), with the hint to raise the bound.
fn over_kept(path: &Path, member: Option<&str>, what: String) -> Error {
    let mut r = Reason::new(what);
    if let Some(m) = member {
        r = r.at(m);
    }
    Error::refused_with_hint(r.at(path.display()), crate::error::MAX_INPUT_HINT)
}

/// A member that could not be read: a refusal naming the log and the member, or (no memory
/// for it) a failure to run.
fn unread(path: &Path, member: &str, e: zip::ReadError) -> Error {
    match e {
        zip::ReadError::Refused(s) => bad_member(path, member, s),
        zip::ReadError::Bound(s) => Error::refused_with_hint(
            Reason::new(s).at(member).at(path.display()),
            crate::error::MAX_INPUT_HINT,
        ),
        e @ zip::ReadError::Memory(_) => {
            Error::failed(format!("{}: {member}: {e}", path.display()))
        }
    }
}

/// The memory the values built from one import's logs may take, in `--max-input-bytes`: about
/// what a log of small samples keeps of its decompressed bytes at the import's bound (Inspect's
/// own logs keep 40–90 % of theirs; logs of large samples, 2 %).
pub const KEPT_FACTOR: u64 = 2;

/// The memory one central directory entry takes while its log is read, beside its name: the
/// entry, its span, its slot in the index of last entries.
const ENTRY_BYTES: usize = std::mem::size_of::<zip::Entry>() + 64;

/// The memory one sample read takes beside its bytes and the values built from it.
fn sample_bytes(member: &str) -> u64 {
    (std::mem::size_of::<InspectSample>() + member.len()) as u64
}

/// The budget of one import: every member of every log it reads, decompressed, at most
/// [`IMPORT_FACTOR`] × `--max-input-bytes` (a `.json` log counted by its size); the values
/// built from them (the fields a row is made of) at most [`KEPT_FACTOR`] × `--max-input-bytes`
/// of memory.
pub fn import_budget(max_input_bytes: u64) -> zip::Budget {
    zip::Budget::new(
        max_input_bytes.saturating_mul(IMPORT_FACTOR),
        "4 × --max-input-bytes",
    )
    .keeping(max_input_bytes.saturating_mul(KEPT_FACTOR))
}

/// The manifests `eval_set` writes beside its logs (not logs themselves).
pub const MANIFESTS: [&str; 2] = ["logs.json", "eval-set.json"];

/// Read every log a `--inspect` argument names: a log file, or every `.eval` and `.json` log
/// directly in a directory, in name order (the manifests `eval_set` writes there,
/// [`MANIFESTS`], are left out and named in the second list). A path that cannot be read is a
/// failure (exit 1); a log that breaks its format is refused (exit 2). Every member read is
/// charged to `budget` (the import's, [`import_budget`]).
pub fn load(
    path: &Path,
    max_input_bytes: u64,
    budget: &mut zip::Budget,
) -> Result<(Vec<InspectLog>, Vec<String>)> {
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
            match read_log_within(&f, max_input_bytes, budget) {
                Ok(l) => out.push(l),
                Err(Error::Refused(reasons)) => r.absorb(reasons),
                Err(e) => return Err(e),
            }
        }
        r.into_result()?;
        return Ok((out, manifests));
    }
    read_log_within(path, max_input_bytes, budget).map(|l| (vec![l], Vec::new()))
}

/// Read one log file by its extension, under a budget of its own ([`import_budget`]).
pub fn read_log(path: &Path, max_input_bytes: u64) -> Result<InspectLog> {
    read_log_within(path, max_input_bytes, &mut import_budget(max_input_bytes))
}

/// Read one log file by its extension, charging `budget`: an `.eval` archive is at most
/// [`IMPORT_FACTOR`] × `max_input_bytes` and every member it reads is charged; a `.json` log
/// is at most `max_input_bytes` and charged its size.
pub fn read_log_within(
    path: &Path,
    max_input_bytes: u64,
    budget: &mut zip::Budget,
) -> Result<InspectLog> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("eval") => {
            let bytes =
                crate::json::read_bounded(path, max_input_bytes.saturating_mul(IMPORT_FACTOR))?;
            read_eval_within(path, &bytes, max_input_bytes, budget)
        }
        Some("json") => {
            let bytes = crate::json::read_bounded(path, max_input_bytes)?;
            budget
                .charge(bytes.len() as u64)
                .map_err(|e| unread(path, "the log", e))?;
            read_json_kept(path, &bytes, budget.kept())
        }
        _ => Err(bad(
            path,
            "not an Inspect log: --inspect takes .eval or .json logs, or a directory of them",
        )),
    }
}

/// An `.eval` archive, under a budget of its own ([`import_budget`]).
pub fn read_eval(path: &Path, bytes: &[u8], max_input_bytes: u64) -> Result<InspectLog> {
    read_eval_within(
        path,
        bytes,
        max_input_bytes,
        &mut import_budget(max_input_bytes),
    )
}

/// An `.eval` archive, every member read charged to `budget`.
pub fn read_eval_within(
    path: &Path,
    bytes: &[u8],
    max_input_bytes: u64,
    budget: &mut zip::Budget,
) -> Result<InspectLog> {
    let archive = zip::Archive::open(bytes).map_err(|e| bad(path, e))?;
    // What the directory takes in memory (each entry, its span, its slot in the index below) is
    // kept as long as the log is read: charged first, so a directory of millions of tiny
    // members is refused before any is read.
    let directory: u64 = archive
        .entries
        .iter()
        .map(|e| (ENTRY_BYTES + e.name.len()) as u64)
        .sum();
    json::keep(budget.kept(), directory).map_err(|e| over_kept(path, None, e))?;
    let mut member = |name: &str| -> Result<Option<IVal>> {
        let Some(i) = archive.last(name) else {
            return Ok(None);
        };
        let data = archive
            .read_within(i, max_input_bytes, budget)
            .map_err(|e| unread(path, name, e))?;
        json::parse_kept(&data, budget.kept())
            .map(Some)
            .map_err(|e| bad_member(path, name, format_args!("not valid JSON: {e}")))
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
        json::keep(budget.kept(), sample_bytes(&e.name))
            .map_err(|err| over_kept(path, Some(&e.name), err))?;
        let data = archive
            .read_within(i, max_input_bytes, budget)
            .map_err(|err| unread(path, &e.name, err))?;
        let mut r =
            Reader::kept(&data, budget.kept()).map_err(|err| bad_member(path, &e.name, err))?;
        let s = read_sample(&mut r, e.name.clone(), Vec::new())
            .and_then(|s| r.end().map(|()| s))
            .map_err(|err| bad_member(path, &e.name, format_args!("not a valid sample: {err}")))?;
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

/// The largest `.json` file that is parsed again, when it is no Inspect log, to say what it is.
const SNIFF_BYTES: usize = 1 << 20;

/// A `.json` log: one `EvalLog` object, samples inline (each kept as its exact bytes).
pub fn read_json(path: &Path, bytes: &[u8]) -> Result<InspectLog> {
    read_json_kept(
        path,
        bytes,
        import_budget(crate::json::DEFAULT_MAX_INPUT_BYTES).kept(),
    )
}

/// [`read_json`], the values built charged to `kept`.
fn read_json_kept(path: &Path, bytes: &[u8], kept: &std::cell::Cell<u64>) -> Result<InspectLog> {
    let fail = |e: String| bad(path, format_args!("not a valid Inspect log: {e}"));
    let mut r = Reader::kept(bytes, kept).map_err(fail)?;
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
                let member = format!("samples[{i}]");
                json::keep(kept, sample_bytes(&member))?;
                let s = read_sample(r, member, Vec::new())?;
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
        // Another harness's record (or a ledger, a declaration): say what it is. Only a small
        // file is parsed again for this (a record is a few KB; a large file keeps its bound).
        let seen = (bytes.len() <= SNIFF_BYTES)
            .then(|| crate::json::parse_strict(bytes).ok())
            .flatten()
            .and_then(|v| crate::sniff::recognise(&v))
            .filter(|s| s.reader != Some("--inspect"));
        if let Some(other) = seen {
            return Err(bad(path, format_args!("not an Inspect log: it is {other}")));
        }
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
