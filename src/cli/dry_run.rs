//! `--dry-run` of `import`, `put` and `repair`: what the write would be (each row's schedule id,
//! native and portfolio outcome, the gaps that keep a PASS from a verified delivery, the commit
//! message), printed as text or JSON; the checks are the real command's ([`crate::store::rehearse`]).

use serde::Serialize;

use super::Io;
use crate::error::Result;
use crate::portfolio::LimitState;
use crate::store::{ChangeKind, Rehearsal, Store};

/// One row the write would change.
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

/// What `--dry-run --json` prints.
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
        file: Option<&std::path::Path>,
        r: &Rehearsal,
    ) -> DryRun {
        let decl = store.declaration();
        let rows = r
            .change
            .rows
            .iter()
            .map(|w| {
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
                    repair: r.change.kind == ChangeKind::Repair,
                }
            })
            .collect();
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

    /// Print the dry run: JSON, or (text) the rows unless `rows_shown` (the command printed them
    /// its own way already), then what would be written.
    pub fn print(&self, json: bool, rows_shown: bool, io: &mut Io) -> Result<()> {
        if json {
            io.out.write_all(&crate::json::canonical(self))?;
            return Ok(());
        }
        if !rows_shown {
            for r in &self.rows {
                let status = r
                    .native_status
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                write!(
                    io.out,
                    "{}  {}{}  {}",
                    r.schedule_id,
                    r.native_outcome,
                    status,
                    r.label.to_lowercase()
                )?;
                if !r.gaps.is_empty() {
                    write!(io.out, "  [{}]", r.gaps.join("; "))?;
                } else if !r.deviations.is_empty() {
                    write!(io.out, "  [{}]", r.deviations.join("; "))?;
                }
                if r.repair {
                    write!(io.out, "  + repair")?;
                }
                writeln!(io.out)?;
            }
            for n in &self.notes {
                writeln!(io.out, "note: {n}")?;
            }
        }
        match (&self.message, self.rows.is_empty()) {
            (_, true) => writeln!(io.out, "dry run: nothing to write on {}", self.ledger)?,
            (Some(m), false) => {
                writeln!(
                    io.out,
                    "dry run: nothing written; admitted on {}; after the commit {}/{} rows would be filled; its message:",
                    self.ledger, self.filled, self.scheduled
                )?;
                for line in m.lines() {
                    if line.is_empty() {
                        writeln!(io.out)?;
                    } else {
                        writeln!(io.out, "    {line}")?;
                    }
                }
            }
            (None, false) => writeln!(
                io.out,
                "dry run: nothing written; admitted on {}; after the write {}/{} rows would be filled",
                self.ledger, self.filled, self.scheduled
            )?,
        }
        Ok(())
    }
}
