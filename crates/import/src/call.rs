//! One `import` as a library operation: the records read ([`super::batch::load`]), what they
//! need of the repository (the Arena pins at `source_revision`, the Inspect revision prefixes,
//! Harbor's `--revision`), the change built and written through [`store::apply`] (or rehearsed
//! through [`store::rehearse`]), and what it wrote summarised for the output ([`Summary`]).

use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::batch::{self, Loaded, Source};
use super::inspect::{Resolved, Skipped};
use super::rows::{self, Context, Converted, GitPins, SCENARIO_DEFINITION_NOTE};
use crate::declaration::Kind;
use crate::error::Result;
use crate::store::{self, Change, Rehearsal, Store};

/// What one import is asked besides its records.
#[derive(Debug, Clone, Default)]
pub struct Options<'a> {
    /// `--runtime-identity`: the evaluator's admission record, added to every row.
    pub runtime_identity: Option<&'a Path>,
    /// `--skip-undeclared`: skip (and list) Inspect samples and Harbor trials no task declares.
    pub skip_undeclared: bool,
    /// `--revision`: the commit the Harbor trials ran from.
    pub revision: Option<&'a str>,
    /// `--dry-run`: check everything, write nothing.
    pub dry_run: bool,
    /// `--repo`: the repository whose objects are read (default: discovered).
    pub repo: Option<&'a Path>,
    /// `--max-input-bytes`.
    pub max_input_bytes: u64,
}

/// One imported attempt, as the output shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ImportedRow {
    pub schedule_id: String,
    pub native_outcome: String,
    pub native_status: Option<String>,
    /// The portfolio outcome key.
    pub outcome: &'static str,
    /// The portfolio outcome label.
    pub label: &'static str,
    /// For a PASS without complete evidence: every gap.
    pub gaps: Vec<String>,
    /// Revision, runtime, (live) profile and option deviations.
    pub deviations: Vec<String>,
    /// Declared limits the attempt went over.
    pub over_limits: Vec<String>,
    /// The record file the row was filled from.
    pub source: String,
    /// The record key (`<kind>:<id>`).
    pub record: String,
    /// What else the reader should know about this row.
    pub notes: Vec<String>,
    /// An Inspect row's reason and option deviations (as the row records them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option_deviations: Option<Vec<String>>,
}

/// What an import did.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The imported attempts, in the order the records were given.
    pub imported: Vec<ImportedRow>,
    /// Rows holding an attempt after the import, and rows scheduled.
    pub filled: usize,
    pub scheduled: usize,
    /// Rows still DEFERRED after the import (with Inspect logs: the samples no log held).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred: Option<usize>,
    /// Inspect samples not imported (already in the ledger; undeclared, with
    /// `--skip-undeclared`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Skipped>,
    /// Notes about the whole call.
    pub notes: Vec<String>,
}

/// What [`import`] returns.
pub struct Outcome {
    /// What it wrote (or, with `dry_run`, would write).
    pub summary: Summary,
    /// With `dry_run`: the rehearsal (the change, the commit message, the rows filled after).
    pub rehearsal: Option<Rehearsal>,
    /// The records read, the change written and the rows built: plain data, returned so that
    /// a caller about to exit may leak it instead of freeing it one allocation at a time (a
    /// tenth of an import of 2,000 Inspect samples, `docs/benchmarks.md`).
    pub kept: (Loaded, Change, Vec<Converted>),
}

/// What [`import_into`] did: the store written to (for what the caller prints of it), the
/// import's outcome and, with `dry_run`, the dry run (its notes the import's).
pub struct Imported {
    pub store: Box<dyn Store>,
    pub outcome: Outcome,
    pub dry_run: Option<crate::write::DryRun>,
}

/// `git ledger import`: open the ledger `target` names ([`crate::write::open`]; with
/// `dry_run`, writing no derived data either) and [`import`] `sources` into it.
pub fn import_into(
    target: &crate::write::Target,
    sources: &[Source],
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Imported> {
    if options.dry_run {
        crate::git::decl_cache::write_no_derived_data();
    }
    let mut store = crate::write::open(target, options.max_input_bytes, "import")?;
    let outcome = import(&mut *store, sources, options, progress)?;
    let dry_run = outcome.rehearsal.as_ref().map(|r| {
        let mut dry = crate::write::DryRun::new("import", &*store, target.ledger.as_deref(), r);
        dry.notes = dry_notes(&outcome.summary);
        dry
    });
    Ok(Imported {
        store,
        outcome,
        dry_run,
    })
}

/// An import's notes as a dry run lists them: each row's, the call's, and the samples skipped.
fn dry_notes(summary: &Summary) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &summary.imported {
        out.extend(r.notes.iter().map(|n| format!("{}: {n}", r.schedule_id)));
    }
    out.extend(summary.notes.iter().cloned());
    if let Some(skipped) = &summary.skipped {
        out.extend(
            skipped
                .already_in_ledger
                .iter()
                .map(|s| format!("skipped {s}")),
        );
        out.extend(
            (skipped.undeclared.iter())
                .map(|s| format!("skipped {s}: undeclared (--skip-undeclared)")),
        );
    }
    out
}

/// Import `sources` into `store`: read every record (`progress(read, total)` after each),
/// read what they need of the repository, build the change against the store's current state
/// and write it through [`store::apply`] (with `dry_run`, [`store::rehearse`]), then summarise
/// it. All or nothing: a refusal writes nothing.
pub fn import(
    store: &mut dyn Store,
    sources: &[Source],
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Outcome> {
    let max = options.max_input_bytes;
    let runtime = match options.runtime_identity {
        Some(p) => {
            let bytes = crate::json::read_bounded(p, max)?;
            Some(rows::parse_runtime_identity(
                &bytes,
                &p.display().to_string(),
                max,
            )?)
        }
        None => None,
    };
    let loaded = batch::load_with_progress(sources, max, progress)?;
    let git = GitInputs::read(store, sources, &loaded, options)?;
    let ctx = Context {
        harbor_revision: git.harbor_revision.as_deref(),
        repo_root: git.repo_root.as_deref(),
        runtime_identity: runtime.as_ref(),
        pins: git.pins.as_ref(),
        inspect_revisions: Some(&git.revisions),
        skip_undeclared: options.skip_undeclared,
    };
    let mut imported = None;
    let build = |s: &mut dyn Store, imported: &mut Option<_>| {
        let (change, rows) = batch::build(s, &loaded, &ctx)?;
        *imported = Some(rows);
        Ok(change)
    };
    let (change, rehearsal) = if options.dry_run {
        let r = store::rehearse(store, |s| build(s, &mut imported))?;
        (r.change.clone(), Some(r))
    } else {
        let change = store::apply(store, |s| build(s, &mut imported))?;
        (change, None)
    };
    let (imported, skipped) = imported.map(|i| (i.rows, i.skipped)).unwrap_or_default();
    let mut summary = summarise(store, &change, &imported)?;
    if let Some(r) = &rehearsal {
        summary.filled = r.filled;
    }
    for (kind, notes) in [
        (Kind::Inspect, &loaded.inspect_notes),
        (Kind::Harbor, &loaded.harbor_notes),
    ] {
        if sources.iter().any(|s| s.kind() == kind) {
            summary.deferred = Some(summary.scheduled - summary.filled);
            summary.skipped = Some(skipped.clone());
            summary.notes.extend(notes.iter().cloned());
        }
    }
    Ok(Outcome {
        summary,
        rehearsal,
        kept: (loaded, change, imported),
    })
}

/// What an import reads of the repository: its work tree root, the Arena pins, each Inspect
/// revision prefix resolved, Harbor's `--revision` resolved.
struct GitInputs {
    repo_root: Option<PathBuf>,
    pins: Option<GitPins>,
    revisions: HashMap<String, Resolved>,
    harbor_revision: Option<String>,
}

impl GitInputs {
    /// Read them. The repository is needed (its absence an error) for Arena records, for
    /// `--revision` and when `--repo` names it; otherwise it is read when there is one.
    fn read(
        store: &dyn Store,
        sources: &[Source],
        loaded: &Loaded,
        options: &Options,
    ) -> Result<GitInputs> {
        let needs_git =
            options.revision.is_some() || sources.iter().any(|s| s.kind() == Kind::Arena);
        // Only objects are read here (the pinned commit's trees), never a ref: another ref
        // backend is no obstacle (a ref-mode store refused it when it was opened).
        let repo = match crate::git::open_any_ref_storage(options.repo) {
            Ok(r) => Some(r),
            Err(e) if needs_git || options.repo.is_some() => return Err(e),
            Err(_) => None,
        };
        let repo_root = repo
            .as_ref()
            .and_then(|r| r.workdir())
            .map(|p| p.to_path_buf());
        let pins = match (&repo, needs_git) {
            (Some(repo), true) => Some(arena_pins(repo, store, loaded)?),
            _ => None,
        };
        // Each clean Inspect revision prefix, resolved once among the local repository's
        // commits.
        let revisions = (loaded.inspect.iter())
            .flat_map(|(_, l)| super::inspect::revision_prefixes(std::slice::from_ref(l)))
            .map(|p| {
                let r = super::inspect::resolve_prefix(repo.as_ref(), &p);
                (p, r)
            })
            .collect();
        let harbor_revision = match (options.revision, &repo) {
            (Some(rev), Some(repo)) => Some(
                crate::git::resolve_commit(repo, rev)
                    .map_err(|e| e.context(format!("--revision {rev}")))?
                    .to_string(),
            ),
            _ => None,
        };
        Ok(GitInputs {
            repo_root,
            pins,
            revisions,
            harbor_revision,
        })
    }
}

/// The pins at the declaration's `source_revision` the Arena records' tasks need (runner
/// tools definition hash, oracle digests), read once.
fn arena_pins(repo: &gix::Repository, store: &dyn Store, loaded: &Loaded) -> Result<GitPins> {
    let decl = store.declaration();
    let tasks = loaded
        .requests
        .iter()
        .filter_map(|r| decl.task_of(&r.schedule_id))
        .filter(|t| t.kind == Kind::Arena);
    GitPins::read(repo, decl, tasks).map_err(|e| {
        e.context(format!(
            "declaration {} (source_revision, read for the Arena records)",
            decl.id
        ))
    })
}

/// What was written, row by row (the rows as written: the change holds the same rows, in
/// schedule order), classified for the output; the filled count after the write.
fn summarise(store: &mut dyn Store, change: &Change, imported: &[Converted]) -> Result<Summary> {
    let decl = store.declaration();
    let mut out = Vec::with_capacity(imported.len());
    let mut any_scenario = false;
    let written: foldhash::HashMap<&str, &crate::ledger::Row> = change
        .rows
        .iter()
        .map(|w| (w.row.schedule_id(), &w.row))
        .collect();
    for c in imported {
        let row = written.get(c.row.schedule_id()).copied().unwrap_or(&c.row);
        any_scenario |= c.key.starts_with("scenario:");
        out.push(imported_row(decl, row, c));
    }
    let mut notes = Vec::new();
    if any_scenario {
        notes.push(SCENARIO_DEFINITION_NOTE.to_owned());
    }
    let (filled, scheduled) = (store.filled()?, store.declaration().schedule_len());
    Ok(Summary {
        imported: out,
        filled,
        scheduled,
        deferred: None,
        skipped: None,
        notes,
    })
}

/// One row as the output shows it: its portfolio outcome, gaps, deviations and overruns;
/// an Inspect or Harbor row's reason and option deviations too.
fn imported_row(
    decl: &crate::declaration::Declaration,
    row: &crate::ledger::Row,
    c: &Converted,
) -> ImportedRow {
    let inspect = c.key.starts_with("inspect:") || c.key.starts_with("harbor:");
    let cl = crate::portfolio::classify(decl, row);
    let over_limits = cl
        .limits
        .iter()
        .filter(|(_, s)| **s == crate::portfolio::LimitState::Over)
        .map(|(n, _)| format!("over limit {n}"))
        .collect();
    ImportedRow {
        schedule_id: row.schedule_id().to_owned(),
        native_outcome: row.native_outcome().to_owned(),
        native_status: row.native_status().map(str::to_owned),
        outcome: cl.outcome.key(),
        label: cl.outcome.label(),
        gaps: cl.gaps,
        deviations: cl.deviations,
        over_limits,
        source: c.source.clone(),
        record: c.key.clone(),
        notes: c.notes.clone(),
        reason: inspect.then(|| row.reason().map(str::to_owned)).flatten(),
        option_deviations: inspect.then(|| row.option_deviations().map(str::to_owned).collect()),
    }
}
