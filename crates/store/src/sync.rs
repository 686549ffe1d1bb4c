//! `git ledger sync [REMOTE]` (`docs/guide/08-sync.md`, and the sync decisions in
//! `docs/decisions.md`): share ledgers through an ordinary Git server.
//!
//! For each ledger: list what the remote serves now (`git ls-remote`), fetch the remote's
//! `refs/ledgers/*` into `refs/remotes/<remote>/ledgers/*` (never forced), then fast-forward the
//! local ref when it is behind, push when it is ahead, and when both moved replay the local
//! commits on the remote tip — each replayed commit re-fills the same rows with the same row
//! bytes and records, its message regenerated from what its trees say (`Ledger-Filled` counted
//! anew, each filled row `from` its record file; the local message is not read); a row the
//! remote already holds with identical bytes is skipped. Whether the rest of a local commit
//! may follow the remote tip is [`admission::admit`]'s answer, over that commit's rows and
//! records as a change of the remote's state; a row it refuses (a retry, mostly) is a
//! conflict: that attempt is kept, unchanged, on `refs/ledger-conflicts/<id>/<n>` (a commit on
//! the tip sync pushes — the remote's tip once pushed — holding that row and its record file;
//! never pushed, not a ledger ref), the
//! other rows are replayed and pushed, the local ledger ref moves to the synced tip, and the
//! run is refused (exit 2) naming each conflict — so the next sync has nothing to refuse.
//!
//! A ledger the remote no longer serves although its remote-tracking ref says it had it was
//! deleted there: it is reported and not pushed back unless `--restore` (`docs/guide/08-sync.md`); "up
//! to date" is said only of a tip the remote serves now. A push that loses a race is retried
//! after a fresh fetch, a bounded number of times.
//!
//! Transport goes through the `git` executable ([`crate::git::transport`]); every object and
//! ref written here goes through gix, every local ref move is a compare-and-swap, and every new
//! state passes the admission validator first.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use gix::refs::transaction::PreviousValue;
use gix::refs::Target;
use gix::ObjectId;

use crate::admission::{self, LedgerChange, LedgerState, RecordEdit, RecordFile, Records, RowEdit};
use crate::error::{Error, Reasons, Result};
use crate::git::admit::{read_row, tree_changes, Admission, Admitted};
use crate::git::layout::{self, LedgerRefs};
use crate::git::objects::{find_in_tree, read_commit, short};
use crate::git::store::{identity, ledger_refs, move_ref, move_tracking_ref, ref_target};
use crate::git::transport::{self, Pushed};
use crate::ledger::Row;
use crate::refusal::{Reason, Rule};
use crate::store::{Change, ChangeKind, RowWrite, WriteError};

mod setup;
pub use setup::{only_ledger, setup, Setup};

/// How many times one ledger is re-fetched and re-pushed after losing a push race.
pub const MAX_ATTEMPTS: usize = 12;

/// Where the attempts a sync refused are kept: `refs/ledger-conflicts/<id>/<n>`.
pub const CONFLICTS_PREFIX: &str = "refs/ledger-conflicts/";

/// `refs/ledger-conflicts/<id>/`.
pub fn conflicts_prefix(id: &str) -> String {
    format!("{CONFLICTS_PREFIX}{id}/")
}

/// Fetch `refs/ledgers/*` (or the one ledger `only`) from `remote` into
/// `refs/remotes/<remote>/ledgers/*`, never forced (a rewritten remote ledger is rejected by Git
/// and reported here, not followed). Returns the declaration ids whose remote ledger was
/// rewritten.
fn fetch_ledgers(
    dir: &std::path::Path,
    refs: &LedgerRefs,
    remote: &str,
    only: Option<&str>,
) -> Result<Vec<String>> {
    let tracking = refs.tracking_prefix(remote);
    let spec = match only {
        Some(id) => format!("{}:{tracking}{id}", refs.name(id)),
        None => refs.fetch_refspec(remote),
    };
    let rejected = transport::fetch_unforced(dir, remote, &spec)?;
    // Git shows a destination under refs/remotes/ without that prefix.
    let shown = tracking.strip_prefix("refs/remotes/").unwrap_or(&tracking);
    Ok((rejected.iter())
        .filter_map(|to| {
            to.strip_prefix(&tracking)
                .or_else(|| to.strip_prefix(shown))
        })
        .map(str::to_owned)
        .collect())
}

/// The ledgers `remote` serves now (`only`: just that one), by declaration id.
fn served_ledgers(
    dir: &Path,
    refs: &LedgerRefs,
    remote: &str,
    only: Option<&str>,
) -> Result<HashMap<String, ObjectId>> {
    let prefix = only.map_or_else(|| refs.prefix().to_owned(), |id| refs.name(id));
    let mut out = HashMap::new();
    for (name, id) in transport::served(dir, remote, &prefix)? {
        let oid = ObjectId::from_hex(id.as_bytes()).map_err(|e| {
            Error::failed(format!(
                "git ls-remote {remote}: {name} names {id:?}, not an object id: {e}"
            ))
        })?;
        if let Some(id) = refs.id_of(&name) {
            out.insert(id.to_owned(), oid);
        }
    }
    Ok(out)
}

/// What happened to one ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synced {
    pub refname: String,
    pub tip: ObjectId,
    pub what: String,
}

/// What one run did: a line per ledger synced (even partly: a ledger whose conflicting
/// attempts were kept aside is synced too), and what was refused or kept losing races, as the
/// error the run ends with (`None`: exit 0).
#[derive(Debug)]
pub struct Outcome {
    pub synced: Vec<Synced>,
    pub error: Option<Error>,
}

/// What a run may do beyond syncing.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--max-input-bytes`.
    pub max_bytes: u64,
    /// `--restore`: push back a ledger the remote deleted.
    pub restore: bool,
    /// `--ref`: sync only the ledger of this declaration id.
    pub only: Option<String>,
}

/// Sync every ledger with `remote`. `dir` is where `git` runs (the repository). Returns one
/// line per ledger; refusals (a rewritten or deleted remote ledger, a conflicting fill, a push
/// the server refused) are collected so the other ledgers still sync, and returned together as
/// one refusal; a ledger whose push kept losing races makes the whole run
/// [`Error::Contended`].
pub fn sync(dir: &Path, remote: &str, options: Options) -> Result<Outcome> {
    sync_with_progress(dir, remote, options, &mut |_, _| {})
}

/// As [`sync`], calling `progress(done, total)` after each ledger is synced (or refused).
pub fn sync_with_progress(
    dir: &Path,
    remote: &str,
    options: Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Outcome> {
    transport::check_version(dir)?;
    if !transport::remote_exists(dir, remote)? {
        return Err(Error::failed_with_hint(
            format!("no remote named {remote:?} in this repository"),
            "add one with `git remote add <name> <url>`, or name another: `git ledger sync <REMOTE>`",
        ));
    }
    let refs = LedgerRefs::checked(&crate::git::open(Some(dir))?)?;
    let only = options.only.as_deref();
    let served = served_ledgers(dir, &refs, remote, only)?;
    // One ledger the remote does not serve: nothing to fetch (Git refuses a refspec naming a
    // ref the remote lacks).
    let rewritten = match only {
        Some(id) if !served.contains_key(id) => Vec::new(),
        _ => fetch_ledgers(dir, &refs, remote, only)?,
    };
    let repo = crate::git::open(Some(dir))?;
    let prefix = refs.tracking_prefix(remote);
    let mut ids: Vec<String> = ledger_refs(&repo)?
        .into_iter()
        .filter_map(|(n, _)| refs.id_of(&n).map(str::to_owned))
        .collect();
    for r in repo
        .references()
        .map_err(|e| Error::failed(format!("cannot list refs: {e}")))?
        .prefixed(prefix.as_str())
        .map_err(|e| Error::failed(format!("cannot list refs: {e}")))?
    {
        let r = r.map_err(|e| Error::failed(format!("cannot list refs: {e}")))?;
        if let Some(id) = r.name().as_bstr().to_string().strip_prefix(&prefix) {
            ids.push(id.to_owned());
        }
    }
    ids.sort();
    ids.dedup();
    if let Some(only) = only {
        ids.retain(|id| id == only);
        if ids.is_empty() {
            return Err(Error::failed_with_hint(
                format!(
                    "ledger ref {} exists neither in this repository nor on {remote}",
                    refs.name(only)
                ),
                format!(
                    "list the ledgers {remote} serves with `git ls-remote {remote} '{}*'`",
                    refs.prefix()
                ),
            ));
        }
    }
    let mut done = Vec::new();
    let mut reasons = Reasons::new();
    let mut contended = Vec::new();
    let total = ids.len();
    for (i, id) in ids.into_iter().enumerate() {
        progress(i, total);
        if rewritten.contains(&id) {
            reasons.push(rewritten_reason(&refs, remote, &id));
            continue;
        }
        let one = One {
            dir,
            refs: &refs,
            repo: &repo,
            remote,
            id: &id,
            options: &options,
        };
        match one.sync(served.get(&id).copied()) {
            Ok((s, refused)) => {
                done.push(s);
                reasons.absorb(refused);
            }
            Err(Error::Refused(r)) => reasons.absorb(r),
            Err(Error::Contended(m)) => contended.push(m),
            Err(e) => return Err(e),
        }
    }
    progress(total, total);
    let error = if !reasons.is_empty() {
        Some(Error::Refused(reasons))
    } else if !contended.is_empty() {
        // Not a refusal: no rule is broken, the remote kept moving (exit 3, run sync again);
        // an operational error's message, one line per ledger that raced.
        Some(Error::Contended(contended.join("\n")))
    } else {
        None
    };
    Ok(Outcome {
        synced: done,
        error,
    })
}

fn rewritten_reason(refs: &LedgerRefs, remote: &str, id: &str) -> Reason {
    Reason::new(format!(
        "the ledger on {remote} was rewritten (its tip does not follow {}{id}); it is reported, not followed — ask whoever rewrote it, and check it with `git ledger verify`",
        refs.tracking_prefix(remote)
    ))
    .at(refs.name(id))
}

/// The ledger was deleted on the remote: `tracking` still holds the tip it had there.
fn deleted_refusal(remote: &str, refname: &str, tracking: &str, had: ObjectId) -> Reasons {
    let mut r = Reasons::one(Reason::new(format!(
        "{remote} no longer serves this ledger: it was deleted there (its tip was {had} when sync last saw it, kept in {tracking}); nothing is pushed back"
    ))
    .at(refname));
    r.hint(format!(
        "ask whoever deleted it; if the deletion was a mistake, `git ledger sync {remote} --restore` pushes the ledger back (the server's hook checks it from the root)"
    ));
    r
}

/// The first move of the remote-tracking ref `tracking` that left its own first-parent history,
/// as `(from, to)`, read from its reflog (Git logs `refs/remotes/*` in a repository with a work
/// tree, and appends to a reflog that exists; sync creates one when it moves the ref). `None`
/// when every logged move followed the previous value, or there is no reflog.
fn tracking_rewritten(
    repo: &gix::Repository,
    tracking: &str,
) -> Result<Option<(ObjectId, ObjectId)>> {
    let fail = |e: &dyn std::fmt::Display| {
        Error::failed(format!("cannot read the reflog of {tracking}: {e}"))
    };
    let Some(r) = repo.try_find_reference(tracking).map_err(|e| fail(&e))? else {
        return Ok(None);
    };
    let mut moves = Vec::new();
    {
        let mut platform = r.log_iter();
        let Some(lines) = platform.all().map_err(|e| fail(&e))? else {
            return Ok(None);
        };
        for line in lines {
            let line = line.map_err(|e| fail(&e))?;
            let (from, to) = (line.previous_oid(), line.new_oid());
            if !from.is_null() && !to.is_null() && from != to {
                moves.push((from, to));
            }
        }
    }
    // Newest first: a rewrite is usually the last move.
    for (from, to) in moves.into_iter().rev() {
        if !follows_first_parent(repo, from, to)? {
            return Ok(Some((from, to)));
        }
    }
    Ok(None)
}

/// Whether `a` is on `b`'s first-parent chain (a commit missing on the way ends the chain).
fn follows_first_parent(repo: &gix::Repository, a: ObjectId, b: ObjectId) -> Result<bool> {
    let mut c = b;
    loop {
        if c == a {
            return Ok(true);
        }
        match read_commit(repo, c) {
            Ok(info) => match info.parents.first() {
                Some(p) => c = *p,
                None => return Ok(false),
            },
            Err(_) => return Ok(false),
        }
    }
}

/// One ledger of a run.
struct One<'a> {
    dir: &'a Path,
    refs: &'a LedgerRefs,
    repo: &'a gix::Repository,
    remote: &'a str,
    id: &'a str,
    options: &'a Options,
}

impl One<'_> {
    /// Sync this ledger, retrying lost push races. `served` is the tip the remote listed
    /// before the fetch (`None`: it serves no such ledger). Returns what was done and the
    /// refusal of the attempts kept aside (empty when there were none).
    fn sync(&self, mut served: Option<ObjectId>) -> Result<(Synced, Reasons)> {
        let (repo, remote, id) = (self.repo, self.remote, self.id);
        let max_bytes = self.options.max_bytes;
        let refs = self.refs;
        let refname = refs.name(id);
        let tracking = format!("{}{id}", refs.tracking_prefix(remote));
        let mut raced = String::new();
        // The attempts kept aside, over every try (a lost race replays again).
        let mut kept: Vec<Kept> = Vec::new();
        for attempt in 0..MAX_ATTEMPTS {
            if attempt > 0 {
                backoff(attempt);
                served = served_ledgers(self.dir, refs, remote, Some(id))?.remove(id);
                if served.is_some() && !fetch_ledgers(self.dir, refs, remote, Some(id))?.is_empty()
                {
                    return Err(Error::refused(rewritten_reason(refs, remote, id)));
                }
            }
            let local = ref_target(repo, &refname)?;
            let tracked = ref_target(repo, &tracking)?;
            // A remote-tracking ledger ref that was moved off its own history (a forced fetch
            // of a rewritten remote, outside sync) is what a fetch by sync would have refused:
            // reported, not followed, so that the local ledger never moves off what was
            // published.
            if let Some((from, to)) = tracking_rewritten(repo, &tracking)? {
                let mut r = Reasons::one(rewritten_reason(refs, remote, id));
                r.push(
                    Reason::new(format!(
                        "was moved from {from} to {to}, which does not follow it (a forced fetch, `git fetch origin +{}*:…`); {refname} stays at {}",
                        refs.prefix(),
                        local.map_or("nothing".to_owned(), |l| l.to_string())
                    ))
                    .at(&tracking),
                );
                r.hint(format!(
                    "compare the two with `git ledger diff {from} {to}` and check the remote's with `git ledger verify {tracking}`; once it is settled, `git update-ref -d {tracking}` forgets the rewritten copy"
                ));
                return Err(Error::Refused(r));
            }
            // What the remote serves now decides, never a remote-tracking ref a deletion left
            // behind.
            let (theirs, restoring) = match (served, tracked) {
                (None, Some(had)) if !self.options.restore => {
                    return Err(Error::Refused(deleted_refusal(
                        remote, &refname, &tracking, had,
                    )))
                }
                (None, Some(had)) => {
                    if local.is_none() {
                        // Restored from the copy sync kept: the local ledger first.
                        self.create(&refname, had)?;
                        continue;
                    }
                    (None, true)
                }
                (None, None) => (None, false),
                (Some(s), Some(t)) if s == t => (Some(s), false),
                (Some(_), _) => {
                    // The remote moved between its listing and the fetch: look again.
                    raced = format!("{remote} moved while it was fetched");
                    continue;
                }
            };
            let (to_push, what) = match (local, theirs) {
                (None, None) => {
                    return Err(Error::failed(format!(
                        "{refname}: no such ledger here or on {remote}"
                    )))
                }
                (None, Some(r)) => match self.create(&refname, r)? {
                    Some(n) => {
                        let what =
                            format!("created from {remote} ({n} commits, verified from the root)");
                        return Ok(self.done(&refname, r, what, &kept));
                    }
                    None => continue,
                },
                (Some(l), None) if restoring => (
                    l,
                    format!("restored on {remote}, which had deleted it (pushed back, new there)"),
                ),
                (Some(l), None) => (l, format!("pushed to {remote} (new there)")),
                (Some(l), Some(r)) if l == r => {
                    return Ok(self.done(&refname, l, "up to date".into(), &kept))
                }
                (Some(l), Some(r)) => match first_parent_base(repo, l, r)? {
                    None => {
                        return Err(Error::refused(
                            crate::refusal::Reason::new(format!(
                                "the local ledger and {tracking} share no commit (two different ledgers under one name?); nothing synced"
                            ))
                            .at(&refname)
                        ))
                    }
                    Some(base) if base == l => {
                        let (n, admitted) = Admission::new(repo, max_bytes)
                            .without_cache()
                            .admit(&refname, Some(l), r, &mut |_, _| {})?;
                        match move_ref(
                            repo,
                            &refname,
                            PreviousValue::MustExistAndMatch(Target::Object(l)),
                            admitted,
                            "ledger: sync (fast-forward)",
                        ) {
                            Ok(()) => {
                                let what = format!(
                                    "fast-forwarded {n} commit{} from {remote}",
                                    plural(n)
                                );
                                return Ok(self.done(&refname, r, what, &kept));
                            }
                            Err(WriteError::Moved) => continue,
                            Err(WriteError::Other(e) | WriteError::Locked(e)) => return Err(e),
                        }
                    }
                    Some(base) if base == r => (l, format!("pushed to {remote}")),
                    Some(base) => {
                        let replay = replay(repo, &refname, l, r, base, max_bytes)?;
                        // Each refused attempt is on its own ref before the local ledger ref
                        // leaves it: nothing is lost. Its parent is the tip this run pushes
                        // (the remote's when nothing else is), so that it differs from what
                        // the remote then holds by that attempt alone.
                        for c in &replay.conflicts {
                            kept.push(keep(repo, id, replay.tip.id(), c, replay.signed)?);
                        }
                        match move_ref(
                            repo,
                            &refname,
                            PreviousValue::MustExistAndMatch(Target::Object(l)),
                            replay.tip,
                            "ledger: sync (replay on the remote tip)",
                        ) {
                            Ok(()) => {}
                            Err(WriteError::Moved) => continue,
                            Err(WriteError::Other(e) | WriteError::Locked(e)) => return Err(e),
                        }
                        let skipped = if replay.skipped_rows > 0 {
                            format!(
                                "; {} row{} already on {remote} with the same bytes skipped",
                                replay.skipped_rows,
                                plural(replay.skipped_rows)
                            )
                        } else {
                            String::new()
                        };
                        if replay.tip.id() == r {
                            let what = if kept.is_empty() {
                                format!("every local row was already on {remote}{skipped}")
                            } else {
                                format!("moved to {remote}'s tip {}{skipped}", short(&r))
                            };
                            return Ok(self.done(&refname, r, what, &kept));
                        }
                        (
                            replay.tip.id(),
                            format!(
                                "replayed {} local commit{} on {remote}'s tip {}{skipped}, pushed",
                                replay.commits,
                                plural(replay.commits),
                                short(&r)
                            ),
                        )
                    }
                },
            };
            match transport::push_unforced(self.dir, remote, &to_push.to_string(), &refname)? {
                Pushed::Done => {
                    // What the remote now holds, as `git push` records it with a fetch
                    // refspec; its reflog kept whatever the configuration, so that a later
                    // forced fetch that rewrites it is seen (see `tracking_rewritten`).
                    let mut logged = repo.clone();
                    logged.refs.write_reflog = gix::refs::store::WriteReflog::Always;
                    if let Err(WriteError::Other(e)) = move_tracking_ref(
                        &logged,
                        &tracking,
                        PreviousValue::Any,
                        to_push,
                        "ledger: sync (pushed)",
                    ) {
                        return Err(e);
                    }
                    return Ok(self.done(&refname, to_push, what, &kept));
                }
                Pushed::Raced(why) => raced = why,
                Pushed::Refused(why) => {
                    let mut r = Reasons::new();
                    // The server's own lines after the first are its text, kept as it wrote them.
                    r.extend(
                        std::iter::once(
                            Reason::new(format!(
                                "{remote} refused the push: {}",
                                why.lines().next().unwrap_or("")
                            ))
                            .at(&refname),
                        )
                        .chain(why.lines().skip(1).map(Reason::new)),
                    );
                    // Attempts already kept aside are still reported.
                    r.absorb(kept_refusal(remote, &refname, &kept));
                    return Err(Error::Refused(r));
                }
            }
        }
        Err(Error::Contended(format!(
            "{refname}: the ledger on {remote} moved on each of {MAX_ATTEMPTS} tries (other machines kept winning; last: {raced}); the local ledger is intact, run sync again"
        )))
    }

    /// Create the local ledger ref at `tip`, admitted from the root (`None`: another process
    /// created it meanwhile). Returns the commits admitted.
    fn create(&self, refname: &str, tip: ObjectId) -> Result<Option<usize>> {
        let (n, admitted) = Admission::new(self.repo, self.options.max_bytes)
            .without_cache()
            .admit(refname, None, tip, &mut |_, _| {})?;
        match move_ref(
            self.repo,
            refname,
            PreviousValue::MustNotExist,
            admitted,
            "ledger: sync (create)",
        ) {
            Ok(()) => Ok(Some(n)),
            Err(WriteError::Moved) => Ok(None),
            Err(WriteError::Other(e) | WriteError::Locked(e)) => Err(e),
        }
    }

    /// The line for this ledger, and the refusal of what was kept aside.
    fn done(&self, refname: &str, tip: ObjectId, what: String, kept: &[Kept]) -> (Synced, Reasons) {
        let what = match kept.len() {
            0 => what,
            n => format!(
                "{what}; {n} refused attempt{} kept on {}",
                plural(n),
                kept.iter()
                    .map(|k| k.refname.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        (
            Synced {
                refname: refname.to_owned(),
                tip,
                what,
            },
            kept_refusal(self.remote, refname, kept),
        )
    }
}

/// An attempt kept aside on its conflict ref.
#[derive(Debug, Clone)]
struct Kept {
    /// `refs/ledger-conflicts/<id>/<n>`.
    refname: String,
    /// The tip it was kept on (the conflict commit's parent): the synced tip.
    on: ObjectId,
    conflict: Conflict,
}

/// One reason per attempt kept aside: admission's first reason for its row, saying which
/// remote commit was first and where the attempt is kept; admission's other reasons for it
/// follow. Hints: how to read a kept attempt, and that running it again needs a new declared
/// schedule.
fn kept_refusal(remote: &str, refname: &str, kept: &[Kept]) -> Reasons {
    let mut out = Reasons::new();
    let Some(first) = kept.first() else {
        return out;
    };
    for k in kept {
        let c = &k.conflict;
        let mut reasons = c.reasons.iter().cloned().map(|r| r.at(refname));
        let Some(mut lead) = reasons.next() else {
            continue;
        };
        if lead.row.is_none() {
            lead = lead.row(c.sid.clone());
        }
        lead.sentence = format!(
            "{}; {remote} {} at commit {}: local commit {} is not replayed, and its attempt is kept, unchanged, on {} (never pushed)",
            lead.sentence,
            c.first.words(),
            c.by,
            c.local,
            k.refname
        );
        out.push(lead);
        out.extend(reasons);
    }
    out.hint(format!(
        "each refused attempt is kept on a commit on {remote}'s tip: read it with `git ledger show --unverified --at {} --row {}` (it is not an admitted state) and `git ledger diff {} {}`; sync never pushes it, the local ledger now follows {remote}, and the next sync has nothing to refuse",
        first.refname, first.conflict.sid, first.on, first.refname
    ));
    out.hint(
        "running an attempt again needs a new declared schedule: raise `repetitions` (or add a task) in the draft and pin a new declaration; the remote's row keeps its attempt",
    );
    if let Some(k) = kept.iter().find(|k| k.conflict.first == First::Changed) {
        out.hint(format!(
            "a refused repair can be made again on the synced ledger: `git ledger repair {} --note TEXT`",
            k.conflict.sid
        ));
    }
    out
}

/// Write `c` as a commit on `on`, the tip sync pushes (its tree: the tip's, with the attempt's
/// row and record file) and point the next free `refs/ledger-conflicts/<id>/<n>` at it. The same
/// attempt on the same tip kept before is not kept twice.
fn keep(
    repo: &gix::Repository,
    id: &str,
    on: ObjectId,
    c: &Conflict,
    signed: bool,
) -> Result<Kept> {
    let on_info = read_commit(repo, on)?;
    let mut editor = repo
        .edit_tree(on_info.tree)
        .map_err(|e| Error::failed(format!("cannot edit tree {}: {e}", on_info.tree)))?;
    let path = layout::row_path(&c.sid);
    let mut files = vec![(path.as_str(), c.row)];
    if let Some((rpath, rid)) = &c.record {
        files.push((rpath.as_str(), *rid));
    }
    for (p, blob) in files {
        editor
            .upsert(p, gix::objs::tree::EntryKind::Blob, blob)
            .map_err(|e| Error::failed(format!("cannot edit tree at {p}: {e}")))?;
    }
    let tree = editor
        .write()
        .map_err(|e| Error::failed(format!("cannot write a tree: {e}")))?
        .detach();
    let prefix = conflicts_prefix(id);
    let mut taken = Vec::new();
    for r in repo
        .references()
        .map_err(|e| Error::failed(format!("cannot list refs: {e}")))?
        .prefixed(prefix.as_str())
        .map_err(|e| Error::failed(format!("cannot list refs: {e}")))?
    {
        let r = r.map_err(|e| Error::failed(format!("cannot list refs: {e}")))?;
        let name = r.name().as_bstr().to_string();
        if let Some(target) = r.target().try_id() {
            if let Ok(info) = read_commit(repo, target.to_owned()) {
                if info.tree == tree && info.parents == [on] {
                    return Ok(Kept {
                        refname: name,
                        on,
                        conflict: c.clone(),
                    });
                }
            }
        }
        if let Some(n) = name
            .strip_prefix(&prefix)
            .and_then(|n| n.parse::<u64>().ok())
        {
            taken.push(n);
        }
    }
    let author = author_of(repo, c.local)?;
    let committer = identity(repo)?;
    let committer = committer
        .to_owned()
        .map_err(|e| Error::failed(format!("committer identity: {e}")))?;
    let message = format!(
        "refused attempt {sid}, kept aside by sync\n\nThe remote {words} at commit {by}; local commit {local}'s attempt at\n{sid} is kept here, unchanged, on the remote's tip {on}. This commit is not\na ledger commit: sync never pushes it. Running the attempt again needs a new\ndeclared schedule.\n",
        sid = c.sid,
        words = c.first.words(),
        by = c.by,
        local = c.local,
    );
    // Signed as the replayed commits are (every commit the tool writes on a signed ledger).
    let signing = crate::git::sign::config(repo, signed)?;
    let commit = crate::git::sign::write_commit(
        repo,
        committer.to_ref(&mut Default::default()),
        author.to_ref(&mut Default::default()),
        &message,
        tree,
        vec![on],
        signing.as_ref(),
    )
    .map_err(|e| e.context("cannot write the commit that keeps a refused attempt"))?;
    let mut n = taken.iter().max().copied().unwrap_or(0);
    loop {
        n += 1;
        let name = format!("{prefix}{n}");
        match move_tracking_ref(
            repo,
            &name,
            PreviousValue::MustNotExist,
            commit,
            "ledger: sync (a refused attempt kept aside)",
        ) {
            Ok(()) => {
                return Ok(Kept {
                    refname: name,
                    on,
                    conflict: c.clone(),
                })
            }
            Err(WriteError::Moved) if n < taken.len() as u64 + 1000 => continue,
            Err(WriteError::Moved) => {
                return Err(Error::failed(format!(
                    "cannot create {name}: it keeps being taken"
                )))
            }
            Err(WriteError::Other(e) | WriteError::Locked(e)) => return Err(e),
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Sleep a little longer on each lost race, with jitter so that racing machines spread out.
fn backoff(attempt: usize) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = (nanos ^ std::process::id().wrapping_mul(2_654_435_761)) % 150;
    let ms = 20 * attempt.min(10) as u64 + u64::from(jitter);
    std::thread::sleep(std::time::Duration::from_millis(ms));
}

/// The newest commit on both first-parent chains, walking both alternately so that the cost
/// follows how far they diverged, not their length.
pub fn first_parent_base(
    repo: &gix::Repository,
    a: ObjectId,
    b: ObjectId,
) -> Result<Option<ObjectId>> {
    if a == b {
        return Ok(Some(a));
    }
    let mut seen = [HashSet::from([a]), HashSet::from([b])];
    let mut cur = [Some(a), Some(b)];
    while cur[0].is_some() || cur[1].is_some() {
        for side in 0..2 {
            let Some(c) = cur[side] else { continue };
            let next = read_commit(repo, c)?.parents.first().copied();
            cur[side] = next;
            if let Some(n) = next {
                if seen[1 - side].contains(&n) {
                    return Ok(Some(n));
                }
                seen[side].insert(n);
            }
        }
    }
    Ok(None)
}

/// Which remote commit a conflict names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum First {
    /// The remote filled the row the local commit filled.
    Filled,
    /// The remote changed the row (a repair) the local commit changed.
    Changed,
    /// The remote filled another row with the attempt's record.
    Record,
    /// No remote commit since the base touched the row or its record (admission refused the
    /// local row against the tip for another reason).
    Tip,
}

impl First {
    fn words(self) -> &'static str {
        match self {
            First::Filled => "filled this row first",
            First::Changed => "changed this row first",
            First::Record => "filled a row with this attempt's record first",
            First::Tip => "refuses this attempt on its tip",
        }
    }
}

/// A local attempt that the remote tip refuses, as replay found it.
#[derive(Debug, Clone)]
struct Conflict {
    sid: String,
    /// The local commit whose version of the row is kept (the newest that changed it).
    local: ObjectId,
    /// The remote commit since the base that changed the row (or its record's file) first.
    by: ObjectId,
    first: First,
    /// Admission's reasons for the row against the remote tip.
    reasons: Vec<Reason>,
    /// The row's blob, and its record file's path and blob (a fill's).
    row: ObjectId,
    record: Option<(String, ObjectId)>,
}

/// One row a local commit changed, as replay carries it.
struct LocalRow {
    path: String,
    sid: String,
    oid: ObjectId,
    row: Row,
    /// Its row in the local parent was DEFERRED: the commit filled it.
    filled: bool,
    /// Its record file in the local commit (a fill's).
    record: Option<(String, ObjectId)>,
}

/// The result of replaying local commits.
struct Replayed {
    /// The replayed tip (the remote's when nothing was replayed), admitted.
    tip: Admitted,
    commits: usize,
    skipped_rows: usize,
    /// The attempts admission refused on the remote tip, in the order found.
    conflicts: Vec<Conflict>,
    /// The ledger's declaration names writers: its commits are signed.
    signed: bool,
}

/// The remote tip's records, as the ledger state a replayed commit is admitted against: a
/// record key is in the ledger when its file is in the tip's tree.
struct TipRecords<'r> {
    repo: &'r gix::Repository,
    tree: ObjectId,
}

impl LedgerState for TipRecords<'_> {
    fn record_owner(&mut self, key: &str) -> Result<Option<String>> {
        let path = layout::record_path(key);
        Ok(find_in_tree(self.repo, self.tree, &path)?
            .map(|_| format!("a row of the ledger ({path} exists on the remote's tip)")))
    }
}

/// Replay the local commits of `base..local` on `remote` (see the module documentation): the
/// remote's commits admitted first, then each local commit's rows asked of the replayed tip
/// ([`admission::replay`]) and the rows it admits written as one commit.
fn replay(
    repo: &gix::Repository,
    refname: &str,
    local: ObjectId,
    remote: ObjectId,
    base: ObjectId,
    max_bytes: u64,
) -> Result<Replayed> {
    let mut state = gix::diff::tree::State::default();
    let remote_first = remote_first_changes(repo, &mut state, remote, base)?;
    let local_chain = chain_since(repo, refname, local, base)?;
    let mut on = OnRemote::admit(repo, refname, (base, remote), max_bytes)?;
    let decl = &on.known.clone().decl;
    let writer = Writer::new(repo, decl, refname)?;
    let mut done = Replayed {
        tip: on.admitted,
        commits: 0,
        skipped_rows: 0,
        conflicts: Vec::new(),
        signed: decl.writers.is_some(),
    };
    for c in local_chain {
        let rows = local_rows(repo, decl, &mut state, c, max_bytes)?;
        let rows = join_kept(&mut done.conflicts, c, rows);
        if rows.is_empty() {
            continue; // everything this commit did is kept aside
        }
        let tip = Tip {
            repo,
            decl,
            tree: on.tree,
            max_bytes,
        };
        let (replayed, same, refused) = tip.replay(rows)?;
        done.skipped_rows += same; // the same attempt arrived twice
        for (lr, reasons) in refused {
            (done.conflicts).push(Conflict::of(lr, reasons, c, &remote_first, remote));
        }
        let Some((kind, replayed)) = replayed else {
            continue; // everything this commit did is already on the remote, or kept aside
        };
        let (new, tree, now) = writer.write(c, (on.tip, on.tree), kind, replayed, on.filled)?;
        (_, done.tip) = (on.admission)
            .admit_step(on.tip, new)
            .map_err(|e| e.context(format!("replaying local commit {c}")))?;
        (on.tip, on.tree, on.filled) = (new, tree, now);
        done.commits += 1;
    }
    Ok(done)
}

/// The remote's tip as replay writes on it: its commits since the base admitted, its
/// declaration and its count.
struct OnRemote<'r> {
    admission: Admission<'r>,
    admitted: Admitted,
    known: std::rc::Rc<crate::git::admit::Known>,
    /// The tip replayed commits follow, its tree and the count its message says.
    tip: ObjectId,
    tree: ObjectId,
    filled: usize,
}

impl<'r> OnRemote<'r> {
    /// Admit the remote's commits of `base..remote` before anything is replayed on them (the
    /// local ref moves to the replayed tip, and so to them), from their blobs, never from the
    /// cache of checked declarations (a forged entry must not change what sync lets in).
    fn admit(
        repo: &'r gix::Repository,
        refname: &str,
        (base, remote): (ObjectId, ObjectId),
        max_bytes: u64,
    ) -> Result<Self> {
        let mut admission = Admission::new(repo, max_bytes).without_cache();
        let (_, admitted) = admission
            .admit(refname, Some(base), remote, &mut |_, _| {})
            .map_err(|e| e.context(format!("{refname} (the remote's commits since {base})")))?;
        let info = read_commit(repo, remote)?;
        let known = admission.declaration_of_tree(info.tree, &format!("commit {remote}"))?;
        let n = known.decl.schedule_len();
        // The remote tip's count, as its admitted message says (rule 7 reads the same).
        let Some(filled) = crate::git::message::filled_of(&info.message, n) else {
            return Err(Error::refused(
                Reason::new(format!(
                    "its message carries no `{}: k/{n}` trailer to count from; check it with `git ledger verify {}`",
                    layout::T_FILLED, refname
                ))
                .rule(Rule::Admission(7))
                .at(format!("commit {remote} (the remote's tip)"))
                .at(refname),
            ));
        };
        Ok(OnRemote {
            admission,
            admitted,
            known,
            tip: remote,
            tree: info.tree,
            filled,
        })
    }
}

/// A later local change of an attempt already kept aside (its repair) joins it: what is kept
/// is the local ledger's newest version of that attempt. Returns the rows of local commit `c`
/// left to replay.
fn join_kept(conflicts: &mut [Conflict], c: ObjectId, rows: Vec<LocalRow>) -> Vec<LocalRow> {
    let mut left = Vec::with_capacity(rows.len());
    for lr in rows {
        match conflicts.iter_mut().find(|k| k.sid == lr.sid) {
            Some(k) => {
                (k.local, k.row) = (c, lr.oid);
                if lr.record.is_some() {
                    k.record = lr.record;
                }
            }
            None => left.push(lr),
        }
    }
    left
}

/// The remote's changes since `base`: each changed path, with the oldest remote commit that
/// changed it.
fn remote_first_changes(
    repo: &gix::Repository,
    state: &mut gix::diff::tree::State,
    remote: ObjectId,
    base: ObjectId,
) -> Result<HashMap<String, ObjectId>> {
    let mut first = HashMap::new();
    let mut c = remote;
    while c != base {
        let info = read_commit(repo, c)?;
        let Some(&p) = info.parents.first() else {
            break;
        };
        let ptree = read_commit(repo, p)?.tree;
        for ch in tree_changes(repo, state, ptree, info.tree)? {
            first.insert(crate::git::show_path(&ch.path), c); // newest first: the last wins
        }
        c = p;
    }
    Ok(first)
}

/// The commits of `base..tip` on the first-parent chain, oldest first.
fn chain_since(
    repo: &gix::Repository,
    refname: &str,
    tip: ObjectId,
    base: ObjectId,
) -> Result<Vec<ObjectId>> {
    let mut chain = Vec::new();
    let mut c = tip;
    while c != base {
        chain.push(c);
        c = *read_commit(repo, c)?.parents.first().ok_or_else(|| {
            Error::failed(format!(
                "{refname}: commit {c} has no parent above the base {base}"
            ))
        })?;
    }
    chain.reverse();
    Ok(chain)
}

/// The rows local commit `c` changed, read from its trees (each row checked on both sides; a
/// fill with its record file).
fn local_rows(
    repo: &gix::Repository,
    decl: &crate::declaration::Declaration,
    state: &mut gix::diff::tree::State,
    c: ObjectId,
    max_bytes: u64,
) -> Result<Vec<LocalRow>> {
    let info = read_commit(repo, c)?;
    let parent = info.parents[0];
    let parent_tree = read_commit(repo, parent)?.tree;
    let (at, parent_at) = (format!("commit {c}"), format!("commit {parent}"));
    let mut rows = Vec::new();
    for ch in tree_changes(repo, state, parent_tree, info.tree)? {
        let (Some((_, previous)), Some((entry_mode, oid))) = (&ch.old, &ch.new) else {
            continue; // records come with their rows; nothing else changes in a ledger
        };
        if entry_mode.is_tree() {
            continue;
        }
        let path = crate::git::show_path(&ch.path);
        let Some(sid) = layout::schedule_id_of(&path) else {
            continue;
        };
        let row = read_row(repo, decl, *oid, sid, max_bytes, &at)?.map_err(Error::refusal)?;
        let was =
            read_row(repo, decl, *previous, sid, max_bytes, &parent_at)?.map_err(Error::refusal)?;
        // What the local commit did to the row, as admission classifies it.
        let filled = admission::Kind::of(&was, &row) != admission::Kind::Repairs;
        let record = match row.native_record().filter(|_| filled) {
            Some(rec) => {
                let rpath = layout::record_path(&rec.key());
                let Some((_, rid)) = find_in_tree(repo, info.tree, &rpath)? else {
                    return Err(Error::refused(
                        Reason::new(format!("its record file {rpath} is missing"))
                            .row(sid)
                            .at(format!("commit {c}")),
                    ));
                };
                Some((rpath, rid))
            }
            None => None,
        };
        rows.push(LocalRow {
            sid: sid.to_owned(),
            path,
            oid: *oid,
            row,
            filled,
            record,
        });
    }
    Ok(rows)
}

impl Conflict {
    /// Local row `lr` of commit `c`, refused for `reasons`: the remote commit to name is the
    /// oldest since the base that changed its row, else the one that added its record file,
    /// else the remote tip.
    fn of(
        lr: LocalRow,
        reasons: Vec<Reason>,
        c: ObjectId,
        remote_first: &HashMap<String, ObjectId>,
        remote: ObjectId,
    ) -> Conflict {
        let record_first = (lr.record.as_ref()).and_then(|(rpath, _)| remote_first.get(rpath));
        let (by, first) = match (remote_first.get(&lr.path), record_first) {
            (Some(by), _) if lr.filled => (*by, First::Filled),
            (Some(by), _) => (*by, First::Changed),
            (None, Some(by)) => (*by, First::Record),
            (None, None) => (remote, First::Tip),
        };
        Conflict {
            sid: lr.sid,
            local: c,
            by,
            first,
            reasons,
            row: lr.oid,
            record: lr.record,
        }
    }
}

/// Who writes the replayed commits, and how.
struct Writer<'a> {
    repo: &'a gix::Repository,
    decl: &'a crate::declaration::Declaration,
    refname: &'a str,
    committer: gix::actor::Signature,
    signing: Option<crate::git::sign::Signing>,
}

impl<'a> Writer<'a> {
    /// The local writer, re-signing with its own key as every commit the tool writes.
    fn new(
        repo: &'a gix::Repository,
        decl: &'a crate::declaration::Declaration,
        refname: &'a str,
    ) -> Result<Self> {
        Ok(Writer {
            repo,
            decl,
            refname,
            committer: identity(repo)?
                .to_owned()
                .map_err(|e| Error::failed(format!("committer identity: {e}")))?,
            signing: crate::git::sign::config(repo, decl.writers.is_some())?,
        })
    }

    /// The replay of local commit `c` on `(tip, its tree)`: the rows admission admitted (with
    /// their record files) as a step of the kind it says, the message rule 7 wants for it
    /// (counted from `filled`), signed as every commit the tool writes. Returns the commit,
    /// its tree and its count.
    fn write(
        &self,
        c: ObjectId,
        (tip, tip_tree): (ObjectId, ObjectId),
        kind: admission::Kind,
        rows: Vec<LocalRow>,
        filled: usize,
    ) -> Result<(ObjectId, ObjectId, usize)> {
        let repo = self.repo;
        let mut editor = repo
            .edit_tree(tip_tree)
            .map_err(|e| Error::failed(format!("cannot edit tree {tip_tree}: {e}")))?;
        let mut writes = Vec::new();
        for lr in rows {
            editor
                .upsert(lr.path.as_str(), gix::objs::tree::EntryKind::Blob, lr.oid)
                .map_err(|e| Error::failed(format!("cannot edit tree at {}: {e}", lr.path)))?;
            // Where a filled row came from, as the trees say it: its record file in the
            // ledger (the writer's own path is only in the local commit's message, which
            // replay does not read).
            let mut source = String::new();
            if let Some((rpath, rid)) = &lr.record {
                editor
                    .upsert(rpath.as_str(), gix::objs::tree::EntryKind::Blob, *rid)
                    .map_err(|e| Error::failed(format!("cannot edit tree at {rpath}: {e}")))?;
                source.clone_from(rpath);
            }
            writes.push(RowWrite {
                source,
                row: lr.row,
                record: None,
            });
        }
        let tree = editor
            .write()
            .map_err(|e| Error::failed(format!("cannot write a tree: {e}")))?
            .detach();
        // Schedule order, as the writers produce it.
        writes.sort_by_key(|w| self.decl.schedule_position(w.row.schedule_id()));
        // The kind of the step is admission's answer.
        let kind = match kind {
            admission::Kind::Hand => ChangeKind::Put,
            admission::Kind::Imported => ChangeKind::Import,
            admission::Kind::Repairs => ChangeKind::Repair,
        };
        let change = Change { kind, rows: writes };
        let (message, now) = crate::git::message::change_message(self.decl, &change, filled)
            .map_err(|why| {
                Error::refused(
                    Reason::new(why)
                        .rule(Rule::Admission(7))
                        .at(format!("replaying local commit {c}"))
                        .at(self.refname),
                )
            })?;
        // Written by the one who replays it, as author and committer (rule 7), and signed by
        // them (rule 8); the row and its record say whose attempt it was.
        let new = crate::git::sign::write_commit(
            repo,
            self.committer.to_ref(&mut Default::default()),
            self.committer.to_ref(&mut Default::default()),
            &message,
            tree,
            vec![tip],
            self.signing.as_ref(),
        )
        .map_err(|e| e.context("cannot write the replayed commit"))?;
        Ok((new, tree, now))
    }
}

/// The author of commit `c`.
fn author_of(repo: &gix::Repository, c: ObjectId) -> Result<gix::actor::Signature> {
    let commit = repo
        .find_object(c)
        .map_err(|e| Error::failed(format!("cannot read commit {c}: {e}")))?
        .try_into_commit()
        .map_err(|e| Error::failed(format!("commit {c}: {e}")))?;
    commit
        .author()
        .map_err(|e| Error::failed(format!("commit {c}: author: {e}")))?
        .to_owned()
        .map_err(|e| Error::failed(format!("commit {c}: author: {e}")))
}

/// The tip a local commit's rows are replayed on.
struct Tip<'a> {
    repo: &'a gix::Repository,
    decl: &'a crate::declaration::Declaration,
    tree: ObjectId,
    max_bytes: u64,
}

/// What [`Tip::replay`] found for a local commit's rows: the rows to replay with the kind of
/// their step (`None`: none), how many rows the tip already holds as they are, and the rows it
/// refuses with their reasons.
type Decided = (
    Option<(admission::Kind, Vec<LocalRow>)>,
    usize,
    Vec<(LocalRow, Vec<Reason>)>,
);

impl Tip<'_> {
    /// Ask admission which of a local commit's rows follow this tip
    /// ([`admission::replay`]), over the rows as a change of this tip: each row's state here
    /// before, the local row after, the record files it would add or change on this tip.
    fn replay(&self, rows: Vec<LocalRow>) -> Result<Decided> {
        let change = self.change(&rows)?;
        let answer = admission::replay(
            self.decl,
            &change,
            &mut TipRecords {
                repo: self.repo,
                tree: self.tree,
            },
        )?;
        let mut rows: Vec<Option<LocalRow>> = rows.into_iter().map(Some).collect();
        let mut take = |i: usize| rows[i].take().expect("each row answered once");
        let refused = (answer.refused.into_iter())
            .map(|(i, reasons)| (take(i), reasons))
            .collect();
        let replayed = match answer.step.and_then(|s| s.kind) {
            Some(kind) => Some((kind, answer.admitted.into_iter().map(&mut take).collect())),
            None => None,
        };
        Ok((replayed, answer.same.len(), refused))
    }

    /// Local rows `rows` as a change of this tip: each row as the tip holds it and as the local
    /// commit wrote it, and the record files they would add or change there (admission asks
    /// the rows alone whether one is a retry, as it does for the writers and the validator).
    fn change(&self, rows: &[LocalRow]) -> Result<LedgerChange> {
        let at = "the remote's tip";
        let mut edits = Vec::with_capacity(rows.len());
        let mut files: Vec<RecordFile> = Vec::new();
        for lr in rows {
            let Some((_, here)) = find_in_tree(self.repo, self.tree, &lr.path)? else {
                return Err(Error::failed(format!(
                    "{}: the remote's tip has no {} (an admitted tip holds every scheduled row)",
                    lr.sid, lr.path
                )));
            };
            let before = read_row(self.repo, self.decl, here, &lr.sid, self.max_bytes, at)?
                .map_err(Error::refusal)?;
            edits.push(RowEdit {
                before,
                after: lr.row.clone(),
                from: String::new(),
            });
            if let Some((rpath, rid)) = &lr.record {
                let edit = match find_in_tree(self.repo, self.tree, rpath)? {
                    Some((_, id)) if id == *rid => None, // here already: whose, the state says
                    Some(_) => Some(RecordEdit::Changed),
                    None => {
                        let bytes = crate::git::objects::read_blob_bounded_id(
                            self.repo,
                            *rid,
                            self.max_bytes,
                            rpath,
                        )?;
                        Some(RecordEdit::Added {
                            sha256: Some(crate::sha256_hex(&bytes)),
                        })
                    }
                };
                if let Some(edit) = edit {
                    files.push(crate::git::admit::record_file(rpath, edit));
                }
            }
        }
        Ok(LedgerChange {
            rows: edits,
            records: Records::Files {
                files,
                name: Some(layout::record_path),
            },
        })
    }
}
