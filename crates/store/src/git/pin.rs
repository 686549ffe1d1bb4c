//! `pin` (draft → declaration at a revision) and `check` (recompute every pinned hash from
//! local Git objects at `source_revision`). Both read Git objects only, never the work tree.
//!
//! This is where the declaration (the model, which knows no Git) meets Git objects: the
//! declaration's rules and canonical bytes stay in `crate::declaration`, the hashing in the
//! generic Git modules (`git::defhash`, `git::tree`).

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::declaration::{canonical, validate_profile_file, Declaration, FilePin, Mode, TreePin};
use crate::error::{Error, Reasons, Result};
use crate::git::{self, ObjectId};
use crate::json;

/// Build the declaration a draft describes, with every hash, count, the profile copy and the
/// schedule computed from Git objects at `revision`. Returns the canonical bytes.
pub fn pin(
    repo: &gix::Repository,
    draft_bytes: &[u8],
    revision: &str,
    max_input_bytes: u64,
) -> Result<Vec<u8>> {
    pin_with_progress(repo, draft_bytes, revision, max_input_bytes, &mut |_, _| {})
}

/// What `pin` made: the declaration's bytes for standard output, or, written to a file, what
/// the command reports of it.
pub enum Pinned {
    Bytes(Vec<u8>),
    Written(PinnedSummary),
}

/// The declaration `pin -o FILE` wrote.
pub struct PinnedSummary {
    pub id: String,
    pub source_revision: String,
    pub tasks: usize,
    pub scheduled: usize,
    pub sha256: String,
}

/// `git ledger pin`: read the draft at `draft` (bounded by `max_input_bytes`), pin it at
/// `revision` in the repository at `repo` (default: discovered; `progress` as in
/// [`pin_with_progress`]), and write the declaration atomically to `output`, or return its bytes.
pub fn pin_file(
    repo: Option<&std::path::Path>,
    draft: &std::path::Path,
    revision: &str,
    max_input_bytes: u64,
    output: Option<&std::path::Path>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Pinned> {
    let draft_bytes = json::read_bounded(draft, max_input_bytes)?;
    let repo = git::open(repo)?;
    let bytes = pin_with_progress(&repo, &draft_bytes, revision, max_input_bytes, progress)
        .map_err(|e| e.context(draft.display()))?;
    let Some(path) = output else {
        return Ok(Pinned::Bytes(bytes));
    };
    crate::store::file::write_atomically(path, &bytes)?;
    let decl = Declaration::parse(&bytes, u64::MAX)?;
    Ok(Pinned::Written(PinnedSummary {
        id: decl.id.clone(),
        source_revision: decl.source_revision.clone().unwrap_or_default(),
        tasks: decl.tasks.len(),
        scheduled: decl.schedule_len(),
        sha256: decl.sha256.clone(),
    }))
}

/// As [`pin`], calling `progress(done, total)` after each pinned item (the profile, each policy
/// file, the runner tools, each task definition and oracle) is hashed, so that a caller can
/// show how far a long pin has come. `total` is known before the first item.
pub fn pin_with_progress(
    repo: &gix::Repository,
    draft_bytes: &[u8],
    revision: &str,
    max_input_bytes: u64,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<u8>> {
    let draft = Declaration::parse_mode(draft_bytes, Mode::Draft, max_input_bytes)?;
    let commit = git::resolve_commit(repo, revision)?;
    let total = 2
        + draft.policy_files.len()
        + draft.tasks.len()
        + draft.tasks.iter().filter(|t| t.oracle.is_some()).count();
    let mut done = 0;
    let mut step = |progress: &mut dyn FnMut(usize, usize)| {
        done += 1;
        progress(done, total);
    };
    let document = document(&draft)?;
    let mut out = match document.clone() {
        Value::Object(m) => m,
        _ => unreachable!("a parsed draft is an object"),
    };
    let mut r = Reasons::new();

    out.insert("source_revision".into(), Value::from(commit.to_string()));
    match profile_copy(repo, commit, &draft.profile.source.path, max_input_bytes) {
        Ok(p) => {
            out.insert("profile".into(), p);
        }
        Err(e) => r.absorb(e.into_reasons()),
    }
    step(progress);
    let mut policies = Vec::new();
    for p in &draft.policy_files {
        match file_pin(repo, commit, p) {
            Ok(v) => policies.push(v),
            Err(e) => r.absorb(e.into_reasons()),
        }
        step(progress);
    }
    out.insert("policy_files".into(), Value::Array(policies));
    match tree_pin(repo, commit, &draft.runner_tools) {
        Ok(v) => {
            out.insert("runner_tools".into(), v);
        }
        Err(e) => r.absorb(e.into_reasons()),
    }
    step(progress);
    if let Some(w) = &draft.writers {
        match writers_pin(repo, commit, w, max_input_bytes) {
            Ok(v) => {
                out.insert("writers".into(), v);
            }
            Err(e) => r.absorb(e.into_reasons()),
        }
    }
    let mut tasks = Vec::new();
    for (task, raw) in draft
        .tasks
        .iter()
        .zip(document["tasks"].as_array().into_iter().flatten())
    {
        let mut t = raw.as_object().cloned().unwrap_or_default();
        match tree_pin(repo, commit, &task.definition) {
            Ok(v) => {
                t.insert("definition".into(), v);
            }
            Err(e) => r.absorb(e.context(format!("task {}", task.id)).into_reasons()),
        }
        step(progress);
        if let Some(oracle) = &task.oracle {
            match file_pin(repo, commit, oracle) {
                Ok(v) => {
                    t.insert("oracle".into(), v);
                }
                Err(e) => r.absorb(e.context(format!("task {}", task.id)).into_reasons()),
            }
            step(progress);
        }
        tasks.push(Value::Object(t));
    }
    out.insert("tasks".into(), Value::Array(tasks));
    let schedule: Vec<Value> = draft
        .schedule()
        .map(|e| json!({"id": e.id, "task": e.task, "repetition": e.repetition}))
        .collect();
    out.insert("schedule".into(), Value::Array(schedule));
    if !r.is_empty() {
        return Err(Error::Refused(r));
    }
    let bytes = canonical(&Value::Object(out));
    // The result must pass every rule a declaration is held to.
    Declaration::parse(&bytes, u64::MAX).map_err(|e| e.context("the pinned declaration"))?;
    Ok(bytes)
}

/// What `check` found: each pinned item that matched.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub id: String,
    pub sha256: String,
    pub source_revision: String,
    pub tasks: usize,
    pub scheduled: usize,
    pub files: u64,
    pub checked: Vec<String>,
}

/// The document of a declaration parsed from its bytes (one rebuilt from the cache of checked
/// declarations has none: pinning and checking read the file).
fn document(decl: &Declaration) -> Result<&Value> {
    decl.value().ok_or_else(|| {
        Error::failed(
            "the declaration was read from the cache, without its document; read its file",
        )
    })
}

/// Recompute every hash, file count, the profile copy and the schedule of a declaration from
/// local Git objects at its `source_revision`; refuse with every mismatch.
pub fn check(
    repo: &gix::Repository,
    decl: &Declaration,
    max_input_bytes: u64,
) -> Result<CheckReport> {
    let rev = decl
        .source_revision
        .as_deref()
        .expect("a pinned declaration has a source_revision");
    let commit = git::require_commit(repo, rev)?;
    let mut r = Reasons::new();
    let mut checked = Vec::new();
    let mut files = 0;
    let mut compare = |what: String,
                       declared: &Value,
                       computed: std::result::Result<Value, Error>,
                       r: &mut Reasons| match computed {
        Ok(c) if json::value_eq(declared, &c) => checked.push(what),
        Ok(c) => r.push(
            crate::refusal::Reason::new(format!("declared {declared}, but commit {rev} holds {c}"))
                .at(&what),
        ),
        Err(e) => r.absorb(e.context(&what).into_reasons()),
    };
    let v = document(decl)?;
    compare(
        "profile".into(),
        &v["profile"],
        profile_copy(repo, commit, &decl.profile.source.path, max_input_bytes),
        &mut r,
    );
    for (i, p) in decl.policy_files.iter().enumerate() {
        compare(
            format!("policy_files[{i}] ({})", p.path),
            &v["policy_files"][i],
            file_pin(repo, commit, p),
            &mut r,
        );
    }
    let rt = tree_pin(repo, commit, &decl.runner_tools);
    files += count_files(&rt);
    compare(
        format!("runner_tools ({})", decl.runner_tools.path),
        &v["runner_tools"],
        rt,
        &mut r,
    );
    if let Some(w) = &decl.writers {
        compare(
            format!("writers ({})", w.path),
            &v["writers"],
            writers_pin(repo, commit, w, max_input_bytes),
            &mut r,
        );
    }
    for (i, t) in decl.tasks.iter().enumerate() {
        let def = tree_pin(repo, commit, &t.definition);
        files += count_files(&def);
        compare(
            format!("tasks[{i}] ({}).definition", t.id),
            &v["tasks"][i]["definition"],
            def,
            &mut r,
        );
        if let Some(o) = &t.oracle {
            compare(
                format!("tasks[{i}] ({}).oracle", t.id),
                &v["tasks"][i]["oracle"],
                file_pin(repo, commit, o),
                &mut r,
            );
        }
    }
    // The schedule was recomputed and compared when the declaration was parsed.
    r.into_result()
        .map_err(|e| e.context(format!("declaration {} at {rev}", decl.id)))?;
    Ok(CheckReport {
        id: decl.id.clone(),
        sha256: decl.sha256.clone(),
        source_revision: rev.to_owned(),
        tasks: decl.tasks.len(),
        scheduled: decl.schedule_len(),
        files,
        checked,
    })
}

fn count_files(v: &std::result::Result<Value, Error>) -> u64 {
    v.as_ref()
        .ok()
        .and_then(|v| v["files"].as_u64())
        .unwrap_or(0)
}

fn tree_pin(repo: &gix::Repository, commit: ObjectId, pin: &TreePin) -> Result<Value> {
    let h = git::definition_hash(repo, commit, &pin.path)?;
    Ok(json!({"path": pin.path, "sha256": h.sha256, "files": h.files}))
}

fn file_pin(repo: &gix::Repository, commit: ObjectId, pin: &FilePin) -> Result<Value> {
    Ok(json!({"path": pin.path, "sha256": git::blob_sha256(repo, commit, &pin.path)?}))
}

/// The writers file at the commit, parsed as an OpenSSH allowed-signers file (anything it does
/// not support refused), pinned by the SHA-256 of its bytes.
fn writers_pin(
    repo: &gix::Repository,
    commit: ObjectId,
    pin: &FilePin,
    max_input_bytes: u64,
) -> Result<Value> {
    let bytes = git::read_blob_bounded(repo, commit, &pin.path, max_input_bytes)?;
    git::allowed_signers::AllowedSigners::parse(&bytes).map_err(|r| {
        Error::refusal(r).context(format!(
            "writers file {} (an allowed-signers file)",
            pin.path
        ))
    })?;
    Ok(json!({"path": pin.path, "sha256": crate::sha256_hex(&bytes)}))
}

/// The profile file at the commit, validated, plus its `source` (path and SHA-256).
fn profile_copy(
    repo: &gix::Repository,
    commit: ObjectId,
    path: &str,
    max_input_bytes: u64,
) -> Result<Value> {
    let bytes = git::read_blob_bounded(repo, commit, path, max_input_bytes)?;
    let mut value = json::parse_document(&bytes, &format!("profile file {path}"), max_input_bytes)?;
    validate_profile_file(&value).map_err(|e| e.context(format!("profile file {path}")))?;
    let m: &mut Map<String, Value> = value.as_object_mut().expect("validated as an object");
    m.insert(
        "source".into(),
        json!({"path": path, "sha256": crate::sha256_hex(&bytes)}),
    );
    Ok(value)
}
