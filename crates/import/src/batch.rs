//! One import call: the records the evaluator named, read once, turned into one [`Change`]
//! built from a store's current state.
//!
//! [`load`] reads every record (each Arena store opened once, read-only); [`build`] converts
//! them and checks them against the store's current rows. It is meant to run inside
//! [`crate::store::apply`]'s build closure, so that after a lost race the change is rebuilt
//! from the new state. The import is all or nothing, and refuses in two rounds: every record
//! that cannot be converted into a row, all named together; then, for a change that could be
//! built, every reason the ledger refuses it ([`crate::store::check_change`]).

use std::collections::HashMap;
use std::path::PathBuf;

use super::harbor::{HarborTrial, TaskIndex};
use super::inspect::{InspectLog, SampleIndex, Skipped, Target};
use super::rows::{arena_row, for_schedule_id, scenario_row, Context, Converted};
use super::{ArenaAttempt, ScenarioRecord};
use crate::declaration::Kind;
use crate::error::{Error, Reasons, Result};
use crate::refusal::Reason;
use crate::store::{Change, ChangeKind, RowWrite, Store};

/// One record named on the command line, with the schedule id it fills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--scenario ID PATH`: a `result.json` or its evidence directory.
    Scenario { schedule_id: String, path: PathBuf },
    /// `--arena ID STORE ATTEMPT`: an attempt in an Arena store directory.
    Arena {
        schedule_id: String,
        store: PathBuf,
        attempt: String,
    },
    /// `--inspect PATH`: an Inspect log (`.eval`, `.json`) or a directory of them; each
    /// sample's schedule id is the declaration's.
    Inspect { path: PathBuf },
    /// `--harbor PATH`: a Harbor job directory or one trial directory; each trial fills the
    /// lowest DEFERRED repetition of the task that declares its Harbor task.
    Harbor { path: PathBuf },
}

impl Source {
    /// The schedule id the evaluator names.
    pub fn schedule_id(&self) -> &str {
        match self {
            Source::Scenario { schedule_id, .. } | Source::Arena { schedule_id, .. } => schedule_id,
            Source::Inspect { .. } | Source::Harbor { .. } => "",
        }
    }
    /// The kind of record.
    pub fn kind(&self) -> Kind {
        match self {
            Source::Scenario { .. } => Kind::Scenario,
            Source::Arena { .. } => Kind::Arena,
            Source::Inspect { .. } => Kind::Inspect,
            Source::Harbor { .. } => Kind::Harbor,
        }
    }
}

/// A record as read.
#[derive(Debug, Clone)]
pub enum Record {
    Scenario(Box<ScenarioRecord>),
    Arena(Box<ArenaAttempt>),
}

/// A record read, with the schedule id it fills.
#[derive(Debug, Clone)]
pub struct Request {
    /// Its position among the records given (1-based).
    pub position: usize,
    pub schedule_id: String,
    pub record: Record,
}

/// The records of one call: those read, and the refusals of those that could not be.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub requests: Vec<Request>,
    /// Why records were refused as they were read (a record that breaks its format, a run
    /// never graded, a RUNNING attempt, a changed case, …).
    pub refused: Reasons,
    /// The Inspect logs read, with the position of the `--inspect` argument that named them.
    pub inspect: Vec<(usize, InspectLog)>,
    /// What the output says about the Inspect directories read (manifests left out).
    pub inspect_notes: Vec<String>,
    /// The Harbor trials read, with the position of the `--harbor` argument that named them.
    pub harbor: Vec<(usize, HarborTrial)>,
    /// What the output says about the Harbor directories read (trials without a result).
    pub harbor_notes: Vec<String>,
}

/// Read every record, in the order given. Refusals are collected across all records (and
/// reported with the rest by [`build`]); a failure to read (a missing file, an unreadable
/// store) ends the call at once.
pub fn load(sources: &[Source], max_input_bytes: u64) -> Result<Loaded> {
    load_with_progress(sources, max_input_bytes, &mut |_, _| {})
}

/// As [`load`], calling `progress(read, total)` after each record is read.
pub fn load_with_progress(
    sources: &[Source],
    max_input_bytes: u64,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Loaded> {
    let mut reasons = Reasons::new();
    let mut stores: HashMap<PathBuf, super::ArenaStore> = HashMap::new();
    let mut out = Vec::with_capacity(sources.len());
    let mut inspect = Vec::new();
    let mut inspect_notes = Vec::new();
    // Every Inspect log of the call shares one bound (`inspect::IMPORT_FACTOR`).
    let mut budget = super::inspect::import_budget(max_input_bytes);
    let mut harbor = Vec::new();
    let mut harbor_notes = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        if let Source::Harbor { path } = source {
            match super::harbor::load(path, max_input_bytes) {
                Ok((trials, notes)) => {
                    harbor.extend(trials.into_iter().map(|t| (i + 1, t)));
                    harbor_notes.extend(notes);
                }
                Err(Error::Refused(r)) => reasons.absorb(r),
                Err(e) => return Err(e),
            }
            progress(i + 1, sources.len());
            continue;
        }
        if let Source::Inspect { path } = source {
            match super::inspect::load(path, max_input_bytes, &mut budget) {
                Ok((logs, manifests)) => {
                    inspect.extend(logs.into_iter().map(|l| (i + 1, l)));
                    inspect_notes.extend(manifests);
                }
                Err(Error::Refused(r)) => reasons.absorb(r),
                Err(e) => return Err(e),
            }
            progress(i + 1, sources.len());
            continue;
        }
        let read = match source {
            Source::Scenario { path, .. } => {
                super::scenario::load(path, max_input_bytes).map(|r| Record::Scenario(r.into()))
            }
            Source::Inspect { .. } | Source::Harbor { .. } => unreachable!("read above"),
            Source::Arena { store, attempt, .. } => {
                let opened = match stores.get(store) {
                    Some(s) => s,
                    None => {
                        let s = super::open_store(store)?;
                        stores.entry(store.clone()).or_insert(s)
                    }
                };
                super::read_attempt(opened, attempt).map(|a| Record::Arena(a.into()))
            }
        };
        match read {
            Ok(record) => out.push(Request {
                position: i + 1,
                schedule_id: source.schedule_id().to_owned(),
                record,
            }),
            Err(Error::Refused(r)) => {
                reasons.absorb(r.map(|x| for_schedule_id(x, source.schedule_id())))
            }
            Err(e) => return Err(e),
        }
        progress(i + 1, sources.len());
    }
    Ok(Loaded {
        requests: out,
        refused: reasons,
        inspect,
        inspect_notes,
        harbor,
        harbor_notes,
    })
}

/// What an import wrote, row by row, for the output.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The converted rows, in the order the records were given (their records shared with
    /// the change).
    pub rows: Vec<Converted>,
    /// Inspect samples not imported: already in the ledger, or undeclared and skipped.
    pub skipped: Skipped,
}

/// Build the import's change from the store's current state: convert every record. What the
/// change may do to the ledger (a row already filled, a row or a record named twice, a record
/// already in the ledger) is [`crate::store::check_change`]'s to refuse. Returns the change
/// (rows in schedule order) and the converted rows (in the order given).
pub fn build<S: Store + ?Sized>(
    store: &mut S,
    loaded: &Loaded,
    ctx: &Context,
) -> Result<(Change, Imported)> {
    let requests = &loaded.requests;
    let mut reasons = Reasons::new();
    reasons.absorb(loaded.refused.clone());
    let mut converted: Vec<(usize, Converted)> = Vec::with_capacity(requests.len());
    {
        let decl = store.declaration();
        for req in requests {
            let c = match &req.record {
                Record::Scenario(rec) => scenario_row(decl, ctx, &req.schedule_id, rec),
                Record::Arena(att) => arena_row(decl, ctx, &req.schedule_id, att),
            };
            match c {
                Ok(c) => converted.push((req.position, c)),
                Err(Error::Refused(r)) => reasons.absorb(r),
                Err(e) => return Err(e),
            }
        }
    }
    let mut skipped = inspect_rows(store, loaded, ctx, &mut converted, &mut reasons)?;
    let h = harbor_rows(store, loaded, ctx, &mut converted, &mut reasons)?;
    skipped.already_in_ledger.extend(h.already_in_ledger);
    skipped.undeclared.extend(h.undeclared);
    // In the order the records were given (a stable sort keeps a log's samples in order).
    converted.sort_by_key(|(p, _)| *p);
    let converted: Vec<Converted> = converted.into_iter().map(|(_, c)| c).collect();
    reasons.into_result()?;
    let decl = store.declaration();
    // The record bytes are shared with the change (one copy of every record, not two: an
    // import's records are up to 4 × --max-input-bytes).
    let mut rows: Vec<RowWrite> = converted
        .iter()
        .map(|c| RowWrite {
            row: c.row.clone(),
            record: Some(c.record.clone()),
            source: c.source.clone(),
        })
        .collect();
    // The key is a look-up of the row's schedule id and its position: made once per row, not
    // at every comparison (2 log n times).
    rows.sort_by_cached_key(|w| decl.schedule_position(w.row.schedule_id()));
    Ok((
        Change {
            kind: ChangeKind::Import,
            rows,
        },
        Imported {
            rows: converted,
            skipped,
        },
    ))
}

/// Convert every sample of the Inspect logs read: each to the row the declaration fixes for
/// it. A sample already in the ledger from the same record (a second log's copy), or a copy
/// of one this call already converts, is skipped and listed; an undeclared sample is refused
/// (skipped and listed with `--skip-undeclared`); an epoch beyond `repetitions` is refused.
/// What is left — a row already filled from another record, two samples for one row — is the
/// write path's to refuse, as for every kind.
fn inspect_rows<S: Store + ?Sized>(
    store: &mut S,
    loaded: &Loaded,
    ctx: &Context,
    converted: &mut Vec<(usize, Converted)>,
    reasons: &mut Reasons,
) -> Result<Skipped> {
    let mut skipped = Skipped::default();
    if loaded.inspect.is_empty() {
        return Ok(skipped);
    }
    let no_revisions = HashMap::new();
    let revisions = ctx.inspect_revisions.unwrap_or(&no_revisions);
    let lookup = |prefix: &str| {
        revisions.get(prefix).cloned().unwrap_or_else(|| {
            super::inspect::Resolved::Not(
                "no local repository to resolve it in (--repo)".to_owned(),
            )
        })
    };
    let env = super::inspect::Env {
        repo_root: ctx.repo_root,
        runtime_identity: ctx.runtime_identity,
        lookup: &lookup,
    };
    // Record key → schedule id, of the samples this call converts.
    let mut seen: HashMap<String, String> = HashMap::new();
    for (position, log) in &loaded.inspect {
        let decl = store.declaration();
        let index = SampleIndex::new(decl);
        let mut rows = Vec::new();
        for sample in &log.samples {
            let label = super::inspect::label(log, sample);
            let task_name = log.eval.get("task").display();
            match index.target(decl, log, sample) {
                Target::Undeclared if ctx.skip_undeclared => skipped.undeclared.push(label),
                Target::Undeclared => reasons.push(Reason::new(format!(
                    "sample {} (epoch {}) of Inspect task {task_name:?} is not declared (no task of declaration {} has this inspect.task and inspect.sample_id); --skip-undeclared skips it",
                    sample.id.display(),
                    sample.epoch.display(),
                    decl.id
                )).at(&label)),
                Target::Unscheduled { task, epoch } => reasons.push(Reason::new(format!(
                    "epoch {epoch} of sample {} is not scheduled: task {} has {} repetitions (an unscheduled attempt; a retry needs a new declared schedule)",
                    sample.id.display(),
                    task.id,
                    decl.repetitions
                )).at(&label)),
                Target::Scheduled { task, schedule_id } => {
                    match super::inspect::sample_row(decl, &env, task, &schedule_id, log, sample) {
                        Ok(b) => rows.push((schedule_id, label, sample, b)),
                        Err(r) => reasons.extend(r),
                    }
                }
            }
        }
        for (schedule_id, label, sample, b) in rows {
            let current = store.row(&schedule_id)?;
            let same_record = !current.is_deferred()
                && current
                    .native_record()
                    .is_some_and(|rec| rec.key() == b.key);
            if same_record {
                skipped.already_in_ledger.push(format!(
                    "{label}: already in the ledger ({schedule_id}, record {})",
                    b.key
                ));
                continue;
            }
            if seen.get(&b.key) == Some(&schedule_id) {
                skipped.already_in_ledger.push(format!(
                    "{label}: a copy of a sample this import already reads ({schedule_id}, record {})",
                    b.key
                ));
                continue;
            }
            seen.insert(b.key.clone(), schedule_id.clone());
            let decl = store.declaration();
            let mut r = Reasons::new();
            if let Some(h) = b.evidence_hint {
                r.hint(h);
            }
            match super::rows::check_row(decl, b.row, &label, &schedule_id, &mut r) {
                Some(row) if r.is_empty() => converted.push((
                    *position,
                    Converted {
                        row,
                        record: crate::store::Record::new(sample.bytes.as_slice()),
                        key: b.key,
                        source: label,
                        notes: b.notes,
                    },
                )),
                _ => reasons.absorb(r),
            }
        }
    }
    Ok(skipped)
}

/// Convert every Harbor trial read: each to the lowest DEFERRED repetition of the task that
/// declares its Harbor task, unless the ledger already holds the trial (`harbor.md`). The same
/// trial again (the same bytes, or a second copy in this call) is skipped and listed; a trial
/// whose record the ledger holds with other bytes is converted for the row holding it, which
/// the write path refuses as a retry (the Harbor plugin's import of a retry's trial
/// directory); except in a job directory whose `job.log` says Harbor retried the trial: then
/// the ledger holds its first attempt (imported by the plugin before Harbor deleted it), and
/// the surviving result is the retry's, skipped and listed, so that the job imports after the
/// plugin's run. An undeclared trial is
/// refused (skipped and listed with `--skip-undeclared`); a trial of a task whose repetitions
/// are all filled by other trials is refused as an unscheduled attempt.
fn harbor_rows<S: Store + ?Sized>(
    store: &mut S,
    loaded: &Loaded,
    ctx: &Context,
    converted: &mut Vec<(usize, Converted)>,
    reasons: &mut Reasons,
) -> Result<Skipped> {
    let mut skipped = Skipped::default();
    if loaded.harbor.is_empty() {
        return Ok(skipped);
    }
    let env = super::harbor::Env {
        runtime_identity: ctx.runtime_identity,
        revision: ctx.harbor_revision,
    };
    // Record key → schedule id, of the trials this call converts; schedule ids taken. (These
    // maps hash with foldhash: SipHash showed in an import of 1,000 trials.)
    let mut seen: foldhash::HashMap<String, String> = foldhash::HashMap::default();
    let mut taken: foldhash::HashSet<String> = foldhash::HashSet::default();
    let repetitions = store.declaration().repetitions;
    // Harbor task name → the declared task's position, built once (not per trial).
    let index: foldhash::HashMap<String, usize> = {
        let decl = store.declaration();
        let by_name = TaskIndex::new(decl);
        loaded
            .harbor
            .iter()
            .filter_map(|(_, t)| {
                let task = by_name.task(&t.task_name)?;
                Some((t.task_name.clone(), decl.tasks.position(&task.id)?))
            })
            .collect()
    };
    for (position, trial) in &loaded.harbor {
        let decl = store.declaration();
        let label = trial.label();
        let Some(&task_at) = index.get(&trial.task_name) else {
            if ctx.skip_undeclared {
                skipped.undeclared.push(label);
            } else {
                reasons.push(Reason::new(format!(
                    "trial {} of Harbor task {:?} is not declared (no task of declaration {} has this harbor.task); --skip-undeclared skips it",
                    trial.trial_name, trial.task_name, decl.id
                )).at(&label));
            }
            continue;
        };
        let key = trial.key();
        let sha = trial.record.sha256();
        if let Some(sid) = seen.get(&key) {
            skipped.already_in_ledger.push(format!(
                "{label}: a copy of a trial this import already reads ({sid}, record {key})"
            ));
            continue;
        }
        let task_id = decl.tasks.get(task_at).id.clone();
        let ids: Vec<String> = (1..=repetitions)
            .map(|rep| crate::declaration::schedule_id(&task_id, rep, repetitions))
            .collect();
        let mut holder = None;
        let mut first_free = None;
        for sid in &ids {
            let row = store.row(sid)?;
            if row.is_deferred() {
                if first_free.is_none() && !taken.contains(sid) {
                    first_free = Some(sid.clone());
                }
            } else if let Some(rec) = row.native_record().filter(|r| r.key() == key) {
                holder = Some((sid.clone(), rec.sha256 == sha));
                break;
            }
        }
        let schedule_id = match holder {
            Some((sid, true)) => {
                skipped.already_in_ledger.push(format!(
                    "{label}: already in the ledger ({sid}, record {key})"
                ));
                continue;
            }
            Some((sid, false)) if trial.retried.is_some() && trial.from_job_dir => {
                skipped.already_in_ledger.push(format!(
                    "{label}: the ledger holds this trial's first attempt ({sid}, record {key}), imported before Harbor deleted it; this result.json is the retry's (job.log), not this attempt's"
                ));
                continue;
            }
            // The ledger holds another result of this trial: the write path refuses it as a
            // retry.
            Some((sid, false)) => sid,
            None => match first_free {
                Some(sid) => sid,
                None => {
                    reasons.push(Reason::new(format!(
                        "trial {} of task {} is not scheduled: all {} repetitions are filled by other trials (an unscheduled attempt; a retry needs a new declared schedule)",
                        trial.trial_name, task_id, repetitions
                    )).at(&label));
                    continue;
                }
            },
        };
        seen.insert(key.clone(), schedule_id.clone());
        taken.insert(schedule_id.clone());
        let decl = store.declaration();
        let task = decl.tasks.get(task_at);
        let b = match super::harbor::trial_row(decl, &env, task, &schedule_id, trial) {
            Ok(b) => b,
            Err(r) => {
                reasons.extend(r);
                continue;
            }
        };
        let mut r = Reasons::new();
        if let Some(h) = b.evidence_hint {
            r.hint(h);
        }
        match super::rows::check_row(decl, b.row, &label, &schedule_id, &mut r) {
            Some(row) if r.is_empty() => converted.push((
                *position,
                Converted {
                    row,
                    record: trial.record.clone(),
                    key: b.key,
                    source: label,
                    notes: b.notes,
                },
            )),
            _ => reasons.absorb(r),
        }
    }
    Ok(skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::refusal::Rule;
    use crate::store::file::FileStore;
    use crate::testutil::{assert_reason, declaration_value, refusal, revision};
    use serde_json::json;

    fn result(run_id: &str) -> serde_json::Value {
        json!({
            "format": "scenario-result/1", "run_id": run_id, "scenario": "bugfix-iso-weeks",
            "mode": "live", "commit": revision(), "tools_dirty": false, "verdict": "PASS",
            "autocode_status": "COMPLETE", "oracle": {"checks": [{"name": "t", "ok": true}]}
        })
    }

    /// A declaration file, a template ledger and two scenario runs in a temporary directory.
    fn setup() -> (tempfile::TempDir, FileStore) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let decl_bytes = crate::testutil::bytes(&declaration_value());
        std::fs::write(d.join("campaign.json"), &decl_bytes).unwrap();
        let decl = crate::declaration::Declaration::parse(&decl_bytes, u64::MAX).unwrap();
        let template = crate::ledger::Ledger::template(&decl).canonical(&decl);
        std::fs::write(d.join("ledger.json"), template).unwrap();
        for run in ["r1", "r2"] {
            std::fs::create_dir_all(d.join(run)).unwrap();
            std::fs::write(
                d.join(run).join("result.json"),
                crate::json::canonical(&result(run)),
            )
            .unwrap();
        }
        let store =
            FileStore::open(&d.join("campaign.json"), &d.join("ledger.json"), u64::MAX).unwrap();
        (dir, store)
    }

    fn source(id: &str, dir: &std::path::Path, run: &str) -> Source {
        Source::Scenario {
            schedule_id: id.into(),
            path: dir.join(run),
        }
    }

    #[test]
    fn a_lost_race_rebuilds_from_the_new_state_and_refuses_a_row_filled_meanwhile() {
        let (dir, mut store) = setup();
        let d = dir.path();
        // Another importer fills /01 after this one opened the ledger.
        let mut other =
            FileStore::open(&d.join("campaign.json"), &d.join("ledger.json"), u64::MAX).unwrap();
        let theirs = load(&[source("scenario/bugfix-iso-weeks/01", d, "r2")], u64::MAX).unwrap();
        crate::store::apply(&mut other, |s| {
            build(s, &theirs, &Context::default()).map(|(c, _)| c)
        })
        .unwrap();
        // This import was built on the old state: its write loses, it rebuilds and refuses.
        let ours = load(&[source("scenario/bugfix-iso-weeks/01", d, "r1")], u64::MAX).unwrap();
        let mut builds = 0;
        let r = crate::store::apply(&mut store, |s| {
            builds += 1;
            build(s, &ours, &Context::default()).map(|(c, _)| c)
        });
        assert_reason!(
            refusal(r), row = "scenario/bugfix-iso-weeks/01", field = "native_record", rule = Rule::Admission(4), sentence = "already holds an attempt (PASS, from scenario:r2); the new row: PASS, from scenario:r1; a filled row is never replaced (a retry needs a new declared schedule, and the original row stays)");
        assert_eq!(builds, 2, "rebuilt once after the lost race");
        // A different row still lands after a lost race.
        let (dir, mut store) = setup();
        let d = dir.path();
        let mut other =
            FileStore::open(&d.join("campaign.json"), &d.join("ledger.json"), u64::MAX).unwrap();
        let theirs = load(&[source("scenario/bugfix-iso-weeks/01", d, "r2")], u64::MAX).unwrap();
        crate::store::apply(&mut other, |s| {
            build(s, &theirs, &Context::default()).map(|(c, _)| c)
        })
        .unwrap();
        let ours = load(&[source("scenario/bugfix-iso-weeks/02", d, "r1")], u64::MAX).unwrap();
        crate::store::apply(&mut store, |s| {
            build(s, &ours, &Context::default()).map(|(c, _)| c)
        })
        .unwrap();
        assert_eq!(store.ledger().filled(), 2);
    }

    #[test]
    fn reader_refusals_are_listed_with_the_others() {
        let (dir, mut store) = setup();
        let d = dir.path();
        std::fs::create_dir_all(d.join("admitted")).unwrap();
        std::fs::write(d.join("admitted/attempt.json"), "{}").unwrap();
        let loaded = load(
            &[
                source("scenario/bugfix-iso-weeks/01", d, "admitted"),
                source("scenario/interrupted-reuse/01", d, "r1"),
            ],
            u64::MAX,
        )
        .unwrap();
        assert_eq!(loaded.requests.len(), 1);
        assert_eq!(loaded.requests[0].position, 2);
        let r = refusal(build(&mut store, &loaded, &Context::default()));
        assert_reason!(r, place = [format!(
                "{}/admitted",
                d.display()
            )], row = "scenario/bugfix-iso-weeks/01", field = None, rule = None, sentence = "scenario run admitted but never graded (attempt.json without result.json): import it once it finishes, or write its row with `git ledger put`");
        assert_reason!(r, place = [format!(
                "{}/r1/result.json",
                d.display()
            )], row = "scenario/interrupted-reuse/01", field = None, rule = None, sentence = "a record of another task or kind: it is a scenario record of task scenario/bugfix-iso-weeks, but scenario/interrupted-reuse/01 schedules scenario task scenario/interrupted-reuse");
        // A record that cannot be read at all is a failure, not a refusal.
        let e = load(
            &[source("scenario/bugfix-iso-weeks/01", d, "missing")],
            u64::MAX,
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), 1);
    }
}
