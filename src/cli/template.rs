//! `git-ledger template <DECLARATION>`: print the ledger with every row DEFERRED.

use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::declaration::Declaration;
use crate::error::Result;
use crate::ledger::Ledger;

/// Print the ledger with every scheduled attempt DEFERRED ("not attempted").
#[derive(Debug, clap::Args)]
pub struct TemplateArgs {
    /// The pinned declaration (e.g. arena/campaign.json).
    pub declaration: PathBuf,
    #[command(flatten)]
    pub input: InputOpts,
}

pub fn run(args: TemplateArgs, io: &mut Io) -> Result<i32> {
    let decl = Declaration::read(&args.declaration, args.input.max_input_bytes)?;
    io.out
        .write_all(&Ledger::template(&decl).canonical(&decl))?;
    Ok(0)
}
