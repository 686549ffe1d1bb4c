//! `pre-commit` for teams that keep a ledger file on a branch: every staged `*.json` file whose
//! JSON says `"format": "campaign-ledger/1"` is checked against its version in `HEAD`.
//!
//! - The declaration: the file `git config ledger.declaration` names (relative to the top of
//!   the work tree; its staged version first, else the file on disk), else `campaign.json` in
//!   the ledger file's own directory (staged version).
//! - A new ledger file must pass every check of `Ledger::parse` (the report's checks).
//! - A changed one must pass them too, and each row that differs from `HEAD`'s row must be an
//!   admitted transition ([`crate::admission::row_transition`]: DEFERRED → attempt, or a filled
//!   row gaining appended repairs). When `HEAD`'s version is not a ledger of the same
//!   declaration, the file is treated as new.
//! - Removing a ledger file is refused (a ledger only grows); `git commit --no-verify` skips
//!   the hook, as for any hook.

use std::collections::BTreeMap;

use gix::ObjectId;

use crate::admission::row_transition;
use crate::declaration::Declaration;
use crate::error::{Error, Result};
use crate::git::objects::{read_blob_bounded_id, read_commit};
use crate::ledger::{Ledger, FORMAT};

/// The staged ledger files checked, or the refusal with every reason.
pub fn pre_commit(repo: &gix::Repository, max_bytes: u64) -> Result<Vec<String>> {
    let index = open_index(repo)?;
    let head_tree = match repo.head_id() {
        Ok(id) => Some(read_commit(repo, id.detach())?.tree),
        Err(_) => None, // unborn branch: every staged ledger file is new
    };
    let staged: BTreeMap<String, ObjectId> = json_entries(&index);
    let before: BTreeMap<String, ObjectId> = match head_tree {
        Some(tree) => {
            let head_index = repo
                .index_from_tree(&tree)
                .map_err(|e| Error::failed(format!("cannot read HEAD's tree {tree}: {e}")))?;
            json_entries(&head_index)
        }
        None => BTreeMap::new(),
    };
    let mut reasons = Vec::new();
    let mut checked = Vec::new();
    for (path, id) in &staged {
        let old = before.get(path);
        if old == Some(id) {
            continue; // unchanged
        }
        let Some(bytes) = ledger_bytes(repo, *id, max_bytes, path, &mut reasons)? else {
            continue;
        };
        let old_bytes = match old {
            Some(o) => ledger_bytes(repo, *o, max_bytes, path, &mut Vec::new())?,
            None => None,
        };
        match check_file(repo, &index, path, &bytes, old_bytes.as_deref(), max_bytes) {
            Ok(()) => checked.push(path.clone()),
            Err(Error::Refused(r)) => reasons.extend(r),
            Err(e) => return Err(e),
        }
    }
    for (path, id) in &before {
        if staged.contains_key(path) {
            continue;
        }
        if ledger_bytes(repo, *id, max_bytes, path, &mut Vec::new())?.is_some() {
            reasons.push(format!(
                "{path}: the ledger file is removed; a ledger only grows (commit with --no-verify to override)"
            ));
        }
    }
    if reasons.is_empty() {
        Ok(checked)
    } else {
        Err(Error::Refused(reasons))
    }
}

/// The index Git is committing: `GIT_INDEX_FILE` when set (`git commit -a`, `git commit
/// <path>` use a temporary one), else the repository's.
fn open_index(repo: &gix::Repository) -> Result<gix::index::File> {
    let fail = |e: &dyn std::fmt::Display| Error::failed(format!("cannot read the index: {e}"));
    match std::env::var_os("GIT_INDEX_FILE").filter(|v| !v.is_empty()) {
        Some(path) => {
            let path = std::path::PathBuf::from(path);
            let path = if path.is_absolute() {
                path
            } else {
                std::env::current_dir()?.join(path)
            };
            gix::index::File::at(path, repo.object_hash(), false, Default::default())
                .map_err(|e| fail(&e))
        }
        None => repo.open_index().map_err(|e| fail(&e)),
    }
}

/// Every stage-0 regular `*.json` entry of an index, by path.
fn json_entries(index: &gix::index::File) -> BTreeMap<String, ObjectId> {
    index
        .entries()
        .iter()
        .filter(|e| {
            use gix::index::entry::{Mode, Stage};
            e.stage() == Stage::Unconflicted
                && (e.mode == Mode::FILE || e.mode == Mode::FILE_EXECUTABLE)
        })
        .filter_map(|e| {
            let path = e.path(index);
            path.ends_with(b".json")
                .then(|| (crate::git::show_path(path), e.id))
        })
        .collect()
}

/// The blob's bytes when it is a ledger file (its JSON says `"format": "campaign-ledger/1"`);
/// `None` for any other JSON file. A ledger file over the bound is a refusal.
fn ledger_bytes(
    repo: &gix::Repository,
    id: ObjectId,
    max_bytes: u64,
    path: &str,
    reasons: &mut Vec<String>,
) -> Result<Option<Vec<u8>>> {
    let bytes = match read_blob_bounded_id(repo, id, max_bytes, path) {
        Ok(b) => b,
        Err(Error::Refused(r)) => {
            // Too large to read: only a refusal if it claims to be a ledger, which cannot be
            // known without reading it; large JSON files are not ledgers in practice.
            let _ = r;
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    // Cheap filter before parsing: the format string must appear.
    if !contains(&bytes, FORMAT.as_bytes()) {
        return Ok(None);
    }
    match crate::json::parse_strict(&bytes) {
        Ok(v) if v.get("format").and_then(|f| f.as_str()) == Some(FORMAT) => Ok(Some(bytes)),
        Ok(_) => Ok(None),
        Err(e) => {
            // Says it is a ledger but is not JSON: refuse rather than let it through.
            reasons.push(format!("{path}: not valid JSON: {e}"));
            Ok(None)
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Check one staged ledger file against its `HEAD` version.
fn check_file(
    repo: &gix::Repository,
    index: &gix::index::File,
    path: &str,
    bytes: &[u8],
    old: Option<&[u8]>,
    max_bytes: u64,
) -> Result<()> {
    let decl = declaration_for(repo, index, path, max_bytes)?;
    let new = Ledger::parse(&decl, bytes, max_bytes).map_err(|e| e.context(path))?;
    let Some(old) = old.and_then(|b| Ledger::parse(&decl, b, max_bytes).ok()) else {
        return Ok(()); // new (or HEAD's version is not a ledger of this declaration)
    };
    let at = format!("{path} (against HEAD)");
    let mut reasons = Vec::new();
    for (before, after) in old.rows.iter().zip(&new.rows) {
        if before == after {
            continue;
        }
        if let Err(r) = row_transition(&decl, before, after, &at) {
            reasons.extend(r);
        }
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(Error::Refused(reasons))
    }
}

/// The declaration a ledger file follows (see the module documentation).
fn declaration_for(
    repo: &gix::Repository,
    index: &gix::index::File,
    ledger_path: &str,
    max_bytes: u64,
) -> Result<Declaration> {
    let staged = |p: &str| -> Result<Option<Vec<u8>>> {
        match index.entry_by_path(p.into()) {
            Some(e) => Ok(Some(read_blob_bounded_id(repo, e.id, max_bytes, p)?)),
            None => Ok(None),
        }
    };
    let configured = repo
        .config_snapshot()
        .string("ledger.declaration")
        .map(|v| v.to_string());
    let (what, bytes) = match configured {
        Some(p) => {
            let bytes = match staged(&p)? {
                Some(b) => b,
                None => {
                    let base = repo.workdir().map(|w| w.to_path_buf()).unwrap_or_default();
                    crate::json::read_bounded(&base.join(&p), max_bytes)?
                }
            };
            (format!("{p} (git config ledger.declaration)"), bytes)
        }
        None => {
            let dir = ledger_path.rsplit_once('/').map(|(d, _)| d);
            let beside = match dir {
                Some(d) => format!("{d}/campaign.json"),
                None => "campaign.json".to_owned(),
            };
            match staged(&beside)? {
                Some(b) => (beside, b),
                None => {
                    return Err(Error::refused(format!(
                        "{ledger_path}: no declaration to check it against: stage {beside} beside it, or name one with `git config ledger.declaration <path>`"
                    )))
                }
            }
        }
    };
    Declaration::parse(&bytes, max_bytes).map_err(|e| e.context(&what))
}
