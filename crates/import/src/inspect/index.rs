//! Matching samples to the declaration: the index from (Inspect task, sample id, epoch) to the
//! declared row, how a sample is named and keyed, and the log's revision (its commit prefix
//! resolved in the local repository).

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

use super::json::IVal;
use super::{InspectLog, InspectSample};
use crate::declaration::{sample_key, Declaration, Task};

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
