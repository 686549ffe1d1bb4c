//! `git-ledger put` and `git-ledger repair`: rows written by hand.

use std::path::PathBuf;

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
    #[command(flatten)]
    pub input: InputOpts,
}

pub fn put(args: PutArgs, io: &mut Io) -> Result<i32> {
    let mut store = super::open_store(&args.target, &args.input, "put")?;
    let bytes = crate::json::read_bounded(&args.row, args.input.max_input_bytes)?;
    let source = args.row.display().to_string();
    let change = store::apply(&mut *store, |s| {
        crate::hand::put(
            s,
            &args.schedule_id,
            &bytes,
            &source,
            args.input.max_input_bytes,
        )
    })?;
    super::print_change(&*store, &change, io)?;
    if let Some(at) = store.location() {
        writeln!(io.out, "{at}")?;
    }
    Ok(0)
}

pub fn repair(args: RepairArgs, io: &mut Io) -> Result<i32> {
    let mut store = super::open_store(&args.target, &args.input, "repair")?;
    let change = store::apply(&mut *store, |s| {
        crate::hand::repair(s, &args.schedule_id, &args.note)
    })?;
    super::print_change(&*store, &change, io)?;
    if let Some(at) = store.location() {
        writeln!(io.out, "{at}")?;
    }
    Ok(0)
}
