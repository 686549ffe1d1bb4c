//! `git-ledger report`: classify every attempt of a ledger and say whether each section's
//! comparison is blocked. File mode reads `<DECLARATION> <LEDGER>`; ref mode (`--at REV`, or
//! no paths) reads the ledger commit directly, the same document `show` prints.

use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::ledger::Ledger;
use crate::report;

/// Classify every attempt; portfolio per section (live and fixture never pooled); blocked or not.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The pinned declaration (file mode).
    pub declaration: Option<PathBuf>,
    /// The ledger document (file mode).
    pub ledger: Option<PathBuf>,
    /// Report on this ledger commit (ref mode; default the ledger ref's tip).
    #[arg(long, value_name = "REV", conflicts_with_all = ["declaration", "ledger"])]
    pub at: Option<String>,
    /// The ledger ref (ref mode): a full ref name or a declaration id; default the only one.
    #[arg(long = "ref", value_name = "REF", conflicts_with_all = ["declaration", "ledger"])]
    pub ledger_ref: Option<String>,
    /// The repository (default: discovered from the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Print the report as one JSON object (stable keys, see the README).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub input: InputOpts,
}

pub fn run(args: ReportArgs, io: &mut Io) -> Result<i32> {
    let max = args.input.max_input_bytes;
    let report = match (&args.declaration, &args.ledger) {
        (Some(decl_path), Some(ledger_path)) => {
            let decl = Declaration::read(decl_path, max)?;
            let ledger = Ledger::read(&decl, ledger_path, max)?;
            report::build(&decl, &ledger)
        }
        (Some(_), None) => return Err(Error::Usage(
            "report needs <DECLARATION> <LEDGER> (file mode), or --at REV / --ref REF (ref mode)"
                .into(),
        )),
        _ => {
            let repo = crate::git::open(args.repo.as_deref())?;
            let commit =
                super::show::ledger_commit(&repo, args.at.as_deref(), args.ledger_ref.as_deref())?;
            let (known, ledger) = crate::git::store::ledger_at(&repo, commit, max)?;
            report::build(&known.decl, &ledger)
        }
    };
    if args.json {
        report::write_json(&report, io.out)?;
    } else {
        report::write_text(&report, io.out)?;
    }
    Ok(0)
}
