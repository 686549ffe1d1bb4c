//! `git-ledger init <DECLARATION>`: create `refs/ledgers/<id>` with the root commit.

use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::declaration::Declaration;
use crate::error::Result;

/// Create refs/ledgers/<id>: a root commit holding the declaration, the ledger header and every
/// template row (all DEFERRED). Refused when the ref exists.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The pinned declaration.
    pub declaration: PathBuf,
    /// The repository (default: discovered from the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputOpts,
}

pub fn run(args: InitArgs, io: &mut Io) -> Result<i32> {
    let decl = Declaration::read(&args.declaration, args.input.max_input_bytes)?;
    let repo = crate::git::open(args.repo.as_deref())?;
    let (name, commit) = crate::git::store::init(&repo, &decl)?;
    writeln!(
        io.out,
        "{name} {commit} (declare {}: {} scheduled attempts)",
        decl.id,
        decl.schedule_len()
    )?;
    Ok(0)
}
