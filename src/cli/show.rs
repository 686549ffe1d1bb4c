//! `git-ledger show`: the ledger document of a ledger commit, byte-identical to the file-mode
//! ledger of the same state (or one row, or the declaration's exact bytes), as
//! [`crate::git::read::show_at`] reads it; this parses, calls it and prints (the banner first).

use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::error::Result;
use crate::git::read::Part;

/// Print the ledger document (or one row, or the declaration) of a ledger commit.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The ledger commit (a revision: a ref, a commit id, REF~N …); default the ledger ref's tip.
    #[arg(long, value_name = "REV")]
    pub at: Option<String>,
    /// Print only this row's canonical bytes.
    #[arg(long, value_name = "ID", conflicts_with = "declaration")]
    pub row: Option<String>,
    /// Print the declaration's exact bytes.
    #[arg(long)]
    pub declaration: bool,
    /// The ledger ref (a full ref name or a declaration id); default the only one.
    #[arg(long = "ref", value_name = "REF")]
    pub ledger_ref: Option<String>,
    /// The repository (default: discovered from the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Print a ledger state `verify` refuses, after a banner on stderr saying it is not
    /// admitted and why (stdout stays the document; without it such a state is refused, exit 2).
    #[arg(long)]
    pub unverified: bool,
    #[command(flatten)]
    pub input: InputOpts,
}

pub fn run(args: ShowArgs, io: &mut Io) -> Result<i32> {
    let part = match (&args.row, args.declaration) {
        (_, true) => Part::Declaration,
        (Some(id), false) => Part::Row(id),
        (None, false) => Part::Document,
    };
    let shown = crate::git::read::show_at(
        args.repo.as_deref(),
        args.at.as_deref(),
        args.ledger_ref.as_deref(),
        part,
        args.input.max_input_bytes,
        args.unverified,
    )
    .map_err(|e| super::name_a_ledger(e, None, |id| format!("git ledger show --ref {id}")))?;
    if let Some(first) = shown.refused.as_ref().and_then(|r| r.first()) {
        writeln!(
            io.err,
            "NOT ADMITTED: verify refuses this ledger state ({first}); it is shown only because --unverified was given"
        )?;
    }
    shown.write(io.out)?;
    Ok(0)
}
