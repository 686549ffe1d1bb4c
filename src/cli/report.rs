//! `git-ledger report`: classify every attempt of a ledger and say whether each section's
//! comparison is blocked.

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
    /// Print the report as one JSON object (stable keys, see the README).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub input: InputOpts,
}

pub fn run(args: ReportArgs, io: &mut Io) -> Result<i32> {
    let (Some(decl_path), Some(ledger_path)) = (&args.declaration, &args.ledger) else {
        return Err(Error::Usage("report needs <DECLARATION> <LEDGER>".into()));
    };
    let decl = Declaration::read(decl_path, args.input.max_input_bytes)?;
    let ledger = Ledger::read(&decl, ledger_path, args.input.max_input_bytes)?;
    let report = report::build(&decl, &ledger);
    if args.json {
        report::write_json(&report, io.out)?;
    } else {
        report::write_text(&report, io.out)?;
    }
    Ok(0)
}
