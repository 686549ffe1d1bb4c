//! `git-ledger show`: the ledger document of a ledger commit, byte-identical to the file-mode
//! ledger of the same state (or one row, or the declaration's exact bytes).

use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::error::Result;

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

/// Kept here for the commands that resolve `--at` and `--ref` as `show` does.
pub use crate::git::read::ledger_commit;

pub fn run(args: ShowArgs, io: &mut Io) -> Result<i32> {
    let repo = crate::git::open(args.repo.as_deref())?;
    let commit = ledger_commit(&repo, args.at.as_deref(), args.ledger_ref.as_deref())
        .map_err(|e| super::name_a_ledger(e, None, |id| format!("git ledger show --ref {id}")))?;
    let max = args.input.max_input_bytes;
    let name = match &args.ledger_ref {
        Some(r) => Some(crate::git::store::resolve_ref(&repo, Some(r))?.0),
        None => None,
    };
    let refused = crate::git::read::admitted_state(
        &repo,
        commit,
        name.as_deref(),
        max,
        args.unverified,
        "show",
    )?;
    if let Some(first) = refused.as_ref().and_then(|r| r.first()) {
        writeln!(
            io.err,
            "NOT ADMITTED: verify refuses this ledger state ({first}); it is shown only because --unverified was given"
        )?;
    }
    if args.declaration {
        io.out
            .write_all(&crate::git::read::declaration_bytes_at(&repo, commit, max)?)?;
        return Ok(0);
    }
    if let Some(id) = &args.row {
        io.out
            .write_all(&crate::git::read::row_at(&repo, commit, id, max)?)?;
        return Ok(0);
    }
    // A row at a time: every row checked first, then written (nothing for a refused state).
    crate::git::store::write_ledger_at(&repo, commit, max, false, io.out)?;
    Ok(0)
}
