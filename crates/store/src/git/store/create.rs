//! `init` as one operation: the declaration read, the repository opened (its ledgers put on
//! branches first for a hosted forge, [`use_branch_prefix`]) and the ledger ref created with
//! its root commit ([`super::init`]).

use std::path::Path;

use gix::ObjectId;

use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::git::layout::{LedgerRefs, DEFAULT_PREFIX, FORGE_PREFIX, KEY_PREFIX};

/// The ledger `init` created.
#[derive(Debug)]
pub struct Initialized {
    /// The ledger ref and its root commit.
    pub name: String,
    pub commit: ObjectId,
    /// The declaration's id and how many attempts it schedules.
    pub id: String,
    pub scheduled: usize,
}

/// `git ledger init`: read the declaration at `declaration` (inputs bounded by `max_bytes`),
/// open the repository at `repo` (default: discovered), put its ledgers on branches when
/// `on_branches` (`--forge`), and create the ledger ref with its root commit.
pub fn init_at(
    repo: Option<&Path>,
    declaration: &Path,
    max_bytes: u64,
    on_branches: bool,
) -> Result<Initialized> {
    let decl = Declaration::read(declaration, max_bytes)?;
    let mut repo = crate::git::open(repo)?;
    if on_branches {
        repo = use_branch_prefix(repo)?;
    }
    let (name, commit) = super::init(&repo, &decl)?;
    Ok(Initialized {
        name,
        commit,
        id: decl.id.clone(),
        scheduled: decl.schedule_len(),
    })
}

/// Put `repo`'s ledgers on branches: `git config ledger.refPrefix refs/heads/ledgers/`, then
/// the repository reopened (its configuration read anew). Refused when it has ledgers under
/// another prefix (a repository never mixes them) or another prefix is configured.
pub fn use_branch_prefix(repo: gix::Repository) -> Result<gix::Repository> {
    let refs = LedgerRefs::checked(&repo)?;
    if refs.prefix() == FORGE_PREFIX {
        return Ok(repo);
    }
    let existing = super::ledger_refs(&repo)?;
    if !existing.is_empty() || refs.prefix() != DEFAULT_PREFIX {
        let names: Vec<String> = existing.into_iter().map(|(n, _)| n).collect();
        return Err(Error::refused_with_hint(
            format!(
                "this repository keeps its ledgers under {} (git config {KEY_PREFIX}){}; --forge would put new ones under {FORGE_PREFIX}, and a repository never mixes the two",
                refs.prefix(),
                if names.is_empty() { String::new() } else { format!(": {}", names.join(", ")) }
            ),
            "start the forge's ledgers in a new repository, or move these (the same commits under a new name; docs/forges.md, \"Moving ledgers to the branch prefix\"): for each <id>, `git update-ref refs/heads/ledgers/<id> refs/ledgers/<id>` and `git -c core.hooksPath=/dev/null update-ref -d refs/ledgers/<id>` (the hooks refuse any deletion of a ledger ref), then `git config ledger.refPrefix refs/heads/ledgers/` and `git ledger verify`",
        ));
    }
    let dir = repo.workdir().unwrap_or(repo.git_dir()).to_owned();
    let out = crate::git::transport::git(&dir, &["config", KEY_PREFIX, FORGE_PREFIX])?;
    if !out.ok {
        return Err(Error::failed(format!(
            "git config {KEY_PREFIX} {FORGE_PREFIX} failed:\n{}",
            out.stderr.trim_end()
        )));
    }
    crate::git::open(Some(&dir))
}
