//! `git-ledger put` and `git-ledger repair`: rows written by hand.

use std::path::PathBuf;

use super::dry_run::DryRun;
use super::{InputOpts, Io, LedgerTarget};
use crate::error::Result;
use crate::store;

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
    if args.dry_run {
        crate::git::write_no_derived_data();
    }
    let mut store = super::open_store(&args.target, &args.input, "put")?;
    let bytes = crate::json::read_bounded(&args.row, args.input.max_input_bytes)?;
    let source = args.row.display().to_string();
    let build = |s: &mut (dyn store::Store + 'static)| {
        crate::hand::put(
            s,
            &args.schedule_id,
            &bytes,
            &source,
            args.input.max_input_bytes,
        )
    };
    if args.dry_run {
        let r = store::rehearse(&mut *store, build)?;
        let dry = DryRun::new("put", &*store, args.target.ledger.as_deref(), &r);
        dry.print(args.json, false, io)?;
        return Ok(0);
    }
    let change = store::apply(&mut *store, build)?;
    super::print_change(&*store, &change, io)?;
    if let Some(at) = store.location() {
        writeln!(io.out, "{at}")?;
    }
    Ok(0)
}

pub fn repair(args: RepairArgs, io: &mut Io) -> Result<i32> {
    if args.dry_run {
        crate::git::write_no_derived_data();
    }
    let mut store = super::open_store(&args.target, &args.input, "repair")?;
    let build = |s: &mut (dyn store::Store + 'static)| {
        crate::hand::repair(s, &args.schedule_id, &args.note)
    };
    if args.dry_run {
        let r = store::rehearse(&mut *store, build)?;
        let dry = DryRun::new("repair", &*store, args.target.ledger.as_deref(), &r);
        dry.print(args.json, false, io)?;
        return Ok(0);
    }
    let change = store::apply(&mut *store, build)?;
    super::print_change(&*store, &change, io)?;
    if let Some(at) = store.location() {
        writeln!(io.out, "{at}")?;
    }
    Ok(0)
}
