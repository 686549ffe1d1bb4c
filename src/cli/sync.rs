//! `git-ledger sync [REMOTE] [--setup]`: share ledgers through a Git remote.

use std::path::PathBuf;

use super::Io;
use crate::error::{exit, Error, Result};

/// Fetch, fast-forward or replay, and push every ledger (refs/ledgers/*, or under git config
/// ledger.refPrefix) with a remote.
#[derive(Debug, clap::Args)]
pub struct SyncArgs {
    /// The remote (default: origin).
    #[arg(value_name = "REMOTE", default_value = "origin")]
    pub remote: String,
    /// Only add the fetch refspec refs/ledgers/*:refs/remotes/<REMOTE>/ledgers/* (not forced;
    /// with ledger.refPrefix refs/heads/ledgers/: refs/heads/ledgers/*:refs/ledger-remotes/<REMOTE>/*)
    /// so that a plain `git fetch` carries ledgers too; adds no push refspec.
    #[arg(long)]
    pub setup: bool,
    /// Push back a ledger the remote deleted (by default sync reports the deletion and pushes
    /// nothing of that ledger).
    #[arg(long)]
    pub restore: bool,
    /// Sync only this ledger (a full ref name or a declaration id; default every ledger), as
    /// with every other command; it need not exist here yet (a ledger only the remote serves is
    /// fetched).
    #[arg(long = "ref", value_name = "REF")]
    pub ledger_ref: Option<String>,
    /// The repository (default: discovered from the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub input: super::InputOpts,
}

pub fn run(args: SyncArgs, io: &mut Io) -> Result<i32> {
    let repo = crate::git::open(args.repo.as_deref())?;
    let dir = crate::git::transport::repo_dir(&repo)?;
    let only = match args.ledger_ref.as_deref() {
        Some(r) => Some(crate::sync::only_ledger(&repo, r)?),
        None => None,
    };
    if args.setup {
        if only.is_some() {
            return Err(Error::Usage(
                "sync --setup adds the refspec of every ledger; it takes no --ref".into(),
            ));
        }
        return setup(&dir, &args.remote, io);
    }
    drop(repo);
    let mut bar: Option<super::term::Progress> = None;
    let options = crate::sync::Options {
        max_bytes: args.input.max_input_bytes,
        restore: args.restore,
        only,
    };
    let outcome =
        crate::sync::sync_with_progress(&dir, &args.remote, options, &mut |done, total| {
            bar.get_or_insert_with(|| super::term::Progress::new("syncing ledgers", total as u64))
                .set(done as u64)
        });
    drop(bar);
    let outcome = outcome?;
    // What was synced is said even when something else was refused (a ledger whose
    // conflicting attempts were kept aside was still synced).
    for s in &outcome.synced {
        writeln!(io.out, "{}: {} ({})", s.refname, s.what, s.tip)?;
    }
    match outcome.error {
        Some(e) => {
            // What was synced comes first, as `git pull` says what it updated before it stops.
            io.out.flush()?;
            Err(e)
        }
        None => Ok(exit::OK),
    }
}

/// Add the ledger fetch refspec to `remote.<REMOTE>.fetch` once, and say so.
fn setup(dir: &std::path::Path, remote: &str, io: &mut Io) -> Result<i32> {
    let setup = crate::sync::setup(dir, remote)?;
    let (key, spec) = (&setup.key, &setup.spec);
    if !setup.added {
        writeln!(io.out, "{key} already has {spec}")?;
        return Ok(exit::OK);
    }
    writeln!(
        io.out,
        "added {key} {spec}: `git fetch {remote}` now brings ledgers (never forced); push them with `git ledger sync`"
    )?;
    Ok(exit::OK)
}
