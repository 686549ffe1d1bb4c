//! What `sync` is told before it runs: `--setup` (the ledger fetch refspec added to a remote's
//! configuration once) and the one ledger `--ref` names.

use std::path::Path;

use crate::error::{Error, Result};
use crate::git::layout::LedgerRefs;
use crate::git::transport::{check_version, git, remote_exists};

/// What [`setup`] did: the configuration key, the refspec, and whether it was added (or was
/// already there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    /// `remote.<REMOTE>.fetch`.
    pub key: String,
    /// The ledger fetch refspec ([`LedgerRefs::fetch_refspec`]).
    pub spec: String,
    /// Whether this call added it.
    pub added: bool,
}

/// Add the ledger fetch refspec to `remote.<REMOTE>.fetch` of the repository `git` runs in at
/// `dir`, once: a remote that does not exist is an error; a refspec already there is kept.
pub fn setup(dir: &Path, remote: &str) -> Result<Setup> {
    check_version(dir)?;
    if !remote_exists(dir, remote)? {
        return Err(Error::failed_with_hint(
            format!("no remote named {remote:?} in this repository"),
            "add one with `git remote add <name> <url>` first",
        ));
    }
    let spec = LedgerRefs::of(&crate::git::open(Some(dir))?)?.fetch_refspec(remote);
    let key = format!("remote.{remote}.fetch");
    let existing = git(dir, &["config", "--get-all", &key])?;
    if existing.stdout.lines().any(|l| l.trim() == spec) {
        return Ok(Setup {
            key,
            spec,
            added: false,
        });
    }
    let out = git(dir, &["config", "--add", &key, &spec])?;
    if !out.ok {
        return Err(Error::failed(format!(
            "git config --add {key} {spec} failed: {}",
            out.stderr.trim_end()
        )));
    }
    Ok(Setup {
        key,
        spec,
        added: true,
    })
}

/// The declaration id of the one ledger a `--ref` argument names (a full ledger ref name or a
/// declaration id), whether or not the ref exists here: sync's `only`. A name whose id is not
/// a declaration id is a usage error.
pub fn only_ledger(repo: &gix::Repository, r: &str) -> Result<String> {
    let refs = LedgerRefs::of(repo)?;
    let name = crate::git::store::ledger_ref_name(&refs, r)?;
    let id = refs.id_of(&name).unwrap_or(&name);
    if !crate::declaration::is_valid_id(id) {
        return Err(Error::Usage(format!(
            "--ref {r}: {id:?} is not a declaration id, so no ledger ref is named {name}"
        )));
    }
    Ok(id.to_owned())
}
