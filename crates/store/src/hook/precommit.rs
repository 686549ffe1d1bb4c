//! `pre-commit` for teams that keep a ledger file on a branch: every changed file that *is* a
//! ledger file, in `HEAD` or staged, is judged against its version in `HEAD`.
//!
//! - A ledger file is a regular file that parses as strict JSON (the parser `report` uses)
//!   into an object whose `format` is `"campaign-ledger/1"` — decided by parsing, never by
//!   searching bytes or names, so a format spelled with JSON escapes is a ledger file like any
//!   other, and so is a ledger file named `ledger.txt`.
//! - The declaration of a ledger file: the file `git config ledger.declaration` names (relative
//!   to the top of the work tree; the version in the tree being judged, else the file on disk),
//!   else `campaign.json` in the ledger file's own directory. `HEAD`'s version of a ledger file
//!   is judged with `HEAD`'s declaration, the staged one with the staged declaration.
//! - A file that was not a ledger file in `HEAD` and is one staged (a new ledger) must pass
//!   every check of `Ledger::parse` (the report's checks).
//! - A file that was a ledger file in `HEAD` must stay one: removing it, or staging a version
//!   that no longer parses as a ledger file (another format, broken JSON, over the input bound),
//!   is refused — a ledger only grows. The staged version must pass `Ledger::parse`, and:
//!   - same declaration (the ledgers' `declaration.sha256` agree): the rows that differ from
//!     `HEAD`'s are a change [`crate::admission::admit`] must admit (DEFERRED → attempt, or a
//!     filled row gaining appended repairs; one record, one row, against `HEAD`'s rows too);
//!   - another declaration: a changed declaration makes a different ledger. It may replace
//!     `HEAD`'s only when `HEAD`'s holds no filled row (nothing recorded is lost); otherwise it
//!     is refused (keep the old ledger and its declaration, start the new one at another path);
//!   - `HEAD`'s version is a ledger file that is not a valid ledger of `HEAD`'s declaration
//!     (committed with `--no-verify`, or its declaration is gone): the staged version cannot be
//!     compared row by row, so it is admitted only when it holds no filled row.
//! - A commit that changes a declaration re-judges every ledger file that follows it, changed
//!   or not: changing `campaign.json` under a ledger with filled rows is refused.
//! - `git commit --no-verify` skips the hook, as for any hook.

use std::collections::{BTreeMap, BTreeSet};

use gix::bstr::{BString, ByteSlice};
use gix::ObjectId;

use crate::admission::{self, LedgerChange, RowsState};
use crate::declaration::Declaration;
use crate::error::Reasons;
use crate::error::{Error, Result};
use crate::git::objects::{read_blob_bounded_id, read_commit};
use crate::ledger::{Ledger, FORMAT};
use crate::refusal::Reason;

/// Regular files of one side (HEAD's tree or the staged index), by raw path.
type Files = BTreeMap<BString, ObjectId>;

/// The staged ledger files checked, or the refusal with every reason.
pub fn pre_commit(repo: &gix::Repository, max_bytes: u64) -> Result<Vec<String>> {
    verdict(repo, max_bytes)?.map_err(Error::Refused)
}

/// [`pre_commit`]'s verdict before it becomes an [`Error`]: the staged ledger files checked, or
/// every reason as a value. `Err` when the repository cannot be read.
pub fn verdict(
    repo: &gix::Repository,
    max_bytes: u64,
) -> Result<std::result::Result<Vec<String>, crate::error::Reasons>> {
    let index = open_index(repo)?;
    let staged = regular_entries(&index);
    let before: Files = match repo.head_id() {
        Ok(id) => {
            let tree = read_commit(repo, id.detach())?.tree;
            let head_index = repo
                .index_from_tree(&tree)
                .map_err(|e| Error::failed(format!("cannot read HEAD's tree {tree}: {e}")))?;
            regular_entries(&head_index)
        }
        Err(_) => Files::new(), // unborn branch: every staged ledger file is new
    };
    let configured = repo
        .config_snapshot()
        .string("ledger.declaration")
        .map(|v| BString::from(v.to_vec()));
    let workdir = repo.workdir().map(|w| w.to_path_buf()).unwrap_or_default();
    let sides = Sides {
        repo,
        head: &before,
        staged: &staged,
        configured: configured.as_ref(),
        workdir: &workdir,
        max_bytes,
    };

    // Every path whose file changed, plus every path whose declaration changed.
    let mut judge: BTreeSet<&BString> = BTreeSet::new();
    for (path, id) in &staged {
        if before.get(path) != Some(id) {
            judge.insert(path);
        }
    }
    judge.extend(before.keys().filter(|p| !staged.contains_key(*p)));
    let changed_decl = |p: &BString| -> bool {
        sides
            .decl_path(p)
            .is_some_and(|d| before.get(&d) != staged.get(&d))
    };
    for path in staged.keys().chain(before.keys()) {
        if !judge.contains(path) && changed_decl(path) {
            judge.insert(path);
        }
    }

    let mut reasons = crate::error::Reasons::new();
    let mut checked = Vec::new();
    for path in judge {
        let shown = crate::git::show_path(path);
        let old = sides.classify(before.get(path), &shown)?;
        let new = sides.classify(staged.get(path), &shown)?;
        match judge_file(&sides, path, &shown, old, new) {
            Ok(Ok(true)) => checked.push(shown),
            Ok(Ok(false)) => {}
            Ok(Err(r)) => reasons.absorb(r),
            Err(Error::Refused(r)) => reasons.absorb(r),
            Err(e) => return Err(e),
        }
    }
    Ok(if reasons.is_empty() {
        Ok(checked)
    } else {
        Err(reasons)
    })
}

/// What one version of a path is.
enum Version {
    /// No regular file at the path.
    Absent,
    /// A file that is not a ledger file (not JSON, not an object, another format).
    Other,
    /// A file over the input bound: it cannot be shown to be a ledger file, nor read as one.
    TooLarge(crate::error::Reasons),
    /// A ledger file's bytes.
    Ledger(Vec<u8>),
}

/// Judge one path: `Ok(true)` when the staged version is a ledger file that passed, `Ok(false)`
/// when neither version is a ledger file; a staged ledger file that follows HEAD's is reduced
/// to a [`LedgerChange`] of the rows that differ and decided by [`admission::admit`] (a ledger
/// file holds no record files: a filled row's record is its `native_record` key).
fn judge_file(
    sides: &Sides,
    path: &BString,
    shown: &str,
    old: Version,
    new: Version,
) -> Result<std::result::Result<bool, Reasons>> {
    const OVERRIDE: &str = "a ledger only grows (commit with --no-verify to override)";
    let refused = |r: Reason| Ok(Err(Reasons::one(r)));
    let old_bytes = match old {
        Version::Ledger(b) => Some(b),
        _ => None,
    };
    let new_bytes = match new {
        Version::Ledger(b) => b,
        Version::Absent if old_bytes.is_some() => {
            return refused(
                Reason::new(format!(
                    "the ledger file is removed; {OVERRIDE}"
                ))
                .at(shown)
            )
        }
        Version::Other if old_bytes.is_some() => {
            return refused(
                Reason::new(format!(
                    "HEAD's version is a ledger file ({FORMAT}) and the staged one no longer is; {OVERRIDE}"
                ))
                .at(shown)
            )
        }
        Version::TooLarge(why) if old_bytes.is_some() => {
            // This reason, then the staged file's own reasons and hints, each kept as it is.
            let mut r = Reasons::one(
                Reason::new(
                    "HEAD's version is a ledger file and the staged one cannot be read as one",
                )
                .at(shown),
            );
            r.absorb(why);
            return Ok(Err(r));
        }
        _ => return Ok(Ok(false)),
    };
    let decl = sides.declaration(sides.staged, path, shown)?;
    // Every check of the report but one record per row, which the change decides against
    // HEAD's ledger; a ledger file that follows no ledger of HEAD is checked whole.
    let new = match Ledger::parse_for_change(&decl, &new_bytes, sides.max_bytes) {
        Ok(l) => l,
        Err(r) => return Ok(Err(r.at(shown))),
    };
    let whole = || {
        Ledger::parse(&decl, &new_bytes, sides.max_bytes)
            .map(|_| true)
            .map_err(|e| e.context(shown))
    };
    let Some(old_bytes) = old_bytes else {
        return whole().map(Ok); // a new ledger file
    };
    let at = format!("{shown} (against HEAD)");
    let old = sides
        .declaration(sides.head, path, shown)
        .and_then(|d| Ledger::parse(&d, &old_bytes, sides.max_bytes).map(|l| (d, l)));
    let old = match old {
        Ok((_, old)) if old.declaration_sha256 != new.declaration_sha256 => {
            if old.filled() == 0 {
                return whole().map(Ok); // nothing recorded is lost: a new ledger
            }
            return refused(
                Reason::new(format!(
                    "the declaration changed (HEAD's ledger follows {} {}, the staged one {} {}) and HEAD's ledger holds {} filled row{}: a changed declaration makes a different ledger, and the rows recorded would be lost; keep the old ledger and its declaration, and start the new one at another path",
                    old.declaration_id,
                    old.declaration_sha256,
                    new.declaration_id,
                    new.declaration_sha256,
                    old.filled(),
                    if old.filled() == 1 { "" } else { "s" }
                ))
                .at(&at)
            );
        }
        Ok((_, old)) => old,
        Err(e) => {
            if new.filled() == 0 {
                return whole().map(Ok);
            }
            // This reason, then every reason HEAD's version is not a valid ledger, each kept
            // as a value at HEAD's version.
            let mut r = Reasons::one(
                Reason::new(
                    "HEAD's version is a ledger file but not a valid ledger of HEAD's declaration, so the staged rows cannot be checked against it; only a ledger without filled rows may follow it (commit with --no-verify to override)"
                )
                .at(&at)
            );
            r.absorb(e.into_reasons().at(format!("{shown} (HEAD)")));
            return Ok(Err(r));
        }
    };
    if old.rows.len() != new.rows.len() {
        return refused(
            Reason::new(format!(
                "{} rows, HEAD's version has {}",
                new.rows.len(),
                old.rows.len()
            ))
            .at(&at),
        );
    }
    let change = LedgerChange::between(&decl, &old, &new);
    Ok(
        match admission::admit(&decl, &change, &mut RowsState(&old.rows))? {
            Ok(_) => Ok(true),
            Err(r) => Err(crate::error::Error::from(r).into_reasons().at(&at)),
        },
    )
}

/// Both sides of the commit being made, and where declarations are found.
struct Sides<'a> {
    repo: &'a gix::Repository,
    head: &'a Files,
    staged: &'a Files,
    configured: Option<&'a BString>,
    workdir: &'a std::path::Path,
    max_bytes: u64,
}

impl Sides<'_> {
    /// The tree path of a ledger file's declaration (`None`: the configured one, when it lies
    /// outside the repository's tracked files, is only on disk — still a path).
    fn decl_path(&self, ledger_path: &BString) -> Option<BString> {
        if let Some(p) = self.configured {
            return Some(p.clone());
        }
        let beside = match ledger_path.rfind_byte(b'/') {
            Some(i) => {
                let mut d = BString::from(&ledger_path[..=i]);
                d.extend_from_slice(b"campaign.json");
                d
            }
            None => BString::from("campaign.json"),
        };
        // A declaration is never its own ledger.
        (beside != *ledger_path).then_some(beside)
    }

    /// Read and classify one version of a path.
    fn classify(&self, id: Option<&ObjectId>, shown: &str) -> Result<Version> {
        let Some(id) = id else {
            return Ok(Version::Absent);
        };
        let bytes = match read_blob_bounded_id(self.repo, *id, self.max_bytes, shown) {
            Ok(b) => b,
            Err(Error::Refused(r)) => return Ok(Version::TooLarge(r)),
            Err(e) => return Err(e),
        };
        Ok(if is_ledger_file(&bytes) {
            Version::Ledger(bytes)
        } else {
            Version::Other
        })
    }

    /// The declaration a ledger file follows on one side (see the module documentation).
    fn declaration(&self, side: &Files, ledger_path: &BString, shown: &str) -> Result<Declaration> {
        let Some(p) = self.decl_path(ledger_path) else {
            return Err(Error::refused(
                Reason::new(
                    "a ledger file named campaign.json needs `git config ledger.declaration <path>`"
                )
                .at(shown)
            ));
        };
        let p_shown = crate::git::show_path(&p);
        let (what, bytes) = match (side.get(&p), self.configured) {
            (Some(id), c) => {
                let what = match c {
                    Some(_) => format!("{p_shown} (git config ledger.declaration)"),
                    None => p_shown.clone(),
                };
                (what, read_blob_bounded_id(self.repo, *id, self.max_bytes, &p_shown)?)
            }
            (None, Some(_)) => {
                let path = self.workdir.join(p.to_str_lossy().as_ref());
                let bytes = crate::json::read_bounded(&path, self.max_bytes)?;
                (format!("{p_shown} (git config ledger.declaration)"), bytes)
            }
            (None, None) => {
                return Err(Error::refused(
                    Reason::new(format!(
                        "no declaration to check it against: stage {p_shown} beside it, or name one with `git config ledger.declaration <path>`"
                    ))
                    .at(shown)
                ))
            }
        };
        Declaration::parse(&bytes, self.max_bytes).map_err(|e| e.context(&what))
    }
}

/// Whether bytes are a ledger file: strict JSON (what `report` parses) whose top level is an
/// object with `"format": "campaign-ledger/1"` (compared after parsing, so escapes count).
pub fn is_ledger_file(bytes: &[u8]) -> bool {
    matches!(
        crate::json::parse_strict(bytes),
        Ok(serde_json::Value::Object(top))
            if top.get("format").and_then(|f| f.as_str()) == Some(FORMAT)
    )
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

/// Every stage-0 regular file of an index (any name: a ledger file is known by its content), by
/// raw path.
fn regular_entries(index: &gix::index::File) -> Files {
    use gix::index::entry::{Mode, Stage};
    index
        .entries()
        .iter()
        .filter(|e| {
            e.stage() == Stage::Unconflicted
                && (e.mode == Mode::FILE || e.mode == Mode::FILE_EXECUTABLE)
        })
        .map(|e| (BString::from(e.path(index).to_vec()), e.id))
        .collect()
}
