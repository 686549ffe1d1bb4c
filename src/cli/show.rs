//! `git-ledger show`: the ledger document of a ledger commit, byte-identical to the file-mode
//! ledger of the same state (or one row, or the declaration's exact bytes).

use std::path::PathBuf;

use super::{InputOpts, Io};
use crate::error::{Error, Result};
use crate::git::ObjectId;

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
    #[command(flatten)]
    pub input: InputOpts,
}

/// The commit `--at REV` names, or the tip of the ledger ref `--ref` names (default the only
/// one). A bare declaration id is accepted for REV too (`refs/ledgers/<id>`).
pub fn ledger_commit(
    repo: &gix::Repository,
    at: Option<&str>,
    ledger_ref: Option<&str>,
) -> Result<ObjectId> {
    match at {
        Some(rev) => match crate::git::resolve_commit(repo, rev) {
            Ok(id) => Ok(id),
            Err(e) => {
                let (base, rest) = rev.split_at(rev.find(['~', '^']).unwrap_or(rev.len()));
                let name = crate::git::layout::ref_name(base);
                match crate::git::store::ref_target(repo, &name) {
                    Ok(Some(_)) => crate::git::resolve_commit(repo, &format!("{name}{rest}")),
                    _ => Err(e),
                }
            }
        },
        None => Ok(crate::git::store::resolve_ref(repo, ledger_ref)?.1),
    }
}

pub fn run(args: ShowArgs, io: &mut Io) -> Result<i32> {
    let repo = crate::git::open(args.repo.as_deref())?;
    let commit = ledger_commit(&repo, args.at.as_deref(), args.ledger_ref.as_deref())
        .map_err(|e| super::name_a_ledger(e, None, |id| format!("git ledger show --ref {id}")))?;
    let max = args.input.max_input_bytes;
    let info = crate::git::objects::read_commit(&repo, commit)?;
    let at = format!("commit {commit}");
    // What a reviewer reads: the declaration from its blob, never from the cache.
    let mut admission = crate::git::admit::Admission::new(&repo, max).without_cache();
    if args.declaration {
        let known = crate::git::store::declaration_at(&mut admission, &repo, info.tree, &at)?;
        let what = format!("{at}: {}", crate::git::layout::CAMPAIGN);
        let bytes = crate::git::objects::read_blob_bounded_id(&repo, known.blob, max, &what)?;
        io.out.write_all(&bytes)?;
        return Ok(0);
    }
    if let Some(id) = &args.row {
        let known = crate::git::store::declaration_at(&mut admission, &repo, info.tree, &at)?;
        let decl = &known.decl;
        if decl.schedule_position(id).is_none() {
            return Err(Error::refused(format!(
                "{id} is not scheduled by declaration {}",
                decl.id
            )));
        }
        let path = crate::git::layout::row_path(id);
        let Some((mode, blob)) = crate::git::objects::find_in_tree(&repo, info.tree, &path)? else {
            return Err(Error::refused(format!(
                "{at}: row {id} is missing ({path})"
            )));
        };
        // Never print a symlink's target text or read a submodule's commit as the row.
        if !crate::git::objects::is_regular(mode) {
            return Err(Error::refused(format!(
                "{at}: row {id}: {path} has mode {}; every entry is a regular file (100644)",
                crate::git::objects::describe_mode(mode)
            )));
        }
        let row =
            crate::git::admit::read_row(&repo, decl, blob, id, max, &at).map_err(Error::refusal)?;
        io.out.write_all(&row.canonical(decl))?;
        return Ok(0);
    }
    let (known, ledger) = crate::git::store::ledger_at(&repo, commit, max, false)?;
    io.out.write_all(&ledger.canonical(&known.decl))?;
    Ok(0)
}
