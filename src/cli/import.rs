//! `git-ledger import`: fill DEFERRED rows from native harness records.

use clap::{Arg, ArgAction, ArgMatches, FromArgMatches};
use serde::Serialize;
use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::error::{Error, Result};
use crate::import::batch::{self, Source};
use crate::import::rows::{self, Context, GitPins, SCENARIO_DEFINITION_NOTE};
use crate::store;

/// Fill DEFERRED rows from native records: scenario runs (`result.json` or its evidence
/// directory), Arena attempts (a store directory holding `results.sqlite3`, and an attempt
/// id), Inspect AI logs (`.eval`, `.json`, or a directory of them) and Harbor jobs (a job
/// directory or a trial directory). A scenario or Arena record names the schedule id it
/// fills; an Inspect sample fills the row its declared task and epoch fix; a Harbor trial the
/// lowest DEFERRED repetition of the task that declares its Harbor task; nothing is matched by
/// guessing. All or nothing: any refusal leaves the ledger
/// unchanged (exit 2).
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    #[command(flatten)]
    pub target: super::LedgerTarget,
    #[command(flatten)]
    pub records: Records,
    /// The evaluator's admission record (pinned runtime keys and `dependencies`), added to
    /// every row this call imports.
    #[arg(long, value_name = "FILE")]
    pub runtime_identity: Option<PathBuf>,
    /// Skip (and list) Inspect samples and Harbor trials that no declared task names, instead
    /// of refusing them.
    #[arg(long)]
    pub skip_undeclared: bool,
    /// The commit the Harbor trials ran from (Harbor records none): the evaluator's statement,
    /// written as every Harbor row's source_revision (without it: null, with a note).
    #[arg(long, value_name = "REV")]
    pub revision: Option<String>,
    /// Check everything the import would write and print it (rows, outcomes, gaps, the commit
    /// message), writing nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub input: InputOpts,
}

/// The records, in the order given on the command line (`--scenario` and `--arena` mixed).
#[derive(Debug, Clone, Default)]
pub struct Records(pub Vec<Source>);

impl clap::Args for Records {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(
            Arg::new("scenario")
                .long("scenario")
                .num_args(2)
                .value_names(["ID", "PATH"])
                .action(ArgAction::Append)
                .value_parser(clap::value_parser!(String))
                .help("Fill schedule id ID from a scenario run's result.json or evidence directory (repeatable)"),
        )
        .arg(
            Arg::new("arena")
                .long("arena")
                .num_args(3)
                .value_names(["ID", "STORE", "ATTEMPT"])
                .action(ArgAction::Append)
                .value_parser(clap::value_parser!(String))
                .help("Fill schedule id ID from attempt ATTEMPT of the Arena store directory STORE (repeatable)"),
        )
        .arg(
            Arg::new("inspect")
                .long("inspect")
                .num_args(1..)
                .value_name("LOG.eval|LOG.json|DIR")
                .action(ArgAction::Append)
                .value_parser(clap::value_parser!(String))
                .help("Fill the rows the declaration fixes for each sample of these Inspect logs (a directory: every .eval and .json log directly in it, in name order; repeatable)"),
        )
        .arg(
            Arg::new("harbor")
                .long("harbor")
                .num_args(1..)
                .value_name("JOB-DIR|TRIAL-DIR")
                .action(ArgAction::Append)
                .value_parser(clap::value_parser!(String))
                .help("Fill a row of the declared task for each trial of these Harbor job directories (every trial directory in it, in name order) or trial directories (repeatable)"),
        )
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for Records {
    fn from_arg_matches(m: &ArgMatches) -> std::result::Result<Self, clap::Error> {
        let mut out: Vec<(usize, Source)> = Vec::new();
        if let (Some(values), Some(indices)) =
            (m.get_many::<String>("harbor"), m.indices_of("harbor"))
        {
            for (v, i) in values.zip(indices) {
                out.push((
                    i,
                    Source::Harbor {
                        path: PathBuf::from(v),
                    },
                ));
            }
        }
        if let (Some(values), Some(indices)) =
            (m.get_many::<String>("inspect"), m.indices_of("inspect"))
        {
            for (v, i) in values.zip(indices) {
                out.push((
                    i,
                    Source::Inspect {
                        path: PathBuf::from(v),
                    },
                ));
            }
        }
        for name in ["scenario", "arena"] {
            let (Some(occurrences), Some(indices)) = (
                m.get_occurrences::<String>(name),
                m.indices_of(name).map(|i| i.collect::<Vec<_>>()),
            ) else {
                continue;
            };
            let mut at = 0;
            for occ in occurrences {
                let values: Vec<String> = occ.cloned().collect();
                let index = indices.get(at).copied().unwrap_or(usize::MAX);
                at += values.len();
                let source = match (name, values.as_slice()) {
                    ("scenario", [id, path]) => Source::Scenario {
                        schedule_id: id.clone(),
                        path: PathBuf::from(path),
                    },
                    ("arena", [id, store, attempt]) => Source::Arena {
                        schedule_id: id.clone(),
                        store: PathBuf::from(store),
                        attempt: attempt.clone(),
                    },
                    _ => {
                        return Err(clap::Error::raw(
                            clap::error::ErrorKind::WrongNumberOfValues,
                            format!(
                                "--{name} takes {} values\n",
                                if name == "arena" { 3 } else { 2 }
                            ),
                        ))
                    }
                };
                out.push((index, source));
            }
        }
        out.sort_by_key(|(i, _)| *i);
        Ok(Records(out.into_iter().map(|(_, s)| s).collect()))
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> std::result::Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
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
    pub skipped: Option<crate::import::inspect::Skipped>,
    /// Notes about the whole call.
    pub notes: Vec<String>,
}

/// Imports of at most this many records show no progress.
const PROGRESS_FROM: usize = 8;

pub fn run(args: ImportArgs, io: &mut Io) -> Result<i32> {
    let sources = &args.records.0;
    if sources.is_empty() {
        return Err(Error::Usage(
            "import needs at least one record: --scenario <ID> <RUN-DIR|result.json>, --arena <ID> <STORE> <ATTEMPT>, --inspect <LOG.eval|LOG.json|DIR> or --harbor <JOB-DIR|TRIAL-DIR> (repeatable), e.g. `git ledger import --scenario scenario/x/01 runs/<run id>`".into(),
        ));
    }
    if args.dry_run {
        crate::git::write_no_derived_data();
    }
    let mut store = super::open_store(&args.target, &args.input, "import")?;
    let runtime = match &args.runtime_identity {
        Some(p) => {
            let bytes = crate::json::read_bounded(p, args.input.max_input_bytes)?;
            Some(rows::parse_runtime_identity(
                &bytes,
                &p.display().to_string(),
                args.input.max_input_bytes,
            )?)
        }
        None => None,
    };
    let loaded = {
        let mut bar = (sources.len() > PROGRESS_FROM)
            .then(|| super::term::Progress::new("reading records", sources.len() as u64));
        batch::load_with_progress(sources, args.input.max_input_bytes, &mut |done, _| {
            if let Some(b) = bar.as_mut() {
                b.set(done as u64)
            }
        })?
    };
    let needs_git = args.revision.is_some()
        || sources
            .iter()
            .any(|s| s.kind() == crate::declaration::Kind::Arena);
    // Only objects are read here (the pinned commit's trees), never a ref: another ref backend
    // is no obstacle (a ref-mode store refused it when it was opened).
    let repo = match crate::git::open_any_ref_storage(args.target.repo.as_deref()) {
        Ok(r) => Some(r),
        Err(e) if needs_git || args.target.repo.is_some() => return Err(e),
        Err(_) => None,
    };
    let repo_root = repo
        .as_ref()
        .and_then(|r| r.workdir())
        .map(|p| p.to_path_buf());
    let pins = match (&repo, needs_git) {
        (Some(repo), true) => {
            let decl = store.declaration();
            let tasks = loaded
                .requests
                .iter()
                .filter_map(|r| decl.task_of(&r.schedule_id))
                .filter(|t| t.kind == crate::declaration::Kind::Arena);
            Some(GitPins::read(repo, decl, tasks).map_err(|e| {
                e.context(format!(
                    "declaration {} (source_revision, read for the Arena records)",
                    decl.id
                ))
            })?)
        }
        _ => None,
    };
    // Each clean Inspect revision prefix, resolved once among the local repository's commits.
    let revisions: std::collections::HashMap<String, crate::import::inspect::Resolved> = loaded
        .inspect
        .iter()
        .map(|(_, l)| l)
        .collect::<Vec<_>>()
        .iter()
        .flat_map(|l| crate::import::inspect::revision_prefixes(std::slice::from_ref(*l)))
        .map(|p| {
            let r = crate::import::inspect::resolve_prefix(repo.as_ref(), &p);
            (p, r)
        })
        .collect();
    let harbor_revision = match (&args.revision, &repo) {
        (Some(rev), Some(repo)) => Some(
            crate::git::resolve_commit(repo, rev)
                .map_err(|e| e.context(format!("--revision {rev}")))?
                .to_string(),
        ),
        _ => None,
    };
    let ctx = Context {
        harbor_revision: harbor_revision.as_deref(),
        repo_root: repo_root.as_deref(),
        runtime_identity: runtime.as_ref(),
        pins: pins.as_ref(),
        inspect_revisions: Some(&revisions),
        skip_undeclared: args.skip_undeclared,
    };
    let mut imported = None;
    let build = |s: &mut (dyn store::Store + 'static), imported: &mut Option<_>| {
        let (change, rows) = batch::build(s, &loaded, &ctx)?;
        *imported = Some(rows);
        Ok(change)
    };
    let (change, rehearsal) = if args.dry_run {
        let r = store::rehearse(&mut *store, |s| build(s, &mut imported))?;
        (r.change.clone(), Some(r))
    } else {
        let change = store::apply(&mut *store, |s| build(s, &mut imported))?;
        (change, None)
    };
    let (imported, skipped) = imported.map(|i| (i.rows, i.skipped)).unwrap_or_default();
    let mut summary = summarise(&mut *store, &change, &imported)?;
    if let Some(r) = &rehearsal {
        summary.filled = r.filled;
    }
    if sources
        .iter()
        .any(|s| s.kind() == crate::declaration::Kind::Inspect)
    {
        summary.deferred = Some(summary.scheduled - summary.filled);
        summary.skipped = Some(skipped.clone());
        summary.notes.extend(loaded.inspect_notes.iter().cloned());
    }
    if sources
        .iter()
        .any(|s| s.kind() == crate::declaration::Kind::Harbor)
    {
        summary.deferred = Some(summary.scheduled - summary.filled);
        summary.skipped = Some(skipped.clone());
        summary.notes.extend(loaded.harbor_notes.iter().cloned());
    }
    match &rehearsal {
        Some(r) => {
            let mut dry =
                super::dry_run::DryRun::new("import", &*store, args.target.ledger.as_deref(), r);
            dry.notes = dry_notes(&summary);
            if !args.json {
                print(&summary, false, "would import", io)?;
            }
            dry.print(args.json, true, io)?;
        }
        None => print(&summary, args.json, "imported", io)?,
    }
    // The records read, the rows built and the change are plain data that the process's end
    // frees at once; dropping them one allocation at a time cost a tenth of an import of 2,000
    // Inspect samples (`docs/benchmarks.md`). The store is dropped as usual (it holds a
    // repository and files).
    std::mem::forget((loaded, change, imported, summary));
    Ok(0)
}

fn summarise(
    store: &mut dyn store::Store,
    change: &store::Change,
    imported: &[rows::Converted],
) -> Result<Summary> {
    let decl = store.declaration();
    let mut out = Vec::with_capacity(imported.len());
    let mut any_scenario = false;
    // The rows as written (the change holds the same rows, in schedule order).
    let written: std::collections::HashMap<&str, &crate::ledger::Row> = change
        .rows
        .iter()
        .map(|w| (w.row.schedule_id(), &w.row))
        .collect();
    for c in imported {
        let row = written.get(c.row.schedule_id()).copied().unwrap_or(&c.row);
        any_scenario |= c.key.starts_with("scenario:");
        let inspect = c.key.starts_with("inspect:") || c.key.starts_with("harbor:");
        let cl = crate::portfolio::classify(decl, row);
        let over_limits = cl
            .limits
            .iter()
            .filter(|(_, s)| **s == crate::portfolio::LimitState::Over)
            .map(|(n, _)| format!("over limit {n}"))
            .collect();
        out.push(ImportedRow {
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
            option_deviations: inspect
                .then(|| row.option_deviations().map(str::to_owned).collect()),
        });
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

fn print(summary: &Summary, json: bool, verb: &str, io: &mut Io) -> Result<()> {
    if json {
        io.out.write_all(&crate::json::canonical(summary))?;
        return Ok(());
    }
    for r in &summary.imported {
        let status = r
            .native_status
            .as_deref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        writeln!(
            io.out,
            "{}  {}{}  {}",
            r.schedule_id,
            r.native_outcome,
            status,
            r.label.to_lowercase()
        )?;
        writeln!(io.out, "  from {}", r.source)?;
        if let Some(reason) = &r.reason {
            writeln!(io.out, "  reason: {reason}")?;
        }
        if let Some(d) = r.option_deviations.as_ref().filter(|d| !d.is_empty()) {
            writeln!(io.out, "  option deviations: {}", d.join("; "))?;
        }
        if !r.gaps.is_empty() {
            writeln!(io.out, "  gaps: {}", r.gaps.join("; "))?;
        } else {
            if !r.deviations.is_empty() {
                writeln!(io.out, "  deviations: {}", r.deviations.join("; "))?;
            }
            if !r.over_limits.is_empty() {
                writeln!(io.out, "  overruns: {}", r.over_limits.join("; "))?;
            }
        }
        for n in &r.notes {
            writeln!(io.out, "  note: {n}")?;
        }
    }
    writeln!(
        io.out,
        "{verb} {} attempt{} ({}/{} rows filled)",
        summary.imported.len(),
        if summary.imported.len() == 1 { "" } else { "s" },
        summary.filled,
        summary.scheduled
    )?;
    if let Some(skipped) = &summary.skipped {
        // Many of one kind: the first SHOWN_REASONS and a count (--json lists them all).
        let cap = crate::error::SHOWN_REASONS;
        for s in skipped.already_in_ledger.iter().take(cap) {
            writeln!(io.out, "skipped {s}")?;
        }
        if let Some(more) = skipped
            .already_in_ledger
            .len()
            .checked_sub(cap)
            .filter(|n| *n > 0)
        {
            writeln!(
                io.out,
                "… and {more} more skipped, already in the ledger (--json lists every one)"
            )?;
        }
        for s in skipped.undeclared.iter().take(cap) {
            writeln!(io.out, "skipped {s}: undeclared (--skip-undeclared)")?;
        }
        if let Some(more) = skipped.undeclared.len().checked_sub(cap).filter(|n| *n > 0) {
            writeln!(
                io.out,
                "… and {more} more skipped, undeclared (--json lists every one)"
            )?;
        }
    }
    if let Some(n) = summary.deferred {
        writeln!(
            io.out,
            "{n} row{} still DEFERRED (not in any log imported)",
            if n == 1 { "" } else { "s" }
        )?;
    }
    for n in &summary.notes {
        writeln!(io.out, "note: {n}")?;
    }
    Ok(())
}
