//! The Git hooks (`docs/hooks.md`): admission wherever a ledger ref or ledger file moves.
//!
//! - [`pre_receive`]: on the server, every pushed update of a `refs/ledgers/*` ref goes through
//!   [`crate::git::admit`], reading the pushed objects from Git's quarantine
//!   ([`crate::git::quarantine`]), within [`Bounds`]; it never writes refs. Any other spelling
//!   of `refs/ledgers/` is refused, and so is a `refs/replace/*` ref that would replace a ledger
//!   object ([`crate::git::replace`]).
//! - [`reference_transaction`]: in a clone, the `prepared` state of every ref transaction, so
//!   that `git update-ref`, `git fetch` or a script cannot move a ledger ref either.
//! - [`precommit`]: ledger files kept on a branch.
//! - [`install`]: the shipped scripts (`hooks/*`) into a repository's hooks directory.
//! - [`forge`]: on a hosted forge that runs no hook, the CI job in the hook's place.
//!
//! Each entry point takes parsed input and returns the refusal reasons; the command line prints
//! them on standard error, where Git relays them to a pusher as `remote:` lines.

pub mod forge;
pub mod install;
pub mod precommit;

use std::collections::{BTreeMap, HashSet};

use gix::ObjectId;

use crate::error::{Error, Result};
use crate::git::admit::{Admission, Budget};
use crate::git::layout::{self, LedgerRefs};

/// One line of a hook's standard input: `<old> <new> <ref>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// `None` for the all-zero id (creation, or in reference-transaction "no expectation").
    pub old: Option<ObjectId>,
    /// `None` for the all-zero id (deletion).
    pub new: Option<ObjectId>,
    pub refname: String,
    /// A side was a symbolic value (`ref:<target>`, reference-transaction since Git 2.46).
    pub symbolic: bool,
}

/// Parse a hook's standard input. Blank lines are skipped; any other line that is not
/// `<old> <new> <ref>` with two object ids of the repository's hash is an error (exit 1: Git
/// wrote something this tool does not understand, so it admits nothing).
pub fn parse_updates(input: &str, hash: gix::hash::Kind) -> Result<Vec<Update>> {
    let mut out = Vec::new();
    for (n, line) in input.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: &str| {
            Error::failed(format!(
                "hook input line {}: {why}: {line:?} (expected `<old> <new> <ref>`)",
                n + 1
            ))
        };
        let mut parts = line.splitn(3, ' ');
        let (Some(old), Some(new), Some(refname)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("not three fields"));
        };
        if refname.is_empty() || refname.contains(' ') {
            return Err(bad("bad ref name"));
        }
        let mut symbolic = false;
        let mut side = |v: &str| -> Result<Option<ObjectId>> {
            if v.starts_with("ref:") {
                symbolic = true;
                return Ok(None);
            }
            if v.len() != hash.len_in_hex() {
                return Err(bad("an object id has the wrong length"));
            }
            let id = ObjectId::from_hex(v.as_bytes()).map_err(|_| bad("not an object id"))?;
            Ok((!id.is_null()).then_some(id))
        };
        let old = side(old)?;
        let new = side(new)?;
        out.push(Update {
            old,
            new,
            refname: refname.to_owned(),
            symbolic,
        });
    }
    Ok(out)
}

/// Whether the hooks guard updates of `name`: a ledger ref or a replace ref, in any spelling.
pub fn guards(refs: &LedgerRefs, name: &str) -> bool {
    refs.folds(name) || layout::folds_to_replace_ref(name) || layout::folds_to_notes_ref(name)
}

/// How much work one hook run may do, so that a hostile push cannot exhaust the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Largest blob (declaration, row, record) read: `ledger.maxBlobBytes`.
    pub max_blob_bytes: u64,
    /// Most commits walked per push: `ledger.maxCommitsPerPush`.
    pub max_commits: usize,
    /// Most changed row files read per push: `ledger.maxRowsPerPush`.
    pub max_rows: usize,
}

pub const KEY_BLOB_BYTES: &str = "ledger.maxBlobBytes";
pub const KEY_COMMITS: &str = "ledger.maxCommitsPerPush";
pub const KEY_ROWS: &str = "ledger.maxRowsPerPush";

impl Default for Bounds {
    /// 64 MiB per blob (the tool's own `--max-input-bytes`, so whatever it writes passes),
    /// 10,000 commits and 100,000 changed row files per push.
    fn default() -> Self {
        Bounds {
            max_blob_bytes: crate::json::DEFAULT_MAX_INPUT_BYTES,
            max_commits: 10_000,
            max_rows: 100_000,
        }
    }
}

impl Bounds {
    /// The defaults, overridden by the repository's `git config` (`ledger.maxBlobBytes`,
    /// `ledger.maxCommitsPerPush`, `ledger.maxRowsPerPush`; Git's `k`/`m`/`g` suffixes work).
    pub fn from_config(repo: &gix::Repository) -> Result<Self> {
        let config = repo.config_snapshot();
        let mut b = Bounds::default();
        let get = |key: &str| -> Result<Option<u64>> {
            match config.string(key) {
                None => Ok(None),
                Some(v) => parse_size(&v.to_string()).map(Some).ok_or_else(|| {
                    Error::Usage(format!("git config {key}: {v:?} is not a positive size"))
                }),
            }
        };
        if let Some(v) = get(KEY_BLOB_BYTES)? {
            b.max_blob_bytes = v;
        }
        if let Some(v) = get(KEY_COMMITS)? {
            b.max_commits = usize::try_from(v).unwrap_or(usize::MAX);
        }
        if let Some(v) = get(KEY_ROWS)? {
            b.max_rows = usize::try_from(v).unwrap_or(usize::MAX);
        }
        Ok(b)
    }

    fn budget(&self) -> Budget {
        Budget {
            max_commits: self.max_commits,
            max_rows: self.max_rows,
            commits_key: KEY_COMMITS,
            rows_key: KEY_ROWS,
        }
    }
}

/// A size as `git config` writes one: digits with an optional `k`, `m` or `g` suffix.
fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let (digits, unit) = match v.char_indices().last()? {
        (i, 'k' | 'K') => (&v[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&v[..i], 1 << 20),
        (i, 'g' | 'G') => (&v[..i], 1 << 30),
        _ => (v, 1),
    };
    let n: u64 = digits.parse().ok()?;
    n.checked_mul(unit).filter(|n| *n > 0)
}

/// What a hook admitted: per ledger ref, how many commits it checked.
#[derive(Debug, Default)]
pub struct Verdict {
    pub admitted: Vec<(String, usize)>,
}

/// Check every update of a `refs/ledgers/*` ref and of a `refs/replace/*` ref (others pass).
/// All updates are checked (every reason is reported), sharing one budget; the first refusal is
/// not the only one named. A ledger ref spelled in another case is refused whatever it does.
///
/// Declarations are always parsed from their blobs, never taken from the cache of checked
/// declarations (`git/decl_cache.rs`): an entry is a claim about a blob written into the
/// repository, and a hook's verdict must not depend on a claim it did not check (`verify` does
/// the same).
fn admit_all(repo: &gix::Repository, updates: &[Update], bounds: &Bounds) -> Result<Verdict> {
    let mut admission = Admission::new(repo, bounds.max_blob_bytes)
        .with_budget(bounds.budget())
        .without_cache();
    let mut verdict = Verdict::default();
    let mut reasons = crate::error::Reasons::new();
    let refs = admission.refs()?.clone();
    for u in updates {
        if let Some(why) = refs.misspelled(&u.refname) {
            reasons.push(why);
            continue;
        }
        // A ledger id under both prefixes: the second ref is refused, naming both.
        if let Some(twin) = LedgerRefs::twin(&u.refname) {
            let created = u.old.is_none() && u.new.is_some();
            if created && crate::git::store::ref_target(repo, &twin)?.is_some() {
                let id = (u.refname.strip_prefix(layout::FORGE_PREFIX))
                    .or(u.refname.strip_prefix(layout::DEFAULT_PREFIX))
                    .unwrap_or_default();
                reasons.push(
                    crate::refusal::Reason::new(format!(
                        "{twin} exists, so this would be a second ledger ref of declaration {id:?} under another prefix; a repository keeps its ledgers under one ({}, git config {})",
                        refs.prefix(),
                        layout::KEY_PREFIX
                    ))
                    .at(&u.refname),
                );
                continue;
            }
        }
        if !refs.is_ledger_ref(&u.refname) {
            continue;
        }
        if u.symbolic {
            reasons.push(
                crate::refusal::Reason::new(
                    "a ledger ref points at a commit, never at another ref (symbolic update refused)"
                )
                .at(&u.refname)
            );
            continue;
        }
        match admission.update(&u.refname, u.old, u.new, &mut |_, _| {}) {
            Ok(n) => verdict.admitted.push((u.refname.clone(), n)),
            // Every reason names the ref it is about (admission names it already where the
            // ref itself is the place: a deletion, a rewrite).
            Err(Error::Refused(r)) => reasons.absorb(r.map(|reason| {
                if reason.place.first() == Some(&u.refname) {
                    reason
                } else {
                    reason.at(&u.refname)
                }
            })),
            Err(e) => return Err(e.context(&u.refname)),
        }
    }
    let admitted: Vec<&str> = verdict.admitted.iter().map(|(r, _)| r.as_str()).collect();
    match replace_reasons(repo, updates, &admitted) {
        Ok(r) => reasons.extend(r),
        Err(Error::Refused(r)) => reasons.absorb(r),
        Err(e) => return Err(e),
    }
    reasons.into_result()?;
    Ok(verdict)
}

/// Why the replace refs after `updates` would cover a ledger object (`git/replace.rs`): each
/// created or moved `refs/replace/<id>` (any spelling) whose `<id>` is reachable from a ledger
/// ref as it will be (existing tips, moved by the `admitted` ledger updates), and each admitted
/// ledger update that adds an object an existing replace ref names. With `git config
/// ledger.refuseReplaceRefs true` every created or moved replace ref is refused. Deleting a
/// replace ref always passes, and so does an update to the value it has (`git pack-refs`).
fn replace_reasons(
    repo: &gix::Repository,
    updates: &[Update],
    admitted: &[&str],
) -> Result<Vec<crate::refusal::Reason>> {
    use crate::git::replace;
    let hash = repo.object_hash();
    let mut reasons = Vec::new();
    let pushed: Vec<&Update> = (updates.iter())
        .filter(|u| layout::folds_to_replace_ref(&u.refname))
        .filter(|u| u.symbolic || (u.new.is_some() && u.new != u.old))
        .collect();
    // Notes refs (`git notes`) show their text under a commit's message in `git log`: a note
    // on a ledger object is refused like a replace ref (red-team review of issue 15).
    let notes: Vec<&Update> = (updates.iter())
        .filter(|u| layout::folds_to_notes_ref(&u.refname))
        .filter(|u| !u.symbolic && u.new.is_some() && u.new != u.old)
        .collect();
    let pushed_notes = !notes.is_empty();
    if pushed.is_empty() && !pushed_notes && admitted.is_empty() {
        return Ok(reasons);
    }
    // Replaced object → the replace refs that will name it, and whether this update makes them.
    let mut after: BTreeMap<ObjectId, Vec<(String, bool)>> = BTreeMap::new();
    for (name, id) in replace::existing(repo)? {
        if !updates.iter().any(|u| u.refname == name) {
            after.entry(id).or_default().push((name, false));
        }
    }
    for (name, tip) in replace::notes_refs(repo)? {
        if !updates.iter().any(|u| u.refname == name) {
            for id in replace::noted(repo, tip)? {
                after.entry(id).or_default().push((name.clone(), false));
            }
        }
    }
    for (u, new) in notes.iter().filter_map(|u| Some((u, u.new?))) {
        for id in replace::noted(repo, new)? {
            after.entry(id).or_default().push((u.refname.clone(), true));
        }
    }
    let refuse_all = replace::refuse_all(repo)?;
    for u in pushed {
        if refuse_all {
            reasons.push(
                crate::refusal::Reason::new(format!(
                    "replace refs are refused in this repository (`git config {}` is true)",
                    replace::KEY_REFUSE
                ))
                .at(&u.refname),
            );
        } else if let Some(id) = replace::replaced(&u.refname, hash) {
            after.entry(id).or_default().push((u.refname.clone(), true));
        }
    }
    if after.is_empty() {
        return Ok(reasons);
    }
    let (mut made, mut kept) = (HashSet::new(), HashSet::new());
    for (id, names) in &after {
        if names.iter().any(|(_, here)| *here) {
            made.insert(*id);
        }
        if names.iter().any(|(_, here)| !*here) {
            kept.insert(*id);
        }
    }
    // A replace ref made here: against every object of every ledger as it will be (a rare
    // update, walked whole).
    if !made.is_empty() {
        let mut tips: BTreeMap<String, ObjectId> =
            crate::git::store::ledger_refs(repo)?.into_iter().collect();
        for u in updates {
            if admitted.contains(&u.refname.as_str()) {
                match u.new {
                    Some(new) => tips.insert(u.refname.clone(), new),
                    None => tips.remove(&u.refname),
                };
            }
        }
        let tips = tips.iter().map(|(n, id)| (n.as_str(), *id, None));
        for (id, (ledger, kind)) in replace::covered(repo, tips, &made)? {
            for (name, _) in after[&id].iter().filter(|(_, here)| *here) {
                reasons.push(if layout::folds_to_notes_ref(name) {
                    crate::refusal::Reason::new(format!(
                        "it holds a note on {kind} {id} of {ledger}; `git log` shows a note under the commit's message, so a note would make the ledger's history say what was not admitted"
                    ))
                    .at(name)
                } else {
                    crate::refusal::Reason::new(format!(
                        "it replaces {kind} {id} of {ledger}; a replace ref makes `git log`, `git show` and every mirror clone show another object than the one admitted"
                    ))
                    .at(name)
                });
            }
        }
    }
    // An existing replace ref: against what each admitted ledger update adds (what the ledger
    // held before was checked when the replace ref was made, or is `verify`'s to report).
    if !kept.is_empty() {
        let moved = (updates.iter())
            .filter(|u| admitted.contains(&u.refname.as_str()))
            .filter_map(|u| u.new.map(|new| (u.refname.as_str(), new, u.old)));
        for (id, (ledger, kind)) in replace::covered(repo, moved, &kept)? {
            for (name, _) in after[&id].iter().filter(|(_, here)| !*here) {
                reasons.push(if layout::folds_to_notes_ref(name) {
                    crate::refusal::Reason::new(format!(
                        "{kind} {id} of this ledger has a note in the existing {name}, which `git log` shows under its message; remove it first (`git notes --ref {name} remove {id}`)"
                    ))
                    .at(&ledger)
                } else {
                    crate::refusal::Reason::new(format!(
                        "{kind} {id} of this ledger is replaced by the existing {name}, which makes `git log` and `git show` show another object; delete it first (`git update-ref -d {name}`)"
                    ))
                    .at(&ledger)
                });
            }
        }
    }
    Ok(reasons)
}

/// `pre-receive`: admit every pushed update of a ledger ref. `repo` must see the quarantined
/// objects ([`crate::git::quarantine::open_for_hook`]). Reads only; never writes a ref.
pub fn pre_receive(repo: &gix::Repository, updates: &[Update], bounds: &Bounds) -> Result<Verdict> {
    admit_all(repo, updates, bounds)
}

/// `reference-transaction <state>`: only `prepared` is checked (the refs are locked, nothing
/// has moved yet; refusing aborts the transaction). An all-zero old value may mean "no
/// expectation" (`git update-ref REF NEW`): for a new value the ref's current value is read,
/// and the update is a creation only when the ref does not exist; a deletion without an
/// expectation is refused as a deletion (never taken for `git pack-refs`' prune: see `is_prune`).
pub fn reference_transaction(
    repo: &gix::Repository,
    state: &str,
    updates: &[Update],
    bounds: &Bounds,
) -> Result<Verdict> {
    if state != "prepared" {
        return Ok(Verdict::default());
    }
    let refs = LedgerRefs::of(repo)?;
    let mut resolved = Vec::with_capacity(updates.len());
    for u in updates {
        let mut u = u.clone();
        let covering =
            layout::folds_to_replace_ref(&u.refname) || layout::folds_to_notes_ref(&u.refname);
        if covering && !u.symbolic && u.old.is_none() {
            // `git pack-refs` writes an existing replace ref into `packed-refs` as `0… <id>`:
            // with its current value read, that is no change (see `replace_reasons`).
            if u.new.is_some() {
                u.old = crate::git::store::ref_target(repo, &u.refname).unwrap_or(None);
            }
            resolved.push(u);
            continue;
        }
        if !refs.is_ledger_ref(&u.refname) || u.symbolic {
            resolved.push(u);
            continue;
        }
        match (u.old, u.new) {
            // A deletion with no expectation is never pack-refs' prune (which names the value
            // it prunes): refused as the deletion it is.
            (None, None) => {}
            (Some(old), None) => {
                if is_prune(repo, &u.refname, old)? {
                    continue;
                }
            }
            (None, Some(_)) => u.old = crate::git::store::ref_target(repo, &u.refname)?,
            (Some(_), Some(_)) => {}
        }
        resolved.push(u);
    }
    admit_all(repo, &resolved, bounds)
}

/// Whether the deletion `old → 0` of `name` is `git pack-refs` pruning the loose copy of a ref
/// it has just packed, not a deletion of the ref.
///
/// How Git 2.47's files backend runs the hook: `git pack-refs` first writes the refs into
/// `packed-refs` (a transaction of the packed backend whose lines are `0… <id> <ref>`: the
/// ref's own value, admitted as no change), then deletes each loose copy in a transaction
/// `<id> 0… <ref>` of its own, with the value it prunes, while `packed-refs` holds the same
/// value and the loose file still exists (it is locked, not yet removed). A real deletion of a
/// ref that is in `packed-refs` (`update-ref -d`, with or without the old value, `--stdin`)
/// first runs the packed backend's transaction `0… 0… <ref>`, which is refused here (no
/// expectation), and that aborts the whole deletion; a real deletion of a loose ref that is not
/// packed finds no packed value. So a deletion is a prune exactly when the old value is given,
/// `packed-refs` holds it and the loose file holds it too.
fn is_prune(repo: &gix::Repository, name: &str, old: ObjectId) -> Result<bool> {
    Ok(packed_value(repo, name)? == Some(old) && loose_value(repo, name) == Some(old))
}

/// The value of `name` in `packed-refs`, if it is there.
fn packed_value(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>> {
    let fail = |e: &dyn std::fmt::Display| Error::failed(format!("cannot read packed-refs: {e}"));
    let Some(buffer) = repo.refs.cached_packed_buffer().map_err(|e| fail(&e))? else {
        return Ok(None);
    };
    let found = buffer.try_find(name).map_err(|e| fail(&e))?;
    Ok(found.map(|r| r.target()))
}

/// The object id the loose ref file of `name` holds, if there is such a file holding one.
fn loose_value(repo: &gix::Repository, name: &str) -> Option<ObjectId> {
    let bytes = std::fs::read(repo.common_dir().join(name)).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?.trim_end();
    (text.len() == repo.object_hash().len_in_hex())
        .then(|| ObjectId::from_hex(text.as_bytes()).ok())
        .flatten()
}

/// Which hook runs, as its script names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook<'a> {
    PreReceive,
    ReferenceTransaction { state: &'a str },
    PreCommit,
}

/// Run one hook in `repo` (opened for the hook: [`crate::git::quarantine::open_for_hook`]);
/// `stdin` is read for the hooks that take updates. The outer error is one before the hook
/// could judge anything (its input unreadable or malformed; in a repository whose refs are not
/// files, an update of a ref the hooks guard: they fail closed, since the refs gix would read
/// are not the ones Git keeps, `git::refuse_ref_storage`); the inner result is the hook's
/// verdict: each ref admitted with its commits (pre-commit: each ledger file, with 0), or the
/// refusal.
pub fn run(
    repo: &gix::Repository,
    hook: Hook,
    stdin: impl FnOnce() -> Result<String>,
    bounds: &Bounds,
) -> Result<Result<Vec<(String, usize)>>> {
    let storage = crate::git::other_ref_storage(repo);
    let ledger_refs = LedgerRefs::of(repo)?;
    let guarded = |updates: &[Update]| -> Result<()> {
        match &storage {
            Some(v) if updates.iter().any(|u| guards(&ledger_refs, &u.refname)) => {
                Err(crate::git::ref_storage_error(v))
            }
            _ => Ok(()),
        }
    };
    Ok(match hook {
        Hook::PreReceive => {
            let updates = parse_updates(&stdin()?, repo.object_hash())?;
            guarded(&updates)?;
            pre_receive(repo, &updates, bounds).map(|v| v.admitted)
        }
        Hook::ReferenceTransaction { state } => {
            let updates = parse_updates(&stdin()?, repo.object_hash())?;
            if state == "prepared" {
                guarded(&updates)?;
            }
            reference_transaction(repo, state, &updates, bounds).map(|v| v.admitted)
        }
        Hook::PreCommit => match &storage {
            Some(v) => Err(crate::git::ref_storage_error(v)),
            None => Ok(()),
        }
        .and_then(|()| {
            precommit::pre_commit(repo, bounds.max_blob_bytes)
                .map(|files| files.into_iter().map(|f| (f, 0)).collect())
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const Z: &str = "0000000000000000000000000000000000000000";
    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";
    const SHA1: gix::hash::Kind = gix::hash::Kind::Sha1;

    fn id(s: &str) -> ObjectId {
        ObjectId::from_hex(s.as_bytes()).unwrap()
    }

    #[test]
    fn parses_updates_creations_and_deletions() {
        let input =
            format!("{A} {B} refs/ledgers/x\n{Z} {A} refs/heads/main\n\n{A} {Z} refs/ledgers/y\n");
        let u = parse_updates(&input, SHA1).unwrap();
        assert_eq!(u.len(), 3);
        assert_eq!(
            u[0],
            Update {
                old: Some(id(A)),
                new: Some(id(B)),
                refname: "refs/ledgers/x".into(),
                symbolic: false
            }
        );
        assert_eq!(u[1].old, None);
        assert_eq!(u[2].new, None);
    }

    #[test]
    fn empty_input_and_crlf_are_accepted() {
        assert!(parse_updates("", SHA1).unwrap().is_empty());
        assert!(parse_updates("\n\n", SHA1).unwrap().is_empty());
        let u = parse_updates(&format!("{A} {B} refs/ledgers/x\r\n"), SHA1).unwrap();
        assert_eq!(u[0].refname, "refs/ledgers/x");
    }

    #[test]
    fn symbolic_values_are_marked() {
        let u = parse_updates(&format!("{Z} ref:refs/heads/main HEAD\n"), SHA1).unwrap();
        assert!(u[0].symbolic);
        assert_eq!(u[0].new, None);
    }

    #[test]
    fn malformed_lines_are_errors_naming_the_line() {
        for (bad, why) in [
            (format!("{A} {B}"), "not three fields"),
            (
                format!("{A} xyz refs/ledgers/x"),
                "an object id has the wrong length",
            ),
            (format!("{A} {B} "), "bad ref name"),
            (
                format!("{A}0 {B} refs/ledgers/x"),
                "an object id has the wrong length",
            ),
            (format!("{A} {B} refs/ledgers/x y"), "bad ref name"),
        ] {
            let e = parse_updates(&format!("\n{bad}\n"), SHA1).unwrap_err();
            // Not a refusal: Git wrote something this tool does not understand.
            assert_eq!(e.refusal_reasons(), &[]);
            assert_eq!(
                e.message(),
                Some(format!(
                    "hook input line 2: {why}: {bad:?} (expected `<old> <new> <ref>`)"
                )),
            );
            assert_eq!(e.exit_code(), crate::error::exit::FAILED);
        }
    }

    #[test]
    fn sizes_take_git_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("8k"), Some(8192));
        assert_eq!(parse_size("2m"), Some(2 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("0"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("lots"), None);
    }
}
