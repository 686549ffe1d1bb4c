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

use super::rows::{arena_row, scenario_row, Context, Converted};
use super::{ArenaAttempt, ScenarioRecord};
use crate::declaration::Kind;
use crate::error::{Error, Reasons, Result};
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
}

impl Source {
    /// The schedule id the evaluator names.
    pub fn schedule_id(&self) -> &str {
        match self {
            Source::Scenario { schedule_id, .. } | Source::Arena { schedule_id, .. } => schedule_id,
        }
    }
    /// The kind of record.
    pub fn kind(&self) -> Kind {
        match self {
            Source::Scenario { .. } => Kind::Scenario,
            Source::Arena { .. } => Kind::Arena,
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
    pub refused: Vec<String>,
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
    for (i, source) in sources.iter().enumerate() {
        let read = match source {
            Source::Scenario { path, .. } => {
                super::scenario::load(path, max_input_bytes).map(|r| Record::Scenario(r.into()))
            }
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
            Err(Error::Refused(r)) => reasons.extend(
                r.into_iter()
                    .map(|x| for_schedule_id(x, source.schedule_id())),
            ),
            Err(e) => return Err(e),
        }
        progress(i + 1, sources.len());
    }
    Ok(Loaded {
        requests: out,
        refused: reasons.into_vec(),
    })
}

/// Name the schedule id a record was given for in one of its refusal entries:
/// `<record>: <why>` becomes `<record> (for <id>): <why>`; a hint is left as it is.
pub(crate) fn for_schedule_id(entry: String, schedule_id: &str) -> String {
    if entry.starts_with(crate::error::HINT_PREFIX) {
        return entry;
    }
    match entry.split_once(": ") {
        Some((head, rest)) if !head.contains(' ') => {
            format!("{head} (for {schedule_id}): {rest}")
        }
        _ => format!("{entry} (for {schedule_id})"),
    }
}

/// What an import wrote, row by row, for the output.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The converted rows, in the order the records were given.
    pub rows: Vec<Converted>,
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
    reasons.extend(loaded.refused.iter().cloned());
    let mut converted = Vec::with_capacity(requests.len());
    {
        let decl = store.declaration();
        for req in requests {
            let c = match &req.record {
                Record::Scenario(rec) => scenario_row(decl, ctx, &req.schedule_id, rec),
                Record::Arena(att) => arena_row(decl, ctx, &req.schedule_id, att),
            };
            match c {
                Ok(c) => converted.push(c),
                Err(Error::Refused(r)) => reasons.extend(r),
                Err(e) => return Err(e),
            }
        }
    }
    reasons.into_result()?;
    let decl = store.declaration();
    let mut rows: Vec<RowWrite> = converted
        .iter()
        .map(|c| RowWrite {
            row: c.row.clone(),
            record: Some(c.record.clone()),
            source: c.source.clone(),
        })
        .collect();
    rows.sort_by_key(|w| decl.schedule_position(w.row.schedule_id()));
    Ok((
        Change {
            kind: ChangeKind::Import,
            rows,
        },
        Imported { rows: converted },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert_reason(&refusal(r), &["already holds an attempt", "scenario:r2"]);
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
        assert_reason(&r, &["never graded", "(for scenario/bugfix-iso-weeks/01)"]);
        assert_reason(&r, &["a record of another task or kind"]);
        // A record that cannot be read at all is a failure, not a refusal.
        let e = load(
            &[source("scenario/bugfix-iso-weeks/01", d, "missing")],
            u64::MAX,
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), 1);
    }
}
