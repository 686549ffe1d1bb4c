//! `git-ledger init <DECLARATION> [--forge github|gitlab]`: create the ledger ref
//! (`<ledger.refPrefix><id>`) with the root commit; `--forge` first puts the repository's
//! ledgers on branches (`refs/heads/ledgers/`) and prints the protections to switch on.

use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::declaration::Declaration;
use crate::error::Result;

/// Create the ledger ref (<ledger.refPrefix><id>, default refs/ledgers/<id>): a root commit
/// holding the declaration, the ledger header and every template row (all DEFERRED). Refused
/// when the ref exists.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The pinned declaration.
    pub declaration: PathBuf,
    /// The repository (default: discovered from the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// For a hosted forge that runs no hook: keep ledgers on branches (git config
    /// ledger.refPrefix refs/heads/ledgers/) and print the protections to switch on.
    #[arg(long, value_enum, value_name = "FORGE")]
    pub forge: Option<super::forge::Forge>,
    #[command(flatten)]
    pub input: InputOpts,
}

pub fn run(args: InitArgs, io: &mut Io) -> Result<i32> {
    let decl = Declaration::read(&args.declaration, args.input.max_input_bytes)?;
    let mut repo = crate::git::open(args.repo.as_deref())?;
    if args.forge.is_some() {
        repo = super::forge::use_branch_prefix(repo)?;
    }
    let (name, commit) = crate::git::store::init(&repo, &decl)?;
    writeln!(
        io.out,
        "{name} {commit} (declare {}: {} scheduled attempts)",
        decl.id,
        decl.schedule_len()
    )?;
    if let Some(forge) = args.forge {
        writeln!(io.out, "{}", forge.protections())?;
    }
    Ok(0)
}
