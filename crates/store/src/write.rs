//! The hand-writing commands as operations: where a writing command works ([`Target`]: file
//! mode with `<DECLARATION> <LEDGER>`, else ref mode on a ledger ref, [`open`]), `put` and
//! `repair` written or rehearsed ([`put`], [`repair`]), and what a rehearsal (`--dry-run`)
//! would write, as the value `--dry-run --json` prints ([`DryRun`]). `import` calls the same
//! [`open`] and [`DryRun`] (`import::call::import_into`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::portfolio::LimitState;
use crate::store::{self, Change, ChangeKind, Rehearsal, Store};

/// Where a writing command works: file mode with `declaration` and `ledger`, else ref mode on
/// the ledger ref `ledger_ref` names (default: the only one) in the repository at `repo`.
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub declaration: Option<PathBuf>,
    pub ledger: Option<PathBuf>,
    pub ledger_ref: Option<String>,
    pub repo: Option<PathBuf>,
}

/// Open the ledger `cmd` works on (see [`Target`]). Several ledger refs and none named is
/// `Error::SeveralLedgers`, for the caller to finish with the line to type.
pub fn open(target: &Target, max_input_bytes: u64, cmd: &str) -> Result<Box<dyn Store>> {
    match (&target.declaration, &target.ledger) {
        (Some(d), Some(l)) => {
            if target.ledger_ref.is_some() {
                return Err(Error::Usage(format!(
                    "{cmd}: --ref is for ref mode; give either <DECLARATION> <LEDGER> or --ref"
                )));
            }
            Ok(Box::new(store::file::FileStore::open(
                d,
                l,
                max_input_bytes,
            )?))
        }
        (Some(_), None) => Err(Error::Usage(format!(
            "{cmd} needs both <DECLARATION> and <LEDGER> for file mode (or neither, for ref mode on a ledger ref): `git ledger {cmd} … <DECLARATION> <LEDGER>`"
        ))),
        _ => Ok(Box::new(crate::git::store::RefStore::open(
            target.repo.as_deref(),
            target.ledger_ref.as_deref(),
            max_input_bytes,
        )?)),
    }
}

/// What a write did: the change written, or (`--dry-run`) what it would write.
pub enum Written {
    Applied(Applied),
    Rehearsed(DryRun),
}

/// A change written: the change, and each of its rows classified as the dry run classifies
/// it (what the caller prints of each row; the classification is the portfolio's, not the
/// printer's).
pub struct Applied {
    pub change: Change,
    pub rows: Vec<DryRow>,
}

/// `git ledger put`: write the row file at `row` into the DEFERRED slot `schedule_id` of the
/// ledger `target` names ([`crate::hand::put`]), or rehearse it (`dry_run`: nothing written,
/// no derived data either). Returns the store, for what the caller prints of it.
pub fn put(
    target: &Target,
    schedule_id: &str,
    row: &Path,
    max_input_bytes: u64,
    dry_run: bool,
) -> Result<(Box<dyn Store>, Written)> {
    if dry_run {
        crate::git::decl_cache::write_no_derived_data();
    }
    let mut store = open(target, max_input_bytes, "put")?;
    let bytes = crate::json::read_bounded(row, max_input_bytes)?;
    let source = row.display().to_string();
    let build = |s: &mut (dyn Store + 'static)| {
        crate::hand::put(s, schedule_id, &bytes, &source, max_input_bytes)
    };
    let written = write("put", &mut store, target, dry_run, build)?;
    Ok((store, written))
}

/// `git ledger repair`: append the repair `note` to the filled row `schedule_id`
/// ([`crate::hand::repair`]), or rehearse it (`dry_run`).
pub fn repair(
    target: &Target,
    schedule_id: &str,
    note: &str,
    max_input_bytes: u64,
    dry_run: bool,
) -> Result<(Box<dyn Store>, Written)> {
    if dry_run {
        crate::git::decl_cache::write_no_derived_data();
    }
    let mut store = open(target, max_input_bytes, "repair")?;
    let build = |s: &mut (dyn Store + 'static)| crate::hand::repair(s, schedule_id, note);
    let written = write("repair", &mut store, target, dry_run, build)?;
    Ok((store, written))
}

/// Apply `build`'s change, or rehearse it.
fn write(
    command: &'static str,
    store: &mut Box<dyn Store>,
    target: &Target,
    dry_run: bool,
    build: impl FnMut(&mut (dyn Store + 'static)) -> Result<Change>,
) -> Result<Written> {
    if dry_run {
        let r = store::rehearse(&mut **store, build)?;
        return Ok(Written::Rehearsed(DryRun::new(
            command,
            &**store,
            target.ledger.as_deref(),
            &r,
        )));
    }
    let change = store::apply(&mut **store, build)?;
    let rows = DryRow::of_change(store.declaration(), &change);
    Ok(Written::Applied(Applied { change, rows }))
}

/// One row the write would change (or, [`Applied`], changed).
#[derive(Debug, Clone, Serialize)]
pub struct DryRow {
    pub schedule_id: String,
    pub native_outcome: String,
    pub native_status: Option<String>,
    /// The portfolio outcome key and label.
    pub outcome: &'static str,
    pub label: &'static str,
    /// For a PASS without complete evidence: every gap.
    pub gaps: Vec<String>,
    /// Revision, runtime, (live) profile and option deviations.
    pub deviations: Vec<String>,
    /// Declared limits the attempt went over.
    pub over_limits: Vec<String>,
    /// Where the row comes from (a record path or the row file); empty for a repair.
    pub source: String,
    /// Whether the change appends a repair to the row (repair) rather than filling it.
    pub repair: bool,
}

impl DryRow {
    /// Each row of `change`, classified by the portfolio under `decl`, in the change's order.
    pub fn of_change(decl: &crate::declaration::Declaration, change: &Change) -> Vec<DryRow> {
        let rows = change.rows.iter();
        rows.map(|w| {
            let c = crate::portfolio::classify(decl, &w.row);
            DryRow {
                schedule_id: w.row.schedule_id().to_owned(),
                native_outcome: w.row.native_outcome().to_owned(),
                native_status: w.row.native_status().map(str::to_owned),
                outcome: c.outcome.key(),
                label: c.outcome.label(),
                gaps: c.gaps,
                deviations: c.deviations,
                over_limits: c
                    .limits
                    .iter()
                    .filter(|(_, s)| **s == LimitState::Over)
                    .map(|(n, _)| format!("over limit {n}"))
                    .collect(),
                source: w.source.clone(),
                repair: change.kind == ChangeKind::Repair,
            }
        })
        .collect()
    }
}

/// What `--dry-run --json` prints (`docs/schemas/dry-run.schema.json`).
#[derive(Debug, Clone, Serialize)]
pub struct DryRun {
    pub dry_run: bool,
    /// `import`, `put` or `repair`.
    pub command: &'static str,
    /// The state checked against: the ledger ref and its tip (ref mode), or the ledger file.
    pub ledger: String,
    /// The rows the write would change, in schedule order.
    pub rows: Vec<DryRow>,
    /// Rows that would hold an attempt after the write, and rows scheduled.
    pub filled: usize,
    pub scheduled: usize,
    /// The commit message the write would carry (ref mode); null for a file.
    pub message: Option<String>,
    /// Notes the real command would print (an import's notes, rows skipped).
    pub notes: Vec<String>,
}

impl DryRun {
    /// The dry run of `command` from what the rehearsal found; `file` is the ledger file in file
    /// mode (a ref-mode store names its own ref and tip).
    pub fn new(
        command: &'static str,
        store: &dyn Store,
        file: Option<&Path>,
        r: &Rehearsal,
    ) -> DryRun {
        let decl = store.declaration();
        let rows = DryRow::of_change(decl, &r.change);
        let ledger = match (file, store.location()) {
            (Some(f), _) => f.display().to_string(),
            (None, Some(at)) => at,
            (None, None) => String::new(),
        };
        DryRun {
            dry_run: true,
            command,
            ledger,
            rows,
            filled: r.filled,
            scheduled: decl.schedule_len(),
            message: r.message.clone(),
            notes: Vec::new(),
        }
    }
}
