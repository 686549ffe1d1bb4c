//! `git ledger sync [REMOTE]` (`docs/guide/08-sync.md`, and the sync decisions in `docs/decisions.md`): share ledgers through an ordinary
//! Git server.
//!
//! For each ledger: fetch the remote's `refs/ledgers/*` into `refs/remotes/<remote>/ledgers/*`
//! (never forced), then fast-forward the local ref when it is behind, push when it is ahead, and
//! when both moved replay the local commits on the remote tip — each replayed commit re-fills the
//! same rows with the same row bytes and records, its message regenerated from what its trees
//! say (`Ledger-Filled` counted anew, each filled row `from` its record file; the local
//! message is not read); a row the remote already holds with identical bytes is skipped; a row the
//! remote changed differently is a conflict (a retry), refused naming the row and the remote
//! commit. A push that loses a race is retried after a fresh fetch, a bounded number of times.
//!
//! Transport goes through the `git` executable ([`crate::git::transport`]); every object and
//! ref written here goes through gix, every local ref move is a compare-and-swap, and every new
//! state passes the admission validator first.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use gix::refs::transaction::PreviousValue;
use gix::refs::Target;
use gix::ObjectId;

use crate::admission::{self, LedgerChange, Records, RowEdit, RowsState};
use crate::error::{Error, Result};
use crate::git::admit::{read_row, tree_changes, Admission, Admitted};
use crate::git::layout::{self, REF_PREFIX};
use crate::git::objects::{find_in_tree, read_commit, short};
use crate::git::store::{identity, ledger_refs, move_ref, move_tracking_ref, ref_target};
use crate::git::transport::{self, Pushed};
use crate::refusal::Reason;
use crate::store::{Change, ChangeKind, RowWrite, WriteError};

/// How many times one ledger is re-fetched and re-pushed after losing a push race.
pub const MAX_ATTEMPTS: usize = 12;

/// `refs/remotes/<remote>/ledgers/`.
pub fn tracking_prefix(remote: &str) -> String {
    format!("refs/remotes/{remote}/ledgers/")
}

/// Fetch `refs/ledgers/*` (or the one ledger `only`) from `remote` into
/// `refs/remotes/<remote>/ledgers/*`, never forced (a rewritten remote ledger is rejected by Git
/// and reported here, not followed). Returns the declaration ids whose remote ledger was
/// rewritten.
fn fetch_ledgers(dir: &std::path::Path, remote: &str, only: Option<&str>) -> Result<Vec<String>> {
    let tracking = tracking_prefix(remote);
    let spec = match only {
        Some(id) => format!("{REF_PREFIX}{id}:{tracking}{id}"),
        None => format!("{REF_PREFIX}*:{tracking}*"),
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

/// What happened to one ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synced {
    pub refname: String,
    pub tip: ObjectId,
    pub what: String,
}

/// Sync every ledger with `remote`. `dir` is where `git` runs (the repository). Returns one
/// line per ledger; refusals (a rewritten remote ledger, a conflicting fill, a push the server
/// refused) are collected so the other ledgers still sync, and returned together as one
/// refusal; a ledger whose push kept losing races makes the whole run [`Error::Contended`].
pub fn sync(dir: &Path, remote: &str, max_bytes: u64) -> Result<Vec<Synced>> {
    sync_with_progress(dir, remote, max_bytes, &mut |_, _| {})
}

/// As [`sync`], calling `progress(done, total)` after each ledger is synced (or refused).
pub fn sync_with_progress(
    dir: &Path,
    remote: &str,
    max_bytes: u64,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Synced>> {
    transport::check_version(dir)?;
    if !transport::remote_exists(dir, remote)? {
        return Err(Error::failed_with_hint(
            format!("no remote named {remote:?} in this repository"),
            "add one with `git remote add <name> <url>`, or name another: `git ledger sync <REMOTE>`",
        ));
    }
    let rewritten = fetch_ledgers(dir, remote, None)?;
    let repo = crate::git::open(Some(dir))?;
    let prefix = tracking_prefix(remote);
    let mut ids: Vec<String> = ledger_refs(&repo)?
        .into_iter()
        .filter_map(|(n, _)| n.strip_prefix(REF_PREFIX).map(str::to_owned))
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
    let mut done = Vec::new();
    let mut reasons = crate::error::Reasons::new();
    let mut contended = Vec::new();
    let total = ids.len();
    for (i, id) in ids.into_iter().enumerate() {
        progress(i, total);
        if rewritten.contains(&id) {
            reasons.push(rewritten_reason(remote, &id));
            continue;
        }
        match sync_one(dir, &repo, remote, &id, max_bytes) {
            Ok(s) => done.push(s),
            Err(Error::Refused(r)) => reasons.absorb(r),
            Err(Error::Contended(m)) => contended.push(m),
            Err(e) => return Err(e),
        }
    }
    progress(total, total);
    if !reasons.is_empty() {
        return Err(Error::Refused(reasons));
    }
    if !contended.is_empty() {
        return Err(Error::Contended(contended.join("\n")));
    }
    Ok(done)
}

fn rewritten_reason(remote: &str, id: &str) -> String {
    format!(
        "{REF_PREFIX}{id}: the ledger on {remote} was rewritten (its tip does not follow {}{id}); it is reported, not followed — ask whoever rewrote it, and check it with `git ledger verify`",
        tracking_prefix(remote)
    )
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

/// Sync one ledger, retrying lost push races.
fn sync_one(
    dir: &Path,
    repo: &gix::Repository,
    remote: &str,
    id: &str,
    max_bytes: u64,
) -> Result<Synced> {
    let refname = layout::ref_name(id);
    let tracking = format!("{}{id}", tracking_prefix(remote));
    let mut raced = String::new();
    for attempt in 0..MAX_ATTEMPTS {
        if attempt > 0 {
            backoff(attempt);
            if !fetch_ledgers(dir, remote, Some(id))?.is_empty() {
                return Err(Error::refused(rewritten_reason(remote, id)));
            }
        }
        let local = ref_target(repo, &refname)?;
        let theirs = ref_target(repo, &tracking)?;
        // A remote-tracking ledger ref that was moved off its own history (a forced fetch of a
        // rewritten remote, outside sync) is what a fetch by sync would have refused: reported,
        // not followed, so that the local ledger never moves off what was published.
        if let Some((from, to)) = tracking_rewritten(repo, &tracking)? {
            let mut r = crate::error::Reasons::one(rewritten_reason(remote, id));
            r.push(format!(
                "{tracking} was moved from {from} to {to}, which does not follow it (a forced fetch, `git fetch origin +refs/ledgers/*:…`); {refname} stays at {}",
                local.map_or("nothing".to_owned(), |l| l.to_string())
            ));
            r.hint(format!(
                "compare the two with `git ledger diff {from} {to}` and check the remote's with `git ledger verify {tracking}`; once it is settled, `git update-ref -d {tracking}` forgets the rewritten copy"
            ));
            return Err(Error::Refused(r));
        }
        let (to_push, what) = match (local, theirs) {
            (None, None) => {
                return Err(Error::failed(format!("{refname}: no such ledger here or on {remote}")))
            }
            (None, Some(r)) => {
                let (n, admitted) = Admission::new(repo, max_bytes).without_cache().admit(&refname, None, r, &mut |_, _| {})?;
                match move_ref(repo, &refname, PreviousValue::MustNotExist, admitted, "ledger: sync (create)") {
                    Ok(()) => {
                        return Ok(Synced {
                            refname,
                            tip: r,
                            what: format!("created from {remote} ({n} commits, verified from the root)"),
                        })
                    }
                    Err(WriteError::Moved) => continue,
                    Err(WriteError::Other(e) | WriteError::Locked(e)) => return Err(e),
                }
            }
            (Some(l), None) => (l, format!("pushed to {remote} (new there)")),
            (Some(l), Some(r)) if l == r => {
                return Ok(Synced {
                    refname,
                    tip: l,
                    what: "up to date".into(),
                })
            }
            (Some(l), Some(r)) => match first_parent_base(repo, l, r)? {
                None => {
                    return Err(Error::refused(format!(
                        "{refname}: the local ledger and {tracking} share no commit (two different ledgers under one name?); nothing synced"
                    )))
                }
                Some(base) if base == l => {
                    let (n, admitted) = Admission::new(repo, max_bytes).without_cache().admit(&refname, Some(l), r, &mut |_, _| {})?;
                    match move_ref(
                        repo,
                        &refname,
                        PreviousValue::MustExistAndMatch(Target::Object(l)),
                        admitted,
                        "ledger: sync (fast-forward)",
                    ) {
                        Ok(()) => {
                            return Ok(Synced {
                                refname,
                                tip: r,
                                what: format!("fast-forwarded {n} commit{} from {remote}", plural(n)),
                            })
                        }
                        Err(WriteError::Moved) => continue,
                        Err(WriteError::Other(e) | WriteError::Locked(e)) => return Err(e),
                    }
                }
                Some(base) if base == r => (l, format!("pushed to {remote}")),
                Some(base) => {
                    let replay = replay(repo, &refname, l, r, base, max_bytes)?;
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
                        return Ok(Synced {
                            refname,
                            tip: r,
                            what: format!("every local row was already on {remote}{skipped}"),
                        });
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
        match transport::push_unforced(dir, remote, &to_push.to_string(), &refname)? {
            Pushed::Done => {
                // What the remote now holds, as `git push` records it with a fetch refspec; its
                // reflog kept whatever the configuration, so that a later forced fetch that
                // rewrites it is seen (see `tracking_rewritten`).
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
                return Ok(Synced {
                    refname,
                    tip: to_push,
                    what,
                });
            }
            Pushed::Raced(why) => raced = why,
            Pushed::Refused(why) => {
                return Err(Error::refusal(
                    std::iter::once(format!(
                        "{refname}: {remote} refused the push: {}",
                        why.lines().next().unwrap_or("")
                    ))
                    .chain(why.lines().skip(1).map(str::to_owned)),
                ))
            }
        }
    }
    Err(Error::Contended(format!(
        "{refname}: the ledger on {remote} moved on each of {MAX_ATTEMPTS} tries (other machines kept winning; last: {raced}); the local ledger is intact, run sync again"
    )))
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

/// The result of replaying local commits.
struct Replayed {
    /// The replayed tip (the remote's when nothing was replayed), admitted.
    tip: Admitted,
    commits: usize,
    skipped_rows: usize,
}

/// Replay the local commits of `base..local` on `remote` (see the module documentation).
fn replay(
    repo: &gix::Repository,
    refname: &str,
    local: ObjectId,
    remote: ObjectId,
    base: ObjectId,
    max_bytes: u64,
) -> Result<Replayed> {
    let mut state = gix::diff::tree::State::default();
    // The remote's changes since the base: row path -> the newest remote commit that changed it.
    let mut remote_changed: HashMap<String, ObjectId> = HashMap::new();
    let mut c = remote;
    while c != base {
        let info = read_commit(repo, c)?;
        let Some(&p) = info.parents.first() else {
            break;
        };
        let ptree = read_commit(repo, p)?.tree;
        for ch in tree_changes(repo, &mut state, ptree, info.tree)? {
            remote_changed
                .entry(crate::git::show_path(&ch.path))
                .or_insert(c);
        }
        c = p;
    }
    // The local commits, oldest first.
    let mut local_chain = Vec::new();
    let mut c = local;
    while c != base {
        local_chain.push(c);
        c = *read_commit(repo, c)?.parents.first().ok_or_else(|| {
            Error::failed(format!(
                "{refname}: commit {c} has no parent above the base {base}"
            ))
        })?;
    }
    local_chain.reverse();

    // The remote's commits since the base are admitted before anything is replayed on them:
    // the local ref moves to the replayed tip, and so to them.
    // Remote commits are admitted from their blobs, never from the cache of checked
    // declarations (a forged entry must not change what sync lets in).
    let mut admission = Admission::new(repo, max_bytes).without_cache();
    let (_, mut admitted) = admission
        .admit(refname, Some(base), remote, &mut |_, _| {})
        .map_err(|e| e.context(format!("{refname} (the remote's commits since {base})")))?;
    let remote_info = read_commit(repo, remote)?;
    let known = admission.declaration_of_tree(remote_info.tree, &format!("commit {remote}"))?;
    let decl = &known.decl;
    let n = decl.schedule_len();
    // The remote tip's count, as its admitted message says (rule 7 reads the same).
    let Some(mut filled) = crate::git::message::filled_of(&remote_info.message, n) else {
        return Err(Error::refused(format!(
            "{refname}: commit {remote} (the remote's tip): rule 7: its message carries no `{}: k/{n}` trailer to count from; check it with `git ledger verify {}`",
            layout::T_FILLED, refname
        )));
    };
    let (_, committer) = identity(repo)?;
    let committer = committer
        .to_owned()
        .map_err(|e| Error::failed(format!("committer identity: {e}")))?;

    let mut tip = remote;
    let mut tip_tree = remote_info.tree;
    let mut out = Replayed {
        tip: admitted,
        commits: 0,
        skipped_rows: 0,
    };
    let mut reasons = crate::error::Reasons::new();
    for c in local_chain {
        let info = read_commit(repo, c)?;
        let parent_tree = read_commit(repo, info.parents[0])?.tree;
        let mut editor = repo
            .edit_tree(tip_tree)
            .map_err(|e| Error::failed(format!("cannot edit tree {tip_tree}: {e}")))?;
        let mut rows = Vec::new();
        let mut newly = 0;
        for ch in tree_changes(repo, &mut state, parent_tree, info.tree)? {
            let (Some((_, previous_oid)), Some((entry_mode, oid))) = (&ch.old, &ch.new) else {
                continue; // records come with their rows; nothing else changes in a ledger
            };
            let path = crate::git::show_path(&ch.path);
            if entry_mode.is_tree() {
                continue;
            }
            let Some(sid) = layout::schedule_id_of(&path) else {
                continue;
            };
            let theirs = find_in_tree(repo, tip_tree, &path)?.map(|(_, id)| id);
            if theirs == Some(*oid) {
                out.skipped_rows += 1; // the same attempt arrived twice
                continue;
            }
            if theirs != Some(*previous_oid) {
                let by = remote_changed.get(&path).copied().unwrap_or(remote);
                // The local row as a change of the remote's: what admission says of it names
                // the field and the rule (a retry, mostly); replay needs the remote's row to be
                // the one the local commit changed either way.
                let local_row = read_row(repo, decl, *oid, sid, max_bytes, &format!("commit {c}"))?
                    .map_err(Error::refusal)?;
                let why = match theirs {
                    Some(id) => {
                        let their_row =
                            read_row(repo, decl, id, sid, max_bytes, &format!("commit {by}"))?
                                .map_err(Error::refusal)?;
                        let change = LedgerChange {
                            rows: vec![RowEdit {
                                before: their_row,
                                after: local_row,
                                from: String::new(),
                            }],
                            records: Records::Keys,
                            fills: false,
                        };
                        admission::admit(decl, &change, &mut RowsState(&[]))?
                            .err()
                            .and_then(|r| r.into_vec().into_iter().next())
                    }
                    None => None,
                };
                let mut reason = Reason::new(format!(
                    "the remote changed it differently at commit {by} (a retry: a filled row is never replaced); local commit {c} is not replayed — the remote's row stays"
                ))
                .row(sid)
                .at(refname);
                if let Some(why) = why {
                    (reason.field, reason.rule) = (why.field, why.rule);
                }
                reasons.push(reason);
                reasons.hint(format!(
                    "two machines filled the same row; see the remote's attempt with `git ledger show --at {by} --row {sid}`; to run the task again, raise `repetitions` (or add a task) in the draft and pin a new declaration"
                ));
                continue;
            }
            let row = read_row(repo, decl, *oid, sid, max_bytes, &format!("commit {c}"))?
                .map_err(Error::refusal)?;
            editor
                .upsert(path.as_str(), gix::objs::tree::EntryKind::Blob, *oid)
                .map_err(|e| Error::failed(format!("cannot edit tree at {path}: {e}")))?;
            let parent_row_deferred = match find_in_tree(repo, parent_tree, &path)? {
                Some((_, id)) => read_row(repo, decl, id, sid, max_bytes, "")?
                    .map_err(Error::refusal)?
                    .is_deferred(),
                None => false,
            };
            // Where a filled row came from, as the trees say it: its record file in the
            // ledger (the writer's own path is only in the local commit's message, which
            // replay does not read).
            let mut source = String::new();
            if parent_row_deferred {
                if let Some(rec) = row.native_record() {
                    let rpath = layout::record_path(&rec.key());
                    source.clone_from(&rpath);
                    let Some((_, rid)) = find_in_tree(repo, info.tree, &rpath)? else {
                        return Err(Error::refused(format!(
                            "commit {c}: row {sid}: its record file {rpath} is missing"
                        )));
                    };
                    editor
                        .upsert(rpath.as_str(), gix::objs::tree::EntryKind::Blob, rid)
                        .map_err(|e| Error::failed(format!("cannot edit tree at {rpath}: {e}")))?;
                    newly += 1;
                }
            }
            rows.push(RowWrite {
                notes: Vec::new(),
                source,
                row,
                record: None,
            });
        }
        if !reasons.is_empty() {
            break;
        }
        if rows.is_empty() {
            continue; // everything this commit did is already on the remote
        }
        let tree = editor
            .write()
            .map_err(|e| Error::failed(format!("cannot write a tree: {e}")))?
            .detach();
        // A repair fills nothing; whether a fill is a put or an import follows from its rows
        // (the subject is rule 7's either way).
        let kind = if newly == 0 {
            ChangeKind::Repair
        } else {
            ChangeKind::Import
        };
        // Schedule order, as the writers produce it.
        rows.sort_by_key(|w| decl.schedule_position(w.row.schedule_id()));
        let (message, now) =
            crate::git::message::change_message(decl, &Change { kind, rows }, filled).map_err(
                |why| {
                    Error::refused(format!(
                        "{refname}: replaying local commit {c}: rule 7: {why}"
                    ))
                },
            )?;
        filled = now;
        let author = repo
            .find_object(c)
            .map_err(|e| Error::failed(format!("cannot read commit {c}: {e}")))?
            .try_into_commit()
            .map_err(|e| Error::failed(format!("commit {c}: {e}")))?;
        let author = author
            .author()
            .map_err(|e| Error::failed(format!("commit {c}: author: {e}")))?
            .to_owned()
            .map_err(|e| Error::failed(format!("commit {c}: author: {e}")))?;
        // Re-signed with the local writer's key, as every commit the tool writes.
        let signing = crate::git::sign::config(repo, decl.writers.is_some())?;
        let new = crate::git::sign::write_commit(
            repo,
            committer.to_ref(&mut Default::default()),
            author.to_ref(&mut Default::default()),
            &message,
            tree,
            vec![tip],
            signing.as_ref(),
        )
        .map_err(|e| e.context("cannot write the replayed commit"))?;
        (_, admitted) = admission
            .admit_step(tip, new)
            .map_err(|e| e.context(format!("replaying local commit {c}")))?;
        tip = new;
        tip_tree = tree;
        out.commits += 1;
    }
    if !reasons.is_empty() {
        return Err(Error::Refused(reasons));
    }
    out.tip = admitted;
    Ok(out)
}
