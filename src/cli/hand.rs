//! `git-ledger put` and `git-ledger repair`: rows written by hand ([`crate::write::put`],
//! [`crate::write::repair`]); this parses, calls one and prints what it wrote.

use std::path::PathBuf;

use super::{InputOpts, Io, LedgerTarget};
use crate::error::Result;
use crate::store::Store;
use crate::write::Written;

/// Write one hand-written row into a DEFERRED slot (e.g. an INTERRUPTED_UNGRADED attempt).
#[derive(Debug, clap::Args)]
pub struct PutArgs {
    /// The schedule id of the slot.
    pub schedule_id: String,
    /// The row file: every declared field, its schedule_id equal to ID, native_record null.
    pub row: PathBuf,
    #[command(flatten)]
    pub target: LedgerTarget,
    /// Check everything the write would do and print it (the row, its outcome, gaps, the
    /// commit message), writing nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the dry run as JSON (with --dry-run).
    #[arg(long, requires = "dry_run")]
    pub json: bool,
    #[command(flatten)]
    pub input: InputOpts,
}

/// Append one repair intervention to a filled row: the only change a filled row admits.
#[derive(Debug, clap::Args)]
pub struct RepairArgs {
    /// The schedule id of the filled row.
    pub schedule_id: String,
    /// What the person fixed.
    #[arg(long)]
    pub note: String,
    #[command(flatten)]
    pub target: LedgerTarget,
    /// Check everything the write would do and print it (the row, its outcome, gaps, the
    /// commit message), writing nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the dry run as JSON (with --dry-run).
    #[arg(long, requires = "dry_run")]
    pub json: bool,
    #[command(flatten)]
    pub input: InputOpts,
}

pub fn put(args: PutArgs, io: &mut Io) -> Result<i32> {
    let written = crate::write::put(
        &args.target.to_target(),
        &args.schedule_id,
        &args.row,
        args.input.max_input_bytes,
        args.dry_run,
    )
    .map_err(|e| args.target.name_a_ledger(e, "put"))?;
    print(written, args.json, io)
}

pub fn repair(args: RepairArgs, io: &mut Io) -> Result<i32> {
    let written = crate::write::repair(
        &args.target.to_target(),
        &args.schedule_id,
        &args.note,
        args.input.max_input_bytes,
        args.dry_run,
    )
    .map_err(|e| args.target.name_a_ledger(e, "repair"))?;
    print(written, args.json, io)
}

/// The rows written and where (ref and new tip, or nothing for a file), or the dry run.
fn print((store, written): (Box<dyn Store>, Written), json: bool, io: &mut Io) -> Result<i32> {
    match written {
        Written::Rehearsed(dry) => super::dry_run::print(&dry, json, false, io)?,
        Written::Applied(applied) => {
            super::print_change(&applied.rows, io)?;
            if let Some(at) = store.location() {
                writeln!(io.out, "{at}")?;
            }
        }
    }
    Ok(0)
}
