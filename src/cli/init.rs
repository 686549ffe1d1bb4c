//! `git-ledger init <DECLARATION> [--forge github|gitlab]`: create the ledger ref
//! (`<ledger.refPrefix><id>`) with the root commit; `--forge` first puts the repository's
//! ledgers on branches (`refs/heads/ledgers/`) and prints the protections to switch on.

use std::path::PathBuf;

use super::{InputOpts, Io};
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
    let forge = args.forge.map(crate::hook::forge::Forge::from);
    let init = crate::git::store::init_at(
        args.repo.as_deref(),
        &args.declaration,
        args.input.max_input_bytes,
        forge.is_some(),
    )?;
    writeln!(
        io.out,
        "{} {} (declare {}: {} scheduled attempts)",
        init.name, init.commit, init.id, init.scheduled
    )?;
    if let Some(forge) = forge {
        writeln!(io.out, "{}", forge.protections())?;
    }
    Ok(0)
}
